//! `metadata` as an [`Object`](super::Object) holds it: as the JSON text it arrived as, or typed.
//!
//! Every delta reads an object's key (`namespace/name`) and resourceVersion, and outputs copy its
//! metadata; little else reads the rest (labels for a label index, owners for the timeline).
//! Decoding every object's metadata into an `ObjectMeta` (a dozen allocations for names, labels
//! and annotations) and serializing it back for every output line was most of a replay's work.
//! So metadata that arrives as JSON stays that text, with the three key fields located in it.
//! It is checked against `ObjectMeta`'s shape when it arrives, so a malformed object is still an
//! error where it is read. The `ObjectMeta` is decoded only when asked for, and metadata changed
//! in code is held typed.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    ManagedFieldsEntry, ObjectMeta, OwnerReference, Time,
};
use once_cell::race::OnceBox;
use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, Serializer};
use serde_json::value::RawValue;

use super::json_text::{
    Key, raw_entries, valid_entry, valid_entry_text, valid_member, valid_string_entry,
};
use super::{Metadata, Transcoded, kept_entries, object_json};

/// An object's metadata.
#[derive(Clone)]
pub(crate) enum Meta {
    /// As it arrived.
    Text(MetaText),
    /// Built or changed in code.
    Typed(Box<ObjectMeta>),
}

/// Metadata as compact JSON text whose shape is `ObjectMeta`'s.
///
/// Every cached object holds one, so it is kept to 40 bytes: spans of four bytes with a
/// sentinel for "absent", and the decoded `ObjectMeta` behind one pointer (`OnceBox`: two threads
/// asking at once may both decode it, and one copy is kept; `OnceLock<Box<_>>` is two words).
/// A key field beyond a span's reach (64 KiB into the text, which the API server's field order
/// makes rare: name, namespace and resourceVersion come before labels, annotations and
/// managedFields) makes the metadata typed instead, as an escaped one does.
#[derive(Clone)]
pub(crate) struct MetaText {
    json: Box<RawValue>,
    name: Span,
    namespace: Span,
    resource_version: Span,
    managed_fields: bool,
    /// `managedFields` holds only what [`Object::trim_managed_fields`](super::Object) keeps,
    /// which says who wrote the object but is not the object's managedFields: no output shows it.
    trimmed: bool,
    /// The `ObjectMeta`, once someone asked for a reference to it.
    decoded: OnceBox<ObjectMeta>,
}

/// Where a string value without escapes sits in the text, or [`Span::NONE`].
#[derive(Clone, Copy, PartialEq, Eq)]
struct Span {
    start: u16,
    len: u16,
}

impl Span {
    /// No such field. No span made by [`new`](Span::new) starts there.
    const NONE: Span = Span {
        start: u16::MAX,
        len: 0,
    };

    /// The value at `start..start + len`, if a span reaches it.
    fn new(start: usize, len: usize) -> Option<Span> {
        match (u16::try_from(start), u16::try_from(len)) {
            (Ok(start), Ok(len)) if start != u16::MAX => Some(Span { start, len }),
            _ => None,
        }
    }

    fn from(span: Option<Span>) -> Span {
        span.unwrap_or(Span::NONE)
    }

    fn get(self) -> Option<Span> {
        (self != Span::NONE).then_some(self)
    }
}

/// Where the key fields are in metadata text that [`read::compact`](super::read) checked, as
/// byte ranges of their unescaped contents.
pub(super) struct TextSpans {
    pub(super) name: Option<(usize, usize)>,
    pub(super) namespace: Option<(usize, usize)>,
    pub(super) resource_version: Option<(usize, usize)>,
    pub(super) managed_fields: bool,
}

impl Default for Meta {
    fn default() -> Self {
        Meta::Typed(Box::default())
    }
}

