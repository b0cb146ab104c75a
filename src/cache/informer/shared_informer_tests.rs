//! sharedIndexInformer: HandleDeltas through a real DeltaFIFO, isSync, handler registration before
//! and after start, per-registration HasSynced, tombstones.

use k8s_openapi::api::core::v1::ConfigMap;

use super::*;

use crate::cache::ReflectorStore;
use crate::cache::test_handlers::{DEADLINE, ManualClock, Recorder, describe};
use crate::cache::test_objects::cm;
use crate::cache::{ClientGoVersion, Delivery, Delta, DeltaFifo, InformerQueue, ResyncWarning};

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// An informer over a DeltaFIFO whose known objects are the informer's indexer, as
/// `sharedIndexInformer.Run` builds it (`EmitDeltaTypeReplaced: true`), on a manual clock.
struct Fixture {
    clock: Arc<ManualClock>,
    fifo: Arc<DeltaFifo<Object>>,
    informer: SharedInformer<Object>,
}

impl Fixture {
    fn new(resync_period: Duration) -> Self {
        Self::of(resync_period, "1.32".parse().unwrap())
    }

    /// The informer of client-go `version`: its relist deltas and sync rule.
    fn of(resync_period: Duration, version: ClientGoVersion) -> Self {
        let clock = ManualClock::new();
        let indexer = Indexer::new();
        let fifo = Arc::new(
            DeltaFifo::new()
                .known_objects(Arc::new(indexer.reader()))
                .emit_delta_type_replaced(version.emit_replaced()),
        );
        let informer = SharedInformer::new(indexer, resync_period, clock.clone())
            .sync_rule(version.sync_rule());
        Fixture {
            clock,
            fifo,
            informer,
        }
    }

    fn start(&self) -> Option<Duration> {
        let fifo = self.fifo.clone();
        self.informer.start(move || fifo.has_synced()).unwrap()
    }

    /// Pops everything queued through `HandleDeltas`; returns the distributions.
    fn drain(&self) -> Vec<Distribution<Object>> {
        let mut all = Vec::new();
        let fifo: &dyn InformerQueue<Object> = self.fifo.as_ref();
        while fifo
            .try_pop_batch(1, &mut |deltas, initial| {
                all.extend(self.informer.handle_deltas(deltas, initial));
            })
            .is_some()
        {}
        all
    }

    fn relist(&self, objects: Vec<Arc<Object>>) -> Vec<Distribution<Object>> {
        self.fifo.replace(objects, "");
        self.drain()
    }

    fn check_at(&self, t: u64) -> bool {
        self.clock.set(secs(t));
        self.informer.should_resync()
    }
}

fn settle(registrations: &[&Registration<Object>]) {
    for registration in registrations {
        assert!(registration.listener.wait_drained(DEADLINE));
    }
}

/// `sharedIndexInformer.OnUpdate`: an update is a sync notification exactly when the old and new
/// resourceVersions are equal (unset reads as `""`, as Go's accessor returns it).
#[test]
fn is_sync_compares_resource_versions() {
    assert!(is_sync(&*cm("ns", "a", 5), &*cm("ns", "a", 5)));
    assert!(!is_sync(&*cm("ns", "a", 5), &*cm("ns", "a", 6)));
    let typed = |rv: Option<&str>| {
        let mut config_map = ConfigMap::default();
        config_map.metadata.resource_version = rv.map(str::to_owned);
        config_map
    };
    assert!(is_sync(&typed(Some("7")), &typed(Some("7"))));
    assert!(is_sync(&typed(None), &typed(None)));
    assert!(!is_sync(&typed(None), &typed(Some("7"))));
}

