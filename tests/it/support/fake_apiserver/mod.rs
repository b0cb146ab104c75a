//! An in-process fake Kubernetes API server for tests.
//!
//! It speaks the wire protocol of kube-apiserver v1.28 closely enough for `kube::Client` and for
//! raw HTTP clients: legacy and aggregated discovery, paged lists with real continue tokens,
//! chunked watch streams with bookmarks, `410 Gone` after compaction, the 1.28 answer to
//! `sendInitialEvents` (and, on request, the WatchList behaviour of later versions, and 1.33's list
//! encoded item by item as it is sent: [`FakeApiServer::set_collection_encoding`]), plus
//! injectable faults. Response shapes are copied from `tests/fixtures/apiserver-v1.28.7/`. It
//! serves plain HTTP, or TLS with test certificates ([`FakeApiServer::start_tls`], [`tls`]).
//!
//! resourceVersion semantics follow the real server's split between etcd (a history of every
//! revision, compacted by [`FakeApiServer::compact`]) and the watch cache in front of it:
//!
//! | request | answered from |
//! | --- | --- |
//! | list `resourceVersion=0` | the watch cache's current state; `limit` ignored |
//! | list at a resourceVersion, no `limit` (or `resourceVersionMatch=NotOlderThan`) | the watch cache's current state (waiting for a newer resourceVersion, 504 if it never comes) |
//! | list at a resourceVersion with a `limit`, or `resourceVersionMatch=Exact` | etcd at exactly that revision (410 once compacted) |
//! | list `resourceVersion=""` | etcd, the newest revision, paged |
//! | watch from a resourceVersion | the watch cache's history; 410 ERROR event when it is older than the cache ([`FakeApiServer::restart`] rebuilds the cache at the current revision) or compacted |
//!
//! ```ignore
//! let server = FakeApiServer::start().await;
//! server.create("configmaps", json!({"metadata": {"name": "a", "namespace": "default"}}));
//! let api: Api<DynamicObject> = Api::namespaced_with(server.client(), "default", &ar);
//! ```

mod collection;
mod handler;
mod json;
mod partial;
mod resources;
mod selectors;
mod store;
pub mod tls;
mod watch;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::watch as signal;
use tokio::task::JoinHandle;

pub use collection::CollectionEncoding;
pub use resources::ResourceDef;

use store::Store;

/// What a request does, for matching faults and reading the request log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    /// `GET` of a single object.
    Get,
    List,
    Watch,
    /// `/api`, `/apis`, their group/version documents and `/version`.
    Discovery,
    /// Matches every request (only meaningful in a [`Fault`]).
    Any,
}

/// What an injected fault does to the request it matches.
#[derive(Clone, Debug)]
pub enum FaultAction {
    /// Answer with this HTTP status and the real server's Status body for it: 401 and 403 as in
    /// the fixtures (403 names the request's verb, resource and namespace), 404, 410 (for a
    /// watch: HTTP 200 with an ERROR event, as the real server does), 429 (`Retry-After: 1`),
    /// 500 `InternalError`, 503, 504; other codes get a generic Status.
    Status(u16),
    /// 429 `TooManyRequests` with this `Retry-After` (seconds), also in `details.retryAfterSeconds`.
    TooManyRequests { retry_after_secs: u64 },
    /// Any Status body.
    CustomStatus {
        code: u16,
        reason: String,
        message: String,
    },
    /// Hold the request this long, then serve it normally.
    Delay(Duration),
    /// Serve the watch, but after this many events (bookmarks included) drop the connection
    /// abruptly: no terminating chunk, so the client sees a truncated body.
    DropWatchAfter(usize),
    /// Serve the watch, but after this many events (bookmarks included) send a line that is not
    /// a watch event (as a mangling proxy would), then carry on.
    GarbleWatchAfter(usize),
}

/// A fault applied to the next `times` requests matching `verb` (and `resource`, if given).
#[derive(Clone, Debug)]
pub struct Fault {
    pub verb: Verb,
    /// A resource name as [`FakeApiServer::create`] takes it; `None` matches every resource.
    pub resource: Option<String>,
    pub action: FaultAction,
    pub times: usize,
}

impl Fault {
    pub fn new(action: FaultAction) -> Self {
        Self {
            verb: Verb::Any,
            resource: None,
            action,
            times: 1,
        }
    }

    pub fn status(code: u16) -> Self {
        Self::new(FaultAction::Status(code))
    }

