//! The Indexer: client-go's `threadSafeStore` with named indices, maintained incrementally.
//!
//! One writer and many readers, as types: the [`Indexer`] is the cache's only writer and is not
//! `Clone`; its writes take `&mut self`, so whoever owns it (an informer's consumer, which applies
//! each popped batch with [`process_deltas`](crate::cache::process_deltas)) writes alone, which the
//! compiler checks. Everyone else holds an [`IndexerReader`] obtained from it: a cheap, cloneable
//! handle on the same content (queries, renderers, the queue's known-objects checks, a shared
//! informer's late handlers). Both sides meet at one `RwLock`: a reader sees each write whole.
//!
//! This is kube-runtime's `reflector::store::{Writer, Store}` split. client-go differs on
//! purpose: its informer's `GetIndexer()` returns the writable `Indexer` to anyone, and "the
//! consumer is its only writer" is a convention there.
//!
//! No key is kept per object. client-go's `threadSafeStore` maps key → object
//! (`items map[string]interface{}`, `thread_safe_store.go`), and its `Add(key, obj)` takes the
//! key, but its only callers, the `cache.Store` methods in `store.go`, pass `keyFunc(obj)`; here
//! every write computes the key from the object too, so the key can always be computed again.
//! Objects sit in a slab of slots and a hash table of slot numbers finds them, hashing and
//! comparing keys from the objects' namespace and name ([`KeyParts`]): about 18 bytes per object
//! for a table sized once for its list ([`Indexer::reserve`]), where a map from key strings cost
//! ~125 at a million objects (each key a 48-byte allocation, 24-byte buckets and 24-byte slots).
//! Keys are built only for the APIs that hand them out ([`list_keys`](IndexerReader::list_keys),
//! [`index_keys`](IndexerReader::index_keys), [`entries`](IndexerReader::entries) and the
//! [`KnownObjects`] a queue lists on a relist or resync).

use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::cache::key::CacheObject;
use hashbrown::hash_map::EntryRef;
use hashbrown::hash_table::Entry;
use hashbrown::{DefaultHashBuilder, HashMap, HashSet, HashTable};
use smallvec::SmallVec;

use super::key_parts::{KeyParts, hash_key};
use super::known_objects::KnownObjects;
use crate::cache::delta::DeltaObject;
use crate::cache::key::write_object_key;

/// The values under which an object is indexed; none means "not in this index". Values borrowed
/// from the object cost nothing to look up; only a value the index has never seen is copied. Most
/// index functions return one value, which is stored inline: no allocation per call.
pub type IndexValues<'a> = SmallVec<[Cow<'a, str>; 1]>;

/// Computes the values under which an object is indexed (client-go's `IndexFunc`).
pub type IndexFunc<K> = Arc<dyn for<'a> Fn(&'a K) -> IndexValues<'a> + Send + Sync>;

/// Wraps a closure as an [`IndexFunc`]; the bound lets the closure's borrowed return type be
/// inferred.
///
/// ```
/// use std::borrow::Cow;
/// use k8s_openapi::api::core::v1::Pod;
/// use kubectl_deltas::cache::{Indexer, index_func};
///
/// let by_node = index_func(|pod: &Pod| {
///     let node = pod.spec.as_ref().and_then(|s| s.node_name.as_deref());
///     node.map(Cow::Borrowed).into_iter().collect()
/// });
/// let mut indexer = Indexer::<Pod>::new();
/// indexer.add_indexer("node", by_node).unwrap();
/// ```
pub fn index_func<K, F>(f: F) -> IndexFunc<K>
where
    F: for<'a> Fn(&'a K) -> IndexValues<'a> + Send + Sync + 'static,
{
    Arc::new(f)
}

/// Slot of an object in the store. Indices hold slots rather than keys: four bytes that hash without
/// following a pointer, which keeps large indices compact and cheap to grow.
type Slot = u32;

/// One index: indexed value → slots of the objects having that value.
type Index = HashMap<String, HashSet<Slot>>;

/// An index function with the index it maintains.
struct NamedIndex<K> {
    func: IndexFunc<K>,
    /// A slot is under a value iff `func` returns that value for the slot's current object; a value
    /// with no slots is removed, never left empty.
    index: Index,
}

