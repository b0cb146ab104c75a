//! The DeltaFIFO: a queue of per-key [`Deltas`] with client-go's exact semantics
//! (`tools/cache/delta_fifo.go`, v0.32, the last version with `ErrRequeue`/`AddIfNotPresent`).
//!
//! The producer (the Reflector) calls [`add`](DeltaFifo::add), [`update`](DeltaFifo::update),
//! [`delete`](DeltaFifo::delete), [`replace`](DeltaFifo::replace) and
//! [`resync`](DeltaFifo::resync); the consumer calls [`pop`](DeltaFifo::pop). Changes to a key that
//! is already queued are appended to its `Deltas` instead of queueing the key again, so a slow
//! consumer sees coalesced batches and the queue never holds more keys than there are objects;
//! the deltas queued under them, each with its object, grow with every change until popped.
//!
//! ## Where this differs from client-go, and why
//! - `pop` runs `process` with the queue lock held, exactly as client-go does, so `process` must be
//!   quick: it is meant to apply a batch to the [`Indexer`](crate::cache::Indexer). Anything slow (event
//!   handlers, rendering) belongs after `pop` returns, which is what
//!   [`Controller`](crate::cache::Controller) does. The consequence for backpressure: a slow handler does
//!   not block the producer; deltas accumulate in the queue (coalescing per key), and
//!   [`len`](DeltaFifo::len) shows the growth.
//! - Deletion tombstones for known objects and resync deltas are queued in sorted key order (client-go
//!   walks a Go map, in random order), so a replay always produces the same batches.
//! - The queue reports what an observer needs: time of first enqueue per key, the number of deltas
//!   coalesced into already-queued keys, and the peak queue length.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::fmt;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

use crate::cache::key::CacheObject;
use hashbrown::hash_map::EntryRef;
use hashbrown::{HashMap, HashSet};

use super::{PopError, PoppedDeltas, ProcessError, Queue, QueueKind, QueueStats};
use crate::cache::delta::{DeletedFinalStateUnknown, Delta, DeltaObject, DeltaType, Deltas};
use crate::cache::store::KnownObjects;
use crate::cache::store::ReflectorStore;

/// What a DeltaFIFO's `Replace` does about keys missing from the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplaceTombstones {
    /// Before a01b5a2a9 (`DeltaFIFO.Replace` @v0.26.3): with known objects, a tombstone for every
    /// known key absent from the list, carrying the known object; a key queued but never applied
    /// gets none and stays in the queue. Without known objects, the queued keys are checked.
    KnownObjects,
    /// From a01b5a2a9 (`DeltaFIFO.Replace` @v0.27.0, backported to v0.24.13, v0.25.9, v0.26.4):
    /// first a tombstone for every queued key absent from the list (carrying its newest queued
    /// object), then one for every known key absent from both.
    QueueFirst,
}

/// A batch taken from the FIFO, with what `process` returned for it.
#[derive(Debug)]
pub struct Popped<K, T> {
    /// The key the batch was queued under.
    pub key: Arc<str>,
    /// The deltas, oldest first; never empty.
    pub deltas: Deltas<K>,
    /// Whether the batch belonged to the initial list (popped before `has_synced`).
    pub is_in_initial_list: bool,
    /// When the key entered the queue (its first delta in this batch).
    pub enqueued_at: Instant,
    /// When it was popped.
    pub popped_at: Instant,
    /// Keys still queued after this pop.
    pub queue_len: usize,
    /// What `process` returned.
    pub output: T,
}

struct Queued<K> {
    /// Never empty.
    deltas: Deltas<K>,
    /// When the key entered the queue.
    enqueued_at: Instant,
}

