//! Every refusal of a flag combination a session makes, each one sentence on stderr with its
//! exit code (src/cli/exit.rs), made while the [`Plan`](super::Plan) is resolved: before
//! anything is contacted, and before anything else reads the flags, so that the sentence a user
//! sees is about the flag they gave.

use anyhow::{Context as _, anyhow};
use kubectl_deltas::cache::IndexSpec;
use kubectl_deltas::source::output_file::OutputFile;

use super::output::Shown;
use super::{ControllerRuntime, ControllerSpec, OutputPlan};
use crate::cli::compare::StackArg;
use crate::cli::exit::{Exit, Failure, WithExit};
use crate::cli::{
    ControllerArg, ControllerQueueKind, ControllerRuntimeKind, FifoKind, HandlerViewArgs,
    InformerArgs, InformerKindArg, StoreKind, ViewArgs, ViewKind, WatchOutput,
};
use kubectl_deltas::cache::InformerKind;
use kubectl_deltas::cache::kube_runtime::DEFAULT_ERROR_REQUEUE;

/// Refuses, with `--store undelta`, the flags about a queue, its consumer, an Indexer or
/// handlers, which an UndeltaStore does not have: a usage error of one line. Called before
/// anything else reads those flags, so that this is the line a user sees.
pub fn store_flags(
    store: StoreKind,
    informer: &InformerArgs,
    view: &OutputPlan,
) -> anyhow::Result<()> {
    if store == StoreKind::Undelta {
        undelta_flags(informer, view)?;
    }
    queue_flags(informer)
}

