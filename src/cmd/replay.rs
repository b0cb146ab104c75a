//! `replay FILE`: the [`pipeline`](super::pipeline) of `watch`, fed by a recording instead of a
//! cluster, and `index --replay`'s cache built from one.
//!
//! The recording answers the real Reflector's list and watch calls
//! ([`RecordingListerWatcher`]); the Reflector runs on the recording's clock, so every time in
//! the output is a recorded one. `RESYNC` lines go through the pipeline's own resync (the row is
//! written before the Sync batches it queued, as with `--resync`).
//!
//! Instant mode (the default) is deterministic: the informer's consumer is drained on the
//! replay's thread (an [`InformerSlot`] holds the informer) after each group of lines sharing one `t`, so no thread decides when a
//! batch is popped and every run writes the same bytes. With `--speed X` lines come at `t / X`
//! and a consumer thread pops concurrently, as live.

use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::anyhow;
use kubectl_deltas::Object;
use kubectl_deltas::cache::reflector::Clock as _;
use kubectl_deltas::cache::{Informer, InformerError, ReflectorConfig, ReflectorError};
use kubectl_deltas::source::ListerWatcher as _;
use kubectl_deltas::source::recording::{
    InformerSlot, Pace, RecordedResource, RecordingListerWatcher, RecordingReader,
};

use super::informer::strip_managed_fields;
use super::pipeline::{Hooks, Pipeline, PipelineError, Settings, Source, View, refuse_store_flags};
use crate::cli::exit::{Exit, WithExit};
use crate::cli::profile::Profile;
use crate::cli::{GlobalArgs, InformerKindArg, ReplayArgs};

pub fn run(args: ReplayArgs, global: &GlobalArgs) -> anyhow::Result<()> {
    let mut view = View::from_args(&args.view, global)?;
    let mut notes = Vec::new();
    let plain = view.informer == InformerKindArg::Plain;
    let delayed = view.handler_delay.is_some() || view.handlers.iter().any(|h| h.delay.is_some());
    if args.speed.is_none() && plain && delayed {
        notes.push(
            "a plain informer's handler delay changes nothing in an instant replay, whose pops \
             never wait for the consumer; add --speed X to see it",
        );
    }
    // Without the informer's own period no handler resyncs (client-go's rule, which a warning
    // then points out), and the recording's RESYNC lines are followed.
    if args.informer.resync.0.is_some() {
        notes.push(
            "resyncs are timed from --resync and the handlers' periods on the recording's \
             clock, as a live informer's would be; the recording's RESYNC lines are ignored",
        );
    }
    if let Some(speed) = args.speed {
        // Delays in the recording's time, as every time the output shows.
        view.handler_delay = view.handler_delay.map(|d| d.div_f64(speed));
        for handler in &mut view.handlers {
            handler.delay = handler.delay.map(|d| d.div_f64(speed));
        }
    }
    // `replay` has no `--watch-list`: the recording says how the initial list came.
    refuse_store_flags(args.store.store, &args.informer, &view)?;
    let profile = Profile::resolve(&args.informer, None)?;
    let reflector = base_config().client_go(profile.version);
    // Before any note: a flag the store refuses is the one line on stderr.
    let settings = Settings::new(view, &args.informer, profile, args.store.store, reflector)?;
    for note in notes {
        // Not `eprintln!`, which panics when stderr is a closed pipe.
        let _ = writeln!(std::io::stderr(), "kubectl-deltas: note: {note}");
    }
    let runtime = super::runtime()?;
    runtime.block_on(replay(
        &args.file,
        args.speed,
        args.informer.resync.0,
        settings,
    ))
}

/// What a replay's Reflector starts from: as `watch`'s default, managedFields stripped.
fn base_config() -> ReflectorConfig {
    strip_managed_fields(ReflectorConfig::default())
}

async fn replay(
    file: &Path,
    speed: Option<f64>,
    resync: Option<Duration>,
    mut settings: Settings,
) -> anyhow::Result<()> {
    let reader = RecordingReader::open(file)?;
    // The informer the session builds for this source: drained there at each turn of an instant
    // replay, resynced at each RESYNC line.
    let informer = Arc::new(InformerSlot::default());
    let pace = match speed {
        None => Pace::Instant(informer.clone()),
        Some(factor) => Pace::Speed(factor),
    };
    let lister_watcher = RecordingListerWatcher::new(reader, pace)?.on_resync(informer.clone());
    let secrets = Object::is_secret_resource(&lister_watcher.describe().api_resource);
    settings.refuse_secret_queries(secrets, settings.view.show_secret_data)?;
    settings.reflector = lister_watcher.reflector_config(settings.reflector.clone());
    // The informer's own resync period; its timer ticks on the recording's clock (see
    // `InformerConfig::external_resync`), never the Reflector's.
    // Not raised to a second: only handlers' periods are, by the shared informer.
    settings.reflector.resync = resync.filter(|period| !period.is_zero());
    settings
        .profile
        .replayed(lister_watcher.starts_with_watch());
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
            informer: Some(informer),
            inline: speed.is_none(),
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

/// `index --replay`: applies the whole recording to `informer`'s cache (its final state, not
/// only the first list). `resource`, if given, must name the recorded resource (a usage error otherwise).
///
/// Lines are handed out as fast as the Reflector takes them ([`Pace::Unpaced`]): which batches
/// the consumer pops on the way depends on its speed, the state at the end does not.
pub async fn cache_from_recording(
    file: &Path,
    resource: Option<&str>,
    informer: &Arc<Informer>,
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
    let config = lister_watcher.reflector_config(base_config());
    let (clock, end) = (lister_watcher.clock(), lister_watcher.end());
    let recorded_time = clock.clone();
    let stop = end.clone();
    let run = informer
        .run(lister_watcher, config, clock, async move {
            // However it ended: the outcome is read below.
            let _ = stop.wait().await;
        })
        .await;
    if run.is_ok() {
        informer.finish().await;
    }
    let joined = informer.shut_down().await;
    match run {
        Ok(()) if joined => {}
        Ok(()) => return Err(anyhow!("the consumer thread panicked")),
        Err(InformerError::Reflector(error)) => return Err(gave_up(file, error)),
        Err(error) => return Err(anyhow::Error::new(error)),
    }
    end.wait().await?;
    Ok(Recorded {
        scope,
        ended_at: recorded_time.wall(),
    })
}
