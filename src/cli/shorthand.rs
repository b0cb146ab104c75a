//! `kubectl deltas RESOURCE` as `kubectl deltas watch RESOURCE`, and a mistyped subcommand told
//! apart from a resource name.

use std::ffi::OsString;

use clap::CommandFactory;

use super::Cli;

/// A first word that is not a subcommand but reads like a mistyped one (`replya`, `indx`): taken
/// for the `watch` shorthand it would end in a kubeconfig error or watch's usage, far from the
/// typo.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown subcommand {typed:?}; did you mean {suggestion:?}? (to watch a resource of that \
     name, write `kubectl deltas watch {typed}`)"
)]
pub struct MistypedSubcommand {
    /// What was typed.
    pub typed: String,
    /// The closest subcommand.
    pub suggestion: String,
}

/// `kubectl deltas RESOURCE …` → `kubectl deltas watch RESOURCE …`: inserts `watch` when the
/// first argument that is neither a global flag (with its value) nor a subcommand is a resource
/// or a flag of `watch`. Help, version and the bare command are left alone. A word within two
/// edits of a subcommand (one for short words, as discovery suggests resource names) is refused
/// as a typo instead: no resource has such a name except a CRD, which `watch NAME` still reaches.
pub fn with_watch_shorthand(args: Vec<OsString>) -> Result<Vec<OsString>, MistypedSubcommand> {
    let command = Cli::command();
    let visible: Vec<&str> = command
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| c.get_name())
        .collect();
    let subcommands: Vec<&str> = command
        .get_subcommands()
        .flat_map(|c| std::iter::once(c.get_name()).chain(c.get_all_aliases()))
        .chain(["help"])
        .collect();
    let globals: Vec<&clap::Arg> = command
        .get_arguments()
        .filter(|a| a.is_global_set())
        .collect();
    let takes_value = |a: &clap::Arg| a.get_action().takes_values();
    let mut i = 1;
    while let Some(arg) = args.get(i) {
        let Some(text) = arg.to_str() else { break };
        if matches!(text, "-h" | "--help" | "-V" | "--version") || subcommands.contains(&text) {
            return Ok(args);
        }
        if let Some(long) = text.strip_prefix("--") {
            let (name, inline_value) = match long.split_once('=') {
                Some((name, _)) => (name, true),
                None => (long, false),
            };
            match globals.iter().find(|a| a.get_long() == Some(name)) {
                Some(global) => {
                    i += if takes_value(global) && !inline_value {
                        2
                    } else {
                        1
                    };
                    continue;
                }
                None => break,
            }
        }
        if let Some(shorts) = text.strip_prefix('-').filter(|s| !s.is_empty()) {
            // A cluster of short global switches such as `-vv`.
            let all_global_switches = shorts.chars().all(|c| {
                globals
                    .iter()
                    .any(|a| a.get_short() == Some(c) && !takes_value(a))
            });
            if all_global_switches {
                i += 1;
                continue;
            }
        }
        break;
    }
    if let Some(typed) = args.get(i).and_then(|a| a.to_str())
        && !typed.starts_with('-')
        && let Some(suggestion) = closest_subcommand(typed, &visible)
    {
        return Err(MistypedSubcommand {
            typed: typed.to_owned(),
            suggestion: suggestion.to_owned(),
        });
    }
    let mut args = args;
    if i < args.len() {
        args.insert(i, OsString::from("watch"));
    }
    Ok(args)
}

/// The subcommand `typed` is a typo of, if any: the closest within two edits (a transposition
/// counting as one), or one edit when either word has at most three letters (`ep` is not `help`).
fn closest_subcommand<'a>(typed: &str, subcommands: &[&'a str]) -> Option<&'a str> {
    subcommands
        .iter()
        .map(|name| (strsim::osa_distance(typed, name), *name))
        .filter(|(distance, name)| {
            let shorter = typed.chars().count().min(name.chars().count());
            *distance <= if shorter <= 3 { 1 } else { 2 }
        })
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| name)
}
