use serde_json::json;

use super::*;

fn lines(old: Value, new: Value) -> Vec<String> {
    diff(&old, &new, false)
        .iter()
        .map(|c| c.to_string())
        .collect()
}

#[test]
fn scalar_changes_read_old_arrow_new() {
    let old = json!({"spec": {"replicas": 2}, "status": {"phase": "Pending"}});
    let new = json!({"spec": {"replicas": 3}, "status": {"phase": "Running"}});
    assert_eq!(
        lines(old, new),
        ["spec.replicas 2→3", "status.phase Pending→Running"]
    );
}

#[test]
fn added_and_removed_fields_show_their_values() {
    let old = json!({"metadata": {"labels": {"app": "web", "old": "x"}}});
    let new = json!({"metadata": {"labels": {"app": "web", "tier": "front"}}});
    assert_eq!(
        lines(old, new),
        [
            "metadata.labels.old x→(absent)",
            "metadata.labels.tier +front"
        ]
    );
    // An omitempty count going to 0 is a value that went, not a field dropped; a node assigned
    // says which; maps and lists without a merge key stay bare.
    let old = json!({"spec": {"tolerations": [{"key": "a"}]}, "status": {"updatedReplicas": 3}});
    let new = json!({"spec": {"nodeName": "node-3", "selector": {"a": "b"}}, "status": {}});
    assert_eq!(
        lines(old, new),
        [
            "spec.nodeName +node-3",
            "spec.selector +",
            "spec.tolerations -",
            "status.updatedReplicas 3→(absent)"
        ]
    );
}

#[test]
fn a_list_that_appears_or_goes_whole_is_itemised_by_its_merge_key() {
    let old = json!({"spec": {"containers": [{"name": "web"}]}, "status": {}});
    let new = json!({"spec": {}, "status": {"conditions": [
        {"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": "False"}]}});
    assert_eq!(
        lines(old, new),
        [
            "spec.containers[web] -",
            "status.conditions[PodScheduled] +True",
            "status.conditions[Ready] +False"
        ]
    );
}

#[test]
fn the_decisive_changes_come_before_the_bookkeeping() {
    // A pod killed in a rollout: the timestamps sort first by path, the phase and Ready are
    // what happened.
    let old = json!({"status": {"phase": "Running", "conditions": [
        {"type": "Ready", "status": "True", "lastTransitionTime": "t1"}],
        "containerStatuses": [{"name": "c", "started": true}]}});
    let new = json!({"status": {"phase": "Succeeded", "conditions": [
        {"type": "Ready", "status": "False", "lastTransitionTime": "t2", "reason": "PodCompleted"}],
        "containerStatuses": [{"name": "c", "started": false}]}});
    assert_eq!(
        lines(old, new),
        [
            "status.conditions[Ready].status True→False",
            "status.phase Running→Succeeded",
            "status.conditions[Ready].reason +PodCompleted",
            "status.containerStatuses[c].started true→false",
            "status.conditions[Ready].lastTransitionTime t1→t2",
        ]
    );
    // A Deployment's new revision before its condition's bookkeeping; a reason or message is
    // bookkeeping only when its condition's status stayed.
    let old = json!({"metadata": {"annotations": {"deployment.kubernetes.io/revision": "2"}},
        "status": {"observedGeneration": 2, "replicas": 3, "conditions": [{"type": "Progressing",
        "status": "True", "reason": "A", "lastUpdateTime": "t1"}]}});
    let new = json!({"metadata": {"annotations": {"deployment.kubernetes.io/revision": "3"}},
        "status": {"observedGeneration": 3, "replicas": 4, "conditions": [{"type": "Progressing",
        "status": "True", "reason": "B", "lastUpdateTime": "t2"}]}});
    assert_eq!(
        lines(old, new),
        [
            "status.replicas 3→4",
            r#"metadata.annotations["deployment.kubernetes.io/revision"] 2→3"#,
            "status.conditions[Progressing].lastUpdateTime t1→t2",
            "status.conditions[Progressing].reason A→B",
            "status.observedGeneration 2→3",
        ]
    );
}

