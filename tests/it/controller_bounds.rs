//! What bounds an instant replay's controllers, through the binary: `reconcile=` and
//! `requeue-after=` below a millisecond and `fail=` above 100 are refused (on the command line
//! and in a recording's `replayWith`); the reconciles of a long gap between two recorded lines stream out as they end,
//! at a constant memory, and SIGINT ends the replay with its summary while the workers loop; two
//! controllers' reconciles are written in time order.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::binary::{Running, json_lines, offline_command, run_offline, stderr};
use crate::support::paths::{bundled, path_str};

/// A recording of one ConfigMap listed at 0, and `gap_ms` later a change to it, with `replay_with`
/// in its header if given.
fn gap_recording(dir: &Path, gap_ms: u64, replay_with: Option<&[&str]>) -> PathBuf {
    let mut header = json!({
        "kind": "header", "v": 1,
        "resource": {"group": "", "version": "v1", "kind": "ConfigMap", "plural": "configmaps",
                     "namespaced": true},
        "namespace": "demo", "startedAt": "2026-11-24T09:00:00Z",
    });
    if let Some(flags) = replay_with {
        header["replayWith"] = json!(flags);
    }
    let object = |rv: &str| {
        json!({"metadata": {"name": "app", "namespace": "demo", "resourceVersion": rv},
               "data": {"k": rv}})
    };
    let lines = [
        header,
        json!({"t": 0, "type": "LIST", "resourceVersion": "1", "items": [object("1")]}),
        json!({"t": gap_ms, "type": "MODIFIED", "object": object("2")}),
    ];
    let path = dir.join("gap.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconcile_or_requeue_after_below_a_millisecond_is_refused() {
    let recording = bundled("controller");
    for (setting, says) in [
        (
            "c,requeue-after=1ns",
            r#"requeue-after=1ns for controller "c" is below 1ms: give 1ms or more, or 0 for no requeue"#,
        ),
        (
            "c,requeue-after=999us",
            r#"requeue-after=999us for controller "c" is below 1ms"#,
        ),
        (
            "c,reconcile=1ns",
            r#"reconcile=1ns for controller "c" is below 1ms: give 1ms or more, or 0 for a reconcile that takes no time"#,
        ),
    ] {
        let args = [
            "replay",
            path_str(&recording),
            "--controller",
            setting,
            "-q",
        ];
        let out = run_offline(&args, None).await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{setting}: {err}");
        assert!(out.stdout.is_empty(), "{setting}");
        assert!(err.contains(says), "{setting}: {err}");
    }
    // 0 is none, and 1ms the least: three keys each reconciled for 1ms and back after 1ms keep
    // the worker busy, and the end of the recording still ends the replay.
    for setting in [
        "c,requeue-after=0,reconcile=0",
        "c,requeue-after=1ms,reconcile=1ms",
    ] {
        let args = [
            "replay",
            path_str(&recording),
            "--controller",
            setting,
            "-q",
        ];
        let out = run_offline(&args, None).await;
        assert_eq!(out.status.code(), Some(0), "{setting}: {}", stderr(&out));
    }

    // A recording meant to be replayed with one is refused as its flags are.
    let dir = tempfile::tempdir().unwrap();
    let path = gap_recording(
        dir.path(),
        1000,
        Some(&["--controller", "c,requeue-after=1ns"]),
    );
    let out = run_offline(&["replay", path_str(&path), "-q"], None).await;
    let err = stderr(&out);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(out.stdout.is_empty());
    assert!(err.contains("c,requeue-after=1ns"), "{err}");
    assert!(err.contains("give your own flags to replay it"), "{err}");
    // And says why, in the words the command line gets.
    assert!(
        err.contains(r#"requeue-after=1ns for controller "c" is below 1ms"#),
        "{err}"
    );
}

/// `fail=N` is bounded: an instant replay computes every retry owed after the recording ends, so
/// a failure count from a recording's header could otherwise keep it busy for ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_count_above_a_hundred_is_refused() {
    let recording = bundled("controller");
    let out = run_offline(
        &[
            "replay",
            path_str(&recording),
            "--controller",
            "c,fail=101",
            "-q",
        ],
        None,
    )
    .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(out.stdout.is_empty());
    assert!(
        err.contains(r#"fail=101 for controller "c" is above 100"#)
            && err.contains("give 100 or fewer"),
        "{err}"
    );
    // 100 ends: each key's retries end within a day of recorded time.
    let out = run_offline(
        &[
            "replay",
            path_str(&recording),
            "--controller",
            "c,fail=100",
            "-q",
        ],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let dir = tempfile::tempdir().unwrap();
    let path = gap_recording(
        dir.path(),
        1000,
        Some(&["--controller", "c,fail=100000000"]),
    );
    let out = run_offline(&["replay", path_str(&path), "-q"], None).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(out.stdout.is_empty());
    assert!(
        err.contains(r#"fail=100000000 for controller "c" is above 100"#)
            && err.contains("give your own flags to replay it"),
        "{err}"
    );
}

/// The resident set of process `pid`, in kB.
fn resident_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Waits until `file` holds at least `bytes`.
fn wait_for_size(file: &Path, bytes: u64, what: &str) {
    // Only a guard against a hang: a debug build on a loaded machine writes about 1 MB/s here.
    let deadline = Instant::now() + 4 * crate::support::binary::PATIENCE;
    while std::fs::metadata(file).map_or(0, |m| m.len()) < bytes {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Two hours between two recorded lines and `requeue-after=1ms`: the workers have 7.2 million
/// reconciles to make before the next line. They are written as they end (the output grows while
/// the process's memory does not), and SIGINT ends the replay, with its summary, while they loop.
#[test]
fn a_replay_whose_workers_loop_streams_them_and_stops_at_sigint() {
    let dir = tempfile::tempdir().unwrap();
    let recording = gap_recording(dir.path(), 2 * 3600 * 1000, None);
    let out = dir.path().join("out.txt");
    let mut cmd = offline_command(&[
        "replay",
        path_str(&recording),
        "--controller",
        "c,requeue-after=1ms",
    ]);
    cmd.stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(Stdio::piped());
    let bin = Running::with_stdio(cmd);
    let pid = bin.id();

    // Looping: the first reconciles of the gap are out.
    wait_for_size(
        &out,
        1 << 20,
        "no reconciles written while the workers loop",
    );
    let before = resident_kb(pid);
    // About 25k reconciles more (two rows each): a reconcile kept costs over 600 bytes.
    wait_for_size(&out, 7 << 20, "the reconciles stopped coming");
    let after = resident_kb(pid);
    assert!(
        after < before + 16 * 1024,
        "the memory grew from {before} kB to {after} kB over 25k reconciles"
    );

    let signalled = Instant::now();
    bin.signal("INT");
    let ended = bin.wait();
    let took = signalled.elapsed();
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
    assert!(
        took < Duration::from_secs(1),
        "the replay took {took:?} to stop after SIGINT"
    );
    assert!(
        ended.stderr.contains("time to HasSynced"),
        "{}",
        ended.stderr
    );
    let text = std::fs::read_to_string(&out).unwrap();
    // The last reconcile row, then what the stop left undone.
    let last = text.lines().rfind(|l| !l.contains("── ended")).unwrap();
    assert!(
        last.contains("⇒ c  reconcile") || last.contains("⇐ c  returned"),
        "{last}"
    );
    assert!(text.ends_with('\n'), "a line cut short");
}

/// The text timeline's TIME column, of every row.
fn times(timeline: &str) -> Vec<&str> {
    timeline
        .lines()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect()
}

/// Two controllers whose reconciles interleave (1 s and 700 ms + 100 ms apart): their rows and
/// lines come in time order, the same bytes on every run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_controllers_reconciles_are_written_in_time_order() {
    let recording = bundled("controller");
    let controllers = [
        "--controller",
        "a,requeue-after=1s",
        "--controller",
        "b,requeue-after=700ms,reconcile=100ms",
    ];
    let replay = |output: &'static str| {
        let mut args = vec!["replay", path_str(&recording), "-q", "-o", output];
        args.extend_from_slice(&controllers);
        let args: Vec<String> = args.into_iter().map(str::to_owned).collect();
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = run_offline(&args, None).await;
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
            out.stdout
        }
    };
    let jsonl = replay("jsonl").await;
    assert_eq!(jsonl, replay("jsonl").await, "two runs differ");
    let lines = json_lines(&jsonl);
    let reconciles: Vec<(&str, &str)> = lines
        .iter()
        .filter(|l| l["kind"] == "reconcile")
        .map(|l| {
            (
                l["time"].as_str().unwrap(),
                l["controller"].as_str().unwrap(),
            )
        })
        .collect();
    let switches = reconciles.windows(2).filter(|w| w[0].1 != w[1].1).count();
    assert!(
        switches > 4,
        "the controllers do not interleave: {reconciles:?}"
    );
    for pair in reconciles.windows(2) {
        assert!(pair[0].0 <= pair[1].0, "{pair:?} in {reconciles:?}");
    }

    let timeline = String::from_utf8(replay("timeline").await).unwrap();
    let times = times(&timeline);
    for (i, pair) in times.windows(2).enumerate() {
        assert!(
            pair[0] <= pair[1],
            "row {} goes back in time:\n{timeline}",
            i + 2
        );
    }
}
