//! client-go's `workqueue.Typed` (`util/workqueue/queue.go`, v0.36.3): a FIFO of keys that
//! never holds a key twice and never hands a key to two workers at once.

use std::collections::VecDeque;
use std::hash::Hash;
use std::time::{Duration, Instant};

use hashbrown::HashMap;

use super::metrics::QueueMetrics;

/// What [`Queue::add`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    /// The key was queued for a worker.
    Queued,
    /// The key was already waiting: the add folds into the reconcile it is waiting for.
    Folded,
    /// The key is being processed: it is marked dirty and queued again when it is `done`.
    WhileProcessing,
    /// The key was marked dirty while being processed already; nothing more happened.
    FoldedWhileProcessing,
    /// The queue is shutting down: ignored.
    ShuttingDown,
    /// The key waits for its ready time: a delayed add of a
    /// [`PriorityQueue`](super::PriorityQueue), which keeps delayed and ready adds of a key in one
    /// entry.
    Waiting,
}

/// A key handed out by [`Queue::get`], with what the queue knows about its wait.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Got<T> {
    /// The key; the caller owns it until it calls [`done`](Queue::done).
    pub item: T,
    /// When the first add of this wait happened (client-go's `addTimes`, which
    /// `workqueue_queue_duration_seconds` measures from).
    pub queued_at: Instant,
    /// How many adds this processing absorbs: the one that queued it and every one folded into
    /// it until now.
    pub adds: u64,
    /// Whether the key was queued again by `done` because it was added while being processed.
    pub requeued: bool,
    /// The priority it was handed out with (controller-runtime's `GetWithPriority`), which a
    /// retry keeps; `None` from a queue without priorities (client-go's).
    pub priority: Option<i32>,
}

/// What [`Queue::done`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finished {
    /// How long the key was processed (`workqueue_work_duration_seconds`); `None` if the key was
    /// not being processed.
    pub work: Option<Duration>,
    /// The key was added while it was processed, and is queued again now.
    pub requeued: bool,
}

/// A dirty key's wait.
#[derive(Debug, Clone, Copy)]
struct Dirty {
    first_added: Instant,
    adds: u64,
    /// Made dirty while the key was being processed.
    while_processing: bool,
}

/// client-go's `Typed[T]` queue, without its lock (see the [module](super) doc).
#[derive(Debug)]
pub struct Queue<T> {
    /// Keys waiting for a worker, oldest first. No duplicates; every key here is in `dirty` and
    /// none is in `processing` (client-go's `queue`).
    queue: VecDeque<T>,
    /// Keys that need processing: added since their last `get` (client-go's `dirty` set, with the
    /// wait's first add time and its count of adds). A key is in `queue` if and only if it is in
    /// `dirty` and not in `processing`.
    dirty: HashMap<T, Dirty>,
    /// Keys handed out by `get` and not yet `done`, with when `get` handed them out (client-go's
    /// `processing` set and the metrics' `processingStartTimes`).
    processing: HashMap<T, Instant>,
    /// Set once by `shut_down`: later adds are ignored, `get` still empties the queue.
    shutting_down: bool,
    metrics: QueueMetrics,
}

impl<T> Default for Queue<T> {
    fn default() -> Self {
        Queue {
            queue: VecDeque::new(),
            dirty: HashMap::new(),
            processing: HashMap::new(),
            shutting_down: false,
            metrics: QueueMetrics::default(),
        }
    }
}

