//! The session that `watch`, `record` and `replay` run: one [`Informer`] per resource (its
//! Reflector, its queue (`--fifo`: DeltaFIFO, RealFIFO or atomic RealFIFO, see docs/queues.md),
//! its consumer and its Indexer), like a shared informer factory, all writing through their sinks
//! to one renderer in pop order.
//!
//! ```text
//!  Source (ListerWatcher) ─▶ Informer (Reflector ─▶ Queue ─pop─▶ consumer) ─┐ InformerOutput
//!  Source (ListerWatcher) ─▶ Informer (Reflector ─▶ Queue ─pop─▶ consumer) ─┼──────────────▶ Output ─▶ renderer
//!                                    └──── reflector events, resyncs ────────┘               (one mutex)
//! ```
//!
//! Before anything is listed, each resource's first line says which client-go version it imitates,
//! with every setting that came of it, and which queue it runs (`informer-start`).
//!
//! With `--store undelta` ([`undelta`]) a resource has no queue, no consumer and no Indexer: its
//! Reflector writes into an UndeltaStore, and each push is written in the store call that made it.
//!
//! The pipeline is generic over where objects come from ([`ListerWatcher`]) and over time
//! ([`Clock`]): a live cluster with tokio time for `watch`, a recording with a virtual clock for
//! `replay`. It never touches HTTP itself. A source can ask for more through its [`Hooks`]: to
//! end the session when it runs dry, to see its informer's events, and to hold its informer, to
//! resync it and to drain it on its own thread instead of a consumer thread (an instant replay,
//! which takes turns with the consumer after each group of lines).
//!
//! ## Order
//! Each pop takes the next number of one sequence shared by every resource, and batches are
//! handed to the renderer in that order, so the merged timeline reads in pop order. Reflector
//! events are written when they happen, under the same mutex. The Reflector times resyncs
//! (`--resync`: only while watching, as client-go's `watchWithResync`), and each tick calls the
//! pipeline's resync, which writes the resync row and queues the Sync deltas under that mutex:
//! the row then always precedes the batches it caused.
//!
//! ## When stdout or a handler is slower than the watch
//! Nothing is buffered between the queue and stdout: a consumer writes (and flushes) its batch
//! and only then pops again, while its Reflector keeps queueing. A shared informer's handlers
//! take their `delay` on their own threads, their buffers growing, the queue not; a plain
//! informer's handler takes it inside the pop, under the queue's lock, so the Reflector's queue
//! calls wait for it (client-go's `NewInformer`). In a DeltaFIFO, changes to a key that is
//! already queued coalesce into that key's Deltas; a RealFIFO merges nothing. docs/design.md
//! ("When stdout or a handler is slower than the watch") says what each shows.
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

mod controller;
mod handler;
mod hooks;
mod idle;
mod narrow;
mod output;
mod page_file;
mod reader;
mod sink;
mod stdout;
mod stop;
mod undelta;
mod view;

use std::future::Future;
use std::io::{self, Write};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures_util::future::join_all;
use kubectl_deltas::cache::reflector::Clock;
use kubectl_deltas::cache::{
    ConsumerGroup, Consumption, IndexSpec, Informer, InformerError, InformerKind, Reflector,
    ReflectorConfig, ReflectorError, SharedInformerError,
};
use kubectl_deltas::render::status::StatusBar;
use kubectl_deltas::source::ListerWatcher;

pub use hooks::Hooks;
pub use idle::Idle;
pub use reader::stdout_reader_gone;
pub use view::View;

use controller::{ControllerHandler, ControllerRun, ControllerTarget, InlineGroup};
use handler::ShownHandler;
use output::Output;
use sink::InformerOutput;
use stop::Stop;

use super::informer::{index_specs, refuse_outside_metadata, refuse_secret_specs};
use crate::cli::exit::{Exit, WithExit};
use crate::cli::profile::Profile;
use crate::cli::{FifoKind, InformerArgs, InformerKindArg, StoreKind};

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
    /// The client-go version imitated and its resolved settings, named by each informer's first
    /// line.
    pub profile: Profile,
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
    /// Settings from the shared informer flags and their resolved `profile`; index specs that do
    /// not parse are usage errors, and so are the flags an UndeltaStore has no use for.
    pub fn new(
        view: View,
        informer: &InformerArgs,
        profile: Profile,
        store: StoreKind,
        reflector: ReflectorConfig,
    ) -> anyhow::Result<Self> {
        refuse_store_flags(store, informer, &view)?;
        Ok(Settings {
            view,
            reflector,
            profile,
            store,
            indices: index_specs(informer)?,
            wait_scale: None,
        })
    }
}

