//! The informer pipeline that `watch`, `record` and `replay` run: for each resource a Reflector,
//! a queue (`--fifo`: DeltaFIFO, RealFIFO or atomic RealFIFO, see docs/queues.md) and an Indexer,
//! like a shared informer factory, with one consumer thread per resource, all writing to one
//! renderer in pop order.
//!
//! ```text
//!  Source (ListerWatcher) ─▶ Reflector task ─▶ Queue ─pop─▶ consumer thread ─┐
//!  Source (ListerWatcher) ─▶ Reflector task ─▶ Queue ─pop─▶ consumer thread ─┼─▶ Output ─▶ renderer
//!                                 └──── reflector events (observer) ─────────┘    (one mutex)
//! ```
//!
//! Before anything is listed, each resource's first line says which queue it runs
//! (`informer-start`).
//!
//! With `--store undelta` ([`undelta`]) a resource has no queue, no consumer and no Indexer: its
//! Reflector writes into an UndeltaStore, and each push is written in the store call that made it.
//!
//! The pipeline is generic over where objects come from ([`ListerWatcher`]) and over time
//! ([`Clock`]): a live cluster with tokio time for `watch`, a recording with a virtual clock for
//! `replay`. It never touches HTTP itself. A source can ask for more through its [`Hooks`]: to
//! end the session when it runs dry, to see its informer's events, to resync its queue itself,
//! and to have its queue drained on its own thread instead of a consumer thread (an instant
//! replay, which takes turns with the consumer after each group of lines).
//!
//! ## Order
//! Each pop takes the next number of one sequence shared by every resource, and batches are
//! handed to the renderer in that order, so the merged timeline reads in pop order. Reflector
//! events are written when they happen, under the same mutex. The Reflector times resyncs
//! (`--resync`: only while watching, as client-go's `watchWithResync`), and each tick calls the
//! pipeline's resync, which writes the resync row and queues the Sync deltas under that mutex:
//! the row then always precedes the batches it caused.
//!
//! ## When stdout is slower than the watch
//! Nothing is buffered between the queue and stdout: a consumer writes (and flushes) its batch,
//! sleeps `--handler-delay` if asked, and only then pops again. While it writes, the Reflector
//! keeps queueing. In a DeltaFIFO, changes to a key that is already queued coalesce into that
//! key's Deltas, so the queue holds at most one entry per key; each entry still keeps every
//! delta queued for it until it is popped, so memory grows with the rate of changes while the
//! consumer lags, as in client-go's DeltaFIFO. A slow reader (or a slow handler) therefore
//! shows as a growing queue depth and coalesced deltas in the status footer and the summary, and
//! as batches carrying several deltas, never as lost or reordered output. A RealFIFO merges
//! nothing: its queue grows by one entry per change, as client-go's does. client-go applies
//! backpressure through the queue's lock instead (its handler runs under it); here the Reflector
//! is never blocked by the renderer, except for the moment it writes one of its own event rows.
//! Reflector events are written when they happen and are few, so they are not queued.
//!
//! ## Ending
//! Ctrl-C (SIGINT, SIGTERM, SIGHUP), the `shutdown` future, `--until-synced` and `--max-batches`
//! end the session normally: the consumers finish the batch in hand (written, unless a limit
//! already wrote its last line, or stdout cannot take it), and the summary table goes to stderr.
//! Whatever ends the session requests its one [`Stop`], which ends every wait of the session,
//! whenever it comes. A closed stdout ends it quietly. A Reflector failure ends
//! it with [`PipelineError::Reflector`]. When every source has run dry ([`Hooks::end`]), the
//! queues are closed, the consumers drain them, and the session ends normally
//! ([`Ended::EndOfInput`]), or with [`PipelineError::Source`] if a source ended with an error
//! (a bad line in a recording): either way, everything before was written.

mod consumer;
mod hooks;
mod idle;
mod output;
mod reader;
mod stdout;
mod stop;
mod undelta;
mod view;

use std::future::Future;
use std::io::{self, Write};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use futures_util::future::join_all;
use kubectl_deltas::Object;
use kubectl_deltas::cache::reflector::Clock;
use kubectl_deltas::cache::{IndexSpec, Queue, Reflector, ReflectorConfig, ReflectorError};
use kubectl_deltas::render::status::StatusBar;
use kubectl_deltas::source::ListerWatcher;

pub use hooks::{Hooks, InlineConsumer, ResyncHandle};
pub use idle::Idle;
pub use reader::stdout_reader_gone;
pub use view::View;

use consumer::Consumer;
use hooks::ResyncPoint;
use output::{Observer, Output};
use stop::Stop;

