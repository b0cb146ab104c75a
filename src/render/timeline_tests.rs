use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::ApiResource;
use serde_json::json;

use super::*;

use crate::cache::ReflectorStore;
use crate::cache::{DeltaFifo, Indexer, InformerQueue, ProcessLoop, RealFifo};
use crate::render::{Push, StoreCall};

fn pod(name: &str, rv: &str, phase: &str) -> Arc<Object> {
    let ar = ApiResource::erase::<k8s_openapi::api::core::v1::Pod>(&());
    let mut obj = Object::new(name, &ar).within("default");
    obj.meta_mut().resource_version = Some(rv.into());
    obj.meta_mut().uid = Some(format!("uid-{name}"));
    obj.set_field("status", &json!({"phase": phase})).unwrap();
    Arc::new(obj)
}

const T0: Duration = Duration::from_millis(1_700_000_000_250);

fn options() -> TimelineOptions {
    TimelineOptions {
        time_zone: TimeZone::UTC,
        ..TimelineOptions::default()
    }
}

/// Renders every batch `controller`'s queue holds, then returns the text.
fn render<Q: InformerQueue<Object> + ?Sized>(
    controller: &mut ProcessLoop<Object, Q>,
    options: TimelineOptions,
) -> String {
    let mut timeline = Timeline::new(Vec::new(), options);
    while let Some(batch) = controller.try_process_next() {
        let view = BatchView {
            resource: "pods",
            time: SystemTime::UNIX_EPOCH + T0,
            batch: &batch,
        };
        timeline.batch(&view).unwrap();
    }
    String::from_utf8(timeline.into_inner()).unwrap()
}

/// Blanks the wait column, the only part that depends on real time.
fn without_waits(text: &str) -> Vec<String> {
    text.lines()
        .map(|line| {
            line.split("  ")
                .map(|cell| {
                    let t = cell.trim();
                    if t.ends_with("µs") || t.ends_with("ms") {
                        "<wait>"
                    } else {
                        cell
                    }
                })
                .collect::<Vec<_>>()
                .join("  ")
        })
        .collect()
}

#[test]
fn rows_show_time_seq_key_types_rv_wait_initial_and_changes() {
    let indexer = Indexer::new();
    let fifo = Arc::new(DeltaFifo::new().known_objects(Arc::new(indexer.reader())));
    let mut controller = ProcessLoop::new(fifo.clone(), indexer);
    fifo.replace(vec![pod("web-1", "10", "Pending")], "10");
    let initial = render(&mut controller, options());
    fifo.update(pod("web-1", "11", "Pending"));
    fifo.update(pod("web-1", "12", "Running"));
    fifo.update(pod("web-1", "13", "Running"));
    let updated = render(&mut controller, options());
    assert_eq!(
        without_waits(&initial),
        ["22:13:20.250  #1  default/web-1  Replaced  rv 10  <wait>  initial"]
    );
    // Three updates coalesced, in the consumer's second pop; the change is from the state before
    // the first to after the last.
    assert_eq!(
        without_waits(&updated),
        [
            "22:13:20.250  #2  default/web-1  Updated×3  rv 13  <wait>           status.phase Pending→Running"
        ]
    );
}

#[test]
fn sync_without_change_says_so_and_tombstones_are_marked() {
    let mut indexer = Indexer::new();
    indexer.add(pod("gone", "3", "Running"));
    indexer.add(pod("kept", "4", "Running"));
    let fifo = Arc::new(DeltaFifo::new().known_objects(Arc::new(indexer.reader())));
    let mut controller = ProcessLoop::new(fifo.clone(), indexer);
    fifo.resync();
    let synced = render(&mut controller, options());
    assert!(
        synced
            .lines()
            .all(|l| l.contains("Sync") && l.ends_with("no change")),
        "{synced}"
    );

    // A relist that no longer lists `gone`.
    fifo.replace(vec![pod("kept", "4", "Running")], "20");
    let relisted = render(&mut controller, options());
    let rows: Vec<&str> = relisted.lines().collect();
    assert!(
        rows[0].contains("default/kept") && rows[0].contains("Replaced"),
        "{relisted}"
    );
    assert!(rows[0].ends_with("no change"), "{relisted}");
    assert!(
        rows[1].contains("default/gone  Deleted(tombstone)  rv 3"),
        "{relisted}"
    );
}

