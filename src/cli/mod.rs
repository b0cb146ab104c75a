//! Every flag of `kubectl-deltas`, with its help text and default, in one place.
//!
//! The doc comments of the flags are their `--help` text, written for a terminal: `[,delay=D]`
//! and `<key>` there are not links or tags.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use kubectl_deltas::cache::QueueKind;
use kubectl_deltas::render::index::IndexFormat;

pub mod compare;
pub mod duration;
pub mod exit;
pub mod given;

pub mod narrow;
pub mod profile;
pub mod redact;
mod shorthand;
pub mod type_name;
mod values;

pub use shorthand::with_watch_shorthand;
#[cfg(test)]
pub use values::parse_controller;
pub use values::{
    ControllerArg, ControllerQueueKind, ControllerRuntimeKind, HandlerArg, Period,
    parse_field_selector, parse_handler, parse_label_selector, parse_namespace, parse_period,
    parse_request_timeout, parse_speed,
};

const ROOT_AFTER_HELP: &str = "\
Examples:
  # Every batch the informer pops for pods in kube-system, until the cache has synced
  kubectl deltas watch pods -n kube-system --until-synced

  # Which pods sit on which node, as an Indexer sees them
  kubectl deltas index pods -A --by field:spec.nodeName

  # Record a watch now, replay it offline later
  kubectl deltas record deploy -n default -f deploy.jsonl --duration 10m
  kubectl deltas replay deploy.jsonl

Exit codes:
  0  success
  1  runtime error (bad recording, I/O error, a failure the Reflector cannot retry)
  2  usage error (bad flag, unknown resource, bad index spec)
  3  cluster access error (unreachable, bad kubeconfig, 401 Unauthorized, 403 Forbidden,
     404 Not Found)
  4  `index --fail-empty` found nothing
  5  `--compare`: the stacks differ";

/// Watch the inner life of a Kubernetes informer: the Reflector's List and Watch, the DeltaFIFO's
/// batches and the Indexer's contents, as client-go's `tools/cache` sees them.
///
/// `kubectl deltas RESOURCE [flags]` is short for `kubectl deltas watch RESOURCE [flags]`.
#[derive(Debug, Parser)]
#[command(
    name = "kubectl-deltas",
    bin_name = "kubectl deltas",
    version = env!("KUBECTL_DELTAS_VERSION"),
    after_help = ROOT_AFTER_HELP
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Flags accepted by every subcommand.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Log to stderr (-v, -vv, -vvv); -v also adds timeline rows.
    ///
    /// -v logs the reflector's steps, -vv requests, -vvv everything. -v also adds rows to the
    /// timeline: where each list starts, its pages, and watch bookmarks.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    /// When to use colours.
    ///
    /// NO_COLOR in the environment means never, unless `always`.
    #[arg(
        hide_short_help = true,
        long,
        value_enum,
        default_value_t = ColorChoice::Auto,
        global = true
    )]
    pub color: ColorChoice,
}

/// When to colour the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// On a terminal, unless NO_COLOR is set.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl ColorChoice {
    /// Whether to colour a stream: `--color`, then NO_COLOR, then whether it is a terminal.
    pub fn enabled(self, is_terminal: bool) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                is_terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        }
    }
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run an informer on RESOURCE and show every pop of its queue as a live timeline.
    ///
    /// Every popped Deltas batch (or, with `--store undelta`, every push of an UndeltaStore), the
    /// Reflector's lists and watches, and what each event handler received.
    #[command(
        after_help = WATCH_SHORT_AFTER_HELP,
        after_long_help = WATCH_LONG_AFTER_HELP
    )]
    Watch(WatchArgs),
    /// Build the informer cache once and answer an Indexer query.
    // clap's own usage line lists the arguments given beside the required ones, so that a
    // missing `--by` read as if `--namespace` were required too.
    #[command(after_help = INDEX_EXAMPLES, override_usage = INDEX_USAGE)]
    Index(IndexArgs),
    /// Run an informer on a cluster and record every server answer to a file.
    #[command(after_help = RECORD_EXAMPLES, after_long_help = RECORD_LONG_EXAMPLES)]
    Record(RecordArgs),
    /// Replay a recording through the real Reflector and DeltaFIFO, offline.
    #[command(after_help = REPLAY_EXAMPLES)]
    Replay(ReplayArgs),
    /// Print a shell completion script.
    #[command(after_help = COMPLETION_EXAMPLES)]
    Completion(CompletionArgs),
    /// Complete a partial command line, for kubectl's plugin completion (`kubectl_complete-deltas`):
    /// the words after `kubectl deltas`, the last one being completed (empty for a new word).
    /// Prints one candidate per line, then cobra's `:<directive>` line; never fails.
    #[command(name = "__complete", hide = true, disable_help_flag = true)]
    Complete(CompleteArgs),
}

/// `watch`'s examples, in `-h` and `--help` (a macro so that `concat!` can take them).
macro_rules! watch_examples {
    () => {
        "\
Examples:
  # The initial list of pods in kube-system as popped batches, then exit
  kubectl deltas watch pods -n kube-system --until-synced

  # Deployments, their ReplicaSets and their pods in every namespace, one label
  kubectl deltas watch deploy,rs,po -A -l app=web

  # Config maps as JSON lines for a script, with a resync every 30 seconds
  kubectl deltas watch cm -o jsonl --resync 30s --object meta

  # What two event handlers receive, one slow, one with its own resync period
  kubectl deltas watch pods --resync 1m --handler web,resync=30s --handler audit,delay=2s"
    };
}

