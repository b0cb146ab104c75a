//! What each handler receives (issue #17), through the binary: `--handler`, `--informer` and
//! `--view` on the command line and their usage errors, the `notification` JSON lines and
//! `handler-synced` events, the summary's handler table, and live watches against the fake API
//! server with a slow handler (`shared`: its buffer grows, the queue does not) and with `plain`
//! (the handler runs inside the pop).

use crate::support;
use crate::support::configmaps::{cm, server_with_configmaps};
use crate::support::paths::{bundled, summary_row};

use std::path::PathBuf;

use serde_json::Value;
use support::binary::{Running, assert_usage_sentence, json_lines, run_offline, stderr};

/// Replays bundled recording `name` with `args`; checks the exit code is 0; returns stdout and
/// stderr.
async fn replay(name: &str, args: &[&str]) -> (String, String) {
    let path = bundled(name);
    let mut all = vec!["replay", path.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = run_offline(&all, None).await;
    assert_eq!(out.status.code(), Some(0), "{all:?}: {}", stderr(&out));
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The story of `slow-handler.jsonl` (docs/recordings/README.md).
const SLOW: [&str; 6] = [
    "--resync",
    "30s",
    "--handler",
    "slow,delay=2s,resync=0",
    "--handler",
    "periodic",
];

/// Handler rows of a timeline (`→ NAME …` delivered, `✗ NAME …` not delivered).
fn handler_rows(timeline: &str) -> Vec<&str> {
    timeline
        .lines()
        .filter(|l| {
            let rest = l.split_once("  ").map_or("", |(_, r)| r).trim_start();
            rest.starts_with("→ ") || rest.starts_with("✗ ")
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_handler_flags_are_usage_errors_of_one_sentence() {
    let path = bundled("resync");
    let path = path.to_str().unwrap();
    for (args, says) in [
        (
            &["--handler", "a/b"][..],
            r#""a/b" is not a handler name: use letters, digits, '-', '_' or '.'"#,
        ),
        (&["--handler", ",delay=1s"], r#""" is not a handler name"#),
        (
            &["--handler", "a,foo=1"],
            r#"unknown handler setting "foo": expected resync=DURATION or delay=DURATION"#,
        ),
        (
            &["--handler", "a,delay=1s,delay=2s"],
            r#"delay= is given twice for handler "a": give each setting once"#,
        ),
        (
            &["--handler", "a,delay=soon"],
            r#""soon" is not a duration: use Go's units h, m, s, ms, us, ns as in 30s, 5m, 1h30m or 250ms"#,
        ),
        (&["--handler", "a,resync=-1s"], r#""-1s" is negative"#),
        (
            &["--handler", "a", "--handler-delay", "1s"],
            "--handler-delay is the default handler's delay: with --handler, give each handler \
             its own (--handler NAME,delay=DURATION)",
        ),
        (
            &[
                "--handler",
                "a",
                "--handler",
                "b",
                "--handler",
                "a,delay=1s",
            ],
            "--handler a is given twice: each handler needs a name of its own",
        ),
        (
            &["--informer", "plain", "--handler", "a", "--handler", "b"],
            "--informer plain has one handler (client-go's NewInformer takes one)",
        ),
        (
            &["--informer", "plain", "--handler", "a,resync=1s"],
            "--informer plain has no per-handler resync period",
        ),
        (
            &["--informer", "plain", "--view", "handlers"],
            "--informer plain calls its handler inside the pop",
        ),
        (&["--view", "queue"], "invalid value 'queue' for '--view"),
        (
            &["--informer", "both"],
            "invalid value 'both' for '--informer",
        ),
    ] {
        let mut all = vec!["replay", path];
        all.extend_from_slice(args);
        let out = run_offline(&all, None).await;
        assert_usage_sentence(&out, &format!("{args:?}"), says);
    }
}

/// `--view` decides for every format: `pops` has no handler rows, `handlers` no pop rows, `both`
/// both; the default is `both` with more than one handler and `pops` with the default handler.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn view_decides_what_each_format_shows() {
    let two = ["--handler", "a", "--handler", "b,delay=2s,resync=0"];
    fn rows<'a>(view: Option<&'a str>, args: &[&'a str]) -> Vec<&'a str> {
        let mut all = args.to_vec();
        all.push("-q");
        if let Some(view) = view {
            all.extend(["--view", view]);
        }
        all
    }
    let pops = |timeline: &str| timeline.lines().filter(|l| l.contains("  #")).count();

    let (default_one, _) = replay("resync", &rows(None, &[])).await;
    assert!(pops(&default_one) > 0 && handler_rows(&default_one).is_empty());
    let (default_two, _) = replay("resync", &rows(None, &two)).await;
    let (both, _) = replay("resync", &rows(Some("both"), &two)).await;
    assert_eq!(default_two, both, "two handlers: both by default");
    assert!(pops(&both) > 0 && !handler_rows(&both).is_empty());

    let (only_pops, _) = replay("resync", &rows(Some("pops"), &two)).await;
    assert!(pops(&only_pops) > 0 && handler_rows(&only_pops).is_empty());
    let pop_rows = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| !handler_rows(t).contains(l) && !l.contains("── handler "))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(
        pop_rows(&only_pops),
        pop_rows(&both),
        "--view pops: the rows of pops"
    );
    let (only_handlers, _) = replay("resync", &rows(Some("handlers"), &two)).await;
    assert_eq!(pops(&only_handlers), 0, "{only_handlers}");
    let squeezed = |rows: Vec<&str>| -> Vec<String> {
        rows.iter()
            .map(|r| r.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect()
    };
    assert_eq!(
        squeezed(handler_rows(&only_handlers)),
        squeezed(handler_rows(&both))
    );

    // A delay on the default handler puts its notifications in view too.
    let (delayed, _) = replay("resync", &["-q", "--handler-delay", "1s"]).await;
    assert!(!handler_rows(&delayed).is_empty(), "{delayed}");

    let kinds = |jsonl: &str| -> Vec<String> {
        let mut kinds: Vec<String> = json_lines(jsonl.as_bytes())
            .iter()
            .map(|l| l["kind"].as_str().unwrap().to_owned())
            .collect();
        kinds.dedup();
        kinds.sort();
        kinds.dedup();
        kinds
    };
    for (view, batches, notifications) in [
        ("pops", true, false),
        ("handlers", false, true),
        ("both", true, true),
    ] {
        let mut all = rows(Some(view), &two);
        all.extend(["-o", "jsonl"]);
        let (jsonl, _) = replay("resync", &all).await;
        let kinds = kinds(&jsonl);
        assert_eq!(
            kinds.contains(&"batch".into()),
            batches,
            "{view}: {kinds:?}"
        );
        assert_eq!(
            kinds.contains(&"notification".into()),
            notifications,
            "{view}: {kinds:?}"
        );
    }
}

/// Every field of a `notification` line and a `handler-synced` event, with its type.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notification_lines_and_handler_synced_events_have_every_field() {
    let mut args = SLOW.to_vec();
    args.extend(["-q", "-o", "jsonl"]);
    let (jsonl, _) = replay("slow-handler", &args).await;
    let lines = json_lines(jsonl.as_bytes());
    let notifications: Vec<&Value> = lines
        .iter()
        .filter(|l| l["kind"] == "notification")
        .collect();
    assert!(!notifications.is_empty());
    let mut types = std::collections::BTreeSet::new();
    for n in &notifications {
        let obj = n.as_object().unwrap();
        let delivered = n["delivered"].as_bool().expect("delivered: bool");
        let mut expected = vec![
            "kind",
            "time",
            "resource",
            "handler",
            "seq",
            "type",
            "isSync",
            "isInInitialList",
            "key",
            "oldResourceVersion",
            "newResourceVersion",
            "tombstone",
            "delivered",
        ];
        if delivered {
            expected.extend(["bufferDepth", "waitMs"]);
        }
        let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        keys.sort();
        expected.sort();
        assert_eq!(keys, expected, "{n}");
        assert!(n["time"].as_str().unwrap().ends_with('Z'), "{n}");
        assert_eq!(n["resource"], "configmaps");
        assert!(["slow", "periodic"].contains(&n["handler"].as_str().unwrap()));
        assert!(n["seq"].as_u64().unwrap() >= 1, "{n}");
        let type_ = n["type"].as_str().unwrap();
        types.insert(type_.to_owned());
        let sync = n["isSync"].as_bool().unwrap();
        let initial = n["isInInitialList"].as_bool().unwrap();
        assert!(n["key"].as_str().unwrap().starts_with("demo/"), "{n}");
        let new = n["newResourceVersion"].as_str().unwrap();
        match type_ {
            "add" => assert!(n["oldResourceVersion"].is_null(), "{n}"),
            "update" => {
                let old = n["oldResourceVersion"].as_str().unwrap();
                assert_eq!(sync, old == new, "isSync is equal resourceVersions: {n}");
                assert!(!initial, "{n}");
            }
            other => panic!("unexpected type {other}: {n}"),
        }
        assert!(!n["tombstone"].as_bool().unwrap());
        if delivered {
            n["bufferDepth"].as_u64().expect("bufferDepth: integer");
            assert!(n["waitMs"].as_f64().unwrap() >= 0.0, "{n}");
        } else {
            assert!(sync, "only sync notifications go undelivered: {n}");
        }
    }
    assert_eq!(types.into_iter().collect::<Vec<_>>(), ["add", "update"]);

    let synced: Vec<&Value> = lines
        .iter()
        .filter(|l| l["event"] == "handler-synced")
        .collect();
    assert_eq!(synced.len(), 2, "one per handler: {jsonl}");
    for event in &synced {
        let mut keys: Vec<&str> = event
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort();
        assert_eq!(
            keys,
            ["afterMs", "event", "handler", "kind", "resource", "time"],
            "{event}"
        );
        assert_eq!(event["kind"], "reflector");
        assert!(event["afterMs"].as_f64().unwrap() >= 0.0);
    }
    let after = |handler: &str| {
        synced.iter().find(|e| e["handler"] == handler).unwrap()["afterMs"]
            .as_f64()
            .unwrap()
    };
    // The slow handler processed three initial adds at 2 s each.
    assert!(after("slow") >= 6000.0, "{jsonl}");
    assert!(after("periodic") < after("slow"), "{jsonl}");
}

/// A tombstone reaches OnDelete as a notification line with `tombstone: true`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relist_tombstone_reaches_on_delete_in_the_jsonl() {
    let (jsonl, _) = replay(
        "expired-watch",
        &[
            "-q",
            "-o",
            "jsonl",
            "--view",
            "handlers",
            "--handler",
            "web",
        ],
    )
    .await;
    let deletes: Vec<Value> = json_lines(jsonl.as_bytes())
        .into_iter()
        .filter(|l| l["kind"] == "notification" && l["type"] == "delete")
        .collect();
    assert_eq!(deletes.len(), 1, "{jsonl}");
    assert_eq!(deletes[0]["key"], "demo/worker-2");
    assert_eq!(deletes[0]["tombstone"], true);
    assert_eq!(deletes[0]["handler"], "web");
}

/// The summary's handler table: a column per handler, its counts, its largest buffer (read
/// after the informer stopped) and its time to HasSynced.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_summary_has_a_column_per_handler() {
    let (_, stderr) = replay("slow-handler", &SLOW).await;
    let table = stderr.rfind("┌").expect(&stderr);
    let summary = &stderr[table..];
    assert_eq!(
        summary_row(summary, "handler"),
        ["slow", "periodic"],
        "{summary}"
    );
    assert_eq!(summary_row(summary, "OnAdd"), ["4", "4"], "{summary}");
    assert_eq!(summary_row(summary, "OnUpdate"), ["6", "11"], "{summary}");
    assert_eq!(
        summary_row(summary, "of which resyncs"),
        ["0", "5"],
        "{summary}"
    );
    assert_eq!(summary_row(summary, "OnDelete"), ["0", "0"], "{summary}");
    assert_eq!(
        summary_row(summary, "resyncs not delivered"),
        ["5", "0"],
        "{summary}"
    );
    // The largest `buffer N` a row shows: the notifications still waiting behind a call.
    assert_eq!(
        summary_row(summary, "max buffer depth"),
        ["6", "0"],
        "{summary}"
    );
    assert_eq!(
        summary_row(summary, "time to HasSynced"),
        ["6.00s", "5.0ms"],
        "{summary}"
    );
}

/// A live shared informer with a slow handler: every pop returns at once, the queue stays
/// short, while the handler's buffer grows; it still gets every update, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_a_slow_handler_grows_its_buffer_not_the_queue() {
    let (server, _dir, kubeconfig) = server_with_configmaps(1).await;
    let args = [
        "watch",
        "cm",
        "-o",
        "jsonl",
        "--object",
        "none",
        "--handler",
        "slow,delay=300ms",
        "--view",
        "both",
    ];
    let mut bin = Running::spawn(&kubeconfig, &args);
    tokio::task::block_in_place(|| {
        bin.read_until("the sync", |l| l.contains(r#""event":"synced""#));
    });
    for v in 1..=6 {
        server.update("configmaps", cm("cm-0", &v.to_string()));
    }
    let seen = std::sync::atomic::AtomicUsize::new(0);
    tokio::task::block_in_place(|| {
        bin.read_until("the six updates' handler calls", |l| {
            let update = l.contains(r#""kind":"notification""#) && l.contains(r#""type":"update""#);
            update && seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1 == 6
        });
    });
    let ended = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
    let lines = json_lines(ended.stdout.as_bytes());
    let live_batches: Vec<&Value> = lines
        .iter()
        .filter(|l| l["kind"] == "batch" && l["initial"] == false)
        .collect();
    let deltas: usize = live_batches
        .iter()
        .map(|b| b["deltas"].as_array().unwrap().len())
        .sum();
    let updates: Vec<&Value> = lines
        .iter()
        .filter(|l| l["kind"] == "notification" && l["type"] == "update")
        .collect();
    // processDeltas: one OnUpdate per delta, however the pops grouped them.
    assert_eq!((deltas, updates.len()), (6, 6), "{lines:#?}");
    let depths: Vec<u64> = updates
        .iter()
        .map(|n| n["bufferDepth"].as_u64().unwrap())
        .collect();
    let max_queue = live_batches
        .iter()
        .map(|b| b["queueDepth"].as_u64().unwrap())
        .max()
        .unwrap();
    let max_buffer = *depths.iter().max().unwrap();
    assert!(
        max_buffer > max_queue,
        "the buffer grew ({depths:?}), not the queue ({max_queue})"
    );
    assert_eq!(depths.last(), Some(&0), "{depths:?}");
    let waits: Vec<f64> = updates
        .iter()
        .map(|n| n["waitMs"].as_f64().unwrap())
        .collect();
    assert!(waits.iter().any(|&w| w > 0.0), "{waits:?}");
    let seqs: Vec<u64> = updates.iter().map(|n| n["seq"].as_u64().unwrap()).collect();
    let mut sorted = seqs.clone();
    sorted.sort();
    assert_eq!(seqs, sorted, "delivered in pop order");
    // Deltas that arrive within one pop's turn still coalesce (a DeltaFIFO's pop takes a key's
    // every delta), but the handler's time is spent out of the queue's way.
    let stderr = &ended.stderr;
    let table = &stderr[stderr.rfind("┌").expect(stderr)..];
    let max_buffer: u64 = summary_row(table, "max buffer depth")[0].parse().unwrap();
    let max_queue: u64 = summary_row(stderr, "max queue depth")[0].parse().unwrap();
    assert!(max_buffer > max_queue, "{stderr}");
}

/// A live plain informer (`cache.NewInformer`): the handler runs inside the pop, so the pops do
/// not return while it runs; the queue holds what arrives meanwhile, and the notifications are
/// the pops' own (no buffer).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_plain_runs_the_handler_inside_the_pop() {
    let (server, _dir, kubeconfig) = server_with_configmaps(1).await;
    let args = [
        "watch",
        "cm",
        "-o",
        "jsonl",
        "--object",
        "none",
        "--informer",
        "plain",
        "--handler-delay",
        "300ms",
    ];
    let mut bin = Running::spawn(&kubeconfig, &args);
    tokio::task::block_in_place(|| {
        bin.read_until("the sync", |l| l.contains(r#""event":"synced""#));
    });
    for i in 1..=4 {
        server.create("configmaps", cm(&format!("new-{i}"), "v"));
    }
    tokio::task::block_in_place(|| {
        bin.read_until("the last add's pop", |l| {
            l.contains(r#""kind":"batch""#) && l.contains(r#""key":"default/new-4""#)
        });
    });
    let ended = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
    let lines = json_lines(ended.stdout.as_bytes());
    assert!(
        !lines.iter().any(|l| l["kind"] == "notification"),
        "plain shows pops only: {lines:#?}"
    );
    let live: Vec<&Value> = lines
        .iter()
        .filter(|l| l["kind"] == "batch" && l["initial"] == false)
        .collect();
    assert_eq!(live.len(), 4, "{lines:#?}");
    // Each pop returns only once its handler call (300 ms) did: the pops are at least that far
    // apart, though the four adds came at once. (A lower bound: a slow machine only widens it.)
    let seconds = |b: &Value| -> f64 {
        let time = b["time"].as_str().unwrap();
        let clock = time.split_once('T').unwrap().1.trim_end_matches('Z');
        let parts: Vec<f64> = clock.split(':').map(|p| p.parse().unwrap()).collect();
        parts[0] * 3600.0 + parts[1] * 60.0 + parts[2]
    };
    for pair in live.windows(2) {
        let gap = seconds(pair[1]) - seconds(pair[0]);
        assert!(gap >= 0.299, "pops {gap}s apart: {live:#?}");
    }
}

/// A recording whose first list is empty, then one `ADDED` 10ms later, written in `dir`.
fn empty_first_list(dir: &std::path::Path) -> PathBuf {
    let header = r#"{"kind":"header","v":1,"resource":{"group":"","version":"v1","kind":"ConfigMap","plural":"configmaps","namespaced":true},"namespace":"default","startedAt":"2026-01-05T10:00:00Z"}"#;
    let list = r#"{"t":0,"type":"LIST","resourceVersion":"1","items":[]}"#;
    let added = r#"{"t":10,"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"default","resourceVersion":"2"}}}"#;
    let path = dir.join("empty-first-list.jsonl");
    std::fs::write(&path, [header, list, added].join("\n") + "\n").unwrap();
    path
}

/// The handler table of a summary on stderr.
fn handler_table(stderr: &str) -> &str {
    &stderr[stderr
        .rfind("┌")
        .unwrap_or_else(|| panic!("no summary: {stderr}"))..]
}

/// An empty first list syncs the informer in its `Replace` (client-go's DeltaFIFO and RealFIFO
/// set `populated` with nothing to pop), and with it each handler's registration, which gets no
/// call to notice its sync after: it is told at once, whatever the queue. Before, the summary
/// gave the time of the handler's first later call, or `not synced` when the replay ended at the
/// sync.
#[tokio::test]
async fn an_empty_first_list_syncs_every_handler_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = empty_first_list(dir.path());
    for fifo in ["delta", "real", "atomic", "plain"] {
        for until_synced in [false, true] {
            let mut args = vec![
                "replay",
                path.to_str().unwrap(),
                "--fifo",
                fifo,
                "--handler",
                "a",
                "-o",
                "jsonl",
                "--view",
                "both",
            ];
            if until_synced {
                args.push("--until-synced");
            }
            let out = run_offline(&args, None).await;
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
            assert_eq!(
                summary_row(handler_table(&err), "time to HasSynced"),
                ["0µs"],
                "{args:?}: {err}"
            );
            if until_synced {
                continue;
            }
            let lines = json_lines(&out.stdout);
            let synced = lines
                .iter()
                .position(|l| l["event"] == "handler-synced")
                .unwrap_or_else(|| panic!("{args:?}: no handler-synced in {lines:#?}"));
            assert_eq!(lines[synced]["afterMs"], 0.0, "{args:?}");
            assert_eq!(lines[synced]["handler"], "a", "{args:?}");
            let call = lines
                .iter()
                .position(|l| l["kind"] == "notification")
                .unwrap_or_else(|| panic!("{args:?}: no call in {lines:#?}"));
            assert!(synced < call, "{args:?}: {lines:#?}");
        }
    }
}

/// Live, against an empty collection: the handler's thread hears of its sync though no
/// notification ever comes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_an_empty_collection_syncs_the_handler_without_a_call() {
    let (_server, _dir, kubeconfig) = server_with_configmaps(0).await;
    for fifo in ["delta", "atomic"] {
        let args = [
            "watch",
            "cm",
            "-o",
            "jsonl",
            "--fifo",
            fifo,
            "--handler",
            "a",
            "--view",
            "both",
        ];
        let mut bin = Running::spawn(&kubeconfig, &args);
        tokio::task::block_in_place(|| {
            bin.read_until("the handler's sync", |l| {
                l.contains(r#""event":"handler-synced""#)
            });
        });
        let ended = tokio::task::block_in_place(|| bin.interrupt());
        assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
        let synced = summary_row(handler_table(&ended.stderr), "time to HasSynced");
        assert_ne!(synced, ["not synced"], "{}", ended.stderr);
    }
}

/// Issue #26: a column per handler made the summary of 1000 handlers 75 000 characters wide.
/// Beyond four handlers the table is transposed, a row per handler, as wide as one row of
/// figures; up to four it keeps a column per handler.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn beyond_four_handlers_the_summary_has_a_row_per_handler() {
    let names: Vec<String> = (1..=12).map(|i| format!("h{i:02}")).collect();
    let mut args = vec!["--resync", "30s"];
    for name in &names {
        args.extend(["--handler", name.as_str()]);
    }
    let (_, stderr) = replay("slow-handler", &args).await;
    let table = &stderr[stderr.rfind("┌").expect(&stderr)..];
    let header = summary_row(table, "handler");
    assert_eq!(header[..2], ["OnAdd", "OnUpdate"], "{table}");
    let column = |label: &str| header.iter().position(|h| *h == label).unwrap();
    for name in &names {
        let row = summary_row(table, name);
        assert_eq!(row.len(), header.len(), "{table}");
        assert_eq!(row[column("OnAdd")], "4", "{table}");
        assert_eq!(row[column("OnUpdate")], "11", "{table}");
        assert_eq!(row[column("OnUpdate resyncs")], "5", "{table}");
    }
    let widest = table.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest < 200, "{widest} characters wide:\n{table}");

    // Four handlers: a column each.
    let mut args = vec!["--resync", "30s"];
    for name in &names[..4] {
        args.extend(["--handler", name.as_str()]);
    }
    let (_, stderr) = replay("slow-handler", &args).await;
    let table = &stderr[stderr.rfind("┌").expect(&stderr)..];
    assert_eq!(
        summary_row(table, "handler"),
        ["h01", "h02", "h03", "h04"],
        "{table}"
    );
    assert_eq!(summary_row(table, "OnAdd"), ["4", "4", "4", "4"], "{table}");
}
