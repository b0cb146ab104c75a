//! What changed between two states of an object, as a compact field summary for the timeline:
//! `status.phase Pending→Running`, `spec.replicas 2→3`, `spec.nodeName +node-3`,
//! `status.updatedReplicas 3→(absent)`.
//!
//! Paths are dotted; a map key that contains a dot is quoted (`metadata.labels["app.kubernetes.io/name"]`);
//! list elements are named by their `name` or `type` field when every element has a distinct one
//! (`spec.containers[web].image`, `status.conditions[Ready].status`), by index otherwise. Fields
//! that change on every write without meaning anything to a reader (`metadata.resourceVersion`,
//! `metadata.managedFields`) are ignored. Secret `data`/`stringData` values are never shown unless
//! asked for: a changed value reads `<redacted>`, and so does a changed last-applied-configuration
//! annotation, which holds them too.
//!
//! A field that appears or disappears shows its scalar value (a condition its `status`); a list
//! that appears or disappears whole is itemised by its merge key as a changed one is. The changes
//! come in order of [`Weight`]: what a reader looks for first (phase, condition statuses, replica
//! counts, spec, labels and annotations) before bookkeeping (`…Time` stamps, `observedGeneration`,
//! the `reason` and `message` of a condition whose status did not change). Two long strings are
//! cut around where they differ, with a quoted name kept whole.

use std::fmt::{self, Write as _};

use std::borrow::Cow;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::object::{LAST_APPLIED, MetaOut, Object, is_last_applied, writers_since};

/// How a field changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeKind {
    /// The field appeared; its value when it is shown (a scalar, not a secret).
    Added {
        /// The new value, compact; `None` for a map, a list or a secret value.
        new: Option<String>,
    },
    /// The field disappeared; its value before, as for [`ChangeKind::Added`].
    Removed {
        /// The old value, compact; `None` for a map, a list or a secret value.
        old: Option<String>,
    },
    /// The value changed; both sides rendered compactly (`{…}` for a map, `[…]` for a list).
    Changed {
        /// The value before.
        old: String,
        /// The value after.
        new: String,
    },
    /// The value changed but is secret.
    Redacted,
    /// The `kubectl.kubernetes.io/last-applied-configuration` annotation changed: `kubectl
    /// apply` rewrote the object it holds as applied, whose changes are these.
    LastApplied {
        /// What changed inside it, as two objects compare.
        inside: Vec<Change>,
    },
    /// Metadata-only objects (`PartialObjectMetadata`) whose metadata is the same but for the
    /// resourceVersion: something the server left out changed (`spec`, `status`, `data`, …).
    OutsideMetadata {
        /// The top-level fields the change's writers own outside metadata, which hold what
        /// changed ([`writers_since`]); empty when no managedFields entry says who wrote it.
        fields: Vec<String>,
    },
}

/// One changed field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Where, e.g. `spec.replicas`.
    pub path: String,
    /// How.
    pub kind: ChangeKind,
}

impl fmt::Display for Change {
    /// `spec.replicas 2→3`. The alternate form (`{:#}`, what `-o wide` shows) also lists the
    /// changes inside a last-applied-configuration annotation.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ChangeKind::LastApplied { inside } if f.alternate() && !inside.is_empty() => {
                f.write_str("last-applied-configuration updated (")?;
                for (i, change) in inside.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{change:#}")?;
                }
                f.write_str(")")
            }
            ChangeKind::LastApplied { .. } => f.write_str("last-applied-configuration updated"),
            ChangeKind::Added { new: None } => write!(f, "{} +", self.path),
            ChangeKind::Added { new: Some(new) } => write!(f, "{} +{new}", self.path),
            ChangeKind::Removed { old: None } => write!(f, "{} -", self.path),
            ChangeKind::Removed { old: Some(old) } => write!(f, "{} {old}→(absent)", self.path),
            ChangeKind::Changed { old, new } => write!(f, "{} {old}→{new}", self.path),
            ChangeKind::Redacted => write!(f, "{} <redacted>", self.path),
            ChangeKind::OutsideMetadata { fields } if fields.is_empty() => {
                f.write_str("changed outside metadata")
            }
            ChangeKind::OutsideMetadata { fields } => {
                write!(f, "changed outside metadata ({})", fields.join(" or "))
            }
        }
    }
}

