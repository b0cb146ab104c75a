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

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::Resource;
use kube::core::{ApiResource, DynamicResourceScope, TypeMeta};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::ser::{self, SerializeMap, SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::timestamp::Rfc3339;

pub(crate) mod json_text;
mod meta;

use json_text::{Key, string_end};
pub use json_text::{describe_raw, raw_entries, raw_entry};
pub(crate) use json_text::{nesting, valid_entry};
use meta::Meta;

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
#[derive(Clone, Default)]
pub struct Object {
    /// `apiVersion` and `kind`; list items on the wire lack them (the Reflector fills them in).
    pub types: Option<TypeMeta>,
    metadata: Meta,
    /// The other top-level fields as one JSON object text (`{"spec":…,"status":…}`), or empty
    /// when there are none. Always valid JSON: only this module writes it.
    body: Box<str>,
}

impl Object {
    /// An object of `resource`'s kind named `name`, with no fields besides metadata.
    pub fn new(name: &str, resource: &ApiResource) -> Self {
        Object {
            types: Some(TypeMeta {
                api_version: resource.api_version.clone(),
                kind: resource.kind.clone(),
            }),
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
    pub fn from_json_text(json: &str) -> Result<Self, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_str(json);
        let obj = de.deserialize_map(ObjectVisitor::<Borrow>(PhantomData))?;
        de.end()?;
        Ok(obj)
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
    /// heap (the allocator's rounding and the cache's keys and indices not included). For the
    /// summary's cache size, and to compare with the JSON the objects came from.
    pub fn footprint(&self) -> usize {
        let types = self
            .types
            .as_ref()
            .map_or(0, |t| t.api_version.capacity() + t.kind.capacity());
        std::mem::size_of::<Self>() + types + self.metadata.heap_size() + self.body.len()
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
        let Some(types) = &self.types else {
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
        self.types.as_ref().is_some_and(|t| {
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
        self.types.as_ref().map_or("", |t| t.kind.as_str())
    }

    /// `apiVersion`, or `""` when unknown.
    pub fn api_version(&self) -> &str {
        self.types.as_ref().map_or("", |t| t.api_version.as_str())
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
        self.types == other.types && self.metadata == other.metadata && self.body == other.body
    }
}

impl fmt::Debug for Object {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Object")
            .field("types", &self.types)
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

impl Serialize for Object {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let fields = self.fields();
        let mut map =
            serializer.serialize_map(Some(1 + 2 * self.types.is_some() as usize + fields.len()))?;
        if let Some(types) = &self.types {
            map.serialize_entry("apiVersion", &types.api_version)?;
            map.serialize_entry("kind", &types.kind)?;
        }
        map.serialize_entry(
            "metadata",
            &MetaOut {
                meta: &self.metadata,
                managed_fields: true,
            },
        )?;
        for (key, raw) in &fields {
            map.serialize_entry(key.as_ref(), &Transcoded(raw))?;
        }
        map.end()
    }
}

/// [`Meta`] serialized with any serializer.
pub(crate) struct MetaOut<'a> {
    meta: &'a Meta,
    managed_fields: bool,
}

impl<'a> MetaOut<'a> {
    /// `obj`'s metadata, with its managedFields if `managed_fields`.
    pub(crate) fn new(obj: &'a Object, managed_fields: bool) -> Self {
        MetaOut {
            meta: &obj.metadata,
            managed_fields,
        }
    }
}

impl Serialize for MetaOut<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.meta.serialize(self.managed_fields, serializer)
    }
}

/// [`Object::json`] and [`Object::json_meta`].
struct JsonOut<'a> {
    obj: &'a Object,
    managed_fields: bool,
    body: bool,
}

impl Serialize for JsonOut<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let obj = self.obj;
        let mut map = serializer.serialize_map(None)?;
        if let Some(types) = &obj.types {
            map.serialize_entry("apiVersion", &types.api_version)?;
            map.serialize_entry("kind", &types.kind)?;
        }
        map.serialize_entry("metadata", &*obj.metadata.json(self.managed_fields))?;
        if self.body {
            for (key, raw) in &obj.fields() {
                map.serialize_entry(key.as_ref(), raw)?;
            }
        }
        map.end()
    }
}

