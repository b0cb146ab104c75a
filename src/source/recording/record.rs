//! [`Recorder`]: writes what a live Reflector is told, as a recording.

use std::fmt;
use std::io::{self, Write};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use tokio::sync::watch;

use super::format::{Header, LineRef, LiveNotes, RecordedResource, RequestKind};
use super::turns::Quiescence;
use super::writer::RecordingWriter;
use crate::cache::reflector::{
    Clock, ReflectorEvent, ReflectorEventKind, ReflectorObserver, TokioClock,
};
use crate::source::{
    ListPage, ListRequest, ListerWatcher, RandomChoice, ResourceTarget, SourceError, WatchEvent,
    WatchRequest, WatchStream,
};

/// How a [`Recorder`] records.
#[derive(Clone)]
pub struct RecordOptions {
    /// Keep Secret `data`/`stringData` values (redacted by default).
    pub show_secret_data: bool,
    /// The time `t` and `startedAt` are read from (tokio's by default).
    pub clock: Arc<dyn Clock>,
    /// The lister-watcher asks for metadata only (`--metadata-only`): the header says so.
    pub metadata_only: bool,
    /// The `replay` flags the recording is meant to be replayed with: the header's `replayWith`
    /// (none when empty).
    pub replay_with: Vec<String>,
}

impl Default for RecordOptions {
    fn default() -> Self {
        RecordOptions {
            show_secret_data: false,
            clock: Arc::new(TokioClock),
            metadata_only: false,
            replay_with: Vec::new(),
        }
    }
}

impl fmt::Debug for RecordOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordOptions")
            .field("show_secret_data", &self.show_secret_data)
            .field("metadata_only", &self.metadata_only)
            .field("replay_with", &self.replay_with)
            .finish_non_exhaustive()
    }
}

/// Writes a recording of a live Reflector: [`tee`](Recorder::tee) wraps its `ListerWatcher` so
/// that every answer (list pages, watch events, closed watches, failed requests) becomes a line,
/// and [`resync`](Recorder::resync) (or the [`observer`](Recorder::observer) adapter) adds the
/// FIFO's resyncs. Cheap to clone; all clones write to the same recording.
///
/// Lines are written in the order the Reflector receives the answers, with `t` the milliseconds
/// since the recording started, to the microsecond. A write error (a full disk, a closed pipe) stops the recording
/// (later lines are dropped) and is reported through [`failed`](Recorder::failed); the Reflector
/// is not disturbed.
#[derive(Clone)]
pub struct Recorder {
    inner: Arc<Inner>,
}

struct Inner {
    writer: Mutex<Option<RecordingWriter<Box<dyn Write + Send>>>>,
    clock: Arc<dyn Clock>,
    start: Instant,
    failed: watch::Sender<Option<Arc<io::Error>>>,
    /// The live queue whose coalesced count the lines carry ([`Recorder::count_coalesced`]).
    queue: OnceLock<Arc<dyn Quiescence>>,
    live: Mutex<LiveState>,
}

/// What the next lines carry of the live session.
#[derive(Default)]
struct LiveState {
    /// The backoff delay the Reflector chose, until the answer to its next request is written.
    backoff: Option<Duration>,
    /// The coalesced count the last line written carried (or had from the one before).
    coalesced: Option<u64>,
}

/// What a line is, for what it carries of the live session.
#[derive(Clone, Copy)]
enum Answers {
    /// The answer to a request: a list page, a failed request, or a watch's first line (which
    /// carries the watch's timeout).
    Request { timeout_seconds: Option<u32> },
    /// Any other line: a watch's later lines, a resync.
    Nothing,
}

impl fmt::Debug for Recorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recorder").finish_non_exhaustive()
    }
}

