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
    fetch::split(parse::<APIGroupDiscoveryList>(fixture!("discovery-aggregated-apis.json")).items).1
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
    let ResolveError::NotInGroup { suggestions, .. } = catalog.resolve("deploy.v1").unwrap_err()
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
        !looks_like_version("apps") && !looks_like_version("v1beta") && !looks_like_version("v")
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
    let ResolveError::Unknown { suggestions, .. } = legacy().resolve("nods").unwrap_err() else {
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
