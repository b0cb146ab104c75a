//! Candidates that come from the user's Kubernetes configuration: context, cluster and user
//! names from the kubeconfig, and resource and namespace names from the cluster the command line
//! points at (its `--kubeconfig`, `--context`, `--cluster` and `--user`).
//!
//! The cluster is asked on a thread of its own and waited for at most the budget
//! ([`super::CLUSTER_BUDGET`] unless [`super::BUDGET_VARIABLE`] says otherwise): an
//! unreachable server, a slow discovery or an auth plugin that blocks (an `exec` credential
//! helper) cannot hold the shell. Resource names come from the discovery cache the commands use
//! (`--cache-dir`, [`DiscoveryCache`]), so a completion after a command, or after another
//! completion, asks the server nothing; namespaces are cached for a minute (see [`super::cache`]).

use std::path::PathBuf;
use std::sync::mpsc;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams};
use kube::config::Kubeconfig;
use kubectl_deltas::source::cluster::ClusterAccess;
use kubectl_deltas::source::discovery::DiscoveryCache;

use super::line::Line;
use super::{cache, cluster_budget};

type Candidates = Vec<(String, String)>;

/// The context, cluster or user names (`which` is the flag: `context`, `cluster`, `user`) of the
/// kubeconfig the line uses, with what each one points at.
pub fn kubeconfig_names(line: &Line, which: &str) -> Candidates {
    let Some(config) = Access::of(line).kubeconfig() else {
        return Vec::new();
    };
    match which {
        "context" => config
            .contexts
            .iter()
            .map(|named| {
                let mut about = Vec::new();
                if let Some(context) = &named.context {
                    about.push(format!("cluster {}", context.cluster));
                    if let Some(namespace) = &context.namespace {
                        about.push(format!("namespace {namespace}"));
                    }
                }
                if config.current_context.as_ref() == Some(&named.name) {
                    about.push("current".to_owned());
                }
                (named.name.clone(), about.join(", "))
            })
            .collect(),
        "cluster" => config
            .clusters
            .iter()
            .map(|named| {
                let server = named.cluster.as_ref().and_then(|c| c.server.clone());
                (named.name.clone(), server.unwrap_or_default())
            })
            .collect(),
        _ => config
            .auth_infos
            .iter()
            .map(|named| (named.name.clone(), String::new()))
            .collect(),
    }
}

/// The watchable resources of the cluster, by the name kubectl shows (`pods`, `deployments.apps`),
/// with their kind: from the discovery cache when it is fresh (no client is built then), else
/// discovered and cached.
pub fn resources(line: &Line) -> Candidates {
    let cache_dir = line.values.get("cache-dir").map(PathBuf::from);
    Access::of(line)
        .within_budget(move |access| async move {
            let prepared = access.prepare().await.ok()?;
            let cache = DiscoveryCache::new(cache_dir.as_deref(), &prepared.cluster_url);
            let catalog = match cache.load() {
                Some(catalog) => catalog,
                None => cache.refresh(&prepared.connect().ok()?.client).await.ok()?,
            };
            let mut names: Candidates = Vec::new();
            for info in catalog.resources() {
                let name = info.qualified_name();
                if info.preferred && info.is_watchable() && !names.iter().any(|(n, _)| *n == name) {
                    names.push((name, info.kind.clone()));
                }
            }
            Some(names)
        })
        .unwrap_or_default()
}

/// The namespaces of the cluster, if the user may list them.
pub fn namespaces(line: &Line) -> Candidates {
    Access::of(line).ask("namespaces", |access| async move {
        let connection = access.connect().await.ok()?;
        let list = Api::<Namespace>::all(connection.client)
            .list_metadata(&ListParams::default())
            .await
            .ok()?;
        Some(
            list.items
                .into_iter()
                .filter_map(|ns| ns.metadata.name)
                .map(|name| (name, String::new()))
                .collect(),
        )
    })
}

