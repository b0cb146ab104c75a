//! One test per RealFIFO rule, named after it; the atomic mode's rules are prefixed `atomic_`.

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use crate::object::Object;

use super::*;
use crate::cache::test_objects::{cm, rv};
use crate::cache::{Indexer, IndexerReader};

type Fifo = RealFifo<Object>;

/// A per-object RealFIFO whose known objects are `indexer`, as an informer builds it.
fn fifo_with(indexer: &IndexerReader<Object>) -> Fifo {
    RealFifo::new(Arc::new(indexer.clone()))
}

/// A per-object RealFIFO whose consumer knows nothing yet.
fn fifo() -> Fifo {
    fifo_with(&Indexer::new())
}

/// `(type, key, rv, tombstone)` of a delta; key `-` for a whole-list delta, whose `rv` is the
/// resourceVersion it carries (0 if none).
type Summary = (DeltaType, String, u64, bool);

fn summary(d: &Delta<Object>) -> Summary {
    let rv = match &d.object {
        DeltaObject::List(info) => info.resource_version.parse().unwrap_or(0),
        object => object.object().map_or(0, |o| rv(o)),
    };
    let key = d.key().unwrap_or_else(|| "-".into());
    (d.type_, key, rv, d.object.is_tombstone())
}

fn d(type_: DeltaType, key: &str, rv: u64, tombstone: bool) -> Summary {
    (type_, key.to_owned(), rv, tombstone)
}

/// Every queued delta, oldest first.
fn queued(fifo: &Fifo) -> Vec<Summary> {
    fifo.queued().iter().map(summary).collect()
}

/// Pops at most `max` deltas without processing them.
fn pop(fifo: &Fifo, max: usize) -> PoppedDeltas<Object> {
    fifo.try_pop_batch(max, &mut |_, _| {})
        .expect("something queued")
}

fn popped(p: &PoppedDeltas<Object>) -> Vec<Summary> {
    p.deltas.iter().map(summary).collect()
}

/// Checks the invariant written on `State::initial_population_count`.
fn check_invariants(fifo: &Fifo) {
    let state = fifo.lock();
    assert!(state.initial_population_count <= state.items.len());
    for queued in &state.items {
        assert_eq!(
            queued.key.is_none(),
            queued.delta.type_.is_whole_list(),
            "only whole-list deltas have no key"
        );
    }
}

#[test]
fn add_update_delete_queue_one_delta_each_in_arrival_order_without_merging() {
    let fifo = fifo();
    fifo.add(cm("ns", "a", 1));
    fifo.add(cm("ns", "b", 2));
    fifo.update(cm("ns", "a", 3));
    fifo.update(cm("ns", "a", 4));
    assert!(fifo.delete(cm("ns", "b", 5).into()));
    assert_eq!(
        queued(&fifo),
        [
            d(DeltaType::Added, "ns/a", 1, false),
            d(DeltaType::Added, "ns/b", 2, false),
            d(DeltaType::Updated, "ns/a", 3, false),
            d(DeltaType::Updated, "ns/a", 4, false),
            d(DeltaType::Deleted, "ns/b", 5, false),
        ]
    );
    assert_eq!(fifo.len(), 5);
    check_invariants(&fifo);
}

#[test]
fn a_delete_of_an_object_neither_queued_nor_known_is_queued() {
    let fifo = fifo();
    assert!(fifo.delete(cm("ns", "ghost", 1).into()));
    assert_eq!(queued(&fifo), [d(DeltaType::Deleted, "ns/ghost", 1, false)]);
}

#[test]
fn consecutive_deletions_are_not_deduplicated() {
    let fifo = fifo();
    fifo.delete(cm("ns", "a", 1).into());
    fifo.delete(
        DeletedFinalStateUnknown {
            key: "ns/a".into(),
            obj: None,
        }
        .into(),
    );
    assert_eq!(
        queued(&fifo),
        [
            d(DeltaType::Deleted, "ns/a", 1, false),
            d(DeltaType::Deleted, "ns/a", 0, true)
        ]
    );
}

