//! sharedProcessor: distribution, syncing marks, resync checks, start and stop.

use std::thread;

use super::*;
use crate::cache::test_handlers::{DEADLINE, ManualClock, Recorder};
use crate::cache::test_objects::cm;
use crate::cache::{Delivery, ListenerHandler, ResyncPlan};
use crate::object::Object;

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

fn processor(clock: &Arc<ManualClock>) -> SharedProcessor<Object> {
    SharedProcessor::new(clock.clone())
}

/// A listener registered through `plan` (`None`: the informer's default period).
fn listener(
    plan: &mut ResyncPlan,
    clock: &Arc<ManualClock>,
    name: &str,
    handler: impl ListenerHandler<Object>,
    period: Option<Duration>,
) -> Arc<ProcessorListener<Object>> {
    let resync = plan.add_handler(period);
    ProcessorListener::new(
        name,
        handler,
        resync.requested,
        resync.period,
        clock.now(),
        clock.clone(),
        Arc::new(|| true),
    )
}

fn noop() -> impl ListenerHandler<Object> {
    |_: &Delivery<'_, Object>| {}
}

fn update(name: &str, from: u64, to: u64) -> Notification<Object> {
    Notification::Update {
        old: cm("ns", name, from),
        new: cm("ns", name, to),
    }
}

/// client-go's `sharedProcessor.distribute`: a non-sync notification reaches every listener; a
/// sync one only the listeners marked syncing, and the others are reported as skipped.
#[test]
fn sync_notifications_reach_only_the_listeners_marked_syncing() {
    let clock = ManualClock::new();
    let mut plan = ResyncPlan::new(secs(30));
    let p = processor(&clock);
    let (web_log, plain_log) = (Recorder::default(), Recorder::default());
    let web = listener(&mut plan, &clock, "web", web_log.handler(), Some(secs(30)));
    let plain = listener(
        &mut plan,
        &clock,
        "plain",
        plain_log.handler(),
        Some(Duration::ZERO),
    );
    p.add_listener(web.clone()).unwrap();
    p.add_listener(plain.clone()).unwrap();
    p.start().unwrap();

    // Both start marked syncing.
    let d = p.distribute(update("a", 1, 1), true);
    assert!(d.skipped.is_empty());
    // A check at 30 s: web is due, plain never is.
    clock.set(secs(30));
    assert!(p.should_resync(clock.now()));
    let d = p.distribute(update("a", 1, 1), true);
    assert_eq!(d.skipped.as_slice(), [plain.id()]);
    let d = p.distribute(update("a", 1, 2), false);
    assert!(
        d.skipped.is_empty(),
        "non-sync notifications reach everyone"
    );
    assert_eq!(d.seq, 3);

    assert!(web.wait_drained(DEADLINE) && plain.wait_drained(DEADLINE));
    assert_eq!(
        web_log.lines(),
        [
            "update ns/a 1->1 (sync)",
            "update ns/a 1->1 (sync)",
            "update ns/a 1->2"
        ]
    );
    assert_eq!(
        plain_log.lines(),
        ["update ns/a 1->1 (sync)", "update ns/a 1->2"]
    );
    p.stop();
}

/// client-go's `sharedProcessor.shouldResync` with the informer's check period of 10 s and two
/// handlers, one with 30 s and one with none: each check re-marks every listener by its own
/// due-ness; only checks that find a listener due say "resync" (the Reflector resyncs the queue
/// only then), and the due listener's next resync is one period after that check.
#[test]
fn each_resync_check_marks_every_listener_by_its_own_period() {
    let clock = ManualClock::new();
    let mut plan = ResyncPlan::new(secs(10));
    let p = processor(&clock);
    let web = listener(&mut plan, &clock, "web", noop(), Some(secs(30)));
    let plain = listener(&mut plan, &clock, "plain", noop(), Some(Duration::ZERO));
    p.add_listener(web.clone()).unwrap();
    p.add_listener(plain.clone()).unwrap();
    assert_eq!(plan.start(), Some(secs(10)), "the check period");
    assert_eq!(p.syncing(), [(web.id(), true), (plain.id(), true)]);

    let mut checks = Vec::new();
    for tick in 1..=9 {
        clock.set(secs(10 * tick));
        let any = p.should_resync(clock.now());
        let marks: Vec<bool> = p.syncing().into_iter().map(|(_, s)| s).collect();
        checks.push((10 * tick, any, marks));
    }
    let expected: Vec<(u64, bool, Vec<bool>)> = (1..=9)
        .map(|tick| {
            let due = tick % 3 == 0;
            (10 * tick, due, vec![due, false])
        })
        .collect();
    assert_eq!(checks, expected);
    assert_eq!(web.next_resync(), clock.at(secs(120)));
}

