//! processorListener: buffer, thread, HasSynced, resync due-ness.

use std::sync::atomic::AtomicBool;

use super::*;
use crate::cache::test_handlers::{DEADLINE, ManualClock, Recorder, upstream};
use crate::cache::test_objects::cm;
use crate::object::Object;

fn synced() -> UpstreamSynced {
    Arc::new(|| true)
}

fn listener(
    handler: impl ListenerHandler<Object>,
    clock: Arc<ManualClock>,
    upstream: UpstreamSynced,
) -> Arc<ProcessorListener<Object>> {
    let now = clock.now();
    ProcessorListener::new(
        "test",
        handler,
        Duration::ZERO,
        Duration::ZERO,
        now,
        clock,
        upstream,
    )
}

fn update(name: &str, from: u64, to: u64) -> Arc<Notification<Object>> {
    Arc::new(Notification::Update {
        old: cm("ns", name, from),
        new: cm("ns", name, to),
    })
}

fn initial_add(name: &str) -> Arc<Notification<Object>> {
    Arc::new(Notification::Add {
        obj: cm("ns", name, 1),
        is_in_initial_list: true,
    })
}

/// client-go's `processorListener.add` / `pop` / `run`: while the handler is stuck in a call,
/// `add` keeps returning and the buffer grows; afterwards every notification is delivered, in
/// the order added, none merged with another of the same key.
#[test]
fn a_slow_handler_lets_the_buffer_grow_and_gets_everything_in_order() {
    let recorder = Recorder::default();
    let (handler, mut gate) = recorder.gated();
    let l = listener(handler, ManualClock::new(), synced());
    l.start().unwrap();
    l.add(update("a", 0, 1));
    assert_eq!(gate.wait_entered(), "update ns/a 0->1");
    for rv in 1..1000 {
        l.add(update("a", rv, rv + 1));
    }
    let stats = l.stats();
    assert_eq!((stats.depth, stats.max_depth), (999, 999));
    assert_eq!(
        (stats.added, stats.delivered, stats.processed),
        (1000, 1, 0)
    );
    assert!(stats.busy);

    gate.open();
    gate.release_one();
    assert!(l.wait_drained(DEADLINE));
    let expected: Vec<String> = (0..1000)
        .map(|rv| format!("update ns/a {rv}->{}", rv + 1))
        .collect();
    assert_eq!(recorder.lines(), expected);
    let stats = l.stats();
    assert_eq!((stats.depth, stats.max_depth), (0, 999));
    assert_eq!(
        (stats.delivered, stats.processed, stats.abandoned),
        (1000, 1000, 0)
    );
}

/// The buffer wait of each delivery runs on the listener's clock, from `add` to the start of the
/// handler call; the depths say what was buffered at either end.
#[test]
fn each_delivery_says_how_long_it_waited_and_what_was_buffered() {
    let clock = ManualClock::new();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let handler = {
        let seen = seen.clone();
        move |d: &Delivery<'_, Object>| {
            seen.lock()
                .unwrap()
                .push((d.waited(), d.depth_at_add, d.depth));
        }
    };
    let l = listener(handler, clock.clone(), synced());
    l.add(update("a", 1, 2));
    clock.set(Duration::from_secs(2));
    l.add(update("a", 2, 3));
    clock.set(Duration::from_secs(5));
    // Not started yet: both wait until the thread runs, at t = 5 s.
    l.start().unwrap();
    assert!(l.wait_drained(DEADLINE));
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (Duration::from_secs(5), 1, 1),
            (Duration::from_secs(3), 2, 0)
        ]
    );
    assert_eq!(l.stats().max_waited, Duration::from_secs(5));
}

