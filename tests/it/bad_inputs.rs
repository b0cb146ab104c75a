//! Bad input and odd values through the binary (issue #26's defect list): durations as Go reads
//! them, and values that used to panic, hang or be silently changed.

use crate::support;

use serde_json::json;
use support::binary::{Running, error_lines, run, run_offline, stderr};
use support::fake_apiserver::{FakeApiServer, Fault, ResourceDef, Verb};
use support::paths::{bundled, summary_row};

async fn server_with_a_configmap() -> (FakeApiServer, tempfile::TempDir, std::path::PathBuf) {
    let server = FakeApiServer::start().await;
    server.create(
        "configmaps",
        json!({"metadata": {"name": "a", "namespace": "default"}}),
    );
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    (server, dir, kubeconfig)
}

/// Go's `time.ParseDuration` (kubectl's and client-go's flags) has no calendar units: humantime
/// took `1y` as 365.25 days and `1month` as 30.44; now every duration flag, and the `key=DUR`
/// parts of `--handler`, refuse them with exit 2, and take Go's `1h30m`, `1.5s`, `500ms`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durations_follow_gos_grammar_on_every_flag() {
    let recording = bundled("resync");
    let recording = recording.to_str().unwrap();
    let (_server, _dir, kubeconfig) = server_with_a_configmap().await;
    let replay = |flags: &[&str]| {
        let mut args = vec!["replay", recording];
        args.extend_from_slice(flags);
        args.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let cluster = |command: &str, flags: &[&str]| {
        let mut args = vec![command, "cm"];
        if command == "index" {
            args.extend(["--by", "namespace"]);
        }
        args.extend_from_slice(flags);
        args.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let calendar = "uses days, weeks, months or years, whose length depends on the date";
    for (args, says) in [
        (replay(&["--resync", "1y"]), calendar),
        (replay(&["--handler", "a,delay=1month"]), calendar),
        (replay(&["--handler", "a,resync=2d"]), calendar),
        (replay(&["--handler-delay", "1w"]), calendar),
        (cluster("watch", &["--watch-timeout", "1y"]), calendar),
        (cluster("watch", &["--verify-every", "1month"]), calendar),
        (cluster("index", &["--request-timeout", "1y"]), calendar),
        (
            cluster("record", &["-f", "-", "--duration", "1y"]),
            calendar,
        ),
        (replay(&["--resync=-5s"]), r#""-5s" is negative"#),
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = if args[0] == "replay" {
            run_offline(&args, None).await
        } else {
            run(&kubeconfig, &args).await
        };
        let lines = error_lines(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {lines:?}");
        assert_eq!(lines.len(), 1, "{args:?}: {lines:?}");
        assert!(lines[0].contains(says), "{args:?}: {lines:?}");
    }

    let out = run_offline(
        &[
            "replay",
            recording,
            "-o",
            "jsonl",
            "--resync",
            "1.5s",
            "--handler",
            "a,resync=1h30m,delay=500ms",
        ],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// Durations past Go's int64 of nanoseconds (about 292 years) made `Instant + Duration` overflow:
/// exit 101 with a backtrace for `--handler a,delay=…`/`resync=…`, a panicked runtime that never
/// exited for `--request-timeout`. They are refused with a sentence; the longest Go duration runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durations_too_long_for_go_are_refused_and_the_longest_runs() {
    let recording = bundled("resync");
    let recording = recording.to_str().unwrap();
    let (_server, _dir, kubeconfig) = server_with_a_configmap().await;
    let huge = "9223372036854775807s";
    let says = format!(
        r#""{huge}" is longer than the longest duration kubectl and client-go accept (2562047h47m16s, about 292 years)"#
    );
    let delay = format!("a,delay={huge}");
    let resync = format!("a,resync={huge}");
    for args in [
        vec!["replay", recording, "--handler", &delay],
        vec!["watch", "cm", "--handler", &resync, "--until-synced"],
        vec![
            "index",
            "cm",
            "--by",
            "namespace",
            "--request-timeout",
            huge,
        ],
        // kubectl's bare number of seconds.
        vec![
            "index",
            "cm",
            "--by",
            "namespace",
            "--request-timeout",
            "9223372036854775807",
        ],
    ] {
        let out = if args[0] == "replay" {
            run_offline(&args, None).await
        } else {
            run(&kubeconfig, &args).await
        };
        let lines = error_lines(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {lines:?}");
        assert_eq!(lines.len(), 1, "{args:?}: {lines:?}");
        assert!(
            lines[0].contains(&says) || lines[0].contains("9223372036854775807s\" is longer"),
            "{args:?}: {lines:?}"
        );
    }

    let longest = "2562047h";
    let delay = format!("a,delay={longest}");
    let resync = format!("b,resync={longest}");
    for args in [
        vec![
            "replay",
            recording,
            "--handler",
            &delay,
            "--handler",
            &resync,
        ],
        vec!["watch", "cm", "--handler", &resync, "--until-synced", "-q"],
        vec![
            "index",
            "cm",
            "--by",
            "namespace",
            "--request-timeout",
            longest,
        ],
    ] {
        let out = if args[0] == "replay" {
            run_offline(&args, None).await
        } else {
            run(&kubeconfig, &args).await
        };
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"), "{args:?}");
    }
}

/// `timeoutSeconds` is whole seconds: `--watch-timeout 1500ms` was silently sent as 2 and `1ms`
/// as 1. The value sent is said, as `--resync` says it below 1s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_timeout_that_is_not_whole_seconds_is_rounded_up_with_a_warning() {
    let (server, _dir, kubeconfig) = server_with_a_configmap().await;
    for (timeout, shown, sent) in [
        ("1500ms", "1.5s", "2"),
        ("1ms", "1ms", "1"),
        ("3s", "3s", "3"),
    ] {
        server.clear_requests();
        let out = run(
            &kubeconfig,
            &["watch", "cm", "--watch-timeout", timeout, "--until-synced"],
        )
        .await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{err}");
        let warning = format!(
            "kubectl-deltas: warning: --watch-timeout {shown} is sent as timeoutSeconds, a \
             whole number of seconds; using {sent}s"
        );
        assert_eq!(err.contains(&warning), timeout != "3s", "{timeout}: {err}");
        for watch in server.requests().iter().filter(|r| r.is_watch()) {
            assert_eq!(watch.param("timeoutSeconds"), Some(sent), "{timeout}");
        }
    }
}

/// `watch cm,secrets` with no restart said `watch restarts 0 ┆ 0 ┆ all 1`: the total summed the
/// watches and took one away once. Every column of the total is the sum of the others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_summary_total_of_watch_restarts_is_the_sum() {
    let (server, _dir, kubeconfig) = server_with_a_configmap().await;
    server.create(
        "secrets",
        json!({"metadata": {"name": "s", "namespace": "default"}, "data": {}}),
    );
    let mut bin = Running::spawn(&kubeconfig, &["watch", "cm,secrets", "-o", "jsonl"]);
    let started = std::sync::atomic::AtomicUsize::new(0);
    tokio::task::block_in_place(|| {
        bin.read_until("both watches open", |l| {
            l.contains(r#""event":"watch-start""#)
                && started.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1 == 2
        });
    });
    let ended = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
    let table = ended.stderr.rfind('┌').expect(&ended.stderr);
    let summary = &ended.stderr[table..];
    assert!(
        summary.lines().nth(1).unwrap().ends_with(" all │"),
        "{summary}"
    );
    assert_eq!(
        summary_row(summary, "watch restarts"),
        ["0", "0", "0"],
        "{summary}"
    );
}

/// Secret values hidden in a last-applied annotation that is JSON but not a Secret (a `List`
/// wrapper, `Data`, `binaryData`) or under a case-variant of the key were printed verbatim in
/// jsonl/json/yaml and in recordings: on a Secret, the whole value is redacted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secrets_last_applied_annotation_is_redacted_whatever_it_holds() {
    let (server, dir, kubeconfig) = server_with_a_configmap().await;
    let last_applied = "kubectl.kubernetes.io/last-applied-configuration";
    let variants = [
        (
            "list",
            last_applied,
            r#"{"kind":"List","items":[{"kind":"Secret","data":{"pw":"c2VjcmV0LWxpc3Q="}}]}"#,
        ),
        (
            "capital",
            last_applied,
            r#"{"kind":"Secret","Data":{"pw":"c2VjcmV0LWNhcA=="}}"#,
        ),
        (
            "binary",
            last_applied,
            r#"{"kind":"Secret","binaryData":{"pw":"c2VjcmV0LWJpbg=="}}"#,
        ),
        (
            "case",
            "Kubectl.Kubernetes.io/Last-Applied-Configuration",
            r#"{"kind":"Secret","data":{"pw":"c2VjcmV0LWNhc2U="}}"#,
        ),
    ];
    for (name, key, applied) in variants {
        server.create(
            "secrets",
            json!({"metadata": {"name": name, "namespace": "default",
                                "annotations": {key: applied}}}),
        );
    }
    let leaked = |text: &str| {
        [
            "c2VjcmV0LWxpc3Q=",
            "c2VjcmV0LWNhcA==",
            "c2VjcmV0LWJpbg==",
            "c2VjcmV0LWNhc2U=",
        ]
        .into_iter()
        .filter(|value| text.contains(value))
        .collect::<Vec<_>>()
    };
    for output in ["jsonl", "json", "yaml"] {
        for object in ["full", "meta"] {
            let args = [
                "watch",
                "secrets",
                "-o",
                output,
                "--object",
                object,
                "--until-synced",
                "-q",
            ];
            let out = run(&kubeconfig, &args).await;
            assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
            let text = String::from_utf8_lossy(&out.stdout);
            assert_eq!(leaked(&text), [""; 0], "{args:?}:\n{text}");
            assert_eq!(text.matches("<redacted>").count(), 4, "{args:?}:\n{text}");
        }
    }
    let file = dir.path().join("secrets.jsonl");
    let mut bin = Running::spawn(
        &kubeconfig,
        &["record", "secrets", "-f", file.to_str().unwrap()],
    );
    tokio::task::block_in_place(|| {
        bin.read_stderr_until("the recording", |l| l.contains("synced"))
    });
    let ended = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
    let recording = std::fs::read_to_string(&file).unwrap();
    assert_eq!(leaked(&recording), [""; 0], "{recording}");
    assert!(recording.contains("<redacted>"), "{recording}");
}

/// Both sides of a changed non-JSON last-applied annotation redact to the same text, so `-o wide`
/// said `no change`: it says the annotation changed, without its values.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_redacted_annotation_is_shown_as_a_change() {
    let (server, _dir, kubeconfig) = server_with_a_configmap().await;
    let last_applied = "kubectl.kubernetes.io/last-applied-configuration";
    let secret = |password: &str| {
        json!({"metadata": {"name": "db", "namespace": "default",
                            "annotations": {last_applied: format!("password={password}")}}})
    };
    server.create("secrets", secret("hunter2"));
    let mut bin = Running::spawn(&kubeconfig, &["watch", "secrets", "-o", "wide"]);
    tokio::task::block_in_place(|| bin.read_until("the secret", |l| l.contains("default/db")));
    server.update("secrets", secret("swordfish"));
    let row = tokio::task::block_in_place(|| {
        bin.read_until("the update", |l| {
            l.contains("default/db") && l.contains("Updated")
        })
    });
    drop(bin);
    assert!(
        row.ends_with(&format!(
            r#"metadata.annotations["{last_applied}"] <redacted>"#
        )),
        "{row}"
    );
    assert!(
        !row.contains("hunter2") && !row.contains("swordfish"),
        "{row}"
    );
}

/// `index` only lists, so a resource that can be listed but not watched (`componentstatuses`:
/// get, list) is indexed; `watch` still refuses it, and `index` refuses what cannot be listed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_takes_a_resource_that_can_only_be_listed() {
    let (server, _dir, kubeconfig) = server_with_a_configmap().await;
    server.register(
        ResourceDef::new("", "v1", "ComponentStatus", "componentstatuses", false)
            .with_short_names(&["cs"]),
    );
    server.create(
        "componentstatuses",
        json!({"metadata": {"name": "etcd-0", "labels": {"role": "etcd"}}}),
    );
    let out = run(
        &kubeconfig,
        &[
            "index",
            "cs",
            "--by",
            "label:role",
            "--value",
            "etcd",
            "--keys-only",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "etcd-0\n");

    let out = run(&kubeconfig, &["watch", "cs", "--until-synced"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            r#"the resource type "componentstatuses" cannot be watched: it supports only [get, list]"#
        ),
        "{}",
        stderr(&out)
    );
}

/// A field selector the server refuses (400 BadRequest: a field it does not index) was a runtime
/// error (exit 1); it is the flags that are wrong: exit 2, with the server's words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_field_selector_the_server_refuses_is_a_usage_error() {
    let (server, _dir, kubeconfig) = server_with_a_configmap().await;
    let says = r#"field label not supported: "spec.color""#;
    for args in [
        &[
            "watch",
            "cm",
            "--field-selector",
            "spec.color=red",
            "--until-synced",
        ][..],
        &[
            "index",
            "cm",
            "--by",
            "namespace",
            "--field-selector",
            "spec.color=red",
        ],
    ] {
        server.inject(Fault::custom_status(400, "BadRequest", says).on(Verb::List));
        let out = run(&kubeconfig, args).await;
        server.clear_faults();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        // The server's sentence, then the note on what client-go would do instead (it retries).
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 2, "{args:?}: {err}");
        assert!(lines[0].contains(says), "{args:?}: {err}");
        assert!(lines[1].starts_with("kubectl-deltas: note: a client-go informer does not stop"));
    }
}

