//! client-go's rate-limiting queue (`util/workqueue/rate_limiting_queue.go`, v0.36.3): a
//! [`DelayingQueue`] whose retries wait as long as a [`RateLimiter`] says.

use std::fmt;
use std::hash::Hash;
use std::time::{Duration, Instant};

use super::delaying_queue::DelayingQueue;
use super::metrics::QueueMetrics;
use super::queue::{Added, Finished, Got};
use super::rate_limiter::{RateLimiter, default_controller_rate_limiter};

/// client-go's `rateLimitingType`, without its lock (see the [module](super) doc).
pub struct RateLimitingQueue<T> {
    queue: DelayingQueue<T>,
    limiter: Box<dyn RateLimiter<T>>,
}

impl<T> fmt::Debug for RateLimitingQueue<T>
where
    T: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimitingQueue")
            .field("queue", &self.queue)
            .finish_non_exhaustive()
    }
}

impl<T: Eq + Hash + Clone + Send + 'static> Default for RateLimitingQueue<T> {
    /// With [`default_controller_rate_limiter`], as `NewTypedRateLimitingQueue(
    /// DefaultTypedControllerRateLimiter())` in a client-go controller.
    fn default() -> Self {
        RateLimitingQueue::new(Box::new(default_controller_rate_limiter()))
    }
}

impl<T: Eq + Hash + Clone> RateLimitingQueue<T> {
    /// `NewTypedRateLimitingQueue(limiter)`.
    pub fn new(limiter: Box<dyn RateLimiter<T>>) -> Self {
        RateLimitingQueue {
            queue: DelayingQueue::new(),
            limiter,
        }
    }

    /// client-go's `AddRateLimited`: `AddAfter(item, limiter.When(item))`. Returns the delay.
    /// The limiter is consulted even when the queue is shutting down, as in client-go.
    pub fn add_rate_limited(&mut self, item: T, now: Instant) -> Duration {
        let delay = self.limiter.when(&item, now);
        self.queue.add_after(item, delay, now);
        delay
    }

    /// client-go's `Forget`: the limiter forgets the item's failures.
    pub fn forget(&mut self, item: &T) {
        self.limiter.forget(item);
    }

    /// client-go's `NumRequeues`.
    pub fn num_requeues(&self, item: &T) -> u32 {
        self.limiter.num_requeues(item)
    }

    /// [`DelayingQueue::add_after`].
    pub fn add_after(&mut self, item: T, delay: Duration, now: Instant) {
        self.queue.add_after(item, delay, now);
    }

    /// [`DelayingQueue::advance`].
    pub fn advance(&mut self, now: Instant) -> usize {
        self.queue.advance(now)
    }

    /// [`DelayingQueue::next_ready_at`].
    pub fn next_ready_at(&self) -> Option<Instant> {
        self.queue.next_ready_at()
    }

    /// [`Queue::add`](super::Queue::add).
    pub fn add(&mut self, item: T, now: Instant) -> Added {
        self.queue.add(item, now)
    }

    /// [`Queue::get`](super::Queue::get).
    pub fn get(&mut self, now: Instant) -> Option<Got<T>> {
        self.queue.get(now)
    }

    /// [`Queue::done`](super::Queue::done).
    pub fn done(&mut self, item: &T, now: Instant) -> Finished {
        self.queue.done(item, now)
    }

    /// [`Queue::len`](super::Queue::len).
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// [`Queue::is_empty`](super::Queue::is_empty).
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// The delaying queue underneath.
    pub fn delaying(&self) -> &DelayingQueue<T> {
        &self.queue
    }

    /// [`DelayingQueue::shut_down`].
    pub fn shut_down(&mut self) {
        self.queue.shut_down();
    }

    /// [`DelayingQueue::shutting_down`].
    pub fn shutting_down(&self) -> bool {
        self.queue.shutting_down()
    }

    /// [`DelayingQueue::metrics`].
    pub fn metrics(&self, now: Instant) -> QueueMetrics {
        self.queue.metrics(now)
    }
}