/// client-go's `processorListener.HasSynced` (`synctrack.SingleFileTracker`): false until the
/// informer has synced AND the handler has returned from every initial-list `OnAdd` added; a
/// handler still inside the last one is not synced. Later notifications do not count.
#[test]
fn has_synced_waits_until_the_handler_returned_from_every_initial_add() {
    let informer_synced = Arc::new(AtomicBool::new(false));
    let recorder = Recorder::default();
    let (handler, mut gate) = recorder.gated();
    let l = listener(handler, ManualClock::new(), upstream(&informer_synced));
    assert!(!l.has_synced(), "the informer has not synced");
    l.add(initial_add("a"));
    l.add(initial_add("b"));
    informer_synced.store(true, Ordering::SeqCst);
    assert!(!l.has_synced(), "nothing processed yet");

    l.start().unwrap();
    assert_eq!(gate.wait_entered(), "add ns/a@1 initial");
    gate.release_one();
    assert_eq!(gate.wait_entered(), "add ns/b@1 initial");
    assert!(
        !l.has_synced(),
        "the handler is still inside the last initial OnAdd"
    );
    gate.release_one();
    assert!(l.wait_drained(DEADLINE));
    assert!(l.has_synced());

    gate.open();
    l.add(update("a", 1, 2));
    l.add(Arc::new(Notification::Add {
        obj: cm("ns", "c", 3),
        is_in_initial_list: false,
    }));
    assert!(l.has_synced(), "only initial-list adds count");
    assert!(l.wait_drained(DEADLINE));
}

/// client-go's `processorListener.run` recovers from a panicking handler (`HandleCrash`), skips
/// that notification and goes on with the next; a skipped initial add never counts as processed.
#[test]
fn a_panicking_handler_skips_its_notification_and_goes_on() {
    let recorder = Recorder::default();
    let handler = {
        let mut record = recorder.handler();
        move |d: &Delivery<'_, Object>| {
            if d.seq == 7 {
                panic!("handler bug (expected by the test)");
            }
            record.handle(d);
        }
    };
    let l = listener(handler, ManualClock::new(), synced());
    l.enqueue(initial_add("a"), 7, 0, false, Instant::now());
    l.enqueue(update("b", 1, 2), 8, 0, false, Instant::now());
    l.start().unwrap();
    assert!(l.wait_drained(DEADLINE));
    assert_eq!(recorder.lines(), ["update ns/b 1->2"]);
    let stats = l.stats();
    assert_eq!((stats.processed, stats.panicked), (2, 1));
    assert!(
        !l.has_synced(),
        "the panicked initial add was never processed"
    );
}

/// Closing (client-go closes `addCh`) drops what is buffered, unhandled, and ignores later adds.
#[test]
fn close_abandons_the_buffer() {
    let recorder = Recorder::default();
    let (handler, mut gate) = recorder.gated();
    let l = listener(handler, ManualClock::new(), synced());
    l.start().unwrap();
    for rv in 0..4 {
        l.add(update("a", rv, rv + 1));
    }
    assert_eq!(gate.wait_entered(), "update ns/a 0->1");
    l.close();
    l.add(update("a", 9, 10));
    gate.open();
    gate.release_one();
    l.join();
    assert_eq!(recorder.lines(), ["update ns/a 0->1"]);
    let stats = l.stats();
    assert_eq!((stats.abandoned, stats.processed, stats.depth), (3, 1, 0));
    assert_eq!(stats.added, 4);
}

/// client-go's `processorListener.shouldResync` and `determineNextResync`: due from exactly one
/// period after registration (or after the last due check), never with a period of 0.
#[test]
fn should_resync_is_due_one_period_after_the_last() {
    let clock = ManualClock::new();
    let start = clock.now();
    let secs = Duration::from_secs;
    let l = ProcessorListener::<Object>::new(
        "web",
        |_: &Delivery<'_, Object>| {},
        secs(30),
        secs(30),
        start,
        clock.clone(),
        synced(),
    );
    assert!(!l.should_resync(clock.at(secs(29))));
    assert!(
        l.should_resync(clock.at(secs(30))),
        "due at exactly nextResync"
    );
    l.determine_next_resync(clock.at(secs(31)));
    assert_eq!(l.next_resync(), clock.at(secs(61)));
    assert!(!l.should_resync(clock.at(secs(60))));

    // setResyncPeriod leaves nextResync alone.
    l.set_resync_period(secs(10));
    assert_eq!(l.next_resync(), clock.at(secs(61)));
    assert_eq!(
        (l.requested_resync_period(), l.resync_period()),
        (secs(30), secs(10))
    );

    l.set_resync_period(Duration::ZERO);
    assert!(
        !l.should_resync(clock.at(secs(1000))),
        "a period of 0 is never due"
    );
}

