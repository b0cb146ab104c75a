//! `--controller NAME,queue=priority` through the binary: controller-runtime's priority queue
//! (v0.24.1 `pkg/controller/priorityqueue/priorityqueue.go`, its default since v0.23.0) behind
//! the handler controller-runtime's `EnqueueRequestForObject` is (`pkg/handler/enqueue.go`
//! `addToQueueCreate`, `addToQueueUpdate`: `LowPriority` for initial-list adds and updates with
//! an unchanged resourceVersion), against client-go's workqueue on the same recordings.

use serde_json::{Value, json};

use crate::support::binary::{Running, json_lines, run_offline, stderr};
use crate::support::configmaps::{cm, server_with_configmaps};
use crate::support::paths::{hand_written, path_str, summary_row};

/// What replaying the recording `name` with one controller `spec` and the flags `extra` writes;
/// the replay must succeed.
async fn replay(name: &str, spec: &str, extra: &[&str]) -> std::process::Output {
    let path = hand_written(name);
    let mut args = vec!["replay", path_str(&path), "--controller", spec];
    args.extend_from_slice(extra);
    let out = run_offline(&args, None).await;
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    out
}

/// The `reconcile` JSON lines of replaying `name` with one controller `spec`.
async fn reconciles(name: &str, spec: &str) -> Vec<Value> {
    let out = replay(name, spec, &["-o", "jsonl"]).await;
    json_lines(&out.stdout)
        .into_iter()
        .filter(|l| l["kind"] == "reconcile")
        .collect()
}

/// `(key, start in seconds since 09:00:00, priority)` of each reconcile.
fn order(reconciles: &[Value]) -> Vec<(String, String, Value)> {
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
                r.get("priority").cloned().unwrap_or(Value::Null),
            )
        })
        .collect()
}

fn at(key: &str, seconds: &str, priority: Value) -> (String, String, Value) {
    (format!("default/{key}"), seconds.to_owned(), priority)
}

/// `a`, `b`, `c` listed at 0, one worker, 1 s reconciles, `c` updated at 0.5 s. The priority
/// queue hands out `c` (priority 0: a change) before `b` (`LowPriority`: an initial-list add,
/// `addToQueueCreate` with `IsInInitialList`), the update having raised `c`'s waiting entry
/// (`lockedAddWithOpts`); client-go's workqueue keeps first-in first-out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_overtakes_the_initial_list_with_the_priority_queue() {
    let priority = reconciles("controller/priority", "web,reconcile=1s,queue=priority").await;
    assert_eq!(
        order(&priority),
        [
            at("a", "0.000000", json!(-100)),
            at("c", "1.000000", json!(0)),
            at("b", "2.000000", json!(-100)),
        ],
        "{priority:#?}"
    );
    // c's initial add and its update folded into the one entry, raised to priority 0.
    assert_eq!(priority[1]["adds"], 2);
    assert_eq!(priority[1]["resourceVersion"], "4");

    let fifo = reconciles("controller/priority", "web,reconcile=1s").await;
    assert_eq!(
        order(&fifo),
        [
            at("a", "0.000000", Value::Null),
            at("b", "1.000000", Value::Null),
            at("c", "2.000000", Value::Null),
        ],
        "{fifo:#?}"
    );
    let explicit = reconciles("controller/priority", "web,reconcile=1s,queue=workqueue").await;
    assert_eq!(explicit, fifo);
}

/// `a`, `b` listed at 0, then a 410 and a relist at 0.5 s that finds both unchanged and a new
/// `c`. The relist's updates have an unchanged resourceVersion (`addToQueueUpdate`: low
/// priority), `c`'s add is not from the initial list (priority 0), so `c` goes first; `a`, added
/// while it was reconciled, waits for `Done` and comes after `b`, which was added before it.
/// client-go's workqueue: `b`, `c`, then `a` queued again by `Done`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relist_of_unchanged_objects_stays_at_low_priority() {
    let priority = reconciles(
        "controller/priority-relist",
        "web,reconcile=1s,queue=priority",
    )
    .await;
    assert_eq!(
        order(&priority),
        [
            at("a", "0.000000", json!(-100)),
            at("c", "1.000000", json!(0)),
            at("b", "2.000000", json!(-100)),
            at("a", "3.000000", json!(-100)),
        ],
        "{priority:#?}"
    );
    assert_eq!(priority[3]["requeued"], true);

    let fifo = reconciles("controller/priority-relist", "web,reconcile=1s").await;
    assert_eq!(
        order(&fifo),
        [
            at("a", "0.000000", Value::Null),
            at("b", "1.000000", Value::Null),
            at("c", "2.000000", Value::Null),
            at("a", "3.000000", Value::Null),
        ],
        "{fifo:#?}"
    );
}

