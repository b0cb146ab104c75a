//! The page itself: rows laid out top to bottom, time mapped to x, everything written as text.
//!
//! Every positioned element carries its time in milliseconds since the session's first event
//! (`data-t`, and `data-u` for where a span or an aggregate ends) so that `page.js` can map it to
//! x again when the view zooms; each row is a `<g class="row">` moved as a whole, so that hiding a
//! namespace or filtering keys only moves rows. Numbers are written with fixed decimals: the same
//! session gives the same bytes.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{Glyph, Lane, Mark, ResourceLog, Session, Span};
use crate::render::duration::human_duration;
use crate::render::{count, rfc3339_micros};

/// Marks drawn one by one, at most, across the page; beyond, the marks of a lane that fall in
/// one time bucket are drawn as one (see [`buckets`]).
pub const MARK_BUDGET: usize = 20_000;

/// Points of a series beyond which it keeps the largest value per pixel column.
const SERIES_POINTS: usize = 2 * PLOT_W as usize;

const WIDTH: f64 = 1280.0;
/// Where the plot starts: lane labels are left of it.
const PLOT_X: f64 = 240.0;
const PLOT_W: f64 = 1010.0;
const AXIS_H: f64 = 28.0;

const TITLE_H: f64 = 26.0;
const BAND_H: f64 = 46.0;
const DEPTH_H: f64 = 34.0;
const WAIT_H: f64 = 28.0;
const ACTOR_H: f64 = 36.0;
const GROUP_H: f64 = 20.0;
const LANE_H: f64 = 18.0;

const CSS: &str = include_str!("page.css");
const SCRIPT: &str = include_str!("page.js");

/// The time axis: microseconds since the epoch mapped onto the plot, with a margin either side.
struct Axis {
    /// The session's first time: `data-t` counts from it.
    origin: i64,
    /// The view's ends, in milliseconds from `origin`.
    from: f64,
    to: f64,
}

impl Axis {
    fn new(span: Option<(i64, i64)>) -> Self {
        let (first, last) = span.unwrap_or((0, 0));
        // At least a millisecond, so that a session of one instant still has a width.
        let length = ((last - first) as f64 / 1e3).max(1.0);
        let margin = length * 0.02;
        Axis {
            origin: first,
            from: -margin,
            to: length + margin,
        }
    }

    /// Milliseconds since the origin.
    fn ms(&self, t: i64) -> f64 {
        (t - self.origin) as f64 / 1e3
    }

    fn x(&self, t: i64) -> f64 {
        PLOT_X + (self.ms(t) - self.from) / (self.to - self.from) * PLOT_W
    }
}

/// `&`, `<`, `>`, `"` and `'` escaped, for text and attribute values.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A JSON text safe inside `<script>`: a `<` can only be in a string, where `\u003c` is the same.
fn script_json(text: &str) -> String {
    text.replace('<', "\\u003c")
}

/// The page of `session`, with its `command` line and its summary `table`.
pub(super) fn page(session: &Session, command: &str, table: &str) -> String {
    let axis = Axis::new(session.span);
    let mut lanes: Vec<&Lane> = Vec::new();
    for log in &session.resources {
        lanes.push(&log.reflector);
        lanes.push(&log.whole);
        lanes.extend(&log.actors);
        lanes.extend(log.keys.values());
    }
    let plan = buckets(&lanes, &axis);
    let mut chart = Chart {
        axis: &axis,
        buckets: plan,
        records: Vec::new(),
        numbered: BTreeMap::new(),
        body: String::new(),
        y: AXIS_H,
        drawn: 0,
        total: 0,
        differing: &session.comparison.keys,
    };
    for (resource, logs) in sections(session) {
        for log in &logs {
            chart.resource(log);
        }
        chart.keys(resource, &logs);
    }
    let height = chart.y + 8.0;

    let mut out = String::with_capacity(chart.body.len() + 64 * 1024);
    let names: Vec<&str> = session.resources.iter().map(|r| r.name.as_str()).collect();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"kubectl-deltas {}\">\n\
         <title>kubectl deltas: {}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n",
        env!("CARGO_PKG_VERSION"),
        esc(&names.join(", "))
    );
    header(&mut out, session, command, &axis, &chart);
    let _ = write!(
        out,
        "<main>\n<svg id=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {height:.0}\" \
         width=\"{WIDTH}\" height=\"{height:.0}\" data-from=\"{:.3}\" data-to=\"{:.3}\" \
         data-plot-x=\"{PLOT_X}\" data-plot-w=\"{PLOT_W}\" data-top=\"{AXIS_H}\" role=\"img\" \
         aria-label=\"What the informer of {} did over time\">\n",
        axis.from,
        axis.to,
        esc(&names.join(", "))
    );
    defs(&mut out);
    ticks(&mut out, &axis, height);
    out.push_str(&chart.body);
    out.push_str(
        "<rect id=\"brush\" x=\"0\" y=\"0\" width=\"0\" height=\"0\"/>\n</svg>\n</main>\n",
    );
    out.push_str(
        "<aside id=\"tip\" hidden></aside>\n<section class=\"summary\">\n<h2>Summary</h2>\n",
    );
    summary_tables(&mut out, table);
    out.push_str("</section>\n<script type=\"application/json\" id=\"kd-records\">[");
    for (i, index) in chart.records.iter().enumerate() {
        if i > 0 {
            out.push_str(",\n");
        }
        out.push_str(&script_json(&session.records[*index]));
    }
    out.push_str("]</script>\n<script>\n");
    out.push_str(SCRIPT);
    out.push_str("</script>\n</body>\n</html>\n");
    out
}