#[test]
fn add_update_delete_and_replace_mark_the_queue_populated_resync_and_bookmark_do_not() {
    for (mutate, populates) in [
        ((|f: &Fifo| f.add(cm("ns", "a", 1))) as fn(&Fifo), true),
        (|f| f.update(cm("ns", "a", 1)), true),
        (
            |f| {
                f.delete(cm("ns", "a", 1).into());
            },
            true,
        ),
        (|f| f.replace(vec![], "1"), true),
        (
            |f| {
                f.resync();
            },
            false,
        ),
        (|f| f.bookmark("1"), false),
    ] {
        for fifo in [fifo(), RealFifo::atomic()] {
            mutate(&fifo);
            assert_eq!(fifo.stats().populated, populates);
        }
    }
}

#[test]
fn replace_queues_tombstones_before_the_listed_objects() {
    let mut indexer = Indexer::new();
    indexer.add(cm("ns", "known-gone", 1));
    let fifo = fifo_with(&indexer);
    fifo.add(cm("ns", "queued-gone", 2));
    fifo.replace(vec![cm("ns", "b", 3), cm("ns", "a", 4)], "10");
    assert_eq!(
        queued(&fifo),
        [
            d(DeltaType::Added, "ns/queued-gone", 2, false),
            d(DeltaType::Deleted, "ns/queued-gone", 2, true),
            d(DeltaType::Deleted, "ns/known-gone", 1, true),
            d(DeltaType::Replaced, "ns/b", 3, false),
            d(DeltaType::Replaced, "ns/a", 4, false),
        ]
    );
    check_invariants(&fifo);
}

#[test]
fn replace_tombstones_queued_unlisted_keys_in_order_of_first_appearance_with_their_newest_object() {
    let fifo = fifo();
    fifo.add(cm("ns", "y", 1));
    fifo.add(cm("ns", "x", 2));
    fifo.update(cm("ns", "y", 3));
    fifo.replace(vec![], "10");
    assert_eq!(
        queued(&fifo)[3..],
        [
            d(DeltaType::Deleted, "ns/y", 3, true),
            d(DeltaType::Deleted, "ns/x", 2, true)
        ]
    );
}

#[test]
fn replace_does_not_tombstone_a_queued_unlisted_key_whose_newest_delta_is_a_deletion() {
    let fifo = fifo();
    fifo.add(cm("ns", "a", 1));
    fifo.delete(cm("ns", "a", 2).into());
    fifo.replace(vec![], "10");
    assert_eq!(
        queued(&fifo),
        [
            d(DeltaType::Added, "ns/a", 1, false),
            d(DeltaType::Deleted, "ns/a", 2, false)
        ]
    );
}

#[test]
fn replace_tombstones_a_queued_unlisted_key_deleted_then_added_again() {
    // Only the newest queued delta counts: an older deletion does not stand for the newer object.
    let fifo = fifo();
    fifo.delete(cm("ns", "a", 1).into());
    fifo.add(cm("ns", "a", 2));
    fifo.replace(vec![], "10");
    assert_eq!(queued(&fifo)[2], d(DeltaType::Deleted, "ns/a", 2, true));
}

#[test]
fn replace_keeps_a_queued_deletion_of_a_listed_key_before_its_replaced() {
    // The queued object was deleted and a new one with the same name created: both are delivered.
    let fifo = fifo();
    fifo.delete(cm("ns", "a", 1).into());
    fifo.replace(vec![cm("ns", "a", 5)], "10");
    assert_eq!(
        queued(&fifo),
        [
            d(DeltaType::Deleted, "ns/a", 1, false),
            d(DeltaType::Replaced, "ns/a", 5, false)
        ]
    );
}

#[test]
fn replace_tombstones_a_known_unlisted_key_with_nothing_queued_carrying_the_known_object() {
    let mut indexer = Indexer::new();
    indexer.add(cm("ns", "kept", 1));
    indexer.add(cm("ns", "missed", 2));
    let fifo = fifo_with(&indexer);
    fifo.replace(vec![cm("ns", "kept", 3)], "10");
    assert_eq!(
        queued(&fifo),
        [
            d(DeltaType::Deleted, "ns/missed", 2, true),
            d(DeltaType::Replaced, "ns/kept", 3, false)
        ]
    );
}

