//! What a controller's workers did with the keys its handler queued (`--controller`): one
//! reconcile, as every renderer is told about it ([`ReconcileView`]), its timeline facts, its
//! `reconcile` JSON line (docs/jsonl.md), and the counters of the summary's controller table
//! ([`ControllerStats`], named after client-go's `workqueue_*` metrics, `util/workqueue/metrics.go`).

use std::time::{Duration, SystemTime};

use comfy_table::{ContentArrangement, Table, presets};
use serde::Serialize;

use super::duration::human_duration;
use super::stats::WaitHistogram;
use super::summary::{figures_text, quantiles};
use super::{millis, printable, rfc3339_micros};
use crate::cache::workqueue::{QueueMetrics, ReconcileResult};

/// One finished reconcile of a controller.
#[derive(Debug, Clone, Copy)]
pub struct ReconcileView<'a> {
    /// The resource, as in [`BatchView::resource`](super::BatchView::resource).
    pub resource: &'a str,
    /// The controller's name.
    pub controller: &'a str,
    /// The worker that ran it, from 0.
    pub worker: usize,
    /// The key it reconciled (`namespace/name`).
    pub key: &'a str,
    /// `NumRequeues` + 1 when it started.
    pub attempt: u32,
    /// The first add of the wait it served.
    pub queued_at: SystemTime,
    /// When the worker took the key (`Get`).
    pub started_at: SystemTime,
    /// When it ended (`Done`).
    pub time: SystemTime,
    /// The adds it absorbed: the one that queued the key and those folded into it while it waited.
    pub adds: u64,
    /// The key was added while it was being reconciled before, and queued again by `Done`.
    pub requeued: bool,
    /// What the reconcile read from the Indexer when it started: the resourceVersion (empty for
    /// an object without one), `None` when the object was gone.
    pub resource_version: Option<&'a str>,
    /// What it returned.
    pub result: ReconcileResult,
    /// The rate limiter's delay before the retry of an error (`AddRateLimited`).
    pub retry_in: Option<Duration>,
    /// The priority the key was handed out with, from a priority queue (`queue=priority`):
    /// `-100` (`LowPriority`) for initial-list adds and unchanged updates, `0` otherwise.
    pub priority: Option<i32>,
}

impl ReconcileView<'_> {
    /// How long the key waited for a worker.
    pub fn waited(&self) -> Duration {
        self.started_at
            .duration_since(self.queued_at)
            .unwrap_or_default()
    }

    /// How long the reconcile ran.
    pub fn took(&self) -> Duration {
        self.time
            .duration_since(self.started_at)
            .unwrap_or_default()
    }

    /// `ok`, `error` or `requeue-after`, as the JSON line's `result`.
    pub fn result_name(&self) -> &'static str {
        result_name(self.result)
    }

    /// The timeline's facts after the key: `attempt 2  waited 1.20s  took 100.0ms  folded 3 adds
    /// rv 1005  error → retry in 10.0ms`; the priority first from a priority queue, the attempt
    /// only from the second, the adds only when several folded, and why it ran when it was
    /// re-queued mid-reconcile.
    pub fn facts(&self) -> String {
        let mut parts = Vec::new();
        if let Some(priority) = self.priority {
            parts.push(format!("priority {priority}"));
        }
        if self.attempt > 1 {
            parts.push(format!("attempt {}", self.attempt));
        }
        parts.push(format!("waited {}", human_duration(self.waited())));
        parts.push(format!("took {}", human_duration(self.took())));
        if self.adds > 1 {
            parts.push(format!("folded {} adds", self.adds));
        }
        if self.requeued {
            parts.push("requeued: changed while reconciling".to_owned());
        }
        parts.push(match self.resource_version {
            Some("") => "rv -".to_owned(),
            Some(rv) => format!("rv {}", printable(rv)),
            None => "gone".to_owned(),
        });
        parts.push(match (self.result, self.retry_in) {
            (ReconcileResult::Error, Some(delay)) => {
                format!("error → retry in {}", human_duration(delay))
            }
            (ReconcileResult::Error, None) => "error".to_owned(),
            (ReconcileResult::RequeueAfter(after), _) if !after.is_zero() => {
                format!("ok → requeue after {}", human_duration(after))
            }
            _ => "ok".to_owned(),
        });
        parts.join("  ")
    }
}

