//! Index functions chosen by a short textual spec (`namespace`, `label:app`, `field:spec.nodeName`,
//! …), so that command-line flags can add indices to an [`Indexer`](crate::cache::Indexer) of
//! [`Object`]s.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use crate::object::{MetaOut, Object, is_last_applied, valid_entry};
use serde_json::Value;
use serde_json::value::RawValue;

use super::indexer::{IndexFunc, IndexValues};

/// The forms a spec can take, for error messages and help text.
pub const INDEX_SPEC_FORMS: &str = "namespace, label:<key>, labels, annotation:<key>, \
     field:<dotted.path>, owner";

/// A built-in index function.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IndexSpec {
    /// `namespace`: the object's namespace (cluster-scoped objects have none).
    Namespace,
    /// `label:<key>`: the value of one label.
    Label(String),
    /// `labels`: every label as `key=value`.
    Labels,
    /// `annotation:<key>`: the value of one annotation.
    Annotation(String),
    /// `field:<dotted.path>`: the scalar values at a JSON path such as `spec.nodeName`; a path
    /// through an array yields one value per element (`field:spec.containers.image`).
    Field(Vec<String>),
    /// `owner`: `Kind/name` of every ownerReference.
    Owner,
}

/// A spec that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid index spec {spec:?}: {reason}; valid forms: {INDEX_SPEC_FORMS}")]
pub struct IndexSpecError {
    /// The spec as given.
    pub spec: String,
    /// What is wrong with it.
    pub reason: String,
}

impl FromStr for IndexSpec {
    type Err = IndexSpecError;

    fn from_str(spec: &str) -> Result<Self, Self::Err> {
        let err = |reason: &str| IndexSpecError {
            spec: spec.to_owned(),
            reason: reason.to_owned(),
        };
        let (kind, arg) = match spec.split_once(':') {
            Some((kind, arg)) => (kind, Some(arg)),
            None => (spec, None),
        };
        let required = |what: &str| -> Result<String, IndexSpecError> {
            match arg {
                Some(a) if !a.trim().is_empty() => Ok(a.trim().to_owned()),
                _ => Err(err(&format!("{kind} needs {what} after the colon"))),
            }
        };
        let no_arg = |spec: IndexSpec| match arg {
            None => Ok(spec),
            Some(_) => Err(err(&format!("{kind} takes no argument"))),
        };
        match kind.trim() {
            "namespace" => no_arg(IndexSpec::Namespace),
            "labels" => no_arg(IndexSpec::Labels),
            "owner" => no_arg(IndexSpec::Owner),
            "label" => Ok(IndexSpec::Label(required("a label key")?)),
            "annotation" => Ok(IndexSpec::Annotation(required("an annotation key")?)),
            "field" => {
                let path = required("a dotted path")?;
                let segments: Vec<String> = path.split('.').map(str::to_owned).collect();
                if segments.iter().any(String::is_empty) {
                    return Err(err("the field path has an empty segment"));
                }
                Ok(IndexSpec::Field(segments))
            }
            "" => Err(err("the spec is empty")),
            other => Err(err(&format!("unknown index kind {other:?}"))),
        }
    }
}

impl fmt::Display for IndexSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IndexSpec::Namespace => f.write_str("namespace"),
            IndexSpec::Label(key) => write!(f, "label:{key}"),
            IndexSpec::Labels => f.write_str("labels"),
            IndexSpec::Annotation(key) => write!(f, "annotation:{key}"),
            IndexSpec::Field(path) => write!(f, "field:{}", path.join(".")),
            IndexSpec::Owner => f.write_str("owner"),
        }
    }
}

impl IndexSpec {
    /// The index name used in the [`Indexer`](crate::cache::Indexer): the canonical spec text.
    pub fn name(&self) -> String {
        self.to_string()
    }

