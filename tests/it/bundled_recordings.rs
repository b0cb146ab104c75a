//! The recordings bundled in `docs/recordings/`: golden tests of their replay, and how they are
//! made.
//!
//! Each recording is replayed with `-o jsonl --object meta` and as a timeline (no colours, UTC),
//! and compared with `tests/golden/replay_<name>.{jsonl,timeline}.txt`; an instant replay is
//! deterministic, so nothing is normalised. Each test also checks that the recording still shows
//! what `docs/recordings/README.md` says it shows.
//!
//! The rollout recordings are real sessions (`tests/tools/record-real-cluster.sh`: a real
//! kube-apiserver, controller-manager, scheduler and kubelets); the others are made by
//! `tests/tools/generate_recordings.rs` or written by hand; see `docs/recordings/README.md`.

use crate::support;
use crate::support::paths::bundled;

use support::binary::run_offline;
use support::golden::golden;

/// Replays a bundled recording with `args`; returns stdout.
async fn replay(name: &str, args: &[&str]) -> String {
    let path = bundled(name);
    let mut all = vec!["replay", path.to_str().unwrap(), "-q"];
    all.extend_from_slice(args);
    let out = run_offline(&all, None).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "replay {name}: {stderr}");
    // With a resync period, a replay computes its resyncs and says so, even with -q.
    let computed_resyncs = "kubectl-deltas: note: resyncs are timed from --resync";
    assert!(
        stderr.lines().all(|l| l.starts_with(computed_resyncs)),
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
    let (timeline, _) = replay_matches_goldens("rollout-pods").await;
    // Nothing listed; 3 pods created, 3 new ones rolled out as the 3 old ones go, 2 more for the
    // scale to 5, 3 gone for the scale to 2.
    assert_eq!(rows_with(&timeline, " initial").len(), 0, "{timeline}");
    assert_eq!(rows_with(&timeline, "Added").len(), 8, "{timeline}");
    assert_eq!(rows_with(&timeline, "Deleted").len(), 6, "{timeline}");
    // Each deleted pod was first marked for deletion, with its grace period, by its ReplicaSet.
    let marked = rows_with(&timeline, "metadata.deletionTimestamp +");
    assert_eq!(marked.len(), 6, "{timeline}");
    assert!(
        marked
            .iter()
            .all(|row| row.contains("metadata.deletionGracePeriodSeconds +30")),
        "{timeline}"
    );
    // The live consumer popped the first pod's Added and its scheduling together (its
    // recording's `coalesced` says so), the instant replay pops them apart: without -q, the
    // replay says where its pops part from the recorded ones.
    let path = bundled("rollout-pods");
    let out = run_offline(&["replay", path.to_str().unwrap()], None).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let differ: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("its pops differ from the recorded session's"))
        .collect();
    assert_eq!(differ.len(), 1, "{stderr}");
    assert!(
        differ[0].starts_with("kubectl-deltas: note: ")
            && differ[0].contains(
                "rollout-pods.jsonl:5: the recorded queue had coalesced 1 delta before this \
                 line, this replay's 0 deltas"
            ),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rollout_replicasets_replay_to_their_goldens() {
    let (timeline, _) = replay_matches_goldens("rollout-replicasets").await;
    assert_eq!(
        rows_with(&timeline, "Added").len(),
        2,
        "two ReplicaSets: {timeline}"
    );
    assert!(
        !rows_with(&timeline, "spec.replicas 3→5").is_empty(),
        "the new one scaled up: {timeline}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rollout_deployment_replays_to_its_goldens() {
    let (timeline, _) = replay_matches_goldens("rollout-deployments").await;
    assert!(
        timeline.contains("containers[nginx].image nginx:1.25→nginx:1.26"),
        "{timeline}"
    );
    // The watch timeout is the one the live Reflector drew, not one the replay draws.
    assert!(timeline.contains("(timeout 7m02s)"), "{timeline}");
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

/// The handlers that tell `slow-handler.jsonl`'s story (docs/recordings/README.md).
const SLOW_HANDLER_ARGS: [&str; 6] = [
    "--resync",
    "30s",
    "--handler",
    "slow,delay=2s,resync=0",
    "--handler",
    "periodic",
];

/// `slow-handler.jsonl` with a slow handler without a resync period and a fast one with the
/// informer's 30 s: the slow handler's buffer grows while every pop returns at once, and the
/// relist's unchanged objects reach only `periodic` (the resync check at 30 s unmarked `slow`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_slow_handler_replays_to_its_goldens() {
    // By default, with the flags its header names ("replayWith"): the same as given by hand.
    let (default_timeline, _) = replay_matches_goldens("slow-handler").await;
    assert!(
        !rows_with(&default_timeline, "OnUpdate").is_empty(),
        "{default_timeline}"
    );
    let mut jsonl_args = SLOW_HANDLER_ARGS.to_vec();
    jsonl_args.extend(["-o", "jsonl", "--object", "meta"]);
    let jsonl = replay("slow-handler", &jsonl_args).await;
    golden("replay_slow-handler.handlers.jsonl.txt", &jsonl);
    let timeline = replay("slow-handler", &SLOW_HANDLER_ARGS).await;
    golden("replay_slow-handler.handlers.timeline.txt", &timeline);
    assert_eq!(default_timeline, timeline);

    let lines = support::binary::json_lines(jsonl.as_bytes());
    let notifications = |handler: &str| -> Vec<&serde_json::Value> {
        lines
            .iter()
            .filter(|l| l["kind"] == "notification" && l["handler"] == handler)
            .collect()
    };
    let slow = notifications("slow");
    let depths: Vec<u64> = slow
        .iter()
        .filter_map(|n| n["bufferDepth"].as_u64())
        .collect();
    assert!(
        depths.iter().any(|&d| d >= 5),
        "the buffer grows: {depths:?}"
    );
    let burst: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| l["kind"] == "batch" && l["deltas"][0]["type"] == "Updated")
        .collect();
    assert_eq!(burst.len(), 5, "{jsonl}");
    assert!(
        burst.iter().all(|b| b["queueDepth"] == 0),
        "the queue stays empty during the burst: {jsonl}"
    );
    // The relist's unchanged objects: sync notifications, to `periodic` only.
    let relist_syncs = |handler: &str| {
        notifications(handler)
            .iter()
            .filter(|n| n["isSync"] == true && n["delivered"] == true)
            .filter(|n| n["seq"].as_u64() > Some(11))
            .count()
    };
    assert_eq!((relist_syncs("periodic"), relist_syncs("slow")), (2, 0));
    assert!(
        !rows_with(&timeline, "410 → relist").is_empty(),
        "{timeline}"
    );
}

/// The two-handler scenario of `resync.jsonl` through every `--client-go` profile: what each
/// version's informer hands each handler.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_handlers_replay_to_their_goldens_through_every_profile() {
    for version in ["1.28", "1.32", "1.33", "1.35", "latest"] {
        let args = [
            "--client-go",
            version,
            "--resync",
            "1s",
            "--handler",
            "a",
            "--handler",
            "b,delay=2s,resync=0",
        ];
        let timeline = replay("resync", &args).await;
        golden(
            &format!("replay_resync.two-handlers.client-go-{version}.timeline.txt"),
            &timeline,
        );
        assert!(rows_with(&timeline, "→ b ").len() >= 3, "{timeline}");
        // `b` has no resync period: the resync checks unmark it, `a` gets the resyncs.
        assert!(
            !rows_with(&timeline, "→ a  OnUpdate (resync)").is_empty(),
            "{timeline}"
        );
        assert!(
            rows_with(&timeline, "→ b  OnUpdate (resync)").is_empty(),
            "{timeline}"
        );
    }
}