fn result_name(result: ReconcileResult) -> &'static str {
    match result {
        ReconcileResult::Error => "error",
        ReconcileResult::RequeueAfter(after) if !after.is_zero() => "requeue-after",
        _ => "ok",
    }
}

/// A reconcile (docs/jsonl.md, `kind: "reconcile"`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReconcileRecord<'a> {
    kind: &'static str,
    /// When it ended.
    time: String,
    started_at: String,
    resource: &'a str,
    controller: &'a str,
    worker: usize,
    key: &'a str,
    attempt: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    priority: Option<i32>,
    queued_at: String,
    wait_ms: f64,
    duration_ms: f64,
    adds: u64,
    requeued: bool,
    resource_version: Option<&'a str>,
    result: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    retry_in_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    requeue_after_ms: Option<f64>,
}

impl<'a> ReconcileRecord<'a> {
    pub(crate) fn new(view: &ReconcileView<'a>) -> Self {
        let requeue_after = match view.result {
            ReconcileResult::RequeueAfter(after) if !after.is_zero() => Some(millis(after)),
            _ => None,
        };
        ReconcileRecord {
            kind: "reconcile",
            time: rfc3339_micros(view.time),
            started_at: rfc3339_micros(view.started_at),
            resource: view.resource,
            controller: view.controller,
            worker: view.worker,
            key: view.key,
            attempt: view.attempt,
            priority: view.priority,
            queued_at: rfc3339_micros(view.queued_at),
            wait_ms: millis(view.waited()),
            duration_ms: millis(view.took()),
            adds: view.adds,
            requeued: view.requeued,
            resource_version: view.resource_version,
            result: view.result_name(),
            retry_in_ms: view.retry_in.map(millis),
            requeue_after_ms: requeue_after,
        }
    }
}

/// What one controller did, for the summary: counted from its reconciles, and its queue's
/// metrics once it stopped.
#[derive(Debug, Clone, Default)]
pub struct ControllerStats {
    /// Its name.
    pub name: String,
    /// The queue it ran (`workqueue`, `priority`): the answer to "why this order" depends on it.
    pub queue: &'static str,
    /// How many workers reconciled.
    pub workers: usize,
    /// Reconciles finished.
    pub reconciles: u64,
    /// Of which returned an error.
    pub errors: u64,
    /// `workqueue_queue_duration_seconds`: from a key's first add to the `Get` that took it.
    pub queue_wait: WaitHistogram,
    /// `workqueue_work_duration_seconds`: from `Get` to `Done`.
    pub work: WaitHistogram,
    /// The queue's metrics when the session ended.
    pub metrics: QueueMetrics,
}

impl ControllerStats {
    /// A controller named `name` running `workers` workers on `queue`, with nothing counted.
    pub fn new(name: &str, queue: &'static str, workers: usize) -> Self {
        ControllerStats {
            name: name.to_owned(),
            queue,
            workers,
            ..ControllerStats::default()
        }
    }

    /// Counts one finished reconcile.
    pub fn record(&mut self, view: &ReconcileView<'_>) {
        self.reconciles += 1;
        self.errors += u64::from(view.result == ReconcileResult::Error);
        self.queue_wait.record(view.waited());
        self.work.record(view.took());
    }

    /// The longest reconcile: the longest finished one, or one still running at the end.
    pub fn longest_running(&self) -> Duration {
        self.metrics
            .max_work_duration
            .max(self.metrics.longest_running_processor)
            .max(self.work.max())
    }

    /// Keys still waiting when the session ended: ready for a worker, or waiting for their time
    /// (`AddAfter`, a retry).
    pub fn still_waiting(&self) -> usize {
        self.metrics.depth + self.metrics.waiting_after
    }
}