/// Errors of index queries.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndexerError {
    /// The query named an index that was never added.
    #[error("index {name:?} does not exist (known indices: {})", known_list(.known))]
    UnknownIndex {
        /// The name asked for.
        name: String,
        /// The indices that exist, sorted.
        known: Vec<String>,
    },
    /// `add_indexer` was given a name already in use.
    #[error("index {0:?} already exists")]
    DuplicateIndex(String),
}

fn known_list(known: &[String]) -> String {
    if known.is_empty() {
        "none".to_owned()
    } else {
        known.join(", ")
    }
}

struct State<K> {
    /// The occupied slots, found by the key of the object in each, which is hashed and compared
    /// from the object's parts ([`KeyParts`]), never stored. Holds every occupied slot once and no
    /// vacant one; no two of its slots hold objects with the same key.
    table: HashTable<Slot>,
    /// Hashes keys for `table`, from a key string ([`hash_key`]) or from an object's parts alike.
    hasher: DefaultHashBuilder,
    /// slot → object, each stored under its own key; `None` exactly for the slots listed in
    /// `free`.
    slots: Vec<Option<Arc<K>>>,
    /// Vacated slots, reused before the vector grows.
    free: Vec<Slot>,
    /// index name → function and index. Kept together so that an update walks them without
    /// looking names up.
    indices: HashMap<String, NamedIndex<K>>,
}

thread_local! {
    /// Reused buffer for computing a key before it is known whether the store already has it.
    static KEY_BUF: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// A thread-safe object store with named indices (client-go's `cache.Indexer`): the writing side,
/// owned by the cache's one writer.
///
/// Not `Clone`, and every write takes `&mut self`: there is one writer, and it writes alone.
/// Register the indices ([`add_indexer`](Indexer::add_indexer)) before handing it to the
/// consumer, and hand everyone else an [`IndexerReader`] ([`reader`](Indexer::reader)). The
/// writer reads as its readers do (it dereferences to one), seeing its own writes at once.
///
/// A reader cannot write:
///
/// ```compile_fail,E0599
/// use std::sync::Arc;
/// use k8s_openapi::api::core::v1::Pod;
/// use kubectl_deltas::cache::Indexer;
///
/// let indexer = Indexer::<Pod>::new();
/// let reader = indexer.reader();
/// reader.add(Arc::new(Pod::default())); // no method `add` on `IndexerReader`
/// ```
///
/// and neither can a second holder of the writer, which only borrows it:
///
/// ```compile_fail,E0596
/// use std::sync::Arc;
/// use k8s_openapi::api::core::v1::Pod;
/// use kubectl_deltas::cache::Indexer;
///
/// fn write_through_a_share(indexer: &Indexer<Pod>) {
///     indexer.add(Arc::new(Pod::default())); // `indexer` is a `&` reference
/// }
/// ```
pub struct Indexer<K> {
    /// The handle the writer reads through and hands out copies of.
    reader: IndexerReader<K>,
}

/// A read-only handle on an [`Indexer`]'s content: cheap to clone (one reference count), and
/// every clone sees the writer's changes as they are made (kube-runtime's `Store`).
///
/// What an informer gives everyone but its consumer
/// ([`Informer::indexer`](crate::cache::Informer::indexer)), where client-go's `GetIndexer()` hands out
/// the writable store itself. It is the [`KnownObjects`] a queue consults.
pub struct IndexerReader<K> {
    state: Arc<RwLock<State<K>>>,
}

impl<K> Clone for IndexerReader<K> {
    fn clone(&self) -> Self {
        IndexerReader {
            state: self.state.clone(),
        }
    }
}

impl<K> Default for Indexer<K> {
    fn default() -> Self {
        Indexer {
            reader: IndexerReader {
                state: Arc::new(RwLock::new(State {
                    table: HashTable::new(),
                    hasher: DefaultHashBuilder::default(),
                    slots: Vec::new(),
                    free: Vec::new(),
                    indices: HashMap::default(),
                })),
            },
        }
    }
}

impl<K> fmt::Debug for Indexer<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.reader.debug_as("Indexer", f)
    }
}

impl<K> fmt::Debug for IndexerReader<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.debug_as("IndexerReader", f)
    }
}

impl<K> std::ops::Deref for Indexer<K> {
    type Target = IndexerReader<K>;

    fn deref(&self) -> &IndexerReader<K> {
        &self.reader
    }
}

