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
        .map(|delta| {
            let key = delta.key().unwrap_or_else(|| "*".to_owned());
            let kind = delta.type_.as_str().to_owned();
            let tombstone = delta.object.is_tombstone();
            let mut text = format!("{kind} {key}");
            if tombstone {
                text.push_str(" (tombstone)");
            }
            Call {
                text,
                key,
                kind,
                tombstone,
                is_sync: false,
                resource_version: delta_resource_version(delta).map(str::to_owned),
                result: None,
                pop: batch.seq,
                time: batch.time,
            }
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
    let key = view.notification.key();
    let mut text = format!("{kind} {key}");
    if view.is_sync {
        text = format!("{kind} (resync) {key}");
    }
    if tombstone {
        text.push_str(" (tombstone)");
    }
    Call {
        text,
        key,
        kind: kind.to_owned(),
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
    let key = view.start.key.to_owned();
    let read = view.start.resource_version.map(str::to_owned);
    let text = format!(
        "reconcile {key} (read {}) {}",
        read.as_deref().map_or("nothing: gone", |rv| rv),
        view.result_name()
    );
    Call {
        text,
        key,
        kind: "reconcile".to_owned(),
        tombstone: false,
        is_sync: false,
        resource_version: read,
        result: Some(view.result_name().to_owned()),
        pop: 0,
        time: view.start.started_at,
    }
}
