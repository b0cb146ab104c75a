//! The quick way to read an object's JSON text: one pass over the compact JSON the API server
//! writes, which checks the text, splits off the top-level fields, checks `metadata` against
//! `ObjectMeta`'s shape and locates its name, namespace and resourceVersion, all at once.
//!
//! The serde path ([`Object::from_json_text`]'s fallback) makes about four passes over each byte:
//! serde_json checking each field's value as it lends it, the copy check
//! ([`copyable`](super::deserialize::copyable)) on each value, the copy, and a second parse of
//! `metadata` into its shape (docs/benchmarks.md, "Decode rate"). Here the copy check is the
//! reading itself: [`compact`] takes only text that the serde path would copy as it is, and
//! answers `None` for anything else, which the serde path then reads, transcodes or refuses with
//! its own message:
//!
//! - anything but a JSON object without whitespace between its tokens, `\u` escapes, numbers
//!   with an exponent or of more than 18 characters, or nesting deeper than [`MAX_NESTING`];
//! - a top-level key with an escape, `apiVersion` or `kind` that is not a string without escapes,
//!   `metadata` that is not an object, any of the three repeated;
//! - `metadata` with a `null` in it (the serde path drops its `null` fields first), a field of
//!   `ObjectMeta` repeated (serde refuses it) or of the wrong type, a name, namespace or
//!   resourceVersion with an escape (the serde path holds such metadata typed).
//!
//! So for any text, `compact` gives the object the serde path gives or nothing;
//! `read_tests.rs` checks that against the serde path on generated and mutated objects.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use smallvec::SmallVec;

use super::Object;
use super::deserialize::assemble;
use super::meta::{Meta, TextSpans};

/// The deepest nesting read here, the object itself counting as one level; deeper text goes to
/// the serde path (the API server's objects nest about ten levels).
pub(super) const MAX_NESTING: usize = 64;

/// The object `text` holds, if it is compact JSON that needs nothing but copying (module docs).
pub(super) fn compact(text: &str) -> Option<Object> {
    let (parts, len) = read_parts(text.as_bytes()).ok()?;
    (len == text.len()).then(|| parts.build(text)).flatten()
}

/// Why [`compact_prefix`] read no object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unread {
    /// The bytes ended inside the object: more of them may make it readable.
    Incomplete,
    /// The object is not one to read here (module docs), or not JSON.
    NotCompact,
}

/// [`compact`] of the object at the start of `bytes`, with its length: for text that arrives in
/// pieces (a list's items, `source/list_body.rs`), which says whether the bytes ended inside it.
pub fn compact_prefix(bytes: &[u8]) -> Result<(Object, usize), Unread> {
    let (parts, len) = read_parts(bytes)?;
    let text = std::str::from_utf8(&bytes[..len]).map_err(|_| Unread::NotCompact)?;
    let object = parts.build(text).ok_or(Unread::NotCompact)?;
    Ok((object, len))
}

/// Reads the object at the start of `bytes` (the text after it is not looked at).
fn read_parts(bytes: &[u8]) -> Result<(Parts, usize), Unread> {
    if bytes.first() != Some(&b'{') {
        return Err(if bytes.is_empty() {
            Unread::Incomplete
        } else {
            Unread::NotCompact
        });
    }
    let mut r = Reader {
        bytes,
        at: 0,
        depth: 0,
        nulls: 0,
        ran_out: false,
    };
    let mut parts = Parts::default();
    let read = r.object(|r, key| {
        if key.escaped {
            return None;
        }
        match &bytes[key.start..key.end] {
            b"apiVersion" if parts.api_version.is_none() => {
                parts.api_version = Some(r.plain_string()?);
            }
            b"kind" if parts.kind.is_none() => parts.kind = Some(r.plain_string()?),
            b"metadata" if parts.metadata.is_none() => {
                let (start, nulls) = (r.at, r.nulls);
                let fields = r.metadata()?;
                if r.nulls != nulls {
                    return None;
                }
                parts.metadata = Some((start, fields));
            }
            b"apiVersion" | b"kind" | b"metadata" => return None,
            _ => {
                r.value()?;
                parts.fields.push((key.start - 1, r.at));
            }
        }
        Some(())
    });
    match read {
        Some(()) => Ok((parts, r.at)),
        None if r.ran_out => Err(Unread::Incomplete),
        None => Err(Unread::NotCompact),
    }
}

