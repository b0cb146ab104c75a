//! Every hand-written recording in `tests/recordings/` replayed through the real Reflector into
//! each of the three queues (`--fifo delta|real|atomic`), and into the RealFIFOs with batch pops of
//! 3 where that changes what is popped: the batches the consumer pops and what the indexer holds at
//! the end.
//!
//! The expected batches are written from the rules, not captured from a run: DeltaFIFO as in
//! client-go's `tools/cache/delta_fifo.go` (per-key `Deltas`, `dedupDeltas`, deletions of unknown
//! keys dropped, `Replace` queuing `Replaced` then tombstones); RealFIFO as in `the_real_fifo.go`
//! and issue #8 (one delta per pop in arrival order, nothing merged or dropped, `Replace` queuing
//! tombstones for queued keys, then for known keys, then `Replaced`; `PopBatch` taking consecutive
//! deltas of distinct keys, never past the initial population, never with a whole-list delta);
//! atomic as `AtomicEvents` (`ReplacedAll`, `SyncAll`, `Bookmark`). The comment above each case
//! says which rule each batch comes from.
//!
//! That switching queues never changes the final indexer contents for random reflector calls is
//! the property test `cache::queue::tests::every_queue_leaves_the_same_indexer_contents`; here it is
//! checked for every recording, with the contents written out.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use kubectl_deltas::Object;
use kubectl_deltas::cache::{
    Batch, Consumption, Delta, DeltaObject, Informer, InformerConfig, InformerQueue, InformerSink,
    Notification, QueueKind, ReflectorConfig, ReflectorEvent, ReflectorEventKind,
};
use kubectl_deltas::source::recording::{Pace, RecordingListerWatcher, RecordingReader};
use tokio_util::sync::CancellationToken;

/// Generous: only there so that a broken test fails instead of hanging.
const PATIENCE: Duration = Duration::from_secs(20);

fn recordings_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/recordings")
}

// ---------------------------------------------------------------------------------------------
// Rendering

fn rv(obj: Option<&Arc<Object>>) -> &str {
    obj.and_then(|o| o.resource_version()).unwrap_or("?")
}

/// One delta as `Type@rv` († marks a tombstone); a whole-list delta as `Type@rv[n]`, `n` being
/// the objects it carries (none for `SyncAll` and `Bookmark`, and `SyncAll` has no rv).
fn show_delta(delta: &Delta<Object>) -> String {
    match &delta.object {
        DeltaObject::Object(obj) => format!("{}@{}", delta.type_, rv(Some(obj))),
        DeltaObject::Tombstone(t) => format!("{}†@{}", delta.type_, rv(t.obj.as_ref())),
        DeltaObject::List(list) if list.resource_version.is_empty() => {
            format!("{}[{}]", delta.type_, list.objects.len())
        }
        DeltaObject::List(list) => format!(
            "{}@{}[{}]",
            delta.type_,
            list.resource_version,
            list.objects.len()
        ),
    }
}

/// One popped batch as `key: Type@rv Type@rv`, as in `tests/it/recording.rs`; `*` for a batch
/// without a single key: a whole-list delta (`*: ReplacedAll@1[2]`) or a batch pop of several
/// keys, whose deltas then carry their own (`*: [default/a Updated@2] [default/b Added@3]`).
/// ` (initial)` marks batches of the initial list.
fn show(batch: &Batch<Object>) -> String {
    let mut text = format!("{}:", batch.key.as_deref().unwrap_or("*"));
    for delta in batch.deltas.iter() {
        match (&batch.key, delta.key()) {
            (None, Some(key)) => text.push_str(&format!(" [{key} {}]", show_delta(delta))),
            _ => text.push_str(&format!(" {}", show_delta(delta))),
        }
    }
    if batch.is_in_initial_list {
        text.push_str(" (initial)");
    }
    text
}

/// What a batch told the handlers: `add a@1`, `update a@1→2`, `delete c†@1`.
fn show_calls(batch: &Batch<Object>) -> Vec<String> {
    let name = |obj: &Arc<Object>| obj.name().unwrap_or_default().to_owned();
    batch
        .notifications
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

// ---------------------------------------------------------------------------------------------
// Replay

/// A queue as the command line chooses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fifo {
    kind: QueueKind,
    batch_pop: usize,
}

