//! `record RESOURCE [NAME]`: the [`pipeline`](super::pipeline) of `watch` on a live cluster, with
//! every answer the Reflector gets written as a recording ([`Recorder`], `docs/recording.md`) and
//! the timeline rendered on stderr, so that `-f -` can put the recording on stdout.
//!
//! The pipeline's resyncs (`--resync`) become `RESYNC` lines through the source's observer.
//! Ctrl-C and `--duration` end the session normally; the file is complete at every line (each is
//! flushed), and a `.gz` file gets its gzip trailer at the end.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use anyhow::anyhow;
use flate2::Compression;
use flate2::write::GzEncoder;
use futures_util::FutureExt as _;
use kubectl_deltas::cache::reflector::{NoObserver, TokioClock};
use kubectl_deltas::source::recording::{RecordOptions, RecordedResource, Recorder};

use super::informer::{lister_watcher, reflector_config, reflector_failure};
use super::pipeline::{Hooks, Pipeline, PipelineError, Settings, Source, View, stdout_reader_gone};
use super::target::{self, Target};
use crate::cli::{GlobalArgs, RecordArgs};

pub fn run(args: RecordArgs, global: &GlobalArgs) -> anyhow::Result<()> {
    // Every flag is checked before the cluster is contacted.
    let settings = Settings::new(
        View::stderr_timeline(global, args.quiet),
        &args.informer,
        reflector_config(&args.reflector, &args.informer),
    )?;
    let runtime = super::runtime()?;
    runtime.block_on(record(args, settings))
}

async fn record(args: RecordArgs, settings: Settings) -> anyhow::Result<()> {
    let target = target::resolve(&args.access, &args.resource).await?;
    // Created once the resource is known to exist: a typo leaves no empty file behind.
    let destination = Destination::open(&args.file)?;
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
            ..RecordOptions::default()
        },
    )
    .map_err(|e| destination.write_error(e))?;
    let source = Source {
        name: target.resource.qualified_name(),
        lister_watcher: recorder.tee(lister_watcher(&target, &args.access, args.name.as_deref())),
        hooks: Hooks {
            observer: Some(Arc::new(recorder.observer(NoObserver))),
            ..Hooks::default()
        },
    };
    let duration = args.duration.0;
    let shutdown = {
        let recorder = recorder.clone();
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
    let result = Pipeline::new(settings)
        .run_into(vec![source], TokioClock, shutdown, timeline, reader_gone)
        .await;

    let failed = recorder.failed().now_or_never();
    drop(recorder.finish());
    let finished = destination.finish();
    match failed {
        Some(error) if error.kind() != io::ErrorKind::BrokenPipe => {
            return Err(destination.write_error(io::Error::new(error.kind(), error.to_string())));
        }
        _ => finished.map_err(|e| destination.write_error(e))?,
    }
    match result {
        Ok(_) => Ok(()),
        Err(error) => Err(failure(error, &target)),
    }
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
}

enum Sink {
    Stdout(io::Stdout),
    File(File),
    Gzip(GzEncoder<File>),
    Finished,
}

impl Destination {
    fn open(path: &Path) -> anyhow::Result<Self> {
        if path.as_os_str() == "-" {
            return Ok(Destination {
                name: "<stdout>".into(),
                sink: Arc::new(Mutex::new(Sink::Stdout(io::stdout()))),
            });
        }
        let name = path.display().to_string();
        let file = File::create(path)
            .map_err(|e| anyhow!(e).context(format!("cannot create the recording {name}")))?;
        // `.gz` in any case: `X.JSONL.GZ` is a gzip file as much as `x.jsonl.gz`.
        let gzip = path
            .extension()
            .is_some_and(|ext| ext.eq_ignore_ascii_case("gz"));
        let sink = if gzip {
            Sink::Gzip(GzEncoder::new(file, Compression::default()))
        } else {
            Sink::File(file)
        };
        Ok(Destination {
            name,
            sink: Arc::new(Mutex::new(sink)),
        })
    }

    fn is_stdout(&self) -> bool {
        matches!(*self.lock(), Sink::Stdout(_))
    }

    fn lock(&self) -> MutexGuard<'_, Sink> {
        self.sink.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Flushes, and writes the gzip trailer; nothing can be written afterwards.
    fn finish(&self) -> io::Result<()> {
        match std::mem::replace(&mut *self.lock(), Sink::Finished) {
            Sink::Stdout(mut out) => out.flush(),
            Sink::File(mut file) => file.flush(),
            Sink::Gzip(gzip) => gzip.finish().map(drop),
            Sink::Finished => Ok(()),
        }
    }

    fn write_error(&self, error: io::Error) -> anyhow::Error {
        anyhow!(error).context(format!("cannot write the recording {}", self.name))
    }
}

impl Write for Destination {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut *self.lock() {
            Sink::Stdout(out) => out.write(buf),
            Sink::File(file) => file.write(buf),
            Sink::Gzip(gzip) => gzip.write(buf),
            Sink::Finished => Err(io::Error::other("the recording is finished")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut *self.lock() {
            Sink::Stdout(out) => out.flush(),
            Sink::File(file) => file.flush(),
            Sink::Gzip(gzip) => gzip.flush(),
            Sink::Finished => Ok(()),
        }
    }
}
