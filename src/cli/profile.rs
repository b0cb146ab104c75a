//! `--client-go VERSION`: what an informer built with that client-go version does by default, and
//! how the explicit flags (`--fifo`, `--batch-pop`, `--legacy-sync`, `--watch-list`) override it.
//!
//! The table, each row checked against client-go's source (`features/known_features.go` for the
//! gates and their defaults; `tools/cache`):
//!
//! | client-go | queue | pop | relist deltas | initial list | unlock while processing |
//! | --- | --- | --- | --- | --- | --- |
//! | 1.17 | DeltaFIFO | one key | `Sync` | LIST pages | – |
//! | 1.18 – 1.32 | DeltaFIFO | one key | `Replaced` | LIST pages | – |
//! | 1.33, 1.34 | RealFIFO | one delta | `Replaced` | LIST pages | – |
//! | 1.35 | RealFIFO | up to 1000 | `Replaced` | streaming | – |
//! | 1.36 | RealFIFO, atomic | up to 1000 | `ReplacedAll` | streaming | on |
//!
//! - Queue: `newQueueFIFO` (`controller.go`) builds a RealFIFO when `InOrderInformers` is on
//!   (beta, on by default, in 1.33; GA and locked in 1.36), with `AtomicEvents` when
//!   `AtomicFIFO` is on (beta, on by default, in 1.36); a DeltaFIFO otherwise.
//! - `Replaced`: the shared informer asks its DeltaFIFO for `EmitDeltaTypeReplaced`, added by
//!   kubernetes#86015 in 1.18 (client-go v0.18.0); before, a relist queued `Sync` deltas. 1.17 is
//!   the oldest version accepted: the first with client-go's `v0.x` tags, and the last with `Sync`.
//! - Pops: `processLoop` (`controller.go`) pops with `PopBatch` when `InOrderInformersBatchProcess`
//!   is on (beta, on by default, in 1.35), the queue has `PopBatch` (a RealFIFO; a DeltaFIFO has
//!   none) and the informer sets `ProcessBatch` (the shared informer's `handleBatchDeltas`). A
//!   batch is at most `defaultBatchSize` = 1000 deltas (`the_real_fifo.go`): `--batch-pop 1000`.
//! - Streaming list: the Reflector uses a watch with `sendInitialEvents` when `WatchListClient` is
//!   on (beta since 1.30, on by default from 1.35): `--watch-list`.
//! - Unlock while processing: `UnlockWhileProcessingFIFO` (beta, on by default, in 1.36) makes the
//!   RealFIFO release its lock while the pop's process function runs (`whileProcessing_locked`),
//!   so the Reflector can queue meanwhile, unless 2000 deltas already wait; client-go allows it
//!   only with `AtomicEvents` (`NewRealFIFOWithOptions`). This tool shows it and changes nothing
//!   for it: its handler runs after the pop, never under the queue's lock, so the Reflector never
//!   waits for a handler here either way.
//!
//! The default is 1.32, the last DeltaFIFO informer: the queue this tool is about.

use std::ffi::OsStr;

use anyhow::anyhow;
use clap::builder::{PossibleValue, StringValueParser, TypedValueParser};
use kubectl_deltas::cache::QueueKind;
use kubectl_deltas::render::profile::{
    InformerProfile, ProfileChoice, ProfileSetting, SettingOrigin, SettingValue,
};

#[cfg(test)]
use super::FifoKind;
use super::InformerArgs;
use super::exit::{Exit, WithExit};

/// The oldest minor version `--client-go` accepts.
pub const OLDEST: u32 = 17;
/// The newest minor version whose informer defaults are known: `latest`.
pub const NEWEST: u32 = 36;
/// Without `--client-go`.
pub const DEFAULT: u32 = 32;

/// `defaultBatchSize` of client-go's RealFIFO: the most deltas one `PopBatch` takes.
const CLIENT_GO_BATCH_SIZE: usize = 1000;

