use serde_json::json;

use super::deserialize::{MAX_FIELD_DEPTH, closely_copyable, copyable, plainly_copyable};
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
    assert_eq!(obj.meta().labels.as_ref().unwrap()["app"], "web");
    assert_eq!(serde_json::to_value(&obj).unwrap(), pod());
    assert_eq!(obj.to_value(), pod());
}

#[test]
fn the_body_keeps_field_order_and_compact_text() {
    let text =
        r#"{"metadata":{"name":"a"},"spec":{ "b" : 1 ,"a":[true, null]},"status":{"x":"é\"q"}}"#;
    let obj: Object = serde_json::from_str(text).unwrap();
    assert_eq!(obj.types(), None);
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
fn an_object_takes_64_bytes_besides_its_texts() {
    // Every cached object is one of these in an `Arc` (16 bytes more): 80 bytes, a jemalloc size
    // class, where two type-meta strings, `Option` spans and a `OnceLock` made 152 (160), and
    // spans of eight bytes 96.
    assert!(
        std::mem::size_of::<Object>() <= 64,
        "Object grew to {} bytes",
        std::mem::size_of::<Object>()
    );
}

#[test]
fn objects_of_a_list_share_their_type_meta() {
    let text = |name: &str| {
        format!(
            r#"{{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{{"name":"{name}"}}}}"#
        )
    };
    let a = Object::from_json_text(&text("a")).unwrap();
    let b = Object::from_json_text(&text("b")).unwrap();
    let c: Object = serde_json::from_str(&text("c")).unwrap();
    assert!(std::ptr::eq(a.types().unwrap(), b.types().unwrap()));
    assert!(std::ptr::eq(a.types().unwrap(), c.types().unwrap()));
    assert_eq!(a.kind(), "PartialObjectMetadata");
    assert_eq!(b.api_version(), "meta.k8s.io/v1");
    let other =
        Object::from_json_text(r#"{"kind":"Pod","apiVersion":"v1","metadata":{}}"#).unwrap();
    assert_eq!((other.api_version(), other.kind()), ("v1", "Pod"));
}

#[test]
fn fill_types_fills_only_what_is_missing_or_empty() {
    let mut bare: Object = serde_json::from_str(r#"{"metadata":{"name":"a"}}"#).unwrap();
    bare.fill_types("v1", "ConfigMap");
    assert_eq!((bare.api_version(), bare.kind()), ("v1", "ConfigMap"));
    let mut half: Object =
        serde_json::from_str(r#"{"apiVersion":"apps/v1","kind":"","metadata":{}}"#).unwrap();
    half.fill_types("v1", "Deployment");
    assert_eq!((half.api_version(), half.kind()), ("apps/v1", "Deployment"));
    half.fill_types("v2", "Other");
    assert_eq!((half.api_version(), half.kind()), ("apps/v1", "Deployment"));
    half.set_types(None);
    assert_eq!(half.types(), None);
    assert_eq!(half.to_value(), json!({"metadata": {}}));
}

#[test]
fn list_items_without_kind_decode() {
    let obj: Object = serde_json::from_value(json!({"metadata": {"name": "x"}})).unwrap();
    assert_eq!(obj.types(), None);
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

#[test]
fn metadata_is_serialized_exactly_as_k8s_openapi_serializes_it() {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
        ManagedFieldsEntry, OwnerReference, Time,
    };
    let time = |secs: i64, nanos: i32| Time(jiff::Timestamp::new(secs, nanos).unwrap());
    let full = ObjectMeta {
        annotations: Some([("a/b".to_owned(), "quote \" and \n".to_owned())].into()),
        creation_timestamp: Some(time(1_767_607_200, 0)),
        deletion_grace_period_seconds: Some(30),
        deletion_timestamp: Some(time(1_767_607_230, 123_456_789)),
        finalizers: Some(vec!["example.com/keep".to_owned()]),
        generate_name: Some("web-".to_owned()),
        generation: Some(7),
        labels: Some([("app".to_owned(), "web".to_owned())].into()),
        managed_fields: Some(vec![ManagedFieldsEntry {
            manager: Some("kubectl".to_owned()),
            time: Some(time(1_767_607_201, 0)),
            ..Default::default()
        }]),
        name: Some("web-1".to_owned()),
        namespace: Some("prod".to_owned()),
        owner_references: Some(vec![OwnerReference {
            api_version: "apps/v1".to_owned(),
            kind: "ReplicaSet".to_owned(),
            name: "web".to_owned(),
            uid: "u-1".to_owned(),
            ..Default::default()
        }]),
        resource_version: Some("42".to_owned()),
        self_link: Some("/api/v1/namespaces/prod/pods/web-1".to_owned()),
        uid: Some("0b6a2c1e".to_owned()),
    };
    let without_managed = ObjectMeta {
        managed_fields: None,
        ..full.clone()
    };
    for meta in [&full, &without_managed, &ObjectMeta::default()] {
        assert_eq!(
            serde_json::to_string(&Metadata::new(meta, true)).unwrap(),
            serde_json::to_string(meta).unwrap()
        );
        assert_eq!(
            serde_saphyr::to_string(&Metadata::new(meta, true)).unwrap(),
            serde_saphyr::to_string(meta).unwrap()
        );
    }
    assert_eq!(
        serde_json::to_string(&Metadata::new(&full, false)).unwrap(),
        serde_json::to_string(&without_managed).unwrap()
    );
}

#[test]
fn redacted_replaces_secret_values_and_keeps_keys_fields_and_order() {
    // From text: a `json!` value would sort the fields.
    let secret: Object = serde_json::from_str(
        r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db","namespace":"prod"},
            "type":"Opaque","data":{"password":"aHVudGVyMg==","user":"YWRtaW4="},
            "stringData":{"token":"t0ken"},"immutable":true}"#,
    )
    .unwrap();
    let redacted = secret.redacted();
    let keys: Vec<_> = redacted
        .fields()
        .into_iter()
        .map(|(k, _)| k.into_owned())
        .collect();
    assert_eq!(keys, ["type", "data", "stringData", "immutable"]);
    assert_eq!(
        redacted.field_value("data").unwrap(),
        json!({"password": "<redacted>", "user": "<redacted>"})
    );
    assert_eq!(
        redacted.field_value("stringData").unwrap(),
        json!({"token": "<redacted>"})
    );
    assert_eq!(redacted.field_value("type").unwrap(), "Opaque");
    assert_eq!(redacted.meta(), secret.meta());
}

#[test]
fn redacted_covers_repeated_keys_and_keeps_the_order_of_the_values() {
    let secret: Object = serde_json::from_str(
        r#"{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s"},
            "data":{"b":"Yg==","a":"YQ=="},"type":"Opaque","data":{"c":"Yw=="},
            "stringData":{},"immutable":false}"#,
    )
    .unwrap();
    let body = serde_json::to_string(&secret.redacted()).unwrap();
    assert!(
        body.ends_with(
            r#""data":{"b":"<redacted>","a":"<redacted>"},"type":"Opaque","data":{"c":"<redacted>"},"stringData":{},"immutable":false}"#
        ),
        "{body}"
    );
}

/// A Secret as `kubectl apply` leaves it, with `applied` as its last-applied-configuration.
fn applied_secret(applied: &str) -> Object {
    let annotations = serde_json::to_string(&json!({ LAST_APPLIED: applied })).unwrap();
    let text = format!(
        r#"{{"apiVersion":"v1","kind":"Secret","metadata":{{"name":"db","annotations":{annotations},"labels":{{"app":"db"}}}},"data":{{"password":"aHVudGVyMg=="}}}}"#
    );
    serde_json::from_str(&text).unwrap()
}

/// A Secret's last-applied-configuration is redacted whole, whatever it holds: a Secret, a
/// `List` wrapping one, `Data` or `binaryData`, text that is not JSON; and so is a key that
/// differs from it only in case.
#[test]
fn redacted_replaces_the_last_applied_configuration_whole() {
    for applied in [
        "{\"apiVersion\":\"v1\",\"data\":{\"password\":\"aHVudGVyMg==\"},\"kind\":\"Secret\"}\n",
        r#"{"kind":"List","items":[{"kind":"Secret","data":{"pw":"aHVudGVyMg=="}}]}"#,
        r#"{"kind":"Secret","Data":{"pw":"aHVudGVyMg=="}}"#,
        r#"{"kind":"Secret","binaryData":{"pw":"aHVudGVyMg=="}}"#,
        "{\"data\":{\"password\":",
        "password=hunter2",
        "[\"aHVudGVyMg==\"]",
    ] {
        let secret = applied_secret(applied);
        assert!(secret.metadata_is_text());
        let redacted = secret.redacted();
        assert_eq!(
            redacted.annotation(LAST_APPLIED).as_deref(),
            Some("<redacted>"),
            "{applied}"
        );
        assert_eq!(redacted.label("app").as_deref(), Some("db"));
        assert_eq!(
            redacted.field_value("data").unwrap(),
            json!({"password": "<redacted>"})
        );
        // Held typed (changed in code), the same.
        let mut typed = secret.clone();
        typed.meta_mut().uid = Some("u".into());
        assert_eq!(
            typed.redacted().annotation(LAST_APPLIED).as_deref(),
            Some("<redacted>")
        );
    }
    let upper = "Kubectl.Kubernetes.io/Last-Applied-Configuration";
    let secret: Object = serde_json::from_value(json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "db", "annotations": {upper: "{\"data\":{\"pw\":\"aHVudGVyMg==\"}}", "other": "kept"}}}))
    .unwrap();
    let redacted = secret.redacted();
    assert_eq!(redacted.annotation(upper).as_deref(), Some("<redacted>"));
    assert_eq!(redacted.annotation("other").as_deref(), Some("kept"));
}

