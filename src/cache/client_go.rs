//! Which client-go version builds which informer: a typed [`ClientGoVersion`] and the rules each
//! release follows, each read at its tag in `k8s.io/client-go` (`tools/cache`,
//! `features/known_features.go`) and cited on the method that states it.
//!
//! | rule | method | from |
//! | --- | --- | --- |
//! | relist queues `Replaced` instead of `Sync` | [`emit_replaced`](ClientGoVersion::emit_replaced) | v0.18.0 |
//! | which update is a sync notification | [`sync_rule`](ClientGoVersion::sync_rule) | v0.18.0, v0.24.0 |
//! | `Replace` tombstones queued keys first | [`replace_tombstones`](ClientGoVersion::replace_tombstones) | v0.27.0-alpha.3; v0.24.13, v0.25.9, v0.26.4 |
//! | per-handler `HasSynced`, `isInInitialList` | [`has_registration_synced`](ClientGoVersion::has_registration_synced) | v0.27.0 |
//! | RealFIFO (`InOrderInformers`) | [`queue`](ClientGoVersion::queue) | v0.33.0 |
//! | `PopBatch` of up to 1000 | [`batch_pop`](ClientGoVersion::batch_pop) | v0.35.0 |
//! | streaming list (`WatchListClient`) | [`watch_list`](ClientGoVersion::watch_list) | v0.35.0 |
//! | atomic RealFIFO, `UnlockWhileProcessingFIFO` | [`queue`](ClientGoVersion::queue), [`unlock_while_processing`](ClientGoVersion::unlock_while_processing) | v0.36.0 |
//! | a failed streaming list falls back to a list at once | `ReflectorConfig::client_go` | v0.29.0 (v0.28: on 422 only) |
//! | backoff resets 2 min after the last reset | [`backoff_resets_since_last_reset`](ClientGoVersion::backoff_resets_since_last_reset) | v0.36.0 |
//!
//! The Reflector this crate runs is v0.28's (`reflector.go` `ListAndWatch`) with the later rules
//! above (`ReflectorConfig::client_go`): a version before 1.28 gets its queue and informer rules,
//! not its Reflector ([`ClientGoVersion::reflector`]).
//!
//! ```
//! use kubectl_deltas::cache::{ClientGoVersion, InformerConfig, QueueKind, SyncRule};
//!
//! // The informer a program built against k8s.io/client-go v0.33.2 runs.
//! let version: ClientGoVersion = "v0.33.2".parse().unwrap();
//! let config = InformerConfig::client_go(version);
//! assert_eq!(config.queue, QueueKind::Real);
//! assert_eq!(config.batch_pop, 1);
//! assert_eq!(config.sync_rule, SyncRule::ResourceVersion);
//!
//! // Kubernetes numbers the same release 1.33; a minor alone means its newest patch.
//! assert_eq!("1.33".parse::<ClientGoVersion>().unwrap().minor(), 33);
//! ```

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use crate::cache::informer::{InformerConfig, SyncRule};
use crate::cache::queue::{QueueKind, ReplaceTombstones};
use crate::cache::reflector::{BackoffReset, ReflectorConfig, WatchListFallback};

/// A `k8s.io/client-go` release: `v0.MINOR.PATCH`, optionally a pre-release of `.0`
/// (`v0.36.0-alpha.1`). Kubernetes numbers the same release `1.MINOR.PATCH`.
///
/// Parsed from `1.28`, `v1.28.3`, `0.28.7`, `v0.36.0-rc.1` (a go.mod version) or `latest`. A
/// version without a patch stands for the newest patch of its minor, as `go get
/// k8s.io/client-go@v0.28` resolves it; its rules are those of that newest patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClientGoVersion {
    minor: u32,
    /// `None`: the newest patch release of `minor`.
    patch: Option<u32>,
    /// Only with patch 0.
    pre: Option<PreRelease>,
}

/// A pre-release tag of a `.0` release, in the order client-go tags them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PreRelease {
    /// `-alpha.N`.
    Alpha(u32),
    /// `-beta.N`.
    Beta(u32),
    /// `-rc.N`.
    Rc(u32),
}

