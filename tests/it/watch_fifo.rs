//! `watch --fifo real|atomic` and `--batch-pop` through the binary against the fake API server:
//! what client-go ≥ 1.33 informers pop, as a user sees it. The scripted scenario through each
//! queue, with golden files, is in `watch_scenario.rs`.

use crate::support;
use crate::support::configmaps::{cm, server_with_configmaps};
use crate::support::paths::summary_row;

use std::collections::BTreeSet;

use serde_json::Value;
use support::binary::{Running, json_lines, run, stderr};

/// Rows with column padding collapsed to one space.
fn squeezed(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_atomic_queue_shows_one_replaced_all_row_and_the_bookmarks_as_deltas() {
    let (server, _dir, kubeconfig) = server_with_configmaps(3).await;
    server.set_bookmark_interval(std::time::Duration::from_millis(200));
    let mut bin = Running::spawn(&kubeconfig, &["watch", "cm", "--fifo", "atomic"]);
    tokio::task::block_in_place(|| {
        bin.read_until("a Bookmark row", |l| l.contains(" Bookmark "));
    });
    server.update("configmaps", cm("cm-1", "w"));
    tokio::task::block_in_place(|| {
        bin.read_until("cm-1's update", |l| l.contains(" default/cm-1 "));
    });
    let ended = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);

    let rows: Vec<String> = ended.stdout.lines().map(squeezed).collect();
    assert!(
        rows[0].ends_with("; queue: RealFIFO, atomic (AtomicFIFO), one delta per pop"),
        "{rows:#?}"
    );
    // The whole initial list is one pop.
    let first = rows.iter().find(|r| r.contains(" #1 ")).unwrap();
    assert!(first.contains(" #1 * ReplacedAll rv "), "{first}");
    assert!(
        first.ends_with(" initial 3 objects listed: 3 added"),
        "{first}"
    );
    assert!(
        rows.iter()
            .any(|r| r.contains("── synced: HasSynced after 1 batch,")),
        "{rows:#?}"
    );
    let bookmarks: Vec<&String> = rows.iter().filter(|r| r.contains(" Bookmark ")).collect();
    for row in &bookmarks {
        assert!(row.contains(" * Bookmark rv "), "{row}");
    }
    let update = rows.iter().find(|r| r.contains(" default/cm-1 ")).unwrap();
    assert!(update.contains(" Updated "), "{update}");
    assert!(update.ends_with(" data.k v→w"), "{update}");

    let summary = &ended.stderr;
    assert_eq!(summary_row(summary, "ReplacedAll"), ["1"], "{summary}");
    assert_eq!(summary_row(summary, "Replaced"), ["0"], "{summary}");
    assert_eq!(
        summary_row(summary, "Bookmark"),
        [bookmarks.len().to_string().as_str()],
        "{summary}"
    );
    assert!(!summary.contains("SyncAll"), "{summary}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_pop_takes_up_to_n_consecutive_deltas_of_distinct_keys() {
    let (server, _dir, kubeconfig) = server_with_configmaps(5).await;
    let args = [
        "watch",
        "cm",
        "-o",
        "jsonl",
        "--object",
        "none",
        "--fifo",
        "real",
        "--batch-pop",
        "3",
        "--handler-delay",
        "300ms",
    ];
    let mut bin = Running::spawn(&kubeconfig, &args);
    tokio::task::block_in_place(|| {
        bin.read_until("the sync", |l| l.contains(r#""event":"synced""#));
    });
    // While the handler sleeps, these pile up; whatever the pops take, the order stays.
    server.create("configmaps", cm("x", "1"));
    server.update("configmaps", cm("cm-0", "2"));
    server.update("configmaps", cm("cm-0", "3"));
    server.update("configmaps", cm("cm-1", "2"));
    server.delete("configmaps", "default", "x");
    tokio::task::block_in_place(|| {
        bin.read_until("x's deletion", |l| {
            l.contains(r#""key":"default/x""#) && l.contains(r#""type":"Deleted""#)
        });
    });
    let ended = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);

    let lines = json_lines(ended.stdout.as_bytes());
    assert_eq!(lines[0]["event"], "informer-start");
    assert_eq!(lines[0]["queue"], "real");
    assert_eq!(lines[0]["batchPop"], 3);
    let batches: Vec<&Value> = lines.iter().filter(|l| l["kind"] == "batch").collect();
    let mut deltas: Vec<(String, String)> = Vec::new();
    for batch in &batches {
        let batch_deltas = batch["deltas"].as_array().unwrap();
        assert!((1..=3).contains(&batch_deltas.len()), "{batch}");
        let keys: Vec<&str> = batch_deltas
            .iter()
            .map(|d| d["key"].as_str().unwrap())
            .collect();
        let distinct: BTreeSet<&str> = keys.iter().copied().collect();
        assert_eq!(
            distinct.len(),
            keys.len(),
            "a key twice in one pop: {batch}"
        );
        // The batch's own key only when it has one delta.
        match keys.as_slice() {
            [only] => assert_eq!(batch["key"], *only, "{batch}"),
            _ => assert_eq!(batch["key"], Value::Null, "{batch}"),
        }
        for (key, delta) in keys.iter().zip(batch_deltas) {
            deltas.push((key.to_string(), delta["type"].as_str().unwrap().to_owned()));
        }
    }
    // The initial list: five Replaced, popped three then two (a batch never crosses its end).
    let sizes: Vec<usize> = batches
        .iter()
        .filter(|b| b["initial"] == true)
        .map(|b| b["deltas"].as_array().unwrap().len())
        .collect();
    assert_eq!(sizes, [3, 2]);
    let live: Vec<(&str, &str)> = deltas[5..]
        .iter()
        .map(|(k, t)| (k.as_str(), t.as_str()))
        .collect();
    // Every watch event, in order: nothing merged, nothing dropped.
    assert_eq!(
        live,
        [
            ("default/x", "Added"),
            ("default/cm-0", "Updated"),
            ("default/cm-0", "Updated"),
            ("default/cm-1", "Updated"),
            ("default/x", "Deleted"),
        ]
    );
    assert_eq!(
        summary_row(&ended.stderr, "coalesced deltas"),
        ["0"],
        "{}",
        ended.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeline_shows_a_row_per_delta_of_a_batch_under_its_pop_number() {
    let (_server, _dir, kubeconfig) = server_with_configmaps(5).await;
    let out = run(
        kubeconfig,
        &[
            "watch",
            "cm",
            "--fifo",
            "real",
            "--batch-pop",
            "3",
            "--until-synced",
            "-q",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    let batch_rows: Vec<String> = text
        .lines()
        .map(squeezed)
        .filter(|r| r.contains(" Replaced "))
        .map(|r| {
            // Without the time and the wait.
            let cells: Vec<&str> = r.split(' ').collect();
            cells[1..4].join(" ")
        })
        .collect();
    assert_eq!(
        batch_rows,
        [
            "#1 default/cm-0 Replaced",
            "#1 default/cm-1 Replaced",
            "#1 default/cm-2 Replaced",
            "#2 default/cm-3 Replaced",
            "#2 default/cm-4 Replaced",
        ],
        "{text}"
    );
    assert!(
        text.lines()
            .next()
            .unwrap()
            .ends_with("; queue: RealFIFO (InOrderInformers), up to 3 deltas per pop"),
        "{text}"
    );
    assert!(
        text.contains("── synced: HasSynced after 2 batches,"),
        "{text}"
    );
}
