//! A controller's workers on threads: the loop of [`InlineWorkers`](super::InlineWorkers)
//! (controller-runtime's `processNextWorkItem` and `reconcileHandler`, v0.24.1
//! `pkg/internal/controller/controller.go`) over a [`Workqueue`] shared with the handler that
//! adds keys, on a clock that runs with real time (a live cluster's, or a replay's at `--speed`).
//!
//! Each worker loops: `Get` (blocking); reconcile (the [`Reconciler`] says for how long and with
//! what result, and the worker sleeps that long in real time, cut short by the [`Interrupt`]);
//! then, as `reconcileHandler` does, `AddRateLimited` on an error, `Forget` + `AddAfter` on a
//! `RequeueAfter`, `Forget` on a success, each re-add at the priority the key was handed out with;
//! then `Done`; then the reconcile goes to the sink. A reconcile cut short by the interrupt never
//! ended and is not reported.
//!
//! Nothing polls: a worker blocks in `Get` until a key is ready, and
//! [`wait_settled`](ThreadedWorkers::wait_settled) blocks until a worker that handed on a
//! reconcile, or the interrupt, wakes it.

use std::hash::Hash;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use super::controller_queue::ControllerQueue;
use super::inline::{Reconcile, Reconciler};
use super::metrics::QueueMetrics;
use super::shared::Workqueue;
use crate::cache::clock::Clock;

/// What ends the workers' waits early: the end of the session that runs them.
pub trait Interrupt: Send + Sync {
    /// Whether the workers are to stop.
    fn requested(&self) -> bool;

    /// Sleeps for `duration` of real time, or until the interrupt is requested.
    fn sleep(&self, duration: Duration);
}

