//! Cluster access resolved as kubectl resolves it: `--kubeconfig`, then `$KUBECONFIG` (a list of
//! files, merged), then `~/.kube/config`, then the in-cluster service account; `--context`,
//! `--cluster` and `--user` override the kubeconfig's choices. Auth plugins (exec, OIDC, tokens,
//! client certificates) are kube's. kubectl's connection flags (`--server`, `--token`, `--as`, …)
//! override the chosen cluster and user entries as client-go's `clientcmd.ConfigOverrides` do
//! ([`Overrides`]). Requests go through the proxy kubectl would use ([`proxy`](super::proxy)).

use std::path::PathBuf;
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig, KubeconfigError};
use kube::{Client, Config};

use super::kube_api::client_without_retry;
use super::proxy::{Proxy, ProxyEnv, ProxyError, without_credentials};

/// What the user said about how to reach the cluster.
#[derive(Debug, Clone, Default)]
pub struct ClusterAccess {
    /// `--kubeconfig`: one file, used instead of `$KUBECONFIG` and `~/.kube/config`.
    pub kubeconfig: Option<PathBuf>,
    /// `--context`.
    pub context: Option<String>,
    /// `--cluster`.
    pub cluster: Option<String>,
    /// `--user`.
    pub user: Option<String>,
    /// `--server`, `--token`, `--as` and the other flags that override the kubeconfig's entries.
    pub overrides: Overrides,
    /// `--request-timeout`: bounds connecting and each response read. A watch idle for longer is
    /// closed and re-opened from its last resourceVersion, as with `kubectl get -w`.
    pub request_timeout: Option<Duration>,
}

/// kubectl's flags that override fields of the kubeconfig's chosen cluster and user, with the
/// precedence client-go v0.34.0 gives them (`tools/clientcmd/client_config.go`,
/// `DirectClientConfig.getCluster` and `getAuthInfo`): a flag replaces the field it names, and
///
/// - `--insecure-skip-tls-verify` or `--certificate-authority` replaces all three TLS trust
///   fields (CA file, CA data, skip), so that a kubeconfig's CA does not clash with
///   `--insecure-skip-tls-verify`;
/// - `--server` also replaces `tls-server-name`, with `--tls-server-name` or nothing, since the
///   kubeconfig's name belongs to the kubeconfig's server.
///
/// Where clientcmd merges a flag into a kubeconfig entry that keeps a competing field (a
/// `tokenFile` beside `--token`, `client-certificate-data` beside `--client-certificate`) and
/// the kubeconfig's then wins, the flag wins here: what was typed is what is used. With no
/// kubeconfig at all, `--server` alone is enough, as for kubectl.
#[derive(Clone, Default)]
pub struct Overrides {
    /// `--server`.
    pub server: Option<String>,
    /// `--certificate-authority`.
    pub certificate_authority: Option<PathBuf>,
    /// `--insecure-skip-tls-verify`.
    pub insecure_skip_tls_verify: bool,
    /// `--tls-server-name`.
    pub tls_server_name: Option<String>,
    /// `--token`.
    pub token: Option<String>,
    /// `--client-certificate`.
    pub client_certificate: Option<PathBuf>,
    /// `--client-key`.
    pub client_key: Option<PathBuf>,
    /// `--as`: the user to impersonate (`Impersonate-User`).
    pub impersonate: Option<String>,
    /// `--as-uid` (`Impersonate-Uid`).
    pub impersonate_uid: Option<String>,
    /// `--as-group`, repeatable (`Impersonate-Group`).
    pub impersonate_groups: Vec<String>,
}

impl std::fmt::Debug for Overrides {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Overrides")
            .field("server", &self.server)
            .field("certificate_authority", &self.certificate_authority)
            .field("insecure_skip_tls_verify", &self.insecure_skip_tls_verify)
            .field("tls_server_name", &self.tls_server_name)
            .field("token", &self.token.as_ref().map(|_| "(redacted)"))
            .field("client_certificate", &self.client_certificate)
            .field("client_key", &self.client_key)
            .field("impersonate", &self.impersonate)
            .field("impersonate_uid", &self.impersonate_uid)
            .field("impersonate_groups", &self.impersonate_groups)
            .finish()
    }
}

impl Overrides {
    fn touch_cluster(&self) -> bool {
        self.server.is_some()
            || self.certificate_authority.is_some()
            || self.insecure_skip_tls_verify
            || self.tls_server_name.is_some()
    }

