//! An object's store key as the two parts it is made of, so that a store can hash, compare and
//! order keys without keeping a key string per object.
//!
//! A key is what [`write_object_key`](crate::cache::write_object_key) renders (client-go's
//! `MetaNamespaceKeyFunc`): `namespace/name`, or `name` without a namespace. Every operation here
//! gives the result it would give on that rendered string, byte for byte, whatever the parts
//! contain: two objects whose parts differ but render the same (a cluster-scoped `a/b` and `b` in
//! namespace `a`) have one key, as in client-go's stores.

use std::cmp::Ordering;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;

use smallvec::SmallVec;

use crate::cache::key::CacheObject;

/// The parts of an object's store key.
#[derive(Debug, Clone, Copy)]
pub(super) struct KeyParts<'a> {
    /// The namespace, if present and not empty (an empty one renders as none).
    namespace: Option<&'a str>,
    /// The name; empty if absent.
    name: &'a str,
}

/// Valid namespaces and names fit (63 + 1 + 63 bytes); longer keys hash through the heap.
type KeyBytes = SmallVec<[u8; 128]>;

impl<'a> KeyParts<'a> {
    /// The parts of `obj`'s key.
    pub(super) fn of<K: CacheObject + ?Sized>(obj: &'a K) -> Self {
        KeyParts {
            namespace: obj.key_namespace().filter(|ns| !ns.is_empty()),
            name: obj.key_name().unwrap_or_default(),
        }
    }

    /// The rendered key's segments, in order.
    fn segments(&self) -> [&'a [u8]; 3] {
        match self.namespace {
            Some(ns) => [ns.as_bytes(), b"/", self.name.as_bytes()],
            None => [self.name.as_bytes(), b"", b""],
        }
    }

    /// Whether the key renders as `key`.
    pub(super) fn is(&self, key: &str) -> bool {
        match self.namespace {
            Some(ns) => {
                key.len() == ns.len() + 1 + self.name.len()
                    && key.starts_with(ns)
                    && key.as_bytes()[ns.len()] == b'/'
                    && key.ends_with(self.name)
            }
            None => key == self.name,
        }
    }

    /// The hash of the rendered key: [`hash_key`] of it.
    pub(super) fn hash(&self, hasher: &impl BuildHasher) -> u64 {
        let mut bytes = KeyBytes::new();
        for segment in self.segments() {
            bytes.extend_from_slice(segment);
        }
        hash_bytes(hasher, &bytes)
    }

    /// The rendered key, as the shared string the stores' APIs hand out.
    pub(super) fn to_key(self) -> Arc<str> {
        match self.namespace {
            Some(ns) => {
                let mut key = String::with_capacity(ns.len() + 1 + self.name.len());
                key.push_str(ns);
                key.push('/');
                key.push_str(self.name);
                Arc::from(key)
            }
            None => Arc::from(self.name),
        }
    }
}

impl Ord for KeyParts<'_> {
    /// The order of the rendered keys' bytes (`str`'s order), without rendering them.
    fn cmp(&self, other: &Self) -> Ordering {
        let mut left = self.segments().into_iter();
        let mut right = other.segments().into_iter();
        let (mut a, mut b): (&[u8], &[u8]) = (&[], &[]);
        loop {
            // Refill each side with its next non-empty segment; a side out of segments has ended.
            while a.is_empty() {
                match left.next() {
                    Some(segment) => a = segment,
                    None => break,
                }
            }
            while b.is_empty() {
                match right.next() {
                    Some(segment) => b = segment,
                    None => break,
                }
            }
            if a.is_empty() || b.is_empty() {
                return (!a.is_empty()).cmp(&!b.is_empty());
            }
            let common = a.len().min(b.len());
            match a[..common].cmp(&b[..common]) {
                Ordering::Equal => {
                    a = &a[common..];
                    b = &b[common..];
                }
                unequal => return unequal,
            }
        }
    }
}

impl PartialOrd for KeyParts<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for KeyParts<'_> {
    /// Equal rendered keys.
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for KeyParts<'_> {}

/// The hash of a store key, as [`KeyParts::hash`] computes it from an object.
pub(super) fn hash_key(hasher: &impl BuildHasher, key: &str) -> u64 {
    hash_bytes(hasher, key.as_bytes())
}

// One `write` of the whole key on both paths: hashers need not give the same result for a key
// written in pieces.
fn hash_bytes(hasher: &impl BuildHasher, bytes: &[u8]) -> u64 {
    let mut state = hasher.build_hasher();
    state.write(bytes);
    state.finish()
}

#[cfg(test)]
#[path = "key_parts_tests.rs"]
mod tests;
