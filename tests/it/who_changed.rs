//! Who wrote a change, as the newest managedFields entries say (`by kubectl-client-side-apply
//! (Update)`); a `kubectl apply`'s last-applied-configuration annotation summarised; the fields a
//! metadata-only informer's change was in; replays of recordings that carry managedFields.

use serde_json::{Value, json};

use crate::support::binary::{json_lines, run_offline, stderr};

const HEADER: &str = r#"{"kind":"header","v":1,"resource":{"group":"","version":"v1","kind":"ConfigMap","plural":"configmaps","namespaced":true},"namespace":"default","startedAt":"2026-01-05T10:00:00Z"}"#;

/// A managedFields entry owning `fields` (top-level names) at second `second` past 10:00.
fn entry(
    manager: &str,
    operation: &str,
    subresource: Option<&str>,
    second: u32,
    fields: &[&str],
) -> Value {
    let mut owned = serde_json::Map::new();
    for field in fields {
        owned.insert(format!("f:{field}"), json!({"f:v": {}}));
    }
    let mut entry = json!({
        "manager": manager,
        "operation": operation,
        "apiVersion": "v1",
        "time": format!("2026-01-05T10:00:{second:02}Z"),
        "fieldsType": "FieldsV1",
        "fieldsV1": owned,
    });
    if let Some(subresource) = subresource {
        entry["subresource"] = json!(subresource);
    }
    entry
}

/// The ConfigMap `app-config` at `rv`, its data `v` and managedFields `managed`, as `kubectl
/// apply` leaves it (its last-applied-configuration annotation holds the data applied).
fn cm(rv: u32, v: &str, managed: &[Value], extra: Value) -> Value {
    let applied = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"annotations": {}, "name": "app-config", "namespace": "default"},
        "data": {"v": v}});
    let mut obj = json!({"kind": "ConfigMap", "apiVersion": "v1",
        "metadata": {"name": "app-config", "namespace": "default", "resourceVersion": rv.to_string(),
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": applied.to_string()},
            "managedFields": managed},
        "data": {"v": v}});
    if let Value::Object(extra) = extra {
        for (key, value) in extra {
            obj["metadata"][key] = value;
        }
    }
    obj
}

/// A list, `kubectl apply` changing `v`, a controller's own write, and a graceful deletion's
/// `deletionTimestamp`, which the field manager does not stamp.
fn recording() -> Vec<u8> {
    let kubectl = |second| {
        entry(
            "kubectl-client-side-apply",
            "Update",
            None,
            second,
            &["data"],
        )
    };
    let web = entry("web", "Apply", Some("status"), 9, &["data"]);
    let lines = [
        json!({"t": 0, "type": "LIST", "resourceVersion": "1",
               "items": [cm(1, "1", &[kubectl(1)], json!({}))]}),
        json!({"t": 1000, "type": "MODIFIED", "object": cm(2, "2", &[kubectl(5)], json!({}))}),
        json!({"t": 2000, "type": "MODIFIED",
               "object": cm(3, "2", &[kubectl(5), web.clone()], json!({"labels": {"seen": "yes"}}))}),
        json!({"t": 3000, "type": "MODIFIED",
               "object": cm(4, "2", &[kubectl(5), web],
                            json!({"labels": {"seen": "yes"}, "finalizers": ["x"],
                                   "deletionTimestamp": "2026-01-05T10:00:12Z"}))}),
    ];
    let mut text = format!("{HEADER}\n");
    for line in lines {
        text.push_str(&line.to_string());
        text.push('\n');
    }
    text.into_bytes()
}