/// The summary's table of controllers, one column per controller (`resource/controller` when
/// several resources ran), rows named after client-go's workqueue metrics; `None` without any.
pub fn controller_table(controllers: &[(&str, &[ControllerStats])]) -> Option<String> {
    let several = controllers.len() > 1;
    let columns: Vec<(String, &ControllerStats)> = controllers
        .iter()
        .flat_map(|(resource, stats)| {
            stats.iter().map(move |c| {
                let name = if several {
                    format!("{resource}/{}", c.name)
                } else {
                    c.name.clone()
                };
                (name, c)
            })
        })
        .collect();
    if columns.is_empty() {
        return None;
    }
    let mut table = Table::new();
    table
        .load_style(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled);
    let mut header = vec!["controller".to_owned()];
    header.extend(columns.iter().map(|(name, _)| printable(name).into_owned()));
    table.set_header(header);
    let row = |label: &str, value: &dyn Fn(&ControllerStats) -> String| {
        let mut cells = vec![label.to_owned()];
        cells.extend(columns.iter().map(|(_, c)| value(c)));
        cells
    };
    table.add_row(row("queue, workers", &|c| {
        format!("{}, {}", c.queue, c.workers)
    }));
    table.add_row(row("reconciles", &|c| c.reconciles.to_string()));
    table.add_row(row("  of which errors", &|c| c.errors.to_string()));
    table.add_row(row("adds (workqueue_adds_total)", &|c| {
        c.metrics.adds.to_string()
    }));
    table.add_row(row("  folded while waiting", &|c| {
        c.metrics.folded.to_string()
    }));
    table.add_row(row("re-queued after processing", &|c| {
        c.metrics.requeued.to_string()
    }));
    table.add_row(row("retries (workqueue_retries_total)", &|c| {
        c.metrics.retries.to_string()
    }));
    table.add_row(row("queue wait p50 / p99 / max", &|c| {
        quantiles(&c.queue_wait)
    }));
    table.add_row(row("work duration p50 / p99 / max", &|c| {
        quantiles(&c.work)
    }));
    table.add_row(row("max depth (workqueue_depth)", &|c| {
        c.metrics.max_depth.to_string()
    }));
    table.add_row(row("longest running reconcile", &|c| {
        human_duration(c.longest_running())
    }));
    table.add_row(row("keys still waiting at exit", &|c| {
        c.still_waiting().to_string()
    }));
    Some(figures_text(&mut table))
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;

    fn view(result: ReconcileResult, retry_in: Option<Duration>) -> ReconcileView<'static> {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        ReconcileView {
            resource: "configmaps",
            controller: "web",
            worker: 0,
            key: "demo/a",
            attempt: 2,
            queued_at: t0,
            started_at: t0 + Duration::from_millis(1_200),
            time: t0 + Duration::from_millis(1_300),
            adds: 3,
            requeued: false,
            resource_version: Some("1005"),
            result,
            retry_in,
            priority: None,
        }
    }

    #[test]
    fn a_failed_retry_says_when_it_comes_back() {
        let v = view(ReconcileResult::Error, Some(Duration::from_millis(10)));
        assert_eq!(
            v.facts(),
            "attempt 2  waited 1.20s  took 100.0ms  folded 3 adds  rv 1005  error → retry in 10.0ms"
        );
        let json = serde_json::to_value(ReconcileRecord::new(&v)).unwrap();
        assert_eq!(json["result"], "error");
        assert_eq!(json["retryInMs"], 10.0);
        assert_eq!(json["waitMs"], 1200.0);
        assert_eq!(json["adds"], 3);
        assert!(json.get("requeueAfterMs").is_none());
    }

    #[test]
    fn a_missing_object_is_gone_and_null() {
        let mut v = view(ReconcileResult::Ok, None);
        v.resource_version = None;
        v.requeued = true;
        v.attempt = 1;
        v.adds = 1;
        assert_eq!(
            v.facts(),
            "waited 1.20s  took 100.0ms  requeued: changed while reconciling  gone  ok"
        );
        let json = serde_json::to_value(ReconcileRecord::new(&v)).unwrap();
        assert_eq!(json["resourceVersion"], serde_json::Value::Null);
        assert_eq!(json["kind"], "reconcile");
    }
}
