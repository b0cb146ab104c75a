//! Controller-runtime's worker loop over client-go's queue, on a clock the test moves: cases with
//! exact expectations worked out by hand, and the three surprises.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use super::*;
use crate::cache::workqueue::{Added, RateLimitingQueue, default_controller_rate_limiter};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A reconciler that reads a key's resourceVersion from a timeline of the cache (what a lister
/// would return at the reconcile's start), takes `duration`, fails the first `fail` reconciles
/// of each key `fails` accepts, and may ask to be requeued after a while.
struct Scripted {
    duration: Duration,
    fail: u32,
    fails: fn(&str) -> bool,
    requeue_after: Option<Duration>,
    /// (when, key, resourceVersion; `None` for a delete), in time order.
    cache: Vec<(Instant, &'static str, Option<u64>)>,
    reconciles: HashMap<&'static str, u32>,
}

impl Scripted {
    fn new(duration: Duration) -> Self {
        Scripted {
            duration,
            fail: 0,
            fails: |_| true,
            requeue_after: None,
            cache: Vec::new(),
            reconciles: HashMap::new(),
        }
    }
}

impl Reconciler<&'static str> for Scripted {
    type Seen = Option<u64>;

    fn reconcile(
        &mut self,
        key: &&'static str,
        _attempt: u32,
        at: Instant,
    ) -> Outcome<Option<u64>> {
        let seen = self
            .cache
            .iter()
            .rfind(|(when, k, _)| *when <= at && k == key)
            .and_then(|(_, _, rv)| *rv);
        let n = self.reconciles.entry(key).or_insert(0);
        *n += 1;
        let result = if *n <= self.fail && (self.fails)(key) {
            ReconcileResult::Error
        } else if let Some(after) = self.requeue_after {
            ReconcileResult::RequeueAfter(after)
        } else {
            ReconcileResult::Ok
        };
        Outcome {
            result,
            duration: self.duration,
            seen,
        }
    }
}

type Done = Reconcile<&'static str, Option<u64>>;

/// A sink that keeps every reconcile in `done`.
fn keep(done: &mut Vec<Done>) -> impl FnMut(Done) -> ControlFlow<()> + '_ {
    |r| {
        done.push(r);
        ControlFlow::Continue(())
    }
}

/// The workers, with every reconcile their sink is handed kept in end order, as the tests read
/// them.
struct Collected<Q> {
    w: InlineWorkers<&'static str, Scripted, Q>,
    done: Vec<Done>,
}

impl<Q: ControllerQueue<&'static str>> Collected<Q> {
    fn new(w: InlineWorkers<&'static str, Scripted, Q>) -> Self {
        Collected {
            w,
            done: Vec::new(),
        }
    }

    fn add(&mut self, key: &'static str, at: Instant) -> Added {
        self.add_with_priority(key, 0, at)
    }

    fn add_with_priority(&mut self, key: &'static str, priority: i32, at: Instant) -> Added {
        self.w
            .add_with_priority(key, priority, at, &mut keep(&mut self.done))
    }

    fn run_through(&mut self, t: Instant) {
        let done = &mut self.done;
        let _ = self.w.run_through(t, &mut keep(done));
    }

    fn drain(&mut self) -> Vec<Done> {
        std::mem::take(&mut self.done)
    }

    fn metrics(&self) -> QueueMetrics {
        self.w.metrics()
    }

    fn queue(&self) -> &Q {
        self.w.queue()
    }

    fn reconciler(&self) -> &Scripted {
        self.w.reconciler()
    }
}

fn workers(
    n: usize,
    reconciler: Scripted,
    t0: Instant,
) -> Collected<RateLimitingQueue<&'static str>> {
    Collected::new(InlineWorkers::new(
        WorkersConfig { workers: n },
        RateLimitingQueue::new(Box::new(default_controller_rate_limiter())),
        reconciler,
        t0,
    ))
}

