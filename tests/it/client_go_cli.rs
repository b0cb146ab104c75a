//! `--client-go VERSION` through the binary: the settings each version's informer gets by default,
//! the flags that override them, the first row that names them all, a bad version, and what a
//! replay and a live cluster make of the streaming-list setting. Golden files: one bundled
//! recording through `--client-go 1.33` and `latest`.

use std::path::PathBuf;

use crate::support::binary::{Running, json_lines, offline_command, run, run_offline, stderr};
use crate::support::fake_apiserver::FakeApiServer;
use crate::support::golden::golden;
use serde_json::{Value, json};

fn path(relative: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(relative)
        .to_str()
        .unwrap()
        .to_owned()
}

/// Replays `file` (relative to the repository) quietly with `args`; returns stdout, after checking
/// that it succeeded.
async fn replay(file: &str, args: &[&str]) -> String {
    let file = path(file);
    let mut all = vec!["replay", file.as_str(), "-q"];
    all.extend_from_slice(args);
    let out = run_offline(&all, None).await;
    assert_eq!(out.status.code(), Some(0), "{all:?}: {}", stderr(&out));
    String::from_utf8(out.stdout).unwrap()
}

/// The first row of a timeline, without its time.
fn first_row(timeline: &str) -> &str {
    let row = timeline.lines().next().unwrap();
    row.split_once("  ── ").map_or(row, |(_, text)| text)
}

