//! Request routing, discovery, GET and LIST.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::ops::Bound;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper::header::{ACCEPT, CACHE_CONTROL, CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use hyper::{Method, Response, StatusCode};
use serde_json::Value;

use super::collection::{self, CollectionEncoding};
use super::json::{self, J, Obj};
use super::partial::Encoding;
use super::resources::{self, ResourceDef};
use super::selectors::{FieldSelector, Filter, LabelSelector};
use super::{FORBIDDEN_USER, FaultAction, Inner, Request, Verb, lock, watch};

pub(crate) type Body = BoxBody<Bytes, std::io::Error>;
pub(crate) type Query = BTreeMap<String, String>;

/// How long a request for a future resourceVersion waits for it, like the cacher's
/// `waitUntilFreshAndBlock`, before answering "Too large resource version".
const FRESHNESS_WAIT: Duration = Duration::from_secs(3);

/// What a request path addresses.
enum Route {
    Version,
    /// `/api`
    CoreVersions,
    /// `/apis`
    GroupList,
    /// `/apis/<group>`
    Group(String),
    /// `/api/<v>` or `/apis/<group>/<v>`
    ResourceList(String, String),
    Resource {
        def: Arc<ResourceDef>,
        namespace: Option<String>,
        name: Option<String>,
        watch: bool,
    },
    NotFound,
}

impl Route {
    fn verb(&self) -> Verb {
        match self {
            Route::Resource { name: Some(_), .. } => Verb::Get,
            Route::Resource { watch: true, .. } => Verb::Watch,
            Route::Resource { .. } => Verb::List,
            Route::NotFound => Verb::Get,
            _ => Verb::Discovery,
        }
    }

    fn resource_id(&self) -> Option<String> {
        match self {
            Route::Resource { def, .. } => Some(def.id()),
            _ => None,
        }
    }
}

fn route(inner: &Inner, path: &str, query: &Query) -> Route {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match segs.as_slice() {
        ["version"] => return Route::Version,
        ["api"] => return Route::CoreVersions,
        ["apis"] => return Route::GroupList,
        ["apis", g] => return Route::Group((*g).into()),
        ["api", v] => return Route::ResourceList(String::new(), (*v).into()),
        ["apis", g, v] => return Route::ResourceList((*g).into(), (*v).into()),
        ["api", v, rest @ ..] => ("", *v, rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return Route::NotFound,
    };
    let mut watch = matches!(query.get("watch").map(String::as_str), Some("1" | "true"));
    // The deprecated `/watch/` path prefix still works on 1.28.
    let rest = match rest {
        ["watch", tail @ ..] => {
            watch = true;
            tail
        }
        _ => rest,
    };
    let store = inner.store();
    let lookup = |plural: &str| store.by_path(group, version, plural);
    let (def, namespace, name) = match rest {
        ["namespaces", ns, plural] => (lookup(plural), Some(*ns), None),
        ["namespaces", ns, plural, name] => (lookup(plural), Some(*ns), Some(*name)),
        [plural] => (lookup(plural), None, None),
        [plural, name] => (lookup(plural), None, Some(*name)),
        _ => (None, None, None),
    };
    match def {
        // A namespace segment on a cluster-scoped resource (or none on a get of a namespaced
        // one) addresses nothing.
        Some(def) if def.namespaced || namespace.is_none() => {
            if !def.namespaced || namespace.is_some() || name.is_none() {
                Route::Resource {
                    def,
                    namespace: namespace.map(str::to_owned),
                    name: name.map(str::to_owned),
                    watch,
                }
            } else {
                Route::NotFound
            }
        }
        _ => Route::NotFound,
    }
}

pub(crate) fn pct_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn parse_query(q: &str) -> Query {
    q.split('&')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (pct_decode(k), pct_decode(v))
        })
        .collect()
}

/// A JSON response with the headers every apiserver response carries.
pub(crate) fn respond(code: u16, content_type: &str, body: String) -> Response<Body> {
    let body = Full::new(Bytes::from(body)).map_err(|e| match e {}).boxed();
    respond_with(code, content_type, body)
}

/// [`respond`] with any body (a streamed one, for instance).
pub(crate) fn respond_with(code: u16, content_type: &str, body: Body) -> Response<Body> {
    let mut resp = Response::new(body);
    *resp.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = resp.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_str(content_type).expect("content type"),
    );
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache, private"));
    headers.insert(
        "audit-id",
        HeaderValue::from_str(&json::new_uid()).expect("uid"),
    );
    resp
}

