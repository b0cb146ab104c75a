//! The one-pass reader against the serde path: whatever it reads, the serde path reads the same
//! way; what it leaves, the serde path reads or refuses. Hand-picked cases, then generated
//! objects whose fields are of the right type or not, then mutations of a pod as a cluster
//! serves it.

use proptest::prelude::*;
use serde_json::json;

use super::*;

/// A pod as the API server lists it: managedFields, an owner, containers, a status.
fn pod() -> String {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-7d9f8c6b5-x2k4q", "generateName": "web-7d9f8c6b5-", "namespace": "shop",
            "uid": "0b1e4c2a-9d3f-4b1e-8c2a-9d3f0b1e4c2a", "resourceVersion": "1000042",
            "creationTimestamp": "2026-11-20T08:12:40Z", "generation": 1,
            "labels": {"app": "web", "pod-template-hash": "7d9f8c6b5"},
            "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-11-19T10:00:00Z",
                            "note": "a \"quoted\" word\nand a line"},
            "finalizers": ["example.com/keep"],
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                 "name": "web-7d9f8c6b5", "uid": "5f0c0a1e-0b5e",
                                 "controller": true, "blockOwnerDeletion": true}],
            "managedFields": [
                {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1",
                 "time": "2026-11-20T08:12:40Z", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                              "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {}}}}}},
                {"manager": "kubelet", "operation": "Update", "apiVersion": "v1",
                 "time": "2026-11-20T08:12:46Z", "fieldsType": "FieldsV1", "subresource": "status",
                 "fieldsV1": {"f:status": {"f:phase": {}}}}
            ]
        },
        "spec": {
            "containers": [{"name": "app", "image": "registry.example.com/web:1.2.3",
                            "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                            "resources": {"limits": {"cpu": "1", "memory": "512Mi"}},
                            "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080},
                                               "periodSeconds": 5}}],
            "nodeName": "node-3", "priority": -1, "terminationGracePeriodSeconds": 30,
            "weight": 0.25, "tolerations": [{"key": "a/b", "operator": "Exists",
                                             "tolerationSeconds": 300}]
        },
        "status": {
            "phase": "Running", "podIP": "10.244.1.7", "startTime": "2026-11-20T08:12:40Z",
            "conditions": [{"type": "Ready", "status": "True", "lastProbeTime": null}],
            "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0,
                                   "state": {"running": {"startedAt": "2026-11-20T08:12:45Z"}},
                                   "lastState": {}}]
        }
    })
    .to_string()
}

/// Asserts that two objects are the same in everything a reader of the cache can see.
fn assert_same(quick: &Object, serde: &Object, text: &str) {
    assert_eq!(quick, serde, "{text}");
    assert_eq!(quick.types(), serde.types(), "{text}");
    assert_eq!(quick.name(), serde.name(), "{text}");
    assert_eq!(quick.namespace(), serde.namespace(), "{text}");
    assert_eq!(quick.resource_version(), serde.resource_version(), "{text}");
    assert_eq!(quick.metadata_is_text(), serde.metadata_is_text(), "{text}");
    assert_eq!(
        quick.metadata_text().map(|m| m.get()),
        serde.metadata_text().map(|m| m.get()),
        "{text}"
    );
    let json = |obj: &Object, managed_fields| serde_json::to_string(&obj.json(managed_fields));
    for managed_fields in [false, true] {
        assert_eq!(
            json(quick, managed_fields).unwrap(),
            json(serde, managed_fields).unwrap(),
            "{text}"
        );
    }
    assert_eq!(quick.footprint(), serde.footprint(), "{text}");
    assert_eq!(*quick.metadata(), *serde.metadata(), "{text}");
}

/// What the serde path makes of `text` when the quick one reads it; whether it did.
fn check(text: &str) -> bool {
    let serde = Object::from_json_text_by_serde(text);
    match compact(text) {
        Some(quick) => {
            let serde = serde.unwrap_or_else(|e| panic!("read {text} the serde path refuses: {e}"));
            assert_same(&quick, &serde, text);
            true
        }
        None => false,
    }
}

