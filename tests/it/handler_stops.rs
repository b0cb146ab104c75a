//! The handler view at every stop (issue #25 §5), live against the fake API server and in a
//! replay: a stop abandons what the handlers' buffers hold (counted, never shown as calls), a
//! limit (`--max-batches`, `--until-synced`) ends the session once each handler has begun every
//! call of the pops shown or is taking its delay, and a batch is stamped when it is popped.
//!
//! client-go (shared_informer.go v0.28.7, `sharedProcessor.run`): when the informer stops, each
//! listener's `addCh` is closed and `pop` returns without handing over what its buffer holds; the
//! call in progress (`run`) runs to its end.

use crate::support;
use crate::support::configmaps::server_with_configmaps;
use crate::support::paths::{path_str, summary_row};

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use support::binary::{Running, json_lines, offline_command, run, run_offline};

/// A recording of one LIST of `n` ConfigMaps, then, a minute later, one update of each.
fn recording(dir: &Path, n: usize) -> PathBuf {
    let header = json!({"kind": "header", "v": 1, "resource": {"group": "", "version": "v1",
        "kind": "ConfigMap", "plural": "configmaps", "namespaced": true},
        "namespace": "default", "startedAt": "2026-01-05T10:00:00Z"});
    let item = |i: usize, rv: usize| {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("cm-{i}"),
            "namespace": "default", "resourceVersion": rv.to_string()}, "data": {"k": "v"}})
    };
    let items: Vec<Value> = (0..n).map(|i| item(i, i + 1)).collect();
    let mut lines = vec![
        header,
        json!({"t": 0, "type": "LIST", "resourceVersion": n.to_string(), "items": items}),
    ];
    for i in 0..n {
        lines.push(json!({"t": 60_000, "type": "MODIFIED", "object": item(i, n + 1 + i)}));
    }
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    let path = dir.join("three.jsonl");
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    path
}

fn notifications<'a>(lines: &'a [Value], handler: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|l| l["kind"] == "notification" && l["handler"] == handler)
        .collect()
}

fn handler_synced(lines: &[Value], handler: &str) -> bool {
    lines
        .iter()
        .any(|l| l["event"] == "handler-synced" && l["handler"] == handler)
}

/// A row of the summary's handler table, by its label.
fn handler_row<'a>(stderr: &'a str, label: &str) -> Vec<&'a str> {
    let table = stderr
        .find("│ handler")
        .unwrap_or_else(|| panic!("no handler table: {stderr}"));
    summary_row(&stderr[table..], label)
}

fn time(line: &Value) -> SystemTime {
    let text = line["time"].as_str().unwrap();
    SystemTime::from(text.parse::<jiff::Timestamp>().unwrap())
}

/// What a stop with a 1h handler's backlog shows: its call in progress, its backlog abandoned,
/// no sync; the quick handler got everything.
fn assert_backlog_abandoned(lines: &[Value], stderr: &str, slow_calls: usize, abandoned: &str) {
    let slow = notifications(lines, "a");
    assert_eq!(slow.len(), slow_calls, "{slow:?}");
    assert!(!handler_synced(lines, "a"), "{lines:?}");
    assert_eq!(
        handler_row(stderr, "abandoned at the stop")[0],
        abandoned,
        "{stderr}"
    );
    assert_eq!(
        handler_row(stderr, "time to HasSynced")[0],
        "not synced",
        "{stderr}"
    );
}

