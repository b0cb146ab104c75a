//! The `ListerWatcher` the [`Reflector`](crate::cache::Reflector) depends on (client-go's
//! `tools/cache/listwatch.go`): one resource's `list` and `watch` calls, with requests, pages,
//! events and errors in the shapes the Kubernetes API uses, but independent of any HTTP client.
//!
//! The sources implement it ([`KubeListerWatcher`](crate::source::KubeListerWatcher) on a
//! `kube::Client`, the recording replay on a file), so the Reflector never knows where its objects
//! come from.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::object::Object;
use futures_util::stream::BoxStream;
use kube::core::ApiResource;

/// How the server interprets a list's `resourceVersion` (the `resourceVersionMatch` parameter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceVersionMatch {
    /// Data at exactly the given resourceVersion, or `410 Gone` if it was compacted away.
    Exact,
    /// Data at least as new as the given resourceVersion.
    NotOlderThan,
}

impl ResourceVersionMatch {
    /// The value as it appears on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ResourceVersionMatch::Exact => "Exact",
            ResourceVersionMatch::NotOlderThan => "NotOlderThan",
        }
    }
}

/// One list request (one page of a possibly paged list).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ListRequest {
    /// `"0"` (any cached state, served by the watch cache), `""` (a consistent read from etcd),
    /// or a specific resourceVersion. Ignored by servers when `continue_token` is set.
    pub resource_version: String,
    /// How `resource_version` is interpreted; `None` leaves it to the server's legacy semantics.
    pub resource_version_match: Option<ResourceVersionMatch>,
    /// Page size; `None` asks for everything at once.
    pub limit: Option<u32>,
    /// The token of the previous page, to fetch the next one.
    pub continue_token: Option<String>,
}

/// One page of a list.
#[derive(Debug, Clone, Default)]
pub struct ListPage {
    /// The objects of this page. On the wire list items lack `kind` and `apiVersion`.
    pub items: Vec<Object>,
    /// The resourceVersion of the whole list (the same on every page).
    pub resource_version: String,
    /// Set when more pages follow.
    pub continue_token: Option<String>,
    /// The server's estimate of how many items the following pages hold (absent with selectors).
    pub remaining_item_count: Option<i64>,
}

/// One watch request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchRequest {
    /// Watch changes after this resourceVersion; `""`/`"0"` start from "now" (with synthetic
    /// ADDED events for the current state when the server chooses to send them).
    pub resource_version: String,
    /// The server ends the watch after this many seconds.
    pub timeout_seconds: u32,
    /// Ask for BOOKMARK events (`allowWatchBookmarks=true`).
    pub allow_bookmarks: bool,
    /// A streaming list: ADDED events for the current state, then a bookmark annotated
    /// `k8s.io/initial-events-end: "true"` (`sendInitialEvents=true`,
    /// `resourceVersionMatch=NotOlderThan`).
    pub send_initial_events: bool,
}

/// A `Status` object as the API server returns it for failed requests and watch ERROR events.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ApiStatus {
    /// The HTTP status code (0 when the server did not say).
    pub code: u16,
    /// The machine-readable reason, e.g. `Expired`, `Forbidden`, `TooManyRequests`.
    pub reason: String,
    /// The human-readable message.
    pub message: String,
    /// The `reason` of each of `details.causes` (a cause type such as `ResourceVersionTooLarge`),
    /// in the server's order; usually empty.
    pub causes: Vec<String>,
}

impl fmt::Display for ApiStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.code, self.reason.is_empty()) {
            (0, true) => f.write_str(&self.message),
            (0, false) => write!(f, "{}: {}", self.reason, self.message),
            (code, true) => write!(f, "{code}: {}", self.message),
            (code, false) => write!(f, "{code} {}: {}", self.reason, self.message),
        }
    }
}

/// One event of a watch stream. Objects come shared, as the cache keeps them: an event is moved
/// through several hands on its way to the queue, and a decoded object is a few hundred bytes.
#[derive(Debug, Clone)]
pub enum WatchEvent {
    /// `ADDED`.
    Added(Arc<Object>),
    /// `MODIFIED`.
    Modified(Arc<Object>),
    /// `DELETED`: the object's last state.
    Deleted(Arc<Object>),
    /// `BOOKMARK`: everything up to `resource_version` has been sent.
    Bookmark {
        /// The resourceVersion the watch has reached.
        resource_version: String,
        /// Whether the bookmark ends a streaming list's initial events
        /// (annotation `k8s.io/initial-events-end: "true"`).
        initial_events_end: bool,
    },
    /// `ERROR`: the server ends the watch with this Status (for instance 410 Expired).
    Error(ApiStatus),
}