/// [`Dispatch`] makes a `ResourceEventHandler` a listener's handler.
#[test]
fn dispatch_calls_the_resource_event_handler() {
    #[derive(Default)]
    struct Count(Arc<Mutex<(u32, u32, u32)>>);
    impl ResourceEventHandler<Object> for Count {
        fn on_add(&mut self, _: &Arc<Object>, _: bool) {
            self.0.lock().unwrap().0 += 1;
        }
        fn on_update(&mut self, _: &Arc<Object>, _: &Arc<Object>) {
            self.0.lock().unwrap().1 += 1;
        }
        fn on_delete(&mut self, _: &crate::cache::DeltaObject<Object>) {
            self.0.lock().unwrap().2 += 1;
        }
    }
    let count = Count::default();
    let counts = count.0.clone();
    let l = listener(Dispatch(count), ManualClock::new(), synced());
    l.add(initial_add("a"));
    l.add(update("a", 1, 2));
    l.add(Arc::new(Notification::Delete {
        obj: cm("ns", "a", 2).into(),
    }));
    l.start().unwrap();
    assert!(l.wait_drained(DEADLINE));
    assert_eq!(*counts.lock().unwrap(), (1, 1, 1));
}

/// A handler that takes `cost` per call on the inline clock and records each call's begin time
/// (after the start) and, through `synced`, when the registration synced.
struct Timed {
    cost: Duration,
    start: Instant,
    log: Arc<Mutex<Vec<String>>>,
}

impl ListenerHandler<Object> for Timed {
    fn handle(&mut self, d: &Delivery<'_, Object>) {
        let at = d.started_at - self.start;
        let line = format!(
            "{} at {}s depth {}",
            crate::cache::test_handlers::describe(d.notification),
            at.as_secs(),
            d.depth
        );
        self.log.lock().unwrap().push(line);
    }

    fn cost(&self) -> Duration {
        self.cost
    }

    fn synced(&mut self, at: Instant) {
        let line = format!("synced at {}s", (at - self.start).as_secs());
        self.log.lock().unwrap().push(line);
    }
}

/// client-go's `processorListener.run` driven inline (a replay's clock): a call begins at
/// max(when its notification was added, when the previous call ended) and lasts the handler's
/// `cost`, so a slow handler's notifications wait in the buffer; nothing is called for a listener
/// whose thread runs.
#[test]
fn inline_calls_begin_at_the_later_of_added_and_the_previous_end() {
    let clock = ManualClock::new();
    let log = Arc::new(Mutex::new(Vec::new()));
    let handler = Timed {
        cost: Duration::from_secs(2),
        start: clock.now(),
        log: log.clone(),
    };
    let l = listener(handler, clock.clone(), synced());
    l.add(update("a", 1, 2));
    l.add(update("a", 2, 3));
    clock.set(Duration::from_secs(5));
    l.add(update("a", 3, 4));
    assert_eq!(l.next_call(), Some(clock.at(Duration::ZERO)));
    assert!(l.call_next());
    assert_eq!(l.next_call(), Some(clock.at(Duration::from_secs(2))));
    assert!(l.call_next());
    assert_eq!(
        l.next_call(),
        Some(clock.at(Duration::from_secs(5))),
        "added after the previous call ended: begins when added"
    );
    assert!(l.call_next());
    assert!(!l.call_next(), "nothing left");
    assert_eq!(
        *log.lock().unwrap(),
        [
            "update ns/a 1->2 at 0s depth 2",
            "update ns/a 2->3 at 2s depth 1",
            "update ns/a 3->4 at 5s depth 0",
        ]
    );
    assert_eq!(l.stats().max_waited, Duration::from_secs(2));
}

/// client-go's `processorListener.HasSynced` driven inline: the synced notice is due at the end
/// of the call that processed the last initial-list add (not at its begin, not before), and is
/// told once.
#[test]
fn inline_synced_notice_is_due_at_the_end_of_the_last_initial_call() {
    let clock = ManualClock::new();
    let log = Arc::new(Mutex::new(Vec::new()));
    let handler = Timed {
        cost: Duration::from_secs(3),
        start: clock.now(),
        log: log.clone(),
    };
    let l = listener(handler, clock.clone(), synced());
    l.add(initial_add("a"));
    l.add(initial_add("b"));
    l.add(update("a", 1, 2));
    assert!(l.call_next());
    assert_eq!(l.synced_due(), None, "one initial add still buffered");
    assert!(l.call_next());
    assert_eq!(l.synced_due(), Some(clock.at(Duration::from_secs(6))));
    assert!(l.call_next());
    assert!(l.tell_synced());
    assert!(!l.tell_synced(), "told once");
    assert_eq!(l.synced_due(), None);
    assert_eq!(
        *log.lock().unwrap(),
        [
            "add ns/a@1 initial at 0s depth 2",
            "add ns/b@1 initial at 3s depth 1",
            "update ns/a 1->2 at 6s depth 0",
            "synced at 6s",
        ]
    );
}

