//! Replay throughput (issue #6): a generated recording of 1M watch events replayed through the
//! informer the binary runs (Reflector → DeltaFIFO → controller → Indexer, drained on the
//! replay's thread at each turn) in instant mode, without rendering. Prints
//! events/s and the peak RSS of the replay; `cargo bench --bench replay`.
//!
//! Two recordings of the same events, differing only in their `t`:
//! - `1_per_t`: the worst case for instant mode, where the consumer drains the FIFO after every
//!   event (1M turns);
//! - `100_per_t`: a busy cluster (100 events per millisecond), 10k turns.
//!
//! `REPLAY_BENCH_EVENTS` overrides the number of events, e.g. to profile with fewer.
//!
//! `cargo bench --bench replay -- binary` measures the release binary instead, as a user runs
//! it: `kubectl-deltas replay FILE -o jsonl --object meta -q` on the same two files, into
//! /dev/null and into a pipe whose reader takes what comes (as `| cat`), wall time and the child's
//! peak RSS (its own `VmHWM`, sampled every 2 ms while it runs: see
//! `benches/sync.rs` for why not `getrusage`). Build it first with `cargo build --release`;
//! `KUBECTL_DELTAS_BIN` points elsewhere.
//!
//! `cargo bench --bench replay -- compare` measures what `--compare` costs: the release binary's
//! `replay FILE -o jsonl --object meta -q` of one stack (`--client-go 1.32`) against
//! `--compare 1.28,1.32,1.35,latest` (four informers on the one stream, and the comparison at the
//! end), on the 100-per-`t` recording, into /dev/null.

// The binary's allocator, so that the figures are the binary's.
#[cfg(feature = "jemalloc")]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

mod common;

use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use common::vm_hwm;
use kubectl_deltas::Object;
use kubectl_deltas::cache::{
    Batch, Consumption, Informer, InformerConfig, InformerQueue, InformerSink, ReflectorConfig,
    ReflectorEvent,
};
use kubectl_deltas::source::recording::{Pace, RecordingListerWatcher, RecordingReader};
use tokio_util::sync::CancellationToken;

const KEYS: usize = 10_000;

