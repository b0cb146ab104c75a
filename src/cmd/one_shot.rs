//! A one-shot informer run, for commands that answer from the cache and exit: the same
//! [`Informer`] as `watch` (Reflector, queue (`--fifo`), consumer: list → `replace` → pop through
//! `process_deltas` into the Indexer), stopped as soon as the cache has synced. Whatever the queue, the Indexer ends up
//! with the listed objects (docs/queues.md).
//!
//! No watch is opened: [`ListOnly`] hands the Reflector a watch that never starts, so the cache
//! holds exactly the listed state, whatever changes while the consumer drains the queue. An empty
//! list (no batch to pop) syncs the queue in its `replace`, which [`Informer::synced`] notices.
//!
//! Generic over the [`ListerWatcher`], so a recording can feed it as well as a cluster.

use std::io::{self, Write as _};
use std::sync::Arc;
use std::time::SystemTime;

use anyhow::Context as _;
use futures_util::StreamExt as _;
use kubectl_deltas::Object;
use kubectl_deltas::cache::{
    Batch, Informer, InformerError, InformerQueue, InformerSink, ReflectorConfig, ReflectorError,
    ReflectorEvent, ReflectorEventKind,
};
use kubectl_deltas::render::printable;
use kubectl_deltas::source::{
    ListPage, ListRequest, ListerWatcher, ResourceTarget, SourceError, WatchEvent, WatchRequest,
    WatchStream,
};

/// Runs `lister_watcher` through `informer` until its cache has synced, then stops the
/// Reflector and the consumer. Transient failures are retried as `watch` retries them (a
/// [`RetryNotes`] sink says so on stderr); a failure the Reflector gives up on goes through
/// `failure`.
pub async fn sync<L: ListerWatcher>(
    informer: &Arc<Informer>,
    lister_watcher: L,
    config: ReflectorConfig,
    failure: impl FnOnce(ReflectorError) -> anyhow::Error,
) -> anyhow::Result<()> {
    let lister_watcher = ListOnly {
        inner: lister_watcher,
    };
    let clock = kubectl_deltas::cache::reflector::TokioClock;
    let result = informer
        .run(lister_watcher, config, clock, informer.synced())
        .await;
    let joined = informer.shut_down().await;
    match result {
        Ok(()) if joined => Ok(()),
        Ok(()) => Err(anyhow::anyhow!("the consumer thread panicked")),
        Err(InformerError::Reflector(error)) => Err(failure(error)),
        Err(error) => Err(error).context("cannot run the informer"),
    }
}

/// A [`ListerWatcher`] that lists through `inner` but never starts a plain watch: the watch the
/// Reflector asks for after its list stays pending until the run is stopped. A streaming list
/// (`sendInitialEvents`) goes through, closed right after its initial events.
pub struct ListOnly<L> {
    inner: L,
}

impl<L: ListerWatcher> ListerWatcher for ListOnly<L> {
    async fn list(&self, req: &ListRequest) -> Result<ListPage, SourceError> {
        self.inner.list(req).await
    }

    async fn watch(&self, req: &WatchRequest) -> Result<WatchStream, SourceError> {
        if req.send_initial_events {
            let stream = self.inner.watch(req).await?;
            return Ok(until_initial_events_end(stream));
        }
        std::future::pending().await
    }

    fn describe(&self) -> ResourceTarget {
        self.inner.describe()
    }
}

/// The stream up to and including the bookmark that ends a streaming list's initial events; the
/// Reflector then sees an ordinary end of watch and asks for a plain one.
fn until_initial_events_end(stream: WatchStream) -> WatchStream {
    let mut ended = false;
    stream
        .take_while(move |event| {
            let keep = !ended;
            ended |= matches!(
                event,
                Ok(WatchEvent::Bookmark {
                    initial_events_end: true,
                    ..
                })
            );
            std::future::ready(keep)
        })
        .boxed()
}

/// The sink of a one-shot informer: nothing is shown but why the command is still waiting:
/// each retry after a failure (unless `-q`).
pub struct RetryNotes {
    /// Whether to write the notes.
    pub notes: bool,
}

impl InformerSink for RetryNotes {
    fn batch(&self, _: Batch<Object>, _: SystemTime, _: &dyn InformerQueue<Object>) {}

    fn event(&self, event: ReflectorEvent, _: &dyn InformerQueue<Object>) {
        if !self.notes {
            return;
        }
        if let ReflectorEventKind::Backoff {
            delay,
            phase,
            error,
        } = &event.kind
        {
            // A closed stderr must not stop the run; the retry goes on regardless.
            let note = format!(
                "kubectl-deltas: {phase} failed: {error}; retrying in {:.1}s",
                delay.as_secs_f64()
            );
            let _ = writeln!(io::stderr(), "{}", printable(&note));
        }
    }
}
