//! The state machine driven step by step with a scripted ListerWatcher and a virtual clock:
//! decisions that are hard to provoke on a server, and proof that nothing needs real time.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use crate::object::Object;
use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use kube::core::ApiResource;

use super::*;
use crate::cache::reflector::event::NoObserver;
use crate::cache::{DeltaFifo, QueueKind};
use crate::source::{ApiStatus, ListPage};

fn ar() -> ApiResource {
    ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&())
}

fn obj(name: &str, rv: &str) -> Object {
    let mut o = Object::new(name, &ar()).within("default");
    o.types = None;
    o.meta_mut().resource_version = Some(rv.into());
    o
}

fn expired() -> SourceError {
    SourceError::Api(ApiStatus {
        code: 410,
        reason: "Expired".into(),
        message: "too old resource version: 1 (5)".into(),
    })
}

enum Reply {
    List(Result<ListPage, SourceError>),
    Watch(Result<Vec<Result<WatchEvent, SourceError>>, SourceError>),
}

/// Answers requests from a script, in order, and records them.
#[derive(Default)]
struct Scripted {
    replies: Mutex<VecDeque<Reply>>,
    lists: Mutex<Vec<ListRequest>>,
    watches: Mutex<Vec<WatchRequest>>,
}

impl Scripted {
    fn new(replies: Vec<Reply>) -> Arc<Self> {
        Arc::new(Scripted {
            replies: Mutex::new(replies.into()),
            ..Scripted::default()
        })
    }
}

impl ListerWatcher for Scripted {
    async fn list(&self, req: &ListRequest) -> Result<ListPage, SourceError> {
        self.lists.lock().unwrap().push(req.clone());
        match self.replies.lock().unwrap().pop_front() {
            Some(Reply::List(r)) => r,
            _ => panic!("unexpected list {req:?}"),
        }
    }

    async fn watch(&self, req: &WatchRequest) -> Result<WatchStream, SourceError> {
        self.watches.lock().unwrap().push(req.clone());
        match self.replies.lock().unwrap().pop_front() {
            Some(Reply::Watch(r)) => r.map(|events| futures_util::stream::iter(events).boxed()),
            _ => panic!("unexpected watch {req:?}"),
        }
    }

    fn describe(&self) -> ResourceTarget {
        ResourceTarget::new(ar(), Some("default".into()))
    }
}

/// Time that only moves when someone sleeps.
struct VirtualClock {
    start: Instant,
    elapsed: Mutex<Duration>,
    sleeps: Mutex<Vec<Duration>>,
}

impl VirtualClock {
    fn new() -> Arc<Self> {
        Arc::new(VirtualClock {
            start: Instant::now(),
            elapsed: Mutex::new(Duration::ZERO),
            sleeps: Mutex::new(Vec::new()),
        })
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Instant {
        self.start + *self.elapsed.lock().unwrap()
    }

    fn wall(&self) -> SystemTime {
        SystemTime::UNIX_EPOCH + *self.elapsed.lock().unwrap()
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        *self.elapsed.lock().unwrap() += duration;
        self.sleeps.lock().unwrap().push(duration);
        Box::pin(std::future::ready(()))
    }
}

fn machine(lw: Arc<Scripted>, clock: Arc<VirtualClock>) -> Machine<Scripted> {
    Machine::new(
        lw,
        Arc::new(DeltaFifo::new()),
        ReflectorConfig::default().seed(1),
        clock,
        Arc::new(NoObserver),
        Arc::new(Shared::default()),
    )
}

/// Steps until the script is used up and the machine waits for a new request.
async fn run_script(m: &mut Machine<Scripted>, lw: &Scripted, mut state: State) -> State {
    for _ in 0..100 {
        let asks = matches!(
            state,
            State::List { .. } | State::Paging(_) | State::Watch { .. }
        );
        if asks && lw.replies.lock().unwrap().is_empty() {
            return state;
        }
        state = m.step(state).await.expect("no terminal error");
    }
    panic!("the script did not finish in 100 steps");
}

fn page(items: Vec<Object>, rv: &str, cont: Option<&str>) -> Reply {
    Reply::List(Ok(ListPage {
        items,
        resource_version: rv.into(),
        continue_token: cont.map(str::to_owned),
        remaining_item_count: None,
    }))
}

#[tokio::test]
async fn expired_list_at_the_last_rv_is_retried_from_empty_without_backoff() {
    let lw = Scripted::new(vec![
        page(vec![obj("a", "3")], "10", None),
        Reply::Watch(Ok(vec![Ok(WatchEvent::Error(ApiStatus {
            code: 410,
            reason: "Expired".into(),
            message: "too old resource version: 10 (20)".into(),
        }))])),
        Reply::List(Err(expired())),
        page(vec![obj("a", "21")], "25", None),
    ]);
    let clock = VirtualClock::new();
    let mut m = machine(lw.clone(), clock.clone());
    let state = m.initial_state();
    let state = run_script(&mut m, &lw, state).await;

    let lists: Vec<String> = lw
        .lists
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.resource_version.clone())
        .collect();
    assert_eq!(lists, ["0", "10", ""]);
    // One backoff, after the expired watch; the second relist followed at once.
    assert_eq!(clock.sleeps.lock().unwrap().len(), 1);
    assert!(
        matches!(&state, State::Watch { resource_version, send_initial_events: false } if resource_version == "25")
    );
    assert_eq!(*m.shared.lock(), "25");
}

