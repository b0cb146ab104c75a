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
//!   [`ProcessLoop`](crate::cache::ProcessLoop) does. The consequence for backpressure: a slow handler does
//!   not block the producer; deltas accumulate in the queue (coalescing per key), and
//!   [`len`](DeltaFifo::len) shows the growth.
//! - Deletion tombstones for known objects and resync deltas are queued in sorted key order (client-go
//!   walks a Go map, in random order), so a replay always produces the same batches.
//! - The queue reports what an observer needs: time of first enqueue per key, the number of deltas
//!   coalesced into already-queued keys, and the peak queue length.
//!
//! ## Memory per queued key
//! A list of a million objects queues a million keys before the consumer pops the first, so a
//! queued key's cost is a large informer's peak. client-go keeps a map of key strings to `Deltas`
//! and a slice of the keys; here a key is not stored at all: client-go's `Pop` is the only place a
//! key leaves `items`, from the front of `queue`, so the queue of entries is the table's slab (an
//! entry's id is its place counted from the front's id) and a `hashbrown::HashTable` of 4-byte ids
//! finds a key by hashing the key computed from the entry's newest delta, as `KeyOf` does
//! ([`state`]). An entry holds one delta of an object inline ([`pending`]); `pop` builds the key
//! it hands out. The tests bound the entry's size and the bytes per queued key.

mod pending;
mod state;

use std::convert::Infallible;
use std::fmt;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

use self::state::{Listed, State};
use crate::cache::key::CacheObject;

use super::{InformerQueue, PopError, PoppedDeltas, ProcessError, QueueKind, QueueStats};
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
            state: Mutex::new(State::new()),
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
        let queued = state.add_if_not_present(&key, deltas);
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
    ) -> Result<Popped<K, T>, PopError<E>>
    where
        K: CacheObject,
    {
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
    ) -> Result<Option<Popped<K, T>>, PopError<E>>
    where
        K: CacheObject,
    {
        let state = self.lock();
        self.pop_locked(state, process)
    }

    fn pop_locked<T, E>(
        &self,
        mut state: MutexGuard<'_, State<K>>,
        process: impl FnOnce(&Deltas<K>, bool) -> Result<T, ProcessError<E>>,
    ) -> Result<Option<Popped<K, T>>, PopError<E>>
    where
        K: CacheObject,
    {
        // The key string is built here, once per pop: the queue keeps none.
        let Some((key, queued)) = state.pop_front() else {
            return if state.closed {
                Err(PopError::Closed)
            } else {
                Ok(None)
            };
        };
        // Computed before the count is decremented, so the last initial batch is still "initial".
        let is_in_initial_list = !state.has_synced();
        state.initial_population_count = state.initial_population_count.saturating_sub(1);
        state.shrink_as_drained();
        let queue_len = state.queue.len();
        let enqueued_at = state.instant(queued.enqueued_at);
        let deltas = queued.deltas.into_deltas();
        let popped_at = Instant::now();
        match process(&deltas, is_in_initial_list) {
            Ok(output) => Ok(Some(Popped {
                key,
                deltas,
                is_in_initial_list,
                enqueued_at,
                popped_at,
                queue_len,
                output,
            })),
            Err(ProcessError::Requeue(err)) => {
                state.add_if_not_present(&key, deltas);
                self.wake(&state);
                Err(PopError::Process(err))
            }
            Err(ProcessError::Fail(err)) => Err(PopError::Process(err)),
        }
    }
}

impl<K: CacheObject> DeltaFifo<K> {
    /// Queued keys in FIFO order.
    pub fn list_keys(&self) -> Vec<Arc<str>> {
        let state = self.lock();
        let mut key = String::new();
        state
            .queue
            .iter()
            .map(|queued| {
                queued.deltas.write_key(&mut key);
                Arc::from(key.as_str())
            })
            .collect()
    }

    /// A copy of the deltas queued for `key` (objects are shared, not cloned).
    pub fn get_by_key(&self, key: &str) -> Option<Deltas<K>> {
        let state = self.lock();
        let pos = state.find(key)?;
        Some(state.queue[pos].deltas.to_deltas())
    }

    /// When `key` entered the queue, if it is queued.
    pub fn enqueued_at(&self, key: &str) -> Option<Instant> {
        let state = self.lock();
        let pos = state.find(key)?;
        Some(state.instant(state.queue[pos].enqueued_at))
    }

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
        let queued_or_known = state.find(&key).is_some()
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
        // Room for the whole list at once: an index grown step by step to a million keys holds
        // the old table beside the new one at each step.
        state.reserve(list.len());
        // The listed keys, by queue position (positions stay put: nothing is popped meanwhile).
        let mut listed = Listed::new(state.queue.len() + list.len());
        for obj in list {
            let pos = state.queue_object(action, DeltaObject::Object(obj));
            listed.insert(pos);
        }
        let listed_keys = listed.len();

        // Deletion detection against the queue, in queue order (before a01b5a2a9, only without
        // known objects).
        let mut queued_deletions = 0;
        let queue_first = self.replace_tombstones == ReplaceTombstones::QueueFirst
            || self.known_objects.is_none();
        if queue_first {
            let mut key = std::mem::take(&mut state.key_buf);
            for pos in (0..state.queue.len()).filter(|&pos| !listed.contains(pos)) {
                let queued = &mut state.queue[pos].deltas;
                queued.write_key(&mut key);
                // A tombstone's key is already the key; carry the object it wraps.
                let tombstone = DeletedFinalStateUnknown {
                    key: key.clone(),
                    obj: queued.newest_object().cloned(),
                };
                queued.push(Delta::new(DeltaType::Deleted, tombstone));
                state.coalesced += 1;
                queued_deletions += 1;
            }
            state.key_buf = key;
        }

        // Deletion detection against what the consumer already applied.
        if let Some(known) = &self.known_objects {
            let mut unlisted_known: Vec<Arc<str>> = known_keys
                .into_iter()
                .filter(|key| match state.find(key) {
                    Some(pos) => !listed.contains(pos) && !queue_first,
                    None => true,
                })
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
        keys.retain(|key| state.find(key).is_none());
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

impl<K: CacheObject + Send + Sync> InformerQueue<K> for DeltaFifo<K> {
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

/// A `process` function of the [`InformerQueue`] interface, which cannot fail, as a DeltaFIFO one.
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
