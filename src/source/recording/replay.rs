//! [`RecordingListerWatcher`]: the [`ListerWatcher`] of a replay.
//!
//! The Reflector pulls: it calls `list`, `watch`, and polls the watch stream, and it applies what
//! it got to the FIFO before it asks again. So when it asks for the next line, every line handed
//! out before has reached the FIFO. That is where the replay paces: before handing out the first
//! line of a new `t`, it waits ([`Pace`]) for the consumer to drain the FIFO, or for the line's
//! time to come. `RESYNC` lines are applied at the same point, before the next answer; but a
//! watch opens at the time of the line before it, and the `RESYNC` lines before its first line are
//! applied when the stream is read, so that they move neither the start of the resync timer (the
//! list's end) nor the watch's start (client-go's `ListAndWatch` and `watch`, reflector.go
//! v0.28.7).
//!
//! Lines are parsed on a reader thread, ahead of the Reflector, and passed over a bounded
//! channel: parsing overlaps with queueing and popping, and a slow pipe on stdin never blocks
//! the async runtime.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

use futures_util::StreamExt;
use kube::core::{ApiResource, GroupVersionKind};
use tokio::sync::{Mutex, MutexGuard, mpsc, watch};

use super::clock::ReplayClock;
use super::error::RecordingError;
use super::format::{Header, Line, LiveNotes, Record, RequestKind};
use super::reader::RecordingReader;
use super::turns::{Quiescence, ResyncHook};
use crate::cache::ReflectorConfig;
use crate::source::{
    ListPage, ListRequest, ListerWatcher, RandomChoice, ResourceTarget, SourceError, WatchEvent,
    WatchRequest, WatchStream,
};

/// Chunks of parsed lines in flight between the reader thread and the replay. The replay reads
/// every object the reader thread has just decoded, so what is in flight must fit in a core's
/// L2 cache (`CHUNKS_AHEAD` chunks of [`CHUNK`] objects of a few hundred bytes) while leaving
/// both threads enough slack not to wait on each other.
const CHUNKS_AHEAD: usize = 8;

/// Lines per chunk, at most: handing lines over one by one would wake the replay for each.
const CHUNK: usize = 64;

/// How long an instant replay of a live input (a pipe: `record -f - | replay -`) waits for the
/// next line before it applies the group of lines it has: the next line's `t` is what ends a
/// group, and a stream still being written may not send it for a long time.
const LIVE_IDLE: Duration = Duration::from_millis(100);

type Chunk = Vec<Result<Record, RecordingError>>;

/// How a replay paces the recorded lines.
#[derive(Clone)]
pub enum Pace {
    /// As fast as possible and deterministic: all lines sharing one `t` are handed to the
    /// Reflector (so applied to the FIFO) while the consumer waits, then the consumer drains the
    /// FIFO while the replay waits ([`Quiescence`]), then the next `t` follows. Equal `t` values
    /// coalesce into one batch per key; a recording always produces the same batches, however
    /// fast the consumer.
    Instant(Arc<dyn Quiescence>),
    /// Real time divided by the factor (> 0): a line at `t` is handed out `t / factor`
    /// milliseconds after the replay started, and the consumer pops concurrently, as in a live
    /// run. The replay's clock runs at the factor times real time in between
    /// ([`ReplayClock::running`]).
    Speed(f64),
    /// As fast as possible, without waiting for the consumer: for building a cache from a
    /// recording when only the end state matters. Batches then depend on the consumer's speed.
    Unpaced,
}

impl fmt::Debug for Pace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pace::Instant(_) => f.write_str("Instant"),
            Pace::Speed(x) => write!(f, "Speed({x})"),
            Pace::Unpaced => f.write_str("Unpaced"),
        }
    }
}

/// How far a finished replay got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReplaySummary {
    /// Lines handed to the Reflector or the resync hook (the header not counted).
    pub lines: u64,
    /// The `t` of the last of them.
    pub last_t: Duration,
    /// The first line before which an instant replay's queue had coalesced another number of
    /// deltas than the recorded session's (its lines' `coalesced`): from there on the replay's
    /// pops are not the ones the live consumer popped.
    pub pops_differ: Option<PopsDiffer>,
}

