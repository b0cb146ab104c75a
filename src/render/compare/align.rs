//! Two stacks' calls aligned, and each difference named (see the invariants in `mod.rs`).

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::time::Duration;

use super::{Call, Identity};

/// What kind of difference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DifferenceKind {
    /// The baseline made the call, the other stack did not.
    Missing,
    /// The other stack made a call the baseline did not.
    Extra,
    /// Both made a call of this key here, differing in type, tombstone, isSync,
    /// resourceVersion or result.
    Changed,
    /// The same call, made elsewhere in the sequence.
    Moved,
    /// The same call at the same place, in other pops.
    Batch,
    /// The same reconcile at the same place, at another time.
    Time,
}

impl DifferenceKind {
    /// As JSON lines name it.
    pub fn as_str(self) -> &'static str {
        match self {
            DifferenceKind::Missing => "missing",
            DifferenceKind::Extra => "extra",
            DifferenceKind::Changed => "changed",
            DifferenceKind::Moved => "order",
            DifferenceKind::Batch => "batch",
            DifferenceKind::Time => "time",
        }
    }
}

/// One difference between the baseline and another stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// What kind.
    pub kind: DifferenceKind,
    /// The baseline stack.
    pub baseline_stack: String,
    /// The other stack.
    pub stack: String,
    /// The key concerned.
    pub key: String,
    /// What the baseline did, if anything.
    pub baseline: Option<Call>,
    /// What the other stack did, if anything.
    pub other: Option<Call>,
    /// What the other stack did differently, in a few words: `delivered 3 calls earlier`.
    pub what: String,
    /// Where in the baseline's sequence (for order).
    at: usize,
}

/// Above this many cells the alignment is greedy rather than a longest common subsequence.
const MAX_TABLE: usize = 16 << 20;

/// The pairs of indices of `a` and `b` holding items of the same `identity`, in order: a longest
/// common subsequence, after the common prefix and suffix; greedy where the table would be too
/// big. Calls here, timeline rows for `--compare`'s side-by-side timeline.
pub(crate) fn align_by<'a, T, K: Eq + Hash>(
    a: &'a [T],
    b: &'a [T],
    identity: impl Fn(&'a T) -> K,
) -> Vec<(usize, usize)> {
    align(a, b, identity, true)
}

/// [`align_by`] for sequences whose ends are not yet known (one stack may not have written its
/// latest rows yet): no common suffix is taken first, which would pair the shorter side's last
/// item with the longer side's last of its identity rather than its first.
pub(crate) fn align_from_start<'a, T, K: Eq + Hash>(
    a: &'a [T],
    b: &'a [T],
    identity: impl Fn(&'a T) -> K,
) -> Vec<(usize, usize)> {
    align(a, b, identity, false)
}

fn align<'a, T, K: Eq + Hash>(
    a: &'a [T],
    b: &'a [T],
    identity: impl Fn(&'a T) -> K,
    suffix: bool,
) -> Vec<(usize, usize)> {
    let same = |x: &'a T, y: &'a T| identity(x) == identity(y);
    let prefix = a.iter().zip(b).take_while(|(x, y)| same(x, y)).count();
    let suffix = if suffix {
        (a[prefix..].iter().rev())
            .zip(b[prefix..].iter().rev())
            .take_while(|(x, y)| same(x, y))
            .count()
    } else {
        0
    };
    let (middle_a, middle_b) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut pairs: Vec<(usize, usize)> = (0..prefix).map(|i| (i, i)).collect();
    let (n, m) = (middle_a.len(), middle_b.len());
    if n > 0 && m > 0 {
        let inner = if (n + 1).saturating_mul(m + 1) <= MAX_TABLE {
            lcs(middle_a, middle_b, same)
        } else {
            greedy(middle_a, middle_b, &identity)
        };
        pairs.extend(inner.into_iter().map(|(i, j)| (i + prefix, j + prefix)));
    }
    pairs.extend((0..suffix).map(|k| (a.len() - suffix + k, b.len() - suffix + k)));
    pairs
}

