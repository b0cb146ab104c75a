//! The flags that narrow what `watch` and `replay` show (matched in `cmd/plan/narrow.rs`).
//! They narrow the output only: the informer still processes everything.

use std::str::FromStr;
use std::time::{Duration, SystemTime};

use clap::Args;

use kubectl_deltas::cache::DeltaType;
use kubectl_deltas::cache::KeyGlob;

/// `--match`, `--types`, `--tombstones`: for `watch` and `replay`.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Narrowing (what is shown; the informer still processes everything)")]
pub struct NarrowArgs {
    /// Only pops of objects whose namespace/name matches GLOB (repeatable).
    ///
    /// The key is `namespace/name`, or `name` for a cluster-scoped object; in GLOB `*` is any run
    /// of characters (`/` included), `?` one, `[ab]`, `[a-z]` one of a set and `[!a-z]` one
    /// outside it, e.g. `'demo/web-*'`; any of several may match.
    #[arg(long = "match", value_name = "GLOB", value_parser = KeyGlob::parse)]
    pub globs: Vec<KeyGlob>,
    /// Only pops carrying one of these delta types (`Added,Deleted`).
    ///
    /// Comma-separated, any of Added, Updated, Deleted, Replaced, Sync, ReplacedAll, SyncAll,
    /// Bookmark. A handler's row is shown when such a delta can make it: OnDelete for Deleted,
    /// OnAdd or OnUpdate for the others.
    #[arg(
        long,
        value_name = "TYPE[,TYPE…]",
        value_delimiter = ',',
        value_parser = parse_delta_type
    )]
    pub types: Vec<DeltaType>,
    /// Only pops carrying a DeletedFinalStateUnknown tombstone.
    ///
    /// A tombstone is a deletion a relist found: the watch missed the DELETED event.
    #[arg(long)]
    pub tombstones: bool,
}

/// `replay`'s own: selectors applied to the recorded objects, and a window of the recording.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Narrowing (what is shown; the informer still processes everything)")]
pub struct ReplayNarrowArgs {
    /// Only pops of objects matching this label selector, read as the API server reads `-l`
    /// (`app=web,tier!=db`, `env in (prod,staging)`, `!canary`) but applied here, to the
    /// recording.
    #[arg(
        short = 'l',
        long,
        value_name = "SELECTOR",
        value_parser = super::parse_label_selector
    )]
    pub selector: Option<String>,
    /// Only pops of objects matching this field selector (`status.phase=Running`,
    /// `spec.nodeName!=node-a`; =, == and !=), applied here to any dotted path; a missing field
    /// reads as empty.
    #[arg(long, value_name = "SELECTOR", value_parser = super::parse_field_selector)]
    pub field_selector: Option<String>,
    /// Show from this point of the recording: a time (RFC 3339, `2024-05-01T17:31:40Z`), an
    /// offset from its start (`+30s`) or a pop's number (`#12`).
    #[arg(long, value_name = "WHEN")]
    pub from: Option<Bound>,
    /// Show up to this point (included), written as for `--from`; a `--from` after it is refused.
    #[arg(long, value_name = "WHEN")]
    pub to: Option<Bound>,
}

/// Where `--from` or `--to` puts the edge of the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// A time of the recording (RFC 3339, as the timeline's header and jsonl `time` print it).
    At(SystemTime),
    /// An offset from the recording's start (`+30s`), until `Narrow::starting_at` (`cmd/plan/narrow.rs`) resolves it.
    After(Duration),
    /// A pop's sequence number (`#12`): the `#` column of the timeline, `seq` in jsonl.
    Seq(u64),
}

impl FromStr for Bound {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        if let Some(seq) = text.strip_prefix('#') {
            return seq
                .parse::<u64>()
                .map(Bound::Seq)
                .map_err(|_| format!("{text:?}: after '#' comes a pop's number, such as #12"));
        }
        if let Some(offset) = text.strip_prefix('+') {
            // The parser of every duration flag, so that `+1y` is refused as `--resync 1y` is.
            return super::duration::parse_duration(offset)
                .map(Bound::After)
                .map_err(|e| format!("{text:?} is not an offset from the recording's start: {e}"));
        }
        text.parse::<jiff::Timestamp>()
            .map(|t| Bound::At(SystemTime::from(t)))
            .map_err(|_| {
                format!(
                    "{text:?} is not a time of the recording: give an RFC 3339 time \
                     (2024-05-01T17:31:40Z), an offset from its start (+30s) or a pop's number (#12)"
                )
            })
    }
}

impl std::fmt::Display for Bound {
    /// As the flag is written: `2024-05-01T17:31:40Z`, `+30s`, `#12`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Bound::At(time) => match jiff::Timestamp::try_from(*time) {
                Ok(time) => write!(f, "{time}"),
                Err(_) => write!(f, "{time:?}"),
            },
            Bound::After(offset) => write!(f, "+{}", humantime::format_duration(*offset)),
            Bound::Seq(seq) => write!(f, "#{seq}"),
        }
    }
}

/// A `--types` value: a delta type as the timeline prints it.
pub fn parse_delta_type(text: &str) -> Result<DeltaType, String> {
    DeltaType::ALL
        .into_iter()
        .find(|t| t.as_str().eq_ignore_ascii_case(text.trim()))
        .ok_or_else(|| {
            let names: Vec<&str> = DeltaType::ALL.iter().map(|t| t.as_str()).collect();
            format!("{text:?} is not a delta type: one of {}", names.join(", "))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_times_offsets_or_pop_numbers() {
        assert_eq!("#12".parse::<Bound>(), Ok(Bound::Seq(12)));
        assert_eq!(
            "+30s".parse::<Bound>(),
            Ok(Bound::After(Duration::from_secs(30)))
        );
        let at = "2024-05-01T17:31:40Z".parse::<Bound>().unwrap();
        assert_eq!(
            at,
            Bound::At(SystemTime::UNIX_EPOCH + Duration::from_secs(1_714_584_700))
        );
        assert!("#x".parse::<Bound>().unwrap_err().contains("pop's number"));
        // As every duration flag: Go's units, no calendar ones.
        let year = "+1y".parse::<Bound>().unwrap_err();
        assert!(year.contains("days, weeks, months or years"), "{year}");
        assert_eq!(
            "+1h30m".parse::<Bound>(),
            Ok(Bound::After(Duration::from_secs(5400)))
        );
        assert!(
            "yesterday"
                .parse::<Bound>()
                .unwrap_err()
                .contains("RFC 3339")
        );
    }

    #[test]
    fn delta_types_are_named_as_the_timeline_prints_them() {
        assert_eq!(parse_delta_type("Added"), Ok(DeltaType::Added));
        assert_eq!(parse_delta_type("deleted"), Ok(DeltaType::Deleted));
        let err = parse_delta_type("Removed").unwrap_err();
        assert!(err.contains("one of Added, Updated, Deleted"), "{err}");
    }
}