    fn touch_user(&self) -> bool {
        self.token.is_some()
            || self.client_certificate.is_some()
            || self.client_key.is_some()
            || self.impersonate.is_some()
            || self.impersonate_uid.is_some()
            || !self.impersonate_groups.is_empty()
    }

    fn apply_to_cluster(&self, cluster: &mut kube::config::Cluster) {
        let path = |p: &PathBuf| p.to_string_lossy().into_owned();
        if let Some(server) = &self.server {
            cluster.server = Some(server.clone());
        }
        if self.insecure_skip_tls_verify || self.certificate_authority.is_some() {
            cluster.insecure_skip_tls_verify = Some(self.insecure_skip_tls_verify);
            cluster.certificate_authority = self.certificate_authority.as_ref().map(path);
            cluster.certificate_authority_data = None;
        }
        if self.tls_server_name.is_some() || self.server.is_some() {
            cluster.tls_server_name = self.tls_server_name.clone();
        }
    }

    fn apply_to_user(&self, user: &mut kube::config::AuthInfo) {
        let path = |p: &PathBuf| p.to_string_lossy().into_owned();
        if let Some(token) = &self.token {
            user.token = Some(token.clone().into());
            user.token_file = None;
        }
        if let Some(certificate) = &self.client_certificate {
            user.client_certificate = Some(path(certificate));
            user.client_certificate_data = None;
        }
        if let Some(key) = &self.client_key {
            user.client_key = Some(path(key));
            user.client_key_data = None;
        }
        if let Some(name) = &self.impersonate {
            user.impersonate = Some(name.clone());
        }
        if let Some(uid) = &self.impersonate_uid {
            user.impersonate_uid = Some(uid.clone());
        }
        if !self.impersonate_groups.is_empty() {
            user.impersonate_groups = Some(self.impersonate_groups.clone());
        }
    }

    /// Applies the flags to the entries the context (or `--cluster`/`--user`) chooses, creating
    /// an entry the context names (or one of its own) where there is none, as clientcmd starts
    /// from an empty entry.
    fn apply(
        &self,
        kubeconfig: &mut Kubeconfig,
        context: Option<&str>,
        options: &mut KubeConfigOptions,
    ) {
        const OWN: &str = "kubectl-deltas-flags";
        let named = |kubeconfig: &Kubeconfig,
                     pick: fn(&kube::config::Context) -> Option<String>| {
            kubeconfig
                .contexts
                .iter()
                .find(|c| Some(c.name.as_str()) == context)
                .and_then(|c| c.context.as_ref())
                .and_then(pick)
        };
        if self.touch_cluster() {
            let name = options
                .cluster
                .clone()
                .or_else(|| named(kubeconfig, |c| Some(c.cluster.clone())))
                .unwrap_or_else(|| OWN.to_owned());
            let index = match kubeconfig.clusters.iter().position(|c| c.name == name) {
                Some(index) => index,
                None => {
                    kubeconfig.clusters.push(kube::config::NamedCluster {
                        name: name.clone(),
                        cluster: None,
                        other: Default::default(),
                    });
                    kubeconfig.clusters.len() - 1
                }
            };
            let cluster = kubeconfig.clusters[index]
                .cluster
                .get_or_insert_with(Default::default);
            self.apply_to_cluster(cluster);
            options.cluster = Some(name);
        }
        if self.touch_user() {
            let name = options
                .user
                .clone()
                .or_else(|| named(kubeconfig, |c| c.user.clone()))
                .unwrap_or_else(|| OWN.to_owned());
            let index = match kubeconfig.auth_infos.iter().position(|u| u.name == name) {
                Some(index) => index,
                None => {
                    kubeconfig.auth_infos.push(kube::config::NamedAuthInfo {
                        name: name.clone(),
                        auth_info: None,
                        other: Default::default(),
                    });
                    kubeconfig.auth_infos.len() - 1
                }
            };
            let user = kubeconfig.auth_infos[index]
                .auth_info
                .get_or_insert_with(Default::default);
            self.apply_to_user(user);
            options.user = Some(name);
        }
    }
}