fn lcs<'a, T>(a: &'a [T], b: &'a [T], same: impl Fn(&'a T, &'a T) -> bool) -> Vec<(usize, usize)> {
    let (n, m) = (a.len(), b.len());
    let width = m + 1;
    // table[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut table = vec![0u32; (n + 1) * width];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            table[i * width + j] = if same(&a[i], &b[j]) {
                table[(i + 1) * width + j + 1] + 1
            } else {
                table[(i + 1) * width + j].max(table[i * width + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut pairs = Vec::new();
    while i < n && j < m {
        if same(&a[i], &b[j]) {
            pairs.push((i, j));
            i += 1;
            j += 1;
        } else if table[(i + 1) * width + j] >= table[i * width + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    pairs
}

/// Each item of `a` paired with the next of the same identity in `b`, if any: found through an
/// index of `b`'s, so that a long run of items only one side has costs no scan of the other.
fn greedy<'a, T, K: Eq + Hash>(
    a: &'a [T],
    b: &'a [T],
    identity: &impl Fn(&'a T) -> K,
) -> Vec<(usize, usize)> {
    let mut positions: HashMap<K, Vec<usize>> = HashMap::new();
    for (j, item) in b.iter().enumerate() {
        positions.entry(identity(item)).or_default().push(j);
    }
    let mut pairs = Vec::new();
    let mut from = 0;
    for (i, item) in a.iter().enumerate() {
        let Some(at) = positions.get(&identity(item)) else {
            continue;
        };
        if let Some(&j) = at.get(at.partition_point(|&j| j < from)) {
            pairs.push((i, j));
            from = j + 1;
        }
    }
    pairs
}

/// For each of `len` calls, how many of the `aligned` ones (in order) come before it: the gap
/// between aligned calls it sits in.
fn gaps(len: usize, aligned: impl Iterator<Item = usize>) -> Vec<usize> {
    let mut is_aligned = vec![false; len];
    for k in aligned {
        is_aligned[k] = true;
    }
    let mut before = 0;
    is_aligned
        .into_iter()
        .map(|aligned| {
            let gap = before;
            before += usize::from(aligned);
            gap
        })
        .collect()
}

fn calls(n: usize) -> String {
    format!("{n} call{}", if n == 1 { "" } else { "s" })
}

/// The differences of one stack from the baseline: each found cheaply (its kind, place and
/// calls), named ([`Difference`]) only when shown: two queues that pop a long stream apart differ
/// at almost every pop, and most differences are only counted.
pub struct StackDifferences<'a> {
    baseline: (&'a str, &'a [Call]),
    other: (&'a str, &'a [Call]),
    /// In the baseline's order.
    found: Vec<Found>,
}

/// A difference found: its kind, its place in the baseline, the calls of each side (indices).
struct Found {
    kind: DifferenceKind,
    at: usize,
    baseline: Option<usize>,
    other: Option<usize>,
    what: What,
}

/// What the other stack did differently, to be said in words ([`What::say`]).
enum What {
    /// The same call, this many places later (negative: earlier) in the baseline's order.
    Shift(isize),
    Changed,
    Missing,
    Extra,
    /// Popped with the call before (`true`) or apart from it.
    Popped(bool),
    /// Made this much later (`true`) or earlier.
    Apart(Duration, bool),
}

impl What {
    fn say(&self, baseline: Option<&Call>, other: Option<&Call>) -> String {
        match (self, baseline, other) {
            (What::Shift(shift), ..) if *shift < 0 => {
                format!("delivered {} earlier", calls(shift.unsigned_abs()))
            }
            (What::Shift(shift), ..) => {
                format!("delivered {} later", calls(shift.unsigned_abs().max(1)))
            }
            (What::Changed, Some(a), Some(b)) => {
                format!("{} instead ({})", b.text(), a.what_differs(b))
            }
            (What::Missing, Some(a), _) if a.is_deletion_reconcile() => {
                "the deletion never reconciled".to_owned()
            }
            (What::Missing | What::Changed, ..) => "not made".to_owned(),
            (What::Extra, ..) => "made only here".to_owned(),
            (What::Popped(true), ..) => "popped with the call before".to_owned(),
            (What::Popped(false), ..) => "popped apart from the call before".to_owned(),
            (What::Apart(by, true), ..) => format!("made {} later", millis(*by)),
            (What::Apart(by, false), ..) => format!("made {} earlier", millis(*by)),
        }
    }
}

impl StackDifferences<'_> {
    /// How many there are.
    pub fn len(&self) -> usize {
        self.found.len()
    }

    /// Whether the stacks made the same calls (in the same pops, at the same times, as asked).
    pub fn is_empty(&self) -> bool {
        self.found.is_empty()
    }

    /// The kinds of the differences, in the baseline's order.
    pub fn kinds(&self) -> impl Iterator<Item = DifferenceKind> + '_ {
        self.found.iter().map(|f| f.kind)
    }

    /// The first `n`, in the baseline's order, named.
    pub fn named(&self, n: usize) -> Vec<Difference> {
        let ((base_name, a), (name, b)) = (self.baseline, self.other);
        (self.found.iter().take(n))
            .map(|found| {
                let base = found.baseline.map(|i| &a[i]);
                let mine = found.other.map(|j| &b[j]);
                Difference {
                    kind: found.kind,
                    baseline_stack: base_name.to_owned(),
                    stack: name.to_owned(),
                    key: base.or(mine).map(|c| c.key.clone()).unwrap_or_default(),
                    baseline: base.cloned(),
                    other: mine.cloned(),
                    what: found.what.say(base, mine),
                    at: found.at,
                }
            })
            .collect()
    }
}

/// Every difference of `other` from `baseline` (each a stack's name and calls). `batches`:
/// aligned calls that came in other pops are found; `times`: aligned calls made more than this
/// apart are.
pub fn compare_stacks<'a>(
    baseline: (&'a str, &'a [Call]),
    other: (&'a str, &'a [Call]),
    batches: bool,
    times: Option<Duration>,
) -> StackDifferences<'a> {
    let ((_, a), (_, b)) = (baseline, other);
    let pairs = align_by(a, b, Call::identity);
    let mut a_free = vec![true; a.len()];
    let mut b_free = vec![true; b.len()];
    for &(i, j) in &pairs {
        a_free[i] = false;
        b_free[j] = false;
    }
    let found = |kind, at, baseline, other, what| Found {
        kind,
        at,
        baseline,
        other,
        what,
    };
    let mut differences = Vec::new();
    let (gap_a, gap_b) = (
        gaps(a.len(), pairs.iter().map(|p| p.0)),
        gaps(b.len(), pairs.iter().map(|p| p.1)),
    );
    // Where, in the baseline's order, each call of `b` sits: after the aligned call before it.
    let place_of_b = |j: usize| match gap_b[j] {
        0 => 0,
        gap => pairs[gap - 1].0 + 1,
    };
    // The same call elsewhere: a change of order.
    let mut elsewhere: HashMap<Identity<'_>, VecDeque<usize>> = HashMap::new();
    for j in (0..b.len()).filter(|j| b_free[*j]) {
        elsewhere.entry(b[j].identity()).or_default().push_back(j);
    }
    for i in 0..a.len() {
        if !a_free[i] {
            continue;
        }
        let Some(j) = elsewhere
            .get_mut(&a[i].identity())
            .and_then(VecDeque::pop_front)
        else {
            continue;
        };
        a_free[i] = false;
        b_free[j] = false;
        let shift = place_of_b(j) as isize - i as isize;
        differences.push(found(
            DifferenceKind::Moved,
            i,
            Some(i),
            Some(j),
            What::Shift(shift),
        ));
    }
    // A call of the same key between the same aligned calls: a changed call.
    let mut here: HashMap<(&str, usize), VecDeque<usize>> = HashMap::new();
    for j in (0..b.len()).filter(|j| b_free[*j]) {
        here.entry((&b[j].key, gap_b[j])).or_default().push_back(j);
    }
    for i in 0..a.len() {
        if !a_free[i] {
            continue;
        }
        let Some(j) = here
            .get_mut(&(a[i].key.as_str(), gap_a[i]))
            .and_then(VecDeque::pop_front)
        else {
            continue;
        };
        a_free[i] = false;
        b_free[j] = false;
        differences.push(found(
            DifferenceKind::Changed,
            i,
            Some(i),
            Some(j),
            What::Changed,
        ));
    }
    for i in (0..a.len()).filter(|i| a_free[*i]) {
        differences.push(found(
            DifferenceKind::Missing,
            i,
            Some(i),
            None,
            What::Missing,
        ));
    }
    for j in (0..b.len()).filter(|j| b_free[*j]) {
        let at = place_of_b(j);
        differences.push(found(DifferenceKind::Extra, at, None, Some(j), What::Extra));
    }
    differences.extend(aligned_differences(a, b, &pairs, batches, times));
    differences.sort_by_key(|d| d.at);
    StackDifferences {
        baseline,
        other,
        found: differences,
    }
}

