//! The one place a session writes: the renderer behind one mutex, the statistics, the limits
//! (`--max-batches`, `--until-synced`) and the stop request they raise.
//!
//! Lock order: this mutex, then a queue's (a resync's row and its `resync()`), then a shared
//! informer's (its processor's lock, then a listener's buffer: `stats`). Consumers pop before
//! taking it; handler threads take it between two calls, holding nothing else; nothing that holds
//! a queue's lock ever waits for this one (a plain informer's handler, which works under its
//! queue's lock, only sleeps there). The footer and the summary read the queues' and listeners'
//! counters before taking it, so that a plain handler's long hold of its queue's lock does not
//! hold up every writer.

use std::collections::HashSet;
use std::io;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant, SystemTime};

use kubectl_deltas::Object;
use kubectl_deltas::cache::reflector::Clock;
use kubectl_deltas::cache::workqueue::QueueMetrics;
use kubectl_deltas::cache::{
    Batch, Consumption, Delivery, Distribution, Informer, InformerQueue, ListenerStats,
    ProcessorListener, QueueKind, QueueStats, ReflectorEvent, ReflectorEventKind,
};
use kubectl_deltas::render::ending::{ControllerEnd, ResourceEnd, SessionEnd};
use kubectl_deltas::render::profile::InformerProfile;
use kubectl_deltas::render::reconcile::{
    ControllerNote, ControllerStats, ReconcileStart, ReconcileView, Runtime, controller_table,
};
use kubectl_deltas::render::stats::{CacheSize, HandlerStats, InformerStats, Synced};
use kubectl_deltas::render::status::StatusBar;
use kubectl_deltas::render::summary::{side_by_side_table, summary_table};
use kubectl_deltas::render::{
    BatchView, Delivered, Event, EventView, NotificationView, Push, PushView, Renderer,
};

use super::Ended;
use super::compared::Compared;
use super::stdout::{Drain, GaveUp};
use super::stop::Stop;
use crate::cmd::plan::{ControllerSpec, OutputPlan};
use kubectl_deltas::render::compare::Subject;
use kubectl_deltas::render::compare::side_by_side::Release;

/// `--compare`, live: how long no row comes before a row only some stacks wrote is written: the
/// others had time to write theirs (their consumers and workers run on their own threads).
const QUIET: Duration = Duration::from_secs(1);

/// `--compare`, live: how long rows are held at most while rows keep coming and none is common.
const HOLD_LONGEST: Duration = Duration::from_secs(5);

/// How often a wait for a turn looks at the stop.
const TURN_CHECK: Duration = Duration::from_millis(50);

/// How long a limit waits on one busy handler before it looks at the others again.
const SETTLE_CHECK: Duration = Duration::from_millis(5);

pub(super) struct Output {
    state: Mutex<State>,
    /// Signalled when `next_turn` advances.
    turn: Condvar,
    names: Vec<String>,
    view: OutputPlan,
    pub(super) status: StatusBar,
    pub(super) stop: Arc<Stop>,
    /// Waits until what the renderer wrote is out.
    drain: Drain,
    clock: Arc<dyn Clock>,
    started: Instant,
    /// See [`attach_informers`](Output::attach_informers).
    informers: OnceLock<Vec<Weak<Informer>>>,
    /// The handlers taking their delay now, as (resource, handler) positions.
    delaying: Mutex<HashSet<(usize, usize)>>,
    /// With `--compare`: each lane's stack, which the renderer is told before each of its rows.
    stacks: OnceLock<Vec<Option<String>>>,
}

struct State {
    renderer: Box<dyn Renderer>,
    /// The pop sequence number of the next batch to handle: batches are handled in pop order
    /// across every resource's consumer, so the merged output is in pop order.
    next_turn: u64,
    /// Consumers waiting on `turn`: only they need a wake-up (a notification is a system call
    /// even when nobody waits, and a single resource's consumer never does).
    waiting_for_turn: usize,
    /// Nothing more is written: a limit's last line is out, or writing failed. After a limit,
    /// handler rows still are, for the pops up to `rows_through`.
    closed: bool,
    /// After a limit: the last pop shown, whose handler calls (and those of every pop before) are
    /// still written until the session ends.
    rows_through: Option<u64>,
    /// A limit was reached: the stop it requests once the handlers have settled
    /// ([`end_at_limit`](Output::end_at_limit)).
    limit: Option<Ended>,
    /// The sequence number of the latest batch handled.
    last_seq: u64,
    /// The first write error.
    failed: Option<io::Error>,
    /// Batches written (pushes, for an UndeltaStore).
    shown: u64,
    /// Pushes of every UndeltaStore so far: the last push's sequence number.
    pushes: u64,
    stats: Vec<InformerStats>,
    synced: Vec<bool>,
    /// Each resource's controllers (`--controller`), in registration order.
    controllers: Vec<Vec<ControllerStats>>,
    /// The latest end of a reconcile: an instant replay's workers run past the recording's last
    /// line, and the session ends after them.
    latest_reconcile: Option<SystemTime>,
    /// With `--compare`: each lane's calls, and how the stacks compare once the session ended.
    compared: Option<Compared>,
    /// With `--compare`: since when the renderer holds rows, and when it was last given one
    /// ([`align_when_quiet`](Output::align_when_quiet)).
    held: Option<Held>,
}

