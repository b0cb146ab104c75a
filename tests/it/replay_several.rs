//! `replay FILE FILE…`: several recordings, one resource each, replayed as one session on one
//! clock (each line at its header's `startedAt + t`), through the binary: the groups of lines of
//! the recordings interleave in time order, `owns=` names a later recording's resource, an
//! instant replay writes the same bytes every run, and recordings that cannot share a clock are
//! refused with one sentence (exit 2).
//!
//! `tests/recordings/owned/`: `deployments.jsonl` (`startedAt` 09:00:00; `demo/web` listed at 0,
//! updated at 3 s and 7 s) and `replicasets.jsonl` (`startedAt` 09:00:01; `demo/web-7b9c`, whose
//! controller owner is `web`, listed at 0 and updated at 4 s: 09:00:05 on the session's clock).

use serde_json::Value;

use crate::support::binary::{assert_usage_sentence, json_lines, run_offline, stderr};
use crate::support::paths::{hand_written, path_str};

/// The owned recordings' paths, the Deployments' first.
fn owned() -> [std::path::PathBuf; 2] {
    [
        hand_written("owned/deployments"),
        hand_written("owned/replicasets"),
    ]
}

/// Replays both owned recordings with `args`; checks the exit code is 0; returns stdout.
async fn replay_owned(args: &[&str]) -> String {
    let files = owned();
    let mut all = vec!["replay", path_str(&files[0]), path_str(&files[1])];
    all.extend_from_slice(args);
    let out = run_offline(&all, None).await;
    assert_eq!(out.status.code(), Some(0), "{all:?}: {}", stderr(&out));
    String::from_utf8(out.stdout).unwrap()
}

/// The second recording's update (its `t` = 4 s, 5 s after the session's start) is popped
/// between the first one's updates at 3 s and 7 s, in its own lane.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_groups_of_several_recordings_interleave_in_time_order() {
    let stdout = replay_owned(&["--no-headers"]).await;
    let pops: Vec<(&str, &str)> = stdout
        .lines()
        .filter(|l| l.contains("Updated"))
        .map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            (words[0], words[2])
        })
        .collect();
    assert_eq!(
        pops,
        [
            ("09:00:03.000", "deployments.apps"),
            ("09:00:05.000", "replicasets.apps"),
            ("09:00:07.000", "deployments.apps"),
        ],
        "{stdout}"
    );
}

/// `owns=` names the second recording's resource (as its header names it: `replicasets`,
/// `rs`): the ReplicaSet's update at 09:00:05 reconciles its Deployment, in both runtimes, at
/// that time and as the cache held it then; and two runs write the same bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owned_recording_reconciles_its_owner_in_both_runtimes() {
    let args = [
        "-o",
        "jsonl",
        "--object",
        "none",
        "--controller",
        "web,owns=replicasets",
        "--controller",
        "rs,runtime=kube,owns=rs",
    ];
    let first = replay_owned(&args).await;
    assert_eq!(first, replay_owned(&args).await, "two runs, the same bytes");
    let all = json_lines(first.as_bytes());
    for runtime in ["client-go", "kube"] {
        let owned: Vec<&Value> = all
            .iter()
            .filter(|r| {
                r["kind"] == "reconcile"
                    && r["runtime"] == runtime
                    && r["reason"] == "owned object updated"
            })
            .collect();
        let seen: Vec<[&str; 4]> = owned
            .iter()
            .map(|r| {
                ["key", "ownedObject", "time", "resourceVersion"]
                    .map(|field| r[field].as_str().unwrap_or_default())
            })
            .collect();
        // The Deployment as the cache held it at 09:00:05: updated at 3 s (rv 102), not yet at
        // 7 s (rv 104).
        assert!(
            seen.contains(&[
                "demo/web",
                "demo/web-7b9c (replicasets.apps)",
                "2026-11-29T09:00:05.000000Z",
                "102"
            ]),
            "{runtime}: {seen:?}\n{first}"
        );
    }
}

/// Recordings that cannot be replayed as one session: one sentence, exit 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recordings_that_cannot_share_a_clock_are_refused() {
    let [deployments, replicasets] = owned();
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(&replicasets).unwrap();
    let late = dir.path().join("late.jsonl");
    std::fs::write(
        &late,
        text.replace("2026-11-29T09:00:01Z", "2026-11-30T09:00:02Z"),
    )
    .unwrap();
    let headless = dir.path().join("headless.jsonl");
    std::fs::write(
        &headless,
        text.lines().skip(1).collect::<Vec<_>>().join("\n"),
    )
    .unwrap();
    let (d, r) = (path_str(&deployments), path_str(&replicasets));
    for (args, says) in [
        (
            vec!["replay", d, d],
            "both hold deployments.apps: a replay has one lane per resource",
        ),
        (vec!["replay", d, "-"], "give - (stdin) alone"),
        (
            vec!["replay", d, path_str(&late)],
            "late.jsonl starts 1day 2s from",
        ),
        (
            vec!["replay", d, path_str(&headless)],
            "headless.jsonl has no header, so no startedAt",
        ),
        (
            vec!["replay", d, r, "--controller", "web,owns=pods"],
            "owns=pods names no resource of a replay (deployments.apps, replicasets.apps)",
        ),
    ] {
        let out = run_offline(&args, Some(Vec::new())).await;
        assert_usage_sentence(&out, &format!("{args:?}"), says);
    }
}

/// `--speed X`: the recordings run on the one clock running at X times real time, the second
/// one's update at its `startedAt + t` (5 s on the session's clock, 100 ms of real time at
/// 50×), between the first one's at 3 s and 7 s (40 ms of real time on either side).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_speed_the_recordings_share_the_running_clock() {
    let stdout = replay_owned(&["--no-headers", "--speed", "50"]).await;
    let pops: Vec<(&str, &str)> = stdout
        .lines()
        .filter(|l| l.contains("Updated"))
        .map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            (&words[0][..7], words[2])
        })
        .collect();
    assert_eq!(
        pops,
        [
            ("09:00:0", "deployments.apps"),
            ("09:00:0", "replicasets.apps"),
            ("09:00:0", "deployments.apps"),
        ],
        "{stdout}"
    );
    let seconds: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("Updated"))
        .map(|l| &l[6..8])
        .collect();
    assert_eq!(seconds, ["03", "05", "07"], "{stdout}");
}
