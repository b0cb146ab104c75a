//! A controller's queue shared by a handler and live worker threads: client-go's
//! [`RateLimitingQueue`] (or controller-runtime's [`PriorityQueue`](super::PriorityQueue), any
//! [`ControllerQueue`]) with its lock (`cond`) and its waiting loop, on a [`Clock`].

use std::fmt;
use std::hash::Hash;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::controller_queue::{ControllerQueue, ReconcileResult};
use super::metrics::QueueMetrics;
use super::queue::{Added, Finished, Got};
use super::rate_limiter::RateLimiter;
use super::rate_limiting_queue::RateLimitingQueue;
use crate::cache::clock::Clock;

/// client-go's `TypedRateLimitingInterface` for threads: every call takes the time from the
/// clock, and [`get`](Workqueue::get) blocks like client-go's `Get`, moving delayed keys into the
/// queue when they are due (what `waitingLoop` does on its own goroutine).
///
/// `get` sleeps in real time (a condition variable's timeout) until the next delayed key is due,
/// for as long as the clock says that lasts ([`Clock::in_real_time`]), as client-go's
/// `waitingLoop` waits on a timer of its clock (`q.clock.NewTimer(entry.readyAt.Sub(now))`,
/// delaying_queue.go v0.36.3): use a clock that runs with real time here (a real one, or a
/// replay's at `--speed`), and [`InlineWorkers`](super::InlineWorkers) on one that moves only when
/// told.
pub struct Workqueue<T, Q = RateLimitingQueue<T>> {
    queue: Mutex<Q>,
    /// Signalled when a key may be ready for `get`: an add, a re-queue by `done`, a new delayed
    /// entry (which may be due before the one a sleeping `get` waits for), a shutdown.
    ready: Condvar,
    clock: Arc<dyn Clock>,
    _keys: std::marker::PhantomData<fn(T)>,
}

impl<T, Q> fmt::Debug for Workqueue<T, Q> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Workqueue").finish_non_exhaustive()
    }
}

impl<T: Eq + Hash + Clone> Workqueue<T> {
    /// client-go's queue retrying with `limiter`, stamping every operation with `clock`.
    pub fn new(limiter: Box<dyn RateLimiter<T>>, clock: Arc<dyn Clock>) -> Self {
        Workqueue::with_queue(RateLimitingQueue::new(limiter), clock)
    }
}

impl<T: Eq + Hash + Clone, Q: ControllerQueue<T>> Workqueue<T, Q> {
    /// `queue`, stamping every operation with `clock`.
    pub fn with_queue(queue: Q, clock: Arc<dyn Clock>) -> Self {
        Workqueue {
            queue: Mutex::new(queue),
            ready: Condvar::new(),
            clock,
            _keys: std::marker::PhantomData,
        }
    }

    // Every critical section is a few map operations that do not panic on consistent data, so a
    // poisoned lock (a panic in a `Clock`) still guards a consistent queue.
    fn lock(&self) -> MutexGuard<'_, Q> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// [`ControllerQueue::add`] now, at priority 0 (`Add`).
    pub fn add(&self, item: T) -> Added {
        self.add_with_priority(item, 0)
    }

    /// [`ControllerQueue::add`] now, at `priority`.
    pub fn add_with_priority(&self, item: T, priority: i32) -> Added {
        let added = self.lock().add(item, priority, self.clock.now());
        if added == Added::Queued {
            self.ready.notify_one();
        }
        added
    }

    /// [`ControllerQueue::add_after`] from now, at priority 0 (`AddAfter`).
    pub fn add_after(&self, item: T, delay: Duration) {
        self.lock().add_after(item, delay, 0, self.clock.now());
        self.ready.notify_all();
    }

    /// [`ControllerQueue::add_rate_limited`] now, at priority 0 (`AddRateLimited`); returns the
    /// delay.
    pub fn add_rate_limited(&self, item: T) -> Duration {
        let delay = self.lock().add_rate_limited(item, 0, self.clock.now());
        self.ready.notify_all();
        delay
    }

    /// [`ControllerQueue::requeue`] now: what `reconcileHandler` does with a reconcile's result,
    /// before `Done`; returns the rate limiter's delay after an error.
    pub fn requeue(&self, item: &T, result: ReconcileResult, priority: i32) -> Option<Duration> {
        let delay = self
            .lock()
            .requeue(item, result, priority, self.clock.now());
        // A re-add may be due before the entry a sleeping `get` waits for.
        self.ready.notify_all();
        delay
    }

    /// [`ControllerQueue::forget`].
    pub fn forget(&self, item: &T) {
        self.lock().forget(item);
    }

    /// [`ControllerQueue::num_requeues`].
    pub fn num_requeues(&self, item: &T) -> u32 {
        self.lock().num_requeues(item)
    }

    /// client-go's `Get`: blocks until a key is ready and hands it out; `None` once the queue is
    /// shutting down and empty.
    pub fn get(&self) -> Option<Got<T>> {
        let mut queue = self.lock();
        loop {
            let now = self.clock.now();
            queue.advance(now);
            if let Some(got) = queue.get(now) {
                return Some(got);
            }
            if queue.shutting_down() {
                return None;
            }
            queue = match queue.next_ready_at() {
                Some(at) => {
                    let timeout = self.clock.in_real_time(at.saturating_duration_since(now));
                    self.ready
                        .wait_timeout(queue, timeout)
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
                None => self.ready.wait(queue).unwrap_or_else(|e| e.into_inner()),
            };
        }
    }

    /// [`ControllerQueue::done`], now.
    pub fn done(&self, item: &T) -> Finished {
        let finished = self.lock().done(item, self.clock.now());
        if finished.requeued {
            self.ready.notify_one();
        }
        finished
    }

    /// Keys ready for a worker.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no key is ready for a worker.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// `ShutDown`: adds are ignored, delayed keys never come, and every `get` returns `None` once
    /// the ready keys are taken (client-go's queue), or at once (controller-runtime's priority
    /// queue).
    pub fn shut_down(&self) {
        self.lock().shut_down();
        self.ready.notify_all();
    }

    /// The metrics now.
    pub fn metrics(&self) -> QueueMetrics {
        self.lock().metrics(self.clock.now())
    }

    /// The clock every operation is stamped with.
    pub fn now(&self) -> Instant {
        self.clock.now()
    }
}

#[cfg(test)]
#[path = "shared_tests.rs"]
mod tests;