    pub fn too_many_requests(retry_after_secs: u64) -> Self {
        Self::new(FaultAction::TooManyRequests { retry_after_secs })
    }

    pub fn custom_status(code: u16, reason: &str, message: &str) -> Self {
        Self::new(FaultAction::CustomStatus {
            code,
            reason: reason.into(),
            message: message.into(),
        })
    }

    pub fn delay(d: Duration) -> Self {
        Self::new(FaultAction::Delay(d))
    }

    /// Only meaningful for watches, so it matches [`Verb::Watch`].
    pub fn drop_watch_after(events: usize) -> Self {
        Self::new(FaultAction::DropWatchAfter(events)).on(Verb::Watch)
    }

    /// Only meaningful for watches, so it matches [`Verb::Watch`].
    pub fn garble_watch_after(events: usize) -> Self {
        Self::new(FaultAction::GarbleWatchAfter(events)).on(Verb::Watch)
    }

    pub fn on(mut self, verb: Verb) -> Self {
        self.verb = verb;
        self
    }

    pub fn for_resource(mut self, resource: &str) -> Self {
        self.resource = Some(resource.into());
        self
    }

    pub fn times(mut self, n: usize) -> Self {
        self.times = n;
        self
    }
}

/// One request as the server received it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    pub path: String,
    /// Percent-decoded query parameters (the last one wins for repeated names).
    pub query: BTreeMap<String, String>,
    pub verb: Verb,
    /// The resource id (`configmaps`, `deployments.apps`) for resource requests.
    pub resource: Option<String>,
    /// The `Accept` header, empty when absent.
    pub accept: String,
    /// The headers that say who is asking (`authorization`, `impersonate-*`), names in lower
    /// case, in the order sent.
    pub identity: Vec<(String, String)>,
    /// Over TLS, the connection presented a client certificate the test CA signed.
    pub client_certificate: bool,
}

/// Put into each request's extensions by a TLS connection: whether the client presented a
/// (verified) certificate.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ClientCertificate(pub bool);

impl Request {
    pub fn is_watch(&self) -> bool {
        self.verb == Verb::Watch
    }

    pub fn is_list(&self) -> bool {
        self.verb == Verb::List
    }

    pub fn param(&self, name: &str) -> Option<&str> {
        self.query.get(name).map(String::as_str)
    }

    /// Every value of the identity header `name` (lower case).
    pub fn identity_header(&self, name: &str) -> Vec<&str> {
        self.identity
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }
}

/// The user named in 403 messages, as in the captured fixture, unless the request impersonates
/// another (`Impersonate-User`), whom kube-apiserver's authorizer then names.
pub const FORBIDDEN_USER: &str = "nobody";
/// The bearer token written into the kubeconfig (the server accepts any credentials).
pub const TOKEN: &str = "fake-token";

pub(crate) struct Knobs {
    pub watch_list_supported: bool,
    /// Whether `/api` and `/apis` answer aggregated discovery when asked for it.
    pub aggregated_discovery: bool,
    pub bookmark_interval: Duration,
    pub refuse_until: Option<Instant>,
    /// Between [`FakeApiServer::stop`] and [`FakeApiServer::restart`]: every connection is closed
    /// as soon as it is accepted.
    pub down: bool,
    /// Lists encoded whole before their first byte, or item by item as they are sent.
    pub collection_encoding: CollectionEncoding,
}

/// State shared by the accept loop, connection tasks and watch streams.
pub(crate) struct Inner {
    pub store: Mutex<Store>,
    pub knobs: Mutex<Knobs>,
    pub faults: Mutex<Vec<Fault>>,
    pub requests: Mutex<Vec<Request>>,
    pub addr: SocketAddr,
    /// Serving TLS: how connections are accepted.
    pub tls: Option<tokio_rustls::TlsAcceptor>,
    /// Carries the latest resourceVersion; watch streams wake on it instead of polling.
    pub rv_tx: signal::Sender<u64>,
    /// Bumped by `close_watches`: open watch streams end cleanly.
    pub close_tx: signal::Sender<u64>,
    /// Bumped to cut every open connection abruptly.
    pub kill_tx: signal::Sender<u64>,
    /// Set once when the server is dropped.
    pub shutdown_tx: signal::Sender<bool>,
}

