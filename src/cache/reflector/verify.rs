//! The periodic drift check (`--verify-every`): list the resource at exactly the resourceVersion
//! the cache has reached and compare key → resourceVersion. It does what client-go's data
//! consistency detector does (`util/consistencydetector`), but that detector runs once, after a
//! streaming list, and only when the `KUBE_WATCHLIST_INCONSISTENCY_DETECTOR` environment variable
//! is set; no client-go informer repeats it.
//!
//! The snapshot of the cache is taken while the Reflector cannot queue anything (it holds the
//! shared lock to queue) and only when the FIFO is empty, so the cache then reflects exactly the
//! last synced resourceVersion. The list asks for that resourceVersion with
//! `resourceVersionMatch=Exact`, as client-go's detector does, so a busy cluster does not produce
//! false reports.
//!
//! Once etcd has compacted that resourceVersion (kube-apiserver compacts every 5 minutes), the
//! exact list answers 410, and on a resource where nothing changes the cache's resourceVersion
//! stays there until a bookmark moves it. The check then compares with a fresh list instead:
//!
//! 1. It starts recording the keys the Reflector queues, and lists at `""` (a consistent read
//!    from etcd) at some resourceVersion R, newer than the cache.
//! 2. If the list equals the snapshot already taken, cache and server agree: consistent.
//! 3. Otherwise the cache may only lag behind R. The check waits until the watch has delivered
//!    up to R (an event or a bookmark at or past R: the watch requests bookmarks, and
//!    kube-apiserver sends them about once a minute), and takes a new snapshot once the FIFO is
//!    empty, with the keys recorded up to that moment. A key the Reflector did not queue since
//!    the list started has the same state in the cache as at R; the keys it did queue may have
//!    changed after R, so they are left out of the comparison. A relist meanwhile (a replace of
//!    the whole cache) skips the check.
//!
//! Waiting "up to R" orders resourceVersions, which clients are told to treat as opaque: this
//! relies on kube-apiserver's being etcd revisions (integers that grow), as the watch cache's
//! own `resourceVersionMatch=NotOlderThan` does. A server whose resourceVersions are not
//! integers has such checks skipped, with that reason.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::object::Object;

use super::event::{DriftReport, ReflectorEventKind};
use super::machine::{Changes, Shared};
use crate::cache::clock::Clock;
use crate::cache::key::object_key;
use crate::cache::listwatch::{ListRequest, ListerWatcher, ResourceVersionMatch, SourceError};
use crate::cache::store::KnownObjects;
use crate::cache::store::ReflectorStore;

/// How often, and how many times, a check waits for the consumer to drain the FIFO.
const DRAIN_POLL: Duration = Duration::from_millis(50);
const DRAIN_ATTEMPTS: u32 = 40;

/// How long a check after compaction waits for the watch to deliver up to its list's
/// resourceVersion: longer than kube-apiserver's interval between bookmarks (the cacher sends
/// one to each watcher about every minute), which is what moves a quiet resource on.
const PROGRESS_PATIENCE: Duration = Duration::from_secs(90);

/// What one check produced.
pub(super) type CheckOutcome = ReflectorEventKind;

pub(super) struct Verifier<L> {
    pub(super) lw: Arc<L>,
    pub(super) store: Arc<dyn ReflectorStore<Object>>,
    pub(super) known: Arc<dyn KnownObjects<Object>>,
    pub(super) shared: Arc<Shared>,
    pub(super) clock: Arc<dyn Clock>,
    pub(super) page_size: u32,
}

impl<L: ListerWatcher> Verifier<L> {
    /// Runs one check: a [`ReflectorEventKind::Drift`] or a
    /// [`ReflectorEventKind::DriftCheckSkipped`].
    pub(super) async fn check(&self) -> CheckOutcome {
        let Some((rv, cached)) = self.snapshot().await else {
            return not_settled();
        };
        if rv.is_empty() || !self.store.has_synced() {
            return skipped("the initial list has not been delivered yet");
        }
        match self.list(&rv).await {
            Ok((_, listed)) => ReflectorEventKind::Drift(compare(rv, &listed, &cached)),
            Err(e) if e.is_expired() => {
                self.shared.track_changes();
                let outcome = self.check_fresh(cached).await;
                // Whatever ended the check, the machine stops recording.
                self.shared.take_changes();
                outcome
            }
            Err(e) => skipped(&format!("the list failed: {e}")),
        }
    }

