//! `-o html`: one self-contained page of the whole session, written when it ends: a time axis on
//! the informer's clock (the recording's, in a replay), the Reflector's band, the queue's depth and
//! each pop's wait, one lane per event handler, one lane per key grouped by namespace, the hover
//! data of every mark, and the summary table at the bottom.
//!
//! The page fetches nothing: its SVG, CSS and script are inline (`page.css`, `page.js`), and the
//! SVG shows everything without the script (each mark has a text `<title>`, each lane its label);
//! the script adds zoom, pan and a brush on the time axis, a key filter, collapsible namespace
//! groups and a hover panel with the batch's whole record. Types are told by shape and letter as
//! well as colour (the Okabe–Ito palette, readable with the common colour blindnesses).
//!
//! What a mark says on hover is what the other outputs say, by their code: the batch's record is
//! `-o jsonl`'s (`--object` and Secret redaction apply exactly as there), its changes `-o wide`'s,
//! a Reflector event's record its jsonl line, a handler call's its `notification` line; the table
//! at the bottom is the summary printed on stderr.
//!
//! Nothing on the page depends on when it was made: an instant replay gives the same bytes every
//! run. What a session did is kept in memory until it ends (`Session`); beyond
//! `layout::MARK_BUDGET` marks, marks of one lane that fall in one time bucket are drawn as one
//! (their count and types), and the page says so; beyond [`OBJECT_BUDGET`] bytes of records, the
//! later records leave their objects out, and the page says that too.
//!
//! Lanes are generic (`Lane`: marks, spans and a series): a handler is one, and so is a
//! controller's reconciles (`--controller`, `ResourceLog::controller`); a renderer method adds
//! its lane to `ResourceLog::actors` and pushes its marks; layout, aggregation, hover and the
//! script need nothing more. A reconcile is also a span on its key's lane, from its start to its
//! end, so that what arrived while it ran is beside it.
//!
//! The caption under the title tells the session in words, from what it counted as it went
//! (`Story`): how long the watch was lost before a relist delivered, the deletions found as
//! tombstones, each controller's reconciles and retries, and what the session left unfinished.

mod layout;

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::time::{SystemTime, UNIX_EPOCH};

use super::duration::human_duration;
use super::ending::SessionEnd;
use super::jsonl::{BatchRecord, NotificationRecord, PushRecord, event_line};
use super::object::ObjectMode;
use super::reconcile::{ReconcileRecord, ReconcileView};
use super::timeline::{describe, informer_started, row_changes, rows};
use super::{
    BatchView, Event, EventView, NotificationView, PushView, Renderer, changes, count,
    delta_resource_version, handler_call, is_list_retry, printable,
};
use crate::cache::reflector::RelistCause;
use crate::cache::workqueue::ReconcileResult;
use crate::cache::{DeltaType, Notification, ReflectorEventKind};

/// Bytes of hover records kept with their objects; the records after leave them out (a page of
/// 100,000 full pods would weigh hundreds of megabytes).
pub const OBJECT_BUDGET: usize = 6 << 20;

/// How the page is made.
#[derive(Debug, Clone)]
pub struct HtmlOptions {
    /// How much of each object the hover records carry (`--object`).
    pub object: ObjectMode,
    /// Show Secret values (`--show-secret-data`).
    pub show_secret_data: bool,
    /// The command line, shown at the top.
    pub command_line: String,
}

/// Collects the session and writes its page at [`Renderer::finish`].
pub struct Html<W> {
    out: W,
    options: HtmlOptions,
    session: Session,
}

impl<W: Write> Html<W> {
    /// A page written to `out` when the session ends.
    pub fn new(out: W, options: HtmlOptions) -> Self {
        Html {
            out,
            options,
            session: Session::default(),
        }
    }
}

/// Everything the page shows, as it happened.
#[derive(Debug, Default)]
pub(crate) struct Session {
    /// Each resource, in the order the session named them.
    pub(crate) resources: Vec<ResourceLog>,
    /// The hover records (JSON), which marks point to.
    pub(crate) records: Vec<String>,
    /// Their size so far.
    record_bytes: usize,
    /// The first batch whose record left its object out ([`OBJECT_BUDGET`]).
    pub(crate) objects_cut_at: Option<u64>,
    /// Earliest and latest time seen, in microseconds since the epoch.
    pub(crate) span: Option<(i64, i64)>,
    /// Batches (pushes) popped.
    pub(crate) batches: u64,
    /// The informers run an UndeltaStore (told by their `UndeltaStarted`): they push, not pop.
    pushes: bool,
    /// What the caption tells: how the session went, in words.
    pub(crate) story: Story,
    /// `--compare`: the stack whose rows come now; each stack's resource is a section of its own
    /// (`pods [1.32]`), and every key of the resource has one lane per stack after them.
    stack: Option<String>,
    /// `--compare`: the stacks, the baseline first: the order of a key's lanes.
    pub(crate) stacks: Vec<String>,
    /// `--compare`: where the stacks differ, shown under the caption.
    pub(crate) comparison: ComparisonLog,
}

