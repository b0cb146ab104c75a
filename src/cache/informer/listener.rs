//! One handler of a shared informer: client-go's `processorListener`
//! (`tools/cache/shared_informer.go`).
//!
//! The processor [`add`](ProcessorListener::add)s each notification to the listener's unbounded
//! buffer (`pendingNotifications`) and returns at once; the listener's own thread takes them out
//! oldest first and calls the handler (`run`). So a slow handler never slows the queue or the
//! other handlers: its buffer grows, and each notification waits longer in it. Nothing is
//! coalesced: every notification is delivered, in order.
//!
//! client-go moves notifications with two goroutines and two unbuffered channels (`pop` pumps
//! `addCh` into the ring buffer and `nextCh`); here one mutex-guarded queue and one thread do the
//! same, and the mutex is never held while the handler runs, so the distributing side and
//! [`stats`](ProcessorListener::stats) readers only ever wait for a push or a pop.

use std::collections::VecDeque;
use std::fmt;
use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use super::handler::{Notification, ResourceEventHandler};
use crate::cache::clock::Clock;

/// Identifies a listener (a handler registration) among all listeners of the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ListenerId(u64);

impl ListenerId {
    fn next() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        ListenerId(NEXT.fetch_add(1, Ordering::Relaxed))
    }

    /// The number behind the id (unique in the process, from 1).
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for ListenerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "listener-{}", self.0)
    }
}

/// Whether the informer itself has synced (client-go's `UpstreamHasSynced`, the informer's
/// `HasSynced`).
pub type UpstreamSynced = Arc<dyn Fn() -> bool + Send + Sync>;

/// One handler call, as the listener's thread makes it: the notification and how long it waited.
#[derive(Debug)]
pub struct Delivery<'a, K> {
    /// What the handler is told.
    pub notification: &'a Notification<K>,
    /// The processor's sequence number of the distribution this came from (from 1); 0 for a
    /// notification added directly, such as the `OnAdd`s a handler registered after start gets
    /// for the objects already cached.
    pub seq: u64,
    /// The batch it came from, as the distributing side numbered it (a pop's sequence number;
    /// see [`SharedProcessor::distribute_from`](crate::cache::SharedProcessor::distribute_from)); 0 if
    /// none.
    pub batch: u64,
    /// Whether it was distributed as a sync notification (an update with an unchanged
    /// resourceVersion), which only listeners marked syncing receive.
    pub is_sync: bool,
    /// When it was added to the buffer.
    pub added_at: Instant,
    /// When the handler call began.
    pub started_at: Instant,
    /// Notifications buffered when it was added, itself included.
    pub depth_at_add: usize,
    /// Notifications still buffered behind it when its handler call began.
    pub depth: usize,
}

impl<K> Delivery<'_, K> {
    /// How long it waited in the buffer: from `add` to the start of the handler call.
    pub fn waited(&self) -> Duration {
        self.started_at.saturating_duration_since(self.added_at)
    }
}

/// What a listener's thread calls for each notification, in order, one at a time.
///
/// Any `FnMut(&Delivery<K>)` is one; wrap a [`ResourceEventHandler`] in [`Dispatch`].
pub trait ListenerHandler<K>: Send + 'static {
    /// Handles one notification.
    fn handle(&mut self, delivery: &Delivery<'_, K>);

    /// How long each call takes, in the clock's time, when the listener is driven inline
    /// ([`ProcessorListener::call_next`]), where nothing really takes time. A handler called from
    /// the listener's thread takes whatever time it takes; this is not used there.
    fn cost(&self) -> Duration {
        Duration::ZERO
    }

    /// The registration has synced ([`ProcessorListener::has_synced`]): told once, right after
    /// the call that processed the last initial-list notification, `at` that call's end; or,
    /// with no such call left, when the sync is noticed
    /// ([`notice_sync`](ProcessorListener::notice_sync): an empty initial list).
    fn synced(&mut self, _at: Instant) {}
}

