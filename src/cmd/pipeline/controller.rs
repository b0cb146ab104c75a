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
//!   failed keys; keys waiting only for a `requeue-after` are left waiting.
//! - a live watch, and a replay at `--speed X`, run a [`Workqueue`] and one thread per worker,
//!   each reconcile taking `reconcile=` of the session's clock (cut short by the stop). A replay's
//!   clock runs at X times real time: reconciles, rate-limited retries and requeues are
//!   durations of recorded time that last `1/X` of it ([`Clock::in_real_time`]), and every
//!   reconcile is stamped with recorded time.

use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use futures_util::future::BoxFuture;
use hashbrown::HashMap;
use kubectl_deltas::Object;
use kubectl_deltas::cache::reflector::Clock;
use kubectl_deltas::cache::workqueue::{
    self, ControllerQueue, InlineWorkers, LOW_PRIORITY, Outcome, PriorityQueue, QueueMetrics,
    RateLimitingQueue, Reconcile, ReconcileResult, Reconciler, WorkersConfig, Workqueue,
};
use kubectl_deltas::cache::{Delivery, IndexerReader, Informer, ListenerHandler, Notification};
use kubectl_deltas::source::recording::{Quiescence, ResyncHook};

use super::handler::ShownHandler;
use super::output::Output;
use crate::cli::{ControllerArg, ControllerQueueKind};

/// What a reconcile read from the Indexer: the object's resourceVersion (empty if it has none),
/// `None` when it was gone.
type Seen = Option<String>;

