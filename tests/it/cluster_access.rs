//! How the binary reaches a cluster, as kubectl does: the proxy of `HTTPS_PROXY`/`HTTP_PROXY`
//! unless `NO_PROXY` (or loopback) says otherwise, the kubeconfig's `proxy-url` over both,
//! credentials of proxy and server URLs never printed, and `$KUBECONFIG` lists merged with
//! missing files skipped. The proxies are tiny loopback ones written here that count what they
//! are asked; server names that are not loopback addresses are only ever resolved by them.

use crate::support;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use serde_json::json;
use support::binary::output as run;
use support::fake_apiserver::{FakeApiServer, TOKEN};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// Every variable that could route the binary through a proxy.
const PROXY_VARIABLES: [&str; 6] = [
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "NO_PROXY",
    "no_proxy",
];

/// The binary with `args`, none of the caller's proxy variables, and `env` set.
fn binary(args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = support::binary::offline_command(args);
    for name in PROXY_VARIABLES {
        cmd.env_remove(name);
    }
    cmd.env_remove("KUBERNETES_SERVICE_HOST");
    for (name, value) in env {
        cmd.env(name, value);
    }
    cmd
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A kubeconfig for `server`, with the fake server's token and `extra` lines under the cluster.
fn kubeconfig(dir: &Path, file: &str, server: &str, extra: &str) -> PathBuf {
    let path = dir.join(file);
    let text = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: fake\nclusters:\n- name: fake\n  cluster:\n    \
         server: {server}\n{extra}contexts:\n- name: fake\n  context:\n    cluster: fake\n    \
         user: fake\n    namespace: default\nusers:\n- name: fake\n  user:\n    token: {TOKEN}\n"
    );
    std::fs::write(&path, text).unwrap();
    path
}

async fn server_with_a_configmap() -> FakeApiServer {
    let server = FakeApiServer::start().await;
    server.create(
        "configmaps",
        json!({"metadata": {"name": "a", "namespace": "default"}}),
    );
    server
}

const WATCH_UNTIL_SYNCED: [&str; 8] = [
    "watch",
    "cm",
    "--until-synced",
    "-o",
    "jsonl",
    "--object",
    "none",
    "-q",
];

/// What a test proxy was asked.
#[derive(Debug, Clone)]
struct Asked {
    /// `host:port` of the CONNECT, or of the SOCKS5 request.
    target: String,
    /// The `Proxy-Authorization` header, if any.
    authorization: Option<String>,
}

/// A loopback proxy that records what it is asked, then tunnels to `upstream` (whatever host it
/// was asked for) or, without one, refuses with 403.
struct TestProxy {
    addr: SocketAddr,
    asked: Arc<Mutex<Vec<Asked>>>,
}

impl TestProxy {
    async fn http(upstream: Option<SocketAddr>) -> Self {
        Self::start(move |client, asked| connect_session(client, upstream, asked)).await
    }

    async fn socks5(upstream: SocketAddr) -> Self {
        Self::start(move |client, asked| socks5_session(client, upstream, asked)).await
    }

    async fn start<F, Fut>(session: F) -> Self
    where
        F: Fn(TcpStream, Arc<Mutex<Vec<Asked>>>) -> Fut + Send + 'static,
        Fut: Future<Output = std::io::Result<()>> + Send + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let asked = Arc::new(Mutex::new(Vec::new()));
        let log = asked.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(session(client, log.clone()));
            }
        });
        TestProxy { addr, asked }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn asked(&self) -> Vec<Asked> {
        self.asked.lock().unwrap().clone()
    }
}

/// An HTTP CONNECT proxy's side of one connection.
async fn connect_session(
    mut client: TcpStream,
    upstream: Option<SocketAddr>,
    asked: Arc<Mutex<Vec<Asked>>>,
) -> std::io::Result<()> {
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") && head.len() < 16 * 1024 {
        head.push(client.read_u8().await?);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let mut lines = head.lines();
    let request: Vec<&str> = lines.next().unwrap_or("").split(' ').collect();
    let authorization = lines.find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("proxy-authorization")
            .then(|| value.trim().to_owned())
    });
    asked.lock().unwrap().push(Asked {
        target: request.get(1).copied().unwrap_or("").to_owned(),
        authorization,
    });
    let Some(upstream) = upstream.filter(|_| request.first() == Some(&"CONNECT")) else {
        return client
            .write_all(b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n")
            .await;
    };
    let mut server = TcpStream::connect(upstream).await?;
    client
        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
        .await?;
    tokio::io::copy_bidirectional(&mut client, &mut server).await?;
    Ok(())
}

