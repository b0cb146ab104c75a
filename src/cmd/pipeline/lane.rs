//! A lane: one stack's informer, handlers and controllers on one resource's source, assembled
//! from a [`StackPlan`] by [`assemble`], and run by [`Lane::run`]. The session runs its lanes side
//! by side and concludes; a lane knows its place in the output only through its [`LaneOutput`].
//!
//! With `--store undelta` ([`undelta`](super::undelta)) a lane has no queue, no consumer, no
//! Indexer, no handlers and no controllers: its Reflector writes into an UndeltaStore, and each
//! push is written in the store call that made it.

use std::sync::{Arc, OnceLock};

use kubectl_deltas::cache::reflector::Clock;
use kubectl_deltas::cache::{
    ConsumerGroup, Consumption, Informer, InformerError, Reflector, ReflectorConfig,
};
use kubectl_deltas::source::ListerWatcher;

use super::controller::{ControllerHandler, ControllerRun, ControllerTarget, InlineGroup};
use super::handler::ShownHandler;
use super::hooks::{Hooks, SourceEnd};
use super::output::LaneOutput;
use super::sink::InformerOutput;
use super::stop::Stop;
use super::{Ended, Source, undelta};
use crate::cmd::plan::{StackPlan, Store};

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
    let sink = Arc::new(InformerOutput {
        lane: lane.clone(),
        also: observer,
        wait_scale: plan.wait_scale,
        informer: OnceLock::new(),
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
    for (position, spec) in stack.controllers.iter().enumerate() {
        let run = ControllerRun::new(
            spec,
            lane.controller(position),
            shared.clock.clone(),
            informer.indexer().clone(),
            inline_group.as_ref(),
        );
        run.start(spec.workers)?;
        let shown = handler(stack.handlers.len() + position, None);
        let controller = ControllerHandler {
            shown,
            run: run.clone(),
        };
        informer.add_event_handler(spec.name.clone(), controller, spec.resync);
        controllers.push(run);
    }
    let names: Vec<String> = (stack.handlers.iter().map(|h| h.name.clone()))
        .chain(stack.controllers.iter().map(|c| c.name.clone()))
        .collect();
    lane.handlers_started(&names, plan.registration_synced);
    lane.controllers_started(&stack.controllers);
    // A plain informer's handler works inside the pop, under the queue's lock; drained
    // on a replay's thread, it takes no time (the replay never waits for it).
    if let Some(delay) = stack.plain_handler_delay.filter(|_| !inline) {
        let (stop, delay) = (stop.clone(), shared.clock.in_real_time(delay));
        // client-go's `newInformer` calls its handler once per delta (`processDeltas`).
        informer.handle_in_pop(Arc::new(move |notifications| {
            for _ in notifications {
                if stop.requested() {
                    return;
                }
                stop.sleep(delay);
            }
        }));
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
