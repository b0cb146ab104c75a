//! The discovery cache: what discovery found, kept on disk per API server, so that a warm start
//! resolves its resources without asking the server anything.
//!
//! kubectl keeps discovery under `<cache-dir>/discovery/<host_port>/` (`--cache-dir`, by default
//! `$KUBECACHEDIR`, else `~/.kube/cache`: cli-runtime's `getDefaultCacheDir`; the directory name
//! from its `computeDiscoverCacheDir`), as `servergroups.json` and one
//! `<group>/<version>/serverresources.json` per group version, trusted for 6 hours
//! (`ConfigFlags.ToDiscoveryClient`, client-go `discovery/cached/disk`). This cache lives in the
//! same directory, so that users find and clear both together, in one file of its own
//! ([`FILE_NAME`]) holding the catalog as resolution reads it: one read, no per-group files.
//! kubectl's own files are neither read nor written: their format is client-go's.
//!
//! As kubectl's, it is trusted for [`TTL`] after it was written; a resource it cannot resolve
//! makes [`DiscoveryCache::resolve_watchable`] discover once more before reporting it (and
//! [`Resolved::from_cache`] lets a command do the same when the server answers 404 for a cached
//! mapping); and
//! it is written to a temporary file in the same directory, then renamed over the old one, so a
//! process reading it meanwhile gets the old file or the new one, never half of one. A file that
//! is not a regular file (a FIFO, `/dev/zero`), is larger than [`MAX_SIZE`], cannot be read or
//! parsed, has another format, or was written for another server (kubectl's
//! directory names collide for `http://` and `https://` of one host) counts as missing and is
//! rewritten; a directory that cannot be written is logged with -vv, never an error.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::{DiscoveryError, Need, ResolveError, ResourceCatalog, ResourceInfo};
use crate::source::cache_file;

/// kubectl's: `ToDiscoveryClient` passes 6 hours to `NewCachedDiscoveryClientForConfig`.
pub const TTL: Duration = Duration::from_secs(6 * 60 * 60);

/// The cache file's name in the server's directory. Not a name kubectl uses, nor one an API group
/// can have (an underscore is not allowed in a DNS subdomain), so it cannot meet a group's
/// directory there.
pub const FILE_NAME: &str = "kubectl-deltas_catalog.json";

/// The largest cache file read: a catalog of thousands of resources is a few MB; anything larger
/// is not one this program wrote, and counts as a miss.
const MAX_SIZE: u64 = 64 << 20;

/// Bumped whenever the file's content changes meaning; a file of another format is a miss.
const FORMAT: u32 = 1;

/// The cache of one API server's discovery.
#[derive(Debug, Clone)]
pub struct DiscoveryCache {
    /// `None`: no cache (no directory to put it in).
    file: Option<PathBuf>,
    /// The server's URL, stored in the file and checked on reading.
    server: String,
}

/// The file as written.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Written<'a> {
    format: u32,
    server: &'a str,
    /// Seconds since the Unix epoch.
    fetched_at: u64,
    preferred_versions: &'a [(String, String)],
    resources: &'a [ResourceInfo],
}

/// The file as read.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Read {
    format: u32,
    server: String,
    fetched_at: u64,
    preferred_versions: Vec<(String, String)>,
    resources: Vec<ResourceInfo>,
}

