//! Resource discovery and kubectl-compatible resolution of resource arguments.
//!
//! `kubectl deltas po` must mean exactly what `kubectl get po` means. kubectl builds a RESTMapper
//! from discovery and resolves its argument through cli-runtime's `Builder.mappingFor`, the
//! `shortcutExpander` (client-go `restmapper/shortcut.go`) and the `PriorityRESTMapper` that
//! `NewDiscoveryRESTMapper` (client-go `restmapper/discovery.go`) configures. [`ResourceCatalog`]
//! holds the same discovery data and [`ResourceCatalog::resolve`] reproduces those rules; the one
//! deliberate difference (ambiguous short names) is documented there.
//!
//! The data comes from the API server in two requests when it serves aggregated discovery, with
//! the legacy walk as the fallback (`fetch`), and is kept on disk per server as kubectl keeps its
//! own ([`DiscoveryCache`]), so that a warm start makes no discovery request at all.

mod disk;
mod fetch;

pub use disk::{CachedResolveError, DiscoveryCache, Resolved};

use std::collections::HashMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{APIGroupList, APIResourceList};
use kube::core::ApiResource;

/// One API resource served under one group/version, as discovery describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInfo {
    /// API group, empty for the legacy core group.
    pub group: String,
    /// Version within the group, e.g. `v1`.
    pub version: String,
    /// Kind of the objects, e.g. `Deployment`.
    pub kind: String,
    /// Plural resource name used in URLs, e.g. `deployments`.
    pub plural: String,
    /// Singular resource name, e.g. `deployment`.
    pub singular: String,
    /// Short names such as `deploy`.
    pub short_names: Vec<String>,
    /// Categories such as `all`.
    pub categories: Vec<String>,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Verbs the server supports for the resource.
    pub verbs: Vec<String>,
    /// Whether `version` is the group's preferred version.
    pub preferred: bool,
}

impl ResourceInfo {
    /// The [`ApiResource`] to hand to kube's dynamic `Api` constructors.
    pub fn api_resource(&self) -> ApiResource {
        ApiResource {
            group: self.group.clone(),
            version: self.version.clone(),
            api_version: self.api_version(),
            kind: self.kind.clone(),
            plural: self.plural.clone(),
        }
    }

    /// `apiVersion` of the objects: `v1` for the core group, `group/version` otherwise.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Whether the resource can be listed and watched, which an informer needs.
    pub fn is_watchable(&self) -> bool {
        self.has_verb("list") && self.has_verb("watch")
    }

    /// The name kubectl displays for the resource (`GroupResource.String()`): `pods` for the
    /// core group, `deployments.apps` otherwise. It is also an argument that resolves back to it.
    pub fn qualified_name(&self) -> String {
        qualify(&self.plural, &self.group)
    }

    fn has_verb(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }
}

impl fmt::Display for ResourceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.qualified_name())
    }
}

/// Every resource of every served group/version, in kubectl's priority order.
///
/// The order is the one `NewDiscoveryRESTMapper` gives its `PriorityRESTMapper`: the core group's
/// versions first, then each group in discovery order with its preferred version ahead of the
/// others. Whenever kubectl picks among several matches, it picks the first in this order.
/// Subresources (`pods/log`, `deployments/scale`) are left out, as kubectl leaves them out.
#[derive(Debug, Clone, Default)]
pub struct ResourceCatalog {
    resources: Vec<ResourceInfo>,
    /// Preferred version per group, in discovery order (core group included as `""`).
    preferred_versions: Vec<(String, String)>,
    /// Group versions whose resource list could not be fetched.
    unavailable: Vec<String>,
}