/// The stream a watch yields. It ends when the server closes the watch.
pub type WatchStream = BoxStream<'static, Result<WatchEvent, SourceError>>;

/// What a [`ListerWatcher`] lists and watches, for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceTarget {
    /// The resource's group, version, kind and plural name.
    pub api_resource: ApiResource,
    /// The namespace, or `None` for all namespaces (or a cluster-scoped resource).
    pub namespace: Option<String>,
}

impl ResourceTarget {
    /// A target for `api_resource` in `namespace` (`None`: all namespaces / cluster-scoped).
    pub fn new(api_resource: ApiResource, namespace: Option<String>) -> Self {
        ResourceTarget {
            api_resource,
            namespace,
        }
    }

    /// The resource as kubectl names it: `configmaps`, `deployments.apps`.
    pub fn resource(&self) -> String {
        let ar = &self.api_resource;
        if ar.group.is_empty() {
            ar.plural.clone()
        } else {
            format!("{}.{}", ar.plural, ar.group)
        }
    }
}

impl fmt::Display for ResourceTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} in namespace \"{ns}\"", self.resource()),
            None => write!(f, "{} in all namespaces", self.resource()),
        }
    }
}

/// Why a list or watch call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    /// The server answered with a failure `Status`.
    #[error("the API server answered {0}")]
    Api(ApiStatus),
    /// The server could not be reached: connection refused or reset before an answer, DNS or TLS
    /// failures, timeouts.
    #[error("the API server could not be reached: {0}")]
    Connect(String),
    /// A response broke off or could not be read: a list page that is no list or holds an object
    /// that does not decode, or an open watch whose connection dropped mid-stream.
    #[error("the server's response could not be read: {0}")]
    Stream(String),
    /// The request could not be made at all, and cannot be with the client's settings:
    /// invalid parameters, credentials that cannot be obtained, a server certificate the client
    /// refuses, a list longer than the client's request timeout, a client-side bug.
    #[error("the request could not be made: {0}")]
    Request(String),
}

impl SourceError {
    /// The server's Status, if the server answered.
    pub fn status(&self) -> Option<&ApiStatus> {
        match self {
            SourceError::Api(status) => Some(status),
            _ => None,
        }
    }

    /// The HTTP status code, if the server answered.
    pub fn code(&self) -> Option<u16> {
        self.status().map(|s| s.code).filter(|c| *c != 0)
    }

    /// Whether the requested resourceVersion (or continue token) is too old: `410 Gone`, reason
    /// `Expired`/`Gone`, or the watch cache's "too old resource version" message.
    pub fn is_expired(&self) -> bool {
        self.status().is_some_and(|s| {
            s.code == 410
                || s.reason == "Expired"
                || s.reason == "Gone"
                || s.message.contains("too old resource version")
        })
    }

    /// Whether the requested resourceVersion is newer than any the server has seen: the watch
    /// cache waited for it in vain (504 with the cause `ResourceVersionTooLarge`; servers before
    /// 1.19 only said "Too large resource version" in the message). client-go's
    /// `isTooLargeResourceVersionError`.
    pub fn is_too_large_resource_version(&self) -> bool {
        self.status().is_some_and(|s| {
            s.causes.iter().any(|c| c == "ResourceVersionTooLarge")
                || ((s.code == 504 || s.reason == "Timeout")
                    && s.message.contains("Too large resource version"))
        })
    }

    /// Whether the server asked the client to slow down (`429 TooManyRequests`).
    pub fn is_too_many_requests(&self) -> bool {
        self.status()
            .is_some_and(|s| s.code == 429 || s.reason == "TooManyRequests")
    }

    /// Whether the server failed internally (`500 InternalError`).
    pub fn is_internal_error(&self) -> bool {
        self.status()
            .is_some_and(|s| s.code == 500 || s.reason == "InternalError")
    }

    /// Whether the server could not be reached.
    pub fn is_connect(&self) -> bool {
        matches!(self, SourceError::Connect(_))
    }

    /// Whether the same request may succeed later: unreachable server, broken stream, 429 and
    /// every 5xx.
    pub fn is_retryable(&self) -> bool {
        match self {
            SourceError::Connect(_) | SourceError::Stream(_) => true,
            SourceError::Api(s) => s.code == 429 || s.code >= 500,
            SourceError::Request(_) => false,
        }
    }

