//! The other stores a Reflector feeds, through the binary (issue #19): every bundled recording
//! replayed through `--fifo plain` and `--store undelta` and compared with
//! `tests/golden/replay_{plain,undelta}_<name>.*.txt` (`UPDATE_GOLDEN=1` rewrites them); what
//! `--store undelta` writes (rows, JSON lines, the summary) and the flags it refuses; the property
//! that its last push is what the server holds; and a watch deletion through each store.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::support::binary::{Running, json_lines, offline_command, run_offline, stderr};
use crate::support::fake_apiserver::FakeApiServer;
use crate::support::golden::golden;
use crate::support::paths::hand_written;
use proptest::prelude::*;
use serde_json::{Value, json};

fn bundled() -> Vec<(String, PathBuf)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/recordings");
    let mut all: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "jsonl"))
        .map(|path| {
            let name = path.file_stem().unwrap().to_str().unwrap().to_owned();
            (name, path)
        })
        .collect();
    all.sort();
    all
}

/// Replays `path` with `args`; returns stdout and stderr, after checking the exit code is 0.
async fn replay(path: &Path, args: &[&str]) -> (String, String) {
    let mut all = vec!["replay", path.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = run_offline(&all, None).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{}: {err}", path.display());
    (String::from_utf8(out.stdout).unwrap(), err)
}

/// The cells of the summary row labelled `label`.
fn summary_row(summary: &str, label: &str) -> Vec<String> {
    let line = summary
        .lines()
        .find(|l| l.contains(&format!(" {label} ")))
        .unwrap_or_else(|| panic!("no {label:?} row in\n{summary}"));
    line.split('┆')
        .map(|c| {
            c.trim_matches(|c: char| c == '│' || c.is_whitespace())
                .to_owned()
        })
        .collect()
}

fn pushes(lines: &[Value]) -> Vec<&Value> {
    lines.iter().filter(|l| l["kind"] == "push").collect()
}

/// `key@rv` of every object a push line carries (with `--object meta` or `full`).
fn pushed(push: &Value) -> Vec<String> {
    push["objects"]
        .as_array()
        .unwrap_or_else(|| panic!("no objects in {push}"))
        .iter()
        .map(|o| {
            let meta = &o["metadata"];
            format!(
                "{}/{}@{}",
                meta["namespace"].as_str().unwrap_or_default(),
                meta["name"].as_str().unwrap(),
                meta["resourceVersion"].as_str().unwrap()
            )
        })
        .collect()
}

#[tokio::test]
async fn every_bundled_recording_replays_through_each_other_store_to_its_goldens() {
    let all = bundled();
    assert!(all.len() >= 5, "{all:?}");
    for (name, path) in &all {
        let (plain, _) = replay(path, &["--fifo", "plain", "-q"]).await;
        golden(&format!("replay_plain_{name}.timeline.txt"), &plain);
        let (undelta, _) = replay(path, &["--store", "undelta", "-q"]).await;
        assert!(
            undelta.starts_with(&format!("{}  ── store: UndeltaStore", &undelta[..12])),
            "{name}: {undelta}"
        );
        golden(&format!("replay_undelta_{name}.timeline.txt"), &undelta);
    }
    for name in ["resync", "expired-watch"] {
        let path = &all.iter().find(|(n, _)| n == name).unwrap().1;
        let args = ["-q", "-o", "jsonl", "--object", "meta"];
        let (undelta, _) = replay(path, &[&["--store", "undelta"][..], &args].concat()).await;
        golden(&format!("replay_undelta_{name}.jsonl.txt"), &undelta);
        let (plain, _) = replay(path, &[&["--fifo", "plain"][..], &args].concat()).await;
        golden(&format!("replay_plain_{name}.jsonl.txt"), &plain);
    }
}

/// `coalescing.jsonl`: a list of a@1 b@1, then ADDED c@2, MODIFIED c@3, MODIFIED a@4 (t=10),
/// MODIFIED c@5 (t=20), DELETED b@6 (t=30).
#[tokio::test]
async fn each_push_is_a_row_with_its_size_its_changes_and_the_call_that_made_it() {
    let (timeline, summary) = replay(&hand_written("coalescing"), &["--store", "undelta"]).await;
    let rows: Vec<String> = timeline
        .lines()
        .filter(|l| l.contains(" push "))
        .map(|l| l[14..].split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(
        rows,
        [
            "#1 push 2 objects +2 −0 ~0 replace rv 1 initial",
            "#2 push 3 objects +1 −0 ~0 add default/c rv 2",
            "#3 push 3 objects +0 −0 ~1 update default/c rv 3",
            "#4 push 3 objects +0 −0 ~1 update default/a rv 4",
            "#5 push 3 objects +0 −0 ~1 update default/c rv 5",
            "#6 push 2 objects +0 −1 ~0 delete default/b rv 6",
        ],
        "{timeline}"
    );
    assert!(
        timeline.contains("── synced: HasSynced after 1 push"),
        "{timeline}"
    );
    assert_eq!(summary_row(&summary, "pushes"), ["pushes", "6"]);
    assert_eq!(
        summary_row(&summary, "objects per push (mean / max)")[1],
        "2.67 / 3"
    );
    assert_eq!(summary_row(&summary, "objects pushed")[1], "16");
    assert_eq!(
        summary_row(&summary, "keys added / removed / changed")[1],
        "3 / 1 / 3"
    );
    assert!(!summary.contains("queue"), "{summary}");

    let (wide, _) = replay(
        &hand_written("coalescing"),
        &["--store", "undelta", "-q", "-o", "wide"],
    )
    .await;
    let last = wide.lines().last().unwrap();
    assert!(last.ends_with("−default/b"), "{wide}");
}

#[tokio::test]
async fn a_push_line_carries_the_whole_list_and_the_keys_it_changed() {
    let (out, _) = replay(
        &hand_written("tombstone-order"),
        &[
            "--store", "undelta", "-q", "-o", "jsonl", "--object", "meta",
        ],
    )
    .await;
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        lines[0],
        json!({"kind": "reflector", "time": "2026-01-05T10:00:00.000000Z",
               "resource": "configmaps", "event": "informer-start", "store": "undelta"})
    );
    let synced = lines.iter().find(|l| l["event"] == "synced").unwrap();
    assert_eq!(synced["pushes"], 1, "{synced}");
    let all = pushes(&lines);
    let summary: Vec<Value> = all
        .iter()
        .map(|p| {
            assert_eq!(p["size"], p["objects"].as_array().unwrap().len(), "{p}");
            json!([
                p["seq"],
                p["call"],
                p["key"],
                p["resourceVersion"],
                p["size"],
                p["added"],
                p["removed"],
                p["changed"],
                p["initial"]
            ])
        })
        .collect();
    assert_eq!(
        summary,
        [
            json!([
                1,
                "replace",
                null,
                "1",
                3,
                ["default/a", "default/b", "default/c"],
                [],
                [],
                true
            ]),
            json!([
                2,
                "update",
                "default/a",
                "2",
                3,
                [],
                [],
                ["default/a"],
                false
            ]),
            json!([3, "add", "default/d", "3", 4, ["default/d"], [], [], false]),
            json!([
                4,
                "delete",
                "default/b",
                "4",
                3,
                [],
                ["default/b"],
                [],
                false
            ]),
            json!([
                5,
                "update",
                "default/a",
                "5",
                3,
                [],
                [],
                ["default/a"],
                false
            ]),
            // The relist: one push, with everything it found.
            json!([
                6,
                "replace",
                null,
                "7",
                2,
                ["default/e"],
                ["default/c", "default/d"],
                [],
                false
            ]),
        ]
    );
    assert_eq!(pushed(all[5]), ["default/a@5", "default/e@6"]);

    let (none, _) = replay(
        &hand_written("tombstone-order"),
        &[
            "--store", "undelta", "-q", "-o", "jsonl", "--object", "none",
        ],
    )
    .await;
    let lines = json_lines(none.as_bytes());
    assert!(pushes(&lines).iter().all(|p| p.get("objects").is_none()));
}

/// A recording of one Secret, written to a temporary file.
fn secret_recording(dir: &Path) -> PathBuf {
    let header = json!({"kind": "header", "v": 1, "resource": {"group": "", "version": "v1",
        "kind": "Secret", "plural": "secrets", "namespaced": true}, "namespace": "default",
        "startedAt": "2026-01-05T10:00:00Z"});
    let list = json!({"t": 0, "type": "LIST", "resourceVersion": "1", "items": [{"metadata": {
        "name": "db", "namespace": "default", "resourceVersion": "1"},
        "data": {"password": "aHVudGVyMg=="}}]});
    let path = dir.join("secret.jsonl");
    std::fs::write(&path, format!("{header}\n{list}\n")).unwrap();
    path
}

#[tokio::test]
async fn pushed_secrets_are_redacted_as_batches_are() {
    let dir = tempfile::tempdir().unwrap();
    let path = secret_recording(dir.path());
    for output in ["jsonl", "json", "yaml"] {
        let (out, _) = replay(&path, &["--store", "undelta", "-q", "-o", output]).await;
        assert!(!out.contains("aHVudGVyMg=="), "{output}: {out}");
        assert!(out.contains("<redacted>"), "{output}: {out}");
        let (shown, _) = replay(
            &path,
            &[
                "--store",
                "undelta",
                "-q",
                "-o",
                output,
                "--show-secret-data",
            ],
        )
        .await;
        assert!(shown.contains("aHVudGVyMg=="), "{output}: {shown}");
    }
    let (json, _) = replay(&path, &["--store", "undelta", "-q", "-o", "json"]).await;
    let docs: Vec<Value> = serde_json::Deserializer::from_str(&json)
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(docs.len(), 1, "one document per push: {json}");
    assert_eq!(docs[0]["kind"], "push");
    assert_eq!(docs[0]["size"], 1);
}

#[tokio::test]
async fn the_limits_count_pushes() {
    let path = hand_written("coalescing");
    let (out, _) = replay(&path, &["--store", "undelta", "-q", "--max-batches", "2"]).await;
    assert_eq!(out.lines().filter(|l| l.contains(" push ")).count(), 2);
    assert!(out.lines().last().unwrap().contains("#2  push"), "{out}");

    let (out, _) = replay(&path, &["--store", "undelta", "-q", "--until-synced"]).await;
    let last = out.lines().last().unwrap();
    assert!(last.contains("synced: HasSynced after 1 push"), "{out}");

    let (out, _) = replay(&path, &["--store", "undelta", "-q", "--since-now"]).await;
    assert!(!out.contains("initial"), "{out}");
    assert!(out.contains("#2  push"), "{out}");
}

#[tokio::test]
async fn flags_without_meaning_for_an_undelta_store_are_usage_errors() {
    let path = hand_written("coalescing");
    let path = path.to_str().unwrap();
    let cases: [(&[&str], &str); 8] = [
        (&["replay", path, "--fifo", "real"], "--fifo real"),
        (&["replay", path, "--batch-pop", "2"], "--batch-pop 2"),
        (&["replay", path, "--legacy-sync"], "--legacy-sync"),
        (
            &["replay", path, "--index", "namespace"],
            "--index namespace",
        ),
        (
            &["replay", path, "--handler-delay", "1s"],
            "--handler-delay",
        ),
        (&["replay", path, "--query", "namespace=default"], "--query"),
        // Refused before the cluster is contacted (there is none).
        (&["watch", "pods", "--resync", "30s"], "--resync"),
        (&["record", "pods", "--fifo", "atomic"], "--fifo atomic"),
    ];
    for (args, flag) in cases {
        let args = [args, &["--store", "undelta"]].concat();
        let out = run_offline(&args, None).await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with(&format!("kubectl-deltas: error: --store undelta: {flag}")),
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    // `index` answers from an Indexer: it has no such flag.
    let out = run_offline(
        &[
            "index",
            "--replay",
            path,
            "--by",
            "namespace",
            "--store",
            "undelta",
        ],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
}

/// `coalescing.jsonl` ends with `DELETED b@6`, b having been popped long before: the DeltaFIFO
/// delivers a `Deleted` batch, the plain FIFO nothing at all (b was not waiting, so nothing is
/// even dropped), and the UndeltaStore's next push lacks b.
#[tokio::test]
async fn a_watch_deletion_reaches_a_delta_fifo_and_an_undelta_store_never_a_fifo() {
    let path = hand_written("coalescing");
    let (delta, _) = replay(&path, &["--fifo", "delta", "-q"]).await;
    let last = delta.lines().last().unwrap();
    assert!(
        last.contains("default/b") && last.contains("Deleted"),
        "{delta}"
    );

    let (plain, summary) = replay(&path, &["--fifo", "plain"]).await;
    let b_rows: Vec<&str> = plain.lines().filter(|l| l.contains("default/b")).collect();
    assert_eq!(b_rows.len(), 1, "only b's initial pop: {plain}");
    assert!(b_rows[0].contains("initial"), "{plain}");
    assert!(!summary.contains("dropped"), "{summary}");

    let (undelta, _) = replay(
        &path,
        &[
            "--store", "undelta", "-q", "-o", "jsonl", "--object", "meta",
        ],
    )
    .await;
    let lines = json_lines(undelta.as_bytes());
    let last = *pushes(&lines).last().unwrap();
    assert_eq!(last["removed"], json!(["default/b"]));
    assert_eq!(pushed(last), ["default/a@4", "default/c@5"]);
}

/// A live watch against the fake API server: the list's push, a push per watch event (the
/// deletion's without the object), the push summary on Ctrl-C.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_watch_pushes_after_every_event() {
    let server = FakeApiServer::start().await;
    let data = |v: &str| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "a", "namespace": "default"}, "data": {"v": v}})
    };
    server.create("configmaps", data("1"));
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let args = [
        "watch",
        "configmaps",
        "--store",
        "undelta",
        "-o",
        "jsonl",
        "--object",
        "meta",
    ];
    let mut running = tokio::task::block_in_place(|| Running::spawn(&kubeconfig, &args));
    tokio::task::block_in_place(|| {
        running.read_until("the watch", |l| l.contains(r#""event":"watch-start""#));
    });
    server.update("configmaps", data("2"));
    let mut b = data("1");
    b["metadata"]["name"] = json!("b");
    server.create("configmaps", b);
    server.delete("configmaps", "default", "a");
    tokio::task::block_in_place(|| {
        running.read_until("the deletion's push", |l| l.contains(r#""call":"delete""#));
    });
    let ended = tokio::task::block_in_place(|| running.interrupt());
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
    let lines = json_lines(ended.stdout.as_bytes());
    let summary: Vec<Value> = pushes(&lines)
        .iter()
        .map(|p| json!([p["call"], p["size"], p["added"], p["removed"], p["changed"]]))
        .collect();
    assert_eq!(
        summary,
        [
            json!(["replace", 1, ["default/a"], [], []]),
            json!(["update", 1, [], [], ["default/a"]]),
            json!(["add", 2, ["default/b"], [], []]),
            json!(["delete", 1, [], ["default/a"], []]),
        ]
    );
    assert_eq!(summary_row(&ended.stderr, "pushes"), ["pushes", "4"]);
}

/// `record --store undelta` shows the pushes on stderr while it records, and the recording
/// replays to the same pushes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_shows_the_pushes_that_its_recording_replays_to() {
    let server = FakeApiServer::start().await;
    let named = |name: &str| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"}, "data": {"v": "1"}})
    };
    server.create("configmaps", named("a"));
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let path = dir.path().join("rec.jsonl");
    let args = [
        "record",
        "cm",
        "--store",
        "undelta",
        "-f",
        path.to_str().unwrap(),
    ];
    let mut running = tokio::task::block_in_place(|| Running::spawn(&kubeconfig, &args));
    tokio::task::block_in_place(|| {
        running.read_stderr_until("the watch", |l| l.contains("watch opened"));
    });
    server.create("configmaps", named("b"));
    tokio::task::block_in_place(|| {
        running.read_stderr_until("b's push", |l| l.contains("add default/b"));
    });
    let ended = tokio::task::block_in_place(|| running.interrupt());
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
    let rows = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.contains("  push  "))
            .map(|l| l[14..].split_whitespace().collect::<Vec<_>>().join(" "))
            .map(|l| l.split(" rv ").next().unwrap().to_owned())
            .collect()
    };
    let recorded = rows(&ended.stderr);
    assert_eq!(
        recorded,
        [
            "#1 push 1 object +1 −0 ~0 replace",
            "#2 push 2 objects +1 −0 ~0 add default/b",
        ],
        "{}",
        ended.stderr
    );
    let (replayed, _) = replay(&path, &["--store", "undelta", "-q"]).await;
    assert_eq!(rows(&replayed), recorded, "{replayed}");
}