struct State<K> {
    /// Maps a key to its Deltas; each Deltas has at least one Delta.
    items: HashMap<Arc<str>, Queued<K>>,
    /// Keys in FIFO order of first enqueue; no duplicates; a key is in `queue` iff it is in `items`.
    queue: VecDeque<Arc<str>>,
    /// True once anything was added, updated, deleted or requeued, or the first `replace` ran.
    populated: bool,
    /// Batches of the first `replace` not yet popped; `has_synced` once zero and `populated`.
    initial_population_count: usize,
    /// Set by `close`; `pop` then drains the queue and reports `Closed`.
    closed: bool,
    /// Threads blocked in `pop`; lets mutations skip the condvar wake-up when nobody waits.
    waiters: usize,
    coalesced: u64,
    peak_len: usize,
    /// Reused buffer for computing keys without allocating per delta.
    key_buf: String,
}

impl<K> State<K> {
    fn stats(&self) -> QueueStats {
        QueueStats {
            len: self.queue.len(),
            peak_len: self.peak_len,
            coalesced: self.coalesced,
            dropped: 0,
            populated: self.populated,
            synced: self.has_synced(),
        }
    }

    fn has_synced(&self) -> bool {
        self.populated && self.initial_population_count == 0
    }

    /// Appends a delta to `key`'s Deltas, queueing the key if it is new (client-go's
    /// `queueActionLocked`). Returns the shared key.
    fn queue_action(&mut self, key: &str, delta: Delta<K>) -> Arc<str> {
        match self.items.entry_ref(key) {
            EntryRef::Occupied(mut entry) => {
                entry.get_mut().deltas.push_deduped(delta);
                self.coalesced += 1;
                entry.key().clone()
            }
            EntryRef::Vacant(entry) => {
                let queued = Queued {
                    deltas: Deltas::new(vec![delta]),
                    enqueued_at: Instant::now(),
                };
                let shared = entry
                    .insert_entry_with_key(Arc::from(key), queued)
                    .key()
                    .clone();
                self.queue.push_back(shared.clone());
                self.peak_len = self.peak_len.max(self.queue.len());
                shared
            }
        }
    }

    /// Queues `object` under its own key.
    fn queue_object(&mut self, type_: DeltaType, object: DeltaObject<K>) -> Arc<str>
    where
        K: CacheObject,
    {
        let mut key = std::mem::take(&mut self.key_buf);
        object.write_key(&mut key);
        let shared = self.queue_action(&key, Delta { type_, object });
        self.key_buf = key;
        shared
    }

    /// Gives back most of the tables' room once the queue has drained to an eighth of it. A
    /// list of a million objects grows them to ~140 MB, which would otherwise stay allocated
    /// while the consumer builds its Indexer beside them: the peak of a large informer's memory.
    /// Twice what is left then needs at most a quarter of the table (at a quarter, the power of
    /// two rounding could make the new table as large as the old, both held while rehashing:
    /// +120 MB for a million keys). Rehashing an eighth of the keys at most keeps pops O(1)
    /// amortized, and a queue that grows again has room for as many again.
    fn shrink_as_drained(&mut self) {
        /// Tables this small are not worth rehashing.
        const SMALL: usize = 1024;
        let len = self.items.len();
        if self.items.capacity() > SMALL && len < self.items.capacity() / 8 {
            self.items.shrink_to(2 * len);
            self.queue.shrink_to(2 * len);
        }
    }

    fn add_if_not_present(&mut self, key: Arc<str>, deltas: Deltas<K>) -> bool {
        self.populated = true;
        if deltas.is_empty() || self.items.contains_key(&key) {
            return false;
        }
        self.items.insert(
            key.clone(),
            Queued {
                deltas,
                enqueued_at: Instant::now(),
            },
        );
        self.queue.push_back(key);
        self.peak_len = self.peak_len.max(self.queue.len());
        true
    }
}

/// A producer/consumer queue of per-key [`Deltas`] (client-go's `DeltaFIFO`).
///
/// Shared as `Arc<DeltaFifo<K>>` between the producer and the consumer; every method takes `&self`.
pub struct DeltaFifo<K> {
    state: Mutex<State<K>>,
    /// Signalled when a key is queued or the FIFO is closed.
    cond: Condvar,
    /// The consumer's store, consulted to drop deletions of unknown objects and to find deletions
    /// missed during a watch gap. `None` behaves as client-go with `KnownObjects == nil`.
    known_objects: Option<Arc<dyn KnownObjects<K>>>,
    /// `replace` queues `Replaced` deltas when true (informers since client-go 1.18), `Sync` when false.
    emit_delta_type_replaced: bool,
    /// Which keys missing from a list `replace` queues tombstones for.
    replace_tombstones: ReplaceTombstones,
}

