//! Resource definitions and the discovery documents built from them.

use serde_json::Value;

use super::json::{J, Obj};

/// One servable resource, as a CRD or a built-in type would declare it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceDef {
    /// API group; `""` for the core group served under `/api/v1`.
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub singular: String,
    pub short_names: Vec<String>,
    pub namespaced: bool,
}

impl ResourceDef {
    /// A definition with the usual derived names: singular is the lower-cased kind, no short names.
    pub fn new(group: &str, version: &str, kind: &str, plural: &str, namespaced: bool) -> Self {
        Self {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            plural: plural.into(),
            singular: kind.to_lowercase(),
            short_names: Vec::new(),
            namespaced,
        }
    }

    pub fn with_short_names(mut self, names: &[&str]) -> Self {
        self.short_names = names.iter().map(|s| s.to_string()).collect();
        self
    }

    /// The name tests use to address the resource: `plural` for core, `plural.group` otherwise
    /// (the `kubectl api-resources` spelling).
    pub fn id(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// `apiVersion` of objects of this resource.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Namespaces cannot be bulk-deleted; every other built-in supports `deletecollection`.
    /// `componentstatuses` (when a test registers it) is only read, as the real one: get, list.
    fn verbs(&self) -> Vec<String> {
        if self.group.is_empty() && self.plural == "componentstatuses" {
            return vec!["get".to_owned(), "list".to_owned()];
        }
        let all = [
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch",
        ];
        all.iter()
            .filter(|v| {
                !(self.group.is_empty() && self.plural == "namespaces" && **v == "deletecollection")
            })
            .map(|s| s.to_string())
            .collect()
    }

    /// `kubectl get all` membership, as the real server advertises it for built-ins.
    fn categories(&self) -> Vec<String> {
        let in_all = matches!(
            (self.group.as_str(), self.plural.as_str()),
            ("", "pods" | "services" | "replicationcontrollers")
                | (
                    "apps",
                    "deployments" | "replicasets" | "daemonsets" | "statefulsets"
                )
                | ("batch", "jobs" | "cronjobs")
        );
        if in_all {
            vec!["all".into()]
        } else {
            Vec::new()
        }
    }

    /// The real values for the built-ins (from the v1.28.7 capture); a stable made-up value of the
    /// same shape (8 bytes, base64) for anything else.
    fn storage_version_hash(&self) -> String {
        let known = match (self.group.as_str(), self.plural.as_str()) {
            ("", "configmaps") => Some("qFsyl6wFWjQ="),
            ("", "namespaces") => Some("Q3oi5N2YM8M="),
            ("", "nodes") => Some("XwShjMxG9Fs="),
            ("", "pods") => Some("xPOwRZ+Yhw8="),
            ("", "secrets") => Some("S6u1pOWzb84="),
            ("", "services") => Some("0/CO1lhkEBI="),
            ("apps", "deployments") => Some("8aSe+NMegvE="),
            ("apps", "replicasets") => Some("P1RzHs8/mWQ="),
            _ => None,
        };
        if let Some(k) = known {
            return k.into();
        }
        use base64::Engine as _;
        // FNV-1a over group/version/kind: deterministic across runs, unlike std's hasher.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in format!("{}/{}/{}", self.group, self.version, self.kind).bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        base64::engine::general_purpose::STANDARD.encode(h.to_be_bytes())
    }
}

/// What a fresh server serves: the resources the plugin's tests need.
pub(crate) fn defaults() -> Vec<ResourceDef> {
    vec![
        ResourceDef::new("", "v1", "ConfigMap", "configmaps", true).with_short_names(&["cm"]),
        ResourceDef::new("", "v1", "Namespace", "namespaces", false).with_short_names(&["ns"]),
        ResourceDef::new("", "v1", "Node", "nodes", false).with_short_names(&["no"]),
        ResourceDef::new("", "v1", "Pod", "pods", true).with_short_names(&["po"]),
        ResourceDef::new("", "v1", "Secret", "secrets", true),
        ResourceDef::new("", "v1", "Service", "services", true).with_short_names(&["svc"]),
        ResourceDef::new("apps", "v1", "Deployment", "deployments", true)
            .with_short_names(&["deploy"]),
        ResourceDef::new("apps", "v1", "ReplicaSet", "replicasets", true).with_short_names(&["rs"]),
        ResourceDef::new("example.com", "v1", "Widget", "widgets", true).with_short_names(&["wd"]),
    ]
}

/// `GET /api`: `APIVersions` (note: no `apiVersion` field, exactly like the real server).
pub(crate) fn api_versions(server_address: &str) -> Obj {
    Obj::new()
        .with("kind", "APIVersions")
        .with("versions", vec!["v1".to_string()])
        .with(
            "serverAddressByClientCIDRs",
            vec![J::O(
                Obj::new()
                    .with("clientCIDR", "0.0.0.0/0")
                    .with("serverAddress", server_address),
            )],
        )
}

/// Groups in registration order, each with its versions in registration order (the first one
/// registered is the preferred version).
fn groups(defs: &[ResourceDef]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for d in defs.iter().filter(|d| !d.group.is_empty()) {
        match out.iter_mut().find(|(g, _)| *g == d.group) {
            Some((_, versions)) if !versions.contains(&d.version) => {
                versions.push(d.version.clone())
            }
            Some(_) => {}
            None => out.push((d.group.clone(), vec![d.version.clone()])),
        }
    }
    out
}

fn group_version(group: &str, version: &str) -> Obj {
    Obj::new()
        .with("groupVersion", format!("{group}/{version}"))
        .with("version", version)
}

fn api_group(group: &str, versions: &[String]) -> Obj {
    Obj::new()
        .with("name", group)
        .with(
            "versions",
            versions
                .iter()
                .map(|v| J::O(group_version(group, v)))
                .collect::<Vec<_>>(),
        )
        .with("preferredVersion", group_version(group, &versions[0]))
}

/// `GET /apis`: `APIGroupList`.
pub(crate) fn api_group_list(defs: &[ResourceDef]) -> Obj {
    let groups: Vec<J> = groups(defs)
        .iter()
        .map(|(g, vs)| J::O(api_group(g, vs)))
        .collect();
    Obj::new()
        .with("kind", "APIGroupList")
        .with("apiVersion", "v1")
        .with("groups", groups)
}

/// `GET /apis/<group>`: `APIGroup`, or `None` for an unknown group.
pub(crate) fn api_group_doc(defs: &[ResourceDef], group: &str) -> Option<Obj> {
    let (g, vs) = groups(defs).into_iter().find(|(g, _)| g == group)?;
    let mut o = Obj::new().with("kind", "APIGroup").with("apiVersion", "v1");
    o.extend(api_group(&g, &vs));
    Some(o)
}

/// `GET /api/v1` or `/apis/<g>/<v>`: `APIResourceList`, or `None` when nothing is served there.
/// The core list has no `apiVersion`, the group ones do — a quirk of the real server kept here.
pub(crate) fn api_resource_list(defs: &[ResourceDef], group: &str, version: &str) -> Option<Obj> {
    let served: Vec<&ResourceDef> = defs
        .iter()
        .filter(|d| d.group == group && d.version == version)
        .collect();
    if served.is_empty() {
        return None;
    }
    let resources: Vec<J> = served
        .iter()
        .map(|d| {
            let mut r = Obj::new()
                .with("name", d.plural.as_str())
                .with("singularName", d.singular.as_str())
                .with("namespaced", d.namespaced)
                .with("kind", d.kind.as_str())
                .with("verbs", d.verbs());
            if !d.short_names.is_empty() {
                r.push("shortNames", d.short_names.clone());
            }
            let categories = d.categories();
            if !categories.is_empty() {
                r.push("categories", categories);
            }
            r.push("storageVersionHash", d.storage_version_hash());
            J::O(r)
        })
        .collect();
    let mut o = Obj::new().with("kind", "APIResourceList");
    if group.is_empty() {
        o.push("groupVersion", version);
    } else {
        o.push("apiVersion", "v1");
        o.push("groupVersion", format!("{group}/{version}"));
    }
    Some(o.with("resources", resources))
}

/// The aggregated-discovery media type the client asked for, if any: the first of
/// `apidiscovery.k8s.io` v2 / v2beta1 in the Accept header's order, like the server's negotiation.
pub(crate) fn aggregated_version(accept: &str) -> Option<&'static str> {
    accept.split(',').find_map(|range| {
        let params: Vec<&str> = range.split(';').map(str::trim).collect();
        let has = |p: &str| params.contains(&p);
        if !has("g=apidiscovery.k8s.io") || !has("as=APIGroupDiscoveryList") {
            return None;
        }
        if has("v=v2") {
            Some("v2")
        } else if has("v=v2beta1") {
            Some("v2beta1")
        } else {
            None
        }
    })
}

