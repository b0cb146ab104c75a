//! Where stacks part (`--compare`): what each stack's queue popped, what each handler was told
//! and what each controller reconciled, aligned across stacks, each difference named, and one
//! verdict per handler and controller; and the timeline's rows of every stack, aligned the same
//! way, written once where alike ([`side_by_side`]).
//!
//! Invariants:
//! - Pure functions over per-stack sequences of [`Call`]s, in the order each stack made them:
//!   no I/O, no clock, no knowledge of how the calls were collected.
//! - Two calls are the same call when what the receiver could act on is alike: the call's type,
//!   the key, tombstone or object, isSync, the resourceVersion it carries and, for a reconcile,
//!   its result ([`Call::same_call`]). Times and pop numbers never make calls differ; a
//!   reconcile's time and the pops a call came in are named as differences of their own when
//!   the calls are otherwise aligned.
//! - Every stack is compared with the first one given (the baseline): a difference says what the
//!   baseline did and what the other stack did. No difference for any stack exactly when every
//!   stack made the same calls, in the same order, in the same pops (and, for reconciles, at the
//!   same times).
//! - Calls are aligned by a longest common subsequence; a call the baseline made that the other
//!   stack made elsewhere is a change of order ("delivered N calls earlier"), not a missing and
//!   an extra call; a call left without a partner that has one of the same key at the same place
//!   is a changed call, named by what differs.

mod align;
mod collect;
pub mod records;
pub mod side_by_side;

use std::time::{Duration, SystemTime};

pub use align::{Difference, DifferenceKind, StackDifferences, compare_stacks};
pub use collect::{notification_call, pop_calls, reconcile_call};

/// What a sequence of calls was made to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Subject {
    /// The informer's queue: each delta popped, in its pop.
    Pops,
    /// A handler, by name.
    Handler(String),
    /// A controller's reconciles, by name.
    Controller(String),
}

impl Subject {
    /// `pops`, `handler h`, `controller web`.
    pub fn describe(&self) -> String {
        match self {
            Subject::Pops => "pops".to_owned(),
            Subject::Handler(name) => format!("handler {name}"),
            Subject::Controller(name) => format!("controller {name}"),
        }
    }

    /// The name a JSON line gives it (`null` for the pops).
    pub fn name(&self) -> Option<&str> {
        match self {
            Subject::Pops => None,
            Subject::Handler(name) | Subject::Controller(name) => Some(name),
        }
    }

    /// `pops`, `handler`, `controller`.
    pub fn kind(&self) -> &'static str {
        match self {
            Subject::Pops => "pops",
            Subject::Handler(_) => "handler",
            Subject::Controller(_) => "controller",
        }
    }
}

/// One call one stack made: a delta popped, a handler's notification, a reconcile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The object's key (`*` for a whole-list delta).
    pub key: String,
    /// Its type: `Replaced`, `OnUpdate`, `OnAdd (initial)`, `reconcile`.
    pub kind: &'static str,
    /// A tombstone rather than the object.
    pub tombstone: bool,
    /// A resync's call (isSync).
    pub is_sync: bool,
    /// The resourceVersion it carries (read, for a reconcile).
    pub resource_version: Option<String>,
    /// A reconcile's result (`ok`, `error`, `requeue-after`).
    pub result: Option<&'static str>,
    /// The pop it came from.
    pub pop: u64,
    /// When it was made.
    pub time: SystemTime,
}

/// What makes two calls the same call ([`Call::same_call`]), hashable.
pub(crate) type Identity<'a> = (
    &'a str,
    &'a str,
    bool,
    bool,
    Option<&'a str>,
    Option<&'static str>,
);

impl Call {
    /// What makes it the same call as another: equal exactly when [`same_call`](Call::same_call).
    pub(crate) fn identity(&self) -> Identity<'_> {
        (
            self.kind,
            &self.key,
            self.tombstone,
            self.is_sync,
            self.resource_version.as_deref(),
            self.result,
        )
    }

    /// What it was, as a row says it: `OnDelete demo/worker-2 (tombstone)`, `reconcile
    /// demo/a (read 1004) ok`. Made when shown: a session keeps every call of every stack.
    pub fn text(&self) -> String {
        let key = &self.key;
        if self.kind == "reconcile" {
            let read = self.resource_version.as_deref().unwrap_or("nothing: gone");
            return format!(
                "reconcile {key} (read {read}) {}",
                self.result.unwrap_or_default()
            );
        }
        let mut text = if self.is_sync {
            format!("{} (resync) {key}", self.kind)
        } else {
            format!("{} {key}", self.kind)
        };
        if self.tombstone {
            text.push_str(" (tombstone)");
        }
        text
    }

    /// The same call: what the receiver could act on is alike (not its time or pop).
    pub fn same_call(&self, other: &Call) -> bool {
        self.identity() == other.identity()
    }

    /// A reconcile that found its object gone: a deletion reconciled.
    pub fn is_deletion_reconcile(&self) -> bool {
        self.kind == "reconcile" && self.resource_version.is_none()
    }

    /// What differs between two calls of the same key, named as a user asks about it.
    fn what_differs(&self, other: &Call) -> &'static str {
        if self.kind != other.kind {
            "a different type"
        } else if self.tombstone != other.tombstone {
            "tombstone vs object"
        } else if self.is_sync != other.is_sync {
            "isSync"
        } else if self.resource_version != other.resource_version {
            "a different resourceVersion"
        } else {
            "a different result"
        }
    }
}