/// The summary printed on stderr, as HTML: each box-drawn table (comfy-table's
/// `UTF8_FULL_CONDENSED`, the only style the summaries use) as a `<table>`, its header row as
/// `<th>` cells and its first column as row headers, and every other line as a paragraph.
fn summary_tables(out: &mut String, text: &str) {
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut header_rows = 0;
    let flush = |out: &mut String, rows: &mut Vec<Vec<String>>, header_rows: &mut usize| {
        if rows.is_empty() {
            return;
        }
        out.push_str("<table>\n");
        for (i, row) in rows.iter().enumerate() {
            out.push_str("<tr>");
            for (j, cell) in row.iter().enumerate() {
                let (tag, scope) = if i < *header_rows {
                    ("th", " scope=\"col\"")
                } else if j == 0 {
                    ("th", " scope=\"row\"")
                } else {
                    ("td", "")
                };
                // Indented labels (`  of which errors`) keep their indent as a class.
                let sub = if cell.starts_with("  ") {
                    " class=\"sub\""
                } else {
                    ""
                };
                let _ = write!(out, "<{tag}{scope}{sub}>{}</{tag}>", esc(cell.trim()));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table>\n");
        rows.clear();
        *header_rows = 0;
    };
    for line in text.lines() {
        let Some(first) = line.chars().next() else {
            continue;
        };
        match first {
            '┌' | '├' => {}
            '╞' => header_rows = rows.len(),
            '└' => flush(out, &mut rows, &mut header_rows),
            '│' => {
                let inner = line.trim_start_matches('│').trim_end_matches('│');
                let cells = inner
                    .split(['│', '┆'])
                    .map(|cell| cell.strip_prefix(' ').unwrap_or(cell))
                    .map(|cell| cell.trim_end().to_owned())
                    .collect();
                rows.push(cells);
            }
            _ => {
                flush(out, &mut rows, &mut header_rows);
                let _ = writeln!(out, "<p>{}</p>", esc(line));
            }
        }
    }
    flush(out, &mut rows, &mut header_rows);
}

/// The top of the page: what made it, the client-go profile, the time span, the legend, and
/// what was aggregated or left out.
fn header(out: &mut String, session: &Session, command: &str, axis: &Axis, chart: &Chart<'_>) {
    let names: Vec<&str> = session.resources.iter().map(|r| r.name.as_str()).collect();
    let _ = write!(
        out,
        "<header>\n<h1>kubectl deltas: {}</h1>\n<p class=\"cmd\"><code>{}</code></p>\n<dl class=\"profile\">\n",
        esc(&names.join(", ")),
        esc(command)
    );
    for log in &session.resources {
        let _ = writeln!(
            out,
            "<dt>{}</dt><dd>{}</dd>",
            esc(&log.name),
            esc(log.profile.as_deref().unwrap_or("-"))
        );
    }
    out.push_str("</dl>\n");
    if let Some(caption) = session.story.caption() {
        let _ = writeln!(out, "<p class=\"story\" id=\"story\">{}</p>", esc(&caption));
    }
    let compared = &session.comparison;
    if !compared.verdicts.is_empty() {
        out.push_str("<section class=\"differences\" id=\"differences\"><ul>\n");
        for row in &compared.rows {
            let _ = writeln!(out, "<li class=\"difference\">{}</li>", esc(row));
        }
        for (verdict, same) in &compared.verdicts {
            let class = if *same {
                "verdict same"
            } else {
                "verdict differ"
            };
            let _ = writeln!(out, "<li class=\"{class}\">{}</li>", esc(verdict));
        }
        out.push_str("</ul></section>\n");
    }
    if let Some((first, last)) = session.span {
        let time = |t: i64| {
            let t = std::time::UNIX_EPOCH + std::time::Duration::from_micros(t.max(0) as u64);
            rfc3339_micros(t)
        };
        let keys: usize = session.resources.iter().map(|r| r.keys.len()).sum();
        let _ = writeln!(
            out,
            "<p class=\"span\">From {} to {} ({}, the informer's clock; x counts from the first \
             event): {}, {}.</p>",
            time(first),
            time(last),
            human_duration(std::time::Duration::from_micros(
                (last - first).max(0) as u64
            )),
            count(session.batches, "pop"),
            count(keys as u64, "key")
        );
    } else {
        out.push_str("<p class=\"span\">Nothing happened before the session ended.</p>\n");
    }
    if let Some(buckets) = chart.buckets {
        let bucket = (axis.to - axis.from) / f64::from(buckets);
        let _ = writeln!(
            out,
            "<p class=\"note\" id=\"aggregated\">Dense: {} marks, drawn as {}. Where a lane has \
             several marks within one bucket of {} ({buckets} buckets across the session), they \
             are drawn as one grey box with their count; hover it for their types. \
             <code>-o jsonl</code> has every batch.</p>",
            chart.total,
            chart.drawn,
            human_duration(std::time::Duration::from_secs_f64(bucket.max(0.0) / 1e3))
        );
    }
    if let Some(seq) = session.objects_cut_at {
        let _ = writeln!(
            out,
            "<p class=\"note\" id=\"objects-cut\">Objects are kept in the hover records up to {} MiB \
             of records; from pop {seq} on they are left out (<code>-o jsonl</code> has them).</p>",
            super::OBJECT_BUDGET >> 20
        );
    }
    out.push_str(
        "<div id=\"controls\" hidden><label>Filter keys <input id=\"filter\" type=\"search\" \
         placeholder=\"part of a key\" autocomplete=\"off\"></label> <button id=\"reset\" \
         type=\"button\">Whole session</button> <span class=\"help\">Wheel: zoom · drag: pan · \
         drag on the time axis: pick a window · click a namespace to fold it · click a mark to \
         pin its details</span></div>\n<ul class=\"legend\">\n",
    );
    for glyph in Glyph::ALL {
        let _ = writeln!(
            out,
            "<li><svg width=\"14\" height=\"14\" viewBox=\"-7 -7 14 14\" aria-hidden=\"true\"><use href=\"#g-{}\" x=\"-7\" y=\"-7\" width=\"14\" height=\"14\"/></svg> {}</li>",
            glyph.id(),
            esc(glyph.meaning())
        );
    }
    out.push_str(
        "<li><b>×N</b> deltas coalesced into one pop</li>\n<li><span class=\"swatch ini\"></span> \
         initial list</li>\n<li><span class=\"swatch agg\"></span> several marks in one bucket</li>\n\
         <li><span class=\"swatch lag\"></span> a handler call's wait in its buffer, a key's wait for a worker</li>\n\
         <li><span class=\"swatch rec\"></span> a reconcile of the key, from its start to its end (red: it returned an error)</li>\n</ul>\n\
         </header>\n",
    );
}

/// The shapes, each with its letter: a type is never told by colour alone.
fn defs(out: &mut String) {
    let _ = writeln!(
        out,
        "<defs>\n<clipPath id=\"plot\"><rect x=\"{PLOT_X}\" y=\"0\" width=\"{PLOT_W}\" height=\"1000000\"/></clipPath>"
    );
    for glyph in Glyph::ALL {
        let id = glyph.id();
        let (shape, letter) = match glyph {
            Glyph::Added => ("<circle r=\"5.5\"/>", "A"),
            Glyph::Updated => ("<rect x=\"-5\" y=\"-5\" width=\"10\" height=\"10\"/>", "U"),
            Glyph::Deleted => ("<path d=\"M-6,-5H6L0,6Z\"/>", "D"),
            Glyph::Replaced => ("<path d=\"M0,-6.5L6.5,0L0,6.5L-6.5,0Z\"/>", "R"),
            Glyph::Sync => ("<path d=\"M-3,-5.5H3L6,0L3,5.5H-3L-6,0Z\"/>", "S"),
            Glyph::Tombstone => (
                "<path d=\"M-6,-5H6L0,6Z\" stroke-dasharray=\"2 1.5\"/>",
                "T",
            ),
            Glyph::Bookmark => ("<path d=\"M-4,-6H4V6L0,3L-4,6Z\"/>", "B"),
            Glyph::NotDelivered => ("<circle r=\"5\"/>", "×"),
            Glyph::Expired => (
                "<rect x=\"-6\" y=\"-5\" width=\"12\" height=\"10\" rx=\"2\"/>",
                "!",
            ),
            Glyph::Relist => (
                "<rect x=\"-5\" y=\"-5\" width=\"10\" height=\"10\" rx=\"5\"/>",
                "L",
            ),
            Glyph::Backoff => ("<path d=\"M-6,-5H6V5H-6Z\"/>", "W"),
            Glyph::Resync => ("<circle r=\"5.5\"/>", "↻"),
            Glyph::Synced => ("<path d=\"M0,-6.5L6.5,0L0,6.5L-6.5,0Z\"/>", "✓"),
            Glyph::Alert => ("<path d=\"M0,-6.5L6.5,5.5H-6.5Z\"/>", "!"),
            Glyph::ReconcileOk => (
                "<rect x=\"-6\" y=\"-5\" width=\"12\" height=\"10\" rx=\"3\"/>",
                "⇒",
            ),
            Glyph::ReconcileError => ("<path d=\"M-6,-6H6V6H-6Z\"/>", "✗"),
        };
        let _ = writeln!(
            out,
            "<symbol id=\"g-{id}\" class=\"t-{id}\" viewBox=\"-7 -7 14 14\" overflow=\"visible\">{shape}<text y=\"3\">{letter}</text></symbol>"
        );
    }
    out.push_str("</defs>\n");
}

/// A step of 1, 2 or 5 times a power of ten milliseconds giving about ten ticks.
fn tick_step(span_ms: f64) -> f64 {
    let raw = span_ms / 10.0;
    let power = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|step| *step >= raw)
        .unwrap_or(10.0 * power)
}

/// `+1.5s`, `+250ms`, `+2m30s` from the first event.
fn tick_label(ms: f64, step: f64) -> String {
    if ms.abs() < 1e-9 {
        return "0".to_owned();
    }
    if step < 1000.0 && ms < 1000.0 {
        return format!("+{ms:.0}ms");
    }
    if step < 1000.0 {
        // As many decimals as the step needs: 0.5s steps take one, 0.05s steps two.
        let decimals = (1000.0 / step).log10().ceil() as usize;
        return format!("+{:.*}s", decimals, ms / 1000.0);
    }
    let s = ms / 1000.0;
    if s >= 60.0 && step >= 60_000.0 {
        let m = (s / 60.0).floor();
        let rest = s - m * 60.0;
        return if rest.abs() < 1e-6 {
            format!("+{m:.0}m")
        } else {
            format!("+{m:.0}m{rest:.0}s")
        };
    }
    if (s - s.round()).abs() < 1e-6 {
        format!("+{s:.0}s")
    } else {
        format!("+{s:.1}s")
    }
}

/// The axis: the static page's ticks (the script draws them again as the view changes).
fn ticks(out: &mut String, axis: &Axis, height: f64) {
    let step = tick_step(axis.to - axis.from);
    let _ = writeln!(
        out,
        "<g id=\"axis\"><rect class=\"axis-bg\" x=\"{PLOT_X}\" y=\"0\" width=\"{PLOT_W}\" height=\"{AXIS_H}\"/><text class=\"lbl\" x=\"8\" y=\"18\">time (since the first event)</text>"
    );
    let mut ms = (axis.from / step).ceil() * step;
    while ms <= axis.to {
        let x = PLOT_X + (ms - axis.from) / (axis.to - axis.from) * PLOT_W;
        let _ = writeln!(
            out,
            "<g class=\"tick\"><line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{:.0}\" y2=\"{height:.0}\"/><text x=\"{x:.1}\" y=\"16\">{}</text></g>",
            AXIS_H - 6.0,
            tick_label(ms, step)
        );
        ms += step;
    }
    out.push_str("</g>\n");
}

/// How many time buckets lanes are cut into when the page has more than [`MARK_BUDGET`] marks:
/// the most, among halvings of 512, that keeps the marks drawn within the budget (a bucket with
/// one mark draws it, one with several draws one box); `None` when every mark fits.
fn buckets(lanes: &[&Lane], axis: &Axis) -> Option<u32> {
    let total: usize = lanes.iter().map(|l| l.marks.len()).sum();
    if total <= MARK_BUDGET {
        return None;
    }
    let mut buckets = 512u32;
    while buckets > 1 {
        let drawn: usize = lanes
            .iter()
            .map(|lane| bucketed(&lane.marks, axis, buckets).len())
            .sum();
        if drawn <= MARK_BUDGET {
            break;
        }
        buckets /= 2;
    }
    Some(buckets)
}

/// The marks of a lane grouped by bucket, in time order.
fn bucketed<'a>(marks: &'a [Mark], axis: &Axis, buckets: u32) -> Vec<(u32, Vec<&'a Mark>)> {
    let mut groups: BTreeMap<u32, Vec<&Mark>> = BTreeMap::new();
    for mark in marks {
        let at = (axis.ms(mark.t) - axis.from) / (axis.to - axis.from) * f64::from(buckets);
        let bucket = (at.floor().max(0.0) as u32).min(buckets - 1);
        groups.entry(bucket).or_default().push(mark);
    }
    groups.into_iter().collect()
}

