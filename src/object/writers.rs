//! Who wrote an object: the `metadata.managedFields` entries of the newest time.
//!
//! The API server's field manager stamps an entry's `time` whenever the manager's write changed
//! the object (`managedFieldsUpdater.Update` in k8s.io/apimachinery
//! `pkg/util/managedfields/internal/managedfieldsupdater.go`: "if the current operation took any
//! fields from anything, it means the object changed, so update the timestamp"), and only then.
//! So the entries of the newest time name who wrote the object last, and an entry of that time
//! that the previous state did not have names who wrote a change. A write that bypasses the field
//! manager (a graceful deletion setting `deletionTimestamp`) stamps nothing, and neither does a
//! second write of a manager within the same second (times are whole seconds): then no entry is
//! new, and nobody is named rather than the wrong one.
//!
//! Informers usually drop managedFields, being most of an object's size; the Reflector's default
//! transform ([`Object::trim_managed_fields`]) keeps just what this needs: the newest entries'
//! manager, operation, subresource and time, and the top-level fields they own (`f:data`, with
//! nothing under it), which name what changed when a metadata-only informer sees nothing else.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry, Time};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::Object;
use super::json_text::{Key, raw_entries};

/// One managedFields entry of the newest time, without the fields it owns below the top level.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Writer {
    /// The manager: `kubectl-client-side-apply`, `kube-controller-manager`, a controller's name.
    #[serde(rename = "name")]
    pub manager: String,
    /// `Update` or `Apply` (server-side apply).
    pub operation: String,
    /// The subresource written (`status`, `scale`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subresource: Option<String>,
    /// When, as the entry says it (whole seconds, RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// The top-level fields outside `metadata` that the entry owns (`spec`, `status`, `data`).
    #[serde(skip)]
    pub fields: Vec<String>,
}

impl std::fmt::Display for Writer {
    /// `kubectl-client-side-apply (Update)`, `web (Apply, status)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}", self.manager, self.operation)?;
        if let Some(subresource) = &self.subresource {
            write!(f, ", {subresource}")?;
        }
        f.write_str(")")
    }
}

/// What this module reads of an entry, borrowed from the text.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry<'a> {
    #[serde(borrow)]
    manager: Option<Key<'a>>,
    #[serde(borrow)]
    operation: Option<Key<'a>>,
    #[serde(borrow)]
    subresource: Option<Key<'a>>,
    #[serde(borrow)]
    time: Option<Key<'a>>,
    #[serde(borrow, rename = "fieldsV1")]
    fields_v1: Option<&'a RawValue>,
}

impl Object {
    /// The managedFields entries of the newest time (several when managers wrote within the same
    /// second), and those without a time, in their order; none without managedFields. An entry
    /// without a time is one the field manager wrote unstamped (v1.28's `scale` subresource):
    /// it names a change when the previous state lacked it.
    pub fn newest_writers(&self) -> Vec<Writer> {
        let Some(entries) = self.metadata.managed_fields_json() else {
            return Vec::new();
        };
        let Ok(entries) = serde_json::from_str::<Vec<Entry<'_>>>(&entries) else {
            return Vec::new();
        };
        let stamped: Vec<Option<jiff::Timestamp>> = entries
            .iter()
            .map(|e| e.time.as_ref()?.0.parse().ok())
            .collect();
        let newest = stamped.iter().flatten().max().copied();
        entries
            .iter()
            .zip(stamped)
            .filter(|(_, t)| t.is_none() || *t == newest)
            .map(|(e, _)| writer(e))
            .collect()
    }

    /// Replaces `metadata.managedFields` by [`newest_writers`](Self::newest_writers), each
    /// entry's `fieldsV1` cut to its top-level fields: what the timeline names a change's writer
    /// by, at a fraction of the size. No output shows them (`-o json` writes the object without
    /// managedFields, as after [`strip_managed_fields`](Self::strip_managed_fields)). Drops
    /// the managedFields of metadata held typed.
    pub fn trim_managed_fields(&mut self) {
        let writers = self.newest_writers();
        if writers.is_empty() {
            self.strip_managed_fields();
            return;
        }
        let entries: Vec<ManagedFieldsEntry> = writers.into_iter().map(entry).collect();
        self.metadata.set_trimmed_managed_fields(&entries);
    }
}

/// Who wrote `new` since `old` (or, without `old`, who wrote `new` last): its newest entries
/// that `old` does not have. Empty when every one of them was there already (a write the field
/// manager did not stamp, or a second one within the same second), when `new` says nothing, or
/// when `old` has no managedFields to tell which entry is new (a live list's items are decoded
/// without them).
pub fn writers_since(old: Option<&Object>, new: &Object) -> Vec<Writer> {
    if old.is_some_and(|old| old.metadata.managed_fields_json().is_none()) {
        return Vec::new();
    }
    let before = old.map(Object::newest_writers).unwrap_or_default();
    let mut writers = new.newest_writers();
    writers.retain(|w| !before.contains(w));
    writers
}

fn writer(entry: &Entry<'_>) -> Writer {
    let text = |key: &Option<Key<'_>>| key.as_ref().map(|k| k.0.clone().into_owned());
    let fields = entry.fields_v1.map_or_else(Vec::new, |fields| {
        raw_entries(fields.get())
            .into_iter()
            .filter_map(|(key, _)| match key.strip_prefix("f:") {
                Some("metadata" | "apiVersion" | "kind") | None => None,
                Some(field) => Some(field.to_owned()),
            })
            .collect()
    });
    Writer {
        manager: text(&entry.manager).unwrap_or_default(),
        operation: text(&entry.operation).unwrap_or_default(),
        subresource: text(&entry.subresource).filter(|s| !s.is_empty()),
        time: text(&entry.time),
        fields,
    }
}

/// The managedFields entry that keeps `writer`: its top-level fields with nothing under them.
fn entry(writer: Writer) -> ManagedFieldsEntry {
    let owned: serde_json::Map<String, serde_json::Value> = writer
        .fields
        .iter()
        .map(|f| {
            (
                format!("f:{f}"),
                serde_json::Value::Object(Default::default()),
            )
        })
        .collect();
    let time = writer
        .time
        .as_deref()
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .map(Time);
    ManagedFieldsEntry {
        manager: Some(writer.manager),
        operation: Some(writer.operation),
        subresource: writer.subresource,
        time,
        fields_type: (!owned.is_empty()).then(|| "FieldsV1".to_owned()),
        fields_v1: (!owned.is_empty()).then_some(FieldsV1(serde_json::Value::Object(owned))),
        api_version: None,
    }
}

/// The writers named as the timeline does: `kubelet (Update, status)`, two joined with `, `.
pub fn describe(writers: &[Writer]) -> Option<String> {
    if writers.is_empty() {
        return None;
    }
    let names: Vec<String> = writers.iter().map(ToString::to_string).collect();
    Some(names.join(", "))
}
