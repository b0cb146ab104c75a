//! The timeline (`-o timeline`, `-o wide`): one row per popped batch, for people.
//!
//! ```text
//! 14:03:07.123   #4  default/web-1  Updated×2            rv 1005  2.01s             spec.replicas 2→3
//! 14:03:07.130   #5  default/db     Deleted(tombstone)   rv 1002  1.1ms
//! 14:03:07.200  ── 410 → relist: the watch's resourceVersion expired
//! ```
//!
//! Under a pop, its handlers' calls (`→ web  OnUpdate …`); with `--controller`, each reconcile as
//! two rows, `⇒ web  reconcile …` where a worker took the key (what it read) and `⇐ web  returned
//! …` where it ended, so that every row stays in time order; a session that left work undone ends
//! with `── ended …` rows ([`super::ending`]).
//!
//! Columns: local time with milliseconds, pop sequence number, the resource (when several run),
//! key, delta types oldest→newest (runs of one type collapsed as `Updated×2`, each type its own
//! colour, tombstones marked), resourceVersion of the newest object, time the key waited in the
//! queue, `initial` for batches of the initial list, and what an update changed (see
//! [`super::changes`]). `wide` adds uid, generation and owner, and lists every change.
//! Reflector events are dimmed separator rows; bookmarks and list steps only when verbose.
//!
//! With `--store undelta` each row is a push of the UndeltaStore instead of a batch:
//!
//! ```text
//! 14:03:07.123  #12  push  41 objects  +1 −0 ~1  add default/web-1  rv 1005
//! 14:03:07.200  #13  push  41 objects  +0 −0 ~0  replace            rv 1006
//! ```
//!
//! Columns: time, push sequence number, the resource (when several run), how many objects the
//! push carried, the keys added, removed and changed since the previous push, the store call that
//! pushed (with its key), the resourceVersion of its object or list, and `initial` for the push
//! of the first list. `wide` lists the added (`+`), removed (`−`) and changed (`~`) keys.
//!
//! With `--compare` ([`Renderer::stacks`]) rows are held until the stacks have caught up with each
//! other ([`Renderer::align_stacks`]), then written side by side ([`super::compare::side_by_side`]):
//!
//! ```text
//!          14:03:07.200  ── list done: 3 items, 1 page, rv 1007, 2.0ms
//! latest │ 14:03:07.201      → h  OnDelete  demo/b  rv 1002 (tombstone)  …  │ 1.32: 3 calls later
//!          14:03:07.201      → h  OnUpdate (resync)  demo/a  rv 1004→1004  …
//! 1.32   │ 14:03:07.202      → h  OnDelete  demo/b  rv 1002 (tombstone)  …  │ latest: 3 calls earlier
//! ```
//!
//! On a terminal ([`TimelineOptions::fixed`]) the columns have fixed widths, named by a header
//! row written with the same widths, so the first row lines up with the hundredth and `#9` with
//! `#10`; a value wider than its column pushes the rest of its own row out, never the rows after
//! it. In a pipe or a file the widths only grow instead, so that no space is spent on a column's
//! widest possible value, and rows line up once the widest values have been seen. Either way the
//! same input always gives the same text. Without colour the output has no control codes at all: those
//! in what the cluster says (object names, owners, resourceVersions, error messages) are written
//! escaped ([`printable`]), so that no object can move the cursor, retitle the terminal or forge
//! rows.

pub use super::duration::human_duration;
use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::ops::Range;
use std::time::{Duration, SystemTime};

use jiff::tz::TimeZone;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use owo_colors::{OwoColorize, Style};

use super::changes::{self, Change};
use super::compare::notification_call;
use super::compare::side_by_side::{Aligned, HeldRow, Release, SideBySide};
use super::ending::SessionEnd;
use super::reconcile::{ReconcileStart, Runtime};
use super::{
    BatchView, Event, EventView, NotificationView, PushView, Renderer, count,
    delta_resource_version, handler_call, plural, printable, whole_list_objects,
};
use crate::cache::reflector::RelistCause;
use crate::cache::{Batch, Delta, DeltaType, Notification, QueueKind, ReflectorEventKind};
use crate::object::{Object, describe_writers, writers_since};

/// How the timeline looks.
#[derive(Debug, Clone)]
pub struct TimelineOptions {
    /// Add uid, generation, owner and every changed path (`-o wide`).
    pub wide: bool,
    /// Use ANSI colours.
    pub color: bool,
    /// Show bookmarks and list steps (`-v`).
    pub verbose: bool,
    /// Show the resource column (several resources run).
    pub show_resource: bool,
    /// Show Secret data values in change summaries.
    pub show_secret_data: bool,
    /// The zone local times are shown in.
    pub time_zone: TimeZone,
    /// Fixed column widths, and a header row over them (on a terminal); `None`: widths grow.
    pub fixed: Option<FixedColumns>,
}

/// The timeline's columns on a terminal: widths fixed before the first row, from the header.
///
/// A terminal shows rows as they come, so widths that grow would shift every row after the first
/// wide value (the tenth pop, the first long key) against the rows above it and the header.
#[derive(Debug, Clone, Default)]
pub struct FixedColumns {
    /// Start with a row naming the columns (kubectl's tables do; `--no-headers` leaves it out).
    pub header: bool,
    /// The longest resource name (the resource column shows when several run).
    pub resource: usize,
    /// The longest handler name (of the `→ NAME` rows).
    pub handler: usize,
}

impl Default for TimelineOptions {
    fn default() -> Self {
        TimelineOptions {
            wide: false,
            color: false,
            verbose: false,
            show_resource: false,
            show_secret_data: false,
            time_zone: TimeZone::system(),
            fixed: None,
        }
    }
}

/// Changes listed in a timeline row before `(+N more)`.
const CHANGES_SHOWN: usize = 3;
/// Key columns stop growing here; longer keys push the row out instead.
const MAX_KEY_WIDTH: usize = 48;

/// The name client-go's `HasSynced` row gives the handler a session registers when none is named
/// with `--handler`: its sync row says `handler synced`, not `handler handler synced`.
pub const DEFAULT_HANDLER: &str = "handler";