#[test]
fn replace_does_not_tombstone_a_known_key_that_has_anything_queued() {
    let mut indexer = Indexer::new();
    indexer.add(cm("ns", "updated", 1));
    indexer.add(cm("ns", "deleted", 2));
    let fifo = fifo_with(&indexer);
    fifo.update(cm("ns", "updated", 3));
    fifo.delete(cm("ns", "deleted", 4).into());
    fifo.replace(vec![], "10");
    // One tombstone for `updated`, from the queue pass with the queued object; none for `deleted`,
    // whose queued deletion already says it.
    assert_eq!(
        queued(&fifo),
        [
            d(DeltaType::Updated, "ns/updated", 3, false),
            d(DeltaType::Deleted, "ns/deleted", 4, false),
            d(DeltaType::Deleted, "ns/updated", 3, true),
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
    let keys: Vec<String> = queued(&fifo).into_iter().map(|s| s.1).collect();
    assert_eq!(keys, ["ns/a", "ns/b", "ns/c"]);
}

#[test]
fn replace_queues_one_replaced_per_listed_object_duplicates_included() {
    let fifo = fifo();
    fifo.replace(vec![cm("ns", "a", 1), cm("ns", "a", 2)], "10");
    assert_eq!(
        queued(&fifo),
        [
            d(DeltaType::Replaced, "ns/a", 1, false),
            d(DeltaType::Replaced, "ns/a", 2, false)
        ]
    );
}

#[test]
fn replace_queues_sync_in_legacy_mode() {
    let fifo = fifo().emit_delta_type_replaced(false);
    fifo.replace(vec![cm("ns", "a", 1)], "10");
    assert_eq!(queued(&fifo), [d(DeltaType::Sync, "ns/a", 1, false)]);
}

#[test]
fn first_replace_sets_the_initial_population_to_every_queued_delta() {
    let mut indexer = Indexer::new();
    indexer.add(cm("ns", "known-gone", 1));
    let fifo = fifo_with(&indexer);
    // One tombstone and three listed objects, two of them under one key: four deltas.
    fifo.replace(
        vec![cm("ns", "a", 2), cm("ns", "b", 3), cm("ns", "b", 4)],
        "10",
    );
    fifo.add(cm("ns", "after", 5));
    let mut initial = Vec::new();
    for _ in 0..4 {
        assert!(!fifo.has_synced());
        initial.push(pop(&fifo, 1).is_in_initial_list);
        check_invariants(&fifo);
    }
    assert_eq!(initial, [true; 4]);
    assert!(fifo.has_synced());
    assert!(!pop(&fifo, 1).is_in_initial_list);
}

#[test]
fn only_the_first_replace_sets_the_initial_population() {
    let fifo = fifo();
    fifo.replace(vec![cm("ns", "a", 1)], "10");
    pop(&fifo, 1);
    assert!(fifo.has_synced());
    fifo.replace(vec![cm("ns", "a", 2), cm("ns", "b", 3)], "11");
    assert!(fifo.has_synced());
    assert!(!pop(&fifo, 1).is_in_initial_list);
}

#[test]
fn adds_before_the_first_replace_make_the_queue_synced_at_once() {
    let fifo = fifo();
    fifo.add(cm("ns", "a", 1));
    assert!(fifo.has_synced());
    fifo.replace(vec![cm("ns", "b", 2)], "10");
    assert!(fifo.has_synced());
    assert!(!pop(&fifo, 1).is_in_initial_list);
}

#[test]
fn resync_queues_sync_for_known_keys_with_nothing_queued_in_key_order() {
    let mut indexer = Indexer::new();
    for (name, rv) in [("c", 3), ("a", 1), ("b", 2)] {
        indexer.add(cm("ns", name, rv));
    }
    let fifo = fifo_with(&indexer);
    fifo.update(cm("ns", "b", 5));
    assert_eq!(fifo.resync(), 2);
    assert_eq!(
        queued(&fifo),
        [
            d(DeltaType::Updated, "ns/b", 5, false),
            d(DeltaType::Sync, "ns/a", 1, false),
            d(DeltaType::Sync, "ns/c", 3, false),
        ]
    );
}

#[test]
fn bookmark_queues_nothing_outside_atomic_mode() {
    let fifo = fifo();
    fifo.bookmark("10");
    assert!(fifo.is_empty());
}

#[test]
fn pop_takes_one_delta_in_arrival_order_with_its_key() {
    let fifo = fifo();
    fifo.add(cm("ns", "a", 1));
    fifo.update(cm("ns", "a", 2));
    fifo.add(cm("ns", "b", 3));
    let first = pop(&fifo, 1);
    assert_eq!(first.key.as_deref(), Some("ns/a"));
    assert_eq!(popped(&first), [d(DeltaType::Added, "ns/a", 1, false)]);
    assert_eq!(first.queue_len, 2);
    assert_eq!(
        popped(&pop(&fifo, 1)),
        [d(DeltaType::Updated, "ns/a", 2, false)]
    );
    assert_eq!(pop(&fifo, 1).key.as_deref(), Some("ns/b"));
    assert!(fifo.is_empty());
}

#[test]
fn pop_passes_the_deltas_and_initial_flag_to_process_under_the_lock() {
    let fifo = fifo();
    fifo.replace(vec![cm("ns", "a", 1)], "10");
    let mut seen = Vec::new();
    let popped = fifo
        .try_pop_batch(1, &mut |deltas, initial| {
            // The queue is still locked: a producer could not have queued anything since.
            assert!(fifo.state.try_lock().is_err());
            seen.push((deltas.iter().map(summary).collect::<Vec<_>>(), initial));
        })
        .unwrap();
    assert_eq!(
        seen,
        [(vec![d(DeltaType::Replaced, "ns/a", 1, false)], true)]
    );
    assert!(popped.is_in_initial_list);
    assert!(fifo.has_synced());
}

#[test]
fn pop_batch_takes_up_to_max_consecutive_deltas_of_distinct_keys() {
    let fifo = fifo();
    for (name, rv) in [("a", 1), ("b", 2), ("c", 3), ("d", 4)] {
        fifo.add(cm("ns", name, rv));
    }
    let batch = pop(&fifo, 3);
    assert_eq!(batch.key, None, "a batch of several keys has no single key");
    assert_eq!(
        popped(&batch),
        [
            d(DeltaType::Added, "ns/a", 1, false),
            d(DeltaType::Added, "ns/b", 2, false),
            d(DeltaType::Added, "ns/c", 3, false)
        ]
    );
    assert_eq!(batch.queue_len, 1);
    let last = pop(&fifo, 3);
    assert_eq!(last.key.as_deref(), Some("ns/d"));
}

#[test]
fn pop_batch_stops_before_a_key_already_in_the_batch() {
    let fifo = fifo();
    fifo.add(cm("ns", "a", 1));
    fifo.add(cm("ns", "b", 2));
    fifo.update(cm("ns", "a", 3));
    assert_eq!(pop(&fifo, 10).deltas.len(), 2);
    assert_eq!(
        popped(&pop(&fifo, 10)),
        [d(DeltaType::Updated, "ns/a", 3, false)]
    );
}

#[test]
fn pop_batch_never_crosses_the_end_of_the_initial_population() {
    let fifo = fifo();
    fifo.replace(vec![cm("ns", "a", 1), cm("ns", "b", 2)], "10");
    fifo.add(cm("ns", "c", 3));
    let initial = pop(&fifo, 10);
    assert_eq!(initial.deltas.len(), 2);
    assert!(initial.is_in_initial_list);
    assert!(fifo.has_synced());
    let after = pop(&fifo, 10);
    assert!(!after.is_in_initial_list);
    assert_eq!(after.key.as_deref(), Some("ns/c"));
}

#[test]
fn pop_batch_takes_a_whole_list_delta_alone() {
    let fifo = RealFifo::atomic();
    fifo.add(cm("ns", "a", 1));
    fifo.bookmark("5");
    fifo.add(cm("ns", "b", 2));
    assert_eq!(
        popped(&pop(&fifo, 10)),
        [d(DeltaType::Added, "ns/a", 1, false)]
    );
    let bookmark = pop(&fifo, 10);
    assert_eq!(bookmark.key, None);
    assert_eq!(popped(&bookmark), [d(DeltaType::Bookmark, "-", 5, false)]);
    assert_eq!(pop(&fifo, 10).deltas.len(), 1);
}

#[test]
fn batch_enqueued_at_is_when_its_oldest_delta_was_queued() {
    let fifo = fifo();
    fifo.add(cm("ns", "a", 1));
    thread::sleep(Duration::from_millis(5));
    fifo.add(cm("ns", "b", 2));
    let batch = pop(&fifo, 2);
    assert!(batch.popped_at.duration_since(batch.enqueued_at) >= Duration::from_millis(5));
}

#[test]
fn stats_count_deltas_and_never_report_coalescing() {
    let fifo = fifo();
    fifo.add(cm("ns", "a", 1));
    fifo.update(cm("ns", "a", 2));
    fifo.update(cm("ns", "a", 3));
    pop(&fifo, 1);
    let stats = fifo.stats();
    assert_eq!((stats.len, stats.peak_len, stats.coalesced), (2, 3, 0));
}

/// Waits until `n` consumers are blocked in `pop`.
fn until_blocked(fifo: &Fifo, n: usize) {
    while fifo.waiters() < n {
        thread::yield_now();
    }
}

#[test]
fn pop_blocks_while_empty() {
    let fifo = Arc::new(fifo());
    let consumer = {
        let fifo = fifo.clone();
        thread::spawn(move || fifo.pop_batch(1, &mut |_, _| {}).unwrap().key)
    };
    until_blocked(&fifo, 1);
    assert!(!consumer.is_finished());
    fifo.add(cm("ns", "a", 1));
    assert_eq!(consumer.join().unwrap().as_deref(), Some("ns/a"));
}

#[test]
fn pop_drains_a_closed_queue_then_reports_the_end() {
    let fifo = fifo();
    fifo.add(cm("ns", "a", 1));
    fifo.close();
    assert!(fifo.is_closed());
    assert!(fifo.pop_batch(1, &mut |_, _| {}).is_some());
    assert!(fifo.pop_batch(1, &mut |_, _| {}).is_none());
}

#[test]
fn close_wakes_a_blocked_pop() {
    let fifo = Arc::new(fifo());
    let consumer = {
        let fifo = fifo.clone();
        thread::spawn(move || fifo.pop_batch(1, &mut |_, _| {}).is_none())
    };
    until_blocked(&fifo, 1);
    fifo.close();
    assert!(consumer.join().unwrap());
}

#[test]
fn try_pop_returns_none_when_nothing_is_queued() {
    let fifo = fifo();
    assert!(fifo.try_pop_batch(1, &mut |_, _| {}).is_none());
}

#[test]
fn atomic_replace_queues_one_replaced_all_with_the_resource_version_and_every_object() {
    let fifo = RealFifo::atomic();
    fifo.replace(vec![cm("ns", "b", 2), cm("ns", "a", 1)], "10");
    let deltas = fifo.queued();
    assert_eq!(queued(&fifo), [d(DeltaType::ReplacedAll, "-", 10, false)]);
    let info = deltas.oldest().unwrap().object.list().unwrap();
    let objects: Vec<u64> = info.objects.iter().map(|o| rv(o)).collect();
    assert_eq!(objects, [2, 1], "the list, in list order");
    assert_eq!(deltas.oldest().unwrap().object.object_count(), 2);
}

#[test]
fn atomic_replace_queues_no_tombstones_whatever_is_queued() {
    let fifo = RealFifo::atomic();
    fifo.add(cm("ns", "gone", 1));
    fifo.replace(vec![cm("ns", "a", 2)], "10");
    assert_eq!(
        queued(&fifo),
        [
            d(DeltaType::Added, "ns/gone", 1, false),
            d(DeltaType::ReplacedAll, "-", 10, false)
        ]
    );
}

#[test]
fn atomic_replace_ignores_the_legacy_sync_option() {
    let fifo = RealFifo::atomic().emit_delta_type_replaced(false);
    fifo.replace(vec![cm("ns", "a", 1)], "10");
    assert_eq!(queued(&fifo), [d(DeltaType::ReplacedAll, "-", 10, false)]);
}

#[test]
fn atomic_first_replace_makes_the_replaced_all_the_initial_population() {
    let fifo = RealFifo::atomic();
    fifo.replace(vec![cm("ns", "a", 1), cm("ns", "b", 2)], "10");
    fifo.add(cm("ns", "c", 3));
    assert!(!fifo.has_synced());
    let initial = pop(&fifo, 10);
    assert!(initial.is_in_initial_list);
    assert_eq!(initial.deltas.len(), 1);
    assert!(fifo.has_synced());
}

#[test]
fn atomic_resync_queues_one_sync_all() {
    let fifo = RealFifo::atomic();
    fifo.add(cm("ns", "a", 1));
    assert_eq!(fifo.resync(), 1);
    assert_eq!(queued(&fifo)[1], d(DeltaType::SyncAll, "-", 0, false));
}

#[test]
fn atomic_bookmark_queues_a_bookmark_with_the_resource_version() {
    let fifo = RealFifo::atomic();
    fifo.bookmark("42");
    let deltas = fifo.queued();
    assert_eq!(queued(&fifo), [d(DeltaType::Bookmark, "-", 42, false)]);
    assert_eq!(deltas.oldest().unwrap().object.object_count(), 0);
}

#[test]
fn atomic_add_update_delete_queue_as_in_per_object_mode() {
    let fifo = RealFifo::atomic();
    fifo.add(cm("ns", "a", 1));
    fifo.update(cm("ns", "a", 2));
    assert!(fifo.delete(cm("ns", "ghost", 3).into()));
    assert_eq!(
        queued(&fifo),
        [
            d(DeltaType::Added, "ns/a", 1, false),
            d(DeltaType::Updated, "ns/a", 2, false),
            d(DeltaType::Deleted, "ns/ghost", 3, false)
        ]
    );
    check_invariants(&fifo);
}

#[test]
fn kind_says_which_mode_runs() {
    assert_eq!(fifo().kind(), QueueKind::Real);
    assert_eq!(RealFifo::<Object>::atomic().kind(), QueueKind::Atomic);
}

/// `RealFIFO.whileProcessing_locked` @v0.36.3 (`UnlockWhileProcessing`): the producer queues
/// while a pop is processed, the popped deltas count against the initial population until
/// processed (`HasSynced` stays false meanwhile), and the next batch pop takes what piled up.
#[test]
fn unlocked_processing_lets_the_producer_queue_and_the_next_pop_take_the_pile() {
    let fifo = Arc::new(RealFifo::atomic().unlock_while_processing(true));
    assert!(fifo.unlocks_while_processing());
    fifo.replace(vec![cm("ns", "a", 1)], "1");
    let producer = fifo.clone();
    let mut synced_inside = None;
    fifo.try_pop_batch(1000, &mut |_, initial| {
        assert!(initial);
        assert!(producer.state.try_lock().is_ok(), "the lock is released");
        for n in 2..=4 {
            producer.add(cm("ns", &format!("o{n}"), n));
        }
        synced_inside = Some(producer.has_synced());
        assert!(!producer.is_empty(), "queued while processing");
    })
    .expect("the ReplacedAll");
    assert_eq!(
        synced_inside,
        Some(false),
        "HasSynced waits for the processing"
    );
    assert!(fifo.has_synced());
    let next = fifo.try_pop_batch(1000, &mut |_, _| {}).unwrap();
    assert_eq!(next.deltas.len(), 3);
    assert!(fifo.is_empty());
}

/// `whileProcessing_locked` keeps the lock once `batchSize*2` = 2000 deltas wait, and
/// `NewRealFIFOWithOptions` refuses the option without atomic events.
#[test]
fn processing_keeps_the_lock_past_2000_waiting_deltas_and_without_atomic_events() {
    let queue = RealFifo::atomic().unlock_while_processing(true);
    for n in 0..=UNLOCK_LIMIT as u64 {
        queue.add(cm("ns", &format!("o{n}"), n));
    }
    queue
        .try_pop_batch(1, &mut |_, _| {
            // 2000 still wait: the lock is held, so the queue is observably busy.
            assert!(queue.state.try_lock().is_err());
        })
        .unwrap();
    queue
        .try_pop_batch(1, &mut |_, _| {
            assert!(queue.state.try_lock().is_ok(), "1999 wait: unlocked");
        })
        .unwrap();
    assert!(
        !fifo()
            .unlock_while_processing(true)
            .unlocks_while_processing()
    );
}