impl Recorder {
    /// Starts a recording of `resource` in `namespace` (`None`: all namespaces) into `out`, and
    /// writes its header, with `startedAt` = now.
    pub fn new(
        out: impl Write + Send + 'static,
        resource: RecordedResource,
        namespace: Option<String>,
        options: RecordOptions,
    ) -> io::Result<Recorder> {
        let header = Header {
            resource,
            namespace,
            started_at: options.clock.wall(),
            metadata_only: options.metadata_only,
            replay_with: options.replay_with,
        };
        let out: Box<dyn Write + Send> = Box::new(out);
        let writer = RecordingWriter::new(out, &header)?.show_secret_data(options.show_secret_data);
        Ok(Recorder {
            inner: Arc::new(Inner {
                writer: Mutex::new(Some(writer)),
                start: options.clock.now(),
                clock: options.clock,
                failed: watch::Sender::new(None),
                queue: OnceLock::new(),
                live: Mutex::new(LiveState::default()),
            }),
        })
    }

    /// Wraps `lister_watcher` so that its answers are recorded.
    pub fn tee<L: ListerWatcher>(&self, lister_watcher: L) -> RecordingTee<L> {
        RecordingTee {
            inner: lister_watcher,
            recorder: self.clone(),
        }
    }

    /// Makes every line carry how many deltas `queue` (the recorded informer's) had coalesced
    /// before it, where that changed (`coalesced`): where the live pops fell, which a replay
    /// compares with its own. Set it before the Reflector starts; a second one is ignored.
    pub fn count_coalesced(&self, queue: Arc<dyn Quiescence>) {
        let _ = self.inner.queue.set(queue);
    }

    /// The Reflector backs off `delay` before its next request: the line answering that request
    /// carries it (`backoff`), and a replay waits that, not a delay of its own drawing. Called by
    /// the [`observer`](Recorder::observer) adapter.
    pub fn backoff(&self, delay: Duration) {
        self.live().backoff = Some(delay);
    }

    fn live(&self) -> MutexGuard<'_, LiveState> {
        self.inner.live.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records a resync of the FIFO, now. Call it right after `fifo.resync()`, from the task
    /// that runs the Reflector (which [`observer`](Recorder::observer) does), so that it lands
    /// between the same answers as the resync itself.
    pub fn resync(&self) {
        self.write(LineRef::Resync, Answers::Nothing);
    }

    /// Wraps a Reflector observer: resync events are recorded as `RESYNC` lines and backoff
    /// delays on the line after them ([`backoff`](Recorder::backoff)), then every event goes on
    /// to `inner`.
    pub fn observer<O: ReflectorObserver>(&self, inner: O) -> ResyncRecorder<O> {
        ResyncRecorder {
            recorder: self.clone(),
            inner,
        }
    }

    /// Completes with the first write error.
    pub async fn failed(&self) -> Arc<io::Error> {
        let mut rx = self.inner.failed.subscribe();
        loop {
            if let Some(error) = rx.borrow_and_update().clone() {
                return error;
            }
            if rx.changed().await.is_err() {
                return std::future::pending().await;
            }
        }
    }

    /// Stops recording and returns the output (to finish a compressor, say); `None` if another
    /// clone already did, or a write failed.
    pub fn finish(&self) -> Option<Box<dyn Write + Send>> {
        self.lock().take().map(RecordingWriter::into_inner)
    }

    fn lock(&self) -> MutexGuard<'_, Option<RecordingWriter<Box<dyn Write + Send>>>> {
        self.inner.writer.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What `line` carries of the live session: the watch's timeout and the backoff before the
    /// request it answers, and the queue's coalesced count where it changed.
    fn live_notes(&self, answers: Answers) -> LiveNotes {
        let mut live = self.live();
        let mut notes = LiveNotes::default();
        if let Answers::Request { timeout_seconds } = answers {
            notes.timeout_seconds = timeout_seconds;
            notes.backoff = live.backoff.take();
        }
        let coalesced = self.inner.queue.get().and_then(|queue| queue.coalesced());
        if coalesced.is_some() && coalesced != live.coalesced {
            notes.coalesced = coalesced;
            live.coalesced = coalesced;
        }
        notes
    }

