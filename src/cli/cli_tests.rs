use std::ffi::OsString;
use std::time::Duration;

use super::*;
use clap::CommandFactory;

#[test]
fn the_command_definition_is_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn index_replay_refuses_the_flags_it_would_ignore() {
    let parse = |args: &[&str]| {
        Cli::try_parse_from(
            [
                "kubectl-deltas",
                "index",
                "--replay",
                "r.jsonl",
                "--by",
                "owner",
            ]
            .iter()
            .chain(args),
        )
    };
    assert!(parse(&[]).is_ok());
    assert!(parse(&["--fifo", "real"]).is_ok());
    for flag in [
        &["-n", "other"][..],
        &["-A"],
        &["-l", "app=web"],
        &["--field-selector", "a=b"],
        &["--kubeconfig", "/nope"],
        &["--context", "c"],
        &["--request-timeout", "5s"],
    ] {
        let error = parse(flag).expect_err(flag[0]);
        assert_eq!(
            error.kind(),
            clap::error::ErrorKind::ArgumentConflict,
            "{flag:?}"
        );
    }
}

#[test]
fn index_has_no_flag_about_watching() {
    for flag in [
        &["--resync", "30s"][..],
        &["--legacy-sync"],
        &["--watch-timeout", "1m"],
        &["--verify-every", "1m"],
    ] {
        let args = ["kubectl-deltas", "index", "pods", "--by", "owner"];
        let error = Cli::try_parse_from(args.iter().chain(flag)).expect_err(flag[0]);
        assert_eq!(
            error.kind(),
            clap::error::ErrorKind::UnknownArgument,
            "{flag:?}"
        );
    }
}

#[test]
fn namespaces_are_dns_labels() {
    for good in ["default", "kube-system", "a", "team-1", &"x".repeat(63)] {
        assert_eq!(parse_namespace(good).as_deref(), Ok(good));
    }
    for bad in [
        "",
        "a/b",
        "a?b",
        "weird ns",
        "Prod",
        "-a",
        "a-",
        &"x".repeat(64),
    ] {
        assert!(parse_namespace(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn a_request_timeout_may_be_a_number_of_seconds_as_in_kubectl() {
    assert_eq!(
        parse_request_timeout("30"),
        Ok(Period(Some(Duration::from_secs(30))))
    );
    assert_eq!(parse_request_timeout("0"), Ok(Period(None)));
    assert_eq!(
        parse_request_timeout("1m"),
        Ok(Period(Some(Duration::from_secs(60))))
    );
    assert!(parse_request_timeout("-3").is_err());
}

fn shorthand(args: &[&str]) -> Vec<String> {
    let args = std::iter::once("kubectl-deltas")
        .chain(args.iter().copied())
        .map(OsString::from)
        .collect();
    with_watch_shorthand(args)
        .unwrap()
        .into_iter()
        .skip(1)
        .map(|a| a.into_string().unwrap())
        .collect()
}

#[test]
fn a_resource_first_means_watch() {
    assert_eq!(
        shorthand(&["pods", "-o", "jsonl"]),
        ["watch", "pods", "-o", "jsonl"]
    );
    assert_eq!(
        shorthand(&["-vv", "--color", "never", "deploy,rs"]),
        ["-vv", "--color", "never", "watch", "deploy,rs"]
    );
    assert_eq!(
        shorthand(&["--color=always", "-n", "kube-system", "pods"]),
        ["--color=always", "watch", "-n", "kube-system", "pods"]
    );
    for untouched in [
        &["watch", "pods"][..],
        &["index", "pods", "--by", "namespace"],
        &["-v", "replay", "rec.jsonl"],
        &["--help"],
        &["help", "watch"],
        &["--version"],
        &[],
        &["-v"],
    ] {
        assert_eq!(shorthand(untouched), untouched, "{untouched:?}");
    }
    let parsed = Cli::try_parse_from(
        with_watch_shorthand(
            ["kubectl-deltas", "po", "--until-synced"]
                .map(OsString::from)
                .to_vec(),
        )
        .unwrap(),
    )
    .unwrap();
    assert!(
        matches!(parsed.command, Command::Watch(w) if w.resources == "po" && w.view.until_synced)
    );
}

#[test]
fn durations_parse_like_kubectl_flags() {
    let secs = |s| Ok(Period(Some(Duration::from_secs(s))));
    assert_eq!(parse_period("30s"), secs(30));
    assert_eq!(parse_period("1h30m"), secs(5400));
    assert_eq!(parse_period("0"), Ok(Period(None)));
    assert_eq!(parse_period("0s"), Ok(Period(None)));
    let err = parse_period("5 minutes please").unwrap_err();
    assert!(err.contains("as in 30s, 5m, 1h30m or 250ms"), "{err}");
}

#[test]
fn a_controller_has_controller_runtimes_defaults() {
    let c = values::parse_controller("web").unwrap();
    // Nothing fails or requeues; the worker count and the queue are the runtime's defaults,
    // which the plan resolves.
    assert_eq!(
        (c.workers, c.reconcile, c.fail, c.requeue_after, c.resync),
        (None, Duration::ZERO, 0, None, None)
    );
    assert_eq!(c.queue, None);
    assert_eq!(c.runtime, values::ControllerRuntimeKind::ClientGo);
    let c = values::parse_controller(
        "web,workers=4,reconcile=1.5s,fail=2,fail-keys=demo/*,requeue-after=30s,resync=0,\
         queue=priority",
    )
    .unwrap();
    assert_eq!(c.queue, Some(values::ControllerQueueKind::Priority));
    assert_eq!(c.workers, Some(4));
    assert_eq!(c.reconcile, Duration::from_millis(1500));
    assert_eq!(c.requeue_after, Some(Duration::from_secs(30)));
    assert_eq!(c.resync, Some(Duration::ZERO));
    assert_eq!(c.fail_keys.unwrap().to_string(), "demo/*");
}
