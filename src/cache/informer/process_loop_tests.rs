//! processDeltas and the consumer loop.

use std::ops::ControlFlow;
use std::sync::Arc;

use crate::object::Object;

use super::*;

use crate::cache::ReflectorStore;
use crate::cache::test_objects::{cm, rv};
use crate::cache::{
    DeletedFinalStateUnknown, Delta, DeltaObject, DeltaType, IndexerReader, ListInfo, QueueKind,
    RealFifo,
};

/// Records handler calls as compact strings.
#[derive(Default)]
struct Log(Vec<String>);

impl ResourceEventHandler<Object> for Log {
    fn on_add(&mut self, obj: &Arc<Object>, initial: bool) {
        self.0.push(format!("add {} initial={initial}", rv(obj)));
    }
    fn on_update(&mut self, old: &Arc<Object>, new: &Arc<Object>) {
        self.0.push(format!("update {}->{}", rv(old), rv(new)));
    }
    fn on_delete(&mut self, obj: &DeltaObject<Object>) {
        let tombstone = if obj.is_tombstone() { " tombstone" } else { "" };
        self.0.push(format!(
            "delete {}{tombstone}",
            obj.object().map_or(0, |o| rv(o))
        ));
    }
}

fn deltas(list: Vec<Delta<Object>>) -> Deltas<Object> {
    Deltas::new(list)
}

#[test]
fn add_like_deltas_add_a_missing_object_and_update_a_present_one() {
    for type_ in [
        DeltaType::Added,
        DeltaType::Updated,
        DeltaType::Replaced,
        DeltaType::Sync,
    ] {
        let mut store = Indexer::new();
        let mut log = Log::default();
        process_deltas(
            &mut log,
            &mut store,
            &deltas(vec![Delta::new(type_, cm("ns", "a", 1))]),
            true,
        );
        process_deltas(
            &mut log,
            &mut store,
            &deltas(vec![Delta::new(type_, cm("ns", "a", 2))]),
            false,
        );
        assert_eq!(log.0, ["add 1 initial=true", "update 1->2"], "{type_}");
        assert_eq!(store.get_by_key("ns/a").map(|o| rv(&o)), Some(2));
    }
}

#[test]
fn deltas_apply_oldest_to_newest() {
    let mut store = Indexer::new();
    let mut log = Log::default();
    let batch = deltas(vec![
        Delta::new(DeltaType::Added, cm("ns", "a", 1)),
        Delta::new(DeltaType::Updated, cm("ns", "a", 2)),
        Delta::new(DeltaType::Deleted, cm("ns", "a", 2)),
        Delta::new(DeltaType::Added, cm("ns", "a", 3)),
    ]);
    process_deltas(&mut log, &mut store, &batch, false);
    assert_eq!(
        log.0,
        [
            "add 1 initial=false",
            "update 1->2",
            "delete 2",
            "add 3 initial=false"
        ]
    );
    assert_eq!(store.get_by_key("ns/a").map(|o| rv(&o)), Some(3));
}

#[test]
fn deleted_removes_the_object_and_passes_tombstones_through() {
    let mut store = Indexer::new();
    store.add(cm("ns", "a", 1));
    let mut log = Log::default();
    let tombstone = DeletedFinalStateUnknown {
        key: "ns/a".into(),
        obj: Some(cm("ns", "a", 1)),
    };
    process_deltas(
        &mut log,
        &mut store,
        &deltas(vec![Delta::new(DeltaType::Deleted, tombstone)]),
        false,
    );
    assert_eq!(log.0, ["delete 1 tombstone"]);
    assert!(store.is_empty());
}

