//! The state machine driven step by step with a scripted ListerWatcher and a virtual clock:
//! decisions that are hard to provoke on a server, and proof that nothing needs real time.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::object::Object;
use kube::core::ApiResource;

use super::*;
use crate::cache::listwatch::{ApiStatus, ListPage};
use crate::cache::reflector::event::NoObserver;
use crate::cache::testing::{ManualClock, Reply, ScriptedListerWatcher};
use crate::cache::{DeltaFifo, InformerQueue, QueueKind};

fn ar() -> ApiResource {
    ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&())
}

fn obj(name: &str, rv: &str) -> Object {
    let mut o = Object::new(name, &ar()).within("default");
    o.set_types(None);
    o.meta_mut().resource_version = Some(rv.into());
    o
}

fn expired() -> SourceError {
    SourceError::Api(ApiStatus {
        code: 410,
        reason: "Expired".into(),
        message: "too old resource version: 1 (5)".into(),
        causes: Vec::new(),
    })
}

/// What [`Reflector::new`] feeds: the queue as a [`ReflectorStore`].
fn store(queue: Arc<dyn InformerQueue<Object>>) -> Arc<dyn ReflectorStore<Object>> {
    queue
}

fn machine(lw: ScriptedListerWatcher, clock: Arc<ManualClock>) -> Machine<ScriptedListerWatcher> {
    machine_into(lw, clock, Arc::new(DeltaFifo::new()))
}

fn machine_into(
    lw: ScriptedListerWatcher,
    clock: Arc<ManualClock>,
    fifo: Arc<DeltaFifo<Object>>,
) -> Machine<ScriptedListerWatcher> {
    Machine::new(
        Arc::new(lw),
        store(fifo),
        ReflectorConfig::default().seed(1),
        clock,
        Arc::new(NoObserver),
        Arc::new(Shared::default()),
    )
}

