//! The `-o html` page as a finished report (issue #42), checked in headless Chromium through the
//! DOM after the page's script ran: each reconcile a bar on its key's lane, the controller's lane
//! drawing how many ran at once, the 410 → relist mark on top of the backoff's with its label
//! shown, the page's whole width used, the summary as HTML tables, the caption telling the
//! session's story, and a tombstone's `OnDelete` hover saying what a Go handler gets.

use serde_json::Value;

use super::html_output::{chromium, dump_dom, page, probe_report};

/// Runs in the page after its own script and reports, as JSON in `#kd-test`, what the DOM holds.
const PROBE: &str = r#"<script>
(function () {
  const out = {};
  const svg = document.getElementById("chart");
  out.width = +svg.getAttribute("width");
  out.story = (document.getElementById("story") || {}).textContent || null;
  out.tables = document.querySelectorAll("section.summary table").length;
  out.summaryPre = document.querySelectorAll("section.summary pre").length;
  out.rowHeaders = Array.from(document.querySelectorAll("section.summary th[scope=row]")).map((t) => t.textContent);
  out.bars = {};
  for (const lane of svg.querySelectorAll("g.row.lane[data-key]")) {
    const bars = lane.querySelectorAll("rect.span.reconcile");
    if (bars.length) {
      out.bars[lane.dataset.key] = {
        all: bars.length,
        errors: lane.querySelectorAll("rect.span.reconcile.error").length,
      };
    }
  }
  out.running = Array.from(svg.querySelectorAll("g.row.actor[data-controller] polyline.running-line")).length;
  out.layers = Array.from(svg.querySelectorAll("g.row.band g.layer")).map((layer) =>
    Array.from(layer.querySelectorAll(".m")).map((m) => {
      const label = m.querySelector("text.ml");
      return { label: label ? label.textContent : null, shown: label ? !label.classList.contains("hidden") : null };
    }));
  const tomb = Array.from(svg.querySelectorAll("g.row.actor[data-actor] .m use[href='#g-T']")).map((u) => u.parentNode)[0];
  if (tomb) {
    out.tombTitle = tomb.querySelector("title").textContent;
    tomb.dispatchEvent(new MouseEvent("mouseover", { bubbles: true, clientX: 400, clientY: 300 }));
    out.tombTip = document.getElementById("tip").textContent;
  }
  const notes = Array.from(svg.querySelectorAll("g.row .m use[href='#g-Z']")).map((u) => u.parentNode)
    .filter((m) => m.querySelector("title").textContent.includes("kube-runtime"));
  out.notes = notes.map((m) => ({
    row: m.closest("g.row").dataset.controller || (m.closest("g.row.band") ? "band" : null),
    title: m.querySelector("title").textContent,
  }));
  if (notes.length) {
    notes[0].dispatchEvent(new MouseEvent("mouseover", { bubbles: true, clientX: 400, clientY: 300 }));
    out.noteTip = document.getElementById("tip").textContent;
  }
  const pre = document.createElement("pre");
  pre.id = "kd-test";
  pre.textContent = JSON.stringify(out);
  document.body.append(pre);
})();
</script>
</body>"#;

/// The probe's report on the page of replaying `name` with `args`, in a 1800-pixel-wide window;
/// `None` without Chromium (outside CI).
async fn probe(name: &str, args: &[&str]) -> Option<Value> {
    let Some(chromium) = chromium() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "Chromium is missing in CI: .ci/run installs it (apt-get install chromium)"
        );
        eprintln!("skipped: no Chromium (/usr/bin/chromium)");
        return None;
    };
    let html = page(name, args).await;
    let flags = ["--window-size=1800,1000"];
    let dom = dump_dom(&chromium, &html.replacen("</body>", PROBE, 1), &flags).await;
    Some(probe_report(&dom))
}

/// `controller.jsonl`: ten reconciles drawn as bars on their keys' lanes (`demo/flaky`'s three
/// errors among its four), the controller's lane as concurrency, the summary's tables, the
/// caption, and the chart as wide as the window.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconciles_are_bars_on_their_keys_lanes_and_the_page_tells_its_story() {
    let Some(report) = probe("controller", &[]).await else {
        return;
    };
    let bars = &report["bars"];
    assert_eq!(bars["demo/app-config"]["all"], 3, "{report}");
    assert_eq!(bars["demo/flaky"]["all"], 4, "{report}");
    assert_eq!(bars["demo/flaky"]["errors"], 3, "{report}");
    assert_eq!(bars["demo/limits"]["all"], 3, "{report}");
    assert_eq!(report["running"], 1, "{report}");
    assert!(report["width"].as_f64().unwrap() > 1500.0, "{report}");
    assert_eq!(
        report["tables"], 3,
        "the informer's, the handler's and the controller's: {report}"
    );
    assert_eq!(report["summaryPre"], 0, "{report}");
    let headers = report["rowHeaders"].as_array().unwrap();
    for label in ["relists", "reconciles", "keys still waiting at exit"] {
        assert!(headers.iter().any(|h| h == label), "{label}: {report}");
    }
    assert_eq!(
        report["story"], "web reconciled 10 times, 3 retries.",
        "{report}"
    );
}