/// The renderer holds `--compare`'s rows: since when it wrote none, and when it was last given
/// one.
#[derive(Clone, Copy)]
struct Held {
    since: Instant,
    last_row: Instant,
    /// The `last_row` when rows up to the last common one were last looked for: until another
    /// row comes, looking again finds the same.
    looked_at: Option<Instant>,
}

/// A sync notification that the handler at `handler` (its position among the resource's
/// handlers) did not get.
pub(super) struct Skipped<'a> {
    pub(super) handler: usize,
    pub(super) distribution: &'a Distribution<Object>,
}

impl Output {
    pub(super) fn new(
        renderer: Box<dyn Renderer>,
        names: Vec<String>,
        view: OutputPlan,
        status: StatusBar,
        stop: Arc<Stop>,
        drain: Drain,
        clock: Arc<dyn Clock>,
    ) -> Self {
        let n = names.len();
        let started = clock.now();
        Output {
            state: Mutex::new(State {
                renderer,
                next_turn: 1,
                waiting_for_turn: 0,
                closed: false,
                rows_through: None,
                limit: None,
                last_seq: 0,
                failed: None,
                shown: 0,
                pushes: 0,
                stats: vec![InformerStats::default(); n],
                synced: vec![false; n],
                controllers: vec![Vec::new(); n],
                latest_reconcile: None,
                compared: None,
                held: None,
            }),
            turn: Condvar::new(),
            names,
            view,
            status,
            stop,
            drain,
            clock,
            started,
            informers: OnceLock::new(),
            delaying: Mutex::default(),
            stacks: OnceLock::new(),
        }
    }

    /// The session's informers, in resource order: whose handlers a limit waits for.
    pub(super) fn attach_informers(&self, informers: Vec<Weak<Informer>>) {
        let _ = self.informers.set(informers);
    }

    /// Handler `handler` of resource `index` is taking its delay (`true`) or is done with it.
    fn delaying(&self, index: usize, handler: usize, delaying: bool) {
        let mut set = self.delaying.lock().unwrap_or_else(|e| e.into_inner());
        if delaying {
            set.insert((index, handler));
        } else {
            set.remove(&(index, handler));
        }
    }

    /// After a limit (`--max-batches`, `--until-synced`) was reached in a call that has released
    /// the lock: waits until every handler running on a thread of its own has settled, then
    /// stops the session. A handler has settled when it has begun every call it was handed (the
    /// pops up to the last one shown: the consumer that reached the limit pops no more) and told
    /// its sync, or when it is taking its delay: the stop cuts that call short and abandons what
    /// the handler still has buffered. So a quick handler's calls are all written, a slow one's
    /// backlog is counted as abandoned, whatever the threads' timing. Handlers driven inline (an
    /// instant replay) make their calls due by now on the consumer's thread after the batch, and
    /// are not waited for.
    fn end_at_limit(&self) {
        let Some(reason) = self.lock().limit.take() else {
            return;
        };
        let informers: Vec<Arc<Informer>> = self
            .informers
            .get()
            .map(|all| all.iter().filter_map(Weak::upgrade).collect())
            .unwrap_or_default();
        let threaded: Vec<(usize, Vec<_>)> = informers
            .iter()
            .enumerate()
            .filter(|(_, informer)| informer.config().consumption == Consumption::Thread)
            .map(|(index, informer)| (index, informer.listeners()))
            .collect();
        let settled = |index: usize, handler: usize, listener: &ProcessorListener<Object>| {
            self.delaying
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains(&(index, handler))
                || listener.wait_drained(SETTLE_CHECK)
        };
        while !self.stop.requested()
            && !threaded.iter().all(|(index, listeners)| {
                listeners
                    .iter()
                    .enumerate()
                    .all(|(handler, listener)| settled(*index, handler, listener))
            })
        {
            std::thread::sleep(Duration::from_millis(1));
        }
        self.stop.request(reason);
    }

    /// Each lane's stack (`--compare`), in lane order: the renderer names it on every row of the
    /// lane. Reconciles up to `same_time` apart are at the same time.
    pub(super) fn set_stacks(
        &self,
        stacks: Vec<Option<String>>,
        per_resource: usize,
        same_time: Duration,
    ) {
        let labels = stacks
            .iter()
            .map(|s| s.clone().unwrap_or_default())
            .collect();
        let mut state = self.lock();
        state.compared = Some(Compared::new(labels, per_resource, same_time));
        let baseline_first: Vec<String> = (stacks.iter().take(per_resource))
            .map(|s| s.clone().unwrap_or_default())
            .collect();
        state.renderer.stacks(&baseline_first);
        drop(state);
        let _ = self.stacks.set(stacks);
    }

    /// `--compare`: the stacks have caught up with each other (a replay's turn is over): the
    /// renderer writes what it held.
    pub(super) fn align_stacks(&self) {
        let mut state = self.lock();
        self.release(&mut state, Release::Everything);
    }

