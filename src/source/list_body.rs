//! A list response's body read as it arrives: each item of `items` is handed over once its last
//! byte is in (or, if it is shorter than the item before it, with the next piece), so that
//! decoding the objects overlaps the transfer instead of following it.
//!
//! client-go reads a list page whole (`ListWatch.List` returns the decoded `runtime.Object`), so
//! all of its decoding follows the last byte. [`ItemSplitter`] finds where each item
//! ends with a byte scanner that jumps through strings, and keeps only the bytes of the item in
//! progress; the members other than `items` (`kind`, `apiVersion`, `metadata`) are gathered into
//! a small object of their own, decoded at the end. Whatever the order of the members.
//!
//! The scanner checks the list's own punctuation (braces, brackets, colons, commas) and only
//! finds the ends of values; each value is then parsed by serde_json whole (an item by
//! [`Object::from_json_text`](crate::object::Object::from_json_text), the other members at the
//! end), so a body is accepted only if it is valid JSON, and valid JSON is split exactly where
//! a parser would split it.
//!
//! An item in the compact JSON the API server writes is not scanned at all: the decoder reads
//! it from its first byte (`compact_prefix`), which finds its end too, and the splitter goes on
//! after it. An item is offered to that reader once as many of its bytes have arrived as the
//! last item it read had, or the body has ended: the items of a list are mostly alike, so an item
//! is rarely read up to where the bytes end and then again from its start. When that happens all
//! the same, it is read again once
//! the next piece has arrived, up to [`QUICK_RETRY_LIMIT`] bytes of it (a page's pieces are
//! ~16 KiB and an object a few); a longer item, or one the quick reader leaves (whitespace,
//! escapes to decode, an error), is scanned to its end and decoded whole: scanning every item
//! before reading it would pass over each byte twice.

use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use serde::Deserialize;

use crate::cache::listwatch::{ListPage, SourceError};
use crate::object::{Object, Unread, compact_prefix, describe_raw, without_position};

/// A list response's body decoded into a [`ListPage`] as it arrives: [`ItemSplitter`] hands over
/// each item, decoded at once by [`Object::from_json_text`].
#[derive(Debug, Default)]
pub struct ListDecoder {
    splitter: ItemSplitter,
    items: Vec<Object>,
    strip_managed_fields: bool,
}

impl ListDecoder {
    /// A decoder at the start of a body.
    pub fn new() -> Self {
        Self::default()
    }

    /// Drops each item's `metadata.managedFields` as it is decoded
    /// ([`Object::strip_managed_fields`]). A list's items are the bulk of a start-up, and parsing
    /// their entries to keep the newest writers (what the Reflector's transform does to every
    /// later object) would pace it; a listed object's first change then names no writer
    /// ([`writers_since`](crate::object::writers_since)).
    pub fn strip_managed_fields(mut self, strip: bool) -> Self {
        self.strip_managed_fields = strip;
        self
    }

    /// Takes the next piece of the body; an item that does not decode is an error naming it.
    pub fn feed(&mut self, piece: &[u8]) -> Result<(), SourceError> {
        let decoded = self.items.len();
        self.splitter.feed_with(
            piece,
            Decoded {
                items: &mut self.items,
            },
        )?;
        self.strip(decoded);
        Ok(())
    }

    /// Strips the items from `decoded` on, if asked to, while they are still in the cache of the
    /// core that decoded them.
    fn strip(&mut self, decoded: usize) {
        if self.strip_managed_fields {
            self.items[decoded..]
                .iter_mut()
                .for_each(Object::strip_managed_fields);
        }
    }

    /// The end of the body: the page, or why the body is not a whole list.
    pub fn finish(mut self) -> Result<ListPage, SourceError> {
        let decoded = self.items.len();
        let splitter = std::mem::take(&mut self.splitter);
        let rest = splitter.finish_with(Decoded {
            items: &mut self.items,
        })?;
        self.strip(decoded);
        // Checked whole: serde_json skips the members `ListRest` ignores without checking them.
        let rest = std::str::from_utf8(&rest)
            .map_err(|e| SourceError::Stream(format!("undecodable response: {e}")))?;
        let list: ListRest = serde_json::from_str(rest).map_err(|error| {
            SourceError::Stream(format!(
                "undecodable response: {}",
                without_position(&error)
            ))
        })?;
        Ok(ListPage {
            items: self.items,
            resource_version: list.metadata.resource_version.unwrap_or_default(),
            continue_token: list.metadata.continue_.filter(|c| !c.is_empty()),
            remaining_item_count: list.metadata.remaining_item_count,
        })
    }
}

