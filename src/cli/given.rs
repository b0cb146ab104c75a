//! Flags as the user gave them on the command line, to be written down and given again: `record`
//! writes its handler and controller flags into the recording's header (`replayWith`), and
//! `replay` parses them as its own.

use std::ffi::OsString;

use clap::CommandFactory as _;
use clap::parser::ValueSource;

use super::Cli;

/// The arguments of `argv` (a whole command line, program name first) that set one of `ids` of
/// its subcommand `subcommand`, as `--long VALUE` pairs in the order they were given (so that
/// repeated flags such as `--handler` keep their order), `--long=VALUE` for a flag whose value must
/// follow an `=`. Flags left at their defaults are not included; a command line that does not
/// parse, or names another subcommand, gives none.
pub fn given_flags(argv: &[OsString], subcommand: &str, ids: &[&str]) -> Vec<String> {
    let command = Cli::command();
    let Ok(matches) = command.clone().try_get_matches_from(argv) else {
        return Vec::new();
    };
    let (Some((name, given)), Some(definition)) =
        (matches.subcommand(), command.find_subcommand(subcommand))
    else {
        return Vec::new();
    };
    if name != subcommand {
        return Vec::new();
    }
    let mut flags: Vec<(usize, Vec<String>)> = Vec::new();
    for arg in definition.get_arguments() {
        let id = arg.get_id().as_str();
        if !ids.contains(&id) || given.value_source(id) != Some(ValueSource::CommandLine) {
            continue;
        }
        let Some(long) = arg.get_long() else {
            continue;
        };
        let (Some(indices), Some(values)) = (given.indices_of(id), given.get_raw(id)) else {
            continue;
        };
        for (index, value) in indices.zip(values) {
            let value = value.to_string_lossy();
            let words = if arg.is_require_equals_set() {
                vec![format!("--{long}={value}")]
            } else {
                vec![format!("--{long}"), value.into_owned()]
            };
            flags.push((index, words));
        }
    }
    flags.sort_by_key(|(index, _)| *index);
    flags.into_iter().flat_map(|(_, words)| words).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<OsString> {
        std::iter::once("kubectl-deltas")
            .chain(words.iter().copied())
            .map(OsString::from)
            .collect()
    }

    #[test]
    fn flags_come_in_the_order_given_with_equals_where_required() {
        let line = argv(&[
            "record",
            "cm",
            "--handler",
            "b,delay=1s",
            "-f",
            "x.jsonl",
            "--legacy-sync",
            "--controller=web,workers=2",
            "--handler",
            "a",
            "--resync",
            "30s",
        ]);
        let ids = ["handlers", "controllers", "legacy_sync", "fifo"];
        assert_eq!(
            given_flags(&line, "record", &ids),
            [
                "--handler",
                "b,delay=1s",
                "--legacy-sync=true",
                "--controller",
                "web,workers=2",
                "--handler",
                "a",
            ]
        );
    }

    #[test]
    fn defaults_and_other_subcommands_give_nothing() {
        let ids = ["handlers", "informer_kind", "view_kind"];
        assert!(given_flags(&argv(&["record", "cm"]), "record", &ids).is_empty());
        let watch = argv(&["watch", "cm", "--handler", "a"]);
        assert!(given_flags(&watch, "record", &ids).is_empty());
        assert!(given_flags(&argv(&["record"]), "record", &ids).is_empty());
    }
}
