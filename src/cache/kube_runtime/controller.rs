//! kube-runtime's `Controller` (`src/controller/mod.rs`: `applier`, `RescheduleReconciliation`;
//! `src/controller/runner.rs`: `Runner`; `src/controller/trigger.rs`: `trigger_self`,
//! `trigger_owners`; 5.0.0) as a state machine on the caller's clock, like
//! [`InlineWorkers`](crate::cache::workqueue::InlineWorkers) for client-go's workqueue.
//!
//! - Triggers: the main resource's `Apply` and `InitApply` request a reconcile of that object
//!   (`Controller::new` is `trigger_self(reflector(…).applied_objects())`); its `Delete` requests
//!   nothing. An owned resource's `Apply`, `InitApply` and `Delete` request a reconcile of each
//!   owner of the main type (`owns`: `trigger_owners` over `touched_objects`). Each stream may
//!   pass a `predicate_filter` first (one cache per stream).
//! - The [`Scheduler`] holds the requests (one slot per object, debounce).
//! - `Runner`: nothing starts before the store is ready (`delay_tasks_until(wait_until_ready)`);
//!   at most `concurrency` reconciles run at once (0: unbounded, kube-runtime's default); never
//!   two for one object: a request for a running object waits in its slot, becomes pending when
//!   due, and runs once after it.
//! - Dispatch reads the store: an object not there is not reconciled (`Error::ObjectNotFound`)
//!   and nothing is rescheduled; otherwise the reconcile sees the store's object as of then.
//! - After a reconcile (`RescheduleReconciliation`): an `Action::requeue(d)` from the reconciler,
//!   or the error policy's after an error, is a new request at end + d, which the scheduler
//!   treats like any other (a watch event before it resets the slot to the event's time, so the
//!   event's reconcile supersedes the requeue); `await_change` requests nothing. kube-runtime has
//!   no per-object backoff: the error policy here always requeues after `error_requeue`.
//!
//! Things due at one instant happen in a fixed order: reconciles ending (by key), then the
//! input at that instant, then starts; so every event of one instant reaches the store and the
//! scheduler before a reconcile starts, as a burst read in one poll of the `Runner` would.

use std::collections::HashMap;
use std::fmt;
use std::time::{Duration, Instant};

use super::reason::Reason;
use super::scheduler::{Scheduled, Scheduler};
use super::store::Store;
use super::watcher::WatcherEvent;
use crate::cache::key::object_key;
use crate::cache::triggers::{OwnerKind, PredicateCache, Predicates, kube_owner_keys};
use crate::cache::workqueue::{Outcome, ReconcileResult, Reconciler};

/// The error policy's requeue when none is given: the controller spec's `error-requeue` default.
pub const DEFAULT_ERROR_REQUEUE: Duration = Duration::from_secs(5);

/// How the Controller runs (kube-runtime's `controller::Config` and the controller spec).
#[derive(Debug, Clone)]
pub struct ControllerConfig {
    /// `Config::concurrency`: reconciles at once; 0 is unbounded.
    pub concurrency: u16,
    /// `Config::debounce`.
    pub debounce: Duration,
    /// What the error policy returns: `Action::requeue(error_requeue)`.
    pub error_requeue: Duration,
    /// The predicates every trigger stream passes (none: all pass).
    pub predicates: Predicates,
    /// The main resource's type, which owner references must name.
    pub main: OwnerKind,
}

impl ControllerConfig {
    /// kube-runtime's defaults for the main type `main`.
    pub fn new(main: OwnerKind) -> Self {
        ControllerConfig {
            concurrency: 0,
            debounce: Duration::ZERO,
            error_requeue: DEFAULT_ERROR_REQUEUE,
            predicates: Predicates::default(),
            main,
        }
    }
}

/// One finished reconcile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeReconcile<S> {
    /// The object's key.
    pub key: String,
    /// The reason of the request it served.
    pub reason: Reason,
    /// 1 + the object's failures in a row before it.
    pub attempt: u32,
    /// When it started.
    pub started_at: Instant,
    /// When it ended.
    pub ended_at: Instant,
    /// The resourceVersion of the store's object it was handed.
    pub resource_version: Option<String>,
    /// What it returned.
    pub result: ReconcileResult,
    /// The requeue it asked for (or the error policy's).
    pub requeue_in: Option<Duration>,
    /// What the reconciler saw.
    pub seen: S,
}

