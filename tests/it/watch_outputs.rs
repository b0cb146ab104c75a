//! `watch` as users combine it: several resources in one timeline, `--query`, `--since-now`,
//! Secret redaction in every output format, the `RESOURCE` shorthand and `| head`.

use crate::support;

use std::path::PathBuf;

use serde_json::{Value, json};
use support::binary::{Running, json_lines, run, stderr};
use support::fake_apiserver::{FakeApiServer, Fault, Verb};

async fn server() -> (FakeApiServer, tempfile::TempDir, PathBuf) {
    let server = FakeApiServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    (server, dir, kubeconfig)
}

fn cm(name: &str, app: &str) -> Value {
    json!({"metadata": {"name": name, "namespace": "default", "labels": {"app": app}},
           "data": {"k": "v"}})
}

fn batches(lines: &[Value]) -> Vec<&Value> {
    lines.iter().filter(|l| l["kind"] == "batch").collect()
}

fn keys(lines: &[Value]) -> Vec<&str> {
    batches(lines)
        .iter()
        .map(|b| b["key"].as_str().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_resources_run_as_one_timeline_in_pop_order() {
    let (server, _dir, kubeconfig) = server().await;
    server.create("deployments.apps", json!({"metadata": {"name": "web"}}));
    server.create("replicasets.apps", json!({"metadata": {"name": "web-1"}}));
    server.create("pods", json!({"metadata": {"name": "web-1-a"}}));
    let mut bin = Running::spawn(
        &kubeconfig,
        &["watch", "deploy,rs,po", "-o", "jsonl", "--max-batches", "6"],
    );
    tokio::task::block_in_place(|| {
        for _ in 0..3 {
            bin.read_until("a sync", |l| l.contains(r#""event":"synced""#));
        }
    });
    // A controller's chain of effects, one step after the other.
    server.create("deployments.apps", json!({"metadata": {"name": "api"}}));
    tokio::task::block_in_place(|| bin.read_until("the deployment", |l| l.contains("default/api")));
    server.create("replicasets.apps", json!({"metadata": {"name": "api-1"}}));
    tokio::task::block_in_place(|| {
        bin.read_until("the replicaset", |l| l.contains("default/api-1"))
    });
    server.create("pods", json!({"metadata": {"name": "api-1-a"}}));
    let ended = tokio::task::block_in_place(|| bin.wait());
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);

    let lines = json_lines(ended.stdout.as_bytes());
    let batches = batches(&lines);
    let seqs: Vec<u64> = batches.iter().map(|b| b["seq"].as_u64().unwrap()).collect();
    assert_eq!(
        seqs,
        [1, 2, 3, 4, 5, 6],
        "one pop sequence across resources"
    );
    let live: Vec<(&str, &str)> = batches[3..]
        .iter()
        .map(|b| (b["resource"].as_str().unwrap(), b["key"].as_str().unwrap()))
        .collect();
    assert_eq!(
        live,
        [
            ("deployments.apps", "default/api"),
            ("replicasets.apps", "default/api-1"),
            ("pods", "default/api-1-a")
        ]
    );
    let mut synced: Vec<&str> = lines
        .iter()
        .filter(|l| l["event"] == "synced")
        .map(|l| l["resource"].as_str().unwrap())
        .collect();
    synced.sort();
    assert_eq!(synced, ["deployments.apps", "pods", "replicasets.apps"]);
    // One connection's discovery served all three names.
    let discovery = server
        .requests()
        .iter()
        .filter(|r| r.path == "/api" || r.path == "/apis")
        .count();
    assert!(discovery <= 2, "{:#?}", server.requests());

    // The timeline shows the resource column, and --until-synced waits for every resource.
    let out = run(kubeconfig, &["watch", "deploy,po", "--until-synced"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<&str> = text.lines().collect();
    // time, #seq, resource, key, …
    let has_row = |resource: &str, key: &str| {
        rows.iter().any(|r| {
            let cells: Vec<&str> = r.split_whitespace().collect();
            cells.len() > 3 && cells[2] == resource && cells[3] == key
        })
    };
    assert!(has_row("deployments.apps", "default/api"), "{text}");
    assert!(has_row("pods", "default/api-1-a"), "{text}");
    assert_eq!(
        rows.iter()
            .filter(|r| r.contains("── ") && r.contains(": synced: HasSynced"))
            .count(),
        2,
        "{text}"
    );
    assert!(rows.last().unwrap().contains("synced: HasSynced"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_shows_batches_whose_old_or_new_object_matches() {
    let (server, _dir, kubeconfig) = server().await;
    server.create("configmaps", cm("web-1", "web"));
    server.create("configmaps", cm("db-1", "db"));
    let mut bin = Running::spawn(
        &kubeconfig,
        &[
            "watch",
            "cm",
            "-o",
            "jsonl",
            "--object",
            "none",
            "--query",
            "label:app=web",
        ],
    );
    tokio::task::block_in_place(|| {
        bin.read_until("the sync", |l| l.contains(r#""event":"synced""#))
    });
    // web-1 leaves the index value (its old object matched); `mark-1` shows once that was popped.
    server.update("configmaps", cm("web-1", "db"));
    server.create("configmaps", cm("mark-1", "web"));
    tokio::task::block_in_place(|| bin.read_until("mark-1", |l| l.contains("default/mark-1")));
    // Neither state of these matches.
    server.update("configmaps", cm("web-1", "cache"));
    server.create("configmaps", cm("db-2", "db"));
    server.create("configmaps", cm("mark-2", "web"));
    tokio::task::block_in_place(|| bin.read_until("mark-2", |l| l.contains("default/mark-2")));
    let ended = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);

    let lines = json_lines(ended.stdout.as_bytes());
    assert_eq!(
        keys(&lines),
        [
            "default/web-1",
            "default/web-1",
            "default/mark-1",
            "default/mark-2"
        ]
    );
    let types: Vec<&str> = batches(&lines)
        .iter()
        .map(|b| b["deltas"][0]["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["Replaced", "Updated", "Added", "Added"]);
    // Every batch was popped and counted, shown or not.
    let summary = ended.stderr;
    let row = summary.lines().find(|l| l.contains("batches")).unwrap();
    assert!(row.contains(" 7 "), "{summary}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn since_now_applies_the_initial_list_without_printing_it() {
    let (server, _dir, kubeconfig) = server().await;
    server.create("configmaps", cm("old-1", "web"));
    server.create("configmaps", cm("old-2", "web"));
    // `kubectl deltas RESOURCE` is `watch`.
    let mut bin = Running::spawn(
        &kubeconfig,
        &["cm", "-o", "jsonl", "--since-now", "--max-batches", "1"],
    );
    tokio::task::block_in_place(|| {
        bin.read_until("the sync", |l| l.contains(r#""event":"synced""#))
    });
    // The cache holds old-1, so this is an update, not an add.
    server.update("configmaps", cm("old-1", "db"));
    let ended = tokio::task::block_in_place(|| bin.wait());
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
    let lines = json_lines(ended.stdout.as_bytes());
    assert_eq!(keys(&lines), ["default/old-1"]);
    assert_eq!(batches(&lines)[0]["deltas"][0]["type"], "Updated");
    assert_eq!(
        batches(&lines)[0]["seq"],
        3,
        "the initial batches were popped"
    );
    let synced = lines.iter().find(|l| l["event"] == "synced").unwrap();
    assert_eq!(synced["batches"], 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secret_values_are_redacted_in_every_output() {
    let (server, _dir, kubeconfig) = server().await;
    // base64 of "hunter2" and of "swordfish".
    let secret = |password: &str| {
        json!({"metadata": {"name": "db", "namespace": "default"}, "type": "Opaque",
               "data": {"password": password}, "stringData": {"user": "admin-user"}})
    };
    server.create("secrets", secret("aHVudGVyMg=="));
    let updates = ["c3dvcmRmaXNo", "aHVudGVyMw=="];
    let mut last = "aHVudGVyMg==";
    for (i, output) in ["jsonl", "json", "yaml", "timeline", "wide"]
        .into_iter()
        .enumerate()
    {
        let next = updates[i % 2];
        let mut bin = Running::spawn(
            &kubeconfig,
            &["watch", "secrets", "-o", output, "--max-batches", "2"],
        );
        tokio::task::block_in_place(|| bin.read_until("the secret", |l| l.contains("db")));
        server.update("secrets", secret(next));
        last = next;
        let ended = tokio::task::block_in_place(|| bin.wait());
        assert_eq!(ended.status.code(), Some(0), "{output}: {}", ended.stderr);
        let text = ended.stdout;
        for value in ["aHVudGVyMg==", "c3dvcmRmaXNo", "aHVudGVyMw==", "admin-user"] {
            assert!(!text.contains(value), "-o {output} shows {value}:\n{text}");
        }
        match output {
            "timeline" | "wide" => {
                assert!(text.contains("data.password <redacted>"), "{text}");
                assert!(!text.contains("stringData.user"), "unchanged: {text}");
            }
            _ => assert!(text.contains("<redacted>"), "-o {output}:\n{text}"),
        }
    }

    let out = run(
        kubeconfig,
        &[
            "watch",
            "secrets",
            "-o",
            "jsonl",
            "--until-synced",
            "--show-secret-data",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = json_lines(&out.stdout);
    let object = &batches(&lines)[0]["deltas"][0]["object"];
    assert_eq!(object["data"]["password"], last);
    assert_eq!(object["stringData"]["user"], "admin-user");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn piping_into_head_prints_three_lines_and_exits_0_quietly() {
    let (server, _dir, kubeconfig) = server().await;
    for i in 0..5 {
        server.create("configmaps", cm(&format!("cm-{i}"), "web"));
    }
    // With --since-now the binary writes exactly three rows (list done, synced, watch opened),
    // then the watch goes quiet: it has to notice that head is gone without another line to
    // write.
    let mut bash = std::process::Command::new("bash");
    bash.arg("-c")
        .arg(r#"set -o pipefail; "$0" watch cm --since-now --kubeconfig "$1" | head -3"#)
        .arg(env!("CARGO_BIN_EXE_kubectl-deltas"))
        .arg(&kubeconfig)
        .env_remove("KUBECONFIG")
        .env_remove("RUST_BACKTRACE")
        .env("KUBECACHEDIR", support::binary::NO_CACHE_DIR)
        .env("NO_COLOR", "1");
    let output = support::binary::output(bash).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(String::from_utf8_lossy(&output.stdout).lines().count(), 3);
    assert_eq!(stderr(&output), "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_forbidden_resource_stops_them_all_with_exit_3() {
    let (server, _dir, kubeconfig) = server().await;
    server.create("configmaps", cm("a", "web"));
    server.inject(Fault::status(403).on(Verb::List).for_resource("secrets"));
    let out = run(kubeconfig, &["watch", "cm,secrets", "-o", "jsonl"]).await;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.starts_with("kubectl-deltas: error: watching secrets in namespace \"default\" failed"),
        "{err}"
    );
    assert!(
        !err.contains("batches"),
        "no summary after a failure: {err}"
    );
    let lines = json_lines(&out.stdout);
    let error = lines.iter().find(|l| l["event"] == "error").unwrap();
    assert_eq!(error["resource"], "secrets");
}

const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// A Secret written with `kubectl apply`, which keeps the applied Secret, values included, in an
/// annotation.
fn applied_secret(password: &str) -> Value {
    let applied = json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
        "metadata": {"annotations": {}, "name": "db", "namespace": "default"},
        "data": {"password": password}, "stringData": {"user": "admin-user"}});
    json!({"metadata": {"name": "db", "namespace": "default",
                        "annotations": {LAST_APPLIED: format!("{applied}\n")}},
           "type": "Opaque", "data": {"password": password}, "stringData": {"user": "admin-user"}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_applied_configuration_of_a_secret_is_redacted_in_every_output() {
    let (server, _dir, kubeconfig) = server().await;
    server.create("secrets", applied_secret("aHVudGVyMg=="));
    let runs = [
        ["-o", "jsonl", "--object", "full"],
        ["-o", "jsonl", "--object", "meta"],
        ["-o", "json", "--object", "full"],
        ["-o", "json", "--object", "meta"],
        ["-o", "yaml", "--object", "full"],
        ["-o", "yaml", "--object", "meta"],
        ["-o", "timeline", "--object", "full"],
        ["-o", "wide", "--object", "full"],
    ];
    for (i, flags) in runs.iter().enumerate() {
        let mut args = vec!["watch", "secrets", "--max-batches", "2"];
        args.extend(flags);
        let mut bin = Running::spawn(&kubeconfig, &args);
        tokio::task::block_in_place(|| bin.read_until("the secret", |l| l.contains("db")));
        server.update(
            "secrets",
            applied_secret(["c3dvcmRmaXNo", "aHVudGVyMw=="][i % 2]),
        );
        let ended = tokio::task::block_in_place(|| bin.wait());
        assert_eq!(ended.status.code(), Some(0), "{flags:?}: {}", ended.stderr);
        let text = ended.stdout;
        for value in ["aHVudGVyMg==", "c3dvcmRmaXNo", "aHVudGVyMw==", "admin-user"] {
            assert!(!text.contains(value), "{flags:?} shows {value}:\n{text}");
        }
        if flags[1] == "jsonl" {
            // The annotation is redacted whole.
            let lines = json_lines(text.as_bytes());
            let object = &batches(&lines)[0]["deltas"][0]["object"];
            assert_eq!(
                object["metadata"]["annotations"][LAST_APPLIED],
                "<redacted>"
            );
        }
    }

    // With --show-secret-data, the annotation as the server holds it.
    let out = run(
        kubeconfig.clone(),
        &[
            "watch",
            "secrets",
            "-o",
            "jsonl",
            "--object",
            "meta",
            "--until-synced",
            "--show-secret-data",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("admin-user"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queries_and_indices_of_secret_values_need_show_secret_data() {
    let (server, _dir, kubeconfig) = server().await;
    server.create("secrets", applied_secret("aHVudGVyMg=="));
    server.create("configmaps", cm("a", "web"));
    let applied_query = format!("annotation:{LAST_APPLIED}=x");
    for flags in [
        ["--query", "field:data.password=aHVudGVyMg=="],
        ["--query", "field:stringData.user=admin-user"],
        ["--query", applied_query.as_str()],
        ["--index", "field:data.password"],
        ["--index", &format!("annotation:{LAST_APPLIED}")],
    ] {
        let mut args = vec!["watch", "secrets", "-o", "jsonl", "--until-synced"];
        args.extend(flags);
        let refused = run(kubeconfig.clone(), &args).await;
        let err = stderr(&refused);
        assert_eq!(refused.status.code(), Some(2), "{flags:?}: {err}");
        assert!(
            err.starts_with(&format!("kubectl-deltas: error: {} ", flags[0]))
                && err.contains(
                    "reads Secret values, which every output redacts: add --show-secret-data"
                ),
            "{flags:?}: {err}"
        );
        assert!(refused.stdout.is_empty(), "{flags:?}");
        args.push("--show-secret-data");
        let allowed = run(kubeconfig.clone(), &args).await;
        assert_eq!(
            allowed.status.code(),
            Some(0),
            "{flags:?}: {}",
            stderr(&allowed)
        );
    }
    // The data of other kinds is no secret.
    let out = run(
        kubeconfig,
        &["watch", "cm", "--until-synced", "--query", "field:data.k=v"],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
