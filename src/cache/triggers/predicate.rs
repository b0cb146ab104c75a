//! Predicates, as each runtime applies them.
//!
//! controller-runtime (`pkg/predicate/predicate.go`, v0.22.5 and v0.23.3): the four
//! `…ChangedPredicate`s embed `Funcs`, whose `Create`, `Delete` and `Generic` return true; each
//! overrides `Update` only, comparing the old and the new object (`GetGeneration`,
//! `GetResourceVersion`, `maps.Equal` of the labels or annotations, so an absent map equals an
//! empty one). Several predicates here are `predicate.Or`: an update passes when any of them
//! says it changed.
//!
//! kube-runtime (`src/utils/predicate.rs`, 5.0.0): `predicate_filter` sees objects, not events.
//! It keeps, per (name, namespace, uid), the last hash of the predicate's value and when it was
//! seen; an object passes when its key is new, its hash changed, or its entry is at least the
//! TTL old (1 h by default), and every object refreshes its entry, passed or not. An object
//! whose value is `None` passes and leaves the cache alone: only `generation` can be `None`
//! (`labels` and `annotations` hash the map, empty when absent). Several predicates are
//! `Predicate::combine`: `None` when every one is `None`, else the hash of all the values, so an
//! object passes when any of them changed. kube-runtime evicts entries older than the TTL once
//! per TTL; an evicted entry and a stale one both make the object pass, so only the stale check
//! is kept here.

use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;
use std::time::{Duration, Instant};

use crate::object::Object;

/// kube-runtime's default `predicate::Config::ttl`.
pub const PREDICATE_TTL: Duration = Duration::from_secs(3600);

/// One field a predicate watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PredicateKind {
    /// `metadata.generation`: `GenerationChangedPredicate`, `predicates::generation`.
    Generation,
    /// `metadata.resourceVersion`: `ResourceVersionChangedPredicate`, `predicates::resource_version`.
    ResourceVersion,
    /// `metadata.labels`: `LabelChangedPredicate`, `predicates::labels`.
    Labels,
    /// `metadata.annotations`: `AnnotationChangedPredicate`, `predicates::annotations`.
    Annotations,
}

impl PredicateKind {
    /// Every kind, in the order their names are listed.
    pub const ALL: [PredicateKind; 4] = [
        PredicateKind::Generation,
        PredicateKind::ResourceVersion,
        PredicateKind::Labels,
        PredicateKind::Annotations,
    ];

    /// The name a controller spec uses.
    pub fn name(self) -> &'static str {
        match self {
            PredicateKind::Generation => "generation",
            PredicateKind::ResourceVersion => "resource-version",
            PredicateKind::Labels => "labels",
            PredicateKind::Annotations => "annotations",
        }
    }

    /// kube-runtime's `hash_property`: `None` only for an object without a generation.
    fn hash_property(self, obj: &Object) -> Option<u64> {
        match self {
            PredicateKind::Generation => obj.meta().generation.map(|g| hash(&g)),
            PredicateKind::ResourceVersion => obj.resource_version().map(hash),
            PredicateKind::Labels => Some(hash(&sorted(obj.labels()))),
            PredicateKind::Annotations => Some(hash(&sorted(obj.annotations()))),
        }
    }

    /// controller-runtime's `Update` of this kind's predicate: whether the field changed.
    fn changed(self, old: &Object, new: &Object) -> bool {
        match self {
            PredicateKind::Generation => {
                new.meta().generation.unwrap_or(0) != old.meta().generation.unwrap_or(0)
            }
            PredicateKind::ResourceVersion => {
                new.resource_version().unwrap_or("") != old.resource_version().unwrap_or("")
            }
            PredicateKind::Labels => sorted(new.labels()) != sorted(old.labels()),
            PredicateKind::Annotations => sorted(new.annotations()) != sorted(old.annotations()),
        }
    }
}

