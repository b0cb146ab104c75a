//! The live status on a terminal: a progress bar while the initial list is paged in, then a
//! one-line footer (queue depth, batches, deltas per type, coalesced deltas, resourceVersion,
//! watch age, synced state). The text comes from [`InformerStats`] through pure functions; only
//! [`StatusBar`] draws, with indicatif on stderr, and only when told it may (a terminal, no `-q`).

use std::fmt::Write as _;
use std::time::{Duration, SystemTime};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::duration::human_duration;
use super::printable;
use super::stats::InformerStats;
use crate::cache::DeltaType;

/// How far the initial lists have come: objects received, and the estimated total when every
/// list still running has given an estimate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitialListProgress {
    /// The resources still in their first list.
    pub listing: Vec<String>,
    /// Objects received by those lists.
    pub items: u64,
    /// Received plus the servers' estimates of what remains.
    pub estimated_total: Option<u64>,
}

/// The progress of the first lists, or `None` once every informer has completed one.
pub fn initial_list_progress(informers: &[(&str, &InformerStats)]) -> Option<InitialListProgress> {
    let first: Vec<&(&str, &InformerStats)> =
        informers.iter().filter(|(_, s)| s.lists == 0).collect();
    if first.is_empty() {
        return None;
    }
    let mut progress = InitialListProgress {
        listing: first.iter().map(|(name, _)| (*name).to_owned()).collect(),
        items: 0,
        estimated_total: Some(0),
    };
    for (_, s) in &first {
        let list = s.listing.unwrap_or_default();
        progress.items += list.items as u64;
        progress.estimated_total = match (progress.estimated_total, list.remaining) {
            (Some(total), Some(remaining)) => Some(total + list.items as u64 + remaining),
            _ => None,
        };
    }
    Some(progress)
}

/// The footer: `queue 3 (peak 12) · 120 batches · Added 10 Updated 90 · coalesced 14 · rv 5021 ·
/// watch 2m03s · synced` (for an UndeltaStore `12 pushes · 41 objects held (max 41) · unchanged
/// 2 · rv …`), control characters escaped ([`printable`]: the resourceVersion is the
/// server's).
pub fn status_line(informers: &[(&str, &InformerStats)], now: SystemTime) -> String {
    let all = InformerStats::merged(informers.iter().map(|(_, s)| *s));
    let mut line = if all.undelta {
        // No queue: an UndeltaStore's pushes and what they carry.
        format!(
            "{} · {} held (max {}) · unchanged {}",
            super::count(all.pushes.count, "push"),
            super::count(all.pushes.last_size as u64, "object"),
            all.pushes.max_size,
            all.pushes.unchanged
        )
    } else {
        queue_status(&all)
    };
    if let Some(rv) = &all.resource_version {
        let _ = write!(line, " · rv {rv}");
    }
    match all.watch_since {
        Some(since) => {
            let age = now.duration_since(since).unwrap_or(Duration::ZERO);
            let _ = write!(line, " · watch {}", whole_seconds(age));
        }
        None => line.push_str(" · no watch"),
    }
    let buffers: Vec<String> = informers
        .iter()
        .flat_map(|(_, s)| &s.handlers)
        .map(|h| format!("{} {}", h.name, h.depth))
        .collect();
    if !buffers.is_empty() {
        let _ = write!(line, " · buffers {}", buffers.join(" "));
    }
    let synced = informers.iter().filter(|(_, s)| s.synced.is_some()).count();
    if synced == informers.len() {
        line.push_str(" · synced");
    } else if informers.len() == 1 {
        line.push_str(" · syncing");
    } else {
        let _ = write!(line, " · synced {synced}/{}", informers.len());
    }
    printable(&line).into_owned()
}

