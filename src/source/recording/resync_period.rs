//! [`recorded_resync_period`]: the resync period of the informer that made a recording, read from
//! the spacing of its `RESYNC` lines.
//!
//! A recording holds the resyncs its queue did, not the period that timed them. A replay needs
//! that period all the same: in client-go a handler added without a period of its own
//! (`AddEventHandler`) takes the informer's (`defaultEventHandlerResyncPeriod`), and an informer
//! whose period is 0 resyncs no handler at all (`determineResyncPeriod`, shared_informer.go
//! v0.28.7). Without it, every sync notification of a recorded resync would be "not due".
//!
//! The timer (reflector.go v0.28.7, `startResync`) starts when a list completes and fires every
//! period while the Reflector watches, restarting after each resync; a tick that finds no handler
//! due writes no line. So the gap from a list's completion to the first `RESYNC` line after it,
//! and between two `RESYNC` lines of one watch phase, is a multiple of the period plus the time
//! the resync took: the smallest gap, rounded down, is a period at which every recorded resync
//! finds a handler of that period due.

use std::time::Duration;

use super::error::RecordingError;
use super::format::Line;
use super::reader::RecordingReader;
use crate::source::WatchEvent;

/// How many gaps are enough: the first ones already show the period, and each more costs reading
/// further into the recording.
const GAPS: usize = 4;

/// The period of the `RESYNC` lines in what `reader` holds, reading at most `max_lines` lines:
/// the smallest gap between a list's completion (its last page, or a streaming list's
/// initial-events-end bookmark) or a `RESYNC` line and the next `RESYNC` line of the same watch
/// phase, rounded down to a whole second (to a whole millisecond below one second). `None` when
/// the lines read hold no such gap (no `RESYNC` line, or none after a list).
pub fn recorded_resync_period(
    reader: &mut RecordingReader,
    max_lines: usize,
) -> Result<Option<Duration>, RecordingError> {
    // When the resync timer last (re)started: the list's completion, then each resync.
    let mut last_tick: Option<Duration> = None;
    let mut smallest: Option<Duration> = None;
    let mut gaps = 0;
    for _ in 0..max_lines {
        let Some(record) = reader.next_record()? else {
            break;
        };
        match &record.line {
            Line::List(page) => {
                // The timer starts once the list is complete, and a relist stops the one before.
                last_tick = page.continue_token.is_none().then_some(record.t);
            }
            Line::Event(WatchEvent::Bookmark {
                initial_events_end: true,
                ..
            }) => last_tick = Some(record.t),
            Line::RequestFailed {
                request: super::format::RequestKind::List,
                ..
            } => last_tick = None,
            Line::Resync => {
                if let Some(from) = last_tick {
                    let gap = record.t.saturating_sub(from);
                    if !gap.is_zero() {
                        smallest = Some(smallest.map_or(gap, |s| s.min(gap)));
                        gaps += 1;
                    }
                }
                last_tick = Some(record.t);
                if gaps >= GAPS {
                    break;
                }
            }
            _ => {}
        }
    }
    Ok(smallest.map(round_down))
}

/// A whole number of seconds, or of milliseconds below one second: the period as it was given
/// (`--resync 30s`), the resync's own duration dropped.
fn round_down(gap: Duration) -> Duration {
    if gap >= Duration::from_secs(1) {
        Duration::from_secs(gap.as_secs())
    } else {
        Duration::from_millis(u64::try_from(gap.as_millis()).unwrap_or(u64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = r#"{"kind":"header","v":1,"resource":{"group":"","version":"v1","kind":"ConfigMap","plural":"configmaps","namespaced":true},"startedAt":"2026-11-22T10:00:00Z"}"#;

    fn period(lines: &[&str]) -> Option<Duration> {
        let text = std::iter::once(HEADER)
            .chain(lines.iter().copied())
            .collect::<Vec<_>>()
            .join("\n");
        let mut reader = RecordingReader::new("test", std::io::Cursor::new(text)).unwrap();
        recorded_resync_period(&mut reader, 1000).unwrap()
    }

    const LIST: &str = r#"{"t":4,"type":"LIST","resourceVersion":"2","items":[]}"#;

    #[test]
    fn the_smallest_gap_from_the_list_or_a_resync_rounded_down_to_a_second() {
        // docs/recordings/resync.jsonl: made with `--resync 1s`.
        let lines = [
            LIST,
            r#"{"t":1005,"type":"RESYNC"}"#,
            r#"{"t":2008,"type":"RESYNC"}"#,
            r#"{"t":3010,"type":"RESYNC"}"#,
        ];
        assert_eq!(period(&lines), Some(Duration::from_secs(1)));
    }

    #[test]
    fn a_tick_that_found_no_handler_due_leaves_a_longer_gap_which_does_not_count() {
        let lines = [
            LIST,
            r#"{"t":20004,"type":"RESYNC"}"#,
            r#"{"t":30010,"type":"RESYNC"}"#,
        ];
        assert_eq!(period(&lines), Some(Duration::from_secs(10)));
    }

    #[test]
    fn one_resync_after_a_list_is_timed_from_the_list() {
        let lines = [LIST, r#"{"t":30004,"type":"RESYNC"}"#];
        assert_eq!(period(&lines), Some(Duration::from_secs(30)));
    }

    #[test]
    fn a_relist_restarts_the_timer_once_its_last_page_came() {
        let lines = [
            LIST,
            r#"{"t":1004,"type":"RESYNC"}"#,
            r#"{"t":1100,"type":"LIST","resourceVersion":"3","continue":"c1","items":[]}"#,
            r#"{"t":1400,"type":"LIST","resourceVersion":"3","items":[]}"#,
            r#"{"t":1900,"type":"RESYNC"}"#,
        ];
        assert_eq!(period(&lines), Some(Duration::from_millis(500)));
    }

    #[test]
    fn below_a_second_whole_milliseconds() {
        let lines = [
            LIST,
            r#"{"t":504.7,"type":"RESYNC"}"#,
            r#"{"t":1005.2,"type":"RESYNC"}"#,
        ];
        assert_eq!(period(&lines), Some(Duration::from_millis(500)));
    }

    #[test]
    fn without_a_resync_line_after_a_list_none() {
        assert_eq!(period(&[LIST, r#"{"t":5,"type":"WATCH_CLOSED"}"#]), None);
        // Not timed from the start of the recording: the timer starts with a list.
        let later_list = r#"{"t":2000,"type":"LIST","resourceVersion":"2","items":[]}"#;
        assert_eq!(period(&[r#"{"t":1000,"type":"RESYNC"}"#, later_list]), None);
    }
}