/// `watch -h` fits one screen: two examples, and where the rest is.
const WATCH_SHORT_AFTER_HELP: &str = "\
Examples: (more, every flag and how to read a row: --help)
  kubectl deltas watch pods -n kube-system --until-synced
  kubectl deltas watch pods --handler web --handler audit,delay=2s";

/// `watch --help` ends with its examples, then how to read a row.
const WATCH_LONG_AFTER_HELP: &str = concat!(
    watch_examples!(),
    "\n\n",
    "How to read a row:\n",
    "  TIME          POP KEY            DELTAS    RV       WAIT           CHANGES\n",
    "  17:31:38.095  #1  demo/worker-1  Replaced  rv 1001  0µs  initial\n",
    "  17:31:41.439  ── list done: 3 items, 1 page, rv 1007, 2.0ms\n",
    "  17:31:41.439  #5  demo/worker-1  Replaced  rv 1004  0µs           no change\n",
    "  17:31:41.439  #8  demo/worker-2  Deleted(tombstone)  rv 1002  0µs\n",
    "  (rows of `kubectl deltas replay docs/recordings/expired-watch.jsonl | cat`; on a\n",
    "  terminal the columns keep fixed widths)\n",
    "\n",
    "  TIME     when the consumer popped the batch (a replay shows the recording's clock)\n",
    "  POP      the pop's number, in the order the queue handed batches out\n",
    "  KEY      namespace/name (name alone for cluster-scoped objects); the resource comes\n",
    "           first when several are watched\n",
    "  DELTAS   the batch's delta types, oldest first: Updated×2 is two coalesced updates of a\n",
    "           key still queued; Deleted(tombstone) a DeletedFinalStateUnknown, a deletion a\n",
    "           relist found; Replaced/Sync the objects of a list or a resync\n",
    "  RV       the resourceVersion of the newest object in the batch\n",
    "  WAIT     how long the key waited in the queue before this pop\n",
    "  initial  the batch belongs to the initial list: HasSynced is false until it is popped\n",
    "  CHANGES  what changed since the cache's previous state (`no change`: only the\n",
    "           resourceVersion): `+node-b` a field that appeared, `3→(absent)` one that\n",
    "           went; phase, conditions, replicas and spec first, timestamps last; -o wide\n",
    "           adds uid, generation, owner and every path\n",
    "  ──       the Reflector and the informer: list done, synced, watch closed, 410 → relist,\n",
    "           resync, backoff (-v adds list starts, pages and bookmarks)\n",
    "\n",
    "\n",
    "Tombstones: a Deleted(tombstone) reaches a Go handler's OnDelete as a\n",
    "cache.DeletedFinalStateUnknown{Key, Obj}, not as the object (Obj is the last state the\n",
    "cache knew): unwrap it first, `if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {\n",
    "obj = t.Obj }`. A handler that only does `pod, ok := obj.(*v1.Pod)` and returns when !ok\n",
    "drops the deletion silently.\n",
    "\n",
    "With --handler or --view, `→ NAME` rows are what a handler was called with, its buffer\n",
    "depth and how long the call waited. With --controller, each reconcile is two rows (README.md,\n",
    "\"Handlers and controllers\"):\n",
    "  ⇒ NAME reconcile  at the time a worker took the key: `priority -100 (initial list)` or\n",
    "           `(unchanged resourceVersion)` from queue=priority, the attempt, how long the key\n",
    "           waited since its first add, `folded N adds, latest T ago` when several changes\n",
    "           folded, and the rv the reconcile read then (`gone`: deleted)\n",
    "  ⇐ NAME returned   at the time it ended: how long it took, ok or error → retry in T\n",
    "A session that ends with work undone says so last, in `── ended …` rows: a Reflector in a\n",
    "backoff or before its relist, reconciles still running, keys still waiting."
);

const INDEX_EXAMPLES: &str = "\
Examples:
  # How many pods each node has, by an index on spec.nodeName
  kubectl deltas index pods -A --by field:spec.nodeName

  # The pods labelled app=web, as kubectl's -o name
  kubectl deltas index pods --by label:app --value web -o name

  # What owns what in a recording; exit 4 if nothing is owned
  kubectl deltas index --replay rec.jsonl --by owner --fail-empty

  # The same cache as it was 30 seconds into the recording (or at pop #12: --at '#12')
  kubectl deltas index --replay rec.jsonl --by owner --at +30s";

/// `record`'s examples in `-h`, which fits one screen (a macro so that `concat!` can take them).
macro_rules! record_examples {
    () => {
        "\
Examples:
  # Ten minutes of pods in the default namespace
  kubectl deltas record pods -n default -f pods.jsonl --duration 10m

  # Deployments in every namespace, compressed, without the timeline on stderr
  kubectl deltas record deploy -A --quiet | gzip > deploy.jsonl.gz"
    };
}

const RECORD_EXAMPLES: &str = record_examples!();

/// `record --help`: one more example.
const RECORD_LONG_EXAMPLES: &str = concat!(
    record_examples!(),
    "\n\n",
    "  # A controller's reconciles on stderr; `replay cm.jsonl` runs the same controller again\n",
    "  kubectl deltas record cm -f cm.jsonl --controller web,reconcile=200ms"
);

