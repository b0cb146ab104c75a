//! What a session shows and when it stops ([`OutputPlan`], from `ViewArgs`).

use std::fs::File;
use std::io::{self, IsTerminal, Write};
use std::os::fd::AsFd as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use jiff::tz::TimeZone;
use kubectl_deltas::Object;
use kubectl_deltas::cache::{Batch, Delivery, InformerKind, Notification};
use kubectl_deltas::render::document::{self, Documents};
use kubectl_deltas::render::html::{Html, HtmlOptions};
use kubectl_deltas::render::jsonl::JsonLines;
use kubectl_deltas::render::timeline::{FixedColumns, Timeline, TimelineOptions};
use kubectl_deltas::render::{ObjectMode, Renderer};

use super::narrow::Narrow;
use super::query::Query;
use super::{ControllerSpec, HandlerSpec, refuse};
use crate::cli::exit::{Exit, WithExit};
use crate::cli::redact::redacted_args;
use crate::cli::{GlobalArgs, HandlerViewArgs, InformerKindArg, ViewArgs, ViewKind, WatchOutput};

/// The output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One row per popped batch, for people.
    Timeline,
    /// The timeline with uid, generation, owner and every changed path.
    Wide,
    /// One JSON object per line (docs/jsonl.md).
    Jsonl,
    /// Each batch as a pretty JSON document.
    Json,
    /// Each batch as a YAML document.
    Yaml,
    /// One self-contained HTML page, written when the session ends.
    Html,
}

impl From<WatchOutput> for Format {
    fn from(output: WatchOutput) -> Self {
        match output {
            WatchOutput::Timeline => Format::Timeline,
            WatchOutput::Wide => Format::Wide,
            WatchOutput::Jsonl => Format::Jsonl,
            WatchOutput::Json => Format::Json,
            WatchOutput::Yaml => Format::Yaml,
            WatchOutput::Html => Format::Html,
        }
    }
}

/// What the output shows of the informers' work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// The queue's pops.
    Pops,
    /// What each handler received.
    Handlers,
    /// Pops, each followed by what the handlers received of it, and the reconciles.
    Both,
    /// Only the controllers' reconciles.
    Reconciles,
}

/// The output and the consumer's behaviour, decided once from flags and the terminal.
#[derive(Debug, Clone)]
pub struct OutputPlan {
    /// Output format.
    pub output: Format,
    /// How much of each object jsonl/json/yaml carry.
    pub object: ObjectMode,
    /// Show Secret values.
    pub show_secret_data: bool,
    /// Leave the initial list's batches out of the output.
    pub since_now: bool,
    /// Stop once every resource has synced.
    pub until_synced: bool,
    /// Stop after this many batches were written.
    pub max_batches: Option<u64>,
    /// How long the default handler takes per call (see [`handlers`](OutputPlan::shared_handlers)).
    pub handler_delay: Option<Duration>,
    /// The handlers given with `--handler`; empty for the default one (named `handler`, taking
    /// `handler_delay`).
    pub handlers: Vec<HandlerSpec>,
    /// The controllers given with `--controller`, each registered as a handler after the
    /// `--handler`s.
    pub controllers: Vec<ControllerSpec>,
    /// How the informer calls its handlers.
    pub informer: InformerKind,
    /// What the output shows.
    pub view: Shown,
    /// Write only batches matching one of these (all when empty).
    pub queries: Vec<Query>,
    /// `--match`, `--types`, `--tombstones` and replay's selectors and window.
    pub narrow: Narrow,
    /// Colour the timeline.
    pub color: bool,
    /// Show bookmarks and list steps in the timeline.
    pub verbose: bool,
    /// Draw the progress bar and status footer on stderr.
    pub status: bool,
    /// Stdout is the terminal the status is drawn on.
    pub stdout_is_terminal: bool,
    /// Start the timeline with a row naming its columns (on a terminal, without `--no-headers`).
    pub header_row: bool,
    /// Print the summary table on stderr when the session ends normally.
    pub summary: bool,
    /// Where `-o html` writes its page (`-f`); stdout when `None`.
    pub page_file: Option<PathBuf>,
    /// The command line, as the page's header shows it.
    pub command_line: String,
}

impl OutputPlan {
    /// From the flags, with colours and the status footer decided by where stdout and stderr go.
    pub fn from_args(args: &ViewArgs, global: &GlobalArgs) -> anyhow::Result<OutputPlan> {
        let queries = args
            .query
            .iter()
            .map(|q| q.parse::<Query>())
            .collect::<Result<Vec<_>, _>>()
            .exit_with(Exit::Usage)?;
        let stdout_is_terminal = io::stdout().is_terminal();
        let color = global.color.enabled(stdout_is_terminal);
        refuse::handlers(&args.handling)?;
        refuse::page_file(args)?;
        let handling = &args.handling;
        Ok(OutputPlan {
            output: args.output.into(),
            object: args.object,
            show_secret_data: args.show_secret_data,
            since_now: args.since_now,
            until_synced: args.until_synced,
            max_batches: args.max_batches,
            handler_delay: handling.handler_delay.0,
            handlers: handling.handlers.iter().map(HandlerSpec::from).collect(),
            controllers: handling
                .controllers
                .iter()
                .map(ControllerSpec::from)
                .collect(),
            informer: informer_kind(handling.informer_kind),
            view: view_kind(handling),
            queries,
            narrow: Narrow::from_args(&args.narrow),
            color,
            verbose: global.verbose > 0,
            // -v logs go to stderr too, and would tear the footer apart.
            status: !args.quiet && global.verbose == 0 && io::stderr().is_terminal(),
            stdout_is_terminal,
            header_row: stdout_is_terminal && !args.no_headers,
            summary: !args.quiet,
            page_file: args.page_file.clone(),
            command_line: command_line(),
        })
    }

