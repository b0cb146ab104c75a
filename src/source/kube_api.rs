//! [`KubeListerWatcher`]: the [`ListerWatcher`] of a live cluster, on `kube::Api<Object>`.
//!
//! ## The client must not retry
//! kube's default `Client` retries `429`, `503` and `504` internally (`Config::default_retry`,
//! up to 15 times with backoff of up to 1000 s, honouring `Retry-After`). The Reflector owns the
//! retry policy (client-go's backoff, relists), and a retry hidden inside the client would make a
//! throttled list look like a slow one. Build the client with [`client_without_retry`].

use std::borrow::Cow;
use std::error::Error as StdError;
use std::sync::Arc;
use std::time::Duration;

use crate::object::{Object, describe_raw, raw_entry, without_position};
use crate::source::decode_thread::DecodeThread;
use crate::source::list_body::ListDecoder;
use futures_util::StreamExt;
use futures_util::io::AsyncBufReadExt as _;
use kube::api::{Api, ListParams, VersionMatch, WatchParams};
use kube::core::{ApiResource, Status};
use kube::{Client, Config};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::cache::listwatch::{
    ApiStatus, ListPage, ListRequest, ListerWatcher, ResourceTarget, ResourceVersionMatch,
    SourceError, WatchEvent, WatchRequest, WatchStream,
};

/// The annotation that marks the bookmark ending a streaming list's initial events.
pub const INITIAL_EVENTS_END_ANNOTATION: &str = "k8s.io/initial-events-end";

/// Builds a `kube::Client` from `config` with kube's built-in retry of 429/503/504 turned off
/// (`Config::default_retry = false`), so that every failure reaches the Reflector, which backs
/// off and relists as client-go does.
/// The client sets `TCP_NODELAY` on its sockets ([`connector`](super::connector)).
pub fn client_without_retry(mut config: Config) -> Result<Client, kube::Error> {
    config.default_retry = false;
    super::connector::client(config)
}

/// Lists and watches one resource through a `kube::Client`, optionally filtered by label and
/// field selectors. Build the client with [`client_without_retry`].
#[derive(Clone)]
pub struct KubeListerWatcher {
    api: Api<Object>,
    client: Client,
    target: ResourceTarget,
    label_selector: Option<String>,
    field_selector: Option<String>,
    metadata_only: bool,
    /// Whether list items are decoded without their managedFields.
    strip_managed_fields: bool,
    /// `--request-timeout`, when given: a list that times out at it fails for good.
    request_timeout: Option<Duration>,
}

impl std::fmt::Debug for KubeListerWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubeListerWatcher")
            .field("url", &self.api.resource_url())
            .field("label_selector", &self.label_selector)
            .field("field_selector", &self.field_selector)
            .field("metadata_only", &self.metadata_only)
            .finish()
    }
}

impl KubeListerWatcher {
    /// Lists and watches `resource` in `namespace`, or in all namespaces (and for cluster-scoped
    /// resources) with `None`.
    pub fn new(client: Client, resource: &ApiResource, namespace: Option<&str>) -> Self {
        let api = match namespace {
            Some(ns) => Api::namespaced_with(client.clone(), ns, resource),
            None => Api::all_with(client.clone(), resource),
        };
        KubeListerWatcher {
            api,
            client,
            target: ResourceTarget::new(resource.clone(), namespace.map(str::to_owned)),
            label_selector: None,
            field_selector: None,
            metadata_only: false,
            strip_managed_fields: false,
            request_timeout: None,
        }
    }

    /// The request timeout the client was built with (`--request-timeout`), so that a list it
    /// cuts short fails with a [`SourceError::Request`] naming it, which the Reflector does not
    /// retry: the same list takes as long again ([`settings_failure`]).
    pub fn request_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Lists and watches `PartialObjectMetadata` (`meta.k8s.io/v1`) instead of whole objects, as
    /// client-go's metadata informer does (`metadata.Client`'s `List` and `Watch` in
    /// client-go v0.28.7 `metadata/metadata.go`, through `metadatainformer`): the server sends
    /// each object's type meta and metadata only, for any resource including custom ones, so
    /// the cache holds a few hundred bytes per object. The objects keep the kind the server
    /// gives them, `PartialObjectMetadata`, as client-go's do.
    pub fn metadata_only(mut self, metadata_only: bool) -> Self {
        self.metadata_only = metadata_only;
        self
    }