pub(crate) fn status_response(
    code: u16,
    reason: &str,
    message: &str,
    details: Option<Obj>,
) -> Response<Body> {
    respond(
        code,
        "application/json",
        json::status(code, reason, message, details),
    )
}

/// The fixture's 404 for a path that names no resource.
fn not_found() -> Response<Body> {
    status_response(
        404,
        "NotFound",
        "the server could not find the requested resource",
        Some(Obj::new()),
    )
}

fn bad_request(message: &str) -> Response<Body> {
    status_response(400, "BadRequest", message, None)
}

/// A 422 for invalid `ListOptions`, shaped like `watchlist-sendInitialEvents.json`.
pub(crate) fn invalid_list_options(
    field: &str,
    cause_reason: &str,
    detail: &str,
) -> Response<Body> {
    let message = format!("ListOptions.meta.k8s.io \"\" is invalid: {field}: {detail}");
    let cause = Obj::new()
        .with("reason", cause_reason)
        .with("message", detail)
        .with("field", field);
    let details = Obj::new()
        .with("group", "meta.k8s.io")
        .with("kind", "ListOptions")
        .with("causes", vec![J::O(cause)]);
    status_response(422, "Invalid", &message, Some(details))
}

fn forbidden_message(
    user: &str,
    verb: &str,
    def: &ResourceDef,
    namespace: Option<&str>,
    name: Option<&str>,
) -> (String, Obj) {
    let subject = if def.group.is_empty() {
        def.plural.clone()
    } else {
        format!("{}.{}", def.plural, def.group)
    };
    let subject = match name {
        Some(n) => format!("{subject} \"{n}\""),
        None => subject,
    };
    let scope = match namespace {
        Some(ns) => format!("in the namespace \"{ns}\""),
        None => "at the cluster scope".to_owned(),
    };
    let message = format!(
        "{subject} is forbidden: User \"{user}\" cannot {verb} resource \"{}\" in API group \"{}\" {scope}",
        def.plural, def.group
    );
    (
        message,
        json::details(name.unwrap_or(""), &def.group, &def.plural),
    )
}

fn fault_response(
    route: &Route,
    path: &str,
    query: &Query,
    current_rv: u64,
    action: FaultAction,
    user: &str,
) -> Response<Body> {
    match action {
        FaultAction::CustomStatus {
            code,
            reason,
            message,
        } => status_response(code, &reason, &message, None),
        FaultAction::TooManyRequests { retry_after_secs } => too_many_requests(retry_after_secs),
        FaultAction::Status(code) => match code {
            401 => status_response(401, "Unauthorized", "Unauthorized", None),
            403 => match route {
                Route::Resource {
                    def,
                    namespace,
                    name,
                    ..
                } => {
                    let verb = match route.verb() {
                        Verb::Watch => "watch",
                        Verb::List => "list",
                        _ => "get",
                    };
                    let (message, details) =
                        forbidden_message(user, verb, def, namespace.as_deref(), name.as_deref());
                    status_response(403, "Forbidden", &message, Some(details))
                }
                _ => {
                    let message = format!("forbidden: User \"{user}\" cannot get path \"{path}\"");
                    status_response(403, "Forbidden", &message, Some(Obj::new()))
                }
            },
            404 => match route {
                Route::Resource {
                    def,
                    name: Some(name),
                    ..
                } => object_not_found(def, name),
                _ => not_found(),
            },
            410 => match route {
                Route::Resource { watch: true, .. } => {
                    let rv = query
                        .get("resourceVersion")
                        .and_then(|r| r.parse().ok())
                        .unwrap_or(0);
                    watch::too_old(rv, current_rv)
                }
                _ => expired_exact(),
            },
            429 => too_many_requests(1),
            500 => {
                let cause = "fake apiserver: injected failure";
                let details =
                    Obj::new().with("causes", vec![J::O(Obj::new().with("message", cause))]);
                status_response(
                    500,
                    "InternalError",
                    &format!("Internal error occurred: {cause}"),
                    Some(details),
                )
            }
            503 => status_response(
                503,
                "ServiceUnavailable",
                "the server is currently unable to handle the request",
                None,
            ),
            504 => status_response(
                504,
                "Timeout",
                "the server was unable to return a response in the time allotted, but may still be processing the request",
                None,
            ),
            other => status_response(
                other,
                "",
                &format!(
                    "the server responded with the status code {other} but did not return more information"
                ),
                None,
            ),
        },
        // Handled before routing.
        FaultAction::Delay(_)
        | FaultAction::DropWatchAfter(_)
        | FaultAction::GarbleWatchAfter(_) => {
            unreachable!("not a response fault")
        }
    }
}

