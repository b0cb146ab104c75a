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
    let same = |x: &'a T, y: &'a T| identity(x) == identity(y);
    let prefix = a.iter().zip(b).take_while(|(x, y)| same(x, y)).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| same(x, y))
        .count();
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

/// Every difference of `other` from `baseline` (each a stack's name and calls). `batches`:
/// aligned calls that came in other pops are named; `times`: aligned calls made more than this
/// apart are.
pub fn compare_stacks(
    baseline: (&str, &[Call]),
    other: (&str, &[Call]),
    batches: bool,
    times: Option<Duration>,
) -> Vec<Difference> {
    let ((base_name, a), (name, b)) = (baseline, other);
    let pairs = align_by(a, b, Call::identity);
    let mut a_free = vec![true; a.len()];
    let mut b_free = vec![true; b.len()];
    for &(i, j) in &pairs {
        a_free[i] = false;
        b_free[j] = false;
    }
    let difference =
        |kind, at: usize, base: Option<&Call>, mine: Option<&Call>, what: String| Difference {
            kind,
            baseline_stack: base_name.to_owned(),
            stack: name.to_owned(),
            key: base.or(mine).map(|c| c.key.clone()).unwrap_or_default(),
            baseline: base.cloned(),
            other: mine.cloned(),
            what,
            at,
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
        let what = if shift < 0 {
            format!("delivered {} earlier", calls(shift.unsigned_abs()))
        } else {
            format!("delivered {} later", calls(shift.unsigned_abs().max(1)))
        };
        differences.push(difference(
            DifferenceKind::Moved,
            i,
            Some(&a[i]),
            Some(&b[j]),
            what,
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
        let what = format!("{} instead ({})", b[j].text(), a[i].what_differs(&b[j]));
        differences.push(difference(
            DifferenceKind::Changed,
            i,
            Some(&a[i]),
            Some(&b[j]),
            what,
        ));
    }
    for i in (0..a.len()).filter(|i| a_free[*i]) {
        let what = if a[i].is_deletion_reconcile() {
            "the deletion never reconciled".to_owned()
        } else {
            "not made".to_owned()
        };
        differences.push(difference(
            DifferenceKind::Missing,
            i,
            Some(&a[i]),
            None,
            what,
        ));
    }
    for j in (0..b.len()).filter(|j| b_free[*j]) {
        let what = "made only here".to_owned();
        differences.push(difference(
            DifferenceKind::Extra,
            place_of_b(j),
            None,
            Some(&b[j]),
            what,
        ));
    }
    differences.extend(aligned_differences(
        a,
        b,
        &pairs,
        batches,
        times,
        &difference,
    ));
    differences.sort_by_key(|d| d.at);
    differences
}

/// Makes a difference of its kind, its place in the baseline, what each side did and in words.
type MakeDifference<'a> =
    dyn Fn(DifferenceKind, usize, Option<&Call>, Option<&Call>, String) -> Difference + 'a;

/// Of the aligned calls (`pairs` of `a` and `b`): those popped with the call before on one side
/// and apart from it on the other (`batches`), and those made more than `times` apart, each
/// made a difference by `difference`.
fn aligned_differences(
    a: &[Call],
    b: &[Call],
    pairs: &[(usize, usize)],
    batches: bool,
    times: Option<Duration>,
    difference: &MakeDifference<'_>,
) -> Vec<Difference> {
    let mut differences = Vec::new();
    for window in pairs.windows(2) {
        let ((i0, j0), (i, j)) = (window[0], window[1]);
        if !batches || i != i0 + 1 || j != j0 + 1 {
            continue;
        }
        let (with_a, with_b) = (a[i].pop == a[i0].pop, b[j].pop == b[j0].pop);
        if with_a != with_b {
            let what = if with_b {
                "popped with the call before".to_owned()
            } else {
                "popped apart from the call before".to_owned()
            };
            differences.push(difference(
                DifferenceKind::Batch,
                i,
                Some(&a[i]),
                Some(&b[j]),
                what,
            ));
        }
    }
    if let Some(tolerance) = times {
        for &(i, j) in pairs {
            let (apart, what) = match b[j].time.duration_since(a[i].time) {
                Ok(later) => (later, format!("made {} later", millis(later))),
                Err(earlier) => {
                    let earlier = earlier.duration();
                    (earlier, format!("made {} earlier", millis(earlier)))
                }
            };
            if apart.is_zero() || apart <= tolerance {
                continue;
            }
            differences.push(difference(
                DifferenceKind::Time,
                i,
                Some(&a[i]),
                Some(&b[j]),
                what,
            ));
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
