//! What `--match`, `--types` and `--tombstones` (and, on `replay`, `-l`, `--field-selector`,
//! `--from` and `--to`) leave in the output: [`Narrow`].
//!
//! They narrow what is *shown*. The informer still lists, queues, pops and caches everything, the
//! handlers are still called for everything, and the summary counts every pop: a filter must not
//! change what the informer does, or the tool would no longer show what a controller sees.
//!
//! A pop is shown when every given filter lets it through; within one repeatable filter
//! (`--match a --match b`, `--types Added,Deleted`), any value will do. A whole-list pop
//! (`ReplacedAll`) is shown when one of its objects is.

use std::time::SystemTime;

use kubectl_deltas::Object;
use kubectl_deltas::cache::{Batch, Delta, DeltaType, IndexSpec, Notification};

use crate::cli::narrow::{Bound, NarrowArgs, ReplayNarrowArgs};
use kubectl_deltas::cache::KeyGlob;
use kubectl_deltas::source::selector::{
    FieldRequirement, LabelOperator, LabelRequirement, parse_field_selector, parse_label_selector,
};

/// The filters of one session; [`Narrow::default`] shows everything.
#[derive(Debug, Clone, Default)]
pub struct Narrow {
    /// `--match`: globs on the `namespace/name` key (`name` for cluster-scoped objects).
    globs: Vec<KeyGlob>,
    /// `--types`: delta types; empty for any.
    types: Vec<DeltaType>,
    /// `--tombstones`: only pops carrying a `DeletedFinalStateUnknown`.
    tombstones: bool,
    /// `-l` on replay: every requirement must hold.
    labels: Vec<LabelRequirement>,
    /// `--field-selector` on replay: every term must hold.
    fields: Vec<(IndexSpec, FieldRequirement)>,
    /// `--from` on replay, resolved against the recording's start.
    from: Option<Bound>,
    /// `--to` on replay.
    to: Option<Bound>,
}

impl Narrow {
    /// `--match`, `--types` and `--tombstones`.
    pub fn from_args(args: &NarrowArgs) -> Narrow {
        Narrow {
            globs: args.globs.clone(),
            types: args.types.clone(),
            tombstones: args.tombstones,
            ..Narrow::default()
        }
    }

    /// Adds `replay`'s client-side selectors (already checked with the API server's grammar by
    /// the flags' parsers) and its window.
    pub fn replay(mut self, args: &ReplayNarrowArgs) -> Result<Narrow, String> {
        if let Some(text) = &args.selector {
            self.labels = parse_label_selector(text).map_err(|e| e.to_string())?;
        }
        if let Some(text) = &args.field_selector {
            for term in parse_field_selector(text).map_err(|e| e.to_string())? {
                let spec = format!("field:{}", term.field)
                    .parse::<IndexSpec>()
                    .map_err(|e| format!("--field-selector {:?}: {e}", term.field))?;
                self.fields.push((spec, term));
            }
        }
        self.from = args.from;
        self.to = args.to;
        self.window_holds_something("")?;
        Ok(self)
    }

    /// Refuses a `--from` past its `--to` when the two compare: two offsets, two pop numbers,
    /// two times (an offset becomes a time once [`starting_at`](Self::starting_at) knows the
    /// recording's start). A pop number and a time do not compare before the replay: which pop
    /// comes at which time is what the replay finds out. Both ends are included, so equal ends
    /// show what is at that point.
    fn window_holds_something(&self, offsets: &str) -> Result<(), String> {
        let (Some(from), Some(to)) = (self.from, self.to) else {
            return Ok(());
        };
        let empty = match (from, to) {
            (Bound::At(from), Bound::At(to)) => from > to,
            (Bound::After(from), Bound::After(to)) => from > to,
            (Bound::Seq(from), Bound::Seq(to)) => from > to,
            _ => false,
        };
        if empty {
            return Err(format!(
                "--from {from} comes after --to {to}{offsets}, so the window shows nothing: give \
                 a --from at or before --to"
            ));
        }
        Ok(())
    }

    /// The first bound given as a pop number, as given (`--from '#12'`).
    pub fn pop_bound(&self) -> Option<String> {
        [("--from", self.from), ("--to", self.to)]
            .into_iter()
            .find_map(|(flag, bound)| match bound {
                Some(Bound::Seq(seq)) => Some(format!("{flag} '#{seq}'")),
                _ => None,
            })
    }

    /// Whether any filter is given.
    pub fn narrows(&self) -> bool {
        !self.globs.is_empty()
            || !self.types.is_empty()
            || self.tombstones
            || !self.labels.is_empty()
            || !self.fields.is_empty()
            || self.from.is_some()
            || self.to.is_some()
    }

