//! The Reflector against the fake API server: what a user of an informer sees (the indexer's
//! contents compared with the server's, the batches popped, the requests made) after each of the
//! situations client-go's Reflector handles.

use crate::support;

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kube::core::ApiResource;
use kubectl_deltas::Object;
use serde_json::json;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use kubectl_deltas::cache::reflector::BackoffConfig;
use kubectl_deltas::cache::reflector::{Phase, RelistCause, WatchEndReason};
use kubectl_deltas::cache::{
    DeltaFifo, DeltaType, Indexer, IndexerReader, InformerQueue, KnownObjects, ProcessLoop,
    Reflector, ReflectorConfig, ReflectorError, ReflectorEvent, ReflectorEventKind, ReflectorStore,
};
use kubectl_deltas::source::{KubeListerWatcher, client_without_retry};
use support::fake_apiserver::{FakeApiServer, Fault, Request, Verb};

/// Generous: only there so that a broken test fails instead of hanging.
const PATIENCE: Duration = Duration::from_secs(10);

fn configmaps() -> ApiResource {
    ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&())
}

fn cm(name: &str, value: &str) -> serde_json::Value {
    json!({"metadata": {"name": name, "namespace": "default"}, "data": {"k": value}})
}

/// Small, seeded steps so that retries take milliseconds.
fn fast_config() -> ReflectorConfig {
    ReflectorConfig::default().seed(42).backoff(
        BackoffConfig::default()
            .with_steps(Duration::from_millis(10), Duration::from_millis(100))
            .seeded(42),
    )
}

/// One popped batch, reduced to what assertions need.
#[derive(Debug, Clone)]
struct Popped {
    key: String,
    types: Vec<DeltaType>,
    tombstone: bool,
    initial: bool,
}

/// A Reflector on `configmaps` in `default`, a consumer thread applying batches to an indexer,
/// and every event and batch recorded.
struct Harness {
    server: FakeApiServer,
    fifo: Arc<DeltaFifo<Object>>,
    indexer: IndexerReader<Object>,
    events: Arc<Mutex<Vec<ReflectorEventKind>>>,
    batches: Arc<Mutex<Vec<Popped>>>,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<Result<(), ReflectorError>>>,
    consumer: Option<std::thread::JoinHandle<()>>,
}

impl Harness {
    async fn start(server: FakeApiServer, config: ReflectorConfig) -> Harness {
        Self::start_with(server, config, |r, _| r).await
    }

    async fn start_with(
        server: FakeApiServer,
        config: ReflectorConfig,
        customize: impl FnOnce(
            Reflector<KubeListerWatcher>,
            IndexerReader<Object>,
        ) -> Reflector<KubeListerWatcher>,
    ) -> Harness {
        let indexer = Indexer::new();
        let fifo = Arc::new(DeltaFifo::new().known_objects(Arc::new(indexer.reader())));
        let client = client_without_retry(kube::Config::new(server.url().parse().expect("url")))
            .expect("client");
        let lw = KubeListerWatcher::new(client, &configmaps(), Some("default"));

        let (tx, mut rx) = mpsc::unbounded_channel::<ReflectorEvent>();
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = events.clone();
        tokio::spawn(async move {
            while let Some(event) = rx.recv().await {
                sink.lock().unwrap().push(event.kind);
            }
        });

        let batches = Arc::new(Mutex::new(Vec::new()));
        let sink = batches.clone();
        let mut controller = ProcessLoop::new(fifo.clone(), indexer);
        let indexer = controller.indexer().clone();
        let consumer = std::thread::spawn(move || {
            while let Some(batch) = controller.process_next() {
                let popped = Popped {
                    key: batch.key.as_deref().unwrap_or_default().to_string(),
                    types: batch.deltas.iter().map(|d| d.type_).collect(),
                    tombstone: batch.deltas.iter().any(|d| d.object.is_tombstone()),
                    initial: batch.is_in_initial_list,
                };
                sink.lock().unwrap().push(popped);
            }
        });

        let reflector = customize(
            Reflector::new(lw, fifo.clone(), config).observer(tx),
            indexer.clone(),
        );
        let (shutdown_tx, shutdown_rx) = oneshot::channel::<()>();
        let task = tokio::spawn(reflector.run(async {
            let _ = shutdown_rx.await;
        }));
        Harness {
            server,
            fifo,
            indexer,
            events,
            batches,
            shutdown: Some(shutdown_tx),
            task: Some(task),
            consumer: Some(consumer),
        }
    }

