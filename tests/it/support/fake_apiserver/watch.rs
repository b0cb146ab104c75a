//! Watch streams: chunked, one JSON event per line, bounded by timeout, close and shutdown.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::Response;
use hyper::body::Frame;
use hyper::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue};
use serde_json::Value;
use tokio::sync::watch as signal;
use tokio::time::Instant;

use super::handler::{Body, Query, invalid_list_options, requested_rv};
use super::json::{self, Obj};
use super::partial::Encoding;
use super::resources::ResourceDef;
use super::selectors::Filter;
use super::store::{EventType, LogEntry};
use super::{Inner, lock};

/// The apiserver's watch timeout is random in [30, 60) minutes when the client sets none; the
/// fake uses the upper bound so that a forgotten watch still ends.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// The cacher sends its last bookmark this long before the timeout closes the watch.
const PRE_TIMEOUT_BOOKMARK: Duration = Duration::from_secs(2);
/// Lets hyper flush what was written before a dropped watch aborts the connection.
const DROP_FLUSH_DELAY: Duration = Duration::from_millis(50);

fn line(ty: &str, object: impl Into<json::J>) -> Bytes {
    Bytes::from(Obj::new().with("type", ty).with("object", object).to_body())
}

fn event_line(ty: EventType, obj: &Value, encoding: Encoding) -> Bytes {
    line(ty.as_str(), encoding.event_object(obj))
}

/// A BOOKMARK as the real server sends it: only type meta and `metadata.resourceVersion`
/// (plus the zero `creationTimestamp` Go cannot omit).
fn bookmark_line(
    def: &ResourceDef,
    rv: u64,
    initial_events_end: bool,
    encoding: Encoding,
) -> Bytes {
    let mut meta = Obj::new()
        .with("resourceVersion", rv.to_string())
        .with("creationTimestamp", Value::Null);
    if initial_events_end {
        meta.push(
            "annotations",
            Obj::new().with("k8s.io/initial-events-end", "true"),
        );
    }
    let (kind, api_version) = encoding.bookmark_type(def);
    line(
        "BOOKMARK",
        Obj::new()
            .with("kind", kind)
            .with("apiVersion", api_version)
            .with("metadata", meta),
    )
}

/// `watch-too-old-410.jsonl`: HTTP 200 carrying a single ERROR event.
pub(crate) fn too_old(requested: u64, oldest: u64) -> Response<Body> {
    let message = format!("too old resource version: {requested} ({oldest})");
    let status = json::status_obj(410, "Expired", &message, None, Obj::new());
    stream_response(WatchStream::finished(vec![line("ERROR", status)]))
}

/// What a logged mutation looks like through this watch's filter: a MODIFIED that moves an
/// object into or out of the selection becomes ADDED or DELETED, as the cacher does.
fn convert(e: &LogEntry, filter: &Filter) -> Option<(EventType, Value)> {
    let now = filter.matches(&e.object);
    let before = e.prev.as_ref().is_some_and(|p| filter.matches(p));
    match (e.ty, before, now) {
        (EventType::Added, _, true) => Some((EventType::Added, e.object.clone())),
        (EventType::Deleted, true, _) => Some((EventType::Deleted, e.object.clone())),
        (EventType::Modified, true, true) => Some((EventType::Modified, e.object.clone())),
        (EventType::Modified, false, true) => Some((EventType::Added, e.object.clone())),
        (EventType::Modified, true, false) => {
            let mut old = e.prev.clone().expect("modified has prev");
            old["metadata"]["resourceVersion"] = Value::String(e.rv.to_string());
            Some((EventType::Deleted, old))
        }
        _ => None,
    }
}

/// The state of one open watch, driven by `futures_util::stream::unfold`. Nothing is spawned:
/// when hyper drops the body (client gone, connection cut, server dropped), the watch is gone.
struct WatchStream {
    live: Option<Live>,
    pending: VecDeque<Bytes>,
    /// What goes wrong once this many lines were sent.
    fault: Option<(usize, StreamFault)>,
    sent: usize,
}

/// An injected fault of an open watch.
#[derive(Clone, Copy, Debug)]
pub(crate) enum StreamFault {
    /// The connection is cut without a terminating chunk.
    Drop,
    /// A line that is not JSON, then the stream carries on.
    Garble,
}

struct Live {
    inner: Arc<Inner>,
    def: Arc<ResourceDef>,
    filter: Filter,
    encoding: Encoding,
    /// Every logged event up to here has been looked at.
    cursor: u64,
    deadline: Instant,
    next_bookmark: Option<Instant>,
    interval: Duration,
    pre_timeout_bookmark: Option<Instant>,
    rv_rx: signal::Receiver<u64>,
    close_rx: signal::Receiver<u64>,
    shutdown_rx: signal::Receiver<bool>,
}

impl Live {
    /// Queues the events after the cursor and moves it to the store's current rv.
    fn drain(&mut self, pending: &mut VecDeque<Bytes>) {
        let store = self.inner.store();
        let id = self.def.id();
        for e in store
            .events_after(self.cursor)
            .iter()
            .filter(|e| e.resource == id && !e.unwatched)
        {
            if let Some((ty, obj)) = convert(e, &self.filter) {
                pending.push_back(event_line(ty, &obj, self.encoding));
            }
        }
        self.cursor = store.rv;
    }
}

impl WatchStream {
    fn finished(lines: Vec<Bytes>) -> Self {
        Self {
            live: None,
            pending: lines.into(),
            fault: None,
            sent: 0,
        }
    }