    /// Resolves offsets (`+30s`) against the recording's start; refuses a window that the
    /// resolved ends show to be empty (an offset and a time).
    pub fn starting_at(mut self, start: SystemTime) -> Result<Narrow, String> {
        let offsets = self
            .from
            .iter()
            .chain(&self.to)
            .any(|b| matches!(b, Bound::After(_)));
        let resolve = |bound: Option<Bound>| match bound {
            Some(Bound::After(offset)) => Some(Bound::At(start + offset)),
            other => other,
        };
        self.from = resolve(self.from);
        self.to = resolve(self.to);
        if offsets {
            let start = Bound::At(start);
            self.window_holds_something(&format!(
                " (an offset counts from the recording's start, {start})"
            ))?;
        }
        Ok(self)
    }

    /// Whether pop `batch`, popped at `time`, is shown.
    pub fn shows(&self, batch: &Batch<Object>, time: SystemTime) -> bool {
        if !self.within(batch.seq, time) {
            return false;
        }
        if !self.types.is_empty() && !batch.deltas.iter().any(|d| self.types.contains(&d.type_)) {
            return false;
        }
        if self.tombstones && !batch.deltas.iter().any(|d| d.object.is_tombstone()) {
            return false;
        }
        if self.globs.is_empty() && self.labels.is_empty() && self.fields.is_empty() {
            return true;
        }
        let listed = batch.deltas.iter().flat_map(|d| {
            let list = d.object.list().into_iter().flat_map(|l| l.objects.iter());
            d.object.object().into_iter().chain(list)
        });
        // A whole-list resync or bookmark carries no object, so no object filter lets it through.
        listed.into_iter().any(|obj| self.shows_object(obj))
    }

    /// Whether `delta` of pop number `seq`, popped at `time`, is one the filters ask about: what
    /// [`shows`](Narrow::shows) asks of a pop, asked of this delta alone (`--compare` compares
    /// the deltas asked about, whichever pops they came in).
    pub fn shows_delta(&self, delta: &Delta<Object>, seq: u64, time: SystemTime) -> bool {
        if !self.within(seq, time)
            || (!self.types.is_empty() && !self.types.contains(&delta.type_))
            || (self.tombstones && !delta.object.is_tombstone())
        {
            return false;
        }
        if self.globs.is_empty() && self.labels.is_empty() && self.fields.is_empty() {
            return true;
        }
        let list = delta
            .object
            .list()
            .into_iter()
            .flat_map(|l| l.objects.iter());
        let mut listed = delta.object.object().into_iter().chain(list);
        listed.any(|obj| self.shows_object(obj))
    }

    /// Whether a handler's notification, from pop number `seq` at `time`, is shown: as for
    /// pops, by its objects and window, and by the deltas that can make it, as client-go's
    /// `processDeltas` turns deltas into calls (v0.34.0 `tools/cache/controller.go`): `Deleted`
    /// makes an `OnDelete` (a tombstone's for `--tombstones`), every other type an `OnAdd` or an
    /// `OnUpdate`, depending on whether the cache held the object.
    pub fn shows_notification(
        &self,
        notification: &Notification<Object>,
        seq: u64,
        time: SystemTime,
    ) -> bool {
        if !self.within(seq, time) {
            return false;
        }
        let (deletion, tombstone) = match notification {
            Notification::Delete { obj } => (true, obj.is_tombstone()),
            _ => (false, false),
        };
        if self.tombstones && !tombstone {
            return false;
        }
        let made_by = |t: &DeltaType| (*t == DeltaType::Deleted) == deletion;
        if !self.types.is_empty() && !self.types.iter().any(made_by) {
            return false;
        }
        let objects: [Option<&std::sync::Arc<Object>>; 2] = match notification {
            Notification::Add { obj, .. } => [Some(obj), None],
            Notification::Update { old, new } => [Some(new), Some(old)],
            Notification::Delete { obj } => [obj.object(), None],
        };
        let mut objects = objects.into_iter().flatten().peekable();
        objects.peek().is_none() || objects.any(|obj| self.shows_object(obj))
    }

    /// Whether a row of a controller's reconcile of `key` at `time` (its start's, or its end's)
    /// is shown: by `--match` on its key and by a `--from`/`--to` time window. A reconcile carries no delta, no object and no
    /// pop number, so `--types`, `--tombstones`, `-l`, `--field-selector` and a `#seq` bound do
    /// not apply to it.
    pub fn shows_reconcile(&self, key: &str, time: SystemTime) -> bool {
        let after_from = match self.from {
            Some(Bound::At(from)) => time >= from,
            _ => true,
        };
        let before_to = match self.to {
            Some(Bound::At(to)) => time <= to,
            _ => true,
        };
        after_from
            && before_to
            && (self.globs.is_empty() || self.globs.iter().any(|g| g.matches(key)))
    }