impl<K, F> ListenerHandler<K> for F
where
    F: FnMut(&Delivery<'_, K>) + Send + 'static,
{
    fn handle(&mut self, delivery: &Delivery<'_, K>) {
        self(delivery)
    }
}

impl<K: 'static> ListenerHandler<K> for Box<dyn ListenerHandler<K>> {
    fn handle(&mut self, delivery: &Delivery<'_, K>) {
        (**self).handle(delivery);
    }

    fn cost(&self) -> Duration {
        (**self).cost()
    }

    fn synced(&mut self, at: Instant) {
        (**self).synced(at);
    }
}

/// A [`ResourceEventHandler`] as a listener's handler: `OnAdd`, `OnUpdate` and `OnDelete` calls,
/// as client-go's `processorListener.run` makes them.
#[derive(Debug, Default)]
pub struct Dispatch<H>(pub H);

impl<K, H> ListenerHandler<K> for Dispatch<H>
where
    H: ResourceEventHandler<K> + Send + 'static,
{
    fn handle(&mut self, delivery: &Delivery<'_, K>) {
        delivery.notification.dispatch(&mut self.0);
    }
}

/// A point-in-time view of a listener, for status lines and summaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ListenerStats {
    /// Notifications buffered now, not yet handed to the handler (client-go's
    /// `pendingNotifications`, plus the one `pop` holds for `nextCh`).
    pub depth: usize,
    /// The largest `depth` ever reached.
    pub max_depth: usize,
    /// Notifications added.
    pub added: u64,
    /// Handler calls begun.
    pub delivered: u64,
    /// Handler calls finished (panicked ones included).
    pub processed: u64,
    /// Handler calls that panicked, whose notification was skipped; client-go's
    /// `processorListener.run` re-panics instead (`HandleCrash`, `ReallyCrash = true`), which
    /// ends the process.
    pub panicked: u64,
    /// Notifications dropped unhandled because the listener was stopped or removed.
    pub abandoned: u64,
    /// The longest wait between `add` and the start of a handler call, among finished calls.
    pub max_waited: Duration,
    /// Whether a handler call is running now.
    pub busy: bool,
}

/// client-go's `synctrack.SingleFileTracker`: counts the initial-list notifications added but not
/// yet processed, so that a registration is synced only once its handler has processed every one.
struct SingleFileTracker {
    /// Initial-list adds added minus those processed; never negative.
    count: AtomicI64,
    upstream: UpstreamSynced,
}

impl SingleFileTracker {
    fn start(&self) {
        self.count.fetch_add(1, Ordering::AcqRel);
    }

    fn finished(&self) {
        let left = self.count.fetch_sub(1, Ordering::AcqRel) - 1;
        // client-go panics here: a Finished without its Start is a logic error.
        debug_assert!(left >= 0, "synctrack: negative counter");
    }

    fn has_synced(&self) -> bool {
        // Upstream first, as client-go: acting on a count read before upstream synced could say
        // true while the last initial notification is still being added.
        (self.upstream)() && self.count.load(Ordering::Acquire) <= 0
    }
}

/// A notification in the buffer.
struct Pending<K> {
    notification: Arc<Notification<K>>,
    seq: u64,
    batch: u64,
    is_sync: bool,
    added_at: Instant,
    depth_at_add: usize,
}

/// What the mutex guards.
struct Buffer<K> {
    /// Added, not yet taken by the thread, oldest first.
    pending: VecDeque<Pending<K>>,
    /// Set once by `close`; from then on `pending` stays empty and adds are dropped.
    closed: bool,
    /// The thread is inside a handler call (between taking a notification and recording it).
    busy: bool,
    /// The thread sleeps on `ready`; whoever adds clears it and wakes the thread, so that an add
    /// pays for a wake-up only when the thread is asleep.
    thread_asleep: bool,
    /// Callers sleeping on `idle`.
    idle_waiters: usize,
    /// Inline only: when the previous handler call ended, in the clock's time.
    free_at: Option<Instant>,
    /// When the registration synced, until the handler is told: by an inline turn
    /// ([`ProcessorListener::tell_synced`]), or by the thread if
    /// [`notice_sync`](ProcessorListener::notice_sync) found it synced between two calls.
    synced_at: Option<Instant>,
    /// The handler was told the registration synced, or will be (`synced_at`).
    told_synced: bool,
    /// [`notice_sync`](ProcessorListener::notice_sync) found the registration synced while a
    /// call was running or buffered, and left the telling to the end of that call. That end
    /// tells it even if its own look at `has_synced` came before the informer synced: the look
    /// is taken without this lock, so the sync can land between it and the end, and
    /// `notice_sync` is the informer's only word of it. client-go v0.36's `SingleFileTracker`
    /// closes the same gap with its `upstreamHasSynced` flag, which `UpstreamHasSynced` sets
    /// before reading the count and `Finished` reads after lowering it (`synctrack.go` @v0.36.3).
    sync_noticed: bool,
    /// A thread calls the handler (set by `start`): it tells a pending `synced_at` itself.
    threaded: bool,
    /// Counters; `depth` and `busy` are filled in by `stats()` from the fields above.
    stats: ListenerStats,
}

