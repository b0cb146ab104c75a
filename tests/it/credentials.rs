//! What the user typed to reach a cluster, under attack and by mistake (issue #38): credentials on
//! the command line never reach what the tool writes (the `-o html` page, a recording's header,
//! `-v` logs); a certificate the client refuses and a `--request-timeout` too short end the
//! session with the same sentence whether the discovery cache is warm or cold; a `--server`
//! without a scheme is read as client-go reads it, and a malformed one is refused with a sentence.

use crate::support;

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::json;
use support::binary::{Running, offline_command, output, run};
use support::fake_apiserver::tls::{ServerCertificate, fixture};
use support::fake_apiserver::{FakeApiServer, Fault, TOKEN, Verb};

/// The password in the server's URL.
const PASSWORD: &str = "hunter2-in-the-url";

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

async fn server_with_a_configmap(tls: bool) -> FakeApiServer {
    let server = if tls {
        FakeApiServer::start_tls(ServerCertificate::Loopback).await
    } else {
        FakeApiServer::start().await
    };
    server.create(
        "configmaps",
        json!({"metadata": {"name": "a", "namespace": "default"}}),
    );
    server
}

/// The binary with no kubeconfig at all: the flags say where and as whom.
fn flags_only(args: &[&str], home: &Path) -> Command {
    let mut cmd = offline_command(args);
    cmd.env("KUBECONFIG", home.join("missing"))
        .env("HOME", home)
        .env_remove("KUBERNETES_SERVICE_HOST");
    cmd
}

/// `url` with a user and [`PASSWORD`] in it.
fn with_userinfo(url: &str) -> String {
    url.replacen("://", &format!("://alice:{PASSWORD}@"), 1)
}

