//! [`RecordingWriter`]: writes a recording, one flushed line per answer.

use std::io::{self, Write};
use std::time::Duration;

use super::Header;
use super::format::{
    HeaderOut, ItemsOut, Line, LineOut, LineRef, LiveNotes, MillisOut, ObjectOut, RecordedResource,
    Redaction, bookmark_value, error_parts, event_type, status_value,
};
use crate::source::WatchEvent;

/// Writes a recording: the header on construction, then one line per [`write`](Self::write),
/// each flushed at once so that a reader of a pipe (or of a file being recorded) sees it.
///
/// Secret `data` and `stringData` values are written as `<redacted>` unless
/// [`show_secret_data`](Self::show_secret_data) is set. `t` is written to the microsecond, and kept
/// non-decreasing: a smaller `t` than the previous line's is written as the previous one.
pub struct RecordingWriter<W: Write> {
    out: W,
    resource: Option<RecordedResource>,
    redaction: Redaction,
    last_t: Duration,
    buf: Vec<u8>,
}

impl<W: Write> std::fmt::Debug for RecordingWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordingWriter")
            .field("resource", &self.resource)
            .field("redaction", &self.redaction)
            .field("last_t", &self.last_t)
            .finish_non_exhaustive()
    }
}

impl<W: Write> RecordingWriter<W> {
    /// Starts a recording with `header`.
    pub fn new(out: W, header: &Header) -> io::Result<Self> {
        let mut writer = Self::without_header(out, Some(header.resource.clone()));
        serde_json::to_writer(&mut writer.buf, &HeaderOut::new(header))?;
        writer.flush_line()?;
        Ok(writer)
    }

    /// Starts a recording without a header line (a replay then takes the resource from the
    /// first object that names its kind). `resource` still decides what is a Secret and the
    /// kind written on BOOKMARK objects.
    pub fn without_header(out: W, resource: Option<RecordedResource>) -> Self {
        let resource_is_secret = resource.as_ref().is_some_and(RecordedResource::is_secret);
        RecordingWriter {
            out,
            resource,
            redaction: Redaction {
                enabled: true,
                resource_is_secret,
            },
            last_t: Duration::ZERO,
            buf: Vec::with_capacity(4096),
        }
    }

    /// Keeps Secret values instead of redacting them.
    pub fn show_secret_data(mut self, show: bool) -> Self {
        self.redaction.enabled = !show;
        self
    }

    /// Writes one line at `t` since the recording began (to the microsecond).
    pub fn write(&mut self, t: Duration, line: &Line) -> io::Result<()> {
        self.write_ref(t, LineRef::from(line), LiveNotes::default())
    }

    /// Writes one line with what the live session chose or did there.
    pub fn write_with(&mut self, t: Duration, line: &Line, live: LiveNotes) -> io::Result<()> {
        self.write_ref(t, LineRef::from(line), live)
    }

    pub(super) fn write_ref(
        &mut self,
        t: Duration,
        line: LineRef<'_>,
        live: LiveNotes,
    ) -> io::Result<()> {
        let t = whole_micros(t).max(self.last_t);
        self.last_t = t;
        let redaction = self.redaction;
        let out = match line {
            LineRef::List(page) => LineOut {
                resource_version: Some(&page.resource_version),
                continue_token: page.continue_token.as_deref(),
                remaining_item_count: page.remaining_item_count,
                items: Some(ItemsOut {
                    items: &page.items,
                    redaction,
                }),
                ..LineOut::new(t, "LIST")
            },
            LineRef::Event(event) => {
                let object = match event {
                    WatchEvent::Added(obj)
                    | WatchEvent::Modified(obj)
                    | WatchEvent::Deleted(obj) => redaction.object(obj),
                    WatchEvent::Bookmark {
                        resource_version,
                        initial_events_end,
                    } => ObjectOut::Value(bookmark_value(
                        self.resource.as_ref(),
                        resource_version,
                        *initial_events_end,
                    )),
                    WatchEvent::Error(status) => ObjectOut::Status(status_value(status)),
                };
                LineOut {
                    object: Some(object),
                    ..LineOut::new(t, event_type(event))
                }
            }
            LineRef::WatchClosed(error) => {
                let (object, error) = error.map(error_parts).unwrap_or((None, None));
                LineOut {
                    object,
                    error,
                    ..LineOut::new(t, "WATCH_CLOSED")
                }
            }
            LineRef::RequestFailed(request, error) => {
                let (object, error) = error_parts(error);
                LineOut {
                    request: Some(request),
                    object,
                    error,
                    ..LineOut::new(t, "ERROR")
                }
            }
            LineRef::Resync => LineOut::new(t, "RESYNC"),
        };
        let out = LineOut {
            backoff: live.backoff.map(|d| MillisOut(whole_micros(d))),
            timeout_seconds: live.timeout_seconds,
            coalesced: live.coalesced,
            ..out
        };
        serde_json::to_writer(&mut self.buf, &out)?;
        self.flush_line()
    }

    fn flush_line(&mut self) -> io::Result<()> {
        self.buf.push(b'\n');
        let result = self
            .out
            .write_all(&self.buf)
            .and_then(|()| self.out.flush());
        self.buf.clear();
        result
    }

    /// The output, e.g. to finish a compressor.
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// `t` to the microsecond below: what the line says, so what the next line is compared with.
fn whole_micros(t: Duration) -> Duration {
    Duration::new(t.as_secs(), t.subsec_micros() * 1000)
}