    /// The values `obj` has under this spec.
    pub fn values<'a>(&self, obj: &'a Object) -> IndexValues<'a> {
        match self {
            IndexSpec::Namespace => obj.namespace().map(Cow::Borrowed).into_iter().collect(),
            IndexSpec::Label(key) => obj.label(key).into_iter().collect(),
            IndexSpec::Annotation(key) => obj.annotation(key).into_iter().collect(),
            IndexSpec::Labels => obj
                .labels()
                .into_iter()
                .map(|(k, v)| Cow::Owned(format!("{k}={v}")))
                .collect(),
            IndexSpec::Owner => obj
                .metadata()
                .owner_references
                .iter()
                .flatten()
                .map(|o| Cow::Owned(format!("{}/{}", o.kind, o.name)))
                .collect(),
            IndexSpec::Field(path) => field_values(obj, path),
        }
    }

    /// Whether, on a Secret, its values are what outputs redact: `data` or `stringData` values
    /// (`field:data.…`), or the last-applied-configuration annotation, which holds them too.
    pub fn reads_secret_values(&self) -> bool {
        match self {
            IndexSpec::Field(path) => path
                .first()
                .is_some_and(|f| f == "data" || f == "stringData"),
            IndexSpec::Annotation(key) => is_last_applied(key),
            _ => false,
        }
    }

    /// Whether this spec reads a field outside `metadata`, which a metadata-only informer's
    /// objects (`PartialObjectMetadata`) do not have: every value would be missing.
    pub fn reads_outside_metadata(&self) -> bool {
        matches!(self, IndexSpec::Field(path) if path.first().is_none_or(|f| f != "metadata"))
    }

    /// The spec `self` most likely meant, when no object has a value under it: a label or
    /// annotation key, or each segment of a field path, matched to a key the objects have
    /// ([`closest`]). `None` when every part already names something the objects have, or nothing
    /// is close. Reads at most [`SUGGEST_FROM`] objects: a typo shows on the first few.
    pub fn suggest<'a>(&self, objects: impl IntoIterator<Item = &'a Object>) -> Option<IndexSpec> {
        let objects = objects.into_iter().take(SUGGEST_FROM);
        let keys_of = |pairs: Vec<(Cow<'_, str>, Cow<'_, str>)>| {
            pairs
                .into_iter()
                .map(|(k, _)| k.into_owned())
                .collect::<Vec<_>>()
        };
        let suggested = match self {
            IndexSpec::Label(key) => {
                IndexSpec::Label(closest(key, objects.flat_map(|o| keys_of(o.labels())))?)
            }
            IndexSpec::Annotation(key) => IndexSpec::Annotation(closest(
                key,
                objects.flat_map(|o| keys_of(o.annotations())),
            )?),
            IndexSpec::Field(path) => {
                let values: Vec<Value> = objects.map(Object::to_value).collect();
                IndexSpec::Field(suggest_path(path, values.iter().collect())?)
            }
            IndexSpec::Namespace | IndexSpec::Labels | IndexSpec::Owner => return None,
        };
        (suggested != *self).then_some(suggested)
    }

    /// This spec as an index function.
    pub fn index_func(&self) -> IndexFunc<Object> {
        let spec = self.clone();
        Arc::new(move |obj: &Object| spec.values(obj))
    }
}

/// How many objects [`IndexSpec::suggest`] reads.
const SUGGEST_FROM: usize = 100;

/// `path` with each segment that none of `values` has at its level replaced by the closest key
/// they have there; `None` if a segment has no close key. Arrays are walked into, as the index
/// walks them.
fn suggest_path(path: &[String], values: Vec<&Value>) -> Option<Vec<String>> {
    let Some((first, rest)) = path.split_first() else {
        return Some(Vec::new());
    };
    let mut objects = Vec::new();
    let mut pending = values;
    while let Some(value) = pending.pop() {
        match value {
            Value::Object(map) => objects.push(map),
            Value::Array(items) => pending.extend(items),
            _ => {}
        }
    }
    let segment = if objects.iter().any(|map| map.contains_key(first)) {
        first.clone()
    } else {
        closest(first, objects.iter().flat_map(|map| map.keys().cloned()))?
    };
    let children = objects.iter().filter_map(|map| map.get(&segment)).collect();
    let mut suggested = vec![segment];
    suggested.extend(suggest_path(rest, children)?);
    Some(suggested)
}

/// The candidate that `typed` most likely meant: one equal but for case, else the nearest within
/// two edits (optimal string alignment, as a mistyped resource's suggestion), ties to the first
/// in sorted order; `None` if none is that close.
fn closest(typed: &str, candidates: impl IntoIterator<Item = String>) -> Option<String> {
    let candidates: std::collections::BTreeSet<String> = candidates.into_iter().collect();
    if let Some(same) = candidates.iter().find(|c| c.eq_ignore_ascii_case(typed)) {
        return Some(same.clone());
    }
    candidates
        .into_iter()
        .map(|c| (strsim::osa_distance(typed, &c), c))
        .filter(|(distance, _)| *distance <= 2)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, c)| c)
}