/// `controller.jsonl`, replayed with the flags its header names (one worker, 500 ms reconciles,
/// `demo/flaky` failing three times): the three surprises of a controller's workqueue (client-go
/// v0.36.3 `util/workqueue`, under controller-runtime v0.24.1's `reconcileHandler`), as
/// README.md ("Handlers and controllers") tells them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_controller_replays_to_its_goldens() {
    let (timeline, jsonl) = replay_matches_goldens("controller").await;
    let reconciles = rows_with(&timeline, "⇒ web");
    let of = |key: &str| -> Vec<&str> {
        reconciles
            .iter()
            .copied()
            .filter(|r| r.contains(&format!(" {key} ")))
            .collect()
    };
    // A burst of three updates while the worker is busy folds into one reconcile, which reads
    // the current object (rv 1007), not the event's; the update during it queues the key again.
    // (`⇒` rows are where a reconcile starts, with what it read; `⇐` rows where it returns.)
    let app = of("demo/app-config");
    assert_eq!(app.len(), 3, "{timeline}");
    assert!(
        app[1].contains("folded 3 adds, latest 330.0ms ago  rv 1007"),
        "{}",
        app[1]
    );
    assert!(
        app[2].contains("requeued: changed while reconciling  rv 1008"),
        "{}",
        app[2]
    );
    // The failing key's retries after 5, 10 and 20 ms, then its fourth attempt succeeds.
    let returned = rows_with(&timeline, "⇐ web");
    let flaky_returned: Vec<&str> = returned
        .iter()
        .copied()
        .filter(|r| r.contains(" demo/flaky "))
        .collect();
    let retries: Vec<&str> = flaky_returned
        .iter()
        .filter_map(|r| r.split("error → retry in ").nth(1))
        .collect();
    assert_eq!(retries, ["5.0ms", "10.0ms", "20.0ms"], "{timeline}");
    assert!(flaky_returned[3].ends_with("  ok"), "{}", flaky_returned[3]);
    assert!(of("demo/flaky")[3].contains("attempt 4"), "{timeline}");
    // The deleted object is reconciled as gone.
    assert!(
        of("demo/limits").last().unwrap().ends_with("  gone"),
        "{timeline}"
    );
    let lines = support::binary::json_lines(jsonl.as_bytes());
    let starts: Vec<(&str, &str)> = lines
        .iter()
        .filter(|l| l["kind"] == "reconcile")
        .map(|l| (l["key"].as_str().unwrap(), l["startedAt"].as_str().unwrap()))
        .collect();
    assert_eq!(starts.len(), 10, "{jsonl}");
    // Its first retry was due at 1.005 s, behind demo/limits: it waited for the worker.
    assert_eq!(starts[3], ("demo/flaky", "2026-11-24T09:00:01.500000Z"));
}

