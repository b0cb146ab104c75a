//! The controllers a session registers (`--controller`): each one a handler of the shared
//! informer that puts every notified object's key into the controller's own rate-limited
//! workqueue (client-go's `util/workqueue`, the library's [`workqueue`] module), and workers
//! that take keys out and reconcile them, the loop of controller-runtime's
//! `pkg/internal/controller` (v0.24.1, `processNextWorkItem` and `reconcileHandler`).
//!
//! The handler's key is client-go's `MetaNamespaceKeyFunc` of the object, and for a tombstone
//! `DeletionHandlingMetaNamespaceKeyFunc` (the tombstone's own key), as a client-go controller's
//! `enqueue` does. A reconcile reads the key from the Indexer when it starts, as a reconcile
//! reads its lister: the resourceVersion it saw, or that the object is gone (the NotFound path).
//! With `queue=priority` the queue is controller-runtime's priority queue, and the handler gives
//! each add the priority controller-runtime's default handlers give it ([`handler_priority`]).
//!
//! Two engines, as for the handlers ([`handler`](super::handler)):
//! - an instant replay drives [`InlineWorkers`] on the recording's clock: keys are added when the
//!   handler is called (inline, at the pop's time), and before each group of recorded lines the
//!   workers run up to that group's time ([`ControllerTarget`]), so that a reconcile started
//!   between two groups reads the Indexer as the earlier group left it. Every run writes the same
//!   bytes. At the end of the recording the workers finish what is queued and the retries of
//!   failed keys; keys waiting only for a `requeue-after` are left waiting. The controllers of
//!   one resource run as one [`InlineGroup`]: always the one with the earliest step due, so that
//!   their reconciles are written in time order as they end (ties: the first registered first),
//!   and a stop ends the run at the next reconcile.
//! - a live watch, and a replay at `--speed X`, run [`ThreadedWorkers`]: the same worker loop on a
//!   thread per worker, each reconcile taking `reconcile=` of the session's clock (cut short by
//!   the stop). A replay's
//!   clock runs at X times real time: reconciles, rate-limited retries and requeues are
//!   durations of recorded time that last `1/X` of it ([`Clock::in_real_time`]), and every
//!   reconcile is stamped with recorded time.

use std::ops::ControlFlow;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use futures_util::future::BoxFuture;
use hashbrown::HashMap;
use kubectl_deltas::Object;
use kubectl_deltas::cache::reflector::Clock;
use kubectl_deltas::cache::triggers::{OwnerKind, Predicates, controller_owner_keys};
use kubectl_deltas::cache::workqueue::{
    self, ControllerQueue, Got, InlineWorkers, LOW_PRIORITY, Outcome, PriorityQueue, QueueMetrics,
    RateLimitingQueue, Reconcile, ReconcileResult, Reconciler, ThreadedWorkers, WorkersConfig,
};
use kubectl_deltas::cache::{Delivery, IndexerReader, Informer, ListenerHandler, Notification};
use kubectl_deltas::render::reconcile::{ReconcileStart, ReconcileView, Runtime};
use kubectl_deltas::source::recording::{Quiescence, ResyncHook};

use super::handler::ShownHandler;
use super::kube_lane::KubeLane;
use super::output::{ControllerOutput, LaneOutput};
use super::spec_reconcile::{spec_result, wall};
use crate::cmd::plan::{self, ControllerSpec};

/// What a reconcile knew when it started, beyond the queue's facts.
#[derive(Debug, Clone)]
struct Seen {
    /// What it read from the Indexer: the object's resourceVersion (empty if it has none),
    /// `None` when it was gone.
    resource_version: Option<String>,
    /// The handler's latest add of the key before the start.
    latest_add: Option<Instant>,
    /// Why that add was at `LowPriority`, if it was.
    low_priority: Option<&'static str>,
    /// The owned object that add came from (`demo/web-7b9c (replicasets)`), if it did.
    owned: Option<String>,
}

