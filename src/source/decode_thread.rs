//! A list body decoded on a thread of its own while the connection goes on reading it.
//!
//! The connection's task reads the socket, decrypts TLS and parses the HTTP framing; decoding the
//! items ([`ListDecoder`]) costs as much again. On one task the two take turns, and while the
//! decoder works nothing reads: the socket's buffer fills and the server waits. Here the reader
//! only hands the pieces over, and a blocking-pool thread decodes them, so the two run on two
//! cores at once.
//!
//! Memory stays bounded: at most [`PIECES_IN_FLIGHT`] pieces wait between the two, each at most
//! [`BATCH`] bytes or one of hyper's frames (whose read buffer hyper bounds), and a reader that
//! gets ahead waits for the decoder. Small frames (2 KiB each from servers that encode a list as
//! they send it) are gathered into pieces of [`BATCH`] bytes, so that the hand-over, a wake of
//! the other thread, is paid per piece rather than per frame.

use bytes::{Bytes, BytesMut};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::list_body::ListDecoder;
use crate::cache::listwatch::{ListPage, SourceError};

/// How many pieces may wait for the decoder: one, beside the one it decodes and the one the
/// reader holds, is enough for the two to overlap; each more is memory for the process's life
/// (hyper allocates a new read buffer while the last one's frame is held).
pub const PIECES_IN_FLIGHT: usize = 1;

/// Frames shorter than this are gathered into a piece of at least this many bytes before being
/// handed over.
pub const BATCH: usize = 64 * 1024;

/// The decoding thread of one list body, fed with [`feed`](Self::feed), ended by
/// [`finish`](Self::finish).
pub struct DecodeThread {
    pieces: mpsc::Sender<Bytes>,
    gathered: BytesMut,
    decoded: JoinHandle<Result<ListPage, SourceError>>,
}

impl DecodeThread {
    /// Starts decoding a body on a thread of the runtime's blocking pool (which keeps its threads
    /// a while, so a relist reuses one). Must be called within a tokio runtime.
    pub fn spawn(decoder: ListDecoder) -> Self {
        let (pieces, mut receiver) = mpsc::channel::<Bytes>(PIECES_IN_FLIGHT);
        let decoded = tokio::task::spawn_blocking(move || {
            let mut decoder = decoder;
            while let Some(piece) = receiver.blocking_recv() {
                // An error stops the decoder; dropping the receiver tells the reader to stop.
                decoder.feed(&piece)?;
            }
            decoder.finish()
        });
        DecodeThread {
            pieces,
            gathered: BytesMut::new(),
            decoded,
        }
    }

    /// Hands the next piece of the body over, waiting while [`PIECES_IN_FLIGHT`] pieces wait.
    /// `false` once the decoder has stopped at an error, which [`finish`](Self::finish) returns:
    /// the rest of the body need not be read.
    pub async fn feed(&mut self, frame: Bytes) -> bool {
        let piece = if self.gathered.is_empty() && frame.len() >= BATCH {
            frame
        } else {
            self.gathered.extend_from_slice(&frame);
            if self.gathered.len() < BATCH {
                return true;
            }
            std::mem::take(&mut self.gathered).freeze()
        };
        self.pieces.send(piece).await.is_ok()
    }

