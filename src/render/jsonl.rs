//! JSON lines, schema v1 (docs/jsonl.md): one object per line, flushed per line, for scripts.

use std::borrow::Cow;
use std::io::{self, Write};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::object::{ObjectMode, ObjectView};
use super::profile::{InformerProfile, SettingValue};
use super::{
    BatchView, Event, EventView, NotificationView, PushView, Renderer, delta_resource_version,
    millis, rfc3339_micros, whole_list_objects,
};
use crate::cache::reflector::{RelistCause, WatchEndReason};
use crate::cache::{Batch, Delta, DeltaType, Notification, QueueKind, ReflectorEventKind};
use crate::object::{Object, Writer, writers_since};
use crate::timestamp::Rfc3339;

/// Writes batches and reflector events as JSON lines.
#[derive(Debug)]
pub struct JsonLines<W> {
    out: W,
    object_mode: ObjectMode,
    show_secret_data: bool,
    /// One line is assembled here and written with a single call.
    line: Vec<u8>,
    /// The informers run an UndeltaStore (told by their `UndeltaStarted`): `synced` counts
    /// pushes.
    pushes: bool,
    /// `--compare`: the stack of the records that follow, each record's first field.
    stack: Option<Vec<u8>>,
}

/// A batch as the machine-readable outputs carry it (`-o jsonl`, `-o json`, `-o yaml`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BatchRecord<'a> {
    kind: &'static str,
    seq: u64,
    time: Rfc3339,
    resource: &'a str,
    /// `null` for a batch of several keys (`--batch-pop`) or a whole-list delta (`--fifo atomic`).
    key: Option<&'a str>,
    initial: bool,
    queue_depth: usize,
    wait_ms: f64,
    deltas: Vec<DeltaRecord<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DeltaRecord<'a> {
    #[serde(rename = "type")]
    type_: &'static str,
    /// The delta's own key; `null` for a whole-list delta.
    key: Option<Cow<'a, str>>,
    tombstone: bool,
    resource_version: Option<&'a str>,
    /// Whole-list deltas only: how many objects they concern.
    #[serde(skip_serializing_if = "Option::is_none")]
    objects: Option<usize>,
    /// Absent with `--object none` and for whole-list deltas (their objects are counted, not
    /// repeated: a relist of 50,000 objects would be one line of hundreds of megabytes).
    #[serde(skip_serializing_if = "Option::is_none")]
    object: Option<Option<ObjectView<'a>>>,
    /// Who wrote the change of an update, as managedFields say (docs/jsonl.md).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    manager: Vec<Writer>,
}

impl<'a> BatchRecord<'a> {
    /// The record of a batch; `compact_json` when it is written by serde_json's compact writer
    /// ([`ObjectView::compact_json`]).
    pub(crate) fn new(
        view: &BatchView<'a>,
        mode: ObjectMode,
        show_secret_data: bool,
        compact_json: bool,
    ) -> Self {
        let batch = view.batch;
        BatchRecord {
            kind: "batch",
            seq: batch.seq,
            time: Rfc3339::micros(view.time),
            resource: view.resource,
            key: batch.key.as_deref(),
            initial: batch.is_in_initial_list,
            queue_depth: batch.queue_len,
            wait_ms: millis(batch.waited()),
            deltas: batch
                .deltas
                .iter()
                .map(|d| DeltaRecord::new(batch, d, mode, show_secret_data, compact_json))
                .collect(),
        }
    }
}

