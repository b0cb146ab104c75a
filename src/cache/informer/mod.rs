//! One informer: client-go's `sharedIndexInformer.Run` with the `controller` it starts
//! (`tools/cache/shared_informer.go`, `controller.go`): a [`Reflector`] lists and watches into a
//! queue, and a consumer pops the queue into the [`Indexer`] (`processLoop` → `processDeltas`),
//! handing each batch to a [`InformerSink`].
//!
//! ```text
//!  ListerWatcher ─▶ Reflector ─▶ Queue ─pop─▶ ProcessLoop (process_deltas ─▶ Indexer) ─▶ sink.batch
//!                      └─ events, resync ticks ──────────────────────────────────────────▶ sink.event
//! ```
//!
//! Invariants:
//! - The consumer is the Indexer's only writer, by type: the informer builds the [`Indexer`],
//!   registers its indices, and moves it to the consumer when it runs (into the [`ProcessLoop`],
//!   or the [`SharedInformer`] the controller applies through); everyone else, the queue's
//!   known-objects checks included, holds an [`IndexerReader`] ([`indexer`](Informer::indexer)).
//!   client-go's `GetIndexer()` hands out the writable store instead.
//! - The consumer applies each batch inside the pop, under the queue's lock, so
//!   [`has_synced`](Informer::has_synced) implies the Indexer holds the whole initial list, as
//!   `HasSynced` does in client-go.
//! - The sink sees each batch after the pop returned, outside every lock of the cache, in the
//!   order of the pops; a batch counts as in hand (see [`ConsumerGroup`]) until the sink returns.
//! - Resyncs are timed by the Reflector (client-go's `watchWithResync`: only while it watches) or
//!   requested with [`resync`](Informer::resync) (a recording's `RESYNC` lines); either way the
//!   sink decides where, among its own output, the queue's resync happens
//!   ([`InformerSink::resync`]).
//!
//! The consumer runs in one of two ways ([`Consumption`]): on a thread of its own, popping as
//! batches come (client-go's goroutine), or on the thread of whoever calls
//! [`drain`](Informer::drain): an instant replay drains the queue after each group of recorded
//! lines sharing one time, so that which deltas share a batch depends on the recording alone,
//! never on thread timing.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

mod handler;
mod listener;
mod process_loop;
mod processor;
mod resync_plan;
mod shared_informer;

pub use handler::{Notification, ResourceEventHandler, process_delta, process_deltas};
pub use listener::{
    Delivery, Dispatch, ListenerHandler, ListenerId, ListenerStats, ProcessorListener,
    UpstreamSynced,
};
pub use process_loop::{Batch, BatchHandler, ConsumerGroup, InPop, ProcessLoop};
pub use processor::{Distribution, SharedProcessor};
pub use resync_plan::{
    HandlerResync, MINIMUM_RESYNC_PERIOD, ResyncPlan, ResyncWarning, determine_resync_period,
};
pub use shared_informer::{
    Registration, ResourceVersioned, SharedInformer, SharedInformerError, SyncRule, is_sync,
};

use crate::cache::clock::Clock;
use crate::cache::delta::DeltaObject;
use crate::cache::listwatch::ListerWatcher;
use crate::cache::queue::{
    DeltaFifo, InformerQueue, QueueKind, QueueStats, RealFifo, ReplaceTombstones,
};
use crate::cache::reflector::{
    Reflector, ReflectorConfig, ReflectorError, ReflectorEvent, ReflectorEventKind,
    ReflectorObserver,
};
use crate::cache::store::IndexSpec;
use crate::cache::store::ReflectorStore;
use crate::cache::store::{Indexer, IndexerReader, KnownObjects};
use crate::object::Object;

/// How an informer is built.
#[derive(Debug, Clone)]
pub struct InformerConfig {
    /// The queue between the Reflector and the Indexer.
    pub queue: QueueKind,
    /// `replace` queues `Replaced` deltas (client-go's `EmitDeltaTypeReplaced`); `false` queues
    /// `Sync`, as informers before it did.
    pub emit_replaced: bool,
    /// Most deltas one pop takes (client-go's `PopBatch`; a DeltaFIFO pop is always one key).
    pub batch_pop: usize,
    /// The Indexer's indices.
    pub indices: Vec<IndexSpec>,
    /// Where the consumer runs.
    pub consumption: Consumption,
    /// What the consumer hands each batch to, besides the sink.
    pub kind: InformerKind,
    /// Which updates the shared informer hands only to the handlers whose resync is due.
    pub sync_rule: SyncRule,
    /// Which keys missing from a relist the DeltaFIFO queues tombstones for.
    pub replace_tombstones: ReplaceTombstones,
    /// The atomic RealFIFO releases its lock while a pop is processed
    /// (`UnlockWhileProcessingFIFO`); only an atomic queue does.
    pub unlock_while_processing: bool,
    /// The resync timer is run by the source on its own clock (a replay's, where a Reflector
    /// timer would fire at once: its sleeps do not wait), which calls
    /// [`resync_tick`](Informer::resync_tick) every
    /// [`external_resync_period`](Informer::external_resync_period); the Reflector runs none.
    pub external_resync: bool,
}

