//! The table printed on stderr when a watch ends (Ctrl-C, `--until-synced`, `--max-batches`):
//! what the informer popped and how its queue behaved, one column per resource (and a total when
//! several ran). With `--store undelta` there is no queue: the table counts the pushes instead.

use comfy_table::{CellAlignment, ContentArrangement, Table, presets};

use super::duration::human_duration;
use super::printable;
use super::stats::{HandlerStats, InformerStats, WaitHistogram};
use crate::cache::DeltaType;

/// The summary of `informers` (`(resource, stats)`), as text ending with a newline.
pub fn summary_table(informers: &[(&str, &InformerStats)]) -> String {
    table_of(informers, true)
}

/// The summary of informers that each ran the same stream (`--compare`'s stacks), side by side:
/// without the total, which would count the stream once per stack.
pub fn side_by_side_table(informers: &[(&str, &InformerStats)]) -> String {
    table_of(informers, false)
}

fn table_of(informers: &[(&str, &InformerStats)], total: bool) -> String {
    let mut columns: Vec<(String, InformerStats)> = informers
        .iter()
        .map(|(name, stats)| ((*name).to_owned(), (*stats).clone()))
        .collect();
    if total && informers.len() > 1 {
        let all = InformerStats::merged(informers.iter().map(|(_, s)| *s));
        columns.push(("all".to_owned(), all));
    }

    let mut table = Table::new();
    table
        .load_style(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled);
    let mut header = vec![String::new()];
    header.extend(columns.iter().map(|(name, _)| printable(name).into_owned()));
    table.set_header(header);

    let row = |label: &str, value: &dyn Fn(&InformerStats) -> String| {
        let mut cells = vec![label.to_owned()];
        cells.extend(columns.iter().map(|(_, s)| value(s)));
        cells
    };
    let undelta = columns.iter().any(|(_, s)| s.undelta);
    if undelta {
        push_rows(&mut table, &row);
    } else {
        queue_rows(&mut table, &columns, &row);
    }
    table.add_row(row("relists", &|s| s.relists.to_string()));
    // Only a list at an expired or too recent resourceVersion is retried: zeros would be noise.
    if columns.iter().any(|(_, s)| s.list_retries > 0) {
        table.add_row(row("  list retries", &|s| s.list_retries.to_string()));
    }
    table.add_row(row("watch restarts", &|s| s.watch_restarts().to_string()));
    table.add_row(row("bookmarks", &|s| s.bookmarks.to_string()));
    if columns.iter().any(|(_, s)| s.cache.is_some()) {
        table.add_row(row("cache (objects, size)", &|s| match s.cache {
            Some(cache) => format!("{}, {}", cache.objects, human_bytes(cache.bytes)),
            None => "-".to_owned(),
        }));
    }
    let counted = if undelta { "push" } else { "batch" };
    table.add_row(row("time to HasSynced", &|s| match s.synced {
        Some(synced) => format!(
            "{} ({})",
            human_duration(synced.after),
            super::count(synced.batches, counted)
        ),
        None => "not synced".to_owned(),
    }));
    let mut text = figures_text(&mut table);
    if let Some(handlers) = handler_table(informers) {
        text.push_str(&handlers);
    }
    text
}

/// `512 B`, `3.4 KiB`, `2.1 MiB`, `1.52 GiB`.
fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    match unit {
        0 => format!("{bytes} B"),
        _ if value < 10.0 => format!("{value:.2} {}", UNITS[unit]),
        _ => format!("{value:.1} {}", UNITS[unit]),
    }
}

/// A row's cells: its label, then one value per column.
type RowFn<'a> = dyn Fn(&str, &dyn Fn(&InformerStats) -> String) -> Vec<String> + 'a;

