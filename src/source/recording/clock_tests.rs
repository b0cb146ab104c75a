//! The replay's clock: standing still between lines (instant), or running at `--speed`.

use std::time::{Duration, SystemTime};

use super::*;

fn start() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000)
}

#[test]
fn an_instant_replays_clock_moves_only_with_the_lines() {
    let clock = ReplayClock::new(start());
    assert_eq!(
        clock.due(Duration::from_secs(1)),
        None,
        "nothing waits for it"
    );
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(clock.wall(), start());
    clock.advance_to(Duration::from_millis(1500));
    assert_eq!(clock.wall(), start() + Duration::from_millis(1500));
    // Never backwards.
    clock.advance_to(Duration::from_millis(1000));
    assert_eq!(clock.t(), Duration::from_millis(1500));
}

/// At `--speed 10`, recorded time `t` is due `t / 10` after the start, the clock runs ten times
/// faster than real time in between, and never shows less than the last line's `t`.
#[tokio::test(start_paused = true)]
async fn a_speed_replays_clock_runs_at_the_factor_from_the_start() {
    let clock = ReplayClock::running(start(), 10.0);
    // Before the replay starts, it stands at t = 0.
    tokio::time::advance(Duration::from_secs(5)).await;
    assert_eq!(clock.wall(), start());
    let origin = tokio::time::Instant::now();
    assert_eq!(
        clock.due(Duration::from_secs(2)),
        Some(origin + Duration::from_millis(200))
    );
    tokio::time::advance(Duration::from_millis(50)).await;
    assert_eq!(clock.wall(), start() + Duration::from_millis(500));
    let before = clock.now();
    tokio::time::advance(Duration::from_millis(10)).await;
    assert_eq!(clock.now() - before, Duration::from_millis(100));
    // A line handed out late on the clock: it shows the line's t until it runs past it.
    clock.advance_to(Duration::from_secs(3));
    assert_eq!(clock.wall(), start() + Duration::from_secs(3));
    assert_eq!(
        clock.in_real_time(Duration::from_secs(1)),
        Duration::from_millis(100)
    );
}
