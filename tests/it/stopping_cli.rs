//! Every way a session is told to stop ends it, at any point of its run: a limit reached while a
//! replay drains its queue at the end of the file, a reader that goes away, Ctrl-C while a
//! handler is busy or while nobody reads stdout, SIGTERM and SIGHUP (handled as Ctrl-C), and a
//! second signal when the first cannot finish (exit at once). A hang fails the test at a
//! generous deadline.

use crate::support;
use crate::support::paths::{bundled, path_str};

use std::io::{BufRead as _, BufReader, Read as _};
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

use serde_json::json;
use support::binary::{PATIENCE, Running, command, offline_command, run_offline};
use support::fake_apiserver::FakeApiServer;

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

/// A recording of one LIST of `items` ConfigMaps.
fn big_list(dir: &Path, items: usize) -> PathBuf {
    let header = json!({"kind": "header", "v": 1, "resource": {"group": "", "version": "v1",
        "kind": "ConfigMap", "plural": "configmaps", "namespaced": true},
        "namespace": "default", "startedAt": "2026-01-05T10:00:00Z"});
    let items: Vec<_> = (0..items)
        .map(|i| {
            json!({"metadata": {"name": format!("cm-{i}"), "namespace": "default",
                "resourceVersion": (i + 1).to_string()}, "data": {"k": "v"}})
        })
        .collect();
    let list = json!({"t": 0, "type": "LIST", "resourceVersion": items.len().to_string(),
        "items": items});
    let path = dir.join("big.jsonl");
    std::fs::write(&path, format!("{header}\n{list}\n")).unwrap();
    path
}

