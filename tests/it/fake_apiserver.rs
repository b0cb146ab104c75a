//! Self-tests of the fake API server: it must answer like the captured kube-apiserver v1.28.7
//! (`tests/fixtures/apiserver-v1.28.7/`) and work with `kube::Client`.

use crate::support;

use std::collections::BTreeSet;
use std::fmt;
use std::time::Duration;

use base64::Engine as _;
use futures_util::{StreamExt, TryStreamExt};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{APIGroupList, APIResourceList};
use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, ListParams, WatchEvent, WatchParams,
};
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use support::fake_apiserver::{CollectionEncoding, FakeApiServer, Fault, ResourceDef, Verb};

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/apiserver-v1.28.7"
);

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{FIXTURES}/{name}")).expect("fixture")
}

/// Top-level keys of a JSON object in document order (serde_json's `Value` would sort them).
struct KeyOrder(Vec<String>);

impl<'de> Deserialize<'de> for KeyOrder {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = KeyOrder;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<KeyOrder, A::Error> {
                let mut keys = Vec::new();
                while let Some((k, _)) = map.next_entry::<String, IgnoredAny>()? {
                    keys.push(k);
                }
                Ok(KeyOrder(keys))
            }
        }
        d.deserialize_map(V)
    }
}

fn key_order(text: &str) -> Vec<String> {
    serde_json::from_str::<KeyOrder>(text)
        .expect("json object")
        .0
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object().expect("object").keys().cloned().collect()
}

struct Raw {
    status: u16,
    /// Lower-cased header block.
    head: String,
    body: String,
    /// Whether a chunked body ended with its terminating chunk.
    complete: bool,
    /// The size of each chunk of a chunked body, in order.
    chunks: Vec<usize>,
}

/// A minimal HTTP/1.1 GET so tests see exactly what is on the wire (status, headers, chunking).
async fn raw_get(server: &FakeApiServer, path: &str, accept: &str) -> Raw {
    let mut s = TcpStream::connect(server.addr()).await.expect("connect");
    let req = format!(
        "GET {path} HTTP/1.1\r\nHost: fake\r\nAccept: {accept}\r\nConnection: close\r\n\r\n"
    );
    s.write_all(req.as_bytes()).await.expect("write");
    let mut buf = Vec::new();
    // A dropped connection may end in a reset: what arrived before it is what matters.
    let _ = s.read_to_end(&mut buf).await;
    // Bytes until the body is whole: a chunk may end inside a UTF-8 character.
    let split = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("http head");
    let head = String::from_utf8(buf[..split].to_vec())
        .expect("utf8 head")
        .to_lowercase();
    let rest = &buf[split + 4..];
    let status = head[9..12].parse().expect("status");
    let utf8 = |bytes: Vec<u8>| String::from_utf8(bytes).expect("utf8 body");
    if !head.contains("transfer-encoding: chunked") {
        return Raw {
            status,
            head,
            body: utf8(rest.to_vec()),
            complete: true,
            chunks: Vec::new(),
        };
    }
    let (mut body, mut rest, mut complete, mut chunks) = (Vec::new(), rest, false, Vec::new());
    while let Some(line) = rest.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&rest[..line]).expect("chunk size");
        let size = usize::from_str_radix(size, 16).expect("chunk size");
        if size == 0 {
            complete = true;
            break;
        }
        let tail = &rest[line + 2..];
        body.extend_from_slice(&tail[..size]);
        chunks.push(size);
        rest = &tail[size + 2..];
    }
    Raw {
        status,
        head,
        body: utf8(body),
        complete,
        chunks,
    }
}

fn cm_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("", "v1", "ConfigMap"), "configmaps")
}

/// `cm-1` … `cm-n` in namespace `fixtures`, like the capture.
fn seed(server: &FakeApiServer, n: usize) {
    for i in 1..=n {
        server.create(
            "configmaps",
            json!({"metadata": {"name": format!("cm-{i}"), "namespace": "fixtures"}, "data": {"k": format!("v{i}")}}),
        );
    }
}

fn lines(body: &str) -> Vec<Value> {
    body.lines()
        .map(|l| serde_json::from_str(l).expect("watch line"))
        .collect()
}