/// `metadata` exactly as k8s-openapi serializes it (same struct, fields, order and text), with
/// its timestamps written without a general formatter, and optionally without managedFields.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Metadata<'a> {
    meta: &'a ObjectMeta,
    managed_fields: bool,
}

impl<'a> Metadata<'a> {
    /// `meta`, with its managedFields if `managed_fields`.
    pub(crate) fn new(meta: &'a ObjectMeta, managed_fields: bool) -> Self {
        Metadata {
            meta,
            managed_fields,
        }
    }
}

impl Serialize for Metadata<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // No `..`: a field a later k8s-openapi adds fails to compile here instead of going missing.
        let ObjectMeta {
            annotations,
            creation_timestamp,
            deletion_grace_period_seconds,
            deletion_timestamp,
            finalizers,
            generate_name,
            generation,
            labels,
            managed_fields,
            name,
            namespace,
            owner_references,
            resource_version,
            self_link,
            uid,
        } = self.meta;
        let managed_fields = managed_fields.as_ref().filter(|_| self.managed_fields);
        let creation_timestamp = creation_timestamp.as_ref().map(TimeOut);
        let deletion_timestamp = deletion_timestamp.as_ref().map(TimeOut);
        // The fields that are set, in k8s-openapi's order: counted first, as
        // `serialize_struct` wants the length, then written.
        macro_rules! present_fields {
            ($($key:literal => $value:ident),+ $(,)?) => {{
                let len = [$($value.is_some()),+].into_iter().filter(|set| *set).count();
                let mut out = serializer.serialize_struct("ObjectMeta", len)?;
                $(
                    if let Some(value) = $value.as_ref() {
                        out.serialize_field($key, value)?;
                    }
                )+
                out.end()
            }};
        }
        present_fields! {
            "annotations" => annotations,
            "creationTimestamp" => creation_timestamp,
            "deletionGracePeriodSeconds" => deletion_grace_period_seconds,
            "deletionTimestamp" => deletion_timestamp,
            "finalizers" => finalizers,
            "generateName" => generate_name,
            "generation" => generation,
            "labels" => labels,
            "managedFields" => managed_fields,
            "name" => name,
            "namespace" => namespace,
            "ownerReferences" => owner_references,
            "resourceVersion" => resource_version,
            "selfLink" => self_link,
            "uid" => uid,
        }
    }
}

/// A `Time` as k8s-openapi serializes it.
struct TimeOut<'a>(&'a Time);

impl Serialize for TimeOut<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match Rfc3339::seconds(self.0.0) {
            Some(text) => serializer.serialize_newtype_struct("Time", text.as_str()),
            None => self.0.serialize(serializer),
        }
    }
}

/// Serializes raw JSON text with any serializer.
struct Transcoded<'a>(&'a RawValue);

impl Serialize for Transcoded<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        deep_json(
            self.0.get(),
            |de| serde_transcode::transcode(de, serializer),
            ser::Error::custom,
        )
    }
}

impl<'de> Deserialize<'de> for Object {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ObjectVisitor::<Transcode>(PhantomData))
    }
}

/// An [`Object`] decoded as [`Object::from_json`] does, as a field of a type that serde_json
/// decodes from text (`from_str`): it borrows the values' text from the input, which other
/// deserializers (`from_reader`, `from_value`, serde's buffering for untagged or flattened
/// fields) cannot lend: they fail with "expected any valid JSON value".
#[derive(Debug)]
pub(crate) struct FromJson(pub Object);

impl<'de> Deserialize<'de> for FromJson {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_map(ObjectVisitor::<Borrow>(PhantomData))
            .map(FromJson)
    }
}

/// serde_json's message without its position, which counts from the start of the text it
/// parsed: misleading when that text is part of a larger input.
pub(crate) fn without_position(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rsplit_once(" at line ") {
        Some((message, _)) => message.to_owned(),
        None => text,
    }
}