    fn within(&self, seq: u64, time: SystemTime) -> bool {
        let after_from = match self.from {
            None | Some(Bound::After(_)) => true,
            Some(Bound::At(from)) => time >= from,
            Some(Bound::Seq(from)) => seq >= from,
        };
        let before_to = match self.to {
            None | Some(Bound::After(_)) => true,
            Some(Bound::At(to)) => time <= to,
            Some(Bound::Seq(to)) => seq <= to,
        };
        after_from && before_to
    }

    fn shows_object(&self, obj: &Object) -> bool {
        let key = match obj.namespace() {
            Some(ns) if !ns.is_empty() => format!("{ns}/{}", obj.name().unwrap_or_default()),
            _ => obj.name().unwrap_or_default().to_owned(),
        };
        (self.globs.is_empty() || self.globs.iter().any(|g| g.matches(&key)))
            && self.labels.iter().all(|r| label_matches(r, obj))
            && self.fields.iter().all(|(spec, term)| {
                let values = spec.values(obj);
                // A missing field reads as empty, as the API server's field sets give `""`
                // for an unset field such as an unscheduled pod's spec.nodeName.
                let equal = if values.is_empty() {
                    term.value.is_empty()
                } else {
                    values.iter().any(|v| *v == term.value)
                };
                equal != term.negated
            })
    }
}

/// apimachinery's `labels.Requirement.Matches` (`pkg/labels/selector.go`, v0.34.0).
fn label_matches(requirement: &LabelRequirement, obj: &Object) -> bool {
    let value = obj.label(&requirement.key);
    let listed = |v: &str| requirement.values.iter().any(|x| x == v);
    match requirement.operator {
        LabelOperator::Exists => value.is_some(),
        LabelOperator::DoesNotExist => value.is_none(),
        LabelOperator::Equals | LabelOperator::DoubleEquals | LabelOperator::In => {
            value.is_some_and(|v| listed(&v))
        }
        LabelOperator::NotEquals | LabelOperator::NotIn => value.is_none_or(|v| !listed(&v)),
        LabelOperator::GreaterThan | LabelOperator::LessThan => {
            // Both sides must be integers; the parser checked the requirement's one.
            let (Some(have), Some(bound)) = (
                value.and_then(|v| v.parse::<i64>().ok()),
                requirement
                    .values
                    .first()
                    .and_then(|v| v.parse::<i64>().ok()),
            ) else {
                return false;
            };
            if requirement.operator == LabelOperator::GreaterThan {
                have > bound
            } else {
                have < bound
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_keys() {
        let matches = |glob: &str, key: &str| KeyGlob::parse(glob).unwrap().matches(key);
        assert!(matches("demo/*", "demo/worker-1"));
        assert!(matches("*/worker-?", "demo/worker-1"));
        assert!(matches("*worker*", "demo/worker-10"));
        assert!(matches("node-a", "node-a"));
        assert!(matches("*", ""));
        assert!(!matches("demo/*", "other/worker-1"));
        assert!(!matches("*/worker-?", "demo/worker-10"));
        assert!(!matches("worker", "demo/worker"));
        assert!(matches("a*b*c", "aXbYbZc"));
        assert!(!matches("a*b*c", "aXbYbZ"));
    }

    /// `fail-keys=` of a `--controller` is matched with the same glob as `--match`.
    #[test]
    fn fail_keys_globs_match_whole_keys() {
        let glob = |g: &str| {
            let arg = crate::cli::parse_controller(&format!("w,fail=1,fail-keys={g}")).unwrap();
            super::super::ControllerSpec::from(&arg).fail_keys.unwrap()
        };
        let matches = |g: &str, key: &str| glob(g).matches(key);
        assert!(matches("default/a", "default/a"));
        assert!(!matches("default/a", "default/ab"));
        assert!(!matches("default/a", "xdefault/a"));
        assert!(matches("*/web-?", "prod/web-1"));
        assert!(!matches("*/web-?", "prod/web-12"));
        assert!(matches("*web*", "prod/old-web-1"));
        assert!(matches("a*b*c", "aXbYbZc"));
        assert!(!matches("a*b*c", "aXbYbZ"));
        assert!(matches("*", ""));
    }
}