#[tokio::test]
async fn discovery_parses_and_matches_fixture_shapes() {
    let server = FakeApiServer::start().await;
    let client = server.client();

    let core: APIResourceList = client.list_core_api_resources("v1").await.unwrap();
    let cm = core
        .resources
        .iter()
        .find(|r| r.name == "configmaps")
        .unwrap();
    assert_eq!(cm.short_names.as_deref(), Some(&["cm".to_string()][..]));
    assert!(
        core.resources
            .iter()
            .any(|r| r.name == "namespaces" && !r.namespaced)
    );

    let groups: APIGroupList = client.list_api_groups().await.unwrap();
    let names: Vec<&str> = groups.groups.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["apps", "example.com"]);
    let wd = client
        .list_api_group_resources("example.com/v1")
        .await
        .unwrap();
    assert_eq!(
        wd.resources[0].short_names.as_deref(),
        Some(&["wd".to_string()][..])
    );
    let apps = client.list_api_group_resources("apps/v1").await.unwrap();
    assert!(
        apps.resources
            .iter()
            .any(|r| r.short_names.as_deref() == Some(&["deploy".to_string()][..]))
    );

    // Registered resources show up.
    server.register(ResourceDef::new("batch", "v1", "Job", "jobs", true));
    let groups = client.list_api_groups().await.unwrap();
    assert!(groups.groups.iter().any(|g| g.name == "batch"));

    let aggregated = client.list_api_groups_aggregated().await.unwrap();
    assert!(
        aggregated
            .items
            .iter()
            .any(|g| g.metadata.as_ref().and_then(|m| m.name.as_deref()) == Some("example.com"))
    );
    let core_agg = client.list_core_api_versions_aggregated().await.unwrap();
    assert!(!core_agg.items[0].versions[0].resources.is_empty());
    assert_eq!(
        client.apiserver_version().await.unwrap().git_version,
        "v1.28.7"
    );

    // Same field order as the real documents, and resource entries use only known fields.
    for (path, file) in [
        ("/api", "discovery-api.json"),
        ("/api/v1", "discovery-api-v1.json"),
        ("/apis", "discovery-apis.json"),
        ("/apis/apps/v1", "discovery-apis-apps-v1.json"),
    ] {
        let raw = raw_get(&server, path, "application/json").await;
        assert_eq!(raw.status, 200, "{path}");
        let expected = fixture(file);
        assert_eq!(key_order(&raw.body), key_order(&expected), "{path}");
        let ours: Value = serde_json::from_str(&raw.body).unwrap();
        let real: Value = serde_json::from_str(&expected).unwrap();
        if let Some(resources) = ours["resources"].as_array() {
            let real_keys: BTreeSet<String> = real["resources"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(keys)
                .collect();
            for r in resources {
                assert!(keys(r).is_subset(&real_keys), "{path}: {r}");
            }
            let cm_real = real["resources"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["name"] == "configmaps");
            if let Some(cm_real) = cm_real {
                let cm_ours = resources
                    .iter()
                    .find(|r| r["name"] == "configmaps")
                    .unwrap();
                assert_eq!(cm_ours, cm_real);
            }
        }
    }

    let accept = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";
    for (path, file) in [
        ("/api", "discovery-aggregated-api.json"),
        ("/apis", "discovery-aggregated-apis.json"),
    ] {
        let raw = raw_get(&server, path, accept).await;
        assert!(
            raw.head
                .contains(&format!("content-type: {}", accept.to_lowercase())),
            "{}",
            raw.head
        );
        let expected = fixture(file);
        assert_eq!(key_order(&raw.body), key_order(&expected));
        let ours: Value = serde_json::from_str(&raw.body).unwrap();
        let real: Value = serde_json::from_str(&expected).unwrap();
        assert_eq!(ours["apiVersion"], real["apiVersion"]);
        assert_eq!(
            keys(&ours["items"][0]["versions"][0]),
            keys(&real["items"][0]["versions"][0])
        );
    }

    // A server before 1.26 answers the legacy documents whatever the Accept header asks for.
    server.set_aggregated_discovery(false);
    for (path, kind) in [("/api", "APIVersions"), ("/apis", "APIGroupList")] {
        let raw = raw_get(&server, path, accept).await;
        assert!(
            raw.head
                .lines()
                .any(|l| l.trim() == "content-type: application/json"),
            "{}",
            raw.head
        );
        let legacy: Value = serde_json::from_str(&raw.body).unwrap();
        assert_eq!(legacy["kind"], kind);
    }
}

