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
//! and a consumer thread pops concurrently, as live, on a clock that runs at X times real time
//! ([`ReplayClock::running`](kubectl_deltas::source::recording::ReplayClock::running)): handler
//! delays and a controller's reconciles, retries and requeues are durations of recorded time,
//! taking `1/X` of it in real time, and whatever happens between two lines is stamped with the
//! recorded time it happened at.

use std::ffi::OsString;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::anyhow;
use clap::parser::ValueSource;
use clap::{CommandFactory as _, Parser as _};
use kubectl_deltas::Object;
use kubectl_deltas::cache::reflector::Clock as _;
use kubectl_deltas::cache::{Informer, InformerError, ReflectorConfig, ReflectorError};
use kubectl_deltas::render::printable;
use kubectl_deltas::source::ListerWatcher as _;
use kubectl_deltas::source::recording::{
    InformerSlot, Pace, Quiescence, RecordedResource, RecordingListerWatcher, RecordingReader,
    ReplayClock, ReplaySummary, ResyncHook, TurnArbiter, recorded_resync_period,
};

use super::index_at::AtSink;
use super::informer::strip_managed_fields;
use super::pipeline::{Hooks, Pipeline, PipelineError, Source};
use super::plan::{OutputPlan, Plan, refuse};
use crate::cli::exit::{self, Exit, Failure, WithExit};
use crate::cli::{self, GlobalArgs, Period, ReplayArgs};

pub fn run(args: ReplayArgs, global: &GlobalArgs) -> anyhow::Result<()> {
    let (args, recording_flags) = with_recording_flags(args)?;
    let mut view = OutputPlan::from_args(&args.view, global)?;
    view.refuse_page_over(&args.file)?;
    view.narrow = view
        .narrow
        .replay(&args.narrow)
        .map_err(|e| anyhow!(e))
        .exit_with(Exit::Usage)?;
    let mut notes: Vec<std::borrow::Cow<'static, str>> = Vec::new();
    match &recording_flags {
        _ if args.view.quiet => {}
        RecordingFlags::None => {}
        RecordingFlags::Used(flags) => notes.push(
            format!(
                "replaying with the recording's {}; give your own to override",
                printable(flags)
            )
            .into(),
        ),
        RecordingFlags::Dropped { flags, by } => notes.push(
            format!(
                "not replaying with the recording's {}: {by} changes the informer, so only the \
                 flags given count; give those too to keep them",
                printable(flags)
            )
            .into(),
        ),
    }
    let plain = view.informer == kubectl_deltas::cache::InformerKind::Plain;
    let delayed = view.handler_delay.is_some() || view.handlers.iter().any(|h| h.delay.is_some());
    if args.speed.is_none() && plain && delayed {
        notes.push(
            "a plain informer's handler delay changes nothing in an instant replay, whose pops \
             never wait for the consumer; add --speed X to see it"
                .into(),
        );
    }
    let resync = informer_resync(&args, &view).map_err(|error| match &recording_flags {
        // The recording's fault, not the command line's: refused as a bad recording.
        RecordingFlags::Used(flags) => Failure {
            exit: Exit::Runtime,
            error: anyhow!(
                "{}: the flags its header gives (\"replayWith\": {flags}) are refused: {}; \
                 give your own flags to replay it",
                args.file.display(),
                exit::message(&error)
            ),
            note: None,
        }
        .into(),
        _ => error,
    })?;
    match resync {
        InformerResync::Given(_) => notes.push(
            "resyncs are timed from --resync and the handlers' periods on the recording's \
             clock, as a live informer's would be; the recording's RESYNC lines are ignored"
                .into(),
        ),
        InformerResync::Recorded(period) => notes.push(
            format!(
                "the informer's resync period is {}, read from the recording's RESYNC lines, so \
                 that handlers without resync= receive its resyncs; --resync sets another",
                humantime::format_duration(period)
            )
            .into(),
        ),
        InformerResync::Off => {}
    }
    // `replay` has no `--watch-list`: the recording says how the initial list came. Before any
    // note: a flag the store refuses is the one line on stderr.
    let mut plan = Plan::resolve(view, &args.informer, args.store.store, None, |profile| {
        base_config().client_go(profile.version)
    })?
    .compare(
        args.compare.compare.as_ref(),
        &args.informer,
        args.store.store,
        None,
        true,
        |profile| base_config().client_go(profile.version),
    )?;
    let files: Vec<PathBuf> = std::iter::once(args.file.clone())
        .chain(args.more.iter().cloned())
        .collect();
    refuse::replayed_from_stdin(&files)?;
    let write_notes = |notes: Vec<std::borrow::Cow<'static, str>>| {
        for note in notes {
            // Not `eprintln!`, which panics when stderr is a closed pipe.
            let _ = writeln!(std::io::stderr(), "kubectl-deltas: note: {note}");
        }
    };
    // A recording that cannot be read is the replay's failure, after its notes.
    let session = match Session::open(&files, args.speed, resync, &plan) {
        Ok(session) => session,
        Err(error) => {
            write_notes(notes);
            return Err(error);
        }
    };
    session.refuse_unshared()?;
    owned_as_named(&mut plan, &session.recordings);
    let names: Vec<String> = (session.recordings.iter())
        .map(|r| r.lister_watcher.describe().resource())
        .collect();
    plan.resolve_owns(&names, "a replay")?;
    write_notes(notes);
    let runtime = super::runtime()?;
    runtime.block_on(replay(session, args.speed, plan, args.view.quiet))
}