impl fmt::Display for PredicateKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A predicate name that is not one of [`PredicateKind::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown predicate {0:?}: use generation, resource-version, labels or annotations, several joined by +"
)]
pub struct PredicateError(pub String);

impl FromStr for PredicateKind {
    type Err = PredicateError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PredicateKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| PredicateError(s.to_owned()))
    }
}

/// The predicates of one controller (none: everything passes), in the order first named.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Predicates(Vec<PredicateKind>);

impl Predicates {
    /// These kinds, each once.
    pub fn new(kinds: impl IntoIterator<Item = PredicateKind>) -> Self {
        let mut out = Vec::new();
        for k in kinds {
            if !out.contains(&k) {
                out.push(k);
            }
        }
        Predicates(out)
    }

    /// Reads `generation+labels`.
    pub fn parse(s: &str) -> Result<Self, PredicateError> {
        s.split('+')
            .map(|p| p.trim().parse())
            .collect::<Result<Vec<_>, _>>()
            .map(Predicates::new)
    }

    /// No predicate: every event passes.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The kinds.
    pub fn kinds(&self) -> &[PredicateKind] {
        &self.0
    }

    /// controller-runtime's `predicate.Or(…).Update(old, new)`; no predicate passes everything.
    /// Creates, deletes and generic events always pass these predicates, so only updates are
    /// asked.
    pub fn update_passes(&self, old: &Object, new: &Object) -> bool {
        self.is_empty() || self.0.iter().any(|k| k.changed(old, new))
    }

    /// kube-runtime's `hash_property` of the combined predicate (`Predicate::combine`, folded
    /// left): `None` when every value is `None`.
    pub fn hash_property(&self, obj: &Object) -> Option<u64> {
        let mut kinds = self.0.iter();
        let first = kinds.next()?.hash_property(obj);
        kinds.fold(first, |acc, k| match (acc, k.hash_property(obj)) {
            (None, None) => None,
            (a, b) => Some(hash(&(a, b))),
        })
    }
}

impl fmt::Display for Predicates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, k) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("+")?;
            }
            f.write_str(k.name())?;
        }
        Ok(())
    }
}

/// kube-runtime's `PredicateCacheKey`: a recreated object (new uid) is a new key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct CacheKey {
    name: String,
    namespace: Option<String>,
    uid: Option<String>,
}

/// kube-runtime's `PredicateFilter` state: one per filtered stream.
#[derive(Debug, Clone)]
pub struct PredicateCache {
    predicates: Predicates,
    ttl: Duration,
    entries: HashMap<CacheKey, (u64, Instant)>,
}

impl PredicateCache {
    /// A filter with the default TTL.
    pub fn new(predicates: Predicates) -> Self {
        PredicateCache::with_ttl(predicates, PREDICATE_TTL)
    }

    /// A filter whose entries go stale after `ttl` (`predicate::Config::ttl`).
    pub fn with_ttl(predicates: Predicates, ttl: Duration) -> Self {
        PredicateCache {
            predicates,
            ttl,
            entries: HashMap::new(),
        }
    }

    /// The predicates.
    pub fn predicates(&self) -> &Predicates {
        &self.predicates
    }

    /// `PredicateFilter::poll_next` for one object at `now`: whether it passes.
    pub fn admit(&mut self, obj: &Object, now: Instant) -> bool {
        if self.predicates.is_empty() {
            return true;
        }
        let Some(val) = self.predicates.hash_property(obj) else {
            return true;
        };
        let meta = obj.meta();
        let key = CacheKey {
            name: meta.name.clone().unwrap_or_default(),
            namespace: meta.namespace.clone(),
            uid: meta.uid.clone(),
        };
        let ttl = self.ttl;
        match self.entries.insert(key, (val, now)) {
            None => true,
            Some((old, seen)) => now.saturating_duration_since(seen) >= ttl || old != val,
        }
    }
}

fn hash<T: Hash + ?Sized>(t: &T) -> u64 {
    let mut hasher = DefaultHasher::new();
    t.hash(&mut hasher);
    hasher.finish()
}

/// A map's entries in key order, as a `BTreeMap` (kube-runtime hashes one) or `maps.Equal` sees
/// them.
fn sorted<A: Ord, B: Ord>(mut entries: Vec<(A, B)>) -> Vec<(A, B)> {
    entries.sort();
    entries
}

#[cfg(test)]
#[path = "predicate_tests.rs"]
mod tests;
