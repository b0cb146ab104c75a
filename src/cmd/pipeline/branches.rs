//! One source read by several lanes (`--compare`'s stacks): its [`ListerWatcher`] fanned out
//! ([`fan_out`]: one list and one watch against the source, every lane's Reflector answered
//! alike, in lock step), and its [`Hooks`] shared: each lane ends when the source ends, a
//! replay's turns and resyncs go to every lane's informer in lane order ([`ReplayTargets`]), after
//! which the output writes the lanes' rows of the turn side by side, and what only one reader may
//! have (`record`'s observer and counter) goes to the first lane.

use std::sync::Arc;

use futures_util::FutureExt as _;
use kubectl_deltas::cache::fan_out::{FanOut, fan_out};
use kubectl_deltas::source::ListerWatcher;
use kubectl_deltas::source::recording::{InformerSlot, ReplayTargets};

use super::Source;
use super::hooks::{Hooks, SourceEnd};

/// `source` as `lanes` sources, one per lane, in lane order. With one lane, the source as it is
/// (its calls go straight through). A replay calls `turn_over` once every lane has taken its turn.
pub(super) fn branches<L: ListerWatcher>(
    source: Source<L>,
    lanes: usize,
    turn_over: impl Fn() + Send + Sync + 'static,
) -> Vec<Source<FanOut<L>>> {
    let Source {
        name,
        lister_watcher,
        hooks,
    } = source;
    let mut lister_watchers = fan_out(lister_watcher, lanes);
    if lister_watchers.len() == 1 {
        let lister_watcher = lister_watchers.remove(0);
        return vec![Source {
            name,
            lister_watcher,
            hooks,
        }];
    }
    let Hooks {
        end,
        observer,
        informer,
        inline,
        counted,
    } = hooks;
    // The source's end, told to every lane; its error (a bad line) is said once, by the session.
    let end = end.map(|end| end.map(|ended| ended.map_err(|e| e.to_string())).shared());
    let slots: Vec<Arc<InformerSlot>> = (0..lanes).map(|_| Arc::default()).collect();
    let held = informer.is_some();
    if let Some(informer) = informer {
        informer.fill(Arc::new(ReplayTargets(slots.clone(), Box::new(turn_over))));
    }
    lister_watchers
        .into_iter()
        .zip(slots)
        .enumerate()
        .map(|(lane, (lister_watcher, slot))| Source {
            name: name.clone(),
            lister_watcher,
            hooks: Hooks {
                end: end.clone().map(|end| -> SourceEnd {
                    Box::pin(end.map(|ended| ended.map_err(Into::into)))
                }),
                observer: observer.clone().filter(|_| lane == 0),
                informer: held.then_some(slot),
                inline,
                counted: counted.clone().filter(|_| lane == 0),
            },
        })
        .collect()
}