    fn events(&self) -> Vec<ReflectorEventKind> {
        self.events.lock().unwrap().clone()
    }

    fn batches(&self) -> Vec<Popped> {
        self.batches.lock().unwrap().clone()
    }

    /// `(key, resourceVersion)` of the indexer, sorted, in the shape of `server.objects`.
    fn cached(&self) -> Vec<(String, u64)> {
        let mut entries: Vec<(String, u64)> = self
            .indexer
            .entries()
            .into_iter()
            .map(|(k, obj)| {
                let rv = obj
                    .resource_version()
                    .and_then(|r| r.parse().ok())
                    .unwrap_or(0);
                (k.to_string(), rv)
            })
            .collect();
        entries.sort();
        entries
    }

    fn requests(&self, verb: Verb) -> Vec<Request> {
        self.server
            .requests()
            .into_iter()
            .filter(|r| r.verb == verb && r.resource.as_deref() == Some("configmaps"))
            .collect()
    }

    async fn until(&self, what: &str, mut cond: impl FnMut(&Harness) -> bool) {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        while !cond(self) {
            if tokio::time::Instant::now() > deadline {
                panic!(
                    "timed out waiting for {what}\nevents: {:#?}\ncached: {:?}\nserver: {:?}",
                    self.events(),
                    self.cached(),
                    self.server.objects("configmaps")
                );
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    async fn until_event(&self, what: &str, pred: impl Fn(&ReflectorEventKind) -> bool) {
        self.until(what, |h| h.events().iter().any(&pred)).await;
    }

    /// Waits until the indexer holds exactly the server's objects at their resourceVersions.
    async fn until_consistent(&self) {
        self.until("indexer == server", |h| {
            h.fifo.is_empty() && h.cached() == h.server.objects("configmaps")
        })
        .await;
    }

    async fn until_synced(&self) {
        self.until("HasSynced", |h| h.fifo.has_synced()).await;
        self.until_consistent().await;
    }

    /// Stops the Reflector, closes the FIFO and returns what `run` returned.
    async fn stop(mut self) -> Result<(), ReflectorError> {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        let result = self.task.take().expect("running").await.expect("join");
        self.fifo.close();
        if let Some(consumer) = self.consumer.take() {
            consumer.join().expect("consumer thread");
        }
        result
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        // A failed assertion must not leave the consumer thread blocked in `pop`.
        self.fifo.close();
    }
}

async fn with_timeout<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(PATIENCE, f).await.expect("timed out")
}

fn count<T>(items: &[T], pred: impl Fn(&T) -> bool) -> usize {
    items.iter().filter(|i| pred(i)).count()
}

#[tokio::test]
async fn paged_initial_list_is_one_replace() {
    let server = FakeApiServer::start().await;
    for name in ["a", "b", "c", "d", "e"] {
        server.create("configmaps", cm(name, "1"));
    }
    // A consistent list is paged by the server ("0" would be served whole by the watch cache).
    let h = Harness::start(server, fast_config().page_size(2).consistent_list(true)).await;
    h.until_synced().await;

    let lists = h.requests(Verb::List);
    assert_eq!(lists.len(), 3, "{lists:#?}");
    assert_eq!(lists[0].param("limit"), Some("2"));
    assert_eq!(lists[0].param("continue"), None);
    assert!(lists[1].param("continue").is_some());
    assert!(lists[2].param("continue").is_some());

    let events = h.events();
    let pages: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            ReflectorEventKind::ListPage {
                items_so_far,
                remaining,
                ..
            } => Some((*items_so_far, *remaining)),
            _ => None,
        })
        .collect();
    assert_eq!(pages, [(2, Some(3)), (4, Some(1)), (5, None)]);
    assert!(events.iter().any(|e| matches!(
        e,
        ReflectorEventKind::ListDone {
            items: 5,
            pages: 3,
            ..
        }
    )));

    // One replace: five initial batches of one Replaced delta each.
    let batches = h.batches();
    assert_eq!(batches.len(), 5);
    assert!(
        batches
            .iter()
            .all(|b| b.initial && b.types == [DeltaType::Replaced])
    );
    // List items lack kind/apiVersion on the wire; the Reflector fills them in.
    let a = h.indexer.get_by_key("default/a").expect("cached");
    let types = a.types().expect("type meta");
    assert_eq!(
        (types.kind.as_str(), types.api_version.as_str()),
        ("ConfigMap", "v1")
    );
    h.stop().await.expect("clean stop");
}