/// Runs a shell pipeline in a process group of its own; returns its exit status and stderr. At
/// the deadline the whole group is killed and the test fails.
fn shell(script: &str) -> (ExitStatus, String) {
    let mut bash = Command::new("bash");
    bash.arg("-c")
        .arg(script)
        .env_remove("RUST_BACKTRACE")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0);
    let out = Running::with_stdio(bash).finish();
    (out.status, text(&out.stderr))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limit_reached_while_the_replay_drains_its_end_ends_it() {
    let resync = bundled("resync");
    let out = run_offline(&["replay", path_str(&resync), "--max-batches", "11"], None).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let dir = tempfile::tempdir().unwrap();
    let two_lines: Vec<&str> = include_str!("../../docs/recordings/expired-watch.jsonl")
        .lines()
        .take(2)
        .collect();
    let short = dir.path().join("l.jsonl");
    std::fs::write(&short, two_lines.join("\n") + "\n").unwrap();
    let out = run_offline(
        &[
            "replay",
            path_str(&short),
            "--max-batches",
            "1",
            "-o",
            "jsonl",
        ],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let batches = text(&out.stdout)
        .lines()
        .filter(|l| l.contains(r#""kind":"batch""#))
        .count();
    assert_eq!(batches, 1, "{}", text(&out.stdout));

    // The consumer thread of a replay at a speed reaches the limit while the end is drained;
    // which comes first varies, so several runs.
    let rollout = bundled("rollout-deployments");
    for _ in 0..10 {
        let out = run_offline(
            &[
                "replay",
                path_str(&rollout),
                "--speed",
                "1000000",
                "--max-batches",
                "1",
            ],
            None,
        )
        .await;
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
}

#[test]
fn a_replay_whose_reader_goes_away_ends_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let big = big_list(dir.path(), 5000);
    for output in ["json", "yaml"] {
        let (status, stderr) = shell(&format!(
            "'{}' replay '{}' -o {output} | head -1; exit ${{PIPESTATUS[0]}}",
            env!("CARGO_BIN_EXE_kubectl-deltas"),
            big.display()
        ));
        assert_eq!(status.code(), Some(0), "-o {output}: {stderr}");
        assert!(!stderr.contains("error"), "-o {output}: {stderr}");
    }
}

/// A session that ends by itself (the end of the file, `--max-batches`, `--until-synced`) while
/// its reader is slow loses nothing: every line written before the end reaches the reader, as
/// many as a prompt reader gets. Only a stop from outside gives up on a reader that does not
/// read (`ctrl_c_does_not_wait_for_a_reader_that_does_not_read`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_reader_gets_every_line_of_a_session_that_ends_by_itself() {
    let dir = tempfile::tempdir().unwrap();
    // Far more than a pipe holds.
    let big = big_list(dir.path(), 5000);
    for limit in [
        vec![],
        vec!["--max-batches", "4000"],
        vec!["--until-synced"],
    ] {
        let mut args = vec!["replay", path_str(&big), "-o", "jsonl", "-q"];
        args.extend(&limit);
        let prompt = run_offline(&args, None).await;
        assert_eq!(prompt.status.code(), Some(0), "{}", text(&prompt.stderr));
        let lines = text(&prompt.stdout).lines().count();
        assert!(lines > 4000, "{limit:?}: {lines} lines");
        let (status, stderr) = shell(&format!(
            // `read` takes a byte per system call: the pipe stays full to the end.
            "'{}' {} | (sleep 0.3; n=0; while IFS= read -r _; do n=$((n+1)); done; echo $n >&2); \
             exit ${{PIPESTATUS[0]}}",
            env!("CARGO_BIN_EXE_kubectl-deltas"),
            args.iter()
                .map(|a| format!("'{a}'"))
                .collect::<Vec<_>>()
                .join(" ")
        ));
        assert_eq!(status.code(), Some(0), "{limit:?}: {stderr}");
        assert_eq!(stderr.trim(), lines.to_string(), "{limit:?}");
    }
}

/// `replay resync.jsonl --speed 1000 --handler-delay 1000s`: the first batch's handler never
/// finishes on its own, and the recording has ended by the time `signal` comes.
fn stop_a_busy_handler_with(signal: &str) {
    let resync = bundled("resync");
    let mut bin = Running::start(offline_command(&[
        "replay",
        path_str(&resync),
        "--speed",
        "1000",
        "--handler-delay",
        "1000s",
    ]));
    bin.read_until("the first batch", |l| l.contains("Replaced"));
    // The rest of the recording (3 s at 1000×) is replayed meanwhile.
    std::thread::sleep(Duration::from_millis(300));
    bin.signal(signal);
    let ended = bin.wait();
    let (status, stderr) = (ended.status, ended.stderr);
    assert_eq!(status.code(), Some(0), "SIG{signal}: {status:?} {stderr}");
    assert!(
        stderr.contains("time to HasSynced"),
        "the summary: {stderr}"
    );
}

#[test]
fn ctrl_c_ends_a_replay_whose_handler_is_busy_after_the_end_of_the_file() {
    stop_a_busy_handler_with("INT");
}

#[test]
fn sigterm_and_sighup_end_a_session_as_ctrl_c_does() {
    stop_a_busy_handler_with("TERM");
    stop_a_busy_handler_with("HUP");
}

/// A pipe already full: a write to it blocks until its reader reads.
fn full_pipe() -> (std::io::PipeReader, std::io::PipeWriter) {
    use std::io::Write as _;
    use std::os::fd::AsRawFd as _;
    let (reader, mut writer) = std::io::pipe().unwrap();
    let fd = writer.as_raw_fd();
    // SAFETY: fcntl on a descriptor this function owns.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    assert!(unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } == 0);
    while writer.write(&[b'x'; 512]).is_ok() {}
    assert!(unsafe { libc::fcntl(fd, libc::F_SETFL, flags) } == 0);
    (reader, writer)
}

#[test]
fn a_second_ctrl_c_exits_at_once_when_the_first_cannot_finish() {
    // The summary goes to a stderr nobody reads: the session can only end by a second Ctrl-C.
    let (reader, writer) = full_pipe();
    let mut cmd = offline_command(&["replay", path_str(&bundled("resync"))]);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(writer);
    let mut bin = Running::with_stdio(cmd);
    // Signals are handled from the first line on.
    let first = bin.read_until("a first line", |_| true);
    assert!(first.contains("queue: DeltaFIFO"), "{first}");
    std::thread::sleep(Duration::from_millis(300));
    bin.signal("INT");
    std::thread::sleep(Duration::from_millis(200));
    bin.signal("INT");
    let status = bin.finish().status;
    drop(reader);
    assert_eq!(status.code(), Some(130), "{status:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_does_not_wait_for_a_reader_that_does_not_read() {
    let server = FakeApiServer::start().await;
    // Far more than a pipe holds.
    for i in 0..500 {
        server.create(
            "configmaps",
            json!({"metadata": {"name": format!("cm-{i}"), "namespace": "default"},
                "data": {"k": "x".repeat(500)}}),
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let (reader, writer) = std::io::pipe().unwrap();
    let status = tokio::task::spawn_blocking(move || {
        let mut cmd = command(&kubeconfig, &["watch", "configmaps", "-o", "jsonl"]);
        cmd.stdin(Stdio::null())
            .stdout(writer)
            .stderr(Stdio::piped());
        let bin = Running::with_stdio(cmd);
        // Read one line, to know the watch runs, then nothing more.
        let mut first_line = BufReader::new(reader.try_clone().unwrap());
        let (tx, first) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = first_line.read_line(&mut line);
            let _ = tx.send(line);
        });
        let first = first.recv_timeout(PATIENCE).expect("a first line");
        assert!(!first.is_empty(), "the watch printed nothing");
        std::thread::sleep(Duration::from_millis(500));
        bin.signal("INT");
        let ended = bin.wait();
        drop(reader);
        (ended.status, ended.stderr)
    })
    .await
    .unwrap();
    let (status, stderr) = status;
    assert_eq!(status.code(), Some(0), "{status:?} {stderr}");
    assert!(
        stderr.contains("time to HasSynced"),
        "the summary: {stderr}"
    );
}

/// Ctrl-C while nobody reads a full pipe: what the reader finds afterwards are whole JSON lines.
/// The output goes out many lines per write; a write cut anywhere but after a line would leave
/// the reader half a line at the end, which a JSON-lines reader cannot parse.
#[test]
fn a_stop_while_nobody_reads_leaves_the_reader_whole_lines() {
    let dir = tempfile::tempdir().unwrap();
    let big = big_list(dir.path(), 5000);
    let (mut reader, writer) = std::io::pipe().unwrap();
    let mut cmd = offline_command(&["replay", path_str(&big), "-o", "jsonl", "-q"]);
    cmd.stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped());
    let bin = Running::with_stdio(cmd);
    // The pipe fills, and the lines rendered meanwhile wait to go out together. Two pages are then
    // read, and the next write of many lines fills them.
    std::thread::sleep(Duration::from_millis(500));
    let mut head = [0; 8192];
    reader.read_exact(&mut head).expect("the replay writes");
    std::thread::sleep(Duration::from_millis(300));
    bin.signal("INT");
    let ended = bin.wait();
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
    let mut rest = Vec::new();
    reader.read_to_end(&mut rest).unwrap();
    let rest = String::from_utf8(rest).unwrap();
    let tail = &rest[rest.len().saturating_sub(200)..];
    assert!(
        rest.len() > 8192 && rest.ends_with('\n'),
        "a torn line: {tail:?}"
    );
    // Whole lines after the first break in what was read.
    for line in rest.lines().skip(1) {
        assert!(
            serde_json::from_str::<serde_json::Value>(line).is_ok(),
            "a torn line: {line}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_a_gzip_recording_with_its_trailer_and_the_summary() {
    let server = FakeApiServer::start().await;
    server.create(
        "configmaps",
        json!({"metadata": {"name": "a", "namespace": "default"}, "data": {"k": "1"}}),
    );
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let path = dir.path().join("cm.jsonl.gz");
    let file = path.clone();
    let (status, stderr) = tokio::task::spawn_blocking(move || {
        let mut cmd = command(&kubeconfig, &["record", "cm", "-f", path_str(&file)]);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut bin = Running::with_stdio(cmd);
        bin.read_stderr_until("the sync", |l| l.contains("── synced:"));
        bin.signal("TERM");
        let ended = bin.wait();
        (ended.status, ended.stderr)
    })
    .await
    .unwrap();
    assert_eq!(status.code(), Some(0), "{:?} {stderr}", status.signal());
    assert!(
        stderr.contains("time to HasSynced"),
        "the summary: {stderr}"
    );
    // A finished gzip stream: decoding it to its end succeeds.
    let mut decoded = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap())
        .read_to_string(&mut decoded)
        .unwrap();
    assert!(decoded.contains(r#""type":"LIST""#), "{decoded}");
}
