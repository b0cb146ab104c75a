//! The plain FIFO (client-go's `tools/cache/fifo.go`, v0.27–v0.32): one latest object per key,
//! keys in the order they were first queued, and no delta types.
//!
//! What client-go's doc comment promises: every object is processed (once), at its most recent
//! version, deleted objects are not processed, and nothing is reprocessed periodically. What it
//! costs: a pop hands out an object, never a change, so the consumer cannot tell an add from an
//! update, and never hears of a deletion: [`delete`](Fifo::delete) only removes the object from
//! `items`; the key stays in the queue and the pop that reaches it skips it. A
//! [`DeltaFifo`](crate::cache::DeltaFifo) would have queued a `Deleted` delta instead. Older controllers
//! and many hand-written work queues behave like this; the contrast is `docs/queues.md`'s.
//!
//! A [`Reflector`](crate::cache::Reflector) feeds it as the [`ReflectorStore`] it is. For a
//! consumer written against
//! [`InformerQueue`](crate::cache::InformerQueue)'s pops, [`pop_deltas`](Fifo::pop_deltas) hands each object out as a
//! one-delta [`Deltas`] (see there for the adaptation).
//!
//! ## Where this differs from client-go, and why
//! - `replace` queues the listed keys in list order and `resync` re-queues keys in sorted order
//!   (client-go walks a Go map, in random order), so a replay always pops the same sequence.
//! - The FIFO counts what the consumer never sees: objects overwritten while queued
//!   ([`QueueStats::coalesced`]) and queued objects removed before any pop took them
//!   ([`QueueStats::dropped`]), so that a renderer can say how much was lost.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::fmt;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

use hashbrown::{HashMap, HashSet};

use super::{InformerQueue, PoppedDeltas, QueueKind, QueueStats};
use super::{PopError, ProcessError};
use crate::cache::delta::{Delta, DeltaObject, DeltaType, Deltas};
use crate::cache::key::{CacheObject, object_key};
use crate::cache::store::ReflectorStore;

/// One entry of the queue: a key and when it was queued.
struct Entry {
    key: Arc<str>,
    queued_at: Instant,
}

struct State<K> {
    /// key → the newest object written under it and not popped yet. Every key here is also in
    /// `queue` (client-go: "every key in `items` is also in `queue`"); not the reverse.
    items: HashMap<Arc<str>, Arc<K>>,
    /// Keys in FIFO order. It may hold keys no longer in `items` (deleted while queued), and a key
    /// twice (deleted while queued, then added again: the first entry delivers the object, the
    /// second finds nothing); a pop skips every entry whose key is not in `items`.
    queue: VecDeque<Entry>,
    /// True once anything was added, updated, deleted or requeued, or the first `replace` ran.
    populated: bool,
    /// Entries the first `replace` queued that no pop has taken (or skipped) yet; `has_synced`
    /// once zero and `populated`.
    initial_population_count: usize,
    /// Set by `close`; pops then drain the queue and report the end.
    closed: bool,
    /// Threads blocked in a pop; lets mutations skip the condvar wake-up when nobody waits.
    waiters: usize,
    coalesced: u64,
    dropped: u64,
    peak_len: usize,
}

impl<K> State<K> {
    fn stats(&self) -> QueueStats {
        QueueStats {
            len: self.items.len(),
            peak_len: self.peak_len,
            coalesced: self.coalesced,
            dropped: self.dropped,
            populated: self.populated,
            synced: self.has_synced(),
        }
    }

    fn has_synced(&self) -> bool {
        self.populated && self.initial_population_count == 0
    }

    fn enqueue(&mut self, key: Arc<str>) {
        self.queue.push_back(Entry {
            key,
            queued_at: Instant::now(),
        });
    }

    fn note_len(&mut self) {
        self.peak_len = self.peak_len.max(self.items.len());
    }

