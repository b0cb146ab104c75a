//! [`RecordingReader`]: a recording parsed line by line, never held in memory as a whole.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::os::fd::{AsFd as _, BorrowedFd};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use flate2::bufread::MultiGzDecoder;

use super::error::RecordingError;
use super::format::{Header, LiveNotes, MillisOut, Record, WireLine, WireT};
use crate::object::without_position;

/// The first bytes of every gzip stream.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// The UTF-8 byte-order mark some editors put at the start of a text file.
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// The largest `t`: 100 years. Beyond, a recorded time can fall outside the range of times the
/// outputs write, and no recording runs that long.
const MAX_T: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// The longest line a recording may have, not counting its newline: 64 MiB, far above any real list page
/// (the API server refuses a request body over 3 MiB, so an object is smaller than that, and a page
/// of 500 such objects is rare), and a bound on what a line that never ends (a file that is not
/// a recording, a stream gone wrong) makes the reader hold.
pub const MAX_LINE: usize = 64 << 20;

/// Read buffer size: large enough that a list page of a few hundred objects needs few reads.
const BUFFER: usize = 256 * 1024;

/// Reads a recording one line at a time: the optional header first (read on construction), then
/// one [`Record`] per call to [`next_record`](RecordingReader::next_record).
///
/// Checks as it goes that every line is valid JSON of a known shape and that `t` never decreases;
/// `t` is read to the microsecond, and a line without `t` takes the previous line's (the first
/// line's defaults to 0). Blank lines are
/// skipped. Gzip input (a `.gz` file, or gzip piped into stdin) is recognised by its magic bytes
/// and decompressed on the fly, concatenated gzip members included.
pub struct RecordingReader {
    name: String,
    input: BufReader<Box<dyn Read + Send>>,
    gzipped: bool,
    /// The gzip stream stopped without its end; everything before was read.
    cut_short: bool,
    /// The input may be a stream still being written.
    live: bool,
    header: Option<Header>,
    /// The first line when it was not a header.
    first: Option<Record>,
    line_no: u64,
    last_t: Duration,
    /// The live queue's coalesced count as of the previous line (`LiveNotes::coalesced`).
    last_coalesced: Option<u64>,
    buf: Vec<u8>,
}

impl std::fmt::Debug for RecordingReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordingReader")
            .field("name", &self.name)
            .field("header", &self.header)
            .field("line_no", &self.line_no)
            .finish_non_exhaustive()
    }
}

impl RecordingReader {
    /// Opens a recording file, or stdin for `-`, and reads its header.
    pub fn open(path: &Path) -> Result<Self, RecordingError> {
        if path.as_os_str() == "-" {
            let live = !is_regular_file(io::stdin().as_fd());
            return Self::new("<stdin>", io::stdin()).map(|r| r.live(live));
        }
        let name = path.display().to_string();
        let file = File::open(path).map_err(|e| RecordingError::Open {
            file: name.clone(),
            source: Arc::new(e),
        })?;
        let live = !is_regular_file(file.as_fd());
        Self::new(name, file).map(|r| r.live(live))
    }

    /// Says whether the input may be a stream still being written (a pipe, a terminal), whose
    /// next line may take any time to come; [`open`](Self::open) tells by the file's type,
    /// [`new`](Self::new) assumes not. An instant replay of such an input applies a group of
    /// lines once no line has come for a moment, instead of waiting for the next line's `t`.
    pub fn live(mut self, live: bool) -> Self {
        self.live = live;
        self
    }

    /// Whether the input may be a stream still being written ([`live`](Self::live)).
    pub fn is_live(&self) -> bool {
        self.live
    }