#[tokio::test]
async fn paged_list_follows_continue_tokens_on_a_consistent_snapshot() {
    let server = FakeApiServer::start().await;
    seed(&server, 5);
    let list_rv = server.resource_version();

    let raw = raw_get(
        &server,
        "/api/v1/namespaces/fixtures/configmaps?limit=2",
        "application/json",
    )
    .await;
    let expected = fixture("list-configmaps-page1.json");
    assert_eq!(key_order(&raw.body), key_order(&expected));
    let page1: Value = serde_json::from_str(&raw.body).unwrap();
    let real: Value = serde_json::from_str(&expected).unwrap();
    assert_eq!(keys(&page1["metadata"]), keys(&real["metadata"]));
    assert_eq!(page1["metadata"]["remainingItemCount"], 3);
    assert_eq!(page1["kind"], "ConfigMapList");
    let mut real_item = real["items"][0].clone();
    real_item["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("managedFields");
    assert_eq!(keys(&page1["items"][0]), keys(&real_item));
    assert_eq!(
        keys(&page1["items"][0]["metadata"]),
        keys(&real_item["metadata"])
    );
    let token = page1["metadata"]["continue"].as_str().unwrap();
    let decoded = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .unwrap();
    assert_eq!(
        String::from_utf8(decoded).unwrap(),
        format!(r#"{{"v":"meta.k8s.io/v1","rv":{list_rv},"start":"cm-2\u0000"}}"#)
    );

    // Through kube, with mutations between pages: every page is served at the first page's RV.
    let api: Api<DynamicObject> = Api::namespaced_with(server.client(), "fixtures", &cm_resource());
    let mut names = Vec::new();
    let mut params = ListParams::default().limit(2);
    loop {
        let page = api.list(&params).await.unwrap();
        assert_eq!(
            page.metadata.resource_version.as_deref(),
            Some(list_rv.to_string().as_str())
        );
        names.extend(page.items.iter().map(|o| o.metadata.name.clone().unwrap()));
        match page.metadata.continue_ {
            Some(c) if !c.is_empty() => params = ListParams::default().limit(2).continue_token(&c),
            _ => break,
        }
        if names.len() == 2 {
            server.delete("configmaps", "fixtures", "cm-4");
            server.create(
                "configmaps",
                json!({"metadata": {"name": "cm-9", "namespace": "fixtures"}}),
            );
        }
    }
    assert_eq!(names, ["cm-1", "cm-2", "cm-3", "cm-4", "cm-5"]);

    // RV=0 is served from the "watch cache": limit ignored, no continue.
    let raw = raw_get(
        &server,
        "/api/v1/namespaces/fixtures/configmaps?resourceVersion=0&limit=2",
        "application/json",
    )
    .await;
    let rv0: Value = serde_json::from_str(&raw.body).unwrap();
    assert_eq!(rv0["items"].as_array().unwrap().len(), 5);
    assert_eq!(
        key_order(&raw.body),
        key_order(&fixture("list-configmaps-rv0.json"))
    );
    assert_eq!(
        keys(&rv0["metadata"]),
        BTreeSet::from(["resourceVersion".to_string()])
    );

    // Cluster-scoped, all-namespaces and selectors.
    for ns in ["default", "fixtures", "kube-system"] {
        server.create(
            "namespaces",
            json!({"metadata": {"name": ns, "labels": {"team": ns}}}),
        );
    }
    let raw = raw_get(&server, "/api/v1/namespaces?limit=2", "application/json").await;
    let nsl: Value = serde_json::from_str(&raw.body).unwrap();
    assert_eq!(nsl["kind"], "NamespaceList");
    assert!(nsl["items"][0]["metadata"].get("namespace").is_none());
    assert_eq!(
        keys(&nsl["metadata"]),
        keys(
            &serde_json::from_str::<Value>(&fixture("list-namespaces-cluster-scoped.json"))
                .unwrap()["metadata"]
        )
    );
    let sel = raw_get(
        &server,
        "/api/v1/namespaces?labelSelector=team%20in%20(default,kube-system)&limit=1",
        "application/json",
    )
    .await;
    let sel: Value = serde_json::from_str(&sel.body).unwrap();
    assert_eq!(sel["items"][0]["metadata"]["name"], "default");
    assert!(sel["metadata"]["continue"].is_string());
    assert!(
        sel["metadata"].get("remainingItemCount").is_none(),
        "no count with a selector"
    );
    let all = Api::<DynamicObject>::all_with(server.client(), &cm_resource());
    let lp = ListParams::default()
        .fields("metadata.name!=cm-1")
        .labels("!missing");
    let names: Vec<String> = all
        .list(&lp)
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|o| o.metadata.name.unwrap())
        .collect();
    assert_eq!(names, ["cm-2", "cm-3", "cm-5", "cm-9"]);
}

#[tokio::test]
async fn watch_streams_later_mutations_in_order_with_bookmarks() {
    let server = FakeApiServer::start().await;
    seed(&server, 3);
    server.set_bookmark_interval(Duration::from_millis(200));
    let api: Api<DynamicObject> = Api::namespaced_with(server.client(), "fixtures", &cm_resource());
    let list = api.list(&ListParams::default()).await.unwrap();
    let list_rv = list.metadata.resource_version.unwrap();

    let added = server.create(
        "configmaps",
        json!({"metadata": {"name": "cm-6", "namespace": "fixtures"}}),
    );
    let mut cm1 = server.get("configmaps", "fixtures", "cm-1").unwrap();
    cm1["data"]["k"] = json!("v1b");
    let modified = server.update("configmaps", cm1);
    let deleted = server.delete("configmaps", "fixtures", "cm-2");

    let stream = api
        .watch(&WatchParams::default().timeout(5), &list_rv)
        .await
        .unwrap();
    let events: Vec<WatchEvent<DynamicObject>> = stream.take(4).try_collect().await.unwrap();
    let summary: Vec<(String, String, String)> = events
        .iter()
        .map(|e| match e {
            WatchEvent::Added(o) => (
                "ADDED".into(),
                o.metadata.name.clone().unwrap(),
                o.metadata.resource_version.clone().unwrap(),
            ),
            WatchEvent::Modified(o) => (
                "MODIFIED".into(),
                o.metadata.name.clone().unwrap(),
                o.metadata.resource_version.clone().unwrap(),
            ),
            WatchEvent::Deleted(o) => (
                "DELETED".into(),
                o.metadata.name.clone().unwrap(),
                o.metadata.resource_version.clone().unwrap(),
            ),
            WatchEvent::Bookmark(b) => (
                "BOOKMARK".into(),
                String::new(),
                b.metadata.resource_version.clone(),
            ),
            WatchEvent::Error(e) => panic!("{e:?}"),
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("ADDED".into(), "cm-6".into(), added.to_string()),
            ("MODIFIED".into(), "cm-1".into(), modified.to_string()),
            ("DELETED".into(), "cm-2".into(), deleted.to_string()),
            ("BOOKMARK".into(), String::new(), deleted.to_string()),
        ]
    );

    // The raw stream: chunked, same line shapes as the capture, a bookmark before the timeout.
    let path = format!(
        "/api/v1/namespaces/fixtures/configmaps?watch=1&resourceVersion={list_rv}&allowWatchBookmarks=true&timeoutSeconds=1"
    );
    let raw = raw_get(&server, &path, "application/json").await;
    assert_eq!(raw.status, 200);
    assert!(raw.head.contains("transfer-encoding: chunked"));
    assert!(raw.complete);
    let ours = lines(&raw.body);
    let real = lines(&fixture("watch-events.jsonl"));
    let types: Vec<&str> = ours.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types[..3], ["ADDED", "MODIFIED", "DELETED"]);
    assert_eq!(types.last(), Some(&"BOOKMARK"));
    let first_line = raw.body.lines().next().unwrap();
    assert_eq!(
        key_order(first_line),
        key_order(fixture("watch-events.jsonl").lines().next().unwrap())
    );
    let obj_text = serde_json::to_string(&ours[0]["object"]).unwrap();
    assert!(raw.body.starts_with(r#"{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm-6","namespace":"fixtures","uid":"#), "{obj_text}");
    let mut expected_bookmark = real[3].clone();
    expected_bookmark["object"]["metadata"]["resourceVersion"] = json!(deleted.to_string());
    assert_eq!(ours.last().unwrap(), &expected_bookmark);
    assert_eq!(
        raw.body.lines().last().unwrap(),
        fixture("watch-events.jsonl")
            .lines()
            .last()
            .unwrap()
            .replace("5285", &deleted.to_string())
    );

    // Watch from "" starts with the current state; a selector turns a MODIFIED that leaves the
    // selection into a DELETED.
    let wp = WatchParams::default()
        .timeout(5)
        .labels("app=web")
        .disable_bookmarks();
    server.update(
        "configmaps",
        json!({"metadata": {"name": "cm-3", "namespace": "fixtures", "labels": {"app": "web"}}}),
    );
    let mut stream = api.watch(&wp, "0").await.unwrap().boxed();
    assert!(
        matches!(stream.next().await, Some(Ok(WatchEvent::Added(o))) if o.metadata.name.as_deref() == Some("cm-3"))
    );
    server.update(
        "configmaps",
        json!({"metadata": {"name": "cm-3", "namespace": "fixtures"}}),
    );
    assert!(
        matches!(stream.next().await, Some(Ok(WatchEvent::Deleted(o))) if o.metadata.name.as_deref() == Some("cm-3"))
    );

    // close_watches ends open watches cleanly.
    server.close_watches();
    assert!(
        tokio::time::timeout(Duration::from_secs(2), stream.next())
            .await
            .unwrap()
            .is_none()
    );

    let watches: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.is_watch())
        .collect();
    assert_eq!(watches.len(), 3);
    assert_eq!(watches[0].param("resourceVersion"), Some(list_rv.as_str()));
    assert_eq!(
        server.requests().iter().filter(|r| r.is_list()).count(),
        1,
        "no relist"
    );
}

#[tokio::test]
async fn compaction_expires_watches_continue_tokens_and_exact_lists() {
    let server = FakeApiServer::start().await;
    seed(&server, 5);
    let raw = raw_get(
        &server,
        "/api/v1/namespaces/fixtures/configmaps?limit=2",
        "application/json",
    )
    .await;
    let page1: Value = serde_json::from_str(&raw.body).unwrap();
    let token = page1["metadata"]["continue"].as_str().unwrap().to_owned();
    let old = server.resource_version();
    server.create(
        "configmaps",
        json!({"metadata": {"name": "cm-6", "namespace": "fixtures"}}),
    );
    server.compact();
    let compacted = server.resource_version();

    let path = format!(
        "/api/v1/namespaces/fixtures/configmaps?watch=1&resourceVersion={old}&allowWatchBookmarks=true&timeoutSeconds=3"
    );
    let raw = raw_get(&server, &path, "application/json").await;
    assert_eq!(raw.status, 200);
    assert!(raw.complete);
    let expected = fixture("watch-too-old-410.jsonl")
        .replace("5282", &old.to_string())
        .replace("5287", &compacted.to_string());
    assert_eq!(raw.body, expected);

    // kube sees the ERROR event as a 410 Status.
    let api: Api<DynamicObject> = Api::namespaced_with(server.client(), "fixtures", &cm_resource());
    let mut stream = api
        .watch(&WatchParams::default(), &old.to_string())
        .await
        .unwrap()
        .boxed();
    assert!(
        matches!(stream.next().await, Some(Ok(WatchEvent::Error(e))) if e.code == 410 && e.reason == "Expired")
    );
    assert!(stream.next().await.is_none());

    let raw = raw_get(
        &server,
        &format!("/api/v1/namespaces/fixtures/configmaps?limit=2&continue={token}"),
        "application/json",
    )
    .await;
    assert_eq!(raw.status, 410);
    assert_eq!(raw.body, fixture("list-continue-expired-410.json"));

    let raw = raw_get(&server, &format!("/api/v1/namespaces/fixtures/configmaps?resourceVersion={old}&resourceVersionMatch=Exact"), "application/json").await;
    assert_eq!(raw.status, 410);
    assert_eq!(raw.body, fixture("list-exact-rv-compacted-410.json"));

    // The current RV is still fine.
    let ok = raw_get(&server, &format!("/api/v1/namespaces/fixtures/configmaps?resourceVersion={compacted}&resourceVersionMatch=Exact"), "application/json").await;
    assert_eq!(ok.status, 200);
}

/// `(metadata.resourceVersion, [(name, resourceVersion)])` of a list answer.
fn list_state(body: &str) -> (String, Vec<(String, String)>) {
    let v: Value = serde_json::from_str(body).expect("a list");
    let items = v["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| {
            (
                i["metadata"]["name"].as_str().unwrap().to_owned(),
                i["metadata"]["resourceVersion"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            )
        })
        .collect();
    (
        v["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .to_owned(),
        items,
    )
}

#[tokio::test]
async fn lists_at_a_resource_version_are_exact_with_a_limit_and_current_without() {
    // The sequence of the `list-rv-*` fixtures: a, b, c at rv R; then b deleted and c updated.
    let server = FakeApiServer::start().await;
    for name in ["a", "b", "c"] {
        server.create(
            "configmaps",
            json!({"metadata": {"name": name, "namespace": "rvsem"}, "data": {"k": "1"}}),
        );
    }
    let r = server.resource_version();
    let (ra, rb) = (r - 2, r - 1);
    server.delete("configmaps", "rvsem", "b");
    let rc = server.update(
        "configmaps",
        json!({"metadata": {"name": "c", "namespace": "rvsem"}, "data": {"k": "2"}}),
    );
    let get = |query: String| {
        let server = &server;
        async move {
            let raw = raw_get(
                server,
                &format!("/api/v1/namespaces/rvsem/configmaps?{query}"),
                "application/json",
            )
            .await;
            assert_eq!(raw.status, 200, "{query}: {}", raw.body);
            raw.body
        }
    };
    let s = |n: u64| n.to_string();
    let old = (
        s(r),
        vec![("a".into(), s(ra)), ("b".into(), s(rb)), ("c".into(), s(r))],
    );
    let current = (s(rc), vec![("a".into(), s(ra)), ("c".into(), s(rc))]);

    let exact = get(format!("resourceVersion={r}&limit=500")).await;
    assert_eq!(list_state(&exact), old, "list-rv-limit-exact-stale.json");
    assert_eq!(
        key_order(&exact),
        key_order(&fixture("list-rv-limit-exact-stale.json"))
    );
    let cached = get(format!("resourceVersion={r}")).await;
    assert_eq!(
        list_state(&cached),
        current,
        "list-rv-nolimit-from-cache.json"
    );
    let not_older = get(format!(
        "resourceVersion={r}&resourceVersionMatch=NotOlderThan&limit=500"
    ))
    .await;
    assert_eq!(
        list_state(&not_older),
        current,
        "list-rv-notolderthan-limit.json"
    );
    let zero = get("resourceVersion=0&limit=1".into()).await;
    assert_eq!(list_state(&zero), current, "limit ignored for \"0\"");
}

#[tokio::test]
async fn after_a_restart_old_watches_are_too_old_while_etcd_still_serves_the_stale_revision() {
    // The sequence of `watch-after-restart-410.jsonl` and `list-after-restart-*`.
    let server = FakeApiServer::start().await;
    for name in ["a", "c"] {
        server.create(
            "configmaps",
            json!({"metadata": {"name": name, "namespace": "rvsem"}, "data": {"k": "1"}}),
        );
    }
    let seen = server.resource_version();
    let api: Api<DynamicObject> = Api::namespaced_with(server.client(), "rvsem", &cm_resource());
    let mut open = api
        .watch(&WatchParams::default(), &seen.to_string())
        .await
        .unwrap()
        .boxed();

    server.stop();
    assert!(
        matches!(open.next().await, None | Some(Err(_))),
        "open watches drop with the apiserver"
    );
    assert!(
        raw_get_fails(&server).await,
        "a stopped apiserver answers nothing"
    );
    server.delete("configmaps", "rvsem", "a");
    server.restart();
    let now = server.resource_version();

    let raw = raw_get(
        &server,
        &format!("/api/v1/namespaces/rvsem/configmaps?watch=1&resourceVersion={seen}&allowWatchBookmarks=true"),
        "application/json",
    )
    .await;
    assert_eq!(raw.status, 200);
    let expected = fixture("watch-after-restart-410.jsonl")
        .replace("5911", &seen.to_string())
        .replace("5912", &now.to_string());
    assert_eq!(raw.body, expected);

    let stale = raw_get(
        &server,
        &format!("/api/v1/namespaces/rvsem/configmaps?resourceVersion={seen}&limit=500"),
        "application/json",
    )
    .await;
    let (rv, items) = list_state(&stale.body);
    assert_eq!(
        rv,
        seen.to_string(),
        "list-after-restart-rv-limit-stale.json"
    );
    assert_eq!(items.len(), 2, "a is still there: {items:?}");

    let fresh = raw_get(
        &server,
        &format!("/api/v1/namespaces/rvsem/configmaps?resourceVersion={seen}"),
        "application/json",
    )
    .await;
    let (rv, items) = list_state(&fresh.body);
    assert_eq!(rv, now.to_string(), "list-after-restart-rv-nolimit.json");
    assert_eq!(
        items.iter().map(|i| i.0.as_str()).collect::<Vec<_>>(),
        ["c"]
    );
    assert_eq!(
        key_order(&fresh.body),
        key_order(&fixture("list-after-restart-rv-nolimit.json"))
    );

    // A watch from the restarted cache's first revision works.
    let mut watch = api
        .watch(&WatchParams::default().timeout(2), &now.to_string())
        .await
        .unwrap()
        .boxed();
    server.update(
        "configmaps",
        json!({"metadata": {"name": "c", "namespace": "rvsem"}, "data": {"k": "2"}}),
    );
    assert!(matches!(
        watch.next().await,
        Some(Ok(WatchEvent::Modified(_)))
    ));
}

/// Whether a request to the server gets no HTTP answer at all.
async fn raw_get_fails(server: &FakeApiServer) -> bool {
    let Ok(mut s) = TcpStream::connect(server.addr()).await else {
        return true;
    };
    let _ = s
        .write_all(b"GET /version HTTP/1.1\r\nHost: fake\r\nConnection: close\r\n\r\n")
        .await;
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf).await;
    buf.is_empty()
}

#[tokio::test]
async fn injected_faults_answer_like_the_real_server() {
    let server = FakeApiServer::start().await;
    seed(&server, 1);
    let path = "/api/v1/namespaces/fixtures/configmaps";

    server.inject(Fault::status(403).on(Verb::List).for_resource("configmaps"));
    let raw = raw_get(&server, path, "application/json").await;
    assert_eq!((raw.status, raw.body), (403, fixture("forbidden-403.json")));

    server.inject(Fault::status(401));
    let raw = raw_get(&server, path, "application/json").await;
    assert_eq!(
        (raw.status, raw.body),
        (401, fixture("unauthorized-401.json"))
    );

    let raw = raw_get(
        &server,
        "/api/v1/namespaces/fixtures/configmapz",
        "application/json",
    )
    .await;
    assert_eq!(
        (raw.status, raw.body),
        (404, fixture("get-missing-resource-404.json"))
    );

    server.inject(Fault::status(403).on(Verb::Watch));
    let raw = raw_get(
        &server,
        "/apis/apps/v1/deployments?watch=true",
        "application/json",
    )
    .await;
    let status: Value = serde_json::from_str(&raw.body).unwrap();
    assert_eq!(
        status["message"],
        r#"deployments.apps is forbidden: User "nobody" cannot watch resource "deployments" in API group "apps" at the cluster scope"#
    );
    assert_eq!(
        status["details"],
        json!({"group": "apps", "kind": "deployments"})
    );

    server.inject(Fault::too_many_requests(7));
    let raw = raw_get(&server, path, "application/json").await;
    assert_eq!(raw.status, 429);
    assert!(raw.head.contains("retry-after: 7"));
    assert_eq!(
        key_order(&raw.body),
        key_order(&fixture("forbidden-403.json"))
    );

    let api: Api<DynamicObject> = Api::namespaced_with(server.client(), "fixtures", &cm_resource());
    server.inject(Fault::status(500).on(Verb::List).times(2));
    for _ in 0..2 {
        match api.list(&ListParams::default()).await {
            Err(kube::Error::Api(s)) => {
                assert_eq!((s.code, s.reason.as_str()), (500, "InternalError"))
            }
            other => panic!("expected a 500, got {other:?}"),
        }
    }
    assert_eq!(
        api.list(&ListParams::default()).await.unwrap().items.len(),
        1
    );

    // Delay, then normal service.
    server.inject(Fault::delay(Duration::from_millis(300)));
    let started = std::time::Instant::now();
    api.list(&ListParams::default()).await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(300));

    // An abrupt drop mid-watch: the events before it arrive, the chunked body never ends.
    server.inject(Fault::drop_watch_after(1));
    let raw = raw_get(
        &server,
        &format!("{path}?watch=1&timeoutSeconds=5"),
        "application/json",
    )
    .await;
    assert_eq!(raw.status, 200);
    assert!(!raw.complete, "no terminating chunk");
    assert_eq!(lines(&raw.body).len(), 1);

    // Refused connections, then service again.
    server.refuse_connections(Duration::from_millis(300));
    assert!(api.list(&ListParams::default()).await.is_err());
    tokio::time::sleep(Duration::from_millis(350)).await;
    api.list(&ListParams::default()).await.unwrap();
}