/// Feeds the cache timeline to the handler (one add per change), runs to `end`, and returns
/// (key, start in ms, attempt, what it saw, result) per reconcile.
fn run(
    w: &mut Collected<RateLimitingQueue<&'static str>>,
    t0: Instant,
    end: Duration,
) -> Vec<Reconcile<&'static str, Option<u64>>> {
    let changes = w.reconciler().cache.clone();
    for (at, key, _) in changes {
        w.add(key, at);
    }
    w.run_through(t0 + end);
    w.drain()
}

fn started_ms(r: &Reconcile<&str, Option<u64>>, t0: Instant) -> u128 {
    r.started_at.duration_since(t0).as_millis()
}

/// One worker, 1.5 s reconciles, `a` and `b` listed at 0, three updates
/// of `a` at 2.0–2.2 s, `b` updated at 2.5 s: `a`@0, `b`@1.5, `a`@3.0 reading rv 5 (the three
/// updates folded into one reconcile), `b`@4.5 (re-queued: it changed while reconciled).
#[test]
fn a_burst_folds_and_a_change_mid_reconcile_requeues_as_reconcile_handler() {
    let t0 = Instant::now();
    let mut r = Scripted::new(ms(1500));
    r.cache = vec![
        (t0, "a", Some(1)),
        (t0, "b", Some(2)),
        (t0 + ms(2000), "a", Some(3)),
        (t0 + ms(2100), "a", Some(4)),
        (t0 + ms(2200), "a", Some(5)),
        (t0 + ms(2500), "b", Some(6)),
    ];
    let mut w = workers(1, r, t0);
    let done = run(&mut w, t0, ms(10_000));
    let seen: Vec<_> = done
        .iter()
        .map(|r| (r.key, started_ms(r, t0), r.seen, r.adds, r.requeued))
        .collect();
    assert_eq!(
        seen,
        [
            ("a", 0, Some(1), 1, false),
            ("b", 1500, Some(2), 1, false),
            ("a", 3000, Some(5), 3, false),
            ("b", 4500, Some(6), 1, true),
        ]
    );
    assert_eq!(done[2].waited(), ms(1000));
    let m = w.metrics();
    assert_eq!((m.adds, m.folded, m.requeued, m.gets), (4, 2, 1, 4));
}

/// `reconcile=100ms,fail=2,fail-keys=default/a`: `a`@0 error (retry in
/// 5 ms), `b`@0.1 ok, `a`@0.2 error (attempt 2, retry in 10 ms), `a`@0.31 ok (attempt 3).
#[test]
fn a_failing_key_retries_after_the_rate_limiters_delay_as_reconcile_handler() {
    let t0 = Instant::now();
    let mut r = Scripted::new(ms(100));
    r.fail = 2;
    r.fails = |key| key == "default/a";
    r.cache = vec![(t0, "default/a", Some(1)), (t0, "default/b", Some(2))];
    let mut w = workers(1, r, t0);
    let done = run(&mut w, t0, ms(10_000));
    let seen: Vec<_> = done
        .iter()
        .map(|r| (r.key, started_ms(r, t0), r.attempt, r.result, r.retry_in))
        .collect();
    assert_eq!(
        seen,
        [
            ("default/a", 0, 1, ReconcileResult::Error, Some(ms(5))),
            ("default/b", 100, 1, ReconcileResult::Ok, None),
            ("default/a", 200, 2, ReconcileResult::Error, Some(ms(10))),
            ("default/a", 310, 3, ReconcileResult::Ok, None),
        ]
    );
    assert_eq!(w.metrics().retries, 2);
    assert_eq!(
        w.queue().num_requeues(&"default/a"),
        0,
        "forgotten after the success"
    );
}

/// A failing key with nothing else to do retries at 5, 10, 20, 40 ms after each failure
/// (`DefaultTypedControllerRateLimiter` under `reconcileHandler`'s `AddRateLimited`).
#[test]
fn retries_back_off_5_10_20_ms_as_add_rate_limited() {
    let t0 = Instant::now();
    let mut r = Scripted::new(Duration::ZERO);
    r.fail = 4;
    r.cache = vec![(t0, "a", Some(1))];
    let mut w = workers(1, r, t0);
    let done = run(&mut w, t0, ms(1000));
    let starts: Vec<_> = done.iter().map(|r| started_ms(r, t0)).collect();
    assert_eq!(starts, [0, 5, 15, 35, 75]);
}