/// Every value `--client-go` offers to complete: `1.17` … `1.36`, `latest`. Any other spelling
/// of these versions is accepted too ([`parse_version`]).
const OFFERED: [&str; (NEWEST - OLDEST + 2) as usize] = [
    "1.17", "1.18", "1.19", "1.20", "1.21", "1.22", "1.23", "1.24", "1.25", "1.26", "1.27", "1.28",
    "1.29", "1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "latest",
];

/// `--client-go`'s parser: takes the text as it is and offers [`OFFERED`] to completion; the
/// version is checked by [`Profile::resolve`], whose error is one line of this tool's (clap's
/// would add a help hint).
#[derive(Debug, Clone, Copy)]
pub struct ClientGoParser;

impl TypedValueParser for ClientGoParser {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<String, clap::Error> {
        StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(OFFERED.iter().copied().map(PossibleValue::new)))
    }
}

/// The minor version `text` names: `1.35`, `1.35.2`, `v1.35`, or client-go's own module version
/// `0.35`, `v0.35.1`; `latest` is [`NEWEST`]. `None` for anything else, including versions
/// outside [`OLDEST`]..=[`NEWEST`].
pub fn parse_version(text: &str) -> Option<(u32, ProfileChoice)> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("latest") {
        return Some((NEWEST, ProfileChoice::Latest));
    }
    let text = text.strip_prefix('v').unwrap_or(text);
    let mut parts = text.split('.');
    let major = parts.next()?;
    let minor: u32 = parts.next()?.parse().ok()?;
    let patch_ok = match parts.next() {
        None => true,
        Some(patch) => patch.parse::<u32>().is_ok() && parts.next().is_none(),
    };
    let known = (OLDEST..=NEWEST).contains(&minor);
    (matches!(major, "0" | "1") && patch_ok && known).then_some((minor, ProfileChoice::Given))
}

/// One resolved setting and who decided it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resolved<T> {
    /// What it came to.
    pub value: T,
    /// Who decided.
    pub from: SettingOrigin,
}

impl<T> Resolved<T> {
    fn profile(value: T) -> Self {
        Resolved {
            value,
            from: SettingOrigin::Profile,
        }
    }

    /// The flag's value if given, else the profile's.
    fn flag_or(flag: Option<T>, profile: T) -> Self {
        match flag {
            Some(value) => Resolved {
                value,
                from: SettingOrigin::Flag,
            },
            None => Resolved::profile(profile),
        }
    }
}

/// A client-go version's informer defaults, with the command line's flags applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// The minor version: 32 for client-go 1.32 (v0.32).
    pub minor: u32,
    /// How it was chosen.
    pub chosen: ProfileChoice,
    /// The queue between Reflector and Indexer.
    pub fifo: Resolved<QueueKind>,
    /// Most deltas one pop takes.
    pub batch_pop: Resolved<usize>,
    /// `Sync` instead of `Replaced` deltas for a relist.
    pub legacy_sync: Resolved<bool>,
    /// The initial list through a streaming watch.
    pub watch_list: Resolved<bool>,
    /// The queue's lock released while a pop is processed (shown only; see the module
    /// documentation).
    pub unlock_while_processing: Resolved<bool>,
}

