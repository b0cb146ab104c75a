//! One test per DeltaFIFO rule, named after it, plus a property test of its invariants.

use std::collections::{BTreeMap, HashSet};
use std::convert::Infallible;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use crate::object::Object;
use proptest::prelude::*;

use super::pending::{Pending, Queued};
use super::*;
use crate::cache::test_objects::{cm, node, rv};
use crate::cache::{Indexer, IndexerReader, ProcessLoop, ReplaceTombstones, object_key};

type Fifo = DeltaFifo<Object>;

/// A FIFO whose known objects are `indexer`, as an informer builds it.
fn fifo_with(indexer: &IndexerReader<Object>) -> Fifo {
    DeltaFifo::new().known_objects(Arc::new(indexer.clone()))
}

/// `(type, rv, tombstone)` of each queued delta of `key`.
fn queued(fifo: &Fifo, key: &str) -> Vec<(DeltaType, u64, bool)> {
    fifo.get_by_key(key)
        .map(|d| d.iter().map(summary).collect())
        .unwrap_or_default()
}

fn summary(d: &Delta<Object>) -> (DeltaType, u64, bool) {
    (
        d.type_,
        d.object.object().map_or(0, |o| rv(o)),
        d.object.is_tombstone(),
    )
}

/// Pops one batch without processing it.
fn pop(fifo: &Fifo) -> Popped<Object, ()> {
    fifo.pop(|_, _| Ok::<_, ProcessError<Infallible>>(()))
        .expect("a batch")
}

fn keys(fifo: &Fifo) -> Vec<String> {
    fifo.list_keys().iter().map(|k| k.to_string()).collect()
}

/// Checks the invariants written on `State`'s fields.
fn check_invariants(fifo: &Fifo) {
    let state = fifo.lock();
    assert_eq!(
        state.index.len(),
        state.queue.len(),
        "index and queue differ"
    );
    let mut keys = HashSet::new();
    let mut key = String::new();
    for (pos, queued) in state.queue.iter().enumerate() {
        queued.deltas.write_key(&mut key);
        assert!(keys.insert(key.clone()), "{key} queued twice");
        assert_eq!(
            state.find(&key),
            Some(pos),
            "{key} not indexed at its place"
        );
        assert!(queued.deltas.len() > 0, "{key} has empty Deltas");
    }
}

