//! A recording's `replayWith` (docs/recording.md): which flags a header may hold, and which flags
//! of the command line keep it and which replace it.

use std::path::Path;

use serde_json::Value;

use crate::support::binary::{Running, run_offline, stderr};
use crate::support::configmaps::server_with_configmaps;
use crate::support::paths::{bundled, path_str};

/// The bundled controller recording with its header's `replayWith` set to `flags`, in `dir`.
fn with_replay_with(dir: &Path, flags: &[&str]) -> std::path::PathBuf {
    let text = std::fs::read_to_string(bundled("controller")).unwrap();
    let (header, rest) = text.split_once('\n').unwrap();
    let mut header: Value = serde_json::from_str(header).unwrap();
    header["replayWith"] = serde_json::json!(flags);
    let path = dir.join("mal.jsonl");
    std::fs::write(&path, format!("{header}\n{rest}")).unwrap();
    path
}

/// The reconcile rows of a replay's timeline.
fn reconciles(stdout: &[u8]) -> usize {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter(|l| l.contains("⇒ web"))
        .count()
}

/// A header may hold only flags that change what the informer, its handlers and controllers do:
/// an output or file flag (`-o html -f FILE` would overwrite any file), `--speed`, `-v` or a
/// narrowing flag refuse the recording, naming the flag, and no file is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_header_that_sets_an_output_or_file_flag_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("bashrc");
    std::fs::write(&victim, "mine\n").unwrap();
    let victim_str = path_str(&victim).to_owned();
    for (flags, named) in [
        (vec!["-o", "html", "-f", &victim_str], "set -o/--output,"),
        (
            vec!["--controller", "web", "--file", &victim_str],
            "set -f/--file,",
        ),
        (
            vec!["--controller", "web", "--speed", "0.0001"],
            "set --speed,",
        ),
        (vec!["--controller", "web", "-v"], "set -v/--verbose,"),
        (vec!["--controller", "web", "--match", "x"], "set --match,"),
    ] {
        let path = with_replay_with(dir.path(), &flags);
        let out = run_offline(&["replay", path_str(&path)], None).await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{flags:?}: {err}");
        assert!(err.contains(named), "{flags:?}: {err}");
        assert!(
            err.contains(
                "which a recording may not set: it may hold only flags that change what the \
                 informer, its handlers and controllers do (docs/recording.md); give your own \
                 flags to replay it"
            ),
            "{err}"
        );
        assert!(out.stdout.is_empty(), "{flags:?}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine\n");
        // Giving one's own informer flags replays it, without the header's.
        let out = run_offline(&["replay", path_str(&path), "--controller", "web"], None).await;
        assert_eq!(out.status.code(), Some(0), "{flags:?}: {}", stderr(&out));
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine\n");
    }
}

/// A header cannot make a replay tick without bound: a `--resync` shorter than 1ms would tick
/// the informer's timer a billion times per recorded second, without waiting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_header_resync_below_a_millisecond_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = with_replay_with(dir.path(), &["--resync", "1ns", "--controller", "web"]);
    let out = run_offline(&["replay", path_str(&path), "-q"], None).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "(\"replayWith\": --resync 1ns --controller web) are refused: --resync 1ns: a \
             replay computes the informer's resyncs on the recording's clock"
        ),
        "{err}"
    );
    assert!(err.contains("1ms at the least"), "{err}");
    // Given on the command line, it is a usage error.
    let out = run_offline(
        &[
            "replay",
            path_str(&path),
            "--resync",
            "500us",
            "--controller",
            "web",
        ],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--resync 500us: a replay computes"));
}