/// Values longer than this are cut, so that one long annotation does not fill the row.
const MAX_VALUE_CHARS: usize = 32;

/// [`diff`] of two states of one object, without parsing the top-level fields (`spec`, `status`,
/// `data`, …) whose JSON text is the same on both sides: they cannot hold a change, and an update
/// usually touches one small field of a large object.
///
/// A changed field nested deeper than serde_json's trees go (128 levels; custom resources can be
/// deeper) is not compared inside: it reads as one change (`spec {…}→{…}`).
pub fn diff_objects(old: &Object, new: &Object, redact_secret_data: bool) -> Vec<Change> {
    let (old_fields, new_fields) = (old.fields(), new.fields());
    // Secret values also hide in the metadata (the last-applied-configuration annotation): it
    // is compared as every output shows it, redacted.
    let redacted = redact_secret_data.then(|| (old.redacted(), new.redacted()));
    let (old_meta, new_meta) = redacted.as_ref().map_or((old, new), |(o, n)| (o, n));
    let mut opaque = Vec::new();
    let mut side = |obj: &Object,
                    meta: &Object,
                    own: &[(Cow<'_, str>, &RawValue)],
                    other: &[(Cow<'_, str>, &RawValue)]| {
        let mut map = Map::new();
        if let Some(types) = obj.types() {
            map.insert("apiVersion".into(), types.api_version.clone().into());
            map.insert("kind".into(), types.kind.clone().into());
        }
        map.insert(
            "metadata".into(),
            serde_json::to_value(MetaOut::new(meta, true)).unwrap_or(Value::Null),
        );
        for (key, raw) in own {
            let unchanged = other.iter().any(|(k, r)| k == key && r.get() == raw.get());
            if !unchanged {
                // Valid JSON, so only its depth can fail it.
                let value = serde_json::from_str(raw.get()).unwrap_or_else(|_| {
                    opaque.push(key.to_string());
                    Value::Null
                });
                map.insert(key.to_string(), value);
            }
        }
        Value::Object(map)
    };
    let (old_side, new_side) = (
        side(old, old_meta, &old_fields, &new_fields),
        side(new, new_meta, &new_fields, &old_fields),
    );
    let shape = |fields: &[(Cow<'_, str>, &RawValue)], key: &str| {
        let raw = fields
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, r)| r.get());
        short_text(raw.unwrap_or("null"))
    };
    let opaque: Vec<(String, ChangeKind)> = opaque
        .into_iter()
        .map(|key| {
            let kind = ChangeKind::Changed {
                old: shape(&old_fields, &key),
                new: shape(&new_fields, &key),
            };
            (key, kind)
        })
        .collect();
    let mut changes = diff_with(&old_side, &new_side, redact_secret_data, &opaque);
    if redact_secret_data {
        last_applied_changes(old, new, &mut changes);
    }
    // A metadata informer sees a change of `spec`, `status` or `data` as a new resourceVersion
    // and nothing else (managedFields, which also change, are not compared); say so rather than
    // "no change", which is what a resync looks like, naming the top-level fields that the
    // writers of the change own, where managedFields say who they are.
    let outside = changes.is_empty()
        && old.is_partial_metadata()
        && new.is_partial_metadata()
        && old.resource_version() != new.resource_version();
    if outside {
        let mut fields: Vec<String> = writers_since(Some(old), new)
            .into_iter()
            .flat_map(|w| w.fields)
            .collect();
        fields.sort();
        fields.dedup();
        changes.push(Change {
            path: String::new(),
            kind: ChangeKind::OutsideMetadata { fields },
        });
    }
    changes
}

/// A Secret's last-applied-configuration annotation reads [`REDACTED`](crate::object::REDACTED)
/// on both sides whatever it holds, so the redacted comparison never sees it change: compare the
/// values themselves, and insert the change, without them, where the metadata's changes have it.
fn last_applied_changes(old: &Object, new: &Object, changes: &mut Vec<Change>) {
    fn applied(object: &Object) -> Vec<(Cow<'_, str>, Cow<'_, str>)> {
        let mut entries = object.annotations();
        entries.retain(|(key, _)| is_last_applied(key));
        entries
    }
    let before = applied(old);
    for (key, value) in applied(new) {
        // Added or removed, it is a change the redacted comparison saw.
        let Some((_, was)) = before.iter().find(|(k, _)| *k == key) else {
            continue;
        };
        if *was == value {
            continue;
        }
        let mut path = "metadata.annotations".to_owned();
        push_key(&mut path, &key);
        let at = changes
            .iter()
            .position(|c| c.path.starts_with("metadata") && c.path > path)
            .unwrap_or(changes.len());
        changes.insert(
            at,
            Change {
                path,
                kind: ChangeKind::Redacted,
            },
        );
    }
}

/// The changes from `old` to `new`, two whole objects as JSON. Top-level fields other than
/// `metadata` come first (sorted), `metadata` last, since `spec`, `status` and `data` are what a
/// reader usually looks for. `redact_secret_data` hides the values under `data` and `stringData`.
pub fn diff(old: &Value, new: &Value, redact_secret_data: bool) -> Vec<Change> {
    diff_with(old, new, redact_secret_data, &[])
}

/// [`diff`], with the top-level fields `opaque` changed as said, without looking inside them.
fn diff_with(
    old: &Value,
    new: &Value,
    redact_secret_data: bool,
    opaque: &[(String, ChangeKind)],
) -> Vec<Change> {
    let mut changes = Vec::new();
    let (Value::Object(old), Value::Object(new)) = (old, new) else {
        compare(old, new, &mut String::new(), Ignore::None, &mut changes);
        return changes;
    };
    let mut keys: Vec<&String> = old.keys().chain(new.keys()).collect();
    keys.sort_by_key(|k| (k.as_str() == "metadata", k.as_str()));
    keys.dedup();
    for key in keys {
        let mut path = String::new();
        push_key(&mut path, key);
        let ignore = match key.as_str() {
            "metadata" => Ignore::MetadataNoise,
            "data" | "stringData" if redact_secret_data => Ignore::Redact,
            _ => Ignore::None,
        };
        let opaque = opaque.iter().find(|(k, _)| k == key).map(|(_, kind)| kind);
        match (old.get(key), new.get(key), opaque) {
            (Some(_), Some(_), Some(kind)) => changes.push(Change {
                path,
                kind: if ignore == Ignore::Redact {
                    ChangeKind::Redacted
                } else {
                    kind.clone()
                },
            }),
            (Some(a), Some(b), None) => compare(a, b, &mut path, ignore, &mut changes),
            (a, b, _) => one_side(a, b, &mut path, ignore, &mut changes),
        }
    }
    rank(&mut changes);
    changes
}

/// What to treat specially below a top-level field.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ignore {
    None,
    /// Directly under `metadata`: skip resourceVersion and managedFields.
    MetadataNoise,
    /// Under a Secret's data: never show values.
    Redact,
}

fn compare(old: &Value, new: &Value, path: &mut String, ignore: Ignore, out: &mut Vec<Change>) {
    if old == new {
        return;
    }
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                if ignore == Ignore::MetadataNoise
                    && matches!(key.as_str(), "resourceVersion" | "managedFields")
                {
                    continue;
                }
                let child_ignore = if ignore == Ignore::Redact {
                    Ignore::Redact
                } else {
                    Ignore::None
                };
                let len = path.len();
                push_key(path, key);
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => compare(x, y, path, child_ignore, out),
                    (x, y) => one_side(x, y, path, child_ignore, out),
                }
                path.truncate(len);
            }
        }
        (Value::Array(a), Value::Array(b)) => compare_lists(a, b, path, ignore, out),
        _ if ignore == Ignore::Redact => out.push(change(path, ChangeKind::Redacted)),
        (Value::String(old), Value::String(new)) if is_last_applied_path(path) => {
            out.push(last_applied_change(path, old, new));
        }
        (Value::String(old), Value::String(new)) => {
            let (old, new) = short_pair(old, new);
            out.push(change(path, ChangeKind::Changed { old, new }));
        }
        _ => out.push(change(
            path,
            ChangeKind::Changed {
                old: short(old),
                new: short(new),
            },
        )),
    }
}