/// A client ready to use, and what it was built from.
#[derive(Clone)]
pub struct Connection {
    /// The client. kube's own retries are off: the Reflector owns retry and backoff policy.
    pub client: Client,
    /// The namespace of the chosen context (or the service account's), `default` if none.
    pub default_namespace: String,
    /// The API server's URL, without the credentials it may hold.
    pub cluster_url: String,
    /// The context used, if a kubeconfig was.
    pub context: Option<String>,
    /// The proxy requests go through, if any.
    pub proxy: Option<Proxy>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("cluster_url", &self.cluster_url)
            .field("context", &self.context)
            .field("proxy", &self.proxy.as_ref().map(Proxy::redacted))
            .field("default_namespace", &self.default_namespace)
            .finish_non_exhaustive()
    }
}

/// Why no client could be built. Every variant is a problem with the user's configuration.
#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    /// The kubeconfig could not be read or parsed.
    #[error("cannot load kubeconfig{}", describe_path(.path))]
    Kubeconfig {
        /// The file named by `--kubeconfig`, if any.
        path: Option<PathBuf>,
        /// kube's reason.
        #[source]
        source: KubeconfigError,
    },
    /// Neither a kubeconfig nor an in-cluster service account was found.
    #[error(
        "no kubeconfig found ({searched}) and not running in a pod ({in_cluster}); pass \
         --kubeconfig or set KUBECONFIG"
    )]
    NoConfiguration {
        /// Where kubeconfigs were looked for.
        searched: String,
        /// Why the in-cluster configuration failed.
        in_cluster: String,
    },
    /// The kubeconfig's `proxy-url` cannot be used.
    #[error(transparent)]
    Proxy(#[from] ProxyError),
    /// kube (the Kubernetes client) cannot read `NO_PROXY`, which it reads whenever
    /// `HTTPS_PROXY` is set; Go skips the entries it cannot read.
    #[error(
        "NO_PROXY {value:?} has an entry the Kubernetes client (kube) cannot read; remove it \
         (empty entries too: a doubled or trailing comma)"
    )]
    NoProxy {
        /// `NO_PROXY` (or `no_proxy`).
        value: String,
        /// kube's reason.
        #[source]
        source: KubeconfigError,
    },
    /// `--context` names a context the kubeconfig does not have.
    #[error("context {name:?} not found in the kubeconfig; available contexts: {}", list(.available))]
    UnknownContext {
        /// The context asked for.
        name: String,
        /// The contexts the kubeconfig has.
        available: Vec<String>,
    },
    /// `--cluster` names a cluster the kubeconfig does not have.
    #[error("cluster {name:?} not found in the kubeconfig; available clusters: {}", list(.available))]
    UnknownCluster {
        /// The cluster asked for.
        name: String,
        /// The clusters the kubeconfig has.
        available: Vec<String>,
    },
    /// `--user` names a user the kubeconfig does not have.
    #[error("user {name:?} not found in the kubeconfig; available users: {}", list(.available))]
    UnknownUser {
        /// The user asked for.
        name: String,
        /// The users the kubeconfig has.
        available: Vec<String>,
    },
    /// The server's URL cannot be read (client-go's `DefaultServerURL` says "host must be a URL
    /// or a host:port pair").
    #[error(
        "{from} {server:?} is not a server kubectl-deltas can reach: {why}; give a URL \
         (https://HOST:PORT) or a HOST:PORT pair"
    )]
    Server {
        /// The value, its user part redacted.
        server: String,
        /// Where it comes from: `--server` or the kubeconfig.
        from: &'static str,
        /// What is wrong with it.
        why: &'static str,
    },
    /// The configuration was read but kube could not build a client from it (bad certificate, say).
    #[error("cannot create a client for {url}")]
    Client {
        /// The API server's URL.
        url: String,
        /// kube's reason.
        #[source]
        source: kube::Error,
    },
}