/// The decoder's items, as the splitter hands them over.
struct Decoded<'a> {
    items: &'a mut Vec<Object>,
}

impl Items for Decoded<'_> {
    type Error = SourceError;

    fn quick(&mut self, bytes: &[u8]) -> Quick {
        match compact_prefix(bytes) {
            Ok((object, len)) => {
                self.items.push(object);
                Quick::Read(len)
            }
            Err(Unread::Incomplete) => Quick::More,
            Err(Unread::NotCompact) => Quick::No,
        }
    }

    fn item(&mut self, text: &[u8]) -> Result<(), SourceError> {
        let object = std::str::from_utf8(text)
            .map_err(|e| e.to_string())
            .and_then(|text| {
                Object::from_json_text(text).map_err(|error| {
                    format!("{}: {}", describe_raw(text), without_position(&error))
                })
            })
            .map_err(|why| {
                SourceError::Stream(format!(
                    "undecodable response: item {} of the list, {why}",
                    self.items.len() + 1
                ))
            })?;
        self.items.push(object);
        Ok(())
    }
}

/// A list page's members other than `items`: `kube::api::ObjectList`'s metadata.
#[derive(Deserialize)]
struct ListRest {
    #[serde(default)]
    metadata: ListMeta,
}

/// A list body that is not a list.
impl From<SplitError> for SourceError {
    fn from(error: SplitError) -> Self {
        SourceError::Stream(format!("undecodable response: {error}"))
    }
}

/// Why a list body's text is not a list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} at byte {at} of the list")]
pub struct SplitError {
    what: &'static str,
    at: usize,
}

/// Where the scanner is in the list's structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the list's `{`.
    Start,
    /// After `{`: a key or `}`.
    KeyOrEnd,
    /// After `,` between members: a key.
    Key,
    /// Inside a key (a string).
    InKey,
    /// After a key: `:`.
    Colon { items: bool },
    /// After `:`: the value's first byte.
    Value { items: bool },
    /// Inside a member's value (`items` only when it is not an array).
    InValue { items: bool },
    /// After a member: `,` or `}`.
    MemberEnd,
    /// After `[` of `items`: an item or `]`.
    ItemOrEnd,
    /// After `,` between items: an item.
    Item,
    /// Inside an item.
    InItem,
    /// After an item: `,` or `]`.
    ItemEnd,
    /// After the list's `}`: only whitespace.
    Done,
}

/// The end of one JSON value whose text arrives in pieces: bracket depth and string state,
/// kept between pieces so that no byte is scanned twice.
#[derive(Debug, Clone, Copy, Default)]
struct ValueScan {
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// A number, `true`, `false` or `null`: ends at the first delimiter.
    scalar: bool,
}

impl ValueScan {
    /// Begins a value whose first byte is `first`; scanning starts at that byte.
    fn begin(first: u8) -> Self {
        ValueScan {
            scalar: !matches!(first, b'{' | b'[' | b'"'),
            ..ValueScan::default()
        }
    }

    /// Scans `bytes[i..]`: the index just past the value's end, if it is within `bytes`.
    fn advance(&mut self, bytes: &[u8], mut i: usize) -> Option<usize> {
        if self.scalar {
            return bytes[i..]
                .iter()
                .position(|&b| is_delimiter(b))
                .map(|at| i + at);
        }
        while i < bytes.len() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                    i += 1;
                    continue;
                }
                // Most of an object's text is strings: jump to the next quote or backslash.
                i += memchr::memchr2(b'"', b'\\', &bytes[i..])?;
                if bytes[i] == b'\\' {
                    self.escaped = true;
                } else {
                    self.in_string = false;
                    if self.depth == 0 {
                        return Some(i + 1);
                    }
                }
                i += 1;
                continue;
            }
            match bytes[i] {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    // Unbalanced text ends the value here; the parser then rejects it.
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        return Some(i + 1);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        None
    }
}

