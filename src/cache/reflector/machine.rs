//! ListAndWatch as an explicit state machine: [`State`] says where the Reflector is, and
//! [`Machine::step`] performs one transition (one request, one watch event, or one wait). Every
//! decision client-go's `Reflector.ListAndWatch`/`watch`/`handleWatch` makes is one arm of the
//! `match` in `step` or of the functions it calls.
//!
//! A ListAndWatch (client-go's unit of retry) is: a list (or a streaming list), then watches from
//! its resourceVersion until one ends in a way that needs a relist. Every such end goes through
//! [`Machine::relist`], which also stops the resync timer that client-go's `watchWithResync` runs
//! only while watching.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::object::Object;
use futures_util::StreamExt;

use super::backoff::Backoff;
use super::config::{ReflectorConfig, WatchListFallback};
use super::error::{ReflectorError, is_terminal};
use super::event::{
    Phase, ReflectorEvent, ReflectorEventKind, ReflectorObserver, RelistCause, WatchEndReason,
};
use crate::cache::clock::Clock;
use crate::cache::delta::DeltaObject;
use crate::cache::key::object_key;
use crate::cache::listwatch::{
    ListRequest, ListerWatcher, RandomChoice, ResourceTarget, SourceError, WatchEvent,
    WatchRequest, WatchStream,
};
use crate::cache::store::ReflectorStore;

use super::config::DEFAULT_PAGE_SIZE;

/// A duration as a watch's `timeoutSeconds`: whole seconds, rounded up, at least one.
fn whole_seconds(t: Duration) -> u32 {
    u32::try_from(t.as_secs() + u64::from(t.subsec_nanos() > 0))
        .unwrap_or(u32::MAX)
        .max(1)
}

/// A watch shorter than this that delivered nothing is "very short" (client-go: 1 s).
const VERY_SHORT_WATCH: Duration = Duration::from_secs(1);

/// The random watch timeout range of client-go, in seconds: [5 min, 10 min).
const WATCH_TIMEOUT_RANGE: std::ops::Range<u32> = 300..600;

/// The state shared between the state machine, the resync timer and the periodic consistency
/// check.
#[derive(Debug)]
pub(super) struct Shared {
    /// The last synced resourceVersion. The machine holds this lock while it queues a watch event
    /// and records its resourceVersion, so that a holder of the lock who sees an empty FIFO
    /// knows the consumer's cache reflects exactly this resourceVersion.
    last_synced: Mutex<String>,
    /// `Some(n)` while the n-th ListAndWatch is in its watch phase (client-go's
    /// `watchWithResync`: from the end of a successful list until the watch loop gives up and a
    /// relist follows), `None` otherwise. The resync timer runs only while it is `Some`, and
    /// starts over with every new value.
    watch_phase: tokio::sync::watch::Sender<Option<u64>>,
    /// `Some` while a consistency check compares the cache with a list newer than it (see
    /// `verify.rs`): what the machine queued since the check started tracking. Only changed with
    /// `last_synced` held (locked after it), so that a snapshot of the cache taken under that
    /// lock and the changes taken with it describe the same moment.
    changes: Mutex<Option<Changes>>,
}

/// What the machine queued while a consistency check tracked it.
#[derive(Debug, Default)]
pub(super) struct Changes {
    /// The keys of the watch events queued.
    pub(super) keys: BTreeSet<String>,
    /// A list (or a streaming list's end) replaced the whole cache.
    pub(super) replaced: bool,
}

impl Default for Shared {
    fn default() -> Self {
        Shared {
            last_synced: Mutex::default(),
            watch_phase: tokio::sync::watch::Sender::new(None),
            changes: Mutex::default(),
        }
    }
}

impl Shared {
    pub(super) fn lock(&self) -> MutexGuard<'_, String> {
        self.last_synced.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn changes(&self) -> MutexGuard<'_, Option<Changes>> {
        self.changes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts recording what the machine queues (see [`Shared::changes`]), from nothing.
    pub(super) fn track_changes(&self) {
        *self.changes() = Some(Changes::default());
    }

    /// Stops recording, and returns what was recorded. Take it with `last_synced` held to have
    /// it match a snapshot of the cache.
    pub(super) fn take_changes(&self) -> Option<Changes> {
        self.changes().take()
    }

