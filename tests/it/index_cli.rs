//! `kubectl-deltas index` as a user runs it: the binary against the fake API server holding a few
//! hundred generated objects. Every expected answer is computed here, straight from the objects the
//! server holds, by a small independent reading of each index spec.

use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};
use support::binary::{Running, command, output, stderr};
use support::fake_apiserver::{FakeApiServer, Fault, Verb};

const NAMESPACES: [&str; 4] = ["default", "shop", "data", "ops"];
const APPS: [&str; 5] = ["web", "api", "db", "cache", "batch"];
const IMAGES: [&str; 4] = ["nginx:1.25", "busybox:1.36", "redis:7", "envoy:1.29"];
const PODS: usize = 240;

/// Pod `i`: spread over namespaces, with labels, annotations, owners and containers that vary, and
/// some of each missing, so that every index has several values, multi-valued objects and objects
/// without a value.
fn pod(i: usize) -> Value {
    let mut labels = serde_json::Map::new();
    if !i.is_multiple_of(11) {
        labels.insert("app".into(), APPS[i % 5].into());
    }
    if !i.is_multiple_of(3) {
        labels.insert("tier".into(), ["front", "back"][i % 2].into());
    }
    let mut metadata = json!({"name": format!("pod-{i:03}"), "namespace": NAMESPACES[i % 4]});
    if !i.is_multiple_of(17) {
        metadata["labels"] = Value::Object(labels);
    }
    if i.is_multiple_of(2) {
        metadata["annotations"] = json!({"example.com/team": format!("team-{}", i % 3)});
    }
    let owners = match i % 6 {
        0 => vec![],
        5 => vec![
            ("ReplicaSet", format!("rs-{}", i % 7)),
            ("StatefulSet", "db".into()),
        ],
        _ => vec![("ReplicaSet", format!("rs-{}", i % 7))],
    };
    if !owners.is_empty() {
        metadata["ownerReferences"] = owners
            .into_iter()
            .map(|(kind, name)| {
                json!({"apiVersion": "apps/v1", "kind": kind, "name": name,
                       "uid": format!("uid-{kind}-{name}"), "controller": true})
            })
            .collect();
    }
    // One to three containers; two of them may share an image; a few have no image at all.
    let containers: Vec<Value> = if i.is_multiple_of(13) {
        vec![json!({"name": "c0"})]
    } else {
        (0..1 + i % 3)
            .map(|k| json!({"name": format!("c{k}"), "image": IMAGES[(i + k * (i % 2)) % 4]}))
            .collect()
    };
    let mut spec = json!({"containers": containers, "priority": i % 3});
    if !i.is_multiple_of(5) {
        spec["nodeName"] = format!("node-{}", i % 8).into();
    }
    if i.is_multiple_of(9) {
        spec["hostNetwork"] = true.into();
    }
    json!({"metadata": metadata, "spec": spec,
           "status": {"phase": if i.is_multiple_of(4) { "Pending" } else { "Running" }}})
}

fn node(i: usize) -> Value {
    let mut labels = json!({"kubernetes.io/hostname": format!("node-{i}")});
    if !i.is_multiple_of(5) {
        labels["topology.kubernetes.io/zone"] = format!("zone-{}", ["a", "b", "c"][i % 3]).into();
    }
    json!({"metadata": {"name": format!("node-{i}"), "labels": labels}})
}

struct Cluster {
    server: FakeApiServer,
    _dir: tempfile::TempDir,
    kubeconfig: PathBuf,
}

async fn cluster() -> Cluster {
    let server = FakeApiServer::start().await;
    for i in 0..PODS {
        server.create("pods", pod(i));
    }
    for i in 0..12 {
        server.create("nodes", node(i));
    }
    for i in 0..6 {
        server.create(
            "deployments.apps",
            json!({"metadata": {"name": format!("deploy-{i}"), "namespace": NAMESPACES[i % 2],
                                "labels": {"app": APPS[i % 3]}}}),
        );
    }
    server.create(
        "secrets",
        json!({"metadata": {"name": "db-password", "namespace": "data", "labels": {"app": "db"}},
               "type": "Opaque", "data": {"password": "aHVudGVyMg=="}}),
    );
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    Cluster {
        server,
        _dir: dir,
        kubeconfig,
    }
}

impl Cluster {
    async fn run(&self, args: &[&str]) -> Output {
        self.run_with(args, &[]).await
    }

    async fn run_with(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        run(&self.kubeconfig, args, env).await
    }

    /// `(key, object)` of every object of `resource` the server holds, sorted by key.
    fn objects(&self, resource: &str) -> Vec<(String, Value)> {
        self.server
            .objects(resource)
            .into_iter()
            .map(|(key, _)| {
                let (ns, name) = key.split_once('/').unwrap_or(("", &key));
                let obj = self.server.get(resource, ns, name).unwrap();
                (key, obj)
            })
            .collect()
    }

    fn watches(&self) -> usize {
        self.server
            .requests()
            .iter()
            .filter(|r| r.is_watch())
            .count()
    }
}

async fn run(kubeconfig: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = command(kubeconfig, args);
    cmd.envs(env.iter().copied());
    output(cmd).await
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

#[track_caller]
fn assert_ok(output: &Output) {
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(output));
}

