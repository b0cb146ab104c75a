//! The splitter against serde_json: a list as the API server writes it, fed in every way it can
//! arrive, then arbitrary lists and arbitrary text.

use proptest::prelude::*;
use serde_json::{Map, Value};

use super::*;
use crate::object::json_text::tests::json_value;

/// What a split gives: each item's text, and the rest's text, or the error.
fn split(pieces: &[&[u8]]) -> Result<(Vec<String>, String), SplitError> {
    let mut items = Vec::new();
    let mut splitter = ItemSplitter::new();
    for piece in pieces {
        splitter.feed(piece, |item| {
            items.push(String::from_utf8(item.to_vec()).unwrap());
            Ok::<_, SplitError>(())
        })?;
    }
    let rest = splitter.finish()?;
    Ok((items, String::from_utf8(rest).unwrap()))
}

/// The same text fed at once, one byte at a time, and cut at every point in two.
fn every_way(text: &str) -> Vec<Result<(Vec<String>, String), SplitError>> {
    let bytes = text.as_bytes();
    let mut ways = vec![split(&[bytes])];
    ways.push(split(&bytes.chunks(1).collect::<Vec<_>>()));
    for cut in 0..=bytes.len() {
        ways.push(split(&[&bytes[..cut], &bytes[cut..]]));
    }
    ways
}

const PAGE: &str = r#"{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"6001","continue":"eyJ9"},"items":[{"metadata":{"name":"a","namespace":"perf"},"data":{"k":"v \" ] } \\"}},{"metadata":{"name":"b"}}]}"#;

#[test]
fn a_page_splits_into_its_items_and_the_rest_however_it_arrives() {
    let expected = (
        vec![
            r#"{"metadata":{"name":"a","namespace":"perf"},"data":{"k":"v \" ] } \\"}}"#.to_owned(),
            r#"{"metadata":{"name":"b"}}"#.to_owned(),
        ],
        r#"{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"6001","continue":"eyJ9"}}"#
            .to_owned(),
    );
    for way in every_way(PAGE) {
        assert_eq!(way, Ok(expected.clone()));
    }
}

