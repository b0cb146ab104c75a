//! The tables of `kubectl deltas index`, laid out like kubectl's: upper-case headers, columns three
//! spaces apart, no borders.
//!
//! With a known width, `table` keeps one line per row and truncates its last column (the keys of a
//! value, the values of an object) to fit, saying how many items it left out; `wide` leaves
//! nothing out and wraps that column instead. The other columns are never cut.

use comfy_table::{ColumnConstraint, ContentArrangement, Table, presets};
use jiff::Timestamp;

use super::printable;
use crate::query::{Matches, ValueListing};

/// Spaces between columns, as kubectl's printers use.
const GAP: usize = 3;
/// The last column never gets narrower than this, even on a narrow terminal.
const MIN_LAST_COLUMN: usize = 16;

/// How the `<none>` row of a listing is labelled (kubectl's word for an absent value).
pub const NONE_LABEL: &str = "<none>";

/// Lines of the values table: value, count, keys.
pub(super) fn values_table(
    listing: &ValueListing,
    width: Option<usize>,
    wide: bool,
) -> Vec<String> {
    let header = [listing.index.to_uppercase(), "COUNT".into(), "KEYS".into()];
    let rows: Vec<[String; 2]> = listing
        .rows
        .iter()
        .map(|row| {
            let value = row.value.as_deref().unwrap_or(NONE_LABEL).to_owned();
            [value, row.count().to_string()]
        })
        .collect();
    let lasts = listing.rows.iter().map(|row| {
        let keys: Vec<&str> = row.keys.iter().map(|k| &**k).collect();
        keys
    });
    layout(&header, rows, lasts, width, wide)
}

/// Lines of the objects table: namespace (when any object has one), name, resourceVersion, age
/// (plus uid and owners when wide), and every value each object has under the index.
pub(super) fn objects_table(
    matches: &Matches,
    width: Option<usize>,
    wide: bool,
    now: Timestamp,
) -> Vec<String> {
    // The index's own column says what a fixed column would say again: the namespace, by
    // `--by namespace`; the owners, by `--by owner`.
    let namespaced = matches.index != "namespace"
        && matches
            .objects
            .iter()
            .any(|m| m.object.namespace().is_some());
    let owners = wide && matches.index != "owner";
    let mut header: Vec<String> = Vec::new();
    if namespaced {
        header.push("NAMESPACE".into());
    }
    header.extend(["NAME", "RESOURCEVERSION", "AGE"].map(String::from));
    if wide {
        header.push("UID".into());
    }
    if owners {
        header.push("OWNERS".into());
    }
    header.push(matches.index.to_uppercase());
    let rows: Vec<Vec<String>> = matches
        .objects
        .iter()
        .map(|m| {
            let meta = m.object.metadata();
            let mut row = Vec::new();
            if namespaced {
                row.push(meta.namespace.clone().unwrap_or_default());
            }
            row.push(meta.name.clone().unwrap_or_default());
            row.push(meta.resource_version.clone().unwrap_or_default());
            row.push(match &meta.creation_timestamp {
                Some(created) => age(created.0, now),
                None => "<unknown>".into(),
            });
            if wide {
                row.push(meta.uid.clone().unwrap_or_default());
            }
            if owners {
                let owners: Vec<String> = meta
                    .owner_references
                    .iter()
                    .flatten()
                    .map(|o| format!("{}/{}", o.kind, o.name))
                    .collect();
                row.push(or_none(owners.join(",")));
            }
            row
        })
        .collect();
    let lasts = matches.objects.iter().map(|m| {
        let values: Vec<&str> = m.values.iter().map(String::as_str).collect();
        values
    });
    layout(&header, rows, lasts, width, wide)
}

fn or_none(text: String) -> String {
    if text.is_empty() {
        NONE_LABEL.to_owned()
    } else {
        text
    }
}