/// The values `obj` has under `spec`: the test's own reading of each spec form.
fn values_of(obj: &Value, spec: &str) -> BTreeSet<String> {
    let meta = &obj["metadata"];
    let strings = |v: &Value| v.as_str().map(str::to_owned).into_iter().collect();
    match spec.split_once(':') {
        None if spec == "namespace" => strings(&meta["namespace"]),
        None if spec == "labels" => meta["labels"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap()))
            .collect(),
        None if spec == "owner" => meta["ownerReferences"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|o| {
                format!(
                    "{}/{}",
                    o["kind"].as_str().unwrap(),
                    o["name"].as_str().unwrap()
                )
            })
            .collect(),
        Some(("label", key)) => strings(&meta["labels"][key]),
        Some(("annotation", key)) => strings(&meta["annotations"][key]),
        Some(("field", path)) => {
            let mut out = BTreeSet::new();
            collect(obj, &path.split('.').collect::<Vec<_>>(), &mut out);
            out
        }
        _ => panic!("the test does not know spec {spec}"),
    }
}

fn collect(value: &Value, path: &[&str], out: &mut BTreeSet<String>) {
    match (value, path.split_first()) {
        (Value::Array(items), _) => items.iter().for_each(|v| collect(v, path, out)),
        (Value::Object(map), Some((first, rest))) => {
            if let Some(child) = map.get(*first) {
                collect(child, rest, out);
            }
        }
        (Value::String(s), None) => {
            out.insert(s.clone());
        }
        (Value::Number(n), None) => {
            out.insert(n.to_string());
        }
        (Value::Bool(b), None) => {
            out.insert(b.to_string());
        }
        _ => {}
    }
}

/// The values listing the server's objects call for: `(value, keys)` rows sorted by count, then
/// value, with the objects without a value last under `None`.
fn expected_listing(objects: &[(String, Value)], spec: &str) -> Vec<(Option<String>, Vec<String>)> {
    let mut by_value: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut none = Vec::new();
    for (key, obj) in objects {
        let values = values_of(obj, spec);
        if values.is_empty() {
            none.push(key.clone());
        }
        for value in values {
            by_value.entry(value).or_default().push(key.clone());
        }
    }
    let mut rows: Vec<(Option<String>, Vec<String>)> = by_value
        .into_iter()
        .map(|(v, keys)| (Some(v), keys))
        .collect();
    rows.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
    if !none.is_empty() {
        rows.push((None, none));
    }
    rows
}

/// Keys of the objects with any of `values` under `spec`, sorted.
fn expected_matches(objects: &[(String, Value)], spec: &str, values: &[&str]) -> Vec<String> {
    objects
        .iter()
        .filter(|(_, obj)| {
            let have = values_of(obj, spec);
            values.iter().any(|v| have.contains(*v))
        })
        .map(|(key, _)| key.clone())
        .collect()
}

