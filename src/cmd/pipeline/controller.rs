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
use kubectl_deltas::cache::workqueue::{
    self, ControllerQueue, InlineWorkers, LOW_PRIORITY, Outcome, PriorityQueue, QueueMetrics,
    RateLimitingQueue, Reconcile, ReconcileResult, Reconciler, ThreadedWorkers, WorkersConfig,
};
use kubectl_deltas::cache::{Delivery, IndexerReader, Informer, ListenerHandler, Notification};
use kubectl_deltas::source::recording::{Quiescence, ResyncHook};

use super::handler::ShownHandler;
use super::output::{ControllerOutput, LaneOutput};
use crate::cmd::plan::{self, ControllerSpec};

/// What a reconcile read from the Indexer: the object's resourceVersion (empty if it has none),
/// `None` when it was gone.
type Seen = Option<String>;

/// The reconcile `--controller` describes: reads the key from the Indexer, fails the first
/// `fail` times for keys matching `fail-keys`, takes `reconcile` of the clock, and asks for a
/// `requeue-after` on success if given.
struct SpecReconciler {
    indexer: IndexerReader<Object>,
    spec: ControllerSpec,
    /// Reconciles that failed so far, per key, while `fail` applies.
    failed: HashMap<String, u32>,
}

impl SpecReconciler {
    fn result(&mut self, key: &str) -> ReconcileResult {
        let fails = self.spec.fail > 0
            && self
                .spec
                .fail_keys
                .as_ref()
                .is_none_or(|glob| glob.matches(key));
        if fails {
            let failed = self.failed.entry_ref(key).or_insert(0);
            if *failed < self.spec.fail {
                *failed += 1;
                return ReconcileResult::Error;
            }
        }
        match self.spec.requeue_after {
            Some(after) => ReconcileResult::RequeueAfter(after),
            None => ReconcileResult::Ok,
        }
    }
}

impl Reconciler<String> for SpecReconciler {
    type Seen = Seen;

