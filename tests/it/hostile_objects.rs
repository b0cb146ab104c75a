//! Objects that anyone allowed to create one in a watched namespace can make awkward: nested
//! deeper than serde_json's default limit (as a custom resource with preserved unknown fields
//! may be), impossible to decode at all, or named with terminal control sequences. Each must be
//! shown, or named with what is wrong with it, through every command, and never drive the
//! terminal.

use crate::support;
use crate::support::paths::path_str;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use support::binary::{Running, run, run_offline, stderr};
use support::fake_apiserver::{FakeApiServer, Fault, ResourceDef, Verb};

async fn server() -> (FakeApiServer, tempfile::TempDir, PathBuf) {
    let server = FakeApiServer::start().await;
    server.register(ResourceDef::new(
        "example.com",
        "v1",
        "Widget",
        "widgets",
        true,
    ));
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    (server, dir, kubeconfig)
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

/// A value nested `levels` deep: `{"a":{"a":…"leaf"…}}`.
fn nested(levels: usize) -> Value {
    let mut value = json!("leaf");
    for _ in 0..levels {
        value = json!({ "a": value });
    }
    value
}

/// A widget whose spec is 200 levels deep, past serde_json's default limit of 128.
fn deep_widget(name: &str) -> Value {
    json!({"metadata": {"name": name, "namespace": "default"}, "spec": nested(200)})
}

/// The deep spec as compact JSON, as every JSON output carries it.
fn deep_spec() -> String {
    format!(r#""spec":{}"#, serde_json::to_string(&nested(200)).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deeply_nested_custom_resource_is_watched_indexed_recorded_and_replayed() {
    let (server, dir, kubeconfig) = server().await;
    server.create("widgets.example.com", deep_widget("listed"));

    // Listed, then watched.
    let mut bin = Running::spawn(
        &kubeconfig,
        &["watch", "widgets", "-o", "jsonl", "--max-batches", "2"],
    );
    tokio::task::block_in_place(|| bin.read_until("the sync", |l| l.contains(r#""synced""#)));
    server.create("widgets.example.com", deep_widget("watched"));
    let ended = tokio::task::block_in_place(|| bin.wait());
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
    let batches: Vec<&str> = ended
        .stdout
        .lines()
        .filter(|l| l.contains(r#""kind":"batch""#))
        .collect();
    assert_eq!(batches.len(), 2, "{}", ended.stdout);
    for (batch, name) in batches.iter().zip(["listed", "watched"]) {
        assert!(
            batch.contains(&format!(r#""key":"default/{name}""#)),
            "{batch}"
        );
        assert!(batch.contains(&deep_spec()), "{batch}");
    }
    assert!(!ended.stdout.contains("error"), "{}", ended.stdout);

    let index = run(
        kubeconfig.clone(),
        &["index", "widgets", "--by", "namespace"],
    )
    .await;
    assert_eq!(index.status.code(), Some(0), "{}", stderr(&index));
    assert!(
        text(&index.stdout).contains("default"),
        "{}",
        text(&index.stdout)
    );

    // Recorded (a list, then a watch event) and replayed.
    let path = dir.path().join("deep.jsonl");
    let mut bin = Running::spawn(&kubeconfig, &["record", "widgets", "-f", path_str(&path)]);
    tokio::task::block_in_place(|| bin.read_stderr_until("the sync", |l| l.contains("── synced:")));
    server.create("widgets.example.com", deep_widget("recorded"));
    tokio::task::block_in_place(|| {
        bin.read_stderr_until("the new widget", |l| l.contains("default/recorded"))
    });
    let recorded = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(recorded.status.code(), Some(0), "{}", recorded.stderr);
    let replayed = run_offline(&["replay", path_str(&path), "-q", "-o", "jsonl"], None).await;
    assert_eq!(
        replayed.status.code(),
        Some(0),
        "{}",
        text(&replayed.stderr)
    );
    let out = text(&replayed.stdout);
    for name in ["listed", "watched", "recorded"] {
        let batch = out
            .lines()
            .find(|l| l.contains(&format!(r#""key":"default/{name}""#)))
            .unwrap_or_else(|| panic!("no batch of {name}: {out}"));
        assert!(batch.contains(&deep_spec()), "{batch}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undecodable_object_is_named_with_what_is_wrong_and_recorded_as_received() {
    let (server, dir, kubeconfig) = server().await;
    let path = dir.path().join("bad.jsonl");
    let mut bin = Running::spawn(&kubeconfig, &["record", "widgets", "-f", path_str(&path)]);
    tokio::task::block_in_place(|| bin.read_stderr_until("the sync", |l| l.contains("── synced:")));
    // A label value that is not a string: no ObjectMeta reads it.
    server.create(
        "widgets.example.com",
        json!({"metadata": {"name": "bad", "namespace": "default", "labels": {"n": 1}}}),
    );
    // As client-go's watch decoder says it: an ERROR event, here naming the object.
    let expected = r#"watch closed: ended with an error event: 500 InternalError: Internal error occurred: unable to decode an event from the watch stream: ADDED "default/bad": in metadata"#;
    let closed = tokio::task::block_in_place(|| {
        bin.read_stderr_until("the watch's end", |l| l.contains("watch closed"))
    });
    assert!(
        closed.contains(expected) && closed.contains("expected a string"),
        "{closed}"
    );
    let recorded = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(recorded.status.code(), Some(0), "{}", recorded.stderr);

    // What the Reflector received is in the recording, and the replay meets it as live.
    let recording = std::fs::read_to_string(&path).unwrap();
    assert!(
        recording.contains(r#""code":500"#) && recording.contains(r#"ADDED \"default/bad\""#),
        "{recording}"
    );
    let replayed = run_offline(&["replay", path_str(&path), "-q"], None).await;
    assert_eq!(
        replayed.status.code(),
        Some(0),
        "{}",
        text(&replayed.stderr)
    );
    assert!(
        text(&replayed.stdout).contains(expected),
        "{}",
        text(&replayed.stdout)
    );
}

/// A recording of widgets whose second line holds an object nested `levels` deep.
fn deep_recording(dir: &Path, levels: usize) -> PathBuf {
    let header = r#"{"kind":"header","v":1,"resource":{"group":"example.com","version":"v1","kind":"Widget","plural":"widgets","namespaced":true},"namespace":"default","startedAt":"2026-01-05T10:00:00Z"}"#;
    // Written as text: a tree this deep would not even drop on a test thread's stack.
    let spec = format!("{}1{}", "[".repeat(levels), "]".repeat(levels));
    let list = format!(
        r#"{{"t":0,"type":"LIST","resourceVersion":"1","items":[{{"metadata":{{"name":"deep","namespace":"default","resourceVersion":"1"}},"spec":{spec}}}]}}"#
    );
    let path = dir.join("deep.jsonl");
    std::fs::write(&path, format!("{header}\n{list}\n")).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_nested_past_the_api_servers_limit_is_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    // As deep as the API server accepts (10000 levels, the object included): replayed.
    let path = deep_recording(dir.path(), 9_999);
    let out = run_offline(&["replay", path_str(&path), "-q", "-o", "jsonl"], None).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains(r#""key":"default/deep""#));

    let path = deep_recording(dir.path(), 100_000);
    for args in [
        vec!["replay", path_str(&path), "-q"],
        vec!["index", "--replay", path_str(&path), "--by", "namespace"],
    ] {
        let out = run_offline(&args, None).await;
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.starts_with("kubectl-deltas: error: ")
                && err.contains("deep.jsonl:2:")
                && err.contains("spec is nested deeper than 10000 levels"),
            "{args:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// A name that would retitle the window, clear the screen and forge a row if printed raw.
const EVIL: &str = "evil\u{1b}]0;pwned\u{7}\u{1b}[2J\r\n14:00:00.000  #9  default/forged";

/// Whether `text` holds a control character other than the ends of its lines.
fn has_controls(text: &str) -> bool {
    text.chars().any(|c| c.is_control() && c != '\n')
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_characters_from_the_cluster_never_reach_the_terminal() {
    let (server, dir, kubeconfig) = server().await;
    // RBAC names are path segments: the API server lets control characters through.
    server.register(ResourceDef::new(
        "rbac.authorization.k8s.io",
        "v1",
        "Role",
        "roles",
        true,
    ));
    server.create(
        "roles.rbac.authorization.k8s.io",
        json!({"metadata": {"name": EVIL, "namespace": "default"}}),
    );
    // Owner references are free strings.
    server.create(
        "configmaps",
        json!({"metadata": {"name": "owned", "namespace": "default", "ownerReferences": [
            {"apiVersion": "v1", "kind": EVIL, "name": EVIL, "uid": EVIL, "controller": true}]},
            "data": {"k": EVIL}}),
    );

    for output in ["timeline", "wide", "jsonl", "json", "yaml"] {
        let out = run(
            kubeconfig.clone(),
            &["watch", "roles,cm", "-o", output, "--until-synced"],
        )
        .await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let (stdout, stderr) = (text(&out.stdout), stderr(&out));
        assert!(!has_controls(&stdout), "-o {output}:\n{stdout}");
        // The summary table, on stderr.
        assert!(!has_controls(&stderr), "-o {output}:\n{stderr}");
        if output == "timeline" || output == "wide" {
            assert!(
                stdout.contains(r"default/evil\u{1b}]0;pwned\u{7}"),
                "{stdout}"
            );
            assert!(!stdout.contains("\n14:00:00.000  #9"), "{stdout}");
        }
        if output == "wide" {
            assert!(
                stdout.contains(r"evil\u{1b}]0;pwned\u{7}\u{1b}[2J\r\n"),
                "{stdout}"
            );
        }
    }

    // The same rows recorded, replayed; then updated, with the changed value in the summary.
    let path = dir.path().join("evil.jsonl");
    let mut bin = Running::spawn(&kubeconfig, &["record", "cm", "-f", path_str(&path)]);
    tokio::task::block_in_place(|| bin.read_stderr_until("the sync", |l| l.contains("── synced:")));
    server.update(
        "configmaps",
        json!({"metadata": {"name": "owned", "namespace": "default"}, "data": {"k": "\u{1b}[31m"}}),
    );
    tokio::task::block_in_place(|| bin.read_stderr_until("the update", |l| l.contains("Updated")));
    let recorded = tokio::task::block_in_place(|| bin.interrupt());
    assert!(!has_controls(&recorded.stderr), "{}", recorded.stderr);
    let replayed = run_offline(&["replay", path_str(&path), "-o", "wide"], None).await;
    assert_eq!(
        replayed.status.code(),
        Some(0),
        "{}",
        text(&replayed.stderr)
    );
    let rows = text(&replayed.stdout);
    assert!(!has_controls(&rows), "{rows}");
    assert!(rows.contains(r"data.k evil\u{1b}]0;pwned"), "{rows}");

    // Names and keys for scripts: one line per object, whatever its name.
    let index = ["index", "roles", "--by", "namespace", "--value", "default"];
    for last in [&["-o", "name"][..], &["--keys-only"]] {
        let args = [&index[..], last].concat();
        let out = run(kubeconfig.clone(), &args).await;
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        let stdout = text(&out.stdout);
        assert_eq!(stdout.lines().count(), 1, "{args:?}: {stdout}");
        assert!(!has_controls(&stdout), "{args:?}: {stdout}");
    }

    // Error messages quote what the server says.
    server.inject(
        Fault::custom_status(
            403,
            "Forbidden",
            &format!("roles {EVIL:?} is forbidden: {EVIL}"),
        )
        .on(Verb::List),
    );
    let out = run(kubeconfig.clone(), &["watch", "roles"]).await;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(!has_controls(&err), "{err}");
    // The error, then the note on what a client-go informer would do.
    assert_eq!(err.lines().count(), 2, "{err}");
    assert!(
        err.lines()
            .nth(1)
            .unwrap()
            .starts_with("kubectl-deltas: note: "),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_with_an_undecodable_object_names_it_and_retries_until_it_is_gone() {
    let (server, _dir, kubeconfig) = server().await;
    server.create(
        "widgets.example.com",
        json!({"metadata": {"name": "good", "namespace": "default"}}),
    );
    // A label value that is not a string: no ObjectMeta reads it, and the whole list fails.
    server.create(
        "widgets.example.com",
        json!({"metadata": {"name": "bad", "namespace": "default", "labels": {"n": 1}}}),
    );
    let mut bin = Running::spawn(&kubeconfig, &["watch", "widgets", "-o", "jsonl"]);
    let backoff = tokio::task::block_in_place(|| {
        bin.read_until("the failed list's backoff", |l| {
            l.contains(r#""event":"backoff""#)
        })
    });
    // Which object, and what is wrong with it (items come in key order: `bad` first).
    assert!(
        backoff.contains(
            r#""error":"the server's response could not be read: undecodable response: item 1 of the list, \"default/bad\": in metadata"#
        ) && backoff.contains("expected a string")
            && backoff.contains(r#""phase":"list""#),
        "{backoff}"
    );
    // As client-go, the list is retried after its backoff; once the object is gone, it syncs.
    server.delete("widgets.example.com", "default", "bad");
    let synced = tokio::task::block_in_place(|| {
        bin.read_until("the sync", |l| l.contains(r#""event":"synced""#))
    });
    assert!(synced.contains(r#""batches":1"#), "{synced}");
    let ended = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
    let out = ended.stdout;
    assert!(out.contains(r#""key":"default/good""#), "{out}");
    assert!(!out.contains(r#""key":"default/bad""#), "{out}");
}