const DELTA: Fifo = Fifo {
    kind: QueueKind::Delta,
    batch_pop: 1,
};
const REAL: Fifo = Fifo {
    kind: QueueKind::Real,
    batch_pop: 1,
};
const REAL_BATCH_3: Fifo = Fifo {
    kind: QueueKind::Real,
    batch_pop: 3,
};
const ATOMIC: Fifo = Fifo {
    kind: QueueKind::Atomic,
    batch_pop: 1,
};
const ATOMIC_BATCH_3: Fifo = Fifo {
    kind: QueueKind::Atomic,
    batch_pop: 3,
};

impl std::fmt::Display for Fifo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "--fifo {}", self.kind)?;
        if self.batch_pop > 1 {
            write!(f, " --batch-pop {}", self.batch_pop)?;
        }
        Ok(())
    }
}

#[derive(Debug, PartialEq)]
struct Replayed {
    batches: Vec<String>,
    /// Every handler call, in order.
    calls: Vec<String>,
    /// What each RESYNC line queued (the `Resync { keys }` the Reflector's observer sees).
    resyncs: Vec<usize>,
    /// The indexer at the end, as `key@rv`, sorted.
    cached: Vec<String>,
}

/// Keeps every batch and event of an informer.
#[derive(Default)]
struct Keep {
    batches: Mutex<Vec<Batch<Object>>>,
    events: Mutex<Vec<ReflectorEvent>>,
}

impl InformerSink for Keep {
    fn batch(&self, batch: Batch<Object>, _: SystemTime, _: &dyn InformerQueue<Object>) {
        self.batches.lock().unwrap().push(batch);
    }

    fn event(&self, event: ReflectorEvent, _: &dyn InformerQueue<Object>) {
        self.events.lock().unwrap().push(event);
    }
}

/// Replays `name` instantly, as `kubectl deltas replay --fifo … --batch-pop …` does: an
/// [`Informer`] whose Reflector runs on the replay's clock, drained into its indexer after each
/// `t` group, RESYNC lines resyncing its queue, and the end of the recording stopping the
/// Reflector, after which the queue is drained.
async fn replay(name: &str, fifo: Fifo, legacy_sync: bool) -> Replayed {
    let reader = RecordingReader::open(&recordings_dir().join(name)).expect("open");
    let keep = Arc::new(Keep::default());
    let config = InformerConfig {
        queue: fifo.kind,
        emit_replaced: !legacy_sync,
        batch_pop: fifo.batch_pop,
        consumption: Consumption::Inline,
        ..InformerConfig::default()
    };
    let informer = Informer::new(
        config,
        keep.clone(),
        Arc::default(),
        CancellationToken::new(),
    );
    let lw = RecordingListerWatcher::new(reader, Pace::Instant(informer.clone()))
        .expect("a replayable recording")
        .on_resync(informer.clone());
    let (end, clock) = (lw.end(), lw.clock());
    let config = lw.reflector_config(ReflectorConfig::default());
    let stop = end.clone();
    let run = informer.run(lw, config, clock, async move {
        let _ = stop.wait().await;
    });
    tokio::time::timeout(PATIENCE, run)
        .await
        .expect("the replay finishes")
        .expect("the Reflector stops cleanly");
    match end.get() {
        Some(Ok(_)) => {}
        other => panic!("{name}: the replay did not end cleanly: {other:?}"),
    }
    informer.finish().await;
    assert!(informer.shut_down().await);

    let seen = std::mem::take(&mut *keep.batches.lock().unwrap());
    let events = std::mem::take(&mut *keep.events.lock().unwrap());
    let indexer = informer.indexer();
    let mut resyncs = Vec::new();
    for event in events {
        if let ReflectorEventKind::Resync { keys } = event.kind {
            resyncs.push(keys);
        }
    }
    Replayed {
        batches: seen.iter().map(show).collect(),
        calls: seen.iter().flat_map(show_calls).collect(),
        resyncs,
        cached: indexer
            .entries()
            .into_iter()
            .map(|(key, obj)| format!("{key}@{}", rv(Some(&obj))))
            .collect(),
    }
}

// ---------------------------------------------------------------------------------------------
// Expectations

