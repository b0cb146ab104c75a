//! `__complete`: completion for `kubectl deltas <TAB>`, in the protocol of cobra's `__complete`
//! command, which kubectl (≥ 1.26) speaks with plugins.
//!
//! kubectl runs the executable `kubectl_complete-deltas` found on PATH with the plugin's words
//! and the word under the cursor (an empty string for a new word), and reads from its stdout one
//! candidate per line, optionally `candidate<TAB>description`, the last line being
//! `:<directive>`, cobra's `ShellCompDirective` bit set (kubectl's
//! `staging/src/k8s.io/kubectl/pkg/cmd/plugin/plugin_completion.go`). Our script passes the words
//! on to this command.
//!
//! Subcommands, flags and their fixed values come from the clap definition; `--context`,
//! `--cluster` and `--user` from the kubeconfig; resource names and namespaces from the cluster
//! when it answers within [`CLUSTER_BUDGET`] ([`BUDGET_VARIABLE`] changes the budget): resource
//! names through the discovery cache the commands share, namespaces cached for a minute. Nothing
//! is ever written to stderr: an answer that cannot be had is an empty one.

use std::io::Write;
use std::time::Duration;

use clap::builder::{PossibleValue, StyledStr};
use clap::{Arg, CommandFactory, ValueHint};
use kubectl_deltas::cache::INDEX_SPEC_FORMS;

use crate::cli::{Cli, CompleteArgs};

mod cache;
mod cluster;
mod line;

use line::{Line, Word};

/// How long a completion waits for the cluster by default, connection included. A shell user
/// presses TAB and waits; past half a second the completion feels broken, so it gives up instead.
pub const CLUSTER_BUDGET: Duration = Duration::from_millis(500);

/// Sets another budget (`2s`, `300ms`), for a cluster far away: the first TAB after a minute
/// then waits longer, the others read the cache.
pub const BUDGET_VARIABLE: &str = "KUBECTL_DELTAS_COMPLETION_TIMEOUT";

/// The budget: [`BUDGET_VARIABLE`] if it holds a duration, else [`CLUSTER_BUDGET`].
fn cluster_budget() -> Duration {
    std::env::var(BUDGET_VARIABLE)
        .ok()
        .and_then(|text| crate::cli::duration::parse_duration(&text).ok())
        .unwrap_or(CLUSTER_BUDGET)
}

/// cobra's `ShellCompDirective` bits.
mod directive {
    /// Add no space after the completion (the candidate is a prefix, such as `label:`).
    pub const NO_SPACE: u32 = 2;
    /// Do not fall back to file names when there is no candidate.
    pub const NO_FILE_COMP: u32 = 4;
    /// Only directory names.
    pub const FILTER_DIRS: u32 = 16;
    /// Keep the candidates in the given order instead of sorting them.
    pub const KEEP_ORDER: u32 = 32;
    /// Let the shell do its default: complete file names.
    pub const FILES: u32 = 0;
}

/// What to print: the candidates and the directive.
#[derive(Debug, Default, PartialEq)]
pub struct Reply {
    /// `(value, description)`; the description may be empty.
    pub candidates: Vec<(String, String)>,
    /// cobra's directive.
    pub directive: u32,
}

impl Reply {
    fn new(directive: u32) -> Self {
        Reply {
            candidates: Vec::new(),
            directive,
        }
    }

    /// The reply in cobra's protocol.
    pub fn to_protocol(&self) -> String {
        let mut out = String::new();
        for (value, description) in &self.candidates {
            out.push_str(value);
            if !description.is_empty() {
                out.push('\t');
                out.push_str(description);
            }
            out.push('\n');
        }
        out.push_str(&format!(":{}\n", self.directive));
        out
    }
}

pub fn run(args: &CompleteArgs) -> anyhow::Result<()> {
    // Whatever goes wrong, the shell gets no message: no panic text, no log line (even with
    // RUST_LOG set), only fewer candidates.
    std::panic::set_hook(Box::new(|_| {}));
    let words: Vec<String> = args
        .words
        .iter()
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    let reply =
        tracing::subscriber::with_default(tracing::subscriber::NoSubscriber::default(), || {
            complete(&words)
        });
    // A closed pipe or the like: the shell has gone, nobody to tell.
    let _ = std::io::stdout()
        .lock()
        .write_all(reply.to_protocol().as_bytes());
    Ok(())
}

/// Completes the words typed after `kubectl deltas`, the last one being the word under the cursor.
pub fn complete(words: &[String]) -> Reply {
    let mut root = Cli::command();
    root.build();
    let line = Line::read(&root, words);
    match &line.word {
        Word::Flag { partial } => flags(&line, partial),
        Word::Value {
            arg,
            prefix,
            partial,
        } => {
            let mut reply = values(&line, arg, partial);
            for (value, _) in &mut reply.candidates {
                value.insert_str(0, prefix);
            }
            reply
        }
        Word::Positional { index, partial } => positional(&line, *index, partial),
    }
}