/// A SOCKS5 proxy's side of one connection (no authentication, CONNECT only).
async fn socks5_session(
    mut client: TcpStream,
    upstream: SocketAddr,
    asked: Arc<Mutex<Vec<Asked>>>,
) -> std::io::Result<()> {
    let (_version, methods) = (client.read_u8().await?, client.read_u8().await?);
    let mut offered = vec![0; usize::from(methods)];
    client.read_exact(&mut offered).await?;
    client.write_all(&[5, 0]).await?;
    let mut request = [0; 4];
    client.read_exact(&mut request).await?;
    let host = match request[3] {
        1 => {
            let mut ip = [0; 4];
            client.read_exact(&mut ip).await?;
            std::net::Ipv4Addr::from(ip).to_string()
        }
        3 => {
            let mut name = vec![0; usize::from(client.read_u8().await?)];
            client.read_exact(&mut name).await?;
            String::from_utf8_lossy(&name).into_owned()
        }
        _ => return Ok(()),
    };
    let port = client.read_u16().await?;
    asked.lock().unwrap().push(Asked {
        target: format!("{host}:{port}"),
        authorization: None,
    });
    let mut server = TcpStream::connect(upstream).await?;
    client.write_all(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0]).await?;
    tokio::io::copy_bidirectional(&mut client, &mut server).await?;
    Ok(())
}

