//! client-go's workqueue metrics (`util/workqueue/metrics.go`, `defaultQueueMetrics` and
//! `defaultRetryMetrics`), as counters kept on the queue: the names in the field docs are the
//! Prometheus series a controller built on client-go exports.

use std::time::Duration;

/// A point-in-time view of one queue's metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueueMetrics {
    /// `workqueue_depth`: keys waiting for a worker now.
    pub depth: usize,
    /// The largest `depth` ever reached.
    pub max_depth: usize,
    /// `workqueue_adds_total`: adds that made a key dirty (client-go counts an add in
    /// `metrics.add` only then; the adds it ignores are `folded`).
    pub adds: u64,
    /// Adds of a key already dirty: nothing happened, the key was going to be processed anyway.
    pub folded: u64,
    /// Keys queued again by `done` because they were added while being processed.
    pub requeued: u64,
    /// `workqueue_retries_total`: `add_after` calls (every `add_rate_limited` is one).
    pub retries: u64,
    /// Keys handed to workers (`get`).
    pub gets: u64,
    /// Keys whose processing ended (`done`).
    pub dones: u64,
    /// `workqueue_queue_duration_seconds`' largest observation: the longest a key waited between
    /// its first add and the `get` that took it.
    pub max_queue_duration: Duration,
    /// `workqueue_work_duration_seconds`' largest observation: the longest processing, `get` to
    /// `done`.
    pub max_work_duration: Duration,
    /// `workqueue_unfinished_work_seconds`: the processing time of the keys still being
    /// processed, summed, at the time the view was taken.
    pub unfinished_work: Duration,
    /// `workqueue_longest_running_processor_seconds`: the longest of those.
    pub longest_running_processor: Duration,
    /// Keys waiting in the delaying queue's heap (`add_after`) at the time the view was taken.
    pub waiting_after: usize,
}
