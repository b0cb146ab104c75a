//! A shared informer's fan-out (issue #17's benchmark): `cargo bench --bench processor`.
//!
//! 1. Throughput: 1M notifications distributed to 3 handlers, timed until every handler has
//!    processed every one (`processor/distribute_1M_to_3_handlers`), and the same through
//!    `SharedInformer::handle_deltas` (processDeltas into an Indexer, then distribute).
//! 2. Memory: the heap a listener's buffer takes for 100k pending notifications, counted by a
//!    global allocator wrapper, next to the bytes of the objects they point at, to show the
//!    buffer holds `Arc`s and not copies. Printed before the timings.

use std::alloc::{GlobalAlloc, Layout};
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group};
use kubectl_deltas::Object;
use kubectl_deltas::cache::reflector::TokioClock;
use kubectl_deltas::cache::{
    Delivery, Delta, DeltaType, Deltas, Indexer, Notification, ProcessorListener, SharedInformer,
    SharedProcessor,
};
use serde_json::value::RawValue;

/// Counts live heap bytes while `COUNTING` is set, around the binary's allocator.
struct Counting<A>(A);

static COUNTING: AtomicBool = AtomicBool::new(false);
static LIVE: AtomicI64 = AtomicI64::new(0);

// SAFETY: every call is forwarded unchanged to the wrapped allocator; only a counter is added.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Counting<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            LIVE.fetch_add(layout.size() as i64, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract is passed on.
        unsafe { self.0.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if COUNTING.load(Ordering::Relaxed) {
            LIVE.fetch_sub(layout.size() as i64, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract is passed on.
        unsafe { self.0.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            LIVE.fetch_add(new_size as i64 - layout.size() as i64, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract is passed on.
        unsafe { self.0.realloc(ptr, layout, new_size) }
    }
}

// The binary's allocator, so that the figures are the binary's.
#[cfg(feature = "jemalloc")]
#[global_allocator]
static GLOBAL: Counting<tikv_jemallocator::Jemalloc> = Counting(tikv_jemallocator::Jemalloc);
#[cfg(not(feature = "jemalloc"))]
#[global_allocator]
static GLOBAL: Counting<std::alloc::System> = Counting(std::alloc::System);

const KEYS: usize = 10_000;
const NOTIFICATIONS: usize = 1_000_000;
const HANDLERS: usize = 3;
const PENDING: usize = 100_000;

/// ConfigMaps of about `size` bytes of JSON each, decoded as the API server sends them.
fn objects(n: usize, size: usize, rv: u64) -> Vec<Arc<Object>> {
    (0..n)
        .map(|i| {
            let filler = "x".repeat(size.saturating_sub(200));
            let text = format!(
                r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"cm-{i}","namespace":"ns-{}","resourceVersion":"{}","labels":{{"app":"app-{}"}}}},"data":{{"filler":"{filler}"}}}}"#,
                i % 10,
                rv + i as u64,
                i % 20,
            );
            let json: &RawValue = serde_json::from_str(&text).unwrap();
            Arc::new(Object::from_json(json).unwrap())
        })
        .collect()
}

fn update(olds: &[Arc<Object>], news: &[Arc<Object>], i: usize) -> Notification<Object> {
    Notification::Update {
        old: olds[i % olds.len()].clone(),
        new: news[i % news.len()].clone(),
    }
}

/// A handler that looks at each notification and does nothing else.
fn handler() -> impl Fn(&Delivery<'_, Object>) + Send + 'static {
    |d: &Delivery<'_, Object>| {
        black_box(d.notification);
    }
}

fn listener(name: &str) -> Arc<ProcessorListener<Object>> {
    ProcessorListener::new(
        name,
        handler(),
        Duration::ZERO,
        Duration::ZERO,
        Instant::now(),
        Arc::new(TokioClock),
        Arc::new(|| true),
    )
}

/// A started processor with `HANDLERS` listeners.
fn processor() -> (SharedProcessor<Object>, Vec<Arc<ProcessorListener<Object>>>) {
    let processor = SharedProcessor::new(Arc::new(TokioClock));
    let listeners: Vec<_> = (0..HANDLERS).map(|i| listener(&format!("h{i}"))).collect();
    for l in &listeners {
        processor.add_listener(l.clone()).unwrap();
    }
    processor.start().unwrap();
    (processor, listeners)
}