fn too_many_requests(retry_after_secs: u64) -> Response<Body> {
    let details = Obj::new().with("retryAfterSeconds", retry_after_secs);
    let mut resp = status_response(
        429,
        "TooManyRequests",
        "Too many requests, please try again later.",
        Some(details),
    );
    resp.headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from(retry_after_secs));
    resp
}

fn object_not_found(def: &ResourceDef, name: &str) -> Response<Body> {
    let subject = if def.group.is_empty() {
        def.plural.clone()
    } else {
        format!("{}.{}", def.plural, def.group)
    };
    status_response(
        404,
        "NotFound",
        &format!("{subject} \"{name}\" not found"),
        Some(json::details(name, &def.group, &def.plural)),
    )
}

/// `list-exact-rv-compacted-410.json`.
fn expired_exact() -> Response<Body> {
    status_response(
        410,
        "Expired",
        "The resourceVersion for the provided list is too old.",
        None,
    )
}

fn too_large(requested: u64, current: u64) -> Response<Body> {
    let cause = Obj::new()
        .with("reason", "ResourceVersionTooLarge")
        .with("message", "Too large resource version");
    let details = Obj::new()
        .with("causes", vec![J::O(cause)])
        .with("retryAfterSeconds", 1u64);
    status_response(
        504,
        "Timeout",
        &format!("Too large resource version: {requested}, current: {current}"),
        Some(details),
    )
}

