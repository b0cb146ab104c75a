//! The binary as a user meets it: help, exit codes, errors on stderr, completions.

use std::process::Output;

use crate::support::binary::{offline_command, output_blocking, stderr};

fn run(args: &[&str]) -> Output {
    output_blocking(offline_command(args))
}

#[test]
fn help_lists_the_subcommands_and_the_exit_codes() {
    let out = run(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8(out.stdout).unwrap();
    for sub in ["watch", "index", "record", "replay", "completion"] {
        assert!(help.contains(sub), "{sub} missing from --help");
    }
    assert!(help.contains("3  cluster access error"), "{help}");
}

#[test]
fn version_prints_the_crate_version() {
    let out = run(&["--version"]);
    assert_eq!(out.status.code(), Some(0));
    let version = String::from_utf8(out.stdout).unwrap();
    assert!(version.contains(env!("CARGO_PKG_VERSION")), "{version}");
}

#[test]
fn bad_flag_values_are_usage_errors_with_exit_2() {
    let out = run(&["watch", "pods", "--resync", "soon"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("as in 30s, 5m, 1h30m or 250ms"), "{err}");
    assert!(!err.contains("panicked"), "{err}");

    let out = run(&["watch", "pods", "-n", "a", "-A"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot be used with"));

    let out = run(&["--frobnicate"]);
    assert_eq!(out.status.code(), Some(2));

    for args in [
        &["watch", "pods", "--fifo", "lifo"][..],
        &["watch", "pods", "--fifo", "real", "--batch-pop", "0"],
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr(&out);
        assert!(err.contains("invalid value"), "{args:?}: {err}");
    }
}

#[test]
fn bad_watch_flags_fail_before_any_cluster_is_contacted() {
    // No kubeconfig anywhere: reaching the cluster would be exit 3, so exit 2 proves the check
    // came first. `kubectl deltas RESOURCE` is `watch`.
    for (args, what) in [
        (
            &["pods", "--query", "namespace"][..],
            "invalid --query \"namespace\": expected SPEC=VALUE",
        ),
        (
            &["watch", "pods", "--query", "colour:x=y"],
            "unknown index kind \"colour\"",
        ),
        (&["deploy,,po"], "invalid resource list \"deploy,,po\""),
        (&["pods", "--index", "label"], "label needs a label key"),
        // A DeltaFIFO pops one key at a time: PopBatch is the RealFIFO's.
        (
            &["watch", "pods", "--batch-pop", "3"],
            "--batch-pop 3 needs --fifo real or --fifo atomic: a DeltaFIFO pop is always one key's Deltas",
        ),
        (
            &[
                "index",
                "pods",
                "--by",
                "namespace",
                "--fifo",
                "delta",
                "--batch-pop",
                "2",
            ],
            "--batch-pop 2 needs --fifo real or --fifo atomic",
        ),
    ] {
        let mut cmd = offline_command(args);
        cmd.env("KUBECONFIG", "/nonexistent/kubeconfig")
            .env("HOME", "/nonexistent");
        let out = output_blocking(cmd);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.starts_with("kubectl-deltas: error: ") && err.contains(what),
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn completion_prints_a_script_for_each_shell() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef"),
        ("fish", "complete -c"),
        ("powershell", "Register-ArgumentCompleter"),
        ("elvish", "edit:completion"),
    ] {
        let out = run(&["completion", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(script.contains(marker), "{shell} script lacks {marker:?}");
        assert!(script.contains("watch"), "{shell} script lacks subcommands");
    }
    let out = run(&["completion", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
}
