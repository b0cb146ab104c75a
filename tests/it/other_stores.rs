//! The stores a Reflector feeds besides the informer's queues, each fed by the real Reflector:
//! the plain FIFO against the DeltaFIFO on the same recordings (the deletions only the DeltaFIFO
//! delivers), the UndeltaStore's pushes (what the kubelet sees) from a recording and from the fake
//! API server, and an ExpirationCache aging on a replay's clock.

use crate::support;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use kube::core::ApiResource;
use kubectl_deltas::Object;
use kubectl_deltas::cache::UndeltaStore;
use kubectl_deltas::cache::reflector::BackoffConfig;
use kubectl_deltas::cache::reflector::Clock;
use kubectl_deltas::cache::{
    DeltaFifo, DeltaObject, ExpirationCache, Fifo, Indexer, IndexerReader, InformerQueue,
    Notification, ProcessLoop, Reflector, ReflectorConfig, ReflectorEvent, ReflectorEventKind,
    object_key, process_deltas,
};
use kubectl_deltas::source::recording::{
    InlineDrain, Pace, RecordingListerWatcher, RecordingReader, ReplayClock,
};
use kubectl_deltas::source::{KubeListerWatcher, client_without_retry};
use serde_json::json;
use support::fake_apiserver::FakeApiServer;
use tokio::sync::{mpsc, oneshot};

/// Generous: only there so that a broken test fails instead of hanging.
const PATIENCE: Duration = Duration::from_secs(20);

/// What a test collects from another thread or task.
type Log<T> = Arc<Mutex<Vec<T>>>;

fn recordings_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/recordings")
}

fn rv(obj: Option<&Arc<Object>>) -> &str {
    obj.and_then(|o| o.resource_version()).unwrap_or("?")
}

fn key_rv(obj: &Arc<Object>) -> String {
    format!("{}@{}", object_key(obj.as_ref()), rv(Some(obj)))
}

/// What handlers were told: `add a@1`, `update a@1→2`, `delete c†@1` (as `tests/it/recording_queues.rs`).
fn show_calls(notifications: &[Notification<Object>]) -> Vec<String> {
    let name = |obj: &Arc<Object>| obj.name().unwrap_or_default().to_owned();
    notifications
        .iter()
        .map(|n| match n {
            Notification::Add { obj, .. } => format!("add {}@{}", name(obj), rv(Some(obj))),
            Notification::Update { old, new } => {
                format!("update {}@{}→{}", name(old), rv(Some(old)), rv(Some(new)))
            }
            Notification::Delete {
                obj: DeltaObject::Tombstone(t),
            } => format!(
                "delete {}†@{}",
                t.key.rsplit('/').next().unwrap_or_default(),
                rv(t.obj.as_ref())
            ),
            Notification::Delete { obj } => {
                let obj = obj.object().expect("a deleted object");
                format!("delete {}@{}", name(obj), rv(Some(obj)))
            }
        })
        .collect()
}

fn cached(indexer: &IndexerReader<Object>) -> Vec<String> {
    indexer
        .entries()
        .into_iter()
        .map(|(_, obj)| key_rv(&obj))
        .collect()
}

/// Replays `name` instantly, as `kubectl deltas replay` does: the real Reflector that `build`
/// makes from the replay's lister-watcher and config (feeding the store under test) runs on the
/// replay's clock, `drain` runs at the end of every `t` group (the consumer's turn) and once more
/// after the end.
async fn replay(
    name: &str,
    drain: impl FnMut() + Send + 'static,
    build: impl FnOnce(RecordingListerWatcher, ReflectorConfig) -> Reflector<RecordingListerWatcher>,
) {
    let reader = RecordingReader::open(&recordings_dir().join(name)).expect("open");
    let inline = Arc::new(InlineDrain::new(drain));
    let lw = RecordingListerWatcher::new(reader, Pace::Instant(inline.clone()))
        .expect("a replayable recording");
    let (end, clock) = (lw.end(), lw.clock());
    let config = lw.reflector_config(ReflectorConfig::default());
    let reflector = build(lw, config).clock(clock);
    let stop = end.clone();
    tokio::time::timeout(
        PATIENCE,
        reflector.run(async move {
            let _ = stop.wait().await;
        }),
    )
    .await
    .expect("the replay finishes")
    .expect("the Reflector stops cleanly");
    match end.get() {
        Some(Ok(_)) => {}
        other => panic!("{name}: the replay did not end cleanly: {other:?}"),
    }
    inline.drain();
}