impl<K> Indexer<K> {
    /// An empty store without indices.
    pub fn new() -> Self {
        Self::default()
    }

    /// A read-only handle on this store, for anyone but the writer.
    pub fn reader(&self) -> IndexerReader<K> {
        self.reader.clone()
    }

    fn write(&mut self) -> RwLockWriteGuard<'_, State<K>> {
        // See `IndexerReader::read` on poisoning.
        self.reader.state.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a named index and indexes the objects already stored (newer client-go allows adding
    /// indexers to a running store; so does the writer here, which is why readers cannot).
    pub fn add_indexer(
        &mut self,
        name: impl Into<String>,
        func: IndexFunc<K>,
    ) -> Result<(), IndexerError> {
        let name = name.into();
        let mut guard = self.write();
        let state = &mut *guard;
        if state.indices.contains_key(&name) {
            return Err(IndexerError::DuplicateIndex(name));
        }
        let mut index = Index::default();
        for (slot, obj) in state.slots.iter().enumerate() {
            if let Some(obj) = obj {
                for value in func(obj) {
                    insert_slot(&mut index, value, slot as Slot);
                }
            }
        }
        state.indices.insert(name, NamedIndex { func, index });
        Ok(())
    }
}

impl<K> IndexerReader<K> {
    // A panic while holding the lock cannot leave the maps half-updated in a way later readers would
    // trip over (each mutation is a few map operations), so a poisoned lock is still usable.
    fn read(&self) -> RwLockReadGuard<'_, State<K>> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    fn debug_as(&self, name: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.read();
        f.debug_struct(name)
            .field("items", &state.table.len())
            .field("indices", &state.indices.keys().collect::<Vec<_>>())
            .finish()
    }

    /// Number of objects stored.
    pub fn len(&self) -> usize {
        self.read().table.len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.read().table.is_empty()
    }

    /// How many objects the store can hold before its table or slots grow (see
    /// [`Indexer::reserve`]).
    pub fn capacity(&self) -> usize {
        let state = self.read();
        state.table.capacity().min(state.slots.capacity())
    }

    /// Every object, in no particular order.
    pub fn list(&self) -> Vec<Arc<K>> {
        self.read().objects().cloned().collect()
    }

    /// Names of the indices, sorted.
    pub fn index_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.read().indices.keys().cloned().collect();
        names.sort_unstable();
        names
    }

    /// The values `obj` has under index `name` (what the index function returns for it).
    pub fn index_values(&self, name: &str, obj: &K) -> Result<Vec<String>, IndexerError> {
        let state = self.read();
        let values = (state.named(name)?.func)(obj);
        Ok(values.into_iter().map(Cow::into_owned).collect())
    }

    /// Every value present in index `name` with the number of objects under it, sorted by value
    /// (client-go's `ListIndexFuncValues`, plus the counts a listing needs anyway).
    pub fn index_value_counts(&self, name: &str) -> Result<Vec<(String, usize)>, IndexerError> {
        let state = self.read();
        let mut values: Vec<(String, usize)> = state
            .named(name)?
            .index
            .iter()
            .map(|(v, slots)| (v.clone(), slots.len()))
            .collect();
        values.sort_unstable();
        Ok(values)
    }

    /// Every value present in index `name`, sorted (client-go's `ListIndexFuncValues`).
    pub fn list_index_func_values(&self, name: &str) -> Result<Vec<String>, IndexerError> {
        Ok(self
            .index_value_counts(name)?
            .into_iter()
            .map(|(v, _)| v)
            .collect())
    }
}