#[tokio::test]
async fn first_list_asks_for_resource_version_zero_with_a_limit() {
    let server = FakeApiServer::start().await;
    server.create("configmaps", cm("a", "1"));
    let h = Harness::start(server, fast_config()).await;
    h.until_synced().await;
    let lists = h.requests(Verb::List);
    assert_eq!(lists.len(), 1);
    assert_eq!(lists[0].param("resourceVersion"), Some("0"));
    assert_eq!(lists[0].param("limit"), Some("500"));
    // The watch opens after the sync, not necessarily before this point.
    h.until("a watch request", |h| !h.requests(Verb::Watch).is_empty())
        .await;
    let watches = h.requests(Verb::Watch);
    assert_eq!(watches[0].param("allowWatchBookmarks"), Some("true"));
    let timeout: u32 = watches[0]
        .param("timeoutSeconds")
        .and_then(|t| t.parse().ok())
        .expect("timeoutSeconds");
    assert!((300..600).contains(&timeout), "{timeout}");
    h.stop().await.expect("clean stop");
}

#[tokio::test]
async fn transform_runs_before_objects_reach_the_fifo() {
    let server = FakeApiServer::start().await;
    server.create("configmaps", cm("a", "1"));
    let config = fast_config().transform(|obj: &mut Object| {
        obj.set_field("data", &json!({"k": "transformed"})).unwrap();
    });
    let h = Harness::start(server, config).await;
    h.until_synced().await;
    h.server.create("configmaps", cm("b", "1"));
    h.until_consistent().await;
    for key in ["default/a", "default/b"] {
        let obj = h.indexer.get_by_key(key).expect("cached");
        assert_eq!(obj.field_value("data").unwrap()["k"], "transformed");
    }
    h.stop().await.expect("clean stop");
}

#[tokio::test]
async fn watch_events_reach_the_indexer() {
    let server = FakeApiServer::start().await;
    server.create("configmaps", cm("a", "1"));
    server.create("configmaps", cm("b", "1"));
    let h = Harness::start(server, fast_config()).await;
    h.until_synced().await;

    h.server.create("configmaps", cm("c", "1"));
    h.server.update("configmaps", cm("a", "2"));
    h.server.delete("configmaps", "default", "b");
    h.until_consistent().await;

    let after_sync: Vec<Popped> = h.batches().into_iter().filter(|b| !b.initial).collect();
    let types: Vec<(String, Vec<DeltaType>)> = after_sync
        .iter()
        .map(|b| (b.key.clone(), b.types.clone()))
        .collect();
    assert!(
        types.contains(&("default/c".into(), vec![DeltaType::Added])),
        "{types:?}"
    );
    assert!(
        types.contains(&("default/a".into(), vec![DeltaType::Updated])),
        "{types:?}"
    );
    assert!(
        types.contains(&("default/b".into(), vec![DeltaType::Deleted])),
        "{types:?}"
    );
    assert_eq!(h.requests(Verb::List).len(), 1);
    h.stop().await.expect("clean stop");
}

#[tokio::test]
async fn closed_watch_rewatches_from_the_last_resource_version_without_relisting() {
    let server = FakeApiServer::start().await;
    server.create("configmaps", cm("a", "1"));
    let h = Harness::start(server, fast_config()).await;
    h.until_synced().await;
    let rv = h.server.update("configmaps", cm("a", "2"));
    h.until_consistent().await;

    h.server.close_watches();
    h.until("a second watch", |h| h.requests(Verb::Watch).len() >= 2)
        .await;
    let watches = h.requests(Verb::Watch);
    assert_eq!(
        watches[1].param("resourceVersion"),
        Some(rv.to_string().as_str())
    );
    assert!(h.events().iter().any(|e| matches!(
        e,
        ReflectorEventKind::WatchEnded {
            reason: WatchEndReason::Closed,
            ..
        }
    )));

    h.server.create("configmaps", cm("b", "1"));
    h.until_consistent().await;
    assert_eq!(h.requests(Verb::List).len(), 1, "no relist");
    h.stop().await.expect("clean stop");
}