/// What the Controller did, in order: what a timeline shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record<S> {
    /// A request reached the scheduler.
    Requested {
        /// When.
        at: Instant,
        /// The object to reconcile.
        key: String,
        /// Why.
        reason: Reason,
        /// What the scheduler did with it.
        scheduled: Scheduled,
    },
    /// A predicate dropped an object: no request.
    Filtered {
        /// When.
        at: Instant,
        /// The object the predicate saw.
        key: String,
        /// The owned resource it came from; `None` for the main resource.
        owned: Option<String>,
        /// The predicates.
        predicates: Predicates,
    },
    /// The main object was deleted: kube-runtime's Controller requests nothing.
    DeleteIgnored {
        /// When.
        at: Instant,
        /// The object.
        key: String,
    },
    /// A request was dispatched but its object was not in the store (`ObjectNotFound`).
    Skipped {
        /// When.
        at: Instant,
        /// The object.
        key: String,
        /// The request's reason.
        reason: Reason,
    },
    /// A reconcile started (the `Runner` took the request and the store had the object).
    Started {
        /// When.
        at: Instant,
        /// The object.
        key: String,
        /// The request's reason.
        reason: Reason,
        /// 1 + the object's failures in a row before it.
        attempt: u32,
        /// The resourceVersion of the store's object it was handed.
        resource_version: Option<String>,
    },
    /// A reconcile ended.
    Reconciled(KubeReconcile<S>),
    /// Where kube-runtime differs from what the recording's times show.
    Note {
        /// When.
        at: Instant,
        /// One sentence.
        text: String,
    },
}

/// The Controller's trigger backoff (`Controller::trigger_backoff`, by default
/// `watcher::DefaultBackoff`: 0.8 s doubling to 30 s, plus a jitter of up to as much again;
/// `StreamBackoff` resets it at every request that passes).
#[derive(Debug, Clone, Default)]
pub struct TriggerBackoff {
    errors_in_a_row: u32,
}

impl TriggerBackoff {
    /// The delay after one more error, without its jitter (which adds up to as much again).
    pub fn next_delay(&mut self) -> Duration {
        let base = Duration::from_millis(800)
            .saturating_mul(1u32 << self.errors_in_a_row.min(6))
            .min(Duration::from_secs(30));
        self.errors_in_a_row = self.errors_in_a_row.saturating_add(1);
        base
    }

    /// A request passed: `StreamBackoff` resets.
    pub fn reset(&mut self) {
        self.errors_in_a_row = 0;
    }
}

struct Running<S> {
    reason: Reason,
    attempt: u32,
    started_at: Instant,
    resource_version: Option<String>,
    outcome: Outcome<S>,
}

/// kube-runtime's Controller, driven by its caller (see the module doc).
pub struct KubeController<R: Reconciler<String>> {
    config: ControllerConfig,
    store: Store,
    scheduler: Scheduler,
    main_filter: PredicateCache,
    owned_filters: HashMap<String, PredicateCache>,
    running: HashMap<String, Running<R::Seen>>,
    failures: HashMap<String, u32>,
    backoff: TriggerBackoff,
    reconciler: R,
    now: Instant,
    records: Vec<Record<R::Seen>>,
}

impl<R: Reconciler<String>> fmt::Debug for KubeController<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KubeController")
            .field("config", &self.config)
            .field("running", &self.running.len())
            .field("now", &self.now)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    End(String),
    Start,
}

impl<R: Reconciler<String>> KubeController<R> {
    /// A Controller with an empty store, its clock at `start`.
    pub fn new(config: ControllerConfig, reconciler: R, start: Instant) -> Self {
        KubeController {
            scheduler: Scheduler::new(config.debounce),
            main_filter: PredicateCache::new(config.predicates.clone()),
            owned_filters: HashMap::new(),
            store: Store::new(),
            running: HashMap::new(),
            failures: HashMap::new(),
            backoff: TriggerBackoff::default(),
            reconciler,
            now: start,
            records: Vec::new(),
            config,
        }
    }