impl Settings {
    /// [`refuse_secret_specs`] for the `--query` and `--index` specs of the session.
    pub fn refuse_secret_queries(
        &self,
        secrets: bool,
        show_secret_data: bool,
    ) -> anyhow::Result<()> {
        let queries = self.view.queries.iter().map(|q| ("--query", q.spec()));
        let indices = self.indices.iter().map(|spec| ("--index", spec));
        refuse_secret_specs(queries.chain(indices), secrets, show_secret_data)
    }

    /// [`refuse_outside_metadata`] for the `--query` and `--index` specs of the session.
    pub fn refuse_outside_metadata_queries(&self, metadata_only: bool) -> anyhow::Result<()> {
        let queries = self.view.queries.iter().map(|q| ("--query", q.spec()));
        let indices = self.indices.iter().map(|spec| ("--index", spec));
        refuse_outside_metadata(queries.chain(indices), metadata_only)
    }
}

/// Refuses, with `--store undelta`, the flags about a queue, its consumer, an Indexer or
/// handlers, which an UndeltaStore does not have: a usage error of one line. Called before
/// anything else reads those flags, so that this is the line a user sees.
pub fn refuse_store_flags(
    store: StoreKind,
    informer: &InformerArgs,
    view: &View,
) -> anyhow::Result<()> {
    if store == StoreKind::Undelta {
        undelta::refuse_flags(informer, view)?;
    }
    refuse_queue_flags(informer)
}

