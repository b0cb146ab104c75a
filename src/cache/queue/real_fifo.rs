//! The RealFIFO (client-go's `tools/cache/the_real_fifo.go`, v0.33–v0.36): every delta the
//! Reflector produces, in arrival order, handed to the consumer one by one (or, with
//! [`pop_batch`](InformerQueue::pop_batch), a few consecutive ones at a time).
//!
//! Unlike the [`DeltaFifo`](crate::cache::DeltaFifo), nothing is merged per key and nothing is deduplicated:
//! an object updated three times while the consumer is busy is delivered three times, and a
//! deletion of an object the consumer never saw is delivered too. Since client-go v0.33 this is
//! what a `SharedIndexInformer` runs (the `InOrderInformers` feature gate).
//!
//! Two modes, as client-go's `RealFIFOOptions.AtomicEvents`:
//! - [`RealFifo::new`] (the `InOrderInformers` informer): `replace` reconciles the list with what is
//!   queued and what the consumer knows, and queues tombstones and one `Replaced` per object;
//!   `resync` queues a `Sync` per known object.
//! - [`RealFifo::atomic`] (the `AtomicFIFO` gate, beta in 1.36): `replace` queues one `ReplacedAll`
//!   delta with the whole list, `resync` one `SyncAll`, each watch bookmark one `Bookmark`; the
//!   consumer's store is never consulted, so the consumer (`process_deltas`) works out the
//!   deletions itself. A mode rather than a type of its own because client-go makes it one: adds,
//!   updates, deletes, pops and `has_synced` are the same code.
//!
//! With [`unlock_while_processing`](RealFifo::unlock_while_processing) (client-go 1.36's
//! `UnlockWhileProcessingFIFO`, atomic mode only), a pop releases the lock while its `process`
//! runs, unless [`UNLOCK_LIMIT`] deltas still wait (`whileProcessing_locked`), so the producer
//! keeps queueing behind a slow consumer and the next batch pop takes more. The popped deltas
//! leave the initial population only once processed, so `has_synced` still means "the cache
//! holds the initial list"; otherwise `process` runs under the lock.
//!
//! ## Where this differs from client-go, and why
//! - Tombstones for known objects and resync deltas are queued in sorted key order (client-go walks
//!   a Go map), so a replay always produces the same deltas.
//! - `replace` can queue `Sync` instead of `Replaced` for listed objects (the legacy
//!   `EmitDeltaTypeReplaced=false` of the DeltaFIFO), so `--legacy-sync` means one thing everywhere.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

use crate::cache::key::CacheObject;
use hashbrown::{HashMap, HashSet};

use super::{InformerQueue, PoppedDeltas, QueueKind, QueueStats};
use crate::cache::delta::{
    DeletedFinalStateUnknown, Delta, DeltaObject, DeltaType, Deltas, ListInfo,
};
use crate::cache::key::write_object_key;
use crate::cache::store::{KnownObjects, ReflectorStore};

/// What `replace`, `resync` and `bookmark` do.
enum Mode<K> {
    /// Reconcile against the consumer's store, one delta per object.
    PerObject { known: Arc<dyn KnownObjects<K>> },
    /// One whole-list delta per call; the consumer's store is never consulted.
    Atomic,
}

struct Queued<K> {
    delta: Delta<K>,
    /// The delta's store key; `None` exactly for whole-list deltas.
    key: Option<Arc<str>>,
    enqueued_at: Instant,
}

struct State<K> {
    /// Every delta not yet popped, oldest first: one entry per add/update/delete/bookmark and per
    /// tombstone or object a replace/resync queued, never merged.
    items: VecDeque<Queued<K>>,
    /// True once anything was added, updated or deleted, or the first `replace` ran.
    populated: bool,
    /// Deltas at the head of `items` that the first `replace` queued and no pop has taken yet;
    /// never more than `items.len()`, except while a pop's deltas are processed with the lock
    /// released (they count until processed). `has_synced` once zero and `populated`.
    initial_population_count: usize,
    /// Set by `close`; pops then drain the queue and report the end.
    closed: bool,
    /// Threads blocked in a pop; lets mutations skip the condvar wake-up when nobody waits.
    waiters: usize,
    peak_len: usize,
    /// Reused buffer for computing keys.
    key_buf: String,
    /// A pop's `process` runs with the lock released: the queue is not empty until it returns.
    processing: bool,
}

