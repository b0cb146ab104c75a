//! What a controller's handler and workers need of their queue, so that one worker loop
//! ([`InlineWorkers`](super::InlineWorkers), [`Workqueue`](super::Workqueue)) runs client-go's
//! [`RateLimitingQueue`] or controller-runtime's [`PriorityQueue`].
//!
//! controller-runtime's controller does the same (`pkg/internal/controller/controller.go`,
//! v0.24.1): its `Queue` is a `priorityqueue.PriorityQueue`, and a client-go queue is wrapped in
//! `priorityQueueWrapper`, whose `AddWithOpts` drops the priority and whose `GetWithPriority`
//! answers 0.

use std::hash::Hash;
use std::time::{Duration, Instant};

use super::metrics::QueueMetrics;
use super::priority_queue::PriorityQueue;
use super::queue::{Added, Finished, Got};
use super::rate_limiting_queue::RateLimitingQueue;

/// What a reconcile returned (controller-runtime's `Result` and `error`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReconcileResult {
    /// Success: the key is forgotten (its failure count back to 0).
    Ok,
    /// An error: the key is added again after the rate limiter's delay.
    Error,
    /// `Result{RequeueAfter: d}`: forgotten, then added again after `d`. A zero `d` is a plain
    /// success, as in `reconcileHandler` (`case result.RequeueAfter > 0`).
    RequeueAfter(Duration),
}

/// A controller's queue, driven on the caller's clock: every operation takes `now`.
///
/// The adds take a priority (higher first), which a queue without priorities ignores.
pub trait ControllerQueue<T> {
    /// `Add`: ready now.
    fn add(&mut self, item: T, priority: i32, now: Instant) -> Added;
    /// `AddAfter`: ready after `after`.
    fn add_after(&mut self, item: T, after: Duration, priority: i32, now: Instant);
    /// `AddRateLimited`: ready after the rate limiter's delay, which it returns.
    fn add_rate_limited(&mut self, item: T, priority: i32, now: Instant) -> Duration;
    /// `Forget`: the rate limiter forgets the key's failures.
    fn forget(&mut self, item: &T);
    /// `NumRequeues`: the key's failures since it was last forgotten.
    fn num_requeues(&self, item: &T) -> u32;
    /// `Get` without the wait: the next key for a worker, if one can be handed out now.
    fn get(&mut self, now: Instant) -> Option<Got<T>>;
    /// `Done`: the worker is finished with the key.
    fn done(&mut self, item: &T, now: Instant) -> Finished;
    /// Delayed keys due by `now` become ready (what the queue's timer goroutine does); how many.
    fn advance(&mut self, now: Instant) -> usize;
    /// When the next delayed key is due.
    fn next_ready_at(&self) -> Option<Instant>;
    /// Whether [`get`](ControllerQueue::get) would hand out a key now.
    fn has_ready(&self) -> bool;
    /// Keys ready for a worker (`Len`).
    fn len(&self) -> usize;
    /// Whether no key is ready for a worker.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// `ShutDown`.
    fn shut_down(&mut self);
    /// `ShuttingDown`.
    fn shutting_down(&self) -> bool;
    /// The metrics at `now`.
    fn metrics(&self, now: Instant) -> QueueMetrics;

    /// What controller-runtime's `reconcileHandler` does with a reconcile's result before its
    /// worker calls `Done`: an error is `AddRateLimited`; a `RequeueAfter` is `Forget` and
    /// `AddAfter`; a success is `Forget`. The re-adds keep `priority`, the one the key was
    /// handed out with (`AddOpts{…, Priority: new(priority)}`). Returns the rate limiter's delay
    /// after an error.
    fn requeue(
        &mut self,
        item: &T,
        result: ReconcileResult,
        priority: i32,
        now: Instant,
    ) -> Option<Duration>
    where
        T: Clone,
    {
        match result {
            ReconcileResult::Error => Some(self.add_rate_limited(item.clone(), priority, now)),
            ReconcileResult::RequeueAfter(after) if !after.is_zero() => {
                self.forget(item);
                self.add_after(item.clone(), after, priority, now);
                None
            }
            ReconcileResult::Ok | ReconcileResult::RequeueAfter(_) => {
                self.forget(item);
                None
            }
        }
    }
}

/// client-go's queue, as controller-runtime's `priorityQueueWrapper` runs it: priorities ignored.
impl<T: Eq + Hash + Clone> ControllerQueue<T> for RateLimitingQueue<T> {
    fn add(&mut self, item: T, _priority: i32, now: Instant) -> Added {
        RateLimitingQueue::add(self, item, now)
    }

    fn add_after(&mut self, item: T, after: Duration, _priority: i32, now: Instant) {
        RateLimitingQueue::add_after(self, item, after, now);
    }

