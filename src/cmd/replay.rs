//! `replay FILE`: the [`pipeline`](super::pipeline) of `watch`, fed by a recording instead of a
//! cluster, and `index --replay`'s cache built from one.
//!
//! The recording answers the real Reflector's list and watch calls
//! ([`RecordingListerWatcher`]); the Reflector runs on the recording's clock, so every time in
//! the output is a recorded one. `RESYNC` lines go through the pipeline's own resync (the row is
//! written before the Sync batches it queued, as with `--resync`).
//!
//! Instant mode (the default) is deterministic: the consumer is drained on the replay's thread
//! ([`InlineConsumer`]) after each group of lines sharing one `t`, so no thread decides when a
//! batch is popped and every run writes the same bytes. With `--speed X` lines come at `t / X`
//! and a consumer thread pops concurrently, as live.

use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use anyhow::anyhow;
use kubectl_deltas::Object;
use kubectl_deltas::cache::reflector::Clock as _;
use kubectl_deltas::cache::{Controller, Indexer, Reflector, ReflectorConfig, ReflectorError};
use kubectl_deltas::source::ListerWatcher as _;
use kubectl_deltas::source::recording::{
    Pace, RecordedResource, RecordingListerWatcher, RecordingReader,
};

use super::informer::{QueueChoice, refuse_secret_queries, strip_managed_fields};
use super::one_shot::with_consumer;
use super::pipeline::{
    Hooks, InlineConsumer, Pipeline, PipelineError, ResyncHandle, Settings, Source, View,
};
use crate::cli::exit::{Exit, WithExit};
use crate::cli::{GlobalArgs, ReplayArgs};

pub fn run(args: ReplayArgs, global: &GlobalArgs) -> anyhow::Result<()> {
    if args.informer.resync.0.is_some() {
        return Err(anyhow!(
            "--resync does not apply to a replay: the recording's RESYNC lines say when the \
             recorded informer resynced"
        ))
        .exit_with(Exit::Usage);
    }
    let view = View::from_args(&args.view, global)?;
    // Before any note: a flag the store refuses is the one line on stderr.
    let mut settings = Settings::new(view, &args.informer, args.store.store, base_config())?;
    match (args.speed, settings.view.handler_delay) {
        (None, Some(_)) => {
            // Not `eprintln!`, which panics when stderr is a closed pipe.
            let _ = writeln!(
                std::io::stderr(),
                "kubectl-deltas: note: --handler-delay changes nothing in an instant replay, \
                 whose batches never depend on the consumer's speed; add --speed X to see it"
            );
        }
        // A delay in the recording's time, as every time the output shows.
        (Some(speed), Some(delay)) => settings.view.handler_delay = Some(delay.div_f64(speed)),
        _ => {}
    }
    let runtime = super::runtime()?;
    runtime.block_on(replay(&args.file, args.speed, settings))
}

/// What a replay's Reflector starts from: as `watch`'s default, managedFields stripped.
fn base_config() -> ReflectorConfig {
    strip_managed_fields(ReflectorConfig::default())
}

async fn replay(file: &Path, speed: Option<f64>, mut settings: Settings) -> anyhow::Result<()> {
    let reader = RecordingReader::open(file)?;
    let inline = Arc::new(InlineConsumer::default());
    let resync = ResyncHandle::default();
    let pace = match speed {
        None => Pace::Instant(inline.clone()),
        Some(factor) => Pace::Speed(factor),
    };
    let lister_watcher = RecordingListerWatcher::new(reader, pace)?.on_resync(resync.clone());
    let secrets = Object::is_secret_resource(&lister_watcher.describe().api_resource);
    refuse_secret_queries(&settings, secrets, settings.view.show_secret_data)?;
    settings.reflector = lister_watcher.reflector_config(settings.reflector.clone());
    // An instant replay drains the queue before its time moves on: nothing waits in it.
    settings.wait_scale = Some(speed.unwrap_or(0.0));
    let (clock, end) = (lister_watcher.clock(), lister_watcher.end());
    let source = Source {
        name: lister_watcher.describe().resource(),
        lister_watcher,
        hooks: Hooks {
            end: Some(Box::pin(async move {
                end.wait().await.map(drop).map_err(Into::into)
            })),
            inline: speed.is_none().then_some(inline),
            resync: Some(resync),
            observer: None,
        },
    };
    let result = Pipeline::new(settings)
        .run(vec![source], clock, std::future::pending())
        .await;
    match result {
        Ok(_) => Ok(()),
        // The recording's own message: `FILE:LINE: what is wrong`.
        Err(PipelineError::Source { error, .. }) => Err(anyhow!(error.to_string())),
        Err(PipelineError::Reflector { error, .. }) => Err(gave_up(file, error)),
        Err(other) => Err(other.into()),
    }
}

/// A recorded failure the Reflector does not retry (a 403, a 404): the replay ends as the live
/// run did, with an error.
fn gave_up(file: &Path, error: ReflectorError) -> anyhow::Error {
    anyhow::Error::new(error).context(format!(
        "replaying {}: the Reflector gave up, as it did when this was recorded",
        file.display()
    ))
}

/// What `index --replay` built its cache from.
pub struct Recorded {
    /// How to name what was recorded: `pods in namespace "default"`.
    pub scope: String,
    /// The time of the recording's last line: the "now" of the state it ends with.
    pub ended_at: SystemTime,
}

/// `index --replay`: applies the whole recording to `indexer` (its final state, not only the
/// first list). `resource`, if given, must name the recorded resource (a usage error otherwise).
///
/// Lines are handed out as fast as the Reflector takes them ([`Pace::Unpaced`]): which batches
/// the consumer pops on the way depends on its speed, the state at the end does not.
pub async fn cache_from_recording(
    file: &Path,
    resource: Option<&str>,
    indexer: Arc<Indexer<Object>>,
    queue: QueueChoice,
) -> anyhow::Result<Recorded> {
    let reader = RecordingReader::open(file)?;
    let lister_watcher = RecordingListerWatcher::new(reader, Pace::Unpaced)?;
    let target = lister_watcher.describe();
    let scope = target.to_string();
    if let Some(arg) = resource {
        let recorded = match lister_watcher.header() {
            Some(header) => header.resource.clone(),
            // Without a header: the resource of its objects, whose scope does not matter here.
            None => RecordedResource::new(&target.api_resource, true),
        };
        if !recorded.is_named(arg) {
            return Err(anyhow!(
                "{arg:?} does not name what {} holds: a recording of {scope}; name that \
                 resource, or leave RESOURCE out",
                file.display()
            ))
            .exit_with(Exit::Usage);
        }
    }
    let fifo = queue.build(indexer.clone());
    let mut controller = Controller::new(fifo.clone(), indexer.clone()).batch_pop(queue.batch_pop);
    let config = lister_watcher.reflector_config(base_config());
    let (clock, end) = (lister_watcher.clock(), lister_watcher.end());
    let recorded_time = clock.clone();
    let stop = end.clone();
    let run = Reflector::new(lister_watcher, fifo.clone(), config)
        .clock(clock)
        .known_objects(indexer)
        .run(async move {
            // However it ended: the outcome is read below.
            let _ = stop.wait().await;
        });
    with_consumer(
        &fifo,
        move || while controller.process_next().is_some() {},
        run,
    )
    .await?
    .map_err(|error| gave_up(file, error))?;
    end.wait().await?;
    Ok(Recorded {
        scope,
        ended_at: recorded_time.wall(),
    })
}
