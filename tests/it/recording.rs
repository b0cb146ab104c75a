//! Recordings replayed through the real informer (Reflector, DeltaFIFO, controller): the batches a
//! consumer pops for every DeltaFIFO rule a recording can express, the pacing modes, the errors
//! a bad recording gives, and a round trip: record a live Reflector against the fake API server,
//! replay the file, get the same batches.

use crate::support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use kubectl_deltas::Object;
use kubectl_deltas::cache::reflector::BackoffConfig;
use kubectl_deltas::cache::reflector::{Phase, WatchEndReason};
use kubectl_deltas::cache::{
    Batch, Consumption, DeltaFifo, DeltaObject, Indexer, IndexerReader, Informer, InformerConfig,
    InformerError, InformerQueue, InformerSink, ProcessLoop, Reflector, ReflectorConfig,
    ReflectorError, ReflectorEvent, ReflectorEventKind, ReflectorStore,
};
use kubectl_deltas::source::recording::{
    Pace, RecordOptions, RecordedResource, Recorder, RecordingError, RecordingListerWatcher,
    RecordingReader, ReplaySummary,
};
use kubectl_deltas::source::{KubeListerWatcher, client_without_retry};
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use support::fake_apiserver::FakeApiServer;

/// Generous: only there so that a broken test fails instead of hanging.
const PATIENCE: Duration = Duration::from_secs(20);

fn recording(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/recordings")
        .join(name)
}

/// One popped batch as `key: Type@rv Type†@rv` († marks a tombstone), with ` (initial)` for
/// batches of the initial list.
fn show(batch: &Batch<Object>) -> String {
    let mut text = format!("{}:", batch.key.as_deref().unwrap_or("*"));
    for delta in batch.deltas.iter() {
        let (obj, dagger) = match &delta.object {
            DeltaObject::Object(obj) => (Some(obj), ""),
            DeltaObject::Tombstone(t) => (t.obj.as_ref(), "†"),
            // Whole-list deltas come only from an atomic queue, which these tests do not use.
            DeltaObject::List(list) => {
                text.push_str(&format!(" {:?}[{}]", delta.type_, list.objects.len()));
                continue;
            }
        };
        let rv = obj.and_then(|o| o.resource_version()).unwrap_or("?");
        text.push_str(&format!(" {:?}{dagger}@{rv}", delta.type_));
    }
    if batch.is_in_initial_list {
        text.push_str(" (initial)");
    }
    text
}

#[derive(Clone, Copy, Default)]
struct Options {
    legacy_sync: bool,
    /// How long the consumer takes per batch.
    consumer_delay: Option<Duration>,
    speed: Option<f64>,
}

#[derive(Debug)]
struct Replayed {
    batches: Vec<String>,
    events: Vec<ReflectorEvent>,
    /// `None` when the Reflector stopped before the recording ended.
    outcome: Option<Result<ReplaySummary, RecordingError>>,
    reflector: Result<(), ReflectorError>,
    /// Keys in the indexer at the end, sorted.
    cached: Vec<String>,
}

impl Replayed {
    fn event_kinds(&self) -> Vec<&ReflectorEventKind> {
        self.events.iter().map(|e| &e.kind).collect()
    }

    fn summary(&self) -> ReplaySummary {
        match &self.outcome {
            Some(Ok(summary)) => *summary,
            other => panic!("the replay did not end cleanly: {other:?}\n{self:#?}"),
        }
    }
}

/// What the informer of a replay gives: its batches, shown, and its events.
struct Collect {
    batches: Mutex<Vec<String>>,
    events: mpsc::UnboundedSender<ReflectorEvent>,
    /// How long handling a batch takes.
    delay: Option<Duration>,
}

impl InformerSink for Collect {
    fn batch(&self, batch: Batch<Object>, _: SystemTime, _: &dyn InformerQueue<Object>) {
        self.batches.lock().unwrap().push(show(&batch));
        if let Some(delay) = self.delay {
            std::thread::sleep(delay);
        }
    }

    fn event(&self, event: ReflectorEvent, _: &dyn InformerQueue<Object>) {
        let _ = self.events.send(event);
    }
}