/// A controller's queue and its worker threads.
pub struct ThreadedWorkers<T, R, Q> {
    queue: Workqueue<T, Q>,
    reconciler: Mutex<R>,
    clock: Arc<dyn Clock>,
    interrupt: Arc<dyn Interrupt>,
    threads: Mutex<Vec<JoinHandle<()>>>,
    /// The queue's metrics when the workers were told to stop, before they left.
    at_stop: Mutex<Option<QueueMetrics>>,
    /// The reconciles that ended (`Done`) and are not yet handed to the sink; notified after
    /// each is handed, after a reconcile cut short, and at the stop: what
    /// [`wait_settled`](ThreadedWorkers::wait_settled) waits on.
    settled: (Mutex<usize>, Condvar),
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl<T, R, Q> ThreadedWorkers<T, R, Q>
where
    T: Eq + Hash + Clone + Send + 'static,
    R: Reconciler<T> + Send + 'static,
    R::Seen: Send,
    Q: ControllerQueue<T> + Send + 'static,
{
    /// Workers for `queue`, reconciling with `reconciler`, stamping every operation with `clock`,
    /// stopped by `interrupt`. No thread runs before [`start`](ThreadedWorkers::start).
    pub fn new(
        queue: Q,
        reconciler: R,
        clock: Arc<dyn Clock>,
        interrupt: Arc<dyn Interrupt>,
    ) -> Arc<Self> {
        Arc::new(ThreadedWorkers {
            queue: Workqueue::with_queue(queue, clock.clone()),
            reconciler: Mutex::new(reconciler),
            clock,
            interrupt,
            threads: Mutex::default(),
            at_stop: Mutex::default(),
            settled: (Mutex::new(0), Condvar::new()),
        })
    }

    /// Starts `workers` threads, each handing every reconcile it ends to `sink`.
    pub fn start(
        self: &Arc<Self>,
        workers: usize,
        sink: impl Fn(Reconcile<T, R::Seen>) + Send + Sync + 'static,
    ) -> std::io::Result<()> {
        let sink = Arc::new(sink);
        let mut threads = lock(&self.threads);
        for worker in 0..workers {
            let (workers, sink) = (self.clone(), sink.clone());
            threads.push(
                std::thread::Builder::new()
                    .name(format!("reconcile-{worker}"))
                    .spawn(move || workers.work(worker, &*sink))?,
            );
        }
        Ok(())
    }

    /// The handler's `Add` at `priority`, now.
    pub fn add_with_priority(&self, key: T, priority: i32) {
        self.queue.add_with_priority(key, priority);
    }

    /// One worker: `processNextWorkItem` until the queue shuts down or the interrupt.
    fn work(&self, worker: usize, sink: &dyn Fn(Reconcile<T, R::Seen>)) {
        let interrupt = &*self.interrupt;
        while !interrupt.requested() {
            let Some(got) = self.queue.get() else {
                return;
            };
            if interrupt.requested() {
                self.done(&got.item);
                return;
            }
            let attempt = self.queue.num_requeues(&got.item).saturating_add(1);
            let started_at = self.clock.now();
            let outcome = {
                let mut reconciler = lock(&self.reconciler);
                let outcome = reconciler.reconcile(&got.item, attempt, started_at);
                reconciler.started(worker, &got, attempt, started_at, &outcome.seen);
                outcome
            };
            if !outcome.duration.is_zero() {
                interrupt.sleep(self.clock.in_real_time(outcome.duration));
            }
            if interrupt.requested() {
                // Cut short: it never ended, and it is not reported.
                self.done(&got.item);
                return;
            }
            // Reconcile returned: the end, before `Done` can hand the key to another worker.
            let ended_at = self.clock.now();
            let key = got.item;
            let retry_in = (self.queue).requeue(&key, outcome.result, got.priority.unwrap_or(0));
            // Counted as unsettled until the sink has it: a wait that ends at the last `Done`
            // must find its reconcile handed on.
            *lock(&self.settled.0) += 1;
            self.queue.done(&key);
            sink(Reconcile {
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
            *lock(&self.settled.0) -= 1;
            self.settled.1.notify_all();
        }
    }

    /// `Done` of a reconcile cut short, then a wake-up for
    /// [`wait_settled`](ThreadedWorkers::wait_settled).
    fn done(&self, key: &T) {
        self.queue.done(key);
        let _settled = lock(&self.settled.0);
        self.settled.1.notify_all();
    }

    /// Blocks until no key is ready or being reconciled, every reconcile that ended is handed to
    /// the sink and, unless `requeues_pending` says a delayed key is only a `requeue-after` (which
    /// would come back forever), none waits for its retry; or until the interrupt. The state only
    /// settles when a worker has handed a reconcile on (a delayed key coming due is taken by a
    /// worker first), which wakes this wait.
    pub fn wait_settled(&self, requeues_pending: bool) {
        let mut guard = lock(&self.settled.0);
        while !self.interrupt.requested() {
            let m = self.queue.metrics();
            let retries_left = m.waiting_after > 0 && !requeues_pending;
            if *guard == 0 && m.depth == 0 && m.gets == m.dones && !retries_left {
                return;
            }
            guard = self
                .settled
                .1
                .wait(guard)
                .unwrap_or_else(|e| e.into_inner());
        }
    }

    /// At the stop, before the waits end: the metrics are taken (what is still waiting), then the
    /// queue shuts down so that idle workers leave, and a [`wait_settled`] wakes.
    ///
    /// [`wait_settled`]: ThreadedWorkers::wait_settled
    pub fn stopping(&self) {
        lock(&self.at_stop).get_or_insert_with(|| self.queue.metrics());
        self.queue.shut_down();
        let _settled = lock(&self.settled.0);
        self.settled.1.notify_all();
    }

    /// Waits for the workers to leave (the queue shut down first).
    pub fn join(&self) {
        self.queue.shut_down();
        let threads = std::mem::take(&mut *lock(&self.threads));
        for thread in threads {
            let _ = thread.join();
        }
    }

    /// The queue's metrics: as they were at the stop, or now.
    pub fn metrics(&self) -> QueueMetrics {
        lock(&self.at_stop).unwrap_or_else(|| self.queue.metrics())
    }
}

#[cfg(test)]
#[path = "threaded_tests.rs"]
mod tests;