#[tokio::test]
async fn send_initial_events_is_422_on_1_28_and_streams_when_enabled() {
    let server = FakeApiServer::start().await;
    seed(&server, 2);
    let path = "/api/v1/namespaces/fixtures/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=2";
    let raw = raw_get(&server, path, "application/json").await;
    assert_eq!(
        (raw.status, raw.body),
        (422, fixture("watchlist-sendInitialEvents.json"))
    );

    server.set_watch_list_supported(true);
    let rv = server.resource_version();
    let api: Api<DynamicObject> = Api::namespaced_with(server.client(), "fixtures", &cm_resource());
    let stream = api
        .watch(&WatchParams::streaming_lists().timeout(2), "")
        .await
        .unwrap();
    let events: Vec<WatchEvent<DynamicObject>> = stream.take(3).try_collect().await.unwrap();
    assert!(
        matches!(&events[0], WatchEvent::Added(o) if o.metadata.name.as_deref() == Some("cm-1"))
    );
    assert!(
        matches!(&events[1], WatchEvent::Added(o) if o.metadata.name.as_deref() == Some("cm-2"))
    );
    match &events[2] {
        WatchEvent::Bookmark(b) => {
            assert_eq!(b.metadata.resource_version, rv.to_string());
            assert_eq!(
                b.metadata
                    .annotations
                    .get("k8s.io/initial-events-end")
                    .map(String::as_str),
                Some("true")
            );
        }
        other => panic!("expected the initial-events-end bookmark, got {other:?}"),
    }
}

