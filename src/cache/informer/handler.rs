//! What a handler of an informer is told, and how a popped batch becomes those calls: client-go's
//! `ResourceEventHandler` (`controller.go`) and `processDeltas`, which applies each delta to the
//! cache and tells the handler what it did. Every consumer applies batches through
//! [`process_deltas`]: the plain [`ProcessLoop`](crate::cache::ProcessLoop), the
//! [`SharedInformer`](crate::cache::SharedInformer)'s `HandleDeltas` and an instant replay's inline pops.

use std::sync::Arc;

use hashbrown::HashSet;

use crate::cache::delta::{
    DeletedFinalStateUnknown, Delta, DeltaObject, DeltaType, Deltas, ListInfo,
};
use crate::cache::key::{CacheObject, object_key};
use crate::cache::store::Indexer;

/// Receives the effect of each delta on the cache (client-go's `ResourceEventHandler`).
pub trait ResourceEventHandler<K> {
    /// An object entered the cache. `is_in_initial_list` is true for objects of the initial list.
    fn on_add(&mut self, obj: &Arc<K>, is_in_initial_list: bool);
    /// An object in the cache was replaced; `old` is what the cache held before.
    fn on_update(&mut self, old: &Arc<K>, new: &Arc<K>);
    /// An object left the cache; a tombstone when the deletion was detected by a relist.
    fn on_delete(&mut self, obj: &DeltaObject<K>);
}

/// A recorded handler call, so that handling can happen after the queue lock is released.
#[derive(Debug)]
pub enum Notification<K> {
    /// See [`ResourceEventHandler::on_add`].
    Add {
        /// The object added.
        obj: Arc<K>,
        /// Whether it came with the initial list.
        is_in_initial_list: bool,
    },
    /// See [`ResourceEventHandler::on_update`].
    Update {
        /// The previous state in the cache.
        old: Arc<K>,
        /// The new state.
        new: Arc<K>,
    },
    /// See [`ResourceEventHandler::on_delete`].
    Delete {
        /// The deleted object, or a tombstone.
        obj: DeltaObject<K>,
    },
}

impl<K> Clone for Notification<K> {
    fn clone(&self) -> Self {
        match self {
            Notification::Add {
                obj,
                is_in_initial_list,
            } => Notification::Add {
                obj: obj.clone(),
                is_in_initial_list: *is_in_initial_list,
            },
            Notification::Update { old, new } => Notification::Update {
                old: old.clone(),
                new: new.clone(),
            },
            Notification::Delete { obj } => Notification::Delete { obj: obj.clone() },
        }
    }
}

impl<K: CacheObject> Notification<K> {
    /// The key of the object it is about (a tombstone's own key for a deletion).
    pub fn key(&self) -> String {
        match self {
            Notification::Add { obj, .. } | Notification::Update { new: obj, .. } => {
                object_key(obj.as_ref())
            }
            Notification::Delete { obj } => obj.key(),
        }
    }
}

impl<K> Notification<K> {
    /// Calls the matching method of `handler`.
    pub fn dispatch(&self, handler: &mut impl ResourceEventHandler<K>) {
        match self {
            Notification::Add {
                obj,
                is_in_initial_list,
            } => handler.on_add(obj, *is_in_initial_list),
            Notification::Update { old, new } => handler.on_update(old, new),
            Notification::Delete { obj } => handler.on_delete(obj),
        }
    }
}

/// Collecting notifications is how a batch's handler calls are deferred.
impl<K> ResourceEventHandler<K> for Vec<Notification<K>> {
    fn on_add(&mut self, obj: &Arc<K>, is_in_initial_list: bool) {
        self.push(Notification::Add {
            obj: obj.clone(),
            is_in_initial_list,
        });
    }

    fn on_update(&mut self, old: &Arc<K>, new: &Arc<K>) {
        self.push(Notification::Update {
            old: old.clone(),
            new: new.clone(),
        });
    }

    fn on_delete(&mut self, obj: &DeltaObject<K>) {
        self.push(Notification::Delete { obj: obj.clone() });
    }
}