fn events() -> usize {
    std::env::var("REPLAY_BENCH_EVENTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000)
}

/// A ConfigMap of about 700 bytes: labels, annotations, a few data keys.
fn object(i: usize, rv: usize, with_types: bool) -> String {
    let types = if with_types {
        r#""kind":"ConfigMap","apiVersion":"v1","#
    } else {
        ""
    };
    format!(
        concat!(
            r#"{{{types}"metadata":{{"name":"config-{i:05}","namespace":"ns-{ns}","uid":"0b6a2c1e-{i:04x}-4e1b-9c3f-5d2a7e8f{rv:04x}","#,
            r#""resourceVersion":"{rv}","creationTimestamp":"2026-01-05T10:00:00Z","#,
            r#""labels":{{"app":"app-{app}","tier":"backend","team":"team-{team}"}},"#,
            r#""annotations":{{"example.com/owner":"platform","example.com/revision":"{rv}"}}}},"#,
            r#""data":{{"settings.properties":"replicas={rv}\nlog.level=info\ncache.size=512\n","#,
            r#""feature-flags":"alpha=false,beta=true,gamma={rv}","endpoint":"https://svc-{app}.ns-{ns}.svc:8443/v1"}}}}"#
        ),
        types = types,
        i = i,
        ns = i % 20,
        app = i % 40,
        team = i % 7,
        rv = rv,
    )
}

/// Writes the recording: a header, a LIST of every key, then `n` events over the keys.
fn generate(path: &Path, n: usize, events_per_t: usize) {
    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    writeln!(
        out,
        r#"{{"kind":"header","v":1,"resource":{{"group":"","version":"v1","kind":"ConfigMap","plural":"configmaps","namespaced":true}},"namespace":null,"startedAt":"2026-01-05T10:00:00Z"}}"#
    )
    .unwrap();
    let items: Vec<String> = (0..KEYS).map(|i| object(i, 1, false)).collect();
    writeln!(
        out,
        r#"{{"t":0,"type":"LIST","resourceVersion":"1","items":[{}]}}"#,
        items.join(",")
    )
    .unwrap();
    let mut alive = vec![true; KEYS];
    for e in 0..n {
        let i = (e * 7919) % KEYS;
        let rv = e + 2;
        let t = 1 + e / events_per_t;
        let type_ = match (alive[i], e % 50) {
            (false, _) => "ADDED",
            (true, 0) => "DELETED",
            (true, _) => "MODIFIED",
        };
        alive[i] = type_ != "DELETED";
        writeln!(
            out,
            r#"{{"t":{t},"type":"{type_}","object":{}}}"#,
            object(i, rv, true)
        )
        .unwrap();
    }
    out.flush().unwrap();
}

/// The peak resident set of this process since the last reset, in MiB.
fn peak_rss_mib() -> f64 {
    vm_hwm("self").map_or(f64::NAN, |bytes| bytes as f64 / (1024.0 * 1024.0))
}

/// Resets VmHWM to the current RSS (Linux ≥ 4.0), so that the peak of one replay is measured
/// apart from what generating the file (or an earlier replay) used.
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

struct Figures {
    seconds: f64,
    batches: u64,
    cached: usize,
    peak_rss_mib: f64,
}

/// Counts the batches; shows nothing.
#[derive(Default)]
struct Count(AtomicU64);

impl InformerSink for Count {
    fn batch(&self, _: Batch<Object>, _: SystemTime, _: &dyn InformerQueue<Object>) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    fn event(&self, _: ReflectorEvent, _: &dyn InformerQueue<Object>) {}
}

async fn replay(path: &Path) -> Figures {
    reset_peak_rss();
    let start = Instant::now();
    let count = Arc::new(Count::default());
    let config = InformerConfig {
        consumption: Consumption::Inline,
        ..InformerConfig::default()
    };
    let informer = Informer::new(
        config,
        count.clone(),
        Arc::default(),
        CancellationToken::new(),
    );
    let reader = RecordingReader::open(path).unwrap();
    let lw = RecordingListerWatcher::new(reader, Pace::Instant(informer.clone())).unwrap();
    let (end, clock) = (lw.end(), lw.clock());
    let config = lw.reflector_config(ReflectorConfig::default());
    let stop = end.clone();
    informer
        .run(lw, config, clock, async move {
            let _ = stop.wait().await;
        })
        .await
        .unwrap();
    informer.finish().await;
    informer.shut_down().await;
    end.wait().await.unwrap();
    Figures {
        seconds: start.elapsed().as_secs_f64(),
        batches: count.0.load(Ordering::Relaxed),
        cached: informer.indexer().entries().len(),
        peak_rss_mib: peak_rss_mib(),
    }
}

/// Where the binary's replay writes.
#[derive(Clone, Copy)]
enum Destination {
    /// `> /dev/null`.
    DevNull,
    /// `| cat > /dev/null`: a pipe whose reader takes what comes, as a script reading JSON lines.
    Pipe,
}

impl Destination {
    fn describe(self) -> &'static str {
        match self {
            Destination::DevNull => "> /dev/null",
            Destination::Pipe => "| a reader",
        }
    }
}

/// Runs the release binary's replay of `path` into `into`; returns its wall time and peak RSS in
/// bytes.
fn binary_replay(path: &Path, into: Destination) -> (Duration, u64) {
    let started = Instant::now();
    let stdout = match into {
        Destination::DevNull => Stdio::from(std::fs::File::create("/dev/null").unwrap()),
        Destination::Pipe => Stdio::piped(),
    };
    let mut child = common::spawn(
        Command::new(common::release_binary())
            .arg("replay")
            .arg(path)
            .args(["-o", "jsonl", "--object", "meta", "-q"])
            .stdout(stdout),
    );
    // The reader: takes whatever is there, as `cat` does.
    let reader = child.stdout.take().map(|mut out| {
        std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()).unwrap())
    });
    let (succeeded, peak) = common::wait_with_peak(&mut child);
    if let Some(reader) = reader {
        reader.join().unwrap();
    }
    let elapsed = started.elapsed();
    assert!(succeeded, "the replay of {path:?} failed");
    (elapsed, peak)
}

