//! The consumer side of an informer: pop a batch from the [`InformerQueue`] (a [`DeltaFifo`] by default),
//! apply it to the [`Indexer`] as client-go's `processDeltas` does, and hand it to handlers.
//!
//! The consumer is the cache's only writer, by type: a [`ProcessLoop`] owns the [`Indexer`] (or
//! the [`SharedInformer`] it applies through does), its pops take `&mut self`, and what it hands
//! out is an [`IndexerReader`]. The indexer is updated inside the pop (under the queue lock, as
//! client-go), so `has_synced` implies the indexer holds the whole initial list. Handlers run
//! after the pop returns, outside every lock: a slow handler lets deltas pile up in the queue
//! (coalescing, in a DeltaFIFO) instead of blocking the producer, much as a shared informer's
//! per-listener buffers decouple handlers from the queue.

use std::fmt;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use crate::cache::key::CacheObject;
use tokio::sync::Notify;

use super::handler::{Notification, ResourceEventHandler, process_deltas};
use super::processor::Distribution;
use super::shared_informer::{ResourceVersioned, SharedInformer};
use crate::cache::clock::Clock;
use crate::cache::delta::Deltas;
use crate::cache::queue::DeltaFifo;
use crate::cache::queue::InformerQueue;
use crate::cache::store::{Indexer, IndexerReader};

/// One popped batch after it was applied to the indexer.
#[derive(Debug)]
pub struct Batch<K> {
    /// Pop sequence number, from 1.
    pub seq: u64,
    /// The key every delta belongs to: the key a DeltaFIFO batch was queued under, or the key of a
    /// single RealFIFO delta. `None` when the batch spans several keys (a RealFIFO batch pop) or is
    /// a whole-list delta; [`Delta::key`](crate::cache::Delta::key) then tells each delta's.
    pub key: Option<Arc<str>>,
    /// The deltas, oldest first: one key's for a DeltaFIFO, one or more consecutive ones for a
    /// RealFIFO.
    pub deltas: Deltas<K>,
    /// What applying each delta did to the indexer (old states for updates, in particular; one
    /// notification per object a whole-list delta touched).
    pub notifications: Vec<Notification<K>>,
    /// With a shared informer ([`ProcessLoop::with_shared_informer`]): what was handed to its
    /// handlers, one distribution per notification, in the same order; empty otherwise.
    pub distributions: Vec<Distribution<K>>,
    /// Whether the batch belonged to the initial list.
    pub is_in_initial_list: bool,
    /// When the oldest delta (for a DeltaFIFO: the key) entered the queue.
    pub enqueued_at: Instant,
    /// When it was popped.
    pub popped_at: Instant,
    /// When it was popped, by the controller's clock ([`ProcessLoop::clock`]; the system's
    /// without one): taken as the pop begins, before its deltas are applied and handed to any
    /// handler, so no handler call made of them is stamped before it, and a plain informer's
    /// handler, which runs inside the pop, does not delay it.
    pub time: SystemTime,
    /// Entries still queued after this pop: keys for a DeltaFIFO, deltas for a RealFIFO.
    pub queue_len: usize,
}

impl<K> Batch<K> {
    /// How long the oldest delta waited in the queue.
    pub fn waited(&self) -> Duration {
        self.popped_at.saturating_duration_since(self.enqueued_at)
    }

    /// Replays this batch's handler calls on `handler`.
    pub fn dispatch(&self, handler: &mut impl ResourceEventHandler<K>) {
        for notification in &self.notifications {
            notification.dispatch(handler);
        }
    }
}

/// Receives each batch after it was applied; returning `Break` stops [`ProcessLoop::run`].
pub trait BatchHandler<K> {
    /// Handles one batch.
    fn on_batch(&mut self, batch: &Batch<K>) -> ControlFlow<()>;
}

impl<K, F: FnMut(&Batch<K>) -> ControlFlow<()>> BatchHandler<K> for F {
    fn on_batch(&mut self, batch: &Batch<K>) -> ControlFlow<()> {
        self(batch)
    }
}

/// The informer's consumer: owns the pop loop over a queue that feeds an indexer, and the
/// indexer's writer (itself, or through the shared informer it applies batches with).
///
/// `Q` is the queue: a [`DeltaFifo`] unless said otherwise, any [`InformerQueue`] implementation, or
/// `dyn InformerQueue<K>` when the queue is chosen at run time.
pub struct ProcessLoop<K, Q: ?Sized = DeltaFifo<K>> {
    queue: Arc<Q>,
    /// Where each pop is applied.
    apply: Apply<K>,
    /// What [`indexer`](ProcessLoop::indexer) hands out.
    reader: IndexerReader<K>,
    /// Most deltas one pop takes (client-go's `PopBatch`); 1 pops one at a time.
    batch_pop: usize,
    /// Numbers the pops and counts the batches in hand; its own unless shared.
    group: Arc<ConsumerGroup>,
    /// Runs inside each pop, under the queue's lock, once the batch was applied.
    in_pop: Option<InPop<K>>,
    /// Stamps each pop ([`Batch::time`]); the system's clock if `None`.
    clock: Option<Arc<dyn Clock>>,
    /// Whether the indexer was given room for the initial list, which happens once, after its
    /// first pop (see [`Indexer::reserve`]).
    reserved_initial_list: bool,
}