/// Scalars at `path`. [`Object`] locates the key fields of its metadata and keeps the rest as
/// JSON text, so name, namespace and resourceVersion are read directly; other paths walk only the
/// top-level field they start with (`metadata` included) along the path.
fn field_values<'a>(obj: &'a Object, path: &[String]) -> IndexValues<'a> {
    let (first, rest) = path.split_first().expect("parsed paths are non-empty");
    let mut out = IndexValues::new();
    match first.as_str() {
        "apiVersion" | "kind" if rest.is_empty() => {
            let value = obj.types().map(|t| {
                if first == "kind" {
                    t.kind.as_str()
                } else {
                    t.api_version.as_str()
                }
            });
            out.extend(value.filter(|v| !v.is_empty()).map(Cow::Borrowed));
        }
        "metadata" => {
            let direct = match rest {
                [f] if f == "name" => Some(obj.name()),
                [f] if f == "namespace" => Some(obj.namespace()),
                [f] if f == "resourceVersion" => Some(obj.resource_version()),
                _ => None,
            };
            match (direct, obj.metadata_text()) {
                (Some(value), _) => out.extend(value.map(Cow::Borrowed)),
                (None, Some(text)) => collect_raw_scalars(text, rest, &mut out),
                (None, None) => {
                    if let Ok(value) = serde_json::to_value(MetaOut::new(obj, true)) {
                        collect_owned_scalars(&value, rest, &mut out);
                    }
                }
            }
        }
        _ => {
            if let Some(raw) = obj.field(first) {
                collect_raw_scalars(raw, rest, &mut out);
            }
        }
    }
    out
}

/// [`collect_scalars`] on JSON text: walks only the path, without building a tree of the
/// objects around it.
fn collect_raw_scalars<'a>(raw: &'a RawValue, path: &[String], out: &mut IndexValues<'a>) {
    let text = raw.get().trim_start();
    match text.as_bytes().first() {
        Some(b'{') => {
            if let Some((first, rest)) = path.split_first()
                && let Some(child) = valid_entry(text, first)
            {
                collect_raw_scalars(child, rest, out);
            }
        }
        Some(b'[') => {
            let items: Vec<&RawValue> = serde_json::from_str(text).unwrap_or_default();
            items
                .into_iter()
                .for_each(|v| collect_raw_scalars(v, path, out));
        }
        // Most values are strings without escapes, which the index borrows.
        Some(b'"') if path.is_empty() => match serde_json::from_str::<&str>(text) {
            Ok(s) => out.push(Cow::Borrowed(s)),
            Err(_) => out.extend(serde_json::from_str::<String>(text).ok().map(Cow::Owned)),
        },
        Some(_) if path.is_empty() => match serde_json::from_str::<Value>(text) {
            Ok(Value::Number(n)) => out.push(Cow::Owned(n.to_string())),
            Ok(Value::Bool(b)) => out.push(Cow::Owned(b.to_string())),
            _ => {}
        },
        _ => {}
    }
}

/// [`collect_scalars`] of a value made on the fly, which the results cannot borrow from.
fn collect_owned_scalars(value: &Value, path: &[String], out: &mut IndexValues<'_>) {
    let mut owned = IndexValues::new();
    collect_scalars(value, path, &mut owned);
    out.extend(owned.into_iter().map(|v| Cow::Owned(v.into_owned())));
}

fn collect_scalars<'a>(value: &'a Value, path: &[String], out: &mut IndexValues<'a>) {
    match value {
        // Arrays are transparent: the path continues into every element.
        Value::Array(items) => items.iter().for_each(|v| collect_scalars(v, path, out)),
        Value::Object(map) => {
            if let Some((first, rest)) = path.split_first()
                && let Some(child) = map.get(first)
            {
                collect_scalars(child, rest, out);
            }
        }
        Value::String(s) if path.is_empty() => out.push(Cow::Borrowed(s)),
        Value::Number(n) if path.is_empty() => out.push(Cow::Owned(n.to_string())),
        Value::Bool(b) if path.is_empty() => out.push(Cow::Owned(b.to_string())),
        _ => {}
    }
}

#[cfg(test)]
#[path = "index_spec_tests.rs"]
mod tests;
