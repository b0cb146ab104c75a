//! One informer: client-go's `sharedIndexInformer.Run` with the `controller` it starts
//! (`tools/cache/shared_informer.go`, `controller.go`): a [`Reflector`] lists and watches into a
//! queue, and a consumer pops the queue into the [`Indexer`] (`processLoop` → `processDeltas`),
//! handing each batch to a [`InformerSink`].
//!
//! ```text
//!  ListerWatcher ─▶ Reflector ─▶ Queue ─pop─▶ Controller (process_deltas ─▶ Indexer) ─▶ sink.batch
//!                      └─ events, resync ticks ─────────────────────────────────────────▶ sink.event
//! ```
//!
//! Invariants:
//! - The consumer is the Indexer's only writer: it applies each batch inside the pop, under the
//!   queue's lock, so [`has_synced`](Informer::has_synced) implies the Indexer holds the whole
//!   initial list, as `HasSynced` does in client-go.
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
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::thread::JoinHandle;
use std::time::SystemTime;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::controller::{Batch, ConsumerGroup, Controller};
use super::index_spec::IndexSpec;
use super::indexer::Indexer;
use super::listwatch::ListerWatcher;
use super::queue::{FifoStats, Queue, QueueKind};
use super::reflector::{
    Clock, Reflector, ReflectorConfig, ReflectorError, ReflectorEvent, ReflectorEventKind,
    ReflectorObserver,
};
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
}

impl Default for InformerConfig {
    /// A DeltaFIFO informer with `Replaced` deltas, one key per pop, no index, its own thread.
    fn default() -> Self {
        InformerConfig {
            queue: QueueKind::Delta,
            emit_replaced: true,
            batch_pop: 1,
            indices: Vec::new(),
            consumption: Consumption::Thread,
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
    /// A batch popped and applied to the Indexer, stamped `at` by the informer's clock; called
    /// on the consumer's thread, in pop order, outside the cache's locks. The next pop waits
    /// for it to return, as client-go's `processLoop` waits for its handlers.
    fn batch(&self, batch: Batch<Object>, at: SystemTime, queue: &dyn Queue<Object>);

    /// A step of the Reflector (a list, a watch, a bookmark, a backoff…), when it happens.
    fn event(&self, event: ReflectorEvent, queue: &dyn Queue<Object>);

    /// A resync at `at`: queue the resync (`queue.resync()`, as client-go's `store.Resync`) and
    /// report it. Overridden by a sink that must write the resync before the batches it queues
    /// can be popped.
    fn resync(&self, at: SystemTime, queue: &dyn Queue<Object>) {
        let keys = queue.resync();
        let kind = ReflectorEventKind::Resync { keys };
        self.event(ReflectorEvent { at, kind }, queue);
    }
}

/// A sink that drops everything: an informer only there to fill its Indexer.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoSink;

impl InformerSink for NoSink {
    fn batch(&self, _: Batch<Object>, _: SystemTime, _: &dyn Queue<Object>) {}
    fn event(&self, _: ReflectorEvent, _: &dyn Queue<Object>) {}
}

/// One resource's informer: Reflector, queue, Indexer and consumer (see the module
/// documentation). Shared as `Arc<Informer>`: a replay source holds it to drain it and resync it.
pub struct Informer {
    queue: Arc<dyn Queue<Object>>,
    indexer: Arc<Indexer<Object>>,
    /// The consumer: held by the consumer thread for its whole life, or by `drain` for a turn.
    controller: Mutex<Controller<Object, dyn Queue<Object>>>,
    /// The controller's group, reachable while the consumer thread holds the controller.
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
        let indexer = Indexer::new();
        for spec in &config.indices {
            // Index names are the specs' canonical text; a repeated spec keeps its first index.
            let _ = indexer.add_indexer(spec.name(), spec.index_func());
        }
        let indexer = Arc::new(indexer);
        let queue = config.queue.build(indexer.clone(), config.emit_replaced);
        let controller = Controller::new(queue.clone(), indexer.clone())
            .batch_pop(config.batch_pop)
            .group(group.clone());
        Arc::new(Informer {
            queue,
            indexer,
            controller: Mutex::new(controller),
            group,
            config,
            sink,
            cancel,
            clock: OnceLock::new(),
            thread: Mutex::new(None),
            progress: Notify::new(),
        })
    }

    /// The cache, for reading: only the consumer writes to it.
    pub fn indexer(&self) -> &Arc<Indexer<Object>> {
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
    pub fn queue_stats(&self) -> FifoStats {
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

    /// Completes once [`has_synced`](Informer::has_synced) holds (checked after every batch and
    /// every Reflector event), or the informer is cancelled.
    pub async fn synced(&self) {
        let synced = async {
            loop {
                let progressed = self.progress.notified();
                tokio::pin!(progressed);
                progressed.as_mut().enable();
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
        let _ = self.clock.set(Arc::new(clock.clone()));
        if self.config.consumption == Consumption::Thread {
            self.start_consumer().map_err(InformerError::Spawn)?;
        }
        let reflector = Reflector::new(lister_watcher, self.queue.clone(), reflector)
            .observer(SinkObserver(self.clone()))
            .clock(clock)
            .known_objects(self.indexer.clone())
            .resync_with({
                let informer = self.clone();
                move |at| informer.resync(at)
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

    /// A resync now, as a tick of the Reflector's resync timer does: the sink queues it and
    /// reports it ([`InformerSink::resync`]).
    pub fn resync(&self, at: SystemTime) {
        self.sink.resync(at, self.queue.as_ref());
        self.progress.notify_waiters();
    }

    /// Pops until the queue is empty (or the informer is cancelled), on the caller's thread,
    /// handing each batch to the sink: the consumer's turn under [`Consumption::Inline`].
    /// Does nothing under [`Consumption::Thread`], whose thread pops on its own.
    pub fn drain(&self) {
        if self.config.consumption != Consumption::Inline {
            return;
        }
        let controller = self.lock_controller();
        while !self.cancel.is_cancelled() {
            let Some(batch) = controller.try_process_next() else {
                return;
            };
            self.handle(&controller, batch);
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
            () = self.cancel.cancelled() => {}
        }
    }

    /// Closes the queue and waits for the consumer thread to end: after the batch in hand if the
    /// informer was cancelled, once the queue is drained otherwise. `false` if it panicked.
    pub async fn shut_down(&self) -> bool {
        self.queue.close();
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
        let controller = self.lock_controller();
        while !self.cancel.is_cancelled() {
            let Some(batch) = controller.process_next() else {
                return;
            };
            self.handle(&controller, batch);
        }
    }

    fn handle(&self, controller: &Controller<Object, dyn Queue<Object>>, batch: Batch<Object>) {
        let at = self.clock.get().map_or_else(SystemTime::now, |c| c.wall());
        self.sink.batch(batch, at, self.queue.as_ref());
        controller.consumer_group().handled();
        self.progress.notify_waiters();
    }

    fn lock_controller(&self) -> MutexGuard<'_, Controller<Object, dyn Queue<Object>>> {
        self.controller.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Hands the Reflector's events to the informer's sink.
struct SinkObserver(Arc<Informer>);

impl ReflectorObserver for SinkObserver {
    fn observe(&self, event: ReflectorEvent) {
        let informer = &self.0;
        informer.sink.event(event, informer.queue.as_ref());
        informer.progress.notify_waiters();
    }
}

#[cfg(test)]
#[path = "informer_tests.rs"]
mod tests;