fn describe_path(path: &Option<PathBuf>) -> String {
    path.as_ref()
        .map(|p| format!(" {}", p.display()))
        .unwrap_or_default()
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

/// What was found when looking for a kubeconfig.
enum Found {
    Kubeconfig(Box<Kubeconfig>),
    /// None, but `--server` is given: the flags are the whole configuration.
    Flags,
    /// None, and where it was looked for.
    Nothing(String),
}

impl ClusterAccess {
    /// Builds a client. Nothing is sent to the server yet, so an unreachable cluster shows up at the
    /// first request.
    pub async fn connect(&self) -> Result<Connection, AccessError> {
        self.prepare().await?.connect()
    }

    /// Reads the configuration a client would be built from, and no more: which server, through
    /// which proxy, as whom. Enough to find the server's discovery cache without the cost of a
    /// client (its TLS settings may read every root certificate of the system).
    pub async fn prepare(&self) -> Result<Prepared, AccessError> {
        let env = ProxyEnv::from_env();
        let found = match self.load_kubeconfig()? {
            // kubectl needs no kubeconfig when `--server` says where to go (clientcmd's
            // DeferredLoadingClientConfig tries the in-cluster configuration only when the
            // merged configuration is empty).
            Found::Nothing(_) if self.overrides.server.is_some() => Found::Flags,
            found => found,
        };
        let (mut config, context, proxy) = match found {
            Found::Kubeconfig(_) | Found::Flags => {
                let from_flags = matches!(found, Found::Flags);
                let mut kubeconfig = match found {
                    Found::Kubeconfig(kubeconfig) => *kubeconfig,
                    _ => Kubeconfig::default(),
                };
                self.check_names(&kubeconfig)?;
                let context = self.context.clone().or(kubeconfig.current_context.clone());
                let mut options = KubeConfigOptions {
                    context: self.context.clone(),
                    cluster: self.cluster.clone(),
                    user: self.user.clone(),
                };
                self.overrides
                    .apply(&mut kubeconfig, context.as_deref(), &mut options);
                if from_flags {
                    // kube needs a context to start from; this one names the entries the flags
                    // filled.
                    kubeconfig.contexts.push(kube::config::NamedContext {
                        name: "kubectl-deltas-flags".into(),
                        context: Some(kube::config::Context {
                            cluster: options.cluster.clone().unwrap_or_default(),
                            user: options.user.clone(),
                            ..Default::default()
                        }),
                        other: Default::default(),
                    });
                    options.context = Some("kubectl-deltas-flags".into());
                }
                let client_certificate = chosen_user(&kubeconfig, context.as_deref(), &options)
                    .is_some_and(|u| {
                        u.client_certificate.is_some() || u.client_certificate_data.is_some()
                    });
                let mut cluster = chosen_cluster(&mut kubeconfig, context.as_deref(), &options);
                if let Some(cluster) = cluster.as_mut() {
                    self.read_server(cluster, client_certificate)?;
                }
                let proxy_url = cluster.as_mut().and_then(|c| c.proxy_url.take());
                if let Some(cluster) = cluster
                    && env.https_proxy.is_some()
                {
                    // kube reads HTTPS_PROXY itself unless the cluster has a proxy-url, and fails
                    // on values Go ignores; its choice is replaced below, so give it one it reads.
                    cluster.proxy_url = Some("http://127.0.0.1".into());
                }
                let config = Config::from_custom_kubeconfig(kubeconfig, &options)
                    .await
                    .map_err(|source| match source {
                        KubeconfigError::ParseNoProxy(_) => AccessError::NoProxy {
                            value: env.no_proxy.clone().unwrap_or_default(),
                            source,
                        },
                        source => AccessError::Kubeconfig {
                            path: self.kubeconfig.clone(),
                            source,
                        },
                    })?;
                let proxy = env.proxy_for(&config.cluster_url, proxy_url.as_deref())?;
                (config, context, proxy)
            }
            Found::Nothing(searched) => {
                let mut config = Config::incluster().map_err(|e| AccessError::NoConfiguration {
                    searched,
                    in_cluster: e.to_string(),
                })?;
                // In a pod, as in clientcmd's inClusterClientConfig: the service account's
                // server and CA, the flags' identity (`--server` was handled above).
                self.overrides.apply_to_user(&mut config.auth_info);
                if self.overrides.insecure_skip_tls_verify {
                    config.accept_invalid_certs = true;
                }
                if let Some(name) = &self.overrides.tls_server_name {
                    config.tls_server_name = Some(name.clone());
                }
                let proxy = env.proxy_for(&config.cluster_url, None)?;
                (config, None, proxy)
            }
        };
        if let Some(proxy) = &proxy {
            tracing::debug!(proxy = %proxy.redacted(), from = %proxy.source, "connecting through a proxy");
            let has_credentials = proxy
                .url
                .authority()
                .is_some_and(|a| a.as_str().contains('@'));
            if proxy.url.scheme_str() == Some("socks5") && has_credentials {
                tracing::warn!(
                    "the SOCKS5 proxy {} comes with a user name and password, which kube (the \
                     Kubernetes client) cannot send; connecting without them",
                    proxy.redacted()
                );
            }
        }
        config.proxy_url = proxy.as_ref().map(|p| p.url.clone());
        config.cluster_url = without_credentials(&config.cluster_url);
        if let Some(timeout) = self.request_timeout {
            config.connect_timeout = Some(timeout);
            config.read_timeout = Some(timeout);
            config.reset_reader_on_write = true;
        }
        Ok(Prepared {
            cluster_url: config.cluster_url.to_string(),
            config,
            context,
            proxy,
        })
    }

    /// The cluster's `server` as client-go reads it ([`server_url`]), or why it cannot be.
    fn read_server(
        &self,
        cluster: &mut kube::config::Cluster,
        client_certificate: bool,
    ) -> Result<(), AccessError> {
        let Some(server) = &cluster.server else {
            return Ok(());
        };
        let tls = cluster.certificate_authority.is_some()
            || cluster.certificate_authority_data.is_some()
            || cluster.insecure_skip_tls_verify == Some(true)
            || client_certificate;
        match server_url(server, tls) {
            Ok(url) => {
                cluster.server = Some(url);
                Ok(())
            }
            Err(why) => Err(AccessError::Server {
                server: super::proxy::redact(server),
                from: if self.overrides.server.is_some() {
                    "--server"
                } else {
                    "the kubeconfig's server"
                },
                why,
            }),
        }
    }

    /// The kubeconfig to use, as client-go's `ClientConfigLoadingRules.Load` finds it:
    /// `--kubeconfig` (which must exist), else the files of `$KUBECONFIG` merged (missing ones
    /// skipped), else `~/.kube/config`. [`Found::Nothing`] when there is none, and the in-cluster
    /// configuration should be tried.
    fn load_kubeconfig(&self) -> Result<Found, AccessError> {
        if let Some(path) = &self.kubeconfig {
            return Kubeconfig::read_from(path)
                .map(|k| Found::Kubeconfig(Box::new(k)))
                .map_err(|source| AccessError::Kubeconfig {
                    path: Some(path.clone()),
                    source,
                });
        }
        let listed: Vec<PathBuf> = std::env::var_os("KUBECONFIG")
            .map(|value| {
                std::env::split_paths(&value)
                    .filter(|p| !p.as_os_str().is_empty())
                    .collect()
            })
            .unwrap_or_default();
        if !listed.is_empty() {
            return merge_files(listed);
        }
        match Kubeconfig::read() {
            Ok(kubeconfig) => Ok(Found::Kubeconfig(Box::new(kubeconfig))),
            Err(KubeconfigError::FindPath) => Ok(Found::Nothing(
                "$KUBECONFIG unset and no home directory".into(),
            )),
            Err(KubeconfigError::ReadConfig(e, _)) if e.kind() == std::io::ErrorKind::NotFound => {
                Ok(Found::Nothing(
                    "$KUBECONFIG unset and ~/.kube/config missing".into(),
                ))
            }
            Err(source) => Err(AccessError::Kubeconfig { path: None, source }),
        }
    }

    /// kube reports an unknown context as a bare "failed to load current context"; list the choices.
    fn check_names(&self, kubeconfig: &Kubeconfig) -> Result<(), AccessError> {
        let contexts: Vec<String> = kubeconfig.contexts.iter().map(|c| c.name.clone()).collect();
        let clusters: Vec<String> = kubeconfig.clusters.iter().map(|c| c.name.clone()).collect();
        let users: Vec<String> = kubeconfig
            .auth_infos
            .iter()
            .map(|u| u.name.clone())
            .collect();
        let missing = |name: &Option<String>, known: &[String]| {
            name.as_ref().filter(|n| !known.contains(n)).cloned()
        };
        if let Some(name) = missing(&self.context, &contexts) {
            return Err(AccessError::UnknownContext {
                name,
                available: contexts,
            });
        }
        if let Some(name) = missing(&self.cluster, &clusters) {
            return Err(AccessError::UnknownCluster {
                name,
                available: clusters,
            });
        }
        if let Some(name) = missing(&self.user, &users) {
            return Err(AccessError::UnknownUser {
                name,
                available: users,
            });
        }
        Ok(())
    }
}

/// The configuration of a client not built yet ([`ClusterAccess::prepare`]).
pub struct Prepared {
    config: Config,
    /// The API server's URL, without the credentials it may hold.
    pub cluster_url: String,
    /// The context used, if a kubeconfig was.
    pub context: Option<String>,
    /// The proxy requests go through, if any.
    pub proxy: Option<Proxy>,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("cluster_url", &self.cluster_url)
            .field("context", &self.context)
            .finish_non_exhaustive()
    }
}

