//! What each subcommand does: translate flags into library calls and pick a renderer.

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
mod record;
mod rediscover;
mod replay;
mod signals;
mod target;
mod watch;

/// The async runtime every informer-running command blocks on: two workers, as many as this
/// tool's Reflectors and consumers need.
fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    use anyhow::Context as _;
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Runs the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Completion(args) => completion::run(&args),
        Command::Complete(args) => complete::run(&args),
        Command::Watch(args) => watch::run(args, &cli.global),
        Command::Index(args) => index::run(args),
        Command::Record(args) => record::run(args, &cli.global),
        Command::Replay(args) => replay::run(args, &cli.global),
    }
}
