//! [`ThreadedWorkers`]: `processNextWorkItem` on threads, settling without polling.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::super::controller_queue::ReconcileResult;
use super::super::inline::Outcome;
use super::super::rate_limiting_queue::RateLimitingQueue;
use super::super::{ItemExponentialFailureRateLimiter, default_controller_rate_limiter};
use super::*;
use crate::cache::reflector::TokioClock;

/// An interrupt requested by hand, whose sleep ends at once when requested.
#[derive(Default)]
struct Flag(AtomicBool);

impl Interrupt for Flag {
    fn requested(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    fn sleep(&self, _duration: Duration) {}
}

/// Fails each key's first `fails` reconciles.
struct Failing {
    fails: u32,
}

impl Reconciler<u32> for Failing {
    type Seen = ();

    fn reconcile(&mut self, _key: &u32, attempt: u32, _started_at: Instant) -> Outcome<()> {
        let result = if attempt <= self.fails {
            ReconcileResult::Error
        } else {
            ReconcileResult::Ok
        };
        Outcome {
            result,
            duration: Duration::ZERO,
            seen: (),
        }
    }
}

fn workers(
    fails: u32,
    limiter: Box<dyn super::super::RateLimiter<u32>>,
    interrupt: Arc<Flag>,
) -> Arc<ThreadedWorkers<u32, Failing, RateLimitingQueue<u32>>> {
    ThreadedWorkers::new(
        RateLimitingQueue::new(limiter),
        Failing { fails },
        Arc::new(TokioClock),
        interrupt,
    )
}

/// controller-runtime's `reconcileHandler`: an error is retried (`AddRateLimited`) with the
/// attempt counting the failures before it, and the wait for the end of the work covers the
/// retries; every reconcile reaches the sink once.
#[test]
fn wait_settled_covers_the_retries_of_reconcile_handler() {
    let interrupt = Arc::new(Flag::default());
    let limiter =
        ItemExponentialFailureRateLimiter::new(Duration::from_millis(1), Duration::from_millis(4));
    let w = workers(2, Box::new(limiter), interrupt);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let seen = seen.clone();
        move |r: Reconcile<u32, ()>| lock(&seen).push((r.key, r.attempt, r.result))
    };
    w.start(2, sink).unwrap();
    w.add_with_priority(7, 0);
    w.add_with_priority(8, 0);
    w.wait_settled(false);
    let mut seen = lock(&seen).clone();
    seen.sort_by_key(|(key, attempt, _)| (*key, *attempt));
    assert_eq!(
        seen,
        [
            (7, 1, ReconcileResult::Error),
            (7, 2, ReconcileResult::Error),
            (7, 3, ReconcileResult::Ok),
            (8, 1, ReconcileResult::Error),
            (8, 2, ReconcileResult::Error),
            (8, 3, ReconcileResult::Ok),
        ]
    );
    w.stopping();
    w.join();
    assert_eq!(w.metrics().dones, 6);
}

/// A wait for work that never ends (a key failing for far longer than the test) ends at the
/// interrupt, which the stop wakes it for.
#[test]
fn stopping_ends_a_wait_for_retries() {
    let interrupt = Arc::new(Flag::default());
    let w = workers(
        u32::MAX,
        Box::new(default_controller_rate_limiter()),
        interrupt.clone(),
    );
    w.start(1, |_| {}).unwrap();
    w.add_with_priority(1, 0);
    let waiter = {
        let w = w.clone();
        std::thread::spawn(move || w.wait_settled(false))
    };
    interrupt.0.store(true, Ordering::SeqCst);
    w.stopping();
    waiter.join().unwrap();
    w.join();
}
