//! One test per FIFO rule, after client-go's `fifo_test.go` (rewritten, not copied), the rules
//! this port adds (what is counted, what the adapter pops), and a property test.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::Duration;

use crate::object::Object;
use proptest::prelude::*;

use super::*;
use crate::cache::test_objects::{cm, rv};
use crate::cache::{DeletedFinalStateUnknown, Indexer, ListInfo, Notification, process_deltas};

/// Generous: only there so that a broken test fails instead of hanging.
const PATIENCE: Duration = Duration::from_secs(10);

type F = Fifo<Object>;

fn a(rv: u64) -> Arc<Object> {
    cm("ns", "a", rv)
}

fn b(rv: u64) -> Arc<Object> {
    cm("ns", "b", rv)
}

fn c(rv: u64) -> Arc<Object> {
    cm("ns", "c", rv)
}

/// Pops one object without failing; panics if the FIFO is closed.
fn pop(fifo: &F) -> PoppedObject<Object, ()> {
    fifo.pop(|_, _| Ok::<_, ProcessError<Infallible>>(()))
        .expect("an object")
}

/// `key@rv` of every object a drain pops, without blocking.
fn drain(fifo: &F) -> Vec<String> {
    let mut popped = Vec::new();
    while let Some(p) = fifo
        .try_pop(|_, _| Ok::<_, ProcessError<Infallible>>(()))
        .expect("open")
    {
        popped.push(format!("{}@{}", p.key, rv(&p.object)));
    }
    popped
}

/// The queue entries, stale ones included.
fn entries(fifo: &F) -> Vec<String> {
    fifo.lock()
        .queue
        .iter()
        .map(|e| e.key.to_string())
        .collect()
}