#[test]
fn long_strings_are_cut_around_where_they_differ_keeping_quoted_names_whole() {
    let old = json!({"m": r#"ReplicaSet "web-6c76689579" has successfully progressed."#});
    let new = json!({"m": r#"Created new replica set "web-66d4f5b8c9""#});
    assert_eq!(
        lines(old, new),
        [r#"m ReplicaSet "web-6c76689579" has…→Created new replica set "web-66d4f5b8c9""#]
    );
    // A long common prefix is left out up to a few characters before the difference.
    let old = json!({"m": r#"ReplicaSet "web-6c76689579" is progressing."#});
    let new = json!({"m": r#"ReplicaSet "web-66d4f5b8c9" is progressing."#});
    assert_eq!(
        lines(old, new),
        [r#"m ReplicaSet "web-6c76689579" is …→ReplicaSet "web-66d4f5b8c9" is …"#]
    );
    let prefix = "x".repeat(40);
    let old = json!({"m": format!("{prefix} alpha")});
    let new = json!({"m": format!("{prefix} beta")});
    assert_eq!(lines(old, new), ["m …xxxxxxx alpha→…xxxxxxx beta"]);
    let old = json!({"m": ""});
    let new = json!({"m": "y".repeat(40)});
    assert_eq!(lines(old, new), [format!(r#"m ""→{}…"#, "y".repeat(31))]);
}

#[test]
fn resource_version_and_managed_fields_are_noise() {
    let old = json!({"metadata": {"resourceVersion": "1", "managedFields": [{"manager": "a"}]}});
    let new = json!({"metadata": {"resourceVersion": "2", "managedFields": [{"manager": "b"}]}});
    assert!(diff(&old, &new, false).is_empty());
    assert_eq!(summary(&diff(&old, &new, false), 3), "no change");
}

#[test]
fn a_field_named_like_the_noise_elsewhere_is_not_ignored() {
    let old = json!({"spec": {"resourceVersion": "1"}});
    let new = json!({"spec": {"resourceVersion": "2"}});
    assert_eq!(lines(old, new), ["spec.resourceVersion 1→2"]);
}

#[test]
fn metadata_comes_after_the_other_top_level_fields() {
    let old = json!({"metadata": {"generation": 1}, "spec": {"replicas": 1}, "data": {"a": "1"}});
    let new = json!({"metadata": {"generation": 2}, "spec": {"replicas": 2}, "data": {"a": "2"}});
    assert_eq!(
        lines(old, new),
        ["data.a 1→2", "spec.replicas 1→2", "metadata.generation 1→2"]
    );
}

#[test]
fn keys_with_dots_are_quoted() {
    let old = json!({"metadata": {"labels": {}}});
    let new = json!({"metadata": {"labels": {"app.kubernetes.io/name": "web"}}});
    assert_eq!(
        lines(old, new),
        [r#"metadata.labels["app.kubernetes.io/name"] +web"#]
    );
}

#[test]
fn lists_of_named_objects_are_compared_by_name() {
    let old = json!({"spec": {"containers": [
        {"name": "web", "image": "nginx:1"}, {"name": "log", "image": "fluent:1"}]}});
    // Reordered, one image changed, one container added.
    let new = json!({"spec": {"containers": [
        {"name": "log", "image": "fluent:1"}, {"name": "web", "image": "nginx:2"},
        {"name": "side", "image": "envoy"}]}});
    assert_eq!(
        lines(old, new),
        [
            "spec.containers[side] +",
            "spec.containers[web].image nginx:1→nginx:2"
        ]
    );
}

#[test]
fn conditions_are_compared_by_type() {
    let old = json!({"status": {"conditions": [{"type": "Ready", "status": "False"}]}});
    let new = json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}});
    assert_eq!(
        lines(old, new),
        ["status.conditions[Ready].status False→True"]
    );
}

#[test]
fn other_lists_are_compared_by_index() {
    let old = json!({"spec": {"args": ["a", "b"]}});
    let new = json!({"spec": {"args": ["a", "c", "d"]}});
    assert_eq!(lines(old, new), ["spec.args[1] b→c", "spec.args[2] +d"]);
    // Duplicate names: the name cannot identify an element.
    let old = json!({"items": [{"name": "x", "v": 1}, {"name": "x", "v": 2}]});
    let new = json!({"items": [{"name": "x", "v": 1}, {"name": "x", "v": 3}]});
    assert_eq!(lines(old, new), ["items[1].v 2→3"]);
}

#[test]
fn a_change_of_shape_shows_both_shapes() {
    let old = json!({"spec": {"x": 3}});
    let new = json!({"spec": {"x": {"y": 1}}});
    assert_eq!(lines(old, new), ["spec.x 3→{…}"]);
}

#[test]
fn long_values_are_cut() {
    let long = "x".repeat(100);
    let old = json!({"data": {"k": "short"}});
    let new = json!({"data": {"k": long}});
    let text = lines(old, new).remove(0);
    assert!(text.ends_with('…'), "{text}");
    assert!(text.chars().count() < 50, "{text}");
}

#[test]
fn secret_values_are_redacted_but_their_keys_are_shown() {
    let old = json!({"data": {"password": "aHVudGVyMg==", "user": "YQ=="}});
    let new = json!({"data": {"password": "c2VjcmV0", "token": "dA=="}});
    let changes: Vec<String> = diff(&old, &new, true)
        .iter()
        .map(|c| c.to_string())
        .collect();
    assert_eq!(
        changes,
        ["data.password <redacted>", "data.token +", "data.user -"]
    );
    assert!(!changes.concat().contains("c2VjcmV0"));
    let shown: Vec<String> = diff(&old, &new, false)
        .iter()
        .map(|c| c.to_string())
        .collect();
    assert_eq!(shown[0], "data.password aHVudGVyMg==→c2VjcmV0");
}

#[test]
fn the_summary_keeps_the_first_changes_and_counts_the_rest() {
    let old = json!({"spec": {"a": 1, "b": 1, "c": 1, "d": 1}});
    let new = json!({"spec": {"a": 2, "b": 2, "c": 2, "d": 2}});
    let changes = diff(&old, &new, false);
    assert_eq!(summary(&changes, 2), "spec.a 1→2, spec.b 1→2 (+2 more)");
    assert_eq!(summary(&changes, 4).matches('→').count(), 4);
}

#[test]
fn empty_strings_and_nulls_are_visible() {
    let old = json!({"spec": {"a": "", "b": null}});
    let new = json!({"spec": {"a": "x", "b": true}});
    assert_eq!(lines(old, new), [r#"spec.a ""→x"#, "spec.b null→true"]);
}

#[test]
fn diffing_objects_skips_identical_fields_but_finds_the_same_changes() {
    let old = crate::object::Object::from_value(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "s", "resourceVersion": "1", "labels": {"a": "1"}},
        "data": {"password": "x", "user": "u"},
        "spec": {"big": [1, 2, 3], "same": true},
        "gone": 1
    }))
    .unwrap();
    let new = crate::object::Object::from_value(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "s", "resourceVersion": "2", "labels": {"a": "2"}},
        "data": {"password": "y", "user": "u"},
        "spec": {"big": [1, 2, 3], "same": true},
        "status": {"phase": "Running"}
    }))
    .unwrap();
    for redact in [false, true] {
        let show = |changes: Vec<Change>| changes.iter().map(|c| c.to_string()).collect::<Vec<_>>();
        let whole = show(diff(&old.to_value(), &new.to_value(), redact));
        assert!(!whole.is_empty());
        assert_eq!(
            show(diff_objects(&old, &new, redact)),
            whole,
            "redact: {redact}"
        );
    }
}

#[test]
fn control_characters_in_values_are_escaped() {
    let old = json!({"metadata": {"annotations": {"note": "a"}}});
    let new = json!({"metadata": {"annotations": {"note": "\u{1b}]0;x\u{7}b\n"}}});
    assert_eq!(
        lines(old, new),
        [r"metadata.annotations.note a→\u{1b}]0;x\u{7}b\n"]
    );
}

#[test]
fn a_field_too_deep_for_a_tree_reads_as_one_change() {
    let object = |leaf: &str| {
        let spec = format!(
            r#"{{"replicas":1,"deep":{}"{leaf}"{}}}"#,
            "[".repeat(300),
            "]".repeat(300)
        );
        let text = format!(r#"{{"metadata":{{"name":"a"}},"spec":{spec},"status":{{"x":1}}}}"#);
        let raw: &RawValue = serde_json::from_str(&text).unwrap();
        Object::from_json(raw).unwrap()
    };
    let changes = |old: &Object, new: &Object, redact| -> Vec<String> {
        diff_objects(old, new, redact)
            .iter()
            .map(|c| c.to_string())
            .collect()
    };
    assert_eq!(changes(&object("a"), &object("b"), false), ["spec {…}→{…}"]);
    assert_eq!(changes(&object("a"), &object("b"), true), ["spec {…}→{…}"]);
    assert!(changes(&object("a"), &object("a"), false).is_empty());
}

#[test]
fn a_secrets_last_applied_configuration_changes_only_as_redacted() {
    let secret = |password: &str, label: &str| {
        let applied = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"labels": {"app": label}, "name": "db"},
            "data": {"password": password}});
        Object::from_value(json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "db", "annotations": {crate::object::LAST_APPLIED: applied.to_string()}},
            "data": {"password": password}}))
        .unwrap()
    };
    let changes = |old: &Object, new: &Object| -> Vec<String> {
        diff_objects(old, new, true)
            .iter()
            .map(|c| c.to_string())
            .collect()
    };
    // Only the values changed: the annotation holding them changed too, and says so redacted.
    assert_eq!(
        changes(&secret("aHVudGVyMg==", "db"), &secret("c3dvcmRmaXNo", "db")),
        [
            "data.password <redacted>",
            r#"metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"] <redacted>"#
        ]
    );
    assert!(changes(&secret("aHVudGVyMg==", "db"), &secret("aHVudGVyMg==", "db")).is_empty());
    // Something else changed: shown, as every output shows it, redacted.
    let other = changes(
        &secret("aHVudGVyMg==", "db"),
        &secret("c3dvcmRmaXNo", "web"),
    );
    assert_eq!(other.len(), 2, "{other:?}");
    assert!(
        other[1].starts_with(
            r#"metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"] "#
        ),
        "{other:?}"
    );
    assert!(
        !other.concat().contains("aHVu") && !other.concat().contains("c3dv"),
        "{other:?}"
    );
}