const REPLAY_EXAMPLES: &str = "\
Examples:
  # A Deployment rollout shipped with the source (docs/recordings/), no cluster needed
  kubectl deltas replay docs/recordings/rollout-pods.jsonl

  # Ten times faster than it happened, with uid, owner and changed paths
  kubectl deltas replay deploy.jsonl.gz --speed 10 -o wide

  # Only the batches of objects on node-a, as JSON lines, from stdin
  kubectl deltas replay - -o jsonl --query field:spec.nodeName=node-a < pods.jsonl

  # What the kubelet would have seen: the whole list, pushed after every change
  kubectl deltas replay docs/recordings/rollout-pods.jsonl --store undelta";

const COMPLETION_EXAMPLES: &str = "\
Examples:
  # bash
  kubectl-deltas completion bash > ~/.local/share/bash-completion/completions/kubectl-deltas

  # zsh (a directory on $fpath)
  kubectl-deltas completion zsh > ~/.zfunc/_kubectl-deltas

  # fish
  kubectl-deltas completion fish > ~/.config/fish/completions/kubectl-deltas.fish

For `kubectl deltas <TAB>`, put completions/kubectl_complete-deltas on PATH (see README.md).";

/// How to reach the cluster, as kubectl's flags.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Cluster (kubectl's flags)")]
pub struct AccessArgs {
    /// Path to the kubeconfig file.
    ///
    /// Default: the files of $KUBECONFIG merged, then ~/.kube/config, then the pod's service
    /// account.
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use.
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// The kubeconfig cluster to use.
    #[arg(hide_short_help = true, long, value_name = "NAME")]
    pub cluster: Option<String>,
    /// The kubeconfig user to use.
    #[arg(hide_short_help = true, long, value_name = "NAME")]
    pub user: Option<String>,
    /// Directory of the discovery cache, as kubectl's (default: $KUBECACHEDIR, then
    /// ~/.kube/cache). What the server serves is kept there for 6 hours, per server.
    #[arg(hide_short_help = true, long, value_name = "PATH", value_hint = clap::ValueHint::DirPath)]
    pub cache_dir: Option<PathBuf>,
    /// The namespace (default: the context's namespace, then `default`).
    #[arg(short, long, value_name = "NAME", value_parser = parse_namespace)]
    pub namespace: Option<String>,
    /// Every namespace.
    #[arg(short = 'A', long, conflicts_with = "namespace")]
    pub all_namespaces: bool,
    /// Label selector (`app=web,tier!=db`).
    ///
    /// As kubectl's: `app=web,tier!=db`, `env in (prod,staging)`, `!canary`; checked with the API
    /// server's grammar before anything is sent.
    #[arg(short = 'l', long, value_name = "SELECTOR", value_parser = parse_label_selector)]
    pub selector: Option<String>,
    /// Field selector (`status.phase=Running`).
    ///
    /// As kubectl's: `=`, `==` and `!=` only; which fields a resource supports only the server
    /// knows.
    #[arg(long, value_name = "SELECTOR", value_parser = parse_field_selector)]
    pub field_selector: Option<String>,
    /// Timeout of a single request, as kubectl's `--request-timeout` (`30s`, `1m`, or a number
    /// of seconds; `0` = none).
    ///
    /// A list cut short by it ends the session (exit 3), as it would take as long again; a watch
    /// idle for longer is opened again from its last resourceVersion.
    #[arg(hide_short_help = true, long, value_name = "DURATION", value_parser = parse_request_timeout, default_value = "0")]
    pub request_timeout: Period,
    /// The address and port of the Kubernetes API server.
    ///
    /// Over the kubeconfig's; enough without a kubeconfig. Like kubectl, it also drops the
    /// kubeconfig's tls-server-name (give --tls-server-name again if it is needed), and reads
    /// HOST:PORT without a scheme as https when TLS is configured (a CA, a client certificate,
    /// --insecure-skip-tls-verify), else as http. A password in it is never shown.
    #[arg(hide_short_help = true, short = 's', long, value_name = "URL")]
    pub server: Option<String>,
    /// Bearer token for authentication to the API server.
    ///
    /// Never shown: the -o html page's command line shows it as REDACTED.
    #[arg(hide_short_help = true, long, value_name = "TOKEN")]
    pub token: Option<String>,
    /// Username to impersonate (`system:serviceaccount:NS:NAME`).
    ///
    /// Sent as kubectl sends it (Impersonate-User), with the kubeconfig's credentials: with a
    /// service account's name, see what a controller running as it may list and watch; a 403
    /// then names the verb, the resource and that user.
    #[arg(long = "as", value_name = "USER")]
    pub as_user: Option<String>,
    /// Group to impersonate (repeatable; needs `--as`).
    #[arg(
        hide_short_help = true,
        long,
        value_name = "GROUP",
        requires = "as_user"
    )]
    pub as_group: Vec<String>,
    /// UID to impersonate (needs `--as`).
    #[arg(hide_short_help = true, long, value_name = "UID", requires = "as_user")]
    pub as_uid: Option<String>,
    /// Path to a cert file for the certificate authority.
    #[arg(hide_short_help = true, long, value_name = "PATH", value_hint = clap::ValueHint::FilePath)]
    pub certificate_authority: Option<PathBuf>,
    /// Path to a client certificate file for TLS.
    #[arg(hide_short_help = true, long, value_name = "PATH", value_hint = clap::ValueHint::FilePath)]
    pub client_certificate: Option<PathBuf>,
    /// Path to a client key file for TLS.
    #[arg(hide_short_help = true, long, value_name = "PATH", value_hint = clap::ValueHint::FilePath)]
    pub client_key: Option<PathBuf>,
    /// Do not check the server's certificate: the HTTPS connection is then insecure.
    #[arg(hide_short_help = true, long)]
    pub insecure_skip_tls_verify: bool,
    /// Name to validate the server's certificate against (default: the server's host name).
    #[arg(hide_short_help = true, long, value_name = "NAME")]
    pub tls_server_name: Option<String>,
}

