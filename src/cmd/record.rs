//! `record RESOURCE [NAME]`: the [`pipeline`](super::pipeline) of `watch` on a live cluster, with
//! every answer the Reflector gets written as a recording ([`Recorder`], `docs/recording.md`) and
//! the timeline rendered on stderr, so that `-f -` can put the recording on stdout.
//!
//! The handlers and controllers of `--handler` and `--controller` are registered on the informer
//! as `watch` registers them, and their rows are part of the stderr timeline; those flags go into
//! the recording's header (`replayWith`), so that `replay FILE` runs them again.
//!
//! The pipeline's resyncs (`--resync`) become `RESYNC` lines through the source's observer.
//! Ctrl-C and `--duration` end the session normally; the file is complete at every line (each is
//! flushed), and a `.gz` file gets its gzip trailer at the end. The file is created when the
//! server first answers a request successfully ([`CreateOnSuccess`]): a selector the server
//! refuses, a 403 or an unreachable cluster leave no file behind, and an existing one untouched.
//! It is an [`OutputFile`], renamed into place once it holds that first answer: an existing one
//! (`--force`) is replaced by a recording, never emptied first.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use anyhow::anyhow;
use flate2::Compression;
use flate2::write::GzEncoder;
use futures_util::FutureExt as _;
use kubectl_deltas::Object;
use kubectl_deltas::cache::reflector::{NoObserver, TokioClock};
use kubectl_deltas::source::output_file::OutputFile;
use kubectl_deltas::source::recording::{InformerSlot, RecordOptions, RecordedResource, Recorder};
use kubectl_deltas::source::{
    ListPage, ListRequest, ListerWatcher, ResourceTarget, SourceError, WatchRequest, WatchStream,
};
use tokio::sync::Notify;

use super::informer::{lister_watcher, reflector_config, reflector_failure};
use super::pipeline::{Hooks, Pipeline, PipelineError, Source, stdout_reader_gone};
use super::plan::{OutputPlan, Plan};
use super::target::{self, Target};
use crate::cli::exit::{Exit, WithExit};
use crate::cli::given::given_flags;
use crate::cli::type_name::resource_and_name;
use crate::cli::{GlobalArgs, RecordArgs};

pub fn run(mut args: RecordArgs, global: &GlobalArgs) -> anyhow::Result<()> {
    super::plan::refuse::compare_on_record(args.compare.as_deref())?;
    // Every flag is checked before the cluster is contacted.
    (args.resource, args.name) = resource_and_name("record", &args.resource, args.name.as_deref())
        .map_err(anyhow::Error::msg)
        .exit_with(Exit::Usage)?;
    if args.resource.contains(',') {
        return Err(anyhow!(
            "record takes one resource per recording, not {:?}: record each into a file of its \
             own, started together, and replay them together (replay a.jsonl b.jsonl)",
            args.resource
        ))
        .exit_with(Exit::Usage);
    }
    let destination = Destination::new(&args.file, args.force)?;
    let output = OutputPlan::stderr_timeline(global, args.quiet, &args.handling)?;
    let mut plan = Plan::resolve(
        output,
        &args.informer,
        args.store.store,
        args.reflector.watch_list,
        |profile| reflector_config(&args.reflector, &args.informer, profile),
    )?;
    plan.resolve_owns(&[], "a recording")?;
    plan.refuse_outside_metadata_queries(args.reflector.metadata_only)?;
    let runtime = super::runtime()?;
    super::run_on_worker(&runtime, record(args, plan, destination))
}

