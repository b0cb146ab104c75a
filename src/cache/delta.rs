//! The unit of change the queues hold: `Delta`, `Deltas`, the `DeletedFinalStateUnknown` tombstone
//! and the whole-list payload of the atomic deltas, as in client-go's `tools/cache/delta_fifo.go`
//! and `the_real_fifo.go`.

use std::fmt;
use std::sync::Arc;

use crate::cache::key::CacheObject;

use super::key::write_object_key;

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
    /// since client-go 1.18, kubernetes#86015's `EmitDeltaTypeReplaced`).
    Replaced,
    /// A periodic resync, or a listed object in the legacy mode where `replace` emits `Sync`.
    Sync,
    /// A whole relist as one delta (client-go's `ReplacedAll`, queued by an atomic
    /// [`RealFifo`](crate::cache::RealFifo)): the payload is a [`DeltaObject::List`] with every listed
    /// object and the list's resourceVersion.
    ReplacedAll,
    /// A periodic resync as one delta (client-go's `SyncAll`, atomic mode): the consumer re-delivers
    /// everything it holds. The payload is an empty [`DeltaObject::List`].
    SyncAll,
    /// A watch bookmark (atomic mode): the payload is a [`DeltaObject::List`] carrying only the
    /// resourceVersion the watch reached.
    Bookmark,
}

impl DeltaType {
    /// Every delta type, in declaration order (handy for per-type counters).
    pub const ALL: [DeltaType; 8] = [
        DeltaType::Added,
        DeltaType::Updated,
        DeltaType::Deleted,
        DeltaType::Replaced,
        DeltaType::Sync,
        DeltaType::ReplacedAll,
        DeltaType::SyncAll,
        DeltaType::Bookmark,
    ];

    /// The name client-go uses for this type (`"Added"`, `"Updated"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            DeltaType::Added => "Added",
            DeltaType::Updated => "Updated",
            DeltaType::Deleted => "Deleted",
            DeltaType::Replaced => "Replaced",
            DeltaType::Sync => "Sync",
            DeltaType::ReplacedAll => "ReplacedAll",
            DeltaType::SyncAll => "SyncAll",
            DeltaType::Bookmark => "Bookmark",
        }
    }

    /// Whether deltas of this type concern the whole list rather than one key (the atomic types).
    /// client-go's `PopBatch` never batches them with other deltas.
    pub fn is_whole_list(self) -> bool {
        matches!(
            self,
            DeltaType::ReplacedAll | DeltaType::SyncAll | DeltaType::Bookmark
        )
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

/// The payload of the whole-list deltas ([`DeltaType::ReplacedAll`], [`DeltaType::SyncAll`],
/// [`DeltaType::Bookmark`]): client-go's `ReplacedAllInfo`, `SyncAllInfo` and bookmark
/// resourceVersion in one shape.
#[derive(Debug)]
pub struct ListInfo<K> {
    /// The list's resourceVersion (`ReplacedAll`), the bookmark's (`Bookmark`), or empty (`SyncAll`).
    pub resource_version: String,
    /// Every listed object, in list order (`ReplacedAll`); empty for the other types.
    pub objects: Vec<Arc<K>>,
}

/// The payload of a [`Delta`]: an object, a tombstone for a deletion detected by a relist, or, for
/// the atomic delta types, a payload about the whole list.
///
/// The rare payloads are boxed so that the common one sets the size: 16 bytes, and a [`Delta`]
/// 24, where a queue or a batch holds one per change (56 with the payloads inline).
#[derive(Debug)]
pub enum DeltaObject<K> {
    /// An object as the server sent it (shared, never deep-cloned).
    Object(Arc<K>),
    /// A deletion whose final state is unknown.
    Tombstone(Box<DeletedFinalStateUnknown<K>>),
    /// The payload of a whole-list delta; it belongs to no key.
    List(Box<ListInfo<K>>),
}

impl<K> DeltaObject<K> {
    /// The object, or the tombstone's last known object; `None` for a whole-list payload.
    pub fn object(&self) -> Option<&Arc<K>> {
        match self {
            DeltaObject::Object(obj) => Some(obj),
            DeltaObject::Tombstone(t) => t.obj.as_ref(),
            DeltaObject::List(_) => None,
        }
    }

    /// Whether this is a [`DeletedFinalStateUnknown`].
    pub fn is_tombstone(&self) -> bool {
        matches!(self, DeltaObject::Tombstone(_))
    }

    /// The whole-list payload, if this is one.
    pub fn list(&self) -> Option<&ListInfo<K>> {
        match self {
            DeltaObject::List(info) => Some(info),
            _ => None,
        }
    }

    /// How many objects this payload carries: 1 for an object or a tombstone, the number of listed
    /// objects for a whole-list payload.
    pub fn object_count(&self) -> usize {
        match self {
            DeltaObject::Object(_) | DeltaObject::Tombstone(_) => 1,
            DeltaObject::List(info) => info.objects.len(),
        }
    }
}

impl<K: CacheObject> DeltaObject<K> {
    /// The store key: `namespace/name` (or `name`) of the object, or the tombstone's stored key,
    /// as client-go's `DeletionHandlingMetaNamespaceKeyFunc`. A whole-list payload belongs to no
    /// key and returns an empty string; [`Delta::key`] says `None` instead.
    pub fn key(&self) -> String {
        let mut key = String::new();
        self.write_key(&mut key);
        key
    }

    /// [`key`](Self::key) written into `buf` (cleared first), so hot paths reuse one buffer.
    pub(crate) fn write_key(&self, buf: &mut String) {
        match self {
            DeltaObject::Object(obj) => write_object_key(obj.as_ref(), buf),
            DeltaObject::Tombstone(t) => {
                buf.clear();
                buf.push_str(&t.key);
            }
            DeltaObject::List(_) => buf.clear(),
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
        DeltaObject::Tombstone(Box::new(t))
    }
}

impl<K> From<ListInfo<K>> for DeltaObject<K> {
    fn from(info: ListInfo<K>) -> Self {
        DeltaObject::List(Box::new(info))
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

impl<K: CacheObject> Delta<K> {
    /// The store key of the object (or tombstone) this delta is about; `None` for a whole-list
    /// delta, which is about no single key.
    pub fn key(&self) -> Option<String> {
        match &self.object {
            DeltaObject::List(_) => None,
            object => Some(object.key()),
        }
    }
}

/// Deltas handed out by one pop, oldest first, never empty: the changes queued for one key (a
/// [`DeltaFifo`](crate::cache::DeltaFifo) batch), or consecutive deltas of a
/// [`RealFifo`](crate::cache::RealFifo), possibly of different keys.
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

impl<K: CacheObject> Deltas<K> {
    /// The key of the newest object, which is the key a DeltaFIFO batch is queued under; `None`
    /// when empty or when the newest delta is a whole-list delta.
    pub fn key(&self) -> Option<String> {
        self.newest().and_then(Delta::key)
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
            DeltaObject::List(info) => DeltaObject::List(info.clone()),
        }
    }
}

impl<K> Clone for ListInfo<K> {
    fn clone(&self) -> Self {
        ListInfo {
            resource_version: self.resource_version.clone(),
            objects: self.objects.clone(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::Object;

    /// Queues and batches hold one `Delta` per change (a RealFIFO's queue, a popped batch, a
    /// DeltaFIFO key with several): the rare payloads are boxed so that it stays three words.
    #[test]
    fn a_delta_is_three_words_its_payload_two() {
        assert_eq!(size_of::<DeltaObject<Object>>(), 16);
        assert_eq!(size_of::<Delta<Object>>(), 24);
    }
}
