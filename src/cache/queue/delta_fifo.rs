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
//!
//! ## Memory per queued key
//! A list of a million objects queues a million keys before the consumer pops the first, so a
//! queued key's cost is a large informer's peak. client-go keeps a map of key strings to `Deltas`
//! and a slice of the keys; here a key is not stored at all: client-go's `Pop` is the only place a
//! key leaves `items`, from the front of `queue`, so the queue of entries is the table's slab (an
//! entry's id is its place counted from the front's id) and a `hashbrown::HashTable` of 4-byte ids
//! finds a key by hashing the key computed from the entry's newest delta, as `KeyOf` does. An entry
//! is 24 bytes with one delta of an object inline; `pop` builds the key it hands out. About 35 B
//! per key at a million (the entry, and ~10 B of index: 5 B a bucket, 2^21 buckets), where the map
//! of 57-byte buckets and its keys' and `Vec`s' blocks took ~240.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::convert::Infallible;
use std::fmt;
use std::hash::BuildHasher;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::cache::key::{CacheObject, write_object_key};
use hashbrown::hash_table::Entry;
use hashbrown::{DefaultHashBuilder, HashTable};

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

/// A queued key: its deltas and when it entered the queue. 24 bytes, the whole cost of a queued
/// key beside the index's 4-byte id: no key string is kept, the key is computed from the newest
/// delta's object when needed (client-go's `KeyOf` on the newest delta, as `AddIfNotPresent` does).
struct Queued<K> {
    deltas: Pending<K>,
    /// When the key entered the queue, in nanoseconds after [`State::epoch`] (an `Instant` is 16
    /// bytes).
    enqueued_at: u64,
}

/// A queued key's deltas, oldest first, never empty. One delta carrying an object is kept inline:
/// most queued keys hold one (a list's objects, a watch event for a key not queued yet), and a
/// `Vec` of one would be a heap block of its own. 16 bytes.
enum Pending<K> {
    /// One delta carrying an object.
    Object(DeltaType, Arc<K>),
    /// One delta of another payload (a tombstone).
    Other(Box<Delta<K>>),
    /// Several deltas (or what a dedup left of them).
    Many(Box<Deltas<K>>),
}

impl<K> Pending<K> {
    fn new(delta: Delta<K>) -> Self {
        match delta.object {
            DeltaObject::Object(obj) => Pending::Object(delta.type_, obj),
            object => Pending::Other(Box::new(Delta {
                type_: delta.type_,
                object,
            })),
        }
    }

    /// The deltas as they are (a requeued batch, already deduplicated); `None` if empty.
    fn from_deltas(deltas: Deltas<K>) -> Option<Self> {
        match deltas.len() {
            0 => None,
            1 => deltas.into_vec().pop().map(Pending::new),
            _ => Some(Pending::Many(Box::new(deltas))),
        }
    }

    /// Appends `delta`, collapsing two deletions as client-go's `dedupDeltas`.
    fn push(&mut self, delta: Delta<K>) {
        if let Pending::Many(deltas) = self {
            deltas.push_deduped(delta);
            return;
        }
        // The single delta is copied out (its object is shared, not cloned).
        let mut deltas = self.to_deltas();
        deltas.push_deduped(delta);
        *self = Pending::Many(Box::new(deltas));
    }

    fn into_deltas(self) -> Deltas<K> {
        match self {
            Pending::Object(type_, obj) => Deltas::new(vec![Delta::new(type_, obj)]),
            Pending::Other(delta) => Deltas::new(vec![*delta]),
            Pending::Many(deltas) => *deltas,
        }
    }

    fn to_deltas(&self) -> Deltas<K> {
        match self {
            Pending::Object(type_, obj) => Deltas::new(vec![Delta::new(*type_, obj.clone())]),
            Pending::Other(delta) => Deltas::new(vec![(**delta).clone()]),
            Pending::Many(deltas) => (**deltas).clone(),
        }
    }

