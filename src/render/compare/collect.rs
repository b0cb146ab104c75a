//! The calls a stack made, taken from the views its rows are written from: each delta of a pop,
//! each handler call, each reconcile.

use crate::Object;
use crate::cache::{Batch, Notification};

use super::Call;
use crate::render::reconcile::ReconcileView;
use crate::render::{NotificationView, delta_resource_version};

/// Each delta of `batch`, in order, as a call of the pops.
pub fn pop_calls(batch: &Batch<Object>) -> Vec<Call> {
    batch
        .deltas
        .iter()
        .map(|delta| Call {
            key: delta.key().unwrap_or_else(|| "*".to_owned()),
            kind: delta.type_.as_str(),
            tombstone: delta.object.is_tombstone(),
            is_sync: false,
            resource_version: delta_resource_version(delta).map(str::to_owned),
            result: None,
            pop: batch.seq,
            time: batch.time,
        })
        .collect()
}

/// A handler's call: `OnDelete demo/worker-2 (tombstone)`.
pub fn notification_call(view: &NotificationView<'_>) -> Call {
    let rv = |obj: &Object| obj.resource_version().map(str::to_owned);
    let (kind, tombstone, resource_version) = match view.notification {
        Notification::Add {
            obj,
            is_in_initial_list,
        } => {
            let kind = if *is_in_initial_list {
                "OnAdd (initial)"
            } else {
                "OnAdd"
            };
            (kind, false, rv(obj))
        }
        // The state it replaced as well: a handler compares old and new.
        Notification::Update { old, new } => (
            "OnUpdate",
            false,
            Some(format!(
                "{}→{}",
                rv(old).unwrap_or_default(),
                rv(new).unwrap_or_default()
            )),
        ),
        Notification::Delete { obj } => (
            "OnDelete",
            obj.is_tombstone(),
            obj.object().and_then(|o| rv(o)),
        ),
    };
    Call {
        key: view.notification.key(),
        kind,
        tombstone,
        is_sync: view.is_sync,
        resource_version,
        result: None,
        pop: view.seq,
        time: view.time,
    }
}

/// A reconcile: its key, the resourceVersion it read, its result, when it started.
pub fn reconcile_call(view: &ReconcileView<'_>) -> Call {
    Call {
        key: view.start.key.to_owned(),
        kind: "reconcile",
        tombstone: false,
        is_sync: false,
        resource_version: view.start.resource_version.map(str::to_owned),
        result: Some(view.result_name()),
        pop: 0,
        time: view.start.started_at,
    }
}
