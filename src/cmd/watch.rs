//! `watch`: one informer (Reflector → DeltaFIFO → Indexer) whose popped batches and reflector
//! events are written as they happen.
//!
//! Tasks: the Reflector runs on the tokio runtime; the consumer pops on its own thread and writes
//! each batch before popping the next, so a slow stdout makes deltas coalesce in the FIFO rather
//! than pile up in a buffer. Reflector events are written from the Reflector's task; one mutex
//! orders the lines.

use std::io::{self, Stdout};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use anyhow::{Context as _, bail};
use kubectl_deltas::Object;
use kubectl_deltas::cache::{
    Controller, DeltaFifo, Indexer, Reflector, ReflectorEvent, ReflectorEventKind,
    ReflectorObserver,
};
use kubectl_deltas::render::jsonl::JsonLines;
use tokio::sync::Notify;

use super::informer::{add_indices, lister_watcher, reflector_config, reflector_failure};
use super::target;
use crate::cli::{FifoKind, WatchArgs, WatchOutput};

pub fn run(args: WatchArgs) -> anyhow::Result<()> {
    if args.resources.contains(',') {
        bail!("watching several resources at once is not implemented yet (issue #4)");
    }
    if args.view.output != WatchOutput::Jsonl {
        bail!(
            "`-o {}` is not implemented yet (issue #4); use `-o jsonl`",
            format!("{:?}", args.view.output).to_lowercase()
        );
    }
    let view = &args.view;
    if view.since_now || view.handler_delay.0.is_some() || !view.query.is_empty() {
        bail!("--since-now, --handler-delay and --query are not implemented yet (issue #4)");
    }
    if args.informer.fifo != FifoKind::Delta {
        bail!("--fifo real|atomic is not implemented yet (issue #8)");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(watch(args))
}

async fn watch(args: WatchArgs) -> anyhow::Result<()> {
    let indexer = Arc::new(Indexer::new());
    add_indices(&indexer, &args.informer)?;
    let target = target::resolve(&args.access, &args.resources).await?;
    let fifo = Arc::new(
        DeltaFifo::new()
            .known_objects(indexer.clone())
            .emit_delta_type_replaced(!args.informer.legacy_sync),
    );

    let out = Arc::new(Output {
        lines: Mutex::new(JsonLines::new(
            io::stdout(),
            args.view.object,
            args.view.show_secret_data,
        )),
        failed: Mutex::new(None),
    });
    let stop = Arc::new(Stop::default());
    let synced = Arc::new(Synced {
        reported: AtomicBool::new(false),
        started: Instant::now(),
    });

    let reflector = Reflector::new(
        lister_watcher(&target, &args.access, args.name.as_deref()),
        fifo.clone(),
        reflector_config(&args.reflector, &args.informer),
    )
    .observer(EventSink {
        out: out.clone(),
        stop: stop.clone(),
        synced: synced.clone(),
        fifo: fifo.clone(),
        until_synced: args.view.until_synced,
    })
    .known_objects(indexer.clone());

    let consumer = {
        let (out, stop, synced) = (out.clone(), stop.clone(), synced.clone());
        let limits = Limits {
            until_synced: args.view.until_synced,
            max_batches: args.view.max_batches,
        };
        let controller = Controller::new(fifo.clone(), indexer.clone());
        std::thread::Builder::new()
            .name("consumer".into())
            .spawn(move || consume(controller, &out, &stop, &synced, limits))
            .context("cannot start the consumer thread")?
    };

    let shutdown = {
        let stop = stop.clone();
        async move {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = stop.notify.notified() => {}
            }
            stop.requested.store(true, Ordering::SeqCst);
        }
    };
    let result = reflector.run(shutdown).await;
    // The consumer finishes the batch it popped, then sees the FIFO closed or the stop flag.
    stop.requested.store(true, Ordering::SeqCst);
    fifo.close();
    tokio::task::spawn_blocking(move || consumer.join())
        .await
        .context("the consumer thread was lost")?
        .map_err(|_| anyhow::anyhow!("the consumer thread panicked"))?;

    let failed = out.failed.lock().unwrap_or_else(|e| e.into_inner()).take();
    // A closed pipe (`| head`) means the reader has what it wanted: not an error.
    if let Some(error) = failed
        && error.kind() != io::ErrorKind::BrokenPipe
    {
        return Err(error).context("cannot write the output");
    }
    result.map_err(|error| reflector_failure(error, &target))
}

