//! Writing an [`Object`]: with any serializer (transcoding its text), or with serde_json (its
//! text written as it is), and its metadata as k8s-openapi writes an `ObjectMeta`.

use super::*;

impl Serialize for Object {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let fields = self.fields();
        let mut map =
            serializer.serialize_map(Some(1 + 2 * self.types.is_some() as usize + fields.len()))?;
        if let Some(types) = self.types() {
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
pub(super) struct JsonOut<'a> {
    pub(super) obj: &'a Object,
    pub(super) managed_fields: bool,
    pub(super) body: bool,
}

impl Serialize for JsonOut<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let obj = self.obj;
        let mut map = serializer.serialize_map(None)?;
        if let Some(types) = obj.types() {
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
pub(crate) struct Transcoded<'a>(pub(crate) &'a RawValue);

impl Serialize for Transcoded<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        deep_json(
            self.0.get(),
            |de| serde_transcode::transcode(de, serializer),
            ser::Error::custom,
        )
    }
}