#[test]
fn keys_are_namespace_slash_name_or_name_for_cluster_scoped() {
    assert_eq!(object_key(cm("ns1", "a", 1).as_ref()), "ns1/a");
    assert_eq!(object_key(node("n1", 1).as_ref()), "n1");
    // Typed k8s-openapi objects key the same way, through their ObjectMeta.
    let pod = k8s_openapi::api::core::v1::Pod {
        metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            name: Some("web".into()),
            namespace: Some("prod".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    assert_eq!(object_key(&pod), "prod/web");
    let typed_fifo = DeltaFifo::<k8s_openapi::api::core::v1::Pod>::new();
    typed_fifo.add(Arc::new(pod));
    assert_eq!(typed_fifo.list_keys(), [Arc::<str>::from("prod/web")]);
    let fifo = Fifo::new();
    fifo.add(cm("ns1", "a", 1));
    fifo.add(node("n1", 1));
    assert_eq!(keys(&fifo), ["ns1/a", "n1"]);
}

#[test]
fn key_of_a_tombstone_is_its_stored_key_and_key_of_deltas_is_its_newest_object() {
    let tombstone = DeltaObject::from(DeletedFinalStateUnknown {
        key: "stored/key".into(),
        obj: Some(cm("other", "name", 1)),
    });
    assert_eq!(tombstone.key(), "stored/key");
    let deltas = Deltas::new(vec![
        Delta::new(DeltaType::Added, cm("ns", "old", 1)),
        Delta::new(DeltaType::Updated, cm("ns", "new", 2)),
    ]);
    assert_eq!(deltas.key().as_deref(), Some("ns/new"));
}

#[test]
fn add_update_delete_append_to_the_keys_deltas_oldest_first() {
    let fifo = Fifo::new();
    fifo.add(cm("ns", "a", 1));
    fifo.update(cm("ns", "a", 2));
    assert!(fifo.delete(cm("ns", "a", 3).into()));
    assert_eq!(
        queued(&fifo, "ns/a"),
        [
            (DeltaType::Added, 1, false),
            (DeltaType::Updated, 2, false),
            (DeltaType::Deleted, 3, false)
        ]
    );
    check_invariants(&fifo);
}

#[test]
fn a_key_is_queued_once_in_order_of_first_enqueue() {
    let fifo = Fifo::new();
    fifo.add(cm("ns", "b", 1));
    fifo.add(cm("ns", "a", 2));
    fifo.update(cm("ns", "b", 3));
    fifo.add(cm("ns", "c", 4));
    fifo.update(cm("ns", "a", 5));
    assert_eq!(keys(&fifo), ["ns/b", "ns/a", "ns/c"]);
    assert_eq!(fifo.len(), 3);
    let popped: Vec<String> = (0..3).map(|_| pop(&fifo).key.to_string()).collect();
    assert_eq!(popped, ["ns/b", "ns/a", "ns/c"]);
    check_invariants(&fifo);
}

#[test]
fn every_mutation_marks_the_queue_populated() {
    for mutate in [
        (|f: &Fifo| f.add(cm("ns", "a", 1))) as fn(&Fifo),
        |f| f.update(cm("ns", "a", 1)),
        // Even a deletion that is dropped marks the queue populated.
        |f| {
            f.delete(cm("ns", "a", 1).into());
        },
        |f| {
            f.add_if_not_present(Deltas::new(vec![Delta::new(
                DeltaType::Added,
                cm("ns", "a", 1),
            )]));
        },
        |f| f.replace(vec![], "1"),
    ] {
        let fifo = Fifo::new();
        assert!(!fifo.has_synced());
        mutate(&fifo);
        assert!(fifo.stats().populated);
    }
}

#[test]
fn delete_of_an_object_neither_queued_nor_known_is_ignored() {
    let indexer = Indexer::new();
    let fifo = fifo_with(&indexer);
    assert!(!fifo.delete(cm("ns", "ghost", 1).into()));
    assert!(fifo.is_empty());

    let without_known = Fifo::new();
    assert!(!without_known.delete(cm("ns", "ghost", 1).into()));
    assert!(without_known.is_empty());
}

#[test]
fn delete_of_a_known_or_queued_object_is_queued() {
    let mut indexer = Indexer::new();
    indexer.add(cm("ns", "known", 1));
    let fifo = fifo_with(&indexer);
    assert!(fifo.delete(cm("ns", "known", 2).into()));
    fifo.add(cm("ns", "queued", 3));
    assert!(fifo.delete(cm("ns", "queued", 4).into()));
    assert_eq!(queued(&fifo, "ns/known"), [(DeltaType::Deleted, 2, false)]);
    assert_eq!(
        queued(&fifo, "ns/queued"),
        [(DeltaType::Added, 3, false), (DeltaType::Deleted, 4, false)]
    );
}

#[test]
fn dedup_two_deletions_keeps_the_older() {
    let fifo = Fifo::new();
    fifo.add(cm("ns", "a", 1));
    fifo.delete(cm("ns", "a", 2).into());
    fifo.delete(cm("ns", "a", 3).into());
    assert_eq!(
        queued(&fifo, "ns/a"),
        [(DeltaType::Added, 1, false), (DeltaType::Deleted, 2, false)]
    );
}

#[test]
fn dedup_keeps_the_newer_deletion_when_the_older_is_a_tombstone() {
    let fifo = Fifo::new();
    fifo.add(cm("ns", "a", 1));
    fifo.delete(
        DeletedFinalStateUnknown {
            key: "ns/a".into(),
            obj: Some(cm("ns", "a", 1)),
        }
        .into(),
    );
    fifo.delete(cm("ns", "a", 5).into());
    assert_eq!(
        queued(&fifo, "ns/a"),
        [(DeltaType::Added, 1, false), (DeltaType::Deleted, 5, false)]
    );
}

#[test]
fn dedup_keeps_the_older_deletion_when_only_the_newer_is_a_tombstone() {
    let fifo = Fifo::new();
    fifo.add(cm("ns", "a", 1));
    fifo.delete(cm("ns", "a", 2).into());
    fifo.delete(
        DeletedFinalStateUnknown {
            key: "ns/a".into(),
            obj: None,
        }
        .into(),
    );
    assert_eq!(
        queued(&fifo, "ns/a"),
        [(DeltaType::Added, 1, false), (DeltaType::Deleted, 2, false)]
    );
}

#[test]
fn dedup_only_compares_the_two_newest_deltas() {
    let fifo = Fifo::new();
    fifo.add(cm("ns", "a", 1));
    fifo.delete(cm("ns", "a", 2).into());
    fifo.add(cm("ns", "a", 3));
    fifo.delete(cm("ns", "a", 4).into());
    assert_eq!(queued(&fifo, "ns/a").len(), 4);
}

#[test]
fn replace_queues_replaced_for_each_listed_object() {
    let fifo = Fifo::new();
    fifo.replace(vec![cm("ns", "a", 1), cm("ns", "b", 2)], "10");
    assert_eq!(queued(&fifo, "ns/a"), [(DeltaType::Replaced, 1, false)]);
    assert_eq!(queued(&fifo, "ns/b"), [(DeltaType::Replaced, 2, false)]);
}

#[test]
fn replace_queues_sync_in_legacy_mode() {
    let fifo = Fifo::new().emit_delta_type_replaced(false);
    fifo.replace(vec![cm("ns", "a", 1)], "10");
    assert_eq!(queued(&fifo, "ns/a"), [(DeltaType::Sync, 1, false)]);
}

#[test]
fn replace_tombstones_a_queued_but_unlisted_key_with_its_newest_queued_object() {
    let indexer = Indexer::new();
    let fifo = fifo_with(&indexer);
    fifo.add(cm("ns", "gone", 1));
    fifo.update(cm("ns", "gone", 2));
    fifo.replace(vec![cm("ns", "a", 3)], "10");
    assert_eq!(
        queued(&fifo, "ns/gone"),
        [
            (DeltaType::Added, 1, false),
            (DeltaType::Updated, 2, false),
            (DeltaType::Deleted, 2, true)
        ]
    );
    check_invariants(&fifo);
}

#[test]
fn replace_unwraps_the_object_of_a_queued_tombstone() {
    let mut indexer = Indexer::new();
    indexer.add(cm("ns", "gone", 1));
    let fifo = fifo_with(&indexer);
    // The first relist tombstones the known object; a second relist before the consumer pops must
    // carry the object inside that tombstone, not the tombstone itself (and dedup keeps one).
    fifo.replace(vec![], "10");
    fifo.replace(vec![], "11");
    let deltas = fifo.get_by_key("ns/gone").unwrap();
    assert_eq!(deltas.len(), 1);
    let DeltaObject::Tombstone(t) = &deltas.newest().unwrap().object else {
        panic!("expected a tombstone");
    };
    assert_eq!(t.key, "ns/gone");
    assert_eq!(t.obj.as_deref().map(rv), Some(1));
}

#[test]
fn replace_tombstones_a_known_unlisted_key_with_nothing_queued_carrying_the_known_object() {
    let mut indexer = Indexer::new();
    indexer.add(cm("ns", "kept", 1));
    indexer.add(cm("ns", "missed", 2));
    let fifo = fifo_with(&indexer);
    fifo.replace(vec![cm("ns", "kept", 3)], "10");
    assert_eq!(queued(&fifo, "ns/kept"), [(DeltaType::Replaced, 3, false)]);
    assert_eq!(queued(&fifo, "ns/missed"), [(DeltaType::Deleted, 2, true)]);
}

#[test]
fn replace_does_not_tombstone_a_known_key_twice_when_it_is_queued() {
    let mut indexer = Indexer::new();
    indexer.add(cm("ns", "a", 1));
    let fifo = fifo_with(&indexer);
    fifo.update(cm("ns", "a", 2));
    fifo.replace(vec![], "10");
    // One tombstone (from the queue pass, carrying the newer queued object), not two.
    assert_eq!(
        queued(&fifo, "ns/a"),
        [
            (DeltaType::Updated, 2, false),
            (DeltaType::Deleted, 2, true)
        ]
    );
}

#[test]
fn replace_tombstones_known_keys_in_sorted_order() {
    let mut indexer = Indexer::new();
    for name in ["c", "a", "b"] {
        indexer.add(cm("ns", name, 1));
    }
    let fifo = fifo_with(&indexer);
    fifo.replace(vec![], "10");
    assert_eq!(keys(&fifo), ["ns/a", "ns/b", "ns/c"]);
}

#[test]
fn first_replace_sets_initial_population_to_listed_plus_queued_deletions() {
    let mut indexer = Indexer::new();
    indexer.add(cm("ns", "known-gone", 1));
    let fifo = fifo_with(&indexer);
    // Listed twice under one key: counted once, as client-go counts distinct keys.
    fifo.replace(
        vec![cm("ns", "a", 2), cm("ns", "b", 3), cm("ns", "b", 4)],
        "10",
    );
    assert!(!fifo.has_synced());
    let mut initial = Vec::new();
    for _ in 0..3 {
        let popped = pop(&fifo);
        initial.push(popped.is_in_initial_list);
    }
    assert_eq!(initial, [true, true, true]);
    assert!(fifo.has_synced());
}

#[test]
fn a_first_replace_with_nothing_queued_or_known_counts_a_key_listed_twice_once() {
    // With nothing to detect deletions against, the initial population is still one batch per
    // distinct key: client-go sets `initialPopulationCount` to `keys.Len() + queuedDeletions`
    // (`DeltaFIFO.Replace` @v0.32.0), `keys` being the set of listed keys.
    let fifo = fifo_with(&Indexer::new());
    fifo.replace(
        vec![cm("ns", "a", 1), cm("ns", "b", 2), cm("ns", "b", 3)],
        "10",
    );
    check_invariants(&fifo);
    assert_eq!(queued(&fifo, "ns/b").len(), 2);
    assert!(pop(&fifo).is_in_initial_list);
    assert!(!fifo.has_synced());
    assert!(pop(&fifo).is_in_initial_list);
    assert!(fifo.has_synced());
}

#[test]
fn a_drained_queue_gives_back_the_room_of_a_large_list() {
    let fifo = Fifo::new();
    fifo.replace(
        (0..20_000)
            .map(|i| cm("ns", &format!("cm-{i}"), 1))
            .collect(),
        "10",
    );
    let full = fifo.lock().index.capacity();
    assert!(full >= 20_000);
    for _ in 0..19_990 {
        pop(&fifo);
    }
    check_invariants(&fifo);
    let state = fifo.lock();
    assert!(
        state.index.capacity() <= 2048 && state.queue.capacity() <= 2048,
        "room for {} keys and {} queue places kept for 10 queued",
        state.index.capacity(),
        state.queue.capacity()
    );
    drop(state);
    assert_eq!(keys(&fifo).len(), 10);
}

/// A list of a million objects queues a million keys, each with one delta, before the consumer
/// pops the first. A key costs its 24-byte entry and its id in the index, and no heap block of its
/// own (no key string, no `Vec` of one delta).
#[test]
fn a_queued_key_with_one_delta_costs_its_entry_and_its_place_in_the_index() {
    assert_eq!(size_of::<Pending<Object>>(), 16);
    assert_eq!(size_of::<Queued<Object>>(), 24);
    const N: usize = 100_000;
    let fifo = Fifo::new();
    fifo.replace(
        (0..N).map(|i| cm("ns", &format!("cm-{i:06}"), 1)).collect(),
        "10",
    );
    let footprint = fifo.lock().footprint();
    assert!(
        footprint / N <= 40,
        "{footprint} B for {N} queued keys: {} B each",
        footprint / N
    );
}

/// Ids count enqueued keys modulo 2^32, so an informer that has queued four billion keys
/// still finds each at its place.
#[test]
fn ids_wrap_around_after_four_billion_queued_keys() {
    let fifo = Fifo::new();
    fifo.lock().head = u32::MAX - 1;
    for name in ["a", "b", "c", "d"] {
        fifo.add(cm("ns", name, 1));
    }
    fifo.update(cm("ns", "d", 2));
    check_invariants(&fifo);
    assert_eq!(pop(&fifo).key.as_ref(), "ns/a");
    fifo.update(cm("ns", "c", 2));
    check_invariants(&fifo);
    assert_eq!(queued(&fifo, "ns/c").len(), 2);
    assert_eq!(keys(&fifo), ["ns/b", "ns/c", "ns/d"]);
    for key in ["ns/b", "ns/c", "ns/d"] {
        assert_eq!(pop(&fifo).key.as_ref(), key);
    }
    assert_eq!(fifo.lock().head, 2);
}

#[test]
fn only_the_first_replace_sets_the_initial_population() {
    let fifo = Fifo::new();
    fifo.replace(vec![cm("ns", "a", 1)], "10");
    pop(&fifo);
    assert!(fifo.has_synced());
    fifo.replace(vec![cm("ns", "a", 2), cm("ns", "b", 3)], "11");
    assert!(fifo.has_synced());
    assert!(!pop(&fifo).is_in_initial_list);
}

#[test]
fn adds_before_the_first_replace_make_the_queue_synced_at_once() {
    let fifo = Fifo::new();
    fifo.add(cm("ns", "a", 1));
    assert!(fifo.has_synced());
    fifo.replace(vec![cm("ns", "b", 2)], "10");
    assert!(fifo.has_synced());
    assert!(!pop(&fifo).is_in_initial_list);
}

#[test]
fn resync_queues_sync_for_known_objects_skipping_queued_keys() {
    let mut indexer = Indexer::new();
    indexer.add(cm("ns", "a", 1));
    indexer.add(cm("ns", "b", 2));
    indexer.add(cm("ns", "c", 3));
    let fifo = fifo_with(&indexer);
    fifo.update(cm("ns", "b", 5));
    assert_eq!(fifo.resync(), 2);
    assert_eq!(queued(&fifo, "ns/a"), [(DeltaType::Sync, 1, false)]);
    assert_eq!(queued(&fifo, "ns/b"), [(DeltaType::Updated, 5, false)]);
    assert_eq!(queued(&fifo, "ns/c"), [(DeltaType::Sync, 3, false)]);
}

#[test]
fn resync_without_known_objects_does_nothing() {
    let fifo = Fifo::new();
    assert_eq!(fifo.resync(), 0);
    assert!(fifo.is_empty());
}

#[test]
fn add_if_not_present_requeues_only_when_the_key_is_not_queued() {
    let fifo = Fifo::new();
    let batch = Deltas::new(vec![Delta::new(DeltaType::Added, cm("ns", "a", 1))]);
    assert!(fifo.add_if_not_present(batch.clone()));
    assert_eq!(queued(&fifo, "ns/a"), [(DeltaType::Added, 1, false)]);

    fifo.update(cm("ns", "b", 2));
    let stale = Deltas::new(vec![Delta::new(DeltaType::Added, cm("ns", "b", 1))]);
    assert!(!fifo.add_if_not_present(stale));
    assert_eq!(queued(&fifo, "ns/b"), [(DeltaType::Updated, 2, false)]);
    assert!(!fifo.add_if_not_present(Deltas::new(vec![])));
    check_invariants(&fifo);
}

/// Waits until `n` consumers are blocked in `pop`.
fn until_blocked(fifo: &Fifo, n: usize) {
    while fifo.waiters() < n {
        thread::yield_now();
    }
}

#[test]
fn pop_blocks_while_empty() {
    let fifo = Arc::new(Fifo::new());
    let consumer = {
        let fifo = fifo.clone();
        thread::spawn(move || pop(&fifo).key.to_string())
    };
    until_blocked(&fifo, 1);
    assert!(!consumer.is_finished());
    fifo.add(cm("ns", "a", 1));
    assert_eq!(consumer.join().unwrap(), "ns/a");
}

#[test]
fn every_blocked_consumer_is_woken() {
    // One `replace` queues two keys for two blocked consumers: waking only one of them (a
    // `notify_one`) would leave the other asleep with a key waiting.
    let fifo = Arc::new(Fifo::new());
    let (tx, rx) = std::sync::mpsc::channel();
    for _ in 0..2 {
        let (fifo, tx) = (fifo.clone(), tx.clone());
        thread::spawn(move || tx.send(pop(&fifo).key.to_string()));
    }
    until_blocked(&fifo, 2);
    fifo.replace(vec![cm("ns", "a", 1), cm("ns", "b", 2)], "2");
    let mut got: Vec<String> = (0..2)
        .map(|_| rx.recv_timeout(Duration::from_secs(10)))
        .collect::<Result<_, _>>()
        .unwrap_or_else(|_| {
            fifo.close();
            panic!("a blocked consumer was not woken")
        });
    got.sort();
    assert_eq!(got, ["ns/a", "ns/b"]);
}

#[test]
fn pop_drains_a_closed_queue_then_reports_closed() {
    let fifo = Fifo::new();
    fifo.add(cm("ns", "a", 1));
    fifo.close();
    assert!(fifo.is_closed());
    assert_eq!(&*pop(&fifo).key, "ns/a");
    let closed = fifo.pop(|_, _| Ok::<_, ProcessError<Infallible>>(()));
    assert!(matches!(closed, Err(PopError::Closed)));
}

#[test]
fn close_wakes_a_blocked_pop() {
    let fifo = Arc::new(Fifo::new());
    let consumer = {
        let fifo = fifo.clone();
        thread::spawn(move || {
            fifo.pop(|_, _| Ok::<_, ProcessError<Infallible>>(()))
                .is_err()
        })
    };
    until_blocked(&fifo, 1);
    fifo.close();
    assert!(consumer.join().unwrap());
}

#[test]
fn pop_passes_the_batch_and_initial_flag_to_process() {
    let fifo = Fifo::new();
    fifo.replace(vec![cm("ns", "a", 1)], "10");
    fifo.update(cm("ns", "a", 2));
    let popped = fifo
        .pop(|deltas, initial| {
            Ok::<_, ProcessError<Infallible>>((
                deltas.iter().map(summary).collect::<Vec<_>>(),
                initial,
            ))
        })
        .unwrap();
    assert_eq!(
        popped.output.0,
        [
            (DeltaType::Replaced, 1, false),
            (DeltaType::Updated, 2, false)
        ]
    );
    assert!(popped.output.1);
    assert!(popped.is_in_initial_list);
    assert!(fifo.has_synced());
}

#[test]
fn process_error_requeue_puts_the_batch_back_unless_requeued_meanwhile() {
    let fifo = Fifo::new();
    fifo.add(cm("ns", "a", 1));
    let err = fifo.pop(|_, _| Err::<(), _>(ProcessError::Requeue("retry")));
    assert!(matches!(err, Err(PopError::Process("retry"))));
    assert_eq!(queued(&fifo, "ns/a"), [(DeltaType::Added, 1, false)]);

    // Newer deltas arriving while `process` runs win over the requeue: the FIFO lock is held
    // during `process`, so here the key is simply still absent and the batch goes back.
    let err = fifo.pop(|_, _| Err::<(), _>(ProcessError::Fail("drop")));
    assert!(matches!(err, Err(PopError::Process("drop"))));
    assert!(fifo.is_empty());
}

#[test]
fn a_requeue_does_not_hold_has_synced_back() {
    let fifo = Fifo::new();
    fifo.replace(vec![cm("ns", "a", 1)], "10");
    let _ = fifo.pop(|_, _| Err::<(), _>(ProcessError::Requeue(())));
    assert!(fifo.has_synced());
    assert!(!pop(&fifo).is_in_initial_list);
}

#[test]
fn stats_report_queue_length_peak_coalescing_and_wait() {
    let fifo = Fifo::new();
    fifo.add(cm("ns", "a", 1));
    let first_enqueue = fifo.enqueued_at("ns/a").unwrap();
    thread::sleep(Duration::from_millis(5));
    fifo.update(cm("ns", "a", 2));
    fifo.update(cm("ns", "a", 3));
    fifo.add(cm("ns", "b", 4));
    assert_eq!(fifo.enqueued_at("ns/a"), Some(first_enqueue));
    let stats = fifo.stats();
    assert_eq!((stats.len, stats.peak_len, stats.coalesced), (2, 2, 2));
    let popped = pop(&fifo);
    assert_eq!(popped.enqueued_at, first_enqueue);
    assert!(popped.popped_at.duration_since(popped.enqueued_at) >= Duration::from_millis(5));
    assert_eq!(popped.queue_len, 1);
    assert_eq!(fifo.stats().peak_len, 2);
}

#[test]
fn try_pop_returns_none_when_empty_and_closed_when_closed() {
    let fifo = Fifo::new();
    let none = fifo.try_pop(|_, _| Ok::<_, ProcessError<Infallible>>(()));
    assert!(matches!(none, Ok(None)));
    fifo.close();
    let closed = fifo.try_pop(|_, _| Ok::<_, ProcessError<Infallible>>(()));
    assert!(matches!(closed, Err(PopError::Closed)));
}

/// An operation a reflector can perform, over a small key space so that keys collide.
#[derive(Debug, Clone)]
enum Op {
    Add(u8),
    Update(u8),
    Delete(u8),
    Replace(Vec<u8>),
    Resync,
    Pop,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u8..6).prop_map(Op::Add),
        3 => (0u8..6).prop_map(Op::Update),
        2 => (0u8..6).prop_map(Op::Delete),
        1 => proptest::collection::vec(0u8..6, 0..6).prop_map(Op::Replace),
        1 => Just(Op::Resync),
        4 => Just(Op::Pop),
    ]
}