    /// The check once the cache's resourceVersion is compacted: against a list at `""`, with
    /// [`Shared`] recording the keys queued since just before it (see the module's doc).
    async fn check_fresh(&self, cached: BTreeMap<String, String>) -> CheckOutcome {
        let (list_rv, listed) = match self.list("").await {
            Ok(listed) => listed,
            Err(e) => return skipped(&format!("the list failed: {e}")),
        };
        let report = compare(list_rv.clone(), &listed, &cached);
        if report.is_consistent() {
            return ReflectorEventKind::Drift(report);
        }
        let Ok(target) = list_rv.parse::<u64>() else {
            return skipped(&format!(
                "the server's resourceVersion {list_rv:?} is not a number: a list newer than the \
                 cache cannot be compared with it"
            ));
        };
        if !self.wait_for_progress(target).await {
            return skipped(&format!(
                "the watch did not deliver up to resourceVersion {list_rv} (the list's) within \
                 {}s: no event or bookmark reached it",
                PROGRESS_PATIENCE.as_secs()
            ));
        }
        let Some((_, mut cached, Some(changes))) = self.snapshot_with_changes().await else {
            return not_settled();
        };
        let Changes { keys, replaced } = changes;
        if replaced {
            return skipped("the Reflector relisted during the check");
        }
        // Changed since the list began: the cache may hold a state newer than the list's.
        let mut listed = listed;
        let count = listed.len();
        for key in &keys {
            listed.remove(key);
            cached.remove(key);
        }
        let mut report = compare(list_rv, &listed, &cached);
        report.listed = count;
        ReflectorEventKind::Drift(report)
    }

    /// Waits until the last synced resourceVersion is `target` or later; false if it does not
    /// get there within [`PROGRESS_PATIENCE`].
    async fn wait_for_progress(&self, target: u64) -> bool {
        let deadline = self.clock.now() + PROGRESS_PATIENCE;
        loop {
            let reached = self
                .shared
                .lock()
                .parse::<u64>()
                .is_ok_and(|rv| rv >= target);
            if reached {
                return true;
            }
            if self.clock.now() >= deadline {
                return false;
            }
            self.clock.sleep(DRAIN_POLL).await;
        }
    }

    /// The last synced resourceVersion and the cache's key → resourceVersion, taken when the FIFO
    /// is empty, while the Reflector cannot queue.
    async fn snapshot(&self) -> Option<(String, BTreeMap<String, String>)> {
        self.take_snapshot(false)
            .await
            .map(|(rv, cached, _)| (rv, cached))
    }

    /// [`snapshot`](Self::snapshot), with the changes recorded up to that same moment.
    async fn snapshot_with_changes(&self) -> Option<Snapshot> {
        self.take_snapshot(true).await
    }

    async fn take_snapshot(&self, take_changes: bool) -> Option<Snapshot> {
        for _ in 0..DRAIN_ATTEMPTS {
            {
                let last = self.shared.lock();
                // `is_drained` waits for a `pop` in progress, whose processing runs under the FIFO
                // lock: once it says drained, every queued batch has reached the cache.
                if self.store.is_drained() {
                    let cached = self
                        .known
                        .list_keys()
                        .into_iter()
                        .filter_map(|key| {
                            let obj = self.known.get_by_key(&key)?;
                            let rv = obj.resource_version().unwrap_or_default().to_owned();
                            Some((key.to_string(), rv))
                        })
                        .collect();
                    let changes = take_changes.then(|| self.shared.take_changes()).flatten();
                    return Some((last.clone(), cached, changes));
                }
            }
            self.clock.sleep(DRAIN_POLL).await;
        }
        None
    }

    /// The resourceVersion and key → resourceVersion of a list: exactly at `rv`
    /// (`resourceVersionMatch=Exact`), or with `""` a consistent read of the current state.
    async fn list(&self, rv: &str) -> Result<(String, BTreeMap<String, String>), SourceError> {
        let mut listed = BTreeMap::new();
        let mut continue_token = None;
        loop {
            // The next pages carry only the continue token (client-go's `tools/pager`,
            // `ListWithAlloc`, v0.32.0): the apiserver refuses a resourceVersion beside one.
            let req = ListRequest {
                resource_version: if continue_token.is_none() {
                    rv.to_owned()
                } else {
                    String::new()
                },
                resource_version_match: (continue_token.is_none() && !rv.is_empty())
                    .then_some(ResourceVersionMatch::Exact),
                limit: Some(self.page_size).filter(|l| *l > 0),
                continue_token: continue_token.take(),
            };
            let page = self.lw.list(&req).await?;
            for obj in &page.items {
                let rv = obj.resource_version().unwrap_or_default().to_owned();
                listed.insert(object_key(obj), rv);
            }
            match page.continue_token {
                Some(token) => continue_token = Some(token),
                None => return Ok((page.resource_version, listed)),
            }
        }
    }
}

/// A snapshot of the cache: the last synced resourceVersion, key → resourceVersion, and the
/// changes recorded up to it when asked for.
type Snapshot = (String, BTreeMap<String, String>, Option<Changes>);

fn not_settled() -> CheckOutcome {
    skipped("the cache did not settle (the FIFO stayed non-empty)")
}

fn skipped(reason: &str) -> CheckOutcome {
    ReflectorEventKind::DriftCheckSkipped {
        reason: reason.to_owned(),
    }
}

