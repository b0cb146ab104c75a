//! [`ReplayClock`]: the Reflector's time during a replay is the recording's time.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use futures_util::future::BoxFuture;

use crate::cache::reflector::Clock;

/// A [`Clock`] that reads the recording: it shows the header's `startedAt` plus the recorded time
/// the replay has reached, and its `sleep` completes at once.
///
/// How that time moves depends on the pace:
/// - an instant replay's ([`ReplayClock::new`]) is the `t` of the last line handed out: it stands
///   still between lines, and the replay, not the Reflector, decides when it moves;
/// - a replay at `--speed X` ([`ReplayClock::running`]) runs at X times real time from the moment
///   the replay starts (`t = 0`): lines are handed out when it reaches their `t`
///   (`due`), and between them it keeps running, so that pops, handler calls and a
///   controller's workers that come between two lines carry the recorded time they happened at,
///   and a duration of recorded time (a handler's delay, a reconcile, a rate limiter's retry)
///   lasts `1/X` of it in real time ([`Clock::in_real_time`]). It never shows less than the `t`
///   of the last line handed out.
///
/// Either way the Reflector's backoff delays are reported but not waited for (the recorded lines
/// that follow a backoff carry the `t` at which the live Reflector got past it), its event
/// timestamps are recorded times, and the durations it measures (list duration, how long a watch
/// was open, and so "very short watch") are recorded durations. Periodic tasks (resync ticker,
/// consistency check) must be off, since their sleeps would complete at once:
/// [`RecordingListerWatcher::reflector_config`](super::RecordingListerWatcher::reflector_config)
/// turns them off.
#[derive(Clone)]
pub struct ReplayClock {
    inner: Arc<Inner>,
}

struct Inner {
    origin: Instant,
    started_at: SystemTime,
    /// `t` in microseconds.
    t_us: AtomicU64,
    /// At `--speed`: how the clock runs with real time.
    running: Option<Running>,
}

/// A clock running at `factor` times real time from `since` (`t = 0`), set when the replay starts.
struct Running {
    factor: f64,
    /// Tokio's time, which paces the lines (and which tests may pause).
    since: OnceLock<tokio::time::Instant>,
}

impl fmt::Debug for ReplayClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplayClock")
            .field("started_at", &self.inner.started_at)
            .field("t", &self.t())
            .field("speed", &self.inner.running.as_ref().map(|r| r.factor))
            .finish()
    }
}

impl ReplayClock {
    /// A clock at `t = 0`, which is `started_at` on the wall, moved only by the lines handed out.
    pub fn new(started_at: SystemTime) -> Self {
        Self::with(started_at, None)
    }

    /// A clock at `t = 0`, which is `started_at` on the wall, that runs at `factor` (> 0) times
    /// real time once the replay starts (`due` is first asked).
    pub fn running(started_at: SystemTime, factor: f64) -> Self {
        let running = Running {
            factor: factor.max(1e-9),
            since: OnceLock::new(),
        };
        Self::with(started_at, Some(running))
    }

    fn with(started_at: SystemTime, running: Option<Running>) -> Self {
        ReplayClock {
            inner: Arc::new(Inner {
                origin: Instant::now(),
                started_at,
                t_us: AtomicU64::new(0),
                running,
            }),
        }
    }

    /// The wall time of `t = 0`.
    pub fn started_at(&self) -> SystemTime {
        self.inner.started_at
    }

    /// The `t` of the last line handed out.
    pub fn t(&self) -> Duration {
        Duration::from_micros(self.inner.t_us.load(Ordering::Acquire))
    }

    /// Moves to `t` (never backwards).
    pub(super) fn advance_to(&self, t: Duration) {
        let micros = u64::try_from(t.as_micros()).unwrap_or(u64::MAX);
        self.inner.t_us.fetch_max(micros, Ordering::AcqRel);
    }

    /// A running clock: the real instant at which it reaches recorded time `t` (`None`: later
    /// than this machine can count), the clock starting now if it has not yet. `None` as well for
    /// a clock that does not run.
    pub(super) fn due(&self, t: Duration) -> Option<tokio::time::Instant> {
        let running = self.inner.running.as_ref()?;
        let since = *running.since.get_or_init(tokio::time::Instant::now);
        let offset = Duration::try_from_secs_f64(t.as_secs_f64() / running.factor).ok()?;
        since.checked_add(offset)
    }

    /// The clock's instant at recorded time `t`.
    pub fn instant_at(&self, t: Duration) -> Instant {
        self.inner.origin + t
    }

    /// The clock's instant now (as [`Clock::now`]).
    pub fn now_instant(&self) -> Instant {
        self.instant_at(self.elapsed())
    }

    /// The recorded time reached: the last line's `t`, or, on a running clock, the real time
    /// since the start times the factor, if that is later.
    fn elapsed(&self) -> Duration {
        let t = self.t();
        let Some(running) = &self.inner.running else {
            return t;
        };
        let Some(since) = running.since.get() else {
            return t;
        };
        let run = Duration::try_from_secs_f64(since.elapsed().as_secs_f64() * running.factor)
            .unwrap_or(Duration::MAX);
        t.max(run)
    }
}

impl Clock for ReplayClock {
    fn now(&self) -> Instant {
        self.inner.origin + self.elapsed()
    }

    fn wall(&self) -> SystemTime {
        self.inner.started_at + self.elapsed()
    }

    fn sleep(&self, _duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(std::future::ready(()))
    }

    fn in_real_time(&self, duration: Duration) -> Duration {
        match &self.inner.running {
            Some(running) => Duration::try_from_secs_f64(duration.as_secs_f64() / running.factor)
                .unwrap_or(Duration::MAX),
            // It moves only when the replay hands out a line, whatever real time does: nothing
            // should block on it (an instant replay drives its handlers and workers inline).
            None => duration,
        }
    }
}

#[cfg(test)]
#[path = "clock_tests.rs"]
mod tests;