/// Whether `path` is `metadata.annotations` of the last-applied-configuration annotation.
fn is_last_applied_path(path: &str) -> bool {
    path.strip_prefix("metadata.annotations[")
        .and_then(|rest| rest.strip_suffix(']'))
        .and_then(|key| serde_json::from_str::<String>(key).ok())
        .is_some_and(|key| key == LAST_APPLIED)
}

/// A changed last-applied-configuration annotation: two long JSON texts whose cut prefixes read
/// the same, so what changed is the object it holds, compared as objects are. Text that is not
/// JSON reads as any other string.
fn last_applied_change(path: &str, old: &str, new: &str) -> Change {
    match (
        serde_json::from_str::<Value>(old),
        serde_json::from_str::<Value>(new),
    ) {
        (Ok(old), Ok(new)) => change(
            path,
            ChangeKind::LastApplied {
                inside: diff(&old, &new, false),
            },
        ),
        _ => {
            let (old, new) = short_pair(old, new);
            change(path, ChangeKind::Changed { old, new })
        }
    }
}

/// A field on one side only: appeared (`new`) or disappeared (`old`). A list with a merge key is
/// itemised, each element a change of its own, as [`compare_lists`] names them.
fn one_side(
    old: Option<&Value>,
    new: Option<&Value>,
    path: &mut String,
    ignore: Ignore,
    out: &mut Vec<Change>,
) {
    let Some(value) = old.or(new) else {
        return;
    };
    if let Value::Array(items) = value
        && let Some(keyed) = ["name", "type"].iter().find_map(|f| merge_key(items, f))
        && !keyed.is_empty()
    {
        for (name, item) in keyed {
            let len = path.len();
            let _ = write!(path, "[{name}]");
            let item = Some(item);
            one_side(old.and(item), new.and(item), path, ignore, out);
            path.truncate(len);
        }
        return;
    }
    let shown = (ignore != Ignore::Redact)
        .then(|| shown_alone(value))
        .flatten();
    let kind = match new {
        Some(_) => ChangeKind::Added { new: shown },
        None => ChangeKind::Removed { old: shown },
    };
    out.push(change(path, kind));
}

