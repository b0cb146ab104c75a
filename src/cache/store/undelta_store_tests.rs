//! The UndeltaStore's rules, after client-go's `undelta_store_test.go` (rewritten, not copied),
//! and the property that its last push is what the server holds.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::thread;

use crate::object::Object;
use proptest::prelude::*;

use super::*;
use crate::cache::test_objects::{cm, rv};
use crate::cache::{DeletedFinalStateUnknown, ListInfo};

/// Every push, each as `key@rv` in push order.
type Pushes = Arc<Mutex<Vec<Vec<String>>>>;

fn show(objs: &[Arc<Object>]) -> Vec<String> {
    objs.iter()
        .map(|o| format!("{}@{}", object_key(o.as_ref()), rv(o)))
        .collect()
}

type Recording = UndeltaStore<Object, Box<dyn FnMut(&[Arc<Object>]) + Send>>;

/// A store recording its pushes.
fn recording() -> (Recording, Pushes) {
    let pushes: Pushes = Arc::default();
    let sink = pushes.clone();
    let store: Recording = UndeltaStore::new(Box::new(move |objs: &[Arc<Object>]| {
        sink.lock().unwrap().push(show(objs));
    }));
    (store, pushes)
}

fn pushes(p: &Pushes) -> Vec<Vec<String>> {
    p.lock().unwrap().clone()
}

/// `TestUpdateCallsPush`.
#[test]
fn add_and_update_each_push_the_whole_content() {
    let (store, p) = recording();
    store.add(cm("ns", "a", 2));
    store.update(cm("ns", "a", 1));
    assert_eq!(pushes(&p), [vec!["ns/a@2"], vec!["ns/a@1"]]);
}

/// `TestDeleteCallsPush`.
#[test]
fn delete_pushes_the_content_without_the_object() {
    let (store, p) = recording();
    store.add(cm("ns", "a", 2));
    store.delete(&cm("ns", "a", 0));
    assert_eq!(pushes(&p), [vec!["ns/a@2"], vec![]]);
}

/// `TestReadsDoNotCallPush`.
#[test]
fn reads_never_push() {
    let store = UndeltaStore::new(|_: &[Arc<Object>]| panic!("a read pushed"));
    assert!(store.list().is_empty());
    assert!(store.get(&cm("ns", "a", 1)).is_none());
    assert!(store.get_by_key("ns/a").is_none());
    assert!(store.list_keys().is_empty());
    assert!(store.is_empty());
}

/// `TestReplaceCallsPush`: a whole list, one push.
#[test]
fn replace_pushes_once() {
    let (store, p) = recording();
    store.replace(vec![cm("ns", "b", 1), cm("ns", "a", 1)], "1");
    assert_eq!(pushes(&p), [vec!["ns/a@1", "ns/b@1"]]);
}

#[test]
fn deleting_a_missing_key_still_pushes() {
    let (store, p) = recording();
    store.add(cm("ns", "a", 1));
    store.delete_key("ns/zzz");
    assert_eq!(pushes(&p), [vec!["ns/a@1"], vec!["ns/a@1"]]);
}

#[test]
fn a_resync_or_a_bookmark_pushes_nothing() {
    let (store, p) = recording();
    let reflector_store: &dyn ReflectorStore<Object> = &store;
    reflector_store.replace(vec![cm("ns", "a", 1)], "1");
    assert_eq!(reflector_store.resync(), 0);
    reflector_store.bookmark("5");
    assert_eq!(pushes(&p).len(), 1);
}

#[test]
fn as_a_reflector_store_every_deletion_but_a_whole_list_one_is_applied_and_pushed() {
    let (store, p) = recording();
    let reflector_store: &dyn ReflectorStore<Object> = &store;
    assert!(!reflector_store.has_synced());
    reflector_store.replace(vec![cm("ns", "a", 1), cm("ns", "b", 1)], "1");
    assert!(reflector_store.has_synced() && reflector_store.is_drained());
    assert!(reflector_store.delete(cm("ns", "a", 2).into()));
    let tombstone = DeletedFinalStateUnknown {
        key: "ns/b".into(),
        obj: None,
    };
    assert!(reflector_store.delete(tombstone.into()));
    let list = ListInfo {
        resource_version: "3".into(),
        objects: Vec::new(),
    };
    assert!(!reflector_store.delete(list.into()));
    assert_eq!(
        pushes(&p),
        [vec!["ns/a@1", "ns/b@1"], vec!["ns/b@1"], vec![]]
    );
}