/// Replays `reader` as `kubectl deltas replay` does: an [`Informer`] with a DeltaFIFO whose
/// Reflector runs on the replay's clock, drained on the replay's thread at each turn of an
/// instant replay (popping on its own thread at `--speed`), RESYNC lines resyncing it, and the
/// end of the recording stopping the Reflector, after which the queue is drained.
async fn replay_reader(reader: RecordingReader, options: Options) -> Replayed {
    let (tx, mut rx) = mpsc::unbounded_channel::<ReflectorEvent>();
    let sink = Arc::new(Collect {
        batches: Mutex::default(),
        events: tx,
        delay: options.consumer_delay,
    });
    let config = InformerConfig {
        emit_replaced: !options.legacy_sync,
        consumption: match options.speed {
            Some(_) => Consumption::Thread,
            None => Consumption::Inline,
        },
        ..InformerConfig::default()
    };
    let informer = Informer::new(
        config,
        sink.clone(),
        Arc::default(),
        CancellationToken::new(),
    );
    let pace = match options.speed {
        Some(x) => Pace::Speed(x),
        None => Pace::Instant(informer.clone()),
    };
    let lw = RecordingListerWatcher::new(reader, pace)
        .expect("a replayable recording")
        .on_resync(informer.clone());
    let (end, clock) = (lw.end(), lw.clock());
    let config = lw.reflector_config(ReflectorConfig::default());

    let stop = end.clone();
    let run = informer.run(lw, config, clock, async move {
        let _ = stop.wait().await;
    });
    let reflector_result = tokio::time::timeout(PATIENCE, run)
        .await
        .expect("the replay finishes")
        .map_err(|error| match error {
            InformerError::Reflector(error) => error,
            other => panic!("{other}"),
        });
    informer.finish().await;
    assert!(informer.shut_down().await, "the consumer panicked");
    let batches = sink.batches.lock().unwrap().clone();
    let mut events = Vec::new();
    while let Ok(event) = rx.try_recv() {
        events.push(event);
    }
    let mut cached: Vec<String> = informer
        .indexer()
        .entries()
        .into_iter()
        .map(|(k, _)| k.to_string())
        .collect();
    cached.sort();
    Replayed {
        batches,
        events,
        outcome: end.get(),
        reflector: reflector_result,
        cached,
    }
}

/// Replays a file from tests/recordings.
async fn replay_file(name: &str, options: Options) -> Replayed {
    replay_reader(
        RecordingReader::open(&recording(name)).expect("open"),
        options,
    )
    .await
}

async fn replay_text(text: &str, options: Options) -> Replayed {
    let reader = RecordingReader::new("inline.jsonl", std::io::Cursor::new(text.to_owned()))
        .expect("a header or a first line");
    replay_reader(reader, options).await
}