/// Serialized access to stdout, and the first write error (which stops everything).
struct Output {
    lines: Mutex<JsonLines<Stdout>>,
    failed: Mutex<Option<io::Error>>,
}

impl Output {
    fn lines(&self) -> MutexGuard<'_, JsonLines<Stdout>> {
        self.lines.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records a write error and asks everything to stop; `false` if writing failed.
    fn check(&self, written: io::Result<()>, stop: &Stop) -> bool {
        match written {
            Ok(()) => true,
            Err(error) => {
                self.failed
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_or_insert(error);
                stop.request();
                false
            }
        }
    }
}

#[derive(Default)]
struct Stop {
    requested: AtomicBool,
    notify: Notify,
}

impl Stop {
    fn request(&self) {
        self.requested.store(true, Ordering::SeqCst);
        self.notify.notify_one();
    }

    fn requested(&self) -> bool {
        self.requested.load(Ordering::SeqCst)
    }
}

/// Reports `synced` exactly once, from whichever side sees it first.
struct Synced {
    reported: AtomicBool,
    started: Instant,
}

impl Synced {
    /// Writes the `synced` line unless it was written already (`None` then). Callers hold the
    /// output, so a stop they request right after takes effect before any other line.
    fn report(&self, lines: &mut JsonLines<Stdout>, batches: u64) -> Option<io::Result<()>> {
        if self.reported.swap(true, Ordering::SeqCst) {
            return None;
        }
        Some(lines.synced(batches, self.started.elapsed()))
    }
}

struct Limits {
    until_synced: bool,
    max_batches: Option<u64>,
}

fn consume(
    mut controller: Controller<Object>,
    out: &Output,
    stop: &Stop,
    synced: &Synced,
    limits: Limits,
) {
    while !stop.requested() {
        let Some(batch) = controller.process_next() else {
            return;
        };
        // Everything below happens under the output lock, so a stop decided here is in effect
        // before any reflector event could be written after the last line.
        let mut lines = out.lines();
        let mut written = lines.batch(&batch);
        let mut done = limits.max_batches.is_some_and(|max| batch.seq >= max);
        if written.is_ok()
            && controller.fifo().has_synced()
            && let Some(result) = synced.report(&mut lines, batch.seq)
        {
            written = result;
            done |= limits.until_synced;
        }
        if done {
            stop.request();
        }
        drop(lines);
        if !out.check(written, stop) || done {
            return;
        }
    }
}

/// Writes reflector events; also reports `synced` when the first list is empty (no batch will be
/// popped to notice it).
struct EventSink {
    out: Arc<Output>,
    stop: Arc<Stop>,
    synced: Arc<Synced>,
    fifo: Arc<DeltaFifo<Object>>,
    until_synced: bool,
}

impl ReflectorObserver for EventSink {
    fn observe(&self, event: ReflectorEvent) {
        let mut lines = self.out.lines();
        // After the last line a limit asked for, nothing more is written.
        if self.stop.requested() {
            return;
        }
        let mut written = lines.reflector(&event);
        // The first list meets an empty cache, so it queues no tombstones: an empty first list
        // means no initial batch at all, and nothing for the consumer to notice the sync by.
        if written.is_ok()
            && let ReflectorEventKind::ListDone { items: 0, .. } = event.kind
            && !self.fifo.stats().populated
            && let Some(result) = self.synced.report(&mut lines, 0)
        {
            written = result;
            if self.until_synced {
                self.stop.request();
            }
        }
        drop(lines);
        self.out.check(written, &self.stop);
    }
}
