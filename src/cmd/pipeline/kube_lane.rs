//! The kube-runtime controllers of a lane (`--controller NAME,runtime=kube`): kube-runtime
//! 5.0.0's `Controller` ([`KubeController`]) on the same stream as the client-go rows.
//!
//! kube-runtime has no DeltaFIFO and no handlers: its `watcher()` hands the server's answers
//! to its reflector store and triggers at once. So a lane's kube controllers are fed from its
//! Reflector, not from the informer's notifications: every write of the Reflector into the
//! queue ([`StoreTap`]) and every step it reports (bookmarks, watch ends, relists, failed
//! lists: [`observe`](KubeLane::observe)) goes through one [`WatcherTranslator`] per lane, whose
//! watcher events every kube controller of the lane applies (`main_event`), at the session
//! clock's time of the write. Where kube-runtime would behave differently from the client-go
//! Reflector, the translator's and the controllers' notes are written as `── kube-runtime …`
//! rows.
//!
//! Two engines, as for the client-go controllers ([`controller`](super::controller)):
//! - an instant replay drives the controllers on the recording's clock: each write at its
//!   line's time, and at each replay turn, after the informer drained, every controller runs up
//!   to the next group's time ([`KubeLane::run_until`]); at the end of the recording each runs
//!   its reconciles, requeues of errors and requests still owed (not a reconciler's own
//!   `Action::requeue`, which would come back for ever). Every run writes the same bytes.
//! - a live watch, and a replay at `--speed X`, drive them on the session's clock: a thread
//!   sleeps until the earliest time something is due ([`KubeController::next_due`]) or a write
//!   wakes it, never polling.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hashbrown::HashMap;
use kubectl_deltas::cache::kube_runtime::{
    ControllerConfig, KubeController, Reason, Record, ReflectorStep, Scheduled, WatcherEvent,
    WatcherTranslator,
};
use kubectl_deltas::cache::reflector::{Clock, Phase};
use kubectl_deltas::cache::triggers::OwnerKind;
use kubectl_deltas::cache::workqueue::{Outcome, QueueMetrics, ReconcileResult, Reconciler};
use kubectl_deltas::cache::{ReflectorEvent, ReflectorEventKind, StoreTap, StoreWrite};
use kubectl_deltas::render::reconcile::{ControllerNote, ReconcileStart, ReconcileView, Runtime};

use super::output::{ControllerOutput, LaneOutput};
use super::spec_reconcile::{spec_result, wall};
use crate::cmd::plan::ControllerSpec;

/// What a reconcile of a kube controller does: `reconcile=`, `fail=`, `requeue-after=` of its
/// spec, as for a client-go controller.
struct KubeReconciler {
    spec: ControllerSpec,
    /// Reconciles that failed so far, per key, while `fail` applies.
    failed: HashMap<String, u32>,
}

impl Reconciler<String> for KubeReconciler {
    type Seen = ();

    fn reconcile(&mut self, key: &String, _attempt: u32, _started_at: Instant) -> Outcome<()> {
        Outcome {
            result: spec_result(&self.spec, &mut self.failed, key),
            duration: self.spec.reconcile,
            seen: (),
        }
    }
}

/// A request's wait for its reconcile: from its first request on.
#[derive(Debug, Clone, Copy)]
struct Wait {
    first: Instant,
    requests: u64,
    debounced: bool,
}

impl Wait {
    /// A wait since `first` of `requests` requests, not debounced.
    fn from(first: Instant, requests: u64) -> Self {
        Wait {
            first,
            requests,
            debounced: false,
        }
    }
}

/// What a started reconcile's end row repeats of its start.
#[derive(Debug, Clone)]
struct Started {
    reason: String,
    /// The owned object that requested it: `demo/web-7b9c (replicasets)`.
    owned: Option<String>,
    wait: Wait,
    resource_version: Option<String>,
}