/// How many characters of a lane's label are drawn left of the plot; the whole label is its
/// hover.
const LABEL_CHARS: usize = 34;

/// `text` cut to `chars` characters, the last an ellipsis when cut.
fn cut(text: &str, chars: usize) -> Cow<'_, str> {
    if text.chars().count() <= chars {
        return Cow::Borrowed(text);
    }
    let mut shown: String = text.chars().take(chars.saturating_sub(1)).collect();
    shown.push('…');
    Cow::Owned(shown)
}

/// The page's sections, by resource in the order they came: each resource's logs, one per stack
/// under `--compare` in the stacks' order, else one.
fn sections(session: &Session) -> Vec<(&str, Vec<&ResourceLog>)> {
    let mut sections: Vec<(&str, Vec<&ResourceLog>)> = Vec::new();
    for log in &session.resources {
        match sections.iter_mut().find(|(r, _)| *r == log.resource) {
            Some((_, logs)) => logs.push(log),
            None => sections.push((&log.resource, vec![log])),
        }
    }
    let place = |log: &&ResourceLog| {
        let stack = log.stack.as_deref();
        (session.stacks.iter()).position(|s| Some(s.as_str()) == stack)
    };
    for (_, logs) in &mut sections {
        logs.sort_by_key(place);
    }
    sections
}

