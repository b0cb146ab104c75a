//! `--controller` beyond `watch` and instant replays (issue #28): `record` shows the reconciles on
//! its stderr timeline and writes its handler flags into the recording's header (`replayWith`),
//! which `replay FILE` runs again; and a replay at `--speed X` runs the live engine (worker
//! threads, client-go's `Workqueue`) on a clock running at X times real time, so that its
//! reconciles come at the recorded times an instant replay computes.

use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::support::binary::{Running, json_lines, run_offline, stderr};
use crate::support::configmaps::{cm, server_with_configmaps};
use crate::support::paths::{hand_written, path_str, summary_row};

/// The reconciles of a timeline, each as `key rv RV result` (its times left out): the rv from
/// the `⇒ web reconcile` row where it started, the result from the `⇐ web returned` row where it
/// ended (in the order they ended).
fn reconcile_rows(timeline: &str) -> Vec<String> {
    let mut started: Vec<(String, String)> = Vec::new();
    let mut rows = Vec::new();
    for line in timeline.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(at) = words.iter().position(|w| *w == "web") else {
            continue;
        };
        match (words.get(at - 1), words.get(at + 1), words.get(at + 2)) {
            (Some(&"⇒"), Some(&"reconcile"), Some(key)) => {
                let Some(rv) = words.iter().position(|w| *w == "rv") else {
                    continue;
                };
                started.push(((*key).to_owned(), words[rv + 1].to_owned()));
            }
            (Some(&"⇐"), Some(&"returned"), Some(key)) => {
                let Some(i) = started.iter().position(|(k, _)| k == key) else {
                    continue;
                };
                let (key, rv) = started.remove(i);
                rows.push(format!("{key} rv {rv} {}", words.last().unwrap()));
            }
            _ => {}
        }
    }
    rows
}

/// `record --controller` registers the controller on the recorded informer: its reconciles are
/// rows of the stderr timeline (under its handler's rows, as `watch` shows them), its table is in
/// the summary, and the header's `replayWith` carries the flag, so that `replay FILE` alone runs
/// the same controller on the recording's clock and shows the same reconciles.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_shows_reconciles_and_its_recording_replays_them() {
    let (server, dir, kubeconfig) = server_with_configmaps(2).await;
    let path = dir.path().join("controller.jsonl");
    let mut bin = Running::spawn(
        &kubeconfig,
        &[
            "record",
            "cm",
            "-f",
            path_str(&path),
            "--controller",
            "web,reconcile=50ms",
            "--fifo",
            "real",
        ],
    );
    let mut step = |what: &str, until: &dyn Fn(&str) -> bool| {
        tokio::task::block_in_place(|| bin.read_stderr_until(what, until));
    };
    // One worker: cm-1's reconcile is the initial list's last.
    step("cm-1's first reconcile", &|l| {
        l.contains("⇒ web") && l.contains("default/cm-1")
    });
    let rv = server.update("configmaps", cm("cm-0", "2")).to_string();
    step("the reconcile of cm-0's update", &|l| {
        l.contains("⇒ web") && l.contains("default/cm-0") && l.contains(&format!("rv {rv}"))
    });
    step("its end", &|l| {
        l.contains("⇐ web") && l.contains("default/cm-0")
    });
    let live = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(live.status.code(), Some(0), "{}", live.stderr);
    let rows = reconcile_rows(&live.stderr);
    assert_eq!(rows.len(), 3, "{}", live.stderr);
    assert!(rows[0].starts_with("default/cm-0 rv "), "{rows:?}");
    assert!(rows[1].starts_with("default/cm-1 rv "), "{rows:?}");
    assert_eq!(rows[2], format!("default/cm-0 rv {rv} ok"));
    assert!(
        live.stderr.contains("→ web"),
        "the handler's rows: {}",
        live.stderr
    );
    assert_eq!(
        summary_row(&live.stderr, "reconciles"),
        ["3"],
        "{}",
        live.stderr
    );

    let recording = std::fs::read_to_string(&path).unwrap();
    let header: Value = serde_json::from_str(recording.lines().next().unwrap()).unwrap();
    assert_eq!(
        header["replayWith"],
        serde_json::json!(["--controller", "web,reconcile=50ms", "--fifo", "real"]),
        "{header}"
    );

    let replayed = run_offline(&["replay", path_str(&path)], None).await;
    assert_eq!(replayed.status.code(), Some(0), "{}", stderr(&replayed));
    assert!(
        stderr(&replayed).contains(
            "note: replaying with the recording's --controller web,reconcile=50ms --fifo real"
        ),
        "{}",
        stderr(&replayed)
    );
    let timeline = String::from_utf8(replayed.stdout).unwrap();
    assert_eq!(reconcile_rows(&timeline), rows, "recording:\n{recording}");
    assert!(
        timeline.contains("RealFIFO"),
        "the recorded queue: {timeline}"
    );
}

