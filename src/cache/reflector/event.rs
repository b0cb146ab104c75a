//! What a Reflector reports about itself: [`ReflectorEvent`]s delivered to a
//! [`ReflectorObserver`]. Renderers subscribe here; they never reach into the Reflector.

use std::fmt;
use std::time::{Duration, SystemTime};

use tokio::sync::mpsc::UnboundedSender;

use super::error::ReflectorError;
use crate::cache::listwatch::{ApiStatus, SourceError};

/// Which call a failure or a retry concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// A list (a page of it).
    List,
    /// Opening or reading a watch.
    Watch,
    /// A streaming list (a watch with `sendInitialEvents=true`) before its initial events ended.
    WatchList,
    /// The data consistency check.
    Verify,
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Phase::List => "list",
            Phase::Watch => "watch",
            Phase::WatchList => "streaming list",
            Phase::Verify => "consistency check",
        })
    }
}

/// How a watch ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchEndReason {
    /// The server closed the stream: its timeout, a shutdown, or a connection that dropped (kube
    /// reports a truncated stream as an end). The Reflector re-watches without relisting.
    Closed,
    /// Reading the stream failed.
    Broken(SourceError),
    /// The server sent an ERROR event (410 Expired, typically).
    ErrorEvent(ApiStatus),
    /// Closed in under a second without delivering any event: something is wrong with the server
    /// or the connection, so the Reflector backs off and relists (client-go's "very short watch").
    VeryShort,
}

impl fmt::Display for WatchEndReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WatchEndReason::Closed => f.write_str("closed by the server"),
            WatchEndReason::Broken(e) => write!(f, "broken: {e}"),
            WatchEndReason::ErrorEvent(s) => write!(f, "ended with an error event: {s}"),
            WatchEndReason::VeryShort => {
                f.write_str("very short watch: closed within a second without any event")
            }
        }
    }
}

/// Why the Reflector lists again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RelistCause {
    /// The watch's resourceVersion expired (410): relist at the last synced resourceVersion.
    WatchExpired,
    /// The list at the last synced resourceVersion expired too: list from `""` at once.
    ListExpired,
    /// The server has not reached the resourceVersion listed at (504 `ResourceVersionTooLarge`):
    /// list from `""` at once.
    ListTooLarge,
    /// A continue token expired mid-list: list again in one unpaginated request at the same
    /// resourceVersion (client-go's pager).
    ContinueExpired,
    /// The watch was very short.
    VeryShortWatch,
    /// The watch could not be opened.
    WatchStartFailed(SourceError),
    /// The watch ended with an error.
    WatchFailed(SourceError),
    /// A streaming list was interrupted before its initial events ended.
    WatchListInterrupted,
}

impl fmt::Display for RelistCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RelistCause::WatchExpired => f.write_str("the watch's resourceVersion expired"),
            RelistCause::ListExpired => {
                f.write_str("the list at the last synced resourceVersion expired")
            }
            RelistCause::ListTooLarge => f.write_str(
                "the server has not reached the resourceVersion listed at (too large resource version)",
            ),
            RelistCause::ContinueExpired => f.write_str(
                "the list's continue token expired; listing again without pages",
            ),
            RelistCause::VeryShortWatch => f.write_str("the watch was very short"),
            RelistCause::WatchStartFailed(e) => write!(f, "the watch could not be opened: {e}"),
            RelistCause::WatchFailed(e) => write!(f, "the watch failed: {e}"),
            RelistCause::WatchListInterrupted => {
                f.write_str("the streaming list ended before its initial events")
            }
        }
    }
}

/// The result of a data consistency check: the cache compared with a list at the resourceVersion
/// the cache had reached. Empty lists mean the cache is consistent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DriftReport {
    /// The resourceVersion both sides were compared at.
    pub resource_version: String,
    /// Objects the server listed.
    pub listed: usize,
    /// Keys the server has and the cache lacks.
    pub missing: Vec<String>,
    /// Keys the cache has and the server lacks.
    pub extra: Vec<String>,
    /// Keys whose resourceVersion differs.
    pub stale: Vec<String>,
}