/// The flags of the current subcommand that start with `partial`, long ones as `--name`, and short
/// ones as `-n` when only `-` is typed. Flags already given are left out unless repeatable.
fn flags(line: &Line, partial: &str) -> Reply {
    let mut reply = Reply::new(directive::NO_FILE_COMP);
    for arg in line.command.get_arguments() {
        if arg.is_hide_set() || arg.is_positional() {
            continue;
        }
        let id = arg.get_id().as_str();
        if line.given.contains(&id) && !repeatable(arg) {
            continue;
        }
        let help = first_line(arg.get_help());
        if let Some(long) = arg.get_long() {
            push(&mut reply, partial, format!("--{long}"), &help);
        }
        if partial == "-"
            && let Some(short) = arg.get_short()
        {
            push(&mut reply, partial, format!("-{short}"), &help);
        }
    }
    reply
}

/// The values of a flag.
fn values(line: &Line, arg: &Arg, partial: &str) -> Reply {
    let fixed = arg.get_possible_values();
    if !fixed.is_empty() {
        return possible_values(&fixed, partial);
    }
    let long = arg.get_long().unwrap_or_default();
    let value_name = value_name(arg);
    let names = match long {
        "context" | "cluster" | "user" => cluster::kubeconfig_names(line, long),
        "namespace" => cluster::namespaces(line),
        _ if value_name.starts_with("SPEC") => return index_specs(partial, &value_name),
        _ => return by_hint(arg),
    };
    let mut reply = Reply::new(directive::NO_FILE_COMP);
    for (name, description) in names {
        push(&mut reply, partial, name, &description);
    }
    reply
}

/// A subcommand name or the value of a positional argument. As with cobra, flags are offered
/// only once a `-` is typed.
fn positional(line: &Line, index: usize, partial: &str) -> Reply {
    if index == 0 && line.command.has_subcommands() {
        let mut reply = Reply::new(directive::NO_FILE_COMP);
        for sub in line.command.get_subcommands().filter(|s| !s.is_hide_set()) {
            let about = first_line(sub.get_about());
            push(&mut reply, partial, sub.get_name().to_owned(), &about);
        }
        return reply;
    }
    let Some(arg) = line.positional(index) else {
        return Reply::new(directive::NO_FILE_COMP);
    };
    let fixed = arg.get_possible_values();
    if !fixed.is_empty() {
        return possible_values(&fixed, partial);
    }
    let value_name = value_name(arg);
    if value_name.starts_with("RESOURCE") {
        return resources(line, partial, value_name.contains(','));
    }
    by_hint(arg)
}

/// Resource names from discovery; with `list`, the last item of a comma-separated list
/// (`deploy,r` → `deploy,replicasets.apps`).
fn resources(line: &Line, partial: &str, list: bool) -> Reply {
    let (head, last) = match partial.rsplit_once(',') {
        Some((head, last)) if list => (format!("{head},"), last),
        _ => (String::new(), partial),
    };
    let already: Vec<&str> = head.split(',').collect();
    let mut reply = Reply::new(directive::NO_FILE_COMP);
    for (name, kind) in cluster::resources(line) {
        if !already.contains(&name.as_str()) && name.starts_with(last) {
            reply.candidates.push((format!("{head}{name}"), kind));
        }
    }
    reply
}

/// Index specs from the forms the library documents (`label:<key>` offers `label:`), for
/// `SPEC`, or the start of `SPEC=VALUE`.
fn index_specs(partial: &str, value_name: &str) -> Reply {
    let mut reply = Reply::new(directive::NO_FILE_COMP | directive::KEEP_ORDER);
    for form in INDEX_SPEC_FORMS.split(',').map(str::trim) {
        let spec = match form.split_once('<') {
            Some((kind, _)) => kind.to_owned(),
            None if value_name.contains('=') => format!("{form}="),
            None => form.to_owned(),
        };
        if spec.ends_with([':', '=']) && spec.starts_with(partial) {
            // The user goes on typing a key or a value right after it.
            reply.directive |= directive::NO_SPACE;
        }
        push(&mut reply, partial, spec, "");
    }
    reply
}

fn possible_values(values: &[PossibleValue], partial: &str) -> Reply {
    let mut reply = Reply::new(directive::NO_FILE_COMP | directive::KEEP_ORDER);
    for value in values.iter().filter(|v| !v.is_hide_set()) {
        let help = first_line(value.get_help());
        push(&mut reply, partial, value.get_name().to_owned(), &help);
    }
    reply
}

/// File names for path arguments, nothing for the others.
fn by_hint(arg: &Arg) -> Reply {
    Reply::new(match arg.get_value_hint() {
        ValueHint::AnyPath | ValueHint::FilePath | ValueHint::ExecutablePath => directive::FILES,
        ValueHint::DirPath => directive::FILTER_DIRS,
        _ => directive::NO_FILE_COMP,
    })
}

fn push(reply: &mut Reply, partial: &str, value: String, description: &str) {
    if value.starts_with(partial) {
        reply.candidates.push((value, description.to_owned()));
    }
}

fn repeatable(arg: &Arg) -> bool {
    matches!(
        arg.get_action(),
        clap::ArgAction::Append | clap::ArgAction::Count
    )
}

fn value_name(arg: &Arg) -> String {
    arg.get_value_names()
        .and_then(|names| names.first())
        .map_or_else(
            || arg.get_id().as_str().to_ascii_uppercase(),
            |name| name.to_string(),
        )
}

/// The first line of a help text, without its final period: a description beside a candidate.
fn first_line(help: Option<&StyledStr>) -> String {
    let help = help.map(|h| h.to_string()).unwrap_or_default();
    let line = help.lines().next().unwrap_or_default().trim();
    line.strip_suffix('.').unwrap_or(line).to_owned()
}
