//! `--metadata-only`: `PartialObjectMetadata` lists and watches, as client-go's metadata informer
//! (`metadata/metadatainformer` over `metadata.Client`) and kube's `list_metadata` /
//! `watch_metadata` ask for them, served by the fake API server as kube-apiserver v1.28.7 serves
//! them (`tests/fixtures/apiserver-v1.28.7/list-metadata-*`, `watch-metadata-events.jsonl`).

use crate::support;

use serde_json::{Value, json};
use support::binary::{Running, run, run_offline};
use support::fake_apiserver::FakeApiServer;

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/apiserver-v1.28.7"
);

const LIST_ACCEPT: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
const WATCH_ACCEPT: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{FIXTURES}/{name}")).expect("fixture")
}

/// `GET path` with `Accept: accept`: the status and the body as sent.
async fn get(server: &FakeApiServer, path: &str, accept: &str) -> (u16, String) {
    use http_body_util::BodyExt as _;
    let request = http::Request::get(path)
        .header(http::header::ACCEPT, accept)
        .body(kube::client::Body::empty())
        .unwrap();
    let response = server.client().send(request).await.expect("response");
    let status = response.status().as_u16();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    (status, String::from_utf8(body.to_vec()).expect("utf-8"))
}

/// A captured object's metadata with `data`, to store in the fake server as the real one had it.
fn stored(metadata: &Value) -> Value {
    json!({"metadata": metadata, "data": {"k": "v"}})
}