/// Where `--compare`'s stacks differ, as the page shows it.
#[derive(Debug, Default)]
pub(crate) struct ComparisonLog {
    /// One row per difference, as the timeline writes it.
    pub(crate) rows: Vec<String>,
    /// One verdict per handler and controller, and whether it is `same calls`.
    pub(crate) verdicts: Vec<(String, bool)>,
    /// The keys where they differ: their lanes are highlighted.
    pub(crate) keys: std::collections::BTreeSet<String>,
}

/// What the page's caption tells, counted as the session went.
#[derive(Debug, Default)]
pub(crate) struct Story {
    /// When the latest watch ended, until a relist decided after it is delivered.
    watch_ended: Option<i64>,
    /// A relist was decided since the watch ended.
    relisting: bool,
    /// Each stretch without a watch that a relist ended: from the watch's end to the relist's
    /// list, in microseconds.
    pub(crate) gaps: Vec<i64>,
    /// Deletions delivered as tombstones.
    pub(crate) tombstones: u64,
    /// Reconciles and errors per controller, in the order they first reconciled.
    pub(crate) controllers: Vec<(String, u64, u64)>,
    /// What the session left unfinished (`ended …`), as sentences.
    pub(crate) ended: Vec<String>,
}

/// What a tombstone is to a Go handler: the hover of a tombstone's pop and of its `OnDelete`.
pub(crate) const TOMBSTONE_MEANING: &str = "tombstone: OnDelete gets a \
     cache.DeletedFinalStateUnknown {Key, Obj}, not the object (a deletion a relist found; Obj is \
     the last state the cache knew). Unwrap it: if t, ok := obj.(cache.DeletedFinalStateUnknown); \
     ok { obj = t.Obj }. A handler that only does pod, ok := obj.(*v1.Pod) and returns when !ok \
     silently drops this deletion.";

/// What one resource's informer did.
#[derive(Debug, Default)]
pub(crate) struct ResourceLog {
    /// The section's name: the resource, with the stack under `--compare` (`pods [1.32]`).
    pub(crate) name: String,
    /// The resource.
    pub(crate) resource: String,
    /// `--compare`: the stack.
    pub(crate) stack: Option<String>,
    /// The client-go profile and queue, as the informer's first line says them.
    pub(crate) profile: Option<String>,
    /// The Reflector's steps: list and watch spans, and its point events.
    pub(crate) reflector: Lane,
    /// The queue's depth at each pop.
    pub(crate) depth: Lane,
    /// Each pop's wait in the queue.
    pub(crate) wait: Lane,
    /// Event handlers in registration order, then each controller's reconciles.
    pub(crate) actors: Vec<Lane>,
    /// Pops of whole-list deltas (an atomic queue), and an UndeltaStore's pushes.
    pub(crate) whole: Lane,
    /// One lane per key, sorted.
    pub(crate) keys: BTreeMap<String, Lane>,
}

impl ResourceLog {
    /// The lane of the handler `name`, made on first use.
    pub(crate) fn actor(&mut self, name: &str) -> &mut Lane {
        self.actor_lane(name, false)
    }

    /// The lane of controller `name`'s reconciles, made on first use (after its handler's).
    pub(crate) fn controller(&mut self, name: &str) -> &mut Lane {
        self.actor_lane(name, true)
    }

    fn actor_lane(&mut self, name: &str, reconciles: bool) -> &mut Lane {
        let at = match self
            .actors
            .iter()
            .position(|l| l.label == name && l.reconciles == reconciles)
        {
            Some(at) => at,
            None => {
                self.actors.push(Lane {
                    reconciles,
                    ..Lane::labelled(name)
                });
                self.actors.len() - 1
            }
        };
        &mut self.actors[at]
    }
}

/// One horizontal lane: point marks, spans (a list, a watch, a handler call's wait) and a series
/// of values over time (a depth).
#[derive(Debug, Default)]
pub(crate) struct Lane {
    pub(crate) label: String,
    pub(crate) marks: Vec<Mark>,
    pub(crate) spans: Vec<Span>,
    /// `(time, value)`, in time order.
    pub(crate) series: Vec<(i64, f64)>,
    /// A controller's reconciles (`--controller`), not a handler's calls.
    pub(crate) reconciles: bool,
    /// A controller's reconciles as `(start, end)`, in the order they ended: its lane draws
    /// how many ran at once over time.
    pub(crate) busy: Vec<(i64, i64)>,
}