    /// Drops the `metadata.managedFields` of a list's items on the thread that decodes them
    /// ([`ListDecoder::strip_managed_fields`](super::list_body::ListDecoder::strip_managed_fields)),
    /// for an informer whose transform would trim them: the transform then finds nothing left to
    /// do after the last byte. Watch events keep them: the transform trims those to their
    /// newest writers.
    pub fn strip_managed_fields(mut self, strip: bool) -> Self {
        self.strip_managed_fields = strip;
        self
    }

    /// Only objects matching this label selector (`app=web,tier!=db`).
    pub fn labels(mut self, selector: impl Into<String>) -> Self {
        self.label_selector = Some(selector.into()).filter(|s: &String| !s.is_empty());
        self
    }

    /// Only objects matching this field selector (`metadata.name=a`).
    pub fn fields(mut self, selector: impl Into<String>) -> Self {
        self.field_selector = Some(selector.into()).filter(|s: &String| !s.is_empty());
        self
    }

    fn list_request(&self, req: &ListRequest) -> Result<http::Request<Vec<u8>>, SourceError> {
        let mut lp = ListParams {
            label_selector: self.label_selector.clone(),
            field_selector: self.field_selector.clone(),
            limit: req.limit.filter(|l| *l > 0),
            continue_token: req.continue_token.clone(),
            ..ListParams::default()
        };
        // kube drops `resourceVersion=0` when a limit is set (the watch cache ignores the limit
        // then), which would silently turn client-go's "any cached state" list into a consistent
        // read from etcd. Send it as client-go does: the parameter is appended below.
        let append_rv0 =
            req.resource_version == "0" && lp.limit.is_some() && lp.continue_token.is_none();
        if !append_rv0 && !req.resource_version.is_empty() {
            lp.resource_version = Some(req.resource_version.clone());
            lp.version_match = req.resource_version_match.map(|m| match m {
                ResourceVersionMatch::Exact => VersionMatch::Exact,
                ResourceVersionMatch::NotOlderThan => VersionMatch::NotOlderThan,
            });
        }
        // kube's `list_metadata` is `list` with the Accept header asking for a
        // `PartialObjectMetadataList`.
        let request = kube::core::Request::new(self.api.resource_url());
        let mut http_req = if self.metadata_only {
            request.list_metadata(&lp)
        } else {
            request.list(&lp)
        }
        .map_err(|e| SourceError::Request(e.to_string()))?;
        if append_rv0 {
            let mut uri = http_req.uri().to_string();
            uri.push_str("&resourceVersion=0");
            if let Some(m) = req.resource_version_match {
                uri.push_str("&resourceVersionMatch=");
                uri.push_str(m.as_str());
            }
            *http_req.uri_mut() = uri
                .parse()
                .map_err(|e: http::uri::InvalidUri| SourceError::Request(e.to_string()))?;
        }
        Ok(http_req)
    }
}

impl ListerWatcher for KubeListerWatcher {
    async fn list(&self, req: &ListRequest) -> Result<ListPage, SourceError> {
        let http_req = self.list_request(req)?;
        // `Client::request` does the same, less the decoding: items are decoded from the page's
        // text as it arrives (`list_body`), on a thread of their own (`decode_thread`), each
        // without its managedFields when the informer would strip them.
        let decoder = ListDecoder::new().strip_managed_fields(self.strip_managed_fields);
        let mut decoding = DecodeThread::spawn(decoder);
        let read = read_body(&self.client, http_req, self.request_timeout, &mut decoding).await;
        // A failed read is the cause; what the decoder makes of the body it cut short is not.
        let decoded = decoding.finish().await;
        read?;
        decoded
    }