    /// The newest delta's object, or the object its tombstone carries.
    fn newest_object(&self) -> Option<&Arc<K>> {
        match self {
            Pending::Object(_, obj) => Some(obj),
            Pending::Other(delta) => delta.object.object(),
            Pending::Many(deltas) => deltas.newest().and_then(|d| d.object.object()),
        }
    }

    /// Heap bytes held beside the entry (none for one delta of an object), without the objects.
    #[cfg(test)]
    fn heap_bytes(&self) -> usize {
        match self {
            Pending::Object(..) => 0,
            Pending::Other(_) => size_of::<Delta<K>>(),
            Pending::Many(deltas) => size_of::<Deltas<K>>() + deltas.len() * size_of::<Delta<K>>(),
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        match self {
            Pending::Many(deltas) => deltas.len(),
            _ => 1,
        }
    }
}

impl<K: CacheObject> Pending<K> {
    /// The key the deltas are queued under: the newest delta's.
    fn write_key(&self, buf: &mut String) {
        match self {
            Pending::Object(_, obj) => write_object_key(obj.as_ref(), buf),
            Pending::Other(delta) => delta.object.write_key(buf),
            Pending::Many(deltas) => match deltas.newest() {
                Some(newest) => newest.object.write_key(buf),
                None => buf.clear(),
            },
        }
    }

    /// Whether [`write_key`](Self::write_key) would write `key`, without writing it.
    fn has_key(&self, key: &str) -> bool {
        match self {
            Pending::Object(_, obj) => object_has_key(obj.as_ref(), key),
            Pending::Other(delta) => payload_has_key(&delta.object, key),
            Pending::Many(deltas) => deltas
                .newest()
                .is_some_and(|newest| payload_has_key(&newest.object, key)),
        }
    }
}

/// Whether `obj`'s store key ([`write_object_key`]) is `key`, compared in place.
fn object_has_key<K: CacheObject>(obj: &K, key: &str) -> bool {
    let name = obj.key_name().unwrap_or_default();
    match obj.key_namespace().filter(|ns| !ns.is_empty()) {
        Some(ns) => {
            key.len() == ns.len() + 1 + name.len()
                && key.starts_with(ns)
                && key.as_bytes()[ns.len()] == b'/'
                && key.ends_with(name)
        }
        None => key == name,
    }
}

/// Whether `payload`'s key ([`DeltaObject::key`]) is `key`.
fn payload_has_key<K: CacheObject>(payload: &DeltaObject<K>, key: &str) -> bool {
    match payload {
        DeltaObject::Object(obj) => object_has_key(obj.as_ref(), key),
        DeltaObject::Tombstone(t) => t.key == key,
        DeltaObject::List(_) => key.is_empty(),
    }
}

/// The keys of the entries of one `replace` list, by queue position.
struct Listed(Vec<u64>);

impl Listed {
    fn new(positions: usize) -> Self {
        Listed(vec![0; positions.div_ceil(64)])
    }

    fn insert(&mut self, pos: usize) {
        self.0[pos / 64] |= 1 << (pos % 64);
    }

    fn contains(&self, pos: usize) -> bool {
        self.0
            .get(pos / 64)
            .is_some_and(|w| w & (1 << (pos % 64)) != 0)
    }

    fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }
}

struct State<K> {
    /// The queued keys in FIFO order of first enqueue, each with its Deltas. A key leaves only
    /// by `pop`, from the front (client-go's `Pop` is the only `delete(f.items, id)`), so the
    /// queue is also the table's slab: the entry with id `i` is at position `i - head`.
    queue: VecDeque<Queued<K>>,
    /// Id of the front entry; ids count enqueued keys, wrapping (a queue holds fewer than 2^32).
    head: u32,
    /// The id of every queued key, hashed by the key; each key once, as in client-go's `items`.
    index: HashTable<u32>,
    hasher: DefaultHashBuilder,
    /// Origin of the entries' `enqueued_at`.
    epoch: Instant,
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
    fn new() -> Self {
        State {
            queue: VecDeque::new(),
            head: 0,
            index: HashTable::new(),
            hasher: DefaultHashBuilder::default(),
            epoch: Instant::now(),
            populated: false,
            initial_population_count: 0,
            closed: false,
            waiters: 0,
            coalesced: 0,
            peak_len: 0,
            key_buf: String::new(),
        }
    }

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

