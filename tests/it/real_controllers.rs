//! Recordings of real controllers (`tests/recordings/real/`, made by
//! `tests/tools/record-real-cluster.sh` on kube-apiserver, kube-controller-manager,
//! kube-scheduler and kubemark kubelets v1.28.7): the CHANGES the binary shows for every update
//! name exactly the fields that differ between the recorded objects.
//!
//! The binary gives both sides: `-o wide` the CHANGES of each pop (every changed path), `-o jsonl`
//! the objects of the same pops (`seq` is the row's `#N`). The diff here is the test's own,
//! written from the API's conventions rather than from the renderer: a field on one side only is
//! one change, a list of objects keyed by `name` or `type` (strategic merge patch keys) is
//! compared item by item, and `metadata.resourceVersion` and `metadata.managedFields`, which
//! change on every write, are not compared.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::support::binary::{json_lines, run_offline};
use crate::support::paths::{hand_written, path_str};

const RECORDINGS: [&str; 6] = [
    "real/rollout-pods",
    "real/rollout-replicasets",
    "real/rollout-deployments",
    "real/gc-pods",
    "real/gc-replicasets",
    "real/gc-deployments",
];

async fn replay(name: &str, args: &[&str]) -> String {
    let path = hand_written(name);
    let mut all = vec!["replay", path_str(&path), "-q"];
    all.extend_from_slice(args);
    let out = run_offline(&all, None).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A path segment as the CHANGES column writes it: `.key`, or `["key"]` when the key has other
/// characters than letters, digits, `_`, `-` and `/`.
fn segment(path: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '/'));
    match (plain, path.is_empty()) {
        (true, true) => key.to_owned(),
        (true, false) => format!("{path}.{key}"),
        (false, _) => format!("{path}[{}]", Value::String(key.to_owned())),
    }
}

/// The list's items by their strategic merge key, if every item is an object with a distinct
/// string `name` (or else `type`).
fn keyed(items: &[Value]) -> Option<BTreeMap<String, &Value>> {
    ["name", "type"].into_iter().find_map(|field| {
        let map: BTreeMap<String, &Value> = items
            .iter()
            .map(|item| Some((item.get(field)?.as_str()?.to_owned(), item)))
            .collect::<Option<_>>()?;
        (map.len() == items.len()).then_some(map)
    })
}

/// A field present on one side only: one change, or one per item of a keyed list.
fn one_side(value: &Value, path: &str, out: &mut BTreeSet<String>) {
    if let Value::Array(items) = value
        && let Some(items) = keyed(items).filter(|m| !m.is_empty())
    {
        for key in items.keys() {
            out.insert(format!("{path}[{key}]"));
        }
        return;
    }
    out.insert(path.to_owned());
}

fn diff(old: &Value, new: &Value, path: &str, out: &mut BTreeSet<String>) {
    if old == new {
        return;
    }
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            for key in a.keys().chain(b.keys()).collect::<BTreeSet<_>>() {
                if path == "metadata" && matches!(key.as_str(), "resourceVersion" | "managedFields")
                {
                    continue;
                }
                let child = segment(path, key);
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => diff(x, y, &child, out),
                    (Some(v), None) | (None, Some(v)) => one_side(v, &child, out),
                    (None, None) => {}
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => match (keyed(a), keyed(b)) {
            (Some(a), Some(b)) => {
                for key in a.keys().chain(b.keys()).collect::<BTreeSet<_>>() {
                    let child = format!("{path}[{key}]");
                    match (a.get(key), b.get(key)) {
                        (Some(x), Some(y)) => diff(x, y, &child, out),
                        (Some(v), None) | (None, Some(v)) => one_side(v, &child, out),
                        (None, None) => {}
                    }
                }
            }
            _ => {
                for i in 0..a.len().max(b.len()) {
                    let child = format!("{path}[{i}]");
                    match (a.get(i), b.get(i)) {
                        (Some(x), Some(y)) => diff(x, y, &child, out),
                        (Some(v), None) | (None, Some(v)) => one_side(v, &child, out),
                        (None, None) => {}
                    }
                }
            }
        },
        _ => {
            out.insert(path.to_owned());
        }
    }
}