impl<K> fmt::Debug for DeltaFifo<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeltaFifo")
            .field("stats", &self.lock().stats())
            .field("known_objects", &self.known_objects.is_some())
            .field("emit_delta_type_replaced", &self.emit_delta_type_replaced)
            .field("replace_tombstones", &self.replace_tombstones)
            .finish()
    }
}

impl<K> Default for DeltaFifo<K> {
    fn default() -> Self {
        DeltaFifo {
            state: Mutex::new(State {
                items: HashMap::default(),
                queue: VecDeque::new(),
                populated: false,
                initial_population_count: 0,
                closed: false,
                waiters: 0,
                coalesced: 0,
                peak_len: 0,
                key_buf: String::new(),
            }),
            cond: Condvar::new(),
            known_objects: None,
            emit_delta_type_replaced: true,
            replace_tombstones: ReplaceTombstones::QueueFirst,
        }
    }
}

impl<K> DeltaFifo<K> {
    /// An empty FIFO without known objects that emits `Replaced` on `replace`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the store of objects the consumer has applied (normally a reader of the
    /// [`Indexer`](crate::cache::Indexer)).
    pub fn known_objects(mut self, known: Arc<dyn KnownObjects<K>>) -> Self {
        self.known_objects = Some(known);
        self
    }

    /// Chooses between `Replaced` (true, the default, as informers since client-go 1.18) and the
    /// legacy `Sync` (false) for objects listed by `replace`.
    pub fn emit_delta_type_replaced(mut self, emit: bool) -> Self {
        self.emit_delta_type_replaced = emit;
        self
    }

    /// Chooses how `replace` finds the keys a list no longer has: queued keys first (the default,
    /// client-go from v0.27.0 and the backports v0.24.13, v0.25.9, v0.26.4), or only the known
    /// objects, as before (see [`ReplaceTombstones`]).
    pub fn replace_tombstones(mut self, rule: ReplaceTombstones) -> Self {
        self.replace_tombstones = rule;
        self
    }

    // Every mutation leaves the state consistent before anything that could panic runs (`process`
    // runs after the batch is removed), so a poisoned lock still guards a valid queue.
    fn lock(&self) -> MutexGuard<'_, State<K>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Threads blocked in `pop` now: lets tests wait for a consumer to block instead of
    /// sleeping and hoping it did.
    #[cfg(test)]
    pub(crate) fn waiters(&self) -> usize {
        self.lock().waiters
    }

    fn wake(&self, state: &State<K>) {
        if state.waiters > 0 {
            self.cond.notify_all();
        }
    }

    /// Queued keys in FIFO order.
    pub fn list_keys(&self) -> Vec<Arc<str>> {
        self.lock().queue.iter().cloned().collect()
    }

    /// A copy of the deltas queued for `key` (objects are shared, not cloned).
    pub fn get_by_key(&self, key: &str) -> Option<Deltas<K>> {
        self.lock().items.get(key).map(|q| q.deltas.clone())
    }

    /// When `key` entered the queue, if it is queued.
    pub fn enqueued_at(&self, key: &str) -> Option<Instant> {
        self.lock().items.get(key).map(|q| q.enqueued_at)
    }

    /// Requeues a batch that was popped, only if nothing was queued for its key since (client-go's
    /// `AddIfNotPresent`): newer deltas for the key supersede the retry. Returns whether it was queued.
    pub fn add_if_not_present(&self, deltas: Deltas<K>) -> bool
    where
        K: CacheObject,
    {
        let Some(key) = deltas.key() else {
            return false;
        };
        let mut state = self.lock();
        let queued = state.add_if_not_present(Arc::from(key), deltas);
        self.wake(&state);
        queued
    }

