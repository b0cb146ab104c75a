//! The session that `watch`, `record` and `replay` run, from a resolved [`Plan`]
//! (`cmd/plan`): one lane per resource ([`lane`]: the stack's [`Informer`], with its Reflector,
//! its queue (`--fifo`: DeltaFIFO, RealFIFO or atomic RealFIFO, see docs/queues.md), its consumer
//! and its Indexer, and the handlers and controllers registered on it), like a shared informer
//! factory, all writing through their sinks to one renderer in pop order. Each lane writes
//! through its own handle on the [`Output`], which is all it knows of its place in it; the
//! session runs the lanes side by side and concludes.
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
//! With `--store undelta` ([`undelta`]) a lane has no queue, no consumer and no Indexer: its
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

mod branches;
mod compared;
mod controller;
mod handler;
mod hooks;
mod idle;
mod kube_lane;
mod lane;
mod output;
mod page_file;
mod reader;
mod sink;
mod spec_reconcile;
mod stdout;
mod stop;
mod undelta;

use std::future::Future;
use std::io::{self, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::future::join_all;
use kubectl_deltas::cache::reflector::Clock;
use kubectl_deltas::cache::{
    ConsumerGroup, Consumption, Informer, InformerError, ReflectorError, SharedInformerError,
};
use kubectl_deltas::render::Renderer;
use kubectl_deltas::render::status::StatusBar;
use kubectl_deltas::source::ListerWatcher;

pub use hooks::Hooks;
pub use idle::Idle;
pub use reader::stdout_reader_gone;

use controller::ControllerRun;
use lane::LaneOutcome;
use output::Output;
use stop::Stop;

use super::plan::Plan;

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
    plan: Plan,
    /// Set once a session with `--compare` has ended and its stacks differ.
    stacks_differ: Arc<AtomicBool>,
    /// Requested once, by whatever ends the session; it ends every wait of the session.
    stop: Arc<Stop>,
    idle: Idle,
}

/// How often the status footer is redrawn.
const STATUS_REFRESH: Duration = Duration::from_millis(125);

/// Live, how far apart two stacks' reconciles of one call may start and count as at the same
/// time: their workers are scheduled on their own, a few milliseconds apart, where a debounce,
/// a requeue or a rate limit's delay parts them by more.
const LIVE_SAME_TIME: Duration = Duration::from_millis(100);

/// How often a live `--compare` looks whether its stacks have caught up with each other.
const ALIGN_CHECK: Duration = Duration::from_millis(50);

impl Pipeline {
    /// A session that runs `plan`.
    pub fn new(plan: Plan) -> Self {
        let stop = Arc::new(Stop::default());
        Pipeline {
            plan,
            stacks_differ: Arc::default(),
            idle: Idle::new(Arc::new(ConsumerGroup::default()), stop.clone()),
            stop,
        }
    }

