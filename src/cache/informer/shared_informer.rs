//! A shared informer's consumer side: client-go's `sharedIndexInformer`
//! (`tools/cache/shared_informer.go`) as a thin composition of the [`Indexer`], a
//! [`SharedProcessor`] and a [`ResyncPlan`].
//!
//! The informer owns the Indexer, its writer, as client-go's does; it writes only in
//! [`handle_deltas`](SharedInformer::handle_deltas), and [`indexer`](SharedInformer::indexer)
//! hands out an [`IndexerReader`] (client-go's `GetIndexer()` hands out the writable store).
//!
//! Each popped batch goes through [`handle_deltas`](SharedInformer::handle_deltas), client-go's
//! `HandleDeltas`: [`process_deltas`] applies it to the indexer with the informer as the handler,
//! and the informer's `OnAdd`/`OnUpdate`/`OnDelete` distribute one notification per delta (never a
//! batch) to every handler's listener, an update flagged as a sync notification when its old and
//! new resourceVersions are equal. Handlers run on their listeners' threads: the pop returns as
//! soon as the notifications are buffered, whatever the handlers are doing.
//!
//! The Reflector is wired by the caller: give it [`SharedInformer::start`]'s period as its resync
//! period, and make each resync tick call [`SharedInformer::should_resync`] and resync the queue
//! only when it says so (client-go passes `sharedProcessor.shouldResync` as the Reflector's
//! `ShouldResync`).

use std::fmt;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::object::Object;

use super::handler::{Notification, ResourceEventHandler, process_delta, process_deltas};
use super::listener::{ListenerHandler, ListenerId, ProcessorListener, UpstreamSynced};
use super::processor::{Distribution, SharedProcessor};
use super::resync_plan::{HandlerResync, ResyncPlan};
use crate::cache::clock::Clock;
use crate::cache::delta::{DeltaObject, DeltaType, Deltas};
use crate::cache::key::CacheObject;
use crate::cache::store::{Indexer, IndexerReader};

/// What the informer needs to tell a sync notification: the object's `metadata.resourceVersion`.
pub trait ResourceVersioned {
    /// `metadata.resourceVersion`, if set.
    fn resource_version(&self) -> Option<&str>;
}

impl<K: k8s_openapi::Metadata<Ty = ObjectMeta>> ResourceVersioned for K {
    fn resource_version(&self) -> Option<&str> {
        self.metadata().resource_version.as_deref()
    }
}

impl ResourceVersioned for Object {
    fn resource_version(&self) -> Option<&str> {
        Object::resource_version(self)
    }
}

/// Whether an update from `old` to `new` is a sync notification, as client-go's
/// `sharedIndexInformer.OnUpdate`: their resourceVersions are equal (an unset one reads as `""`,
/// as Go's accessor returns it). That is a `Sync` (a resync), or a `Replaced` of an object a
/// relist found unchanged, or any update that did not change the object.
pub fn is_sync<K: ResourceVersioned + ?Sized>(old: &K, new: &K) -> bool {
    old.resource_version().unwrap_or("") == new.resource_version().unwrap_or("")
}

/// Which update a shared informer hands only to the handlers whose resync is due (its `isSync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncRule {
    /// Before v0.18 (`HandleDeltas` @v0.17.17: `isSync := d.Type == Sync`): every notification a
    /// `Sync` delta makes, an add as well as an update, and nothing else. A relist queues `Sync`
    /// deltas then, so what it finds new or changed reaches only the syncing handlers.
    DeltaType,
    /// v0.18 to v0.23 (`HandleDeltas` @v0.18.0 … @v0.23.17): an update made by a `Sync` delta, or
    /// by a `Replaced` delta that left the resourceVersion unchanged; never an add, never an
    /// `Added`/`Updated` delta.
    SyncOrUnchangedReplaced,
    /// From v0.24 (`sharedIndexInformer.OnUpdate` @v0.24.0): any update whose old and new
    /// resourceVersions are equal, whatever the delta; never an add.
    ResourceVersion,
}