    /// Records a queued watch event's key, while a check tracks them; called with `last_synced`
    /// held.
    pub(super) fn note_change(&self, key: impl FnOnce() -> String) {
        if let Some(changes) = self.changes().as_mut() {
            changes.keys.insert(key());
        }
    }

    /// Records a replace of the whole cache, while a check tracks changes; called with
    /// `last_synced` held.
    pub(super) fn note_replace(&self) {
        if let Some(changes) = self.changes().as_mut() {
            changes.replaced = true;
        }
    }

    /// Follows the watch phases (see [`Shared::watch_phase`]).
    pub(super) fn watch_phases(&self) -> tokio::sync::watch::Receiver<Option<u64>> {
        self.watch_phase.subscribe()
    }

    fn enter_watch_phase(&self) {
        self.watch_phase.send_modify(|phase| {
            *phase = Some(phase.map_or(1, |n| n + 1));
        });
    }

    fn leave_watch_phase(&self) {
        self.watch_phase
            .send_if_modified(|phase| phase.take().is_some());
    }
}

/// Where the Reflector is.
pub(super) enum State {
    /// About to list from the first page, at `resource_version`.
    List { resource_version: String },
    /// Between pages of a list.
    Paging(Box<Paging>),
    /// About to open a watch from `resource_version`; a streaming list when
    /// `send_initial_events`.
    Watch {
        resource_version: String,
        send_initial_events: bool,
    },
    /// Reading a watch stream.
    Watching(Box<Watching>),
    /// Publishing the failure that made it back off, waiting `delay` (or the delay the source
    /// recorded), then going on with `next`.
    Backoff {
        delay: Duration,
        phase: Phase,
        error: SourceError,
        next: Box<State>,
    },
}

/// A list in progress (client-go's `tools/pager` with the Reflector's page size).
pub(super) struct Paging {
    /// The resourceVersion the list was started at.
    requested: String,
    /// The page size asked for; `None` lists everything in one request.
    limit: Option<u32>,
    /// The token for the next page; `None` for the first page.
    continue_token: Option<String>,
    /// Whether a page came with a `continue` token (the pager's `paginatedResult`).
    paginated: bool,
    /// Objects of the pages received so far, transformed.
    items: Vec<Arc<Object>>,
    pages: u32,
    started: Instant,
}

/// An open watch.
pub(super) struct Watching {
    stream: WatchStream,
    started: Instant,
    /// Events delivered, bookmarks included.
    events: u64,
    /// False while a watch started from `""` or `"0"` has delivered only ADDED events: those carry
    /// resourceVersions in no particular order, so the last synced one must not move yet.
    advance_rv: bool,
    /// For a streaming list: objects received before the `initial-events-end` bookmark, by key.
    initial: Option<InitialEvents>,
}

/// A streaming list's initial state, buffered until its end bookmark.
pub(super) struct InitialEvents {
    objects: BTreeMap<String, Arc<Object>>,
    started: Instant,
}

/// The Reflector's moving parts, advanced by [`step`](Machine::step).
pub(super) struct Machine<L> {
    pub(super) lw: Arc<L>,
    pub(super) store: Arc<dyn ReflectorStore<Object>>,
    pub(super) config: ReflectorConfig,
    pub(super) target: ResourceTarget,
    pub(super) clock: Arc<dyn Clock>,
    pub(super) observer: Arc<dyn ReflectorObserver>,
    pub(super) shared: Arc<Shared>,
    backoff: Backoff,
    rng: fastrand::Rng,
    /// client-go's `isLastSyncResourceVersionUnavailable`: a list at the last synced
    /// resourceVersion failed as expired or too large, so lists are consistent reads (`""`) until
    /// one succeeds.
    last_rv_unavailable: bool,
    /// client-go's `paginatedResult`: the first `"0"` list came back in pages, so the server does
    /// not serve lists from a watch cache, and relists keep paging.
    paginated_result: bool,
}

impl<L: ListerWatcher> Machine<L> {
    pub(super) fn new(
        lw: Arc<L>,
        store: Arc<dyn ReflectorStore<Object>>,
        config: ReflectorConfig,
        clock: Arc<dyn Clock>,
        observer: Arc<dyn ReflectorObserver>,
        shared: Arc<Shared>,
    ) -> Self {
        let mut backoff_config = config.backoff.clone();
        if backoff_config.seed.is_none() {
            backoff_config.seed = config.seed;
        }
        let rng = match config.seed {
            Some(seed) => fastrand::Rng::with_seed(seed),
            None => fastrand::Rng::new(),
        };
        Machine {
            target: lw.describe(),
            lw,
            store,
            config,
            clock,
            observer,
            shared,
            backoff: Backoff::new(backoff_config),
            rng,
            last_rv_unavailable: false,
            paginated_result: false,
        }
    }