/// Flags that only narrow or lay out the output keep the recording's controller; a flag that
/// changes the informer replaces it, and a note names what was dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn narrowing_and_layout_flags_keep_the_recordings_controller() {
    let path = bundled("controller");
    let plain = run_offline(&["replay", path_str(&path)], None).await;
    assert_eq!(plain.status.code(), Some(0), "{}", stderr(&plain));
    assert_eq!(reconciles(&plain.stdout), 10);
    for flags in [
        &["--match", "demo/*"][..],
        &["--from", "+0s"],
        &["--to", "+1h"],
        &["--types", "Updated"],
        &["--tombstones"],
        &["-l", "app"],
        &["--field-selector", "metadata.namespace=demo"],
        &["--view", "both"],
        &["--view", "reconciles"],
        &["--no-headers"],
    ] {
        let mut args = vec!["replay", path_str(&path)];
        args.extend_from_slice(flags);
        let out = run_offline(&args, None).await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{flags:?}: {err}");
        assert_eq!(reconciles(&out.stdout), 10, "{flags:?}: {err}");
        assert!(
            err.contains(
                "note: replaying with the recording's --controller \
                 web,reconcile=500ms,fail=3,fail-keys=demo/flaky; give your own to override"
            ),
            "{flags:?}: {err}"
        );
    }
    for flags in [&["--fifo", "real"][..], &["--handler", "x"]] {
        let mut args = vec!["replay", path_str(&path)];
        args.extend_from_slice(flags);
        let out = run_offline(&args, None).await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{flags:?}: {err}");
        assert_eq!(reconciles(&out.stdout), 0, "{flags:?}");
        let note = format!(
            "note: not replaying with the recording's --controller \
             web,reconcile=500ms,fail=3,fail-keys=demo/flaky: {} changes the informer, so only \
             the flags given count; give those too to keep them",
            flags[0]
        );
        assert!(err.contains(&note), "{flags:?}: {err}");
    }
}

/// `--view` given on the command line is the command line's, over the header's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_view_given_overrides_the_headers() {
    let dir = tempfile::tempdir().unwrap();
    let flags = [
        "--controller",
        "web,reconcile=500ms",
        "--view",
        "reconciles",
    ];
    let path = with_replay_with(dir.path(), &flags);
    let only = run_offline(&["replay", path_str(&path), "-q"], None).await;
    assert_eq!(only.status.code(), Some(0), "{}", stderr(&only));
    let pops = |stdout: &[u8]| {
        String::from_utf8_lossy(stdout)
            .lines()
            .filter(|l| l.contains(" #1 "))
            .count()
    };
    assert_eq!(pops(&only.stdout), 0);
    assert!(reconciles(&only.stdout) > 0);
    let both = run_offline(&["replay", path_str(&path), "-q", "--view", "both"], None).await;
    assert_eq!(both.status.code(), Some(0), "{}", stderr(&both));
    assert_eq!(pops(&both.stdout), 1);
    assert_eq!(reconciles(&both.stdout), reconciles(&only.stdout));
}

/// What `record` writes into `replayWith`, with every handler, controller and informer flag it
/// writes there, is all a header may hold: `replay FILE` alone replays it with them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_record_writes_into_replay_with_replays() {
    let (_server, dir, kubeconfig) = server_with_configmaps(2).await;
    let path = dir.path().join("all.jsonl");
    let recorded: [&[&str]; 2] = [
        &[
            "--controller",
            "web,reconcile=1ms",
            "--handler",
            "h,resync=0",
            "--view",
            "both",
            "--client-go",
            "1.36",
            "--fifo",
            "atomic",
            "--batch-pop",
            "2",
            "--unlock-while-processing=true",
            "--index",
            "label:app",
        ],
        &[
            "--informer",
            "plain",
            "--handler-delay",
            "1ms",
            "--fifo",
            "delta",
        ],
    ];
    for flags in recorded {
        let mut args = vec!["record", "cm", "-f", path_str(&path), "--force"];
        args.extend_from_slice(flags);
        let mut bin = Running::spawn(&kubeconfig, &args);
        tokio::task::block_in_place(|| {
            bin.read_stderr_until("the sync", |l| l.contains("── synced:"))
        });
        let live = tokio::task::block_in_place(|| bin.interrupt());
        assert_eq!(live.status.code(), Some(0), "{flags:?}: {}", live.stderr);
        let text = std::fs::read_to_string(&path).unwrap();
        let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(header["replayWith"], serde_json::json!(flags), "{header}");

        let out = run_offline(&["replay", path_str(&path)], None).await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{flags:?}: {err}");
        let note = format!(
            "note: replaying with the recording's {}; give your own to override",
            flags.join(" ")
        );
        assert!(err.contains(&note), "{flags:?}: {err}");
    }
}