/// Refuses `--legacy-sync` with a queue whose deltas it cannot change (docs/queues.md): the plain
/// FIFO queues objects without delta types, the atomic queue emits `ReplacedAll` whatever it
/// says. `--batch-pop` above 1 with a queue without batch pops is refused with the profile.
pub fn queue_flags(informer: &InformerArgs) -> anyhow::Result<()> {
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

/// Refuses, with `--store undelta`, every flag that is about what it does not have. One line
/// each, exit 2.
fn undelta_flags(informer: &InformerArgs, view: &OutputPlan) -> anyhow::Result<()> {
    let refused = if let Some(fifo) = informer.fifo {
        Some(format!(
            "--fifo {} chooses an informer's queue, and an UndeltaStore has none",
            clap::ValueEnum::to_possible_value(&fifo)
                .map(|v| v.get_name().to_owned())
                .unwrap_or_default()
        ))
    } else if let Some(n) = informer.batch_pop.filter(|n| *n > 1) {
        Some(format!(
            "--batch-pop {n} pops a queue, and an UndeltaStore has none: each change is pushed \
             as it happens"
        ))
    } else if informer.legacy_sync.is_some() {
        Some(
            "--legacy-sync changes the deltas of an informer's queue, and an UndeltaStore \
              makes none"
                .to_owned(),
        )
    } else if informer.unlock_while_processing.is_some() {
        Some(
            "--unlock-while-processing changes how an informer's queue is popped, and an \
             UndeltaStore has none"
                .to_owned(),
        )
    } else if let Some(spec) = informer.indices.first() {
        Some(format!(
            "--index {spec} indexes an informer's Indexer, and an UndeltaStore has none"
        ))
    } else if !view.controllers.is_empty() {
        Some(
            "--controller registers an informer's event handler, and an UndeltaStore has none: \
             its push function runs inside the Reflector's call"
                .to_owned(),
        )
    } else if !view.handlers.is_empty() {
        Some(
            "--handler registers an informer's event handler, and an UndeltaStore has none: \
             its push function runs inside the Reflector's call"
                .to_owned(),
        )
    } else if view.informer == InformerKind::Plain {
        Some("--informer plain chooses how an informer calls its handler: there is none".to_owned())
    } else if view.handler_delay.is_some() {
        Some(
            "--handler-delay slows an informer's handler, and an UndeltaStore has none: its \
              push runs inside the Reflector's call"
                .to_owned(),
        )
    } else if !view.queries.is_empty() {
        Some(
            "--query picks batches by their objects, and a push is always the whole list: \
             narrow the list with -l or --field-selector"
                .to_owned(),
        )
    } else if view.narrow.narrows() {
        Some(
            "--match, --types, --tombstones and replay's -l, --field-selector, --from and --to \
             pick pops of an informer's queue, and an UndeltaStore pushes the whole list"
                .to_owned(),
        )
    } else if informer.resync.and_then(|p| p.0).is_some() {
        Some("--resync changes nothing: client-go's UndeltaStore.Resync pushes nothing".to_owned())
    } else if view.view != Shown::Pops {
        // Without --handler or --handler-delay (refused above) the default is pops: this is an
        // explicit --view.
        Some(
            "--view handlers and --view both show what an informer's handlers received, and an \
             UndeltaStore has none"
                .to_owned(),
        )
    } else {
        None
    };
    match refused {
        Some(why) => Err(anyhow!("--store undelta: {why}")).exit_with(Exit::Usage),
        None => Ok(()),
    }
}

/// The `--index` specs, parsed (a bad spec is a usage error) and without repeats.
pub fn index_specs(informer: &InformerArgs) -> anyhow::Result<Vec<IndexSpec>> {
    let mut specs: Vec<IndexSpec> = Vec::new();
    for text in &informer.indices {
        let spec: IndexSpec = text.parse().exit_with(Exit::Usage)?;
        if !specs.contains(&spec) {
            specs.push(spec);
        }
    }
    Ok(specs)
}

/// Refuses, unless `show_secret_data`, the specs (each with the flag it came from) that read what
/// every output redacts of a Secret ([`IndexSpec::reads_secret_values`]) when `secrets` (Secrets
/// are listed): an index of them would hold Secret values, a query would pick Secrets by them.
pub fn secret_specs<'a>(
    specs: impl IntoIterator<Item = (&'a str, &'a IndexSpec)>,
    secrets: bool,
    show_secret_data: bool,
) -> anyhow::Result<()> {
    if show_secret_data || !secrets {
        return Ok(());
    }
    match specs
        .into_iter()
        .find(|(_, spec)| spec.reads_secret_values())
    {
        Some((flag, spec)) => Err(anyhow!(
            "{flag} {spec} reads Secret values, which every output redacts: add \
             --show-secret-data to use it"
        ))
        .exit_with(Exit::Usage),
        None => Ok(()),
    }
}

/// Refuses, for a metadata-only informer, the specs (each with the flag it came from) that read
/// a field outside `metadata` ([`IndexSpec::reads_outside_metadata`]): its objects have none, so
/// the index would be empty and a query would match nothing, silently.
pub fn outside_metadata<'a>(
    specs: impl IntoIterator<Item = (&'a str, &'a IndexSpec)>,
    metadata_only: bool,
) -> anyhow::Result<()> {
    if !metadata_only {
        return Ok(());
    }
    match specs
        .into_iter()
        .find(|(_, spec)| spec.reads_outside_metadata())
    {
        Some((flag, spec)) => Err(anyhow!(
            "{flag} {spec} reads a field outside metadata, which a metadata-only informer \
             does not hold: index by a metadata field (field:metadata.…, label, annotation, \
             owner, namespace), or leave --metadata-only out"
        ))
        .exit_with(Exit::Usage),
        None => Ok(()),
    }
}

/// `-f` is where `-o html` writes its page: refused with any other output (which goes to stdout,
/// line by line, as it happens). The page's temporary file is created and removed now, so that a
/// path where it cannot be written is said before the session rather than after it; FILE itself
/// is left as it is until the page replaces it.
pub(super) fn page_file(args: &ViewArgs) -> anyhow::Result<()> {
    let Some(path) = &args.page_file else {
        return Ok(());
    };
    if args.output != WatchOutput::Html {
        return Err(anyhow::anyhow!(
            "-f is where -o html writes its page; the other outputs go to stdout (redirect it: > {})",
            path.display()
        ))
        .exit_with(Exit::Usage);
    }
    OutputFile::check(path)
        .with_context(|| format!("cannot create the page {}", path.display()))
        .exit_with(Exit::Runtime)?;
    Ok(())
}