    async fn watch(&self, req: &WatchRequest) -> Result<WatchStream, SourceError> {
        let mut wp = WatchParams::default().timeout(req.timeout_seconds);
        wp.label_selector = self.label_selector.clone();
        wp.field_selector = self.field_selector.clone();
        wp.bookmarks = req.allow_bookmarks || req.send_initial_events;
        if req.send_initial_events {
            wp = wp.initial_events();
        }
        let request = kube::core::Request::new(self.api.resource_url());
        let mut http_req = if self.metadata_only {
            request.watch_metadata(&wp, &req.resource_version)
        } else {
            request.watch(&wp, &req.resource_version)
        }
        .map_err(|e| SourceError::Request(e.to_string()))?;
        // As `Api::watch` and `Client::request_events` do; the events are read here instead of
        // by kube, whose reader keeps serde_json's recursion limit (128 levels, below what the
        // API server serves: see `MAX_DEPTH`) and reads an undecodable event as an empty Status.
        http_req.extensions_mut().insert("watch");
        http_req.headers_mut().insert(
            http::header::ACCEPT_ENCODING,
            http::HeaderValue::from_static("identity"),
        );
        let body = self
            .client
            .request_stream(http_req)
            .await
            // A watch the server is slow to open is retried as client-go retries it (by a
            // relist, whose own timeout is final): only a refused certificate is final here.
            .map_err(|error| source_error(error, None))?;
        Ok(body
            .lines()
            .take_while(|line| {
                let ended = matches!(line, Err(error) if ended_cleanly(error));
                std::future::ready(!ended)
            })
            .filter_map(|line| {
                std::future::ready(match line {
                    Ok(line) => watch_event(&line).map(Ok),
                    Err(error) => Some(Err(SourceError::Stream(describe_chain(&error)))),
                })
            })
            .boxed())
    }

    fn describe(&self) -> ResourceTarget {
        self.target.clone()
    }
}

/// The response's body, read as `Client::request_text` reads it (error statuses included, as its
/// `handle_api_errors` makes them), each piece of a success handed to `decoding` as it arrives,
/// until the decoder stops at an error.
///
/// `request_text` holds every chunk until the last, then copies them into one buffer and that
/// into a `String`: three copies of the page at once, memory the allocator keeps for the process
/// rather than for the objects decoded next. Here the pieces go to the decoder as they arrive,
/// at most [`PIECES_IN_FLIGHT`](super::decode_thread::PIECES_IN_FLIGHT) of them waiting, so the
/// body never sits whole in memory.
async fn read_body(
    client: &Client,
    request: http::Request<Vec<u8>>,
    request_timeout: Option<Duration>,
    decoding: &mut DecodeThread,
) -> Result<(), SourceError> {
    use http_body_util::BodyExt as _;
    let to_source_error = |error| source_error(error, request_timeout);
    let response = client
        .send(request.map(kube::client::Body::from))
        .await
        .map_err(to_source_error)?;
    let code = response.status();
    let failed = code.is_client_error() || code.is_server_error();
    let mut error_body = Vec::new();
    let mut body = response.into_body();
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame.map_err(to_source_error)?.into_data() {
            if failed {
                error_body.extend_from_slice(&data);
            } else if !decoding.feed(data).await {
                // The decoder stopped at an error: the rest of the body cannot change it.
                return Ok(());
            }
        }
    }
    if failed {
        let text = String::from_utf8_lossy(&error_body);
        let status = serde_json::from_str::<Status>(&text).unwrap_or_else(|_| {
            Status::failure(text.trim(), "Failed to parse error data").with_code(code.as_u16())
        });
        return Err(SourceError::Api(api_status(&status)));
    }
    Ok(())
}

/// A line of a watch stream: `{"type": …, "object": …}`, the object left as text.
#[derive(Deserialize)]
struct WireEvent<'a> {
    #[serde(rename = "type", borrow)]
    type_: Cow<'a, str>,
    #[serde(borrow)]
    object: &'a RawValue,
}

