//! [`OutputFile`]: how every file the tool writes is written (`-o html -f FILE`, `record -f
//! FILE`, the discovery and completion caches): under a temporary name beside it, renamed over it
//! once complete, as client-go's `writeCachedFile` writes kubectl's caches.
//!
//! So an existing file is replaced by a whole new one or left as it was: a session that fails
//! before its end (a mistyped resource, a missing recording, an unreachable cluster), or an output
//! path that is also the input, never leaves it empty or cut short, and a reader never sees half
//! of one. The temporary file is removed when the `OutputFile` is dropped without
//! [`commit`](OutputFile::commit), and by [`remove_temporaries`] for an exit that skips
//! destructors (a second Ctrl-C).
//!
//! A file the user named ([`create`](OutputFile::create)): through a symlink, the link's target
//! is replaced and the link kept, as a shell's `>` writes through it; a path that exists and is
//! not a regular file (a device such as `/dev/null` or `/dev/stdout`, a FIFO) is written as it
//! is, nothing there could be replaced. A cache file ([`replacing`](OutputFile::replacing))
//! replaces whatever is at its path, a symlink or a FIFO included.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The temporary files not yet renamed or removed, for [`remove_temporaries`].
static TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// How many symlinks [`resolve`] follows, as Linux's `MAXSYMLINKS`.
const MAX_LINKS: usize = 40;

/// A file being written in place of another (see the module doc).
#[derive(Debug)]
pub struct OutputFile {
    /// Where it goes: the path given, its symlinks resolved.
    target: PathBuf,
    /// The temporary file, until it is renamed; `None` when `target` is written as it is.
    temporary: Option<PathBuf>,
    file: File,
}

impl OutputFile {
    /// Creates the temporary file beside `path` (its symlinks resolved), with the permissions of
    /// the file it will replace if there is one; or opens `path` itself when it exists and is not
    /// a regular file. Fails as creating `path` would: a missing directory, no permission, a
    /// directory at `path`.
    pub fn create(path: &Path) -> io::Result<Self> {
        let target = resolve(path)?;
        if is_special(&target)? {
            let file = OpenOptions::new().write(true).open(&target)?;
            return Ok(OutputFile {
                target,
                temporary: None,
                file,
            });
        }
        let (temporary, file) = create_temporary(&target)?;
        if let Ok(meta) = std::fs::metadata(&target) {
            let _ = file.set_permissions(meta.permissions());
        }
        Ok(OutputFile {
            target,
            temporary: Some(temporary),
            file,
        })
    }

    /// Whether [`create`](Self::create) would succeed, creating nothing that stays and opening
    /// nothing that could block (a FIFO without a reader): said before a session that writes
    /// its file only at the end.
    pub fn check(path: &Path) -> io::Result<()> {
        let target = resolve(path)?;
        if is_special(&target)? {
            return Ok(());
        }
        let (temporary, _file) = create_temporary(&target)?;
        let _ = std::fs::remove_file(&temporary);
        lock().retain(|t| *t != temporary);
        Ok(())
    }

    /// A file that replaces whatever is at `path` itself (a symlink, a FIFO or a device
    /// included), as a cache file is: what is there was not written by the user.
    pub fn replacing(path: &Path) -> io::Result<Self> {
        let (temporary, file) = create_temporary(path)?;
        Ok(OutputFile {
            target: path.to_owned(),
            temporary: Some(temporary),
            file,
        })
    }

    /// Where the file goes: the path given, its symlinks resolved.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The open file being written.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Renames the file over its target, replacing what was there, and hands it back still open
    /// (what is written to it afterwards lands in the target).
    pub fn commit(mut self) -> io::Result<File> {
        self.file.flush()?;
        if let Some(temporary) = &self.temporary {
            std::fs::rename(temporary, &self.target)?;
            self.forget_temporary();
        }
        self.take_file()
    }