impl<K> Buffer<K> {
    /// Nothing buffered, no call running, and for a thread no sync left to tell.
    fn is_idle(&self) -> bool {
        self.pending.is_empty() && !self.busy && !(self.threaded && self.synced_at.is_some())
    }
}

struct Shared<K> {
    buffer: Mutex<Buffer<K>>,
    /// Wakes the thread: something was added, or the listener closed.
    ready: Condvar,
    /// Wakes `wait_drained`: the buffer emptied and the handler returned, or the listener closed.
    idle: Condvar,
    tracker: SingleFileTracker,
    clock: Arc<dyn Clock>,
    /// `stats.added`, readable without the lock: what the idle thread watches before sleeping.
    added: AtomicU64,
}

impl<K> Shared<K> {
    // A panicking handler runs outside the lock, and each critical section is a few field
    // updates, so a poisoned lock (a panic in a `Clock`, say) still holds consistent data.
    fn lock(&self) -> MutexGuard<'_, Buffer<K>> {
        self.buffer.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn close(&self) {
        let mut buffer = self.lock();
        if buffer.closed {
            return;
        }
        buffer.closed = true;
        buffer.stats.abandoned += buffer.pending.len() as u64;
        buffer.pending = VecDeque::new();
        drop(buffer);
        self.ready.notify_all();
        self.idle.notify_all();
    }
}

/// The resync state of a listener (guarded by client-go's `resyncLock`).
#[derive(Debug, Clone, Copy)]
struct Resync {
    /// `requestedResyncPeriod`: what the registration asked for, after the informer's
    /// adjustments; what `resyncCheckPeriodChanged` re-derives `period` from.
    requested: Duration,
    /// `resyncPeriod`: 0 means never due.
    period: Duration,
    /// `nextResync`: the listener is due at any check at or after it.
    next: Instant,
}

/// One registered handler with its buffer and thread: client-go's `processorListener`.
pub struct ProcessorListener<K> {
    id: ListenerId,
    name: String,
    shared: Arc<Shared<K>>,
    /// Taken by [`start`](ProcessorListener::start); `None` once the thread owns it.
    handler: Mutex<Option<Box<dyn ListenerHandler<K>>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    resync: Mutex<Resync>,
}

impl<K> fmt::Debug for ProcessorListener<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProcessorListener")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl<K: Send + Sync + 'static> ProcessorListener<K> {
    /// A listener for `handler`, not yet running (client-go's `newProcessListener`): `requested`
    /// and `period` are its `requestedResyncPeriod` and `resyncPeriod` (see
    /// [`HandlerResync`](crate::cache::HandlerResync)), its first resync is due `period` after `now`,
    /// and `upstream` tells whether the informer has synced. `clock` stamps every add and handler
    /// call.
    pub fn new(
        name: impl Into<String>,
        handler: impl ListenerHandler<K>,
        requested: Duration,
        period: Duration,
        now: Instant,
        clock: Arc<dyn Clock>,
        upstream: UpstreamSynced,
    ) -> Arc<Self> {
        Arc::new(ProcessorListener {
            id: ListenerId::next(),
            name: name.into(),
            shared: Arc::new(Shared {
                buffer: Mutex::new(Buffer {
                    pending: VecDeque::new(),
                    closed: false,
                    busy: false,
                    thread_asleep: false,
                    idle_waiters: 0,
                    free_at: None,
                    synced_at: None,
                    told_synced: false,
                    sync_noticed: false,
                    threaded: false,
                    stats: ListenerStats::default(),
                }),
                ready: Condvar::new(),
                idle: Condvar::new(),
                tracker: SingleFileTracker {
                    count: AtomicI64::new(0),
                    upstream,
                },
                clock,
                added: AtomicU64::new(0),
            }),
            handler: Mutex::new(Some(Box::new(handler))),
            thread: Mutex::new(None),
            resync: Mutex::new(Resync {
                requested,
                period,
                next: now + period,
            }),
        })
    }

    /// Starts the thread that calls the handler (what the processor's `run` and a late
    /// `addListener` start). A second call does nothing; so does a call after
    /// [`close`](ProcessorListener::close).
    pub fn start(&self) -> io::Result<()> {
        let Some(handler) = lock(&self.handler).take() else {
            return Ok(());
        };
        self.shared.lock().threaded = true;
        let shared = self.shared.clone();
        let thread = thread::Builder::new()
            .name(format!("handler {}", self.name))
            .spawn(move || run(&shared, handler))?;
        *lock(&self.thread) = Some(thread);
        Ok(())
    }
}

