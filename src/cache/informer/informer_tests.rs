//! The informer's wiring: where its consumer pops, how it ends, what its sink sees.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use tokio_util::sync::CancellationToken;

use super::*;
use crate::cache::clock::TokioClock;
use crate::cache::test_handlers::{ManualClock, Recorder};
use crate::cache::test_objects::{cm, rv};
use crate::cache::testing::{Reply, ScriptedListerWatcher, WhenDone, configmaps};

/// Generous: only there so that a broken test fails instead of hanging.
const PATIENCE: Duration = Duration::from_secs(20);

/// Lists `objects` at resourceVersion 10; every watch stays open and silent.
fn listed(objects: Vec<Arc<Object>>) -> ScriptedListerWatcher {
    let items = objects.iter().map(|o| (**o).clone());
    ScriptedListerWatcher::new(configmaps(), None, [Reply::list(items, "10")])
        .when_done(WhenDone::StayOpen)
}

/// What a sink saw, in order: `#seq key` per batch, the kind of each event, `resync` for each
/// resync it was asked to do.
#[derive(Default)]
struct Seen {
    lines: Mutex<Vec<String>>,
    /// How long handling a batch takes.
    delay: Option<Duration>,
    /// Whether resyncs are done by the default (`false`) or only noted.
    note_resyncs: bool,
    /// Cancelled when the queue syncs without a pop (`synced`), as a session that ends at the
    /// sync (`--until-synced`) is stopped.
    stop_at_sync: Option<CancellationToken>,
}

impl Seen {
    fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }
}

impl InformerSink for Seen {
    fn batch(&self, batch: Batch<Object>, _: SystemTime, _: &dyn InformerQueue<Object>) {
        let key = batch.key.as_deref().unwrap_or("*");
        self.lines
            .lock()
            .unwrap()
            .push(format!("#{} {key}", batch.seq));
        if let Some(delay) = self.delay {
            std::thread::sleep(delay);
        }
    }

    fn event(&self, event: ReflectorEvent, _: &dyn InformerQueue<Object>) {
        let kind = match event.kind {
            ReflectorEventKind::Resync { keys } => format!("resynced {keys}"),
            ReflectorEventKind::ListDone { items, .. } => format!("listed {items}"),
            _ => return,
        };
        self.lines.lock().unwrap().push(kind);
    }

    fn resync(&self, at: SystemTime, queue: &dyn InformerQueue<Object>) {
        if self.note_resyncs {
            self.lines.lock().unwrap().push("resync".into());
        }
        let keys = queue.resync();
        let kind = ReflectorEventKind::Resync { keys };
        self.event(ReflectorEvent { at, kind }, queue);
    }

    fn synced(&self, _: SystemTime, _: &dyn InformerQueue<Object>) {
        self.lines.lock().unwrap().push("synced".into());
        if let Some(stop) = &self.stop_at_sync {
            stop.cancel();
        }
    }
}

fn informer(
    consumption: Consumption,
    sink: Arc<Seen>,
    group: Arc<ConsumerGroup>,
    cancel: CancellationToken,
) -> Arc<Informer> {
    let config = InformerConfig {
        consumption,
        ..InformerConfig::default()
    };
    Informer::new(config, sink, group, cancel)
}

/// Builds `informer`'s consumer (and starts its thread) by running it with a Reflector stopped
/// at once, so that a test can queue by hand.
async fn started(informer: &Arc<Informer>) {
    let listed = listed(Vec::new());
    let run = informer.run(
        listed,
        ReflectorConfig::default(),
        TokioClock,
        std::future::ready(()),
    );
    run.await.expect("the informer starts");
}

