//! The signals that end a session: SIGINT (Ctrl-C), SIGTERM (`kill`, a container runtime) and
//! SIGHUP (the terminal went away). The first ends the session normally, as Ctrl-C always did:
//! the summary on stderr, a recording finished, exit 0. The next one, of any of them, exits at
//! once with the shell's code for that signal (128 + its number), for a user who does not want to
//! wait for that.
//!
//! They are handled on a thread of their own, with a runtime of its own, so that a second signal
//! works whatever the session's runtime is busy with.

use std::sync::OnceLock;

use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::watch;

/// The signals handled, with their numbers.
const HANDLED: [(SignalKind, i32); 3] = [
    (SignalKind::interrupt(), libc::SIGINT),
    (SignalKind::terminate(), libc::SIGTERM),
    (SignalKind::hangup(), libc::SIGHUP),
];

/// Set to the number of the first signal received.
static FIRST: OnceLock<Option<watch::Receiver<Option<i32>>>> = OnceLock::new();

/// Completes when the first SIGINT, SIGTERM or SIGHUP arrives (at once if one arrived since the
/// first call). From the first call on (not the first poll), the signals no longer end the
/// process by themselves, except a second one. Never completes if they cannot be handled.
pub fn stop_requested() -> impl Future<Output = ()> + Send + 'static {
    let first = FIRST.get_or_init(listen).clone();
    async move {
        let Some(mut first) = first else {
            return std::future::pending().await;
        };
        if first.wait_for(Option::is_some).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// Starts the listening thread; returns once the handlers are installed, so that a signal sent
/// after the first call to [`stop_requested`] is never one that kills the process.
fn listen() -> Option<watch::Receiver<Option<i32>>> {
    let (first_tx, first_rx) = watch::channel(None);
    let (installed_tx, installed_rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .build();
            let Ok(runtime) = runtime else {
                let _ = installed_tx.send(false);
                return;
            };
            runtime.block_on(async move {
                let mut streams = Vec::new();
                for (kind, number) in HANDLED {
                    match signal(kind) {
                        Ok(stream) => streams.push((stream, number)),
                        Err(error) => {
                            tracing::debug!("cannot handle signal {number}: {error}");
                        }
                    }
                }
                let _ = installed_tx.send(!streams.is_empty());
                if streams.is_empty() {
                    return;
                }
                loop {
                    let received = futures_util::future::select_all(streams.iter_mut().map(
                        |(stream, number)| {
                            Box::pin(async move { stream.recv().await.map(|()| *number) })
                        },
                    ));
                    let (number, _, _) = received.await;
                    let Some(number) = number else { return };
                    if first_tx.borrow().is_some() {
                        // The second: the user insists. The files not yet complete stay as they
                        // were (`OutputFile`); their temporary files go.
                        kubectl_deltas::source::output_file::remove_temporaries();
                        std::process::exit(128 + number);
                    }
                    first_tx.send_replace(Some(number));
                }
            });
        });
    if spawned.is_err() {
        return None;
    }
    installed_rx
        .recv()
        .ok()
        .filter(|installed| *installed)
        .map(|_| first_rx)
}