#[test]
fn colours_only_when_asked_for() {
    let indexer = Indexer::new();
    let fifo = Arc::new(DeltaFifo::new().known_objects(Arc::new(indexer.reader())));
    let mut controller = ProcessLoop::new(fifo.clone(), indexer);
    fifo.add(pod("a", "1", "Pending"));
    let plain = render(&mut controller, options());
    assert!(!plain.contains('\x1b'), "{plain:?}");
    fifo.add(pod("b", "2", "Pending"));
    let coloured = render(
        &mut controller,
        TimelineOptions {
            color: true,
            ..options()
        },
    );
    // Added is green; an empty cell gets no codes.
    assert!(coloured.contains("\x1b[32mAdded\x1b[0m"), "{coloured:?}");
    assert!(!coloured.contains("\x1b[2m\x1b[0m"), "{coloured:?}");
}

#[test]
fn wide_rows_add_uid_generation_owner_and_every_change() {
    let indexer = Indexer::new();
    let fifo = Arc::new(DeltaFifo::new().known_objects(Arc::new(indexer.reader())));
    let mut controller = ProcessLoop::new(fifo.clone(), indexer);
    let ar = ApiResource::erase::<k8s_openapi::api::core::v1::Pod>(&());
    let with_owner = |rv: &str, n: i64| {
        let mut obj = Object::new("web-1", &ar).within("default");
        obj.meta_mut().resource_version = Some(rv.into());
        obj.meta_mut().uid = Some("8d2c".into());
        obj.meta_mut().generation = Some(n);
        obj.meta_mut().owner_references = Some(vec![OwnerReference {
            kind: "ReplicaSet".into(),
            name: "web-7f9".into(),
            controller: Some(true),
            ..OwnerReference::default()
        }]);
        obj.set_field("spec", &json!({"a": n, "b": n, "c": n, "d": n}))
            .unwrap();
        Arc::new(obj)
    };
    fifo.add(with_owner("1", 1));
    render(&mut controller, options());
    fifo.update(with_owner("2", 2));
    let wide = render(
        &mut controller,
        TimelineOptions {
            wide: true,
            ..options()
        },
    );
    assert!(wide.contains("8d2c"), "{wide}");
    assert!(wide.contains("gen 2"), "{wide}");
    assert!(wide.contains("ReplicaSet/web-7f9"), "{wide}");
    assert!(
        wide.contains("spec.d 1→2, metadata.generation 1→2"),
        "{wide}"
    );
    let narrow = render(&mut controller, options());
    assert!(narrow.is_empty());
    fifo.update(with_owner("3", 3));
    let narrow = render(&mut controller, options());
    assert!(
        narrow.ends_with("spec.a 2→3, spec.b 2→3, spec.c 2→3 (+2 more)\n"),
        "{narrow}"
    );
}

#[test]
fn secret_values_stay_out_of_change_summaries() {
    let indexer = Indexer::new();
    let fifo = Arc::new(DeltaFifo::new().known_objects(Arc::new(indexer.reader())));
    let mut controller = ProcessLoop::new(fifo.clone(), indexer);
    let ar = ApiResource::erase::<k8s_openapi::api::core::v1::Secret>(&());
    let secret = |rv: &str, password: &str| {
        let mut obj = Object::new("db", &ar).within("default");
        obj.meta_mut().resource_version = Some(rv.into());
        obj.set_field("data", &json!({"password": password}))
            .unwrap();
        Arc::new(obj)
    };
    fifo.add(secret("1", "b2xk"));
    render(&mut controller, options());
    fifo.update(secret("2", "bmV3"));
    let text = render(&mut controller, options());
    assert!(text.ends_with("data.password <redacted>\n"), "{text}");
    fifo.update(secret("3", "bmV4"));
    let shown = render(
        &mut controller,
        TimelineOptions {
            show_secret_data: true,
            ..options()
        },
    );
    assert!(shown.ends_with("data.password bmV3→bmV4\n"), "{shown}");
}

