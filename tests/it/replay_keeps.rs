//! What a replay keeps of the live session that the server's answers do not say: the watch
//! timeout and the backoff delays its Reflector drew at random are written into the recording
//! (`timeoutSeconds`, `backoff`), and a replay shows those rather than drawing its own
//! (docs/recording.md). Where the live queue coalesced otherwise than the replay's, the replay
//! says so: `bundled_recordings.rs` checks that on a real cluster's recording.

use crate::support::binary::{Running, run_offline};
use crate::support::configmaps::{cm, server_with_configmaps};
use crate::support::fake_apiserver::{Fault, FaultAction, Verb};
use crate::support::paths::path_str;

/// The Reflector's rows that carry a random draw, without their times: `backoff …` and
/// `watch opened … (timeout …)`.
fn drawn_rows(timeline: &str) -> Vec<String> {
    timeline
        .lines()
        .filter_map(|line| line.split_once("  ── ").map(|(_, row)| row))
        .filter(|row| row.starts_with("backoff ") || row.starts_with("watch opened "))
        .map(str::to_owned)
        .collect()
}

/// A session whose first list fails (500): the live Reflector backs off, lists again and
/// watches. Its replay shows the same backoff delay and watch timeout as the live timeline, and
/// the recording carries both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_shows_the_recorded_backoff_delay_and_watch_timeout() {
    let (server, dir, kubeconfig) = server_with_configmaps(1).await;
    server.inject(Fault {
        verb: Verb::List,
        resource: Some("configmaps".into()),
        ..Fault::new(FaultAction::Status(500))
    });
    let path = dir.path().join("session.jsonl");
    let mut bin = Running::spawn(&kubeconfig, &["record", "cm", "-f", path_str(&path)]);
    tokio::task::block_in_place(|| {
        bin.read_stderr_until("the watch after the backoff", |l| {
            l.contains("── watch opened")
        })
    });
    // The watch's first event is the line that carries its timeout.
    server.update("configmaps", cm("cm-0", "2"));
    tokio::task::block_in_place(|| {
        bin.read_stderr_until("the update", |l| l.contains("default/cm-0  Updated"))
    });
    let live = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(live.status.code(), Some(0), "{}", live.stderr);
    let live_rows = drawn_rows(&live.stderr);
    assert_eq!(live_rows.len(), 2, "{}", live.stderr);
    assert!(
        live_rows[0].starts_with("backoff ") && live_rows[0].contains("after a failed list"),
        "{live_rows:?}"
    );

    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\"backoff\":"), "{text}");
    assert!(text.contains("\"timeoutSeconds\":"), "{text}");

    let replayed = run_offline(&["replay", path_str(&path), "-q"], None).await;
    let stdout = String::from_utf8_lossy(&replayed.stdout);
    assert_eq!(replayed.status.code(), Some(0), "{stdout}");
    assert_eq!(drawn_rows(&stdout), live_rows, "recording:\n{text}");
}

/// A recording is untrusted input: a recorded backoff longer than any the Reflector draws
/// (client-go's 30 s step with full jitter: 60 s) is replayed as that longest delay, with a note,
/// so that no row, record or page spans a year the Reflector could never have waited.
#[tokio::test]
async fn a_recorded_backoff_beyond_the_reflectors_longest_is_replayed_as_the_longest() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("year.jsonl");
    let recording = std::fs::read_to_string("tests/recordings/tombstone-known.jsonl").unwrap();
    // The relist's LIST answers the first request after the 410's backoff.
    let year_ms = 365_u64 * 24 * 3600 * 1000;
    let tampered = recording.replacen(
        r#"{"t":60812,"type":"LIST""#,
        &format!(r#"{{"t":60812,"backoff":{year_ms},"type":"LIST""#),
        1,
    );
    assert_ne!(tampered, recording);
    std::fs::write(&path, tampered).unwrap();

    let replayed = run_offline(&["replay", path_str(&path), "-o", "jsonl"], None).await;
    let stdout = String::from_utf8_lossy(&replayed.stdout);
    let stderr = String::from_utf8_lossy(&replayed.stderr);
    assert_eq!(replayed.status.code(), Some(0), "{stderr}");
    let delays: Vec<f64> = stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["event"] == "backoff")
        .map(|r| r["delayMs"].as_f64().unwrap())
        .collect();
    assert_eq!(delays, [60_000.0], "{stdout}");
    assert!(
        stderr.contains("a recorded backoff of") && stderr.contains("taken as its longest"),
        "{stderr}"
    );
}
