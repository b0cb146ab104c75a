//! The recordings bundled in `docs/recordings/`: golden tests of their replay, and how they are
//! made.
//!
//! Each recording is replayed with `-o jsonl --object meta` and as a timeline (no colours, UTC),
//! and compared with `tests/golden/replay_<name>.{jsonl,timeline}.txt`; an instant replay is
//! deterministic, so nothing is normalised. Each test also checks that the recording still shows
//! what `docs/recordings/README.md` says it shows.
//!
//! They are made by `tests/tools/generate_recordings.rs`; see `docs/recordings/README.md`.

use crate::support;

use std::path::PathBuf;

use support::binary::run_offline;
use support::golden::golden;

fn recording(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("docs/recordings")
        .join(format!("{name}.jsonl"))
}

/// Replays a bundled recording with `args`; returns stdout.
async fn replay(name: &str, args: &[&str]) -> String {
    let path = recording(name);
    let mut all = vec!["replay", path.to_str().unwrap(), "-q"];
    all.extend_from_slice(args);
    let out = run_offline(&all, None).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "replay {name}: {stderr}");
    assert!(
        stderr.is_empty(),
        "replay {name} -q wrote on stderr: {stderr}"
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Replays `name` in both formats and compares them with the goldens; returns the timeline and
/// the JSON lines.
async fn replay_matches_goldens(name: &str) -> (String, String) {
    let jsonl = replay(name, &["-o", "jsonl", "--object", "meta"]).await;
    golden(&format!("replay_{name}.jsonl.txt"), &jsonl);
    let timeline = replay(name, &[]).await;
    golden(&format!("replay_{name}.timeline.txt"), &timeline);
    (timeline, jsonl)
}

fn rows_with<'a>(timeline: &'a str, needle: &str) -> Vec<&'a str> {
    timeline.lines().filter(|l| l.contains(needle)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rollout_pods_replay_to_their_goldens() {
    let (timeline, jsonl) = replay_matches_goldens("rollout-pods").await;
    // Three old pods listed, three new ones added, three old ones terminating, then gone.
    assert_eq!(rows_with(&timeline, " initial").len(), 3, "{timeline}");
    assert_eq!(rows_with(&timeline, "Added").len(), 3, "{timeline}");
    assert_eq!(rows_with(&timeline, "Deleted").len(), 3, "{timeline}");
    assert_eq!(rows_with(&jsonl, "deletionTimestamp").len(), 6, "{jsonl}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rollout_replicasets_replay_to_their_goldens() {
    let (timeline, _) = replay_matches_goldens("rollout-replicasets").await;
    assert!(timeline.contains("Added"), "the new ReplicaSet: {timeline}");
    assert!(timeline.contains("spec.replicas"), "scaling: {timeline}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rollout_deployment_replays_to_its_goldens() {
    let (timeline, _) = replay_matches_goldens("rollout-deployments").await;
    assert!(timeline.contains("containers[web].image"), "{timeline}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_expired_watch_replays_to_its_goldens() {
    let (timeline, _) = replay_matches_goldens("expired-watch").await;
    assert!(timeline.contains("410 → relist"), "{timeline}");
    let tombstones = rows_with(&timeline, "Deleted(tombstone)");
    assert_eq!(tombstones.len(), 1, "{timeline}");
    assert!(tombstones[0].contains("demo/worker-2"), "{timeline}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_resync_period_replays_to_its_goldens() {
    let (timeline, _) = replay_matches_goldens("resync").await;
    let ticks = rows_with(&timeline, "── resync tick");
    assert!(ticks.len() >= 2, "{timeline}");
    // Each tick's row comes before the Sync batches it queued.
    let first_tick = timeline.find("── resync tick").unwrap();
    let first_sync = timeline.find("  Sync  ").unwrap();
    assert!(first_tick < first_sync, "{timeline}");
}