#[test]
fn events_are_separator_rows_and_bookmarks_need_verbose() {
    let events = [
        ReflectorEventKind::ListDone {
            items: 3,
            pages: 1,
            resource_version: "1003".into(),
            duration: Duration::from_millis(12),
        },
        ReflectorEventKind::Bookmark {
            resource_version: "1010".into(),
            initial_events_end: false,
        },
        ReflectorEventKind::Relist {
            cause: RelistCause::WatchExpired,
        },
        ReflectorEventKind::Resync { keys: 2 },
    ];
    let render_events = |options: TimelineOptions| {
        let mut timeline = Timeline::new(Vec::new(), options);
        for kind in &events {
            timeline
                .event(&EventView {
                    resource: "pods",
                    time: SystemTime::UNIX_EPOCH + T0,
                    event: Event::Reflector(kind),
                })
                .unwrap();
        }
        timeline
            .event(&EventView {
                resource: "pods",
                time: SystemTime::UNIX_EPOCH + T0,
                event: Event::Synced {
                    batches: 3,
                    after: Duration::from_millis(40),
                },
            })
            .unwrap();
        String::from_utf8(timeline.into_inner()).unwrap()
    };
    assert_eq!(
        render_events(options()),
        "22:13:20.250  ── list done: 3 items, 1 page, rv 1003, 12.0ms\n\
         22:13:20.250  ── 410 → relist: the watch's resourceVersion expired\n\
         22:13:20.250  ── resync tick: 2 keys\n\
         22:13:20.250  ── synced: HasSynced after 3 batches, 40.0ms\n"
    );
    let verbose = render_events(TimelineOptions {
        verbose: true,
        show_resource: true,
        ..options()
    });
    assert!(verbose.contains("── pods: bookmark rv 1010\n"), "{verbose}");
}

