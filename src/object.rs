//! [`Object`]: a Kubernetes object of any kind, as compact as the cache can hold it.
//!
//! An informer keeps every object of a resource in memory, so the cached form decides the tool's
//! footprint. `kube`'s `Object` parses everything outside `metadata` into a
//! `serde_json::Value` tree: one allocation per string, map and array, several times the size of
//! the JSON it came from. [`Object`] keeps everything but `apiVersion` and `kind` as the compact
//! JSON text it arrived as: `metadata` with its name, namespace and resourceVersion located in
//! it (read on every delta), the other fields (`spec`, `status`, `data`, …) as one text. They are
//! parsed only when something asks for them: `meta()`, a renderer, a `field:` index.
//!
//! Decoding works with any serde deserializer (including the buffered ones serde uses for tagged
//! enums): it transcodes the fields straight from the input into text, without an intermediate
//! tree. [`Object::from_json`] copies the text instead, for readers that hold the JSON.
//! Serializing transcodes the text back, so it works with any serializer (JSON, YAML);
//! [`Object::json`] writes it as is for JSON.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::Resource;
use kube::core::{ApiResource, DynamicResourceScope, TypeMeta};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::ser::{self, SerializeMap, SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::timestamp::Rfc3339;

mod deserialize;
pub(crate) mod json_text;
mod meta;
mod read;
mod serialize;
mod types;
mod writers;

use json_text::{Key, string_end};
pub use json_text::{describe_raw, raw_entries, raw_entry};
pub(crate) use json_text::{nesting, valid_entry};
use meta::Meta;
pub(crate) use read::{Unread, compact_prefix};

pub use deserialize::MAX_DEPTH;
use deserialize::{Borrow, ObjectVisitor};
pub(crate) use deserialize::{FromJson, deep_json, without_position};
use serialize::JsonOut;
pub(crate) use serialize::{MetaOut, Metadata, Transcoded};
pub use writers::{Writer, describe as describe_writers, writers_since};

/// What replaces each Secret value in every output and recording.
pub const REDACTED: &str = "<redacted>";

/// The annotation in which `kubectl apply` keeps the object as it was applied: for a Secret, its
/// values in plain text. [`Object::redacted`] redacts it.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// A Kubernetes object: `apiVersion`/`kind`, and `metadata` and every other top-level field as
/// compact JSON text.
///
/// [`name`](Self::name), [`namespace`](Self::namespace) and
/// [`resource_version`](Self::resource_version) read the metadata text; [`meta`](Self::meta)
/// decodes the whole `ObjectMeta` (once, then keeps it), and [`meta_mut`](Self::meta_mut) holds it
/// typed from then on.
///
/// An informer holds every object of a resource, so the layout is kept small: 64 bytes besides
/// the texts (checked by a test), `apiVersion` and `kind` shared with the other objects that say
/// the same ([`types`](Self::types)).
#[derive(Clone, Default)]
pub struct Object {
    /// `apiVersion` and `kind`; list items on the wire lack them (the Reflector fills them in).
    /// Shared by the objects this thread read or typed one after the other with the same ones.
    types: Option<Arc<TypeMeta>>,
    metadata: Meta,
    /// The other top-level fields as one JSON object text (`{"spec":…,"status":…}`), or empty
    /// when there are none. Always valid JSON: only this module writes it.
    body: Box<str>,
}

impl Object {
    /// An object of `resource`'s kind named `name`, with no fields besides metadata.
    pub fn new(name: &str, resource: &ApiResource) -> Self {
        Object {
            types: Some(types::shared(&resource.api_version, &resource.kind)),
            metadata: Meta::Typed(Box::new(ObjectMeta {
                name: Some(name.to_owned()),
                ..ObjectMeta::default()
            })),
            body: Box::default(),
        }
    }

    /// The same object in namespace `namespace`.
    #[must_use]
    pub fn within(mut self, namespace: &str) -> Self {
        self.meta_mut().namespace = Some(namespace.to_owned());
        self
    }

    /// Decodes an object from its JSON text, copying the text of its fields where it is compact
    /// (as the API server and recordings write it) instead of transcoding them.
    pub fn from_json(json: &RawValue) -> Result<Self, serde_json::Error> {
        Self::from_json_text(json.get())
    }

    /// [`from_json`](Self::from_json) of text not yet known to be JSON: checked as it is read.
    ///
    /// Compact text, as the API server writes it, is read in one pass (`object/read.rs`); any
    /// other text, and every error, goes through serde_json.
    pub fn from_json_text(json: &str) -> Result<Self, serde_json::Error> {
        match read::compact(json) {
            Some(obj) => Ok(obj),
            None => Self::from_json_text_by_serde(json),
        }
    }

    /// [`from_json_text`](Self::from_json_text) through serde_json alone.
    fn from_json_text_by_serde(json: &str) -> Result<Self, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_str(json);
        let obj = de.deserialize_map(ObjectVisitor::<Borrow>(PhantomData))?;
        de.end()?;
        Ok(obj)
    }

    /// `apiVersion` and `kind`, when the object has them (list items on the wire do not).
    pub fn types(&self) -> Option<&TypeMeta> {
        self.types.as_deref()
    }

    /// Sets `apiVersion` and `kind` (`None`: the object has neither, as a list item on the wire).
    pub fn set_types(&mut self, types: Option<&TypeMeta>) {
        self.types = types.map(|t| types::shared(&t.api_version, &t.kind));
    }

    /// Gives the object `api_version` and `kind` where it has none or an empty one, keeping
    /// those it has: what the Reflector does to list items, which lack them on the wire.
    pub fn fill_types(&mut self, api_version: &str, kind: &str) {
        let (have_version, have_kind) = (self.api_version(), self.kind());
        if !have_version.is_empty() && !have_kind.is_empty() {
            return;
        }
        let api_version = if have_version.is_empty() {
            api_version
        } else {
            have_version
        };
        let kind = if have_kind.is_empty() {
            kind
        } else {
            have_kind
        };
        self.types = Some(types::shared(api_version, kind));
    }

    /// `metadata.name`, without decoding the metadata.
    pub fn name(&self) -> Option<&str> {
        self.metadata.name()
    }

    /// `metadata.namespace`, without decoding the metadata.
    pub fn namespace(&self) -> Option<&str> {
        self.metadata.namespace()
    }

    /// `metadata.resourceVersion`, without decoding the metadata.
    pub fn resource_version(&self) -> Option<&str> {
        self.metadata.resource_version()
    }

    /// `metadata.labels[key]`, without decoding the metadata.
    pub fn label(&self, key: &str) -> Option<Cow<'_, str>> {
        self.metadata.map_value("labels", key)
    }

    /// Every `metadata.labels` entry, without decoding the metadata: in the order the server sent
    /// them, or sorted once the metadata was changed in code.
    pub fn labels(&self) -> Vec<(Cow<'_, str>, Cow<'_, str>)> {
        self.metadata.map_entries("labels")
    }

    /// Every `metadata.annotations` entry, without decoding the metadata (as [`labels`](Self::labels)).
    pub fn annotations(&self) -> Vec<(Cow<'_, str>, Cow<'_, str>)> {
        self.metadata.map_entries("annotations")
    }

    /// `metadata.annotations[key]`, without decoding the metadata.
    pub fn annotation(&self, key: &str) -> Option<Cow<'_, str>> {
        self.metadata.map_value("annotations", key)
    }

    /// The metadata, decoded on the first call and kept as long as the object (as
    /// [`kube::Resource::meta`]). Readers that look once, such as renderers, should prefer
    /// [`metadata`](Self::metadata), which keeps nothing.
    pub fn meta(&self) -> &ObjectMeta {
        self.metadata.get()
    }

    /// The metadata to change (as [`kube::Resource::meta_mut`]); it is held decoded from then on.
    pub fn meta_mut(&mut self) -> &mut ObjectMeta {
        self.metadata.make_mut()
    }

    /// The metadata, decoded for this call unless [`meta`](Self::meta) already decoded it.
    pub fn metadata(&self) -> Cow<'_, ObjectMeta> {
        self.metadata.decoded()
    }

    /// Drops `metadata.managedFields` (which informers rarely need and which can be most of an
    /// object's size).
    pub fn strip_managed_fields(&mut self) {
        self.metadata.strip_managed_fields();
    }

    /// About how many bytes of memory this object takes: its own size and what it holds on the
    /// heap (the allocator's rounding, the cache's keys and indices, and the `apiVersion` and
    /// `kind` it shares with the other objects of its list not included). For the summary's
    /// cache size, and to compare with the JSON the objects came from.
    pub fn footprint(&self) -> usize {
        std::mem::size_of::<Self>() + self.metadata.heap_size() + self.body.len()
    }

    /// Whether the metadata is still the text it arrived as (not decoded for a change).
    pub fn metadata_is_text(&self) -> bool {
        self.metadata.is_text()
    }

    /// The metadata's JSON text, while it is held as text.
    pub(crate) fn metadata_text(&self) -> Option<&RawValue> {
        self.metadata.text()
    }

    /// The object for a serde_json serializer, its text written as is rather than transcoded;
    /// `managed_fields` says whether `metadata.managedFields` is included. Only for serde_json:
    /// other serializers would write serde_json's raw-value marker.
    pub fn json(&self, managed_fields: bool) -> impl Serialize + '_ {
        JsonOut {
            obj: self,
            managed_fields,
            body: true,
        }
    }

    /// `apiVersion`, `kind` and `metadata` (without managedFields) for a serde_json serializer,
    /// as [`json`](Self::json).
    pub fn json_meta(&self) -> impl Serialize + '_ {
        JsonOut {
            obj: self,
            managed_fields: false,
            body: false,
        }
    }

    /// Decodes an object from a JSON value.
    pub fn from_value(value: Value) -> Result<Self, serde_json::Error> {
        serde_json::from_value(value)
    }

    /// The whole object as a JSON value (parses the metadata and the body).
    pub fn to_value(&self) -> Value {
        // Serializing metadata and valid JSON text into a Value cannot fail.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Whether this is a core/v1 Secret, whose `data` and `stringData` values every output
    /// replaces with [`REDACTED`] unless asked not to.
    ///
    /// A Secret listed as `PartialObjectMetadata` (`--metadata-only`) no longer says its kind,
    /// but its last-applied-configuration annotation, which holds its values, does: such an
    /// object counts as a Secret, so that the annotation is redacted as on a whole Secret.
    pub fn is_secret(&self) -> bool {
        let Some(types) = self.types() else {
            return false;
        };
        if types.kind == "Secret" && types.api_version == "v1" {
            return true;
        }
        self.is_partial_metadata()
            && self.annotation(LAST_APPLIED).is_some_and(|applied| {
                let field = |name: &str| raw_entry(&applied, name).map(|v| v.get().to_owned());
                field("kind").as_deref() == Some(r#""Secret""#)
                    && field("apiVersion").as_deref() == Some(r#""v1""#)
            })
    }

    /// Whether this is a `PartialObjectMetadata` (`meta.k8s.io`): an object listed or watched
    /// for its metadata only (`--metadata-only`, client-go's metadata informers), whose other
    /// fields the server left out.
    pub fn is_partial_metadata(&self) -> bool {
        self.types().is_some_and(|t| {
            t.kind == "PartialObjectMetadata" && t.api_version.starts_with("meta.k8s.io/")
        })
    }

    /// Whether objects of `resource` are core/v1 Secrets ([`is_secret`](Self::is_secret)).
    pub fn is_secret_resource(resource: &ApiResource) -> bool {
        resource.group.is_empty() && resource.version == "v1" && resource.kind == "Secret"
    }

    /// A copy with every `data` and `stringData` value replaced by [`REDACTED`]: the keys stay,
    /// being useful when debugging, and so do the other fields and every order. Whether an
    /// object is a Secret is the caller's call ([`is_secret`](Self::is_secret), or the resource
    /// for list items without `kind`).
    ///
    /// The annotation [`LAST_APPLIED`], which `kubectl apply` fills with the whole Secret as
    /// applied, values included, is redacted whole: whatever it holds (a Secret, a `List` of
    /// them, `Data` or `binaryData` spelled otherwise, text that is not JSON), no reading of it
    /// can be trusted to find every value. So is any annotation whose key differs from it only
    /// in case: keys are case-sensitive, but a copy under `Kubectl.Kubernetes.io/…` holds the
    /// same values.
    ///
    /// Every `data` and `stringData` entry is redacted, repeated ones too (and so is every copy of
    /// the annotation): readers of JSON disagree on which of two equal keys counts.
    #[must_use]
    pub fn redacted(&self) -> Object {
        Object {
            types: self.types.clone(),
            metadata: self
                .metadata
                .with_annotations(is_last_applied, |_| REDACTED.to_owned()),
            body: redacted_fields(&self.body).unwrap_or_else(|| self.body.clone()),
        }
    }

    /// `kind`, or `""` when unknown.
    pub fn kind(&self) -> &str {
        self.types().map_or("", |t| t.kind.as_str())
    }

    /// `apiVersion`, or `""` when unknown.
    pub fn api_version(&self) -> &str {
        self.types().map_or("", |t| t.api_version.as_str())
    }

    /// The top-level fields besides `apiVersion`, `kind` and `metadata`, in their original order,
    /// as raw JSON.
    pub fn fields(&self) -> Vec<(Cow<'_, str>, &RawValue)> {
        if self.body.is_empty() {
            return Vec::new();
        }
        raw_entries(&self.body)
    }

    /// One top-level field (`spec`, `status`, `data`, …) as raw JSON.
    pub fn field(&self, name: &str) -> Option<&RawValue> {
        valid_entry(&self.body, name)
    }

    /// One top-level field, parsed.
    pub fn field_value(&self, name: &str) -> Option<Value> {
        self.field(name)
            .and_then(|raw| serde_json::from_str(raw.get()).ok())
    }

    /// Sets a top-level field (replacing it where it was, appending it otherwise).
    /// `apiVersion`, `kind` and `metadata` go to their typed fields.
    pub fn set_field(&mut self, name: &str, value: &Value) -> Result<(), serde_json::Error> {
        match name {
            "apiVersion" | "kind" | "metadata" => {
                let mut whole = self.to_value();
                whole[name] = value.clone();
                *self = Object::from_value(whole)?;
                Ok(())
            }
            _ => {
                let text = serde_json::to_string(value)?;
                let raw = RawValue::from_string(text)?;
                let mut fields: Vec<(Cow<'_, str>, &RawValue)> = self.fields();
                match fields.iter_mut().find(|(key, _)| key == name) {
                    Some(slot) => slot.1 = &raw,
                    None => fields.push((Cow::Borrowed(name), &raw)),
                }
                let body = write_body(&fields);
                self.body = body;
                Ok(())
            }
        }
    }

    /// Removes a top-level field of the body; returns whether it was there.
    pub fn remove_field(&mut self, name: &str) -> bool {
        let mut fields = self.fields();
        let before = fields.len();
        fields.retain(|(key, _)| key != name);
        if fields.len() == before {
            return false;
        }
        let body = write_body(&fields);
        self.body = body;
        true
    }

    /// The bytes the body takes, for memory accounting.
    pub fn body_len(&self) -> usize {
        self.body.len()
    }
}

/// The text of a JSON object of fields (an object's body, or a whole object) with the values
/// under its `data` and `stringData` redacted ([`redact_values`]); `None` when there is nothing
/// to redact.
fn redacted_fields(text: &str) -> Option<Box<str>> {
    let fields = raw_entries(text);
    let redacted: Vec<Option<Box<RawValue>>> = fields
        .iter()
        .map(|(key, value)| match key.as_ref() {
            "data" | "stringData" => redact_values(value),
            _ => None,
        })
        .collect();
    if redacted.iter().all(Option::is_none) {
        return None;
    }
    let entries: Vec<(Cow<'_, str>, &RawValue)> = fields
        .iter()
        .zip(&redacted)
        .map(|((key, value), new)| (key.clone(), new.as_deref().unwrap_or(value)))
        .collect();
    Some(write_body(&entries))
}

/// A `data` or `stringData` value redacted: a map with each value replaced by [`REDACTED`], keys
/// in their order; anything else but `null` replaced whole. `None` for `null`.
fn redact_values(value: &RawValue) -> Option<Box<RawValue>> {
    // A JSON string always makes a raw value.
    let redacted = RawValue::from_string(format!("\"{REDACTED}\"")).ok()?;
    match value.get().as_bytes().first() {
        Some(b'{') => {
            let entries: Vec<(Cow<'_, str>, &RawValue)> = raw_entries(value.get())
                .into_iter()
                .map(|(key, _)| (key, &*redacted))
                .collect();
            Some(object_json(&entries))
        }
        _ if value.get() == "null" => None,
        _ => Some(redacted),
    }
}

/// Whether an annotation key is [`LAST_APPLIED`] in any case.
pub fn is_last_applied(key: &str) -> bool {
    key.eq_ignore_ascii_case(LAST_APPLIED)
}

/// A JSON object of `entries` (`{}` for none).
fn object_json(entries: &[(Cow<'_, str>, &RawValue)]) -> Box<RawValue> {
    let text = match write_body(entries) {
        // `write_body` writes nothing for no entries.
        empty if empty.is_empty() => "{}".to_owned(),
        text => text.into_string(),
    };
    // Keys and values came from JSON, so the object is JSON.
    RawValue::from_string(text).unwrap_or_else(|_| unreachable!("an object of JSON values"))
}

/// `json`'s entries that `keep` keeps, or `None` when it keeps them all.
fn kept_entries(json: &RawValue, keep: impl Fn(&str, &RawValue) -> bool) -> Option<Box<RawValue>> {
    let entries = raw_entries(json.get());
    let before = entries.len();
    let kept: Vec<_> = entries.into_iter().filter(|(k, v)| keep(k, v)).collect();
    (kept.len() < before).then(|| object_json(&kept))
}

fn write_body(fields: &[(Cow<'_, str>, &RawValue)]) -> Box<str> {
    if fields.is_empty() {
        return Box::default();
    }
    let mut out = String::from("{");
    for (i, (key, value)) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        // Keys came from JSON, so they serialize.
        out.push_str(&serde_json::to_string(key).unwrap_or_default());
        out.push(':');
        out.push_str(value.get());
    }
    out.push('}');
    out.into_boxed_str()
}

impl PartialEq for Object {
    fn eq(&self, other: &Self) -> bool {
        self.types() == other.types() && self.metadata == other.metadata && self.body == other.body
    }
}

impl fmt::Debug for Object {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Object")
            .field("types", &self.types())
            .field("metadata", &self.metadata)
            .field("body", &&*self.body)
            .finish()
    }
}

impl Resource for Object {
    type DynamicType = ApiResource;
    type Scope = DynamicResourceScope;

    fn kind(dt: &ApiResource) -> Cow<'_, str> {
        dt.kind.as_str().into()
    }

    fn group(dt: &ApiResource) -> Cow<'_, str> {
        dt.group.as_str().into()
    }

    fn version(dt: &ApiResource) -> Cow<'_, str> {
        dt.version.as_str().into()
    }

    fn api_version(dt: &ApiResource) -> Cow<'_, str> {
        dt.api_version.as_str().into()
    }

    fn plural(dt: &ApiResource) -> Cow<'_, str> {
        dt.plural.as_str().into()
    }

    fn meta(&self) -> &ObjectMeta {
        self.metadata.get()
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        self.metadata.make_mut()
    }
}

#[cfg(test)]
#[path = "object_tests.rs"]
mod tests;