/// A recording and what each queue must pop from it.
struct Case {
    recording: &'static str,
    /// `--legacy-sync`: `Sync` instead of `Replaced` for listed objects.
    legacy_sync: bool,
    /// The queues and their batches; always `delta`, `real` and `atomic`.
    expected: &'static [(Fifo, &'static [&'static str])],
    /// What the indexer holds at the end, whatever the queue.
    cached: &'static [&'static str],
}

/// Replays the case through every queue it lists; reports every queue that differs at once.
async fn check(case: &Case) {
    let kinds: Vec<QueueKind> = case.expected.iter().map(|(f, _)| f.kind).collect();
    // The informer queues; the plain FIFO, which leaves deleted objects in the indexer, is
    // `tests/it/other_stores.rs`'s and `tests/it/plain_fifo_cli.rs`'s.
    for kind in [QueueKind::Delta, QueueKind::Real, QueueKind::Atomic] {
        assert!(
            kinds.contains(&kind),
            "{}: no expectation for {kind}",
            case.recording
        );
    }
    let mut failures = Vec::new();
    for &(fifo, batches) in case.expected {
        let replayed = replay(case.recording, fifo, case.legacy_sync).await;
        if replayed.batches != batches {
            failures.push(format!(
                "{fifo}:\n  want {batches:#?}\n   got {:#?}",
                replayed.batches
            ));
        }
        if replayed.cached != case.cached {
            failures.push(format!(
                "{fifo}: the indexer holds {:?}, not {:?}",
                replayed.cached, case.cached
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{}{}:\n{}",
        case.recording,
        if case.legacy_sync {
            " --legacy-sync"
        } else {
            ""
        },
        failures.join("\n")
    );
}

/// ```text
/// t=0   LIST a@1 b@1
/// t=10  ADDED c@2, MODIFIED c@3, MODIFIED a@4
/// t=20  MODIFIED c@5
/// t=30  DELETED b@6
/// ```
const COALESCING: Case = Case {
    recording: "coalescing.jsonl",
    legacy_sync: false,
    expected: &[
        (
            DELTA,
            &[
                "default/a: Replaced@1 (initial)",
                "default/b: Replaced@1 (initial)",
                // One t group: c's two events wait under one key and are popped together.
                "default/c: Added@2 Updated@3",
                "default/a: Updated@4",
                "default/c: Updated@5",
                "default/b: Deleted@6",
            ],
        ),
        (
            REAL,
            &[
                "default/a: Replaced@1 (initial)",
                "default/b: Replaced@1 (initial)",
                // Nothing merged: every event is its own pop, in arrival order.
                "default/c: Added@2",
                "default/c: Updated@3",
                "default/a: Updated@4",
                "default/c: Updated@5",
                "default/b: Deleted@6",
            ],
        ),
        (
            REAL_BATCH_3,
            &[
                // The whole initial population (2 deltas, fewer than 3) in one pop.
                "*: [default/a Replaced@1] [default/b Replaced@1] (initial)",
                // A batch ends before a key it already has: c, then c again starts the next one.
                "default/c: Added@2",
                "*: [default/c Updated@3] [default/a Updated@4]",
                "default/c: Updated@5",
                "default/b: Deleted@6",
            ],
        ),
        (
            ATOMIC,
            &[
                // The list is one delta carrying both objects.
                "*: ReplacedAll@1[2] (initial)",
                "default/c: Added@2",
                "default/c: Updated@3",
                "default/a: Updated@4",
                "default/c: Updated@5",
                "default/b: Deleted@6",
            ],
        ),
    ],
    cached: &["default/a@4", "default/c@5"],
};

/// [`COALESCING`] with `--legacy-sync` (`EmitDeltaTypeReplaced=false`): the listed objects come as
/// `Sync` from the per-object queues; the atomic queue emits `ReplacedAll` regardless.
const LEGACY_SYNC: Case = Case {
    legacy_sync: true,
    expected: &[
        (
            DELTA,
            &[
                "default/a: Sync@1 (initial)",
                "default/b: Sync@1 (initial)",
                "default/c: Added@2 Updated@3",
                "default/a: Updated@4",
                "default/c: Updated@5",
                "default/b: Deleted@6",
            ],
        ),
        (
            REAL,
            &[
                "default/a: Sync@1 (initial)",
                "default/b: Sync@1 (initial)",
                "default/c: Added@2",
                "default/c: Updated@3",
                "default/a: Updated@4",
                "default/c: Updated@5",
                "default/b: Deleted@6",
            ],
        ),
        (
            ATOMIC,
            &[
                "*: ReplacedAll@1[2] (initial)",
                "default/c: Added@2",
                "default/c: Updated@3",
                "default/a: Updated@4",
                "default/c: Updated@5",
                "default/b: Deleted@6",
            ],
        ),
    ],
    ..COALESCING
};

/// ```text
/// t=0   LIST a@1 b@1
/// t=10  DELETED a@2, ERROR 410, LIST b@1
/// ```
/// The relist lacks a, whose deletion is still queued. The DeltaFIFO queues a tombstone and
/// `dedupDeltas` folds it into the deletion (the older one is kept unless it is the tombstone);
/// the RealFIFO queues no tombstone for a key whose newest queued delta is already a deletion, and
/// none for a as a known key either, since a is queued. Same batches, different rules.
const DELETION_DEDUP: Case = Case {
    recording: "deletion-dedup.jsonl",
    legacy_sync: false,
    expected: &[
        (
            DELTA,
            &[
                "default/a: Replaced@1 (initial)",
                "default/b: Replaced@1 (initial)",
                "default/a: Deleted@2",
                "default/b: Replaced@1",
            ],
        ),
        (
            REAL,
            &[
                "default/a: Replaced@1 (initial)",
                "default/b: Replaced@1 (initial)",
                "default/a: Deleted@2",
                "default/b: Replaced@1",
            ],
        ),
        (
            REAL_BATCH_3,
            &[
                "*: [default/a Replaced@1] [default/b Replaced@1] (initial)",
                "*: [default/a Deleted@2] [default/b Replaced@1]",
            ],
        ),
        (
            ATOMIC,
            &[
                "*: ReplacedAll@1[2] (initial)",
                "default/a: Deleted@2",
                "*: ReplacedAll@2[1]",
            ],
        ),
    ],
    cached: &["default/b@1"],
};

/// ```text
/// t=0   LIST a@1 b@1 c@1
/// t=10  DELETED a@2, DELETED a@3
/// t=20  ERROR 410, LIST c@1, DELETED b@4
/// ```
/// A deletion delivered twice ("re-listing and watching can deliver the same update multiple
/// times", says client-go's `dedupDeltas`), and a relist tombstone for b followed by the watch's
/// deletion of b. The DeltaFIFO keeps one deletion of each pair: the older of two plain ones, the
/// plain one over a tombstone. The RealFIFO delivers all four.
const DELETION_REPEATED: Case = Case {
    recording: "deletion-repeated.jsonl",
    legacy_sync: false,
    expected: &[
        (
            DELTA,
            &[
                "default/a: Replaced@1 (initial)",
                "default/b: Replaced@1 (initial)",
                "default/c: Replaced@1 (initial)",
                "default/a: Deleted@2",
                // Replace queues c's Replaced first, then the tombstone for b (known, not
                // listed), which the watch's deletion then replaces.
                "default/c: Replaced@1",
                "default/b: Deleted@4",
            ],
        ),
        (
            REAL,
            &[
                "default/a: Replaced@1 (initial)",
                "default/b: Replaced@1 (initial)",
                "default/c: Replaced@1 (initial)",
                "default/a: Deleted@2",
                "default/a: Deleted@3",
                // Tombstones before the Replaced deltas of the same relist.
                "default/b: Deleted†@1",
                "default/c: Replaced@1",
                "default/b: Deleted@4",
            ],
        ),
        (
            REAL_BATCH_3,
            &[
                "*: [default/a Replaced@1] [default/b Replaced@1] [default/c Replaced@1] (initial)",
                // Two deltas of one key never share a pop.
                "default/a: Deleted@2",
                "default/a: Deleted@3",
                "*: [default/b Deleted†@1] [default/c Replaced@1]",
                "default/b: Deleted@4",
            ],
        ),
        (
            ATOMIC,
            &[
                "*: ReplacedAll@1[3] (initial)",
                "default/a: Deleted@2",
                "default/a: Deleted@3",
                "*: ReplacedAll@4[1]",
                "default/b: Deleted@4",
            ],
        ),
    ],
    cached: &["default/c@1"],
};

/// ```text
/// t=0      LIST a@1 b@1 c@1
/// t=10     MODIFIED a@2
/// t=60000  ERROR 410
/// t=60812  LIST a@2
/// ```
/// Nothing is queued when the relist comes: b and c are known and not listed.
const TOMBSTONE_KNOWN: Case = Case {
    recording: "tombstone-known.jsonl",
    legacy_sync: false,
    expected: &[
        (
            DELTA,
            &[
                "default/a: Replaced@1 (initial)",
                "default/b: Replaced@1 (initial)",
                "default/c: Replaced@1 (initial)",
                "default/a: Updated@2",
                // DeltaFIFO's Replace: the Replaced deltas, then the tombstones.
                "default/a: Replaced@2",
                "default/b: Deleted†@1",
                "default/c: Deleted†@1",
            ],
        ),
        (
            REAL,
            &[
                "default/a: Replaced@1 (initial)",
                "default/b: Replaced@1 (initial)",
                "default/c: Replaced@1 (initial)",
                "default/a: Updated@2",
                // RealFIFO's Replace: the tombstones, carrying the known objects, then Replaced.
                "default/b: Deleted†@1",
                "default/c: Deleted†@1",
                "default/a: Replaced@2",
            ],
        ),
        (
            REAL_BATCH_3,
            &[
                "*: [default/a Replaced@1] [default/b Replaced@1] [default/c Replaced@1] (initial)",
                "default/a: Updated@2",
                "*: [default/b Deleted†@1] [default/c Deleted†@1] [default/a Replaced@2]",
            ],
        ),
        (
            ATOMIC,
            &[
                "*: ReplacedAll@1[3] (initial)",
                "default/a: Updated@2",
                // No tombstones: the consumer works the deletions out from its indexer.
                "*: ReplacedAll@9[1]",
            ],
        ),
    ],
    cached: &["default/a@2"],
};

/// ```text
/// t=0   LIST a@1
/// t=10  ADDED d@2, ERROR 410, LIST a@1
/// ```
/// d is queued, not known, and absent from the relist: its tombstone carries the queued object.
const TOMBSTONE_QUEUED: Case = Case {
    recording: "tombstone-queued.jsonl",
    legacy_sync: false,
    expected: &[
        (
            DELTA,
            &[
                "default/a: Replaced@1 (initial)",
                "default/d: Added@2 Deleted†@2",
                "default/a: Replaced@1",
            ],
        ),
        (
            REAL,
            &[
                "default/a: Replaced@1 (initial)",
                "default/d: Added@2",
                "default/d: Deleted†@2",
                "default/a: Replaced@1",
            ],
        ),
        (
            REAL_BATCH_3,
            &[
                "default/a: Replaced@1 (initial)",
                "default/d: Added@2",
                "*: [default/d Deleted†@2] [default/a Replaced@1]",
            ],
        ),
        (
            ATOMIC,
            &[
                "*: ReplacedAll@1[1] (initial)",
                "default/d: Added@2",
                "*: ReplacedAll@3[1]",
            ],
        ),
    ],
    cached: &["default/a@1"],
};

/// ```text
/// t=0   LIST a@1 b@1 c@1
/// t=10  MODIFIED a@2, ADDED d@3, DELETED b@4, MODIFIED a@5, ERROR 410, LIST a@5 e@6
/// ```
/// Everything of t=10 is still queued at the relist; the indexer holds a@1 b@1 c@1. Absent from
/// the list: d (queued, newest delta Added), b (queued, newest delta a deletion), c (known only).
const TOMBSTONE_ORDER: Case = Case {
    recording: "tombstone-order.jsonl",
    legacy_sync: false,
    expected: &[
        (
            DELTA,
            &[
                "default/a: Replaced@1 (initial)",
                "default/b: Replaced@1 (initial)",
                "default/c: Replaced@1 (initial)",
                // Keys pop in the order they were first queued: a, d, b from the watch, then e
                // (listed) and c (tombstone) from the relist.
                "default/a: Updated@2 Updated@5 Replaced@5",
                "default/d: Added@3 Deleted†@3",
                // b's tombstone deduplicated into the watch's deletion.
                "default/b: Deleted@4",
                "default/e: Replaced@6",
                "default/c: Deleted†@1",
            ],
        ),
        (
            REAL,
            &[
                "default/a: Replaced@1 (initial)",
                "default/b: Replaced@1 (initial)",
                "default/c: Replaced@1 (initial)",
                "default/a: Updated@2",
                "default/d: Added@3",
                "default/b: Deleted@4",
                "default/a: Updated@5",
                // The relist: tombstones for queued keys (d; none for b, already deleted), then
                // for known keys with nothing queued (c), then Replaced per listed object.
                "default/d: Deleted†@3",
                "default/c: Deleted†@1",
                "default/a: Replaced@5",
                "default/e: Replaced@6",
            ],
        ),
        (
            REAL_BATCH_3,
            &[
                "*: [default/a Replaced@1] [default/b Replaced@1] [default/c Replaced@1] (initial)",
                "*: [default/a Updated@2] [default/d Added@3] [default/b Deleted@4]",
                "*: [default/a Updated@5] [default/d Deleted†@3] [default/c Deleted†@1]",
                "*: [default/a Replaced@5] [default/e Replaced@6]",
            ],
        ),
        (
            ATOMIC,
            &[
                "*: ReplacedAll@1[3] (initial)",
                "default/a: Updated@2",
                "default/d: Added@3",
                "default/b: Deleted@4",
                "default/a: Updated@5",
                "*: ReplacedAll@7[2]",
            ],
        ),
        (
            ATOMIC_BATCH_3,
            &[
                "*: ReplacedAll@1[3] (initial)",
                // Cut before a's second delta, then before the whole-list delta.
                "*: [default/a Updated@2] [default/d Added@3] [default/b Deleted@4]",
                "default/a: Updated@5",
                "*: ReplacedAll@7[2]",
            ],
        ),
    ],
    cached: &["default/a@5", "default/e@6"],
};

/// ```text
/// t=0      LIST a@1 b@1
/// t=10     MODIFIED a@2, RESYNC
/// t=30000  RESYNC
/// ```
/// A resync skips keys with something queued (their known object is older than what is queued).
const RESYNC: Case = Case {
    recording: "resync.jsonl",
    legacy_sync: false,
    expected: &[
        (
            DELTA,
            &[
                "default/a: Replaced@1 (initial)",
                "default/b: Replaced@1 (initial)",
                "default/a: Updated@2",
                "default/b: Sync@1",
                "default/a: Sync@2",
                "default/b: Sync@1",
            ],
        ),
        (
            REAL,
            &[
                "default/a: Replaced@1 (initial)",
                "default/b: Replaced@1 (initial)",
                "default/a: Updated@2",
                "default/b: Sync@1",
                "default/a: Sync@2",
                "default/b: Sync@1",
            ],
        ),
        (
            REAL_BATCH_3,
            &[
                "*: [default/a Replaced@1] [default/b Replaced@1] (initial)",
                "*: [default/a Updated@2] [default/b Sync@1]",
                "*: [default/a Sync@2] [default/b Sync@1]",
            ],
        ),
        (
            ATOMIC,
            &[
                "*: ReplacedAll@1[2] (initial)",
                "default/a: Updated@2",
                // One SyncAll per resync, whatever is queued: the consumer re-delivers its cache.
                "*: SyncAll[0]",
                "*: SyncAll[0]",
            ],
        ),
    ],
    cached: &["default/a@2", "default/b@1"],
};

/// ```text
/// t=0   LIST a@1
/// t=10  DELETED z@2
/// t=20  MODIFIED a@3
/// ```
/// z was never seen: the DeltaFIFO drops its deletion, the RealFIFO does not second-guess the watch.
const UNKNOWN_DELETE: Case = Case {
    recording: "unknown-delete.jsonl",
    legacy_sync: false,
    expected: &[
        (
            DELTA,
            &["default/a: Replaced@1 (initial)", "default/a: Updated@3"],
        ),
        (
            REAL,
            &[
                "default/a: Replaced@1 (initial)",
                "default/z: Deleted@2",
                "default/a: Updated@3",
            ],
        ),
        (
            ATOMIC,
            &[
                "*: ReplacedAll@1[1] (initial)",
                "default/z: Deleted@2",
                "default/a: Updated@3",
            ],
        ),
    ],
    cached: &["default/a@3"],
};

/// ```text
/// t=0   LIST a@1 c@1
/// t=10  MODIFIED a@2, BOOKMARK 3, ADDED b@4, MODIFIED c@5
/// ```
/// Only the atomic queue turns the bookmark into a delta, and a batch pop never takes a whole-list
/// delta with others: it ends the batch before it.
const BOOKMARK: Case = Case {
    recording: "bookmark.jsonl",
    legacy_sync: false,
    expected: &[
        (
            DELTA,
            &[
                "default/a: Replaced@1 (initial)",
                "default/c: Replaced@1 (initial)",
                "default/a: Updated@2",
                "default/b: Added@4",
                "default/c: Updated@5",
            ],
        ),
        (
            REAL,
            &[
                "default/a: Replaced@1 (initial)",
                "default/c: Replaced@1 (initial)",
                "default/a: Updated@2",
                "default/b: Added@4",
                "default/c: Updated@5",
            ],
        ),
        (
            REAL_BATCH_3,
            &[
                "*: [default/a Replaced@1] [default/c Replaced@1] (initial)",
                "*: [default/a Updated@2] [default/b Added@4] [default/c Updated@5]",
            ],
        ),
        (
            ATOMIC,
            &[
                "*: ReplacedAll@1[2] (initial)",
                "default/a: Updated@2",
                "*: Bookmark@3[0]",
                "default/b: Added@4",
                "default/c: Updated@5",
            ],
        ),
        (
            ATOMIC_BATCH_3,
            &[
                "*: ReplacedAll@1[2] (initial)",
                "default/a: Updated@2",
                "*: Bookmark@3[0]",
                "*: [default/b Added@4] [default/c Updated@5]",
            ],
        ),
    ],
    cached: &["default/a@2", "default/b@4", "default/c@5"],
};

/// ```text
/// t=0   LIST a@1 b@1, ADDED c@2, MODIFIED a@3
/// ```
/// Watch events in the same `t` as the initial list are queued before the consumer pops anything,
/// but are not part of the initial list: the initial population is what the first `replace`
/// queued (keys for the DeltaFIFO, deltas for the RealFIFO), and a batch pop stops at its end.
const INITIAL_LIST_END: Case = Case {
    recording: "initial-list-end.jsonl",
    legacy_sync: false,
    expected: &[
        (
            DELTA,
            &[
                // a is still queued when its update comes: it joins a's initial batch.
                "default/a: Replaced@1 Updated@3 (initial)",
                "default/b: Replaced@1 (initial)",
                "default/c: Added@2",
            ],
        ),
        (
            REAL,
            &[
                "default/a: Replaced@1 (initial)",
                "default/b: Replaced@1 (initial)",
                "default/c: Added@2",
                "default/a: Updated@3",
            ],
        ),
        (
            REAL_BATCH_3,
            &[
                // Room for a third delta, but c is not in the initial population.
                "*: [default/a Replaced@1] [default/b Replaced@1] (initial)",
                "*: [default/c Added@2] [default/a Updated@3]",
            ],
        ),
        (
            ATOMIC,
            &[
                "*: ReplacedAll@1[2] (initial)",
                "default/c: Added@2",
                "default/a: Updated@3",
            ],
        ),
        (
            ATOMIC_BATCH_3,
            &[
                "*: ReplacedAll@1[2] (initial)",
                "*: [default/c Added@2] [default/a Updated@3]",
            ],
        ),
    ],
    cached: &["default/a@3", "default/b@1", "default/c@2"],
};

const CASES: [&Case; 11] = [
    &COALESCING,
    &LEGACY_SYNC,
    &DELETION_DEDUP,
    &DELETION_REPEATED,
    &TOMBSTONE_KNOWN,
    &TOMBSTONE_QUEUED,
    &TOMBSTONE_ORDER,
    &RESYNC,
    &UNKNOWN_DELETE,
    &BOOKMARK,
    &INITIAL_LIST_END,
];

// ---------------------------------------------------------------------------------------------
// Tests

#[test]
fn every_recording_has_expectations_for_every_queue() {
    let mut files: Vec<String> = std::fs::read_dir(recordings_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".jsonl"))
        .collect();
    files.sort();
    let mut covered: Vec<String> = CASES
        .iter()
        .filter(|c| !c.legacy_sync)
        .map(|c| c.recording.to_owned())
        .collect();
    covered.sort();
    assert_eq!(files, covered);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coalescing_merges_only_in_the_delta_fifo() {
    check(&COALESCING).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_sync_turns_replaced_into_sync_except_in_the_atomic_queue() {
    check(&LEGACY_SYNC).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_deletion_gets_no_relist_tombstone_in_any_queue() {
    check(&DELETION_DEDUP).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_deletions_are_deduplicated_only_by_the_delta_fifo() {
    check(&DELETION_REPEATED).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn known_keys_missing_from_a_relist_get_tombstones_except_in_the_atomic_queue() {
    check(&TOMBSTONE_KNOWN).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_key_missing_from_a_relist_gets_a_tombstone_carrying_its_queued_object() {
    check(&TOMBSTONE_QUEUED).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_fifo_relist_queues_queued_then_known_tombstones_then_replaced() {
    check(&TOMBSTONE_ORDER).await;
    // docs/queues.md shows this recording's `--batch-pop 3` pops as those of client-go's default
    // batch size: every batch here ends at a repeated key or a whole-list delta before 3.
    for fifo in [REAL_BATCH_3, ATOMIC_BATCH_3] {
        let default_size = Fifo {
            batch_pop: 1000,
            ..fifo
        };
        assert_eq!(
            replay("tombstone-order.jsonl", default_size, false)
                .await
                .batches,
            replay("tombstone-order.jsonl", fifo, false).await.batches,
            "{default_size}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resync_syncs_known_keys_with_nothing_queued_or_queues_one_sync_all() {
    check(&RESYNC).await;
    // What each RESYNC line queued, as `watch -o jsonl` reports it: one Sync per key with
    // nothing queued (b; then a and b), or one SyncAll.
    for (fifo, resyncs) in [(DELTA, [1, 2]), (REAL, [1, 2]), (ATOMIC, [1, 1])] {
        let replayed = replay("resync.jsonl", fifo, false).await;
        assert_eq!(replayed.resyncs, resyncs, "{fifo}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_an_unknown_object_is_delivered_by_the_real_fifos_only() {
    check(&UNKNOWN_DELETE).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_queued_with_the_initial_list_are_not_part_of_it() {
    check(&INITIAL_LIST_END).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bookmarks_are_deltas_of_the_atomic_queue_only_and_end_a_batch() {
    check(&BOOKMARK).await;
}

/// The handler calls behind [`TOMBSTONE_ORDER`]'s batches: the atomic queue's `ReplacedAll` tells
/// the handlers what the RealFIFO's tombstones and `Replaced` deltas tell them (deletions in key
/// order rather than queue order), and the DeltaFIFO's merged batch replays a's three changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_queue_tells_the_handlers_about_the_same_relist() {
    let initial = ["add a@1", "add b@1", "add c@1"];
    let expected: [(Fifo, &[&str]); 3] = [
        (
            DELTA,
            &[
                "update a@1→2",
                "update a@2→5",
                "update a@5→5",
                "add d@3",
                "delete d†@3",
                "delete b@4",
                "add e@6",
                "delete c†@1",
            ],
        ),
        (
            REAL,
            &[
                "update a@1→2",
                "add d@3",
                "delete b@4",
                "update a@2→5",
                "delete d†@3",
                "delete c†@1",
                "update a@5→5",
                "add e@6",
            ],
        ),
        (
            ATOMIC,
            &[
                "update a@1→2",
                "add d@3",
                "delete b@4",
                "update a@2→5",
                "delete c†@1",
                "delete d†@3",
                "update a@5→5",
                "add e@6",
            ],
        ),
    ];
    for (fifo, after) in expected {
        let replayed = replay("tombstone-order.jsonl", fifo, false).await;
        let want: Vec<&str> = initial.iter().chain(after).copied().collect();
        assert_eq!(replayed.calls, want, "{fifo}");
    }
}