    /// [`commit`](Self::commit), unless something exists at the target by now (`AlreadyExists`,
    /// the temporary file removed): for a file that must never replace another.
    pub fn commit_new(mut self) -> io::Result<File> {
        self.file.flush()?;
        if let Some(temporary) = &self.temporary {
            // A link fails if the name is taken, where a rename would replace it.
            std::fs::hard_link(temporary, &self.target)?;
            let _ = std::fs::remove_file(temporary);
            self.forget_temporary();
        }
        self.take_file()
    }

    fn forget_temporary(&mut self) {
        if let Some(temporary) = self.temporary.take() {
            lock().retain(|t| *t != temporary);
        }
    }

    /// The open file, for the caller to keep writing once the name is in place.
    fn take_file(self) -> io::Result<File> {
        self.file.try_clone()
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if let Some(temporary) = self.temporary.take() {
            let _ = std::fs::remove_file(&temporary);
            lock().retain(|t| *t != temporary);
        }
    }
}

/// Removes the temporary files of every [`OutputFile`] not committed: before an exit that skips
/// destructors. The targets are left as they were.
pub fn remove_temporaries() {
    for temporary in lock().drain(..) {
        let _ = std::fs::remove_file(temporary);
    }
}

fn lock() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    TEMPORARIES.lock().unwrap_or_else(|e| e.into_inner())
}

/// `path` with its symlinks followed to the file they name (which may not exist yet, as for a
/// dangling link a shell's `>` would create); a loop is an error, as `open(2)` says `ELOOP`.
pub fn resolve(path: &Path) -> io::Result<PathBuf> {
    let mut path = path.to_owned();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = std::fs::read_link(&path)?;
                path = match path.parent() {
                    Some(dir) => dir.join(link),
                    None => link,
                };
            }
            _ => return Ok(path),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        "too many levels of symbolic links",
    ))
}

/// Whether `target` exists and is neither a regular file nor a directory (an error): written
/// as it is.
fn is_special(target: &Path) -> io::Result<bool> {
    match std::fs::metadata(target) {
        Ok(meta) if meta.is_dir() => Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "is a directory",
        )),
        Ok(meta) => Ok(!meta.is_file()),
        Err(_) => Ok(false),
    }
}

/// Creates `<name>.<16 hex digits>` beside `path`, which no other file has (`O_EXCL`).
fn create_temporary(path: &Path) -> io::Result<(PathBuf, File)> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let mut attempts = 0;
    loop {
        let temporary = path.with_file_name(format!("{name}.{:016x}", fastrand::u64(..)));
        // Registered before it exists: a second signal between the two removes nothing, rather
        // than leaving it.
        lock().push(temporary.clone());
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)
        {
            Ok(file) => return Ok((temporary, file)),
            Err(error) => {
                lock().retain(|t| *t != temporary);
                if error.kind() == io::ErrorKind::AlreadyExists && attempts < 8 {
                    attempts += 1;
                    continue;
                }
                return Err(error);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_existing_file_is_replaced_whole_at_commit_and_kept_without_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("page.html");
        std::fs::write(&path, "the old page, longer than the new one").unwrap();
        let mut out = OutputFile::create(&path).unwrap();
        out.write_all(b"new").unwrap();
        drop(out);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "the old page, longer than the new one"
        );
        let mut out = OutputFile::create(&path).unwrap();
        out.write_all(b"new").unwrap();
        let mut file = out.commit().unwrap();
        file.write_all(b" and more").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new and more");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "a temporary file is left: {left:?}");

        let out = OutputFile::create(&path).unwrap();
        let error = out.commit_new().unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_keeps_pointing_at_the_replaced_target() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("real.html");
        std::fs::write(&target, "old").unwrap();
        let link = dir.path().join("link.html");
        std::os::unix::fs::symlink("real.html", &link).unwrap();
        let mut out = OutputFile::create(&link).unwrap();
        out.write_all(b"new").unwrap();
        out.commit().unwrap();
        assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
    }
}
