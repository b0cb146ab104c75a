//! A queued key's deltas ([`Pending`]) and the entry that holds them in the queue ([`Queued`]):
//! one delta of an object inline, more in a box, and the key always computed from the newest
//! delta's object, never stored.

use std::sync::Arc;

use crate::cache::delta::{Delta, DeltaObject, DeltaType, Deltas};
use crate::cache::key::{CacheObject, write_object_key};

/// A queued key: its deltas and when it entered the queue. 24 bytes, the whole cost of a queued
/// key beside the index's 4-byte id: no key string is kept, the key is computed from the newest
/// delta's object when needed (client-go's `KeyOf` on the newest delta, as `AddIfNotPresent` does).
pub(super) struct Queued<K> {
    pub(super) deltas: Pending<K>,
    /// When the key entered the queue, in nanoseconds after [`State::epoch`] (an `Instant` is 16
    /// bytes).
    pub(super) enqueued_at: u64,
}

/// A queued key's deltas, oldest first, never empty. One delta carrying an object is kept inline:
/// most queued keys hold one (a list's objects, a watch event for a key not queued yet), and a
/// `Vec` of one would be a heap block of its own. 16 bytes.
pub(super) enum Pending<K> {
    /// One delta carrying an object.
    Object(DeltaType, Arc<K>),
    /// One delta of another payload (a tombstone).
    Other(Box<Delta<K>>),
    /// Several deltas (or what a dedup left of them).
    Many(Box<Deltas<K>>),
}

impl<K> Pending<K> {
    pub(super) fn new(delta: Delta<K>) -> Self {
        match delta.object {
            DeltaObject::Object(obj) => Pending::Object(delta.type_, obj),
            object => Pending::Other(Box::new(Delta {
                type_: delta.type_,
                object,
            })),
        }
    }

    /// The deltas as they are (a requeued batch, already deduplicated); `None` if empty.
    pub(super) fn from_deltas(deltas: Deltas<K>) -> Option<Self> {
        match deltas.len() {
            0 => None,
            1 => deltas.into_vec().pop().map(Pending::new),
            _ => Some(Pending::Many(Box::new(deltas))),
        }
    }

    /// Appends `delta`, collapsing two deletions as client-go's `dedupDeltas`.
    pub(super) fn push(&mut self, delta: Delta<K>) {
        if let Pending::Many(deltas) = self {
            deltas.push_deduped(delta);
            return;
        }
        // The single delta is copied out (its object is shared, not cloned).
        let mut deltas = self.to_deltas();
        deltas.push_deduped(delta);
        *self = Pending::Many(Box::new(deltas));
    }

    pub(super) fn into_deltas(self) -> Deltas<K> {
        match self {
            Pending::Object(type_, obj) => Deltas::new(vec![Delta::new(type_, obj)]),
            Pending::Other(delta) => Deltas::new(vec![*delta]),
            Pending::Many(deltas) => *deltas,
        }
    }

    pub(super) fn to_deltas(&self) -> Deltas<K> {
        match self {
            Pending::Object(type_, obj) => Deltas::new(vec![Delta::new(*type_, obj.clone())]),
            Pending::Other(delta) => Deltas::new(vec![(**delta).clone()]),
            Pending::Many(deltas) => (**deltas).clone(),
        }
    }

    /// The newest delta's object, or the object its tombstone carries.
    pub(super) fn newest_object(&self) -> Option<&Arc<K>> {
        match self {
            Pending::Object(_, obj) => Some(obj),
            Pending::Other(delta) => delta.object.object(),
            Pending::Many(deltas) => deltas.newest().and_then(|d| d.object.object()),
        }
    }

    /// Heap bytes held beside the entry (none for one delta of an object), without the objects.
    #[cfg(test)]
    pub(super) fn heap_bytes(&self) -> usize {
        match self {
            Pending::Object(..) => 0,
            Pending::Other(_) => size_of::<Delta<K>>(),
            Pending::Many(deltas) => size_of::<Deltas<K>>() + deltas.len() * size_of::<Delta<K>>(),
        }
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        match self {
            Pending::Many(deltas) => deltas.len(),
            _ => 1,
        }
    }
}

impl<K: CacheObject> Pending<K> {
    /// The key the deltas are queued under: the newest delta's.
    pub(super) fn write_key(&self, buf: &mut String) {
        match self {
            Pending::Object(_, obj) => write_object_key(obj.as_ref(), buf),
            Pending::Other(delta) => delta.object.write_key(buf),
            Pending::Many(deltas) => match deltas.newest() {
                Some(newest) => newest.object.write_key(buf),
                None => buf.clear(),
            },
        }
    }

    /// Whether [`write_key`](Self::write_key) would write `key`, without writing it.
    pub(super) fn has_key(&self, key: &str) -> bool {
        match self {
            Pending::Object(_, obj) => object_has_key(obj.as_ref(), key),
            Pending::Other(delta) => payload_has_key(&delta.object, key),
            Pending::Many(deltas) => deltas
                .newest()
                .is_some_and(|newest| payload_has_key(&newest.object, key)),
        }
    }
}

/// Whether `obj`'s store key ([`write_object_key`]) is `key`, compared in place.
fn object_has_key<K: CacheObject>(obj: &K, key: &str) -> bool {
    let name = obj.key_name().unwrap_or_default();
    match obj.key_namespace().filter(|ns| !ns.is_empty()) {
        Some(ns) => {
            key.len() == ns.len() + 1 + name.len()
                && key.starts_with(ns)
                && key.as_bytes()[ns.len()] == b'/'
                && key.ends_with(name)
        }
        None => key == name,
    }
}

/// Whether `payload`'s key ([`DeltaObject::key`]) is `key`.
fn payload_has_key<K: CacheObject>(payload: &DeltaObject<K>, key: &str) -> bool {
    match payload {
        DeltaObject::Object(obj) => object_has_key(obj.as_ref(), key),
        DeltaObject::Tombstone(t) => t.key == key,
        DeltaObject::List(_) => key.is_empty(),
    }
}