/// Steps until the script is used up and the machine waits for a new request.
async fn run_script(
    m: &mut Machine<ScriptedListerWatcher>,
    lw: &ScriptedListerWatcher,
    mut state: State,
) -> State {
    for _ in 0..100 {
        let asks = matches!(
            state,
            State::List { .. } | State::Paging(_) | State::Watch { .. }
        );
        if asks && lw.is_used_up() {
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
    let lw = ScriptedListerWatcher::configmaps(vec![
        page(vec![obj("a", "3")], "10", None),
        Reply::Watch(Ok(vec![Ok(WatchEvent::Error(ApiStatus {
            code: 410,
            reason: "Expired".into(),
            message: "too old resource version: 10 (20)".into(),
            causes: Vec::new(),
        }))])),
        Reply::List(Err(expired())),
        page(vec![obj("a", "21")], "25", None),
    ]);
    let clock = ManualClock::new();
    let mut m = machine(lw.clone(), clock.clone());
    let state = m.initial_state();
    let state = run_script(&mut m, &lw, state).await;

    let lists: Vec<String> = lw
        .lists()
        .iter()
        .map(|r| r.resource_version.clone())
        .collect();
    assert_eq!(lists, ["0", "10", ""]);
    // One backoff, after the expired watch; the second relist followed at once.
    assert_eq!(clock.sleeps().len(), 1);
    assert!(
        matches!(&state, State::Watch { resource_version, send_initial_events: false } if resource_version == "25")
    );
    assert_eq!(*m.shared.lock(), "25");
}

/// `(resourceVersion, limit)` of every list request so far.
fn lists(lw: &ScriptedListerWatcher) -> Vec<(String, Option<u32>)> {
    lw.lists()
        .iter()
        .map(|r| (r.resource_version.clone(), r.limit))
        .collect()
}

fn rv(s: &str, limit: Option<u32>) -> (String, Option<u32>) {
    (s.to_owned(), limit)
}

#[tokio::test]
async fn expired_continue_token_lists_again_unpaginated_at_the_same_rv() {
    // client-go's pager (`FullListIfExpired`): one list without a limit at the original
    // resourceVersion, keeping nothing of the earlier pages.
    let lw = ScriptedListerWatcher::configmaps(vec![
        page(vec![obj("a", "3")], "10", Some("token")),
        Reply::List(Err(expired())),
        page(vec![obj("b", "4"), obj("c", "5")], "12", None),
    ]);
    let clock = ManualClock::new();
    let fifo = Arc::new(DeltaFifo::new());
    let mut m = machine_into(lw.clone(), clock.clone(), fifo.clone());
    let state = m.initial_state();
    let state = run_script(&mut m, &lw, state).await;
    let requests = lw.lists();
    assert_eq!(requests[1].continue_token.as_deref(), Some("token"));
    assert_eq!(requests[2].continue_token, None);
    assert_eq!(
        lists(&lw),
        [rv("0", Some(500)), rv("0", Some(500)), rv("0", None)]
    );
    assert!(clock.sleeps().is_empty(), "no backoff");
    // b and c; a, from the abandoned first page, is not queued.
    assert_eq!(fifo.len(), 2);
    assert!(matches!(state, State::Watch { resource_version, .. } if resource_version == "12"));
}

#[tokio::test]
async fn a_relist_at_a_resource_version_asks_for_everything_so_the_watch_cache_answers() {
    // reflector.go `list`: `pager.PageSize = 0` when the resourceVersion is neither "" nor "0".
    let lw = ScriptedListerWatcher::configmaps(vec![
        page(vec![obj("a", "3")], "10", None),
        Reply::Watch(Ok(vec![Ok(WatchEvent::Error(ApiStatus {
            code: 410,
            reason: "Expired".into(),
            message: "too old resource version: 10 (12)".into(),
            causes: Vec::new(),
        }))])),
        page(vec![], "12", None),
    ]);
    let mut m = machine(lw.clone(), ManualClock::new());
    let state = m.initial_state();
    run_script(&mut m, &lw, state).await;
    assert_eq!(lists(&lw), [rv("0", Some(500)), rv("10", None)]);
}

#[tokio::test]
async fn a_paginated_first_list_keeps_relists_paged_but_a_paged_consistent_list_does_not() {
    let expired_watch = || {
        Reply::Watch(Ok(vec![Ok(WatchEvent::Error(ApiStatus {
            code: 410,
            reason: "Expired".into(),
            message: "too old resource version".into(),
            causes: Vec::new(),
        }))]))
    };
    // A "0" list in pages: the server has no watch cache (client-go's `paginatedResult`).
    let lw = ScriptedListerWatcher::configmaps(vec![
        page(vec![obj("a", "3")], "10", Some("t")),
        page(vec![obj("b", "4")], "10", None),
        expired_watch(),
        page(vec![], "12", None),
    ]);
    let mut m = machine(lw.clone(), ManualClock::new());
    let state = m.initial_state();
    run_script(&mut m, &lw, state).await;
    assert_eq!(
        lists(&lw),
        [rv("0", Some(500)), rv("0", Some(500)), rv("10", Some(500))]
    );

    // A "" list is always paged by etcd: that says nothing about a watch cache.
    let lw = ScriptedListerWatcher::configmaps(vec![
        page(vec![obj("a", "3")], "10", Some("t")),
        page(vec![obj("b", "4")], "10", None),
        expired_watch(),
        page(vec![], "12", None),
    ]);
    let mut m = Machine::new(
        Arc::new(lw.clone()),
        store(Arc::new(DeltaFifo::new())),
        ReflectorConfig::default().seed(1).consistent_list(true),
        ManualClock::new(),
        Arc::new(NoObserver),
        Arc::new(Shared::default()),
    );
    let state = m.initial_state();
    run_script(&mut m, &lw, state).await;
    assert_eq!(
        lists(&lw),
        [rv("", Some(500)), rv("", Some(500)), rv("10", None)]
    );
}

#[tokio::test]
async fn an_explicit_page_size_pages_every_list_as_watch_list_page_size_does() {
    let lw = ScriptedListerWatcher::configmaps(vec![
        page(vec![obj("a", "3")], "10", None),
        Reply::Watch(Ok(vec![])),
        page(vec![], "12", None),
    ]);
    let mut m = Machine::new(
        Arc::new(lw.clone()),
        store(Arc::new(DeltaFifo::new())),
        ReflectorConfig::default().seed(1).page_size(7),
        ManualClock::new(),
        Arc::new(NoObserver),
        Arc::new(Shared::default()),
    );
    let state = m.initial_state();
    run_script(&mut m, &lw, state).await;
    assert_eq!(lists(&lw), [rv("0", Some(7)), rv("10", Some(7))]);
}

#[tokio::test]
async fn a_too_large_resource_version_relists_from_empty_at_once() {
    // `isTooLargeResourceVersionError`: 504 with the cause ResourceVersionTooLarge.
    let too_large = SourceError::Api(ApiStatus {
        code: 504,
        reason: "Timeout".into(),
        message: "Too large resource version: 20, current: 12".into(),
        causes: vec!["ResourceVersionTooLarge".into()],
    });
    let lw = ScriptedListerWatcher::configmaps(vec![
        page(vec![obj("a", "3")], "20", None),
        Reply::Watch(Ok(vec![])),
        Reply::List(Err(too_large)),
        page(vec![obj("a", "3")], "25", None),
    ]);
    let clock = ManualClock::new();
    let mut m = machine(lw.clone(), clock.clone());
    let state = m.initial_state();
    let state = run_script(&mut m, &lw, state).await;
    assert_eq!(
        lists(&lw),
        [rv("0", Some(500)), rv("20", None), rv("", Some(500))]
    );
    // One backoff, after the very short watch; none between the two lists.
    assert_eq!(clock.sleeps().len(), 1);
    assert!(matches!(state, State::Watch { resource_version, .. } if resource_version == "25"));
}

#[tokio::test]
async fn a_streaming_list_fallback_lasts_one_list_and_watch() {
    let refused = || {
        Reply::Watch(Err(SourceError::Api(ApiStatus {
            code: 422,
            reason: "Invalid".into(),
            message: "sendInitialEvents is forbidden".into(),
            causes: Vec::new(),
        })))
    };
    let lw = ScriptedListerWatcher::configmaps(vec![
        refused(),
        page(vec![obj("a", "3")], "10", None),
        Reply::Watch(Ok(vec![])),
        // The very short watch ends this ListAndWatch: the next one tries streaming again.
        refused(),
        page(vec![], "11", None),
    ]);
    let mut m = Machine::new(
        Arc::new(lw.clone()),
        store(Arc::new(DeltaFifo::new())),
        ReflectorConfig::default().seed(1).watch_list(true),
        ManualClock::new(),
        Arc::new(NoObserver),
        Arc::new(Shared::default()),
    );
    let state = m.initial_state();
    run_script(&mut m, &lw, state).await;
    let watches: Vec<(String, bool)> = lw
        .watches()
        .iter()
        .map(|w| (w.resource_version.clone(), w.send_initial_events))
        .collect();
    assert_eq!(
        watches,
        [
            (String::new(), true),
            ("10".to_owned(), false),
            ("10".to_owned(), true)
        ]
    );
    assert_eq!(lists(&lw), [rv("0", Some(500)), rv("10", None)]);
}

#[tokio::test]
async fn a_streaming_list_that_fails_with_a_server_error_falls_back_to_a_list() {
    // client-go's `watchList` retries only a refused connection or 429 (after a backoff).
    let lw = ScriptedListerWatcher::configmaps(vec![
        Reply::Watch(Err(SourceError::Api(ApiStatus {
            code: 500,
            reason: "InternalError".into(),
            message: "boom".into(),
            causes: Vec::new(),
        }))),
        page(vec![], "10", None),
    ]);
    let clock = ManualClock::new();
    let mut m = Machine::new(
        Arc::new(lw.clone()),
        store(Arc::new(DeltaFifo::new())),
        ReflectorConfig::default().seed(1).watch_list(true),
        clock.clone(),
        Arc::new(NoObserver),
        Arc::new(Shared::default()),
    );
    let state = m.initial_state();
    run_script(&mut m, &lw, state).await;
    assert_eq!(lists(&lw), [rv("0", Some(500))]);
    assert!(clock.sleeps().is_empty());
}

#[tokio::test]
async fn added_events_of_a_watch_from_zero_do_not_advance_the_rv() {
    let lw = ScriptedListerWatcher::configmaps(vec![Reply::Watch(Ok(vec![
        Ok(WatchEvent::Added(Arc::new(obj("a", "7")))),
        Ok(WatchEvent::Added(Arc::new(obj("b", "5")))),
    ]))]);
    let clock = ManualClock::new();
    let fifo = Arc::new(DeltaFifo::new());
    let mut m = machine_into(lw.clone(), clock, fifo.clone());
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
    assert_eq!(fifo.len(), 2);

    let lw = ScriptedListerWatcher::configmaps(vec![Reply::Watch(Ok(vec![
        Ok(WatchEvent::Added(Arc::new(obj("a", "7")))),
        Ok(WatchEvent::Modified(Arc::new(obj("b", "9")))),
        Ok(WatchEvent::Added(Arc::new(obj("c", "8")))),
    ]))]);
    let mut m = machine(lw, ManualClock::new());
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
    let lw = ScriptedListerWatcher::configmaps(vec![
        page(vec![], "10", None),
        // Ends at once without events: very short, so back off and relist at the last RV.
        Reply::Watch(Ok(vec![])),
        page(vec![], "11", None),
    ]);
    let clock = ManualClock::new();
    let mut m = machine(lw.clone(), clock.clone());
    let state = m.initial_state();
    run_script(&mut m, &lw, state).await;
    let lists: Vec<String> = lw
        .lists()
        .iter()
        .map(|r| r.resource_version.clone())
        .collect();
    assert_eq!(lists, ["0", "10"]);
    let sleeps = clock.sleeps().clone();
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
        causes: Vec::new(),
    });
    let lw = ScriptedListerWatcher::configmaps(vec![
        page(vec![], "10", None),
        Reply::Watch(Err(refused)),
        Reply::Watch(Err(internal)),
        page(vec![], "12", None),
    ]);
    let mut m = machine(lw.clone(), ManualClock::new());
    let state = m.initial_state();
    run_script(&mut m, &lw, state).await;
    let watches: Vec<String> = lw
        .watches()
        .iter()
        .map(|r| r.resource_version.clone())
        .collect();
    // Refused: re-watch from the same RV; 500: relist at the last synced RV.
    assert_eq!(watches, ["10", "10"]);
    let lists: Vec<String> = lw
        .lists()
        .iter()
        .map(|r| r.resource_version.clone())
        .collect();
    assert_eq!(lists, ["0", "10"]);
}

