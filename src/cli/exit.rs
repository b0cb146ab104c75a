//! Exit codes, documented in `--help` and README.md.

use std::process::ExitCode;

/// Why the process ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything went well.
    Success = 0,
    /// A runtime error: bad recording, I/O error, a command that is not implemented yet.
    Runtime = 1,
    /// A usage error: bad flag value, unknown resource, bad index spec.
    Usage = 2,
    /// The cluster could not be reached or refused us: bad kubeconfig, unreachable, 401, 403.
    ClusterAccess = 3,
    /// `index --fail-empty` found nothing.
    Empty = 4,
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(exit as u8)
    }
}

/// An error that knows which exit code it deserves. Other errors exit with [`Exit::Runtime`].
#[derive(Debug, thiserror::Error)]
#[error("{error:#}")]
pub struct Failure {
    /// The exit code.
    pub exit: Exit,
    /// What went wrong, with its causes.
    pub error: anyhow::Error,
}

/// The exit code an error deserves.
pub fn classify(error: &anyhow::Error) -> Exit {
    error
        .downcast_ref::<Failure>()
        .map_or(Exit::Runtime, |f| f.exit)
}