/// `-o wide`'s uid column (a UUID) and generation column.
const UID_WIDTH: usize = 36;
const GENERATION_WIDTH: usize = "gen 12".len();

/// How far rows under a pop (handler calls, reconciles) are indented past the time in a pipe:
/// as wide as a one-digit pop number (`#9`), whatever the pop numbers reach.
const UNDER_POP_INDENT: usize = "#9".len();

/// How a reconcile's `returned` row's identity starts (`--compare`).
const RETURNED: &str = "⇐";

/// What the header row ends with: where the legend is.
const HEADER_HINT: &str = "(how to read a row: kubectl deltas watch --help)";

/// Writes the timeline.
#[derive(Debug)]
pub struct Timeline<W> {
    out: W,
    options: TimelineOptions,
    widths: Widths,
    line: String,
    /// The informers run a plain FIFO (told by their `InformerStarted`), whose pops carry an
    /// object and no delta type: their type cell says `object` instead of the `Sync` the adapter
    /// wraps it in.
    plain_fifo: bool,
    /// The informers run an UndeltaStore (told by their `UndeltaStarted`): `synced` counts
    /// pushes, and the header names a push's columns.
    pushes: bool,
    /// The header row is still to be written, before the first row (when the first event has
    /// said whether rows are pops or pushes).
    header_due: bool,
    /// `--compare`: every stack's rows, held until the stacks have caught up with each other
    /// ([`Renderer::align_stacks`]).
    side_by_side: Option<SideBySide>,
    /// `--compare`: the stack whose rows follow, its position among the stacks.
    stack: usize,
    /// The parts of the row being built that differ between stacks without being a difference of
    /// what they were told (its time, pop number, wait, buffer depth): left out of its identity.
    volatile: Vec<Range<usize>>,
    /// The row being built is a handler's call or a reconcile: what makes it alike another
    /// stack's is what makes two calls the same call ([`Call::same_call`](super::compare::Call::same_call)), not its text (a
    /// kube-runtime controller's rows name their reasons, a client-go one's do not).
    call_row: Option<String>,
}

/// Widths of the variable columns: fixed on a terminal, else growing to the widest value seen.
#[derive(Debug, Default)]
struct Widths {
    /// The widths were set once, from the header ([`FixedColumns`]), and never grow.
    fixed: bool,
    /// `#seq`, right-aligned.
    seq: usize,
    resource: usize,
    key: usize,
    types: usize,
    rv: usize,
    wait: usize,
    owner: usize,
    handler: usize,
    /// The handler call of a `→` row: `OnUpdate (resync)`.
    call: usize,
    /// Push rows: the object count, the `+a −r ~c` cell and the store call with its key.
    size: usize,
    diff: usize,
    store_call: usize,
}

/// The widths on a terminal. Wide enough for most values a cluster has (a pop number up to
/// `#99999`, a namespace and a pod name of a Deployment, `Deleted(tombstone)`, a 9-digit
/// resourceVersion); a wider value pushes the rest of its own row out.
impl Widths {
    fn fixed(columns: &FixedColumns) -> Widths {
        const KEY: usize = 36;
        Widths {
            fixed: true,
            seq: "#99999".len(),
            resource: columns.resource.max("RESOURCE".len()),
            key: KEY,
            types: "Deleted(tombstone)".len(),
            rv: "rv 123456789".len(),
            wait: "999.9ms".len(),
            owner: "ReplicaSet/".len() + 24,
            handler: columns.handler,
            call: "OnUpdate (resync)".len(),
            size: "10000 objects".len(),
            diff: "+1000 −1000 ~1000".chars().count(),
            store_call: "replace ".len() + KEY,
        }
    }

    /// Makes a growing `width` fit `len` characters; fixed widths stay.
    fn fit(fixed: bool, width: &mut usize, len: usize) {
        if !fixed {
            *width = (*width).max(len);
        }
    }
}

/// The colour of each delta type, and of the rest of a row.
struct Palette;

impl Palette {
    fn delta(type_: DeltaType) -> Style {
        match type_ {
            DeltaType::Added => Style::new().green(),
            DeltaType::Updated => Style::new().yellow(),
            DeltaType::Deleted => Style::new().red(),
            DeltaType::Replaced => Style::new().cyan(),
            DeltaType::Sync => Style::new().blue(),
            DeltaType::ReplacedAll => Style::new().cyan().bold(),
            DeltaType::SyncAll => Style::new().blue().bold(),
            DeltaType::Bookmark => Style::new().dimmed(),
        }
    }

    fn tombstone() -> Style {
        Style::new().red().bold()
    }

    fn dim() -> Style {
        Style::new().dimmed()
    }

    fn key() -> Style {
        Style::new().bold()
    }

    fn alert() -> Style {
        Style::new().red().bold()
    }
}

impl<W: Write> Timeline<W> {
    /// A timeline over `out`.
    pub fn new(out: W, options: TimelineOptions) -> Self {
        let (widths, header_due) = match &options.fixed {
            Some(columns) => (Widths::fixed(columns), columns.header),
            None => (Widths::default(), false),
        };
        Timeline {
            out,
            options,
            widths,
            line: String::with_capacity(256),
            plain_fifo: false,
            pushes: false,
            header_due,
            side_by_side: None,
            stack: 0,
            volatile: Vec::new(),
            call_row: None,
        }
    }

    /// The underlying writer.
    pub fn into_inner(self) -> W {
        self.out
    }

    fn paint(&mut self, text: &str, style: Style) {
        if self.options.color && !text.is_empty() {
            let _ = write!(self.line, "{}", text.style(style));
        } else {
            self.line.push_str(text);
        }
    }

    /// `text` in `style`, then spaces up to `width` characters, then the column gap.
    fn cell(&mut self, text: &str, width: usize, style: Style) {
        self.paint(text, style);
        pad(&mut self.line, width.saturating_sub(text.chars().count()));
        self.line.push_str("  ");
    }