    /// A watcher event of the main resource at `at`: the store applies it, then its trigger.
    pub fn main_event(&mut self, event: &WatcherEvent, at: Instant) {
        self.run_until(at);
        self.store.apply_watcher_event(event);
        let (obj, reason) = match event {
            WatcherEvent::Apply(o) => (o, Reason::ObjectUpdated),
            WatcherEvent::InitApply(o) => (o, Reason::Relist),
            WatcherEvent::Delete(o) => {
                let key = object_key(&**o);
                self.records
                    .push(Record::DeleteIgnored { at: self.now, key });
                return;
            }
            WatcherEvent::Error(e) => return self.error(e),
            WatcherEvent::Init | WatcherEvent::InitDone => return,
        };
        let key = object_key(&**obj);
        if self.main_filter.admit(obj, self.now) {
            self.request(&key, reason);
        } else {
            self.filtered(key, None);
        }
    }

    /// A watcher event of the owned resource `resource` at `at`: each owner of the main type is
    /// requested (deletes included), unless the stream's predicate drops the object.
    pub fn owned_event(&mut self, resource: &str, event: &WatcherEvent, at: Instant) {
        self.run_until(at);
        let obj = match event {
            WatcherEvent::Apply(o) | WatcherEvent::InitApply(o) | WatcherEvent::Delete(o) => o,
            WatcherEvent::Error(e) => return self.error(e),
            WatcherEvent::Init | WatcherEvent::InitDone => return,
        };
        let child = object_key(&**obj);
        let predicates = &self.config.predicates;
        let filter = self
            .owned_filters
            .entry(resource.to_owned())
            .or_insert_with(|| PredicateCache::new(predicates.clone()));
        if !filter.admit(obj, self.now) {
            return self.filtered(child, Some(resource.to_owned()));
        }
        for owner in kube_owner_keys(&self.config.main, obj) {
            let reason = Reason::OwnedObjectUpdated {
                resource: resource.to_owned(),
                key: child.clone(),
            };
            self.request(&owner, reason);
        }
    }

    fn filtered(&mut self, key: String, owned: Option<String>) {
        self.records.push(Record::Filtered {
            at: self.now,
            key,
            owned,
            predicates: self.config.predicates.clone(),
        });
    }

    fn error(&mut self, error: &str) {
        let delay = self.backoff.next_delay();
        self.records.push(Record::Note {
            at: self.now,
            text: format!(
                "kube-runtime: {error}: its Controller stops reading its streams for {} to {} (trigger backoff); the times here are the recording's",
                humantime::format_duration(delay),
                humantime::format_duration(delay * 2),
            ),
        });
    }

    /// Whether `key` could start now, but for its scheduling.
    fn can_take(&self, key: &str) -> bool {
        self.store.is_ready() && self.has_capacity() && !self.running.contains_key(key)
    }

    fn has_capacity(&self) -> bool {
        self.config.concurrency == 0 || self.running.len() < usize::from(self.config.concurrency)
    }

    fn request(&mut self, key: &str, reason: Reason) {
        self.backoff.reset();
        self.schedule(key, self.now, reason);
    }

    fn schedule(&mut self, key: &str, run_at: Instant, reason: Reason) {
        let now = self.now;
        let mut scheduler = std::mem::take(&mut self.scheduler);
        scheduler.hold_expired(now, |k| self.can_take(k));
        let scheduled = scheduler.schedule(key, run_at, reason.clone());
        self.scheduler = scheduler;
        self.records.push(Record::Requested {
            at: now,
            key: key.to_owned(),
            reason,
            scheduled,
        });
    }

    /// Moves the clock to `t`: reconciles end and due requests start at every instant before
    /// `t`; at `t` itself reconciles end, but starts wait for the input at `t`.
    pub fn run_until(&mut self, t: Instant) {
        self.run(t, false);
    }

    /// [`run_until`](KubeController::run_until) `t`, and starts at `t` too.
    pub fn run_through(&mut self, t: Instant) {
        self.run(t, true);
    }

    fn run(&mut self, t: Instant, starts_at_t: bool) {
        while let Some((at, step)) = self.next_step(t, starts_at_t) {
            self.now = self.now.max(at);
            match step {
                Step::End(key) => self.end(&key),
                Step::Start => {
                    if !self.start() {
                        break;
                    }
                }
            }
        }
        self.now = self.now.max(t);
    }