/// `defaultBatchSize` × 2 (`the_real_fifo.go`): from this many waiting deltas on, a pop keeps
/// the lock while processing even with `UnlockWhileProcessing`, so the queue cannot grow without
/// bound behind a slow consumer.
pub const UNLOCK_LIMIT: usize = 2000;

impl<K> State<K> {
    fn has_synced(&self) -> bool {
        self.populated && self.initial_population_count == 0
    }

    fn push(&mut self, delta: Delta<K>, key: Option<Arc<str>>) {
        self.items.push_back(Queued {
            delta,
            key,
            enqueued_at: Instant::now(),
        });
        self.peak_len = self.peak_len.max(self.items.len());
    }

    /// Queues `obj` under its own key.
    fn push_object(&mut self, type_: DeltaType, object: DeltaObject<K>)
    where
        K: CacheObject,
    {
        let key = object.list().is_none().then(|| {
            object.write_key(&mut self.key_buf);
            Arc::from(self.key_buf.as_str())
        });
        self.push(Delta { type_, object }, key);
    }

    /// How many deltas from the head one pop of at most `max` takes, as client-go's `PopBatch`:
    /// it stops before a key already taken (a batch has distinct keys), at a whole-list delta
    /// (which is always popped alone), and at the end of the initial population (a batch is
    /// entirely in or entirely out of the initial list).
    fn batch_len(&self, max: usize) -> usize {
        let mut limit = max.max(1);
        if self.initial_population_count > 0 {
            limit = limit.min(self.initial_population_count);
        }
        if limit == 1 {
            return 1;
        }
        let mut keys: HashSet<&str> = HashSet::with_capacity(limit.min(self.items.len()));
        let mut n = 0;
        for queued in self.items.iter().take(limit) {
            let Some(key) = queued.key.as_deref() else {
                return n.max(1);
            };
            if !keys.insert(key) {
                break;
            }
            n += 1;
        }
        n
    }
}

/// A queue of deltas in arrival order (client-go's `RealFIFO`), shared as `Arc<RealFifo<K>>`
/// between the producer and the consumer. It is used through the [`InformerQueue`] trait.
pub struct RealFifo<K> {
    state: Mutex<State<K>>,
    /// Signalled when a delta is queued or the FIFO is closed.
    cond: Condvar,
    mode: Mode<K>,
    /// `replace` queues `Replaced` deltas when true (the default), `Sync` when false.
    emit_delta_type_replaced: bool,
    /// Release the lock while a pop is processed (atomic mode only).
    unlock_while_processing: bool,
}

impl<K> fmt::Debug for RealFifo<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RealFifo")
            .field("atomic", &self.is_atomic())
            .field("stats", &self.stats_locked(&self.lock()))
            .field("emit_delta_type_replaced", &self.emit_delta_type_replaced)
            .finish()
    }
}

impl<K> RealFifo<K> {
    fn with_mode(mode: Mode<K>) -> Self {
        RealFifo {
            state: Mutex::new(State {
                items: VecDeque::new(),
                populated: false,
                initial_population_count: 0,
                closed: false,
                waiters: 0,
                peak_len: 0,
                key_buf: String::new(),
                processing: false,
            }),
            cond: Condvar::new(),
            mode,
            emit_delta_type_replaced: true,
            unlock_while_processing: false,
        }
    }

