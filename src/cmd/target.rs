//! What a cluster command runs against: a connection and a resolved resource, with failures
//! mapped to exit codes (unknown resource: usage; unreachable, unauthorized: cluster access).

use std::sync::{Arc, OnceLock};

use kubectl_deltas::source::cluster::{ClusterAccess, Connection, Overrides};
use kubectl_deltas::source::discovery::{CachedResolveError, DiscoveryCache, Need, ResourceInfo};
use kubectl_deltas::source::kube_api::settings_failure;

use crate::cli::AccessArgs;
use crate::cli::exit::{Exit, WithExit};

/// A resolved resource on a reachable cluster.
pub struct Target {
    pub connection: Connection,
    pub resource: ResourceInfo,
    /// `None`: every namespace, or a cluster-scoped resource.
    pub namespace: Option<String>,
    /// The discovery cache the resource was resolved with (dropped when the server answers 404
    /// for it).
    pub discovery: DiscoveryCache,
    /// The argument that named the resource (`wd`, `widgets.v1.example.com`).
    pub arg: String,
    /// The mapping comes from the discovery cache, not from a discovery of this run.
    pub from_cache: bool,
    /// What discovering again found, once a 404 for the cached mapping made it
    /// ([`super::rediscover`]).
    pub rediscovered: Outcome,
}

impl Target {
    /// How messages name what is watched: `pods in namespace "default"`, `nodes`.
    pub fn describe(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{} in namespace {ns:?}", self.resource.qualified_name()),
            None if self.resource.namespaced => {
                format!("{} in all namespaces", self.resource.qualified_name())
            }
            None => self.resource.qualified_name(),
        }
    }
}

impl ClusterAccessFromArgs for AccessArgs {
    fn cluster_access(&self) -> ClusterAccess {
        ClusterAccess {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            cluster: self.cluster.clone(),
            user: self.user.clone(),
            overrides: Overrides {
                server: self.server.clone(),
                certificate_authority: self.certificate_authority.clone(),
                insecure_skip_tls_verify: self.insecure_skip_tls_verify,
                tls_server_name: self.tls_server_name.clone(),
                token: self.token.clone(),
                client_certificate: self.client_certificate.clone(),
                client_key: self.client_key.clone(),
                impersonate: self.as_user.clone(),
                impersonate_uid: self.as_uid.clone(),
                impersonate_groups: self.as_group.clone(),
            },
            request_timeout: self.request_timeout.0,
        }
    }
}

trait ClusterAccessFromArgs {
    fn cluster_access(&self) -> ClusterAccess;
}

/// Connects, reads discovery and resolves `arg` as kubectl would, for an informer (`record`).
pub async fn resolve(access: &AccessArgs, arg: &str) -> anyhow::Result<Target> {
    let mut targets = resolve_all(access, &[arg]).await?;
    Ok(targets.remove(0))
}

/// [`resolve`] for a command that only lists (`index`): a resource without `watch`
/// (`componentstatuses`) will do.
pub async fn resolve_listable(access: &AccessArgs, arg: &str) -> anyhow::Result<Target> {
    let mut targets = resolve_all_for(access, &[arg], Need::List).await?;
    Ok(targets.remove(0))
}

/// Connects and reads discovery once (from the discovery cache when it is fresh), then resolves
/// every one of `args` (`deploy`, `rs`, `po`).
pub async fn resolve_all(
    access: &AccessArgs,
    args: &[impl AsRef<str>],
) -> anyhow::Result<Vec<Target>> {
    resolve_all_for(access, args, Need::Watch).await
}