/// `sharedIndexInformer.OnUpdate` (isSync) with `sharedProcessor.distribute` and `shouldResync`,
/// through relists and a resync: informer period 10 s (the check period), `web` asks for 30 s,
/// `plain` for none. Unchanged objects after a relist reach both handlers until the first check,
/// then only a handler marked due at the latest check; changed ones reach everyone.
#[test]
fn unchanged_objects_reach_handlers_by_their_syncing_marks() {
    let f = Fixture::new(secs(10));
    let (web_log, plain_log) = (Recorder::default(), Recorder::default());
    let web = f
        .informer
        .add_event_handler_with_resync_period("web", web_log.handler(), secs(30))
        .unwrap();
    let plain = f
        .informer
        .add_event_handler_with_resync_period("plain", plain_log.handler(), Duration::ZERO)
        .unwrap();
    assert_eq!(f.start(), Some(secs(10)));
    let both = |lines: &[&str]| {
        settle(&[&web, &plain]);
        assert_eq!(web_log.take(), lines, "web");
        assert_eq!(plain_log.take(), lines, "plain");
    };

    f.relist(vec![cm("ns", "a", 1), cm("ns", "b", 1)]);
    both(&["add ns/a@1 initial", "add ns/b@1 initial"]);

    // Before the first check every listener is syncing: the unchanged `a` reaches both.
    f.clock.set(secs(5));
    f.relist(vec![cm("ns", "a", 1), cm("ns", "b", 2)]);
    both(&["update ns/a 1->1 (sync)", "update ns/b 1->2"]);

    // The check at 10 s finds nobody due and unmarks both.
    assert!(!f.check_at(10));
    let distributed = f.relist(vec![cm("ns", "a", 1), cm("ns", "b", 2)]);
    assert!(
        distributed
            .iter()
            .all(|d| d.is_sync && d.skipped.len() == 2)
    );
    both(&[]);

    // At 30 s web is due: the resync's Sync deltas, and a relist's unchanged objects until the
    // next check, reach web only.
    assert!(!f.check_at(20));
    assert!(f.check_at(30));
    f.fifo.resync();
    f.drain();
    f.clock.set(secs(35));
    f.relist(vec![cm("ns", "a", 1), cm("ns", "b", 2)]);
    settle(&[&web, &plain]);
    assert_eq!(
        web_log.take(),
        [
            "update ns/a 1->1 (sync)",
            "update ns/b 2->2 (sync)",
            "update ns/a 1->1 (sync)",
            "update ns/b 2->2 (sync)"
        ]
    );
    assert!(plain_log.take().is_empty());

    assert!(!f.check_at(40), "web's next resync is at 60 s");
    f.relist(vec![cm("ns", "a", 1), cm("ns", "b", 2)]);
    both(&[]);
    f.informer.stop();
}

/// `processDeltas` via `HandleDeltas`: a batch of several deltas for one key is one notification
/// per delta, never one per batch.
#[test]
fn a_batch_is_one_notification_per_delta() {
    let f = Fixture::new(Duration::ZERO);
    let log = Recorder::default();
    let handler = f.informer.add_event_handler("h", log.handler()).unwrap();
    f.start();
    f.fifo.add(cm("ns", "a", 1));
    f.fifo.update(cm("ns", "a", 2));
    f.fifo.delete(cm("ns", "a", 2).into());
    let distributed = f.drain();
    assert_eq!(distributed.len(), 3, "one pop, three notifications");
    settle(&[&handler]);
    assert_eq!(
        log.lines(),
        ["add ns/a@1", "update ns/a 1->2", "delete ns/a@2"]
    );
}

