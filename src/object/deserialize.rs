//! Reading an [`Object`]: `apiVersion` and `kind` typed, every other field kept as compact JSON
//! text, copied from serde_json's input where it already is compact, and nesting bounded.

use super::*;

impl<'de> Deserialize<'de> for Object {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ObjectVisitor::<Transcode>(PhantomData))
    }
}

/// An [`Object`] decoded as [`Object::from_json`] does, as a field of a type that serde_json
/// decodes from text (`from_str`): it borrows the values' text from the input, which other
/// deserializers (`from_reader`, `from_value`, serde's buffering for untagged or flattened
/// fields) cannot lend: they fail with "expected any valid JSON value".
#[derive(Debug)]
pub(crate) struct FromJson(pub Object);

impl<'de> Deserialize<'de> for FromJson {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_map(ObjectVisitor::<Borrow>(PhantomData))
            .map(FromJson)
    }
}

/// serde_json's message without its position, which counts from the start of the text it
/// parsed: misleading when that text is part of a larger input.
pub(crate) fn without_position(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rsplit_once(" at line ") {
        Some((message, _)) => message.to_owned(),
        None => text,
    }
}

/// Reads an object's fields: `apiVersion` and `kind` typed, the rest as text, each value read
/// as `V` says.
pub(super) struct ObjectVisitor<V>(pub(super) PhantomData<V>);

impl<'de, V: ValueText> Visitor<'de> for ObjectVisitor<V> {
    type Value = Object;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Kubernetes object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Object, A::Error> {
        let mut api_version = None;
        let mut kind = None;
        let mut metadata = None;
        let mut body = String::new();
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            match key.as_ref() {
                "apiVersion" => api_version = map.next_value::<Option<String>>()?,
                "kind" => kind = map.next_value::<Option<String>>()?,
                "metadata" => {
                    let json = V::value(&mut map, "metadata")?;
                    if json.get() != "null" {
                        metadata = Some(Meta::from_json(json).map_err(metadata_error::<A::Error>)?);
                    }
                }
                _ => {
                    body.push(if body.is_empty() { '{' } else { ',' });
                    push_key(&mut body, &key);
                    body.push(':');
                    V::append(&mut map, &key, &mut body)?;
                }
            }
        }
        Ok(assemble(
            api_version.as_deref(),
            kind.as_deref(),
            metadata,
            body,
        ))
    }
}

/// How [`ObjectVisitor`] turns the value of the field `key` into compact JSON text.
trait ValueText {
    /// The next value's text.
    fn value<'de, A: MapAccess<'de>>(map: &mut A, key: &str) -> Result<Box<RawValue>, A::Error>;
    /// Appends the next value's text to `out`.
    fn append<'de, A: MapAccess<'de>>(
        map: &mut A,
        key: &str,
        out: &mut String,
    ) -> Result<(), A::Error>;
}

/// Transcodes each value: works with any deserializer, whose own limits bound the nesting.
struct Transcode;

impl ValueText for Transcode {
    fn value<'de, A: MapAccess<'de>>(map: &mut A, _key: &str) -> Result<Box<RawValue>, A::Error> {
        map.next_value_seed(CaptureRaw)
    }

    fn append<'de, A: MapAccess<'de>>(
        map: &mut A,
        _key: &str,
        out: &mut String,
    ) -> Result<(), A::Error> {
        map.next_value_seed(Capture(out))
    }
}

/// Borrows each value's text from serde_json's input and copies it when it can be kept as it is
/// ([`copyable`]), transcoding it otherwise.
pub(super) struct Borrow;

impl ValueText for Borrow {
    fn value<'de, A: MapAccess<'de>>(map: &mut A, key: &str) -> Result<Box<RawValue>, A::Error> {
        let raw = map.next_value::<&'de RawValue>()?;
        if copyable(raw.get()) {
            return Ok(raw.to_owned());
        }
        let mut text = String::new();
        push_compact(&mut text, raw, key)?;
        RawValue::from_string(text).map_err(value_error)
    }

    fn append<'de, A: MapAccess<'de>>(
        map: &mut A,
        key: &str,
        out: &mut String,
    ) -> Result<(), A::Error> {
        let raw = map.next_value::<&'de RawValue>()?;
        if copyable(raw.get()) {
            out.push_str(raw.get());
            Ok(())
        } else {
            push_compact(out, raw, key)
        }
    }
}