/// clap's `invalid value '…'` echoed the argument raw: a crafted `--handler` value reached the
/// terminal as escape sequences (and changed its window title). They are escaped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_errors_escape_the_control_characters_they_quote() {
    let recording = bundled("resync");
    let recording = recording.to_str().unwrap();
    for args in [
        &["replay", recording, "--handler", "a\x1b]0;pwned\x07"][..],
        &["replay", recording, "--resync", "5\x1b[2J"],
        &["replay", recording, "--view", "x\x1b[31m"],
        &["replay", recording, "--no-such-flag\x1b]0;pwned\x07"],
    ] {
        // As on a terminal: without it, clap's output stream drops escape sequences.
        let mut cmd = support::binary::offline_command(args);
        cmd.env("CLICOLOR_FORCE", "1");
        let out = support::binary::output(cmd).await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(r"\u{1b}"), "{args:?}: {err:?}");
        // clap's own colours stay; only the argument's sequences are escaped.
        assert!(
            !err.contains("\x1b]0;") && !err.contains('\x07'),
            "{args:?}: {err:?}"
        );
        assert!(
            !err.contains("\x1b[2J") && !err.contains("\x1b[31m"),
            "{args:?}: {err:?}"
        );
    }
}

/// Flags that mean nothing with the store or queue chosen were accepted silently; docs/queues.md
/// says they are usage errors of one line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flags_with_no_meaning_for_the_store_or_queue_are_usage_errors() {
    let recording = bundled("resync");
    let recording = recording.to_str().unwrap();
    for (flags, says) in [
        (
            &["--store", "undelta", "--view", "handlers"][..],
            "--store undelta: --view handlers and --view both show what an informer's handlers \
             received, and an UndeltaStore has none",
        ),
        (
            &["--store", "undelta", "--view", "both"],
            "--view handlers and --view both",
        ),
        (
            &["--fifo", "plain", "--legacy-sync"],
            "--legacy-sync turns Replaced deltas into Sync, and --fifo plain makes none: the \
             plain FIFO queues objects without delta types",
        ),
        (
            &["--fifo", "atomic", "--legacy-sync=false"],
            "--fifo atomic makes none: the atomic queue emits ReplacedAll whatever \
             --legacy-sync says",
        ),
    ] {
        let mut args = vec!["replay", recording];
        args.extend_from_slice(flags);
        let out = run_offline(&args, None).await;
        let lines = error_lines(&out);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {lines:?}");
        assert_eq!(lines.len(), 1, "{flags:?}: {lines:?}");
        assert!(lines[0].contains(says), "{flags:?}: {lines:?}");
    }
    let out = run_offline(
        &[
            "index",
            "--replay",
            recording,
            "--by",
            "namespace",
            "--fifo",
            "plain",
            "--legacy-sync",
        ],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "index: {}", stderr(&out));
    for fine in [
        &["--store", "undelta", "--view", "pops"][..],
        &["--fifo", "real", "--legacy-sync"],
    ] {
        let mut args = vec!["replay", recording, "-q"];
        args.extend_from_slice(fine);
        let out = run_offline(&args, None).await;
        assert_eq!(out.status.code(), Some(0), "{fine:?}: {}", stderr(&out));
    }
}

/// A server that refuses the connection is one sentence on stderr, with exit 3: the HTTP client's
/// own log of the failed request (ERROR in kube's stack) stays out of it without `-vv`, and is
/// there with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_connection_is_one_sentence_not_a_log_of_the_request() {
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let server = format!("http://127.0.0.1:{closed}");
    let args = ["watch", "cm", "--server", server.as_str(), "--until-synced"];
    let out = run_offline(&args, None).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("kubectl-deltas: error: cannot read the API resources of the cluster at")
            && err.contains("connection refused"),
        "{err}"
    );
    let mut verbose = args.to_vec();
    verbose.push("-vv");
    let out = run_offline(&verbose, None).await;
    assert!(
        stderr(&out).contains("failed with error"),
        "{}",
        stderr(&out)
    );
}