/// The recordings of one replay, each on its way to a lane, on the session's one clock.
struct Session {
    recordings: Vec<Replayed>,
    clock: ReplayClock,
    resync: InformerResync,
}

/// One recording of a [`Session`].
struct Replayed {
    file: PathBuf,
    lister_watcher: RecordingListerWatcher,
    /// The informer the pipeline builds for it: drained at each turn of an instant replay,
    /// resynced at its RESYNC lines.
    informer: Arc<InformerSlot>,
}

impl Session {
    /// Opens `files` as one session: a clock starting at the earliest `startedAt`, and, in an
    /// instant replay, one [`TurnArbiter`] that lets the recordings hand out their groups of
    /// lines in time order, each after every informer and controller of the session had its
    /// turn.
    fn open(
        files: &[PathBuf],
        speed: Option<f64>,
        resync: InformerResync,
        plan: &Plan,
    ) -> anyhow::Result<Session> {
        let readers = (files.iter())
            .map(|file| RecordingReader::open(file))
            .collect::<Result<Vec<_>, _>>()?;
        let started_at = (readers.iter())
            .map(|r| r.header().map_or(UNIX_EPOCH, |h| h.started_at))
            .min()
            .unwrap_or(UNIX_EPOCH);
        let clock = match speed {
            None => ReplayClock::new(started_at),
            Some(factor) => ReplayClock::running(started_at, factor),
        };
        let slots: Vec<Arc<InformerSlot>> = files.iter().map(|_| Arc::default()).collect();
        let arbiter = TurnArbiter::new(
            (slots.iter())
                .map(|slot| slot.clone() as Arc<dyn Quiescence>)
                .collect(),
        );
        let explicit_handler_periods = plan.stack.handlers.iter().any(|h| h.resync.is_some())
            || plan.stack.controllers.iter().any(|c| c.resync.is_some());
        let mut recordings = Vec::new();
        for (index, (reader, informer)) in readers.into_iter().zip(slots).enumerate() {
            let pace = match speed {
                None => Pace::Instant(arbiter.member(index)),
                Some(factor) => Pace::Speed(factor),
            };
            let lister_watcher = RecordingListerWatcher::on_clock(reader, pace, &clock)?;
            let lister_watcher = match resync {
                InformerResync::Recorded(_) if !explicit_handler_periods => {
                    lister_watcher.on_resync(Arc::new(RecordedTicks(informer.clone())))
                }
                _ => lister_watcher.on_resync(informer.clone()),
            };
            recordings.push(Replayed {
                file: files[index].clone(),
                lister_watcher,
                informer,
            });
        }
        Ok(Session {
            recordings,
            clock,
            resync,
        })
    }