    /// `text` left-aligned in the column `width` picks, which grows to fit it unless fixed.
    fn column(&mut self, text: &str, width: fn(&mut Widths) -> &mut usize, style: Style) {
        let fixed = self.widths.fixed;
        let width = width(&mut self.widths);
        Widths::fit(fixed, width, text.chars().count());
        let width = *width;
        self.cell(text, width, style);
    }

    /// `text` right-aligned in the column `width` picks, which grows to fit it unless fixed.
    fn right(&mut self, text: &str, width: fn(&mut Widths) -> &mut usize, style: Style) {
        let fixed = self.widths.fixed;
        let width = width(&mut self.widths);
        let len = text.chars().count();
        Widths::fit(fixed, width, len);
        let width = *width;
        pad(&mut self.line, width.saturating_sub(len));
        self.cell(text, 0, style);
    }

    fn time(&mut self, time: SystemTime) {
        let text = local_time(time, &self.options.time_zone);
        self.volatile(|timeline| timeline.paint(&text, Palette::dim()));
        self.line.push_str("  ");
    }

    /// What `write` adds to the row, marked as left out of its identity (`--compare`).
    fn volatile(&mut self, write: impl FnOnce(&mut Self)) {
        let start = self.line.len();
        write(self);
        self.volatile.push(start..self.line.len());
    }

    /// Starts a numbered row (a pop's, a push's): its time, `#seq` right-aligned, its resource.
    fn numbered(&mut self, time: SystemTime, seq: u64, resource: &str) {
        self.line.clear();
        self.time(time);
        let seq = format!("#{seq}");
        self.volatile(|timeline| timeline.right(&seq, |w| &mut w.seq, Palette::dim()));
        self.resource(resource);
    }

    /// The key's column; growing, it stops at [`MAX_KEY_WIDTH`].
    fn key(&mut self, key: &str) {
        let len = key.chars().count();
        Widths::fit(
            self.widths.fixed,
            &mut self.widths.key,
            len.min(MAX_KEY_WIDTH),
        );
        self.cell(key, self.widths.key, Palette::key());
    }

    /// The resource's column, when rows of several resources are merged.
    fn resource(&mut self, resource: &str) {
        if self.options.show_resource {
            let resource = printable(resource);
            self.column(&resource, |w| &mut w.resource, Style::new());
        }
    }

    /// Starts a row that reads as under a pop (a handler's call, a reconcile): its time, then
    /// indented as far as a pop's number is wide before it grows (`#9`), or the fixed column on
    /// a terminal. The indent never follows the pop numbers as they grow, so that these rows
    /// stay in one column throughout a session instead of moving at `#10` and `#100`.
    fn under_pop(&mut self, time: SystemTime, resource: &str) {
        self.line.clear();
        self.time(time);
        let indent = if self.widths.fixed {
            self.widths.seq
        } else {
            UNDER_POP_INDENT
        };
        pad(&mut self.line, indent);
        self.line.push_str("  ");
        self.resource(resource);
    }

    fn flush_line(&mut self) -> io::Result<()> {
        let end = self.line.trim_end_matches(' ').len();
        self.line.truncate(end);
        let volatile = std::mem::take(&mut self.volatile);
        let call = self.call_row.take();
        if let Some(side_by_side) = &mut self.side_by_side {
            let text = std::mem::take(&mut self.line);
            // A reconcile is one call: its `⇒` row, not its `⇐ returned` one.
            let counted = call.as_deref().is_some_and(|id| !id.starts_with(RETURNED));
            side_by_side.push(
                self.stack,
                HeldRow {
                    identity: match call {
                        Some(identity) => identity,
                        None => row_identity(&text, &volatile),
                    },
                    text,
                    call: counted,
                },
            );
            return Ok(());
        }
        self.line.push('\n');
        let line = std::mem::take(&mut self.line);
        let written = self.write_rows(&line);
        self.line = line;
        written
    }

    /// Writes `rows` (whole lines), after the header row if it is due.
    fn write_rows(&mut self, rows: &str) -> io::Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        if self.header_due {
            self.header_due = false;
            let mut header = self.header();
            if let Some(side_by_side) = &self.side_by_side {
                header.insert_str(0, &side_by_side.indent());
            }
            self.out.write_all(header.as_bytes())?;
        }
        self.out.write_all(rows.as_bytes())?;
        self.out.flush()
    }

    /// The header row, built with the rows' own cells and widths so that each name sits over
    /// its column: a pop's (`TIME  POP  KEY  DELTAS  RV  WAIT  CHANGES`) or a push's.
    fn header(&mut self) -> String {
        let row = std::mem::take(&mut self.line);
        let dim = Palette::dim();
        let width = local_time(SystemTime::UNIX_EPOCH, &TimeZone::UTC)
            .chars()
            .count();
        self.cell("TIME", width, dim);
        self.right("POP", |w| &mut w.seq, dim);
        if self.options.show_resource {
            self.column("RESOURCE", |w| &mut w.resource, dim);
        }
        if self.pushes {
            self.cell("", "push".len(), dim);
            self.right("OBJECTS", |w| &mut w.size, dim);
            self.column("DIFF", |w| &mut w.diff, dim);
            self.column("CALL", |w| &mut w.store_call, dim);
            self.column("RV", |w| &mut w.rv, dim);
            self.cell("", "initial".len(), dim);
            if self.options.wide {
                self.cell("KEYS", 0, dim);
            }
        } else {
            self.column("KEY", |w| &mut w.key, dim);
            self.column("DELTAS", |w| &mut w.types, dim);
            self.column("RV", |w| &mut w.rv, dim);
            self.right("WAIT", |w| &mut w.wait, dim);
            self.cell("", "initial".len(), dim);
            if self.options.wide {
                self.cell("UID", UID_WIDTH, dim);
                self.cell("GEN", GENERATION_WIDTH, dim);
                self.column("OWNER", |w| &mut w.owner, dim);
            }
            self.cell("CHANGES", 0, dim);
        }
        self.paint(HEADER_HINT, dim);
        let mut header = std::mem::replace(&mut self.line, row);
        header.push('\n');
        header
    }

    fn separator(&mut self, view: &EventView<'_>, text: &str, style: Style) -> io::Result<()> {
        self.separator_at(view.time, view.resource, text, style)
    }

    /// A `──` row of `resource` at `time`.
    fn separator_at(
        &mut self,
        time: SystemTime,
        resource: &str,
        text: &str,
        style: Style,
    ) -> io::Result<()> {
        self.line.clear();
        self.time(time);
        let mut row = String::from("── ");
        if self.options.show_resource {
            let _ = write!(row, "{resource}: ");
        }
        row.push_str(text);
        self.paint(&printable(&row), style);
        self.flush_line()
    }
}

