//! client-go's delaying queue (`util/workqueue/delaying_queue.go`, v0.36.3): a [`Queue`] plus
//! keys waiting for their ready time in a heap.
//!
//! The heap is `waitForPriorityQueue` driven by Go's `container/heap`, ordered by ready time
//! only. That order is not stable: keys due at the same instant come out in an order that
//! depends on the heap's history (three keys failing together as a, b, c come back a, c, b).
//! To come out in client-go's order, [`WaitingQueue`] keeps `container/heap`'s exact `up`,
//! `down`, `Push`, `Pop` and `Fix`, not another priority queue.

use std::hash::Hash;
use std::time::{Duration, Instant};

use hashbrown::HashMap;

use super::metrics::QueueMetrics;
use super::queue::{Added, Finished, Got, Queue};

/// A heap entry: client-go's `waitFor` (its `index` is the position map of [`WaitingQueue`]).
#[derive(Debug, Clone)]
struct WaitFor<T> {
    data: T,
    ready_at: Instant,
}

/// client-go's `waitingForQueue` (a `waitForPriorityQueue` under `container/heap`) with
/// `waitingEntryByData`: each key at most once, the earliest ready time at the root.
#[derive(Debug)]
pub struct WaitingQueue<T> {
    /// A binary min-heap by `ready_at`, as `container/heap` lays it out.
    heap: Vec<WaitFor<T>>,
    /// Each waiting key's position in `heap` (the `waitFor.index` that `Swap` keeps current);
    /// holds exactly the keys in `heap`.
    index: HashMap<T, usize>,
}

impl<T> Default for WaitingQueue<T> {
    fn default() -> Self {
        WaitingQueue {
            heap: Vec::new(),
            index: HashMap::new(),
        }
    }
}

impl<T: Eq + Hash + Clone> WaitingQueue<T> {
    /// An empty heap.
    pub fn new() -> Self {
        Self::default()
    }

    /// client-go's `insert`: a new key is pushed; a key already waiting keeps its entry, moved
    /// earlier (`heap.Fix`) if `ready_at` is before its ready time, unchanged otherwise.
    pub fn insert(&mut self, data: T, ready_at: Instant) {
        if let Some(&i) = self.index.get(&data) {
            if self.heap[i].ready_at > ready_at {
                self.heap[i].ready_at = ready_at;
                self.fix(i);
            }
            return;
        }
        // `heap.Push`: append, then `up` from the new last position.
        let n = self.heap.len();
        self.index.insert(data.clone(), n);
        self.heap.push(WaitFor { data, ready_at });
        self.up(n);
    }

    /// The earliest ready time (`Peek`), `None` if nothing waits.
    pub fn next_ready_at(&self) -> Option<Instant> {
        self.heap.first().map(|entry| entry.ready_at)
    }

    /// `heap.Pop` of the root if it is ready at `now` (not after it), as `waitingLoop` does one
    /// entry at a time.
    pub fn pop_ready(&mut self, now: Instant) -> Option<(T, Instant)> {
        if self.heap.first()?.ready_at > now {
            return None;
        }
        let n = self.heap.len() - 1;
        self.swap(0, n);
        self.down(0, n);
        let entry = self.heap.pop()?;
        self.index.remove(&entry.data);
        Some((entry.data, entry.ready_at))
    }

    /// Keys waiting.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no key waits.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// When `item` is due, if it waits.
    pub fn ready_at(&self, item: &T) -> Option<Instant> {
        self.index.get(item).map(|&i| self.heap[i].ready_at)
    }

    /// `waitForPriorityQueue.Less`: `readyAt.Before`.
    fn less(&self, i: usize, j: usize) -> bool {
        self.heap[i].ready_at < self.heap[j].ready_at
    }

    /// `waitForPriorityQueue.Swap`, which keeps each entry's index current.
    fn swap(&mut self, i: usize, j: usize) {
        self.heap.swap(i, j);
        if let Some(slot) = self.index.get_mut(&self.heap[i].data) {
            *slot = i;
        }
        if let Some(slot) = self.index.get_mut(&self.heap[j].data) {
            *slot = j;
        }
    }