/// Discovery failed in a way that leaves no usable catalog.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    /// `GET /api` failed.
    #[error("cannot list the core API versions (GET /api)")]
    CoreVersions(#[source] kube::Error),
    /// `GET /api/<version>` failed.
    #[error("cannot list the core API resources (GET /api/{version})")]
    CoreResources {
        /// The core version being fetched.
        version: String,
        /// What kube reported.
        #[source]
        source: kube::Error,
    },
    /// `GET /apis` failed.
    #[error("cannot list the API groups (GET /apis)")]
    Groups(#[source] kube::Error),
}

/// A resource argument that does not name exactly one usable resource.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// Nothing matches.
    #[error("{}", unknown_message(resource, suggestions))]
    Unknown {
        /// The argument as given.
        arg: String,
        /// The resource part of the argument (before the first dot), which kubectl quotes.
        resource: String,
        /// Up to three close names, closest first.
        suggestions: Vec<String>,
    },
    /// A short name that several non-core groups define.
    #[error(
        "the short name {arg:?} is ambiguous: it matches {}; kubectl would pick {} (and warn); \
         qualify it with a group, e.g. {:?}",
        candidates.join(", "),
        candidates.first().map_or("", String::as_str),
        candidates.first().map_or(String::new(), |c| qualify_short(arg, c)),
    )]
    Ambiguous {
        /// The argument as given.
        arg: String,
        /// Qualified names of the matching resources, in kubectl's priority order.
        candidates: Vec<String>,
    },
    /// `configmap.v1`: a resource name the server knows, qualified with a group that does not
    /// have it (often a version written where `RESOURCE.GROUP` wants a group).
    #[error("{}", not_in_group_message(arg, resource, group, suggestions))]
    NotInGroup {
        /// The argument as given.
        arg: String,
        /// The resource part of the argument.
        resource: String,
        /// The group part of the argument.
        group: String,
        /// Forms that resolve, best first.
        suggestions: Vec<String>,
    },
    /// `deployments.v1beta1.apps`: the resource exists, but not in that version.
    #[error(
        "the server doesn't serve {resource} at version {version:?}; it serves {} (e.g. {example:?})",
        served.join(", ")
    )]
    VersionNotServed {
        /// Qualified name of the resource.
        resource: String,
        /// The version asked for.
        version: String,
        /// The versions served, in kubectl's priority order.
        served: Vec<String>,
        /// The argument with a served version.
        example: String,
    },
    /// The resource exists but cannot be listed and watched.
    #[error(
        "the resource type {resource:?} cannot be watched: it supports only [{}], and watching needs list and watch",
        verbs.join(", ")
    )]
    NotWatchable {
        /// Qualified name of the resource.
        resource: String,
        /// The verbs it does support.
        verbs: Vec<String>,
    },
    /// The resource exists but cannot be listed (for a command that only lists).
    #[error(
        "the resource type {resource:?} cannot be listed: it supports only [{}]",
        verbs.join(", ")
    )]
    NotListable {
        /// Qualified name of the resource.
        resource: String,
        /// The verbs it does support.
        verbs: Vec<String>,
    },
}

/// What a command does with a resource, so what the resource must support.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Listed once (`index`): `componentstatuses` will do.
    List,
    /// Listed and watched, as an informer does.
    Watch,
}

impl ResourceCatalog {
    /// Builds a catalog from discovery documents: the `APIResourceList`s of the core versions
    /// (`/api/v1`, in `/api`'s order), the `APIGroupList` (`/apis`) and the `APIResourceList`s of
    /// the group versions (`/apis/<g>/<v>`, any order).
    ///
    /// Group resource lists are placed by `groups`: a list for a group version that `groups` does
    /// not name is ignored, as kubectl's `GetAPIGroupResources` ignores it. A group without a
    /// `preferredVersion` prefers its first listed version, which is how kubectl ends up ranking it.
    pub fn from_documents(
        core: Vec<APIResourceList>,
        groups: &APIGroupList,
        group_resources: Vec<APIResourceList>,
    ) -> Self {
        let mut catalog = Self::default();

        if let Some(first) = core.first() {
            catalog
                .preferred_versions
                .push((String::new(), first.group_version.clone()));
        }
        for (index, list) in core.into_iter().enumerate() {
            let version = list.group_version.clone();
            catalog.push_list("", &version, index == 0, list);
        }

        let mut by_group_version: HashMap<String, APIResourceList> = group_resources
            .into_iter()
            .map(|list| (list.group_version.clone(), list))
            .collect();
        for group in &groups.groups {
            let preferred = group
                .preferred_version
                .as_ref()
                .map(|p| p.version.clone())
                .or_else(|| group.versions.first().map(|v| v.version.clone()));
            let Some(preferred) = preferred else { continue };
            // kubectl ranks the preferred version first, then the others in listed order.
            let mut versions: Vec<_> = group.versions.iter().collect();
            versions.sort_by_key(|v| v.version != preferred);
            for v in versions {
                if let Some(list) = by_group_version.remove(&v.group_version) {
                    catalog.push_list(&group.name, &v.version, v.version == preferred, list);
                }
            }
            catalog
                .preferred_versions
                .push((group.name.clone(), preferred));
        }
        catalog
    }