/// A controller as its rows name it: `web`, or `web(kube)` for kube-runtime's `Controller`.
fn controller_label<'a>(start: &ReconcileStart<'a>) -> Cow<'a, str> {
    match start.runtime {
        Runtime::ClientGo => printable(start.controller),
        Runtime::Kube => Cow::Owned(format!("{}(kube)", printable(start.controller))),
    }
}

/// One timeline row: a whole batch, or one delta of a batch of several keys (also the `-o html`
/// page's marks, one per row).
pub(super) struct Row<'a> {
    pub(super) key: Cow<'a, str>,
    pub(super) deltas: &'a [Delta<Object>],
    /// The handler calls these deltas made, in order.
    pub(super) notifications: Vec<&'a Notification<Object>>,
    /// How long the batch waited; on its first row only.
    wait: Option<Duration>,
    /// The count of a whole-list delta.
    pub(super) whole_list: Option<usize>,
}

/// The rows of a batch: one, except for a RealFIFO batch of several keys (`--batch-pop`), which
/// gets a row per delta, each with its own key and change summary. A whole-list delta is always
/// popped alone, so its row is the batch's; its key column is `*`.
pub(super) fn rows(batch: &Batch<Object>) -> Vec<Row<'_>> {
    let deltas = batch.deltas.as_slice();
    if batch.key.is_some() || deltas.len() == 1 {
        let key = match (&batch.key, deltas.first().and_then(Delta::key)) {
            (Some(key), _) => Cow::Borrowed(&**key),
            (None, Some(key)) => Cow::Owned(key),
            (None, None) => Cow::Borrowed("*"),
        };
        return vec![Row {
            key,
            deltas,
            notifications: batch.notifications.iter().collect(),
            wait: Some(batch.waited()),
            whole_list: deltas
                .first()
                .and_then(|delta| whole_list_objects(batch, delta)),
        }];
    }
    // Each key appears once in such a batch: a delta's handler call is the one about its key.
    let keyed: Vec<(String, &Notification<Object>)> =
        batch.notifications.iter().map(|n| (n.key(), n)).collect();
    deltas
        .iter()
        .enumerate()
        .map(|(i, delta)| {
            let key = delta.key().unwrap_or_else(|| "*".to_owned());
            let notifications = keyed
                .iter()
                .filter(|(k, _)| *k == key)
                .map(|(_, n)| *n)
                .collect();
            Row {
                key: Cow::Owned(key),
                deltas: std::slice::from_ref(delta),
                notifications,
                wait: (i == 0).then(|| batch.waited()),
                whole_list: whole_list_objects(batch, delta),
            }
        })
        .collect()
}

impl<W: Write> Timeline<W> {
    fn row(&mut self, view: &BatchView<'_>, row: &Row<'_>) -> io::Result<()> {
        let batch = view.batch;
        self.numbered(view.time, batch.seq, view.resource);

        let key = printable(&row.key);
        self.key(&key);

        let runs = if self.plain_fifo {
            vec![("object".to_owned(), Style::new())]
        } else {
            type_runs(row.deltas)
        };
        let types_len: usize = runs.iter().map(|(t, _)| t.chars().count()).sum::<usize>()
            + runs.len().saturating_sub(1);
        Widths::fit(self.widths.fixed, &mut self.widths.types, types_len);
        for (i, (text, style)) in runs.iter().enumerate() {
            if i > 0 {
                self.line.push(' ');
            }
            self.paint(text, *style);
        }
        pad(&mut self.line, self.widths.types.saturating_sub(types_len));
        self.line.push_str("  ");

        let newest_delta = row.deltas.last();
        let newest = newest_delta.and_then(|d| d.object.object());
        let rv = format!(
            "rv {}",
            printable(newest_delta.and_then(delta_resource_version).unwrap_or("-"))
        );
        self.column(&rv, |w| &mut w.rv, Style::new());

        let wait = row.wait.map(human_duration).unwrap_or_default();
        self.volatile(|timeline| timeline.right(&wait, |w| &mut w.wait, Style::new()));

        let initial = if batch.is_in_initial_list {
            "initial"
        } else {
            ""
        };
        self.cell(initial, "initial".len(), Palette::dim());

        if self.options.wide {
            let meta = newest.map(|o| o.metadata());
            let uid = printable(meta.as_ref().and_then(|m| m.uid.as_deref()).unwrap_or("-"));
            self.cell(&uid, UID_WIDTH, Palette::dim());
            let generation = meta
                .as_ref()
                .and_then(|m| m.generation)
                .map_or_else(|| "gen -".to_owned(), |g| format!("gen {g}"));
            self.cell(&generation, GENERATION_WIDTH, Style::new());
            let owner = meta.as_deref().map_or_else(|| "-".to_owned(), owner);
            let owner = printable(&owner);
            self.column(&owner, |w| &mut w.owner, Style::new());
        }

        if let (Some(objects), Some(delta)) = (row.whole_list, newest_delta) {
            self.line.push_str(&whole_list_summary(
                delta.type_,
                objects,
                &row.notifications,
            ));
        } else if let Some(changes) = row_changes(&row.notifications, self.options.show_secret_data)
        {
            let max = if self.options.wide {
                usize::MAX
            } else {
                CHANGES_SHOWN
            };
            let mut text = changes::summary(&changes, max);
            if let Some(writers) = row_writers(&row.notifications) {
                let _ = write!(text, "  by {writers}");
            }
            self.line.push_str(&printable(&text));
        }
        self.flush_line()
    }
}