/// The reconcile `--controller` describes: reads the key from the Indexer, fails the first
/// `fail` times for keys matching `fail-keys`, takes `reconcile` of the clock, and asks for a
/// `requeue-after` on success if given.
struct SpecReconciler {
    indexer: IndexerReader<Object>,
    spec: ControllerArg,
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
fn key_queue(kind: ControllerQueueKind) -> KeyQueue {
    match kind {
        ControllerQueueKind::Workqueue => Box::new(RateLimitingQueue::new(Box::new(
            workqueue::default_controller_rate_limiter::<String>(),
        ))),
        ControllerQueueKind::Priority => Box::new(PriorityQueue::new(Box::new(
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

/// An instant replay's workers, and the retries of failed keys still to come.
struct Inline {
    workers: InlineWorkers<String, SpecReconciler, KeyQueue>,
    /// Failed keys and when their retry is due: what the end of a recording still waits for.
    retries: HashMap<String, Instant>,
}

/// A live session's queue and worker threads.
struct Live {
    queue: Arc<Workqueue<String, KeyQueue>>,
    reconciler: Mutex<SpecReconciler>,
    threads: Mutex<Vec<JoinHandle<()>>>,
    /// The queue's metrics when the session stopped, before the workers left.
    at_stop: Mutex<Option<QueueMetrics>>,
}

enum Engine {
    Inline(Box<Mutex<Inline>>),
    Live(Box<Live>),
}

/// One controller of one resource: its queue, its workers, and where they report.
pub(super) struct ControllerRun {
    output: Arc<Output>,
    clock: Arc<dyn Clock>,
    /// The resource's position among the session's.
    index: usize,
    /// The controller's position among the resource's.
    position: usize,
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

impl ControllerRun {
    /// Controller `spec`, the `position`-th of resource `index`, reading `indexer`; driven inline
    /// on `clock` (an instant replay) or with worker threads.
    pub(super) fn new(
        spec: &ControllerArg,
        output: Arc<Output>,
        clock: Arc<dyn Clock>,
        index: usize,
        position: usize,
        indexer: IndexerReader<Object>,
        inline: bool,
    ) -> Arc<Self> {
        let reconciler = SpecReconciler {
            indexer,
            spec: spec.clone(),
            failed: HashMap::new(),
        };
        let queue = key_queue(spec.queue);
        let engine = if inline {
            Engine::Inline(Box::new(Mutex::new(Inline {
                workers: InlineWorkers::new(
                    WorkersConfig {
                        workers: spec.workers,
                    },
                    queue,
                    reconciler,
                    clock.now(),
                ),
                retries: HashMap::new(),
            })))
        } else {
            Engine::Live(Box::new(Live {
                queue: Arc::new(Workqueue::with_queue(queue, clock.clone())),
                reconciler: Mutex::new(reconciler),
                threads: Mutex::default(),
                at_stop: Mutex::default(),
            }))
        };
        Arc::new(ControllerRun {
            output,
            clock,
            index,
            position,
            engine,
        })
    }

    /// Starts the worker threads of a live controller (`workers` of them); nothing inline.
    pub(super) fn start(self: &Arc<Self>, workers: usize) -> std::io::Result<()> {
        let Engine::Live(live) = &self.engine else {
            return Ok(());
        };
        let mut threads = lock(&live.threads);
        for worker in 0..workers {
            let run = self.clone();
            threads.push(
                std::thread::Builder::new()
                    .name(format!("reconcile-{worker}"))
                    .spawn(move || run.work(worker))?,
            );
        }
        Ok(())
    }

    /// The handler's `Add` at `priority`, at `at` (the handler call's time).
    fn add(&self, key: String, priority: i32, at: Instant) {
        match &self.engine {
            Engine::Inline(inline) => {
                let mut inline = lock(inline);
                inline.workers.add_with_priority(key, priority, at);
                self.report(&mut inline);
            }
            Engine::Live(live) => {
                live.queue.add_with_priority(key, priority);
            }
        }
    }

    /// An instant replay's turn: the workers run up to `next`, the time of the next group of
    /// recorded lines (keys that become free at `next` are taken after that group's adds).
    pub(super) fn run_until(&self, next: Instant) {
        if let Engine::Inline(inline) = &self.engine {
            let mut inline = lock(inline);
            inline.workers.run_until(next);
            self.report(&mut inline);
        }
    }

    /// The end of the input: the workers reconcile every key queued and every retry of a failed
    /// key, however late on the clock; keys waiting only for a `requeue-after` stay waiting (they
    /// would come back forever). A live controller waits in real time for the same, or the stop.
    pub(super) fn finish(&self) {
        match &self.engine {
            Engine::Inline(inline) => {
                let mut inline = lock(inline);
                while !self.output.stop.requested() {
                    let busy = inline.workers.running().next().is_some()
                        || !inline.workers.queue().is_empty()
                        || !inline.retries.is_empty();
                    let Some(next) = inline.workers.next_due().filter(|_| busy) else {
                        break;
                    };
                    inline.workers.run_through(next);
                    self.report(&mut inline);
                }
            }
            Engine::Live(live) => {
                let requeues = lock(&live.reconciler).spec.requeue_after.is_some();
                // The workers block in `get`, which says nothing of idleness: looked at every
                // 5 ms, as `Informer::finish` waits on its handler threads.
                while !self.output.stop.requested() {
                    let m = live.queue.metrics();
                    let retries_left = m.waiting_after > 0 && !requeues;
                    if m.depth == 0 && m.gets == m.dones && !retries_left {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        }
    }

    /// Writes the reconciles the inline workers finished, and keeps track of the retries due.
    fn report(&self, inline: &mut Inline) {
        let now = inline.workers.now();
        for reconcile in inline.workers.drain() {
            match reconcile.retry_in {
                Some(delay) => {
                    inline
                        .retries
                        .insert(reconcile.key.clone(), reconcile.ended_at + delay);
                }
                None => {
                    inline.retries.remove(&reconcile.key);
                }
            }
            self.write(&reconcile);
        }
        inline.retries.retain(|_, due| *due > now);
    }

    fn write(&self, reconcile: &Reconcile<String, Seen>) {
        let clock = self.clock.as_ref();
        self.output.reconcile(
            self.index,
            self.position,
            reconcile,
            [
                wall(clock, reconcile.queued_at),
                wall(clock, reconcile.started_at),
                wall(clock, reconcile.ended_at),
            ],
        );
    }

    /// A live worker: `processNextWorkItem` until the queue shuts down or the session stops.
    fn work(&self, worker: usize) {
        let Engine::Live(live) = &self.engine else {
            return;
        };
        let stop = &self.output.stop;
        while !stop.requested() {
            let Some(got) = live.queue.get() else {
                return;
            };
            if stop.requested() {
                live.queue.done(&got.item);
                return;
            }
            let attempt = live.queue.num_requeues(&got.item).saturating_add(1);
            let started_at = self.clock.now();
            let outcome = lock(&live.reconciler).reconcile(&got.item, attempt, started_at);
            if !outcome.duration.is_zero() {
                stop.sleep(self.clock.in_real_time(outcome.duration));
            }
            if stop.requested() {
                // Cut short: it never ended, and it is not reported.
                live.queue.done(&got.item);
                return;
            }
            // Reconcile returned: the end, before `Done` can hand the key to another worker.
            let ended_at = self.clock.now();
            let key = got.item;
            let retry_in = live
                .queue
                .requeue(&key, outcome.result, got.priority.unwrap_or(0));
            live.queue.done(&key);
            self.write(&Reconcile {
                worker,
                key,
                attempt,
                queued_at: got.queued_at,
                started_at,
                ended_at,
                adds: got.adds,
                requeued: got.requeued,
                seen: outcome.seen,
                result: outcome.result,
                retry_in,
                priority: got.priority,
            });
        }
    }

    /// At the stop, before the waits end: a live controller's metrics are taken (what is still
    /// waiting), then its queue shuts down so that idle workers leave.
    pub(super) fn stopping(&self) {
        if let Engine::Live(live) = &self.engine {
            lock(&live.at_stop).get_or_insert_with(|| live.queue.metrics());
            live.queue.shut_down();
        }
    }

    /// Waits for a live controller's workers to leave.
    pub(super) fn join(&self) {
        if let Engine::Live(live) = &self.engine {
            live.queue.shut_down();
            let threads = std::mem::take(&mut *lock(&live.threads));
            for thread in threads {
                let _ = thread.join();
            }
        }
    }

    /// The queue's metrics: at the stop for a live controller, now for an inline one.
    pub(super) fn metrics(&self) -> QueueMetrics {
        match &self.engine {
            Engine::Inline(inline) => lock(inline).workers.metrics(),
            Engine::Live(live) => lock(&live.at_stop).unwrap_or_else(|| live.queue.metrics()),
        }
    }

    /// The resource's position and the controller's among its controllers.
    pub(super) fn position(&self) -> (usize, usize) {
        (self.index, self.position)
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
