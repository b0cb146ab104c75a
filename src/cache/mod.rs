//! The informer cache of client-go's `tools/cache`, one folder per concept, in the order data
//! flows through them:
//!
//! ```text
//!  listwatch ─▶ reflector/ ──writes into──▶ queue/ ──pop──▶ informer/ ──applies──▶ store/
//!  (the source  List+Watch, relist,        DeltaFIFO,       consumer, process_deltas,   Indexer,
//!   contract)   backoff, resync timer      RealFIFO, FIFO   shared informer, handlers   other stores
//! ```
//!
//! | folder / file | what it is | client-go |
//! |---|---|---|
//! | [`listwatch`] | the `ListerWatcher` the Reflector depends on, what a source implements | `listwatch.go` |
//! | [`fan_out`] | one `ListerWatcher` read by several Reflectors in lock step (`--compare`'s stacks on one stream) | |
//! | [`reflector`] | the Reflector: an explicit state machine, its backoff, its consistency check | `reflector.go`, `wait/backoff.go` |
//! | [`store`] (folder) | what a Reflector writes into ([`ReflectorStore`]), the [`Indexer`] and its index specs, the stores a Reflector may feed with no consumer ([`UndeltaStore`], [`ExpirationCache`]) | `store.go`, `thread_safe_store.go`, `index.go`, `undelta_store.go`, `expiration_cache.go` |
//! | `queue/` | the [`InformerQueue`] between the Reflector and the consumer, and its kinds ([`DeltaFifo`], [`RealFifo`], plain [`Fifo`]) | `delta_fifo.go`, `the_real_fifo.go`, `fifo.go` |
//! | `informer/` | one resource's [`Informer`]: the consumer ([`ProcessLoop`], [`process_deltas`]) and a shared informer's handlers ([`SharedInformer`] → [`SharedProcessor`] → [`ProcessorListener`]) | `controller.go`, `shared_informer.go` |
//! | `workqueue/` | what a controller does with its handlers' notifications: client-go's `util/workqueue` (the queue with its dirty and processing sets, the delaying heap, the rate limiters), controller-runtime's priority queue, and controller-runtime's worker loop over either, on the caller's clock | `util/workqueue`, controller-runtime's `priorityqueue` and `internal/controller` |
//! | `triggers/` | what turns an object's change into a reconcile request in both controller runtimes: predicates, and an owned object's owners | controller-runtime's `pkg/predicate`, `pkg/handler/enqueue_owner.go`; kube-runtime's `utils/predicate.rs`, `controller/trigger.rs` |
//! | `kube_runtime/` | what a kube-rs controller does with the same stream: kube-runtime's watcher events (translated from the Reflector's), its store, scheduler and `Controller`, on the caller's clock | kube-runtime 5.0.0 (`watcher.rs`, `reflector/store.rs`, `scheduler.rs`, `controller/`) |
//! | `testing.rs` | fakes for tests of code built on the cache (the `testing` feature): a manual clock, a scripted `ListerWatcher` | `tools/cache/testing` |
//! | `client_go.rs` | which client-go version builds which informer: [`ClientGoVersion`] and its rules, `InformerConfig::client_go` | `features/known_features.go`, each rule's tag |
//! | `delta.rs`, `key.rs`, `clock.rs` | the vocabulary every folder shares: deltas, store keys, time | `delta_fifo.go`'s `Delta`, `store.go`'s key functions, `clock` |
//!
//! Imports point one way, against the flow of data where a contract is owned by its user: the
//! shared leaves import nothing of the cache; `store/` imports only the leaves; `queue/` the
//! leaves and `store/` (a queue is a [`ReflectorStore`] and consults the Indexer as
//! [`KnownObjects`]); `reflector/` the leaves and `store/` (it writes into any [`ReflectorStore`],
//! never naming a queue); `informer/` everything below it; `workqueue/` only the clock (it
//! receives keys, not objects); `triggers/` only the leaves (and the object); `kube_runtime/`
//! the leaves, `reflector/` (the events it translates), `triggers/` and `workqueue/` (its
//! `Reconciler`); `client_go.rs`, the knowledge of versions, imports the
//! configurations it builds and nothing imports it. Pure logic: no network, no terminal,
//! nothing from `source/`, `render/` or the binary.

mod client_go;
mod clock;
mod delta;
pub mod fan_out;
pub mod informer;
mod key;
mod key_glob;
pub mod kube_runtime;
pub mod listwatch;
pub mod queue;
pub mod reflector;
pub mod store;
#[cfg(test)]
mod test_handlers;
#[cfg(test)]
pub(crate) mod test_objects;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod triggers;
pub mod workqueue;

pub use client_go::{ClientGoVersion, ClientGoVersionError, PreRelease};
pub use clock::{Clock, TokioClock};
pub use delta::{DeletedFinalStateUnknown, Delta, DeltaObject, DeltaType, Deltas, ListInfo};
pub use informer::{
    Batch, BatchHandler, ConsumerGroup, Consumption, Delivery, Dispatch, Distribution,
    HandlerResync, InPop, Informer, InformerConfig, InformerError, InformerKind, InformerSink,
    ListenerHandler, ListenerId, ListenerStats, MINIMUM_RESYNC_PERIOD, NoSink, Notification,
    ProcessLoop, ProcessorListener, Registration, ResourceEventHandler, ResourceVersioned,
    ResyncPlan, ResyncWarning, SharedInformer, SharedInformerError, SharedProcessor, StoreTap,
    StoreWrite, SyncRule, UpstreamSynced, determine_resync_period, is_sync, process_delta,
    process_deltas,
};
pub use key::{CacheObject, key_from_parts, object_key, split_key, write_object_key};
pub use key_glob::KeyGlob;
pub use queue::{
    DeltaFifo, Fifo, InformerQueue, PopError, Popped, PoppedDeltas, PoppedObject, ProcessError,
    QueueKind, QueueStats, RealFifo, ReplaceTombstones,
};
pub use reflector::{
    Reflector, ReflectorConfig, ReflectorError, ReflectorEvent, ReflectorEventKind,
    ReflectorObserver,
};
pub use store::{
    ExpirationCache, ExpirationPolicy, INDEX_SPEC_FORMS, IndexFunc, IndexSpec, IndexSpecError,
    IndexValues, Indexer, IndexerError, IndexerReader, KnownObjects, ReflectorStore,
    TimestampedEntry, TtlPolicy, UndeltaStore, index_func,
};