    fn add_rate_limited(&mut self, item: T, _priority: i32, now: Instant) -> Duration {
        RateLimitingQueue::add_rate_limited(self, item, now)
    }

    fn forget(&mut self, item: &T) {
        RateLimitingQueue::forget(self, item);
    }

    fn num_requeues(&self, item: &T) -> u32 {
        RateLimitingQueue::num_requeues(self, item)
    }

    fn get(&mut self, now: Instant) -> Option<Got<T>> {
        RateLimitingQueue::get(self, now)
    }

    fn done(&mut self, item: &T, now: Instant) -> Finished {
        RateLimitingQueue::done(self, item, now)
    }

    fn advance(&mut self, now: Instant) -> usize {
        RateLimitingQueue::advance(self, now)
    }

    fn next_ready_at(&self) -> Option<Instant> {
        RateLimitingQueue::next_ready_at(self)
    }

    /// A key in client-go's queue is never being processed: `Done` puts it there.
    fn has_ready(&self) -> bool {
        !RateLimitingQueue::is_empty(self)
    }

    fn len(&self) -> usize {
        RateLimitingQueue::len(self)
    }

    fn shut_down(&mut self) {
        RateLimitingQueue::shut_down(self);
    }

    fn shutting_down(&self) -> bool {
        RateLimitingQueue::shutting_down(self)
    }

    fn metrics(&self, now: Instant) -> QueueMetrics {
        RateLimitingQueue::metrics(self, now)
    }
}

impl<T: Eq + Hash + Clone> ControllerQueue<T> for PriorityQueue<T> {
    fn add(&mut self, item: T, priority: i32, now: Instant) -> Added {
        PriorityQueue::add(self, item, priority, now)
    }

    fn add_after(&mut self, item: T, after: Duration, priority: i32, now: Instant) {
        PriorityQueue::add_after(self, item, after, priority, now);
    }

    fn add_rate_limited(&mut self, item: T, priority: i32, now: Instant) -> Duration {
        PriorityQueue::add_rate_limited(self, item, priority, now)
    }

    fn forget(&mut self, item: &T) {
        PriorityQueue::forget(self, item);
    }

    fn num_requeues(&self, item: &T) -> u32 {
        PriorityQueue::num_requeues(self, item)
    }

    fn get(&mut self, now: Instant) -> Option<Got<T>> {
        PriorityQueue::get(self, now)
    }

    fn done(&mut self, item: &T, now: Instant) -> Finished {
        PriorityQueue::done(self, item, now)
    }

    fn advance(&mut self, now: Instant) -> usize {
        PriorityQueue::advance(self, now)
    }

    fn next_ready_at(&self) -> Option<Instant> {
        PriorityQueue::next_ready_at(self)
    }

    fn has_ready(&self) -> bool {
        PriorityQueue::has_ready(self)
    }

    fn len(&self) -> usize {
        PriorityQueue::len(self)
    }

    fn shut_down(&mut self) {
        PriorityQueue::shut_down(self);
    }

    fn shutting_down(&self) -> bool {
        PriorityQueue::shutting_down(self)
    }

    fn metrics(&self, now: Instant) -> QueueMetrics {
        PriorityQueue::metrics(self, now)
    }
}

/// A queue chosen at run time (`Box<dyn ControllerQueue<T> + Send>`).
impl<T, Q: ControllerQueue<T> + ?Sized> ControllerQueue<T> for Box<Q> {
    fn add(&mut self, item: T, priority: i32, now: Instant) -> Added {
        (**self).add(item, priority, now)
    }

    fn add_after(&mut self, item: T, after: Duration, priority: i32, now: Instant) {
        (**self).add_after(item, after, priority, now);
    }

    fn add_rate_limited(&mut self, item: T, priority: i32, now: Instant) -> Duration {
        (**self).add_rate_limited(item, priority, now)
    }

    fn forget(&mut self, item: &T) {
        (**self).forget(item);
    }

    fn num_requeues(&self, item: &T) -> u32 {
        (**self).num_requeues(item)
    }

    fn get(&mut self, now: Instant) -> Option<Got<T>> {
        (**self).get(now)
    }

    fn done(&mut self, item: &T, now: Instant) -> Finished {
        (**self).done(item, now)
    }

    fn advance(&mut self, now: Instant) -> usize {
        (**self).advance(now)
    }

    fn next_ready_at(&self) -> Option<Instant> {
        (**self).next_ready_at()
    }

    fn has_ready(&self) -> bool {
        (**self).has_ready()
    }

    fn len(&self) -> usize {
        (**self).len()
    }

    fn shut_down(&mut self) {
        (**self).shut_down();
    }

    fn shutting_down(&self) -> bool {
        (**self).shutting_down()
    }

    fn metrics(&self, now: Instant) -> QueueMetrics {
        (**self).metrics(now)
    }
}