    fn reconcile(&mut self, key: &String, _attempt: u32, _started_at: Instant) -> Outcome<Seen> {
        let seen = self
            .indexer
            .get_by_key(key)
            .map(|obj| obj.resource_version().unwrap_or_default().to_owned());
        Outcome {
            result: self.result(key),
            duration: self.spec.reconcile,
            seen,
        }
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
fn handler_priority(notification: &Notification<Object>) -> i32 {
    match notification {
        Notification::Add {
            is_in_initial_list: true,
            ..
        } => LOW_PRIORITY,
        Notification::Update { old, new } if old.resource_version() == new.resource_version() => {
            LOW_PRIORITY
        }
        _ => 0,
    }
}

/// One controller of an instant replay: its workers, and the keys the end of a recording still
/// waits for.
struct Inline {
    workers: InlineWorkers<String, SpecReconciler, KeyQueue>,
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
    /// The lane's output; each member writes as its controller there.
    lane: LaneOutput,
    clock: Arc<dyn Clock>,
    /// By position among the resource's controllers.
    members: Mutex<Vec<Inline>>,
}

impl InlineGroup {
    pub(super) fn new(lane: LaneOutput, clock: Arc<dyn Clock>) -> Arc<Self> {
        Arc::new(InlineGroup {
            lane,
            clock,
            members: Mutex::default(),
        })
    }

    /// Runs member `member` through `t` (idle workers take keys at `t` too) or until `t`,
    /// writing each reconcile as it ends; `Break` once the session stops.
    fn step(
        &self,
        inline: &mut Inline,
        member: usize,
        t: Instant,
        through: bool,
    ) -> ControlFlow<()> {
        let Inline { workers, owed } = inline;
        let mut sink = |reconcile: Reconcile<String, Seen>| {
            Inline::ended_in(owed, &reconcile);
            write(
                &self.lane.controller(member),
                self.clock.as_ref(),
                &reconcile,
            );
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
            self.step(&mut members[member], member, at, true)?;
        }
        for (member, inline) in members.iter_mut().enumerate() {
            self.step(inline, member, t, false)?;
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
            if self.step(&mut members[member], member, at, true).is_break() {
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
}

/// One controller of one resource: its queue, its workers, and where they report.
pub(super) struct ControllerRun {
    /// Where its reconciles are written.
    out: ControllerOutput,
    clock: Arc<dyn Clock>,
    engine: Engine,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// The wall time of `at`, an instant of `clock` (a reconcile may end later than the clock's now:
/// the workers run ahead to the next recorded line).
fn wall(clock: &dyn Clock, at: Instant) -> SystemTime {
    let (now, wall) = (clock.now(), clock.wall());
    match at.checked_duration_since(now) {
        Some(ahead) => wall + ahead,
        None => wall - now.duration_since(at),
    }
}

/// Hands `reconcile` to the controller's output, with its times on the wall.
fn write(out: &ControllerOutput, clock: &dyn Clock, reconcile: &Reconcile<String, Seen>) {
    out.reconcile(
        reconcile,
        [
            wall(clock, reconcile.queued_at),
            wall(clock, reconcile.started_at),
            wall(clock, reconcile.ended_at),
        ],
    );
}

impl ControllerRun {
    /// Controller `spec`, writing through `out`, reading `indexer`; driven inline on `clock` as
    /// a member of `inline` (an instant replay: the lane's group, which its controllers join in
    /// position order) or with worker threads.
    pub(super) fn new(
        spec: &ControllerSpec,
        out: ControllerOutput,
        clock: Arc<dyn Clock>,
        indexer: IndexerReader<Object>,
        inline: Option<&Arc<InlineGroup>>,
    ) -> Arc<Self> {
        let reconciler = SpecReconciler {
            indexer,
            spec: spec.clone(),
            failed: HashMap::new(),
        };
        let queue = key_queue(spec.queue);
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
                owed: HashMap::new(),
            });
            Engine::Inline(group.clone(), members.len() - 1)
        } else {
            let requeues = spec.requeue_after.is_some();
            let stop = out.stop().clone();
            Engine::Live(Live::new(queue, reconciler, clock.clone(), stop), requeues)
        };
        Arc::new(ControllerRun { out, clock, engine })
    }

    /// Starts the worker threads of a live controller (`workers` of them), each writing its
    /// reconciles as they end; nothing inline.
    pub(super) fn start(self: &Arc<Self>, workers: usize) -> std::io::Result<()> {
        let Engine::Live(live, _) = &self.engine else {
            return Ok(());
        };
        let run = self.clone();
        live.start(workers, move |reconcile| {
            write(&run.out, run.clock.as_ref(), &reconcile);
        })
    }

    /// The handler's `Add` at `priority`, at `at` (the handler call's time).
    fn add(&self, key: String, priority: i32, at: Instant) {
        match &self.engine {
            Engine::Inline(group, member) => group.add(*member, key, priority, at),
            Engine::Live(live, _) => live.add_with_priority(key, priority),
        }
    }

    /// An instant replay's turn: the workers of the controller's group run up to `next`, the
    /// time of the next group of recorded lines (keys that become free at `next` are taken after
    /// that group's adds).
    pub(super) fn run_until(&self, next: Instant) {
        if let Engine::Inline(group, _) = &self.engine {
            let _ = group.run_until(&mut lock(&group.members), next);
        }
    }

    /// The end of the input: the workers reconcile every key queued and every retry of a failed
    /// key, however late on the clock; keys waiting only for a `requeue-after` stay waiting (they
    /// would come back forever). A live controller waits in real time for the same, or the stop.
    pub(super) fn finish(&self) {
        match &self.engine {
            Engine::Inline(group, _) => group.finish(),
            Engine::Live(live, requeues) => live.wait_settled(*requeues),
        }
    }

    /// At the stop, before the waits end: a live controller's metrics are taken (what is still
    /// waiting), then its queue shuts down so that idle workers leave.
    pub(super) fn stopping(&self) {
        if let Engine::Live(live, _) = &self.engine {
            live.stopping();
        }
    }

    /// Waits for a live controller's workers to leave.
    pub(super) fn join(&self) {
        if let Engine::Live(live, _) = &self.engine {
            live.join();
        }
    }

    /// The queue's metrics: at the stop for a live controller, now for an inline one.
    pub(super) fn metrics(&self) -> QueueMetrics {
        match &self.engine {
            Engine::Inline(group, member) => lock(&group.members)[*member].workers.metrics(),
            Engine::Live(live, _) => live.metrics(),
        }
    }

    /// Stops the workers and hands the queue's metrics to the summary.
    pub(super) fn conclude(&self) {
        self.stopping();
        self.join();
        self.out.metrics(self.metrics());
    }
}

/// A controller's handler: shown as any handler's calls are, then the key goes into the
/// controller's queue.
pub(super) struct ControllerHandler {
    pub(super) shown: ShownHandler,
    pub(super) run: Arc<ControllerRun>,
}

impl ListenerHandler<Object> for ControllerHandler {
    fn handle(&mut self, delivery: &Delivery<'_, Object>) {
        self.shown.handle(delivery);
        // `MetaNamespaceKeyFunc`, or `DeletionHandlingMetaNamespaceKeyFunc` for a tombstone.
        let key = delivery.notification.key();
        let priority = handler_priority(delivery.notification);
        self.run.add(key, priority, delivery.started_at);
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
