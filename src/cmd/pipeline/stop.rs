//! [`Stop`]: the one request that ends a session, whoever makes it (Ctrl-C, a limit, the end of
//! the input, a failure, a closed stdout), with the first reason given. Every wait of the session
//! ends with it: the informers through its [`token`](Stop::token), async waits through
//! [`wait`](Stop::wait), threads blocked in a system call (a write to a pipe nobody reads)
//! through [`wake_fd`](Stop::wake_fd).

use std::io::{PipeReader, PipeWriter};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::Ended;

pub(super) struct Stop {
    /// Cancelled at the request, after the reason is set.
    token: CancellationToken,
    reason: Mutex<Option<Ended>>,
    /// A pipe whose read end reports the end of the file once the write end is dropped, at the
    /// stop: what a thread polling a file descriptor watches. `None` if it could not be made.
    wake: Option<(PipeReader, Mutex<Option<PipeWriter>>)>,
    /// Run once, at the first request, before anything waiting is woken.
    before_wake: Mutex<Vec<Box<dyn FnOnce() + Send>>>,
}

impl Default for Stop {
    fn default() -> Self {
        Stop {
            token: CancellationToken::new(),
            reason: Mutex::new(None),
            wake: std::io::pipe()
                .ok()
                .map(|(reader, writer)| (reader, Mutex::new(Some(writer)))),
            before_wake: Mutex::default(),
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
        let hooks =
            std::mem::take(&mut *self.before_wake.lock().unwrap_or_else(|e| e.into_inner()));
        for hook in hooks {
            hook();
        }
        self.token.cancel();
        if let Some((_, writer)) = &self.wake {
            drop(writer.lock().unwrap_or_else(|e| e.into_inner()).take());
        }
    }

    /// Runs `hook` at the stop, before the waits it ends are woken (at once if the stop was
    /// requested already): what must happen before a handler's delay is cut short.
    pub(super) fn before_wake(&self, hook: impl FnOnce() + Send + 'static) {
        let mut hooks = self.before_wake.lock().unwrap_or_else(|e| e.into_inner());
        if self.requested() {
            drop(hooks);
            hook();
        } else {
            hooks.push(Box::new(hook));
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

    /// Blocks this thread for `delay`, or until the stop; needs no runtime, so that a thread
    /// holding a lock the runtime's tasks wait for (a plain informer's handler, inside the pop)
    /// still wakes at the stop.
    pub(super) fn sleep(&self, delay: Duration) {
        let deadline = Instant::now() + delay;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || self.requested() {
                return;
            }
            let Some(fd) = self.wake_fd() else {
                std::thread::sleep(left.min(Duration::from_millis(10)));
                continue;
            };
            let mut fds = [libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            }];
            let millis = libc::c_int::try_from(left.as_millis().max(1)).unwrap_or(libc::c_int::MAX);
            // SAFETY: `fds` is a valid array of one pollfd for the duration of the call, and the
            // descriptor is open (borrowed from `self`).
            unsafe { libc::poll(fds.as_mut_ptr(), 1, millis) };
        }
    }
}

/// The workers of a live controller stop with the session.
impl kubectl_deltas::cache::workqueue::Interrupt for Stop {
    fn requested(&self) -> bool {
        Stop::requested(self)
    }

    fn sleep(&self, duration: Duration) {
        Stop::sleep(self, duration);
    }
}
