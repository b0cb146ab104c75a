//! Files of the on-disk caches (discovery, shell completion): read only when they are regular
//! files of a bounded size, written as client-go's `writeCachedFile` writes kubectl's.
//!
//! A cache file is read on every start, before anything is printed, so a hostile or broken one
//! must not stall or exhaust the process: a symlink to `/dev/zero` would be read until memory
//! runs out, a FIFO would block `open(2)` until some writer appears. [`read_regular`] opens with
//! `O_NONBLOCK` (so a FIFO's open returns at once), checks what it opened, and reads at most its
//! limit; whatever it refuses counts as a cache miss, and the next write replaces it.

use std::io::{Read as _, Write as _};
use std::path::Path;

use super::output_file::OutputFile;

/// Why a cache file was not read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Opening or reading failed (`NotFound` for no file).
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A FIFO, a device, a socket or a directory.
    #[error("not a regular file")]
    NotRegular,
    /// Larger than the caller's limit.
    #[error("larger than {limit} bytes")]
    TooLarge {
        /// The limit.
        limit: u64,
    },
}

impl ReadError {
    /// Whether there is simply no file.
    pub fn is_not_found(&self) -> bool {
        matches!(self, ReadError::Io(e) if e.kind() == std::io::ErrorKind::NotFound)
    }
}

/// The content of `path` if it is a regular file (symlinks followed) of at most `limit` bytes.
pub fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(ReadError::NotRegular);
    }
    if metadata.len() > limit {
        return Err(ReadError::TooLarge { limit });
    }
    // The file may grow between the check and the read: read one byte past the limit to know.
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge { limit });
    }
    Ok(bytes)
}

/// Replaces the file at `path` with `bytes` as client-go's `writeCachedFile` does: directories
/// made `0750`, a temporary file next to it, `0660`, renamed over `path` (a reader meanwhile gets
/// the old file or the new one, never half of one): an [`OutputFile`].
pub fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("a cache file has a directory"))?;
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o750);
    builder.create(dir)?;

    let mut file = OutputFile::replacing(path)?;
    file.write_all(bytes)?;
    set_mode(file.file())?;
    file.commit().map(drop)
}

#[cfg(unix)]
fn set_mode(file: &std::fs::File) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(std::fs::Permissions::from_mode(0o660))
}

#[cfg(not(unix))]
fn set_mode(_: &std::fs::File) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_within_the_limit_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/file.json");
        replace(&path, b"12345").unwrap();
        assert_eq!(read_regular(&path, 5).unwrap(), b"12345");
        assert!(matches!(
            read_regular(&path, 4),
            Err(ReadError::TooLarge { limit: 4 })
        ));
        assert!(
            read_regular(&dir.path().join("none"), 5)
                .unwrap_err()
                .is_not_found()
        );
        assert!(matches!(
            read_regular(dir.path(), 5),
            Err(ReadError::NotRegular)
        ));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| p.metadata().unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path), 0o660);
            assert_eq!(mode(path.parent().unwrap()), 0o750);
            assert!(matches!(
                read_regular(Path::new("/dev/zero"), 5),
                Err(ReadError::NotRegular)
            ));
        }
    }
}