/// A `-o json` listing's rows in the same shape as [`expected_listing`].
fn json_rows(doc: &Value) -> Vec<(Option<String>, Vec<String>)> {
    doc["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(json_row)
        .collect()
}

fn json_row(row: &Value) -> (Option<String>, Vec<String>) {
    let keys: Vec<String> = row["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(row["count"].as_u64().unwrap() as usize, keys.len());
    (row["value"].as_str().map(str::to_owned), keys)
}

/// Splits a kubectl-style table line into its cells (columns are three or more spaces apart).
fn cells(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("   ") {
        out.push(rest[..at].to_owned());
        rest = rest[at..].trim_start();
    }
    out.push(rest.to_owned());
    out
}

/// The store key of an object of a `-o json` List.
fn key_of(obj: &Value) -> String {
    let meta = &obj["metadata"];
    match meta["namespace"].as_str() {
        Some(ns) => format!("{ns}/{}", meta["name"].as_str().unwrap()),
        None => meta["name"].as_str().unwrap().to_owned(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_index_spec_lists_its_values_as_the_server_objects_say() {
    let cluster = cluster().await;
    let pods = cluster.objects("pods");
    assert_eq!(pods.len(), PODS);
    for spec in [
        "namespace",
        "label:app",
        "labels",
        "annotation:example.com/team",
        "owner",
        "field:spec.nodeName",
        "field:spec.containers.image",
        "field:spec.priority",
        "field:spec.hostNetwork",
        "field:metadata.name",
        "field:status.phase",
    ] {
        let out = cluster
            .run(&["index", "pods", "-A", "--by", spec, "-o", "json"])
            .await;
        assert_ok(&out);
        let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(doc["index"], spec);
        assert_eq!(doc["total"], PODS);
        assert_eq!(json_rows(&doc), expected_listing(&pods, spec), "{spec}");
    }
    // One-shot: listed once, and no watch was ever opened.
    assert_eq!(cluster.watches(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_valued_indices_count_an_object_under_each_value_and_none_last() {
    let cluster = cluster().await;
    let pods = cluster.objects("pods");
    for spec in ["labels", "owner", "field:spec.containers.image"] {
        let expected = expected_listing(&pods, spec);
        // The data has objects under several values, and objects under none.
        let counted: usize = expected.iter().map(|(_, keys)| keys.len()).sum();
        assert!(counted > PODS, "{spec}: the test data is not multi-valued");
        assert!(
            expected.last().unwrap().0.is_none(),
            "{spec}: no <none> row"
        );

        // Piped, `-o wide` lists every key of a value on its line (`table` cuts them to fit).
        let out = cluster
            .run(&["index", "pods", "-A", "--by", spec, "-o", "wide"])
            .await;
        assert_ok(&out);
        let text = stdout(&out);
        let mut lines = text.lines();
        assert_eq!(
            cells(lines.next().unwrap()),
            [spec.to_uppercase(), "COUNT".into(), "KEYS".into()]
        );
        let rows: Vec<(Option<String>, Vec<String>)> = lines
            .map(|line| {
                let cells = cells(line);
                assert_eq!(cells.len(), 3, "{line}");
                let value = (cells[0] != "<none>").then(|| cells[0].clone());
                let keys: Vec<String> = cells[2].split(", ").map(str::to_owned).collect();
                assert_eq!(cells[1].parse::<usize>().unwrap(), keys.len(), "{line}");
                (value, keys)
            })
            .collect();
        assert_eq!(rows, expected, "{spec}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_output_format_of_a_listing_parses_back_to_the_same_answer() {
    let cluster = cluster().await;
    let pods = cluster.objects("pods");
    let spec = "label:app";
    let expected = expected_listing(&pods, spec);
    assert_eq!(expected.last().unwrap().0, None);
    let args = |output: &'static str| ["index", "pods", "-A", "--by", spec, "-o", output];

    let json: Value = serde_json::from_str(&stdout(&cluster.run(&args("json")).await)).unwrap();
    assert_eq!(json_rows(&json), expected);
    // The objects without the label are there, and marked as having no value.
    assert_eq!(
        json["values"].as_array().unwrap().last().unwrap()["value"],
        Value::Null
    );

    let yaml: Value = serde_saphyr::from_str(&stdout(&cluster.run(&args("yaml")).await)).unwrap();
    assert_eq!(yaml, json);

    let jsonl = stdout(&cluster.run(&args("jsonl")).await);
    let rows: Vec<_> = jsonl
        .lines()
        .map(|l| json_row(&serde_json::from_str(l).unwrap()))
        .collect();
    assert_eq!(rows, expected);

    let names = stdout(&cluster.run(&args("name")).await);
    let values: Vec<Option<String>> = names.lines().map(|l| Some(l.to_owned())).collect();
    let expected_values: Vec<Option<String>> = expected
        .iter()
        .map(|(v, _)| v.clone())
        .filter(Option::is_some)
        .collect();
    assert_eq!(values, expected_values);

    // Wide: every key, wrapped within the width instead of truncated.
    let out = cluster.run_with(&args("wide"), &[("COLUMNS", "100")]).await;
    assert_ok(&out);
    let text = stdout(&out);
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    let words: BTreeSet<&str> = text
        .split([' ', ',', '\n'])
        .filter(|w| !w.is_empty())
        .collect();
    assert!(pods.iter().all(|(key, _)| words.contains(key.as_str())));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_table_truncates_keys_to_the_terminal_width() {
    let cluster = cluster().await;
    let pods = cluster.objects("pods");
    let expected = expected_listing(&pods, "namespace");
    let out = cluster
        .run_with(
            &["index", "pods", "-A", "--by", "namespace"],
            &[("COLUMNS", "72")],
        )
        .await;
    assert_ok(&out);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.len(),
        1 + expected.len(),
        "one line per value: {text}"
    );
    for (line, (value, keys)) in lines[1..].iter().zip(&expected) {
        assert!(line.chars().count() <= 72, "{line}");
        let cells = cells(line);
        assert_eq!(Some(&cells[0]), value.as_ref());
        assert_eq!(cells[1], keys.len().to_string());
        // The first keys in order, then how many were left out.
        let (shown, more) = cells[2].split_once(", … (+").expect(line);
        let shown: Vec<&str> = shown.split(", ").collect();
        assert_eq!(shown, keys[..shown.len()]);
        let more: usize = more.trim_end_matches(" more)").parse().unwrap();
        assert_eq!(shown.len() + more, keys.len(), "{line}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_select_objects_in_every_output_format() {
    let cluster = cluster().await;
    let pods = cluster.objects("pods");
    let (spec, values) = ("labels", ["app=web", "tier=front"]);
    let expected = expected_matches(&pods, spec, &values);
    assert!(expected.len() > 10 && expected.len() < PODS);
    let args = |output: &'static str| {
        let mut args = vec!["index", "pods", "-A", "--by", spec];
        for v in values {
            args.extend(["--value", v]);
        }
        args.extend(["-o", output]);
        args
    };

    let out = cluster.run(&args("json")).await;
    assert_ok(&out);
    let json: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["kind"], "List");
    let items = json["items"].as_array().unwrap();
    assert_eq!(items.iter().map(key_of).collect::<Vec<_>>(), expected);
    // The objects are the server's (metadata and spec), typed as the list said.
    for item in items {
        let key = key_of(item);
        let (_, served) = pods.iter().find(|(k, _)| *k == key).unwrap();
        assert_eq!(item["kind"], "Pod");
        assert_eq!(item["apiVersion"], "v1");
        assert_eq!(item["metadata"]["uid"], served["metadata"]["uid"]);
        assert_eq!(item["spec"], served["spec"]);
    }

    let yaml: Value = serde_saphyr::from_str(&stdout(&cluster.run(&args("yaml")).await)).unwrap();
    assert_eq!(yaml, json);

    let jsonl = stdout(&cluster.run(&args("jsonl")).await);
    let lines: Vec<Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(&lines, items);

    let names = stdout(&cluster.run(&args("name")).await);
    let expected_names: Vec<String> = expected
        .iter()
        .map(|k| format!("pod/{}", k.split_once('/').unwrap().1))
        .collect();
    assert_eq!(names.lines().collect::<Vec<_>>(), expected_names);

    let table = stdout(&cluster.run(&args("table")).await);
    let mut lines = table.lines();
    assert_eq!(
        cells(lines.next().unwrap()),
        ["NAMESPACE", "NAME", "RESOURCEVERSION", "AGE", "LABELS"]
    );
    let rows: Vec<Vec<String>> = lines.map(cells).collect();
    assert_eq!(
        rows.iter()
            .map(|r| format!("{}/{}", r[0], r[1]))
            .collect::<Vec<_>>(),
        expected
    );
    for row in &rows {
        let (_, served) = pods
            .iter()
            .find(|(k, _)| *k == format!("{}/{}", row[0], row[1]))
            .unwrap();
        assert_eq!(
            row[2],
            served["metadata"]["resourceVersion"].as_str().unwrap()
        );
        let labels: BTreeSet<String> = row[4].split(", ").map(str::to_owned).collect();
        assert_eq!(labels, values_of(served, "labels"));
    }

    let wide = stdout(&cluster.run(&args("wide")).await);
    let header = cells(wide.lines().next().unwrap());
    assert_eq!(
        header,
        [
            "NAMESPACE",
            "NAME",
            "RESOURCEVERSION",
            "AGE",
            "UID",
            "OWNERS",
            "LABELS"
        ]
    );
    for line in wide.lines().skip(1) {
        let row = cells(line);
        let (_, served) = pods
            .iter()
            .find(|(k, _)| *k == format!("{}/{}", row[0], row[1]))
            .unwrap();
        assert_eq!(row[4], served["metadata"]["uid"].as_str().unwrap());
        let owners = values_of(served, "owner");
        let shown: BTreeSet<String> = match row[5].as_str() {
            "<none>" => BTreeSet::new(),
            text => text.split(',').map(str::to_owned).collect(),
        };
        assert_eq!(shown, owners);
    }

    let keys = cluster
        .run(&[
            "index",
            "pods",
            "-A",
            "--by",
            spec,
            "--value",
            values[0],
            "--value",
            values[1],
            "--keys-only",
        ])
        .await;
    assert_ok(&keys);
    assert_eq!(stdout(&keys).lines().collect::<Vec<_>>(), expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_namespace_and_selectors_narrow_what_is_indexed() {
    let cluster = cluster().await;
    let pods = cluster.objects("pods");
    let in_shop: Vec<(String, Value)> = pods
        .iter()
        .filter(|(k, _)| k.starts_with("shop/"))
        .cloned()
        .collect();
    let out = cluster
        .run(&[
            "index",
            "pods",
            "-n",
            "shop",
            "--by",
            "field:spec.nodeName",
            "-o",
            "json",
        ])
        .await;
    assert_ok(&out);
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["total"], in_shop.len());
    assert_eq!(
        json_rows(&doc),
        expected_listing(&in_shop, "field:spec.nodeName")
    );

    let web: Vec<(String, Value)> = pods
        .iter()
        .filter(|(_, p)| p["metadata"]["labels"]["app"] == "web")
        .cloned()
        .collect();
    let out = cluster
        .run(&[
            "index", "pods", "-A", "-l", "app=web", "--by", "owner", "-o", "json",
        ])
        .await;
    assert_ok(&out);
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json_rows(&doc), expected_listing(&web, "owner"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_scoped_resources_have_keys_without_namespace() {
    let cluster = cluster().await;
    let nodes = cluster.objects("nodes");
    let spec = "label:topology.kubernetes.io/zone";
    let out = cluster
        .run(&["index", "nodes", "--by", spec, "-o", "json"])
        .await;
    assert_ok(&out);
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let expected = expected_listing(&nodes, spec);
    assert_eq!(expected.last().unwrap().0, None, "some nodes have no zone");
    assert_eq!(json_rows(&doc), expected);

    let out = cluster
        .run(&[
            "index", "no", "--by", spec, "--value", "zone-a", "-o", "name",
        ])
        .await;
    assert_ok(&out);
    let expected: Vec<String> = expected_matches(&nodes, spec, &["zone-a"])
        .into_iter()
        .map(|k| format!("node/{k}"))
        .collect();
    assert_eq!(stdout(&out).lines().collect::<Vec<_>>(), expected);

    let table = stdout(
        &cluster
            .run(&["index", "nodes", "--by", spec, "--value", "zone-a"])
            .await,
    );
    assert_eq!(
        cells(table.lines().next().unwrap()),
        ["NAME", "RESOURCEVERSION", "AGE", &spec.to_uppercase()]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_carry_the_group_and_secrets_stay_redacted() {
    let cluster = cluster().await;
    let out = cluster
        .run(&[
            "index",
            "deploy",
            "-A",
            "--by",
            "label:app",
            "--value",
            "web",
            "-o",
            "name",
        ])
        .await;
    assert_ok(&out);
    let deployments = cluster.objects("deployments.apps");
    let expected: Vec<String> = expected_matches(&deployments, "label:app", &["web"])
        .iter()
        .map(|k| format!("deployment.apps/{}", k.split_once('/').unwrap().1))
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(stdout(&out).lines().collect::<Vec<_>>(), expected);

    let args = [
        "index",
        "secrets",
        "-n",
        "data",
        "--by",
        "label:app",
        "--value",
        "db",
        "-o",
        "json",
    ];
    let redacted: Value = serde_json::from_str(&stdout(&cluster.run(&args).await)).unwrap();
    assert_eq!(redacted["items"][0]["data"]["password"], "<redacted>");
    let mut shown = args.to_vec();
    shown.push("--show-secret-data");
    let shown: Value = serde_json::from_str(&stdout(&cluster.run(&shown).await)).unwrap();
    assert_eq!(shown["items"][0]["data"]["password"], "aHVudGVyMg==");

    // An index over Secret values would print them as index values: refused unless asked for.
    let by_value = [
        "index",
        "secrets",
        "-n",
        "data",
        "--by",
        "field:data.password",
    ];
    let refused = cluster.run(&by_value).await;
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("--show-secret-data"),
        "{}",
        stderr(&refused)
    );
    assert!(!stdout(&refused).contains("aHVudGVyMg=="));
    let mut allowed = by_value.to_vec();
    allowed.push("--show-secret-data");
    let allowed = cluster.run(&allowed).await;
    assert_ok(&allowed);
    assert!(
        stdout(&allowed).contains("aHVudGVyMg=="),
        "{}",
        stdout(&allowed)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_match_is_a_note_and_exit_0_or_exit_4_with_fail_empty() {
    let cluster = cluster().await;
    let args = [
        "index",
        "pods",
        "-A",
        "--by",
        "label:app",
        "--value",
        "nope",
        "-o",
        "json",
    ];
    let out = cluster.run(&args).await;
    assert_ok(&out);
    assert_eq!(stdout(&out), "");
    assert_eq!(
        stderr(&out).trim(),
        r#"kubectl-deltas: note: no pods in all namespaces indexed under label:app = "nope" (the index has 5 values; list them without --value)"#
    );

    let mut failing = args.to_vec();
    failing.push("--fail-empty");
    let out = cluster.run(&failing).await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    assert!(
        stderr(&out).starts_with("kubectl-deltas: error: no pods in all namespaces indexed under"),
        "{}",
        stderr(&out)
    );

    // A match is not empty, with or without --fail-empty.
    let out = cluster
        .run(&[
            "index",
            "pods",
            "-A",
            "--by",
            "label:app",
            "--value",
            "web",
            "--fail-empty",
            "--keys-only",
        ])
        .await;
    assert_ok(&out);
    assert!(!stdout(&out).is_empty());

    // An index without any value: in every format nothing on stdout (not a lone <none> row),
    // the sentence on stderr, and exit 4 when asked to fail.
    for output in ["table", "wide", "json", "yaml", "jsonl", "name"] {
        let out = cluster
            .run(&[
                "index",
                "pods",
                "-A",
                "--by",
                "label:missing",
                "--fail-empty",
                "-o",
                output,
            ])
            .await;
        assert_eq!(out.status.code(), Some(4), "{output}: {}", stderr(&out));
        assert_eq!(stdout(&out), "", "{output}");
        assert_eq!(
            stderr(&out).trim(),
            format!(
                "kubectl-deltas: error: none of the pods in all namespaces has a value under \
                 label:missing ({PODS} objects listed)"
            ),
            "{output}"
        );
    }

    // An empty namespace: nothing at all to list.
    let out = cluster
        .run(&["index", "pods", "-n", "empty", "--by", "namespace"])
        .await;
    assert_ok(&out);
    assert_eq!(stdout(&out), "");
    assert_eq!(
        stderr(&out).trim(),
        r#"kubectl-deltas: note: no pods in namespace "empty" to index"#
    );
}

/// A label, annotation or field path that no listed object has, but one close to it does: the
/// note names the one they have, as a mistyped resource's error does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mistyped_key_or_field_path_is_answered_with_the_one_the_objects_have() {
    let cluster = cluster().await;
    for (typed, meant) in [
        ("field:spec.nodename", "field:spec.nodeName"),
        ("field:Spec.containers.imag", "field:spec.containers.image"),
        ("label:App", "label:app"),
        ("label:tire", "label:tier"),
        (
            "annotation:example.com/teams",
            "annotation:example.com/team",
        ),
    ] {
        let out = cluster.run(&["index", "pods", "-A", "--by", typed]).await;
        assert_ok(&out);
        assert_eq!(stdout(&out), "", "{typed}");
        assert_eq!(
            stderr(&out).trim(),
            format!(
                "kubectl-deltas: note: none of the pods in all namespaces has a value under \
                 {typed} ({PODS} objects listed); did you mean {meant}?"
            ),
            "{typed}"
        );
        // With --value, and as the error of --fail-empty.
        let out = cluster
            .run(&[
                "index",
                "pods",
                "-A",
                "--by",
                typed,
                "--value",
                "x",
                "--fail-empty",
            ])
            .await;
        assert_eq!(out.status.code(), Some(4), "{typed}: {}", stderr(&out));
        assert!(
            stderr(&out)
                .trim()
                .ends_with(&format!("; did you mean {meant}?")),
            "{typed}: {}",
            stderr(&out)
        );
    }
    // Nothing close: no guess.
    let out = cluster
        .run(&["index", "pods", "-A", "--by", "field:spec.zzzzzzzz"])
        .await;
    assert_ok(&out);
    assert!(!stderr(&out).contains("did you mean"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_index_specs_and_resources_are_usage_errors_before_listing() {
    let cluster = cluster().await;
    for (spec, reason) in [
        ("label", "label needs a label key after the colon"),
        ("colour:red", "unknown index kind \"colour\""),
        ("field:spec..x", "the field path has an empty segment"),
    ] {
        let out = cluster.run(&["index", "pods", "--by", spec]).await;
        assert_eq!(out.status.code(), Some(2), "{spec}");
        let err = stderr(&out);
        assert!(
            err.starts_with("kubectl-deltas: error: invalid index spec"),
            "{err}"
        );
        assert!(err.contains(reason), "{err}");
        assert!(
            err.contains("valid forms: namespace, label:<key>, labels, annotation:<key>, field:<dotted.path>, owner"),
            "{err}"
        );
        assert_eq!(stdout(&out), "");
    }
    let out = cluster
        .run(&["index", "pods", "--by", "namespace", "--index", "owner:x"])
        .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        cluster.server.requests().is_empty(),
        "nothing was asked of the server"
    );

    let out = cluster.run(&["index", "podz", "--by", "namespace"]).await;
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.starts_with(
            r#"kubectl-deltas: error: the server doesn't have a resource type "podz"; did you mean "pods""#
        ),
        "{err}"
    );

    let out = cluster
        .run(&["index", "pods", "--by", "namespace", "--keys-only"])
        .await;
    assert_eq!(out.status.code(), Some(2), "--keys-only needs --value");
    let out = cluster
        .run(&[
            "index",
            "pods",
            "--by",
            "namespace",
            "--value",
            "x",
            "--keys-only",
            "-o",
            "json",
        ])
        .await;
    assert_eq!(out.status.code(), Some(2), "--keys-only replaces -o");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_may_repeat_an_extra_index_and_pages_as_asked() {
    let cluster = cluster().await;
    let pods = cluster.objects("pods");
    let out = cluster
        .run(&[
            "index",
            "pods",
            "-A",
            "--by",
            "owner",
            "--index",
            "owner",
            "--index",
            "labels",
            "--consistent-list",
            "--page-size",
            "7",
            "-o",
            "json",
        ])
        .await;
    assert_ok(&out);
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json_rows(&doc), expected_listing(&pods, "owner"));
    // Paged as asked (a consistent list: the watch cache's `resourceVersion=0` is never paged).
    let lists = cluster
        .server
        .requests()
        .into_iter()
        .filter(|r| r.is_list())
        .count();
    assert_eq!(lists, PODS.div_ceil(7));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_queue_and_batch_size_leaves_the_same_indexer() {
    let cluster = cluster().await;
    let pods = cluster.objects("pods");
    let queues: [&[&str]; 5] = [
        &["--fifo", "delta"],
        &["--fifo", "real"],
        &["--fifo", "real", "--batch-pop", "16"],
        &["--fifo", "atomic"],
        &["--fifo", "atomic", "--batch-pop", "4"],
    ];
    // A listing of values and the objects under some of them, from a paged list.
    let (spec, values) = ("labels", ["app=web", "tier=back"]);
    let expected_rows = expected_listing(&pods, spec);
    let expected_keys = expected_matches(&pods, spec, &values);
    let mut answers: BTreeSet<(String, String)> = BTreeSet::new();
    for queue in queues {
        let mut listing = vec!["index", "pods", "-A", "--by", spec, "--page-size", "7"];
        listing.extend(["-o", "json"]);
        listing.extend(queue);
        let out = cluster.run(&listing).await;
        assert_ok(&out);
        let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(json_rows(&doc), expected_rows, "{queue:?}");

        let mut objects = vec!["index", "pods", "-A", "--by", spec, "-o", "json"];
        for v in values {
            objects.extend(["--value", v]);
        }
        objects.extend(queue);
        let out2 = cluster.run(&objects).await;
        assert_ok(&out2);
        let doc: Value = serde_json::from_str(&stdout(&out2)).unwrap();
        let keys: Vec<String> = doc["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(key_of)
            .collect();
        assert_eq!(keys, expected_keys, "{queue:?}");
        answers.insert((stdout(&out), stdout(&out2)));
    }
    assert_eq!(answers.len(), 1, "the same bytes whatever the queue");

    // A streaming list through the atomic queue: one ReplacedAll from the initial events.
    cluster.server.set_watch_list_supported(true);
    let out = cluster
        .run(&[
            "index",
            "pods",
            "-A",
            "--by",
            spec,
            "-o",
            "json",
            "--watch-list",
            "--fifo",
            "atomic",
        ])
        .await;
    assert_ok(&out);
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json_rows(&doc), expected_rows);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streaming_list_fills_the_cache_without_a_plain_watch() {
    let cluster = cluster().await;
    let pods = cluster.objects("pods");
    let args = [
        "index",
        "pods",
        "-A",
        "--by",
        "field:spec.containers.image",
        "--watch-list",
        "-o",
        "json",
    ];
    let expected = expected_listing(&pods, "field:spec.containers.image");

    // A 1.28 server refuses sendInitialEvents: the Reflector falls back to a list.
    let out = cluster.run(&args).await;
    assert_ok(&out);
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json_rows(&doc), expected);

    cluster.server.set_watch_list_supported(true);
    cluster.server.clear_requests();
    let out = cluster.run(&args).await;
    assert_ok(&out);
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json_rows(&doc), expected);
    let requests = cluster.server.requests();
    let watches: Vec<_> = requests.iter().filter(|r| r.is_watch()).collect();
    assert_eq!(watches.len(), 1, "{requests:#?}");
    assert_eq!(watches[0].param("sendInitialEvents"), Some("true"));
    assert!(!requests.iter().any(|r| r.is_list()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_list_is_retried_with_a_note_and_forbidden_is_exit_3() {
    let cluster = cluster().await;
    let pods = cluster.objects("pods");
    cluster.server.inject(Fault::status(503).on(Verb::List));
    let out = cluster
        .run(&["index", "pods", "-A", "--by", "namespace", "-o", "json"])
        .await;
    assert_ok(&out);
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json_rows(&doc), expected_listing(&pods, "namespace"));
    let err = stderr(&out);
    assert!(
        err.lines()
            .any(|l| l.starts_with("kubectl-deltas: list failed: ") && l.contains("retrying in")),
        "{err}"
    );
    // Our note replaces the HTTP client's own log line, which only -v shows.
    assert!(
        err.lines().all(|l| l.starts_with("kubectl-deltas: ")),
        "{err}"
    );

    cluster.server.inject(Fault::status(403).on(Verb::List));
    let out = cluster.run(&["index", "pods", "--by", "namespace"]).await;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.starts_with(r#"kubectl-deltas: error: listing pods in namespace "default" failed"#),
        "{err}"
    );
    assert!(err.contains("forbidden"), "{err}");
    assert_eq!(stdout(&out), "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_pipe_ends_a_large_answer_quietly_with_exit_0() {
    let cluster = cluster().await;
    for output in ["yaml", "json", "jsonl"] {
        let mut args = vec!["index", "pods", "-A", "--by", "namespace"];
        for ns in NAMESPACES {
            args.extend(["--value", ns]);
        }
        args.extend(["-o", output]);
        // More than a pipe (64 KiB) and the output buffer (8 KiB) hold, so the writes do meet the
        // closed pipe.
        let whole = cluster.run(&args).await;
        assert!(
            whole.stdout.len() > 96 * 1024,
            "-o {output}: {}",
            whole.stdout.len()
        );
        let mut bin = Running::start(command(&cluster.kubeconfig, &args));
        let out = tokio::task::block_in_place(|| {
            bin.read_until("a first line", |_| true);
            bin.close_stdout(); // as `| head -n 1` does
            bin.finish()
        });
        assert_eq!(out.status.code(), Some(0), "-o {output}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "-o {output}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_applied_configuration_of_secrets_stays_redacted() {
    const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
    let server = FakeApiServer::start().await;
    // As `kubectl apply` writes it: the applied Secret, values included, in an annotation.
    let applied = json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
        "metadata": {"annotations": {}, "name": "db", "namespace": "default"},
        "data": {"password": "aHVudGVyMg=="}, "stringData": {"user": "admin-user"}});
    server.create(
        "secrets",
        json!({"metadata": {"name": "db", "namespace": "default",
                            "annotations": {LAST_APPLIED: format!("{applied}\n")}},
               "type": "Opaque", "data": {"password": "aHVudGVyMg=="}}),
    );
    let dir = tempfile::tempdir().unwrap();
    let cluster = Cluster {
        kubeconfig: server.write_kubeconfig(dir.path()),
        server,
        _dir: dir,
    };
    for output in ["json", "yaml", "jsonl"] {
        let args = [
            "index",
            "secrets",
            "--by",
            "namespace",
            "--value",
            "default",
            "-o",
            output,
        ];
        let out = cluster.run(&args).await;
        assert_ok(&out);
        let text = stdout(&out);
        assert!(text.contains("<redacted>"), "-o {output}: {text}");
        for value in ["aHVudGVyMg==", "admin-user"] {
            assert!(!text.contains(value), "-o {output} shows {value}: {text}");
        }
    }
    let by_annotation = format!("annotation:{LAST_APPLIED}");
    for args in [
        vec!["index", "secrets", "--by", by_annotation.as_str()],
        vec![
            "index",
            "secrets",
            "--by",
            "namespace",
            "--index",
            "field:data.password",
        ],
        vec![
            "index",
            "secrets",
            "--by",
            "namespace",
            "--index",
            by_annotation.as_str(),
        ],
    ] {
        let refused = cluster.run(&args).await;
        assert_eq!(
            refused.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&refused)
        );
        assert!(
            stderr(&refused).contains("--show-secret-data"),
            "{}",
            stderr(&refused)
        );
        assert!(!stdout(&refused).contains("admin-user"));
        let mut allowed = args.clone();
        allowed.push("--show-secret-data");
        assert_ok(&cluster.run(&allowed).await);
    }
}

/// An empty collection syncs the queue in its `replace`, with no batch to pop: `index` notices
/// it there and answers at once, whatever the queue, listed live (with a plain list or a
/// streaming one) or replayed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_collection_is_indexed_at_once_with_every_queue() {
    let server = FakeApiServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let recording = dir.path().join("empty.jsonl");
    let header = r#"{"kind":"header","v":1,"resource":{"group":"","version":"v1","kind":"ConfigMap","plural":"configmaps","namespaced":true},"namespace":"default","startedAt":"2026-01-05T10:00:00Z"}"#;
    let list = r#"{"t":0,"type":"LIST","resourceVersion":"1","items":[]}"#;
    std::fs::write(&recording, [header, list].join("\n") + "\n").unwrap();
    let replay = ["--replay", recording.to_str().unwrap()];
    for fifo in ["delta", "real", "atomic", "plain"] {
        for source in [&["cm"][..], &["cm", "--watch-list"], &replay] {
            let mut args = vec!["index"];
            args.extend_from_slice(source);
            args.extend_from_slice(&["--by", "namespace", "--fifo", fifo]);
            let out = if source == replay {
                support::binary::run_offline(&args, None).await
            } else {
                run(&kubeconfig, &args, &[]).await
            };
            assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
            assert_eq!(stdout(&out), "", "{args:?}");
            assert!(
                stderr(&out).contains("to index"),
                "{args:?}: {}",
                stderr(&out)
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_piped_table_cuts_the_keys_of_a_value_as_a_terminal_does() {
    let cluster = cluster().await;
    let pods = cluster.objects("pods");
    let expected = expected_listing(&pods, "namespace");
    let out = cluster
        .run(&["index", "pods", "-A", "--by", "namespace"])
        .await;
    assert_ok(&out);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.len(),
        1 + expected.len(),
        "one line per value: {text}"
    );
    assert!(lines.iter().all(|l| l.chars().count() <= 80), "{text}");
    let cut = lines[1..].iter().filter(|l| l.ends_with(" more)")).count();
    assert!(cut > 0, "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn value_star_answers_which_objects_have_the_index_at_all() {
    let cluster = cluster().await;
    let pods = cluster.objects("pods");
    let labelled: Vec<String> = pods
        .iter()
        .filter(|(_, pod)| !values_of(pod, "label:app").is_empty())
        .map(|(key, _)| key.clone())
        .collect();
    assert!(!labelled.is_empty() && labelled.len() < PODS);
    let out = cluster
        .run(&[
            "index",
            "pods",
            "-A",
            "--by",
            "label:app",
            "--value",
            "*",
            "--keys-only",
        ])
        .await;
    assert_ok(&out);
    let mut keys: Vec<String> = stdout(&out).lines().map(str::to_owned).collect();
    keys.sort();
    let mut expected = labelled;
    expected.sort();
    assert_eq!(keys, expected);

    // No object with the label: nothing on stdout, and a note that says so (not "the index has
    // 0 values; list them without --value").
    let out = cluster
        .run(&[
            "index",
            "pods",
            "-A",
            "--by",
            "label:missing",
            "--value",
            "*",
        ])
        .await;
    assert_ok(&out);
    assert_eq!(stdout(&out), "");
    assert_eq!(
        stderr(&out).trim(),
        format!(
            "kubectl-deltas: note: no pods in all namespaces indexed under label:missing = any \
             value: none of the {PODS} objects has a value under label:missing"
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_help_shows_only_the_flags_of_a_list() {
    let out = support::binary::run_offline(&["index", "--help"], None).await;
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8(out.stdout).unwrap();
    for watch_only in [
        "--resync",
        "--legacy-sync",
        "--watch-timeout",
        "--verify-every",
    ] {
        assert!(!help.contains(watch_only), "{watch_only} in\n{help}");
    }
    for own in [
        "--client-go",
        "--fifo",
        "--index",
        "--page-size",
        "--watch-list",
    ] {
        assert!(help.contains(own), "{own} missing from\n{help}");
    }
    // Given anyway, such a flag is a usage error rather than ignored.
    let out = support::binary::run_offline(
        &[
            "index", "--replay", "x.jsonl", "--by", "owner", "--resync", "1m",
        ],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
}

/// An owner with two pods lists both keys, not one and `(+1 more)`: the KEYS column shows the
/// first three keys of a list whole, as kubectl's `formatEndpoints` shows the first three
/// endpoints of a Service, and says `(+N more)` only of what follows them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_by_owner_shows_both_keys_of_an_owner_with_two() {
    let path = support::paths::bundled("rollout-pods");
    let out = support::binary::run_offline(
        &["index", "--replay", path.to_str().unwrap(), "--by", "owner"],
        None,
    )
    .await;
    assert_ok(&out);
    let text = stdout(&out);
    let row = text.lines().nth(1).unwrap();
    assert!(row.starts_with("ReplicaSet/web-5d79b66554   2 "), "{text}");
    assert!(
        row.contains("demo/web-5d79b66554-g2jkr") && row.contains("demo/web-5d79b66554-jbk7h"),
        "{text}"
    );
    assert!(!row.contains("more)"), "{text}");
}
