//! processDeltas and the consumer loop.

use std::ops::ControlFlow;
use std::sync::Arc;

use crate::object::Object;

use super::*;
use crate::cache::test_objects::{cm, rv};
use crate::cache::{DeletedFinalStateUnknown, Delta};

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
        let store = Indexer::new();
        let mut log = Log::default();
        process_deltas(
            &mut log,
            &store,
            &deltas(vec![Delta::new(type_, cm("ns", "a", 1))]),
            true,
        );
        process_deltas(
            &mut log,
            &store,
            &deltas(vec![Delta::new(type_, cm("ns", "a", 2))]),
            false,
        );
        assert_eq!(log.0, ["add 1 initial=true", "update 1->2"], "{type_}");
        assert_eq!(store.get_by_key("ns/a").map(|o| rv(&o)), Some(2));
    }
}

#[test]
fn deltas_apply_oldest_to_newest() {
    let store = Indexer::new();
    let mut log = Log::default();
    let batch = deltas(vec![
        Delta::new(DeltaType::Added, cm("ns", "a", 1)),
        Delta::new(DeltaType::Updated, cm("ns", "a", 2)),
        Delta::new(DeltaType::Deleted, cm("ns", "a", 2)),
        Delta::new(DeltaType::Added, cm("ns", "a", 3)),
    ]);
    process_deltas(&mut log, &store, &batch, false);
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
    let store = Indexer::new();
    store.add(cm("ns", "a", 1));
    let mut log = Log::default();
    let tombstone = DeletedFinalStateUnknown {
        key: "ns/a".into(),
        obj: Some(cm("ns", "a", 1)),
    };
    process_deltas(
        &mut log,
        &store,
        &deltas(vec![Delta::new(DeltaType::Deleted, tombstone)]),
        false,
    );
    assert_eq!(log.0, ["delete 1 tombstone"]);
    assert!(store.is_empty());
}

#[test]
fn controller_applies_the_initial_list_then_a_relist_with_tombstones() {
    let indexer = Arc::new(Indexer::new());
    let fifo = Arc::new(DeltaFifo::new().known_objects(indexer.clone()));
    let mut controller = Controller::new(fifo.clone(), indexer.clone());

    fifo.replace(vec![cm("ns", "a", 1), cm("ns", "b", 2)], "2");
    let mut seen = Vec::new();
    while !fifo.has_synced() {
        let batch = controller.process_next().unwrap();
        seen.push((
            batch.seq,
            batch.key.to_string(),
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
    assert_eq!(controller.popped(), 4);
}

#[test]
fn run_stops_when_the_handler_breaks() {
    let indexer = Arc::new(Indexer::new());
    let fifo = Arc::new(DeltaFifo::new().known_objects(indexer.clone()));
    let mut controller = Controller::new(fifo.clone(), indexer);
    for n in 0..3 {
        fifo.add(cm("ns", &format!("o{n}"), n));
    }
    controller.run(&mut |_: &Batch<Object>| ControlFlow::Break(()));
    assert_eq!((controller.popped(), fifo.len()), (1, 2));
}
