//! What a replay needs from the informer it feeds, besides list and watch calls: the consumer's
//! turn after each group of lines ([`Quiescence`]), and resyncs where the recording has them
//! ([`ResyncHook`]). The [`Informer`] is both; an [`InformerSlot`] stands for one that a session
//! builds after the replay; [`InlineDrain`] makes any other consumer take turns.

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

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
    /// batch it popped, and done what was due before `next`, the clock's instant of the next
    /// group of lines. Called only while the Reflector waits for it, so nothing is queued
    /// meanwhile.
    fn idle(&self, next: Instant) -> BoxFuture<'_, ()>;

    /// Deltas the consumer's queue has appended to keys still queued, in all
    /// (`QueueStats::coalesced`): where its pops fell, which a recording keeps of the live queue
    /// and a replay compares with its own. `None` (the default): a consumer without such a
    /// queue.
    fn coalesced(&self) -> Option<u64> {
        None
    }

    /// The consumer's own part of [`idle`](Quiescence::idle): it drains the queue and handles
    /// what it popped, but leaves what that handed on to others (a controller's workers) for
    /// [`settle`](Quiescence::settle). A session of several consumers (a turn arbiter's) gives
    /// every one this part before any settles, so that work one consumer hands to another's
    /// controller is done in the same turn. By default the whole of `idle`.
    fn consume(&self, next: Instant) -> BoxFuture<'_, ()> {
        self.idle(next)
    }

    /// The rest of [`idle`](Quiescence::idle) after [`consume`](Quiescence::consume): the work
    /// the consumer handed on, done up to `next`. By default nothing.
    fn settle(&self, _next: Instant) {}

    /// The replay this consumer takes turns with is over: it will ask for no more turns.
    fn finished(&self) {}
}

/// An informer built with [`Consumption::Inline`](crate::cache::Consumption::Inline) takes its
/// turns on the replay's thread ([`Informer::drain_until`]), with no hand-over between threads
/// per group of lines (a replay of a million events would make a million).
impl Quiescence for Informer {
    fn idle(&self, next: Instant) -> BoxFuture<'_, ()> {
        self.drain_until(next);
        Box::pin(std::future::ready(()))
    }

    fn coalesced(&self) -> Option<u64> {
        Some(self.queue_stats().coalesced)
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
    fn idle(&self, _next: Instant) -> BoxFuture<'_, ()> {
        self.drain();
        Box::pin(std::future::ready(()))
    }
}

/// Receives a recording's `RESYNC` lines (each a resync the recorded queue did, its timer's tick
/// having found a handler due), at their place among the other lines: everything before has been
/// applied to the queue, nothing after yet.
pub trait ResyncHook: Send + Sync + 'static {
    /// The queue resyncs now, as it did when recorded; `at` is the recorded time.
    fn resync(&self, at: SystemTime);

    /// The period of a resync timer that the replay should run on its clock instead of
    /// following the recording's `RESYNC` lines (which it then skips): the replay calls
    /// [`tick`](ResyncHook::tick) every period of recorded time while the Reflector watches,
    /// as the live Reflector's timer would. `None` (the default): follow the recording.
    fn period(&self) -> Option<Duration> {
        None
    }

    /// A computed tick of the resync timer at `at`. By default a resync; an informer with
    /// handlers resyncs only if one of them is due ([`Informer::resync_tick`]).
    fn tick(&self, at: SystemTime) {
        self.resync(at);
    }
}

impl<F: Fn(SystemTime) + Send + Sync + 'static> ResyncHook for F {
    fn resync(&self, at: SystemTime) {
        self(at)
    }
}

/// A recorded resync is what the informer's queue did, whatever its handlers' periods (which
/// still decide which of them get its sync notifications); with a resync period of its own
/// ([`InformerConfig::external_resync`](crate::cache::InformerConfig::external_resync)), the
/// informer's timer ticks on the replay's clock instead.
impl ResyncHook for Informer {
    fn resync(&self, at: SystemTime) {
        self.recorded_resync(at);
    }

    fn period(&self) -> Option<Duration> {
        self.external_resync_period()
    }

    fn tick(&self, at: SystemTime) {
        self.resync_tick(at);
    }
}

/// What a replay feeds: it takes turns with the replay and resyncs where the recording says.
pub trait ReplayTarget: Quiescence + ResyncHook {}

impl<T: Quiescence + ResyncHook> ReplayTarget for T {}