/// What a value that appeared or disappeared reads as: a scalar itself, a condition (an object
/// with a `type` and a scalar `status`) its status; `None` for other maps and lists.
fn shown_alone(value: &Value) -> Option<String> {
    match value {
        Value::Object(map) => match (map.get("type"), map.get("status")) {
            (Some(_), Some(status)) if !status.is_object() && !status.is_array() => {
                Some(short(status))
            }
            _ => None,
        },
        Value::Array(_) => None,
        scalar => Some(short(scalar)),
    }
}

/// Where a change stands among an update's changes: what a reader looks for first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Weight {
    /// The phase, a condition's status, a list element (a condition, a container) that came or
    /// went, replica counts, the spec, a ConfigMap's or Secret's data, labels and annotations:
    /// what says what happened.
    Decisive,
    Ordinary,
    /// Written along with every real change: `…Time`/`…Timestamp` stamps, `observedGeneration`,
    /// and the `reason`/`message` of a list element (a condition) whose `status` did not change.
    Bookkeeping,
}

/// Orders `changes` by [`Weight`], keeping their order (top-level fields sorted, `metadata`
/// last) within each weight.
fn rank(changes: &mut [Change]) {
    let weights: Vec<Weight> = changes.iter().map(|c| weight(c, changes)).collect();
    let mut ranked: Vec<(Weight, Change)> =
        weights.into_iter().zip(changes.iter().cloned()).collect();
    ranked.sort_by_key(|(w, _)| *w);
    for (slot, (_, change)) in changes.iter_mut().zip(ranked) {
        *slot = change;
    }
}