    /// Heap bytes the queue holds for its keys, without the objects (nor the tombstones' keys).
    #[cfg(test)]
    fn footprint(&self) -> usize {
        self.queue.capacity() * size_of::<Queued<K>>()
            + self.index.allocation_size()
            + self
                .queue
                .iter()
                .map(|q| q.deltas.heap_bytes())
                .sum::<usize>()
    }

    /// Position in `queue` of the entry with id `id`.
    fn position(&self, id: u32) -> usize {
        id.wrapping_sub(self.head) as usize
    }

    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn instant(&self, enqueued_at: u64) -> Instant {
        self.epoch + Duration::from_nanos(enqueued_at)
    }
}

impl<K: CacheObject> State<K> {
    fn hash(&self, key: &str) -> u64 {
        self.hasher.hash_one(key)
    }

    /// Position of `key`'s entry, if it is queued.
    fn find(&self, key: &str) -> Option<usize> {
        let id = self.index.find(self.hash(key), |&id| {
            self.queue[self.position(id)].deltas.has_key(key)
        })?;
        Some(self.position(*id))
    }

    /// Room for `additional` more keys without growing the queue or the index.
    fn reserve(&mut self, additional: usize) {
        self.queue.reserve(additional);
        let (index, entries) = self.index_and_entries();
        index.reserve(additional, |&id| entries.hash(id));
    }

    /// The index, and the entries its ids stand for as its closures read them: split, so that
    /// the index can change while they read the queue.
    fn index_and_entries(&mut self) -> (&mut HashTable<u32>, Entries<'_, K>) {
        let State {
            queue,
            head,
            index,
            hasher,
            ..
        } = self;
        (index, Entries::new(queue, *head, hasher))
    }

    /// Finds `key`'s entry; when it is not queued, indexes the id of the entry that
    /// [`push_back`](State::push_back) appends next, which the caller then pushes before anything
    /// can rehash the index (a rehash reads the entry behind each id).
    fn find_or_index(&mut self, key: &str) -> Found {
        let hash = self.hash(key);
        let (index, entries) = self.index_and_entries();
        match index.entry(hash, |&id| entries.has_key(id, key), |&id| entries.hash(id)) {
            Entry::Occupied(entry) => Found::Queued(entries.position(*entry.get())),
            Entry::Vacant(entry) => {
                entry.insert(entries.next_id());
                Found::Indexed
            }
        }
    }

    /// Appends a delta to `key`'s Deltas, queueing the key if it is new (client-go's
    /// `queueActionLocked`). Returns the position of the key's entry.
    fn queue_action(&mut self, key: &str, delta: Delta<K>) -> usize {
        match self.find_or_index(key) {
            Found::Queued(pos) => {
                self.queue[pos].deltas.push(delta);
                self.coalesced += 1;
                pos
            }
            Found::Indexed => self.push_back(Pending::new(delta)),
        }
    }

    /// Queues `object` under its own key.
    fn queue_object(&mut self, type_: DeltaType, object: DeltaObject<K>) -> usize {
        let mut key = std::mem::take(&mut self.key_buf);
        object.write_key(&mut key);
        let pos = self.queue_action(&key, Delta { type_, object });
        self.key_buf = key;
        pos
    }

    /// Appends an entry whose id is already in the index.
    fn push_back(&mut self, deltas: Pending<K>) -> usize {
        let enqueued_at = self.now();
        self.queue.push_back(Queued {
            deltas,
            enqueued_at,
        });
        self.peak_len = self.peak_len.max(self.queue.len());
        self.queue.len() - 1
    }