#[tokio::test]
async fn expired_continue_token_restarts_the_list_from_empty() {
    let lw = Scripted::new(vec![
        page(vec![obj("a", "3")], "10", Some("token")),
        Reply::List(Err(expired())),
        page(vec![obj("a", "3"), obj("b", "4")], "12", None),
    ]);
    let clock = VirtualClock::new();
    let mut m = machine(lw.clone(), clock.clone());
    let state = m.initial_state();
    run_script(&mut m, &lw, state).await;
    let lists = lw.lists.lock().unwrap().clone();
    assert_eq!(lists[1].continue_token.as_deref(), Some("token"));
    assert_eq!(lists[2].resource_version, "");
    assert_eq!(lists[2].continue_token, None);
    assert_eq!(m.fifo.len(), 2);
}

#[tokio::test]
async fn added_events_of_a_watch_from_zero_do_not_advance_the_rv() {
    let lw = Scripted::new(vec![Reply::Watch(Ok(vec![
        Ok(WatchEvent::Added(Arc::new(obj("a", "7")))),
        Ok(WatchEvent::Added(Arc::new(obj("b", "5")))),
    ]))]);
    let clock = VirtualClock::new();
    let mut m = machine(lw.clone(), clock);
    let mut state = State::Watch {
        resource_version: "0".into(),
        send_initial_events: false,
    };
    for _ in 0..3 {
        state = m.step(state).await.expect("step");
    }
    assert_eq!(
        *m.shared.lock(),
        "",
        "ADDED events alone leave the RV alone"
    );
    assert_eq!(m.fifo.len(), 2);

    let lw = Scripted::new(vec![Reply::Watch(Ok(vec![
        Ok(WatchEvent::Added(Arc::new(obj("a", "7")))),
        Ok(WatchEvent::Modified(Arc::new(obj("b", "9")))),
        Ok(WatchEvent::Added(Arc::new(obj("c", "8")))),
    ]))]);
    let mut m = machine(lw, VirtualClock::new());
    let mut state = State::Watch {
        resource_version: "".into(),
        send_initial_events: false,
    };
    for _ in 0..4 {
        state = m.step(state).await.expect("step");
    }
    assert_eq!(
        *m.shared.lock(),
        "8",
        "after a non-ADDED event every event advances it"
    );
    drop(state);
}

#[tokio::test]
async fn very_short_watch_is_measured_on_the_reflectors_clock() {
    let lw = Scripted::new(vec![
        page(vec![], "10", None),
        // Ends at once without events: very short, so back off and relist at the last RV.
        Reply::Watch(Ok(vec![])),
        page(vec![], "11", None),
    ]);
    let clock = VirtualClock::new();
    let mut m = machine(lw.clone(), clock.clone());
    let state = m.initial_state();
    run_script(&mut m, &lw, state).await;
    let lists: Vec<String> = lw
        .lists
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.resource_version.clone())
        .collect();
    assert_eq!(lists, ["0", "10"]);
    let sleeps = clock.sleeps.lock().unwrap().clone();
    assert_eq!(sleeps.len(), 1);
    assert!(sleeps[0] >= Duration::from_millis(800) && sleeps[0] < Duration::from_millis(1600));
}