/// Where a replay's pops part from the recorded session's ([`ReplaySummary::pops_differ`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PopsDiffer {
    /// The line.
    pub line: u64,
    /// Deltas the recorded queue had coalesced before it.
    pub recorded: u64,
    /// Deltas the replay's queue had coalesced before it.
    pub replayed: u64,
}

type Outcome = Result<ReplaySummary, RecordingError>;

/// Completes when a replay is over: `Ok` when the Reflector asked for more than the recording
/// holds (the end of the file), `Err` when a line could not be read or does not answer the
/// Reflector's request. From then on the Reflector waits forever, so the pipeline stops it (for
/// instance by making this the Reflector's shutdown future), closes the FIFO, lets the consumer
/// drain it, and reports the outcome: every line before the end has been applied, none after.
#[derive(Clone)]
pub struct ReplayEnd {
    rx: watch::Receiver<Option<Outcome>>,
}

impl fmt::Debug for ReplayEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplayEnd")
            .field("outcome", &*self.rx.borrow())
            .finish()
    }
}

impl ReplayEnd {
    /// Waits for the end. If the replay is dropped before it ends (the Reflector was stopped,
    /// or gave up), this never completes.
    pub async fn wait(mut self) -> Result<ReplaySummary, RecordingError> {
        // The borrow of the channel ends here, so that the future is `Send`.
        let outcome = match self.rx.wait_for(Option::is_some).await {
            Ok(outcome) => outcome.clone(),
            Err(_) => None,
        };
        match outcome {
            Some(outcome) => outcome,
            None => std::future::pending().await,
        }
    }

    /// The outcome, if the replay is over.
    pub fn get(&self) -> Option<Result<ReplaySummary, RecordingError>> {
        self.rx.borrow().clone()
    }
}

/// Answers a Reflector's list and watch calls from a recording (see the [module](super)
/// documentation for the whole picture).
///
/// | the Reflector asks | the next line is | answer |
/// |---|---|---|
/// | a list | `LIST` | that page (more pages follow while it has `continue`) |
/// | a list | `ERROR` with `"request": "list"` | the list fails with that error |
/// | a watch | a watch event, `ERROR` or `WATCH_CLOSED` | a stream of the lines up to `WATCH_CLOSED` or `ERROR` |
/// | a watch | `ERROR` with `"request": "watch"` | opening the watch fails with that error |
/// | anything | anything else | [`RecordingError::Unanswerable`] naming the line |
/// | anything | the end of the file | the replay is over |
///
/// After the end (or an error) every call waits forever; [`end`](Self::end) tells the pipeline.
pub struct RecordingListerWatcher {
    shared: Arc<Shared>,
    target: ResourceTarget,
    header: Option<Header>,
    starts_with_watch: bool,
}

impl fmt::Debug for RecordingListerWatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordingListerWatcher")
            .field("file", &self.shared.name)
            .field("target", &self.target)
            .field("pace", &self.shared.pace)
            .field("starts_with_watch", &self.starts_with_watch)
            .finish_non_exhaustive()
    }
}

struct Shared {
    name: String,
    pace: Pace,
    /// The input may be a stream still being written ([`RecordingReader::live`]).
    live: bool,
    clock: ReplayClock,
    /// Where the recording's `t = 0` is on the clock: its `startedAt` after the clock's start,
    /// when the clock is a session's, shared with other recordings.
    offset: Duration,
    resync: OnceLock<Arc<dyn ResyncHook>>,
    end: watch::Sender<Option<Outcome>>,
    cursor: Mutex<Cursor>,
}

