//! A stale discovery cache met during a run: the API server answers 404 for a mapping the cache
//! kept (for up to 6 hours) after its CRD was deleted or stopped serving that version.
//!
//! kubectl's `DeferredDiscoveryRESTMapper` (client-go `restmapper/discovery.go`) discovers again
//! when a cached mapping fails to resolve, not when the server refuses a request made with it,
//! so `kubectl get` keeps failing on such a mapping until the cache expires. Here the first 404
//! of a list made with a cached mapping discovers once more within the run, as a resolution miss
//! already does: if the argument now resolves to another group/version, the informer carries on
//! with it (and says so); if it resolves to nothing, the failure says that the resource is gone;
//! if discovery still lists it where it was, the 404 stands.

use std::sync::{Arc, RwLock};

use kube::core::ApiResource;
use kubectl_deltas::source::discovery::{DiscoveryCache, Need, ResourceInfo};
use kubectl_deltas::source::{
    KubeListerWatcher, ListPage, ListRequest, ListerWatcher, ResourceTarget, SourceError,
    WatchRequest, WatchStream,
};

use super::target::{Outcome, Rediscovered, Target};

/// A resource's ListerWatcher that discovers again once when its cached mapping is answered 404
/// (see the module's doc).
pub struct Rediscovering {
    /// The ListerWatcher of the mapping in use, and that mapping when it replaced the one the
    /// Reflector started with: the Reflector gives list items (which lack `kind` and
    /// `apiVersion` on the wire) those of its first mapping, so they are filled in here first.
    current: RwLock<(Arc<KubeListerWatcher>, Option<ApiResource>)>,
    /// What discovering again needs; taken by the first 404, so a run discovers again at most
    /// once. `None` from the start for a mapping discovered in this run.
    pending: tokio::sync::Mutex<Option<Pending>>,
    outcome: Outcome,
}

struct Pending {
    cache: DiscoveryCache,
    client: kube::Client,
    arg: String,
    need: Need,
    old: ResourceInfo,
    /// The ListerWatcher of a new mapping, with the same namespace, selectors and options.
    build: Box<dyn Fn(&ResourceInfo) -> KubeListerWatcher + Send + Sync>,
}

impl Rediscovering {
    /// Wraps the ListerWatcher `build` makes for `target`'s mapping; `need` is what the command
    /// asks of the resource.
    pub fn new(
        target: &Target,
        need: Need,
        build: impl Fn(&ResourceInfo) -> KubeListerWatcher + Send + Sync + 'static,
    ) -> Self {
        let inner = Arc::new(build(&target.resource));
        let pending = target.from_cache.then(|| Pending {
            cache: target.discovery.clone(),
            client: target.connection.client.clone(),
            arg: target.arg.clone(),
            need,
            old: target.resource.clone(),
            build: Box::new(build),
        });
        Rediscovering {
            current: RwLock::new((inner, None)),
            pending: tokio::sync::Mutex::new(pending),
            outcome: target.rediscovered.clone(),
        }
    }

    fn current(&self) -> (Arc<KubeListerWatcher>, Option<ApiResource>) {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Discovers again, the first time only; true if the mapping changed (then the next request
    /// goes to the new one).
    async fn rediscover(&self) -> bool {
        let Some(pending) = self.pending.lock().await.take() else {
            return false;
        };
        let outcome = match pending.cache.refresh(&pending.client).await {
            Err(error) => Rediscovered::Failed(error.to_string()),
            Ok(catalog) => match catalog.resolve_for(&pending.arg, pending.need) {
                Err(error) => Rediscovered::Gone(error.to_string()),
                Ok(new) if same_mapping(&new, &pending.old) => Rediscovered::Unchanged,
                Ok(new) => Rediscovered::Moved(new),
            },
        };
        let moved = match &outcome {
            Rediscovered::Moved(new) => {
                tracing::warn!(
                    "the API server answered 404 Not Found for {} at {}, where the discovery \
                     cache had it; discovered again, it is served at {}: carrying on with that",
                    pending.old.qualified_name(),
                    pending.old.api_version(),
                    new.api_version()
                );
                *self.current.write().unwrap_or_else(|e| e.into_inner()) =
                    (Arc::new((pending.build)(new)), Some(new.api_resource()));
                true
            }
            _ => false,
        };
        let _ = self.outcome.set(outcome);
        moved
    }
}

/// The same URL and objects: group, version and plural.
fn same_mapping(a: &ResourceInfo, b: &ResourceInfo) -> bool {
    a.group == b.group && a.version == b.version && a.plural == b.plural
}

/// Gives the items of a page listed with a replacing mapping their `kind` and `apiVersion`.
fn typed(page: ListPage, mapping: Option<&ApiResource>) -> ListPage {
    let Some(mapping) = mapping else {
        return page;
    };
    let mut page = page;
    for item in &mut page.items {
        item.fill_types(&mapping.api_version, &mapping.kind);
    }
    page
}

impl ListerWatcher for Rediscovering {
    async fn list(&self, req: &ListRequest) -> Result<ListPage, SourceError> {
        let (lw, mapping) = self.current();
        match lw.list(req).await {
            Err(error) if error.is_not_found() && self.rediscover().await => {
                let (lw, mapping) = self.current();
                lw.list(req).await.map(|page| typed(page, mapping.as_ref()))
            }
            listed => listed.map(|page| typed(page, mapping.as_ref())),
        }
    }

    async fn watch(&self, req: &WatchRequest) -> Result<WatchStream, SourceError> {
        // A watch's 404 makes the Reflector relist, whose 404 discovers again.
        let (lw, _) = self.current();
        lw.watch(req).await
    }

    fn describe(&self) -> ResourceTarget {
        self.current().0.describe()
    }
}
