//! `completion SHELL`: the shell completion script generated from the clap definition.

use std::io::Write;

use clap::CommandFactory;

use crate::cli::{Cli, CompletionArgs};

pub fn run(args: &CompletionArgs) -> anyhow::Result<()> {
    let mut script = Vec::new();
    clap_complete::generate(
        args.shell,
        &mut Cli::command(),
        "kubectl-deltas",
        &mut script,
    );
    std::io::stdout().lock().write_all(&script)?;
    Ok(())
}
