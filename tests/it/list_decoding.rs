//! A list page decoded as it arrives, on a thread of its own beside the connection's reader, as a
//! user sees it through `watch` and `index`: every object of a page larger than what may wait
//! between the two, and managedFields stripped as they are decoded unless asked to be kept.

use crate::support;

use serde_json::{Value, json};
use support::binary::{run, stderr};
use support::fake_apiserver::FakeApiServer;

const OBJECTS: usize = 1500;

/// `OBJECTS` ConfigMaps of ~1.2 KiB with managedFields, served as one page of ~1.8 MB: more than
/// the pieces that may wait for the decoder (`decode_thread::PIECES_IN_FLIGHT` × `BATCH`).
async fn server() -> (FakeApiServer, tempfile::TempDir, std::path::PathBuf) {
    let server = FakeApiServer::start().await;
    for i in 0..OBJECTS {
        server.create(
            "configmaps",
            json!({
                "metadata": {
                    "name": format!("cm-{i:04}"),
                    "namespace": "default",
                    "managedFields": [{"manager": "kubectl", "operation": "Apply",
                        "apiVersion": "v1", "fieldsType": "FieldsV1",
                        "fieldsV1": {"f:data": {"f:k": {}}}}],
                },
                "data": {"k": "x".repeat(1000 + i % 50)},
            }),
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    (server, dir, kubeconfig)
}

/// The listed objects' metadata, from `watch -o jsonl`'s batches.
fn listed_metadata(stdout: &[u8]) -> Vec<Value> {
    support::binary::json_lines(stdout)
        .into_iter()
        .filter(|l| l["kind"] == "batch")
        .map(|l| l["deltas"][0]["object"]["metadata"].clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_page_syncs_whole_with_managed_fields_stripped_unless_kept() {
    let (_server, _dir, kubeconfig) = server().await;
    let watch = [
        "watch",
        "cm",
        "-o",
        "jsonl",
        "--until-synced",
        "--page-size",
        "5000",
    ];
    let out = run(&kubeconfig, &watch).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listed = listed_metadata(&out.stdout);
    assert_eq!(listed.len(), OBJECTS);
    assert!(listed.iter().all(|m| m.get("managedFields").is_none()));
    assert_eq!(
        listed[OBJECTS - 1]["name"],
        format!("cm-{:04}", OBJECTS - 1)
    );

    let kept = [&watch[..], &["--no-strip-managed-fields"]].concat();
    let out = run(&kubeconfig, &kept).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listed = listed_metadata(&out.stdout);
    assert_eq!(listed.len(), OBJECTS);
    assert!(
        listed
            .iter()
            .all(|m| m["managedFields"][0]["manager"] == "kubectl"),
        "managedFields were stripped"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_lists_a_large_page_whole_and_keeps_managed_fields_when_asked() {
    let (_server, _dir, kubeconfig) = server().await;
    let index = ["index", "cm", "--by", "namespace", "--value", "default"];
    let out = run(
        &kubeconfig,
        &[&index[..], &["--keys-only", "--page-size", "5000"]].concat(),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let keys = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(keys.lines().count(), OBJECTS, "{}", stderr(&out));
    assert_eq!(keys.lines().last(), Some("default/cm-1499"));

    for (flags, kept) in [(&[][..], false), (&["--no-strip-managed-fields"][..], true)] {
        let args = [&index[..], &["-o", "json"], flags].concat();
        let out = run(&kubeconfig, &args).await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(
            text.matches("\"managedFields\"").count(),
            if kept { OBJECTS } else { 0 }
        );
    }
}
