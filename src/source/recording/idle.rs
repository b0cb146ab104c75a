//! What a replay needs from the informer it feeds, besides list and watch calls: to know when the
//! consumer has drained the FIFO ([`Quiescence`]), and to resync the FIFO where the recording
//! says so ([`ResyncHook`]). Ready-made implementations: [`ReplayGate`] for a consumer thread,
//! [`InlineDrain`] for a consumer on the replay's thread, and [`FifoResync`] for a [`DeltaFifo`].

use std::fmt;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::SystemTime;

use crate::cache::CacheObject;
use futures_util::future::BoxFuture;
use tokio::sync::Notify;

use crate::cache::reflector::{ReflectorEvent, ReflectorEventKind, ReflectorObserver};
use crate::cache::{Batch, Controller, Queue};
use crate::object::Object;

/// Turn-taking between an instant replay and the consumer of its FIFO.
///
/// An instant replay hands the Reflector every line of one `t`, then calls
/// [`idle`](Quiescence::idle): the consumer gets its turn, pops until the FIFO is empty, and hands
/// the turn back; then the next `t` follows. Outside its turns the consumer must not pop, or it
/// could take a key's first delta before the rest of its `t` group arrives. That is what makes
/// the batches independent of how fast the consumer is.
pub trait Quiescence: Send + Sync + 'static {
    /// Gives the consumer its turn and completes once it has drained the FIFO and handled every
    /// batch it popped. Called only while the Reflector waits for it, so nothing is queued
    /// meanwhile.
    fn idle(&self) -> BoxFuture<'_, ()>;

    /// The replay is over (or was dropped): the consumer may pop freely from now on, to drain
    /// the FIFO once it is closed.
    fn release(&self);
}

/// The [`Quiescence`] of a consumer thread popping with a [`Controller`]: the consumer calls
/// [`next_batch`](ReplayGate::next_batch) instead of
/// [`Controller::process_next`], and the gate keeps it from popping outside its turns.
///
/// A replay releases the gate when it ends or is dropped, so a consumer that keeps calling
/// `next_batch` then drains the FIFO and sees its close, as with `process_next`.
pub struct ReplayGate {
    turn: Mutex<Turn>,
    /// Wakes the consumer thread when its turn comes.
    consumer: Condvar,
    /// Wakes the replay when the consumer hands the turn back.
    producer: Notify,
}

/// How many times a side checks for its turn before it sleeps.
const SPINS: u32 = 2_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Turn {
    /// The Reflector is applying lines; the consumer waits.
    Producer,
    /// The consumer pops until the FIFO is empty.
    Consumer,
    /// No more turns: the consumer pops as usual.
    Released,
}

impl fmt::Debug for ReplayGate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplayGate")
            .field("turn", &*self.lock())
            .finish()
    }
}

impl Default for ReplayGate {
    fn default() -> Self {
        Self::new()
    }
}

impl ReplayGate {
    /// A gate for a [`Pace::Instant`](super::Pace::Instant) replay, which has the first turn.
    /// (Any other pace never hands the consumer a turn: use [`released`](Self::released).)
    pub fn new() -> Self {
        Self::with_turn(Turn::Producer)
    }

    /// A gate that never holds the consumer back, for replays that do not take turns
    /// ([`Pace::Speed`](super::Pace::Speed), [`Pace::Unpaced`](super::Pace::Unpaced)), so that
    /// the consumer loop is the same in every mode.
    pub fn released() -> Self {
        Self::with_turn(Turn::Released)
    }