/// Reads an object's fields: `apiVersion` and `kind` typed, the rest as text, each value read
/// as `V` says.
struct ObjectVisitor<V>(PhantomData<V>);

impl<'de, V: ValueText> Visitor<'de> for ObjectVisitor<V> {
    type Value = Object;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Kubernetes object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Object, A::Error> {
        let mut api_version = None;
        let mut kind = None;
        let mut metadata = None;
        let mut body = String::new();
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            match key.as_ref() {
                "apiVersion" => api_version = map.next_value::<Option<String>>()?,
                "kind" => kind = map.next_value::<Option<String>>()?,
                "metadata" => {
                    let json = V::value(&mut map, "metadata")?;
                    if json.get() != "null" {
                        metadata = Some(Meta::from_json(json).map_err(metadata_error::<A::Error>)?);
                    }
                }
                _ => {
                    body.push(if body.is_empty() { '{' } else { ',' });
                    push_key(&mut body, &key);
                    body.push(':');
                    V::append(&mut map, &key, &mut body)?;
                }
            }
        }
        Ok(assemble(api_version, kind, metadata, body))
    }
}

/// How [`ObjectVisitor`] turns the value of the field `key` into compact JSON text.
trait ValueText {
    /// The next value's text.
    fn value<'de, A: MapAccess<'de>>(map: &mut A, key: &str) -> Result<Box<RawValue>, A::Error>;
    /// Appends the next value's text to `out`.
    fn append<'de, A: MapAccess<'de>>(
        map: &mut A,
        key: &str,
        out: &mut String,
    ) -> Result<(), A::Error>;
}

/// Transcodes each value: works with any deserializer, whose own limits bound the nesting.
struct Transcode;

impl ValueText for Transcode {
    fn value<'de, A: MapAccess<'de>>(map: &mut A, _key: &str) -> Result<Box<RawValue>, A::Error> {
        map.next_value_seed(CaptureRaw)
    }

    fn append<'de, A: MapAccess<'de>>(
        map: &mut A,
        _key: &str,
        out: &mut String,
    ) -> Result<(), A::Error> {
        map.next_value_seed(Capture(out))
    }
}

/// Borrows each value's text from serde_json's input and copies it when it can be kept as it is
/// ([`copyable`]), transcoding it otherwise.
struct Borrow;

impl ValueText for Borrow {
    fn value<'de, A: MapAccess<'de>>(map: &mut A, key: &str) -> Result<Box<RawValue>, A::Error> {
        let raw = map.next_value::<&'de RawValue>()?;
        if copyable(raw.get()) {
            return Ok(raw.to_owned());
        }
        let mut text = String::new();
        push_compact(&mut text, raw, key)?;
        RawValue::from_string(text).map_err(value_error)
    }

    fn append<'de, A: MapAccess<'de>>(
        map: &mut A,
        key: &str,
        out: &mut String,
    ) -> Result<(), A::Error> {
        let raw = map.next_value::<&'de RawValue>()?;
        if copyable(raw.get()) {
            out.push_str(raw.get());
            Ok(())
        } else {
            push_compact(out, raw, key)
        }
    }
}

/// An error decoding one value on its own, with the position in it (the reader's position is
/// past the value).
fn value_error<E: de::Error>(error: serde_json::Error) -> E {
    E::custom(format_args!(
        "{} (at column {} of the value)",
        without_position(&error),
        error.column()
    ))
}

/// The object the visitors read: `body` is the other fields' text without its closing brace.
fn assemble(
    api_version: Option<String>,
    kind: Option<String>,
    metadata: Option<Meta>,
    mut body: String,
) -> Object {
    if !body.is_empty() {
        body.push('}');
    }
    let types = (api_version.is_some() || kind.is_some()).then(|| TypeMeta {
        api_version: api_version.unwrap_or_default(),
        kind: kind.unwrap_or_default(),
    });
    Object {
        types,
        metadata: metadata.unwrap_or_default(),
        body: body.into_boxed_str(),
    }
}

