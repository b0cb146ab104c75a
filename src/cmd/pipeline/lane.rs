//! A lane: one stack's informer, handlers and controllers on one resource's source, assembled
//! from a [`StackPlan`] by [`assemble`], and run by [`Lane::run`]. The session runs its lanes side
//! by side and concludes; a lane knows its place in the output only through its [`LaneOutput`].
//!
//! With `--store undelta` ([`undelta`](super::undelta)) a lane has no queue, no consumer, no
//! Indexer, no handlers and no controllers: its Reflector writes into an UndeltaStore, and each
//! push is written in the store call that made it.

use std::sync::{Arc, Mutex, OnceLock};

use kubectl_deltas::cache::reflector::Clock;
use kubectl_deltas::cache::triggers::{OwnerKind, Predicates};
use kubectl_deltas::cache::{
    ConsumerGroup, Consumption, Informer, InformerError, Reflector, ReflectorConfig,
};
use kubectl_deltas::source::{ListerWatcher, ResourceTarget};

use super::controller::{
    ControllerHandler, ControllerRun, ControllerTarget, InlineGroup, OwnedHandler,
};
use super::handler::ShownHandler;
use super::hooks::{Hooks, SourceEnd};
use super::kube_lane::KubeLane;
use super::output::LaneOutput;
use super::sink::InformerOutput;
use super::stop::Stop;
use super::{Ended, Source, undelta};
use crate::cmd::plan::{ControllerRuntime, ControllerSpec, StackPlan, Store};

/// What every lane of a session shares.
pub(super) struct Shared {
    /// The session's clock, for the handlers' and controllers' times.
    pub(super) clock: Arc<dyn Clock>,
    /// Numbers the pops of every informer of the session in one sequence.
    pub(super) group: Arc<ConsumerGroup>,
    /// Ends every wait of the session.
    pub(super) stop: Arc<Stop>,
    /// The controllers that own later lanes' objects.
    pub(super) owners: Owners,
    /// Lanes per resource: one per stack compared, else one. Lane `i` runs stack
    /// `i % stacks` on resource `i / stacks`.
    pub(super) stacks: usize,
}

/// The controllers of the session's first resource that own the objects of later ones
/// (`owns=`): each registered by the first lane, taken by the lane of each resource it owns
/// (lanes are assembled in order, the first first).
#[derive(Default)]
pub(super) struct Owners(Mutex<Vec<(usize, OwnerLink)>>);

/// One controller that owns a lane's objects.
pub(super) struct OwnerLink {
    /// The controller's name: the owned lane's handler for it is named so.
    name: String,
    /// Its type, which owner references must name.
    main: OwnerKind,
    /// Its predicates.
    predicates: Predicates,
    engine: OwnerEngine,
}

impl OwnerLink {
    fn is_kube(&self) -> bool {
        matches!(self.engine, OwnerEngine::Kube(..))
    }
}

/// What an owned object's event is handed to.
pub(super) enum OwnerEngine {
    /// A client-go controller: its queue, through a handler on the owned lane.
    ClientGo(Arc<ControllerRun>),
    /// A kube-runtime controller: member of that kube lane.
    Kube(Arc<KubeLane>, usize),
}

impl Owners {
    /// Controller `spec` of type `main` owns the resources its `owned` names, whose lanes of
    /// its own stack are `lane_of` each.
    fn register(
        &self,
        spec: &ControllerSpec,
        main: &OwnerKind,
        engine: OwnerEngine,
        lane_of: impl Fn(usize) -> usize,
    ) {
        let mut links = self.0.lock().unwrap_or_else(|e| e.into_inner());
        for lane in spec.owned.iter().map(|&resource| lane_of(resource)) {
            let engine = match &engine {
                OwnerEngine::ClientGo(run) => OwnerEngine::ClientGo(run.clone()),
                OwnerEngine::Kube(kube, member) => OwnerEngine::Kube(kube.clone(), *member),
            };
            links.push((
                lane,
                OwnerLink {
                    name: spec.name.clone(),
                    main: main.clone(),
                    predicates: spec.predicates.clone(),
                    engine,
                },
            ));
        }
    }

