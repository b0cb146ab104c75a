//! Batches rendered per second: the renderer must not be the bottleneck of `watch` (issue #4:
//! ≥ 150k batches/s for `-o jsonl --object meta`).
//!
//! `cargo bench --bench render` — a 200k-event scenario (pods created, updated and deleted, one
//! batch per event, each update carrying the cache's previous state) is built once, then each
//! renderer writes every batch to `/dev/null`, one write and flush per line as the binary does
//! on stdout. Figures are per batch; see docs/benchmarks.md.

// The binary's allocator, so that the figures are the binary's.
#[cfg(feature = "jemalloc")]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use std::fs::File;
use std::hint::black_box;
use std::io::{self, Write};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use jiff::tz::TimeZone;
use kube::api::ApiResource;
use kubectl_deltas::Object;
use kubectl_deltas::cache::{Batch, DeltaFifo, Indexer, ProcessLoop, ReflectorStore};
use kubectl_deltas::render::document::{Documents, Format};
use kubectl_deltas::render::jsonl::JsonLines;
use kubectl_deltas::render::timeline::{Timeline, TimelineOptions};
use kubectl_deltas::render::{BatchView, ObjectMode, Renderer};
use serde_json::json;

const EVENTS: usize = 200_000;
const PODS: usize = 20_000;

fn pod(i: usize, rv: u64, phase: &str, restarts: u64) -> Arc<Object> {
    let ar = ApiResource::erase::<k8s_openapi::api::core::v1::Pod>(&());
    let mut obj = Object::new(&format!("web-{i}"), &ar).within(&format!("ns-{}", i % 10));
    obj.meta_mut().resource_version = Some(rv.to_string());
    obj.meta_mut().uid = Some(format!("2f0c1a5e-0000-4000-8000-{i:012}"));
    obj.meta_mut().labels = Some(
        [
            ("app".to_owned(), format!("app-{}", i % 20)),
            ("pod-template-hash".to_owned(), "7f9c8d6b5".to_owned()),
        ]
        .into(),
    );
    obj.set_field(
        "spec",
        &json!({"nodeName": format!("node-{}", i % 50),
                "containers": [{"name": "web", "image": "nginx:1.27"}]}),
    )
    .unwrap();
    obj.set_field(
        "status",
        &json!({"phase": phase, "podIP": format!("10.0.{}.{}", i / 250 % 250, i % 250),
                "containerStatuses": [{"name": "web", "ready": phase == "Running",
                                       "restartCount": restarts}]}),
    )
    .unwrap();
    // Through JSON, so that the metadata is held as text, as in a cache fed by a server.
    let text = serde_json::to_string(&obj).unwrap();
    let json: &serde_json::value::RawValue = serde_json::from_str(&text).unwrap();
    Arc::new(Object::from_json(json).unwrap())
}

/// 200k watch events over 20k pods, each popped as its own batch: the first event of a pod adds
/// it, later ones update its phase or restart count, every 8th of those deletes it (the next
/// event for that pod adds it again).
fn scenario() -> Vec<Batch<Object>> {
    let indexer = Indexer::new();
    let fifo = Arc::new(DeltaFifo::new().known_objects(Arc::new(indexer.reader())));
    let mut controller = ProcessLoop::new(fifo.clone(), indexer);
    let mut version = vec![0u64; PODS];
    let mut batches = Vec::with_capacity(EVENTS);
    for event in 0..EVENTS {
        let i = event % PODS;
        let rv = 1000 + event as u64;
        let obj = match version[i] {
            0 => pod(i, rv, "Pending", 0),
            n => pod(i, rv, "Running", n / 2),
        };
        match version[i] {
            0 => fifo.add(obj),
            n if n % 8 == 7 => {
                fifo.delete(obj.into());
            }
            _ => fifo.update(obj),
        }
        version[i] = if version[i] % 8 == 7 {
            0
        } else {
            version[i] + 1
        };
        batches.push(controller.try_process_next().expect("one batch per event"));
    }
    batches
}

fn dev_null() -> Box<dyn Write + Send> {
    match File::create("/dev/null") {
        Ok(f) => Box::new(f),
        Err(_) => Box::new(io::sink()),
    }
}

fn render_all(renderer: &mut dyn Renderer, batches: &[Batch<Object>]) {
    let time = SystemTime::now();
    for batch in batches {
        let view = BatchView {
            resource: "pods",
            time,
            batch,
        };
        renderer.batch(&view).unwrap();
    }
}

fn renderers(c: &mut Criterion) {
    let batches = scenario();
    let mut group = c.benchmark_group("render");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Elements(batches.len() as u64));

    group.bench_function("jsonl_meta_200k", |b| {
        b.iter(|| {
            let mut r = JsonLines::new(dev_null(), ObjectMode::Meta, false);
            render_all(&mut r, black_box(&batches));
        })
    });
    group.bench_function("jsonl_none_200k", |b| {
        b.iter(|| {
            let mut r = JsonLines::new(dev_null(), ObjectMode::None, false);
            render_all(&mut r, black_box(&batches));
        })
    });
    group.bench_function("jsonl_full_200k", |b| {
        b.iter(|| {
            let mut r = JsonLines::new(dev_null(), ObjectMode::Full, false);
            render_all(&mut r, black_box(&batches));
        })
    });
    group.bench_function("timeline_200k", |b| {
        b.iter(|| {
            let options = TimelineOptions {
                time_zone: TimeZone::system(),
                ..TimelineOptions::default()
            };
            let mut r = Timeline::new(dev_null(), options);
            render_all(&mut r, black_box(&batches));
        })
    });
    group.bench_function("yaml_meta_200k", |b| {
        b.iter(|| {
            let mut r = Documents::new(dev_null(), Format::Yaml, ObjectMode::Meta, false);
            render_all(&mut r, black_box(&batches));
        })
    });
    group.finish();
}

criterion_group!(benches, renderers);
criterion_main!(benches);