/// `controller-runtimes.jsonl`, replayed with the flags its header names (a client-go and a
/// kube-runtime controller, both with `predicate=generation`): the story docs/recordings/README.md
/// and README.md ("Go or Rust") tell.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_controller_runtimes_replay_to_their_goldens() {
    let (timeline, jsonl) = replay_matches_goldens("controller-runtimes").await;
    // The status-only update of demo/web at 1 s is filtered by both.
    for label in ["⇒ go ", "⇒ rs(kube) "] {
        let rows: Vec<&str> = rows_with(&timeline, label)
            .into_iter()
            .filter(|r| r.starts_with("09:00:01.000"))
            .collect();
        assert_eq!(rows.len(), 1, "{label}: {timeline}");
        assert!(
            rows[0].ends_with("demo/web    filtered by generation"),
            "{}",
            rows[0]
        );
    }
    let lines = support::binary::json_lines(jsonl.as_bytes());
    let reconciled = |controller: &str, key: &str| -> Vec<String> {
        lines
            .iter()
            .filter(|l| l["kind"] == "reconcile" && l["controller"] == controller)
            .filter(|l| l["key"] == key && l.get("filtered").is_none())
            .map(|l| l["resourceVersion"].to_string())
            .collect()
    };
    // The spec change is reconciled by both; batch, deleted during the expired watch, is
    // reconciled as gone (null) by client-go only.
    assert_eq!(reconciled("go", "demo/web"), ["\"1003\"", "\"1005\""]);
    assert_eq!(reconciled("rs", "demo/web"), ["\"1003\"", "\"1005\""]);
    assert_eq!(reconciled("go", "demo/batch"), ["\"1002\"", "null"]);
    assert_eq!(reconciled("rs", "demo/batch"), ["\"1002\""]);
    assert!(
        timeline.contains(
            "── kube-runtime: demo/batch gone in the relist, without a Delete: its store drops it \
             at InitDone and its Controller never reconciles it"
        ),
        "{timeline}"
    );
}