async fn resolve_all_for(
    access: &AccessArgs,
    args: &[impl AsRef<str>],
    need: Need,
) -> anyhow::Result<Vec<Target>> {
    let connection = access
        .cluster_access()
        .connect()
        .await
        .exit_with(Exit::ClusterAccess)?;
    let cache = DiscoveryCache::new(access.cache_dir.as_deref(), &connection.cluster_url);
    let resolved = match cache.resolve_for(&connection.client, args, need).await {
        Ok(resolved) => resolved,
        Err(CachedResolveError::Resolve(error)) => return Err(error).exit_with(Exit::Usage),
        Err(CachedResolveError::Discovery(error)) => {
            let what = format!(
                "cannot read the API resources of the cluster at {}",
                connection.cluster_url
            );
            // Asking again cannot help: exit as the Reflector does when a list fails so.
            if let Some(why) = settings_failure(&error, access.request_timeout.0) {
                return Err(anyhow::Error::new(error).context(format!("{what}: {why}")))
                    .exit_with(Exit::ClusterAccess);
            }
            let context = match (unreachable(&error), &connection.proxy, &connection.context) {
                // Only the proxy is connected to: a refused connection is the proxy's.
                (Some(why), Some(proxy), _) => format!(
                    "{what} through the proxy {} ({why}): is the proxy running? (it comes from \
                     {})",
                    proxy.redacted(),
                    proxy.source
                ),
                (Some(why), None, Some(name)) => format!(
                    "{what} ({why}): is the cluster running, and is kubeconfig context {name:?} \
                     the one you meant (--context)?"
                ),
                (Some(why), None, None) => format!("{what} ({why}): is the cluster running?"),
                (None, Some(proxy), _) => format!(
                    "{what} through the proxy {} (from {})",
                    proxy.redacted(),
                    proxy.source
                ),
                (None, None, _) => what,
            };
            return Err(anyhow::Error::new(error).context(context)).exit_with(Exit::ClusterAccess);
        }
    };
    let mut targets: Vec<Target> = Vec::with_capacity(args.len());
    // One resource per argument, in their order.
    for (resource, arg) in resolved.resources.into_iter().zip(args) {
        // `po,pods`: one informer per resource, as a shared informer factory keeps.
        if targets.iter().any(|t| t.resource == resource) {
            continue;
        }
        // kubectl ignores --namespace for cluster-scoped resources, and so do we.
        let namespace = if !resource.namespaced || access.all_namespaces {
            None
        } else {
            Some(
                access
                    .namespace
                    .clone()
                    .unwrap_or_else(|| connection.default_namespace.clone()),
            )
        };
        targets.push(Target {
            connection: connection.clone(),
            resource,
            namespace,
            discovery: cache.clone(),
            arg: arg.as_ref().to_owned(),
            from_cache: resolved.from_cache,
            rediscovered: Outcome::default(),
        });
    }
    Ok(targets)
}

/// Why the cluster could not be reached at all, when that is the cause: the first thing a user
/// should check, before the HTTP client's error chain.
fn unreachable(error: &(dyn std::error::Error + 'static)) -> Option<&'static str> {
    let mut cause = Some(error);
    while let Some(e) = cause {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            match io.kind() {
                std::io::ErrorKind::ConnectionRefused => return Some("connection refused"),
                std::io::ErrorKind::TimedOut => return Some("connection timed out"),
                std::io::ErrorKind::HostUnreachable | std::io::ErrorKind::NetworkUnreachable => {
                    return Some("no route to the server");
                }
                _ => {}
            }
        }
        cause = e.source();
    }
    None
}

/// What discovering again found for a resource whose cached mapping the server answered 404.
#[derive(Debug, Clone)]
pub enum Rediscovered {
    /// Served elsewhere now (another version, or the name resolves to another group): the
    /// informer carries on with this mapping.
    Moved(ResourceInfo),
    /// Discovery still lists it where the cache had it.
    Unchanged,
    /// The argument no longer resolves: why, as the resolution says it.
    Gone(String),
    /// Discovery itself failed.
    Failed(String),
}

/// The outcome of a run's rediscovery ([`super::rediscover`]), shared with the [`Target`] that
/// reports a failure.
pub type Outcome = Arc<OnceLock<Rediscovered>>;