/// The footer's queue part: `queue 3 (peak 12) · 120 batches · Added 10 Updated 90 · coalesced
/// 14`.
fn queue_status(all: &InformerStats) -> String {
    let mut line = format!(
        "queue {} (peak {}) · {}",
        all.queue_len,
        all.max_queue_len,
        super::count(all.batches, "batch")
    );
    let counts: Vec<String> = DeltaType::ALL
        .into_iter()
        .filter(|t| all.count(*t) > 0)
        .map(|t| format!("{t} {}", all.count(t)))
        .collect();
    if !counts.is_empty() {
        let _ = write!(line, " · {}", counts.join(" "));
    }
    let _ = write!(line, " · coalesced {}", all.coalesced);
    if all.dropped > 0 {
        let _ = write!(line, " · dropped {}", all.dropped);
    }
    line
}

fn whole_seconds(d: Duration) -> String {
    human_duration(Duration::from_secs(d.as_secs())).replace(".00s", "s")
}

/// The progress bar, then the footer, drawn on stderr; does nothing when hidden.
#[derive(Debug)]
pub struct StatusBar {
    bar: ProgressBar,
    /// Output lines go to the same terminal, so the bar must be lifted while they are written.
    shares_terminal: bool,
    styles: Styles,
}

/// The bar's looks, parsed once.
struct Styles {
    /// A list whose total the server estimated.
    list_with_total: ProgressStyle,
    /// A list without an estimate.
    list: ProgressStyle,
    /// The footer, cut at the terminal's width: a wrapped footer would leave copies behind.
    footer: ProgressStyle,
    /// Before the first list starts: nothing counted yet, so no count shown.
    waiting: ProgressStyle,
}

impl std::fmt::Debug for Styles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Styles")
    }
}

impl Styles {
    fn new() -> Self {
        let template = |t: &str| {
            ProgressStyle::with_template(t)
                .unwrap_or_else(|_| ProgressStyle::default_spinner())
                .progress_chars("=> ")
        };
        Styles {
            // `{prefix}` is `object` or `objects`, set with the position.
            list_with_total: template("{spinner} {msg} [{bar:30}] {pos}/{len} {prefix}"),
            list: template("{spinner} {msg}: {pos} {prefix}"),
            footer: template("{wide_msg}"),
            waiting: template("{spinner} {msg}"),
        }
    }
}