impl<W: Write + Send> Renderer for Timeline<W> {
    /// Where the stacks differ, one row per difference, then one verdict per handler and
    /// controller: `── handler h: same calls, different order (1 moved)`.
    fn comparison(&mut self, comparisons: &[super::compare::SubjectComparison]) -> io::Result<()> {
        use super::compare::records::difference_row;
        self.align_stacks(Release::Everything)?;
        let Some(first) = comparisons.first() else {
            return Ok(());
        };
        let baseline = first.calls.first().map_or("", |(stack, _)| stack.as_str());
        let mut text = String::new();
        if comparisons.iter().any(|c| !c.differences.is_empty()) {
            let _ = writeln!(text, "── where the stacks differ from {baseline}:");
        }
        for comparison in comparisons {
            for difference in &comparison.differences {
                let _ = writeln!(text, "{}", difference_row(comparison, difference));
            }
            if comparison.unnamed > 0 {
                let _ = writeln!(
                    text,
                    "{}  … and {} more",
                    comparison.subject.describe(),
                    count(comparison.unnamed as u64, "difference")
                );
            }
        }
        for comparison in comparisons {
            let resource = if self.options.show_resource {
                format!("{}  ", comparison.resource)
            } else {
                String::new()
            };
            let _ = writeln!(text, "── {resource}{}", comparison.summary_line());
        }
        self.out.write_all(text.as_bytes())?;
        self.out.flush()
    }

    /// Rows are held from here on, and written aligned across the stacks.
    fn stacks(&mut self, stacks: &[String]) {
        self.side_by_side = Some(SideBySide::new(stacks.to_vec()));
    }

    /// The rows that follow are this stack's.
    fn stack(&mut self, stack: Option<&str>) {
        let Some(side_by_side) = &self.side_by_side else {
            return;
        };
        self.stack = stack
            .and_then(|stack| side_by_side.position(stack))
            .unwrap_or(0);
    }

    fn align_stacks(&mut self, release: Release) -> io::Result<Aligned> {
        let Some(side_by_side) = &mut self.side_by_side else {
            return Ok(Aligned::default());
        };
        let rows = side_by_side.take(release);
        let holds = side_by_side.holds();
        self.write_rows(&rows)?;
        Ok(Aligned {
            wrote: !rows.is_empty(),
            holds,
        })
    }

    fn batch(&mut self, view: &BatchView<'_>) -> io::Result<()> {
        for row in rows(view.batch) {
            self.row(view, &row)?;
        }
        Ok(())
    }

    fn event(&mut self, view: &EventView<'_>) -> io::Result<()> {
        let verbose = self.options.verbose;
        let (text, style) = match view.event {
            Event::InformerStarted {
                queue,
                batch_pop,
                profile,
            } => {
                self.plain_fifo = queue == QueueKind::Plain;
                let row = informer_started(queue, batch_pop);
                let row = match profile {
                    Some(profile) => format!("{profile}; {row}"),
                    None => row,
                };
                (row, Palette::dim())
            }
            Event::UndeltaStarted => {
                self.pushes = true;
                (
                    "store: UndeltaStore, the whole list pushed after every change".to_owned(),
                    Palette::dim(),
                )
            }
            Event::Synced { batches, after } => (
                format!(
                    "synced: HasSynced after {}, {}",
                    count(batches, if self.pushes { "push" } else { "batch" }),
                    human_duration(after)
                ),
                Palette::dim(),
            ),
            Event::HandlerSynced { handler, after } => {
                let name = if handler == DEFAULT_HANDLER {
                    String::new()
                } else {
                    format!(" {}", printable(handler))
                };
                (
                    format!(
                        "handler{name} synced: processed the initial list after {}",
                        human_duration(after)
                    ),
                    Palette::dim(),
                )
            }
            Event::Reflector(ReflectorEventKind::Resync { .. }) if self.pushes => (
                "resync tick: no push (an UndeltaStore's Resync does nothing)".to_owned(),
                Palette::dim(),
            ),
            Event::Reflector(kind) => match describe(kind, verbose) {
                Some(described) => described,
                None => return Ok(()),
            },
        };
        self.separator(view, &text, style)
    }

    /// `→ web  OnUpdate  default/a  rv 1002→1003  buffer 4  waited 1.2s`, under the pop it came
    /// from; a sync notification says `(resync)`, one the handler did not get is shown only in
    /// `wide`, as `✗ web  OnUpdate (resync)  default/a  not delivered: resync not due`.
    fn notification(&mut self, view: &NotificationView<'_>) -> io::Result<()> {
        if view.delivered.is_none() && !self.options.wide {
            return Ok(());
        }
        self.under_pop(view.time, view.resource);
        if self.side_by_side.is_some() {
            let call = notification_call(view);
            self.call_row = Some(format!(
                "→ {} {} {} {:?}",
                view.resource,
                view.handler,
                view.delivered.is_some(),
                call.identity()
            ));
        }
        let arrow = if view.delivered.is_some() {
            "→ "
        } else {
            "✗ "
        };
        self.paint(arrow, Palette::dim());
        let handler = printable(view.handler);
        self.column(&handler, |w| &mut w.handler, Palette::key());
        let mut call = handler_call(view.notification).to_owned();
        if view.is_sync {
            call.push_str(" (resync)");
        } else if let Notification::Add {
            is_in_initial_list: true,
            ..
        } = view.notification
        {
            call.push_str(" (initial)");
        }
        let style = match view.notification {
            Notification::Add { .. } => Palette::delta(DeltaType::Added),
            Notification::Update { .. } if view.is_sync => Palette::delta(DeltaType::Sync),
            Notification::Update { .. } => Palette::delta(DeltaType::Updated),
            Notification::Delete { obj } if obj.is_tombstone() => Palette::tombstone(),
            Notification::Delete { .. } => Palette::delta(DeltaType::Deleted),
        };
        self.column(&call, |w| &mut w.call, style);
        let key = view.notification.key();
        self.key(&printable(&key));
        let rv = |obj: &Object| printable(obj.resource_version().unwrap_or("-")).into_owned();
        let rvs = match view.notification {
            Notification::Add { obj, .. } => format!("rv {}", rv(obj)),
            Notification::Update { old, new } => format!("rv {}→{}", rv(old), rv(new)),
            Notification::Delete { obj } => {
                let last = obj.object().map_or_else(|| "-".to_owned(), |o| rv(o));
                let tombstone = if obj.is_tombstone() {
                    " (tombstone)"
                } else {
                    ""
                };
                format!("rv {last}{tombstone}")
            }
        };
        match view.delivered {
            Some(delivered) => {
                self.cell(&rvs, 0, Style::new());
                let facts = format!(
                    "buffer {}  waited {}",
                    delivered.buffer_depth,
                    human_duration(delivered.waited)
                );
                self.volatile(|timeline| timeline.paint(&facts, Palette::dim()));
            }
            None => {
                self.cell(&rvs, 0, Style::new());
                self.paint("not delivered: resync not due", Palette::dim());
            }
        }
        self.flush_line()
    }

