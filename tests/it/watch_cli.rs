//! `kubectl-deltas watch` as a user runs it: the binary against the fake API server, asserting on
//! its output lines and exit codes.

use crate::support;
use crate::support::configmaps::{cm, server_with_configmaps};

use serde_json::Value;
use support::binary::{Running, run, stderr};
use support::fake_apiserver::{CollectionEncoding, Fault, Verb};

fn lines(output: &std::process::Output) -> Vec<Value> {
    support::binary::json_lines(&output.stdout)
}

fn events(lines: &[Value]) -> Vec<&str> {
    lines
        .iter()
        .filter(|l| l["kind"] == "reflector")
        .map(|l| l["event"].as_str().unwrap())
        .collect()
}

fn batch_keys(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l["kind"] == "batch")
        .map(|l| l["key"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn until_synced_prints_the_initial_list_then_exits_0() {
    let (server, _dir, kubeconfig) = server_with_configmaps(3).await;
    let out = run(
        kubeconfig,
        &[
            "watch",
            "cm",
            "-o",
            "jsonl",
            "--until-synced",
            "--object",
            "meta",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = lines(&out);
    let events = events(&lines);
    // The watch opens while the consumer pops, so `watch-start` may come anywhere after the list.
    let order: Vec<&str> = lines
        .iter()
        .filter(|l| l["event"] != "watch-start")
        .map(|l| l["event"].as_str().unwrap_or("batch"))
        .collect();
    assert_eq!(
        order,
        [
            "informer-start",
            "list-start",
            "list-page",
            "list-done",
            "batch",
            "batch",
            "batch",
            "synced"
        ],
        "{events:?}"
    );
    // The first line says which queue runs: the classic DeltaFIFO unless --fifo says otherwise.
    assert_eq!(lines[0]["queue"], "delta");
    assert_eq!(lines[0]["batchPop"], 1);

    let expected: Vec<String> = server
        .objects("configmaps")
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    let mut keys = batch_keys(&lines);
    keys.sort();
    assert_eq!(keys, expected);
    for batch in lines.iter().filter(|l| l["kind"] == "batch") {
        assert_eq!(batch["initial"], true);
        assert_eq!(batch["deltas"][0]["type"], "Replaced");
        let meta = &batch["deltas"][0]["object"]["metadata"];
        assert!(meta.get("managedFields").is_none());
    }
    // The first list is served from the watch cache, with a limit, as client-go asks.
    let list = server.requests().into_iter().find(|r| r.is_list()).unwrap();
    assert_eq!(list.param("resourceVersion"), Some("0"));
    assert_eq!(list.param("limit"), Some("500"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_initial_list_is_synced_at_once() {
    let (_server, _dir, kubeconfig) = server_with_configmaps(0).await;
    let out = run(
        kubeconfig,
        &["watch", "configmaps", "-o", "jsonl", "--until-synced"],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = lines(&out);
    assert!(batch_keys(&lines).is_empty());
    assert_eq!(events(&lines).last(), Some(&"synced"));
}

/// kube-apiserver 1.33+ encodes a list as it sends it, in net/http's 2048-byte chunks, so most
/// items, and some escapes and UTF-8 characters, arrive split across pieces of the body
/// (`fake_apiserver::collection`): every object is read whole all the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_encoded_as_it_is_sent_arrives_whole_however_its_chunks_split_it() {
    let (server, _dir, kubeconfig) = server_with_configmaps(0).await;
    server.set_collection_encoding(CollectionEncoding::Streaming);
    let value = |i: usize| format!("<é&\u{2028}>{}", "x".repeat(i % 97));
    for i in 0..400 {
        server.create("configmaps", cm(&format!("cm-{i:03}"), &value(i)));
    }
    let out = run(
        kubeconfig,
        &["watch", "configmaps", "-o", "jsonl", "--until-synced"],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = lines(&out);
    let batches: Vec<&Value> = lines.iter().filter(|l| l["kind"] == "batch").collect();
    assert_eq!(batches.len(), 400);
    for (i, batch) in batches.iter().enumerate() {
        let object = &batch["deltas"][0]["object"];
        assert_eq!(object["metadata"]["name"], format!("cm-{i:03}"));
        assert_eq!(object["data"]["k"], value(i), "{batch}");
    }
    assert_eq!(events(&lines).last(), Some(&"synced"));
}

/// Reads JSON lines from the binary until `until` holds for one of them; each goes to `seen`.
fn read_until(bin: &mut Running, seen: &mut Vec<Value>, until: impl Fn(&Value) -> bool) {
    loop {
        let line = bin.read_until("one more line", |_| true);
        let value: Value = serde_json::from_str(&line).unwrap();
        let done = until(&value);
        seen.push(value);
        if done {
            return;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_events_become_batches_and_ctrl_c_exits_0() {
    let (server, _dir, kubeconfig) = server_with_configmaps(1).await;
    let mut bin = Running::spawn(&kubeconfig, &["watch", "configmaps", "-o", "jsonl"]);
    let mut seen = Vec::new();
    tokio::task::block_in_place(|| {
        read_until(&mut bin, &mut seen, |l| l["event"] == "watch-start")
    });
    server.create("configmaps", cm("new", "1"));
    server.update("configmaps", cm("cm-0", "2"));
    server.delete("configmaps", "default", "new");
    // Deltas seen so far as "key Type" strings, oldest first.
    fn deltas(seen: &[Value]) -> Vec<String> {
        let mut out = Vec::new();
        for batch in seen.iter().filter(|l| l["kind"] == "batch") {
            for delta in batch["deltas"].as_array().unwrap() {
                let (key, type_) = (
                    batch["key"].as_str().unwrap(),
                    delta["type"].as_str().unwrap(),
                );
                out.push(format!("{key} {type_}"));
            }
        }
        out
    }
    tokio::task::block_in_place(|| {
        while !(deltas(&seen).contains(&"default/new Deleted".to_owned())
            && deltas(&seen).contains(&"default/cm-0 Updated".to_owned()))
        {
            read_until(&mut bin, &mut seen, |_| true);
        }
    });

    // Ctrl-C: the watch stops, what was popped is written, the exit is clean.
    let ended = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);

    // The watch events may coalesce per key when they arrive together; every one of them reaches
    // the consumer, in order.
    let deltas = deltas(&seen);
    let new: Vec<&String> = deltas
        .iter()
        .filter(|d| d.starts_with("default/new"))
        .collect();
    assert_eq!(new, ["default/new Added", "default/new Deleted"]);
    let cm0: Vec<&String> = deltas
        .iter()
        .filter(|d| d.starts_with("default/cm-0"))
        .collect();
    assert_eq!(cm0, ["default/cm-0 Replaced", "default/cm-0 Updated"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_batches_stops_after_that_many_batches() {
    let (_server, _dir, kubeconfig) = server_with_configmaps(3).await;
    let out = run(
        kubeconfig,
        &["watch", "configmaps", "-o", "jsonl", "--max-batches", "2"],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = lines(&out);
    assert_eq!(batch_keys(&lines), ["default/cm-0", "default/cm-1"]);
    assert_eq!(
        lines.last().unwrap()["kind"],
        "batch",
        "nothing follows the last batch"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_resource_is_a_usage_error_with_a_suggestion() {
    let (_server, _dir, kubeconfig) = server_with_configmaps(0).await;
    let out = run(kubeconfig, &["watch", "configmpas", "-o", "jsonl"]).await;
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(
        err.trim(),
        r#"kubectl-deltas: error: the server doesn't have a resource type "configmpas"; did you mean "configmaps"?"#
    );
    assert!(out.stdout.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forbidden_is_a_cluster_access_error_naming_the_verb_and_resource() {
    let (server, _dir, kubeconfig) = server_with_configmaps(1).await;
    server.inject(Fault::status(403).on(Verb::List));
    let out = run(kubeconfig, &["watch", "configmaps", "-o", "jsonl"]).await;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.starts_with(
            "kubectl-deltas: error: watching configmaps in namespace \"default\" failed"
        ),
        "{err}"
    );
    assert!(err.contains("cannot list configmaps"), "{err}");
    assert!(err.contains("forbidden"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_cluster_is_a_cluster_access_error() {
    let dir = tempfile::tempdir().unwrap();
    let port = {
        // A port nobody listens on any more.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let kubeconfig = dir.path().join("config");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: c\n  cluster: {{server: \"http://127.0.0.1:{port}\"}}\n\
             contexts:\n- name: c\n  context: {{cluster: c, user: u}}\nusers:\n- name: u\n  user: {{token: t}}\n"
        ),
    )
    .unwrap();
    let out = run(kubeconfig, &["watch", "pods", "-o", "jsonl"]).await;
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "cannot read the API resources of the cluster at http://127.0.0.1:{port}/ \
             (connection refused): is the cluster running, and is kubeconfig context \"c\" the \
             one you meant (--context)?"
        )),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_kubeconfig_or_index_spec_fails_before_any_request() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("config");
    std::fs::write(&bad, "clusters: [oops").unwrap();
    let out = run(bad, &["watch", "pods", "-o", "jsonl"]).await;
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("cannot load kubeconfig"),
        "{}",
        stderr(&out)
    );

    let (server, _dir, kubeconfig) = server_with_configmaps(0).await;
    let out = run(
        kubeconfig,
        &["watch", "pods", "-o", "jsonl", "--index", "label"],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("valid forms: namespace, label:<key>"),
        "{}",
        stderr(&out)
    );
    assert!(server.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_pipe_ends_the_watch_quietly_with_exit_0() {
    let (server, _dir, kubeconfig) = server_with_configmaps(2).await;
    let mut bin = Running::spawn(&kubeconfig, &["watch", "configmaps", "-o", "jsonl"]);
    let mut seen = Vec::new();
    tokio::task::block_in_place(|| {
        read_until(&mut bin, &mut seen, |l| l["kind"] == "batch");
        bin.close_stdout(); // as `| head -n …` does once it has its lines
    });
    // The next write meets the closed pipe.
    for i in 0..5 {
        server.create("configmaps", cm(&format!("later-{i}"), "v"));
    }
    let out = tokio::task::block_in_place(|| bin.finish());
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stderr(&out), "");
}

/// `--until-synced` on an empty collection ends at the sync, whatever the queue, with a plain
/// list or a streaming one, with or without a handler.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_collection_ends_until_synced_with_every_queue() {
    let (_server, _dir, kubeconfig) = server_with_configmaps(0).await;
    for fifo in ["delta", "real", "atomic", "plain"] {
        for list in [&[][..], &["--watch-list"]] {
            for handler in [&[][..], &["--handler", "a"]] {
                let mut args = vec!["watch", "configmaps", "-o", "jsonl", "--until-synced"];
                args.extend_from_slice(&["--fifo", fifo]);
                args.extend_from_slice(list);
                args.extend_from_slice(handler);
                let out = run(&kubeconfig, &args).await;
                assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
                // The limit's line is the last but a handler's own sync, which may follow it
                // (only handler rows come after a limit's last line, docs/design.md), and which
                // the limit waits for: the handler synced with the informer.
                let lines = lines(&out);
                let events = events(&lines);
                let last = events.iter().rev().find(|e| **e != "handler-synced");
                assert_eq!(last, Some(&"synced"), "{args:?}: {events:?}");
                assert_eq!(
                    events.contains(&"handler-synced"),
                    !handler.is_empty(),
                    "{args:?}: {events:?}"
                );
            }
        }
    }
}
