//! The ExpirationCache's rules, after client-go's `expiration_cache_test.go` (rewritten, not
//! copied): its fake policy expires every key but a chosen few, its TTL policy runs on a clock
//! that only moves when told.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::object::Object;

use super::*;
use crate::cache::test_objects::{cm, rv};
use crate::cache::testing::ManualClock;

/// client-go's `FakeExpirationPolicy`: every key expires except those in `never_expire`.
#[derive(Default)]
struct FakePolicy {
    never_expire: Arc<Mutex<HashSet<String>>>,
}

impl ExpirationPolicy<Object> for FakePolicy {
    fn is_expired(&self, entry: &TimestampedEntry<Object>) -> bool {
        !self.never_expire.lock().unwrap().contains(entry.key())
    }
}

/// A cache with a [`FakePolicy`], and the policy's set to change it later.
fn fake(never_expire: &[&str]) -> (ExpirationCache<Object>, Arc<Mutex<HashSet<String>>>) {
    let set: HashSet<String> = never_expire.iter().map(|k| (*k).to_owned()).collect();
    let policy = FakePolicy {
        never_expire: Arc::new(Mutex::new(set)),
    };
    let handle = policy.never_expire.clone();
    (
        ExpirationCache::with_policy(Box::new(policy), ManualClock::new()),
        handle,
    )
}

fn keys(cache: &ExpirationCache<Object>) -> Vec<String> {
    cache.list_keys().iter().map(|k| k.to_string()).collect()
}

const SECOND: Duration = Duration::from_secs(1);

/// `TestTTLExpirationBasic`: a read of an expired entry answers "absent" and deletes it.
#[test]
fn reading_an_expired_entry_deletes_it() {
    let (cache, _) = fake(&[]);
    cache.add(cm("ns", "foo", 1));
    assert_eq!(keys(&cache), ["ns/foo"], "expiry waits for a read");
    assert!(cache.get(&cm("ns", "foo", 0)).is_none());
    assert!(keys(&cache).is_empty(), "the read deleted it");
    assert_eq!(cache.expired(), 1);
}

/// `TestReAddExpiredItem`: a key expired by a read can be added again, with its new value.
#[test]
fn an_expired_key_can_be_added_again() {
    let (cache, never_expire) = fake(&[]);
    cache.add(cm("ns", "foo", 1));
    assert!(cache.get_by_key("ns/foo").is_none());
    cache.add(cm("ns", "foo", 2));
    never_expire.lock().unwrap().insert("ns/foo".into());
    let obj = cache.get_by_key("ns/foo").expect("the new value");
    assert_eq!(rv(&obj), 2);
}

/// `TestTTLList`: a list returns only unexpired objects and deletes the others.
#[test]
fn list_returns_the_unexpired_and_deletes_the_expired() {
    let (cache, _) = fake(&["ns/foo1"]);
    for name in ["foo", "foo1", "foo2"] {
        cache.add(cm("ns", name, 1));
    }
    let listed: Vec<String> = cache
        .list()
        .iter()
        .map(|o| object_key(o.as_ref()))
        .collect();
    assert_eq!(listed, ["ns/foo1"]);
    assert_eq!(keys(&cache), ["ns/foo1"]);
    assert_eq!(cache.expired(), 2);
}

/// `TestTTLPolicy`: expired only when strictly older than the TTL; a zero TTL never expires.
#[test]
fn the_ttl_policy_expires_entries_strictly_older_than_the_ttl() {
    let clock = ManualClock::new();
    let entry = TimestampedEntry {
        obj: cm("ns", "a", 1),
        timestamp: clock.now(),
        key: "ns/a".into(),
    };
    let policy = TtlPolicy {
        ttl: 30 * SECOND,
        clock: clock.clone(),
    };
    let expired = |policy: &TtlPolicy| ExpirationPolicy::<Object>::is_expired(policy, &entry);
    assert!(!expired(&policy), "not before the TTL");
    clock.advance(30 * SECOND);
    assert!(!expired(&policy), "not exactly on the TTL");
    clock.advance(SECOND);
    assert!(expired(&policy), "older than the TTL");
    let never = TtlPolicy {
        ttl: Duration::ZERO,
        clock: clock.clone(),
    };
    assert!(!expired(&never), "a zero TTL never expires");
}

#[test]
fn add_stamps_with_the_clock_and_an_update_restamps() {
    let clock = ManualClock::new();
    let cache = ExpirationCache::ttl(10 * SECOND, clock.clone());
    cache.add(cm("ns", "a", 1));
    cache.add(cm("ns", "b", 1));
    clock.advance(6 * SECOND);
    cache.update(cm("ns", "b", 2));
    clock.advance(6 * SECOND);
    let left: Vec<u64> = cache.list().iter().map(|o| rv(o)).collect();
    assert_eq!(left, [2], "a is 12 s old, b 6 s");
    assert_eq!(keys(&cache), ["ns/b"]);
}

#[test]
fn replace_stamps_every_entry_with_one_time_and_drops_the_rest() {
    let clock = ManualClock::new();
    let cache = ExpirationCache::ttl(10 * SECOND, clock.clone());
    cache.add(cm("ns", "gone", 1));
    clock.advance(5 * SECOND);
    cache.replace(vec![cm("ns", "a", 2), cm("ns", "b", 2)], "2");
    assert_eq!(keys(&cache), ["ns/a", "ns/b"]);
    let stamps: HashSet<Instant> = cache.lock().entries.values().map(|e| e.timestamp).collect();
    assert_eq!(stamps, HashSet::from([clock.now()]));
    clock.advance(11 * SECOND);
    assert!(cache.list().is_empty());
}

#[test]
fn list_keys_never_expires_anything() {
    let clock = ManualClock::new();
    let cache = ExpirationCache::ttl(SECOND, clock.clone());
    cache.add(cm("ns", "a", 1));
    clock.advance(2 * SECOND);
    assert_eq!(keys(&cache), ["ns/a"]);
    assert_eq!(cache.expired(), 0);
    assert!(cache.get_by_key("ns/a").is_none());
    assert!(keys(&cache).is_empty());
}

#[test]
fn a_delete_removes_the_entry_expired_or_not() {
    let clock = ManualClock::new();
    let cache = ExpirationCache::ttl(SECOND, clock.clone());
    cache.add(cm("ns", "a", 1));
    cache.add(cm("ns", "b", 1));
    clock.advance(2 * SECOND);
    cache.delete(&cm("ns", "a", 2));
    assert_eq!(keys(&cache), ["ns/b"]);
    assert_eq!(cache.expired(), 0, "a deletion is not an expiry");
}

#[test]
fn as_a_reflector_store_writes_are_applied_and_a_resync_does_nothing() {
    let clock = ManualClock::new();
    let cache = ExpirationCache::ttl(SECOND, clock.clone());
    let store: &dyn ReflectorStore<Object> = &cache;
    assert!(!store.has_synced());
    store.replace(vec![cm("ns", "a", 1), cm("ns", "b", 1)], "1");
    assert!(store.has_synced() && store.is_drained());
    store.update(cm("ns", "a", 2));
    assert!(store.delete(DeltaObject::Object(cm("ns", "b", 3))));
    assert_eq!(store.resync(), 0);
    store.bookmark("4");
    let left: Vec<u64> = cache.list().iter().map(|o| rv(o)).collect();
    assert_eq!(left, [2]);
}
