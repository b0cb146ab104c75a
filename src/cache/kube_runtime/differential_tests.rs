//! The model against kube-runtime 5.0.0 itself: random watcher event sequences go through
//! kube-runtime's own `reflector` store, `applied_objects`/`touched_objects`, `predicate_filter`,
//! `trigger_self`/`trigger_owners` and `applier` (the scheduler, runner and dispatch that
//! `Controller::run` drives) on tokio's paused clock, and through [`KubeController`]; both must
//! run the same reconciles (object, start, result) and skip the same dispatches.
//!
//! What this cannot compare, and why:
//! - the trigger backoff: it lives in `Controller::run` (a `StreamBackoff` around the triggers,
//!   jittered at random); the model notes it instead of waiting;
//! - a concurrency limit with several requests held at once: kube-runtime releases them in a
//!   `HashSet`'s order, which is not a function of the stream (the unit tests cover the limit);
//! - the predicate TTL: `PredicateFilter` reads `std::time::Instant`, not tokio's paused clock.
//!
//! Input times are whole seconds (the initial list's `InitDone` 300 ms before one), reconcile
//! lengths 1 or 501 ms past a multiple of a second, requeues whole seconds and the debounce
//! 2250 ms, so an input never arrives at the instant a reconcile ends or a request comes due:
//! at such a tie kube-runtime's order is that of its tasks' wake-ups, which neither side fixes.

use std::collections::{HashMap, VecDeque};
use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{Stream, StreamExt, stream};
use kube::api::ApiResource;
use kube::runtime::controller::{
    Action, Config, Error as ControllerError, applier, trigger_owners, trigger_self,
};
use kube::runtime::reflector::reflector;
use kube::runtime::reflector::store::Writer;
use kube::runtime::utils::Predicate;
use kube::runtime::watcher::{self, Event};
use kube::runtime::{WatchStreamExt, predicates};
use proptest::prelude::*;
use serde_json::json;

use super::*;
use crate::cache::test_objects::with_meta;
use crate::cache::triggers::{OwnerKind, Predicates};
use crate::cache::workqueue::{Outcome, ReconcileResult, Reconciler};
use crate::object::Object;

const KEYS: u8 = 3;

fn deployments() -> ApiResource {
    ApiResource {
        group: "apps".into(),
        version: "v1".into(),
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        plural: "deployments".into(),
    }
}

fn replicasets() -> ApiResource {
    ApiResource {
        kind: "ReplicaSet".into(),
        plural: "replicasets".into(),
        ..deployments()
    }
}

/// One step of a scenario, a second after the one before.
#[derive(Debug, Clone)]
enum Op {
    /// Create or update deployment `key`; `spec` bumps its generation.
    Apply {
        key: u8,
        spec: bool,
    },
    Delete {
        key: u8,
    },
    /// Relist: the objects not kept vanish without a Delete.
    Relist {
        keep: Vec<bool>,
    },
    /// Create or update the ReplicaSet owned by deployment `owner`; `spec` bumps its generation.
    OwnedApply {
        owner: u8,
        spec: bool,
    },
    OwnedDelete {
        owner: u8,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..KEYS, any::<bool>()).prop_map(|(key, spec)| Op::Apply { key, spec }),
        1 => (0..KEYS).prop_map(|key| Op::Delete { key }),
        1 => prop::collection::vec(any::<bool>(), KEYS as usize).prop_map(|keep| Op::Relist { keep }),
        2 => (0..KEYS, any::<bool>()).prop_map(|(owner, spec)| Op::OwnedApply { owner, spec }),
        1 => (0..KEYS).prop_map(|owner| Op::OwnedDelete { owner }),
    ]
}

/// A reconcile's length and result.
fn outcome() -> impl Strategy<Value = (u64, ReconcileResult)> {
    (
        prop::sample::select(vec![1u64, 501, 1501, 2501]),
        prop_oneof![
            3 => Just(ReconcileResult::Ok),
            2 => Just(ReconcileResult::Error),
            2 => (1u64..4).prop_map(|s| ReconcileResult::RequeueAfter(Duration::from_secs(s))),
        ],
    )
}