/// Applies `deltas` to `store` (the cache's writer), oldest first, and tells `handler`, as
/// client-go's `processDeltas`: `Sync`, `Replaced`, `Added` and `Updated` update the object if its
/// key is in the store (`on_update(old, new)`) and add it otherwise (`on_add`); `Deleted` removes it
/// (`on_delete`, with the tombstone if that is what was queued). The whole-list deltas of an atomic queue:
/// - `ReplacedAll` replaces the whole store with the listed objects, then reports a tombstone
///   deletion for every stored key absent from the list (in key order), then an update or an add
///   for every listed object (in list order), as client-go's `processReplacedAllInfo`: the same
///   handler calls a per-object relist produces, computed from the store instead of by the queue;
/// - `SyncAll` reports `on_update(obj, obj)` for every stored object, in key order;
/// - `Bookmark` changes nothing (this store keeps no resourceVersion).
///
/// The queues only queue tombstones as `Deleted`; should another type carry one (a hand-built batch
/// given to `add_if_not_present`), its last known object is applied, and a tombstone without an
/// object is skipped rather than stored. A delta whose type and payload disagree (a whole-list
/// payload on a per-object type, or the reverse) is skipped.
pub fn process_deltas<K: CacheObject>(
    handler: &mut impl ResourceEventHandler<K>,
    store: &mut Indexer<K>,
    deltas: &Deltas<K>,
    is_in_initial_list: bool,
) {
    for delta in deltas {
        process_delta(handler, store, delta, is_in_initial_list);
    }
}

/// One delta of [`process_deltas`]: for a caller that must know which delta made each call
/// (a shared informer of client-go before v0.24, whose sync rule reads the delta's type).
pub fn process_delta<K: CacheObject>(
    handler: &mut impl ResourceEventHandler<K>,
    store: &mut Indexer<K>,
    delta: &Delta<K>,
    is_in_initial_list: bool,
) {
    match (delta.type_, &delta.object) {
        (DeltaType::ReplacedAll, DeltaObject::List(info)) => {
            replace_all(handler, store, info, is_in_initial_list);
        }
        (DeltaType::SyncAll, DeltaObject::List(_)) => {
            for obj in store.list_by_key() {
                handler.on_update(&obj, &obj);
            }
        }
        // A bookmark has nothing to apply: this store keeps no resourceVersion. The rest are
        // deltas whose type and payload disagree.
        (_, DeltaObject::List(_))
        | (DeltaType::ReplacedAll | DeltaType::SyncAll | DeltaType::Bookmark, _) => {}
        (DeltaType::Sync | DeltaType::Replaced | DeltaType::Added | DeltaType::Updated, _) => {
            let Some(obj) = delta.object.object() else {
                return;
            };
            match store.upsert(obj.clone()) {
                Some(old) => handler.on_update(&old, obj),
                None => handler.on_add(obj, is_in_initial_list),
            }
        }
        (DeltaType::Deleted, _) => {
            store.delete(&delta.object);
            handler.on_delete(&delta.object);
        }
    }
}

/// client-go's `processReplacedAllInfo`: the store is replaced first, so that handlers see a
/// store that already reflects what they are told.
fn replace_all<K: CacheObject>(
    handler: &mut impl ResourceEventHandler<K>,
    store: &mut Indexer<K>,
    info: &ListInfo<K>,
    is_in_initial_list: bool,
) {
    let listed: HashSet<String> = info
        .objects
        .iter()
        .map(|obj| object_key(obj.as_ref()))
        .collect();
    let deletions: Vec<DeltaObject<K>> = store
        .entries()
        .into_iter()
        .filter(|(key, _)| !listed.contains(&**key))
        .map(|(key, obj)| {
            DeltaObject::from(DeletedFinalStateUnknown {
                key: key.to_string(),
                obj: Some(obj),
            })
        })
        .collect();
    let olds: Vec<Option<Arc<K>>> = info.objects.iter().map(|obj| store.get(obj)).collect();
    store.replace(info.objects.iter().cloned());
    for tombstone in &deletions {
        handler.on_delete(tombstone);
    }
    for (new, old) in info.objects.iter().zip(olds) {
        match old {
            Some(old) => handler.on_update(&old, new),
            None => handler.on_add(new, is_in_initial_list),
        }
    }
}
