//! A list response encoded as it is sent, as kube-apiserver does from 1.33 on.
//!
//! kube-apiserver v1.28 encodes a list whole before its first byte: `SerializeObject`
//! (k8s.io/apiserver v0.28.7, `pkg/endpoints/handlers/responsewriters/writers.go`) hands the list
//! to the JSON serializer's `doEncode` (k8s.io/apimachinery v0.28.7,
//! `pkg/runtime/serializer/json/json.go`), whose `json.NewEncoder(w).Encode(obj)` marshals it
//! into one buffer and writes that at once. That is what the fake server does by default.
//!
//! From 1.33 the `StreamingCollectionEncodingToJSON` feature gate (KEP-5116, beta and on by
//! default in 1.33: k8s.io/apiserver v0.33.0, `pkg/features/kube_features.go`) makes `doEncode`
//! call `streamEncodeCollections` (k8s.io/apimachinery v0.33.0,
//! `pkg/runtime/serializer/json/collections.go`): `streamingEncodeList` writes `{`, the type
//! meta, the list meta and `"items":[`, then `json.Marshal`s each item and writes it followed by
//! its `,`, then `]` and `}\n`. The bytes are those of the whole encoding. Without gzip,
//! `deferredResponseWriter.Write` (v0.33.0) passes every write straight to net/http's response
//! writer, whose 2048-byte `bufio.Writer` (`bufferBeforeChunkingSize`) hands each full buffer to
//! the chunk writer as one chunk of `Transfer-Encoding: chunked`; only a body that still fits in
//! that buffer when the handler returns gets a `Content-Length`. [`GoChunks`] reproduces that
//! buffering, so the response here is chunked the way kube-apiserver 1.33's is, and each item is
//! serialised from the stored object only when the connection asks for more.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use bytes::Bytes;
use futures_util::stream;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::Response;
use hyper::body::Frame;
use serde_json::Value;

use super::handler::{Body, respond_with};
use super::json::{self, Obj};
use super::partial::Encoding;

/// net/http's `bufferBeforeChunkingSize`: the response's buffer, and so the largest chunk that
/// small writes are gathered into.
const GO_RESPONSE_BUFFER: usize = 2048;

/// How a list response is encoded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CollectionEncoding {
    /// Whole, before the first byte (kube-apiserver ≤ 1.32, and 1.33+ with
    /// `StreamingCollectionEncodingToJSON` off).
    #[default]
    Whole,
    /// Item by item as it is sent (1.33+'s `StreamingCollectionEncodingToJSON`).
    Streaming,
}

/// A list page answered with [`CollectionEncoding::Streaming`]: `head` is the list's
/// `kind`, `apiVersion` and `metadata`, `page` the keys of its items in `state`, in order.
pub(crate) fn streamed_list(
    head: &Obj,
    state: Arc<BTreeMap<String, Value>>,
    page: Vec<String>,
    encoding: Encoding,
) -> Response<Body> {
    let mut writer = ListWriter {
        state,
        page: page.into_iter(),
        encoding,
        out: GoChunks::default(),
        finished: false,
        first: true,
    };
    writer.out.write(json::list_prefix(head).as_bytes());
    let first = writer
        .next()
        .expect("a list has at least its prefix and end");
    if writer.finished && writer.out.pending.is_empty() {
        // The handler returned before net/http's buffer filled: a `Content-Length` response.
        let body = Full::new(first).map_err(|e| match e {}).boxed();
        return respond_with(200, "application/json", body);
    }
    let chunks = stream::iter(
        std::iter::once(first)
            .chain(writer)
            .map(|chunk| Ok::<_, std::io::Error>(Frame::data(chunk))),
    );
    respond_with(200, "application/json", StreamBody::new(chunks).boxed())
}

/// The list's items, serialised one at a time as the body is polled.
struct ListWriter {
    state: Arc<BTreeMap<String, Value>>,
    page: std::vec::IntoIter<String>,
    encoding: Encoding,
    out: GoChunks,
    /// `]}\n` has been written.
    finished: bool,
    /// No item written yet (the next one needs no `,` before it).
    first: bool,
}

impl Iterator for ListWriter {
    type Item = Bytes;

    fn next(&mut self) -> Option<Bytes> {
        loop {
            if let Some(chunk) = self.out.pending.pop_front() {
                return Some(chunk);
            }
            if self.finished {
                return None;
            }
            match self.page.next() {
                Some(key) => {
                    // apimachinery writes the `,` as the previous item's suffix; the bytes and
                    // their order are the same.
                    if !std::mem::take(&mut self.first) {
                        self.out.write(b",");
                    }
                    let object = self
                        .state
                        .get(&key)
                        .expect("a listed key is in its snapshot");
                    self.out
                        .write(json::fragment(&self.encoding.list_item(object)).as_bytes());
                }
                None => {
                    self.out.write(b"]");
                    self.out.write(b"}\n");
                    self.out.flush();
                    self.finished = true;
                }
            }
        }
    }
}

/// Go's `bufio.Writer` of [`GO_RESPONSE_BUFFER`] bytes in front of net/http's chunk writer:
/// writes gather in the buffer, which becomes one chunk when the next write does not fit; a write
/// that arrives at an empty buffer and is at least its size goes out as a chunk of its own.
#[derive(Default)]
struct GoChunks {
    buffer: Vec<u8>,
    pending: VecDeque<Bytes>,
}

impl GoChunks {
    fn write(&mut self, mut p: &[u8]) {
        while p.len() > GO_RESPONSE_BUFFER - self.buffer.len() {
            if self.buffer.is_empty() {
                self.pending.push_back(Bytes::copy_from_slice(p));
                return;
            }
            let fits = GO_RESPONSE_BUFFER - self.buffer.len();
            self.buffer.extend_from_slice(&p[..fits]);
            p = &p[fits..];
            self.flush();
        }
        self.buffer.extend_from_slice(p);
    }

    fn flush(&mut self) {
        if !self.buffer.is_empty() {
            let chunk = std::mem::replace(&mut self.buffer, Vec::with_capacity(GO_RESPONSE_BUFFER));
            self.pending.push_back(Bytes::from(chunk));
        }
    }
}