/// The README's console examples (`$ kubectl deltas replay …` and the rows it printed) are
/// what the binary prints: each row shown is a row of its output, in order, where `…` stands for
/// a part left out, and it exits as a session does (5 for stacks that differ). The first one is
/// a real cluster's rollout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_console_examples_are_the_binarys_output() {
    let readme = include_str!("../../README.md");
    let blocks: Vec<&str> = readme
        .split("```console\n")
        .skip(1)
        .map(|rest| rest.split_once("```").unwrap().0)
        .collect();
    assert!(
        blocks[0].starts_with("$ kubectl deltas replay docs/recordings/rollout-pods.jsonl "),
        "the first example replays a real recording: {}",
        blocks[0]
    );
    for block in blocks {
        let (command, rows) = block.split_once('\n').unwrap();
        let Some(args) = command.strip_prefix("$ kubectl deltas ") else {
            continue;
        };
        let args: Vec<String> = args
            .split_whitespace()
            .map(|a| a.trim_matches('\'').to_owned())
            .map(|a| {
                if a.starts_with("docs/") {
                    format!("{}/{a}", env!("CARGO_MANIFEST_DIR"))
                } else {
                    a
                }
            })
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run_offline(&args, None).await;
        // `--compare` exits 5 when the stacks differ, which is what its example shows.
        let expected = if args.contains(&"--compare") { 5 } else { 0 };
        assert_eq!(out.status.code(), Some(expected), "{command}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        let mut output = stdout.lines();
        for row in rows.lines() {
            let pieces: Vec<&str> = row.split('…').collect();
            let shown = |line: &str| {
                let line = line.trim_end();
                let mut rest = match line.strip_prefix(pieces[0]) {
                    Some(rest) => rest,
                    None => return false,
                };
                for piece in &pieces[1..] {
                    match rest.find(piece) {
                        Some(at) => rest = &rest[at + piece.len()..],
                        None => return false,
                    }
                }
                pieces.len() > 1 || rest.is_empty()
            };
            assert!(
                output.any(shown),
                "`{command}` printed no row {row:?} (in this order):\n{stdout}"
            );
        }
    }
}

/// `controller-runtimes-replicasets.jsonl`, replayed after `controller-runtimes.jsonl` on one
/// clock with `owns=rs` in both runtimes: the story docs/recordings/README.md and README.md
/// ("Go or Rust") tell. Each change of `demo/web-7b9c4d6f58` (2.001 s, 4 s) reconciles
/// `demo/web` as the Deployment cache held it then.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owned_replicasets_reconcile_their_deployments_to_their_goldens() {
    let companion = bundled("controller-runtimes-replicasets");
    let args = [
        companion.to_str().unwrap(),
        "--controller",
        "go,owns=rs",
        "--controller",
        "rs,runtime=kube,owns=rs",
    ];
    let timeline = replay("controller-runtimes", &args).await;
    golden("replay_controller-runtimes-owned.timeline.txt", &timeline);
    for label in ["⇒ go ", "⇒ rs(kube) "] {
        let owned: Vec<&str> = rows_with(&timeline, label)
            .into_iter()
            .filter(|r| {
                let words: Vec<&str> = r.split_whitespace().collect();
                words.windows(5).any(|w| {
                    w == [
                        "demo/web",
                        "owner",
                        "of",
                        "demo/web-7b9c4d6f58",
                        "(replicasets.apps)",
                    ]
                })
            })
            .map(|r| r.split_whitespace().next().unwrap_or_default())
            .collect();
        assert_eq!(
            owned,
            ["09:00:00.000", "09:00:02.001", "09:00:04.000"],
            "{label}: {timeline}"
        );
    }
}
