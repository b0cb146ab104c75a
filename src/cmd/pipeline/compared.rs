//! What a session with `--compare` keeps of each lane to compare the stacks at its end: the calls
//! each lane's queue, handlers and controllers made about what the session's filters ask
//! (`--match`, `--types`, `-l`, a window) ([`render::compare`](kubectl_deltas::render::compare)
//! names the differences).

use std::collections::BTreeMap;
use std::time::Duration;

use kubectl_deltas::Object;
use kubectl_deltas::cache::{Batch, Delta};
use kubectl_deltas::render::NotificationView;
use kubectl_deltas::render::compare::{
    Call, Subject, SubjectComparison, Verdict, compare_subject, notification_call, pop_calls,
    reconcile_call,
};
use kubectl_deltas::render::reconcile::ReconcileView;

/// The calls of every lane, and, once concluded, how the stacks compare.
pub(super) struct Compared {
    /// Each lane's stack, in lane order; a resource's lanes are consecutive.
    labels: Vec<String>,
    /// Stacks per resource.
    stacks: usize,
    /// Each lane's calls, by what they were made to.
    calls: Vec<BTreeMap<Subject, Vec<Call>>>,
    /// Once concluded: every subject of every resource.
    results: Option<Vec<SubjectComparison>>,
    /// How far apart two stacks' reconciles may start and count as at the same time.
    same_time: Duration,
}

impl Compared {
    /// For lanes of these stacks (in lane order), `stacks` to a resource; reconciles up to
    /// `same_time` apart are at the same time.
    pub(super) fn new(labels: Vec<String>, stacks: usize, same_time: Duration) -> Self {
        Compared {
            calls: vec![BTreeMap::new(); labels.len()],
            labels,
            stacks: stacks.max(1),
            results: None,
            same_time,
        }
    }

    fn lane(&mut self, lane: usize, subject: Subject) -> Option<&mut Vec<Call>> {
        Some(self.calls.get_mut(lane)?.entry(subject).or_default())
    }

    /// Lane `lane` has these handlers or controllers: they are compared, calls or none.
    pub(super) fn registered(&mut self, lane: usize, subjects: impl Iterator<Item = Subject>) {
        for subject in subjects {
            self.lane(lane, subject);
        }
    }

    /// Lane `lane` popped `batch`: its deltas that `asked` about (the session's filters).
    pub(super) fn pop(
        &mut self,
        lane: usize,
        batch: &Batch<Object>,
        asked: impl Fn(&Delta<Object>) -> bool,
    ) {
        if let Some(calls) = self.lane(lane, Subject::Pops) {
            let deltas = batch.deltas.iter();
            let popped = pop_calls(batch).into_iter().zip(deltas);
            calls.extend(
                popped
                    .filter(|(_, delta)| asked(delta))
                    .map(|(call, _)| call),
            );
        }
    }

    /// A handler of lane `lane` was called.
    pub(super) fn notification(&mut self, lane: usize, view: &NotificationView<'_>) {
        let subject = Subject::Handler(view.handler.to_owned());
        if let Some(calls) = self.lane(lane, subject) {
            calls.push(notification_call(view));
        }
    }

    /// A controller of lane `lane` reconciled.
    pub(super) fn reconcile(&mut self, lane: usize, view: &ReconcileView<'_>) {
        let subject = Subject::Controller(view.start.controller.to_owned());
        if let Some(calls) = self.lane(lane, subject) {
            calls.push(reconcile_call(view));
        }
    }

    /// How the stacks compare, resource by resource (`names`: each lane's resource): each
    /// handler and controller, or, where there is none, the pops. Computed once.
    pub(super) fn conclude(&mut self, names: &[String]) -> &[SubjectComparison] {
        if self.results.is_none() {
            let mut results = Vec::new();
            for (resource, lanes) in (self.calls.chunks(self.stacks)).enumerate() {
                let mut subjects: Vec<&Subject> = lanes.iter().flat_map(|l| l.keys()).collect();
                subjects.sort();
                subjects.dedup();
                if subjects.iter().any(|s| **s != Subject::Pops) {
                    subjects.retain(|s| **s != Subject::Pops);
                }
                // A handler is compared only where every stack registered it: one that some
                // stack has not is a client-go controller's (its own, or on a resource it
                // owns) where that stack runs the controller on kube-runtime, which reads the
                // Reflector's stream instead; the controllers' reconciles compare them.
                subjects.retain(|s| {
                    !matches!(s, Subject::Handler(_))
                        || lanes.iter().all(|lane| lane.contains_key(*s))
                });
                let first = resource * self.stacks;
                let name = names.get(first).map_or("", String::as_str);
                for subject in subjects {
                    let stacks: Vec<(&str, &[Call])> = (lanes.iter().enumerate())
                        .map(|(i, lane)| {
                            let calls = lane.get(subject).map_or(&[][..], Vec::as_slice);
                            (self.labels[first + i].as_str(), calls)
                        })
                        .collect();
                    let batches = *subject == Subject::Pops;
                    let times = matches!(subject, Subject::Controller(_)).then_some(self.same_time);
                    results.push(compare_subject(
                        name,
                        subject.clone(),
                        &stacks,
                        batches,
                        times,
                    ));
                }
            }
            self.results = Some(results);
        }
        self.results.as_deref().unwrap_or_default()
    }

    /// How the stacks compared ([`conclude`](Compared::conclude)); empty before.
    pub(super) fn results(&self) -> &[SubjectComparison] {
        self.results.as_deref().unwrap_or_default()
    }

    /// The summary's verdicts, one line each: `pods: handler h: same calls, different order (1
    /// moved)`; nothing before [`conclude`](Compared::conclude).
    pub(super) fn summary_lines(&self) -> String {
        let mut text = String::new();
        for result in self.results() {
            text.push_str(&format!(
                "compare {}: {}: {}\n",
                self.labels[..self.stacks].join(" vs "),
                result.resource,
                result.summary_line()
            ));
        }
        text
    }

    /// The stacks differ somewhere (after [`conclude`](Compared::conclude)).
    pub(super) fn differ(&self) -> bool {
        (self.results.iter().flatten()).any(|r| r.verdict != Verdict::Same)
    }
}
