//! kube-runtime's `watcher()` events (`src/watcher.rs`, 5.0.0), made from what the tool's
//! client-go Reflector did with the same server answers.
//!
//! What kube-runtime's `step` emits, and what it does on the answers the Reflector reports:
//!
//! | the Reflector | kube-runtime's watcher | translated as |
//! |---|---|---|
//! | a list (or a streaming list's initial events) replacing its store | `Init` (`State::Empty`), one `InitApply` per listed object (pages of 500), `InitDone` after the last | `Init`, `InitApply`…, `InitDone` |
//! | ADDED, MODIFIED | `Apply` | `Apply` |
//! | DELETED | `Delete` | `Delete` |
//! | BOOKMARK | the resourceVersion moves; no event | nothing |
//! | an ERROR event (410 or another code), a watch that broke | an error item (`WatchError`, `WatchFailed`) | `Error` |
//! | a list that failed | `InitialListFailed`, then `Init` again | `Error` |
//! | a watch that ended (closed) | `State::InitListed`: a new watch from the last resourceVersion, no relist | nothing |
//! | a relist after a very short watch, a watch that failed or could not be opened | no relist: a watch that ends or fails to start is resumed from the last resourceVersion (`State::InitListed`) | the relist's differences as that watch's events: `Apply` for each new or changed object, `Delete` for each gone, and a note |
//! | a relist after 410 or an interrupted streaming list | a relist from `State::Empty` | `Init`…`InitDone`, and a note naming the objects that vanished without a `Delete` |
//!
//! The streaming list (`InitialListStrategy::StreamingList`) emits the same `Init` first (5.0.0's
//! `step` in `State::Empty` yields `Event::Init` for both strategies), `InitApply` for ADDED or
//! MODIFIED, ignores DELETED until the initial-events-end bookmark, which yields `InitDone`.
//!
//! kube-runtime relists where client-go would re-watch only for a watch event without a
//! resourceVersion (`Error::NoResourceVersion`), which the tool's Reflector rejects before the
//! store sees it; so no translation here relists where the Reflector did not.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use crate::cache::key::object_key;
use crate::cache::reflector::{RelistCause, WatchEndReason};
use crate::object::Object;

/// One item of kube-runtime's `watcher()` stream.
#[derive(Debug, Clone)]
pub enum WatcherEvent {
    /// A (re)list starts: the store starts a buffer.
    Init,
    /// One listed object, into the buffer.
    InitApply(Arc<Object>),
    /// The list is complete: the buffer replaces the store.
    InitDone,
    /// A watch's ADDED or MODIFIED.
    Apply(Arc<Object>),
    /// A watch's DELETED.
    Delete(Arc<Object>),
    /// An error item (`watcher::Error`), which the Controller's trigger backoff acts on.
    Error(String),
}

impl WatcherEvent {
    /// The object it carries, if any.
    pub fn object(&self) -> Option<&Arc<Object>> {
        match self {
            WatcherEvent::InitApply(o) | WatcherEvent::Apply(o) | WatcherEvent::Delete(o) => {
                Some(o)
            }
            _ => None,
        }
    }
}

impl fmt::Display for WatcherEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WatcherEvent::Init => f.write_str("Init"),
            WatcherEvent::InitApply(o) => write!(f, "InitApply({})", object_key(&**o)),
            WatcherEvent::InitDone => f.write_str("InitDone"),
            WatcherEvent::Apply(o) => write!(f, "Apply({})", object_key(&**o)),
            WatcherEvent::Delete(o) => write!(f, "Delete({})", object_key(&**o)),
            WatcherEvent::Error(e) => write!(f, "Error({e})"),
        }
    }
}

