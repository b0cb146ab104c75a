//! Index specs: parsing, canonical names and the values each spec extracts.

use crate::object::Object;
use kube::api::ApiResource;
use serde_json::json;

use super::*;

fn pod() -> Object {
    let ar = ApiResource::erase::<k8s_openapi::api::core::v1::Pod>(&());
    let mut obj = Object::new("web-1", &ar).within("prod");
    obj.meta_mut().labels =
        Some([("app".into(), "web".into()), ("tier".into(), "fe".into())].into());
    obj.meta_mut().annotations = Some([("team".into(), "payments".into())].into());
    obj.meta_mut().owner_references = Some(vec![
        k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
            api_version: "apps/v1".into(),
            kind: "ReplicaSet".into(),
            name: "web-7d9f".into(),
            uid: "u1".into(),
            ..Default::default()
        },
    ]);
    obj.set_field(
        "spec",
        &json!({
            "nodeName": "node-a",
            "priority": 7,
            "hostNetwork": false,
            "containers": [{"name": "app", "image": "nginx:1"}, {"name": "side", "image": "envoy:2"}]
        }),
    )
    .unwrap();
    obj.set_field("status", &json!({"phase": "Running"}))
        .unwrap();
    obj
}

fn values(spec: &str) -> Vec<String> {
    let pod = pod();
    let values = spec.parse::<IndexSpec>().unwrap().values(&pod);
    values.into_iter().map(|v| v.into_owned()).collect()
}

#[test]
fn every_form_parses_and_prints_back_canonically() {
    for spec in [
        "namespace",
        "label:app.kubernetes.io/name",
        "labels",
        "annotation:team",
        "field:spec.nodeName",
        "owner",
    ] {
        assert_eq!(spec.parse::<IndexSpec>().unwrap().name(), spec);
    }
    assert_eq!(
        " label: app ".parse::<IndexSpec>().unwrap().name(),
        "label:app"
    );
}

#[test]
fn bad_specs_are_errors_that_list_the_valid_forms() {
    for (spec, reason) in [
        ("", "the spec is empty"),
        ("label", "label needs a label key after the colon"),
        ("label:", "label needs a label key after the colon"),
        ("field:spec..x", "the field path has an empty segment"),
        ("namespace:x", "namespace takes no argument"),
        ("nodes", "unknown index kind \"nodes\""),
    ] {
        let err = spec.parse::<IndexSpec>().unwrap_err();
        assert_eq!(err.reason, reason, "{spec}");
        assert!(err.to_string().contains(INDEX_SPEC_FORMS), "{err}");
    }
}

#[test]
fn each_spec_extracts_its_values() {
    assert_eq!(values("namespace"), ["prod"]);
    assert_eq!(values("label:app"), ["web"]);
    assert_eq!(values("labels"), ["app=web", "tier=fe"]);
    assert_eq!(values("annotation:team"), ["payments"]);
    assert_eq!(values("owner"), ["ReplicaSet/web-7d9f"]);
    assert_eq!(values("field:spec.nodeName"), ["node-a"]);
    assert_eq!(values("field:status.phase"), ["Running"]);
    assert_eq!(values("field:spec.priority"), ["7"]);
    assert_eq!(values("field:spec.hostNetwork"), ["false"]);
    assert_eq!(
        values("field:spec.containers.image"),
        ["nginx:1", "envoy:2"]
    );
    assert_eq!(values("field:metadata.name"), ["web-1"]);
    assert_eq!(
        values("field:metadata.ownerReferences.kind"),
        ["ReplicaSet"]
    );
    assert_eq!(values("field:kind"), ["Pod"]);
}

#[test]
fn missing_fields_and_non_scalars_yield_no_value() {
    assert!(values("label:missing").is_empty());
    assert!(values("annotation:missing").is_empty());
    assert!(values("field:spec.missing").is_empty());
    assert!(values("field:spec").is_empty(), "an object is not a value");
    let mut cluster_scoped = pod();
    cluster_scoped.meta_mut().namespace = None;
    assert!(IndexSpec::Namespace.values(&cluster_scoped).is_empty());
}

#[test]
fn field_values_are_unescaped_and_borrowed_when_they_can_be() {
    let mut obj = pod();
    obj.set_field(
        "spec",
        &json!({"nodeName": "node-a", "hostname": "a\"b\\c\u{e9}"}),
    )
    .unwrap();
    let spec = IndexSpec::Field(vec!["spec".into(), "nodeName".into()]);
    let plain = spec.values(&obj);
    assert!(matches!(plain.as_slice(), [Cow::Borrowed("node-a")]));
    let spec = IndexSpec::Field(vec!["spec".into(), "hostname".into()]);
    let escaped = spec.values(&obj);
    assert_eq!(
        escaped.as_slice(),
        [Cow::<str>::Owned("a\"b\\c\u{e9}".into())]
    );
}

#[test]
fn metadata_held_as_text_gives_the_same_values_as_typed_metadata() {
    let typed = pod();
    let text = serde_json::to_string(&typed).unwrap();
    let json: &serde_json::value::RawValue = serde_json::from_str(&text).unwrap();
    let from_text = Object::from_json(json).unwrap();
    assert!(from_text.metadata_is_text() && !typed.metadata_is_text());
    for spec in [
        "namespace",
        "label:app",
        "label:missing",
        "annotation:team",
        "labels",
        "owner",
        "field:metadata.name",
        "field:metadata.namespace",
        "field:metadata.labels.tier",
        "field:metadata.ownerReferences.name",
        "field:metadata.annotations.team",
        "field:spec.containers.name",
    ] {
        let spec: IndexSpec = spec.parse().unwrap();
        let (a, b) = (spec.values(&typed), spec.values(&from_text));
        assert_eq!(a, b, "{spec}");
    }
    assert_eq!(
        IndexSpec::Labels.values(&from_text).as_slice(),
        ["app=web", "tier=fe"]
    );
}

#[test]
fn suggest_names_the_key_or_path_the_objects_have() {
    let pods = [pod()];
    let suggest = |spec: &str| {
        spec.parse::<IndexSpec>()
            .unwrap()
            .suggest(pods.iter())
            .map(|s| s.to_string())
    };
    // Each segment matched at its own level, through arrays, case first.
    assert_eq!(
        suggest("field:spec.nodename").as_deref(),
        Some("field:spec.nodeName")
    );
    assert_eq!(
        suggest("field:SPEC.containers.imge").as_deref(),
        Some("field:spec.containers.image")
    );
    assert_eq!(suggest("label:APP").as_deref(), Some("label:app"));
    // What exists, or nothing close, or kinds without a key: no suggestion.
    assert_eq!(suggest("field:spec.nodeName"), None);
    assert_eq!(suggest("field:spec.nothingLikeIt"), None);
    assert_eq!(suggest("label:app"), None);
    assert_eq!(suggest("namespace"), None);
}