    fn push_list(&mut self, group: &str, version: &str, preferred: bool, list: APIResourceList) {
        for r in list.resources {
            if r.name.contains('/') {
                continue; // subresource, e.g. pods/log
            }
            // Servers that omit singularName get kubectl's guess: the lowercased kind
            // (`meta.UnsafeGuessKindToResource`).
            let singular = if r.singular_name.is_empty() {
                r.kind.to_ascii_lowercase()
            } else {
                r.singular_name
            };
            self.resources.push(ResourceInfo {
                group: group.to_owned(),
                version: version.to_owned(),
                kind: r.kind,
                plural: r.name,
                singular,
                short_names: r.short_names.unwrap_or_default(),
                categories: r.categories.unwrap_or_default(),
                namespaced: r.namespaced,
                verbs: r.verbs,
                preferred,
            });
        }
    }

    /// All resources, in kubectl's priority order.
    pub fn resources(&self) -> &[ResourceInfo] {
        &self.resources
    }

    /// The preferred version of `group` (`""` for the core group), if the group is served.
    pub fn preferred_version(&self, group: &str) -> Option<&str> {
        self.preferred_versions
            .iter()
            .find(|(g, _)| g == group)
            .map(|(_, v)| v.as_str())
    }

    /// Group versions (`metrics.k8s.io/v1beta1`) left out because their discovery failed.
    pub fn unavailable_group_versions(&self) -> &[String] {
        &self.unavailable
    }

    /// Resolves a resource argument the way `kubectl get <arg>` does.
    ///
    /// Accepted forms, case-insensitively: plural (`pods`), singular (`pod`), short name (`po`),
    /// kind (`Pod`), `resource.group` (`deployments.apps`, `deploy.apps`,
    /// `widgets.example.com`) and `resource.version.group` (`deploy.v1.apps`).
    ///
    /// The rules, from cli-runtime `Builder.mappingFor` and client-go's RESTMappers:
    /// - an argument with two or more dots is first tried as `resource.version.group`, then (as
    ///   any argument) as `resource.group` split at the first dot (`schema.ParseResourceArg`);
    ///   only when no resource matches either way is it tried as a kind (`schema.ParseKindArg`);
    /// - a plural or singular name wins over a short name: kubectl does not expand a short name
    ///   that is also a full resource name;
    /// - a short name with a group that matches no group exactly matches groups it is a prefix
    ///   of (`hpa.autoscal`), first in discovery order;
    /// - several matches: the core group first, then groups in discovery order, the preferred
    ///   version first within a group (`events` is core `v1`, not `events.k8s.io`); without a
    ///   version in the argument the preferred version is chosen.
    ///
    /// Deliberate difference: when a short name is defined by several non-core groups, kubectl
    /// takes the first group and prints `short name "x" could also match lower priority
    /// resource ...`; a watch should not silently pick one of two CRDs, so this returns
    /// [`ResolveError::Ambiguous`] listing the candidates, kubectl's pick first. kubectl also
    /// matches short names case-sensitively; here every form is case-insensitive.
    ///
    /// Name resolution only; see [`Self::resolve_watchable`] for the verb check.
    pub fn resolve(&self, arg: &str) -> Result<ResourceInfo, ResolveError> {
        let lowered = arg.trim().to_ascii_lowercase();
        let fully_specified = fully_specified(&lowered);
        let (resource, group) = match lowered.split_once('.') {
            Some((resource, group)) => (resource, non_empty(group)),
            None => (lowered.as_str(), None),
        };

        if let Some((resource, version, group)) = fully_specified
            && let Some(found) = self.find_resource(arg, resource, group, version)?
        {
            return Ok(found.clone());
        }
        if let Some(found) = self.find_resource(arg, resource, group, None)? {
            return Ok(found.clone());
        }
        if let Some((kind, version, group)) = fully_specified
            && let Some(found) = self.find_kind(kind, group, version)
        {
            return Ok(found.clone());
        }
        if let Some(found) = self.find_kind(resource, group, None) {
            return Ok(found.clone());
        }
        Err(self.unknown(arg, &lowered, resource, group, fully_specified))
    }