impl Lane {
    fn labelled(label: &str) -> Self {
        Lane {
            label: label.to_owned(),
            ..Lane::default()
        }
    }
}

/// A point on a lane.
#[derive(Debug, Clone)]
pub(crate) struct Mark {
    /// Microseconds since the epoch.
    pub(crate) t: i64,
    /// Its glyphs, in order (a pop of several delta types has several); at most three are drawn.
    pub(crate) glyphs: Vec<Glyph>,
    /// Deltas in the pop, when more than one: coalesced, shown as a count.
    pub(crate) count: usize,
    /// A pop of the initial list.
    pub(crate) initial: bool,
    /// Its hover record in [`Session::records`].
    pub(crate) record: Option<usize>,
    /// The text hover of the static page: one line per fact.
    pub(crate) title: String,
    /// A short label drawn beside it (the Reflector's marks: `410`, `HasSynced`).
    pub(crate) label: Option<String>,
}

/// A stretch of time on a lane.
#[derive(Debug, Clone)]
pub(crate) struct Span {
    pub(crate) from: i64,
    /// `None`: still open when the session ended.
    pub(crate) to: Option<i64>,
    pub(crate) class: &'static str,
    pub(crate) title: String,
    pub(crate) label: Option<String>,
    pub(crate) record: Option<usize>,
}

/// What a mark is, drawn as a shape with a letter (the legend lists them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Glyph {
    Added,
    Updated,
    Deleted,
    Replaced,
    Sync,
    Tombstone,
    Bookmark,
    /// A sync notification its handler did not get.
    NotDelivered,
    /// The Reflector: a 410 (expired resourceVersion), then a relist or a list retry.
    Expired,
    /// The Reflector: a relist for another cause.
    Relist,
    /// The Reflector: a backoff after a failure.
    Backoff,
    /// The Reflector: a resync check.
    Resync,
    /// The Reflector: HasSynced (or a handler's registration synced).
    Synced,
    /// The Reflector: an error, a drift, a fallback.
    Alert,
    /// A controller's reconcile that succeeded (or asked to be requeued after a while).
    ReconcileOk,
    /// A controller's reconcile that returned an error: retried after the rate limiter's delay.
    ReconcileError,
}

impl Glyph {
    /// Every glyph, in the legend's order.
    pub(crate) const ALL: [Glyph; 16] = [
        Glyph::Added,
        Glyph::Updated,
        Glyph::Deleted,
        Glyph::Replaced,
        Glyph::Sync,
        Glyph::Tombstone,
        Glyph::Bookmark,
        Glyph::NotDelivered,
        Glyph::Expired,
        Glyph::Relist,
        Glyph::Backoff,
        Glyph::Resync,
        Glyph::Synced,
        Glyph::Alert,
        Glyph::ReconcileOk,
        Glyph::ReconcileError,
    ];

    /// The glyph of a delta type; `tombstone` for a deletion whose final state is unknown.
    fn of(type_: DeltaType, tombstone: bool) -> Glyph {
        match type_ {
            _ if tombstone => Glyph::Tombstone,
            DeltaType::Added => Glyph::Added,
            DeltaType::Updated => Glyph::Updated,
            DeltaType::Deleted => Glyph::Deleted,
            DeltaType::Replaced | DeltaType::ReplacedAll => Glyph::Replaced,
            DeltaType::Sync | DeltaType::SyncAll => Glyph::Sync,
            DeltaType::Bookmark => Glyph::Bookmark,
        }
    }

    /// Its id in the page (`g-A`, CSS class `t-A`).
    pub(crate) fn id(self) -> &'static str {
        match self {
            Glyph::Added => "A",
            Glyph::Updated => "U",
            Glyph::Deleted => "D",
            Glyph::Replaced => "R",
            Glyph::Sync => "S",
            Glyph::Tombstone => "T",
            Glyph::Bookmark => "B",
            Glyph::NotDelivered => "X",
            Glyph::Expired => "E",
            Glyph::Relist => "L",
            Glyph::Backoff => "W",
            Glyph::Resync => "Y",
            Glyph::Synced => "H",
            Glyph::Alert => "Z",
            Glyph::ReconcileOk => "K",
            Glyph::ReconcileError => "F",
        }
    }

    /// What the legend says it is.
    pub(crate) fn meaning(self) -> &'static str {
        match self {
            Glyph::Added => "Added",
            Glyph::Updated => "Updated",
            Glyph::Deleted => "Deleted",
            Glyph::Replaced => "Replaced (a relist)",
            Glyph::Sync => "Sync (a resync)",
            Glyph::Tombstone => "Deleted, a DeletedFinalStateUnknown tombstone",
            Glyph::Bookmark => "Bookmark",
            Glyph::NotDelivered => "sync notification not delivered (resync not due)",
            Glyph::Expired => "410 Expired: relist or list retry",
            Glyph::Relist => "relist (another cause)",
            Glyph::Backoff => "backoff after a failure",
            Glyph::Resync => "resync check",
            Glyph::Synced => "HasSynced",
            Glyph::Alert => "error, drift, fallback, or a kube-runtime note",
            Glyph::ReconcileOk => "reconcile (ok)",
            Glyph::ReconcileError => "reconcile (error: retried)",
        }
    }
}