    /// Reads a recording from `input` (buffered here); `name` is how messages call it. Reads
    /// the first line.
    pub fn new(
        name: impl Into<String>,
        input: impl Read + Send + 'static,
    ) -> Result<Self, RecordingError> {
        let name = name.into();
        let boxed: Box<dyn Read + Send> = Box::new(input);
        let mut input = BufReader::with_capacity(BUFFER, boxed);
        let gzipped = input
            .fill_buf()
            .map_err(|e| RecordingError::Open {
                file: name.clone(),
                source: Arc::new(e),
            })?
            .starts_with(&GZIP_MAGIC);
        if gzipped {
            let decoder: Box<dyn Read + Send> = Box::new(MultiGzDecoder::new(input));
            input = BufReader::with_capacity(BUFFER, decoder);
        }
        let mut reader = RecordingReader {
            name,
            input,
            gzipped,
            cut_short: false,
            live: false,
            header: None,
            first: None,
            line_no: 0,
            last_t: Duration::ZERO,
            last_coalesced: None,
            buf: Vec::new(),
        };
        reader.skip_bom()?;
        if let Some(wire) = reader.next_wire()? {
            if wire.is_header() {
                let header = wire.into_header().map_err(|p| reader.malformed(p))?;
                reader.header = Some(header);
            } else {
                reader.first = Some(reader.record(wire)?);
            }
        }
        Ok(reader)
    }

    /// Skips a byte-order mark at the start: JSON has none, but a file saved by some editors does.
    fn skip_bom(&mut self) -> Result<(), RecordingError> {
        let start = self.input.fill_buf().map_err(|e| RecordingError::Read {
            file: self.name.clone(),
            line: 1,
            source: Arc::new(e),
        })?;
        if start.starts_with(UTF8_BOM) {
            self.input.consume(UTF8_BOM.len());
        }
        Ok(())
    }

    /// The header, if the recording has one.
    pub fn header(&self) -> Option<&Header> {
        self.header.as_ref()
    }

    /// The name messages use for this recording.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the next line needs a read from the input (which may block on a pipe): what is
    /// buffered has been parsed.
    pub(super) fn needs_input(&self) -> bool {
        self.input.buffer().is_empty()
    }

    /// The next line, `None` at the end of the recording.
    pub fn next_record(&mut self) -> Result<Option<Record>, RecordingError> {
        if let Some(first) = self.first.take() {
            return Ok(Some(first));
        }
        match self.next_wire()? {
            None => Ok(None),
            Some(wire) if wire.is_header() => {
                Err(self.malformed("a header is only allowed on the first line".to_owned()))
            }
            Some(wire) => self.record(wire).map(Some),
        }
    }

