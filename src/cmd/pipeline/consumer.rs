//! One resource's consumer: client-go's `processLoop`. It pops a batch (applying it to the
//! Indexer under the queue's lock, as `processDeltas` does), hands it to the output, sleeps
//! `--handler-delay`, and pops the next, so a batch is always written before the next pop.
//!
//! A pop is one key's Deltas for a DeltaFIFO; for a RealFIFO one delta, or up to `--batch-pop`
//! consecutive ones (client-go's `PopBatch`).
//!
//! It runs on its own thread ([`run`](Consumer::run)), or, for an instant replay, on the
//! replay's thread between two groups of lines ([`drain`](Consumer::drain), see
//! [`InlineConsumer`](super::InlineConsumer)).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use kubectl_deltas::Object;
use kubectl_deltas::cache::reflector::Clock;
use kubectl_deltas::cache::{Batch, Deltas, Indexer, Notification, Queue, process_deltas};

use super::idle::Idle;
use super::output::Output;

pub(super) struct Consumer {
    pub(super) index: usize,
    pub(super) fifo: Arc<dyn Queue<Object>>,
    /// Most deltas one pop takes (`--batch-pop`; the DeltaFIFO ignores it).
    pub(super) batch_pop: usize,
    pub(super) indexer: Arc<Indexer<Object>>,
    pub(super) output: Arc<Output>,
    pub(super) idle: Idle,
    /// Pops across every resource, so sequence numbers give one order to the merged output.
    pub(super) popped: Arc<AtomicU64>,
    pub(super) clock: Arc<dyn Clock>,
    pub(super) handler_delay: Option<Duration>,
    /// See [`Settings::wait_scale`](super::Settings::wait_scale).
    pub(super) wait_scale: Option<f64>,
    pub(super) runtime: tokio::runtime::Handle,
}

impl Consumer {
    /// Pops and handles batches until the queue is closed and drained, or a stop.
    pub(super) fn run(self) {
        let stop = self.output.stop.clone();
        // After a stop nothing more is popped; the batch in hand is finished first.
        while !stop.requested() && self.step(true) {}
    }

    /// Pops and handles batches until the queue is empty, or a stop. Never sleeps: a consumer
    /// drained on the replay's thread has no `--handler-delay` (an instant replay's batches do
    /// not depend on the consumer's speed).
    pub(super) fn drain(&self) {
        while !self.output.stop.requested() && self.step(false) {}
    }

    /// Pops (waiting for a batch if `block`) and handles one batch; `false` when there was none.
    fn step(&self, block: bool) -> bool {
        let mut seq = 0;
        let mut notifications: Vec<Notification<Object>> = Vec::new();
        let mut process = |deltas: &Deltas<Object>, is_in_initial_list: bool| {
            // Under the queue's lock: whoever sees the queue empty also sees this batch busy.
            self.idle.begin();
            seq = self.popped.fetch_add(1, Ordering::SeqCst) + 1;
            notifications.reserve(deltas.len());
            process_deltas(
                &mut notifications,
                &self.indexer,
                deltas,
                is_in_initial_list,
            );
        };
        let popped = if block {
            self.fifo.pop_batch(self.batch_pop, &mut process)
        } else {
            self.fifo.try_pop_batch(self.batch_pop, &mut process)
        };
        let Some(popped) = popped else { return false };
        let time = self.clock.wall();
        let batch = Batch {
            seq,
            key: popped.key,
            deltas: popped.deltas,
            notifications,
            is_in_initial_list: popped.is_in_initial_list,
            enqueued_at: self.enqueued_at(popped.enqueued_at, popped.popped_at),
            popped_at: popped.popped_at,
            queue_len: popped.queue_len,
        };
        let fifo_stats = self.fifo.stats();
        self.output.batch(self.index, &batch, time, &fifo_stats);
        if let Some(delay) = self.handler_delay
            && !self.output.stop.requested()
        {
            let stop = &self.output.stop;
            self.runtime.block_on(async {
                // The handler's work takes real time, whatever clock the Reflector runs on.
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    () = stop.wait() => {}
                }
            });
        }
        self.idle.end();
        true
    }

    /// When the batch's oldest delta was queued, as far as the output is concerned: the
    /// queue's real wait, scaled into the pipeline clock's time.
    fn enqueued_at(
        &self,
        enqueued_at: std::time::Instant,
        popped_at: std::time::Instant,
    ) -> std::time::Instant {
        let Some(scale) = self.wait_scale else {
            return enqueued_at;
        };
        let waited = popped_at.saturating_duration_since(enqueued_at);
        let scaled = Duration::try_from_secs_f64(waited.as_secs_f64() * scale).unwrap_or_default();
        popped_at.checked_sub(scaled).unwrap_or(popped_at)
    }
}
