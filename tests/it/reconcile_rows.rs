//! How a controller's reconciles and a session's end read in the timeline (issue #42), through
//! the binary: a reconcile shown where it starts (`⇒ NAME reconcile`, what it read) and where it
//! returns (`⇐ NAME returned`), a low priority's reason, how long ago a folded wait's latest
//! change came, `watch -h` naming `--controller`, the legend's tombstone, handler rows that keep
//! their column past pop #9, and the `── ended …` rows of a session that left work undone.

use std::path::Path;

use serde_json::Value;

use crate::support::binary::{Running, json_lines, offline_command, output, run_offline, stderr};
use crate::support::configmaps::server_with_configmaps;
use crate::support::paths::{bundled, hand_written, path_str, summary_row};

/// Replays `path` with `args`; checks the exit code is 0; returns stdout and stderr.
async fn replay(path: &Path, args: &[&str]) -> (String, String) {
    let mut all = vec!["replay", path_str(path)];
    all.extend_from_slice(args);
    let out = run_offline(&all, None).await;
    assert_eq!(out.status.code(), Some(0), "{all:?}: {}", stderr(&out));
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The rows of a timeline with their words joined by one space (the columns' padding aside).
fn squeezed(timeline: &str) -> Vec<String> {
    timeline
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// The index of the one row containing `what`.
fn position(rows: &[String], what: &str) -> usize {
    let found: Vec<usize> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.contains(what))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(found.len(), 1, "{what:?} in:\n{}", rows.join("\n"));
    found[0]
}

/// `controller.jsonl`'s burst: `demo/app-config` updated at 3.0, 3.1 and 3.2 s while the worker
/// is busy, taken at 3.53 s (one reconcile reading rv 1007), updated again at 3.7 s during it.
/// The reconcile is a row where it starts, before the pop of rv 1008 that came while it ran, and
/// a row where it returns; the start says how long ago the newest of the folded changes came.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconcile_shows_where_it_starts_and_where_it_returns() {
    let (stdout, _) = replay(&bundled("controller"), &["-q"]).await;
    let rows = squeezed(&stdout);
    let started = position(
        &rows,
        "09:00:03.530 ⇒ web reconcile demo/app-config waited 530.0ms folded 3 adds, latest 330.0ms ago rv 1007",
    );
    let pop = position(&rows, "#8 demo/app-config Updated rv 1008");
    let returned = position(
        &rows,
        "09:00:04.030 ⇐ web returned demo/app-config took 500.0ms ok",
    );
    assert!(started < pop && pop < returned, "{}", rows.join("\n"));
    // Every row in time order: the time column never goes back.
    let times: Vec<&str> = rows
        .iter()
        .filter_map(|r| r.split(' ').next())
        .filter(|t| t.starts_with("09:"))
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{stdout}");
    // A failed attempt returns with its retry; the retry starts as attempt 2.
    position(
        &rows,
        "09:00:01.000 ⇐ web returned demo/flaky took 500.0ms error → retry in 5.0ms",
    );
    position(&rows, "09:00:01.500 ⇒ web reconcile demo/flaky attempt 2");
    // jsonl keeps one record per reconcile, with the latest add's time.
    let (jsonl, _) = replay(&bundled("controller"), &["-q", "-o", "jsonl"]).await;
    let folded: Vec<Value> = json_lines(jsonl.as_bytes())
        .into_iter()
        .filter(|l| l["kind"] == "reconcile" && l["adds"] == 3)
        .collect();
    assert_eq!(folded.len(), 1, "{jsonl}");
    assert_eq!(folded[0]["latestAddAt"], "2026-11-24T09:00:03.200000Z");
    assert_eq!(folded[0]["queuedAt"], "2026-11-24T09:00:03.000000Z");
}

/// controller-runtime's priority queue: the initial list's adds and a relist's unchanged updates
/// wait at `LowPriority` (`pkg/handler/enqueue.go` `addToQueueCreate`, `addToQueueUpdate`); the
/// start row says which, and so does the record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_low_priority_says_why() {
    let path = hand_written("controller/priority-relist");
    let spec = "web,reconcile=1s,queue=priority";
    let (stdout, _) = replay(&path, &["--controller", spec, "-q"]).await;
    let rows = squeezed(&stdout);
    position(
        &rows,
        "09:00:00.000 ⇒ web reconcile default/a priority -100 (initial list) waited 0µs rv 1",
    );
    position(
        &rows,
        "09:00:01.000 ⇒ web reconcile default/c priority 0 waited",
    );
    position(
        &rows,
        "09:00:02.000 ⇒ web reconcile default/b priority -100 (unchanged resourceVersion)",
    );
    let (jsonl, _) = replay(&path, &["--controller", spec, "-q", "-o", "jsonl"]).await;
    let reasons: Vec<Value> = json_lines(jsonl.as_bytes())
        .into_iter()
        .filter(|l| l["kind"] == "reconcile")
        .map(|l| l.get("priorityReason").cloned().unwrap_or(Value::Null))
        .collect();
    assert_eq!(
        reasons,
        [
            Value::from("initial list"),
            Value::Null,
            Value::from("unchanged resourceVersion"),
            Value::from("unchanged resourceVersion"),
        ],
        "{jsonl}"
    );
}

