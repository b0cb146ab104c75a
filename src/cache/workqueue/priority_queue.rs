//! controller-runtime's priority queue (`pkg/controller/priorityqueue/priorityqueue.go`,
//! v0.24.1), the queue a controller-runtime controller runs by default since v0.23.0
//! (`pkg/controller/controller.go` `NewTypedUnmanaged`: `ptr.Deref(options.UsePriorityQueue,
//! true)`; `false` up to v0.22).
//!
//! It keeps one entry per key, like client-go's `dirty` set, but orders the entries by
//! priority, and folds delayed adds into the same entry instead of a second heap:
//!
//! | situation | outcome | where (`priorityqueue.go`) |
//! |---|---|---|
//! | an add of a key with no entry | a new entry: ready now, or waiting until `now + after` | `lockedAddWithOpts` |
//! | an add of a key with an entry | one entry: the higher of the two priorities, the earlier of the two ready times (a ready entry stays ready) | `lockedAddWithOpts` |
//! | … whose priority it raises | the entry goes behind the entries of its new priority (a new add counter) | `lockedAddWithOpts` |
//! | … that makes a waiting entry ready at the same priority | it keeps its old add counter: it goes *before* entries added while it waited | `lockedAddWithOpts` |
//! | `after` and `rate_limited` together | the smaller of `after` and the limiter's delay | `lockedAddWithOpts` |
//! | a waiting entry's ready time passes | it becomes ready with a new add counter (ordered by when it became ready), in ready-time order | `handleWaitingItems` |
//! | `get` | the ready entry of the highest priority, the earliest added among equals, skipping keys being processed | `handleReadyItems`, `lessReady` |
//! | an add of a key being processed | a new entry, handed out only after `done` at its place in the order (not at the back, as client-go's `Done` queues it) | `handleReadyItems` (`w.locked.Has`) |
//! | `done` | the key can be handed out again | `Done` |
//! | `shut_down` | adds are ignored and `get` hands out nothing, even what is ready | `AddWithOpts`, `GetWithPriority` |
//!
//! Its default rate limiter is the per-item exponential one alone (5 ms·2ⁿ up to 1000 s:
//! `New`, and `NewTypedUnmanaged` when `UsePriorityQueue` is on), without client-go's 10 qps
//! token bucket: [`priority_queue_rate_limiter`].
//!
//! Where this differs from controller-runtime, and why:
//! - controller-runtime buffers `AddWithOpts` (`addBuffer`) and applies the buffer on another
//!   goroutine, or before it hands out items; here an add applies when it is made, which is
//!   what a flush before the next `Get` gives.
//! - Its ready and waiting entries live in two B-trees (`btree.New(32, lessReady)`,
//!   `lessWaiting`); here two `BTreeMap`s keyed by the same orders. The orders are total (add
//!   counters are unique), so the two give the same sequence.
//! - Its metrics are Prometheus series (`metrics.go`, with `workqueue_depth` per priority);
//!   here the same counters as [`QueueMetrics`], as for client-go's queue.

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::fmt;
use std::hash::Hash;
use std::time::{Duration, Instant};

use hashbrown::HashMap;

use super::metrics::QueueMetrics;
use super::queue::{Added, Finished, Got};
use super::rate_limiter::{ItemExponentialFailureRateLimiter, RateLimiter};

/// controller-runtime's `handler.LowPriority`: what its default handlers give adds from the
/// initial list and updates with an unchanged resourceVersion (resyncs), so that real changes
/// overtake them (`pkg/handler/eventhandler.go`, v0.24.1).
pub const LOW_PRIORITY: i32 = -100;

/// controller-runtime's `priorityqueue.AddOpts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AddOpts {
    /// Ready only after this long (zero: ready now).
    pub after: Duration,
    /// Ready after the rate limiter's delay for the key (its `When`, which counts a failure).
    pub rate_limited: bool,
    /// Higher first; 0 when unset (`ptr.Deref(o.Priority, 0)`).
    pub priority: i32,
}

/// The rate limiter a controller-runtime controller gives its priority queue by default:
/// `NewTypedItemExponentialFailureRateLimiter(5*time.Millisecond, 1000*time.Second)` alone
/// (v0.24.1 `priorityqueue.New`, and `NewTypedUnmanaged` when `UsePriorityQueue` is on).
pub fn priority_queue_rate_limiter<T: Eq + Hash + Clone + Send>()
-> ItemExponentialFailureRateLimiter<T> {
    ItemExponentialFailureRateLimiter::new(Duration::from_millis(5), Duration::from_secs(1000))
}