    fn next_step(&self, t: Instant, starts_at_t: bool) -> Option<(Instant, Step)> {
        let end = self
            .running
            .iter()
            .map(|(k, r)| (r.started_at + r.outcome.duration, Step::End(k.clone())))
            .filter(|(at, _)| *at <= t)
            .min();
        let start = (self.store.is_ready() && self.has_capacity())
            .then(|| {
                self.scheduler
                    .next_takeable(self.now, |k| !self.running.contains_key(k))
            })
            .flatten()
            .filter(|at| *at < t || (starts_at_t && *at <= t))
            .map(|at| (at, Step::Start));
        [end, start].into_iter().flatten().min()
    }

    /// The `Runner` takes a request and the applier dispatches it; false when there was none to
    /// take (which `next_step` rules out, so a run cannot spin on it).
    fn start(&mut self) -> bool {
        let running = &self.running;
        let Some((key, reason)) = self.scheduler.pop(self.now, |k| !running.contains_key(k)) else {
            return false;
        };
        let Some(obj) = self.store.get(&key) else {
            self.records.push(Record::Skipped {
                at: self.now,
                key,
                reason,
            });
            return true;
        };
        let resource_version = obj.resource_version().map(str::to_owned);
        let attempt = self.failures.get(&key).copied().unwrap_or(0) + 1;
        let outcome = self.reconciler.reconcile(&key, attempt, self.now);
        self.records.push(Record::Started {
            at: self.now,
            key: key.clone(),
            reason: reason.clone(),
            attempt,
            resource_version: resource_version.clone(),
        });
        self.running.insert(
            key,
            Running {
                reason,
                attempt,
                started_at: self.now,
                resource_version,
                outcome,
            },
        );
        true
    }

    /// A reconcile ends: `RescheduleReconciliation`, then the slot frees.
    fn end(&mut self, key: &str) {
        let Some(r) = self.running.remove(key) else {
            return;
        };
        let requeue = match r.outcome.result {
            ReconcileResult::Ok => {
                self.failures.remove(key);
                None
            }
            ReconcileResult::RequeueAfter(d) => {
                self.failures.remove(key);
                Some((d, Reason::Requeue))
            }
            ReconcileResult::Error => {
                *self.failures.entry(key.to_owned()).or_insert(0) += 1;
                Some((self.config.error_requeue, Reason::ErrorRequeue))
            }
        };
        self.records.push(Record::Reconciled(KubeReconcile {
            key: key.to_owned(),
            reason: r.reason,
            attempt: r.attempt,
            started_at: r.started_at,
            ended_at: self.now,
            resource_version: r.resource_version,
            result: r.outcome.result,
            requeue_in: requeue.as_ref().map(|(d, _)| *d),
            seen: r.outcome.seen,
        }));
        if let Some((d, reason)) = requeue {
            self.schedule(key, self.now + d, reason);
        }
    }

    /// What happened since the last call, in order.
    pub fn drain(&mut self) -> Vec<Record<R::Seen>> {
        std::mem::take(&mut self.records)
    }

    /// The earliest time something is due without new input: a reconcile's end or a request's
    /// start.
    pub fn next_due(&self) -> Option<Instant> {
        let far = self.now + Duration::from_secs(86400 * 365 * 100);
        self.next_step(far, true).map(|(at, _)| at)
    }

    /// Whether work is left that the end of an input still waits for: a reconcile running, or
    /// a request other than a reconciler's own `Action::requeue` (which would come back for
    /// ever).
    pub fn owes_work(&self) -> bool {
        !self.running.is_empty() || self.scheduler.any_reason(|r| *r != Reason::Requeue)
    }

    /// Requests in the scheduler: waiting for their time, or due and held.
    pub fn waiting(&self) -> usize {
        self.scheduler.len()
    }

    /// The Controller's time.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// The store the Controller reads.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Objects being reconciled, with their start.
    pub fn running(&self) -> impl Iterator<Item = (&String, Instant)> {
        self.running.iter().map(|(k, r)| (k, r.started_at))
    }

    /// The reconciler.
    pub fn reconciler(&self) -> &R {
        &self.reconciler
    }
}

#[cfg(test)]
#[path = "controller_tests.rs"]
mod tests;