#[tokio::test]
async fn kubeconfig_and_drop() {
    let server = FakeApiServer::start().await;
    server.create(
        "widgets.example.com",
        json!({"metadata": {"name": "w"}, "spec": {"size": 1}}),
    );
    let dir = tempfile::tempdir().unwrap();
    let path = server.write_kubeconfig(dir.path());
    let kubeconfig = kube::config::Kubeconfig::read_from(&path).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .unwrap();
    assert_eq!(config.default_namespace, "default");
    let client = kube::Client::try_from(config).unwrap();
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("example.com", "v1", "Widget"),
        "widgets",
    );
    let api: Api<DynamicObject> = Api::default_namespaced_with(client, &ar);
    let w = api.get("w").await.unwrap();
    assert_eq!(w.data["spec"]["size"], 1);
    assert_eq!(server.objects("wd").len(), 1);
    match api.get("missing").await {
        Err(kube::Error::Api(s)) => {
            assert_eq!(s.message, r#"widgets.example.com "missing" not found"#)
        }
        other => panic!("{other:?}"),
    }

    // Dropping the server ends open watches and frees the port.
    let mut stream = api
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();
    assert!(matches!(
        stream.next().await,
        Some(Ok(WatchEvent::Added(_)))
    ));
    let addr = server.addr();
    drop(server);
    let end = tokio::time::timeout(Duration::from_secs(2), stream.next())
        .await
        .expect("watch ended");
    assert!(!matches!(end, Some(Ok(_))));
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(TcpStream::connect(addr).await.is_err());
}

