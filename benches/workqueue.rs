//! client-go's workqueue in the library (issue #28's benchmark): `cargo bench --bench workqueue`.
//!
//! One "operation" is a key's round trip: `add`, `get`, `done`, the three calls a handler and a
//! worker make per reconcile. Keys are "namespace/name" strings, as a controller's are.
//!
//! - `workqueue/add_get_done_1M`: 1M round trips over 1k keys through `RateLimitingQueue` (the
//!   state an instant replay drives, no lock), the key queued and taken one at a time.
//! - `workqueue/burst_1M`: the same 1M adds arriving in bursts of 1k keys, each key added 10
//!   times (9 adds fold) before the worker drains the queue.
//! - `workqueue/locked_add_get_done_1M`: 1M round trips through `Workqueue` (one lock, the clock
//!   read at every call), as a live handler and worker make them, on one thread.
//! - `workqueue/threads_1M`: the handler on the bench's thread, 4 worker threads calling the
//!   blocking `get`, timed until every add is absorbed.
//! - `workqueue/priority_add_get_done_1M`: `add_get_done_1M` through controller-runtime's
//!   `PriorityQueue` (`--controller …,queue=priority`), every key at priority 0.
//! - `workqueue/priority_burst_1M`: `burst_1M` through the `PriorityQueue`, every key first
//!   added at `LOW_PRIORITY` (an initial list) and every other key's last add at 0 (a change),
//!   which moves it behind its new priority.

use std::hint::black_box;
use std::sync::Arc;
use std::thread;
use std::time::Instant;

use criterion::{Criterion, Throughput, criterion_group};
use kubectl_deltas::cache::reflector::TokioClock;
use kubectl_deltas::cache::workqueue::{
    LOW_PRIORITY, PriorityQueue, RateLimitingQueue, Workqueue, default_controller_rate_limiter,
};

const OPS: usize = 1_000_000;
const KEYS: usize = 1_000;

fn keys() -> Vec<Arc<str>> {
    (0..KEYS)
        .map(|i| Arc::from(format!("default/object-{i:04}")))
        .collect()
}

fn throughput(c: &mut Criterion) {
    let keys = keys();
    let mut group = c.benchmark_group("workqueue");
    group.sample_size(10);
    group.throughput(Throughput::Elements(OPS as u64));

    group.bench_function("add_get_done_1M", |b| {
        b.iter(|| {
            let mut q = RateLimitingQueue::<Arc<str>>::default();
            let now = Instant::now();
            for i in 0..OPS {
                q.add(keys[i % KEYS].clone(), now);
                let got = q.get(now).unwrap();
                q.done(&got.item, now);
            }
            black_box(q.metrics(now))
        });
    });

    group.bench_function("burst_1M", |b| {
        b.iter(|| {
            let mut q = RateLimitingQueue::<Arc<str>>::default();
            let now = Instant::now();
            for _ in 0..OPS / (KEYS * 10) {
                for _ in 0..10 {
                    for key in &keys {
                        q.add(key.clone(), now);
                    }
                }
                while let Some(got) = q.get(now) {
                    q.done(&got.item, now);
                }
            }
            black_box(q.metrics(now))
        });
    });

    group.bench_function("priority_add_get_done_1M", |b| {
        b.iter(|| {
            let mut q = PriorityQueue::<Arc<str>>::default();
            let now = Instant::now();
            for i in 0..OPS {
                q.add(keys[i % KEYS].clone(), 0, now);
                let got = q.get(now).unwrap();
                q.done(&got.item, now);
            }
            black_box(q.metrics(now))
        });
    });

    group.bench_function("priority_burst_1M", |b| {
        b.iter(|| {
            let mut q = PriorityQueue::<Arc<str>>::default();
            let now = Instant::now();
            for _ in 0..OPS / (KEYS * 10) {
                for round in 0..10 {
                    for (i, key) in keys.iter().enumerate() {
                        let changed = round == 9 && i % 2 == 0;
                        let priority = if changed { 0 } else { LOW_PRIORITY };
                        q.add(key.clone(), priority, now);
                    }
                }
                while let Some(got) = q.get(now) {
                    q.done(&got.item, now);
                }
            }
            black_box(q.metrics(now))
        });
    });

    group.bench_function("locked_add_get_done_1M", |b| {
        b.iter(|| {
            let q = Workqueue::new(
                Box::new(default_controller_rate_limiter()),
                Arc::new(TokioClock),
            );
            for i in 0..OPS {
                q.add(keys[i % KEYS].clone());
                let got = q.get().unwrap();
                q.done(&got.item);
            }
            black_box(q.metrics())
        });
    });

    group.bench_function("threads_1M", |b| {
        b.iter(|| {
            let q = Arc::new(Workqueue::new(
                Box::new(default_controller_rate_limiter()),
                Arc::new(TokioClock),
            ));
            let workers: Vec<_> = (0..4)
                .map(|_| {
                    let q = q.clone();
                    thread::spawn(move || {
                        let mut absorbed = 0u64;
                        while let Some(got) = q.get() {
                            absorbed += got.adds;
                            q.done(&got.item);
                        }
                        absorbed
                    })
                })
                .collect();
            for i in 0..OPS {
                q.add(keys[i % KEYS].clone());
            }
            loop {
                let m = q.metrics();
                if m.depth == 0 && m.gets == m.dones {
                    break;
                }
                thread::yield_now();
            }
            q.shut_down();
            let absorbed: u64 = workers.into_iter().map(|w| w.join().unwrap()).sum();
            assert_eq!(absorbed, OPS as u64);
        });
    });
    group.finish();
}

criterion_group!(benches, throughput);

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this with no argument.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