/// How an informer calls its event handlers (client-go has two constructors).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InformerKind {
    /// `NewSharedIndexInformer`: each handler has a listener with an unbounded buffer, called
    /// from its own thread ([`Informer::add_event_handler`]); the pop returns as soon as the
    /// notifications are buffered. Without handlers, the pop only applies the batch.
    #[default]
    Shared,
    /// `NewInformer`/`NewIndexerInformer`: one handler, called inside the pop under the queue's
    /// lock ([`Informer::handle_in_pop`]), so the Reflector's queue calls wait while it runs.
    Plain,
}

impl Default for InformerConfig {
    /// A DeltaFIFO informer with `Replaced` deltas, one key per pop, no index, its own thread,
    /// the rules of client-go 1.27 to 1.32.
    fn default() -> Self {
        InformerConfig {
            queue: QueueKind::Delta,
            emit_replaced: true,
            batch_pop: 1,
            sync_rule: SyncRule::ResourceVersion,
            replace_tombstones: ReplaceTombstones::QueueFirst,
            unlock_while_processing: false,
            indices: Vec::new(),
            consumption: Consumption::Thread,
            kind: InformerKind::Shared,
            external_resync: false,
        }
    }
}

impl InformerConfig {
    /// The queue this configuration asks for, `known` its known objects.
    fn build_queue(&self, known: Arc<dyn KnownObjects<Object>>) -> Arc<dyn InformerQueue<Object>> {
        match self.queue {
            QueueKind::Delta => Arc::new(
                DeltaFifo::new()
                    .known_objects(known)
                    .emit_delta_type_replaced(self.emit_replaced)
                    .replace_tombstones(self.replace_tombstones),
            ),
            QueueKind::Atomic => {
                Arc::new(RealFifo::atomic().unlock_while_processing(self.unlock_while_processing))
            }
            kind => kind.build(known, self.emit_replaced),
        }
    }
}

/// Where an informer's consumer pops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consumption {
    /// On a thread of its own, as batches come (client-go's `processLoop` goroutine).
    Thread,
    /// Only when [`Informer::drain`] is called, on the caller's thread, until the queue is empty.
    Inline,
}

/// Where an informer's batches and events go. Every method has the informer's queue at hand,
/// for the counters a renderer shows.
pub trait InformerSink: Send + Sync + 'static {
    /// A batch popped and applied to the Indexer, stamped `at` by the informer's clock when it
    /// was popped ([`Batch::time`]); called on the consumer's thread, in pop order, outside the
    /// cache's locks. The next pop waits for it to return (client-go's `processLoop` waits only
    /// for `process`, which for a shared informer is `HandleDeltas`: keep this quick).
    fn batch(&self, batch: Batch<Object>, at: SystemTime, queue: &dyn InformerQueue<Object>);

    /// A step of the Reflector (a list, a watch, a bookmark, a backoff…), when it happens.
    fn event(&self, event: ReflectorEvent, queue: &dyn InformerQueue<Object>);

    /// A resync at `at`: queue the resync (`queue.resync()`, as client-go's `store.Resync`) and
    /// report it. Overridden by a sink that must write the resync before the batches it queues
    /// can be popped.
    fn resync(&self, at: SystemTime, queue: &dyn InformerQueue<Object>) {
        let keys = queue.resync();
        let kind = ReflectorEventKind::Resync { keys };
        self.event(ReflectorEvent { at, kind }, queue);
    }

    /// The queue's `HasSynced` turned true at `at` without a pop: the `Replace` of an empty
    /// first list syncs a DeltaFIFO or RealFIFO at once (an atomic RealFIFO queues a
    /// `ReplacedAll` and syncs when it is popped), so no batch reports it. Called at most once, on
    /// the Reflector's thread right after that `Replace`, once the handlers were let notice the
    /// sync ([`SharedInformer::notice_sync`]); under [`Consumption::Inline`] they are told right
    /// after this returns.
    fn synced(&self, _at: SystemTime, _queue: &dyn InformerQueue<Object>) {}
}

