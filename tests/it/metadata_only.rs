//! `--metadata-only`: `PartialObjectMetadata` lists and watches, as client-go's metadata informer
//! (`metadata/metadatainformer` over `metadata.Client`) and kube's `list_metadata` /
//! `watch_metadata` ask for them, served by the fake API server as kube-apiserver v1.28.7 serves
//! them (`tests/fixtures/apiserver-v1.28.7/list-metadata-*`, `watch-metadata-events.jsonl`).

use crate::support;

use serde_json::{Value, json};
use support::fake_apiserver::FakeApiServer;

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/apiserver-v1.28.7"
);

const LIST_ACCEPT: &str = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
const WATCH_ACCEPT: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{FIXTURES}/{name}")).expect("fixture")
}

/// `GET path` with `Accept: accept`: the status and the body as sent.
async fn get(server: &FakeApiServer, path: &str, accept: &str) -> (u16, String) {
    use http_body_util::BodyExt as _;
    let request = http::Request::get(path)
        .header(http::header::ACCEPT, accept)
        .body(kube::client::Body::empty())
        .unwrap();
    let response = server.client().send(request).await.expect("response");
    let status = response.status().as_u16();
    let body = response.into_body().collect().await.expect("body").to_bytes();
    (status, String::from_utf8(body.to_vec()).expect("utf-8"))
}

/// A captured object's metadata with `data`, to store in the fake server as the real one had it.
fn stored(metadata: &Value) -> Value {
    json!({"metadata": metadata, "data": {"k": "v"}})
}

/// `text` with each `"resourceVersion":"<fake>"` replaced by the captured server's number.
fn with_real_versions(text: &str, versions: &[(u64, &str)]) -> String {
    versions.iter().fold(text.to_owned(), |text, (ours, real)| {
        text.replace(
            &format!(r#""resourceVersion":"{ours}""#),
            &format!(r#""resourceVersion":"{real}""#),
        )
    })
}

#[tokio::test]
async fn the_fake_server_serves_partial_object_metadata_byte_for_byte_as_kube_apiserver() {
    let server = FakeApiServer::start().await;
    let list_fixture = fixture("list-metadata-configmaps-page1.json");
    let watch_fixture = fixture("watch-metadata-events.jsonl");
    let real_list: Value = serde_json::from_str(&list_fixture).unwrap();
    let real_events: Vec<Value> = watch_fixture
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let meta = |v: &Value| v["metadata"].clone();
    let (a, b) = (meta(&real_list["items"][0]), meta(&real_list["items"][1]));
    let (c, d) = (meta(&real_events[1]["object"]), meta(&real_events[2]["object"]));
    server.create("configmaps", stored(&a));
    let b_rv = server.create("configmaps", stored(&b));
    server.create("configmaps", stored(&c));
    let list_rv = server.update("configmaps", stored(&a));

    let path = "/api/v1/namespaces/fixtures-meta/configmaps?limit=2";
    let (status, body) = get(&server, path, LIST_ACCEPT).await;
    assert_eq!(status, 200, "{body}");
    let ours: Value = serde_json::from_str(&body).unwrap();
    let real_token = real_list["metadata"]["continue"].as_str().unwrap();
    let body = body.replace(ours["metadata"]["continue"].as_str().unwrap(), real_token);
    let body = with_real_versions(&body, &[(list_rv, "79884"), (b_rv, "79882")]);
    assert_eq!(body.trim_end(), list_fixture.trim_end());

    // The watch from the list's resourceVersion: a data-only change of b, c deleted, d added,
    // an annotation on a, then the bookmark before the timeout.
    let watch = tokio::spawn({
        let server_client = server.client();
        let path = format!(
            "/api/v1/namespaces/fixtures-meta/configmaps?watch=true&resourceVersion={list_rv}&allowWatchBookmarks=true&timeoutSeconds=1"
        );
        async move {
            use http_body_util::BodyExt as _;
            let request = http::Request::get(path)
                .header(http::header::ACCEPT, WATCH_ACCEPT)
                .body(kube::client::Body::empty())
                .unwrap();
            let response = server_client.send(request).await.expect("response");
            let body = response.into_body().collect().await.expect("body").to_bytes();
            String::from_utf8(body.to_vec()).unwrap()
        }
    });
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let mut versions = Vec::new();
    versions.push(server.update("configmaps", stored(&meta(&real_events[0]["object"]))));
    versions.push(server.delete("configmaps", "fixtures-meta", "c"));
    versions.push(server.create("configmaps", stored(&d)));
    versions.push(server.update("configmaps", stored(&meta(&real_events[3]["object"]))));
    let body = watch.await.unwrap();
    let real = ["79885", "79886", "79887", "79888"];
    let pairs: Vec<(u64, &str)> = versions.into_iter().zip(real).collect();
    assert_eq!(with_real_versions(&body, &pairs), watch_fixture);
}

#[tokio::test]
async fn the_fake_server_refuses_a_list_as_one_object_and_a_watch_as_a_list() {
    let server = FakeApiServer::start().await;
    let path = "/api/v1/namespaces/default/configmaps";
    let (status, body) = get(&server, path, WATCH_ACCEPT).await;
    assert_eq!(status, 406, "{body}");
    assert!(body.contains(r#""reason":"NotAcceptable""#), "{body}");
    let (status, _) = get(&server, &format!("{path}?watch=true&timeoutSeconds=1"), LIST_ACCEPT).await;
    assert_eq!(status, 406);
    // client-go's metadata client asks for protobuf first, then JSON: JSON it gets.
    let accept = format!("application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,{LIST_ACCEPT}");
    let (status, body) = get(&server, path, &accept).await;
    assert_eq!(status, 200);
    assert!(body.starts_with(r#"{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1""#), "{body}");
}