#[track_caller]
fn assert_no_secret(what: &str, text: &str) {
    assert!(!text.contains(TOKEN), "{what} holds the token: {text}");
    assert!(
        !text.contains(PASSWORD),
        "{what} holds the password: {text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_and_verbose_logs_show_the_command_line_without_its_credentials() {
    let server = server_with_a_configmap(false).await;
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("page.html");
    let url = with_userinfo(&server.url());
    let token_flag = format!("--token={TOKEN}");
    let server_flag = format!("-s{url}");
    let spellings: [&[&str]; 2] = [
        &["--server", &url, "--token", TOKEN],
        &[&server_flag, &token_flag],
    ];
    for flags in spellings {
        let mut args = vec![
            "-vv",
            "watch",
            "cm",
            "-n",
            "default",
            "--until-synced",
            "-o",
            "html",
            "-f",
            page.to_str().unwrap(),
        ];
        args.extend_from_slice(flags);
        let out = output(flags_only(&args, dir.path())).await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert_no_secret("stderr", &err);
        let html = std::fs::read_to_string(&page).unwrap();
        assert_no_secret("the page", &html);
        let host = server.addr().to_string();
        let shown = ["--token REDACTED".to_owned(), "--token=REDACTED".to_owned()];
        assert!(shown.iter().any(|s| html.contains(s.as_str())), "{html}");
        assert!(html.contains(&format!("http://***@{host}")), "{html}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_made_with_handlers_holds_no_credentials() {
    let server = server_with_a_configmap(false).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rec.jsonl");
    let url = with_userinfo(&server.url());
    let cmd = flags_only(
        &[
            "record",
            "cm",
            "-f",
            file.to_str().unwrap(),
            "--handler",
            "a",
            "--server",
            &url,
            "--token",
            TOKEN,
        ],
        dir.path(),
    );
    let mut bin = Running::start(cmd);
    tokio::task::block_in_place(|| bin.read_stderr_until("the sync", |l| l.contains("── synced:")));
    let ended = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
    let recording = std::fs::read_to_string(&file).unwrap();
    let header = recording.lines().next().unwrap();
    assert!(
        header.contains(r#""replayWith":["--handler","a"]"#),
        "{header}"
    );
    assert_no_secret("the recording", &recording);
    assert_no_secret("stderr", &ended.stderr);
}

/// Runs `watch --until-synced` and `index` with `flags` (and the discovery cache of `cache`)
/// against `kubeconfig`, and checks that each exits 3 with `sentence` on stderr.
async fn both_exit_3_saying(kubeconfig: &Path, cache: &Path, flags: &[&str], sentence: &str) {
    let commands: [&[&str]; 2] = [
        &["watch", "cm", "--until-synced", "-q"],
        &["index", "cm", "--by", "namespace", "-q"],
    ];
    for command in commands {
        let mut args = command.to_vec();
        args.extend_from_slice(flags);
        args.extend_from_slice(&["--cache-dir", cache.to_str().unwrap()]);
        let out = run(kubeconfig, &args).await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert!(err.contains(sentence), "{args:?}: {err}");
        assert!(!err.contains("retrying"), "{args:?}: {err}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_certificate_ends_the_session_with_a_warm_discovery_cache_or_a_cold_one() {
    let server = server_with_a_configmap(true).await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let cache = tempfile::tempdir().unwrap();
    let untrusted = "the server's certificate is signed by an authority this client does not \
                     trust: give that CA with --certificate-authority";
    // Cold: discovery meets the certificate first.
    both_exit_3_saying(&kubeconfig, cache.path(), &[], untrusted).await;
    // Warm: the list does.
    let ca = fixture("ca.pem");
    let ca_flag = ["--certificate-authority", ca.to_str().unwrap()];
    let mut args = vec!["watch", "cm", "--until-synced", "-q", "--cache-dir"];
    args.push(cache.path().to_str().unwrap());
    args.extend_from_slice(&ca_flag);
    let out = run(&kubeconfig, &args).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let wrong = fixture("client.pem");
    let wrong_flag = ["--certificate-authority", wrong.to_str().unwrap()];
    both_exit_3_saying(&kubeconfig, cache.path(), &wrong_flag, untrusted).await;
    both_exit_3_saying(&kubeconfig, cache.path(), &[], untrusted).await;
}

/// A server that holds every request (or every list) far longer than `--request-timeout 1s`: the
/// timeout, not the server, decides how each run ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_timeout_too_short_ends_the_session_with_a_warm_discovery_cache_or_a_cold_one() {
    let server = server_with_a_configmap(false).await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let cache = tempfile::tempdir().unwrap();
    let too_short = ["--request-timeout", "1s"];
    let sentence = "no answer within --request-timeout 1s, and it would take as long again: give \
                    it more time (--request-timeout 1m) or none (--request-timeout 0)";
    let held = || Fault::delay(Duration::from_secs(120)).times(100);
    // Cold: discovery is held.
    server.inject(held());
    both_exit_3_saying(&kubeconfig, cache.path(), &too_short, sentence).await;
    server.clear_faults();
    let warm = ["watch", "cm", "--until-synced", "-q", "--cache-dir"];
    let mut args = warm.to_vec();
    args.push(cache.path().to_str().unwrap());
    let out = run(&kubeconfig, &args).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Warm: no discovery; the list is held.
    server.inject(held().on(Verb::List));
    both_exit_3_saying(&kubeconfig, cache.path(), &too_short, sentence).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_a_scheme_is_read_as_client_go_reads_it() {
    let home = tempfile::tempdir().unwrap();
    let until_synced = ["watch", "cm", "-n", "default", "--until-synced", "-q"];
    // No TLS configured: http, as client-go's DefaultServerURL.
    let plain = server_with_a_configmap(false).await;
    let host = plain.addr().to_string();
    let mut args = until_synced.to_vec();
    args.extend_from_slice(&["--server", &host, "--token", TOKEN]);
    let out = output(flags_only(&args, home.path())).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!plain.requests().is_empty());
    // A CA configured: https.
    let tls = server_with_a_configmap(true).await;
    let host = tls.addr().to_string();
    let ca = fixture("ca.pem");
    let mut args = until_synced.to_vec();
    args.extend_from_slice(&["--server", &host, "--token", TOKEN]);
    args.extend_from_slice(&["--certificate-authority", ca.to_str().unwrap()]);
    let out = output(flags_only(&args, home.path())).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(tls.requests().iter().any(|r| r.is_list()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_server_is_refused_with_a_sentence() {
    let home = tempfile::tempdir().unwrap();
    let cases = [
        (":6443", "it has no host"),
        ("http://", "it is not a URL"),
        ("https://[::1", "it is not a URL"),
        (
            "127.0.0.1:6443/api",
            "a host:port without a scheme cannot have a path",
        ),
        ("ftp://127.0.0.1", "its scheme is neither https nor http"),
    ];
    for (server, why) in cases {
        let out = output(flags_only(
            &["watch", "cm", "--server", server],
            home.path(),
        ))
        .await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{server}: {err}");
        assert_eq!(
            err,
            format!(
                "kubectl-deltas: error: --server {server:?} is not a server kubectl-deltas can \
                 reach: {why}; give a URL (https://HOST:PORT) or a HOST:PORT pair\n"
            ),
        );
    }
    // The same from a kubeconfig, its password not shown.
    let kubeconfig = home.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: c\n  cluster:\n    \
             server: \"alice:{PASSWORD}@:6443\"\ncontexts:\n- name: c\n  context:\n    cluster: c\n"
        ),
    )
    .unwrap();
    let out = run(&kubeconfig, &["watch", "cm"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("the kubeconfig's server \"***@:6443\" is not a server"),
        "{err}"
    );
    assert_no_secret("stderr", &err);
}
