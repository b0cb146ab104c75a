use serde_json::json;

use super::*;
use crate::cache::test_objects::with_meta;

fn deployments() -> OwnerKind {
    OwnerKind {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        namespaced: true,
    }
}

fn owner_ref(api_version: &str, kind: &str, name: &str, controller: bool) -> serde_json::Value {
    json!({ "apiVersion": api_version, "kind": kind, "name": name, "uid": format!("{name}-uid"), "controller": controller })
}

#[test]
fn enqueue_request_for_owner_only_controller_owner() {
    let rs = with_meta(
        "apps/v1",
        "ReplicaSet",
        "demo",
        "web-7b9c",
        1,
        json!({ "ownerReferences": [
            owner_ref("apps/v1", "Deployment", "other", false),
            owner_ref("apps/v1beta2", "Deployment", "web", true),
        ] }),
    );
    // Only the controller reference, matched on group and kind whatever its version.
    assert_eq!(controller_owner_keys(&deployments(), &rs), ["demo/web"]);
    let not_controlled = with_meta(
        "apps/v1",
        "ReplicaSet",
        "demo",
        "x",
        1,
        json!({ "ownerReferences": [owner_ref("apps/v1", "Deployment", "web", false)] }),
    );
    assert!(controller_owner_keys(&deployments(), &not_controlled).is_empty());
    let cluster_owner = OwnerKind {
        api_version: "v1".into(),
        kind: "Node".into(),
        namespaced: false,
    };
    let pod = with_meta(
        "v1",
        "Pod",
        "demo",
        "p",
        1,
        json!({ "ownerReferences": [owner_ref("v1", "Node", "n1", true)] }),
    );
    assert_eq!(controller_owner_keys(&cluster_owner, &pod), ["n1"]);
}

#[test]
fn trigger_owners_maps_every_owner_reference_of_the_owner_type() {
    let rs = with_meta(
        "apps/v1",
        "ReplicaSet",
        "demo",
        "web-7b9c",
        1,
        json!({ "ownerReferences": [
            owner_ref("apps/v1", "Deployment", "other", false),
            owner_ref("apps/v1", "Deployment", "web", true),
            owner_ref("apps/v1beta2", "Deployment", "old", true),
            owner_ref("v1", "ConfigMap", "cm", false),
        ] }),
    );
    // Every reference whose apiVersion and kind are exactly the owner's, controller or not.
    assert_eq!(
        kube_owner_keys(&deployments(), &rs),
        ["demo/other", "demo/web"]
    );
}
