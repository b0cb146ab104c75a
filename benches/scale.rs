//! A replay of a million objects to HasSynced: issue #30's scale bench. Prints wall time, the
//! binary's peak RSS against the list's JSON, and bytes per object; `cargo bench --bench scale`
//! (build the binary first: `cargo build --release`; `KUBECTL_DELTAS_BIN` points elsewhere).
//!
//! Two recordings are generated into a temporary directory, each one list of `SCALE_BENCH_OBJECTS`
//! (default 1,000,000) in pages of 500, as the Reflector pages a list:
//! - `full`: ConfigMaps of ~1 KiB (metadata with labels and an owner, and `data`);
//! - `metadata`: the same objects as `record --metadata-only` records them,
//!   `PartialObjectMetadata` with ~300 B of metadata each (header `"metadataOnly": true`).
//!
//! Each is replayed with `kubectl-deltas replay FILE --since-now --until-synced -q`: the Reflector
//! lists every page, replaces the queue with the whole list and the consumer pops every object
//! into the Indexer; the command exits at HasSynced. Its peak RSS is the child's own `VmHWM`,
//! sampled every 2 ms (`benches/common`). The JSON figure is the bytes of the list items, what an
//! API server would send for them. Nothing here runs under `cargo test`.

mod common;

use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use common::{release_binary, spawn, wait_with_peak};

const PAGE: usize = 500;

fn objects() -> usize {
    std::env::var("SCALE_BENCH_OBJECTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000)
}

/// The metadata of object `i`: ~300 B of JSON, as a Deployment's ReplicaSet's ConfigMap has it.
fn metadata(i: usize) -> String {
    format!(
        r#"{{"name":"cm-{i:07}","namespace":"team-{ns:02}","uid":"{i:08x}-7c1d-4e2f-8a9b-{u:012x}","resourceVersion":"{rv}","creationTimestamp":"2026-11-20T08:00:00Z","labels":{{"app":"shop","component":"cart","shard":"{shard}"}},"annotations":{{"owner":"team-{ns:02}@example.com"}}}}"#,
        ns = i % 40,
        u = i * 2_654_435_761 % (1 << 48),
        rv = 10_000_000 + i,
        shard = i % 16,
    )
}

/// A ConfigMap of ~1 KiB: [`metadata`] and ~700 B of data.
fn full_item(i: usize) -> String {
    format!(
        r#"{{"metadata":{},"data":{{"config.yaml":"{i:0>680}","mode":"fast"}}}}"#,
        metadata(i)
    )
}

/// The same object listed for its metadata only.
fn partial_item(i: usize) -> String {
    format!(
        r#"{{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{}}}"#,
        metadata(i)
    )
}

/// Writes the recording of one paged list of `n` items to `path`; returns the items' JSON bytes.
fn write_recording(path: &Path, n: usize, metadata_only: bool) -> u64 {
    let mut out = BufWriter::new(std::fs::File::create(path).unwrap());
    let header_flag = if metadata_only {
        r#","metadataOnly":true"#
    } else {
        ""
    };
    writeln!(
        out,
        r#"{{"kind":"header","v":1,"resource":{{"group":"","version":"v1","kind":"ConfigMap","plural":"configmaps","namespaced":true}},"startedAt":"2026-11-20T09:00:00Z"{header_flag}}}"#
    )
    .unwrap();
    let mut json = 0u64;
    let pages = n.div_ceil(PAGE);
    for page in 0..pages {
        let items: Vec<String> = (page * PAGE..((page + 1) * PAGE).min(n))
            .map(|i| {
                if metadata_only {
                    partial_item(i)
                } else {
                    full_item(i)
                }
            })
            .collect();
        json += items.iter().map(|i| i.len() as u64 + 1).sum::<u64>();
        let more = if page + 1 < pages {
            format!(r#","continue":"page-{}""#, page + 1)
        } else {
            String::new()
        };
        writeln!(
            out,
            r#"{{"t":{page},"type":"LIST","resourceVersion":"20000000"{more},"items":[{}]}}"#,
            items.join(",")
        )
        .unwrap();
    }
    out.flush().unwrap();
    json
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn main() {
    // `cargo bench` passes `--bench`; filters name the variants to run.
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let n = objects();
    let dir = tempfile::tempdir().unwrap();
    for (name, metadata_only) in [("full", false), ("metadata", true)] {
        if !filters.is_empty() && !filters.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        let path = dir.path().join(format!("{name}.jsonl"));
        let json = write_recording(&path, n, metadata_only);
        let started = Instant::now();
        let mut child = spawn(
            Command::new(release_binary())
                .args(["replay", path.to_str().unwrap()])
                .args(["--since-now", "--until-synced", "-q", "-o", "jsonl"])
                .stdout(Stdio::null())
                .stderr(Stdio::inherit()),
        );
        let (ok, peak) = wait_with_peak(&mut child);
        let elapsed = started.elapsed();
        assert!(ok, "the replay failed");
        println!(
            "{name}: {n} objects, {:.1} MiB of JSON ({:.0} B each): HasSynced in {:.2} s, peak \
             RSS {:.1} MiB = {:.2}× the JSON, {:.0} B per object",
            mib(json),
            json as f64 / n as f64,
            elapsed.as_secs_f64(),
            mib(peak),
            peak as f64 / json as f64,
            peak as f64 / n as f64,
        );
        std::fs::remove_file(&path).unwrap();
    }
}