impl DriftReport {
    /// Whether the cache matched the server.
    pub fn is_consistent(&self) -> bool {
        self.missing.is_empty() && self.extra.is_empty() && self.stale.is_empty()
    }
}

/// One thing the Reflector did or saw.
#[derive(Debug, Clone, PartialEq)]
pub enum ReflectorEventKind {
    /// A list started (its first page is being requested).
    ListStarted {
        /// The requested resourceVersion (`"0"`, `""` or a specific one).
        resource_version: String,
    },
    /// A page of a list arrived.
    ListPage {
        /// Pages so far, from 1.
        page: u32,
        /// Objects received so far.
        items_so_far: usize,
        /// The server's estimate of the objects still to come.
        remaining: Option<i64>,
    },
    /// A list completed and was delivered to the FIFO with one `replace`.
    ListDone {
        /// Objects listed.
        items: usize,
        /// Pages (0 for a streaming list).
        pages: u32,
        /// The list's resourceVersion.
        resource_version: String,
        /// From the first request to the `replace`.
        duration: Duration,
    },
    /// A watch was opened.
    WatchStarted {
        /// The resourceVersion it starts from.
        resource_version: String,
        /// Its `timeoutSeconds`.
        timeout_seconds: u32,
        /// Whether it is a streaming list.
        send_initial_events: bool,
    },
    /// A watch ended.
    WatchEnded {
        /// How.
        reason: WatchEndReason,
        /// How long it was open.
        duration: Duration,
        /// Events it delivered (bookmarks included).
        events: u64,
    },
    /// A BOOKMARK advanced the resourceVersion.
    Bookmark {
        /// The new resourceVersion.
        resource_version: String,
        /// Whether it ended a streaming list's initial events.
        initial_events_end: bool,
    },
    /// The Reflector is going to list again.
    Relist {
        /// Why.
        cause: RelistCause,
    },
    /// The Reflector waits before retrying.
    Backoff {
        /// How long.
        delay: Duration,
        /// What failed.
        phase: Phase,
        /// The failure.
        error: SourceError,
    },
    /// The queue was resynced.
    Resync {
        /// Deltas the resync queued: one `Sync` per key, or one `SyncAll` in an atomic queue.
        keys: usize,
    },
    /// The server refused a streaming list; the Reflector uses list + watch from now on.
    WatchListFallback {
        /// The server's answer.
        reason: String,
    },
    /// A data consistency check completed.
    Drift(DriftReport),
    /// A data consistency check could not compare (the cache kept changing, the list failed).
    DriftCheckSkipped {
        /// Why.
        reason: String,
    },
    /// The Reflector stopped with this error.
    Error(ReflectorError),
}

/// A [`ReflectorEventKind`] with the time it happened.
#[derive(Debug, Clone)]
pub struct ReflectorEvent {
    /// When, by the Reflector's clock.
    pub at: SystemTime,
    /// What.
    pub kind: ReflectorEventKind,
}

/// Receives [`ReflectorEvent`]s. Called from the Reflector's task: implementations must be quick
/// and must not block (hand the event over to a renderer, do not render here).
pub trait ReflectorObserver: Send + Sync + 'static {
    /// Takes one event.
    fn observe(&self, event: ReflectorEvent);
}

/// Events go to a channel; once the receiver is gone they are dropped.
impl ReflectorObserver for UnboundedSender<ReflectorEvent> {
    fn observe(&self, event: ReflectorEvent) {
        let _ = self.send(event);
    }
}

/// A shared observer, so that one observer can serve the Reflector and other reporters (a
/// replay's resync hook, say).
impl<T: ReflectorObserver + ?Sized> ReflectorObserver for std::sync::Arc<T>
where
    std::sync::Arc<T>: Send + Sync,
{
    fn observe(&self, event: ReflectorEvent) {
        (**self).observe(event);
    }
}

/// Drops every event.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoObserver;

impl ReflectorObserver for NoObserver {
    fn observe(&self, _event: ReflectorEvent) {}
}
