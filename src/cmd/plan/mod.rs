//! The plan of a session: the command line of `watch`, `record` or `replay`, resolved once into
//! what the session shows and what runs, before anything is contacted (as ripgrep's `LowArgs`
//! become `HiArgs`).
//!
//! Invariants:
//! - Everything here is a domain type: the [`pipeline`](super::pipeline) that runs a plan never
//!   sees a flag, a clap type or anything of `crate::cli` (`layers_tests.rs` checks it).
//! - Every refusal of a flag combination that the pipeline would otherwise have to make is made
//!   while the plan is resolved ([`refuse`]), each one sentence with its exit code: a plan that
//!   exists can be run.
//! - A plan is split by who reads it: the [`OutputPlan`] (what is shown: format, object mode,
//!   narrowing, limits, page), and one [`StackPlan`] (how one resource's lane runs: its
//!   [`InformerPlan`] with the client-go profile, queue, store and indices, and the handlers and
//!   controllers registered on it). A lane is one stack on one resource, so several stacks on
//!   one stream are several lanes per resource, each built from its own `StackPlan`.
//! - `--compare` resolves each of its stacks as the command line's own flags would be resolved
//!   with that stack's terms over them ([`Plan::compare`]): a compared stack differs from the
//!   command line's only in what its terms name.

mod narrow;
mod output;
mod query;
pub mod refuse;

use std::time::Duration;

use kubectl_deltas::cache::{
    Consumption, IndexSpec, InformerConfig, InformerKind, ReflectorConfig,
};
use kubectl_deltas::render::profile::{InformerProfile, SettingOrigin, SettingValue};

use kubectl_deltas::cache::KeyGlob;
use kubectl_deltas::cache::kube_runtime::DEFAULT_ERROR_REQUEUE;
use kubectl_deltas::cache::triggers::Predicates;
pub use output::OutputPlan;
#[cfg(test)]
pub use output::{Format, Shown};

use crate::cli::compare::{ControllerChangeArg, Stacks};
use crate::cli::profile::Profile;
use crate::cli::{
    ControllerArg, ControllerQueueKind, ControllerRuntimeKind, HandlerArg, InformerArgs, StoreKind,
};

/// A resolved session: what it shows, and the stack each resource runs.
#[derive(Debug, Clone)]
pub struct Plan {
    /// What is shown, and when the session stops.
    pub output: OutputPlan,
    /// What runs on each resource (without `--compare`).
    pub stack: StackPlan,
    /// With `--compare`: what runs on each resource instead of `stack`, two or more stacks side
    /// by side, each with its label. Empty without it.
    pub compared: Vec<(StackLabel, StackPlan)>,
}

/// How rows, JSON lines and verdicts name a compared stack: what the user typed for it
/// (`1.32`, `latest+fifo=delta`, `queue=priority`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackLabel(pub String);

impl StackLabel {
    /// The label as typed.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A change a compared stack makes to every controller: one arm per setting a stack may vary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControllerChange {
    /// A client-go controller on this queue (`queue=`).
    Queue(ControllerQueue),
    /// The controller runs on client-go (its queue as given, else the workqueue) or on
    /// kube-runtime (its `debounce` and `error-requeue` as given, else kube-runtime's defaults)
    /// (`runtime=`). Its workers, reconciles, failures, predicates and owned resources stay as
    /// given, so that the stacks differ in the runtime only.
    Runtime(ControllerRuntimeKind),
}

impl ControllerChange {
    /// `spec` with this change made.
    pub fn apply(self, spec: &mut ControllerSpec) {
        spec.runtime = match (self, spec.runtime) {
            (ControllerChange::Queue(queue), _) => ControllerRuntime::ClientGo { queue },
            (ControllerChange::Runtime(ControllerRuntimeKind::ClientGo), runtime) => {
                match runtime {
                    ControllerRuntime::Kube { .. } => ControllerRuntime::ClientGo {
                        queue: ControllerQueue::Workqueue,
                    },
                    client_go => client_go,
                }
            }
            (ControllerChange::Runtime(ControllerRuntimeKind::Kube), runtime) => match runtime {
                ControllerRuntime::ClientGo { .. } => ControllerRuntime::Kube {
                    debounce: Duration::ZERO,
                    error_requeue: DEFAULT_ERROR_REQUEUE,
                },
                kube => kube,
            },
        };
    }
}