    /// Reads and parses the next non-blank line.
    fn next_wire(&mut self) -> Result<Option<WireLine>, RecordingError> {
        loop {
            if self.cut_short {
                return Ok(None);
            }
            self.buf.clear();
            self.line_no += 1;
            // One byte past the limit tells a line that is too long from one that just fits.
            let mut line = (&mut self.input).take(MAX_LINE as u64 + 1);
            let read = match line.read_until(b'\n', &mut self.buf) {
                Ok(read) => read,
                // A gzip stream that stops between two lines, without its end: a recording
                // killed while it was written. `record` flushes every line, so each one before
                // is whole; the replay ends there, as at the end of a file.
                Err(e)
                    if self.gzipped
                        && e.kind() == io::ErrorKind::UnexpectedEof
                        && self.buf.is_empty() =>
                {
                    tracing::warn!(
                        "{}: the gzip stream stops after line {} without its end (was the \
                         recording killed?); every line up to there is replayed",
                        self.name,
                        self.line_no - 1
                    );
                    self.cut_short = true;
                    0
                }
                Err(e) => {
                    return Err(RecordingError::Read {
                        file: self.name.clone(),
                        line: self.line_no,
                        source: Arc::new(e),
                    });
                }
            };
            if read == 0 {
                self.line_no -= 1;
                return Ok(None);
            }
            if self.buf.len() > MAX_LINE && self.buf.last() != Some(&b'\n') {
                return Err(self.malformed(format!(
                    "the line is longer than {} MiB, the most a recording line may hold (no \
                     object comes near it: is this a recording?)",
                    MAX_LINE >> 20
                )));
            }
            let Ok(text) = std::str::from_utf8(&self.buf) else {
                return Err(RecordingError::Read {
                    file: self.name.clone(),
                    line: self.line_no,
                    source: Arc::new(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "stream did not contain valid UTF-8",
                    )),
                });
            };
            let text = text.trim();
            if text.is_empty() {
                continue;
            }
            if !text.starts_with('{') {
                return Err(self.malformed(
                    "expected a JSON object (`{…}`): every line of a recording is one".to_owned(),
                ));
            }
            return serde_json::from_str::<WireLine>(text)
                .map(Some)
                .map_err(|e| self.malformed(json_problem(&e)));
        }
    }

    fn record(&mut self, wire: WireLine) -> Result<Record, RecordingError> {
        let t = match wire.t {
            Some(WireT::Micros(micros)) => Duration::from_micros(micros),
            Some(WireT::OutOfRange(t)) if t < 0.0 => {
                return Err(self.malformed(format!(
                    "\"t\" is {t}, before the recording began: t counts milliseconds since then"
                )));
            }
            Some(WireT::OutOfRange(t)) => return Err(self.too_late(&t.to_string())),
            None => self.last_t,
        };
        if t > MAX_T {
            return Err(self.too_late(&MillisOut(t).to_string()));
        }
        if t < self.last_t {
            return Err(self.malformed(format!(
                "\"t\" is {}, less than the previous line's {}: t counts milliseconds since the \
                 recording began and must never decrease",
                MillisOut(t),
                MillisOut(self.last_t)
            )));
        }
        let backoff = match wire.backoff {
            None => None,
            Some(WireT::Micros(micros)) if micros <= MAX_T.as_micros() as u64 => {
                Some(Duration::from_micros(micros))
            }
            Some(_) => {
                return Err(self.malformed(
                    "\"backoff\" is the milliseconds the Reflector waited before this request: \
                     a number from 0 to 100 years"
                        .to_owned(),
                ));
            }
        };
        let coalesced = wire.coalesced.or(self.last_coalesced);
        let live = LiveNotes {
            timeout_seconds: wire.timeout_seconds.filter(|s| *s > 0),
            backoff,
            coalesced,
        };
        let line = wire.into_line().map_err(|p| self.malformed(p))?;
        self.last_t = t;
        self.last_coalesced = coalesced;
        Ok(Record {
            line_no: self.line_no,
            t,
            line,
            live,
        })
    }

    fn too_late(&self, t: &str) -> RecordingError {
        self.malformed(format!(
            "\"t\" is {t}, more than 100 years after the recording began: t counts milliseconds"
        ))
    }

    fn malformed(&self, problem: String) -> RecordingError {
        RecordingError::Malformed {
            file: self.name.clone(),
            line: self.line_no,
            problem,
        }
    }
}

/// Whether `fd` is a regular file, which is never written while it is read (a file being recorded
/// into could be, but a replay of one reads up to where it is and ends there).
fn is_regular_file(fd: BorrowedFd<'_>) -> bool {
    fd.try_clone_to_owned()
        .map(File::from)
        .and_then(|file| file.metadata())
        .is_ok_and(|m| m.is_file())
}

impl Iterator for RecordingReader {
    type Item = Result<Record, RecordingError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_record().transpose()
    }
}

/// serde_json's message without its " at line 1 column N" (every line is parsed on its own, so
/// its "line 1" would mislead), with the column kept.
fn json_problem(error: &serde_json::Error) -> String {
    let message = without_position(error);
    let what = match error.classify() {
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => "not valid JSON",
        serde_json::error::Category::Data | serde_json::error::Category::Io => {
            "not a recording line"
        }
    };
    format!("{what} (column {}): {message}", error.column())
}

/// Reads all of `input` into records.
#[cfg(test)]
pub(super) fn read_all(
    name: &str,
    input: impl io::Read + Send + 'static,
) -> Result<(Option<Header>, Vec<Record>), RecordingError> {
    let mut reader = RecordingReader::new(name, input)?;
    let header = reader.header().cloned();
    let records = reader.by_ref().collect::<Result<Vec<_>, _>>()?;
    Ok((header, records))
}

#[cfg(test)]
#[path = "reader_tests.rs"]
mod tests;
