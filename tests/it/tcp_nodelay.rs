//! Every connection the binary opens to the API server has `TCP_NODELAY` set: with Nagle's
//! algorithm on, a request written after the TLS handshake waits for the server's delayed ACK
//! (about 40 ms per connection, kube-rs/kube#2056). The option is read from the running binary's
//! own sockets (`pidfd_getfd`, Linux 5.6), not inferred from timings.

use crate::support;

use std::net::{SocketAddr, TcpStream};
use std::os::fd::{FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

use serde_json::json;
use support::binary::{PATIENCE, Running};
use support::fake_apiserver::FakeApiServer;
use support::fake_apiserver::tls::ServerCertificate;

/// `TCP_NODELAY` of each socket of process `pid` connected to `server`.
fn nodelay_of_connections(pid: u32, server: SocketAddr) -> Vec<bool> {
    // SAFETY: plain system calls on integers; a descriptor returned is owned here alone.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::c_int, 0) };
    assert!(
        pidfd >= 0,
        "pidfd_open: {}",
        std::io::Error::last_os_error()
    );
    // SAFETY: `pidfd` was just opened and nothing else owns it.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd as libc::c_int) };
    let mut found = Vec::new();
    for entry in std::fs::read_dir(format!("/proc/{pid}/fd")).expect("the child's /proc") {
        let entry = entry.expect("a /proc entry");
        let is_socket = std::fs::read_link(entry.path())
            .is_ok_and(|target| target.to_string_lossy().starts_with("socket:"));
        let Some(fd) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        if !is_socket {
            continue;
        }
        use std::os::fd::AsRawFd;
        // SAFETY: as above; the copy refers to the child's socket and closing it leaves the
        // child's descriptor open.
        let copy = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) };
        if copy < 0 {
            let err = std::io::Error::last_os_error();
            // Closed since the directory was read.
            assert_eq!(err.raw_os_error(), Some(libc::EBADF), "pidfd_getfd: {err}");
            continue;
        }
        // SAFETY: `copy` is a new descriptor owned here alone.
        let socket = unsafe { TcpStream::from_raw_fd(copy as libc::c_int) };
        if socket.peer_addr().is_ok_and(|peer| peer == server) {
            found.push(socket.nodelay().expect("getsockopt TCP_NODELAY"));
        }
    }
    found
}

async fn check(server: FakeApiServer, extra: &[&str]) {
    server.create(
        "configmaps",
        json!({"metadata": {"name": "a", "namespace": "default"}}),
    );
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let mut args = vec!["watch", "cm", "-o", "jsonl", "--object", "none"];
    args.extend_from_slice(extra);
    let mut running = Running::spawn(&kubeconfig, &args);
    running.read_until("the watch's start", |line| line.contains("\"watch-start\""));
    // The watch that follows the list holds its connection open while the binary runs.
    let deadline = Instant::now() + PATIENCE;
    while !server.requests().iter().any(|r| r.is_watch()) {
        assert!(Instant::now() < deadline, "no watch request");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let pid = running.id();
    let addr = server.addr();
    let nodelay = tokio::task::spawn_blocking(move || nodelay_of_connections(pid, addr))
        .await
        .unwrap();
    let ended = running.interrupt();
    assert!(
        !nodelay.is_empty(),
        "no connection to {addr} found; stderr: {}",
        ended.stderr
    );
    assert!(
        nodelay.iter().all(|&on| on),
        "TCP_NODELAY per connection to the server: {nodelay:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_to_a_plain_http_server_set_tcp_nodelay() {
    check(FakeApiServer::start().await, &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_to_a_tls_server_set_tcp_nodelay() {
    let server = FakeApiServer::start_tls(ServerCertificate::Loopback).await;
    check(server, &["--insecure-skip-tls-verify"]).await;
}