/// `reconcileHandler`'s `RequeueAfter`: `Forget`, then `AddAfter`. A change in between is
/// reconciled at once, and its own `AddAfter` does not postpone the pending one (`insert` keeps
/// the earlier ready time): the key comes back 1000 ms after the first reconcile, not the second.
#[test]
fn requeue_after_keeps_the_earlier_pending_time_past_a_change_as_reconcile_handler() {
    let t0 = Instant::now();
    let mut r = Scripted::new(ms(10));
    r.requeue_after = Some(ms(1000));
    r.cache = vec![(t0, "a", Some(1)), (t0 + ms(500), "a", Some(2))];
    let mut w = workers(1, r, t0);
    let done = run(&mut w, t0, ms(2100));
    let starts: Vec<_> = done.iter().map(|r| started_ms(r, t0)).collect();
    assert_eq!(starts, [0, 500, 1010, 2020]);
}

/// Two workers take two keys at the same instant; a key is never on two workers.
#[test]
fn workers_take_keys_in_parallel_but_never_the_same_key() {
    let t0 = Instant::now();
    let mut r = Scripted::new(ms(100));
    r.cache = vec![
        (t0, "a", Some(1)),
        (t0, "b", Some(2)),
        (t0 + ms(50), "a", Some(3)),
    ];
    let mut w = workers(2, r, t0);
    let done = run(&mut w, t0, ms(1000));
    let seen: Vec<_> = done
        .iter()
        .map(|r| (r.worker, r.key, started_ms(r, t0)))
        .collect();
    assert_eq!(seen, [(0, "a", 0), (1, "b", 0), (0, "a", 100)]);
}

/// Adds at one instant are all queued before a worker wakes: a burst at the same time folds.
#[test]
fn adds_at_one_instant_come_before_the_worker_wakes() {
    let t0 = Instant::now();
    let mut w = workers(1, Scripted::new(ms(10)), t0);
    assert_eq!(w.add("a", t0), Added::Queued);
    assert_eq!(w.add("a", t0), Added::Folded);
    w.run_through(t0 + ms(100));
    let done = w.drain();
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].adds, 2);
}

/// 100k adds over 1k keys with 4 workers, some keys failing: the same reconciles on every run,
/// no key on two workers at once, and every add absorbed by exactly one reconcile.
#[test]
fn one_hundred_thousand_adds_over_a_thousand_keys_are_deterministic() {
    static KEYS: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
        (0..1000)
            .map(|i| &*Box::leak(format!("ns/key-{i}").into_boxed_str()))
            .collect()
    });
    let t0 = Instant::now();
    let once = || {
        let mut rng = fastrand::Rng::with_seed(28);
        let mut r = Scripted::new(ms(3));
        r.fail = 2;
        r.fails = |key| key.ends_with('7');
        let mut w = workers(4, r, t0);
        let mut at = t0;
        for _ in 0..100_000 {
            at += Duration::from_micros(rng.u64(0..200));
            w.add(KEYS[rng.usize(0..1000)], at);
        }
        w.run_through(at + Duration::from_secs(3600));
        (w.drain(), w.metrics())
    };
    let (first, metrics) = once();
    let (second, _) = once();
    assert!(first == second, "two runs reconciled differently");
    let errors = first
        .iter()
        .filter(|r| r.result == ReconcileResult::Error)
        .count() as u64;
    assert_eq!(
        errors,
        100 * 2,
        "the first 2 reconciles of the 100 keys ending in 7 fail"
    );
    // Each add, from the handler or from a retry coming due, is absorbed by one reconcile; a
    // retry of a key already waiting for one is merged into it (`insert`).
    let absorbed: u64 = first.iter().map(|r| r.adds).sum();
    assert_eq!(metrics.adds + metrics.folded, absorbed);
    assert!(
        (100_000..=100_000 + errors).contains(&absorbed),
        "{absorbed}"
    );
    assert_eq!((metrics.depth, metrics.waiting_after), (0, 0));
    let mut last_end: HashMap<&str, Instant> = HashMap::new();
    for r in &first {
        if let Some(end) = last_end.insert(r.key, r.ended_at) {
            assert!(end <= r.started_at, "{} reconciled twice at once", r.key);
        }
    }
}