pub(crate) async fn handle(
    inner: Arc<Inner>,
    req: hyper::Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    let path = req.uri().path().to_owned();
    let query = parse_query(req.uri().query().unwrap_or(""));
    let accept = req
        .headers()
        .get(ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let route = route(&inner, &path, &query);
    let identity: Vec<(String, String)> = req
        .headers()
        .iter()
        .filter(|(name, _)| {
            name.as_str() == "authorization" || name.as_str().starts_with("impersonate-")
        })
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect();
    let user = identity
        .iter()
        .find(|(name, _)| name == "impersonate-user")
        .map_or(FORBIDDEN_USER.to_owned(), |(_, user)| user.clone());
    lock(&inner.requests).push(Request {
        method: req.method().to_string(),
        path: path.clone(),
        query: query.clone(),
        verb: route.verb(),
        resource: route.resource_id(),
        accept: accept.clone(),
        identity,
        client_certificate: req
            .extensions()
            .get::<super::ClientCertificate>()
            .is_some_and(|c| c.0),
    });

    let mut stream_fault = None;
    match inner.take_fault(route.verb(), route.resource_id().as_deref()) {
        Some(FaultAction::Delay(d)) => tokio::time::sleep(d).await,
        Some(FaultAction::DropWatchAfter(n)) => stream_fault = Some((n, watch::StreamFault::Drop)),
        Some(FaultAction::GarbleWatchAfter(n)) => {
            stream_fault = Some((n, watch::StreamFault::Garble));
        }
        Some(action) => {
            let rv = inner.store().rv;
            return Ok(fault_response(&route, &path, &query, rv, action, &user));
        }
        None => {}
    }
    if req.method() != Method::GET {
        return Ok(status_response(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
            Some(Obj::new()),
        ));
    }

    let defs = || -> Vec<ResourceDef> {
        inner
            .store()
            .resources
            .iter()
            .map(|d| (**d).clone())
            .collect()
    };
    let ok = |doc: Obj| respond(200, "application/json", doc.to_body());
    let aggregated =
        resources::aggregated_version(&accept).filter(|_| lock(&inner.knobs).aggregated_discovery);
    Ok(match route {
        Route::Version => ok(resources::version_info()),
        Route::CoreVersions | Route::GroupList if aggregated.is_some() => {
            let v = aggregated.expect("checked");
            let core = matches!(route, Route::CoreVersions);
            respond(
                200,
                &resources::aggregated_content_type(v),
                resources::aggregated(&defs(), core, v).to_body(),
            )
        }
        Route::CoreVersions => ok(resources::api_versions(&inner.addr.to_string())),
        Route::GroupList => ok(resources::api_group_list(&defs())),
        Route::Group(g) => resources::api_group_doc(&defs(), &g).map_or_else(not_found, ok),
        Route::ResourceList(g, v) => {
            resources::api_resource_list(&defs(), &g, &v).map_or_else(not_found, ok)
        }
        Route::NotFound => not_found(),
        Route::Resource {
            def,
            namespace,
            name: Some(name),
            ..
        } => {
            let key = super::store::Store::key(&def, namespace.as_deref().unwrap_or(""), &name);
            match inner.store().get(&def, &key) {
                Some(obj) => ok(match json::object(&obj, true) {
                    J::O(o) => o,
                    _ => unreachable!("objects are JSON objects"),
                }),
                None => object_not_found(&def, &name),
            }
        }
        Route::Resource {
            def,
            namespace,
            name: None,
            watch,
        } => {
            let filter = match parse_filter(namespace, &query) {
                Ok(f) => f,
                Err(resp) => return Ok(*resp),
            };
            let encoding = match Encoding::negotiate(&accept, watch) {
                Ok(encoding) => encoding,
                Err(resp) => return Ok(*resp),
            };
            if watch {
                watch::watch(inner.clone(), def, filter, &query, stream_fault, encoding).await
            } else {
                list(&inner, &def, &filter, &query, encoding).await
            }
        }
    })
}

/// An error response decided before the main work of a handler; boxed because a `Response` is
/// large compared to the success values.
pub(crate) type Reject = Box<Response<Body>>;

fn parse_filter(namespace: Option<String>, query: &Query) -> Result<Filter, Reject> {
    let labels = LabelSelector::parse(query.get("labelSelector").map_or("", String::as_str))
        .map_err(|e| Box::new(bad_request(&e)))?;
    let fields = FieldSelector::parse(query.get("fieldSelector").map_or("", String::as_str))
        .map_err(|e| Box::new(bad_request(&e)))?;
    Ok(Filter {
        namespace,
        labels,
        fields,
    })
}

/// Waits (bounded) until the store reaches `rv`; `false` if it did not.
pub(crate) async fn wait_for_rv(inner: &Inner, rv: u64) -> bool {
    let mut rx = inner.rv_tx.subscribe();
    tokio::time::timeout(FRESHNESS_WAIT, rx.wait_for(|current| *current >= rv))
        .await
        .is_ok_and(|r| r.is_ok())
}

/// Parses a `resourceVersion` parameter; `Err` is the response to send.
pub(crate) async fn requested_rv(inner: &Inner, rv: &str) -> Result<Option<u64>, Reject> {
    if rv.is_empty() {
        return Ok(None);
    }
    let n: u64 = rv
        .parse()
        .map_err(|_| Box::new(bad_request(&format!("invalid resource version: {rv:?}"))))?;
    if n > inner.store().rv && !wait_for_rv(inner, n).await {
        return Err(Box::new(too_large(n, inner.store().rv)));
    }
    Ok(Some(n))
}

const CONTINUE_VERSION: &str = "meta.k8s.io/v1";

/// The apiserver's continue token: unpadded base64url of `{"v":..,"rv":..,"start":..}`, where
/// `start` is the last returned key (relative to the listed prefix) plus a NUL.
pub(crate) fn encode_continue(rv: i64, start: &str) -> String {
    let start = serde_json::to_string(start).expect("string");
    let raw = format!("{{\"v\":\"{CONTINUE_VERSION}\",\"rv\":{rv},\"start\":{start}}}");
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
}

pub(crate) fn decode_continue(token: &str) -> Result<(i64, String), String> {
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token.trim_end_matches('='))
        .map_err(|e| e.to_string())?;
    let v: Value = serde_json::from_slice(&raw).map_err(|e| e.to_string())?;
    if v["v"] != CONTINUE_VERSION {
        return Err(format!(
            "incorrect encoded start resourceVersion (version {CONTINUE_VERSION})"
        ));
    }
    let rv = v["rv"].as_i64().ok_or("missing resourceVersion")?;
    let start = v["start"].as_str().ok_or("missing start")?.to_owned();
    Ok((rv, start))
}

