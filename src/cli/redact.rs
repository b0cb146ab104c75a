//! The command line without its credentials, wherever it becomes text: the `-o html` page's
//! header (`plan/output.rs`), a recording's `replayWith` (`record.rs`). Such text is made to be
//! shared (a page attached to a bug report, a recording sent to a colleague), so a secret typed on
//! the command line must not reach it.
//!
//! Secrets are the values of `--token` (shown as kubectl's `kubectl config view` shows secrets:
//! `REDACTED`) and the user part of any URL (`--server https://alice:PW@host`, in any spelling of
//! the flag, shown as the proxies' are: `https://***@host`). The other flags this tool takes carry
//! no secret: `--client-key` and `--kubeconfig` are paths, whose contents are never shown.

use std::ffi::OsString;

use kubectl_deltas::source::proxy::redact as redact_url;

/// What a secret flag's value is shown as, as kubectl shows a kubeconfig's secrets.
pub const REDACTED: &str = "REDACTED";

/// The long flags whose value is a secret.
const SECRET_FLAGS: [&str; 1] = ["--token"];

/// The long flags whose value is a URL (whose user part may hold a password or a token).
const URL_FLAGS: [&str; 1] = ["--server"];

/// The short flag for `--server`.
const URL_SHORT: char = 's';

/// What the argument after a flag is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Next {
    Plain,
    Secret,
    Url,
}

/// `args` (a command line, program name first or not) with every secret replaced: a
/// [`SECRET_FLAGS`] value by [`REDACTED`] (`--token T`, `--token=T`), the user part of a URL by
/// `***` (the value of `--server`/`-s` in every form, and any other argument holding a URL).
/// The words stay as many and in the same order, so the result parses as `args` did.
pub fn redacted_args<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Vec<OsString> {
    let mut next = Next::Plain;
    let mut after_dashes = false;
    let mut redacted = Vec::with_capacity(args.len());
    for arg in args {
        let arg = arg.as_ref();
        let expected = std::mem::replace(&mut next, Next::Plain);
        if expected == Next::Secret {
            redacted.push(OsString::from(REDACTED));
            continue;
        }
        let Some(text) = arg.to_str() else {
            redacted.push(arg.to_owned());
            continue;
        };
        if expected == Next::Url {
            redacted.push(OsString::from(redact_url(text)));
            continue;
        }
        if after_dashes || !text.starts_with('-') {
            redacted.push(OsString::from(any_url(text)));
            continue;
        }
        if text == "--" {
            after_dashes = true;
            redacted.push(arg.to_owned());
            continue;
        }
        let (word, value) = redacted_flag(text);
        next = value;
        redacted.push(OsString::from(word));
    }
    redacted
}

/// A flag argument (`--token`, `--server=URL`, `-qs`, `-sURL`) with any value it holds redacted,
/// and what the next argument is.
fn redacted_flag(text: &str) -> (String, Next) {
    if let Some(long) = text.strip_prefix("--") {
        let (name, value) = match long.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (long, None),
        };
        let flag = format!("--{name}");
        let kind = if SECRET_FLAGS.contains(&flag.as_str()) {
            Next::Secret
        } else if URL_FLAGS.contains(&flag.as_str()) {
            Next::Url
        } else {
            Next::Plain
        };
        return match (value, kind) {
            (None, kind) => (text.to_owned(), kind),
            (Some(_), Next::Secret) => (format!("{flag}={REDACTED}"), Next::Plain),
            (Some(value), Next::Url) => (format!("{flag}={}", redact_url(value)), Next::Plain),
            (Some(_), Next::Plain) => (any_url(text), Next::Plain),
        };
    }
    // A cluster of short flags (`-qs URL`, `-sURL`, `-s=URL`): from `-s` on, the rest is its
    // value, or the next argument is. (Should a flag before it take the rest as its own value,
    // redacting it as a URL changes nothing but a user part, which no other value has.)
    match text[1..].split_once(URL_SHORT) {
        Some((_, "")) => (text.to_owned(), Next::Url),
        Some((before, value)) => (
            format!("-{before}{URL_SHORT}{}", redact_url(value)),
            Next::Plain,
        ),
        None => (any_url(text), Next::Plain),
    }
}

/// `text` with the user part of the URL it holds, if any, redacted: only where `://` says a URL
/// is there (an `@` alone is no URL: `--match 'a@b'`).
fn any_url(text: &str) -> String {
    if text.contains("://") {
        redact_url(text)
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redacted(words: &[&str]) -> Vec<String> {
        redacted_args(words)
            .into_iter()
            .map(|word| word.into_string().unwrap())
            .collect()
    }

    #[test]
    fn secrets_go_in_every_spelling_and_nothing_else_changes() {
        assert_eq!(
            redacted(&[
                "watch",
                "cm",
                "--token",
                "T",
                "--token=T2",
                "--server",
                "https://alice:PW@127.0.0.1:6443",
                "-n",
                "a",
            ]),
            [
                "watch",
                "cm",
                "--token",
                "REDACTED",
                "--token=REDACTED",
                "--server",
                "https://***@127.0.0.1:6443",
                "-n",
                "a",
            ]
        );
        assert_eq!(
            redacted(&[
                "--server=http://u:p@h:1/x",
                "-qs",
                "u:p@h:1",
                "-shttps://u:p@h"
            ]),
            [
                "--server=http://***@h:1/x",
                "-qs",
                "***@h:1",
                "-shttps://***@h"
            ]
        );
        assert_eq!(
            redacted(&["--match", "a@b", "-o", "html", "--", "https://u:p@h"]),
            ["--match", "a@b", "-o", "html", "--", "https://***@h"]
        );
        // A value that looks like a flag is still the secret flag's value.
        assert_eq!(redacted(&["--token", "--server"]), ["--token", "REDACTED"]);
    }
}
