//! The pushes of an UndeltaStore (`--store undelta`): each is the store's whole content after one
//! change, as the kubelet's pod source receives it, with what changed since the previous push
//! ([`PushDiffer`]): the kubelet works that out itself by comparing lists, so the outputs show it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::SystemTime;

use crate::cache::object_key;
use crate::object::Object;

/// The store call that made an UndeltaStore push: client-go pushes after each of its `Add`,
/// `Update`, `Delete` and `Replace`, whatever they changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreCall {
    /// A watch `ADDED` event (`UndeltaStore.Add`).
    Add,
    /// A watch `MODIFIED` event (`UndeltaStore.Update`).
    Update,
    /// A watch `DELETED` event (`UndeltaStore.Delete`).
    Delete,
    /// A list, the first or a relist (`UndeltaStore.Replace`).
    Replace,
}

impl StoreCall {
    /// `add`, `update`, `delete`, `replace`: the word both outputs use.
    pub fn as_str(self) -> &'static str {
        match self {
            StoreCall::Add => "add",
            StoreCall::Update => "update",
            StoreCall::Delete => "delete",
            StoreCall::Replace => "replace",
        }
    }
}

/// One push: the whole list, and how it came about.
#[derive(Debug, Clone)]
pub struct Push {
    /// Push sequence number, from 1, one sequence across every resource of the session.
    pub seq: u64,
    /// Everything the store held after the change, in key order: what the push function got.
    pub objects: Vec<Arc<Object>>,
    /// Keys in this push and not in the previous one, sorted.
    pub added: Vec<String>,
    /// Keys in the previous push and not in this one, sorted.
    pub removed: Vec<String>,
    /// Keys in both whose resourceVersion differs, sorted.
    pub changed: Vec<String>,
    /// The call that pushed.
    pub call: StoreCall,
    /// The key of the object added, updated or deleted; `None` for a `replace`.
    pub key: Option<String>,
    /// The resourceVersion of that object, or of the list for a `replace`.
    pub resource_version: Option<String>,
    /// The push of the first list: before it, the store had never been written (HasSynced).
    pub initial: bool,
}

impl Push {
    /// Whether the push holds exactly what the previous one did (same keys, same
    /// resourceVersions): client-go pushes anyway, on a relist that found nothing new, or a
    /// deletion of a key the store did not have.
    pub fn is_unchanged(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

/// One push, as a renderer is told about it.
#[derive(Debug, Clone, Copy)]
pub struct PushView<'a> {
    /// The resource, as in [`BatchView::resource`](super::BatchView::resource).
    pub resource: &'a str,
    /// When the store pushed, by the informer's clock.
    pub time: SystemTime,
    /// The push.
    pub push: &'a Push,
}

/// What each push changed since the previous one of the same store: the keys and
/// resourceVersions of the last push, compared with the next.
#[derive(Debug, Default)]
pub struct PushDiffer {
    previous: BTreeMap<String, Option<String>>,
}

/// Keys added, removed and changed, each sorted.
pub type Diff = (Vec<String>, Vec<String>, Vec<String>);

impl PushDiffer {
    /// What `objects` (the next push) adds, removes and changes, and remembers them for the next.
    pub fn diff(&mut self, objects: &[Arc<Object>]) -> Diff {
        let current: BTreeMap<String, Option<String>> = objects
            .iter()
            .map(|o| {
                (
                    object_key(o.as_ref()),
                    o.resource_version().map(str::to_owned),
                )
            })
            .collect();
        let (mut added, mut changed) = (Vec::new(), Vec::new());
        for (key, rv) in &current {
            match self.previous.get(key) {
                None => added.push(key.clone()),
                Some(old) if old != rv => changed.push(key.clone()),
                Some(_) => {}
            }
        }
        let removed = self
            .previous
            .keys()
            .filter(|key| !current.contains_key(*key))
            .cloned()
            .collect();
        self.previous = current;
        (added, removed, changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::test_objects::bare_cm as cm;

    #[test]
    fn each_push_is_compared_with_the_previous_one_by_key_and_resource_version() {
        let mut differ = PushDiffer::default();
        let keys = |v: &[&str]| v.iter().map(|k| format!("default/{k}")).collect::<Vec<_>>();
        assert_eq!(
            differ.diff(&[cm("a", "1"), cm("b", "1")]),
            (keys(&["a", "b"]), vec![], vec![])
        );
        assert_eq!(
            differ.diff(&[cm("a", "2"), cm("c", "3")]),
            (keys(&["c"]), keys(&["b"]), keys(&["a"]))
        );
        // The same content again, as a relist that found nothing new pushes it.
        assert_eq!(
            differ.diff(&[cm("a", "2"), cm("c", "3")]),
            (vec![], vec![], vec![])
        );
        assert_eq!(differ.diff(&[]), (vec![], keys(&["a", "c"]), vec![]));
    }
}
