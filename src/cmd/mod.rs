//! What each subcommand does: translate flags into library calls and pick a renderer.

use anyhow::bail;

use crate::cli::{Cli, Command};

mod complete;
mod completion;
#[cfg(test)]
mod generated_files;
#[cfg(test)]
mod help_examples;
mod index;
mod informer;
mod one_shot;
pub mod pipeline;
mod target;
mod watch;

/// Runs the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Completion(args) => completion::run(&args),
        Command::Complete(args) => complete::run(&args),
        Command::Watch(args) => watch::run(args, &cli.global),
        Command::Index(args) => index::run(args),
        Command::Record(_) => not_yet("record", 6),
        Command::Replay(_) => not_yet("replay", 6),
    }
}

fn not_yet(command: &str, issue: u32) -> anyhow::Result<()> {
    bail!(
        "`kubectl deltas {command}` is not implemented yet (issue #{issue}); \
         the informer cache it will run is available as a library (kubectl_deltas::cache)"
    )
}
