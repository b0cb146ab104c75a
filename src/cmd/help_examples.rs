//! The examples in `--help` are real command lines: every subcommand shows two to four, and each
//! one parses with the current flags. `watch -h` fits one screen, and `watch --help` ends with
//! how to read a row.

use clap::{Command, CommandFactory, Parser};

use crate::cli::Cli;

/// The command lines of an `Examples:` section, as argument lists without the program name.
/// Shell syntax after the arguments (`| gzip`, `> file`, `< file`) is dropped.
fn examples(command: &Command) -> Vec<Vec<String>> {
    // `watch -h` points to `--help` for its examples, to fit one screen.
    let text = command
        .get_after_long_help()
        .or(command.get_after_help())
        .map(|h| h.to_string())
        .unwrap_or_default();
    text.lines()
        .map(str::trim)
        .filter_map(|line| {
            line.strip_prefix("kubectl deltas ")
                .or_else(|| line.strip_prefix("kubectl-deltas "))
        })
        .map(|args| {
            args.split_whitespace()
                .take_while(|word| !["|", ">", "<"].contains(word))
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

#[test]
fn every_subcommand_shows_two_to_four_examples_that_parse() {
    let root = Cli::command();
    for sub in root.get_subcommands().filter(|s| !s.is_hide_set()) {
        let examples = examples(sub);
        assert!(
            (2..=4).contains(&examples.len()),
            "`{}` has {} examples",
            sub.get_name(),
            examples.len()
        );
        for args in examples {
            assert_eq!(args[0], sub.get_name(), "an example of another command");
            let argv = std::iter::once("kubectl-deltas".to_owned()).chain(args.iter().cloned());
            if let Err(e) = Cli::try_parse_from(argv) {
                panic!(
                    "the example `kubectl deltas {}` does not parse:\n{e}",
                    args.join(" ")
                );
            }
        }
    }
}

#[test]
fn the_top_level_help_keeps_its_examples_and_exit_codes() {
    let root = Cli::command();
    for args in examples(&root) {
        let argv = std::iter::once("kubectl-deltas".to_owned()).chain(args.iter().cloned());
        assert!(Cli::try_parse_from(argv).is_ok(), "{args:?}");
    }
    let after = root.get_after_help().unwrap().to_string();
    assert!(after.contains("Exit codes:") && after.contains("4  `index --fail-empty`"));
}

#[test]
fn watch_short_help_fits_one_screen_and_long_help_ends_with_how_to_read_a_row() {
    let mut root = Cli::command();
    let watch = root.find_subcommand_mut("watch").unwrap();
    let short = watch.render_help().to_string();
    let lines = short.lines().count();
    assert!(lines <= 50, "`watch -h` is {lines} lines:\n{short}");
    for heading in [
        "Output:",
        "Handlers and controllers:",
        "Cluster (kubectl's flags):",
        "Informer:",
    ] {
        assert!(short.contains(heading), "{heading}\n{short}");
    }
    let long = watch.render_long_help().to_string();
    assert!(long.contains("Reflector (advanced):"), "{long}");
    let (_, legend) = long
        .split_once("How to read a row:")
        .expect("watch --help explains a row");
    assert!(
        legend.contains("DELTAS") && legend.contains("tombstone"),
        "{legend}"
    );
    // Its sample rows are rows the binary writes: each is a line of the bundled recording's
    // golden timeline, which the replay tests compare with the binary's output.
    let golden = include_str!("../../tests/golden/replay_expired-watch.timeline.txt");
    let samples: Vec<&str> = legend
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("17:31:"))
        .collect();
    assert_eq!(samples.len(), 4, "{legend}");
    // The README's sample too.
    let readme = include_str!("../../README.md");
    let (_, section) = readme.split_once("## How to read a row").unwrap();
    let readme_samples: Vec<&str> = section
        .lines()
        .take_while(|l| !l.starts_with("These are rows"))
        .filter(|l| l.starts_with("17:31:"))
        .collect();
    assert_eq!(readme_samples.len(), 5, "{section}");
    for sample in samples.into_iter().chain(readme_samples) {
        assert!(
            golden.lines().any(|l| l.trim_end() == sample),
            "not a row of `replay docs/recordings/expired-watch.jsonl`: {sample:?}"
        );
    }
    // Nothing follows it: no flag, no other section.
    assert!(
        !legend.contains("\n  -") && !legend.contains("Examples:"),
        "{legend}"
    );
}