impl Meta {
    /// Metadata from its compact JSON text; an error when the text is not an `ObjectMeta`.
    pub(crate) fn from_json(json: Box<RawValue>) -> Result<Meta, serde_json::Error> {
        let json = without_nulls(json);
        let text = json.get();
        if !text.starts_with('{') {
            // ObjectMeta says what is wrong (`Shape`, being derived, would also take a sequence).
            return serde_json::from_str::<ObjectMeta>(text)
                .map(|meta| Meta::Typed(Box::new(meta)));
        }
        let shape: Shape<'_> = serde_json::from_str(text)?;
        let span = |value: Option<Key<'_>>| -> Result<Option<Span>, ()> {
            match value {
                None => Ok(None),
                Some(Key(Cow::Borrowed(s))) => {
                    let start = s.as_ptr() as usize - text.as_ptr() as usize;
                    Span::new(start, s.len()).map(Some).ok_or(())
                }
                // Escaped: the text does not hold the value itself.
                Some(Key(Cow::Owned(_))) => Err(()),
            }
        };
        let spans = (
            span(shape.name),
            span(shape.namespace),
            span(shape.resource_version),
        );
        match spans {
            (Ok(name), Ok(namespace), Ok(resource_version)) => Ok(Meta::Text(MetaText {
                name: Span::from(name),
                namespace: Span::from(namespace),
                resource_version: Span::from(resource_version),
                managed_fields: shape.managed_fields.is_some(),
                trimmed: false,
                decoded: OnceBox::new(),
                json,
            })),
            _ => Ok(Meta::Typed(Box::new(decode(&json)?))),
        }
    }

    /// Metadata text that [`read::compact`](super::read) read: compact JSON of `ObjectMeta`'s
    /// shape, without `null`s, whose key fields are at `spans` (what [`from_json`](Self::from_json)
    /// makes of the same text, without parsing it again). `None` when a key field is beyond a
    /// span's reach: then only [`from_json`](Self::from_json) makes it, typed.
    pub(super) fn checked_text(json: &str, spans: TextSpans) -> Option<Meta> {
        let span = |range: Option<(usize, usize)>| match range {
            None => Some(Span::NONE),
            Some((start, end)) => Span::new(start, end - start),
        };
        let (name, namespace, resource_version) = (
            span(spans.name)?,
            span(spans.namespace)?,
            span(spans.resource_version)?,
        );
        // SAFETY: `read::compact` read `json` whole as one JSON object, without whitespace
        // around it (debug builds check it again).
        let json = unsafe { RawValue::from_string_unchecked(json.to_owned()) };
        Some(Meta::Text(MetaText {
            json,
            name,
            namespace,
            resource_version,
            managed_fields: spans.managed_fields,
            trimmed: false,
            decoded: OnceBox::new(),
        }))
    }

    /// `metadata.name`.
    pub(crate) fn name(&self) -> Option<&str> {
        match self {
            Meta::Text(m) => m.get(m.name),
            Meta::Typed(m) => m.name.as_deref(),
        }
    }

    /// `metadata.namespace`.
    pub(crate) fn namespace(&self) -> Option<&str> {
        match self {
            Meta::Text(m) => m.get(m.namespace),
            Meta::Typed(m) => m.namespace.as_deref(),
        }
    }

    /// `metadata.resourceVersion`.
    pub(crate) fn resource_version(&self) -> Option<&str> {
        match self {
            Meta::Text(m) => m.get(m.resource_version),
            Meta::Typed(m) => m.resource_version.as_deref(),
        }
    }

    /// The value under `key` in the string map `map` (`labels`, `annotations`), borrowed from the
    /// text unless escaped.
    pub(crate) fn map_value(&self, map: &str, key: &str) -> Option<Cow<'_, str>> {
        match self {
            Meta::Text(m) => valid_string_entry(valid_entry_text(m.json.get(), map)?, key),
            Meta::Typed(m) => string_map(m, map)?
                .get(key)
                .map(|v| Cow::Borrowed(v.as_str())),
        }
    }

    /// Every entry of the string map `map` (`labels`, `annotations`), borrowed from the text
    /// unless escaped.
    pub(crate) fn map_entries(&self, map: &str) -> Vec<(Cow<'_, str>, Cow<'_, str>)> {
        match self {
            Meta::Text(m) => {
                let mut entries: Vec<(Cow<'_, str>, Cow<'_, str>)> = Vec::new();
                let text = valid_entry(m.json.get(), map);
                for (key, value) in text.map(|t| raw_entries(t.get())).unwrap_or_default() {
                    let Ok(Key(value)) = serde_json::from_str::<Key<'_>>(value.get()) else {
                        continue;
                    };
                    // Of repeated keys the last counts, in the place of the first.
                    match entries.iter_mut().find(|(k, _)| *k == key) {
                        Some(entry) => entry.1 = value,
                        None => entries.push((key, value)),
                    }
                }
                entries
            }
            Meta::Typed(m) => string_map(m, map)
                .into_iter()
                .flatten()
                .map(|(k, v)| (Cow::Borrowed(k.as_str()), Cow::Borrowed(v.as_str())))
                .collect(),
        }
    }

    /// The `ObjectMeta`, decoded once and kept (as long as the object).
    pub(crate) fn get(&self) -> &ObjectMeta {
        match self {
            Meta::Text(m) => m.decoded.get_or_init(|| Box::new(m.decode())),
            Meta::Typed(m) => m,
        }
    }

    /// The `ObjectMeta`, decoded for this call unless it already was: for readers that should not
    /// make the object keep a decoded copy.
    pub(crate) fn decoded(&self) -> Cow<'_, ObjectMeta> {
        match self {
            Meta::Text(m) => match m.decoded.get() {
                Some(meta) => Cow::Borrowed(meta),
                None => Cow::Owned(m.decode()),
            },
            Meta::Typed(m) => Cow::Borrowed(m),
        }
    }

    /// The `ObjectMeta` to change; the metadata is typed from now on.
    pub(crate) fn make_mut(&mut self) -> &mut ObjectMeta {
        if let Meta::Text(m) = self {
            // `OnceBox` lends its value only: a copy of what `get` decoded, as rare as a change
            // after a look.
            let mut meta = Box::new(m.decoded.get().cloned().unwrap_or_else(|| m.decode()));
            if m.trimmed {
                // Typed metadata cannot say they are not the object's own.
                meta.managed_fields = None;
            }
            *self = Meta::Typed(meta);
        }
        match self {
            Meta::Typed(m) => m,
            Meta::Text(_) => unreachable!("made typed above"),
        }
    }

    /// Drops `managedFields`.
    pub(crate) fn strip_managed_fields(&mut self) {
        match self {
            Meta::Text(m) if m.managed_fields => {
                if let Some(stripped) = m.without_managed_fields_member() {
                    *m = stripped;
                    return;
                }
                let json = m.without_managed_fields();
                // The same entries as before less one, so still an ObjectMeta.
                if let Ok(meta) = Meta::from_json(json.into_owned()) {
                    *self = meta;
                }
            }
            Meta::Text(_) => {}
            Meta::Typed(m) => m.managed_fields = None,
        }
    }

    /// Replaces `managedFields` by `entries`, what [`Object::trim_managed_fields`](super::Object)
    /// keeps of them, which no output shows. Typed metadata has no room to say that they are not
    /// the object's managedFields, nor has text that is not compact around them: those are
    /// stripped instead.
    pub(crate) fn set_trimmed_managed_fields(&mut self, entries: &[ManagedFieldsEntry]) {
        let replaced = match (&*self, serde_json::to_string(entries)) {
            (Meta::Text(m), Ok(text)) => m.with_managed_fields_member(Some(&text)),
            _ => None,
        };
        match replaced {
            Some(replaced) => *self = Meta::Text(replaced),
            None => self.strip_managed_fields(),
        }
    }

    /// The `managedFields` value's JSON text, trimmed or not, if there is one.
    pub(crate) fn managed_fields_json(&self) -> Option<Cow<'_, str>> {
        match self {
            Meta::Text(m) if m.managed_fields => {
                valid_entry_text(m.json.get(), "managedFields").map(Cow::Borrowed)
            }
            Meta::Text(_) => None,
            Meta::Typed(m) => {
                let entries = m.managed_fields.as_ref()?;
                serde_json::to_string(entries).ok().map(Cow::Owned)
            }
        }
    }

    /// A copy with the value of every annotation whose key `is_key` accepts replaced by what
    /// `redact` makes of it (every copy of a key, and of `annotations`, when repeated), in the
    /// form it is held in.
    pub(crate) fn with_annotations(
        &self,
        is_key: impl Fn(&str) -> bool,
        redact: impl Fn(&str) -> String,
    ) -> Meta {
        match self {
            Meta::Text(m) => {
                let rewritten = |value: &RawValue| -> Option<Box<RawValue>> {
                    let Ok(Key(text)) = serde_json::from_str::<Key<'_>>(value.get()) else {
                        return Some(string_json(&redact("")));
                    };
                    Some(string_json(&redact(&text)))
                };
                let annotations = |value: &RawValue| -> Option<Box<RawValue>> {
                    map_entries_json(value, |k, v| is_key(k).then(|| rewritten(v)).flatten())
                };
                map_entries_json(&m.json, |k, v| {
                    (k == "annotations").then(|| annotations(v)).flatten()
                })
                .and_then(|json| Meta::from_json(json).ok())
                .map(|mut meta| {
                    // The same managedFields as before, trimmed or not.
                    if let Meta::Text(new) = &mut meta {
                        new.trimmed = m.trimmed;
                    }
                    meta
                })
                .unwrap_or_else(|| self.clone())
            }
            Meta::Typed(m) => {
                let mut meta = m.clone();
                for (key, value) in meta.annotations.iter_mut().flatten() {
                    if is_key(key) {
                        *value = redact(value);
                    }
                }
                Meta::Typed(meta)
            }
        }
    }

    /// Whether it is held as the text it arrived as.
    pub(crate) fn is_text(&self) -> bool {
        matches!(self, Meta::Text(_))
    }

    /// The text, when held as text.
    /// The bytes the metadata holds on the heap: its text, or (typed, or decoded beside its
    /// text) about as much as its JSON.
    pub(crate) fn heap_size(&self) -> usize {
        let typed = |meta: &ObjectMeta| {
            std::mem::size_of::<ObjectMeta>() + serde_json::to_string(meta).map_or(0, |t| t.len())
        };
        match self {
            Meta::Text(m) => m.json.get().len() + m.decoded.get().map_or(0, &typed),
            Meta::Typed(m) => typed(m),
        }
    }

    pub(crate) fn text(&self) -> Option<&RawValue> {
        match self {
            Meta::Text(m) => Some(&m.json),
            Meta::Typed(_) => None,
        }
    }

    /// Serializes the metadata, with `managedFields` only if `managed_fields`, with any
    /// serializer.
    pub(crate) fn serialize<S: Serializer>(
        &self,
        managed_fields: bool,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match self {
            Meta::Text(m) if !m.managed_fields || (managed_fields && !m.trimmed) => {
                Transcoded(&m.json).serialize(serializer)
            }
            Meta::Text(m) => Transcoded(&m.without_managed_fields()).serialize(serializer),
            Meta::Typed(m) => Metadata::new(m, managed_fields).serialize(serializer),
        }
    }

    /// The metadata as JSON text, for serde_json serializers to copy as is.
    pub(crate) fn json(&self, managed_fields: bool) -> Cow<'_, RawValue> {
        match self {
            Meta::Text(m) if !m.managed_fields || (managed_fields && !m.trimmed) => {
                Cow::Borrowed(&m.json)
            }
            Meta::Text(m) => m.without_managed_fields(),
            Meta::Typed(m) => {
                // ObjectMeta always serializes to JSON.
                serde_json::value::to_raw_value(&Metadata::new(m, managed_fields))
                    .map(Cow::Owned)
                    .unwrap_or_else(|_| Cow::Owned(object_json(&[])))
            }
        }
    }
}