/// Why a handler could not be registered, or the informer not started.
#[derive(Debug, thiserror::Error)]
pub enum SharedInformerError {
    /// client-go's `AddEventHandlerWithResyncPeriod` after the informer stopped.
    #[error("handler {0:?} was not added: the shared informer has stopped already")]
    Stopped(String),
    /// The operating system refused a handler's thread.
    #[error("could not start an event handler's thread: {0}")]
    Spawn(#[from] io::Error),
}

/// A registered handler: client-go's `ResourceEventHandlerRegistration` (the listener itself),
/// with the resync periods the registration got and the warnings client-go would have logged.
#[derive(Debug)]
pub struct Registration<K> {
    /// The handler's listener: [`has_synced`](ProcessorListener::has_synced), buffer
    /// [`stats`](ProcessorListener::stats), resync periods.
    pub listener: Arc<ProcessorListener<K>>,
    /// The resync decision.
    pub resync: HandlerResync,
}

impl<K> Registration<K> {
    /// client-go's `ResourceEventHandlerRegistration.HasSynced`: the informer has synced and this
    /// handler has processed every initial-list notification.
    pub fn has_synced(&self) -> bool {
        self.listener.has_synced()
    }

    /// What [`SharedInformer::remove_event_handler`] takes.
    pub fn id(&self) -> ListenerId {
        self.listener.id()
    }
}

/// `startedLock`'s data.
struct Lifecycle {
    /// The resync periods; `plan.is_started()` is client-go's `started`.
    plan: ResyncPlan,
    /// Set by `stop`; no handler is added after it.
    stopped: bool,
}

/// client-go's `sharedIndexInformer`, minus the Reflector and the queue, which the caller runs.
///
/// ```
/// use std::sync::{Arc, mpsc};
/// use std::time::Duration;
/// use kube::api::ApiResource;
/// use kubectl_deltas::Object;
/// use kubectl_deltas::cache::{
///     DeltaFifo, Delivery, Indexer, Notification, InformerQueue, ReflectorStore, SharedInformer, TokioClock,
/// };
///
/// let pods = ApiResource::erase::<k8s_openapi::api::core::v1::Pod>(&());
/// let pod = |name: &str, rv: &str| {
///     let mut pod = Object::new(name, &pods).within("default");
///     pod.meta_mut().resource_version = Some(rv.into());
///     Arc::new(pod)
/// };
///
/// let informer = SharedInformer::new(Indexer::new(), Duration::ZERO, Arc::new(TokioClock));
/// let (tx, rx) = mpsc::channel();
/// let web = informer
///     .add_event_handler("web", move |d: &Delivery<'_, Object>| {
///         let kind = match d.notification {
///             Notification::Add { .. } => "add",
///             Notification::Update { .. } => "update",
///             Notification::Delete { .. } => "delete",
///         };
///         tx.send((kind, d.is_sync)).unwrap();
///     })
///     .unwrap();
/// let fifo = Arc::new(DeltaFifo::new().known_objects(Arc::new(informer.indexer().clone())));
/// let synced = fifo.clone();
/// assert_eq!(informer.start(move || synced.has_synced()).unwrap(), None); // no resync timer
///
/// fifo.replace(vec![pod("web-1", "10")], "10"); // the Reflector's list
/// fifo.replace(vec![pod("web-1", "10")], "11"); // a relist: web-1 unchanged
/// while fifo
///     .try_pop_batch(1, &mut |deltas, initial| {
///         informer.handle_deltas(deltas, initial);
///     })
///     .is_some()
/// {}
/// assert!(web.listener.wait_drained(Duration::from_secs(60)));
/// assert!(web.listener.has_synced());
/// let received: Vec<_> = rx.try_iter().collect();
/// assert_eq!(received, [("add", false), ("update", true)]);
/// informer.stop();
/// ```
pub struct SharedInformer<K> {
    indexer: IndexerReader<K>,
    processor: SharedProcessor<K>,
    clock: Arc<dyn Clock>,
    /// `startedLock`. Lock order: `lifecycle`, then `block_deltas`, then the processor's lock.
    lifecycle: Mutex<Lifecycle>,
    /// `blockDeltas`: held while a batch is applied and distributed, and while a late handler
    /// joins, so that a late handler sees each change either in its initial `OnAdd`s or as a
    /// notification, never both and never neither. It holds the cache's writer, which only
    /// `handle_batch` uses.
    block_deltas: Mutex<Indexer<K>>,
    /// The informer's `HasSynced` (the queue's), set by `start`; false before.
    upstream: Arc<OnceLock<UpstreamSynced>>,
    /// Which notifications are sync notifications.
    sync_rule: SyncRule,
}

impl<K> fmt::Debug for SharedInformer<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedInformer")
            .field("indexer", &self.indexer)
            .field("processor", &self.processor)
            .field("plan", &lock(&self.lifecycle).plan)
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl<K> SharedInformer<K>
where
    K: CacheObject + ResourceVersioned + Send + Sync + 'static,
{
    /// An informer that owns `indexer` (the cache's writer, its indices registered) and whose own
    /// resync period is `resync_period` (the factory's
    /// default; 0: no resyncs at all, see [`ResyncPlan`]), as `NewSharedIndexInformerWithOptions`.
    /// `clock` decides resync due-ness and stamps buffer waits, so a replay's virtual clock drives
    /// both.
    pub fn new(indexer: Indexer<K>, resync_period: Duration, clock: Arc<dyn Clock>) -> Self {
        SharedInformer {
            indexer: indexer.reader(),
            processor: SharedProcessor::new(clock.clone()),
            clock,
            lifecycle: Mutex::new(Lifecycle {
                plan: ResyncPlan::new(resync_period),
                stopped: false,
            }),
            block_deltas: Mutex::new(indexer),
            upstream: Arc::new(OnceLock::new()),
            sync_rule: SyncRule::ResourceVersion,
        }
    }

    /// Tells sync notifications as the client-go version of `rule` does (the default:
    /// [`SyncRule::ResourceVersion`], v0.24 onwards).
    pub fn sync_rule(mut self, rule: SyncRule) -> Self {
        self.sync_rule = rule;
        self
    }

    /// client-go's `AddEventHandler`: registers `handler` with the informer's default resync
    /// period.
    pub fn add_event_handler(
        &self,
        name: impl Into<String>,
        handler: impl ListenerHandler<K>,
    ) -> Result<Registration<K>, SharedInformerError> {
        self.register(name.into(), handler, None)
    }

    /// client-go's `AddEventHandlerWithResyncPeriod` (0: this handler wants no resyncs). The
    /// period is adjusted by the [`ResyncPlan`] rules; each adjustment is logged as a warning and
    /// returned in [`Registration::resync`].
    ///
    /// Registered after [`start`](SharedInformer::start), the handler first receives an
    /// `OnAdd` with `is_in_initial_list` set for every object in the cache (in key order; Go
    /// lists a map, so in no order), and its registration has synced once it processed them.
    pub fn add_event_handler_with_resync_period(
        &self,
        name: impl Into<String>,
        handler: impl ListenerHandler<K>,
        resync_period: Duration,
    ) -> Result<Registration<K>, SharedInformerError> {
        self.register(name.into(), handler, Some(resync_period))
    }

    fn register(
        &self,
        name: String,
        handler: impl ListenerHandler<K>,
        requested: Option<Duration>,
    ) -> Result<Registration<K>, SharedInformerError> {
        let mut lifecycle = lock(&self.lifecycle);
        if lifecycle.stopped {
            return Err(SharedInformerError::Stopped(name));
        }
        let resync = lifecycle.plan.add_handler(requested);
        for warning in &resync.warnings {
            tracing::warn!(handler = %name, "{warning}");
        }
        if let Some(check) = resync.lowered_check_period {
            self.processor.resync_check_period_changed(check);
        }
        let upstream = self.upstream.clone();
        let listener = ProcessorListener::new(
            name,
            handler,
            resync.requested,
            resync.period,
            self.clock.now(),
            self.clock.clone(),
            Arc::new(move || upstream.get().is_some_and(|synced| synced())),
        );
        if !lifecycle.plan.is_started() {
            self.processor.add_listener(listener.clone())?;
            return Ok(Registration { listener, resync });
        }
        let block = lock(&self.block_deltas);
        self.processor.add_listener(listener.clone())?;
        // Added before the registration is returned, so that nobody can see it synced before
        // its initial adds are counted.
        listener.add_initial_list(self.indexer.list_by_key());
        drop((block, lifecycle));
        // An empty cache gives the handler no call to notice its sync by.
        listener.notice_sync();
        Ok(Registration { listener, resync })
    }

    /// client-go's `RemoveEventHandler`: unregisters the handler; if the informer runs, its
    /// buffered notifications are dropped and its thread ends after the current call. Returns
    /// whether it was registered.
    pub fn remove_event_handler(&self, id: ListenerId) -> bool {
        let _lifecycle = lock(&self.lifecycle);
        let _block = lock(&self.block_deltas);
        self.processor.remove_listener(id).is_some()
    }

    /// The part of client-go's `sharedIndexInformer.Run` that concerns handlers: freezes the
    /// resync check period, takes `upstream_has_synced` as the informer's `HasSynced` (the
    /// queue's), and starts every handler's thread. Returns the period the Reflector's resync
    /// timer must use (its `FullResyncPeriod`), `None` for no timer. A second call changes nothing
    /// (client-go refuses to run twice).
    pub fn start(
        &self,
        upstream_has_synced: impl Fn() -> bool + Send + Sync + 'static,
    ) -> Result<Option<Duration>, SharedInformerError> {
        self.start_with(upstream_has_synced, false)
    }

    /// [`start`](SharedInformer::start) without handler threads: the caller drives the handlers
    /// with [`call_until`](SharedInformer::call_until), on the informer's clock (a replay's, where
    /// a slow handler's calls take recorded time).
    pub fn start_inline(
        &self,
        upstream_has_synced: impl Fn() -> bool + Send + Sync + 'static,
    ) -> Result<Option<Duration>, SharedInformerError> {
        self.start_with(upstream_has_synced, true)
    }

    fn start_with(
        &self,
        upstream_has_synced: impl Fn() -> bool + Send + Sync + 'static,
        inline: bool,
    ) -> Result<Option<Duration>, SharedInformerError> {
        let mut lifecycle = lock(&self.lifecycle);
        if lifecycle.plan.is_started() {
            tracing::warn!("the shared informer has started already; it is not started twice");
            return Ok(lifecycle.plan.reflector_resync_period());
        }
        let _ = self.upstream.set(Arc::new(upstream_has_synced));
        let period = lifecycle.plan.start();
        if inline {
            self.processor.start_inline();
        } else {
            self.processor.start()?;
        }
        Ok(period)
    }

    /// Makes the handler calls that begin by `until` (the informer's clock), on the caller's
    /// thread: see [`SharedProcessor::call_until`]. Only for an informer started inline.
    pub fn call_until(&self, until: std::time::Instant) -> usize {
        self.processor.call_until(until)
    }

    /// client-go's `HandleDeltas`: applies a popped batch to the indexer ([`process_deltas`]) and
    /// distributes one notification per change, in order, each update flagged by [`is_sync`].
    /// Returns the distributions, for showing what each handler was given. Call it from the
    /// queue's pop, so that it runs under the queue's lock as client-go's does.
    pub fn handle_deltas(
        &self,
        deltas: &Deltas<K>,
        is_in_initial_list: bool,
    ) -> Vec<Distribution<K>> {
        self.handle_batch(0, deltas, is_in_initial_list)
    }

    /// Makes room for `additional` more objects in the informer's indexer
    /// ([`Indexer::reserve`]).
    pub(crate) fn reserve(&self, additional: usize) {
        lock(&self.block_deltas).reserve(additional);
    }

    /// [`handle_deltas`](SharedInformer::handle_deltas) of the caller's batch number `batch` (a
    /// pop's sequence number), which every delivery of its notifications carries.
    pub fn handle_batch(
        &self,
        batch: u64,
        deltas: &Deltas<K>,
        is_in_initial_list: bool,
    ) -> Vec<Distribution<K>> {
        let mut indexer = lock(&self.block_deltas);
        let mut distributor = Distributor {
            processor: &self.processor,
            batch,
            out: Vec::with_capacity(deltas.len()),
            rule: self.sync_rule,
            delta_type: DeltaType::Added,
        };
        if self.sync_rule == SyncRule::ResourceVersion {
            process_deltas(&mut distributor, &mut indexer, deltas, is_in_initial_list);
        } else {
            // The older rules read the delta's type, which `processDeltas` does not pass on.
            for delta in deltas {
                distributor.delta_type = delta.type_;
                process_delta(&mut distributor, &mut indexer, delta, is_in_initial_list);
            }
        }
        distributor.out
    }

    /// The informer's `HasSynced` may have turned true with nothing handed to some handler (an
    /// empty initial list): lets each listener notice it ([`ProcessorListener::notice_sync`]).
    /// Call it whenever the queue may have synced, holding no lock of the cache or the queue.
    pub fn notice_sync(&self) {
        for listener in self.processor.listeners() {
            listener.notice_sync();
        }
    }

    /// The Reflector's `ShouldResync`, called on each tick of its resync timer:
    /// [`SharedProcessor::should_resync`] at the informer clock's now.
    pub fn should_resync(&self) -> bool {
        self.processor.should_resync(self.clock.now())
    }

    /// What happens to the informer's handlers when client-go's `Run` returns: no handler can be
    /// added any more, and the processor stops, abandoning what the handlers had not yet been
    /// given and waiting for the calls in progress.
    pub fn stop(&self) {
        lock(&self.lifecycle).stopped = true;
        self.processor.stop();
    }
}

impl<K> SharedInformer<K> {
    /// The informer's `HasSynced`: the queue's, once started; false before. Says nothing of the
    /// handlers: each [`Registration`]'s listener has its own.
    pub fn has_synced(&self) -> bool {
        self.upstream.get().is_some_and(|synced| synced())
    }

