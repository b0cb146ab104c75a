//! `kubectl-deltas`: parse, dispatch, map errors to exit codes. Nothing else.

use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;

mod cli;
mod cmd;
mod log_format;

use cli::exit::{Exit, classify, message, note};

// jemalloc frees an object cheaply on any thread: a replay parses objects on its reader thread
// and the consumer frees the ones the cache replaces, which glibc's malloc serialises on an arena
// lock (twice the replay throughput), and it keeps a 50k-object cache smaller than mimalloc does
// (docs/benchmarks.md).
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
    let cli = match cli::Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help/version to stdout and usage errors to stderr, with exit code 0 or 2;
            // its errors start as the tool's own do.
            if e.use_stderr() {
                let _ = write!(io::stderr(), "kubectl-deltas: ");
            }
            let _ = e.print();
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
            let _ = writeln!(io::stderr(), "kubectl-deltas: error: {}", message(&error));
            if let Some(note) = note(&error) {
                let _ = writeln!(io::stderr(), "kubectl-deltas: note: {note}");
            }
            classify(&error).into()
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