    /// Whether the credentials were refused (401) or lack permission (403).
    pub fn is_auth(&self) -> bool {
        self.status().is_some_and(|s| {
            matches!(s.code, 401 | 403) || matches!(s.reason.as_str(), "Unauthorized" | "Forbidden")
        })
    }

    /// Whether the resource (or namespace) does not exist (404).
    pub fn is_not_found(&self) -> bool {
        self.status()
            .is_some_and(|s| s.code == 404 || s.reason == "NotFound")
    }

    /// Whether the server rejected the request's parameters (`422 Invalid`, `400 BadRequest`),
    /// as a 1.28 server does for `sendInitialEvents`.
    pub fn is_invalid(&self) -> bool {
        self.status().is_some_and(|s| {
            matches!(s.code, 400 | 422) || matches!(s.reason.as_str(), "Invalid" | "BadRequest")
        })
    }
}

/// Lists and watches one resource: what a Reflector needs from the API server.
///
/// Implementations must not retry on their own: the Reflector owns the retry policy (backoff,
/// relists), and a client that silently retries hides exactly what this tool wants to show.
pub trait ListerWatcher: Send + Sync + 'static {
    /// Fetches one page of a list.
    fn list(&self, req: &ListRequest)
    -> impl Future<Output = Result<ListPage, SourceError>> + Send;

    /// Opens a watch. The returned stream ends when the server closes the watch; an error item
    /// means the stream broke.
    fn watch(
        &self,
        req: &WatchRequest,
    ) -> impl Future<Output = Result<WatchStream, SourceError>> + Send;

    /// What is listed and watched, for messages and for filling in `kind`/`apiVersion`.
    fn describe(&self) -> ResourceTarget;

    /// What the session this source reproduces chose where the Reflector draws at random (a
    /// recording replayed: the watch timeout and the backoff delays the live Reflector drew), so
    /// that the Reflector takes that instead of drawing anew. Asked right before the choice is
    /// used: for [`RandomChoice::WatchTimeout`] before the watch request it goes into, for
    /// [`RandomChoice::Backoff`] before the wait. `None` (the default, and every live source):
    /// the Reflector draws.
    fn recorded_choice(
        &self,
        choice: RandomChoice,
    ) -> impl Future<Output = Option<Duration>> + Send {
        let _ = choice;
        std::future::ready(None)
    }
}

/// A choice the Reflector makes at random, which a replay takes from its recording
/// ([`ListerWatcher::recorded_choice`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RandomChoice {
    /// The watch request's `timeoutSeconds` (client-go: 5 to 10 minutes).
    WatchTimeout,
    /// The delay before the next request after a failure (client-go's backoff manager, with
    /// jitter).
    Backoff,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(code: u16, reason: &str, message: &str) -> SourceError {
        SourceError::Api(ApiStatus {
            code,
            reason: reason.into(),
            message: message.into(),
            causes: Vec::new(),
        })
    }

    #[test]
    fn classifies_statuses() {
        assert!(api(410, "Expired", "too old resource version: 1 (2)").is_expired());
        assert!(api(0, "", "too old resource version: 1 (2)").is_expired());
        assert!(api(0, "Gone", "").is_expired());
        assert!(!api(500, "InternalError", "").is_expired());
        assert!(api(429, "TooManyRequests", "").is_too_many_requests());
        assert!(api(429, "TooManyRequests", "").is_retryable());
        assert!(api(503, "ServiceUnavailable", "").is_retryable());
        assert!(!api(403, "Forbidden", "").is_retryable());
        assert!(api(403, "Forbidden", "").is_auth());
        assert!(api(401, "Unauthorized", "").is_auth());
        assert!(api(404, "NotFound", "").is_not_found());
        assert!(api(422, "Invalid", "").is_invalid());
        assert!(SourceError::Connect("refused".into()).is_retryable());
        assert!(SourceError::Connect("refused".into()).is_connect());
        assert!(!SourceError::Request("bad".into()).is_retryable());
    }

    #[test]
    fn messages_read_as_sentences() {
        let e = api(403, "Forbidden", "configmaps is forbidden");
        assert_eq!(
            e.to_string(),
            "the API server answered 403 Forbidden: configmaps is forbidden"
        );
        let target = ResourceTarget::new(
            ApiResource {
                group: "apps".into(),
                version: "v1".into(),
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
                plural: "deployments".into(),
            },
            Some("default".into()),
        );
        assert_eq!(
            target.to_string(),
            "deployments.apps in namespace \"default\""
        );
    }
}