#[derive(Debug, Clone)]
struct Scenario {
    ops: Vec<Op>,
    /// Seconds between the initial list's `Init` and its `InitDone`.
    init_done_after: u64,
    /// Per deployment, the results of its reconciles in turn (then 1 ms, Ok).
    script: Vec<Vec<(u64, ReconcileResult)>>,
    debounce_ms: u64,
    error_requeue_secs: u64,
    predicate: Option<&'static str>,
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (
        prop::collection::vec(op(), 1..14),
        0u64..2,
        prop::collection::vec(prop::collection::vec(outcome(), 0..4), KEYS as usize),
        prop::sample::select(vec![0u64, 0, 2250]),
        1u64..6,
        prop::sample::select(vec![
            None,
            Some("generation"),
            Some("labels"),
            Some("generation+labels"),
        ]),
    )
        .prop_map(
            |(ops, init_done_after, script, debounce_ms, error_requeue_secs, predicate)| Scenario {
                ops,
                init_done_after,
                script,
                debounce_ms,
                error_requeue_secs,
                predicate,
            },
        )
}

/// Which stream an event is on.
#[derive(Debug, Clone)]
enum Input {
    Main(Event<Object>),
    Owned(Event<Object>),
}

/// The scenario as timed watcher events (ms from the start), the objects made as a server would.
fn events(s: &Scenario) -> Vec<(u64, Vec<Input>)> {
    let mut rv = 10u64;
    let mut uid = 0u64;
    let mut live: HashMap<u8, (u64, u64)> = HashMap::new(); // key → (generation, uid)
    let mut rs_live: HashMap<u8, (u64, u64)> = HashMap::new();
    let deploy = |k: u8, rv: u64, (generation, uid): (u64, u64)| {
        let labels = json!({ "gen": (generation / 2).to_string() });
        with_meta(
            "apps/v1",
            "Deployment",
            "demo",
            &format!("d{k}"),
            rv,
            json!({ "generation": generation, "uid": format!("u{uid}"), "labels": labels }),
        )
    };
    let rs = |k: u8, rv: u64, (generation, uid): (u64, u64)| {
        with_meta(
            "apps/v1",
            "ReplicaSet",
            "demo",
            &format!("d{k}-rs"),
            rv,
            json!({ "generation": generation, "uid": format!("r{uid}"), "ownerReferences": [{ "apiVersion": "apps/v1", "kind": "Deployment", "name": format!("d{k}"), "uid": "x", "controller": true }] }),
        )
    };
    let main = |e: Event<Object>| Input::Main(e);
    let mut out = Vec::new();
    for k in 0..KEYS {
        uid += 1;
        live.insert(k, (1, uid));
    }
    let mut list: Vec<Input> = vec![main(Event::Init)];
    for k in 0..KEYS {
        rv += 1;
        list.push(main(Event::InitApply((*deploy(k, rv, live[&k])).clone())));
    }
    if s.init_done_after == 0 {
        list.push(main(Event::InitDone));
        out.push((0, list));
    } else {
        out.push((0, list));
        out.push((s.init_done_after * 1000 - 300, vec![main(Event::InitDone)]));
    }
    for (i, op) in s.ops.iter().enumerate() {
        let at = (i as u64 + 2) * 1000;
        rv += 1;
        let batch = match op {
            Op::Apply { key, spec } => {
                let e = live.entry(*key).or_insert_with(|| {
                    uid += 1;
                    (0, uid)
                });
                if *spec || e.0 == 0 {
                    e.0 += 1;
                }
                vec![main(Event::Apply((*deploy(*key, rv, *e)).clone()))]
            }
            Op::Delete { key } => match live.remove(key) {
                Some(e) => vec![main(Event::Delete((*deploy(*key, rv, e)).clone()))],
                None => continue,
            },
            Op::Relist { keep } => {
                live.retain(|k, _| keep[usize::from(*k)]);
                let mut b = vec![main(Event::Init)];
                let mut keys: Vec<u8> = live.keys().copied().collect();
                keys.sort_unstable();
                for k in keys {
                    rv += 1;
                    b.push(main(Event::InitApply((*deploy(k, rv, live[&k])).clone())));
                }
                b.push(main(Event::InitDone));
                b
            }
            Op::OwnedApply { owner, spec } => {
                let e = rs_live.entry(*owner).or_insert_with(|| {
                    uid += 1;
                    (0, uid)
                });
                if *spec || e.0 == 0 {
                    e.0 += 1;
                }
                vec![Input::Owned(Event::Apply((*rs(*owner, rv, *e)).clone()))]
            }
            Op::OwnedDelete { owner } => match rs_live.remove(owner) {
                Some(e) => vec![Input::Owned(Event::Delete((*rs(*owner, rv, e)).clone()))],
                None => continue,
            },
        };
        out.push((at, batch));
    }
    out
}

