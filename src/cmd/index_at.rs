//! `index --replay FILE --at WHEN`: the cache as it was at a point of the recording.
//!
//! WHEN is read as `replay --to` reads it (a time, an offset from the recording's start, a pop's
//! number), and the recording is replayed as `replay` does by default (instant, the consumer
//! draining the queue at each recorded time), so `#12` is the pop `replay` numbers 12 and a time
//! counts the pops `replay` shows at or before it. The cache then is what those pops left:
//! [`AtSink`] applies their handler notifications to a copy of the cache, which the query reads;
//! the pops after WHEN still run, changing only the informer's own cache.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use kubectl_deltas::Object;
use kubectl_deltas::cache::{
    Batch, IndexSpec, Indexer, IndexerReader, InformerQueue, InformerSink, Notification,
    ReflectorEvent, object_key,
};

use crate::cli::narrow::Bound;

/// Keeps the cache as the pops up to a bound leave it.
pub struct AtSink {
    state: Mutex<State>,
}

struct State {
    /// The bound; an offset until [`AtSink::starts_at`] resolves it.
    bound: Bound,
    /// Every key the cache held after the last pop within the bound.
    objects: HashMap<String, Arc<Object>>,
    /// The number and time of the last pop within the bound.
    last: Option<(u64, SystemTime)>,
    /// The number of the last pop of the recording.
    pops: u64,
}

impl AtSink {
    pub fn new(bound: Bound) -> AtSink {
        AtSink {
            state: Mutex::new(State {
                bound,
                objects: HashMap::new(),
                last: None,
                pops: 0,
            }),
        }
    }

    /// Resolves an offset against the recording's start.
    pub fn starts_at(&self, start: SystemTime) {
        let mut state = self.lock();
        if let Bound::After(offset) = state.bound {
            state.bound = Bound::At(start + offset);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The cache at the bound, with `specs` indexed, and the time it describes (that of the bound,
    /// or of its pop); `Err` with a sentence when the bound names a pop the recording never made.
    pub fn cache(
        &self,
        specs: &[IndexSpec],
        ended_at: SystemTime,
    ) -> Result<(IndexerReader<Object>, SystemTime), String> {
        let state = self.lock();
        let now = match state.bound {
            Bound::Seq(n) if n > state.pops => {
                return Err(format!(
                    "--at #{n}: the replay of this recording pops {} batches; give #1 to #{}",
                    state.pops,
                    state.pops.max(1)
                ));
            }
            Bound::Seq(_) => state.last.map_or(ended_at, |(_, at)| at),
            Bound::At(at) => at.min(ended_at),
            Bound::After(_) => ended_at,
        };
        let mut indexer = Indexer::new();
        for spec in specs {
            // The specs are distinct, so every name is new.
            let _ = indexer.add_indexer(spec.name(), spec.index_func());
        }
        for obj in state.objects.values() {
            indexer.add(obj.clone());
        }
        Ok((indexer.reader(), now))
    }
}

impl InformerSink for AtSink {
    fn batch(&self, batch: Batch<Object>, at: SystemTime, _queue: &dyn InformerQueue<Object>) {
        let mut state = self.lock();
        state.pops = state.pops.max(batch.seq);
        let within = match state.bound {
            Bound::At(bound) => at <= bound,
            Bound::Seq(n) => batch.seq <= n,
            Bound::After(_) => true,
        };
        if !within {
            return;
        }
        state.last = Some((batch.seq, at));
        for notification in batch.notifications {
            match notification {
                Notification::Add { obj, .. } | Notification::Update { new: obj, .. } => {
                    state.objects.insert(object_key(&*obj), obj);
                }
                Notification::Delete { obj } => {
                    state.objects.remove(&obj.key());
                }
            }
        }
    }

    fn event(&self, _event: ReflectorEvent, _queue: &dyn InformerQueue<Object>) {}
}
