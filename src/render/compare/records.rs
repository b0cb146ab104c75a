//! How `-o jsonl` and the timeline say where the stacks differ (docs/jsonl.md).

use serde::Serialize;

use super::{Call, Difference, DifferenceKind, SubjectComparison};

/// What one stack did in a difference.
#[derive(Serialize)]
pub struct StackDid<'a> {
    /// The stack.
    pub stack: &'a str,
    /// What it did: the call as a row says it, `null` for nothing.
    pub did: Option<String>,
}

/// `{"kind":"difference",…}`: one difference between the baseline and another stack.
#[derive(Serialize)]
pub struct DifferenceRecord<'a> {
    kind: &'static str,
    resource: &'a str,
    subject: &'static str,
    name: Option<&'a str>,
    key: &'a str,
    difference: &'static str,
    baseline: StackDid<'a>,
    other: StackDid<'a>,
    what: &'a str,
}

/// `{"kind":"verdict",…}`: how one handler, controller (or the pops) compares.
#[derive(Serialize)]
pub struct VerdictRecord<'a> {
    kind: &'static str,
    resource: &'a str,
    subject: &'static str,
    name: Option<&'a str>,
    verdict: &'static str,
    /// Each stack with its number of calls, in stack order.
    calls: Vec<StackCalls<'a>>,
    /// Every difference, named by a `difference` line or not (beyond the first hundred of a
    /// stack).
    differences: usize,
}

/// A stack and how many calls it made.
#[derive(Serialize)]
pub struct StackCalls<'a> {
    stack: &'a str,
    calls: usize,
}

impl<'a> DifferenceRecord<'a> {
    /// The record of `difference`, of `comparison`'s subject.
    pub fn new(comparison: &'a SubjectComparison, difference: &'a Difference) -> Self {
        DifferenceRecord {
            kind: "difference",
            resource: &comparison.resource,
            subject: comparison.subject.kind(),
            name: comparison.subject.name(),
            key: &difference.key,
            difference: difference.kind.as_str(),
            baseline: StackDid {
                stack: &difference.baseline_stack,
                did: difference.baseline.as_ref().map(Call::text),
            },
            other: StackDid {
                stack: &difference.stack,
                did: difference.other.as_ref().map(Call::text),
            },
            what: &difference.what,
        }
    }
}

impl<'a> VerdictRecord<'a> {
    /// The verdict of `comparison`.
    pub fn new(comparison: &'a SubjectComparison) -> Self {
        VerdictRecord {
            kind: "verdict",
            resource: &comparison.resource,
            subject: comparison.subject.kind(),
            name: comparison.subject.name(),
            verdict: comparison.verdict.as_str(),
            calls: (comparison.calls.iter())
                .map(|(stack, calls)| StackCalls {
                    stack,
                    calls: *calls,
                })
                .collect(),
            differences: comparison.counts.iter().map(|(_, n)| n).sum(),
        }
    }
}

/// A difference as a timeline row:
/// `handler h  1.32 │ OnDelete demo/worker-2 (tombstone) │ latest ─ (delivered 3 calls earlier)`.
pub fn difference_row(comparison: &SubjectComparison, difference: &Difference) -> String {
    let subject = comparison.subject.describe();
    let (base, other) = (&difference.baseline_stack, &difference.stack);
    match (difference.kind, &difference.baseline, &difference.other) {
        (DifferenceKind::Extra, _, Some(call)) => format!(
            "{subject}  {base} ─ │ {other} │ {} ({})",
            call.text(),
            difference.what
        ),
        (_, Some(call), _) => format!(
            "{subject}  {base} │ {} │ {other} ─ ({})",
            call.text(),
            difference.what
        ),
        _ => format!("{subject}  {base} │ {other} ─ ({})", difference.what),
    }
}