impl Profile {
    /// The profile `--client-go` asks for (the default without it), overridden by the informer's
    /// flags and `watch_list` (`--watch-list`, where the command has it). A version not in the
    /// table, and `--batch-pop` above 1 with a queue that has no batch pops, are usage errors.
    pub fn resolve(informer: &InformerArgs, watch_list: Option<bool>) -> anyhow::Result<Self> {
        let (minor, chosen) = match informer.client_go.as_deref() {
            None => (DEFAULT, ProfileChoice::Default),
            Some(text) => parse_version(text)
                .ok_or_else(|| {
                    anyhow!(
                        "--client-go {text:?} is not a client-go version this tool knows: \
                         expected 1.{OLDEST} to 1.{NEWEST} (or v0.{OLDEST} to v0.{NEWEST}), or \
                         latest"
                    )
                })
                .exit_with(Exit::Usage)?,
        };
        let fifo = Resolved::flag_or(informer.fifo.map(QueueKind::from), default_queue(minor));
        let batched_queue = matches!(fifo.value, QueueKind::Real | QueueKind::Atomic);
        let batch_pop = match informer.batch_pop {
            Some(n) => {
                let n = usize::try_from(n).unwrap_or(usize::MAX);
                if n > 1 && !batched_queue {
                    return Err(batch_pop_needs_a_real_fifo(n, fifo.value)).exit_with(Exit::Usage);
                }
                Resolved {
                    value: n,
                    from: SettingOrigin::Flag,
                }
            }
            // client-go pops a batch only from a queue that has PopBatch: a RealFIFO.
            None if batched_queue && minor >= 35 => Resolved::profile(CLIENT_GO_BATCH_SIZE),
            None => Resolved::profile(1),
        };
        Ok(Profile {
            minor,
            chosen,
            batch_pop,
            legacy_sync: Resolved::flag_or(informer.legacy_sync, minor < 18),
            watch_list: Resolved::flag_or(watch_list, minor >= 35),
            // client-go refuses it without atomic events.
            unlock_while_processing: Resolved::profile(
                minor >= 36 && fifo.value == QueueKind::Atomic,
            ),
            fifo,
        })
    }

    /// A replay: the recording decides whether the initial list was streamed (a recording made
    /// with LIST pages replays as list+watch, whatever the profile says).
    pub fn replayed(&mut self, streamed: bool) {
        self.watch_list = Resolved {
            value: streamed,
            from: SettingOrigin::Recording,
        };
    }

    /// What the first row of each informer says: the version and every setting.
    pub fn describe(&self) -> InformerProfile {
        let fifo = match self.fifo.value {
            QueueKind::Delta => "delta",
            QueueKind::Real => "real",
            QueueKind::Atomic => "atomic",
            QueueKind::Plain => "plain",
        };
        let setting = |name, value, from| ProfileSetting { name, value, from };
        InformerProfile {
            client_go: format!("1.{}", self.minor),
            chosen: self.chosen,
            settings: vec![
                setting("fifo", SettingValue::Word(fifo), self.fifo.from),
                setting(
                    "batch-pop",
                    SettingValue::Number(self.batch_pop.value as u64),
                    self.batch_pop.from,
                ),
                setting(
                    "legacy-sync",
                    SettingValue::Switch(self.legacy_sync.value),
                    self.legacy_sync.from,
                ),
                setting(
                    "watch-list",
                    SettingValue::Switch(self.watch_list.value),
                    self.watch_list.from,
                ),
                setting(
                    "unlock-while-processing",
                    SettingValue::Switch(self.unlock_while_processing.value),
                    self.unlock_while_processing.from,
                ),
            ],
        }
    }
}

impl Default for Profile {
    /// The default profile without any flag.
    fn default() -> Self {
        Profile::resolve(&InformerArgs::default(), None).expect("the default profile resolves")
    }
}

/// The queue an informer of client-go 1.`minor` runs with its gates at their defaults.
fn default_queue(minor: u32) -> QueueKind {
    match minor {
        36.. => QueueKind::Atomic,
        33.. => QueueKind::Real,
        _ => QueueKind::Delta,
    }
}