pub(crate) fn aggregated_content_type(version: &str) -> String {
    format!("application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList")
}

fn aggregated_resource(d: &ResourceDef) -> J {
    let mut r = Obj::new()
        .with("resource", d.plural.as_str())
        .with(
            "responseKind",
            Obj::new()
                .with("group", "")
                .with("version", "")
                .with("kind", d.kind.as_str()),
        )
        .with(
            "scope",
            if d.namespaced {
                "Namespaced"
            } else {
                "Cluster"
            },
        )
        .with("singularResource", d.singular.as_str())
        .with("verbs", d.verbs());
    if !d.short_names.is_empty() {
        r.push("shortNames", d.short_names.clone());
    }
    let categories = d.categories();
    if !categories.is_empty() {
        r.push("categories", categories);
    }
    J::O(r)
}

fn aggregated_group(defs: &[ResourceDef], group: &str, versions: &[String]) -> J {
    let mut meta = Obj::new();
    if !group.is_empty() {
        meta.push("name", group);
    }
    meta.push("creationTimestamp", Value::Null);
    let versions: Vec<J> = versions
        .iter()
        .map(|v| {
            let resources: Vec<J> = defs
                .iter()
                .filter(|d| d.group == group && &d.version == v)
                .map(aggregated_resource)
                .collect();
            J::O(
                Obj::new()
                    .with("version", v.as_str())
                    .with("resources", resources)
                    .with("freshness", "Current"),
            )
        })
        .collect();
    J::O(Obj::new().with("metadata", meta).with("versions", versions))
}