/// The informer's knobs, shared by watch, record, replay and index.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Informer")]
pub struct InformerArgs {
    /// The client-go version whose informer runs (default: 1.32).
    ///
    /// Run the informer a client-go version builds by default: its queue, pops, relist deltas and
    /// initial list (1.17 to 1.36, also written v0.35 or 1.35.2; latest = 1.36). `--fifo`,
    /// `--batch-pop`, `--legacy-sync` and `--watch-list` override what it sets (docs/queues.md).
    /// Default: 1.32, the last DeltaFIFO informer.
    #[arg(
        long,
        value_name = "VERSION",
        value_parser = profile::ClientGoParser,
        hide_possible_values = true
    )]
    pub client_go: Option<String>,
    /// Resync period (`30s`, `5m`; `0` disables).
    ///
    /// As in client-go, a handler's period below 1s is raised to 1s, the informer's own check
    /// period is not. `replay` without it takes the recorded informer's period from the
    /// recording, and refuses one under 1ms, which it would tick without waiting.
    // `None` when not given: a replay then reads the period from the recording, which an
    // explicit `--resync 0` overrides.
    #[arg(long, value_name = "DURATION", value_parser = parse_period)]
    pub resync: Option<Period>,
    /// Replace emits Sync deltas instead of Replaced, as before client-go 1.18
    /// (`--legacy-sync=false`: Replaced, whatever `--client-go` says).
    #[arg(
        hide_short_help = true,
        long,
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true"
    )]
    pub legacy_sync: Option<bool>,
    /// With `--fifo atomic`: release the queue's lock while a pop is processed, unless 2000
    /// deltas wait, as client-go 1.36's UnlockWhileProcessingFIFO (default: on from
    /// `--client-go 1.36`); a plain informer's slow handler then lets the queue grow and the
    /// next batch pop take more.
    #[arg(
        hide_short_help = true,
        long,
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true"
    )]
    pub unlock_while_processing: Option<bool>,
    /// Add an index to the Indexer (repeatable; `field:spec.nodeName`).
    ///
    /// SPEC is one of namespace, label:<key>, labels, annotation:<key>, field:<dotted.path>,
    /// owner.
    #[arg(long = "index", value_name = "SPEC")]
    pub indices: Vec<String>,
    /// The queue between Reflector and Indexer: the classic DeltaFIFO, or client-go ≥ 1.33's
    /// RealFIFO, or RealFIFO with atomic whole-list deltas, or the plain FIFO (docs/queues.md).
    /// Default: the `--client-go` version's (delta for 1.32).
    #[arg(hide_short_help = true, long, value_enum)]
    pub fifo: Option<FifoKind>,
    /// With `--fifo real|atomic`: pop up to N consecutive deltas at once, as client-go's PopBatch
    /// (default: 1000 from `--client-go 1.35` on, as client-go's batch size; else 1).
    ///
    /// A DeltaFIFO pop is always one key's deltas (a FIFO pop one key's object), so N > 1 with
    /// `--fifo delta` or `--fifo plain` is a usage error.
    #[arg(hide_short_help = true, long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub batch_pop: Option<u32>,
}

/// Which queue feeds the Indexer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FifoKind {
    /// client-go's DeltaFIFO: deltas merged per key, deletions deduplicated (before 1.33).
    Delta,
    /// client-go's RealFIFO: every delta in arrival order (InOrderInformers, 1.33+).
    Real,
    /// RealFIFO with whole-list ReplacedAll/SyncAll and Bookmark deltas (AtomicFIFO gate, 1.36).
    Atomic,
    /// client-go's plain FIFO: the latest object per key, no delta types; deletions never popped.
    Plain,
}

impl From<FifoKind> for QueueKind {
    fn from(kind: FifoKind) -> Self {
        match kind {
            FifoKind::Delta => QueueKind::Delta,
            FifoKind::Real => QueueKind::Real,
            FifoKind::Atomic => QueueKind::Atomic,
            FifoKind::Plain => QueueKind::Plain,
        }
    }
}

/// What the Reflector writes into (`watch`, `record`, `replay`).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Informer")]
pub struct StoreArgs {
    /// What the Reflector feeds: an informer (its `--fifo` queue, popped into an Indexer), or an
    /// UndeltaStore, which pushes its whole content after every change, as the kubelet's pod
    /// source does (docs/queues.md). `undelta` has no queue, no consumer and no Indexer, so it
    /// refuses the flags about them: `--fifo`, `--batch-pop`, `--legacy-sync`, `--index`,
    /// `--handler-delay`, `--query` and `--resync`.
    #[arg(hide_short_help = true, long, value_enum, default_value_t = StoreKind::Informer)]
    pub store: StoreKind,
}

/// What the Reflector writes into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StoreKind {
    /// An informer: the `--fifo` queue, popped into an Indexer; one row per popped batch.
    Informer,
    /// client-go's UndeltaStore (the kubelet's pod source): one row per push of the whole list.
    Undelta,
}