/// How the command line reaches the cluster.
struct Access {
    kubeconfig: Option<PathBuf>,
    context: Option<String>,
    cluster: Option<String>,
    user: Option<String>,
}

impl Access {
    fn of(line: &Line) -> Self {
        let value = |long: &str| line.values.get(long).cloned();
        Access {
            kubeconfig: value("kubeconfig").map(PathBuf::from),
            context: value("context"),
            cluster: value("cluster"),
            user: value("user"),
        }
    }

    /// The kubeconfig kubectl would read: `--kubeconfig`, else `$KUBECONFIG` (merged), else
    /// `~/.kube/config`.
    fn kubeconfig(&self) -> Option<Kubeconfig> {
        match &self.kubeconfig {
            Some(path) => Kubeconfig::read_from(path).ok(),
            None => Kubeconfig::read().ok(),
        }
    }

    /// Which cluster, reached as whom: the cache key. Two command lines that resolve to the same
    /// server, user and context share their answers.
    fn key(&self) -> String {
        let config = self.kubeconfig();
        let context_name = self
            .context
            .clone()
            .or_else(|| config.as_ref()?.current_context.clone());
        let context = config.as_ref().and_then(|config| {
            let name = context_name.as_ref()?;
            let named = config.contexts.iter().find(|c| &c.name == name)?;
            named.context.clone()
        });
        let cluster = self
            .cluster
            .clone()
            .or_else(|| Some(context.as_ref()?.cluster.clone()));
        let user = self.user.clone().or_else(|| context.as_ref()?.user.clone());
        let server = config.as_ref().and_then(|config| {
            let name = cluster.as_ref()?;
            let named = config.clusters.iter().find(|c| &c.name == name)?;
            named.cluster.as_ref()?.server.clone()
        });
        let part = |s: Option<String>| s.unwrap_or_default();
        format!(
            "server={} user={} context={} cluster={}",
            part(server),
            part(user),
            part(context_name),
            part(cluster)
        )
    }

    /// A fresh cached answer for `kind`, or the cluster's answer to `fetch` if it comes within the
    /// budget (then cached), or nothing.
    fn ask<F, Fut>(self, kind: &'static str, fetch: F) -> Candidates
    where
        F: FnOnce(ClusterAccess) -> Fut + Send + 'static,
        Fut: Future<Output = Option<Candidates>>,
    {
        let key = self.key();
        if let Some(candidates) = cache::load(kind, &key) {
            return candidates;
        }
        match self.within_budget(fetch) {
            Some(candidates) => {
                cache::store(kind, &key, &candidates);
                candidates
            }
            None => Vec::new(),
        }
    }

    /// `fetch`'s answer if it comes within the budget, on a thread of its own.
    fn within_budget<F, Fut, T>(self, fetch: F) -> Option<T>
    where
        F: FnOnce(ClusterAccess) -> Fut + Send + 'static,
        Fut: Future<Output = Option<T>>,
        T: Send + 'static,
    {
        let budget = cluster_budget();
        let access = ClusterAccess {
            kubeconfig: self.kubeconfig,
            context: self.context,
            cluster: self.cluster,
            user: self.user,
            request_timeout: Some(budget),
            ..ClusterAccess::default()
        };
        let (sender, receiver) = mpsc::channel();
        let spawned = std::thread::Builder::new().spawn(move || {
            // This thread's log lines would land in the shell too.
            let _quiet =
                tracing::subscriber::set_default(tracing::subscriber::NoSubscriber::default());
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build();
            let answer = runtime.ok().and_then(|runtime| {
                runtime.block_on(async {
                    tokio::time::timeout(budget, fetch(access))
                        .await
                        .ok()
                        .flatten()
                })
            });
            let _ = sender.send(answer);
        });
        spawned.ok()?;
        // The runtime's own timeout covers async waits; this one covers a thread stuck in a
        // blocking call, which is left behind and ends with the process.
        receiver.recv_timeout(budget + budget / 5).ok().flatten()
    }
}