/// Locks ignoring poison: a panicking test thread must not turn every later request into a
/// second, confusing panic.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Inner {
    pub(crate) fn store(&self) -> MutexGuard<'_, Store> {
        lock(&self.store)
    }

    /// Takes the first fault matching this request, if any.
    pub(crate) fn take_fault(&self, verb: Verb, resource: Option<&str>) -> Option<FaultAction> {
        let mut faults = lock(&self.faults);
        let idx = faults.iter().position(|f| {
            (f.verb == Verb::Any || f.verb == verb)
                && f.resource.as_deref().is_none_or(|r| Some(r) == resource)
                && f.times > 0
        })?;
        let action = faults[idx].action.clone();
        faults[idx].times -= 1;
        if faults[idx].times == 0 {
            faults.remove(idx);
        }
        Some(action)
    }
}

/// The fake API server. Serves on 127.0.0.1 until dropped.
pub struct FakeApiServer {
    inner: Arc<Inner>,
    accept_task: JoinHandle<()>,
}

impl FakeApiServer {
    /// Binds an ephemeral loopback port and starts serving the default resources.
    pub async fn start() -> Self {
        Self::start_with(None).await
    }

    /// [`start`](Self::start), over TLS with `certificate` (see [`tls`]); [`url`](Self::url)
    /// is then `https://`.
    pub async fn start_tls(certificate: tls::ServerCertificate) -> Self {
        Self::start_with(Some(tls::acceptor(certificate))).await
    }