#[tokio::test]
async fn watch_open_errors_rewatch_or_relist_as_client_go() {
    let refused = SourceError::Connect("connection refused".into());
    let internal = SourceError::Api(ApiStatus {
        code: 500,
        reason: "InternalError".into(),
        message: "boom".into(),
    });
    let lw = Scripted::new(vec![
        page(vec![], "10", None),
        Reply::Watch(Err(refused)),
        Reply::Watch(Err(internal)),
        page(vec![], "12", None),
    ]);
    let mut m = machine(lw.clone(), VirtualClock::new());
    let state = m.initial_state();
    run_script(&mut m, &lw, state).await;
    let watches: Vec<String> = lw
        .watches
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.resource_version.clone())
        .collect();
    // Refused: re-watch from the same RV; 500: relist at the last synced RV.
    assert_eq!(watches, ["10", "10"]);
    let lists: Vec<String> = lw
        .lists
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.resource_version.clone())
        .collect();
    assert_eq!(lists, ["0", "10"]);
}

#[tokio::test]
async fn forbidden_watch_is_terminal() {
    let lw = Scripted::new(vec![
        page(vec![], "10", None),
        Reply::Watch(Err(SourceError::Api(ApiStatus {
            code: 403,
            reason: "Forbidden".into(),
            message: "configmaps is forbidden".into(),
        }))),
    ]);
    let mut m = machine(lw, VirtualClock::new());
    let mut state = m.initial_state();
    let error = loop {
        match m.step(state).await {
            Ok(next) => state = next,
            Err(e) => break e,
        }
    };
    assert_eq!(error.verb(), "watch");
    assert_eq!(
        error.to_string(),
        "cannot watch configmaps in namespace \"default\": the API server answered 403 Forbidden: configmaps is forbidden"
    );
}

/// Steps a machine over `queue` through one watch of `events`, from resourceVersion "5".
async fn watch_into(
    queue: Arc<dyn Queue<Object>>,
    send_initial_events: bool,
    events: Vec<WatchEvent>,
) -> Machine<Scripted> {
    let steps = events.len() + 1;
    let lw = Scripted::new(vec![Reply::Watch(Ok(events.into_iter().map(Ok).collect()))]);
    let mut m = Machine::new(
        lw,
        queue,
        ReflectorConfig::default().seed(1),
        VirtualClock::new(),
        Arc::new(NoObserver),
        Arc::new(Shared::default()),
    );
    let mut state = State::Watch {
        resource_version: "5".into(),
        send_initial_events,
    };
    for _ in 0..steps {
        state = m.step(state).await.expect("step");
    }
    m
}

fn bookmark(rv: &str, initial_events_end: bool) -> WatchEvent {
    WatchEvent::Bookmark {
        resource_version: rv.into(),
        initial_events_end,
    }
}

#[tokio::test]
async fn a_watch_bookmark_is_queued_by_an_atomic_queue_and_ignored_by_the_others() {
    for kind in QueueKind::ALL {
        let queue = kind.build(Arc::new(crate::cache::Indexer::new()), true);
        let m = watch_into(
            queue.clone(),
            false,
            vec![
                WatchEvent::Added(Arc::new(obj("a", "7"))),
                bookmark("9", false),
            ],
        )
        .await;
        assert_eq!(*m.shared.lock(), "9", "{kind}");
        let expected = if kind == QueueKind::Atomic { 2 } else { 1 };
        assert_eq!(queue.len(), expected, "{kind}");
    }
}

#[tokio::test]
async fn bookmarks_of_a_streaming_lists_initial_events_are_not_queued() {
    let queue: Arc<dyn Queue<Object>> = Arc::new(crate::cache::RealFifo::atomic());
    watch_into(
        queue.clone(),
        true,
        vec![
            WatchEvent::Added(Arc::new(obj("a", "3"))),
            bookmark("4", false),
            bookmark("6", true),
        ],
    )
    .await;
    // Only the `replace` at the end of the initial events: one ReplacedAll.
    assert_eq!(queue.len(), 1);
}