/// Each Updated row's text after its RV/WAIT columns: what changed and who wrote it.
fn updated_rows(stdout: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter(|l| l.contains("Updated"))
        .map(|l| {
            let after = l.split_once("µs").map_or(l, |(_, rest)| rest);
            after.trim().to_owned()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_names_its_writer_and_summarises_the_last_applied_configuration() {
    let out = run_offline(&["replay", "-", "-q"], Some(recording())).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        updated_rows(&out.stdout),
        [
            "data.v 1→2, last-applied-configuration updated  by kubectl-client-side-apply (Update)",
            "metadata.labels +  by web (Apply, status)",
            // A graceful deletion goes around the field manager: nobody is named rather than the
            // last writer.
            "metadata.finalizers +, metadata.deletionTimestamp +2026-01-05T10:00:12Z",
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wide_output_shows_what_changed_inside_the_last_applied_configuration() {
    let out = run_offline(&["replay", "-", "-q", "-o", "wide"], Some(recording())).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rows = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        rows.contains(
            "data.v 1→2, last-applied-configuration updated (data.v 1→2)  by \
             kubectl-client-side-apply (Update)"
        ),
        "{rows}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jsonl_deltas_carry_their_manager() {
    let out = run_offline(&["replay", "-", "-o", "jsonl"], Some(recording())).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let batches: Vec<Value> = json_lines(&out.stdout)
        .into_iter()
        .filter(|l| l["kind"] == "batch")
        .collect();
    // What the default transform keeps of managedFields to say so is not the object's own.
    for batch in &batches {
        let metadata = &batch["deltas"][0]["object"]["metadata"];
        assert_eq!(metadata["name"], "app-config");
        assert!(metadata.get("managedFields").is_none(), "{metadata}");
    }
    let managers: Vec<Value> = batches
        .iter()
        .map(|l| l["deltas"][0]["manager"].clone())
        .collect();
    assert_eq!(
        managers,
        [
            Value::Null,
            json!([{"name": "kubectl-client-side-apply", "operation": "Update",
                    "time": "2026-01-05T10:00:05Z"}]),
            json!([{"name": "web", "operation": "Apply", "subresource": "status",
                    "time": "2026-01-05T10:00:09Z"}]),
            Value::Null,
        ]
    );
}

/// A metadata-only recording: the objects are `PartialObjectMetadata`, whose managedFields still
/// say which top-level fields their writer owns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_metadata_only_change_names_the_fields_its_writer_owns() {
    let header = HEADER.replace(
        r#""namespace":"default","#,
        r#""namespace":"default","metadataOnly":true,"#,
    );
    let partial = |rv: u32, managed: &[Value]| {
        json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
               "metadata": {"name": "app-config", "namespace": "default",
                            "resourceVersion": rv.to_string(), "managedFields": managed}})
    };
    let old = entry("kubectl-client-side-apply", "Update", None, 1, &["data"]);
    let new = entry(
        "kubectl-client-side-apply",
        "Update",
        None,
        5,
        &["data", "binaryData"],
    );
    let lines = [
        json!({"t": 0, "type": "LIST", "resourceVersion": "1", "items": [partial(1, &[old])]}),
        json!({"t": 1000, "type": "MODIFIED", "object": partial(2, &[new])}),
        // No entry is new: what changed is not said.
        json!({"t": 2000, "type": "MODIFIED", "object": partial(3, &[entry("kubectl-client-side-apply", "Update", None, 5, &["data", "binaryData"])])}),
    ];
    let mut text = format!("{header}\n");
    for line in lines {
        text.push_str(&line.to_string());
        text.push('\n');
    }
    let out = run_offline(&["replay", "-", "-q"], Some(text.into_bytes())).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        updated_rows(&out.stdout),
        [
            "changed outside metadata (binaryData or data)  by kubectl-client-side-apply (Update)",
            "changed outside metadata",
        ]
    );
}

/// A recording made before managedFields were kept names nobody, without an error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_without_managed_fields_names_nobody() {
    let text = format!(
        "{HEADER}\n{}\n{}\n",
        json!({"t": 0, "type": "LIST", "resourceVersion": "1",
               "items": [{"metadata": {"name": "a", "namespace": "default", "resourceVersion": "1"}, "data": {"v": "1"}}]}),
        json!({"t": 1000, "type": "MODIFIED",
               "object": {"metadata": {"name": "a", "namespace": "default", "resourceVersion": "2"}, "data": {"v": "2"}}}),
    );
    let out = run_offline(&["replay", "-", "-q"], Some(text.into_bytes())).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(updated_rows(&out.stdout), ["data.v 1→2"]);
}
