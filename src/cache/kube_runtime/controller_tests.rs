use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::*;
use crate::cache::test_objects::{cm, with_meta};
use crate::object::Object;

/// Reconciles take `duration`; the results listed per key are returned in turn, then `Ok`.
struct Script {
    duration: Duration,
    results: HashMap<String, Vec<ReconcileResult>>,
}

impl Script {
    fn ok(ms: u64) -> Self {
        Script {
            duration: Duration::from_millis(ms),
            results: HashMap::new(),
        }
    }

    fn then(mut self, key: &str, results: &[ReconcileResult]) -> Self {
        self.results.insert(key.into(), results.to_vec());
        self
    }
}

impl Reconciler<String> for Script {
    type Seen = ();

    fn reconcile(&mut self, key: &String, _attempt: u32, _at: Instant) -> Outcome<()> {
        let result = match self.results.get_mut(key) {
            Some(r) if !r.is_empty() => r.remove(0),
            _ => ReconcileResult::Ok,
        };
        Outcome {
            result,
            duration: self.duration,
            seen: (),
        }
    }
}

fn deployments() -> OwnerKind {
    OwnerKind {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        namespaced: true,
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

struct Run {
    c: KubeController<Script>,
    t0: Instant,
}

impl Run {
    fn new(config: ControllerConfig, script: Script) -> Self {
        let t0 = Instant::now();
        Run {
            c: KubeController::new(config, script, t0),
            t0,
        }
    }

    fn main(&mut self, at: u64, ev: WatcherEvent) -> &mut Self {
        self.c.main_event(&ev, self.t0 + ms(at));
        self
    }

    fn owned(&mut self, at: u64, ev: WatcherEvent) -> &mut Self {
        self.c.owned_event("replicasets", &ev, self.t0 + ms(at));
        self
    }

    fn list(&mut self, at: u64, objs: &[Arc<Object>]) -> &mut Self {
        self.main(at, WatcherEvent::Init);
        for o in objs {
            self.main(at, WatcherEvent::InitApply(o.clone()));
        }
        self.main(at, WatcherEvent::InitDone)
    }

    /// Runs to the end; every reconcile as `key@start-end:result (reason) #attempt`, and every
    /// skip as `key@t skipped`.
    fn reconciles(&mut self) -> Vec<String> {
        self.c.run_through(self.t0 + Duration::from_secs(3600));
        let t0 = self.t0;
        let since = |t: Instant| t.duration_since(t0).as_millis();
        self.c
            .drain()
            .into_iter()
            .filter_map(|r| match r {
                Record::Reconciled(r) => Some(format!(
                    "{}@{}-{}:{:?} ({}) #{}",
                    r.key,
                    since(r.started_at),
                    since(r.ended_at),
                    r.result,
                    r.reason,
                    r.attempt
                )),
                Record::Skipped { at, key, .. } => Some(format!("{key}@{} skipped", since(at))),
                _ => None,
            })
            .collect()
    }

    fn records(&mut self) -> Vec<Record<()>> {
        self.c.run_through(self.t0 + Duration::from_secs(3600));
        self.c.drain()
    }
}

fn config() -> ControllerConfig {
    ControllerConfig::new(deployments())
}

#[test]
fn trigger_self_applied_objects_request_a_reconcile_each() {
    let mut r = Run::new(config(), Script::ok(100));
    r.list(0, &[cm("demo", "a", 1)])
        .main(500, WatcherEvent::Apply(cm("demo", "a", 2)));
    assert_eq!(
        r.reconciles(),
        [
            "demo/a@0-100:Ok (relist) #1",
            "demo/a@500-600:Ok (object updated) #1"
        ]
    );
}

#[test]
fn controller_new_main_delete_triggers_nothing() {
    let mut r = Run::new(config(), Script::ok(100));
    r.list(0, &[cm("demo", "a", 1)])
        .main(500, WatcherEvent::Delete(cm("demo", "a", 2)));
    let records = r.records();
    assert!(
        records
            .iter()
            .any(|r| matches!(r, Record::DeleteIgnored { key, .. } if key == "demo/a"))
    );
    let requests = records
        .iter()
        .filter(|r| matches!(r, Record::Requested { .. }))
        .count();
    let skips = records
        .iter()
        .filter(|r| matches!(r, Record::Skipped { .. }))
        .count();
    assert_eq!(
        (requests, skips),
        (1, 0),
        "only the list's request, and no dispatch after the delete"
    );
}

#[test]
fn applier_object_not_found_is_skipped_and_not_requeued() {
    // Requested while the store is not ready, deleted before it is: dispatch finds it missing.
    let mut r = Run::new(config(), Script::ok(100));
    r.main(0, WatcherEvent::Apply(cm("demo", "gone", 1)))
        .main(10, WatcherEvent::Delete(cm("demo", "gone", 2)))
        .list(20, &[cm("demo", "a", 1)]);
    assert_eq!(
        r.reconciles(),
        ["demo/gone@20 skipped", "demo/a@20-120:Ok (relist) #1"]
    );
}

#[test]
fn delay_tasks_until_the_store_is_ready() {
    let mut r = Run::new(config(), Script::ok(100));
    r.main(0, WatcherEvent::Init)
        .main(0, WatcherEvent::InitApply(cm("demo", "a", 1)))
        .main(700, WatcherEvent::InitDone);
    assert_eq!(r.reconciles(), ["demo/a@700-800:Ok (relist) #1"]);
}

#[test]
fn runner_respects_max_concurrent_executions() {
    let mut cfg = config();
    cfg.concurrency = 1;
    let mut r = Run::new(cfg, Script::ok(100));
    r.list(0, &[cm("demo", "a", 1), cm("demo", "b", 1)]);
    assert_eq!(
        r.reconciles(),
        [
            "demo/a@0-100:Ok (relist) #1",
            "demo/b@100-200:Ok (relist) #1"
        ]
    );
    let mut unbounded = Run::new(config(), Script::ok(100));
    unbounded.list(0, &[cm("demo", "a", 1), cm("demo", "b", 1)]);
    assert_eq!(
        unbounded.reconciles(),
        ["demo/a@0-100:Ok (relist) #1", "demo/b@0-100:Ok (relist) #1"]
    );
}

#[test]
fn runner_should_never_run_two_instances_at_once_and_coalesces_one_follow_up() {
    let mut r = Run::new(config(), Script::ok(100));
    r.list(0, &[cm("demo", "a", 1)])
        .main(10, WatcherEvent::Apply(cm("demo", "a", 2)))
        .main(20, WatcherEvent::Apply(cm("demo", "a", 3)))
        .main(30, WatcherEvent::Apply(cm("demo", "a", 4)));
    assert_eq!(
        r.reconciles(),
        [
            "demo/a@0-100:Ok (relist) #1",
            "demo/a@100-200:Ok (object updated) #1"
        ]
    );
}

#[test]
fn reschedule_reconciliation_requeues_after_the_reconcilers_action() {
    let script = Script::ok(100).then("demo/a", &[ReconcileResult::RequeueAfter(ms(1000))]);
    let mut r = Run::new(config(), script);
    r.list(0, &[cm("demo", "a", 1)]);
    assert_eq!(
        r.reconciles(),
        [
            "demo/a@0-100:RequeueAfter(1s) (relist) #1",
            "demo/a@1100-1200:Ok (requeue) #1"
        ]
    );
}

#[test]
fn error_policy_requeues_after_error_requeue_and_attempts_count_failures_in_a_row() {
    let e = ReconcileResult::Error;
    let script = Script::ok(100).then("demo/a", &[e, e]);
    let mut r = Run::new(config(), script);
    r.list(0, &[cm("demo", "a", 1)]);
    assert_eq!(
        r.reconciles(),
        [
            "demo/a@0-100:Error (relist) #1",
            "demo/a@5100-5200:Error (error requeue) #2",
            "demo/a@10200-10300:Ok (error requeue) #3",
        ]
    );
}

#[test]
fn schedule_message_a_watch_event_supersedes_a_pending_requeue() {
    let script = Script::ok(100).then("demo/a", &[ReconcileResult::Error]);
    let mut r = Run::new(config(), script);
    r.list(0, &[cm("demo", "a", 1)])
        .main(1000, WatcherEvent::Apply(cm("demo", "a", 2)));
    // The error requeue (due at 5100) is replaced by the event's request; that reconcile
    // succeeds, so nothing runs at 5100.
    assert_eq!(
        r.reconciles(),
        [
            "demo/a@0-100:Error (relist) #1",
            "demo/a@1000-1100:Ok (object updated) #2"
        ]
    );
}

#[test]
fn reschedule_reconciliation_is_dropped_while_a_follow_up_is_pending() {
    let script = Script::ok(100).then("demo/a", &[ReconcileResult::RequeueAfter(ms(50))]);
    let mut r = Run::new(config(), script);
    r.list(0, &[cm("demo", "a", 1)])
        .main(10, WatcherEvent::Apply(cm("demo", "a", 2)));
    assert_eq!(
        r.reconciles(),
        [
            "demo/a@0-100:RequeueAfter(50ms) (relist) #1",
            "demo/a@100-200:Ok (object updated) #1"
        ]
    );
}

#[test]
fn debounced_scheduler_postpones_a_busy_object() {
    let mut cfg = config();
    cfg.debounce = ms(300);
    let mut r = Run::new(cfg, Script::ok(100));
    r.list(0, &[cm("demo", "a", 1)]);
    for (i, at) in [200, 400, 600].into_iter().enumerate() {
        r.main(at, WatcherEvent::Apply(cm("demo", "a", 2 + i as u64)));
    }
    assert_eq!(
        r.reconciles(),
        ["demo/a@900-1000:Ok (object updated) #1"],
        "the relist's request at 300 was pushed back by each event"
    );
}

#[test]
fn trigger_owners_reconciles_the_owner_on_every_owned_change_delete_included() {
    let rs = |rv| {
        with_meta(
            "apps/v1",
            "ReplicaSet",
            "demo",
            "web-7b9c",
            rv,
            json!({ "ownerReferences": [{ "apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "u", "controller": true }] }),
        )
    };
    let web = with_meta("apps/v1", "Deployment", "demo", "web", 1, json!({}));
    let mut r = Run::new(config(), Script::ok(100));
    r.list(0, &[web])
        .owned(500, WatcherEvent::Apply(rs(2)))
        .owned(1000, WatcherEvent::Delete(rs(3)));
    assert_eq!(
        r.reconciles(),
        [
            "demo/web@0-100:Ok (relist) #1",
            "demo/web@500-600:Ok (owned object updated) #1",
            "demo/web@1000-1100:Ok (owned object updated) #1",
        ]
    );
}

#[test]
fn predicate_filter_drops_unchanged_generations_deletes_included() {
    let mut cfg = config();
    cfg.predicates = Predicates::parse("generation").expect("predicate");
    let d = |rv, g| {
        with_meta(
            "apps/v1",
            "Deployment",
            "demo",
            "web",
            rv,
            json!({ "generation": g }),
        )
    };
    let rs = |rv| {
        with_meta(
            "apps/v1",
            "ReplicaSet",
            "demo",
            "web-7b9c",
            rv,
            json!({ "generation": 1, "ownerReferences": [{ "apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "u" }] }),
        )
    };
    let mut r = Run::new(cfg, Script::ok(100));
    r.list(0, &[d(1, 1)])
        .main(500, WatcherEvent::Apply(d(2, 1)))
        .owned(600, WatcherEvent::Apply(rs(3)))
        .owned(900, WatcherEvent::Delete(rs(4)));
    let records = r.records();
    let filtered: Vec<(&str, Option<&str>)> = records
        .iter()
        .filter_map(|r| match r {
            Record::Filtered { key, owned, .. } => Some((key.as_str(), owned.as_deref())),
            _ => None,
        })
        .collect();
    assert_eq!(
        filtered,
        [("demo/web", None), ("demo/web-7b9c", Some("replicasets"))],
        "the status-only update and the owned delete with an unchanged generation"
    );
    let reconciles = records
        .iter()
        .filter(|r| matches!(r, Record::Reconciled(_)))
        .count();
    assert_eq!(reconciles, 2);
}

#[test]
fn relist_reconciles_every_listed_object_and_never_the_vanished_one() {
    let mut r = Run::new(config(), Script::ok(100));
    r.list(0, &[cm("demo", "a", 1), cm("demo", "b", 2)])
        .main(1000, WatcherEvent::Error("410 Expired".into()))
        .list(2000, &[cm("demo", "a", 1)]);
    assert_eq!(
        r.reconciles(),
        [
            "demo/a@0-100:Ok (relist) #1",
            "demo/b@0-100:Ok (relist) #1",
            "demo/a@2000-2100:Ok (relist) #1",
        ]
    );
}

#[test]
fn stream_backoff_is_noted_with_default_backoffs_delay() {
    let mut r = Run::new(config(), Script::ok(100));
    r.list(0, &[cm("demo", "a", 1)])
        .main(1000, WatcherEvent::Error("410 Expired".into()))
        .main(1000, WatcherEvent::Init)
        .main(1000, WatcherEvent::InitDone)
        .main(2000, WatcherEvent::Error("410 Expired".into()));
    let notes: Vec<String> = r
        .records()
        .into_iter()
        .filter_map(|r| match r {
            Record::Note { text, .. } => Some(text),
            _ => None,
        })
        .collect();
    // No request passed between the two errors: the second waits twice as long.
    assert_eq!(
        notes,
        [
            "kube-runtime: 410 Expired: its Controller stops reading its streams for 800ms to 1s 600ms (trigger backoff); the times here are the recording's",
            "kube-runtime: 410 Expired: its Controller stops reading its streams for 1s 600ms to 3s 200ms (trigger backoff); the times here are the recording's",
        ]
    );
}

#[test]
fn stream_backoff_resets_once_a_request_passes() {
    let mut r = Run::new(config(), Script::ok(100));
    r.list(0, &[cm("demo", "a", 1)])
        .main(1000, WatcherEvent::Error("410 Expired".into()))
        .list(1000, &[cm("demo", "a", 1)])
        .main(2000, WatcherEvent::Error("410 Expired".into()));
    let notes = r
        .records()
        .into_iter()
        .filter(
            |r| matches!(r, Record::Note { text, .. } if text.contains("for 800ms to 1s 600ms")),
        )
        .count();
    assert_eq!(notes, 2, "the relist's request reset the backoff");
}
