//! `kubectl-deltas`: parse, dispatch, map errors to exit codes. Nothing else.

use std::ffi::OsString;
use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;

mod cli;
mod cmd;
mod log_format;

use cli::exit::{Exit, classify, message, note};

// jemalloc frees an object cheaply on any thread: a replay parses objects on its reader thread
// and the consumer frees the ones the cache replaces, which glibc's malloc serialises on an arena
// lock; and it keeps a large cache smaller than mimalloc does (docs/benchmarks.md).
#[cfg(feature = "jemalloc")]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let args = match cli::with_watch_shorthand(std::env::args_os().collect()) {
        Ok(args) => args,
        Err(typo) => {
            let _ = writeln!(io::stderr(), "kubectl-deltas: error: {typo}");
            return Exit::Usage.into();
        }
    };
    let cli = match cli::Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help/version to stdout and usage errors to stderr, with exit code 0 or 2;
            // its errors start as the tool's own do.
            print_clap_error(&e, &args);
            return ExitCode::from(e.exit_code() as u8);
        }
    };
    init_logging(
        cli.global.verbose,
        cli.global.color.enabled(io::stderr().is_terminal()),
    );
    match cmd::run(cli) {
        Ok(()) => Exit::Success.into(),
        Err(error) => {
            if is_broken_pipe(&error) {
                // `kubectl deltas … | head`: the reader has all it wanted.
                return Exit::Success.into();
            }
            // `--compare`'s stacks differing is an answer, not an error.
            let kind = match classify(&error) {
                Exit::Differ => "",
                _ => "error: ",
            };
            let _ = writeln!(io::stderr(), "kubectl-deltas: {kind}{}", message(&error));
            if let Some(note) = note(&error) {
                let _ = writeln!(io::stderr(), "kubectl-deltas: note: {note}");
            }
            classify(&error).into()
        }
    }
}

/// clap's usage errors quote the argument (`invalid value '…'`), raw: one holding escape
/// sequences would reach a terminal as such (and retitle its window, say). When an argument holds
/// control characters, the error printed is that of the arguments with them escaped, as every
/// other message escapes them (`\u{1b}`); should those parse, the error without any styling.
fn print_clap_error(error: &clap::Error, args: &[OsString]) {
    if error.use_stderr() {
        let _ = write!(io::stderr(), "kubectl-deltas: ");
    }
    let raw = |arg: &OsString| arg.to_string_lossy().chars().any(char::is_control);
    if !error.use_stderr() || !args.iter().any(raw) {
        let _ = error.print();
        return;
    }
    let escaped = args.iter().map(|arg| {
        OsString::from(kubectl_deltas::render::printable(&arg.to_string_lossy()).into_owned())
    });
    match cli::Cli::try_parse_from(escaped) {
        Err(escaped) if escaped.use_stderr() => {
            let _ = escaped.print();
        }
        // StyledStr's Display drops every escape sequence, clap's and the argument's.
        _ => {
            let _ = write!(io::stderr(), "{}", error.render());
        }
    }
}

fn init_logging(verbose: u8, color: bool) {
    // Without -v, only our own warnings: kube logs every failed request at ERROR, and the
    // Reflector already reports those failures (and its retries) in the output.
    let default = match verbose {
        0 => "kubectl_deltas=warn",
        1 => "kubectl_deltas=info,warn",
        2 => "kubectl_deltas=debug,kube=debug,info",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let log = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr)
        // A log read from a file or a CI console has no use for escape codes.
        .with_ansi(color)
        // When stderr is gone (`2>&1 | head`), a log line is lost; reporting that on stderr, as
        // tracing-subscriber would, panics and takes the command down with it.
        .log_internal_errors(false)
        .with_target(verbose >= 2);
    if verbose == 0 {
        log.event_format(log_format::Notes).init();
    } else {
        log.init();
    }
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}