/// What a consumer heard, and what its cache holds at the end.
#[derive(Debug, PartialEq)]
struct Heard {
    calls: Vec<String>,
    cached: Vec<String>,
}

/// `name` through a DeltaFIFO, popped by the informer's controller into an indexer.
async fn through_delta_fifo(name: &str) -> Heard {
    let indexer = Indexer::<Object>::new();
    let fifo = Arc::new(DeltaFifo::new().known_objects(Arc::new(indexer.reader())));
    let calls: Log<String> = Arc::default();
    let mut controller = ProcessLoop::new(fifo.clone(), indexer);
    let indexer = controller.indexer().clone();
    let sink = calls.clone();
    let drain = move || {
        while let Some(batch) = controller.try_process_next() {
            sink.lock()
                .unwrap()
                .extend(show_calls(&batch.notifications));
        }
    };
    replay(name, drain, |lw, config| {
        Reflector::new(lw, fifo.clone(), config)
    })
    .await;
    let calls = calls.lock().unwrap().clone();
    Heard {
        calls,
        cached: cached(&indexer),
    }
}

/// `name` through a plain FIFO, popped (in the `InformerQueue` shape) into an indexer by the same
/// `process_deltas`; also the FIFO's `(coalesced, dropped)` counts.
async fn through_fifo(name: &str) -> (Heard, (u64, u64)) {
    let mut consumer_indexer = Indexer::<Object>::new();
    let indexer = consumer_indexer.reader();
    let fifo = Arc::new(Fifo::<Object>::new());
    let calls: Log<String> = Arc::default();
    let (sink, consumer_fifo) = (calls.clone(), fifo.clone());
    let drain = move || {
        let mut notifications = Vec::new();
        while consumer_fifo
            .try_pop_deltas(&mut |deltas, initial| {
                process_deltas(&mut notifications, &mut consumer_indexer, deltas, initial);
            })
            .is_some()
        {}
        sink.lock().unwrap().extend(show_calls(&notifications));
    };
    replay(name, drain, |lw, config| {
        Reflector::new(lw, fifo.clone(), config)
    })
    .await;
    let stats = fifo.stats();
    let calls = calls.lock().unwrap().clone();
    (
        Heard {
            calls,
            cached: cached(&indexer),
        },
        (stats.coalesced, stats.dropped),
    )
}

/// ```text
/// t=0   LIST a@1 b@1 c@1
/// t=10  MODIFIED a@2, ADDED d@3, DELETED b@4, MODIFIED a@5, ERROR 410, LIST a@5 e@6
/// ```
/// Three deletions: b's by the watch (b was popped at t=0), d's and c's found by the relist (d
/// still queued, c known). The DeltaFIFO delivers all three; the FIFO none: b's deletion finds
/// nothing waiting, the relist simply replaces what waits (d is dropped unseen) and a FIFO knows
/// nothing of c. Its consumer keeps b and c forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletions_reach_a_delta_fifo_consumer_and_never_a_fifo_consumer() {
    let delta = through_delta_fifo("tombstone-order.jsonl").await;
    assert_eq!(
        delta,
        Heard {
            calls: [
                "add a@1",
                "add b@1",
                "add c@1",
                "update a@1→2",
                "update a@2→5",
                "update a@5→5",
                "add d@3",
                "delete d†@3",
                "delete b@4",
                "add e@6",
                "delete c†@1",
            ]
            .map(String::from)
            .to_vec(),
            cached: ["default/a@5", "default/e@6"].map(String::from).to_vec(),
        }
    );

    let (plain, (coalesced, dropped)) = through_fifo("tombstone-order.jsonl").await;
    assert_eq!(
        plain,
        Heard {
            calls: [
                "add a@1",
                "add b@1",
                "add c@1",
                // a@2 was overwritten by a@5 while waiting, and that by the relist's a@5.
                "update a@1→5",
                "add e@6",
            ]
            .map(String::from)
            .to_vec(),
            cached: ["default/a@5", "default/b@1", "default/c@1", "default/e@6"]
                .map(String::from)
                .to_vec(),
        }
    );
    assert_eq!((coalesced, dropped), (2, 1), "a twice; d dropped unseen");
}

