//! [`KubeListerWatcher`]: the [`ListerWatcher`] of a live cluster, on `kube::Api<Object>`.
//!
//! ## The client must not retry
//! kube's default `Client` retries `429`, `503` and `504` internally (`Config::default_retry`,
//! up to 15 times with backoff of up to 1000 s, honouring `Retry-After`). The Reflector owns the
//! retry policy (client-go's backoff, relists), and a retry hidden inside the client would make a
//! throttled list look like a slow one. Build the client with [`client_without_retry`].

use std::error::Error as StdError;
use std::sync::Arc;

use crate::object::{FromJson, Object};
use futures_util::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use kube::api::{Api, ListParams, VersionMatch, WatchParams};
use kube::core::{ApiResource, Status};
use kube::{Client, Config};
use serde::Deserialize;

use crate::cache::listwatch::{
    ApiStatus, ListPage, ListRequest, ListerWatcher, ResourceTarget, ResourceVersionMatch,
    SourceError, WatchEvent, WatchRequest, WatchStream,
};

/// The annotation that marks the bookmark ending a streaming list's initial events.
pub const INITIAL_EVENTS_END_ANNOTATION: &str = "k8s.io/initial-events-end";

/// Builds a `kube::Client` from `config` with kube's built-in retry of 429/503/504 turned off
/// (`Config::default_retry = false`), so that every failure reaches the Reflector, which backs
/// off and relists as client-go does.
pub fn client_without_retry(mut config: Config) -> Result<Client, kube::Error> {
    config.default_retry = false;
    Client::try_from(config)
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
}

impl std::fmt::Debug for KubeListerWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubeListerWatcher")
            .field("url", &self.api.resource_url())
            .field("label_selector", &self.label_selector)
            .field("field_selector", &self.field_selector)
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
        }
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
        let mut http_req = kube::core::Request::new(self.api.resource_url())
            .list(&lp)
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
        // `Client::request` does the same, less `FromJson`: items are read from the page's text.
        let body = read_body(&self.client, http_req).await?;
        let text = std::str::from_utf8(&body)
            .map_err(|e| SourceError::Stream(format!("undecodable response: {e}")))?;
        let list: ListBody = serde_json::from_str(text)
            .map_err(|e| SourceError::Stream(format!("undecodable response: {e}")))?;
        Ok(ListPage {
            items: list
                .items
                .into_iter()
                .flatten()
                .map(|item| item.0)
                .collect(),
            resource_version: list.metadata.resource_version.unwrap_or_default(),
            continue_token: list.metadata.continue_.filter(|c| !c.is_empty()),
            remaining_item_count: list.metadata.remaining_item_count,
        })
    }

    async fn watch(&self, req: &WatchRequest) -> Result<WatchStream, SourceError> {
        let mut wp = WatchParams::default().timeout(req.timeout_seconds);
        wp.label_selector = self.label_selector.clone();
        wp.field_selector = self.field_selector.clone();
        wp.bookmarks = req.allow_bookmarks || req.send_initial_events;
        if req.send_initial_events {
            wp = wp.initial_events();
        }
        let stream = self
            .api
            .watch(&wp, &req.resource_version)
            .await
            .map_err(source_error)?;
        Ok(stream
            .map(|item| match item {
                Ok(event) => Ok(watch_event(event)),
                // A Status line that is not a watch event: the server ended the stream with it.
                Err(kube::Error::Api(status)) => Ok(WatchEvent::Error(api_status(&status))),
                Err(e) => stream_error(e),
            })
            .boxed())
    }

    fn describe(&self) -> ResourceTarget {
        self.target.clone()
    }
}