#[tokio::test]
async fn bookmarks_advance_the_resource_version() {
    let server = FakeApiServer::start().await;
    server.create("configmaps", cm("a", "1"));
    server.set_bookmark_interval(Duration::from_millis(100));
    let h = Harness::start(server, fast_config()).await;
    h.until_synced().await;

    // Changes to another resource move the server's resourceVersion; only a bookmark can tell
    // the configmaps watch about it.
    let rv = h.server.create(
        "secrets",
        json!({"metadata": {"name": "s", "namespace": "default"}}),
    );
    let wanted = rv.to_string();
    h.until_event("a bookmark at the secret's resourceVersion", |e| {
        matches!(e, ReflectorEventKind::Bookmark { resource_version, .. } if *resource_version == wanted)
    })
    .await;

    h.server.close_watches();
    h.until("a second watch", |h| h.requests(Verb::Watch).len() >= 2)
        .await;
    assert_eq!(
        h.requests(Verb::Watch)[1].param("resourceVersion"),
        Some(wanted.as_str())
    );
    assert_eq!(h.requests(Verb::List).len(), 1);
    h.stop().await.expect("clean stop");
}

#[tokio::test]
async fn expired_watch_relists_at_the_last_resource_version() {
    let server = FakeApiServer::start().await;
    server.create("configmaps", cm("a", "1"));
    server.create("configmaps", cm("b", "1"));
    let h = Harness::start(server, fast_config()).await;
    h.until_synced().await;
    let last = h.server.update("configmaps", cm("a", "2"));
    h.until_consistent().await;

    // The next watch ends with an ERROR 410 event; the list at the last synced resourceVersion
    // still works (nothing was compacted), so no consistent list is needed.
    h.server.inject(Fault::status(410).on(Verb::Watch));
    h.server.close_watches();
    h.until_event("a relist", |e| {
        matches!(
            e,
            ReflectorEventKind::Relist {
                cause: RelistCause::WatchExpired
            }
        )
    })
    .await;
    h.until("the relist", |h| h.requests(Verb::List).len() >= 2)
        .await;
    h.server.delete("configmaps", "default", "b");
    h.until_consistent().await;

    let lists = h.requests(Verb::List);
    assert_eq!(lists.len(), 2, "{lists:#?}");
    assert_eq!(
        lists[1].param("resourceVersion"),
        Some(last.to_string().as_str())
    );
    assert!(h.events().iter().any(|e| matches!(
        e,
        ReflectorEventKind::WatchEnded {
            reason: WatchEndReason::ErrorEvent(s),
            ..
        } if s.code == 410
    )));
    h.stop().await.expect("clean stop");
}

/// Why the Reflector relisted, in order.
fn relist_causes(events: &[ReflectorEventKind]) -> Vec<&RelistCause> {
    events
        .iter()
        .filter_map(|e| match e {
            ReflectorEventKind::Relist { cause } => Some(cause),
            _ => None,
        })
        .collect()
}

/// The resourceVersion of every list request and whether it asked for a `limit`.
fn list_rvs(h: &Harness) -> Vec<(Option<String>, bool)> {
    h.requests(Verb::List)
        .iter()
        .map(|r| {
            (
                r.param("resourceVersion").map(str::to_owned),
                r.param("limit").is_some(),
            )
        })
        .collect()
}

/// Checks that no list went back in time: each answered at a resourceVersion at least as new as
/// the one it asked for.
fn assert_lists_never_go_back(events: &[ReflectorEventKind]) {
    let mut asked = None;
    for e in events {
        match e {
            ReflectorEventKind::ListStarted { resource_version } => {
                asked = resource_version.parse::<u64>().ok();
            }
            ReflectorEventKind::ListDone {
                resource_version, ..
            } => {
                let got: u64 = resource_version.parse().expect("a numeric resourceVersion");
                assert!(
                    asked.is_none_or(|asked| got >= asked),
                    "a list at {asked:?} answered {got}: {events:#?}"
                );
            }
            _ => {}
        }
    }
}

