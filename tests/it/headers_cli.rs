//! Header rows, as kubectl prints them: the timeline starts with a row naming its columns when
//! stdout is a terminal (never in a pipe or a file), `index` tables start with theirs, and
//! `--no-headers` leaves either out.

use crate::support;

use std::fs::File;
use std::io::Read;
use std::os::fd::FromRawFd;
use std::process::Stdio;

use support::binary::{offline_command, run_offline, stderr};

/// Runs the binary with stdout on a pseudo-terminal (stdin and stderr elsewhere) and returns
/// what it wrote there, line ends as the terminal turned them (`\r\n`).
fn on_a_terminal(args: &[&str]) -> String {
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes two descriptors into the integers given; the other pointers may be
    // null (no name wanted, default terminal settings and size).
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened and are owned by nothing else.
    let (mut master, slave) = unsafe { (File::from_raw_fd(master), File::from_raw_fd(slave)) };
    let mut cmd = offline_command(args);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::from(slave))
        .stderr(Stdio::null());
    let mut child = cmd.spawn().expect("start the binary");
    // The child holds the terminal's only other end now: reading ends (EIO) when it exits.
    drop(cmd);
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = master.read(&mut buf) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    assert!(child.wait().unwrap().success());
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn the_timeline_names_its_columns_on_a_terminal_unless_no_headers() {
    let recording = support::paths::bundled("expired-watch");
    let file = recording.to_str().unwrap();
    let shown = on_a_terminal(&["replay", file, "-q"]);
    let first = shown.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("TIME          POP  KEY  DELTAS  RV  WAIT  CHANGES"),
        "{shown}"
    );
    assert!(first.contains("kubectl deltas watch --help"), "{first}");
    assert_eq!(shown.matches("POP  KEY").count(), 1, "{shown}");

    let bare = on_a_terminal(&["replay", file, "-q", "--no-headers"]);
    assert!(!bare.contains("POP  KEY"), "{bare}");
    // The header is the only difference.
    assert_eq!(shown.split_once('\n').unwrap().1, bare);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_header_row_in_a_pipe_and_none_in_index_tables_with_no_headers() {
    let recording = support::paths::bundled("rollout-pods");
    let file = recording.to_str().unwrap();
    let piped = run_offline(&["replay", file, "-q"], None).await;
    assert!(!String::from_utf8_lossy(&piped.stdout).contains("POP  KEY"));

    for output in ["table", "wide"] {
        let args = ["index", "--replay", file, "--by", "owner", "-o", output];
        let with = run_offline(&args, None).await;
        assert_eq!(with.status.code(), Some(0), "{}", stderr(&with));
        let with = String::from_utf8(with.stdout).unwrap();
        assert!(with.starts_with("OWNER"), "{with}");
        let mut no_headers = args.to_vec();
        no_headers.push("--no-headers");
        let without = run_offline(&no_headers, None).await;
        assert_eq!(without.status.code(), Some(0), "{}", stderr(&without));
        let without = String::from_utf8(without.stdout).unwrap();
        assert_eq!(with.split_once('\n').unwrap().1, without, "-o {output}");
    }
}