    /// client-go's `Add`: the key is queued only if it has no object waiting; the object replaces
    /// whatever was waiting.
    fn add(&mut self, key: Arc<str>, obj: Arc<K>) {
        self.populated = true;
        match self.items.get_mut(&key) {
            Some(waiting) => {
                *waiting = obj;
                self.coalesced += 1;
            }
            None => {
                self.enqueue(key.clone());
                self.items.insert(key, obj);
                self.note_len();
            }
        }
    }

    /// client-go's `addIfNotPresent`: nothing happens if the key has an object waiting.
    fn add_if_not_present(&mut self, key: Arc<str>, obj: Arc<K>) -> bool {
        self.populated = true;
        if self.items.contains_key(&key) {
            return false;
        }
        self.enqueue(key.clone());
        self.items.insert(key, obj);
        self.note_len();
        true
    }

    /// client-go's `Delete`: the object leaves `items`, its key stays queued.
    fn delete(&mut self, key: &str) -> bool {
        self.populated = true;
        let removed = self.items.remove(key).is_some();
        if removed {
            self.dropped += 1;
        }
        removed
    }
}

/// A producer/consumer queue of the latest object per key (client-go's `FIFO`), shared as
/// `Arc<Fifo<K>>`; every method takes `&self`.
pub struct Fifo<K> {
    state: Mutex<State<K>>,
    /// Signalled when a key is queued or the FIFO is closed.
    cond: Condvar,
}

/// An object taken from a [`Fifo`], with what `process` returned for it.
#[derive(Debug)]
pub struct PoppedObject<K, T> {
    /// The object's key.
    pub key: Arc<str>,
    /// The newest object written under the key before the pop.
    pub object: Arc<K>,
    /// Whether the key belonged to the initial list (popped before `has_synced`).
    pub is_in_initial_list: bool,
    /// When the key's queue entry was made (an object written to a key already waiting keeps
    /// the older entry's place, and so its time).
    pub enqueued_at: Instant,
    /// When it was popped.
    pub popped_at: Instant,
    /// Objects still waiting after this pop.
    pub queue_len: usize,
    /// What `process` returned.
    pub output: T,
}

impl<K> fmt::Debug for Fifo<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fifo")
            .field("stats", &self.lock().stats())
            .finish()
    }
}

impl<K> Default for Fifo<K> {
    fn default() -> Self {
        Fifo {
            state: Mutex::new(State {
                items: HashMap::new(),
                queue: VecDeque::new(),
                populated: false,
                initial_population_count: 0,
                closed: false,
                waiters: 0,
                coalesced: 0,
                dropped: 0,
                peak_len: 0,
            }),
            cond: Condvar::new(),
        }
    }
}

impl<K> Fifo<K> {
    /// An empty FIFO (client-go's `NewFIFO(MetaNamespaceKeyFunc)`).
    pub fn new() -> Self {
        Self::default()
    }