#[test]
fn compact_objects_are_read_in_one_pass_as_the_serde_path_reads_them() {
    let pod = pod();
    assert!(check(&pod), "{pod}");
    for text in [
        r#"{}"#,
        r#"{"metadata":{}}"#,
        r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"},"data":{"k":"v"}}"#,
        r#"{"data":{"k":"v"},"metadata":{"name":"a"},"binaryData":{}}"#,
        r#"{"spec":{"a":[1,-2,0.5,-0.5,true,false,null,"\"\\\/\b\f\n\r\t",{}]}}"#,
        r#"{"metadata":{"name":"a","managedFields":[]},"é":"ü"}"#,
        r#"{"metadata":{"uid":"a\"b","labels":{"a\nb":"c\\d"},"x":[true]}}"#,
        r#"{"metadata":{"ownerReferences":[{"name":"a","name":"b","x":{}}]}}"#,
        r#"{"metadata":{"generation":-12345678901234567}}"#,
    ] {
        assert!(check(text), "{text}");
    }
    // Metadata read here is held as its text, the key fields located in it.
    let obj = compact(&pod).unwrap();
    assert!(obj.metadata_is_text());
    assert_eq!(obj.name(), Some("web-7d9f8c6b5-x2k4q"));
    assert_eq!(obj.namespace(), Some("shop"));
    assert_eq!(obj.resource_version(), Some("1000042"));
    assert_eq!(obj.kind(), "Pod");
    assert_eq!(obj.field("status").unwrap().get().len(), {
        let value: serde_json::Value = serde_json::from_str(&pod).unwrap();
        value["status"].to_string().len()
    });
}

#[test]
fn what_the_serde_path_would_transcode_hold_typed_or_refuse_is_left_to_it() {
    for text in [
        // Not compact, escapes to decode, numbers to normalise.
        r#" {"metadata":{}}"#,
        r#"{"metadata":{}} "#,
        r#"{"metadata": {}}"#,
        r#"{"spec":{"a":"\u0026"}}"#,
        r#"{"spec":{"a":1e3}}"#,
        r#"{"spec":{"a":1E3}}"#,
        r#"{"spec":{"a":1234567890123456789}}"#,
        r#"{"spec":{"a":[01]}}"#,
        // Top-level fields.
        r#"{"\u006bind":"Pod"}"#,
        r#"{"a\/b":1}"#,
        r#"{"kind":"Pod","kind":"Pod"}"#,
        r#"{"metadata":{},"metadata":{}}"#,
        r#"{"apiVersion":null}"#,
        r#"{"kind":"P\"od"}"#,
        r#"{"metadata":null}"#,
        r#"{"metadata":[]}"#,
        r#"[]"#,
        // Metadata: nulls, repeated fields, types, escaped key fields.
        r#"{"metadata":{"name":"a","labels":null}}"#,
        r#"{"metadata":{"x":{"y":null}}}"#,
        r#"{"metadata":{"x":[null]}}"#,
        r#"{"metadata":{"name":"a","name":"b"}}"#,
        r#"{"metadata":{"name":"a\"b"}}"#,
        r#"{"metadata":{"resourceVersion":7}}"#,
        r#"{"metadata":{"labels":{"a":1}}}"#,
        r#"{"metadata":{"finalizers":"a"}}"#,
        r#"{"metadata":{"generation":-0}}"#,
        r#"{"metadata":{"generation":1.0}}"#,
        r#"{"metadata":{"creationTimestamp":"2026-02-30T10:00:00Z"}}"#,
        r#"{"metadata":{"creationTimestamp":"yesterday"}}"#,
        r#"{"metadata":{"ownerReferences":[{"controller":"yes"}]}}"#,
        r#"{"metadata":{"ownerReferences":[["a"]]}}"#,
        r#"{"metadata":{"managedFields":[["m"]]}}"#,
        r#"{"metadata":{"managedFields":[{"manager":"a","manager":"b"}]}}"#,
        r#"{"metadata":{"managedFields":[{"time":"x"}]}}"#,
        // Invalid JSON.
        r#"{"spec":{"a":"b}}"#,
        r#"{"spec":{"a":"b"}"#,
        r#"{"spec":{"a":tru}}"#,
        r#"{"spec":{"a":-}}"#,
        r#"{"spec":{"a":1.}}"#,
        r#"{"spec":{"a" 1}}"#,
        r#"{"spec":{"a":1,}}"#,
        r#"{"spec":["a",]}"#,
        r#"{"spec":"a\qb"}"#,
        "{\"spec\":\"a\tb\"}",
    ] {
        assert!(compact(text).is_none(), "{text}");
    }
    let deep = format!(
        r#"{{"spec":{}1{}}}"#,
        "[".repeat(MAX_NESTING),
        "]".repeat(MAX_NESTING)
    );
    assert!(compact(&deep).is_none());
    let deep_enough = format!(
        r#"{{"spec":{}1{}}}"#,
        "[".repeat(MAX_NESTING - 1),
        "]".repeat(MAX_NESTING - 1)
    );
    assert!(check(&deep_enough));
}

