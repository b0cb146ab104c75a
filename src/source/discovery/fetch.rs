//! Asking the API server: aggregated discovery (`apidiscovery.k8s.io` v2, or v2beta1 as 1.26–1.29
//! serve it) in two requests, `/api` and `/apis`, and the legacy walk (one more request per group
//! version) for whatever a server does not serve aggregated.
//!
//! As client-go's `DiscoveryClient` (`discovery_client.go`, `downloadLegacy` and `downloadAPIs`),
//! `/api` and `/apis` are each asked once, with an Accept header that prefers the aggregated
//! documents and falls back to plain JSON, and the answer says which it is: a server without
//! aggregated discovery costs no extra request, its legacy version or group list starts the walk.
//!
//! Why not kube's own discovery: `Client::list_api_groups_aggregated` sends the same header (kube
//! core's `ACCEPT_AGGREGATED_DISCOVERY_V2`, used here) but reads any answer as an aggregated list,
//! and a legacy answer reads as an empty one, so telling the two apart would cost the legacy
//! requests again; `kube::discovery::Discovery::run_aggregated` keeps neither short names nor
//! singular names nor categories, which resolution needs, and orders groups alphabetically where
//! kubectl keeps the server's priority order. The documents are kube core's `discovery::v2` types.

use http::header::ACCEPT;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    APIGroup, APIGroupList, APIResource, APIResourceList, GroupVersionForDiscovery,
};
use kube::core::discovery::v2::{
    ACCEPT_AGGREGATED_DISCOVERY_V2, APIGroupDiscovery, APIResourceDiscovery,
};
use serde::Deserialize;

use super::{DiscoveryError, ResourceCatalog};

/// How long one group version's resource list may take in the legacy walk. An aggregated API
/// whose backend is down answers 503, which kube's default retry policy retries for minutes;
/// kubectl reports such a group at once and carries on, and so does
/// [`ResourceCatalog::discover`], after this long.
const GROUP_VERSION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Why a group version was left out of the catalog.
#[derive(Debug, thiserror::Error)]
enum GroupVersionFailure {
    #[error(transparent)]
    Kube(kube::Error),
    #[error("no answer within {GROUP_VERSION_TIMEOUT:?}")]
    TimedOut,
}

/// The outcome of one request of the legacy walk.
enum Fetched {
    /// Index in `/api`'s version list, version, result.
    Core(usize, String, Result<APIResourceList, kube::Error>),
    /// `group/version`, result.
    Group(String, Result<APIResourceList, GroupVersionFailure>),
}

/// What `/api` or `/apis` answered, read in one pass whichever form it has: an aggregated
/// `APIGroupDiscoveryList` (`items`), the legacy `APIVersions` (`versions`) or the legacy
/// `APIGroupList` (`groups`).
#[derive(Deserialize)]
struct Root {
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    items: Vec<APIGroupDiscovery>,
    #[serde(default)]
    versions: Vec<String>,
    #[serde(default)]
    groups: Vec<APIGroup>,
}

impl Root {
    fn is_aggregated(&self) -> bool {
        self.kind.as_deref() == Some("APIGroupDiscoveryList")
    }
}

/// `GET path`, preferring aggregated discovery.
async fn root(client: &kube::Client, path: &str) -> Result<Root, kube::Error> {
    let request = http::Request::get(path)
        .header(ACCEPT, ACCEPT_AGGREGATED_DISCOVERY_V2)
        .body(Vec::new())
        .map_err(kube::Error::HttpError)?;
    let text = client.request_text(request).await?;
    serde_json::from_str(&text).map_err(kube::Error::SerdeError)
}