/// A `metadata` that is not an `ObjectMeta`, said as such (serde_json's position in the metadata
/// text would mislead: the reader's position is what counts).
fn metadata_error<E: de::Error>(error: serde_json::Error) -> E {
    E::custom(format_args!(
        "in metadata, at its column {}: {}",
        error.column(),
        without_position(&error)
    ))
}

/// Appends a map key as a JSON string.
fn push_key(out: &mut String, key: &str) {
    if key.bytes().any(|b| b == b'"' || b == b'\\' || b < b' ') {
        // Strings always serialize.
        out.push_str(&serde_json::to_string(key).unwrap_or_default());
    } else {
        out.push('"');
        out.push_str(key);
        out.push('"');
    }
}

/// The deepest an object may be nested, counting the object itself as one level: deeper ones are
/// refused where they are read. The API server refuses deeper request bodies (its JSON decoder,
/// sigs.k8s.io/json, keeps Go's `encoding/json` scanner and its `maxNestingDepth` of 10000), so it
/// never serves one; only a hand-made recording or a broken server sends one.
///
/// Texts this deep are parsed without serde_json's recursion limit (128 levels) and on a stack
/// that grows as needed ([`deep_json`]). Readers that build trees of them (`serde_json::Value`,
/// as the change summary does) keep serde_json's limit instead and treat a deeper value as one
/// opaque value.
pub const MAX_DEPTH: usize = 10_000;

/// The deepest a field of an object may be nested.
const MAX_FIELD_DEPTH: usize = MAX_DEPTH - 1;

/// Whether a value's JSON text can be kept as it is. serde_json checked its syntax when it lent
/// the text, but not what decoding it needs, and every output must be able to decode what the
/// cache holds: escapes that decode (a lone surrogate passes the check), numbers in range,
/// nesting within [`MAX_DEPTH`]. So a value with whitespace between its tokens (the cache
/// holds compact text), `\\u` escapes (the API server writes `\\u0026` for `&`), numbers with
/// an exponent or of more than 18 characters (Kubernetes writes quantities as strings), or deep
/// nesting is transcoded instead, which normalises it or refuses it where it is read.
///
/// Most values hold none of that, which [`plainly_copyable`] sees in loops the compiler
/// vectorizes; the others get one pass that jumps through strings.
fn copyable(text: &str) -> bool {
    plainly_copyable(text) || closely_copyable(text)
}

/// [`copyable`] for text without whitespace or control bytes, `\\u`, anything that may be a
/// number (a digit or `-` after `":`, `[` or `,`, or first) and with at most
/// [`MAX_FIELD_DEPTH`] opening brackets. False for some copyable text (`"a,1"` looks like a
/// number), never true for text that is not.
fn plainly_copyable(text: &str) -> bool {
    let bytes = text.as_bytes();
    let n = bytes.len();
    if n < 3 {
        return closely_copyable(text);
    }
    // Equal-length views of each byte and the two before it, and byte-wide flags and counts
    // without branches (counted per block of 128, so that no lane widens), so that the loop is
    // vectorized 16 bytes at a time.
    let len = n - 2;
    let (a, b, c) = (&bytes[..len], &bytes[1..len + 1], &bytes[2..]);
    let mut suspect = 0u8;
    let mut openers = 0usize;
    let mut start = 0;
    while start < len {
        let end = (start + 128).min(len);
        let mut count = 0u8;
        for i in start..end {
            let (a, b, c) = (a[i], b[i], c[i]);
            let number_start = u8::from(c.wrapping_sub(b'0') < 10) | u8::from(c == b'-');
            let after_key = u8::from(a == b'"') & u8::from(b == b':');
            let in_array = u8::from(b == b'[') | u8::from(b == b',');
            suspect |= u8::from(c <= b' ') | ((after_key | in_array) & number_start);
            count += u8::from(c == b'{') | u8::from(c == b'[');
        }
        openers += usize::from(count);
        start = end;
    }
    let head = (bytes[0], bytes[1]);
    let head_suspect = head.0 <= b' '
        || head.1 <= b' '
        || head.0.is_ascii_digit()
        || head.0 == b'-'
        || ((head.0 == b'[' || head.0 == b',') && (head.1.is_ascii_digit() || head.1 == b'-'));
    suspect == 0 && !head_suspect && openers + 2 <= MAX_FIELD_DEPTH && !text.contains("\\u")
}