    /// Set once the session has ended if `--compare`'s stacks differ; take it before
    /// [`run`](Pipeline::run).
    pub fn stacks_differ(&self) -> Arc<AtomicBool> {
        self.stacks_differ.clone()
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
        let output = &self.plan.output;
        // `-f FILE` of `-o html`: replaced by the page once the session ended normally.
        let page = (output.page_file.as_deref())
            .filter(|_| output.page_output())
            .map(page_file::PageFile::new);
        let out = match (&page, output.page_output()) {
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
            plan,
            stop,
            idle,
            stacks_differ,
        } = self;
        // Handled from here on, before anything is written: a signal sent once the session shows
        // its first line ends it as Ctrl-C, never by the signal's default.
        let signal = super::signals::stop_requested();
        let shared = lane::Shared {
            clock: Arc::new(clock.clone()),
            group: idle.group(),
            stop: stop.clone(),
            owners: lane::Owners::default(),
            stacks: plan.stacks().len().max(1),
        };
        let names: Vec<String> = sources.iter().map(|s| s.name.clone()).collect();
        // One lane per stack per resource, a resource's lanes side by side.
        let stacks = plan.stacks();
        let lane_names: Vec<String> = (names.iter())
            .flat_map(|name| stacks.iter().map(move |_| name.clone()))
            .collect();
        let output = Arc::new(Output::new(
            renderer(&plan, out.writer, &names),
            lane_names.clone(),
            plan.output.clone(),
            StatusBar::new(plan.output.status, plan.output.stdout_is_terminal),
            stop.clone(),
            out.drain,
            shared.clock.clone(),
        ));
        // An instant replay's stacks catch up with each other at the end of each turn; a live
        // session's or a paced replay's when no row comes for a moment.
        let turns = sources.iter().all(|s| s.hooks.inline);
        compare_on(&output, &plan, &names, turns);
        let mut lanes = Vec::new();
        let branched = (sources.into_iter()).flat_map(|s| {
            let output = output.clone();
            branches::branches(s, stacks.len(), move || output.align_stacks())
        });
        for (index, source) in branched.enumerate() {
            let (_, stack) = stacks[index % stacks.len()];
            let lane = lane::assemble(source, stack, output.lane(index), &clock, &shared);
            lanes.push(lane.map_err(PipelineError::Spawn)?);
        }
        // Each lane's informer (none for an UndeltaStore), in the output's lane order.
        let per_lane: Vec<Option<Arc<Informer>>> =
            lanes.iter().map(|lane| lane.informer.clone()).collect();
        let informers: Vec<Arc<Informer>> = per_lane.iter().flatten().cloned().collect();
        let controllers: Vec<Arc<ControllerRun>> = (lanes.iter())
            .flat_map(|lane| lane.controllers.iter().cloned())
            .collect();
        idle.attach(informers.clone());
        output.attach_informers(informers.iter().map(Arc::downgrade).collect());
        stop.before_wake(abandon_on_stop(&informers, &controllers));

        let runs = join_all((lanes.into_iter()).map(|lane| lane.run(clock.clone(), stop.clone())));
        let runs = async {
            let outcomes: Vec<LaneOutcome> = runs.await;
            let all_ran_dry = outcomes.iter().all(|(_, ran_dry)| ran_dry.is_some());
            if all_ran_dry && !stop.requested() {
                end_of_input(&informers, &controllers, &output, &stop, &outcomes).await;
            }
            outcomes
        };
        let status = every(plan.output.status, STATUS_REFRESH, || {
            output.refresh_status(&per_lane);
        });
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
        let aligned = every(!plan.compared.is_empty() && !turns, ALIGN_CHECK, || {
            output.align_when_quiet();
        });
        let background = async {
            tokio::select! {
                () = stop.wait() => {}
                () = async { tokio::join!(status, aligned); } => stop.wait().await,
            }
        };
        let (outcomes, (), ()) = tokio::join!(runs, control, background);
        drop(signalled);

        let joined = shut_down(&informers).await;
        join_controllers(&controllers).await;
        drain(&output).await;
        output.status.clear();
        // Whatever ended the session: a page (`-o html`) shows what came before a failure too.
        output.finish(&per_lane);
        stacks_differ.store(output.stacks_differ(), Ordering::Relaxed);
        drain(&output).await;
        if let Some(failure) = conclude(outcomes, &lane_names, stacks.len(), joined, &output) {
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
        if normal && plan.output.summary {
            let _ = io::stderr().write_all(output.summary(&per_lane).as_bytes());
        }
        Ok(ended)
    }
}

/// With `--compare`: tells `output` each lane's stack (the lanes of each of `names`, a stack
/// each), and how far apart reconciles count as at the same time: exactly on an instant
/// replay's clock (`turns`), within [`LIVE_SAME_TIME`] otherwise, where each stack's workers are
/// scheduled on their own.
fn compare_on(output: &Output, plan: &Plan, names: &[String], turns: bool) {
    if plan.compared.is_empty() {
        return;
    }
    let stacks = plan.stacks();
    let labels = (names.iter()).flat_map(|_| stacks.iter().map(|(l, _)| l.map(|l| l.0.clone())));
    let same_time = if turns {
        Duration::ZERO
    } else {
        LIVE_SAME_TIME
    };
    output.set_stacks(labels.collect(), stacks.len(), same_time);
}

/// Runs `tick` every `period` for as long as it is polled, if `on`; completes at once if not.
async fn every(on: bool, period: Duration, tick: impl Fn()) {
    if !on {
        return;
    }
    let mut interval = tokio::time::interval(period);
    loop {
        interval.tick().await;
        tick();
    }
}

/// The renderer of `plan`'s output over `out`, for the resources named: the handler column is
/// as wide as the widest name of a handler or controller (a controller's reconcile rows sit in
/// it too).
fn renderer(plan: &Plan, out: Box<dyn Write + Send>, names: &[String]) -> Box<dyn Renderer> {
    let stack = &plan.stack;
    let handlers: Vec<&str> = (stack.handlers.iter().map(|h| h.name.as_str()))
        .chain(stack.controllers.iter().map(|c| c.name.as_str()))
        .collect();
    plan.output.renderer(out, names, &handlers)
}

/// What the stop does before it wakes the waits: it abandons what the handlers' buffers hold
/// (client-go's processor closes its listeners) before it cuts their calls short: woken first, a
/// handler thread would make each buffered call in turn, every delay cut at once. Handlers driven
/// inline make the calls due by now after the stop's batch, and stop with the informer. Each
/// controller takes its metrics and shuts its queue down.
fn abandon_on_stop(
    informers: &[Arc<Informer>],
    controllers: &[Arc<ControllerRun>],
) -> impl FnOnce() + Send + 'static {
    let threaded: Vec<_> = informers
        .iter()
        .filter(|informer| informer.config().consumption == Consumption::Thread)
        .map(Arc::downgrade)
        .collect();
    let controllers = controllers.to_vec();
    move || {
        for informer in threaded.iter().filter_map(std::sync::Weak::upgrade) {
            informer.abandon_handler_buffers();
        }
        for controller in &controllers {
            controller.stopping();
        }
    }
}