// ---------------------------------------------------------------------------------------------
// A stop with a slow handler's backlog

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_a_stop_abandons_a_slow_handlers_backlog_and_shows_none_of_it_as_calls() {
    // Before: the stop woke the 1h call, and the listener then made each buffered call, every
    // delay cut at once: written as calls (waitMs ≈ the time to the stop), then `handler-synced`.
    let (_server, _dir, kubeconfig) = server_with_configmaps(3).await;
    let args = [
        "watch",
        "cm",
        "-n",
        "default",
        "--handler",
        "a,delay=1h",
        "--handler",
        "b",
        "--view",
        "both",
        "-o",
        "jsonl",
    ];
    let mut bin = Running::spawn(&kubeconfig, &args);
    tokio::task::block_in_place(|| {
        bin.read_until("b's sync", |l| {
            l.contains(r#""event":"handler-synced""#) && l.contains(r#""handler":"b""#)
        });
        bin.seen_or_read_until("a's first call", |l| {
            l.contains(r#""kind":"notification""#) && l.contains(r#""handler":"a""#)
        });
    });
    let ended = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
    let lines = json_lines(ended.stdout.as_bytes());
    assert_eq!(notifications(&lines, "b").len(), 3, "{lines:?}");
    assert!(handler_synced(&lines, "b"));
    assert_backlog_abandoned(&lines, &ended.stderr, 1, "2");
}

#[test]
fn replay_a_stop_abandons_a_slow_handlers_backlog_and_shows_none_of_it_as_calls() {
    // At --speed the handlers run on their threads, as live; the stop comes while the 1h handler
    // is in its first call, with the two other initial adds and three updates buffered.
    let dir = tempfile::tempdir().unwrap();
    let path = recording(dir.path(), 3);
    let mut bin = Running::start(offline_command(&[
        "replay",
        path_str(&path),
        "--speed",
        "1000",
        "--handler",
        "a,delay=1h",
        "--handler",
        "b",
        "--view",
        "both",
        "-o",
        "jsonl",
    ]));
    bin.read_until("b's last update", |l| {
        l.contains(r#""handler":"b""#)
            && l.contains(r#""key":"default/cm-2""#)
            && l.contains(r#""type":"update""#)
    });
    let ended = bin.interrupt();
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
    let lines = json_lines(ended.stdout.as_bytes());
    assert_eq!(notifications(&lines, "b").len(), 6, "{lines:?}");
    assert_backlog_abandoned(&lines, &ended.stderr, 1, "5");
}

// ---------------------------------------------------------------------------------------------
// --until-synced with a 1h handler

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_until_synced_with_a_1h_handler_shows_its_first_add_in_progress_and_two_abandoned() {
    let (_server, _dir, kubeconfig) = server_with_configmaps(3).await;
    let out = run(
        &kubeconfig,
        &[
            "watch",
            "cm",
            "-n",
            "default",
            "--until-synced",
            "--handler",
            "a,delay=1h",
            "--view",
            "both",
            "-o",
            "jsonl",
        ],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let lines = json_lines(&out.stdout);
    assert_backlog_abandoned(&lines, &stderr, 1, "2");
    assert_eq!(handler_row(&stderr, "OnAdd")[0], "1", "{stderr}");
}

#[tokio::test]
async fn replay_until_synced_with_a_1h_handler_shows_its_first_add_in_progress_and_two_abandoned() {
    let dir = tempfile::tempdir().unwrap();
    let path = recording(dir.path(), 3);
    let args = [
        "replay",
        path_str(&path),
        "--until-synced",
        "--handler",
        "a,delay=1h",
        "--view",
        "both",
        "-o",
        "jsonl",
    ];
    let out = run_offline(&args, None).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let lines = json_lines(&out.stdout);
    assert_backlog_abandoned(&lines, &stderr, 1, "2");
    assert_eq!(handler_row(&stderr, "OnAdd")[0], "1", "{stderr}");
}

// ---------------------------------------------------------------------------------------------
// A limit with --view handlers: the calls of every pop shown, nothing after

/// The rows of `--max-batches 2 --view handlers` and `--until-synced --view handlers` over three
/// objects, for a quick default handler: the calls of the pops shown, and for the sync its row.
fn assert_limit_rows(max_batches: &[Value], until_synced: &[Value]) {
    let calls = notifications(max_batches, "handler");
    let seqs: Vec<u64> = calls.iter().map(|l| l["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, [1, 2], "{max_batches:?}");
    assert!(
        !max_batches.iter().any(|l| l["kind"] == "batch"),
        "{max_batches:?}"
    );

    let calls = notifications(until_synced, "handler");
    let seqs: Vec<u64> = calls.iter().map(|l| l["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, [1, 2, 3], "{until_synced:?}");
    assert!(handler_synced(until_synced, "handler"), "{until_synced:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_a_limit_with_the_handler_view_shows_the_calls_of_every_pop_shown() {
    let (_server, _dir, kubeconfig) = server_with_configmaps(3).await;
    let base = [
        "watch", "cm", "-n", "default", "--view", "handlers", "-o", "jsonl",
    ];
    let with = |extra: &[&'static str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        args
    };
    let max = run(&kubeconfig, &with(&["--max-batches", "2"])).await;
    assert_eq!(max.status.code(), Some(0));
    let synced = run(&kubeconfig, &with(&["--until-synced"])).await;
    assert_eq!(synced.status.code(), Some(0));
    assert_limit_rows(&json_lines(&max.stdout), &json_lines(&synced.stdout));
}

#[tokio::test]
async fn replay_a_limit_with_the_handler_view_shows_the_calls_of_every_pop_shown() {
    // Before: an instant replay wrote the limit's pop, closed the output, then made its calls.
    let dir = tempfile::tempdir().unwrap();
    let path = recording(dir.path(), 3);
    let base = [
        "replay",
        path_str(&path),
        "--view",
        "handlers",
        "-o",
        "jsonl",
    ];
    let with = |extra: &[&'static str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        args
    };
    let max = run_offline(&with(&["--max-batches", "2"]), None).await;
    assert_eq!(max.status.code(), Some(0));
    let synced = run_offline(&with(&["--until-synced"]), None).await;
    assert_eq!(synced.status.code(), Some(0));
    assert_limit_rows(&json_lines(&max.stdout), &json_lines(&synced.stdout));
}

// ---------------------------------------------------------------------------------------------
// A batch is stamped when it is popped

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_a_plain_informers_batch_is_stamped_when_popped_not_after_its_handler() {
    // The plain informer's handler runs inside the pop, 1 s per delta: batch #1 was stamped when
    // the handler returned, 1 s after the list.
    let (_server, _dir, kubeconfig) = server_with_configmaps(2).await;
    let out = run(
        &kubeconfig,
        &[
            "watch",
            "cm",
            "-n",
            "default",
            "--informer",
            "plain",
            "--handler-delay",
            "1s",
            "--max-batches",
            "2",
            "--object",
            "none",
            "-o",
            "jsonl",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0));
    let lines = json_lines(&out.stdout);
    let listed = lines.iter().find(|l| l["event"] == "list-done").unwrap();
    let batches: Vec<&Value> = lines.iter().filter(|l| l["kind"] == "batch").collect();
    assert_eq!(batches.len(), 2, "{lines:?}");
    let first = time(batches[0]).duration_since(time(listed)).unwrap();
    assert!(first < Duration::from_millis(500), "{first:?}: {lines:?}");
    // The second pop waited for the first one's handler.
    let second = time(batches[1]).duration_since(time(batches[0])).unwrap();
    assert!(
        second >= Duration::from_millis(900),
        "{second:?}: {lines:?}"
    );
}

#[test]
fn replay_no_handler_call_begins_before_its_pop() {
    // On the recording's clock a pop is stamped with the recorded time it happened at, and a
    // handler's call (an instant replay calls them inline, each lasting its delay of recorded
    // time) begins at or after its own pop. (A plain informer's delay takes no recorded time in
    // an instant replay: docs/recording.md.)
    let dir = tempfile::tempdir().unwrap();
    let path = recording(dir.path(), 3);
    let shared = offline_command(&[
        "replay",
        path_str(&path),
        "--handler",
        "a,delay=300ms",
        "--handler",
        "b",
        "--view",
        "both",
        "--object",
        "none",
        "-o",
        "jsonl",
    ])
    .output()
    .unwrap();
    assert_eq!(shared.status.code(), Some(0));
    let lines = json_lines(&shared.stdout);
    let popped: std::collections::HashMap<u64, SystemTime> = lines
        .iter()
        .filter(|l| l["kind"] == "batch")
        .map(|l| (l["seq"].as_u64().unwrap(), time(l)))
        .collect();
    let calls: Vec<&Value> = lines
        .iter()
        .filter(|l| l["kind"] == "notification")
        .collect();
    assert_eq!(calls.len(), 12, "{lines:?}");
    for call in calls {
        let pop = popped[&call["seq"].as_u64().unwrap()];
        assert!(time(call) >= pop, "{call} before its pop at {pop:?}");
    }
}