/// How the Reflector lists and watches, as client-go's.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Reflector (advanced)")]
pub struct ReflectorArgs {
    /// Objects per page of every list, relists included, as client-go's WatchListPageSize
    /// (default: pages of 500, except relists at a resourceVersion, which ask for everything at
    /// once so that the watch cache answers with current data).
    #[arg(hide_short_help = true, long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub page_size: Option<u32>,
    /// List with resourceVersion="" (a quorum read from etcd) instead of "0" (the watch cache).
    #[arg(hide_short_help = true, long)]
    pub consistent_list: bool,
    /// Watch timeout sent to the server (default: random in [5m, 10m), as client-go).
    #[arg(
        hide_short_help = true,
        long,
        value_name = "DURATION",
        value_parser = parse_period,
        default_value = "0",
        hide_default_value = true
    )]
    pub watch_timeout: Period,
    /// Stream the initial list through a watch (sendInitialEvents), falling back to list+watch when
    /// the server refuses (default: on from `--client-go 1.35`, as WatchListClient;
    /// `--watch-list=false` lists in pages whatever the version).
    #[arg(
        hide_short_help = true,
        long,
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true"
    )]
    pub watch_list: Option<bool>,
    /// Every DURATION, list at the resourceVersion the cache has reached
    /// (resourceVersionMatch=Exact) and report every key missing, extra or at another
    /// resourceVersion in the cache (`0` disables; below 1s means 1s). Modelled on client-go's data
    /// consistency detector, but periodic, and reported instead of panicking. Once the server
    /// has compacted that resourceVersion (etcd compacts every 5 minutes), the check lists at ""
    /// instead and, if that differs from the cache, waits for the watch to deliver up to the
    /// list's resourceVersion (bookmarks move a quiet resource on) before comparing.
    #[arg(
        hide_short_help = true,
        long,
        value_name = "DURATION",
        value_parser = parse_period,
        default_value = "0"
    )]
    pub verify_every: Period,
    /// Keep managedFields (stripped by default, as many informers do with a transform).
    #[arg(hide_short_help = true, long)]
    pub no_strip_managed_fields: bool,
    /// List and watch only each object's metadata (PartialObjectMetadata).
    ///
    /// As client-go's metadata informers: a fraction of the memory and traffic. Changes outside
    /// metadata show as new resourceVersions only; a `field:` index or query outside metadata is
    /// refused.
    #[arg(long)]
    pub metadata_only: bool,
}

/// Output formats of `watch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WatchOutput {
    /// One row per popped batch, for people.
    Timeline,
    /// The timeline with uid, generation, owner and every changed path.
    Wide,
    /// One JSON object per line, for scripts (docs/jsonl.md).
    Jsonl,
    /// Each batch as a pretty JSON document.
    Json,
    /// Each batch as a YAML document.
    Yaml,
    /// One self-contained HTML page, written when the session ends (to stdout, or -f FILE): the
    /// Reflector, every key's pops, the queue and each handler on a time axis, the summary below.
    Html,
}

/// `watch`.
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Resource types, comma-separated (`pods`, `deploy,rs,po`, `widgets.example.com`), or
    /// TYPE/NAME for one object (`cm/app-config`), as kubectl reads them.
    #[arg(value_name = "RESOURCE[,RESOURCE…]")]
    pub resources: String,
    /// Only this object.
    pub name: Option<String>,
    /// Stop after this long, as Ctrl-C does (summary, exit 0).
    ///
    /// What was popped is written, then the summary, exit 0 (default: until Ctrl-C or another
    /// limit).
    #[arg(
        help_heading = "Output",
        long,
        value_name = "DURATION",
        value_parser = parse_period,
        default_value = "0",
        hide_default_value = true
    )]
    pub duration: Period,
    #[command(flatten)]
    pub view: ViewArgs,
    #[command(flatten)]
    pub access: AccessArgs,
    #[command(flatten)]
    pub informer: InformerArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub reflector: ReflectorArgs,
    #[command(flatten)]
    pub compare: CompareArgs,
}

/// `--compare`, on `watch` and `replay`.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Informer")]
pub struct CompareArgs {
    /// Run several stacks side by side on one stream, and show where they differ.
    ///
    /// STACK[,STACK…]: each stack is a client-go version (`1.32`, `0.35.1`, `latest`), optionally
    /// with `+` overrides of what it sets (`+fifo=real`, `+batch-pop=1`, `+legacy-sync`,
    /// `+unlock-while-processing`, `+watch-list`), or a change to every --controller
    /// (`queue=priority`, `runtime=kube` or `runtime=client-go`); each takes the command line's
    /// other flags. Every stack runs its own informer, handlers and controllers on the same
    /// recorded or live stream, on the same clock. The timeline writes a row every stack wrote
    /// alike once, and any other under its stack's name (`1.32 │ …`), with where each other stack
    /// wrote it; every JSON line names its stack (`"stack"`). Exit status 5 when the stacks
    /// differ.
    #[arg(hide_short_help = true, long, value_name = "STACKS", value_parser = compare::parse_stacks)]
    pub compare: Option<compare::Stacks>,
}

