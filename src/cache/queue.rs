//! The one interface between the Reflector, its queue and the consumer: client-go's `Queue`
//! (plus `ReflectorBookmarkStore` and `QueueWithBatch`), implemented by the three queues an informer
//! may run, and by the plain FIFO that older controllers pop (see `docs/queues.md`):
//!
//! | [`QueueKind`] | type | client-go |
//! |---|---|---|
//! | `delta` | [`DeltaFifo`] | `DeltaFIFO`: informers up to v0.32, and later with `InOrderInformers` off |
//! | `real` | [`RealFifo::new`] | `RealFIFO`: informers since v0.33 (`InOrderInformers`, beta on; GA in 1.36) |
//! | `atomic` | [`RealFifo::atomic`] | `RealFIFO` with `AtomicEvents` (`AtomicFIFO` gate, beta in 1.36) |
//! | `plain` | [`Fifo`](super::Fifo) | `FIFO`: one latest object per key, deletions never queued |
//!
//! The producer side is what the Reflector calls; the consumer side pops with a `process` function
//! that runs under the queue lock, so that once [`has_synced`](Queue::has_synced) is true the
//! consumer's cache holds the whole initial list.
//!
//! The producer side has the same methods as [`ReflectorStore`](super::ReflectorStore), what a
//! Reflector writes into; [`Reflector::new`](super::Reflector::new) adapts a queue to it, and the
//! stores that are no informer queue (the plain [`Fifo`](super::Fifo), the
//! [`UndeltaStore`](super::UndeltaStore), the [`ExpirationCache`](super::ExpirationCache))
//! implement it directly.

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use crate::cache::CacheObject;

use super::delta::{DeltaObject, Deltas};
use super::delta_fifo::DeltaFifo;
use super::fifo::Fifo;
use super::real_fifo::RealFifo;
use super::store::KnownObjects;

/// Which queue an informer runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum QueueKind {
    /// The classic [`DeltaFifo`]: per-key `Deltas`, coalesced while queued.
    #[default]
    Delta,
    /// A [`RealFifo`]: every delta in arrival order, one at a time.
    Real,
    /// An atomic [`RealFifo`]: relists, resyncs and bookmarks as single whole-list deltas.
    Atomic,
    /// The plain [`Fifo`](super::Fifo): the latest object per key, handed out as one `Sync`
    /// delta; a deletion is never queued.
    Plain,
}

impl QueueKind {
    /// Every kind, in declaration order.
    pub const ALL: [QueueKind; 4] = [
        QueueKind::Delta,
        QueueKind::Real,
        QueueKind::Atomic,
        QueueKind::Plain,
    ];

    /// The short name used on the command line and in output: `delta`, `real`, `atomic`,
    /// `plain`.
    pub fn as_str(self) -> &'static str {
        match self {
            QueueKind::Delta => "delta",
            QueueKind::Real => "real",
            QueueKind::Atomic => "atomic",
            QueueKind::Plain => "plain",
        }
    }

    /// The client-go queue this kind reproduces.
    pub fn client_go_name(self) -> &'static str {
        match self {
            QueueKind::Delta => "DeltaFIFO",
            QueueKind::Real => "RealFIFO",
            QueueKind::Atomic => "RealFIFO (AtomicEvents)",
            QueueKind::Plain => "FIFO",
        }
    }

    /// Builds a queue of this kind, as client-go's `newQueueFIFO` does: `known` is the consumer's
    /// store (a reader of the [`Indexer`](super::Indexer)), consulted by the DeltaFIFO and the
    /// RealFIFO but never by the atomic one nor the plain FIFO. `emit_delta_type_replaced` chooses
    /// `Replaced` (true, the informer default) or the legacy `Sync` for listed objects; the atomic
    /// queue emits `ReplacedAll` either way.
    pub fn build<K>(
        self,
        known: Arc<dyn KnownObjects<K>>,
        emit_delta_type_replaced: bool,
    ) -> Arc<dyn Queue<K>>
    where
        K: CacheObject + Send + Sync + 'static,
    {
        match self {
            QueueKind::Delta => Arc::new(
                DeltaFifo::new()
                    .known_objects(known)
                    .emit_delta_type_replaced(emit_delta_type_replaced),
            ),
            QueueKind::Real => {
                Arc::new(RealFifo::new(known).emit_delta_type_replaced(emit_delta_type_replaced))
            }
            QueueKind::Atomic => Arc::new(RealFifo::atomic()),
            QueueKind::Plain => Arc::new(Fifo::new()),
        }
    }
}