impl<'a> DeltaRecord<'a> {
    fn new(
        batch: &'a Batch<Object>,
        delta: &'a Delta<Object>,
        mode: ObjectMode,
        show_secret_data: bool,
        compact_json: bool,
    ) -> Self {
        let objects = whole_list_objects(batch, delta);
        let key = match (objects, batch.key.as_deref()) {
            (Some(_), _) => None,
            // Every delta of a keyed batch has the batch's key.
            (None, Some(key)) => Some(Cow::Borrowed(key)),
            (None, None) => delta.key().map(Cow::Owned),
        };
        let object = match (mode, objects, delta.object.object()) {
            (ObjectMode::None, ..) | (_, Some(_), _) => None,
            // A tombstone without a last known state has a null object, not an absent one.
            (_, None, None) => Some(None),
            (mode, None, Some(obj)) => {
                Some(ObjectView::new(obj, mode, show_secret_data).map(|view| {
                    if compact_json {
                        view.compact_json()
                    } else {
                        view
                    }
                }))
            }
        };
        DeltaRecord {
            type_: delta.type_.as_str(),
            key,
            tombstone: delta.object.is_tombstone(),
            resource_version: delta_resource_version(delta),
            objects,
            object,
            manager: delta_writers(batch, delta),
        }
    }
}

/// Who wrote `delta`'s object, when applying it updated an object the cache held: the newest
/// managedFields entries of its object that the state it replaced did not have.
fn delta_writers(batch: &Batch<Object>, delta: &Delta<Object>) -> Vec<Writer> {
    let Some(obj) = delta.object.object() else {
        return Vec::new();
    };
    batch
        .notifications
        .iter()
        .find_map(|n| match n {
            Notification::Update { old, new } if Arc::ptr_eq(new, obj) => {
                Some(writers_since(Some(old), new))
            }
            _ => None,
        })
        .unwrap_or_default()
}

/// One key a whole-list delta (`ReplacedAll`, `SyncAll`) touched, as the machine-readable outputs
/// carry it (`"kind":"item"`, docs/jsonl.md): written right after the line of its batch, one per
/// handler call the delta made, in their order, so that what a per-object queue says per key
/// (`Replaced`, `Deleted` with a tombstone, `Sync`) is said per key by an atomic queue too.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ItemRecord<'a> {
    kind: &'static str,
    seq: u64,
    time: Rfc3339,
    resource: &'a str,
    initial: bool,
    /// The whole-list delta it belongs to: `ReplacedAll` or `SyncAll`.
    whole_list: &'static str,
    /// The delta a per-object queue would have queued for this key: `Replaced` (listed),
    /// `Deleted` (not listed: a tombstone) or `Sync` (re-delivered by a resync).
    #[serde(rename = "type")]
    type_: &'static str,
    /// What it did to the cache: `added`, `updated`, `unchanged` (the same resourceVersion, as
    /// every `SyncAll` item) or `deleted`.
    change: &'static str,
    key: String,
    tombstone: bool,
    resource_version: Option<&'a str>,
    /// As a batch's `deltas[].object`.
    #[serde(skip_serializing_if = "Option::is_none")]
    object: Option<Option<ObjectView<'a>>>,
}

impl<'a> ItemRecord<'a> {
    /// The items of `view`'s batch: none unless it is a `ReplacedAll` or a `SyncAll` (a whole-list
    /// delta is always popped alone, so the batch's handler calls are all its own).
    pub(crate) fn of_batch(
        view: &BatchView<'a>,
        mode: ObjectMode,
        show_secret_data: bool,
        compact_json: bool,
    ) -> Vec<Self> {
        let batch = view.batch;
        let whole_list = match batch.deltas.iter().next().map(|d| d.type_) {
            Some(type_ @ (DeltaType::ReplacedAll | DeltaType::SyncAll)) => type_,
            _ => return Vec::new(),
        };
        let object = |obj: Option<&'a Object>| match (mode, obj) {
            (ObjectMode::None, _) => None,
            (_, None) => Some(None),
            (mode, Some(obj)) => Some(ObjectView::new(obj, mode, show_secret_data).map(|view| {
                if compact_json {
                    view.compact_json()
                } else {
                    view
                }
            })),
        };
        batch
            .notifications
            .iter()
            .map(|notification| {
                let (change, obj, tombstone) = match notification {
                    Notification::Add { obj, .. } => ("added", Some(&**obj), false),
                    Notification::Update { old, new } => {
                        let change = if old.resource_version() == new.resource_version() {
                            "unchanged"
                        } else {
                            "updated"
                        };
                        (change, Some(&**new), false)
                    }
                    Notification::Delete { obj } => {
                        ("deleted", obj.object().map(|o| &**o), obj.is_tombstone())
                    }
                };
                let type_ = match (whole_list, change) {
                    (_, "deleted") => DeltaType::Deleted,
                    (DeltaType::SyncAll, _) => DeltaType::Sync,
                    _ => DeltaType::Replaced,
                };
                ItemRecord {
                    kind: "item",
                    seq: batch.seq,
                    time: Rfc3339::micros(view.time),
                    resource: view.resource,
                    initial: batch.is_in_initial_list,
                    whole_list: whole_list.as_str(),
                    type_: type_.as_str(),
                    change,
                    key: notification.key(),
                    tombstone,
                    resource_version: obj.and_then(Object::resource_version),
                    object: object(obj),
                }
            })
            .collect()
    }
}