impl StatusBar {
    /// A bar on stderr when `visible`; `shares_terminal` when stdout is that terminal too.
    pub fn new(visible: bool, shares_terminal: bool) -> Self {
        let styles = Styles::new();
        let bar = if visible {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(8));
            // Until the first update, not indicatif's default bar. Worded for a cluster and a
            // recording alike: both are waited on for their first list.
            bar.set_style(styles.waiting.clone());
            bar.set_message("waiting for the first list");
            bar
        } else {
            ProgressBar::hidden()
        };
        StatusBar {
            bar,
            shares_terminal: visible && shares_terminal,
            styles,
        }
    }

    /// A bar that never draws.
    pub fn hidden() -> Self {
        StatusBar::new(false, false)
    }

    /// Redraws from the informers' counters.
    pub fn update(&self, informers: &[(&str, &InformerStats)], now: SystemTime) {
        if self.bar.is_hidden() {
            return;
        }
        match initial_list_progress(informers) {
            Some(progress) => {
                // The style, which does not draw, then the message: every other setter draws
                // (at most 8 times a second), and a frame must not show one layout's text in
                // another's (the footer in the list's "{msg}: {pos}").
                let style = if progress.estimated_total.is_some() {
                    &self.styles.list_with_total
                } else {
                    &self.styles.list
                };
                self.bar.set_style(style.clone());
                self.bar.set_message(
                    printable(&format!("listing {}", progress.listing.join(", "))).into_owned(),
                );
                let total = progress.estimated_total.unwrap_or(progress.items);
                self.bar
                    .set_prefix(super::plural(total, "object").into_owned());
                match progress.estimated_total {
                    Some(total) => self.bar.set_length(total.max(progress.items)),
                    None => self.bar.unset_length(),
                }
                self.bar.set_position(progress.items);
            }
            None => {
                self.bar.set_style(self.styles.footer.clone());
                self.bar.set_message(status_line(informers, now));
            }
        }
        self.bar.tick();
    }

    /// Runs `write` (which writes output lines) with the bar lifted if it shares the terminal.
    pub fn suspend<R>(&self, write: impl FnOnce() -> R) -> R {
        if self.shares_terminal {
            self.bar.suspend(write)
        } else {
            write()
        }
    }

    /// Removes the bar for good.
    pub fn clear(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::ReflectorEventKind;
    use crate::render::stats::{ListProgress, Synced};

    #[test]
    fn progress_sums_the_first_lists_until_each_is_done() {
        let mut pods = InformerStats::default();
        let mut deploys = InformerStats::default();
        pods.listing = Some(ListProgress {
            pages: 2,
            items: 1000,
            remaining: Some(500),
        });
        deploys.listing = Some(ListProgress {
            pages: 1,
            items: 40,
            remaining: Some(0),
        });
        let both = [("pods", &pods), ("deployments.apps", &deploys)];
        assert_eq!(
            initial_list_progress(&both),
            Some(InitialListProgress {
                listing: vec!["pods".into(), "deployments.apps".into()],
                items: 1040,
                estimated_total: Some(1540),
            })
        );
        deploys.lists = 1;
        deploys.listing = None;
        pods.listing.as_mut().unwrap().remaining = None;
        let both = [("pods", &pods), ("deployments.apps", &deploys)];
        let progress = initial_list_progress(&both).unwrap();
        assert_eq!(progress.listing, ["pods"]);
        assert_eq!(progress.estimated_total, None);
        pods.lists = 1;
        assert_eq!(initial_list_progress(&[("pods", &pods)]), None);
    }

    #[test]
    fn the_footer_shows_queue_batches_types_rv_watch_age_and_sync() {
        let start = SystemTime::UNIX_EPOCH;
        let mut s = InformerStats {
            queue_len: 3,
            max_queue_len: 12,
            batches: 120,
            deltas: [10, 90, 0, 0, 0, 0, 0, 0],
            coalesced: 14,
            ..InformerStats::default()
        };
        s.record_event(
            &ReflectorEventKind::WatchStarted {
                resource_version: "5021".into(),
                timeout_seconds: 300,
                send_initial_events: false,
            },
            start,
        );
        s.resource_version = Some("5021".into());
        let now = start + Duration::from_millis(123_400);
        assert_eq!(
            status_line(&[("pods", &s)], now),
            "queue 3 (peak 12) · 120 batches · Added 10 Updated 90 · coalesced 14 · rv 5021 · watch 2m03s · syncing"
        );
        s.record_synced(Synced {
            batches: 3,
            after: Duration::ZERO,
        });
        let other = InformerStats::default();
        let line = status_line(&[("pods", &s), ("rs", &other)], now);
        assert!(line.ends_with("· synced 1/2"), "{line}");
        assert!(status_line(&[("pods", &s)], now).ends_with("· synced"));
        // The resourceVersion is the server's: it cannot drive the terminal.
        s.resource_version = Some("1\u{1b}[2J".into());
        assert!(status_line(&[("pods", &s)], now).contains(r"rv 1\u{1b}[2J"));
    }

    #[test]
    fn the_footer_counts_dropped_objects_once_there_are_some() {
        let now = SystemTime::UNIX_EPOCH;
        let mut s = InformerStats::default();
        assert!(!status_line(&[("pods", &s)], now).contains("dropped"));
        s.dropped = 2;
        let line = status_line(&[("pods", &s)], now);
        assert!(line.contains("· coalesced 0 · dropped 2 ·"), "{line}");
    }

    #[test]
    fn the_footer_of_an_undelta_store_counts_pushes() {
        let mut s = InformerStats {
            undelta: true,
            ..InformerStats::default()
        };
        s.pushes.count = 12;
        s.pushes.last_size = 41;
        s.pushes.max_size = 43;
        s.pushes.unchanged = 2;
        let line = status_line(&[("pods", &s)], SystemTime::UNIX_EPOCH);
        assert!(
            line.starts_with("12 pushes · 41 objects held (max 43) · unchanged 2 · no watch"),
            "{line}"
        );
        assert!(!line.contains("queue"), "{line}");
    }
}
