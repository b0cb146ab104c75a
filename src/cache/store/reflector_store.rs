//! What a Reflector writes into: client-go's `ReflectorStore` (`reflector.go`), with its optional
//! `ReflectorBookmarkStore`: the one producer contract.
//!
//! Every informer [`InformerQueue`](crate::cache::InformerQueue) is one (`InformerQueue` extends this trait); so are the
//! stores client-go lets a Reflector feed directly, with no consumer popping in between (its
//! `UndeltaStore` and `ExpirationCache`), and its plain `FIFO`.

use std::fmt;
use std::sync::Arc;

use crate::cache::delta::DeltaObject;

/// What a [`Reflector`](crate::cache::Reflector) writes into, shared as
/// `Arc<dyn ReflectorStore<K>>`; every method takes `&self`. Each informer
/// [`InformerQueue`](crate::cache::InformerQueue) is one (the trait is `InformerQueue`'s supertrait, so an
/// `Arc<dyn InformerQueue<K>>` is handed to a Reflector as it is), and so is every store a Reflector may
/// feed without a consumer. The contracts below are the only statement of them.
pub trait ReflectorStore<K>: Send + Sync + fmt::Debug {
    /// A watch `ADDED` event: a queue queues an `Added` delta.
    fn add(&self, obj: Arc<K>);

    /// A watch `MODIFIED` event: a queue queues an `Updated` delta.
    fn update(&self, obj: Arc<K>);

    /// A watch `DELETED` event. Returns whether it was queued or, for a store without a queue,
    /// applied: the DeltaFIFO drops the deletion of a key neither queued nor known (client-go's
    /// `DeltaFIFO.Delete`), the RealFIFO never drops one.
    fn delete(&self, obj: DeltaObject<K>) -> bool;

    /// The result of a list at `resource_version` (see each queue for the deltas this produces).
    /// The first `replace` of a queue that was never populated sets its initial population, which
    /// [`has_synced`](ReflectorStore::has_synced) waits for.
    fn replace(&self, list: Vec<Arc<K>>, resource_version: &str);

    /// A periodic resync; returns how many deltas (or keys) it queued.
    fn resync(&self) -> usize;

    /// A watch bookmark at `resource_version` (client-go's optional `ReflectorBookmarkStore`): a
    /// `Bookmark` delta in the atomic queue. Nothing by default: client-go's stores other than the
    /// atomic RealFIFO are not bookmark stores.
    fn bookmark(&self, resource_version: &str) {
        let _ = resource_version;
    }

    /// Whether the initial list has been delivered: for a queue, the first `replace` (or an
    /// earlier add/update/delete) happened and everything it queued has been popped and processed
    /// (client-go's `HasSynced`, `populated && initialPopulationCount == 0`); a store without a
    /// queue has delivered it once it holds it.
    fn has_synced(&self) -> bool;

    /// Whether everything written so far has reached the consumer: a queue is empty (and a pop in
    /// progress has finished, since it processes under the queue lock); a store without a queue
    /// always is. The consistency check takes its snapshot of the cache only then.
    fn is_drained(&self) -> bool;
}