    /// `⇒ web  reconcile  demo/a  attempt 2  waited 1.20s  folded 3 adds, latest 80.0ms ago
    /// rv 1005`, at the time a worker took the key, indented as a handler row: what the
    /// controller's worker read and why it ran. Its `⇐ … returned` row comes when it ends.
    fn reconcile_started(&mut self, view: &ReconcileStart<'_>) -> io::Result<()> {
        self.under_pop(view.started_at, view.resource);
        if self.side_by_side.is_some() {
            self.call_row = Some(format!(
                "⇒ {} {} {} {:?} {:?} {}",
                view.resource,
                view.controller,
                view.key,
                view.resource_version,
                view.filtered,
                view.skipped
            ));
        }
        self.paint("⇒ ", Palette::dim());
        let controller = controller_label(view);
        self.column(&controller, |w| &mut w.handler, Palette::key());
        let call = match view.filtered {
            Some(_) => "predicate",
            None => "reconcile",
        };
        self.column(call, |w| &mut w.call, Palette::key());
        self.key(&printable(view.key));
        self.paint(&view.facts(), Palette::dim());
        self.flush_line()
    }

    /// `⇐ web  returned  demo/a  took 500.0ms  error → retry in 10.0ms`, at the time the
    /// reconcile ended: how long it took and what it returned.
    fn reconcile(&mut self, view: &super::reconcile::ReconcileView<'_>) -> io::Result<()> {
        if !view.ran() {
            // Nothing ran: its one row says what became of the request.
            return self.reconcile_started(&view.start);
        }
        self.under_pop(view.time, view.start.resource);
        if self.side_by_side.is_some() {
            self.call_row = Some(format!(
                "{RETURNED} {} {} {} {}",
                view.start.resource,
                view.start.controller,
                view.start.key,
                view.result_name()
            ));
        }
        self.paint("⇐ ", Palette::dim());
        let controller = controller_label(&view.start);
        self.column(&controller, |w| &mut w.handler, Palette::key());
        let style = match view.result {
            crate::cache::workqueue::ReconcileResult::Error => Palette::delta(DeltaType::Deleted),
            _ => Palette::delta(DeltaType::Added),
        };
        self.column("returned", |w| &mut w.call, style);
        self.key(&printable(view.start.key));
        self.paint(&view.outcome(), Palette::dim());
        self.flush_line()
    }

    /// `── kube-runtime: demo/b gone in the relist, without a Delete: …`: where kube-runtime's
    /// `Controller` parts from the client-go rows.
    fn controller_note(&mut self, note: &super::reconcile::ControllerNote<'_>) -> io::Result<()> {
        let text = match note.controller {
            Some(controller) => format!("{}(kube): {}", printable(controller), note.text),
            None => note.text.to_owned(),
        };
        self.separator_at(note.time, note.resource, &text, Palette::dim())
    }

    /// `── ended during a 29.0s backoff after 410: deletions during the gap are not yet seen`,
    /// and a row per controller with work left: the end of a session that left something
    /// unfinished.
    fn ended(&mut self, end: &SessionEnd<'_>) -> io::Result<()> {
        for resource in &end.resources {
            for sentence in resource.sentences() {
                self.separator_at(end.time, resource.resource, &sentence, Palette::alert())?;
            }
        }
        Ok(())
    }

    fn push(&mut self, view: &PushView<'_>) -> io::Result<()> {
        let push = view.push;
        self.numbered(view.time, push.seq, view.resource);
        self.cell("push", 0, Palette::key());

        let size = count(push.objects.len() as u64, "object");
        self.right(&size, |w| &mut w.size, Style::new());

        let parts = [
            ('+', push.added.len(), Palette::delta(DeltaType::Added)),
            ('−', push.removed.len(), Palette::delta(DeltaType::Deleted)),
            ('~', push.changed.len(), Palette::delta(DeltaType::Updated)),
        ];
        let mut diff_len = 0;
        for (i, (sign, n, style)) in parts.into_iter().enumerate() {
            if i > 0 {
                self.line.push(' ');
                diff_len += 1;
            }
            let text = format!("{sign}{n}");
            diff_len += text.chars().count();
            self.paint(&text, if n > 0 { style } else { Palette::dim() });
        }
        Widths::fit(self.widths.fixed, &mut self.widths.diff, diff_len);
        pad(&mut self.line, self.widths.diff.saturating_sub(diff_len));
        self.line.push_str("  ");

        let call = match &push.key {
            Some(key) => format!("{} {}", push.call.as_str(), printable(key)),
            None => push.call.as_str().to_owned(),
        };
        let fixed = self.widths.fixed;
        Widths::fit(
            fixed,
            &mut self.widths.store_call,
            call.chars().count().min(MAX_KEY_WIDTH),
        );
        self.cell(&call, self.widths.store_call, Style::new());

        let rv = format!(
            "rv {}",
            printable(push.resource_version.as_deref().unwrap_or("-"))
        );
        self.column(&rv, |w| &mut w.rv, Style::new());

        let initial = if push.initial { "initial" } else { "" };
        self.cell(initial, "initial".len(), Palette::dim());

        if self.options.wide {
            let mut keys = String::new();
            for (sign, list) in [
                ('+', &push.added),
                ('−', &push.removed),
                ('~', &push.changed),
            ] {
                for key in list {
                    let _ = write!(keys, "{sign}{key} ");
                }
            }
            self.line.push_str(&printable(keys.trim_end()));
        }
        self.flush_line()
    }
}

