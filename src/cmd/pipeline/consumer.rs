//! One resource's consumer thread: client-go's `processLoop`. It pops a batch (applying it to the
//! Indexer under the queue's lock, as `processDeltas` does), hands it to the output, sleeps
//! `--handler-delay`, and pops the next, so a batch is always written before the next pop.
//!
//! A pop is one key's Deltas for a DeltaFIFO; for a RealFIFO one delta, or up to `--batch-pop`
//! consecutive ones (client-go's `PopBatch`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use kubectl_deltas::Object;
use kubectl_deltas::cache::reflector::Clock;
use kubectl_deltas::cache::{Batch, Indexer, Notification, Queue, process_deltas};

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
    pub(super) runtime: tokio::runtime::Handle,
}

impl Consumer {
    pub(super) fn run(self) {
        let stop = self.output.stop.clone();
        // After a stop nothing more is popped; the batch in hand is finished first.
        while !stop.requested() {
            let mut seq = 0;
            let mut notifications: Vec<Notification<Object>> = Vec::new();
            let popped = self
                .fifo
                .pop_batch(self.batch_pop, &mut |deltas, is_in_initial_list| {
                    // Under the queue's lock: whoever sees the queue empty also sees this batch
                    // busy.
                    self.idle.begin();
                    seq = self.popped.fetch_add(1, Ordering::SeqCst) + 1;
                    notifications.reserve(deltas.len());
                    process_deltas(
                        &mut notifications,
                        &self.indexer,
                        deltas,
                        is_in_initial_list,
                    );
                });
            // The queue is closed and drained.
            let Some(popped) = popped else { return };
            let time = self.clock.wall();
            let batch = Batch {
                seq,
                key: popped.key,
                deltas: popped.deltas,
                notifications,
                is_in_initial_list: popped.is_in_initial_list,
                enqueued_at: popped.enqueued_at,
                popped_at: popped.popped_at,
                queue_len: popped.queue_len,
            };
            let fifo_stats = self.fifo.stats();
            self.output.batch(self.index, &batch, time, &fifo_stats);
            if let Some(delay) = self.handler_delay
                && !stop.requested()
            {
                self.runtime.block_on(async {
                    // Made inside the runtime: a tokio timer needs its context.
                    let sleep = self.clock.sleep(delay);
                    tokio::select! {
                        () = sleep => {}
                        () = stop.wait() => {}
                    }
                });
            }
            self.idle.end();
        }
    }
}