/// Where the replay is in the recording. Behind an async mutex: the Reflector's calls and its
/// watch stream take turns, and a wait for the consumer happens while holding it.
struct Cursor {
    /// Lines parsed but not yet looked at: read on construction, then received in chunks.
    pending: VecDeque<Result<Record, RecordingError>>,
    chunks: mpsc::Receiver<Chunk>,
    /// The next line, read but not handed out.
    peeked: Option<Record>,
    /// The `t` of the lines being handed out; `None` before the first.
    group_t: Option<Duration>,
    /// Lines were handed out since the consumer last drained the FIFO ([`Pace::Instant`]).
    undrained: bool,
    /// The pages of a paged list handed out so far, while its last page is still to come.
    open_list: Option<OpenList>,
    summary: ReplaySummary,
    over: bool,
    /// When the next computed resync tick is due (recorded time), while the Reflector is in a
    /// watch phase and the resync hook has a period ([`ResyncHook::period`]).
    next_tick: Option<Duration>,
}

/// A paged list whose last page has not come yet.
#[derive(Debug, Clone, Copy)]
struct OpenList {
    /// The line of its latest page.
    line: u64,
    pages: usize,
    items: usize,
}

/// The answer to the Reflector's next request, seen ahead.
struct Ahead {
    /// It is a watch's line (an event or `WATCH_CLOSED`).
    watch: bool,
    /// What the live session chose there.
    live: LiveNotes,
}

/// What the next answer is.
enum Next {
    /// A line, in `Cursor::peeked`.
    Line,
    /// The replay is over: the end of the file, or an error.
    Over(Outcome),
}

impl RecordingListerWatcher {
    /// A replay of `reader`'s recording, paced by `pace`.
    ///
    /// Without a header, reads ahead to the first object that names its `kind` and `apiVersion`
    /// to know what resource this is (an error if none does). Also reads the first answer, to
    /// know whether the recording starts with a list or a watch (a streaming list).
    pub fn new(reader: RecordingReader, pace: Pace) -> Result<Self, RecordingError> {
        Self::build(reader, pace, None)
    }

    /// A replay of `reader`'s recording, paced by `pace`, on `clock`: the clock of a session that
    /// replays several recordings together ([`TurnArbiter`](super::TurnArbiter)), started at
    /// the earliest of their `startedAt`s. Each line comes at its header's `startedAt + t` on it
    /// (a recording without a header, or one that starts before the clock, at the clock's start
    /// `+ t`). `pace` must run as `clock` does: [`Pace::Speed`] for a
    /// [`running`](ReplayClock::running) clock, at its factor.
    pub fn on_clock(
        reader: RecordingReader,
        pace: Pace,
        clock: &ReplayClock,
    ) -> Result<Self, RecordingError> {
        Self::build(reader, pace, Some(clock))
    }

    fn build(
        mut reader: RecordingReader,
        pace: Pace,
        clock: Option<&ReplayClock>,
    ) -> Result<Self, RecordingError> {
        let name = reader.name().to_owned();
        let header = reader.header().cloned();
        let mut read_ahead = VecDeque::new();
        let target = match &header {
            Some(header) => header.target(),
            None => target_from_objects(&mut reader, &mut read_ahead)?,
        };
        // The first answer, to know how the Reflector must start.
        let mut pending: VecDeque<Result<Record, RecordingError>> =
            read_ahead.into_iter().map(Ok).collect();
        let mut ended = false;
        while !ended
            && !pending
                .iter()
                .any(|r| r.as_ref().is_ok_and(|r| !matches!(r.line, Line::Resync)))
        {
            match reader.next_record() {
                Ok(Some(record)) => pending.push_back(Ok(record)),
                Ok(None) => ended = true,
                // Reported when the replay gets there, after the lines before it.
                Err(e) => {
                    pending.push_back(Err(e));
                    ended = true;
                }
            }
        }
        let read_ahead: Vec<&Record> = pending.iter().map_while(|r| r.as_ref().ok()).collect();
        let starts_with_watch = read_ahead
            .iter()
            .find(|r| !matches!(r.line, Line::Resync))
            .is_some_and(|r| {
                !matches!(
                    r.line,
                    Line::List(_)
                        | Line::RequestFailed {
                            request: RequestKind::List,
                            ..
                        }
                )
            });
        let started_at = header
            .as_ref()
            .map_or(SystemTime::UNIX_EPOCH, |h| h.started_at);

        let clock = match (clock, &pace) {
            (Some(clock), _) => clock.clone(),
            (None, Pace::Speed(factor)) => ReplayClock::running(started_at, *factor),
            (None, Pace::Instant(_) | Pace::Unpaced) => ReplayClock::new(started_at),
        };
        let offset = (header.as_ref())
            .and_then(|h| h.started_at.duration_since(clock.started_at()).ok())
            .unwrap_or_default();
        let live = reader.is_live();
        let (tx, rx) = mpsc::channel(CHUNKS_AHEAD);
        if !ended {
            std::thread::Builder::new()
                .name("recording-reader".into())
                .spawn(move || read_lines(reader, tx))
                .map_err(|e| RecordingError::Open {
                    file: name.clone(),
                    source: Arc::new(e),
                })?;
        }

        Ok(RecordingListerWatcher {
            shared: Arc::new(Shared {
                name,
                pace,
                live,
                clock,
                offset,
                resync: OnceLock::new(),
                end: watch::Sender::new(None),
                cursor: Mutex::new(Cursor {
                    pending,
                    chunks: rx,
                    peeked: None,
                    group_t: None,
                    undrained: false,
                    open_list: None,
                    summary: ReplaySummary::default(),
                    over: false,
                    next_tick: None,
                }),
            }),
            target,
            header,
            starts_with_watch,
        })
    }