/// `sharedIndexInformer.AddEventHandlerWithResyncPeriod` after start: the new handler first gets
/// an `OnAdd` with `isInInitialList` true for every cached object (added directly, not
/// distributed: sequence number 0), then later changes; the handlers already there get nothing
/// new.
#[test]
fn a_late_handler_gets_on_add_for_the_cache_first() {
    let f = Fixture::new(Duration::ZERO);
    let early_log = Recorder::default();
    let early = f
        .informer
        .add_event_handler("early", early_log.handler())
        .unwrap();
    f.start();
    f.relist(vec![cm("ns", "c", 1), cm("ns", "a", 1), cm("ns", "b", 1)]);

    let seen = Arc::new(Mutex::new(Vec::new()));
    let late = f
        .informer
        .add_event_handler("late", {
            let seen = seen.clone();
            move |d: &Delivery<'_, Object>| {
                seen.lock().unwrap().push((d.seq, describe(d.notification)))
            }
        })
        .unwrap();
    f.fifo.update(cm("ns", "a", 2));
    f.drain();
    settle(&[&early, &late]);

    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen.iter()
            .map(|(_, line)| line.as_str())
            .collect::<Vec<_>>(),
        [
            "add ns/a@1 initial",
            "add ns/b@1 initial",
            "add ns/c@1 initial",
            "update ns/a 1->2"
        ]
    );
    assert!(seen[..3].iter().all(|(seq, _)| *seq == 0));
    assert_ne!(seen[3].0, 0);
    assert!(late.has_synced());
    assert_eq!(
        early_log.lines(),
        [
            "add ns/c@1 initial",
            "add ns/a@1 initial",
            "add ns/b@1 initial",
            "update ns/a 1->2"
        ]
    );
}

/// `processorListener.HasSynced`: a registration has synced only once its own handler has
/// processed the initial list, even though the informer (the queue) has synced already; another
/// handler's registration is independent.
#[test]
fn a_registration_syncs_when_its_handler_processed_the_initial_list() {
    let f = Fixture::new(Duration::ZERO);
    let (slow_log, quick_log) = (Recorder::default(), Recorder::default());
    let (slow_handler, mut gate) = slow_log.gated();
    let slow = f.informer.add_event_handler("slow", slow_handler).unwrap();
    let quick = f
        .informer
        .add_event_handler("quick", quick_log.handler())
        .unwrap();
    assert!(!quick.listener.has_synced(), "not started");
    f.start();
    f.relist(vec![cm("ns", "a", 1), cm("ns", "b", 1)]);
    assert!(f.fifo.has_synced() && f.informer.has_synced());

    settle(&[&quick]);
    assert!(quick.listener.has_synced());
    assert_eq!(gate.wait_entered(), "add ns/a@1 initial");
    assert!(!slow.listener.has_synced());
    gate.release_one();
    assert_eq!(gate.wait_entered(), "add ns/b@1 initial");
    assert!(
        !slow.listener.has_synced(),
        "inside its last initial OnAdd, the handler has not processed it"
    );
    gate.open();
    gate.release_one();
    settle(&[&slow]);
    assert!(slow.listener.has_synced());
}

/// `processDeltas` → `sharedIndexInformer.OnDelete` → the handler's `OnDelete`: a deletion found
/// by a relist reaches the handler as the DeltaFIFO's `DeletedFinalStateUnknown`, a watched one
/// as the object.
#[test]
fn tombstones_reach_on_delete() {
    #[derive(Default)]
    struct Deletions(Arc<Mutex<Vec<String>>>);
    impl ResourceEventHandler<Object> for Deletions {
        fn on_add(&mut self, _: &Arc<Object>, _: bool) {}
        fn on_update(&mut self, _: &Arc<Object>, _: &Arc<Object>) {}
        fn on_delete(&mut self, obj: &DeltaObject<Object>) {
            let line = match obj {
                DeltaObject::Tombstone(t) => format!(
                    "tombstone {} last rv {:?}",
                    t.key,
                    t.obj.as_ref().and_then(|o| o.resource_version())
                ),
                other => format!("object {}", other.key()),
            };
            self.0.lock().unwrap().push(line);
        }
    }
    let f = Fixture::new(Duration::ZERO);
    let deletions = Deletions::default();
    let lines = deletions.0.clone();
    let handler = f
        .informer
        .add_event_handler("h", crate::cache::Dispatch(deletions))
        .unwrap();
    f.start();
    f.relist(vec![cm("ns", "a", 1), cm("ns", "b", 1)]);
    f.relist(vec![cm("ns", "a", 1)]);
    f.fifo.delete(cm("ns", "a", 1).into());
    f.drain();
    settle(&[&handler]);
    assert_eq!(
        *lines.lock().unwrap(),
        ["tombstone ns/b last rv Some(\"1\")", "object ns/a"]
    );
    assert!(f.informer.indexer().is_empty());
}