/// `watch -h` (the one-screen help) names `--controller`, the flag most readers come for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_short_help_names_controller_and_the_legend_tells_a_tombstone() {
    let out = output(offline_command(&["watch", "-h"])).await;
    assert_eq!(out.status.code(), Some(0));
    let short = String::from_utf8(out.stdout).unwrap();
    assert!(short.contains("--controller <CONTROLLER>"), "{short}");
    let out = output(offline_command(&["watch", "--help"])).await;
    let long = String::from_utf8(out.stdout).unwrap();
    let legend = long.split("How to read a row:").nth(1).unwrap();
    for needed in [
        "cache.DeletedFinalStateUnknown{Key, Obj}",
        "obj = t.Obj",
        "drops the deletion silently",
        "⇒ NAME reconcile  at the time a worker took the key",
        "⇐ NAME returned   at the time it ended",
        "── ended",
    ] {
        assert!(legend.contains(needed), "{needed:?} in:\n{legend}");
    }
}

/// `resync.jsonl` with a handler pops past #9: the handler rows under #9 and under #10 keep one
/// column (they used to move right with the pop numbers' width).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handler_rows_keep_their_column_past_pop_nine() {
    let (stdout, _) = replay(
        &bundled("resync"),
        &["--handler", "a", "-q", "--client-go", "1.32"],
    )
    .await;
    let columns: Vec<usize> = stdout
        .lines()
        .filter(|l| {
            l.get(12..)
                .is_some_and(|rest| rest.trim_start().starts_with('→'))
        })
        .filter_map(|l| l.find('→').map(|byte| l[..byte].chars().count()))
        .collect();
    assert!(
        stdout.contains("  #10  "),
        "the recording pops past #9: {stdout}"
    );
    assert!(columns.len() > 10, "{stdout}");
    assert!(columns.windows(2).all(|w| w[0] == w[1]), "{stdout}");
}

/// The lines of `docs/recordings/expired-watch.jsonl` up to its watch's 410 (a session recorded
/// until the Reflector had decided to relist), in `dir`.
fn cut_at_the_410(dir: &Path) -> std::path::PathBuf {
    let text = std::fs::read_to_string(bundled("expired-watch")).unwrap();
    let mut kept = Vec::new();
    for line in text.lines() {
        kept.push(line);
        if line.contains("\"code\":410") {
            break;
        }
    }
    let path = dir.join("cut.jsonl");
    std::fs::write(&path, kept.join("\n") + "\n").unwrap();
    path
}

/// A recording that ends after its watch's 410, its relist's list started and never answered: the
/// session ends with a `──` row saying the deletions of the gap are not yet seen, an `ended` record in jsonl, and the same
/// sentence under the summary.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_ending_before_its_relist_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = cut_at_the_410(dir.path());
    let (stdout, summary) = replay(&path, &[]).await;
    let last = stdout.lines().last().unwrap();
    assert!(
        last.ends_with(
            "── ended during the relist after 410: deletions during the gap are not yet seen"
        ),
        "{stdout}"
    );
    assert!(
        summary.ends_with(
            "\nEnded during the relist after 410: deletions during the gap are not yet seen.\n"
        ),
        "{summary}"
    );
    let (jsonl, _) = replay(&path, &["-o", "jsonl", "-q"]).await;
    let lines = json_lines(jsonl.as_bytes());
    let ended = lines.last().unwrap();
    assert_eq!(ended["kind"], "ended", "{jsonl}");
    assert_eq!(ended["resource"], "pods");
    assert_eq!(
        ended["reflector"],
        "during the relist after 410: deletions during the gap are not yet seen"
    );
    // The page's caption ends with it.
    let (page, _) = replay(&path, &["-o", "html", "-q"]).await;
    assert!(
        page.contains(
            "id=\"story\">ended during the relist after 410: deletions during the gap are not yet seen.</p>"
        ),
        "{}",
        page.lines().find(|l| l.contains("id=\"story\"")).unwrap_or("no caption")
    );
    // The whole recording relisted: nothing is left undone.
    let (whole, _) = replay(&bundled("expired-watch"), &["-q"]).await;
    assert!(!whole.contains("── ended"), "{whole}");
}

