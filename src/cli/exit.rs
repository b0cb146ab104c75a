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
#[error("{}", message(.error))]
pub struct Failure {
    /// The exit code.
    pub exit: Exit,
    /// What went wrong, with its causes.
    pub error: anyhow::Error,
}

/// Attaches an exit code to an error.
pub trait WithExit<T> {
    /// Fails with `exit` if this is an error.
    fn exit_with(self, exit: Exit) -> anyhow::Result<T>;
}

impl<T, E: Into<anyhow::Error>> WithExit<T> for Result<T, E> {
    fn exit_with(self, exit: Exit) -> anyhow::Result<T> {
        self.map_err(|e| {
            Failure {
                exit,
                error: e.into(),
            }
            .into()
        })
    }
}

/// The exit code an error deserves.
pub fn classify(error: &anyhow::Error) -> Exit {
    error
        .downcast_ref::<Failure>()
        .map_or(Exit::Runtime, |f| f.exit)
}

/// The one-line message for an error: its chain joined with `: `, skipping causes whose text the
/// message already contains (many libraries, kube included, repeat their source in their own
/// message, so a plain chain would say the same thing two or three times).
pub fn message(error: &anyhow::Error) -> String {
    if let Some(failure) = error.downcast_ref::<Failure>() {
        return message(&failure.error);
    }
    let mut text = String::new();
    for cause in error.chain() {
        let part = cause.to_string();
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("failed to read kubeconfig: {0}")]
    struct Repeats(#[source] std::io::Error);

    #[test]
    fn causes_already_in_the_message_are_not_repeated() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let error = anyhow::Error::new(Repeats(io)).context("cannot load kubeconfig");
        assert_eq!(
            message(&error),
            "cannot load kubeconfig: failed to read kubeconfig: no such file"
        );
        let wrapped: anyhow::Error = Failure {
            exit: Exit::Usage,
            error,
        }
        .into();
        assert_eq!(classify(&wrapped), Exit::Usage);
        assert_eq!(
            message(&wrapped),
            "cannot load kubeconfig: failed to read kubeconfig: no such file"
        );
    }
}