/// `NewSharedIndexInformerWithOptions`: with an informer period of 0 there is no resync timer and
/// no handler is ever due, even one that asked for a period (client-go only logs a warning).
#[test]
fn an_informer_period_of_zero_never_resyncs_any_handler() {
    let f = Fixture::new(Duration::ZERO);
    let asked = f
        .informer
        .add_event_handler_with_resync_period("web", |_: &Delivery<'_, Object>| {}, secs(30))
        .unwrap();
    assert_eq!(asked.resync.period, Duration::ZERO);
    assert_eq!(
        asked.resync.warnings,
        [ResyncWarning::InformerDoesNotResync {
            requested: secs(30)
        }]
    );
    assert_eq!(f.start(), None, "no resync timer");
    assert!(!f.check_at(3600));
}

/// `AddEventHandlerWithResyncPeriod`: a handler added before start with a smaller period lowers
/// the Reflector's resync period; one added after start is raised to it instead.
#[test]
fn the_check_period_follows_handlers_added_before_start_only() {
    let f = Fixture::new(secs(60));
    let fast = f
        .informer
        .add_event_handler_with_resync_period("fast", |_: &Delivery<'_, Object>| {}, secs(20))
        .unwrap();
    assert_eq!(fast.resync.lowered_check_period, Some(secs(20)));
    let default = f
        .informer
        .add_event_handler("default", |_: &Delivery<'_, Object>| {})
        .unwrap();
    assert_eq!(default.listener.resync_period(), secs(60));
    assert_eq!(f.start(), Some(secs(20)));
    let late = f
        .informer
        .add_event_handler_with_resync_period("late", |_: &Delivery<'_, Object>| {}, secs(5))
        .unwrap();
    assert_eq!(late.listener.resync_period(), secs(20));
    assert_eq!(f.informer.resync_plan().check_period(), secs(20));
}

/// `AddEventHandlerWithResyncPeriod` after the informer stopped fails; `RemoveEventHandler`
/// unregisters.
#[test]
fn handlers_cannot_join_a_stopped_informer_and_can_leave() {
    let f = Fixture::new(Duration::ZERO);
    let log = Recorder::default();
    let gone = f.informer.add_event_handler("gone", log.handler()).unwrap();
    f.start();
    assert!(f.informer.remove_event_handler(gone.id()));
    assert!(!f.informer.remove_event_handler(gone.id()));
    f.fifo.add(cm("ns", "a", 1));
    f.drain();
    assert!(f.informer.processor().listeners().is_empty());
    assert_eq!(
        gone.listener.stats().added,
        0,
        "nothing reached the removed handler"
    );
    f.informer.stop();
    assert!(log.lines().is_empty());
    let error = f
        .informer
        .add_event_handler("late", |_: &Delivery<'_, Object>| {})
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "handler \"late\" was not added: the shared informer has stopped already"
    );
}

/// A registration with nothing to process syncs with the informer, though no handler call is
/// left to notice it after: its handler is told once the informer's empty first list synced
/// ([`SharedInformer::notice_sync`]), and a handler joining a synced informer whose cache is
/// empty is told at once. Each is told once.
#[test]
fn a_registration_with_nothing_to_process_is_told_it_synced() {
    struct Told(std::sync::mpsc::Sender<&'static str>, &'static str);
    impl ListenerHandler<Object> for Told {
        fn handle(&mut self, _: &Delivery<'_, Object>) {}
        fn synced(&mut self, _: std::time::Instant) {
            let _ = self.0.send(self.1);
        }
    }
    let f = Fixture::new(Duration::ZERO);
    let (tx, rx) = std::sync::mpsc::channel();
    f.informer
        .add_event_handler("early", Told(tx.clone(), "early"))
        .unwrap();
    f.start();
    // client-go's `DeltaFIFO.Replace` of an empty list: synced, nothing to pop.
    f.fifo.replace(Vec::new(), "1");
    assert!(f.informer.has_synced());
    assert!(f.drain().is_empty());
    f.informer.notice_sync();
    assert_eq!(rx.recv_timeout(DEADLINE), Ok("early"));
    let late = f
        .informer
        .add_event_handler("late", Told(tx, "late"))
        .unwrap();
    assert_eq!(rx.recv_timeout(DEADLINE), Ok("late"));
    f.informer.notice_sync();
    settle(&[&late]);
    assert!(rx.try_recv().is_err(), "told once");
}

/// Two handlers, `web` (30 s) and `plain` (no resyncs), of an informer with a 10 s check period,
/// synced with `a@1` and `b@1`, after a check that unmarked both: what each receives of `deltas`.
fn after_an_unmarking_check(
    version: &str,
    queue: impl FnOnce(&DeltaFifo<Object>),
) -> [Vec<String>; 2] {
    let f = Fixture::of(secs(10), version.parse().unwrap());
    let (web_log, plain_log) = (Recorder::default(), Recorder::default());
    let web = f
        .informer
        .add_event_handler_with_resync_period("web", web_log.handler(), secs(30))
        .unwrap();
    let plain = f
        .informer
        .add_event_handler_with_resync_period("plain", plain_log.handler(), Duration::ZERO)
        .unwrap();
    f.start();
    f.relist(vec![cm("ns", "a", 1), cm("ns", "b", 1)]);
    assert!(!f.check_at(10));
    settle(&[&web, &plain]);
    web_log.take();
    plain_log.take();
    queue(&f.fifo);
    f.drain();
    settle(&[&web, &plain]);
    let logs = [web_log.take(), plain_log.take()];
    f.informer.stop();
    logs
}

/// `sharedIndexInformer.HandleDeltas` @v0.17.17: `isSync := d.Type == Sync` for adds and updates
/// alike, and a relist queues `Sync`: what a relist finds new or changed reaches only the handlers
/// whose resync is due (here none), where 1.24's rule hands it to everyone.
#[test]
fn handle_deltas_v0_17_makes_a_relists_new_and_changed_objects_sync_notifications() {
    let relist = |fifo: &DeltaFifo<Object>| {
        fifo.replace(
            vec![cm("ns", "a", 1), cm("ns", "b", 2), cm("ns", "c", 3)],
            "",
        )
    };
    assert_eq!(
        after_an_unmarking_check("1.17", relist),
        [Vec::<String>::new(), Vec::new()]
    );
    let everyone = ["update ns/b 1->2", "add ns/c@3"];
    assert_eq!(
        after_an_unmarking_check("1.24", relist),
        [everyone, everyone]
    );
}

/// `sharedIndexInformer.HandleDeltas` @v0.18.0 … @v0.23.17: a `Sync` delta is a sync notification
/// whatever its resourceVersion, an `Updated` one never is (an update that changed nothing reaches
/// everyone); from `OnUpdate` @v0.24.0 the resourceVersions decide.
#[test]
fn handle_deltas_v0_18_to_v0_23_tell_syncs_by_delta_type_v0_24_by_resource_version() {
    let deltas = |fifo: &DeltaFifo<Object>| {
        fifo.update(cm("ns", "a", 1));
        // A resync's Sync can carry a newer object than the cache's only in a hand-built queue;
        // what matters is that its type decides.
        let sync = Delta::new(DeltaType::Sync, cm("ns", "b", 5));
        fifo.add_if_not_present(Deltas::new(vec![sync]));
    };
    let unchanged = ["update ns/a 1->1"];
    assert_eq!(
        after_an_unmarking_check("1.23", deltas),
        [unchanged, unchanged]
    );
    let changed = ["update ns/b 1->5"];
    assert_eq!(after_an_unmarking_check("1.24", deltas), [changed, changed]);
}

/// The clock of [`a_late_handler_is_told_it_synced_only_after_its_on_add_for_every_cached_object`],
/// which stamps each of the late registration's adds: on the registering thread, a stamp first
/// waits until the listener has drained (its thread handled every notification added before and
/// finished its look at `HasSynced` after it). So the thread always catches up with the adds:
/// the interleaving where it finds the count at zero between two of them.
struct CatchUp {
    inner: Arc<ManualClock>,
    registering: std::thread::ThreadId,
    informer: OnceLock<std::sync::Weak<SharedInformer<Object>>>,
}

impl Clock for CatchUp {
    fn now(&self) -> std::time::Instant {
        let late = (std::thread::current().id() == self.registering)
            .then(|| self.informer.get()?.upgrade())
            .flatten()
            .and_then(|informer| informer.processor().listeners().pop());
        if let Some(late) = late {
            assert!(late.wait_drained(DEADLINE));
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

/// `sharedIndexInformer.AddEventHandlerWithResyncPeriod` after the informer synced, with a
/// handler quicker than the registration's adds: it is told its registration synced only after
/// its `OnAdd` of every cached object, not when its thread catches up with the adds and finds
/// the count at zero between two of them. client-go adds them all before returning the handle,
/// "so there is never a chance for anyone to call the handle's HasSynced method in a state when
/// it would falsely return true", and nobody else asks (the comment @v0.28.7); here the
/// listener's thread asks after each call, so the hand-over holds the count up until its end.
#[test]
fn a_late_handler_is_told_it_synced_only_after_its_on_add_for_every_cached_object() {
    struct CountsCalls {
        calls: usize,
        told: std::sync::mpsc::Sender<usize>,
    }
    impl ListenerHandler<Object> for CountsCalls {
        fn handle(&mut self, _: &Delivery<'_, Object>) {
            self.calls += 1;
        }
        fn synced(&mut self, _: std::time::Instant) {
            let _ = self.told.send(self.calls);
        }
    }
    let clock = Arc::new(CatchUp {
        inner: ManualClock::new(),
        registering: std::thread::current().id(),
        informer: OnceLock::new(),
    });
    let indexer = Indexer::new();
    let fifo = Arc::new(DeltaFifo::new().known_objects(Arc::new(indexer.reader())));
    let informer = Arc::new(SharedInformer::new(indexer, Duration::ZERO, clock.clone()));
    let _ = clock.informer.set(Arc::downgrade(&informer));
    informer
        .start({
            let fifo = fifo.clone();
            move || fifo.has_synced()
        })
        .unwrap();
    fifo.replace(
        vec![cm("ns", "a", 1), cm("ns", "b", 1), cm("ns", "c", 1)],
        "1",
    );
    let queue: &dyn InformerQueue<Object> = fifo.as_ref();
    while queue
        .try_pop_batch(1, &mut |deltas, initial| {
            informer.handle_deltas(deltas, initial);
        })
        .is_some()
    {}
    assert!(informer.has_synced());

    let (told, told_rx) = std::sync::mpsc::channel();
    let handler = CountsCalls { calls: 0, told };
    let late = informer.add_event_handler("late", handler).unwrap();
    assert_eq!(
        told_rx.recv_timeout(DEADLINE),
        Ok(3),
        "told after how many OnAdds"
    );
    settle(&[&late]);
    assert!(told_rx.try_recv().is_err(), "told once");
}