/// `expired-watch.jsonl` with a handler: the 410 → relist mark is drawn over the backoff that
/// starts at the same instant, with its label shown and the backoff's hidden; the caption says
/// how long the watch was lost and what the relist found; the handler's tombstone `OnDelete`
/// says what a Go handler gets.
/// A kube-runtime controller's notes are marks: the one about the controller (its trigger
/// backoff after the 410) on its lane, the one about what its watcher does (a deletion the relist
/// dropped without an event) on the Reflector's band; a note's hover says it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kube_controllers_notes_are_marks_that_say_them() {
    let Some(report) = probe("controller-runtimes", &["--controller", "rs,runtime=kube"]).await
    else {
        return;
    };
    let notes = report["notes"].as_array().unwrap();
    let on = |row: &str, says: &str| {
        notes
            .iter()
            .any(|n| n["row"] == row && n["title"].as_str().unwrap().contains(says))
    };
    assert!(on("rs", "rs(kube): kube-runtime: 410 Expired"), "{report}");
    assert!(on("band", "demo/batch gone in the relist"), "{report}");
    let tip = report["noteTip"].as_str().unwrap();
    assert!(tip.contains("kube-runtime note"), "{tip}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_410_stays_on_top_and_a_tombstone_says_what_go_gets() {
    let Some(report) = probe("expired-watch", &["--handler", "web"]).await else {
        return;
    };
    let layers = report["layers"].as_array().unwrap();
    let last = layers.last().unwrap().as_array().unwrap();
    let relist = last
        .iter()
        .find(|m| m["label"] == "410, relist")
        .unwrap_or_else(|| panic!("the 410 is in the top layer: {report}"));
    assert_eq!(relist["shown"], true, "{report}");
    let backoff = layers[0]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["label"] == "backoff")
        .unwrap_or_else(|| panic!("the backoff is beneath: {report}"));
    assert_eq!(backoff["shown"], false, "{report}");
    assert_eq!(
        report["story"],
        "the watch was lost for 1.23s; the relist found 1 deletion, delivered as a tombstone.",
        "{report}"
    );
    let title = report["tombTitle"].as_str().unwrap();
    assert!(
        title.contains("OnDelete") && title.contains("cache.DeletedFinalStateUnknown"),
        "{title}"
    );
    let tip = report["tombTip"].as_str().unwrap();
    assert!(
        tip.contains("obj = t.Obj") && tip.contains("silently drops this deletion"),
        "{tip}"
    );
}

/// Reports the stacks' sections, the differences listed under the caption and the highlighted
/// key lanes of a `--compare` page.
const COMPARE_PROBE: &str = r##"<script>
(function () {
  const out = {};
  out.sections = Array.from(document.querySelectorAll("dl dt")).map((t) => t.textContent);
  out.differences = Array.from(document.querySelectorAll("#differences li.difference")).map((l) => l.textContent);
  out.verdicts = Array.from(document.querySelectorAll("#differences li.verdict.differ")).map((l) => l.textContent);
  out.highlighted = Array.from(document.querySelectorAll("#chart g.row.lane.differs")).map((g) => g.dataset.key);
  out.keyLanes = Array.from(document.querySelectorAll("#chart g.row.lane[data-g] text.key")).map(
    (t) => t.childNodes[0].textContent + (t.querySelector("tspan.stack") || {textContent: ""}).textContent);
  out.highlightColor = (() => {
    const text = document.querySelector("#chart g.row.lane.differs text.key");
    return text ? getComputedStyle(text).fill : null;
  })();
  const pre = document.createElement("pre");
  pre.id = "kd-test";
  pre.textContent = JSON.stringify(out);
  document.body.append(pre);
})();
</script>
</body>"##;

/// `--compare 1.32,latest` on `expired-watch.jsonl`: one section per stack, then every key with
/// one lane per stack; the difference listed under the caption and its key's lanes highlighted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compare_page_shows_each_stack_and_highlights_where_they_differ() {
    let Some(chromium) = chromium() else {
        eprintln!("skipped: no Chromium (/usr/bin/chromium)");
        return;
    };
    let mut cmd = crate::support::binary::offline_command(&[
        "replay",
        "docs/recordings/expired-watch.jsonl",
        "-o",
        "html",
        "-q",
        "--handler",
        "h",
        "--compare",
        "1.32,latest",
    ]);
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"));
    let out = crate::support::binary::output_blocking(cmd);
    assert_eq!(
        out.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = String::from_utf8(out.stdout).unwrap();
    let flags = ["--window-size=1800,1000"];
    let dom = dump_dom(
        &chromium,
        &html.replacen("</body>", COMPARE_PROBE, 1),
        &flags,
    )
    .await;
    let report = probe_report(&dom);
    assert_eq!(
        report["sections"],
        serde_json::json!(["pods [1.32]", "pods [latest]"]),
        "{report}"
    );
    assert_eq!(
        report["differences"],
        serde_json::json!([
            "handler h  1.32 │ OnDelete demo/worker-2 (tombstone) │ latest ─ (delivered 3 calls earlier)"
        ]),
        "{report}"
    );
    assert_eq!(
        report["verdicts"],
        serde_json::json!(["handler h: same calls, different order (1 moved)"]),
        "{report}"
    );
    // Every key a lane per stack, in the stacks' order, a stack's empty where its pops had no
    // delta of the key alone (a ReplacedAll's keys have theirs in the whole-list lane); the
    // differing key's lanes highlighted.
    let key_lanes: Vec<String> = ["worker-1", "worker-2", "worker-3", "worker-4"]
        .iter()
        .flat_map(|key| [format!("{key} · 1.32"), format!("{key} · latest")])
        .collect();
    assert_eq!(report["keyLanes"], serde_json::json!(key_lanes), "{report}");
    assert_eq!(
        report["highlighted"],
        serde_json::json!(["demo/worker-2", "demo/worker-2"]),
        "{report}"
    );
    assert_eq!(report["highlightColor"], "rgb(213, 94, 0)", "{report}");
}