impl<K: CacheObject> IndexerReader<K> {
    /// The object stored under `key`.
    pub fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        let state = self.read();
        state.find(key).map(|slot| state.object(slot).clone())
    }

    /// Every object, sorted by key.
    pub fn list_by_key(&self) -> Vec<Arc<K>> {
        let state = self.read();
        let slots = state.occupied().collect();
        state.sorted_by_key(slots, |_, obj| obj.clone())
    }

    /// Every key, sorted.
    pub fn list_keys(&self) -> Vec<Arc<str>> {
        let mut keys: Vec<Arc<str>> = self
            .read()
            .objects()
            .map(|obj| KeyParts::of(obj.as_ref()).to_key())
            .collect();
        keys.sort_unstable();
        keys
    }

    /// Every `(key, object)` pair, sorted by key.
    pub fn entries(&self) -> Vec<(Arc<str>, Arc<K>)> {
        let state = self.read();
        let slots = state.occupied().collect();
        state.sorted_by_key(slots, |parts, obj| (parts.to_key(), obj.clone()))
    }

    /// Objects sharing any indexed value with `obj` under index `name`, sorted by key (client-go's
    /// `Index`).
    pub fn index(&self, name: &str, obj: &K) -> Result<Vec<Arc<K>>, IndexerError> {
        let state = self.read();
        let NamedIndex { func, index } = state.named(name)?;
        let mut slots: Vec<Slot> = func(obj)
            .iter()
            .filter_map(|value| index.get(value.as_ref()))
            .flatten()
            .copied()
            .collect();
        slots.sort_unstable();
        slots.dedup();
        Ok(state.sorted_by_key(slots, |_, obj| obj.clone()))
    }

    /// Keys of the objects indexed under `value` in index `name`, sorted (client-go's `IndexKeys`).
    pub fn index_keys(&self, name: &str, value: &str) -> Result<Vec<Arc<str>>, IndexerError> {
        let state = self.read();
        let slots = state.slots_under(name, value)?;
        Ok(state.sorted_by_key(slots, |parts, _| parts.to_key()))
    }

    /// Objects indexed under `value` in index `name`, sorted by key (client-go's `ByIndex`).
    pub fn by_index(&self, name: &str, value: &str) -> Result<Vec<Arc<K>>, IndexerError> {
        let state = self.read();
        let slots = state.slots_under(name, value)?;
        Ok(state.sorted_by_key(slots, |_, obj| obj.clone()))
    }

    /// The object stored under the key of `obj`.
    pub fn get(&self, obj: &K) -> Option<Arc<K>> {
        KEY_BUF.with_borrow_mut(|key| {
            write_object_key(obj, key);
            self.get_by_key(key)
        })
    }
}

impl<K: CacheObject> Indexer<K> {
    /// Stores `obj` under its key, replacing any previous object and updating every index.
    pub fn add(&mut self, obj: Arc<K>) {
        self.upsert(obj);
    }

    /// Same as [`Indexer::add`]: the store does not distinguish (as in client-go).
    pub fn update(&mut self, obj: Arc<K>) {
        self.add(obj)
    }

    /// Removes the object (or the tombstone's key) and its index entries, returning what was
    /// stored. Deleting an absent key is a no-op.
    pub fn delete(&mut self, obj: &DeltaObject<K>) -> Option<Arc<K>> {
        KEY_BUF.with_borrow_mut(|key| {
            obj.write_key(key);
            self.delete_key(key)
        })
    }

    /// Removes the object stored under `key`, if any.
    pub fn delete_key(&mut self, key: &str) -> Option<Arc<K>> {
        self.write().remove(key)
    }

    /// Makes room for `additional` more objects at once, so that storing them does not grow the
    /// table and the slots step by step: each step holds the old allocation beside the new one,
    /// which for the initial list happens while the queue still holds most of it. An informer's
    /// consumer calls this on the first pop of its initial list.
    pub fn reserve(&mut self, additional: usize) {
        self.write().reserve(additional);
    }

    /// Replaces the whole content with `list`, rebuilding every index.
    pub fn replace(&mut self, list: impl IntoIterator<Item = Arc<K>>) {
        let mut guard = self.write();
        let state = &mut *guard;
        state.table.clear();
        state.slots.clear();
        state.free.clear();
        for named in state.indices.values_mut() {
            named.index.clear();
        }
        let list = list.into_iter();
        state.reserve(list.size_hint().0);
        let mut key = String::new();
        for obj in list {
            write_object_key(obj.as_ref(), &mut key);
            state.put(&key, obj);
        }
    }

    /// Stores `obj` and returns the object it replaced: client-go's `Get` + `Add`/`Update` under
    /// one lock, which is what `process_deltas` needs.
    pub(crate) fn upsert(&mut self, obj: Arc<K>) -> Option<Arc<K>> {
        KEY_BUF.with_borrow_mut(|key| {
            write_object_key(obj.as_ref(), key);
            self.write().put(key, obj)
        })
    }
}