use super::informer::{QueueChoice, index_specs, indexer_with};
use crate::cli::{InformerArgs, StoreKind};

/// Where one resource's objects come from, and its name in the output.
pub struct Source<L> {
    /// The resource as users name it (`pods`, `deployments.apps`): the resource column of the
    /// timeline and the `resource` field of JSON lines.
    pub name: String,
    /// Lists and watches it.
    pub lister_watcher: L,
    /// What else the source asks of the pipeline (nothing, for a cluster).
    pub hooks: Hooks,
}

impl<L> Source<L> {
    /// A source without hooks.
    pub fn new(name: impl Into<String>, lister_watcher: L) -> Self {
        Source {
            name: name.into(),
            lister_watcher,
            hooks: Hooks::default(),
        }
    }
}

/// How the informers run and what the session shows.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Output and consumer behaviour.
    pub view: View,
    /// How each Reflector lists and watches. Each resync it times is the pipeline's (see the
    /// module documentation).
    pub reflector: ReflectorConfig,
    /// The queue of each informer and how it is popped.
    pub queue: QueueChoice,
    /// What each Reflector writes into: an informer's queue, or an UndeltaStore (then `queue`
    /// and `indices` are not used; see `undelta.rs`).
    pub store: StoreKind,
    /// Indices every Indexer gets.
    pub indices: Vec<IndexSpec>,
    /// How the time a batch waited in its queue is shown: `None` as measured; `Some(x)`
    /// multiplied by `x`, so that a replay at `--speed x` shows waits in recorded time (and an
    /// instant replay, `Some(0.0)`, shows none: its queue is drained before time moves on).
    pub wait_scale: Option<f64>,
}

impl Settings {
    /// Settings from the shared informer flags; index specs that do not parse are usage errors,
    /// and so are the flags an UndeltaStore has no use for.
    pub fn new(
        view: View,
        informer: &InformerArgs,
        store: StoreKind,
        reflector: ReflectorConfig,
    ) -> anyhow::Result<Self> {
        if store == StoreKind::Undelta {
            undelta::refuse_flags(informer, &view)?;
        }
        Ok(Settings {
            view,
            reflector,
            store,
            queue: QueueChoice::from_args(informer)?,
            indices: index_specs(informer)?,
            wait_scale: None,
        })
    }
}

/// How a session ended without an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// Ctrl-C, SIGTERM or SIGHUP.
    Interrupted,
    /// The caller's `shutdown` future completed.
    Shutdown,
    /// `--until-synced`: every resource synced and its initial batches were written.
    UntilSynced,
    /// `--max-batches` batches were written.
    MaxBatches,
    /// The reader of the output went away.
    OutputClosed,
    /// Every source ran dry ([`Hooks::end`]), and what they gave was written.
    EndOfInput,
    /// A Reflector or the output failed (reported as an error, never returned as `Ok`).
    Failed,
}