// ---------------------------------------------------------------------------------------------
// DeltaFIFO rules

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_sharing_a_t_coalesce_into_one_batch_per_key() {
    let replayed = replay_file("coalescing.jsonl", Options::default()).await;
    assert_eq!(
        replayed.batches,
        [
            "default/a: Replaced@1 (initial)",
            "default/b: Replaced@1 (initial)",
            // t = 10: three events, two keys, two batches.
            "default/c: Added@2 Updated@3",
            "default/a: Updated@4",
            // t = 20 and t = 30 each on their own.
            "default/c: Updated@5",
            "default/b: Deleted@6",
        ]
    );
    assert_eq!(replayed.cached, ["default/a", "default/c"]);
    assert_eq!(
        replayed.summary(),
        ReplaySummary {
            lines: 6,
            last_t: Duration::from_millis(30),
            pops_differ: None,
        }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_sync_lists_as_sync_deltas() {
    let replayed = replay_file(
        "coalescing.jsonl",
        Options {
            legacy_sync: true,
            ..Options::default()
        },
    )
    .await;
    assert_eq!(
        &replayed.batches[..2],
        ["default/a: Sync@1 (initial)", "default/b: Sync@1 (initial)"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relist_tombstone_for_a_queued_deletion_is_deduplicated() {
    let replayed = replay_file("deletion-dedup.jsonl", Options::default()).await;
    assert_eq!(
        replayed.batches,
        [
            "default/a: Replaced@1 (initial)",
            "default/b: Replaced@1 (initial)",
            // The watch's DELETED and the relist's tombstone for a collapse into the deletion
            // that carries the object's last state.
            "default/a: Deleted@2",
            "default/b: Replaced@1",
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_watch_relists_and_known_keys_missing_from_the_list_get_tombstones() {
    let replayed = replay_file("tombstone-known.jsonl", Options::default()).await;
    assert_eq!(
        replayed.batches,
        [
            "default/a: Replaced@1 (initial)",
            "default/b: Replaced@1 (initial)",
            "default/c: Replaced@1 (initial)",
            "default/a: Updated@2",
            "default/a: Replaced@2",
            "default/b: Deleted†@1",
            "default/c: Deleted†@1",
        ]
    );
    assert_eq!(replayed.cached, ["default/a"]);
    let kinds = replayed.event_kinds();
    assert!(
        kinds.iter().any(|k| matches!(
            k,
            ReflectorEventKind::WatchEnded {
                reason: WatchEndReason::ErrorEvent(s),
                ..
            } if s.code == 410
        )),
        "{kinds:#?}"
    );
    // The relist is at the last synced resourceVersion, as client-go's Reflector does.
    let lists: Vec<&str> = kinds
        .iter()
        .filter_map(|k| match k {
            ReflectorEventKind::ListStarted { resource_version } => Some(resource_version.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(lists, ["0", "2"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relist_in_the_same_t_as_an_add_it_lacks_tombstones_the_queued_key() {
    let replayed = replay_file("tombstone-queued.jsonl", Options::default()).await;
    assert_eq!(
        replayed.batches,
        [
            "default/a: Replaced@1 (initial)",
            "default/d: Added@2 Deleted†@2",
            "default/a: Replaced@1",
        ]
    );
    assert_eq!(replayed.cached, ["default/a"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resync_skips_keys_with_queued_deltas() {
    let replayed = replay_file("resync.jsonl", Options::default()).await;
    assert_eq!(
        replayed.batches,
        [
            "default/a: Replaced@1 (initial)",
            "default/b: Replaced@1 (initial)",
            // t = 10: a is queued when the RESYNC comes, so only b is synced.
            "default/a: Updated@2",
            "default/b: Sync@1",
            // t = 30000: nothing queued, every known key is synced.
            "default/a: Sync@2",
            "default/b: Sync@1",
        ]
    );
    let resyncs: Vec<(usize, SystemTime)> = replayed
        .events
        .iter()
        .filter_map(|e| match e.kind {
            ReflectorEventKind::Resync { keys } => Some((keys, e.at)),
            _ => None,
        })
        .collect();
    let started = SystemTime::from("2026-01-05T10:00:00Z".parse::<jiff::Timestamp>().unwrap());
    assert_eq!(
        resyncs,
        [
            (1, started + Duration::from_millis(10)),
            (2, started + Duration::from_secs(30))
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_an_unknown_object_queues_nothing() {
    let replayed = replay_file("unknown-delete.jsonl", Options::default()).await;
    assert_eq!(
        replayed.batches,
        ["default/a: Replaced@1 (initial)", "default/a: Updated@3"]
    );
}

// ---------------------------------------------------------------------------------------------
// Pacing and time

const HEADER: &str = r#"{"kind":"header","v":1,"resource":{"group":"","version":"v1","kind":"ConfigMap","plural":"configmaps","namespaced":true},"namespace":"default","startedAt":"2026-01-05T10:00:00Z"}"#;

fn started_at() -> SystemTime {
    SystemTime::from("2026-01-05T10:00:00Z".parse::<jiff::Timestamp>().unwrap())
}

/// A watch event line.
fn event(t: u64, type_: &str, name: &str, rv: u64) -> String {
    json!({
        "t": t, "type": type_,
        "object": {"kind": "ConfigMap", "apiVersion": "v1",
                   "metadata": {"name": name, "namespace": "default", "resourceVersion": rv.to_string()}},
    })
    .to_string()
}

/// A LIST line with the given `(name, rv)` items.
fn list(t: u64, rv: u64, items: &[(&str, u64)]) -> String {
    let items: Vec<_> = items
        .iter()
        .map(|(name, rv)| {
            json!({"metadata": {"name": name, "namespace": "default", "resourceVersion": rv.to_string()}})
        })
        .collect();
    json!({"t": t, "type": "LIST", "resourceVersion": rv.to_string(), "items": items}).to_string()
}

fn text(lines: &[String]) -> String {
    let mut text = String::from(HEADER);
    for line in lines {
        text.push('\n');
        text.push_str(line);
    }
    text.push('\n');
    text
}

/// 400 events over 25 keys in irregular `t` groups, some of one event, some of many.
fn busy_recording() -> String {
    let mut lines = vec![list(0, 1, &[("k0", 1), ("k1", 1)])];
    let mut rv = 1;
    let mut t = 0;
    for i in 0..400u64 {
        if i % 7 != 3 {
            t += i % 5;
        }
        rv += 1;
        let name = format!("k{}", (i * 11) % 25);
        let type_ = match i % 13 {
            0 => "DELETED",
            1 | 2 => "ADDED",
            _ => "MODIFIED",
        };
        lines.push(event(t, type_, &name, rv));
        if i % 97 == 50 {
            lines.push(json!({"t": t, "type": "RESYNC"}).to_string());
        }
    }
    text(&lines)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instant_replay_pops_the_same_batches_however_slow_the_consumer() {
    let recording = busy_recording();
    let fast = replay_text(&recording, Options::default()).await;
    assert_eq!(fast.summary().lines, 405);
    let slow = replay_text(
        &recording,
        Options {
            consumer_delay: Some(Duration::from_millis(1)),
            ..Options::default()
        },
    )
    .await;
    assert!(fast.batches.len() > 100, "{}", fast.batches.len());
    assert_eq!(fast.batches, slow.batches);
    assert_eq!(fast.cached, slow.cached);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instant_replay_reports_recorded_time_and_never_sleeps() {
    // Three hours of recording: a watch open for five minutes, an expired watch, a relist.
    let recording = text(&[
        list(0, 1, &[("a", 1)]),
        event(1_000, "MODIFIED", "a", 2),
        json!({"t": 300_000, "type": "WATCH_CLOSED"}).to_string(),
        json!({"t": 10_800_000, "type": "ERROR",
               "object": {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"}})
        .to_string(),
        list(10_800_900, 7, &[("a", 2)]),
    ]);
    let replayed = replay_text(&recording, Options::default()).await;
    assert_eq!(
        replayed.batches,
        [
            "default/a: Replaced@1 (initial)",
            "default/a: Updated@2",
            "default/a: Replaced@2"
        ]
    );
    let ended: Vec<(SystemTime, &WatchEndReason, Duration, u64)> = replayed
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            ReflectorEventKind::WatchEnded {
                reason,
                duration,
                events,
            } => Some((e.at, reason, *duration, *events)),
            _ => None,
        })
        .collect();
    let at = |ms| started_at() + Duration::from_millis(ms);
    assert_eq!(
        ended,
        [
            // Opened after the LIST at t = 0: open for the five recorded minutes.
            (
                at(300_000),
                &WatchEndReason::Closed,
                Duration::from_secs(300),
                1
            ),
            (
                at(10_800_000),
                &WatchEndReason::ErrorEvent(kubectl_deltas::source::ApiStatus {
                    code: 410,
                    reason: "Expired".into(),
                    message: "too old".into(),
                    causes: Vec::new(),
                }),
                Duration::from_millis(10_800_000 - 300_000),
                1
            ),
        ]
    );
    // The backoff before the relist is reported, not waited for.
    assert!(
        replayed.event_kinds().iter().any(|k| matches!(
            k,
            ReflectorEventKind::Backoff {
                phase: Phase::Watch,
                ..
            }
        )),
        "{:#?}",
        replayed.event_kinds()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn speed_replay_hands_out_lines_no_earlier_than_t_divided_by_the_factor() {
    let start = tokio::time::Instant::now();
    // The file's last line is at t = 30 ms; at 0.25× that is 120 ms. Only the lower bound is
    // asserted: a busy machine may hand lines out late, never early.
    let replayed = replay_file(
        "coalescing.jsonl",
        Options {
            speed: Some(0.25),
            ..Options::default()
        },
    )
    .await;
    assert!(
        start.elapsed() >= Duration::from_millis(120),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(replayed.cached, ["default/a", "default/c"]);
    assert_eq!(replayed.summary().lines, 6);
}

// ---------------------------------------------------------------------------------------------
// What the Reflector is told

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_requests_replay_as_the_same_failures() {
    let recording = text(&[
        json!({"t": 0, "type": "ERROR", "request": "list",
               "object": {"kind": "Status", "code": 429, "reason": "TooManyRequests", "message": "slow down"}})
        .to_string(),
        list(900, 1, &[("a", 1)]),
        json!({"t": 950, "type": "ERROR", "request": "watch",
               "error": {"kind": "connect", "message": "connection refused"}})
        .to_string(),
        event(2_000, "ADDED", "c", 2),
    ]);
    let replayed = replay_text(&recording, Options::default()).await;
    assert_eq!(
        replayed.batches,
        ["default/a: Replaced@1 (initial)", "default/c: Added@2"]
    );
    let backoffs: Vec<(Phase, String)> = replayed
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            ReflectorEventKind::Backoff { phase, error, .. } => Some((*phase, error.to_string())),
            _ => None,
        })
        .collect();
    assert_eq!(
        backoffs,
        [
            (
                Phase::List,
                "the API server answered 429 TooManyRequests: slow down".to_owned()
            ),
            (
                Phase::Watch,
                "the API server could not be reached: connection refused".to_owned()
            ),
        ]
    );
    // A refused watch is retried without a relist.
    let lists = replayed
        .event_kinds()
        .iter()
        .filter(|k| matches!(k, ReflectorEventKind::ListDone { .. }))
        .count();
    assert_eq!(lists, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_forbidden_list_stops_the_reflector_as_it_did_live() {
    let recording = text(&[json!({"t": 0, "type": "ERROR", "request": "list",
           "object": {"kind": "Status", "code": 403, "reason": "Forbidden", "message": "no"}})
    .to_string()]);
    let replayed = replay_text(&recording, Options::default()).await;
    let error = replayed.reflector.as_ref().expect_err("terminal");
    assert_eq!(error.verb(), "list");
    assert!(error.source_error().is_auth());
    assert!(replayed.outcome.is_none(), "{:?}", replayed.outcome);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streaming_list_recording_replays_with_a_streaming_list() {
    let bookmark = json!({"t": 3, "type": "BOOKMARK", "object": {"kind": "ConfigMap", "apiVersion": "v1",
        "metadata": {"resourceVersion": "5", "annotations": {"k8s.io/initial-events-end": "true"}}}});
    let recording = text(&[
        event(1, "ADDED", "a", 3),
        event(2, "ADDED", "b", 4),
        bookmark.to_string(),
        event(40, "MODIFIED", "a", 6),
    ]);
    let replayed = replay_text(&recording, Options::default()).await;
    assert_eq!(
        replayed.batches,
        [
            "default/a: Replaced@3 (initial)",
            "default/b: Replaced@4 (initial)",
            "default/a: Updated@6",
        ]
    );
    assert!(replayed.event_kinds().iter().any(|k| matches!(
        k,
        ReflectorEventKind::WatchStarted {
            send_initial_events: true,
            ..
        }
    )));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_headerless_recording_takes_its_resource_from_the_first_typed_object() {
    let with_header = std::fs::read_to_string(recording("coalescing.jsonl")).unwrap();
    let without: String = with_header
        .lines()
        .skip(1)
        .map(|l| format!("{l}\n"))
        .collect();
    let reader = RecordingReader::new("headerless.jsonl", std::io::Cursor::new(without)).unwrap();
    assert!(reader.header().is_none());
    let lw = RecordingListerWatcher::new(reader, Pace::Unpaced).unwrap();
    use kubectl_deltas::source::ListerWatcher;
    assert_eq!(lw.describe().resource(), "configmaps");
    assert_eq!(lw.describe().api_resource.kind, "ConfigMap");

    let replayed = replay_text(
        &with_header
            .lines()
            .skip(1)
            .map(|l| format!("{l}\n"))
            .collect::<String>(),
        Options::default(),
    )
    .await;
    assert_eq!(
        replayed.batches,
        replay_file("coalescing.jsonl", Options::default())
            .await
            .batches
    );

    // A list alone says nothing of its kind.
    let untyped = list(0, 1, &[("a", 1)]) + "\n";
    let reader = RecordingReader::new("untyped.jsonl", std::io::Cursor::new(untyped)).unwrap();
    let error = RecordingListerWatcher::new(reader, Pace::Unpaced).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("untyped.jsonl: the recording has no header and none of its objects"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gzipped_recordings_replay_like_plain_ones() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("coalescing.jsonl.gz");
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&path).unwrap(),
        flate2::Compression::default(),
    );
    gz.write_all(&std::fs::read(recording("coalescing.jsonl")).unwrap())
        .unwrap();
    gz.finish().unwrap();
    let reader = RecordingReader::open(&path).unwrap();
    let replayed = replay_reader(reader, Options::default()).await;
    assert_eq!(
        replayed.batches,
        replay_file("coalescing.jsonl", Options::default())
            .await
            .batches
    );
}

// ---------------------------------------------------------------------------------------------
// Bad recordings

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_that_do_not_fit_the_request_end_the_replay_naming_the_line() {
    let expired = json!({"t": 5, "type": "ERROR",
        "object": {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"}})
    .to_string();
    let cases = [
        (
            vec![list(0, 1, &[("a", 1)]), list(1, 2, &[("a", 1)])],
            vec!["default/a: Replaced@1 (initial)"],
            "inline.jsonl:3: the Reflector opened a watch here, but the recording has a LIST page \
             (expected a watch event, WATCH_CLOSED, or an ERROR line with \"request\": \"watch\")",
        ),
        (
            vec![list(0, 1, &[("a", 1)]), expired, event(9, "ADDED", "b", 2)],
            vec!["default/a: Replaced@1 (initial)"],
            "inline.jsonl:4: the Reflector asked for a list here, but the recording has an ADDED \
             watch event (expected a LIST page, or an ERROR line with \"request\": \"list\")",
        ),
        (
            vec![
                list(0, 1, &[("a", 1)]),
                event(3, "ADDED", "b", 2),
                list(4, 3, &[("a", 1)]),
            ],
            vec!["default/a: Replaced@1 (initial)", "default/b: Added@2"],
            "inline.jsonl:4: the Reflector is reading a watch here, but the recording has a LIST \
             page (expected a watch event (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR) or \
             WATCH_CLOSED)",
        ),
        (
            vec![
                list(0, 1, &[("a", 1)]),
                event(3, "ADDED", "b", 2),
                "{\"t\":4,\"type\":\"MODIFIED\",".to_owned(),
            ],
            // Everything before the bad line is applied and popped, nothing after.
            vec!["default/a: Replaced@1 (initial)", "default/b: Added@2"],
            "inline.jsonl:4: not valid JSON (column 25): EOF while parsing a value",
        ),
        (
            vec![
                list(0, 1, &[("a", 1)]),
                event(3, "ADDED", "b", 2),
                event(2, "ADDED", "c", 3),
            ],
            vec!["default/a: Replaced@1 (initial)", "default/b: Added@2"],
            "inline.jsonl:4: \"t\" is 2, less than the previous line's 3",
        ),
    ];
    for (lines, batches, message) in cases {
        let replayed = replay_text(&text(&lines), Options::default()).await;
        assert_eq!(replayed.batches, batches, "{message}");
        let error = match &replayed.outcome {
            Some(Err(error)) => error,
            other => panic!("expected an error, got {other:?}"),
        };
        assert!(
            error.to_string().starts_with(message),
            "\n got: {error}\nwant: {message}"
        );
        assert!(replayed.reflector.is_ok(), "{:?}", replayed.reflector);
    }
}

// ---------------------------------------------------------------------------------------------
// Record, then replay

/// A live Reflector against the fake API server, recorded: its consumer's batches, and the file.
struct Live {
    server: FakeApiServer,
    fifo: Arc<DeltaFifo<Object>>,
    indexer: IndexerReader<Object>,
    recorder: Recorder,
    batches: Arc<Mutex<Vec<String>>>,
    events: Arc<Mutex<Vec<ReflectorEventKind>>>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<Result<(), ReflectorError>>>,
    consumer: Option<std::thread::JoinHandle<()>>,
}

impl Live {
    async fn start(server: FakeApiServer, path: &Path) -> Live {
        let indexer = Indexer::<Object>::new();
        let fifo = Arc::new(DeltaFifo::new().known_objects(Arc::new(indexer.reader())));
        let client =
            client_without_retry(kube::Config::new(server.url().parse().unwrap())).unwrap();
        let configmaps =
            kube::core::ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&());
        let lw = KubeListerWatcher::new(client, &configmaps, Some("default"));
        let recorder = Recorder::new(
            std::fs::File::create(path).unwrap(),
            RecordedResource::new(&configmaps, true),
            Some("default".into()),
            RecordOptions::default(),
        )
        .unwrap();

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
                sink.lock().unwrap().push(show(&batch));
            }
        });
        let config = ReflectorConfig::default().seed(7).backoff(
            BackoffConfig::default()
                .with_steps(Duration::from_millis(10), Duration::from_millis(100))
                .seeded(7),
        );
        let reflector =
            Reflector::new(recorder.tee(lw), fifo.clone(), config).observer(recorder.observer(tx));
        let (shutdown, stop) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(reflector.run(async {
            let _ = stop.await;
        }));
        Live {
            server,
            fifo,
            indexer,
            recorder,
            batches,
            events,
            shutdown: Some(shutdown),
            task: Some(task),
            consumer: Some(consumer),
        }
    }

    fn cached(&self) -> Vec<(String, u64)> {
        let mut entries: Vec<(String, u64)> = self
            .indexer
            .entries()
            .into_iter()
            .map(|(k, o)| {
                let rv = o.resource_version().unwrap_or("0");
                (k.to_string(), rv.parse().unwrap())
            })
            .collect();
        entries.sort();
        entries
    }

    /// Waits until the consumer has caught up with the server, then a little more, so that the
    /// next change gets a later `t` than everything before.
    async fn caught_up(&self) {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        while !(self.fifo.is_empty() && self.cached() == self.server.objects("configmaps")) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the live consumer did not catch up: {:?} vs {:?}\n{:#?}",
                self.cached(),
                self.server.objects("configmaps"),
                self.events.lock().unwrap()
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        tokio::time::sleep(Duration::from_millis(3)).await;
    }

    async fn stop(mut self) -> Vec<String> {
        let _ = self.shutdown.take().unwrap().send(());
        self.task
            .take()
            .unwrap()
            .await
            .unwrap()
            .expect("clean stop");
        self.fifo.close();
        let consumer = self.consumer.take().unwrap();
        tokio::task::spawn_blocking(move || consumer.join().unwrap())
            .await
            .unwrap();
        assert!(self.recorder.finish().is_some(), "no write failed");
        self.batches.lock().unwrap().clone()
    }
}

fn cm(name: &str, value: &str) -> serde_json::Value {
    json!({"metadata": {"name": name, "namespace": "default"}, "data": {"k": value}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_session_replays_to_the_same_batches() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    let server = FakeApiServer::start().await;
    for name in ["a", "b", "c"] {
        server.create("configmaps", cm(name, "1"));
    }
    let live = Live::start(server, &path).await;
    live.caught_up().await;

    live.server.update("configmaps", cm("a", "2"));
    live.caught_up().await;
    live.server.create("configmaps", cm("d", "1"));
    live.caught_up().await;
    live.server.delete("configmaps", "default", "b");
    live.caught_up().await;

    // A resync while nothing is queued, recorded where it happened.
    let keys = live.fifo.resync();
    live.recorder.resync();
    assert_eq!(keys, 3);
    live.caught_up().await;

    // The server goes away; meanwhile c is deleted and history compacted, so the Reflector
    // fails to re-watch, relists, and learns of the deletion only from a tombstone.
    live.server.refuse_connections(PATIENCE);
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !live
        .events
        .lock()
        .unwrap()
        .iter()
        .any(|e| matches!(e, ReflectorEventKind::WatchEnded { .. }))
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the watch never ended"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    live.server.delete("configmaps", "default", "c");
    live.server.compact();
    live.server.accept_connections();
    live.caught_up().await;
    live.server.update("configmaps", cm("d", "2"));
    live.caught_up().await;

    let live_batches = live.stop().await;
    assert!(
        live_batches
            .iter()
            .any(|b| b.starts_with("default/c: Deleted†")),
        "the scenario produced a tombstone: {live_batches:#?}"
    );
    assert!(
        live_batches
            .iter()
            .any(|b| b.ends_with("Sync@1") || b.contains(" Sync@"))
    );

    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with(r#"{"kind":"header","v":1,"resource":{"group":"","version":"v1","kind":"ConfigMap","plural":"configmaps","namespaced":true},"namespace":"default","startedAt":""#), "{text}");
    for type_ in [
        "\"LIST\"",
        "\"ADDED\"",
        "\"MODIFIED\"",
        "\"DELETED\"",
        "\"RESYNC\"",
    ] {
        assert!(text.contains(type_), "{type_} missing from\n{text}");
    }

    let replayed = replay_reader(RecordingReader::open(&path).unwrap(), Options::default()).await;
    assert!(replayed.reflector.is_ok(), "{:?}", replayed.reflector);
    assert!(
        matches!(replayed.outcome, Some(Ok(_))),
        "{:?}",
        replayed.outcome
    );
    assert_eq!(replayed.batches, live_batches, "recording:\n{text}");
}