impl fmt::Display for PreRelease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PreRelease::Alpha(n) => write!(f, "alpha.{n}"),
            PreRelease::Beta(n) => write!(f, "beta.{n}"),
            PreRelease::Rc(n) => write!(f, "rc.{n}"),
        }
    }
}

/// Why a text is not a [`ClientGoVersion`]; its message is one sentence for a user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientGoVersionError {
    /// Not a version at all.
    #[error(
        "{0:?} is not a client-go version: expected 1.MINOR or 0.MINOR with an optional patch \
         (1.28, 0.28.7, v0.36.0-alpha.1), or latest"
    )]
    Malformed(String),
    /// A version whose informer this crate does not know.
    #[error(
        "client-go {0:?} is outside the versions this tool knows: 1.{oldest} to 1.{newest} \
         (v0.{oldest} to v0.{newest}), or latest",
        oldest = ClientGoVersion::OLDEST_MINOR,
        newest = ClientGoVersion::NEWEST_MINOR
    )]
    Unknown(String),
}

impl ClientGoVersion {
    /// The oldest minor version whose informer rules are known (see the table).
    pub const OLDEST_MINOR: u32 = 17;
    /// The newest minor version whose informer rules are known: [`LATEST`](Self::LATEST).
    pub const NEWEST_MINOR: u32 = 36;
    /// `latest`: the newest minor, newest patch.
    pub const LATEST: ClientGoVersion = ClientGoVersion {
        minor: Self::NEWEST_MINOR,
        patch: None,
        pre: None,
    };

    /// The newest patch of `v0.minor` (`None` outside the known minors).
    pub fn minor_release(minor: u32) -> Option<Self> {
        (Self::OLDEST_MINOR..=Self::NEWEST_MINOR)
            .contains(&minor)
            .then_some(ClientGoVersion {
                minor,
                patch: None,
                pre: None,
            })
    }

    /// `v0.minor.patch` (`None` outside the known minors).
    pub fn release(minor: u32, patch: u32) -> Option<Self> {
        Self::minor_release(minor).map(|v| ClientGoVersion {
            patch: Some(patch),
            ..v
        })
    }

    /// The minor version: 28 for v0.28.7 (Kubernetes 1.28).
    pub fn minor(self) -> u32 {
        self.minor
    }

    /// The patch, if the version names one.
    pub fn patch(self) -> Option<u32> {
        self.patch
    }

    /// Whether this version is `v0.minor.patch` or later (a version without a patch is its
    /// minor's newest patch, so later than any patch of its minor; a pre-release comes before its
    /// release).
    fn at_least(self, minor: u32, patch: u32) -> bool {
        self.cmp_release(minor, patch, None) != Ordering::Less
    }

    fn cmp_release(self, minor: u32, patch: u32, pre: Option<PreRelease>) -> Ordering {
        self.minor.cmp(&minor).then_with(|| match self.patch {
            None => Ordering::Greater,
            Some(own) => own.cmp(&patch).then_with(|| match (self.pre, pre) {
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Greater,
                (Some(_), None) => Ordering::Less,
                (Some(a), Some(b)) => a.cmp(&b),
            }),
        })
    }

    /// The queue `newQueueFIFO` builds (`controller.go`, v0.34 onwards; the informer
    /// constructors before): a RealFIFO from v0.33 (`InOrderInformers`, beta and on by default in
    /// v0.33, GA in v0.36), with `AtomicEvents` from v0.36 (`AtomicFIFO`, beta and on); a
    /// DeltaFIFO before.
    pub fn queue(self) -> QueueKind {
        match self.minor {
            36.. => QueueKind::Atomic,
            33.. => QueueKind::Real,
            _ => QueueKind::Delta,
        }
    }

    /// Most deltas one pop takes: `defaultBatchSize` = 1000 (`the_real_fifo.go`) from v0.35,
    /// where `processLoop` pops with `PopBatch` (`InOrderInformersBatchProcess`, beta and on);
    /// one before.
    pub fn batch_pop(self) -> usize {
        if self.minor >= 35 { 1000 } else { 1 }
    }