/// ```text
/// t=0   LIST a@1 b@1
/// t=10  ADDED c@2, MODIFIED c@3, MODIFIED a@4
/// t=20  MODIFIED c@5
/// t=30  DELETED b@6
/// ```
/// The simplest case: a watch deletion of an object the consumer has.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_deletion_is_a_delta_fifo_pop_and_nothing_in_a_fifo() {
    let delta = through_delta_fifo("coalescing.jsonl").await;
    assert_eq!(delta.calls.last().map(String::as_str), Some("delete b@6"));
    assert_eq!(delta.cached, ["default/a@4", "default/c@5"]);

    let (plain, (coalesced, dropped)) = through_fifo("coalescing.jsonl").await;
    assert_eq!(
        plain.calls,
        [
            "add a@1",
            "add b@1",
            // The FIFO hands out c's newest object only: the consumer never sees c@2.
            "add c@3",
            "update a@1→4",
            "update c@3→5",
        ]
    );
    assert_eq!(
        plain.cached,
        ["default/a@4", "default/b@1", "default/c@5"],
        "b, deleted on the server, stays in the FIFO consumer's cache"
    );
    assert_eq!((coalesced, dropped), (1, 0), "b had nothing waiting");
}

/// The kubelet's view: every change is one push of the whole list, the relist included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undelta_store_pushes_the_whole_list_after_every_recorded_change() {
    let pushes: Log<Vec<String>> = Arc::default();
    let sink = pushes.clone();
    let store = Arc::new(UndeltaStore::new(move |objs: &[Arc<Object>]| {
        sink.lock().unwrap().push(objs.iter().map(key_rv).collect());
    }));
    replay(
        "coalescing.jsonl",
        || {},
        |lw, config| Reflector::new(lw, store.clone(), config),
    )
    .await;
    let pushes = pushes.lock().unwrap().clone();
    assert_eq!(
        pushes,
        [
            vec!["default/a@1", "default/b@1"],
            vec!["default/a@1", "default/b@1", "default/c@2"],
            vec!["default/a@1", "default/b@1", "default/c@3"],
            vec!["default/a@4", "default/b@1", "default/c@3"],
            vec!["default/a@4", "default/b@1", "default/c@5"],
            vec!["default/a@4", "default/c@5"],
        ]
    );
}

/// ```text
/// t=0      LIST a@1 b@1 c@1
/// t=10     MODIFIED a@2
/// t=60000  ERROR 410
/// t=60812  LIST a@2
/// ```
/// With a 30 s TTL on the replay's clock, everything has expired by the time of the error (a
/// minute of recorded time, a few milliseconds of real time), and the relist stores a afresh.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expiration_cache_ages_on_the_replays_clock() {
    let cache: Arc<OnceLock<Arc<ExpirationCache<Object>>>> = Arc::default();
    let clock = Arc::new(OnceLock::new());
    let seen: Log<(u64, Vec<String>)> = Arc::default();
    let (reader, at, sink) = (cache.clone(), clock.clone(), seen.clone());
    let drain = move || {
        let (Some(cache), Some(clock)) = (reader.get(), at.get()) else {
            return;
        };
        let listed: Vec<String> = cache.list().iter().map(key_rv).collect();
        sink.lock()
            .unwrap()
            .push((ReplayClock::t(clock).as_millis() as u64, listed));
    };
    replay("tombstone-known.jsonl", drain, |lw, config| {
        let replay_clock = lw.clock();
        let store = Arc::new(ExpirationCache::ttl(
            Duration::from_secs(30),
            Arc::new(replay_clock.clone()) as Arc<dyn Clock>,
        ));
        let _ = cache.set(store.clone());
        let _ = clock.set(replay_clock);
        Reflector::new(lw, store, config)
    })
    .await;
    let seen = seen.lock().unwrap().clone();
    let expected: Vec<(u64, Vec<String>)> = vec![
        (0, vec![]),
        (
            0,
            vec![
                "default/a@1".into(),
                "default/b@1".into(),
                "default/c@1".into(),
            ],
        ),
        (
            10,
            vec![
                "default/a@2".into(),
                "default/b@1".into(),
                "default/c@1".into(),
            ],
        ),
        (60000, vec![]),
        (60812, vec!["default/a@2".into()]),
    ];
    assert_eq!(seen, expected);
    assert_eq!(cache.get().unwrap().expired(), 3);
}