async fn list(
    inner: &Inner,
    def: &ResourceDef,
    filter: &Filter,
    q: &Query,
    encoding: Encoding,
) -> Response<Body> {
    let param = |k: &str| q.get(k).map_or("", String::as_str);
    let (rv, rvm, cont) = (
        param("resourceVersion"),
        param("resourceVersionMatch"),
        param("continue"),
    );
    let limit: usize = param("limit").parse().unwrap_or(0);

    // The validation `ListOptions` gets on 1.28, in the same order.
    if !rvm.is_empty() && !matches!(rvm, "Exact" | "NotOlderThan") {
        return invalid_list_options(
            "resourceVersionMatch",
            "FieldValueNotSupported",
            &format!(
                "Unsupported value: \"{rvm}\": supported values: \"Exact\", \"NotOlderThan\", \"\""
            ),
        );
    }
    if !rvm.is_empty() && rv.is_empty() {
        return invalid_list_options(
            "resourceVersionMatch",
            "FieldValueForbidden",
            "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
        );
    }
    if !rvm.is_empty() && !cont.is_empty() {
        return invalid_list_options(
            "resourceVersionMatch",
            "FieldValueForbidden",
            "Forbidden: resourceVersionMatch is forbidden when continue is provided",
        );
    }
    if rvm == "Exact" && rv == "0" {
        return invalid_list_options(
            "resourceVersionMatch",
            "FieldValueForbidden",
            "Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
        );
    }
    if !cont.is_empty() && !rv.is_empty() && rv != "0" {
        return bad_request("specifying resource version is not allowed when using continue");
    }
    let requested = match requested_rv(inner, rv).await {
        Ok(r) => r,
        Err(resp) => return *resp,
    };

    let store = inner.store();
    // (resourceVersion of the list, state it is served from, start key, paging allowed)
    let (list_rv, state, start, paged) = if !cont.is_empty() {
        let (token_rv, start) = match decode_continue(cont) {
            Ok(t) => t,
            Err(e) => return bad_request(&format!("continue key is not valid: {e}")),
        };
        if token_rv < store.compacted as i64 || token_rv > store.rv as i64 {
            // `list-continue-expired-410.json`: the Status offers an inconsistent continuation.
            let meta = Obj::new().with("continue", encode_continue(-1, &start));
            let message = "The provided continue parameter is too old to display a consistent list result. \
                You can start a new list without the continue parameter, or use the continue token in this \
                response to retrieve the remainder of the results. Continuing with the provided token results \
                in an inconsistent list - objects that were created, modified, or deleted between the time the \
                first chunk was returned and now may show up in the list.";
            return respond(
                410,
                "application/json",
                json::status_with_meta(410, "Expired", message, None, meta),
            );
        }
        let token_rv = token_rv as u64;
        (token_rv, store.state_at(def, token_rv), Some(start), true)
    } else {
        match requested {
            // From the watch cache: limit ignored, never paged.
            Some(0) => (store.rv, store.current(def), None, false),
            // An exact snapshot from "etcd". Without a match, a limit makes an RV exact too
            // (the legacy paged-list semantics).
            Some(n) if rvm == "Exact" || (rvm.is_empty() && limit > 0) => {
                if n < store.compacted {
                    return expired_exact();
                }
                (n, store.state_at(def, n), None, true)
            }
            // NotOlderThan / consistent read: the latest state.
            _ => (store.rv, store.current(def), None, true),
        }
    };
    drop(store);

    // Keys relative to the listed prefix, which is what continue tokens carry. Pages start from
    // the token's key in the ordered map, so paging a large collection costs one page per page.
    let prefix = filter
        .namespace
        .as_ref()
        .map(|ns| format!("{ns}/"))
        .unwrap_or_default();
    let lower = format!("{prefix}{}", start.as_deref().unwrap_or(""));
    // Keys under `<ns>/` are exactly the namespace's objects, so only selectors need checking.
    let selective = filter.has_selector();
    let mut matching = state
        .range::<str, _>((Bound::Included(lower.as_str()), Bound::Unbounded))
        .take_while(|(key, _)| key.starts_with(&prefix))
        .filter(|(_, obj)| !selective || filter.matches(obj))
        .map(|(key, obj)| (&key[prefix.len()..], obj))
        .peekable();

    let take = if paged && limit > 0 {
        limit
    } else {
        usize::MAX
    };
    // The page's keys in `state`: encoded here whole, or item by item as the response is sent.
    let mut page = Vec::new();
    let mut last = "";
    while page.len() < take {
        let Some((rel, _)) = matching.next() else {
            break;
        };
        page.push(format!("{prefix}{rel}"));
        last = rel;
    }
    // etcd counts what is left only when nothing is filtered out; otherwise all that matters is
    // whether anything is.
    let remaining = if selective {
        usize::from(matching.peek().is_some())
    } else {
        matching.count()
    };

    let mut meta = Obj::new().with("resourceVersion", list_rv.to_string());
    if remaining > 0 {
        meta.push(
            "continue",
            encode_continue(list_rv as i64, &format!("{last}\u{0}")),
        );
        if !filter.has_selector() {
            meta.push("remainingItemCount", remaining as u64);
        }
    }
    let (kind, api_version) = encoding.list_type(def);
    let head = Obj::new()
        .with("kind", kind)
        .with("apiVersion", api_version)
        .with("metadata", meta);
    if lock(&inner.knobs).collection_encoding == CollectionEncoding::Streaming {
        return collection::streamed_list(&head, state, page, encoding);
    }
    let items: Vec<J> = page
        .iter()
        .map(|key| encoding.list_item(&state[key]))
        .collect();
    respond(200, "application/json", head.with("items", items).to_body())
}
