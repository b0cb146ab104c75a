//! The files the tool writes, through the binary: `-o html -f FILE` replaces an existing FILE
//! only with a complete page, once the session ended normally (a mistyped resource, a missing
//! recording, an unreachable cluster or a recording that fails part-way leave it as it was, also
//! through a symlink), never with the recording being replayed; no temporary file is left
//! behind. `record --force` replaces a recording the same way.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::json;
use tokio::net::TcpListener;

use crate::support::binary::{Running, run, run_offline, stderr};
use crate::support::fake_apiserver::FakeApiServer;
use crate::support::paths::{bundled, path_str};

const OLD: &str = "the page of an earlier session\n";

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A page file holding [`OLD`] and a symlink to it, in `dir`.
fn old_page(dir: &Path) -> (PathBuf, PathBuf) {
    let page = dir.join("page.html");
    std::fs::write(&page, OLD).unwrap();
    let link = dir.join("link.html");
    std::os::unix::fs::symlink("page.html", &link).unwrap();
    (page, link)
}

/// Asserts `page` holds a whole page, and `link` still names it.
fn assert_replaced_whole(page: &Path, link: &Path) {
    let html = std::fs::read_to_string(page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(html.ends_with("</html>\n"), "cut short");
    assert!(!html.contains(OLD.trim()), "the old content is left");
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_existing_page_survives_a_session_that_fails() {
    let server = FakeApiServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let pages = tempfile::tempdir().unwrap();
    let (page, link) = old_page(pages.path());

    // A port nothing listens on.
    let closed = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let unreachable = dir.path().join("unreachable");
    let text = std::fs::read_to_string(&kubeconfig)
        .unwrap()
        .replace(&server.url(), &format!("http://127.0.0.1:{closed}"));
    std::fs::write(&unreachable, text).unwrap();

    // A recording whose second line is not a recording's.
    let broken = dir.path().join("broken.jsonl");
    let mut text = std::fs::read_to_string(bundled("resync")).unwrap();
    text.push_str("this is not JSON\n");
    std::fs::write(&broken, text).unwrap();

    for target in [&page, &link] {
        let target = path_str(target);
        for (args, code, config) in [
            (
                vec!["watch", "nosuchthings", "-o", "html", "-f", target],
                2,
                Some(&kubeconfig),
            ),
            (
                vec!["watch", "cm", "-o", "html", "-f", target],
                3,
                Some(&unreachable),
            ),
            (
                vec![
                    "replay",
                    "/nonexistent/rec.jsonl",
                    "-o",
                    "html",
                    "-f",
                    target,
                ],
                1,
                None,
            ),
            (
                vec!["replay", path_str(&broken), "-o", "html", "-f", target],
                1,
                None,
            ),
        ] {
            let out = match config {
                Some(config) => run(config, &args).await,
                None => run_offline(&args, None).await,
            };
            assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
            assert_eq!(std::fs::read_to_string(&page).unwrap(), OLD, "{args:?}");
            assert_eq!(names(pages.path()), ["link.html", "page.html"], "{args:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_ends_replaces_the_page_whole_also_through_a_symlink() {
    let recording = bundled("resync");
    let dir = tempfile::tempdir().unwrap();
    let (page, link) = old_page(dir.path());
    for target in [&page, &link] {
        std::fs::write(&page, OLD.repeat(10_000)).unwrap();
        let args = [
            "replay",
            path_str(&recording),
            "-q",
            "-o",
            "html",
            "-f",
            path_str(target),
        ];
        let out = run_offline(&args, None).await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_replaced_whole(&page, &link);
        assert_eq!(names(dir.path()), ["link.html", "page.html"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_cannot_be_the_recording_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let recording = dir.path().join("rec.jsonl");
    std::fs::copy(bundled("resync"), &recording).unwrap();
    let before = std::fs::read(&recording).unwrap();
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink("rec.jsonl", &link).unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let respelled = dir.path().join("sub/../rec.jsonl");
    let hard = dir.path().join("hard.jsonl");
    std::fs::hard_link(&recording, &hard).unwrap();
    for page in [&recording, &respelled, &link, &hard] {
        let args = [
            "replay",
            path_str(&recording),
            "-o",
            "html",
            "-f",
            path_str(page),
        ];
        let out = run_offline(&args, None).await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{page:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!(
                "-f {} is the recording being replayed, which the page would replace: choose \
                 another file for the page",
                page.display()
            )),
            "{err}"
        );
        assert_eq!(std::fs::read(&recording).unwrap(), before);
    }
    // The recording on stdin, too.
    let mut cmd = crate::support::binary::offline_command(&[
        "replay",
        "-",
        "-o",
        "html",
        "-f",
        path_str(&recording),
    ]);
    cmd.stdin(std::fs::File::open(&recording).unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let out = tokio::task::spawn_blocking(move || Running::with_stdio(cmd).finish())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(std::fs::read(&recording).unwrap(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_force_replaces_a_recording_through_its_symlink_once_the_server_answered() {
    let server = FakeApiServer::start().await;
    server.create(
        "configmaps",
        json!({"metadata": {"name": "a", "namespace": "default"}}),
    );
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let files = tempfile::tempdir().unwrap();
    let file = files.path().join("rec.jsonl");
    std::fs::write(&file, OLD.repeat(10_000)).unwrap();
    let link = files.path().join("link.jsonl");
    std::os::unix::fs::symlink("rec.jsonl", &link).unwrap();
    let args = [
        "record",
        "cm",
        "-q",
        "--force",
        "--duration",
        "300ms",
        "-f",
        path_str(&link),
    ];
    let out = run(&kubeconfig, &args).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let recording = std::fs::read_to_string(&file).unwrap();
    assert!(recording.starts_with(r#"{"kind":"header""#), "{recording}");
    assert!(!recording.contains(OLD.trim()), "the old content is left");
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    assert_eq!(names(files.path()), ["link.jsonl", "rec.jsonl"]);
}

/// Ctrl-C ends a live session normally: the page replaces FILE, complete with its summary.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_replaces_the_page_with_a_complete_one() {
    let server = FakeApiServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let pages = tempfile::tempdir().unwrap();
    let (page, link) = old_page(pages.path());
    let bin = Running::spawn(
        &kubeconfig,
        &["watch", "cm", "-o", "html", "-f", path_str(&page)],
    );
    let deadline = std::time::Instant::now() + crate::support::binary::PATIENCE;
    while !server.requests().iter().any(|r| r.is_watch()) {
        assert!(std::time::Instant::now() < deadline, "no watch");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let ended = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
    assert_replaced_whole(&page, &link);
    assert!(
        std::fs::read_to_string(&page)
            .unwrap()
            .contains("<h2>Summary</h2>")
    );
    assert_eq!(names(pages.path()), ["link.html", "page.html"]);
}