/// How the calls of one subject compare across stacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Every stack made the same calls in the same order (and pops, and times).
    Same,
    /// The same calls, in another order.
    DifferentOrder,
    /// The same calls in the same order, in other pops.
    DifferentBatches,
    /// The same calls, reconciled at other times.
    DifferentTimes,
    /// Calls missing, extra or changed.
    DifferentCalls,
}

impl Verdict {
    /// `same calls`, `same calls, different order`, …
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Same => "same calls",
            Verdict::DifferentOrder => "same calls, different order",
            Verdict::DifferentBatches => "same calls, different batches",
            Verdict::DifferentTimes => "same calls, at different times",
            Verdict::DifferentCalls => "different calls",
        }
    }
}

/// How one subject of one resource compares across stacks: the verdict, its counts, and every
/// difference of every stack with the baseline.
#[derive(Debug, Clone)]
pub struct SubjectComparison {
    /// The resource.
    pub resource: String,
    /// What the calls were made to.
    pub subject: Subject,
    /// Over every stack.
    pub verdict: Verdict,
    /// Each stack's number of calls, in stack order.
    pub calls: Vec<(String, usize)>,
    /// The differences named, stack by stack, in the baseline's order: the first
    /// [`NAMED_PER_STACK`] of each stack.
    pub differences: Vec<Difference>,
    /// How many differences of each kind there were, named or not.
    pub counts: Vec<(DifferenceKind, usize)>,
    /// Differences counted and not named (beyond [`NAMED_PER_STACK`] for a stack).
    pub unnamed: usize,
}

/// How many differences of one stack from the baseline are named; the rest are counted. Two
/// queues that pop a long stream apart differ at almost every pop, and a list of a million
/// differences says no more than its first ones and its count.
pub const NAMED_PER_STACK: usize = 100;

impl SubjectComparison {
    /// Differences of `kind`.
    pub fn count(&self, kind: DifferenceKind) -> usize {
        self.counts
            .iter()
            .filter(|(k, _)| *k == kind)
            .map(|(_, n)| n)
            .sum()
    }

    /// `handler h: different calls (latest: 1 missing, 2 extra, 1 changed)`.
    pub fn summary_line(&self) -> String {
        let mut line = format!("{}: {}", self.subject.describe(), self.verdict.as_str());
        if self.verdict == Verdict::Same {
            return line;
        }
        let counts: Vec<String> = [
            (DifferenceKind::Missing, "missing"),
            (DifferenceKind::Extra, "extra"),
            (DifferenceKind::Changed, "changed"),
            (DifferenceKind::Moved, "moved"),
            (DifferenceKind::Batch, "in other pops"),
            (DifferenceKind::Time, "at other times"),
        ]
        .into_iter()
        .filter_map(|(kind, word)| {
            let n = self.count(kind);
            (n > 0).then(|| format!("{n} {word}"))
        })
        .collect();
        line.push_str(&format!(" ({})", counts.join(", ")));
        line
    }
}

/// Compares one subject of one resource across `stacks` (name and calls, the baseline first).
/// `batches`: pops are compared too (the pops stream, a plain informer's handler); `times`:
/// reconciles' times are, and differ when more than this apart (zero on a replay's clock; live,
/// two stacks' workers run a few milliseconds apart).
pub fn compare_subject(
    resource: &str,
    subject: Subject,
    stacks: &[(&str, &[Call])],
    batches: bool,
    times: Option<Duration>,
) -> SubjectComparison {
    let mut differences = Vec::new();
    let mut counts: Vec<(DifferenceKind, usize)> = Vec::new();
    let mut unnamed = 0;
    if let Some(((baseline, base_calls), others)) = stacks.split_first() {
        for (stack, calls) in others {
            let found = compare_stacks((baseline, base_calls), (stack, calls), batches, times);
            for kind in found.kinds() {
                match counts.iter_mut().find(|(k, _)| *k == kind) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((kind, 1)),
                }
            }
            unnamed += found.len().saturating_sub(NAMED_PER_STACK);
            differences.extend(found.named(NAMED_PER_STACK));
        }
    }
    let has = |kind| counts.iter().any(|(k, n)| *k == kind && *n > 0);
    let verdict = if has(DifferenceKind::Missing)
        || has(DifferenceKind::Extra)
        || has(DifferenceKind::Changed)
    {
        Verdict::DifferentCalls
    } else if has(DifferenceKind::Moved) {
        Verdict::DifferentOrder
    } else if has(DifferenceKind::Batch) {
        Verdict::DifferentBatches
    } else if has(DifferenceKind::Time) {
        Verdict::DifferentTimes
    } else {
        Verdict::Same
    };
    SubjectComparison {
        resource: resource.to_owned(),
        subject,
        verdict,
        calls: stacks
            .iter()
            .map(|(stack, calls)| ((*stack).to_owned(), calls.len()))
            .collect(),
        differences,
        counts,
        unnamed,
    }
}

#[cfg(test)]
mod tests;
