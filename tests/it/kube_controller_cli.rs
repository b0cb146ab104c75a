//! kube-runtime's `Controller` beside client-go's on the same stream, through the binary:
//! `--controller NAME,runtime=kube` and its settings (`debounce=`, `error-requeue=`), its rows
//! (`⇒ NAME(kube) reconcile …`, `── kube-runtime …`), its `reconcile` and `note` JSON lines,
//! the determinism of an instant replay, and a live watch against the fake API server.
//!
//! The rules are kube-runtime 5.0.0's (`src/watcher.rs` `step`, `src/reflector/store.rs`
//! `Writer::apply_watcher_event`, `src/controller/mod.rs` `Controller::new` (`trigger_self` over
//! `applied_objects`) and `applier` (`Error::ObjectNotFound`), `src/scheduler.rs`
//! `debounced_scheduler`), as `src/cache/kube_runtime/` models them.

use serde_json::Value;

use crate::support::binary::{Running, assert_usage_sentence, json_lines, run_offline, stderr};
use crate::support::configmaps::{cm, server_with_configmaps};
use crate::support::paths::{bundled, path_str, summary_row};

/// Replays `name` (a bundled recording) with `args`; checks the exit code is 0; returns stdout.
async fn replay(name: &str, args: &[&str]) -> String {
    let path = bundled(name);
    let mut all = vec!["replay", path_str(&path)];
    all.extend_from_slice(args);
    let out = run_offline(&all, None).await;
    assert_eq!(out.status.code(), Some(0), "{all:?}: {}", stderr(&out));
    String::from_utf8(out.stdout).unwrap()
}

/// The JSON lines of `stdout` of `kind` by controller `controller`.
fn records<'a>(all: &'a [Value], kind: &str, controller: &str) -> Vec<&'a Value> {
    all.iter()
        .filter(|l| l["kind"] == kind && l["controller"] == controller)
        .collect()
}

/// A pod deleted while the watch was expired (worker-2, gone from the relist after the 410):
/// client-go's DeltaFIFO queues a `DeletedFinalStateUnknown`, so its controller reconciles the
/// key and finds it gone; kube-runtime's store drops it at `InitDone` without an event, so its
/// Controller never reconciles it again, and a note says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deletion_in_a_410_gap_is_reconciled_by_client_go_only() {
    let args = ["--controller", "go", "--controller", "rs,runtime=kube"];
    let mut jsonl = args.to_vec();
    jsonl.extend(["-o", "jsonl"]);
    let all = json_lines(replay("expired-watch", &jsonl).await.as_bytes());
    let relist_at = all
        .iter()
        .find(|l| l["kind"] == "note" && l["text"].as_str().unwrap().contains("gone in the relist"))
        .unwrap_or_else(|| panic!("no note of the relist: {all:#?}"));
    assert_eq!(relist_at["runtime"], "kube");
    assert_eq!(
        relist_at["text"],
        "kube-runtime: demo/worker-2 gone in the relist, without a Delete: its store drops it at \
         InitDone and its Controller never reconciles it"
    );
    let after = |r: &Value| r["startedAt"].as_str() >= relist_at["time"].as_str();
    let go: Vec<_> = records(&all, "reconcile", "go");
    let gone: Vec<_> = go
        .iter()
        .filter(|r| after(r))
        .filter(|r| r["key"] == "demo/worker-2")
        .collect();
    assert_eq!(
        gone.len(),
        1,
        "client-go reconciles the tombstone's key: {go:#?}"
    );
    assert_eq!(gone[0]["resourceVersion"], Value::Null, "and finds it gone");
    assert_eq!(gone[0]["runtime"], "client-go");
    let rs: Vec<_> = records(&all, "reconcile", "rs");
    assert!(rs.iter().all(|r| r["runtime"] == "kube"), "{rs:#?}");
    let keys_after: Vec<&str> = rs
        .iter()
        .filter(|r| after(r))
        .map(|r| r["key"].as_str().unwrap())
        .collect();
    // The relist's survivors (InitApply) and worker-4's update: never worker-2.
    assert_eq!(
        keys_after,
        [
            "demo/worker-1",
            "demo/worker-3",
            "demo/worker-4",
            "demo/worker-4"
        ],
        "{rs:#?}"
    );
    let reasons: Vec<&str> = rs.iter().map(|r| r["reason"].as_str().unwrap()).collect();
    assert_eq!(
        reasons,
        [
            "relist",
            "relist",
            "relist",
            "object updated",
            "relist",
            "relist",
            "relist",
            "object updated"
        ]
    );

    let timeline = replay("expired-watch", &args).await;
    assert!(
        timeline.contains(
            "── kube-runtime: demo/worker-2 gone in the relist, without a Delete: its store drops \
             it at InitDone and its Controller never reconciles it"
        ),
        "{timeline}"
    );
    let row = timeline
        .lines()
        .find(|l| l.contains("⇒ rs(kube)") && l.contains("demo/worker-4") && l.contains("rv 1008"))
        .unwrap_or_else(|| panic!("{timeline}"));
    assert!(
        row.contains("reconcile") && row.contains("object updated"),
        "{row}"
    );
}

