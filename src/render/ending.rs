//! How a session ended, when it left something unfinished: a Reflector in a backoff or before a
//! relist it had decided (the deletions of the gap not yet delivered as tombstones), reconciles
//! still running, keys still queued. Every renderer is told it once, after the last row
//! ([`Renderer::ended`](super::Renderer::ended)): the timeline as `──` rows, jsonl as an `ended`
//! record, the page in its caption; the summary on stderr ends with the same sentences.
//!
//! The Reflector's state is followed from its events alone ([`ReflectorState`]), so that a replay
//! tells the end of a recording as a watch tells its own.

use std::time::{Duration, SystemTime};

use serde::Serialize;

use super::duration::human_duration;
use super::{printable, rfc3339_micros};
use crate::cache::ReflectorEventKind;
use crate::cache::reflector::RelistCause;

/// Where a Reflector stood, followed from its events: what a session that ends now leaves undone.
#[derive(Debug, Clone, Default)]
pub struct ReflectorState {
    /// A relist was decided and its list not yet delivered; its cause. A list retry (a 410 on the
    /// list itself) is part of the same relist.
    relist: Option<RelistCause>,
    /// The latest backoff, `(began, delay)`, until the list or watch it delays starts.
    backoff: Option<(SystemTime, Duration)>,
    /// A backoff was caused by a failed list or watch (its phase), when no relist is pending.
    failed: Option<String>,
    /// A list was started and not yet delivered.
    listing: bool,
}

impl ReflectorState {
    /// Follows one event.
    pub fn record(&mut self, event: &ReflectorEventKind, at: SystemTime) {
        match event {
            ReflectorEventKind::Relist { cause } if !super::is_list_retry(cause) => {
                self.relist = Some(cause.clone());
            }
            ReflectorEventKind::Backoff { delay, phase, .. } => {
                self.backoff = Some((at, *delay));
                self.failed = Some(phase.to_string());
                self.listing = false;
            }
            ReflectorEventKind::ListStarted { .. } => {
                self.backoff = None;
                self.failed = None;
                self.listing = true;
            }
            ReflectorEventKind::WatchStarted { .. } => {
                self.backoff = None;
                self.failed = None;
            }
            ReflectorEventKind::ListDone { .. } => {
                *self = ReflectorState::default();
            }
            _ => {}
        }
    }

    /// What a session ending at `end` leaves undone, as a sentence after `ended` (`during a 29.0s
    /// backoff after 410: deletions during the gap are not yet seen`); `None` when the Reflector
    /// was listing nothing it owed, or watching.
    pub fn unfinished(&self, end: SystemTime) -> Option<String> {
        let backoff = self
            .backoff
            .filter(|(began, delay)| *began + *delay > end)
            .map(|(_, delay)| delay);
        let expired = matches!(
            self.relist,
            Some(
                RelistCause::WatchExpired | RelistCause::ListExpired | RelistCause::ContinueExpired
            )
        );
        let unseen = "deletions during the gap are not yet seen";
        match (backoff, &self.relist) {
            (Some(delay), Some(_)) if expired => Some(format!(
                "during a {} backoff after 410: {unseen}",
                human_duration(delay)
            )),
            (Some(delay), Some(cause)) => Some(format!(
                "during a {} backoff before a relist ({cause}): {unseen}",
                human_duration(delay)
            )),
            (Some(delay), None) => Some(format!(
                "during a {} backoff after a failed {}",
                human_duration(delay),
                self.failed.as_deref().unwrap_or("request")
            )),
            (None, Some(cause)) => {
                let when = if self.listing { "during" } else { "before" };
                if expired {
                    Some(format!("{when} the relist after 410: {unseen}"))
                } else {
                    Some(format!("{when} the relist ({cause}): {unseen}"))
                }
            }
            (None, None) => None,
        }
    }
}

/// What one controller left unfinished.
#[derive(Debug, Clone)]
pub struct ControllerEnd<'a> {
    /// Its name.
    pub controller: &'a str,
    /// Reconciles a worker had started and not finished.
    pub running: usize,
    /// Keys queued, or waiting for their time (a retry, a `requeue-after`).
    pub waiting: usize,
    /// `1 reconcile still running, 2 keys waiting`.
    pub text: String,
}