impl ResourceCatalog {
    /// Fetches discovery from the API server and builds the catalog.
    ///
    /// `/api` and `/apis` are asked at once, for aggregated discovery: two requests in all from a
    /// server that serves it (Kubernetes 1.26 and later). What a server answers in the legacy form
    /// is completed by the legacy walk, every group version fetched concurrently, as kubectl
    /// does. Like kubectl, a group version whose resources cannot be had is skipped with a
    /// warning and reported by [`Self::unavailable_group_versions`]: one that aggregated
    /// discovery marks `Stale` (an aggregated API such as `metrics.k8s.io` whose backend is down),
    /// and in the legacy walk one whose request fails or takes longer than 10 s (kube's default
    /// retry policy would retry a 503 for minutes). Failures of `/api`, `/api/<v>` or `/apis` are
    /// errors.
    pub async fn discover(client: &kube::Client) -> Result<Self, DiscoveryError> {
        let (core, groups) = tokio::join!(root(client, "/api"), root(client, "/apis"));
        let core = core.map_err(DiscoveryError::CoreVersions)?;
        let groups = groups.map_err(DiscoveryError::Groups)?;
        tracing::debug!(
            core_aggregated = core.is_aggregated(),
            groups_aggregated = groups.is_aggregated(),
            "discovery"
        );

        let mut unavailable = Vec::new();
        let mut core_lists: Vec<(usize, APIResourceList)> = Vec::new();
        let mut tasks = tokio::task::JoinSet::new();
        if core.is_aggregated() {
            let (_, lists, stale) = split(core.items);
            core_lists.extend(lists.into_iter().enumerate());
            unavailable.extend(stale);
        } else {
            for (index, version) in core.versions.into_iter().enumerate() {
                let client = client.clone();
                tasks.spawn(async move {
                    let result = client.list_core_api_resources(&version).await;
                    Fetched::Core(index, version, result)
                });
            }
        }
        let (group_list, mut group_lists) = if groups.is_aggregated() {
            let (group_list, lists, stale) = split(groups.items);
            unavailable.extend(stale);
            (group_list, lists)
        } else {
            let group_list = APIGroupList {
                groups: groups.groups,
            };
            for group_version in group_list
                .groups
                .iter()
                .flat_map(|g| g.versions.iter().map(|v| v.group_version.clone()))
            {
                let client = client.clone();
                tasks.spawn(async move {
                    let result = tokio::time::timeout(
                        GROUP_VERSION_TIMEOUT,
                        client.list_api_group_resources(&group_version),
                    )
                    .await
                    .map_err(|_| GroupVersionFailure::TimedOut)
                    .and_then(|r| r.map_err(GroupVersionFailure::Kube));
                    Fetched::Group(group_version, result)
                });
            }
            (group_list, Vec::new())
        };

        while let Some(joined) = tasks.join_next().await {
            // The tasks only await kube calls; a panic there is a bug, so let it propagate.
            let fetched = match joined {
                Ok(fetched) => fetched,
                Err(error) => std::panic::resume_unwind(error.into_panic()),
            };
            match fetched {
                Fetched::Core(index, _, Ok(list)) => core_lists.push((index, list)),
                Fetched::Core(_, version, Err(source)) => {
                    return Err(DiscoveryError::CoreResources { version, source });
                }
                Fetched::Group(_, Ok(list)) => group_lists.push(list),
                Fetched::Group(group_version, Err(failure)) => {
                    tracing::warn!(%group_version, %failure, "skipping API group version: its discovery failed");
                    unavailable.push(group_version);
                }
            }
        }
        // Tasks finish in any order; `/api` lists the core versions in priority order.
        core_lists.sort_by_key(|(index, _)| *index);
        let core_lists = core_lists.into_iter().map(|(_, list)| list).collect();
        let mut catalog = Self::from_documents(core_lists, &group_list, group_lists);
        unavailable.sort();
        catalog.unavailable = unavailable;
        Ok(catalog)
    }
}

/// client-go's `SplitGroupsAndResources` (`discovery/aggregated_discovery.go`): aggregated groups
/// as the legacy group list and resource lists, which [`ResourceCatalog::from_documents`] reads,
/// and the group versions marked `Stale`, left out (the preferred version is the first of the
/// others).
pub(super) fn split(
    items: Vec<APIGroupDiscovery>,
) -> (APIGroupList, Vec<APIResourceList>, Vec<String>) {
    let (mut groups, mut lists, mut stale) = (Vec::new(), Vec::new(), Vec::new());
    for item in items {
        let name = item.metadata.and_then(|m| m.name).unwrap_or_default();
        let mut group = APIGroup {
            name: name.clone(),
            ..APIGroup::default()
        };
        for version in item.versions {
            let version_name = version.version.unwrap_or_default();
            let group_version = if name.is_empty() {
                version_name.clone()
            } else {
                format!("{name}/{version_name}")
            };
            if version.freshness.as_deref() == Some("Stale") {
                tracing::warn!(%group_version, "skipping API group version: the server marks its discovery stale");
                stale.push(group_version);
                continue;
            }
            let for_discovery = GroupVersionForDiscovery {
                group_version: group_version.clone(),
                version: version_name,
            };
            group
                .preferred_version
                .get_or_insert_with(|| for_discovery.clone());
            group.versions.push(for_discovery);
            lists.push(APIResourceList {
                group_version,
                resources: version.resources.into_iter().filter_map(resource).collect(),
            });
        }
        groups.push(group);
    }
    (APIGroupList { groups }, lists, stale)
}

