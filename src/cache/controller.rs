//! The consumer side of an informer: pop a batch from the [`DeltaFifo`], apply it to the
//! [`Indexer`] as client-go's `processDeltas` does, and hand it to handlers.
//!
//! The indexer is updated inside `pop` (under the queue lock, as client-go), so `has_synced`
//! implies the indexer holds the whole initial list. Handlers run after `pop` returns, outside every
//! lock: a slow handler lets deltas pile up (and coalesce) in the FIFO instead of blocking the
//! producer, much as a shared informer's per-listener buffers decouple handlers from the queue.

use std::convert::Infallible;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kube::Resource;

use super::delta::{DeltaObject, DeltaType, Deltas};
use super::delta_fifo::{DeltaFifo, PopError, Popped, ProcessError};
use super::indexer::Indexer;

/// Receives the effect of each delta on the cache (client-go's `ResourceEventHandler`).
pub trait ResourceEventHandler<K> {
    /// An object entered the cache. `is_in_initial_list` is true for objects of the initial list.
    fn on_add(&mut self, obj: &Arc<K>, is_in_initial_list: bool);
    /// An object in the cache was replaced; `old` is what the cache held before.
    fn on_update(&mut self, old: &Arc<K>, new: &Arc<K>);
    /// An object left the cache; a tombstone when the deletion was detected by a relist.
    fn on_delete(&mut self, obj: &DeltaObject<K>);
}

/// A recorded handler call, so that handling can happen after the queue lock is released.
#[derive(Debug)]
pub enum Notification<K> {
    /// See [`ResourceEventHandler::on_add`].
    Add {
        /// The object added.
        obj: Arc<K>,
        /// Whether it came with the initial list.
        is_in_initial_list: bool,
    },
    /// See [`ResourceEventHandler::on_update`].
    Update {
        /// The previous state in the cache.
        old: Arc<K>,
        /// The new state.
        new: Arc<K>,
    },
    /// See [`ResourceEventHandler::on_delete`].
    Delete {
        /// The deleted object, or a tombstone.
        obj: DeltaObject<K>,
    },
}

impl<K> Clone for Notification<K> {
    fn clone(&self) -> Self {
        match self {
            Notification::Add {
                obj,
                is_in_initial_list,
            } => Notification::Add {
                obj: obj.clone(),
                is_in_initial_list: *is_in_initial_list,
            },
            Notification::Update { old, new } => Notification::Update {
                old: old.clone(),
                new: new.clone(),
            },
            Notification::Delete { obj } => Notification::Delete { obj: obj.clone() },
        }
    }
}

impl<K> Notification<K> {
    /// Calls the matching method of `handler`.
    pub fn dispatch(&self, handler: &mut impl ResourceEventHandler<K>) {
        match self {
            Notification::Add {
                obj,
                is_in_initial_list,
            } => handler.on_add(obj, *is_in_initial_list),
            Notification::Update { old, new } => handler.on_update(old, new),
            Notification::Delete { obj } => handler.on_delete(obj),
        }
    }
}

/// Collecting notifications is how a batch's handler calls are deferred.
impl<K> ResourceEventHandler<K> for Vec<Notification<K>> {
    fn on_add(&mut self, obj: &Arc<K>, is_in_initial_list: bool) {
        self.push(Notification::Add {
            obj: obj.clone(),
            is_in_initial_list,
        });
    }

    fn on_update(&mut self, old: &Arc<K>, new: &Arc<K>) {
        self.push(Notification::Update {
            old: old.clone(),
            new: new.clone(),
        });
    }

    fn on_delete(&mut self, obj: &DeltaObject<K>) {
        self.push(Notification::Delete { obj: obj.clone() });
    }
}

/// Applies `deltas` to `store`, oldest first, and tells `handler`, as client-go's `processDeltas`:
/// `Sync`, `Replaced`, `Added` and `Updated` update the object if its key is in the store
/// (`on_update(old, new)`) and add it otherwise (`on_add`); `Deleted` removes it (`on_delete`, with
/// the tombstone if that is what was queued).
///
/// The FIFO only queues tombstones as `Deleted`; should another type carry one (a hand-built batch
/// given to `add_if_not_present`), its last known object is applied, and a tombstone without an
/// object is skipped rather than stored.
pub fn process_deltas<K: Resource>(
    handler: &mut impl ResourceEventHandler<K>,
    store: &Indexer<K>,
    deltas: &Deltas<K>,
    is_in_initial_list: bool,
) {
    for delta in deltas {
        match delta.type_ {
            DeltaType::Sync | DeltaType::Replaced | DeltaType::Added | DeltaType::Updated => {
                let Some(obj) = delta.object.object() else {
                    continue;
                };
                match store.upsert(obj.clone()) {
                    Some(old) => handler.on_update(&old, obj),
                    None => handler.on_add(obj, is_in_initial_list),
                }
            }
            DeltaType::Deleted => {
                store.delete(&delta.object);
                handler.on_delete(&delta.object);
            }
        }
    }
}

