//! The rules of controller-runtime's priority queue (`pkg/controller/priorityqueue/
//! priorityqueue.go`, v0.24.1), one test each, named after the function that has the rule.

use std::time::{Duration, Instant};

use super::*;
use crate::cache::workqueue::{ControllerQueue, ReconcileResult};

fn at(start: Instant, ms: u64) -> Instant {
    start + Duration::from_millis(ms)
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Every key `get` hands out at `now`, done at once.
fn drain(q: &mut PriorityQueue<&'static str>, now: Instant) -> Vec<(&'static str, i32)> {
    let mut out = Vec::new();
    while let Some(got) = q.get(now) {
        q.done(&got.item, now);
        out.push((got.item, got.priority.unwrap()));
    }
    out
}

/// `lessReady`: the higher priority first, and among one priority the order of the adds.
#[test]
fn get_hands_out_the_highest_priority_then_the_oldest_as_less_ready() {
    let t0 = Instant::now();
    let mut q = PriorityQueue::default();
    q.add("low-1", LOW_PRIORITY, t0);
    q.add("normal-1", 0, t0);
    q.add("low-2", LOW_PRIORITY, t0);
    q.add("high", 10, t0);
    q.add("normal-2", 0, t0);
    assert_eq!(
        drain(&mut q, t0),
        [
            ("high", 10),
            ("normal-1", 0),
            ("normal-2", 0),
            ("low-1", LOW_PRIORITY),
            ("low-2", LOW_PRIORITY),
        ]
    );
}

/// `lockedAddWithOpts`: an add of a key with an entry is absorbed by it (one `get`); a lower
/// priority changes nothing, neither the priority nor the place.
#[test]
fn an_add_of_a_waiting_key_folds_and_keeps_the_higher_priority_as_locked_add_with_opts() {
    let t0 = Instant::now();
    let mut q = PriorityQueue::default();
    assert_eq!(q.add("a", 0, t0), Added::Queued);
    q.add("b", 0, t0);
    assert_eq!(q.add("a", LOW_PRIORITY, at(t0, 10)), Added::Folded);
    assert_eq!(q.add("a", 0, at(t0, 20)), Added::Folded);
    assert_eq!(q.len(), 2);
    let got = q.get(at(t0, 30)).unwrap();
    assert_eq!(
        (got.item, got.priority, got.adds, got.queued_at),
        ("a", Some(0), 3, t0)
    );
    let m = q.metrics(at(t0, 30));
    assert_eq!((m.adds, m.folded), (2, 2));
}

/// `lockedAddWithOpts` (controller-runtime 31d30b66, "fix priority queue ordering when item
/// priority changes"): an add that raises a key's priority puts it behind the keys already
/// waiting at the new priority, not at the place its first add had.
#[test]
fn a_raised_priority_goes_behind_its_new_priority_as_locked_add_with_opts() {
    let t0 = Instant::now();
    let mut q = PriorityQueue::default();
    q.add("a", LOW_PRIORITY, t0);
    q.add("b", 0, t0);
    q.add("c", LOW_PRIORITY, t0);
    q.add("a", 0, at(t0, 10));
    assert_eq!(q.entry(&"a"), Some((0, None)));
    assert_eq!(
        drain(&mut q, at(t0, 20)),
        [("b", 0), ("a", 0), ("c", LOW_PRIORITY)]
    );
}

/// `lockedAddWithOpts`: two delayed adds of a key keep the earlier ready time, and a delayed add
/// of a ready key leaves it ready: one entry, no second reconcile later.
#[test]
fn the_earlier_ready_time_wins_and_a_ready_key_stays_ready_as_locked_add_with_opts() {
    let t0 = Instant::now();
    let mut q = PriorityQueue::default();
    assert_eq!(q.add_after("a", ms(100), 0, t0), Added::Waiting);
    assert_eq!(q.add_after("a", ms(50), 0, t0), Added::Waiting);
    assert_eq!(q.add_after("a", ms(80), 0, t0), Added::Waiting);
    assert_eq!(q.entry(&"a"), Some((0, Some(at(t0, 50)))));
    q.add("b", 0, t0);
    assert_eq!(q.add_after("b", ms(10), 0, t0), Added::Folded);
    assert_eq!(q.entry(&"b"), Some((0, None)));
    assert_eq!(drain(&mut q, t0), [("b", 0)]);
    assert_eq!(q.advance(at(t0, 49)), 0);
    assert_eq!(q.advance(at(t0, 50)), 1);
    assert_eq!(drain(&mut q, at(t0, 50)), [("a", 0)]);
    // Nothing is left to fire: client-go's delaying queue would still hold b's entry.
    assert_eq!(q.next_ready_at(), None);
    assert_eq!(q.metrics(at(t0, 50)).retries, 4);
}

/// `lockedAddWithOpts`, `case readyAt == nil && w.items[key].ReadyAt != nil`: an add that makes
/// a waiting key ready now keeps its add counter (unless it raises the priority), so the key goes
/// before the keys added while it waited.
#[test]
fn a_waiting_key_made_ready_keeps_its_place_as_locked_add_with_opts() {
    let t0 = Instant::now();
    let mut q = PriorityQueue::default();
    q.add_after("a", Duration::from_secs(10), 0, t0);
    q.add("b", 0, at(t0, 1));
    q.add("c", 0, at(t0, 2));
    assert_eq!(q.add("a", 0, at(t0, 3)), Added::Queued);
    assert_eq!(q.next_ready_at(), None);
    assert_eq!(drain(&mut q, at(t0, 4)), [("a", 0), ("b", 0), ("c", 0)]);
}

/// `handleWaitingItems`: keys whose time came become ready in ready-time order, each with a new
/// add counter: behind the keys already ready at their priority, however early they were added.
#[test]
fn due_keys_become_ready_in_ready_time_order_behind_ready_ones_as_handle_waiting_items() {
    let t0 = Instant::now();
    let mut q = PriorityQueue::default();
    q.add_after("late", ms(20), 0, t0);
    q.add_after("early", ms(10), 0, t0);
    q.add_after("low", ms(5), LOW_PRIORITY, t0);
    q.add("ready", 0, at(t0, 1));
    assert_eq!(q.advance(at(t0, 20)), 3);
    let got = q.get(at(t0, 20)).unwrap();
    assert_eq!(got.item, "ready");
    q.done(&got.item, at(t0, 20));
    let got = q.get(at(t0, 25)).unwrap();
    // Queued since it became ready (the metrics' addTimes), not since the add.
    assert_eq!((got.item, got.queued_at), ("early", at(t0, 10)));
    q.done(&got.item, at(t0, 25));
    assert_eq!(
        drain(&mut q, at(t0, 25)),
        [("late", 0), ("low", LOW_PRIORITY)]
    );
    assert_eq!(q.metrics(at(t0, 25)).adds, 4);
}

/// `lockedAddWithOpts` with `After` and `RateLimited`: the smaller of the two delays.
#[test]
fn after_and_rate_limited_take_the_smaller_delay_as_locked_add_with_opts() {
    let t0 = Instant::now();
    let mut q = PriorityQueue::default();
    let both = |after| AddOpts {
        after,
        rate_limited: true,
        priority: 0,
    };
    // The limiter's first delay is 5 ms, its second 10 ms.
    assert_eq!(
        q.add_with_opts("a", both(ms(100)), t0),
        (Added::Waiting, ms(5))
    );
    assert_eq!(
        q.add_with_opts("b", both(ms(1)), t0),
        (Added::Waiting, ms(1))
    );
    assert_eq!(q.num_requeues(&"b"), 1);
    assert_eq!(q.next_ready_at(), Some(at(t0, 1)));
}

/// `handleReadyItems` (`if w.locked.Has(item.Key)`): a key added while it is processed gets a
/// new entry that `get` skips until `Done`; then it is handed out at its place in the order
/// (client-go's `Done` would put it at the back, behind keys added after it).
#[test]
fn a_key_added_while_processing_waits_for_done_at_its_place_as_handle_ready_items() {
    let t0 = Instant::now();
    let mut q = PriorityQueue::default();
    q.add("a", 0, t0);
    let got = q.get(t0).unwrap();
    assert_eq!(q.add("a", 0, at(t0, 1)), Added::WhileProcessing);
    assert_eq!(q.add("a", 0, at(t0, 2)), Added::FoldedWhileProcessing);
    q.add("b", 0, at(t0, 3));
    // a's entry comes first, but a is being processed: b is handed out.
    assert_eq!(q.get(at(t0, 4)).unwrap().item, "b");
    assert!(q.get(at(t0, 4)).is_none(), "a is still being processed");
    assert!(!q.has_ready());
    let finished = q.done(&got.item, at(t0, 5));
    assert!(finished.requeued);
    q.done(&"b", at(t0, 5));
    q.add("c", 0, at(t0, 6));
    let got = q.get(at(t0, 7)).unwrap();
    assert_eq!((got.item, got.requeued, got.adds), ("a", true, 2));
    assert_eq!(got.queued_at, at(t0, 1));
    assert_eq!(q.metrics(at(t0, 7)).requeued, 1);
}

/// `GetWithPriority` and `AddWithOpts` after `ShutDown`: nothing more is handed out, even keys
/// that are ready, adds are ignored and the limiter is not consulted.
#[test]
fn a_shut_down_queue_hands_out_nothing_as_get_with_priority() {
    let t0 = Instant::now();
    let mut q = PriorityQueue::default();
    q.add("a", 0, t0);
    q.shut_down();
    assert!(q.get(t0).is_none());
    assert!(!ControllerQueue::has_ready(&q));
    assert_eq!(q.add("b", 0, t0), Added::ShuttingDown);
    assert_eq!(q.add_rate_limited("c", 0, t0), Duration::ZERO);
    assert_eq!(q.num_requeues(&"c"), 0);
}

/// `priorityqueue.New` and `NewTypedUnmanaged` with `UsePriorityQueue`: the per-item exponential
/// limiter alone. 150 keys failing at once each come back after 5 ms, where client-go's default
/// limiter's 100-token bucket would hold the last 50 back (a 101st failure waits 100 ms).
#[test]
fn the_default_rate_limiter_has_no_token_bucket_as_priorityqueue_new() {
    let t0 = Instant::now();
    let keys: Vec<String> = (0..150).map(|i| format!("k{i}")).collect();
    let mut q: PriorityQueue<String> = PriorityQueue::default();
    for key in &keys {
        assert_eq!(q.add_rate_limited(key.clone(), 0, t0), ms(5), "{key}");
    }
    assert_eq!(q.add_rate_limited(keys[0].clone(), 0, t0), ms(10));
}

/// `reconcileHandler` (`pkg/internal/controller/controller.go`, v0.24.1): an error re-adds the
/// key rate-limited at the priority it was handed out with (`Priority: new(priority)`), so an
/// initial-list key that fails keeps coming back behind live changes.
#[test]
fn a_retry_keeps_the_priority_it_was_handed_out_with_as_reconcile_handler() {
    let t0 = Instant::now();
    let mut q = PriorityQueue::default();
    q.add("listed", LOW_PRIORITY, t0);
    let got = q.get(t0).unwrap();
    let retry_in = q.requeue(&got.item, ReconcileResult::Error, got.priority.unwrap(), t0);
    q.done(&got.item, t0);
    assert_eq!(retry_in, Some(ms(5)));
    assert_eq!(q.entry(&"listed"), Some((LOW_PRIORITY, Some(at(t0, 5)))));
    q.add("changed", 0, at(t0, 1));
    q.advance(at(t0, 5));
    assert_eq!(
        drain(&mut q, at(t0, 5)),
        [("changed", 0), ("listed", LOW_PRIORITY)]
    );
}
