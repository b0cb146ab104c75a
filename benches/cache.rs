//! Throughput of the informer cache: the targets of the core-cache issue.
//!
//! `cargo bench --bench cache` — figures are per element (delta or object), see docs/benchmarks.md.

// The binary's allocator, so that the figures are the binary's.
#[cfg(feature = "jemalloc")]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use std::convert::Infallible;
use std::hint::black_box;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use kubectl_deltas::Object;
use kubectl_deltas::cache::{
    DeltaFifo, IndexSpec, Indexer, InformerQueue, ProcessError, ProcessLoop, ReflectorStore,
};
use serde_json::value::RawValue;

/// `n` small pods spread over 10 namespaces, 20 apps and 50 nodes.
fn pods(n: usize, rv: u64) -> Vec<Arc<Object>> {
    pods_from(0, n, rv)
}

/// Pods `first..first + n`, decoded from JSON as the API server sends them (so their metadata is
/// held as text, as in a real cache).
fn pods_from(first: usize, n: usize, rv: u64) -> Vec<Arc<Object>> {
    (first..first + n)
        .map(|i| {
            let text = format!(
                r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"pod-{i}","namespace":"ns-{}","resourceVersion":"{}","labels":{{"app":"app-{}"}}}},"spec":{{"nodeName":"node-{}"}}}}"#,
                i % 10,
                rv + i as u64,
                i % 20,
                i % 50
            );
            let json: &RawValue = serde_json::from_str(&text).unwrap();
            Arc::new(Object::from_json(json).unwrap())
        })
        .collect()
}

fn pop_all(fifo: &DeltaFifo<Object>) -> usize {
    let mut popped = 0;
    while let Ok(Some(p)) = fifo.try_pop(|d, _| Ok::<_, ProcessError<Infallible>>(d.len())) {
        popped += p.output;
    }
    popped
}

