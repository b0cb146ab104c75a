//! Golden tests: `watch` through a scripted scenario against the fake API server, its output
//! normalised and compared with the files in `tests/golden/`. `UPDATE_GOLDEN=1 cargo test --test
//! watch_scenario` rewrites them; review the diff before committing.
//!
//! The scenario: an initial list (a, b); an add (c) and two updates of a, each popped before the
//! next is made; the deletion of c; a watch that ends, a re-watch
//! answered by 410, a list at the last resourceVersion that is too old as well, and a consistent
//! relist that no longer finds b (deleted meanwhile), which comes out as a tombstone. Each step
//! waits for the output of the previous one, so the batches are always the same. A second, short
//! scenario shows a resync.
//!
//! The main scenario runs through each queue (`--fifo`, docs/queues.md), each with its own golden
//! files: the DeltaFIFO finds b's deletion after listing a; the
//! RealFIFO pops every update on its own and queues b's tombstone before a's `Replaced`; the
//! atomic RealFIFO pops each list as one `ReplacedAll`.
//!
//! Normalised: times, durations and watch timeouts (random). `watch-start` lines are moved to the
//! end: a watch opens while the consumer pops the list's batches, so where its line falls among
//! them races with the consumer. Everything else is in output order.

use crate::support;
use crate::support::paths::summary_row;

use std::sync::OnceLock;

use serde_json::{Value, json};
use support::binary::Running;
use support::fake_apiserver::{FakeApiServer, Fault, Verb};
use support::golden::golden;

/// A ConfigMap with a pinned identity, so that `--object meta` output is reproducible.
fn pinned(name: &str, value: &str) -> Value {
    json!({"metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}"),
                        "creationTimestamp": "2026-01-01T00:00:00Z"},
           "data": {"k": value}})
}

/// Output-specific markers of the lines the scenario waits for.
struct Markers {
    synced: &'static str,
    batch: fn(&str, &str, &str) -> bool,
    watch_closed: &'static str,
    tombstone: &'static str,
    replaced_all: &'static str,
    /// The watch that follows the relist (from resourceVersion 1007).
    last_watch: fn(&str) -> bool,
}

