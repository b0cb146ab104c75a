//! Which client-go version's informer a session imitates, and what each of its settings came to,
//! as the first row of each informer says it (`informer-start`). The command line decides the
//! settings; renderers only list them, whatever they are.

use std::fmt;

/// The version an informer imitates and its resolved settings, in the order they are shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InformerProfile {
    /// The client-go minor version as Kubernetes numbers it: `1.32`.
    pub client_go: String,
    /// How the version was chosen.
    pub chosen: ProfileChoice,
    /// Each setting of the informer, with where its value came from.
    pub settings: Vec<ProfileSetting>,
}

/// How an [`InformerProfile`]'s version was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileChoice {
    /// Nobody chose: the tool's default.
    Default,
    /// Asked for as `latest`.
    Latest,
    /// Asked for by number.
    Given,
}

impl ProfileChoice {
    /// `default`, `latest` or `flag`, as JSON lines say it.
    pub fn as_str(self) -> &'static str {
        match self {
            ProfileChoice::Default => "default",
            ProfileChoice::Latest => "latest",
            ProfileChoice::Given => "flag",
        }
    }
}

/// One setting: its name (the flag that overrides it, without the dashes, where there is one), its
/// value and where that came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileSetting {
    /// Kebab case, as the flag: `batch-pop`.
    pub name: &'static str,
    /// What it came to.
    pub value: SettingValue,
    /// Who decided.
    pub from: SettingOrigin,
}

impl ProfileSetting {
    /// The name in camel case, as JSON lines spell their fields: `batchPop`.
    pub fn field(&self) -> String {
        let mut field = String::with_capacity(self.name.len());
        let mut upper = false;
        for c in self.name.chars() {
            if c == '-' {
                upper = true;
            } else if upper {
                field.extend(c.to_uppercase());
                upper = false;
            } else {
                field.push(c);
            }
        }
        field
    }
}

/// A setting's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingValue {
    /// A choice among words: `delta`.
    Word(&'static str),
    /// A count: `1000`.
    Number(u64),
    /// On or off.
    Switch(bool),
}

impl fmt::Display for SettingValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SettingValue::Word(word) => f.write_str(word),
            SettingValue::Number(n) => write!(f, "{n}"),
            SettingValue::Switch(on) => f.write_str(if *on { "on" } else { "off" }),
        }
    }
}

/// Who decided a setting's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingOrigin {
    /// The client-go version's default.
    Profile,
    /// A flag given on the command line, which wins over the profile.
    Flag,
    /// The recording being replayed, which wins over both (it holds what the recorded informer
    /// asked for).
    Recording,
}

impl SettingOrigin {
    /// `profile`, `flag` or `recording`.
    pub fn as_str(self) -> &'static str {
        match self {
            SettingOrigin::Profile => "profile",
            SettingOrigin::Flag => "flag",
            SettingOrigin::Recording => "recording",
        }
    }
}

impl fmt::Display for InformerProfile {
    /// `client-go 1.36 (latest): fifo=atomic, batch-pop=1000, …, watch-list=off (recording)`: the
    /// version, then each setting; one that does not come from the profile says who set it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "client-go {}", self.client_go)?;
        match self.chosen {
            ProfileChoice::Default => {
                f.write_str(" (default; --client-go latest for today's informers)")?
            }
            ProfileChoice::Latest => f.write_str(" (latest)")?,
            ProfileChoice::Given => {}
        }
        f.write_str(":")?;
        for (i, setting) in self.settings.iter().enumerate() {
            let separator = if i == 0 { " " } else { ", " };
            write!(f, "{separator}{}={}", setting.name, setting.value)?;
            if setting.from != SettingOrigin::Profile {
                write!(f, " ({})", setting.from.as_str())?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_read_as_flags_and_say_who_overrode_them() {
        let profile = InformerProfile {
            client_go: "1.36".into(),
            chosen: ProfileChoice::Latest,
            settings: vec![
                ProfileSetting {
                    name: "fifo",
                    value: SettingValue::Word("delta"),
                    from: SettingOrigin::Flag,
                },
                ProfileSetting {
                    name: "batch-pop",
                    value: SettingValue::Number(1),
                    from: SettingOrigin::Profile,
                },
                ProfileSetting {
                    name: "watch-list",
                    value: SettingValue::Switch(false),
                    from: SettingOrigin::Recording,
                },
            ],
        };
        assert_eq!(
            profile.to_string(),
            "client-go 1.36 (latest): fifo=delta (flag), batch-pop=1, watch-list=off (recording)"
        );
        assert_eq!(profile.settings[1].field(), "batchPop");
        assert_eq!(profile.settings[0].field(), "fifo");
    }
}
