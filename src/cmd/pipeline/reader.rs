//! Noticing that the reader of stdout went away (`kubectl deltas watch pods | head -3`) without
//! waiting for the next write: on a quiet cluster that write may never come, and the shell would
//! wait for us forever.

use std::io;
use std::os::fd::AsFd;

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// Completes when stdout is a pipe whose reading end was closed (the kernel reports an error
/// condition on the writing end). Never completes for terminals and files, which cannot lose their
/// reader this way, or when the descriptor cannot be polled.
pub async fn stdout_reader_gone() {
    let Ok(fd) = io::stdout().as_fd().try_clone_to_owned() else {
        return std::future::pending().await;
    };
    // Regular files and /dev/null cannot be registered with epoll; that is fine, see above.
    // SAFETY: `fd` is an open descriptor owned by the AsyncFd, so it stays open and refers to the
    // same file description until the AsyncFd is dropped.
    let registered = unsafe { AsyncFd::register_with_interest(fd, Interest::ERROR) };
    let Ok(fd) = registered else {
        return std::future::pending().await;
    };
    loop {
        match fd.ready(Interest::ERROR).await {
            Ok(guard) if guard.ready().is_error() => return,
            Ok(mut guard) => guard.clear_ready(),
            Err(_) => return std::future::pending().await,
        }
    }
}