/// Refuses a stack of `--compare` that moves a controller to the other runtime while it has a
/// setting only its own runtime has: `resync=` (client-go's) for `runtime=kube`, `debounce=` or
/// `error-requeue=` (kube-runtime's) for a client-go queue. `given` is the controller as the
/// command line gave it, `changed` as the stack `label` runs it. Exit 2.
pub(super) fn stack_runtime(
    label: &str,
    given: &ControllerSpec,
    changed: &ControllerSpec,
) -> anyhow::Result<()> {
    let name = &given.name;
    let dropped = match (given.runtime, changed.runtime) {
        (ControllerRuntime::ClientGo { .. }, ControllerRuntime::Kube { .. })
            if given.resync.is_some() =>
        {
            "resync= (a client-go handler's; kube-runtime's watcher never resyncs)"
        }
        (
            ControllerRuntime::Kube {
                debounce,
                error_requeue,
            },
            ControllerRuntime::ClientGo { .. },
        ) if !debounce.is_zero() || error_requeue != DEFAULT_ERROR_REQUEUE => {
            "debounce= or error-requeue= (kube-runtime's; client-go's workqueue times retries \
             with its rate limiter)"
        }
        _ => return Ok(()),
    };
    Err(anyhow!(
        "stack {label:?} of --compare runs --controller {name} on the other runtime, which has \
         no {dropped}: leave the setting out to compare the runtimes"
    ))
    .exit_with(Exit::Usage)
}

/// Refuses controller settings that belong to the other runtime: `queue=` and `resync=` are a
/// client-go controller's (kube-runtime has no workqueue and no resync), `debounce=` and
/// `error-requeue=` a kube-runtime one's (client-go's workqueue neither debounces nor has an
/// error policy: its rate limiter times retries). One sentence each, exit 2.
pub(super) fn controllers(controllers: &[ControllerArg]) -> anyhow::Result<()> {
    for c in controllers {
        let name = &c.name;
        let refused = match c.runtime {
            ControllerRuntimeKind::Kube => {
                if let Some(queue) = c.queue {
                    let queue = match queue {
                        ControllerQueueKind::Workqueue => "workqueue",
                        ControllerQueueKind::Priority => "priority",
                    };
                    Some(format!(
                        "--controller {name}: queue={queue} chooses a client-go controller's \
                         queue, and runtime=kube has none (kube-runtime's scheduler keeps one \
                         slot per object): leave queue= out, or drop runtime=kube"
                    ))
                } else if c.resync.is_some() {
                    Some(format!(
                        "--controller {name}: resync= is a client-go handler's resync period, \
                         and kube-runtime's watcher never resyncs: leave resync= out, or drop \
                         runtime=kube"
                    ))
                } else {
                    None
                }
            }
            ControllerRuntimeKind::ClientGo => {
                let kube_only = match (c.debounce, c.error_requeue) {
                    (Some(_), _) => Some("debounce="),
                    (None, Some(_)) => Some("error-requeue="),
                    (None, None) => None,
                };
                kube_only.map(|setting| {
                    format!(
                        "--controller {name}: {setting} is a kube-runtime Controller's setting \
                         (client-go's workqueue times retries with its rate limiter): add \
                         runtime=kube, or leave {setting} out"
                    )
                })
            }
        };
        if let Some(why) = refused {
            return Err(anyhow!(why)).exit_with(Exit::Usage);
        }
    }
    Ok(())
}