/// Where a ready entry sits: `lessReady`, the higher priority first, then the lower add counter.
type ReadyKey = (Reverse<i32>, u64);

/// Where a waiting entry sits: `lessWaiting`, the earlier ready time first, then `lessReady`.
type WaitingKey = (Instant, Reverse<i32>, u64);

/// A key's one entry (controller-runtime's `item`, with what the reports need).
#[derive(Debug, Clone, Copy)]
struct Item {
    priority: i32,
    /// `AddedCounter`: the order among entries of one priority.
    counter: u64,
    /// `ReadyAt`: `None` when ready (in `ready`), the time it becomes ready when waiting.
    ready_at: Option<Instant>,
    /// The adds this entry absorbed, delayed ones included.
    adds: u64,
    /// When it became ready (the metrics' `addTimes`, which `workqueue_queue_duration_seconds`
    /// measures from); `None` while waiting.
    queued_at: Option<Instant>,
    /// It became ready while its key was being processed: it waits for that `done`.
    while_processing: bool,
}

impl Item {
    fn ready_key(&self) -> ReadyKey {
        (Reverse(self.priority), self.counter)
    }

    fn waiting_key(&self, ready_at: Instant) -> WaitingKey {
        (ready_at, Reverse(self.priority), self.counter)
    }
}

/// controller-runtime's `priorityqueue`, without its lock, goroutines and clock (see the
/// module doc): every operation takes the time it happens at.
pub struct PriorityQueue<T> {
    /// Each key's entry. A key is here if and only if it is in exactly one of `ready` (its
    /// `ready_at` is `None`) and `waiting` (`Some`), under the key its fields give.
    items: HashMap<T, Item>,
    /// Ready entries in `get` order.
    ready: BTreeMap<ReadyKey, T>,
    /// Waiting entries in the order they become ready.
    waiting: BTreeMap<WaitingKey, T>,
    /// `addedCounter`: the next add counter; only grows.
    added_counter: u64,
    /// Keys handed out by `get` and not yet `done` (`locked`), with when `get` handed them out
    /// (the metrics' `processingStartTimes`). A key here has no entry from before its `get`:
    /// `get` removes the entry it hands out.
    locked: HashMap<T, Instant>,
    limiter: Box<dyn RateLimiter<T>>,
    shutting_down: bool,
    metrics: QueueMetrics,
}

impl<T: fmt::Debug> fmt::Debug for PriorityQueue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PriorityQueue")
            .field("ready", &self.ready)
            .field("waiting", &self.waiting)
            .field("locked", &self.locked.len())
            .finish_non_exhaustive()
    }
}

impl<T: Eq + Hash + Clone + Send + 'static> Default for PriorityQueue<T> {
    /// With [`priority_queue_rate_limiter`], as controller-runtime builds it.
    fn default() -> Self {
        PriorityQueue::new(Box::new(priority_queue_rate_limiter()))
    }
}

impl<T: Eq + Hash + Clone> PriorityQueue<T> {
    /// `priorityqueue.New` with `Opts.RateLimiter` = `limiter`.
    pub fn new(limiter: Box<dyn RateLimiter<T>>) -> Self {
        PriorityQueue {
            items: HashMap::new(),
            ready: BTreeMap::new(),
            waiting: BTreeMap::new(),
            added_counter: 0,
            locked: HashMap::new(),
            limiter,
            shutting_down: false,
            metrics: QueueMetrics::default(),
        }
    }

    fn next_counter(&mut self) -> u64 {
        let counter = self.added_counter;
        self.added_counter += 1;
        counter
    }

    /// `metrics.add`, called when an entry becomes ready.
    fn became_ready(&mut self, item: &T, entry: &mut Item, now: Instant) {
        self.metrics.adds += 1;
        entry.queued_at.get_or_insert(now);
        entry.while_processing = self.locked.contains_key(item);
        self.metrics.depth = self.ready.len();
        self.metrics.max_depth = self.metrics.max_depth.max(self.ready.len());
    }