proptest! {
    /// Whatever a reflector does, the FIFO keeps its invariants, and draining it through
    /// `process_deltas` leaves the indexer equal to the last state of every live object.
    #[test]
    fn random_operations_keep_invariants_and_converge(ops in proptest::collection::vec(op(), 1..60)) {
        let indexer = Indexer::new();
        let fifo = Arc::new(fifo_with(&indexer));
        let mut controller = ProcessLoop::new(fifo.clone(), indexer);
        let indexer = controller.indexer().clone();
        // What the server holds: key → resourceVersion.
        let mut truth: BTreeMap<String, u64> = BTreeMap::new();
        let mut next_rv = 1;
        let mut bump = || { next_rv += 1; next_rv };
        for op in ops {
            match op {
                Op::Add(n) | Op::Update(n) => {
                    let obj = cm("ns", &format!("o{n}"), bump());
                    truth.insert(object_key(obj.as_ref()), rv(&obj));
                    if matches!(op, Op::Add(_)) { fifo.add(obj) } else { fifo.update(obj) }
                }
                Op::Delete(n) => {
                    let obj = cm("ns", &format!("o{n}"), bump());
                    truth.remove(&object_key(obj.as_ref()));
                    fifo.delete(obj.into());
                }
                Op::Replace(names) => {
                    let list: Vec<_> = names.iter().map(|n| cm("ns", &format!("o{n}"), bump())).collect();
                    truth = list.iter().map(|o| (object_key(o.as_ref()), rv(o))).collect();
                    fifo.replace(list, "0");
                }
                Op::Resync => { fifo.resync(); }
                Op::Pop => { controller.try_process_next(); }
            }
            check_invariants(&fifo);
        }
        while controller.try_process_next().is_some() {
            check_invariants(&fifo);
        }
        prop_assert!(fifo.is_empty());
        let cached: BTreeMap<String, u64> = indexer
            .entries()
            .into_iter()
            .map(|(k, o)| (k.to_string(), rv(&o)))
            .collect();
        prop_assert_eq!(cached, truth);
    }
}