/// The event of one line of a watch stream; `None` for a line to skip.
///
/// A line that is not an event, or whose object does not decode, ends the watch with an ERROR
/// event, as client-go's watch decoder (`StreamWatcher.receive` in apimachinery's
/// `pkg/watch/streamwatcher.go`) reports one: a 500 `InternalError` Status saying "unable to
/// decode an event from the watch stream", here with which object and what is wrong with it.
fn watch_event(line: &str) -> Option<WatchEvent> {
    if line.trim().is_empty() {
        return None;
    }
    let event = match serde_json::from_str::<WireEvent<'_>>(line) {
        Ok(event) => event,
        // The last line of a stream cut short: client-go ends the watch quietly there.
        Err(error) if error.is_eof() => return None,
        Err(error) => {
            let is_status = raw_entry(line, "kind").is_some_and(|kind| kind.get() == r#""Status""#);
            return Some(match serde_json::from_str::<Status>(line) {
                // A Status instead of an event: the server ended the stream with it.
                Ok(status) if is_status => WatchEvent::Error(api_status(&status)),
                _ => undecodable(&without_position(&error)),
            });
        }
    };
    let decoded = |kind: fn(Arc<Object>) -> WatchEvent| match Object::from_json(event.object) {
        Ok(obj) => kind(Arc::new(obj)),
        Err(error) => undecodable(&format!(
            "{} {}: {}",
            event.type_,
            describe_raw(event.object.get()),
            without_position(&error)
        )),
    };
    Some(match event.type_.as_ref() {
        "ADDED" => decoded(WatchEvent::Added),
        "MODIFIED" => decoded(WatchEvent::Modified),
        "DELETED" => decoded(WatchEvent::Deleted),
        "BOOKMARK" => decoded(|obj| WatchEvent::Bookmark {
            initial_events_end: obj
                .annotation(INITIAL_EVENTS_END_ANNOTATION)
                .is_some_and(|v| v == "true"),
            resource_version: obj.resource_version().unwrap_or_default().to_owned(),
        }),
        "ERROR" => match serde_json::from_str::<Status>(event.object.get()) {
            Ok(status) => WatchEvent::Error(api_status(&status)),
            Err(error) => undecodable(&format!("ERROR: {}", without_position(&error))),
        },
        other => undecodable(&format!("unknown event type {other:?}")),
    })
}

/// The ERROR event client-go's `StreamWatcher.receive` makes of an event it cannot decode (an
/// `errors.NewInternalError`, whose message starts "Internal error occurred: "), so that the
/// Reflector backs off and relists.
fn undecodable(why: &str) -> WatchEvent {
    WatchEvent::Error(ApiStatus {
        code: 500,
        reason: "InternalError".to_owned(),
        message: format!(
            "Internal error occurred: unable to decode an event from the watch stream: {why}"
        ),
        causes: Vec::new(),
    })
}

/// Whether a failed read of a watch stream is its end rather than a break: a chunked body cut
/// short (as servers end long watches) or a client timeout. The same classification as kube's
/// own watch reader (`Client::request_events`).
fn ended_cleanly(error: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    if matches!(error.kind(), ErrorKind::UnexpectedEof | ErrorKind::TimedOut) {
        return true;
    }
    let Some(inner) = error.get_ref() else {
        return false;
    };
    let inner: &(dyn StdError + 'static) = inner;
    let mut cause = Some(inner);
    // Bounded, in case a `source` cycles.
    for _ in 0..16 {
        let Some(e) = cause else { break };
        if e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == ErrorKind::UnexpectedEof)
        {
            return true;
        }
        cause = e.source();
    }
    inner.to_string().contains("unexpected EOF during chunk")
}

fn api_status(status: &Status) -> ApiStatus {
    ApiStatus {
        code: status.code,
        reason: status.reason.clone(),
        message: status.message.clone(),
        causes: status
            .details
            .iter()
            .flat_map(|d| &d.causes)
            .map(|c| c.reason.clone())
            .collect(),
    }
}

