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

/// Whose machinery ran a controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Runtime {
    /// client-go's workqueue behind an informer's handler (controller-runtime's worker loop).
    #[default]
    ClientGo,
    /// kube-runtime's `Controller`.
    Kube,
}

impl Runtime {
    /// `client-go` or `kube`, as the JSON line's `runtime`.
    pub fn name(self) -> &'static str {
        match self {
            Runtime::ClientGo => "client-go",
            Runtime::Kube => "kube",
        }
    }
}

/// A reconcile as it starts: a worker took the key (`Get`) and read the object. What the queue
/// knew of the key's wait is told here, and the timeline shows it where it happened. A request
/// that did not become a reconcile (`skipped`, `filtered`) is told as a start that ends at once.
#[derive(Debug, Clone, Copy)]
pub struct ReconcileStart<'a> {
    /// Whose machinery ran it.
    pub runtime: Runtime,
    /// Why it was requested (kube-runtime's `ReconcileReason`): `object updated`, `owned object
    /// updated`, `requeue`, `error requeue`, `relist`; `None` where the runtime does not say.
    pub reason: Option<&'a str>,
    /// The owned object whose change requested it (`owns=`): `demo/web-7b9c (replicasets)`.
    pub owned: Option<&'a str>,
    /// The request waited longer than asked because kube-runtime's debounce pushed it back.
    pub debounced: bool,
    /// kube-runtime dispatched the request and the object was not in its store
    /// (`Error::ObjectNotFound`): nothing ran.
    pub skipped: bool,
    /// The predicates that dropped the event (`generation+labels`): nothing was queued.
    pub filtered: Option<&'a str>,
    /// The resource, as in [`BatchView::resource`](super::BatchView::resource).
    pub resource: &'a str,
    /// The controller's name.
    pub controller: &'a str,
    /// The worker that runs it, from 0.
    pub worker: usize,
    /// The key it reconciles (`namespace/name`).
    pub key: &'a str,
    /// `NumRequeues` + 1 when it started.
    pub attempt: u32,
    /// The first add of the wait it serves: `waited` counts from here.
    pub queued_at: SystemTime,
    /// The handler's latest add of the key before the start, when several adds folded: how long
    /// before the start the newest change came.
    pub latest_add: Option<SystemTime>,
    /// When the worker took the key (`Get`).
    pub started_at: SystemTime,
    /// The adds it absorbs: the one that queued the key and those folded into it while it waited.
    pub adds: u64,
    /// The key was added while it was being reconciled before, and queued again by `Done`.
    pub requeued: bool,
    /// What the reconcile read from the Indexer when it started: the resourceVersion (empty for
    /// an object without one), `None` when the object was gone.
    pub resource_version: Option<&'a str>,
    /// The priority the key was handed out with, from a priority queue (`queue=priority`):
    /// `-100` (`LowPriority`) for initial-list adds and unchanged updates, `0` otherwise.
    pub priority: Option<i32>,
    /// Why a `LowPriority` key has it: `initial list` or `unchanged resourceVersion`, the two
    /// cases of controller-runtime's default handlers.
    pub priority_reason: Option<&'a str>,
}

impl ReconcileStart<'_> {
    /// How long the key waited for a worker, from its first add.
    pub fn waited(&self) -> Duration {
        self.started_at
            .duration_since(self.queued_at)
            .unwrap_or_default()
    }

    /// How long before the start the latest folded add came, when several adds folded.
    pub fn since_latest_add(&self) -> Option<Duration> {
        let latest = self.latest_add.filter(|_| self.adds > 1)?;
        Some(self.started_at.duration_since(latest).unwrap_or_default())
    }

    /// What is known when the reconcile starts: `priority -100 (initial list)  attempt 2
    /// waited 1.20s  folded 3 adds, latest 100.0ms ago  rv 1005`; the priority only from a
    /// priority queue (its reason when low), the attempt only from the second, the adds only when
    /// several folded, and why it runs when it was re-queued mid-reconcile.
    pub fn facts(&self) -> String {
        let mut parts = Vec::new();
        if let Some(filtered) = self.filtered {
            return format!("filtered by {filtered}");
        }
        match (self.reason, self.owned) {
            (_, Some(owned)) => parts.push(format!("owner of {owned}")),
            (Some(reason), None) => parts.push(reason.to_owned()),
            (None, None) => {}
        }
        match (self.priority, self.priority_reason) {
            (Some(priority), Some(reason)) => parts.push(format!("priority {priority} ({reason})")),
            (Some(priority), None) => parts.push(format!("priority {priority}")),
            (None, _) => {}
        }
        if self.attempt > 1 {
            parts.push(format!("attempt {}", self.attempt));
        }
        parts.push(format!("waited {}", human_duration(self.waited())));
        if self.debounced {
            parts.push("debounced".to_owned());
        }
        if self.skipped {
            parts.push("skipped: not in the store (ObjectNotFound)".to_owned());
            return parts.join("  ");
        }
        // kube-runtime's scheduler merges requests where client-go's queue folds adds.
        let adds = match self.runtime {
            Runtime::ClientGo => "adds",
            Runtime::Kube => "requests",
        };
        if self.adds > 1 {
            match self.since_latest_add() {
                Some(ago) => parts.push(format!(
                    "folded {} {adds}, latest {} ago",
                    self.adds,
                    human_duration(ago)
                )),
                None => parts.push(format!("folded {} {adds}", self.adds)),
            }
        }
        if self.requeued {
            parts.push("requeued: changed while reconciling".to_owned());
        }
        parts.push(match self.resource_version {
            Some("") => "rv -".to_owned(),
            Some(rv) => format!("rv {}", printable(rv)),
            None => "gone".to_owned(),
        });
        parts.join("  ")
    }
}