    /// Takes the front entry out of the queue and the index; returns it with its key.
    fn pop_front(&mut self) -> Option<(Arc<str>, Queued<K>)> {
        let queued = self.queue.pop_front()?;
        let mut key = std::mem::take(&mut self.key_buf);
        queued.deltas.write_key(&mut key);
        let hash = self.hash(&key);
        let head = self.head;
        if let Ok(entry) = self.index.find_entry(hash, |&id| id == head) {
            entry.remove();
        }
        self.head = head.wrapping_add(1);
        let shared = Arc::from(key.as_str());
        self.key_buf = key;
        Some((shared, queued))
    }

    /// Gives back most of the queue's and the index's room once the queue has drained to an
    /// eighth of the index. A list of a million objects grows them to ~35 MB, which would
    /// otherwise stay allocated while the consumer builds its Indexer beside them. Twice what is
    /// left then needs at most a quarter of the index (at a quarter, the power of two rounding
    /// could make the new index as large as the old, both held while rehashing). Rehashing an
    /// eighth of the keys at most keeps pops O(1) amortized, and a queue that grows again has
    /// room for as many again.
    fn shrink_as_drained(&mut self) {
        /// Tables this small are not worth rehashing.
        const SMALL: usize = 1024;
        let len = self.queue.len();
        if self.index.capacity() > SMALL && len < self.index.capacity() / 8 {
            self.queue.shrink_to(2 * len);
            let (index, entries) = self.index_and_entries();
            index.shrink_to(2 * len, |&id| entries.hash(id));
        }
    }

    fn add_if_not_present(&mut self, key: &str, deltas: Deltas<K>) -> bool {
        self.populated = true;
        let Some(pending) = Pending::from_deltas(deltas) else {
            return false;
        };
        match self.find_or_index(key) {
            Found::Queued(_) => false,
            Found::Indexed => {
                self.push_back(pending);
                true
            }
        }
    }
}

/// What [`State::find_or_index`] found.
enum Found {
    /// The key's entry, at this position.
    Queued(usize),
    /// None: the id of the entry to push next is in the index.
    Indexed,
}

/// The id of the entry that will be at `position`.
fn next_id(head: u32, position: usize) -> u32 {
    // A queue of 2^32 keys would hold 96 GiB of entries alone.
    let position = u32::try_from(position).expect("fewer than 2^32 queued keys");
    head.wrapping_add(position)
}

/// The queued entries as the index's ids name them. Each key is computed from the entry's
/// deltas when it is compared or hashed: in lookups, and as the index grows or shrinks (a key per
/// entry moved).
struct Entries<'a, K> {
    queue: &'a VecDeque<Queued<K>>,
    head: u32,
    hasher: &'a DefaultHashBuilder,
    buf: RefCell<String>,
}

impl<'a, K: CacheObject> Entries<'a, K> {
    fn new(queue: &'a VecDeque<Queued<K>>, head: u32, hasher: &'a DefaultHashBuilder) -> Self {
        Entries {
            queue,
            head,
            hasher,
            buf: RefCell::new(String::new()),
        }
    }

    /// Position in the queue of the entry with id `id`.
    fn position(&self, id: u32) -> usize {
        id.wrapping_sub(self.head) as usize
    }

    /// The id of the entry pushed next.
    fn next_id(&self) -> u32 {
        next_id(self.head, self.queue.len())
    }

    fn has_key(&self, id: u32, key: &str) -> bool {
        self.queue[self.position(id)].deltas.has_key(key)
    }

    fn hash(&self, id: u32) -> u64 {
        let mut buf = self.buf.borrow_mut();
        self.queue[self.position(id)].deltas.write_key(&mut buf);
        self.hasher.hash_one(buf.as_str())
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