impl<K> ProcessorListener<K> {
    /// Which listener this is.
    pub fn id(&self) -> ListenerId {
        self.id
    }

    /// The name given at registration.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Buffers `notification` for the handler and returns at once, as client-go's
    /// `processorListener.add` (which hands it to `pop`, which never blocks on the handler).
    /// An initial-list add counts towards [`has_synced`](ProcessorListener::has_synced) from
    /// here on. Dropped if the listener is closed.
    pub fn add(&self, notification: Arc<Notification<K>>) {
        self.enqueue(notification, 0, 0, false, self.shared.clock.now());
    }

    /// [`add`](ProcessorListener::add) with what the processor knows about the notification.
    pub(super) fn enqueue(
        &self,
        notification: Arc<Notification<K>>,
        seq: u64,
        batch: u64,
        is_sync: bool,
        added_at: Instant,
    ) {
        let initial = matches!(
            *notification,
            Notification::Add {
                is_in_initial_list: true,
                ..
            }
        );
        let mut buffer = self.shared.lock();
        if buffer.closed {
            return;
        }
        if initial {
            self.shared.tracker.start();
        }
        let depth_at_add = buffer.pending.len() + 1;
        buffer.pending.push_back(Pending {
            notification,
            seq,
            batch,
            is_sync,
            added_at,
            depth_at_add,
        });
        let stats = &mut buffer.stats;
        stats.added += 1;
        self.shared.added.store(stats.added, Ordering::Relaxed);
        stats.max_depth = stats.max_depth.max(depth_at_add);
        let wake = std::mem::take(&mut buffer.thread_asleep);
        drop(buffer);
        if wake {
            self.shared.ready.notify_one();
        }
    }

    /// Hands a registration made after the informer started the cache's objects, each as an
    /// initial-list `OnAdd` (client-go's `AddEventHandlerWithResyncPeriod`). The hand-over counts
    /// as one more initial notification until the last is added: the listener's thread, quicker
    /// than the adds, would otherwise find the count at zero between two of them and tell the
    /// handler it synced with the rest of the cache still to come. client-go needs no such hold
    /// because nobody can ask the registration's `HasSynced` before it is returned (the comment
    /// in `AddEventHandlerWithResyncPeriod` @v0.28.7); here the thread and
    /// [`notice_sync`](ProcessorListener::notice_sync) ask on their own. Call `notice_sync`
    /// after it, holding no lock of the cache: an empty cache leaves no call to notice the sync.
    pub(super) fn add_initial_list(&self, objects: impl IntoIterator<Item = Arc<K>>) {
        self.shared.tracker.start();
        for obj in objects {
            self.add(Arc::new(Notification::Add {
                obj,
                is_in_initial_list: true,
            }));
        }
        self.shared.tracker.finished();
    }

    /// Whether the registration has synced, as client-go's `processorListener.HasSynced`
    /// (`synctrack.SingleFileTracker`): the informer has synced, and the handler has processed
    /// (returned from) every initial-list `OnAdd` added so far. A handler that is given the
    /// initial list later than the informer's cache holds it lags behind the informer's own
    /// `HasSynced` by its whole buffer.
    pub fn has_synced(&self) -> bool {
        self.shared.tracker.has_synced()
    }

