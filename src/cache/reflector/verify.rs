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

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::object::Object;

use super::event::{DriftReport, ReflectorEventKind};
use super::machine::Shared;
use crate::cache::clock::Clock;
use crate::cache::key::object_key;
use crate::cache::listwatch::{ListRequest, ListerWatcher, ResourceVersionMatch, SourceError};
use crate::cache::store::KnownObjects;
use crate::cache::store::ReflectorStore;

/// How often, and how many times, a check waits for the consumer to drain the FIFO.
const DRAIN_POLL: Duration = Duration::from_millis(50);
const DRAIN_ATTEMPTS: u32 = 40;

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
            return skipped("the cache did not settle (the FIFO stayed non-empty)");
        };
        if rv.is_empty() || !self.store.has_synced() {
            return skipped("the initial list has not been delivered yet");
        }
        let listed = match self.list_exact(&rv).await {
            Ok(listed) => listed,
            Err(e) if e.is_expired() => {
                return skipped(&format!(
                    "resourceVersion {rv} can no longer be listed exactly: {e}"
                ));
            }
            Err(e) => return skipped(&format!("the list failed: {e}")),
        };
        ReflectorEventKind::Drift(compare(rv, &listed, &cached))
    }

    /// The last synced resourceVersion and the cache's key → resourceVersion, taken when the FIFO
    /// is empty, while the Reflector cannot queue.
    async fn snapshot(&self) -> Option<(String, BTreeMap<String, String>)> {
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
                    return Some((last.clone(), cached));
                }
            }
            self.clock.sleep(DRAIN_POLL).await;
        }
        None
    }

    async fn list_exact(&self, rv: &str) -> Result<BTreeMap<String, String>, SourceError> {
        let mut listed = BTreeMap::new();
        let mut continue_token = None;
        loop {
            let req = ListRequest {
                resource_version: rv.to_owned(),
                resource_version_match: continue_token
                    .is_none()
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
                None => return Ok(listed),
            }
        }
    }
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