/// A push of an UndeltaStore as the machine-readable outputs carry it (`--store undelta`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PushRecord<'a> {
    kind: &'static str,
    seq: u64,
    time: Rfc3339,
    resource: &'a str,
    initial: bool,
    call: &'static str,
    key: Option<&'a str>,
    resource_version: Option<&'a str>,
    size: usize,
    added: &'a [String],
    removed: &'a [String],
    changed: &'a [String],
    /// Absent with `--object none`.
    #[serde(skip_serializing_if = "Option::is_none")]
    objects: Option<Vec<ObjectView<'a>>>,
}

impl<'a> PushRecord<'a> {
    /// The record of a push; `compact_json` as for [`BatchRecord::new`].
    pub(crate) fn new(
        view: &PushView<'a>,
        mode: ObjectMode,
        show_secret_data: bool,
        compact_json: bool,
    ) -> Self {
        let push = view.push;
        let objects = (mode != ObjectMode::None).then(|| {
            push.objects
                .iter()
                .filter_map(|obj| {
                    ObjectView::new(obj, mode, show_secret_data).map(|view| {
                        if compact_json {
                            view.compact_json()
                        } else {
                            view
                        }
                    })
                })
                .collect()
        });
        PushRecord {
            kind: "push",
            seq: push.seq,
            time: Rfc3339::micros(view.time),
            resource: view.resource,
            initial: push.initial,
            call: push.call.as_str(),
            key: push.key.as_deref(),
            resource_version: push.resource_version.as_deref(),
            size: push.objects.len(),
            added: &push.added,
            removed: &push.removed,
            changed: &push.changed,
            objects,
        }
    }
}

impl<W: Write> JsonLines<W> {
    /// A writer over `out`.
    pub fn new(out: W, object_mode: ObjectMode, show_secret_data: bool) -> Self {
        JsonLines {
            out,
            object_mode,
            show_secret_data,
            line: Vec::with_capacity(1024),
            pushes: false,
            stack: None,
        }
    }

    /// Writes any serializable value as one line and flushes.
    pub fn write_line(&mut self, line: &impl Serialize) -> io::Result<()> {
        self.line.clear();
        serde_json::to_writer(&mut self.line, line).map_err(io::Error::from)?;
        self.stack_field(0);
        self.line.push(b'\n');
        self.out.write_all(&self.line)?;
        self.out.flush()
    }

    /// The item lines of a whole-list batch, written in writes of about 64 KiB rather than one per
    /// line: a relist of 50,000 objects is as many lines.
    fn write_items(&mut self, view: &BatchView<'_>) -> io::Result<()> {
        const CHUNK: usize = 64 * 1024;
        let items = ItemRecord::of_batch(view, self.object_mode, self.show_secret_data, true);
        if items.is_empty() {
            return Ok(());
        }
        self.line.clear();
        for item in &items {
            let start = self.line.len();
            serde_json::to_writer(&mut self.line, item).map_err(io::Error::from)?;
            self.stack_field(start);
            self.line.push(b'\n');
            if self.line.len() >= CHUNK {
                self.out.write_all(&self.line)?;
                self.line.clear();
            }
        }
        self.out.write_all(&self.line)?;
        self.out.flush()
    }

    /// The underlying writer.
    pub fn into_inner(self) -> W {
        self.out
    }