/// What an UndeltaStore pushed: how often, how much, and how much of it was new.
fn push_rows(table: &mut Table, row: &RowFn<'_>) {
    table.add_row(row("pushes", &|s| s.pushes.count.to_string()));
    table.add_row(row("  of which unchanged", &|s| {
        s.pushes.unchanged.to_string()
    }));
    table.add_row(row("objects per push (mean / max)", &|s| {
        format!("{:.2} / {}", s.pushes.mean_size(), s.pushes.max_size)
    }));
    table.add_row(row("objects pushed", &|s| s.pushes.objects.to_string()));
    table.add_row(row("objects held now", &|s| s.pushes.last_size.to_string()));
    table.add_row(row("keys added / removed / changed", &|s| {
        format!(
            "{} / {} / {}",
            s.pushes.added, s.pushes.removed, s.pushes.changed
        )
    }));
}

/// What the informer popped and how its queue behaved.
fn queue_rows(table: &mut Table, columns: &[(String, InformerStats)], row: &RowFn<'_>) {
    for type_ in DeltaType::ALL {
        // Only an atomic queue makes whole-list deltas: rows of zeros would be noise elsewhere.
        if type_.is_whole_list() && columns.iter().all(|(_, s)| s.count(type_) == 0) {
            continue;
        }
        table.add_row(row(type_.as_str(), &|s| s.count(type_).to_string()));
        // A tombstone is queued as a `Deleted` delta: counted among them.
        if type_ == DeltaType::Deleted {
            table.add_row(row("  of which tombstones", &|s| s.tombstones.to_string()));
        }
    }
    table.add_row(row("batches", &|s| s.batches.to_string()));
    // Filters narrow what is shown, not what is popped: both counts, when they differ in kind.
    if columns.iter().any(|(_, s)| s.shown.is_some()) {
        table.add_row(row("  of which shown", &|s| {
            s.shown.unwrap_or(s.batches).to_string()
        }));
    }
    table.add_row(row("deltas per batch (mean / max)", &|s| {
        format!("{:.2} / {}", s.mean_batch_len(), s.max_batch_len)
    }));
    table.add_row(row("coalesced deltas", &|s| s.coalesced.to_string()));
    // Only a plain FIFO drops what it queued: a row of zeros would be noise elsewhere.
    if columns.iter().any(|(_, s)| s.dropped > 0) {
        table.add_row(row("dropped before a pop", &|s| s.dropped.to_string()));
    }
    table.add_row(row("max queue depth", &|s| s.max_queue_len.to_string()));
    table.add_row(row("queue wait p50 / p99 / max", &|s| quantiles(&s.waits)));
}

/// Beyond this many handlers the handler table is transposed: one row per handler, so that its
/// width stays that of one row of figures however many handlers ran (a column per handler made
/// 1000 handlers 75 000 characters wide).
const HANDLER_COLUMNS: usize = 4;

/// A figure of the handler table: its label, and its value for one handler.
type HandlerFigure<'a> = (&'static str, Box<dyn Fn(&HandlerStats) -> String + 'a>);