/// The place of `resource` (an `owns=` of controller `name`) among `names`, the session's
/// resources as typed: refused (exit 2, one sentence) unless it is one after the first, which is
/// the controller's own.
pub fn owned_resource(
    name: &str,
    resource: &str,
    names: &[String],
    session: &str,
) -> anyhow::Result<usize> {
    let why = match names.iter().position(|n| n == resource) {
        Some(0) => format!(
            "--controller {name}: owns={resource} names the controller's own resource (the \
             first of {session}): name one watched after it, as in watch deploy,rs --controller \
             {name},owns=rs"
        ),
        Some(at) => return Ok(at),
        None if names.len() < 2 => format!(
            "--controller {name}: owns={resource} needs a second resource, and {session} has \
             one: watch the owner first and what it owns after it, as in watch deploy,rs \
             --controller {name},owns=rs"
        ),
        None => format!(
            "--controller {name}: owns={resource} names no resource of {session} ({}): give it \
             as typed after the first, as in watch deploy,rs --controller {name},owns=rs",
            names.join(", ")
        ),
    };
    Err(anyhow!(why)).exit_with(Exit::Usage)
}

/// Refuses handler flags that contradict each other or the informer kind.
pub(super) fn handlers(args: &HandlerViewArgs) -> anyhow::Result<()> {
    let usage = |message: String| Err(anyhow::anyhow!(message)).exit_with(Exit::Usage);
    if !args.handlers.is_empty() && args.handler_delay.0.is_some() {
        return usage(
            "--handler-delay is the default handler's delay: with --handler, give each handler \
             its own (--handler NAME,delay=DURATION)"
                .to_owned(),
        );
    }
    for (i, handler) in args.handlers.iter().enumerate() {
        if args.handlers[..i].iter().any(|h| h.name == handler.name) {
            return usage(format!(
                "--handler {} is given twice: each handler needs a name of its own",
                handler.name
            ));
        }
    }
    for (i, controller) in args.controllers.iter().enumerate() {
        let twice = args.controllers[..i]
            .iter()
            .any(|c| c.name == controller.name);
        if twice || args.handlers.iter().any(|h| h.name == controller.name) {
            return usage(format!(
                "--controller {} names a handler already given: each handler and controller \
                 needs a name of its own",
                controller.name
            ));
        }
    }
    controllers(&args.controllers)?;
    if args.view_kind == Some(ViewKind::Reconciles) && args.controllers.is_empty() {
        return usage(
            "--view reconciles shows what controllers' workers did: give a --controller NAME"
                .to_owned(),
        );
    }
    if args.informer_kind == InformerKindArg::Plain {
        if !args.controllers.is_empty() {
            return usage(
                "--controller registers a handler on a shared informer, and --informer plain \
                 has none: leave --informer out"
                    .to_owned(),
            );
        }
        if args.handlers.len() > 1 {
            return usage(
                "--informer plain has one handler (client-go's NewInformer takes one): give at \
                 most one --handler, or use --informer shared"
                    .to_owned(),
            );
        }
        if args.handlers.iter().any(|h| h.resync.is_some()) {
            return usage(
                "--informer plain has no per-handler resync period (NewInformer's handler \
                 resyncs with the informer): use --resync, or --informer shared"
                    .to_owned(),
            );
        }
        if matches!(
            args.view_kind,
            Some(ViewKind::Handlers | ViewKind::Both | ViewKind::Reconciles)
        ) {
            return usage(
                "--informer plain calls its handler inside the pop, with the pop's own calls: \
                 there is nothing more to show than --view pops"
                    .to_owned(),
            );
        }
    }
    Ok(())
}

