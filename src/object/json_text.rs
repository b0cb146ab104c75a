//! Reading JSON text without building a tree: the entries of an object borrowed from its text,
//! one entry found by a byte scanner that jumps through strings, the nesting depth of a value.
//!
//! The cache keeps objects as compact JSON text (docs/design.md, "The cached object"), and index
//! functions, labels, annotations and `field:` paths read single entries of it for every object
//! they see; a parser pass per lookup would cost more than the lookup. The scanners assume valid
//! text (what the cache holds) and never panic on invalid text; `json_text_tests.rs` checks them
//! against serde_json on arbitrary input.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// The entries of a JSON object text, borrowed from it; empty when `text` is not an object.
pub fn raw_entries(text: &str) -> Vec<(Cow<'_, str>, &RawValue)> {
    serde_json::from_str::<Fields<'_>>(text)
        .map(|fields| fields.0)
        .unwrap_or_default()
}

/// The value under `name` in a JSON object text, borrowed from it; `None` when `text` is not an
/// object or has no such entry. Of repeated keys the last counts, as for Go's decoder and
/// `ObjectMeta`. One pass that skips the other values without collecting them.
pub fn raw_entry<'a>(text: &'a str, name: &str) -> Option<&'a RawValue> {
    // Checked whole (nothing but whitespace after it, as `raw_entries` requires), then scanned.
    serde_json::from_str::<&RawValue>(text).ok()?;
    valid_entry(text, name)
}

/// How messages name the object whose JSON text is `text`, without decoding it (it may be what
/// failed to decode): `"namespace/name"`, `"name"`, or `an object without a name`.
pub fn describe_raw(text: &str) -> String {
    let metadata = raw_entry(text, "metadata");
    let field = |name| metadata.and_then(|m| valid_string_entry(m.get(), name));
    match (field("namespace"), field("name")) {
        (Some(namespace), Some(name)) => format!("{:?}", format!("{namespace}/{name}")),
        (None, Some(name)) => format!("{name:?}"),
        (_, None) => "an object without a name".to_owned(),
    }
}

/// [`raw_entry`] for text known to be valid JSON (this module's texts and values inside them):
/// scans bytes instead of running a parser, jumping through strings, since index functions and
/// `label()` call it for every object they see. Only the value found is parsed (to borrow it as
/// a `RawValue`). On invalid text the answer may be wrong, but it never panics.
pub(crate) fn valid_entry<'a>(text: &'a str, name: &str) -> Option<&'a RawValue> {
    serde_json::from_str(valid_entry_text(text, name)?).ok()
}

/// [`valid_entry`]'s value as text, unparsed.
pub(crate) fn valid_entry_text<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let bytes = text.as_bytes();
    let mut i = skip_space(bytes, 0);
    if bytes.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    let mut found = None;
    loop {
        i = skip_space(bytes, i);
        if bytes.get(i) != Some(&b'"') {
            // The end of an empty object.
            return found;
        }
        let key_end = string_end(bytes, i)?;
        let key = &text[i + 1..key_end - 1];
        let matches = if key.contains('\\') {
            serde_json::from_str::<String>(&text[i..key_end]).is_ok_and(|k| k == name)
        } else {
            key == name
        };
        i = skip_space(bytes, key_end);
        if bytes.get(i) != Some(&b':') {
            return None;
        }
        let start = skip_space(bytes, i + 1);
        let end = value_end(bytes, start)?;
        if matches {
            // Read on: of repeated keys the last counts.
            found = Some(&text[start..end]);
        }
        i = skip_space(bytes, end);
        match bytes.get(i) {
            Some(b',') => i += 1,
            _ => return found,
        }
    }
}

/// Where the member `name` (its key's quote to the end of its value) is in valid JSON object text
/// whose keys hold no `\u` escape (as the cache's texts): the first such member.
pub(crate) fn valid_member(text: &str, name: &str) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut i = skip_space(bytes, 0);
    if bytes.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        i = skip_space(bytes, i);
        if bytes.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(bytes, i)?;
        let colon = skip_space(bytes, key_end);
        if bytes.get(colon) != Some(&b':') {
            return None;
        }
        let end = value_end(bytes, skip_space(bytes, colon + 1))?;
        if &text[i + 1..key_end - 1] == name {
            return Some((i, end));
        }
        i = skip_space(bytes, end);
        match bytes.get(i) {
            Some(b',') => i += 1,
            _ => return None,
        }
    }
}

pub(crate) fn skip_space(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
        i += 1;
    }
    i
}

/// The string under `name` in valid JSON text, borrowed unless escaped; `None` when absent or not a
/// string. As [`valid_entry`], for labels and annotations.
pub(crate) fn valid_string_entry<'a>(text: &'a str, name: &str) -> Option<Cow<'a, str>> {
    let value = valid_entry_text(text, name)?;
    match value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
        Some(inner) if !inner.contains('\\') => Some(Cow::Borrowed(inner)),
        _ => serde_json::from_str::<Key<'_>>(value).ok().map(|k| k.0),
    }
}

/// The index after the string that starts (with its quote) at `start`.
pub(crate) fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    loop {
        let at = i + memchr::memchr2(b'"', b'\\', bytes.get(i..)?)?;
        match bytes[at] {
            b'"' => return Some(at + 1),
            _ => i = at + 2,
        }
    }
}

/// The index after the value that starts at `start`.
pub(crate) fn value_end(bytes: &[u8], start: usize) -> Option<usize> {
    match bytes.get(start)? {
        b'"' => string_end(bytes, start),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = start;
            loop {
                match bytes.get(i)? {
                    b'"' => {
                        i = string_end(bytes, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        // A number, `true`, `false` or `null`: up to the next delimiter.
        _ => {
            let mut i = start;
            while bytes
                .get(i)
                .is_some_and(|b| !matches!(b, b',' | b'}' | b']') && !b.is_ascii_whitespace())
            {
                i += 1;
            }
            (i > start).then_some(i)
        }
    }
}

/// How deeply the JSON text `text` nests (`0` for a scalar), in one pass that jumps through
/// strings; for valid text.
pub(crate) fn nesting(text: &str) -> usize {
    let bytes = text.as_bytes();
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' => match string_end(bytes, i) {
                Some(end) => {
                    i = end;
                    continue;
                }
                None => break,
            },
            b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    deepest
}

/// The body's fields, borrowed from its text.
pub(crate) struct Fields<'a>(pub(crate) Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de> Deserialize<'de> for Fields<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldsVisitor;
        impl<'de> Visitor<'de> for FieldsVisitor {
            type Value = Fields<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields<'de>, A::Error> {
                let mut out = Vec::new();
                while let Some(key) = map.next_key::<Key<'de>>()? {
                    out.push((key.0, map.next_value::<&'de RawValue>()?));
                }
                Ok(Fields(out))
            }
        }
        deserializer.deserialize_map(FieldsVisitor)
    }
}

/// A string (a map key, or a value), borrowed when it has no escapes.
pub(crate) struct Key<'a>(pub(crate) Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Key<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for KeyVisitor<'a> {
            type Value = Key<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'a>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'a>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'a>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(KeyVisitor(std::marker::PhantomData))
    }
}

#[cfg(test)]
#[path = "json_text_tests.rs"]
pub(crate) mod tests;
