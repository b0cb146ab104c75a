//! [`Idle`]: whether the consumer side of a pipeline has caught up: everything queued was popped,
//! applied and rendered. The pipeline waits for it before ending a session whose sources ran dry
//! (the end of a recording); a source may wait for it so as not to run ahead of the consumers.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use kubectl_deltas::Object;
use kubectl_deltas::cache::Queue;
use tokio::sync::Notify;

/// A cheap, cloneable handle on the consumers' progress. The pipeline is idle when every queue is
/// empty and no consumer holds a batch it has not finished handling (rendering it and any
/// `--handler-delay`).
///
/// It says nothing about events a source has handed to a Reflector that the Reflector has not
/// queued yet. A source that wants "everything I gave so far has been rendered" waits at the point
/// where the Reflector asks it for more (the next watch event, the next list page): the Reflector
/// only asks once it has queued what it had.
#[derive(Clone, Default)]
pub struct Idle {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Consumers between popping a batch and finishing it.
    busy: AtomicUsize,
    /// Set when the pipeline stops: nothing will become idle after that.
    stopped: AtomicBool,
    fifos: Mutex<Vec<Arc<dyn Queue<Object>>>>,
    /// Signalled when a consumer finishes a batch, and on stop.
    changed: Notify,
}

impl std::fmt::Debug for Idle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Idle")
            .field("busy", &self.inner.busy.load(Ordering::SeqCst))
            .field("stopped", &self.is_stopped())
            .finish()
    }
}

impl Idle {
    /// A handle not yet attached to a pipeline (idle: nothing is queued).
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether every queue is empty and no batch is being handled.
    pub fn is_idle(&self) -> bool {
        // Queues first: a consumer marks itself busy under the queue's lock as it pops, so a queue
        // seen empty here means its last batch is already counted as busy below.
        let fifos = self.inner.fifos.lock().unwrap_or_else(|e| e.into_inner());
        fifos.iter().all(|f| f.is_empty()) && self.inner.busy.load(Ordering::SeqCst) == 0
    }

    /// Whether the pipeline has stopped.
    pub fn is_stopped(&self) -> bool {
        self.inner.stopped.load(Ordering::SeqCst)
    }

    /// Completes once the pipeline is idle, or has stopped.
    pub async fn wait(&self) {
        loop {
            let notified = self.inner.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.is_idle() || self.is_stopped() {
                return;
            }
            notified.await;
        }
    }

    pub(super) fn attach(&self, fifos: Vec<Arc<dyn Queue<Object>>>) {
        *self.inner.fifos.lock().unwrap_or_else(|e| e.into_inner()) = fifos;
    }

    /// A consumer took a batch; called under the queue's lock.
    pub(super) fn begin(&self) {
        self.inner.busy.fetch_add(1, Ordering::SeqCst);
    }

    /// A consumer finished its batch.
    pub(super) fn end(&self) {
        self.inner.busy.fetch_sub(1, Ordering::SeqCst);
        self.inner.changed.notify_waiters();
    }

    pub(super) fn stop(&self) {
        self.inner.stopped.store(true, Ordering::SeqCst);
        self.inner.changed.notify_waiters();
    }
}