/// The object in occupied slot `slot` (a free function, so that closures over `slots` can call it
/// while the table beside it is borrowed mutably).
fn stored<K>(slots: &[Option<Arc<K>>], slot: Slot) -> &Arc<K> {
    slots[slot as usize]
        .as_ref()
        .expect("invariant: every slot in `table` and the indices is occupied")
}

/// The table's equality: whether a slot holds the object stored under `key`.
fn holds<'a, K: CacheObject>(
    slots: &'a [Option<Arc<K>>],
    key: &'a str,
) -> impl Fn(&Slot) -> bool + 'a {
    move |&slot| KeyParts::of(stored(slots, slot).as_ref()).is(key)
}

/// The table's hasher, called when it grows: the hash of the key of the object in a slot,
/// computed from the object's parts.
fn rehash<'a, K: CacheObject>(
    slots: &'a [Option<Arc<K>>],
    hasher: &'a DefaultHashBuilder,
) -> impl Fn(&Slot) -> u64 + 'a {
    move |&slot| KeyParts::of(stored(slots, slot).as_ref()).hash(hasher)
}

impl<K> State<K> {
    fn object(&self, slot: Slot) -> &Arc<K> {
        stored(&self.slots, slot)
    }

    fn objects(&self) -> impl Iterator<Item = &Arc<K>> {
        self.slots.iter().flatten()
    }

    fn occupied(&self) -> impl Iterator<Item = Slot> + '_ {
        self.table.iter().copied()
    }

    fn named(&self, name: &str) -> Result<&NamedIndex<K>, IndexerError> {
        self.indices.get(name).ok_or_else(|| {
            let mut known: Vec<String> = self.indices.keys().cloned().collect();
            known.sort_unstable();
            IndexerError::UnknownIndex {
                name: name.to_owned(),
                known,
            }
        })
    }

    fn slots_under(&self, name: &str, value: &str) -> Result<Vec<Slot>, IndexerError> {
        let index = &self.named(name)?.index;
        Ok(index
            .get(value)
            .map(|slots| slots.iter().copied().collect())
            .unwrap_or_default())
    }

    /// Bytes the store's own tables hold (the table, slots and free list; not the objects nor the
    /// indices).
    #[cfg(test)]
    fn footprint(&self) -> usize {
        self.table.allocation_size()
            + self.slots.capacity() * std::mem::size_of::<Option<Arc<K>>>()
            + self.free.capacity() * std::mem::size_of::<Slot>()
    }
}

impl<K: CacheObject> State<K> {
    /// Panics unless the fields' invariants hold: every slot is occupied or free, not both; the
    /// table holds each occupied slot once, found by its object's key; each index holds a slot
    /// under exactly the values its function gives the slot's object.
    #[cfg(test)]
    fn check_invariants(&self) {
        let occupied: HashSet<Slot> = self.table.iter().copied().collect();
        let free: HashSet<Slot> = self.free.iter().copied().collect();
        assert_eq!(
            occupied.len(),
            self.table.len(),
            "a slot twice in the table"
        );
        assert_eq!(free.len(), self.free.len(), "a slot twice in the free list");
        assert_eq!(occupied.len() + free.len(), self.slots.len());
        for (slot, obj) in self.slots.iter().enumerate() {
            let slot = slot as Slot;
            assert_eq!(obj.is_some(), occupied.contains(&slot), "slot {slot}");
            assert_eq!(obj.is_none(), free.contains(&slot), "slot {slot}");
            if let Some(obj) = obj {
                let key = KeyParts::of(obj.as_ref()).to_key();
                assert_eq!(self.find(&key), Some(slot), "{key}");
            }
        }
        for NamedIndex { func, index } in self.indices.values() {
            let mut expected: HashMap<String, HashSet<Slot>> = HashMap::new();
            for &slot in &occupied {
                for value in func(self.object(slot)) {
                    expected.entry(value.into_owned()).or_default().insert(slot);
                }
            }
            assert_eq!(index, &expected);
        }
    }

    /// The slot holding the object stored under `key`.
    fn find(&self, key: &str) -> Option<Slot> {
        self.table
            .find(hash_key(&self.hasher, key), holds(&self.slots, key))
            .copied()
    }

