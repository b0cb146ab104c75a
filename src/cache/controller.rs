//! The consumer side of an informer: pop a batch from the [`Queue`] (a [`DeltaFifo`] by default),
//! apply it to the [`Indexer`] as client-go's `processDeltas` does, and hand it to handlers.
//!
//! The consumer is the cache's only writer, by type: a [`Controller`] owns the [`Indexer`] (or
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
use std::time::{Duration, Instant};

use crate::cache::CacheObject;
use hashbrown::HashSet;
use tokio::sync::Notify;

use super::delta::{DeletedFinalStateUnknown, Delta, DeltaObject, DeltaType, Deltas, ListInfo};
use super::delta_fifo::DeltaFifo;
use super::indexer::{Indexer, IndexerReader};
use super::processor::Distribution;
use super::queue::Queue;
use super::shared_informer::{ResourceVersioned, SharedInformer};
use super::store::object_key;

/// Receives the effect of each delta on the cache (client-go's `ResourceEventHandler`).
pub trait ResourceEventHandler<K> {
    /// An object entered the cache. `is_in_initial_list` is true for objects of the initial list.
    fn on_add(&mut self, obj: &Arc<K>, is_in_initial_list: bool);
    /// An object in the cache was replaced; `old` is what the cache held before.
    fn on_update(&mut self, old: &Arc<K>, new: &Arc<K>);
    /// An object left the cache; a tombstone when the deletion was detected by a relist.
    fn on_delete(&mut self, obj: &DeltaObject<K>);
}

/// A recorded handler call, so that handling can happen after the queue lock is released.
#[derive(Debug)]
pub enum Notification<K> {
    /// See [`ResourceEventHandler::on_add`].
    Add {
        /// The object added.
        obj: Arc<K>,
        /// Whether it came with the initial list.
        is_in_initial_list: bool,
    },
    /// See [`ResourceEventHandler::on_update`].
    Update {
        /// The previous state in the cache.
        old: Arc<K>,
        /// The new state.
        new: Arc<K>,
    },
    /// See [`ResourceEventHandler::on_delete`].
    Delete {
        /// The deleted object, or a tombstone.
        obj: DeltaObject<K>,
    },
}

impl<K> Clone for Notification<K> {
    fn clone(&self) -> Self {
        match self {
            Notification::Add {
                obj,
                is_in_initial_list,
            } => Notification::Add {
                obj: obj.clone(),
                is_in_initial_list: *is_in_initial_list,
            },
            Notification::Update { old, new } => Notification::Update {
                old: old.clone(),
                new: new.clone(),
            },
            Notification::Delete { obj } => Notification::Delete { obj: obj.clone() },
        }
    }
}

impl<K: CacheObject> Notification<K> {
    /// The key of the object it is about (a tombstone's own key for a deletion).
    pub fn key(&self) -> String {
        match self {
            Notification::Add { obj, .. } | Notification::Update { new: obj, .. } => {
                object_key(obj.as_ref())
            }
            Notification::Delete { obj } => obj.key(),
        }
    }
}

impl<K> Notification<K> {
    /// Calls the matching method of `handler`.
    pub fn dispatch(&self, handler: &mut impl ResourceEventHandler<K>) {
        match self {
            Notification::Add {
                obj,
                is_in_initial_list,
            } => handler.on_add(obj, *is_in_initial_list),
            Notification::Update { old, new } => handler.on_update(old, new),
            Notification::Delete { obj } => handler.on_delete(obj),
        }
    }
}

/// Collecting notifications is how a batch's handler calls are deferred.
impl<K> ResourceEventHandler<K> for Vec<Notification<K>> {
    fn on_add(&mut self, obj: &Arc<K>, is_in_initial_list: bool) {
        self.push(Notification::Add {
            obj: obj.clone(),
            is_in_initial_list,
        });
    }

    fn on_update(&mut self, old: &Arc<K>, new: &Arc<K>) {
        self.push(Notification::Update {
            old: old.clone(),
            new: new.clone(),
        });
    }

    fn on_delete(&mut self, obj: &DeltaObject<K>) {
        self.push(Notification::Delete { obj: obj.clone() });
    }
}

