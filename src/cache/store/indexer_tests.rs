//! Indexer: store operations and incremental index maintenance.

use std::collections::BTreeMap;
use std::sync::Arc;

use proptest::prelude::*;

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

/// Bytes per object of the store's own tables (the table, slots and free list), the objects
/// themselves aside.
fn footprint_per_object(indexer: &Indexer<Object>) -> f64 {
    indexer.read().footprint() as f64 / indexer.len() as f64
}

fn configmaps(n: usize) -> Vec<Arc<Object>> {
    (0..n).map(|i| cm("ns", &format!("cm-{i:07}"), 1)).collect()
}

#[test]
fn a_stored_object_costs_the_store_a_few_bytes_and_no_key() {
    // A slot (a pointer) and a table entry (a 4-byte slot number and a control byte); a key
    // string and its entry in a map from keys took ~125 bytes at a million objects.
    assert_eq!(std::mem::size_of::<Option<Arc<Object>>>(), 8);
    let n = 50_000;
    let mut grown = Indexer::new();
    for obj in configmaps(n) {
        grown.add(obj);
    }
    // Grown by doubling: the table's and the slots' spare room on top.
    let per_object = footprint_per_object(&grown);
    assert!(per_object <= 28.0, "{per_object:.1} B per object");

    let mut reserved = Indexer::new();
    reserved.reserve(n);
    for obj in configmaps(n) {
        reserved.add(obj);
    }
    let per_object = footprint_per_object(&reserved);
    assert!(per_object <= 16.0, "{per_object:.1} B per object");
    assert_eq!(
        reserved.get_by_key("ns/cm-0001234").map(|o| rv(&o)),
        Some(1)
    );
}

#[test]
fn reserve_makes_room_once_so_that_adding_what_was_announced_does_not_grow() {
    let mut indexer = with_tier_index();
    indexer.add(labelled("ns", "first", 1, "web"));
    indexer.reserve(1000);
    assert!(indexer.capacity() >= 1001);
    let before = indexer.read().footprint();
    for obj in configmaps(1000) {
        indexer.add(obj);
    }
    assert_eq!(indexer.len(), 1001);
    assert_eq!(indexer.read().footprint(), before);
    // Vacated slots count as room: deleting and adding back does not grow either.
    let capacity = indexer.capacity();
    indexer.delete_key("ns/first");
    indexer.reserve(1);
    indexer.add(labelled("ns", "again", 2, "web"));
    assert_eq!(indexer.capacity(), capacity);
    assert_eq!(
        strings(indexer.index_keys("tier", "web").unwrap()),
        ["ns/again"]
    );
}

#[test]
fn keys_are_told_apart_ordered_and_handed_out_as_client_go_renders_them() {
    let mut indexer = Indexer::new();
    // Keys that sort differently from their (namespace, name) parts: `-` < `/` < `0`.
    for obj in [
        cm("ns", "b", 1),
        node("ns-x", 2),
        node("ns0", 3),
        cm("ns", "a", 4),
    ] {
        indexer.add(obj);
    }
    assert_eq!(
        strings(indexer.list_keys()),
        ["ns-x", "ns/a", "ns/b", "ns0"]
    );
    let entries: Vec<(String, u64)> = indexer
        .entries()
        .into_iter()
        .map(|(k, o)| (k.to_string(), rv(&o)))
        .collect();
    assert_eq!(
        entries,
        [
            ("ns-x".into(), 2),
            ("ns/a".into(), 4),
            ("ns/b".into(), 1),
            ("ns0".into(), 3)
        ]
    );
    let by_key: Vec<u64> = indexer.list_by_key().iter().map(|o| rv(o)).collect();
    assert_eq!(by_key, [2, 4, 1, 3]);
    let mut known = KnownObjects::list_keys(&indexer.reader());
    known.sort_unstable();
    assert_eq!(strings(known), ["ns-x", "ns/a", "ns/b", "ns0"]);

    // An update finds the object by its key and replaces it in its slot.
    indexer.update(node("ns-x", 5));
    assert_eq!(indexer.get(&node("ns-x", 0)).map(|o| rv(&o)), Some(5));
    assert_eq!(indexer.get_by_key("ns"), None);
    assert_eq!(indexer.get_by_key("ns/"), None);
    assert_eq!(indexer.len(), 4);
}

#[derive(Debug, Clone)]
enum Op {
    /// Add object `i` at resourceVersion `rv` with tier `tier`.
    Add(u8, u64, u8),
    Delete(u8),
    /// Replace the content with these objects.
    Replace(Vec<(u8, u64, u8)>),
}

/// Object `i` of a small universe mixing namespaced and cluster-scoped keys.
fn object(i: u8, rv: u64, tier: u8) -> Arc<Object> {
    let tier = format!("t{tier}");
    match i % 3 {
        0 => labelled("ns", &format!("o{i}"), rv, &tier),
        1 => labelled("other", &format!("o{i}"), rv, &tier),
        _ => {
            let mut obj = (*node(&format!("o{i}"), rv)).clone();
            obj.meta_mut().labels = Some([("tier".to_owned(), tier)].into());
            Arc::new(obj)
        }
    }
}

fn op() -> impl Strategy<Value = Op> {
    let item = || (0u8..24, 0u64..1000, 0u8..3);
    prop_oneof![
        6 => item().prop_map(|(i, rv, t)| Op::Add(i, rv, t)),
        3 => (0u8..24).prop_map(Op::Delete),
        1 => proptest::collection::vec(item(), 0..12).prop_map(Op::Replace),
    ]
}

proptest! {
    /// The store against a map from keys to objects, with the invariants of its fields checked
    /// after every operation.
    #[test]
    fn the_store_behaves_as_a_map_from_keys_to_objects(ops in proptest::collection::vec(op(), 1..60)) {
        let mut indexer = with_tier_index();
        let mut model: BTreeMap<String, Arc<Object>> = BTreeMap::new();
        for op in ops {
            match op {
                Op::Add(i, rv, tier) => {
                    let obj = object(i, rv, tier);
                    model.insert(crate::cache::object_key(obj.as_ref()), obj.clone());
                    indexer.add(obj);
                }
                Op::Delete(i) => {
                    let key = crate::cache::object_key(object(i, 0, 0).as_ref());
                    let removed = indexer.delete_key(&key);
                    prop_assert_eq!(removed.is_some(), model.remove(&key).is_some());
                }
                Op::Replace(items) => {
                    let list: Vec<_> = items.into_iter().map(|(i, rv, t)| object(i, rv, t)).collect();
                    model = list.iter().map(|o| (crate::cache::object_key(o.as_ref()), o.clone())).collect();
                    indexer.replace(list);
                }
            }
            indexer.read().check_invariants();
            let keys: Vec<String> = model.keys().cloned().collect();
            prop_assert_eq!(strings(indexer.list_keys()), keys);
            for (key, obj) in &model {
                prop_assert!(indexer.get_by_key(key).is_some_and(|o| Arc::ptr_eq(&o, obj)));
            }
            for tier in ["t0", "t1", "t2"] {
                let expected: Vec<String> = model
                    .iter()
                    .filter(|(_, o)| o.label("tier").as_deref() == Some(tier))
                    .map(|(k, _)| k.clone())
                    .collect();
                prop_assert_eq!(strings(indexer.index_keys("tier", tier).unwrap()), expected);
            }
        }
    }
}
