//! The fan-out of a shared informer: client-go's `sharedProcessor`
//! (`tools/cache/shared_informer.go`), which hands every notification to each registered
//! [`ProcessorListener`], and decides which listeners receive sync notifications.
//!
//! An update whose old and new resourceVersions are equal (a resync, or an unchanged object
//! after a relist) is a *sync* notification, which goes only to listeners marked *syncing*. Every listener starts marked syncing ([`add_listener`](SharedProcessor::add_listener)),
//! and each resync check ([`should_resync`](SharedProcessor::should_resync), called by the
//! Reflector's resync timer) re-marks every listener by whether its own resync period is due. So
//! a listener without a resync period receives sync notifications (say, after a relist) until the
//! first resync check, and never after it; a listener with one receives them from a check that
//! found it due until the next check.

use std::fmt;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

use smallvec::SmallVec;

use super::handler::Notification;
use super::listener::{ListenerId, ProcessorListener};
use crate::cache::clock::Clock;

/// What [`distribute`](SharedProcessor::distribute) did with one notification.
#[derive(Debug)]
pub struct Distribution<K> {
    /// Sequence number of this distribution, from 1; each listener's
    /// [`Delivery`](crate::cache::Delivery) of it carries the same number.
    pub seq: u64,
    /// The caller's number for the batch it came from (a pop's sequence number), 0 if none.
    pub batch: u64,
    /// The notification, shared by every listener that received it.
    pub notification: Arc<Notification<K>>,
    /// Whether it was a sync notification.
    pub is_sync: bool,
    /// Listeners that did not receive it: not syncing when a sync notification came.
    pub skipped: SmallVec<[ListenerId; 2]>,
}

impl<K> Clone for Distribution<K> {
    fn clone(&self) -> Self {
        Distribution {
            seq: self.seq,
            batch: self.batch,
            notification: self.notification.clone(),
            is_sync: self.is_sync,
            skipped: self.skipped.clone(),
        }
    }
}

/// A listener with its `syncing` mark.
struct Entry<K> {
    listener: Arc<ProcessorListener<K>>,
    /// Whether sync notifications reach it: true from `add_listener` until the first resync
    /// check, then whatever the latest check found.
    syncing: bool,
}

struct State<K> {
    /// Registered listeners, in registration order (client-go keeps them in a map, so its order
    /// across listeners is random; each listener's own order is what the contract is about).
    listeners: Vec<Entry<K>>,
    /// `listenersStarted`: listeners added from now on start their thread at once.
    started: bool,
    /// Started inline: no listener ever gets a thread.
    inline: bool,
    /// Listeners closed by `remove_listener` whose threads `stop` still joins (client-go's
    /// `wg` tracks them too).
    retired: Vec<Arc<ProcessorListener<K>>>,
}

/// client-go's `sharedProcessor`: the listeners of one informer.
pub struct SharedProcessor<K> {
    /// `listenersLock`: read by `distribute`, written by everything that changes the listeners
    /// or their syncing marks.
    state: RwLock<State<K>>,
    /// The last distribution's sequence number.
    seq: AtomicU64,
    clock: Arc<dyn Clock>,
}

impl<K> fmt::Debug for SharedProcessor<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.read();
        f.debug_struct("SharedProcessor")
            .field(
                "listeners",
                &state
                    .listeners
                    .iter()
                    .map(|e| (e.listener.name(), e.syncing))
                    .collect::<Vec<_>>(),
            )
            .field("started", &state.started)
            .finish()
    }
}

impl<K: Send + Sync + 'static> SharedProcessor<K> {
    /// A processor without listeners, not started; `clock` stamps each distribution.
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        SharedProcessor {
            state: RwLock::new(State {
                listeners: Vec::new(),
                started: false,
                inline: false,
                retired: Vec::new(),
            }),
            seq: AtomicU64::new(0),
            clock,
        }
    }

    /// client-go's `sharedProcessor.addListener`: registers `listener` marked syncing, and starts
    /// its thread if the processor runs.
    pub fn add_listener(&self, listener: Arc<ProcessorListener<K>>) -> io::Result<()> {
        let mut state = self.write();
        if state.started && !state.inline {
            listener.start()?;
        }
        state.listeners.push(Entry {
            listener,
            syncing: true,
        });
        Ok(())
    }

    /// client-go's `sharedProcessor.run`, up to where it waits for the stop signal: starts every
    /// listener's thread; listeners added later start at once.
    pub fn start(&self) -> io::Result<()> {
        let mut state = self.write();
        for entry in &state.listeners {
            entry.listener.start()?;
        }
        state.started = true;
        Ok(())
    }

    /// [`start`](SharedProcessor::start) without threads: the listeners are driven inline by
    /// [`call_until`](SharedProcessor::call_until) (a replay's, on its clock).
    pub fn start_inline(&self) {
        let mut state = self.write();
        state.started = true;
        state.inline = true;
    }
}

impl<K> SharedProcessor<K> {
    fn read(&self) -> RwLockReadGuard<'_, State<K>> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, State<K>> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }

    /// client-go's `sharedProcessor.distribute`: adds `notification` to every listener, or, for a
    /// sync notification, to every listener marked syncing. Never waits for a handler.
    pub fn distribute(&self, notification: Notification<K>, is_sync: bool) -> Distribution<K> {
        self.distribute_from(0, notification, is_sync)
    }