/// Without a handler flag, `record` writes no `replayWith` (a replay then runs as it always did),
/// even when informer flags were given; `--view reconciles` shows only the reconcile rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_writes_replay_with_only_for_handlers_and_views_only_reconciles() {
    let (_server, dir, kubeconfig) = server_with_configmaps(1).await;
    let plain = dir.path().join("plain.jsonl");
    let mut bin = Running::spawn(
        &kubeconfig,
        &["record", "cm", "-f", path_str(&plain), "--fifo", "real"],
    );
    tokio::task::block_in_place(|| bin.read_stderr_until("the sync", |l| l.contains("── synced:")));
    let live = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(live.status.code(), Some(0), "{}", live.stderr);
    let header = std::fs::read_to_string(&plain).unwrap();
    assert!(
        !header.lines().next().unwrap().contains("replayWith"),
        "{header}"
    );

    let only = dir.path().join("reconciles.jsonl");
    let mut bin = Running::spawn(
        &kubeconfig,
        &[
            "record",
            "cm",
            "-f",
            path_str(&only),
            "--controller",
            "web",
            "--view",
            "reconciles",
        ],
    );
    tokio::task::block_in_place(|| bin.read_stderr_until("the reconcile", |l| l.contains("⇒ web")));
    let live = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(live.status.code(), Some(0), "{}", live.stderr);
    assert!(!live.stderr.contains("→ web"), "{}", live.stderr);
    assert!(
        !live.stderr.contains(" #1 "),
        "no pop rows: {}",
        live.stderr
    );
    let recording = std::fs::read_to_string(&only).unwrap();
    assert!(
        recording
            .lines()
            .next()
            .unwrap()
            .contains(r#""replayWith":["--controller","web","--view","reconciles"]"#),
        "{recording}"
    );
}

/// `record`'s handler flags are checked as `watch`'s, before the cluster is contacted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_refuses_contradicting_handler_flags_before_contacting_the_cluster() {
    for (args, says) in [
        (
            &["--controller", "web", "--informer", "plain"][..],
            "--controller registers a handler on a shared informer, and --informer plain has none",
        ),
        (
            &["--view", "reconciles"],
            "--view reconciles shows what controllers' workers did: give a --controller NAME",
        ),
    ] {
        let mut all = vec!["record", "cm"];
        all.extend_from_slice(args);
        let out = run_offline(&all, None).await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// An RFC 3339 time of the output.
fn at(time: &str) -> SystemTime {
    let time: jiff::Timestamp = time.parse().unwrap();
    SystemTime::from(time)
}

/// `(key, started at in seconds since the recording's start, attempt, rv, result, adds,
/// requeued)` of each `reconcile` line.
fn reconciles(stdout: &[u8]) -> Vec<(String, f64, u64, Value, String, u64, bool)> {
    let start = at("2026-11-24T09:00:00Z");
    json_lines(stdout)
        .into_iter()
        .filter(|l| l["kind"] == "reconcile")
        .map(|r| {
            let started = at(r["startedAt"].as_str().unwrap())
                .duration_since(start)
                .unwrap();
            (
                r["key"].as_str().unwrap().to_owned(),
                started.as_secs_f64(),
                r["attempt"].as_u64().unwrap(),
                r["resourceVersion"].clone(),
                r["result"].as_str().unwrap().to_owned(),
                r["adds"].as_u64().unwrap(),
                r["requeued"].as_bool().unwrap(),
            )
        })
        .collect()
}

/// How late a reconcile of a timed replay may start, in real time, beyond the instant replay's
/// start: the hand-overs from the Reflector to the consumer, the handler and a worker thread, on
/// a loaded machine running a debug build. Times the speed, in recorded time.
const REAL_SLACK: f64 = 0.25;

/// Replays the issue's cases with `args`, instantly and at `--speed speed`: the same first
/// `compared` reconciles (key, attempt, rv read, result, adds folded, requeued), each starting no
/// earlier than the instant replay's and no more than [`REAL_SLACK`] × `speed` later, in
/// recorded time. (Later reconciles may differ where one ends at the very instant of a recorded
/// line: an instant replay ends it first, a timed one by the race of a live run.)
async fn same_reconciles_at_speed(args: &[&str], speed: u32, compared: usize) {
    let path = hand_written("controller/cases");
    let mut base = vec!["replay", path_str(&path), "-o", "jsonl", "-q"];
    base.extend_from_slice(args);
    let instant = run_offline(&base, None).await;
    assert_eq!(instant.status.code(), Some(0), "{}", stderr(&instant));
    let speed_arg = speed.to_string();
    base.extend_from_slice(&["--speed", &speed_arg]);
    let timed = run_offline(&base, None).await;
    assert_eq!(timed.status.code(), Some(0), "{}", stderr(&timed));
    let (mut instant, mut timed) = (reconciles(&instant.stdout), reconciles(&timed.stdout));
    assert!(instant.len() >= compared, "{instant:#?}");
    instant.truncate(compared);
    timed.truncate(compared);
    let shape = |all: &[(String, f64, u64, Value, String, u64, bool)]| -> Vec<String> {
        all.iter()
            .map(|(key, _, attempt, rv, result, adds, requeued)| {
                format!("{key} #{attempt} rv {rv} {result} adds {adds} requeued {requeued}")
            })
            .collect()
    };
    assert_eq!(shape(&timed), shape(&instant), "{timed:#?}");
    let tolerance = REAL_SLACK * f64::from(speed);
    for (t, i) in timed.iter().zip(&instant) {
        let late = t.1 - i.1;
        assert!(
            (-0.000_001..=tolerance).contains(&late),
            "{} started at {:.3}s, {:.3}s in the instant replay: {timed:#?}",
            t.0,
            t.1,
            i.1
        );
    }
}

/// The issue's first case at `--speed 2`: worker threads on a clock running twice as fast as real
/// time. The 1.5 s reconciles last 1.5 s of recorded time (0.75 s of real time), so the burst of
/// `a`'s updates folds into one wait and `b`'s update mid-reconcile queues it again, as in the
/// instant replay: `a`@0, `b`@1.5, `a`@3.0 (rv 5), `b`@4.5, each reconcile stamped with recorded
/// time. (At a higher speed, the machine's latency times the speed would make the 0.5 s between
/// a reconcile's end and a recorded line too short to be sure of on a loaded machine.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_speed_replay_reconciles_at_the_instant_replays_times() {
    same_reconciles_at_speed(&["--controller", "web,reconcile=1.5s"], 2, 4).await;
}