/// One finished reconcile of a controller: its start, and how it ended.
#[derive(Debug, Clone, Copy)]
pub struct ReconcileView<'a> {
    /// What was known when it started.
    pub start: ReconcileStart<'a>,
    /// When it ended (`Done`).
    pub time: SystemTime,
    /// What it returned.
    pub result: ReconcileResult,
    /// The rate limiter's delay before the retry of an error (`AddRateLimited`).
    pub retry_in: Option<Duration>,
}

impl ReconcileView<'_> {
    /// How long the key waited for a worker.
    pub fn waited(&self) -> Duration {
        self.start.waited()
    }

    /// How long the reconcile ran.
    pub fn took(&self) -> Duration {
        self.time
            .duration_since(self.start.started_at)
            .unwrap_or_default()
    }

    /// `ok`, `error` or `requeue-after`, as the JSON line's `result`.
    pub fn result_name(&self) -> &'static str {
        result_name(self.result)
    }

    /// What is known when it ends: `took 100.0ms  error → retry in 10.0ms`.
    pub fn outcome(&self) -> String {
        let result = match (self.result, self.retry_in) {
            (ReconcileResult::Error, Some(delay)) => {
                format!("error → retry in {}", human_duration(delay))
            }
            (ReconcileResult::Error, None) => "error".to_owned(),
            (ReconcileResult::RequeueAfter(after), _) if !after.is_zero() => {
                format!("ok → requeue after {}", human_duration(after))
            }
            _ => "ok".to_owned(),
        };
        format!("took {}  {result}", human_duration(self.took()))
    }

    /// Everything: the start's facts, then the outcome.
    pub fn facts(&self) -> String {
        if self.ran() {
            format!("{}  {}", self.start.facts(), self.outcome())
        } else {
            self.start.facts()
        }
    }

    /// Whether a reconcile ran: not one `skipped` or `filtered`.
    pub fn ran(&self) -> bool {
        !self.start.skipped && self.start.filtered.is_none()
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
    runtime: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    owned_object: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    debounced: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    skipped: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    filtered: Option<&'a str>,
    worker: usize,
    key: &'a str,
    attempt: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    priority: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    priority_reason: Option<&'a str>,
    queued_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    latest_add_at: Option<String>,
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
        let start = &view.start;
        ReconcileRecord {
            kind: "reconcile",
            time: rfc3339_micros(view.time),
            started_at: rfc3339_micros(start.started_at),
            resource: start.resource,
            controller: start.controller,
            runtime: start.runtime.name(),
            reason: start.reason,
            owned_object: start.owned,
            debounced: start.debounced,
            skipped: start.skipped,
            filtered: start.filtered,
            worker: start.worker,
            key: start.key,
            attempt: start.attempt,
            priority: start.priority,
            priority_reason: start.priority_reason.filter(|_| start.priority.is_some()),
            queued_at: rfc3339_micros(start.queued_at),
            latest_add_at: start
                .latest_add
                .filter(|_| start.adds > 1)
                .map(rfc3339_micros),
            wait_ms: millis(view.waited()),
            duration_ms: millis(view.took()),
            adds: start.adds,
            requeued: start.requeued,
            resource_version: start.resource_version,
            result: match (start.skipped, start.filtered) {
                (true, _) => "skipped",
                (_, Some(_)) => "filtered",
                _ => view.result_name(),
            },
            retry_in_ms: view.retry_in.map(millis),
            requeue_after_ms: requeue_after,
        }
    }
}