struct Chart<'a> {
    axis: &'a Axis,
    buckets: Option<u32>,
    /// The records written, in page order: `data-i` indexes this.
    records: Vec<usize>,
    /// Session record → page record.
    numbered: BTreeMap<usize, usize>,
    body: String,
    /// Where the next row starts.
    y: f64,
    /// Marks drawn, and marks there were.
    drawn: usize,
    total: usize,
    /// `--compare`: the keys where the stacks differ, whose lanes are highlighted.
    differing: &'a std::collections::BTreeSet<String>,
}

impl Chart<'_> {
    fn number(&mut self, record: Option<usize>) -> String {
        let Some(record) = record else {
            return String::new();
        };
        let next = self.records.len();
        let n = *self.numbered.entry(record).or_insert(next);
        if n == next {
            self.records.push(record);
        }
        format!(" data-i=\"{n}\"")
    }

    fn row_start(&mut self, class: &str, height: f64, attrs: &str) {
        let _ = writeln!(
            self.body,
            "<g class=\"row {class}\" data-h=\"{height:.0}\"{attrs} transform=\"translate(0,{:.0})\">",
            self.y
        );
        self.y += height;
    }

    fn label(&mut self, text: &str, y: f64, class: &str) {
        let _ = writeln!(
            self.body,
            "<text class=\"{class}\" x=\"8\" y=\"{y:.0}\">{}<title>{}</title></text>",
            esc(&cut(text, LABEL_CHARS)),
            esc(text)
        );
    }

    /// A key lane's label under `--compare`: the key's name, cut to leave room for its stack,
    /// then the stack (`worker-2 · latest`).
    fn label_with(&mut self, name: &str, stack: &str, y: f64) {
        let room = LABEL_CHARS.saturating_sub(stack.chars().count() + 3).max(8);
        let shown = cut(name, room);
        let _ = writeln!(
            self.body,
            "<text class=\"key\" x=\"8\" y=\"{y:.0}\">{}<tspan class=\"stack\"> · {}</tspan><title>{} · {}</title></text>",
            esc(&shown),
            esc(stack),
            esc(name),
            esc(stack)
        );
    }

    fn resource(&mut self, log: &ResourceLog) {
        let name = esc(&log.name);
        self.row_start("title", TITLE_H, &format!(" data-r=\"{name}\""));
        let _ = writeln!(
            self.body,
            "<text class=\"res\" x=\"8\" y=\"18\">{name}</text><line class=\"sep\" x1=\"0\" x2=\"{WIDTH}\" y1=\"25.5\" y2=\"25.5\"/></g>"
        );

        self.row_start("band", BAND_H, "");
        self.label("Reflector", 18.0, "lbl");
        self.label("lists · watches · events", 34.0, "sub");
        self.body.push_str("<g clip-path=\"url(#plot)\">\n");
        let end = self.axis.origin + ((self.axis.to * 1e3) as i64);
        for span in &log.reflector.spans {
            let (y, height) = if span.class == "list" {
                (3.0, 11.0)
            } else {
                (16.0, 9.0)
            };
            self.span(span, y, height, end);
        }
        self.band_marks(&log.reflector.marks, 34.0);
        self.body.push_str("</g></g>\n");

        if !log.depth.series.is_empty() {
            let max = series_max(&log.depth.series);
            self.row_start("depth", DEPTH_H, "");
            let what = if log.whole.label == "UndeltaStore pushes" {
                "objects pushed"
            } else {
                "queue depth at each pop"
            };
            self.label(what, 16.0, "lbl");
            self.label(&format!("max {max}"), 30.0, "sub");
            self.series(
                &log.depth.series,
                max,
                DEPTH_H - 4.0,
                DEPTH_H - 8.0,
                "depth-line",
                true,
            );
            self.body.push_str("</g>\n");
        }
        if log.whole.label != "UndeltaStore pushes" && !log.wait.series.is_empty() {
            let max = series_max(&log.wait.series);
            self.row_start("wait", WAIT_H, "");
            self.label("wait in the queue", 14.0, "lbl");
            let max_text = human_duration(std::time::Duration::from_secs_f64(max / 1e3));
            self.label(&format!("per pop, max {max_text}"), 26.0, "sub");
            self.series(
                &log.wait.series,
                max,
                WAIT_H - 3.0,
                WAIT_H - 8.0,
                "wait-bars",
                false,
            );
            self.body.push_str("</g>\n");
        }
        for actor in &log.actors {
            self.actor(actor, end);
        }
        if !log.whole.marks.is_empty() {
            let label = if log.whole.label.is_empty() {
                "* (whole list)".to_owned()
            } else {
                log.whole.label.clone()
            };
            self.row_start("lane", LANE_H, &format!(" data-key=\"{}\"", esc(&label)));
            self.label(&label, 13.0, "key");
            self.body.push_str("<g clip-path=\"url(#plot)\">\n");
            self.marks(&log.whole, 9.0);
            self.body.push_str("</g></g>\n");
        }
    }

    /// The key lanes of `resource`, grouped by namespace (cluster-scoped keys, without one,
    /// first): one lane per key, and under `--compare` one per stack of each key, in the stacks'
    /// order (`logs`), empty where a stack popped nothing of its own for the key.
    fn keys(&mut self, resource: &str, logs: &[&ResourceLog]) {
        let end = self.axis.origin + ((self.axis.to * 1e3) as i64);
        let compared = logs.len() > 1 || logs.iter().any(|log| log.stack.is_some());
        if compared {
            let stacks: Vec<&str> = (logs.iter()).filter_map(|l| l.stack.as_deref()).collect();
            let title = format!("{resource}: keys, a lane per stack ({})", stacks.join(", "));
            self.row_start("title", TITLE_H, &format!(" data-r=\"{}\"", esc(resource)));
            let _ = writeln!(
                self.body,
                "<text class=\"res\" x=\"8\" y=\"18\">{}</text><line class=\"sep\" x1=\"0\" x2=\"{WIDTH}\" y1=\"25.5\" y2=\"25.5\"/></g>",
                esc(&title)
            );
        }
        let mut groups: BTreeMap<&str, std::collections::BTreeSet<&str>> = BTreeMap::new();
        for log in logs {
            for key in log.keys.keys() {
                let (ns, name) = key.split_once('/').unwrap_or(("", key.as_str()));
                groups.entry(ns).or_default().insert(name);
            }
        }
        for (ns, names) in groups {
            let group = esc(&format!("{resource}/{ns}"));
            let shown = if ns.is_empty() {
                "(cluster-scoped)"
            } else {
                ns
            };
            self.row_start("group", GROUP_H, &format!(" data-g=\"{group}\""));
            let _ = writeln!(
                self.body,
                "<text class=\"ns\" x=\"4\" y=\"14\"><tspan class=\"fold\">▾</tspan> {} · {}</text><line class=\"sep\" x1=\"0\" x2=\"{WIDTH}\" y1=\"19.5\" y2=\"19.5\"/></g>",
                esc(shown),
                count(names.len() as u64, "key")
            );
            for name in names {
                let key = if ns.is_empty() {
                    name.to_owned()
                } else {
                    format!("{ns}/{name}")
                };
                let class = if self.differing.contains(&key) {
                    "lane differs"
                } else {
                    "lane"
                };
                for log in logs {
                    self.row_start(
                        class,
                        LANE_H,
                        &format!(" data-g=\"{group}\" data-key=\"{}\"", esc(&key)),
                    );
                    let _ = writeln!(
                        self.body,
                        "<line class=\"rule\" x1=\"{PLOT_X}\" x2=\"{:.0}\" y1=\"9\" y2=\"9\"/>",
                        PLOT_X + PLOT_W
                    );
                    match (compared, &log.stack) {
                        (true, Some(stack)) => self.label_with(name, stack, 13.0),
                        _ => self.label(name, 13.0, "key"),
                    }
                    self.body.push_str("<g clip-path=\"url(#plot)\">\n");
                    if let Some(lane) = log.keys.get(&key) {
                        // A controller's reconciles of the key, as bars under its pops.
                        for span in &lane.spans {
                            self.span(span, 3.0, 12.0, end);
                        }
                        self.marks(lane, 9.0);
                    }
                    self.body.push_str("</g></g>\n");
                }
            }
        }
    }

    /// One handler's lane (its calls and buffer depth) or one controller's (its reconciles and
    /// how many ran at once).
    fn actor(&mut self, actor: &Lane, end: i64) {
        let concurrency;
        let series = if actor.reconciles {
            concurrency = running_at_once(&actor.busy);
            &concurrency
        } else {
            &actor.series
        };
        let max = series_max(series);
        if actor.reconciles {
            self.row_start(
                "actor",
                ACTOR_H,
                &format!(" data-controller=\"{}\"", esc(&actor.label)),
            );
            self.label(&format!("controller {}", actor.label), 14.0, "lbl");
            self.label(&format!("reconciles at once (max {max})"), 28.0, "sub");
        } else {
            self.row_start(
                "actor",
                ACTOR_H,
                &format!(" data-actor=\"{}\"", esc(&actor.label)),
            );
            self.label(&format!("handler {}", actor.label), 14.0, "lbl");
            self.label(&format!("calls · buffer depth (max {max})"), 28.0, "sub");
        }
        self.body.push_str("<g clip-path=\"url(#plot)\">\n");
        for span in &actor.spans {
            self.span(span, 11.0, 2.0, end);
        }
        self.body.push_str("</g>\n");
        let class = if actor.reconciles {
            "running-line"
        } else {
            "buffer-line"
        };
        self.series(series, max, ACTOR_H - 2.0, 12.0, class, true);
        self.body.push_str("<g clip-path=\"url(#plot)\">\n");
        self.marks(actor, 12.0);
        self.body.push_str("</g></g>\n");
    }

    fn span(&mut self, span: &Span, y: f64, height: f64, end: i64) {
        let to = span.to.unwrap_or(end);
        let (x1, x2) = (self.axis.x(span.from), self.axis.x(to));
        let data = self.number(span.record);
        let open = if span.to.is_none() { " open" } else { "" };
        let _ = writeln!(
            self.body,
            "<rect class=\"span {}{open}\"{data} data-t=\"{:.3}\" data-u=\"{:.3}\" x=\"{x1:.1}\" y=\"{y:.0}\" width=\"{:.1}\" height=\"{height:.0}\"><title>{}</title></rect>",
            span.class,
            self.axis.ms(span.from),
            self.axis.ms(to),
            (x2 - x1).max(1.0),
            esc(&span.title)
        );
        if let Some(label) = &span.label {
            // Inside the span, when it is wide enough (the script decides again as it zooms).
            let hidden = if x2 - x1 < text_width(label) + 4.0 {
                " hidden"
            } else {
                ""
            };
            let _ = writeln!(
                self.body,
                "<text class=\"sl{hidden}\" data-t=\"{:.3}\" data-u=\"{:.3}\" x=\"{:.1}\" y=\"{:.0}\">{}</text>",
                self.axis.ms(span.from),
                self.axis.ms(to),
                x1 + 2.0,
                y + height - 2.0,
                esc(label)
            );
        }
    }

    fn marks(&mut self, lane: &Lane, y: f64) {
        self.total += lane.marks.len();
        let Some(buckets) = self.buckets else {
            for (i, mark) in lane.marks.iter().enumerate() {
                let next = lane.marks.get(i + 1).map(|next| self.axis.x(next.t));
                self.mark(mark, y, next);
            }
            return;
        };
        let groups = bucketed(&lane.marks, self.axis, buckets);
        for (i, (_, group)) in groups.iter().enumerate() {
            if let [mark] = group.as_slice() {
                let next = groups.get(i + 1).map(|(_, next)| self.axis.x(next[0].t));
                self.mark(mark, y, next);
                continue;
            }
            self.drawn += 1;
            let (first, last) = (group[0].t, group[group.len() - 1].t);
            let mut kinds: BTreeMap<Glyph, usize> = BTreeMap::new();
            for mark in group {
                for glyph in &mark.glyphs {
                    *kinds.entry(*glyph).or_default() += 1;
                }
            }
            let kinds: Vec<String> = kinds
                .iter()
                .map(|(glyph, n)| format!("{n} {}", glyph.meaning()))
                .collect();
            let (x1, x2) = (self.axis.x(first), self.axis.x(last));
            let _ = writeln!(
                self.body,
                "<g class=\"m agg\" data-t=\"{:.3}\" data-u=\"{:.3}\" data-y=\"{y:.0}\" transform=\"translate({x1:.1},{y:.0})\"><rect x=\"-3\" y=\"-6\" width=\"{:.1}\" height=\"12\"/><text x=\"0\" y=\"4\">{}</text><title>{} marks from {} to {}: {}</title></g>",
                self.axis.ms(first),
                self.axis.ms(last),
                (x2 - x1) + 6.0,
                group.len(),
                group.len(),
                rfc3339_micros(
                    std::time::UNIX_EPOCH + std::time::Duration::from_micros(first.max(0) as u64)
                ),
                rfc3339_micros(
                    std::time::UNIX_EPOCH + std::time::Duration::from_micros(last.max(0) as u64)
                ),
                esc(&kinds.join(", "))
            );
        }
    }

    /// The Reflector's marks, the events that explain a session on top: each [`rank`] is a layer
    /// (`<g class="layer" data-rank>`) drawn after the ranks below it, and a mark's label makes
    /// way for the next mark of its rank or above, never for one drawn beneath it (a 410's label
    /// stays when a backoff starts at the same instant; the backoff's gives way).
    fn band_marks(&mut self, marks: &[Mark], y: f64) {
        let mut layers: BTreeMap<u8, Vec<usize>> = BTreeMap::new();
        for (i, mark) in marks.iter().enumerate() {
            layers.entry(rank(mark)).or_default().push(i);
        }
        for (&layer, members) in &layers {
            let _ = writeln!(self.body, "<g class=\"layer\" data-rank=\"{layer}\">");
            if self.buckets.is_some() {
                let lane = Lane {
                    marks: members.iter().map(|&i| marks[i].clone()).collect(),
                    ..Lane::default()
                };
                self.marks(&lane, y);
            } else {
                for &i in members {
                    let own = (marks[i].t, layer, i);
                    let next = marks
                        .iter()
                        .enumerate()
                        .filter(|&(j, m)| j != i && rank(m) >= layer)
                        .map(|(j, m)| (m.t, rank(m), j))
                        .filter(|other| {
                            other.0 > own.0
                                || (other.0 == own.0 && (other.1, other.2) > (own.1, own.2))
                        })
                        .map(|(t, _, _)| t)
                        .min()
                        .map(|t| self.axis.x(t));
                    self.total += 1;
                    self.mark(&marks[i], y, next);
                }
            }
            self.body.push_str("</g>\n");
        }
    }

    /// Draws `mark` at height `y`; its label only if it ends before the next mark, at `next`.
    fn mark(&mut self, mark: &Mark, y: f64, next: Option<f64>) {
        self.drawn += 1;
        let data = self.number(mark.record);
        let x = self.axis.x(mark.t);
        let initial = if mark.initial { " initial" } else { "" };
        let _ = write!(
            self.body,
            "<g class=\"m{initial}\"{data} data-t=\"{:.3}\" data-y=\"{y:.0}\" transform=\"translate({x:.1},{y:.0})\">",
            self.axis.ms(mark.t)
        );
        if mark.glyphs.is_empty() {
            self.body
                .push_str("<line class=\"page\" x1=\"0\" x2=\"0\" y1=\"-5\" y2=\"5\"/>");
        }
        for (i, glyph) in mark.glyphs.iter().take(3).enumerate() {
            let _ = write!(
                self.body,
                "<use href=\"#g-{}\" x=\"{}\" y=\"-7\" width=\"14\" height=\"14\"/>",
                glyph.id(),
                i as i32 * 9 - 7
            );
        }
        if mark.initial {
            self.body
                .push_str("<rect class=\"ini\" x=\"-6\" y=\"7\" width=\"12\" height=\"2\"/>");
        }
        let after = (mark.glyphs.len().min(3) as f64 - 1.0).max(0.0) * 9.0 + 8.0;
        if mark.count > 1 {
            let _ = write!(
                self.body,
                "<text class=\"n\" x=\"{after:.0}\" y=\"-2\">×{}</text>",
                mark.count
            );
        }
        if let Some(label) = &mark.label {
            let fits = next.is_none_or(|next| next - x >= after + text_width(label) + 4.0);
            let hidden = if fits { "" } else { " hidden" };
            let _ = write!(
                self.body,
                "<text class=\"ml{hidden}\" x=\"{after:.0}\" y=\"4\">{}</text>",
                esc(label)
            );
        }
        let _ = writeln!(self.body, "<title>{}</title></g>", esc(&mark.title));
    }

    /// A series drawn from `base` up by at most `height`: a step line, or bars.
    fn series(
        &mut self,
        points: &[(i64, f64)],
        max: f64,
        base: f64,
        height: f64,
        class: &str,
        step: bool,
    ) {
        if points.is_empty() {
            return;
        }
        let points = thin(points, self.axis);
        let scale = if max > 0.0 { height / max } else { 0.0 };
        let mut data = String::new();
        let mut previous = base;
        for (i, (t, v)) in points.iter().enumerate() {
            let y = base - v * scale;
            let ms = self.axis.ms(*t);
            if step && i > 0 {
                let _ = write!(data, "{ms:.3},{previous:.1} ");
            }
            if step {
                let _ = write!(data, "{ms:.3},{y:.1} ");
            } else {
                // Up and down at the same time: a bar, the baseline between two.
                let _ = write!(data, "{ms:.3},{base:.1} {ms:.3},{y:.1} {ms:.3},{base:.1} ");
            }
            previous = y;
        }
        let data = data.trim_end();
        let drawn: Vec<String> = data
            .split(' ')
            .map(|p| {
                let (t, y) = p.split_once(',').unwrap_or(("0", "0"));
                let t: f64 = t.parse().unwrap_or(0.0);
                let x = PLOT_X + (t - self.axis.from) / (self.axis.to - self.axis.from) * PLOT_W;
                format!("{x:.1},{y}")
            })
            .collect();
        let kind = if step { "steps" } else { "bars" };
        let _ = writeln!(
            self.body,
            "<g clip-path=\"url(#plot)\"><polyline class=\"{class} {kind}\" data-p=\"{data}\" points=\"{}\"/></g>",
            drawn.join(" ")
        );
    }
}