/// The issue's second case at `--speed 2`: `a` fails twice and its retries come after
/// `AddRateLimited`'s 5 and 10 ms of recorded time, behind `b`: `a`@0 error, `b`@0.1,
/// `a`@0.2 error (attempt 2), `a`@0.31 ok (attempt 3), as in the instant replay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_speed_replay_retries_a_failing_key_as_the_instant_replay() {
    same_reconciles_at_speed(
        &[
            "--controller",
            "web,reconcile=100ms,fail=2,fail-keys=default/a",
        ],
        2,
        4,
    )
    .await;
}

/// The quirk a running clock removes: between two lines, a `--speed` replay's pops carry the time
/// they happened at, not the last line's. A plain informer's 1 s handler runs inside each pop, so
/// the list's second key is popped 1 s of recorded time after the first, long before the next
/// line (at 5 s) is handed out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_speed_replay_stamps_pops_between_lines_with_the_running_clock() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("two.jsonl");
    let lines = [
        r#"{"kind":"header","v":1,"resource":{"group":"","version":"v1","kind":"ConfigMap","plural":"configmaps","namespaced":true},"namespace":"default","startedAt":"2026-11-24T09:00:00Z"}"#,
        r#"{"t":0,"type":"LIST","resourceVersion":"2","items":[{"metadata":{"name":"a","namespace":"default","resourceVersion":"1"}},{"metadata":{"name":"b","namespace":"default","resourceVersion":"2"}}]}"#,
        r#"{"t":5000,"type":"MODIFIED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default","resourceVersion":"3"}}}"#,
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let out = run_offline(
        &[
            "replay",
            path_str(&path),
            "--speed",
            "10",
            "--informer",
            "plain",
            "--handler-delay",
            "1s",
            "--object",
            "none",
            "-o",
            "jsonl",
            "-q",
        ],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let times: Vec<SystemTime> = json_lines(&out.stdout)
        .iter()
        .filter(|l| l["kind"] == "batch")
        .map(|l| at(l["time"].as_str().unwrap()))
        .collect();
    assert_eq!(times.len(), 3, "{}", String::from_utf8_lossy(&out.stdout));
    let second = times[1].duration_since(times[0]).unwrap();
    assert!(
        (Duration::from_millis(1000)..Duration::from_millis(4000)).contains(&second),
        "{second:?}"
    );
}