/// The timeline row names the priority a key was handed out with; client-go's queue has none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reconcile_row_shows_the_priority() {
    let rows = |spec: &'static str| async move {
        let out = replay("controller/priority", spec, &["--view", "reconciles", "-q"]).await;
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .filter(|l| l.contains("⇒ web"))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
    };
    let priority = rows("web,reconcile=1s,queue=priority").await;
    assert_eq!(
        priority,
        [
            "09:00:00.000 ⇒ web reconcile default/a priority -100 (initial list) waited 0µs rv 1",
            "09:00:01.000 ⇒ web reconcile default/c priority 0 waited 1.00s folded 2 adds, latest 500.0ms ago rv 4",
            "09:00:02.000 ⇒ web reconcile default/b priority -100 (initial list) waited 2.00s rv 2",
        ]
    );
    let fifo = rows("web,reconcile=1s").await;
    assert!(fifo.iter().all(|r| !r.contains("priority")), "{fifo:#?}");
}

/// The summary says which queue and how many workers each controller ran: the order of its
/// reconciles depends on both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_summary_names_the_queue_and_the_workers() {
    for (spec, expected) in [
        ("web", "workqueue, 1"),
        ("web,queue=priority,workers=3", "priority, 3"),
    ] {
        let out = replay("controller/priority", spec, &["-o", "jsonl"]).await;
        let summary = stderr(&out);
        assert_eq!(
            summary_row(&summary, "queue, workers"),
            [expected],
            "{summary}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_queue_is_a_usage_error() {
    let path = hand_written("controller/priority");
    let args = ["replay", path_str(&path), "--controller", "web,queue=fifo"];
    let out = run_offline(&args, None).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(
            r#"queue="fifo" for controller "web": expected workqueue (client-go's, the default) or priority (controller-runtime's priority queue, its default from v0.23)"#
        ),
        "{err}"
    );
}

/// A live watch with real worker threads: three ConfigMaps listed (low priority), one worker
/// reconciling each for 1 s; an update of the last one while the first is reconciled puts it
/// ahead of the second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_a_change_overtakes_the_initial_list_with_the_priority_queue() {
    let (server, _dir, kubeconfig) = server_with_configmaps(3).await;
    let args = [
        "watch",
        "cm",
        "-o",
        "jsonl",
        "--object",
        "none",
        "--controller",
        "web,reconcile=1s,queue=priority",
    ];
    let mut bin = Running::spawn(&kubeconfig, &args);
    tokio::task::block_in_place(|| {
        bin.read_until("the initial list's sync", |l| {
            l.contains(r#""event":"synced""#)
        });
    });
    // "While the first is reconciled": its worker takes it within a few milliseconds of the
    // sync and holds it for a second. Updated at once, the change could reach the queue before
    // a worker that a loaded machine wakes late takes anything, and then go first by right.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    server.update("configmaps", cm("cm-2", "changed"));
    tokio::task::block_in_place(|| {
        bin.read_until("the third reconcile", |l| {
            l.contains(r#""kind":"reconcile""#) && l.contains(r#""key":"default/cm-1""#)
        });
    });
    let ended = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
    let all: Vec<Value> = json_lines(ended.stdout.as_bytes())
        .into_iter()
        .filter(|l| l["kind"] == "reconcile")
        .collect();
    let seen: Vec<(&str, i64)> = all
        .iter()
        .map(|r| (r["key"].as_str().unwrap(), r["priority"].as_i64().unwrap()))
        .collect();
    assert_eq!(
        seen,
        [
            ("default/cm-0", -100),
            ("default/cm-2", 0),
            ("default/cm-1", -100)
        ],
        "{all:#?}"
    );
}