    /// The informer's RealFIFO (`InOrderInformers`): `known` is the consumer's store (normally a
    /// reader of the [`Indexer`](crate::cache::Indexer)), which `replace` and `resync` consult. client-go
    /// requires it in this mode, and so does this constructor.
    pub fn new(known: Arc<dyn KnownObjects<K>>) -> Self {
        Self::with_mode(Mode::PerObject { known })
    }

    /// The atomic RealFIFO (`AtomicFIFO`): whole-list deltas for `replace`, `resync` and
    /// bookmarks, and no known objects (client-go refuses them in this mode).
    pub fn atomic() -> Self {
        Self::with_mode(Mode::Atomic)
    }

    /// Chooses between `Replaced` (true, the default) and the legacy `Sync` (false) for objects
    /// listed by `replace`. The atomic mode queues `ReplacedAll` either way.
    pub fn emit_delta_type_replaced(mut self, emit: bool) -> Self {
        self.emit_delta_type_replaced = emit;
        self
    }

    /// Releases the lock while a pop's `process` runs, unless `UNLOCK_LIMIT` deltas wait, as
    /// client-go's `RealFIFOOptions.UnlockWhileProcessing`; ignored outside the atomic mode,
    /// where client-go refuses it (`NewRealFIFOWithOptions` panics).
    pub fn unlock_while_processing(mut self, unlock: bool) -> Self {
        self.unlock_while_processing = unlock && self.is_atomic();
        self
    }

    /// Whether a pop may release the lock while processing.
    pub fn unlocks_while_processing(&self) -> bool {
        self.unlock_while_processing
    }

    /// Whether this is the atomic mode.
    pub fn is_atomic(&self) -> bool {
        matches!(self.mode, Mode::Atomic)
    }

    /// A copy of every queued delta, oldest first (objects are shared, not cloned).
    pub fn queued(&self) -> Deltas<K> {
        Deltas::new(self.lock().items.iter().map(|q| q.delta.clone()).collect())
    }

    // Every mutation leaves the state consistent before anything that could panic runs (`process`
    // runs after the deltas are removed), so a poisoned lock still guards a valid queue.
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

    fn stats_locked(&self, state: &State<K>) -> QueueStats {
        QueueStats {
            len: state.items.len(),
            peak_len: state.peak_len,
            coalesced: 0,
            dropped: 0,
            populated: state.populated,
            synced: state.has_synced(),
        }
    }

    fn pop_locked<'s>(
        &'s self,
        mut state: MutexGuard<'s, State<K>>,
        max: usize,
        process: &mut dyn FnMut(&Deltas<K>, bool),
    ) -> Option<PoppedDeltas<K>> {
        if state.items.is_empty() {
            return None;
        }
        // Computed before the count goes down, so the last initial delta is still "initial".
        let is_in_initial_list = !state.has_synced();
        let n = state.batch_len(max);
        let enqueued_at = state.items[0].enqueued_at;
        let key = if n == 1 {
            state.items[0].key.clone()
        } else {
            None
        };
        let deltas = Deltas::new(state.items.drain(..n).map(|q| q.delta).collect());
        let queue_len = state.items.len();
        let popped_at = Instant::now();
        if self.unlock_while_processing && queue_len < UNLOCK_LIMIT {
            state.processing = true;
            drop(state);
            process(&deltas, is_in_initial_list);
            state = self.lock();
            state.processing = false;
        } else {
            process(&deltas, is_in_initial_list);
        }
        // Only now, so that `has_synced` is never true while the initial list is processed.
        state.initial_population_count = state.initial_population_count.saturating_sub(n);
        Some(PoppedDeltas {
            key,
            deltas,
            is_in_initial_list,
            enqueued_at,
            popped_at,
            queue_len,
        })
    }
}

impl<K: CacheObject> RealFifo<K> {
    fn queue(&self, type_: DeltaType, object: DeltaObject<K>) {
        let mut state = self.lock();
        state.populated = true;
        state.push_object(type_, object);
        self.wake(&state);
    }

    fn queue_whole_list(&self, type_: DeltaType, info: ListInfo<K>) {
        let mut state = self.lock();
        state.push(Delta::new(type_, info), None);
        self.wake(&state);
    }