/// kube-apiserver 1.33's `StreamingCollectionEncodingToJSON` (apimachinery v0.33.0
/// `streamingEncodeList`) writes the same bytes as 1.28's whole encoding, item by item through
/// net/http's 2048-byte buffer: chunks of 2048 bytes, and a `Content-Length` only for a body that
/// fits in that buffer.
#[tokio::test]
async fn a_list_encoded_as_it_is_sent_has_the_bytes_of_the_whole_encoding_in_go_sized_chunks() {
    let server = FakeApiServer::start().await;
    seed(&server, 3);
    for i in 0..60 {
        server.create(
            "configmaps",
            json!({
                "metadata": {
                    "name": format!("big-{i:02}"),
                    "namespace": "fixtures",
                    "labels": {"app": format!("app-{}", i % 3)},
                    // Go escapes these wherever they are; a chunk boundary may fall inside one.
                    "annotations": {"note": "<b>&\u{2028}é</b>"},
                    "ownerReferences": [{"uid": "u", "name": "owner", "kind": "Deployment", "apiVersion": "apps/v1"}],
                    "managedFields": [{"time": "2024-01-01T00:00:00Z", "manager": "kubectl", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {}}}],
                },
                "data": {"payload": "x".repeat(i * 7)},
            }),
        );
    }
    let ns = "/api/v1/namespaces/fixtures/configmaps";
    let metadata = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
    let mut requests: Vec<(String, &str)> = vec![
        (format!("{ns}?resourceVersion=0"), "application/json"),
        (
            format!("{ns}?labelSelector=app%3Dapp-1"),
            "application/json",
        ),
        (format!("{ns}?resourceVersion=0"), metadata),
        (
            format!("{ns}?fieldSelector=metadata.name%3Dcm-1"),
            "application/json",
        ),
        (
            "/api/v1/namespaces/empty/configmaps".into(),
            "application/json",
        ),
    ];
    // Every page of a paged list, following the continue tokens.
    let mut next = Some(format!("{ns}?limit=25"));
    while let Some(path) = next.take() {
        let page: Value =
            serde_json::from_str(&raw_get(&server, &path, "application/json").await.body).unwrap();
        if let Some(token) = page["metadata"]["continue"].as_str() {
            next = Some(format!("{ns}?limit=25&continue={token}"));
        }
        requests.push((path, "application/json"));
    }
    assert_eq!(requests.len(), 5 + 3);

    for (path, accept) in &requests {
        server.set_collection_encoding(CollectionEncoding::Whole);
        let whole = raw_get(&server, path, accept).await;
        server.set_collection_encoding(CollectionEncoding::Streaming);
        let streamed = raw_get(&server, path, accept).await;
        assert_eq!(streamed.status, 200, "{path}");
        assert_eq!(streamed.body, whole.body, "{path} {accept}");
        assert!(streamed.complete, "{path}");
        assert!(streamed.head.contains("content-type: application/json"));
        assert!(streamed.head.contains("audit-id: "));
        if streamed.body.len() <= 2048 {
            assert!(
                streamed
                    .head
                    .contains(&format!("content-length: {}", streamed.body.len())),
                "{path}: a body that fits net/http's buffer has a length\n{}",
                streamed.head
            );
        } else {
            assert!(
                streamed.head.contains("transfer-encoding: chunked"),
                "{path}"
            );
            let (last, full) = streamed.chunks.split_last().unwrap();
            assert!(!full.is_empty(), "{path}: {:?}", streamed.chunks);
            assert!(
                full.iter().all(|&size| size == 2048),
                "{path}: {:?}",
                streamed.chunks
            );
            assert!((1..=2048).contains(last), "{path}: {:?}", streamed.chunks);
        }
    }
    // The whole list is many chunks; a page of 25 and the selections are several.
    server.set_collection_encoding(CollectionEncoding::Streaming);
    let all = raw_get(&server, &requests[0].0, "application/json").await;
    let listed: Value = serde_json::from_str(&all.body).unwrap();
    assert_eq!(listed["items"].as_array().unwrap().len(), 63);
    assert!(all.chunks.len() > 10, "{:?}", all.chunks);
    assert_eq!(
        key_order(&all.body),
        key_order(&fixture("list-configmaps-rv0.json"))
    );
    // The first page of a paged list: the fixture's shape, continue token and count included.
    let first: Value = serde_json::from_str(
        &raw_get(&server, &format!("{ns}?limit=25"), "application/json")
            .await
            .body,
    )
    .unwrap();
    assert_eq!(first["metadata"]["remainingItemCount"], 63 - 25);
    assert_eq!(
        keys(&first["metadata"]),
        keys(
            &serde_json::from_str::<Value>(&fixture("list-configmaps-page1.json")).unwrap()["metadata"]
        )
    );
}