/// A live watch stopped while its controller's worker runs a one-hour reconcile and two keys
/// wait: the end says so, and the summary's `keys still waiting at exit` counts the running one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_stopped_mid_reconcile_counts_the_running_key() {
    let (_server, _dir, kubeconfig) = server_with_configmaps(3).await;
    let args = ["watch", "cm", "--controller", "web,reconcile=1h"];
    let mut bin = Running::spawn(&kubeconfig, &args);
    let seen = std::cell::Cell::new((false, 0));
    tokio::task::block_in_place(|| {
        bin.read_until("a reconcile's start and the three handler calls", |l| {
            let (started, calls) = seen.get();
            seen.set((
                started || l.contains("⇒ web"),
                calls + usize::from(l.contains("→ web")),
            ));
            seen.get() == (true, 3)
        });
    });
    let ended = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
    let last = ended.stdout.lines().last().unwrap();
    assert!(
        last.ends_with(
            "── ended with controller web's work unfinished: 1 reconcile still running, 2 keys waiting"
        ),
        "{}",
        ended.stdout
    );
    assert_eq!(
        summary_row(&ended.stderr, "keys still waiting at exit"),
        ["3 (1 running)"],
        "{}",
        ended.stderr
    );
    assert!(
        ended
            .stderr
            .contains("Ended with controller web's work unfinished: 1 reconcile still running, 2 keys waiting.\n"),
        "{}",
        ended.stderr
    );
}

/// README.md's "Handlers and controllers" shows rows of `replay docs/recordings/controller.jsonl`
/// as they are.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readmes_reconcile_rows_are_the_recordings() {
    let readme = include_str!("../../README.md");
    let (_, section) = readme.split_once("## Handlers and controllers").unwrap();
    // Up to the next heading: a subsection replays another recording.
    let section = section.split("\n#").next().unwrap();
    let rows: Vec<&str> = section
        .lines()
        .filter(|l| l.starts_with("09:00:"))
        .collect();
    assert!(rows.len() >= 5, "{section}");
    assert!(rows.iter().any(|r| r.contains("⇒ web  reconcile")));
    assert!(rows.iter().any(|r| r.contains("⇐ web  returned")));
    let (stdout, _) = replay(&bundled("controller"), &["-q"]).await;
    for row in rows {
        assert!(
            stdout.lines().any(|l| l.trim_end() == row),
            "not a row of `replay docs/recordings/controller.jsonl`: {row:?}"
        );
    }
}

/// A live watch stopped while its Reflector backs off before a relist (the server went away: the
/// watch ended at once, which client-go takes for a very short watch and relists after a backoff
/// of at least 800 ms): a deletion made meanwhile was never delivered, not even as a tombstone,
/// and the session's last row says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_stopped_in_its_backoff_before_a_relist_says_deletions_are_not_yet_seen() {
    let (server, _dir, kubeconfig) = server_with_configmaps(2).await;
    let mut bin = Running::spawn(&kubeconfig, &["watch", "cm"]);
    // Gone once the watch is open: a watch that cannot be opened is retried from its
    // resourceVersion, without a relist (and the end says only `during a … backoff after a
    // failed watch`).
    tokio::task::block_in_place(|| bin.read_until("the watch", |l| l.contains("── watch opened")));
    server.refuse_connections(crate::support::binary::PATIENCE);
    tokio::task::block_in_place(|| bin.read_until("the backoff", |l| l.contains("── backoff")));
    server.delete("configmaps", "default", "cm-0");
    let ended = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
    let last = ended.stdout.lines().last().unwrap();
    assert!(
        last.contains("── ended during a ")
            && last.contains(" backoff before a relist (the watch was very short)")
            && last.ends_with(": deletions during the gap are not yet seen"),
        "{}",
        ended.stdout
    );
    assert!(!ended.stdout.contains("tombstone"), "{}", ended.stdout);
    assert!(
        ended.stderr.contains("\nEnded during a "),
        "the summary says it too: {}",
        ended.stderr
    );
}