/// What an [`ItemSplitter`] hands each item to.
pub trait Items {
    /// What stops the split: a [`SplitError`], or an item's own.
    type Error: From<SplitError>;

    /// Reads the item whose first bytes, all that arrived of it so far, are `bytes`, if it can
    /// without the splitter finding its end first.
    fn quick(&mut self, _bytes: &[u8]) -> Quick {
        Quick::No
    }

    /// Takes an item the splitter found the end of, as text (not yet checked to be JSON).
    fn item(&mut self, text: &[u8]) -> Result<(), Self::Error>;
}

/// What [`Items::quick`] made of an item's first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quick {
    /// It took a whole item of this many bytes.
    Read(usize),
    /// It may take the item once more of it has arrived.
    More,
    /// The splitter is to find its end and hand it to [`Items::item`].
    No,
}

/// Items handed to a function once the splitter found their end.
struct Scanned<F>(F);

impl<E: From<SplitError>, F: FnMut(&[u8]) -> Result<(), E>> Items for Scanned<F> {
    type Error = E;

    fn item(&mut self, text: &[u8]) -> Result<(), E> {
        (self.0)(text)
    }
}

/// How much of an item [`Items::quick`] reads again from its start each time a piece arrives;
/// past that, the item is scanned, so that reading a large item costs no more than twice its
/// size.
pub const QUICK_RETRY_LIMIT: usize = 64 * 1024;

/// How many bytes past the expected end of an item carried over from the last piece are copied
/// to complete it: items of a list differ in length by a few bytes; one longer by more than this
/// is read once more.
const CARRY_SLACK: usize = 1024;

/// Whitespace or the punctuation that ends a scalar.
fn is_delimiter(b: u8) -> bool {
    matches!(b, b',' | b':' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
}

/// Splits a list body's text, fed in pieces, into its items and the rest (module docs).
pub struct ItemSplitter {
    /// The bytes not yet handed over: from the start of the value in progress, if any.
    buf: Vec<u8>,
    /// How far `buf` has been scanned.
    scanned: usize,
    /// Where the value in progress starts in `buf`.
    value_start: usize,
    /// How many bytes were dropped from the front of `buf`: positions in errors count from the
    /// body's start.
    dropped: usize,
    state: State,
    value: ValueScan,
    /// The list without `items`: `{` and each other member, `,`-separated.
    rest: Vec<u8>,
    /// Whether `items` was seen: a second one is refused, as serde refuses a duplicate field.
    seen_items: bool,
    /// Whether the item in progress is left to [`Items::quick`] (read from its start when more
    /// of it arrives) rather than scanned.
    quick: bool,
    /// How long the last item [`Items::quick`] read was: the next one is offered to it once at
    /// least that much of it has arrived (or the body has ended).
    expected_len: usize,
}

impl fmt::Debug for ItemSplitter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ItemSplitter")
            .field("state", &self.state)
            .field("buffered", &self.buf.len())
            .finish_non_exhaustive()
    }
}

impl Default for ItemSplitter {
    fn default() -> Self {
        Self::new()
    }
}

impl ItemSplitter {
    /// A splitter at the start of a body.
    pub fn new() -> Self {
        ItemSplitter {
            buf: Vec::new(),
            scanned: 0,
            value_start: 0,
            dropped: 0,
            state: State::Start,
            value: ValueScan::default(),
            rest: b"{".to_vec(),
            seen_items: false,
            quick: false,
            expected_len: 0,
        }
    }

    /// Takes the next piece of the body and hands each item completed in it to `item`, as text
    /// (not yet checked to be JSON). An error of `item` stops the split and is returned.
    pub fn feed<E: From<SplitError>>(
        &mut self,
        piece: &[u8],
        item: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        self.feed_with(piece, Scanned(item))
    }

