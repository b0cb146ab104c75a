//! The ExpirationCache (client-go's `tools/cache/expiration_cache.go`): a store whose entries
//! carry the time they were stored and vanish once an [`ExpirationPolicy`] says they expired
//! (normally a [`TtlPolicy`]: older than a TTL).
//!
//! Expiry happens on read, never in the background: an expired entry stays until a
//! [`get`](ExpirationCache::get), [`get_by_key`](ExpirationCache::get_by_key) or
//! [`list`](ExpirationCache::list) finds it, which deletes it and answers as if it were not there.
//! [`list_keys`](ExpirationCache::list_keys) does not look at timestamps, so it still shows expired
//! keys until a read removes them. Writes stamp entries with the cache's [`Clock`]: pass a replay's
//! clock and entries age with the recording's time, not the machine's.
//!
//! ## Where this differs from client-go, and why
//! - One lock guards the entries and the expiry check (client-go has a thread-safe store plus an
//!   `expirationLock` taken around each check and write); the effect is the same: no write can
//!   slip in between the check that an entry expired and its deletion.
//! - [`list`](ExpirationCache::list) is in key order (client-go's is in map order).
//! - The cache counts the entries it expired ([`expired`](ExpirationCache::expired)), so that a
//!   renderer can say how many vanished.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use hashbrown::HashMap;

use super::reflector_store::ReflectorStore;
use crate::cache::clock::Clock;
use crate::cache::delta::DeltaObject;
use crate::cache::key::{CacheObject, object_key};

/// An object with the time it was stored (client-go's `TimestampedEntry`).
#[derive(Debug)]
pub struct TimestampedEntry<K> {
    /// The object.
    pub obj: Arc<K>,
    /// When it was stored, on the cache's clock.
    pub timestamp: Instant,
    key: Arc<str>,
}

impl<K> TimestampedEntry<K> {
    /// The entry's store key.
    pub fn key(&self) -> &str {
        &self.key
    }
}

/// Decides when an entry expires (client-go's `ExpirationPolicy`).
pub trait ExpirationPolicy<K>: Send + Sync {
    /// Whether `entry` has expired.
    fn is_expired(&self, entry: &TimestampedEntry<K>) -> bool;
}

/// Entries expire once older than a TTL (client-go's `TTLPolicy`).
pub struct TtlPolicy {
    /// Entries older than this expire; zero never expires any (client-go: `<= 0`).
    pub ttl: Duration,
    /// The clock an entry's age is measured on.
    pub clock: Arc<dyn Clock>,
}

impl fmt::Debug for TtlPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TtlPolicy")
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl<K> ExpirationPolicy<K> for TtlPolicy {
    /// client-go's `TTLPolicy.IsExpired`: strictly older than the TTL, so an entry exactly the
    /// TTL old is still alive.
    fn is_expired(&self, entry: &TimestampedEntry<K>) -> bool {
        !self.ttl.is_zero()
            && self.clock.now().saturating_duration_since(entry.timestamp) > self.ttl
    }
}

struct State<K> {
    /// key → the object stored under it, with when; expired entries stay until a read finds them.
    entries: HashMap<Arc<str>, TimestampedEntry<K>>,
    /// Entries reads found expired and deleted.
    expired: u64,
}

/// A store whose entries expire (client-go's `ExpirationCache`, `NewTTLStore`,
/// `NewExpirationStore`).
pub struct ExpirationCache<K> {
    state: Mutex<State<K>>,
    /// Stamps writes.
    clock: Arc<dyn Clock>,
    policy: Box<dyn ExpirationPolicy<K>>,
    /// True once anything was written.
    populated: AtomicBool,
}

impl<K> fmt::Debug for ExpirationCache<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.lock();
        f.debug_struct("ExpirationCache")
            .field("entries", &state.entries.len())
            .field("expired", &state.expired)
            .finish_non_exhaustive()
    }
}

impl<K> ExpirationCache<K> {
    /// Entries expire once older than `ttl` (zero: never) on `clock` (client-go's `NewTTLStore`,
    /// with an injectable clock).
    pub fn ttl(ttl: Duration, clock: Arc<dyn Clock>) -> Self {
        let policy = TtlPolicy {
            ttl,
            clock: clock.clone(),
        };
        Self::with_policy(Box::new(policy), clock)
    }

    /// Entries expire when `policy` says so; `clock` stamps them (client-go's
    /// `NewExpirationStore`).
    pub fn with_policy(policy: Box<dyn ExpirationPolicy<K>>, clock: Arc<dyn Clock>) -> Self {
        ExpirationCache {
            state: Mutex::new(State {
                entries: HashMap::new(),
                expired: 0,
            }),
            clock,
            policy,
            populated: AtomicBool::new(false),
        }
    }

