//! `--compare`'s timeline: every stack's rows held until the stacks have caught up with each
//! other, then written once where every stack wrote them alike and under each stack's name where
//! they part.
//!
//! Invariants:
//! - Every row pushed is written exactly once per stack that wrote it, in each stack's own order:
//!   a row common to every stack once, unmarked (the baseline's text); any other row under its
//!   stack's name. Nothing held is lost: [`take`](SideBySide::take) with
//!   [`Release::Everything`] leaves nothing held.
//! - Rows are alike when their identities are equal: the caller leaves out of an identity what
//!   differs between stacks without being a difference of what they were told (times, pop
//!   numbers, waits, buffer depths).
//! - Rows are aligned by the same longest common subsequence as the calls ([`align_by`]), each
//!   stack with the baseline (the first stack); a row is common when the baseline's row is
//!   aligned with one in every other stack.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::align::{align_by, align_from_start};

/// One row a stack wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldRow {
    /// As it would have been written, without its newline.
    pub text: String,
    /// What makes it alike another stack's row.
    pub identity: String,
    /// A handler's call or a reconcile (counted in `N calls earlier`).
    pub call: bool,
}

impl HeldRow {
    fn identity(&self) -> &str {
        &self.identity
    }
}

/// How much of what is held [`take`](SideBySide::take) releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    /// Every row held: the stacks have caught up with each other (the end of a replay's turn, a
    /// quiet moment of a live session, the end of the session).
    Everything,
    /// The rows up to the last one common to every stack: the stacks may still be writing the
    /// rows after it.
    ThroughCommon,
}

/// What [`Renderer::align_stacks`](crate::render::Renderer::align_stacks) did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Aligned {
    /// Rows were written.
    pub wrote: bool,
    /// Rows are still held.
    pub holds: bool,
}

/// The rows every stack wrote since the last [`take`](SideBySide::take).
#[derive(Debug)]
pub struct SideBySide {
    /// Each stack's name, the baseline first.
    labels: Vec<String>,
    /// The widest name.
    width: usize,
    held: Vec<Vec<HeldRow>>,
    /// The legend is still to be written, before the first rows.
    legend_due: bool,
}

/// Where a stack's row sits in the rows taken: its stack and its index among that stack's rows.
type Place = (usize, usize);

impl SideBySide {
    /// For the stacks `labels`, the baseline first.
    pub fn new(labels: Vec<String>) -> Self {
        let width = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
        SideBySide {
            held: vec![Vec::new(); labels.len()],
            labels,
            width,
            legend_due: true,
        }
    }

    /// Stack `stack` (its position in the labels) wrote `row`.
    pub fn push(&mut self, stack: usize, row: HeldRow) {
        if let Some(rows) = self.held.get_mut(stack) {
            rows.push(row);
        }
    }

    /// The position of the stack `label`.
    pub fn position(&self, label: &str) -> Option<usize> {
        self.labels.iter().position(|l| l == label)
    }

    /// Whether any row is held.
    pub fn holds(&self) -> bool {
        self.held.iter().any(|rows| !rows.is_empty())
    }

    /// What a row common to every stack starts with: as wide as `1.32 │ `, blank.
    pub fn indent(&self) -> String {
        " ".repeat(self.width + 3)
    }

    /// The rows `release` lets go of, as lines to write (each ending in a newline), the rest
    /// kept: common rows once, the others under their stack's name, each stack's rows in its
    /// order.
    pub fn take(&mut self, release: Release) -> String {
        if !self.holds() {
            return String::new();
        }
        let stacks = self.held.len();
        // For each baseline row, its partner in each other stack, if any.
        let mut partners: Vec<Vec<Option<usize>>> = vec![vec![None; stacks]; self.held[0].len()];
        for (i, row) in partners.iter_mut().enumerate() {
            row[0] = Some(i);
        }
        let Some((baseline, others)) = self.held.split_first() else {
            return String::new();
        };
        // Everything held is all the stacks will write of these rows; what may still be followed
        // by rows a stack has yet to write is aligned from its start only.
        for (rows, other) in others.iter().zip(1..) {
            let pairs = match release {
                Release::Everything => align_by(baseline, rows, HeldRow::identity),
                Release::ThroughCommon => align_from_start(baseline, rows, HeldRow::identity),
            };
            for (i, j) in pairs {
                partners[i][other] = Some(j);
            }
        }
        // The rows common to every stack: each stack's index of it, in order.
        let common: Vec<Vec<usize>> = partners
            .iter()
            .filter_map(|p| p.iter().copied().collect::<Option<Vec<usize>>>())
            .collect();
        let ends: Vec<usize> = match release {
            Release::Everything => self.held.iter().map(Vec::len).collect(),
            Release::ThroughCommon => match common.last() {
                Some(last) => last.iter().map(|i| i + 1).collect(),
                None => return String::new(),
            },
        };
        let taken: Vec<Vec<HeldRow>> = (self.held.iter_mut())
            .zip(&ends)
            .map(|(rows, &end)| rows.drain(..end).collect())
            .collect();
        let common: Vec<&Vec<usize>> = common
            .iter()
            .filter(|c| c.iter().zip(&ends).all(|(i, end)| i < end))
            .collect();

        // The merged order: each gap's rows stack by stack, then the common row after it.
        let mut order: Vec<Option<Place>> = Vec::new();
        let mut from = vec![0; stacks];
        let gaps = common.iter().map(|c| Some(c.as_slice())).chain([None]);
        for anchor in gaps {
            for (stack, start) in from.iter_mut().enumerate() {
                let end = anchor.map_or(taken[stack].len(), |a| a[stack]);
                order.extend((*start..end).map(|i| Some((stack, i))));
                *start = end + 1;
            }
            if let Some(anchor) = anchor {
                order.push(None);
                order.push(Some((0, anchor[0])));
            }
        }
        self.write(&taken, &order)
    }

