//! Standard output for a session's renderer, written so that a stop never waits for a reader
//! that does not read, and so that a burst of lines costs a few system calls rather than two per
//! line.
//!
//! `kubectl deltas watch pods -o jsonl | slow-reader`, then Ctrl-C: the pipe is full, and a plain
//! write would block until the reader takes more, holding the output (and so the summary) until
//! then. Here a write to a pipe, socket or terminal first waits until the descriptor can take at
//! least a chunk of the text, or the session stops; a stop with the descriptor still full gives up
//! on the rest, which is dropped.
//!
//! Lines are never held back for later ones. Into a pipe or socket, a writer thread of its own
//! ([`Coalescing`]) writes whatever the renderer has handed over, as soon as it is handed over: a line written while the thread is idle goes out at once, and the lines handed over while
//! it writes go out together in its next write, so that a burst of lines costs a few system calls
//! and wake-ups of the reader, not one per line. A terminal is written directly, between the
//! status bar's redraws, and so are files and /dev/null, which wake nobody: handing each line to a
//! thread costs more there than the write. [`Drain::wait`] waits until everything handed over is written: before a limit or the
//! end of the input stops the session (so that a stop gives up on nothing the session finished
//! writing), and at its end, before the summary.

use std::fs::File;
use std::io::{self, IsTerminal as _, Write};
use std::os::fd::{AsFd as _, AsRawFd as _};
use std::os::unix::fs::FileTypeExt as _;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use super::stop::Stop;

/// At most this much per write once `poll` says the descriptor is writable: a pipe that reports
/// itself writable has room for `PIPE_BUF` bytes (a free page), so such a write never blocks.
const CHUNK: usize = libc::PIPE_BUF;

/// Handed over but not yet written, beyond which a renderer's write waits for the writer thread,
/// as a write to a full pipe waits for its reader: a fast replay into a slow reader must not
/// gather its output in memory.
const PENDING_LIMIT: usize = 1 << 20;

/// Standard output, and the handle that waits until what was written to it is out.
pub(super) struct Stdout {
    pub(super) writer: Box<dyn Write + Send>,
    pub(super) drain: Drain,
}

impl Stdout {
    /// Written directly by the renderer: nothing to drain.
    pub(super) fn direct(writer: Box<dyn Write + Send>) -> Self {
        Stdout {
            writer,
            drain: Drain::default(),
        }
    }
}