/// An instant replay of both runtimes writes the same bytes every time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instant_replay_of_both_runtimes_is_deterministic() {
    for output in ["timeline", "jsonl"] {
        let args = [
            "--controller",
            "go,reconcile=300ms,fail=1",
            "--controller",
            "rs,runtime=kube,reconcile=300ms,fail=1,debounce=500ms,error-requeue=1s",
            "-o",
            output,
        ];
        let first = replay("expired-watch", &args).await;
        let kube = match output {
            "timeline" => "⇐ rs(kube)  returned",
            _ => r#""controller":"rs","runtime":"kube""#,
        };
        assert!(first.contains(kube), "{first}");
        for _ in 0..2 {
            assert_eq!(replay("expired-watch", &args).await, first, "{output}");
        }
    }
}

/// `debounce=` postpones a request (kube-runtime's trailing-edge `debounced_scheduler`): the
/// request for worker-2 from the first list comes due after the relist removed it from the
/// store, and the dispatch finds nothing (`ObjectNotFound`): no reconcile, a `skipped` row.
/// `error-requeue=` is the error policy's `Action::requeue`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_debounced_request_for_an_object_gone_from_the_store_is_skipped() {
    let args = [
        "--controller",
        "rs,runtime=kube,debounce=4s,fail=1,error-requeue=2s",
    ];
    let timeline = replay("expired-watch", &args).await;
    let row = timeline
        .lines()
        .find(|l| l.contains("⇒ rs(kube)") && l.contains("demo/worker-2"))
        .unwrap_or_else(|| panic!("{timeline}"));
    assert!(
        row.starts_with("17:31:42.095"),
        "due 4 s after the first list: {row}"
    );
    assert!(
        row.ends_with(
            "relist  waited 4.00s  debounced  skipped: not in the store (ObjectNotFound)"
        ),
        "{row}"
    );
    let error = timeline
        .lines()
        .find(|l| l.contains("⇐ rs(kube)") && l.contains("demo/worker-1"))
        .unwrap_or_else(|| panic!("{timeline}"));
    assert!(error.ends_with("error → retry in 2.00s"), "{error}");

    let mut jsonl = args.to_vec();
    jsonl.extend(["-o", "jsonl", "-q"]);
    let all = json_lines(replay("expired-watch", &jsonl).await.as_bytes());
    let rs = records(&all, "reconcile", "rs");
    let skipped: Vec<_> = rs.iter().filter(|r| r["skipped"] == true).collect();
    assert_eq!(skipped.len(), 1, "{rs:#?}");
    assert_eq!(skipped[0]["key"], "demo/worker-2");
    assert_eq!(skipped[0]["result"], "skipped");
    assert_eq!(skipped[0]["debounced"], true);
    let retried = rs
        .iter()
        .find(|r| r["key"] == "demo/worker-1" && r["attempt"] == 2)
        .unwrap_or_else(|| panic!("{rs:#?}"));
    assert_eq!(retried["reason"], "error requeue");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_of_the_other_runtime_are_usage_errors_of_one_sentence() {
    let path = bundled("expired-watch");
    for (spec, says) in [
        (
            "web,runtime=kube,queue=priority",
            "--controller web: queue=priority chooses a client-go controller's queue, and \
             runtime=kube has none",
        ),
        (
            "web,runtime=kube,resync=30s",
            "--controller web: resync= is a client-go handler's resync period, and \
             kube-runtime's watcher never resyncs",
        ),
        (
            "web,debounce=1s",
            "--controller web: debounce= is a kube-runtime Controller's setting",
        ),
        (
            "web,error-requeue=1s",
            "--controller web: error-requeue= is a kube-runtime Controller's setting",
        ),
        (
            "web,runtime=rust",
            r#"runtime="rust" for controller "web": expected client-go"#,
        ),
    ] {
        let out = run_offline(&["replay", path_str(&path), "--controller", spec], None).await;
        assert_usage_sentence(&out, spec, says);
    }
}