    /// client-go's `Replace` without atomic events: first a `Deleted` tombstone for every queued
    /// key absent from `list` whose newest queued delta is not already a deletion (carrying that
    /// delta's object), in queue order; then one for every known key absent from `list` with
    /// nothing queued (carrying the known object), in key order; only then a `Replaced` (or
    /// `Sync`) per listed object, in list order, duplicates included.
    fn replace_per_object(
        &self,
        state: &mut State<K>,
        known: &dyn KnownObjects<K>,
        list: Vec<Arc<K>>,
    ) {
        let mut listed: Vec<(Arc<str>, Arc<K>)> = Vec::with_capacity(list.len());
        for obj in list {
            write_object_key(obj.as_ref(), &mut state.key_buf);
            listed.push((Arc::from(state.key_buf.as_str()), obj));
        }
        let listed_keys: HashSet<&str> = listed.iter().map(|(k, _)| &**k).collect();

        // The newest queued delta of every queued key, keys in order of first appearance.
        let mut newest: HashMap<Arc<str>, usize> = HashMap::new();
        let mut queued_keys: Vec<Arc<str>> = Vec::new();
        for (i, queued) in state.items.iter().enumerate() {
            if let Some(key) = &queued.key
                && newest.insert(key.clone(), i).is_none()
            {
                queued_keys.push(key.clone());
            }
        }

        let mut tombstones: Vec<DeletedFinalStateUnknown<K>> = Vec::new();
        for key in &queued_keys {
            let last = &state.items[newest[key]].delta;
            if listed_keys.contains(&**key) || last.type_ == DeltaType::Deleted {
                continue;
            }
            tombstones.push(DeletedFinalStateUnknown {
                key: key.to_string(),
                obj: last.object.object().cloned(),
            });
        }
        let mut unlisted_known: Vec<Arc<str>> = known
            .list_keys()
            .into_iter()
            .filter(|key| !listed_keys.contains(&**key) && !newest.contains_key(key))
            .collect();
        unlisted_known.sort_unstable();
        for key in unlisted_known {
            tombstones.push(DeletedFinalStateUnknown {
                obj: known.get_by_key(&key),
                key: key.to_string(),
            });
        }
        drop(listed_keys);

        for tombstone in tombstones {
            state.push_object(DeltaType::Deleted, DeltaObject::from(tombstone));
        }
        let action = if self.emit_delta_type_replaced {
            DeltaType::Replaced
        } else {
            DeltaType::Sync
        };
        for (key, obj) in listed {
            state.push(Delta::new(action, obj), Some(key));
        }
    }
}

impl<K: CacheObject + Send + Sync> ReflectorStore<K> for RealFifo<K> {
    fn add(&self, obj: Arc<K>) {
        self.queue(DeltaType::Added, DeltaObject::Object(obj));
    }

    fn update(&self, obj: Arc<K>) {
        self.queue(DeltaType::Updated, DeltaObject::Object(obj));
    }

    /// Always queued, even for an object neither queued nor known: the RealFIFO does not second-
    /// guess the watch. A whole-list payload deletes nothing and is dropped.
    fn delete(&self, obj: DeltaObject<K>) -> bool {
        if obj.list().is_some() {
            return false;
        }
        self.queue(DeltaType::Deleted, obj);
        true
    }

    /// Per-object mode: tombstones, then `Replaced` per object (see the module docs). Atomic mode:
    /// one `ReplacedAll` carrying `resource_version` and the whole list.
    ///
    /// The first `replace` of a queue never populated sets the initial population to every delta
    /// queued at that point.
    fn replace(&self, list: Vec<Arc<K>>, resource_version: &str) {
        let mut state = self.lock();
        match &self.mode {
            Mode::PerObject { known } => self.replace_per_object(&mut state, known.as_ref(), list),
            Mode::Atomic => {
                let info = ListInfo {
                    resource_version: resource_version.to_owned(),
                    objects: list,
                };
                state.push(Delta::new(DeltaType::ReplacedAll, info), None);
            }
        }
        if !state.populated {
            state.populated = true;
            state.initial_population_count = state.items.len();
        }
        self.wake(&state);
    }