const LISTED: &str = "tests/recordings/coalescing.jsonl";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_version_names_its_settings_on_the_first_row() {
    for (args, expected) in [
        (
            &[][..],
            "client-go 1.32 (default; --client-go latest for today's informers): fifo=delta, \
             batch-pop=1, legacy-sync=off, watch-list=off (recording), \
             unlock-while-processing=off; queue: DeltaFIFO, one key per pop",
        ),
        (
            &["--client-go", "1.17"],
            "client-go 1.17: fifo=delta, batch-pop=1, legacy-sync=on, watch-list=off (recording), \
             unlock-while-processing=off, reflector=1.28; queue: DeltaFIFO, one key per pop",
        ),
        (
            &["--client-go", "1.28"],
            "client-go 1.28: fifo=delta, batch-pop=1, legacy-sync=off, watch-list=off \
             (recording), unlock-while-processing=off; queue: DeltaFIFO, one key per pop",
        ),
        (
            &["--client-go", "v0.33.4"],
            "client-go 1.33.4: fifo=real, batch-pop=1, legacy-sync=off, watch-list=off \
             (recording), unlock-while-processing=off; queue: RealFIFO (InOrderInformers), one \
             delta per pop",
        ),
        (
            &["--client-go", "1.35"],
            "client-go 1.35: fifo=real, batch-pop=1000, legacy-sync=off, watch-list=off \
             (recording), unlock-while-processing=off; queue: RealFIFO (InOrderInformers), up \
             to 1000 deltas per pop",
        ),
        (
            &["--client-go", "1.36"],
            "client-go 1.36: fifo=atomic, batch-pop=1000, legacy-sync=off, watch-list=off \
             (recording), unlock-while-processing=on; queue: RealFIFO, atomic (AtomicFIFO), up \
             to 1000 deltas per pop",
        ),
        (
            &["--client-go", "latest"],
            "client-go 1.36 (latest): fifo=atomic, batch-pop=1000, legacy-sync=off, watch-list=off \
             (recording), unlock-while-processing=on; queue: RealFIFO, atomic (AtomicFIFO), up \
             to 1000 deltas per pop",
        ),
    ] {
        let timeline = replay(LISTED, args).await;
        assert_eq!(first_row(&timeline), expected, "{args:?}");
    }

    // The same in JSON lines, additively: `queue` and `batchPop` as before, then the profile.
    let jsonl = replay(LISTED, &["--client-go", "1.35", "-o", "jsonl"]).await;
    let start = &json_lines(jsonl.as_bytes())[0];
    assert_eq!(start["event"], "informer-start");
    assert_eq!(start["queue"], "real");
    assert_eq!(start["batchPop"], 1000);
    let from = |value: Value, from: &str| json!({"value": value, "from": from});
    assert_eq!(
        start["profile"],
        json!({
            "clientGo": "1.35",
            "chosen": "flag",
            "settings": {
                "fifo": from(json!("real"), "profile"),
                "batchPop": from(json!(1000), "profile"),
                "legacySync": from(json!(false), "profile"),
                "watchList": from(json!(false), "recording"),
                "unlockWhileProcessing": from(json!(false), "profile"),
            },
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_profile_decides_what_is_popped() {
    // client-go 1.17 relists with Sync deltas; 1.18 on with Replaced.
    let old = replay(LISTED, &["--client-go", "1.17"]).await;
    assert!(old.contains("default/a  Sync "), "{old}");
    assert!(!old.contains("Replaced"), "{old}");
    let new = replay(LISTED, &["--client-go", "1.18"]).await;
    assert!(new.contains("default/a  Replaced "), "{new}");
    // client-go 1.36 pops the initial list as one ReplacedAll.
    let latest = replay(LISTED, &["--client-go", "latest"]).await;
    assert!(latest.contains("  *  ReplacedAll "), "{latest}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_explicit_flag_wins_over_the_profile_and_the_row_says_so() {
    let timeline = replay(LISTED, &["--client-go", "latest", "--fifo", "delta"]).await;
    // No batch pops and no unlocking without a RealFIFO, as in client-go.
    assert_eq!(
        first_row(&timeline),
        "client-go 1.36 (latest): fifo=delta (flag), batch-pop=1, legacy-sync=off, \
         watch-list=off (recording), unlock-while-processing=off; queue: DeltaFIFO, one key per pop"
    );
    assert!(timeline.contains("default/a  Replaced "), "{timeline}");

    let timeline = replay(
        LISTED,
        &[
            "--client-go",
            "1.17",
            "--legacy-sync=false",
            "--fifo=real",
            "--batch-pop",
            "2",
        ],
    )
    .await;
    assert!(
        first_row(&timeline).starts_with(
            "client-go 1.17: fifo=real (flag), batch-pop=2 (flag), legacy-sync=off (flag),"
        ),
        "{timeline}"
    );
    assert!(!timeline.contains(" Sync "), "{timeline}");

    let timeline = replay(LISTED, &["--legacy-sync"]).await;
    assert!(
        first_row(&timeline).contains("legacy-sync=on (flag)"),
        "{timeline}"
    );
    assert!(timeline.contains("default/a  Sync "), "{timeline}");
}

#[test]
fn a_version_it_does_not_know_is_a_usage_error_in_one_line() {
    let rec = path(LISTED);
    for args in [
        &["replay", rec.as_str(), "--client-go", "1.99"][..],
        &["replay", rec.as_str(), "--client-go", "1.16"],
        &["replay", rec.as_str(), "--client-go", "2.32"],
        &["replay", rec.as_str(), "--client-go=newest"],
        &["watch", "pods", "--client-go", "1.4"],
        &["index", "pods", "--by", "namespace", "--client-go", "1.x"],
        &["record", "pods", "--client-go", "1.37"],
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = offline_command(args)
            .env("KUBECONFIG", dir.path().join("missing"))
            .env("HOME", dir.path())
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("kubectl-deltas: error: --client-go: ")
                && (err.contains("1.17 to 1.36 (v0.17 to v0.36), or latest")
                    || err.contains("(1.28, 0.28.7, v0.36.0-alpha.1), or latest")),
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    // A batch size for a queue without batch pops, whichever version.
    let out = offline_command(&[
        "replay",
        rec.as_str(),
        "--client-go",
        "latest",
        "--fifo",
        "delta",
        "--batch-pop",
        "5",
    ])
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--batch-pop 5 needs --fifo real"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_expired_watch_through_client_go_1_33_and_latest_matches_its_goldens() {
    const RECORDING: &str = "docs/recordings/expired-watch.jsonl";
    for (version, name) in [("1.33", "1.33"), ("latest", "latest")] {
        let timeline = replay(RECORDING, &["--client-go", version]).await;
        golden(
            &format!("replay_expired-watch.client-go-{name}.timeline.txt"),
            &timeline,
        );
        let jsonl = replay(
            RECORDING,
            &["--client-go", version, "-o", "jsonl", "--object", "meta"],
        )
        .await;
        golden(
            &format!("replay_expired-watch.client-go-{name}.jsonl.txt"),
            &jsonl,
        );
    }
}

/// A server holding two config maps that answers streaming lists (as from Kubernetes 1.32).
async fn streaming_server() -> (FakeApiServer, tempfile::TempDir, PathBuf) {
    let server = FakeApiServer::start().await;
    for name in ["a", "b"] {
        server.create(
            "configmaps",
            json!({"metadata": {"name": name, "namespace": "default"}, "data": {"k": "v"}}),
        );
    }
    server.set_watch_list_supported(true);
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    (server, dir, kubeconfig)
}

/// Whether the informer's initial list was a streaming watch (and no LIST was sent).
fn streamed(server: &FakeApiServer) -> bool {
    let requests = server.requests();
    let lists = requests
        .iter()
        .filter(|r| r.is_list() && r.path.contains("configmaps"))
        .count();
    let streams = requests
        .iter()
        .filter(|r| r.is_watch() && r.param("sendInitialEvents") == Some("true"))
        .count();
    assert!(
        (lists == 0) != (streams == 0),
        "a list or a stream: {requests:#?}"
    );
    streams > 0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn from_client_go_1_35_the_initial_list_is_streamed_unless_the_flag_says_otherwise() {
    let (server, dir, kubeconfig) = streaming_server().await;
    let watch = |extra: &'static [&'static str]| {
        let mut args = vec!["watch", "cm", "--until-synced", "-q"];
        args.extend_from_slice(extra);
        args
    };
    for (extra, streams, row) in [
        (&[][..], false, "watch-list=off,"),
        (&["--client-go", "1.35"], true, "watch-list=on,"),
        (
            &["--client-go", "1.35", "--watch-list=false"],
            false,
            "watch-list=off (flag),",
        ),
        (
            &["--client-go", "1.34", "--watch-list"],
            true,
            "watch-list=on (flag),",
        ),
    ] {
        server.clear_requests();
        let out = run(kubeconfig.clone(), &watch(extra)).await;
        assert_eq!(out.status.code(), Some(0), "{extra:?}: {}", stderr(&out));
        let timeline = String::from_utf8(out.stdout).unwrap();
        assert!(first_row(&timeline).contains(row), "{extra:?}: {timeline}");
        assert_eq!(streamed(&server), streams, "{extra:?}");
    }

    // `index` takes the profile too.
    server.clear_requests();
    let out = run(
        kubeconfig.clone(),
        &["index", "cm", "--by", "namespace", "--client-go", "latest"],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(streamed(&server));

    // So does `record`, and a replay streams its initial list iff the recording did, whatever
    // its own profile says.
    let file = dir.path().join("streamed.jsonl");
    let out = run(
        kubeconfig.clone(),
        &[
            "record",
            "cm",
            "-f",
            file.to_str().unwrap(),
            "--quiet",
            "--duration",
            "1s",
            "--client-go",
            "1.35",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let timeline = replay(file.to_str().unwrap(), &[]).await;
    assert!(
        first_row(&timeline).contains("watch-list=on (recording)"),
        "{timeline}"
    );
    assert!(timeline.contains("streaming list opened"), "{timeline}");
    assert!(timeline.contains("items, streamed"), "{timeline}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_made_with_list_pages_replays_as_list_and_watch_whatever_the_profile() {
    for version in ["1.35", "latest"] {
        let timeline = replay(LISTED, &["--client-go", version, "-v"]).await;
        assert!(
            first_row(&timeline).contains("watch-list=off (recording)"),
            "{timeline}"
        );
        assert!(timeline.contains("── list done: 2 items"), "{timeline}");
        assert!(!timeline.contains("streaming list"), "{timeline}");
    }
}

#[test]
fn completion_offers_the_versions_and_leaves_the_word_after_a_bool_flag_alone() {
    let complete = |words: &[&str]| {
        let mut args = vec!["__complete"];
        args.extend_from_slice(words);
        let out = offline_command(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        String::from_utf8(out.stdout).unwrap()
    };
    let versions = complete(&["watch", "pods", "--client-go", "1.3"]);
    let offered: Vec<&str> = versions.lines().filter(|l| !l.starts_with(':')).collect();
    assert_eq!(
        offered,
        ["1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36"]
    );
    assert!(complete(&["watch", "pods", "--client-go", "l"]).starts_with("latest\n"));
    // `--watch-list false` would make `false` the NAME: the value needs `=`.
    for flag in ["--watch-list", "--legacy-sync"] {
        let next = complete(&["watch", flag, ""]);
        assert!(!next.contains("true"), "{flag}: {next}");
    }
    assert!(complete(&["watch", "pods", "--watch-list="]).contains("false"));
}

/// The batch lines of a jsonl output: (their keys, or `*` for a whole-list delta), in order.
fn batch_keys(jsonl: &str) -> Vec<Vec<String>> {
    json_lines(jsonl.as_bytes())
        .iter()
        .filter(|line| line["kind"] == "batch")
        .map(|batch| {
            batch["deltas"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| {
                    let key = &d["key"];
                    let tombstone = d["tombstone"] == true;
                    format!(
                        "{}{}",
                        key.as_str().unwrap_or("*"),
                        if tombstone { " (tombstone)" } else { "" }
                    )
                })
                .collect()
        })
        .collect()
}

/// `DeltaFIFO.Replace` before a01b5a2a9 (@v0.23.17, @v0.24.12): a key queued but unknown to the
/// Indexer gets no tombstone at a relist, so `default/d` pops `Added` alone and stays cached;
/// from v0.24.13 (the backport) it pops `Added Deleted(tombstone)`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delta_fifo_replace_tombstones_queued_keys_from_a01b5a2a9_by_patch() {
    const QUEUED: &str = "tests/recordings/tombstone-queued.jsonl";
    for (version, d) in [
        ("1.23", vec!["default/d"]),
        ("0.24.12", vec!["default/d"]),
        ("v0.24.13", vec!["default/d", "default/d (tombstone)"]),
        ("1.26", vec!["default/d", "default/d (tombstone)"]),
    ] {
        let jsonl = replay(QUEUED, &["--client-go", version, "-o", "jsonl"]).await;
        let batches = batch_keys(&jsonl);
        let popped: Vec<&Vec<String>> = batches
            .iter()
            .filter(|keys| keys[0] == "default/d")
            .collect();
        assert_eq!(popped, [&d], "{version}: {batches:?}");
    }
    let timeline = replay(QUEUED, &["--client-go", "1.23"]).await;
    assert!(timeline.contains("default/d  Added     rv 2"), "{timeline}");
    assert!(!timeline.contains("tombstone"), "{timeline}");
}

/// A relist that finds `b` changed and `c` new, 7 s after a resync check (period 10 s) that
/// unmarked both handlers (`web` every 30 s, `plain` never).
const RELIST: &str = r#"{"kind":"header","v":1,"resource":{"group":"","version":"v1","kind":"ConfigMap","plural":"configmaps","namespaced":true},"namespace":"default","startedAt":"2026-01-05T10:00:00Z"}
{"t":0,"type":"LIST","resourceVersion":"1","items":[{"metadata":{"name":"a","namespace":"default","resourceVersion":"1"}},{"metadata":{"name":"b","namespace":"default","resourceVersion":"1"}}]}
{"t":15000,"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}}
{"t":17000,"type":"LIST","resourceVersion":"5","items":[{"metadata":{"name":"a","namespace":"default","resourceVersion":"1"}},{"metadata":{"name":"b","namespace":"default","resourceVersion":"4"}},{"metadata":{"name":"c","namespace":"default","resourceVersion":"5"}}]}
"#;

/// The notifications each handler was given (`type key` of the delivered ones, `(sync)` marked)
/// after the relist of [`RELIST`], through `--client-go version`.
async fn relist_notifications(version: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("relist.jsonl");
    std::fs::write(&file, RELIST).unwrap();
    let args = [
        "--client-go",
        version,
        "--resync",
        "10s",
        "--handler",
        "web,resync=30s",
        "--handler",
        "plain,resync=0",
        "-o",
        "jsonl",
    ];
    let jsonl = replay(file.to_str().unwrap(), &args).await;
    json_lines(jsonl.as_bytes())
        .iter()
        .filter(|line| line["kind"] == "notification" && line["delivered"] == true)
        .filter(|line| line["time"].as_str().unwrap() > "2026-01-05T10:00:16")
        .map(|n| {
            format!(
                "{} {} {}{}",
                n["handler"].as_str().unwrap(),
                n["type"].as_str().unwrap(),
                n["key"].as_str().unwrap(),
                if n["isSync"] == true { " (sync)" } else { "" }
            )
        })
        .collect()
}

/// `sharedIndexInformer.HandleDeltas` @v0.17.17: `isSync := d.Type == Sync` for adds and updates
/// alike, and the relist queues `Sync`: its changed and new objects reach only handlers whose
/// resync is due (none here). From v0.18.0 (`Replaced`; `OnUpdate` @v0.24.0 compares
/// resourceVersions) they reach every handler.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handle_deltas_v0_17_hands_a_relist_only_to_handlers_due_a_resync() {
    assert_eq!(relist_notifications("1.17").await, Vec::<String>::new());
    let everyone = [
        "web update default/b",
        "plain update default/b",
        "web add default/c",
        "plain add default/c",
    ];
    let mut got = relist_notifications("1.18").await;
    got.sort();
    let mut want = everyone.map(str::to_owned).to_vec();
    want.sort();
    assert_eq!(got, want);
}

/// `processorListener.HasSynced` and `ResourceEventHandlerRegistration` came in v0.27.0: before,
/// no handler has a sync of its own to show, and the summary says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handler_has_synced_exists_from_v0_27() {
    let synced = |jsonl: &str| {
        json_lines(jsonl.as_bytes())
            .iter()
            .filter(|l| l["event"] == "handler-synced")
            .count()
    };
    let args = |version| {
        [
            "--client-go",
            version,
            "--handler",
            "a",
            "--view",
            "both",
            "-o",
            "jsonl",
        ]
    };
    assert_eq!(synced(&replay(LISTED, &args("1.26")).await), 0);
    assert_eq!(synced(&replay(LISTED, &args("1.27")).await), 1);
    // The summary table, on stderr.
    let summary = |version| {
        let file = path(LISTED);
        let all = [
            "replay",
            file.as_str(),
            "--client-go",
            version,
            "--handler",
            "a",
        ];
        stderr(&offline_command(&all).output().unwrap())
    };
    let old = summary("1.26");
    assert!(
        old.lines()
            .any(|l| l.contains("time to HasSynced") && l.contains("n/a before 1.27")),
        "{old}"
    );
    let new = summary("1.27");
    assert!(!new.contains("n/a before 1.27"), "{new}");
}

/// The batches (size, and how long the oldest delta waited in the queue, in ms) a `watch
/// --client-go 1.36 --informer plain --handler-delay 100ms` pops of 40 config maps created at
/// once behind one already listed, with `unlock` as `--unlock-while-processing`.
async fn batches_behind_a_slow_plain_handler(unlock: bool) -> Vec<(usize, f64)> {
    let server = FakeApiServer::start().await;
    server.create(
        "configmaps",
        json!({"metadata": {"name": "first", "namespace": "default"}}),
    );
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let flag = format!("--unlock-while-processing={unlock}");
    let args = [
        "watch",
        "cm",
        "-n",
        "default",
        "--client-go",
        "1.36",
        flag.as_str(),
        "--informer",
        "plain",
        "--handler-delay",
        "100ms",
        "-o",
        "jsonl",
        "-q",
    ];
    let mut bin = Running::spawn(&kubeconfig, &args);
    bin.read_until("the initial batch", |l| l.contains(r#""kind":"batch""#));
    for n in 0..40 {
        if n == 1 {
            // The rest arrive while c00's handler call runs: created while the consumer is
            // idle, all 40 could be queued in one burst before it wakes, with nothing to wait for.
            std::thread::sleep(std::time::Duration::from_millis(40));
        }
        server.create(
            "configmaps",
            json!({"metadata": {"name": format!("c{n:02}"), "namespace": "default"}}),
        );
    }
    let sizes = std::cell::RefCell::new(Vec::new());
    bin.read_until("the 40 new config maps popped", |line| {
        if line.contains(r#""kind":"batch""#) {
            let batch: Value = serde_json::from_str(line).unwrap();
            sizes.borrow_mut().push((
                batch["deltas"].as_array().unwrap().len(),
                batch["waitMs"].as_f64().unwrap(),
            ));
        }
        sizes.borrow().iter().map(|(n, _)| n).sum::<usize>() >= 40
    });
    let out = bin.interrupt();
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    sizes.into_inner()
}

/// `RealFIFO.whileProcessing_locked` @v0.36.3 (`UnlockWhileProcessingFIFO`): a plain informer's
/// slow handler runs with the queue unlocked, the Reflector keeps queueing meanwhile, and the
/// next `PopBatch` takes the pile, which has waited in the queue for the handler; with the lock
/// held, the Reflector waits for the pop to end before it queues, so nothing waits in the queue
/// for a handler.
///
/// Batch sizes do not tell the two apart: events that arrive while the Reflector waits for the
/// lock are queued in a burst when it is freed, faster than the consumer wakes for its next pop,
/// so both can pop the 40 as `[1, 39]` or `[40]`. How long the pile waited in the queue does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_fifo_unlocked_while_processing_lets_a_slow_plain_handler_batch_the_pile() {
    let unlocked = batches_behind_a_slow_plain_handler(true).await;
    let locked = batches_behind_a_slow_plain_handler(false).await;
    let longest = |batches: &[(usize, f64)]| batches.iter().map(|(_, w)| *w).fold(0.0, f64::max);
    assert!(unlocked.len() <= 4, "unlocked: {unlocked:?}");
    // The handler takes 100 ms a call: a pile queued during one waits most of it.
    assert!(longest(&unlocked) >= 50.0, "unlocked: {unlocked:?}");
    assert!(
        longest(&locked) < 50.0,
        "locked: {locked:?}, unlocked: {unlocked:?}"
    );
}

/// `AddEventHandlerWithResyncPeriod` raises a handler's period below `minimumResyncPeriod` (1 s),
/// but `NewSharedIndexInformer`'s own period, the resync check period, is never raised: with
/// `--resync 500ms` the Reflector's resync timer ticks every 500 ms.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_informers_resync_period_is_not_raised_to_a_second_only_handlers_are() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("relist.jsonl");
    std::fs::write(&file, RELIST).unwrap();
    let file = file.to_str().unwrap();
    let resyncs = |jsonl: &str| {
        json_lines(jsonl.as_bytes())
            .iter()
            .filter(|l| l["event"] == "resync")
            .filter(|l| l["time"].as_str().unwrap() < "2026-01-05T10:00:15")
            .count()
    };
    let plain = replay(file, &["--resync", "500ms", "-o", "jsonl"]).await;
    assert_eq!(resyncs(&plain), 29, "{plain}");
    // A handler inherits 500 ms, raised to 1 s: it is due at every other check.
    let handled = replay(
        file,
        &[
            "--resync",
            "500ms",
            "--handler",
            "web",
            "--view",
            "both",
            "-o",
            "jsonl",
        ],
    )
    .await;
    let syncs = json_lines(handled.as_bytes())
        .iter()
        .filter(|l| l["kind"] == "notification" && l["isSync"] == true)
        .filter(|l| l["delivered"] == true)
        .filter(|l| l["time"].as_str().unwrap() < "2026-01-05T10:00:15")
        .count();
    // Two objects, resynced at 1, 2, … 14 s: the checks at 0.5, 1.5, … find web not due.
    assert_eq!(syncs, 2 * 14, "{handled}");
}

/// A list answered 422: client-go's `ListAndWatch` retries it forever (`Reflector.Run`'s
/// `BackoffUntil`); this tool stops, and says on a `note:` line what an informer would do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_refused_as_invalid_stops_with_a_note_on_what_client_go_would_do() {
    use crate::support::fake_apiserver::{Fault, Verb};
    let server = FakeApiServer::start().await;
    server.inject(
        Fault::custom_status(422, "Invalid", "unable to parse requirement")
            .on(Verb::List)
            .for_resource("configmaps"),
    );
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let out = run(kubeconfig, &["watch", "cm", "--until-synced", "-q"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.lines().any(|l| l.starts_with("kubectl-deltas: note: a client-go informer does not stop here")),
        "{err}"
    );
}