    /// Hands `RESYNC` lines to `hook` (without one they are skipped). Set it before the replay
    /// starts; a second hook is ignored.
    pub fn on_resync(self, hook: Arc<dyn ResyncHook>) -> Self {
        let _ = self.shared.resync.set(hook);
        self
    }

    /// Describes the replay as `target` instead of what the header (or the first object) says.
    pub fn with_target(mut self, target: ResourceTarget) -> Self {
        self.target = target;
        self
    }

    /// Whether the header says only metadata was recorded (`record --metadata-only`).
    pub fn metadata_only(&self) -> bool {
        self.header().is_some_and(|header| header.metadata_only)
    }

    /// The recording's header, if it has one.
    pub fn header(&self) -> Option<&Header> {
        self.header.as_ref()
    }

    /// The clock to run the Reflector on (`Reflector::clock`): the recording's time.
    pub fn clock(&self) -> ReplayClock {
        self.shared.clock.clone()
    }

    /// Tells when the replay is over.
    pub fn end(&self) -> ReplayEnd {
        ReplayEnd {
            rx: self.shared.end.subscribe(),
        }
    }

    /// Whether the first answer is a watch's (the recording was made with a streaming list),
    /// so the Reflector must start with a watch rather than a list.
    pub fn starts_with_watch(&self) -> bool {
        self.starts_with_watch
    }

    /// `base` adjusted for this replay: resync ticker and consistency check off (the recording
    /// says when resyncs happen, and a check would ask for a list the recording cannot answer),
    /// a streaming list iff the recording starts with a watch, and a fixed seed so that the
    /// watch timeouts and backoff delays the recording does not carry (`timeoutSeconds`,
    /// `backoff`: [`recorded_choice`](ListerWatcher::recorded_choice)) are drawn the same on
    /// every replay.
    pub fn reflector_config(&self, base: ReflectorConfig) -> ReflectorConfig {
        let mut config = base.watch_list(self.starts_with_watch);
        config.resync = None;
        config.verify_every = None;
        config.seed = config.seed.or(Some(0));
        config
    }
}

