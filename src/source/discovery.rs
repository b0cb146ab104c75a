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
//! the legacy walk as the fallback ([`fetch`]), and is kept on disk per server as kubectl keeps its
//! own ([`DiscoveryCache`]), so that a warm start makes no discovery request at all.

mod disk;
mod fetch;

pub use disk::{CachedResolveError, DiscoveryCache};

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
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
        APIGroup, APIResource, GroupVersionForDiscovery,
    };
    use kube::core::discovery::v2::APIGroupDiscoveryList;

    macro_rules! fixture {
        ($name:literal) => {
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/apiserver-v1.28.7/",
                $name
            ))
        };
    }

    fn parse<T: serde::de::DeserializeOwned>(json: &str) -> T {
        serde_json::from_str(json).expect("fixture parses")
    }

    /// The captured legacy documents: core/v1 and apps/v1 resources, all groups listed.
    fn legacy_documents() -> (Vec<APIResourceList>, APIGroupList, Vec<APIResourceList>) {
        (
            vec![parse(fixture!("discovery-api-v1.json"))],
            parse(fixture!("discovery-apis.json")),
            vec![parse(fixture!("discovery-apis-apps-v1.json"))],
        )
    }

    fn legacy() -> ResourceCatalog {
        let (core, groups, resources) = legacy_documents();
        ResourceCatalog::from_documents(core, &groups, resources)
    }

    fn crd(plural: &str, singular: &str, kind: &str, short: &[&str]) -> APIResource {
        APIResource {
            name: plural.into(),
            singular_name: singular.into(),
            kind: kind.into(),
            namespaced: true,
            short_names: Some(short.iter().map(|s| s.to_string()).collect()),
            verbs: ["get", "list", "watch"].map(String::from).to_vec(),
            ..Default::default()
        }
    }

    /// Adds a served group with one version holding `resources`, after the existing groups.
    fn add_group(
        groups: &mut APIGroupList,
        lists: &mut Vec<APIResourceList>,
        group: &str,
        resources: Vec<APIResource>,
    ) {
        let gv = GroupVersionForDiscovery {
            group_version: format!("{group}/v1"),
            version: "v1".into(),
        };
        groups.groups.push(APIGroup {
            name: group.into(),
            versions: vec![gv.clone()],
            preferred_version: Some(gv.clone()),
            ..Default::default()
        });
        lists.push(APIResourceList {
            group_version: gv.group_version,
            resources,
        });
    }

    /// The legacy fixture plus three CRD groups: a dotted group and two sharing short name `gd`.
    fn with_crds() -> ResourceCatalog {
        let (core, mut groups, mut lists) = legacy_documents();
        let widgets = crd("widgets", "widget", "Widget", &["wd"]);
        add_group(&mut groups, &mut lists, "example.com", vec![widgets]);
        let gadgets = crd("gadgets", "gadget", "Gadget", &["gd"]);
        add_group(&mut groups, &mut lists, "alpha.io", vec![gadgets]);
        let gizmos = crd("gizmos", "gizmo", "Gizmoid", &["gd"]);
        add_group(&mut groups, &mut lists, "beta.io", vec![gizmos]);
        ResourceCatalog::from_documents(core, &groups, lists)
    }

    /// Every group of the captured server.
    fn full() -> ResourceCatalog {
        ResourceCatalog::from_documents(
            vec![parse(fixture!("discovery-api-v1.json"))],
            &parse(fixture!("discovery-apis.json")),
            full_group_lists(),
        )
    }

    /// The resource lists of every group of the captured server, from its aggregated document.
    fn full_group_lists() -> Vec<APIResourceList> {
        fetch::split(
            parse::<APIGroupDiscoveryList>(fixture!("discovery-aggregated-apis.json")).items,
        )
        .1
    }

    #[track_caller]
    fn resolves(catalog: &ResourceCatalog, arg: &str, expected: &str, version: &str) {
        let info = catalog
            .resolve(arg)
            .unwrap_or_else(|e| panic!("{arg}: {e}"));
        assert_eq!(
            (info.qualified_name().as_str(), info.version.as_str()),
            (expected, version),
            "{arg}"
        );
    }

    #[test]
    fn core_names_short_names_and_kinds() {
        let catalog = legacy();
        for arg in ["po", "pods", "pod", "Pod", "PODS", "Po", " pods "] {
            resolves(&catalog, arg, "pods", "v1");
        }
        resolves(&catalog, "cm", "configmaps", "v1");
        resolves(&catalog, "ConfigMap", "configmaps", "v1");
        resolves(&catalog, "svc", "services", "v1");
    }

    #[test]
    fn apps_names_with_and_without_group() {
        let catalog = legacy();
        for arg in [
            "deploy",
            "deployments",
            "deployment",
            "Deployment",
            "deployments.apps",
            "deploy.apps",
            "Deployment.apps",
            "deploy.v1.apps",
            "deployments.v1.apps",
        ] {
            resolves(&catalog, arg, "deployments.apps", "v1");
        }
        resolves(&catalog, "rs", "replicasets.apps", "v1");
        resolves(&catalog, "sts", "statefulsets.apps", "v1");
    }

    #[test]
    fn cluster_scoped_namespace() {
        let ns = legacy().resolve("ns").unwrap();
        assert_eq!(ns.qualified_name(), "namespaces");
        assert!(!ns.namespaced);
        assert!(legacy().resolve("po").unwrap().namespaced);
    }

    #[test]
    fn api_resource_fields() {
        let deploy = legacy().resolve("deploy").unwrap();
        assert_eq!(
            deploy.api_resource(),
            ApiResource {
                group: "apps".into(),
                version: "v1".into(),
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
                plural: "deployments".into(),
            }
        );
        assert_eq!(deploy.singular, "deployment");
        assert_eq!(deploy.short_names, ["deploy"]);
        assert_eq!(deploy.categories, ["all"]);
        assert!(deploy.preferred && deploy.is_watchable());
        assert_eq!(deploy.to_string(), "deployments.apps");

        let pods = legacy().resolve("pods").unwrap().api_resource();
        assert_eq!((pods.group.as_str(), pods.api_version.as_str()), ("", "v1"));
    }

    #[test]
    fn subresources_are_not_resources() {
        let catalog = legacy();
        assert!(catalog.resources().iter().all(|r| !r.plural.contains('/')));
        for arg in ["pods/log", "deployments/scale", "log", "scale"] {
            assert!(
                matches!(catalog.resolve(arg), Err(ResolveError::Unknown { .. })),
                "{arg}"
            );
        }
        // `deployments/scale` reports kind Scale of autoscaling/v1: it must not make "scale" a kind.
        assert!(catalog.resources().iter().all(|r| r.kind != "Scale"));
    }

    #[test]
    fn unknown_names_get_suggestions() {
        let catalog = legacy();
        let err = catalog.resolve("pdos").unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"the server doesn't have a resource type "pdos"; did you mean "pods"?"#
        );
        let ResolveError::Unknown { suggestions, .. } = catalog.resolve("deploymnets").unwrap_err()
        else {
            panic!("expected Unknown");
        };
        assert_eq!(suggestions.first().map(String::as_str), Some("deployments"));

        // A group the user typed is kept in the suggestion, and kubectl quotes only the resource.
        let err = catalog.resolve("deploymnets.apps").unwrap_err();
        assert!(
            err.to_string()
                .starts_with(r#"the server doesn't have a resource type "deploymnets"; did you mean "deployments.apps""#),
            "{err}"
        );

        let err = catalog.resolve("frobnicators").unwrap_err();
        assert_eq!(
            err,
            ResolveError::Unknown {
                arg: "frobnicators".into(),
                resource: "frobnicators".into(),
                suggestions: vec![],
            }
        );
        assert_eq!(
            err.to_string(),
            r#"the server doesn't have a resource type "frobnicators""#
        );
        assert!(matches!(
            catalog.resolve(""),
            Err(ResolveError::Unknown { .. })
        ));
    }

    #[test]
    fn a_version_where_a_group_goes_is_explained_and_never_suggested_back() {
        let catalog = legacy();
        let err = catalog.resolve("configmap.v1").unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"the server doesn't have a resource type "configmap" in API group "v1" ("configmap.v1" reads as RESOURCE.GROUP; a version goes in RESOURCE.VERSION.GROUP); did you mean "configmap" or "configmap.v1."?"#
        );
        for suggestion in ["configmap", "configmap.v1."] {
            resolves(&catalog, suggestion, "configmaps", "v1");
        }
        let ResolveError::NotInGroup { suggestions, .. } =
            catalog.resolve("deploy.v1").unwrap_err()
        else {
            panic!("expected NotInGroup");
        };
        assert_eq!(suggestions, ["deploy", "deploy.v1.apps"]);
        // Not served at that version: only the plain name.
        let ResolveError::NotInGroup { suggestions, .. } =
            catalog.resolve("deploy.v1beta1").unwrap_err()
        else {
            panic!("expected NotInGroup");
        };
        assert_eq!(suggestions, ["deploy"]);
        assert!(looks_like_version("v1") && looks_like_version("v2beta3"));
        assert!(
            !looks_like_version("apps")
                && !looks_like_version("v1beta")
                && !looks_like_version("v")
        );
    }

    #[test]
    fn a_version_the_resource_is_not_served_at_lists_the_served_ones() {
        let err = legacy().resolve("deployments.v1beta1.apps").unwrap_err();
        assert_eq!(
            err,
            ResolveError::VersionNotServed {
                resource: "deployments.apps".into(),
                version: "v1beta1".into(),
                served: vec!["v1".into()],
                example: "deployments.v1.apps".into(),
            }
        );
        assert_eq!(
            err.to_string(),
            r#"the server doesn't serve deployments.apps at version "v1beta1"; it serves v1 (e.g. "deployments.v1.apps")"#
        );
    }

    #[test]
    fn several_suggestions_read_as_a_list() {
        assert_eq!(
            unknown_message("x", &["a".into(), "b".into(), "c".into()]),
            r#"the server doesn't have a resource type "x"; did you mean "a", "b" or "c"?"#
        );
        let ResolveError::Unknown { suggestions, .. } = legacy().resolve("nods").unwrap_err()
        else {
            panic!("expected Unknown");
        };
        assert!(suggestions.len() <= 3 && suggestions.contains(&"nodes".to_owned()));
    }

    #[test]
    fn short_name_shared_by_two_crd_groups_is_ambiguous() {
        let err = with_crds().resolve("gd").unwrap_err();
        assert_eq!(
            err,
            ResolveError::Ambiguous {
                arg: "gd".into(),
                candidates: vec!["gadgets.alpha.io".into(), "gizmos.beta.io".into()],
            }
        );
        assert!(err.to_string().contains(r#"e.g. "gd.alpha.io""#), "{err}");
        // Qualifying it, or using a full name, settles it.
        resolves(&with_crds(), "gd.beta.io", "gizmos.beta.io", "v1");
        resolves(&with_crds(), "gd.v1.alpha.io", "gadgets.alpha.io", "v1");
        resolves(&with_crds(), "gizmos", "gizmos.beta.io", "v1");
    }

    #[test]
    fn crd_with_dotted_group() {
        let catalog = with_crds();
        for arg in [
            "wd",
            "widgets",
            "widget",
            "Widget",
            "widgets.example.com",
            "wd.example.com",
            "widgets.v1.example.com",
            "Widget.example.com",
        ] {
            resolves(&catalog, arg, "widgets.example.com", "v1");
        }
        // Only by kind (its singular is `gizmo`): kubectl's ParseKindArg fallback.
        resolves(&catalog, "Gizmoid", "gizmos.beta.io", "v1");
        resolves(&catalog, "gizmoid.v1.beta.io", "gizmos.beta.io", "v1");
        assert_eq!(
            catalog
                .resolve("widgets.example.org")
                .unwrap_err()
                .to_string(),
            r#"the server doesn't have a resource type "widgets" in API group "example.org"; did you mean "widgets"?"#
        );
    }

    #[test]
    fn core_group_wins_over_other_groups() {
        let catalog = full();
        // `events` is served by core/v1 and events.k8s.io/v1; kubectl picks the core group.
        for arg in ["events", "event", "ev", "Event"] {
            resolves(&catalog, arg, "events", "v1");
        }
        resolves(
            &catalog,
            "events.events.k8s.io",
            "events.events.k8s.io",
            "v1",
        );
        resolves(&catalog, "ev.events.k8s.io", "events.events.k8s.io", "v1");
    }

    #[test]
    fn preferred_version_unless_a_version_is_given() {
        let catalog = full();
        assert_eq!(catalog.preferred_version("autoscaling"), Some("v2"));
        assert_eq!(catalog.preferred_version(""), Some("v1"));
        let hpa = catalog.resolve("hpa").unwrap();
        assert_eq!(
            (hpa.api_version().as_str(), hpa.preferred),
            ("autoscaling/v2", true)
        );
        let hpa_v1 = catalog.resolve("hpa.v1.autoscaling").unwrap();
        assert_eq!(
            (hpa_v1.api_version().as_str(), hpa_v1.preferred),
            ("autoscaling/v1", false)
        );
        resolves(
            &catalog,
            "horizontalpodautoscalers.v1.autoscaling",
            "horizontalpodautoscalers.autoscaling",
            "v1",
        );
        resolves(
            &catalog,
            "flowschemas",
            "flowschemas.flowcontrol.apiserver.k8s.io",
            "v1beta3",
        );
        resolves(
            &catalog,
            "flowschemas.v1beta2.flowcontrol.apiserver.k8s.io",
            "flowschemas.flowcontrol.apiserver.k8s.io",
            "v1beta2",
        );
        // A version the group does not serve is not silently replaced by another.
        let err = catalog.resolve("hpa.v3.autoscaling").unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"the server doesn't serve horizontalpodautoscalers.autoscaling at version "v3"; it serves v2, v1 (e.g. "hpa.v2.autoscaling")"#
        );
    }

    #[test]
    fn short_name_with_group_prefix() {
        // shortcut.go: "This allows autoscal to match autoscaling".
        resolves(
            &full(),
            "hpa.autoscal",
            "horizontalpodautoscalers.autoscaling",
            "v2",
        );
        // Only short names get prefix matching, as in kubectl.
        assert!(full().resolve("horizontalpodautoscalers.autoscal").is_err());
    }

    #[test]
    fn full_names_beat_short_names() {
        // A CRD whose short name is another resource's plural: kubectl does not expand it.
        let (core, mut groups, mut lists) = legacy_documents();
        let sneaky = crd("sneakies", "sneaky", "Sneaky", &["pods"]);
        add_group(&mut groups, &mut lists, "sneaky.io", vec![sneaky]);
        let catalog = ResourceCatalog::from_documents(core, &groups, lists);
        resolves(&catalog, "pods", "pods", "v1");
    }

    #[test]
    fn non_watchable_resources_are_refused_by_resolve_watchable() {
        let catalog = legacy();
        assert_eq!(
            catalog.resolve("cs").unwrap().qualified_name(),
            "componentstatuses"
        );
        let err = catalog.resolve_watchable("cs").unwrap_err();
        assert_eq!(
            err,
            ResolveError::NotWatchable {
                resource: "componentstatuses".into(),
                verbs: vec!["get".into(), "list".into()],
            }
        );
        assert_eq!(
            err.to_string(),
            r#"the resource type "componentstatuses" cannot be watched: it supports only [get, list], and watching needs list and watch"#
        );
        assert!(catalog.resolve_watchable("bindings").is_err());
        assert!(catalog.resolve_watchable("po").is_ok());
    }

    #[test]
    fn group_lists_not_named_by_the_group_list_are_ignored() {
        let (core, groups, mut lists) = legacy_documents();
        lists.push(APIResourceList {
            group_version: "stray.io/v1".into(),
            resources: vec![crd("strays", "stray", "Stray", &[])],
        });
        let catalog = ResourceCatalog::from_documents(core, &groups, lists);
        assert!(catalog.resolve("strays").is_err());
        assert_eq!(catalog.preferred_version("stray.io"), None);
    }

    #[test]
    fn aggregated_discovery_agrees_with_legacy_for_apps_v1() {
        let summary = |catalog: &ResourceCatalog| -> Vec<ResourceInfo> {
            catalog
                .resources()
                .iter()
                .filter(|r| r.group == "apps" && r.version == "v1")
                .cloned()
                .collect()
        };
        let from_legacy = summary(&legacy());
        assert_eq!(from_legacy.len(), 5);
        assert_eq!(from_legacy, summary(&full()));
    }

    /// Serves the legacy fixtures over HTTP, as a server without aggregated discovery does
    /// whatever the Accept header asks for; other group versions answer 503, as an aggregated
    /// API with a dead backend does. With `core_fails`, `/api/v1` answers 503 too. With
    /// `aggregated`, `/api` and `/apis` answer the aggregated fixtures when asked for them.
    /// Counts the requests.
    async fn fixture_server(
        core_fails: bool,
        aggregated: bool,
    ) -> (kube::Client, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use http_body_util::Full;
        use hyper::{Response, StatusCode, body::Incoming, service::service_fn};
        use std::sync::atomic::{AtomicUsize, Ordering};

        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = std::sync::Arc::new(AtomicUsize::new(0));
        let counted = requests.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let counted = counted.clone();
                let service = service_fn(move |request: hyper::Request<Incoming>| {
                    counted.fetch_add(1, Ordering::SeqCst);
                    let wants_aggregated = aggregated
                        && request
                            .headers()
                            .get("accept")
                            .and_then(|a| a.to_str().ok())
                            .is_some_and(|a| a.contains("as=APIGroupDiscoveryList"));
                    async move {
                        let body = match request.uri().path() {
                            "/api" if wants_aggregated => {
                                Some(fixture!("discovery-aggregated-api.json"))
                            }
                            "/apis" if wants_aggregated => {
                                Some(fixture!("discovery-aggregated-apis.json"))
                            }
                            "/api" => Some(fixture!("discovery-api.json")),
                            "/api/v1" if !core_fails => Some(fixture!("discovery-api-v1.json")),
                            "/apis" => Some(fixture!("discovery-apis.json")),
                            "/apis/apps/v1" => Some(fixture!("discovery-apis-apps-v1.json")),
                            _ => None,
                        };
                        let (status, body) = match body {
                            Some(body) => (StatusCode::OK, body),
                            None => (
                                StatusCode::SERVICE_UNAVAILABLE,
                                r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server is currently unable to handle the request","reason":"ServiceUnavailable","code":503}"#,
                            ),
                        };
                        Response::builder()
                            .status(status)
                            .header("content-type", "application/json")
                            .body(Full::new(bytes::Bytes::from_static(body.as_bytes())))
                    }
                });
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service),
                );
            }
        });
        let mut config = kube::Config::new(url.parse().unwrap());
        // kube would retry the 503s for minutes (which `discover` caps at 10 s); fail fast here.
        config.default_retry = false;
        (kube::Client::try_from(config).unwrap(), requests)
    }

    #[tokio::test]
    async fn discover_skips_failing_group_versions() {
        let (client, _) = fixture_server(false, false).await;
        let catalog = ResourceCatalog::discover(&client).await.unwrap();
        resolves(&catalog, "deploy", "deployments.apps", "v1");
        resolves(&catalog, "po", "pods", "v1");
        let unavailable = catalog.unavailable_group_versions();
        assert!(
            unavailable.contains(&"batch/v1".to_owned()),
            "{unavailable:?}"
        );
        assert!(!unavailable.contains(&"apps/v1".to_owned()));
        assert_eq!(catalog.preferred_version("autoscaling"), Some("v2"));
        assert_eq!(catalog.resources(), legacy().resources());
    }

    #[tokio::test]
    async fn discover_fails_when_the_core_group_fails() {
        let (client, _) = fixture_server(true, false).await;
        let err = ResourceCatalog::discover(&client).await.unwrap_err();
        assert!(
            matches!(&err, DiscoveryError::CoreResources { version, .. } if version == "v1"),
            "{err:?}"
        );
        assert!(std::error::Error::source(&err).is_some());
    }

    #[tokio::test]
    async fn aggregated_discovery_takes_two_requests_and_finds_every_group() {
        let (client, requests) = fixture_server(false, true).await;
        let catalog = ResourceCatalog::discover(&client).await.unwrap();
        assert_eq!(requests.load(std::sync::atomic::Ordering::SeqCst), 2);
        assert!(catalog.unavailable_group_versions().is_empty());
        // The core group from `/api`'s aggregated document, every other group from `/apis`'s.
        let from_aggregated = ResourceCatalog::from_documents(
            fetch::split(
                parse::<APIGroupDiscoveryList>(fixture!("discovery-aggregated-api.json")).items,
            )
            .1,
            &parse(fixture!("discovery-apis.json")),
            full_group_lists(),
        );
        assert_eq!(catalog.resources(), from_aggregated.resources());
        assert_eq!(catalog.preferred_version("autoscaling"), Some("v2"));
        resolves(
            &catalog,
            "hpa",
            "horizontalpodautoscalers.autoscaling",
            "v2",
        );
        resolves(&catalog, "ev", "events", "v1");
        resolves(&catalog, "deploy.v1.apps", "deployments.apps", "v1");
        assert_eq!(catalog.resolve("po").unwrap().categories, ["all"]);
    }
}