/// What `watch` and `replay` show of the popped batches, and how the consumer behaves.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Output")]
pub struct ViewArgs {
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = WatchOutput::Timeline)]
    pub output: WatchOutput,
    /// Where `-o html` writes its page (default: stdout), once the session ends normally (Ctrl-C
    /// included): an existing FILE (through a symlink, the file it names) is replaced by the
    /// complete page, and left as it was by a session that fails. It cannot be the recording
    /// replayed.
    #[arg(hide_short_help = true, short = 'f', long = "file", value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    pub page_file: Option<PathBuf>,
    /// How much of each object jsonl, json, yaml and html carry.
    #[arg(hide_short_help = true, long, value_enum, default_value_t = kubectl_deltas::render::ObjectMode::Full)]
    pub object: kubectl_deltas::render::ObjectMode,
    /// Show Secret values: data, stringData and the kubectl last-applied-configuration annotation
    /// (redacted by default; without it, a `--query` or `--index` on them is refused for Secrets).
    #[arg(hide_short_help = true, long)]
    pub show_secret_data: bool,
    /// Do not print the initial list's batches.
    ///
    /// They are still applied to the cache. With `--store undelta`: the initial list's push.
    #[arg(hide_short_help = true, long)]
    pub since_now: bool,
    /// Exit once the cache has synced and the initial batches are printed.
    #[arg(long)]
    pub until_synced: bool,
    /// No header row over the timeline on a terminal, as kubectl's `--no-headers`.
    ///
    /// On a terminal the timeline starts with a row naming its columns (`watch --help` ends with
    /// how to read them); in a pipe or a file it never does.
    #[arg(long, hide_short_help = true)]
    pub no_headers: bool,
    /// Exit after N batches (N pushes with `--store undelta`).
    #[arg(hide_short_help = true, long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_batches: Option<u64>,
    /// Only batches whose old or new object is indexed under VALUE by SPEC (repeatable; a batch
    /// matching any query is shown). SPEC is an index spec as for `--index`.
    #[arg(hide_short_help = true, long, value_name = "SPEC=VALUE")]
    pub query: Vec<String>,
    /// No progress bar, status footer or summary table on stderr.
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub handling: HandlerViewArgs,
    #[command(flatten)]
    pub narrow: narrow::NarrowArgs,
}

/// The event handlers and controllers a session registers, and which of their rows it shows:
/// `watch` and `replay` take them with their output flags ([`ViewArgs`]), `record` alone, for
/// its timeline on stderr.
#[derive(Debug, Clone, Args)]
pub struct HandlerViewArgs {
    /// How long the default event handler takes per notification (without --handler). In a
    /// shared informer its buffer grows and the queue does not; with --informer plain the pop
    /// waits for it, and deltas coalesce in the queue.
    #[arg(hide_short_help = true, help_heading = "Handlers and controllers", long, value_name = "DURATION", value_parser = parse_period, default_value = "0")]
    pub handler_delay: Period,
    /// Register an event handler, as a controller does (repeatable).
    ///
    /// NAME[,resync=DURATION][,delay=DURATION], as a controller does on a shared informer: `resync=DURATION` is its own resync period (AddEventHandlerWithResyncPeriod; 0: none;
    /// default: the informer's --resync, as AddEventHandler), `delay=DURATION` how long each
    /// call takes. Without it, one handler named `handler` taking --handler-delay.
    #[arg(
        help_heading = "Handlers and controllers",
        long = "handler",
        value_name = "HANDLER",
        value_parser = parse_handler
    )]
    pub handlers: Vec<HandlerArg>,
    /// Register a controller: client-go's workqueue or kube-runtime's.
    ///
    /// Repeatable. NAME[,SETTING=VALUE]…:
    ///
    ///   setting            runtime    what it does (default)
    ///   runtime=client-go  -          a handler on the shared informer queues keys (default)
    ///   runtime=kube       -          kube-runtime 5.0.0's Controller, fed by its watcher:
    ///                                 no tombstones, a deleted object is never reconciled
    ///   workers=N          both       reconciles at once (client-go 1, kube unbounded)
    ///   reconcile=DUR      both       how long each reconcile takes (0, else >= 1ms)
    ///   fail=N             both       the first N reconciles of each key fail (0; <= 100)
    ///   fail-keys=GLOB     both       the keys fail=N applies to, as --match reads it (all)
    ///   requeue-after=DUR  both       every success comes back after that long (none)
    ///   predicate=P[+P]    both       generation, resource-version, labels, annotations:
    ///                                 client-go filters updates only, kube every object
    ///   owns=RESOURCE      both       a resource watched after the first (repeatable): its
    ///                                 objects' changes reconcile their owner, on the first
    ///   queue=workqueue    client-go  client-go's rate-limited workqueue (default)
    ///   queue=priority     client-go  controller-runtime's priority queue (its default
    ///                                 from v0.23: initial list and resyncs at -100)
    ///   resync=DUR         client-go  the handler's own resync period (the informer's)
    ///   debounce=DUR       kube       the scheduler waits that long after a request (0)
    ///   error-requeue=DUR  kube       the error policy's Action::requeue (5s)
    ///
    /// A client-go controller's handler puts each notified key into its own queue: adds of a
    /// waiting key fold, a key changed while reconciled is queued again when done, errors are
    /// retried by the rate limiter; workers read the Indexer when they start. A kube
    /// controller's rows say NAME(kube), its notes `── kube-runtime …` (docs/queues.md). A
    /// replay runs every controller on the recording's clock (--speed X: X times real time).
    #[arg(
        help_heading = "Handlers and controllers",
        long = "controller",
        value_name = "CONTROLLER",
        verbatim_doc_comment,
        value_parser = values::parse_controller
    )]
    pub controllers: Vec<ControllerArg>,
    /// How the informer calls its handlers: `shared` (SharedIndexInformer: each handler has its
    /// own unbounded buffer and thread) or `plain` (NewInformer: one handler, called inside the
    /// pop under the queue's lock, so the Reflector waits for it).
    #[arg(hide_short_help = true, help_heading = "Handlers and controllers", long = "informer", value_enum, default_value_t = InformerKindArg::Shared)]
    pub informer_kind: InformerKindArg,
    /// What is shown.
    ///
    /// The queue's pops, what each handler received, both, or only the controllers'
    /// reconciles. Default: both when a --handler or --controller is given or --handler-delay
    /// set, else pops. `both` includes the reconciles.
    #[arg(help_heading = "Handlers and controllers", long = "view", value_enum)]
    pub view_kind: Option<ViewKind>,
}