/// Applies `deltas` to `store` (the cache's writer), oldest first, and tells `handler`, as
/// client-go's `processDeltas`: `Sync`, `Replaced`, `Added` and `Updated` update the object if its
/// key is in the store (`on_update(old, new)`) and add it otherwise (`on_add`); `Deleted` removes it
/// (`on_delete`, with the tombstone if that is what was queued). The whole-list deltas of an atomic queue:
/// - `ReplacedAll` replaces the whole store with the listed objects, then reports a tombstone
///   deletion for every stored key absent from the list (in key order), then an update or an add
///   for every listed object (in list order), as client-go's `processReplacedAllInfo`: the same
///   handler calls a per-object relist produces, computed from the store instead of by the queue;
/// - `SyncAll` reports `on_update(obj, obj)` for every stored object, in key order;
/// - `Bookmark` changes nothing (this store keeps no resourceVersion).
///
/// The queues only queue tombstones as `Deleted`; should another type carry one (a hand-built batch
/// given to `add_if_not_present`), its last known object is applied, and a tombstone without an
/// object is skipped rather than stored. A delta whose type and payload disagree (a whole-list
/// payload on a per-object type, or the reverse) is skipped.
pub fn process_deltas<K: CacheObject>(
    handler: &mut impl ResourceEventHandler<K>,
    store: &mut Indexer<K>,
    deltas: &Deltas<K>,
    is_in_initial_list: bool,
) {
    for delta in deltas {
        process_delta(handler, store, delta, is_in_initial_list);
    }
}

/// One delta of [`process_deltas`]: for a caller that must know which delta made each call
/// (a shared informer of client-go before v0.24, whose sync rule reads the delta's type).
pub fn process_delta<K: CacheObject>(
    handler: &mut impl ResourceEventHandler<K>,
    store: &mut Indexer<K>,
    delta: &Delta<K>,
    is_in_initial_list: bool,
) {
    match (delta.type_, &delta.object) {
        (DeltaType::ReplacedAll, DeltaObject::List(info)) => {
            replace_all(handler, store, info, is_in_initial_list);
        }
        (DeltaType::SyncAll, DeltaObject::List(_)) => {
            for (_, obj) in store.entries() {
                handler.on_update(&obj, &obj);
            }
        }
        // A bookmark has nothing to apply: this store keeps no resourceVersion. The rest are
        // deltas whose type and payload disagree.
        (_, DeltaObject::List(_))
        | (DeltaType::ReplacedAll | DeltaType::SyncAll | DeltaType::Bookmark, _) => {}
        (DeltaType::Sync | DeltaType::Replaced | DeltaType::Added | DeltaType::Updated, _) => {
            let Some(obj) = delta.object.object() else {
                return;
            };
            match store.upsert(obj.clone()) {
                Some(old) => handler.on_update(&old, obj),
                None => handler.on_add(obj, is_in_initial_list),
            }
        }
        (DeltaType::Deleted, _) => {
            store.delete(&delta.object);
            handler.on_delete(&delta.object);
        }
    }
}

/// client-go's `processReplacedAllInfo`: the store is replaced first, so that handlers see a
/// store that already reflects what they are told.
fn replace_all<K: CacheObject>(
    handler: &mut impl ResourceEventHandler<K>,
    store: &mut Indexer<K>,
    info: &ListInfo<K>,
    is_in_initial_list: bool,
) {
    let listed: HashSet<String> = info
        .objects
        .iter()
        .map(|obj| object_key(obj.as_ref()))
        .collect();
    let deletions: Vec<DeltaObject<K>> = store
        .entries()
        .into_iter()
        .filter(|(key, _)| !listed.contains(&**key))
        .map(|(key, obj)| {
            DeltaObject::Tombstone(DeletedFinalStateUnknown {
                key: key.to_string(),
                obj: Some(obj),
            })
        })
        .collect();
    let olds: Vec<Option<Arc<K>>> = info.objects.iter().map(|obj| store.get(obj)).collect();
    store.replace(info.objects.iter().cloned());
    for tombstone in &deletions {
        handler.on_delete(tombstone);
    }
    for (new, old) in info.objects.iter().zip(olds) {
        match old {
            Some(old) => handler.on_update(&old, new),
            None => handler.on_add(new, is_in_initial_list),
        }
    }
}

