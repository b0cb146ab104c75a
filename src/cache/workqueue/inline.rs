//! A controller's workers on a clock that moves only when told: controller-runtime's worker loop
//! (`pkg/internal/controller/controller.go` v0.24.1, `processNextWorkItem` and
//! `reconcileHandler`) over any [`ControllerQueue`] (client-go's [`RateLimitingQueue`] or
//! controller-runtime's [`PriorityQueue`](super::PriorityQueue)), as an event-driven simulation,
//! so that an instant replay gets the same reconciles, at the same times, on every run.
//!
//! Each worker loops: `Get`; reconcile (the [`Reconciler`] says for how long and with what
//! result); then, as `reconcileHandler` does, `AddRateLimited` on an error, `Forget` +
//! `AddAfter` on a `RequeueAfter`, `Forget` on a success, each re-add at the priority the key was
//! handed out with ([`ControllerQueue::requeue`]); then `Done`.
//!
//! Each reconcile is handed to the caller's sink as it ends, never kept: a `requeue-after` far
//! shorter than the gaps between the caller's instants makes millions of reconciles, and they
//! stream out at a constant memory. The sink's `Break` pauses the run after the reconcile it was
//! handed (a stop); the next call resumes where it paused, as the loop keeps no state of its own.
//!
//! Time moves in [`run_until`](InlineWorkers::run_until) steps. Things due at the same instant
//! happen in one fixed order: reconciles ending (lowest worker first), then delayed keys coming
//! due, then an add from outside, then idle workers taking keys (lowest worker first). So a burst
//! of adds at one instant is all queued before a worker wakes, as a burst arriving faster than a
//! goroutine is scheduled would be.

use std::fmt;
use std::hash::Hash;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use super::controller_queue::{ControllerQueue, ReconcileResult};
use super::metrics::QueueMetrics;
use super::queue::{Added, Got};
use super::rate_limiting_queue::RateLimitingQueue;

/// How a controller runs its workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkersConfig {
    /// Workers (controller-runtime's `MaxConcurrentReconciles`, 1 by default there).
    pub workers: usize,
}

impl Default for WorkersConfig {
    fn default() -> Self {
        WorkersConfig { workers: 1 }
    }
}

/// What a [`Reconciler`] does with one key: its result, how long it takes on the clock, and what
/// it saw when it started (say, the resourceVersion it read from the lister).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome<S> {
    /// The result `reconcileHandler` acts on.
    pub result: ReconcileResult,
    /// How long the reconcile runs.
    pub duration: Duration,
    /// What the reconcile read when it started.
    pub seen: S,
}

/// The controller's `Reconcile`, called when a worker takes a key.
pub trait Reconciler<T> {
    /// What a reconcile reads when it starts.
    type Seen;

    /// Reconciles `key` at `started_at`: its `attempt`-th try (`NumRequeues` + 1).
    fn reconcile(&mut self, key: &T, attempt: u32, started_at: Instant) -> Outcome<Self::Seen>;

    /// Worker `worker` took `got` at `started_at` and [`reconcile`](Reconciler::reconcile) read
    /// `seen`: told before anything later happens, so that a caller can show a reconcile where it
    /// starts (the queue's facts of the wait are known only here). By default nothing.
    fn started(
        &mut self,
        _worker: usize,
        _got: &Got<T>,
        _attempt: u32,
        _started_at: Instant,
        _seen: &Self::Seen,
    ) {
    }
}

/// One finished reconcile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reconcile<T, S> {
    /// The worker that ran it, from 0.
    pub worker: usize,
    /// The key.
    pub key: T,
    /// `NumRequeues` + 1 when it started: 1 unless earlier tries failed.
    pub attempt: u32,
    /// The first add of the wait it served.
    pub queued_at: Instant,
    /// When the worker took the key.
    pub started_at: Instant,
    /// When it ended (and the key was `Done`).
    pub ended_at: Instant,
    /// The adds this reconcile absorbed (1 plus those folded while the key waited).
    pub adds: u64,
    /// The key was added while it was being reconciled, and queued again by `Done`.
    pub requeued: bool,
    /// What it read when it started.
    pub seen: S,
    /// What it returned.
    pub result: ReconcileResult,
    /// The rate limiter's delay after an error.
    pub retry_in: Option<Duration>,
    /// The priority the key was handed out with, which its re-adds keep; `None` from a queue
    /// without priorities.
    pub priority: Option<i32>,
}