    // Every mutation leaves the state consistent before anything that could panic runs (`process`
    // runs after the object left `items`), so a poisoned lock still guards a valid queue.
    fn lock(&self) -> MutexGuard<'_, State<K>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wake(&self, state: &State<K>) {
        if state.waiters > 0 {
            self.cond.notify_all();
        }
    }

    /// Every waiting object, in key order (client-go's `List`, which is in map order).
    pub fn list(&self) -> Vec<Arc<K>> {
        let state = self.lock();
        let mut entries: Vec<(&Arc<str>, &Arc<K>)> = state.items.iter().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        entries.into_iter().map(|(_, obj)| obj.clone()).collect()
    }

    /// The keys of every waiting object, sorted (client-go's `ListKeys`).
    pub fn list_keys(&self) -> Vec<Arc<str>> {
        let mut keys: Vec<Arc<str>> = self.lock().items.keys().cloned().collect();
        keys.sort_unstable();
        keys
    }

    /// The object waiting under `key` (client-go's `GetByKey`).
    pub fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        self.lock().items.get(key).cloned()
    }

    /// Takes the oldest waiting object, blocking while none waits, and runs `process` on it with
    /// the FIFO lock held, with whether it belongs to the initial list (client-go's `Pop`).
    /// Returns [`PopError::Closed`] once the FIFO is closed and drained.
    ///
    /// Queue entries whose key was deleted are popped past, and count toward the initial
    /// population as client-go's do: a key deleted before its first pop still lets `has_synced`
    /// become true. If `process` returns [`ProcessError::Requeue`], the object goes back to the end
    /// of the queue unless its key was written meanwhile (client-go's `ErrRequeue`).
    pub fn pop<T, E>(
        &self,
        process: impl FnOnce(&Arc<K>, bool) -> Result<T, ProcessError<E>>,
    ) -> Result<PoppedObject<K, T>, PopError<E>> {
        let mut state = self.lock();
        loop {
            if let Some(next) = state.take_next() {
                return self.process_locked(state, next, process);
            }
            if state.closed {
                return Err(PopError::Closed);
            }
            state.waiters += 1;
            state = self.cond.wait(state).unwrap_or_else(|e| e.into_inner());
            state.waiters -= 1;
        }
    }

    /// Like [`pop`](Fifo::pop) but returns `Ok(None)` instead of blocking when no object waits
    /// and the FIFO is open.
    pub fn try_pop<T, E>(
        &self,
        process: impl FnOnce(&Arc<K>, bool) -> Result<T, ProcessError<E>>,
    ) -> Result<Option<PoppedObject<K, T>>, PopError<E>> {
        let mut state = self.lock();
        match state.take_next() {
            Some(next) => self.process_locked(state, next, process).map(Some),
            None if state.closed => Err(PopError::Closed),
            None => Ok(None),
        }
    }

    fn process_locked<T, E>(
        &self,
        mut state: MutexGuard<'_, State<K>>,
        next: Next<K>,
        process: impl FnOnce(&Arc<K>, bool) -> Result<T, ProcessError<E>>,
    ) -> Result<PoppedObject<K, T>, PopError<E>> {
        let queue_len = state.items.len();
        let popped_at = Instant::now();
        match process(&next.object, next.is_in_initial_list) {
            Ok(output) => Ok(PoppedObject {
                key: next.entry.key,
                object: next.object,
                is_in_initial_list: next.is_in_initial_list,
                enqueued_at: next.entry.queued_at,
                popped_at,
                queue_len,
                output,
            }),
            Err(ProcessError::Requeue(err)) => {
                state.add_if_not_present(next.entry.key, next.object);
                self.wake(&state);
                Err(PopError::Process(err))
            }
            Err(ProcessError::Fail(err)) => Err(PopError::Process(err)),
        }
    }

    /// [`pop`](Fifo::pop) in the shape of [`InformerQueue::pop_batch`](crate::cache::InformerQueue::pop_batch): the
    /// object comes as one `Sync` delta under its key, and `process` cannot fail. `Sync` is
    /// client-go's type for "the object as it is now", which is all a FIFO knows: whether the
    /// consumer has it already is for the consumer to find out, as
    /// [`process_deltas`](crate::cache::process_deltas) does (an add or an update of its cache). No pop
    /// is ever a deletion. `None` once the FIFO is closed and drained.
    pub fn pop_deltas(&self, process: &mut dyn FnMut(&Deltas<K>, bool)) -> Option<PoppedDeltas<K>> {
        self.pop(as_deltas(process)).ok().map(popped_deltas)
    }

    /// Like [`pop_deltas`](Fifo::pop_deltas) but returns `None` at once when no object waits.
    pub fn try_pop_deltas(
        &self,
        process: &mut dyn FnMut(&Deltas<K>, bool),
    ) -> Option<PoppedDeltas<K>> {
        self.try_pop(as_deltas(process))
            .ok()
            .flatten()
            .map(popped_deltas)
    }
}

/// The next object a pop takes, with its queue entry.
struct Next<K> {
    entry: Entry,
    object: Arc<K>,
    is_in_initial_list: bool,
}