/// Builds the table; the last column is a list, fitted to `width` unless `wide`.
fn layout<'a, R: AsRef<[String]>>(
    header: &[String],
    rows: Vec<R>,
    lasts: impl Iterator<Item = Vec<&'a str>>,
    width: Option<usize>,
    wide: bool,
) -> Vec<String> {
    // No header over nothing: an empty answer is said on stderr by the caller.
    if rows.is_empty() {
        return Vec::new();
    }
    // Escaped before measuring, so that widths are those of what is printed.
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            row.as_ref()
                .iter()
                .map(|c| printable(c).into_owned())
                .collect()
        })
        .collect();
    let lasts = lasts.map(|last| {
        last.into_iter()
            .map(|item| printable(item).into_owned())
            .collect::<Vec<String>>()
    });
    let fixed = header.len() - 1;
    // Widths of the columns before the list, to know how much room the list has.
    let mut widths: Vec<usize> = header[..fixed].iter().map(|h| text_width(h)).collect();
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(text_width(cell));
        }
    }
    let used: usize = widths.iter().map(|w| w + GAP).sum();
    let room = width.map(|w| w.saturating_sub(used).max(MIN_LAST_COLUMN));

    let mut table = Table::new();
    table
        .load_style(presets::NOTHING)
        .force_no_tty()
        .set_header(header.to_vec());
    match (wide, room) {
        (true, Some(room)) => {
            // Wider than asked when the other columns leave the list less than its minimum.
            table
                .set_content_arrangement(ContentArrangement::Dynamic)
                .set_width(u16::try_from(used + room).unwrap_or(u16::MAX));
        }
        _ => {
            table.set_content_arrangement(ContentArrangement::Disabled);
        }
    }
    for (mut cells, last) in rows.into_iter().zip(lasts) {
        let last: Vec<&str> = last.iter().map(String::as_str).collect();
        cells.push(match room {
            Some(room) if !wide => fit_list(&last, room),
            _ => last.join(", "),
        });
        table.add_row(cells);
    }
    for (i, column) in table.column_iter_mut().enumerate() {
        if i < fixed {
            // Only the list wraps: names, uids and counts stay whole.
            column
                .set_padding((0, GAP as u16))
                .set_constraint(ColumnConstraint::ContentWidth);
        } else {
            column.set_padding((0, 0));
        }
    }
    table
        .lines()
        .map(|line| line.trim_end().to_owned())
        .collect()
}

fn text_width(text: &str) -> usize {
    text.chars().count()
}

/// `a, b, c, … (+7 more)` in at most `room` characters, or `… (9 items)` when not even the first
/// item fits with its count. A count stands for two items or more: where it would stand for one,
/// that item is shown instead, past `room` if need be, since `(+1 more)` hides a key in about the
/// room the key takes (kubectl's `formatEndpoints`, pkg/printers/internalversion/printers.go,
/// likewise shows a short list whole whatever the terminal's width).
fn fit_list(items: &[&str], room: usize) -> String {
    let full = items.join(", ");
    let more = |hidden: usize| format!(", … (+{hidden} more)");
    // The most items that fit with the count of the others (none needed after the last).
    let mut shown = 0;
    let mut width = 0;
    for (i, item) in items.iter().enumerate() {
        width += text_width(item) + if i == 0 { 0 } else { 2 };
        if width > room {
            break;
        }
        let hidden = items.len() - i - 1;
        if hidden == 0 || width + text_width(&more(hidden)) <= room {
            shown = i + 1;
        }
    }
    match items.len() - shown {
        0 | 1 => full,
        _ if shown == 0 => format!("… ({})", super::count(items.len() as u64, "item")),
        hidden => format!("{}{}", items[..shown].join(", "), more(hidden)),
    }
}

