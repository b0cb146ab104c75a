use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::json;
use serde_json::value::RawValue;

use crate::object::{FromJson, Object};

fn from_json(text: &str) -> Result<Object, serde_json::Error> {
    let raw: &RawValue = serde_json::from_str(text).unwrap();
    Object::from_json(raw)
}

fn labels(obj: &Object) -> Vec<String> {
    obj.labels()
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect()
}

const POD: &str = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","namespace":"prod","uid":"u-1","resourceVersion":"42","creationTimestamp":"2026-01-05T10:00:00Z","labels":{"app":"web","tier":"fe"},"annotations":{"a\"b":"x\ny"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-7f","uid":"u-0","controller":true}],"managedFields":[{"manager":"kubectl","operation":"Apply","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{}}}]},"spec":{"nodeName":"n1"}}"#;

#[test]
fn key_fields_are_read_from_the_text_and_the_rest_decodes_as_object_meta() {
    for obj in [
        from_json(POD).unwrap(),
        serde_json::from_str::<Object>(POD).unwrap(),
    ] {
        assert!(obj.metadata_is_text());
        assert_eq!(obj.name(), Some("web-1"));
        assert_eq!(obj.namespace(), Some("prod"));
        assert_eq!(obj.resource_version(), Some("42"));
        let expected: ObjectMeta = serde_json::from_value(
            serde_json::from_str::<serde_json::Value>(POD).unwrap()["metadata"].clone(),
        )
        .unwrap();
        assert_eq!(*obj.metadata(), expected);
        assert_eq!(*obj.meta(), expected);
        assert_eq!(obj.label("tier").as_deref(), Some("fe"));
        assert_eq!(obj.label("none"), None);
        assert_eq!(obj.annotation("a\"b").as_deref(), Some("x\ny"));
        assert_eq!(labels(&obj), ["app=web", "tier=fe"]);
    }
}