    /// `AddWithOpts` of one key (`lockedAddWithOpts`, see the module doc). Returns what
    /// happened and the delay the add asked for (`after`, or the limiter's, whichever is
    /// smaller; zero for an add that is ready now).
    pub fn add_with_opts(&mut self, item: T, opts: AddOpts, now: Instant) -> (Added, Duration) {
        if self.shutting_down {
            return (Added::ShuttingDown, Duration::ZERO);
        }
        let mut after = opts.after;
        if opts.rate_limited {
            let limited = self.limiter.when(&item, now);
            if after.is_zero() || limited < after {
                after = limited;
            }
        }
        let ready_at = if after.is_zero() {
            None
        } else {
            self.metrics.retries += 1;
            match now.checked_add(after) {
                Some(at) => Some(at),
                // Past what an `Instant` can hold: never ready (Go's `InfDuration`), so the add
                // changes nothing a worker could see.
                None => return (Added::Waiting, after),
            }
        };
        let processing = self.locked.contains_key(&item);
        let Some(mut entry) = self.items.get(&item).copied() else {
            let mut entry = Item {
                priority: opts.priority,
                counter: self.next_counter(),
                ready_at,
                adds: 1,
                queued_at: None,
                while_processing: false,
            };
            let added = match ready_at {
                Some(at) => {
                    self.waiting.insert(entry.waiting_key(at), item.clone());
                    Added::Waiting
                }
                None => {
                    self.ready.insert(entry.ready_key(), item.clone());
                    self.became_ready(&item, &mut entry, now);
                    if processing {
                        Added::WhileProcessing
                    } else {
                        Added::Queued
                    }
                }
            };
            self.items.insert(item, entry);
            return (added, after);
        };

        // The entry leaves its tree and comes back under its new order.
        match entry.ready_at {
            None => self.ready.remove(&entry.ready_key()),
            Some(at) => self.waiting.remove(&entry.waiting_key(at)),
        };
        let was_waiting = entry.ready_at.is_some();
        entry.adds += 1;
        entry.ready_at = match (entry.ready_at, ready_at) {
            (None, _) | (_, None) => None,
            (Some(old), Some(new)) => Some(old.min(new)),
        };
        if opts.priority > entry.priority {
            entry.priority = opts.priority;
            entry.counter = self.next_counter();
        }
        let added = match entry.ready_at {
            Some(at) => {
                self.waiting.insert(entry.waiting_key(at), item.clone());
                Added::Waiting
            }
            None => {
                self.ready.insert(entry.ready_key(), item.clone());
                if was_waiting {
                    self.became_ready(&item, &mut entry, now);
                    if processing {
                        Added::WhileProcessing
                    } else {
                        Added::Queued
                    }
                } else {
                    self.metrics.folded += 1;
                    if processing {
                        Added::FoldedWhileProcessing
                    } else {
                        Added::Folded
                    }
                }
            }
        };
        if added == Added::Waiting {
            self.metrics.folded += 1;
        }
        self.items.insert(item, entry);
        (added, after)
    }

    /// `Add` with a priority (what `workqueueWithDefaultPriority.Add` does): ready now.
    pub fn add(&mut self, item: T, priority: i32, now: Instant) -> Added {
        let opts = AddOpts {
            priority,
            ..AddOpts::default()
        };
        self.add_with_opts(item, opts, now).0
    }

    /// `AddAfter` with a priority: ready after `after` (now for zero).
    pub fn add_after(&mut self, item: T, after: Duration, priority: i32, now: Instant) -> Added {
        let opts = AddOpts {
            after,
            priority,
            ..AddOpts::default()
        };
        self.add_with_opts(item, opts, now).0
    }

    /// `AddRateLimited` with a priority; returns the limiter's delay. Unlike client-go's queue,
    /// a shut-down queue does not consult the limiter (`lockedAddWithOpts` returns first).
    pub fn add_rate_limited(&mut self, item: T, priority: i32, now: Instant) -> Duration {
        let opts = AddOpts {
            rate_limited: true,
            priority,
            ..AddOpts::default()
        };
        self.add_with_opts(item, opts, now).1
    }

    /// What `handleWaitingItems` does when its timer fires at `now`: every waiting entry ready by
    /// then becomes ready, in ready-time order, each with a new add counter so that ready entries
    /// are ordered by when they became ready. Returns how many did.
    pub fn advance(&mut self, now: Instant) -> usize {
        let mut moved = 0;
        while let Some(entry) = self.waiting.first_entry() {
            let ready_at = entry.key().0;
            if ready_at > now {
                break;
            }
            let item = entry.remove();
            let Some(mut entry) = self.items.get(&item).copied() else {
                continue;
            };
            entry.ready_at = None;
            entry.counter = self.next_counter();
            self.ready.insert(entry.ready_key(), item.clone());
            // Ready at its ready time: that is when controller-runtime's timer would have fired.
            self.became_ready(&item, &mut entry, ready_at);
            self.items.insert(item, entry);
            moved += 1;
        }
        moved
    }