/// client-go's `shouldResync` + `determineNextResync`: a handler period that is not a multiple of
/// the check period is due at the first check at or after it, and its next resync is counted
/// from that check, so resyncs come every period rounded up to a multiple of the check period.
#[test]
fn a_handler_period_is_rounded_up_to_the_check_ticks() {
    let clock = ManualClock::new();
    let mut plan = ResyncPlan::new(secs(10));
    let p = processor(&clock);
    p.add_listener(listener(&mut plan, &clock, "web", noop(), Some(secs(25))))
        .unwrap();
    let due: Vec<u64> = (1..=12)
        .map(|tick| 10 * tick)
        .filter(|&t| {
            clock.set(secs(t));
            p.should_resync(clock.now())
        })
        .collect();
    assert_eq!(due, [30, 60, 90, 120]);
}

/// client-go's `sharedProcessor.addListener` and `run`: a listener added before the processor
/// runs is marked syncing and its notifications wait in its buffer; `start` starts it. One added
/// while running starts at once, marked syncing even if the last check unmarked the others.
#[test]
fn listeners_are_added_syncing_and_start_with_the_processor() {
    let clock = ManualClock::new();
    let mut plan = ResyncPlan::new(secs(10));
    let p = processor(&clock);
    let early_log = Recorder::default();
    let early = listener(&mut plan, &clock, "early", early_log.handler(), None);
    p.add_listener(early.clone()).unwrap();
    assert_eq!(p.syncing(), [(early.id(), true)]);
    p.distribute(update("a", 1, 2), false);
    assert_eq!(early.stats().depth, 1, "buffered until the processor runs");
    assert_eq!(early.stats().delivered, 0);

    p.start().unwrap();
    assert!(early.wait_drained(DEADLINE));
    assert_eq!(early_log.lines(), ["update ns/a 1->2"]);

    clock.set(secs(1));
    assert!(!p.should_resync(clock.now()));
    assert_eq!(p.syncing(), [(early.id(), false)]);
    let late_log = Recorder::default();
    let late = listener(&mut plan, &clock, "late", late_log.handler(), None);
    p.add_listener(late.clone()).unwrap();
    assert_eq!(p.syncing(), [(early.id(), false), (late.id(), true)]);
    p.distribute(update("a", 2, 2), true);
    assert!(late.wait_drained(DEADLINE));
    assert_eq!(late_log.lines(), ["update ns/a 2->2 (sync)"]);
    p.stop();
}

/// client-go's `sharedProcessor.distribute` + `processorListener.add`: distribute never waits for
/// a handler. While one handler is stuck, the other gets every notification and the stuck one's
/// buffer holds them all, in order, for when it returns.
#[test]
fn a_stuck_handler_holds_back_neither_distribute_nor_the_other_handlers() {
    let clock = ManualClock::new();
    let mut plan = ResyncPlan::new(Duration::ZERO);
    let p = processor(&clock);
    let (slow_log, fast_log) = (Recorder::default(), Recorder::default());
    let (slow_handler, mut gate) = slow_log.gated();
    let slow = listener(&mut plan, &clock, "slow", slow_handler, None);
    let fast = listener(&mut plan, &clock, "fast", fast_log.handler(), None);
    p.add_listener(slow.clone()).unwrap();
    p.add_listener(fast.clone()).unwrap();
    p.start().unwrap();

    p.distribute(update("a", 0, 1), false);
    assert_eq!(gate.wait_entered(), "update ns/a 0->1");
    for rv in 1..500 {
        p.distribute(update("a", rv, rv + 1), false);
    }
    assert!(fast.wait_drained(DEADLINE));
    assert_eq!(fast_log.lines().len(), 500);
    assert_eq!(slow.stats().depth, 499);
    assert!(slow_log.lines().is_empty());

    gate.open();
    gate.release_one();
    assert!(slow.wait_drained(DEADLINE));
    assert_eq!(slow_log.lines(), fast_log.lines());
    p.stop();
}