    pub(super) fn publish(&self, kind: ReflectorEventKind) {
        self.observer.observe(ReflectorEvent {
            at: self.clock.wall(),
            kind,
        });
    }

    fn last_synced(&self) -> String {
        self.shared.lock().clone()
    }

    /// Where a Reflector starts.
    pub(super) fn initial_state(&self) -> State {
        if self.config.watch_list {
            State::Watch {
                resource_version: String::new(),
                send_initial_events: true,
            }
        } else {
            State::List {
                resource_version: self.config.initial_list_rv().to_owned(),
            }
        }
    }

    /// client-go's `relistResourceVersion`: `""` after an expired list at the last synced
    /// resourceVersion, the initial one before anything was synced, else the last synced one.
    fn relist_rv(&self) -> String {
        if self.last_rv_unavailable {
            return String::new();
        }
        match self.last_synced() {
            rv if rv.is_empty() => self.config.initial_list_rv().to_owned(),
            rv => rv,
        }
    }

    /// Ends this ListAndWatch (and with it the resync timer, as client-go's `watchWithResync`
    /// returns) and says how the next one starts: a streaming list if enabled (a fallback to
    /// list + watch lasts one ListAndWatch, as in client-go's `ListAndWatch`), else a list.
    fn relist(&self) -> State {
        self.shared.leave_watch_phase();
        if self.config.watch_list {
            let rv = if self.last_rv_unavailable {
                String::new()
            } else {
                self.last_synced()
            };
            State::Watch {
                resource_version: rv,
                send_initial_events: true,
            }
        } else {
            State::List {
                resource_version: self.relist_rv(),
            }
        }
    }

    /// Draws the next backoff delay, to be waited (and the failure published) before `next`.
    fn back_off(&mut self, phase: Phase, error: SourceError, next: State) -> State {
        let delay = self.backoff.next_delay(self.clock.now());
        State::Backoff {
            delay,
            phase,
            error,
            next: Box::new(next),
        }
    }

    /// Performs one transition. `Err` is terminal: retrying cannot help.
    pub(super) async fn step(&mut self, state: State) -> Result<State, ReflectorError> {
        match state {
            State::List { resource_version } => {
                self.publish(ReflectorEventKind::ListStarted {
                    resource_version: resource_version.clone(),
                });
                Ok(State::Paging(Box::new(Paging {
                    limit: self.list_limit(&resource_version),
                    requested: resource_version,
                    continue_token: None,
                    paginated: false,
                    items: Vec::new(),
                    pages: 0,
                    started: self.clock.now(),
                })))
            }
            State::Paging(paging) => self.list_page(paging).await,
            State::Watch {
                resource_version,
                send_initial_events,
            } => self.open_watch(resource_version, send_initial_events).await,
            State::Watching(watching) => self.next_event(watching).await,
            State::Backoff {
                delay,
                phase,
                error,
                next,
            } => {
                // The draw above still advances the backoff's step, so that a delay the source
                // does not know is drawn as it would have been. A recorded delay is taken up to
                // the longest this Reflector could have drawn: a recording is untrusted input,
                // and a delay beyond that was not drawn by a Reflector like this one.
                let longest = self.backoff.config().longest_delay();
                let delay = match self.lw.recorded_choice(RandomChoice::Backoff).await {
                    Some(recorded) if recorded > longest => {
                        tracing::warn!(
                            "a recorded backoff of {recorded:?} is longer than any this \
                             Reflector draws: taken as its longest, {longest:?}"
                        );
                        longest
                    }
                    Some(recorded) => recorded,
                    None => delay,
                };
                self.publish(ReflectorEventKind::Backoff {
                    delay,
                    phase,
                    error,
                });
                self.clock.sleep(delay).await;
                Ok(*next)
            }
        }
    }

    /// Kind and apiVersion (absent from list items on the wire), then the user's transform.
    fn prepare(&self, mut obj: Arc<Object>) -> Arc<Object> {
        let ar = &self.target.api_resource;
        let complete = !obj.api_version().is_empty() && !obj.kind().is_empty();
        if complete && self.config.transform.is_none() {
            return obj;
        }
        // Copies only if the source kept a reference to the object, which the built-in ones do
        // not.
        let obj_mut = Arc::make_mut(&mut obj);
        obj_mut.fill_types(&ar.api_version, &ar.kind);
        if let Some(transform) = &self.config.transform {
            transform(obj_mut);
        }
        obj
    }

