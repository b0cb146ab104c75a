//! Time from start to HasSynced, and memory, for 50k objects of ~2 KiB served by the fake API
//! server (issue #3's benchmark). Prints its figures; `cargo bench --bench sync`.
//!
//! Three measurements in one run, against the same server and the same list pages
//! (`limit=500`, consistent list, so that every client pages the same way):
//! 1. a plain HTTP fetch of every page (bytes only, plus reading each page's `continue` token);
//! 2. the library: Reflector → DeltaFIFO → consumer → Indexer, until `has_synced`;
//! 3. the binary: `kubectl-deltas watch …` as a child process until it reports `synced`: wall
//!    time and peak RSS (the child's own VmHWM).
//!
//! `cargo bench --bench sync -- index` measures issue #5's one-shot query instead: the plain fetch
//! again, then `kubectl-deltas index …` from start to exit (list, drain into the Indexer, answer),
//! with its peak RSS.

// The binary's allocator, so that the figures are the binary's.
#[cfg(feature = "jemalloc")]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

mod common;
#[path = "../tests/support/mod.rs"]
mod support;

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::vm_hwm;
use kube::api::ApiResource;
use kubectl_deltas::Object;
use kubectl_deltas::cache::{Controller, DeltaFifo, Indexer, Reflector, ReflectorConfig};
use kubectl_deltas::source::{KubeListerWatcher, client_without_retry};
use serde_json::{Value, json};
use support::fake_apiserver::FakeApiServer;

