//! The errors that stop a Reflector.

use crate::cache::listwatch::{ResourceTarget, SourceError};

/// Why [`Reflector::run`](crate::cache::Reflector::run) gave up: the server refused the request in a way
/// retrying cannot fix (401, 403, 404, an invalid request). Every other failure is retried.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReflectorError {
    /// Listing failed.
    #[error("cannot list {target}: {source}")]
    ListFailed {
        /// What was listed.
        target: Box<ResourceTarget>,
        /// What the server said.
        #[source]
        source: SourceError,
    },
    /// A watch could not be opened.
    #[error("cannot watch {target}: {source}")]
    WatchStartFailed {
        /// What was watched.
        target: Box<ResourceTarget>,
        /// What the server said.
        #[source]
        source: SourceError,
    },
    /// An open watch was ended by the server with an error that retrying cannot fix.
    #[error("the watch of {target} was ended by the server: {source}")]
    WatchFailed {
        /// What was watched.
        target: Box<ResourceTarget>,
        /// What the server said.
        #[source]
        source: SourceError,
    },
}

impl ReflectorError {
    /// The API verb that failed: `list` or `watch`.
    pub fn verb(&self) -> &'static str {
        match self {
            ReflectorError::ListFailed { .. } => "list",
            ReflectorError::WatchStartFailed { .. } | ReflectorError::WatchFailed { .. } => "watch",
        }
    }

    /// What was listed or watched.
    pub fn target(&self) -> &ResourceTarget {
        match self {
            ReflectorError::ListFailed { target, .. }
            | ReflectorError::WatchStartFailed { target, .. }
            | ReflectorError::WatchFailed { target, .. } => target,
        }
    }

    /// The underlying failure.
    pub fn source_error(&self) -> &SourceError {
        match self {
            ReflectorError::ListFailed { source, .. }
            | ReflectorError::WatchStartFailed { source, .. }
            | ReflectorError::WatchFailed { source, .. } => source,
        }
    }
}

/// Whether retrying `error` cannot help: credentials refused or missing permission, the resource
/// (or namespace) does not exist, or the request itself is invalid.
pub(super) fn is_terminal(error: &SourceError) -> bool {
    error.is_auth() || error.is_not_found() || matches!(error, SourceError::Request(_))
}