    /// `--compare`, live: the renderer writes what it held up to the last row every stack wrote
    /// (the stacks have all come that far), and the rest once no row came for [`QUIET`] (a stack
    /// that wrote no such row will not) or nothing was written for [`HOLD_LONGEST`].
    pub(super) fn align_when_quiet(&self) {
        let mut state = self.lock();
        let Some(held) = state.held else {
            return;
        };
        let now = Instant::now();
        if now - held.last_row >= QUIET || now - held.since >= HOLD_LONGEST {
            self.release(&mut state, Release::Everything);
        } else if held.looked_at != Some(held.last_row) {
            if let Some(held) = &mut state.held {
                held.looked_at = Some(held.last_row);
            }
            self.release(&mut state, Release::ThroughCommon);
        }
    }

    fn release(&self, state: &mut State, release: Release) {
        if state.held.is_none() || state.failed.is_some() {
            return;
        }
        let renderer = &mut *state.renderer;
        match self.status.suspend(|| renderer.align_stacks(release)) {
            Ok(aligned) if !aligned.holds => state.held = None,
            Ok(aligned) => {
                if let Some(held) = &mut state.held
                    && aligned.wrote
                {
                    held.since = Instant::now();
                }
            }
            Err(error) => self.fail(state, error),
        }
    }

    /// With `--compare`, once the session has ended: whether the stacks differ.
    pub(super) fn stacks_differ(&self) -> bool {
        let mut state = self.lock();
        let names = &self.names;
        state.compared.as_mut().is_some_and(|compared| {
            compared.conclude(names);
            compared.differ()
        })
    }

    /// [`write`](Output::write) of a row of lane `index`, the renderer told its stack first.
    fn write_lane(
        &self,
        index: usize,
        state: &mut State,
        write: impl FnOnce(&mut dyn Renderer) -> io::Result<()>,
    ) {
        if let Some(stack) = self.stacks.get().and_then(|stacks| stacks.get(index)) {
            state.renderer.stack(stack.as_deref());
            let now = Instant::now();
            let held = state.held.get_or_insert(Held {
                since: now,
                last_row: now,
                looked_at: None,
            });
            held.last_row = now;
        }
        self.write(state, write);
    }

