//! Exit codes, documented in `--help` and README.md. Besides these, a second Ctrl-C, SIGTERM or
//! SIGHUP exits at once with 128 + the signal's number (`cmd/signals.rs`).

use std::process::ExitCode;

use kubectl_deltas::render::printable;

/// Why the process ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything went well.
    Success = 0,
    /// A runtime error: bad recording, I/O error, a failure the Reflector cannot retry.
    Runtime = 1,
    /// A usage error: bad flag value, unknown resource, bad index spec, a selector the server
    /// refuses (400).
    Usage = 2,
    /// The cluster could not be reached or refused us: bad kubeconfig, unreachable, 401, 403, 404.
    ClusterAccess = 3,
    /// `index --fail-empty` found nothing.
    Empty = 4,
    /// `--compare`: the stacks were told different things (not an error: the answer).
    Differ = 5,
}

/// `--compare`'s answer when the stacks differ: exit 5, with a sentence that says where to look.
pub fn stacks_differ() -> anyhow::Error {
    Failure {
        exit: Exit::Differ,
        error: anyhow::anyhow!(
            "the stacks differ: where, and each handler's and controller's verdict, are at the \
             end of the output"
        ),
        note: None,
    }
    .into()
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
    /// A sentence printed after the error as a `note:` line: what it means beyond this tool.
    pub note: Option<String>,
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
                note: None,
            }
            .into()
        })
    }
}

/// The note attached to an error by its [`Failure`], if any.
pub fn note(error: &anyhow::Error) -> Option<&str> {
    error
        .downcast_ref::<Failure>()
        .and_then(|f| f.note.as_deref())
}

/// The exit code an error deserves.
pub fn classify(error: &anyhow::Error) -> Exit {
    error
        .downcast_ref::<Failure>()
        .map_or(Exit::Runtime, |f| f.exit)
}

/// The one-line message for an error: its chain joined with `: `, skipping causes whose text the
/// message already contains (many libraries, kube included, repeat their source in their own
/// message, so a plain chain would say the same thing two or three times). Control characters
/// are escaped ([`printable`]): messages quote object names, the server's words and recordings.
pub fn message(error: &anyhow::Error) -> String {
    if let Some(failure) = error.downcast_ref::<Failure>() {
        return message(&failure.error);
    }
    let mut text = String::new();
    for cause in error.chain() {
        let Some(part) = readable(cause) else {
            continue;
        };
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    // Wherever a cause's text was put, by the chain or by a message that quotes its source.
    for (rust, plain) in error.chain().filter_map(os_error) {
        text = text.replace(&rust, &plain);
    }
    printable(&text).into_owned()
}

/// An operating system's error as Rust writes it (`No such file or directory (os error 2)`)
/// and as people read it in a sentence, as Go and so kubectl write it (`no such file or
/// directory`).
fn os_error(cause: &(dyn std::error::Error + 'static)) -> Option<(String, String)> {
    let io = cause.downcast_ref::<std::io::Error>().or_else(|| {
        cause
            .downcast_ref::<std::sync::Arc<std::io::Error>>()
            .map(|shared| &**shared)
    })?;
    let rust = io.to_string();
    let described = rust.strip_suffix(&format!(" (os error {})", io.raw_os_error()?))?;
    let mut chars = described.chars();
    let plain = chars
        .next()
        .map(|first| first.to_lowercase().chain(chars).collect())?;
    Some((rust, plain))
}

/// One cause's text, `None` to leave it out. kube writes some of its errors with Rust debug
/// output (a `Status` struct, a quoted path); those are rewritten for people.
fn readable(cause: &(dyn std::error::Error + 'static)) -> Option<String> {
    if let Some(kube::Error::Api(status)) = cause.downcast_ref::<kube::Error>() {
        let mut text = format!("the API server answered {}", status.code);
        if !status.reason.is_empty() {
            text.push(' ');
            text.push_str(&status.reason);
        }
        if !status.message.is_empty() && status.message != status.reason {
            text.push_str(": ");
            text.push_str(&status.message);
        }
        return Some(text);
    }
    // The source of the error above, already said.
    if cause.is::<kube::core::Status>() || cause.is::<Box<kube::core::Status>>() {
        return None;
    }
    if let Some(kube::config::KubeconfigError::ReadConfig(error, path)) =
        cause.downcast_ref::<kube::config::KubeconfigError>()
    {
        return Some(format!(
            "cannot read the kubeconfig {}: {error}",
            path.display()
        ));
    }
    Some(cause.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("failed to read kubeconfig: {0}")]
    struct Repeats(#[source] std::io::Error);

    #[test]
    fn kube_errors_are_written_without_rust_debug_output() {
        let status = kube::core::Status {
            code: 403,
            reason: "Forbidden".into(),
            message: r#"pods is forbidden: User "dev" cannot list resource "pods""#.into(),
            ..Default::default()
        };
        let error = anyhow::Error::new(kube::Error::Api(Box::new(status)))
            .context("cannot discover the API");
        assert_eq!(
            message(&error),
            r#"cannot discover the API: the API server answered 403 Forbidden: pods is forbidden: User "dev" cannot list resource "pods""#
        );
        let unauthorized = kube::core::Status {
            code: 401,
            reason: "Unauthorized".into(),
            message: "Unauthorized".into(),
            ..Default::default()
        };
        let error = anyhow::Error::new(kube::Error::Api(Box::new(unauthorized)));
        assert_eq!(message(&error), "the API server answered 401 Unauthorized");

        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory");
        let error = anyhow::Error::new(kube::config::KubeconfigError::ReadConfig(
            io,
            "/nope/config".into(),
        ));
        assert_eq!(
            message(&error),
            "cannot read the kubeconfig /nope/config: No such file or directory"
        );
    }

    #[test]
    fn os_errors_read_as_a_sentence_wherever_they_are_quoted() {
        let missing = || std::fs::File::open("/nonexistent/file").unwrap_err();
        let error = anyhow::Error::new(missing()).context("cannot open /nonexistent/file");
        assert_eq!(
            message(&error),
            "cannot open /nonexistent/file: no such file or directory"
        );
        // Quoted by a message that holds its source shared, as a recording's errors do.
        #[derive(Debug, thiserror::Error)]
        #[error("cannot open the recording: {0}")]
        struct Quotes(#[source] std::sync::Arc<std::io::Error>);
        let error = anyhow::Error::new(Quotes(std::sync::Arc::new(missing())));
        assert_eq!(
            message(&error),
            "cannot open the recording: no such file or directory"
        );
    }

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
            note: None,
        }
        .into();
        assert_eq!(classify(&wrapped), Exit::Usage);
        assert_eq!(
            message(&wrapped),
            "cannot load kubeconfig: failed to read kubeconfig: no such file"
        );
    }
}