/// Refuses `--legacy-sync` with a queue whose deltas it cannot change (docs/queues.md): the plain
/// FIFO queues objects without delta types, the atomic queue emits `ReplacedAll` whatever it
/// says. `--batch-pop` above 1 with a queue without batch pops is refused with the profile.
pub fn refuse_queue_flags(informer: &InformerArgs) -> anyhow::Result<()> {
    let why = match informer.fifo {
        _ if informer.legacy_sync.is_none() => None,
        Some(FifoKind::Plain) => Some("the plain FIFO queues objects without delta types"),
        Some(FifoKind::Atomic) => {
            Some("the atomic queue emits ReplacedAll whatever --legacy-sync says")
        }
        _ => None,
    };
    match (why, informer.fifo) {
        (Some(why), Some(fifo)) => Err(anyhow::anyhow!(
            "--legacy-sync turns Replaced deltas into Sync, and --fifo {} makes none: {why}",
            clap::ValueEnum::to_possible_value(&fifo)
                .map(|v| v.get_name().to_owned())
                .unwrap_or_default()
        ))
        .exit_with(Exit::Usage),
        _ => Ok(()),
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
    /// An event handler could not be started.
    #[error("cannot start the event handlers")]
    Handlers(#[source] SharedInformerError),
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
            idle: Idle::new(Arc::new(ConsumerGroup::default()), stop.clone()),
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
        let page = self.settings.view.page_file();
        let out = match (&page, self.settings.view.page_output()) {
            (Some(page), _) => stdout::Stdout::direct(Box::new(page.clone())),
            // Written at the end, after the stop: a writer that gives up on a full pipe once the
            // session is stopping would cut the page short.
            (None, true) => stdout::Stdout::direct(Box::new(io::BufWriter::new(io::stdout()))),
            (None, false) => stdout::stdout(self.stop.clone()),
        };
        let ended = self
            .run_with(sources, clock, shutdown, out, reader_gone)
            .await?;
        if let Some(page) = page {
            page.commit().map_err(PipelineError::Output)?;
        }
        Ok(ended)
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
        self.run_with(
            sources,
            clock,
            shutdown,
            stdout::Stdout::direct(out),
            reader_gone,
        )
        .await
    }

    async fn run_with<L: ListerWatcher, C: Clock + Clone>(
        self,
        sources: Vec<Source<L>>,
        clock: C,
        shutdown: impl Future<Output = ()>,
        out: stdout::Stdout,
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
            profile: resolved,
            store,
            indices,
            wait_scale,
        } = settings;
        let profile = resolved.describe();
        // Handled from here on, before anything is written: a signal sent once the session shows
        // its first line ends it as Ctrl-C, never by the signal's default.
        let signal = super::signals::stop_requested();
        let shared_clock: Arc<dyn Clock> = Arc::new(clock.clone());
        let names: Vec<String> = sources.iter().map(|s| s.name.clone()).collect();
        let output = Arc::new(Output::new(
            view.renderer(out.writer, &names),
            names.clone(),
            view.clone(),
            StatusBar::new(view.status, view.stdout_is_terminal),
            stop.clone(),
            out.drain,
            shared_clock.clone(),
        ));
        let group = idle.group();

        // The informers, and for each resource its informer (none for an UndeltaStore).
        let mut informers = Vec::new();
        let mut per_resource = Vec::new();
        let mut runs = Vec::new();
        let mut controllers: Vec<Arc<ControllerRun>> = Vec::new();
        for (index, source) in sources.into_iter().enumerate() {
            let Hooks {
                end,
                observer,
                informer: slot,
                inline,
            } = source.hooks;
            if store == StoreKind::Undelta {
                // No queue, no consumer: each store call pushes, and writes its push.
                let target = undelta::UndeltaResyncs {
                    output: output.clone(),
                    index,
                    also: observer,
                };
                let reflector = undelta::reflector(
                    source.lister_watcher,
                    reflector.clone(),
                    index,
                    output.clone(),
                    clock.clone(),
                    target.clone(),
                );
                if let Some(slot) = slot {
                    slot.fill(Arc::new(target));
                }
                per_resource.push(None);
                runs.push((Runner::Store(Box::new(reflector)), end));
                continue;
            }
            let sink = Arc::new(InformerOutput {
                output: output.clone(),
                index,
                also: observer,
                wait_scale,
                informer: OnceLock::new(),
            });
            let consumption = if inline {
                Consumption::Inline
            } else {
                Consumption::Thread
            };
            let mut config = resolved.informer_config(&indices, consumption);
            config.kind = match view.informer {
                InformerKindArg::Shared => InformerKind::Shared,
                InformerKindArg::Plain => InformerKind::Plain,
            };
            // A source that holds its informer (a replay) ticks its resyncs on its own clock.
            config.external_resync = slot.is_some();
            let (queue, batch_pop) = (config.queue, config.batch_pop);
            let informer = Informer::new(config, sink.clone(), group.clone(), stop.token().clone());
            let _ = sink.informer.set(Arc::downgrade(&informer));
            let handlers = view.shared_handlers();
            for (position, spec) in handlers.iter().enumerate() {
                let handler = ShownHandler {
                    output: output.clone(),
                    index,
                    handler: position,
                    delay: spec.delay,
                    threaded: !inline,
                    clock: shared_clock.clone(),
                    registration_synced: resolved.has_registration_synced(),
                };
                informer.add_event_handler(spec.name.clone(), handler, spec.resync);
            }
            // Each controller's handler comes after the --handler ones (see controller.rs).
            let mut own = Vec::new();
            let inline_group = inline.then(|| InlineGroup::new(output.clone()));
            for (position, spec) in view.controllers.iter().enumerate() {
                let run = ControllerRun::new(
                    spec,
                    output.clone(),
                    shared_clock.clone(),
                    index,
                    position,
                    informer.indexer().clone(),
                    inline_group.as_ref(),
                );
                run.start(spec.workers).map_err(PipelineError::Spawn)?;
                let shown = ShownHandler {
                    output: output.clone(),
                    index,
                    handler: handlers.len() + position,
                    delay: None,
                    threaded: !inline,
                    clock: shared_clock.clone(),
                    registration_synced: resolved.has_registration_synced(),
                };
                let handler = ControllerHandler {
                    shown,
                    run: run.clone(),
                };
                informer.add_event_handler(spec.name.clone(), handler, spec.resync);
                own.push(run);
            }
            let controller_names: Vec<String> =
                view.controllers.iter().map(|c| c.name.clone()).collect();
            let names: Vec<String> = handlers
                .into_iter()
                .map(|h| h.name)
                .chain(controller_names.iter().cloned())
                .collect();
            output.handlers_started(index, &names, resolved.has_registration_synced());
            output.controllers_started(index, &view.controllers);
            // A plain informer's handler works inside the pop, under the queue's lock; drained
            // on a replay's thread, it takes no time (the replay never waits for it).
            if let Some(delay) = view.plain_handler_delay().filter(|_| !inline) {
                let (stop, delay) = (stop.clone(), shared_clock.in_real_time(delay));
                // client-go's `newInformer` calls its handler once per delta (`processDeltas`).
                informer.handle_in_pop(Arc::new(move |notifications| {
                    for _ in notifications {
                        if stop.requested() {
                            return;
                        }
                        stop.sleep(delay);
                    }
                }));
            }
            output.informer_started(index, queue, batch_pop, &profile);
            if let Some(slot) = slot {
                if own.is_empty() || !inline {
                    slot.fill(informer.clone());
                } else {
                    slot.fill(Arc::new(ControllerTarget {
                        informer: informer.clone(),
                        controllers: own.clone(),
                    }));
                }
            }
            controllers.extend(own);
            informers.push(informer.clone());
            per_resource.push(Some(informer.clone()));
            runs.push((Runner::Informer(informer, source.lister_watcher), end));
        }
        idle.attach(informers.clone());
        output.attach_informers(informers.iter().map(Arc::downgrade).collect());
        // A stop abandons what the handlers' buffers hold (client-go's processor closes its
        // listeners) before it cuts their calls short: woken first, a handler thread would make
        // each buffered call in turn, every delay cut at once. Handlers driven inline make the
        // calls due by now after the stop's batch, and stop with the informer.
        let threaded: Vec<_> = informers
            .iter()
            .filter(|informer| informer.config().consumption == Consumption::Thread)
            .map(Arc::downgrade)
            .collect();
        let stopping = controllers.clone();
        stop.before_wake(move || {
            for informer in threaded.iter().filter_map(std::sync::Weak::upgrade) {
                informer.abandon_handler_buffers();
            }
            for controller in &stopping {
                controller.stopping();
            }
        });

        let runs = join_all(runs.into_iter().map(|(runner, end)| {
            let (stop, reflector, clock) = (stop.clone(), reflector.clone(), clock.clone());
            async move {
                // Set when the source ran dry (rather than the session being stopped).
                let mut ran_dry = None;
                let until = async {
                    match end {
                        Some(end) => ran_dry = Some(end.await),
                        None => std::future::pending().await,
                    }
                };
                let result = match runner {
                    Runner::Informer(informer, lister_watcher) => {
                        informer.run(lister_watcher, reflector, clock, until).await
                    }
                    Runner::Store(store_reflector) => {
                        let until = async {
                            tokio::select! {
                                () = until => {}
                                () = stop.wait() => {}
                            }
                        };
                        store_reflector
                            .run(until)
                            .await
                            .map_err(InformerError::Reflector)
                    }
                };
                if result.is_err() {
                    stop.request(Ended::Failed);
                }
                (result, ran_dry)
            }
        }));
        let runs = async {
            let outcomes: Vec<InformerOutcome> = runs.await;
            let all_ran_dry = outcomes.iter().all(|(_, ran_dry)| ran_dry.is_some());
            if all_ran_dry && !stop.requested() {
                // What the sources gave is all queued: the consumers drain it, then the end.
                join_all(informers.iter().map(|informer| informer.finish())).await;
                // Then the controllers' workers: what their queues hold, and the retries.
                finish_controllers(&controllers).await;
                // What they wrote is out before the stop, which gives up on a full pipe.
                drain(&output).await;
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
                output.refresh_status(&per_resource);
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
        let (outcomes, (), ()) = tokio::join!(runs, control, background);
        drop(signalled);

        let joined = shut_down(&informers).await;
        join_controllers(&controllers, &output).await;
        drain(&output).await;
        output.status.clear();
        // Whatever ended the session: a page (`-o html`) shows what came before a failure too.
        output.finish(&per_resource);
        drain(&output).await;
        let mut source_failure = None;
        for (index, (result, ran_dry)) in outcomes.into_iter().enumerate() {
            match result {
                Ok(()) => {}
                Err(InformerError::Reflector(error)) => {
                    return Err(PipelineError::Reflector {
                        index,
                        resource: names[index].clone(),
                        error,
                    });
                }
                Err(InformerError::Spawn(error)) => return Err(PipelineError::Spawn(error)),
                Err(InformerError::Handlers(error)) => {
                    return Err(PipelineError::Handlers(error));
                }
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
            let _ = io::stderr().write_all(output.summary(&per_resource).as_bytes());
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

/// What runs one resource: an informer, or a Reflector feeding an UndeltaStore.
enum Runner<L> {
    Informer(Arc<Informer>, L),
    Store(Box<Reflector<L>>),
}

/// What each informer's run gave: its result, and how its source ended if it ran dry.
type InformerOutcome = (
    Result<(), InformerError>,
    Option<Result<(), Box<dyn std::error::Error + Send + Sync>>>,
);

/// Waits until what the output was given is written, off the runtime's threads.
async fn drain(output: &Arc<Output>) {
    let output = output.clone();
    let _ = tokio::task::spawn_blocking(move || output.drain()).await;
}

/// Lets every controller's workers finish what the input left them, off the runtime's threads.
async fn finish_controllers(controllers: &[Arc<ControllerRun>]) {
    let controllers = controllers.to_vec();
    let _ = tokio::task::spawn_blocking(move || {
        for controller in controllers {
            controller.finish();
        }
    })
    .await;
}

/// Stops every controller's workers and hands their queues' metrics to the summary.
async fn join_controllers(controllers: &[Arc<ControllerRun>], output: &Arc<Output>) {
    let (controllers, output) = (controllers.to_vec(), output.clone());
    let _ = tokio::task::spawn_blocking(move || {
        for controller in controllers {
            controller.stopping();
            controller.join();
            let (index, position) = controller.position();
            output.controller_metrics(index, position, controller.metrics());
        }
    })
    .await;
}

/// Closes the queues (a consumer blocked in `pop` then returns) and waits for the consumers,
/// which the stop requested before has told to finish the batch in hand.
async fn shut_down(informers: &[Arc<Informer>]) -> Result<(), PipelineError> {
    let joined = join_all(informers.iter().map(|informer| informer.shut_down())).await;
    if joined.into_iter().all(|ok| ok) {
        Ok(())
    } else {
        Err(PipelineError::Panicked)
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