    /// [`distribute`](SharedProcessor::distribute) of a notification that came from the caller's
    /// batch number `batch` (a pop's sequence number), which each delivery carries.
    pub fn distribute_from(
        &self,
        batch: u64,
        notification: Notification<K>,
        is_sync: bool,
    ) -> Distribution<K> {
        let notification = Arc::new(notification);
        let seq = self.seq.fetch_add(1, Ordering::Relaxed) + 1;
        let now = self.clock.now();
        let mut skipped = SmallVec::new();
        for entry in &self.read().listeners {
            if !is_sync || entry.syncing {
                entry
                    .listener
                    .enqueue(notification.clone(), seq, batch, is_sync, now);
            } else {
                skipped.push(entry.listener.id());
            }
        }
        Distribution {
            seq,
            batch,
            notification,
            is_sync,
            skipped,
        }
    }

    /// client-go's `sharedProcessor.shouldResync`, run by each tick of the Reflector's resync
    /// timer: marks each listener syncing exactly when its own resync is due at `now`, moves each
    /// due listener's next resync one period past `now`, and returns whether any was due (if none
    /// is, the Reflector skips the queue's resync).
    pub fn should_resync(&self, now: Instant) -> bool {
        let mut state = self.write();
        let mut any = false;
        for entry in &mut state.listeners {
            let due = entry.listener.should_resync(now);
            entry.syncing = due;
            if due {
                any = true;
                entry.listener.determine_next_resync(now);
            }
        }
        any
    }

    /// client-go's `sharedProcessor.resyncCheckPeriodChanged`: re-derives every listener's resync
    /// period from what it asked for, under the informer's new check period.
    pub fn resync_check_period_changed(&self, check: Duration) {
        for entry in &self.read().listeners {
            let requested = entry.listener.requested_resync_period();
            let (period, _) = super::resync_plan::determine_resync_period(requested, check);
            entry.listener.set_resync_period(period);
        }
    }

    /// client-go's `sharedProcessor.removeListener`: unregisters the listener and, if the
    /// processor runs, closes it (its buffered notifications are dropped, its current handler
    /// call finishes). Returns it, or `None` if it was not registered.
    pub fn remove_listener(&self, id: ListenerId) -> Option<Arc<ProcessorListener<K>>> {
        let mut state = self.write();
        let at = state.listeners.iter().position(|e| e.listener.id() == id)?;
        let listener = state.listeners.remove(at).listener;
        if state.started {
            listener.close();
            state.retired.push(listener.clone());
        }
        Some(listener)
    }

    /// The end of client-go's `sharedProcessor.run`: closes every listener, which **abandons**
    /// their buffered notifications (client-go closes `addCh`, and `pop` returns without handing
    /// over what it holds), unregisters them, and waits for each handler call in progress to
    /// return. Returns the listeners it stopped.
    pub fn stop(&self) -> Vec<Arc<ProcessorListener<K>>> {
        let (listeners, retired) = {
            let mut state = self.write();
            state.started = false;
            let listeners: Vec<_> = state.listeners.drain(..).map(|e| e.listener).collect();
            (listeners, std::mem::take(&mut state.retired))
        };
        for listener in &listeners {
            listener.close();
        }
        // Joined without the lock, so that a handler that distributes or reads the processor
        // can still return.
        for listener in listeners.iter().chain(&retired) {
            listener.join();
        }
        listeners
    }

    /// Makes, on the caller's thread, every handler call of listeners driven inline (never
    /// started) that begins by `until`, earliest first across listeners (registration order
    /// breaks ties), each stamped with its begin time: the calls their threads would have made by
    /// then, on a clock that only moves when the caller says so (a replay's). Returns how many.
    pub fn call_until(&self, until: Instant) -> usize
    where
        K: 'static,
    {
        let listeners = self.listeners();
        let mut calls = 0;
        loop {
            // The earliest of every listener's next call and pending sync, a sync first when
            // they tie (it happened at the end of the previous call).
            let next = listeners
                .iter()
                .flat_map(|l| {
                    let synced = l.synced_due().map(|at| (at, 0, l));
                    let call = l.next_call().map(|at| (at, 1, l));
                    synced.into_iter().chain(call)
                })
                .filter(|(at, _, _)| *at <= until)
                .min_by_key(|(at, kind, _)| (*at, *kind));
            let Some((_, kind, listener)) = next else {
                return calls;
            };
            let done = if kind == 0 {
                listener.tell_synced()
            } else {
                listener.call_next()
            };
            if !done {
                return calls;
            }
            calls += 1;
        }
    }

    /// Whether the processor runs.
    pub fn is_started(&self) -> bool {
        self.read().started
    }

    /// The registered listeners, in registration order.
    pub fn listeners(&self) -> Vec<Arc<ProcessorListener<K>>> {
        self.read()
            .listeners
            .iter()
            .map(|e| e.listener.clone())
            .collect()
    }

    /// client-go's `sharedProcessor.getListener`.
    pub fn listener(&self, id: ListenerId) -> Option<Arc<ProcessorListener<K>>> {
        self.read()
            .listeners
            .iter()
            .find(|e| e.listener.id() == id)
            .map(|e| e.listener.clone())
    }

    /// Each listener with whether it is marked syncing, in registration order.
    pub fn syncing(&self) -> Vec<(ListenerId, bool)> {
        self.read()
            .listeners
            .iter()
            .map(|e| (e.listener.id(), e.syncing))
            .collect()
    }

    /// The clock the processor stamps with.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }
}

#[cfg(test)]
#[path = "processor_tests.rs"]
mod tests;
