//! The queue between a Reflector and an informer's consumer: client-go's `InformerQueue` (plus
//! `ReflectorBookmarkStore` and `QueueWithBatch`), and the queues an informer may run (see
//! `docs/queues.md`):
//!
//! | [`QueueKind`] | type | client-go |
//! |---|---|---|
//! | `delta` | [`DeltaFifo`] | `DeltaFIFO`: informers up to v0.32, and later with `InOrderInformers` off |
//! | `real` | [`RealFifo::new`] | `RealFIFO`: informers since v0.33 (`InOrderInformers`, beta on; GA in 1.36) |
//! | `atomic` | [`RealFifo::atomic`] | `RealFIFO` with `AtomicEvents` (`AtomicFIFO` gate, beta in 1.36) |
//! | `plain` | [`Fifo`] | `FIFO`: one latest object per key, deletions never queued |
//!
//! Invariants every queue keeps:
//! - The producer side is [`ReflectorStore`] (a queue is one, so a Reflector is handed the queue
//!   itself); the consumer pops with a `process` function that runs under the queue lock, so that
//!   once [`has_synced`](ReflectorStore::has_synced) is true the consumer's cache holds the whole
//!   initial list.
//! - A queue consults the consumer's cache only through [`KnownObjects`], under its own lock, and
//!   never calls the consumer otherwise.
//! - A pop is never empty, and hands out deltas oldest first.
//!
//! This folder imports the cache's shared leaves and `store/` (the producer contract and
//! [`KnownObjects`]); `mod.rs` names none of the queues, which [`QueueKind::build`]
//! (`new_queue.rs`) constructs.

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use crate::cache::delta::Deltas;
#[cfg(doc)]
use crate::cache::store::KnownObjects;
use crate::cache::store::ReflectorStore;

mod delta_fifo;
mod fifo;
mod new_queue;
mod real_fifo;

pub use delta_fifo::{DeltaFifo, Popped, ReplaceTombstones};
pub use fifo::{Fifo, PoppedObject};
pub use real_fifo::RealFifo;

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
    /// The plain [`Fifo`]: the latest object per key, handed out as one `Sync`
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
    /// Entries still queued after this pop (see [`InformerQueue::len`]).
    pub queue_len: usize,
}

/// A point-in-time view of the queue for status lines and summaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueueStats {
    /// Keys queued now.
    pub len: usize,
    /// Largest number of keys ever queued at once.
    pub peak_len: usize,
    /// Deltas appended to a key that was already queued (including ones collapsed by dedup); for a
    /// plain [`Fifo`], objects written over one still waiting.
    pub coalesced: u64,
    /// Queued objects removed before any pop delivered them, so that the consumer never hears of
    /// them: a plain [`Fifo`]'s deletions of waiting keys, and waiting keys a
    /// `replace` did not list. Always 0 for the informer queues, which queue deletions.
    pub dropped: u64,
    /// Whether anything was ever added, or a first `replace` happened.
    pub populated: bool,
    /// Whether the initial list has been popped (see [`ReflectorStore::has_synced`]).
    pub synced: bool,
}

/// A queue between a Reflector (producer) and a consumer, shared as `Arc<dyn InformerQueue<K>>` or used
/// through a generic parameter. Every method takes `&self`.
///
/// The producer side is [`ReflectorStore`], its supertrait, whose methods and contracts every
/// queue implements once; what this trait adds is the consumer's side.
pub trait InformerQueue<K>: ReflectorStore<K> {
    /// Which queue this is.
    fn kind(&self) -> QueueKind;

    /// Closes the queue: pops drain what is queued, then report the end.
    fn close(&self);

    /// Whether [`close`](InformerQueue::close) was called.
    fn is_closed(&self) -> bool;

    /// Entries queued: keys for the DeltaFIFO, deltas for the RealFIFO.
    fn len(&self) -> usize;

    /// Whether nothing is queued.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Counters for status lines.
    fn stats(&self) -> QueueStats;

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

    /// Like [`pop_batch`](InformerQueue::pop_batch) but returns `None` at once when nothing is queued
    /// (closed or not).
    fn try_pop_batch(
        &self,
        max: usize,
        process: &mut dyn FnMut(&Deltas<K>, bool),
    ) -> Option<PoppedDeltas<K>>;
}

/// What a `process` function passed to [`DeltaFifo::pop`](crate::cache::DeltaFifo::pop) (or [`Fifo::pop`](crate::cache::Fifo::pop))
/// reports when it fails.
#[derive(Debug)]
pub enum ProcessError<E> {
    /// Put the batch back at the end of the queue, unless its key was queued again meanwhile
    /// (client-go's `ErrRequeue`), and report the error.
    Requeue(E),
    /// Drop the batch and report the error.
    Fail(E),
}

/// Why [`DeltaFifo::pop`](crate::cache::DeltaFifo::pop) (or [`Fifo::pop`](crate::cache::Fifo::pop)) returned without a batch.
#[derive(Debug, thiserror::Error)]
pub enum PopError<E> {
    /// The FIFO was closed and every queued batch has been popped.
    #[error("the FIFO is closed")]
    Closed,
    /// `process` failed (the batch was requeued if it asked for it).
    #[error("processing a popped batch failed")]
    Process(#[source] E),
}

#[cfg(test)]
#[path = "queue_tests.rs"]
mod tests;