#[test]
fn controller_applies_the_initial_list_then_a_relist_with_tombstones() {
    let indexer = Indexer::new();
    let fifo = Arc::new(DeltaFifo::new().known_objects(Arc::new(indexer.reader())));
    let mut controller = ProcessLoop::new(fifo.clone(), indexer);
    let indexer = controller.indexer().clone();

    fifo.replace(vec![cm("ns", "a", 1), cm("ns", "b", 2)], "2");
    let mut seen = Vec::new();
    while !fifo.has_synced() {
        let batch = controller.process_next().unwrap();
        seen.push((
            batch.seq,
            batch.key.as_deref().unwrap_or_default().to_string(),
            batch.is_in_initial_list,
            batch.queue_len,
        ));
    }
    assert_eq!(
        seen,
        [(1, "ns/a".into(), true, 1), (2, "ns/b".into(), true, 0)]
    );
    assert_eq!(indexer.len(), 2);

    // A relist that no longer has `b`: its deletion was missed, the relist reports it.
    fifo.replace(vec![cm("ns", "a", 3)], "5");
    fifo.close();
    let mut log = Log::default();
    controller.run(&mut |batch: &Batch<Object>| {
        batch.dispatch(&mut log);
        ControlFlow::Continue(())
    });
    assert_eq!(log.0, ["update 1->3", "delete 2 tombstone"]);
    assert_eq!(indexer.list_keys().len(), 1);
    assert_eq!(controller.consumer_group().popped_so_far(), 4);
}

#[test]
fn run_stops_when_the_handler_breaks() {
    let indexer = Indexer::new();
    let fifo = Arc::new(DeltaFifo::new().known_objects(Arc::new(indexer.reader())));
    let mut controller = ProcessLoop::new(fifo.clone(), indexer);
    for n in 0..3 {
        fifo.add(cm("ns", &format!("o{n}"), n));
    }
    controller.run(&mut |_: &Batch<Object>| ControlFlow::Break(()));
    assert_eq!(
        (controller.consumer_group().popped_so_far(), fifo.len()),
        (1, 2)
    );
}

fn whole_list(type_: DeltaType, rv: &str, objects: Vec<Arc<Object>>) -> Delta<Object> {
    Delta::new(
        type_,
        ListInfo {
            resource_version: rv.into(),
            objects,
        },
    )
}

fn cached(store: &IndexerReader<Object>) -> Vec<(String, u64)> {
    store
        .entries()
        .into_iter()
        .map(|(k, o)| (k.to_string(), rv(&o)))
        .collect()
}

#[test]
fn replaced_all_replaces_the_store_then_reports_deletions_then_adds_and_updates_in_list_order() {
    let mut store = Indexer::new();
    for (name, rv) in [("a", 1), ("b", 2), ("c", 3)] {
        store.add(cm("ns", name, rv));
    }
    let mut log = Log::default();
    let list = vec![cm("ns", "d", 5), cm("ns", "a", 4)];
    process_deltas(
        &mut log,
        &mut store,
        &deltas(vec![whole_list(DeltaType::ReplacedAll, "9", list)]),
        true,
    );
    assert_eq!(
        log.0,
        [
            "delete 2 tombstone",
            "delete 3 tombstone",
            "add 5 initial=true",
            "update 1->4"
        ]
    );
    assert_eq!(cached(&store), [("ns/a".into(), 4), ("ns/d".into(), 5)]);
}

#[test]
fn replaced_all_handlers_see_a_store_that_already_holds_the_list() {
    struct Probe(IndexerReader<Object>, Vec<usize>);
    impl ResourceEventHandler<Object> for Probe {
        fn on_add(&mut self, _: &Arc<Object>, _: bool) {
            self.1.push(self.0.len());
        }
        fn on_update(&mut self, _: &Arc<Object>, _: &Arc<Object>) {}
        fn on_delete(&mut self, _: &DeltaObject<Object>) {
            self.1.push(self.0.len());
        }
    }
    let mut store = Indexer::new();
    store.add(cm("ns", "gone", 1));
    let mut probe = Probe(store.reader(), Vec::new());
    let list = vec![cm("ns", "a", 2), cm("ns", "b", 3)];
    process_deltas(
        &mut probe,
        &mut store,
        &deltas(vec![whole_list(DeltaType::ReplacedAll, "9", list)]),
        false,
    );
    assert_eq!(probe.1, [2, 2, 2]);
}

