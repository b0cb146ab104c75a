//! Objects for the cache's unit tests.

use std::sync::Arc;

use crate::object::Object;
use kube::api::ApiResource;

fn resource(kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: String::new(),
        version: "v1".into(),
        api_version: "v1".into(),
        kind: kind.into(),
        plural: plural.into(),
    }
}

/// A namespaced ConfigMap `ns/name` at resourceVersion `rv`.
pub fn cm(ns: &str, name: &str, rv: u64) -> Arc<Object> {
    let mut obj = Object::new(name, &resource("ConfigMap", "configmaps")).within(ns);
    obj.meta_mut().resource_version = Some(rv.to_string());
    obj.set_field("data", &serde_json::json!({ "rv": rv.to_string() }))
        .expect("a JSON field");
    Arc::new(obj)
}

/// A ConfigMap `default/name` at resourceVersion `rv`, with nothing but its metadata.
pub fn bare_cm(name: &str, rv: &str) -> Arc<Object> {
    let mut obj = Object::new(name, &resource("ConfigMap", "configmaps")).within("default");
    obj.meta_mut().resource_version = Some(rv.into());
    Arc::new(obj)
}

/// A cluster-scoped Node `name` at resourceVersion `rv`.
pub fn node(name: &str, rv: u64) -> Arc<Object> {
    let mut obj = Object::new(name, &resource("Node", "nodes"));
    obj.meta_mut().resource_version = Some(rv.to_string());
    Arc::new(obj)
}

/// The resourceVersion of an object, for compact assertions.
pub fn rv(obj: &Object) -> u64 {
    obj.resource_version()
        .and_then(|rv| rv.parse().ok())
        .unwrap_or(0)
}

/// A `kind` in `ns` named `name` at resourceVersion `rv`, with `meta` merged into its metadata
/// (generation, uid, labels, ownerReferences…).
pub fn with_meta(
    api_version: &str,
    kind: &str,
    ns: &str,
    name: &str,
    rv: u64,
    meta: serde_json::Value,
) -> Arc<Object> {
    let mut metadata =
        serde_json::json!({ "name": name, "namespace": ns, "resourceVersion": rv.to_string() });
    if let (Some(m), Some(extra)) = (metadata.as_object_mut(), meta.as_object()) {
        m.extend(extra.clone());
    }
    let text = serde_json::json!({ "apiVersion": api_version, "kind": kind, "metadata": metadata })
        .to_string();
    Arc::new(Object::from_json_text(&text).expect("an object"))
}
