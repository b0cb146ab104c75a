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

/// How each item of a split reached [`Items`]: `Ok(text)` read by `quick`, `Err(text)` scanned
/// and handed to `item`; `quick` reads an object whole if its text has no space in it.
#[derive(Default)]
struct Recorded {
    items: Vec<Result<String, String>>,
    /// The length of each text `quick` was offered.
    offered: Vec<usize>,
}

impl Items for &mut Recorded {
    type Error = SplitError;

    fn quick(&mut self, bytes: &[u8]) -> Quick {
        self.offered.push(bytes.len());
        let text = String::from_utf8_lossy(bytes);
        let Some(end) = text.find("}}").map(|at| at + 2) else {
            return Quick::More;
        };
        if text[..end].contains(' ') {
            return Quick::No;
        }
        self.items.push(Ok(text[..end].to_owned()));
        Quick::Read(end)
    }

    fn item(&mut self, text: &[u8]) -> Result<(), SplitError> {
        self.items
            .push(Err(String::from_utf8(text.to_vec()).unwrap()));
        Ok(())
    }
}

#[test]
fn objects_are_offered_to_the_quick_reader_first_and_again_as_they_arrive() {
    let text = r#"{"items":[{"a":{}},{"b": {}},"c",{"d":{}}]}"#;
    // At once: the quick reader takes the compact objects, the others are scanned.
    let mut recorded = Recorded::default();
    let mut splitter = ItemSplitter::new();
    splitter.feed_with(text.as_bytes(), &mut recorded).unwrap();
    assert_eq!(splitter.finish().unwrap(), b"{}");
    let expected = vec![
        Ok(r#"{"a":{}}"#.to_owned()),
        Err(r#"{"b": {}}"#.to_owned()),
        Err(r#""c""#.to_owned()),
        Ok(r#"{"d":{}}"#.to_owned()),
    ];
    assert_eq!(recorded.items, expected);
    // Cut inside an object: offered what arrived of it, then again from its start.
    let cut = text.find(r#"{}}"#).unwrap() + 1;
    let mut recorded = Recorded::default();
    let mut splitter = ItemSplitter::new();
    splitter
        .feed_with(&text.as_bytes()[..cut], &mut recorded)
        .unwrap();
    splitter
        .feed_with(&text.as_bytes()[cut..], &mut recorded)
        .unwrap();
    assert_eq!(recorded.items, expected);
    let first = text.find(r#"{"a""#).unwrap();
    assert_eq!(recorded.offered[..2], [cut - first, text.len() - first]);
}

#[test]
fn an_item_is_offered_once_as_much_of_it_has_arrived_as_of_the_last_one() {
    // Alike items, the last one shorter: cut anywhere, each is offered to the quick reader
    // once, but the first, which has no last one to go by; the last is read when the body ends.
    let items = [
        r#"{"a":{"x":"1111"}}"#,
        r#"{"b":{"x":"2222"}}"#,
        r#"{"c":{}}"#,
    ];
    let text = format!(r#"{{"items":[{}]}}"#, items.join(","));
    let first = text.find('{').unwrap() + text[1..].find('{').unwrap() + 1;
    for cut in 0..=text.len() {
        let mut recorded = Recorded::default();
        let mut splitter = ItemSplitter::new();
        for piece in [&text.as_bytes()[..cut], &text.as_bytes()[cut..]] {
            splitter.feed_with(piece, &mut recorded).unwrap();
        }
        assert_eq!(splitter.finish_with(&mut recorded).unwrap(), b"{}");
        assert_eq!(
            recorded.items,
            items.map(|item| Ok(item.to_owned())),
            "cut at {cut}"
        );
        let first_cut = (first + 1..first + items[0].len()).contains(&cut);
        let offers = items.len() + usize::from(first_cut);
        assert_eq!(
            recorded.offered.len(),
            offers,
            "cut at {cut}: {:?}",
            recorded.offered
        );
    }
}

#[test]
fn an_object_longer_than_the_retry_limit_is_scanned() {
    let big = format!(r#"{{"a":{{"b":"{}"}}}}"#, "x".repeat(2 * QUICK_RETRY_LIMIT));
    let text = format!(r#"{{"items":[{big}]}}"#);
    let mut recorded = Recorded::default();
    let mut splitter = ItemSplitter::new();
    for piece in text.as_bytes().chunks(16 * 1024) {
        splitter.feed_with(piece, &mut recorded).unwrap();
    }
    assert!(recorded.items == [Err(big)], "the item is scanned");
    // Offered while under the limit, never after.
    assert!(
        recorded.offered.len() <= QUICK_RETRY_LIMIT / (16 * 1024) + 1,
        "{:?}",
        recorded.offered
    );
}

/// A list page (resourceVersion 9) of `items`, and each item decoded on its own.
fn page_of(items: &[impl AsRef<str>]) -> (String, Vec<Object>) {
    let items: Vec<&str> = items.iter().map(AsRef::as_ref).collect();
    let text = format!(
        r#"{{"kind":"List","metadata":{{"resourceVersion":"9"}},"items":[{}]}}"#,
        items.join(",")
    );
    let expected = items
        .iter()
        .map(|item| Object::from_json_text(item).unwrap())
        .collect();
    (text, expected)
}

/// A page of objects decoded as they arrive, against each item's text decoded on its own.
#[test]
fn a_page_decodes_the_same_however_it_arrives() {
    let items = [
        r#"{"metadata":{"name":"a","namespace":"n","resourceVersion":"1"},"data":{"k":"v"}}"#,
        r#"{"metadata": {"name":"b"}}"#,
        r#"{"metadata":{"name":"c","labels":{"x":"y"}},"spec":{"n":1e3}}"#,
        r#"{"kind":"Pod","apiVersion":"v1","metadata":{"name":"d","managedFields":[{"manager":"m","fieldsV1":{"f:a":{}}}]},"status":{"phase":"Running","ready":[true,false,null]}}"#,
        // Shorter than the last one: left until the body ends.
        r#"{"metadata":{"name":"e"}}"#,
    ];
    let (text, expected) = page_of(&items);
    let bytes = text.as_bytes();
    let mut ways: Vec<Vec<&[u8]>> = vec![
        vec![bytes],
        bytes.chunks(1).collect(),
        bytes.chunks(7).collect(),
    ];
    for cut in 0..=bytes.len() {
        ways.push(vec![&bytes[..cut], &bytes[cut..]]);
    }
    for pieces in ways {
        let mut decoder = ListDecoder::new();
        for piece in &pieces {
            decoder.feed(piece).unwrap();
        }
        let page = decoder.finish().unwrap();
        assert_eq!(page.items, expected, "{pieces:?}");
        assert_eq!(page.resource_version, "9");
        for (decoded, expected) in page.items.iter().zip(&expected) {
            assert_eq!(decoded.name(), expected.name());
            assert_eq!(decoded.metadata_is_text(), expected.metadata_is_text());
        }
    }
}

/// Items of a few KiB, alike or not, cut by pieces longer than [`CARRY_SLACK`], as the pieces
/// of a page of pods cut its items: each item carried over is completed with part of the next
/// piece, or all of it when it is longer than the last one by more than the slack.
#[test]
fn items_carried_over_decode_the_same_whatever_their_lengths() {
    let lens = [
        3000,
        3000,
        3003,
        2990,
        3000 + 2 * CARRY_SLACK,
        3000,
        500,
        3000,
        3000,
        40,
        3000,
        3000,
    ];
    let items: Vec<String> = lens
        .iter()
        .enumerate()
        .map(|(i, &len)| {
            let data = "x".repeat(len);
            format!(r#"{{"metadata":{{"name":"o{i}"}},"data":{{"k":"{data}"}}}}"#)
        })
        .collect();
    let (text, expected) = page_of(&items);
    let bytes = text.as_bytes();
    for size in [1000, 2048, 4096, 5000, 7919, 16 * 1024] {
        for first in [0, 1, 40, 333, 2900] {
            let (head, tail) = bytes.split_at(first);
            let mut decoder = ListDecoder::new();
            for piece in std::iter::once(head).chain(tail.chunks(size)) {
                decoder.feed(piece).unwrap();
            }
            let page = decoder.finish().unwrap();
            assert!(page.items == expected, "pieces of {size} after {first}");
        }
    }
}

#[test]
fn an_item_that_does_not_decode_is_named_however_it_arrives() {
    let text = r#"{"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b","labels":5}}]}"#;
    let bytes = text.as_bytes();
    for cut in 0..=bytes.len() {
        let mut decoder = ListDecoder::new();
        let error = decoder
            .feed(&bytes[..cut])
            .and_then(|()| decoder.feed(&bytes[cut..]))
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            SourceError::Stream(
                "undecodable response: item 2 of the list, \"b\": in metadata, at its column \
                 22: invalid type: integer `5`, expected a map"
                    .to_owned()
            )
            .to_string(),
            "cut at {cut}"
        );
    }
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