    /// Why `arg` names nothing: a version the resource is not served at, a group that does not
    /// have a name the server knows, or a name it does not know at all (with close names, never
    /// the argument itself).
    fn unknown(
        &self,
        arg: &str,
        lowered: &str,
        resource: &str,
        group: Option<&str>,
        fully_specified: Option<(&str, Option<&str>, Option<&str>)>,
    ) -> ResolveError {
        if let Some((name, Some(version), group)) = fully_specified
            && let Ok(Some(found)) = self.find_resource(arg, name, group, None)
        {
            let served: Vec<String> = self
                .resources
                .iter()
                .filter(|r| r.group == found.group && r.plural == found.plural)
                .map(|r| r.version.clone())
                .collect();
            return ResolveError::VersionNotServed {
                resource: found.qualified_name(),
                version: version.to_owned(),
                example: format!("{name}.{}.{}", served[0], found.group),
                served,
            };
        }
        if let Some(group) = group
            && let Ok(plain) = self.resolve(resource)
        {
            let mut suggestions = vec![resource.to_owned()];
            // `configmap.v1` meant version v1: kubectl reads a version only between two dots.
            if looks_like_version(group)
                && self
                    .in_scope(Some(&plain.group), Some(group))
                    .any(|r| r.plural == plain.plural)
            {
                suggestions.push(format!("{resource}.{group}.{}", plain.group));
            }
            return ResolveError::NotInGroup {
                arg: arg.trim().to_owned(),
                resource: resource.to_owned(),
                group: group.to_owned(),
                suggestions,
            };
        }
        let mut suggestions = self.suggestions(resource, group.is_some());
        suggestions.retain(|s| s != lowered && s != resource);
        ResolveError::Unknown {
            arg: arg.to_owned(),
            resource: resource.to_owned(),
            suggestions,
        }
    }

    /// [`Self::resolve`], then refuses resources that cannot be listed and watched.
    pub fn resolve_watchable(&self, arg: &str) -> Result<ResourceInfo, ResolveError> {
        self.resolve_for(arg, Need::Watch)
    }

    /// [`Self::resolve`], then refuses resources that do not support what `need` asks of them.
    pub fn resolve_for(&self, arg: &str, need: Need) -> Result<ResourceInfo, ResolveError> {
        let info = self.resolve(arg)?;
        match need {
            Need::Watch if !info.is_watchable() => Err(ResolveError::NotWatchable {
                resource: info.qualified_name(),
                verbs: info.verbs,
            }),
            Need::List if !info.has_verb("list") => Err(ResolveError::NotListable {
                resource: info.qualified_name(),
                verbs: info.verbs,
            }),
            _ => Ok(info),
        }
    }

    /// Resources in `group` and `version` (each optional), in priority order.
    fn in_scope<'s>(
        &'s self,
        group: Option<&str>,
        version: Option<&str>,
    ) -> impl Iterator<Item = &'s ResourceInfo> {
        self.resources.iter().filter(move |r| {
            group.is_none_or(|g| r.group.eq_ignore_ascii_case(g))
                && version.is_none_or(|v| r.version.eq_ignore_ascii_case(v))
        })
    }

    /// Resource-name lookup: the shortcut expander, then the priority mapper's `KindFor`.
    fn find_resource(
        &self,
        arg: &str,
        name: &str,
        group: Option<&str>,
        version: Option<&str>,
    ) -> Result<Option<&ResourceInfo>, ResolveError> {
        let by_name = |r: &&ResourceInfo| {
            r.plural.eq_ignore_ascii_case(name) || r.singular.eq_ignore_ascii_case(name)
        };
        if let Some(found) = self.in_scope(group, version).find(by_name) {
            return Ok(Some(found));
        }

        let has_short =
            |r: &&ResourceInfo| r.short_names.iter().any(|s| s.eq_ignore_ascii_case(name));
        let mut matches: Vec<&ResourceInfo> = Vec::new();
        for r in self.in_scope(group, version).filter(has_short) {
            // The same group/resource in several versions is one match, not an ambiguity.
            if !matches
                .iter()
                .any(|m| m.group == r.group && m.plural == r.plural)
            {
                matches.push(r);
            }
        }
        match matches.as_slice() {
            [] => {}
            [only] => return Ok(Some(only)),
            [first, ..] if first.group.is_empty() => return Ok(Some(first)),
            _ => {
                return Err(ResolveError::Ambiguous {
                    arg: arg.to_owned(),
                    candidates: matches.iter().map(|m| m.qualified_name()).collect(),
                });
            }
        }

        // shortcut.go: "match on group prefixing. This allows autoscal to match autoscaling".
        Ok(group.and_then(|prefix| {
            self.in_scope(None, version)
                .filter(|r| r.group.to_ascii_lowercase().starts_with(prefix))
                .find(has_short)
        }))
    }

    /// Kind lookup: kubectl's `RESTMapping(groupKind, version)` fallback.
    fn find_kind(
        &self,
        kind: &str,
        group: Option<&str>,
        version: Option<&str>,
    ) -> Option<&ResourceInfo> {
        self.in_scope(group, version)
            .find(|r| r.kind.eq_ignore_ascii_case(kind))
    }

    /// Up to three names close to `resource`, closest first, ties in priority order.
    fn suggestions(&self, resource: &str, qualified: bool) -> Vec<String> {
        if resource.is_empty() {
            return Vec::new();
        }
        // How many edits still look like a typo depends on the shorter word: `pdos` is one
        // from `pods` but two from `ds`, which would be noise.
        let max_distance = |name: &str| match resource.chars().count().min(name.chars().count()) {
            0..=3 => 1,
            4..=7 => 2,
            _ => 3,
        };
        let mut scored: Vec<(usize, String)> = Vec::new();
        for r in &self.resources {
            let kind = r.kind.to_ascii_lowercase();
            // One suggestion per resource, its closest name: `pdos` gets "pods", not also "pod".
            let closest = [r.plural.as_str(), r.singular.as_str(), kind.as_str()]
                .into_iter()
                .chain(r.short_names.iter().map(String::as_str))
                .map(|name| (strsim::osa_distance(resource, name), name))
                .filter(|(distance, name)| *distance <= max_distance(name))
                .min_by_key(|(distance, _)| *distance);
            let Some((distance, name)) = closest else {
                continue;
            };
            // A group the user typed is likely wrong too, so suggest the full form then.
            let shown = if qualified {
                qualify(name, &r.group)
            } else {
                name.to_owned()
            };
            if !scored.iter().any(|(_, s)| *s == shown) {
                scored.push((distance, shown));
            }
        }
        // Stable sort keeps priority order among equal distances.
        scored.sort_by_key(|(distance, _)| *distance);
        scored.into_iter().take(3).map(|(_, s)| s).collect()
    }
}

