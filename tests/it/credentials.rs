//! What the user typed to reach a cluster, under attack and by mistake (issue #38): a `--server`
//! without a scheme is read as client-go reads it, and a malformed one is refused with a sentence.

use crate::support;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::json;
use support::binary::{offline_command, output, run};
use support::fake_apiserver::tls::{ServerCertificate, fixture};
use support::fake_apiserver::{FakeApiServer, TOKEN};

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

#[track_caller]
fn assert_no_secret(what: &str, text: &str) {
    assert!(!text.contains(TOKEN), "{what} holds the token: {text}");
    assert!(
        !text.contains(PASSWORD),
        "{what} holds the password: {text}"
    );
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