#[tokio::test]
async fn an_apiserver_restart_with_deletions_in_etcd_converges_with_tombstones() {
    let server = FakeApiServer::start().await;
    for name in ["a", "b", "c", "d"] {
        server.create("configmaps", cm(name, "1"));
    }
    let h = Harness::start(server, fast_config()).await;
    h.until_synced().await;
    let last = h.server.update("configmaps", cm("d", "2"));
    h.until_consistent().await;

    // kube-apiserver dies; meanwhile b and c are deleted directly in etcd, and it comes back
    // with a watch cache that starts at the current revision (`watch-after-restart-410.jsonl`).
    h.server.stop();
    h.until_event("the watch to break", |e| {
        matches!(e, ReflectorEventKind::WatchEnded { .. })
    })
    .await;
    h.server.delete("configmaps", "default", "b");
    h.server.delete("configmaps", "default", "c");
    let lists_before = h.requests(Verb::List).len();
    h.server.restart();
    h.until_consistent().await;
    h.until("the watch after the relist", |h| {
        matches!(
            h.events().last(),
            Some(ReflectorEventKind::WatchStarted { .. })
        )
    })
    .await;
    h.server.update("configmaps", cm("a", "2"));
    h.until_consistent().await;

    // One relist, at the last synced resourceVersion without a limit, so that the rebuilt
    // watch cache answered with the current state (with a limit, etcd would have served the
    // stale revision again: `list-after-restart-rv-limit-stale.json`).
    let lists = list_rvs(&h);
    assert_eq!(
        &lists[lists_before..],
        [(Some(last.to_string()), false)],
        "{lists:?}"
    );
    let events = h.events();
    assert_eq!(
        count(&events, |e| matches!(
            e,
            ReflectorEventKind::WatchEnded {
                reason: WatchEndReason::ErrorEvent(s),
                ..
            } if s.code == 410
        )),
        1,
        "{events:#?}"
    );
    assert_lists_never_go_back(&events);

    let batches = h.batches();
    let tombstones: Vec<&str> = batches
        .iter()
        .filter(|b| b.tombstone)
        .map(|b| b.key.as_str())
        .collect();
    assert_eq!(tombstones, ["default/b", "default/c"]);
    let last_batch = batches.last().expect("batches");
    assert_eq!(last_batch.key, "default/a");
    assert_eq!(last_batch.types, [DeltaType::Updated]);
    h.stop().await.expect("clean stop");
}

#[tokio::test]
async fn missed_deletion_during_a_long_disconnect_with_compaction_becomes_a_tombstone() {
    let server = FakeApiServer::start().await;
    for name in ["a", "b", "c"] {
        server.create("configmaps", cm(name, "1"));
    }
    let h = Harness::start(server, fast_config()).await;
    h.until_synced().await;
    let last = h.server.update("configmaps", cm("a", "2"));
    h.until_consistent().await;

    // The server goes away; meanwhile objects change and history is compacted, so the re-watch
    // gets 410. The relist at the last synced resourceVersion has no limit: the watch cache
    // answers it with the current state, and the deletion it reveals is a tombstone.
    h.server.refuse_connections(PATIENCE);
    h.until_event("the watch to end", |e| {
        matches!(e, ReflectorEventKind::WatchEnded { .. })
    })
    .await;
    h.server.delete("configmaps", "default", "b");
    h.server.update("configmaps", cm("c", "2"));
    h.server.create("configmaps", cm("d", "1"));
    h.server.compact();
    h.server.accept_connections();
    h.until_consistent().await;

    let events = h.events();
    let relists = relist_causes(&events);
    assert_eq!(relists, [&RelistCause::WatchExpired], "{events:#?}");
    assert!(events.iter().any(|e| matches!(
        e,
        ReflectorEventKind::Backoff {
            phase: Phase::Watch,
            ..
        }
    )));
    assert_eq!(
        list_rvs(&h),
        [(Some("0".into()), true), (Some(last.to_string()), false)]
    );
    assert_lists_never_go_back(&events);

    let tombstones: Vec<Popped> = h.batches().into_iter().filter(|b| b.tombstone).collect();
    assert_eq!(tombstones.len(), 1, "{tombstones:?}");
    assert_eq!(tombstones[0].key, "default/b");
    assert_eq!(tombstones[0].types, [DeltaType::Deleted]);
    h.stop().await.expect("clean stop");
}

#[tokio::test]
async fn with_an_explicit_page_size_a_compacted_relist_falls_back_to_a_consistent_read() {
    let server = FakeApiServer::start().await;
    for name in ["a", "b", "c"] {
        server.create("configmaps", cm(name, "1"));
    }
    // client-go's WatchListPageSize: every list is paged, so a relist at a resourceVersion is an
    // exact read from etcd, which compaction makes fail; `""` follows at once.
    let h = Harness::start(server, fast_config().page_size(2)).await;
    h.until_synced().await;
    let last = h.server.update("configmaps", cm("a", "2"));
    h.until_consistent().await;
    h.server.refuse_connections(PATIENCE);
    h.until_event("the watch to end", |e| {
        matches!(e, ReflectorEventKind::WatchEnded { .. })
    })
    .await;
    h.server.delete("configmaps", "default", "b");
    h.server.compact();
    h.server.accept_connections();
    h.until_consistent().await;

    let events = h.events();
    let relists = relist_causes(&events);
    assert_eq!(
        relists,
        [&RelistCause::WatchExpired, &RelistCause::ListExpired],
        "{events:#?}"
    );
    let lists = list_rvs(&h);
    let last = last.to_string();
    let first_relist = lists
        .iter()
        .position(|(rv, _)| rv.as_deref() == Some(last.as_str()))
        .expect("a relist at the last synced resourceVersion");
    assert!(lists[first_relist].1, "paged: {lists:?}");
    assert_eq!(
        lists[first_relist + 1],
        (None, true),
        "a consistent read: {lists:?}"
    );
    let tombstones: Vec<String> = h
        .batches()
        .into_iter()
        .filter(|b| b.tombstone)
        .map(|b| b.key)
        .collect();
    assert_eq!(tombstones, ["default/b"]);
    h.stop().await.expect("clean stop");
}