    /// Puts `"stack":…,` first in the record that starts at `start` of the line, when comparing.
    fn stack_field(&mut self, start: usize) {
        if let Some(field) = &self.stack
            && self.line.get(start) == Some(&b'{')
        {
            self.line
                .splice(start + 1..start + 1, field.iter().copied());
        }
    }
}

impl<W: Write + Send> Renderer for JsonLines<W> {
    /// `{"kind":"difference",…}` for every difference, then `{"kind":"verdict",…}` for every
    /// handler and controller (docs/jsonl.md).
    fn comparison(&mut self, comparisons: &[super::compare::SubjectComparison]) -> io::Result<()> {
        use super::compare::records::{DifferenceRecord, VerdictRecord};
        for comparison in comparisons {
            for difference in &comparison.differences {
                self.write_line(&DifferenceRecord::new(comparison, difference))?;
            }
        }
        for comparison in comparisons {
            self.write_line(&VerdictRecord::new(comparison))?;
        }
        Ok(())
    }

    /// Every record that follows starts with `"stack":"1.32"`.
    fn stack(&mut self, stack: Option<&str>) {
        self.stack = stack.map(|stack| {
            let mut field = b"\"stack\":".to_vec();
            serde_json::to_writer(&mut field, stack).expect("a string serializes");
            field.push(b',');
            field
        });
    }

    fn batch(&mut self, view: &BatchView<'_>) -> io::Result<()> {
        let record = BatchRecord::new(view, self.object_mode, self.show_secret_data, true);
        self.write_line(&record)?;
        self.write_items(view)
    }

    /// `{"kind":"reflector","time":…,"resource":…,"event":…, …fields}`.
    fn event(&mut self, view: &EventView<'_>) -> io::Result<()> {
        if let Event::UndeltaStarted = view.event {
            self.pushes = true;
        }
        let line = event_line(view, self.pushes);
        self.write_line(&line)
    }

    fn push(&mut self, view: &PushView<'_>) -> io::Result<()> {
        let record = PushRecord::new(view, self.object_mode, self.show_secret_data, true);
        self.write_line(&record)
    }
    /// `{"kind":"notification","time":…,"resource":…,"handler":…,"seq":…,"type":…, …}`.
    fn notification(&mut self, view: &NotificationView<'_>) -> io::Result<()> {
        let record = NotificationRecord::new(view);
        self.write_line(&record)
    }

    fn reconcile(&mut self, view: &super::reconcile::ReconcileView<'_>) -> io::Result<()> {
        self.write_line(&super::reconcile::ReconcileRecord::new(view))
    }

    fn controller_note(&mut self, note: &super::reconcile::ControllerNote<'_>) -> io::Result<()> {
        self.write_line(&super::reconcile::NoteRecord::new(note))
    }

    /// `{"kind":"ended","time":…,"resource":…,"reflector":…,"controllers":[…]}`, one per
    /// resource that left something unfinished.
    fn ended(&mut self, end: &super::ending::SessionEnd<'_>) -> io::Result<()> {
        for resource in end.resources.iter().filter(|r| r.is_unfinished()) {
            self.write_line(&super::ending::EndedRecord::new(end.time, resource))?;
        }
        Ok(())
    }
}

/// A handler's notification (docs/jsonl.md).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NotificationRecord<'a> {
    kind: &'static str,
    time: String,
    resource: &'a str,
    handler: &'a str,
    /// The pop it came from; 0 for none.
    seq: u64,
    #[serde(rename = "type")]
    type_: &'static str,
    is_sync: bool,
    is_in_initial_list: bool,
    key: String,
    old_resource_version: Option<&'a str>,
    new_resource_version: Option<&'a str>,
    tombstone: bool,
    delivered: bool,
    /// Delivered only: notifications still buffered for the handler when its call began.
    #[serde(skip_serializing_if = "Option::is_none")]
    buffer_depth: Option<usize>,
    /// Delivered only: how long it waited in the buffer.
    #[serde(skip_serializing_if = "Option::is_none")]
    wait_ms: Option<f64>,
}