impl<K> State<K> {
    /// Dequeues entries until one whose key has an object waiting, which leaves `items`; `None`
    /// once the queue is empty. client-go's `Pop` loop: whether the object belongs to the
    /// initial list is decided before its entry counts down the initial population, and so is
    /// every skipped entry's.
    fn take_next(&mut self) -> Option<Next<K>> {
        loop {
            let is_in_initial_list = !self.has_synced();
            let entry = self.queue.pop_front()?;
            self.initial_population_count = self.initial_population_count.saturating_sub(1);
            if let Some(object) = self.items.remove(&entry.key) {
                return Some(Next {
                    entry,
                    object,
                    is_in_initial_list,
                });
            }
        }
    }
}

fn as_deltas<K>(
    process: &mut dyn FnMut(&Deltas<K>, bool),
) -> impl FnOnce(&Arc<K>, bool) -> Result<Deltas<K>, ProcessError<Infallible>> + '_ {
    |obj, initial| {
        let deltas = Deltas::new(vec![Delta::new(DeltaType::Sync, obj.clone())]);
        process(&deltas, initial);
        Ok(deltas)
    }
}

fn popped_deltas<K>(popped: PoppedObject<K, Deltas<K>>) -> PoppedDeltas<K> {
    PoppedDeltas {
        key: Some(popped.key),
        deltas: popped.output,
        is_in_initial_list: popped.is_in_initial_list,
        enqueued_at: popped.enqueued_at,
        popped_at: popped.popped_at,
        queue_len: popped.queue_len,
    }
}

impl<K: CacheObject> Fifo<K> {
    /// client-go's `Delete`: the object waiting under `obj`'s key, if any, is removed, and the
    /// consumer will never hear of it; nothing is queued. Returns whether an object was waiting
    /// (and so was dropped unseen).
    pub fn delete(&self, obj: &K) -> bool {
        self.delete_key(&object_key(obj))
    }

    /// [`delete`](Fifo::delete) by key.
    pub fn delete_key(&self, key: &str) -> bool {
        self.lock().delete(key)
    }

    /// client-go's `AddIfNotPresent`: queues `obj` only if nothing waits under its key, so that a
    /// consumer retrying an object it popped does not overwrite a newer one. Returns whether it
    /// was queued.
    pub fn add_if_not_present(&self, obj: Arc<K>) -> bool {
        let key: Arc<str> = object_key(obj.as_ref()).into();
        let mut state = self.lock();
        let queued = state.add_if_not_present(key, obj);
        self.wake(&state);
        queued
    }

    /// The object waiting under `obj`'s key (client-go's `Get`).
    pub fn get(&self, obj: &K) -> Option<Arc<K>> {
        self.get_by_key(&object_key(obj))
    }
}

/// What a Reflector's calls do to a FIFO.
impl<K: CacheObject + Send + Sync> ReflectorStore<K> for Fifo<K> {
    /// client-go's `Add`: `obj` becomes the object waiting under its key; the key is queued only if
    /// nothing waited under it, so an object written again keeps its place in line.
    fn add(&self, obj: Arc<K>) {
        let key: Arc<str> = object_key(obj.as_ref()).into();
        let mut state = self.lock();
        state.add(key, obj);
        self.wake(&state);
    }

    /// client-go's `Update`: the same as [`add`](Fifo::add).
    fn update(&self, obj: Arc<K>) {
        self.add(obj);
    }

    /// Applied, never queued: returns false. A tombstone deletes its key; a whole-list payload
    /// deletes nothing.
    fn delete(&self, obj: DeltaObject<K>) -> bool {
        if obj.list().is_none() {
            self.delete_key(&obj.key());
        }
        false
    }