/// One popped batch after it was applied to the indexer.
#[derive(Debug)]
pub struct Batch<K> {
    /// Pop sequence number, from 1.
    pub seq: u64,
    /// The key the batch was queued under.
    pub key: Arc<str>,
    /// The deltas, oldest first.
    pub deltas: Deltas<K>,
    /// What applying each delta did to the indexer (old states for updates, in particular).
    pub notifications: Vec<Notification<K>>,
    /// Whether the batch belonged to the initial list.
    pub is_in_initial_list: bool,
    /// When the key entered the queue.
    pub enqueued_at: Instant,
    /// When it was popped.
    pub popped_at: Instant,
    /// Keys still queued after this pop.
    pub queue_len: usize,
}

impl<K> Batch<K> {
    /// How long the key waited in the queue.
    pub fn waited(&self) -> Duration {
        self.popped_at.saturating_duration_since(self.enqueued_at)
    }

    /// Replays this batch's handler calls on `handler`.
    pub fn dispatch(&self, handler: &mut impl ResourceEventHandler<K>) {
        for notification in &self.notifications {
            notification.dispatch(handler);
        }
    }
}

/// Receives each batch after it was applied; returning `Break` stops [`Controller::run`].
pub trait BatchHandler<K> {
    /// Handles one batch.
    fn on_batch(&mut self, batch: &Batch<K>) -> ControlFlow<()>;
}

impl<K, F: FnMut(&Batch<K>) -> ControlFlow<()>> BatchHandler<K> for F {
    fn on_batch(&mut self, batch: &Batch<K>) -> ControlFlow<()> {
        self(batch)
    }
}

/// The informer's consumer: owns the pop loop over a FIFO that feeds an indexer.
#[derive(Debug)]
pub struct Controller<K> {
    fifo: Arc<DeltaFifo<K>>,
    indexer: Arc<Indexer<K>>,
    popped: u64,
}

impl<K: Resource> Controller<K> {
    /// A consumer popping from `fifo` into `indexer`. The FIFO should have been built with the
    /// indexer as its known objects, or deletions of unseen objects and relist tombstones are lost.
    pub fn new(fifo: Arc<DeltaFifo<K>>, indexer: Arc<Indexer<K>>) -> Self {
        Controller {
            fifo,
            indexer,
            popped: 0,
        }
    }

    /// The queue.
    pub fn fifo(&self) -> &Arc<DeltaFifo<K>> {
        &self.fifo
    }

    /// The cache.
    pub fn indexer(&self) -> &Arc<Indexer<K>> {
        &self.indexer
    }

    /// Batches popped so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }

    /// Blocks for the next batch, applies it, and returns it; `None` once the FIFO is closed and
    /// drained.
    pub fn process_next(&mut self) -> Option<Batch<K>> {
        let indexer = &self.indexer;
        match self
            .fifo
            .pop(|deltas, initial| apply(indexer, deltas, initial))
        {
            Ok(popped) => Some(self.batch(popped)),
            Err(PopError::Closed) => None,
            Err(PopError::Process(never)) => match never {},
        }
    }

    /// Like [`process_next`](Controller::process_next) but returns `None` at once when nothing is
    /// queued (closed or not).
    pub fn try_process_next(&mut self) -> Option<Batch<K>> {
        let indexer = &self.indexer;
        match self
            .fifo
            .try_pop(|deltas, initial| apply(indexer, deltas, initial))
        {
            Ok(popped) => popped.map(|p| self.batch(p)),
            Err(PopError::Closed) => None,
            Err(PopError::Process(never)) => match never {},
        }
    }

    /// Pops and handles batches until the FIFO is closed and drained or `handler` breaks.
    pub fn run(&mut self, handler: &mut impl BatchHandler<K>) {
        while let Some(batch) = self.process_next() {
            if handler.on_batch(&batch).is_break() {
                return;
            }
        }
    }

    fn batch(&mut self, popped: Popped<K, Vec<Notification<K>>>) -> Batch<K> {
        self.popped += 1;
        Batch {
            seq: self.popped,
            key: popped.key,
            deltas: popped.deltas,
            notifications: popped.output,
            is_in_initial_list: popped.is_in_initial_list,
            enqueued_at: popped.enqueued_at,
            popped_at: popped.popped_at,
            queue_len: popped.queue_len,
        }
    }
}

fn apply<K: Resource>(
    indexer: &Indexer<K>,
    deltas: &Deltas<K>,
    is_in_initial_list: bool,
) -> Result<Vec<Notification<K>>, ProcessError<Infallible>> {
    let mut notifications = Vec::with_capacity(deltas.len());
    process_deltas(&mut notifications, indexer, deltas, is_in_initial_list);
    Ok(notifications)
}

#[cfg(test)]
#[path = "controller_tests.rs"]
mod tests;