/// What one resource's informer and controllers left unfinished.
#[derive(Debug, Clone)]
pub struct ResourceEnd<'a> {
    /// The resource, as in [`BatchView::resource`](super::BatchView::resource).
    pub resource: &'a str,
    /// The Reflector's unfinished step, as a sentence after `ended`.
    pub reflector: Option<String>,
    /// The controllers with work left, in registration order.
    pub controllers: Vec<ControllerEnd<'a>>,
}

impl ResourceEnd<'_> {
    /// Whether anything was left unfinished.
    pub fn is_unfinished(&self) -> bool {
        self.reflector.is_some() || !self.controllers.is_empty()
    }

    /// The sentences, one per unfinished thing: `ended during a 29.0s backoff after 410: …`,
    /// `controller web: 1 reconcile still running, 2 keys waiting`.
    pub fn sentences(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(reflector) = &self.reflector {
            out.push(format!("ended {reflector}"));
        }
        for c in &self.controllers {
            out.push(format!(
                "ended with controller {}'s work unfinished: {}",
                printable(c.controller),
                c.text
            ));
        }
        out
    }
}

/// How the session ended, when it left something unfinished.
#[derive(Debug, Clone)]
pub struct SessionEnd<'a> {
    /// When it ended, by the informer's clock.
    pub time: SystemTime,
    /// The resources that left something unfinished, in the session's order.
    pub resources: Vec<ResourceEnd<'a>>,
}

impl SessionEnd<'_> {
    /// Whether there is anything to tell.
    pub fn is_unfinished(&self) -> bool {
        self.resources.iter().any(ResourceEnd::is_unfinished)
    }

    /// The summary's closing lines: each sentence, its resource first when several ran.
    pub fn summary_lines(&self, several: bool) -> String {
        let mut text = String::new();
        for resource in &self.resources {
            for sentence in resource.sentences() {
                if several {
                    text.push_str(&printable(resource.resource));
                    text.push_str(": ");
                }
                let mut chars = sentence.chars();
                if let Some(first) = chars.next() {
                    text.extend(first.to_uppercase());
                    text.push_str(chars.as_str());
                }
                text.push_str(".\n");
            }
        }
        text
    }
}

/// An `ended` JSON line (docs/jsonl.md): one per resource that left something unfinished.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EndedRecord<'a> {
    kind: &'static str,
    time: String,
    resource: &'a str,
    /// The Reflector's unfinished step, as the timeline says it.
    #[serde(skip_serializing_if = "Option::is_none")]
    reflector: Option<&'a str>,
    controllers: Vec<ControllerEndRecord<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ControllerEndRecord<'a> {
    controller: &'a str,
    running: usize,
    waiting: usize,
}

impl<'a> EndedRecord<'a> {
    pub(crate) fn new(time: SystemTime, end: &'a ResourceEnd<'a>) -> Self {
        EndedRecord {
            kind: "ended",
            time: rfc3339_micros(time),
            resource: end.resource,
            reflector: end.reflector.as_deref(),
            controllers: end
                .controllers
                .iter()
                .map(|c| ControllerEndRecord {
                    controller: c.controller,
                    running: c.running,
                    waiting: c.waiting,
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_millis(ms)
    }

    #[test]
    fn a_relist_after_410_not_yet_listed_says_deletions_are_not_yet_seen() {
        let mut state = ReflectorState::default();
        let relist = ReflectorEventKind::Relist {
            cause: RelistCause::WatchExpired,
        };
        state.record(&relist, at(1_000));
        assert_eq!(
            state.unfinished(at(1_000)).as_deref(),
            Some("before the relist after 410: deletions during the gap are not yet seen")
        );
        state.record(
            &ReflectorEventKind::ListStarted {
                resource_version: "1004".into(),
            },
            at(2_000),
        );
        assert_eq!(
            state.unfinished(at(2_000)).as_deref(),
            Some("during the relist after 410: deletions during the gap are not yet seen")
        );
    }

    #[test]
    fn a_finished_relist_leaves_nothing() {
        let mut state = ReflectorState::default();
        state.record(
            &ReflectorEventKind::Relist {
                cause: RelistCause::WatchExpired,
            },
            at(1_000),
        );
        state.record(
            &ReflectorEventKind::ListDone {
                items: 1,
                pages: 1,
                resource_version: "5".into(),
                duration: Duration::ZERO,
            },
            at(2_000),
        );
        assert_eq!(state.unfinished(at(3_000)), None);
    }
}