/// A live watch: kube-runtime's Controller on the session's clock, driven by its own thread.
/// Every update reaches its store and requests a reconcile; the last reconcile reads the last
/// update, and the summary names the runtime.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_kube_controller_reconciles_the_latest_object() {
    let (server, _dir, kubeconfig) = server_with_configmaps(1).await;
    let args = [
        "watch",
        "cm",
        "-o",
        "jsonl",
        "--object",
        "none",
        "--controller",
        "web,runtime=kube,reconcile=100ms",
    ];
    let mut bin = Running::spawn(&kubeconfig, &args);
    tokio::task::block_in_place(|| {
        bin.read_until("the initial list's reconcile", |l| {
            l.contains(r#""kind":"reconcile""#) && l.contains(r#""runtime":"kube""#)
        });
    });
    let mut last = 0;
    for v in 1..=3 {
        last = server.update("configmaps", cm("cm-0", &v.to_string()));
    }
    let last = last.to_string();
    tokio::task::block_in_place(|| {
        bin.read_until("the reconcile of the last update", |l| {
            serde_json::from_str::<Value>(l)
                .is_ok_and(|r| r["kind"] == "reconcile" && r["resourceVersion"] == last.as_str())
        });
    });
    let ended = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
    let all = json_lines(ended.stdout.as_bytes());
    let reconciles = records(&all, "reconcile", "web");
    assert!(
        reconciles.iter().all(|r| r["runtime"] == "kube"),
        "{reconciles:#?}"
    );
    for pair in reconciles.windows(2) {
        assert!(
            pair[1]["startedAt"].as_str() >= pair[0]["time"].as_str(),
            "never two reconciles of one object at once: {pair:#?}"
        );
    }
    assert_eq!(
        summary_row(&ended.stderr, "queue, workers"),
        ["kube-runtime scheduler, unbounded"]
    );
}

/// `predicate=generation` on a Deployment whose rollout mostly updates its status: both
/// runtimes drop the status-only updates (generation unchanged) and reconcile the creation and
/// each spec change (controller-runtime's `GenerationChangedPredicate.Update`; kube-runtime's
/// `predicate_filter` with `predicates::generation`, which sees objects, so it drops an
/// unchanged generation whatever the event).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_status_only_update_is_filtered_by_generation_in_both_runtimes() {
    let args = [
        "--controller",
        "go,predicate=generation",
        "--controller",
        "rs,runtime=kube,predicate=generation",
    ];
    let mut jsonl = args.to_vec();
    jsonl.extend(["-o", "jsonl", "-q"]);
    let all = json_lines(replay("rollout-deployments", &jsonl).await.as_bytes());
    for controller in ["go", "rs"] {
        let lines = records(&all, "reconcile", controller);
        let (filtered, ran): (Vec<&&Value>, Vec<&&Value>) =
            lines.iter().partition(|r| r.get("filtered").is_some());
        // Created at generation 1, then spec changes to 2, 3 and 4: four reconciles; the 22
        // other updates change the status only.
        let versions: Vec<&str> = ran
            .iter()
            .map(|r| r["resourceVersion"].as_str().unwrap())
            .collect();
        assert_eq!(
            versions,
            ["26349", "26377", "26454", "26481"],
            "{controller}"
        );
        assert_eq!(filtered.len(), 22, "{controller}: {filtered:#?}");
        assert!(
            filtered
                .iter()
                .all(|r| r["filtered"] == "generation" && r["result"] == "filtered"),
            "{controller}: {filtered:#?}"
        );
    }
    let timeline = replay("rollout-deployments", &args).await;
    for label in ["go", "rs(kube)"] {
        let row = timeline
            .lines()
            .find(|l| l.contains(&format!("⇒ {label} ")) && l.contains("predicate"))
            .unwrap_or_else(|| panic!("{label}: {timeline}"));
        assert!(row.ends_with("demo/web  filtered by generation"), "{row}");
    }
}

