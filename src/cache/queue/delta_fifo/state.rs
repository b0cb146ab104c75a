//! The DeltaFIFO's state behind its lock: the queue of entries, which is also the slab of a
//! key-less hash table ([`State::index`]), and the bookkeeping `has_synced` and the counters read.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::hash::BuildHasher;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hashbrown::hash_table::Entry;
use hashbrown::{DefaultHashBuilder, HashTable};

use super::pending::{Pending, Queued};
use crate::cache::delta::{Delta, DeltaObject, DeltaType, Deltas};
use crate::cache::key::CacheObject;
use crate::cache::queue::QueueStats;

/// The keys of the entries of one `replace` list, by queue position.
pub(super) struct Listed(Vec<u64>);

impl Listed {
    pub(super) fn new(positions: usize) -> Self {
        Listed(vec![0; positions.div_ceil(64)])
    }

    pub(super) fn insert(&mut self, pos: usize) {
        self.0[pos / 64] |= 1 << (pos % 64);
    }

    pub(super) fn contains(&self, pos: usize) -> bool {
        self.0
            .get(pos / 64)
            .is_some_and(|w| w & (1 << (pos % 64)) != 0)
    }

    pub(super) fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }
}

pub(super) struct State<K> {
    /// The queued keys in FIFO order of first enqueue, each with its Deltas. A key leaves only
    /// by `pop`, from the front (client-go's `Pop` is the only `delete(f.items, id)`), so the
    /// queue is also the table's slab: the entry with id `i` is at position `i - head`.
    pub(super) queue: VecDeque<Queued<K>>,
    /// Id of the front entry; ids count enqueued keys, wrapping (a queue holds fewer than 2^32).
    pub(super) head: u32,
    /// The id of every queued key, hashed by the key; each key once, as in client-go's `items`.
    pub(super) index: HashTable<u32>,
    pub(super) hasher: DefaultHashBuilder,
    /// Origin of the entries' `enqueued_at`.
    pub(super) epoch: Instant,
    /// True once anything was added, updated, deleted or requeued, or the first `replace` ran.
    pub(super) populated: bool,
    /// Batches of the first `replace` not yet popped; `has_synced` once zero and `populated`.
    pub(super) initial_population_count: usize,
    /// Set by `close`; `pop` then drains the queue and reports `Closed`.
    pub(super) closed: bool,
    /// Threads blocked in `pop`; lets mutations skip the condvar wake-up when nobody waits.
    pub(super) waiters: usize,
    pub(super) coalesced: u64,
    pub(super) peak_len: usize,
    /// Reused buffer for computing keys without allocating per delta.
    pub(super) key_buf: String,
}

impl<K> State<K> {
    pub(super) fn new() -> Self {
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

    pub(super) fn stats(&self) -> QueueStats {
        QueueStats {
            len: self.queue.len(),
            peak_len: self.peak_len,
            coalesced: self.coalesced,
            dropped: 0,
            populated: self.populated,
            synced: self.has_synced(),
        }
    }

    pub(super) fn has_synced(&self) -> bool {
        self.populated && self.initial_population_count == 0
    }

    /// Heap bytes the queue holds for its keys, without the objects (nor the tombstones' keys).
    #[cfg(test)]
    pub(super) fn footprint(&self) -> usize {
        self.queue.capacity() * size_of::<Queued<K>>()
            + self.index.allocation_size()
            + self
                .queue
                .iter()
                .map(|q| q.deltas.heap_bytes())
                .sum::<usize>()
    }

    /// Position in `queue` of the entry with id `id`.
    pub(super) fn position(&self, id: u32) -> usize {
        id.wrapping_sub(self.head) as usize
    }

    pub(super) fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    pub(super) fn instant(&self, enqueued_at: u64) -> Instant {
        self.epoch + Duration::from_nanos(enqueued_at)
    }
}

impl<K: CacheObject> State<K> {
    pub(super) fn hash(&self, key: &str) -> u64 {
        self.hasher.hash_one(key)
    }

    /// Position of `key`'s entry, if it is queued.
    pub(super) fn find(&self, key: &str) -> Option<usize> {
        let id = self.index.find(self.hash(key), |&id| {
            self.queue[self.position(id)].deltas.has_key(key)
        })?;
        Some(self.position(*id))
    }

    /// Room for `additional` more keys without growing the queue or the index.
    pub(super) fn reserve(&mut self, additional: usize) {
        self.queue.reserve(additional);
        let (index, entries) = self.index_and_entries();
        index.reserve(additional, |&id| entries.hash(id));
    }

    /// The index, and the entries its ids stand for as its closures read them: split, so that
    /// the index can change while they read the queue.
    pub(super) fn index_and_entries(&mut self) -> (&mut HashTable<u32>, Entries<'_, K>) {
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
    pub(super) fn find_or_index(&mut self, key: &str) -> Found {
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
    pub(super) fn queue_action(&mut self, key: &str, delta: Delta<K>) -> usize {
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
    pub(super) fn queue_object(&mut self, type_: DeltaType, object: DeltaObject<K>) -> usize {
        let mut key = std::mem::take(&mut self.key_buf);
        object.write_key(&mut key);
        let pos = self.queue_action(&key, Delta { type_, object });
        self.key_buf = key;
        pos
    }

    /// Appends an entry whose id is already in the index.
    pub(super) fn push_back(&mut self, deltas: Pending<K>) -> usize {
        let enqueued_at = self.now();
        self.queue.push_back(Queued {
            deltas,
            enqueued_at,
        });
        self.peak_len = self.peak_len.max(self.queue.len());
        self.queue.len() - 1
    }

    /// Takes the front entry out of the queue and the index; returns it with its key.
    pub(super) fn pop_front(&mut self) -> Option<(Arc<str>, Queued<K>)> {
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
    pub(super) fn shrink_as_drained(&mut self) {
        /// Tables this small are not worth rehashing.
        const SMALL: usize = 1024;
        let len = self.queue.len();
        if self.index.capacity() > SMALL && len < self.index.capacity() / 8 {
            self.queue.shrink_to(2 * len);
            let (index, entries) = self.index_and_entries();
            index.shrink_to(2 * len, |&id| entries.hash(id));
        }
    }

    pub(super) fn add_if_not_present(&mut self, key: &str, deltas: Deltas<K>) -> bool {
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
pub(super) enum Found {
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
pub(super) struct Entries<'a, K> {
    queue: &'a VecDeque<Queued<K>>,
    head: u32,
    hasher: &'a DefaultHashBuilder,
    buf: RefCell<String>,
}

impl<'a, K: CacheObject> Entries<'a, K> {
    pub(super) fn new(
        queue: &'a VecDeque<Queued<K>>,
        head: u32,
        hasher: &'a DefaultHashBuilder,
    ) -> Self {
        Entries {
            queue,
            head,
            hasher,
            buf: RefCell::new(String::new()),
        }
    }

    /// Position in the queue of the entry with id `id`.
    pub(super) fn position(&self, id: u32) -> usize {
        id.wrapping_sub(self.head) as usize
    }

    /// The id of the entry pushed next.
    pub(super) fn next_id(&self) -> u32 {
        next_id(self.head, self.queue.len())
    }

    pub(super) fn has_key(&self, id: u32, key: &str) -> bool {
        self.queue[self.position(id)].deltas.has_key(key)
    }

    pub(super) fn hash(&self, id: u32) -> u64 {
        let mut buf = self.buf.borrow_mut();
        self.queue[self.position(id)].deltas.write_key(&mut buf);
        self.hasher.hash_one(buf.as_str())
    }
}