/// The same worker loop over controller-runtime's priority queue (`processNextWorkItem` reads
/// `GetWithPriority`): `a`, `b`, `c` added at `LOW_PRIORITY` at 0, one worker, 1 s reconciles,
/// `c` added at priority 0 at 0.5 s: `c` runs before `b`, and each reconcile reports the
/// priority it was handed out with.
#[test]
fn the_loop_runs_the_priority_queue_as_process_next_work_item() {
    use crate::cache::workqueue::{LOW_PRIORITY, PriorityQueue};
    let t0 = Instant::now();
    let mut w = Collected::new(InlineWorkers::new(
        WorkersConfig { workers: 1 },
        PriorityQueue::default(),
        Scripted::new(ms(1000)),
        t0,
    ));
    for key in ["a", "b", "c"] {
        w.add_with_priority(key, LOW_PRIORITY, t0);
    }
    w.add_with_priority("c", 0, t0 + ms(500));
    w.run_through(t0 + ms(10_000));
    let seen: Vec<_> = w
        .drain()
        .iter()
        .map(|r| (r.key, started_ms(r, t0), r.priority))
        .collect();
    assert_eq!(
        seen,
        [
            ("a", 0, Some(LOW_PRIORITY)),
            ("c", 1000, Some(0)),
            ("b", 2000, Some(LOW_PRIORITY)),
        ]
    );
}

/// A key added while a worker reconciles it has a ready entry in the priority queue that no
/// worker may take until `Done` (`handleReadyItems` skips locked keys): an idle second worker
/// waits for it instead of taking it, and the key runs again after its first reconcile.
#[test]
fn an_idle_worker_waits_for_a_key_being_reconciled_as_handle_ready_items() {
    use crate::cache::workqueue::PriorityQueue;
    let t0 = Instant::now();
    let mut w = Collected::new(InlineWorkers::new(
        WorkersConfig { workers: 2 },
        PriorityQueue::default(),
        Scripted::new(ms(1000)),
        t0,
    ));
    w.add_with_priority("a", 0, t0);
    w.add_with_priority("a", 0, t0 + ms(100));
    w.run_through(t0 + ms(10_000));
    let seen: Vec<_> = w
        .drain()
        .iter()
        .map(|r| (r.key, started_ms(r, t0), r.requeued))
        .collect();
    assert_eq!(seen, [("a", 0, false), ("a", 1000, true)]);
}

/// A `requeue-after` far shorter than the run: each reconcile reaches the sink as it ends, and
/// `Break` pauses the run after it, with the clock at its end; the next call resumes there, so a
/// run paused and resumed reconciles exactly as one run does.
#[test]
fn reconciles_stream_to_the_sink_and_a_break_pauses_the_run() {
    let t0 = Instant::now();
    let requeuing = || {
        let mut r = Scripted::new(Duration::ZERO);
        r.requeue_after = Some(ms(1));
        workers(1, r, t0)
    };
    let mut whole = requeuing();
    whole.add("a", t0);
    whole.run_through(t0 + ms(100));
    let whole = whole.drain();
    assert_eq!(whole.len(), 101, "one reconcile per millisecond, 0 to 100");

    let mut paused = requeuing().w;
    let mut seen = Vec::new();
    paused.add("a", t0, &mut keep(&mut seen));
    let mut taken = 0;
    let flow = paused.run_through(t0 + ms(100), &mut |_| {
        taken += 1;
        if taken == 10 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    assert!(flow.is_break());
    assert_eq!(
        paused.now(),
        t0 + ms(9),
        "paused at the 10th reconcile's end"
    );
    let flow = paused.run_through(t0 + ms(100), &mut keep(&mut seen));
    assert!(flow.is_continue());
    assert_eq!(seen, whole[10..]);
}