/// Why [`DiscoveryCache::resolve_watchable`] could not resolve every argument.
#[derive(Debug, thiserror::Error)]
pub enum CachedResolveError {
    /// Discovery failed.
    #[error(transparent)]
    Discovery(#[from] DiscoveryError),
    /// An argument does not name one watchable resource, even after a fresh discovery.
    #[error(transparent)]
    Resolve(#[from] ResolveError),
}

impl DiscoveryCache {
    /// kubectl's default cache directory: `$KUBECACHEDIR` if set, else `~/.kube/cache`; `None`
    /// without a home directory.
    pub fn default_dir() -> Option<PathBuf> {
        match std::env::var_os("KUBECACHEDIR") {
            Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
            _ => Some(dirs::home_dir()?.join(".kube").join("cache")),
        }
    }

    /// The cache of the server at `server_url` in `cache_dir` (kubectl's `--cache-dir`; `None`
    /// or empty: [`Self::default_dir`]).
    pub fn new(cache_dir: Option<&Path>, server_url: &str) -> Self {
        let dir = match cache_dir {
            Some(dir) if !dir.as_os_str().is_empty() => Some(dir.to_owned()),
            _ => Self::default_dir(),
        };
        DiscoveryCache {
            file: dir.map(|dir| {
                dir.join("discovery")
                    .join(server_dir(server_url))
                    .join(FILE_NAME)
            }),
            server: server_url.to_owned(),
        }
    }

    /// The cache file, if there is a directory for it.
    pub fn path(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// The cached catalog, if there is one for this server younger than `TTL`.
    pub fn load(&self) -> Option<ResourceCatalog> {
        let path = self.file.as_ref()?;
        let bytes = match cache_file::read_regular(path, MAX_SIZE) {
            Ok(bytes) => bytes,
            Err(error) => {
                if !error.is_not_found() {
                    tracing::debug!(path = %path.display(), %error, "cannot read the discovery cache");
                }
                return None;
            }
        };
        let file: Read = match serde_json::from_slice(&bytes) {
            Ok(file) => file,
            Err(error) => {
                tracing::debug!(path = %path.display(), %error, "ignoring an unreadable discovery cache");
                return None;
            }
        };
        if file.format != FORMAT || file.server != self.server {
            tracing::debug!(path = %path.display(), "ignoring a discovery cache of another format or server");
            return None;
        }
        // A time far in the future is as suspect as an old one.
        let age = Duration::from_secs(now().abs_diff(file.fetched_at));
        if age >= TTL {
            tracing::debug!(path = %path.display(), "the discovery cache is stale");
            return None;
        }
        tracing::debug!(path = %path.display(), age_secs = age.as_secs(), "discovery from the cache");
        Some(ResourceCatalog {
            resources: file.resources,
            preferred_versions: file.preferred_versions,
            unavailable: Vec::new(),
        })
    }

    /// Caches `catalog`. Failing to is not an error: the next run discovers again.
    pub fn store(&self, catalog: &ResourceCatalog) {
        let Some(path) = &self.file else {
            return;
        };
        let written = Written {
            format: FORMAT,
            server: &self.server,
            fetched_at: now(),
            preferred_versions: &catalog.preferred_versions,
            resources: &catalog.resources,
        };
        let stored = serde_json::to_vec(&written)
            .map_err(std::io::Error::other)
            .and_then(|bytes| cache_file::replace(path, &bytes));
        if let Err(error) = stored {
            tracing::debug!(path = %path.display(), %error, "cannot write the discovery cache");
        }
    }

    /// Drops the cached catalog, so that the next command discovers afresh: a request for a
    /// resource it mapped was answered 404 (a CRD deleted, or no longer served at that version).
    pub fn forget(&self) {
        let Some(path) = &self.file else {
            return;
        };
        match std::fs::remove_file(path) {
            Ok(()) => tracing::debug!(path = %path.display(), "discovery cache dropped"),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => {
                tracing::debug!(path = %path.display(), %error, "cannot drop the discovery cache");
            }
        }
    }

    /// Discovers afresh and caches what was found.
    pub async fn refresh(&self, client: &kube::Client) -> Result<ResourceCatalog, DiscoveryError> {
        let catalog = ResourceCatalog::discover(client).await?;
        self.store(&catalog);
        Ok(catalog)
    }

    /// The catalog: the cached one if fresh, else a discovered one (then cached). The flag says
    /// whether it came from the cache.
    pub async fn catalog(
        &self,
        client: &kube::Client,
    ) -> Result<(ResourceCatalog, bool), DiscoveryError> {
        match self.load() {
            Some(catalog) => Ok((catalog, true)),
            None => Ok((self.refresh(client).await?, false)),
        }
    }

    /// Resolves each of `args` as [`ResourceCatalog::resolve_watchable`] does, against the
    /// cached catalog when it is fresh. An argument the cached catalog cannot resolve (a CRD
    /// installed since, one removed since that made a short name ambiguous) makes it discover
    /// once more and resolve every argument again, as kubectl's `DeferredDiscoveryRESTMapper`
    /// (client-go `restmapper/discovery.go`, `KindFor`) does on any error of a cached mapping;
    /// only then is the error reported.
    pub async fn resolve_watchable(
        &self,
        client: &kube::Client,
        args: &[impl AsRef<str>],
    ) -> Result<Resolved, CachedResolveError> {
        self.resolve_for(client, args, Need::Watch).await
    }

    /// [`Self::resolve_watchable`] for what `need` asks of the resources.
    pub async fn resolve_for(
        &self,
        client: &kube::Client,
        args: &[impl AsRef<str>],
        need: Need,
    ) -> Result<Resolved, CachedResolveError> {
        let (catalog, cached) = self.catalog(client).await?;
        match resolve_each(&catalog, args, need) {
            Err(error) if cached => {
                tracing::debug!(%error, "not resolved by the discovery cache; discovering again");
                let catalog = self.refresh(client).await?;
                Ok(Resolved {
                    resources: resolve_each(&catalog, args, need)?,
                    from_cache: false,
                })
            }
            resolved => Ok(Resolved {
                resources: resolved?,
                from_cache: cached,
            }),
        }
    }
}

/// What [`DiscoveryCache::resolve_for`] resolved.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// One resource per argument, in their order.
    pub resources: Vec<ResourceInfo>,
    /// The mappings come from the cache, not from a discovery of this run: the server may have
    /// changed since (a 404 for one of them is worth a discovery, see [`DiscoveryCache::refresh`]).
    pub from_cache: bool,
}

fn resolve_each(
    catalog: &ResourceCatalog,
    args: &[impl AsRef<str>],
    need: Need,
) -> Result<Vec<ResourceInfo>, ResolveError> {
    args.iter()
        .map(|arg| catalog.resolve_for(arg.as_ref(), need))
        .collect()
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// kubectl's `computeDiscoverCacheDir`: the URL without its scheme, every character other than a
/// letter, digit, `_`, `/`, `.`, `(` or `)` replaced by `_` (`https://10.0.0.1:6443` →
/// `10.0.0.1_6443`). A path in the URL makes subdirectories, as with kubectl; `.` and `..`
/// components are dropped, so the result stays inside the cache directory.
fn server_dir(url: &str) -> PathBuf {
    let schemeless = url.replacen("https://", "", 1).replacen("http://", "", 1);
    let safe: String = schemeless
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_/.()".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    safe.split('/')
        .filter(|part| !part.is_empty() && *part != "." && *part != "..")
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_directories_are_named_as_kubectl_names_them() {
        assert_eq!(
            server_dir("https://10.0.0.1:6443/"),
            PathBuf::from("10.0.0.1_6443")
        );
        assert_eq!(
            server_dir("http://127.0.0.1:8080"),
            PathBuf::from("127.0.0.1_8080")
        );
        assert_eq!(
            server_dir("https://rancher.example.com/k8s/clusters/c-m-x1"),
            PathBuf::from("rancher.example.com/k8s/clusters/c_m_x1")
        );
        assert_eq!(
            server_dir("https://[::1]:6443"),
            PathBuf::from("___1__6443")
        );
        assert_eq!(server_dir("https://h/../../etc"), PathBuf::from("h/etc"));
    }

    fn catalog() -> ResourceCatalog {
        let info = ResourceInfo {
            group: "example.com".into(),
            version: "v1".into(),
            kind: "Widget".into(),
            plural: "widgets".into(),
            singular: "widget".into(),
            short_names: vec!["wd".into()],
            categories: vec!["all".into()],
            namespaced: true,
            verbs: vec!["list".into(), "watch".into()],
            preferred: true,
        };
        ResourceCatalog {
            resources: vec![info],
            preferred_versions: vec![("example.com".into(), "v1".into())],
            unavailable: vec!["metrics.k8s.io/v1beta1".into()],
        }
    }

    #[test]
    fn a_stored_catalog_loads_back_for_its_server_only() {
        let dir = tempfile::tempdir().unwrap();
        let cache = DiscoveryCache::new(Some(dir.path()), "https://10.0.0.1:6443/");
        assert!(cache.load().is_none());
        cache.store(&catalog());
        let path = dir.path().join("discovery/10.0.0.1_6443").join(FILE_NAME);
        assert_eq!(cache.path(), Some(path.as_path()));
        let loaded = cache.load().unwrap();
        assert_eq!(loaded.resources(), catalog().resources());
        assert_eq!(loaded.preferred_version("example.com"), Some("v1"));
        assert_eq!(loaded.resolve("wd").unwrap().plural, "widgets");

        // Same directory name, another server.
        let other = DiscoveryCache::new(Some(dir.path()), "http://10.0.0.1:6443/");
        assert_eq!(other.path(), cache.path());
        assert!(other.load().is_none());
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [FILE_NAME]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| p.metadata().unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path), 0o660);
            assert_eq!(mode(path.parent().unwrap()), 0o750);
        }
    }