impl MetaText {
    fn get(&self, span: Span) -> Option<&str> {
        let span = span.get()?;
        let start = span.start as usize;
        self.json.get().get(start..start + span.len as usize)
    }

    fn decode(&self) -> ObjectMeta {
        // The text was checked against ObjectMeta's shape when it arrived, which is at least as
        // strict as ObjectMeta's own decoding; should they ever disagree, the key fields survive.
        decode(&self.json).unwrap_or_else(|_| ObjectMeta {
            name: self.get(self.name).map(str::to_owned),
            namespace: self.get(self.namespace).map(str::to_owned),
            resource_version: self.get(self.resource_version).map(str::to_owned),
            ..ObjectMeta::default()
        })
    }

    /// The same metadata without its `managedFields` member (`Shape` allows it once), every
    /// other byte of the text as it was and the key fields' spans moved: no parse, for the
    /// Reflector's default transform on every object. `None` when the text around the member is
    /// not compact (never so far: the cache's texts are), for the parsing way.
    fn without_managed_fields_member(&self) -> Option<MetaText> {
        self.with_managed_fields_member(None)
    }

    /// The same metadata with its `managedFields` member's value replaced by `value` (compact
    /// JSON text), or the member taken out for `None`; every other byte of the text as it was
    /// and the key fields' spans moved. `None` when the text around the member is not compact,
    /// or a moved span would not fit, for the parsing way.
    fn with_managed_fields_member(&self, value: Option<&str>) -> Option<MetaText> {
        let text = self.json.get();
        let (member, end) = valid_member(text, "managedFields")?;
        let bytes = text.as_bytes();
        let (start, end, replacement) = match value {
            // The key stays; its value goes, from after the colon.
            Some(value) => (member + "\"managedFields\":".len(), end, value),
            // The member goes with the comma before it, or the one after it when it is the first.
            None => match (bytes[member - 1], bytes.get(end)) {
                (b',', _) => (member - 1, end, ""),
                (b'{', Some(b',')) => (member, end + 1, ""),
                (b'{', Some(b'}')) => (member, end, ""),
                _ => return None,
            },
        };
        if value.is_some() && text.get(member..start) != Some("\"managedFields\":") {
            return None;
        }
        let mut json = String::with_capacity(text.len() - (end - start) + replacement.len());
        json.push_str(&text[..start]);
        json.push_str(replacement);
        json.push_str(&text[end..]);
        let moved = |span: Span| -> Option<Span> {
            match span.get() {
                Some(s) if usize::from(s.start) >= end => Span::new(
                    usize::from(s.start) - end + start + replacement.len(),
                    s.len.into(),
                ),
                _ => Some(span),
            }
        };
        Some(MetaText {
            // SAFETY: a JSON object with one member's value replaced by a JSON value, or one
            // member (and one comma) taken out, is a JSON object; `text` had no whitespace
            // around it, nor has the result, nor `value` (compact).
            json: unsafe { RawValue::from_string_unchecked(json) },
            name: moved(self.name)?,
            namespace: moved(self.namespace)?,
            resource_version: moved(self.resource_version)?,
            managed_fields: value.is_some(),
            trimmed: value.is_some(),
            decoded: OnceBox::new(),
        })
    }

