//! Narrowing what is shown: `--match`, `--types`, `--tombstones`, and on `replay` `-l`,
//! `--field-selector`, `--from` and `--to`. Each filtered replay is compared with the same replay
//! unfiltered, narrowed by the test itself: the pops shown are exactly those the filter keeps,
//! under the numbers they have without it (the informer still pops everything).

use crate::support;

use serde_json::Value;
use support::binary::{json_lines, run_offline, stderr};

const EXPIRED: &str = "expired-watch";

/// `(seq, key, delta types)` of every pop of a jsonl replay of `recording` with `flags`.
async fn pops(recording: &str, flags: &[&str]) -> Vec<(u64, String, Vec<String>, String)> {
    let path = support::paths::bundled(recording);
    let mut args = vec!["replay", path.to_str().unwrap(), "-o", "jsonl", "-q"];
    args.extend_from_slice(flags);
    let out = run_offline(&args, None).await;
    assert_eq!(out.status.code(), Some(0), "{flags:?}: {}", stderr(&out));
    json_lines(&out.stdout)
        .into_iter()
        .filter(|line| line["kind"] == "batch")
        .map(|line| {
            let types = line["deltas"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| {
                    let tombstone = if d["tombstone"] == Value::Bool(true) {
                        "(tombstone)"
                    } else {
                        ""
                    };
                    format!("{}{tombstone}", d["type"].as_str().unwrap())
                })
                .collect();
            (
                line["seq"].as_u64().unwrap(),
                line["key"].as_str().unwrap_or_default().to_owned(),
                types,
                line["time"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn match_shows_the_pops_of_matching_keys_under_their_own_numbers() {
    let all = pops(EXPIRED, &[]).await;
    let shown = pops(EXPIRED, &["--match", "demo/worker-1", "--match", "*-4"]).await;
    let expected: Vec<_> = all
        .iter()
        .filter(|(_, key, _, _)| key == "demo/worker-1" || key.ends_with("-4"))
        .cloned()
        .collect();
    assert!(expected.len() >= 3 && expected.len() < all.len(), "{all:?}");
    assert_eq!(shown, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn types_and_tombstones_keep_the_pops_carrying_them() {
    let all = pops(EXPIRED, &[]).await;
    let updated = pops(EXPIRED, &["--types", "Updated,deleted"]).await;
    let expected: Vec<_> = all
        .iter()
        .filter(|(_, _, types, _)| {
            types
                .iter()
                .any(|t| t == "Updated" || t.starts_with("Deleted"))
        })
        .cloned()
        .collect();
    assert!(!expected.is_empty() && expected.len() < all.len());
    assert_eq!(updated, expected);

    let tombstones = pops(EXPIRED, &["--tombstones"]).await;
    let expected: Vec<_> = all
        .iter()
        .filter(|(_, _, types, _)| types.iter().any(|t| t.ends_with("(tombstone)")))
        .cloned()
        .collect();
    assert_eq!(expected.len(), 1, "{all:?}");
    assert_eq!(tombstones, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_applies_selectors_to_the_recorded_objects() {
    let all = pops(EXPIRED, &[]).await;
    // worker-1 and worker-4 run on node-b, worker-2 on node-c, worker-3 on node-a.
    let on_b = |key: &str| key.ends_with("worker-1") || key.ends_with("worker-4");
    let shown = pops(EXPIRED, &["--field-selector", "spec.nodeName=node-b"]).await;
    let expected: Vec<_> = all.iter().filter(|p| on_b(&p.1)).cloned().collect();
    assert!(!expected.is_empty());
    assert_eq!(shown, expected);
    let shown = pops(EXPIRED, &["--field-selector", "spec.nodeName!=node-b"]).await;
    let expected: Vec<_> = all.iter().filter(|p| !on_b(&p.1)).cloned().collect();
    assert_eq!(shown, expected);

    assert_eq!(
        pops(EXPIRED, &["-l", "app=worker,queue in (reports)"]).await,
        all
    );
    assert!(pops(EXPIRED, &["-l", "app=worker,!queue"]).await.is_empty());
    let shown = pops(EXPIRED, &["-l", "app", "--match", "*-3"]).await;
    let expected: Vec<_> = all
        .iter()
        .filter(|p| p.1.ends_with("-3"))
        .cloned()
        .collect();
    assert_eq!(shown, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_shows_a_window_by_number_offset_or_time() {
    let all = pops(EXPIRED, &[]).await;
    assert!(all.len() >= 6, "{all:?}");
    let by_seq = pops(EXPIRED, &["--from", "#3", "--to", "#5"]).await;
    let expected: Vec<_> = all
        .iter()
        .filter(|p| (3..=5).contains(&p.0))
        .cloned()
        .collect();
    assert_eq!(by_seq, expected);

    // The recording starts at 17:31:38.091; its relist comes 3.3 s later.
    let after = pops(EXPIRED, &["--from", "+3s"]).await;
    let expected: Vec<_> = all
        .iter()
        .filter(|p| p.3.as_str() >= "2026-11-22T17:31:41.091359")
        .cloned()
        .collect();
    assert!(!expected.is_empty() && expected.len() < all.len());
    assert_eq!(after, expected);
    let until = pops(EXPIRED, &["--to", "2026-11-22T17:31:41Z"]).await;
    let expected: Vec<_> = all
        .iter()
        .filter(|p| p.3.as_str() <= "2026-11-22T17:31:41")
        .cloned()
        .collect();
    assert!(!expected.is_empty() && expected.len() < all.len());
    assert_eq!(until, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_filters_are_usage_errors() {
    let path = support::paths::bundled(EXPIRED);
    let file = path.to_str().unwrap();
    for (flags, says) in [
        (&["--types", "Removed"][..], "not a delta type"),
        (&["--from", "yesterday"], "RFC 3339"),
        (&["--to", "#x"], "pop's number"),
        (&["-l", "app=("], "--selector"),
        (&["--match", "*", "--store", "undelta"], "--store undelta"),
    ] {
        let mut args = vec!["replay", file];
        args.extend_from_slice(flags);
        let out = run_offline(&args, None).await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {err}");
        assert!(err.contains(says), "{flags:?}: {err}");
        assert!(out.stdout.is_empty(), "{flags:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_summary_counts_the_pops_popped_and_those_shown() {
    let all = pops(EXPIRED, &[]).await;
    let worker_1 = all.iter().filter(|p| p.1 == "demo/worker-1").count();
    let path = support::paths::bundled(EXPIRED);
    let out = run_offline(
        &["replay", path.to_str().unwrap(), "--match", "demo/worker-1"],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let summary = stderr(&out);
    let popped = all.len().to_string();
    let shown = worker_1.to_string();
    assert_eq!(
        support::paths::summary_row(&summary, "batches"),
        [popped.as_str()],
        "{summary}"
    );
    assert_eq!(
        support::paths::summary_row(&summary, "of which shown"),
        [shown.as_str()],
        "{summary}"
    );
    // Unfiltered, the summary has no such row.
    let out = run_offline(&["replay", path.to_str().unwrap()], None).await;
    assert!(!stderr(&out).contains("of which shown"));
}

/// `(key, time)` of every reconcile of a jsonl replay of the bundled controller recording, with
/// the controller its header names (`replayWith`, which narrowing flags keep) and `flags`.
async fn reconciles(flags: &[&str]) -> Vec<(String, String)> {
    let path = support::paths::bundled("controller");
    let mut args = vec!["replay", path.to_str().unwrap(), "-o", "jsonl", "-q"];
    args.extend_from_slice(flags);
    let out = run_offline(&args, None).await;
    assert_eq!(out.status.code(), Some(0), "{flags:?}: {}", stderr(&out));
    json_lines(&out.stdout)
        .into_iter()
        .filter(|line| line["kind"] == "reconcile")
        .map(|line| {
            (
                line["key"].as_str().unwrap().to_owned(),
                line["time"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn match_and_a_time_window_narrow_a_controllers_reconciles_too() {
    let all = reconciles(&[]).await;
    assert!(all.iter().any(|(key, _)| key == "demo/flaky"), "{all:?}");
    assert!(all.iter().any(|(key, _)| key != "demo/flaky"), "{all:?}");

    let flaky = reconciles(&["--match", "*/flaky"]).await;
    let expected: Vec<_> = all
        .iter()
        .filter(|(key, _)| key == "demo/flaky")
        .cloned()
        .collect();
    assert_eq!(flaky, expected);

    // The recording starts at 09:00:00; from +2s on.
    let late = reconciles(&["--from", "+2s"]).await;
    let expected: Vec<_> = all
        .iter()
        .filter(|(_, time)| time.as_str() >= "2026-11-24T09:00:02")
        .cloned()
        .collect();
    assert!(!expected.is_empty() && expected.len() < all.len());
    assert_eq!(late, expected);
}
