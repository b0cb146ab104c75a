use std::time::{Duration, Instant};

use serde_json::json;

use super::*;
use crate::cache::test_objects::with_meta;

fn pod(rv: u64, meta: serde_json::Value) -> std::sync::Arc<Object> {
    with_meta("v1", "Pod", "demo", "a", rv, meta)
}

fn preds(s: &str) -> Predicates {
    Predicates::parse(s).expect("predicates")
}

#[test]
fn parse_reads_names_joined_by_plus_and_rejects_others() {
    assert_eq!(
        preds("generation+labels").kinds(),
        &[PredicateKind::Generation, PredicateKind::Labels]
    );
    assert_eq!(preds("labels+labels").to_string(), "labels");
    let err = Predicates::parse("generation+status").unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown predicate \"status\": use generation, resource-version, labels or annotations, several joined by +"
    );
}

#[test]
fn generation_changed_predicate_update() {
    let p = preds("generation");
    let g1 = pod(1, json!({ "generation": 1 }));
    let g1_status = pod(2, json!({ "generation": 1 }));
    let g2 = pod(3, json!({ "generation": 2 }));
    assert!(!p.update_passes(&g1, &g1_status));
    assert!(p.update_passes(&g1_status, &g2));
    // GetGeneration is 0 for both when neither has one: equal, so the update is filtered.
    assert!(!p.update_passes(&pod(1, json!({})), &pod(2, json!({}))));
}

#[test]
fn resource_version_changed_predicate_update() {
    let p = preds("resource-version");
    assert!(p.update_passes(&pod(1, json!({})), &pod(2, json!({}))));
    assert!(!p.update_passes(&pod(1, json!({})), &pod(1, json!({}))));
}

#[test]
fn label_changed_predicate_update() {
    let p = preds("labels");
    let none = pod(1, json!({}));
    let empty = pod(2, json!({ "labels": {} }));
    // Written out, so the two maps reach the object in different orders.
    let ordered = |rv: u64, labels: &str| {
        let text = format!(
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"a","namespace":"demo","resourceVersion":"{rv}","labels":{labels}}}}}"#
        );
        std::sync::Arc::new(Object::from_json_text(&text).expect("a pod"))
    };
    let ab = ordered(3, r#"{"a":"1","b":"2"}"#);
    let ba = ordered(4, r#"{"b":"2","a":"1"}"#);
    let changed = pod(5, json!({ "labels": { "a": "1", "b": "3" } }));
    // maps.Equal: an absent map equals an empty one, and order does not matter.
    assert!(!p.update_passes(&none, &empty));
    assert!(!p.update_passes(&ab, &ba));
    assert!(p.update_passes(&ba, &changed));
}

#[test]
fn annotation_changed_predicate_update() {
    let p = preds("annotations");
    let a = pod(1, json!({ "annotations": { "x": "1" } }));
    let b = pod(2, json!({ "annotations": { "x": "2" } }));
    assert!(p.update_passes(&a, &b));
    assert!(!p.update_passes(&a, &pod(3, json!({ "annotations": { "x": "1" } }))));
}

#[test]
fn or_passes_an_update_when_any_predicate_passes() {
    let p = preds("generation+labels");
    let a = pod(1, json!({ "generation": 1, "labels": { "x": "1" } }));
    let labels = pod(2, json!({ "generation": 1, "labels": { "x": "2" } }));
    let status = pod(3, json!({ "generation": 1, "labels": { "x": "2" } }));
    assert!(p.update_passes(&a, &labels));
    assert!(!p.update_passes(&labels, &status));
    assert!(Predicates::default().update_passes(&labels, &status));
}

#[test]
fn predicate_filtering_hides_equal_predicate_values() {
    let t0 = Instant::now();
    let mut f = PredicateCache::new(preds("generation"));
    assert!(f.admit(&pod(1, json!({ "generation": 1 })), t0));
    assert!(!f.admit(&pod(2, json!({ "generation": 1 })), t0));
    assert!(f.admit(&pod(3, json!({ "generation": 2 })), t0));
}

#[test]
fn predicate_filtering_should_handle_recreated_resources_with_same_generation() {
    let t0 = Instant::now();
    let mut f = PredicateCache::new(preds("generation"));
    assert!(f.admit(&pod(1, json!({ "generation": 1, "uid": "u1" })), t0));
    assert!(!f.admit(&pod(2, json!({ "generation": 1, "uid": "u1" })), t0));
    assert!(f.admit(&pod(3, json!({ "generation": 1, "uid": "u2" })), t0));
}

#[test]
fn predicates_generation_none_always_passes() {
    let t0 = Instant::now();
    let mut f = PredicateCache::new(preds("generation"));
    assert!(f.admit(&pod(1, json!({})), t0));
    assert!(f.admit(&pod(1, json!({})), t0));
}

#[test]
fn combine_is_none_only_when_every_value_is_none() {
    // No generation, but labels hash (as an empty map when absent): the pair is a value, so an
    // object with nothing changed is dropped.
    let t0 = Instant::now();
    let mut f = PredicateCache::new(preds("generation+labels"));
    assert!(f.admit(&pod(1, json!({})), t0));
    assert!(!f.admit(&pod(2, json!({})), t0));
    assert!(f.admit(&pod(3, json!({ "labels": { "x": "1" } })), t0));
}

#[test]
fn predicate_filter_passes_stale_entries_and_refreshes_dropped_ones() {
    let t0 = Instant::now();
    let min = Duration::from_secs(60);
    let mut f = PredicateCache::new(preds("generation"));
    let g = |rv| pod(rv, json!({ "generation": 1 }));
    assert!(f.admit(&g(1), t0));
    // Dropped at 59 min, which refreshes its entry: at 61 min it is 2 min old, dropped again.
    assert!(!f.admit(&g(2), t0 + 59 * min));
    assert!(!f.admit(&g(3), t0 + 61 * min));
    // An entry at least the TTL old passes.
    assert!(f.admit(&g(4), t0 + 61 * min + PREDICATE_TTL));
}