impl Member {
    /// A reconcile of `key` starting at `at` for `reason`, reading `resource_version`: its wait
    /// since its first request taken from the keys waiting (one request at `at` if none was
    /// recorded).
    fn started(
        &mut self,
        at: Instant,
        key: &str,
        reason: &Reason,
        resource_version: Option<String>,
    ) -> Started {
        Started {
            owned: owned_object(reason),
            reason: reason.to_string(),
            wait: self.waits.remove(key).unwrap_or(Wait::from(at, 1)),
            resource_version,
        }
    }
}

/// One kube controller of the lane.
struct Member {
    controller: KubeController<KubeReconciler>,
    out: ControllerOutput,
    name: String,
    /// The scheduler's debounce: a request it postponed says so.
    debounce: Duration,
    /// Keys requested and not yet started, with their wait.
    waits: HashMap<String, Wait>,
    /// Keys being reconciled.
    running: HashMap<String, Started>,
    metrics: QueueMetrics,
}

struct State {
    translator: WatcherTranslator,
    members: Vec<Member>,
    /// Controllers of another lane that own this lane's objects (`owns=`), each with its
    /// place among its lane's members; this lane's watcher events are their owned stream.
    owners: Vec<(Arc<KubeLane>, usize)>,
}

thread_local! {
    /// The lanes whose state this thread holds while it may write rows. A write that fails (the
    /// reader of the output went away) stops the session from inside that lock, and the stop
    /// tells every lane ([`KubeLane::stopping`]): a lane this thread holds must not be locked
    /// again (a `Mutex` is not reentrant), and needs no wake (its holder is not waiting).
    static HOLDING: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// This thread holds a lane's state until it is dropped (see [`HOLDING`]).
struct Holding(usize);

impl Holding {
    fn enter(lane: &KubeLane) -> Self {
        let at = std::ptr::from_ref(lane) as usize;
        HOLDING.with(|h| h.borrow_mut().push(at));
        Holding(at)
    }

    fn held(lane: &KubeLane) -> bool {
        let at = std::ptr::from_ref(lane) as usize;
        HOLDING.with(|h| h.borrow().contains(&at))
    }
}

impl Drop for Holding {
    fn drop(&mut self) {
        HOLDING.with(|h| {
            let mut h = h.borrow_mut();
            if let Some(i) = h.iter().rposition(|at| *at == self.0) {
                h.remove(i);
            }
        });
    }
}

/// The kube controllers of one lane and their translator (see the module doc).
pub(super) struct KubeLane {
    state: Mutex<State>,
    /// Woken by every write and step, every flush of rows, and the stop.
    wake: Condvar,
    clock: Arc<dyn Clock>,
    lane: LaneOutput,
    /// An instant replay: driven by the replay's turns, no thread.
    inline: bool,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// Set at the stop; read under `state`'s lock before every wait.
    stopped: AtomicBool,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl KubeLane {
    /// No controller yet, writing through `lane`, on `clock`; `inline` for an instant replay.
    pub(super) fn new(lane: LaneOutput, clock: Arc<dyn Clock>, inline: bool) -> Arc<Self> {
        Arc::new(KubeLane {
            state: Mutex::new(State {
                translator: WatcherTranslator::new(),
                members: Vec::new(),
                owners: Vec::new(),
            }),
            wake: Condvar::new(),
            clock,
            lane,
            inline,
            thread: Mutex::new(None),
            stopped: AtomicBool::new(false),
        })
    }

    /// Adds controller `spec`, with kube-runtime's `debounce` and an error policy that
    /// requeues after `error_requeue`, writing through `out`, with `main` the type its owner
    /// references must name; returns its place among the lane's kube controllers.
    pub(super) fn add(
        &self,
        spec: &ControllerSpec,
        (debounce, error_requeue): (Duration, Duration),
        out: ControllerOutput,
        main: OwnerKind,
    ) -> usize {
        let config = ControllerConfig {
            concurrency: u16::try_from(spec.workers).unwrap_or(u16::MAX),
            debounce,
            error_requeue,
            predicates: spec.predicates.clone(),
            main,
        };
        let reconciler = KubeReconciler {
            spec: spec.clone(),
            failed: HashMap::new(),
        };
        let mut state = lock(&self.state);
        state.members.push(Member {
            controller: KubeController::new(config, reconciler, self.clock.now()),
            out,
            name: spec.name.clone(),
            debounce,
            waits: HashMap::new(),
            running: HashMap::new(),
            metrics: QueueMetrics::default(),
        });
        state.members.len() - 1
    }

    /// A step the Reflector reported: the ones kube-runtime's watcher acts on.
    pub(super) fn observe(&self, event: &ReflectorEvent) {
        let failed;
        let step = match &event.kind {
            ReflectorEventKind::Bookmark { .. } => ReflectorStep::Bookmark,
            ReflectorEventKind::WatchEnded { reason, .. } => ReflectorStep::WatchEnded(reason),
            ReflectorEventKind::Relist { cause } => ReflectorStep::Relist(cause),
            ReflectorEventKind::Backoff {
                phase: Phase::List,
                error,
                ..
            } => {
                failed = error.to_string();
                ReflectorStep::ListFailed(&failed)
            }
            _ => return,
        };
        self.step(step);
    }

    /// Translates `step` at the clock's now, applies its events to every controller and writes
    /// what they did.
    fn step(&self, step: ReflectorStep<'_>) {
        let now = self.clock.now();
        let mut state = lock(&self.state);
        let _holding = Holding::enter(self);
        let translation = state.translator.step(step);
        if let Some(text) = &translation.note {
            self.note(None, now, text);
        }
        for member in &mut state.members {
            for event in &translation.events {
                member.controller.main_event(event, now);
            }
            self.flush(member);
        }
        // Owners are always of the session's first lane, which owns no lane before it: locks
        // are taken in one order.
        let resource = self.lane.resource_name();
        for (owner, member) in &state.owners {
            owner.owned_events(*member, resource, &translation.events, now);
        }
        drop(state);
        self.wake.notify_all();
    }

    /// Controller `member` of another lane owns this lane's objects: it is told their events.
    pub(super) fn add_owner(&self, owner: Arc<KubeLane>, member: usize) {
        lock(&self.state).owners.push((owner, member));
    }

    /// Watcher events of `resource`, which controller `member` owns (`owned_event`, kube-runtime's
    /// `owns`: `trigger_owners` over `touched_objects`), at `now`.
    fn owned_events(&self, member: usize, resource: &str, events: &[WatcherEvent], now: Instant) {
        let mut state = lock(&self.state);
        let _holding = Holding::enter(self);
        if let Some(m) = state.members.get_mut(member) {
            for event in events {
                m.controller.owned_event(resource, event, now);
            }
            self.flush(m);
        }
        drop(state);
        self.wake.notify_all();
    }

    /// Writes the records `member` made since the last flush, in order.
    fn flush(&self, member: &mut Member) {
        for record in member.controller.drain() {
            match record {
                Record::Requested {
                    at, key, scheduled, ..
                } => {
                    member.metrics.adds += 1;
                    let pushed = !member.debounce.is_zero()
                        && matches!(scheduled, Scheduled::New(_) | Scheduled::Reset { .. });
                    let wait = member.waits.entry(key).or_insert(Wait::from(at, 0));
                    if wait.requests > 0 {
                        member.metrics.folded += 1;
                    }
                    wait.requests += 1;
                    wait.debounced |= pushed;
                    // The keys requested and not yet started: the scheduler's slots then.
                    let waiting = member.waits.len();
                    member.metrics.max_depth = member.metrics.max_depth.max(waiting);
                }
                Record::Started {
                    at,
                    key,
                    reason,
                    attempt,
                    resource_version,
                } => {
                    member.metrics.gets += 1;
                    let started = member.started(at, &key, &reason, resource_version);
                    let start = self.start_facts(member, &key, attempt, at, &started);
                    member.out.reconcile_started(&start);
                    member.running.insert(key, started);
                }
                Record::Reconciled(r) => {
                    member.metrics.dones += 1;
                    // The error policy's requeue: kube-runtime's retry.
                    if r.result == ReconcileResult::Error && r.requeue_in.is_some() {
                        member.metrics.retries += 1;
                    }
                    member.metrics.max_work_duration = (member.metrics.max_work_duration)
                        .max(r.ended_at.saturating_duration_since(r.started_at));
                    let Some(started) = member.running.remove(&r.key) else {
                        continue;
                    };
                    let start = self.start_facts(member, &r.key, r.attempt, r.started_at, &started);
                    let view = ReconcileView {
                        start,
                        time: wall(self.clock.as_ref(), r.ended_at),
                        result: r.result,
                        retry_in: r.requeue_in.filter(|_| r.result == ReconcileResult::Error),
                    };
                    member.out.reconcile(&view);
                }
                Record::Skipped { at, key, reason } => {
                    let started = member.started(at, &key, &reason, None);
                    let mut start = self.start_facts(member, &key, 1, at, &started);
                    start.skipped = true;
                    self.not_run(member, start);
                }
                Record::Filtered {
                    at,
                    key,
                    predicates,
                    ..
                } => {
                    let started = Started {
                        owned: None,
                        reason: String::new(),
                        wait: Wait::from(at, 1),
                        resource_version: None,
                    };
                    let predicates = predicates.to_string();
                    let mut start = self.start_facts(member, &key, 1, at, &started);
                    start.filtered = Some(&predicates);
                    self.not_run(member, start);
                }
                Record::DeleteIgnored { at, key } => {
                    let text = format!(
                        "kube-runtime: {key} deleted: its Controller requests no reconcile \
                         (Controller::new triggers on applied_objects, which passes Apply and \
                         InitApply only)"
                    );
                    self.note(Some(&member.name), at, &text);
                }
                Record::Note { at, text } => self.note(Some(&member.name), at, &text),
            }
        }
    }

    /// The start row's facts of `key`'s reconcile started at `at`.
    fn start_facts<'a>(
        &self,
        member: &'a Member,
        key: &'a str,
        attempt: u32,
        at: Instant,
        started: &'a Started,
    ) -> ReconcileStart<'a> {
        let clock = self.clock.as_ref();
        ReconcileStart {
            runtime: Runtime::Kube,
            reason: Some(started.reason.as_str()).filter(|r| !r.is_empty()),
            owned: started.owned.as_deref(),
            debounced: started.wait.debounced,
            skipped: false,
            filtered: None,
            resource: member.out.resource_name(),
            controller: &member.name,
            worker: 0,
            key,
            attempt,
            queued_at: wall(clock, started.wait.first),
            latest_add: None,
            started_at: wall(clock, at),
            adds: started.wait.requests,
            requeued: false,
            resource_version: started.resource_version.as_deref(),
            priority: None,
            priority_reason: None,
        }
    }

    /// A request that did not become a reconcile: one row, ending where it starts.
    fn not_run(&self, member: &Member, start: ReconcileStart<'_>) {
        let view = ReconcileView {
            time: start.started_at,
            start,
            result: ReconcileResult::Ok,
            retry_in: None,
        };
        member.out.reconcile(&view);
    }

    fn note(&self, controller: Option<&str>, at: Instant, text: &str) {
        self.lane.controller_note(&ControllerNote {
            resource: self.lane.resource_name(),
            controller,
            time: wall(self.clock.as_ref(), at),
            text,
        });
    }

    /// An instant replay's turn: every controller runs up to `next`, the next group's time.
    pub(super) fn run_until(&self, next: Instant) {
        let mut state = lock(&self.state);
        let _holding = Holding::enter(self);
        for member in &mut state.members {
            member.controller.run_until(next);
            self.flush(member);
        }
    }

    /// The end of the input: each controller's work still owed, earliest first across them,
    /// until none is owed or the session stops. A live lane waits for its thread to do the
    /// same.
    pub(super) fn finish(&self) {
        let mut state = lock(&self.state);
        let _holding = Holding::enter(self);
        if !self.inline {
            // Work owed with nothing ever due (a store never ready) is not waited for, as inline.
            let owed = |m: &Member| m.controller.owes_work() && m.controller.next_due().is_some();
            while !self.stopped.load(Ordering::SeqCst) && state.members.iter().any(owed) {
                state = self.wake.wait(state).unwrap_or_else(|e| e.into_inner());
            }
            return;
        }
        while !self.lane.stop().requested() {
            let earliest = (state.members.iter().enumerate())
                .filter(|(_, m)| m.controller.owes_work())
                .filter_map(|(i, m)| m.controller.next_due().map(|at| (at, i)))
                .min();
            let Some((at, i)) = earliest else {
                break;
            };
            let member = &mut state.members[i];
            member.controller.run_through(at);
            self.flush(member);
        }
    }

    /// Starts the thread of a live lane, once.
    pub(super) fn start(self: &Arc<Self>) -> std::io::Result<()> {
        let mut thread = lock(&self.thread);
        if self.inline || thread.is_some() {
            return Ok(());
        }
        let lane = self.clone();
        *thread = Some(
            std::thread::Builder::new()
                .name("kube-controller".into())
                .spawn(move || lane.live())?,
        );
        Ok(())
    }

    /// The live loop: whatever is due by now runs, then the thread sleeps until the next thing
    /// is due or a write or the stop wakes it.
    fn live(&self) {
        let mut state = lock(&self.state);
        let _holding = Holding::enter(self);
        while !self.stopped.load(Ordering::SeqCst) {
            let now = self.clock.now();
            for member in &mut state.members {
                member.controller.run_through(now);
                self.flush(member);
            }
            self.wake.notify_all();
            // A failed write in the flush may have stopped the session.
            if self.stopped.load(Ordering::SeqCst) {
                break;
            }
            let due = (state.members.iter())
                .filter_map(|m| m.controller.next_due())
                .min();
            state = match due {
                None => self.wake.wait(state).unwrap_or_else(|e| e.into_inner()),
                Some(due) => {
                    let left = due.saturating_duration_since(self.clock.now());
                    let real = self.clock.in_real_time(left);
                    match self.wake.wait_timeout(state, real) {
                        Ok((state, _)) => state,
                        Err(e) => e.into_inner().0,
                    }
                }
            };
        }
    }

    /// At the stop: the live thread leaves at its next wake, which this is.
    pub(super) fn stopping(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        if Holding::held(self) {
            return;
        }
        // Taken and let go, so that a thread between its check of `stopped` and its wait has
        // begun waiting before the wake.
        drop(lock(&self.state));
        self.wake.notify_all();
    }

    /// Waits for the live thread to leave.
    pub(super) fn join(&self) {
        if let Some(thread) = lock(&self.thread).take() {
            let _ = thread.join();
        }
    }

    /// Controller `member`'s counters in the workqueue's terms: requests as adds, requests
    /// merged into a waiting slot as folded, requests waiting as the depth.
    pub(super) fn metrics(&self, member: usize) -> QueueMetrics {
        let state = lock(&self.state);
        let Some(m) = state.members.get(member) else {
            return QueueMetrics::default();
        };
        QueueMetrics {
            depth: m.controller.waiting(),
            ..m.metrics
        }
    }
}

/// `demo/web-7b9c (replicasets)` for a request an owned object made.
fn owned_object(reason: &Reason) -> Option<String> {
    match reason {
        Reason::OwnedObjectUpdated { resource, key } => Some(format!("{key} ({resource})")),
        _ => None,
    }
}

impl StoreTap for KubeLane {
    fn written(&self, write: StoreWrite<'_>) {
        let step = match write {
            StoreWrite::Add(o) => ReflectorStep::Added(o),
            StoreWrite::Update(o) => ReflectorStep::Updated(o),
            StoreWrite::Delete(d) => match d.object() {
                Some(o) => ReflectorStep::Deleted(o),
                None => return,
            },
            StoreWrite::Replace(items) => ReflectorStep::Replaced(items),
        };
        self.step(step);
    }
}