/// What [`read_parts`] found of an object, as places in its text.
#[derive(Default)]
struct Parts {
    api_version: Option<Str>,
    kind: Option<Str>,
    /// Where `metadata`'s value starts, and what is in it.
    metadata: Option<(usize, MetaFields)>,
    /// Each other field as its `"key":value` text.
    fields: SmallVec<[(usize, usize); 8]>,
}

impl Parts {
    /// The object, from the text the places are in; `None` when its metadata cannot be kept as
    /// text (a key field beyond a span's reach, `meta.rs`), for the serde path to read.
    fn build(self, text: &str) -> Option<Object> {
        let metadata = match self.metadata {
            None => None,
            Some((start, m)) => {
                let relative = |s: Option<Str>| s.map(|s| (s.start - start, s.end - start));
                Some(Meta::checked_text(
                    &text[start..m.end],
                    TextSpans {
                        name: relative(m.name),
                        namespace: relative(m.namespace),
                        resource_version: relative(m.resource_version),
                        managed_fields: m.managed_fields,
                    },
                )?)
            }
        };
        // `{`, the fields with a `,` between each, and room for the `}` `assemble` adds: one
        // allocation of the body's exact size.
        let len: usize = self.fields.iter().map(|(s, e)| e - s + 1).sum();
        let mut body = String::with_capacity(len + 1);
        for (i, &(start, end)) in self.fields.iter().enumerate() {
            body.push(if i == 0 { '{' } else { ',' });
            body.push_str(&text[start..end]);
        }
        let borrowed = |s: Str| &text[s.start..s.end];
        Some(assemble(
            self.api_version.map(borrowed),
            self.kind.map(borrowed),
            metadata,
            body,
        ))
    }
}

/// A string's contents: where they are in the text, and whether they hold an escape.
#[derive(Clone, Copy)]
struct Str {
    start: usize,
    end: usize,
    escaped: bool,
}

/// What [`Reader::metadata`] finds in `metadata`.
#[derive(Default)]
struct MetaFields {
    /// Just past the metadata's `}`.
    end: usize,
    name: Option<Str>,
    namespace: Option<Str>,
    resource_version: Option<Str>,
    managed_fields: bool,
}

/// A recursive-descent reader over compact JSON; every method answers `None` for text to leave to
/// the serde path, invalid or not.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    /// How many objects and arrays enclose the reader.
    depth: usize,
    /// How many `null`s were read.
    nulls: usize,
    /// Whether the reading looked past the end of the bytes: the value may go on in bytes not
    /// yet arrived.
    ran_out: bool,
}

/// Eight bytes in a word, each set to `b`.
const fn splat(b: u8) -> u64 {
    0x0101_0101_0101_0101 * b as u64
}

/// The high bit of the first byte of `word` (in memory order) that is a quote, a backslash or a
/// control byte, and maybe of later ones: zero when there is none. The classic tests for a zero
/// byte (`x - 0x01…` and not `x`), on `word` xor `"`, xor `\`, and for bytes below 0x20; a borrow
/// can only flag bytes after a true one.
fn string_stops(word: u64) -> u64 {
    let quote = word ^ splat(b'"');
    let backslash = word ^ splat(b'\\');
    let flags = (quote.wrapping_sub(splat(1)) & !quote)
        | (backslash.wrapping_sub(splat(1)) & !backslash)
        | (word.wrapping_sub(splat(0x20)) & !word);
    flags & splat(0x80)
}