    /// Takes the oldest queued batch, blocking while the queue is empty, and runs `process` on it
    /// with the queue lock held, with `is_in_initial_list` telling whether the batch is part of the
    /// initial list. Returns [`PopError::Closed`] once the FIFO is closed and empty.
    ///
    /// If `process` returns [`ProcessError::Requeue`], the batch goes back to the end of the queue
    /// unless its key was queued again meanwhile. The initial-population count is not restored, so a
    /// requeue never holds `has_synced` back (as in client-go).
    pub fn pop<T, E>(
        &self,
        process: impl FnOnce(&Deltas<K>, bool) -> Result<T, ProcessError<E>>,
    ) -> Result<Popped<K, T>, PopError<E>> {
        let mut state = self.lock();
        while state.queue.is_empty() && !state.closed {
            // Counted while waiting so that mutations know whether to signal.
            state.waiters += 1;
            state = self.cond.wait(state).unwrap_or_else(|e| e.into_inner());
            state.waiters -= 1;
        }
        self.pop_locked(state, process)
            .map(|popped| popped.expect("queue is non-empty or closed after waiting"))
    }

    /// Like [`pop`](DeltaFifo::pop) but returns `Ok(None)` instead of blocking when the queue is
    /// empty and open. Used by drivers that interleave producing and draining on one thread.
    pub fn try_pop<T, E>(
        &self,
        process: impl FnOnce(&Deltas<K>, bool) -> Result<T, ProcessError<E>>,
    ) -> Result<Option<Popped<K, T>>, PopError<E>> {
        let state = self.lock();
        self.pop_locked(state, process)
    }

    fn pop_locked<T, E>(
        &self,
        mut state: MutexGuard<'_, State<K>>,
        process: impl FnOnce(&Deltas<K>, bool) -> Result<T, ProcessError<E>>,
    ) -> Result<Option<Popped<K, T>>, PopError<E>> {
        let Some(key) = state.queue.pop_front() else {
            return if state.closed {
                Err(PopError::Closed)
            } else {
                Ok(None)
            };
        };
        // Computed before the count is decremented, so the last initial batch is still "initial".
        let is_in_initial_list = !state.has_synced();
        state.initial_population_count = state.initial_population_count.saturating_sub(1);
        let queued = state
            .items
            .remove(&key)
            .expect("invariant: a key is in `queue` iff it is in `items`");
        state.shrink_as_drained();
        let queue_len = state.queue.len();
        let popped_at = Instant::now();
        match process(&queued.deltas, is_in_initial_list) {
            Ok(output) => Ok(Some(Popped {
                key,
                deltas: queued.deltas,
                is_in_initial_list,
                enqueued_at: queued.enqueued_at,
                popped_at,
                queue_len,
                output,
            })),
            Err(ProcessError::Requeue(err)) => {
                state.add_if_not_present(key, queued.deltas);
                self.wake(&state);
                Err(PopError::Process(err))
            }
            Err(ProcessError::Fail(err)) => Err(PopError::Process(err)),
        }
    }
}

impl<K: CacheObject> DeltaFifo<K> {
    fn queue(&self, type_: DeltaType, object: DeltaObject<K>) {
        let mut state = self.lock();
        state.populated = true;
        state.queue_object(type_, object);
        self.wake(&state);
    }
}

impl<K: CacheObject + Send + Sync> ReflectorStore<K> for DeltaFifo<K> {
    /// Queues an `Added` delta for `obj`.
    fn add(&self, obj: Arc<K>) {
        self.queue(DeltaType::Added, DeltaObject::Object(obj));
    }

    /// Queues an `Updated` delta for `obj`.
    fn update(&self, obj: Arc<K>) {
        self.queue(DeltaType::Updated, DeltaObject::Object(obj));
    }

