//! How much of an object an output carries, and Secret redaction.

use std::borrow::Cow;

use crate::object::Object;
use serde_json::{Map, Value};

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
    match mode {
        ObjectMode::None => None,
        ObjectMode::Meta => {
            let mut meta = obj.metadata.clone();
            meta.managed_fields = None;
            let mut out = Map::new();
            if let Some(types) = &obj.types {
                out.insert("apiVersion".into(), types.api_version.clone().into());
                out.insert("kind".into(), types.kind.clone().into());
            }
            out.insert(
                "metadata".into(),
                serde_json::to_value(meta).unwrap_or(Value::Null),
            );
            Some(Cow::Owned(Value::Object(out)))
        }
        ObjectMode::Full => {
            let mut value = serde_json::to_value(obj).unwrap_or(Value::Null);
            if !show_secret_data && is_secret(obj) {
                redact_secret(&mut value);
            }
            Some(Cow::Owned(value))
        }
    }
}

fn is_secret(obj: &Object) -> bool {
    obj.types
        .as_ref()
        .is_some_and(|t| t.kind == "Secret" && t.api_version == "v1")
}

/// Keeps the keys (which are useful when debugging) and hides the values.
fn redact_secret(value: &mut Value) {
    for field in ["data", "stringData"] {
        if let Some(Value::Object(map)) = value.get_mut(field) {
            for v in map.values_mut() {
                *v = Value::String("<redacted>".into());
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
        obj.metadata.managed_fields = Some(vec![Default::default()]);
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
    fn meta_mode_keeps_type_and_metadata_without_managed_fields() {
        let meta = render_object(&secret(), ObjectMode::Meta, false).unwrap();
        assert_eq!(meta["kind"], "Secret");
        assert_eq!(meta["metadata"]["name"], "db");
        assert!(meta["metadata"].get("managedFields").is_none());
        assert!(meta.get("data").is_none());
        assert!(render_object(&secret(), ObjectMode::None, false).is_none());
    }
}