/// A loopback port nothing listens on.
async fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap().port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_proxy_carries_every_request_to_a_named_server() {
    let server = server_with_a_configmap().await;
    let proxy = TestProxy::http(Some(server.addr())).await;
    let dir = tempfile::tempdir().unwrap();
    // Only the proxy can tell where this name is: the binary must not resolve it.
    let name = format!("kube-apiserver.proxy.test:{}", server.addr().port());
    let config = kubeconfig(dir.path(), "config", &format!("http://{name}"), "");
    let mut args = WATCH_UNTIL_SYNCED.to_vec();
    args.extend(["--kubeconfig", config.to_str().unwrap()]);
    let out = run(binary(&args, &[("HTTP_PROXY", &proxy.url())])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(r#""key":"default/a""#),
        "{}",
        stdout(&out)
    );
    let asked = proxy.asked();
    assert!(!asked.is_empty());
    assert!(asked.iter().all(|a| a.target == name), "{asked:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_proxy_and_loopback_servers_go_direct() {
    let server = server_with_a_configmap().await;
    let proxy = TestProxy::http(Some(server.addr())).await;
    let dir = tempfile::tempdir().unwrap();
    let config = server.write_kubeconfig(dir.path());
    let mut args = WATCH_UNTIL_SYNCED.to_vec();
    args.extend(["--kubeconfig", config.to_str().unwrap()]);
    let url = proxy.url();
    for env in [
        &[
            ("HTTPS_PROXY", url.as_str()),
            ("HTTP_PROXY", url.as_str()),
            ("NO_PROXY", "127.0.0.1"),
        ][..],
        // kubectl never proxies a loopback server.
        &[
            ("https_proxy", url.as_str()),
            ("http_proxy", url.as_str()),
            ("no_proxy", "localhost"),
        ],
    ] {
        let out = run(binary(&args, env)).await;
        assert_eq!(out.status.code(), Some(0), "{env:?}: {}", stderr(&out));
        assert!(stdout(&out).contains(r#""key":"default/a""#));
    }
    assert!(proxy.asked().is_empty(), "{:?}", proxy.asked());

    // kube, which reads NO_PROXY whenever HTTPS_PROXY is set, refuses an empty entry that Go
    // skips: the message says which variable and what to do.
    let env = [("HTTPS_PROXY", url.as_str()), ("NO_PROXY", "localhost,")];
    let out = run(binary(&args, &env)).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains(r#"NO_PROXY "localhost," has an entry"#) && err.contains("trailing comma"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kubeconfigs_proxy_url_wins_over_the_environment() {
    let server = server_with_a_configmap().await;
    let proxy = TestProxy::http(Some(server.addr())).await;
    let ignored = TestProxy::http(Some(server.addr())).await;
    let dir = tempfile::tempdir().unwrap();
    // client-go's proxy-url applies to every server, loopback included, whatever NO_PROXY says.
    let config = kubeconfig(
        dir.path(),
        "config",
        &server.url(),
        &format!("    proxy-url: {}\n", proxy.url()),
    );
    let mut args = WATCH_UNTIL_SYNCED.to_vec();
    args.extend(["--kubeconfig", config.to_str().unwrap()]);
    let env = [("HTTP_PROXY", ignored.url()), ("NO_PROXY", "*".to_owned())];
    let env: Vec<(&str, &str)> = env.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let out = run(binary(&args, &env)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!proxy.asked().is_empty());
    assert!(ignored.asked().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socks5_proxy_url_resolves_the_server_name_itself() {
    let server = server_with_a_configmap().await;
    let proxy = TestProxy::socks5(server.addr()).await;
    let dir = tempfile::tempdir().unwrap();
    let name = format!("kube-apiserver.socks.test:{}", server.addr().port());
    let config = kubeconfig(
        dir.path(),
        "config",
        &format!("http://{name}"),
        &format!("    proxy-url: socks5://{}\n", proxy.addr),
    );
    let mut args = WATCH_UNTIL_SYNCED.to_vec();
    args.extend(["--kubeconfig", config.to_str().unwrap()]);
    let out = run(binary(&args, &[])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let asked = proxy.asked();
    assert!(!asked.is_empty());
    assert!(asked.iter().all(|a| a.target == name), "{asked:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_proxy_gets_its_credentials_and_a_refusal_names_it_without_them() {
    let proxy = TestProxy::http(None).await;
    let dir = tempfile::tempdir().unwrap();
    let config = kubeconfig(dir.path(), "config", "https://kube.proxy.test:6443", "");
    let with_credentials = format!("http://user:s3cret@{}", proxy.addr);
    let out = run(binary(
        &[
            "-vv",
            "watch",
            "cm",
            "--kubeconfig",
            config.to_str().unwrap(),
        ],
        &[("HTTPS_PROXY", &with_credentials)],
    ))
    .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    let asked = proxy.asked();
    assert_eq!(asked[0].target, "kube.proxy.test:6443", "{asked:?}");
    // `user:s3cret`, as kubectl sends it.
    assert_eq!(
        asked[0].authorization.as_deref(),
        Some("Basic dXNlcjpzM2NyZXQ=")
    );
    assert!(
        err.contains(&format!("through the proxy http://***@{}", proxy.addr)),
        "{err}"
    );
    assert!(!err.contains("s3cret") && !err.contains("user:"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_in_proxy_and_server_urls_never_reach_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let port = closed_port().await;

    let config = kubeconfig(dir.path(), "named", "https://kube.proxy.test:6443", "");
    let proxy = format!("http://user:s3cret@127.0.0.1:{port}");
    let out = run(binary(
        &[
            "-vv",
            "watch",
            "cm",
            "--kubeconfig",
            config.to_str().unwrap(),
        ],
        &[("HTTPS_PROXY", &proxy)],
    ))
    .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("(connection refused): is the proxy running? (it comes from HTTPS_PROXY)"),
        "{err}"
    );
    assert!(!err.contains("s3cret") && !err.contains("user:"), "{err}");

    let server = format!("http://admin:hunter2@127.0.0.1:{port}");
    let config = kubeconfig(dir.path(), "userinfo", &server, "");
    let out = run(binary(
        &[
            "-vv",
            "watch",
            "cm",
            "--kubeconfig",
            config.to_str().unwrap(),
        ],
        &[],
    ))
    .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains(&format!("127.0.0.1:{port}")), "{err}");
    assert!(!err.contains("hunter2") && !err.contains("admin:"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kubeconfig_list_skips_missing_files_and_the_first_file_wins() {
    let server = server_with_a_configmap().await;
    let dir = tempfile::tempdir().unwrap();
    let good = kubeconfig(dir.path(), "good", &server.url(), "");
    // Same cluster, context and user names, and its own current-context: all shadowed by `good`.
    let unreachable = format!("http://127.0.0.1:{}", closed_port().await);
    let shadowed = kubeconfig(dir.path(), "shadowed", &unreachable, "");
    let missing = dir.path().join("missing");
    let list = std::env::join_paths([&missing, &good, &shadowed]).unwrap();
    let out = run(binary(
        &WATCH_UNTIL_SYNCED,
        &[
            ("KUBECONFIG", list.to_str().unwrap()),
            ("HOME", dir.path().to_str().unwrap()),
        ],
    ))
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains(r#""key":"default/a""#));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kubeconfig_list_of_missing_files_is_no_kubeconfig() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let list = std::env::join_paths([&a, &b]).unwrap();
    let out = run(binary(
        &["watch", "cm"],
        &[
            ("KUBECONFIG", list.to_str().unwrap()),
            ("HOME", dir.path().to_str().unwrap()),
        ],
    ))
    .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains(&format!(
            "no kubeconfig found (none of the KUBECONFIG files exists: {}, {}) and not running \
             in a pod",
            a.display(),
            b.display()
        )),
        "{err}"
    );
}
