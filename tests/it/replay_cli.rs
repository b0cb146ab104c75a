//! `record`, `replay` and `index --replay` as a user runs them: a recording made with the binary
//! against the fake API server replays to the batches the live run showed; replays are
//! deterministic, read stdin and gzip, and stop at a bad line with its number and exit code 1;
//! `index --replay` answers from the recording's final state.

use crate::support;
use crate::support::paths::{bundled, path_str};

use std::io::Write as _;

use serde_json::{Value, json};
use support::binary::{Running, json_lines, run, run_offline};
use support::fake_apiserver::{FakeApiServer, Fault, Verb};

fn cm(name: &str, value: &str) -> Value {
    json!({"metadata": {"name": name, "namespace": "default"}, "data": {"k": value}})
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

/// The batch rows of a timeline, without what depends on when they ran (the time and the queue
/// wait) or on column widths: `#4 default/a Updated rv 1004 data.k 1→2`.
fn batch_rows(timeline: &str) -> Vec<String> {
    timeline
        .lines()
        .filter_map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            if !words.get(1).is_some_and(|w| w.starts_with('#')) {
                return None;
            }
            let rv = words.iter().position(|w| *w == "rv")?;
            let kept: Vec<&str> = words[1..rv + 2]
                .iter()
                .chain(&words[(rv + 3).min(words.len())..])
                .copied()
                .collect();
            Some(kept.join(" "))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_session_replays_to_the_batches_the_live_run_showed() {
    let server = FakeApiServer::start().await;
    for name in ["a", "b", "c"] {
        server.create("configmaps", cm(name, "1"));
    }
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let path = dir.path().join("session.jsonl");
    let mut bin = Running::spawn(&kubeconfig, &["record", "cm", "-f", path_str(&path)]);
    // Each step waits for its batch on stderr: the consumer keeps up, as the replay assumes.
    let mut step = |what: &str, until: &dyn Fn(&str) -> bool| {
        tokio::task::block_in_place(|| bin.read_stderr_until(what, until));
    };
    step("the sync", &|l| l.contains("── synced:"));
    server.update("configmaps", cm("a", "2"));
    step("a's update", &|l| {
        l.contains(" default/a ") && l.contains("Updated")
    });
    server.create("configmaps", cm("d", "1"));
    step("d's add", &|l| {
        l.contains(" default/d ") && l.contains("Added")
    });
    server.delete("configmaps", "default", "b");
    step("b's deletion", &|l| {
        l.contains(" default/b ") && l.contains("Deleted")
    });
    // The re-watch gets 410; c is deleted and history compacted before the relist, which
    // comes out as a tombstone for c.
    server.inject(Fault::status(410).on(Verb::Watch));
    server.close_watches();
    step("the end of the watch", &|l| l.contains("── watch closed:"));
    server.delete("configmaps", "default", "c");
    server.compact();
    step("the tombstone", &|l| l.contains("Deleted(tombstone)"));
    server.update("configmaps", cm("d", "2"));
    step("d's update", &|l| {
        l.contains(" default/d ") && l.contains("Updated")
    });
    let live = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(live.status.code(), Some(0), "{}", live.stderr);
    assert!(live.stdout.is_empty(), "the recording went to the file");
    assert!(
        live.stderr.contains("time to HasSynced"),
        "the summary: {}",
        live.stderr
    );

    let recording = std::fs::read_to_string(&path).unwrap();
    assert!(
        recording.starts_with(r#"{"kind":"header","v":1,"#),
        "{recording}"
    );
    assert!(recording.ends_with('\n'), "complete lines only");
    assert!(
        recording.lines().next().unwrap().contains(
            r#""plural":"configmaps","namespaced":true,"singular":"configmap","shortNames":["cm"]}"#
        ),
        "the names discovery gave: {recording}"
    );
    // Named by its short name, which only the header knows.
    let by_short_name = run_offline(
        &[
            "index",
            "cm",
            "--replay",
            path_str(&path),
            "--by",
            "namespace",
        ],
        None,
    )
    .await;
    assert_eq!(
        by_short_name.status.code(),
        Some(0),
        "{}",
        text(&by_short_name.stderr)
    );

    let replayed = run_offline(&["replay", path_str(&path), "-q"], None).await;
    assert_eq!(
        replayed.status.code(),
        Some(0),
        "{}",
        text(&replayed.stderr)
    );
    let (live_rows, replayed_rows) = (
        batch_rows(&live.stderr),
        batch_rows(&text(&replayed.stdout)),
    );
    assert_eq!(live_rows.len(), 10, "{}", live.stderr);
    assert_eq!(replayed_rows, live_rows, "recording:\n{recording}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_through_an_apiserver_restart_converges_and_replays_the_same() {
    let server = FakeApiServer::start().await;
    for name in ["a", "b", "c"] {
        server.create("configmaps", cm(name, "1"));
    }
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let path = dir.path().join("restart.jsonl");
    let mut bin = Running::spawn(&kubeconfig, &["record", "cm", "-f", path_str(&path)]);
    let mut step = |what: &str, until: &dyn Fn(&str) -> bool| {
        tokio::task::block_in_place(|| bin.read_stderr_until(what, until));
    };
    step("the sync", &|l| l.contains("── synced:"));
    server.update("configmaps", cm("a", "2"));
    step("a's update", &|l| {
        l.contains(" default/a ") && l.contains("Updated")
    });
    // The apiserver goes down, b is deleted in etcd meanwhile, and it restarts with a watch
    // cache that begins after the client's resourceVersion: 410, one relist, a tombstone.
    server.stop();
    step("the retries", &|l| l.contains("backoff"));
    server.delete("configmaps", "default", "b");
    server.restart();
    step("the tombstone", &|l| {
        l.contains(" default/b ") && l.contains("Deleted(tombstone)")
    });
    server.update("configmaps", cm("c", "2"));
    step("c's update", &|l| {
        l.contains(" default/c ") && l.contains("Updated")
    });
    let live = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(live.status.code(), Some(0), "{}", live.stderr);
    assert_eq!(
        live.stderr.matches("410 → relist").count(),
        1,
        "one relist: {}",
        live.stderr
    );

    let replayed = run_offline(&["replay", path_str(&path), "-q"], None).await;
    assert_eq!(
        replayed.status.code(),
        Some(0),
        "{}",
        text(&replayed.stderr)
    );
    let recording = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        batch_rows(&text(&replayed.stdout)),
        batch_rows(&live.stderr),
        "recording:\n{recording}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_writes_resync_lines_that_replay_as_resyncs() {
    let server = FakeApiServer::start().await;
    server.create("configmaps", cm("a", "1"));
    server.create("configmaps", cm("b", "1"));
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let args = [
        "record",
        "cm",
        "--resync",
        "300ms",
        "--duration",
        "1500ms",
        "-f",
        "-",
    ];
    let live = run(kubeconfig, &args).await;
    assert_eq!(live.status.code(), Some(0), "{}", text(&live.stderr));
    let recording = text(&live.stdout);
    let resync_lines = recording.matches(r#""type":"RESYNC""#).count();
    let live_ticks = text(&live.stderr).matches("── resync tick").count();
    assert!(resync_lines >= 1, "{recording}");
    assert_eq!(resync_lines, live_ticks, "{}", text(&live.stderr));

    let replayed = run_offline(&["replay", "-", "-q", "-o", "jsonl"], Some(live.stdout)).await;
    assert_eq!(
        replayed.status.code(),
        Some(0),
        "{}",
        text(&replayed.stderr)
    );
    let lines = json_lines(&replayed.stdout);
    assert_eq!(
        lines.iter().filter(|l| l["event"] == "resync").count(),
        resync_lines
    );
    // Every Sync batch comes after a resync row that queued it.
    let mut allowed = 0;
    for line in &lines {
        if line["event"] == "resync" {
            allowed += line["keys"].as_u64().unwrap();
        }
        if line["kind"] == "batch" && line["deltas"][0]["type"] == "Sync" {
            assert!(allowed > 0, "{lines:#?}");
            allowed -= 1;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_to_a_gz_file_stops_after_its_duration_with_a_complete_file() {
    let server = FakeApiServer::start().await;
    server.create("configmaps", cm("a", "1"));
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    // The extension in any case.
    for name in ["cm.jsonl.gz", "CM.JSONL.GZ"] {
        let path = dir.path().join(name);
        let args = [
            "record",
            "cm",
            "-q",
            "--duration",
            "500ms",
            "-f",
            path_str(&path),
        ];
        let live = run(kubeconfig.clone(), &args).await;
        assert_eq!(live.status.code(), Some(0), "{}", text(&live.stderr));
        assert!(live.stderr.is_empty(), "-q: {}", text(&live.stderr));
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[..2], &[0x1f, 0x8b], "{name}: gzip");

        let replayed = run_offline(&["replay", path_str(&path), "-q", "-o", "jsonl"], None).await;
        assert_eq!(
            replayed.status.code(),
            Some(0),
            "{}",
            text(&replayed.stderr)
        );
        let batches: Vec<Value> = json_lines(&replayed.stdout)
            .into_iter()
            .filter(|l| l["kind"] == "batch")
            .collect();
        assert_eq!(batches.len(), 1);
        assert_eq!(batches[0]["key"], "default/a");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_of_an_unknown_resource_is_a_usage_error_and_writes_no_file() {
    let server = FakeApiServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let path = dir.path().join("nothing.jsonl");
    let out = run(kubeconfig, &["record", "gizmos", "-f", path_str(&path)]).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("gizmos"),
        "{}",
        text(&out.stderr)
    );
    assert!(!path.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instant_replay_writes_the_same_bytes_every_time() {
    let path = bundled("rollout-pods");
    for format in ["jsonl", "wide"] {
        let args = ["replay", path_str(&path), "-q", "-o", format];
        let first = run_offline(&args, None).await;
        let second = run_offline(&args, None).await;
        assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
        assert!(!first.stdout.is_empty());
        assert!(
            first.stdout == second.stdout,
            "-o {format} differs between runs"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_reads_stdin_and_gzip_like_a_plain_file() {
    let path = bundled("expired-watch");
    let plain = std::fs::read(&path).unwrap();
    let expected = run_offline(&["replay", path_str(&path), "-q", "-o", "jsonl"], None).await;
    assert_eq!(
        expected.status.code(),
        Some(0),
        "{}",
        text(&expected.stderr)
    );

    let from_stdin = run_offline(&["replay", "-", "-q", "-o", "jsonl"], Some(plain.clone())).await;
    assert_eq!(
        from_stdin.status.code(),
        Some(0),
        "{}",
        text(&from_stdin.stderr)
    );
    assert_eq!(text(&from_stdin.stdout), text(&expected.stdout));

    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&plain).unwrap();
    let gzipped = gz.finish().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let gz_path = dir.path().join("expired-watch.jsonl.gz");
    std::fs::write(&gz_path, &gzipped).unwrap();
    let from_gz = run_offline(&["replay", path_str(&gz_path), "-q", "-o", "jsonl"], None).await;
    assert_eq!(from_gz.status.code(), Some(0), "{}", text(&from_gz.stderr));
    assert_eq!(text(&from_gz.stdout), text(&expected.stdout));

    let gz_stdin = run_offline(&["replay", "-", "-q", "-o", "jsonl"], Some(gzipped)).await;
    assert_eq!(text(&gz_stdin.stdout), text(&expected.stdout));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_gzip_recording_replays_every_line_with_a_warning() {
    let path = bundled("expired-watch");
    let plain = std::fs::read(&path).unwrap();
    let expected = run_offline(&["replay", path_str(&path), "-q", "-o", "jsonl"], None).await;
    // What `record -f FILE.gz` leaves when killed: each line flushed, the stream never finished.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    for line in plain.split_inclusive(|b| *b == b'\n') {
        gz.write_all(line).unwrap();
        gz.flush().unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let gz_path = dir.path().join("killed.jsonl.gz");
    std::fs::write(&gz_path, gz.get_ref()).unwrap();
    let killed = run_offline(&["replay", path_str(&gz_path), "-q", "-o", "jsonl"], None).await;
    let stderr = text(&killed.stderr);
    assert_eq!(killed.status.code(), Some(0), "{stderr}");
    assert_eq!(text(&killed.stdout), text(&expected.stdout));
    let lines = plain.iter().filter(|b| **b == b'\n').count();
    // Worded as the tool's other notes are, not as a log line.
    let warning = stderr
        .lines()
        .find(|l| l.contains("gzip stream"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        warning.starts_with("kubectl-deltas: warning: ")
            && warning.contains(&format!(
                "killed.jsonl.gz: the gzip stream stops after line {lines} without its end"
            )),
        "{stderr}"
    );
    assert!(
        !stderr.contains('\x1b'),
        "no escape codes off a terminal: {stderr:?}"
    );
}

const HEADER: &str = r#"{"kind":"header","v":1,"resource":{"group":"","version":"v1","kind":"ConfigMap","plural":"configmaps","namespaced":true},"namespace":"default","startedAt":"2026-01-05T10:00:00Z"}"#;
const LIST: &str = r#"{"t":0,"type":"LIST","resourceVersion":"2","items":[{"metadata":{"name":"a","namespace":"default","resourceVersion":"1"}},{"metadata":{"name":"b","namespace":"default","resourceVersion":"2"}}]}"#;
const MODIFIED: &str = r#"{"t":5,"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"default","resourceVersion":"3"}}}"#;
/// A watch event as the first answer: the Reflector starts with a streaming list.
const FIRST_MODIFIED: &str = r#"{"t":0,"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"default","resourceVersion":"3"}}}"#;

/// Replays `lines` from a file named `bad.jsonl`; returns (exit code, stdout, stderr).
async fn replay_lines(lines: &[&str], args: &[&str]) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let mut all = vec!["replay", path_str(&path), "-q"];
    all.extend_from_slice(args);
    let out = run_offline(&all, None).await;
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_a_fraction_of_a_millisecond_apart_stay_apart() {
    let modified = |t: &str, rv: &str| {
        format!(
            r#"{{"t":{t},"type":"MODIFIED","object":{{"kind":"ConfigMap","apiVersion":"v1","metadata":{{"name":"a","namespace":"default","resourceVersion":"{rv}"}}}}}}"#
        )
    };
    let batches = |stdout: &str| {
        stdout
            .lines()
            .filter(|l| l.contains(r#""kind":"batch""#))
            .map(|l| {
                let batch: Value = serde_json::from_str(l).unwrap();
                batch["deltas"].as_array().unwrap().len()
            })
            .collect::<Vec<_>>()
    };
    // 5.25 and 5.75: two instants, two batches.
    let (first, second) = (modified("5.25", "3"), modified("5.75", "4"));
    let (code, stdout, stderr) =
        replay_lines(&[HEADER, LIST, &first, &second], &["-o", "jsonl"]).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(batches(&stdout), [1, 1, 1, 1], "{stdout}");
    // The same instant, to the microsecond: one batch of two deltas.
    let (first, second) = (modified("5.250", "3"), modified("5.25", "4"));
    let (code, stdout, stderr) =
        replay_lines(&[HEADER, LIST, &first, &second], &["-o", "jsonl"]).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(batches(&stdout), [1, 1, 2], "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_of_a_stream_still_being_written_keeps_up_with_it() {
    use std::process::Stdio;
    // As `record -f - | replay -`: each line comes when it happens, and the next one may be far.
    let mut cmd = support::binary::offline_command(&["replay", "-", "-q", "-o", "jsonl"]);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut bin = Running::with_stdio(cmd);
    let mut stdin = bin.take_stdin();
    let mut batch_of = |key: &str, type_: &str| {
        bin.read_until(
            &format!("a batch of {key} {type_} while the input waits"),
            |line| {
                let line: Value = serde_json::from_str(line).unwrap();
                line["kind"] == "batch" && line["key"] == key && line["deltas"][0]["type"] == type_
            },
        );
    };
    tokio::task::block_in_place(|| {
        writeln!(stdin, "{HEADER}\n{LIST}").unwrap();
        stdin.flush().unwrap();
        batch_of("default/a", "Replaced");
        batch_of("default/b", "Replaced");
        writeln!(stdin, "{MODIFIED}").unwrap();
        stdin.flush().unwrap();
        batch_of("default/a", "Updated");
    });
    drop(stdin);
    let status = tokio::task::block_in_place(|| bin.finish().status);
    assert_eq!(status.code(), Some(0));
}

/// The start of a LIST line whose only item's `data.k` value takes `len` bytes.
fn list_with_a_value_of(len: usize) -> Vec<u8> {
    let mut line = br#"{"t":0,"type":"LIST","resourceVersion":"1","items":[{"metadata":{"name":"a","namespace":"default","resourceVersion":"1"},"data":{"k":""#.to_vec();
    line.resize(line.len() + len, b'x');
    line
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_over_64_mib_is_refused_with_its_number_and_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.jsonl");
    let mut bytes = format!("{HEADER}\n").into_bytes();
    bytes.extend(list_with_a_value_of(65 << 20));
    bytes.extend_from_slice(b"\"}}]}\n");
    std::fs::write(&path, &bytes).unwrap();
    drop(bytes);
    let out = run_offline(
        &[
            "replay",
            path_str(&path),
            "-q",
            "-o",
            "jsonl",
            "--object",
            "none",
        ],
        None,
    )
    .await;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("huge.jsonl:2: the line is longer than 64 MiB"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_that_never_ends_is_refused_at_the_limit() {
    use std::io::Write as _;
    use std::process::Stdio;
    // 200 MiB without a newline, then an open pipe: without a bound the reader would hold all
    // of it and wait for more.
    let mut cmd = support::binary::offline_command(&["replay", "-", "-q"]);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut bin = Running::with_stdio(cmd);
    let mut stdin = bin.take_stdin();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(format!("{HEADER}\n").as_bytes());
        let mut start = list_with_a_value_of(0);
        start.resize(1 << 20, b'x');
        let _ = stdin.write_all(&start);
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..200 {
            if stdin.write_all(&chunk).is_err() {
                return;
            }
        }
        // Held open until the test is over.
        let _ = done_rx.recv();
    });
    let out = tokio::task::spawn_blocking(move || bin.finish())
        .await
        .unwrap();
    drop(done_tx);
    writer.join().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("<stdin>:2: the line is longer than 64 MiB"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_line_stops_the_replay_after_the_lines_before_it_with_exit_1() {
    let (code, stdout, stderr) = replay_lines(
        &[
            HEADER,
            LIST,
            MODIFIED,
            r#"{"t":7,"type":"MODIFIED","object":{"#,
        ],
        &["-o", "jsonl"],
    )
    .await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.starts_with("kubectl-deltas: error: ")
            && stderr.contains("bad.jsonl:4: not valid JSON"),
        "{stderr}"
    );
    assert_eq!(
        stderr.lines().count(),
        1,
        "no summary after an error: {stderr}"
    );
    // Everything before line 4 was replayed and written, in order.
    let lines = json_lines(stdout.as_bytes());
    let batches: Vec<(u64, &str)> = lines
        .iter()
        .filter(|l| l["kind"] == "batch")
        .map(|l| (l["seq"].as_u64().unwrap(), l["key"].as_str().unwrap()))
        .collect();
    assert_eq!(
        batches,
        [(1, "default/a"), (2, "default/b"), (3, "default/a")]
    );
    assert_eq!(lines.last().unwrap()["seq"], 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lines_that_cannot_be_replayed_name_their_line_and_exit_1() {
    let cases: [(&[&str], &str); 4] = [
        (
            &[HEADER, LIST, LIST],
            "bad.jsonl:3: the Reflector opened a watch here, but the recording has a LIST page",
        ),
        (
            &[HEADER, FIRST_MODIFIED, LIST],
            "bad.jsonl:3: the Reflector is reading a watch here, but the recording has a LIST page",
        ),
        (
            &[
                HEADER,
                LIST,
                MODIFIED,
                r#"{"t":1,"type":"DELETED","object":{"metadata":{"name":"a"}}}"#,
            ],
            "bad.jsonl:4: \"t\" is 1, less than the previous line's 5",
        ),
        (
            &[HEADER, LIST, r#"{"t":3,"type":"UPSERTED"}"#],
            "bad.jsonl:3: ",
        ),
    ];
    for (lines, expected) in cases {
        let (code, _, stderr) = replay_lines(lines, &[]).await;
        assert_eq!(code, Some(1), "{stderr}");
        assert!(
            stderr.contains(expected),
            "expected {expected:?} in {stderr}"
        );
    }
    let (code, _, stderr) = replay_lines(&[HEADER], &[]).await;
    assert_eq!(code, Some(0), "a header alone replays nothing: {stderr}");
    let missing = run_offline(&["replay", "/nonexistent/rec.jsonl"], None).await;
    assert_eq!(missing.status.code(), Some(1));
    assert_eq!(
        text(&missing.stderr),
        "kubectl-deltas: error: cannot open the recording /nonexistent/rec.jsonl: no such file or \
         directory\n"
    );
    // A replay times resyncs on the recording's clock: --resync is accepted, with a note.
    let resync = run_offline(&["replay", "-", "--resync", "1s"], None).await;
    assert_ne!(resync.status.code(), Some(2), "{}", text(&resync.stderr));
    assert!(
        text(&resync.stderr).contains("RESYNC lines are ignored"),
        "{}",
        text(&resync.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_at_a_speed_ends_with_the_recording() {
    let path = bundled("resync");
    let instant = run_offline(&["replay", path_str(&path), "-q", "-o", "jsonl"], None).await;
    let paced = run_offline(
        &[
            "replay",
            path_str(&path),
            "-q",
            "-o",
            "jsonl",
            "--speed",
            "50",
        ],
        None,
    )
    .await;
    assert_eq!(paced.status.code(), Some(0), "{}", text(&paced.stderr));
    // Sorted: with a consumer thread popping concurrently, where the `synced` row falls among
    // the Reflector's rows races, as live.
    let events = |out: &[u8]| -> Vec<String> {
        let mut events: Vec<String> = json_lines(out)
            .iter()
            .filter(|l| l["kind"] == "reflector")
            .map(|l| l["event"].as_str().unwrap().to_owned())
            .collect();
        events.sort();
        events
    };
    // The same Reflector steps; batches may coalesce differently, as live.
    assert_eq!(events(&paced.stdout), events(&instant.stdout));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_replay_answers_from_the_recordings_final_state() {
    let path = bundled("rollout-pods");
    let out = run_offline(
        &[
            "index",
            "--replay",
            path_str(&path),
            "--by",
            "owner",
            "-o",
            "jsonl",
        ],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let values = json_lines(&out.stdout);
    // After the rollout and the scales to 5 and 2, only the new ReplicaSet's two pods are left.
    assert_eq!(values.len(), 1, "{values:#?}");
    assert_eq!(values[0]["value"], "ReplicaSet/web-5d79b66554");
    assert_eq!(values[0]["count"], 2);

    let old = run_offline(
        &[
            "index",
            "--replay",
            path_str(&path),
            "--by",
            "label:pod-template-hash",
            "--value",
            "896bb5df7",
            "--fail-empty",
        ],
        None,
    )
    .await;
    assert_eq!(old.status.code(), Some(4), "{}", text(&old.stderr));

    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, format!("{HEADER}\n{LIST}\n{{oops\n")).unwrap();
    let out = run_offline(
        &["index", "--replay", path_str(&bad), "--by", "namespace"],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("bad.jsonl:3: not valid JSON"),
        "{}",
        text(&out.stderr)
    );
}

/// A recording of deployments.apps whose header carries the names discovery gave, begun five
/// minutes after its object was created and ending a minute later.
const DEPLOYMENTS: &str = r#"{"kind":"header","v":1,"resource":{"group":"apps","version":"v1","kind":"Deployment","plural":"deployments","namespaced":true,"singular":"deployment","shortNames":["deploy"]},"namespace":"default","startedAt":"2026-01-05T10:05:00Z"}
{"t":0,"type":"LIST","resourceVersion":"1","items":[{"metadata":{"name":"web","namespace":"default","resourceVersion":"1","creationTimestamp":"2026-01-05T10:00:00Z"}}]}
{"t":60000,"type":"WATCH_CLOSED"}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_replay_takes_the_recorded_resource_by_any_of_its_names() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deploy.jsonl");
    std::fs::write(&path, DEPLOYMENTS).unwrap();
    let index = |resource: &'static str| {
        let path = path.clone();
        async move {
            let mut args = vec!["index"];
            args.extend((!resource.is_empty()).then_some(resource));
            args.extend([
                "--replay",
                path_str(&path),
                "--by",
                "namespace",
                "--keys-only",
            ]);
            args.extend(["--value", "default"]);
            run_offline(&args, None).await
        }
    };
    for name in [
        "",
        "deployments",
        "deployment",
        "deploy",
        "Deployment",
        "DEPLOY",
        "deployments.apps",
        "deploy.apps",
        "deployments.v1.apps",
    ] {
        let out = index(name).await;
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "default/web\n", "{name}");
    }
    for other in ["pods", "deployments.extensions", "replicasets"] {
        let out = index(other).await;
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{other}: {stderr}");
        assert!(
            stderr.contains(&format!("\"{other}\" does not name what "))
                && stderr
                    .contains("holds: a recording of deployments.apps in namespace \"default\""),
            "{stderr}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_replay_tells_ages_as_of_the_recordings_end() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deploy.jsonl");
    std::fs::write(&path, DEPLOYMENTS).unwrap();
    let out = run_offline(
        &[
            "index",
            "--replay",
            path_str(&path),
            "--by",
            "namespace",
            "--value",
            "default",
        ],
        None,
    )
    .await;
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    let age = rows[0].iter().position(|c| *c == "AGE").unwrap();
    // Created at 10:00, recorded from 10:05 for a minute.
    assert_eq!(rows[1][age], "6m", "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_header_without_started_at_replays_as_a_recording_without_a_header() {
    let header = HEADER.replace(r#","startedAt":"2026-01-05T10:00:00Z""#, "");
    assert!(!header.contains("startedAt"));
    let (code, stdout, stderr) = replay_lines(&[&header, LIST], &["-o", "jsonl"]).await;
    assert_eq!(code, Some(0), "{stderr}");
    let first = stdout
        .lines()
        .find(|l| l.contains(r#""kind":"batch""#))
        .unwrap();
    assert!(first.contains(r#""time":"1970-01-01T00:00:00"#), "{first}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_that_ends_inside_a_paged_list_says_so() {
    let page = |t: u64, name: &str| {
        format!(
            r#"{{"t":{t},"type":"LIST","resourceVersion":"2","continue":"more","items":[{{"metadata":{{"name":"{name}","namespace":"default","resourceVersion":"1"}}}}]}}"#
        )
    };
    let (first, second) = (page(0, "a"), page(1, "b"));
    let (code, stdout, stderr) = replay_lines(&[HEADER, &first, &second], &["-o", "jsonl"]).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stdout.contains(r#""kind":"batch""#), "{stdout}");
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("kubectl-deltas: warning: ")
                && l.contains("bad.jsonl:3: the recording ends inside a paged LIST")
                && l.contains("its 2 items in 2 pages never reached the cache")),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_piped_into_head_exits_quietly() {
    let path = bundled("rollout-pods");
    let mut bash = std::process::Command::new("bash");
    bash.arg("-c")
        .arg(format!(
            "'{}' replay '{}' -o jsonl | head -2; exit ${{PIPESTATUS[0]}}",
            env!("CARGO_BIN_EXE_kubectl-deltas"),
            path.display()
        ))
        .env_remove("RUST_BACKTRACE");
    let out = support::binary::output(bash).await;
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout).lines().count(), 2);
    assert!(
        !text(&out.stderr).contains("error"),
        "{}",
        text(&out.stderr)
    );
}

const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// A Secret written with `kubectl apply`, which keeps the applied Secret, values included, in an
/// annotation.
fn applied_secret(password: &str) -> Value {
    let applied = json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
        "metadata": {"annotations": {}, "name": "db", "namespace": "default"},
        "data": {"password": password}, "stringData": {"user": "admin-user"}});
    json!({"metadata": {"name": "db", "namespace": "default",
                        "annotations": {LAST_APPLIED: format!("{applied}\n")}},
           "type": "Opaque", "data": {"password": password}, "stringData": {"user": "admin-user"}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recordings_redact_the_last_applied_configuration_of_secrets() {
    let server = FakeApiServer::start().await;
    server.create("secrets", applied_secret("aHVudGVyMg=="));
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let (plain, gz) = (dir.path().join("s.jsonl"), dir.path().join("s.jsonl.gz"));
    for file in [path_str(&plain), path_str(&gz), "-"] {
        // Listed, then a watch event: both kinds of line.
        let mut bin = Running::spawn(&kubeconfig, &["record", "secrets", "-f", file]);
        tokio::task::block_in_place(|| bin.read_stderr_until("the sync", |l| l.contains("synced")));
        server.update("secrets", applied_secret("c3dvcmRmaXNo"));
        tokio::task::block_in_place(|| {
            bin.read_stderr_until("the update", |l| l.contains("Updated"))
        });
        let ended = tokio::task::block_in_place(|| bin.interrupt());
        assert_eq!(ended.status.code(), Some(0), "{file}: {}", ended.stderr);
        let recording = match file {
            "-" => ended.stdout,
            _ => {
                let bytes = std::fs::read(file).unwrap();
                let mut text = String::new();
                std::io::Read::read_to_string(
                    &mut flate2::read::MultiGzDecoder::new(&bytes[..]),
                    &mut text,
                )
                .map(|_| text)
                .unwrap_or_else(|_| String::from_utf8(bytes).unwrap())
            }
        };
        assert!(
            recording
                .contains(r#""kubectl.kubernetes.io/last-applied-configuration":"<redacted>""#),
            "{file}: {recording}"
        );
        for value in ["aHVudGVyMg==", "c3dvcmRmaXNo", "admin-user"] {
            assert!(
                !recording.contains(value),
                "{file} holds {value}:\n{recording}"
            );
        }
        server.update("secrets", applied_secret("aHVudGVyMg=="));
    }

    // A replay of Secrets refuses to select them by their values too.
    let out = run_offline(
        &[
            "replay",
            path_str(&plain),
            "--query",
            "field:data.password=<redacted>",
        ],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("--show-secret-data"),
        "{}",
        text(&out.stderr)
    );
}

/// The pops of a replay, as `seq key types` lines, from its JSON lines.
fn pops(stdout: &[u8]) -> Vec<String> {
    json_lines(stdout)
        .iter()
        .filter(|l| l["kind"] == "batch")
        .map(|l| {
            let types: Vec<&str> = l["deltas"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["type"].as_str().unwrap())
                .collect();
            format!("{} {} {}", l["seq"], l["key"], types.join(","))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn showing_handlers_changes_no_pop_of_a_recording_with_resyncs() {
    // The recording's RESYNC lines are resyncs its queue did: they happen whatever handlers this
    // replay registers (which only decides who gets the sync notifications).
    let path = bundled("resync");
    let args = |extra: &[&'static str]| {
        let mut args = vec!["replay", path_str(&path), "-q", "-o", "jsonl"];
        args.extend_from_slice(extra);
        args
    };
    let plain = run_offline(&args(&[]), None).await;
    let shown = run_offline(&args(&["--view", "both"]), None).await;
    let handlers = run_offline(&args(&["--handler", "a", "--handler", "b,delay=2s"]), None).await;
    let plain = pops(&plain.stdout);
    assert!(plain.iter().any(|p| p.ends_with(" Sync")), "{plain:?}");
    assert_eq!(pops(&shown.stdout), plain);
    assert_eq!(pops(&handlers.stdout), plain);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_batches_counts_pops_even_when_only_handlers_are_shown() {
    let path = bundled("resync");
    let out = run_offline(
        &[
            "replay",
            path_str(&path),
            "-q",
            "-o",
            "jsonl",
            "--view",
            "handlers",
            "--max-batches",
            "2",
        ],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(0));
    let lines = json_lines(&out.stdout);
    assert!(
        lines.iter().all(|l| l["kind"] != "batch"),
        "no pop is shown"
    );
    let seqs: Vec<u64> = lines
        .iter()
        .filter(|l| l["kind"] == "notification")
        .map(|l| l["seq"].as_u64().unwrap())
        .collect();
    assert!(!seqs.is_empty(), "{lines:?}");
    assert!(
        seqs.iter().all(|s| *s <= 2),
        "only the first two pops' calls: {seqs:?}"
    );
}