impl<'a> NotificationRecord<'a> {
    pub(crate) fn new(view: &NotificationView<'a>) -> Self {
        let rv = |obj: &'a Object| obj.resource_version();
        let (type_, initial, old, new, tombstone) = match view.notification {
            Notification::Add {
                obj,
                is_in_initial_list,
            } => ("add", *is_in_initial_list, None, rv(obj), false),
            Notification::Update { old, new } => ("update", false, rv(old), rv(new), false),
            Notification::Delete { obj } => (
                "delete",
                false,
                obj.object().and_then(|o| rv(o)),
                None,
                obj.is_tombstone(),
            ),
        };
        let key = view.notification.key();
        NotificationRecord {
            kind: "notification",
            time: rfc3339_micros(view.time),
            resource: view.resource,
            handler: view.handler,
            seq: view.seq,
            type_,
            is_sync: view.is_sync,
            is_in_initial_list: initial,
            key,
            old_resource_version: old,
            new_resource_version: new,
            tombstone,
            delivered: view.delivered.is_some(),
            buffer_depth: view.delivered.map(|d| d.buffer_depth),
            wait_ms: view.delivered.map(|d| millis(d.waited)),
        }
    }
}

/// A reflector line: the common fields first, then the event's own.
#[derive(Serialize)]
pub(crate) struct EventLine<'a> {
    kind: &'static str,
    time: String,
    resource: &'a str,
    event: &'static str,
    #[serde(flatten)]
    fields: serde_json::Map<String, Value>,
}

/// The reflector line of an event; `pushes` when the informers run an UndeltaStore.
pub(crate) fn event_line<'a>(view: &EventView<'a>, pushes: bool) -> EventLine<'a> {
    let (event, fields) = match view.event {
        Event::InformerStarted {
            queue,
            batch_pop,
            profile,
        } => informer_fields(queue, batch_pop, profile),
        Event::UndeltaStarted => {
            let mut fields = serde_json::Map::new();
            fields.insert("store".into(), "undelta".into());
            ("informer-start", fields)
        }
        Event::Reflector(kind) => reflector_fields(kind),
        Event::Synced { batches, after } => synced_fields(batches, after, pushes),
        Event::HandlerSynced { handler, after } => {
            let mut fields = serde_json::Map::new();
            fields.insert("handler".into(), handler.into());
            fields.insert("afterMs".into(), millis(after).into());
            ("handler-synced", fields)
        }
    };
    EventLine {
        kind: "reflector",
        time: rfc3339_micros(view.time),
        resource: view.resource,
        event,
        fields,
    }
}

fn informer_fields(
    queue: QueueKind,
    batch_pop: usize,
    profile: Option<&InformerProfile>,
) -> (&'static str, serde_json::Map<String, Value>) {
    let mut fields = serde_json::Map::new();
    fields.insert("queue".into(), queue.as_str().into());
    fields.insert("batchPop".into(), batch_pop.into());
    if let Some(profile) = profile {
        fields.insert("profile".into(), profile_fields(profile));
    }
    ("informer-start", fields)
}

/// `{"clientGo":"1.32","chosen":"default","settings":{"fifo":{"value":"delta","from":"profile"},
/// …}}`.
fn profile_fields(profile: &InformerProfile) -> Value {
    let settings: serde_json::Map<String, Value> = profile
        .settings
        .iter()
        .map(|setting| {
            let value = match setting.value {
                SettingValue::Word(word) => Value::from(word),
                SettingValue::Number(n) => Value::from(n),
                SettingValue::Switch(on) => Value::from(on),
            };
            let entry = serde_json::json!({"value": value, "from": setting.from.as_str()});
            (setting.field(), entry)
        })
        .collect();
    serde_json::json!({
        "clientGo": profile.client_go,
        "chosen": profile.chosen.as_str(),
        "settings": settings,
    })
}

fn synced_fields(
    batches: u64,
    after: Duration,
    pushes: bool,
) -> (&'static str, serde_json::Map<String, Value>) {
    let mut fields = serde_json::Map::new();
    let counted = if pushes { "pushes" } else { "batches" };
    fields.insert(counted.into(), batches.into());
    fields.insert("afterMs".into(), millis(after).into());
    ("synced", fields)
}

