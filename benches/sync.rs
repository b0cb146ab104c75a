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
//!
//! `cargo bench --bench sync -- startup` measures issue #18's whole-process start: 5000
//! ConfigMaps of ~1.5 KiB, `curl` fetching the list against `kubectl-deltas watch … --until-synced`
//! with a cold and a warm discovery cache (and the discovery requests each made), its peak RSS,
//! and `__complete` answering resource names from the cache. The server encodes the list as it
//! sends it, as kube-apiserver 1.33+ does (issue #30's restatement); `SYNC_BENCH_LIST=whole`
//! has it encode the list whole before the first byte, as 1.28 does.
//!
//! `SYNC_BENCH_HOLD=1 cargo bench --bench sync -- startup` serves those objects and waits for
//! Ctrl-C instead, printing the kubeconfig to point the binary at (to profile it by hand).
//!
//! Every binary run gets a discovery cache of its own (`KUBECACHEDIR`, which older builds
//! ignore), never the user's `~/.kube/cache`.

// The binary's allocator, so that the figures are the binary's.
#[cfg(feature = "jemalloc")]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

mod common;
#[allow(
    dead_code,
    reason = "the integration tests' support code, of which the bench needs the fake API server"
)]
#[path = "../tests/it/support/mod.rs"]
mod support;

use kubectl_deltas::cache::InformerQueue;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::vm_hwm;
use kube::api::ApiResource;
use kubectl_deltas::Object;
use kubectl_deltas::cache::{
    DeltaFifo, Indexer, ProcessLoop, Reflector, ReflectorConfig, ReflectorStore,
};
use kubectl_deltas::source::{KubeListerWatcher, client_without_retry};
use serde_json::{Value, json};
use support::fake_apiserver::{CollectionEncoding, FakeApiServer};

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
    let indexer = Indexer::new();
    let cache = indexer.reader();
    let fifo = Arc::new(DeltaFifo::new().known_objects(Arc::new(cache.clone())));
    let lister_watcher = KubeListerWatcher::new(client, &configmaps(), Some("default"));
    let reflector_config = ReflectorConfig::default()
        .page_size(PAGE)
        .consistent_list(true)
        .transform(Object::strip_managed_fields);
    let reflector = Reflector::new(lister_watcher, fifo.clone(), reflector_config);
    let (synced_tx, synced_rx) = tokio::sync::oneshot::channel::<()>();
    let consumer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut controller = ProcessLoop::new(fifo.clone(), indexer);
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
    (elapsed, cache.len())
}