    /// The page size of a list at `resource_version`, as client-go's `Reflector.list` sets its
    /// pager's: the configured `WatchListPageSize` if any; else the pager's default if the
    /// first list came back paginated; else none for a list at a specific resourceVersion, which
    /// the watch cache serves only without a limit (with one, kube-apiserver reads etcd at
    /// exactly that revision: after an apiserver restart that is the stale state the watch
    /// failed from, and the relist would loop); else the pager's default (`"0"` lists ignore it
    /// in the watch cache, `""` lists are paged reads from etcd).
    fn list_limit(&self, resource_version: &str) -> Option<u32> {
        let size = match self.config.page_size {
            Some(size) => size,
            None if self.paginated_result => DEFAULT_PAGE_SIZE,
            None if !matches!(resource_version, "" | "0") => 0,
            None => DEFAULT_PAGE_SIZE,
        };
        Some(size).filter(|s| *s > 0)
    }

    async fn list_page(&mut self, mut paging: Box<Paging>) -> Result<State, ReflectorError> {
        let req = ListRequest {
            resource_version: paging.requested.clone(),
            resource_version_match: None,
            limit: paging.limit,
            continue_token: paging.continue_token.clone(),
        };
        let page = match self.lw.list(&req).await {
            Ok(page) => page,
            Err(error) => return self.list_failed(paging, error),
        };
        paging.pages += 1;
        paging.items.reserve(page.items.len());
        for obj in page.items {
            let obj = self.prepare(Arc::new(obj));
            paging.items.push(obj);
        }
        self.publish(ReflectorEventKind::ListPage {
            page: paging.pages,
            items_so_far: paging.items.len(),
            remaining: page.remaining_item_count,
        });
        if let Some(token) = page.continue_token {
            paging.continue_token = Some(token);
            paging.paginated = true;
            return Ok(State::Paging(paging));
        }

        let Paging {
            requested,
            paginated,
            items,
            pages,
            started,
            ..
        } = *paging;
        // Only a `"0"` list tells whether the server has a watch cache: a `""` list is always
        // paged by etcd, and relists should still prefer the cache.
        if requested == "0" && paginated {
            self.paginated_result = true;
        }
        // Published before the items reach the FIFO, so that "list done" always precedes the
        // batches it produces, however fast the consumer pops.
        self.publish(ReflectorEventKind::ListDone {
            items: items.len(),
            pages,
            resource_version: page.resource_version.clone(),
            duration: self.clock.now().saturating_duration_since(started),
        });
        {
            // Under the shared lock, as every queueing (see `Shared`).
            let mut last = self.shared.lock();
            self.store.replace(items, &page.resource_version);
            self.shared.note_replace();
            if !page.resource_version.is_empty() {
                last.clone_from(&page.resource_version);
            }
        }
        self.last_rv_unavailable = false;
        self.shared.enter_watch_phase();
        Ok(State::Watch {
            resource_version: page.resource_version,
            send_initial_events: false,
        })
    }

    fn list_failed(
        &mut self,
        mut paging: Box<Paging>,
        error: SourceError,
    ) -> Result<State, ReflectorError> {
        if is_terminal(&error) || error.is_invalid() {
            return Err(ReflectorError::ListFailed {
                target: Box::new(self.target.clone()),
                source: error,
            });
        }
        if error.is_expired() && paging.continue_token.is_some() {
            // The snapshot the pages came from is gone. client-go's pager (`FullListIfExpired`)
            // then makes one unpaginated list at the original resourceVersion, and keeps none of
            // the pages it had.
            self.publish(ReflectorEventKind::Relist {
                cause: RelistCause::ContinueExpired,
            });
            paging.continue_token = None;
            paging.limit = None;
            paging.items.clear();
            return Ok(State::Paging(paging));
        }
        if !paging.requested.is_empty() && self.rv_unavailable(&error) {
            // client-go's `Reflector.list` retries at once with `""`, a consistent read, to make
            // progress.
            return Ok(State::List {
                resource_version: String::new(),
            });
        }
        // The list failed: this ListAndWatch ends, and the next starts after a backoff.
        let next = self.relist();
        Ok(self.back_off(Phase::List, error, next))
    }