    async fn start_with(tls: Option<tokio_rustls::TlsAcceptor>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("fake apiserver: bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let inner = Arc::new(Inner {
            store: Mutex::new(Store::new(resources::defaults())),
            knobs: Mutex::new(Knobs {
                watch_list_supported: false,
                aggregated_discovery: true,
                // The real cacher's bookmark frequency.
                bookmark_interval: Duration::from_secs(60),
                refuse_until: None,
                down: false,
                collection_encoding: CollectionEncoding::Whole,
            }),
            faults: Mutex::new(Vec::new()),
            requests: Mutex::new(Vec::new()),
            addr,
            tls,
            rv_tx: signal::Sender::new(store::INITIAL_RV),
            close_tx: signal::Sender::new(0),
            kill_tx: signal::Sender::new(0),
            shutdown_tx: signal::Sender::new(false),
        });
        let accept_task = tokio::spawn(accept_loop(inner.clone(), listener));
        Self { inner, accept_task }
    }

    /// `http://127.0.0.1:<port>`, or `https://` over TLS.
    pub fn url(&self) -> String {
        let scheme = if self.inner.tls.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", self.inner.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.inner.addr
    }

    /// A `kube::Client` for this server (plain HTTP, default namespace `default`).
    pub fn client(&self) -> kube::Client {
        let config = kube::Config::new(self.url().parse().expect("server url"));
        kube::Client::try_from(config).expect("fake apiserver: build kube client")
    }

    /// Writes `<dir>/kubeconfig` with a single context `fake` (namespace `default`, a bearer
    /// token) pointing at this server, for running the binary with `--kubeconfig`.
    pub fn write_kubeconfig(&self, dir: &Path) -> PathBuf {
        let path = dir.join("kubeconfig");
        let text = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: {url}\n\
             contexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\n    namespace: default\n\
             current-context: fake\nusers:\n- name: fake\n  user:\n    token: {TOKEN}\n",
            url = self.url()
        );
        std::fs::write(&path, text).expect("fake apiserver: write kubeconfig");
        path
    }

    /// Serves another resource (discovery included). Replaces a definition with the same id and
    /// version.
    pub fn register(&self, def: ResourceDef) {
        self.inner.store().register(def);
    }

    /// Stops serving `id` (`widgets.example.com`) at `version`, as deleting its CRD (or dropping
    /// that version from it) does: discovery no longer lists it and its URLs answer 404. Its
    /// objects stay, for another version registered with the same id.
    pub fn unregister(&self, id: &str, version: &str) {
        self.inner.store().unregister(id, version);
    }

    fn mutate(&self, f: impl FnOnce(&mut Store) -> u64) -> u64 {
        let rv = f(&mut self.inner.store());
        self.inner.rv_tx.send_replace(rv);
        rv
    }

    /// Creates an object (ADDED) and returns its resourceVersion. `kind`, `apiVersion`, `uid`,
    /// `creationTimestamp` and `resourceVersion` are filled in; a namespaced object without
    /// `metadata.namespace` goes to `default`. Panics if it already exists.
    pub fn create(&self, resource: &str, object: Value) -> u64 {
        self.mutate(|s| {
            let def = s.resolve_or_panic(resource);
            s.create(&def, object)
        })
    }

    /// Creates an object that the watch cache misses: lists have it, no watch ever delivers its
    /// ADDED (a bookmark moves past it). The drift a consistency check exists to find.
    pub fn create_unwatched(&self, resource: &str, object: Value) -> u64 {
        self.mutate(|s| {
            let def = s.resolve_or_panic(resource);
            let rv = s.create(&def, object);
            s.unwatch_last();
            rv
        })
    }

    /// Replaces an existing object (MODIFIED), keeping its uid and creationTimestamp.
    pub fn update(&self, resource: &str, object: Value) -> u64 {
        self.mutate(|s| {
            let def = s.resolve_or_panic(resource);
            s.update(&def, object)
        })
    }

    /// Deletes an object (DELETED); `namespace` is ignored for cluster-scoped resources.
    pub fn delete(&self, resource: &str, namespace: &str, name: &str) -> u64 {
        self.mutate(|s| {
            let def = s.resolve_or_panic(resource);
            s.delete(&def, namespace, name)
        })
    }

    /// The current object, as served (with `kind`/`apiVersion`).
    pub fn get(&self, resource: &str, namespace: &str, name: &str) -> Option<Value> {
        let s = self.inner.store();
        let def = s.resolve_or_panic(resource);
        s.get(&def, &Store::key(&def, namespace, name))
    }

    /// `(key, resourceVersion)` of every current object, sorted by key (`ns/name` or `name`).
    pub fn objects(&self, resource: &str) -> Vec<(String, u64)> {
        let s = self.inner.store();
        let def = s.resolve_or_panic(resource);
        s.current(&def)
            .iter()
            .map(|(k, v)| {
                let rv = v["metadata"]["resourceVersion"]
                    .as_str()
                    .and_then(|r| r.parse().ok())
                    .unwrap_or(0);
                (k.clone(), rv)
            })
            .collect()
    }

    /// The latest resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.inner.store().rv
    }

    /// Makes every resourceVersion below the current one too old: exact-RV lists, continue tokens
    /// and watches from them fail with 410 from now on.
    pub fn compact(&self) {
        let rv = self.resource_version();
        self.compact_to(rv);
    }

    /// etcd's compaction at `rv`: exact reads (lists at a resourceVersion with a `limit` or
    /// `resourceVersionMatch=Exact`, continue tokens) and watches from below `rv` fail with 410.
    pub fn compact_to(&self, rv: u64) {
        let mut s = self.inner.store();
        assert!(
            rv <= s.rv,
            "fake apiserver: cannot compact ahead of rv {}",
            s.rv
        );
        s.compacted = s.compacted.max(rv);
    }

    /// The apiserver process goes away (etcd stays): open connections drop, and new ones are
    /// closed as soon as they are accepted until [`restart`](Self::restart). Objects changed
    /// meanwhile (with `create`, `update`, `delete`) change in etcd, behind the back of every
    /// watcher.
    pub fn stop(&self) {
        lock(&self.inner.knobs).down = true;
        self.drop_connections();
    }

    /// The apiserver starts again (after [`stop`](Self::stop), or at once, as a crash and a
    /// restart): open connections drop, and its watch cache is rebuilt from etcd at the current
    /// revision, so a watch from any older resourceVersion gets 410 "too old resource version"
    /// (`watch-after-restart-410.jsonl`), while etcd still serves exact reads of older revisions
    /// until they are compacted (`list-after-restart-rv-limit-stale.json`).
    pub fn restart(&self) {
        {
            let mut s = self.inner.store();
            s.cache_start = s.rv;
        }
        lock(&self.inner.knobs).down = false;
        self.drop_connections();
    }

    /// With `true`, `sendInitialEvents=true` watches are served (as with the WatchList feature
    /// gate on): ADDED for the current state, then the `k8s.io/initial-events-end` bookmark.
    /// By default they get 1.28's 422.
    pub fn set_watch_list_supported(&self, supported: bool) {
        lock(&self.inner.knobs).watch_list_supported = supported;
    }

    /// With `false`, `/api` and `/apis` answer the legacy documents whatever the Accept header asks
    /// for, as a server before 1.26 (or with the `AggregatedDiscoveryEndpoint` feature gate off)
    /// does; the resources are then only in `/api/<v>` and `/apis/<g>/<v>`. Served by default.
    pub fn set_aggregated_discovery(&self, served: bool) {
        lock(&self.inner.knobs).aggregated_discovery = served;
    }

    /// How lists are encoded: whole before the first byte, as 1.28 does (the default), or item by
    /// item as they are sent, as 1.33's `StreamingCollectionEncodingToJSON` does; the bytes are
    /// the same (see [`CollectionEncoding`]). Applies to lists requested afterwards.
    pub fn set_collection_encoding(&self, encoding: CollectionEncoding) {
        lock(&self.inner.knobs).collection_encoding = encoding;
    }

    /// How often watches with `allowWatchBookmarks=true` get a BOOKMARK (default 60 s, as the
    /// real server). Applies to watches started afterwards.
    pub fn set_bookmark_interval(&self, interval: Duration) {
        lock(&self.inner.knobs).bookmark_interval = interval;
    }

    /// Queues a fault. Faults are consulted in insertion order; each request consumes at most one.
    pub fn inject(&self, mut fault: Fault) {
        if let Some(r) = &fault.resource {
            fault.resource = Some(self.inner.store().resolve_or_panic(r).id());
        }
        lock(&self.inner.faults).push(fault);
    }

    /// Forgets faults that have not fired yet.
    pub fn clear_faults(&self) {
        lock(&self.inner.faults).clear();
    }

    /// Ends every open watch cleanly (terminating chunk), as an apiserver does on shutdown or
    /// when a watch's timeout expires.
    pub fn close_watches(&self) {
        self.inner.close_tx.send_modify(|g| *g += 1);
    }

    /// Cuts every open connection abruptly (no terminating chunk, no response to pending
    /// requests).
    pub fn drop_connections(&self) {
        self.inner.kill_tx.send_modify(|g| *g += 1);
    }

    /// Drops all open connections and, for `duration`, closes new ones as soon as they are
    /// accepted, so clients see the API server as gone.
    pub fn refuse_connections(&self, duration: Duration) {
        lock(&self.inner.knobs).refuse_until = Some(Instant::now() + duration);
        self.drop_connections();
    }

    /// Ends a [`refuse_connections`](Self::refuse_connections) at once. A test that changes the
    /// store while the server is gone refuses for long and accepts once it is done: a short
    /// refusal could end, on a loaded machine, before the changes are made, and the client would
    /// then see them as watch events.
    pub fn accept_connections(&self) {
        lock(&self.inner.knobs).refuse_until = None;
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        lock(&self.inner.requests).clone()
    }

    pub fn clear_requests(&self) {
        lock(&self.inner.requests).clear();
    }
}