    fn write(&self, line: LineRef<'_>, answers: Answers) {
        // To the microsecond: events a millisecond apart or less are still apart in a replay.
        let elapsed = self
            .inner
            .clock
            .now()
            .saturating_duration_since(self.inner.start);
        let mut writer = self.lock();
        let Some(w) = writer.as_mut() else { return };
        let notes = self.live_notes(answers);
        if let Err(error) = w.write_ref(elapsed, line, notes) {
            *writer = None;
            tracing::warn!("recording stopped: {error}");
            self.inner.failed.send_replace(Some(Arc::new(error)));
        }
    }
}

/// A `ListerWatcher` that records every answer of the one it wraps; made by [`Recorder::tee`].
pub struct RecordingTee<L> {
    inner: L,
    recorder: Recorder,
}

impl<L: fmt::Debug> fmt::Debug for RecordingTee<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordingTee")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl<L: ListerWatcher> ListerWatcher for RecordingTee<L> {
    async fn list(&self, req: &ListRequest) -> Result<ListPage, SourceError> {
        let result = self.inner.list(req).await;
        let answers = Answers::Request {
            timeout_seconds: None,
        };
        match &result {
            Ok(page) => self.recorder.write(LineRef::List(page), answers),
            Err(error) => self
                .recorder
                .write(LineRef::RequestFailed(RequestKind::List, error), answers),
        }
        result
    }

    async fn watch(&self, req: &WatchRequest) -> Result<WatchStream, SourceError> {
        let recorder = self.recorder.clone();
        let answers = Answers::Request {
            timeout_seconds: Some(req.timeout_seconds),
        };
        match self.inner.watch(req).await {
            Ok(stream) => Ok(recorded_stream(stream, recorder, answers)),
            Err(error) => {
                recorder.write(LineRef::RequestFailed(RequestKind::Watch, &error), answers);
                Err(error)
            }
        }
    }

    async fn recorded_choice(&self, choice: RandomChoice) -> Option<Duration> {
        self.inner.recorded_choice(choice).await
    }

    fn describe(&self) -> ResourceTarget {
        self.inner.describe()
    }
}

/// Records each event as the Reflector receives it, and the end of the stream; the first line
/// answers the watch request (`first`). After an ERROR event or a broken stream the Reflector
/// stops reading, so nothing more is recorded for it.
fn recorded_stream(stream: WatchStream, recorder: Recorder, first: Answers) -> WatchStream {
    futures_util::stream::unfold(Some((stream, recorder, first)), |state| async move {
        let (mut stream, recorder, answers) = state?;
        match stream.next().await {
            Some(Ok(event)) => {
                recorder.write(LineRef::Event(&event), answers);
                let ended = matches!(event, WatchEvent::Error(_));
                let next = (!ended).then_some((stream, recorder, Answers::Nothing));
                Some((Ok(event), next))
            }
            Some(Err(error)) => {
                recorder.write(LineRef::WatchClosed(Some(&error)), answers);
                Some((Err(error), None))
            }
            None => {
                recorder.write(LineRef::WatchClosed(None), answers);
                None
            }
        }
    })
    .boxed()
}

/// A Reflector observer that records resyncs and backoff delays; made by
/// [`Recorder::observer`].
pub struct ResyncRecorder<O> {
    recorder: Recorder,
    inner: O,
}

impl<O> fmt::Debug for ResyncRecorder<O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResyncRecorder").finish_non_exhaustive()
    }
}

impl<O: ReflectorObserver> ReflectorObserver for ResyncRecorder<O> {
    fn observe(&self, event: ReflectorEvent) {
        match &event.kind {
            ReflectorEventKind::Resync { .. } => self.recorder.resync(),
            ReflectorEventKind::Backoff { delay, .. } => self.recorder.backoff(*delay),
            _ => {}
        }
        self.inner.observe(event);
    }
}