/// The CHANGES of row `#seq` of a wide timeline: its items, each starting with a path under
/// `metadata`, `spec` or `status` (values may hold `, ` but never start an item with those).
fn changes_of(timeline: &str, seq: u64) -> Vec<String> {
    let marker = format!("  #{seq}  ");
    let row = timeline
        .lines()
        .find(|l| l.contains(&marker))
        .unwrap_or_else(|| panic!("no row #{seq} in\n{timeline}"));
    let starts = ["metadata", "spec", "status"];
    let Some(begin) = starts
        .iter()
        .filter_map(|s| row.find(&format!("  {s}")))
        .min()
    else {
        return Vec::new();
    };
    let mut items: Vec<String> = Vec::new();
    for piece in row[begin + 2..].split(", ") {
        let starts_item = starts
            .iter()
            .any(|s| piece.starts_with(&format!("{s}.")) || piece.starts_with(&format!("{s}[")));
        match items.last_mut() {
            Some(last) if !starts_item => {
                last.push_str(", ");
                last.push_str(piece);
            }
            _ => items.push(piece.to_owned()),
        }
    }
    items
}

/// The path an item of CHANGES names: up to the space before its value.
fn item_path(item: &str) -> &str {
    // Quoted keys (`["deployment.kubernetes.io/revision"]`) hold no spaces in these recordings.
    item.split_once(' ').map_or(item, |(path, _)| path)
}

/// Every update of every real recording: the paths CHANGES names are the paths that differ
/// between the object the cache held and the one the pop brought.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_changes_of_every_real_update_are_the_fields_that_differ() {
    let mut compared = 0;
    for name in RECORDINGS {
        let timeline = replay(name, &["-o", "wide", "--color", "never"]).await;
        let jsonl = replay(name, &["-o", "jsonl"]).await;
        let mut cache: BTreeMap<String, Value> = BTreeMap::new();
        for batch in json_lines(jsonl.as_bytes())
            .into_iter()
            .filter(|l| l["kind"] == "batch")
        {
            let key = batch["key"].as_str().unwrap().to_owned();
            let deltas = batch["deltas"].as_array().unwrap();
            let newest = deltas.last().unwrap();
            let updated = deltas.iter().all(|d| d["type"] == "Updated");
            if let (true, Some(old)) = (updated, cache.get(&key)) {
                let mut expected = BTreeSet::new();
                diff(old, &newest["object"], "", &mut expected);
                let seq = batch["seq"].as_u64().unwrap();
                let shown: BTreeSet<String> = changes_of(&timeline, seq)
                    .iter()
                    .map(|item| item_path(item).to_owned())
                    .collect();
                assert_eq!(shown, expected, "{name} #{seq}");
                compared += 1;
            }
            if newest["type"] == "Deleted" {
                cache.remove(&key);
            } else {
                cache.insert(key, newest["object"].clone());
            }
        }
    }
    // The rollouts' updates, and the garbage collector's (pods marked and deleted).
    assert!(compared >= 60, "only {compared} updates compared");
}

/// The garbage collector's work after `kubectl delete deployment web` (background cascade): the
/// Deployment goes, then its ReplicaSet, then its pods, each marked for deletion by the kubelet's
/// grace period before it goes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_collection_deletes_the_replicaset_then_its_pods() {
    let deleted_at = |jsonl: &str| -> Vec<String> {
        json_lines(jsonl.as_bytes())
            .into_iter()
            .filter(|l| l["kind"] == "batch" && l["deltas"][0]["type"] == "Deleted")
            .map(|l| l["time"].as_str().unwrap().to_owned())
            .collect()
    };
    let deployment = deleted_at(&replay("real/gc-deployments", &["-o", "jsonl"]).await);
    let replicaset = deleted_at(&replay("real/gc-replicasets", &["-o", "jsonl"]).await);
    let pods = deleted_at(&replay("real/gc-pods", &["-o", "jsonl"]).await);
    assert_eq!((deployment.len(), replicaset.len(), pods.len()), (1, 1, 2));
    // RFC 3339 times of one clock, in UTC: their text sorts as they do.
    assert!(
        deployment[0] < replicaset[0],
        "{deployment:?} {replicaset:?}"
    );
    assert!(pods.iter().all(|t| *t > replicaset[0]), "{pods:?}");
}
