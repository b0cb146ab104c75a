//! Renderers: they receive popped batches and reflector events and write them out. They know
//! nothing of HTTP, clusters or the cache's locks; whoever runs the informer (the `watch` and
//! `replay` commands) hands them what happened, in order, through the [`Renderer`] trait.
//!
//! - [`timeline`]: one row per batch for people (`-o timeline`, `-o wide`), with [`changes`]
//!   summarising what an update changed.
//! - [`jsonl`]: JSON lines, schema v1 (`docs/jsonl.md`), for scripts.
//! - [`document`]: one pretty JSON or YAML document per batch.
//! - [`html`]: one self-contained page (`-o html`), written when the session ends: the whole
//!   session drawn on a time axis, with [`changes`], [`jsonl`]'s records and [`summary`] reused.
//! - [`profile`]: the client-go version an informer imitates and its settings, which its first
//!   line names.
//! - [`push`]: an UndeltaStore's pushes (`--store undelta`), which every renderer writes in place
//!   of batches.
//! - [`reconcile`]: a controller's reconciles, as they start and as they end; [`ending`]: what a
//!   session left unfinished, told once after its last row.
//! - [`compare`]: where `--compare`'s stacks differ: each stack's calls aligned with the first
//!   stack's, each difference named, a verdict per handler and controller (pure), which every
//!   renderer writes last ([`Renderer::comparison`]).
//! - [`stats`]: what the informer did, counted (pure), drawn by [`summary`] (a table at the end)
//!   and [`status`] (the live footer and the initial list's progress bar).

use std::borrow::Cow;
use std::io;
use std::time::{Duration, SystemTime};

use crate::cache::reflector::RelistCause;
use crate::cache::{
    Batch, Delta, DeltaObject, DeltaType, Notification, QueueKind, ReflectorEventKind,
};
use crate::object::Object;
use crate::timestamp::Rfc3339;

pub mod changes;
pub mod compare;
pub mod document;
mod duration;
pub mod ending;
pub mod html;
pub mod index;
mod index_table;
pub mod jsonl;
mod object;
pub mod profile;
pub mod push;
pub mod reconcile;
pub mod stats;
pub mod status;
pub mod summary;
pub mod timeline;

pub use index_table::{NONE_LABEL, age};
pub use object::{ObjectMode, ObjectView, render_object};
pub use push::{Push, PushView, StoreCall};

/// A count and its noun, singular only for 1: `1 batch`, `2 batches`, `0 items`. Every message
/// that counts something says it through this.
pub fn count(n: u64, noun: &str) -> String {
    format!("{n} {}", plural(n, noun))
}

/// `noun`, in the plural unless `n` is 1; nouns ending in s, x, z, ch or sh take `es`.
pub fn plural(n: u64, noun: &str) -> Cow<'_, str> {
    if n == 1 {
        return Cow::Borrowed(noun);
    }
    let es = ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|end| noun.ends_with(end));
    Cow::Owned(format!("{noun}{}", if es { "es" } else { "s" }))
}

/// One popped batch, as a renderer is told about it.
#[derive(Debug, Clone, Copy)]
pub struct BatchView<'a> {
    /// The resource the batch belongs to, as the user knows it (`pods`, `deployments.apps`).
    pub resource: &'a str,
    /// When it was popped, by the informer's clock.
    pub time: SystemTime,
    /// The batch; its `seq` counts pops across every resource of the session.
    pub batch: &'a Batch<Object>,
}

/// Something that happened to an informer besides a batch.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// The informer starts: which queue it runs and how its consumer pops it. Each resource's
    /// first event.
    InformerStarted {
        /// The queue between its Reflector and its Indexer.
        queue: QueueKind,
        /// Most deltas one pop takes (`--batch-pop`); 1 for the DeltaFIFO.
        batch_pop: usize,
        /// The client-go version it imitates and the settings that came of it, if the caller
        /// has one to tell.
        profile: Option<&'a profile::InformerProfile>,
    },
    /// The informer starts with no queue: its Reflector writes into an UndeltaStore, which
    /// pushes its whole content after every change (`--store undelta`). Each resource's first
    /// event, in place of [`Event::InformerStarted`].
    UndeltaStarted,
    /// A step of the Reflector.
    Reflector(&'a ReflectorEventKind),
    /// The cache first held the whole initial list (client-go's `HasSynced`).
    Synced {
        /// Batches of this resource popped by then (pushes, for an UndeltaStore).
        batches: u64,
        /// Since the informer started.
        after: Duration,
    },
    /// A handler's registration first synced (client-go's `ResourceEventHandlerRegistration`'s
    /// `HasSynced`): the informer had synced, and the handler had processed every
    /// initial-list notification.
    HandlerSynced {
        /// The handler's name.
        handler: &'a str,
        /// Since the informer started.
        after: Duration,
    },
}