/// `owns=`: the controller runs on the first resource only, and each event of an owned object
/// requests a reconcile of its owner: client-go's through controller-runtime's
/// `EnqueueRequestForOwner(…, OnlyControllerOwner())` on a handler of the owned resource,
/// kube-runtime's through `trigger_owners` on the owned resource's watcher events.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owned_replica_set_reconciles_its_deployment_in_both_runtimes() {
    let server = crate::support::fake_apiserver::FakeApiServer::start().await;
    server.create(
        "deployments.apps",
        serde_json::json!({"metadata": {"name": "web", "namespace": "default"}}),
    );
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let args = [
        "watch",
        "deploy,rs",
        "-o",
        "jsonl",
        "--object",
        "none",
        "--controller",
        "go,owns=rs",
        "--controller",
        "rs,runtime=kube,owns=rs",
    ];
    let mut bin = Running::spawn(&kubeconfig, &args);
    let reconciled = |l: &str, runtime: &str, reason: Option<&str>| {
        serde_json::from_str::<Value>(l).is_ok_and(|r| {
            r["kind"] == "reconcile"
                && r["runtime"] == runtime
                && r["key"] == "default/web"
                && reason.is_none_or(|reason| r["reason"] == reason)
        })
    };
    let seen = std::cell::RefCell::new(Vec::<String>::new());
    tokio::task::block_in_place(|| {
        bin.read_until("both controllers' first reconcile of default/web", |l| {
            seen.borrow_mut().push(l.to_owned());
            let lines = seen.borrow();
            lines.iter().any(|l| reconciled(l, "client-go", None))
                && lines.iter().any(|l| reconciled(l, "kube", None))
        });
    });
    server.create(
        "replicasets.apps",
        serde_json::json!({"metadata": {
            "name": "web-7b9c",
            "namespace": "default",
            "ownerReferences": [{
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "name": "web",
                "uid": "d-1",
                "controller": true
            }]
        }}),
    );
    let owned = "owned object updated";
    tokio::task::block_in_place(|| {
        bin.read_until("both controllers' reconcile for the ReplicaSet", |l| {
            seen.borrow_mut().push(l.to_owned());
            let lines = seen.borrow();
            lines
                .iter()
                .any(|l| reconciled(l, "client-go", Some(owned)))
                && lines.iter().any(|l| reconciled(l, "kube", Some(owned)))
        });
    });
    let ended = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
    let all = json_lines(ended.stdout.as_bytes());
    let reconciles: Vec<&Value> = all.iter().filter(|l| l["kind"] == "reconcile").collect();
    assert!(
        reconciles.iter().all(|r| r["key"] == "default/web"),
        "only the owner is reconciled, on the first resource: {reconciles:#?}"
    );
    for r in reconciles.iter().filter(|r| r["reason"] == owned) {
        assert!(
            r["ownedObject"]
                .as_str()
                .is_some_and(|o| o.starts_with("default/web-7b9c (replicasets")),
            "{r:#?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owns_must_name_a_later_resource_of_the_session() {
    let path = bundled("expired-watch");
    for (args, says) in [
        (
            vec!["replay", path_str(&path), "--controller", "web,owns=rs"],
            "--controller web: owns=rs needs a second resource, and a replay has one",
        ),
        (
            vec!["watch", "deploy,rs", "--controller", "web,owns=po"],
            "--controller web: owns=po names no resource of this watch (deploy, rs)",
        ),
        (
            vec!["watch", "deploy,rs", "--controller", "web,owns=deploy"],
            "--controller web: owns=deploy names the controller's own resource",
        ),
    ] {
        let out = run_offline(&args, None).await;
        assert_usage_sentence(&out, &format!("{args:?}"), says);
    }
}

/// `record --controller NAME,runtime=kube` runs kube-runtime's Controller on the recorded
/// stream (its rows on the stderr timeline) and writes the flag into the header's `replayWith`,
/// so that `replay FILE` runs it again on the recording's clock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_runs_a_kube_controller_and_its_recording_replays_it() {
    let (server, dir, kubeconfig) = server_with_configmaps(1).await;
    let path = dir.path().join("kube.jsonl");
    let mut bin = Running::spawn(
        &kubeconfig,
        &[
            "record",
            "cm",
            "-f",
            path_str(&path),
            "--controller",
            "rs,runtime=kube",
        ],
    );
    tokio::task::block_in_place(|| {
        bin.read_stderr_until("the initial list's reconcile", |l| {
            l.contains("⇐ rs(kube)") && l.contains("default/cm-0")
        })
    });
    let rv = server.update("configmaps", cm("cm-0", "2")).to_string();
    tokio::task::block_in_place(|| {
        bin.read_stderr_until("the update's reconcile", |l| {
            l.contains("⇒ rs(kube)")
                && l.contains("object updated  waited")
                && l.contains(&format!("rv {rv}"))
        })
    });
    let live = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(live.status.code(), Some(0), "{}", live.stderr);
    let replayed = run_offline(&["replay", path_str(&path), "-q"], None).await;
    assert_eq!(replayed.status.code(), Some(0), "{}", stderr(&replayed));
    let timeline = String::from_utf8(replayed.stdout).unwrap();
    let kube: Vec<&str> = timeline
        .lines()
        .filter(|l| l.contains("⇒ rs(kube)  reconcile"))
        .collect();
    assert_eq!(kube.len(), 2, "{timeline}");
    assert!(kube[0].contains("default/cm-0  relist"), "{}", kube[0]);
    assert!(
        kube[1].contains("default/cm-0  object updated") && kube[1].ends_with(&format!("rv {rv}")),
        "{}",
        kube[1]
    );
}