    /// client-go's `isExpiredError || isTooLargeResourceVersionError` after a list (or streaming
    /// list) at a resourceVersion: that resourceVersion is gone, or the server has not reached
    /// it, so `isLastSyncResourceVersionUnavailable` is set and the caller lists from `""`.
    fn rv_unavailable(&mut self, error: &SourceError) -> bool {
        let cause = if error.is_expired() {
            RelistCause::ListExpired
        } else if error.is_too_large_resource_version() {
            RelistCause::ListTooLarge
        } else {
            return false;
        };
        self.last_rv_unavailable = true;
        self.publish(ReflectorEventKind::Relist { cause });
        true
    }

    fn watch_timeout(&mut self) -> u32 {
        match self.config.watch_timeout {
            Some(t) => whole_seconds(t),
            None => self.rng.u32(WATCH_TIMEOUT_RANGE),
        }
    }

    async fn open_watch(
        &mut self,
        resource_version: String,
        send_initial_events: bool,
    ) -> Result<State, ReflectorError> {
        let drawn = self.watch_timeout();
        let timeout_seconds = match self.lw.recorded_choice(RandomChoice::WatchTimeout).await {
            Some(recorded) => whole_seconds(recorded),
            None => drawn,
        };
        let req = WatchRequest {
            resource_version,
            timeout_seconds,
            allow_bookmarks: true,
            send_initial_events,
        };
        // client-go's `watch` and `watchList` (reflector.go v0.28.7) take `start :=
        // r.clock.Now()` before the request: a watch's duration (and so a "very short watch")
        // counts the time the server took to answer.
        let started = self.clock.now();
        match self.lw.watch(&req).await {
            Ok(stream) => {
                self.publish(ReflectorEventKind::WatchStarted {
                    resource_version: req.resource_version.clone(),
                    timeout_seconds: req.timeout_seconds,
                    send_initial_events,
                });
                Ok(State::Watching(Box::new(Watching {
                    stream,
                    started,
                    events: 0,
                    advance_rv: !matches!(req.resource_version.as_str(), "" | "0"),
                    initial: send_initial_events.then(|| InitialEvents {
                        objects: BTreeMap::new(),
                        started,
                    }),
                })))
            }
            Err(error) if is_terminal(&error) => Err(ReflectorError::WatchStartFailed {
                target: Box::new(self.target.clone()),
                source: error,
            }),
            Err(error) if send_initial_events => Ok(self.watch_list_failed(req, error)),
            // client-go: a refused connection or 429 → back off and re-watch from the same
            // resourceVersion; anything else leaves ListAndWatch, which backs off and relists.
            Err(error) if error.is_connect() || error.is_too_many_requests() => {
                let next = State::Watch {
                    resource_version: req.resource_version,
                    send_initial_events: false,
                };
                Ok(self.back_off(Phase::Watch, error, next))
            }
            Err(error) => {
                self.publish(ReflectorEventKind::Relist {
                    cause: RelistCause::WatchStartFailed(error.clone()),
                });
                let next = self.relist();
                Ok(self.back_off(Phase::Watch, error, next))
            }
        }
    }

    /// A streaming list could not be opened. client-go's `Reflector.watchList` retries a refused
    /// connection or 429 after a backoff, and an expired or too large resourceVersion at once
    /// from `""`; anything else (422 from servers without the WatchList feature, a 5xx) makes
    /// this ListAndWatch fall back to list + watch ([`WatchListFallback`]: before v0.29, a 422
    /// only; other errors end the ListAndWatch, which streams again after a backoff).
    fn watch_list_failed(&mut self, req: WatchRequest, error: SourceError) -> State {
        if error.is_connect() || error.is_too_many_requests() {
            let next = State::Watch {
                resource_version: req.resource_version,
                send_initial_events: true,
            };
            return self.back_off(Phase::WatchList, error, next);
        }
        if !req.resource_version.is_empty() && self.rv_unavailable(&error) {
            return State::Watch {
                resource_version: String::new(),
                send_initial_events: true,
            };
        }
        self.fall_back_or_retry(error)
    }

