//! How much of an object an output carries, and Secret redaction.

use std::borrow::Cow;

use crate::object::{MetaOut, Object};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

/// How much of each object machine-readable outputs carry (`--object`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ObjectMode {
    /// The whole object.
    #[default]
    Full,
    /// apiVersion, kind and metadata, without managedFields.
    Meta,
    /// No object at all.
    None,
}

/// The JSON for `obj` under `mode`; Secret `data`/`stringData` values are replaced unless
/// `show_secret_data`. `None` when the mode omits objects.
pub fn render_object(
    obj: &Object,
    mode: ObjectMode,
    show_secret_data: bool,
) -> Option<Cow<'static, Value>> {
    let view = ObjectView::new(obj, mode, show_secret_data)?;
    Some(Cow::Owned(
        serde_json::to_value(&view).unwrap_or(Value::Null),
    ))
}

/// An object as an output carries it (`--object`), serializable with any serde serializer.
/// Unlike [`render_object`] it builds no JSON tree, and [`compact_json`](Self::compact_json)
/// copies the object's text as is, which keeps `-o jsonl` cheap per batch.
#[derive(Debug)]
pub struct ObjectView<'a> {
    /// The object, or a Secret with its values redacted ([`Object::redacted`]).
    obj: Cow<'a, Object>,
    /// Only apiVersion, kind and metadata without managedFields (`--object meta`).
    meta_only: bool,
    compact_json: bool,
}

impl<'a> ObjectView<'a> {
    /// The view of `obj` under `mode`; `None` when the mode omits objects. A Secret is redacted
    /// unless `show_secret_data`, in the metadata-only view too: its metadata may hold its values
    /// (the last-applied-configuration annotation).
    pub fn new(obj: &'a Object, mode: ObjectMode, show_secret_data: bool) -> Option<Self> {
        if mode == ObjectMode::None {
            return None;
        }
        let obj = if !show_secret_data && obj.is_secret() {
            Cow::Owned(obj.redacted())
        } else {
            Cow::Borrowed(obj)
        };
        Some(ObjectView {
            obj,
            meta_only: mode == ObjectMode::Meta,
            compact_json: false,
        })
    }

    /// The same view for serde_json's compact writer (JSON lines): the object's text is copied as
    /// it is ([`Object::json`]). Other serializers would write serde_json's raw-value marker, and
    /// a pretty writer would embed the text unindented.
    #[must_use]
    pub fn compact_json(mut self) -> Self {
        self.compact_json = true;
        self
    }
}

impl Serialize for ObjectView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let obj = self.obj.as_ref();
        match (self.meta_only, self.compact_json) {
            (false, true) => obj.json(true).serialize(serializer),
            (true, true) => obj.json_meta().serialize(serializer),
            (false, false) => obj.serialize(serializer),
            (true, false) => {
                let mut map = serializer.serialize_map(None)?;
                if let Some(types) = obj.types() {
                    map.serialize_entry("apiVersion", &types.api_version)?;
                    map.serialize_entry("kind", &types.kind)?;
                }
                map.serialize_entry("metadata", &MetaOut::new(obj, false))?;
                map.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::api::ApiResource;
    use serde_json::json;

    fn secret() -> Object {
        let ar = ApiResource::erase::<k8s_openapi::api::core::v1::Secret>(&());
        let mut obj = Object::new("db", &ar).within("prod");
        obj.meta_mut().managed_fields = Some(vec![Default::default()]);
        obj.set_field("data", &json!({"password": "aHVudGVyMg=="}))
            .unwrap();
        obj.set_field("stringData", &json!({"user": "admin"}))
            .unwrap();
        obj.set_field("type", &json!("Opaque")).unwrap();
        obj
    }

    #[test]
    fn secret_values_are_redacted_unless_asked_for() {
        let shown = render_object(&secret(), ObjectMode::Full, false).unwrap();
        assert_eq!(shown["data"]["password"], "<redacted>");
        assert_eq!(shown["stringData"]["user"], "<redacted>");
        assert_eq!(shown["type"], "Opaque");
        let raw = render_object(&secret(), ObjectMode::Full, true).unwrap();
        assert_eq!(raw["data"]["password"], "aHVudGVyMg==");
    }

    #[test]
    fn a_redacted_secret_is_written_as_the_shown_one_but_for_its_values() {
        let obj = secret();
        let text = |show| {
            let view = ObjectView::new(&obj, ObjectMode::Full, show).unwrap();
            serde_json::to_string(&view).unwrap()
        };
        let expected = text(true)
            .replace("aHVudGVyMg==", "<redacted>")
            .replace(r#""admin""#, r#""<redacted>""#);
        assert_eq!(text(false), expected);
    }

    #[test]
    fn meta_mode_keeps_type_and_metadata_without_managed_fields() {
        let meta = render_object(&secret(), ObjectMode::Meta, false).unwrap();
        assert_eq!(meta["kind"], "Secret");
        assert_eq!(meta["metadata"]["name"], "db");
        assert!(meta["metadata"].get("managedFields").is_none());
        assert!(meta.get("data").is_none());
        assert!(render_object(&secret(), ObjectMode::None, false).is_none());
    }
}