/// `--informer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InformerKindArg {
    /// client-go's SharedIndexInformer: handlers called from their own threads, through
    /// unbounded buffers.
    Shared,
    /// client-go's NewInformer: one handler called inside the queue's pop.
    Plain,
}

/// `--view`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ViewKind {
    /// The queue's pops (batches), as today's timeline.
    Pops,
    /// What each handler received: one row per notification.
    Handlers,
    /// Pops, each followed by what the handlers received of it, and the controllers'
    /// reconciles.
    Both,
    /// Only what the controllers' workers did (`--controller`): one row per reconcile.
    Reconciles,
}

/// `index`'s usage line: what is required, whatever else was given.
const INDEX_USAGE: &str = "kubectl deltas index <RESOURCE[/NAME]> --by <SPEC> [OPTIONS]\n       \
                           kubectl deltas index --replay <FILE> [RESOURCE] --by <SPEC> [OPTIONS]";

/// `index`.
#[derive(Debug, Args)]
pub struct IndexArgs {
    /// Resource type (`pods`, `deploy`, …), or TYPE/NAME for one object (`pods/web-1`); with
    /// `--replay`, optional, and it must name the recording's resource.
    #[arg(required_unless_present = "replay")]
    pub resource: Option<String>,
    /// The index to query: namespace, label:<key>, labels, annotation:<key>, field:<dotted.path>,
    /// owner.
    #[arg(long, value_name = "SPEC")]
    pub by: String,
    /// Only objects indexed under this value (repeatable; `*` for any value: which objects have
    /// the label, annotation or field at all); without it, every value with its count.
    #[arg(long = "value", value_name = "V")]
    pub values: Vec<String>,
    /// Print the store keys (`namespace/name`) of the objects under the `--value`s, one per line,
    /// instead of an `-o` format.
    #[arg(long, requires = "values", conflicts_with = "output")]
    pub keys_only: bool,
    /// Build the cache from a recording instead of a cluster (`-` for stdin), as it was at the
    /// recording's end. The cluster's flags do not apply: the recording says what was listed.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with_all = [
            "kubeconfig", "context", "cluster", "user", "namespace",
            "all_namespaces", "selector", "field_selector", "request_timeout",
            "server", "token", "as_user", "as_group", "as_uid", "certificate_authority",
            "client_certificate", "client_key", "insecure_skip_tls_verify", "tls_server_name",
        ]
    )]
    pub replay: Option<PathBuf>,
    /// With `--replay`: the cache as it was at this point of the recording instead of its end,
    /// written as `replay --to` takes it: a time (RFC 3339), an offset from its start (`+30s`)
    /// or a pop's number as `replay` shows it (`#12`).
    #[arg(long, value_name = "WHEN", requires = "replay")]
    pub at: Option<narrow::Bound>,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = IndexFormat::Table)]
    pub output: IndexFormat,
    /// Print no header row in tables (`-o table`, `-o wide`), as kubectl's `--no-headers`.
    #[arg(long)]
    pub no_headers: bool,
    /// Exit with code 4 when nothing matches: no object under any `--value`, or, without
    /// `--value`, no object with a value at all. Either way, in every format, nothing is written
    /// on stdout and one sentence on stderr (a note, exit 0, without this flag).
    #[arg(long)]
    pub fail_empty: bool,
    /// Show Secret values: data, stringData and the kubectl last-applied-configuration annotation
    /// (redacted by default; without it, indexing Secrets by them is refused).
    #[arg(long)]
    pub show_secret_data: bool,
    /// No notes on stderr (a retry, an empty answer); errors still go there.
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub access: AccessArgs,
    #[command(flatten)]
    pub cache: IndexCacheArgs,
}

