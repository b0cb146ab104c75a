//! The rules of client-go's delaying queue (`util/workqueue/delaying_queue.go`, v0.36.3) and of
//! the `container/heap` under it.

use std::time::{Duration, Instant};

use super::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn drain(q: &mut DelayingQueue<&'static str>, now: Instant) -> Vec<&'static str> {
    std::iter::from_fn(|| q.get(now).map(|got| got.item)).collect()
}

/// `AddAfter` then `waitingLoop`: nothing is queued before its time (client-go's
/// `TestSimpleQueue`).
#[test]
fn add_after_queues_the_key_at_its_ready_time_as_waiting_loop() {
    let t0 = Instant::now();
    let mut q = DelayingQueue::new();
    q.add_after("foo", ms(50), t0);
    assert_eq!(q.advance(t0 + ms(49)), 0);
    assert!(q.is_empty());
    assert_eq!(q.advance(t0 + ms(50)), 1);
    let got = q.get(t0 + ms(60)).unwrap();
    assert_eq!((got.item, got.queued_at), ("foo", t0 + ms(50)));
    assert_eq!(q.metrics(t0).retries, 1);
}

/// `AddAfter` with no delay adds at once (`if duration <= 0`).
#[test]
fn add_after_zero_adds_at_once_as_add_after() {
    let t0 = Instant::now();
    let mut q = DelayingQueue::new();
    q.add_after("foo", Duration::ZERO, t0);
    assert_eq!(q.len(), 1);
    assert!(q.waiting().is_empty());
}

/// `insert`: a second `AddAfter` of a waiting key keeps the earlier ready time, in both orders
/// (client-go's `TestDeduping`).
#[test]
fn a_waiting_key_keeps_its_earliest_ready_time_as_insert() {
    let t0 = Instant::now();
    let mut q = DelayingQueue::new();
    q.add_after("foo", ms(50), t0);
    q.add_after("foo", ms(70), t0);
    assert_eq!(q.waiting().ready_at(&"foo"), Some(t0 + ms(50)));
    q.add_after("foo", ms(10), t0);
    assert_eq!(q.waiting().ready_at(&"foo"), Some(t0 + ms(10)));
    assert_eq!(q.waiting().len(), 1);
    assert_eq!(q.advance(t0 + ms(10)), 1);
    assert_eq!(q.advance(t0 + ms(100)), 0);
}

/// `waitingLoop` pops ready entries in `readyAt` order, whatever the order of the `AddAfter`s
/// (client-go's `TestCopyShifting`).
#[test]
fn ready_keys_come_out_earliest_first_as_copy_shifting() {
    let t0 = Instant::now();
    let mut q = DelayingQueue::new();
    q.add_after("foo", ms(1000), t0);
    q.add_after("bar", ms(500), t0);
    q.add_after("baz", ms(250), t0);
    q.advance(t0 + ms(2000));
    assert_eq!(drain(&mut q, t0 + ms(2000)), ["baz", "bar", "foo"]);
}

/// `container/heap` is not stable: three keys due at the same instant, added a, b, c, come out
/// a, c, b (`heap.Pop` swaps the last entry to the root and sifts it down only past a strictly
/// earlier child). A stable queue would say a, b, c.
#[test]
fn keys_due_at_the_same_instant_come_out_in_heap_order_as_container_heap() {
    let t0 = Instant::now();
    let mut q = DelayingQueue::new();
    for key in ["a", "b", "c"] {
        q.add_after(key, ms(5), t0);
    }
    q.advance(t0 + ms(5));
    assert_eq!(drain(&mut q, t0 + ms(5)), ["a", "c", "b"]);
}

/// `heap.Fix` after an earlier `AddAfter` of a waiting key moves it before keys that were due
/// earlier than its old time.
#[test]
fn an_earlier_ready_time_moves_the_key_up_the_heap_as_heap_fix() {
    let t0 = Instant::now();
    let mut q = DelayingQueue::new();
    q.add_after("a", ms(30), t0);
    q.add_after("b", ms(20), t0);
    q.add_after("c", ms(40), t0);
    q.add_after("c", ms(10), t0);
    q.advance(t0 + ms(100));
    assert_eq!(drain(&mut q, t0 + ms(100)), ["c", "b", "a"]);
}

/// A direct `Add` does not cancel a pending `AddAfter`: the key is processed now and again when
/// the entry fires.
#[test]
fn a_direct_add_leaves_the_pending_add_after_in_place_as_delaying_type() {
    let t0 = Instant::now();
    let mut q = DelayingQueue::new();
    q.add_after("a", ms(100), t0);
    q.add("a", t0 + ms(1));
    let got = q.get(t0 + ms(2)).unwrap();
    q.done(&got.item, t0 + ms(3));
    assert_eq!(q.advance(t0 + ms(100)), 1);
    assert_eq!(drain(&mut q, t0 + ms(100)), ["a"]);
}

/// `delayingType.ShutDown`: `AddAfter` is ignored (and not counted as a retry).
#[test]
fn add_after_is_ignored_when_shutting_down_as_add_after() {
    let t0 = Instant::now();
    let mut q = DelayingQueue::new();
    q.shut_down();
    q.add_after("a", ms(1), t0);
    assert!(q.waiting().is_empty());
    assert_eq!(q.metrics(t0).retries, 0);
}

/// The heap keeps `container/heap`'s invariant and the index map after many mixed operations:
/// every popped time is no earlier than the one before.
#[test]
fn the_heap_pops_in_time_order_after_mixed_operations() {
    let t0 = Instant::now();
    let mut w = WaitingQueue::new();
    let mut rng = fastrand::Rng::with_seed(7);
    let mut keys = std::collections::HashSet::new();
    for _ in 0..2000 {
        let key = rng.u32(0..300);
        keys.insert(key);
        w.insert(key, t0 + ms(rng.u64(0..1000)));
    }
    let mut last = t0;
    let mut popped = 0;
    while let Some((key, ready_at)) = w.pop_ready(t0 + ms(1000)) {
        assert!(ready_at >= last);
        assert_eq!(w.ready_at(&key), None);
        last = ready_at;
        popped += 1;
    }
    assert_eq!(popped, keys.len());
}