#[test]
fn redacted_covers_every_copy_of_the_last_applied_configuration() {
    let secret: Object = serde_json::from_str(&format!(
        r#"{{"kind":"Secret","apiVersion":"v1","metadata":{{"name":"s","annotations":{{"{LAST_APPLIED}":"{{\"data\":{{\"a\":\"YQ==\"}}}}","{LAST_APPLIED}":"{{\"data\":{{\"b\":\"Yg==\"}}}}"}}}}}}"#
    ))
    .unwrap();
    let text = serde_json::to_string(&secret.redacted()).unwrap();
    assert!(!text.contains("YQ==") && !text.contains("Yg=="), "{text}");
    assert_eq!(text.matches("<redacted>").count(), 2, "{text}");
}

#[test]
fn the_quick_copy_check_never_passes_what_the_close_one_refuses() {
    let deep = nested(MAX_FIELD_DEPTH + 1, "1");
    let deep_enough = nested(MAX_FIELD_DEPTH, "true");
    let texts = [
        r#"{"a":"b"}"#,
        r#"{"a":1}"#,
        r#"{"a":-1}"#,
        r#"[1,2]"#,
        r#"{"a":[1e5]}"#,
        r#"{"a":"x","b":1E400}"#,
        r#"1e400"#,
        r#"-0"#,
        r#""\ud800""#,
        r#"{"a":"\u0026"}"#,
        r#"{"a": 1}"#,
        r#"{"a":"t 10:00:00","b":"x,1"}"#,
        r#"{"a":"q\"","b":[{"c":12345678901234567890123}]}"#,
        r#"{}"#,
        r#""""#,
        r#"true"#,
        r#"[true,null,"x"]"#,
        deep.as_str(),
        deep_enough.as_str(),
    ];
    for text in texts {
        assert!(!plainly_copyable(text) || closely_copyable(text), "{text}");
    }
    // Plain text passes the quick check, text with numbers goes to the close one.
    assert!(plainly_copyable(r#"{"a":"10:00:00Z","b":["x","y"]}"#));
    assert!(!plainly_copyable(r#"{"replicas":3}"#) && closely_copyable(r#"{"replicas":3}"#));
    assert!(!copyable("1e400") && !copyable(r#"{"a":1E2}"#) && !copyable(&deep));
    assert!(plainly_copyable(&deep_enough));
}

/// `levels` arrays around `inner`.
fn nested(levels: usize, inner: &str) -> String {
    format!("{}{inner}{}", "[".repeat(levels), "]".repeat(levels))
}

/// An object whose `spec` is nested `levels` deep (the object itself being one more level), as
/// its JSON text; `sep` goes between the brackets (spaces make the value go through transcoding).
fn deep_object(levels: usize, sep: &str) -> String {
    let mut spec = String::from("1");
    for _ in 1..levels {
        spec = format!("[{sep}{spec}{sep}]");
    }
    format!(
        r#"{{"apiVersion":"example.com/v1","kind":"Widget","metadata":{{"name":"deep"}},"spec":{{"a":{spec}}}}}"#
    )
}

#[test]
fn objects_as_deep_as_the_api_server_serves_are_read_and_written_on_a_small_stack() {
    // The test thread's stack is small (2 MiB), as the runtime's are: reading and writing must
    // not recurse on it level by level.
    for sep in ["", " "] {
        let text = deep_object(MAX_FIELD_DEPTH, sep);
        let raw: &RawValue = serde_json::from_str(&text).unwrap();
        let obj = Object::from_json(raw).unwrap();
        let compact = deep_object(MAX_FIELD_DEPTH, "");
        assert_eq!(serde_json::to_string(&obj.json(true)).unwrap(), compact);
        // Transcoded, as serializers other than serde_json's compact one need.
        assert_eq!(serde_json::to_string(&obj).unwrap(), compact);
    }
    // Indented, a deep object takes the square of its depth: less deep, still past any stack.
    let text = deep_object(2000, "");
    let raw: &RawValue = serde_json::from_str(&text).unwrap();
    let obj = Object::from_json(raw).unwrap();
    let pretty = serde_json::to_string_pretty(&obj).unwrap();
    assert_eq!(nesting(&pretty), 2001);
    let yaml = serde_saphyr::to_string(&obj).unwrap();
    assert!(yaml.contains("Widget"));
}

#[test]
fn objects_deeper_than_the_api_server_serves_are_refused_without_overflowing() {
    for (levels, sep) in [(MAX_DEPTH, ""), (MAX_DEPTH, " "), (100_000, "")] {
        let text = deep_object(levels, sep);
        let raw: &RawValue = serde_json::from_str(&text).unwrap();
        let error = Object::from_json(raw).unwrap_err().to_string();
        assert!(
            error.contains("spec is nested deeper than 10000 levels"),
            "{error}"
        );
    }
}

#[test]
fn raw_objects_are_named_without_decoding_them() {
    assert_eq!(
        describe_raw(r#"{"metadata":{"namespace":"ns","name":"a\u001b"},"spec":[[[]]]}"#),
        r#""ns/a\u{1b}""#
    );
    assert_eq!(describe_raw(r#"{"metadata":{"name":"a"}}"#), r#""a""#);
    assert_eq!(describe_raw(r#"{"spec":{}}"#), "an object without a name");
}

/// A Secret as a metadata informer lists it (`PartialObjectMetadata`), and a ConfigMap likewise.
#[test]
fn a_secret_listed_for_its_metadata_only_is_still_a_secret_whose_applied_values_are_redacted() {
    let partial = |applied: &str| -> Object {
        let annotations = serde_json::to_string(&json!({ LAST_APPLIED: applied })).unwrap();
        serde_json::from_str(&format!(
            r#"{{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{{"name":"db","annotations":{annotations}}}}}"#
        ))
        .unwrap()
    };
    let secret =
        partial(r#"{"apiVersion":"v1","data":{"password":"aHVudGVyMg=="},"kind":"Secret"}"#);
    assert!(secret.is_partial_metadata());
    assert!(secret.is_secret());
    assert_eq!(
        secret.redacted().annotation(LAST_APPLIED).as_deref(),
        Some("<redacted>")
    );
    let config_map = partial(r#"{"apiVersion":"v1","data":{"k":"v"},"kind":"ConfigMap"}"#);
    assert!(config_map.is_partial_metadata());
    assert!(!config_map.is_secret());
}

/// The default transform keeps the newest managedFields entries' manager, operation,
/// subresource, time and top-level fields, with the key fields after them still read right, and
/// no output shows them.
#[test]
fn trimmed_managed_fields_name_the_newest_writers_and_stay_out_of_outputs() {
    let text = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"managedFields":[{"manager":"a","operation":"Update","time":"2026-01-05T10:00:01Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:x":{}}}},{"manager":"b","operation":"Apply","subresource":"status","time":"2026-01-05T10:00:02Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{}},"f:status":{"f:y":{}}}}],"name":"n","namespace":"ns","resourceVersion":"7"},"data":{"x":"1"}}"#;
    let mut obj = Object::from_json_text(text).unwrap();
    let before = obj.newest_writers();
    obj.trim_managed_fields();
    assert!(obj.metadata_is_text());
    assert_eq!(obj.newest_writers(), before);
    assert_eq!(before.len(), 1);
    assert_eq!(before[0].to_string(), "b (Apply, status)");
    assert_eq!(before[0].fields, ["status"]);
    assert_eq!(
        (obj.name(), obj.namespace(), obj.resource_version()),
        (Some("n"), Some("ns"), Some("7"))
    );
    let written = serde_json::to_string(&obj.json(true)).unwrap();
    assert!(!written.contains("managedFields"), "{written}");
    assert!(obj.meta().managed_fields.is_some());
    assert!(obj.clone().meta_mut().managed_fields.is_none());
    assert!(
        !serde_json::to_string(&obj.redacted().json(true))
            .unwrap()
            .contains("managedFields")
    );
}

/// A previous state without managedFields (a live list's items are decoded without them) cannot
/// tell which of the new state's entries is new: nobody is named, rather than the newest entry's
/// manager, who may not have written this change. An entry the previous state lacked still
/// names its writer, one without a time (v1.28's `scale` subresource) included.
#[test]
fn writers_are_named_only_against_a_previous_state_with_managed_fields() {
    let with = |entries: &str| {
        Object::from_json_text(&format!(
            r#"{{"apiVersion":"apps/v1","kind":"Deployment","metadata":{{"managedFields":[{entries}],"name":"web","namespace":"demo","resourceVersion":"2"}}}}"#
        ))
        .unwrap()
    };
    let create =
        r#"{"manager":"kubectl-create","operation":"Update","time":"2026-01-05T10:00:01Z"}"#;
    let scale = r#"{"manager":"kubectl","operation":"Update","subresource":"scale"}"#;
    let mut listed = with(create);
    listed.strip_managed_fields();
    let scaled = with(&format!("{create},{scale}"));
    assert!(writers_since(Some(&listed), &scaled).is_empty());
    let named: Vec<String> = writers_since(Some(&with(create)), &scaled)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(named, ["kubectl (Update, scale)"]);
}