    #[test]
    fn stale_corrupt_and_foreign_files_are_misses() {
        let dir = tempfile::tempdir().unwrap();
        let cache = DiscoveryCache::new(Some(dir.path()), "https://h:1/");
        cache.store(&catalog());
        let path = cache.path().unwrap().to_owned();
        let rewrite = |edit: &dyn Fn(&mut serde_json::Value)| {
            let mut value: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            edit(&mut value);
            std::fs::write(&path, serde_json::to_vec(&value).unwrap()).unwrap();
        };
        assert!(cache.load().is_some());
        rewrite(&|v| v["fetchedAt"] = (now() - TTL.as_secs()).into());
        assert!(cache.load().is_none(), "stale");
        rewrite(&|v| v["fetchedAt"] = (now() - TTL.as_secs() + 60).into());
        assert!(cache.load().is_some(), "a minute short of stale");
        rewrite(&|v| v["format"] = (FORMAT + 1).into());
        assert!(cache.load().is_none(), "another format");
        std::fs::write(&path, b"{\"format\":1,\"server\":").unwrap();
        assert!(cache.load().is_none(), "cut short");
        cache.store(&catalog());
        assert!(cache.load().is_some(), "rewritten");
    }

    #[test]
    fn an_unwritable_directory_is_no_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a-file");
        std::fs::write(&file, b"").unwrap();
        let cache = DiscoveryCache::new(Some(&file), "https://h:1/");
        cache.store(&catalog());
        assert!(cache.load().is_none());
    }

    #[test]
    fn the_default_directory_is_kubectls() {
        // Only the parts that do not depend on this process's environment.
        let cache = DiscoveryCache::new(Some(Path::new("")), "https://h:1");
        if let Some(path) = cache.path() {
            assert!(path.ends_with(Path::new("discovery/h_1").join(FILE_NAME)));
        }
    }
}