    /// Lets the handler hear that the registration has synced when no handler call is left to
    /// notice it after: the informer synced with nothing for this handler (an empty initial list,
    /// which client-go's `DeltaFIFO.Replace` and `RealFIFO.Replace` sync at once), or the handler
    /// joined a synced informer whose cache is empty. A listener otherwise notices its sync at the
    /// end of the call that processed its last initial-list add.
    ///
    /// Told at the clock's now (or when the call in progress ends, inline), on the handler's
    /// thread or at the next inline turn; once, whoever notices first. With a call running or
    /// buffered, the end of that call tells it, whatever that call's own look at `has_synced`
    /// found (`sync_noticed`). Asks the informer's `HasSynced`, which takes the queue's lock:
    /// call it holding no lock of the cache.
    pub fn notice_sync(&self) {
        if !self.shared.tracker.has_synced() {
            return;
        }
        // Read before taking the buffer's lock: a clock is the caller's code, which may itself
        // wait on this listener (a test's clock that lets the handler catch up).
        let now = self.shared.clock.now();
        let mut buffer = self.shared.lock();
        if buffer.closed || buffer.told_synced {
            return;
        }
        // Something buffered or running: the end of that call tells the sync, as always; the
        // mark makes sure it does, whenever it looked at `has_synced`.
        if buffer.busy || !buffer.pending.is_empty() {
            buffer.sync_noticed = true;
            return;
        }
        buffer.told_synced = true;
        buffer.synced_at = Some(buffer.free_at.map_or(now, |free| free.max(now)));
        let wake = std::mem::take(&mut buffer.thread_asleep);
        drop(buffer);
        if wake {
            self.shared.ready.notify_one();
        }
    }

    /// Counters, read under the buffer's lock (which the thread never holds during a handler call).
    pub fn stats(&self) -> ListenerStats {
        let buffer = self.shared.lock();
        ListenerStats {
            depth: buffer.pending.len(),
            busy: buffer.busy,
            ..buffer.stats
        }
    }

    /// Notifications buffered now.
    pub fn depth(&self) -> usize {
        self.shared.lock().pending.len()
    }

    /// Stops the listener, as the processor does by closing `addCh`: the buffered notifications
    /// are dropped unhandled (counted as abandoned), later adds are ignored, and the thread ends
    /// once the current handler call (if any) returns. Does not wait for it: see
    /// [`join`](ProcessorListener::join).
    pub fn close(&self) {
        self.shared.close();
        // A listener that never started has no thread to own the handler; drop it now.
        lock(&self.handler).take();
    }

    /// Waits for the thread to end (after [`close`](ProcessorListener::close)); returns at once
    /// if it never started or was already joined.
    pub fn join(&self) {
        let thread = lock(&self.thread).take();
        if let Some(thread) = thread {
            // The thread catches handler panics, so it only fails on a bug of its own; there is
            // nothing left to clean up either way.
            let _ = thread.join();
        }
    }

    /// Blocks until the buffer is empty and no handler call runs, or the listener is closed, or
    /// `timeout` passed (real time); returns whether it drained. Not in client-go, which has no
    /// way to wait for its listeners: it lets a caller see every notification handled before it
    /// reports (a replay's summary, a benchmark).
    pub fn wait_drained(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut buffer = self.shared.lock();
        buffer.idle_waiters += 1;
        let drained = loop {
            if buffer.closed || buffer.is_idle() {
                break buffer.is_idle();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break false;
            }
            buffer = match self.shared.idle.wait_timeout(buffer, left) {
                Ok((guard, _)) => guard,
                Err(e) => e.into_inner().0,
            };
        };
        buffer.idle_waiters -= 1;
        drained
    }

    /// A listener driven inline (its thread never started: a replay's, on the replay's clock):
    /// when its next handler call begins, `None` if nothing is buffered. A call begins when its
    /// notification was added or when the previous call ended, whichever is later, and lasts the
    /// handler's [`cost`](ListenerHandler::cost): how a slow handler's buffer grows on a clock
    /// that only moves when the replay says so.
    pub fn next_call(&self) -> Option<Instant> {
        let buffer = self.shared.lock();
        let added_at = buffer.pending.front()?.added_at;
        Some(buffer.free_at.map_or(added_at, |free| free.max(added_at)))
    }

