//! What a replay needs from the informer it feeds, besides list and watch calls: the consumer's
//! turn after each group of lines ([`Quiescence`]), and resyncs where the recording has them
//! ([`ResyncHook`]). The [`Informer`] is both; an [`InformerSlot`] stands for one that a session
//! builds after the replay; [`InlineDrain`] makes any other consumer take turns.

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use futures_util::future::BoxFuture;

use crate::cache::Informer;

/// Turn-taking between an instant replay and the consumer of its queue.
///
/// An instant replay hands the Reflector every line of one `t`, then calls
/// [`idle`](Quiescence::idle): the consumer gets its turn, pops until the queue is empty, and
/// hands the turn back; then the next `t` follows. Outside its turns the consumer must not pop,
/// or it could take a key's first delta before the rest of its `t` group arrives. That is what
/// makes the batches independent of how fast the consumer is.
pub trait Quiescence: Send + Sync + 'static {
    /// Gives the consumer its turn and completes once it has drained the queue and handled every
    /// batch it popped. Called only while the Reflector waits for it, so nothing is queued
    /// meanwhile.
    fn idle(&self) -> BoxFuture<'_, ()>;
}

/// An informer built with [`Consumption::Inline`](crate::cache::Consumption::Inline) takes its
/// turns on the replay's thread: [`Informer::drain`], with no hand-over between threads per
/// group of lines (a replay of a million events would make a million).
impl Quiescence for Informer {
    fn idle(&self) -> BoxFuture<'_, ()> {
        self.drain();
        Box::pin(std::future::ready(()))
    }
}

/// The [`Quiescence`] of a consumer that is not an informer's (a plain `Fifo` popped by hand, an
/// `UndeltaStore`'s pushes): at the end of every `t` group the replay calls `drain`, which pops
/// until the store is empty and handles what it popped. After the Reflector has stopped, call
/// [`drain`](InlineDrain::drain) once more for the last group.
pub struct InlineDrain<F> {
    drain: Mutex<F>,
}

impl<F> fmt::Debug for InlineDrain<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InlineDrain").finish_non_exhaustive()
    }
}

impl<F: FnMut() + Send + 'static> InlineDrain<F> {
    /// A consumer that drains its store with `drain`.
    pub fn new(drain: F) -> Self {
        InlineDrain {
            drain: Mutex::new(drain),
        }
    }

    /// Drains the store now.
    pub fn drain(&self) {
        let mut drain = self.drain.lock().unwrap_or_else(|e| e.into_inner());
        (*drain)();
    }
}

impl<F: FnMut() + Send + 'static> Quiescence for InlineDrain<F> {
    fn idle(&self) -> BoxFuture<'_, ()> {
        self.drain();
        Box::pin(std::future::ready(()))
    }
}

/// Receives a recording's `RESYNC` lines, at their place among the other lines: everything before
/// has been applied to the queue, nothing after yet.
pub trait ResyncHook: Send + Sync + 'static {
    /// Resync now; `at` is the recorded time of the line.
    fn resync(&self, at: SystemTime);
}

impl<F: Fn(SystemTime) + Send + Sync + 'static> ResyncHook for F {
    fn resync(&self, at: SystemTime) {
        self(at)
    }
}

/// A recorded resync is what a tick of the informer's resync timer does.
impl ResyncHook for Informer {
    fn resync(&self, at: SystemTime) {
        Informer::resync(self, at);
    }
}

/// The informer a replay feeds, when it is built after the replay (by a session that builds
/// one informer per source): empty until [`fill`](InformerSlot::fill)ed, and until then its
/// turns and resyncs do nothing (nothing can be queued before the informer runs).
#[derive(Default)]
pub struct InformerSlot(OnceLock<Arc<Informer>>);

impl fmt::Debug for InformerSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("InformerSlot").field(&self.0.get()).finish()
    }
}

impl InformerSlot {
    /// Puts `informer` in the slot; a second one is ignored.
    pub fn fill(&self, informer: Arc<Informer>) {
        let _ = self.0.set(informer);
    }
}

impl Quiescence for InformerSlot {
    fn idle(&self) -> BoxFuture<'_, ()> {
        match self.0.get() {
            Some(informer) => informer.idle(),
            None => Box::pin(std::future::ready(())),
        }
    }
}

impl ResyncHook for InformerSlot {
    fn resync(&self, at: SystemTime) {
        if let Some(informer) = self.0.get() {
            Informer::resync(informer, at);
        }
    }
}
