//! One informer's [`InformerSink`]: its batches, events and resyncs go to the session's
//! [`Output`], in the resource's column; a batch is followed by `--handler-delay`, which stands
//! for a handler's work and so takes real time whatever the clock.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use kubectl_deltas::Object;
use kubectl_deltas::cache::{Batch, InformerSink, Queue, ReflectorEvent, ReflectorObserver};

use super::output::Output;

pub(super) struct InformerOutput {
    pub(super) output: Arc<Output>,
    /// The resource's position among the session's.
    pub(super) index: usize,
    /// The source's own observer ([`Hooks::observer`](super::Hooks::observer)), told after the
    /// output.
    pub(super) also: Option<Arc<dyn ReflectorObserver>>,
    /// `None` for an informer drained on its source's thread, which must not sleep there.
    pub(super) handler_delay: Option<Duration>,
    /// See [`Settings::wait_scale`](super::Settings::wait_scale).
    pub(super) wait_scale: Option<f64>,
    pub(super) runtime: tokio::runtime::Handle,
}

impl InformerSink for InformerOutput {
    fn batch(&self, mut batch: Batch<Object>, at: SystemTime, queue: &dyn Queue<Object>) {
        batch.enqueued_at = self.enqueued_at(batch.enqueued_at, batch.popped_at);
        self.output.batch(self.index, &batch, at, &queue.stats());
        let stop = &self.output.stop;
        if let Some(delay) = self.handler_delay
            && !stop.requested()
        {
            self.runtime.block_on(async {
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    () = stop.wait() => {}
                }
            });
        }
    }

    fn event(&self, event: ReflectorEvent, queue: &dyn Queue<Object>) {
        self.output.event(self.index, &event, queue);
        if let Some(also) = &self.also {
            also.observe(event);
        }
    }

    /// The queue's resync and its row, both under the output's lock, so that the row precedes
    /// the Sync batches it queued; then the source's observer.
    fn resync(&self, at: SystemTime, queue: &dyn Queue<Object>) {
        let event = self.output.resync(self.index, queue, at);
        if let Some(also) = &self.also {
            also.observe(event);
        }
    }
}

impl InformerOutput {
    /// When the batch's oldest delta was queued, as far as the output is concerned: the
    /// queue's real wait, scaled into the pipeline clock's time.
    fn enqueued_at(&self, enqueued_at: Instant, popped_at: Instant) -> Instant {
        let Some(scale) = self.wait_scale else {
            return enqueued_at;
        };
        let waited = popped_at.saturating_duration_since(enqueued_at);
        let scaled = Duration::try_from_secs_f64(waited.as_secs_f64() * scale).unwrap_or_default();
        popped_at.checked_sub(scaled).unwrap_or(popped_at)
    }
}
