//! The thread-safe [`Workqueue`] with real worker threads.

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use super::super::default_controller_rate_limiter;
use super::*;
use crate::cache::reflector::TokioClock;

fn queue() -> Arc<Workqueue<u32>> {
    Arc::new(Workqueue::new(
        Box::new(default_controller_rate_limiter()),
        Arc::new(TokioClock),
    ))
}

/// client-go's `Get` blocks until an `Add` (`cond.Wait`), and returns shutdown once the queue
/// is shut down and empty.
#[test]
fn get_blocks_until_an_add_and_ends_at_shut_down_as_typed_get() {
    let q = queue();
    let worker = {
        let q = q.clone();
        thread::spawn(move || {
            let mut seen = Vec::new();
            while let Some(got) = q.get() {
                seen.push(got.item);
                q.done(&got.item);
            }
            seen
        })
    };
    thread::sleep(Duration::from_millis(20));
    q.add(1);
    q.add(2);
    while q.metrics().dones < 2 {
        thread::sleep(Duration::from_millis(1));
    }
    q.shut_down();
    assert_eq!(worker.join().unwrap(), [1, 2]);
}

/// A blocked `Get` wakes for a delayed key when it is due (the waiting loop's timer).
#[test]
fn a_blocked_get_takes_a_delayed_key_when_due_as_waiting_loop() {
    let q = queue();
    let started = q.now();
    let delay = q.add_rate_limited(7);
    assert_eq!(delay, Duration::from_millis(5));
    let got = q.get().unwrap();
    assert_eq!(got.item, 7);
    assert!(q.now().duration_since(started) >= Duration::from_millis(5));
    assert_eq!(q.num_requeues(&7), 1);
    q.forget(&7);
    q.done(&7);
    assert_eq!(q.num_requeues(&7), 0);
}

/// No key is processed by two workers at once, and every add is absorbed by some `Get`, with
/// four workers and adds racing them.
#[test]
fn four_workers_never_share_a_key_and_lose_no_add() {
    let q = queue();
    let busy = Arc::new(std::sync::Mutex::new(std::collections::HashSet::new()));
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let (q, busy) = (q.clone(), busy.clone());
            thread::spawn(move || {
                let mut absorbed = 0;
                while let Some(got) = q.get() {
                    assert!(
                        busy.lock().unwrap().insert(got.item),
                        "two workers on one key"
                    );
                    absorbed += got.adds;
                    thread::yield_now();
                    busy.lock().unwrap().remove(&got.item);
                    q.done(&got.item);
                }
                absorbed
            })
        })
        .collect();
    for i in 0..20_000u32 {
        q.add(i % 50);
    }
    while !q.is_empty() || q.metrics().gets != q.metrics().dones {
        thread::sleep(Duration::from_millis(1));
    }
    q.shut_down();
    let absorbed: u64 = workers.into_iter().map(|w| w.join().unwrap()).sum();
    assert_eq!(absorbed, 20_000);
}

/// A clock that runs 50 times faster than real time, as a replay's at `--speed 50`.
struct Fast {
    origin: std::time::Instant,
}

impl crate::cache::reflector::Clock for Fast {
    fn now(&self) -> std::time::Instant {
        self.origin + self.origin.elapsed() * 50
    }

    fn wall(&self) -> std::time::SystemTime {
        std::time::SystemTime::UNIX_EPOCH + self.origin.elapsed() * 50
    }

    fn sleep(&self, _: Duration) -> futures_util::future::BoxFuture<'static, ()> {
        Box::pin(std::future::ready(()))
    }

    fn in_real_time(&self, duration: Duration) -> Duration {
        duration / 50
    }
}

/// A blocked `Get` waits for a delayed key as long as the clock says its delay lasts in real
/// time: on a clock running 50× faster, a key added after 2 s of it comes after 40 ms.
#[test]
fn a_blocked_get_waits_the_clocks_time_not_real_time() {
    let q = Workqueue::new(
        Box::new(default_controller_rate_limiter()),
        Arc::new(Fast {
            origin: std::time::Instant::now(),
        }),
    );
    let real = std::time::Instant::now();
    let started = q.now();
    q.add_after(7, Duration::from_secs(2));
    assert_eq!(q.get().unwrap().item, 7);
    assert!(q.now().duration_since(started) >= Duration::from_secs(2));
    assert!(
        real.elapsed() < Duration::from_millis(1500),
        "{:?}",
        real.elapsed()
    );
}

/// Over controller-runtime's priority queue: a key added while it is processed is not handed to
/// a second worker, whose blocked `Get` wakes when the first worker's `Done` makes the key free
/// (`priorityqueue.go` `Done` notifies `handleReadyItems`).
#[test]
fn a_blocked_get_takes_a_key_freed_by_done_as_priority_queue_done() {
    use crate::cache::workqueue::PriorityQueue;
    let q: Arc<Workqueue<u32, PriorityQueue<u32>>> = Arc::new(Workqueue::with_queue(
        PriorityQueue::default(),
        Arc::new(TokioClock),
    ));
    q.add(1);
    let first = q.get().unwrap();
    q.add_with_priority(1, 5);
    let (tx, rx) = std::sync::mpsc::channel();
    let second = {
        let q = q.clone();
        thread::spawn(move || {
            let got = q.get();
            tx.send(got.map(|g| (g.item, g.priority, g.requeued)))
                .unwrap();
        })
    };
    assert!(
        rx.recv_timeout(Duration::from_millis(50)).is_err(),
        "key 1 is being processed"
    );
    q.done(&first.item);
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(5)).unwrap(),
        Some((1, Some(5), true))
    );
    second.join().unwrap();
}