    /// [`feed`](Self::feed), each item (an object) offered first to [`Items::quick`], then, if
    /// it leaves it, handed to [`Items::item`] once its end is found.
    pub fn feed_with<I: Items>(&mut self, piece: &[u8], mut items: I) -> Result<(), I::Error> {
        // Keep only the value in progress (or nothing): a page never sits whole in memory.
        let mut rest = piece;
        // The value carried over is completed in the buffer with as much of the piece as it
        // likely needs: an item as long as the last one and a little, or else all of it.
        let mut wanted = match self.expected_len.checked_sub(self.buf.len()) {
            Some(more) if self.quick => more + CARRY_SLACK,
            _ => usize::MAX,
        };
        while !self.buf.is_empty() && !rest.is_empty() {
            let carried = self.buf.len();
            let (now, later) = rest.split_at(wanted.min(rest.len()));
            self.buf.extend_from_slice(now);
            self.scan_buf(&mut items)?;
            let keep_from = self.keep_from();
            if keep_from >= carried {
                // All that was carried over is handed over: what is left is the piece's own,
                // read where it is.
                rest = &rest[keep_from - carried..];
                self.buf.clear();
            } else {
                self.buf.drain(..keep_from);
                rest = later;
                wanted = usize::MAX;
            }
            self.forget(keep_from);
        }
        if !rest.is_empty() {
            // Nothing carried over: the rest of the piece is scanned where it is, and only what
            // is left of it copied.
            self.scan(rest, &mut items)?;
            let keep_from = self.keep_from();
            self.buf.extend_from_slice(&rest[keep_from..]);
            self.forget(keep_from);
        }
        Ok(())
    }

    /// Where the bytes to keep after a piece start: the value in progress, or what is left.
    fn keep_from(&self) -> usize {
        if self.in_value() {
            self.value_start
        } else {
            self.scanned
        }
    }

    /// Positions after `n` bytes were dropped from the front of the scanned bytes.
    fn forget(&mut self, n: usize) {
        self.dropped += n;
        self.scanned -= n;
        self.value_start = self.value_start.saturating_sub(n);
    }

    /// The end of the body: the list's members other than `items`, as the text of one JSON
    /// object, for the caller to decode. An error if the body ended before the list did.
    pub fn finish(mut self) -> Result<Vec<u8>, SplitError> {
        match self.state {
            State::Done => {
                self.rest.push(b'}');
                Ok(self.rest)
            }
            State::Start => Err(self.error("an empty body instead of a list", 0)),
            _ => Err(self.error("the body ended before the list did", self.buf.len())),
        }
    }

    /// [`finish`](Self::finish), once an item left for more of it to arrive (`expected_len`)
    /// is offered to `items` as it is: the body ended, so nothing more will.
    pub fn finish_with<I: Items>(mut self, mut items: I) -> Result<Vec<u8>, I::Error> {
        if self.quick {
            self.expected_len = 0;
            self.scanned = self.value_start;
            self.scan_buf(&mut items)?;
        }
        Ok(self.finish()?)
    }

    /// [`scan`](Self::scan) of the bytes carried over (and what was added to them).
    fn scan_buf<I: Items>(&mut self, items: &mut I) -> Result<(), I::Error> {
        let buf = std::mem::take(&mut self.buf);
        let scanned = self.scan(&buf, items);
        self.buf = buf;
        scanned
    }

    fn in_value(&self) -> bool {
        matches!(
            self.state,
            State::InKey | State::InValue { .. } | State::InItem
        )
    }

    fn error(&self, what: &'static str, at: usize) -> SplitError {
        SplitError {
            what,
            at: self.dropped + at,
        }
    }