/// Microseconds since the epoch (negative before it, which no clock here gives).
fn micros(time: SystemTime) -> i64 {
    match time.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_micros()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_micros()).unwrap_or(i64::MAX),
    }
}

/// A JSON value as text, for the records: serialization of these records cannot fail.
fn json(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned())
}

impl Session {
    fn saw(&mut self, time: SystemTime) -> i64 {
        let t = micros(time);
        self.span = Some(match self.span {
            None => (t, t),
            Some((a, b)) => (a.min(t), b.max(t)),
        });
        t
    }

    fn resource(&mut self, name: &str) -> &mut ResourceLog {
        let base = name;
        let stacked;
        let name = match &self.stack {
            Some(stack) => {
                stacked = format!("{name} [{stack}]");
                stacked.as_str()
            }
            None => name,
        };
        let at = match self.resources.iter().position(|r| r.name == name) {
            Some(at) => at,
            None => {
                let (resource, stack) = (base.to_owned(), self.stack.clone());
                self.resources.push(ResourceLog {
                    name: name.to_owned(),
                    resource,
                    stack,
                    ..ResourceLog::default()
                });
                self.resources.len() - 1
            }
        };
        &mut self.resources[at]
    }

    fn record(&mut self, text: String) -> usize {
        self.record_bytes += text.len();
        self.records.push(text);
        self.records.len() - 1
    }

    fn batch(&mut self, view: &BatchView<'_>, options: &HtmlOptions) {
        let t = self.saw(view.time);
        self.batches += 1;
        let batch = view.batch;
        let mode = if self.record_bytes < OBJECT_BUDGET {
            options.object
        } else {
            if options.object != ObjectMode::None {
                self.objects_cut_at.get_or_insert(batch.seq);
            }
            ObjectMode::None
        };
        let record = BatchRecord::new(view, mode, options.show_secret_data, true);
        let rows = rows(batch);
        // `-o wide`'s change summary of each row, every changed path.
        let changes: Vec<String> = rows
            .iter()
            .map(|row| {
                let text = match (row.whole_list, row.deltas.last()) {
                    (Some(objects), Some(delta)) => super::timeline::whole_list_summary(
                        delta.type_,
                        objects,
                        &row.notifications,
                    ),
                    _ => row_changes(&row.notifications, options.show_secret_data)
                        .map(|c| changes::summary(&c, usize::MAX))
                        .unwrap_or_default(),
                };
                printable(&text).into_owned()
            })
            .collect();
        let text = format!(
            "{{\"batch\":{},\"changes\":{}}}",
            json(&record),
            json(&changes)
        );
        let index = self.record(text);
        let wait = batch.waited();
        let tombstones = batch
            .deltas
            .iter()
            .filter(|d| d.object.is_tombstone())
            .count();
        self.story.tombstones += tombstones as u64;
        let log = self.resource(view.resource);
        log.depth.series.push((t, batch.queue_len as f64));
        log.wait.series.push((t, wait.as_secs_f64() * 1e3));
        for (row, changed) in rows.iter().zip(&changes) {
            let mut glyphs: Vec<Glyph> = Vec::new();
            let mut deltas = Vec::new();
            for delta in row.deltas {
                let glyph = Glyph::of(delta.type_, delta.object.is_tombstone());
                if !glyphs.contains(&glyph) {
                    glyphs.push(glyph);
                }
                let rv = delta_resource_version(delta).unwrap_or("-");
                let tomb = if delta.object.is_tombstone() {
                    " (tombstone)"
                } else {
                    ""
                };
                deltas.push(format!(
                    "{}{tomb} rv {}",
                    delta.type_.as_str(),
                    printable(rv)
                ));
            }
            let mut title = format!(
                "pop {} · {} · {}\n{}",
                batch.seq,
                super::rfc3339_micros(view.time),
                printable(&row.key),
                deltas.join(", ")
            );
            if batch.is_in_initial_list {
                title.push_str(" · initial");
            }
            title.push_str(&format!(
                " · queue {} · waited {}",
                batch.queue_len,
                human_duration(wait)
            ));
            if !changed.is_empty() {
                title.push('\n');
                title.push_str(changed);
            }
            if glyphs.contains(&Glyph::Tombstone) {
                title.push('\n');
                title.push_str(TOMBSTONE_MEANING);
            }
            let mark = Mark {
                t,
                glyphs,
                count: row.deltas.len(),
                initial: batch.is_in_initial_list,
                record: Some(index),
                title,
                label: None,
            };
            let lane = if row.whole_list.is_some() || row.key == "*" {
                &mut log.whole
            } else {
                log.keys
                    .entry(row.key.clone().into_owned())
                    .or_insert_with(|| Lane::labelled(&row.key))
            };
            lane.marks.push(mark);
        }
    }