#[test]
fn sync_all_reports_an_update_of_every_stored_object_to_itself_in_key_order() {
    let mut store = Indexer::new();
    store.add(cm("ns", "b", 2));
    store.add(cm("ns", "a", 1));
    let mut log = Log::default();
    process_deltas(
        &mut log,
        &mut store,
        &deltas(vec![whole_list(DeltaType::SyncAll, "", vec![])]),
        false,
    );
    assert_eq!(log.0, ["update 1->1", "update 2->2"]);
    assert_eq!(store.len(), 2);
}

#[test]
fn bookmark_changes_nothing_and_calls_no_handler() {
    let mut store = Indexer::new();
    store.add(cm("ns", "a", 1));
    let mut log = Log::default();
    process_deltas(
        &mut log,
        &mut store,
        &deltas(vec![whole_list(DeltaType::Bookmark, "7", vec![])]),
        false,
    );
    assert!(log.0.is_empty());
    assert_eq!(cached(&store), [("ns/a".into(), 1)]);
}

#[test]
fn a_delta_whose_type_and_payload_disagree_is_skipped() {
    let mut store = Indexer::new();
    store.add(cm("ns", "a", 1));
    let mut log = Log::default();
    let batch = deltas(vec![
        whole_list(DeltaType::Deleted, "7", vec![cm("ns", "a", 2)]),
        whole_list(DeltaType::Added, "7", vec![cm("ns", "b", 3)]),
        Delta::new(DeltaType::ReplacedAll, cm("ns", "c", 4)),
    ]);
    process_deltas(&mut log, &mut store, &batch, false);
    assert!(log.0.is_empty());
    assert_eq!(cached(&store), [("ns/a".into(), 1)]);
}

#[test]
fn controller_pops_a_queue_chosen_at_run_time_one_delta_at_a_time() {
    let indexer = Indexer::new();
    let fifo = QueueKind::Real.build(Arc::new(indexer.reader()), true);
    let mut controller = ProcessLoop::new(fifo.clone(), indexer);
    let indexer = controller.indexer().clone();
    fifo.replace(vec![cm("ns", "a", 1)], "1");
    fifo.update(cm("ns", "a", 2));
    let first = controller.try_process_next().unwrap();
    assert_eq!(first.key.as_deref(), Some("ns/a"));
    assert_eq!(first.deltas.len(), 1, "no per-key merging");
    assert!(first.is_in_initial_list);
    let second = controller.try_process_next().unwrap();
    assert!(!second.is_in_initial_list);
    assert_eq!(cached(&indexer), [("ns/a".into(), 2)]);
    assert!(controller.try_process_next().is_none());
}

#[test]
fn controller_batch_pop_applies_several_keys_in_one_batch() {
    let indexer = Indexer::new();
    let fifo = Arc::new(RealFifo::new(Arc::new(indexer.reader())));
    let mut controller = ProcessLoop::new(fifo.clone(), indexer).batch_pop(10);
    let indexer = controller.indexer().clone();
    for n in 0..3 {
        fifo.add(cm("ns", &format!("o{n}"), n));
    }
    let batch = controller.try_process_next().unwrap();
    assert_eq!(batch.key, None);
    assert_eq!(batch.deltas.len(), 3);
    assert_eq!(batch.notifications.len(), 3);
    assert_eq!(indexer.len(), 3);
}

#[test]
fn controller_applies_an_atomic_relist_as_one_batch() {
    let indexer = Indexer::new();
    let fifo: Arc<dyn InformerQueue<Object>> = Arc::new(RealFifo::atomic());
    let mut controller = ProcessLoop::new(fifo.clone(), indexer);
    let indexer = controller.indexer().clone();
    fifo.replace(vec![cm("ns", "a", 1), cm("ns", "b", 2)], "2");
    let initial = controller.try_process_next().unwrap();
    assert_eq!(initial.key, None);
    assert!(initial.is_in_initial_list);
    assert_eq!(initial.notifications.len(), 2);
    assert!(fifo.has_synced());

    fifo.replace(vec![cm("ns", "a", 3)], "5");
    let mut log = Log::default();
    controller.try_process_next().unwrap().dispatch(&mut log);
    assert_eq!(log.0, ["delete 2 tombstone", "update 1->3"]);
    assert_eq!(cached(&indexer), [("ns/a".into(), 3)]);
}

