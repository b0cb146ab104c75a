//! What a source can ask of the pipeline beyond list and watch calls ([`Hooks`]): to end the
//! session when it runs dry, to see its informer's events, to have its consumer drained on its
//! own thread, and to trigger resyncs. `watch` uses none of them; `replay` and `record` do.

use std::error::Error;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use futures_util::future::BoxFuture;
use kubectl_deltas::Object;
use kubectl_deltas::cache::{Queue, ReflectorObserver};
use kubectl_deltas::source::recording::{Quiescence, ResyncHook};

use super::consumer::Consumer;
use super::output::Output;

/// Completes when a source has nothing more to give, with why.
pub type SourceEnd = BoxFuture<'static, Result<(), Box<dyn Error + Send + Sync>>>;

/// How a source takes part in a session besides answering list and watch calls. All optional.
#[derive(Default)]
pub struct Hooks {
    /// Completes when the source has nothing more (the end of a recording): its Reflector is
    /// stopped, its queue closed and drained, and once every source has ended so the session
    /// ends with [`Ended::EndOfInput`](super::Ended::EndOfInput). An `Err` ends it with
    /// [`PipelineError::Source`](super::PipelineError::Source), after what came before is
    /// written.
    pub end: Option<SourceEnd>,
    /// Also told every event of this source's informer, the pipeline's resyncs included (which
    /// is how `record` writes its `RESYNC` lines).
    pub observer: Option<Arc<dyn ReflectorObserver>>,
    /// Drain the queue on the source's own thread, when the source asks, instead of popping on
    /// a consumer thread (an instant replay's turns).
    pub inline: Option<Arc<InlineConsumer>>,
    /// Lets the source resync its queue as the pipeline's `--resync` ticker does (a replay's
    /// `RESYNC` lines).
    pub resync: Option<ResyncHandle>,
}

impl fmt::Debug for Hooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hooks")
            .field("end", &self.end.is_some())
            .field("observer", &self.observer.is_some())
            .field("inline", &self.inline.is_some())
            .field("resync", &self.resync.is_some())
            .finish()
    }
}

/// A consumer that pops on the thread of whoever calls [`Quiescence::idle`]: an instant replay
/// calls it between two groups of lines, and it pops and writes until the queue is empty. No
/// hand-over between threads per group, which a replay of one event per millisecond would do a
/// million times for a million events.
///
/// Until the pipeline attaches its consumer, `idle` has nothing to drain. `release` does
/// nothing: once the source has ended, the pipeline drains the queue one last time itself.
#[derive(Default)]
pub struct InlineConsumer {
    consumer: Mutex<Option<Consumer>>,
}

impl fmt::Debug for InlineConsumer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InlineConsumer").finish_non_exhaustive()
    }
}

impl InlineConsumer {
    pub(super) fn attach(&self, consumer: Consumer) {
        *self.lock() = Some(consumer);
    }

    /// Pops and writes until the queue is empty (or the session stops).
    pub(super) fn drain(&self) {
        if let Some(consumer) = self.lock().as_ref() {
            consumer.drain();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Consumer>> {
        self.consumer.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Quiescence for InlineConsumer {
    fn idle(&self) -> BoxFuture<'_, ()> {
        self.drain();
        Box::pin(std::future::ready(()))
    }

    fn release(&self) {}
}

/// A source's way to resync its queue: the same as a tick of the pipeline's `--resync` ticker,
/// at the time the source gives. Cheap to clone; does nothing until the pipeline runs.
#[derive(Clone, Default)]
pub struct ResyncHandle {
    point: Arc<OnceLock<ResyncPoint>>,
}

impl fmt::Debug for ResyncHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResyncHandle")
            .field("attached", &self.point.get().is_some())
            .finish()
    }
}

impl ResyncHandle {
    pub(super) fn attach(&self, point: ResyncPoint) {
        let _ = self.point.set(point);
    }
}

impl ResyncHook for ResyncHandle {
    fn resync(&self, at: SystemTime) {
        if let Some(point) = self.point.get() {
            point.resync(at);
        }
    }
}

/// Where one informer's resyncs happen: the queue's resync and its row, both under the output's
/// lock (so the row precedes the Sync batches it queued), then the source's observer.
#[derive(Clone)]
pub(super) struct ResyncPoint {
    pub(super) output: Arc<Output>,
    pub(super) index: usize,
    /// `None` for an UndeltaStore, whose resync does nothing.
    pub(super) fifo: Option<Arc<dyn Queue<Object>>>,
    pub(super) observer: Option<Arc<dyn ReflectorObserver>>,
}

impl ResyncPoint {
    pub(super) fn resync(&self, at: SystemTime) {
        let event = self.output.resync(self.index, self.fifo.as_deref(), at);
        if let Some(observer) = &self.observer {
            observer.observe(event);
        }
    }
}