    fn with_turn(turn: Turn) -> Self {
        ReplayGate {
            turn: Mutex::new(turn),
            consumer: Condvar::new(),
            producer: Notify::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Turn> {
        self.turn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The consumer's pop: waits for its turn, pops and applies the next batch; when the FIFO is
    /// empty, hands the turn back and waits for the next one. Once the gate is released, the
    /// same as [`Controller::process_next`]: `None` when the FIFO is closed and drained.
    ///
    /// Call it again only after handling the batch it returned: asking for the next batch is how
    /// the consumer says it is done with the previous one.
    pub fn next_batch<K, Q>(&self, controller: &mut Controller<K, Q>) -> Option<Batch<K>>
    where
        K: CacheObject + Send + Sync,
        Q: Queue<K> + ?Sized,
    {
        let mut turn = self.lock();
        loop {
            match *turn {
                Turn::Released => {
                    drop(turn);
                    return controller.process_next();
                }
                Turn::Consumer => {
                    // Only the consumer ends its own turn, so the lock can go while it pops.
                    drop(turn);
                    if let Some(batch) = controller.try_process_next() {
                        return Some(batch);
                    }
                    turn = self.lock();
                    if *turn == Turn::Consumer {
                        *turn = Turn::Producer;
                        self.producer.notify_waiters();
                    }
                }
                Turn::Producer => {
                    // The replay's part of a turn is usually a few microseconds: wait a little
                    // without sleeping, since a futex sleep and wake-up costs more than that.
                    drop(turn);
                    let mut spins = 0;
                    while spins < SPINS && *self.lock() == Turn::Producer {
                        std::hint::spin_loop();
                        spins += 1;
                    }
                    turn = self.lock();
                    if *turn == Turn::Producer {
                        turn = self.consumer.wait(turn).unwrap_or_else(|e| e.into_inner());
                    }
                }
            }
        }
    }
}

impl Quiescence for ReplayGate {
    fn idle(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            loop {
                // Registered before the turn is handed over, so the hand-back cannot be missed.
                let handed_back = self.producer.notified();
                tokio::pin!(handed_back);
                handed_back.as_mut().enable();
                {
                    let mut turn = self.lock();
                    match *turn {
                        Turn::Released => return,
                        Turn::Producer => {
                            *turn = Turn::Consumer;
                            self.consumer.notify_all();
                        }
                        Turn::Consumer => {}
                    }
                }
                // Same for the consumer's part of a turn.
                for _ in 0..SPINS {
                    if *self.lock() != Turn::Consumer {
                        return;
                    }
                    std::hint::spin_loop();
                }
                handed_back.await;
                if *self.lock() != Turn::Consumer {
                    return;
                }
            }
        })
    }

    fn release(&self) {
        *self.lock() = Turn::Released;
        self.consumer.notify_all();
        self.producer.notify_waiters();
    }
}

/// The [`Quiescence`] of a consumer that runs on the replay's own thread: at the end of every `t`
/// group the replay calls `drain`, which pops until the FIFO is empty and handles each batch
/// (typically `while let Some(batch) = controller.try_process_next() { render(&batch) }`).
///
/// No thread hand-over per `t` group, so this is the fastest way to replay instantly; the price
/// is that handling a batch blocks the replay (which an instant replay waits for anyway). After
/// the Reflector has stopped, call [`drain`](InlineDrain::drain) once more for the last group.
pub struct InlineDrain<F> {
    drain: Mutex<F>,
}

impl<F> fmt::Debug for InlineDrain<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InlineDrain").finish_non_exhaustive()
    }
}

impl<F: FnMut() + Send + 'static> InlineDrain<F> {
    /// A consumer that drains the FIFO with `drain`.
    pub fn new(drain: F) -> Self {
        InlineDrain {
            drain: Mutex::new(drain),
        }
    }

    /// Drains the FIFO now.
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

    fn release(&self) {}
}

/// Receives a recording's `RESYNC` lines, at their place among the other lines: everything before
/// has been applied to the FIFO, nothing after yet.
pub trait ResyncHook: Send + Sync + 'static {
    /// Resync now; `at` is the recorded time of the line.
    fn resync(&self, at: SystemTime);
}

impl<F: Fn(SystemTime) + Send + Sync + 'static> ResyncHook for F {
    fn resync(&self, at: SystemTime) {
        self(at)
    }
}

/// The [`ResyncHook`] of a [`DeltaFifo`](crate::cache::DeltaFifo): what the Reflector's resync ticker does, at the
/// recorded moment: `fifo.resync()`, then a [`ReflectorEventKind::Resync`] to `observer`.
pub struct FifoResync<O> {
    fifo: Arc<dyn Queue<Object>>,
    observer: O,
}

impl<O> fmt::Debug for FifoResync<O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FifoResync")
            .field("fifo", &self.fifo)
            .finish_non_exhaustive()
    }
}

impl<O: ReflectorObserver> FifoResync<O> {
    /// Resyncs `fifo` and reports it to `observer`.
    pub fn new(fifo: Arc<dyn Queue<Object>>, observer: O) -> Self {
        FifoResync { fifo, observer }
    }
}

impl<O: ReflectorObserver> ResyncHook for FifoResync<O> {
    fn resync(&self, at: SystemTime) {
        let keys = self.fifo.resync();
        self.observer.observe(ReflectorEvent {
            at,
            kind: ReflectorEventKind::Resync { keys },
        });
    }
}