impl<T, S> Reconcile<T, S> {
    /// How long the key waited for a worker: from its first add to the start.
    pub fn waited(&self) -> Duration {
        self.started_at.saturating_duration_since(self.queued_at)
    }
}

/// Where [`InlineWorkers`] hand each reconcile as it ends, in end order: `Continue`, or `Break`
/// to pause the run after it.
pub trait ReconcileSink<T, S>: FnMut(Reconcile<T, S>) -> ControlFlow<()> {}

impl<T, S, F: FnMut(Reconcile<T, S>) -> ControlFlow<()>> ReconcileSink<T, S> for F {}

/// A reconcile in progress.
struct Running<T, S> {
    got: Got<T>,
    attempt: u32,
    started_at: Instant,
    outcome: Outcome<S>,
}

impl<T, S> Running<T, S> {
    fn ends_at(&self) -> Instant {
        self.started_at + self.outcome.duration
    }
}

/// The next thing that happens, in the order things due at the same instant happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    End(usize),
    Ready,
    Start,
}

/// A controller's queue and workers, driven by its caller on the caller's clock (see the
/// module doc).
pub struct InlineWorkers<T, R: Reconciler<T>, Q = RateLimitingQueue<T>> {
    queue: Q,
    reconciler: R,
    /// One slot per worker: the reconcile it runs, if any.
    workers: Vec<Option<Running<T, R::Seen>>>,
    /// The simulation's time: never goes back.
    now: Instant,
}

impl<T, R: Reconciler<T>, Q> fmt::Debug for InlineWorkers<T, R, Q> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InlineWorkers")
            .field("workers", &self.workers.len())
            .field("now", &self.now)
            .finish_non_exhaustive()
    }
}

impl<T: Eq + Hash + Clone, R: Reconciler<T>, Q: ControllerQueue<T>> InlineWorkers<T, R, Q> {
    /// `config.workers` idle workers (at least one) over `queue`, with the clock at `start`.
    pub fn new(config: WorkersConfig, queue: Q, reconciler: R, start: Instant) -> Self {
        InlineWorkers {
            queue,
            reconciler,
            workers: (0..config.workers.max(1)).map(|_| None).collect(),
            now: start,
        }
    }

    /// The handler's `Add` at `at`: first everything due before it happens (see
    /// [`run_until`](InlineWorkers::run_until)), each reconcile ending on the way handed to
    /// `sink`. A time before the simulation's is taken as now.
    pub fn add(&mut self, key: T, at: Instant, sink: &mut impl ReconcileSink<T, R::Seen>) -> Added {
        self.add_with_priority(key, 0, at, sink)
    }

    /// The handler's `Add` at `at` with a priority, as controller-runtime's handlers add to a
    /// priority queue (a queue without priorities ignores it).
    pub fn add_with_priority(
        &mut self,
        key: T,
        priority: i32,
        at: Instant,
        sink: &mut impl ReconcileSink<T, R::Seen>,
    ) -> Added {
        // Paused by the sink: the add still happens, at the time the run reached.
        let _ = self.run_until(at, sink);
        self.queue.add(key, priority, self.now)
    }

    /// Moves the clock to `t`: reconciles end, delayed keys come due, and idle workers take keys
    /// at every instant before `t`; at `t` itself reconciles end and delayed keys come due, but
    /// workers wait for what else happens at `t` (see the module doc). Each reconcile is handed
    /// to `sink` as it ends; `Break` from it stops the run there, with the clock at that end.
    pub fn run_until(
        &mut self,
        t: Instant,
        sink: &mut impl ReconcileSink<T, R::Seen>,
    ) -> ControlFlow<()> {
        self.run(t, false, sink)
    }

    /// [`run_until`](InlineWorkers::run_until) `t`, and idle workers take keys at `t` too: the
    /// last step of a run.
    pub fn run_through(
        &mut self,
        t: Instant,
        sink: &mut impl ReconcileSink<T, R::Seen>,
    ) -> ControlFlow<()> {
        self.run(t, true, sink)
    }

