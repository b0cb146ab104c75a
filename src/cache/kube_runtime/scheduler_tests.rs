use std::time::{Duration, Instant};

use super::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn schedule_message_earlier_request_wins() {
    let t0 = Instant::now();
    let mut s = Scheduler::new(Duration::ZERO);
    assert_eq!(
        s.schedule("a", t0 + ms(500), Reason::Requeue),
        Scheduled::New(t0 + ms(500))
    );
    // Earlier: the slot moves to it and takes its reason.
    assert!(matches!(
        s.schedule("a", t0 + ms(100), Reason::ObjectUpdated),
        Scheduled::Reset { .. }
    ));
    // Later: the earlier slot is kept.
    assert_eq!(
        s.schedule("a", t0 + ms(900), Reason::Requeue),
        Scheduled::Kept(t0 + ms(100))
    );
    assert_eq!(
        s.pop(t0 + ms(100), |_| true),
        Some(("a".into(), Reason::ObjectUpdated))
    );
}

#[test]
fn debounced_scheduler_resets_to_the_trailing_edge() {
    let t0 = Instant::now();
    let mut s = Scheduler::new(ms(1000));
    assert_eq!(
        s.schedule("a", t0, Reason::ObjectUpdated),
        Scheduled::New(t0 + ms(1000))
    );
    // A request before the slot's time pushes it to its own time + debounce.
    let again = s.schedule("a", t0 + ms(600), Reason::ObjectUpdated);
    assert!(again.is_debounced());
    assert_eq!(s.due("a"), Some(t0 + ms(1600)));
    assert_eq!(s.pop(t0 + ms(1000), |_| true), None);
    assert!(s.pop(t0 + ms(1600), |_| true).is_some());
}

#[test]
fn scheduler_should_not_reschedule_pending_items() {
    let t0 = Instant::now();
    let mut s = Scheduler::new(Duration::ZERO);
    s.schedule("a", t0, Reason::ObjectUpdated);
    // Due but not takeable (its object is being reconciled): pending.
    assert_eq!(s.pop(t0, |_| false), None);
    assert!(s.is_pending("a"));
    assert_eq!(
        s.schedule("a", t0 + ms(1), Reason::Requeue),
        Scheduled::Dropped
    );
    assert_eq!(
        s.pop(t0 + ms(2), |_| true),
        Some(("a".into(), Reason::ObjectUpdated))
    );
    assert!(s.is_empty());
}

#[test]
fn scheduler_pending_message_should_not_block_head_of_line() {
    let t0 = Instant::now();
    let mut s = Scheduler::new(Duration::ZERO);
    s.schedule("a", t0, Reason::ObjectUpdated);
    s.schedule("b", t0, Reason::ObjectUpdated);
    assert_eq!(s.pop(t0, |k| k != "a").map(|m| m.0), Some("b".into()));
    assert!(s.is_pending("a"));
    // A pending message that may now be taken goes first.
    s.schedule("c", t0, Reason::ObjectUpdated);
    assert_eq!(s.pop(t0, |_| true).map(|m| m.0), Some("a".into()));
}

#[test]
fn hold_makes_every_expired_slot_pending() {
    let t0 = Instant::now();
    let mut s = Scheduler::new(Duration::ZERO);
    s.schedule("a", t0, Reason::ObjectUpdated);
    s.schedule("b", t0 + ms(10), Reason::ObjectUpdated);
    s.hold_all(t0 + ms(5));
    assert!(s.is_pending("a") && !s.is_pending("b"));
    assert_eq!(s.next_takeable(t0 + ms(5), |_| true), Some(t0 + ms(5)));
}