    /// Whether the output is one page (`-o html`), written when the session ends: to
    /// [`page_file`](OutputPlan::page_file) if given, else to stdout as it is, blocking.
    pub fn page_output(&self) -> bool {
        self.output == Format::Html
    }

    /// Refuses a `-f FILE` that is the recording `input` (`-` for stdin) under any name: the page
    /// would replace it.
    pub fn refuse_page_over(&self, input: &Path) -> anyhow::Result<()> {
        let Some(page) = self.page_file.as_deref() else {
            return Ok(());
        };
        // A page path that does not exist yet is no recording.
        let Ok(page_meta) = std::fs::metadata(page) else {
            return Ok(());
        };
        let input_meta = if input.as_os_str() == "-" {
            io::stdin()
                .as_fd()
                .try_clone_to_owned()
                .map(File::from)
                .and_then(|stdin| stdin.metadata())
        } else {
            std::fs::metadata(input)
        };
        let same = input_meta.is_ok_and(|input_meta| {
            (input_meta.dev(), input_meta.ino()) == (page_meta.dev(), page_meta.ino())
        });
        if same {
            return Err(anyhow::anyhow!(
                "-f {} is the recording being replayed, which the page would replace: choose \
                 another file for the page",
                page.display()
            ))
            .exit_with(Exit::Usage);
        }
        Ok(())
    }

    /// `record`'s view: the timeline on stderr (coloured as `--color` says for stderr), without
    /// the status footer, which would share stderr with it; the summary unless `quiet`. The
    /// handlers and controllers of `handling` are registered and shown as `watch` shows them.
    pub fn stderr_timeline(
        global: &GlobalArgs,
        quiet: bool,
        handling: &HandlerViewArgs,
    ) -> anyhow::Result<OutputPlan> {
        refuse::handlers(handling)?;
        let stderr_is_terminal = io::stderr().is_terminal();
        let color = global.color.enabled(stderr_is_terminal);
        Ok(OutputPlan {
            output: Format::Timeline,
            object: ObjectMode::Meta,
            show_secret_data: false,
            since_now: false,
            until_synced: false,
            max_batches: None,
            handler_delay: handling.handler_delay.0,
            handlers: handling.handlers.iter().map(HandlerSpec::from).collect(),
            controllers: handling
                .controllers
                .iter()
                .map(ControllerSpec::from)
                .collect(),
            informer: informer_kind(handling.informer_kind),
            view: view_kind(handling),
            queries: Vec::new(),
            narrow: Narrow::default(),
            color,
            verbose: global.verbose > 0,
            status: false,
            stdout_is_terminal: false,
            header_row: false,
            summary: !quiet,
            page_file: None,
            command_line: command_line(),
        })
    }

    /// The renderer of this view over `out`, for the resources named (a column when several)
    /// and the handlers and controllers each runs (whose rows share the handler column).
    pub fn renderer(
        &self,
        out: Box<dyn Write + Send>,
        resources: &[String],
        handlers: &[&str],
    ) -> Box<dyn Renderer> {
        let show_resource = resources.len() > 1;
        match self.output {
            Format::Timeline | Format::Wide => Box::new(Timeline::new(
                out,
                TimelineOptions {
                    wide: self.output == Format::Wide,
                    color: self.color,
                    verbose: self.verbose,
                    show_resource,
                    show_secret_data: self.show_secret_data,
                    time_zone: TimeZone::system(),
                    // Rows reach a terminal one by one: widths are set from the start.
                    fixed: self.stdout_is_terminal.then(|| FixedColumns {
                        header: self.header_row,
                        resource: widest(resources.iter().map(String::as_str)),
                        // A controller's reconcile rows sit in the handler column too.
                        handler: widest(handlers.iter().copied()),
                    }),
                },
            )),
            Format::Jsonl => Box::new(JsonLines::new(out, self.object, self.show_secret_data)),
            Format::Json => Box::new(Documents::new(
                out,
                document::Format::Json,
                self.object,
                self.show_secret_data,
            )),
            Format::Yaml => Box::new(Documents::new(
                out,
                document::Format::Yaml,
                self.object,
                self.show_secret_data,
            )),
            Format::Html => Box::new(Html::new(
                out,
                HtmlOptions {
                    object: self.object,
                    show_secret_data: self.show_secret_data,
                    command_line: self.command_line.clone(),
                },
            )),
        }
    }

