//! kube-runtime's reflector store (`src/reflector/store.rs`, 5.0.0: `Writer::apply_watcher_event`).
//!
//! `Apply` upserts and `Delete` removes at once; `Init` starts an empty buffer, `InitApply` fills
//! only the buffer, and `InitDone` swaps the buffer in: objects missing from the relist leave
//! without any event. The store is ready at the first `InitDone` and never unready again
//! (`ready_tx` is taken once). Keys are the object's namespace and name (its `ObjectRef` within
//! one kind): neither uid nor resourceVersion is part of them.

use std::collections::HashMap;
use std::sync::Arc;

use super::watcher::WatcherEvent;
use crate::cache::key::object_key;
use crate::object::Object;

/// The store a kube-runtime Controller reads at dispatch.
#[derive(Debug, Clone, Default)]
pub struct Store {
    objects: HashMap<String, Arc<Object>>,
    buffer: HashMap<String, Arc<Object>>,
    ready: bool,
}

impl Store {
    /// An empty store, not ready.
    pub fn new() -> Self {
        Store::default()
    }

    /// `Writer::apply_watcher_event`.
    pub fn apply_watcher_event(&mut self, event: &WatcherEvent) {
        match event {
            WatcherEvent::Apply(obj) => {
                self.objects.insert(object_key(&**obj), obj.clone());
            }
            WatcherEvent::Delete(obj) => {
                self.objects.remove(&object_key(&**obj));
            }
            WatcherEvent::Init => self.buffer = HashMap::new(),
            WatcherEvent::InitApply(obj) => {
                self.buffer.insert(object_key(&**obj), obj.clone());
            }
            WatcherEvent::InitDone => {
                self.objects = std::mem::take(&mut self.buffer);
                self.ready = true;
            }
            WatcherEvent::Error(_) => {}
        }
    }

    /// `Store::get`: the object under `key` now.
    pub fn get(&self, key: &str) -> Option<&Arc<Object>> {
        self.objects.get(key)
    }

    /// Whether the first `InitDone` has been applied (`Store::wait_until_ready` resolved).
    pub fn is_ready(&self) -> bool {
        self.ready
    }

    /// Objects in the store.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// Whether the store holds no object.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