/// The end of client-go's `sharedProcessor.run`: stopping closes every listener, which abandons
/// what is buffered, and waits for the handler call in progress to return.
#[test]
fn stop_abandons_buffered_notifications_and_waits_for_the_call_in_progress() {
    let clock = ManualClock::new();
    let mut plan = ResyncPlan::new(Duration::ZERO);
    let p = Arc::new(processor(&clock));
    let log = Recorder::default();
    let (handler, gate) = log.gated();
    let l = listener(&mut plan, &clock, "slow", handler, None);
    p.add_listener(l.clone()).unwrap();
    p.start().unwrap();
    for rv in 0..6 {
        p.distribute(update("a", rv, rv + 1), false);
    }
    assert_eq!(gate.wait_entered(), "update ns/a 0->1");

    let stopper = thread::spawn({
        let p = p.clone();
        move || p.stop().len()
    });
    // Once the listener is closed, `stop` can only be waiting for the handler.
    let deadline = std::time::Instant::now() + DEADLINE;
    while l.stats().abandoned == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "stop never closed the listener"
        );
        thread::yield_now();
    }
    assert!(
        !stopper.is_finished(),
        "stop returned while a handler call was running"
    );
    gate.release_one();
    assert_eq!(stopper.join().unwrap(), 1);

    assert_eq!(log.lines(), ["update ns/a 0->1"]);
    let stats = l.stats();
    assert_eq!((stats.processed, stats.abandoned), (1, 5));
    assert!(p.listeners().is_empty() && !p.is_started());
}

/// client-go's `sharedProcessor.removeListener`: the removed listener stops receiving and is
/// closed; the others carry on.
#[test]
fn remove_listener_stops_only_that_listener() {
    let clock = ManualClock::new();
    let mut plan = ResyncPlan::new(Duration::ZERO);
    let p = processor(&clock);
    let (gone_log, kept_log) = (Recorder::default(), Recorder::default());
    let gone = listener(&mut plan, &clock, "gone", gone_log.handler(), None);
    let kept = listener(&mut plan, &clock, "kept", kept_log.handler(), None);
    p.add_listener(gone.clone()).unwrap();
    p.add_listener(kept.clone()).unwrap();
    p.start().unwrap();
    p.distribute(update("a", 1, 2), false);
    assert!(gone.wait_drained(DEADLINE));

    let removed = p.remove_listener(gone.id()).expect("registered");
    assert_eq!(removed.id(), gone.id());
    assert!(p.remove_listener(gone.id()).is_none(), "idempotent");
    assert!(p.listener(gone.id()).is_none());
    let d = p.distribute(update("a", 2, 3), false);
    assert!(d.skipped.is_empty());
    assert!(kept.wait_drained(DEADLINE));
    p.stop();
    assert_eq!(gone_log.lines(), ["update ns/a 1->2"]);
    assert_eq!(kept_log.lines(), ["update ns/a 1->2", "update ns/a 2->3"]);
}

