//! `--client-go VERSION`: the informer that client-go version builds by default
//! ([`ClientGoVersion`], whose rules, each checked against client-go's source, live in the
//! library: `cache::client_go`), and how the explicit flags (`--fifo`, `--batch-pop`,
//! `--legacy-sync`, `--unlock-while-processing`, `--watch-list`) override it.
//!
//! The default is 1.32, the last DeltaFIFO informer: the queue this tool is about.

use std::ffi::OsStr;

use anyhow::anyhow;
use clap::builder::{PossibleValue, StringValueParser, TypedValueParser};
use kubectl_deltas::cache::{ClientGoVersion, Consumption, IndexSpec, InformerConfig, QueueKind};
use kubectl_deltas::render::profile::{
    InformerProfile, ProfileChoice, ProfileSetting, SettingOrigin, SettingValue,
};

#[cfg(test)]
use super::FifoKind;
use super::InformerArgs;
use super::exit::{Exit, WithExit};

/// The oldest minor version `--client-go` accepts.
pub const OLDEST: u32 = ClientGoVersion::OLDEST_MINOR;
/// The newest minor version whose informer defaults are known: `latest`.
pub const NEWEST: u32 = ClientGoVersion::NEWEST_MINOR;
/// Without `--client-go`.
pub const DEFAULT: u32 = 32;

/// Every value `--client-go` offers to complete: `1.17` … `1.36`, `latest`. Any other spelling
/// of these versions is accepted too ([`ClientGoVersion`]'s parser).
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
    /// The version: `1.32` (its newest patch) without `--client-go`.
    pub version: ClientGoVersion,
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
    /// The atomic queue's lock released while a pop is processed.
    pub unlock_while_processing: Resolved<bool>,
}

impl Profile {
    /// The profile `--client-go` asks for (the default without it), overridden by the informer's
    /// flags and `watch_list` (`--watch-list`, where the command has it). A version not in the
    /// table, `--batch-pop` above 1 with a queue that has no batch pops, and
    /// `--unlock-while-processing` without the atomic queue are usage errors.
    pub fn resolve(informer: &InformerArgs, watch_list: Option<bool>) -> anyhow::Result<Self> {
        let (version, chosen) = match informer.client_go.as_deref() {
            None => (
                ClientGoVersion::minor_release(DEFAULT).expect("the default version is known"),
                ProfileChoice::Default,
            ),
            Some(text) if text.trim().eq_ignore_ascii_case("latest") => {
                (ClientGoVersion::LATEST, ProfileChoice::Latest)
            }
            Some(text) => (
                text.parse::<ClientGoVersion>()
                    .map_err(|error| anyhow!("--client-go: {error}"))
                    .exit_with(Exit::Usage)?,
                ProfileChoice::Given,
            ),
        };
        let fifo = Resolved::flag_or(informer.fifo.map(QueueKind::from), version.queue());
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
            None if batched_queue => Resolved::profile(version.batch_pop()),
            None => Resolved::profile(1),
        };
        let atomic = fifo.value == QueueKind::Atomic;
        let unlock_while_processing = match informer.unlock_while_processing {
            Some(true) if !atomic => {
                return Err(anyhow!(
                    "--unlock-while-processing needs --fifo atomic (or --client-go 1.36): \
                     client-go's RealFIFO refuses UnlockWhileProcessing without AtomicEvents"
                ))
                .exit_with(Exit::Usage);
            }
            flag => Resolved::flag_or(flag, atomic && version.unlock_while_processing()),
        };
        Ok(Profile {
            version,
            chosen,
            batch_pop,
            legacy_sync: Resolved::flag_or(informer.legacy_sync, !version.emit_replaced()),
            watch_list: Resolved::flag_or(watch_list, version.watch_list()),
            unlock_while_processing,
            fifo,
        })
    }

    /// The informer the version builds ([`InformerConfig::client_go`]) with the flags' settings,
    /// `indices`, and its consumer where `consumption` says.
    pub fn informer_config(
        &self,
        indices: &[IndexSpec],
        consumption: Consumption,
    ) -> InformerConfig {
        InformerConfig {
            queue: self.fifo.value,
            emit_replaced: !self.legacy_sync.value,
            batch_pop: self.batch_pop.value,
            unlock_while_processing: self.unlock_while_processing.value,
            indices: indices.to_vec(),
            consumption,
            ..InformerConfig::client_go(self.version)
        }
    }

    /// Whether handlers' registrations have their own `HasSynced` (client-go 1.27 onwards).
    pub fn has_registration_synced(&self) -> bool {
        self.version.has_registration_synced()
    }

    /// What the first row of each informer says: the version and every setting; before 1.28,
    /// also that the Reflector is 1.28's.
    pub fn describe(&self) -> InformerProfile {
        let setting = |name, value, from| ProfileSetting { name, value, from };
        let mut settings = vec![
            setting(
                "fifo",
                SettingValue::Word(self.fifo.value.as_str()),
                self.fifo.from,
            ),
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
        ];
        if self.version.reflector() != self.version.minor() {
            // This tool runs no older Reflector: say so where the version is named.
            settings.push(setting(
                "reflector",
                SettingValue::Word(REFLECTOR),
                SettingOrigin::Profile,
            ));
        }
        InformerProfile {
            client_go: self.version.to_string(),
            chosen: self.chosen,
            settings,
        }
    }
}

/// The oldest Reflector this tool runs ([`ClientGoVersion::reflector`]).
const REFLECTOR: &str = "1.28";

impl Default for Profile {
    /// The default profile without any flag.
    fn default() -> Self {
        Profile::resolve(&InformerArgs::default(), None).expect("the default profile resolves")
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
            (default.version.minor(), default.chosen),
            (32, ProfileChoice::Default)
        );
    }

    #[test]
    fn a_version_the_library_refuses_is_one_usage_error() {
        for bad in ["1.16", "1.x", "v0.0.0-20230101000000-abcdef"] {
            let error = Profile::resolve(&args(Some(bad)), None).unwrap_err();
            let text = format!("{error:#}");
            assert!(text.starts_with("--client-go: "), "{text}");
            assert!(!text.contains('\n'), "{text}");
        }
        let p = Profile::resolve(&args(Some("v0.24.12")), None).unwrap();
        assert_eq!(p.describe().client_go, "1.24.12");
        assert!(p.describe().to_string().ends_with(", reflector=1.28"));
        assert!(
            !Profile::default()
                .describe()
                .to_string()
                .contains("reflector")
        );
    }

    #[test]
    fn unlocking_needs_the_atomic_queue_as_in_client_go() {
        let informer = InformerArgs {
            unlock_while_processing: Some(true),
            ..args(Some("1.33"))
        };
        let error = Profile::resolve(&informer, None).unwrap_err();
        assert!(error.to_string().contains("needs --fifo atomic"), "{error}");
        let informer = InformerArgs {
            unlock_while_processing: Some(false),
            ..args(Some("latest"))
        };
        let p = Profile::resolve(&informer, None).unwrap();
        assert_eq!(
            p.unlock_while_processing,
            Resolved {
                value: false,
                from: SettingOrigin::Flag
            }
        );
        assert!(
            !p.informer_config(&[], Consumption::Thread)
                .unlock_while_processing
        );
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
}