    /// A relist queues `Replaced` deltas (`EmitDeltaTypeReplaced`, kubernetes#86015, v0.18.0);
    /// `Sync` before.
    pub fn emit_replaced(self) -> bool {
        self.minor >= 18
    }

    /// Which updates are sync notifications ([`SyncRule`]).
    pub fn sync_rule(self) -> SyncRule {
        match self.minor {
            ..18 => SyncRule::DeltaType,
            18..24 => SyncRule::SyncOrUnchangedReplaced,
            _ => SyncRule::ResourceVersion,
        }
    }

    /// The DeltaFIFO's relist tombstones ([`ReplaceTombstones`]): queue-first from
    /// v0.27.0-alpha.3 (the first tag with a01b5a2a9), and from the backports v0.24.13, v0.25.9
    /// and v0.26.4.
    pub fn replace_tombstones(self) -> ReplaceTombstones {
        let queue_first = match self.minor {
            24 => self.at_least(24, 13),
            25 => self.at_least(25, 9),
            26 => self.at_least(26, 4),
            27 => self.cmp_release(27, 0, Some(PreRelease::Alpha(3))) != Ordering::Less,
            minor => minor > 27,
        };
        if queue_first {
            ReplaceTombstones::QueueFirst
        } else {
            ReplaceTombstones::KnownObjects
        }
    }

    /// A handler's registration has its own `HasSynced`, and `OnAdd` says `isInInitialList`:
    /// both came in v0.27.0 (`ResourceEventHandlerRegistration`, `processorListener.HasSynced`).
    /// Before, only the informer had synced or not.
    pub fn has_registration_synced(self) -> bool {
        self.minor >= 27
    }

    /// The streaming list: a watch with `sendInitialEvents` (`WatchListClient`, beta and on by
    /// default from v0.35); a paged LIST before.
    pub fn watch_list(self) -> bool {
        self.minor >= 35
    }

    /// `UnlockWhileProcessingFIFO` (beta, on by default, v0.36): the atomic RealFIFO releases its
    /// lock while a pop is processed, unless 2000 deltas wait (`whileProcessing_locked`).
    pub fn unlock_while_processing(self) -> bool {
        self.minor >= 36
    }

    /// The Reflector's backoff resets 2 minutes after its previous reset, not after the previous
    /// backoff: `DelayWithReset` (apimachinery `backoff.go` @v0.36.3) replaced
    /// `NewExponentialBackoffManager` in the v0.36 Reflector.
    pub fn backoff_resets_since_last_reset(self) -> bool {
        self.minor >= 36
    }

    /// The client-go minor whose Reflector this crate runs for this version: its own from
    /// v0.28, v0.28's before (1.17's lists at resourceVersion "0" and retries every second;
    /// 1.20 to 1.27 re-open watches with a second backoff manager: neither is modelled).
    pub fn reflector(self) -> u32 {
        self.minor.max(28)
    }
}

impl fmt::Display for ClientGoVersion {
    /// As Kubernetes numbers it: `1.28`, `1.28.7`, `1.36.0-alpha.1`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "1.{}", self.minor)?;
        if let Some(patch) = self.patch {
            write!(f, ".{patch}")?;
        }
        if let Some(pre) = self.pre {
            write!(f, "-{pre}")?;
        }
        Ok(())
    }
}

