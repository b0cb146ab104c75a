use std::time::{Duration, SystemTime};

use super::*;

fn call(kind: &'static str, key: &str, pop: u64) -> Call {
    Call {
        key: key.to_owned(),
        kind,
        tombstone: false,
        is_sync: false,
        resource_version: None,
        result: None,
        pop,
        time: SystemTime::UNIX_EPOCH,
    }
}

fn verdict(a: &[Call], b: &[Call]) -> SubjectComparison {
    compare_subject(
        "pods",
        Subject::Handler("h".into()),
        &[("1.32", a), ("latest", b)],
        true,
        Some(Duration::ZERO),
    )
}

#[test]
fn the_same_calls_are_the_same() {
    let a = [call("OnAdd", "a", 1), call("OnAdd", "b", 2)];
    let compared = verdict(&a, &a);
    assert_eq!(compared.verdict, Verdict::Same);
    assert!(compared.differences.is_empty());
    assert_eq!(compared.summary_line(), "handler h: same calls");
}

#[test]
fn a_deletion_delivered_earlier_is_a_change_of_order() {
    let a = [
        call("OnUpdate", "w1", 1),
        call("OnUpdate", "w3", 2),
        call("OnAdd", "w4", 3),
        call("OnDelete", "w2", 4),
    ];
    let b = [a[3].clone(), a[0].clone(), a[1].clone(), a[2].clone()];
    let compared = verdict(&a, &b);
    assert_eq!(compared.verdict, Verdict::DifferentOrder);
    assert_eq!(compared.differences.len(), 1, "{:?}", compared.differences);
    let moved = &compared.differences[0];
    assert_eq!(moved.kind, DifferenceKind::Moved);
    assert_eq!(moved.key, "w2");
    assert_eq!(moved.what, "delivered 3 calls earlier");
}

#[test]
fn a_tombstone_instead_of_the_object_is_a_changed_call() {
    let a = [call("OnAdd", "a", 1), call("OnDelete", "b", 2)];
    let mut b = a.clone();
    b[1].tombstone = true;
    let compared = verdict(&a, &b);
    assert_eq!(compared.verdict, Verdict::DifferentCalls);
    assert_eq!(compared.differences[0].kind, DifferenceKind::Changed);
    assert!(compared.differences[0].what.contains("tombstone vs object"));
    assert_eq!(
        compared.summary_line(),
        "handler h: different calls (1 changed)"
    );
}

#[test]
fn missing_and_extra_calls_are_counted() {
    let a = [call("OnAdd", "a", 1), call("OnAdd", "b", 2)];
    let b = [
        call("OnAdd", "a", 1),
        call("OnAdd", "c", 2),
        call("OnAdd", "d", 3),
    ];
    let compared = verdict(&a, &b);
    assert_eq!(compared.verdict, Verdict::DifferentCalls);
    assert_eq!(compared.count(DifferenceKind::Missing), 1);
    assert_eq!(compared.count(DifferenceKind::Extra), 2);
}

#[test]
fn the_same_calls_in_other_pops_differ_in_batches() {
    // One pop of two deltas (a DeltaFIFO's coalescing) against two pops.
    let a = [call("Added", "a", 1), call("Updated", "a", 1)];
    let b = [call("Added", "a", 1), call("Updated", "a", 2)];
    let compared = verdict(&a, &b);
    assert_eq!(compared.verdict, Verdict::DifferentBatches);
    assert_eq!(compared.differences[0].kind, DifferenceKind::Batch);
    assert_eq!(
        compared.differences[0].what,
        "popped apart from the call before"
    );
}

#[test]
fn a_reconcile_at_another_time_is_named() {
    let a = [call("reconcile", "a", 0)];
    let mut b = a.clone();
    b[0].time += Duration::from_millis(500);
    let compared = verdict(&a, &b);
    assert_eq!(compared.verdict, Verdict::DifferentTimes);
    assert_eq!(compared.differences[0].what, "made 500ms later");
}

#[test]
fn live_reconciles_a_scheduling_apart_are_at_the_same_time() {
    let a = [call("reconcile", "a", 0), call("reconcile", "b", 0)];
    let mut b = a.clone();
    b[0].time += Duration::from_millis(3);
    b[1].time += Duration::from_millis(500);
    let live = |a: &[Call], b: &[Call]| {
        compare_subject(
            "pods",
            Subject::Controller("web".into()),
            &[("runtime=client-go", a), ("runtime=kube", b)],
            false,
            Some(Duration::from_millis(100)),
        )
    };
    let compared = live(&a, &b);
    assert_eq!(compared.differences.len(), 1, "{:?}", compared.differences);
    assert_eq!(compared.differences[0].key, "b");
    assert_eq!(compared.differences[0].what, "made 500ms later");
    assert_eq!(live(&a[..1], &b[..1]).verdict, Verdict::Same);
}

#[test]
fn a_deletion_one_stack_never_reconciles_is_named() {
    let mut gone = call("reconcile", "a", 0);
    gone.result = Some("ok");
    let a = [call("reconcile", "b", 0), gone];
    let b = [call("reconcile", "b", 0)];
    let compared = verdict(&a, &b);
    assert_eq!(compared.verdict, Verdict::DifferentCalls);
    assert_eq!(compared.differences[0].kind, DifferenceKind::Missing);
    assert_eq!(
        compared.differences[0].what,
        "the deletion never reconciled"
    );
}

#[test]
fn beyond_a_hundred_differences_the_rest_are_counted_not_named() {
    let a: Vec<Call> = (0..300)
        .map(|i| call("Updated", &format!("k{i}"), 1))
        .collect();
    let b: Vec<Call> = (0..300)
        .map(|i| call("Updated", &format!("k{i}"), i + 1))
        .collect();
    let compared = verdict(&a, &b);
    assert_eq!(compared.count(DifferenceKind::Batch), 299);
    assert_eq!(compared.differences.len(), NAMED_PER_STACK);
    assert_eq!(compared.unnamed, 299 - NAMED_PER_STACK);
    assert_eq!(
        compared.summary_line(),
        "handler h: same calls, different batches (299 in other pops)"
    );
}