impl From<ControllerChangeArg> for ControllerChange {
    fn from(arg: ControllerChangeArg) -> Self {
        match arg {
            ControllerChangeArg::Queue(kind) => ControllerChange::Queue(kind.into()),
            ControllerChangeArg::Runtime(kind) => ControllerChange::Runtime(kind),
        }
    }
}

/// One stack: an informer and what is registered on it, for one resource.
#[derive(Debug, Clone)]
pub struct StackPlan {
    /// The informer (or UndeltaStore) and its Reflector.
    pub informer: InformerPlan,
    /// The handlers registered on a shared informer, in order (see [`StackPlan::resolve`]).
    pub handlers: Vec<HandlerSpec>,
    /// How long a plain informer's one handler takes per call, inside the pop.
    pub plain_handler_delay: Option<Duration>,
    /// The controllers, each registered as a handler after [`handlers`](Self::handlers).
    pub controllers: Vec<ControllerSpec>,
}

impl StackPlan {
    /// `informer` with the handlers and controllers `output` asked for: those given; else, when
    /// handlers are shown, the default one (see [`OutputPlan::shared_handlers`]).
    pub fn new(output: &OutputPlan, informer: InformerPlan) -> Self {
        StackPlan {
            informer,
            handlers: output.shared_handlers(),
            plain_handler_delay: output.plain_handler_delay(),
            controllers: output.controllers.clone(),
        }
    }
}

/// What the Reflector writes into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    /// An informer: queue, consumer, Indexer.
    Informer,
    /// client-go's UndeltaStore: no queue, no consumer, no Indexer (`pipeline/undelta.rs`).
    Undelta,
}

/// How one informer runs.
#[derive(Debug, Clone)]
pub struct InformerPlan {
    /// What the Reflector writes into (with an UndeltaStore the rest of this plan but
    /// `reflector` and `profile` is not used).
    pub store: Store,
    /// The informer the client-go version builds, with the flags' settings and the indices; its
    /// consumption, kind and resync timing are the lane's to set.
    pub config: InformerConfig,
    /// How the informer calls its handlers.
    pub kind: InformerKind,
    /// How each Reflector lists and watches. Each resync it times is the pipeline's.
    pub reflector: ReflectorConfig,
    /// The client-go version imitated and every setting that came of it: each informer's first
    /// line.
    pub profile: InformerProfile,
    /// The version imitated has per-handler `HasSynced` (1.27 onwards).
    pub registration_synced: bool,
    /// How the time a batch waited in its queue is shown: `None` as measured; `Some(x)`
    /// multiplied by `x`, so that a replay at `--speed x` shows waits in recorded time (and an
    /// instant replay, `Some(0.0)`, shows none: its queue is drained before time moves on).
    pub wait_scale: Option<f64>,
}

impl InformerPlan {
    /// The informer the lane builds, consumed as `consumption` says.
    pub fn informer_config(&self, consumption: Consumption) -> InformerConfig {
        InformerConfig {
            consumption,
            kind: self.kind,
            ..self.config.clone()
        }
    }

    /// A replay: the recording decides whether the initial list was streamed (a recording made
    /// with LIST pages replays as list+watch, whatever the profile says).
    pub fn replayed(&mut self, streamed: bool) {
        for setting in &mut self.profile.settings {
            if setting.name == "watch-list" {
                setting.value = SettingValue::Switch(streamed);
                setting.from = SettingOrigin::Recording;
            }
        }
    }
}

/// One handler: a name, its own resync period and how long each call takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandlerSpec {
    /// How rows and JSON lines name it.
    pub name: String,
    /// `None` for the informer's period (AddEventHandler), `Some(ZERO)` for none.
    pub resync: Option<Duration>,
    /// How long each call takes.
    pub delay: Option<Duration>,
}

impl From<&HandlerArg> for HandlerSpec {
    fn from(arg: &HandlerArg) -> Self {
        HandlerSpec {
            name: arg.name.clone(),
            resync: arg.resync,
            delay: arg.delay,
        }
    }
}