/// One thing the tool's Reflector did, as the translation takes it: its calls on its store and
/// the events it reports.
#[derive(Debug, Clone, Copy)]
pub enum ReflectorStep<'a> {
    /// `replace`: a list, or a streaming list's initial events, complete.
    Replaced(&'a [Arc<Object>]),
    /// `add` from a watch.
    Added(&'a Arc<Object>),
    /// `update` from a watch.
    Updated(&'a Arc<Object>),
    /// `delete` from a watch.
    Deleted(&'a Arc<Object>),
    /// A bookmark.
    Bookmark,
    /// A watch ended.
    WatchEnded(&'a WatchEndReason),
    /// The Reflector decided to relist.
    Relist(&'a RelistCause),
    /// A list failed (the Reflector backs off and lists again).
    ListFailed(&'a str),
}

/// What one [`ReflectorStep`] is for kube-runtime: its watcher events, and a note (a `──` row)
/// where kube-runtime behaves differently from the client-go Reflector.
#[derive(Debug, Clone, Default)]
pub struct Translation {
    /// The watcher events, in order.
    pub events: Vec<WatcherEvent>,
    /// What differs, in one sentence.
    pub note: Option<String>,
}

/// The translation's state: what kube-runtime's store holds (to tell what a relist removes or
/// changes), and whether the next list is one kube-runtime would not have made.
#[derive(Debug, Default)]
pub struct WatcherTranslator {
    known: HashMap<String, Arc<Object>>,
    listed: bool,
    resume_instead: Option<String>,
}

impl WatcherTranslator {
    /// Before the first list.
    pub fn new() -> Self {
        WatcherTranslator::default()
    }

    /// Translates one step.
    pub fn step(&mut self, step: ReflectorStep<'_>) -> Translation {
        match step {
            ReflectorStep::Replaced(items) => self.replaced(items),
            ReflectorStep::Added(o) | ReflectorStep::Updated(o) => {
                self.known.insert(object_key(&**o), o.clone());
                events(vec![WatcherEvent::Apply(o.clone())])
            }
            ReflectorStep::Deleted(o) => {
                self.known.remove(&object_key(&**o));
                events(vec![WatcherEvent::Delete(o.clone())])
            }
            ReflectorStep::Bookmark => Translation::default(),
            ReflectorStep::WatchEnded(reason) => match reason {
                WatchEndReason::Closed | WatchEndReason::VeryShort => Translation::default(),
                WatchEndReason::Broken(e) => events(vec![WatcherEvent::Error(e.to_string())]),
                WatchEndReason::ErrorEvent(s) => events(vec![WatcherEvent::Error(s.to_string())]),
            },
            ReflectorStep::Relist(cause) => self.relist(cause),
            ReflectorStep::ListFailed(e) => events(vec![WatcherEvent::Error(e.to_owned())]),
        }
    }

    fn relist(&mut self, cause: &RelistCause) -> Translation {
        let resumes = match cause {
            RelistCause::VeryShortWatch | RelistCause::WatchFailed(_) => true,
            RelistCause::WatchStartFailed(_) => {
                self.resume_instead = Some(cause.to_string());
                return Translation {
                    events: vec![WatcherEvent::Error(cause.to_string())],
                    note: Some(resume_note(cause)),
                };
            }
            RelistCause::WatchExpired
            | RelistCause::ListExpired
            | RelistCause::ListTooLarge
            | RelistCause::ContinueExpired
            | RelistCause::WatchListInterrupted => false,
        };
        if resumes && self.listed {
            self.resume_instead = Some(cause.to_string());
            return Translation {
                events: Vec::new(),
                note: Some(resume_note(cause)),
            };
        }
        Translation::default()
    }

    fn replaced(&mut self, items: &[Arc<Object>]) -> Translation {
        let listed: HashMap<String, Arc<Object>> = items
            .iter()
            .map(|o| (object_key(&**o), o.clone()))
            .collect();
        if self.resume_instead.take().is_some() && self.listed {
            return self.resumed(items, listed);
        }
        let mut vanished: Vec<&str> = self
            .known
            .keys()
            .filter(|k| !listed.contains_key(*k))
            .map(String::as_str)
            .collect();
        vanished.sort_unstable();
        let note = (self.listed && !vanished.is_empty()).then(|| {
            format!(
                "kube-runtime: {} gone in the relist, without a Delete: its store drops {} at InitDone and its Controller never reconciles {}",
                vanished.join(", "),
                if vanished.len() == 1 { "it" } else { "them" },
                if vanished.len() == 1 { "it" } else { "them" },
            )
        });
        let mut out = Vec::with_capacity(items.len() + 2);
        out.push(WatcherEvent::Init);
        out.extend(items.iter().map(|o| WatcherEvent::InitApply(o.clone())));
        out.push(WatcherEvent::InitDone);
        self.known = listed;
        self.listed = true;
        Translation { events: out, note }
    }

    /// A relist kube-runtime would not have made: its resumed watch would have delivered what
    /// changed, which is what the list shows against its store.
    fn resumed(
        &mut self,
        items: &[Arc<Object>],
        listed: HashMap<String, Arc<Object>>,
    ) -> Translation {
        let mut out = Vec::new();
        for o in items {
            let key = object_key(&**o);
            let changed = self
                .known
                .get(&key)
                .is_none_or(|old| old.resource_version() != o.resource_version());
            if changed {
                out.push(WatcherEvent::Apply(o.clone()));
            }
        }
        let mut gone: Vec<(&String, &Arc<Object>)> = self
            .known
            .iter()
            .filter(|(k, _)| !listed.contains_key(*k))
            .collect();
        gone.sort_by(|a, b| a.0.cmp(b.0));
        out.extend(
            gone.into_iter()
                .map(|(_, o)| WatcherEvent::Delete(o.clone())),
        );
        self.known = listed;
        Translation {
            events: out,
            note: None,
        }
    }
}

fn events(events: Vec<WatcherEvent>) -> Translation {
    Translation { events, note: None }
}

fn resume_note(cause: &RelistCause) -> String {
    format!(
        "kube-runtime resumes its watch from the last resourceVersion here instead of relisting ({cause}): the list's changes are shown as that watch's Apply and Delete events"
    )
}

#[cfg(test)]
#[path = "watcher_tests.rs"]
mod tests;