/// Maps an error of a request (before any response body was streamed) to a [`SourceError`].
/// A failure that the client's own settings make certain to happen again ([`settings_failure`])
/// is a [`SourceError::Request`], which no Reflector retries.
fn source_error(error: kube::Error, request_timeout: Option<Duration>) -> SourceError {
    if let Some(why) = settings_failure(&error, request_timeout) {
        return SourceError::Request(format!("{why}: {}", describe_chain(&error)));
    }
    match error {
        kube::Error::Api(status) => SourceError::Api(api_status(&status)),
        kube::Error::SerdeError(e) => SourceError::Stream(format!("undecodable response: {e}")),
        kube::Error::FromUtf8(e) => SourceError::Stream(format!("undecodable response: {e}")),
        // Client-side failures that retrying the same request will not fix: a request kube cannot
        // build, credentials that cannot be obtained (a failing exec plugin, an unreadable token).
        e @ (kube::Error::BuildRequest(_) | kube::Error::Auth(_)) => {
            SourceError::Request(describe_chain(&e))
        }
        // Everything else happened on the way to the server: refused, reset, timed out, TLS.
        other => SourceError::Connect(describe_chain(&other)),
    }
}

/// Why every request with this client's settings fails the same way, when that is the cause of
/// `error`: a server certificate the client refuses (with the flag that fixes each refusal:
/// kubectl says `x509: certificate signed by unknown authority` and leaves the flag to the user),
/// or no answer within `request_timeout` (`--request-timeout`; kube's own connect timeout, with
/// none given, may be a network's passing trouble). Asking again with the same settings cannot
/// succeed: the same certificate is refused, the same list takes as long. `None` for any other
/// failure.
pub fn settings_failure(
    error: &(dyn StdError + 'static),
    request_timeout: Option<Duration>,
) -> Option<String> {
    use rustls::CertificateError;
    let mut cause = Some(error);
    while let Some(e) = cause {
        if let Some(rustls::Error::InvalidCertificate(refused)) = e.downcast_ref::<rustls::Error>()
        {
            let why = match refused {
                CertificateError::UnknownIssuer => {
                    "the server's certificate is signed by an authority this client does not \
                     trust: give that CA with --certificate-authority (or the kubeconfig's \
                     certificate-authority), or skip the check with --insecure-skip-tls-verify"
                }
                CertificateError::NotValidForName
                | CertificateError::NotValidForNameContext { .. } => {
                    "the server's certificate is not issued for the host in the server's URL: \
                     --tls-server-name NAME checks it against the name it was issued for"
                }
                CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                    "the server's certificate has expired"
                }
                _ => return Some(format!("the server's certificate is refused: {refused}")),
            };
            return Some(why.to_owned());
        }
        let io = e.downcast_ref::<std::io::Error>();
        // The client's timers (hyper-timeout) fail with `TimedOut` and no OS error; the
        // system's own connect timeout carries one (ETIMEDOUT).
        if let (Some(io), Some(timeout)) = (io, request_timeout)
            && io.kind() == std::io::ErrorKind::TimedOut
            && io.raw_os_error().is_none()
        {
            return Some(format!(
                "no answer within --request-timeout {timeout:?}, and it would take as long \
                 again: give it more time (--request-timeout 1m) or none (--request-timeout 0)"
            ));
        }
        // The connector's rustls error travels inside `io::Error`s (nested), whose `source`
        // skips the error they wrap.
        cause = match io {
            Some(io) => io.get_ref().map(|inner| inner as &(dyn StdError + 'static)),
            None => e.source(),
        };
    }
    None
}

/// The error and its causes on one line: kube's top-level messages ("ServiceError: …") alone
/// rarely say what happened.
fn describe_chain(error: &(dyn StdError + 'static)) -> String {
    let mut text = error.to_string();
    let mut cur = error.source();
    while let Some(e) = cur {
        let part = e.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        cur = e.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lw() -> KubeListerWatcher {
        let config = Config::new("http://127.0.0.1:1".parse().expect("url"));
        let client = client_without_retry(config).expect("client");
        let ar = ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&());
        KubeListerWatcher::new(client, &ar, Some("default")).labels("app=web")
    }

    #[tokio::test]
    async fn sends_resource_version_zero_with_a_limit() {
        let req = lw()
            .list_request(&ListRequest {
                resource_version: "0".into(),
                limit: Some(500),
                ..ListRequest::default()
            })
            .expect("request");
        let uri = req.uri().to_string();
        assert!(uri.contains("limit=500"), "{uri}");
        assert!(uri.contains("resourceVersion=0"), "{uri}");
        assert!(uri.contains("labelSelector=app%3Dweb"), "{uri}");
    }

    #[tokio::test]
    async fn continue_token_omits_the_resource_version() {
        let req = lw()
            .list_request(&ListRequest {
                resource_version: "0".into(),
                limit: Some(2),
                continue_token: Some("abc".into()),
                ..ListRequest::default()
            })
            .expect("request");
        let uri = req.uri().to_string();
        assert!(uri.contains("continue=abc"), "{uri}");
        assert!(!uri.contains("resourceVersion"), "{uri}");
    }

    /// The ERROR event's Status, for lines that give one.
    fn error_of(line: &str) -> ApiStatus {
        match watch_event(line) {
            Some(WatchEvent::Error(status)) => status,
            other => panic!("not an ERROR event: {other:?}"),
        }
    }

    #[test]
    fn watch_lines_decode_at_any_depth_the_api_server_serves() {
        let deep = format!("{}1{}", "[".repeat(300), "]".repeat(300));
        let line = format!(
            r#"{{"type":"ADDED","object":{{"metadata":{{"name":"a","namespace":"ns"}},"spec":{deep}}}}}"#
        );
        let Some(WatchEvent::Added(obj)) = watch_event(&line) else {
            panic!("not an ADDED event")
        };
        assert_eq!(obj.field("spec").unwrap().get(), deep);
        let bookmark = r#"{"type":"BOOKMARK","object":{"kind":"ConfigMap","metadata":{"resourceVersion":"12","annotations":{"k8s.io/initial-events-end":"true"}}}}"#;
        assert!(matches!(
            watch_event(bookmark),
            Some(WatchEvent::Bookmark { resource_version, initial_events_end: true }) if resource_version == "12"
        ));
    }

    #[test]
    fn undecodable_watch_lines_are_error_events_that_say_what_is_wrong() {
        let deep = format!("{}1{}", "[".repeat(20_000), "]".repeat(20_000));
        let line = format!(
            r#"{{"type":"MODIFIED","object":{{"metadata":{{"name":"a","namespace":"ns"}},"spec":{deep}}}}}"#
        );
        let status = error_of(&line);
        assert_eq!(
            (status.code, status.reason.as_str()),
            (500, "InternalError")
        );
        assert_eq!(
            status.message,
            "Internal error occurred: unable to decode an event from the watch stream: MODIFIED \
             \"ns/a\": spec is nested deeper than 10000 levels, which the API server never serves"
        );
        // Not an event, and not a Status either: never an empty Status.
        let status = error_of(r#"{"kind":"Widget","spec":{}}"#);
        assert_eq!(status.code, 500);
        assert!(status.message.contains("missing field `type`"), "{status}");
        assert!(
            error_of(r#"{"type":"UPSERTED","object":{}}"#)
                .message
                .contains(r#"unknown event type "UPSERTED""#)
        );
        // A Status line: the server ended the watch with it.
        let status = error_of(
            r#"{"kind":"Status","apiVersion":"v1","status":"Failure","code":410,"reason":"Expired","message":"too old"}"#,
        );
        assert_eq!((status.code, status.message.as_str()), (410, "too old"));
        // The rest of a line cut short, and blank lines: nothing.
        assert!(watch_event(r#"{"type":"ADDED","object":{"meta"#).is_none());
        assert!(watch_event("").is_none());
    }

    #[tokio::test]
    async fn refused_connection_is_a_connect_error() {
        let err = lw()
            .list(&ListRequest::default())
            .await
            .expect_err("nothing listens on port 1");
        assert!(err.is_connect(), "{err:?}");
        assert!(err.is_retryable());
    }

    /// A loopback server answering every request with `status`, `content_type` and `body`, sent
    /// in small chunks of unannounced length (`Transfer-Encoding: chunked`).
    async fn chunked_server(
        status: u16,
        content_type: &'static str,
        body: impl Into<Vec<u8>>,
    ) -> Client {
        let body: Vec<u8> = body.into();
        use http_body_util::StreamBody;
        use hyper::body::Frame;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let body = body.clone();
                let service = hyper::service::service_fn(move |_| {
                    let chunks: Vec<Result<Frame<bytes::Bytes>, std::convert::Infallible>> = body
                        .chunks(7)
                        .map(|c| Ok(Frame::data(bytes::Bytes::copy_from_slice(c))))
                        .collect();
                    async move {
                        hyper::Response::builder()
                            .status(status)
                            .header("content-type", content_type)
                            .body(StreamBody::new(futures_util::stream::iter(chunks)))
                    }
                });
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service),
                );
            }
        });
        client_without_retry(Config::new(url.parse().unwrap())).unwrap()
    }

    fn configmaps(client: Client) -> KubeListerWatcher {
        let ar = ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&());
        KubeListerWatcher::new(client, &ar, Some("default"))
    }

    #[tokio::test]
    async fn a_list_of_unannounced_length_is_read_whole() {
        let items: Vec<String> = (0..50)
            .map(|i| format!(r#"{{"metadata":{{"name":"cm-{i}","namespace":"default","resourceVersion":"{i}"}},"data":{{"k":"é{i}"}}}}"#))
            .collect();
        let body = format!(
            r#"{{"kind":"ConfigMapList","apiVersion":"v1","metadata":{{"resourceVersion":"77"}},"items":[{}]}}"#,
            items.join(",")
        );
        let lw = configmaps(chunked_server(200, "application/json", body).await);
        let page = lw.list(&ListRequest::default()).await.unwrap();
        assert_eq!(page.items.len(), 50);
        assert_eq!(page.resource_version, "77");
        assert_eq!(page.items[49].name(), Some("cm-49"));
    }

    #[tokio::test]
    async fn error_statuses_read_as_kube_reads_them() {
        let status = r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps is forbidden","reason":"Forbidden","code":403}"#;
        let lw = configmaps(chunked_server(403, "application/json", status).await);
        let SourceError::Api(api) = lw.list(&ListRequest::default()).await.unwrap_err() else {
            panic!("not an API error");
        };
        assert_eq!((api.code, api.reason.as_str()), (403, "Forbidden"));
        assert_eq!(api.message, "configmaps is forbidden");

        // A proxy's page instead of a Status: its text, with the HTTP code.
        let lw = configmaps(chunked_server(502, "text/html", "<h1>Bad gateway</h1>\n").await);
        let SourceError::Api(api) = lw.list(&ListRequest::default()).await.unwrap_err() else {
            panic!("not an API error");
        };
        assert_eq!(api.code, 502);
        assert_eq!(api.message, "<h1>Bad gateway</h1>");
    }

    #[tokio::test]
    async fn an_undecodable_list_says_which_item_or_where_the_list_breaks() {
        let error_of = |body: &str| {
            let body = body.to_owned();
            async move {
                let lw = configmaps(chunked_server(200, "application/json", body).await);
                match lw.list(&ListRequest::default()).await {
                    Err(SourceError::Stream(why)) => why,
                    other => panic!("not a stream error: {other:?}"),
                }
            }
        };
        // Which item, named, and what is wrong with it, whichever piece it arrived in.
        let why = error_of(
            r#"{"metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b","labels":{"n":1}}}]}"#,
        )
        .await;
        assert!(
            why.starts_with(r#"undecodable response: item 2 of the list, "b": in metadata"#),
            "{why}"
        );
        // A body cut short: the list never ended.
        let why = error_of(r#"{"metadata":{"resourceVersion":"7"},"items":[{"metadata":{"#).await;
        assert_eq!(
            why,
            "undecodable response: the body ended before the list did at byte 58 of the list"
        );
        // Text that is not UTF-8, in a member nothing reads.
        let lw = configmaps(
            chunked_server(
                200,
                "application/json",
                b"{\"kind\":\"\xff\",\"items\":[]}".to_vec(),
            )
            .await,
        );
        assert!(
            matches!(lw.list(&ListRequest::default()).await, Err(SourceError::Stream(why)) if why.contains("invalid utf-8")),
        );
        // The list's own metadata.
        let why = error_of(r#"{"metadata":{"resourceVersion":7},"items":[]}"#).await;
        assert_eq!(
            why,
            "undecodable response: invalid type: integer `7`, expected a string"
        );
    }
}
