//! What a session shows and when it stops ([`View`], from `ViewArgs`), and which batches
//! `--query` lets through ([`Query`]).

use std::fs::File;
use std::io::{self, IsTerminal, Write};
use std::os::fd::AsFd as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, SystemTime};

use anyhow::Context as _;
use jiff::tz::TimeZone;
use kubectl_deltas::Object;
use kubectl_deltas::cache::{Batch, Delivery, IndexSpec, Notification};
use kubectl_deltas::render::document::{Documents, Format};
use kubectl_deltas::render::html::{Html, HtmlOptions};
use kubectl_deltas::render::jsonl::JsonLines;
use kubectl_deltas::render::timeline::{FixedColumns, Timeline, TimelineOptions};
use kubectl_deltas::render::{ObjectMode, Renderer};
use kubectl_deltas::source::output_file::OutputFile;

use super::narrow::Narrow;
use super::page_file::PageFile;
use crate::cli::exit::{Exit, WithExit};
use crate::cli::redact::redacted_args;
use crate::cli::{
    ControllerArg, GlobalArgs, HandlerArg, HandlerViewArgs, InformerKindArg, ViewArgs, ViewKind,
    WatchOutput,
};

/// The output and the consumer's behaviour, decided once from flags and the terminal.
#[derive(Debug, Clone)]
pub struct View {
    /// Output format.
    pub output: WatchOutput,
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
    /// How long the default handler takes per call (see [`handlers`](View::handlers)).
    pub handler_delay: Option<Duration>,
    /// The handlers given with `--handler`; empty for the default one (named `handler`, taking
    /// `handler_delay`).
    pub handlers: Vec<HandlerArg>,
    /// The controllers given with `--controller`, each registered as a handler after the
    /// `--handler`s.
    pub controllers: Vec<ControllerArg>,
    /// How the informer calls its handlers.
    pub informer: InformerKindArg,
    /// What the output shows.
    pub view: ViewKind,
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

impl View {
    /// From the flags, with colours and the status footer decided by where stdout and stderr go.
    pub fn from_args(args: &ViewArgs, global: &GlobalArgs) -> anyhow::Result<View> {
        let queries = args
            .query
            .iter()
            .map(|q| q.parse::<Query>())
            .collect::<Result<Vec<_>, _>>()
            .exit_with(Exit::Usage)?;
        let stdout_is_terminal = io::stdout().is_terminal();
        let color = global.color.enabled(stdout_is_terminal);
        check_handlers(&args.handling)?;
        check_page_file(args)?;
        let handling = &args.handling;
        Ok(View {
            output: args.output,
            object: args.object,
            show_secret_data: args.show_secret_data,
            since_now: args.since_now,
            until_synced: args.until_synced,
            max_batches: args.max_batches,
            handler_delay: handling.handler_delay.0,
            handlers: handling.handlers.clone(),
            controllers: handling.controllers.clone(),
            informer: handling.informer_kind,
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
    /// [`page_file`](View::page_file) if given, else to stdout as it is, blocking.
    pub(super) fn page_output(&self) -> bool {
        self.output == WatchOutput::Html
    }

    /// `-f FILE` of `-o html`: replaced by the page once the session ended normally.
    pub(super) fn page_file(&self) -> Option<PageFile> {
        self.page_file
            .as_deref()
            .filter(|_| self.page_output())
            .map(PageFile::new)
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
    ) -> anyhow::Result<View> {
        check_handlers(handling)?;
        let stderr_is_terminal = io::stderr().is_terminal();
        let color = global.color.enabled(stderr_is_terminal);
        Ok(View {
            output: WatchOutput::Timeline,
            object: ObjectMode::Meta,
            show_secret_data: false,
            since_now: false,
            until_synced: false,
            max_batches: None,
            handler_delay: handling.handler_delay.0,
            handlers: handling.handlers.clone(),
            controllers: handling.controllers.clone(),
            informer: handling.informer_kind,
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

    /// The renderer of this view over `out`, for the resources named (a column when several).
    pub fn renderer(&self, out: Box<dyn Write + Send>, resources: &[String]) -> Box<dyn Renderer> {
        let show_resource = resources.len() > 1;
        match self.output {
            WatchOutput::Timeline | WatchOutput::Wide => Box::new(Timeline::new(
                out,
                TimelineOptions {
                    wide: self.output == WatchOutput::Wide,
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
                        handler: widest(
                            self.shared_handlers()
                                .iter()
                                .map(|h| h.name.as_str())
                                .chain(self.controllers.iter().map(|c| c.name.as_str())),
                        ),
                    }),
                },
            )),
            WatchOutput::Jsonl => Box::new(JsonLines::new(out, self.object, self.show_secret_data)),
            WatchOutput::Json => Box::new(Documents::new(
                out,
                Format::Json,
                self.object,
                self.show_secret_data,
            )),
            WatchOutput::Yaml => Box::new(Documents::new(
                out,
                Format::Yaml,
                self.object,
                self.show_secret_data,
            )),
            WatchOutput::Html => Box::new(Html::new(
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
    pub fn shared_handlers(&self) -> Vec<HandlerArg> {
        if self.informer != InformerKindArg::Shared {
            return Vec::new();
        }
        // A controller's own handler stands in for the default one.
        if !self.handlers.is_empty() || !self.controllers.is_empty() {
            return self.handlers.clone();
        }
        if self.view == ViewKind::Pops {
            return Vec::new();
        }
        vec![HandlerArg {
            name: DEFAULT_HANDLER.to_owned(),
            resync: None,
            delay: self.handler_delay,
        }]
    }

    /// How long the plain informer's handler takes, inside each pop.
    pub fn plain_handler_delay(&self) -> Option<Duration> {
        if self.informer != InformerKindArg::Plain {
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
        matches!(self.view, ViewKind::Pops | ViewKind::Both)
    }

    /// Whether handler notifications are written.
    pub fn shows_handlers(&self) -> bool {
        matches!(self.view, ViewKind::Handlers | ViewKind::Both)
    }

    /// Whether the controllers' reconciles are written.
    pub fn shows_reconciles(&self) -> bool {
        matches!(self.view, ViewKind::Reconciles | ViewKind::Both)
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
fn view_kind(args: &HandlerViewArgs) -> ViewKind {
    let named = !args.handlers.is_empty() || !args.controllers.is_empty();
    let slow = args.handler_delay.0.is_some();
    args.view_kind.unwrap_or(
        if args.informer_kind == InformerKindArg::Shared && (named || slow) {
            ViewKind::Both
        } else {
            ViewKind::Pops
        },
    )
}

/// The length of the longest name, in characters.
fn widest<'a>(names: impl Iterator<Item = &'a str>) -> usize {
    names.map(|n| n.chars().count()).max().unwrap_or(0)
}

/// `-f` is where `-o html` writes its page: refused with any other output (which goes to stdout,
/// line by line, as it happens). The page's temporary file is created and removed now, so that a
/// path where it cannot be written is said before the session rather than after it; FILE itself
/// is left as it is until the page replaces it.
fn check_page_file(args: &ViewArgs) -> anyhow::Result<()> {
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

/// Refuses handler flags that contradict each other or the informer kind.
fn check_handlers(args: &HandlerViewArgs) -> anyhow::Result<()> {
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

/// `--query SPEC=VALUE`: batches whose old or new object the index `SPEC` files under `VALUE`,
/// computed by the same index functions as `--index`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    spec: IndexSpec,
    value: String,
}

/// A `--query` that does not parse.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// No `=`.
    #[error(
        "invalid --query {0:?}: expected SPEC=VALUE, such as namespace=prod, label:app=web or \
         field:spec.nodeName=node-1"
    )]
    Form(String),
    /// The spec part is not an index spec.
    #[error("invalid --query {query:?}")]
    Spec {
        /// The query as given.
        query: String,
        /// Why its spec is wrong.
        #[source]
        source: kubectl_deltas::cache::IndexSpecError,
    },
}

impl FromStr for Query {
    type Err = QueryError;

    /// Splits at the first `=`: specs never contain one, values may (`labels=app=web`).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (spec, value) = text
            .split_once('=')
            .ok_or_else(|| QueryError::Form(text.to_owned()))?;
        let spec = spec.parse().map_err(|source| QueryError::Spec {
            query: text.to_owned(),
            source,
        })?;
        Ok(Query {
            spec,
            value: value.to_owned(),
        })
    }
}

impl Query {
    /// The index spec it matches by.
    pub fn spec(&self) -> &IndexSpec {
        &self.spec
    }

    /// Whether an object of the notification (new, old, or deleted) is indexed under the value.
    pub fn matches_notification(&self, notification: &Notification<Object>) -> bool {
        let objects: [Option<&std::sync::Arc<Object>>; 2] = match notification {
            Notification::Add { obj, .. } => [Some(obj), None],
            Notification::Update { old, new } => [Some(new), Some(old)],
            Notification::Delete { obj } => [obj.object(), None],
        };
        objects
            .into_iter()
            .flatten()
            .any(|obj| self.spec.values(obj).iter().any(|v| *v == self.value))
    }

    /// Whether any object of the batch, as delivered (listed, for a `ReplacedAll`) or as the cache
    /// held it before an update or a deletion, is indexed under the value.
    pub fn matches(&self, batch: &Batch<Object>) -> bool {
        let delivered = batch.deltas.iter().flat_map(|d| {
            let listed = d.object.list().into_iter().flat_map(|l| l.objects.iter());
            d.object.object().into_iter().chain(listed)
        });
        let previous = batch.notifications.iter().filter_map(|n| match n {
            Notification::Update { old, .. } => Some(old),
            Notification::Delete { obj } => obj.object(),
            Notification::Add { .. } => None,
        });
        delivered
            .chain(previous)
            .any(|obj| self.spec.values(obj).iter().any(|v| *v == self.value))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use kube::api::ApiResource;

    use super::*;
    use kubectl_deltas::cache::{Controller, DeltaFifo, Indexer, RealFifo, ReflectorStore};

    fn pod(name: &str, node: &str) -> Arc<Object> {
        let ar = ApiResource::erase::<k8s_openapi::api::core::v1::Pod>(&());
        let mut obj = Object::new(name, &ar).within("default");
        obj.meta_mut().labels = Some([("app".to_owned(), "web=1".to_owned())].into());
        obj.set_field("spec", &serde_json::json!({"nodeName": node}))
            .unwrap();
        Arc::new(obj)
    }

    #[test]
    fn queries_split_at_the_first_equals_sign() {
        let q: Query = "labels=app=web=1".parse().unwrap();
        assert_eq!(q.spec, IndexSpec::Labels);
        assert_eq!(q.value, "app=web=1");
        let err = "namespace".parse::<Query>().unwrap_err().to_string();
        assert!(err.contains("expected SPEC=VALUE"), "{err}");
        let err = "lable:app=web".parse::<Query>().unwrap_err();
        let text = format!("{:#}", anyhow::Error::new(err));
        assert!(text.contains("unknown index kind \"lable\""), "{text}");
    }

    #[test]
    fn a_query_matches_the_old_or_the_new_object() {
        let indexer = Indexer::new();
        let fifo = Arc::new(DeltaFifo::new().known_objects(Arc::new(indexer.reader())));
        let mut controller = Controller::new(fifo.clone(), indexer);
        fifo.add(pod("web-1", "node-a"));
        let added = controller.try_process_next().unwrap();
        // Moved to another node: the update leaves node-a and enters node-b.
        fifo.update(pod("web-1", "node-b"));
        let moved = controller.try_process_next().unwrap();
        let on = |node: &str| -> Query { format!("field:spec.nodeName={node}").parse().unwrap() };
        assert!(on("node-a").matches(&added));
        assert!(!on("node-b").matches(&added));
        assert!(on("node-a").matches(&moved));
        assert!(on("node-b").matches(&moved));
        assert!(!on("node-c").matches(&moved));
    }

    #[test]
    fn a_query_matches_a_relist_by_its_listed_or_deleted_objects() {
        let indexer = Indexer::new();
        let queue = Arc::new(RealFifo::atomic());
        let mut controller = Controller::new(queue.clone(), indexer);
        let on = |node: &str| -> Query { format!("field:spec.nodeName={node}").parse().unwrap() };
        queue.replace(vec![pod("web-1", "node-a")], "1");
        let listed = controller.try_process_next().unwrap();
        assert!(on("node-a").matches(&listed));
        assert!(!on("node-b").matches(&listed));
        // web-1 is gone from the next list: its tombstone is what the relist did on node-a.
        queue.replace(vec![pod("web-2", "node-b")], "2");
        let relisted = controller.try_process_next().unwrap();
        assert!(on("node-a").matches(&relisted));
        assert!(on("node-b").matches(&relisted));
    }
}
