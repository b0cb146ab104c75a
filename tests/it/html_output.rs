//! `-o html`: the page of a bundled recording, byte for byte (`tests/golden/replay_<name>.html`;
//! an instant replay is deterministic), where it goes (`-f`, stdout), a live `watch` writing it
//! whatever ends the session, and the page loaded in a real browser (headless Chromium), whose
//! DOM is checked after its script ran and a mark was hovered.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::binary::{Running, offline_command, output, run};
use support::fake_apiserver::FakeApiServer;
use support::golden::golden;

/// Replays the bundled recording `name` with `-o html -q` and `args`, from the repository's
/// root with a relative path, so that the command line the page shows is the same everywhere.
pub(crate) async fn page(name: &str, args: &[&str]) -> String {
    let path = format!("docs/recordings/{name}.jsonl");
    let mut all = vec!["replay", path.as_str(), "-o", "html", "-q"];
    all.extend_from_slice(args);
    let mut cmd = offline_command(&all);
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"));
    let out = output(cmd).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "replay {name} -o html: {stderr}"
    );
    String::from_utf8(out.stdout).expect("the page is UTF-8")
}

/// The hover records of a page, as its script reads them.
fn records(page: &str) -> Vec<Value> {
    let start = page.find("id=\"kd-records\">").expect("the records") + "id=\"kd-records\">".len();
    let end = start + page[start..].find("</script>").expect("their end");
    serde_json::from_str(&page[start..end]).expect("the records are JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_expired_watch_page_matches_its_golden() {
    let html = page("expired-watch", &[]).await;
    golden("replay_expired-watch.html", &html);
    // Nothing from the network: no external URL is referenced anywhere.
    assert!(!html.contains("src=\"http"), "an external script");
    assert!(!html.contains("href=\"http"), "an external link");
    assert!(!html.contains("@import"), "an imported stylesheet");
    // The relist's tombstone, the 410 and the relist are on the page, each as text.
    assert!(html.contains("data-g=\"pods/demo\" data-key=\"demo/worker-2\""));
    assert!(
        html.contains("DeletedFinalStateUnknown"),
        "the tombstone's legend"
    );
    assert!(
        html.contains("Deleted (tombstone) rv"),
        "the tombstone's mark"
    );
    assert!(html.contains("410 → relist: the watch&#39;s resourceVersion expired"));
    assert!(html.contains("410, list retried"));
    assert!(html.contains("HasSynced after"));
    // The summary tables of stderr, at the bottom, as HTML tables.
    assert!(html.contains("<h2>Summary</h2>\n<table>"));
    assert!(html.contains("<th scope=\"row\" class=\"sub\">of which tombstones</th>"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_slow_handler_page_matches_its_golden() {
    let html = page("slow-handler", &[]).await;
    golden("replay_slow-handler.html", &html);
    // One lane per handler (the recording's replayWith flags), its buffer drawn as a line.
    assert!(html.contains("data-actor=\"slow\""));
    assert!(html.contains("data-actor=\"periodic\""));
    assert!(
        html.contains("calls · buffer depth (max 6)"),
        "slow's buffer grows to 6"
    );
    // A sync notification the slow handler did not get.
    assert!(html.contains("not delivered: resync not due"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instant_replay_gives_the_same_page_every_run() {
    let first = page("rollout-pods", &[]).await;
    let second = page("rollout-pods", &[]).await;
    assert!(
        first == second,
        "two replays of rollout-pods gave different pages"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hover_record_is_the_jsonl_record_with_the_wide_changes() {
    let html = page("rollout-pods", &["--object", "meta"]).await;
    let path = format!(
        "{}/docs/recordings/rollout-pods.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    let jsonl = offline_command(&["replay", &path, "-q", "-o", "jsonl", "--object", "meta"]);
    let jsonl = support::binary::json_lines(&output(jsonl).await.stdout);
    let all = records(&html);
    // In the page's order (lane by lane); the same records as -o jsonl's, in pop order.
    let mut batches: Vec<&Value> = all.iter().filter_map(|r| r.get("batch")).collect();
    batches.sort_by_key(|b| b["seq"].as_u64());
    let expected: Vec<&Value> = jsonl.iter().filter(|l| l["kind"] == "batch").collect();
    assert_eq!(batches, expected, "the page's batch records are -o jsonl's");
    // An update's changes, as -o wide says them.
    let wide = offline_command(&["replay", &path, "-q", "-o", "wide"]);
    let wide = String::from_utf8(output(wide).await.stdout).unwrap();
    let scheduled = records(&html)
        .into_iter()
        .filter_map(|r| r["changes"][0].as_str().map(str::to_owned))
        .find(|c| c.contains("spec.nodeName"))
        .expect("a pod scheduled");
    assert!(wide.contains(&scheduled), "{scheduled} not in:\n{wide}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_controllers_reconciles_have_their_lane_and_records_and_its_table() {
    // The bundled controller recording replays with its `--controller web,…` (replayWith): the
    // page has the controller's lane beside its handler's, one mark per reconcile (ok and error
    // told apart), each reconcile's record as its jsonl line, and the controller's summary table.
    let html = page("controller", &[]).await;
    assert!(html.contains("data-actor=\"web\""), "no handler lane");
    assert!(
        html.contains("data-controller=\"web\""),
        "no controller lane"
    );
    let path = format!(
        "{}/docs/recordings/controller.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    let jsonl = offline_command(&["replay", &path, "-q", "-o", "jsonl"]);
    let jsonl = support::binary::json_lines(&output(jsonl).await.stdout);
    let expected: Vec<&Value> = jsonl.iter().filter(|l| l["kind"] == "reconcile").collect();
    let all = records(&html);
    // In the page's order (drawn lane by lane); sorted, the same records as -o jsonl's.
    let mut reconciles: Vec<&Value> = all.iter().filter_map(|r| r.get("reconcile")).collect();
    let when = |r: &&Value| (r["time"].as_str().map(str::to_owned), r["key"].to_string());
    reconciles.sort_by_key(when);
    let mut expected = expected;
    expected.sort_by_key(when);
    assert!(!expected.is_empty());
    assert_eq!(
        reconciles, expected,
        "the page's reconcile records are -o jsonl's"
    );
    let errors = expected.iter().filter(|r| r["result"] == "error").count();
    assert!(errors > 0);
    // One mark per reconcile, and each glyph once in the legend.
    assert_eq!(
        html.matches("href=\"#g-F\"").count(),
        errors + 1,
        "error marks"
    );
    assert_eq!(
        html.matches("href=\"#g-K\"").count(),
        expected.len() - errors + 1,
        "ok marks"
    );
    assert!(
        html.contains("workqueue_retries_total"),
        "no controller table in the summary"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_are_redacted_on_the_page_as_in_jsonl() {
    let dir = tempfile::tempdir().unwrap();
    let recording = dir.path().join("secrets.jsonl");
    let header = json!({"kind": "header", "v": 1, "resource": {"group": "", "version": "v1",
        "kind": "Secret", "plural": "secrets", "namespaced": true}, "namespace": "demo",
        "startedAt": "2026-11-24T09:00:00Z"});
    let secret = |rv: &str, value: &str| {
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db", "namespace": "demo",
            "resourceVersion": rv}, "data": {"password": value}})
    };
    let lines = [
        header,
        json!({"t": 1, "type": "LIST", "resourceVersion": "10", "items": [secret("10", "aHVudGVyMg==")]}),
        json!({"t": 500, "type": "MODIFIED", "object": secret("11", "c3dvcmRmaXNo")}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&recording, text).unwrap();
    let replay = |show: bool| {
        let mut args = vec!["replay", recording.to_str().unwrap(), "-q", "-o", "html"];
        if show {
            args.push("--show-secret-data");
        }
        offline_command(&args)
    };
    let redacted = String::from_utf8(output(replay(false)).await.stdout).unwrap();
    assert!(redacted.contains("data.password"), "the change is named");
    assert!(
        !redacted.contains("aHVudGVyMg=="),
        "a Secret value on the page"
    );
    assert!(
        !redacted.contains("c3dvcmRmaXNo"),
        "a Secret value on the page"
    );
    let shown = String::from_utf8(output(replay(true)).await.stdout).unwrap();
    assert!(
        shown.contains("c3dvcmRmaXNo"),
        "--show-secret-data shows them"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dash_f_writes_the_page_to_a_file_and_nothing_to_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("page.html");
    let recording = support::paths::bundled("resync");
    let cmd = offline_command(&[
        "replay",
        recording.to_str().unwrap(),
        "-o",
        "html",
        "-f",
        file.to_str().unwrap(),
    ]);
    let out = output(cmd).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout.is_empty(),
        "stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    // The summary still goes to stderr, as with every output.
    assert!(String::from_utf8_lossy(&out.stderr).contains("time to HasSynced"));
    let html = std::fs::read_to_string(&file).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.ends_with("</html>\n"));
    assert!(html.contains("resync check"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dash_f_keeps_the_flags_a_recording_is_meant_to_be_replayed_with() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("page.html");
    let recording = support::paths::bundled("slow-handler");
    let cmd = offline_command(&[
        "replay",
        recording.to_str().unwrap(),
        "-q",
        "-o",
        "html",
        "-f",
        file.to_str().unwrap(),
    ]);
    let out = output(cmd).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&file).unwrap();
    // Its replayWith: --handler slow,delay=2s,resync=0 --handler periodic.
    assert!(html.contains("data-actor=\"slow\""), "no handler lanes");
    assert!(html.contains("data-actor=\"periodic\""), "no handler lanes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dash_f_is_refused_without_html_and_where_it_cannot_be_written() {
    let recording = support::paths::bundled("resync");
    let cmd = offline_command(&["replay", recording.to_str().unwrap(), "-f", "out.html"]);
    let out = output(cmd).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("-f is where -o html writes its page"),
        "{stderr}"
    );
    assert!(!Path::new("out.html").exists());

    let cmd = offline_command(&[
        "replay",
        recording.to_str().unwrap(),
        "-o",
        "html",
        "-f",
        "/nonexistent-dir/page.html",
    ]);
    let out = output(cmd).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot create the page /nonexistent-dir/page.html"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("time to HasSynced"),
        "the session ran: {stderr}"
    );
}

async fn server() -> (FakeApiServer, tempfile::TempDir, PathBuf) {
    let server = FakeApiServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    server.create(
        "configmaps",
        json!({"metadata": {"name": "app-config", "namespace": "default"}, "data": {"k": "v"}}),
    );
    server.create(
        "configmaps",
        json!({"metadata": {"name": "limits", "namespace": "default"}, "data": {"rps": "1"}}),
    );
    (server, dir, kubeconfig)
}

/// A live page: complete, with the listed keys' lanes and the summary.
fn assert_live_page(html: &str) {
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(html.ends_with("</html>\n"), "cut short");
    assert!(html.contains("\"event\":\"list-done\""), "the list");
    assert!(html.contains("<h2>Summary</h2>"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_watch_writes_its_page_when_until_synced_ends_it() {
    let (_server, dir, kubeconfig) = server().await;
    let file = dir.path().join("page.html");
    let out = run(
        &kubeconfig,
        &[
            "watch",
            "configmaps",
            "-o",
            "html",
            "--until-synced",
            "-f",
            file.to_str().unwrap(),
        ],
    )
    .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&file).unwrap();
    assert_live_page(&html);
    assert!(html.contains("data-key=\"default/app-config\""));
    assert!(html.contains("data-key=\"default/limits\""));
    assert!(html.contains("HasSynced after"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_watch_writes_its_page_to_stdout_at_max_batches_and_duration() {
    let (_server, _dir, kubeconfig) = server().await;
    let out = run(
        &kubeconfig,
        &["watch", "configmaps", "-o", "html", "--max-batches", "1"],
    )
    .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = String::from_utf8(out.stdout).unwrap();
    assert_live_page(&html);
    assert_eq!(
        records(&html)
            .iter()
            .filter(|r| r.get("batch").is_some())
            .count(),
        1
    );

    let out = run(
        &kubeconfig,
        &["watch", "configmaps", "-o", "html", "--duration", "1s"],
    )
    .await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = String::from_utf8(out.stdout).unwrap();
    assert_live_page(&html);
    assert!(
        html.contains("\"event\":\"watch-start\""),
        "the watch opened within 1s"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_watch_writes_its_page_at_ctrl_c() {
    let (server, _dir, kubeconfig) = server().await;
    let bin = Running::spawn(&kubeconfig, &["watch", "configmaps", "-o", "html"]);
    let deadline = Instant::now() + support::binary::PATIENCE;
    while !server.requests().iter().any(|r| r.is_watch()) {
        assert!(Instant::now() < deadline, "no watch");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let ended = tokio::task::block_in_place(|| bin.interrupt());
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
    assert_live_page(&ended.stdout);
}

/// Debian's Chromium, or `$CHROMIUM`; `None` when absent.
pub(crate) fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// Runs in the page after its own script: counts what the DOM holds, hovers the first mark of
/// `demo/app-config` and reports, as JSON in `#kd-test`, what the hover panel says.
const PROBE: &str = r#"<script>
(function () {
  const out = {};
  const svg = document.getElementById("chart");
  out.scriptRan = !document.getElementById("controls").hidden;
  out.lanes = Array.from(svg.querySelectorAll("g.row.lane")).map((l) => l.dataset.key);
  out.groups = Array.from(svg.querySelectorAll("g.row.group")).map((g) => g.dataset.g);
  out.handlers = Array.from(svg.querySelectorAll("g.row.actor")).map((a) => a.dataset.actor);
  out.handlerMarks = svg.querySelectorAll("g.row.actor .m[data-i]").length;
  out.marks = svg.querySelectorAll("g.row.lane .m[data-i]").length;
  out.band = svg.querySelectorAll("g.row.band .span, g.row.band .m").length;
  const lane = svg.querySelector('g.row.lane[data-key="demo/app-config"]');
  const mark = lane.querySelectorAll(".m[data-i]")[1];
  out.hoveredTitle = mark.querySelector("title").textContent;
  mark.dispatchEvent(new MouseEvent("mouseover", { bubbles: true, clientX: 400, clientY: 300 }));
  const tip = document.getElementById("tip");
  out.tipShown = !tip.hidden;
  out.tip = tip.textContent;
  // Folding the namespace hides its lanes.
  svg.querySelector('g.row.group').dispatchEvent(new MouseEvent("click", { bubbles: true }));
  out.foldedHidden = lane.style.display === "none";
  const pre = document.createElement("pre");
  pre.id = "kd-test";
  pre.textContent = JSON.stringify(out);
  document.body.append(pre);
})();
</script>
</body>"#;

/// The DOM headless Chromium leaves of `html` once its scripts ran, with `flags` beside the
/// usual ones (`--window-size=…`).
pub(crate) async fn dump_dom(chromium: &Path, html: &str, flags: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("probe.html");
    std::fs::write(&file, html).unwrap();
    let mut cmd = Command::new(chromium);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-dev-shm-usage",
    ])
    .args(flags)
    .arg(format!(
        "--user-data-dir={}",
        dir.path().join("profile").display()
    ))
    .arg("--dump-dom")
    .arg(format!("file://{}", file.display()));
    let out = output(cmd).await;
    assert!(
        out.status.success(),
        "chromium: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The probe's report, from the DOM Chromium dumped.
pub(crate) fn probe_report(dom: &str) -> Value {
    let start =
        dom.find("<pre id=\"kd-test\">").expect("the probe ran") + "<pre id=\"kd-test\">".len();
    let end = start + dom[start..].find("</pre>").unwrap();
    let text = dom[start..end]
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_works_in_headless_chromium() {
    let Some(chromium) = chromium() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "Chromium is missing in CI: .ci/run installs it (apt-get install chromium)"
        );
        eprintln!(
            "skipped: no Chromium (/usr/bin/chromium); `apt-get install chromium` to run this test"
        );
        return;
    };
    let html = page("slow-handler", &[]).await;
    let dom = dump_dom(&chromium, &html.replacen("</body>", PROBE, 1), &[]).await;
    let report = probe_report(&dom);
    assert_eq!(report["scriptRan"], true, "{report}");
    assert_eq!(
        report["lanes"],
        json!([
            "demo/app-config",
            "demo/feature-flags",
            "demo/limits",
            "demo/maintenance-window"
        ]),
        "{report}"
    );
    assert_eq!(report["groups"], json!(["configmaps/demo"]), "{report}");
    assert_eq!(report["handlers"], json!(["slow", "periodic"]), "{report}");
    assert_eq!(report["marks"], 15, "one mark per pop: {report}");
    assert!(report["handlerMarks"].as_u64().unwrap() > 20, "{report}");
    assert!(report["band"].as_u64().unwrap() >= 4, "{report}");
    // The hovered mark's batch: its pop, its key, its delta and resourceVersion, its changes.
    let title = report["hoveredTitle"].as_str().unwrap();
    let pop = title.split(' ').nth(1).unwrap();
    let tip = report["tip"].as_str().unwrap();
    assert_eq!(report["tipShown"], true, "{report}");
    assert!(
        tip.contains(&format!("pop {pop} · configmaps · demo/app-config")),
        "{tip}"
    );
    assert!(tip.contains("Updated") && tip.contains("rv 1004"), "{tip}");
    assert!(tip.contains("data.LOG_LEVEL"), "the changes: {tip}");
    assert_eq!(report["foldedHidden"], true, "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undelta_store_draws_its_pushes_and_counts_them_as_pushes() {
    let html = page("resync", &["--store", "undelta"]).await;
    assert!(
        html.contains("data-key=\"UndeltaStore pushes\""),
        "the pushes' lane"
    );
    assert!(html.contains("objects pushed"), "the pushes' sizes");
    assert!(
        html.contains("HasSynced after 4.0ms, 1 push<"),
        "synced counts pushes"
    );
    assert!(records(&html).iter().any(|r| r.get("push").is_some()));
}