#[test]
fn members_in_any_order_with_whitespace_and_an_empty_or_null_items() {
    let text =
        " {\n \"items\" : [ ] ,\"metadata\" : { \"resourceVersion\" : \"7\" } , \"n\": -1.5e3 }\n";
    for way in every_way(text) {
        let (items, rest) = way.unwrap();
        assert!(items.is_empty());
        let rest: Value = serde_json::from_str(&rest).unwrap();
        assert_eq!(
            rest,
            serde_json::json!({"metadata": {"resourceVersion": "7"}, "n": -1.5e3})
        );
    }
    let (items, rest) = split(&[br#"{"metadata":{},"items":null}"#]).unwrap();
    assert!(items.is_empty());
    assert_eq!(rest, r#"{"metadata":{}}"#);
    // A key written with escapes is still `items`.
    let (items, _) = split(&[br#"{"\u0069tems":[{"a":1}]}"#]).unwrap();
    assert_eq!(items, [r#"{"a":1}"#]);
}

#[test]
fn text_that_is_no_list_is_refused_with_where() {
    for (text, why) in [
        ("", "an empty body instead of a list at byte 0"),
        ("[]", "expected `{` opening the list at byte 0"),
        (
            r#"{"items":[{"a":1}"#,
            "the body ended before the list did at byte 17",
        ),
        (r#"{"items":[{},]}"#, "expected an item at byte 13"),
        (
            r#"{"items":{}}"#,
            "`items` is neither an array nor null at byte 9",
        ),
        (r#"{"items":[],"items":[]}"#, "a second `items` at byte 12"),
        (r#"{"a":1} {}"#, "expected nothing after the list at byte 8"),
        (r#"{"a":,}"#, "expected a value at byte 5"),
    ] {
        let refused = split(&[text.as_bytes()]).unwrap_err().to_string();
        assert_eq!(refused, format!("{why} of the list"), "{text}");
    }
}

#[test]
fn only_the_item_in_progress_is_kept() {
    let mut splitter = ItemSplitter::new();
    let item = format!(r#"{{"data":"{}"}}"#, "x".repeat(1000));
    let mut text = String::from(r#"{"items":["#);
    for i in 0..100 {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&item);
    }
    text.push_str("]}");
    let mut seen = 0;
    for piece in text.as_bytes().chunks(4096) {
        splitter
            .feed(piece, |_| {
                seen += 1;
                Ok::<_, SplitError>(())
            })
            .unwrap();
        assert!(splitter.buf.len() <= item.len(), "{}", splitter.buf.len());
    }
    assert_eq!(seen, 100);
    assert_eq!(splitter.finish().unwrap(), b"{}");
}

/// The text of a list with these other members and items, in this order, compact or spaced.
fn list_text(
    members: &[(String, Value)],
    items: Option<&[Value]>,
    at: usize,
    spaced: bool,
) -> String {
    let write = |v: &Value| {
        if spaced {
            serde_json::to_string_pretty(v).unwrap()
        } else {
            v.to_string()
        }
    };
    let mut parts: Vec<String> = members
        .iter()
        .map(|(k, v)| format!("{}:{}", Value::String(k.clone()), write(v)))
        .collect();
    let items = match items {
        Some(items) => write(&Value::Array(items.to_vec())),
        None => "null".to_owned(),
    };
    parts.insert(at.min(parts.len()), format!(r#""items":{items}"#));
    let sep = if spaced { " ,\n " } else { "," };
    format!("{{{}}}", parts.join(sep))
}

/// A parsed list's items (none for `null`) and its other members.
fn as_serde_json_splits(mut list: Map<String, Value>) -> (Vec<Value>, Map<String, Value>) {
    let items = match list.remove("items") {
        Some(Value::Array(items)) => items,
        _ => vec![],
    };
    (items, list)
}

proptest! {
    /// Valid lists split into what serde_json reads: the items, and the other members.
    #[test]
    fn lists_split_as_serde_json_reads_them(
        members in prop::collection::vec(("[a-h]{1,3}", json_value()), 0..4),
        items in prop::option::weighted(0.9, prop::collection::vec(json_value(), 0..6)),
        at in 0usize..5,
        spaced in any::<bool>(),
        piece in 1usize..40,
    ) {
        // Distinct keys other than `items`: a repeated key is serde_json's business, not ours.
        let members: Vec<(String, Value)> = members
            .into_iter()
            .filter(|(k, _)| k != "items")
            .collect::<Map<_, _>>()
            .into_iter()
            .collect();
        let text = list_text(&members, items.as_deref(), at, spaced);
        let parsed: Map<String, Value> = serde_json::from_str(&text).unwrap();
        let (split_items, rest) = split(&text.as_bytes().chunks(piece).collect::<Vec<_>>()).unwrap();
        let split_items: Vec<Value> =
            split_items.iter().map(|i| serde_json::from_str(i).unwrap()).collect();
        let rest: Map<String, Value> = serde_json::from_str(&rest).unwrap();
        prop_assert_eq!((split_items, rest), as_serde_json_splits(parsed));
    }

    /// Arbitrary text never panics; what is accepted with items and rest that parse is a list
    /// serde_json reads the same.
    #[test]
    fn arbitrary_text_never_panics_and_accepts_only_lists(
        text in "[ {}\\[\\]\":,a0-9\\\\tnulr.e-]{0,40}|\\{\"items\":\\[[ {}\\[\\]\":,a0-9\\\\tnul]{0,30}",
        piece in 1usize..10,
    ) {
        let Ok((items, rest)) = split(&text.as_bytes().chunks(piece).collect::<Vec<_>>()) else {
            return Ok(());
        };
        let items: Result<Vec<Value>, _> = items.iter().map(|i| serde_json::from_str(i)).collect();
        let rest: Result<Map<String, Value>, _> = serde_json::from_str(&rest);
        if let (Ok(items), Ok(rest)) = (items, rest) {
            let parsed: Map<String, Value> = serde_json::from_str(&text).expect("a list");
            prop_assert_eq!((items, rest), as_serde_json_splits(parsed));
        }
    }
}

#[test]
fn keys_with_escapes_and_quotes_stay_in_the_rest() {
    let (items, rest) = split(&[br#"{"a\"b":{"}":"]"},"items":[]}"#]).unwrap();
    assert!(items.is_empty());
    assert_eq!(rest, r#"{"a\"b":{"}":"]"}}"#);
}