/// A separator row's text and style, or `None` for events shown only when verbose.
pub(super) fn describe(kind: &ReflectorEventKind, verbose: bool) -> Option<(String, Style)> {
    let dim = Palette::dim();
    let text = match kind {
        ReflectorEventKind::ListStarted { resource_version } if verbose => {
            match resource_version.as_str() {
                "" => "list started (consistent read)".to_owned(),
                "0" => "list started (from the watch cache)".to_owned(),
                rv => format!("list started at rv {rv}"),
            }
        }
        ReflectorEventKind::ListPage {
            page,
            items_so_far,
            remaining,
        } if verbose => {
            let mut text = format!(
                "list page {page}: {} so far",
                count(*items_so_far as u64, "item")
            );
            if let Some(r) = remaining {
                let _ = write!(text, ", ~{r} to come");
            }
            text
        }
        ReflectorEventKind::ListStarted { .. } | ReflectorEventKind::ListPage { .. } => {
            return None;
        }
        ReflectorEventKind::ListDone {
            items,
            pages,
            resource_version,
            duration,
        } => {
            let pages = match pages {
                0 => "streamed".to_owned(),
                n => count(*n as u64, "page"),
            };
            format!(
                "list done: {}, {pages}, rv {resource_version}, {}",
                count(*items as u64, "item"),
                human_duration(*duration)
            )
        }
        ReflectorEventKind::WatchStarted {
            resource_version,
            timeout_seconds,
            send_initial_events,
        } => {
            let what = if *send_initial_events {
                "streaming list opened"
            } else {
                "watch opened"
            };
            let from = if resource_version.is_empty() {
                "now".to_owned()
            } else {
                format!("rv {resource_version}")
            };
            format!(
                "{what} from {from} (timeout {})",
                human_duration(Duration::from_secs(u64::from(*timeout_seconds)))
            )
        }
        ReflectorEventKind::WatchEnded {
            reason,
            duration,
            events,
        } => format!(
            "watch closed: {reason}, after {}, {}",
            human_duration(*duration),
            count(*events, "event")
        ),
        ReflectorEventKind::Bookmark {
            resource_version,
            initial_events_end,
        } if verbose => {
            let end = if *initial_events_end {
                " (initial events end)"
            } else {
                ""
            };
            format!("bookmark rv {resource_version}{end}")
        }
        ReflectorEventKind::Bookmark { .. } => return None,
        ReflectorEventKind::Relist { cause } => {
            let expired = matches!(
                cause,
                RelistCause::WatchExpired | RelistCause::ListExpired | RelistCause::ContinueExpired
            );
            let status = if expired { "410 → " } else { "" };
            // Part of the relist under way, as client-go sees it, not another one.
            let what = if super::is_list_retry(cause) {
                "list retried"
            } else {
                "relist"
            };
            format!("{status}{what}: {cause}")
        }
        ReflectorEventKind::Backoff {
            delay,
            phase,
            error,
        } => format!(
            "backoff {} after a failed {phase}: {error}",
            human_duration(*delay)
        ),
        ReflectorEventKind::Resync { keys } => {
            format!("resync tick: {}", count(*keys as u64, "key"))
        }
        ReflectorEventKind::WatchListFallback { reason } => {
            format!("streaming list refused, using list + watch: {reason}")
        }
        ReflectorEventKind::Drift(report) if report.is_consistent() => format!(
            "consistency check at rv {}: {}, consistent",
            report.resource_version,
            count(report.listed as u64, "object")
        ),
        ReflectorEventKind::Drift(report) => {
            let list = |keys: &[String]| keys.join(" ");
            let mut text = format!("DRIFT at rv {}:", report.resource_version);
            for (what, keys) in [
                ("missing", &report.missing),
                ("extra", &report.extra),
                ("stale", &report.stale),
            ] {
                if !keys.is_empty() {
                    let _ = write!(text, " {what} [{}]", list(keys));
                }
            }
            return Some((text, Palette::alert()));
        }
        ReflectorEventKind::DriftCheckSkipped { reason } => {
            format!("consistency check skipped: {reason}")
        }
        ReflectorEventKind::Error(error) => {
            return Some((format!("error: {error}"), Palette::alert()));
        }
    };
    Some((text, dim))
}

/// The end of the row that opens each informer: `queue: RealFIFO (InOrderInformers), one delta per
/// pop`; the profile, when there is one, comes first.
pub(super) fn informer_started(queue: QueueKind, batch_pop: usize) -> String {
    let (name, pop) = match queue {
        QueueKind::Delta => ("DeltaFIFO", "one key".to_owned()),
        QueueKind::Real => ("RealFIFO (InOrderInformers)", deltas_per_pop(batch_pop)),
        QueueKind::Atomic => ("RealFIFO, atomic (AtomicFIFO)", deltas_per_pop(batch_pop)),
        QueueKind::Plain => ("FIFO, no delta types", "one key".to_owned()),
    };
    format!("queue: {name}, {pop} per pop")
}

fn deltas_per_pop(batch_pop: usize) -> String {
    match batch_pop {
        0 | 1 => "one delta".to_owned(),
        n => format!("up to {n} deltas"),
    }
}

