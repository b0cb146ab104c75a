//! Stores: what a Reflector writes into, and the caches a consumer keeps.
//!
//! - [`ReflectorStore`] is the producer contract (client-go's `ReflectorStore`, the subset of
//!   `Store` a Reflector calls): every informer [`InformerQueue`](crate::cache::InformerQueue) is one, and so are
//!   the stores client-go lets a Reflector feed with no consumer in between.
//! - [`Indexer`] is the informer's cache (`thread_safe_store.go`, `index.go`): one writer, by
//!   type, and any number of cloneable [`IndexerReader`]s; [`IndexSpec`] turns command-line index
//!   names into index functions; [`KnownObjects`] is the read view a queue consults.
//! - [`UndeltaStore`] (the kubelet's pod source) and [`ExpirationCache`] are fed directly by a
//!   Reflector: every write is applied at once, so they are always drained.
//!
//! Invariants: every store keys objects by [`object_key`](crate::cache::object_key)
//! (`namespace/name`); writes through a [`ReflectorStore`] take `&self` and are serialised by the
//! store's own lock, which is never held while calling out (so a [`KnownObjects`] call from a
//! queue's lock cannot deadlock). This folder imports only the cache's shared leaves.

mod expiration_cache;
mod index_spec;
mod indexer;
mod key_parts;
mod known_objects;
mod reflector_store;
mod undelta_store;

pub use expiration_cache::{ExpirationCache, ExpirationPolicy, TimestampedEntry, TtlPolicy};
pub use index_spec::{INDEX_SPEC_FORMS, IndexSpec, IndexSpecError};
pub use indexer::{IndexFunc, IndexValues, Indexer, IndexerError, IndexerReader, index_func};
pub use known_objects::KnownObjects;
pub use reflector_store::ReflectorStore;
pub use undelta_store::UndeltaStore;