    /// Refuses recordings that cannot share the session's clock
    /// ([`refuse::replayed_together`]).
    fn refuse_unshared(&self) -> anyhow::Result<()> {
        let described: Vec<refuse::ReplayedRecording<'_>> = (self.recordings.iter())
            .map(|r| refuse::ReplayedRecording {
                file: &r.file,
                resource: r.lister_watcher.describe().resource(),
                started_at: r.lister_watcher.header().map(|h| h.started_at),
                streamed: r.lister_watcher.starts_with_watch(),
            })
            .collect();
        refuse::replayed_together(&described)
    }
}

/// The `owns=` of each controller written as the resource of the recording it names (`rs`,
/// `replicaset`, `ReplicaSet` for a recording of `replicasets.apps`: any name the recording's
/// header accepts, as `index RESOURCE --replay`), so that the plan finds it among the session's
/// resources as the timeline names them. One that names none is left as typed, for the plan's
/// refusal to quote.
fn owned_as_named(plan: &mut Plan, recordings: &[Replayed]) {
    let compared = plan.compared.iter_mut().map(|(_, stack)| stack);
    let specs = std::iter::once(&mut plan.stack)
        .chain(compared)
        .flat_map(|stack| stack.controllers.iter_mut());
    for spec in specs {
        for owned in &mut spec.owns {
            let named = recordings.iter().find(|r| {
                let lister_watcher = &r.lister_watcher;
                match lister_watcher.header() {
                    Some(header) => header.resource.is_named(owned),
                    None => RecordedResource::new(&lister_watcher.describe().api_resource, true)
                        .is_named(owned),
                }
            });
            if let Some(recording) = named {
                *owned = recording.lister_watcher.describe().resource();
            }
        }
    }
}

/// The replayed informer's own resync period (client-go's `defaultEventHandlerResyncPeriod`,
/// which handlers added without one take), and who times its resyncs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InformerResync {
    /// `--resync 0`, or nothing to read it from: no handler resyncs (client-go's rule for an
    /// informer whose period is 0); the recording's `RESYNC` lines still resync the queue.
    Off,
    /// `--resync`: the replay times the resyncs on the recording's clock from it and the
    /// handlers' periods, and skips the `RESYNC` lines.
    Given(Duration),
    /// Without `--resync`: the period of the recording's `RESYNC` lines, which stay the ticks
    /// (a handler's `resync=` makes the replay time them instead, as with `--resync`).
    Recorded(Duration),
}

/// The shortest `--resync` a replay takes. An instant replay ticks the informer's resync timer
/// on the recording's clock without waiting, so the number of ticks is the recording's span
/// divided by the period: at most a thousand per recorded second keeps that bounded (a
/// nanosecond period would tick a billion times per recorded second). client-go raises a
/// handler's period to `minimumResyncPeriod`, a second (`tools/cache/shared_informer.go`,
/// `AddEventHandlerWithResyncPeriod`), but takes the informer's own as given
/// (`NewSharedIndexInformer`'s `resyncCheckPeriod`): live, its ticks cost real time.
const SHORTEST_RESYNC: Duration = Duration::from_millis(1);

/// How many lines a replay reads ahead for the `RESYNC` lines' period: well past the first
/// resyncs of a recording that has them, and a bounded cost for one that has none.
const RESYNC_LINES_AHEAD: usize = 100_000;

fn informer_resync(args: &ReplayArgs, view: &OutputPlan) -> anyhow::Result<InformerResync> {
    match args.informer.resync {
        Some(Period(Some(period))) if period < SHORTEST_RESYNC => {
            return Err(anyhow!(
                "--resync {}: a replay computes the informer's resyncs on the recording's \
                 clock, where they cost no real time, so its period is {} at the least; give a \
                 longer one, or 0 for none",
                humantime::format_duration(period),
                humantime::format_duration(SHORTEST_RESYNC)
            ))
            .exit_with(Exit::Usage);
        }
        Some(Period(Some(period))) => {
            // Not raised to a second: only handlers' periods are, by the shared informer.
            return Ok(InformerResync::Given(period));
        }
        Some(Period(None)) => return Ok(InformerResync::Off),
        None => {}
    }
    // The period only matters to handlers; stdin cannot be read twice.
    let no_handlers = view.shared_handlers().is_empty() && view.controllers.is_empty();
    if no_handlers || args.file.as_os_str() == "-" {
        return Ok(InformerResync::Off);
    }
    let mut reader = RecordingReader::open(&args.file)?;
    // A line that does not parse is reported by the replay itself, at its place.
    let period = recorded_resync_period(&mut reader, RESYNC_LINES_AHEAD).unwrap_or(None);
    Ok(period.map_or(InformerResync::Off, InformerResync::Recorded))
}