    /// client-go's `processorListener.shouldResync`: whether a resync is due at `now`; never for a
    /// period of 0.
    pub fn should_resync(&self, now: Instant) -> bool {
        let resync = lock(&self.resync);
        !resync.period.is_zero() && now >= resync.next
    }

    /// client-go's `processorListener.determineNextResync`: the next resync is due one period
    /// after `now`.
    pub fn determine_next_resync(&self, now: Instant) {
        let mut resync = lock(&self.resync);
        resync.next = now + resync.period;
    }

    /// client-go's `processorListener.setResyncPeriod` (from `resyncCheckPeriodChanged`): the
    /// next due time is left as it was.
    pub fn set_resync_period(&self, period: Duration) {
        lock(&self.resync).period = period;
    }

    /// `requestedResyncPeriod`.
    pub fn requested_resync_period(&self) -> Duration {
        lock(&self.resync).requested
    }

    /// `resyncPeriod`: 0 means never resynced.
    pub fn resync_period(&self) -> Duration {
        lock(&self.resync).period
    }

    /// `nextResync`: when the next resync is due (meaningless for a period of 0).
    pub fn next_resync(&self) -> Instant {
        lock(&self.resync).next
    }
}

impl<K: 'static> ProcessorListener<K> {
    /// A listener driven inline: when its handler is to be told that the registration synced
    /// ([`ListenerHandler::synced`]), at the end of the call that processed the last
    /// initial-list notification; `None` if not pending.
    pub fn synced_due(&self) -> Option<Instant> {
        self.shared.lock().synced_at
    }

    /// Tells the handler of a listener driven inline that the registration synced, if that is
    /// pending; `false` otherwise.
    pub fn tell_synced(&self) -> bool {
        let Some(at) = self.shared.lock().synced_at.take() else {
            return false;
        };
        if let Some(handler) = lock(&self.handler).as_mut() {
            handler.synced(at);
        }
        true
    }

    /// Makes the next handler call of a listener driven inline, on the caller's thread, stamped
    /// with the time [`next_call`](ProcessorListener::next_call) gave; `false` if nothing was
    /// buffered or the listener runs a thread (which makes its calls itself).
    pub fn call_next(&self) -> bool {
        let mut handler = lock(&self.handler);
        let Some(handler) = handler.as_mut() else {
            return false;
        };
        let Some(started_at) = self.next_call() else {
            return false;
        };
        let mut buffer = self.shared.lock();
        let Some(pending) = buffer.pending.pop_front() else {
            return false;
        };
        buffer.busy = true;
        buffer.stats.delivered += 1;
        let depth = buffer.pending.len();
        drop(buffer);
        let done = call(&self.shared, handler.as_mut(), &pending, depth, started_at);
        let ended = started_at + handler.cost();
        // Asked without the buffer's lock (see `run`).
        let synced = self.shared.tracker.has_synced();
        let mut buffer = self.shared.lock();
        buffer.free_at = Some(ended);
        done.record(&mut buffer);
        if (synced || buffer.sync_noticed) && !buffer.told_synced {
            // Told at the call's end, in time order with the other calls (`tell_synced`).
            buffer.told_synced = true;
            buffer.synced_at = Some(ended);
        }
        true
    }
}