/// client-go's `sharedProcessor.resyncCheckPeriodChanged`: every listener's period is derived
/// again from what it asked for.
#[test]
fn a_new_check_period_rederives_every_listener_period() {
    let clock = ManualClock::new();
    let p = processor(&clock);
    let make = |requested: Duration, period: Duration| {
        ProcessorListener::new(
            "l",
            noop(),
            requested,
            period,
            clock.now(),
            clock.clone(),
            Arc::new(|| true),
        )
    };
    let a = make(secs(45), secs(45));
    let b = make(Duration::ZERO, Duration::ZERO);
    p.add_listener(a.clone()).unwrap();
    p.add_listener(b.clone()).unwrap();
    p.resync_check_period_changed(secs(60));
    assert_eq!(
        (a.resync_period(), b.resync_period()),
        (secs(60), Duration::ZERO)
    );
    p.resync_check_period_changed(secs(20));
    assert_eq!(a.resync_period(), secs(45));
}

/// A handler driven inline that takes `cost` per call and writes `name event at Ns` to a log
/// shared by every listener, so the log shows the order `call_until` made the calls in.
struct Timed {
    name: &'static str,
    cost: Duration,
    start: std::time::Instant,
    lines: Arc<std::sync::Mutex<Vec<String>>>,
}

impl Timed {
    fn new(
        name: &'static str,
        cost: u64,
        clock: &Arc<ManualClock>,
        lines: &Arc<std::sync::Mutex<Vec<String>>>,
    ) -> Self {
        Timed {
            name,
            cost: secs(cost),
            start: clock.now(),
            lines: lines.clone(),
        }
    }
}

impl ListenerHandler<Object> for Timed {
    fn handle(&mut self, d: &Delivery<'_, Object>) {
        let at = (d.started_at - self.start).as_secs();
        let what = crate::cache::test_handlers::describe(d.notification);
        self.lines
            .lock()
            .unwrap()
            .push(format!("{} {what} at {at}s", self.name));
    }

    fn cost(&self) -> Duration {
        self.cost
    }

    fn synced(&mut self, at: std::time::Instant) {
        let at = (at - self.start).as_secs();
        self.lines
            .lock()
            .unwrap()
            .push(format!("{} synced at {at}s", self.name));
    }
}

/// What a replay does in place of client-go's per-listener goroutines (`processorListener.run`):
/// `call_until` makes every inline call that begins by `until`, earliest first across listeners,
/// registration order breaking ties; a registration's synced notice (`processorListener.HasSynced`
/// turning true) comes at the end of the call that processed the last initial add, in time order
/// with the other listeners' calls.
#[test]
fn call_until_orders_calls_across_listeners_by_time_then_registration() {
    let clock = ManualClock::new();
    let mut plan = ResyncPlan::new(Duration::ZERO);
    let p = processor(&clock);
    let lines = Arc::new(std::sync::Mutex::new(Vec::new()));
    let slow = listener(
        &mut plan,
        &clock,
        "slow",
        Timed::new("slow", 2, &clock, &lines),
        None,
    );
    let fast = listener(
        &mut plan,
        &clock,
        "fast",
        Timed::new("fast", 0, &clock, &lines),
        None,
    );
    p.add_listener(slow.clone()).unwrap();
    p.add_listener(fast.clone()).unwrap();
    p.start_inline();

    for name in ["a", "b"] {
        p.distribute(
            Notification::Add {
                obj: cm("ns", name, 1),
                is_in_initial_list: true,
            },
            false,
        );
    }
    clock.set(secs(3));
    p.distribute(update("a", 1, 2), false);
    assert_eq!(p.call_until(clock.at(secs(3))), 6);
    assert_eq!(slow.stats().depth, 1, "its third call begins at 4 s");
    assert_eq!(p.call_until(clock.at(secs(10))), 2);
    assert_eq!(
        *lines.lock().unwrap(),
        [
            "slow add ns/a@1 initial at 0s",
            "fast add ns/a@1 initial at 0s",
            "fast add ns/b@1 initial at 0s",
            "fast synced at 0s",
            "slow add ns/b@1 initial at 2s",
            "fast update ns/a 1->2 at 3s",
            "slow synced at 4s",
            "slow update ns/a 1->2 at 4s",
        ]
    );
}