/// Without a header: the resource of the first object that names its kind and apiVersion, with
/// every line read on the way kept for the replay.
fn target_from_objects(
    reader: &mut RecordingReader,
    read_ahead: &mut VecDeque<Record>,
) -> Result<ResourceTarget, RecordingError> {
    loop {
        let Some(record) = reader.next_record()? else {
            let problem = if read_ahead.is_empty() {
                "the recording is empty".to_owned()
            } else {
                "the recording has no header and none of its objects says its kind and \
                 apiVersion, so the resource is unknown; add a header line (docs/recording.md)"
                    .to_owned()
            };
            return Err(RecordingError::Unusable {
                file: reader.name().to_owned(),
                problem,
            });
        };
        let typed = match &record.line {
            Line::List(page) => page.items.iter().find_map(|o| o.types().cloned()),
            Line::Event(
                WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o),
            ) => o.types().cloned(),
            _ => None,
        }
        .filter(|t| !t.kind.is_empty() && !t.api_version.is_empty());
        read_ahead.push_back(record);
        if let Some(types) = typed {
            let (group, version) = match types.api_version.split_once('/') {
                Some((g, v)) => (g, v),
                None => ("", types.api_version.as_str()),
            };
            let gvk = GroupVersionKind::gvk(group, version, &types.kind);
            return Ok(ResourceTarget::new(ApiResource::from_gvk(&gvk), None));
        }
    }
}

/// The reader thread: parses lines ahead of the Reflector until the end, an error, or the
/// replay is dropped. Lines go over in chunks, handed over early whenever the replay is waiting
/// for them or the next line needs a read that may block (a pipe), so that batching never holds
/// a line back.
fn read_lines(mut reader: RecordingReader, tx: mpsc::Sender<Chunk>) {
    let mut chunk = Vec::with_capacity(CHUNK);
    loop {
        let (item, last) = match reader.next_record() {
            Ok(Some(record)) => (Some(Ok(record)), false),
            Ok(None) => (None, true),
            Err(e) => (Some(Err(e)), true),
        };
        chunk.extend(item);
        let replay_waits = tx.capacity() == tx.max_capacity();
        if last || chunk.len() >= CHUNK || replay_waits || reader.needs_input() {
            let full = std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK));
            if (!full.is_empty() && tx.blocking_send(full).is_err()) || last {
                return;
            }
        }
    }
}

impl Shared {
    /// Makes the next answer available in `cur.peeked`, applying `RESYNC` lines on the way.
    async fn next_answer(&self, cur: &mut Cursor) -> Next {
        loop {
            if cur.peeked.is_none() {
                if cur.pending.is_empty()
                    && let Some(chunk) = self.next_chunk(cur).await
                {
                    cur.pending.extend(chunk);
                }
                match cur.pending.pop_front() {
                    Some(Ok(record)) => cur.peeked = Some(record),
                    Some(Err(e)) => return Next::Over(Err(e)),
                    None => return Next::Over(Ok(cur.summary)),
                }
            }
            match cur.peeked.take() {
                Some(Record {
                    t,
                    line: Line::Resync,
                    ..
                }) => {
                    self.gate(cur, t + self.offset).await;
                    // A resync the recorded queue did. With a period of its own, the hook's
                    // ticks are computed (`gate`), and the recorded ones would come twice.
                    if let Some(hook) = self.resync.get()
                        && hook.period().is_none()
                    {
                        hook.resync(self.clock_wall());
                    }
                }
                other => {
                    cur.peeked = other;
                    return Next::Line;
                }
            }
        }
    }

    /// Whether the first line ahead that is not a `RESYNC` is a watch's (an event or
    /// `WATCH_CLOSED`), read without applying or handing out anything: the `RESYNC` lines stay
    /// where they are, to be applied in their turn.
    async fn watch_ahead(&self, cur: &mut Cursor) -> bool {
        self.ahead(cur).await.is_some_and(|ahead| ahead.watch)
    }

    /// The first line ahead that is not a `RESYNC` (the answer to the Reflector's next request),
    /// read without applying or handing out anything; `None` at the end or an unreadable line.
    async fn ahead(&self, cur: &mut Cursor) -> Option<Ahead> {
        if let Some(record) = cur.peeked.take() {
            cur.pending.push_front(Ok(record));
        }
        let mut seen = 0;
        loop {
            let ahead = cur.pending.iter().skip(seen).find(|r| {
                !matches!(
                    r,
                    Ok(Record {
                        line: Line::Resync,
                        ..
                    })
                )
            });
            if let Some(ahead) = ahead {
                let record = ahead.as_ref().ok()?;
                return Some(Ahead {
                    watch: matches!(record.line, Line::Event(_) | Line::WatchClosed(_)),
                    live: record.live,
                });
            }
            seen = cur.pending.len();
            match self.next_chunk(cur).await {
                Some(chunk) => cur.pending.extend(chunk),
                None => return None,
            }
        }
    }