/// What a whole-list delta did: `3 objects listed: 1 added, 1 updated, 1 unchanged, 1 deleted
/// (tombstone)` for a `ReplacedAll` (from its handler calls; `unchanged` are updates to the same
/// resourceVersion), `2 objects re-delivered` for a `SyncAll`, nothing for a `Bookmark`.
pub(super) fn whole_list_summary(
    type_: DeltaType,
    objects: usize,
    notifications: &[&Notification<Object>],
) -> String {
    let count = count(objects as u64, "object");
    match type_ {
        DeltaType::SyncAll => format!("{count} re-delivered"),
        DeltaType::ReplacedAll => {
            let (mut added, mut updated, mut unchanged, mut deleted) = (0, 0, 0, 0u64);
            for notification in notifications {
                match notification {
                    Notification::Add { .. } => added += 1,
                    Notification::Update { old, new }
                        if old.resource_version() == new.resource_version() =>
                    {
                        unchanged += 1;
                    }
                    Notification::Update { .. } => updated += 1,
                    Notification::Delete { .. } => deleted += 1,
                }
            }
            let tombstones = format!("deleted ({})", plural(deleted, "tombstone"));
            let parts: Vec<String> = [
                (added, "added"),
                (updated, "updated"),
                (unchanged, "unchanged"),
                (deleted, tombstones.as_str()),
            ]
            .into_iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} {what}"))
            .collect();
            if parts.is_empty() {
                format!("{count} listed")
            } else {
                format!("{count} listed: {}", parts.join(", "))
            }
        }
        _ => String::new(),
    }
}

/// The delta types oldest→newest, consecutive repeats collapsed (`Updated×3`).
fn type_runs(deltas: &[Delta<Object>]) -> Vec<(String, Style)> {
    let mut runs: Vec<(DeltaType, bool, usize)> = Vec::new();
    for delta in deltas {
        let tombstone = delta.object.is_tombstone();
        match runs.last_mut() {
            Some((t, ts, n)) if *t == delta.type_ && *ts == tombstone => *n += 1,
            _ => runs.push((delta.type_, tombstone, 1)),
        }
    }
    runs.into_iter()
        .map(|(type_, tombstone, n)| {
            let mut text = type_.as_str().to_owned();
            if tombstone {
                text.push_str("(tombstone)");
            }
            if n > 1 {
                let _ = write!(text, "×{n}");
            }
            let style = if tombstone {
                Palette::tombstone()
            } else {
                Palette::delta(type_)
            };
            (text, style)
        })
        .collect()
}

/// What a row's updates changed: from the state before its first update to the state after its
/// last one (all of one key). `None` when nothing in the row updated an object already in the
/// cache (adds, deletions, the initial list).
pub(super) fn row_changes(
    notifications: &[&Notification<Object>],
    show_secret_data: bool,
) -> Option<Vec<Change>> {
    let mut updates = notifications.iter().filter_map(|n| match n {
        Notification::Update { old, new } => Some((old, new)),
        _ => None,
    });
    let (first_old, first_new) = updates.next()?;
    let last_new = updates.next_back().map_or(first_new, |(_, new)| new);
    let redact = !show_secret_data && last_new.is_secret();
    Some(changes::diff_objects(first_old, last_new, redact))
}

/// Who wrote what a row's updates changed (`kubelet (Update, status)`), as [`row_changes`]
/// compares: the newest managedFields entries of the state after its last update that the state
/// before its first did not have. `None` when managedFields do not say.
pub(super) fn row_writers(notifications: &[&Notification<Object>]) -> Option<String> {
    let mut updates = notifications.iter().filter_map(|n| match n {
        Notification::Update { old, new } => Some((old, new)),
        _ => None,
    });
    let (first_old, first_new) = updates.next()?;
    let last_new = updates.next_back().map_or(first_new, |(_, new)| new);
    describe_writers(&writers_since(Some(first_old), last_new))
}

/// The controller owner, else the first owner, as `Kind/name`; `-` without owners.
fn owner(meta: &ObjectMeta) -> String {
    let owners = meta.owner_references.as_deref().unwrap_or_default();
    owners
        .iter()
        .find(|o| o.controller == Some(true))
        .or(owners.first())
        .map_or_else(|| "-".to_owned(), |o| format!("{}/{}", o.kind, o.name))
}

fn pad(line: &mut String, n: usize) {
    line.extend(std::iter::repeat_n(' ', n));
}

/// `14:03:07.123` in `zone`.
pub fn local_time(time: SystemTime, zone: &TimeZone) -> String {
    match jiff::Timestamp::try_from(time) {
        Ok(ts) => ts
            .to_zoned(zone.clone())
            .strftime("%H:%M:%S%.3f")
            .to_string(),
        Err(_) => "--:--:--.---".to_owned(),
    }
}

#[cfg(test)]
#[path = "timeline_tests.rs"]
mod tests;

/// What makes a row alike another stack's (`--compare`): its text without its `volatile` parts and
/// colours, each run of spaces one space (columns grow as a session goes), and every duration left
/// out (`list done … 4.0ms`, `watch opened … (timeout 7m45s)`: a live session's stacks time and
/// draw their own).
fn row_identity(line: &str, volatile: &[Range<usize>]) -> String {
    let mut kept = String::with_capacity(line.len());
    let mut from = 0;
    for range in volatile {
        // The row's trailing spaces are trimmed after its cells are written: a range may reach
        // past its end.
        let end = range.end.min(line.len());
        if range.start >= from && range.start <= end {
            kept.push_str(&line[from..range.start]);
            from = end;
        }
    }
    kept.push_str(&line[from..]);
    let plain = strip_colour(&kept);
    let mut identity = String::with_capacity(plain.len());
    for token in plain.split_whitespace() {
        if !identity.is_empty() {
            identity.push(' ');
        }
        identity.push_str(if is_duration(token) { "·" } else { token });
    }
    identity
}

/// `text` without its SGR escapes (`ESC [ … m`), the only control codes a row holds: what the
/// cluster says is written escaped ([`printable`]).
fn strip_colour(text: &str) -> Cow<'_, str> {
    if !text.contains('\x1b') {
        return Cow::Borrowed(text);
    }
    let mut plain = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            plain.push(c);
        }
    }
    Cow::Owned(plain)
}

/// A duration as [`human_duration`] and the Reflector's rows write one (`4.0ms`, `1.28s`,
/// `7m45s`), with its punctuation (`(timeout 7m45s)`, `4.0ms,`).
fn is_duration(token: &str) -> bool {
    let token = token
        .trim_start_matches('(')
        .trim_end_matches([',', ')', ';', ':']);
    let units = ['n', 'µ', 'm', 's', 'h', 'd'];
    token.starts_with(|c: char| c.is_ascii_digit())
        && token.ends_with(units)
        && token
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.' || units.contains(&c))
}