/// `SYNC_BENCH_OBJECTS` overrides it, e.g. to profile with fewer objects.
fn objects() -> usize {
    std::env::var("SYNC_BENCH_OBJECTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(50_000)
}
const PAGE: u32 = 500;

/// `SYNC_BENCH_RUNS` overrides how many times the library and the plain fetch are timed (`0`:
/// only the binary, e.g. to study its memory).
fn runs() -> usize {
    std::env::var("SYNC_BENCH_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3)
}

/// A ConfigMap of about 2 KiB, shaped like real ones: labels, annotations, a dozen data keys.
fn object(i: usize) -> Value {
    let data: serde_json::Map<String, Value> = (0..12)
        .map(|k| {
            (
                format!("setting-{k}.properties"),
                Value::String(format!("{i:08}-{k:02}-").repeat(11)),
            )
        })
        .collect();
    json!({
        "metadata": {
            "name": format!("config-{i:06}"),
            "namespace": "default",
            "labels": {"app": format!("app-{}", i % 40), "tier": "backend", "team": format!("team-{}", i % 7)},
            "annotations": {"example.com/owner": "platform", "example.com/revision": i.to_string()},
        },
        "data": data,
    })
}

fn configmaps() -> ApiResource {
    ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&())
}

/// Fetches every page as text and returns (bytes, pages).
async fn plain_fetch(client: &kube::Client) -> (usize, usize) {
    #[derive(serde::Deserialize)]
    struct Page {
        metadata: PageMeta,
    }
    #[derive(serde::Deserialize)]
    struct PageMeta {
        #[serde(rename = "continue")]
        continue_token: Option<String>,
    }
    let (mut bytes, mut pages, mut next) = (0, 0, None::<String>);
    loop {
        let mut uri = format!("/api/v1/namespaces/default/configmaps?limit={PAGE}");
        if let Some(token) = &next {
            uri.push_str("&continue=");
            uri.push_str(token);
        }
        let request = http::Request::get(uri).body(Vec::new()).unwrap();
        let text = client.request_text(request).await.expect("page");
        bytes += text.len();
        pages += 1;
        let page: Page = serde_json::from_str(&text).expect("a list page");
        match page.metadata.continue_token.filter(|t| !t.is_empty()) {
            Some(token) => next = Some(token),
            None => return (bytes, pages),
        }
    }
}

/// Runs an informer until it has synced; returns the time it took and the objects cached.
async fn library_sync(server: &FakeApiServer) -> (Duration, usize) {
    let started = Instant::now();
    let mut config = kube::Config::new(server.url().parse().unwrap());
    config.default_namespace = "default".into();
    let client = client_without_retry(config).unwrap();
    let indexer = Arc::new(Indexer::new());
    let fifo = Arc::new(DeltaFifo::new().known_objects(indexer.clone()));
    let lister_watcher = KubeListerWatcher::new(client, &configmaps(), Some("default"));
    let reflector_config = ReflectorConfig::default()
        .page_size(PAGE)
        .consistent_list(true)
        .transform(Object::strip_managed_fields);
    let reflector = Reflector::new(lister_watcher, fifo.clone(), reflector_config);
    let (synced_tx, synced_rx) = tokio::sync::oneshot::channel::<()>();
    let consumer = {
        let (fifo, indexer) = (fifo.clone(), indexer.clone());
        std::thread::spawn(move || {
            let mut controller = Controller::new(fifo.clone(), indexer);
            while controller.process_next().is_some() {
                if fifo.has_synced() {
                    break;
                }
            }
            let _ = synced_tx.send(());
        })
    };
    let run = tokio::spawn(reflector.run(async {
        let _ = synced_rx.await;
    }));
    run.await.unwrap().expect("the reflector runs");
    let elapsed = started.elapsed();
    fifo.close();
    consumer.join().unwrap();
    (elapsed, indexer.len())
}

/// Runs the binary until it reports `synced`; returns that time and its peak RSS in bytes.
///
/// The peak is the child's own `VmHWM`, read while it still runs. `getrusage(RUSAGE_CHILDREN)`
/// would be wrong here: children are spawned with vfork semantics, and at `exec` the kernel folds
/// the parent's high-water mark (this process, holding the fake server's objects) into the child's.
fn binary_sync(kubeconfig: &std::path::Path) -> (Duration, u64) {
    use std::io::{BufRead, BufReader};
    let started = Instant::now();
    let mut child = common::spawn(
        Command::new(common::release_binary())
            .args(["watch", "configmaps", "-o", "jsonl", "--object", "none"])
            .args(["--consistent-list", "--page-size", &PAGE.to_string()])
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .stdout(Stdio::piped()),
    );
    let stdout = BufReader::new(child.stdout.take().unwrap());
    for line in stdout.lines() {
        if line.expect("output").contains(r#""event":"synced""#) {
            break;
        }
    }
    let elapsed = started.elapsed();
    let peak = vm_hwm(child.id()).expect("VmHWM in /proc/PID/status");
    child.kill().unwrap();
    child.wait().unwrap();
    (elapsed, peak)
}

/// Runs `kubectl-deltas index ARGS…` to its exit; returns the wall time, its peak RSS and how many
/// lines it printed.
///
/// The peak is sampled while the child runs ([`common::wait_with_peak`]; see [`binary_sync`] for
/// why not `getrusage`); the cache is long built by the last sample and only the answer is written.
fn binary_index(kubeconfig: &std::path::Path, args: &[&str]) -> (Duration, u64, usize) {
    use std::io::{BufRead, BufReader};
    let started = Instant::now();
    let mut child = common::spawn(
        Command::new(common::release_binary())
            .arg("index")
            .args(args)
            .args(["--consistent-list", "--page-size", &PAGE.to_string()])
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .stdout(Stdio::piped()),
    );
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let lines = std::thread::spawn(move || {
        let mut count = 0;
        for line in stdout.lines() {
            line.expect("output");
            count += 1;
        }
        count
    });
    let (succeeded, peak) = common::wait_with_peak(&mut child);
    let elapsed = started.elapsed();
    assert!(succeeded, "kubectl-deltas index {args:?} failed");
    (elapsed, peak, lines.join().unwrap())
}

/// `cargo bench --bench sync -- index`: one-shot queries against the plain fetch of the same pages.
async fn index_bench(server: &FakeApiServer, kubeconfig: &std::path::Path) {
    let mut plain = Vec::new();
    let mut bytes = 0;
    for _ in 0..3 {
        let started = Instant::now();
        (bytes, _) = plain_fetch(&server.client()).await;
        plain.push(started.elapsed());
    }
    let plain = *plain.iter().min().unwrap();
    println!(
        "objects: {}, raw JSON: {:.1} MiB; plain HTTP fetch of the pages: {:.0} ms (best of 3)",
        objects(),
        mib(bytes as u64),
        plain.as_secs_f64() * 1e3
    );
    let queries: [&[&str]; 3] = [
        &["configmaps", "--by", "label:app"],
        &["configmaps", "--by", "labels", "-o", "json"],
        &[
            "configmaps",
            "--by",
            "label:team",
            "--value",
            "team-3",
            "-o",
            "json",
        ],
    ];
    for query in queries {
        for _ in 0..2 {
            let kubeconfig = kubeconfig.to_owned();
            let (elapsed, peak, lines) =
                tokio::task::spawn_blocking(move || binary_index(&kubeconfig, query))
                    .await
                    .unwrap();
            println!(
                "index {:<58} {:>6.0} ms = {:.2} × plain fetch, peak RSS {:>6.1} MiB = {:.2} × raw JSON, {lines} lines",
                query.join(" "),
                elapsed.as_secs_f64() * 1e3,
                elapsed.as_secs_f64() / plain.as_secs_f64(),
                mib(peak),
                peak as f64 / bytes as f64,
            );
        }
    }
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn main() {
    // `cargo test` runs benches with --test-ish flags only when asked; this one only runs under
    // `cargo bench` (which passes --bench).
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let server = FakeApiServer::start().await;
        for i in 0..objects() {
            server.create("configmaps", object(i));
        }
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = server.write_kubeconfig(dir.path());

        if std::env::args().any(|a| a == "index") {
            // Warm the server's page building once, so the first measurement is not penalised.
            plain_fetch(&server.client()).await;
            index_bench(&server, &kubeconfig).await;
            return;
        }

        let mut plain = Vec::new();
        let mut library = Vec::new();
        // Also warms the server's page building, so the first timed run is not penalised.
        let (mut bytes, mut pages) = plain_fetch(&server.client()).await;
        for _ in 0..runs() {
            let started = Instant::now();
            (bytes, pages) = plain_fetch(&server.client()).await;
            plain.push(started.elapsed());
            let (elapsed, cached) = library_sync(&server).await;
            assert_eq!(cached, objects());
            library.push(elapsed);
        }
        let kubeconfig_for_child = kubeconfig.clone();
        let (binary_time, peak_rss) =
            tokio::task::spawn_blocking(move || binary_sync(&kubeconfig_for_child))
                .await
                .unwrap();

        let best = |v: &[Duration]| v.iter().min().copied().unwrap_or_default();
        let (plain, library) = (best(&plain), best(&library));
        println!(
            "objects: {}, pages: {pages}, raw JSON: {:.1} MiB ({} bytes/object)",
            objects(),
            mib(bytes as u64),
            bytes / objects()
        );
        println!(
            "plain HTTP fetch of the pages:      {:>8.0} ms (best of runs)",
            plain.as_secs_f64() * 1e3
        );
        println!(
            "library start → HasSynced:           {:>8.0} ms (best of runs)",
            library.as_secs_f64() * 1e3
        );
        println!(
            "ratio library / plain fetch:         {:>8.2} (target ≤ 1.3)",
            library.as_secs_f64() / plain.as_secs_f64()
        );
        println!(
            "binary start → synced (whole process): {:>6.0} ms",
            binary_time.as_secs_f64() * 1e3
        );
        println!(
            "binary peak RSS:                     {:>8.1} MiB = {:.2} × raw JSON (target < 2.5)",
            mib(peak_rss),
            peak_rss as f64 / bytes as f64
        );
    });
}