/// What happens on the server between two moments of a recording.
#[derive(Debug, Clone)]
pub(crate) enum Server {
    /// Creates or modifies an object; the watch reports it.
    Write(u8),
    /// Deletes an object (if it exists); the watch reports it.
    Remove(u8),
    /// Objects written (`true`) or deleted while the watch is down; it ends with 410 and the
    /// Reflector relists.
    Gap(Vec<(u8, bool)>),
}

pub(crate) fn server_op() -> impl Strategy<Value = Server> {
    prop_oneof![
        4 => (0u8..6).prop_map(Server::Write),
        2 => (0u8..6).prop_map(Server::Remove),
        1 => proptest::collection::vec((0u8..6, any::<bool>()), 0..6).prop_map(Server::Gap),
    ]
}

fn cm(name: &str, rv: u64) -> Value {
    json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": name,
        "namespace": "default", "resourceVersion": rv.to_string()}, "data": {"rv": rv.to_string()}})
}

/// A recording of `ops` after an initial list of `initial` objects, and the server's content at
/// its end, as `key@rv`.
pub(crate) fn recording_of(initial: u8, ops: &[Server]) -> (String, Vec<String>) {
    let mut server: std::collections::BTreeMap<String, u64> = Default::default();
    let mut rv = 1;
    for n in 0..initial {
        server.insert(format!("o{n}"), rv);
    }
    let list = |server: &std::collections::BTreeMap<String, u64>, t: u64, rv: u64| {
        let items: Vec<Value> = server.iter().map(|(name, rv)| cm(name, *rv)).collect();
        json!({"t": t, "type": "LIST", "resourceVersion": rv.to_string(), "items": items})
    };
    let mut lines = vec![
        json!({"kind": "header", "v": 1, "resource": {"group": "", "version": "v1",
            "kind": "ConfigMap", "plural": "configmaps", "namespaced": true},
            "namespace": "default", "startedAt": "2026-01-05T10:00:00Z"}),
        list(&server, 0, rv),
    ];
    for (i, op) in ops.iter().enumerate() {
        let t = 10 * (i as u64 + 1);
        rv += 1;
        match op {
            Server::Write(n) => {
                let name = format!("o{n}");
                let type_ = if server.insert(name.clone(), rv).is_some() {
                    "MODIFIED"
                } else {
                    "ADDED"
                };
                lines.push(json!({"t": t, "type": type_, "object": cm(&name, rv)}));
            }
            Server::Remove(n) => {
                let name = format!("o{n}");
                if server.remove(&name).is_some() {
                    lines.push(json!({"t": t, "type": "DELETED", "object": cm(&name, rv)}));
                }
            }
            Server::Gap(changes) => {
                for (n, keep) in changes {
                    let name = format!("o{n}");
                    if *keep {
                        server.insert(name, rv);
                    } else {
                        server.remove(&name);
                    }
                }
                lines.push(json!({"t": t, "type": "ERROR", "object": {"kind": "Status",
                    "apiVersion": "v1", "metadata": {}, "status": "Failure", "reason": "Expired",
                    "message": format!("too old resource version: {} ({rv})", rv - 1),
                    "code": 410}}));
                lines.push(list(&server, t, rv));
            }
        }
    }
    let text = lines.iter().map(|l| format!("{l}\n")).collect();
    let state = server
        .iter()
        .map(|(name, rv)| format!("default/{name}@{rv}"))
        .collect();
    (text, state)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Whatever the server does and whatever the watch misses, the last push `replay --store
    /// undelta` writes is what the server holds at the end of the recording; and every push says
    /// how many objects it carries.
    #[test]
    fn the_last_push_is_the_servers_state(
        initial in 0u8..4,
        ops in proptest::collection::vec(server_op(), 0..25),
    ) {
        let (recording, state) = recording_of(initial, &ops);
        let mut child = offline_command(&[
            "replay", "-", "--store", "undelta", "-q", "-o", "jsonl", "--object", "meta",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || {
            std::io::Write::write_all(&mut stdin, recording.as_bytes())
        });
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap().unwrap();
        prop_assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let lines = json_lines(&out.stdout);
        let all = pushes(&lines);
        for push in &all {
            prop_assert_eq!(&push["size"], &json!(push["objects"].as_array().unwrap().len()));
        }
        let last = all.last().expect("the first list is pushed");
        prop_assert_eq!(pushed(last), state);
    }
}