/// An error decoding one value on its own, with the position in it (the reader's position is
/// past the value).
fn value_error<E: de::Error>(error: serde_json::Error) -> E {
    E::custom(format_args!(
        "{} (at column {} of the value)",
        without_position(&error),
        error.column()
    ))
}

/// The object the visitors (and [`read::compact`](super::read)) read: `body` is the other
/// fields' text without its closing brace.
pub(super) fn assemble(
    api_version: Option<&str>,
    kind: Option<&str>,
    metadata: Option<Meta>,
    mut body: String,
) -> Object {
    if !body.is_empty() {
        body.push('}');
    }
    let types = (api_version.is_some() || kind.is_some())
        .then(|| super::types::shared(api_version.unwrap_or_default(), kind.unwrap_or_default()));
    Object {
        types,
        metadata: metadata.unwrap_or_default(),
        body: body.into_boxed_str(),
    }
}

/// A `metadata` that is not an `ObjectMeta`, said as such (serde_json's position in the metadata
/// text would mislead: the reader's position is what counts).
fn metadata_error<E: de::Error>(error: serde_json::Error) -> E {
    E::custom(format_args!(
        "in metadata, at its column {}: {}",
        error.column(),
        without_position(&error)
    ))
}

/// Appends a map key as a JSON string.
pub(super) fn push_key(out: &mut String, key: &str) {
    if key.bytes().any(|b| b == b'"' || b == b'\\' || b < b' ') {
        // Strings always serialize.
        out.push_str(&serde_json::to_string(key).unwrap_or_default());
    } else {
        out.push('"');
        out.push_str(key);
        out.push('"');
    }
}

/// The deepest an object may be nested, counting the object itself as one level: deeper ones are
/// refused where they are read. The API server refuses deeper request bodies (its JSON decoder,
/// sigs.k8s.io/json, keeps Go's `encoding/json` scanner and its `maxNestingDepth` of 10000), so it
/// never serves one; only a hand-made recording or a broken server sends one.
///
/// Texts this deep are parsed without serde_json's recursion limit (128 levels) and on a stack
/// that grows as needed (`deep_json`). Readers that build trees of them (`serde_json::Value`,
/// as the change summary does) keep serde_json's limit instead and treat a deeper value as one
/// opaque value.
pub const MAX_DEPTH: usize = 10_000;

/// The deepest a field of an object may be nested.
pub(super) const MAX_FIELD_DEPTH: usize = MAX_DEPTH - 1;

/// Whether a value's JSON text can be kept as it is. serde_json checked its syntax when it lent
/// the text, but not what decoding it needs, and every output must be able to decode what the
/// cache holds: escapes that decode (a lone surrogate passes the check), numbers in range,
/// nesting within [`MAX_DEPTH`]. So a value with whitespace between its tokens (the cache
/// holds compact text), `\\u` escapes (the API server writes `\\u0026` for `&`), numbers with
/// an exponent or of more than 18 characters (Kubernetes writes quantities as strings), or deep
/// nesting is transcoded instead, which normalises it or refuses it where it is read.
///
/// Most values hold none of that, which [`plainly_copyable`] sees in loops the compiler
/// vectorizes; the others get one pass that jumps through strings.
pub(super) fn copyable(text: &str) -> bool {
    plainly_copyable(text) || closely_copyable(text)
}

/// [`copyable`] for text without whitespace or control bytes, `\\u`, anything that may be a
/// number (a digit or `-` after `":`, `[` or `,`, or first) and with at most
/// [`MAX_FIELD_DEPTH`] opening brackets. False for some copyable text (`"a,1"` looks like a
/// number), never true for text that is not.
pub(super) fn plainly_copyable(text: &str) -> bool {
    let bytes = text.as_bytes();
    let n = bytes.len();
    if n < 3 {
        return closely_copyable(text);
    }
    // Equal-length views of each byte and the two before it, and byte-wide flags and counts
    // without branches (counted per block of 128, so that no lane widens), so that the loop is
    // vectorized 16 bytes at a time.
    let len = n - 2;
    let (a, b, c) = (&bytes[..len], &bytes[1..len + 1], &bytes[2..]);
    let mut suspect = 0u8;
    let mut openers = 0usize;
    let mut start = 0;
    while start < len {
        let end = (start + 128).min(len);
        let mut count = 0u8;
        for i in start..end {
            let (a, b, c) = (a[i], b[i], c[i]);
            let number_start = u8::from(c.wrapping_sub(b'0') < 10) | u8::from(c == b'-');
            let after_key = u8::from(a == b'"') & u8::from(b == b':');
            let in_array = u8::from(b == b'[') | u8::from(b == b',');
            suspect |= u8::from(c <= b' ') | ((after_key | in_array) & number_start);
            count += u8::from(c == b'{') | u8::from(c == b'[');
        }
        openers += usize::from(count);
        start = end;
    }
    let head = (bytes[0], bytes[1]);
    let head_suspect = head.0 <= b' '
        || head.1 <= b' '
        || head.0.is_ascii_digit()
        || head.0 == b'-'
        || ((head.0 == b'[' || head.0 == b',') && (head.1.is_ascii_digit() || head.1 == b'-'));
    suspect == 0 && !head_suspect && openers + 2 <= MAX_FIELD_DEPTH && !text.contains("\\u")
}

