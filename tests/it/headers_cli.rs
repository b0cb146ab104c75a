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
    let names: Vec<&str> = first.split_whitespace().take(7).collect();
    assert_eq!(
        names,
        ["TIME", "POP", "KEY", "DELTAS", "RV", "WAIT", "CHANGES"],
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

/// The character column where `needle` starts in `line`, or `None`.
fn column_of(line: &str, needle: &str) -> Option<usize> {
    line.find(needle).map(|at| line[..at].chars().count())
}

/// Issue #31: on a terminal, columns are fixed from the header row, not grown from the first
/// rows seen. Grown widths shifted every row from `#10` on (and the `→` handler rows under them)
/// one column to the right of the rows above and of the header, and the header only named the
/// columns in order.
#[test]
fn on_a_terminal_columns_line_up_with_the_header_across_pop_numbers_and_handler_rows() {
    let recording = support::paths::bundled("rollout-pods");
    let file = recording.to_str().unwrap();
    let shown = on_a_terminal(&["replay", file, "-q", "--view", "both"]);
    let lines: Vec<&str> = shown.lines().map(|l| l.trim_end_matches('\r')).collect();
    let header = lines[0];
    let pops: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| {
            l.split_whitespace()
                .nth(1)
                .is_some_and(|w| w.starts_with('#'))
        })
        .collect();
    assert!(
        pops.iter().any(|l| l.contains(" #9 ")) && pops.iter().any(|l| l.contains(" #10 ")),
        "{shown}"
    );
    // Each column starts where the header names it, in every pop row: the pop number ends under
    // the end of POP, the key starts under KEY, the resourceVersion under RV.
    let pop_end = column_of(header, "POP").unwrap() + "POP".len();
    let key = column_of(header, "KEY").unwrap();
    let deltas = column_of(header, "DELTAS").unwrap();
    let rv = column_of(header, "RV").unwrap();
    for row in &pops {
        let words: Vec<&str> = row.split_whitespace().collect();
        let seq = words[1];
        assert_eq!(
            column_of(row, seq).map(|c| c + seq.len()),
            Some(pop_end),
            "{row}\n{shown}"
        );
        assert_eq!(column_of(row, "demo/"), Some(key), "{row}\n{shown}");
        assert_eq!(column_of(row, words[3]), Some(deltas), "{row}\n{shown}");
        assert_eq!(column_of(row, "rv "), Some(rv), "{row}\n{shown}");
    }
    // The handler's rows, before and after #10, line up with each other: arrow, call, key, rv.
    let calls: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.contains("→ handler"))
        .collect();
    assert!(calls.len() >= 10, "{shown}");
    let at = |row: &str| {
        let call = row.split_whitespace().nth(3).unwrap();
        [
            column_of(row, "→"),
            column_of(row, call),
            column_of(row, "demo/"),
            column_of(row, "rv "),
        ]
    };
    let first = at(calls[0]);
    for row in &calls {
        assert_eq!(at(row), first, "{row}\n{shown}");
    }
    // The default handler's sync row names it once.
    assert!(
        shown.contains("── handler synced: processed the initial list after"),
        "{shown}"
    );
    assert!(!shown.contains("handler handler"), "{shown}");
}