    /// Queues a `Deleted` delta for `obj` (an object or a tombstone), unless the key is neither
    /// queued nor known to the consumer: then the deletion was already reported (by a relist's
    /// tombstone, typically) and a second report is dropped. Returns whether a delta was queued.
    /// A whole-list payload deletes nothing and is dropped.
    fn delete(&self, object: DeltaObject<K>) -> bool {
        let mut state = self.lock();
        state.populated = true;
        if object.list().is_some() {
            return false;
        }
        let mut key = std::mem::take(&mut state.key_buf);
        object.write_key(&mut key);
        let queued_or_known = state.items.contains_key(key.as_str())
            || self
                .known_objects
                .as_ref()
                .is_some_and(|known| known.get_by_key(&key).is_some());
        if queued_or_known {
            state.queue_action(
                &key,
                Delta {
                    type_: DeltaType::Deleted,
                    object,
                },
            );
            self.wake(&state);
        }
        state.key_buf = key;
        queued_or_known
    }

    /// Delivers the result of a list: a `Replaced` (or legacy `Sync`) delta for every object in
    /// `list`, then a `Deleted` tombstone for every queued key absent from the list (carrying its
    /// newest queued object), then one for every known key absent from the list with nothing queued
    /// (carrying the known object). Those tombstones are how deletions missed while the watch was
    /// down reach the consumer. With [`ReplaceTombstones::KnownObjects`] and known objects, only
    /// the known keys absent from the list get one (carrying the known object, queued or not), as
    /// client-go's `Replace` before a01b5a2a9: a key queued but never applied keeps its deltas.
    ///
    /// The first `replace` on a FIFO that was never populated sets the initial population: the
    /// number of distinct listed keys plus queued deletions, which `has_synced` waits for.
    /// `resource_version` is the list's resourceVersion; like client-go's DeltaFIFO, the queue does
    /// not use it.
    fn replace(&self, list: Vec<Arc<K>>, resource_version: &str) {
        let _ = resource_version;
        let action = if self.emit_delta_type_replaced {
            DeltaType::Replaced
        } else {
            DeltaType::Sync
        };
        let mut state = self.lock();
        // The keys already applied, for deletion detection (client-go lists them after queueing
        // the list; nothing applies a delta meanwhile, `process` runs under this lock).
        let known_keys = self
            .known_objects
            .as_ref()
            .map(|known| known.list_keys())
            .unwrap_or_default();
        // The listed keys are needed only to tell them from keys queued before or known; on a
        // first list there are none, and a set of a million keys is 36 MB at the peak.
        let mut listed: Option<HashSet<Arc<str>>> = (!state.queue.is_empty()
            || !known_keys.is_empty())
        .then(|| HashSet::with_capacity(list.len()));
        // Room for the whole list at once: a table grown step by step to a million keys holds
        // the old table beside the new one at each step (60 MB at the last).
        state.items.reserve(list.len());
        state.queue.reserve(list.len());
        for obj in list {
            let key = state.queue_object(action, DeltaObject::Object(obj));
            if let Some(listed) = &mut listed {
                listed.insert(key);
            }
        }
        // Without the set, every queued key was listed.
        let listed_keys = listed.as_ref().map_or(state.queue.len(), HashSet::len);
        let is_listed = |key: &Arc<str>| listed.as_ref().is_none_or(|l| l.contains(key));

        // Deletion detection against the queue, in queue order (before a01b5a2a9, only without
        // known objects).
        let mut queued_deletions = 0;
        let queue_first = self.replace_tombstones == ReplaceTombstones::QueueFirst
            || self.known_objects.is_none();
        let unlisted_queued: Vec<Arc<str>> = state
            .queue
            .iter()
            .filter(|k| queue_first && !is_listed(k))
            .cloned()
            .collect();
        for key in unlisted_queued {
            // A tombstone's key is already the key; carry the object it wraps.
            let newest = state.items[&key]
                .deltas
                .newest()
                .and_then(|d| d.object.object().cloned());
            let tombstone = DeletedFinalStateUnknown {
                key: key.to_string(),
                obj: newest,
            };
            state.queue_action(&key, Delta::new(DeltaType::Deleted, tombstone));
            queued_deletions += 1;
        }

        // Deletion detection against what the consumer already applied.
        if let Some(known) = &self.known_objects {
            let mut unlisted_known: Vec<Arc<str>> = known_keys
                .into_iter()
                .filter(|key| !is_listed(key) && (!queue_first || !state.items.contains_key(key)))
                .collect();
            unlisted_known.sort_unstable();
            for key in unlisted_known {
                let tombstone = DeletedFinalStateUnknown {
                    key: key.to_string(),
                    obj: known.get_by_key(&key),
                };
                state.queue_action(&key, Delta::new(DeltaType::Deleted, tombstone));
                queued_deletions += 1;
            }
        }

        if !state.populated {
            state.populated = true;
            state.initial_population_count = listed_keys + queued_deletions;
        }
        self.wake(&state);
    }

