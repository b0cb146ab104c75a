//! What both runtimes' controllers share of a `--controller` spec: the result a reconcile
//! returns, and the wall time of a reconcile's instant.

use std::time::{Instant, SystemTime};

use hashbrown::HashMap;
use kubectl_deltas::cache::reflector::Clock;
use kubectl_deltas::cache::workqueue::ReconcileResult;

use crate::cmd::plan::ControllerSpec;

/// What a reconcile of `key` returns by `spec` (in either runtime): an error for the first
/// `fail` of each key matching `fail-keys` (`failed` counts them), else success, with its
/// `requeue-after` if given.
pub(super) fn spec_result(
    spec: &ControllerSpec,
    failed: &mut HashMap<String, u32>,
    key: &str,
) -> ReconcileResult {
    let fails = spec.fail > 0 && spec.fail_keys.as_ref().is_none_or(|glob| glob.matches(key));
    if fails {
        let failed = failed.entry_ref(key).or_insert(0);
        if *failed < spec.fail {
            *failed += 1;
            return ReconcileResult::Error;
        }
    }
    match spec.requeue_after {
        Some(after) => ReconcileResult::RequeueAfter(after),
        None => ReconcileResult::Ok,
    }
}

/// The wall time of `at`, an instant of `clock` (a reconcile may end later than the clock's now:
/// the workers run ahead to the next recorded line).
pub(super) fn wall(clock: &dyn Clock, at: Instant) -> SystemTime {
    let (now, wall) = (clock.now(), clock.wall());
    match at.checked_duration_since(now) {
        Some(ahead) => wall + ahead,
        None => wall - now.duration_since(at),
    }
}