impl Prepared {
    /// Builds the client.
    pub fn connect(self) -> Result<Connection, AccessError> {
        let Prepared {
            mut config,
            cluster_url,
            context,
            proxy,
        } = self;
        without_system_roots_over_http(&mut config);
        let default_namespace = config.default_namespace.clone();
        let client = client_without_retry(config).map_err(|source| AccessError::Client {
            url: cluster_url.clone(),
            source,
        })?;
        Ok(Connection {
            client,
            default_namespace,
            cluster_url,
            context,
            proxy,
        })
    }
}

/// kube builds TLS settings for every client, and without a CA in the kubeconfig they trust the
/// system's roots, which rustls-platform-verifier loads at once: every file of `/etc/ssl/certs`,
/// milliseconds before the first request. A plain `http://` server (a local test cluster, a
/// `kubectl proxy`) reached directly or through a plain proxy makes no TLS connection at all, so
/// it gets an empty set of roots instead.
fn without_system_roots_over_http(config: &mut Config) {
    let plain = |uri: &http::Uri| uri.scheme_str() == Some("http");
    if plain(&config.cluster_url)
        && config
            .proxy_url
            .as_ref()
            .is_none_or(|p| p.scheme_str() != Some("https"))
        && config.root_cert.is_none()
    {
        config.root_cert = Some(Vec::new());
    }
}