/// Standard output, given up on at `stop` when it cannot be written; `io::stdout()` if its
/// descriptor cannot be duplicated.
pub(super) fn stdout(stop: Arc<Stop>) -> Stdout {
    let Ok(fd) = io::stdout().as_fd().try_clone_to_owned() else {
        return Stdout::direct(Box::new(io::stdout()));
    };
    let file = File::from(fd);
    let terminal = file.is_terminal();
    // Files and /dev/null always take what is written; only these may not.
    let may_block = file.metadata().is_ok_and(|m| {
        let kind = m.file_type();
        kind.is_fifo() || kind.is_socket()
    }) || terminal;
    let out = StopAware {
        file,
        stop,
        may_block,
    };
    // Only a pipe or a socket has a reader that each write wakes; a file or /dev/null takes a
    // write for less than waking the writer thread would cost.
    if terminal || !may_block {
        return Stdout::direct(Box::new(out));
    }
    Coalescing::spawn(out)
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
                return self.file.write(&buf[..whole_lines(buf)]);
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

/// How much of `buf` to write at once: at most [`CHUNK`], ending after a newline where there is
/// one. A write of at most `PIPE_BUF` bytes goes into a pipe whole or not at all, so a stop that
/// gives up between two writes leaves the reader whole lines (of up to `CHUNK` bytes), never the
/// first half of one: the writer thread hands over many lines at once, and a JSON-lines reader
/// must not end on a torn line.
fn whole_lines(buf: &[u8]) -> usize {
    if buf.len() <= CHUNK {
        return buf.len();
    }
    memchr::memrchr(b'\n', &buf[..CHUNK]).map_or(CHUNK, |newline| newline + 1)
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

/// What the renderer and the writer thread share.
#[derive(Default)]
struct Shared {
    state: Mutex<Pending>,
    /// Signalled when text is handed over to an idle writer, and at the close.
    handed: Condvar,
    /// Signalled when the writer took the pending text, and when it stops.
    taken: Condvar,
}

#[derive(Default)]
struct Pending {
    /// Handed over, not yet taken by the writer.
    text: Vec<u8>,
    /// The writer is writing text it took.
    writing: bool,
    /// The writer waits for text and nobody has woken it yet: only then does a hand-over pay for
    /// waking it.
    idle: bool,
    /// The writer failed (or gave up at the stop): nothing more is written.
    failed: bool,
    /// Why, until a write or a drain reports it.
    error: Option<io::Error>,
    /// No more text will come: the writer ends once the rest is out.
    closed: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The renderer's side of the writer thread (module docs).
struct Coalescing {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Coalescing {
    /// Starts the writer thread over `out`; writes to `out` directly if it cannot be started.
    fn spawn(mut out: StopAware) -> Stdout {
        let shared = Arc::new(Shared::default());
        let writer = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("stdout".into())
            .spawn(move || write_handed_over(&writer, &mut out));
        match spawned {
            Ok(thread) => Stdout {
                writer: Box::new(Coalescing {
                    shared: shared.clone(),
                    thread: Some(thread),
                }),
                drain: Drain(Some(shared)),
            },
            // `out` went with the closure: standard output itself, as when it cannot be duplicated.
            Err(_) => Stdout::direct(Box::new(io::stdout())),
        }
    }
}

/// The writer thread: takes all the text handed over, writes it, again, until the close.
fn write_handed_over(shared: &Shared, out: &mut StopAware) {
    let mut taken = Vec::new();
    loop {
        let mut state = shared.lock();
        while state.text.is_empty() && !state.closed {
            state.idle = true;
            state = shared.handed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        state.idle = false;
        if state.text.is_empty() {
            state.writing = false;
            shared.taken.notify_all();
            return;
        }
        std::mem::swap(&mut taken, &mut state.text);
        state.writing = true;
        shared.taken.notify_all();
        drop(state);

        let written = out.write_all(&taken);
        taken.clear();
        let mut state = shared.lock();
        state.writing = false;
        if let Err(error) = written {
            // Nothing more goes out: what is pending is dropped, and every wait ends.
            state.failed = true;
            state.error = Some(error);
            state.text = Vec::new();
            state.closed = true;
            shared.taken.notify_all();
            return;
        }
        shared.taken.notify_all();
    }
}

impl Write for Coalescing {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut state = self.shared.lock();
        while state.text.len() >= PENDING_LIMIT && !state.failed {
            state = self
                .shared
                .taken
                .wait(state)
                .unwrap_or_else(|e| e.into_inner());
        }
        if state.failed {
            // Reported once; the output is closed by then, and says nothing more.
            return Err(state
                .error
                .take()
                .unwrap_or_else(|| io::Error::other(GaveUp)));
        }
        state.text.extend_from_slice(buf);
        // Woken once, after the lock is let go: a writer woken under it would only wait for it.
        let wake = std::mem::take(&mut state.idle);
        drop(state);
        if wake {
            self.shared.handed.notify_one();
        }
        Ok(buf.len())
    }

    /// Hands over, as every write does: the writer thread writes what it is given without waiting
    /// for more, so a renderer's flush after each line keeps its meaning. [`Drain::wait`] waits
    /// until it is written.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for Coalescing {
    /// Writes the rest: the session has stopped by now, so a reader that does not read makes the
    /// writer give up instead of hanging the exit.
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.handed.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Waits until what was written to the session's output is out (module docs); does nothing for an
/// output written directly.
#[derive(Clone, Default)]
pub(super) struct Drain(Option<Arc<Shared>>);

impl Drain {
    /// Returns once everything handed over is written, with the writer's error if it failed or
    /// gave up and no write reported it yet.
    pub(super) fn wait(&self) -> io::Result<()> {
        let Some(shared) = &self.0 else {
            return Ok(());
        };
        let mut state = shared.lock();
        while (!state.text.is_empty() || state.writing) && !state.failed {
            state = shared.taken.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        state.error.take().map_or(Ok(()), Err)
    }
}