/// The response's body, read as `Client::request_text` reads it (error statuses included, as its
/// `handle_api_errors` makes them), with one copy instead of three.
///
/// `request_text` holds every chunk until the last, copies them into one buffer, then that buffer
/// into a `String`: a 7.5 MiB list page took 22.5 MiB, which jemalloc does not hand back in the
/// lifetime of a short command, nor reuse for the objects decoded next (docs/benchmarks.md). Here
/// each chunk is appended to the body as it arrives and dropped, so that hyper reuses its read
/// buffer, into a buffer of the announced `Content-Length`; a body of unknown length (chunked)
/// grows by doubling.
async fn read_body(
    client: &Client,
    request: http::Request<Vec<u8>>,
) -> Result<Vec<u8>, SourceError> {
    use http_body_util::BodyExt as _;
    let response = client
        .send(request.map(kube::client::Body::from))
        .await
        .map_err(source_error)?;
    let code = response.status();
    let announced = response
        .headers()
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<usize>().ok())
        .unwrap_or(0);
    // A length the server announces is trusted up to a size no list page reaches.
    let mut bytes = Vec::with_capacity(announced.min(1 << 30));
    let mut body = response.into_body();
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame.map_err(source_error)?.into_data() {
            bytes.extend_from_slice(&data);
        }
    }
    if code.is_client_error() || code.is_server_error() {
        let text = String::from_utf8_lossy(&bytes);
        let status = serde_json::from_str::<Status>(&text).unwrap_or_else(|_| {
            Status::failure(text.trim(), "Failed to parse error data").with_code(code.as_u16())
        });
        return Err(SourceError::Api(api_status(&status)));
    }
    Ok(bytes)
}

/// A list page: `kube::api::ObjectList`'s fields that a list uses.
#[derive(Deserialize)]
struct ListBody {
    #[serde(default)]
    metadata: ListMeta,
    /// `null` for an empty list, from some servers.
    #[serde(default)]
    items: Option<Vec<FromJson>>,
}

fn watch_event(event: kube::api::WatchEvent<Object>) -> WatchEvent {
    use kube::api::WatchEvent as K;
    match event {
        K::Added(obj) => WatchEvent::Added(Arc::new(obj)),
        K::Modified(obj) => WatchEvent::Modified(Arc::new(obj)),
        K::Deleted(obj) => WatchEvent::Deleted(Arc::new(obj)),
        K::Bookmark(bookmark) => WatchEvent::Bookmark {
            initial_events_end: bookmark
                .metadata
                .annotations
                .get(INITIAL_EVENTS_END_ANNOTATION)
                .is_some_and(|v| v == "true"),
            resource_version: bookmark.metadata.resource_version,
        },
        K::Error(status) => WatchEvent::Error(api_status(&status)),
    }
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
fn source_error(error: kube::Error) -> SourceError {
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

/// Maps an error raised while reading an open watch to what client-go's `StreamWatcher.receive`
/// makes of it: a line that cannot be decoded becomes an ERROR event with an `InternalError`
/// Status (`errors.NewInternalError`), so that the Reflector backs off and relists; a broken
/// connection just ends the stream (an error here), and the Reflector watches again.
fn stream_error(error: kube::Error) -> Result<WatchEvent, SourceError> {
    match error {
        kube::Error::SerdeError(e) => Ok(WatchEvent::Error(ApiStatus {
            code: 500,
            reason: "InternalError".into(),
            message: format!(
                "Internal error occurred: unable to decode an event from the watch stream: {e}"
            ),
            causes: Vec::new(),
        })),
        other => Err(SourceError::Stream(describe_chain(&other))),
    }
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
    async fn chunked_server(status: u16, content_type: &'static str, body: String) -> Client {
        use http_body_util::StreamBody;
        use hyper::body::Frame;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let body = body.clone();
                let service = hyper::service::service_fn(move |_| {
                    let chunks: Vec<Result<Frame<bytes::Bytes>, std::convert::Infallible>> = body
                        .as_bytes()
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
        let lw = configmaps(chunked_server(403, "application/json", status.into()).await);
        let SourceError::Api(api) = lw.list(&ListRequest::default()).await.unwrap_err() else {
            panic!("not an API error");
        };
        assert_eq!((api.code, api.reason.as_str()), (403, "Forbidden"));
        assert_eq!(api.message, "configmaps is forbidden");

        // A proxy's page instead of a Status: its text, with the HTTP code.
        let lw =
            configmaps(chunked_server(502, "text/html", "<h1>Bad gateway</h1>\n".into()).await);
        let SourceError::Api(api) = lw.list(&ListRequest::default()).await.unwrap_err() else {
            panic!("not an API error");
        };
        assert_eq!(api.code, 502);
        assert_eq!(api.message, "<h1>Bad gateway</h1>");
    }
}