/// One popped batch after it was applied to the indexer.
#[derive(Debug)]
pub struct Batch<K> {
    /// Pop sequence number, from 1.
    pub seq: u64,
    /// The key every delta belongs to: the key a DeltaFIFO batch was queued under, or the key of a
    /// single RealFIFO delta. `None` when the batch spans several keys (a RealFIFO batch pop) or is
    /// a whole-list delta; [`Delta::key`](super::Delta::key) then tells each delta's.
    pub key: Option<Arc<str>>,
    /// The deltas, oldest first: one key's for a DeltaFIFO, one or more consecutive ones for a
    /// RealFIFO.
    pub deltas: Deltas<K>,
    /// What applying each delta did to the indexer (old states for updates, in particular; one
    /// notification per object a whole-list delta touched).
    pub notifications: Vec<Notification<K>>,
    /// With a shared informer ([`Controller::with_shared_informer`]): what was handed to its
    /// handlers, one distribution per notification, in the same order; empty otherwise.
    pub distributions: Vec<Distribution<K>>,
    /// Whether the batch belonged to the initial list.
    pub is_in_initial_list: bool,
    /// When the oldest delta (for a DeltaFIFO: the key) entered the queue.
    pub enqueued_at: Instant,
    /// When it was popped.
    pub popped_at: Instant,
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

/// Receives each batch after it was applied; returning `Break` stops [`Controller::run`].
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
/// `Q` is the queue: a [`DeltaFifo`] unless said otherwise, any [`Queue`] implementation, or
/// `dyn Queue<K>` when the queue is chosen at run time.
pub struct Controller<K, Q: ?Sized = DeltaFifo<K>> {
    fifo: Arc<Q>,
    /// Where each pop is applied.
    apply: Apply<K>,
    /// What [`indexer`](Controller::indexer) hands out.
    reader: IndexerReader<K>,
    /// Most deltas one pop takes (client-go's `PopBatch`); 1 pops one at a time.
    batch_pop: usize,
    /// Numbers the pops and counts the batches in hand; its own unless shared.
    group: Arc<ConsumerGroup>,
    /// Runs inside each pop, under the queue's lock, once the batch was applied.
    in_pop: Option<InPop<K>>,
}

/// How a [`Controller`] applies a pop, and who holds the cache's writer.
enum Apply<K> {
    /// `process_deltas` into the writer the controller owns.
    Own(Indexer<K>),
    /// A shared informer's `HandleDeltas`, into the writer the informer owns.
    Shared(Arc<SharedInformer<K>>),
}

/// What a [`Controller`] runs inside each pop: the handler of a plain informer
/// (client-go's `NewInformer`), whose `Pop` calls it under the queue's lock.
pub type InPop<K> = Arc<dyn Fn(&[Notification<K>]) + Send + Sync>;

impl<K, Q: ?Sized + fmt::Debug> fmt::Debug for Controller<K, Q> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Controller")
            .field("fifo", &self.fifo)
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
/// A [`Controller`] takes its numbers and marks its batch in hand under the queue's lock, inside
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

impl<K, Q> Controller<K, Q>
where
    K: CacheObject + ResourceVersioned + Send + Sync + 'static,
    Q: Queue<K> + ?Sized,
{
    /// A consumer popping from `fifo` into `indexer`, which it owns from now on: the cache's
    /// only writer (register its indices first). One batch per pop. The queue should have been
    /// built with a reader of the indexer as its known objects (except the atomic one, which
    /// takes none), or deletions of unseen objects and relist tombstones are lost.
    pub fn new(fifo: Arc<Q>, indexer: Indexer<K>) -> Self {
        let reader = indexer.reader();
        Self::applying(fifo, Apply::Own(indexer), reader)
    }

    /// A consumer that processes each pop as `informer`'s `HandleDeltas`
    /// ([`SharedInformer::handle_deltas`], into the indexer the informer owns): applied, then
    /// distributed to its handlers' listeners; each batch then also says what each handler was
    /// given ([`Batch::distributions`]).
    pub fn with_shared_informer(fifo: Arc<Q>, informer: Arc<SharedInformer<K>>) -> Self {
        let reader = informer.indexer().clone();
        Self::applying(fifo, Apply::Shared(informer), reader)
    }

    fn applying(fifo: Arc<Q>, apply: Apply<K>, reader: IndexerReader<K>) -> Self {
        Controller {
            fifo,
            apply,
            reader,
            batch_pop: 1,
            group: Arc::default(),
            in_pop: None,
        }
    }

    /// Runs `in_pop` inside each pop, under the queue's lock, after the batch was applied: a
    /// plain informer's handler, which the producer's queue calls wait for.
    pub fn in_pop(mut self, in_pop: InPop<K>) -> Self {
        self.in_pop = Some(in_pop);
        self
    }

    /// Numbers pops in `group`'s sequence, shared with other controllers, and counts this one's
    /// batches in hand there: each batch [`process_next`](Controller::process_next) returns is in
    /// hand until the caller reports it with [`ConsumerGroup::handled`] ([`run`](Controller::run)
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
    pub fn fifo(&self) -> &Arc<Q> {
        &self.fifo
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

    /// Like [`process_next`](Controller::process_next) but returns `None` at once when nothing is
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
        let mut process = |deltas: &Deltas<K>, initial: bool| {
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
            self.fifo.pop_batch(self.batch_pop, &mut process)
        } else {
            self.fifo.try_pop_batch(self.batch_pop, &mut process)
        }?;
        Some(Batch {
            seq,
            key: popped.key,
            deltas: popped.deltas,
            notifications,
            distributions,
            is_in_initial_list: popped.is_in_initial_list,
            enqueued_at: popped.enqueued_at,
            popped_at: popped.popped_at,
            queue_len: popped.queue_len,
        })
    }
}

#[cfg(test)]
#[path = "controller_tests.rs"]
mod tests;
