//! The Reflector (client-go's `tools/cache/reflector.go`): lists a resource, delivers the list to
//! its [`InformerQueue`](crate::cache::queue::InformerQueue) with one `replace`, then watches from the list's resourceVersion and queues
//! every change (and every bookmark), recovering from closed watches, expired resourceVersions and unreachable servers
//! the way client-go does.
//!
//! It is written like kube-runtime's `watcher`: an explicit state enum advanced by one `step`
//! function (`machine.rs`), a plain [`ReflectorConfig`], errors that name the phase that failed
//! ([`ReflectorError`]), and every step published as a [`ReflectorEvent`].
//!
//! | situation | what happens |
//! |---|---|
//! | first list | `resourceVersion="0"` (or `""` with `consistent_list`), pages of 500, one `replace` |
//! | relist at a resourceVersion | no `limit`, so that the watch cache answers with current data (with one, kube-apiserver reads etcd at exactly that revision); paged only with an explicit `page_size` or if the first `"0"` list came back paginated |
//! | watch closed (timeout, shutdown, dropped connection) | re-watch from the last synced resourceVersion, no relist |
//! | watch ended with 410 Expired, or an event that cannot be decoded (500) | back off, relist at the last synced resourceVersion |
//! | that list expired (410) or is ahead of the server (504 `ResourceVersionTooLarge`) | list from `""` at once |
//! | a continue token expired (410) | one unpaginated list at the same resourceVersion |
//! | watch could not be opened: refused connection, 429 | back off, re-watch |
//! | watch could not be opened: anything else | back off, relist |
//! | very short watch (< 1 s, no event) | back off, relist |
//! | streaming list ended before its initial-events-end bookmark | stream again at once, no backoff (`watchList`) |
//! | streaming list failed: very short, or an error neither retryable (429) nor expired | list + watch at once, for this ListAndWatch (from v0.29; v0.28 on 422 only, else back off and stream again: [`WatchListFallback`]) |
//! | list failed: unreachable, 429, 5xx | back off, list again |
//! | 401, 403, 404 | stop with a [`ReflectorError`] |
//! | resync period | `resync` runs only while watching (client-go's `watchWithResync`): its timer starts when a list completes and stops when a relist is decided, never during a list or a backoff before one |
//!
//! The caller owns the queue: it closes it after [`Reflector::run`] returns.

mod backoff;
mod config;
mod error;
mod event;
mod machine;
mod verify;

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::object::Object;

pub use crate::cache::clock::{Clock, TokioClock};
pub use backoff::{Backoff, BackoffConfig, BackoffReset};
pub use config::{DEFAULT_PAGE_SIZE, ReflectorConfig, Transform, WatchListFallback};
pub use error::ReflectorError;
pub use event::{
    DriftReport, NoObserver, Phase, ReflectorEvent, ReflectorEventKind, ReflectorObserver,
    RelistCause, WatchEndReason,
};

use crate::cache::listwatch::ListerWatcher;
use crate::cache::store::{KnownObjects, ReflectorStore};
use machine::{Machine, Shared};
use verify::Verifier;

/// What a resync tick does, given the tick's time: client-go's `store.Resync()`.
pub type ResyncFn = Arc<dyn Fn(SystemTime) + Send + Sync>;

/// Lists and watches one resource into a [`InformerQueue`](crate::cache::queue::InformerQueue) or another [`ReflectorStore`] (client-go's
/// `Reflector`).
pub struct Reflector<L> {
    lister_watcher: Arc<L>,
    store: Arc<dyn ReflectorStore<Object>>,
    config: ReflectorConfig,
    observer: Arc<dyn ReflectorObserver>,
    clock: Arc<dyn Clock>,
    known_objects: Option<Arc<dyn KnownObjects<Object>>>,
    resync: Option<ResyncFn>,
}

impl<L> std::fmt::Debug for Reflector<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reflector")
            .field("config", &self.config)
            .field("store", &self.store)
            .field("known_objects", &self.known_objects.is_some())
            .finish_non_exhaustive()
    }
}

impl<L: ListerWatcher> Reflector<L> {
    /// A Reflector feeding `store` from `lister_watcher`, with tokio time and no observer, as
    /// client-go's `NewReflector` takes any store: an informer's queue (an `Arc<dyn InformerQueue<_>>` or
    /// an `Arc<DeltaFifo<_>>` coerces), an `UndeltaStore`, a plain `Fifo`…
    pub fn new(
        lister_watcher: L,
        store: Arc<dyn ReflectorStore<Object>>,
        config: ReflectorConfig,
    ) -> Self {
        Reflector {
            lister_watcher: Arc::new(lister_watcher),
            store,
            config,
            observer: Arc::new(NoObserver),
            clock: Arc::new(TokioClock),
            known_objects: None,
            resync: None,
        }
    }