    /// The cache, for reading: only [`handle_deltas`](SharedInformer::handle_deltas) writes to
    /// it.
    pub fn indexer(&self) -> &IndexerReader<K> {
        &self.indexer
    }

    /// The processor and its listeners.
    pub fn processor(&self) -> &SharedProcessor<K> {
        &self.processor
    }

    /// The resync periods as they stand (the check period is final once started).
    pub fn resync_plan(&self) -> ResyncPlan {
        lock(&self.lifecycle).plan
    }

    /// Whether [`start`](SharedInformer::start) was called.
    pub fn is_started(&self) -> bool {
        lock(&self.lifecycle).plan.is_started()
    }

    /// Whether [`stop`](SharedInformer::stop) was called.
    pub fn is_stopped(&self) -> bool {
        lock(&self.lifecycle).stopped
    }
}

/// The informer as `processDeltas`' handler: client-go's `sharedIndexInformer.OnAdd`, `OnUpdate`
/// and `OnDelete`, which distribute instead of handling.
struct Distributor<'a, K> {
    processor: &'a SharedProcessor<K>,
    batch: u64,
    out: Vec<Distribution<K>>,
    rule: SyncRule,
    /// The type of the delta being applied (read by the rules before v0.24 only).
    delta_type: DeltaType,
}