/// Runs the binary until it reports `synced`; returns that time and its peak RSS in bytes.
///
/// The peak is the child's own `VmHWM`, read while it still runs. `getrusage(RUSAGE_CHILDREN)`
/// would be wrong here: children are spawned with vfork semantics, and at `exec` the kernel folds
/// the parent's high-water mark (this process, holding the fake server's objects) into the child's.
fn binary_sync(kubeconfig: &std::path::Path) -> (Duration, u64) {
    use std::io::{BufRead, BufReader};
    let cache = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let mut child = common::spawn(
        binary_in(cache.path())
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
    let cache = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let mut child = common::spawn(
        binary_in(cache.path())
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

/// A ConfigMap of about 1.5 KiB in namespace `perf`, issue #18's size: [`object`]'s shape with
/// 8 data keys instead of 12.
fn small_object(i: usize) -> Value {
    let mut object = object(i);
    object["metadata"]["namespace"] = json!("perf");
    let data: serde_json::Map<String, Value> = (0..8)
        .map(|k| {
            (
                format!("setting-{k}.properties"),
                Value::String(format!("{i:08}-{k:02}-").repeat(11)),
            )
        })
        .collect();
    object["data"] = Value::Object(data);
    object
}

/// The binary (or `KUBECTL_DELTAS_BIN`) with its discovery cache (and an older build's
/// completion cache) in `cache`, never the user's.
fn binary_in(cache: &std::path::Path) -> Command {
    let mut command = Command::new(common::release_binary());
    command
        .env_remove("KUBECONFIG")
        .env("KUBECACHEDIR", cache.join("kube"))
        .env("XDG_CACHE_HOME", cache)
        .stdin(Stdio::null());
    command
}

/// `curl` fetching the whole list as the binary's first request asks for it (`resourceVersion=0`,
/// answered from the watch cache in one piece).
struct Fetch {
    /// Wall time of the whole `curl` process.
    elapsed: Duration,
    /// From the request to the response's first byte, as `curl` measures it
    /// (`time_starttransfer`): the server's encoding when it encodes before sending.
    first_byte: Duration,
    bytes: usize,
}

fn curl_fetch(url: &str) -> Fetch {
    let started = Instant::now();
    let out = Command::new("curl")
        .args(["-sS", "-o", "/dev/null"])
        .args(["-w", "%{size_download} %{time_starttransfer}"])
        .args([
            "-H",
            &format!("Authorization: Bearer {}", support::fake_apiserver::TOKEN),
        ])
        .arg(format!(
            "{url}/api/v1/namespaces/perf/configmaps?limit={PAGE}&resourceVersion=0"
        ))
        .output()
        .expect("curl runs (the startup bench compares against it)");
    let elapsed = started.elapsed();
    assert!(out.status.success(), "curl failed");
    let written = String::from_utf8_lossy(&out.stdout);
    let (bytes, first_byte) = written.trim().split_once(' ').expect("curl's -w output");
    Fetch {
        elapsed,
        first_byte: Duration::from_secs_f64(first_byte.parse().unwrap()),
        bytes: bytes.parse().unwrap(),
    }
}

/// One whole-process run of the binary.
struct Run {
    /// From the start to the `synced` line: HasSynced, as the output reports it.
    synced: Duration,
    /// From the start to the exit.
    exited: Duration,
    /// Peak RSS, bytes.
    peak: u64,
}

/// `watch configmaps -n perf -o jsonl --object none --until-synced`, start to exit.
fn binary_until_synced(kubeconfig: &std::path::Path, cache: &std::path::Path) -> Run {
    use std::io::{BufRead, BufReader};
    let started = Instant::now();
    let mut child = common::spawn(
        binary_in(cache)
            .args(["watch", "configmaps", "-n", "perf", "-o", "jsonl"])
            .args(["--object", "none", "--until-synced"])
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    );
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let reader = std::thread::spawn(move || {
        let mut synced = None;
        for line in stdout.lines() {
            if synced.is_none() && line.expect("output").contains(r#""event":"synced""#) {
                synced = Some(started.elapsed());
            }
        }
        synced.expect("a synced line")
    });
    let (succeeded, peak) = common::wait_with_peak(&mut child);
    let exited = started.elapsed();
    assert!(succeeded, "kubectl-deltas watch failed");
    Run {
        synced: reader.join().unwrap(),
        exited,
        peak,
    }
}

/// `__complete -- watch --kubeconfig K ""`, as a shell's TAB runs it: wall time and how many
/// resource names it offered.
fn complete_resources(kubeconfig: &std::path::Path, cache: &std::path::Path) -> (Duration, usize) {
    let started = Instant::now();
    let out = binary_in(cache)
        .args(["__complete", "--", "watch", "--kubeconfig"])
        .arg(kubeconfig)
        .arg("")
        .stdout(Stdio::piped())
        .output()
        .expect("the binary runs");
    let elapsed = started.elapsed();
    let candidates = String::from_utf8_lossy(&out.stdout).lines().count() - 1;
    (elapsed, candidates)
}

/// `cargo bench --bench sync -- startup`: issue #18's whole-process figures, runs interleaved.
async fn startup_bench(server: &FakeApiServer, kubeconfig: &std::path::Path) {
    let runs = std::env::var("SYNC_BENCH_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(9usize)
        .max(1);
    let discovery_requests = || {
        server
            .requests()
            .iter()
            .filter(|r| r.verb == support::fake_apiserver::Verb::Discovery)
            .count()
    };
    let warm = tempfile::tempdir().unwrap();
    let (mut curl, mut cold, mut warm_runs, mut completion) = (vec![], vec![], vec![], vec![]);
    let mut first_bytes = vec![];
    let (mut bytes, mut cold_discovery, mut warm_discovery, mut candidates) = (0, 0, 0, 0);
    // Fills the warm cache (and the server's page building).
    let kubeconfig = kubeconfig.to_owned();
    let url = server.url();
    let k = kubeconfig.clone();
    let warm_path = warm.path().to_owned();
    tokio::task::spawn_blocking(move || binary_until_synced(&k, &warm_path))
        .await
        .unwrap();
    for _ in 0..runs {
        let url = url.clone();
        let fetched = tokio::task::spawn_blocking(move || curl_fetch(&url))
            .await
            .unwrap();
        curl.push(fetched.elapsed);
        first_bytes.push(fetched.first_byte);
        bytes = fetched.bytes;

        let cold_cache = tempfile::tempdir().unwrap();
        let before = discovery_requests();
        let (k, path) = (kubeconfig.clone(), cold_cache.path().to_owned());
        cold.push(
            tokio::task::spawn_blocking(move || binary_until_synced(&k, &path))
                .await
                .unwrap(),
        );
        cold_discovery = discovery_requests() - before;

        let before = discovery_requests();
        let (k, path) = (kubeconfig.clone(), warm.path().to_owned());
        warm_runs.push(
            tokio::task::spawn_blocking(move || binary_until_synced(&k, &path))
                .await
                .unwrap(),
        );
        warm_discovery = discovery_requests() - before;

        let (k, path) = (kubeconfig.clone(), warm.path().to_owned());
        let (elapsed, offered) = tokio::task::spawn_blocking(move || complete_resources(&k, &path))
            .await
            .unwrap();
        completion.push(elapsed);
        candidates = offered;
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let spread = |mut v: Vec<Duration>| {
        v.sort();
        (v[v.len() / 2], v[0], v[v.len() - 1])
    };
    let peaks = |v: &[Run]| {
        let mut p: Vec<u64> = v.iter().map(|r| r.peak).collect();
        p.sort();
        (p[p.len() / 2], p[0], p[p.len() - 1])
    };
    // Each binary run against the curl run just before it: drift in the machine's speed cancels.
    let paired = |runs: &[Run], to: fn(&Run) -> Duration| {
        let mut ratios: Vec<f64> = runs
            .iter()
            .zip(&curl)
            .map(|(run, curl)| to(run).as_secs_f64() / curl.as_secs_f64())
            .collect();
        ratios.sort_by(f64::total_cmp);
        ratios[ratios.len() / 2]
    };
    let paired_ratios: Vec<(f64, f64)> = [&cold, &warm_runs]
        .iter()
        .map(|runs| (paired(runs, |r| r.synced), paired(runs, |r| r.exited)))
        .collect();
    let (curl_median, curl_min, curl_max) = spread(curl);
    println!(
        "objects: {}, list JSON: {:.1} MiB ({} bytes/object), encoded {}, {runs} interleaved runs, \
         median (min–max)",
        objects_for_startup(),
        mib(bytes as u64),
        bytes / objects_for_startup(),
        match collection_encoding() {
            CollectionEncoding::Streaming => "as it is sent",
            CollectionEncoding::Whole => "whole before the first byte",
        },
    );
    let (first_median, first_min, first_max) = spread(first_bytes);
    println!(
        "curl, the list in one request:        {:>6.1} ms ({:.1}–{:.1}); its first byte after \
         {:.1} ms ({:.1}–{:.1})",
        ms(curl_median),
        ms(curl_min),
        ms(curl_max),
        ms(first_median),
        ms(first_min),
        ms(first_max),
    );
    for ((what, runs, discovery), (synced_ratio, exit_ratio)) in [
        ("cold", &cold, cold_discovery),
        ("warm", &warm_runs, warm_discovery),
    ]
    .into_iter()
    .zip(paired_ratios)
    {
        let (peak, peak_min, peak_max) = peaks(runs);
        println!(
            "binary, {what} discovery cache: {discovery} discovery requests, peak RSS {:.1} MiB \
             ({:.1}–{:.1})",
            mib(peak),
            mib(peak_min),
            mib(peak_max),
        );
        for (to, times, ratio) in [
            (
                "synced",
                runs.iter().map(|r| r.synced).collect::<Vec<_>>(),
                synced_ratio,
            ),
            ("exit", runs.iter().map(|r| r.exited).collect(), exit_ratio),
        ] {
            let (median, min, max) = spread(times);
            println!(
                "  start to {to:<6}                     {:>6.1} ms ({:.1}–{:.1}) = {:.2}× curl's \
                 median; run by run {ratio:.2}× (median)",
                ms(median),
                ms(min),
                ms(max),
                median.as_secs_f64() / curl_median.as_secs_f64(),
            );
        }
    }
    let (median, min, max) = spread(completion);
    println!(
        "__complete resource names, warm cache: {:>5.1} ms ({:.1}–{:.1}), {candidates} names",
        ms(median),
        ms(min),
        ms(max)
    );
}

/// How the fake server encodes the startup bench's list: as it is sent, item by item, as
/// kube-apiserver 1.33+ does (the default: issue #30's "a server that encodes as it sends"), or
/// whole before the first byte as 1.28 does (`SYNC_BENCH_LIST=whole`).
fn collection_encoding() -> CollectionEncoding {
    match std::env::var("SYNC_BENCH_LIST").as_deref() {
        Ok("whole") => CollectionEncoding::Whole,
        Ok("streaming") | Err(_) => CollectionEncoding::Streaming,
        Ok(other) => panic!("SYNC_BENCH_LIST={other}: expected `whole` or `streaming`"),
    }
}

/// `SYNC_BENCH_OBJECTS` overrides it for the startup bench too.
fn objects_for_startup() -> usize {
    std::env::var("SYNC_BENCH_OBJECTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(5000)
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
        if std::env::args().any(|a| a == "startup") {
            server.set_collection_encoding(collection_encoding());
            server.create("namespaces", json!({"metadata": {"name": "perf"}}));
            for i in 0..objects_for_startup() {
                server.create("configmaps", small_object(i));
            }
            let dir = tempfile::tempdir().unwrap();
            let kubeconfig = server.write_kubeconfig(dir.path());
            if std::env::var_os("SYNC_BENCH_HOLD").is_some() {
                // To profile the binary by hand against the same server.
                println!("serving; kubeconfig: {}", kubeconfig.display());
                tokio::signal::ctrl_c().await.unwrap();
                return;
            }
            startup_bench(&server, &kubeconfig).await;
            return;
        }
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