fn fifo_throughput(c: &mut Criterion) {
    const N: usize = 1_000_000;
    let objects = pods(N, 1);
    let mut group = c.benchmark_group("delta_fifo");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Elements(N as u64));

    // 1M distinct objects streamed through the queue: the consumer keeps up, popping every chunk
    // of 1024 keys the producer queues, so the queue stays short as in a live informer.
    group.bench_function("enqueue_pop_1M_streaming", |b| {
        b.iter_batched(
            DeltaFifo::<Object>::new,
            |fifo| {
                let mut popped = 0;
                for chunk in objects.chunks(1024) {
                    for obj in chunk {
                        fifo.add(obj.clone());
                    }
                    popped += pop_all(&fifo);
                }
                assert_eq!(popped, N);
                fifo
            },
            BatchSize::PerIteration,
        )
    });

    // Worst case: all 1M keys resident in the queue before the first pop (a consumer stalled for
    // the whole initial list of a huge cluster); dominated by growing the tables to 1M entries.
    group.bench_function("enqueue_pop_1M_resident", |b| {
        b.iter_batched(
            DeltaFifo::<Object>::new,
            |fifo| {
                for obj in &objects {
                    fifo.add(obj.clone());
                }
                assert_eq!(pop_all(&fifo), N);
                fifo
            },
            BatchSize::PerIteration,
        )
    });

    // 1M updates over 10k keys: deltas coalesce into queued keys.
    let hot: Vec<_> = objects[..10_000].to_vec();
    group.bench_function("enqueue_pop_1M_over_10k_keys", |b| {
        b.iter_batched(
            DeltaFifo::<Object>::new,
            |fifo| {
                for i in 0..N {
                    fifo.update(hot[i % hot.len()].clone());
                    if i % 1000 == 999 {
                        // Pop a few as a consumer would, so Deltas stay short.
                        for _ in 0..100 {
                            let _ = fifo.try_pop(|_, _| Ok::<_, ProcessError<Infallible>>(()));
                        }
                    }
                }
                pop_all(&fifo);
                fifo
            },
            BatchSize::PerIteration,
        )
    });

    // A producer thread and a consumer thread, with the consumer applying each batch to an
    // indexer through process_deltas, as the tool runs.
    group.bench_function("producer_consumer_1M_into_indexer", |b| {
        b.iter_batched(
            || {
                let indexer = Indexer::new();
                let fifo = Arc::new(DeltaFifo::new().known_objects(Arc::new(indexer.reader())));
                (fifo, indexer)
            },
            |(fifo, indexer)| {
                let producer = {
                    let fifo = fifo.clone();
                    let objects = objects.clone();
                    thread::spawn(move || {
                        for obj in objects {
                            fifo.add(obj);
                        }
                        fifo.close();
                    })
                };
                let mut controller = ProcessLoop::new(fifo, indexer);
                let indexer = controller.indexer().clone();
                let mut batches = 0;
                while controller.process_next().is_some() {
                    batches += 1;
                }
                producer.join().unwrap();
                black_box(batches);
                indexer
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

fn replace_throughput(c: &mut Criterion) {
    const N: usize = 100_000;
    let known = pods(N, 1);
    let relisted = pods(N, 1_000_000);
    let mut group = c.benchmark_group("delta_fifo_replace");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Elements(N as u64));
    // A steady-state relist: the indexer knows 100k objects, the list brings 100k newer versions
    // of which 1% are new names (so 1% of the known ones become tombstones).
    let mut indexer = Indexer::new();
    for obj in &known {
        indexer.add(obj.clone());
    }
    let mut list = relisted.clone();
    let fresh = pods(N / 100, 2_000_000);
    for (slot, obj) in list.iter_mut().step_by(100).zip(fresh) {
        let mut renamed = (*obj).clone();
        renamed.meta_mut().name = Some(format!("{}-new", renamed.name().unwrap().to_owned()));
        *slot = Arc::new(renamed);
    }
    group.bench_function("replace_100k_into_populated_fifo", |b| {
        b.iter_batched(
            || {
                let fifo = DeltaFifo::new().known_objects(Arc::new(indexer.reader()));
                // The queue is populated too: 1% of the keys have a pending update.
                for obj in known.iter().step_by(100) {
                    fifo.update(obj.clone());
                }
                (fifo, list.clone())
            },
            |(fifo, list)| {
                fifo.replace(list, "2000000");
                fifo
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

fn indexer_throughput(c: &mut Criterion) {
    const N: usize = 100_000;
    let objects = pods(N, 1);
    let mut group = c.benchmark_group("indexer");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Elements(N as u64));
    let specs: Vec<IndexSpec> = ["namespace", "label:app", "field:spec.nodeName"]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
    // As in the live pipeline: each object is indexed shortly after it was decoded, so it is still
    // in cache. Chunks of 1024 objects are built (untimed) right before they are added.
    group.bench_function("add_100k_with_3_indices_streaming", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let mut indexer = Indexer::new();
                for spec in &specs {
                    indexer.add_indexer(spec.name(), spec.index_func()).unwrap();
                }
                for chunk in 0..N / 1000 {
                    let objects = pods_from(chunk * 1000, 1000, 1);
                    let start = Instant::now();
                    for obj in &objects {
                        indexer.add(obj.clone());
                    }
                    total += start.elapsed();
                }
                black_box(&indexer);
            }
            total
        })
    });

    // 100k objects built up front, so most of them have left the CPU caches by the time they
    // are added: the cost of indexing cold objects.
    group.bench_function("add_100k_with_3_indices_cold", |b| {
        b.iter_batched(
            || {
                let mut indexer = Indexer::new();
                for spec in &specs {
                    indexer.add_indexer(spec.name(), spec.index_func()).unwrap();
                }
                indexer
            },
            |mut indexer| {
                for obj in &objects {
                    indexer.add(obj.clone());
                }
                indexer
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(
    benches,
    fifo_throughput,
    replace_throughput,
    indexer_throughput
);
criterion_main!(benches);