#[test]
fn a_string_is_scanned_to_its_end_eight_bytes_at_a_time() {
    // Each stop at each place in a word, and words of bytes above 0x7f that must not stop.
    for at in 0..17 {
        for (stop, quick) in [
            ("\\\"", true),
            ("\\\\", true),
            ("\\n", true),
            ("\u{1}", false),
        ] {
            let text = format!(
                r#"{{"a":"{}{stop}{}","b":"ééééé"}}"#,
                "x".repeat(at),
                "y".repeat(16 - at)
            );
            assert_eq!(check(&text), quick, "{text}");
        }
    }
}

/// Field values of the right type for some field and of the wrong one for others, as JSON text.
const VALUES: &[&str] = &[
    r#""a""#,
    r#""""#,
    r#""a\"b""#,
    r#""a\nb""#,
    r#""\u0061""#,
    r#""2026-01-05T10:00:00Z""#,
    r#""2026-02-30T10:00:00Z""#,
    r#""2026-01-05T10:00:00.5Z""#,
    r#""2026-01-05T10:00:00+01:00""#,
    "0",
    "-0",
    "7",
    "-7",
    "1.5",
    "1e3",
    "123456789012345678",
    "1234567890123456789",
    "true",
    "false",
    "null",
    "{}",
    r#"{"a":"b"}"#,
    r#"{"a":1}"#,
    r#"{"a":null}"#,
    r#"{"a\"":"b"}"#,
    "[]",
    r#"["a"]"#,
    "[1]",
    "[null]",
    "[{}]",
    r#"[{"apiVersion":"v1","kind":"K","name":"n","uid":"u","controller":true}]"#,
    r#"[{"controller":"yes"}]"#,
    r#"[{"name":1}]"#,
    r#"[{"x":[1,2]}]"#,
    r#"[{"blockOwnerDeletion":false,"blockOwnerDeletion":true}]"#,
    r#"[["a"]]"#,
    r#"[{"manager":"m","operation":"Update","time":"2026-01-05T10:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:a":{}}}]"#,
    r#"[{"manager":"m","manager":"n"}]"#,
    r#"[{"fieldsV1":{},"fieldsV1":{}}]"#,
    r#"[{"time":"bad"}]"#,
    r#"[{"subresource":5}]"#,
    r#"[{"fieldsV1":[1e5]}]"#,
];

/// Metadata keys: every field of ObjectMeta, unknown ones, and escaped spellings.
const META_KEYS: &[&str] = &[
    "name",
    "namespace",
    "resourceVersion",
    "uid",
    "generateName",
    "selfLink",
    "labels",
    "annotations",
    "finalizers",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
    "ownerReferences",
    "managedFields",
    "other",
    r"nam\u0065",
    r"a\/b",
];

const TOP_KEYS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "metadata",
    "spec",
    "status",
    r"\u0073pec",
    r#"a\"b"#,
];

/// An object's text from the pools above; `spaced` puts a space after some commas.
fn object_text() -> impl Strategy<Value = String> {
    let value = prop::sample::select(VALUES).prop_map(str::to_owned);
    let meta_entry =
        (prop::sample::select(META_KEYS), value.clone()).prop_map(|(k, v)| format!(r#""{k}":{v}"#));
    let metadata =
        prop::collection::vec(meta_entry, 0..8).prop_map(|e| format!("{{{}}}", e.join(",")));
    let top_value = prop_oneof![
        2 => metadata,
        1 => value,
        1 => crate::object::json_text::tests::json_value().prop_map(|v| v.to_string()),
    ];
    let top_entry =
        (prop::sample::select(TOP_KEYS), top_value).prop_map(|(k, v)| format!(r#""{k}":{v}"#));
    (prop::collection::vec(top_entry, 0..5), any::<bool>()).prop_map(|(entries, spaced)| {
        format!("{{{}}}", entries.join(if spaced { ", " } else { "," }))
    })
}

/// The bytes a mutation writes: JSON's punctuation, the starts of numbers and literals, and
/// what is never compact.
const EDIT_BYTES: &[u8] = b"\"\\{}[],:0-.ent a\x01";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn generated_objects_are_read_as_the_serde_path_reads_them(text in object_text()) {
        check(&text);
    }

    #[test]
    fn mutated_pods_are_read_as_the_serde_path_reads_them(
        edits in prop::collection::vec(
            (any::<prop::sample::Index>(), 0..3u8, prop::sample::select(EDIT_BYTES)), 1..4),
    ) {
        let mut text = pod().into_bytes();
        for (at, edit, byte) in edits {
            let at = at.index(text.len());
            match edit {
                0 => text[at] = byte,
                1 => text.insert(at, byte),
                _ => {
                    text.remove(at);
                }
            }
        }
        if let Ok(text) = String::from_utf8(text) {
            check(&text);
        }
    }
}