impl FromStr for ClientGoVersion {
    type Err = ClientGoVersionError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("latest") {
            return Ok(ClientGoVersion::LATEST);
        }
        let malformed = || ClientGoVersionError::Malformed(text.to_owned());
        let bare = text.strip_prefix('v').unwrap_or(text);
        let (release, pre) = match bare.split_once('-') {
            Some((release, pre)) => (release, Some(parse_pre(pre).ok_or_else(malformed)?)),
            None => (bare, None),
        };
        let number = |part: &str| -> Option<u32> {
            (!part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
                .then(|| part.parse().ok())
                .flatten()
        };
        let mut parts = release.split('.');
        let major = parts.next().ok_or_else(malformed)?;
        let minor = parts.next().and_then(number).ok_or_else(malformed)?;
        let patch = match parts.next() {
            None => None,
            Some(patch) => Some(number(patch).ok_or_else(malformed)?),
        };
        if parts.next().is_some() || !matches!(major, "0" | "1") {
            return Err(malformed());
        }
        // client-go tags pre-releases of `.0` only.
        if pre.is_some() && patch != Some(0) {
            return Err(malformed());
        }
        let version = ClientGoVersion::minor_release(minor)
            .ok_or_else(|| ClientGoVersionError::Unknown(text.to_owned()))?;
        Ok(ClientGoVersion {
            patch,
            pre,
            ..version
        })
    }
}

fn parse_pre(text: &str) -> Option<PreRelease> {
    let (word, n) = text.split_once('.')?;
    let n: u32 = (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .then(|| n.parse().ok())
        .flatten()?;
    match word {
        "alpha" => Some(PreRelease::Alpha(n)),
        "beta" => Some(PreRelease::Beta(n)),
        "rc" => Some(PreRelease::Rc(n)),
        _ => None,
    }
}

// The configurations a version builds are stated here, with the version's rules, so that the
// informer and the Reflector know nothing of versions.
impl InformerConfig {
    /// The informer client-go `version` builds with its feature gates at their defaults
    /// (`NewSharedIndexInformer`): its queue, pop size, relist deltas and sync rules (see
    /// [`ClientGoVersion`]); no index, its own thread. Whether the Reflector streams its initial
    /// list is the Reflector's configuration: [`ClientGoVersion::watch_list`].
    ///
    /// ```
    /// use kubectl_deltas::cache::{ClientGoVersion, InformerConfig, QueueKind, ReplaceTombstones};
    ///
    /// let config = InformerConfig::client_go("0.24.12".parse::<ClientGoVersion>().unwrap());
    /// assert_eq!(config.queue, QueueKind::Delta);
    /// assert_eq!(config.replace_tombstones, ReplaceTombstones::KnownObjects);
    ///
    /// let latest = InformerConfig::client_go(ClientGoVersion::LATEST);
    /// assert_eq!((latest.queue, latest.batch_pop), (QueueKind::Atomic, 1000));
    /// assert!(latest.unlock_while_processing);
    /// ```
    pub fn client_go(version: ClientGoVersion) -> Self {
        InformerConfig {
            queue: version.queue(),
            emit_replaced: version.emit_replaced(),
            batch_pop: version.batch_pop(),
            sync_rule: version.sync_rule(),
            replace_tombstones: version.replace_tombstones(),
            unlock_while_processing: version.unlock_while_processing(),
            ..InformerConfig::default()
        }
    }
}

impl ReflectorConfig {
    /// The Reflector of client-go `version` ([`ClientGoVersion::reflector`]): its streaming list
    /// ([`ClientGoVersion::watch_list`]), which streaming failures fall back to a list, and its
    /// backoff's reset rule.
    ///
    /// ```
    /// use kubectl_deltas::cache::ClientGoVersion;
    /// use kubectl_deltas::cache::reflector::BackoffReset;
    /// use kubectl_deltas::cache::reflector::ReflectorConfig;
    ///
    /// let config = ReflectorConfig::default().client_go(ClientGoVersion::LATEST);
    /// assert!(config.watch_list);
    /// assert_eq!(config.backoff.reset_from, BackoffReset::SinceLastReset);
    /// ```
    pub fn client_go(mut self, version: ClientGoVersion) -> Self {
        self.watch_list = version.watch_list();
        self.watch_list_fallback = if version.reflector() >= 29 {
            WatchListFallback::AnyError
        } else {
            WatchListFallback::InvalidOnly
        };
        self.backoff.reset_from = if version.backoff_resets_since_last_reset() {
            BackoffReset::SinceLastReset
        } else {
            BackoffReset::SincePreviousBackoff
        };
        self
    }
}

#[cfg(test)]
#[path = "client_go_tests.rs"]
mod tests;
