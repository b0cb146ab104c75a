//! [`Idle`]: whether the consumer side of a pipeline has caught up: everything queued was popped,
//! applied and rendered: what each informer's [`finish`](Informer::finish) waits for before a
//! session whose sources ran dry ends (the end of a recording); a source may wait for it so as not
//! to run ahead of the consumers.
//!
//! A stopped session never becomes idle (its consumers stop popping, so its queues may keep what
//! they hold): the session's stop request ends every wait here, whoever requested it and whenever.

use std::sync::{Arc, Mutex};

use kubectl_deltas::cache::{ConsumerGroup, Informer};

use super::stop::Stop;

/// A cheap, cloneable handle on the consumers' progress. The pipeline is idle when every queue is
/// empty and no consumer holds a batch it has not finished handling (rendering it, and a plain
/// informer's handler inside the pop).
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
    /// The session's consumers: their batches in hand, and a wake-up when one is handled.
    group: Arc<ConsumerGroup>,
    /// The session's stop: nothing becomes idle after it.
    stop: Arc<Stop>,
    informers: Mutex<Vec<Arc<Informer>>>,
}

impl std::fmt::Debug for Idle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Idle")
            .field("in_hand", &self.inner.group.in_hand())
            .field("stopped", &self.is_stopped())
            .finish()
    }
}

impl Idle {
    /// A handle on the consumers of `group`, in the session that `stop` ends, not yet attached to
    /// its informers (idle: nothing is queued).
    pub(super) fn new(group: Arc<ConsumerGroup>, stop: Arc<Stop>) -> Self {
        Idle {
            inner: Arc::new(Inner {
                group,
                stop,
                informers: Mutex::default(),
            }),
        }
    }

    /// Whether every queue is empty and no batch is being handled.
    #[allow(dead_code, reason = "tests pace their sources with it")]
    pub fn is_idle(&self) -> bool {
        // Queues first: a consumer counts its batch in hand under the queue's lock as it pops, so
        // a queue seen empty here means its last batch is already counted below.
        let informers = self
            .inner
            .informers
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        informers.iter().all(|i| i.queue_is_empty()) && self.inner.group.in_hand() == 0
    }

    /// Batches popped and not yet handled; read without any queue's lock.
    #[allow(dead_code, reason = "tests pace their sources with it")]
    pub fn in_hand(&self) -> usize {
        self.inner.group.in_hand()
    }

    /// Whether the session was told to stop.
    pub fn is_stopped(&self) -> bool {
        self.inner.stop.requested()
    }

    /// Completes once the pipeline is idle, or the session was told to stop.
    #[allow(dead_code, reason = "tests pace their sources with it")]
    pub async fn wait(&self) {
        tokio::select! {
            () = self.inner.group.wait_until(|| self.is_idle()) => {}
            () = self.inner.stop.wait() => {}
        }
    }

    /// The session's consumers.
    pub(super) fn group(&self) -> Arc<ConsumerGroup> {
        self.inner.group.clone()
    }

    pub(super) fn attach(&self, informers: Vec<Arc<Informer>>) {
        *self
            .inner
            .informers
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = informers;
    }
}
