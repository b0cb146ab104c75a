//! The scanners against serde_json: hand-picked cases, then arbitrary objects and arbitrary text.

use proptest::prelude::*;
use serde_json::{Map, Value};

use super::*;

#[test]
fn raw_entry_finds_one_value_without_collecting_the_others() {
    let text = r#"{"spec":{"a":[1,{"b":"}"}]},"status":"x","spec":2}"#;
    // Of repeated keys the last counts, as for Go's decoder.
    assert_eq!(raw_entry(text, "spec").map(RawValue::get), Some("2"));
    assert_eq!(
        raw_entry(r#"{"spec":{"a":[1,{"b":"}"}]}}"#, "spec").map(RawValue::get),
        Some(r#"{"a":[1,{"b":"}"}]}"#)
    );
    assert_eq!(raw_entry(text, "status").map(RawValue::get), Some(r#""x""#));
    assert!(raw_entry(text, "missing").is_none());
    assert!(raw_entry("[1,2]", "spec").is_none(), "not an object");
    assert!(raw_entry("", "spec").is_none());
    assert!(raw_entry(r#"{"spec":"#, "spec").is_none(), "truncated");
    assert!(
        raw_entry(r#"{"spec":1} x"#, "spec").is_none(),
        "trailing text"
    );
    // A key written with escapes is still found.
    assert_eq!(
        raw_entry(r#"{"\u0073pec":1}"#, "spec").map(RawValue::get),
        Some("1")
    );
}

#[test]
fn valid_entry_agrees_with_raw_entry_on_valid_text() {
    let texts = [
        r#"{"spec":{"a":[1,{"b":"}"}]},"status":"x","spec":2}"#,
        r#" { "n" : -1.5e3 , "t":true,"z":null, "s":"a\"}b" ,"o":{"\u0073pec":[]} } "#,
        r#"{"\u0073pec":1,"e":{},"l":[]}"#,
        r#"{}"#,
        r#"[1,2]"#,
    ];
    for text in texts {
        for name in [
            "spec", "status", "n", "t", "z", "s", "o", "e", "l", "missing",
        ] {
            assert_eq!(
                valid_entry(text, name).map(RawValue::get),
                raw_entry(text, name).map(RawValue::get),
                "{name} in {text}"
            );
        }
    }
}

#[test]
fn nesting_counts_the_deepest_bracket_outside_strings() {
    assert_eq!(nesting("1"), 0);
    assert_eq!(nesting(r#"{"a":[1,{"b":"[[["}],"c":{}}"#), 3);
    assert_eq!(nesting(r#"["\\"]"#), 1);
}

/// Arbitrary JSON values, nested a few levels, with keys that need escapes now and then.
pub(crate) fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        "[a-z\\\"}{\\[\\] ,:\\\\\u{1b}é]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..5)
                .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn key() -> impl Strategy<Value = String> {
    "[a-c\"\\\\:,}{ ]{0,3}"
}

/// The text of an object with these entries, keys repeated as given, written compactly or with
/// whitespace.
fn object_text(entries: &[(String, Value)], spaced: bool) -> String {
    let sep = if spaced { " , " } else { "," };
    let colon = if spaced { " : " } else { ":" };
    let body: Vec<String> = entries
        .iter()
        .map(|(k, v)| {
            let v = if spaced {
                serde_json::to_string_pretty(v).unwrap()
            } else {
                v.to_string()
            };
            format!("{}{colon}{v}", Value::String(k.clone()))
        })
        .collect();
    format!("{{{}}}", body.join(sep))
}

/// `v` as a parser reads it back from its text (serde_json's float parsing is not exact).
fn reparsed(v: &Value) -> Value {
    serde_json::from_str(&v.to_string()).unwrap()
}

fn depth(v: &Value) -> usize {
    match v {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

proptest! {
    /// On valid text every lookup finds what a parser finds: the last entry of that name.
    #[test]
    fn lookups_find_what_serde_json_finds(
        entries in prop::collection::vec((key(), json_value()), 0..6),
        spaced in any::<bool>(),
        probe in key(),
    ) {
        let text = object_text(&entries, spaced);
        let names: Vec<&String> = entries.iter().map(|(k, _)| k).chain([&probe]).collect();
        for name in names {
            let expected = entries.iter().rev().find(|(k, _)| k == name).map(|(_, v)| reparsed(v));
            let found = |raw: Option<&RawValue>| {
                raw.map(|r| serde_json::from_str::<Value>(r.get()).unwrap())
            };
            prop_assert_eq!(found(raw_entry(&text, name)), expected.clone(), "raw_entry {:?} in {}", name, text);
            prop_assert_eq!(found(valid_entry(&text, name)), expected.clone(), "valid_entry {:?} in {}", name, text);
            let string = valid_string_entry(&text, name).map(|s| s.into_owned());
            let expected_string = expected.and_then(|v| v.as_str().map(str::to_owned));
            prop_assert_eq!(string, expected_string, "valid_string_entry {:?} in {}", name, text);
        }
        let all: Vec<(String, Value)> = raw_entries(&text)
            .into_iter()
            .map(|(k, v)| (k.into_owned(), serde_json::from_str(v.get()).unwrap()))
            .collect();
        let entries: Vec<(String, Value)> =
            entries.iter().map(|(k, v)| (k.clone(), reparsed(v))).collect();
        prop_assert_eq!(all, entries);
    }

    /// `nesting` is the depth a parser sees.
    #[test]
    fn nesting_is_the_parsed_depth(value in json_value(), spaced in any::<bool>()) {
        let text = if spaced {
            serde_json::to_string_pretty(&value).unwrap()
        } else {
            value.to_string()
        };
        prop_assert_eq!(nesting(&text), depth(&value));
    }

    /// Arbitrary text never makes a scanner panic, and `raw_entry`, which checks its text, only
    /// answers for text serde_json reads as an object.
    #[test]
    fn arbitrary_text_never_panics(text in "[ {}\\[\\]\":,a0-9\\\\tnulr.e-]{0,40}", name in "[a0]{0,2}") {
        let _ = valid_entry_text(&text, &name);
        let _ = valid_string_entry(&text, &name);
        let _ = nesting(&text);
        let _ = raw_entries(&text);
        if let Some(found) = raw_entry(&text, &name) {
            let parsed: Map<String, Value> = serde_json::from_str(&text).expect("an object");
            let value: Value = serde_json::from_str(found.get()).unwrap();
            prop_assert_eq!(Some(&value), parsed.get(&name));
        }
    }
}