#[tokio::test]
async fn forbidden_watch_is_terminal() {
    let lw = ScriptedListerWatcher::configmaps(vec![
        page(vec![], "10", None),
        Reply::Watch(Err(SourceError::Api(ApiStatus {
            code: 403,
            reason: "Forbidden".into(),
            message: "configmaps is forbidden".into(),
            causes: Vec::new(),
        }))),
    ]);
    let mut m = machine(lw, ManualClock::new());
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
    queue: Arc<dyn InformerQueue<Object>>,
    send_initial_events: bool,
    events: Vec<WatchEvent>,
) -> Machine<ScriptedListerWatcher> {
    let steps = events.len() + 1;
    let lw = ScriptedListerWatcher::configmaps(vec![Reply::Watch(Ok(events
        .into_iter()
        .map(Ok)
        .collect()))]);
    let mut m = Machine::new(
        Arc::new(lw),
        store(queue),
        ReflectorConfig::default().seed(1),
        ManualClock::new(),
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
        let queue = kind.build(Arc::new(crate::cache::Indexer::new().reader()), true);
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
    let queue: Arc<dyn InformerQueue<Object>> = Arc::new(crate::cache::RealFifo::atomic());
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

/// client-go's `watchWithResync`: the resync timer runs only while watching, starts over after
/// each list, and never ticks during a list or the backoff before one.
#[tokio::test(start_paused = true)]
async fn resyncs_tick_only_while_watching_and_restart_after_each_relist() {
    let secs = Duration::from_secs;
    let internal = SourceError::Api(ApiStatus {
        code: 500,
        reason: "InternalError".into(),
        message: "etcd is down".into(),
        causes: Vec::new(),
    });
    let lw = ScriptedListerWatcher::configmaps(vec![
        page(vec![obj("a", "3")], "10", None),
        // Closed normally after 25 s: a re-watch, within the same watch phase.
        Reply::WatchAfter(Some(secs(25)), vec![]),
        // Ends with 410 at 35 s: the phase ends, a backoff and a relist follow.
        Reply::WatchAfter(
            Some(secs(10)),
            vec![WatchEvent::Error(ApiStatus {
                code: 410,
                reason: "Expired".into(),
                message: "too old resource version".into(),
                causes: Vec::new(),
            })],
        ),
        Reply::List(Err(internal.clone())),
        Reply::List(Err(internal)),
        page(vec![obj("a", "3")], "20", None),
        Reply::WatchAfter(None, vec![]),
    ]);
    let start = tokio::time::Instant::now();
    let ticks = Arc::new(Mutex::new(Vec::new()));
    let reflector = crate::cache::Reflector::new(
        lw,
        Arc::new(DeltaFifo::new()),
        ReflectorConfig::default()
            .seed(1)
            .resync(secs(10))
            .backoff(crate::cache::reflector::BackoffConfig::default().seeded(1)),
    )
    .resync_with({
        let ticks = ticks.clone();
        move |_| ticks.lock().unwrap().push(start.elapsed())
    });
    reflector
        .run(tokio::time::sleep(secs(200)))
        .await
        .expect("stopped by the shutdown");

    let ticks = ticks.lock().unwrap().clone();
    // The relist succeeded after three backoffs (0.8 to 1.6 s, 1.6 to 3.2 s, 3.2 to 6.4 s, with
    // jitter), between 40.6 and 46.2 s: no tick in between, the next a period later.
    let after: Vec<Duration> = ticks.iter().copied().filter(|t| *t > secs(35)).collect();
    assert_eq!(&ticks[..3], [secs(10), secs(20), secs(30)], "{ticks:?}");
    let first_after = after[0];
    assert!(
        first_after > Duration::from_millis(50_600) && first_after < Duration::from_millis(56_200),
        "the first resync after the relist comes a whole period after it: {ticks:?}"
    );
    for pair in after.windows(2) {
        assert_eq!(pair[1] - pair[0], secs(10), "{ticks:?}");
    }
}

/// A streaming machine with the Reflector of client-go `version`, on a virtual clock.
fn streaming(
    lw: ScriptedListerWatcher,
    clock: Arc<ManualClock>,
    version: &str,
) -> Machine<ScriptedListerWatcher> {
    let version: crate::cache::ClientGoVersion = version.parse().unwrap();
    Machine::new(
        Arc::new(lw),
        store(Arc::new(DeltaFifo::new())),
        ReflectorConfig::default()
            .seed(1)
            .client_go(version)
            .watch_list(true),
        clock,
        Arc::new(NoObserver),
        Arc::new(Shared::default()),
    )
}

fn watches(lw: &ScriptedListerWatcher) -> Vec<(String, bool)> {
    lw.watches()
        .iter()
        .map(|w| (w.resource_version.clone(), w.send_initial_events))
        .collect()
}

/// `Reflector.watchList` @v0.28.7 and @v0.36.3: a stream that closes before the
/// initial-events-end bookmark (`handleListWatch` returns no error, no bookmark) is opened again
/// at once, with a fresh temporary store, never after a backoff.
#[tokio::test]
async fn watch_list_reopens_a_stream_closed_before_its_initial_events_end_at_once() {
    for version in ["1.28", "latest"] {
        let lw = ScriptedListerWatcher::configmaps(vec![
            Reply::Watch(Ok(vec![Ok(WatchEvent::Added(Arc::new(obj("a", "3"))))])),
            Reply::Watch(Ok(vec![
                Ok(WatchEvent::Added(Arc::new(obj("a", "3")))),
                Ok(bookmark("5", true)),
            ])),
        ]);
        let clock = ManualClock::new();
        let mut m = streaming(lw.clone(), clock.clone(), version);
        let state = m.initial_state();
        run_script(&mut m, &lw, state).await;
        assert_eq!(
            watches(&lw),
            [(String::new(), true), (String::new(), true)],
            "{version}"
        );
        assert!(clock.sleeps().is_empty(), "{version}");
        assert!(lw.lists().is_empty(), "{version}");
    }
}

/// `Reflector.ListAndWatch` @v0.29.0 onwards: any error `watchList` returns (a very short
/// stream, an ERROR event neither 429 nor expired) falls back to a list at once; @v0.28.7 only a
/// 422 does, anything else ends the ListAndWatch, which streams again after a backoff.
#[tokio::test]
async fn list_and_watch_falls_back_to_a_list_at_once_from_v0_29_and_backs_off_on_v0_28() {
    let server_error = || {
        Ok(WatchEvent::Error(ApiStatus {
            code: 500,
            reason: "InternalError".into(),
            message: "boom".into(),
            causes: Vec::new(),
        }))
    };
    for failing in [vec![], vec![server_error()]] {
        let lw = ScriptedListerWatcher::configmaps(vec![
            Reply::Watch(Ok(failing.clone())),
            page(vec![obj("a", "3")], "10", None),
        ]);
        let clock = ManualClock::new();
        let mut m = streaming(lw.clone(), clock.clone(), "1.29");
        let state = m.initial_state();
        run_script(&mut m, &lw, state).await;
        assert_eq!(lists(&lw), [rv("0", Some(500))], "{failing:?}");
        assert!(clock.sleeps().is_empty(), "{failing:?}");

        let lw = ScriptedListerWatcher::configmaps(vec![
            Reply::Watch(Ok(failing.clone())),
            Reply::Watch(Ok(vec![Ok(bookmark("5", true))])),
        ]);
        let clock = ManualClock::new();
        let mut m = streaming(lw.clone(), clock.clone(), "1.28");
        let state = m.initial_state();
        run_script(&mut m, &lw, state).await;
        assert!(lw.lists().is_empty(), "{failing:?}");
        assert_eq!(clock.sleeps().len(), 1, "{failing:?}");
        assert_eq!(watches(&lw)[1], (String::new(), true), "{failing:?}");
    }
}
