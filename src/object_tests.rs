use serde_json::json;

use super::*;

fn pod() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web-1", "namespace": "prod", "resourceVersion": "7",
                     "labels": {"app": "web"}},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx:1.27"}]},
        "status": {"phase": "Running", "podIP": "10.0.0.7", "ready": true, "restarts": 3}
    })
}

#[test]
fn decoding_then_encoding_gives_back_the_same_json() {
    let obj: Object = serde_json::from_str(&pod().to_string()).unwrap();
    assert_eq!(obj.kind(), "Pod");
    assert_eq!(obj.metadata.labels.as_ref().unwrap()["app"], "web");
    assert_eq!(serde_json::to_value(&obj).unwrap(), pod());
    assert_eq!(obj.to_value(), pod());
}

#[test]
fn the_body_keeps_field_order_and_compact_text() {
    let text =
        r#"{"metadata":{"name":"a"},"spec":{ "b" : 1 ,"a":[true, null]},"status":{"x":"é\"q"}}"#;
    let obj: Object = serde_json::from_str(text).unwrap();
    assert_eq!(obj.types, None);
    let keys: Vec<_> = obj
        .fields()
        .into_iter()
        .map(|(k, _)| k.into_owned())
        .collect();
    assert_eq!(keys, ["spec", "status"]);
    assert_eq!(
        obj.field("spec").unwrap().get(),
        r#"{"b":1,"a":[true,null]}"#
    );
    assert_eq!(obj.field_value("status").unwrap(), json!({"x": "é\"q"}));
    assert!(obj.field("data").is_none());
}

#[test]
fn list_items_without_kind_decode() {
    let obj: Object = serde_json::from_value(json!({"metadata": {"name": "x"}})).unwrap();
    assert_eq!(obj.types, None);
    assert!(obj.fields().is_empty());
    assert_eq!(obj.to_value(), json!({"metadata": {"name": "x"}}));
}

#[test]
fn decodes_through_buffering_deserializers() {
    // serde buffers an adjacently tagged enum's content when the tag comes last, as it may in a
    // watch event; raw-text capture must still work there.
    let line = json!({"object": pod(), "type": "MODIFIED"}).to_string();
    let event: kube::core::WatchEvent<Object> = serde_json::from_str(&line).unwrap();
    let kube::core::WatchEvent::Modified(obj) = event else {
        panic!("not a MODIFIED event: {event:?}");
    };
    assert_eq!(obj.to_value(), pod());
}

#[test]
fn numbers_survive_exactly() {
    let value = json!({"metadata": {}, "spec": {"big": u64::MAX, "neg": -5, "f": 1.5}});
    let obj = Object::from_value(value.clone()).unwrap();
    assert_eq!(obj.to_value(), value);
}

#[test]
fn serializes_with_non_json_serializers() {
    let obj = Object::from_value(pod()).unwrap();
    let yaml = serde_saphyr::to_string(&obj).unwrap();
    assert!(yaml.contains("phase: Running"), "{yaml}");
    assert!(yaml.contains("image: nginx:1.27"), "{yaml}");
    assert!(!yaml.contains("RawValue"), "{yaml}");
}

#[test]
fn set_and_remove_fields() {
    let mut obj = Object::from_value(pod()).unwrap();
    obj.set_field("status", &json!({"phase": "Failed"}))
        .unwrap();
    obj.set_field("data", &json!({"k": "v"})).unwrap();
    assert!(obj.remove_field("spec"));
    assert!(!obj.remove_field("spec"));
    let mut expected = pod();
    expected["status"] = json!({"phase": "Failed"});
    expected["data"] = json!({"k": "v"});
    expected.as_object_mut().unwrap().remove("spec");
    assert_eq!(obj.to_value(), expected);
    obj.set_field("kind", &json!("Secret")).unwrap();
    assert_eq!(obj.kind(), "Secret");
}

#[test]
fn is_a_kube_resource() {
    let ar = ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&());
    let obj = Object::new("cfg", &ar).within("ns");
    assert_eq!(obj.api_version(), "v1");
    assert_eq!(kube::ResourceExt::name_any(&obj), "cfg");
    assert_eq!(kube::ResourceExt::namespace(&obj).as_deref(), Some("ns"));
    assert_eq!(<Object as Resource>::plural(&ar), "configmaps");
}