    fn without_managed_fields(&self) -> Cow<'_, RawValue> {
        kept_entries(&self.json, |key, _| key != "managedFields")
            .map_or(Cow::Borrowed(&*self.json), Cow::Owned)
    }
}

/// The `ObjectMeta` of metadata text. managedFields too deep for serde_json's trees (those of a
/// custom resource nested past 128 levels) are left out of it; the text keeps them.
fn decode(json: &RawValue) -> Result<ObjectMeta, serde_json::Error> {
    serde_json::from_str(json.get()).or_else(|error| {
        match kept_entries(json, |key, _| key != "managedFields") {
            Some(shallower) => serde_json::from_str(shallower.get()),
            None => Err(error),
        }
    })
}

/// The metadata without its `null` fields (as the server's `creationTimestamp: null`), which
/// `ObjectMeta` would not keep either: outputs and change summaries then treat an absent field
/// and a `null` one alike, as they did when metadata was decoded.
fn without_nulls(json: Box<RawValue>) -> Box<RawValue> {
    if !json.get().contains(":null") {
        return json;
    }
    kept_entries(&json, |_, value| value.get() != "null").unwrap_or(json)
}

/// A JSON object's text with the values `rewrite` returns a new text for replaced; `None` when
/// it replaced none (or `json` is not an object).
fn map_entries_json(
    json: &RawValue,
    rewrite: impl Fn(&str, &RawValue) -> Option<Box<RawValue>>,
) -> Option<Box<RawValue>> {
    let entries = raw_entries(json.get());
    let new: Vec<Option<Box<RawValue>>> = entries.iter().map(|(k, v)| rewrite(k, v)).collect();
    if new.iter().all(Option::is_none) {
        return None;
    }
    let kept: Vec<(Cow<'_, str>, &RawValue)> = entries
        .iter()
        .zip(&new)
        .map(|((k, v), new)| (k.clone(), new.as_deref().unwrap_or(v)))
        .collect();
    Some(object_json(&kept))
}

/// A string as JSON text.
fn string_json(text: &str) -> Box<RawValue> {
    // A string always serializes, and makes a raw value.
    serde_json::value::to_raw_value(text).unwrap_or_else(|_| unreachable!("a JSON string"))
}

/// `ObjectMeta`'s string map called `name`.
fn string_map<'m>(meta: &'m ObjectMeta, name: &str) -> Option<&'m BTreeMap<String, String>> {
    match name {
        "labels" => meta.labels.as_ref(),
        "annotations" => meta.annotations.as_ref(),
        _ => None,
    }
}

