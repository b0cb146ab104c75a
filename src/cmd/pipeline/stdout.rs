//! Standard output for a session's renderer, written so that a stop never waits for a reader
//! that does not read. `kubectl deltas watch pods -o jsonl | slow-reader`, then Ctrl-C: the
//! pipe is full, and a plain write would block until the reader takes more, holding the output
//! (and so the summary) until then. Here a write to a pipe, socket or terminal first waits until
//! the descriptor can take at least a chunk of the text, or the session stops; a stop with the
//! descriptor still full gives up on the rest, which is dropped.
//!
//! Nothing is buffered: every write goes to the descriptor before `write` returns, so the
//! renderers' line-by-line flushing keeps its meaning (docs/design.md, "When stdout is slower
//! than the watch").

use std::fs::File;
use std::io::{self, IsTerminal as _, Write};
use std::os::fd::{AsFd as _, AsRawFd as _};
use std::os::unix::fs::FileTypeExt as _;
use std::sync::Arc;

use super::stop::Stop;

/// At most this much per write once `poll` says the descriptor is writable: a pipe that reports
/// itself writable has room for `PIPE_BUF` bytes (a free page), so such a write never blocks.
const CHUNK: usize = libc::PIPE_BUF;

/// Standard output, given up on at `stop` when it cannot be written; `io::stdout()` if its
/// descriptor cannot be duplicated.
pub(super) fn stdout(stop: Arc<Stop>) -> Box<dyn Write + Send> {
    let Ok(fd) = io::stdout().as_fd().try_clone_to_owned() else {
        return Box::new(io::stdout());
    };
    let file = File::from(fd);
    // Files and /dev/null always take what is written; only these may not.
    let may_block = file.metadata().is_ok_and(|m| {
        let kind = m.file_type();
        kind.is_fifo() || kind.is_socket()
    }) || file.is_terminal();
    Box::new(StopAware {
        file,
        stop,
        may_block,
    })
}

struct StopAware {
    file: File,
    stop: Arc<Stop>,
    may_block: bool,
}

impl Write for StopAware {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.may_block || buf.is_empty() {
            return self.file.write(buf);
        }
        let Some(stop) = self.stop.wake_fd() else {
            return self.file.write(buf);
        };
        loop {
            let mut fds = [
                libc::pollfd {
                    fd: self.file.as_raw_fd(),
                    events: libc::POLLOUT,
                    revents: 0,
                },
                libc::pollfd {
                    fd: stop.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            // SAFETY: `fds` is a valid array of two pollfd structures for the duration of the
            // call, and both descriptors are open (borrowed from `self.file` and `self.stop`).
            let ready = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
            if ready < 0 {
                let error = io::Error::last_os_error();
                if error.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(error);
            }
            // Writable, or an error condition that the write reports (a reader gone: EPIPE).
            if fds[0].revents != 0 {
                return self.file.write(&buf[..buf.len().min(CHUNK)]);
            }
            if fds[1].revents != 0 {
                return Err(io::Error::other(GaveUp));
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The error of a write given up at the stop: what it held is dropped, quietly.
#[derive(Debug, thiserror::Error)]
#[error("the session stopped before the reader took the rest of the output")]
pub(super) struct GaveUp;

impl GaveUp {
    /// Whether `error` is a write given up at the stop.
    pub(super) fn is(error: &io::Error) -> bool {
        error.get_ref().is_some_and(|e| e.is::<GaveUp>())
    }
}