/// `text` with each `"resourceVersion":"<fake>"` replaced by the captured server's number.
fn with_real_versions(text: &str, versions: &[(u64, &str)]) -> String {
    versions.iter().fold(text.to_owned(), |text, (ours, real)| {
        text.replace(
            &format!(r#""resourceVersion":"{ours}""#),
            &format!(r#""resourceVersion":"{real}""#),
        )
    })
}

#[tokio::test]
async fn the_fake_server_serves_partial_object_metadata_byte_for_byte_as_kube_apiserver() {
    let server = FakeApiServer::start().await;
    let list_fixture = fixture("list-metadata-configmaps-page1.json");
    let watch_fixture = fixture("watch-metadata-events.jsonl");
    let real_list: Value = serde_json::from_str(&list_fixture).unwrap();
    let real_events: Vec<Value> = watch_fixture
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let meta = |v: &Value| v["metadata"].clone();
    let (a, b) = (meta(&real_list["items"][0]), meta(&real_list["items"][1]));
    let (c, d) = (
        meta(&real_events[1]["object"]),
        meta(&real_events[2]["object"]),
    );
    server.create("configmaps", stored(&a));
    let b_rv = server.create("configmaps", stored(&b));
    server.create("configmaps", stored(&c));
    let list_rv = server.update("configmaps", stored(&a));

    let path = "/api/v1/namespaces/fixtures-meta/configmaps?limit=2";
    let (status, body) = get(&server, path, LIST_ACCEPT).await;
    assert_eq!(status, 200, "{body}");
    let ours: Value = serde_json::from_str(&body).unwrap();
    let real_token = real_list["metadata"]["continue"].as_str().unwrap();
    let body = body.replace(ours["metadata"]["continue"].as_str().unwrap(), real_token);
    let body = with_real_versions(&body, &[(list_rv, "79884"), (b_rv, "79882")]);
    assert_eq!(body.trim_end(), list_fixture.trim_end());

    // The watch from the list's resourceVersion: a data-only change of b, c deleted, d added,
    // an annotation on a, then the bookmark before the timeout.
    let watch = tokio::spawn({
        let server_client = server.client();
        let path = format!(
            "/api/v1/namespaces/fixtures-meta/configmaps?watch=true&resourceVersion={list_rv}&allowWatchBookmarks=true&timeoutSeconds=1"
        );
        async move {
            use http_body_util::BodyExt as _;
            let request = http::Request::get(path)
                .header(http::header::ACCEPT, WATCH_ACCEPT)
                .body(kube::client::Body::empty())
                .unwrap();
            let response = server_client.send(request).await.expect("response");
            let body = response
                .into_body()
                .collect()
                .await
                .expect("body")
                .to_bytes();
            String::from_utf8(body.to_vec()).unwrap()
        }
    });
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    // In this order: an array's elements are evaluated first to last.
    let versions = [
        server.update("configmaps", stored(&meta(&real_events[0]["object"]))),
        server.delete("configmaps", "fixtures-meta", "c"),
        server.create("configmaps", stored(&d)),
        server.update("configmaps", stored(&meta(&real_events[3]["object"]))),
    ];
    let body = watch.await.unwrap();
    let real = ["79885", "79886", "79887", "79888"];
    let pairs: Vec<(u64, &str)> = versions.into_iter().zip(real).collect();
    assert_eq!(with_real_versions(&body, &pairs), watch_fixture);
}

#[tokio::test]
async fn the_fake_server_refuses_a_list_as_one_object_and_a_watch_as_a_list() {
    let server = FakeApiServer::start().await;
    let path = "/api/v1/namespaces/default/configmaps";
    let (status, body) = get(&server, path, WATCH_ACCEPT).await;
    assert_eq!(status, 406, "{body}");
    assert!(body.contains(r#""reason":"NotAcceptable""#), "{body}");
    let (status, _) = get(
        &server,
        &format!("{path}?watch=true&timeoutSeconds=1"),
        LIST_ACCEPT,
    )
    .await;
    assert_eq!(status, 406);
    // client-go's metadata client asks for protobuf first, then JSON: JSON it gets.
    let accept = format!(
        "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,{LIST_ACCEPT}"
    );
    let (status, body) = get(&server, path, &accept).await;
    assert_eq!(status, 200);
    assert!(
        body.starts_with(r#"{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1""#),
        "{body}"
    );
}

fn cm(name: &str, app: &str, value: &str) -> Value {
    json!({"metadata": {"name": name, "namespace": "default", "labels": {"app": app}},
           "data": {"k": value}})
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

/// What the timeline's Updated rows of `key` say changed: each row's text after its last run of
/// spaces between columns (`changed outside metadata`).
fn changes_of<'a>(timeline: &'a str, key: &str) -> Vec<&'a str> {
    timeline
        .lines()
        .filter(|l| l.contains(&format!(" {key} ")) && l.contains("Updated"))
        .filter_map(|l| {
            l.trim_end()
                .rsplit_once("  ")
                .map(|(_, changes)| changes.trim())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_metadata_only_recording_shows_changes_outside_metadata_live_and_in_its_replay() {
    let server = FakeApiServer::start().await;
    server.create("configmaps", cm("a", "web", "1"));
    server.create("configmaps", cm("b", "web", "1"));
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let path = dir.path().join("meta.jsonl");
    let file = path.to_str().unwrap();
    let mut bin = Running::spawn(
        &kubeconfig,
        &["record", "cm", "--metadata-only", "-f", file],
    );
    let mut step = |what: &str, until: &dyn Fn(&str) -> bool| {
        tokio::task::block_in_place(|| bin.read_stderr_until(what, until));
    };
    step("the sync", &|l| l.contains("── synced:"));
    // Only `data` changes: the metadata informer sees a new resourceVersion and nothing else.
    server.update("configmaps", cm("a", "web", "2"));
    step("a's update", &|l| {
        l.contains(" default/a ") && l.contains("Updated")
    });
    server.update("configmaps", cm("b", "api", "1"));
    step("b's update", &|l| {
        l.contains(" default/b ") && l.contains("Updated")
    });
    let live = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(live.status.code(), Some(0), "{}", live.stderr);
    assert_eq!(
        changes_of(&live.stderr, "default/a"),
        ["changed outside metadata"]
    );
    assert_eq!(
        changes_of(&live.stderr, "default/b"),
        ["metadata.labels.app web→api"]
    );
    // The summary says how much the cache holds.
    let cache_row = live
        .stderr
        .lines()
        .find(|l| l.contains("cache (objects, size)"))
        .unwrap_or_else(|| panic!("no cache row in {}", live.stderr));
    assert!(cache_row.contains("2, "), "{cache_row}");

    // Both requests asked for PartialObjectMetadata, as client-go's metadata informer does.
    let requests = server.requests();
    let list = requests.iter().find(|r| r.is_list()).expect("a list");
    assert_eq!(list.accept, LIST_ACCEPT);
    let watch = requests.iter().find(|r| r.is_watch()).expect("a watch");
    assert_eq!(watch.accept, WATCH_ACCEPT);

    // The recording says it holds metadata only, and its objects are what the server sent.
    let recording = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<Value> = recording
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["kind"], "header");
    assert_eq!(lines[0]["metadataOnly"], true);
    let event = lines
        .iter()
        .find(|l| l["type"] == "MODIFIED")
        .expect("an event");
    assert_eq!(event["object"]["kind"], "PartialObjectMetadata");
    assert_eq!(event["object"]["apiVersion"], "meta.k8s.io/v1");
    assert!(event["object"].get("data").is_none(), "{event}");

    // Its replay shows the same changes.
    let replay = run_offline(&["replay", file], None).await;
    assert_eq!(replay.status.code(), Some(0), "{}", text(&replay.stderr));
    let timeline = text(&replay.stdout);
    assert_eq!(
        changes_of(&timeline, "default/a"),
        ["changed outside metadata"]
    );
    assert_eq!(
        changes_of(&timeline, "default/b"),
        ["metadata.labels.app web→api"]
    );

    // And it refuses what needs fields the recording does not hold, as `record` would have.
    for args in [
        vec!["replay", file, "--query", "field:data.k=1"],
        vec!["index", "--replay", file, "--by", "field:data.k"],
    ] {
        let out = run_offline(&args, None).await;
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains("reads a field outside metadata"),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    let out = run_offline(&["index", "--replay", file, "--by", "label:app"], None).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    assert!(table.contains("web") && table.contains("api"), "{table}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_only_index_and_watch_work_by_metadata_and_refuse_fields_outside_it() {
    let server = FakeApiServer::start().await;
    server.create("configmaps", cm("a", "web", "1"));
    server.create(
        "configmaps",
        json!({"metadata": {"name": "b", "namespace": "default", "labels": {"app": "web"},
                            "annotations": {"team": "blue"},
                            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                                 "name": "web", "uid": "u-1"}]},
               "data": {"k": "2"}}),
    );
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());

    let out = run(
        &kubeconfig,
        &[
            "index",
            "cm",
            "--metadata-only",
            "--by",
            "label:app",
            "--value",
            "web",
            "--keys-only",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "default/a\ndefault/b\n");
    for (by, expected) in [
        ("annotation:team", "default/b\n"),
        ("owner", "default/b\n"),
        ("namespace", "default/a\ndefault/b\n"),
    ] {
        let value = match by {
            "annotation:team" => "blue",
            "owner" => "Deployment/web",
            _ => "default",
        };
        let out = run(
            &kubeconfig,
            &[
                "index",
                "cm",
                "--metadata-only",
                "--by",
                by,
                "--value",
                value,
                "--keys-only",
            ],
        )
        .await;
        assert_eq!(out.status.code(), Some(0), "{by}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), expected, "{by}");
    }
    assert!(
        server
            .requests()
            .iter()
            .filter(|r| r.is_list())
            .all(|r| r.accept == LIST_ACCEPT),
        "every list asked for metadata only"
    );

    // Refused before the cluster is asked anything.
    server.clear_requests();
    for args in [
        vec!["index", "cm", "--metadata-only", "--by", "field:data.k"],
        vec!["watch", "cm", "--metadata-only", "--index", "field:data.k"],
        vec![
            "watch",
            "cm",
            "--metadata-only",
            "--query",
            "field:spec.replicas=1",
        ],
    ] {
        let out = run(&kubeconfig, &args).await;
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let flag = if args.contains(&"--by") {
            "--by field:data.k"
        } else if args.contains(&"--index") {
            "--index field:data.k"
        } else {
            "--query field:spec.replicas"
        };
        assert_eq!(
            text(&out.stderr).lines().next().unwrap_or_default(),
            format!(
                "kubectl-deltas: error: {flag} reads a field outside metadata, which a metadata-only \
                 informer does not hold: index by a metadata field (field:metadata.…, label, \
                 annotation, owner, namespace), or leave --metadata-only out"
            ),
            "{args:?}"
        );
    }
    assert!(
        server.requests().iter().all(|r| r.resource.is_none()),
        "nothing was listed"
    );

    // jsonl carries the PartialObjectMetadata as the server sent it; a field of metadata indexes.
    let out = run(
        &kubeconfig,
        &[
            "watch",
            "cm",
            "--metadata-only",
            "-o",
            "jsonl",
            "--until-synced",
            "--index",
            "field:metadata.name",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines = support::binary::json_lines(&out.stdout);
    let objects: Vec<&Value> = lines
        .iter()
        .filter(|l| l["kind"] == "batch")
        .map(|l| &l["deltas"][0]["object"])
        .collect();
    assert_eq!(objects.len(), 2, "{lines:?}");
    for object in objects {
        assert_eq!(object["kind"], "PartialObjectMetadata", "{object}");
        assert!(object.get("data").is_none(), "{object}");
    }
}