fn to_model(e: &Event<Object>) -> WatcherEvent {
    match e {
        Event::Init => WatcherEvent::Init,
        Event::InitApply(o) => WatcherEvent::InitApply(Arc::new(o.clone())),
        Event::InitDone => WatcherEvent::InitDone,
        Event::Apply(o) => WatcherEvent::Apply(Arc::new(o.clone())),
        Event::Delete(o) => WatcherEvent::Delete(Arc::new(o.clone())),
    }
}

/// Plays the script: reconcile `n` of a deployment gets its `n`-th outcome.
struct Script(HashMap<String, VecDeque<(u64, ReconcileResult)>>);

impl Script {
    fn new(s: &Scenario) -> Self {
        Script(
            s.script
                .iter()
                .enumerate()
                .map(|(k, v)| (format!("demo/d{k}"), v.iter().copied().collect()))
                .collect(),
        )
    }

    fn next(&mut self, key: &str) -> (u64, ReconcileResult) {
        self.0
            .get_mut(key)
            .and_then(VecDeque::pop_front)
            .unwrap_or((1, ReconcileResult::Ok))
    }
}

impl Reconciler<String> for Script {
    type Seen = ();

    fn reconcile(&mut self, key: &String, _attempt: u32, _at: std::time::Instant) -> Outcome<()> {
        let (ms, result) = self.next(key);
        Outcome {
            result,
            duration: Duration::from_millis(ms),
            seen: (),
        }
    }
}

/// The model's reconciles and skips, as sorted lines.
fn model(s: &Scenario, evs: &[(u64, Vec<Input>)]) -> Vec<String> {
    let main = OwnerKind {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        namespaced: true,
    };
    let mut config = ControllerConfig::new(main);
    config.debounce = Duration::from_millis(s.debounce_ms);
    config.error_requeue = Duration::from_secs(s.error_requeue_secs);
    config.predicates = s
        .predicate
        .map(|p| Predicates::parse(p).expect("predicate"))
        .unwrap_or_default();
    let t0 = std::time::Instant::now();
    let mut c = KubeController::new(config, Script::new(s), t0);
    for (at, batch) in evs {
        let at = t0 + Duration::from_millis(*at);
        for input in batch {
            match input {
                Input::Main(e) => c.main_event(&to_model(e), at),
                Input::Owned(e) => c.owned_event("replicasets", &to_model(e), at),
            }
        }
    }
    c.run_through(t0 + HORIZON);
    let ms = |t: std::time::Instant| t.duration_since(t0).as_millis();
    let mut lines: Vec<String> = c
        .drain()
        .into_iter()
        .filter_map(|r| match r {
            Record::Reconciled(r) => Some(format!("{}@{} {:?}", r.key, ms(r.started_at), r.result)),
            Record::Skipped { at, key, .. } => Some(format!("{key}@{} skipped", ms(at))),
            _ => None,
        })
        .collect();
    lines.sort();
    lines
}

const HORIZON: Duration = Duration::from_secs(600);

#[derive(Debug, thiserror::Error)]
#[error("reconcile failed")]
struct Failed;

type Triggers = std::pin::Pin<Box<dyn Stream<Item = Result<Object, watcher::Error>> + Send>>;