    /// Queues a `Sync` delta for every known object whose key has nothing queued, and returns how
    /// many were queued. Keys with queued deltas are skipped because the known object is older than
    /// what is queued: syncing it would deliver a stale state after a newer one.
    fn resync(&self) -> usize {
        let Some(known) = &self.known_objects else {
            return 0;
        };
        let mut state = self.lock();
        let mut synced = 0;
        let mut keys = known.list_keys();
        // Keys with deltas queued are skipped; only the others need an order.
        keys.retain(|key| !state.items.contains_key(key));
        keys.sort_unstable();
        for key in keys {
            let Some(obj) = known.get_by_key(&key) else {
                continue;
            };
            state.queue_action(&key, Delta::new(DeltaType::Sync, obj));
            synced += 1;
        }
        self.wake(&state);
        synced
    }

    /// Whether the initial list has been delivered: true once the first `replace` (or any earlier
    /// add/update/delete) happened and every batch the first `replace` queued has been popped.
    /// Because `process` runs under the queue lock, the last initial batch has also been processed.
    fn has_synced(&self) -> bool {
        self.lock().has_synced()
    }

    // No `bookmark`: client-go's DeltaFIFO is no `ReflectorBookmarkStore`, bookmarks never reach it.

    fn is_drained(&self) -> bool {
        self.lock().queue.is_empty()
    }
}

impl<K: CacheObject + Send + Sync> Queue<K> for DeltaFifo<K> {
    /// Closes the FIFO: blocked and later `pop` calls drain what is queued, then return
    /// [`PopError::Closed`]. Producers may still queue; those batches are popped too.
    fn close(&self) {
        let mut state = self.lock();
        state.closed = true;
        drop(state);
        self.cond.notify_all();
    }

    /// Whether [`close`](DeltaFifo::close) was called.
    fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Number of keys queued.
    fn len(&self) -> usize {
        self.lock().queue.len()
    }

    /// Counters for status lines.
    fn stats(&self) -> QueueStats {
        self.lock().stats()
    }

    fn kind(&self) -> QueueKind {
        QueueKind::Delta
    }

    fn pop_batch(
        &self,
        _max: usize,
        process: &mut dyn FnMut(&Deltas<K>, bool),
    ) -> Option<PoppedDeltas<K>> {
        DeltaFifo::pop(self, infallible(process))
            .ok()
            .map(popped_deltas)
    }

    fn try_pop_batch(
        &self,
        _max: usize,
        process: &mut dyn FnMut(&Deltas<K>, bool),
    ) -> Option<PoppedDeltas<K>> {
        DeltaFifo::try_pop(self, infallible(process))
            .ok()
            .flatten()
            .map(popped_deltas)
    }
}

/// A `process` function of the [`Queue`] interface, which cannot fail, as a DeltaFIFO one.
fn infallible<K>(
    process: &mut dyn FnMut(&Deltas<K>, bool),
) -> impl FnOnce(&Deltas<K>, bool) -> Result<(), ProcessError<Infallible>> + '_ {
    |deltas, initial| {
        process(deltas, initial);
        Ok(())
    }
}

fn popped_deltas<K>(popped: Popped<K, ()>) -> PoppedDeltas<K> {
    PoppedDeltas {
        key: Some(popped.key),
        deltas: popped.deltas,
        is_in_initial_list: popped.is_in_initial_list,
        enqueued_at: popped.enqueued_at,
        popped_at: popped.popped_at,
        queue_len: popped.queue_len,
    }
}

#[cfg(test)]
#[path = "delta_fifo_tests.rs"]
mod tests;