/// How much a Reflector mark explains the session, for the order they are drawn in (highest on
/// top): a 410 or another relist, an error or a drift, then `HasSynced`, then the rest
/// (backoffs, resyncs, bookmarks, list pages).
fn rank(mark: &Mark) -> u8 {
    mark.glyphs
        .iter()
        .map(|glyph| match glyph {
            Glyph::Expired | Glyph::Relist | Glyph::Alert => 2,
            Glyph::Synced => 1,
            _ => 0,
        })
        .max()
        .unwrap_or(0)
}

/// How many reconciles ran at once over time, from their `(start, end)`: a step series, an end
/// counted before a start at the same instant (a worker's next key starts as the last ends).
fn running_at_once(busy: &[(i64, i64)]) -> Vec<(i64, f64)> {
    let mut steps: Vec<(i64, i8)> = busy
        .iter()
        .flat_map(|&(from, to)| [(from, 1), (to, -1)])
        .collect();
    steps.sort_unstable();
    let mut running = 0i64;
    let mut series: Vec<(i64, f64)> = Vec::with_capacity(steps.len());
    for (t, step) in steps {
        running += i64::from(step);
        match series.last_mut() {
            Some(last) if last.0 == t => last.1 = running as f64,
            _ => series.push((t, running as f64)),
        }
    }
    series
}