    /// Notes the first line where the replay's queue has coalesced another number of deltas
    /// than the recorded one had before the same line ([`ReplaySummary::pops_differ`]): from
    /// there on, its pops are not the live session's. Instant replays only: at `--speed` what
    /// coalesces depends on this machine's consumer, as live.
    fn compare_coalesced(&self, cur: &mut Cursor, record: &Record) {
        let (Pace::Instant(queue), Some(recorded)) = (&self.pace, record.live.coalesced) else {
            return;
        };
        if cur.summary.pops_differ.is_some() {
            return;
        }
        if let Some(replayed) = queue.coalesced().filter(|n| *n != recorded) {
            cur.summary.pops_differ = Some(PopsDiffer {
                line: record.line_no,
                recorded,
                replayed,
            });
        }
    }

    /// The next chunk of lines from the reader thread, `None` at the end. While it waits on a
    /// live input, the lines handed out are applied once the input has been idle for a moment.
    async fn next_chunk(&self, cur: &mut Cursor) -> Option<Chunk> {
        if let Pace::Instant(quiescence) = &self.pace
            && self.live
            && cur.undrained
        {
            match tokio::time::timeout(LIVE_IDLE, cur.chunks.recv()).await {
                Ok(chunk) => return chunk,
                Err(_) => {
                    quiescence.idle(self.clock.now_instant()).await;
                    cur.undrained = false;
                }
            }
        }
        cur.chunks.recv().await
    }

    fn clock_wall(&self) -> SystemTime {
        crate::cache::reflector::Clock::wall(&self.clock)
    }

    /// Hands out the peeked line, after pacing it.
    async fn take(&self, cur: &mut Cursor) -> Option<Record> {
        let record = cur.peeked.take()?;
        self.gate(cur, record.t + self.offset).await;
        self.compare_coalesced(cur, &record);
        cur.open_list = match &record.line {
            Line::List(page) if page.continue_token.is_some() => {
                let before = cur.open_list.map_or((0, 0), |l| (l.pages, l.items));
                Some(OpenList {
                    line: record.line_no,
                    pages: before.0 + 1,
                    items: before.1 + page.items.len(),
                })
            }
            _ => None,
        };
        Some(record)
    }

    /// Paces a line at `t` and counts it, after the computed resync ticks due by then.
    async fn gate(&self, cur: &mut Cursor, t: Duration) {
        self.tick_resyncs(cur, t).await;
        self.pace_to(cur, t).await;
        cur.undrained = true;
        cur.summary.lines += 1;
        cur.summary.last_t = t;
    }

    /// The resync ticks of a hook with a period, due by `t`: each one is a moment of its own
    /// (the consumer drains what came before, the clock moves to it, the hook ticks), as the
    /// live Reflector's resync timer fires between two events. The timer runs during watch
    /// phases only (client-go's `watchWithResync`): from when the Reflector first watches after
    /// a list until it asks for a list again.
    async fn tick_resyncs(&self, cur: &mut Cursor, t: Duration) {
        let Some(hook) = self.resync.get() else {
            return;
        };
        let Some(period) = hook.period().filter(|p| !p.is_zero()) else {
            return;
        };
        while let Some(due) = cur.next_tick.filter(|due| *due <= t) {
            self.pace_to(cur, due).await;
            hook.tick(self.clock_wall());
            cur.next_tick = Some(due + period);
        }
    }

    /// The Reflector starts a watch phase at `t` (its first watch after a list): the resync
    /// timer starts, if it is not running.
    fn watch_phase_started(&self, cur: &mut Cursor) {
        if cur.next_tick.is_none()
            && let Some(period) = self
                .resync
                .get()
                .and_then(|hook| hook.period())
                .filter(|p| !p.is_zero())
        {
            cur.next_tick = Some(cur.group_t.unwrap_or_default() + period);
        }
    }

