//! A recording's `RESYNC` lines through `replay`, as a user runs it, against what a client-go
//! v1.28.7 shared informer's handlers receive for the same stream (`tests/recordings/resync-lines/`,
//! each `*.client-go.jsonl` made with client-go's own DeltaFIFO, `HandleDeltas` and
//! `sharedProcessor` on a fake clock).
//!
//! client-go (reflector.go v0.28.7, `ListAndWatch`, `watch`): the resync timer starts when the
//! list completes (`r.list`, then `go r.startResync`), and a watch's duration is measured from
//! `start := r.clock.Now()`, taken before the request. A `RESYNC` line between the list and the
//! watch's first line must move neither.

use crate::support;
use crate::support::paths::{bundled, path_str};

use std::path::PathBuf;

use serde_json::{Value, json};
use support::binary::{json_lines, run, run_offline};
use support::fake_apiserver::FakeApiServer;

fn resync_lines(name: &str) -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/recordings/resync-lines")
        .join(name)
}

/// Replays `recording` with `args`, showing handlers only, as JSON lines; checks the exit code.
async fn replay(recording: &std::path::Path, args: &[&str]) -> (Vec<Value>, String) {
    let mut all = vec![
        "replay",
        path_str(recording),
        "--view",
        "handlers",
        "-o",
        "jsonl",
    ];
    all.extend_from_slice(args);
    let out = run_offline(&all, None).await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    (json_lines(&out.stdout), stderr)
}

/// The calls each handler received, in client-go's fields: a sync notification that was not
/// delivered is no call.
fn calls(lines: &[Value]) -> Vec<Value> {
    lines
        .iter()
        .filter(|l| l["kind"] == "notification" && l["delivered"] == true)
        .map(|l| {
            json!({
                "handler": l["handler"],
                "type": l["type"],
                "key": l["key"],
                "oldRV": l["oldResourceVersion"].as_str().unwrap_or(""),
                "newRV": l["newResourceVersion"],
                "isSync": l["isSync"],
                "tombstone": l["tombstone"],
                "initial": l["isInInitialList"],
            })
        })
        .collect()
}

fn client_go(name: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(resync_lines(&format!("{name}.client-go.jsonl"))).unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test]
async fn a_resync_line_after_the_list_does_not_delay_the_first_resync_check() {
    // LIST at 0, RESYNC at 30 s, MODIFIED at 35 s, with --resync 10s: client-go checks at 10,
    // 20 and 30 s, timed from the list. Timed from the RESYNC line, the first check came at 40 s.
    let recording = resync_lines("after-list.jsonl");
    let (lines, _) = replay(&recording, &["--resync", "10s", "--handler", "web"]).await;
    assert_eq!(calls(&lines), client_go("after-list"));
}

#[tokio::test]
async fn a_resync_line_inside_a_long_watch_does_not_make_it_very_short() {
    // LIST at 0, RESYNC at 10 s, WATCH_CLOSED at 10.5 s, MODIFIED at 11 s: the watch was open for
    // 10.5 s, a clean close, re-watched. Timed from the RESYNC line it lasted 500 ms, "very
    // short", and the relist it caused met the MODIFIED line: exit 1.
    let recording = resync_lines("short-watch.jsonl");
    let (lines, _) = replay(&recording, &["--resync", "0", "--handler", "web"]).await;
    assert_eq!(calls(&lines), client_go("short-watch"));

    let out = run_offline(&["replay", path_str(&recording), "-o", "jsonl"], None).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let lines = json_lines(&out.stdout);
    let ended: Vec<&Value> = lines.iter().filter(|l| l["event"] == "watch-end").collect();
    assert_eq!(ended.len(), 1, "{lines:?}");
    assert_eq!(ended[0]["reason"], "closed");
    assert_eq!(ended[0]["durationMs"], 10500.0);
    let lists = lines.iter().filter(|l| l["event"] == "list-start").count();
    assert_eq!(lists, 1, "relisted: {lines:?}");
}

#[tokio::test]
async fn handlers_without_a_period_take_the_recorded_informers_and_receive_its_resyncs() {
    // docs/recordings/resync.jsonl was recorded with --resync 1s: its RESYNC lines come every
    // second. client-go resyncs only when a handler is due, and a handler added without a period
    // takes the informer's; with the informer's period left at 0, no handler would be due.
    let recording = bundled("resync");
    let (lines, stderr) = replay(&recording, &["--handler", "a", "--handler", "b"]).await;
    assert!(
        stderr.contains("the informer's resync period is 1s, read from the recording's RESYNC"),
        "{stderr}"
    );
    let resynced: u64 = std::fs::read_to_string(&recording)
        .unwrap()
        .lines()
        .filter(|l| l.contains(r#""type":"RESYNC""#))
        .count() as u64;
    assert_eq!(resynced, 3);
    // The recorded resyncs are the ticks: each RESYNC line's keys, to each handler.
    let keys: u64 = lines
        .iter()
        .filter(|l| l["event"] == "resync")
        .map(|l| l["keys"].as_u64().unwrap())
        .sum();
    for handler in ["a", "b"] {
        let syncs: Vec<&Value> = lines
            .iter()
            .filter(|l| l["kind"] == "notification" && l["handler"] == handler)
            .filter(|l| l["isSync"] == true)
            .collect();
        assert_eq!(syncs.len() as u64, keys, "{handler}: {syncs:?}");
        assert!(
            syncs.iter().all(|l| l["delivered"] == true),
            "{handler}: {syncs:?}"
        );
    }

    // `--resync 0` is the informer's period said out loud: no handler resyncs.
    let (lines, _) = replay(&recording, &["--handler", "a", "--resync", "0"]).await;
    let delivered_syncs = lines
        .iter()
        .filter(|l| l["kind"] == "notification" && l["isSync"] == true)
        .filter(|l| l["delivered"] == true)
        .count();
    assert_eq!(delivered_syncs, 0, "{lines:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_recording_made_with_resync_replays_its_resyncs_to_handlers_without_a_period() {
    let server = FakeApiServer::start().await;
    for name in ["a", "b"] {
        server.create(
            "configmaps",
            json!({"metadata": {"name": name, "namespace": "default"}, "data": {"k": "v"}}),
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let file = dir.path().join("session.jsonl");
    let args = [
        "record",
        "cm",
        "--resync",
        "1s",
        "--duration",
        "3500ms",
        "-f",
        path_str(&file),
    ];
    let live = run(&kubeconfig, &args).await;
    assert_eq!(
        live.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&live.stderr)
    );

    let (lines, stderr) = replay(&file, &["--handler", "web"]).await;
    assert!(stderr.contains("resync period is 1s"), "{stderr}");
    let keys: u64 = lines
        .iter()
        .filter(|l| l["event"] == "resync")
        .map(|l| l["keys"].as_u64().unwrap())
        .sum();
    assert!(keys >= 2, "{lines:?}");
    let syncs: Vec<&Value> = lines
        .iter()
        .filter(|l| l["kind"] == "notification" && l["isSync"] == true)
        .collect();
    assert_eq!(syncs.len() as u64, keys, "{syncs:?}");
    assert!(syncs.iter().all(|l| l["delivered"] == true), "{syncs:?}");
}