impl<K> Drop for ProcessorListener<K> {
    /// Without this, the thread of a listener dropped without `close` would sleep forever.
    fn drop(&mut self) {
        self.shared.close();
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// How many times an idle listener thread yields, looking for a new notification, before it
/// sleeps.
const SPINS: usize = 64;

/// The outcome of the previous handler call, recorded with the next lock taken.
struct Finished {
    waited: Duration,
    panicked: bool,
}

impl Finished {
    fn record<K>(self, buffer: &mut Buffer<K>) {
        let stats = &mut buffer.stats;
        stats.processed += 1;
        stats.panicked += u64::from(self.panicked);
        stats.max_waited = stats.max_waited.max(self.waited);
        buffer.busy = false;
    }
}

/// One handler call, from a listener's thread or inline: a panic skips the notification, as
/// client-go's `HandleCrash` does; an initial-list add counts as processed once the call
/// returned.
fn call<K: 'static>(
    shared: &Shared<K>,
    handler: &mut dyn ListenerHandler<K>,
    pending: &Pending<K>,
    depth: usize,
    started_at: Instant,
) -> Finished {
    let delivery = Delivery {
        notification: &pending.notification,
        seq: pending.seq,
        batch: pending.batch,
        is_sync: pending.is_sync,
        added_at: pending.added_at,
        started_at,
        depth_at_add: pending.depth_at_add,
        depth,
    };
    let panicked = panic::catch_unwind(AssertUnwindSafe(|| handler.handle(&delivery))).is_err();
    if panicked {
        tracing::error!(
            seq = pending.seq,
            "an event handler panicked; its notification is skipped"
        );
    } else if let Notification::Add {
        is_in_initial_list: true,
        ..
    } = *pending.notification
    {
        shared.tracker.finished();
    }
    Finished {
        waited: delivery.waited(),
        panicked,
    }
}

/// The listener's thread: client-go's `processorListener.run` (with `pop`'s buffer hand-over).
/// Takes one notification at a time under the lock, calls the handler without it, and marks an
/// initial-list add processed for [`has_synced`](ProcessorListener::has_synced) once the handler
/// returned. A panicking handler skips its notification, as client-go's `HandleCrash` does;
/// client-go then pauses one second before the next one, which is left out here because the
/// pause only keeps a crashing handler from spinning, and would stall a replay.
fn run<K: 'static>(shared: &Shared<K>, mut handler: Box<dyn ListenerHandler<K>>) {
    let mut finished: Option<Finished> = None;
    let mut buffer = shared.lock();
    loop {
        if let Some(done) = finished.take() {
            done.record(&mut buffer);
            if !buffer.told_synced {
                // Still busy until the sync is told: a wait for the listener to drain must not
                // end between the call and the sync it completed.
                buffer.busy = true;
                // Asked without the buffer's lock: the informer's `HasSynced` takes the queue's,
                // which the distributing side holds while it takes this one.
                drop(buffer);
                let synced = shared.tracker.has_synced();
                buffer = shared.lock();
                // `sync_noticed`: the informer synced after that look, and `notice_sync`,
                // finding this call running, left the telling to it.
                if (synced || buffer.sync_noticed) && !buffer.told_synced {
                    buffer.told_synced = true;
                    drop(buffer);
                    handler.synced(shared.clock.now());
                    buffer = shared.lock();
                }
                buffer.busy = false;
            }
        }
        let mut spun = false;
        let pending = loop {
            if buffer.closed {
                return;
            }
            if let Some(at) = buffer.synced_at.take() {
                // Noticed between two calls (`notice_sync`), told as one.
                buffer.busy = true;
                drop(buffer);
                handler.synced(at);
                buffer = shared.lock();
                buffer.busy = false;
                continue;
            }
            if let Some(pending) = buffer.pending.pop_front() {
                break pending;
            }
            if buffer.idle_waiters > 0 {
                shared.idle.notify_all();
            }
            if !spun {
                // A burst usually continues: look again a few times before sleeping, so that
                // the distributing side does not pay a futex wake-up per notification.
                spun = true;
                let seen = buffer.stats.added;
                drop(buffer);
                for _ in 0..SPINS {
                    if shared.added.load(Ordering::Relaxed) != seen {
                        break;
                    }
                    thread::yield_now();
                }
                buffer = shared.lock();
                continue;
            }
            buffer.thread_asleep = true;
            buffer = shared.ready.wait(buffer).unwrap_or_else(|e| e.into_inner());
        };
        buffer.busy = true;
        buffer.stats.delivered += 1;
        let depth = buffer.pending.len();
        drop(buffer);

        finished = Some(call(
            shared,
            handler.as_mut(),
            &pending,
            depth,
            shared.clock.now(),
        ));
        drop(pending);
        buffer = shared.lock();
    }
}

#[cfg(test)]
#[path = "listener_tests.rs"]
mod tests;