    /// The links to lane `index`, taken.
    fn take(&self, index: usize) -> Vec<OwnerLink> {
        let mut links = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let (taken, kept) = std::mem::take(&mut *links)
            .into_iter()
            .partition(|(lane, _)| *lane == index);
        *links = kept;
        taken.into_iter().map(|(_, link)| link).collect()
    }
}

/// One lane, assembled and not yet running.
pub(super) struct Lane<L> {
    /// Its informer; none for an UndeltaStore.
    pub(super) informer: Option<Arc<Informer>>,
    /// Its controllers, in registration order.
    pub(super) controllers: Vec<Arc<ControllerRun>>,
    runner: Runner<L>,
    /// How its Reflector lists and watches (an UndeltaStore's Reflector has it already).
    reflector: ReflectorConfig,
    /// Completes when the source has nothing more ([`Hooks::end`]).
    end: Option<SourceEnd>,
}

/// What runs a lane: an informer, or a Reflector feeding an UndeltaStore.
enum Runner<L> {
    Informer(Arc<Informer>, L),
    Store(Box<Reflector<L>>),
}

/// What a lane's run gave: its result, and how its source ended if it ran dry.
pub(super) type LaneOutcome = (
    Result<(), InformerError>,
    Option<Result<(), Box<dyn std::error::Error + Send + Sync>>>,
);