impl<K: ResourceVersioned> ResourceEventHandler<K> for Distributor<'_, K> {
    fn on_add(&mut self, obj: &Arc<K>, is_in_initial_list: bool) {
        let notification = Notification::Add {
            obj: obj.clone(),
            is_in_initial_list,
        };
        // Only v0.17's `HandleDeltas` makes an add a sync notification: a `Sync` delta's.
        let sync = self.rule == SyncRule::DeltaType && self.delta_type == DeltaType::Sync;
        self.out.push(
            self.processor
                .distribute_from(self.batch, notification, sync),
        );
    }

    fn on_update(&mut self, old: &Arc<K>, new: &Arc<K>) {
        let sync = match (self.rule, self.delta_type) {
            (SyncRule::ResourceVersion, _) => is_sync(old.as_ref(), new.as_ref()),
            (_, DeltaType::Sync) => true,
            (SyncRule::SyncOrUnchangedReplaced, DeltaType::Replaced) => {
                is_sync(old.as_ref(), new.as_ref())
            }
            _ => false,
        };
        let notification = Notification::Update {
            old: old.clone(),
            new: new.clone(),
        };
        self.out.push(
            self.processor
                .distribute_from(self.batch, notification, sync),
        );
    }

    fn on_delete(&mut self, obj: &DeltaObject<K>) {
        let notification = Notification::Delete { obj: obj.clone() };
        self.out.push(
            self.processor
                .distribute_from(self.batch, notification, false),
        );
    }
}

#[cfg(test)]
#[path = "shared_informer_tests.rs"]
mod tests;