// ---------------------------------------------------------------------------------------------
// Against the fake API server

fn configmaps() -> ApiResource {
    ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&())
}

fn cm(name: &str, value: &str) -> serde_json::Value {
    json!({"metadata": {"name": name, "namespace": "default"}, "data": {"k": value}})
}

/// `(key, resourceVersion)` of a push, in the shape of `FakeApiServer::objects`.
fn as_server(objs: &[Arc<Object>]) -> Vec<(String, u64)> {
    let mut entries: Vec<(String, u64)> = objs
        .iter()
        .map(|o| {
            let rv = o
                .resource_version()
                .and_then(|r| r.parse().ok())
                .unwrap_or(0);
            (object_key(o.as_ref()), rv)
        })
        .collect();
    entries.sort();
    entries
}

async fn until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !cond() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A Reflector on a live (fake) server feeding an UndeltaStore, as the kubelet's pod source:
/// each watch event is one push of the whole list; changes made while the watch was down arrive
/// together as the relist's one push; the consistency check works on the store itself.
#[tokio::test]
async fn a_reflector_on_a_server_keeps_the_last_push_equal_to_the_servers_objects() {
    let server = FakeApiServer::start().await;
    for name in ["a", "b"] {
        server.create("configmaps", cm(name, "1"));
    }
    let pushes: Log<Vec<(String, u64)>> = Arc::default();
    let sink = pushes.clone();
    let store = Arc::new(UndeltaStore::new(move |objs: &[Arc<Object>]| {
        sink.lock().unwrap().push(as_server(objs));
    }));
    let client = client_without_retry(kube::Config::new(server.url().parse().expect("url")))
        .expect("client");
    let lw = KubeListerWatcher::new(client, &configmaps(), Some("default"));
    let config = ReflectorConfig::default()
        .seed(7)
        .backoff(
            BackoffConfig::default()
                .with_steps(Duration::from_millis(10), Duration::from_millis(100))
                .seeded(7),
        )
        .verify_every(Duration::from_millis(100));
    let (tx, mut rx) = mpsc::unbounded_channel::<ReflectorEvent>();
    let events: Log<ReflectorEventKind> = Arc::default();
    let events_sink = events.clone();
    tokio::spawn(async move {
        while let Some(event) = rx.recv().await {
            events_sink.lock().unwrap().push(event.kind);
        }
    });
    let reflector = Reflector::new(lw, store.clone(), config)
        .known_objects(store.clone())
        .observer(tx);
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let task = tokio::spawn(reflector.run(async {
        let _ = stop_rx.await;
    }));
    let last = || pushes.lock().unwrap().last().cloned().unwrap_or_default();
    let any_event =
        |pred: &dyn Fn(&ReflectorEventKind) -> bool| events.lock().unwrap().iter().any(pred);

    until("the initial list", || {
        last() == server.objects("configmaps")
    })
    .await;
    until("a consistent check of the store", || {
        any_event(
            &|e| matches!(e, ReflectorEventKind::Drift(r) if r.is_consistent() && r.listed == 2),
        )
    })
    .await;

    let before = pushes.lock().unwrap().len();
    server.update("configmaps", cm("a", "2"));
    server.create("configmaps", cm("c", "1"));
    server.delete("configmaps", "default", "b");
    until("three watch events", || {
        last() == server.objects("configmaps")
    })
    .await;
    assert_eq!(
        pushes.lock().unwrap().len(),
        before + 3,
        "one push per event"
    );

    // The server goes away; meanwhile objects change and history is compacted, so the re-watch
    // gets 410 and the Reflector relists: the kubelet gets the gap's changes as one list.
    server.refuse_connections(PATIENCE);
    until("the watch to end", || {
        any_event(&|e| matches!(e, ReflectorEventKind::WatchEnded { .. }))
    })
    .await;
    let before = pushes.lock().unwrap().len();
    server.delete("configmaps", "default", "c");
    server.update("configmaps", cm("a", "3"));
    server.create("configmaps", cm("d", "1"));
    server.compact();
    server.accept_connections();
    until("the relist", || last() == server.objects("configmaps")).await;
    assert_eq!(
        pushes.lock().unwrap().len(),
        before + 1,
        "one push for the relist"
    );

    let _ = stop_tx.send(());
    tokio::time::timeout(PATIENCE, task)
        .await
        .expect("stops")
        .expect("join")
        .expect("clean stop");
}