/// `--batch-pop N` with a queue whose pop is one key: refused rather than ignored, since a user
/// asking for PopBatch must not believe they see it.
fn batch_pop_needs_a_real_fifo(n: usize, queue: QueueKind) -> anyhow::Error {
    let pop = match queue {
        QueueKind::Plain => "a FIFO pop is always one key's latest object",
        _ => "a DeltaFIFO pop is always one key's Deltas",
    };
    anyhow!(
        "--batch-pop {n} needs --fifo real or --fifo atomic: {pop} (client-go's PopBatch belongs \
         to the RealFIFO)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(client_go: Option<&str>) -> InformerArgs {
        InformerArgs {
            client_go: client_go.map(str::to_owned),
            ..InformerArgs::default()
        }
    }

    /// (queue, batch pop, legacy sync, watch list, unlock) of a version with no flags.
    fn defaults(version: &str) -> (QueueKind, usize, bool, bool, bool) {
        let p = Profile::resolve(&args(Some(version)), None).unwrap();
        (
            p.fifo.value,
            p.batch_pop.value,
            p.legacy_sync.value,
            p.watch_list.value,
            p.unlock_while_processing.value,
        )
    }

    #[test]
    fn each_version_sets_what_its_informer_does() {
        use QueueKind::*;
        assert_eq!(defaults("1.17"), (Delta, 1, true, false, false));
        assert_eq!(defaults("1.18"), (Delta, 1, false, false, false));
        assert_eq!(defaults("1.32"), (Delta, 1, false, false, false));
        assert_eq!(defaults("1.33"), (Real, 1, false, false, false));
        assert_eq!(defaults("1.34"), (Real, 1, false, false, false));
        assert_eq!(defaults("1.35"), (Real, 1000, false, true, false));
        assert_eq!(defaults("1.36"), (Atomic, 1000, false, true, true));
        assert_eq!(defaults("latest"), defaults("1.36"));
        let default = Profile::default();
        assert_eq!(
            (default.minor, default.chosen),
            (32, ProfileChoice::Default)
        );
    }

    #[test]
    fn versions_are_written_as_kubernetes_or_client_go_numbers_them() {
        for text in ["1.35", "1.35.2", "v1.35", "0.35", "v0.35.1", " 1.35 "] {
            assert_eq!(
                parse_version(text),
                Some((35, ProfileChoice::Given)),
                "{text}"
            );
        }
        assert_eq!(parse_version("LATEST"), Some((36, ProfileChoice::Latest)));
        for bad in [
            "", "1", "1.16", "1.37", "2.30", "1.x", "1.35.x", "1.35.1.1", "35", "v", "1.-3",
        ] {
            assert_eq!(parse_version(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn flags_win_over_the_profile_and_say_so() {
        let informer = InformerArgs {
            fifo: Some(FifoKind::Delta),
            ..args(Some("latest"))
        };
        let p = Profile::resolve(&informer, Some(false)).unwrap();
        assert_eq!(p.fifo.value, QueueKind::Delta);
        assert_eq!(p.fifo.from, SettingOrigin::Flag);
        // No batch pops from a DeltaFIFO, and no unlocking without atomic events, as client-go.
        assert_eq!(p.batch_pop, Resolved::profile(1));
        assert_eq!(p.unlock_while_processing, Resolved::profile(false));
        assert_eq!(
            p.watch_list,
            Resolved {
                value: false,
                from: SettingOrigin::Flag
            }
        );
        let informer = InformerArgs {
            batch_pop: Some(3),
            legacy_sync: Some(true),
            ..args(Some("1.33"))
        };
        let p = Profile::resolve(&informer, None).unwrap();
        assert_eq!(
            (p.batch_pop.value, p.batch_pop.from),
            (3, SettingOrigin::Flag)
        );
        assert_eq!(p.legacy_sync.from, SettingOrigin::Flag);
        let informer = InformerArgs {
            batch_pop: Some(3),
            ..args(Some("1.32"))
        };
        let error = Profile::resolve(&informer, None).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("--batch-pop 3 needs --fifo real")
        );
    }

    #[test]
    fn a_replay_lists_as_its_recording_did() {
        let mut p = Profile::resolve(&args(Some("1.35")), None).unwrap();
        p.replayed(false);
        assert_eq!(p.watch_list.from, SettingOrigin::Recording);
        assert!(
            p.describe()
                .to_string()
                .contains("watch-list=off (recording)")
        );
    }
}
