//! The rules of client-go's `Typed` queue (`util/workqueue/queue.go`, v0.36.3), one test each.

use std::time::{Duration, Instant};

use super::*;

fn at(start: Instant, ms: u64) -> Instant {
    start + Duration::from_millis(ms)
}

/// `Typed.Add`: a key already dirty is not queued again (`if q.dirty.Has(item)`), so a burst of
/// adds while it waits folds into one `Get`.
#[test]
fn add_of_a_waiting_key_folds_into_one_get_as_typed_add() {
    let t0 = Instant::now();
    let mut q = Queue::new();
    assert_eq!(q.add("a", t0), Added::Queued);
    assert_eq!(q.add("a", at(t0, 10)), Added::Folded);
    assert_eq!(q.add("a", at(t0, 20)), Added::Folded);
    assert_eq!(q.len(), 1);
    let got = q.get(at(t0, 30)).unwrap();
    assert_eq!((got.item, got.adds, got.queued_at), ("a", 3, t0));
    assert!(q.get(at(t0, 30)).is_none());
    let m = q.metrics(at(t0, 30));
    assert_eq!(
        (m.adds, m.folded, m.max_queue_duration),
        (1, 2, Duration::from_millis(30))
    );
}

/// `Typed.Get`: the oldest key first; it moves from dirty to processing.
#[test]
fn get_hands_out_the_oldest_key_as_typed_get() {
    let t0 = Instant::now();
    let mut q = Queue::new();
    q.add("b", t0);
    q.add("a", t0);
    q.add("b", t0);
    assert_eq!(q.get(t0).unwrap().item, "b");
    assert!(q.is_processing(&"b"));
    assert_eq!(q.get(t0).unwrap().item, "a");
    assert!(q.get(t0).is_none());
}

/// `Typed.Add` while processing and `Typed.Done`: the key is only marked dirty, is not handed to
/// a second worker, and is queued again by `Done` (client-go's `TestAddWhileProcessing`).
#[test]
fn add_while_processing_waits_for_done_as_typed_done() {
    let t0 = Instant::now();
    let mut q = Queue::new();
    q.add("a", t0);
    q.get(t0).unwrap();
    assert_eq!(q.add("a", at(t0, 5)), Added::WhileProcessing);
    assert_eq!(q.add("a", at(t0, 6)), Added::FoldedWhileProcessing);
    assert!(q.get(at(t0, 7)).is_none(), "a is being processed");
    let done = q.done(&"a", at(t0, 10));
    assert_eq!(
        done,
        Finished {
            work: Some(Duration::from_millis(10)),
            requeued: true
        }
    );
    let got = q.get(at(t0, 12)).unwrap();
    assert_eq!(
        (got.item, got.adds, got.requeued, got.queued_at),
        ("a", 2, true, at(t0, 5))
    );
    assert!(!q.done(&"a", at(t0, 13)).requeued);
    assert!(q.is_empty());
    assert_eq!(q.metrics(at(t0, 13)).requeued, 1);
}

/// `Typed.Done` of a key nobody added meanwhile: it is gone for good.
#[test]
fn done_without_an_add_meanwhile_forgets_the_key_as_typed_done() {
    let t0 = Instant::now();
    let mut q = Queue::new();
    q.add("a", t0);
    q.get(t0);
    assert!(!q.done(&"a", t0).requeued);
    assert_eq!(
        q.add("a", at(t0, 1)),
        Added::Queued,
        "a is neither dirty nor processing"
    );
}

/// `Typed.ShutDown`: later adds are ignored, waiting keys can still be taken
/// (client-go's `TestBasic` drains after `ShutDown`).
#[test]
fn shut_down_ignores_adds_and_lets_workers_drain_as_typed_shut_down() {
    let t0 = Instant::now();
    let mut q = Queue::new();
    q.add("a", t0);
    q.shut_down();
    assert_eq!(q.add("b", t0), Added::ShuttingDown);
    assert_eq!(q.get(t0).unwrap().item, "a");
    assert!(q.get(t0).is_none());
    assert!(q.shutting_down());
}

/// `defaultQueueMetrics.updateUnfinishedWork`: the processing keys' ages, summed and the longest.
#[test]
fn unfinished_work_is_the_age_of_the_keys_in_processing_as_update_unfinished_work() {
    let t0 = Instant::now();
    let mut q = Queue::new();
    q.add("a", t0);
    q.add("b", t0);
    q.get(t0);
    q.get(at(t0, 100));
    let m = q.metrics(at(t0, 300));
    assert_eq!(m.unfinished_work, Duration::from_millis(500));
    assert_eq!(m.longest_running_processor, Duration::from_millis(300));
    assert_eq!((m.depth, m.max_depth, m.gets), (0, 2, 2));
}