/// The flags of `replay` that only choose what is shown of a replay, how it is laid out, or when
/// it stops: given alone, they leave the recording's `replayWith` in force, since the informer,
/// its handlers and controllers do the same work with or without them. Every argument of
/// `replay` is in this list or in [`INFORMER`] (a test checks it).
const PRESENTATION: [&str; 24] = [
    "file",
    // Each compared stack takes the other flags, the recording's among them.
    "compare",
    "more",
    "output",
    "page_file",
    "object",
    "show_secret_data",
    "since_now",
    "until_synced",
    "no_headers",
    "max_batches",
    "query",
    "quiet",
    "speed",
    "verbose",
    "color",
    "view_kind",
    "globs",
    "types",
    "tombstones",
    "selector",
    "field_selector",
    "from",
    "to",
];

/// The flags of `replay` that change what the informer, its handlers or its controllers do: one
/// of them given replaces the recording's `replayWith` as a whole (a note names what is dropped).
/// A flag found in neither list is treated as one of these.
const INFORMER: [&str; 12] = [
    "client_go",
    "resync",
    "legacy_sync",
    "unlock_while_processing",
    "indices",
    "fifo",
    "batch_pop",
    "store",
    "handler_delay",
    "handlers",
    "controllers",
    "informer_kind",
];

/// The presentation flags a recording's `replayWith` may hold besides [`INFORMER`]'s: `--view`,
/// which `record` writes so that the replay shows its handlers' rows as the recording's
/// timeline did.
const RECORDED_LAYOUT: [&str; 1] = ["view_kind"];

/// Whether a recording's `replayWith` may hold the flag `id`. Recordings travel in bug reports:
/// replaying one must not write a file of its choosing (`-f`), hide rows, take longer than its
/// recorded time (`--speed`) or reach a cluster, so only the informer's flags and `--view` are
/// allowed, and a flag not listed (one added later too) is refused.
fn allowed_in_replay_with(id: &str) -> bool {
    INFORMER.contains(&id) || RECORDED_LAYOUT.contains(&id)
}

/// What [`with_recording_flags`] did with the recording's `replayWith`, for the note.
#[derive(Debug, PartialEq, Eq)]
enum RecordingFlags {
    /// None to use: no header, no `replayWith`, or stdin.
    None,
    /// These flags were added to the command line's.
    Used(String),
    /// These flags were not used: `by`, given on the command line, changes the informer.
    Dropped { flags: String, by: String },
}