impl fmt::Display for QueueKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Deltas taken by one pop, after `process` ran on them.
#[derive(Debug)]
pub struct PoppedDeltas<K> {
    /// The key every delta belongs to: the key a DeltaFIFO batch was queued under, or the key of a
    /// single RealFIFO delta. `None` when the deltas span several keys (a batch pop) or the delta
    /// is a whole-list one.
    pub key: Option<Arc<str>>,
    /// The deltas, oldest first; never empty.
    pub deltas: Deltas<K>,
    /// Whether they belong to the initial list (popped before `has_synced`).
    pub is_in_initial_list: bool,
    /// When the oldest of them entered the queue (for a DeltaFIFO batch: when its key did).
    pub enqueued_at: Instant,
    /// When they were popped.
    pub popped_at: Instant,
    /// Entries still queued after this pop (see [`Queue::len`]).
    pub queue_len: usize,
}

/// A point-in-time view of the queue for status lines and summaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FifoStats {
    /// Keys queued now.
    pub len: usize,
    /// Largest number of keys ever queued at once.
    pub peak_len: usize,
    /// Deltas appended to a key that was already queued (including ones collapsed by dedup); for a
    /// plain [`Fifo`](super::Fifo), objects written over one still waiting.
    pub coalesced: u64,
    /// Queued objects removed before any pop delivered them, so that the consumer never hears of
    /// them: a plain [`Fifo`](super::Fifo)'s deletions of waiting keys, and waiting keys a
    /// `replace` did not list. Always 0 for the informer queues, which queue deletions.
    pub dropped: u64,
    /// Whether anything was ever added, or a first `replace` happened.
    pub populated: bool,
    /// Whether the initial list has been popped (see [`Queue::has_synced`]).
    pub synced: bool,
}

/// A queue between a Reflector (producer) and a consumer, shared as `Arc<dyn Queue<K>>` or used
/// through a generic parameter. Every method takes `&self`.
pub trait Queue<K>: Send + Sync + fmt::Debug {
    /// Which queue this is.
    fn kind(&self) -> QueueKind;

    /// Queues an `Added` delta (a watch `ADDED` event).
    fn add(&self, obj: Arc<K>);

    /// Queues an `Updated` delta (a watch `MODIFIED` event).
    fn update(&self, obj: Arc<K>);

    /// Queues a `Deleted` delta (a watch `DELETED` event) and returns whether it was queued: the
    /// DeltaFIFO drops the deletion of a key neither queued nor known, the RealFIFO never drops one.
    fn delete(&self, obj: DeltaObject<K>) -> bool;

    /// Delivers the result of a list at `resource_version` (see each queue for the deltas this
    /// produces). The first `replace` of a queue that was never populated sets its initial
    /// population, which [`has_synced`](Queue::has_synced) waits for.
    fn replace(&self, list: Vec<Arc<K>>, resource_version: &str);

    /// A periodic resync; returns how many deltas it queued.
    fn resync(&self) -> usize;

    /// A watch bookmark at `resource_version` (client-go's `ReflectorBookmarkStore`): a `Bookmark`
    /// delta in the atomic queue, nothing in the others.
    fn bookmark(&self, resource_version: &str);

    /// Closes the queue: pops drain what is queued, then report the end.
    fn close(&self);

    /// Whether [`close`](Queue::close) was called.
    fn is_closed(&self) -> bool;

    /// Whether the initial list has been delivered: the first `replace` (or an earlier
    /// add/update/delete) happened and everything it queued has been popped and processed.
    fn has_synced(&self) -> bool;

    /// Entries queued: keys for the DeltaFIFO, deltas for the RealFIFO.
    fn len(&self) -> usize;

    /// Whether nothing is queued.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Counters for status lines.
    fn stats(&self) -> FifoStats;

    /// Takes the next deltas, blocking while the queue is empty, runs `process` on them with the
    /// queue lock held (with whether they belong to the initial list), and returns them; `None`
    /// once the queue is closed and drained.
    ///
    /// `max` bounds how many deltas one pop takes, as client-go's `PopBatch` (values below 1 mean
    /// 1). The DeltaFIFO ignores it: a pop is always one key's `Deltas`.
    fn pop_batch(
        &self,
        max: usize,
        process: &mut dyn FnMut(&Deltas<K>, bool),
    ) -> Option<PoppedDeltas<K>>;

    /// Like [`pop_batch`](Queue::pop_batch) but returns `None` at once when nothing is queued
    /// (closed or not).
    fn try_pop_batch(
        &self,
        max: usize,
        process: &mut dyn FnMut(&Deltas<K>, bool),
    ) -> Option<PoppedDeltas<K>>;
}

#[cfg(test)]
#[path = "queue_tests.rs"]
mod tests;