fn weight(change: &Change, changes: &[Change]) -> Weight {
    let path = change.path.as_str();
    // The last field name of the path, and what it belongs to.
    let (parent, leaf) = match path.rfind(['.', '[']) {
        Some(at) if path.as_bytes()[at] == b'.' => (&path[..at], &path[at + 1..]),
        _ => ("", path),
    };
    let in_element = parent.ends_with(']');
    let status_changed = || {
        changes
            .iter()
            .any(|c| c.path.strip_prefix(parent) == Some(".status"))
    };
    let stamp = leaf.ends_with("Time") || leaf.ends_with("Timestamp");
    let explains_a_status = in_element && matches!(leaf, "reason" | "message");
    if stamp || leaf == "observedGeneration" || (explains_a_status && !status_changed()) {
        Weight::Bookkeeping
    } else if path == "status.phase"
        || (in_element && leaf == "status")
        || (path.ends_with(']')
            && matches!(
                change.kind,
                ChangeKind::Added { .. } | ChangeKind::Removed { .. }
            ))
        || leaf == "replicas"
        || leaf.ends_with("Replicas")
        || path.starts_with("spec.")
        || path.starts_with("spec[")
        || ["data", "stringData", "binaryData"].iter().any(|field| {
            path.strip_prefix(field)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
        })
        || path.starts_with("metadata.labels")
        || path.starts_with("metadata.annotations")
    {
        Weight::Decisive
    } else {
        Weight::Ordinary
    }
}

/// Lists of objects that all carry a distinct `name` (containers, volumes, env) or `type`
/// (conditions) are compared element by element under that key, which is how Kubernetes merges
/// them; anything else by index.
fn compare_lists(
    a: &[Value],
    b: &[Value],
    path: &mut String,
    ignore: Ignore,
    out: &mut Vec<Change>,
) {
    let child_ignore = if ignore == Ignore::Redact {
        Ignore::Redact
    } else {
        Ignore::None
    };
    if let Some(field) = ["name", "type"]
        .into_iter()
        .find(|f| merge_key(a, f).is_some() && merge_key(b, f).is_some())
    {
        let (old, new) = (merge_key(a, field).unwrap(), merge_key(b, field).unwrap());
        let mut names: Vec<&str> = old.iter().chain(new.iter()).map(|(n, _)| *n).collect();
        names.sort_unstable();
        names.dedup();
        for name in names {
            let len = path.len();
            let _ = write!(path, "[{name}]");
            match (find_named(&old, name), find_named(&new, name)) {
                (Some(x), Some(y)) => compare(x, y, path, child_ignore, out),
                (x, y) => one_side(x, y, path, child_ignore, out),
            }
            path.truncate(len);
        }
        return;
    }
    for i in 0..a.len().max(b.len()) {
        let len = path.len();
        let _ = write!(path, "[{i}]");
        match (a.get(i), b.get(i)) {
            (Some(x), Some(y)) => compare(x, y, path, child_ignore, out),
            (x, y) => one_side(x, y, path, child_ignore, out),
        }
        path.truncate(len);
    }
}

fn find_named<'a>(items: &[(&str, &'a Value)], name: &str) -> Option<&'a Value> {
    items.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

/// `(key, element)` for every element, if all are objects with a distinct string `field`.
fn merge_key<'a>(items: &'a [Value], field: &str) -> Option<Vec<(&'a str, &'a Value)>> {
    let keyed: Vec<(&str, &Value)> = items
        .iter()
        .map(|v| v.get(field).and_then(Value::as_str).map(|k| (k, v)))
        .collect::<Option<_>>()?;
    let mut names: Vec<&str> = keyed.iter().map(|(k, _)| *k).collect();
    names.sort_unstable();
    names.dedup();
    (names.len() == keyed.len()).then_some(keyed)
}

fn change(path: &str, kind: ChangeKind) -> Change {
    Change {
        path: path.to_owned(),
        kind,
    }
}

fn push_key(path: &mut String, key: &str) {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '/'));
    if plain {
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key);
    } else {
        // A JSON string literal: dots, spaces and quotes stay unambiguous.
        path.push('[');
        path.push_str(&Value::String(key.to_owned()).to_string());
        path.push(']');
    }
}