/// One notification of a shared informer, as one of its event handlers got it, or not: a sync
/// notification (an update with an unchanged resourceVersion) reaches only handlers whose resync
/// was due at the last check.
#[derive(Debug, Clone, Copy)]
pub struct NotificationView<'a> {
    /// The resource, as in [`BatchView::resource`].
    pub resource: &'a str,
    /// The handler's name.
    pub handler: &'a str,
    /// When the handler call began (or, for one not delivered, when it was distributed), by the
    /// informer's clock.
    pub time: SystemTime,
    /// The pop it came from; 0 for none.
    pub seq: u64,
    /// What the handler was told.
    pub notification: &'a Notification<Object>,
    /// Whether it was a sync notification.
    pub is_sync: bool,
    /// How the call went; `None` for a sync notification the handler did not get.
    pub delivered: Option<Delivered>,
}

/// How a notification reached its handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delivered {
    /// Notifications buffered for the handler when the call began, behind this one.
    pub buffer_depth: usize,
    /// How long it waited in the handler's buffer.
    pub waited: Duration,
}

/// The `OnAdd`, `OnUpdate` or `OnDelete` of a notification.
pub fn handler_call(notification: &Notification<Object>) -> &'static str {
    match notification {
        Notification::Add { .. } => "OnAdd",
        Notification::Update { .. } => "OnUpdate",
        Notification::Delete { .. } => "OnDelete",
    }
}

/// An [`Event`] of one resource at one time.
#[derive(Debug, Clone, Copy)]
pub struct EventView<'a> {
    /// The resource, as in [`BatchView::resource`].
    pub resource: &'a str,
    /// When it happened, by the informer's clock.
    pub time: SystemTime,
    /// What happened.
    pub event: Event<'a>,
}