    /// Moves the replay to `t`: if `t` starts a new group, the consumer's turn for the group
    /// before (or, at `--speed`, the wait for `t`), then the clock moves.
    async fn pace_to(&self, cur: &mut Cursor, t: Duration) {
        if cur.group_t.is_none_or(|group| t > group) {
            match &self.pace {
                Pace::Instant(quiescence) => quiescence.idle(self.clock.instant_at(t)).await,
                // The clock runs from the first line paced; `t` is due when it gets there.
                Pace::Speed(_) => match self.clock.due(t) {
                    Some(due) => tokio::time::sleep_until(due).await,
                    // Later than this machine can count: never.
                    None => std::future::pending().await,
                },
                Pace::Unpaced => {}
            }
            cur.group_t = Some(t);
            self.clock.advance_to(t);
        }
    }

    /// Ends the replay with `outcome` (the first outcome wins).
    fn finish(&self, cur: &mut Cursor, outcome: Outcome) {
        if !cur.over {
            cur.over = true;
            if let Pace::Instant(quiescence) = &self.pace {
                quiescence.finished();
            }
            if let (Ok(_), Some(list)) = (&outcome, cur.open_list) {
                // The Reflector applies a list once it has every page: none of this one did.
                tracing::warn!(
                    "{}:{}: the recording ends inside a paged LIST (this page has \"continue\", \
                     and no page follows): its {} item{} in {} page{} never reached the cache, \
                     which keeps what it held before that list",
                    self.name,
                    list.line,
                    list.items,
                    if list.items == 1 { "" } else { "s" },
                    list.pages,
                    if list.pages == 1 { "" } else { "s" },
                );
            }
            self.end.send_replace(Some(outcome));
        }
    }

    /// The cursor with the next answer in `peeked`, for a request of the Reflector; `Err` with
    /// the cursor when the replay is over (it ends here, or ended before), and the caller parks.
    async fn next_request(&self) -> Result<MutexGuard<'_, Cursor>, MutexGuard<'_, Cursor>> {
        let mut cur = self.cursor.lock().await;
        if cur.over {
            return Err(cur);
        }
        if let Next::Over(outcome) = self.next_answer(&mut cur).await {
            self.finish(&mut cur, outcome);
            return Err(cur);
        }
        Ok(cur)
    }

    /// Ends the replay: the Reflector `asked` something the peeked line does not answer.
    fn refuse(&self, cur: &mut Cursor, asked: &str, expected: &str) {
        if let Some(record) = cur.peeked.take() {
            let error = RecordingError::Unanswerable {
                file: self.name.clone(),
                line: record.line_no,
                problem: format!(
                    "the Reflector {asked} here, but the recording has {} (expected {expected})",
                    record.line.describe()
                ),
            };
            self.finish(cur, Err(error));
        }
    }
}

/// Waits forever, after releasing the cursor: what every call does once the replay is over.
async fn park<T>(cur: MutexGuard<'_, Cursor>) -> T {
    drop(cur);
    std::future::pending().await
}

impl ListerWatcher for RecordingListerWatcher {
    async fn list(&self, _req: &ListRequest) -> Result<ListPage, SourceError> {
        let shared = &self.shared;
        let mut cur = shared.cursor.lock().await;
        // A (re)list: the watch phase, and its resync timer, ended with the last watch (client-go
        // closes `cancelCh` when `ListAndWatch` returns), before the `RESYNC` lines ahead.
        cur.next_tick = None;
        drop(cur);
        let mut cur = match shared.next_request().await {
            Ok(cur) => cur,
            Err(over) => return park(over).await,
        };
        match cur.peeked.as_ref().map(|r| &r.line) {
            Some(Line::List(_))
            | Some(Line::RequestFailed {
                request: RequestKind::List,
                ..
            }) => match shared.take(&mut cur).await.map(|r| r.line) {
                Some(Line::List(page)) => Ok(page),
                Some(Line::RequestFailed { error, .. }) => Err(error),
                _ => park(cur).await,
            },
            _ => {
                shared.refuse(
                    &mut cur,
                    "asked for a list",
                    "a LIST page, or an ERROR line with \"request\": \"list\"",
                );
                park(cur).await
            }
        }
    }

