//! The informer cache of client-go's `tools/cache`: [`Reflector`] → a [`Queue`] ([`DeltaFifo`] or
//! [`RealFifo`]) → [`Controller`] (`process_deltas`) → [`Indexer`]; the other stores a Reflector
//! feeds ([`ReflectorStore`]s): the plain [`Fifo`], the [`UndeltaStore`] (the kubelet's pod
//! source) and the [`ExpirationCache`]; and a shared informer's handlers: [`SharedInformer`] →
//! [`SharedProcessor`] → one [`ProcessorListener`] per handler. Pure logic: no network, no
//! terminal.

pub mod backoff;
mod client_go;
mod controller;
mod delta;
mod delta_fifo;
mod expiration_cache;
mod fifo;
mod index_spec;
mod indexer;
mod informer;
mod listener;
pub mod listwatch;
mod processor;
mod queue;
mod real_fifo;
pub mod reflector;
mod resync_plan;
mod shared_informer;
mod store;
#[cfg(test)]
mod test_handlers;
#[cfg(test)]
pub(crate) mod test_objects;
mod undelta_store;

pub use client_go::{ClientGoVersion, ClientGoVersionError, PreRelease};
pub use controller::{
    Batch, BatchHandler, ConsumerGroup, Controller, InPop, Notification, ResourceEventHandler,
    process_deltas,
};
pub use delta::{DeletedFinalStateUnknown, Delta, DeltaObject, DeltaType, Deltas, ListInfo};
pub use delta_fifo::{DeltaFifo, PopError, Popped, ProcessError, ReplaceTombstones};
pub use expiration_cache::{ExpirationCache, ExpirationPolicy, TimestampedEntry, TtlPolicy};
pub use fifo::{Fifo, PoppedObject};
pub use index_spec::{INDEX_SPEC_FORMS, IndexSpec, IndexSpecError};
pub use indexer::{IndexFunc, IndexValues, Indexer, IndexerError, IndexerReader, index_func};
pub use informer::{
    Consumption, Informer, InformerConfig, InformerError, InformerKind, InformerSink, NoSink,
};
pub use listener::{
    Delivery, Dispatch, ListenerHandler, ListenerId, ListenerStats, ProcessorListener,
    UpstreamSynced,
};
pub use processor::{Distribution, SharedProcessor};
pub use queue::{FifoStats, PoppedDeltas, Queue, QueueKind};
pub use real_fifo::RealFifo;
pub use reflector::{
    Reflector, ReflectorConfig, ReflectorError, ReflectorEvent, ReflectorEventKind,
    ReflectorObserver, ReflectorStore,
};
pub use resync_plan::{
    HandlerResync, MINIMUM_RESYNC_PERIOD, ResyncPlan, ResyncWarning, determine_resync_period,
};
pub use shared_informer::{
    Registration, ResourceVersioned, SharedInformer, SharedInformerError, SyncRule, is_sync,
};
pub use store::{
    CacheObject, KnownObjects, key_from_parts, object_key, split_key, write_object_key,
};
pub use undelta_store::UndeltaStore;