const JSONL: Markers = Markers {
    synced: r#""event":"synced""#,
    batch: |line, key, type_| {
        line.contains(r#""kind":"batch""#)
            && line.contains(&format!(r#""key":"{key}""#))
            && line.contains(&format!(r#""type":"{type_}""#))
    },
    watch_closed: r#""event":"watch-end""#,
    tombstone: r#""tombstone":true"#,
    replaced_all: r#""type":"ReplacedAll""#,
    last_watch: |line| {
        line.contains(r#""event":"watch-start""#) && line.contains(r#""resourceVersion":"1007""#)
    },
};

const TIMELINE: Markers = Markers {
    synced: "── synced:",
    batch: |line, key, type_| line.contains(&format!(" {key} ")) && line.contains(type_),
    watch_closed: "── watch closed:",
    tombstone: "Deleted(tombstone)",
    replaced_all: " ReplacedAll ",
    last_watch: |line| line.contains("watch opened from rv 1007"),
};

/// The queue a scenario runs through (`--fifo`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fifo {
    Delta,
    Real,
    Atomic,
}

impl Fifo {
    fn name(self) -> &'static str {
        match self {
            Fifo::Delta => "delta",
            Fifo::Real => "real",
            Fifo::Atomic => "atomic",
        }
    }

    /// The golden file of `output` (`jsonl`, `timeline`) through this queue.
    fn golden(self, output: &str) -> String {
        match self {
            Fifo::Delta => format!("watch_scenario.{output}.txt"),
            other => format!("watch_scenario.{}.{output}.txt", other.name()),
        }
    }

    /// Whether `line` is the last batch of the relist, after which nothing more comes.
    fn relist_done(self, m: &Markers, line: &str) -> bool {
        match self {
            // Tombstones after the listed objects.
            Fifo::Delta => line.contains(m.tombstone),
            // Tombstones first, then one Replaced per listed object (only a).
            Fifo::Real => (m.batch)(line, "default/a", "Replaced"),
            Fifo::Atomic => line.contains(m.replaced_all),
        }
    }
}

struct Run {
    stdout: String,
    stderr: String,
}

/// The main scenario with `-o output` through `fifo`, on a blocking thread with its own runtime,
/// so that tests on any runtime can share its result.
fn scenario(output: &'static str, markers: &'static Markers, fifo: Fifo) -> Run {
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
            .block_on(scenario_on_server(output, markers, fifo))
    })
    .join()
    .unwrap()
}

async fn scenario_on_server(output: &str, m: &Markers, fifo: Fifo) -> Run {
    let server = FakeApiServer::start().await;
    server.create("configmaps", pinned("a", "1"));
    server.create("configmaps", pinned("b", "1"));
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let args = [
        "watch",
        "cm",
        "-o",
        output,
        "--object",
        "meta",
        "--fifo",
        fifo.name(),
    ];
    let mut bin = Running::spawn(&kubeconfig, &args);
    let step = |bin: &mut Running, what: &str, until: &dyn Fn(&str) -> bool| {
        tokio::task::block_in_place(|| bin.read_until(what, until));
    };

    step(&mut bin, "synced", &|l| l.contains(m.synced));
    // One change at a time, each popped before the next is made: which changes share a pop
    // (coalescing) depends on timing in a live informer, so the recordings show it
    // (tests/recordings/coalescing.jsonl), not this scenario.
    server.create("configmaps", pinned("c", "1"));
    step(&mut bin, "c's addition", &|l| {
        (m.batch)(l, "default/c", "Added")
    });
    server.update("configmaps", pinned("a", "2"));
    step(&mut bin, "a's first update", &|l| {
        (m.batch)(l, "default/a", "Updated")
    });
    server.update("configmaps", pinned("a", "3"));
    step(&mut bin, "a's second update", &|l| {
        (m.batch)(l, "default/a", "Updated")
    });

    server.delete("configmaps", "default", "c");
    step(&mut bin, "c's deletion", &|l| {
        (m.batch)(l, "default/c", "Deleted")
    });

    // The watch ends; the re-watch is answered by 410. Before the Reflector relists (it backs off
    // at least 800 ms first), b is deleted and history compacted: the list at the last
    // resourceVersion fails with 410 too, and the consistent list that follows lacks b.
    server.inject(Fault::status(410).on(Verb::Watch));
    server.close_watches();
    step(&mut bin, "the watch to close", &|l| {
        l.contains(m.watch_closed)
    });
    server.delete("configmaps", "default", "b");
    server.compact();
    step(&mut bin, "the relist's last batch", &|l| {
        fifo.relist_done(m, l)
    });
    // The Reflector watches again after the relist; its line may come before or after the last
    // batch's.
    tokio::task::block_in_place(|| {
        bin.seen_or_read_until("the watch after the relist", m.last_watch)
    });

    let ended = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
    Run {
        stdout: ended.stdout,
        stderr: ended.stderr,
    }
}

fn scenario_jsonl() -> &'static Run {
    static RUN: OnceLock<Run> = OnceLock::new();
    RUN.get_or_init(|| scenario("jsonl", &JSONL, Fifo::Delta))
}

/// Replaces what differs between runs.
fn normalise_json(line: &str) -> Value {
    let mut value: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    let map = value.as_object_mut().unwrap();
    for (field, placeholder) in [
        ("time", "<time>"),
        ("waitMs", "<ms>"),
        ("durationMs", "<ms>"),
        ("afterMs", "<ms>"),
        ("delayMs", "<ms>"),
        ("timeoutSeconds", "<s>"),
    ] {
        if map.contains_key(field) {
            map.insert(field.into(), json!(placeholder));
        }
    }
    value
}

/// The server's resourceVersion in its 410 message (`too old resource version: 1006 (1007)`):
/// whether b's deletion, made while the Reflector re-watches, came before the 410 or after it is a
/// race of the test, not something the tool decides.
fn normalise_too_old(line: &str) -> String {
    const TOO_OLD: &str = "too old resource version: ";
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find(TOO_OLD) {
        let (head, tail) = rest.split_at(at + TOO_OLD.len());
        out.push_str(head);
        let requested_len = tail
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(tail.len());
        let (requested, tail) = tail.split_at(requested_len);
        out.push_str(requested);
        rest = match tail.strip_prefix(" (").and_then(|t| t.split_once(')')) {
            Some((current, after)) if current.chars().all(|c| c.is_ascii_digit()) => {
                out.push_str(" (<rv>)");
                after
            }
            _ => tail,
        };
    }
    out.push_str(rest);
    out
}

fn normalised_jsonl(stdout: &str) -> String {
    let (watch_starts, rest): (Vec<Value>, Vec<Value>) = stdout
        .lines()
        .map(normalise_too_old)
        .map(|line| normalise_json(&line))
        .partition(|l| l["event"] == "watch-start");
    let mut text = String::from("# in output order, without watch-start lines\n");
    for line in rest {
        text.push_str(&serde_json::to_string(&line).unwrap());
        text.push('\n');
    }
    text.push_str("# watch-start lines\n");
    for line in watch_starts {
        text.push_str(&serde_json::to_string(&line).unwrap());
        text.push('\n');
    }
    text
}

/// `350µs`, `1.2ms`, `2.01s`, `1m02s`, `1h05m`, with trailing punctuation.
fn is_duration(token: &str) -> bool {
    let t = token.trim_end_matches([',', ')']);
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || c == '.');
    ["µs", "ms", "s"]
        .iter()
        .any(|unit| t.strip_suffix(unit).is_some_and(digits))
        || t.split_once('m')
            .is_some_and(|(m, s)| digits(m) && s.strip_suffix('s').is_some_and(digits))
        || t.split_once('h')
            .is_some_and(|(h, m)| digits(h) && m.strip_suffix('m').is_some_and(digits))
}