    /// Per-object mode: a `Sync` for every known object whose key has nothing queued (the known
    /// object is older than what is queued; syncing it would deliver a stale state after a newer
    /// one), in key order. Atomic mode: one `SyncAll`.
    fn resync(&self) -> usize {
        let known = match &self.mode {
            Mode::PerObject { known } => known,
            Mode::Atomic => {
                self.queue_whole_list(
                    DeltaType::SyncAll,
                    ListInfo {
                        resource_version: String::new(),
                        objects: Vec::new(),
                    },
                );
                return 1;
            }
        };
        let mut state = self.lock();
        let queued: HashSet<Arc<str>> = state.items.iter().filter_map(|q| q.key.clone()).collect();
        let mut keys = known.list_keys();
        keys.retain(|key| !queued.contains(key));
        keys.sort_unstable();
        let mut synced = 0;
        for key in keys {
            if let Some(obj) = known.get_by_key(&key) {
                state.push(Delta::new(DeltaType::Sync, obj), Some(key));
                synced += 1;
            }
        }
        self.wake(&state);
        synced
    }

    /// Atomic mode: a `Bookmark` delta carrying `resource_version`. Per-object mode: nothing.
    fn bookmark(&self, resource_version: &str) {
        if self.is_atomic() {
            self.queue_whole_list(
                DeltaType::Bookmark,
                ListInfo {
                    resource_version: resource_version.to_owned(),
                    objects: Vec::new(),
                },
            );
        }
    }

    /// True once the first `replace` (or an earlier add/update/delete) happened and every delta
    /// the first `replace` queued has been popped and processed.
    fn has_synced(&self) -> bool {
        self.lock().has_synced()
    }

    fn is_drained(&self) -> bool {
        self.lock().items.is_empty()
    }
}

impl<K: CacheObject + Send + Sync> InformerQueue<K> for RealFifo<K> {
    fn kind(&self) -> QueueKind {
        if self.is_atomic() {
            QueueKind::Atomic
        } else {
            QueueKind::Real
        }
    }

    fn close(&self) {
        self.lock().closed = true;
        self.cond.notify_all();
    }

    fn is_closed(&self) -> bool {
        self.lock().closed
    }

    fn len(&self) -> usize {
        self.lock().items.len()
    }

    /// Nothing queued and no pop processing with the lock released: whoever sees the queue
    /// empty sees every popped batch processed (or in its consumer's hands).
    fn is_empty(&self) -> bool {
        let state = self.lock();
        state.items.is_empty() && !state.processing
    }

    /// `coalesced` is always zero: nothing is ever merged.
    fn stats(&self) -> QueueStats {
        self.stats_locked(&self.lock())
    }

    /// Takes one delta when `max` is 1 (client-go's `Pop`), or up to `max` consecutive deltas of
    /// distinct keys (client-go's `PopBatch`); a whole-list delta is always taken alone.
    fn pop_batch(
        &self,
        max: usize,
        process: &mut dyn FnMut(&Deltas<K>, bool),
    ) -> Option<PoppedDeltas<K>> {
        let mut state = self.lock();
        while state.items.is_empty() && !state.closed {
            state.waiters += 1;
            state = self.cond.wait(state).unwrap_or_else(|e| e.into_inner());
            state.waiters -= 1;
        }
        self.pop_locked(state, max, process)
    }

    fn try_pop_batch(
        &self,
        max: usize,
        process: &mut dyn FnMut(&Deltas<K>, bool),
    ) -> Option<PoppedDeltas<K>> {
        self.pop_locked(self.lock(), max, process)
    }
}

#[cfg(test)]
#[path = "real_fifo_tests.rs"]
mod tests;