/// `APIGroupDiscoveryList` for `/api` (`core == true`) or `/apis`.
pub(crate) fn aggregated(defs: &[ResourceDef], core: bool, version: &str) -> Obj {
    let items: Vec<J> = if core {
        let mut versions: Vec<String> = Vec::new();
        for d in defs.iter().filter(|d| d.group.is_empty()) {
            if !versions.contains(&d.version) {
                versions.push(d.version.clone());
            }
        }
        vec![aggregated_group(defs, "", &versions)]
    } else {
        groups(defs)
            .iter()
            .map(|(g, vs)| aggregated_group(defs, g, vs))
            .collect()
    };
    Obj::new()
        .with("kind", "APIGroupDiscoveryList")
        .with("apiVersion", format!("apidiscovery.k8s.io/{version}"))
        .with("metadata", Obj::new())
        .with("items", items)
}

/// `GET /version`.
pub(crate) fn version_info() -> Obj {
    Obj::new()
        .with("major", "1")
        .with("minor", "28")
        .with("gitVersion", "v1.28.7")
        .with("gitCommit", "c8dcb00be9961ec36d141d2e4103f85f92bcf291")
        .with("gitTreeState", "clean")
        .with("buildDate", "2024-02-14T10:32:40Z")
        .with("goVersion", "go1.21.7")
        .with("compiler", "gc")
        .with("platform", "linux/amd64")
}