/// What the Reflector writes into the informer's queue, told as each write is made (before the
/// queue takes it), on the Reflector's task and in its order (between the [`InformerSink::event`]s around it): a
/// consumer with no queue of its own, such as kube-runtime's watcher, sees the server's answers
/// here as the Reflector applied them, before any pop.
pub trait StoreTap: Send + Sync + 'static {
    /// One write.
    fn written(&self, write: StoreWrite<'_>);
}

/// One write of the Reflector into its store ([`ReflectorStore`]).
#[derive(Debug, Clone, Copy)]
pub enum StoreWrite<'a> {
    /// `add`: a watch's ADDED.
    Add(&'a Arc<Object>),
    /// `update`: a watch's MODIFIED.
    Update(&'a Arc<Object>),
    /// `delete`: a watch's DELETED.
    Delete(&'a DeltaObject<Object>),
    /// `replace`: a list, or a streaming list's initial events, complete.
    Replace(&'a [Arc<Object>]),
}

/// A sink that drops everything: an informer only there to fill its Indexer.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoSink;

impl InformerSink for NoSink {
    fn batch(&self, _: Batch<Object>, _: SystemTime, _: &dyn InformerQueue<Object>) {}
    fn event(&self, _: ReflectorEvent, _: &dyn InformerQueue<Object>) {}
}

/// One resource's informer: Reflector, queue, Indexer and consumer (see the module
/// documentation). Shared as `Arc<Informer>`: a replay source holds it to drain it and resync it.
pub struct Informer {
    queue: Arc<dyn InformerQueue<Object>>,
    /// The cache, for everyone but the consumer.
    indexer: IndexerReader<Object>,
    /// The cache's writer, from `new` until `run` moves it to the consumer.
    writer: Mutex<Option<Indexer<Object>>>,
    /// The consumer, built by `run`; locked for its life by the consumer thread, or by each
    /// `drain`.
    controller: Mutex<Option<ProcessLoop<Object, dyn InformerQueue<Object>>>>,
    /// Serializes `drain`s: one turn at a time.
    turn: Mutex<()>,
    /// Handlers registered before `run`, which registers them with the shared informer.
    handlers: Mutex<Vec<HandlerSpec>>,
    /// A plain informer's handler, run inside each pop.
    in_pop: Mutex<Option<InPop<Object>>>,
    /// The shared informer of the handlers, built by `run` if any handler was added.
    shared: OnceLock<Arc<SharedInformer<Object>>>,
    /// The listener of each handler, in registration order, kept past the processor's `stop`
    /// (which unregisters them): the summary reads their counters after the run.
    listeners: OnceLock<Vec<Arc<ProcessorListener<Object>>>>,
    /// The resync timer's period, decided by `run`: the Reflector's resync period, or with
    /// handlers the shared informer's check period.
    resync_period: OnceLock<Option<Duration>>,
    /// The controller's group: its pop numbers and batches in hand.
    group: Arc<ConsumerGroup>,
    config: InformerConfig,
    sink: Arc<dyn InformerSink>,
    /// Stops the consumer after the batch in hand, and the Reflector.
    cancel: CancellationToken,
    /// The clock of the running Reflector, which stamps batches.
    clock: OnceLock<Arc<dyn Clock>>,
    /// The consumer thread, once started.
    thread: Mutex<Option<JoinHandle<()>>>,
    /// Woken after every batch and every Reflector event: what a wait for the sync watches.
    progress: Notify,
    /// Tasks waiting on `progress`: a batch pays for waking them only when there are some.
    progress_waiters: AtomicUsize,
    /// The queue's `HasSynced` was seen true, and told (see `notice_sync`).
    sync_noticed: AtomicBool,
    /// Told every write of the Reflector, once set ([`tap_store`](Informer::tap_store)).
    tap: OnceLock<Arc<dyn StoreTap>>,
}

impl std::fmt::Debug for Informer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Informer")
            .field("queue", &self.queue)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Why an informer's run failed.
#[derive(Debug, thiserror::Error)]
pub enum InformerError {
    /// The Reflector gave up (401, 403, 404, …).
    #[error(transparent)]
    Reflector(#[from] ReflectorError),
    /// The consumer thread could not be started.
    #[error("cannot start the consumer thread")]
    Spawn(#[source] std::io::Error),
    /// A handler could not be registered or its thread started.
    #[error(transparent)]
    Handlers(SharedInformerError),
}

impl Informer {
    /// An informer built as `config` says, reporting to `sink`, numbering its pops in `group`
    /// (shared by the informers whose output is merged), stopped by `cancel`. Nothing runs
    /// until [`run`](Informer::run).
    pub fn new(
        config: InformerConfig,
        sink: Arc<dyn InformerSink>,
        group: Arc<ConsumerGroup>,
        cancel: CancellationToken,
    ) -> Arc<Self> {
        let mut writer = Indexer::new();
        for spec in &config.indices {
            // Index names are the specs' canonical text; a repeated spec keeps its first index.
            let _ = writer.add_indexer(spec.name(), spec.index_func());
        }
        let indexer = writer.reader();
        let queue = config.build_queue(Arc::new(indexer.clone()));
        Arc::new(Informer {
            queue,
            indexer,
            writer: Mutex::new(Some(writer)),
            controller: Mutex::new(None),
            turn: Mutex::new(()),
            handlers: Mutex::default(),
            in_pop: Mutex::default(),
            shared: OnceLock::new(),
            listeners: OnceLock::new(),
            resync_period: OnceLock::new(),
            group,
            config,
            sink,
            cancel,
            clock: OnceLock::new(),
            thread: Mutex::new(None),
            progress: Notify::new(),
            progress_waiters: AtomicUsize::new(0),
            sync_noticed: AtomicBool::new(false),
            tap: OnceLock::new(),
        })
    }

    /// Registers a handler of a [`InformerKind::Shared`] informer (a plain one ignores it), before
    /// [`run`](Informer::run):
    /// as client-go's `AddEventHandler` with `resync: None` (the informer's own resync period),
    /// as `AddEventHandlerWithResyncPeriod` otherwise (0: no resyncs for this handler). Handlers
    /// are registered in this order when the informer runs.
    pub fn add_event_handler(
        &self,
        name: impl Into<String>,
        handler: impl ListenerHandler<Object>,
        resync: Option<Duration>,
    ) {
        lock(&self.handlers).push(HandlerSpec {
            name: name.into(),
            handler: Box::new(handler),
            resync,
        });
    }

    /// The handler of a [`InformerKind::Plain`] informer (a shared one ignores it), run inside
    /// each pop, under the queue's lock, with the batch's handler calls; set before
    /// [`run`](Informer::run).
    pub fn handle_in_pop(&self, handler: InPop<Object>) {
        *lock(&self.in_pop) = Some(handler);
    }

    /// Tells `tap` every write of the Reflector into the queue, from the next one on; set once
    /// (a second tap is ignored).
    pub fn tap_store(&self, tap: Arc<dyn StoreTap>) {
        let _ = self.tap.set(tap);
    }

    /// The shared informer of the handlers, once running with at least one.
    pub fn shared_informer(&self) -> Option<&Arc<SharedInformer<Object>>> {
        self.shared.get()
    }

    /// The listener of each handler, in registration order (empty before `run`), also once
    /// stopped.
    pub fn listeners(&self) -> Vec<Arc<ProcessorListener<Object>>> {
        self.listeners.get().cloned().unwrap_or_default()
    }

    /// The cache, for reading: only the consumer writes to it. Clone the handle to keep it.
    pub fn indexer(&self) -> &IndexerReader<Object> {
        &self.indexer
    }

    /// Which queue this informer runs.
    pub fn queue_kind(&self) -> QueueKind {
        self.queue.kind()
    }

    /// The configuration it was built with.
    pub fn config(&self) -> &InformerConfig {
        &self.config
    }

    /// The queue's counters.
    pub fn queue_stats(&self) -> QueueStats {
        self.queue.stats()
    }

    /// Whether nothing is queued.
    pub fn queue_is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// client-go's `HasSynced`: the initial list has been popped and applied to the Indexer.
    pub fn has_synced(&self) -> bool {
        self.queue.has_synced()
    }

    /// Completes once [`has_synced`](Informer::has_synced) holds (checked after every batch, every
    /// Reflector event, and every write of the Reflector into the queue: an empty first list
    /// syncs the queue inside its `replace`, with no batch to pop), or the informer is cancelled.
    pub async fn synced(&self) {
        let synced = async {
            loop {
                let progressed = self.progress.notified();
                tokio::pin!(progressed);
                progressed.as_mut().enable();
                let _waiting = Waiting::on(&self.progress_waiters);
                if self.has_synced() {
                    return;
                }
                progressed.await;
            }
        };
        tokio::select! {
            () = synced => {}
            () = self.cancel.cancelled() => {}
        }
    }

    /// Runs a Reflector configured by `reflector` (how it lists and watches, its resync period)
    /// from `lister_watcher` on `clock` until `until` completes (`Ok`), the informer is
    /// cancelled (`Ok`), or the Reflector gives up (`Err`). With
    /// [`Consumption::Thread`] the consumer thread starts first, and keeps popping after this
    /// returns, until [`shut_down`](Informer::shut_down).
    pub async fn run<L: ListerWatcher>(
        self: &Arc<Self>,
        lister_watcher: L,
        reflector: ReflectorConfig,
        clock: impl Clock + Clone,
        until: impl Future<Output = ()>,
    ) -> Result<(), InformerError> {
        let clock_handle: Arc<dyn Clock> = Arc::new(clock.clone());
        let _ = self.clock.set(clock_handle.clone());
        let mut reflector = reflector;
        // The first run moves the cache's writer into the consumer it builds; a later one runs
        // another Reflector into the same queue, for the same consumer.
        if let Some(indexer) = lock(&self.writer).take() {
            self.build_consumer(indexer, &mut reflector, clock_handle)?;
        }
        if self.config.external_resync {
            reflector.resync = None;
        }
        if self.config.consumption == Consumption::Thread {
            self.start_consumer().map_err(InformerError::Spawn)?;
        }
        let producer = Arc::new(Producer(self.clone()));
        let reflector = Reflector::new(lister_watcher, producer, reflector)
            .observer(SinkObserver(self.clone()))
            .clock(clock)
            .known_objects(Arc::new(self.indexer.clone()))
            .resync_with({
                let informer = self.clone();
                move |at| informer.resync_tick(at)
            });
        let until = async {
            tokio::select! {
                () = until => {}
                () = self.cancel.cancelled() => {}
            }
        };
        reflector.run(until).await?;
        Ok(())
    }

    /// Builds the consumer, which takes the cache's writer: with handlers, over a shared
    /// informer whose check period becomes `reflector`'s resync period.
    fn build_consumer(
        &self,
        indexer: Indexer<Object>,
        reflector: &mut ReflectorConfig,
        clock: Arc<dyn Clock>,
    ) -> Result<(), InformerError> {
        // Each kind calls its own handlers: a plain informer has no listeners, a shared one
        // nothing inside the pop.
        let handlers = std::mem::take(&mut *lock(&self.handlers));
        let in_pop = lock(&self.in_pop).take();
        let (handlers, in_pop) = match self.config.kind {
            InformerKind::Shared => (handlers, None),
            InformerKind::Plain => (Vec::new(), in_pop),
        };
        let mut controller = if handlers.is_empty() {
            ProcessLoop::new(self.queue.clone(), indexer)
        } else {
            let shared = self.start_handlers(indexer, handlers, reflector, clock.clone())?;
            ProcessLoop::with_shared_informer(self.queue.clone(), shared)
        }
        .batch_pop(self.config.batch_pop)
        .group(self.group.clone())
        .clock(clock);
        let _ = self
            .resync_period
            .set(reflector.resync.filter(|p| !p.is_zero()));
        if let Some(in_pop) = in_pop {
            controller = controller.in_pop(in_pop);
        }
        *lock(&self.controller) = Some(controller);
        Ok(())
    }

    /// Builds the shared informer of `handlers`, which takes the cache's writer, registers them
    /// and starts them; the resync timer becomes the informer's check period.
    fn start_handlers(
        &self,
        indexer: Indexer<Object>,
        handlers: Vec<HandlerSpec>,
        reflector: &mut ReflectorConfig,
        clock: Arc<dyn Clock>,
    ) -> Result<Arc<SharedInformer<Object>>, InformerError> {
        let own = reflector.resync.unwrap_or_default();
        let shared =
            Arc::new(SharedInformer::new(indexer, own, clock).sync_rule(self.config.sync_rule));
        let mut listeners = Vec::with_capacity(handlers.len());
        for spec in handlers {
            let registered = match spec.resync {
                None => shared.add_event_handler(spec.name, spec.handler),
                Some(period) => {
                    shared.add_event_handler_with_resync_period(spec.name, spec.handler, period)
                }
            };
            listeners.push(registered.map_err(InformerError::Handlers)?.listener);
        }
        let _ = self.listeners.set(listeners);
        let queue = self.queue.clone();
        let synced = move || queue.has_synced();
        let period = match self.config.consumption {
            Consumption::Thread => shared.start(synced),
            Consumption::Inline => shared.start_inline(synced),
        }
        .map_err(InformerError::Handlers)?;
        // The timer ticks at the resync check period; each tick resyncs the queue only if
        // some handler is due (`ShouldResync`).
        reflector.resync = period;
        let _ = self.shared.set(shared.clone());
        Ok(shared)
    }

    /// A tick of the resync timer (the Reflector's, or the source's with
    /// [`InformerConfig::external_resync`]): with handlers, client-go's `ShouldResync` (each one
    /// is marked by whether its own period is due, and the queue resyncs only if one is), then
    /// the resync. Without handlers the queue resyncs at every tick, where client-go's
    /// `shouldResync` would find no listener due: deliberately, so that `--resync` shows the
    /// queue's resyncs without a handler (as one default handler would make them).
    pub fn resync_tick(&self, at: SystemTime) {
        let due = self
            .shared
            .get()
            .is_none_or(|shared| shared.should_resync());
        if due {
            self.resync(at);
        }
    }

    /// The period the source must tick [`resync_tick`](Informer::resync_tick) at, for an
    /// informer with [`InformerConfig::external_resync`] that runs; `None` otherwise or without
    /// resyncs.
    pub fn external_resync_period(&self) -> Option<Duration> {
        if !self.config.external_resync {
            return None;
        }
        self.resync_period.get().copied().flatten()
    }

    /// A resync that a recorded informer did (a recording's `RESYNC` line): its ticks found some
    /// handler due, so the queue resyncs whatever these handlers' periods; they are marked by
    /// their own periods all the same (`ShouldResync`), which decides who gets the sync
    /// notifications.
    pub fn recorded_resync(&self, at: SystemTime) {
        if let Some(shared) = self.shared.get() {
            let _ = shared.should_resync();
        }
        self.resync(at);
    }

    /// A resync now, regardless of the handlers' periods: the sink queues it and reports it
    /// ([`InformerSink::resync`]).
    pub fn resync(&self, at: SystemTime) {
        self.sink.resync(at, self.queue.as_ref());
        self.progressed();
    }

    /// Pops until the queue is empty (or the informer is cancelled), on the caller's thread,
    /// handing each batch to the sink: the consumer's turn under [`Consumption::Inline`].
    /// Does nothing under [`Consumption::Thread`], whose thread pops on its own.
    ///
    /// The handlers of an inline informer are called here too, on the informer's clock: first
    /// the calls due by now from earlier turns, then after each batch the calls it made due (see
    /// [`SharedInformer::call_until`]).
    pub fn drain(&self) {
        if self.config.consumption != Consumption::Inline {
            return;
        }
        let _turn = lock(&self.turn);
        let mut controller = lock(&self.controller);
        let Some(controller) = controller.as_mut() else {
            return;
        };
        self.call_handlers_until_now();
        while !self.cancel.is_cancelled() {
            let Some(batch) = controller.try_process_next() else {
                return;
            };
            self.handle(controller, batch);
            self.call_handlers_until_now();
        }
    }

    /// [`drain`](Informer::drain), then the handler calls that begin by `next` (the clock's
    /// instant of what comes next: so that they come before it).
    pub fn drain_until(&self, next: Instant) {
        self.drain();
        if self.config.consumption == Consumption::Inline
            && let Some(shared) = self.shared.get()
        {
            let _turn = lock(&self.turn);
            shared.call_until(next);
        }
    }

    /// After the `Replace` that synced an empty first list: an inline informer's handlers hear of
    /// the sync now, on the Reflector's thread, as they hear of a pop's sync right after its
    /// batch ([`drain`](Informer::drain)). Left to the consumer's next turn, it would go untold
    /// whenever the informer stops first: the sink may cancel it at this very sync (a session
    /// that ends once synced), and the Reflector leaves at its next wait, before any further
    /// turn. Only the sync can be due: nothing was queued before this first write, so no
    /// handler has a call. A threaded listener's own thread tells it
    /// ([`ProcessorListener::notice_sync`]).
    fn tell_inline_handlers_synced(&self) {
        if self.config.consumption != Consumption::Inline {
            return;
        }
        let _turn = lock(&self.turn);
        self.call_handlers_until_now();
    }

    /// An inline informer's handler calls that begin by its clock's now.
    fn call_handlers_until_now(&self) {
        if let (Some(shared), Some(clock)) = (self.shared.get(), self.clock.get()) {
            shared.call_until(clock.now());
        }
    }

    /// Ends the informer's consumption once its source has nothing more: closes the queue, and
    /// lets the consumer pop what it holds (on the calling thread under
    /// [`Consumption::Inline`]); completes once all of it was handled (or the informer is
    /// cancelled).
    pub async fn finish(&self) {
        self.queue.close();
        if self.config.consumption == Consumption::Inline {
            self.drain();
        }
        let group = &self.group;
        let drained = group.wait_until(|| self.queue.is_empty() && group.in_hand() == 0);
        tokio::select! {
            () = drained => {}
            () = self.cancel.cancelled() => return,
        }
        let Some(shared) = self.shared.get() else {
            return;
        };
        match self.config.consumption {
            // Every call left, however late on the clock a slow handler makes them.
            Consumption::Inline => {
                let _turn = lock(&self.turn);
                while !self.cancel.is_cancelled() && shared.call_until(far_future()) > 0 {}
            }
            Consumption::Thread => {
                let listeners = shared.processor().listeners();
                let cancel = self.cancel.clone();
                let waited = tokio::task::spawn_blocking(move || {
                    for listener in listeners {
                        // `false` at once for a listener stopped in a call: the cancel ends that.
                        while !listener.wait_drained(Duration::from_millis(100))
                            && !cancel.is_cancelled()
                        {
                            std::thread::sleep(Duration::from_millis(1));
                        }
                    }
                });
                tokio::select! {
                    _ = waited => {}
                    () = self.cancel.cancelled() => {}
                }
            }
        }
    }

    /// Closes every handler's listener without waiting for it: what the buffers hold is
    /// abandoned (counted in [`ListenerStats::abandoned`](super::ListenerStats::abandoned)), a
    /// call in progress runs to its end, and no call begins after it. The first half of stopping
    /// the handlers ([`shut_down`](Informer::shut_down) joins them): for a caller that must cut
    /// the calls in progress short and not have the buffered ones made instead.
    pub fn abandon_handler_buffers(&self) {
        for listener in self.listeners() {
            listener.close();
        }
    }

    /// Closes the queue and waits for the consumer thread to end: after the batch in hand if the
    /// informer was cancelled, once the queue is drained otherwise. `false` if it panicked.
    ///
    /// The handlers stop too, abandoning what their buffers still hold, as client-go's processor
    /// does when the informer stops (call [`finish`](Informer::finish) first to let them finish).
    pub async fn shut_down(&self) -> bool {
        self.queue.close();
        if let Some(shared) = self.shared.get().cloned() {
            // Joins the handler threads, which may be in a call.
            let _ = tokio::task::spawn_blocking(move || shared.stop()).await;
        }
        let thread = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
        let Some(thread) = thread else { return true };
        matches!(
            tokio::task::spawn_blocking(move || thread.join()).await,
            Ok(Ok(()))
        )
    }

    fn start_consumer(self: &Arc<Self>) -> std::io::Result<()> {
        let mut thread = self.thread.lock().unwrap_or_else(|e| e.into_inner());
        if thread.is_some() {
            return Ok(());
        }
        let informer = self.clone();
        *thread = Some(
            std::thread::Builder::new()
                .name("consumer".into())
                .spawn(move || informer.consume())?,
        );
        Ok(())
    }

    /// The consumer thread: pops until the queue is closed and drained, or a cancellation.
    fn consume(&self) {
        let mut controller = lock(&self.controller);
        let Some(controller) = controller.as_mut() else {
            return;
        };
        while !self.cancel.is_cancelled() {
            let Some(batch) = controller.process_next() else {
                return;
            };
            let handled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.handle(controller, batch);
            }));
            if let Err(panic) = handled {
                // Whatever waits for this batch (the next pop's turn) must not wait forever:
                // the informer stops, and whoever joins this thread hears of the panic.
                self.group.handled();
                self.cancel.cancel();
                std::panic::resume_unwind(panic);
            }
        }
    }

    fn handle(
        &self,
        controller: &ProcessLoop<Object, dyn InformerQueue<Object>>,
        batch: Batch<Object>,
    ) {
        // Stamped when popped: a plain informer's handler ran inside the pop since.
        let at = batch.time;
        // The handlers hear of a sync this pop made before the sink reports the batch: a limit
        // that the sink reaches there then waits for their sync too (a pop that syncs with
        // nothing for a handler, like an atomic queue's empty `ReplacedAll`, leaves no call of
        // theirs to notice it at its end).
        self.notice_sync();
        self.sink.batch(batch, at, self.queue.as_ref());
        controller.consumer_group().handled();
        self.progressed();
    }
}

impl Informer {
    /// Wakes the waits for the sync, if any.
    fn progressed(&self) {
        if self.progress_waiters.load(Ordering::SeqCst) > 0 {
            self.progress.notify_waiters();
        }
    }

    /// Called wherever the queue's `HasSynced` may have turned true: after each write of the
    /// Reflector and each batch. The first time it holds, wakes the waits for the sync and lets
    /// the handlers notice it ([`SharedInformer::notice_sync`]), even if nothing was popped or
    /// handed to them: client-go's `DeltaFIFO.HasSynced` and `RealFIFO.HasSynced` are
    /// `populated && initialPopulationCount == 0`, and their `Replace` of an empty list (with
    /// nothing known to delete) sets both at once, so that list is synced by the `Replace`
    /// itself. client-go's callers poll `HasSynced`; here it is noticed where it changes.
    /// Returns whether this call noticed it.
    fn notice_sync(&self) -> bool {
        if self.sync_noticed.load(Ordering::Acquire) || !self.queue.has_synced() {
            return false;
        }
        if self.sync_noticed.swap(true, Ordering::AcqRel) {
            return false;
        }
        if let Some(shared) = self.shared.get() {
            shared.notice_sync();
        }
        self.progressed();
        true
    }
}

/// The informer's queue as its Reflector writes into it (what [`Reflector::new`] would adapt
/// it to), noticing after each write whether the queue synced.
struct Producer(Arc<Informer>);

impl std::fmt::Debug for Producer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.queue.fmt(f)
    }
}