impl<T: Eq + Hash + Clone> Queue<T> {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// client-go's `Typed.Add`: a key already dirty is not added again (the add folds into the
    /// wait already queued); a key being processed is only marked dirty, and
    /// [`done`](Queue::done) queues it again; any other key goes to the back of the queue.
    pub fn add(&mut self, item: T, now: Instant) -> Added {
        if self.shutting_down {
            return Added::ShuttingDown;
        }
        let processing = self.processing.contains_key(&item);
        if let Some(dirty) = self.dirty.get_mut(&item) {
            dirty.adds += 1;
            self.metrics.folded += 1;
            return if processing {
                Added::FoldedWhileProcessing
            } else {
                Added::Folded
            };
        }
        self.metrics.adds += 1;
        if processing {
            self.dirty.insert(
                item,
                Dirty {
                    first_added: now,
                    adds: 1,
                    while_processing: true,
                },
            );
            return Added::WhileProcessing;
        }
        self.dirty.insert(
            item.clone(),
            Dirty {
                first_added: now,
                adds: 1,
                while_processing: false,
            },
        );
        self.queue.push_back(item);
        self.metrics.depth = self.queue.len();
        self.metrics.max_depth = self.metrics.max_depth.max(self.queue.len());
        Added::Queued
    }

    /// client-go's `Typed.Get`, without the wait: the oldest waiting key, now processing and no
    /// longer dirty; `None` if no key waits (a worker would block, or end if
    /// [`shutting_down`](Queue::shutting_down)).
    pub fn get(&mut self, now: Instant) -> Option<Got<T>> {
        let item = self.queue.pop_front()?;
        self.metrics.depth = self.queue.len();
        self.metrics.gets += 1;
        // An invariant of `queue`; the fallback only keeps a broken invariant from panicking.
        let dirty = self.dirty.remove(&item).unwrap_or(Dirty {
            first_added: now,
            adds: 1,
            while_processing: false,
        });
        let waited = now.saturating_duration_since(dirty.first_added);
        self.metrics.max_queue_duration = self.metrics.max_queue_duration.max(waited);
        self.processing.insert(item.clone(), now);
        Some(Got {
            item,
            queued_at: dirty.first_added,
            adds: dirty.adds,
            requeued: dirty.while_processing,
            priority: None,
        })
    }

    /// client-go's `Typed.Done`: the key is no longer processing; if it was added meanwhile it
    /// goes to the back of the queue now.
    pub fn done(&mut self, item: &T, now: Instant) -> Finished {
        self.metrics.dones += 1;
        let work = self
            .processing
            .remove(item)
            .map(|started| now.saturating_duration_since(started));
        if let Some(work) = work {
            self.metrics.max_work_duration = self.metrics.max_work_duration.max(work);
        }
        let requeued = self.dirty.contains_key(item);
        if requeued {
            self.queue.push_back(item.clone());
            self.metrics.requeued += 1;
            self.metrics.depth = self.queue.len();
            self.metrics.max_depth = self.metrics.max_depth.max(self.queue.len());
        }
        Finished { work, requeued }
    }

    /// client-go's `Typed.Len`: keys waiting for a worker (not those being processed).
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether no key waits for a worker.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Keys being processed now.
    pub fn processing(&self) -> usize {
        self.processing.len()
    }

    /// Whether `item` is being processed now.
    pub fn is_processing(&self, item: &T) -> bool {
        self.processing.contains_key(item)
    }

    /// client-go's `Typed.ShutDown`: adds are ignored from now on; the keys already waiting can
    /// still be taken.
    pub fn shut_down(&mut self) {
        self.shutting_down = true;
    }

    /// client-go's `Typed.ShuttingDown`.
    pub fn shutting_down(&self) -> bool {
        self.shutting_down
    }

    /// The metrics at `now` (the unfinished-work gauges are computed from it, as client-go's
    /// `updateUnfinishedWork` does every 500 ms).
    pub fn metrics(&self, now: Instant) -> QueueMetrics {
        let mut metrics = self.metrics;
        for started in self.processing.values() {
            let age = now.saturating_duration_since(*started);
            metrics.unfinished_work += age;
            metrics.longest_running_processor = metrics.longest_running_processor.max(age);
        }
        metrics
    }

    /// The keys waiting for a worker, oldest first.
    pub fn waiting(&self) -> impl Iterator<Item = &T> {
        self.queue.iter()
    }
}

#[cfg(test)]
#[path = "queue_tests.rs"]
mod tests;
