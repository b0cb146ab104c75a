//! What a controller does with its handler's notifications: client-go's `util/workqueue`
//! (v0.36.3: `queue.go`, `delaying_queue.go`, `rate_limiting_queue.go`,
//! `default_rate_limiters.go`, `metrics.go`), controller-runtime's priority queue (v0.24.1:
//! `pkg/controller/priorityqueue`, its default since v0.23.0; [`PriorityQueue`] has its rules),
//! and the worker loop of controller-runtime's `pkg/internal/controller` (v0.24.1:
//! `processNextWorkItem`, `reconcileHandler`), which runs either queue through one trait,
//! [`ControllerQueue`].
//!
//! A controller's handler puts the changed object's key into a rate-limited workqueue; workers
//! take keys out and reconcile them. The queue's rules are what make "why did my reconcile run
//! three times / not at all / 40 s late?" answerable:
//!
//! | situation | outcome | where |
//! |---|---|---|
//! | `add` of a key already waiting (dirty, not processing) | nothing: the adds fold into one reconcile | [`Queue::add`] |
//! | `add` of a key being processed | marked dirty; queued again by `done`, never processed by two workers at once | [`Queue::add`], [`Queue::done`] |
//! | `get` | the oldest waiting key; it moves from dirty to processing | [`Queue::get`] |
//! | `add_after(d)`, `d > 0` | waits in a heap ordered by ready time only (not stable for equal times); a second `add_after` of a waiting key keeps the earlier time | [`DelayingQueue::add_after`] |
//! | `add` of a key with a pending `add_after` | queued now; the pending entry still fires later | [`DelayingQueue`] |
//! | `add_rate_limited` | `add_after` by the rate limiter's `when`, which every limiter of a max-of consults (and charges) | [`RateLimitingQueue::add_rate_limited`] |
//! | `forget` | the item's failure count goes back to 0 | [`RateLimiter::forget`] |
//!
//! Every operation takes the time it happens at (`now`) from the caller: the types here are
//! plain state machines with no lock and no clock of their own, so an instant replay drives them
//! on the recording's clock ([`InlineWorkers`]) and gets the same result on every run, and a live
//! run wraps them in one lock with a real [`Clock`](super::reflector::Clock) ([`Workqueue`]),
//! worked by threads running the same worker loop ([`ThreadedWorkers`]).
//!
//! ## Where this differs from client-go, and why
//! - client-go's delaying queue moves ready entries from its heap into the queue on a goroutine
//!   (`waitingLoop`) woken by a timer; here [`DelayingQueue::advance`] does the same moves when
//!   the caller says time has passed, which is what a timer firing exactly on time would do.
//! - client-go's token bucket (`golang.org/x/time/rate`) reads the wall clock (`time.Now`) even
//!   when the queue has a fake clock; here it reads the caller's `now` like everything else, so
//!   a replay's rate limiting happens on the recording's clock.
//! - The metrics (`workqueue_*` names) are kept as plain counters on the queue, not exported to
//!   Prometheus; each `get` and `done` also returns what it measured, for per-reconcile reports.

mod controller_queue;
mod delaying_queue;
mod inline;
mod metrics;
mod priority_queue;
mod queue;
mod rate_limiter;
mod rate_limiting_queue;
mod shared;
mod threaded;

pub use controller_queue::{ControllerQueue, ReconcileResult};
pub use delaying_queue::{DelayingQueue, WaitingQueue};
pub use inline::{InlineWorkers, Outcome, Reconcile, ReconcileSink, Reconciler, WorkersConfig};
pub use metrics::QueueMetrics;
pub use priority_queue::{AddOpts, LOW_PRIORITY, PriorityQueue, priority_queue_rate_limiter};
pub use queue::{Added, Finished, Got, Queue};
pub use rate_limiter::{
    BucketRateLimiter, ItemExponentialFailureRateLimiter, MaxOfRateLimiter, RateLimiter,
    default_controller_rate_limiter,
};
pub use rate_limiting_queue::RateLimitingQueue;
pub use shared::Workqueue;
pub use threaded::{Interrupt, ThreadedWorkers};