/// `args`, with the flags the recording is meant to be replayed with (its header's `replayWith`)
/// added when the command line gives none of [`INFORMER`]'s (a presentation flag given on both
/// is the command line's); and what was done with them. A recording read from stdin cannot be
/// read twice: its header's flags are not used. A `replayWith` that holds a flag a recording may
/// not set, or does not parse, refuses the replay.
fn with_recording_flags(args: ReplayArgs) -> anyhow::Result<(ReplayArgs, RecordingFlags)> {
    if args.file.as_os_str() == "-" {
        return Ok((args, RecordingFlags::None));
    }
    // An unreadable recording is reported by the replay itself.
    let flags = match RecordingReader::open(&args.file) {
        Ok(reader) => match reader.header() {
            Some(header) if !header.replay_with.is_empty() => header.replay_with.clone(),
            _ => return Ok((args, RecordingFlags::None)),
        },
        Err(_) => return Ok((args, RecordingFlags::None)),
    };
    let text = flags.join(" ");
    // main has already refused a mistyped subcommand and a command line that does not parse.
    let Ok(argv) = cli::with_watch_shorthand(std::env::args_os().collect()) else {
        return Ok((args, RecordingFlags::None));
    };
    let given = given_replay_ids(&argv);
    if let Some(id) = given.iter().find(|id| !PRESENTATION.contains(&id.as_str())) {
        let by = flag_name(id);
        return Ok((args, RecordingFlags::Dropped { flags: text, by }));
    }
    let refuse = |why: String| {
        Err(anyhow!(
            "{}: the flags its header gives (\"replayWith\": {text}) {why}; give your own \
             flags to replay it",
            args.file.display()
        ))
        .exit_with(Exit::Runtime)
    };
    // The header's flags alone, on a command line of their own, as `record` wrote them.
    let program = argv
        .first()
        .cloned()
        .unwrap_or_else(|| "kubectl-deltas".into());
    let header_argv: Vec<OsString> = [program.clone(), "replay".into(), "recording".into()]
        .into_iter()
        .chain(flags.iter().map(OsString::from))
        .collect();
    let header_ids = match replay_matches(&header_argv) {
        Ok(matches) => given_ids(&matches),
        Err(error) => return refuse(format!("are not valid for replay: {}", clap_reason(&error))),
    };
    let not_allowed = header_ids
        .iter()
        .filter(|id| id.as_str() != "file")
        .find(|id| !allowed_in_replay_with(id));
    if let Some(id) = not_allowed {
        return refuse(format!(
            "set {}, which a recording may not set: it may hold only flags that change what \
             the informer, its handlers and controllers do (docs/recording.md)",
            flag_name(id)
        ));
    }
    // A presentation flag given on both is the command line's: the header's is left out.
    let keep: Vec<&str> = header_ids
        .iter()
        .map(String::as_str)
        .filter(|id| allowed_in_replay_with(id) && !given.iter().any(|g| g == id))
        .collect();
    let added = cli::given::given_flags(&header_argv, "replay", &keep);
    // Right after the subcommand's name: before a `--` the command line may hold.
    let at = argv
        .iter()
        .position(|word| word == "replay")
        .map_or(argv.len(), |i| i + 1);
    let mut with_flags = argv;
    with_flags.splice(at..at, added.iter().map(OsString::from));
    match cli::Cli::try_parse_from(with_flags) {
        Ok(cli::Cli {
            command: cli::Command::Replay(args),
            ..
        }) => Ok((args, RecordingFlags::Used(added.join(" ")))),
        Ok(_) => unreachable!("the command line named replay"),
        Err(error) => refuse(format!("are not valid for replay: {}", clap_reason(&error))),
    }
}

/// What clap says is wrong with a command line, in its own words: the first line of its error
/// without the `error: ` clap starts it with (`invalid value 'web,fail=1000' for '--controller
/// <CONTROLLER>': fail=1000 … is above 100: …`).
fn clap_reason(error: &clap::Error) -> String {
    let text = error.render().to_string();
    let first = text.lines().next().unwrap_or_default();
    first.strip_prefix("error: ").unwrap_or(first).to_owned()
}

/// `argv` (a whole command line naming `replay`) parsed: the matches of `replay`.
fn replay_matches(argv: &[OsString]) -> Result<clap::ArgMatches, clap::Error> {
    let matches = cli::Cli::command().try_get_matches_from(argv)?;
    match matches.subcommand() {
        Some(("replay", given)) => Ok(given.clone()),
        _ => Err(cli::Cli::command().error(
            clap::error::ErrorKind::InvalidSubcommand,
            "not a replay command line",
        )),
    }
}

/// The ids of `replay`'s arguments given on the command line `argv`; none if it does not parse.
fn given_replay_ids(argv: &[OsString]) -> Vec<String> {
    replay_matches(argv)
        .map(|m| given_ids(&m))
        .unwrap_or_default()
}

/// The ids of `replay`'s arguments set on the command line in `given`. By the arguments, not
/// `given.ids()`, which has the groups of the flattened structs too.
fn given_ids(given: &clap::ArgMatches) -> Vec<String> {
    replay_command()
        .get_arguments()
        .map(|arg| arg.get_id().as_str())
        .filter(|id| given.value_source(id) == Some(ValueSource::CommandLine))
        .map(str::to_owned)
        .collect()
}