/// Of the aligned calls (`pairs` of `a` and `b`): those popped with the call before on one side
/// and apart from it on the other (`batches`), and those made more than `times` apart.
fn aligned_differences(
    a: &[Call],
    b: &[Call],
    pairs: &[(usize, usize)],
    batches: bool,
    times: Option<Duration>,
) -> Vec<Found> {
    let mut differences = Vec::new();
    for window in pairs.windows(2) {
        let ((i0, j0), (i, j)) = (window[0], window[1]);
        if !batches || i != i0 + 1 || j != j0 + 1 {
            continue;
        }
        let (with_a, with_b) = (a[i].pop == a[i0].pop, b[j].pop == b[j0].pop);
        if with_a != with_b {
            differences.push(Found {
                kind: DifferenceKind::Batch,
                at: i,
                baseline: Some(i),
                other: Some(j),
                what: What::Popped(with_b),
            });
        }
    }
    if let Some(tolerance) = times {
        for &(i, j) in pairs {
            let (apart, later) = match b[j].time.duration_since(a[i].time) {
                Ok(later) => (later, true),
                Err(earlier) => (earlier.duration(), false),
            };
            if apart.is_zero() || apart <= tolerance {
                continue;
            }
            differences.push(Found {
                kind: DifferenceKind::Time,
                at: i,
                baseline: Some(i),
                other: Some(j),
                what: What::Apart(apart, later),
            });
        }
    }
    differences
}

fn millis(duration: Duration) -> String {
    humantime::format_duration(Duration::from_millis(
        u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
    ))
    .to_string()
}