/// Rows with runs of spaces (column padding) collapsed to one, and waits blanked.
fn squeezed(text: &str) -> Vec<String> {
    text.lines()
        .map(|line| {
            line.split_whitespace()
                .map(|t| {
                    if t.ends_with("µs") || t.ends_with("ms") {
                        "<wait>"
                    } else {
                        t
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

#[test]
fn whole_list_deltas_are_one_row_each_with_their_object_count() {
    let indexer = Indexer::new();
    let queue = Arc::new(RealFifo::atomic());
    queue.replace(
        vec![pod("a", "1", "Pending"), pod("b", "2", "Pending")],
        "2",
    );
    queue.bookmark("5");
    // b was deleted and c created during a watch gap; a did not change.
    queue.replace(
        vec![pod("a", "1", "Pending"), pod("c", "4", "Pending")],
        "6",
    );
    queue.resync();
    let text = render(
        &mut ProcessLoop::new(queue.clone(), indexer).batch_pop(1),
        options(),
    );
    assert_eq!(
        squeezed(&text),
        [
            "22:13:20.250 #1 * ReplacedAll rv 2 <wait> initial 2 objects listed: 2 added",
            "22:13:20.250 #2 * Bookmark rv 5 <wait>",
            "22:13:20.250 #3 * ReplacedAll rv 6 <wait> 2 objects listed: 1 added, 1 unchanged, 1 deleted (tombstone)",
            "22:13:20.250 #4 * SyncAll rv - <wait> 2 objects re-delivered",
        ],
        "{text}"
    );
}

#[test]
fn a_batch_of_several_keys_is_a_row_per_delta_with_its_own_changes() {
    let indexer = Indexer::new();
    let queue = Arc::new(RealFifo::new(Arc::new(indexer.reader())));
    queue.replace(
        vec![pod("a", "1", "Pending"), pod("b", "2", "Pending")],
        "2",
    );
    queue.update(pod("a", "3", "Running"));
    queue.add(pod("c", "4", "Pending"));
    queue.delete(pod("b", "5", "Pending").into());
    let text = render(
        &mut ProcessLoop::new(queue.clone(), indexer).batch_pop(3),
        options(),
    );
    // Rows of one pop share its number; the wait is the batch's, on its first row.
    assert_eq!(
        squeezed(&text),
        [
            "22:13:20.250 #1 default/a Replaced rv 1 <wait> initial",
            "22:13:20.250 #1 default/b Replaced rv 2 initial",
            "22:13:20.250 #2 default/a Updated rv 3 <wait> status.phase Pending→Running",
            "22:13:20.250 #2 default/c Added rv 4",
            "22:13:20.250 #2 default/b Deleted rv 5",
        ],
        "{text}"
    );
}

#[test]
fn the_informer_row_names_the_queue_and_its_pops() {
    let mut timeline = Timeline::new(Vec::new(), options());
    for (queue, batch_pop) in [
        (QueueKind::Delta, 1),
        (QueueKind::Real, 1),
        (QueueKind::Atomic, 10),
    ] {
        timeline
            .event(&EventView {
                resource: "pods",
                time: SystemTime::UNIX_EPOCH + T0,
                event: Event::InformerStarted {
                    queue,
                    batch_pop,
                    profile: None,
                },
            })
            .unwrap();
    }
    let text = String::from_utf8(timeline.into_inner()).unwrap();
    assert_eq!(
        text,
        "22:13:20.250  ── queue: DeltaFIFO, one key per pop\n\
         22:13:20.250  ── queue: RealFIFO (InOrderInformers), one delta per pop\n\
         22:13:20.250  ── queue: RealFIFO, atomic (AtomicFIFO), up to 10 deltas per pop\n"
    );
}

#[test]
fn durations_read_like_a_person_writes_them() {
    assert_eq!(human_duration(Duration::from_micros(350)), "350µs");
    assert_eq!(human_duration(Duration::from_micros(1250)), "1.2ms");
    assert_eq!(human_duration(Duration::from_millis(2010)), "2.01s");
    assert_eq!(human_duration(Duration::from_secs(62)), "1m02s");
    assert_eq!(human_duration(Duration::from_secs(3900)), "1h05m");
}

fn push(seq: u64, objects: Vec<Arc<Object>>, diff: [&[&str]; 3], call: StoreCall) -> Push {
    let keys = |k: &[&str]| k.iter().map(|k| format!("default/{k}")).collect();
    Push {
        seq,
        objects,
        added: keys(diff[0]),
        removed: keys(diff[1]),
        changed: keys(diff[2]),
        call,
        key: (call != StoreCall::Replace).then(|| "default/web-1".to_owned()),
        resource_version: Some(format!("{}", 1000 + seq)),
        initial: seq == 1,
    }
}

/// An UndeltaStore's session: its first line, two pushes, the sync, a resync tick.
fn render_pushes(options: TimelineOptions) -> String {
    let mut timeline = Timeline::new(Vec::new(), options);
    let time = SystemTime::UNIX_EPOCH + T0;
    let event = |event| EventView {
        resource: "pods",
        time,
        event,
    };
    timeline.event(&event(Event::UndeltaStarted)).unwrap();
    let first = push(
        1,
        vec![pod("web-0", "1", "Running"), pod("web-1", "1", "Running")],
        [&["web-0", "web-1"], &[], &[]],
        StoreCall::Replace,
    );
    let view = |push| PushView {
        resource: "pods",
        time,
        push,
    };
    timeline.push(&view(&first)).unwrap();
    let synced = Event::Synced {
        batches: 1,
        after: Duration::from_millis(3),
    };
    timeline.event(&event(synced)).unwrap();
    let second = push(
        12,
        vec![pod("web-1", "12", "Running")],
        [&[], &["web-0"], &["web-1"]],
        StoreCall::Update,
    );
    timeline.push(&view(&second)).unwrap();
    let resync = ReflectorEventKind::Resync { keys: 0 };
    timeline.event(&event(Event::Reflector(&resync))).unwrap();
    String::from_utf8(timeline.into_inner()).unwrap()
}

#[test]
fn an_undelta_store_has_one_row_per_push() {
    assert_eq!(
        render_pushes(options()).lines().collect::<Vec<_>>(),
        [
            "22:13:20.250  ── store: UndeltaStore, the whole list pushed after every change",
            "22:13:20.250  #1  push  2 objects  +2 −0 ~0  replace  rv 1001  initial",
            "22:13:20.250  ── synced: HasSynced after 1 push, 3.0ms",
            "22:13:20.250  #12  push   1 object  +0 −1 ~1  update default/web-1  rv 1012",
            "22:13:20.250  ── resync tick: no push (an UndeltaStore's Resync does nothing)",
        ]
    );
}

#[test]
fn a_wide_push_row_lists_the_keys_it_added_removed_and_changed() {
    let text = render_pushes(TimelineOptions {
        wide: true,
        ..options()
    });
    let rows: Vec<&str> = text.lines().filter(|l| l.contains(" push ")).collect();
    assert!(
        rows[0].ends_with("initial  +default/web-0 +default/web-1"),
        "{text}"
    );
    assert!(rows[1].ends_with("−default/web-0 ~default/web-1"), "{text}");
}
