//! [`ReplayClock`]: the Reflector's time during a replay is the recording's time.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use futures_util::future::BoxFuture;

use crate::cache::reflector::Clock;

/// A [`Clock`] that reads the recording: it shows the header's `startedAt` plus the `t` of the
/// last line the replay handed out, and its `sleep` completes at once.
///
/// So the Reflector's backoff delays are reported but not waited for (the recorded lines that
/// follow a backoff carry the `t` at which the live Reflector got past it), its event timestamps
/// are the recorded times, and the durations it measures (list duration, how long a watch was
/// open, and so "very short watch") are recorded durations. The replay, not the Reflector,
/// decides when time moves. Periodic tasks (resync ticker, consistency check) must be off, since
/// their sleeps would complete at once:
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
}

impl fmt::Debug for ReplayClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplayClock")
            .field("started_at", &self.inner.started_at)
            .field("t", &self.t())
            .finish()
    }
}

impl ReplayClock {
    /// A clock at `t = 0`, which is `started_at` on the wall.
    pub fn new(started_at: SystemTime) -> Self {
        ReplayClock {
            inner: Arc::new(Inner {
                origin: Instant::now(),
                started_at,
                t_us: AtomicU64::new(0),
            }),
        }
    }

    /// The time since the recording began, as far as the replay has got.
    pub fn t(&self) -> Duration {
        Duration::from_micros(self.inner.t_us.load(Ordering::Acquire))
    }

    /// Moves to `t` (never backwards).
    pub(super) fn advance_to(&self, t: Duration) {
        let micros = u64::try_from(t.as_micros()).unwrap_or(u64::MAX);
        self.inner.t_us.fetch_max(micros, Ordering::AcqRel);
    }

    /// The clock's instant at recorded time `t`.
    pub fn instant_at(&self, t: Duration) -> Instant {
        self.inner.origin + t
    }

    /// The clock's instant now (as [`Clock::now`]).
    pub fn now_instant(&self) -> Instant {
        self.instant_at(self.elapsed())
    }

    fn elapsed(&self) -> Duration {
        self.t()
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
}