#[tokio::test]
async fn an_undecodable_watch_event_is_an_internal_error_then_backoff_and_relist() {
    let server = FakeApiServer::start().await;
    server.create("configmaps", cm("a", "1"));
    server.inject(Fault::garble_watch_after(1));
    let h = Harness::start(server, fast_config()).await;
    h.until_synced().await;
    h.server.update("configmaps", cm("a", "2"));
    h.until("the relist", |h| h.requests(Verb::List).len() >= 2)
        .await;
    h.server.update("configmaps", cm("a", "3"));
    h.until_consistent().await;

    // client-go's StreamWatcher turns a line it cannot decode into an ERROR event carrying an
    // InternalError, which ends the ListAndWatch: back off, relist.
    let events = h.events();
    let ended = events
        .iter()
        .find_map(|e| match e {
            ReflectorEventKind::WatchEnded {
                reason: WatchEndReason::ErrorEvent(s),
                ..
            } => Some(s.clone()),
            _ => None,
        })
        .expect("the watch ended with an error event");
    assert_eq!((ended.code, ended.reason.as_str()), (500, "InternalError"));
    assert!(
        ended.message.starts_with(
            "Internal error occurred: unable to decode an event from the watch stream:"
        ),
        "{ended:?}"
    );
    assert!(events.iter().any(|e| matches!(
        e,
        ReflectorEventKind::Relist {
            cause: RelistCause::WatchFailed(_)
        }
    )));
    assert!(events.iter().any(|e| matches!(
        e,
        ReflectorEventKind::Backoff {
            phase: Phase::Watch,
            ..
        }
    )));
    h.stop().await.expect("clean stop");
}

#[tokio::test]
async fn throttled_and_failing_lists_back_off_then_recover() {
    let server = FakeApiServer::start().await;
    server.create("configmaps", cm("a", "1"));
    server.inject(Fault::status(429).on(Verb::List));
    server.inject(Fault::status(500).on(Verb::List));
    let h = Harness::start(server, fast_config()).await;
    h.until_synced().await;

    let backoffs: Vec<(Phase, Option<u16>, Duration)> = h
        .events()
        .iter()
        .filter_map(|e| match e {
            ReflectorEventKind::Backoff {
                phase,
                error,
                delay,
            } => Some((*phase, error.code(), *delay)),
            _ => None,
        })
        .collect();
    assert_eq!(backoffs.len(), 2, "{backoffs:?}");
    assert_eq!((backoffs[0].0, backoffs[0].1), (Phase::List, Some(429)));
    assert_eq!((backoffs[1].0, backoffs[1].1), (Phase::List, Some(500)));
    // 10 ms, then 20 ms, each with up to 100 % jitter.
    assert!(
        backoffs[0].2 >= Duration::from_millis(10) && backoffs[0].2 < Duration::from_millis(20)
    );
    assert!(
        backoffs[1].2 >= Duration::from_millis(20) && backoffs[1].2 < Duration::from_millis(40)
    );
    // The client did not retry on its own: exactly one request per attempt.
    assert_eq!(h.requests(Verb::List).len(), 3);
    h.stop().await.expect("clean stop");
}

#[tokio::test]
async fn forbidden_list_is_a_terminal_error() {
    let server = FakeApiServer::start().await;
    server.inject(Fault::status(403).on(Verb::List));
    let mut h = Harness::start(server, fast_config()).await;
    let result = with_timeout(h.task.take().expect("running"))
        .await
        .expect("join");
    let error = result.expect_err("403 stops the reflector");
    assert_eq!(error.verb(), "list");
    let message = error.to_string();
    assert!(
        message.starts_with("cannot list configmaps in namespace \"default\""),
        "{message}"
    );
    assert!(message.contains("403 Forbidden"), "{message}");
    assert!(
        message.contains("cannot list resource \"configmaps\""),
        "{message}"
    );
    assert!(
        h.events()
            .iter()
            .any(|e| matches!(e, ReflectorEventKind::Error(_))),
    );
}