/// How a [`ProcessLoop`] applies a pop, and who holds the cache's writer.
enum Apply<K> {
    /// `process_deltas` into the writer the controller owns.
    Own(Indexer<K>),
    /// A shared informer's `HandleDeltas`, into the writer the informer owns.
    Shared(Arc<SharedInformer<K>>),
}

/// What a [`ProcessLoop`] runs inside each pop: the handler of a plain informer
/// (client-go's `NewInformer`), whose `Pop` calls it under the queue's lock.
pub type InPop<K> = Arc<dyn Fn(&[Notification<K>]) + Send + Sync>;

impl<K, Q: ?Sized + fmt::Debug> fmt::Debug for ProcessLoop<K, Q> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProcessLoop")
            .field("queue", &self.queue)
            .field("batch_pop", &self.batch_pop)
            .field("shared", &matches!(self.apply, Apply::Shared(_)))
            .finish_non_exhaustive()
    }
}

/// The consumers of several informers seen as one: a single pop sequence across their queues,
/// so that batches of different resources can be put in the order they were popped, and how many
/// popped batches are still being handled, so that "every queue is empty and nothing is in hand"
/// can be observed without a race.
///
/// A [`ProcessLoop`] takes its numbers and marks its batch in hand under the queue's lock, inside
/// the pop: whoever sees a queue empty also sees the batch just popped from it as in hand.
#[derive(Debug, Default)]
pub struct ConsumerGroup {
    popped: AtomicU64,
    in_hand: AtomicUsize,
    /// Woken when a batch is handled.
    handled: Notify,
}

impl ConsumerGroup {
    /// A batch was popped: its sequence number (from 1), and it is in hand until
    /// [`handled`](ConsumerGroup::handled).
    fn popped(&self) -> u64 {
        self.in_hand.fetch_add(1, Ordering::SeqCst);
        self.popped.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// A batch popped by one of the group's controllers was handled.
    pub fn handled(&self) {
        self.in_hand.fetch_sub(1, Ordering::SeqCst);
        self.handled.notify_waiters();
    }

    /// Batches popped and not yet handled.
    pub fn in_hand(&self) -> usize {
        self.in_hand.load(Ordering::SeqCst)
    }

    /// Batches popped so far.
    pub fn popped_so_far(&self) -> u64 {
        self.popped.load(Ordering::SeqCst)
    }

    /// Completes once `done()` holds, checked now and after each handled batch. `done` must
    /// only change when a batch is handled (or the caller must wait for something else too).
    pub async fn wait_until(&self, done: impl Fn() -> bool) {
        loop {
            let handled = self.handled.notified();
            tokio::pin!(handled);
            handled.as_mut().enable();
            if done() {
                return;
            }
            handled.await;
        }
    }
}

impl<K, Q> ProcessLoop<K, Q>
where
    K: CacheObject + ResourceVersioned + Send + Sync + 'static,
    Q: InformerQueue<K> + ?Sized,
{
    /// A consumer popping from `queue` into `indexer`, which it owns from now on: the cache's
    /// only writer (register its indices first). One batch per pop. The queue should have been
    /// built with a reader of the indexer as its known objects (except the atomic one, which
    /// takes none), or deletions of unseen objects and relist tombstones are lost.
    pub fn new(queue: Arc<Q>, indexer: Indexer<K>) -> Self {
        let reader = indexer.reader();
        Self::applying(queue, Apply::Own(indexer), reader)
    }

    /// A consumer that processes each pop as `informer`'s `HandleDeltas`
    /// ([`SharedInformer::handle_deltas`], into the indexer the informer owns): applied, then
    /// distributed to its handlers' listeners; each batch then also says what each handler was
    /// given ([`Batch::distributions`]).
    pub fn with_shared_informer(queue: Arc<Q>, informer: Arc<SharedInformer<K>>) -> Self {
        let reader = informer.indexer().clone();
        Self::applying(queue, Apply::Shared(informer), reader)
    }

    fn applying(queue: Arc<Q>, apply: Apply<K>, reader: IndexerReader<K>) -> Self {
        ProcessLoop {
            queue,
            apply,
            reader,
            batch_pop: 1,
            group: Arc::default(),
            in_pop: None,
            clock: None,
            reserved_initial_list: false,
        }
    }

    /// Stamps each pop with `clock` ([`Batch::time`]): a replay's, so that batches carry the
    /// recorded time.
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = Some(clock);
        self
    }