async fn record(args: RecordArgs, plan: Plan, destination: Destination) -> anyhow::Result<()> {
    let target = target::resolve(&args.access, &args.resource).await?;
    let secrets = Object::is_secret_resource(&target.resource.api_resource());
    plan.refuse_secret_queries(secrets, args.show_secret_data)?;
    let recorder = Recorder::new(
        destination.clone(),
        RecordedResource::new(&target.resource.api_resource(), target.resource.namespaced)
            .with_names(
                target.resource.singular.clone(),
                target.resource.short_names.clone(),
            ),
        target.namespace.clone(),
        RecordOptions {
            show_secret_data: args.show_secret_data,
            metadata_only: args.reflector.metadata_only,
            replay_with: replay_with(),
            ..RecordOptions::default()
        },
    )
    .map_err(|e| destination.write_error(e))?;
    // The informer the session builds: the lines carry how far its queue coalesced.
    let informer = Arc::new(InformerSlot::default());
    recorder.count_coalesced(informer.clone());
    let source = Source {
        name: target.resource.qualified_name(),
        lister_watcher: CreateOnSuccess {
            inner: recorder.tee(lister_watcher(
                &target,
                &args.access,
                &args.reflector,
                args.name.as_deref(),
            )),
            destination: destination.clone(),
        },
        hooks: Hooks {
            observer: Some(Arc::new(recorder.observer(NoObserver))),
            counted: Some(informer),
            ..Hooks::default()
        },
    };
    let duration = args.duration.0;
    let shutdown = {
        let (recorder, destination) = (recorder.clone(), destination.clone());
        async move {
            let elapsed = async {
                match duration {
                    Some(d) => tokio::time::sleep(d).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = elapsed => {}
                // A full disk or a closed pipe: nothing more can be recorded.
                _ = recorder.failed() => {}
                () = destination.creation_failed() => {}
            }
        }
    };
    let timeline: Box<dyn Write + Send> = if args.quiet {
        Box::new(io::sink())
    } else {
        Box::new(io::stderr())
    };
    let to_stdout = destination.is_stdout();
    let reader_gone = async move {
        if to_stdout {
            stdout_reader_gone().await;
        } else {
            std::future::pending().await
        }
    };
    let result = Pipeline::new(plan)
        .run_into(vec![source], TokioClock, shutdown, timeline, reader_gone)
        .await;

    let failed = recorder.failed().now_or_never();
    drop(recorder.finish());
    match (destination.finish(), failed) {
        // The recorder's error is then only the echo of this one.
        (Err(Ended::NotCreated(error)), _) => return Err(error),
        (_, Some(error)) if error.kind() != io::ErrorKind::BrokenPipe => {
            return Err(destination.write_error(io::Error::new(error.kind(), error.to_string())));
        }
        (Err(Ended::WriteFailed(error)), _) => return Err(destination.write_error(error)),
        (Ok(false), _) if result.is_ok() => {
            let _ = writeln!(
                io::stderr(),
                "kubectl-deltas: note: no request to the server succeeded, so {} was not created",
                destination.name
            );
        }
        (Ok(_), _) => {}
    }
    match result {
        Ok(_) => Ok(()),
        Err(error) => Err(failure(error, &target)),
    }
}

/// The flags of `record` that choose its handlers and controllers and what the timeline shows of
/// them (`HandlerViewArgs`).
pub(super) const HANDLER_FLAGS: [&str; 5] = [
    "handler_delay",
    "handlers",
    "controllers",
    "informer_kind",
    "view_kind",
];

/// The informer flags that shape what those handlers receive: the queue, its pops and its
/// deltas, and the indices. Not `--resync`: a replay reads the recorded informer's period from
/// the `RESYNC` lines, and, without `--resync`, takes those lines as its ticks (with it, it would
/// compute ticks of its own, which drift from the recorded ones).
pub(super) const INFORMER_FLAGS: [&str; 6] = [
    "client_go",
    "fifo",
    "batch_pop",
    "legacy_sync",
    "unlock_while_processing",
    "indices",
];

/// The header's `replayWith`: when handlers or controllers were given, those flags, with the
/// informer flags given, so that `replay FILE` runs the same handlers and controllers on the
/// same queue (docs/recording.md); nothing otherwise, and a replay runs as it always did.
fn replay_with() -> Vec<String> {
    // main has already refused a command line that does not parse. Only the flags above are
    // written, none of them a secret; redacted all the same, so that no secret typed on the
    // command line can reach a recording, whatever flag the list comes to hold.
    let argv = crate::cli::redact::redacted_args(&std::env::args_os().collect::<Vec<_>>());
    let Ok(argv) = crate::cli::with_watch_shorthand(argv) else {
        return Vec::new();
    };
    let handling = given_flags(&argv, "record", &HANDLER_FLAGS);
    if handling.is_empty() {
        return Vec::new();
    }
    let ids: Vec<&str> = HANDLER_FLAGS
        .iter()
        .chain(&INFORMER_FLAGS)
        .copied()
        .collect();
    given_flags(&argv, "record", &ids)
}

fn failure(error: PipelineError, target: &Target) -> anyhow::Error {
    match error {
        PipelineError::Reflector { error, .. } => reflector_failure(error, target),
        other => anyhow::Error::new(other),
    }
}

/// Where the recording goes: stdout, a file, or a gzip-compressed file (`.gz`). Shared with the
/// [`Recorder`], so that the gzip stream can be finished once the recorder lets go of it.
#[derive(Clone)]
struct Destination {
    name: String,
    sink: Arc<Mutex<Sink>>,
    /// Notified when the file could not be created.
    not_created: Arc<Notify>,
}

enum Sink {
    Stdout(io::Stdout),
    /// The file, before the first successful answer: what is written waits here.
    Pending {
        path: PathBuf,
        overwrite: bool,
        buffer: Vec<u8>,
    },
    File(File),
    Gzip(GzEncoder<File>),
    /// The file could not be created, for this reason.
    NotCreated(io::Error),
    Finished,
}

/// Why a recording did not end well.
enum Ended {
    /// The file could not be created (the error has its context).
    NotCreated(anyhow::Error),
    /// Writing or finishing it failed.
    WriteFailed(io::Error),
}

impl Destination {
    /// `-` for stdout, else a file created by [`create`](Self::create). An existing file is a
    /// usage error unless `overwrite` (`--force`): a recording is often the only copy of what a
    /// cluster did.
    fn new(path: &Path, overwrite: bool) -> anyhow::Result<Self> {
        let (name, sink) = if path.as_os_str() == "-" {
            ("<stdout>".to_owned(), Sink::Stdout(io::stdout()))
        } else {
            let name = path.display().to_string();
            if !overwrite && path.symlink_metadata().is_ok() {
                return Err(anyhow!(
                    "{name} already exists; pass --force to overwrite it, or choose another -f"
                ))
                .exit_with(Exit::Usage);
            }
            let sink = Sink::Pending {
                path: path.to_owned(),
                overwrite,
                buffer: Vec::new(),
            };
            (name, sink)
        };
        Ok(Destination {
            name,
            sink: Arc::new(Mutex::new(sink)),
            not_created: Arc::new(Notify::new()),
        })
    }

    /// Creates the file, if not done yet, with what was written so far.
    fn create(&self) {
        let mut sink = self.lock();
        let Sink::Pending {
            path,
            overwrite,
            buffer,
        } = &mut *sink
        else {
            return;
        };
        let created = (|| {
            // Written under a temporary name and renamed once it holds what came so far: an
            // existing file (`--force`) is replaced by a recording, never emptied first.
            let out = OutputFile::create(path)?;
            let file = out.file().try_clone()?;
            // `.gz` in any case: `X.JSONL.GZ` is a gzip file as much as `x.jsonl.gz`.
            let gzip = path
                .extension()
                .is_some_and(|ext| ext.eq_ignore_ascii_case("gz"));
            let mut sink = if gzip {
                Sink::Gzip(GzEncoder::new(file, Compression::default()))
            } else {
                Sink::File(file)
            };
            sink.write_all(buffer)?;
            sink.flush()?;
            if *overwrite {
                out.commit()?;
            } else {
                // It did not exist at the start: if it does now, someone else wrote it.
                out.commit_new()?;
            }
            Ok(sink)
        })();
        *sink = match created {
            Ok(out) => out,
            Err(error) => {
                self.not_created.notify_one();
                Sink::NotCreated(error)
            }
        };
    }

    /// Completes once the file could not be created.
    async fn creation_failed(&self) {
        loop {
            if matches!(*self.lock(), Sink::NotCreated(_)) {
                return;
            }
            self.not_created.notified().await;
        }
    }

    fn is_stdout(&self) -> bool {
        matches!(*self.lock(), Sink::Stdout(_))
    }

    fn lock(&self) -> MutexGuard<'_, Sink> {
        self.sink.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Flushes, and writes the gzip trailer; nothing can be written afterwards. `Ok(false)`: the
    /// file was never created, nothing having succeeded.
    fn finish(&self) -> Result<bool, Ended> {
        let finished = match std::mem::replace(&mut *self.lock(), Sink::Finished) {
            Sink::Stdout(mut out) => out.flush(),
            Sink::File(mut file) => file.flush(),
            Sink::Gzip(gzip) => gzip.finish().map(drop),
            Sink::Pending { .. } => return Ok(false),
            Sink::NotCreated(error) => {
                return Err(Ended::NotCreated(
                    anyhow!(error).context(format!("cannot create the recording {}", self.name)),
                ));
            }
            Sink::Finished => Ok(()),
        };
        finished.map(|()| true).map_err(Ended::WriteFailed)
    }

    fn write_error(&self, error: io::Error) -> anyhow::Error {
        anyhow!(error).context(format!("cannot write the recording {}", self.name))
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Stdout(out) => out.write(buf),
            Sink::Pending { buffer, .. } => buffer.write(buf),
            Sink::File(file) => file.write(buf),
            Sink::Gzip(gzip) => gzip.write(buf),
            Sink::NotCreated(_) => Err(io::Error::other("the recording could not be created")),
            Sink::Finished => Err(io::Error::other("the recording is finished")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Stdout(out) => out.flush(),
            Sink::File(file) => file.flush(),
            Sink::Gzip(gzip) => gzip.flush(),
            Sink::Pending { .. } | Sink::NotCreated(_) | Sink::Finished => Ok(()),
        }
    }
}

impl Write for Destination {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.lock().write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.lock().flush()
    }
}

/// The recording's [`ListerWatcher`]: creates the file once the server has answered a request
/// successfully, the recorded answer included (the recorder wrapped inside has written it).
struct CreateOnSuccess<L> {
    inner: L,
    destination: Destination,
}

impl<L: ListerWatcher> ListerWatcher for CreateOnSuccess<L> {
    async fn list(&self, req: &ListRequest) -> Result<ListPage, SourceError> {
        let page = self.inner.list(req).await?;
        self.destination.create();
        Ok(page)
    }

    async fn watch(&self, req: &WatchRequest) -> Result<WatchStream, SourceError> {
        let stream = self.inner.watch(req).await?;
        self.destination.create();
        Ok(stream)
    }

    fn describe(&self) -> ResourceTarget {
        self.inner.describe()
    }
}