/// Runs the release binary's replay of `path` with `args` into /dev/null; returns its wall time
/// and peak RSS in bytes. `--compare` exits 5 when the stacks differ: a finished run too.
fn binary_replay_with(path: &Path, args: &[&str]) -> (Duration, u64) {
    let started = Instant::now();
    let mut child = common::spawn(
        Command::new(common::release_binary())
            .arg("replay")
            .arg(path)
            .args(["-o", "jsonl", "--object", "meta", "-q"])
            .args(args)
            .stdout(Stdio::from(std::fs::File::create("/dev/null").unwrap())),
    );
    let (_, peak) = common::wait_with_peak(&mut child);
    let code = child.wait().unwrap().code();
    assert!(matches!(code, Some(0 | 5)), "the replay of {path:?} failed");
    (started.elapsed(), peak)
}

/// `-- compare`: one stack against four on the same recording, twice each, alternating.
fn compare(dir: &Path, n: usize) {
    let path = dir.join("replay-compare.jsonl");
    generate(&path, n, 100);
    let one: &[&str] = &["--client-go", "1.32"];
    let four: &[&str] = &["--compare", "1.28,1.32,1.35,latest"];
    for run in 1..=2 {
        let mut seconds = [0.0; 2];
        for (i, (label, args)) in [("1 stack", one), ("4 stacks", four)].iter().enumerate() {
            let (elapsed, peak) = binary_replay_with(&path, args);
            seconds[i] = elapsed.as_secs_f64();
            println!(
                "replay/compare/{label} (run {run}): {n} events + a {KEYS}-item LIST, 100 per t, \
                 in {:.2} s; peak RSS {:.0} MiB",
                elapsed.as_secs_f64(),
                peak as f64 / (1024.0 * 1024.0),
            );
        }
        println!(
            "replay/compare (run {run}): 4 stacks cost {:.2}x one",
            seconds[1] / seconds[0]
        );
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this with no argument.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let n = events();
    let dir = tempfile::tempdir().unwrap();
    if std::env::args().any(|a| a == "compare") {
        compare(dir.path(), n);
        return;
    }
    if std::env::args().any(|a| a == "binary") {
        for events_per_t in [1, 100] {
            let path = dir.path().join(format!("replay-{events_per_t}.jsonl"));
            generate(&path, n, events_per_t);
            let size = std::fs::metadata(&path).unwrap().len() as f64 / (1024.0 * 1024.0);
            for (run, into) in [
                (1, Destination::DevNull),
                (2, Destination::DevNull),
                (1, Destination::Pipe),
                (2, Destination::Pipe),
            ] {
                let (elapsed, peak) = binary_replay(&path, into);
                println!(
                    "replay/binary/{events_per_t}_per_t (run {run}): {n} events + a {KEYS}-item \
                     LIST ({size:.0} MiB), -o jsonl --object meta {}, in {:.2} s = \
                     {:.0} events/s; peak RSS {:.0} MiB",
                    into.describe(),
                    elapsed.as_secs_f64(),
                    n as f64 / elapsed.as_secs_f64(),
                    peak as f64 / (1024.0 * 1024.0),
                );
            }
            std::fs::remove_file(&path).unwrap();
        }
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    for events_per_t in [1, 100] {
        let path = dir.path().join(format!("replay-{events_per_t}.jsonl"));
        generate(&path, n, events_per_t);
        let size = std::fs::metadata(&path).unwrap().len() as f64 / (1024.0 * 1024.0);
        {
            let f = runtime.block_on(replay(&path));
            println!(
                "replay/{events_per_t}_per_t/inline: {n} events + a {KEYS}-item LIST \
                 ({size:.0} MiB) in {:.2} s = {:.0} events/s; {} batches, {} objects cached; \
                 peak RSS {:.0} MiB",
                f.seconds,
                n as f64 / f.seconds,
                f.batches,
                f.cached,
                f.peak_rss_mib,
            );
        }
        std::fs::remove_file(&path).unwrap();
    }
}