/// The handler's latest add of a key: when, why at `LowPriority` if it was, and the owned
/// object it came from if it did.
#[derive(Debug, Clone)]
struct LatestAdd {
    at: Instant,
    low_priority: Option<&'static str>,
    owned: Option<String>,
}

/// The latest add of each key, written by the controller's handler and read by its reconciler
/// when a worker takes the key: a queue knows when a wait began, not when its newest change came.
type LatestAdds = Arc<Mutex<HashMap<String, LatestAdd>>>;

/// Where a controller reports its reconciles: its place in the lane's output, on the session's
/// clock.
struct Reporter {
    out: ControllerOutput,
    clock: Arc<dyn Clock>,
    /// The controller's name.
    name: String,
}

/// The queue's and the reconciler's facts of one reconcile's start.
struct StartFacts<'a> {
    worker: usize,
    key: &'a str,
    attempt: u32,
    queued_at: Instant,
    started_at: Instant,
    adds: u64,
    requeued: bool,
    priority: Option<i32>,
    seen: &'a Seen,
}

impl Reporter {
    /// `facts` as every renderer is told a reconcile's start, its times on the wall.
    fn start<'a>(&'a self, facts: &StartFacts<'a>) -> ReconcileStart<'a> {
        let clock = self.clock.as_ref();
        let low = facts.priority == Some(LOW_PRIORITY);
        let owned = facts.seen.owned.as_deref();
        ReconcileStart {
            runtime: Runtime::ClientGo,
            reason: owned.map(|_| "owned object updated"),
            owned,
            debounced: false,
            skipped: false,
            filtered: None,
            resource: self.out.resource_name(),
            controller: &self.name,
            worker: facts.worker,
            key: facts.key,
            attempt: facts.attempt,
            queued_at: wall(clock, facts.queued_at),
            latest_add: facts
                .seen
                .latest_add
                .filter(|at| *at >= facts.queued_at)
                .map(|at| wall(clock, at)),
            started_at: wall(clock, facts.started_at),
            adds: facts.adds,
            requeued: facts.requeued,
            resource_version: facts.seen.resource_version.as_deref(),
            priority: facts.priority,
            priority_reason: facts.seen.low_priority.filter(|_| low),
        }
    }

    /// The predicates dropped an event of `key` at `at`: its one row.
    fn filtered(&self, key: &str, at: Instant, predicates: &Predicates) {
        let predicates = predicates.to_string();
        let seen = Seen {
            resource_version: None,
            latest_add: None,
            low_priority: None,
            owned: None,
        };
        let mut start = self.start(&StartFacts {
            worker: 0,
            key,
            attempt: 1,
            queued_at: at,
            started_at: at,
            adds: 0,
            requeued: false,
            priority: None,
            seen: &seen,
        });
        start.filtered = Some(&predicates);
        let view = ReconcileView {
            time: start.started_at,
            start,
            result: ReconcileResult::Ok,
            retry_in: None,
        };
        self.out.reconcile(&view);
    }

    /// A worker took `got`: its start row.
    fn started(&self, worker: usize, got: &Got<String>, attempt: u32, at: Instant, seen: &Seen) {
        let start = self.start(&StartFacts {
            worker,
            key: &got.item,
            attempt,
            queued_at: got.queued_at,
            started_at: at,
            adds: got.adds,
            requeued: got.requeued,
            priority: got.priority,
            seen,
        });
        self.out.reconcile_started(&start);
    }

    /// `reconcile` ended: counted, and its row.
    fn ended(&self, reconcile: &Reconcile<String, Seen>) {
        let start = self.start(&StartFacts {
            worker: reconcile.worker,
            key: &reconcile.key,
            attempt: reconcile.attempt,
            queued_at: reconcile.queued_at,
            started_at: reconcile.started_at,
            adds: reconcile.adds,
            requeued: reconcile.requeued,
            priority: reconcile.priority,
            seen: &reconcile.seen,
        });
        let view = ReconcileView {
            start,
            time: wall(self.clock.as_ref(), reconcile.ended_at),
            result: reconcile.result,
            retry_in: reconcile.retry_in,
        };
        self.out.reconcile(&view);
    }
}