    fn push(&mut self, view: &PushView<'_>, options: &HtmlOptions) {
        let t = self.saw(view.time);
        self.batches += 1;
        let push = view.push;
        let mode = if self.record_bytes < OBJECT_BUDGET {
            options.object
        } else {
            ObjectMode::None
        };
        let record = PushRecord::new(view, mode, options.show_secret_data, true);
        let index = self.record(format!("{{\"push\":{}}}", json(&record)));
        let glyph = match push.call.as_str() {
            "add" => Glyph::Added,
            "delete" => Glyph::Deleted,
            "replace" => Glyph::Replaced,
            "resync" => Glyph::Sync,
            _ => Glyph::Updated,
        };
        let title = format!(
            "push {} · {} · {} {}\n{} held; added {}, removed {}, changed {}",
            push.seq,
            super::rfc3339_micros(view.time),
            push.call.as_str(),
            printable(push.key.as_deref().unwrap_or("*")),
            push.objects.len(),
            push.added.len(),
            push.removed.len(),
            push.changed.len()
        );
        let log = self.resource(view.resource);
        if log.whole.label.is_empty() {
            log.whole.label = "UndeltaStore pushes".to_owned();
        }
        log.depth.series.push((t, push.objects.len() as f64));
        log.whole.marks.push(Mark {
            t,
            glyphs: vec![glyph],
            count: 1,
            initial: push.initial,
            record: Some(index),
            title,
            label: None,
        });
    }

    fn notification(&mut self, view: &NotificationView<'_>) {
        let t = self.saw(view.time);
        let record = json(&NotificationRecord::new(view));
        let index = self.record(format!("{{\"notification\":{record}}}"));
        let glyph = match view.notification {
            _ if view.delivered.is_none() => Glyph::NotDelivered,
            Notification::Add { .. } => Glyph::Added,
            Notification::Update { .. } if view.is_sync => Glyph::Sync,
            Notification::Update { .. } => Glyph::Updated,
            Notification::Delete { obj } if obj.is_tombstone() => Glyph::Tombstone,
            Notification::Delete { .. } => Glyph::Deleted,
        };
        let mut title = format!(
            "{} {}{} · {} · {} (pop {})",
            printable(view.handler),
            handler_call(view.notification),
            if view.is_sync { " (resync)" } else { "" },
            super::rfc3339_micros(view.time),
            printable(&view.notification.key()),
            view.seq
        );
        let initial = matches!(
            view.notification,
            Notification::Add {
                is_in_initial_list: true,
                ..
            }
        );
        let log = self.resource(view.resource);
        let lane = log.actor(view.handler);
        match view.delivered {
            Some(delivered) => {
                title.push_str(&format!(
                    "\nbuffer {} · waited {}",
                    delivered.buffer_depth,
                    human_duration(delivered.waited)
                ));
                lane.series.push((t, delivered.buffer_depth as f64));
                let waited = i64::try_from(delivered.waited.as_micros()).unwrap_or(i64::MAX);
                if waited > 0 {
                    lane.spans.push(Span {
                        from: t.saturating_sub(waited),
                        to: Some(t),
                        class: "lag",
                        title: format!("waited {} in the buffer", human_duration(delivered.waited)),
                        label: None,
                        record: Some(index),
                    });
                }
            }
            None => title.push_str("\nnot delivered: resync not due"),
        }
        if glyph == Glyph::Tombstone {
            title.push('\n');
            title.push_str(TOMBSTONE_MEANING);
        }
        lane.marks.push(Mark {
            t,
            glyphs: vec![glyph],
            count: 1,
            initial,
            record: Some(index),
            title,
            label: None,
        });
    }

    /// A kube-runtime note, as an alert mark on its controller's lane, or on the Reflector's
    /// band when it is about what every kube controller of the resource is told; its hover is
    /// the note's line.
    fn controller_note(&mut self, note: &super::reconcile::ControllerNote<'_>) {
        let t = self.saw(note.time);
        let record = json(&super::reconcile::NoteRecord::new(note));
        let index = self.record(format!("{{\"note\":{record}}}"));
        let title = match note.controller {
            Some(controller) => {
                format!("{}(kube): {}", printable(controller), printable(note.text))
            }
            None => printable(note.text).into_owned(),
        };
        let mark = Mark {
            t,
            glyphs: vec![Glyph::Alert],
            count: 1,
            initial: false,
            record: Some(index),
            title,
            label: Some("kube-runtime".to_owned()),
        };
        let log = self.resource(note.resource);
        match note.controller {
            Some(controller) => log.controller(controller).marks.push(mark),
            None => log.reflector.marks.push(mark),
        }
    }