/// What each event handler got (`resource/handler` when several resources ran): one column per
/// handler, or beyond [`HANDLER_COLUMNS`] handlers one row per handler; `None` when no handler
/// was shown.
fn handler_table(informers: &[(&str, &InformerStats)]) -> Option<String> {
    let several = informers.len() > 1;
    let handlers: Vec<(String, &HandlerStats)> = informers
        .iter()
        .flat_map(|(resource, stats)| {
            stats.handlers.iter().map(move |h| {
                let name = if several {
                    format!("{resource}/{}", h.name)
                } else {
                    h.name.to_string()
                };
                (printable(&name).into_owned(), h)
            })
        })
        .collect();
    if handlers.is_empty() {
        return None;
    }
    let mut figures: Vec<HandlerFigure<'_>> = vec![
        ("OnAdd", Box::new(|h| h.adds.to_string())),
        ("OnUpdate", Box::new(|h| h.updates.to_string())),
        ("  of which resyncs", Box::new(|h| h.syncs.to_string())),
        ("OnDelete", Box::new(|h| h.deletes.to_string())),
        (
            "resyncs not delivered",
            Box::new(|h| h.syncs_skipped.to_string()),
        ),
        ("max buffer depth", Box::new(|h| h.max_depth.to_string())),
        ("lag p50 / p99 / max", Box::new(|h| quantiles(&h.lag))),
        (
            "time to HasSynced",
            Box::new(|h| match h.synced {
                Some(after) => human_duration(after),
                None if h.synced_unknown => "n/a before 1.27".to_owned(),
                None => "not synced".to_owned(),
            }),
        ),
    ];
    if handlers.iter().any(|(_, h)| h.abandoned > 0) {
        figures.push((
            "abandoned at the stop",
            Box::new(|h| h.abandoned.to_string()),
        ));
    }
    let mut table = Table::new();
    table
        .load_style(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled);
    let mut header = vec!["handler".to_owned()];
    if handlers.len() > HANDLER_COLUMNS {
        // "of which resyncs" reads as part of OnUpdate only under it, in a column of labels.
        header.extend(figures.iter().map(|(label, _)| match label.trim_start() {
            "of which resyncs" => "OnUpdate resyncs".to_owned(),
            label => label.to_owned(),
        }));
        table.set_header(header);
        for (name, stats) in &handlers {
            let mut cells = vec![name.clone()];
            cells.extend(figures.iter().map(|(_, value)| value(stats)));
            table.add_row(cells);
        }
    } else {
        header.extend(handlers.iter().map(|(name, _)| name.clone()));
        table.set_header(header);
        for (label, value) in &figures {
            let mut cells = vec![(*label).to_owned()];
            cells.extend(handlers.iter().map(|(_, h)| value(h)));
            table.add_row(cells);
        }
    }
    Some(figures_text(&mut table))
}

/// `p50 / p99 / max` of a wait histogram, as people read durations; `-` when empty.
pub(super) fn quantiles(h: &WaitHistogram) -> String {
    match (h.quantile(0.5), h.quantile(0.99)) {
        (Some(p50), Some(p99)) => format!(
            "{} / {} / {}",
            human_duration(p50),
            human_duration(p99),
            human_duration(h.max())
        ),
        _ => "-".to_owned(),
    }
}