/// The reconcile `--controller` describes: reads the key from the Indexer, fails the first
/// `fail` times for keys matching `fail-keys`, takes `reconcile` of the clock, and asks for a
/// `requeue-after` on success if given.
struct SpecReconciler {
    indexer: IndexerReader<Object>,
    spec: ControllerSpec,
    /// Reconciles that failed so far, per key, while `fail` applies.
    failed: HashMap<String, u32>,
    latest_adds: LatestAdds,
    report: Arc<Reporter>,
}

impl SpecReconciler {
    fn result(&mut self, key: &str) -> ReconcileResult {
        spec_result(&self.spec, &mut self.failed, key)
    }
}

impl Reconciler<String> for SpecReconciler {
    type Seen = Seen;

    fn reconcile(&mut self, key: &String, _attempt: u32, _started_at: Instant) -> Outcome<Seen> {
        let resource_version = self
            .indexer
            .get_by_key(key)
            .map(|obj| obj.resource_version().unwrap_or_default().to_owned());
        let latest = {
            let mut adds = lock(&self.latest_adds);
            // A key whose object is gone leaves the map: it holds the keys of the cache and of
            // the keys still queued, not every key a long session ever saw.
            if resource_version.is_none() {
                adds.remove(key)
            } else {
                adds.get(key).cloned()
            }
        };
        Outcome {
            result: self.result(key),
            duration: self.spec.reconcile,
            seen: Seen {
                resource_version,
                latest_add: latest.as_ref().map(|l| l.at),
                low_priority: latest.as_ref().and_then(|l| l.low_priority),
                owned: latest.and_then(|l| l.owned),
            },
        }
    }

    fn started(
        &mut self,
        worker: usize,
        got: &Got<String>,
        attempt: u32,
        started_at: Instant,
        seen: &Seen,
    ) {
        self.report.started(worker, got, attempt, started_at, seen);
    }
}

/// A controller's queue, as `queue=` chose it.
type KeyQueue = Box<dyn ControllerQueue<String> + Send>;

/// The queue `queue=` names, with the rate limiter its controller gives it: client-go's
/// `DefaultTypedControllerRateLimiter`, or for the priority queue the per-item exponential one
/// alone (controller-runtime v0.24.1 `NewTypedUnmanaged`).
fn key_queue(kind: plan::ControllerQueue) -> KeyQueue {
    match kind {
        plan::ControllerQueue::Workqueue => Box::new(RateLimitingQueue::new(Box::new(
            workqueue::default_controller_rate_limiter::<String>(),
        ))),
        plan::ControllerQueue::Priority => Box::new(PriorityQueue::new(Box::new(
            workqueue::priority_queue_rate_limiter::<String>(),
        ))),
    }
}

/// The priority controller-runtime's default handlers add a notified key at
/// (`pkg/handler/enqueue.go` `addToQueueCreate` and `addToQueueUpdate`, v0.24.1; the same in
/// `TypedFuncs` for `WithLowPriorityWhenUnchanged`): `LowPriority` for an add from the initial
/// list and for an update whose resourceVersion did not change (a resync, or a relist that
/// found the object unchanged), 0 otherwise (deletions included). A queue without priorities
/// ignores it, as controller-runtime's handlers do with client-go's queue.
/// The reason names the case, as the timeline says it after `priority -100`.
fn handler_priority(notification: &Notification<Object>) -> (i32, Option<&'static str>) {
    match notification {
        Notification::Add {
            is_in_initial_list: true,
            ..
        } => (LOW_PRIORITY, Some("initial list")),
        Notification::Update { old, new } if old.resource_version() == new.resource_version() => {
            (LOW_PRIORITY, Some("unchanged resourceVersion"))
        }
        _ => (0, None),
    }
}

