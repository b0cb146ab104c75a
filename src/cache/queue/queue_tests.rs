//! What the queues share: the [`InformerQueue`] interface, and the property that the choice of informer
//! queue never changes what the consumer's cache ends up holding (the plain FIFO, which never
//! delivers a deletion, leaves every live object right and may keep deleted ones).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::object::Object;
use proptest::prelude::*;

use super::*;
use crate::cache::test_objects::{cm, rv};
use crate::cache::{DeltaType, Indexer, ProcessLoop, object_key};

#[test]
fn build_makes_the_queue_its_kind_names() {
    for kind in QueueKind::ALL {
        let queue = kind.build::<Object>(Arc::new(Indexer::new().reader()), true);
        assert_eq!(queue.kind(), kind);
    }
    let names: Vec<String> = QueueKind::ALL.iter().map(ToString::to_string).collect();
    assert_eq!(names, ["delta", "real", "atomic", "plain"]);
}

#[test]
fn build_passes_the_legacy_sync_choice_to_the_per_object_queues() {
    for kind in [QueueKind::Delta, QueueKind::Real] {
        let queue = kind.build::<Object>(Arc::new(Indexer::new().reader()), false);
        queue.replace(vec![cm("ns", "a", 1)], "1");
        let popped = queue.try_pop_batch(1, &mut |_, _| {}).unwrap();
        assert_eq!(
            popped.deltas.oldest().unwrap().type_,
            DeltaType::Sync,
            "{kind}"
        );
    }
}

#[test]
fn the_delta_fifo_pops_one_key_whatever_the_batch_size_and_ignores_bookmarks() {
    let queue: Arc<dyn InformerQueue<Object>> = Arc::new(DeltaFifo::new());
    queue.add(cm("ns", "a", 1));
    queue.update(cm("ns", "a", 2));
    queue.add(cm("ns", "b", 3));
    queue.bookmark("9");
    assert_eq!(queue.len(), 2);
    let popped = queue.try_pop_batch(10, &mut |_, _| {}).unwrap();
    assert_eq!(popped.key.as_deref(), Some("ns/a"));
    assert_eq!(popped.deltas.len(), 2);
    assert_eq!(popped.queue_len, 1);
}

#[test]
fn the_delta_fifo_drops_a_deletion_the_real_fifo_delivers() {
    for (kind, queued) in [
        (QueueKind::Delta, false),
        (QueueKind::Real, true),
        (QueueKind::Atomic, true),
    ] {
        let queue = kind.build::<Object>(Arc::new(Indexer::new().reader()), true);
        assert_eq!(queue.delete(cm("ns", "ghost", 1).into()), queued, "{kind}");
        assert_eq!(queue.len(), usize::from(queued), "{kind}");
    }
}

/// What the reflector does, over a small key space so that keys collide.
#[derive(Debug, Clone)]
enum Op {
    Add(u8),
    Update(u8),
    Delete(u8),
    Replace(Vec<u8>),
    Resync,
    Bookmark,
    Pop,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u8..6).prop_map(Op::Add),
        3 => (0u8..6).prop_map(Op::Update),
        2 => (0u8..6).prop_map(Op::Delete),
        1 => proptest::collection::vec(0u8..6, 0..6).prop_map(Op::Replace),
        1 => Just(Op::Resync),
        1 => Just(Op::Bookmark),
        4 => Just(Op::Pop),
    ]
}

/// One reflector call with its objects, built once so that every queue gets the same `Arc`s.
enum Call {
    Add(Arc<Object>),
    Update(Arc<Object>),
    Delete(Arc<Object>),
    Replace(Vec<Arc<Object>>, String),
    Resync,
    Bookmark(String),
    Pop,
}

/// The calls for `ops`, and what the server holds at the end (key → resourceVersion).
fn script(ops: Vec<Op>) -> (Vec<Call>, BTreeMap<String, u64>) {
    let mut truth = BTreeMap::new();
    let mut next_rv = 1;
    let mut calls = Vec::new();
    for op in ops {
        next_rv += 1;
        let obj = |n: u8| cm("ns", &format!("o{n}"), next_rv);
        calls.push(match op {
            Op::Add(n) | Op::Update(n) => {
                let obj = obj(n);
                truth.insert(object_key(obj.as_ref()), next_rv);
                if matches!(op, Op::Add(_)) {
                    Call::Add(obj)
                } else {
                    Call::Update(obj)
                }
            }
            Op::Delete(n) => {
                let obj = obj(n);
                truth.remove(&object_key(obj.as_ref()));
                Call::Delete(obj)
            }
            Op::Replace(names) => {
                let list: Vec<_> = names.iter().map(|&n| obj(n)).collect();
                truth = list
                    .iter()
                    .map(|o| (object_key(o.as_ref()), rv(o)))
                    .collect();
                Call::Replace(list, next_rv.to_string())
            }
            Op::Resync => Call::Resync,
            Op::Bookmark => Call::Bookmark(next_rv.to_string()),
            Op::Pop => Call::Pop,
        });
    }
    (calls, truth)
}

/// Runs `calls` through a queue of `kind` and its consumer, drains it, and returns the cache.
fn run(kind: QueueKind, calls: &[Call], batch_pop: usize) -> BTreeMap<String, u64> {
    let indexer = Indexer::new();
    let queue = kind.build(Arc::new(indexer.reader()), true);
    let mut controller = ProcessLoop::new(queue.clone(), indexer).batch_pop(batch_pop);
    let indexer = controller.indexer().clone();
    for call in calls {
        match call {
            Call::Add(obj) => queue.add(obj.clone()),
            Call::Update(obj) => queue.update(obj.clone()),
            Call::Delete(obj) => {
                queue.delete(obj.clone().into());
            }
            Call::Replace(list, rv) => queue.replace(list.clone(), rv),
            Call::Resync => {
                queue.resync();
            }
            Call::Bookmark(rv) => queue.bookmark(rv),
            Call::Pop => {
                controller.try_process_next();
            }
        }
    }
    queue.close();
    controller.run(&mut |_: &crate::cache::Batch<Object>| std::ops::ControlFlow::Continue(()));
    assert!(queue.is_empty());
    indexer
        .entries()
        .into_iter()
        .map(|(k, o)| (k.to_string(), rv(&o)))
        .collect()
}

proptest! {
    /// Whatever the reflector does and however the consumer pops, draining any of the three
    /// queues leaves the indexer holding the last state of every live object: switching queues
    /// changes the deltas a consumer sees, never what its cache ends up with.
    #[test]
    fn every_queue_leaves_the_same_indexer_contents(
        ops in proptest::collection::vec(op(), 1..60),
        batch_pop in 1usize..4,
    ) {
        let (calls, truth) = script(ops);
        for kind in [QueueKind::Delta, QueueKind::Real, QueueKind::Atomic] {
            prop_assert_eq!(run(kind, &calls, batch_pop), truth.clone(), "{}", kind);
        }
    }

    /// The plain FIFO's consumer never hears of a deletion, so its cache may keep deleted
    /// objects; every live one is there at its last state all the same.
    #[test]
    fn the_plain_fifo_leaves_every_live_object_at_its_last_state(
        ops in proptest::collection::vec(op(), 1..60),
    ) {
        let (calls, truth) = script(ops);
        let held = run(QueueKind::Plain, &calls, 1);
        for (key, rv) in &truth {
            prop_assert_eq!(held.get(key), Some(rv), "{}", key);
        }
    }
}