    // Every mutation is a single map operation, so a poisoned lock still guards valid entries.
    fn lock(&self) -> MutexGuard<'_, State<K>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// client-go's `getOrExpire`: the object under `key` unless it expired, in which case the
    /// entry is deleted.
    fn get_or_expire(&self, state: &mut State<K>, key: &str) -> Option<Arc<K>> {
        let entry = state.entries.get(key)?;
        if !self.policy.is_expired(entry) {
            return Some(entry.obj.clone());
        }
        state.entries.remove(key);
        state.expired += 1;
        None
    }

    /// The object stored under `key`, unless it expired, which deletes it (client-go's
    /// `GetByKey`).
    pub fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        self.get_or_expire(&mut self.lock(), key)
    }

    /// Every unexpired object, in key order; the expired ones are deleted (client-go's `List`).
    pub fn list(&self) -> Vec<Arc<K>> {
        let mut state = self.lock();
        let mut keys: Vec<Arc<str>> = state.entries.keys().cloned().collect();
        keys.sort_unstable();
        keys.iter()
            .filter_map(|key| self.get_or_expire(&mut state, key))
            .collect()
    }

    /// Every stored key, expired or not, sorted: no expiry happens here (client-go's `ListKeys`).
    pub fn list_keys(&self) -> Vec<Arc<str>> {
        let mut keys: Vec<Arc<str>> = self.lock().entries.keys().cloned().collect();
        keys.sort_unstable();
        keys
    }

    /// How many entries reads have found expired and deleted.
    pub fn expired(&self) -> u64 {
        self.lock().expired
    }

    /// Removes the entry under `key`.
    pub fn delete_key(&self, key: &str) {
        self.populated.store(true, Ordering::Release);
        self.lock().entries.remove(key);
    }
}

impl<K: CacheObject> ExpirationCache<K> {
    /// The object stored under `obj`'s key, unless it expired, which deletes it (client-go's
    /// `Get`).
    pub fn get(&self, obj: &K) -> Option<Arc<K>> {
        self.get_by_key(&object_key(obj))
    }

    /// Stores `obj` stamped with the clock's now, over any entry under its key (client-go's
    /// `Add`).
    pub fn add(&self, obj: Arc<K>) {
        let key: Arc<str> = object_key(obj.as_ref()).into();
        let entry = TimestampedEntry {
            obj,
            timestamp: self.clock.now(),
            key: key.clone(),
        };
        self.populated.store(true, Ordering::Release);
        self.lock().entries.insert(key, entry);
    }

    /// The same as [`add`](ExpirationCache::add), so an update refreshes the timestamp (client-go's
    /// `Update`).
    pub fn update(&self, obj: Arc<K>) {
        self.add(obj);
    }

    /// Removes the entry under `obj`'s key (client-go's `Delete`).
    pub fn delete(&self, obj: &K) {
        self.delete_key(&object_key(obj));
    }

    /// The entries become `list`, all stamped with one reading of the clock (client-go's
    /// `Replace`). `resource_version` is not used, as in client-go.
    pub fn replace(&self, list: Vec<Arc<K>>, resource_version: &str) {
        let _ = resource_version;
        let timestamp = self.clock.now();
        let entries = list
            .into_iter()
            .map(|obj| {
                let key: Arc<str> = object_key(obj.as_ref()).into();
                let entry = TimestampedEntry {
                    obj,
                    timestamp,
                    key: key.clone(),
                };
                (key, entry)
            })
            .collect();
        self.populated.store(true, Ordering::Release);
        self.lock().entries = entries;
    }
}

/// What a Reflector's calls do to an ExpirationCache: writes restamp, a resync does nothing.
impl<K: CacheObject + Send + Sync> ReflectorStore<K> for ExpirationCache<K> {
    fn add(&self, obj: Arc<K>) {
        ExpirationCache::add(self, obj);
    }

    fn update(&self, obj: Arc<K>) {
        ExpirationCache::update(self, obj);
    }

    /// Applied (returns true) for an object or a tombstone; a whole-list payload deletes nothing.
    fn delete(&self, obj: DeltaObject<K>) -> bool {
        if obj.list().is_some() {
            return false;
        }
        self.delete_key(&obj.key());
        true
    }

    fn replace(&self, list: Vec<Arc<K>>, resource_version: &str) {
        ExpirationCache::replace(self, list, resource_version);
    }

    /// client-go's `Resync` of the underlying store, which does nothing.
    fn resync(&self) -> usize {
        0
    }

    fn has_synced(&self) -> bool {
        self.populated.load(Ordering::Acquire)
    }

    /// Nothing is ever waiting: writes are applied before the call returns.
    fn is_drained(&self) -> bool {
        true
    }
}

#[cfg(test)]
#[path = "expiration_cache_tests.rs"]
mod tests;
