//! `--verify-every` through the binary once the API server has compacted the resourceVersion
//! the cache stands at (issue #26): the checks of a quiet resource compare with a fresh list
//! instead of being skipped for ever, and a divergence is still found.

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::binary::Running;
use support::fake_apiserver::FakeApiServer;

fn cm(name: &str) -> Value {
    json!({"metadata": {"name": name, "namespace": "default"}, "data": {"k": "v"}})
}

/// The next consistency check's line (`drift` or `drift-skipped`), parsed.
fn next_check(bin: &mut Running) -> Value {
    let line = bin.read_until("a consistency check", |l| {
        l.contains(r#""event":"drift""#) || l.contains(r#""event":"drift-skipped""#)
    });
    serde_json::from_str(&line).unwrap()
}

/// The first check at etcd's resourceVersion `rv`: a check that was under way when the writes
/// before it happened reports an older one (a loaded machine can take that long). None of them
/// may be skipped.
fn check_at(bin: &mut Running, rv: &str) -> Value {
    loop {
        let check = next_check(bin);
        assert_eq!(check["event"], "drift", "not skipped: {check}");
        if check["resourceVersion"] == rv {
            return check;
        }
    }
}

/// etcd's revision moves on through another resource, then etcd compacts it: the configmaps'
/// last resourceVersion can no longer be listed exactly.
fn other_writes_then_compaction(server: &FakeApiServer, round: u32) {
    for i in 0..3 {
        server.create(
            "secrets",
            json!({"metadata": {"name": format!("s-{round}-{i}"), "namespace": "default"}}),
        );
    }
    server.compact();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_compaction_checks_of_a_quiet_resource_compare_with_a_fresh_list() {
    let server = FakeApiServer::start().await;
    for name in ["a", "b"] {
        server.create("configmaps", cm(name));
    }
    // Bookmarks move the cache's resourceVersion up to etcd's: rare enough that checks run
    // between them, as against a real server (about one a minute), and often enough that the
    // check waiting for one ends soon.
    server.set_bookmark_interval(Duration::from_secs(4));
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let args = [
        "watch",
        "cm",
        "-n",
        "default",
        "-o",
        "jsonl",
        "--object",
        "none",
        "-v",
        "--verify-every",
        "1s",
    ];
    let mut bin = Running::spawn(&kubeconfig, &args);
    tokio::task::block_in_place(|| {
        let first = next_check(&mut bin);
        assert_eq!(first["event"], "drift", "{first}");
        assert_eq!(first["consistent"], true, "{first}");

        // Right after a bookmark, so that the next checks run before another one.
        bin.read_until("a bookmark", |l| l.contains(r#""event":"bookmark""#));
        other_writes_then_compaction(&server, 1);
        let compacted = server.resource_version().to_string();
        let check = check_at(&mut bin, &compacted);
        assert_eq!(check["consistent"], true, "{check}");
        assert_eq!(check["listed"], 2, "{check}");

        // A configmap the watch never delivers: the cache diverges from the server.
        bin.read_until("a bookmark", |l| l.contains(r#""event":"bookmark""#));
        server.create_unwatched("configmaps", cm("c"));
        other_writes_then_compaction(&server, 2);
        let compacted = server.resource_version().to_string();
        let check = check_at(&mut bin, &compacted);
        assert_eq!(check["consistent"], false, "{check}");
        assert_eq!(check["missing"], json!(["default/c"]), "{check}");
        assert_eq!(check["extra"], json!([]), "{check}");
        assert_eq!(check["stale"], json!([]), "{check}");
    });
    let ended = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
}
