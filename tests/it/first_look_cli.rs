//! What a first look shows (issue #31 and #26): a named handler seen, `watch --duration` ending as
//! Ctrl-C does, the summary's counts agreeing with the rows, and `index` tables without a column
//! twice. Each through the binary, on a bundled recording or the fake API server.

use crate::support;

use serde_json::{Value, json};
use support::binary::{json_lines, run, run_offline, stderr};
use support::fake_apiserver::FakeApiServer;
use support::paths::{bundled, path_str, summary_row};

async fn replay(name: &str, args: &[&str]) -> std::process::Output {
    let path = bundled(name);
    let mut all = vec!["replay", path_str(&path)];
    all.extend_from_slice(args);
    let out = run_offline(&all, None).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_named_handler_is_shown_without_view() {
    // `--handler ctrl` alone is a request to see what ctrl receives: `--view both` by default.
    let out = replay("resync", &["-q", "-o", "jsonl", "--handler", "ctrl"]).await;
    let lines = json_lines(&out.stdout);
    let notifications: Vec<&Value> = lines
        .iter()
        .filter(|l| l["kind"] == "notification")
        .collect();
    assert!(!notifications.is_empty(), "no notification line");
    assert!(notifications.iter().all(|n| n["handler"] == "ctrl"));
    assert!(lines.iter().any(|l| l["kind"] == "batch"), "pops shown too");

    // Pops only is still there for the asking.
    let out = replay(
        "resync",
        &["-q", "-o", "jsonl", "--handler", "ctrl", "--view", "pops"],
    )
    .await;
    assert!(
        json_lines(&out.stdout)
            .iter()
            .all(|l| l["kind"] != "notification")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_duration_ends_like_ctrl_c_with_the_summary_and_exit_0() {
    let server = FakeApiServer::start().await;
    server.create(
        "configmaps",
        json!({"metadata": {"name": "a", "namespace": "default"}}),
    );
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let started = std::time::Instant::now();
    let out = run(
        &kubeconfig,
        &["watch", "cm", "-o", "jsonl", "--duration", "1500ms"],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(started.elapsed() >= std::time::Duration::from_millis(1500));
    let lines = json_lines(&out.stdout);
    assert!(
        lines
            .iter()
            .any(|l| l["kind"] == "batch" && l["key"] == "default/a")
    );
    // The summary, as after Ctrl-C.
    assert_eq!(summary_row(&stderr(&out), "batches"), ["1"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_summary_counts_tombstones_under_deleted() {
    let out = replay("expired-watch", &[]).await;
    let summary = stderr(&out);
    let labels: Vec<&str> = summary
        .lines()
        .filter_map(|l| l.split(['│', '┆']).nth(1).map(str::trim))
        .collect();
    let deleted = labels.iter().position(|l| *l == "Deleted").unwrap();
    assert_eq!(labels[deleted + 1], "of which tombstones", "{summary}");
    assert_eq!(summary_row(&summary, "of which tombstones"), ["1"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_max_buffer_depth_is_the_largest_a_row_shows() {
    let out = replay(
        "slow-handler",
        &[
            "-o",
            "jsonl",
            "--resync",
            "30s",
            "--handler",
            "slow,delay=2s,resync=0",
            "--handler",
            "periodic",
        ],
    )
    .await;
    let lines = json_lines(&out.stdout);
    let largest = |handler: &str| {
        lines
            .iter()
            .filter(|l| l["kind"] == "notification" && l["handler"] == handler)
            .filter_map(|l| l["bufferDepth"].as_u64())
            .max()
            .unwrap()
            .to_string()
    };
    let (slow, periodic) = (largest("slow"), largest("periodic"));
    assert_ne!(slow, "0", "slow's buffer grows");
    assert_eq!(
        summary_row(&stderr(&out), "max buffer depth"),
        [slow.as_str(), periodic.as_str()]
    );
}

/// The header row of `index --replay rollout-pods.jsonl ARGS`.
async fn index_header(args: &[&str]) -> Vec<String> {
    let path = bundled("rollout-pods");
    let mut all = vec!["index", "--replay", path_str(&path)];
    all.extend_from_slice(args);
    let out = run_offline(&all, None).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_tables_show_no_column_twice() {
    assert_eq!(
        index_header(&["--by", "namespace", "--value", "demo"]).await,
        ["NAME", "RESOURCEVERSION", "AGE", "NAMESPACE"]
    );
    assert_eq!(
        index_header(&[
            "--by",
            "owner",
            "--value",
            "ReplicaSet/web-5d79b66554",
            "-o",
            "wide"
        ])
        .await,
        [
            "NAMESPACE",
            "NAME",
            "RESOURCEVERSION",
            "AGE",
            "UID",
            "OWNER"
        ]
    );
    // Other indices keep both: the namespace first, the owners when wide.
    assert_eq!(
        index_header(&["--by", "label:app", "--value", "web", "-o", "wide"]).await,
        [
            "NAMESPACE",
            "NAME",
            "RESOURCEVERSION",
            "AGE",
            "UID",
            "OWNERS",
            "LABEL:APP"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_watch_and_its_expired_list_are_one_relist() {
    // expired-watch.jsonl: the watch answers 410, so does the list at its resourceVersion; client-go
    // logs one relist, and retries the list from "" at once.
    let out = replay("expired-watch", &["-o", "jsonl", "--object", "none"]).await;
    let lines = json_lines(&out.stdout);
    let events: Vec<(&str, &str)> = lines
        .iter()
        .filter(|l| l["event"] == "relist" || l["event"] == "list-retry")
        .map(|l| (l["event"].as_str().unwrap(), l["cause"].as_str().unwrap()))
        .collect();
    assert_eq!(
        events,
        [("relist", "watch-expired"), ("list-retry", "list-expired")]
    );
    let summary = stderr(&out);
    assert_eq!(summary_row(&summary, "relists"), ["1"]);
    assert_eq!(summary_row(&summary, "list retries"), ["1"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_is_replayed_with_the_flags_its_header_names_unless_given_others() {
    // slow-handler.jsonl's header: "replayWith": --resync 30s --handler slow,… --handler periodic.
    let out = replay("slow-handler", &["-o", "jsonl", "--object", "none"]).await;
    let handlers: std::collections::BTreeSet<String> = json_lines(&out.stdout)
        .iter()
        .filter(|l| l["kind"] == "notification")
        .map(|l| l["handler"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(handlers, ["periodic".to_owned(), "slow".to_owned()].into());
    let stderr = stderr(&out);
    assert!(
        stderr.lines().next().unwrap_or_default().starts_with(
            "kubectl-deltas: note: replaying with the recording's --resync 30s --handler \
             slow,delay=2s,resync=0 --handler periodic; give your own to override"
        ),
        "{stderr}"
    );

    // A flag that changes the informer replaces them all, and a note says which were dropped.
    let out = replay("slow-handler", &["-o", "jsonl", "--handler", "mine"]).await;
    let lines = json_lines(&out.stdout);
    assert!(
        lines
            .iter()
            .filter(|l| l["kind"] == "notification")
            .all(|l| l["handler"] == "mine")
    );
    let stderr = support::binary::stderr(&out);
    assert!(
        stderr.contains(
            "kubectl-deltas: note: not replaying with the recording's --resync 30s --handler \
             slow,delay=2s,resync=0 --handler periodic: --handler changes the informer"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("note: replaying with"), "{stderr}");
}

/// The progress line a user sees on a terminal (stderr is a pseudo-terminal under util-linux's
/// `script`; stdout is discarded): before the first list it says what it waits for, without a
/// count of nothing, and worded for a recording as for a cluster; the footer is never drawn in
/// the list's "{msg}: {pos}" layout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_progress_line_on_a_terminal_waits_for_the_first_list_then_shows_the_footer() {
    let recording = bundled("resync");
    let shell = format!(
        "'{}' replay '{}' >/dev/null",
        support::binary::program().display(),
        path_str(&recording)
    );
    let mut cmd = std::process::Command::new("script");
    cmd.args(["-q", "-e", "-c", &shell, "/dev/null"])
        .env_remove("KUBECONFIG")
        .env("KUBECACHEDIR", support::binary::NO_CACHE_DIR)
        .env("NO_COLOR", "1")
        .env("TERM", "xterm")
        .env("COLUMNS", "200");
    let out = support::binary::output(cmd).await;
    let transcript = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{transcript}");
    assert!(
        transcript.contains("waiting for the first list"),
        "{transcript}"
    );
    assert!(!transcript.contains("connecting"), "{transcript}");
    // Every frame is cleared and redrawn after a carriage return: split the transcript into them.
    let frames = transcript.split(['\r', '\n']);
    let footers: Vec<&str> = frames.filter(|f| f.contains("coalesced")).collect();
    assert!(!footers.is_empty(), "no footer drawn: {transcript}");
    for footer in footers {
        assert!(
            !footer.trim_end().ends_with(": 0"),
            "the footer in the list's layout: {footer:?}"
        );
    }
}