/// A table of figures as text: every column after the labels right-aligned, a line break after.
pub(super) fn figures_text(table: &mut Table) -> String {
    for column in table.column_iter_mut().skip(1) {
        column.set_cell_alignment(CellAlignment::Right);
    }
    let mut text = table.to_string();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// The cells of the summary row `label` of `text`.
    fn cells(text: &str, label: &str) -> Vec<String> {
        let line = text
            .lines()
            .find(|l| l.contains(&format!(" {label} ")))
            .unwrap_or_else(|| panic!("no {label} row in\n{text}"));
        line.split('┆')
            .map(|c| {
                c.trim_matches(|c: char| c == '│' || c.is_whitespace())
                    .to_owned()
            })
            .collect()
    }
    use crate::render::stats::Synced;

    fn stats(added: u64, synced_ms: Option<u64>) -> InformerStats {
        let mut s = InformerStats::default();
        s.deltas[DeltaType::Added.index()] = added;
        s.batches = added;
        s.max_batch_len = 1;
        for ms in 1..=added {
            s.waits.record(Duration::from_millis(ms));
        }
        if let Some(ms) = synced_ms {
            s.record_synced(Synced {
                batches: added,
                after: Duration::from_millis(ms),
            });
        }
        s
    }

    #[test]
    fn one_column_per_resource_and_a_total() {
        let pods = stats(4, Some(20));
        let deploys = stats(2, None);
        let text = summary_table(&[("pods", &pods), ("deployments.apps", &deploys)]);
        let header = text.lines().nth(1).unwrap();
        assert!(
            header.contains("pods")
                && header.contains("deployments.apps")
                && header.contains("all"),
            "{text}"
        );
        let added = text.lines().find(|l| l.contains("Added")).unwrap();
        let cells: Vec<&str> = added
            .split('┆')
            .map(|c| c.trim_matches(|c: char| c == '│' || c.is_whitespace()))
            .collect();
        assert_eq!(cells, ["Added", "4", "2", "6"], "{text}");
        let synced = text.lines().find(|l| l.contains("HasSynced")).unwrap();
        assert!(synced.contains("20.0ms (4 batches)"), "{text}");
        assert!(synced.contains("not synced"), "{text}");
        assert!(!text.contains('\x1b'));
    }

    #[test]
    fn whole_list_rows_only_when_a_queue_made_such_deltas() {
        let per_object = stats(3, Some(5));
        let text = summary_table(&[("pods", &per_object)]);
        for type_ in ["ReplacedAll", "SyncAll", "Bookmark"] {
            assert!(!text.contains(type_), "{text}");
        }
        let mut atomic = stats(0, Some(5));
        atomic.deltas[DeltaType::ReplacedAll.index()] = 2;
        atomic.deltas[DeltaType::Bookmark.index()] = 4;
        let text = summary_table(&[("pods", &per_object), ("configmaps", &atomic)]);
        let cells = |label: &str| cells(&text, label);
        assert_eq!(
            cells("ReplacedAll"),
            ["ReplacedAll", "0", "2", "2"],
            "{text}"
        );
        assert_eq!(cells("Bookmark"), ["Bookmark", "0", "4", "4"], "{text}");
        assert!(!text.contains("SyncAll"), "{text}");
    }

    #[test]
    fn a_single_resource_has_no_total() {
        let text = summary_table(&[("pods", &stats(0, Some(5)))]);
        assert!(!text.contains("all"), "{text}");
        let waits = text.lines().find(|l| l.contains("queue wait")).unwrap();
        assert!(waits.contains(" - "), "{text}");
    }

    #[test]
    fn dropped_objects_get_a_row_only_when_some_were_dropped() {
        let none = stats(2, Some(5));
        assert!(!summary_table(&[("pods", &none)]).contains("dropped"));
        let mut some = stats(2, Some(5));
        some.dropped = 3;
        let text = summary_table(&[("pods", &none), ("configmaps", &some)]);
        let row = text
            .lines()
            .find(|l| l.contains("dropped before a pop"))
            .unwrap();
        let cells: Vec<&str> = row
            .split('┆')
            .map(|c| c.trim_matches(|c: char| c == '│' || c.is_whitespace()))
            .collect();
        assert_eq!(cells, ["dropped before a pop", "0", "3", "3"], "{text}");
    }

    #[test]
    fn an_undelta_store_is_summed_up_by_its_pushes() {
        let mut s = InformerStats {
            undelta: true,
            ..InformerStats::default()
        };
        s.pushes = crate::render::stats::PushStats {
            count: 4,
            objects: 10,
            last_size: 2,
            max_size: 4,
            unchanged: 1,
            added: 4,
            removed: 2,
            changed: 3,
        };
        s.record_synced(Synced {
            batches: 1,
            after: Duration::from_millis(3),
        });
        let text = summary_table(&[("pods", &s)]);
        let cells = |label: &str| cells(&text, label);
        assert_eq!(cells("pushes"), ["pushes", "4"]);
        assert_eq!(cells("of which unchanged")[1], "1");
        assert_eq!(cells("objects per push (mean / max)")[1], "2.50 / 4");
        assert_eq!(cells("objects pushed")[1], "10");
        assert_eq!(cells("objects held now")[1], "2");
        assert_eq!(cells("keys added / removed / changed")[1], "4 / 2 / 3");
        assert_eq!(cells("time to HasSynced")[1], "3.0ms (1 push)");
        for queue_row in ["batches", "queue", "coalesced", "Added"] {
            assert!(!text.contains(queue_row), "{queue_row}: {text}");
        }
    }
}