    async fn watch(&self, req: &WatchRequest) -> Result<WatchStream, SourceError> {
        let shared = &self.shared;
        let mut cur = shared.cursor.lock().await;
        if cur.over {
            return park(cur).await;
        }
        // client-go's `ListAndWatch` starts the resync timer as soon as the list completes
        // (`go r.startResync` after `r.list`, reflector.go v0.28.7), before the first watch
        // request: from the time of the list's last line, before any `RESYNC` line after it.
        if !req.send_initial_events {
            shared.watch_phase_started(&mut cur);
        }
        if shared.watch_ahead(&mut cur).await {
            // The watch opens at the previous line's time; the `RESYNC` lines before its first
            // line, and that line, are applied when the Reflector polls the stream. Applied here,
            // they would move the clock before the Reflector's `start := r.clock.Now()`, and a
            // watch that was open for seconds would look like one that opened at the resync.
            drop(cur);
            return Ok(watch_stream(shared.clone()));
        }
        if let Next::Over(outcome) = shared.next_answer(&mut cur).await {
            shared.finish(&mut cur, outcome);
            return park(cur).await;
        }
        match cur.peeked.as_ref().map(|r| &r.line) {
            Some(Line::RequestFailed {
                request: RequestKind::Watch,
                ..
            }) => match shared.take(&mut cur).await.map(|r| r.line) {
                Some(Line::RequestFailed { error, .. }) => Err(error),
                _ => park(cur).await,
            },
            _ => {
                shared.refuse(
                    &mut cur,
                    "opened a watch",
                    "a watch event, WATCH_CLOSED, or an ERROR line with \"request\": \"watch\"",
                );
                park(cur).await
            }
        }
    }

    fn describe(&self) -> ResourceTarget {
        self.target.clone()
    }

    /// The watch timeout and backoff delays the recorded Reflector chose: carried by the line
    /// that answers the request they belong to, the next one ahead.
    async fn recorded_choice(&self, choice: RandomChoice) -> Option<Duration> {
        let mut cur = self.shared.cursor.lock().await;
        if cur.over {
            return None;
        }
        let live = self.shared.ahead(&mut cur).await?.live;
        match choice {
            RandomChoice::WatchTimeout => live
                .timeout_seconds
                .map(|s| Duration::from_secs(u64::from(s))),
            RandomChoice::Backoff => live.backoff,
        }
    }
}

/// The lines of one watch, up to `WATCH_CLOSED` or an `ERROR` event.
fn watch_stream(shared: Arc<Shared>) -> WatchStream {
    futures_util::stream::unfold(Some(shared), |state| async move {
        let shared = state?;
        let mut cur = match shared.next_request().await {
            Ok(cur) => cur,
            Err(over) => return park(over).await,
        };
        if !matches!(
            cur.peeked.as_ref().map(|r| &r.line),
            Some(Line::Event(_) | Line::WatchClosed(_))
        ) {
            shared.refuse(
                &mut cur,
                "is reading a watch",
                "a watch event (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR) or WATCH_CLOSED",
            );
            return park(cur).await;
        }
        let line = shared.take(&mut cur).await.map(|r| r.line);
        // A streaming list's initial events are over: its watch phase begins.
        if let Some(Line::Event(WatchEvent::Bookmark {
            initial_events_end: true,
            ..
        })) = &line
        {
            shared.watch_phase_started(&mut cur);
        }
        drop(cur);
        match line {
            Some(Line::Event(event @ WatchEvent::Error(_))) => Some((Ok(event), None)),
            Some(Line::Event(event)) => Some((Ok(event), Some(shared))),
            Some(Line::WatchClosed(Some(error))) => Some((Err(error), None)),
            _ => None,
        }
    })
    .boxed()
}