impl Drop for FakeApiServer {
    fn drop(&mut self) {
        // Connection tasks and watch streams all listen for this; the accept loop is aborted so
        // the port is released right away.
        self.inner.shutdown_tx.send_replace(true);
        self.accept_task.abort();
    }
}

async fn accept_loop(inner: Arc<Inner>, listener: TcpListener) {
    let mut shutdown = inner.shutdown_tx.subscribe();
    loop {
        let stream = tokio::select! {
            _ = shutdown.wait_for(|down| *down) => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Transient (e.g. EMFILE): keep serving the others.
                Err(_) => continue,
            },
        };
        let refusing = {
            let knobs = lock(&inner.knobs);
            knobs.down
                || knobs
                    .refuse_until
                    .is_some_and(|until| Instant::now() < until)
        };
        if refusing {
            drop(stream);
            continue;
        }
        let _ = stream.set_nodelay(true);
        match inner.tls.clone() {
            None => {
                tokio::spawn(serve_connection(inner.clone(), stream, None));
            }
            Some(acceptor) => {
                let inner = inner.clone();
                tokio::spawn(async move {
                    // A failed handshake (a client refusing the certificate) closes the connection.
                    if let Ok(stream) = acceptor.accept(stream).await {
                        let certificate = stream.get_ref().1.peer_certificates().is_some();
                        serve_connection(inner, stream, Some(ClientCertificate(certificate))).await;
                    }
                });
            }
        }
    }
}

async fn serve_connection<S>(inner: Arc<Inner>, stream: S, certificate: Option<ClientCertificate>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let mut shutdown = inner.shutdown_tx.subscribe();
    let mut kill = inner.kill_tx.subscribe();
    let svc_inner = inner.clone();
    let conn = http1::Builder::new().serve_connection(
        TokioIo::new(stream),
        service_fn(move |mut req| {
            if let Some(certificate) = certificate {
                req.extensions_mut().insert(certificate);
            }
            handler::handle(svc_inner.clone(), req)
        }),
    );
    // Dropping `conn` closes the socket without finishing any response in flight.
    tokio::select! {
        _ = conn => {}
        _ = shutdown.wait_for(|down| *down) => {}
        _ = kill.changed() => {}
    }
}