/// client-go's invariant on `items`: every key there is also queued.
fn check_invariants(fifo: &F) {
    let state = fifo.lock();
    for key in state.items.keys() {
        assert!(
            state.queue.iter().any(|e| &e.key == key),
            "{key} waits but is not queued"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// client-go's `fifo_test.go`

/// `TestFIFO_basic`: two producers, one consumer; each producer's objects come out in the order
/// it queued them.
#[test]
fn concurrent_producers_keep_their_order() {
    const AMOUNT: u64 = 200;
    let fifo = Arc::new(F::new());
    let producers: Vec<_> = ["p", "q"]
        .into_iter()
        .map(|ns| {
            let fifo = fifo.clone();
            thread::spawn(move || {
                for i in 1..=AMOUNT {
                    fifo.add(cm(ns, &format!("o{i}"), i));
                }
            })
        })
        .collect();
    let mut last: BTreeMap<String, u64> = BTreeMap::new();
    for _ in 0..2 * AMOUNT {
        let popped = pop(&fifo);
        let ns = popped.object.namespace().unwrap().to_owned();
        let n = rv(&popped.object);
        let previous = last.insert(ns.clone(), n).unwrap_or(0);
        assert!(n > previous, "{ns}: {n} after {previous}");
    }
    for p in producers {
        p.join().unwrap();
    }
    assert!(fifo.is_empty());
}

/// `TestFIFO_requeueOnPop`: `Requeue` puts the object back (with or without an error to
/// report); a successful pop removes it.
#[test]
fn requeue_puts_the_object_back_and_reports_its_error() {
    let fifo = F::new();
    fifo.add(a(10));
    let popped = fifo.pop(|obj, _| {
        assert_eq!(rv(obj), 10);
        Err::<(), _>(ProcessError::Requeue(None::<&str>))
    });
    assert!(matches!(popped, Err(PopError::Process(None))));
    assert!(fifo.get_by_key("ns/a").is_some(), "requeued");

    let popped = fifo.pop(|_, _| Err::<(), _>(ProcessError::Requeue("test error")));
    assert!(matches!(popped, Err(PopError::Process("test error"))));
    assert!(fifo.get_by_key("ns/a").is_some(), "requeued again");

    pop(&fifo);
    assert!(fifo.get_by_key("ns/a").is_none(), "removed by a good pop");
}

/// `TestFIFO_addUpdate`: an update of a waiting object replaces it; one pop delivers the newest,
/// and nothing is left.
#[test]
fn an_update_replaces_the_waiting_object() {
    let fifo = F::new();
    fifo.add(a(10));
    fifo.update(a(15));
    let listed: Vec<u64> = fifo.list().iter().map(|o| rv(o)).collect();
    assert_eq!(listed, [15]);
    assert_eq!(fifo.list_keys(), [Arc::<str>::from("ns/a")]);
    assert_eq!(drain(&fifo), ["ns/a@15"]);
    assert!(fifo.get(&a(0)).is_none(), "popped objects leave the store");
}

/// `TestFIFO_addReplace`: a replace that lists a waiting key replaces its object.
#[test]
fn a_replace_replaces_the_waiting_object() {
    let fifo = F::new();
    fifo.add(a(10));
    fifo.replace(vec![a(15)], "15");
    assert_eq!(drain(&fifo), ["ns/a@15"]);
    assert!(fifo.get(&a(0)).is_none());
}

/// `TestFIFO_detectLineJumpers`: writing a waiting key keeps its place in line; writing it after
/// its pop queues it at the end.
#[test]
fn a_written_key_keeps_its_place_and_a_popped_one_goes_to_the_end() {
    let fifo = F::new();
    fifo.add(a(10));
    fifo.add(b(1));
    fifo.add(a(11));
    fifo.add(a(13));
    fifo.add(c(30));
    assert_eq!(rv(&pop(&fifo).object), 13);
    fifo.add(a(14));
    assert_eq!(drain(&fifo), ["ns/b@1", "ns/c@30", "ns/a@14"]);
}

/// `TestFIFO_addIfNotPresent`: nothing happens to a key that has an object waiting.
#[test]
fn add_if_not_present_leaves_a_waiting_key_alone() {
    let fifo = F::new();
    fifo.add(a(1));
    fifo.add(b(2));
    assert!(!fifo.add_if_not_present(b(3)));
    assert!(fifo.add_if_not_present(c(4)));
    assert_eq!(fifo.len(), 3);
    assert_eq!(drain(&fifo), ["ns/a@1", "ns/b@2", "ns/c@4"]);
}

/// `TestFIFO_HasSynced`, case by case.
#[test]
fn has_synced_waits_for_the_first_replace_unless_a_write_came_first() {
    type Action = fn(&F);
    let cases: [(&str, &[Action], bool); 6] = [
        ("nothing yet", &[], false),
        ("an add first", &[|f| f.add(a(1))], true),
        ("an empty replace", &[|f| f.replace(vec![], "0")], true),
        (
            "a replace not popped",
            &[|f| f.replace(vec![a(1), b(2)], "0")],
            false,
        ),
        (
            "a replace half popped",
            &[|f| f.replace(vec![a(1), b(2)], "0"), |f| drop(pop(f))],
            false,
        ),
        (
            "a replace popped",
            &[
                |f| f.replace(vec![a(1), b(2)], "0"),
                |f| drop(pop(f)),
                |f| drop(pop(f)),
            ],
            true,
        ),
    ];
    for (name, actions, synced) in cases {
        let fifo = F::new();
        for action in actions {
            action(&fifo);
        }
        assert_eq!(fifo.has_synced(), synced, "{name}");
    }
}

/// `TestFIFO_PopShouldUnblockWhenClosed`: every pop blocked on an empty FIFO returns `Closed`.
#[test]
fn close_unblocks_every_waiting_pop() {
    let fifo = Arc::new(F::new());
    let (tx, rx) = mpsc::channel();
    for _ in 0..4 {
        let (fifo, tx) = (fifo.clone(), tx.clone());
        thread::spawn(move || {
            let popped = fifo.pop(|_, _| Ok::<_, ProcessError<Infallible>>(()));
            tx.send(matches!(popped, Err(PopError::Closed))).unwrap();
        });
    }
    // Blocked, not merely started: a pop that began after `close` would return without a wake.
    until(&fifo, "the four pops to block", |s| s.waiters == 4);
    fifo.close();
    for _ in 0..4 {
        assert!(rx.recv_timeout(PATIENCE).expect("a pop returned"));
    }
}

// ---------------------------------------------------------------------------------------------
// The rules behind those tests, one by one

#[test]
fn a_deleted_key_stays_queued_and_the_pop_skips_it() {
    let fifo = F::new();
    fifo.add(a(1));
    fifo.add(b(2));
    assert!(fifo.delete(&a(3)));
    assert_eq!(entries(&fifo), ["ns/a", "ns/b"], "the entry stays");
    assert_eq!(fifo.len(), 1, "but nothing waits under it");
    assert_eq!(drain(&fifo), ["ns/b@2"]);
    assert!(entries(&fifo).is_empty());
    assert_eq!(fifo.stats().dropped, 1);
    // Deleting a key with nothing waiting drops nothing: the consumer had it already.
    assert!(!fifo.delete(&b(4)));
    assert_eq!(fifo.stats().dropped, 1);
}

#[test]
fn a_key_deleted_and_added_again_is_popped_at_its_first_place_once() {
    let fifo = F::new();
    fifo.add(a(1));
    fifo.add(b(2));
    fifo.delete(&a(3));
    fifo.add(a(4));
    assert_eq!(entries(&fifo), ["ns/a", "ns/b", "ns/a"]);
    assert_eq!(drain(&fifo), ["ns/a@4", "ns/b@2"]);
    assert!(entries(&fifo).is_empty(), "the second entry was skipped");
}

#[test]
fn skipped_entries_count_toward_the_initial_population() {
    let fifo = F::new();
    fifo.replace(vec![a(1), b(1)], "1");
    fifo.delete(&a(2));
    assert!(!fifo.has_synced());
    let popped = pop(&fifo);
    assert_eq!(&*popped.key, "ns/b");
    assert!(popped.is_in_initial_list);
    assert!(fifo.has_synced(), "a's skipped entry counted");
}

#[test]
fn only_the_first_replaces_keys_are_the_initial_list() {
    let fifo = F::new();
    fifo.replace(vec![a(1), b(1)], "1");
    fifo.add(c(2));
    let initial: Vec<(String, bool)> = (0..3)
        .map(|_| pop(&fifo))
        .map(|p| (p.key.to_string(), p.is_in_initial_list))
        .collect();
    assert_eq!(
        initial,
        [
            ("ns/a".to_owned(), true),
            ("ns/b".to_owned(), true),
            ("ns/c".to_owned(), false)
        ]
    );
    assert!(fifo.has_synced());
}

#[test]
fn replace_builds_new_items_in_list_order_and_drops_unlisted_waiting_keys() {
    let fifo = F::new();
    fifo.add(c(1));
    fifo.add(a(1));
    fifo.delete(&a(2));
    fifo.add(b(1));
    // c waits and is not listed; a listed twice keeps its first place and its last object.
    fifo.replace(vec![a(3), b(3), a(4)], "4");
    assert_eq!(
        entries(&fifo),
        ["ns/a", "ns/b"],
        "stale entries are gone too"
    );
    let stats = fifo.stats();
    assert_eq!(stats.dropped, 2, "a's deletion and c, never seen");
    assert_eq!(stats.coalesced, 1, "b's waiting object overwritten");
    assert_eq!(drain(&fifo), ["ns/a@4", "ns/b@3"]);
}

#[test]
fn the_initial_population_is_the_distinct_keys_of_the_first_replace() {
    let fifo = F::new();
    fifo.replace(vec![a(1), a(2), b(1)], "2");
    assert_eq!(fifo.lock().initial_population_count, 2);
    pop(&fifo);
    pop(&fifo);
    assert!(fifo.has_synced());
}

/// client-go resets the queue on every replace but sets the initial population only on the
/// first: a second replace before the first was popped leaves `has_synced` waiting for as many
/// pops as the first one listed.
#[test]
fn a_second_replace_before_the_first_was_popped_keeps_the_initial_count() {
    let fifo = F::new();
    fifo.replace(vec![a(1), b(1), c(1)], "1");
    fifo.replace(vec![a(2)], "2");
    assert_eq!(drain(&fifo), ["ns/a@2"]);
    assert!(
        !fifo.has_synced(),
        "two of the three initial entries are still owed"
    );
    fifo.add(b(3));
    fifo.add(c(3));
    drain(&fifo);
    assert!(fifo.has_synced());
}

#[test]
fn a_write_before_the_first_replace_means_no_initial_list() {
    let fifo = F::new();
    fifo.delete(&a(1));
    fifo.replace(vec![a(2), b(2)], "2");
    assert!(fifo.has_synced());
    assert!(!pop(&fifo).is_in_initial_list);
}

#[test]
fn resync_queues_only_waiting_keys_without_an_entry_which_never_happens() {
    let fifo = F::new();
    fifo.add(b(1));
    fifo.add(a(1));
    fifo.delete(&b(2));
    assert_eq!(fifo.resync(), 0);
    assert_eq!(entries(&fifo), ["ns/b", "ns/a"]);
    // Forced: no operation leaves a waiting key without an entry.
    fifo.lock().queue.clear();
    fifo.add_if_not_present(c(1));
    assert_eq!(fifo.resync(), 1);
    assert_eq!(entries(&fifo), ["ns/c", "ns/a"]);
    assert_eq!(drain(&fifo), ["ns/c@1", "ns/a@1"]);
}

#[test]
fn writes_over_a_waiting_object_are_counted_as_coalesced() {
    let fifo = F::new();
    fifo.add(a(1));
    fifo.update(a(2));
    fifo.update(a(3));
    fifo.add(b(1));
    let stats = fifo.stats();
    assert_eq!((stats.len, stats.peak_len, stats.coalesced), (2, 2, 2));
    drain(&fifo);
    assert_eq!(fifo.stats().len, 0);
}

#[test]
fn a_failed_process_drops_the_object() {
    let fifo = F::new();
    fifo.add(a(1));
    let popped = fifo.pop(|_, _| Err::<(), _>(ProcessError::Fail("boom")));
    assert!(matches!(popped, Err(PopError::Process("boom"))));
    assert!(fifo.is_empty());
}

#[test]
fn a_requeue_does_not_overwrite_a_newer_object() {
    let fifo = F::new();
    fifo.add(a(1));
    let popped = fifo.pop(|_, _| Err::<(), _>(ProcessError::Requeue("retry")));
    assert!(popped.is_err());
    assert_eq!(drain(&fifo), ["ns/a@1"]);

    // Written while popped (the process function runs under the lock, so a retry written by the
    // consumer after the pop is what `add_if_not_present` guards against).
    fifo.add(a(1));
    let stale = pop(&fifo).object;
    fifo.add(a(2));
    assert!(!fifo.add_if_not_present(stale));
    assert_eq!(drain(&fifo), ["ns/a@2"]);
}

#[test]
fn a_closed_fifo_drains_then_reports_closed() {
    let fifo = F::new();
    fifo.add(a(1));
    fifo.add(b(1));
    fifo.delete(&b(2));
    fifo.close();
    assert!(fifo.is_closed());
    assert_eq!(&*pop(&fifo).key, "ns/a");
    let end = fifo.pop(|_, _| Ok::<_, ProcessError<Infallible>>(()));
    assert!(
        matches!(end, Err(PopError::Closed)),
        "b's entry was skipped"
    );
    // Writes after the close are still delivered.
    fifo.add(c(1));
    assert_eq!(&*pop(&fifo).key, "ns/c");
    let end = fifo.try_pop(|_, _| Ok::<_, ProcessError<Infallible>>(()));
    assert!(matches!(end, Err(PopError::Closed)));
}

#[test]
fn try_pop_returns_none_on_an_open_empty_fifo() {
    let fifo = F::new();
    fifo.add(a(1));
    fifo.delete(&a(2));
    let none = fifo.try_pop(|_, _| Ok::<_, ProcessError<Infallible>>(()));
    assert!(matches!(none, Ok(None)));
    assert!(entries(&fifo).is_empty(), "the stale entry was skipped");
}

/// Waits (bounded) until `cond` holds of the FIFO's state.
fn until(fifo: &F, what: &str, cond: impl Fn(&State<Object>) -> bool) {
    let deadline = std::time::Instant::now() + PATIENCE;
    while !cond(&fifo.lock()) {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        thread::yield_now();
    }
}

#[test]
fn a_blocked_pop_waits_for_an_object_not_for_an_entry() {
    let fifo = Arc::new(F::new());
    let (tx, rx) = mpsc::channel();
    let consumer = {
        let fifo = fifo.clone();
        thread::spawn(move || tx.send(pop(&fifo).key.to_string()).unwrap())
    };
    until(&fifo, "the pop to block", |s| s.waiters == 1);
    // An entry whose object is already deleted, and a wake-up: the pop skips the entry and
    // blocks again.
    {
        let mut state = fifo.lock();
        state.add("ns/a".into(), a(1));
        state.delete("ns/a");
    }
    fifo.cond.notify_all();
    until(&fifo, "the pop to skip the entry and block again", |s| {
        s.waiters == 1 && s.queue.is_empty()
    });
    fifo.add(b(1));
    assert_eq!(rx.recv_timeout(PATIENCE).expect("popped"), "ns/b");
    consumer.join().unwrap();
}

// ---------------------------------------------------------------------------------------------
// The `InformerQueue`-shaped pop and the Reflector's calls

#[test]
fn pop_deltas_hands_out_one_sync_delta_and_process_deltas_applies_it() {
    let fifo = F::new();
    let mut indexer = Indexer::new();
    fifo.replace(vec![a(1)], "1");
    fifo.add(b(2));
    fifo.update(a(3));
    let mut notifications: Vec<Notification<Object>> = Vec::new();
    let mut popped = Vec::new();
    while let Some(p) = fifo.try_pop_deltas(&mut |deltas, initial| {
        process_deltas(&mut notifications, &mut indexer, deltas, initial);
    }) {
        let delta = p.deltas.oldest().unwrap();
        assert_eq!(p.deltas.len(), 1);
        assert_eq!(delta.type_, DeltaType::Sync);
        assert_eq!(p.key.as_deref(), delta.key().as_deref());
        popped.push((
            p.key.unwrap().to_string(),
            p.is_in_initial_list,
            p.queue_len,
        ));
    }
    assert_eq!(
        popped,
        [("ns/a".to_owned(), true, 1), ("ns/b".to_owned(), false, 0)]
    );
    assert!(matches!(
        notifications.as_slice(),
        [
            Notification::Add {
                is_in_initial_list: true,
                ..
            },
            Notification::Add {
                is_in_initial_list: false,
                ..
            }
        ]
    ));
    assert_eq!(rv(&indexer.get_by_key("ns/a").unwrap()), 3);
}

#[test]
fn pop_deltas_ends_once_the_fifo_is_closed_and_drained() {
    let fifo = Arc::new(F::new());
    let consumer = {
        let fifo = fifo.clone();
        thread::spawn(move || {
            let mut keys = Vec::new();
            while let Some(p) = fifo.pop_deltas(&mut |_, _| {}) {
                keys.push(p.key.unwrap().to_string());
            }
            keys
        })
    };
    fifo.add(a(1));
    fifo.close();
    assert_eq!(consumer.join().unwrap(), ["ns/a"]);
}

#[test]
fn as_a_reflector_store_a_deletion_is_applied_never_queued() {
    let fifo = F::new();
    let store: &dyn ReflectorStore<Object> = &fifo;
    store.add(a(1));
    store.add(b(1));
    store.add(c(1));
    assert!(!store.delete(DeltaObject::Object(a(2))));
    let tombstone = DeletedFinalStateUnknown {
        key: "ns/b".into(),
        obj: None,
    };
    assert!(!store.delete(tombstone.into()));
    let list = ListInfo {
        resource_version: "3".into(),
        objects: vec![c(1)],
    };
    assert!(
        !store.delete(list.into()),
        "a whole-list payload deletes nothing"
    );
    store.bookmark("4");
    assert!(!store.is_drained());
    assert_eq!(drain(&fifo), ["ns/c@1"]);
    assert!(store.is_drained());
    assert_eq!(fifo.stats().dropped, 2);
}

// ---------------------------------------------------------------------------------------------
// Property

/// What a Reflector and a consumer do, over a small key space so that keys collide.
#[derive(Debug, Clone)]
enum Op {
    Add(u8),
    Delete(u8),
    Replace(Vec<u8>),
    Resync,
    Pop,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..5).prop_map(Op::Add),
        2 => (0u8..5).prop_map(Op::Delete),
        1 => proptest::collection::vec(0u8..5, 0..5).prop_map(Op::Replace),
        1 => Just(Op::Resync),
        3 => Just(Op::Pop),
    ]
}

proptest! {
    /// Whatever happens, every waiting key is queued, a pop delivers the newest object written
    /// under its key since that key's last pop and never a deleted one, and the drain at the end
    /// delivers exactly what is still waiting.
    #[test]
    fn pops_deliver_the_newest_waiting_object_and_nothing_deleted(
        ops in proptest::collection::vec(op(), 1..60)
    ) {
        let fifo = F::new();
        // key → rv of the object waiting under it.
        let mut waiting: BTreeMap<String, u64> = BTreeMap::new();
        let mut next_rv = 0;
        for op in ops {
            next_rv += 1;
            match op {
                Op::Add(n) => {
                    let obj = cm("ns", &format!("o{n}"), next_rv);
                    waiting.insert(object_key(obj.as_ref()), next_rv);
                    fifo.add(obj);
                }
                Op::Delete(n) => {
                    let obj = cm("ns", &format!("o{n}"), next_rv);
                    let was_waiting = waiting.remove(&object_key(obj.as_ref())).is_some();
                    prop_assert_eq!(fifo.delete(&obj), was_waiting);
                }
                Op::Replace(names) => {
                    let list: Vec<_> =
                        names.iter().map(|n| cm("ns", &format!("o{n}"), next_rv)).collect();
                    waiting = list.iter().map(|o| (object_key(o.as_ref()), next_rv)).collect();
                    fifo.replace(list, "0");
                }
                Op::Resync => prop_assert_eq!(fifo.resync(), 0),
                Op::Pop => {
                    if let Some(p) = fifo
                        .try_pop(|_, _| Ok::<_, ProcessError<Infallible>>(()))
                        .unwrap()
                    {
                        prop_assert_eq!(waiting.remove(&*p.key), Some(rv(&p.object)));
                    } else {
                        prop_assert!(waiting.is_empty());
                    }
                }
            }
            check_invariants(&fifo);
            prop_assert_eq!(fifo.len(), waiting.len());
        }
        let mut rest: Vec<String> = drain(&fifo);
        rest.sort();
        let expected: Vec<String> = waiting.iter().map(|(k, rv)| format!("{k}@{rv}")).collect();
        prop_assert_eq!(rest, expected);
    }
}