fn normalised_timeline(stdout: &str) -> String {
    let normalise = |line: &str| -> String {
        let (time, rest) = line.split_at(12);
        assert!(
            time.len() == 12 && time.as_bytes()[2] == b':' && time.as_bytes()[8] == b'.',
            "a row starts with the local time: {line}"
        );
        let rest: Vec<String> = rest
            .split(' ')
            .map(|token| {
                if is_duration(token) {
                    let suffix: String = token.chars().filter(|c| [',', ')'].contains(c)).collect();
                    format!("<dur>{suffix}")
                } else {
                    token.to_owned()
                }
            })
            .collect();
        // Column widths follow the widest wait seen, which varies: keep one gap between columns.
        let mut row = format!("HH:MM:SS.mmm{}", rest.join(" "));
        while row.contains("   ") {
            row = row.replace("   ", "  ");
        }
        row
    };
    let (opened, rest): (Vec<String>, Vec<String>) = stdout
        .lines()
        .map(normalise_too_old)
        .map(|line| normalise(&line))
        .partition(|l| l.contains("── watch opened"));
    let mut text = String::from("# in output order, without \"watch opened\" rows\n");
    for line in rest
        .iter()
        .chain([&"# \"watch opened\" rows".to_owned()])
        .chain(&opened)
    {
        text.push_str(line);
        text.push('\n');
    }
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_jsonl_stream_of_the_scenario_matches_the_golden_file() {
    let run = tokio::task::spawn_blocking(scenario_jsonl).await.unwrap();
    golden("watch_scenario.jsonl.txt", &normalised_jsonl(&run.stdout));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_timeline_of_the_scenario_matches_the_golden_file() {
    let run = tokio::task::spawn_blocking(|| scenario("timeline", &TIMELINE, Fifo::Delta))
        .await
        .unwrap();
    assert!(!run.stdout.contains('\x1b'), "NO_COLOR: no control codes");
    golden(
        "watch_scenario.timeline.txt",
        &normalised_timeline(&run.stdout),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_prints_the_summary_of_the_scenario() {
    let run = tokio::task::spawn_blocking(scenario_jsonl).await.unwrap();
    let summary = &run.stderr;
    for (label, value) in [
        ("Added", "1"),
        ("Updated", "2"),
        ("Deleted", "2"),
        ("Replaced", "3"),
        ("Sync", "0"),
        ("of which tombstones", "1"),
        ("batches", "8"),
        ("deltas per batch (mean / max)", "1.00 / 1"),
        ("relists", "1"),
        ("watch restarts", "2"),
        ("bookmarks", "0"),
    ] {
        assert_eq!(summary_row(summary, label), [value], "{label}\n{summary}");
    }
    assert!(
        summary_row(summary, "time to HasSynced")[0].ends_with("(2 batches)"),
        "{summary}"
    );
    assert!(!summary.contains("error"), "{summary}");
}

fn scenario_real_jsonl() -> &'static Run {
    static RUN: OnceLock<Run> = OnceLock::new();
    RUN.get_or_init(|| scenario("jsonl", &JSONL, Fifo::Real))
}

fn scenario_atomic_jsonl() -> &'static Run {
    static RUN: OnceLock<Run> = OnceLock::new();
    RUN.get_or_init(|| scenario("jsonl", &JSONL, Fifo::Atomic))
}

/// Each batch as `key: Type Type…` (`*` for no key), the tombstones marked, in output order.
fn batch_summaries(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["kind"] == "batch")
        .map(|b| {
            let types: Vec<String> = b["deltas"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| {
                    let mut t = d["type"].as_str().unwrap().to_owned();
                    if d["tombstone"] == true {
                        t.push_str("(tombstone)");
                    }
                    if let Some(n) = d["objects"].as_u64() {
                        t.push_str(&format!("[{n}]"));
                    }
                    t
                })
                .collect();
            format!("{}: {}", b["key"].as_str().unwrap_or("*"), types.join(" "))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_a_real_fifo_every_delta_is_its_own_batch_and_tombstones_come_first() {
    let run = tokio::task::spawn_blocking(scenario_real_jsonl)
        .await
        .unwrap();
    golden(&Fifo::Real.golden("jsonl"), &normalised_jsonl(&run.stdout));
    // The same server changes as the DeltaFIFO scenario: a's updates are not merged although
    // the handler was busy, and the relist's tombstone for b precedes its Replaced a.
    assert_eq!(
        batch_summaries(&run.stdout),
        [
            "default/a: Replaced",
            "default/b: Replaced",
            "default/c: Added",
            "default/a: Updated",
            "default/a: Updated",
            "default/c: Deleted",
            "default/b: Deleted(tombstone)",
            "default/a: Replaced",
        ]
    );
    let summary = &run.stderr;
    for (label, value) in [
        ("Updated", "2"),
        ("Deleted", "2"),
        ("Replaced", "3"),
        ("of which tombstones", "1"),
        ("batches", "8"),
        ("deltas per batch (mean / max)", "1.00 / 1"),
        ("coalesced deltas", "0"),
    ] {
        assert_eq!(summary_row(summary, label), [value], "{label}\n{summary}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_the_atomic_queue_each_list_is_one_replaced_all() {
    let run = tokio::task::spawn_blocking(scenario_atomic_jsonl)
        .await
        .unwrap();
    golden(
        &Fifo::Atomic.golden("jsonl"),
        &normalised_jsonl(&run.stdout),
    );
    // No tombstone is queued: the consumer works b's deletion out from its cache.
    assert_eq!(
        batch_summaries(&run.stdout),
        [
            "*: ReplacedAll[2]",
            "default/c: Added",
            "default/a: Updated",
            "default/a: Updated",
            "default/c: Deleted",
            "*: ReplacedAll[1]",
        ]
    );
    let summary = &run.stderr;
    for (label, value) in [
        ("ReplacedAll", "2"),
        ("Replaced", "0"),
        ("of which tombstones", "0"),
        ("batches", "6"),
    ] {
        assert_eq!(summary_row(summary, label), [value], "{label}\n{summary}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_timelines_through_the_real_and_atomic_queues_match_their_golden_files() {
    for fifo in [Fifo::Real, Fifo::Atomic] {
        let run = tokio::task::spawn_blocking(move || scenario("timeline", &TIMELINE, fifo))
            .await
            .unwrap();
        golden(&fifo.golden("timeline"), &normalised_timeline(&run.stdout));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resync_row_comes_before_its_sync_batches() {
    let server = FakeApiServer::start().await;
    server.create("configmaps", pinned("a", "1"));
    server.create("configmaps", pinned("b", "1"));
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    // The resync ticker starts after the first list; the two initial batches are popped long
    // before it first fires.
    let out = support::binary::run(
        kubeconfig,
        &[
            "watch",
            "cm",
            "-o",
            "jsonl",
            "--resync",
            "2s",
            "--max-batches",
            "4",
            "--object",
            "none",
        ],
    )
    .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        support::binary::stderr(&out)
    );
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    golden("watch_resync.jsonl.txt", &normalised_jsonl(&stdout));
    let summary = support::binary::stderr(&out);
    assert_eq!(summary_row(&summary, "Sync"), ["2"], "{summary}");
}

/// Schema v1 of `-o jsonl` (docs/jsonl.md) as serde types that refuse unknown fields: a line
/// that parses has exactly the documented fields, with the documented types.
#[allow(
    dead_code,
    reason = "parsing is the check; not every field is read back"
)]
mod schema {
    use serde::Deserialize;
    use serde_json::Value;

    /// A line without the fields every line has (`kind`, `time`, `resource`), which
    /// `check_schema` checks and removes first.
    #[derive(Debug)]
    pub enum Line {
        Batch(Batch),
        Item(Item),
        Reflector(Event),
    }

    /// One key of a whole-list delta, after its batch.
    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    pub struct Item {
        pub seq: u64,
        pub initial: bool,
        pub whole_list: DeltaType,
        #[serde(rename = "type")]
        pub type_: DeltaType,
        pub change: Change,
        pub key: String,
        pub tombstone: bool,
        pub resource_version: Option<String>,
        #[serde(default, deserialize_with = "present")]
        pub object: Option<Value>,
    }

    #[derive(Debug, Deserialize, PartialEq, Eq)]
    #[serde(rename_all = "kebab-case")]
    pub enum Change {
        Added,
        Updated,
        Unchanged,
        Deleted,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    pub struct Batch {
        pub seq: u64,
        /// `null` for a batch of several keys (`--batch-pop`) or a whole-list delta.
        pub key: Option<String>,
        pub initial: bool,
        pub queue_depth: u64,
        pub wait_ms: f64,
        pub deltas: Vec<Delta>,
    }

    #[derive(Debug, Deserialize, PartialEq, Eq)]
    pub enum DeltaType {
        Added,
        Updated,
        Deleted,
        Replaced,
        Sync,
        ReplacedAll,
        SyncAll,
        Bookmark,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    pub struct Delta {
        #[serde(rename = "type")]
        pub type_: DeltaType,
        /// `null` for a whole-list delta.
        pub key: Option<String>,
        pub tombstone: bool,
        pub resource_version: Option<String>,
        /// Whole-list deltas only.
        #[serde(default)]
        pub objects: Option<u64>,
        /// Absent with `--object none` and for whole-list deltas; `null` for a tombstone without
        /// a last known state.
        #[serde(default, deserialize_with = "present")]
        pub object: Option<Value>,
    }

    /// `Some(Value::Null)` for a field that is present but null, `None` for an absent one.
    fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
        Value::deserialize(d).map(Some)
    }

    #[derive(Debug, Deserialize)]
    #[serde(
        tag = "event",
        rename_all = "kebab-case",
        rename_all_fields = "camelCase",
        deny_unknown_fields
    )]
    pub enum Event {
        InformerStart {
            queue: InformerQueue,
            batch_pop: u32,
            profile: Profile,
        },
        ListStart {
            resource_version: String,
        },
        ListPage {
            page: u32,
            items: u64,
            remaining: Option<i64>,
        },
        ListDone {
            items: u64,
            pages: u32,
            resource_version: String,
            duration_ms: f64,
        },
        WatchStart {
            resource_version: String,
            timeout_seconds: u32,
            send_initial_events: bool,
        },
        WatchEnd {
            reason: WatchEndReason,
            message: String,
            duration_ms: f64,
            events: u64,
        },
        Bookmark {
            resource_version: String,
            initial_events_end: bool,
        },
        Relist {
            cause: RelistCause,
            message: String,
        },
        ListRetry {
            cause: ListRetryCause,
            message: String,
        },
        Backoff {
            delay_ms: f64,
            phase: String,
            error: String,
        },
        Resync {
            keys: u64,
        },
        Synced {
            batches: u64,
            after_ms: f64,
        },
        WatchListFallback {
            reason: String,
        },
        Drift {
            resource_version: String,
            listed: u64,
            consistent: bool,
            missing: Vec<String>,
            extra: Vec<String>,
            stale: Vec<String>,
        },
        DriftSkipped {
            reason: String,
        },
        Error {
            message: String,
        },
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    pub struct Profile {
        pub client_go: String,
        pub chosen: ProfileChoice,
        pub settings: ProfileSettings,
    }

    #[derive(Debug, Deserialize, PartialEq, Eq)]
    #[serde(rename_all = "kebab-case")]
    pub enum ProfileChoice {
        Default,
        Latest,
        Flag,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    pub struct ProfileSettings {
        pub fifo: Setting<InformerQueue>,
        pub batch_pop: Setting<u32>,
        pub legacy_sync: Setting<bool>,
        pub watch_list: Setting<bool>,
        pub unlock_while_processing: Setting<bool>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Setting<T> {
        pub value: T,
        pub from: SettingOrigin,
    }

    #[derive(Debug, Deserialize, PartialEq, Eq)]
    #[serde(rename_all = "kebab-case")]
    pub enum SettingOrigin {
        Profile,
        Flag,
        Recording,
    }

    #[derive(Debug, Deserialize, PartialEq, Eq)]
    #[serde(rename_all = "kebab-case")]
    pub enum InformerQueue {
        Delta,
        Real,
        Atomic,
    }

    #[derive(Debug, Deserialize, PartialEq, Eq)]
    #[serde(rename_all = "kebab-case")]
    pub enum WatchEndReason {
        Closed,
        Broken,
        ErrorEvent,
        VeryShort,
    }

    #[derive(Debug, Deserialize, PartialEq, Eq)]
    #[serde(rename_all = "kebab-case")]
    pub enum RelistCause {
        WatchExpired,
        VeryShortWatch,
        WatchStartFailed,
        WatchFailed,
        WatchListInterrupted,
    }

    #[derive(Debug, Deserialize, PartialEq, Eq)]
    #[serde(rename_all = "kebab-case")]
    pub enum ListRetryCause {
        ListExpired,
        ListTooLarge,
        ContinueExpired,
    }
}

/// Parses every line with the schema types and checks what types cannot: timestamps, and that
/// objects follow `--object`.
fn check_schema(stdout: &str, object_present: bool) -> Vec<schema::Line> {
    stdout
        .lines()
        .map(|line| {
            let fail = |what: &str| -> ! { panic!("not schema v1 ({what}): {line}") };
            let mut fields: serde_json::Map<String, Value> =
                serde_json::from_str(line).unwrap_or_else(|e| fail(&e.to_string()));
            let mut string = |name: &str| match fields.remove(name) {
                Some(Value::String(s)) => s,
                _ => fail(&format!("no string {name:?}")),
            };
            let (kind, time, resource) = (string("kind"), string("time"), string("resource"));
            // RFC 3339, UTC, microseconds.
            assert!(time.parse::<jiff::Timestamp>().is_ok(), "{time}");
            assert_eq!(time.len(), "2026-11-22T14:03:07.123456Z".len(), "{time}");
            assert!(time.ends_with('Z'), "{time}");
            assert_eq!(resource, "configmaps");
            let rest = Value::Object(fields);
            match kind.as_str() {
                "batch" => {
                    let batch: schema::Batch =
                        serde_json::from_value(rest).unwrap_or_else(|e| fail(&e.to_string()));
                    assert!(batch.seq >= 1 && batch.wait_ms >= 0.0 && !batch.deltas.is_empty());
                    for delta in &batch.deltas {
                        let whole_list = matches!(
                            delta.type_,
                            schema::DeltaType::ReplacedAll
                                | schema::DeltaType::SyncAll
                                | schema::DeltaType::Bookmark
                        );
                        // Whole-list deltas count their objects instead of carrying them.
                        assert_eq!(delta.objects.is_some(), whole_list, "{line}");
                        assert_eq!(delta.key.is_none(), whole_list, "{line}");
                        assert!(!(whole_list && delta.object.is_some()), "{line}");
                        if !whole_list {
                            assert_eq!(delta.object.is_some(), object_present, "{line}");
                        }
                        if let Some(key) = &batch.key {
                            assert_eq!(delta.key.as_ref(), Some(key), "{line}");
                        }
                    }
                    schema::Line::Batch(batch)
                }
                "item" => {
                    let item: schema::Item =
                        serde_json::from_value(rest).unwrap_or_else(|e| fail(&e.to_string()));
                    assert!(matches!(
                        item.whole_list,
                        schema::DeltaType::ReplacedAll | schema::DeltaType::SyncAll
                    ));
                    assert_eq!(item.object.is_some(), object_present, "{line}");
                    assert_eq!(
                        item.tombstone,
                        item.change == schema::Change::Deleted,
                        "{line}"
                    );
                    schema::Line::Item(item)
                }
                "reflector" => schema::Line::Reflector(
                    serde_json::from_value(rest).unwrap_or_else(|e| fail(&e.to_string())),
                ),
                other => fail(&format!("unknown kind {other:?}")),
            }
        })
        .collect()
}

fn event_names(lines: &[schema::Line]) -> std::collections::BTreeSet<String> {
    lines
        .iter()
        .filter_map(|l| match l {
            schema::Line::Reflector(event) => {
                let text = format!("{event:?}");
                Some(text.split([' ', '{']).next().unwrap().to_owned())
            }
            schema::Line::Batch(_) | schema::Line::Item(_) => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_jsonl_line_follows_schema_v1() {
    // The checker itself refuses what v1 does not have.
    let unknown = json!({"event": "resync", "keys": 1, "extra": true});
    assert!(serde_json::from_value::<schema::Event>(unknown).is_err());
    let missing = json!({"event": "resync"});
    assert!(serde_json::from_value::<schema::Event>(missing).is_err());

    // The scenario: lists, batches with coalesced deltas and a tombstone, watch ends, relists,
    // a backoff, the sync.
    let run = tokio::task::spawn_blocking(scenario_jsonl).await.unwrap();
    let lines = check_schema(&run.stdout, true);
    let tombstones: Vec<&schema::Delta> = lines
        .iter()
        .filter_map(|l| match l {
            schema::Line::Batch(b) => Some(&b.deltas),
            _ => None,
        })
        .flatten()
        .filter(|d| d.tombstone)
        .collect();
    assert_eq!(tombstones.len(), 1);
    assert_eq!(tombstones[0].type_, schema::DeltaType::Deleted);

    // The rest of the events: a streaming list the 1.28 server refuses, bookmarks, resyncs and
    // consistency checks; through the atomic queue, for its whole-list deltas.
    let server = FakeApiServer::start().await;
    server.create("configmaps", pinned("a", "1"));
    server.set_bookmark_interval(std::time::Duration::from_millis(200));
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let args = [
        "watch",
        "cm",
        "-o",
        "jsonl",
        "--object",
        "none",
        "--watch-list",
        "--resync",
        "300ms",
        "--verify-every",
        "300ms",
        "--fifo",
        "atomic",
    ];
    let mut bin = Running::spawn(&kubeconfig, &args);
    tokio::task::block_in_place(|| {
        for event in ["watch-list-fallback", "bookmark", "resync", "drift"] {
            bin.read_until(event, |l| l.contains(&format!(r#""event":"{event}""#)));
        }
        for type_ in ["SyncAll", "Bookmark"] {
            bin.read_until(type_, |l| l.contains(&format!(r#""type":"{type_}""#)));
        }
    });
    let ended = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
    let more = check_schema(&ended.stdout, false);
    let whole_list: std::collections::BTreeSet<String> = more
        .iter()
        .filter_map(|l| match l {
            schema::Line::Batch(b) => Some(&b.deltas),
            _ => None,
        })
        .flatten()
        .map(|d| format!("{:?}", d.type_))
        .collect();
    assert_eq!(
        whole_list.iter().map(String::as_str).collect::<Vec<_>>(),
        ["Bookmark", "ReplacedAll", "SyncAll"]
    );

    // And the error a Reflector stops with.
    server.inject(Fault::status(403).on(Verb::List));
    let out = support::binary::run(kubeconfig, &["watch", "cm", "-o", "jsonl"]).await;
    assert_eq!(out.status.code(), Some(3));
    let failed = check_schema(&String::from_utf8(out.stdout).unwrap(), false);

    let mut seen = event_names(&lines);
    seen.extend(event_names(&more));
    seen.extend(event_names(&failed));
    let expected = [
        "Backoff",
        "Bookmark",
        "Drift",
        "Error",
        "InformerStart",
        "ListDone",
        "ListPage",
        "ListStart",
        "Relist",
        "Resync",
        "Synced",
        "WatchEnd",
        "WatchListFallback",
        "WatchStart",
    ];
    // `drift-skipped` needs a cache that keeps changing during a check; its fields are checked
    // by the schema type all the same.
    assert_eq!(
        seen.iter().map(String::as_str).collect::<Vec<_>>(),
        expected
    );
}