/// The `event` name and fields of a reflector line; documented in docs/jsonl.md.
fn reflector_fields(kind: &ReflectorEventKind) -> (&'static str, serde_json::Map<String, Value>) {
    use serde_json::json;
    let (name, fields) = match kind {
        ReflectorEventKind::ListStarted { resource_version } => {
            ("list-start", json!({ "resourceVersion": resource_version }))
        }
        ReflectorEventKind::ListPage {
            page,
            items_so_far,
            remaining,
        } => (
            "list-page",
            json!({ "page": page, "items": items_so_far, "remaining": remaining }),
        ),
        ReflectorEventKind::ListDone {
            items,
            pages,
            resource_version,
            duration,
        } => (
            "list-done",
            json!({ "items": items, "pages": pages, "resourceVersion": resource_version,
                    "durationMs": millis(*duration) }),
        ),
        ReflectorEventKind::WatchStarted {
            resource_version,
            timeout_seconds,
            send_initial_events,
        } => (
            "watch-start",
            json!({ "resourceVersion": resource_version, "timeoutSeconds": timeout_seconds,
                    "sendInitialEvents": send_initial_events }),
        ),
        ReflectorEventKind::WatchEnded {
            reason,
            duration,
            events,
        } => {
            let code = match reason {
                WatchEndReason::Closed => "closed",
                WatchEndReason::Broken(_) => "broken",
                WatchEndReason::ErrorEvent(_) => "error-event",
                WatchEndReason::VeryShort => "very-short",
            };
            (
                "watch-end",
                json!({ "reason": code, "message": reason.to_string(),
                        "durationMs": millis(*duration), "events": events }),
            )
        }
        ReflectorEventKind::Bookmark {
            resource_version,
            initial_events_end,
        } => (
            "bookmark",
            json!({ "resourceVersion": resource_version, "initialEventsEnd": initial_events_end }),
        ),
        ReflectorEventKind::Relist { cause } => {
            // A retry within a list is not a relist of its own (`super::is_list_retry`).
            let name = if super::is_list_retry(cause) {
                "list-retry"
            } else {
                "relist"
            };
            let code = match cause {
                RelistCause::WatchExpired => "watch-expired",
                RelistCause::ListExpired => "list-expired",
                RelistCause::ListTooLarge => "list-too-large",
                RelistCause::ContinueExpired => "continue-expired",
                RelistCause::VeryShortWatch => "very-short-watch",
                RelistCause::WatchStartFailed(_) => "watch-start-failed",
                RelistCause::WatchFailed(_) => "watch-failed",
                RelistCause::WatchListInterrupted => "watch-list-interrupted",
            };
            (name, json!({ "cause": code, "message": cause.to_string() }))
        }
        ReflectorEventKind::Backoff {
            delay,
            phase,
            error,
        } => (
            "backoff",
            json!({ "delayMs": millis(*delay), "phase": phase.to_string(), "error": error.to_string() }),
        ),
        ReflectorEventKind::Resync { keys } => ("resync", json!({ "keys": keys })),
        ReflectorEventKind::WatchListFallback { reason } => {
            ("watch-list-fallback", json!({ "reason": reason }))
        }
        ReflectorEventKind::Drift(report) => (
            "drift",
            json!({ "resourceVersion": report.resource_version, "listed": report.listed,
                    "consistent": report.is_consistent(), "missing": report.missing,
                    "extra": report.extra, "stale": report.stale }),
        ),
        ReflectorEventKind::DriftCheckSkipped { reason } => {
            ("drift-skipped", json!({ "reason": reason }))
        }
        ReflectorEventKind::Error(error) => ("error", json!({ "message": error.to_string() })),
    };
    match fields {
        Value::Object(map) => (name, map),
        _ => unreachable!("every arm builds an object"),
    }
}

#[cfg(test)]
#[path = "jsonl_tests.rs"]
mod tests;
