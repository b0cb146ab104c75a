//! `--fifo plain`: client-go's plain FIFO between the Reflector and the Indexer, through the
//! binary. Every bundled recording replays through it; the hand-written ones where it differs
//! from the DeltaFIFO are compared with `tests/golden/replay_plain_<name>.timeline.txt`
//! (`UPDATE_GOLDEN=1` rewrites them).
//!
//! The contrast of issue #19: a key added and deleted while queued is a batch
//! (`Added Deleted`) through the DeltaFIFO, and nothing at all through the FIFO, whose summary
//! counts it as dropped before a pop.

use crate::support;
use crate::support::paths::hand_written;

use std::path::{Path, PathBuf};

use support::binary::{run_offline, stderr};
use support::golden::golden;

fn all_recordings() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    for dir in ["docs/recordings", "tests/recordings"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                paths.push(path);
            }
        }
    }
    paths.sort();
    paths
}

/// Replays `path` with `args`; returns stdout and stderr, after checking the exit code is 0.
async fn replay(path: &Path, args: &[&str]) -> (String, String) {
    let mut all = vec!["replay", path.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = run_offline(&all, None).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{}: {err}", path.display());
    (String::from_utf8(out.stdout).unwrap(), err)
}

fn summary_row<'a>(summary: &'a str, label: &str) -> Option<&'a str> {
    summary.lines().find(|l| l.contains(label))
}

#[tokio::test]
async fn every_bundled_recording_replays_through_the_plain_fifo() {
    let paths = all_recordings();
    assert!(paths.len() >= 10, "{paths:?}");
    for path in paths {
        let (timeline, _) = replay(&path, &["--fifo", "plain", "-q"]).await;
        assert!(
            timeline.contains("queue: FIFO, no delta types, one key per pop"),
            "{}: {timeline}",
            path.display()
        );
        // No pop of a FIFO carries a delta type.
        for delta_type in ["Added", "Updated", "Deleted", "Replaced", "Sync "] {
            assert!(
                !timeline
                    .lines()
                    .any(|l| l.contains(&format!("  {delta_type}"))),
                "{}: {delta_type} in {timeline}",
                path.display()
            );
        }
        let (jsonl, _) = replay(&path, &["--fifo", "plain", "-q", "-o", "jsonl"]).await;
        assert!(jsonl.contains(r#""queue":"plain""#), "{}", path.display());
    }
}

#[tokio::test]
async fn recordings_where_the_fifo_differs_replay_to_their_goldens() {
    for name in ["tombstone-queued", "coalescing", "deletion-dedup"] {
        let (timeline, _) = replay(&hand_written(name), &["--fifo", "plain", "-q"]).await;
        golden(&format!("replay_plain_{name}.timeline.txt"), &timeline);
    }
}

#[tokio::test]
async fn a_deletion_while_queued_shows_in_the_delta_fifo_and_is_dropped_by_the_fifo() {
    let path = hand_written("tombstone-queued");

    let (timeline, summary) = replay(&path, &["--fifo", "delta"]).await;
    let rows: Vec<&str> = timeline
        .lines()
        .filter(|l| l.contains("default/d"))
        .collect();
    assert_eq!(rows.len(), 1, "{timeline}");
    assert!(rows[0].contains("Added Deleted(tombstone)"), "{timeline}");
    assert!(
        summary_row(&summary, "dropped before a pop").is_none(),
        "{summary}"
    );

    let (timeline, summary) = replay(&path, &["--fifo", "plain"]).await;
    assert!(!timeline.contains("default/d"), "{timeline}");
    let dropped = summary_row(&summary, "dropped before a pop")
        .unwrap_or_else(|| panic!("no dropped row in {summary}"));
    let cells: Vec<&str> = dropped
        .split('┆')
        .map(|c| c.trim_matches(|c: char| c == '│' || c.is_whitespace()))
        .collect();
    assert_eq!(cells, ["dropped before a pop", "1"], "{summary}");
}

#[tokio::test]
async fn batch_pop_with_the_plain_fifo_is_a_usage_error() {
    let path = hand_written("coalescing");
    let out = run_offline(
        &[
            "replay",
            path.to_str().unwrap(),
            "--fifo",
            "plain",
            "--batch-pop",
            "3",
        ],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--batch-pop 3 needs --fifo real"), "{err}");
}

#[tokio::test]
async fn an_empty_first_list_syncs_the_plain_fifo_at_once() {
    let header = r#"{"kind":"header","v":1,"resource":{"group":"","version":"v1","kind":"ConfigMap","plural":"configmaps","namespaced":true},"namespace":"default","startedAt":"2026-01-05T10:00:00Z"}"#;
    let list = r#"{"t":0,"type":"LIST","resourceVersion":"1","items":[]}"#;
    let added = r#"{"t":10,"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"default","resourceVersion":"2"}}}"#;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.jsonl");
    std::fs::write(&path, [header, list, added].join("\n") + "\n").unwrap();
    let (timeline, _) = replay(&path, &["--fifo", "plain", "-q"]).await;
    let synced = timeline
        .lines()
        .position(|l| l.contains("synced: HasSynced after 0 batches"))
        .unwrap_or_else(|| panic!("never synced: {timeline}"));
    let added = timeline
        .lines()
        .position(|l| l.contains("default/a"))
        .unwrap_or_else(|| panic!("no batch: {timeline}"));
    assert!(synced < added, "{timeline}");
}