/// A scalar as a reader would write it; maps and lists as `{…}`/`[…]`; long values cut.
fn short(value: &Value) -> String {
    let text = match value {
        Value::String(s) if s.is_empty() => "\"\"".to_owned(),
        Value::String(s) => super::printable(s).into_owned(),
        Value::Object(m) if m.is_empty() => "{}".to_owned(),
        Value::Object(_) => "{…}".to_owned(),
        Value::Array(a) if a.is_empty() => "[]".to_owned(),
        Value::Array(_) => "[…]".to_owned(),
        other => other.to_string(),
    };
    if text.chars().count() > MAX_VALUE_CHARS {
        let cut: String = text.chars().take(MAX_VALUE_CHARS - 1).collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// Two strings, each cut to about [`MAX_VALUE_CHARS`] around where they start to differ: from a
/// few characters before the first difference (`…` where text was left out), and a quoted name
/// (`"web-6c76689579"`) that the cut would split is kept whole, so that two messages naming
/// different objects still name them.
fn short_pair(old: &str, new: &str) -> (String, String) {
    /// Characters kept before the first difference, for context.
    const BEFORE: usize = 8;
    let (old, new) = (super::printable(old), super::printable(new));
    let (old, new): (Vec<char>, Vec<char>) = (old.chars().collect(), new.chars().collect());
    if old.len() <= MAX_VALUE_CHARS && new.len() <= MAX_VALUE_CHARS {
        let text = |chars: &[char]| match chars {
            [] => "\"\"".to_owned(),
            _ => chars.iter().collect(),
        };
        return (text(&old), text(&new));
    }
    let same = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let mut start = same.saturating_sub(BEFORE);
    // The prefix up to `same` is common: a quote left open there is open in both, and so is a
    // word (or a path's or an image's part) cut there, which starts whole when it is not long.
    if let Some(open) = open_quote(&old[..start]) {
        start = open;
    }
    let word = old[..start]
        .iter()
        .rposition(|&c| c.is_whitespace() || matches!(c, '/' | ',' | '(' | '=' | '['))
        .map_or(0, |at| at + 1);
    if start - word <= 2 * BEFORE {
        start = word;
    }
    let cut = |chars: &[char]| {
        if chars.is_empty() {
            return "\"\"".to_owned();
        }
        let mut end = (start + MAX_VALUE_CHARS - 1).min(chars.len());
        if let Some(open) = open_quote(&chars[start..end]) {
            let close = chars[start + open + 1..]
                .iter()
                .position(|&c| c == '"')
                .map(|at| start + open + 1 + at + 1);
            if let Some(close) = close.filter(|&c| c - end <= MAX_VALUE_CHARS) {
                end = close;
            }
        }
        let mut text = String::new();
        if start > 0 {
            text.push('…');
        }
        // `start` is at most the common prefix's length, so within both.
        text.extend(&chars[start..end]);
        if end < chars.len() {
            text.push('…');
        }
        text
    };
    (cut(&old), cut(&new))
}

/// Where the last quote of `chars` that is not closed in it stands.
fn open_quote(chars: &[char]) -> Option<usize> {
    let quotes: Vec<usize> = (0..chars.len()).filter(|&i| chars[i] == '"').collect();
    (quotes.len() % 2 == 1).then(|| quotes[quotes.len() - 1])
}

/// How a value too deep to parse reads: `{…}` or `[…]`.
fn short_text(raw: &str) -> String {
    match raw.as_bytes().first() {
        Some(b'{') => "{…}".to_owned(),
        Some(b'[') => "[…]".to_owned(),
        _ => raw.chars().take(MAX_VALUE_CHARS).collect(),
    }
}

/// The first `max` changes joined with `, `, and how many more there are; `no change` when
/// there is none. All of them (`usize::MAX`, `-o wide`) in their alternate form, which shows
/// what changed inside a last-applied-configuration annotation.
pub fn summary(changes: &[Change], max: usize) -> String {
    if changes.is_empty() {
        return "no change".to_owned();
    }
    let mut out = String::new();
    for (i, c) in changes.iter().take(max).enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        if max == usize::MAX {
            let _ = write!(out, "{c:#}");
        } else {
            let _ = write!(out, "{c}");
        }
    }
    if changes.len() > max {
        let _ = write!(out, " (+{} more)", changes.len() - max);
    }
    out
}

#[cfg(test)]
#[path = "changes_tests.rs"]
mod tests;