    /// client-go's `Replace`: the listed objects become the waiting ones (a new `items`), and the
    /// queue is rebuilt with their keys, in list order; a key listed twice keeps its first place
    /// and its last object. Waiting objects not listed are dropped unseen, as are queue entries of
    /// deleted keys.
    ///
    /// The first `replace` of a FIFO never populated sets the initial population to the number of
    /// distinct keys listed. `resource_version` is not used, as in client-go.
    fn replace(&self, list: Vec<Arc<K>>, resource_version: &str) {
        let _ = resource_version;
        let mut items: HashMap<Arc<str>, Arc<K>> = HashMap::with_capacity(list.len());
        let mut order: Vec<Arc<str>> = Vec::with_capacity(list.len());
        for obj in list {
            let key: Arc<str> = object_key(obj.as_ref()).into();
            if items.insert(key.clone(), obj).is_none() {
                order.push(key);
            }
        }
        let mut state = self.lock();
        if !state.populated {
            state.populated = true;
            state.initial_population_count = items.len();
        }
        let kept = state
            .items
            .keys()
            .filter(|k| items.contains_key(*k))
            .count();
        state.coalesced += kept as u64;
        state.dropped += (state.items.len() - kept) as u64;
        state.items = items;
        state.queue.clear();
        for key in order {
            state.enqueue(key);
        }
        state.note_len();
        self.wake(&state);
    }

    /// client-go's `Resync`: queues again every key with an object waiting but no queue entry,
    /// in key order, and returns how many. Every operation keeps waiting keys queued, so this
    /// finds nothing; client-go's comment calls it a no-op.
    fn resync(&self) -> usize {
        let mut state = self.lock();
        let queued: HashSet<&Arc<str>> = state.queue.iter().map(|e| &e.key).collect();
        let mut missing: Vec<Arc<str>> = state
            .items
            .keys()
            .filter(|key| !queued.contains(key))
            .cloned()
            .collect();
        drop(queued);
        missing.sort_unstable();
        let n = missing.len();
        for key in missing {
            state.enqueue(key);
        }
        self.wake(&state);
        n
    }

    /// client-go's `HasSynced`: true once an add, update, delete or `add_if_not_present` came
    /// first, or once every entry the first `replace` queued has been popped or skipped.
    fn has_synced(&self) -> bool {
        self.lock().has_synced()
    }

    // No `bookmark`: client-go's FIFO is no `ReflectorBookmarkStore`.

    fn is_drained(&self) -> bool {
        self.lock().queue.is_empty()
    }
}

/// The FIFO as an informer's queue (`--fifo plain`): the producer side is the
/// [`ReflectorStore`] one, so a deletion is applied and never queued; a pop is
/// [`pop_deltas`](Fifo::pop_deltas)'s one `Sync` delta, whatever `max` asks (a FIFO pop is one
/// key, as a DeltaFIFO's).
impl<K: CacheObject + Send + Sync> InformerQueue<K> for Fifo<K> {
    /// Closes the FIFO: blocked and later pops drain what waits, then return
    /// [`PopError::Closed`]. Producers may still write; what they queue is popped too.
    fn close(&self) {
        self.lock().closed = true;
        self.cond.notify_all();
    }

    /// Whether [`close`](Fifo::close) was called.
    fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Objects waiting to be popped (queue entries of deleted keys do not count).
    fn len(&self) -> usize {
        self.lock().items.len()
    }

    /// Counters for status lines: `len` and `peak_len` count waiting objects, `coalesced` the
    /// objects overwritten while waiting, `dropped` the waiting objects removed unseen.
    fn stats(&self) -> QueueStats {
        self.lock().stats()
    }

    fn kind(&self) -> QueueKind {
        QueueKind::Plain
    }

    fn pop_batch(
        &self,
        _max: usize,
        process: &mut dyn FnMut(&Deltas<K>, bool),
    ) -> Option<PoppedDeltas<K>> {
        self.pop_deltas(process)
    }

    fn try_pop_batch(
        &self,
        _max: usize,
        process: &mut dyn FnMut(&Deltas<K>, bool),
    ) -> Option<PoppedDeltas<K>> {
        self.try_pop_deltas(process)
    }
}

#[cfg(test)]
#[path = "fifo_tests.rs"]
mod tests;