/// `| head`: the write of a kube controller's row fails, the session stops from inside that
/// write, and the stop reaches the controller's own lane, which must not wait for itself. The
/// recording makes far more rows than a pipe holds, all of them the kube controller's, so that a
/// write fails while the replay still runs. The replay exits quietly (bounded by `timeout`, so
/// that a hang fails rather than blocks the suite).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kube_controllers_replay_piped_into_head_exits_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.jsonl");
    let cm = |rv: u64| {
        serde_json::json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {
            "name": "a", "namespace": "default", "resourceVersion": rv.to_string()},
            "data": {"v": rv.to_string()}})
    };
    let mut lines = vec![
        serde_json::json!({"kind": "header", "v": 1, "resource": {"group": "", "version": "v1",
            "kind": "ConfigMap", "plural": "configmaps", "namespaced": true},
            "namespace": "default", "startedAt": "2026-01-05T10:00:00Z"}),
        serde_json::json!({"t": 0, "type": "LIST", "resourceVersion": "1", "items": [cm(1)]}),
    ];
    for rv in 2..3000_u64 {
        lines.push(serde_json::json!({"t": rv, "type": "MODIFIED", "object": cm(rv)}));
    }
    let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    for extra in ["", "--compare runtime=client-go,runtime=kube"] {
        let mut bash = std::process::Command::new("bash");
        bash.arg("-c")
            .arg(format!(
                "timeout 60 '{}' replay '{}' -q --view reconciles --controller web,runtime=kube \
                 {extra} | head -2; exit ${{PIPESTATUS[0]}}",
                env!("CARGO_BIN_EXE_kubectl-deltas"),
                path.display()
            ))
            .env_remove("RUST_BACKTRACE");
        let out = crate::support::binary::output(bash).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{extra}: {stderr}");
        assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 2);
        assert!(!stderr.contains("error"), "{extra}: {stderr}");
    }
}

/// The summary counts a kube-runtime controller in its own terms: the error policy's requeues,
/// requests merged into a waiting one, the most requests waiting at once, beside a client-go
/// controller's workqueue metrics.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_summary_counts_a_kube_controllers_requeues_and_waiting_requests() {
    let path = bundled("controller-runtimes");
    let args = [
        "replay",
        path_str(&path),
        "--view",
        "reconciles",
        "--controller",
        "go,fail=2,fail-keys=demo/api",
        "--controller",
        "rs,runtime=kube,fail=2,fail-keys=demo/api",
    ];
    let out = run_offline(&args, None).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let summary = stderr(&out);
    let row = |label| summary_row(&summary, label);
    assert_eq!(row("of which errors"), ["2", "2"], "{summary}");
    assert_eq!(
        row("retries (workqueue_retries_total) / error requeues"),
        ["2", "2"],
        "{summary}"
    );
    assert_eq!(
        row("max depth (workqueue_depth) / most requests waiting"),
        ["3", "3"],
        "{summary}"
    );
}
