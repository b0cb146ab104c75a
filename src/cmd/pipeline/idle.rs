//! [`Idle`]: whether the consumer side of a pipeline has caught up: everything queued was popped,
//! applied and rendered. The pipeline waits for it before ending a session whose sources ran dry
//! (the end of a recording); a source may wait for it so as not to run ahead of the consumers.
//!
//! A stopped session never becomes idle (its consumers stop popping, so its queues may keep what
//! they hold): the session's stop request ends every wait here, whoever requested it and whenever.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use kubectl_deltas::Object;
use kubectl_deltas::cache::Queue;
use tokio::sync::Notify;

use super::stop::Stop;

/// A cheap, cloneable handle on the consumers' progress. The pipeline is idle when every queue is
/// empty and no consumer holds a batch it has not finished handling (rendering it and any
/// `--handler-delay`).
///
/// It says nothing about events a source has handed to a Reflector that the Reflector has not
/// queued yet. A source that wants "everything I gave so far has been rendered" waits at the point
/// where the Reflector asks it for more (the next watch event, the next list page): the Reflector
/// only asks once it has queued what it had.
#[derive(Clone)]
pub struct Idle {
    inner: Arc<Inner>,
}

struct Inner {
    /// Consumers between popping a batch and finishing it.
    busy: AtomicUsize,
    /// The session's stop: nothing becomes idle after it.
    stop: Arc<Stop>,
    fifos: Mutex<Vec<Arc<dyn Queue<Object>>>>,
    /// Signalled when a consumer finishes a batch.
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
    /// A handle on the consumers of the session that `stop` ends, not yet attached to its
    /// queues (idle: nothing is queued).
    pub(super) fn new(stop: Arc<Stop>) -> Self {
        Idle {
            inner: Arc::new(Inner {
                busy: AtomicUsize::new(0),
                stop,
                fifos: Mutex::default(),
                changed: Notify::new(),
            }),
        }
    }

    /// Whether every queue is empty and no batch is being handled.
    pub fn is_idle(&self) -> bool {
        // Queues first: a consumer marks itself busy under the queue's lock as it pops, so a queue
        // seen empty here means its last batch is already counted as busy below.
        let fifos = self.inner.fifos.lock().unwrap_or_else(|e| e.into_inner());
        fifos.iter().all(|f| f.is_empty()) && self.inner.busy.load(Ordering::SeqCst) == 0
    }

    /// Whether the session was told to stop.
    pub fn is_stopped(&self) -> bool {
        self.inner.stop.requested()
    }

    /// Completes once the pipeline is idle, or the session was told to stop.
    pub async fn wait(&self) {
        let idle = async {
            loop {
                let notified = self.inner.changed.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                if self.is_idle() {
                    return;
                }
                notified.await;
            }
        };
        tokio::select! {
            () = idle => {}
            () = self.inner.stop.wait() => {}
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
}