/// One controller: a handler that queues keys, and the workers that reconcile them; or
/// kube-runtime's `Controller` on the same stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerSpec {
    /// How rows and JSON lines name it (and its handler).
    pub name: String,
    /// controller-runtime's `MaxConcurrentReconciles`, or kube-runtime's `Config::concurrency`
    /// (0: unbounded, its default).
    pub workers: usize,
    /// How long each reconcile takes.
    pub reconcile: Duration,
    /// The first N reconciles of each key matching `fail_keys` return an error.
    pub fail: u32,
    /// Which keys `fail` applies to (all when `None`).
    pub fail_keys: Option<KeyGlob>,
    /// Every success asks to be reconciled again after this long.
    pub requeue_after: Option<Duration>,
    /// The handler's own resync period, as for a handler.
    pub resync: Option<Duration>,
    /// Whose machinery turns the stream into reconciles.
    pub runtime: ControllerRuntime,
    /// The predicates an event passes before it requests a reconcile (none: all pass).
    pub predicates: Predicates,
    /// The resources it owns (`owns=`), as typed; resolved into [`owned`](Self::owned).
    pub owns: Vec<String>,
    /// The sources its owned resources are, by their place among the session's resources
    /// (never 0: the first is the controller's own). A controller that owns any runs on the
    /// first resource only.
    pub owned: Vec<usize>,
}

/// Whose machinery a controller runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControllerRuntime {
    /// A handler on the shared informer queues keys into `queue`; controller-runtime's worker
    /// loop reconciles them.
    ClientGo {
        /// The queue between the handler and the workers.
        queue: ControllerQueue,
    },
    /// kube-runtime 5.0.0's `Controller`, fed by its watcher's events (translated from the
    /// lane's Reflector), with its scheduler's `debounce` and an error policy that requeues
    /// after `error_requeue`.
    Kube {
        /// `Config::debounce`.
        debounce: Duration,
        /// The error policy's `Action::requeue`.
        error_requeue: Duration,
    },
}

impl ControllerSpec {
    /// The name of its queue, as the summary shows it.
    pub fn queue_name(&self) -> &'static str {
        match self.runtime {
            ControllerRuntime::ClientGo { queue } => queue.as_str(),
            ControllerRuntime::Kube { .. } => "kube-runtime scheduler",
        }
    }

    /// Whether it is kube-runtime's `Controller`.
    pub fn is_kube(&self) -> bool {
        matches!(self.runtime, ControllerRuntime::Kube { .. })
    }
}

/// The queue a controller runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControllerQueue {
    /// client-go's rate-limiting workqueue with `DefaultControllerRateLimiter`.
    Workqueue,
    /// controller-runtime's priority queue with its per-item rate limiter.
    Priority,
}

impl ControllerQueue {
    /// The name the summary shows.
    pub fn as_str(self) -> &'static str {
        match self {
            ControllerQueue::Workqueue => "workqueue",
            ControllerQueue::Priority => "priority",
        }
    }
}

impl From<&ControllerArg> for ControllerSpec {
    /// The spec of `arg`, whose combinations [`refuse::controllers`] has checked: a kube
    /// controller runs unbounded unless `workers=` is given (kube-runtime's
    /// `Config::concurrency` defaults to 0), a client-go one runs one worker
    /// (`MaxConcurrentReconciles`).
    fn from(arg: &ControllerArg) -> Self {
        let runtime = match arg.runtime {
            ControllerRuntimeKind::ClientGo => ControllerRuntime::ClientGo {
                queue: match arg.queue.unwrap_or_default() {
                    ControllerQueueKind::Workqueue => ControllerQueue::Workqueue,
                    ControllerQueueKind::Priority => ControllerQueue::Priority,
                },
            },
            ControllerRuntimeKind::Kube => ControllerRuntime::Kube {
                debounce: arg.debounce.unwrap_or_default(),
                error_requeue: arg.error_requeue.unwrap_or(DEFAULT_ERROR_REQUEUE),
            },
        };
        let default_workers = match arg.runtime {
            ControllerRuntimeKind::ClientGo => 1,
            ControllerRuntimeKind::Kube => 0,
        };
        ControllerSpec {
            name: arg.name.clone(),
            workers: arg.workers.unwrap_or(default_workers),
            reconcile: arg.reconcile,
            fail: arg.fail,
            fail_keys: arg.fail_keys.clone(),
            requeue_after: arg.requeue_after,
            resync: arg.resync,
            runtime,
            predicates: arg.predicates.clone(),
            owns: arg.owns.clone(),
            owned: Vec::new(),
        }
    }
}