    /// Replaces what a resync tick does (by default the queue's `resync` and a
    /// [`ReflectorEventKind::Resync`] event), for a caller that must do more in the same step,
    /// such as writing the tick's row before the queue can be popped. The timer itself
    /// ([`ReflectorConfig::resync`]) stays the Reflector's.
    pub fn resync_with(mut self, resync: impl Fn(SystemTime) + Send + Sync + 'static) -> Self {
        self.resync = Some(Arc::new(resync));
        self
    }

    /// Publishes every step to `observer`.
    pub fn observer(mut self, observer: impl ReflectorObserver) -> Self {
        self.observer = Arc::new(observer);
        self
    }

    /// Waits and tells the time with `clock` (a virtual clock for replays).
    pub fn clock(mut self, clock: impl Clock) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// The consumer's cache (the FIFO's known objects, normally the
    /// [`Indexer`](crate::cache::Indexer)), which the consistency check compares with the server.
    /// Without it, [`ReflectorConfig::verify_every`] has no effect.
    pub fn known_objects(mut self, known: Arc<dyn KnownObjects<Object>>) -> Self {
        self.known_objects = Some(known);
        self
    }

    /// Lists and watches until `shutdown` completes (then returns `Ok(())`, dropping any open
    /// watch) or a failure that retrying cannot fix (then returns it, after publishing it as
    /// [`ReflectorEventKind::Error`]). Every other failure is retried forever.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> Result<(), ReflectorError> {
        let Reflector {
            lister_watcher,
            store,
            config,
            observer,
            clock,
            known_objects,
            resync,
        } = self;
        let shared = Arc::new(Shared::default());
        let resync = resync.unwrap_or_else(|| {
            let (store, observer) = (store.clone(), observer.clone());
            Arc::new(move |at| {
                let keys = store.resync();
                observer.observe(ReflectorEvent {
                    at,
                    kind: ReflectorEventKind::Resync { keys },
                });
            })
        });
        let resync = resync_loop(&shared, config.resync, clock.clone(), resync);
        let verify = async {
            match (config.verify_every, known_objects) {
                (Some(every), Some(known)) => {
                    let verifier = Verifier {
                        lw: lister_watcher.clone(),
                        store: store.clone(),
                        known,
                        shared: shared.clone(),
                        clock: clock.clone(),
                        page_size: config.page_size.unwrap_or(DEFAULT_PAGE_SIZE),
                    };
                    verify_loop(verifier, every, observer.clone()).await
                }
                _ => std::future::pending().await,
            }
        };
        let mut machine = Machine::new(
            lister_watcher.clone(),
            store.clone(),
            config.clone(),
            clock.clone(),
            observer.clone(),
            shared.clone(),
        );
        let main = async move {
            let mut state = machine.initial_state();
            loop {
                state = match machine.step(state).await {
                    Ok(next) => next,
                    Err(error) => {
                        machine.publish(ReflectorEventKind::Error(error.clone()));
                        return error;
                    }
                };
            }
        };
        tokio::select! {
            biased;
            () = shutdown => Ok(()),
            error = main => Err(error),
            never = resync => match never {},
            never = verify => match never {},
        }
    }
}

/// Resyncs every `period` while a watch phase lasts, with a timer started anew for each one:
/// client-go's `startResync`, which `watchWithResync` runs beside the watch loop of every
/// ListAndWatch and cancels when that returns. So no resync happens during a list or the
/// backoff before a relist, and the first one after a relist comes a whole period after it.
fn resync_loop(
    shared: &Shared,
    period: Option<Duration>,
    clock: Arc<dyn Clock>,
    resync: ResyncFn,
) -> impl Future<Output = Infallible> + use<> {
    let mut phases = shared.watch_phases();
    async move {
        let Some(period) = period.filter(|p| !p.is_zero()) else {
            return std::future::pending().await;
        };
        loop {
            let Ok(phase) = phases.wait_for(Option::is_some).await.map(|p| *p) else {
                return std::future::pending().await;
            };
            loop {
                tokio::select! {
                    biased;
                    _ = phases.wait_for(|p| *p != phase) => break,
                    () = clock.sleep(period) => resync(clock.wall()),
                }
            }
        }
    }
}

/// Runs a consistency check every `every` and publishes its outcome.
async fn verify_loop<L: ListerWatcher>(
    verifier: Verifier<L>,
    every: Duration,
    observer: Arc<dyn ReflectorObserver>,
) -> Infallible {
    loop {
        verifier.clock.sleep(every).await;
        let kind = verifier.check().await;
        observer.observe(ReflectorEvent {
            at: verifier.clock.wall(),
            kind,
        });
    }
}