    /// How the summary and the footer name lane `index`: its resource, and its stack when
    /// compared (`pods [1.32]`).
    fn lane_name(&self, index: usize) -> String {
        match self
            .stacks
            .get()
            .and_then(|stacks| stacks.get(index)?.as_deref())
        {
            Some(stack) => format!("{} [{stack}]", self.names[index]),
            None => self.names[index].clone(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes with the status bar lifted; a failure closes the output and stops the session.
    fn write(&self, state: &mut State, write: impl FnOnce(&mut dyn Renderer) -> io::Result<()>) {
        let renderer = &mut *state.renderer;
        if let Err(error) = self.status.suspend(|| write(renderer)) {
            self.fail(state, error);
        }
    }

    /// Closes the output after `error` and stops the session: quietly if the reader went away, or
    /// if the stop made the write give up on a reader that did not read (what it could not write
    /// is dropped).
    fn fail(&self, state: &mut State, error: io::Error) {
        state.closed = true;
        if GaveUp::is(&error) {
            return;
        }
        let reason = if error.kind() == io::ErrorKind::BrokenPipe {
            Ended::OutputClosed
        } else {
            Ended::Failed
        };
        state.failed.get_or_insert(error);
        self.stop.request(reason);
    }

    /// Waits until everything written so far is out (or the output failed, which stops the
    /// session): before a stop that gives up on a reader that does not read, and at the end.
    pub(super) fn drain(&self) {
        if let Err(error) = self.drain.wait() {
            self.fail(&mut self.lock(), error);
        }
    }

    /// Waits for `next_turn` to move, or a resource to sync. With a timeout: a stop (a consumer that died holding its
    /// turn stops the session) must end the wait, and the stop does not know this condition
    /// variable.
    fn wait_for_turn<'a>(&self, mut state: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        state.waiting_for_turn += 1;
        let (mut state, _) = self
            .turn
            .wait_timeout(state, TURN_CHECK)
            .unwrap_or_else(|e| e.into_inner());
        state.waiting_for_turn -= 1;
        state
    }

    /// Ends the output after the line just written (a limit's: `--max-batches`,
    /// `--until-synced`); the handler calls of the pops shown are still written, and the caller
    /// stops the session once it has released the lock ([`end_at_limit`](Output::end_at_limit)).
    fn close(&self, state: &mut State, reason: Ended) {
        if let Err(error) = self.drain.wait() {
            self.fail(state, error);
        }
        state.closed = true;
        state.rows_through = Some(state.last_seq);
        state.limit.get_or_insert(reason);
    }

    /// Handles the popped batch `batch` of resource `index`: counts it, writes it if the view
    /// shows it (with the sync notifications its handlers did not get, `skipped`), reports the
    /// sync it completed, and applies the limits. Waits for the batch's turn.
    fn batch(
        &self,
        index: usize,
        batch: &Batch<Object>,
        time: SystemTime,
        fifo: &QueueStats,
        skipped: &[Skipped<'_>],
    ) {
        // Decided before taking the lock every writer waits on: it depends on the batch alone.
        let shown = self.view.shows(batch, time);
        let pop_shown = shown && self.view.shows_pops();
        let mut state = self.lock();
        while state.next_turn < batch.seq && !self.stop.requested() {
            state = self.wait_for_turn(state);
        }
        state.stats[index].record_batch(batch);
        if let Some(compared) = &mut state.compared {
            let narrow = &self.view.narrow;
            compared.pop(index, batch, |delta| {
                narrow.shows_delta(delta, batch.seq, time)
            });
        }
        if self.view.narrows() {
            *state.stats[index].shown.get_or_insert(0) += u64::from(shown);
        }
        state.stats[index].record_queue(fifo);
        state.last_seq = batch.seq;
        if !state.closed && shown {
            if pop_shown {
                let view = BatchView {
                    resource: &self.names[index],
                    time,
                    batch,
                };
                self.write_lane(index, &mut state, |r| r.batch(&view));
            }
            // `--max-batches` counts pops, shown or not (`--view handlers`).
            state.shown += 1;
        }
        for skip in skipped {
            if let Some(stats) = state.stats[index].handlers.get_mut(skip.handler) {
                stats.syncs_skipped += 1;
            }
            if state.closed || !shown || !self.view.shows_handlers() {
                continue;
            }
            let handler = state.stats[index].handlers[skip.handler].name.clone();
            let view = NotificationView {
                resource: &self.names[index],
                handler: &handler,
                time,
                seq: batch.seq,
                notification: &skip.distribution.notification,
                is_sync: skip.distribution.is_sync,
                delivered: None,
            };
            self.write_lane(index, &mut state, |r| r.notification(&view));
        }
        if !state.closed && shown && self.view.max_batches.is_some_and(|max| state.shown >= max) {
            self.close(&mut state, Ended::MaxBatches);
        }
        if fifo.synced && !state.synced[index] {
            let batches = state.stats[index].batches;
            self.synced(&mut state, index, batches, time);
        }
        state.next_turn = batch.seq + 1;
        let waiting = state.waiting_for_turn > 0;
        drop(state);
        if waiting {
            self.turn.notify_all();
        }
        self.end_at_limit();
    }

    /// Resource `index` holds its whole initial list.
    fn synced(&self, state: &mut State, index: usize, batches: u64, time: SystemTime) {
        state.synced[index] = true;
        if state.waiting_for_turn > 0 {
            // A handler's sync row may wait for this one.
            self.turn.notify_all();
        }
        let after = self.clock.now().saturating_duration_since(self.started);
        state.stats[index].record_synced(Synced { batches, after });
        if state.closed {
            return;
        }
        let view = EventView {
            resource: &self.names[index],
            time,
            event: Event::Synced { batches, after },
        };
        self.write_lane(index, state, |r| r.event(&view));
        if self.view.until_synced && !state.closed && state.synced.iter().all(|s| *s) {
            self.close(state, Ended::UntilSynced);
        }
    }

    /// Resource `index` has these handlers, in registration order.
    /// `registration_synced`: the client-go version imitated has per-handler `HasSynced`
    /// (1.27 onwards).
    fn handlers_started(&self, index: usize, names: &[String], registration_synced: bool) {
        let mut state = self.lock();
        if let Some(compared) = &mut state.compared {
            let handlers = names.iter().map(|name| Subject::Handler(name.clone()));
            compared.registered(index, handlers);
        }
        state.stats[index].handlers = names
            .iter()
            .map(|n| HandlerStats {
                synced_unknown: !registration_synced,
                ..HandlerStats::new(n)
            })
            .collect();
    }

    /// Resource `index` has these controllers, in registration order.
    fn controllers_started(&self, index: usize, controllers: &[ControllerSpec]) {
        let mut state = self.lock();
        if let Some(compared) = &mut state.compared {
            let names = controllers
                .iter()
                .map(|c| Subject::Controller(c.name.clone()));
            compared.registered(index, names);
        }
        state.controllers[index] = controllers
            .iter()
            .map(|c| {
                let runtime = if c.is_kube() {
                    Runtime::Kube
                } else {
                    Runtime::ClientGo
                };
                ControllerStats::new(&c.name, runtime, c.queue_name(), c.workers)
            })
            .collect();
    }

    /// The name of resource `index`, as the session's rows say it.
    fn resource_name(&self, index: usize) -> &str {
        &self.names[index]
    }

    /// A worker of controller `position` of resource `index` started a reconcile: written if
    /// the view shows reconciles and the output is open.
    fn reconcile_started(&self, index: usize, position: usize, start: &ReconcileStart<'_>) {
        let mut state = self.lock();
        if state.controllers[index].get(position).is_none()
            || state.closed
            || !self.view.shows_reconciles()
            || !self
                .view
                .narrow
                .shows_reconcile(start.key, start.started_at)
        {
            return;
        }
        self.write_lane(index, &mut state, |r| r.reconcile_started(start));
    }

    /// Controller `position` of resource `index` finished a reconcile: counted, and written if
    /// the view shows reconciles and the output is open.
    fn reconcile(&self, index: usize, position: usize, view: &ReconcileView<'_>) {
        let mut state = self.lock();
        let Some(stats) = state.controllers[index].get_mut(position) else {
            return;
        };
        stats.record(view);
        if let Some(compared) = &mut state.compared
            && (self.view.narrow).shows_reconcile(view.start.key, view.start.started_at)
        {
            compared.reconcile(index, view);
        }
        state.latest_reconcile = state.latest_reconcile.max(Some(view.time));
        if state.closed
            || !self.view.shows_reconciles()
            || !self.view.narrow.shows_reconcile(view.start.key, view.time)
        {
            return;
        }
        self.write_lane(index, &mut state, |r| r.reconcile(view));
    }

    /// A kube-runtime controller's note: written if the view shows reconciles and the output is
    /// open.
    fn controller_note(&self, index: usize, note: &ControllerNote<'_>) {
        let mut state = self.lock();
        if state.closed || !self.view.shows_reconciles() {
            return;
        }
        self.write_lane(index, &mut state, |r| r.controller_note(note));
    }

    /// The metrics of controller `position` of resource `index`'s queue, for the summary.
    fn controller_metrics(&self, index: usize, position: usize, metrics: QueueMetrics) {
        if let Some(stats) = self.lock().controllers[index].get_mut(position) {
            stats.metrics = metrics;
        }
    }

    /// Handler `handler` of resource `index` began a call at `time`: counted, and written if
    /// the view shows handlers, after the pop it came from (a handler's thread can be faster
    /// than the consumer writing that pop).
    fn notification(
        &self,
        index: usize,
        handler: usize,
        delivery: &Delivery<'_, Object>,
        time: SystemTime,
    ) {
        let mut state = self.lock();
        while state.next_turn <= delivery.batch && !self.stop.requested() {
            state = self.wait_for_turn(state);
        }
        let Some(stats) = state.stats[index].handlers.get_mut(handler) else {
            return;
        };
        stats.record_call(
            delivery.notification,
            delivery.is_sync,
            delivery.waited(),
            delivery.depth,
        );
        let name = stats.name.clone();
        let view = NotificationView {
            resource: &self.names[index],
            handler: &name,
            time,
            seq: delivery.batch,
            notification: delivery.notification,
            is_sync: delivery.is_sync,
            delivered: Some(Delivered {
                buffer_depth: delivery.depth,
                waited: delivery.waited(),
            }),
        };
        if let Some(compared) = &mut state.compared
            && (self.view.narrow).shows_notification(delivery.notification, delivery.batch, time)
        {
            compared.notification(index, &view);
        }
        let written = !state.closed || state.rows_through.is_some_and(|s| delivery.batch <= s);
        if !written || !self.view.shows_handlers() || !self.view.shows_notification(delivery, time)
        {
            return;
        }
        self.write_lane(index, &mut state, |r| r.notification(&view));
    }

    /// Handler `handler` of resource `index` has synced, at `at` (the session clock's instant;
    /// `time` on the wall).
    fn handler_synced(&self, index: usize, handler: usize, at: Instant, time: SystemTime) {
        let after = at.saturating_duration_since(self.started);
        let mut state = self.lock();
        // After the informer's own sync row: a handler can hear of the sync before the consumer
        // wrote the batch that made it.
        while !state.synced[index] && !self.stop.requested() {
            state = self.wait_for_turn(state);
        }
        let Some(stats) = state.stats[index].handlers.get_mut(handler) else {
            return;
        };
        stats.synced = Some(after);
        let name = stats.name.clone();
        // After a limit, a handler that syncs with the calls of the pops shown says so.
        let written = !state.closed || state.rows_through.is_some();
        if !written || !self.view.shows_handlers() {
            return;
        }
        let view = EventView {
            resource: &self.names[index],
            time,
            event: Event::HandlerSynced {
                handler: &name,
                after,
            },
        };
        self.write_lane(index, &mut state, |r| r.event(&view));
    }

    /// Says which queue resource `index` runs, how it is popped and the `profile` it imitates: its
    /// first line.
    fn informer_started(
        &self,
        index: usize,
        queue: QueueKind,
        batch_pop: usize,
        profile: &InformerProfile,
    ) {
        let mut state = self.lock();
        if state.closed {
            return;
        }
        let view = EventView {
            resource: &self.names[index],
            time: self.clock.wall(),
            event: Event::InformerStarted {
                queue,
                batch_pop,
                profile: Some(profile),
            },
        };
        self.write_lane(index, &mut state, |r| r.event(&view));
    }

    /// Says that resource `index` runs an UndeltaStore instead of a queue: its first line.
    fn undelta_started(&self, index: usize) {
        let mut state = self.lock();
        state.stats[index].undelta = true;
        if state.closed {
            return;
        }
        let view = EventView {
            resource: &self.names[index],
            time: self.clock.wall(),
            event: Event::UndeltaStarted,
        };
        self.write_lane(index, &mut state, |r| r.event(&view));
    }

    /// Handles a push of resource `index`'s UndeltaStore, made at `time`: numbers it (one
    /// sequence across resources, in the order pushes happen: each is handled in the store call
    /// that made it), counts it, writes it if the view shows it, reports the sync of the first
    /// one, and applies the limits as [`batch`](Output::batch) does.
    fn push(&self, index: usize, mut push: Push, time: SystemTime) {
        let mut state = self.lock();
        state.pushes += 1;
        push.seq = state.pushes;
        state.stats[index].record_push(&push);
        let shown = !(self.view.since_now && push.initial);
        if !state.closed && shown {
            let view = PushView {
                resource: &self.names[index],
                time,
                push: &push,
            };
            self.write_lane(index, &mut state, |r| r.push(&view));
            state.shown += 1;
            if !state.closed && self.view.max_batches.is_some_and(|max| state.shown >= max) {
                self.close(&mut state, Ended::MaxBatches);
            }
        }
        // An UndeltaStore has synced once it was written: its first push.
        if !state.synced[index] {
            let pushes = state.stats[index].pushes.count;
            self.synced(&mut state, index, pushes, time);
        }
        drop(state);
        self.end_at_limit();
    }

    /// A reflector event of resource `index`.
    fn event(&self, index: usize, event: &ReflectorEvent) {
        let mut state = self.lock();
        state.stats[index].record_event(&event.kind, event.at);
        if state.closed {
            return;
        }
        let view = EventView {
            resource: &self.names[index],
            time: event.at,
            event: Event::Reflector(&event.kind),
        };
        self.write_lane(index, &mut state, |r| r.event(&view));
    }

    /// Resource `index` synced at `at` with no batch to report it: an empty first list, which the
    /// queue's `Replace` synced (see [`InformerSink::synced`](kubectl_deltas::cache::InformerSink::synced)). Its handlers were let notice the
    /// sync before this call, so a limit that ends the session here waits for their
    /// `handler-synced` rows.
    fn synced_without_batch(&self, index: usize, at: SystemTime) {
        let mut state = self.lock();
        if state.synced[index] {
            return;
        }
        self.synced(&mut state, index, 0, at);
        drop(state);
        self.end_at_limit();
    }

    /// Runs the queue's resync and writes its row (at `at`), both under the output lock, so the
    /// row comes before any of the Sync batches it queued. Returns the resync's event. Without a
    /// queue (an UndeltaStore, whose `Resync` pushes nothing, as client-go's), only the row.
    fn resync(
        &self,
        index: usize,
        fifo: Option<&dyn InformerQueue<Object>>,
        at: SystemTime,
    ) -> ReflectorEvent {
        let mut state = self.lock();
        let keys = fifo.map_or(0, |fifo| fifo.resync());
        let event = ReflectorEvent {
            at,
            kind: ReflectorEventKind::Resync { keys },
        };
        state.stats[index].record_event(&event.kind, event.at);
        if !state.closed {
            let view = EventView {
                resource: &self.names[index],
                time: event.at,
                event: Event::Reflector(&event.kind),
            };
            self.write_lane(index, &mut state, |r| r.event(&view));
        }
        event
    }

    /// Redraws the status bar from the counters and the queues' current lengths.
    pub(super) fn refresh_status(&self, informers: &[Option<Arc<Informer>>]) {
        // Read before taking the output's lock: a plain informer's handler holds its queue's
        // lock for as long as it works.
        let counters: Vec<_> = informers.iter().map(informer_counters).collect();
        let stats = {
            let mut state = self.lock();
            for (stats, counters) in state.stats.iter_mut().zip(&counters) {
                record_counters(stats, counters);
            }
            state.stats.clone()
        };
        let names: Vec<String> = (0..self.names.len()).map(|i| self.lane_name(i)).collect();
        let pairs: Vec<(&str, &InformerStats)> =
            names.iter().map(String::as_str).zip(&stats).collect();
        self.status.update(&pairs, self.clock.wall());
    }

    /// Tells the renderer that the session has ended, with the statistics of the whole session
    /// (the `-o html` page is written then); a failure to write is the session's output failure.
    pub(super) fn finish(&self, informers: &[Option<Arc<Informer>>]) {
        let mut state = self.final_stats(informers);
        if state.failed.is_some() {
            return;
        }
        let names = &self.names;
        if let Some(compared) = &mut state.compared {
            compared.conclude(names);
        }
        let summary = self.summary_text(&state);
        self.release(&mut state, Release::Everything);
        let written = {
            let time = self.end_time(&state);
            let State {
                renderer,
                stats,
                controllers,
                closed,
                ..
            } = &mut *state;
            let end = session_end(&self.names, stats, controllers, time);
            match self.stacks.get() {
                _ if !end.is_unfinished() || *closed => Ok(()),
                None => self.status.suspend(|| renderer.ended(&end)),
                // Each lane's end with its stack named.
                Some(stacks) => self.status.suspend(|| {
                    for (lane, stack) in stacks.iter().enumerate() {
                        let at = lane..lane + 1;
                        let end = session_end(
                            &self.names[at.clone()],
                            &stats[at.clone()],
                            &controllers[at],
                            time,
                        );
                        if end.is_unfinished() {
                            renderer.stack(stack.as_deref());
                            renderer.ended(&end)?;
                        }
                    }
                    Ok(())
                }),
            }
        };
        if let Err(error) = written {
            self.fail(&mut state, error);
            return;
        }
        let State {
            renderer, compared, ..
        } = &mut *state;
        if let Some(compared) = compared {
            renderer.stack(None);
            if let Err(error) = self
                .status
                .suspend(|| renderer.comparison(compared.results()))
            {
                self.fail(&mut state, error);
                return;
            }
        }
        if let Err(error) = state.renderer.finish(&summary) {
            self.fail(&mut state, error);
        }
    }

    /// The summary table of the session so far.
    pub(super) fn summary(&self, informers: &[Option<Arc<Informer>>]) -> String {
        let state = self.final_stats(informers);
        self.summary_text(&state)
    }

    /// The summary tables of `state`: the informers', then the controllers' if any.
    fn summary_text(&self, state: &State) -> String {
        let names: Vec<String> = (0..self.names.len()).map(|i| self.lane_name(i)).collect();
        let pairs: Vec<(&str, &InformerStats)> =
            names.iter().map(String::as_str).zip(&state.stats).collect();
        let mut text = if state.compared.is_some() {
            side_by_side_table(&pairs)
        } else {
            summary_table(&pairs)
        };
        let controllers: Vec<(&str, &[ControllerStats])> = names
            .iter()
            .map(String::as_str)
            .zip(state.controllers.iter().map(Vec::as_slice))
            .collect();
        text.extend(controller_table(&controllers));
        let end = session_end(
            &self.names,
            &state.stats,
            &state.controllers,
            self.end_time(state),
        );
        text.push_str(&end.summary_lines(self.names.len() > 1));
        if let Some(compared) = &state.compared {
            text.push_str(&compared.summary_lines());
        }
        text
    }

    /// When the session ends: now, or the end of the latest reconcile if an instant replay's
    /// workers ran past the recording's last line.
    fn end_time(&self, state: &State) -> SystemTime {
        let now = self.clock.wall();
        state.latest_reconcile.map_or(now, |latest| latest.max(now))
    }

    /// The state, with the statistics completed from the informers' own counters and caches.
    fn final_stats(&self, informers: &[Option<Arc<Informer>>]) -> MutexGuard<'_, State> {
        let counters: Vec<_> = informers.iter().map(informer_counters).collect();
        let caches: Vec<Option<CacheSize>> = informers
            .iter()
            .map(|informer| {
                let objects = informer.as_ref()?.indexer().list();
                Some(CacheSize::of(objects.iter().map(|o| &**o)))
            })
            .collect();
        let mut state = self.lock();
        for ((stats, counters), cache) in state.stats.iter_mut().zip(&counters).zip(caches) {
            record_counters(stats, counters);
            stats.cache = cache;
        }
        state
    }

    /// The first write error, unless it was a reader going away (`| head`).
    pub(super) fn take_failure(&self) -> Option<io::Error> {
        self.lock()
            .failed
            .take()
            .filter(|e| e.kind() != io::ErrorKind::BrokenPipe)
    }
}

/// An informer's own counters: its queue's, and each handler's listener's; `None` for a resource
/// without one (an UndeltaStore's).
fn informer_counters(informer: &Option<Arc<Informer>>) -> Option<(QueueStats, Vec<ListenerStats>)> {
    let informer = informer.as_ref()?;
    let listeners = informer.listeners().iter().map(|l| l.stats()).collect();
    Some((informer.queue_stats(), listeners))
}

/// Takes an informer's own counters into its statistics.
fn record_counters(stats: &mut InformerStats, counters: &Option<(QueueStats, Vec<ListenerStats>)>) {
    let Some((queue, listeners)) = counters else {
        return;
    };
    stats.record_queue(queue);
    for (handler, listener) in stats.handlers.iter_mut().zip(listeners) {
        handler.record_listener(listener.depth, listener.abandoned);
    }
}

/// What one lane (one stack's informer, handlers and controllers on one resource) writes
/// through: the session's output, in the lane's place. Every row of the lane goes through it, so
/// nothing outside the output knows where a lane sits among the others.
#[derive(Clone)]
pub(super) struct LaneOutput {
    output: Arc<Output>,
    /// The lane's place in the output's per-lane state.
    index: usize,
}

impl Output {
    /// The handle of the `index`-th lane, in the order of the names the output was made with.
    pub(super) fn lane(self: &Arc<Self>, index: usize) -> LaneOutput {
        LaneOutput {
            output: self.clone(),
            index,
        }
    }
}

impl LaneOutput {
    /// The session's stop.
    pub(super) fn stop(&self) -> &Arc<Stop> {
        &self.output.stop
    }

    /// The name of the lane's resource, as the session's rows say it.
    pub(super) fn resource_name(&self) -> &str {
        self.output.resource_name(self.index)
    }

    /// The lane's place among the session's resources, from 0.
    pub(super) fn index(&self) -> usize {
        self.index
    }

    /// See [`Output::controller_note`].
    pub(super) fn controller_note(&self, note: &ControllerNote<'_>) {
        self.output.controller_note(self.index, note);
    }

    /// The handle of the lane's `position`-th handler (its place among the lane's listeners).
    pub(super) fn handler(&self, position: usize) -> HandlerOutput {
        HandlerOutput {
            lane: self.clone(),
            position,
        }
    }

    /// The handle of the lane's `position`-th controller.
    pub(super) fn controller(&self, position: usize) -> ControllerOutput {
        ControllerOutput {
            lane: self.clone(),
            position,
        }
    }

    /// See [`Output::batch`].
    pub(super) fn batch(
        &self,
        batch: &Batch<Object>,
        time: SystemTime,
        fifo: &QueueStats,
        skipped: &[Skipped<'_>],
    ) {
        self.output.batch(self.index, batch, time, fifo, skipped);
    }

    /// See [`Output::handlers_started`].
    pub(super) fn handlers_started(&self, names: &[String], registration_synced: bool) {
        self.output
            .handlers_started(self.index, names, registration_synced);
    }

    /// See [`Output::controllers_started`].
    pub(super) fn controllers_started(&self, controllers: &[ControllerSpec]) {
        self.output.controllers_started(self.index, controllers);
    }

    /// See [`Output::informer_started`].
    pub(super) fn informer_started(
        &self,
        queue: QueueKind,
        batch_pop: usize,
        profile: &InformerProfile,
    ) {
        self.output
            .informer_started(self.index, queue, batch_pop, profile);
    }

    /// See [`Output::undelta_started`].
    pub(super) fn undelta_started(&self) {
        self.output.undelta_started(self.index);
    }

    /// See [`Output::push`].
    pub(super) fn push(&self, push: Push, time: SystemTime) {
        self.output.push(self.index, push, time);
    }

    /// See [`Output::event`].
    pub(super) fn event(&self, event: &ReflectorEvent) {
        self.output.event(self.index, event);
    }

    /// See [`Output::synced_without_batch`].
    pub(super) fn synced_without_batch(&self, at: SystemTime) {
        self.output.synced_without_batch(self.index, at);
    }

    /// See [`Output::resync`].
    pub(super) fn resync(
        &self,
        fifo: Option<&dyn InformerQueue<Object>>,
        at: SystemTime,
    ) -> ReflectorEvent {
        self.output.resync(self.index, fifo, at)
    }
}

/// What one handler of a lane writes through.
pub(super) struct HandlerOutput {
    lane: LaneOutput,
    position: usize,
}

impl HandlerOutput {
    /// The session's stop.
    pub(super) fn stop(&self) -> &Arc<Stop> {
        self.lane.stop()
    }

    /// See [`Output::delaying`].
    pub(super) fn delaying(&self, delaying: bool) {
        (self.lane.output).delaying(self.lane.index, self.position, delaying);
    }

    /// See [`Output::notification`].
    pub(super) fn notification(&self, delivery: &Delivery<'_, Object>, time: SystemTime) {
        (self.lane.output).notification(self.lane.index, self.position, delivery, time);
    }

    /// See [`Output::handler_synced`].
    pub(super) fn handler_synced(&self, at: Instant, time: SystemTime) {
        (self.lane.output).handler_synced(self.lane.index, self.position, at, time);
    }
}

/// What one controller of a lane writes through.
#[derive(Clone)]
pub(super) struct ControllerOutput {
    lane: LaneOutput,
    position: usize,
}

impl ControllerOutput {
    /// The session's stop.
    pub(super) fn stop(&self) -> &Arc<Stop> {
        self.lane.stop()
    }

    /// The name of the lane's resource, as the session's rows say it.
    pub(super) fn resource_name(&self) -> &str {
        (self.lane.output).resource_name(self.lane.index)
    }

    /// See [`Output::reconcile_started`].
    pub(super) fn reconcile_started(&self, start: &ReconcileStart<'_>) {
        (self.lane.output).reconcile_started(self.lane.index, self.position, start);
    }

    /// See [`Output::reconcile`].
    pub(super) fn reconcile(&self, view: &ReconcileView<'_>) {
        (self.lane.output).reconcile(self.lane.index, self.position, view);
    }

    /// See [`Output::controller_metrics`].
    pub(super) fn metrics(&self, metrics: QueueMetrics) {
        (self.lane.output).controller_metrics(self.lane.index, self.position, metrics);
    }
}

/// What a session ending at `time` leaves unfinished: each resource's Reflector step and its
/// controllers with work left.
fn session_end<'a>(
    names: &'a [String],
    stats: &'a [InformerStats],
    controllers: &'a [Vec<ControllerStats>],
    time: SystemTime,
) -> SessionEnd<'a> {
    let resources = names
        .iter()
        .zip(stats)
        .zip(controllers)
        .map(|((name, stats), controllers)| ResourceEnd {
            resource: name,
            reflector: stats.reflector.unfinished(time),
            controllers: controllers
                .iter()
                .filter_map(|c| {
                    Some(ControllerEnd {
                        controller: &c.name,
                        running: c.running(),
                        waiting: c.waiting(),
                        text: c.unfinished()?,
                    })
                })
                .collect(),
        })
        .filter(ResourceEnd::is_unfinished)
        .collect();
    SessionEnd { time, resources }
}
