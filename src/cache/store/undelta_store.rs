//! The UndeltaStore (client-go's `tools/cache/undelta_store.go`): a store that, after every
//! change, pushes its whole content to a function.
//!
//! This is how the kubelet watches its node's pods: `Reflector` → `UndeltaStore` → the pod
//! config's merge (`pkg/kubelet/config/apiserver.go`, `newSourceApiserverFromLW`, whose push sends
//! each list as one `PodUpdate{Op: SET}`; no resync). The kubelet never sees
//! an event, only a sequence of complete pod lists, one per change; what it computes from them
//! (which pods are new, changed, gone) it works out itself by comparing lists. So "what does the
//! kubelet see, and how often" is exactly this store's sequence of pushes.
//!
//! ## Where this differs from client-go, and why
//! - Each push is the content right after its own change, and pushes arrive in the order of the
//!   changes: the change and the push happen under one lock. client-go releases the store's lock
//!   between the two, so two racing writers may both push the state after both changes (its doc
//!   comment says `PushFunc` "may be called twice with the same values").
//! - A push lists the objects in key order (client-go's `List` is in map order), so a replay always
//!   pushes the same lists.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::indexer::{Indexer, IndexerReader};
use super::known_objects::KnownObjects;
use super::reflector_store::ReflectorStore;
use crate::cache::delta::DeltaObject;
use crate::cache::key::{CacheObject, object_key};

/// A store that pushes its whole content to `push` after every add, update, delete and replace
/// (client-go's `UndeltaStore`, `NewUndeltaStore(pushFunc, keyFunc)`).
///
/// The push function receives the objects in key order. It runs under the store's write lock, so
/// it must not write to the store; reading it (with [`list`](UndeltaStore::list) and the like) is
/// fine.
pub struct UndeltaStore<K, F> {
    /// The objects: client-go's embedded `Store`, read here.
    store: IndexerReader<K>,
    /// client-go's `PushFunc`, with the store's writer. Held across each change and its push, so
    /// that pushes follow the order of the changes.
    push: Mutex<(Indexer<K>, F)>,
    /// True once anything was written: the kubelet's "this source has sent its first update".
    populated: AtomicBool,
}

impl<K, F> fmt::Debug for UndeltaStore<K, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UndeltaStore")
            .field("len", &self.store.len())
            .finish_non_exhaustive()
    }
}

impl<K: CacheObject, F: FnMut(&[Arc<K>])> UndeltaStore<K, F> {
    /// An empty store that will push to `push`.
    pub fn new(push: F) -> Self {
        let writer = Indexer::new();
        UndeltaStore {
            store: writer.reader(),
            push: Mutex::new((writer, push)),
            populated: AtomicBool::new(false),
        }
    }

    /// Number of objects stored.
    pub fn len(&self) -> usize {
        self.store.len()
    }

    /// Whether no object is stored.
    pub fn is_empty(&self) -> bool {
        self.store.is_empty()
    }

    /// Every object, in key order (client-go's `List`). Never pushes.
    pub fn list(&self) -> Vec<Arc<K>> {
        self.store.list_by_key()
    }

    /// Every key, sorted (client-go's `ListKeys`). Never pushes.
    pub fn list_keys(&self) -> Vec<Arc<str>> {
        self.store.list_keys()
    }

    /// The object stored under `key` (client-go's `GetByKey`). Never pushes.
    pub fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        self.store.get_by_key(key)
    }

    // A panic in the push function leaves the store changed and unpushed; the next change pushes
    // the whole content again, so a poisoned lock is still usable.
    fn lock(&self) -> MutexGuard<'_, (Indexer<K>, F)> {
        self.push.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Applies `change` to the store and pushes the result, under the push lock.
    fn change_and_push(&self, change: impl FnOnce(&mut Indexer<K>)) {
        let mut guard = self.lock();
        let (writer, push) = &mut *guard;
        change(writer);
        self.populated.store(true, Ordering::Release);
        push(&self.list());
    }
}

impl<K: CacheObject, F: FnMut(&[Arc<K>])> UndeltaStore<K, F> {
    /// client-go's `Add`: stores `obj` and pushes the whole content.
    pub fn add(&self, obj: Arc<K>) {
        self.change_and_push(|store| store.add(obj));
    }

    /// client-go's `Update`: stores `obj` and pushes the whole content.
    pub fn update(&self, obj: Arc<K>) {
        self.change_and_push(|store| store.update(obj));
    }

    /// client-go's `Delete`: removes the object stored under `obj`'s key and pushes the whole
    /// content, even if nothing was stored under it (client-go's store does not complain).
    pub fn delete(&self, obj: &K) {
        self.delete_key(&object_key(obj));
    }

    /// [`delete`](UndeltaStore::delete) by key.
    pub fn delete_key(&self, key: &str) {
        self.change_and_push(|store| {
            store.delete_key(key);
        });
    }

    /// client-go's `Replace`: the store's content becomes `list`, and is pushed once.
    /// `resource_version` is not used, as in client-go's store.
    pub fn replace(&self, list: Vec<Arc<K>>, resource_version: &str) {
        let _ = resource_version;
        self.change_and_push(|store| store.replace(list));
    }

    /// The object stored under `obj`'s key (client-go's `Get`). Never pushes.
    pub fn get(&self, obj: &K) -> Option<Arc<K>> {
        self.store.get(obj)
    }
}

/// What a Reflector's calls do to an UndeltaStore: every one but `resync` and `bookmark` changes
/// the store and pushes.
impl<K, F> ReflectorStore<K> for UndeltaStore<K, F>
where
    K: CacheObject + Send + Sync,
    F: FnMut(&[Arc<K>]) + Send,
{
    fn add(&self, obj: Arc<K>) {
        UndeltaStore::add(self, obj);
    }

    fn update(&self, obj: Arc<K>) {
        UndeltaStore::update(self, obj);
    }

    /// Applied and pushed (returns true) for an object or a tombstone; a whole-list payload
    /// deletes nothing and is not pushed (returns false).
    fn delete(&self, obj: DeltaObject<K>) -> bool {
        if obj.list().is_some() {
            return false;
        }
        self.delete_key(&obj.key());
        true
    }

    fn replace(&self, list: Vec<Arc<K>>, resource_version: &str) {
        UndeltaStore::replace(self, list, resource_version);
    }

    /// client-go's `UndeltaStore` has its embedded store's `Resync`, which does nothing: no push.
    fn resync(&self) -> usize {
        0
    }

    fn has_synced(&self) -> bool {
        self.populated.load(Ordering::Acquire)
    }

    /// Nothing is ever waiting: every change is pushed before the call returns.
    fn is_drained(&self) -> bool {
        true
    }
}

/// The store's content, as the consumer's cache a consistency check compares with the server.
impl<K: CacheObject + Send + Sync, F: Send> KnownObjects<K> for UndeltaStore<K, F> {
    fn list_keys(&self) -> Vec<Arc<str>> {
        self.store.list_keys()
    }

    fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        self.store.get_by_key(key)
    }
}

#[cfg(test)]
#[path = "undelta_store_tests.rs"]
mod tests;