    /// The handlers to register with a shared informer, with how long each call takes: those
    /// given with `--handler`; else, when handlers are shown, the default one. None otherwise:
    /// without handlers the informer resyncs at `--resync` exactly as one default handler would
    /// make it, and the pops are the same.
    pub fn shared_handlers(&self) -> Vec<HandlerSpec> {
        if self.informer != InformerKind::Shared {
            return Vec::new();
        }
        // A controller's own handler stands in for the default one.
        if !self.handlers.is_empty() || !self.controllers.is_empty() {
            return self.handlers.clone();
        }
        if self.view == Shown::Pops {
            return Vec::new();
        }
        vec![HandlerSpec {
            name: DEFAULT_HANDLER.to_owned(),
            resync: None,
            delay: self.handler_delay,
        }]
    }

    /// How long the plain informer's handler takes, inside each pop.
    pub fn plain_handler_delay(&self) -> Option<Duration> {
        if self.informer != InformerKind::Plain {
            return None;
        }
        self.handlers
            .first()
            .map_or(self.handler_delay, |handler| handler.delay)
    }

    /// Whether the [`Narrow`] filters leave pops out of the output: the summary then counts the
    /// pops shown (after every filter, `--query` and `--since-now` included) beside those popped.
    pub fn narrows(&self) -> bool {
        self.narrow.narrows()
    }

    /// Whether pops are written.
    pub fn shows_pops(&self) -> bool {
        matches!(self.view, Shown::Pops | Shown::Both)
    }

    /// Whether handler notifications are written.
    pub fn shows_handlers(&self) -> bool {
        matches!(self.view, Shown::Handlers | Shown::Both)
    }

    /// Whether the controllers' reconciles are written.
    pub fn shows_reconciles(&self) -> bool {
        matches!(self.view, Shown::Reconciles | Shown::Both)
    }

    /// Whether a handler's call, made at `time`, is written: as for pops, `--since-now` leaves
    /// the initial list out, and `--query` and the [`Narrow`] filters filter by the
    /// notification's objects.
    pub fn shows_notification(&self, delivery: &Delivery<'_, Object>, time: SystemTime) -> bool {
        let notification = delivery.notification;
        if !self
            .narrow
            .shows_notification(notification, delivery.batch, time)
        {
            return false;
        }
        if self.since_now
            && let Notification::Add {
                is_in_initial_list: true,
                ..
            } = notification
        {
            return false;
        }
        self.queries.is_empty()
            || self
                .queries
                .iter()
                .any(|q| q.matches_notification(notification))
    }

    /// Whether `batch`, popped at `time`, is written: `--since-now`, `--query` and the
    /// [`Narrow`] filters decide, nothing else does.
    pub fn shows(&self, batch: &Batch<Object>, time: SystemTime) -> bool {
        if self.since_now && batch.is_in_initial_list {
            return false;
        }
        if !self.narrow.shows(batch, time) {
            return false;
        }
        self.queries.is_empty() || self.queries.iter().any(|q| q.matches(batch))
    }
}

/// What the output shows: `--view`, or by default both pops and handler rows when a handler is
/// named on the command line (a request to see what it receives) or slowed down.
fn view_kind(args: &HandlerViewArgs) -> Shown {
    let named = !args.handlers.is_empty() || !args.controllers.is_empty();
    let slow = args.handler_delay.0.is_some();
    let kind = args.view_kind.unwrap_or(
        if args.informer_kind == InformerKindArg::Shared && (named || slow) {
            ViewKind::Both
        } else {
            ViewKind::Pops
        },
    );
    match kind {
        ViewKind::Pops => Shown::Pops,
        ViewKind::Handlers => Shown::Handlers,
        ViewKind::Both => Shown::Both,
        ViewKind::Reconciles => Shown::Reconciles,
    }
}

/// `--informer`: which client-go constructor builds the informer.
fn informer_kind(arg: InformerKindArg) -> InformerKind {
    match arg {
        InformerKindArg::Shared => InformerKind::Shared,
        InformerKindArg::Plain => InformerKind::Plain,
    }
}

/// The length of the longest name, in characters.
fn widest<'a>(names: impl Iterator<Item = &'a str>) -> usize {
    names.map(|n| n.chars().count()).max().unwrap_or(0)
}

/// The command line as typed, program name aside and credentials redacted
/// ([`redacted_args`]), for the page's header: `kubectl deltas` and each argument, quoted for a
/// POSIX shell when it needs it, so that it can be run again as shown (with the secrets given
/// again).
fn command_line() -> String {
    let mut line = "kubectl deltas".to_owned();
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    for arg in redacted_args(&args) {
        let arg = arg.to_string_lossy();
        line.push(' ');
        let plain = !arg.is_empty()
            && arg
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c));
        if plain {
            line.push_str(&arg);
        } else {
            line.push('\'');
            line.push_str(&arg.replace('\'', "'\\''"));
            line.push('\'');
        }
    }
    line
}

/// The handler's name without `--handler`.
pub const DEFAULT_HANDLER: &str = kubectl_deltas::render::timeline::DEFAULT_HANDLER;