/// How `index` builds its cache: the flags of [`InformerArgs`] and [`ReflectorArgs`] that change
/// a list. `index` lists once and stops, so it has none about resyncs, watches or drift checks
/// (`--resync`, `--legacy-sync`, `--watch-timeout`, `--verify-every`).
#[derive(Debug, Clone, Args)]
pub struct IndexCacheArgs {
    /// Build the cache as a client-go version's informer does: its queue, pops and initial list
    /// (1.17 to 1.36, also written v0.35 or 1.35.2; latest = 1.36). `--fifo`, `--batch-pop` and
    /// `--watch-list` override what it sets (docs/queues.md). Default: 1.32.
    #[arg(
        long,
        value_name = "VERSION",
        value_parser = profile::ClientGoParser,
        hide_possible_values = true
    )]
    pub client_go: Option<String>,
    /// Add another index to the Indexer (repeatable), as `--by` takes: namespace, label:<key>,
    /// labels, annotation:<key>, field:<dotted.path>, owner.
    #[arg(long = "index", value_name = "SPEC")]
    pub indices: Vec<String>,
    /// The queue the list goes through into the Indexer: delta, real, atomic or plain
    /// (docs/queues.md; default: the `--client-go` version's). Every queue leaves the same cache.
    #[arg(long, value_enum)]
    pub fifo: Option<FifoKind>,
    /// With `--fifo real|atomic`: pop up to N consecutive deltas at once, as client-go's PopBatch.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub batch_pop: Option<u32>,
    /// Objects per page of the list (default: 500), as client-go's WatchListPageSize.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub page_size: Option<u32>,
    /// List with resourceVersion="" (a quorum read from etcd) instead of "0" (the watch cache).
    #[arg(long)]
    pub consistent_list: bool,
    /// List through a streaming watch (sendInitialEvents), falling back to a paged list when the
    /// server refuses (default: on from `--client-go 1.35`; `--watch-list=false` pages).
    #[arg(
        long,
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true"
    )]
    pub watch_list: Option<bool>,
    /// Keep managedFields in `-o json|yaml|jsonl` (stripped by default, as many informers do).
    #[arg(long)]
    pub no_strip_managed_fields: bool,
    /// List only each object's metadata (PartialObjectMetadata, as client-go's metadata
    /// informers): a fraction of the memory and traffic; a `field:` index outside metadata is
    /// refused.
    #[arg(long)]
    pub metadata_only: bool,
}

impl IndexCacheArgs {
    /// As the informer flags `watch` has, the others at their defaults.
    pub fn informer(&self) -> InformerArgs {
        InformerArgs {
            client_go: self.client_go.clone(),
            indices: self.indices.clone(),
            fifo: self.fifo,
            batch_pop: self.batch_pop,
            ..InformerArgs::default()
        }
    }

    /// As the Reflector flags `watch` has, the others at their defaults.
    pub fn reflector(&self) -> ReflectorArgs {
        ReflectorArgs {
            page_size: self.page_size,
            consistent_list: self.consistent_list,
            watch_timeout: Period::default(),
            watch_list: self.watch_list,
            verify_every: Period::default(),
            no_strip_managed_fields: self.no_strip_managed_fields,
            metadata_only: self.metadata_only,
        }
    }
}

/// `record`.
#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Resource type to record.
    pub resource: String,
    /// Only this object.
    pub name: Option<String>,
    /// Where to write the recording (`-` for stdout; a name ending in `.gz` is compressed). The
    /// timeline goes to stderr. The file is created once the server first answers, and an
    /// existing one is refused unless `--force`.
    #[arg(short, long, value_name = "FILE", default_value = "-")]
    pub file: PathBuf,
    /// Overwrite the `-f` file if it exists.
    #[arg(long)]
    pub force: bool,
    /// Do not render the timeline on stderr.
    #[arg(short, long)]
    pub quiet: bool,
    /// Keep Secret values (data, stringData and the kubectl last-applied-configuration annotation)
    /// in the recording (redacted by default).
    #[arg(long)]
    pub show_secret_data: bool,
    /// Stop after this long (default: until Ctrl-C).
    #[arg(long, value_name = "DURATION", value_parser = parse_period, default_value = "0")]
    pub duration: Period,
    // The handlers and controllers whose rows the timeline on stderr shows; written into the
    // recording's header (`replayWith`), so that `replay FILE` runs them again.
    #[command(flatten)]
    pub handling: HandlerViewArgs,
    #[command(flatten)]
    pub access: AccessArgs,
    #[command(flatten)]
    pub informer: InformerArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub reflector: ReflectorArgs,
    /// Refused with a sentence: a recording is the server's answers, whatever reads them.
    #[arg(long, hide = true, value_name = "STACKS")]
    pub compare: Option<String>,
}

/// `replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The recording (`-` for stdin; `.gz` files are decompressed). When its header names the
    /// flags it is meant to be replayed with (`replayWith`), they are used unless a flag given
    /// changes the informer (any but the output, narrowing and layout flags, --speed and
    /// --view), and a note says so (docs/recording.md).
    pub file: PathBuf,
    /// More recordings, one resource each, replayed with the first as one session: one lane per
    /// recording, on one clock (each line at its header's startedAt + t), the first file's
    /// resource the controllers' own (`owns=` names the others). The first file's replayWith
    /// applies.
    #[arg(value_name = "FILE")]
    pub more: Vec<PathBuf>,
    /// Replay in real time divided by X (`--speed 1` is real time) instead of instantly, with the
    /// consumer popping concurrently as live, on a clock running X times real time (handler
    /// delays and a controller's reconciles and retries then count in recorded time).
    #[arg(long, value_name = "X", value_parser = parse_speed)]
    pub speed: Option<f64>,
    #[command(flatten)]
    pub view: ViewArgs,
    #[command(flatten)]
    pub narrow: narrow::ReplayNarrowArgs,
    #[command(flatten)]
    pub informer: InformerArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub compare: CompareArgs,
}

/// `completion`.
#[derive(Debug, Args)]
pub struct CompletionArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `__complete`.
#[derive(Debug, Args)]
pub struct CompleteArgs {
    /// The words typed after `kubectl deltas`; the last is the one being completed.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub words: Vec<std::ffi::OsString>,
}

#[cfg(test)]
#[path = "cli_tests.rs"]
mod tests;