/// [`copyable`], looking at each token.
fn closely_copyable(text: &str) -> bool {
    if text.contains("\\u") {
        return false;
    }
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' => {
                let Some(end) = string_end(bytes, i) else {
                    return false;
                };
                i = end;
                continue;
            }
            b'{' | b'[' => {
                depth += 1;
                if depth > MAX_FIELD_DEPTH {
                    return false;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'-' | b'0'..=b'9' => {
                let number = bytes[i..]
                    .iter()
                    .take_while(|b| matches!(b, b'-' | b'+' | b'.' | b'0'..=b'9' | b'e' | b'E'))
                    .count();
                let exponent = bytes[i..i + number]
                    .iter()
                    .any(|b| matches!(b, b'e' | b'E'));
                if exponent || number > 18 {
                    return false;
                }
                i += number;
                continue;
            }
            b if b <= b' ' => return false,
            _ => {}
        }
        i += 1;
    }
    true
}

/// Appends the value of the field `key` without its whitespace; an error when it is nested
/// deeper than [`MAX_FIELD_DEPTH`].
fn push_compact<E: de::Error>(out: &mut String, raw: &RawValue, key: &str) -> Result<(), E> {
    if nesting(raw.get()) > MAX_FIELD_DEPTH {
        return Err(E::custom(format_args!(
            "{key} is nested deeper than {MAX_DEPTH} levels, which the API server never serves"
        )));
    }
    deep_json(raw.get(), |de| Capture(out).deserialize(de), |e| e).map_err(value_error)
}

/// `read` with serde_json's reader of `text`, without its recursion limit and on a stack that
/// grows while the reading (and whatever `read` does on the way, such as writing a serializer)
/// nests deeper: for object texts, whose nesting is bounded by [`MAX_DEPTH`] where they enter.
/// Threads have small stacks (2 MiB for tokio's workers and test threads), and a debug build
/// takes kilobytes per level. Text after the value is an error, made by `trailing`.
pub(crate) fn deep_json<'de, T, E>(
    text: &'de str,
    read: impl FnOnce(
        serde_stacker::Deserializer<&mut serde_json::Deserializer<serde_json::de::StrRead<'de>>>,
    ) -> Result<T, E>,
    trailing: impl FnOnce(serde_json::Error) -> E,
) -> Result<T, E> {
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let value = read(serde_stacker::Deserializer::new(&mut de))?;
    de.end().map_err(trailing)?;
    Ok(value)
}

/// Appends one value, whatever its shape, to a JSON text.
struct Capture<'a>(&'a mut String);

impl<'de> DeserializeSeed<'de> for Capture<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        // serde_json writes only UTF-8, so appending through the String's bytes keeps it valid.
        let buf = std::mem::take(self.0).into_bytes();
        let mut ser = serde_json::Serializer::new(buf);
        let result = serde_transcode::transcode(deserializer, &mut ser);
        let bytes = ser.into_inner();
        *self.0 = String::from_utf8(bytes).map_err(de::Error::custom)?;
        result.map_err(de::Error::custom)
    }
}

/// One value, whatever its shape, as JSON text.
struct CaptureRaw;

impl<'de> DeserializeSeed<'de> for CaptureRaw {
    type Value = Box<RawValue>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Box<RawValue>, D::Error> {
        // `to_raw_value` takes serde_json's output as it is, without parsing it again.
        serde_json::value::to_raw_value(&serde_transcode::Transcoder::new(deserializer))
            .map_err(de::Error::custom)
    }
}

#[cfg(test)]
#[path = "object_tests.rs"]
mod tests;