impl Reader<'_> {
    fn peek(&mut self) -> Option<u8> {
        self.byte(self.at)
    }

    /// The byte at `i`, noting when there is none.
    fn byte(&mut self, i: usize) -> Option<u8> {
        let b = self.bytes.get(i).copied();
        self.ran_out |= b.is_none();
        b
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        (self.peek()? == b).then(|| self.at += 1)
    }

    /// Any value.
    fn value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' => self.object(|r, _| r.value()),
            b'[' => self.array(Self::value),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => {
                self.nulls += 1;
                self.literal(b"null")
            }
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    /// An object, each member's value read by `member` (given its key).
    fn object(&mut self, mut member: impl FnMut(&mut Self, Str) -> Option<()>) -> Option<()> {
        self.open(b'{')?;
        if self.eat(b'}').is_none() {
            loop {
                if self.peek()? != b'"' {
                    return None;
                }
                let key = self.string()?;
                self.eat(b':')?;
                member(self, key)?;
                match self.peek()? {
                    b',' => self.at += 1,
                    b'}' => {
                        self.at += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        self.depth -= 1;
        Some(())
    }

    /// An array, each element read by `element`.
    fn array(&mut self, mut element: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.open(b'[')?;
        if self.eat(b']').is_none() {
            loop {
                element(self)?;
                match self.peek()? {
                    b',' => self.at += 1,
                    b']' => {
                        self.at += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        self.depth -= 1;
        Some(())
    }

    fn open(&mut self, bracket: u8) -> Option<()> {
        self.eat(bracket)?;
        self.depth += 1;
        (self.depth <= MAX_NESTING).then_some(())
    }

    /// A string, whose escapes must be JSON's but not `\u` (which the serde path decodes).
    fn string(&mut self) -> Option<Str> {
        if self.peek()? != b'"' {
            return None;
        }
        let start = self.at + 1;
        let mut i = start;
        let mut escaped = false;
        loop {
            // Eight bytes at a time up to the next quote, backslash or control byte.
            while let Some(word) = self.bytes.get(i..i + 8) {
                let word = u64::from_le_bytes(word.try_into().ok()?);
                let stops = string_stops(word);
                if stops != 0 {
                    i += stops.trailing_zeros() as usize / 8;
                    break;
                }
                i += 8;
            }
            match self.byte(i)? {
                b'"' => {
                    self.at = i + 1;
                    return Some(Str {
                        start,
                        end: i,
                        escaped,
                    });
                }
                b'\\' => match self.byte(i + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {
                        escaped = true;
                        i += 2;
                    }
                    _ => return None,
                },
                b if b < 0x20 => return None,
                _ => i += 1,
            }
        }
    }

    /// A string without escapes, as the key fields must be to be located in the text.
    fn plain_string(&mut self) -> Option<Str> {
        let s = self.string()?;
        (!s.escaped).then_some(s)
    }

    /// A string that decodes as a `Time`, as the serde path decodes it.
    fn time(&mut self) -> Option<()> {
        let start = self.at;
        self.string()?;
        serde_json::from_slice::<Time>(&self.bytes[start..self.at])
            .ok()
            .map(drop)
    }

    /// A number without an exponent, of at most 18 characters: the copy check's rule.
    fn number(&mut self) -> Option<()> {
        let start = self.at;
        self.int_part()?;
        if self.eat(b'.').is_some() {
            if !self.peek()?.is_ascii_digit() {
                return None;
            }
            self.digits();
        }
        self.number_end(start)
    }

    /// A number that decodes as an `i64`. Not `-0`, which serde_json reads as a float.
    fn integer(&mut self) -> Option<()> {
        let start = self.at;
        self.int_part()?;
        if &self.bytes[start..self.at] == b"-0" {
            return None;
        }
        self.number_end(start)
    }

    /// An optional minus and the digits before a fraction.
    fn int_part(&mut self) -> Option<()> {
        let _ = self.eat(b'-');
        match self.peek()? {
            b'0' => self.at += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        Some(())
    }

    /// The end of the number that started at `start`: a delimiter follows (not an exponent, nor
    /// a second leading zero), and it is short enough.
    fn number_end(&mut self, start: usize) -> Option<()> {
        let ends = matches!(self.peek()?, b',' | b'}' | b']');
        (ends && self.at - start <= 18).then_some(())
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.at + word.len();
        let Some(text) = self.bytes.get(self.at..end) else {
            self.ran_out = true;
            return None;
        };
        (text == word).then(|| self.at = end)
    }

    fn boolean(&mut self) -> Option<()> {
        match self.peek()? {
            b't' => self.literal(b"true"),
            _ => self.literal(b"false"),
        }
    }

    /// `metadata`, checked as the serde path's `Shape` checks it (`meta.rs`): each field of
    /// `ObjectMeta` at most once and of its type, other fields any JSON.
    fn metadata(&mut self) -> Option<MetaFields> {
        let bytes = self.bytes;
        let mut found = MetaFields::default();
        let mut seen = Seen::default();
        self.object(|r, key| {
            // No field of ObjectMeta is spelled with an escape other than `\u` (never read here):
            // a key with one is an unknown field.
            let field = if key.escaped {
                None
            } else {
                MetaField::named(&bytes[key.start..key.end])
            };
            let Some(field) = field else {
                return r.value();
            };
            seen.once(field as u32)?;
            match field {
                MetaField::Name => found.name = Some(r.plain_string()?),
                MetaField::Namespace => found.namespace = Some(r.plain_string()?),
                MetaField::ResourceVersion => found.resource_version = Some(r.plain_string()?),
                MetaField::Uid | MetaField::GenerateName | MetaField::SelfLink => {
                    r.string()?;
                }
                MetaField::Labels | MetaField::Annotations => {
                    r.object(|r, _| r.string().map(drop))?;
                }
                MetaField::Finalizers => r.array(|r| r.string().map(drop))?,
                MetaField::CreationTimestamp | MetaField::DeletionTimestamp => r.time()?,
                MetaField::DeletionGracePeriodSeconds | MetaField::Generation => r.integer()?,
                MetaField::OwnerReferences => r.array(Self::owner_reference)?,
                MetaField::ManagedFields => {
                    r.array(Self::managed_fields_entry)?;
                    found.managed_fields = true;
                }
            }
            Some(())
        })?;
        found.end = self.at;
        Some(found)
    }

    /// An `OwnerReference`, as k8s-openapi decodes it: a repeated field counts the last time.
    fn owner_reference(&mut self) -> Option<()> {
        let bytes = self.bytes;
        self.object(|r, key| match &bytes[key.start..key.end] {
            _ if key.escaped => r.value(),
            b"apiVersion" | b"kind" | b"name" | b"uid" => r.string().map(drop),
            b"blockOwnerDeletion" | b"controller" => r.boolean(),
            _ => r.value(),
        })
    }

    /// A `managedFields` entry, as the serde path's `ManagedFieldsShape` checks it: `fieldsV1`
    /// any JSON, `time` a `Time`, the other fields strings, none repeated.
    fn managed_fields_entry(&mut self) -> Option<()> {
        let bytes = self.bytes;
        let mut seen = Seen::default();
        self.object(|r, key| {
            let field = match &bytes[key.start..key.end] {
                _ if key.escaped => return r.value(),
                b"apiVersion" => 0,
                b"fieldsType" => 1,
                b"manager" => 2,
                b"operation" => 3,
                b"subresource" => 4,
                b"fieldsV1" => return seen.once(5).and_then(|()| r.value()),
                b"time" => return seen.once(6).and_then(|()| r.time()),
                _ => return r.value(),
            };
            seen.once(field)?;
            r.string().map(drop)
        })
    }
}

/// The fields of `ObjectMeta` that the serde path's `Shape` checks.
#[derive(Clone, Copy)]
enum MetaField {
    Name,
    Namespace,
    ResourceVersion,
    Uid,
    GenerateName,
    SelfLink,
    Labels,
    Annotations,
    Finalizers,
    CreationTimestamp,
    DeletionTimestamp,
    DeletionGracePeriodSeconds,
    Generation,
    OwnerReferences,
    ManagedFields,
}

impl MetaField {
    fn named(name: &[u8]) -> Option<MetaField> {
        Some(match name {
            b"name" => MetaField::Name,
            b"namespace" => MetaField::Namespace,
            b"resourceVersion" => MetaField::ResourceVersion,
            b"uid" => MetaField::Uid,
            b"generateName" => MetaField::GenerateName,
            b"selfLink" => MetaField::SelfLink,
            b"labels" => MetaField::Labels,
            b"annotations" => MetaField::Annotations,
            b"finalizers" => MetaField::Finalizers,
            b"creationTimestamp" => MetaField::CreationTimestamp,
            b"deletionTimestamp" => MetaField::DeletionTimestamp,
            b"deletionGracePeriodSeconds" => MetaField::DeletionGracePeriodSeconds,
            b"generation" => MetaField::Generation,
            b"ownerReferences" => MetaField::OwnerReferences,
            b"managedFields" => MetaField::ManagedFields,
            _ => return None,
        })
    }
}

/// Which fields of a struct were read: serde's derived decoding refuses a repeated one.
#[derive(Default)]
struct Seen(u32);

impl Seen {
    fn once(&mut self, field: u32) -> Option<()> {
        let bit = 1 << field;
        let first = self.0 & bit == 0;
        self.0 |= bit;
        first.then_some(())
    }
}

#[cfg(test)]
#[path = "read_tests.rs"]
mod tests;