/// The informer (or other store) a replay feeds, when it is built after the replay (by a
/// session that builds one per source): empty until [`fill`](InformerSlot::fill)ed, and until
/// then its turns and resyncs do nothing (nothing can be queued before it runs).
#[derive(Default)]
pub struct InformerSlot(OnceLock<Arc<dyn ReplayTarget>>);

impl fmt::Debug for InformerSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InformerSlot")
            .field("filled", &self.0.get().is_some())
            .finish()
    }
}

impl InformerSlot {
    /// Puts `target` in the slot; a second one is ignored.
    pub fn fill(&self, target: Arc<dyn ReplayTarget>) {
        let _ = self.0.set(target);
    }
}

impl Quiescence for InformerSlot {
    fn idle(&self, next: Instant) -> BoxFuture<'_, ()> {
        match self.0.get() {
            Some(target) => target.idle(next),
            None => Box::pin(std::future::ready(())),
        }
    }

    fn coalesced(&self) -> Option<u64> {
        self.0.get().and_then(|target| target.coalesced())
    }

    fn consume(&self, next: Instant) -> BoxFuture<'_, ()> {
        match self.0.get() {
            Some(target) => target.consume(next),
            None => Box::pin(std::future::ready(())),
        }
    }

    fn settle(&self, next: Instant) {
        if let Some(target) = self.0.get() {
            target.settle(next);
        }
    }
}

impl ResyncHook for InformerSlot {
    fn resync(&self, at: SystemTime) {
        if let Some(target) = self.0.get() {
            target.resync(at);
        }
    }

    fn period(&self) -> Option<Duration> {
        self.0.get().and_then(|target| target.period())
    }

    fn tick(&self, at: SystemTime) {
        if let Some(target) = self.0.get() {
            target.tick(at);
        }
    }
}

/// Several targets fed by one replay (`--compare`'s stacks on one recording): each takes its
/// turn, in order, after each group of lines, and each resyncs where the recording says. Turns
/// are taken one target after the other on the replay's thread, so the pops of the targets are
/// numbered in that order at every turn; once every target has taken its turn, `turn_over` is
/// called (the session writes the stacks' rows of the turn side by side).
pub struct ReplayTargets(pub Vec<Arc<InformerSlot>>, pub TurnOver);

/// What is called once every target has taken its turn ([`ReplayTargets`]).
pub type TurnOver = Box<dyn Fn() + Send + Sync>;

impl fmt::Debug for ReplayTargets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ReplayTargets").field(&self.0.len()).finish()
    }
}

impl Quiescence for ReplayTargets {
    fn idle(&self, next: Instant) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            for target in &self.0 {
                target.idle(next).await;
            }
            (self.1)();
        })
    }

    /// The first target's: a recording keeps the coalescing of one queue.
    fn coalesced(&self) -> Option<u64> {
        self.0.first().and_then(|target| target.coalesced())
    }

    fn consume(&self, next: Instant) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            for target in &self.0 {
                target.consume(next).await;
            }
        })
    }

    fn settle(&self, next: Instant) {
        for target in &self.0 {
            target.settle(next);
        }
        (self.1)();
    }

    fn finished(&self) {
        for target in &self.0 {
            target.finished();
        }
    }
}

impl ResyncHook for ReplayTargets {
    fn resync(&self, at: SystemTime) {
        for target in &self.0 {
            target.resync(at);
        }
    }

    /// The first target's: every target of one replay has the same period.
    fn period(&self) -> Option<Duration> {
        self.0.first().and_then(|target| target.period())
    }

    fn tick(&self, at: SystemTime) {
        for target in &self.0 {
            target.tick(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// `--compare`'s session is told once per turn, after every stack's target took it, that
    /// the stacks have caught up: with a turn arbiter's two steps (consume, then settle) as with
    /// one (idle).
    #[tokio::test]
    async fn the_turn_is_over_once_every_target_took_it() {
        let over = Arc::new(AtomicUsize::new(0));
        let told = over.clone();
        let targets = ReplayTargets(
            vec![Arc::default(), Arc::default()],
            Box::new(move || {
                told.fetch_add(1, Ordering::SeqCst);
            }),
        );
        let next = Instant::now();
        targets.idle(next).await;
        assert_eq!(over.load(Ordering::SeqCst), 1);
        targets.consume(next).await;
        assert_eq!(over.load(Ordering::SeqCst), 1);
        targets.settle(next);
        assert_eq!(over.load(Ordering::SeqCst), 2);
    }
}