#[tokio::test]
async fn throttled_watch_rewatches_without_relisting() {
    let server = FakeApiServer::start().await;
    server.create("configmaps", cm("a", "1"));
    let h = Harness::start(server, fast_config()).await;
    h.until_synced().await;

    // An event first, so that closing the watch is not a "very short watch" (which relists).
    h.server.update("configmaps", cm("a", "2"));
    h.until_consistent().await;
    h.server.inject(Fault::status(429).on(Verb::Watch));
    h.server.close_watches();
    h.until("a third watch", |h| h.requests(Verb::Watch).len() >= 3)
        .await;
    h.server.create("configmaps", cm("b", "1"));
    h.until_consistent().await;
    assert!(h.events().iter().any(|e| matches!(
        e,
        ReflectorEventKind::Backoff { phase: Phase::Watch, error, .. } if error.is_too_many_requests()
    )));
    assert_eq!(h.requests(Verb::List).len(), 1, "no relist");
    h.stop().await.expect("clean stop");
}

#[tokio::test]
async fn very_short_watch_backs_off_and_relists() {
    let server = FakeApiServer::start().await;
    server.create("configmaps", cm("a", "1"));
    let h = Harness::start(server, fast_config()).await;
    h.until_synced().await;

    // The next watch is cut before it delivers anything.
    h.server.inject(Fault::drop_watch_after(0));
    h.server.close_watches();
    h.until_event("a very short watch", |e| {
        matches!(
            e,
            ReflectorEventKind::WatchEnded {
                reason: WatchEndReason::VeryShort,
                events: 0,
                ..
            }
        )
    })
    .await;
    h.until("the relist", |h| h.requests(Verb::List).len() >= 2)
        .await;
    h.server.create("configmaps", cm("b", "1"));
    h.until_consistent().await;
    let events = h.events();
    assert!(events.iter().any(|e| matches!(
        e,
        ReflectorEventKind::Relist {
            cause: RelistCause::VeryShortWatch
        }
    )));
    assert!(
        events
            .iter()
            .any(|e| matches!(e, ReflectorEventKind::Backoff { .. }))
    );
    h.stop().await.expect("clean stop");
}

#[tokio::test]
async fn connection_dropped_mid_watch_recovers() {
    let server = FakeApiServer::start().await;
    server.create("configmaps", cm("a", "1"));
    let h = Harness::start(server, fast_config()).await;
    h.until_synced().await;

    // The next watch delivers one event, then its connection is cut mid-stream.
    h.server.update("configmaps", cm("a", "2"));
    h.until_consistent().await;
    h.server.inject(Fault::drop_watch_after(1));
    h.server.close_watches();
    h.until("a second watch", |h| h.requests(Verb::Watch).len() >= 2)
        .await;
    h.server.create("configmaps", cm("b", "1"));
    h.until_consistent().await;
    h.server.update("configmaps", cm("a", "2"));
    h.server.create("configmaps", cm("c", "1"));
    h.until_consistent().await;
    assert!(
        h.requests(Verb::Watch).len() >= 3,
        "re-watched after the drop"
    );
    assert_eq!(h.requests(Verb::List).len(), 1, "no relist");
    h.stop().await.expect("clean stop");
}

#[tokio::test]
async fn resync_redelivers_known_objects() {
    let server = FakeApiServer::start().await;
    server.create("configmaps", cm("a", "1"));
    server.create("configmaps", cm("b", "1"));
    let h = Harness::start(server, fast_config().resync(Duration::from_millis(150))).await;
    h.until_synced().await;
    h.until_event("a resync of both keys", |e| {
        matches!(e, ReflectorEventKind::Resync { keys: 2 })
    })
    .await;
    h.until("Sync batches", |h| {
        let batches = h.batches();
        ["default/a", "default/b"].iter().all(|key| {
            batches
                .iter()
                .any(|b| b.key == *key && b.types == [DeltaType::Sync])
        })
    })
    .await;
    assert_eq!(
        h.requests(Verb::List).len(),
        1,
        "a resync never contacts the server"
    );
    h.until_consistent().await;
    h.stop().await.expect("clean stop");
}