/// How long ago `created` was, as kubectl's AGE column says it (apimachinery's
/// `duration.HumanDuration`): `45s`, `5m30s`, `3h`, `2d4h`, `400d`, `3y20d`.
pub fn age(created: Timestamp, now: Timestamp) -> String {
    let seconds = now.as_second() - created.as_second();
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        return match seconds % 60 {
            0 => format!("{minutes}m"),
            s => format!("{minutes}m{s}s"),
        };
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        return match minutes % 60 {
            0 => format!("{hours}h"),
            m => format!("{hours}h{m}m"),
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    let days = hours / 24;
    if hours < 24 * 8 {
        return match hours % 24 {
            0 => format!("{days}d"),
            h => format!("{days}d{h}h"),
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{days}d");
    }
    let years = days / 365;
    if hours < 24 * 365 * 8 {
        return match days % 365 {
            0 => format!("{years}y"),
            d => format!("{years}y{d}d"),
        };
    }
    format!("{years}y")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::ValueRow;
    use std::sync::Arc;

    fn listing(rows: &[(Option<&str>, &[&str])]) -> ValueListing {
        ValueListing {
            index: "label:app".into(),
            total: 0,
            rows: rows
                .iter()
                .map(|(value, keys)| ValueRow {
                    value: value.map(str::to_owned),
                    keys: keys.iter().map(|k| Arc::from(*k)).collect(),
                })
                .collect(),
        }
    }

    #[test]
    fn a_values_table_reads_like_kubectl_and_marks_objects_without_a_value() {
        let listing = listing(&[
            (Some("web"), &["a/w1", "a/w2"]),
            (Some("db"), &["b/d1"]),
            (None, &["c/x"]),
        ]);
        let lines = values_table(&listing, None, false);
        assert_eq!(
            lines,
            [
                "LABEL:APP   COUNT   KEYS",
                "web         2       a/w1, a/w2",
                "db          1       b/d1",
                "<none>      1       c/x",
            ]
        );
    }

    #[test]
    fn control_characters_in_values_are_escaped_not_printed() {
        let listing = listing(&[
            (Some("\u{1b}[31mred\nline"), &["a/x"]),
            (Some("ok"), &["a/y"]),
        ]);
        let lines = values_table(&listing, None, false);
        assert_eq!(
            lines,
            [
                r"LABEL:APP             COUNT   KEYS",
                r"\u{1b}[31mred\nline   1       a/x",
                r"ok                    1       a/y",
            ]
        );
    }

    #[test]
    fn keys_are_truncated_to_the_width_unless_wide() {
        let keys: Vec<String> = (0..50).map(|i| format!("ns/pod-{i:02}")).collect();
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        let listing = listing(&[(Some("web"), &keys)]);
        let lines = values_table(&listing, Some(60), false);
        assert_eq!(lines.len(), 2);
        assert!(lines.iter().all(|l| l.chars().count() <= 60), "{lines:#?}");
        assert!(
            lines[1].starts_with("web         50      ns/pod-00, ns/pod-01, "),
            "{}",
            lines[1]
        );
        let shown = lines[1].matches("ns/pod-").count();
        assert!(
            lines[1].ends_with(&format!(", … (+{} more)", 50 - shown)),
            "{}",
            lines[1]
        );

        let wide = values_table(&listing, Some(60), true);
        assert!(wide.len() > 2, "wide wraps instead of truncating");
        assert!(wide.iter().all(|l| l.chars().count() <= 60), "{wide:#?}");
        let all = wide.join(" ");
        assert!(keys.iter().all(|k| all.contains(k)));
    }

    #[test]
    fn fitting_a_list_says_how_much_was_left_out() {
        assert_eq!(fit_list(&["a", "b"], 10), "a, b");
        let five = ["aaaa", "bbbb", "cccc", "dddd", "eeee"];
        assert_eq!(fit_list(&five, 20), "aaaa, … (+4 more)");
        assert_eq!(fit_list(&five, 28), "aaaa, bbbb, cccc, dddd, eeee");
        assert_eq!(fit_list(&["aaaa", "bbbb", "cccc"], 5), "… (3 items)");
        assert_eq!(fit_list(&five, 24), "aaaa, bbbb, … (+3 more)");
        // Never a count of one: the one key it would hide is shown.
        assert_eq!(fit_list(&["a-very-long-key"], 5), "a-very-long-key");
        assert_eq!(
            fit_list(&["aa", "bbbbbbbbbbbbbbbbbbbb"], 20),
            "aa, bbbbbbbbbbbbbbbbbbbb"
        );
        let last_long = ["a", "b", "a-very-very-long-key-here"];
        assert_eq!(fit_list(&last_long, 20), "a, b, a-very-very-long-key-here");
        assert_eq!(fit_list(&["first-long-key", "second"], 16), "… (2 items)");
    }

    #[test]
    fn ages_follow_kubectl() {
        let now: Timestamp = "2026-01-10T00:00:00Z".parse().unwrap();
        let ago = |secs: i64| age(now - jiff::SignedDuration::from_secs(secs), now);
        assert_eq!(ago(-5), "<invalid>");
        assert_eq!(ago(-1), "0s");
        assert_eq!(ago(119), "119s");
        assert_eq!(ago(5 * 60 + 30), "5m30s");
        assert_eq!(ago(6 * 60), "6m");
        assert_eq!(ago(170 * 60), "170m");
        assert_eq!(ago(4 * 3600 + 5 * 60), "4h5m");
        assert_eq!(ago(30 * 3600), "30h");
        assert_eq!(ago(3 * 86400 + 4 * 3600), "3d4h");
        assert_eq!(ago(400 * 86400), "400d");
        assert_eq!(ago((3 * 365 + 20) * 86400), "3y20d");
        assert_eq!(ago(10 * 365 * 86400), "10y");
    }
}