    /// The lines of `order`: a `None` marks the next place as common to every stack.
    fn write(&mut self, taken: &[Vec<HeldRow>], order: &[Option<Place>]) -> String {
        let stacks = taken.len();
        // Each stack's rows written before each place of the order, to say how far a row's
        // counterpart in another stack is.
        let mut text = String::new();
        if std::mem::take(&mut self.legend_due) {
            let baseline = &self.labels[0];
            let other = self.labels.get(1).unwrap_or(baseline);
            let _ = writeln!(
                text,
                "── compared: {}. A row every stack wrote alike is shown once, unmarked (with \
                 {baseline}'s times, pop numbers, waits and buffers); a row marked `{other} │` is \
                 that stack's alone, and says where the others wrote it (`│ {baseline} ─`: not \
                 near here)",
                self.labels.join(", "),
            );
        }
        // Each stack's calls before each of its rows: how far apart two rows are, in calls.
        let calls_before: Vec<Vec<usize>> = (taken.iter())
            .map(|rows| {
                let mut before = Vec::with_capacity(rows.len() + 1);
                let mut n = 0;
                before.push(0);
                for row in rows {
                    n += usize::from(row.call);
                    before.push(n);
                }
                before
            })
            .collect();
        let mut position: Vec<HashMap<&str, Vec<usize>>> = vec![HashMap::new(); stacks];
        let mut is_common = false;
        let mut seen = vec![0usize; stacks];
        let mut marked: Vec<(usize, usize, Vec<usize>)> = Vec::new();
        for place in order {
            let Some((stack, i)) = *place else {
                is_common = true;
                continue;
            };
            if is_common {
                for s in &mut seen {
                    *s += 1;
                }
                is_common = false;
                marked.push((usize::MAX, i, Vec::new()));
                continue;
            }
            let row = &taken[stack][i];
            position[stack]
                .entry(row.identity.as_str())
                .or_default()
                .push(i);
            marked.push((stack, i, seen.clone()));
            seen[stack] += 1;
        }
        for (stack, i, seen) in marked {
            if stack == usize::MAX {
                let _ = writeln!(text, "{}{}", self.indent(), taken[0][i].text);
                continue;
            }
            let row = &taken[stack][i];
            let label = &self.labels[stack];
            let _ = write!(text, "{label:<width$} │ {}", row.text, width = self.width);
            if row.call {
                for other in (0..stacks).filter(|&o| o != stack) {
                    let _ = write!(text, "  │ {}", self.labels[other]);
                    let found = position[other]
                        .get(row.identity.as_str())
                        .and_then(|at| nearest(at, seen[other]));
                    match found {
                        None => text.push_str(" ─"),
                        Some(j) => {
                            let said = distance(&calls_before[other], j, seen[other]);
                            let _ = write!(text, ": {said}");
                        }
                    }
                }
            }
            text.push('\n');
        }
        text
    }
}

/// Of the indices `at` (ascending), the one nearest `here`.
fn nearest(at: &[usize], here: usize) -> Option<usize> {
    let after = at.partition_point(|&j| j < here);
    let candidates = [after.checked_sub(1), Some(after)];
    (candidates.into_iter().flatten())
        .filter_map(|k| at.get(k).copied())
        .min_by_key(|&j| j.abs_diff(here))
}