#[tokio::test]
async fn streaming_list_replaces_once_at_the_initial_events_end() {
    let server = FakeApiServer::start().await;
    for name in ["a", "b", "c"] {
        server.create("configmaps", cm(name, "1"));
    }
    server.set_watch_list_supported(true);
    let h = Harness::start(server, fast_config().watch_list(true)).await;
    h.until_synced().await;

    assert!(h.requests(Verb::List).is_empty(), "no list request");
    let watches = h.requests(Verb::Watch);
    assert_eq!(watches.len(), 1);
    assert_eq!(watches[0].param("sendInitialEvents"), Some("true"));
    assert_eq!(
        watches[0].param("resourceVersionMatch"),
        Some("NotOlderThan")
    );
    let events = h.events();
    assert!(events.iter().any(|e| matches!(
        e,
        ReflectorEventKind::Bookmark {
            initial_events_end: true,
            ..
        }
    )));
    assert_eq!(
        count(&events, |e| matches!(
            e,
            ReflectorEventKind::ListDone {
                items: 3,
                pages: 0,
                ..
            }
        )),
        1
    );
    let batches = h.batches();
    assert_eq!(batches.len(), 3);
    assert!(
        batches
            .iter()
            .all(|b| b.initial && b.types == [DeltaType::Replaced])
    );

    // The same stream continues as a normal watch.
    h.server.create("configmaps", cm("d", "1"));
    h.until_consistent().await;
    assert_eq!(h.requests(Verb::Watch).len(), 1);
    h.stop().await.expect("clean stop");
}

#[tokio::test]
async fn streaming_list_falls_back_to_list_and_watch_on_422() {
    let server = FakeApiServer::start().await;
    server.create("configmaps", cm("a", "1"));
    let h = Harness::start(server, fast_config().watch_list(true)).await;
    h.until_synced().await;

    let events = h.events();
    let reason = events
        .iter()
        .find_map(|e| match e {
            ReflectorEventKind::WatchListFallback { reason } => Some(reason.clone()),
            _ => None,
        })
        .expect("a fallback event");
    assert!(reason.contains("422"), "{reason}");
    assert!(reason.contains("WatchList feature gate"), "{reason}");
    assert_eq!(h.requests(Verb::List).len(), 1);

    h.server.create("configmaps", cm("b", "1"));
    h.until_consistent().await;
    // Later watches are plain watches.
    assert_eq!(
        h.requests(Verb::Watch)
            .last()
            .and_then(|w| w.param("sendInitialEvents")),
        None
    );
    h.stop().await.expect("clean stop");
}

/// The cache as a consistency check sees it, with keys hidden on demand: how a test makes the
/// cache diverge from the server, now that only the consumer can write to it.
struct Hiding {
    cache: IndexerReader<Object>,
    hidden: Arc<Mutex<Vec<String>>>,
}

impl Hiding {
    fn hides(&self, key: &str) -> bool {
        self.hidden.lock().unwrap().iter().any(|k| k == key)
    }
}

impl KnownObjects<Object> for Hiding {
    fn list_keys(&self) -> Vec<Arc<str>> {
        let mut keys = KnownObjects::list_keys(&self.cache);
        keys.retain(|k| !self.hides(k));
        keys
    }

    fn get_by_key(&self, key: &str) -> Option<Arc<Object>> {
        if self.hides(key) {
            return None;
        }
        self.cache.get_by_key(key)
    }
}

#[tokio::test]
async fn consistency_check_reports_drift_only_when_the_cache_diverges() {
    let server = FakeApiServer::start().await;
    for name in ["a", "b"] {
        server.create("configmaps", cm(name, "1"));
    }
    let config = fast_config().verify_every(Duration::from_millis(100));
    let hidden: Arc<Mutex<Vec<String>>> = Arc::default();
    let hide = hidden.clone();
    let h = Harness::start_with(server, config, move |r, cache| {
        r.known_objects(Arc::new(Hiding {
            cache,
            hidden: hide,
        }))
    })
    .await;
    h.until_synced().await;
    h.until_event("a consistent report", |e| {
        matches!(e, ReflectorEventKind::Drift(report) if report.is_consistent() && report.listed == 2)
    })
    .await;

    // The cache diverges from the server: the check stops seeing `a` in it.
    hidden.lock().unwrap().push("default/a".into());
    h.until_event(
        "a drift report",
        |e| matches!(e, ReflectorEventKind::Drift(report) if report.missing == ["default/a"]),
    )
    .await;
    let verify_lists: Vec<Request> = h
        .requests(Verb::List)
        .into_iter()
        .filter(|r| r.param("resourceVersionMatch") == Some("Exact"))
        .collect();
    assert!(!verify_lists.is_empty());
    h.stop().await.expect("clean stop");
}
