//! Indexer: store operations and incremental index maintenance.

use std::sync::Arc;

use crate::object::Object;

use super::*;
use crate::cache::test_objects::{cm, node, rv};
use crate::cache::{DeletedFinalStateUnknown, DeltaObject, IndexSpec};

fn labelled(ns: &str, name: &str, rv: u64, tier: &str) -> Arc<Object> {
    let mut obj = (*cm(ns, name, rv)).clone();
    obj.meta_mut().labels = Some([("tier".to_owned(), tier.to_owned())].into());
    Arc::new(obj)
}

fn with_tier_index() -> Indexer<Object> {
    let mut indexer = Indexer::new();
    indexer
        .add_indexer("tier", IndexSpec::Label("tier".into()).index_func())
        .unwrap();
    indexer
}

fn strings(keys: Vec<Arc<str>>) -> Vec<String> {
    keys.iter().map(|k| k.to_string()).collect()
}

#[test]
fn store_add_update_get_list_and_delete() {
    let mut indexer = Indexer::new();
    indexer.add(cm("ns", "a", 1));
    indexer.add(node("n1", 2));
    indexer.update(cm("ns", "a", 3));
    assert_eq!(indexer.len(), 2);
    assert_eq!(indexer.get_by_key("ns/a").map(|o| rv(&o)), Some(3));
    assert_eq!(indexer.get(&cm("ns", "a", 0)).map(|o| rv(&o)), Some(3));
    assert_eq!(strings(indexer.list_keys()), ["n1", "ns/a"]);
    assert_eq!(indexer.list().len(), 2);

    assert!(
        indexer
            .delete(&DeltaObject::Object(cm("ns", "a", 9)))
            .is_some()
    );
    let tombstone = DeltaObject::from(DeletedFinalStateUnknown {
        key: "n1".into(),
        obj: None,
    });
    assert!(indexer.delete(&tombstone).is_some());
    assert!(
        indexer.delete(&tombstone).is_none(),
        "deleting an absent key is a no-op"
    );
    assert!(indexer.is_empty());
}

#[test]
fn store_replace_swaps_content_and_rebuilds_indices() {
    let mut indexer = with_tier_index();
    indexer.add(labelled("ns", "a", 1, "web"));
    indexer.replace([labelled("ns", "b", 2, "db"), labelled("ns", "c", 3, "db")]);
    assert_eq!(strings(indexer.list_keys()), ["ns/b", "ns/c"]);
    assert_eq!(indexer.list_index_func_values("tier").unwrap(), ["db"]);
    assert_eq!(
        strings(indexer.index_keys("tier", "db").unwrap()),
        ["ns/b", "ns/c"]
    );
}

#[test]
fn indices_follow_updates_and_drop_empty_values() {
    let mut indexer = with_tier_index();
    indexer.add(labelled("ns", "a", 1, "web"));
    indexer.add(labelled("ns", "b", 2, "web"));
    indexer.update(labelled("ns", "a", 3, "db"));
    assert_eq!(
        strings(indexer.index_keys("tier", "web").unwrap()),
        ["ns/b"]
    );
    assert_eq!(strings(indexer.index_keys("tier", "db").unwrap()), ["ns/a"]);

    indexer.delete_key("ns/b");
    assert_eq!(indexer.list_index_func_values("tier").unwrap(), ["db"]);
    assert!(indexer.index_keys("tier", "web").unwrap().is_empty());
    // An object losing the field leaves the index entirely.
    indexer.update(cm("ns", "a", 4));
    assert!(indexer.list_index_func_values("tier").unwrap().is_empty());
}

#[test]
fn multi_valued_indices_index_an_object_under_every_value() {
    let mut indexer = Indexer::new();
    indexer
        .add_indexer("labels", IndexSpec::Labels.index_func())
        .unwrap();
    let mut obj = (*cm("ns", "a", 1)).clone();
    obj.meta_mut().labels =
        Some([("app".into(), "web".into()), ("tier".into(), "fe".into())].into());
    let obj = Arc::new(obj);
    indexer.add(obj.clone());
    indexer.add(labelled("ns", "b", 2, "fe"));
    assert_eq!(
        indexer.index_value_counts("labels").unwrap(),
        [("app=web".to_owned(), 1), ("tier=fe".to_owned(), 2)]
    );
    assert_eq!(
        indexer.index_values("labels", &obj).unwrap(),
        ["app=web", "tier=fe"]
    );
    // `index` is the union over all of the object's values, without duplicates.
    let related: Vec<u64> = indexer
        .index("labels", &obj)
        .unwrap()
        .iter()
        .map(|o| rv(o))
        .collect();
    assert_eq!(related, [1, 2]);
    let by: Vec<u64> = indexer
        .by_index("labels", "tier=fe")
        .unwrap()
        .iter()
        .map(|o| rv(o))
        .collect();
    assert_eq!(by, [1, 2]);
}

#[test]
fn unknown_index_name_is_a_clear_error() {
    let indexer = with_tier_index();
    let err = indexer.by_index("nope", "x").unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"index "nope" does not exist (known indices: tier)"#
    );
    assert!(indexer.index_keys("nope", "x").is_err());
    assert!(indexer.list_index_func_values("nope").is_err());
    assert!(indexer.index("nope", &cm("ns", "a", 1)).is_err());
}

#[test]
fn adding_an_indexer_to_a_populated_store_indexes_existing_objects() {
    let mut indexer = Indexer::new();
    indexer.add(labelled("ns", "a", 1, "web"));
    indexer
        .add_indexer("tier", IndexSpec::Label("tier".into()).index_func())
        .unwrap();
    assert_eq!(
        strings(indexer.index_keys("tier", "web").unwrap()),
        ["ns/a"]
    );
    let dup = indexer.add_indexer("tier", IndexSpec::Namespace.index_func());
    assert_eq!(
        dup.unwrap_err(),
        IndexerError::DuplicateIndex("tier".into())
    );
    assert_eq!(indexer.index_names(), ["tier"]);
}
