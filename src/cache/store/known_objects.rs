//! What the consumer's cache offers the queue: client-go's `KeyListerGetter` (`delta_fifo.go`).

use std::sync::Arc;

/// What a [`DeltaFifo`](crate::cache::DeltaFifo) needs to know about the objects the consumer has already
/// applied: client-go's `KeyListerGetter`, implemented by the read handle of the
/// [`Indexer`](crate::cache::Indexer), an [`IndexerReader`](crate::cache::IndexerReader).
///
/// The FIFO calls these while holding its own lock, so implementations must not call back into
/// the FIFO.
pub trait KnownObjects<K>: Send + Sync {
    /// Every key present, in any order (the FIFO sorts what it queues, so output is deterministic).
    fn list_keys(&self) -> Vec<Arc<str>>;
    /// The object stored under `key`.
    fn get_by_key(&self, key: &str) -> Option<Arc<K>>;
}