/// Every source ran dry: what they gave is all queued. The consumers drain it, the controllers'
/// workers finish what their queues hold and the retries, what they wrote is out (before the
/// stop, which gives up on a full pipe), and the session ends: normally, or failed if a source
/// ended with an error.
async fn end_of_input(
    informers: &[Arc<Informer>],
    controllers: &[Arc<ControllerRun>],
    output: &Arc<Output>,
    stop: &Stop,
    outcomes: &[LaneOutcome],
) {
    join_all(informers.iter().map(|informer| informer.finish())).await;
    finish_controllers(controllers).await;
    drain(output).await;
    let failed = outcomes
        .iter()
        .any(|(_, ran_dry)| matches!(ran_dry, Some(Err(_))));
    stop.request(if failed {
        Ended::Failed
    } else {
        Ended::EndOfInput
    });
}

/// The session's failure, if any, from what each lane's run gave (in lane order, `names` naming
/// them, `per_source` lanes to a source), whether the consumers were joined, and the output: a
/// Reflector that gave up first, then a consumer that panicked, the output's failure, and a
/// source that ended with an error.
fn conclude(
    outcomes: Vec<LaneOutcome>,
    names: &[String],
    per_source: usize,
    joined: Result<(), PipelineError>,
    output: &Output,
) -> Option<PipelineError> {
    let mut source_failure = None;
    for (lane, (result, ran_dry)) in outcomes.into_iter().enumerate() {
        let index = lane / per_source.max(1);
        match result {
            Ok(()) => {}
            Err(InformerError::Reflector(error)) => {
                return Some(PipelineError::Reflector {
                    index,
                    resource: names[lane].clone(),
                    error,
                });
            }
            Err(InformerError::Spawn(error)) => return Some(PipelineError::Spawn(error)),
            Err(InformerError::Handlers(error)) => {
                return Some(PipelineError::Handlers(error));
            }
        }
        if let Some(Err(error)) = ran_dry {
            source_failure.get_or_insert(PipelineError::Source {
                index,
                resource: names[lane].clone(),
                error,
            });
        }
    }
    if let Err(panicked) = joined {
        return Some(panicked);
    }
    if let Some(error) = output.take_failure() {
        return Some(PipelineError::Output(error));
    }
    source_failure
}

/// A task that ends with the session.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

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
async fn join_controllers(controllers: &[Arc<ControllerRun>]) {
    let controllers = controllers.to_vec();
    let _ = tokio::task::spawn_blocking(move || {
        for controller in controllers {
            controller.conclude();
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