/// Writes batches and events out, each one complete and flushed before the call returns, so a
/// reader sees it at once and a closed pipe is noticed at the next write; with `--compare`'s
/// stacks, a renderer may hold rows until the stacks have caught up ([`Renderer::stacks`]).
pub trait Renderer: Send {
    /// Writes one popped batch.
    fn batch(&mut self, batch: &BatchView<'_>) -> io::Result<()>;
    /// Writes one event; a renderer may leave some out (the timeline shows bookmarks only when
    /// verbose, documents show batches only).
    fn event(&mut self, event: &EventView<'_>) -> io::Result<()>;
    /// Writes what one handler got of one notification; by default nothing (documents show
    /// batches only).
    fn notification(&mut self, _notification: &NotificationView<'_>) -> io::Result<()> {
        Ok(())
    }
    /// Writes one push of an UndeltaStore (`--store undelta`), which runs instead of a queue.
    fn push(&mut self, push: &PushView<'_>) -> io::Result<()>;
    /// Writes that a controller's worker took a key and started its reconcile; by default
    /// nothing (the finished reconcile carries its start).
    fn reconcile_started(&mut self, _start: &reconcile::ReconcileStart<'_>) -> io::Result<()> {
        Ok(())
    }
    /// Writes one finished reconcile of a controller (`--controller`); by default nothing.
    fn reconcile(&mut self, _reconcile: &reconcile::ReconcileView<'_>) -> io::Result<()> {
        Ok(())
    }
    /// Writes where kube-runtime's `Controller` parts from the client-go rows
    /// (`--controller …,runtime=kube`); by default nothing.
    fn controller_note(&mut self, _note: &reconcile::ControllerNote<'_>) -> io::Result<()> {
        Ok(())
    }
    /// Writes what the session left unfinished, once, after every row (only when it left
    /// something: a Reflector in a backoff or before a relist, reconciles running, keys
    /// waiting); by default nothing.
    fn ended(&mut self, _end: &ending::SessionEnd<'_>) -> io::Result<()> {
        Ok(())
    }

    /// How `--compare`'s stacks compared, once the session has ended (before
    /// [`finish`](Renderer::finish)): every difference, and a verdict per handler and
    /// controller. By default nothing.
    fn comparison(&mut self, _comparisons: &[compare::SubjectComparison]) -> io::Result<()> {
        Ok(())
    }

    /// `--compare`'s stacks, the baseline first, told once before any row. A renderer may hold
    /// rows from here on, to write them aligned across the stacks (the timeline writes a row
    /// every stack wrote alike once), until [`align_stacks`](Renderer::align_stacks). By default
    /// ignored.
    fn stacks(&mut self, _stacks: &[String]) {}

    /// The stack (`--compare`) whose rows follow, until told another; `None` when not comparing.
    /// By default ignored.
    fn stack(&mut self, _stack: Option<&str>) {}

    /// `--compare`: writes the rows held that `release` lets go of; the stacks have caught up
    /// with each other (the end of a replay's turn, the end of the session), or rows have waited
    /// long enough. Says whether it wrote rows and whether rows are still held. By default
    /// nothing is held.
    fn align_stacks(
        &mut self,
        _release: compare::side_by_side::Release,
    ) -> io::Result<compare::side_by_side::Aligned> {
        Ok(compare::side_by_side::Aligned::default())
    }

    /// The session has ended, however it ended: writes what the renderer keeps for the end (the
    /// `-o html` page), with `summary`, the summary table the session prints on stderr. By
    /// default nothing: the other renderers wrote everything as it came.
    fn finish(&mut self, _summary: &str) -> io::Result<()> {
        Ok(())
    }
}

/// The resourceVersion a delta carries: its object's, or the list's or bookmark's for a whole-list
/// delta; `None` for a tombstone without a last known state and for a `SyncAll`.
pub(crate) fn delta_resource_version(delta: &Delta<Object>) -> Option<&str> {
    match &delta.object {
        DeltaObject::List(info) => Some(info.resource_version.as_str()).filter(|rv| !rv.is_empty()),
        object => object.object().and_then(|o| o.resource_version()),
    }
}

/// How many objects a whole-list delta concerns, `None` for a per-object delta: the objects a
/// `ReplacedAll` listed, the objects a `SyncAll` re-delivered (the cache's size at the pop, told by
/// the batch's handler calls: a whole-list delta is always popped alone), none for a `Bookmark`.
pub(crate) fn whole_list_objects(batch: &Batch<Object>, delta: &Delta<Object>) -> Option<usize> {
    match (delta.type_, &delta.object) {
        (DeltaType::SyncAll, DeltaObject::List(_)) => Some(batch.notifications.len()),
        (_, DeltaObject::List(info)) => Some(info.objects.len()),
        _ => None,
    }
}

/// Whether a `Relist` event is a retry within a list rather than a decision to list again: the
/// list at the last synced resourceVersion expired or was too large (client-go v0.32
/// `tools/cache/reflector.go`, `Reflector.list`: "Retry immediately if the resource version used to
/// list is unavailable", at `""`), or a continue token expired (the pager lists again whole).
/// client-go logs only the decision (`watch of … closed with: …` for an expired watch), so a 410
/// on the watch followed by a 410 on the list is one relist, and its second 410 a list retry.
pub(crate) fn is_list_retry(cause: &RelistCause) -> bool {
    matches!(
        cause,
        RelistCause::ListExpired | RelistCause::ListTooLarge | RelistCause::ContinueExpired
    )
}

/// `text` safe to print on a terminal: control characters (escape sequences, newlines, tabs),
/// which annotations and other free-form values may hold, written as Rust escapes (`\u{1b}`,
/// `\n`) so that they neither drive the terminal nor break a row.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Milliseconds with microsecond precision, as JSON outputs carry durations.
pub(crate) fn millis(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

/// `2026-11-22T14:03:07.123456Z`.
pub fn rfc3339_micros(time: SystemTime) -> String {
    Rfc3339::micros(time).as_str().to_owned()
}
