//! `-o html` at scale (issue #29): a replay of `HTML_BENCH_BATCHES` batches (default 100,000)
//! written as one page; prints the page's size, the time to make it, and how long headless
//! Chromium takes to load it and run its script. `cargo bench --bench html` (build the binary
//! first: `cargo build --release`; `KUBECTL_DELTAS_BIN` points elsewhere, `CHROMIUM` at another
//! browser). Nothing here runs under `cargo test`.
//!
//! The recording: 2,000 ConfigMaps in 20 namespaces listed, then one `MODIFIED` event every 36 ms
//! of recorded time (an hour for 100,000), each changing one key's data, so that the instant
//! replay pops one batch per event: every key has ~50 updates, each with a change summary and,
//! within the page's object budget, its object.
//!
//! Chromium's time is measured by the page itself: a probe appended after the page's script reads
//! `performance.now()` once the script has run (parsing, layout of the static SVG and the
//! script's start), and the wall time of `chromium --headless --dump-dom` is printed beside it
//! (browser start included).

mod common;

use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use common::{release_binary, spawn, wait_with_peak};

const KEYS: usize = 2_000;

fn batches() -> usize {
    std::env::var("HTML_BENCH_BATCHES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000)
}

fn configmap(i: usize, rv: usize, value: usize) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"cm-{i:05}","namespace":"team-{ns:02}","uid":"{i:08x}-7c1d-4e2f-8a9b-000000000000","resourceVersion":"{rv}","creationTimestamp":"2026-11-20T08:00:00Z","labels":{{"app":"shop","shard":"{shard}"}}}},"data":{{"replicas":"{value}","mode":"fast"}}}}"#,
        ns = i % 20,
        shard = i % 16,
    )
}

fn write_recording(path: &Path, batches: usize) {
    let mut out = BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(
        out,
        r#"{{"kind":"header","v":1,"resource":{{"group":"","version":"v1","kind":"ConfigMap","plural":"configmaps","namespaced":true}},"startedAt":"2026-11-20T09:00:00Z"}}"#
    )
    .unwrap();
    let items: Vec<String> = (0..KEYS).map(|i| configmap(i, 1000 + i, 0)).collect();
    writeln!(
        out,
        r#"{{"t":1,"type":"LIST","resourceVersion":"{}","items":[{}]}}"#,
        1000 + KEYS - 1,
        items.join(",")
    )
    .unwrap();
    for n in 0..batches.saturating_sub(KEYS) {
        let i = n % KEYS;
        let rv = 1000 + KEYS + n;
        writeln!(
            out,
            r#"{{"t":{},"type":"MODIFIED","object":{}}}"#,
            100 + n * 36,
            configmap(i, rv, n / KEYS + 1)
        )
        .unwrap();
    }
    out.flush().unwrap();
}

/// Runs after the page's script: when it ran, and whether it did.
const PROBE: &str = r##"<script>
document.body.append(Object.assign(document.createElement("pre"), {id: "kd-bench",
  textContent: JSON.stringify({ms: performance.now(), scriptRan: !document.getElementById("controls").hidden,
    marks: document.querySelectorAll("#chart .m").length})}));
</script>
</body>"##;

fn main() {
    let n = batches();
    let dir = tempfile::tempdir().unwrap();
    let recording = dir.path().join("recording.jsonl");
    write_recording(&recording, n);
    let page = dir.path().join("page.html");
    let started = Instant::now();
    let mut child = spawn(
        Command::new(release_binary())
            .args([
                "replay",
                recording.to_str().unwrap(),
                "-q",
                "-o",
                "html",
                "-f",
            ])
            .arg(&page)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit()),
    );
    let (ok, peak) = wait_with_peak(&mut child);
    let made = started.elapsed();
    assert!(ok, "the replay failed");
    let html = std::fs::read_to_string(&page).unwrap();
    let drawn = html.matches("<g class=\"m").count();
    println!(
        "html/{n}-batches: page {:.1} MiB, made in {:.2} s (peak RSS {:.0} MiB), {drawn} marks drawn, aggregated: {}, objects cut: {}",
        html.len() as f64 / (1024.0 * 1024.0),
        made.as_secs_f64(),
        peak as f64 / (1024.0 * 1024.0),
        html.contains("id=\"aggregated\""),
        html.contains("id=\"objects-cut\""),
    );

    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".to_owned());
    if !Path::new(&chromium).exists() {
        println!("html/chromium: skipped, no {chromium}");
        return;
    }
    let probe = dir.path().join("probe.html");
    std::fs::write(&probe, html.replacen("</body>", PROBE, 1)).unwrap();
    let started = Instant::now();
    let out = Command::new(&chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
        ])
        .arg(format!(
            "--user-data-dir={}",
            dir.path().join("profile").display()
        ))
        .arg("--dump-dom")
        .arg(format!("file://{}", probe.display()))
        .stderr(Stdio::null())
        .output()
        .expect("chromium runs");
    let wall = started.elapsed();
    let dom = String::from_utf8_lossy(&out.stdout);
    let report = dom
        .split("<pre id=\"kd-bench\">")
        .nth(1)
        .and_then(|rest| rest.split("</pre>").next())
        .unwrap_or("no report")
        .replace("&quot;", "\"");
    println!(
        "html/chromium: loaded and scripted: {report}; chromium --dump-dom wall time {:.2} s",
        wall.as_secs_f64()
    );
}