/// One controller of an instant replay: its workers, and the keys the end of a recording still
/// waits for.
struct Inline {
    workers: InlineWorkers<String, SpecReconciler, KeyQueue>,
    report: Arc<Reporter>,
    /// The keys the handler added that no reconcile has yet succeeded for since, with their
    /// latest add: what the end of a recording still waits for. A key whose reconcile fails stays
    /// (its retry is owed); one that comes back only through its `requeue-after` is not owed, or
    /// the end of a recording would never come, each such key being reconciled again and again.
    owed: HashMap<String, Instant>,
}

impl Inline {
    /// Whether the end of the input still waits for it.
    fn busy(&self) -> bool {
        !self.owed.is_empty()
    }

    /// `reconcile` ended: its key is no longer `owed` if it succeeded and absorbed the key's
    /// latest add (an add after its start queues the key again at `Done`).
    fn ended_in(owed: &mut HashMap<String, Instant>, reconcile: &Reconcile<String, Seen>) {
        if reconcile.result == ReconcileResult::Error {
            return;
        }
        if owed
            .get(&reconcile.key)
            .is_some_and(|added| *added <= reconcile.started_at)
        {
            owed.remove(&reconcile.key);
        }
    }
}

/// The controllers of one resource in an instant replay, on one clock: each step is taken by the
/// controller whose next step is the earliest (the first registered on a tie), so the reconciles
/// of all of them end, and are written, in time order, one at a time (none is kept). A
/// controller's own steps come in the order they would alone: stepping it through the instants
/// of the others' steps on the way to `t` runs the same steps as running it to `t` at once.
pub(super) struct InlineGroup {
    /// The lane's output, for the session's stop.
    lane: LaneOutput,
    /// By position among the resource's controllers (each reports through its own
    /// [`Reporter`]).
    members: Mutex<Vec<Inline>>,
}

impl InlineGroup {
    pub(super) fn new(lane: LaneOutput) -> Arc<Self> {
        Arc::new(InlineGroup {
            lane,
            members: Mutex::default(),
        })
    }