/// `predicate_filter` with the scenario's predicate, as a kube-rs controller would write it.
fn filtered(
    s: &Scenario,
    objects: impl Stream<Item = Result<Object, watcher::Error>> + Send + 'static,
) -> Triggers {
    let config = kube::runtime::PredicateConfig::default();
    match s.predicate {
        None => objects.boxed(),
        Some("generation") => objects
            .predicate_filter(predicates::generation, config)
            .boxed(),
        Some("labels") => objects.predicate_filter(predicates::labels, config).boxed(),
        Some(_) => objects
            .predicate_filter(
                (predicates::generation as fn(&Object) -> Option<u64>)
                    .combine(predicates::labels as fn(&Object) -> Option<u64>),
                config,
            )
            .boxed(),
    }
}

/// The same events through kube-runtime's own store, triggers and applier.
fn kube_runtime(s: &Scenario, evs: &[(u64, Vec<Input>)]) -> Vec<String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a runtime");
    rt.block_on(async {
        let t0 = tokio::time::Instant::now();
        let timed = |pick: fn(&Input) -> Option<Event<Object>>| {
            let batches: Vec<(u64, Vec<Event<Object>>)> = evs
                .iter()
                .map(|(at, b)| (*at, b.iter().filter_map(pick).collect::<Vec<_>>()))
                .filter(|(_, b)| !b.is_empty())
                .collect();
            stream::iter(batches)
                .then(move |(at, b)| async move {
                    tokio::time::sleep_until(t0 + Duration::from_millis(at)).await;
                    stream::iter(b.into_iter().map(Ok::<_, watcher::Error>))
                })
                .flatten()
                .chain(stream::pending())
        };
        let writer = Writer::<Object>::new(deployments());
        let store = writer.as_reader();
        let main = timed(|i| match i {
            Input::Main(e) => Some(e.clone()),
            Input::Owned(_) => None,
        });
        let owned = timed(|i| match i {
            Input::Owned(e) => Some(e.clone()),
            Input::Main(_) => None,
        });
        let main = trigger_self(
            filtered(s, reflector(writer, main).applied_objects()),
            deployments(),
        );
        let owned = trigger_owners(
            filtered(s, owned.touched_objects()),
            deployments(),
            replicasets(),
        );
        let script = Arc::new(Mutex::new(Script::new(s)));
        let lines = Arc::new(Mutex::new(Vec::new()));
        let error_requeue = Duration::from_secs(s.error_requeue_secs);
        let config = Config::default().debounce(Duration::from_millis(s.debounce_ms));
        let reconciled = lines.clone();
        let run = applier(
            move |obj: Arc<Object>, _ctx: Arc<()>| {
                let key = crate::cache::key::object_key(&*obj);
                let (ms, result) = script.lock().expect("script").next(&key);
                let lines = reconciled.clone();
                Box::pin(async move {
                    let start = tokio::time::Instant::now().duration_since(t0).as_millis();
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    lines
                        .lock()
                        .expect("lines")
                        .push(format!("{key}@{start} {result:?}"));
                    match result {
                        ReconcileResult::Ok => Ok(Action::await_change()),
                        ReconcileResult::RequeueAfter(d) => Ok(Action::requeue(d)),
                        ReconcileResult::Error => Err(Failed),
                    }
                })
            },
            move |_obj, _err: &Failed, _ctx| Action::requeue(error_requeue),
            Arc::new(()),
            store,
            stream::select(main, owned),
            config,
        );
        let skipped = lines.clone();
        let mut run = pin!(run);
        let _ = tokio::time::timeout_at(t0 + HORIZON, async {
            while let Some(item) = run.next().await {
                if let Err(ControllerError::ObjectNotFound(r)) = item {
                    let at = tokio::time::Instant::now().duration_since(t0).as_millis();
                    let key = format!("{}/{}", r.namespace.as_deref().unwrap_or(""), r.name);
                    skipped
                        .lock()
                        .expect("lines")
                        .push(format!("{key}@{at} skipped"));
                }
            }
        })
        .await;
        let mut lines = lines.lock().expect("lines").clone();
        lines.sort();
        lines
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn model_reconciles_as_kube_runtime_applier(s in scenario()) {
        let evs = events(&s);
        prop_assert_eq!(model(&s, &evs), kube_runtime(&s, &evs));
    }
}