    /// A controller's reconcile: a bar from its start to its end on its key's lane (what
    /// arrived while it ran is visible beside it), and on the controller's lane a mark when it
    /// ended, its wait for a worker as a span and its run counted in the lane's concurrency.
    fn reconcile(&mut self, view: &ReconcileView<'_>) {
        let t = self.saw(view.time);
        let start = &view.start;
        let started = micros(start.started_at);
        let queued = micros(start.queued_at);
        let record = json(&ReconcileRecord::new(view));
        let index = self.record(format!("{{\"reconcile\":{record}}}"));
        let glyph = match view.result {
            ReconcileResult::Error => Glyph::ReconcileError,
            _ => Glyph::ReconcileOk,
        };
        let title = format!(
            "{} reconcile · {} → {} · {}\n{}",
            printable(start.controller),
            super::rfc3339_micros(start.started_at),
            super::rfc3339_micros(view.time),
            printable(start.key),
            view.facts()
        );
        match self
            .story
            .controllers
            .iter_mut()
            .find(|c| c.0 == start.controller)
        {
            Some(c) => {
                c.1 += 1;
                c.2 += u64::from(view.result == ReconcileResult::Error);
            }
            None => self.story.controllers.push((
                start.controller.to_owned(),
                1,
                u64::from(view.result == ReconcileResult::Error),
            )),
        }
        let log = self.resource(start.resource);
        log.keys
            .entry(start.key.to_owned())
            .or_insert_with(|| Lane::labelled(start.key))
            .spans
            .push(Span {
                from: started,
                to: Some(t),
                class: if glyph == Glyph::ReconcileError {
                    "reconcile error"
                } else {
                    "reconcile"
                },
                title: title.clone(),
                label: Some(printable(start.controller).into_owned()),
                record: Some(index),
            });
        let lane = log.controller(start.controller);
        lane.busy.push((started, t));
        if started > queued {
            lane.spans.push(Span {
                from: queued,
                to: Some(started),
                class: "lag",
                title: format!("waited {} for a worker", human_duration(view.waited())),
                label: None,
                record: Some(index),
            });
        }
        lane.marks.push(Mark {
            t,
            glyphs: vec![glyph],
            count: 1,
            initial: false,
            record: Some(index),
            title,
            label: None,
        });
    }

    /// What the session left unfinished: the caption's last sentences.
    fn ended(&mut self, end: &SessionEnd<'_>) {
        let several = end.resources.len() > 1 || self.resources.len() > 1;
        for resource in &end.resources {
            for sentence in resource.sentences() {
                self.story.ended.push(if several {
                    format!("{}: {sentence}", printable(resource.resource))
                } else {
                    sentence
                });
            }
        }
    }

    fn event(&mut self, view: &EventView<'_>) {
        let pushes = self.pushes;
        match view.event {
            Event::InformerStarted {
                queue,
                batch_pop,
                profile,
            } => {
                let queue = informer_started(queue, batch_pop);
                let text = match profile {
                    Some(profile) => format!("{profile}; {queue}"),
                    None => queue,
                };
                self.resource(view.resource).profile = Some(text);
                return;
            }
            Event::UndeltaStarted => {
                self.pushes = true;
                self.resource(view.resource).profile =
                    Some("store: UndeltaStore, the whole list pushed after every change".into());
                return;
            }
            _ => {}
        }
        let t = self.saw(view.time);
        let record = json(&event_line(view, pushes));
        let index = self.record(format!("{{\"reflector\":{record}}}"));
        let time = super::rfc3339_micros(view.time);
        let log = self.resource(view.resource);
        let point = |glyph: Glyph, text: String, label: Option<String>| Mark {
            t,
            glyphs: vec![glyph],
            count: 1,
            initial: false,
            record: Some(index),
            title: format!("{time}\n{}", printable(&text)),
            label,
        };
        match view.event {
            Event::Synced { batches, after } => {
                let text = format!(
                    "HasSynced after {}, {}",
                    human_duration(after),
                    count(batches, if pushes { "push" } else { "batch" })
                );
                let mark = point(Glyph::Synced, text, Some("HasSynced".into()));
                log.reflector.marks.push(mark);
            }
            Event::HandlerSynced { handler, after } => {
                let text = format!(
                    "handler {} synced: processed the initial list after {}",
                    handler,
                    human_duration(after)
                );
                let mark = point(Glyph::Synced, text, Some("synced".into()));
                log.actor(handler).marks.push(mark);
            }
            Event::Reflector(kind) => {
                let text = describe(kind, true)
                    .map(|(text, _)| text)
                    .unwrap_or_default();
                reflector_step(log, kind, t, index, &time, text, point);
                self.story.follow(kind, t);
            }
            Event::InformerStarted { .. } | Event::UndeltaStarted => {}
        }
    }
}