/// Refuses a `--compare` that cannot compare: one stack (nothing to compare it with), a stack
/// given twice, an UndeltaStore (no handler or controller is told anything), a stack that
/// changes every `--controller` when none is given, `--max-batches` and a `--from`/`--to` pop
/// number (the session's pops are numbered across its stacks: the limit would end every stack
/// at the pop of whichever got there first, a window would hold one stack's pop and not the
/// other's, and the calls left out would read as missing), and, on a `replay`, a stack that
/// sets `watch-list` (the recording says how its initial list came). One line each, exit 2.
pub fn compare(
    stacks: &[StackArg],
    store: StoreKind,
    view: &OutputPlan,
    replay: bool,
) -> anyhow::Result<()> {
    let usage = |message: String| Err(anyhow!(message)).exit_with(Exit::Usage);
    if let [one] = stacks {
        return usage(format!(
            "--compare {} names one stack, and comparing needs two or more: add the stack to \
             compare it with, comma-separated (--compare 1.32,latest)",
            one.label
        ));
    }
    for (i, stack) in stacks.iter().enumerate() {
        if stacks[..i].iter().any(|s| s.label == stack.label) {
            return usage(format!(
                "--compare names the stack {} twice: give each stack once",
                stack.label
            ));
        }
    }
    let format = match view.output {
        super::output::Format::Json => Some("json"),
        super::output::Format::Yaml => Some("yaml"),
        _ => None,
    };
    if let Some(format) = format {
        return usage(format!(
            "--compare names each row's stack and says where the stacks differ in the \
             timeline (-o timeline, -o wide), in JSON lines (-o jsonl) and on the page (-o \
             html); -o {format} does not: use one of those"
        ));
    }
    if store == StoreKind::Undelta {
        return usage(
            "--store undelta: --compare shows where stacks' handlers and controllers were told \
             different things, and an UndeltaStore has neither"
                .to_owned(),
        );
    }
    if let Some(stack) = stacks.iter().find(|s| !s.controllers.is_empty())
        && view.controllers.is_empty()
    {
        return usage(format!(
            "--compare stack {} changes every --controller, and none is given: add \
             --controller NAME",
            stack.label
        ));
    }
    if let Some(max) = view.max_batches {
        let bound = if replay {
            "bound the replay by time (--to +30s) or end it at the sync (--until-synced)"
        } else {
            "end it at the sync (--until-synced) or with Ctrl-C"
        };
        return usage(format!(
            "--max-batches {max} with --compare would end every stack once the stacks together \
             popped {max} batches, and the calls of the stacks still behind would read as \
             missing: {bound}"
        ));
    }
    if let Some(bound) = view.narrow.pop_bound() {
        return usage(format!(
            "{bound} with --compare: the session numbers the pops of every stack in one \
             sequence, so a window by pop number would hold one stack's pop and not the other's: \
             bound it by time (--from +2s, --to 10:04:05)"
        ));
    }
    if replay && let Some(stack) = stacks.iter().find(|s| s.watch_list.is_some()) {
        return usage(format!(
            "--compare stack {}: a replay's initial list comes as the recording has it, \
             streamed or listed, whatever watch-list says: leave watch-list out",
            stack.label
        ));
    }
    Ok(())
}

/// One of the recordings `replay FILE FILE…` replays together, as its header describes it.
#[derive(Debug)]
pub struct ReplayedRecording<'a> {
    /// As given.
    pub file: &'a std::path::Path,
    /// Its resource, as the timeline names it.
    pub resource: String,
    /// Its header's `startedAt`; `None` without a header.
    pub started_at: Option<std::time::SystemTime>,
    /// It starts with a streaming list (`record --watch-list`).
    pub streamed: bool,
}

/// How far apart the `startedAt`s of recordings replayed together may be. They share one clock
/// to show how one session's resources played together (an owned object's change reconciling
/// its owner); recordings a day apart are not of one session, and a replay at `--speed` would
/// wait out the gap.
pub const REPLAYED_TOGETHER_WITHIN: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// Refuses `-` (stdin) among several recordings: stdin is read alone, as a stream that may
/// still be written, whose next line the others cannot wait for.
pub fn replayed_from_stdin(files: &[std::path::PathBuf]) -> anyhow::Result<()> {
    if files.len() > 1 && files.iter().any(|f| f.as_os_str() == "-") {
        return Err(anyhow!(
            "replay reads several recordings from files only: give - (stdin) alone, or save it \
             to a file first"
        ))
        .exit_with(Exit::Usage);
    }
    Ok(())
}