impl PartialEq for Meta {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Meta::Text(a), Meta::Text(b)) if a.json.get() == b.json.get() => true,
            _ => self.decoded() == other.decoded(),
        }
    }
}

impl fmt::Debug for Meta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Meta::Text(m) => f.debug_tuple("Text").field(&m.json.get()).finish(),
            Meta::Typed(m) => f.debug_tuple("Typed").field(m).finish(),
        }
    }
}

/// `ObjectMeta`'s shape, read without allocating: every field of the same type as there, strings
/// borrowed from the text. Unknown fields are ignored, as `ObjectMeta` ignores them.
#[derive(Deserialize)]
#[serde(rename = "ObjectMeta", rename_all = "camelCase")]
#[allow(dead_code, reason = "most fields are decoded only to be checked")]
struct Shape<'a> {
    #[serde(borrow)]
    name: Option<Key<'a>>,
    #[serde(borrow)]
    namespace: Option<Key<'a>>,
    #[serde(borrow)]
    resource_version: Option<Key<'a>>,
    #[serde(borrow)]
    uid: Option<Key<'a>>,
    #[serde(borrow)]
    generate_name: Option<Key<'a>>,
    #[serde(borrow)]
    self_link: Option<Key<'a>>,
    labels: Option<StringMap>,
    annotations: Option<StringMap>,
    finalizers: Option<StringSeq>,
    creation_timestamp: Option<Time>,
    deletion_timestamp: Option<Time>,
    deletion_grace_period_seconds: Option<i64>,
    generation: Option<i64>,
    // Decoded to be checked (the one place this allocates): absent from most objects.
    owner_references: Option<Vec<OwnerReference>>,
    #[serde(borrow)]
    managed_fields: Option<Vec<ManagedFieldsShape<'a>>>,
}