/// The files of `$KUBECONFIG` merged as clientcmd merges them: each read once, in order, missing
/// ones skipped; the first file to define a cluster, context or user (or `current-context`)
/// wins. All missing is like no kubeconfig at all.
fn merge_files(paths: Vec<PathBuf>) -> Result<Found, AccessError> {
    let mut merged: Option<Kubeconfig> = None;
    let mut missing: Vec<String> = Vec::new();
    let mut seen: Vec<&PathBuf> = Vec::new();
    for path in &paths {
        if seen.contains(&path) {
            continue;
        }
        seen.push(path);
        let failed = |source| AccessError::Kubeconfig {
            path: Some(path.clone()),
            source,
        };
        match Kubeconfig::read_from(path) {
            Ok(next) => {
                merged = Some(match merged {
                    Some(first) => first.merge(next).map_err(failed)?,
                    None => next,
                });
            }
            Err(KubeconfigError::ReadConfig(e, _)) if e.kind() == std::io::ErrorKind::NotFound => {
                tracing::debug!(path = %path.display(), "skipping a missing KUBECONFIG file");
                missing.push(path.display().to_string());
            }
            Err(source) => return Err(failed(source)),
        }
    }
    Ok(match merged {
        Some(kubeconfig) => Found::Kubeconfig(Box::new(kubeconfig)),
        None => Found::Nothing(format!(
            "none of the KUBECONFIG files exists: {}",
            missing.join(", ")
        )),
    })
}

/// A cluster's `server` as client-go reads it (`rest.DefaultServerURL`, called by
/// `DefaultServerUrlFor` in `rest/url_utils.go`): a URL with a scheme and a host stays as it is;
/// anything else is a host or `host:port`, given `https://` when `tls` (a CA, a client
/// certificate or `insecure-skip-tls-verify` is configured: `defaultTLS` there), else `http://`,
/// and may then have no path. Unlike Go, which dials the local host for `:6443`, a server with no
/// host is refused. kube panics on a URL without a scheme: nothing else reaches it.
fn server_url(server: &str, tls: bool) -> Result<String, &'static str> {
    let usable = |uri: &http::Uri| {
        matches!(uri.scheme_str(), Some("http" | "https"))
            && uri.host().is_some_and(|host| !host.is_empty())
    };
    if server.trim().is_empty() {
        return Err("it is empty");
    }
    if server.contains("://") {
        return match server.parse::<http::Uri>() {
            Ok(uri) if usable(&uri) => Ok(server.to_owned()),
            Ok(uri) if uri.host().is_some_and(|host| !host.is_empty()) => {
                Err("its scheme is neither https nor http")
            }
            Ok(_) => Err("it has no host"),
            Err(_) => Err("it is not a URL"),
        };
    }
    let scheme = if tls { "https" } else { "http" };
    let url = format!("{scheme}://{server}");
    match url.parse::<http::Uri>() {
        Ok(uri) if usable(&uri) && matches!(uri.path(), "" | "/") && uri.query().is_none() => {
            Ok(url)
        }
        Ok(uri) if usable(&uri) => Err("a host:port without a scheme cannot have a path"),
        Ok(_) => Err("it has no host"),
        Err(_) => Err("it is neither a URL nor a host:port pair"),
    }
}