/// Draws one Reflector step on its band: a list or a watch opens or closes a span, anything else
/// is a point.
fn reflector_step(
    log: &mut ResourceLog,
    kind: &ReflectorEventKind,
    t: i64,
    index: usize,
    time: &str,
    text: String,
    point: impl Fn(Glyph, String, Option<String>) -> Mark,
) {
    let band = &mut log.reflector;
    // A list (or a watch) that a retry, a backoff or the next attempt replaced ended there.
    if matches!(
        kind,
        ReflectorEventKind::ListStarted { .. }
            | ReflectorEventKind::Relist { .. }
            | ReflectorEventKind::Backoff { .. }
    ) {
        for span in band.spans.iter_mut().filter(|s| s.to.is_none()) {
            span.to = Some(t);
            span.title = format!(
                "{}\n{time}\nended without completing: {}",
                span.title,
                printable(&text)
            );
        }
    }
    match kind {
        ReflectorEventKind::ListStarted { .. } => band.spans.push(Span {
            from: t,
            to: None,
            class: "list",
            title: format!("{time}\n{}", printable(&text)),
            label: Some("list".into()),
            record: Some(index),
        }),
        // A page is a tick on its list, without a glyph of its own.
        ReflectorEventKind::ListPage { .. } => band.marks.push(Mark {
            glyphs: Vec::new(),
            ..point(Glyph::Bookmark, text, None)
        }),
        ReflectorEventKind::ListDone { items, .. } => {
            let label = Some(format!("list: {}", count(*items as u64, "item")));
            let title = format!("{time}\n{}", printable(&text));
            match band
                .spans
                .iter_mut()
                .rev()
                .find(|s| s.class == "list" && s.to.is_none())
            {
                Some(span) => {
                    span.to = Some(t);
                    span.title = format!("{}\n{title}", span.title);
                    span.label = label;
                    span.record = Some(index);
                }
                // A streamed list (watch-list) has no list-start: its span is its watch's.
                None => band.spans.push(Span {
                    from: t,
                    to: Some(t),
                    class: "list",
                    title,
                    label,
                    record: Some(index),
                }),
            }
        }
        ReflectorEventKind::WatchStarted { .. } => band.spans.push(Span {
            from: t,
            to: None,
            class: "watch",
            title: format!("{time}\n{}", printable(&text)),
            label: Some("watch".into()),
            record: Some(index),
        }),
        ReflectorEventKind::WatchEnded { reason, .. } => {
            if let Some(span) = band
                .spans
                .iter_mut()
                .rev()
                .find(|s| s.class == "watch" && s.to.is_none())
            {
                span.to = Some(t);
                span.title = format!("{}\n{time}\n{}", span.title, printable(&text));
                span.label = Some(format!("watch → {}", printable(&reason.to_string())));
                span.record = Some(index);
            }
        }
        ReflectorEventKind::Bookmark { .. } => band.marks.push(point(Glyph::Bookmark, text, None)),
        ReflectorEventKind::Relist { cause } => {
            let expired = matches!(
                cause,
                RelistCause::WatchExpired | RelistCause::ListExpired | RelistCause::ContinueExpired
            );
            let (glyph, label) = match (expired, is_list_retry(cause)) {
                (true, true) => (Glyph::Expired, "410, list retried"),
                (true, false) => (Glyph::Expired, "410, relist"),
                (false, _) => (Glyph::Relist, "relist"),
            };
            band.marks.push(point(glyph, text, Some(label.into())));
        }
        ReflectorEventKind::Backoff { delay, .. } => {
            let to = t.saturating_add(i64::try_from(delay.as_micros()).unwrap_or(i64::MAX));
            band.spans.push(Span {
                from: t,
                to: Some(to),
                class: "backoff",
                title: format!("{time}\n{}", printable(&text)),
                label: None,
                record: Some(index),
            });
            band.marks
                .push(point(Glyph::Backoff, text, Some("backoff".into())));
        }
        ReflectorEventKind::Resync { .. } => band.marks.push(point(Glyph::Resync, text, None)),
        ReflectorEventKind::WatchListFallback { .. }
        | ReflectorEventKind::Drift(_)
        | ReflectorEventKind::DriftCheckSkipped { .. }
        | ReflectorEventKind::Error(_) => {
            band.marks.push(point(Glyph::Alert, text, None));
        }
    }
}