    /// The end of the body: the page, or the decoder's error.
    pub async fn finish(mut self) -> Result<ListPage, SourceError> {
        if !self.gathered.is_empty() {
            let rest = std::mem::take(&mut self.gathered).freeze();
            // A failed send means the decoder stopped at an error, returned below.
            let _ = self.pieces.send(rest).await;
        }
        drop(self.pieces);
        match self.decoded.await {
            Ok(decoded) => decoded,
            Err(failed) => match failed.try_into_panic() {
                Ok(panic) => std::panic::resume_unwind(panic),
                Err(cancelled) => Err(SourceError::Stream(format!(
                    "the list's decoding was cancelled: {cancelled}"
                ))),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Object;

    /// A page of `n` ConfigMaps with managedFields, each a little longer than the last.
    fn page(n: usize) -> String {
        let items: Vec<String> = (0..n)
            .map(|i| {
                format!(
                    r#"{{"metadata":{{"name":"cm-{i}","namespace":"ns","resourceVersion":"{i}","managedFields":[{{"manager":"m","operation":"Apply","fieldsType":"FieldsV1","fieldsV1":{{"f:data":{{}}}}}}]}},"data":{{"k":"{}"}}}}"#,
                    "x".repeat(i % 300)
                )
            })
            .collect();
        format!(
            r#"{{"kind":"ConfigMapList","apiVersion":"v1","metadata":{{"resourceVersion":"77","continue":"c"}},"items":[{}]}}"#,
            items.join(",")
        )
    }

    fn inline(text: &[u8], decoder: ListDecoder) -> Result<ListPage, SourceError> {
        let mut decoder = decoder;
        decoder.feed(text)?;
        decoder.finish()
    }

    async fn across(
        pieces: impl Iterator<Item = &[u8]>,
        decoder: ListDecoder,
    ) -> Result<ListPage, SourceError> {
        let mut decoding = DecodeThread::spawn(decoder);
        for piece in pieces {
            if !decoding.feed(Bytes::copy_from_slice(piece)).await {
                break;
            }
        }
        decoding.finish().await
    }

    /// Frames of every size, from a byte to more than a piece, give the page the decoder gives
    /// fed on the reader's own task.
    #[tokio::test]
    async fn a_page_decodes_across_the_channel_as_it_does_in_place() {
        let text = page(2000);
        let bytes = text.as_bytes();
        assert!(
            bytes.len() > 8 * PIECES_IN_FLIGHT * BATCH,
            "the reader must wait on the decoder"
        );
        for strip in [false, true] {
            let expected = inline(bytes, ListDecoder::new().strip_managed_fields(strip)).unwrap();
            assert_eq!(expected.items.len(), 2000);
            for size in [1, 7, 2048, 16 * 1024, BATCH, 3 * BATCH + 5, bytes.len()] {
                let page = across(
                    bytes.chunks(size),
                    ListDecoder::new().strip_managed_fields(strip),
                )
                .await
                .unwrap();
                assert_eq!(page.items, expected.items, "frames of {size} bytes");
                assert_eq!(
                    (
                        page.resource_version.as_str(),
                        page.continue_token.as_deref()
                    ),
                    ("77", Some("c"))
                );
            }
        }
    }

    /// managedFields dropped as each item is decoded, as `strip_managed_fields` drops them.
    #[tokio::test]
    async fn items_are_stripped_of_managed_fields_as_they_are_decoded() {
        let text = page(50);
        let stripped = across(
            text.as_bytes().chunks(100),
            ListDecoder::new().strip_managed_fields(true),
        )
        .await
        .unwrap();
        let mut transformed = inline(text.as_bytes(), ListDecoder::new()).unwrap().items;
        transformed
            .iter_mut()
            .for_each(Object::strip_managed_fields);
        assert_eq!(stripped.items, transformed);
        assert!(
            stripped
                .items
                .iter()
                .all(|o| o.metadata().managed_fields.is_none()),
            "managedFields left"
        );
    }

    /// The decoder's error, wherever the bad item is cut, and the reader told to stop reading.
    #[tokio::test]
    async fn an_undecodable_item_stops_the_reader_with_the_decoders_error() {
        let text = format!(
            r#"{{"items":[{{"metadata":{{"name":"a"}}}},{{"metadata":{{"name":"b","labels":5}}}}{}]}}"#,
            r#",{"metadata":{"name":"c"}}"#.repeat(50_000)
        );
        let bytes = text.as_bytes();
        let expected = inline(bytes, ListDecoder::new()).unwrap_err().to_string();
        assert!(expected.contains("item 2 of the list, \"b\""), "{expected}");
        for size in [1, 30, BATCH] {
            let mut decoding = DecodeThread::spawn(ListDecoder::new());
            let mut stopped = false;
            for piece in bytes.chunks(size) {
                if !decoding.feed(Bytes::copy_from_slice(piece)).await {
                    stopped = true;
                    break;
                }
            }
            assert!(stopped, "frames of {size}: the reader read the whole body");
            assert_eq!(decoding.finish().await.unwrap_err().to_string(), expected);
        }
    }
}
