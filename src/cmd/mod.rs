//! What each subcommand does: translate flags into library calls and pick a renderer.

use crate::cli::{Cli, Command};

mod complete;
mod completion;
#[cfg(test)]
mod generated_files;
#[cfg(test)]
mod help_examples;
mod index;
mod index_at;
mod informer;
mod one_shot;
pub mod pipeline;
mod plan;
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

/// Runs `command` on one of `runtime`'s workers until it ends, rather than on the calling thread
/// as `Runtime::block_on` would. Every command that reads from a cluster runs so.
///
/// hyper reads a response on its connection's task, a worker's, and hands the body over frame by
/// frame, each hand-over waking the reader and each read waking the connection again. A reader
/// on the calling thread is outside the workers, so each of those wakes crosses threads: a
/// futex call and a context switch per frame, and a server that encodes a list as it sends it
/// (kube-apiserver 1.33+) sends it in frames of 2 KiB. On a worker, the two tasks mostly hand over
/// to each other through its LIFO slot.
fn run_on_worker<F, T>(runtime: &tokio::runtime::Runtime, command: F) -> anyhow::Result<T>
where
    F: std::future::Future<Output = anyhow::Result<T>> + Send + 'static,
    T: Send + 'static,
{
    runtime.block_on(async {
        match runtime.spawn(command).await {
            Ok(ended) => ended,
            Err(failed) => match failed.try_into_panic() {
                Ok(panic) => std::panic::resume_unwind(panic),
                Err(cancelled) => Err(anyhow::anyhow!("the command was cancelled: {cancelled}")),
            },
        }
    })
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