/// How far a stack's row `j` is from `here` (the number of that stack's rows written before the
/// row in question), counted in its calls (`calls_before[k]`: its calls among its first `k`
/// rows): `3 calls earlier`, `1 call later`.
fn distance(calls_before: &[usize], j: usize, here: usize) -> String {
    let (between, word) = if j < here {
        (calls_before[here] - calls_before[j + 1], "earlier")
    } else {
        (calls_before[j] - calls_before[here], "later")
    };
    match between {
        0 => word.to_owned(),
        1 => format!("1 call {word}"),
        n => format!("{n} calls {word}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(text: &str) -> HeldRow {
        HeldRow {
            text: text.to_owned(),
            identity: text.to_owned(),
            call: text.starts_with('→'),
        }
    }

    fn side(rows: &[&[&str]]) -> SideBySide {
        let mut side = SideBySide::new(vec!["1.32".into(), "latest".into()]);
        side.legend_due = false;
        for (stack, rows) in rows.iter().enumerate() {
            for text in *rows {
                side.push(stack, row(text));
            }
        }
        side
    }

    #[test]
    fn rows_every_stack_wrote_alike_are_written_once_and_the_others_under_their_stack() {
        let mut side = side(&[
            &["list done", "#1 a Replaced", "→ OnAdd a", "→ OnDelete b"],
            &["list done", "#1 * ReplacedAll", "→ OnDelete b", "→ OnAdd a"],
        ]);
        let text = side.take(Release::Everything);
        assert_eq!(
            text,
            "         list done\n\
             1.32   │ #1 a Replaced\n\
             1.32   │ → OnAdd a  │ latest: 1 call later\n\
             latest │ #1 * ReplacedAll\n\
             \x20        → OnDelete b\n\
             latest │ → OnAdd a  │ 1.32: 1 call earlier\n"
        );
        assert!(!side.holds());
    }

    #[test]
    fn a_row_no_other_stack_wrote_says_so() {
        let mut side = side(&[&["→ OnDelete b", "synced"], &["synced"]]);
        assert_eq!(
            side.take(Release::Everything),
            "1.32   │ → OnDelete b  │ latest ─\n         synced\n"
        );
    }

    #[test]
    fn through_common_keeps_what_follows_the_last_common_row() {
        let mut side = side(&[&["a", "b", "c"], &["a", "x"]]);
        assert_eq!(side.take(Release::ThroughCommon), "         a\n");
        assert!(side.holds());
        side.push(1, row("c"));
        assert_eq!(
            side.take(Release::ThroughCommon),
            "1.32   │ b\nlatest │ x\n         c\n"
        );
        assert!(!side.holds());
    }

    /// A stack that has not written its latest rows yet: its row pairs with the first alike of
    /// the baseline's, not the last, and what follows waits for it.
    #[test]
    fn through_common_pairs_a_lagging_stacks_row_with_the_first_alike() {
        let mut side = side(&[&["Z", "→ A", "Y", "→ A"], &["→ A"]]);
        assert_eq!(
            side.take(Release::ThroughCommon),
            "1.32   │ Z\n         → A\n"
        );
        side.push(1, row("Y"));
        side.push(1, row("→ A"));
        assert_eq!(
            side.take(Release::ThroughCommon),
            "         Y\n         → A\n"
        );
        assert!(!side.holds());
    }

    #[test]
    fn nothing_common_releases_nothing_but_everything() {
        let mut side = side(&[&["a"], &["b"]]);
        assert_eq!(side.take(Release::ThroughCommon), "");
        assert_eq!(side.take(Release::Everything), "1.32   │ a\nlatest │ b\n");
    }

    #[test]
    fn three_stacks_write_a_row_two_share_under_each_name() {
        let mut side = SideBySide::new(vec!["a".into(), "b".into(), "c".into()]);
        side.legend_due = false;
        for (stack, text) in [(0, "x"), (1, "x"), (2, "y"), (0, "z"), (1, "z"), (2, "z")] {
            side.push(stack, row(text));
        }
        assert_eq!(
            side.take(Release::Everything),
            "a │ x\nb │ x\nc │ y\n    z\n"
        );
    }

    #[test]
    fn the_legend_comes_once_before_the_first_rows() {
        let mut side = SideBySide::new(vec!["1.32".into(), "latest".into()]);
        side.push(0, row("a"));
        side.push(1, row("a"));
        let first = side.take(Release::Everything);
        assert!(
            first.starts_with("── compared: 1.32, latest. A row"),
            "{first}"
        );
        assert!(first.ends_with("\n         a\n"), "{first}");
        side.push(0, row("b"));
        side.push(1, row("b"));
        assert_eq!(side.take(Release::Everything), "         b\n");
    }
}
