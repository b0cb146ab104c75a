//! `completion SHELL`: the shell completion script generated from the clap definition. The same
//! scripts are committed in `completions/` (see `generated_files`).

use std::io::Write;

use clap::{Command, CommandFactory};
use clap_complete::Shell;

use crate::cli::{Cli, CompletionArgs};

/// The name the scripts complete: the binary, as installed on PATH.
pub const BIN_NAME: &str = "kubectl-deltas";

pub fn run(args: &CompletionArgs) -> anyhow::Result<()> {
    std::io::stdout().lock().write_all(&script(args.shell))?;
    Ok(())
}

/// The completion script for `shell`.
pub fn script(shell: Shell) -> Vec<u8> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut visible(Cli::command()), BIN_NAME, &mut script);
    if shell == Shell::Bash {
        script = fix_bash_states(script);
    }
    script
}

/// clap_complete 4.6 (clap-rs/clap#6421) spells the bash script's subcommand states two ways
/// when the binary's name has a hyphen: the loop that reads the words sets
/// `kubectl__deltas__subcmd__watch`, the `case` that completes matches
/// `kubectl__subcmd__deltas__subcmd__watch`, so nothing after a subcommand would complete. This
/// spells the second as the first; once clap_complete is fixed it changes nothing.
fn fix_bash_states(script: Vec<u8>) -> Vec<u8> {
    let wrong = BIN_NAME.replace('-', "__subcmd__");
    let right = BIN_NAME.replace('-', "__");
    String::from_utf8(script)
        .expect("clap_complete writes UTF-8")
        .replace(&wrong, &right)
        .into_bytes()
}

/// The top-level command without its hidden subcommands (`__complete`), which clap_complete would
/// otherwise offer: a copy of what the scripts use of it (name, texts, flags, settings) with only
/// the visible subcommands.
fn visible(root: Command) -> Command {
    debug_assert_eq!(root.get_name(), BIN_NAME);
    // Only whether there is a version matters here (it adds `--version`), not its text.
    let version = root.get_version().map(|_| env!("CARGO_PKG_VERSION"));
    let mut copy = Command::new(BIN_NAME)
        .version(version)
        .subcommand_required(root.is_subcommand_required_set())
        .arg_required_else_help(root.is_arg_required_else_help_set())
        .args(root.get_arguments().cloned())
        .subcommands(root.get_subcommands().filter(|s| !s.is_hide_set()).cloned());
    if let Some(about) = root.get_about() {
        copy = copy.about(about.clone());
    }
    if let Some(about) = root.get_long_about() {
        copy = copy.long_about(about.clone());
    }
    copy
}