#[tokio::test]
async fn an_inline_consumer_pops_only_when_drained_and_finish_pops_the_rest() {
    let seen = Arc::new(Seen::default());
    let informer = informer(
        Consumption::Inline,
        seen.clone(),
        Arc::default(),
        CancellationToken::new(),
    );
    started(&informer).await;
    informer.queue.add(cm("ns", "a", 1));
    informer.queue.add(cm("ns", "b", 2));
    assert!(seen.lines().is_empty(), "nothing pops before a turn");
    informer.drain();
    assert_eq!(seen.lines(), ["#1 ns/a", "#2 ns/b"]);
    informer.queue.add(cm("ns", "c", 3));
    tokio::time::timeout(PATIENCE, informer.finish())
        .await
        .expect("finish drains");
    assert_eq!(seen.lines(), ["#1 ns/a", "#2 ns/b", "#3 ns/c"]);
    assert_eq!(
        informer.indexer().get_by_key("ns/c").map(|o| rv(&o)),
        Some(3),
        "the consumer applied the batch to the cache"
    );
    assert!(informer.shut_down().await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thread_consumer_syncs_the_cache_and_ends_with_shut_down() {
    let seen = Arc::new(Seen::default());
    let informer = informer(
        Consumption::Thread,
        seen.clone(),
        Arc::default(),
        CancellationToken::new(),
    );
    let listed = listed(vec![cm("ns", "a", 1), cm("ns", "b", 2)]);
    let run = informer.run(
        listed,
        ReflectorConfig::default(),
        TokioClock,
        informer.synced(),
    );
    tokio::time::timeout(PATIENCE, run)
        .await
        .expect("the initial list is popped")
        .expect("the Reflector runs");
    assert!(informer.has_synced());
    assert_eq!(informer.indexer().list().len(), 2);
    assert!(informer.shut_down().await, "the consumer thread ends");
    assert_eq!(seen.lines(), ["listed 2", "#1 ns/a", "#2 ns/b"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_informer_stops_after_the_batch_in_hand() {
    let seen = Arc::new(Seen {
        delay: Some(Duration::from_millis(200)),
        ..Seen::default()
    });
    let cancel = CancellationToken::new();
    let informer = informer(
        Consumption::Thread,
        seen.clone(),
        Arc::default(),
        cancel.clone(),
    );
    for i in 0..5 {
        informer.queue.add(cm("ns", &format!("o{i}"), i));
    }
    let group = informer.group.clone();
    started(&informer).await;
    // The first batch is in hand (its handler takes 200 ms) once the consumer has popped it.
    tokio::time::timeout(PATIENCE, async {
        while group.popped_so_far() == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await
    .expect("the consumer pops");
    cancel.cancel();
    assert!(informer.shut_down().await);
    assert_eq!(
        seen.lines(),
        ["#1 ns/o0"],
        "nothing popped after the cancel"
    );
    assert_eq!(informer.queue.len(), 4, "the rest stays queued");
}

#[tokio::test]
async fn informers_of_one_group_number_their_pops_in_one_sequence() {
    let group = Arc::new(ConsumerGroup::default());
    let (seen_a, seen_b) = (Arc::new(Seen::default()), Arc::new(Seen::default()));
    let cancel = CancellationToken::new();
    let a = informer(
        Consumption::Inline,
        seen_a.clone(),
        group.clone(),
        cancel.clone(),
    );
    let b = informer(Consumption::Inline, seen_b.clone(), group.clone(), cancel);
    started(&a).await;
    started(&b).await;
    a.queue.add(cm("ns", "a1", 1));
    b.queue.add(cm("ns", "b1", 2));
    a.queue.add(cm("ns", "a2", 3));
    a.drain();
    b.drain();
    assert_eq!(seen_a.lines(), ["#1 ns/a1", "#2 ns/a2"]);
    assert_eq!(seen_b.lines(), ["#3 ns/b1"]);
    assert_eq!((group.popped_so_far(), group.in_hand()), (3, 0));
}

#[tokio::test]
async fn a_resync_goes_through_the_sink_which_queues_it() {
    let seen = Arc::new(Seen {
        note_resyncs: true,
        ..Seen::default()
    });
    let informer = informer(
        Consumption::Inline,
        seen.clone(),
        Arc::default(),
        CancellationToken::new(),
    );
    started(&informer).await;
    informer.queue.replace(vec![cm("ns", "a", 1)], "1");
    informer.drain();
    informer.resync(SystemTime::UNIX_EPOCH);
    informer.drain();
    assert_eq!(
        seen.lines(),
        ["#1 ns/a", "resync", "resynced 1", "#2 ns/a"],
        "the sink decides where the resync happens; its Sync delta is popped after"
    );
}

/// A sink that panics on its first batch.
struct Panics;

impl InformerSink for Panics {
    fn batch(&self, _: Batch<Object>, _: SystemTime, _: &dyn InformerQueue<Object>) {
        panic!("a renderer bug");
    }

    fn event(&self, _: ReflectorEvent, _: &dyn InformerQueue<Object>) {}
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consumer_that_panics_stops_the_informer_instead_of_hanging_it() {
    let cancel = CancellationToken::new();
    let group = Arc::new(ConsumerGroup::default());
    let config = InformerConfig::default();
    let informer = Informer::new(config, Arc::new(Panics), group.clone(), cancel.clone());
    informer.queue.add(cm("ns", "a", 1));
    started(&informer).await;
    tokio::time::timeout(PATIENCE, cancel.cancelled())
        .await
        .expect("the panic cancels the informer");
    assert_eq!(group.in_hand(), 0, "the batch no longer counts as in hand");
    assert!(
        !informer.shut_down().await,
        "the panic is reported by the join"
    );
}

/// Runs `informer` (registering its handlers) on `clock` with the informer's own resync
/// `period`, its Reflector stopped at once, so that a test can queue by hand.
async fn started_with(informer: &Arc<Informer>, clock: Arc<ManualClock>, period: Duration) {
    let listed = listed(Vec::new());
    let config = ReflectorConfig {
        resync: Some(period),
        ..ReflectorConfig::default()
    };
    let run = informer.run(listed, config, clock, std::future::ready(()));
    run.await.expect("the informer starts");
}

/// client-go's `sharedIndexInformer.HandleDeltas` → `processDeltas` → `distribute` and
/// `processorListener.add`: in a shared informer, a handler stuck in a call does not hold the
/// pop. Each update of one key is popped on its own while the handler is stuck (nothing
/// coalesces in the queue), and waits in the handler's buffer instead; then every one is
/// delivered, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_informer_pops_at_once_while_its_handler_is_stuck() {
    let seen = Arc::new(Seen::default());
    let informer = informer(
        Consumption::Thread,
        seen.clone(),
        Arc::default(),
        CancellationToken::new(),
    );
    let recorder = Recorder::default();
    let (handler, mut gate) = recorder.gated();
    informer.add_event_handler("slow", handler, None);
    started(&informer).await;
    informer.queue.add(cm("ns", "a", 1));
    assert_eq!(gate.wait_entered(), "add ns/a@1");
    for v in 2..=6 {
        informer.queue.add(cm("ns", "a", v));
        // Popped while the handler is still inside its first call.
        tokio::time::timeout(PATIENCE, async {
            while !informer.queue_is_empty() || seen.lines().len() < v as usize {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        })
        .await
        .expect("the pop returns while the handler is stuck");
    }
    assert_eq!(
        seen.lines(),
        [
            "#1 ns/a", "#2 ns/a", "#3 ns/a", "#4 ns/a", "#5 ns/a", "#6 ns/a"
        ]
    );
    let listener = &informer.listeners()[0];
    assert_eq!(listener.stats().depth, 5, "the buffer holds the rest");
    assert!(recorder.lines().is_empty());
    gate.open();
    gate.release_one();
    assert!(listener.wait_drained(PATIENCE));
    let expected: Vec<String> = std::iter::once("add ns/a@1".to_owned())
        .chain((1..=5).map(|v| format!("update ns/a {v}->{}", v + 1)))
        .collect();
    assert_eq!(recorder.lines(), expected);
    assert!(informer.shut_down().await);
}

/// client-go's `NewInformer` (`newInformer` → `processDeltas` inside `Pop`, under the queue's
/// lock): while the plain informer's handler runs, a producer's queue call waits; it returns once
/// the handler does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_informer_makes_the_producer_wait_while_its_handler_runs() {
    let seen = Arc::new(Seen::default());
    let config = InformerConfig {
        kind: InformerKind::Plain,
        ..InformerConfig::default()
    };
    let informer = Informer::new(
        config,
        seen.clone(),
        Arc::default(),
        CancellationToken::new(),
    );
    let (entered_tx, entered) = std::sync::mpsc::channel::<()>();
    let (release, release_rx) = std::sync::mpsc::channel::<()>();
    let release_rx = Mutex::new(release_rx);
    let entered_tx = Mutex::new(entered_tx);
    informer.handle_in_pop(Arc::new(
        move |_: &[crate::cache::Notification<Object>]| {
            let _ = entered_tx.lock().unwrap().send(());
            let _ = release_rx.lock().unwrap().recv();
        },
    ));
    started(&informer).await;
    informer.queue.add(cm("ns", "a", 1));
    entered.recv_timeout(PATIENCE).expect("the handler runs");

    let (added_tx, added) = std::sync::mpsc::channel::<()>();
    let producer = {
        let informer = informer.clone();
        std::thread::spawn(move || {
            informer.queue.add(cm("ns", "b", 2));
            added_tx.send(()).unwrap();
        })
    };
    // Not a timing assertion: however slow the machine, the add cannot return before the
    // release below; a broken lock only shows up sooner.
    assert!(
        added.recv_timeout(Duration::from_millis(200)).is_err(),
        "the producer's add returned while the handler ran"
    );
    release.send(()).unwrap();
    added
        .recv_timeout(PATIENCE)
        .expect("the add returns after the handler");
    producer.join().unwrap();
    drop(release);
    assert!(informer.shut_down().await);
    assert_eq!(seen.lines()[..1], ["#1 ns/a"]);
}

/// client-go's `sharedIndexInformer.OnUpdate` → `distribute(…, isSync)` with `isSync` from equal
/// resourceVersions, and `sharedProcessor.shouldResync` run by the informer's resync timer:
/// through the informer, an unchanged object after a relist reaches every handler until the
/// first resync check, then only the one whose own period is due (here the informer's 30 s;
/// the other registered with 0).
#[tokio::test]
async fn unchanged_objects_reach_handlers_by_their_own_resync_period() {
    let clock = ManualClock::new();
    let seen = Arc::new(Seen::default());
    let informer = informer(
        Consumption::Inline,
        seen.clone(),
        Arc::default(),
        CancellationToken::new(),
    );
    let (periodic, never) = (Recorder::default(), Recorder::default());
    informer.add_event_handler("periodic", periodic.handler(), None);
    informer.add_event_handler("never", never.handler(), Some(Duration::ZERO));
    started_with(&informer, clock.clone(), Duration::from_secs(30)).await;
    assert_eq!(informer.external_resync_period(), None);

    informer
        .queue
        .replace(vec![cm("ns", "a", 1), cm("ns", "b", 2)], "2");
    informer.drain();
    clock.set(Duration::from_secs(5));
    // A relist before any resync check: every listener is still marked syncing.
    informer
        .queue
        .replace(vec![cm("ns", "a", 1), cm("ns", "b", 3)], "3");
    informer.drain();
    let before = ["update ns/a 1->1 (sync)", "update ns/b 2->3"];
    assert_eq!(periodic.take()[2..], before);
    assert_eq!(never.take()[2..], before);

    // The check at 30 s: `periodic` is due (and re-marked), `never` is not.
    clock.set(Duration::from_secs(30));
    informer.resync_tick(SystemTime::UNIX_EPOCH + Duration::from_secs(30));
    informer.drain();
    assert_eq!(
        periodic.take(),
        ["update ns/a 1->1 (sync)", "update ns/b 3->3 (sync)"]
    );
    assert!(never.take().is_empty());

    clock.set(Duration::from_secs(40));
    informer
        .queue
        .replace(vec![cm("ns", "a", 1), cm("ns", "b", 4)], "4");
    informer.drain();
    assert_eq!(
        periodic.take(),
        ["update ns/a 1->1 (sync)", "update ns/b 3->4"]
    );
    assert_eq!(
        never.take(),
        ["update ns/b 3->4"],
        "the unchanged one is filtered"
    );
}

/// A handler that says when it was told its registration synced.
struct ToldSynced(Arc<Mutex<Vec<String>>>);

impl ListenerHandler<Object> for ToldSynced {
    fn handle(&mut self, d: &Delivery<'_, Object>) {
        let line = crate::cache::test_handlers::describe(d.notification);
        self.0.lock().unwrap().push(line);
    }

    fn synced(&mut self, _: Instant) {
        self.0.lock().unwrap().push("told synced".into());
    }
}

/// An empty first list syncs a DeltaFIFO in its `Replace` (client-go's `DeltaFIFO.Replace` sets
/// `populated` with `initialPopulationCount` 0, `delta_fifo.go` @v0.28.7), and with it the
/// registration of a handler given nothing (`processorListener.HasSynced`: `SingleFileTracker`
/// with a zero count). An inline informer's handler is told at once, on the Reflector's thread:
/// a session stopped by that very sync (`--until-synced`) gets no consumer turn after it. Before,
/// the handler heard of it only at the next turn, and `kubectl deltas replay --until-synced`
/// summarised it as `not synced` whenever the stop won the race with the replay's next line.
#[tokio::test]
async fn an_inline_handler_is_told_an_empty_first_list_synced_it_before_the_informer_stops() {
    let cancel = CancellationToken::new();
    let seen = Arc::new(Seen {
        stop_at_sync: Some(cancel.clone()),
        ..Seen::default()
    });
    let informer = informer(Consumption::Inline, seen.clone(), Arc::default(), cancel);
    let told = Arc::new(Mutex::new(Vec::new()));
    informer.add_event_handler("h", ToldSynced(told.clone()), None);
    let run = informer.run(
        listed(Vec::new()),
        ReflectorConfig::default(),
        ManualClock::new(),
        std::future::pending(),
    );
    tokio::time::timeout(PATIENCE, run)
        .await
        .expect("the stop at the sync ends the run")
        .expect("the informer runs");
    assert_eq!(seen.lines(), ["listed 0", "synced"]);
    assert_eq!(*told.lock().unwrap(), ["told synced"]);
    assert!(informer.listeners()[0].has_synced());
    assert!(informer.shut_down().await);
}
