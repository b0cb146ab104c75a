//! The unit of change a [`DeltaFifo`](super::DeltaFifo) queues: `Delta`, `Deltas` and the
//! `DeletedFinalStateUnknown` tombstone, as in client-go's `tools/cache/delta_fifo.go`.

use std::fmt;
use std::sync::Arc;

use kube::Resource;

use super::store::object_key;

/// What happened to an object. The object carried by the [`Delta`] is its state *after* the
/// change, except for [`DeltaType::Deleted`], which carries the last state known before deletion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DeltaType {
    /// A watch `ADDED` event.
    Added,
    /// A watch `MODIFIED` event.
    Updated,
    /// A watch `DELETED` event, or a deletion detected by `replace` (then the object is a tombstone).
    Deleted,
    /// An object listed by a relist (`replace`), when the FIFO emits `Replaced` (the informer default
    /// since client-go 1.19).
    Replaced,
    /// A periodic resync, or a listed object in the legacy mode where `replace` emits `Sync`.
    Sync,
}

impl DeltaType {
    /// Every delta type, in declaration order (handy for per-type counters).
    pub const ALL: [DeltaType; 5] = [
        DeltaType::Added,
        DeltaType::Updated,
        DeltaType::Deleted,
        DeltaType::Replaced,
        DeltaType::Sync,
    ];

    /// The name client-go uses for this type (`"Added"`, `"Updated"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            DeltaType::Added => "Added",
            DeltaType::Updated => "Updated",
            DeltaType::Deleted => "Deleted",
            DeltaType::Replaced => "Replaced",
            DeltaType::Sync => "Sync",
        }
    }

    /// Position in [`DeltaType::ALL`], for array-indexed counters.
    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for DeltaType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Placed in the FIFO when an object was deleted but the watch deletion event was missed (found
/// missing by a relist). The final state of the object is unknown, so `obj` may be stale, or absent.
#[derive(Debug)]
pub struct DeletedFinalStateUnknown<K> {
    /// The store key of the deleted object; the key of the tombstone itself.
    pub key: String,
    /// The newest state the cache had of the object, if it had one.
    pub obj: Option<Arc<K>>,
}

/// The payload of a [`Delta`]: an object, or a tombstone for a deletion detected by a relist.
#[derive(Debug)]
pub enum DeltaObject<K> {
    /// An object as the server sent it (shared, never deep-cloned).
    Object(Arc<K>),
    /// A deletion whose final state is unknown.
    Tombstone(DeletedFinalStateUnknown<K>),
}

impl<K> DeltaObject<K> {
    /// The object, or the tombstone's last known object.
    pub fn object(&self) -> Option<&Arc<K>> {
        match self {
            DeltaObject::Object(obj) => Some(obj),
            DeltaObject::Tombstone(t) => t.obj.as_ref(),
        }
    }

    /// Whether this is a [`DeletedFinalStateUnknown`].
    pub fn is_tombstone(&self) -> bool {
        matches!(self, DeltaObject::Tombstone(_))
    }
}

impl<K: Resource> DeltaObject<K> {
    /// The store key: `namespace/name` (or `name`) of the object, or the tombstone's stored key,
    /// as client-go's `DeletionHandlingMetaNamespaceKeyFunc`.
    pub fn key(&self) -> String {
        match self {
            DeltaObject::Object(obj) => object_key(obj.as_ref()),
            DeltaObject::Tombstone(t) => t.key.clone(),
        }
    }
}

impl<K> From<Arc<K>> for DeltaObject<K> {
    fn from(obj: Arc<K>) -> Self {
        DeltaObject::Object(obj)
    }
}

impl<K> From<DeletedFinalStateUnknown<K>> for DeltaObject<K> {
    fn from(t: DeletedFinalStateUnknown<K>) -> Self {
        DeltaObject::Tombstone(t)
    }
}

/// One change to one object.
#[derive(Debug)]
pub struct Delta<K> {
    /// What happened.
    pub type_: DeltaType,
    /// The object after the change (before it, for deletions), or a tombstone.
    pub object: DeltaObject<K>,
}

impl<K> Delta<K> {
    /// A delta carrying `object`.
    pub fn new(type_: DeltaType, object: impl Into<DeltaObject<K>>) -> Self {
        Delta {
            type_,
            object: object.into(),
        }
    }
}

/// The changes queued for one key, oldest first. A `Deltas` handed out by the FIFO is never empty.
#[derive(Debug)]
pub struct Deltas<K>(Vec<Delta<K>>);

impl<K> Deltas<K> {
    /// Wraps a list of deltas, oldest first.
    pub fn new(deltas: Vec<Delta<K>>) -> Self {
        Deltas(deltas)
    }

    /// The oldest delta.
    pub fn oldest(&self) -> Option<&Delta<K>> {
        self.0.first()
    }

    /// The newest delta.
    pub fn newest(&self) -> Option<&Delta<K>> {
        self.0.last()
    }

    /// Number of deltas.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there is no delta (never true for a batch popped from a FIFO).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The deltas, oldest first.
    pub fn iter(&self) -> std::slice::Iter<'_, Delta<K>> {
        self.0.iter()
    }

    /// The deltas as a slice, oldest first.
    pub fn as_slice(&self) -> &[Delta<K>] {
        &self.0
    }

    /// Takes the deltas out.
    pub fn into_vec(self) -> Vec<Delta<K>> {
        self.0
    }

    pub(crate) fn push_deduped(&mut self, delta: Delta<K>) {
        self.0.push(delta);
        dedup_newest(&mut self.0);
    }
}

impl<K: Resource> Deltas<K> {
    /// The key of the newest object, which is the key this batch is queued under.
    pub fn key(&self) -> Option<String> {
        self.newest().map(|d| d.object.key())
    }
}

impl<'a, K> IntoIterator for &'a Deltas<K> {
    type Item = &'a Delta<K>;
    type IntoIter = std::slice::Iter<'a, Delta<K>>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

// Objects are shared through `Arc`, so cloning never requires `K: Clone` (derive would ask for it).
impl<K> Clone for DeletedFinalStateUnknown<K> {
    fn clone(&self) -> Self {
        DeletedFinalStateUnknown {
            key: self.key.clone(),
            obj: self.obj.clone(),
        }
    }
}

impl<K> Clone for DeltaObject<K> {
    fn clone(&self) -> Self {
        match self {
            DeltaObject::Object(obj) => DeltaObject::Object(obj.clone()),
            DeltaObject::Tombstone(t) => DeltaObject::Tombstone(t.clone()),
        }
    }
}

impl<K> Clone for Delta<K> {
    fn clone(&self) -> Self {
        Delta {
            type_: self.type_,
            object: self.object.clone(),
        }
    }
}

impl<K> Clone for Deltas<K> {
    fn clone(&self) -> Self {
        Deltas(self.0.clone())
    }
}

/// Collapses the two newest deltas when both are deletions, as client-go's `dedupDeltas`:
/// a deletion reported twice (by the watch and by a relist) is one deletion. Only the two newest are
/// compared because every append goes through here, so older pairs were already collapsed.
fn dedup_newest<K>(deltas: &mut Vec<Delta<K>>) {
    let n = deltas.len();
    if n < 2 {
        return;
    }
    let (older, newer) = (&deltas[n - 2], &deltas[n - 1]);
    if older.type_ != DeltaType::Deleted || newer.type_ != DeltaType::Deleted {
        return;
    }
    // Keep the one with the most information: the older one, unless it is only a tombstone.
    if older.object.is_tombstone() {
        deltas.swap_remove(n - 2);
    } else {
        deltas.pop();
    }
}
