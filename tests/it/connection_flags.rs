//! kubectl's connection flags (`--server`, `--token`, `--as`, `--as-group`, `--as-uid`, …) with
//! kubectl's meaning: they override the kubeconfig's cluster and user entries, `--server` is
//! enough without any kubeconfig, and impersonation reaches the server as the
//! `Impersonate-User`/`-Group`/`-Uid` headers, so that a 403 names the impersonated identity.
//! The TLS flags (`--certificate-authority`, `--insecure-skip-tls-verify`, `--tls-server-name`,
//! `--client-certificate`, `--client-key`) against the fake API server over TLS.

use crate::support;

use std::process::Output;

use serde_json::json;
use support::binary::{offline_command, output, run};
use support::fake_apiserver::tls::{NAMED_HOST, ServerCertificate, fixture as tls_fixture};
use support::fake_apiserver::{FakeApiServer, Fault, TOKEN, Verb};

const UNTIL_SYNCED: [&str; 8] = [
    "watch",
    "cm",
    "--until-synced",
    "-o",
    "jsonl",
    "--object",
    "none",
    "-q",
];

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

async fn server_with_a_configmap() -> FakeApiServer {
    let server = FakeApiServer::start().await;
    server.create(
        "configmaps",
        json!({"metadata": {"name": "a", "namespace": "default"}}),
    );
    server
}

