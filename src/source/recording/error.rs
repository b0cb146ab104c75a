//! [`RecordingError`]: what can go wrong reading or replaying a recording, always with the file
//! name and, past opening, the line number.

use std::io;
use std::sync::Arc;

/// A recording could not be opened, read, parsed, or replayed.
///
/// Messages read `FILE:LINE: what is wrong (what was expected)`, like a compiler's, so that an
/// editor can jump to the line. `Clone` so that a replay can hand the same error to everyone
/// waiting for its end.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RecordingError {
    /// The file could not be opened.
    #[error("cannot open the recording {file}: {source}")]
    Open {
        /// The file as given (`<stdin>` for `-`).
        file: String,
        /// Why.
        #[source]
        source: Arc<io::Error>,
    },
    /// Reading failed (an I/O error, invalid UTF-8, a truncated gzip stream).
    #[error("{file}:{line}: cannot read the recording: {source}")]
    Read {
        /// The file.
        file: String,
        /// The line being read.
        line: u64,
        /// Why.
        #[source]
        source: Arc<io::Error>,
    },
    /// A line is not a valid recording line.
    #[error("{file}:{line}: {problem}")]
    Malformed {
        /// The file.
        file: String,
        /// The line.
        line: u64,
        /// What is wrong and what was expected.
        problem: String,
    },
    /// A valid line does not answer the request the Reflector made at that point (a LIST where
    /// a watch event is due, a watch event where a list is due).
    #[error("{file}:{line}: {problem}")]
    Unanswerable {
        /// The file.
        file: String,
        /// The line.
        line: u64,
        /// The request and what the line is instead.
        problem: String,
    },
    /// The recording cannot be replayed as a whole (it names no resource, it is empty).
    #[error("{file}: {problem}")]
    Unusable {
        /// The file.
        file: String,
        /// Why.
        problem: String,
    },
}

impl RecordingError {
    /// The file the error is about.
    pub fn file(&self) -> &str {
        match self {
            RecordingError::Open { file, .. }
            | RecordingError::Read { file, .. }
            | RecordingError::Malformed { file, .. }
            | RecordingError::Unanswerable { file, .. }
            | RecordingError::Unusable { file, .. } => file,
        }
    }

    /// The line the error is about, from 1.
    pub fn line(&self) -> Option<u64> {
        match self {
            RecordingError::Read { line, .. }
            | RecordingError::Malformed { line, .. }
            | RecordingError::Unanswerable { line, .. } => Some(*line),
            RecordingError::Open { .. } | RecordingError::Unusable { .. } => None,
        }
    }
}
