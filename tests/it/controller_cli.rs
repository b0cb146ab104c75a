//! What a controller's workers do with the keys its handler queues (issue #28), through the
//! binary: `--controller` and its usage errors, the `⇒ NAME reconcile` rows, the `reconcile`
//! JSON lines, `--view reconciles`, the summary's controller table, the determinism of an instant
//! replay, and a live watch against the fake API server.
//!
//! The rules are client-go's `util/workqueue` (v0.36.3: `queue.go` `Add`/`Get`/`Done`,
//! `delaying_queue.go` `AddAfter`, `rate_limiting_queue.go` `AddRateLimited`/`Forget`,
//! `default_rate_limiters.go` `DefaultTypedControllerRateLimiter`) under controller-runtime's
//! worker loop (v0.24.1 `pkg/internal/controller/controller.go`, `reconcileHandler`).

use crate::support::configmaps::{cm, server_with_configmaps};
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::binary::{
    Running, assert_usage_sentence, json_lines, offline_command, run_offline, stderr,
};
use crate::support::paths::{hand_written, path_str, summary_row};

/// Replays `path` with `args`; checks the exit code is 0; returns stdout and stderr.
async fn replay(path: &std::path::Path, args: &[&str]) -> (String, String) {
    let mut all = vec!["replay", path_str(path)];
    all.extend_from_slice(args);
    let out = run_offline(&all, None).await;
    assert_eq!(out.status.code(), Some(0), "{all:?}: {}", stderr(&out));
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The `reconcile` JSON lines of `stdout`.
fn reconciles(stdout: &str) -> Vec<Value> {
    json_lines(stdout.as_bytes())
        .into_iter()
        .filter(|l| l["kind"] == "reconcile")
        .collect()
}

/// `(key, started at, attempt, resourceVersion, result)` of each reconcile, the start in seconds
/// since the recording's start (09:00:00).
fn starts(reconciles: &[Value]) -> Vec<(String, String, u64, Value, String)> {
    reconciles
        .iter()
        .map(|r| {
            let started = r["startedAt"].as_str().unwrap();
            let seconds = started
                .strip_prefix("2026-11-24T09:00:0")
                .and_then(|s| s.strip_suffix('Z'))
                .unwrap_or_else(|| panic!("{started}"));
            (
                r["key"].as_str().unwrap().to_owned(),
                seconds.to_owned(),
                r["attempt"].as_u64().unwrap(),
                r["resourceVersion"].clone(),
                r["result"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn row(
    key: &str,
    at: &str,
    attempt: u64,
    rv: &str,
    result: &str,
) -> (String, String, u64, Value, String) {
    (key.into(), at.into(), attempt, json!(rv), result.into())
}

/// The issue's first case: one worker, 1.5 s reconciles, `a` and `b` listed at 0, three updates
/// of `a` at 2.0–2.2 s, `b` updated at 2.5 s. `a`'s updates fold into one wait (`Add` of a dirty
/// key does nothing), `b`'s update during its reconcile makes `Done` queue it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_worker_folds_a_burst_and_requeues_a_key_changed_mid_reconcile() {
    let path = hand_written("controller/cases");
    let (stdout, _) = replay(
        &path,
        &["--controller", "web,reconcile=1.5s", "-o", "jsonl", "-q"],
    )
    .await;
    let all = reconciles(&stdout);
    assert_eq!(
        starts(&all),
        [
            row("default/a", "0.000000", 1, "1", "ok"),
            row("default/b", "1.500000", 1, "2", "ok"),
            row("default/a", "3.000000", 1, "5", "ok"),
            row("default/b", "4.500000", 1, "6", "ok"),
        ],
        "{stdout}"
    );
    // a's three updates folded into the one reconcile at 3.0, queued since the first.
    assert_eq!(all[2]["adds"], 3, "{:#}", all[2]);
    assert_eq!(all[2]["queuedAt"], "2026-11-24T09:00:02.000000Z");
    assert_eq!(all[2]["waitMs"], 1000.0);
    assert_eq!(all[2]["requeued"], false);
    // b, changed while reconciled at 1.5, was queued again by Done at 3.0.
    assert_eq!(all[3]["requeued"], true, "{:#}", all[3]);
    assert_eq!(all[3]["waitMs"], 2000.0);
    assert_eq!(all[3]["time"], "2026-11-24T09:00:06.000000Z");
    for r in &all {
        assert_eq!(
            (r["worker"].clone(), r["controller"].clone()),
            (json!(0), json!("web"))
        );
        assert_eq!(r["durationMs"], 1500.0);
        assert!(r.get("retryInMs").is_none(), "{r}");
    }

    // The same, as the timeline shows it under the handler rows.
    let (timeline, summary) = replay(&path, &["--controller", "web,reconcile=1.5s"]).await;
    // Columns align with the handler rows: compared with single spaces. A reconcile is a row
    // where it starts (what it read) and one where it returns.
    let rows: Vec<String> = timeline
        .lines()
        .filter(|l| l.contains("⇒ web") || l.contains("⇐ web"))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(rows.len(), 8, "{timeline}");
    assert_eq!(
        rows[4..6],
        [
            "09:00:03.000 ⇒ web reconcile default/a waited 1.00s folded 3 adds, latest 800.0ms ago rv 5",
            "09:00:04.500 ⇐ web returned default/a took 1.50s ok",
        ],
        "{timeline}"
    );
    assert!(
        rows[6].ends_with("requeued: changed while reconciling rv 6"),
        "{}",
        rows[6]
    );
    let handler_rows = timeline.lines().filter(|l| l.contains("→ web")).count();
    assert_eq!(handler_rows, 6, "2 OnAdd and 4 OnUpdate: {timeline}");
    assert_eq!(summary_row(&summary, "reconciles"), ["4"], "{summary}");
    assert_eq!(
        summary_row(&summary, "adds (workqueue_adds_total)"),
        ["4"],
        "{summary}"
    );
    assert_eq!(summary_row(&summary, "folded while waiting"), ["2"]);
    assert_eq!(summary_row(&summary, "re-queued after processing"), ["1"]);
    assert_eq!(summary_row(&summary, "keys still waiting at exit"), ["0"]);
}

/// The issue's second case: `fail=2` for `default/a` only, 100 ms reconciles. `a` fails at 0
/// and is retried after 5 ms (the per-item exponential limiter's first delay, the bucket having
/// tokens), behind `b`; fails again at 0.2 (attempt 2), is retried after 10 ms, and succeeds at
/// 0.31 (attempt 3).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_key_is_retried_at_5_then_10_ms() {
    let path = hand_written("controller/cases");
    let (stdout, summary) = replay(
        &path,
        &[
            "--controller",
            "web,reconcile=100ms,fail=2,fail-keys=default/a",
            "-o",
            "jsonl",
        ],
    )
    .await;
    let all = reconciles(&stdout);
    assert_eq!(
        starts(&all[..4]),
        [
            row("default/a", "0.000000", 1, "1", "error"),
            row("default/b", "0.100000", 1, "2", "ok"),
            row("default/a", "0.200000", 2, "1", "error"),
            row("default/a", "0.310000", 3, "1", "ok"),
        ],
        "{stdout}"
    );
    assert_eq!(all[0]["retryInMs"], 5.0);
    assert_eq!(all[2]["retryInMs"], 10.0);
    assert!(all[3].get("retryInMs").is_none());
    // Forget after the success: the next failure-free reconciles of a are first attempts.
    assert!(
        all[4..]
            .iter()
            .all(|r| r["attempt"] == 1 && r["result"] == "ok")
    );
    assert_eq!(
        summary_row(&summary, "retries (workqueue_retries_total)"),
        ["2"],
        "{summary}"
    );
    assert_eq!(summary_row(&summary, "of which errors"), ["2"]);
}

/// `--view reconciles` writes the reconciles and no pop or handler row; `requeue-after` brings a
/// key back after each success, and keys waiting only for that are left waiting at the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn view_reconciles_and_requeue_after() {
    let path = hand_written("controller/cases");
    let (timeline, summary) = replay(
        &path,
        &[
            "--controller",
            "web,requeue-after=1s",
            "--view",
            "reconciles",
        ],
    )
    .await;
    assert!(!timeline.contains("→ web"), "{timeline}");
    assert!(!timeline.contains(" #1 "), "{timeline}");
    let rows: Vec<&str> = timeline.lines().filter(|l| l.contains("⇐ web")).collect();
    // a and b at 0 and 1 s (requeued after), the updates at 2.0–2.5 s, then nothing after the
    // recording's last line but what was due by then: 2 + 2 + 1 + 1 + 1 + 1 rows.
    assert!(
        !rows.is_empty() && rows.iter().all(|r| r.ends_with("ok → requeue after 1.00s")),
        "{timeline}"
    );
    // The two keys waiting for their requeue-after are the session's last words.
    assert!(
        timeline
            .trim_end()
            .ends_with("── ended with controller web's work unfinished: 2 keys waiting"),
        "{timeline}"
    );
    assert_eq!(
        summary_row(&summary, "keys still waiting at exit"),
        ["2"],
        "{summary}"
    );
}

/// A deletion's key is the tombstone's own (`DeletionHandlingMetaNamespaceKeyFunc`) and the
/// reconcile finds the object gone: `resourceVersion` null, `gone` in the row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_object_is_reconciled_as_gone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deleted.jsonl");
    let lines = [
        r#"{"kind":"header","v":1,"resource":{"group":"","version":"v1","kind":"ConfigMap","plural":"configmaps","namespaced":true},"namespace":"default","startedAt":"2026-11-24T09:00:00Z"}"#,
        r#"{"t":0,"type":"LIST","resourceVersion":"1","items":[{"metadata":{"name":"a","namespace":"default","resourceVersion":"1"}}]}"#,
        r#"{"t":500,"type":"DELETED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default","resourceVersion":"2"}}}"#,
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let (stdout, _) = replay(&path, &["--controller", "web", "-o", "jsonl", "-q"]).await;
    let all = reconciles(&stdout);
    assert_eq!(all.len(), 2, "{stdout}");
    assert_eq!(all[1]["key"], "default/a");
    assert_eq!(all[1]["resourceVersion"], Value::Null, "{:#}", all[1]);
    let (timeline, _) = replay(&path, &["--controller", "web", "-q"]).await;
    let last = timeline.lines().rfind(|l| l.contains("⇒ web")).unwrap();
    assert!(last.ends_with("  gone"), "{last}");
}

/// 100,000 updates over 1,000 keys, 4 workers, retries of a tenth of the keys: an instant
/// replay runs the workers on the recording's clock, so every run writes the same bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_thousand_adds_replay_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("busy.jsonl");
    let mut text = String::from(
        r#"{"kind":"header","v":1,"resource":{"group":"","version":"v1","kind":"ConfigMap","plural":"configmaps","namespaced":true},"namespace":"default","startedAt":"2026-11-24T09:00:00Z"}"#,
    );
    text.push_str("\n{\"t\":0,\"type\":\"LIST\",\"resourceVersion\":\"1\",\"items\":[]}\n");
    for i in 0..100_000u64 {
        // Ten events share each millisecond, keys cycling with a stride, so that some fold.
        let key = (i * 7) % 1_000;
        text.push_str(&format!(
            "{{\"t\":{},\"type\":\"ADDED\",\"object\":{{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{{\"name\":\"k{key}\",\"namespace\":\"default\",\"resourceVersion\":\"{}\"}}}}}}\n",
            i / 10,
            i + 2
        ));
    }
    std::fs::write(&path, text).unwrap();
    let args = [
        "--controller",
        "web,workers=4,reconcile=3ms,fail=1,fail-keys=default/k1*",
        "--view",
        "reconciles",
        "-o",
        "jsonl",
    ];
    // Not `run_offline`, whose patience (30 s) a debug build's 100k-event replay can exceed on a
    // loaded machine: this one may take as long as it takes.
    let run = |path: PathBuf| async move {
        let mut all = vec!["replay", path_str(&path)];
        all.extend_from_slice(&args);
        let cmd = offline_command(&all);
        let out = tokio::task::spawn_blocking(move || { cmd }.output())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (first, summary) = run(path.clone()).await;
    let (second, _) = run(path).await;
    assert!(first == second, "two replays differ");
    let all = reconciles(&first);
    let workers: std::collections::BTreeSet<u64> =
        all.iter().map(|r| r["worker"].as_u64().unwrap()).collect();
    assert_eq!(workers.len(), 4, "every worker reconciled");
    assert!(all.iter().any(|r| r["result"] == "error"));
    let adds: u64 = all.iter().map(|r| r["adds"].as_u64().unwrap()).sum();
    // Every add is absorbed by exactly one reconcile (retries come from AddRateLimited, not
    // from the handler, and absorb none of its adds beyond their own).
    let retries = all.iter().filter(|r| r["result"] == "error").count() as u64;
    assert_eq!(adds, 100_000 + retries, "{summary}");
    assert!(
        (all.len() as u64) < 100_000,
        "folding happened: {}",
        all.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_controller_flags_are_usage_errors_of_one_sentence() {
    let path = hand_written("controller/cases");
    let path = path_str(&path);
    for (args, says) in [
        (
            &["--controller", "a/b"][..],
            r#""a/b" is not a controller name: use letters, digits, '-', '_' or '.'"#,
        ),
        (
            &["--controller", "web,workers=0"],
            r#"workers=0 for controller "web": a controller runs 1 to 1024 workers"#,
        ),
        (
            &["--controller", "web,workers=two"],
            r#"workers="two" for controller "web" is not a number of workers from 1"#,
        ),
        (
            &["--controller", "web,fail=-1"],
            r#"fail="-1" for controller "web" is not a number of failures"#,
        ),
        (
            &["--controller", "web,fail-keys=default/a"],
            r#"fail-keys= for controller "web" chooses the keys that fail=N makes fail: give fail=N too"#,
        ),
        (
            &["--controller", "web,reconcile=soon"],
            r#""soon" is not a duration"#,
        ),
        (
            &["--controller", "web,retries=3"],
            r#"unknown controller setting "retries": expected workers=N, reconcile=DURATION"#,
        ),
        (
            &["--controller", "web,fail=1,fail=2"],
            r#"fail= is given twice for controller "web": give each setting once"#,
        ),
        (
            &["--controller", "web", "--handler", "web"],
            "--controller web names a handler already given",
        ),
        (
            &["--controller", "web", "--informer", "plain"],
            "--controller registers a handler on a shared informer, and --informer plain has none",
        ),
        (
            &["--view", "reconciles"],
            "--view reconciles shows what controllers' workers did: give a --controller NAME",
        ),
        (
            &["--controller", "web", "--store", "undelta"],
            "--controller registers an informer's event handler, and an UndeltaStore has none",
        ),
    ] {
        let mut all = vec!["replay", path];
        all.extend_from_slice(args);
        let out = run_offline(&all, None).await;
        assert_usage_sentence(&out, &format!("{args:?}"), says);
    }
}

/// A live watch: real worker threads on real time. Updates made while the key is reconciled
/// fold into one wait; the key is never reconciled by two workers at once, and the last
/// reconcile reads the last update.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_reconciles_fold_and_read_the_latest_object() {
    let (server, _dir, kubeconfig) = server_with_configmaps(1).await;
    let args = [
        "watch",
        "cm",
        "-o",
        "jsonl",
        "--object",
        "none",
        "--controller",
        "web,workers=3,reconcile=300ms",
    ];
    let mut bin = Running::spawn(&kubeconfig, &args);
    tokio::task::block_in_place(|| {
        bin.read_until("the first reconcile's start", |l| {
            l.contains(r#""event":"synced""#)
        });
    });
    let mut last = 0;
    for v in 1..=5 {
        last = server.update("configmaps", cm("cm-0", &v.to_string()));
    }
    let last = last.to_string();
    // Until every add was reconciled: the first reconcile can already read the last update (the
    // handler's initial add can reach the queue after the updates reached the Indexer) while the
    // updates' adds still wait for a second one.
    let reconciled = std::cell::Cell::new(0);
    let read_last = std::cell::Cell::new(false);
    tokio::task::block_in_place(|| {
        bin.read_until("the reconciles of all six adds", |l| {
            if let Ok(record) = serde_json::from_str::<Value>(l)
                && record["kind"] == "reconcile"
            {
                reconciled.set(reconciled.get() + record["adds"].as_u64().unwrap());
                read_last.set(read_last.get() || record["resourceVersion"] == last.as_str());
            }
            reconciled.get() >= 6
        });
    });
    assert!(read_last.get(), "no reconcile read rv {last}");
    let ended = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
    let all = reconciles(&ended.stdout);
    // The initial add, and the five updates folded into at most two waits (one while the key
    // waited or ran, one queued again by Done). On a loaded machine the updates can arrive
    // before a worker took the initial add, and all six fold into one reconcile.
    assert!((1..=3).contains(&all.len()), "{all:#?}");
    let adds: u64 = all.iter().map(|r| r["adds"].as_u64().unwrap()).sum();
    assert_eq!(adds, 6, "{all:#?}");
    for pair in all.windows(2) {
        assert!(
            pair[1]["startedAt"].as_str() >= pair[0]["time"].as_str(),
            "never two workers on one key: {pair:#?}"
        );
    }
    let duration = Duration::from_secs_f64(all[0]["durationMs"].as_f64().unwrap() / 1e3);
    assert!(duration >= Duration::from_millis(290), "{duration:?}");
    assert_eq!(
        summary_row(&ended.stderr, "reconciles"),
        [all.len().to_string()]
    );
}