/// The user entry the context (or `--user`) names, if any.
fn chosen_user<'k>(
    kubeconfig: &'k Kubeconfig,
    context: Option<&str>,
    options: &KubeConfigOptions,
) -> Option<&'k kube::config::AuthInfo> {
    let name = match &options.user {
        Some(name) => name.clone(),
        None => kubeconfig
            .contexts
            .iter()
            .find(|c| Some(c.name.as_str()) == context)?
            .context
            .as_ref()?
            .user
            .clone()?,
    };
    kubeconfig
        .auth_infos
        .iter()
        .find(|u| u.name == name)?
        .auth_info
        .as_ref()
}

/// The cluster entry the context (or `--cluster`) names; `None` if there is none, which kube
/// reports.
fn chosen_cluster<'k>(
    kubeconfig: &'k mut Kubeconfig,
    context: Option<&str>,
    options: &KubeConfigOptions,
) -> Option<&'k mut kube::config::Cluster> {
    let name = match &options.cluster {
        Some(name) => name.clone(),
        None => kubeconfig
            .contexts
            .iter()
            .find(|c| Some(c.name.as_str()) == context)?
            .context
            .as_ref()?
            .cluster
            .clone(),
    };
    kubeconfig
        .clusters
        .iter_mut()
        .find(|c| c.name == name)?
        .cluster
        .as_mut()
}

#[cfg(test)]
mod tests {
    use super::*;

    const KUBECONFIG: &str = r#"
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster: { server: "http://127.0.0.1:6443" }
- name: prod-cluster
  cluster: { server: "http://127.0.0.1:7443" }
contexts:
- name: dev
  context: { cluster: dev-cluster, user: dev-user, namespace: team-a }
- name: prod
  context: { cluster: prod-cluster, user: dev-user }
users:
- name: dev-user
  user: { token: secret }
"#;

