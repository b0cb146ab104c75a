//! What a Reflector writes into: client-go's `ReflectorStore` (`reflector.go`), with its optional
//! `ReflectorBookmarkStore`.
//!
//! An informer's [`Queue`] is one, through [`Reflector::new`](super::Reflector::new); so are the
//! stores client-go lets a Reflector feed directly, with no consumer popping in between (its
//! `UndeltaStore` and `ExpirationCache`), and its plain `FIFO`, through
//! [`Reflector::with_store`](super::Reflector::with_store).

use std::fmt;
use std::sync::Arc;

use crate::cache::delta::DeltaObject;
use crate::cache::queue::Queue;

/// What a [`Reflector`](super::Reflector) writes into, shared as `Arc<dyn ReflectorStore<K>>`;
/// every method takes `&self`.
///
/// These are the producer methods of [`Queue`] under the same names and contracts (a queue is
/// adapted by [`Reflector::new`](super::Reflector::new)), plus what the consistency check asks of
/// any store.
pub trait ReflectorStore<K>: Send + Sync + fmt::Debug {
    /// A watch `ADDED` event.
    fn add(&self, obj: Arc<K>);

    /// A watch `MODIFIED` event.
    fn update(&self, obj: Arc<K>);

    /// A watch `DELETED` event. Returns whether it was queued (see [`Queue::delete`]) or, for a
    /// store without a queue, applied.
    fn delete(&self, obj: DeltaObject<K>) -> bool;

    /// The result of a list at `resource_version`.
    fn replace(&self, list: Vec<Arc<K>>, resource_version: &str);

    /// A periodic resync; returns how many deltas (or keys) it queued.
    fn resync(&self) -> usize;

    /// A watch bookmark at `resource_version` (client-go's optional `ReflectorBookmarkStore`).
    /// Nothing by default: client-go's stores other than the atomic RealFIFO are not bookmark
    /// stores.
    fn bookmark(&self, resource_version: &str) {
        let _ = resource_version;
    }

    /// Whether the initial list has been delivered (see [`Queue::has_synced`]); a store without a
    /// queue has delivered it once it holds it.
    fn has_synced(&self) -> bool;

    /// Whether everything written so far has reached the consumer: a queue is empty (and a pop in
    /// progress has finished, since it processes under the queue lock); a store without a queue
    /// always is. The consistency check takes its snapshot of the cache only then.
    fn is_drained(&self) -> bool;
}

/// A [`Queue`] as a [`ReflectorStore`]: what [`Reflector::new`](super::Reflector::new) feeds.
pub(super) struct QueueStore<K>(pub(super) Arc<dyn Queue<K>>);

impl<K> fmt::Debug for QueueStore<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<K> ReflectorStore<K> for QueueStore<K> {
    fn add(&self, obj: Arc<K>) {
        self.0.add(obj);
    }

    fn update(&self, obj: Arc<K>) {
        self.0.update(obj);
    }

    fn delete(&self, obj: DeltaObject<K>) -> bool {
        self.0.delete(obj)
    }

    fn replace(&self, list: Vec<Arc<K>>, resource_version: &str) {
        self.0.replace(list, resource_version);
    }

    fn resync(&self) -> usize {
        self.0.resync()
    }

    fn bookmark(&self, resource_version: &str) {
        self.0.bookmark(resource_version);
    }

    fn has_synced(&self) -> bool {
        self.0.has_synced()
    }

    fn is_drained(&self) -> bool {
        self.0.is_empty()
    }
}