    /// When the next waiting entry becomes ready.
    pub fn next_ready_at(&self) -> Option<Instant> {
        self.waiting.first_key_value().map(|((at, ..), _)| *at)
    }

    /// The entry `get` would hand out: the first ready one whose key is not being processed.
    fn first_free(&self) -> Option<(&ReadyKey, &T)> {
        self.ready
            .iter()
            .find(|(_, item)| !self.locked.contains_key(*item))
    }

    /// `GetWithPriority` without the wait: the ready key of the highest priority (the earliest
    /// added among equals) whose key is not being processed, now processing; `None` if there is
    /// none, or once the queue is shutting down.
    pub fn get(&mut self, now: Instant) -> Option<Got<T>> {
        if self.shutting_down {
            return None;
        }
        let (&key, _) = self.first_free()?;
        let item = self.ready.remove(&key)?;
        let entry = self.items.remove(&item)?;
        self.metrics.gets += 1;
        self.metrics.depth = self.ready.len();
        let queued_at = entry.queued_at.unwrap_or(now);
        let waited = now.saturating_duration_since(queued_at);
        self.metrics.max_queue_duration = self.metrics.max_queue_duration.max(waited);
        self.locked.insert(item.clone(), now);
        Some(Got {
            item,
            queued_at,
            adds: entry.adds,
            requeued: entry.while_processing,
            priority: Some(entry.priority),
        })
    }

    /// `Done`: the key is no longer processing; an entry that became ready meanwhile can be
    /// handed out now, at its place in the order.
    pub fn done(&mut self, item: &T, now: Instant) -> Finished {
        self.metrics.dones += 1;
        let work = self
            .locked
            .remove(item)
            .map(|started| now.saturating_duration_since(started));
        if let Some(work) = work {
            self.metrics.max_work_duration = self.metrics.max_work_duration.max(work);
        }
        let requeued = work.is_some()
            && self
                .items
                .get(item)
                .is_some_and(|entry| entry.ready_at.is_none());
        if requeued {
            self.metrics.requeued += 1;
        }
        Finished { work, requeued }
    }

    /// `Forget`: the limiter forgets the key's failures.
    pub fn forget(&mut self, item: &T) {
        self.limiter.forget(item);
    }

    /// `NumRequeues`.
    pub fn num_requeues(&self, item: &T) -> u32 {
        self.limiter.num_requeues(item)
    }

    /// `Len`: ready entries, those of keys being processed included.
    pub fn len(&self) -> usize {
        self.ready.len()
    }

    /// Whether no entry is ready.
    pub fn is_empty(&self) -> bool {
        self.ready.is_empty()
    }

    /// Whether [`get`](PriorityQueue::get) would hand out a key now.
    pub fn has_ready(&self) -> bool {
        !self.shutting_down && self.first_free().is_some()
    }

    /// A key's priority and when it becomes ready (`None`: ready now), if it has an entry.
    pub fn entry(&self, item: &T) -> Option<(i32, Option<Instant>)> {
        self.items
            .get(item)
            .map(|entry| (entry.priority, entry.ready_at))
    }

    /// The ready keys in the order `get` considers them, with their priorities.
    pub fn ready(&self) -> impl Iterator<Item = (&T, i32)> {
        self.ready
            .iter()
            .map(|((Reverse(priority), _), item)| (item, *priority))
    }

    /// `ShutDown`: adds are ignored, and `get` hands out nothing from now on.
    pub fn shut_down(&mut self) {
        self.shutting_down = true;
    }

    /// `ShuttingDown`.
    pub fn shutting_down(&self) -> bool {
        self.shutting_down
    }

    /// The metrics at `now` (the unfinished-work gauges from the keys being processed, as
    /// `updateUnfinishedWork` computes them every 500 ms).
    pub fn metrics(&self, now: Instant) -> QueueMetrics {
        let mut metrics = QueueMetrics {
            depth: self.ready.len(),
            waiting_after: self.waiting.len(),
            ..self.metrics
        };
        for started in self.locked.values() {
            let age = now.saturating_duration_since(*started);
            metrics.unfinished_work += age;
            metrics.longest_running_processor = metrics.longest_running_processor.max(age);
        }
        metrics
    }
}

#[cfg(test)]
#[path = "priority_queue_tests.rs"]
mod tests;
