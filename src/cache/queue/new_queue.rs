//! Building the queue an informer runs: client-go's `newQueueFIFO` (`controller.go`, v0.34 on;
//! earlier versions inline it in `NewIndexerInformer` and `sharedIndexInformer.Run`).

use std::sync::Arc;

use super::delta_fifo::DeltaFifo;
use super::fifo::Fifo;
use super::real_fifo::RealFifo;
use super::{InformerQueue, QueueKind};
use crate::cache::key::CacheObject;
use crate::cache::store::KnownObjects;

impl QueueKind {
    /// Builds a queue of this kind, as client-go's `newQueueFIFO` does: `known` is the consumer's
    /// store (a reader of the [`Indexer`](crate::cache::Indexer)), consulted by the DeltaFIFO and the
    /// RealFIFO but never by the atomic one nor the plain FIFO. `emit_delta_type_replaced` chooses
    /// `Replaced` (true, the informer default) or the legacy `Sync` for listed objects; the atomic
    /// queue emits `ReplacedAll` either way.
    pub fn build<K>(
        self,
        known: Arc<dyn KnownObjects<K>>,
        emit_delta_type_replaced: bool,
    ) -> Arc<dyn InformerQueue<K>>
    where
        K: CacheObject + Send + Sync + 'static,
    {
        match self {
            QueueKind::Delta => Arc::new(
                DeltaFifo::new()
                    .known_objects(known)
                    .emit_delta_type_replaced(emit_delta_type_replaced),
            ),
            QueueKind::Real => {
                Arc::new(RealFifo::new(known).emit_delta_type_replaced(emit_delta_type_replaced))
            }
            QueueKind::Atomic => Arc::new(RealFifo::atomic()),
            QueueKind::Plain => Arc::new(Fifo::new()),
        }
    }
}