    fn access_to(text: &str) -> (tempfile::TempDir, ClusterAccess) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config");
        std::fs::write(&path, text).unwrap();
        let access = ClusterAccess {
            kubeconfig: Some(path),
            ..ClusterAccess::default()
        };
        (dir, access)
    }

    #[tokio::test]
    async fn the_current_context_gives_the_server_and_namespace() {
        let (_dir, access) = access_to(KUBECONFIG);
        let conn = access.connect().await.unwrap();
        assert_eq!(conn.cluster_url, "http://127.0.0.1:6443/");
        assert_eq!(conn.default_namespace, "team-a");
        assert_eq!(conn.context.as_deref(), Some("dev"));
    }

    #[tokio::test]
    async fn flags_override_the_context_and_cluster() {
        let (_dir, mut access) = access_to(KUBECONFIG);
        access.context = Some("prod".into());
        let conn = access.connect().await.unwrap();
        assert_eq!(conn.cluster_url, "http://127.0.0.1:7443/");
        assert_eq!(conn.default_namespace, "default");

        access.context = None;
        access.cluster = Some("prod-cluster".into());
        let conn = access.connect().await.unwrap();
        assert_eq!(conn.cluster_url, "http://127.0.0.1:7443/");
    }

    #[test]
    fn a_server_is_read_as_client_gos_default_server_url_reads_it() {
        let ok = |server: &str, tls: bool| server_url(server, tls).unwrap();
        assert_eq!(ok("127.0.0.1:6443", true), "https://127.0.0.1:6443");
        assert_eq!(ok("127.0.0.1:6443", false), "http://127.0.0.1:6443");
        assert_eq!(ok("kube.example:6443/", true), "https://kube.example:6443/");
        assert_eq!(ok("[::1]:6443", true), "https://[::1]:6443");
        // A URL with a scheme stays as it is, a path prefix (a proxy's) included.
        assert_eq!(ok("http://h:1/prefix", true), "http://h:1/prefix");
        assert_eq!(ok("https://u:p@h:1", false), "https://u:p@h:1");
        let refused = |server: &str| server_url(server, true).unwrap_err();
        assert_eq!(refused(""), "it is empty");
        assert_eq!(refused(":6443"), "it has no host");
        assert_eq!(refused("https://[::1"), "it is not a URL");
        assert_eq!(refused("ftp://h"), "its scheme is neither https nor http");
        assert_eq!(
            refused("h:6443/api"),
            "a host:port without a scheme cannot have a path"
        );
        assert_eq!(
            refused("h:6443?x=1"),
            "a host:port without a scheme cannot have a path"
        );
    }

    #[tokio::test]
    async fn unknown_names_list_the_available_ones() {
        let (_dir, mut access) = access_to(KUBECONFIG);
        access.context = Some("staging".into());
        let err = access.connect().await.unwrap_err().to_string();
        assert_eq!(
            err,
            r#"context "staging" not found in the kubeconfig; available contexts: dev, prod"#
        );
        access.context = None;
        access.user = Some("root".into());
        let err = access.connect().await.unwrap_err().to_string();
        assert!(err.contains("available users: dev-user"), "{err}");
    }

    #[tokio::test]
    async fn connection_flags_override_the_chosen_entries_as_clientcmd_does() {
        let (_dir, mut access) = access_to(
            r#"
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster:
    server: "https://127.0.0.1:6443"
    certificate-authority-data: bm90IGEgcmVhbCBDQQ==
    tls-server-name: kube.internal
contexts:
- name: dev
  context: { cluster: dev-cluster, user: dev-user }
users:
- name: dev-user
  user: { token: from-kubeconfig, tokenFile: /nonexistent/token }
"#,
        );
        access.overrides = Overrides {
            server: Some("https://127.0.0.1:7443".into()),
            insecure_skip_tls_verify: true,
            token: Some("from-flag".into()),
            impersonate: Some("system:serviceaccount:team:builder".into()),
            impersonate_uid: Some("42".into()),
            impersonate_groups: vec!["builders".into()],
            ..Overrides::default()
        };
        let prepared = access.prepare().await.unwrap();
        let config = &prepared.config;
        assert_eq!(prepared.cluster_url, "https://127.0.0.1:7443/");
        // --insecure-skip-tls-verify replaces the kubeconfig's CA; --server drops its
        // tls-server-name (clientcmd's getCluster).
        assert!(config.accept_invalid_certs);
        assert_eq!(config.root_cert, None);
        assert_eq!(config.tls_server_name, None);
        let user = &config.auth_info;
        // The token itself is checked through the binary (tests/it/connection_flags.rs); here,
        // that the kubeconfig's tokenFile no longer competes with it.
        assert_eq!(user.token_file, None);
        assert_eq!(
            user.impersonate.as_deref(),
            Some("system:serviceaccount:team:builder")
        );
        assert_eq!(user.impersonate_uid.as_deref(), Some("42"));
        assert_eq!(user.impersonate_groups, Some(vec!["builders".to_owned()]));
        assert!(
            !format!("{access:?}").contains("from-flag"),
            "the token is redacted"
        );
    }

    #[test]
    fn system_roots_are_skipped_only_where_no_tls_is_made() {
        let roots = |server: &str, proxy: Option<&str>| {
            let mut config = Config::new(server.parse().unwrap());
            config.proxy_url = proxy.map(|p| p.parse().unwrap());
            without_system_roots_over_http(&mut config);
            config.root_cert.is_some()
        };
        assert!(roots("http://127.0.0.1:8001", None));
        assert!(roots(
            "http://127.0.0.1:8001",
            Some("http://127.0.0.1:3128")
        ));
        assert!(!roots("https://127.0.0.1:6443", None));
        assert!(!roots(
            "http://127.0.0.1:8001",
            Some("https://127.0.0.1:3128")
        ));
        let mut with_ca = Config::new("http://127.0.0.1:8001".parse().unwrap());
        with_ca.root_cert = Some(vec![b"a CA".to_vec()]);
        without_system_roots_over_http(&mut with_ca);
        assert_eq!(with_ca.root_cert, Some(vec![b"a CA".to_vec()]));
    }

    #[tokio::test]
    async fn a_missing_or_malformed_kubeconfig_names_the_file() {
        let (dir, mut access) = access_to("clusters: [this is not: a kubeconfig");
        let err = access.connect().await.unwrap_err().to_string();
        assert!(err.starts_with("cannot load kubeconfig "), "{err}");
        assert!(err.contains(&dir.path().display().to_string()), "{err}");

        access.kubeconfig = Some(dir.path().join("absent"));
        let err = access.connect().await.unwrap_err();
        assert!(err.to_string().contains("absent"), "{err}");
        let cause = std::error::Error::source(&err).expect("kube's reason is the source");
        assert!(cause.to_string().contains("No such file"), "{cause}");
    }
}
