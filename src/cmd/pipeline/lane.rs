//! A lane: one stack's informer, handlers and controllers on one resource's source, assembled
//! from a [`StackPlan`] by [`assemble`], and run by [`Lane::run`]. The session runs its lanes side
//! by side and concludes; a lane knows its place in the output only through its [`LaneOutput`].
//!
//! With `--store undelta` ([`undelta`](super::undelta)) a lane has no queue, no consumer, no
//! Indexer, no handlers and no controllers: its Reflector writes into an UndeltaStore, and each
//! push is written in the store call that made it.

use std::sync::{Arc, OnceLock};

use kubectl_deltas::cache::reflector::Clock;
use kubectl_deltas::cache::triggers::OwnerKind;
use kubectl_deltas::cache::{
    ConsumerGroup, Consumption, Informer, InformerError, Reflector, ReflectorConfig,
};
use kubectl_deltas::source::{ListerWatcher, ResourceTarget};

use super::controller::{ControllerHandler, ControllerRun, ControllerTarget, InlineGroup};
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
    // One translator of the Reflector's steps for every kube-runtime controller of the lane.
    let kube = (stack.controllers.iter().any(ControllerSpec::is_kube))
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
    let mut controllers = Vec::new();
    let inline_group = inline.then(|| InlineGroup::new(lane.clone()));
    // Listeners are numbered in registration order: a kube controller registers none.
    let mut listeners = stack.handlers.len();
    let mut names: Vec<String> = stack.handlers.iter().map(|h| h.name.clone()).collect();
    for (position, spec) in stack.controllers.iter().enumerate() {
        let out = lane.controller(position);
        let run = match (spec.runtime, &kube) {
            (ControllerRuntime::ClientGo { queue }, _) => {
                let run = ControllerRun::new(
                    spec,
                    queue,
                    out,
                    shared.clock.clone(),
                    informer.indexer().clone(),
                    inline_group.as_ref(),
                );
                let shown = handler(listeners, None);
                listeners += 1;
                names.push(spec.name.clone());
                let controller = ControllerHandler {
                    shown,
                    run: run.clone(),
                    predicates: spec.predicates.clone(),
                };
                informer.add_event_handler(spec.name.clone(), controller, spec.resync);
                run
            }
            (ControllerRuntime::Kube { .. }, Some(kube)) => {
                let member = kube.add(spec, out.clone(), main_kind(&target));
                ControllerRun::kube(kube.clone(), member, out, shared.clock.clone(), &spec.name)
            }
            (ControllerRuntime::Kube { .. }, None) => continue,
        };
        run.start(spec.workers)?;
        controllers.push(run);
    }
    lane.handlers_started(&names, plan.registration_synced);
    lane.controllers_started(&stack.controllers);
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