/// Compares the server's key → resourceVersion with the cache's.
pub(super) fn compare(
    resource_version: String,
    listed: &BTreeMap<String, String>,
    cached: &BTreeMap<String, String>,
) -> DriftReport {
    let mut report = DriftReport {
        resource_version,
        listed: listed.len(),
        ..DriftReport::default()
    };
    for (key, rv) in listed {
        match cached.get(key) {
            None => report.missing.push(key.clone()),
            Some(cached_rv) if cached_rv != rv => report.stale.push(key.clone()),
            Some(_) => {}
        }
    }
    report.extra = cached
        .keys()
        .filter(|k| !listed.contains_key(*k))
        .cloned()
        .collect();
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::sync::Mutex;

    use crate::cache::clock::TokioClock;
    use crate::cache::delta::DeltaObject;
    use crate::cache::listwatch::{ApiStatus, ListPage, ResourceTarget, WatchRequest, WatchStream};
    use crate::cache::testing::{configmap, configmaps};

    /// A settled cache (synced, its FIFO drained): key → object.
    #[derive(Debug, Default)]
    struct Cache(Mutex<BTreeMap<String, Arc<Object>>>);

    impl Cache {
        fn put(&self, obj: Object) {
            let mut cache = self.0.lock().unwrap();
            cache.insert(object_key(&obj), Arc::new(obj));
        }
    }

    impl ReflectorStore<Object> for Cache {
        fn add(&self, _: Arc<Object>) {}
        fn update(&self, _: Arc<Object>) {}
        fn delete(&self, _: DeltaObject<Object>) -> bool {
            false
        }
        fn replace(&self, _: Vec<Arc<Object>>, _: &str) {}
        fn resync(&self) -> usize {
            0
        }
        fn has_synced(&self) -> bool {
            true
        }
        fn is_drained(&self) -> bool {
            true
        }
    }

    impl KnownObjects<Object> for Cache {
        fn list_keys(&self) -> Vec<Arc<str>> {
            self.0
                .lock()
                .unwrap()
                .keys()
                .map(|k| k.as_str().into())
                .collect()
        }
        fn get_by_key(&self, key: &str) -> Option<Arc<Object>> {
            self.0.lock().unwrap().get(key).cloned()
        }
    }

    /// An API server whose etcd compacted the cache's resourceVersion: an exact list answers
    /// 410, a list at `""` answers `a` at 5 and `c` at 7 (rv 10). Right after that list, the
    /// watch delivers `a` at 11, as the machine would queue it: a state newer than the list's.
    struct Compacted {
        shared: Arc<Shared>,
        cache: Arc<Cache>,
    }

    impl ListerWatcher for Compacted {
        async fn list(&self, req: &ListRequest) -> Result<ListPage, SourceError> {
            if req.resource_version_match == Some(ResourceVersionMatch::Exact) {
                return Err(SourceError::Api(ApiStatus {
                    code: 410,
                    reason: "Expired".into(),
                    message: "too old resource version".into(),
                    causes: Vec::new(),
                }));
            }
            let page = ListPage {
                items: vec![configmap("a", "5"), configmap("c", "7")],
                resource_version: "10".into(),
                continue_token: None,
                remaining_item_count: None,
            };
            let mut last = self.shared.lock();
            self.cache.put(configmap("a", "11"));
            self.shared.note_change(|| "default/a".into());
            *last = "11".into();
            Ok(page)
        }

        async fn watch(&self, _: &WatchRequest) -> Result<WatchStream, SourceError> {
            std::future::pending().await
        }

        fn describe(&self) -> ResourceTarget {
            ResourceTarget::new(configmaps(), None)
        }
    }

    /// After compaction the check compares with a list at `""`, once the watch has passed its
    /// resourceVersion; a key the watch changed after the list (`a`) is left out, so only the
    /// real divergence (`c`, which the cache never got) is reported, not `a` as stale.
    #[tokio::test]
    async fn after_compaction_keys_changed_since_the_fresh_list_are_not_reported() {
        let shared = Arc::new(Shared::default());
        *shared.lock() = "3".into();
        let cache = Arc::new(Cache::default());
        cache.put(configmap("a", "3"));
        let verifier = Verifier {
            lw: Arc::new(Compacted {
                shared: shared.clone(),
                cache: cache.clone(),
            }),
            store: cache.clone(),
            known: cache,
            shared: shared.clone(),
            clock: Arc::new(TokioClock),
            page_size: 500,
        };
        let ReflectorEventKind::Drift(report) = verifier.check().await else {
            panic!("a report expected");
        };
        assert_eq!(report.resource_version, "10");
        assert_eq!(report.listed, 2);
        assert_eq!(report.missing, ["default/c"]);
        assert!(report.stale.is_empty(), "{report:?}");
        assert!(report.extra.is_empty(), "{report:?}");
        assert!(shared.take_changes().is_none(), "the check stops recording");
    }

    fn map(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn compare_finds_missing_extra_and_stale_keys() {
        let listed = map(&[("ns/a", "1"), ("ns/b", "2"), ("ns/c", "3")]);
        let cached = map(&[("ns/a", "1"), ("ns/b", "1"), ("ns/d", "4")]);
        let report = compare("9".into(), &listed, &cached);
        assert_eq!(report.missing, ["ns/c"]);
        assert_eq!(report.extra, ["ns/d"]);
        assert_eq!(report.stale, ["ns/b"]);
        assert!(!report.is_consistent());
        assert!(compare("9".into(), &listed, &listed).is_consistent());
    }
}
