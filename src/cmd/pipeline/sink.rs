//! One informer's [`InformerSink`]: its batches, events and resyncs go to the session's
//! [`Output`], in the resource's column, each batch with the sync notifications its handlers
//! did not get.

use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant, SystemTime};

use kubectl_deltas::Object;
use kubectl_deltas::cache::{
    Batch, Informer, InformerQueue, InformerSink, ReflectorEvent, ReflectorObserver,
};

use super::kube_lane::KubeLane;
use super::output::{LaneOutput, Skipped};

pub(super) struct InformerOutput {
    /// The lane's place in the output.
    pub(super) lane: LaneOutput,
    /// The source's own observer ([`Hooks::observer`](super::Hooks::observer)), told after the
    /// output.
    pub(super) also: Option<Arc<dyn ReflectorObserver>>,
    /// See [`InformerPlan::wait_scale`](crate::cmd::plan::InformerPlan::wait_scale).
    pub(super) wait_scale: Option<f64>,
    /// The informer this is the sink of, set once it exists: its handlers, in order.
    pub(super) informer: OnceLock<Weak<Informer>>,
    /// The lane's kube-runtime controllers, told the Reflector's steps after the output.
    pub(super) kube: Option<Arc<KubeLane>>,
}

impl InformerSink for InformerOutput {
    fn batch(&self, mut batch: Batch<Object>, at: SystemTime, queue: &dyn InformerQueue<Object>) {
        batch.enqueued_at = self.enqueued_at(batch.enqueued_at, batch.popped_at);
        let skipped = self.skipped(&batch);
        self.lane.batch(&batch, at, &queue.stats(), &skipped);
    }

    fn event(&self, event: ReflectorEvent, _queue: &dyn InformerQueue<Object>) {
        self.lane.event(&event);
        if let Some(kube) = &self.kube {
            kube.observe(&event);
        }
        if let Some(also) = &self.also {
            also.observe(event);
        }
    }

    /// An empty first list: the resource is synced without a batch to say so.
    fn synced(&self, at: SystemTime, _queue: &dyn InformerQueue<Object>) {
        self.lane.synced_without_batch(at);
    }

    /// The queue's resync and its row, both under the output's lock, so that the row precedes
    /// the Sync batches it queued; then the source's observer.
    fn resync(&self, at: SystemTime, queue: &dyn InformerQueue<Object>) {
        let event = self.lane.resync(Some(queue), at);
        if let Some(also) = &self.also {
            also.observe(event);
        }
    }
}

impl InformerOutput {
    /// The sync notifications of `batch` that a handler did not get, by handler position.
    fn skipped<'a>(&self, batch: &'a Batch<Object>) -> Vec<Skipped<'a>> {
        if batch.distributions.iter().all(|d| d.skipped.is_empty()) {
            return Vec::new();
        }
        let Some(informer) = self.informer.get().and_then(Weak::upgrade) else {
            return Vec::new();
        };
        let ids: Vec<_> = informer.listeners().iter().map(|l| l.id()).collect();
        batch
            .distributions
            .iter()
            .flat_map(|distribution| {
                distribution.skipped.iter().filter_map(|id| {
                    let handler = ids.iter().position(|known| known == id)?;
                    Some(Skipped {
                        handler,
                        distribution,
                    })
                })
            })
            .collect()
    }

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