/// Where kube-runtime's `Controller` parts from what the timeline's client-go rows show, in one
/// sentence: a `── kube-runtime …` row and a `note` JSON line (docs/jsonl.md).
#[derive(Debug, Clone, Copy)]
pub struct ControllerNote<'a> {
    /// The resource, as in [`ReconcileStart::resource`].
    pub resource: &'a str,
    /// The controller it is about; `None` for every kube-runtime controller of the resource
    /// (what its watcher does).
    pub controller: Option<&'a str>,
    /// When.
    pub time: SystemTime,
    /// The sentence, starting with `kube-runtime`.
    pub text: &'a str,
}

/// A controller's note (docs/jsonl.md, `kind: "note"`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NoteRecord<'a> {
    kind: &'static str,
    time: String,
    resource: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    controller: Option<&'a str>,
    runtime: &'static str,
    text: &'a str,
}

impl<'a> NoteRecord<'a> {
    pub(crate) fn new(note: &ControllerNote<'a>) -> Self {
        NoteRecord {
            kind: "note",
            time: rfc3339_micros(note.time),
            resource: note.resource,
            controller: note.controller,
            runtime: Runtime::Kube.name(),
            text: note.text,
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
    /// The queue's metrics when the session ended; a kube-runtime controller's in the
    /// workqueue's terms (requests as adds, requests merged into a waiting one as folded).
    pub metrics: QueueMetrics,
    /// Whose machinery ran it: what the table calls its counters.
    pub runtime: Runtime,
}

impl ControllerStats {
    /// A controller named `name` of `runtime` running `workers` workers on `queue`, with nothing
    /// counted.
    pub fn new(name: &str, runtime: Runtime, queue: &'static str, workers: usize) -> Self {
        ControllerStats {
            name: name.to_owned(),
            queue,
            workers,
            runtime,
            ..ControllerStats::default()
        }
    }

    /// Counts one finished reconcile (one that did not run is not counted).
    pub fn record(&mut self, view: &ReconcileView<'_>) {
        if !view.ran() {
            return;
        }
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

    /// Reconciles still running when the session ended: keys a worker took and did not finish
    /// (`Get` without `Done`).
    pub fn running(&self) -> usize {
        usize::try_from(self.metrics.gets.saturating_sub(self.metrics.dones)).unwrap_or(usize::MAX)
    }

    /// Keys waiting when the session ended: ready for a worker, or waiting for their time
    /// (`AddAfter`, a retry); not those being reconciled.
    pub fn waiting(&self) -> usize {
        self.metrics.depth + self.metrics.waiting_after
    }

    /// Keys whose work was unfinished when the session ended: those waiting and those whose
    /// reconcile was still running (its key is no more done than a waiting one).
    pub fn still_waiting(&self) -> usize {
        self.waiting() + self.running()
    }

    /// `1 reconcile still running, 2 keys waiting`: what the session left unfinished; `None`
    /// when nothing was.
    pub fn unfinished(&self) -> Option<String> {
        let (running, waiting) = (self.running() as u64, self.waiting() as u64);
        let mut parts = Vec::new();
        if running > 0 {
            parts.push(format!(
                "{} still running",
                super::count(running, "reconcile")
            ));
        }
        if waiting > 0 {
            parts.push(format!("{} waiting", super::count(waiting, "key")));
        }
        (!parts.is_empty()).then(|| parts.join(", "))
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
    // A counter as the runtimes of the columns name it: client-go's workqueue metric, the
    // kube-runtime scheduler's requests, or both where both run.
    let (go, kube) = (Runtime::ClientGo, Runtime::Kube);
    let runs = |runtime| columns.iter().any(|(_, c)| c.runtime == runtime);
    let named = |workqueue: &str, scheduler: &str| -> String {
        match (runs(go), runs(kube)) {
            (true, true) => format!("{workqueue} / {}", scheduler.trim_start()),
            (false, true) => scheduler.to_owned(),
            _ => workqueue.to_owned(),
        }
    };
    table.add_row(row("queue, workers", &|c| match c.workers {
        0 => format!("{}, unbounded", c.queue),
        n => format!("{}, {n}", c.queue),
    }));
    table.add_row(row("reconciles", &|c| c.reconciles.to_string()));
    table.add_row(row("  of which errors", &|c| c.errors.to_string()));
    table.add_row(row(
        &named("adds (workqueue_adds_total)", "requests"),
        &|c| c.metrics.adds.to_string(),
    ));
    let folded = named("  folded while waiting", "  merged into a waiting one");
    table.add_row(row(&folded, &|c| c.metrics.folded.to_string()));
    table.add_row(row("re-queued after processing", &|c| {
        c.metrics.requeued.to_string()
    }));
    let retries = named("retries (workqueue_retries_total)", "error requeues");
    table.add_row(row(&retries, &|c| c.metrics.retries.to_string()));
    table.add_row(row("queue wait p50 / p99 / max", &|c| {
        quantiles(&c.queue_wait)
    }));
    table.add_row(row("work duration p50 / p99 / max", &|c| {
        quantiles(&c.work)
    }));
    let depth = named("max depth (workqueue_depth)", "most requests waiting");
    table.add_row(row(&depth, &|c| c.metrics.max_depth.to_string()));
    table.add_row(row("longest running reconcile", &|c| {
        human_duration(c.longest_running())
    }));
    table.add_row(row("keys still waiting at exit", &|c| match c.running() {
        0 => c.still_waiting().to_string(),
        running => format!("{} ({running} running)", c.still_waiting()),
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
            start: ReconcileStart {
                runtime: Runtime::ClientGo,
                reason: None,
                owned: None,
                debounced: false,
                skipped: false,
                filtered: None,
                resource: "configmaps",
                controller: "web",
                worker: 0,
                key: "demo/a",
                attempt: 2,
                queued_at: t0,
                latest_add: Some(t0 + Duration::from_millis(1_100)),
                started_at: t0 + Duration::from_millis(1_200),
                adds: 3,
                requeued: false,
                resource_version: Some("1005"),
                priority: None,
                priority_reason: None,
            },
            time: t0 + Duration::from_millis(1_300),
            result,
            retry_in,
        }
    }

    #[test]
    fn a_failed_retry_says_when_it_comes_back() {
        let v = view(ReconcileResult::Error, Some(Duration::from_millis(10)));
        assert_eq!(
            v.facts(),
            "attempt 2  waited 1.20s  folded 3 adds, latest 100.0ms ago  rv 1005  took 100.0ms  error → retry in 10.0ms"
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
        v.start.resource_version = None;
        v.start.requeued = true;
        v.start.attempt = 1;
        v.start.adds = 1;
        assert_eq!(
            v.facts(),
            "waited 1.20s  requeued: changed while reconciling  gone  took 100.0ms  ok"
        );
        let json = serde_json::to_value(ReconcileRecord::new(&v)).unwrap();
        assert_eq!(json["resourceVersion"], serde_json::Value::Null);
        assert_eq!(json["kind"], "reconcile");
        assert!(json.get("latestAddAt").is_none(), "one add: no latest");
    }

    #[test]
    fn a_low_priority_says_why_and_a_folded_wait_when_its_latest_add_came() {
        let mut v = view(ReconcileResult::Ok, None);
        v.start.priority = Some(-100);
        v.start.priority_reason = Some("initial list");
        assert!(
            v.start
                .facts()
                .starts_with("priority -100 (initial list)  attempt 2"),
            "{}",
            v.start.facts()
        );
        let json = serde_json::to_value(ReconcileRecord::new(&v)).unwrap();
        assert_eq!(json["priorityReason"], "initial list");
        assert_eq!(json["latestAddAt"], "1970-01-01T00:16:41.100000Z");
    }

    /// The first cells of each row of `table`: its labels.
    fn labels(table: &str) -> Vec<String> {
        (table.lines())
            .filter_map(|line| line.strip_prefix("│ "))
            .map(|line| line.split('┆').next().unwrap_or_default().trim().to_owned())
            .collect()
    }

    #[test]
    fn the_table_names_each_runtimes_counters_in_its_own_terms() {
        let go = ControllerStats::new("go", Runtime::ClientGo, "workqueue", 1);
        let rs = ControllerStats::new("rs", Runtime::Kube, "kube-runtime scheduler", 0);
        let of = |stats: &[ControllerStats]| labels(&controller_table(&[("pods", stats)]).unwrap());
        let go_only = of(std::slice::from_ref(&go));
        assert!(
            go_only.contains(&"adds (workqueue_adds_total)".to_owned()),
            "{go_only:?}"
        );
        assert!(
            go_only.contains(&"max depth (workqueue_depth)".to_owned()),
            "{go_only:?}"
        );
        let kube_only = of(std::slice::from_ref(&rs));
        for label in ["requests", "merged into a waiting one", "error requeues"] {
            assert!(
                kube_only.contains(&label.to_owned()),
                "{label}: {kube_only:?}"
            );
        }
        assert!(
            !kube_only.iter().any(|l| l.contains("workqueue_")),
            "{kube_only:?}"
        );
        let both = of(&[go, rs]);
        assert!(
            both.contains(&"retries (workqueue_retries_total) / error requeues".to_owned()),
            "{both:?}"
        );
    }
}
