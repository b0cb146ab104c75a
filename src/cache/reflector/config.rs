//! [`ReflectorConfig`]: everything a Reflector can be told, as a plain struct with builder
//! methods, so that the CLI only translates flags into a config.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::object::Object;

use super::backoff::BackoffConfig;

/// Runs on every object before it reaches the FIFO (for instance to strip `managedFields`).
pub type Transform = Arc<dyn Fn(&mut Object) + Send + Sync>;

/// The page size of client-go's pager (`tools/pager.defaultPageSize`), used when no page size is
/// set.
pub const DEFAULT_PAGE_SIZE: u32 = 500;

/// How a [`Reflector`](crate::cache::Reflector) lists and watches. The default is client-go's: pages
/// of 500, a `"0"` first list, random watch timeouts, no resync, list + watch.
#[derive(Clone, Default)]
pub struct ReflectorConfig {
    /// client-go's `WatchListPageSize`: when set, every list asks for pages of this size (0: one
    /// unpaged request), relists included. When `None` (the default), lists follow the Reflector's
    /// own rule (see [`Reflector`](crate::cache::Reflector)): pages of [`DEFAULT_PAGE_SIZE`], except a
    /// relist at a specific resourceVersion, which asks for everything at once so that the watch
    /// cache can answer it with current data; a server that paged the first `"0"` list keeps
    /// being paged.
    pub page_size: Option<u32>,
    /// List the first time with `resourceVersion=""` (a consistent read from etcd) instead of
    /// `"0"` (whatever the watch cache holds, possibly stale).
    pub consistent_list: bool,
    /// The `timeoutSeconds` of every watch; `None` picks one uniformly in [300 s, 600 s) per watch,
    /// as client-go does so that a fleet of clients does not re-watch in lockstep.
    pub watch_timeout: Option<Duration>,
    /// Period of `fifo.resync()`; `None` never resyncs.
    pub resync: Option<Duration>,
    /// Use a streaming list (a watch with `sendInitialEvents=true`) instead of list + watch,
    /// falling back to list + watch when the server refuses it.
    pub watch_list: bool,
    /// Which streaming-list failures make a ListAndWatch fall back to list + watch at once.
    pub watch_list_fallback: WatchListFallback,
    /// Period of the data consistency check against the cache; `None` never checks. Needs the
    /// cache: see [`Reflector::known_objects`](crate::cache::Reflector::known_objects).
    pub verify_every: Option<Duration>,
    /// Backoff between failed attempts.
    pub backoff: BackoffConfig,
    /// Runs on every listed or watched object before it is queued.
    pub transform: Option<Transform>,
    /// Seeds the random watch timeouts (and the backoff jitter, unless it has its own seed).
    pub seed: Option<u64>,
}

impl fmt::Debug for ReflectorConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReflectorConfig")
            .field("page_size", &self.page_size)
            .field("consistent_list", &self.consistent_list)
            .field("watch_timeout", &self.watch_timeout)
            .field("resync", &self.resync)
            .field("watch_list", &self.watch_list)
            .field("watch_list_fallback", &self.watch_list_fallback)
            .field("verify_every", &self.verify_every)
            .field("backoff", &self.backoff)
            .field("transform", &self.transform.is_some())
            .field("seed", &self.seed)
            .finish()
    }
}

/// Which failures of a streaming list make `ListAndWatch` fall back to a plain list at once
/// (`fallbackToList`); any other failure ends the ListAndWatch, whose next attempt, after a
/// backoff, streams again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WatchListFallback {
    /// Any error `watchList` returns (`ListAndWatch` @v0.29.0 onwards): a non-retryable error
    /// opening the stream or in it (a 422 from a server without WatchList, a 5xx), and a very
    /// short stream.
    #[default]
    AnyError,
    /// Only 422 Invalid, the server refusing `sendInitialEvents` (`ListAndWatch` @v0.28.7:
    /// `apierrors.IsInvalid`).
    InvalidOnly,
}

impl ReflectorConfig {
    /// Sets the page size of every list, relists included (0: no paging): client-go's
    /// `WatchListPageSize`.
    pub fn page_size(mut self, page_size: u32) -> Self {
        self.page_size = Some(page_size);
        self
    }

    /// Makes the first list a consistent read (`resourceVersion=""`).
    pub fn consistent_list(mut self, consistent: bool) -> Self {
        self.consistent_list = consistent;
        self
    }

    /// Fixes the watch timeout (rounded up to whole seconds, at least 1 s).
    pub fn watch_timeout(mut self, timeout: Duration) -> Self {
        self.watch_timeout = Some(timeout);
        self
    }

    /// Resyncs the FIFO with this period.
    pub fn resync(mut self, period: Duration) -> Self {
        self.resync = Some(period).filter(|p| !p.is_zero());
        self
    }

    /// Enables or disables streaming lists.
    pub fn watch_list(mut self, enabled: bool) -> Self {
        self.watch_list = enabled;
        self
    }

    /// Checks the cache against the server with this period.
    pub fn verify_every(mut self, period: Duration) -> Self {
        self.verify_every = Some(period).filter(|p| !p.is_zero());
        self
    }

    /// Replaces the backoff parameters.
    pub fn backoff(mut self, backoff: BackoffConfig) -> Self {
        self.backoff = backoff;
        self
    }

    /// Transforms every object before it is queued.
    pub fn transform(mut self, f: impl Fn(&mut Object) + Send + Sync + 'static) -> Self {
        self.transform = Some(Arc::new(f));
        self
    }

    /// Makes watch timeouts and backoff jitter reproducible.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// The first list's resourceVersion: `"0"`, or `""` for a consistent list.
    pub(super) fn initial_list_rv(&self) -> &'static str {
        if self.consistent_list { "" } else { "0" }
    }
}