impl Story {
    /// Follows a Reflector step: a watch that ended, a relist decided after it, and the list
    /// that ended the gap.
    fn follow(&mut self, kind: &ReflectorEventKind, t: i64) {
        match kind {
            ReflectorEventKind::WatchEnded { .. } => {
                self.watch_ended = Some(t);
                self.relisting = false;
            }
            ReflectorEventKind::Relist { cause } if !is_list_retry(cause) => {
                self.relisting = true;
            }
            ReflectorEventKind::ListDone { .. } if self.relisting => {
                if let Some(ended) = self.watch_ended.take() {
                    self.gaps.push(t.saturating_sub(ended));
                }
                self.relisting = false;
            }
            ReflectorEventKind::WatchStarted { .. } if !self.relisting => {
                self.watch_ended = None;
            }
            _ => {}
        }
    }

    /// The caption: `the watch was lost for 1.23s; the relist found 1 deletion, delivered as a
    /// tombstone; web reconciled 9 times, 2 retries`, then what the session left unfinished;
    /// `None` when nothing of it happened.
    pub(crate) fn caption(&self) -> Option<String> {
        let mut parts = Vec::new();
        let total: i64 = self.gaps.iter().sum();
        let lost = human_duration(std::time::Duration::from_micros(total.max(0) as u64));
        match self.gaps.len() {
            0 => {}
            1 => parts.push(format!("the watch was lost for {lost}")),
            n => parts.push(format!("the watch was lost {n} times, for {lost} in all")),
        }
        if !self.gaps.is_empty() || self.tombstones > 0 {
            let who = if self.gaps.len() > 1 {
                "the relists"
            } else {
                "the relist"
            };
            parts.push(match self.tombstones {
                0 => format!("{who} found no deletion"),
                1 => format!("{who} found 1 deletion, delivered as a tombstone"),
                n => format!("{who} found {n} deletions, delivered as tombstones"),
            });
        }
        for (name, reconciles, errors) in &self.controllers {
            let mut text = format!(
                "{} reconciled {}",
                printable(name),
                match reconciles {
                    1 => "once".to_owned(),
                    n => format!("{n} times"),
                }
            );
            match errors {
                0 => {}
                1 => text.push_str(", 1 retry"),
                n => text.push_str(&format!(", {n} retries")),
            }
            parts.push(text);
        }
        parts.extend(self.ended.iter().cloned());
        if parts.is_empty() {
            return None;
        }
        let mut text = parts.join("; ");
        text.push('.');
        Some(text)
    }
}

impl<W: Write + Send> Renderer for Html<W> {
    fn stacks(&mut self, stacks: &[String]) {
        self.session.stacks = stacks.to_vec();
    }

    fn stack(&mut self, stack: Option<&str>) {
        self.session.stack = stack.map(str::to_owned);
    }

    fn comparison(&mut self, comparisons: &[super::compare::SubjectComparison]) -> io::Result<()> {
        let log = &mut self.session.comparison;
        for comparison in comparisons {
            for difference in &comparison.differences {
                log.rows.push(super::compare::records::difference_row(
                    comparison, difference,
                ));
                log.keys.insert(difference.key.clone());
            }
            let same = comparison.verdict == super::compare::Verdict::Same;
            log.verdicts.push((comparison.summary_line(), same));
        }
        Ok(())
    }

    fn batch(&mut self, view: &BatchView<'_>) -> io::Result<()> {
        self.session.batch(view, &self.options);
        Ok(())
    }

    fn event(&mut self, view: &EventView<'_>) -> io::Result<()> {
        self.session.event(view);
        Ok(())
    }

    fn notification(&mut self, view: &NotificationView<'_>) -> io::Result<()> {
        self.session.notification(view);
        Ok(())
    }

    fn reconcile(&mut self, view: &ReconcileView<'_>) -> io::Result<()> {
        if view.ran() {
            self.session.reconcile(view);
        }
        Ok(())
    }

    fn controller_note(&mut self, note: &super::reconcile::ControllerNote<'_>) -> io::Result<()> {
        self.session.controller_note(note);
        Ok(())
    }

    fn ended(&mut self, end: &SessionEnd<'_>) -> io::Result<()> {
        self.session.ended(end);
        Ok(())
    }

    fn push(&mut self, view: &PushView<'_>) -> io::Result<()> {
        self.session.push(view, &self.options);
        Ok(())
    }

    fn finish(&mut self, summary: &str) -> io::Result<()> {
        let page = layout::page(&self.session, &self.options.command_line, summary);
        self.out.write_all(page.as_bytes())?;
        self.out.flush()
    }
}