/// client-go's `convertAPIResource`: a resource without a kind is left out. Subresources are left
/// out too: they are not resources to kubectl's mapper (see `push_list`).
fn resource(r: APIResourceDiscovery) -> Option<APIResource> {
    let kind = r.response_kind.filter(|k| {
        k.group.as_deref().is_some_and(|g| !g.is_empty())
            || k.version.as_deref().is_some_and(|v| !v.is_empty())
            || k.kind.as_deref().is_some_and(|k| !k.is_empty())
    })?;
    Some(APIResource {
        name: r.resource.unwrap_or_default(),
        singular_name: r.singular_resource.unwrap_or_default(),
        namespaced: r.scope.as_deref() == Some("Namespaced"),
        kind: kind.kind.unwrap_or_default(),
        verbs: r.verbs,
        short_names: Some(r.short_names),
        categories: Some(r.categories),
        ..APIResource::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! fixture {
        ($name:literal) => {
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/apiserver-v1.28.7/",
                $name
            ))
        };
    }

    #[test]
    fn root_documents_are_told_apart_by_kind() {
        let aggregated: Root =
            serde_json::from_str(fixture!("discovery-aggregated-apis.json")).unwrap();
        assert!(aggregated.is_aggregated() && !aggregated.items.is_empty());
        let core: Root = serde_json::from_str(fixture!("discovery-aggregated-api.json")).unwrap();
        assert!(core.is_aggregated() && core.items.len() == 1);
        let versions: Root = serde_json::from_str(fixture!("discovery-api.json")).unwrap();
        assert!(!versions.is_aggregated());
        assert_eq!(versions.versions, ["v1"]);
        let groups: Root = serde_json::from_str(fixture!("discovery-apis.json")).unwrap();
        assert!(!groups.is_aggregated() && !groups.groups.is_empty());
    }

    #[test]
    fn stale_versions_are_left_out_and_the_next_one_is_preferred() {
        let mut list: kube::core::discovery::v2::APIGroupDiscoveryList =
            serde_json::from_str(fixture!("discovery-aggregated-apis.json")).unwrap();
        let autoscaling = list
            .items
            .iter_mut()
            .find(|g| g.metadata.as_ref().and_then(|m| m.name.as_deref()) == Some("autoscaling"))
            .unwrap();
        autoscaling.versions[0].freshness = Some("Stale".into());
        let (groups, lists, stale) = split(list.items);
        assert_eq!(stale, ["autoscaling/v2"]);
        let group = groups
            .groups
            .iter()
            .find(|g| g.name == "autoscaling")
            .unwrap();
        assert_eq!(group.preferred_version.as_ref().unwrap().version, "v1");
        assert!(lists.iter().all(|l| l.group_version != "autoscaling/v2"));
        assert!(lists.iter().any(|l| l.group_version == "autoscaling/v1"));
    }

    #[test]
    fn resources_keep_short_names_singular_names_categories_and_verbs() {
        let list: kube::core::discovery::v2::APIGroupDiscoveryList =
            serde_json::from_str(fixture!("discovery-aggregated-apis.json")).unwrap();
        let (_, lists, _) = split(list.items);
        let apps = lists.iter().find(|l| l.group_version == "apps/v1").unwrap();
        let deployments = apps
            .resources
            .iter()
            .find(|r| r.name == "deployments")
            .unwrap();
        assert_eq!(deployments.singular_name, "deployment");
        assert_eq!(deployments.kind, "Deployment");
        assert_eq!(
            deployments.short_names.as_deref(),
            Some(&["deploy".to_owned()][..])
        );
        assert_eq!(
            deployments.categories.as_deref(),
            Some(&["all".to_owned()][..])
        );
        assert!(deployments.namespaced && deployments.verbs.contains(&"watch".to_owned()));
        // Subresources are nested in aggregated discovery and never become resources.
        assert!(apps.resources.iter().all(|r| !r.name.contains('/')));
        assert!(resource(APIResourceDiscovery::default()).is_none());
    }
}