/// About how wide `text` is drawn at the labels' 9.5px: the static page's guess, which the script
/// replaces by the measured width.
fn text_width(text: &str) -> f64 {
    text.chars().count() as f64 * 5.4
}

/// The largest value of a series, rounded up to a whole number for its label.
fn series_max(points: &[(i64, f64)]) -> f64 {
    points.iter().map(|(_, v)| *v).fold(0.0, f64::max).ceil()
}

/// A series of more than [`SERIES_POINTS`] points cut to the largest value per pixel column of
/// the whole session (the first time of each column), so that a long session's line stays light.
fn thin(points: &[(i64, f64)], axis: &Axis) -> Vec<(i64, f64)> {
    if points.len() <= SERIES_POINTS {
        return points.to_vec();
    }
    let mut columns: BTreeMap<i64, (i64, f64)> = BTreeMap::new();
    for (t, v) in points {
        let column = ((axis.ms(*t) - axis.from) / (axis.to - axis.from) * PLOT_W).floor() as i64;
        let entry = columns.entry(column).or_insert((*t, *v));
        entry.1 = entry.1.max(*v);
    }
    columns.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::super::{Glyph, Lane, Mark, ResourceLog, Session};
    use super::*;

    fn mark(t: i64, record: Option<usize>) -> Mark {
        Mark {
            t,
            glyphs: vec![Glyph::Updated],
            count: 1,
            initial: false,
            record,
            title: format!("at {t}"),
            label: None,
        }
    }

    /// A session of one resource whose `keys` lanes each hold `per_key` marks, a second apart.
    fn session(keys: usize, per_key: usize) -> Session {
        let mut log = ResourceLog {
            name: "configmaps".to_owned(),
            ..ResourceLog::default()
        };
        let mut records = Vec::new();
        for k in 0..keys {
            let mut lane = Lane::labelled(&format!("demo/cm-{k:05}"));
            for i in 0..per_key {
                records.push(format!("{{\"batch\":{{\"seq\":{}}}}}", records.len() + 1));
                lane.marks
                    .push(mark(i as i64 * 1_000_000, Some(records.len() - 1)));
            }
            log.keys.insert(lane.label.clone(), lane);
        }
        Session {
            resources: vec![log],
            records,
            span: Some((0, (per_key as i64 - 1).max(1) * 1_000_000)),
            batches: (keys * per_key) as u64,
            ..Session::default()
        }
    }

    #[test]
    fn marks_within_the_budget_are_drawn_one_by_one() {
        let page = page(&session(10, 100), "kubectl deltas", "");
        assert_eq!(page.matches("<g class=\"m\"").count(), 1000);
        assert!(!page.contains("class=\"m agg\""));
        assert!(!page.contains("id=\"aggregated\""));
        // Every drawn mark's record, once.
        assert_eq!(page.matches("{\"batch\":").count(), 1000);
    }

    #[test]
    fn beyond_the_budget_a_lane_draws_one_box_per_busy_bucket_and_the_page_says_so() {
        // 100 keys × 1000 pops: 100,000 marks, five times the budget.
        let page = page(&session(100, 1000), "kubectl deltas", "");
        let single = page.matches("<g class=\"m\"").count();
        let boxes = page.matches("<g class=\"m agg\"").count();
        assert!(boxes > 0, "nothing aggregated");
        assert!(single + boxes <= MARK_BUDGET, "{single} + {boxes} drawn");
        assert!(page.contains("id=\"aggregated\""));
        assert!(
            page.contains("Dense: 100000 marks, drawn as"),
            "the note counts them"
        );
        // The boxes together still count every mark.
        let counted: usize = page
            .split("<g class=\"m agg\"")
            .skip(1)
            .map(|b| {
                let title = b.split("<title>").nth(1).unwrap();
                title.split(' ').next().unwrap().parse::<usize>().unwrap()
            })
            .sum();
        assert_eq!(counted + single, 100_000);
        // Only the marks drawn alone carry a record.
        assert_eq!(page.matches("{\"batch\":").count(), single);
    }

    #[test]
    fn what_a_session_says_cannot_break_out_of_the_page() {
        let mut session = session(1, 1);
        session.records[0] = r#"{"batch":{"note":"</script><script>alert(1)</script>"}}"#.into();
        let lane = session.resources[0].keys.values_mut().next().unwrap();
        lane.marks[0].title = "<img src=x onerror=alert(1)> & \"quoted\"".into();
        let page = page(&session, "kubectl deltas replay 'a<b>.jsonl'", "");
        assert!(
            !page.contains("<script>alert"),
            "a record closed the script element"
        );
        assert!(page.contains(r#""\u003c/script>\u003cscript>alert(1)\u003c/script>""#));
        assert!(!page.contains("<img"), "a title made an element");
        assert!(page.contains("&lt;img src=x onerror=alert(1)&gt; &amp; &quot;quoted&quot;"));
        assert!(page.contains("replay &#39;a&lt;b&gt;.jsonl&#39;"));
    }

    #[test]
    fn ticks_step_by_one_two_or_five_and_say_their_unit() {
        assert_eq!(tick_step(47_010.0), 5_000.0);
        assert_eq!(tick_step(3_900.0), 500.0);
        assert_eq!(tick_step(0.9), 0.1);
        assert_eq!(tick_label(0.0, 500.0), "0");
        assert_eq!(tick_label(500.0, 500.0), "+500ms");
        assert_eq!(tick_label(1_500.0, 500.0), "+1.5s");
        assert_eq!(tick_label(1_050.0, 50.0), "+1.05s");
        assert_eq!(tick_label(45_000.0, 5_000.0), "+45s");
        assert_eq!(tick_label(150_000.0, 60_000.0), "+2m30s");
        assert_eq!(tick_label(120_000.0, 60_000.0), "+2m");
    }

    #[test]
    fn a_long_series_keeps_the_largest_value_of_each_pixel_column() {
        let axis = Axis::new(Some((0, 10_000_000_000)));
        let points: Vec<(i64, f64)> = (0..100_000)
            .map(|i| (i * 100_000, (i % 7) as f64))
            .collect();
        let thinned = thin(&points, &axis);
        assert!(thinned.len() <= PLOT_W as usize + 1, "{}", thinned.len());
        assert!(
            thinned.iter().all(|(_, v)| *v == 6.0),
            "a column lost its peak"
        );
        let short = &points[..100];
        assert_eq!(thin(short, &axis), short.to_vec());
    }
}