    /// Runs `in_pop` inside each pop, under the queue's lock, after the batch was applied: a
    /// plain informer's handler, which the producer's queue calls wait for.
    pub fn in_pop(mut self, in_pop: InPop<K>) -> Self {
        self.in_pop = Some(in_pop);
        self
    }

    /// Numbers pops in `group`'s sequence, shared with other controllers, and counts this one's
    /// batches in hand there: each batch [`process_next`](ProcessLoop::process_next) returns is in
    /// hand until the caller reports it with [`ConsumerGroup::handled`] ([`run`](ProcessLoop::run)
    /// does).
    pub fn group(mut self, group: Arc<ConsumerGroup>) -> Self {
        self.group = group;
        self
    }

    /// Lets one pop take up to `max` consecutive deltas, as client-go's `PopBatch` (a RealFIFO
    /// only; a DeltaFIFO pop is always one key). Values below 1 mean 1.
    pub fn batch_pop(mut self, max: usize) -> Self {
        self.batch_pop = max.max(1);
        self
    }

    /// The queue.
    pub fn queue(&self) -> &Arc<Q> {
        &self.queue
    }

    /// The cache, for reading: the controller is its only writer.
    pub fn indexer(&self) -> &IndexerReader<K> {
        &self.reader
    }

    /// The group this controller numbers its pops in.
    pub fn consumer_group(&self) -> &Arc<ConsumerGroup> {
        &self.group
    }

    /// Blocks for the next batch, applies it, and returns it; `None` once the queue is closed and
    /// drained.
    pub fn process_next(&mut self) -> Option<Batch<K>> {
        self.next(true)
    }

    /// Like [`process_next`](ProcessLoop::process_next) but returns `None` at once when nothing is
    /// queued (closed or not).
    pub fn try_process_next(&mut self) -> Option<Batch<K>> {
        self.next(false)
    }

    /// Pops and handles batches until the queue is closed and drained or `handler` breaks.
    pub fn run(&mut self, handler: &mut impl BatchHandler<K>) {
        while let Some(batch) = self.process_next() {
            let flow = handler.on_batch(&batch);
            self.group.handled();
            if flow.is_break() {
                return;
            }
        }
    }

    /// One pop (waiting for one if `block`), applied to the indexer under the queue's lock.
    fn next(&mut self, block: bool) -> Option<Batch<K>> {
        let mut notifications = Vec::new();
        let mut distributions = Vec::new();
        let mut seq = 0;
        let mut time = SystemTime::UNIX_EPOCH;
        let clock = self.clock.as_deref();
        let mut process = |deltas: &Deltas<K>, initial: bool| {
            time = clock.map_or_else(SystemTime::now, |clock| clock.wall());
            seq = self.group.popped();
            match &mut self.apply {
                Apply::Shared(shared) => {
                    distributions = shared.handle_batch(seq, deltas, initial);
                    notifications = distributions
                        .iter()
                        .map(|d| (*d.notification).clone())
                        .collect();
                }
                Apply::Own(indexer) => {
                    notifications.reserve(deltas.len());
                    process_deltas(&mut notifications, indexer, deltas, initial);
                }
            }
            if let Some(in_pop) = &self.in_pop {
                in_pop(&notifications);
            }
        };
        let popped = if block {
            self.queue.pop_batch(self.batch_pop, &mut process)
        } else {
            self.queue.try_pop_batch(self.batch_pop, &mut process)
        }?;
        // The first pop of the initial list is the first moment the size of the list is known
        // here: what is still queued is the rest of it (and any watch events queued since).
        // Growing the indexer step by step instead would hold its old and new tables at once
        // beside the still-full queue, the peak of a large list's memory.
        if popped.is_in_initial_list && !self.reserved_initial_list {
            self.reserved_initial_list = true;
            match &mut self.apply {
                Apply::Own(indexer) => indexer.reserve(popped.queue_len),
                Apply::Shared(shared) => shared.reserve(popped.queue_len),
            }
        }
        Some(Batch {
            seq,
            key: popped.key,
            deltas: popped.deltas,
            notifications,
            distributions,
            is_in_initial_list: popped.is_in_initial_list,
            enqueued_at: popped.enqueued_at,
            popped_at: popped.popped_at,
            time,
            queue_len: popped.queue_len,
        })
    }
}

#[cfg(test)]
#[path = "process_loop_tests.rs"]
mod tests;