/// `error`, met while resolving the `--compare` stack `label`, with the stack named and its exit
/// code kept.
pub fn in_stack(label: &str, error: anyhow::Error) -> anyhow::Error {
    let exit = crate::cli::exit::classify(&error);
    Failure {
        exit,
        error: anyhow!(
            "--compare stack {label}: {}",
            crate::cli::exit::message(&error)
        ),
        note: None,
    }
    .into()
}

/// Refuses two `--compare` stacks that run the same informer and controllers (`1.35` and
/// `v0.35`): they could never differ.
pub fn same_stack<T>(first: &str, second: &str) -> anyhow::Result<T> {
    Err(anyhow!(
        "--compare stacks {first} and {second} run the same informer and controllers, so they \
         cannot differ: give stacks that change something"
    ))
    .exit_with(Exit::Usage)
}

/// Refuses `--compare` on `record`, which writes what the server sent, whatever reads it.
pub fn compare_on_record(given: Option<&str>) -> anyhow::Result<()> {
    match given {
        Some(stacks) => Err(anyhow!(
            "--compare {stacks}: record writes what the server sent, which is the same for every \
             stack: record once, then compare on the recording (replay FILE --compare {stacks})"
        ))
        .exit_with(Exit::Usage),
        None => Ok(()),
    }
}

/// Refuses, live, two `--compare` stacks whose Reflectors list differently (one streams its
/// initial list, the other pages it): one stream against the server cannot answer both.
pub fn different_lists<T>(first: &str, second: &str) -> anyhow::Result<T> {
    Err(anyhow!(
        "--compare stacks {first} and {second} make different initial lists (one streams it \
         with watch-list, the other pages it), and the stacks share one list and one watch: give \
         --watch-list or --watch-list=false to make them alike"
    ))
    .exit_with(Exit::Usage)
}

/// Refuses recordings that cannot be replayed as one session, on one clock: one without a
/// header (no `startedAt` to place it), two of one resource (a session has one lane per
/// resource), `startedAt`s more than [`REPLAYED_TOGETHER_WITHIN`] apart, and a streaming list
/// beside a list (the session's informers start alike).
pub fn replayed_together(recordings: &[ReplayedRecording<'_>]) -> anyhow::Result<()> {
    let usage = |message: String| Err(anyhow!(message)).exit_with(Exit::Usage);
    let [first, ..] = recordings else {
        return Ok(());
    };
    if recordings.len() < 2 {
        return Ok(());
    }
    for (i, this) in recordings.iter().enumerate() {
        let name = this.file.display();
        let Some(started_at) = this.started_at else {
            return usage(format!(
                "{name} has no header, so no startedAt to place its lines on the clock it would \
                 share with the other recordings: replay it alone, or add a header \
                 (docs/recording.md)"
            ));
        };
        if let Some(other) = recordings[..i].iter().find(|r| r.resource == this.resource) {
            return usage(format!(
                "{name} and {} both hold {}: a replay has one lane per resource; replay them one \
                 at a time",
                other.file.display(),
                this.resource
            ));
        }
        let apart = (first.started_at)
            .map(|at| match started_at.duration_since(at) {
                Ok(after) => after,
                Err(before) => before.duration(),
            })
            .unwrap_or_default();
        if apart > REPLAYED_TOGETHER_WITHIN {
            return usage(format!(
                "{name} starts {} from {} (their startedAt): recordings replayed together share \
                 one clock, and these are not of one session; replay them one at a time",
                humantime::format_duration(std::time::Duration::from_secs(apart.as_secs())),
                first.file.display()
            ));
        }
        if this.streamed != first.streamed {
            let how = |r: &ReplayedRecording<'_>| {
                if r.streamed {
                    "a streaming list (record --watch-list)"
                } else {
                    "a list"
                }
            };
            return usage(format!(
                "{name} starts with {} and {} with {}: the informers of one replay start alike; \
                 replay them one at a time",
                how(this),
                first.file.display(),
                how(first)
            ));
        }
    }
    Ok(())
}