    /// A streaming list failed with `error`, neither retryable nor an unavailable
    /// resourceVersion: `ListAndWatch` falls back to list + watch at once if the
    /// [`WatchListFallback`] rule says so (a fallback lasts this one ListAndWatch), else ends,
    /// and the next ListAndWatch, after a backoff, streams again.
    fn fall_back_or_retry(&mut self, error: SourceError) -> State {
        let falls_back = match self.config.watch_list_fallback {
            WatchListFallback::AnyError => true,
            // `apierrors.IsInvalid`: 422 only, not the 400 that `is_invalid` also takes.
            WatchListFallback::InvalidOnly => error
                .status()
                .is_some_and(|s| s.code == 422 || s.reason == "Invalid"),
        };
        if !falls_back {
            let next = self.relist();
            return self.back_off(Phase::WatchList, error, next);
        }
        self.publish(ReflectorEventKind::WatchListFallback {
            reason: error.to_string(),
        });
        State::List {
            resource_version: self.relist_rv(),
        }
    }

    async fn next_event(&mut self, mut w: Box<Watching>) -> Result<State, ReflectorError> {
        let event = match w.stream.next().await {
            None => return self.watch_ended(w, WatchEndReason::Closed),
            Some(Err(error)) => return self.watch_ended(w, WatchEndReason::Broken(error)),
            Some(Ok(WatchEvent::Error(status))) => {
                w.events += 1;
                return self.watch_ended(w, WatchEndReason::ErrorEvent(status));
            }
            Some(Ok(event)) => event,
        };
        w.events += 1;

        if let Some(initial) = &mut w.initial {
            // A streaming list's initial state goes to the FIFO in one `replace` at its end.
            match event {
                WatchEvent::Added(obj) | WatchEvent::Modified(obj) => {
                    let obj = self.prepare(obj);
                    initial.objects.insert(object_key(obj.as_ref()), obj);
                }
                WatchEvent::Deleted(obj) => {
                    initial.objects.remove(&object_key(obj.as_ref()));
                }
                WatchEvent::Bookmark {
                    resource_version,
                    initial_events_end,
                } => {
                    self.publish(ReflectorEventKind::Bookmark {
                        resource_version: resource_version.clone(),
                        initial_events_end,
                    });
                    if initial_events_end {
                        let InitialEvents { objects, started } =
                            w.initial.take().expect("checked above");
                        let items: Vec<_> = objects.into_values().collect();
                        // Before the replace, as for a paged list.
                        self.publish(ReflectorEventKind::ListDone {
                            items: items.len(),
                            pages: 0,
                            resource_version: resource_version.clone(),
                            duration: self.clock.now().saturating_duration_since(started),
                        });
                        {
                            let mut last = self.shared.lock();
                            self.store.replace(items, &resource_version);
                            self.shared.note_replace();
                            last.clone_from(&resource_version);
                        }
                        self.last_rv_unavailable = false;
                        self.shared.enter_watch_phase();
                        w.advance_rv = true;
                    }
                }
                WatchEvent::Error(_) => unreachable!("handled above"),
            }
            return Ok(State::Watching(w));
        }

        match event {
            WatchEvent::Added(obj) => {
                let obj = self.prepare(obj);
                self.commit(|store| store.add(obj.clone()), &obj, w.advance_rv);
            }
            WatchEvent::Modified(obj) => {
                w.advance_rv = true;
                let obj = self.prepare(obj);
                self.commit(|store| store.update(obj.clone()), &obj, true);
            }
            WatchEvent::Deleted(obj) => {
                w.advance_rv = true;
                let obj = self.prepare(obj);
                self.commit(
                    |store| {
                        store.delete(DeltaObject::Object(obj.clone()));
                    },
                    &obj,
                    true,
                );
            }
            WatchEvent::Bookmark {
                resource_version,
                initial_events_end,
            } => {
                w.advance_rv = true;
                // Published first, as "list done", so that the event precedes the queue's
                // `Bookmark` delta however fast the consumer pops.
                self.publish(ReflectorEventKind::Bookmark {
                    resource_version: resource_version.clone(),
                    initial_events_end,
                });
                let mut last = self.shared.lock();
                self.store.bookmark(&resource_version);
                if !resource_version.is_empty() {
                    *last = resource_version;
                }
            }
            WatchEvent::Error(_) => unreachable!("handled above"),
        }
        Ok(State::Watching(w))
    }