    /// Runs the state machine over the unscanned bytes of `bytes` (the bytes kept and the new
    /// piece).
    fn scan<I: Items>(&mut self, bytes: &[u8], items: &mut I) -> Result<(), I::Error> {
        while self.scanned < bytes.len() {
            if self.quick {
                let start = self.value_start;
                // The items of a list are mostly alike: one shorter than the last one so far
                // has most likely not arrived whole, and offering it would read it up to where
                // the bytes end and again from its start with the next piece. Left until more
                // has arrived, it costs at most a copy of what did.
                let quick = if bytes.len() - start < self.expected_len {
                    Quick::More
                } else {
                    items.quick(&bytes[start..])
                };
                match quick {
                    Quick::Read(len) => {
                        self.expected_len = len;
                        self.quick = false;
                        self.state = State::ItemEnd;
                        self.scanned = start + len;
                        continue;
                    }
                    Quick::More if bytes.len() - start < QUICK_RETRY_LIMIT => {
                        self.scanned = bytes.len();
                        return Ok(());
                    }
                    // Scanned from its start instead.
                    Quick::More | Quick::No => {
                        self.quick = false;
                        self.scanned = start;
                    }
                }
            }
            let i = self.scanned;
            if self.in_value() {
                let Some(end) = self.value.advance(bytes, i) else {
                    self.scanned = bytes.len();
                    return Ok(());
                };
                self.end_value(bytes, end, items)?;
                continue;
            }
            let b = bytes[i];
            self.scanned = i + 1;
            if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                continue;
            }
            self.state = match (self.state, b) {
                (State::Start, b'{') => State::KeyOrEnd,
                (State::KeyOrEnd | State::Key, b'"') => self.begin(i, b, State::InKey),
                (State::KeyOrEnd | State::MemberEnd, b'}') => State::Done,
                (State::Colon { items }, b':') => State::Value { items },
                (State::Value { items: true }, b'[') => State::ItemOrEnd,
                (State::Value { items }, b) if !is_delimiter(b) => {
                    self.begin(i, b, State::InValue { items })
                }
                (State::MemberEnd, b',') => State::Key,
                (State::ItemOrEnd | State::ItemEnd, b']') => State::MemberEnd,
                (State::ItemOrEnd | State::Item, b) if !is_delimiter(b) => {
                    self.quick = b == b'{';
                    self.begin(i, b, State::InItem)
                }
                (State::ItemEnd, b',') => State::Item,
                (state, _) => return Err(self.error(unexpected(state), i).into()),
            };
        }
        Ok(())
    }

    /// Starts a value (or key) whose first byte, `first`, is at `at`.
    fn begin(&mut self, at: usize, first: u8, state: State) -> State {
        self.value_start = at;
        self.value = ValueScan::begin(first);
        self.scanned = at;
        state
    }

    /// The value in progress ends just before `end`.
    fn end_value<I: Items>(
        &mut self,
        bytes: &[u8],
        end: usize,
        items: &mut I,
    ) -> Result<(), I::Error> {
        let text = &bytes[self.value_start..end];
        self.state = match self.state {
            State::InKey => {
                let items = serde_json::from_slice::<std::borrow::Cow<'_, str>>(text)
                    .is_ok_and(|key| key == "items");
                if items {
                    if self.seen_items {
                        return Err(self.error("a second `items`", self.value_start).into());
                    }
                    self.seen_items = true;
                } else {
                    if self.rest.len() > 1 {
                        self.rest.push(b',');
                    }
                    self.rest.extend_from_slice(text);
                    self.rest.push(b':');
                }
                State::Colon { items }
            }
            // `"items": null`, as some servers send an empty list: no member of the rest.
            State::InValue { items: true } if text == b"null" => State::MemberEnd,
            State::InValue { items: true } => {
                let at = self.value_start;
                return Err(self
                    .error("`items` is neither an array nor null", at)
                    .into());
            }
            State::InValue { items: false } => {
                self.rest.extend_from_slice(text);
                State::MemberEnd
            }
            State::InItem => {
                items.item(text)?;
                State::ItemEnd
            }
            state => unreachable!("a value ends only inside one, not in {state:?}"),
        };
        self.scanned = end;
        Ok(())
    }
}

/// What the scanner expected in `state`.
fn unexpected(state: State) -> &'static str {
    match state {
        State::Start => "expected `{` opening the list",
        State::KeyOrEnd => "expected a key or `}`",
        State::Key => "expected a key",
        State::Colon { .. } => "expected `:` after a key",
        State::Value { .. } => "expected a value",
        State::MemberEnd => "expected `,` or `}` after a member",
        State::ItemOrEnd | State::Item => "expected an item",
        State::ItemEnd => "expected `,` or `]` after an item",
        State::Done => "expected nothing after the list",
        State::InKey | State::InValue { .. } | State::InItem => "unexpected byte",
    }
}

#[cfg(test)]
#[path = "list_body_tests.rs"]
mod tests;