impl From<ControllerQueueKind> for ControllerQueue {
    fn from(kind: ControllerQueueKind) -> Self {
        match kind {
            ControllerQueueKind::Workqueue => ControllerQueue::Workqueue,
            ControllerQueueKind::Priority => ControllerQueue::Priority,
        }
    }
}

impl Plan {
    /// Resolves each controller's `owns=` into the place of that resource among `names`, the
    /// resources of the session as typed (`watch deploy,rs`: `["deploy", "rs"]`); `session`
    /// names the session for the refusal (`this watch`, `a replay`). Refused (exit 2) when it
    /// names no resource after the first.
    pub fn resolve_owns(&mut self, names: &[String], session: &str) -> anyhow::Result<()> {
        let compared = self.compared.iter_mut().map(|(_, stack)| stack);
        let specs = std::iter::once(&mut self.stack)
            .chain(compared)
            .flat_map(|stack| stack.controllers.iter_mut());
        for spec in specs {
            let mut owned = Vec::new();
            for resource in &spec.owns {
                let at = refuse::owned_resource(&spec.name, resource, names, session)?;
                if !owned.contains(&at) {
                    owned.push(at);
                }
            }
            spec.owned = owned;
        }
        self.output.controllers.clone_from(&self.stack.controllers);
        Ok(())
    }

    /// The plan of `output` and the informer flags: the flags an UndeltaStore or the queue has no
    /// use for are refused first (so that this is the line a user sees), then the profile
    /// (`--client-go` with the informer's flags and `watch_list` over it) is resolved, the
    /// Reflector configured from it by `reflector`, and the `--index` specs parsed.
    pub fn resolve(
        output: OutputPlan,
        informer: &InformerArgs,
        store: StoreKind,
        watch_list: Option<bool>,
        reflector: impl FnOnce(&Profile) -> ReflectorConfig,
    ) -> anyhow::Result<Plan> {
        refuse::store_flags(store, informer, &output)?;
        let (informer, _) = informer_plan(&output, informer, store, watch_list, reflector)?;
        Ok(Plan {
            stack: StackPlan::new(&output, informer),
            output,
            compared: Vec::new(),
        })
    }

    /// The plan with `--compare`'s stacks (`stacks`; nothing changes without it): each resolved
    /// as [`resolve`](Plan::resolve) resolved the command line's flags (`informer`, `store`,
    /// `watch_list`, `reflector`), with the stack's terms over them. A list of one stack, a stack
    /// given twice or the same as another, and a stack that means nothing with the rest of the
    /// command line are refused ([`refuse::compare`]). `replay` passes `replay` true: a
    /// recording says how its initial list came.
    pub fn compare(
        mut self,
        stacks: Option<&Stacks>,
        informer: &InformerArgs,
        store: StoreKind,
        watch_list: Option<bool>,
        replay: bool,
        reflector: impl Fn(&Profile) -> ReflectorConfig,
    ) -> anyhow::Result<Plan> {
        let Some(Stacks(stacks)) = stacks else {
            return Ok(self);
        };
        refuse::compare(stacks, store, &self.output, replay)?;
        let mut profiles: Vec<(&str, Profile)> = Vec::new();
        for stack in stacks {
            let args = stack.informer_args(informer);
            refuse::queue_flags(&args).map_err(|error| refuse::in_stack(&stack.label, error))?;
            let (plan, profile) = informer_plan(
                &self.output,
                &args,
                store,
                stack.watch_list(watch_list),
                &reflector,
            )
            .map_err(|error| refuse::in_stack(&stack.label, error))?;
            let mut controllers = self.output.controllers.clone();
            for change in stack
                .controllers
                .iter()
                .copied()
                .map(ControllerChange::from)
            {
                controllers.iter_mut().for_each(|spec| change.apply(spec));
            }
            for (given, changed) in self.output.controllers.iter().zip(&controllers) {
                refuse::stack_runtime(&stack.label, given, changed)?;
            }
            let same = profiles
                .iter()
                .find(|(_, other)| same_informer(other, &profile));
            let same_controllers = |label: &str| {
                self.compared
                    .iter()
                    .find(|(l, _)| l.as_str() == label)
                    .is_some_and(|(_, plan)| plan.controllers == controllers)
            };
            if let Some((other, _)) = same.filter(|(label, _)| same_controllers(label)) {
                return refuse::same_stack(other, &stack.label);
            }
            profiles.push((&stack.label, profile));
            let plan = StackPlan {
                controllers,
                ..StackPlan::new(&self.output, plan)
            };
            self.compared.push((StackLabel(stack.label.clone()), plan));
        }
        if !replay {
            let first = &profiles[0];
            if let Some(other) =
                (profiles.iter()).find(|p| p.1.watch_list.value != first.1.watch_list.value)
            {
                return refuse::different_lists(first.0, other.0);
            }
        }
        Ok(self)
    }