/// `replay` as clap runs it: with the global flags (`-v`, `--color`) and `--help` among its
/// arguments.
fn replay_command() -> clap::Command {
    let mut command = cli::Cli::command();
    command.build();
    command
        .find_subcommand("replay")
        .cloned()
        .expect("replay is a subcommand")
}

/// How the user writes `replay`'s argument `id`: `--file`, `-o/--output`, `FILE`.
fn flag_name(id: &str) -> String {
    let command = replay_command();
    match command.get_arguments().find(|a| a.get_id() == id) {
        Some(arg) => match (arg.get_short(), arg.get_long()) {
            (Some(short), Some(long)) => format!("-{short}/--{long}"),
            (None, Some(long)) => format!("--{long}"),
            (Some(short), None) => format!("-{short}"),
            (None, None) => arg.get_id().as_str().to_uppercase(),
        },
        None => id.to_owned(),
    }
}

/// What a replay's Reflector starts from: as `watch`'s default, managedFields stripped.
fn base_config() -> ReflectorConfig {
    strip_managed_fields(ReflectorConfig::default())
}

async fn replay(
    session: Session,
    speed: Option<f64>,
    mut plan: Plan,
    quiet: bool,
) -> anyhow::Result<()> {
    let Session {
        recordings,
        clock,
        resync,
    } = session;
    for recording in &recordings {
        let lister_watcher = &recording.lister_watcher;
        let secrets = Object::is_secret_resource(&lister_watcher.describe().api_resource);
        plan.refuse_secret_queries(secrets, plan.output.show_secret_data)?;
        // As `record --metadata-only` refused them.
        plan.refuse_outside_metadata_queries(lister_watcher.metadata_only())?;
    }
    for stack in plan.stacks_mut() {
        let informer_plan = &mut stack.informer;
        // The recordings all start alike (`refuse::replayed_together`): the first says how.
        if let Some(first) = recordings.first() {
            let lister_watcher = &first.lister_watcher;
            informer_plan.reflector =
                lister_watcher.reflector_config(informer_plan.reflector.clone());
            informer_plan.replayed(lister_watcher.starts_with_watch());
        }
        // The informer's own resync period; its timer ticks on the recording's clock (see
        // `InformerConfig::external_resync`), never the Reflector's. Not raised to a second:
        // only handlers' periods are, by the shared informer.
        informer_plan.reflector.resync = match resync {
            InformerResync::Off => None,
            InformerResync::Given(period) | InformerResync::Recorded(period) => Some(period),
        };
        // An instant replay drains the queue before its time moves on: nothing waits in it.
        informer_plan.wait_scale = Some(speed.unwrap_or(0.0));
    }
    // `--from +30s` counts from the session's start, where its clock stands until the first
    // line is handed out.
    plan.output.narrow = std::mem::take(&mut plan.output.narrow)
        .starting_at(clock.wall())
        .map_err(|e| anyhow!(e))
        .exit_with(Exit::Usage)?;
    let mut files = Vec::new();
    let mut ends = Vec::new();
    let mut sources = Vec::new();
    for recording in recordings {
        let Replayed {
            file,
            lister_watcher,
            informer,
        } = recording;
        let end = lister_watcher.end();
        ends.push(end.clone());
        files.push(file);
        sources.push(Source {
            name: lister_watcher.describe().resource(),
            lister_watcher,
            hooks: Hooks {
                end: Some(Box::pin(async move {
                    end.wait().await.map(drop).map_err(Into::into)
                })),
                informer: Some(informer),
                inline: speed.is_none(),
                observer: None,
                counted: None,
            },
        });
    }
    let pipeline = Pipeline::new(plan);
    let stacks_differ = pipeline.stacks_differ();
    let result = pipeline.run(sources, clock, std::future::pending()).await;
    for (file, ended) in files.iter().zip(&ends) {
        if !quiet && let Some(Ok(summary)) = ended.get() {
            pops_differ_note(file, summary);
        }
    }
    match result {
        Ok(_) if stacks_differ.load(std::sync::atomic::Ordering::Relaxed) => {
            Err(exit::stacks_differ())
        }
        Ok(_) => Ok(()),
        // The recording's own message: `FILE:LINE: what is wrong`.
        Err(PipelineError::Source { error, .. }) => Err(anyhow!(error.to_string())),
        Err(PipelineError::Reflector { error, index, .. }) => Err(gave_up(&files[index], error)),
        Err(other) => Err(other.into()),
    }
}