fn args<'a>(flags: &[&'a str]) -> Vec<&'a str> {
    UNTIL_SYNCED
        .iter()
        .copied()
        .chain(flags.iter().copied())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn impersonation_flags_are_sent_with_every_request() {
    let server = server_with_a_configmap().await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let out = run(
        &kubeconfig,
        &args(&[
            "--as",
            "system:serviceaccount:team:builder",
            "--as-group",
            "system:serviceaccounts",
            "--as-group",
            "builders",
            "--as-uid",
            "42",
        ]),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    assert!(requests.iter().any(|r| r.is_list()), "{requests:?}");
    for request in &requests {
        assert_eq!(
            request.identity_header("impersonate-user"),
            ["system:serviceaccount:team:builder"],
            "{request:?}"
        );
        assert_eq!(
            request.identity_header("impersonate-group"),
            ["system:serviceaccounts", "builders"],
            "{request:?}"
        );
        assert_eq!(request.identity_header("impersonate-uid"), ["42"]);
        // The kubeconfig's own credentials still authenticate the impersonator.
        assert_eq!(
            request.identity_header("authorization"),
            [format!("Bearer {TOKEN}").as_str()]
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_403_while_impersonating_names_the_verb_resource_and_identity() {
    let server = server_with_a_configmap().await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    server.inject(Fault::status(403).on(Verb::List));
    let out = run(
        &kubeconfig,
        &args(&["--as", "system:serviceaccount:team:builder"]),
    )
    .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains(
            r#"User "system:serviceaccount:team:builder" cannot list resource "configmaps""#
        ),
        "{err}"
    );
}

#[test]
fn impersonating_groups_or_a_uid_needs_a_user_as_in_kubectl() {
    for flags in [&["--as-group", "builders"][..], &["--as-uid", "42"]] {
        let out = support::binary::output_blocking(offline_command(&args(flags)));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {err}");
        assert!(err.contains("--as <USER>"), "{err}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_and_token_need_no_kubeconfig() {
    let server = server_with_a_configmap().await;
    let home = tempfile::tempdir().unwrap();
    let mut cmd = offline_command(&args(&["--server", &server.url(), "--token", "from-flag"]));
    cmd.env("KUBECONFIG", home.path().join("missing"))
        .env("HOME", home.path())
        .env_remove("KUBERNETES_SERVICE_HOST");
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = support::binary::json_lines(&out.stdout);
    assert!(
        lines.iter().any(|l| l["key"] == "default/a"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    for request in server.requests() {
        assert_eq!(
            request.identity_header("authorization"),
            ["Bearer from-flag"],
            "{request:?}"
        );
        assert!(request.identity_header("impersonate-user").is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_and_token_override_the_kubeconfigs() {
    let server = server_with_a_configmap().await;
    let dir = tempfile::tempdir().unwrap();
    // A kubeconfig whose server nobody listens on: only `--server` reaches the fake one.
    let nowhere = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}", nowhere.local_addr().unwrap());
    drop(nowhere);
    let path = dir.path().join("kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: c\n  cluster:\n    \
             server: {dead}\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n\
             users:\n- name: u\n  user:\n    token: {TOKEN}\n"
        ),
    )
    .unwrap();
    let out = run(
        &path,
        &args(&["--server", &server.url(), "--token", "from-flag"]),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    assert!(!requests.is_empty());
    for request in requests {
        assert_eq!(
            request.identity_header("authorization"),
            ["Bearer from-flag"]
        );
    }
}

/// kubectl's TLS flags against the fake API server over TLS (certificates from
/// `tests/fixtures/tls/`), each run until synced: its exit code, stderr and the requests the
/// server received.
async fn over_tls(
    server: &FakeApiServer,
    flags: &[&str],
) -> (Output, Vec<support::fake_apiserver::Request>) {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    server.clear_requests();
    let out = run(&kubeconfig, &args(flags)).await;
    (out, server.requests())
}

async fn tls_server(certificate: ServerCertificate) -> FakeApiServer {
    let server = FakeApiServer::start_tls(certificate).await;
    server.create(
        "configmaps",
        json!({"metadata": {"name": "a", "namespace": "default"}}),
    );
    server
}

fn tls_file(name: &str) -> String {
    tls_fixture(name).to_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificate_authority_or_insecure_skip_tls_verify_reach_a_server_of_a_private_ca() {
    let server = tls_server(ServerCertificate::Loopback).await;
    // The kubeconfig names no CA: the system's roots do not know the test CA.
    let (out, requests) = over_tls(&server, &[]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains(
            "the server's certificate is signed by an authority this client does not trust: \
             give that CA with --certificate-authority (or the kubeconfig's \
             certificate-authority), or skip the check with --insecure-skip-tls-verify"
        ),
        "{err}"
    );
    assert!(requests.is_empty(), "{requests:?}");

    let ca = tls_file("ca.pem");
    let (out, requests) = over_tls(&server, &["--certificate-authority", &ca]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(requests.iter().any(|r| r.is_list()), "{requests:?}");

    let (out, requests) = over_tls(&server, &["--insecure-skip-tls-verify"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(requests.iter().any(|r| r.is_list()), "{requests:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_server_name_verifies_a_certificate_issued_for_another_name() {
    // Reached at 127.0.0.1 with a certificate only for apiserver.test.
    let server = tls_server(ServerCertificate::Named).await;
    let ca = tls_file("ca.pem");
    let (out, requests) = over_tls(&server, &["--certificate-authority", &ca]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains(
            "the server's certificate is not issued for the host in the server's URL: \
             --tls-server-name NAME checks it against the name it was issued for"
        ),
        "{err}"
    );
    assert!(requests.is_empty(), "{requests:?}");

    let (out, requests) = over_tls(
        &server,
        &[
            "--certificate-authority",
            &ca,
            "--tls-server-name",
            NAMED_HOST,
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(requests.iter().any(|r| r.is_list()), "{requests:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_certificate_and_key_authenticate_every_request() {
    let server = tls_server(ServerCertificate::Loopback).await;
    let ca = tls_file("ca.pem");
    let (out, requests) = over_tls(&server, &["--certificate-authority", &ca]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        requests.iter().all(|r| !r.client_certificate),
        "{requests:?}"
    );

    let (cert, key) = (tls_file("client.pem"), tls_file("client.key"));
    let (out, requests) = over_tls(
        &server,
        &[
            "--certificate-authority",
            &ca,
            "--client-certificate",
            &cert,
            "--client-key",
            &key,
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(requests.iter().any(|r| r.is_list()), "{requests:?}");
    assert!(
        requests.iter().all(|r| r.client_certificate),
        "{requests:?}"
    );
}