    async fn next(mut self) -> Option<(Result<Frame<Bytes>, std::io::Error>, Self)> {
        loop {
            match self.fault {
                Some((n, StreamFault::Drop)) if self.sent >= n => {
                    tokio::time::sleep(DROP_FLUSH_DELAY).await;
                    self.live = None;
                    self.pending.clear();
                    self.fault = None;
                    // An error from the body makes hyper abort the connection mid-message.
                    let err = std::io::Error::other("fake apiserver: watch connection dropped");
                    return Some((Err(err), self));
                }
                Some((n, StreamFault::Garble)) if self.sent >= n => {
                    self.fault = None;
                    self.sent += 1;
                    let line = Bytes::from_static(b"{\"type\":\"MODIFIED\",\"object\":!}\n");
                    return Some((Ok(Frame::data(line)), self));
                }
                _ => {}
            }
            if let Some(chunk) = self.pending.pop_front() {
                self.sent += 1;
                return Some((Ok(Frame::data(chunk)), self));
            }
            let live = self.live.as_mut()?;
            live.drain(&mut self.pending);
            if !self.pending.is_empty() {
                continue;
            }
            let now = Instant::now();
            if now >= live.deadline {
                return None;
            }
            let due = |t: Option<Instant>| t.is_some_and(|t| now >= t);
            if due(live.pre_timeout_bookmark) || due(live.next_bookmark) {
                if due(live.pre_timeout_bookmark) {
                    live.pre_timeout_bookmark = None;
                }
                if due(live.next_bookmark) {
                    live.next_bookmark = Some(now + live.interval);
                }
                // Everything up to the cursor has been queued, so the bookmark is truthful.
                let bookmark = bookmark_line(&live.def, live.cursor, false, live.encoding);
                self.pending.push_back(bookmark);
                continue;
            }
            let wake = [live.pre_timeout_bookmark, live.next_bookmark]
                .into_iter()
                .flatten()
                .fold(live.deadline, Instant::min);
            tokio::select! {
                changed = live.rv_rx.changed() => if changed.is_err() { return None },
                _ = live.close_rx.changed() => return None,
                _ = live.shutdown_rx.wait_for(|down| *down) => return None,
                _ = tokio::time::sleep_until(wake) => {}
            }
        }
    }
}

fn stream_response(stream: WatchStream) -> Response<Body> {
    let body = StreamBody::new(futures_util::stream::unfold(stream, WatchStream::next));
    let mut resp = Response::new(BodyExt::boxed(body));
    let headers = resp.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache, private"));
    resp
}

pub(crate) async fn watch(
    inner: Arc<Inner>,
    def: Arc<ResourceDef>,
    filter: Filter,
    q: &Query,
    fault: Option<(usize, StreamFault)>,
    encoding: Encoding,
) -> Response<Body> {
    let param = |k: &str| q.get(k).map_or("", String::as_str);
    let truthy = |k: &str| matches!(param(k), "true" | "1");
    let bookmarks = truthy("allowWatchBookmarks");
    let send_initial = truthy("sendInitialEvents");
    let rvm = param("resourceVersionMatch");
    let (watch_list_supported, interval) = {
        let knobs = lock(&inner.knobs);
        (knobs.watch_list_supported, knobs.bookmark_interval)
    };

    if !param("sendInitialEvents").is_empty() {
        if !watch_list_supported {
            // `watchlist-sendInitialEvents.json`: 1.28 without the WatchList feature gate.
            return invalid_list_options(
                "sendInitialEvents",
                "FieldValueForbidden",
                "Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
            );
        }
        if rvm != "NotOlderThan" {
            return invalid_list_options(
                "resourceVersionMatch",
                "FieldValueForbidden",
                "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            );
        }
        if send_initial && !bookmarks {
            return invalid_list_options(
                "allowWatchBookmarks",
                "FieldValueForbidden",
                "Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true",
            );
        }
    } else if !rvm.is_empty() {
        return invalid_list_options(
            "resourceVersionMatch",
            "FieldValueForbidden",
            "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
        );
    }
    let requested = match requested_rv(&inner, param("resourceVersion")).await {
        Ok(r) => r,
        Err(resp) => return *resp,
    };

    let timeout = match param("timeoutSeconds").parse::<u64>() {
        Ok(s) if s > 0 => Duration::from_secs(s),
        _ => DEFAULT_TIMEOUT,
    };
    let now = Instant::now();
    let deadline = now + timeout;

    // Subscribe before reading the store so that no mutation can slip between the two.
    let rv_rx = inner.rv_tx.subscribe();
    let close_rx = inner.close_tx.subscribe();
    let shutdown_rx = inner.shutdown_tx.subscribe();

    let mut pending = VecDeque::new();
    let cursor = {
        let store = inner.store();
        let synthetic_adds = send_initial || matches!(requested, None | Some(0));
        match requested {
            Some(n) if !synthetic_adds && n < store.watch_floor() => {
                return too_old(n, store.watch_floor());
            }
            Some(n) if !synthetic_adds => n,
            _ => {
                for obj in store.current(&def).values().filter(|o| filter.matches(o)) {
                    pending.push_back(event_line(EventType::Added, obj, encoding));
                }
                if send_initial {
                    pending.push_back(bookmark_line(&def, store.rv, true, encoding));
                }
                store.rv
            }
        }
    };

    let live = Live {
        inner: inner.clone(),
        def,
        filter,
        encoding,
        cursor,
        deadline,
        next_bookmark: bookmarks.then(|| now + interval),
        interval,
        pre_timeout_bookmark: bookmarks.then(|| deadline - PRE_TIMEOUT_BOOKMARK.min(timeout / 2)),
        rv_rx,
        close_rx,
        shutdown_rx,
    };
    stream_response(WatchStream {
        live: Some(live),
        pending,
        fault,
        sent: 0,
    })
}