/// [`copyable`], looking at each token.
pub(super) fn closely_copyable(text: &str) -> bool {
    if text.contains("\\u") {
        return false;
    }
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' => {
                let Some(end) = string_end(bytes, i) else {
                    return false;
                };
                i = end;
                continue;
            }
            b'{' | b'[' => {
                depth += 1;
                if depth > MAX_FIELD_DEPTH {
                    return false;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'-' | b'0'..=b'9' => {
                let number = bytes[i..]
                    .iter()
                    .take_while(|b| matches!(b, b'-' | b'+' | b'.' | b'0'..=b'9' | b'e' | b'E'))
                    .count();
                let exponent = bytes[i..i + number]
                    .iter()
                    .any(|b| matches!(b, b'e' | b'E'));
                if exponent || number > 18 {
                    return false;
                }
                i += number;
                continue;
            }
            b if b <= b' ' => return false,
            _ => {}
        }
        i += 1;
    }
    true
}

/// Appends the value of the field `key` without its whitespace; an error when it is nested
/// deeper than [`MAX_FIELD_DEPTH`].
fn push_compact<E: de::Error>(out: &mut String, raw: &RawValue, key: &str) -> Result<(), E> {
    if nesting(raw.get()) > MAX_FIELD_DEPTH {
        return Err(E::custom(format_args!(
            "{key} is nested deeper than {MAX_DEPTH} levels, which the API server never serves"
        )));
    }
    deep_json(raw.get(), |de| Capture(out).deserialize(de), |e| e).map_err(value_error)
}

/// `read` with serde_json's reader of `text`, without its recursion limit and on a stack that
/// grows while the reading (and whatever `read` does on the way, such as writing a serializer)
/// nests deeper: for object texts, whose nesting is bounded by [`MAX_DEPTH`] where they enter.
/// Threads have small stacks (2 MiB for tokio's workers and test threads), and a debug build
/// takes kilobytes per level. Text after the value is an error, made by `trailing`.
pub(crate) fn deep_json<'de, T, E>(
    text: &'de str,
    read: impl FnOnce(
        serde_stacker::Deserializer<&mut serde_json::Deserializer<serde_json::de::StrRead<'de>>>,
    ) -> Result<T, E>,
    trailing: impl FnOnce(serde_json::Error) -> E,
) -> Result<T, E> {
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let value = read(serde_stacker::Deserializer::new(&mut de))?;
    de.end().map_err(trailing)?;
    Ok(value)
}

/// Appends one value, whatever its shape, to a JSON text.
struct Capture<'a>(&'a mut String);

impl<'de> DeserializeSeed<'de> for Capture<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        // serde_json writes only UTF-8, so appending through the String's bytes keeps it valid.
        let buf = std::mem::take(self.0).into_bytes();
        let mut ser = serde_json::Serializer::new(buf);
        let result = serde_transcode::transcode(deserializer, &mut ser);
        let bytes = ser.into_inner();
        *self.0 = String::from_utf8(bytes).map_err(de::Error::custom)?;
        result.map_err(de::Error::custom)
    }
}

/// One value, whatever its shape, as JSON text.
struct CaptureRaw;

impl<'de> DeserializeSeed<'de> for CaptureRaw {
    type Value = Box<RawValue>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Box<RawValue>, D::Error> {
        // `to_raw_value` takes serde_json's output as it is, without parsing it again.
        serde_json::value::to_raw_value(&serde_transcode::Transcoder::new(deserializer))
            .map_err(de::Error::custom)
    }
}