    /// Maps slots to `f(key, object)`, ordered by key; the keys are compared without being built.
    fn sorted_by_key<T>(&self, slots: Vec<Slot>, f: impl Fn(KeyParts<'_>, &Arc<K>) -> T) -> Vec<T> {
        let mut keyed: Vec<(KeyParts<'_>, &Arc<K>)> = slots
            .into_iter()
            .map(|slot| {
                let obj = self.object(slot);
                (KeyParts::of(obj.as_ref()), obj)
            })
            .collect();
        keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        keyed
            .into_iter()
            .map(|(parts, obj)| f(parts, obj))
            .collect()
    }

    /// Room for `additional` more objects in the table and the slots (vacated slots count).
    fn reserve(&mut self, additional: usize) {
        self.table
            .reserve(additional, rehash(&self.slots, &self.hasher));
        let vacated = self.free.len();
        self.slots.reserve_exact(additional.saturating_sub(vacated));
    }

    /// Stores `obj`, whose key is `key`, and returns the object it replaced. The key is hashed
    /// once; the table's hasher recomputes the others' hashes only when it grows.
    fn put(&mut self, key: &str, obj: Arc<K>) -> Option<Arc<K>> {
        let entry = self.table.entry(
            hash_key(&self.hasher, key),
            holds(&self.slots, key),
            rehash(&self.slots, &self.hasher),
        );
        let (slot, old) = match entry {
            Entry::Occupied(entry) => {
                let slot = *entry.get();
                let old = self.slots[slot as usize].replace(obj.clone());
                debug_assert!(old.is_some(), "invariant: slots in `table` are occupied");
                (slot, old)
            }
            Entry::Vacant(entry) => {
                // The object is in its slot before the table can rehash again, which reads it.
                let slot = match self.free.pop() {
                    Some(slot) => {
                        self.slots[slot as usize] = Some(obj.clone());
                        slot
                    }
                    None => {
                        self.slots.push(Some(obj.clone()));
                        Slot::try_from(self.slots.len() - 1).expect("fewer than 2^32 objects")
                    }
                };
                entry.insert(slot);
                (slot, None)
            }
        };
        self.update_indices(old.as_deref(), Some(&obj), slot);
        old
    }

    fn remove(&mut self, key: &str) -> Option<Arc<K>> {
        let entry = self
            .table
            .find_entry(hash_key(&self.hasher, key), holds(&self.slots, key))
            .ok()?;
        let (slot, _) = entry.remove();
        let obj = self.slots[slot as usize]
            .take()
            .expect("invariant: slots in `table` are occupied");
        self.free.push(slot);
        self.update_indices(Some(&obj), None, slot);
        Some(obj)
    }
}

impl<K> State<K> {
    /// Moves `slot` from the values `old` had to the values `new` has, in every index.
    fn update_indices(&mut self, old: Option<&K>, new: Option<&K>, slot: Slot) {
        for NamedIndex { func, index } in self.indices.values_mut() {
            let old_values = old.map(|o| func(o)).unwrap_or_default();
            let new_values = new.map(|n| func(n)).unwrap_or_default();
            // Most updates do not move an object between index values (status changes, say).
            if old_values == new_values {
                continue;
            }
            for value in &old_values {
                if let Some(slots) = index.get_mut(value.as_ref()) {
                    slots.remove(&slot);
                    if slots.is_empty() {
                        index.remove(value.as_ref());
                    }
                }
            }
            for value in new_values {
                insert_slot(index, value, slot);
            }
        }
    }
}

/// Puts `slot` under `value`, copying the value only if the index has not seen it yet.
fn insert_slot(index: &mut Index, value: Cow<'_, str>, slot: Slot) {
    match index.entry_ref(value.as_ref()) {
        EntryRef::Occupied(mut slots) => {
            slots.get_mut().insert(slot);
        }
        EntryRef::Vacant(entry) => {
            entry.insert(HashSet::from_iter([slot]));
        }
    }
}

impl<K: CacheObject + Send + Sync> KnownObjects<K> for IndexerReader<K> {
    fn list_keys(&self) -> Vec<Arc<str>> {
        // Unsorted: the FIFO only sorts the few keys it queues tombstones for.
        self.read()
            .objects()
            .map(|obj| KeyParts::of(obj.as_ref()).to_key())
            .collect()
    }

    fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        IndexerReader::get_by_key(self, key)
    }
}

#[cfg(test)]
#[path = "indexer_tests.rs"]
mod tests;