/// `ManagedFieldsEntry`'s shape. Its `fieldsV1` mirrors the object's own nesting, so it is only
/// checked to be JSON: a tree of it would be as deep as the object, past serde_json's limit for
/// deep custom resources.
#[derive(Deserialize)]
#[serde(rename = "ManagedFieldsEntry", rename_all = "camelCase")]
#[allow(dead_code, reason = "decoded only to be checked")]
struct ManagedFieldsShape<'a> {
    #[serde(borrow)]
    api_version: Option<Key<'a>>,
    #[serde(borrow)]
    fields_type: Option<Key<'a>>,
    #[serde(borrow, rename = "fieldsV1")]
    fields_v1: Option<&'a RawValue>,
    #[serde(borrow)]
    manager: Option<Key<'a>>,
    #[serde(borrow)]
    operation: Option<Key<'a>>,
    #[serde(borrow)]
    subresource: Option<Key<'a>>,
    time: Option<Time>,
}

/// A map of strings, checked and dropped.
struct StringMap;

impl<'de> Deserialize<'de> for StringMap {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = StringMap;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<StringMap, A::Error> {
                while map.next_entry::<Key<'de>, Key<'de>>()?.is_some() {}
                Ok(StringMap)
            }
        }
        deserializer.deserialize_map(V)
    }
}

/// A sequence of strings, checked and dropped.
struct StringSeq;

impl<'de> Deserialize<'de> for StringSeq {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = StringSeq;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a sequence")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<StringSeq, A::Error> {
                while seq.next_element::<Key<'de>>()?.is_some() {}
                Ok(StringSeq)
            }
        }
        deserializer.deserialize_seq(V)
    }
}

#[cfg(test)]
#[path = "meta_tests.rs"]
mod tests;