/// client-go may push the same content twice when writers race; here each push is the content
/// right after its own change, so with every change adding one key, push n holds n objects.
#[test]
fn racing_writers_get_one_push_per_change_in_change_order() {
    let (store, p) = recording();
    let store = Arc::new(store);
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let store = store.clone();
            thread::spawn(move || {
                for i in 0..25 {
                    store.add(cm("ns", &format!("w{w}-{i}"), 1));
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let sizes: Vec<usize> = pushes(&p).iter().map(Vec::len).collect();
    assert_eq!(sizes, (1..=100).collect::<Vec<_>>());
}

#[test]
fn the_store_is_the_known_objects_of_a_consistency_check() {
    let (store, _) = recording();
    store.replace(vec![cm("ns", "b", 1), cm("ns", "a", 2)], "2");
    let known: &dyn KnownObjects<Object> = &store;
    assert_eq!(
        known.list_keys(),
        [Arc::<str>::from("ns/a"), Arc::from("ns/b")]
    );
    assert_eq!(rv(&known.get_by_key("ns/a").unwrap()), 2);
}

/// What happens on the server, and whether the watch tells the Reflector.
#[derive(Debug, Clone)]
enum Server {
    /// Creates or modifies an object; the watch reports it.
    Write(u8),
    /// Deletes an object (if it exists); the watch reports it.
    Remove(u8),
    /// Creates, modifies or deletes objects while the watch is down, then the Reflector relists.
    Gap(Vec<(u8, bool)>),
}

fn server_op() -> impl Strategy<Value = Server> {
    prop_oneof![
        4 => (0u8..6).prop_map(Server::Write),
        2 => (0u8..6).prop_map(Server::Remove),
        1 => proptest::collection::vec((0u8..6, any::<bool>()), 0..6).prop_map(Server::Gap),
    ]
}

proptest! {
    /// Whatever the server does, and whatever the watch misses, the UndeltaStore's last push is
    /// the server's content once the Reflector has caught up: after every watch event, and after
    /// every relist.
    #[test]
    fn the_last_push_is_the_servers_state(ops in proptest::collection::vec(server_op(), 1..50)) {
        let last: Arc<Mutex<Option<Vec<String>>>> = Arc::default();
        let sink = last.clone();
        let store = UndeltaStore::new(move |objs: &[Arc<Object>]| {
            *sink.lock().unwrap() = Some(show(objs));
        });
        let store: &dyn ReflectorStore<Object> = &store;
        let mut server: BTreeMap<String, Arc<Object>> = BTreeMap::new();
        let mut next_rv = 1;
        store.replace(Vec::new(), "1");
        for op in ops {
            next_rv += 1;
            let name = |n: u8| format!("o{n}");
            match op {
                Server::Write(n) => {
                    let obj = cm("ns", &name(n), next_rv);
                    let existed = server.insert(object_key(obj.as_ref()), obj.clone()).is_some();
                    if existed { store.update(obj) } else { store.add(obj) }
                }
                Server::Remove(n) => {
                    // The watch reports only deletions of objects that exist.
                    if let Some(obj) = server.remove(&format!("ns/{}", name(n))) {
                        store.delete(DeltaObject::Object(cm("ns", &name(n), rv(&obj) + 1)));
                    }
                }
                Server::Gap(changes) => {
                    for (n, keep) in changes {
                        let key = format!("ns/{}", name(n));
                        if keep {
                            server.insert(key, cm("ns", &name(n), next_rv));
                        } else {
                            server.remove(&key);
                        }
                    }
                    store.replace(server.values().cloned().collect(), &next_rv.to_string());
                }
            }
            let expected: Vec<Arc<Object>> = server.values().cloned().collect();
            prop_assert_eq!(last.lock().unwrap().clone(), Some(show(&expected)));
        }
    }
}