/// Says where the replay's pops part from the recorded session's, if they do: the live queue
/// coalesced what an instant replay pops apart (its consumer fell behind), or the other way.
fn pops_differ_note(file: &Path, summary: ReplaySummary) {
    let Some(at) = summary.pops_differ else {
        return;
    };
    let deltas = |n: u64| format!("{n} delta{}", if n == 1 { "" } else { "s" });
    let _ = writeln!(
        std::io::stderr(),
        "kubectl-deltas: note: {}:{}: the recorded queue had coalesced {} before this line, this \
         replay's {}: from there on its pops differ from the recorded session's (an instant \
         replay coalesces only the events of one t; live, a key's events coalesce while it waits \
         for the consumer)",
        file.display(),
        at.line,
        deltas(at.recorded),
        deltas(at.replayed),
    );
}

/// The replay's resync hook when the informer's period was read from the recording: its
/// `RESYNC` lines stay the ticks (the informer's period only decides which handlers are due),
/// rather than ticks computed from that period, which would drift from the recorded ones.
struct RecordedTicks(Arc<InformerSlot>);

impl ResyncHook for RecordedTicks {
    fn resync(&self, at: SystemTime) {
        self.0.resync(at);
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
    /// The recording holds metadata only (`record --metadata-only`).
    pub metadata_only: bool,
}

/// `index --replay`: applies the whole recording to `informer`'s cache (its final state, not
/// only the first list). `resource`, if given, must name the recorded resource (a usage error otherwise).
///
/// Lines are handed out as fast as the Reflector takes them ([`Pace::Unpaced`]): which batches
/// the consumer pops on the way depends on its speed, the state at the end does not. With `at`
/// (`--at`), as `replay` hands them out instead ([`Pace::Instant`], `informer` consuming
/// inline), so that its pops are `replay`'s.
pub async fn cache_from_recording(
    file: &Path,
    resource: Option<&str>,
    informer: &Arc<Informer>,
    at: Option<&AtSink>,
) -> anyhow::Result<Recorded> {
    let reader = RecordingReader::open(file)?;
    let pace = match at {
        Some(_) => Pace::Instant(informer.clone()),
        None => Pace::Unpaced,
    };
    let lister_watcher = RecordingListerWatcher::new(reader, pace)?;
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
    let metadata_only = lister_watcher.metadata_only();
    let config = lister_watcher.reflector_config(base_config());
    let (clock, end) = (lister_watcher.clock(), lister_watcher.end());
    if let Some(at) = at {
        // Where the clock stands until the first line is handed out, as for `replay --to`.
        at.starts_at(clock.wall());
    }
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
        metadata_only,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every argument of `replay` is classified once: kept with the recording's flags, or
    /// replacing them. A flag added later fails here until it is put in one list.
    #[test]
    fn every_replay_flag_is_presentation_or_informer() {
        for arg in replay_command().get_arguments() {
            let id = arg.get_id().as_str();
            if id == "help" {
                continue;
            }
            let lists =
                usize::from(PRESENTATION.contains(&id)) + usize::from(INFORMER.contains(&id));
            assert_eq!(lists, 1, "{id} is in {lists} of PRESENTATION and INFORMER");
        }
        for id in PRESENTATION.iter().chain(&INFORMER) {
            assert!(
                replay_command().get_arguments().any(|a| a.get_id() == *id),
                "{id} is no argument of replay"
            );
        }
    }

    /// What `record` writes into `replayWith` is all a header may hold.
    #[test]
    fn record_writes_only_flags_a_header_may_hold() {
        for id in super::super::record::HANDLER_FLAGS
            .iter()
            .chain(&super::super::record::INFORMER_FLAGS)
        {
            assert!(allowed_in_replay_with(id), "record writes {id}");
        }
        for id in [
            "output",
            "page_file",
            "speed",
            "verbose",
            "file",
            "from",
            "quiet",
        ] {
            assert!(!allowed_in_replay_with(id), "{id}");
        }
    }
}