/// Why a session failed.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// The Reflector of `sources[index]` gave up (401, 403, 404, …).
    #[error("the informer of {resource} failed")]
    Reflector {
        /// Position of the source in the list given to [`Pipeline::run`].
        index: usize,
        /// Its name.
        resource: String,
        /// What happened.
        #[source]
        error: ReflectorError,
    },
    /// The source `sources[index]` ended with an error ([`Hooks::end`]), after what it gave
    /// before was written.
    #[error("{error}")]
    Source {
        /// Position of the source in the list given to [`Pipeline::run`].
        index: usize,
        /// Its name.
        resource: String,
        /// What happened.
        error: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The output could not be written.
    #[error("cannot write the output")]
    Output(#[source] io::Error),
    /// A consumer thread could not be started.
    #[error("cannot start a consumer thread")]
    Spawn(#[source] io::Error),
    /// A consumer thread panicked.
    #[error("a consumer thread panicked")]
    Panicked,
}

/// A configured session, ready to run.
#[derive(Debug)]
pub struct Pipeline {
    settings: Settings,
    /// Requested once, by whatever ends the session; it ends every wait of the session.
    stop: Arc<Stop>,
    idle: Idle,
}

/// How often the status footer is redrawn.
const STATUS_REFRESH: Duration = Duration::from_millis(125);

impl Pipeline {
    /// A session with `settings`.
    pub fn new(settings: Settings) -> Self {
        let stop = Arc::new(Stop::default());
        Pipeline {
            settings,
            idle: Idle::new(stop.clone()),
            stop,
        }
    }

    /// The handle on the consumers' progress; take it before [`run`](Pipeline::run) to give it
    /// to the sources.
    #[allow(dead_code, reason = "tests pace their sources with it")]
    pub fn idle(&self) -> Idle {
        self.idle.clone()
    }

    /// Runs until Ctrl-C, `shutdown`, a limit, a closed stdout or a failure, writing to stdout.
    pub async fn run<L: ListerWatcher, C: Clock + Clone>(
        self,
        sources: Vec<Source<L>>,
        clock: C,
        shutdown: impl Future<Output = ()>,
    ) -> Result<Ended, PipelineError> {
        let reader_gone = reader::stdout_reader_gone();
        let out = stdout::stdout(self.stop.clone());
        self.run_into(sources, clock, shutdown, out, reader_gone)
            .await
    }

    /// [`run`](Pipeline::run) writing to `out`; `reader_gone` completes if its reader goes away.
    pub async fn run_into<L: ListerWatcher, C: Clock + Clone>(
        self,
        sources: Vec<Source<L>>,
        clock: C,
        shutdown: impl Future<Output = ()>,
        out: Box<dyn Write + Send>,
        reader_gone: impl Future<Output = ()>,
    ) -> Result<Ended, PipelineError> {
        let Pipeline {
            settings,
            stop,
            idle,
        } = self;
        let Settings {
            view,
            reflector,
            queue,
            store,
            indices,
            wait_scale,
        } = settings;
        // Handled from here on, before anything is written: a signal sent once the session shows
        // its first line ends it as Ctrl-C, never by the signal's default.
        let signal = super::signals::stop_requested();
        let shared_clock: Arc<dyn Clock> = Arc::new(clock.clone());
        let names: Vec<String> = sources.iter().map(|s| s.name.clone()).collect();
        let output = Arc::new(Output::new(
            view.renderer(out, names.len() > 1),
            names.clone(),
            view.clone(),
            StatusBar::new(view.status, view.stdout_is_terminal),
            stop.clone(),
            shared_clock.clone(),
        ));
        let popped = Arc::new(AtomicU64::new(0));
        let runtime = tokio::runtime::Handle::current();

        let mut fifos = Vec::new();
        let mut reflectors = Vec::new();
        let mut consumers = Vec::new();
        let mut inline = Vec::new();
        let mut ends = Vec::new();
        for (index, source) in sources.into_iter().enumerate() {
            let Hooks {
                end,
                observer,
                inline: inline_consumer,
                resync: resync_handle,
            } = source.hooks;
            if store == StoreKind::Undelta {
                // No queue, no consumer: each store call pushes, and writes its push.
                let reflector = reflector.clone();
                let hooks = (observer, resync_handle);
                let (output, clock) = (output.clone(), clock.clone());
                reflectors.push(undelta::reflector(
                    source.lister_watcher,
                    reflector,
                    index,
                    output,
                    clock,
                    hooks,
                ));
                ends.push(end);
                continue;
            }
            let indexer = Arc::new(indexer_with(&indices));
            let fifo = queue.build(indexer.clone());
            output.informer_started(index, queue.kind, queue.batch_pop);
            let resync_point = ResyncPoint {
                output: output.clone(),
                index,
                fifo: Some(fifo.clone()),
                observer: observer.clone(),
            };
            reflectors.push(
                Reflector::new(source.lister_watcher, fifo.clone(), reflector.clone())
                    .observer(Observer {
                        output: output.clone(),
                        index,
                        fifo: Some(fifo.clone()),
                        also: observer,
                    })
                    .clock(clock.clone())
                    .known_objects(indexer.clone())
                    .resync_with({
                        let point = resync_point.clone();
                        move |at| point.resync(at)
                    }),
            );
            ends.push(end);
            if let Some(handle) = resync_handle {
                handle.attach(resync_point);
            }
            let consumer = Consumer {
                index,
                fifo: fifo.clone(),
                batch_pop: queue.batch_pop,
                indexer,
                output: output.clone(),
                idle: idle.clone(),
                popped: popped.clone(),
                clock: shared_clock.clone(),
                // A consumer drained on the source's thread must not sleep there.
                handler_delay: view.handler_delay.filter(|_| inline_consumer.is_none()),
                wait_scale,
                runtime: runtime.clone(),
            };
            fifos.push(fifo);
            if let Some(inline_consumer) = inline_consumer {
                inline_consumer.attach(consumer);
                inline.push(inline_consumer);
                continue;
            }
            let spawned = std::thread::Builder::new()
                .name(format!("consumer-{index}"))
                .spawn(move || consumer.run());
            match spawned {
                Ok(handle) => consumers.push(handle),
                Err(error) => {
                    stop.request(Ended::Failed);
                    let _ = close_and_join(&fifos, consumers).await;
                    return Err(PipelineError::Spawn(error));
                }
            }
        }
        idle.attach(fifos.clone());

        let informers = join_all(reflectors.into_iter().zip(ends).enumerate().map(
            |(index, (r, end))| {
                let stop = stop.clone();
                async move {
                    // Set when the source ran dry (rather than the session being stopped).
                    let mut ran_dry = None;
                    let shutdown = async {
                        match end {
                            Some(end) => tokio::select! {
                                () = stop.wait() => {}
                                result = end => ran_dry = Some(result),
                            },
                            None => stop.wait().await,
                        }
                    };
                    let result = r.run(shutdown).await;
                    if result.is_err() {
                        stop.request(Ended::Failed);
                    }
                    (result.map_err(|error| (index, error)), ran_dry)
                }
            },
        ));
        let informers = async {
            let outcomes: Vec<InformerOutcome> = informers.await;
            let all_ran_dry = outcomes.iter().all(|(_, ran_dry)| ran_dry.is_some());
            if all_ran_dry && !stop.requested() {
                // What the sources gave is all queued: the consumers drain it, then the end.
                for fifo in &fifos {
                    fifo.close();
                }
                for consumer in &inline {
                    consumer.drain();
                }
                idle.wait().await;
                let failed = outcomes
                    .iter()
                    .any(|(_, ran_dry)| matches!(ran_dry, Some(Err(_))));
                stop.request(if failed {
                    Ended::Failed
                } else {
                    Ended::EndOfInput
                });
            }
            outcomes
        };
        let status = async {
            if !view.status {
                return;
            }
            let mut tick = tokio::time::interval(STATUS_REFRESH);
            loop {
                tick.tick().await;
                output.refresh_status(&fifos);
            }
        };
        // Ctrl-C, SIGTERM or SIGHUP (a second one exits at once). A task of its own: the rest of
        // the session may run on the caller's thread, where an instant replay's consumer can be
        // stuck in a write that only the stop ends.
        let signalled = AbortOnDrop(tokio::spawn({
            let stop = stop.clone();
            async move {
                signal.await;
                stop.request(Ended::Interrupted);
            }
        }));
        let control = async {
            tokio::select! {
                () = shutdown => stop.request(Ended::Shutdown),
                () = reader_gone => stop.request(Ended::OutputClosed),
                () = stop.wait() => {}
            }
        };
        let background = async {
            tokio::select! {
                () = stop.wait() => {}
                () = status => stop.wait().await,
            }
        };
        let (outcomes, (), ()) = tokio::join!(informers, control, background);
        drop(signalled);

        let joined = close_and_join(&fifos, consumers).await;
        output.status.clear();
        let mut source_failure = None;
        for (index, (result, ran_dry)) in outcomes.into_iter().enumerate() {
            if let Err((index, error)) = result {
                return Err(PipelineError::Reflector {
                    index,
                    resource: names[index].clone(),
                    error,
                });
            }
            if let Some(Err(error)) = ran_dry {
                source_failure.get_or_insert(PipelineError::Source {
                    index,
                    resource: names[index].clone(),
                    error,
                });
            }
        }
        joined?;
        if let Some(error) = output.take_failure() {
            return Err(PipelineError::Output(error));
        }
        if let Some(failure) = source_failure {
            return Err(failure);
        }
        let ended = stop.reason().unwrap_or(Ended::Shutdown);
        let normal = matches!(
            ended,
            Ended::Interrupted
                | Ended::Shutdown
                | Ended::UntilSynced
                | Ended::MaxBatches
                | Ended::EndOfInput
        );
        if normal && view.summary {
            let _ = io::stderr().write_all(output.summary(&fifos).as_bytes());
        }
        Ok(ended)
    }
}

/// A task that ends with the session.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// What each informer's run gave: the Reflector's result, and how its source ended if it ran
/// dry.
type InformerOutcome = (
    Result<(), (usize, ReflectorError)>,
    Option<Result<(), Box<dyn std::error::Error + Send + Sync>>>,
);

/// Closes the queues (a consumer blocked in `pop` then returns) and waits for the consumers,
/// which the stop requested before has told to finish the batch in hand.
async fn close_and_join(
    fifos: &[Arc<dyn Queue<Object>>],
    consumers: Vec<std::thread::JoinHandle<()>>,
) -> Result<(), PipelineError> {
    for fifo in fifos {
        fifo.close();
    }
    let joined = tokio::task::spawn_blocking(move || {
        consumers
            .into_iter()
            .map(|c| c.join())
            .all(|result| result.is_ok())
    })
    .await;
    match joined {
        Ok(true) => Ok(()),
        _ => Err(PipelineError::Panicked),
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