    fn run(
        &mut self,
        t: Instant,
        starts_at_t: bool,
        sink: &mut impl ReconcileSink<T, R::Seen>,
    ) -> ControlFlow<()> {
        while let Some((at, step)) = self.next_step(t, starts_at_t) {
            self.now = self.now.max(at);
            match step {
                Step::End(worker) => {
                    if let Some(reconcile) = self.end(worker) {
                        sink(reconcile)?;
                    }
                }
                Step::Ready => {
                    self.queue.advance(self.now);
                }
                Step::Start => self.start(),
            }
        }
        self.now = self.now.max(t);
        ControlFlow::Continue(())
    }

    /// The earliest step due by `t`.
    fn next_step(&self, t: Instant, starts_at_t: bool) -> Option<(Instant, Step)> {
        self.steps()
            .filter(|&(at, step)| match step {
                Step::Start => at < t || (starts_at_t && at <= t),
                _ => at <= t,
            })
            .min()
    }

    /// The next end, the next delayed key, and a start now if an idle worker has a key to take.
    fn steps(&self) -> impl Iterator<Item = (Instant, Step)> {
        let end = self
            .workers
            .iter()
            .enumerate()
            .filter_map(|(i, w)| w.as_ref().map(|r| (r.ends_at(), Step::End(i))))
            .min();
        let ready = self.queue.next_ready_at().map(|at| (at, Step::Ready));
        let start = (self.queue.has_ready() && self.workers.iter().any(Option::is_none))
            .then_some((self.now, Step::Start));
        [end, ready, start].into_iter().flatten()
    }

    /// `processNextWorkItem`'s `Get` and the start of `reconcileHandler`, on the first idle
    /// worker.
    fn start(&mut self) {
        let Some(slot) = self.workers.iter().position(Option::is_none) else {
            return;
        };
        let Some(got) = self.queue.get(self.now) else {
            return;
        };
        let attempt = self.queue.num_requeues(&got.item).saturating_add(1);
        let outcome = self.reconciler.reconcile(&got.item, attempt, self.now);
        self.reconciler
            .started(slot, &got, attempt, self.now, &outcome.seen);
        self.workers[slot] = Some(Running {
            got,
            attempt,
            started_at: self.now,
            outcome,
        });
    }

    /// The rest of `reconcileHandler`, then `Done`: the reconcile that ended.
    fn end(&mut self, worker: usize) -> Option<Reconcile<T, R::Seen>> {
        let running = self.workers[worker].take()?;
        let now = self.now;
        let key = running.got.item;
        let priority = running.got.priority;
        let retry_in = self
            .queue
            .requeue(&key, running.outcome.result, priority.unwrap_or(0), now);
        self.queue.done(&key, now);
        Some(Reconcile {
            worker,
            key,
            attempt: running.attempt,
            queued_at: running.got.queued_at,
            started_at: running.started_at,
            ended_at: now,
            adds: running.got.adds,
            requeued: running.got.requeued,
            seen: running.outcome.seen,
            result: running.outcome.result,
            retry_in,
            priority,
        })
    }

    /// The earliest time something is due: a reconcile's end, a delayed key, or now if an idle
    /// worker has a key to take; `None` when nothing will happen without an add.
    pub fn next_due(&self) -> Option<Instant> {
        self.steps().map(|(at, _)| at).min()
    }

    /// The simulation's time.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Keys being reconciled now.
    pub fn running(&self) -> impl Iterator<Item = (&T, Instant)> {
        self.workers
            .iter()
            .flatten()
            .map(|r| (&r.got.item, r.started_at))
    }

    /// The queue's metrics now.
    pub fn metrics(&self) -> QueueMetrics {
        self.queue.metrics(self.now)
    }

    /// The queue.
    pub fn queue(&self) -> &Q {
        &self.queue
    }

    /// The reconciler.
    pub fn reconciler(&self) -> &R {
        &self.reconciler
    }
}

#[cfg(test)]
#[path = "inline_tests.rs"]
mod tests;