/// A clock whose every reading is 1 µs after the previous one: what is read later reads later.
#[derive(Debug, Default)]
struct Ticking(std::sync::atomic::AtomicU64);

impl Ticking {
    fn tick(&self) -> std::time::Duration {
        let n = self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        std::time::Duration::from_micros(n)
    }
}

impl crate::cache::clock::Clock for Ticking {
    fn now(&self) -> std::time::Instant {
        static BASE: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        *BASE.get_or_init(std::time::Instant::now) + self.tick()
    }

    fn wall(&self) -> std::time::SystemTime {
        std::time::SystemTime::UNIX_EPOCH + self.tick()
    }

    fn sleep(&self, _: std::time::Duration) -> futures_util::future::BoxFuture<'static, ()> {
        Box::pin(std::future::ready(()))
    }
}

#[test]
fn a_batch_is_stamped_as_its_pop_begins_before_any_notification_of_it_exists() {
    // A batch's time is when it was popped, and no handler call made of it (a
    // plain informer's inside the pop, a shared informer's listener after it) can read the clock
    // before that stamp.
    let clock = Arc::new(Ticking::default());
    let indexer = Indexer::new();
    let fifo = Arc::new(RealFifo::new(Arc::new(indexer.reader())));
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let in_pop: InPop<Object> = {
        let (clock, seen) = (clock.clone(), seen.clone());
        Arc::new(move |notifications: &[Notification<Object>]| {
            assert!(!notifications.is_empty());
            seen.lock()
                .unwrap()
                .push(crate::cache::clock::Clock::wall(&*clock));
        })
    };
    let mut controller = ProcessLoop::new(fifo.clone(), indexer)
        .clock(clock.clone())
        .in_pop(in_pop);
    fifo.add(cm("ns", "a", 1));
    fifo.add(cm("ns", "b", 2));
    for _ in 0..2 {
        let batch = controller.try_process_next().unwrap();
        let handled_at = *seen.lock().unwrap().last().unwrap();
        assert!(
            batch.time < handled_at,
            "{:?} >= {handled_at:?}",
            batch.time
        );
    }
}

/// Pops the initial list of `n` objects and a relist of the same through `controller`; returns
/// the indexer's capacity after the first pop, after the list, and after the relist.
fn capacities_through_a_list_and_a_relist(
    fifo: &DeltaFifo<Object>,
    mut controller: ProcessLoop<Object>,
    n: u64,
) -> [usize; 3] {
    let indexer = controller.indexer().clone();
    let list = || (0..n).map(|i| cm("ns", &format!("o{i}"), i)).collect();
    fifo.replace(list(), "1");
    controller.try_process_next().unwrap();
    let after_first_pop = indexer.capacity();
    while controller.try_process_next().is_some() {}
    let after_list = indexer.capacity();
    fifo.replace(list(), "2");
    while controller.try_process_next().is_some() {}
    assert_eq!(indexer.len(), n as usize);
    [after_first_pop, after_list, indexer.capacity()]
}

#[test]
fn the_first_pop_of_the_initial_list_makes_room_for_the_whole_list_once() {
    let indexer = Indexer::new();
    let fifo = DeltaFifo::new().known_objects(Arc::new(indexer.reader()));
    let fifo = Arc::new(fifo);
    let own = capacities_through_a_list_and_a_relist(
        &fifo,
        ProcessLoop::new(fifo.clone(), indexer),
        1000,
    );

    let indexer = Indexer::new();
    let fifo = DeltaFifo::new().known_objects(Arc::new(indexer.reader()));
    let fifo = Arc::new(fifo);
    let informer = Arc::new(SharedInformer::new(
        indexer,
        Duration::ZERO,
        Arc::new(crate::cache::TokioClock),
    ));
    let shared = capacities_through_a_list_and_a_relist(
        &fifo,
        ProcessLoop::with_shared_informer(fifo.clone(), informer),
        1000,
    );

    for capacities in [own, shared] {
        // Room for the list after its first object, then no growth: not during the list, and
        // not on a relist of objects already stored.
        assert!(capacities[0] >= 1000, "{capacities:?}");
        assert_eq!(capacities, [capacities[0]; 3]);
    }
}