    /// Runs member `inline` through `t` (idle workers take keys at `t` too) or until `t`,
    /// writing each reconcile as it starts and ends; `Break` once the session stops.
    fn step(&self, inline: &mut Inline, t: Instant, through: bool) -> ControlFlow<()> {
        let Inline {
            workers,
            owed,
            report,
        } = inline;
        let mut sink = |reconcile: Reconcile<String, Seen>| {
            Inline::ended_in(owed, &reconcile);
            report.ended(&reconcile);
            if self.lane.stop().requested() {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        if through {
            workers.run_through(t, &mut sink)
        } else {
            workers.run_until(t, &mut sink)
        }
    }

    /// Every member up to `t` ([`InlineWorkers::run_until`]): the steps due before `t`, earliest
    /// first across members, then each member's at `t`.
    fn run_until(&self, members: &mut [Inline], t: Instant) -> ControlFlow<()> {
        loop {
            let earliest = members
                .iter()
                .enumerate()
                .filter_map(|(member, inline)| inline.workers.next_due().map(|at| (at, member)))
                .filter(|(at, _)| *at < t)
                .min();
            let Some((at, member)) = earliest else {
                break;
            };
            self.step(&mut members[member], at, true)?;
        }
        for inline in members.iter_mut() {
            self.step(inline, t, false)?;
        }
        ControlFlow::Continue(())
    }

    /// Member `member`'s handler `Add` at `at`: every member runs up to `at` first (the handler
    /// calls of an instant replay come in time order across handlers).
    fn add(&self, member: usize, key: String, priority: i32, at: Instant) {
        let mut members = lock(&self.members);
        if self.run_until(&mut members, at).is_break() {
            return;
        }
        // Every member is at `at` already: the add's own run reaches nothing more.
        let inline = &mut members[member];
        let at = at.max(inline.workers.now());
        inline.owed.insert(key.clone(), at);
        inline
            .workers
            .add_with_priority(key, priority, at, &mut |_| ControlFlow::Continue(()));
    }

    /// The end of the input: the busy members' steps, earliest first, until none is busy or the
    /// session stops.
    fn finish(&self) {
        let mut members = lock(&self.members);
        while !self.lane.stop().requested() {
            let earliest = members
                .iter()
                .enumerate()
                .filter(|(_, inline)| inline.busy())
                .filter_map(|(member, inline)| inline.workers.next_due().map(|at| (at, member)))
                .min();
            let Some((at, member)) = earliest else {
                break;
            };
            if self.step(&mut members[member], at, true).is_break() {
                break;
            }
        }
    }
}

/// A live session's queue and worker threads.
type Live = ThreadedWorkers<String, SpecReconciler, KeyQueue>;

enum Engine {
    /// Its position in the group.
    Inline(Arc<InlineGroup>, usize),
    /// With whether its reconciles ask for a `requeue-after`.
    Live(Arc<Live>, bool),
    /// kube-runtime's `Controller`: its lane's, with its place among them.
    Kube(Arc<KubeLane>, usize),
}

/// One controller of one resource: its queue, its workers, and where they report.
pub(super) struct ControllerRun {
    engine: Engine,
    /// What its handler added last, per key; its reconciler reads it.
    latest_adds: LatestAdds,
    /// Where its reconciles are written.
    report: Arc<Reporter>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl ControllerRun {
    /// Controller `spec` on `queue`, writing through `out`, reading `indexer`; driven inline on `clock` as
    /// a member of `inline` (an instant replay: the lane's group, which its controllers join in
    /// position order) or with worker threads.
    pub(super) fn new(
        spec: &ControllerSpec,
        queue: plan::ControllerQueue,
        out: ControllerOutput,
        clock: Arc<dyn Clock>,
        indexer: IndexerReader<Object>,
        inline: Option<&Arc<InlineGroup>>,
    ) -> Arc<Self> {
        let stop = out.stop().clone();
        let report = Arc::new(Reporter {
            out,
            clock: clock.clone(),
            name: spec.name.clone(),
        });
        let latest_adds = LatestAdds::default();
        let reconciler = SpecReconciler {
            indexer,
            spec: spec.clone(),
            failed: HashMap::new(),
            latest_adds: latest_adds.clone(),
            report: report.clone(),
        };
        let queue = key_queue(queue);
        let engine = if let Some(group) = inline {
            let mut members = lock(&group.members);
            members.push(Inline {
                workers: InlineWorkers::new(
                    WorkersConfig {
                        workers: spec.workers,
                    },
                    queue,
                    reconciler,
                    clock.now(),
                ),
                report: report.clone(),
                owed: HashMap::new(),
            });
            Engine::Inline(group.clone(), members.len() - 1)
        } else {
            let requeues = spec.requeue_after.is_some();
            Engine::Live(Live::new(queue, reconciler, clock, stop), requeues)
        };
        Arc::new(ControllerRun {
            engine,
            latest_adds,
            report,
        })
    }

    /// Kube controller `member` of `kube`, which writes its rows itself.
    pub(super) fn kube(
        kube: Arc<KubeLane>,
        member: usize,
        out: ControllerOutput,
        clock: Arc<dyn Clock>,
        name: &str,
    ) -> Arc<Self> {
        Arc::new(ControllerRun {
            engine: Engine::Kube(kube, member),
            latest_adds: LatestAdds::default(),
            report: Arc::new(Reporter {
                out,
                clock,
                name: name.to_owned(),
            }),
        })
    }

    /// Starts the worker threads of a live controller (`workers` of them), each writing its
    /// reconciles as they end, or a live kube lane's thread; nothing inline.
    pub(super) fn start(self: &Arc<Self>, workers: usize) -> std::io::Result<()> {
        let live = match &self.engine {
            Engine::Live(live, _) => live,
            Engine::Kube(kube, _) => return kube.start(),
            Engine::Inline(..) => return Ok(()),
        };
        let run = self.clone();
        live.start(workers, move |reconcile| run.report.ended(&reconcile))
    }

    /// The handler's `Add` at `priority`, at `at` (the handler call's time).
    fn add(&self, key: String, priority: i32, at: Instant) {
        match &self.engine {
            Engine::Inline(group, member) => group.add(*member, key, priority, at),
            Engine::Live(live, _) => live.add_with_priority(key, priority),
            // Never registered as a handler: kube-runtime is fed by its watcher.
            Engine::Kube(..) => {}
        }
    }

    /// An instant replay's turn: the workers of the controller's group run up to `next`, the
    /// time of the next group of recorded lines (keys that become free at `next` are taken after
    /// that group's adds).
    pub(super) fn run_until(&self, next: Instant) {
        match &self.engine {
            Engine::Inline(group, _) => {
                let _ = group.run_until(&mut lock(&group.members), next);
            }
            Engine::Kube(kube, _) => kube.run_until(next),
            Engine::Live(..) => {}
        }
    }

    /// The end of the input: the workers reconcile every key queued and every retry of a failed
    /// key, however late on the clock; keys waiting only for a `requeue-after` stay waiting (they
    /// would come back forever). A live controller waits in real time for the same, or the stop.
    pub(super) fn finish(&self) {
        match &self.engine {
            Engine::Inline(group, _) => group.finish(),
            Engine::Live(live, requeues) => live.wait_settled(*requeues),
            Engine::Kube(kube, _) => kube.finish(),
        }
    }

    /// At the stop, before the waits end: a live controller's metrics are taken (what is still
    /// waiting), then its queue shuts down so that idle workers leave.
    pub(super) fn stopping(&self) {
        match &self.engine {
            Engine::Live(live, _) => live.stopping(),
            Engine::Kube(kube, _) => kube.stopping(),
            Engine::Inline(..) => {}
        }
    }

    /// Waits for a live controller's workers to leave.
    pub(super) fn join(&self) {
        match &self.engine {
            Engine::Live(live, _) => live.join(),
            Engine::Kube(kube, _) => kube.join(),
            Engine::Inline(..) => {}
        }
    }

    /// The queue's metrics: at the stop for a live controller, now for an inline one.
    pub(super) fn metrics(&self) -> QueueMetrics {
        match &self.engine {
            Engine::Inline(group, member) => lock(&group.members)[*member].workers.metrics(),
            Engine::Live(live, _) => live.metrics(),
            Engine::Kube(kube, member) => kube.metrics(*member),
        }
    }

    /// Stops the workers and hands the queue's metrics to the summary.
    pub(super) fn conclude(&self) {
        self.stopping();
        self.join();
        self.report.out.metrics(self.metrics());
    }
}

/// A controller's handler: shown as any handler's calls are, then, unless its predicates drop
/// the event, the key goes into the controller's queue.
pub(super) struct ControllerHandler {
    pub(super) shown: ShownHandler,
    pub(super) run: Arc<ControllerRun>,
    /// controller-runtime's predicates (`predicate.Or` of them), asked before the queue as
    /// `Controller.Watch`'s `predicates` are: they judge updates only (their `Create`, `Delete`
    /// and `Generic` return true, `pkg/predicate/predicate.go`).
    pub(super) predicates: Predicates,
}

impl ListenerHandler<Object> for ControllerHandler {
    fn handle(&mut self, delivery: &Delivery<'_, Object>) {
        self.shown.handle(delivery);
        if let Notification::Update { old, new } = delivery.notification
            && !self.predicates.update_passes(old, new)
        {
            let key = delivery.notification.key();
            self.run
                .report
                .filtered(&key, delivery.started_at, &self.predicates);
            return;
        }
        // `MetaNamespaceKeyFunc`, or `DeletionHandlingMetaNamespaceKeyFunc` for a tombstone.
        let key = delivery.notification.key();
        let (priority, low_priority) = handler_priority(delivery.notification);
        lock(&self.run.latest_adds).insert(
            key.clone(),
            LatestAdd {
                at: delivery.started_at,
                low_priority,
                owned: None,
            },
        );
        self.run.add(key, priority, delivery.started_at);
    }

    fn synced(&mut self, at: Instant) {
        self.shown.synced(at);
    }
}

/// A client-go controller's handler on a resource it owns (`owns=`): shown as any handler's
/// calls are, then each event's object maps to its controller owner of the controller's type,
/// whose key goes into the controller's queue (controller-runtime's `Owns`:
/// `EnqueueRequestForOwner(…, OnlyControllerOwner())`, `pkg/handler/enqueue_owner.go`; an update
/// maps the old and the new object, each owner once). The controller's predicates judge the
/// updates first, as `WithEventFilter`'s do for every watch of a controller.
pub(super) struct OwnedHandler {
    pub(super) shown: ShownHandler,
    pub(super) run: Arc<ControllerRun>,
    pub(super) predicates: Predicates,
    /// The controller's own type.
    pub(super) main: OwnerKind,
    /// The owned resource, as the rows name it.
    pub(super) resource: String,
}

impl ListenerHandler<Object> for OwnedHandler {
    fn handle(&mut self, delivery: &Delivery<'_, Object>) {
        self.shown.handle(delivery);
        let notification = delivery.notification;
        let objects: Vec<&Object> = match notification {
            Notification::Update { old, new } => {
                if !self.predicates.update_passes(old, new) {
                    let key = notification.key();
                    self.run
                        .report
                        .filtered(&key, delivery.started_at, &self.predicates);
                    return;
                }
                vec![old, new]
            }
            Notification::Add { obj, .. } => vec![obj],
            Notification::Delete { obj } => obj.object().map(|o| &**o).into_iter().collect(),
        };
        let mut owners: Vec<String> = Vec::new();
        for obj in objects {
            for key in controller_owner_keys(&self.main, obj) {
                if !owners.contains(&key) {
                    owners.push(key);
                }
            }
        }
        let owned = format!("{} ({})", notification.key(), self.resource);
        for owner in owners {
            lock(&self.run.latest_adds).insert(
                owner.clone(),
                LatestAdd {
                    at: delivery.started_at,
                    low_priority: None,
                    owned: Some(owned.clone()),
                },
            );
            self.run.add(owner, 0, delivery.started_at);
        }
    }

    fn synced(&mut self, at: Instant) {
        self.shown.synced(at);
    }
}

/// What an instant replay drains at each group of lines when the informer has controllers:
/// the informer's turn, then the controllers' workers up to the next group.
pub(super) struct ControllerTarget {
    pub(super) informer: Arc<Informer>,
    pub(super) controllers: Vec<Arc<ControllerRun>>,
}

impl Quiescence for ControllerTarget {
    fn idle(&self, next: Instant) -> BoxFuture<'_, ()> {
        let drained = self.informer.idle(next);
        Box::pin(async move {
            drained.await;
            for controller in &self.controllers {
                controller.run_until(next);
            }
        })
    }

    fn coalesced(&self) -> Option<u64> {
        Quiescence::coalesced(self.informer.as_ref())
    }

    fn consume(&self, next: Instant) -> BoxFuture<'_, ()> {
        self.informer.idle(next)
    }

    fn settle(&self, next: Instant) {
        for controller in &self.controllers {
            controller.run_until(next);
        }
    }
}

impl ResyncHook for ControllerTarget {
    fn resync(&self, at: SystemTime) {
        ResyncHook::resync(self.informer.as_ref(), at);
    }

    fn period(&self) -> Option<Duration> {
        ResyncHook::period(self.informer.as_ref())
    }

    fn tick(&self, at: SystemTime) {
        ResyncHook::tick(self.informer.as_ref(), at);
    }
}