    /// Queues one watch event and, if `advance`, records its resourceVersion as the last synced
    /// one, both under the shared lock (see [`Shared`]).
    ///
    /// Every event but an ADDED of a watch started from `""`/`"0"` advances the last synced
    /// resourceVersion; the first other event unlocks it for good (client-go).
    fn commit(&self, queue: impl FnOnce(&dyn ReflectorStore<Object>), obj: &Object, advance: bool) {
        let mut last = self.shared.lock();
        queue(self.store.as_ref());
        self.shared.note_change(|| object_key(obj));
        if advance
            && let Some(rv) = obj.resource_version()
            && !rv.is_empty()
        {
            rv.clone_into(&mut last);
        }
    }

    fn watch_ended(
        &mut self,
        w: Box<Watching>,
        reason: WatchEndReason,
    ) -> Result<State, ReflectorError> {
        let duration = self.clock.now().saturating_duration_since(w.started);
        let events = w.events;
        let streaming = w.initial.is_some();
        drop(w);
        let reason = match reason {
            WatchEndReason::Closed | WatchEndReason::Broken(_)
                if events == 0 && duration < VERY_SHORT_WATCH =>
            {
                WatchEndReason::VeryShort
            }
            other => other,
        };
        self.publish(ReflectorEventKind::WatchEnded {
            reason: reason.clone(),
            duration,
            events,
        });
        let phase = if streaming {
            Phase::WatchList
        } else {
            Phase::Watch
        };
        match reason {
            WatchEndReason::Closed | WatchEndReason::Broken(_) if !streaming => {
                // A normal end (timeout, server shutdown, dropped connection): nothing was missed,
                // so continue from where the watch stopped.
                Ok(State::Watch {
                    resource_version: self.last_synced(),
                    send_initial_events: false,
                })
            }
            WatchEndReason::Closed | WatchEndReason::Broken(_) => {
                // `watchList` (@v0.28.7, @v0.36.3): a stream that ends before its initial-events-end
                // bookmark is opened again at once, from scratch, with no backoff.
                self.publish(ReflectorEventKind::Relist {
                    cause: RelistCause::WatchListInterrupted,
                });
                Ok(self.relist())
            }
            WatchEndReason::VeryShort if streaming => {
                // `handleAnyWatch` returns a `VeryShortWatchError`, which `watchList` returns.
                self.publish(ReflectorEventKind::Relist {
                    cause: RelistCause::VeryShortWatch,
                });
                let error = SourceError::Stream(WatchEndReason::VeryShort.to_string());
                Ok(self.fall_back_or_retry(error))
            }
            WatchEndReason::VeryShort => {
                self.publish(ReflectorEventKind::Relist {
                    cause: RelistCause::VeryShortWatch,
                });
                let error = SourceError::Stream(WatchEndReason::VeryShort.to_string());
                let next = self.relist();
                Ok(self.back_off(phase, error, next))
            }
            WatchEndReason::ErrorEvent(status) => {
                let error = SourceError::Api(status);
                if is_terminal(&error) {
                    return Err(ReflectorError::WatchFailed {
                        target: Box::new(self.target.clone()),
                        source: error,
                    });
                }
                if error.is_too_many_requests() && !streaming {
                    let next = State::Watch {
                        resource_version: self.last_synced(),
                        send_initial_events: false,
                    };
                    return Ok(self.back_off(phase, error, next));
                }
                if error.is_expired() && streaming && !self.last_synced().is_empty() {
                    // The streaming list's starting point is gone: stream a fresh state at once.
                    self.last_rv_unavailable = true;
                    self.publish(ReflectorEventKind::Relist {
                        cause: RelistCause::ListExpired,
                    });
                    return Ok(State::Watch {
                        resource_version: String::new(),
                        send_initial_events: true,
                    });
                }
                if streaming && !error.is_too_many_requests() && !error.is_expired() {
                    // `watchList` returns the ERROR event's error: a fallback to list + watch.
                    self.publish(ReflectorEventKind::Relist {
                        cause: RelistCause::WatchFailed(error.clone()),
                    });
                    return Ok(self.fall_back_or_retry(error));
                }
                // Expired: relist at the last synced resourceVersion (a list there returns data
                // at least that fresh); other errors: relist too. Both after a backoff, as
                // client-go's ListAndWatch loop does.
                let cause = if error.is_expired() {
                    RelistCause::WatchExpired
                } else {
                    RelistCause::WatchFailed(error.clone())
                };
                self.publish(ReflectorEventKind::Relist { cause });
                let next = self.relist();
                Ok(self.back_off(phase, error, next))
            }
        }
    }
}

#[cfg(test)]
#[path = "machine_tests.rs"]
mod tests;