/// `schema.ParseResourceArg`: with two or more dots, `resource.version.group`.
fn fully_specified(arg: &str) -> Option<(&str, Option<&str>, Option<&str>)> {
    let mut parts = arg.splitn(3, '.');
    let (resource, version, group) = (parts.next()?, parts.next()?, parts.next()?);
    Some((resource, non_empty(version), non_empty(group)))
}

/// kubectl treats an empty group or version as unspecified.
fn non_empty(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
}

fn qualify(name: &str, group: &str) -> String {
    if group.is_empty() {
        name.to_owned()
    } else {
        format!("{name}.{group}")
    }
}

/// `wd` and `widgets.a.example.com` → `wd.a.example.com`.
fn qualify_short(arg: &str, qualified_candidate: &str) -> String {
    match qualified_candidate.split_once('.') {
        Some((_, group)) => format!("{}.{group}", arg.trim()),
        None => arg.trim().to_owned(),
    }
}

/// `v1`, `v2beta1`, `v1alpha3`: what Kubernetes versions look like.
fn looks_like_version(text: &str) -> bool {
    let Some(rest) = text.strip_prefix('v') else {
        return false;
    };
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let (major, rest) = rest.split_at(digits);
    let qualifier = rest
        .strip_prefix("alpha")
        .or_else(|| rest.strip_prefix("beta"));
    !major.is_empty()
        && (rest.is_empty()
            || qualifier.is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit())))
}

fn not_in_group_message(arg: &str, resource: &str, group: &str, suggestions: &[String]) -> String {
    let mut message =
        format!("the server doesn't have a resource type {resource:?} in API group {group:?}");
    if looks_like_version(group) {
        message.push_str(&format!(
            " ({arg:?} reads as RESOURCE.GROUP; a version goes in RESOURCE.VERSION.GROUP)"
        ));
    }
    with_suggestions(message, suggestions)
}

fn unknown_message(resource: &str, suggestions: &[String]) -> String {
    // kubectl's wording (cli-runtime `Builder.mappingFor`), then the suggestions.
    with_suggestions(
        format!("the server doesn't have a resource type {resource:?}"),
        suggestions,
    )
}

/// `message; did you mean "a", "b" or "c"?`
fn with_suggestions(message: String, suggestions: &[String]) -> String {
    let quoted: Vec<String> = suggestions.iter().map(|s| format!("{s:?}")).collect();
    match quoted.split_last() {
        None => message,
        Some((last, [])) => format!("{message}; did you mean {last}?"),
        Some((last, rest)) => format!("{message}; did you mean {} or {last}?", rest.join(", ")),
    }
}

#[cfg(test)]
#[path = "discovery_tests.rs"]
mod tests;