/// The race between a thread's look at `has_synced` after a call and the informer's sync, forced
/// in the order that lost the sync: the handler returns from its last initial-list add, the
/// thread looks (the informer has not synced yet: a RealFIFO that processes unlocked lowers its
/// count only after the pop's processing, `RealFIFO.Pop` @v0.36.3), the informer syncs, and
/// its `notice_sync` finds the call still running and leaves the telling to it. The end of the
/// call must tell it, once, as client-go v0.36's `SingleFileTracker` makes whichever of
/// `Finished` and `UpstreamHasSynced` comes second mark the registration synced.
#[test]
fn a_sync_the_informer_noticed_during_the_last_look_is_told_at_the_end_of_the_call() {
    let informer_synced = Arc::new(AtomicBool::new(false));
    let (looking_tx, looking) = std::sync::mpsc::channel::<()>();
    let (answer, answer_rx) = std::sync::mpsc::channel::<()>();
    let answer_rx = Mutex::new(answer_rx);
    let first_look = AtomicBool::new(true);
    let upstream: UpstreamSynced = Arc::new({
        let informer_synced = informer_synced.clone();
        move || {
            let synced = informer_synced.load(Ordering::SeqCst);
            if first_look.swap(false, Ordering::SeqCst) {
                // The thread's look after its call: answer what it read, once the informer has
                // synced and noticed meanwhile.
                let _ = looking_tx.send(());
                let _ = answer_rx.lock().unwrap().recv_timeout(DEADLINE);
            }
            synced
        }
    });
    let clock = ManualClock::new();
    let log = Arc::new(Mutex::new(Vec::new()));
    let handler = Timed {
        cost: Duration::ZERO,
        start: clock.now(),
        log: log.clone(),
    };
    let l = listener(handler, clock, upstream);
    l.start().unwrap();
    l.add(initial_add("a"));
    looking.recv_timeout(DEADLINE).expect("the thread looks");
    informer_synced.store(true, Ordering::SeqCst);
    l.notice_sync();
    answer.send(()).unwrap();
    assert!(l.wait_drained(DEADLINE));
    assert!(l.has_synced());
    assert_eq!(
        *log.lock().unwrap(),
        ["add ns/a@1 initial at 0s depth 0", "synced at 0s"]
    );
}

/// A clock is the caller's code: `notice_sync` reads it holding no lock of the listener's, so
/// that a clock which looks at the listener (a test's clock that lets the handler catch up, as
/// `shared_informer_tests` has) cannot wait on the lock its caller holds.
#[test]
fn a_sync_is_noticed_without_holding_the_buffer_while_the_clock_is_read() {
    struct LooksAtListener {
        inner: Arc<ManualClock>,
        listener: std::sync::OnceLock<std::sync::Weak<ProcessorListener<Object>>>,
    }
    impl Clock for LooksAtListener {
        fn now(&self) -> Instant {
            if let Some(listener) = self.listener.get().and_then(std::sync::Weak::upgrade) {
                let _ = listener.stats();
            }
            self.inner.now()
        }
        fn wall(&self) -> std::time::SystemTime {
            self.inner.wall()
        }
        fn sleep(&self, duration: Duration) -> futures_util::future::BoxFuture<'static, ()> {
            self.inner.sleep(duration)
        }
    }
    let clock = Arc::new(LooksAtListener {
        inner: ManualClock::new(),
        listener: std::sync::OnceLock::new(),
    });
    let now = clock.now();
    let l = ProcessorListener::new(
        "test",
        Recorder::default().handler(),
        Duration::ZERO,
        Duration::ZERO,
        now,
        clock.clone(),
        synced(),
    );
    let _ = clock.listener.set(Arc::downgrade(&l));
    let (done, noticed) = std::sync::mpsc::channel();
    let noticing = l.clone();
    std::thread::spawn(move || {
        noticing.notice_sync();
        let _ = done.send(());
    });
    assert!(
        noticed.recv_timeout(DEADLINE).is_ok(),
        "notice_sync read the clock holding the buffer's lock"
    );
}
