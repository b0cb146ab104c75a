//! The time source of a Reflector. Every wait (backoff, resync and verify ticks) goes through a
//! [`Clock`], so that an offline replay can run on a virtual clock where nothing really sleeps.

use std::fmt;
use std::time::{Duration, Instant, SystemTime};

use futures_util::future::BoxFuture;

/// Tells the time and waits.
pub trait Clock: Send + Sync + 'static {
    /// A monotonic instant, for measuring durations and the backoff's healthy period.
    fn now(&self) -> Instant;
    /// Wall-clock time, for stamping [`ReflectorEvent`](crate::cache::ReflectorEvent)s.
    fn wall(&self) -> SystemTime;
    /// Completes after `duration` (of this clock's time).
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()>;
    /// How long `duration` of this clock's time lasts in real time: what a thread that must block
    /// for it (a condition variable's timeout, a worker's simulated work) waits. Real time for
    /// real clocks; a replay at `--speed X` runs X times faster, and its clock says `duration / X`.
    fn in_real_time(&self, duration: Duration) -> Duration {
        duration
    }
}

/// A shared clock is a clock: an `Arc<ManualClock>` or an `Arc<dyn Clock>` is the
/// `Clock + Clone` an informer runs on.
impl<C: Clock + ?Sized> Clock for std::sync::Arc<C> {
    fn now(&self) -> Instant {
        (**self).now()
    }

    fn wall(&self) -> SystemTime {
        (**self).wall()
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        (**self).sleep(duration)
    }

    fn in_real_time(&self, duration: Duration) -> Duration {
        (**self).in_real_time(duration)
    }
}

/// Real time, sleeping with tokio's timer (so `tokio::time::pause` also applies).
#[derive(Clone, Copy, Default)]
pub struct TokioClock;

impl fmt::Debug for TokioClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TokioClock")
    }
}

impl Clock for TokioClock {
    fn now(&self) -> Instant {
        tokio::time::Instant::now().into_std()
    }

    fn wall(&self) -> SystemTime {
        SystemTime::now()
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}