/// `DeltaFIFO.Replace` before a01b5a2a9 (@v0.26.3, @v0.23.17): with known objects, only known
/// keys absent from the list are tombstoned, with the known object even when queued; a key
/// queued but never applied keeps its deltas and gets no tombstone.
#[test]
fn replace_before_a01b5a2a9_tombstones_known_keys_only() {
    let mut indexer = Indexer::new();
    indexer.add(cm("ns", "known", 1));
    let fifo = fifo_with(&indexer).replace_tombstones(ReplaceTombstones::KnownObjects);
    fifo.add(cm("ns", "queued", 2));
    fifo.update(cm("ns", "known", 3));
    fifo.replace(vec![cm("ns", "a", 4)], "10");
    assert_eq!(queued(&fifo, "ns/queued"), [(DeltaType::Added, 2, false)]);
    assert_eq!(
        queued(&fifo, "ns/known"),
        [
            (DeltaType::Updated, 3, false),
            (DeltaType::Deleted, 1, true)
        ]
    );
    check_invariants(&fifo);
    // The rule from a01b5a2a9 on, for contrast.
    let fifo = fifo_with(&indexer);
    fifo.add(cm("ns", "queued", 2));
    fifo.replace(vec![cm("ns", "a", 4)], "10");
    assert_eq!(
        queued(&fifo, "ns/queued"),
        [(DeltaType::Added, 2, false), (DeltaType::Deleted, 2, true)]
    );
}