    /// The stacks that run on each resource, in order, each with its label when compared.
    pub fn stacks(&self) -> Vec<(Option<&StackLabel>, &StackPlan)> {
        if self.compared.is_empty() {
            vec![(None, &self.stack)]
        } else {
            self.compared.iter().map(|(l, s)| (Some(l), s)).collect()
        }
    }

    /// With `--compare` live: every stack's Reflector draws its watch timeouts and backoff jitter
    /// from `seed`. The stacks share one watch (`cache::fan_out`), sent with the timeout the first
    /// to ask drew: alike in lock step, every stack draws that one, and says so.
    pub fn share_reflector_seed(&mut self, seed: u64) {
        for (_, stack) in &mut self.compared {
            stack.informer.reflector.seed.get_or_insert(seed);
        }
    }

    /// Every stack that runs, to adjust them all alike (a replay's recording decides some of
    /// their settings).
    pub fn stacks_mut(&mut self) -> Vec<&mut StackPlan> {
        if self.compared.is_empty() {
            vec![&mut self.stack]
        } else {
            self.compared.iter_mut().map(|(_, s)| s).collect()
        }
    }

    /// The `--query` and `--index` specs of the session, each with its flag.
    fn specs(&self) -> impl Iterator<Item = (&str, &IndexSpec)> {
        let queries = self.output.queries.iter().map(|q| ("--query", q.spec()));
        let indices = self.stack.informer.config.indices.iter();
        queries.chain(indices.map(|spec| ("--index", spec)))
    }

    /// [`refuse::secret_specs`] for the `--query` and `--index` specs of the session.
    pub fn refuse_secret_queries(
        &self,
        secrets: bool,
        show_secret_data: bool,
    ) -> anyhow::Result<()> {
        refuse::secret_specs(self.specs(), secrets, show_secret_data)
    }

    /// [`refuse::outside_metadata`] for the `--query` and `--index` specs of the session.
    pub fn refuse_outside_metadata_queries(&self, metadata_only: bool) -> anyhow::Result<()> {
        refuse::outside_metadata(self.specs(), metadata_only)
    }
}

/// The informer of the profile `informer` and `watch_list` resolve to, with its Reflector
/// configured by `reflector` and the `--index` specs parsed; and that profile.
fn informer_plan(
    output: &OutputPlan,
    informer: &InformerArgs,
    store: StoreKind,
    watch_list: Option<bool>,
    reflector: impl FnOnce(&Profile) -> ReflectorConfig,
) -> anyhow::Result<(InformerPlan, Profile)> {
    let profile = Profile::resolve(informer, watch_list)?;
    let reflector = reflector(&profile);
    let indices = refuse::index_specs(informer)?;
    let store = match store {
        StoreKind::Informer => Store::Informer,
        StoreKind::Undelta => Store::Undelta,
    };
    let plan = InformerPlan {
        store,
        config: profile.informer_config(&indices, Consumption::Thread),
        kind: output.informer,
        reflector,
        profile: profile.describe(),
        registration_synced: profile.has_registration_synced(),
        wait_scale: None,
    };
    Ok((plan, profile))
}

/// Two profiles build the same informer: the same version and every setting alike, whoever
/// chose it.
fn same_informer(a: &Profile, b: &Profile) -> bool {
    a.version == b.version
        && a.fifo.value == b.fifo.value
        && a.batch_pop.value == b.batch_pop.value
        && a.legacy_sync.value == b.legacy_sync.value
        && a.watch_list.value == b.watch_list.value
        && a.unlock_while_processing.value == b.unlock_while_processing.value
}
