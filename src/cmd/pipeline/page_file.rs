//! Where `-o html -f FILE` writes its page: an [`OutputFile`] beside FILE, created at the first
//! write (the page is written once the session ends, so a session that fails before, or is
//! killed, leaves no temporary file), and renamed over FILE only once the session ended normally
//! (Ctrl-C, `--duration`, a limit, the end of a recording): an existing FILE is replaced by a
//! complete page, or left as it was.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use kubectl_deltas::source::output_file::OutputFile;

/// The page's file, shared by the writer the renderer holds and the session, which commits it.
#[derive(Clone)]
pub(super) struct PageFile {
    path: PathBuf,
    state: Arc<Mutex<State>>,
}

enum State {
    /// Nothing written yet.
    Pending,
    Open(BufWriter<OutputFile>),
    /// Creating the temporary file failed; every write fails.
    Failed,
    Committed,
}

impl PageFile {
    pub(super) fn new(path: &Path) -> Self {
        PageFile {
            path: path.to_owned(),
            state: Arc::new(Mutex::new(State::Pending)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Puts what was written in FILE's place; nothing if nothing was written (FILE is then left
    /// as it was). Without a call, what was written is removed when the last clone goes.
    pub(super) fn commit(&self) -> io::Result<()> {
        let state = std::mem::replace(&mut *self.lock(), State::Committed);
        let State::Open(out) = state else {
            return Ok(());
        };
        let out = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        out.commit().map(drop).map_err(|e| self.error(e))
    }

    /// `error` of writing the page, naming it.
    fn error(&self, error: io::Error) -> io::Error {
        io::Error::new(
            error.kind(),
            format!("cannot write the page {}: {error}", self.path.display()),
        )
    }
}

impl Write for PageFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut state = self.lock();
        if matches!(*state, State::Pending) {
            *state = match OutputFile::create(&self.path) {
                Ok(file) => State::Open(BufWriter::new(file)),
                Err(error) => {
                    *state = State::Failed;
                    return Err(self.error(error));
                }
            };
        }
        match &mut *state {
            State::Open(out) => out.write(buf),
            _ => Err(io::Error::other("the page is no longer written")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut *self.lock() {
            State::Open(out) => out.flush(),
            _ => Ok(()),
        }
    }
}