/// Lane of `stack` on `source`, writing through `lane`, on `clock`: its informer (or
/// UndeltaStore) and its first line, each handler, and each controller with its workers started.
/// Handlers are registered in order, each controller's handler after every `--handler`.
pub(super) fn assemble<L: ListerWatcher, C: Clock + Clone>(
    source: Source<L>,
    stack: &StackPlan,
    lane: LaneOutput,
    clock: &C,
    shared: &Shared,
) -> std::io::Result<Lane<L>> {
    let Hooks {
        end,
        observer,
        informer: slot,
        inline,
        counted,
    } = source.hooks;
    let plan = &stack.informer;
    let target = source.lister_watcher.describe();
    if plan.store == Store::Undelta {
        // No queue, no consumer: each store call pushes, and writes its push.
        let target = undelta::UndeltaResyncs {
            lane: lane.clone(),
            also: observer,
        };
        let reflector = undelta::reflector(
            source.lister_watcher,
            plan.reflector.clone(),
            lane,
            clock.clone(),
            target.clone(),
        );
        if let Some(slot) = slot {
            slot.fill(Arc::new(target));
        }
        return Ok(Lane {
            informer: None,
            controllers: Vec::new(),
            runner: Runner::Store(Box::new(reflector)),
            reflector: plan.reflector.clone(),
            end,
        });
    }
    // The controllers of this lane: a controller that owns resources (`owns=`) runs on the
    // first only, the others on every lane; and those of the first lane that own this one's.
    let index = lane.index();
    let specs: Vec<ControllerSpec> = (stack.controllers.iter())
        .filter(|c| index / shared.stacks == 0 || c.owned.is_empty())
        .cloned()
        .collect();
    let owners = shared.owners.take(index);
    // One translator of the Reflector's steps for every kube-runtime controller of the lane.
    let kube = (specs.iter().any(ControllerSpec::is_kube) || owners.iter().any(OwnerLink::is_kube))
        .then(|| KubeLane::new(lane.clone(), shared.clock.clone(), inline));
    let sink = Arc::new(InformerOutput {
        lane: lane.clone(),
        also: observer,
        wait_scale: plan.wait_scale,
        informer: OnceLock::new(),
        kube: kube.clone(),
    });
    let consumption = if inline {
        Consumption::Inline
    } else {
        Consumption::Thread
    };
    let mut config = plan.informer_config(consumption);
    // A source that holds its informer (a replay) ticks its resyncs on its own clock.
    config.external_resync = slot.is_some();
    let (queue, batch_pop) = (config.queue, config.batch_pop);
    let stop = &shared.stop;
    let informer = Informer::new(
        config,
        sink.clone(),
        shared.group.clone(),
        stop.token().clone(),
    );
    let _ = sink.informer.set(Arc::downgrade(&informer));
    if let Some(kube) = &kube {
        informer.tap_store(kube.clone());
    }
    let handler = |position: usize, delay| ShownHandler {
        out: lane.handler(position),
        delay,
        threaded: !inline,
        clock: shared.clock.clone(),
        registration_synced: plan.registration_synced,
    };
    for (position, spec) in stack.handlers.iter().enumerate() {
        informer.add_event_handler(
            spec.name.clone(),
            handler(position, spec.delay),
            spec.resync,
        );
    }
    let inline_group = inline.then(|| InlineGroup::new(lane.clone()));
    // Listeners are numbered in registration order: a kube controller registers none.
    let mut names: Vec<String> = stack.handlers.iter().map(|h| h.name.clone()).collect();
    let registering = Registering {
        informer: &informer,
        lane: &lane,
        shared,
        kube: kube.as_ref(),
        inline_group: inline_group.as_ref(),
        handler,
    };
    let controllers = registering.controllers(&specs, &main_kind(&target), &mut names)?;
    registering.owned(owners, &mut names);
    lane.handlers_started(&names, plan.registration_synced);
    lane.controllers_started(&specs);
    // A plain informer's handler works inside the pop, under the queue's lock; drained
    // on a replay's thread, it takes no time (the replay never waits for it).
    if let Some(delay) = stack.plain_handler_delay.filter(|_| !inline) {
        plain_handler(&informer, delay, shared);
    }
    lane.informer_started(queue, batch_pop, &plan.profile);
    if let Some(counted) = counted {
        counted.fill(informer.clone());
    }
    if let Some(slot) = slot {
        if controllers.is_empty() || !inline {
            slot.fill(informer.clone());
        } else {
            slot.fill(Arc::new(ControllerTarget {
                informer: informer.clone(),
                controllers: controllers.clone(),
            }));
        }
    }
    Ok(Lane {
        informer: Some(informer.clone()),
        controllers,
        runner: Runner::Informer(informer, source.lister_watcher),
        reflector: plan.reflector.clone(),
        end,
    })
}

/// What registering a lane's controllers needs.
struct Registering<'a, H> {
    informer: &'a Arc<Informer>,
    lane: &'a LaneOutput,
    shared: &'a Shared,
    kube: Option<&'a Arc<KubeLane>>,
    inline_group: Option<&'a Arc<InlineGroup>>,
    /// The shown handler at a listener position.
    handler: H,
}