fn wait_all(listeners: &[Arc<ProcessorListener<Object>>], expected: u64) {
    for l in listeners {
        assert!(l.wait_drained(Duration::from_secs(600)));
        assert_eq!(l.stats().processed, expected);
    }
}

fn throughput(c: &mut Criterion) {
    let olds = objects(KEYS, 300, 1);
    let news = objects(KEYS, 300, 1 + KEYS as u64);
    let mut group = c.benchmark_group("processor");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(15));
    group.throughput(Throughput::Elements(NOTIFICATIONS as u64));

    // distribute() on the calling thread, each handler on its own: timed until the last handler
    // has returned from the last notification.
    group.bench_function("distribute_1M_to_3_handlers", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let (processor, listeners) = processor();
                let started = Instant::now();
                for i in 0..NOTIFICATIONS {
                    processor.distribute(update(&olds, &news, i), false);
                }
                wait_all(&listeners, NOTIFICATIONS as u64);
                total += started.elapsed();
                processor.stop();
            }
            total
        })
    });

    // HandleDeltas: each popped batch (one Updated delta) applied to an Indexer of 10k objects by
    // processDeltas, then distributed; timed until every handler is done.
    let batches: Vec<Deltas<Object>> = (0..NOTIFICATIONS)
        .map(|i| {
            let obj = if i % 2 == 0 { &news } else { &olds }[i % KEYS].clone();
            Deltas::new(vec![Delta::new(DeltaType::Updated, obj)])
        })
        .collect();
    group.bench_function("handle_deltas_1M_to_3_handlers", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let mut indexer = Indexer::new();
                for obj in &olds {
                    indexer.add(obj.clone());
                }
                let informer = SharedInformer::new(indexer, Duration::ZERO, Arc::new(TokioClock));
                let registrations: Vec<_> = (0..HANDLERS)
                    .map(|i| {
                        informer
                            .add_event_handler(format!("h{i}"), handler())
                            .unwrap()
                    })
                    .collect();
                informer.start(|| true).unwrap();
                let listeners: Vec<_> = registrations.iter().map(|r| r.listener.clone()).collect();
                let started = Instant::now();
                for batch in &batches {
                    black_box(informer.handle_deltas(batch, false));
                }
                wait_all(&listeners, NOTIFICATIONS as u64);
                total += started.elapsed();
                informer.stop();
            }
            total
        })
    });
    group.finish();
}

/// Heap bytes allocated by `f` and still live after it.
fn live_bytes_after(f: impl FnOnce()) -> i64 {
    LIVE.store(0, Ordering::SeqCst);
    COUNTING.store(true, Ordering::SeqCst);
    f();
    COUNTING.store(false, Ordering::SeqCst);
    LIVE.load(Ordering::SeqCst)
}

/// The heap of `PENDING` notifications waiting in listeners whose handler never runs (the
/// processor is not started), for objects of two sizes and for one and three listeners.
fn buffer_memory() {
    println!("processor/buffer_memory: {PENDING} pending notifications (updates, old and new)");
    for size in [300, 2048] {
        let olds = objects(PENDING, size, 1);
        let news = objects(PENDING, size, 1 + PENDING as u64);
        let object_bytes: usize = olds.iter().chain(&news).map(|o| o.body_len()).sum();
        for listeners in [1, HANDLERS] {
            let processor = SharedProcessor::new(Arc::new(TokioClock));
            let all: Vec<_> = (0..listeners).map(|i| listener(&format!("h{i}"))).collect();
            for l in &all {
                processor.add_listener(l.clone()).unwrap();
            }
            let bytes = live_bytes_after(|| {
                for i in 0..PENDING {
                    processor.distribute(update(&olds, &news, i), false);
                }
            });
            assert!(all.iter().all(|l| l.stats().depth == PENDING));
            let per = bytes as f64 / PENDING as f64;
            println!(
                "  objects of ~{size} B ({:.1} MiB of object bodies referenced), {listeners} \
                 listener(s): {:.2} MiB of heap = {per:.0} B per notification, {:.0} B per \
                 notification per listener",
                object_bytes as f64 / (1024.0 * 1024.0),
                bytes as f64 / (1024.0 * 1024.0),
                per / listeners as f64,
            );
            drop(processor);
        }
    }
}

criterion_group!(benches, throughput);

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this with no argument.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    buffer_memory();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
