//! A one-shot informer run, for commands that answer from the cache and exit: the same Reflector,
//! queue (`--fifo`) and consumer as `watch` (list → `replace` → pop through `process_deltas` into
//! the Indexer), stopped as soon as the cache has synced. Whatever the queue, the Indexer ends up
//! with the listed objects (docs/queues.md).
//!
//! No watch is opened: [`ListOnly`] hands the Reflector a watch that never starts, so the cache
//! holds exactly the listed state, whatever changes while the consumer drains the queue. The
//! Reflector asking for that watch is also the sign that its list is in the queue, which is how an
//! empty list (no batch to pop) is noticed.
//!
//! Generic over the [`ListerWatcher`], so a recording can feed it as well as a cluster.

use std::io::{self, Write as _};
use std::sync::Arc;

use anyhow::Context as _;
use futures_util::StreamExt as _;
use kubectl_deltas::Object;
use kubectl_deltas::cache::{
    Controller, Indexer, Queue, Reflector, ReflectorConfig, ReflectorError, ReflectorEvent,
    ReflectorEventKind, ReflectorObserver,
};
use kubectl_deltas::render::printable;
use kubectl_deltas::source::{
    ListPage, ListRequest, ListerWatcher, ResourceTarget, SourceError, WatchEvent, WatchRequest,
    WatchStream,
};
use tokio::sync::Notify;

use super::informer::QueueChoice;

/// Runs `lister_watcher` through a Reflector and the chosen queue into `indexer` until the cache
/// has synced, then stops everything. Transient failures are retried as `watch` retries them (each
/// retry is noted on stderr with `notes`); a failure the Reflector gives up on goes through
/// `failure`.
pub async fn sync<L: ListerWatcher>(
    lister_watcher: L,
    config: ReflectorConfig,
    indexer: Arc<Indexer<Object>>,
    queue: QueueChoice,
    notes: bool,
    failure: impl FnOnce(ReflectorError) -> anyhow::Error,
) -> anyhow::Result<()> {
    let fifo = queue.build(indexer.clone());
    // Woken when the list is in the queue and when the consumer has popped its last batch.
    let progress = Arc::new(Notify::new());
    let lister_watcher = ListOnly {
        inner: lister_watcher,
        listed: progress.clone(),
    };
    let reflector =
        Reflector::new(lister_watcher, fifo.clone(), config).observer(RetryNotes { notes });

    let controller = Controller::new(fifo.clone(), indexer).batch_pop(queue.batch_pop);
    let consume = {
        let progress = progress.clone();
        move || drain(controller, &progress)
    };
    let synced = {
        let fifo = fifo.clone();
        async move {
            while !fifo.has_synced() {
                progress.notified().await;
            }
        }
    };
    with_consumer(&fifo, consume, reflector.run(synced))
        .await?
        .map_err(failure)
}

/// Runs `consume` on a consumer thread while `run` runs, then closes the queue (the consumer
/// drains what is left and returns) and joins the thread; returns `run`'s output.
pub async fn with_consumer<T>(
    fifo: &Arc<dyn Queue<Object>>,
    consume: impl FnOnce() + Send + 'static,
    run: impl Future<Output = T>,
) -> anyhow::Result<T> {
    let consumer = std::thread::Builder::new()
        .name("consumer".into())
        .spawn(consume)
        .context("cannot start the consumer thread")?;
    let output = run.await;
    fifo.close();
    tokio::task::spawn_blocking(move || consumer.join())
        .await
        .context("the consumer thread was lost")?
        .map_err(|_| anyhow::anyhow!("the consumer thread panicked"))?;
    Ok(output)
}

/// Pops batches into the indexer until the initial list is all in, or the queue is closed.
fn drain(mut controller: Controller<Object, dyn Queue<Object>>, progress: &Notify) {
    while controller.process_next().is_some() {
        if controller.fifo().has_synced() {
            progress.notify_one();
            return;
        }
    }
}

/// A [`ListerWatcher`] that lists through `inner` but never starts a plain watch: the watch the
/// Reflector asks for after its list stays pending until the run is stopped. A streaming list
/// (`sendInitialEvents`) goes through, closed right after its initial events.
pub struct ListOnly<L> {
    inner: L,
    /// Notified when the Reflector asks for a plain watch, that is once its list is in the queue.
    listed: Arc<Notify>,
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
        self.listed.notify_one();
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

/// Says on stderr why a one-shot command is still waiting: each retry after a failure (unless
/// `-q`).
struct RetryNotes {
    notes: bool,
}

impl ReflectorObserver for RetryNotes {
    fn observe(&self, event: ReflectorEvent) {
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