impl<H: Fn(usize, Option<std::time::Duration>) -> ShownHandler> Registering<'_, H> {
    /// The lane of this lane's stack on resource `resource`.
    fn lane_of(&self) -> impl Fn(usize) -> usize + use<H> {
        let stacks = self.shared.stacks;
        let stack = self.lane.index() % stacks;
        move |resource| resource * stacks + stack
    }

    /// Each controller of `specs` (of type `main`) with its workers started: a client-go one
    /// registered as a handler after those `names` has (its name added), a kube one a member of
    /// the lane's kube lane; each that owns later lanes' objects told to [`Owners`].
    fn controllers(
        &self,
        specs: &[ControllerSpec],
        main: &OwnerKind,
        names: &mut Vec<String>,
    ) -> std::io::Result<Vec<Arc<ControllerRun>>> {
        let (informer, shared) = (self.informer, self.shared);
        let mut controllers = Vec::new();
        for (position, spec) in specs.iter().enumerate() {
            let out = self.lane.controller(position);
            let run = match (spec.runtime, self.kube) {
                (ControllerRuntime::ClientGo { queue }, _) => {
                    let run = ControllerRun::new(
                        spec,
                        queue,
                        out,
                        shared.clock.clone(),
                        informer.indexer().clone(),
                        self.inline_group,
                    );
                    let controller = ControllerHandler {
                        shown: (self.handler)(names.len(), None),
                        run: run.clone(),
                        predicates: spec.predicates.clone(),
                    };
                    names.push(spec.name.clone());
                    informer.add_event_handler(spec.name.clone(), controller, spec.resync);
                    let engine = OwnerEngine::ClientGo(run.clone());
                    shared.owners.register(spec, main, engine, self.lane_of());
                    run
                }
                (
                    ControllerRuntime::Kube {
                        debounce,
                        error_requeue,
                    },
                    Some(kube),
                ) => {
                    let timing = (debounce, error_requeue);
                    let member = kube.add(spec, timing, out.clone(), main.clone());
                    let engine = OwnerEngine::Kube(kube.clone(), member);
                    shared.owners.register(spec, main, engine, self.lane_of());
                    ControllerRun::kube(kube.clone(), member, out, shared.clock.clone(), &spec.name)
                }
                (ControllerRuntime::Kube { .. }, None) => continue,
            };
            run.start(spec.workers)?;
            controllers.push(run);
        }
        Ok(controllers)
    }

    /// The controllers of the first lane that own this lane's objects: a handler for each
    /// client-go one (its name added to `names`), the kube lane's owners for each kube one.
    fn owned(&self, owners: Vec<OwnerLink>, names: &mut Vec<String>) {
        for link in owners {
            match link.engine {
                OwnerEngine::ClientGo(run) => {
                    let owned = OwnedHandler {
                        shown: (self.handler)(names.len(), None),
                        run,
                        predicates: link.predicates,
                        main: link.main,
                        resource: self.lane.resource_name().to_owned(),
                    };
                    names.push(link.name.clone());
                    self.informer.add_event_handler(link.name, owned, None);
                }
                OwnerEngine::Kube(owner, member) => {
                    if let Some(kube) = self.kube {
                        kube.add_owner(owner, member);
                    }
                }
            }
        }
    }
}

/// A plain informer's one handler, taking `delay` of the session's clock per call: client-go's
/// `newInformer` calls its handler once per delta (`processDeltas`).
fn plain_handler(informer: &Informer, delay: std::time::Duration, shared: &Shared) {
    let (stop, delay) = (shared.stop.clone(), shared.clock.in_real_time(delay));
    informer.handle_in_pop(Arc::new(move |notifications| {
        for _ in notifications {
            if stop.requested() {
                return;
            }
            stop.sleep(delay);
        }
    }));
}

/// The type a controller of `target` reconciles, as owner references name it.
fn main_kind(target: &ResourceTarget) -> OwnerKind {
    let ar = &target.api_resource;
    OwnerKind {
        api_version: ar.api_version.clone(),
        kind: ar.kind.clone(),
        // The target does not say whether the type is namespaced; a namespace given, or
        // objects in one, make it so, and only a cluster-scoped owner of namespaced children
        // (rare for a controller's own type) would be named differently.
        namespaced: true,
    }
}

impl<L: ListerWatcher> Lane<L> {
    /// Runs the lane until its source runs dry or the session stops; a failure stops the session.
    pub(super) async fn run<C: Clock + Clone>(self, clock: C, stop: Arc<Stop>) -> LaneOutcome {
        // Set when the source ran dry (rather than the session being stopped).
        let mut ran_dry = None;
        let end = self.end;
        let until = async {
            match end {
                Some(end) => ran_dry = Some(end.await),
                None => std::future::pending().await,
            }
        };
        let result = match self.runner {
            Runner::Informer(informer, lister_watcher) => {
                informer
                    .run(lister_watcher, self.reflector, clock, until)
                    .await
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
}