    /// `container/heap.up`.
    fn up(&mut self, mut j: usize) {
        while j > 0 {
            let i = (j - 1) / 2;
            if !self.less(j, i) {
                break;
            }
            self.swap(i, j);
            j = i;
        }
    }

    /// `container/heap.down` over the first `n` entries; whether the entry moved.
    fn down(&mut self, i0: usize, n: usize) -> bool {
        let mut i = i0;
        loop {
            let j1 = 2 * i + 1;
            if j1 >= n {
                break;
            }
            let mut j = j1;
            let j2 = j1 + 1;
            if j2 < n && self.less(j2, j1) {
                j = j2;
            }
            if !self.less(j, i) {
                break;
            }
            self.swap(i, j);
            i = j;
        }
        i > i0
    }

    /// `container/heap.Fix`.
    fn fix(&mut self, i: usize) {
        if !self.down(i, self.heap.len()) {
            self.up(i);
        }
    }
}

/// client-go's `delayingType`: a [`Queue`] and its [`WaitingQueue`].
#[derive(Debug)]
pub struct DelayingQueue<T> {
    queue: Queue<T>,
    waiting: WaitingQueue<T>,
    /// `workqueue_retries_total`.
    retries: u64,
}

impl<T> Default for DelayingQueue<T> {
    fn default() -> Self {
        DelayingQueue {
            queue: Queue::default(),
            waiting: WaitingQueue::default(),
            retries: 0,
        }
    }
}

impl<T: Eq + Hash + Clone> DelayingQueue<T> {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// client-go's `delayingType.AddAfter`: ignored when shutting down; counted as a retry;
    /// added at once for a delay of zero; otherwise waits until `now + delay` (see
    /// [`WaitingQueue::insert`] for a key already waiting). A pending entry is not cancelled by a
    /// direct [`add`](DelayingQueue::add): it still fires later.
    pub fn add_after(&mut self, item: T, delay: Duration, now: Instant) {
        if self.queue.shutting_down() {
            return;
        }
        self.retries += 1;
        if delay.is_zero() {
            self.queue.add(item, now);
            return;
        }
        // A delay past what an `Instant` can hold never fires, like Go's `InfDuration`.
        if let Some(ready_at) = now.checked_add(delay) {
            self.waiting.insert(item, ready_at);
        }
    }

    /// What `waitingLoop` does when its timer fires at `now`: every entry ready by then goes to
    /// the queue, in heap order. Returns how many did.
    pub fn advance(&mut self, now: Instant) -> usize {
        let mut moved = 0;
        while let Some((item, ready_at)) = self.waiting.pop_ready(now) {
            // Added at its ready time: that is when client-go's timer would have fired.
            self.queue.add(item, ready_at);
            moved += 1;
        }
        moved
    }

    /// When the next waiting entry is due.
    pub fn next_ready_at(&self) -> Option<Instant> {
        self.waiting.next_ready_at()
    }

    /// [`Queue::add`].
    pub fn add(&mut self, item: T, now: Instant) -> Added {
        self.queue.add(item, now)
    }

    /// [`Queue::get`].
    pub fn get(&mut self, now: Instant) -> Option<Got<T>> {
        self.queue.get(now)
    }

    /// [`Queue::done`].
    pub fn done(&mut self, item: &T, now: Instant) -> Finished {
        self.queue.done(item, now)
    }

    /// [`Queue::len`].
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// [`Queue::is_empty`].
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// The queue of keys ready for a worker.
    pub fn queue(&self) -> &Queue<T> {
        &self.queue
    }

    /// The keys waiting for their ready time.
    pub fn waiting(&self) -> &WaitingQueue<T> {
        &self.waiting
    }

    /// client-go's `delayingType.ShutDown`: the queue shuts down and the waiting entries are
    /// never added.
    pub fn shut_down(&mut self) {
        self.queue.shut_down();
    }

    /// [`Queue::shutting_down`].
    pub fn shutting_down(&self) -> bool {
        self.queue.shutting_down()
    }

    /// The metrics at `now`, retries and waiting entries included.
    pub fn metrics(&self, now: Instant) -> QueueMetrics {
        QueueMetrics {
            retries: self.retries,
            waiting_after: self.waiting.len(),
            ..self.queue.metrics(now)
        }
    }
}

#[cfg(test)]
#[path = "delaying_queue_tests.rs"]
mod tests;