#[test]
fn escaped_key_fields_are_read_unescaped() {
    let obj =
        from_json(r#"{"metadata":{"name":"a\u0062c","namespace":"n\"s","resourceVersion":"7"}}"#)
            .unwrap();
    assert_eq!(obj.name(), Some("abc"));
    assert_eq!(obj.namespace(), Some("n\"s"));
    assert_eq!(obj.resource_version(), Some("7"));
}

#[test]
fn metadata_that_is_not_an_object_meta_is_an_error_where_it_is_read() {
    for (metadata, message) in [
        (
            r#"{"name":"a","labels":5}"#,
            "invalid type: integer `5`, expected a map",
        ),
        (
            r#"{"name":5}"#,
            "invalid type: integer `5`, expected a string",
        ),
        (
            r#"{"name":"a","labels":{"k":null}}"#,
            "invalid type: null, expected a string",
        ),
        (r#"{"creationTimestamp":"yesterday"}"#, ""),
        (
            r#"{"ownerReferences":{"kind":"X"}}"#,
            "invalid type: map, expected a sequence",
        ),
        (
            r#"{"generation":"1"}"#,
            "invalid type: string \"1\", expected i64",
        ),
        (r#"[]"#, "invalid type: sequence, expected ObjectMeta"),
    ] {
        let text = format!(r#"{{"kind":"Pod","metadata":{metadata}}}"#);
        for error in [
            from_json(&text).unwrap_err().to_string(),
            serde_json::from_str::<Object>(&text)
                .unwrap_err()
                .to_string(),
        ] {
            let (place, problem) = error.split_once(": ").unwrap();
            assert!(
                place.starts_with("in metadata, at its column "),
                "{metadata}: {error}"
            );
            assert!(problem.starts_with(message), "{metadata}: {error}");
        }
    }
}

#[test]
fn outputs_leave_out_managed_fields_and_strip_drops_them() {
    let mut obj = from_json(POD).unwrap();
    let meta_only = serde_json::to_value(obj.json_meta()).unwrap();
    assert!(meta_only["metadata"].get("managedFields").is_none());
    assert_eq!(meta_only["metadata"]["uid"], "u-1");
    assert!(meta_only.get("spec").is_none());
    let whole = serde_json::to_value(obj.json(true)).unwrap();
    assert_eq!(
        whole,
        serde_json::from_str::<serde_json::Value>(POD).unwrap()
    );
    assert_eq!(serde_json::to_value(&obj).unwrap(), whole);

    obj.strip_managed_fields();
    assert!(obj.metadata_is_text());
    assert_eq!(obj.meta().managed_fields, None);
    assert_eq!(obj.name(), Some("web-1"));
    assert_eq!(obj.resource_version(), Some("42"));
    let stripped = serde_json::to_value(obj.json(true)).unwrap();
    assert!(stripped["metadata"].get("managedFields").is_none());
    assert_eq!(stripped["metadata"]["labels"]["app"], "web");
}

#[test]
fn stripping_managed_fields_keeps_the_rest_of_the_text_as_it_came() {
    let managed = r#""managedFields":[{"manager":"m","fieldsV1":{"f:data":{"k:{\"a\":1}":{}}}}]"#;
    for (metadata, stripped) in [
        (
            format!(r#"{{{managed},"name":"n","namespace":"ns","resourceVersion":"1"}}"#),
            r#"{"name":"n","namespace":"ns","resourceVersion":"1"}"#,
        ),
        (
            format!(
                r#"{{"name":"n",{managed},"namespace":"ns","a\/b":"x","resourceVersion":"1"}}"#
            ),
            r#"{"name":"n","namespace":"ns","a\/b":"x","resourceVersion":"1"}"#,
        ),
        (
            format!(r#"{{"name":"n","namespace":"ns","resourceVersion":"1",{managed}}}"#),
            r#"{"name":"n","namespace":"ns","resourceVersion":"1"}"#,
        ),
        (format!("{{{managed}}}"), "{}"),
    ] {
        let mut obj = from_json(&format!(r#"{{"metadata":{metadata},"data":{{}}}}"#)).unwrap();
        obj.strip_managed_fields();
        // Byte for byte, the escape in an unknown key included, and held as text.
        assert_eq!(obj.metadata_text().map(RawValue::get), Some(stripped));
        let expected = from_json(&format!(r#"{{"metadata":{stripped},"data":{{}}}}"#)).unwrap();
        assert_eq!(obj.name(), expected.name());
        assert_eq!(obj.namespace(), expected.namespace());
        assert_eq!(obj.resource_version(), expected.resource_version());
        assert_eq!(*obj.metadata(), *expected.metadata());
        assert_eq!(
            serde_json::to_string(&obj.json(true)).unwrap(),
            serde_json::to_string(&expected.json(true)).unwrap()
        );
    }
}

#[test]
fn a_change_holds_the_metadata_typed_and_is_what_comes_out() {
    let original = from_json(POD).unwrap();
    let mut obj = original.clone();
    assert_eq!(obj, original);
    obj.meta_mut().resource_version = Some("43".into());
    assert!(!obj.metadata_is_text());
    assert_eq!(obj.resource_version(), Some("43"));
    assert_ne!(obj, original);
    let out = serde_json::to_value(obj.json(false)).unwrap();
    assert_eq!(out["metadata"]["resourceVersion"], "43");
    assert_eq!(out["metadata"]["labels"]["app"], "web");
    assert!(out["metadata"].get("managedFields").is_none());

    // The same metadata, typed and as text, are equal.
    let mut typed = original.clone();
    typed.meta_mut();
    assert_eq!(typed, original);
}

#[test]
fn text_with_whitespace_is_stored_compact() {
    let obj = from_json(
        "{ \"kind\" : \"ConfigMap\",\n \"metadata\" : { \"name\" : \"a b\" ,\"labels\": {\"k\" : \"v w\"}},\n \"data\" : { \"x\" : [1, 2] } }",
    )
    .unwrap();
    assert_eq!(obj.name(), Some("a b"));
    assert_eq!(
        serde_json::to_string(&obj.json(true)).unwrap(),
        r#"{"apiVersion":"","kind":"ConfigMap","metadata":{"name":"a b","labels":{"k":"v w"}},"data":{"x":[1,2]}}"#
    );
    assert_eq!(obj.body_len(), r#"{"data":{"x":[1,2]}}"#.len());
}

#[test]
fn objects_in_a_larger_document_are_read_in_place() {
    #[derive(serde::Deserialize)]
    struct Line {
        object: FromJson,
    }
    let line: Line = serde_json::from_str(&format!(r#"{{"object":{POD}}}"#)).unwrap();
    assert_eq!(line.object.0, from_json(POD).unwrap());

    // Errors carry the position in the whole document.
    let error = serde_json::from_str::<Line>(r#"{"object":{"metadata":{"name":1}}}"#)
        .err()
        .unwrap();
    assert_eq!(
        error.to_string(),
        "in metadata, at its column 9: invalid type: integer `1`, expected a string at line 1 column 33"
    );
    assert_eq!(
        json!(
            serde_json::from_str::<Object>(r#"{"metadata":null}"#)
                .unwrap()
                .name()
        ),
        json!(null)
    );
}

#[test]
fn escapes_are_checked_and_decoded() {
    // serde_json's check of borrowed text lets a lone surrogate through: such values are
    // transcoded, which refuses it.
    let error = from_json(r#"{"metadata":{"name":"a"},"spec":{"x":"\ud800"}}"#).unwrap_err();
    assert!(error.to_string().contains("hex escape"), "{error}");
    let error = from_json(r#"{"metadata":{"name":"a","x":"\ud800"}}"#).unwrap_err();
    assert!(error.to_string().contains("hex escape"), "{error}");
    // The API server writes `&` as \u0026: the cached text holds the character.
    let obj = from_json(
        r#"{"metadata":{"name":"a","annotations":{"k":"a\u0026b"}},"data":{"v":"\u0026"}}"#,
    )
    .unwrap();
    assert_eq!(obj.annotation("k").as_deref(), Some("a&b"));
    assert_eq!(
        serde_json::to_string(&obj.json(true)).unwrap(),
        r#"{"metadata":{"name":"a","annotations":{"k":"a&b"}},"data":{"v":"&"}}"#
    );
}

#[test]
fn values_that_could_not_be_decoded_later_are_refused_where_they_are_read() {
    for (value, problem) in [
        ("1e400", "number out of range"),
        ("-1e400", "number out of range"),
        (&format!("{}1", "9".repeat(400)), "number out of range"),
    ] {
        let text = format!(r#"{{"metadata":{{"name":"a"}},"spec":{{"v":{value}}}}}"#);
        let error = from_json(&text).unwrap_err().to_string();
        assert!(error.contains(problem), "{error}");
        assert!(error.contains("of the value"), "{error}");
    }
    // In range, they are normalised by transcoding (the whole value: here `-0` too).
    let obj = from_json(
        r#"{"metadata":{"name":"a"},"spec":{"e":1E2,"big":123456789012345678901,"n":-0,"f":0.5}}"#,
    )
    .unwrap();
    assert_eq!(
        obj.field("spec").unwrap().get(),
        r#"{"e":100.0,"big":1.2345678901234567e+20,"n":-0.0,"f":0.5}"#
    );
}

#[test]
fn managed_fields_as_deep_as_their_object_are_kept_but_not_decoded() {
    let mut fields_v1 = String::from("{}");
    for _ in 0..300 {
        fields_v1 = format!(r#"{{"f:a":{fields_v1}}}"#);
    }
    let text = format!(
        r#"{{"metadata":{{"name":"a","labels":{{"app":"web"}},"managedFields":[{{"manager":"m","fieldsType":"FieldsV1","fieldsV1":{fields_v1}}}]}}}}"#
    );
    let obj = from_json(&text).unwrap();
    // Too deep for ObjectMeta's tree: left out of it, kept in the text.
    assert_eq!(obj.meta().labels.as_ref().unwrap()["app"], "web");
    assert!(obj.meta().managed_fields.is_none());
    assert_eq!(serde_json::to_string(&obj).unwrap(), text);
}

#[test]
fn ordinary_numbers_are_copied_as_written() {
    let obj =
        from_json(r#"{"metadata":{"name":"a"},"spec":{"n":-0,"i":123456789012345678,"f":0.25}}"#)
            .unwrap();
    assert_eq!(
        obj.field("spec").unwrap().get(),
        r#"{"n":-0,"i":123456789012345678,"f":0.25}"#
    );
}

#[test]
fn repeated_label_keys_read_as_object_meta_reads_them() {
    let obj = from_json(
        r#"{"metadata":{"name":"e","labels":{"app":"one","tier":"x","app":"two"},"annotations":{"k":"1","k":"2"}}}"#,
    )
    .unwrap();
    let decoded = obj.metadata().into_owned();
    assert_eq!(obj.label("app").as_deref(), Some("two"));
    assert_eq!(decoded.labels.as_ref().unwrap()["app"], "two");
    assert_eq!(obj.annotation("k").as_deref(), Some("2"));
    assert_eq!(labels(&obj), ["app=two", "tier=x"]);
}

#[test]
fn null_metadata_fields_are_dropped_as_object_meta_drops_them() {
    let with_nulls = from_json(
        r#"{"metadata":{"name":"a","labels":null,"creationTimestamp":null,"managedFields":null,"finalizers":null}}"#,
    )
    .unwrap();
    let without = from_json(r#"{"metadata":{"name":"a"}}"#).unwrap();
    assert!(with_nulls.metadata_is_text());
    assert_eq!(
        serde_json::to_string(&with_nulls.json_meta()).unwrap(),
        r#"{"metadata":{"name":"a"}}"#
    );
    assert_eq!(
        with_nulls.metadata_text().unwrap().get(),
        without.metadata_text().unwrap().get()
    );
    // A string holding `:null` is left alone.
    let obj = from_json(r#"{"metadata":{"name":"a","annotations":{"x":"k:null"}}}"#).unwrap();
    assert_eq!(obj.annotation("x").as_deref(), Some("k:null"));
}

#[test]
fn key_fields_beyond_a_spans_reach_are_held_typed_and_read_the_same() {
    let big = "x".repeat(70_000);
    let far = format!(
        r#"{{"metadata":{{"annotations":{{"big":"{big}"}},"name":"far","namespace":"ns","resourceVersion":"9"}},"data":{{}}}}"#
    );
    let near = format!(
        r#"{{"metadata":{{"name":"near","namespace":"ns","resourceVersion":"9","annotations":{{"big":"{big}"}}}},"data":{{}}}}"#
    );
    for (text, name, as_text) in [(&far, "far", false), (&near, "near", true)] {
        for obj in [
            from_json(text).unwrap(),
            serde_json::from_str::<Object>(text).unwrap(),
        ] {
            assert_eq!(obj.metadata_is_text(), as_text, "{name}");
            assert_eq!(obj.name(), Some(name));
            assert_eq!(obj.namespace(), Some("ns"));
            assert_eq!(obj.resource_version(), Some("9"));
            assert_eq!(obj.annotation("big").as_deref(), Some(big.as_str()));
            let back: serde_json::Value = serde_json::to_value(obj.json(true)).unwrap();
            assert_eq!(
                back,
                serde_json::from_str::<serde_json::Value>(text).unwrap()
            );
        }
    }
    // A managedFields member as long, before the key fields: stripping it moves their spans back
    // within reach, but the metadata was typed from the start.
    let managed = format!(r#""managedFields":[{{"manager":"{big}"}}]"#);
    let mut obj = from_json(&format!(
        r#"{{"metadata":{{{managed},"name":"n","namespace":"ns","resourceVersion":"1"}}}}"#
    ))
    .unwrap();
    assert!(!obj.metadata_is_text());
    obj.strip_managed_fields();
    assert_eq!(obj.name(), Some("n"));
    assert_eq!(obj.resource_version(), Some("1"));
    // After the key fields, it is taken out of the text and the spans stay.
    let mut obj = from_json(&format!(
        r#"{{"metadata":{{"name":"n","namespace":"ns","resourceVersion":"1",{managed}}}}}"#
    ))
    .unwrap();
    assert!(obj.metadata_is_text());
    obj.strip_managed_fields();
    assert_eq!(
        obj.metadata_text().map(RawValue::get),
        Some(r#"{"name":"n","namespace":"ns","resourceVersion":"1"}"#)
    );
}