impl Producer {
    fn tap(&self, write: StoreWrite<'_>) {
        if let Some(tap) = self.0.tap.get() {
            tap.written(write);
        }
    }
}

impl ReflectorStore<Object> for Producer {
    fn add(&self, obj: Arc<Object>) {
        self.tap(StoreWrite::Add(&obj));
        self.0.queue.add(obj);
        self.0.notice_sync();
    }

    fn update(&self, obj: Arc<Object>) {
        self.tap(StoreWrite::Update(&obj));
        self.0.queue.update(obj);
        self.0.notice_sync();
    }

    fn delete(&self, obj: DeltaObject<Object>) -> bool {
        self.tap(StoreWrite::Delete(&obj));
        let queued = self.0.queue.delete(obj);
        self.0.notice_sync();
        queued
    }

    fn replace(&self, list: Vec<Arc<Object>>, resource_version: &str) {
        self.tap(StoreWrite::Replace(&list));
        // Only a first list that finds nothing can sync the queue here, where no pop reports it
        // (any other sync is a pop's, which the consumer reports after its batch).
        let first_and_empty = list.is_empty() && !self.0.queue.stats().populated;
        self.0.queue.replace(list, resource_version);
        if self.0.notice_sync() && first_and_empty {
            let at = self
                .0
                .clock
                .get()
                .map_or_else(SystemTime::now, |clock| clock.wall());
            self.0.sink.synced(at, self.0.queue.as_ref());
            self.0.tell_inline_handlers_synced();
        }
    }

    fn resync(&self) -> usize {
        self.0.queue.resync()
    }

    fn bookmark(&self, resource_version: &str) {
        self.0.queue.bookmark(resource_version);
    }

    fn has_synced(&self) -> bool {
        self.0.queue.has_synced()
    }

    fn is_drained(&self) -> bool {
        self.0.queue.is_empty()
    }
}

/// Counts a waiter on `progress` while it lives.
struct Waiting<'a>(&'a AtomicUsize);

impl<'a> Waiting<'a> {
    fn on(count: &'a AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        Waiting(count)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// A handler registered before the informer runs.
struct HandlerSpec {
    name: String,
    handler: Box<dyn ListenerHandler<Object>>,
    resync: Option<Duration>,
}

/// Later than any handler call of a replay: what `finish` calls inline handlers until.
fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(100 * 365 * 24 * 3600)
}

/// Hands the Reflector's events to the informer's sink.
struct SinkObserver(Arc<Informer>);

impl ReflectorObserver for SinkObserver {
    fn observe(&self, event: ReflectorEvent) {
        let informer = &self.0;
        informer.sink.event(event, informer.queue.as_ref());
        informer.progressed();
    }
}

#[cfg(test)]
#[path = "informer_tests.rs"]
mod tests;
