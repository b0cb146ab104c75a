//! [`Stop`]: the one request that ends a session, whoever makes it (Ctrl-C, a limit, the end of
//! the input, a failure, a closed stdout), with the first reason given. Every wait of the session
//! ends with it: the informers through its [`token`](Stop::token), async waits through
//! [`wait`](Stop::wait), threads blocked in a system call (a write to a pipe nobody reads)
//! through [`wake_fd`](Stop::wake_fd).

use std::io::{PipeReader, PipeWriter};
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::Mutex;

use tokio_util::sync::CancellationToken;

use super::Ended;

pub(super) struct Stop {
    /// Cancelled at the request, after the reason is set.
    token: CancellationToken,
    reason: Mutex<Option<Ended>>,
    /// A pipe whose read end reports the end of the file once the write end is dropped, at the
    /// stop: what a thread polling a file descriptor watches. `None` if it could not be made.
    wake: Option<(PipeReader, Mutex<Option<PipeWriter>>)>,
}

impl Default for Stop {
    fn default() -> Self {
        Stop {
            token: CancellationToken::new(),
            reason: Mutex::new(None),
            wake: std::io::pipe()
                .ok()
                .map(|(reader, writer)| (reader, Mutex::new(Some(writer)))),
        }
    }
}

impl std::fmt::Debug for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stop")
            .field("reason", &self.reason())
            .finish()
    }
}

impl Stop {
    pub(super) fn request(&self, reason: Ended) {
        self.reason
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert(reason);
        self.token.cancel();
        if let Some((_, writer)) = &self.wake {
            drop(writer.lock().unwrap_or_else(|e| e.into_inner()).take());
        }
    }

    pub(super) fn requested(&self) -> bool {
        self.token.is_cancelled()
    }

    /// Cancelled at the stop: what the informers are stopped by.
    pub(super) fn token(&self) -> &CancellationToken {
        &self.token
    }

    pub(super) fn reason(&self) -> Option<Ended> {
        *self.reason.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Completes once a stop was requested.
    pub(super) async fn wait(&self) {
        self.token.cancelled().await;
    }

    /// A descriptor that becomes readable at the stop, for `poll`; `None` if there is none.
    pub(super) fn wake_fd(&self) -> Option<BorrowedFd<'_>> {
        self.wake.as_ref().map(|(reader, _)| reader.as_fd())
    }
}
