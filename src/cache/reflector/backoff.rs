//! The Reflector's backoff between failed list/watch attempts: client-go's
//! `NewExponentialBackoffManager(800ms, 30s, 2m, 2.0, 1.0)`.
//!
//! Each delay is the current step with jitter added (`step × (1 + jitter × rand[0, 1))`,
//! apimachinery's `wait.Jitter`); the step then doubles up to the cap (`wait.Backoff.Step`). The
//! reset rule is `exponentialBackoffManagerImpl.getNextBackoff`'s: when more than `reset_after`
//! has passed since the previous delay was handed out (`clock.Now().Sub(lastBackoffStart) >
//! backoffResetDuration`), the step starts over at `initial`. That is measured from when the
//! previous backoff began, not from when the connection became healthy again: a 30 s backoff
//! followed by 91 s of healthy watching resets too.
//!
//! client-go 1.36's Reflector uses apimachinery's `Backoff.DelayWithReset` instead
//! (`backoffManager.Step` @v0.36.3, [`BackoffReset::SinceLastReset`]): its clock is `lastStart`,
//! set when the Reflector is built and moved only by a reset, so the step starts over on the
//! first backoff more than 2 minutes after the previous *reset*, however recent the previous
//! backoff: a Reflector failing every 90 s keeps growing its step with the older rule, and starts
//! over every other failure with this one.

use std::time::{Duration, Instant};

/// Parameters of a [`Backoff`].
#[derive(Debug, Clone, PartialEq)]
pub struct BackoffConfig {
    /// The first step (client-go: 800 ms).
    pub initial: Duration,
    /// Growth of the step per backoff (client-go: 2.0).
    pub factor: f64,
    /// Largest step (client-go: 30 s). Jitter may add up to `jitter × cap` on top.
    pub cap: Duration,
    /// Random fraction of the step added to each delay (client-go: 1.0).
    pub jitter: f64,
    /// When more than this has passed since the previous delay was handed out, the step starts
    /// over (client-go: 2 minutes).
    pub reset_after: Duration,
    /// Seeds the jitter so that a run (a test, a replay) is reproducible; `None` seeds randomly.
    pub seed: Option<u64>,
    /// What `reset_after` is measured from.
    pub reset_from: BackoffReset,
}

/// What a [`Backoff`]'s reset period is measured from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackoffReset {
    /// The previous delay handed out: `exponentialBackoffManagerImpl.getNextBackoff`, the
    /// Reflector's up to client-go 1.35.
    #[default]
    SincePreviousBackoff,
    /// The previous reset (or the first delay): `backoffManager.Step` of `DelayWithReset`
    /// (apimachinery @v0.36.3), the Reflector's from client-go 1.36.
    SinceLastReset,
}

impl Default for BackoffConfig {
    fn default() -> Self {
        BackoffConfig {
            initial: Duration::from_millis(800),
            factor: 2.0,
            cap: Duration::from_secs(30),
            jitter: 1.0,
            reset_after: Duration::from_secs(120),
            seed: None,
            reset_from: BackoffReset::SincePreviousBackoff,
        }
    }
}

impl BackoffConfig {
    /// The same growth with another first step and cap (tests use milliseconds).
    pub fn with_steps(mut self, initial: Duration, cap: Duration) -> Self {
        self.initial = initial;
        self.cap = cap;
        self
    }

    /// Makes the jitter reproducible.
    pub fn seeded(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// The longest delay [`Backoff::next_delay`] can hand out: the largest step with the most
    /// jitter (client-go's: 30 s × 2).
    pub fn longest_delay(&self) -> Duration {
        self.cap
            .max(self.initial)
            .mul_f64(1.0 + self.jitter.max(0.0))
    }
}

/// Exponential backoff with jitter and reset after a healthy period.
#[derive(Debug, Clone)]
pub struct Backoff {
    config: BackoffConfig,
    /// The step the next delay is based on; `initial ≤ step ≤ cap`.
    step: Duration,
    /// When the last delay was handed out (`SincePreviousBackoff`) or the step last started over
    /// (`SinceLastReset`); `None` before the first delay.
    last: Option<Instant>,
    rng: fastrand::Rng,
}

impl Backoff {
    /// A backoff at its first step.
    pub fn new(config: BackoffConfig) -> Self {
        let rng = match config.seed {
            Some(seed) => fastrand::Rng::with_seed(seed),
            None => fastrand::Rng::new(),
        };
        Backoff {
            step: config.initial,
            config,
            last: None,
            rng,
        }
    }

    /// The parameters.
    pub fn config(&self) -> &BackoffConfig {
        &self.config
    }

    /// The delay to wait now (at `now`, from the caller's clock), advancing the step.
    pub fn next_delay(&mut self, now: Instant) -> Duration {
        let due = self
            .last
            .is_none_or(|last| now.saturating_duration_since(last) > self.config.reset_after);
        if due {
            self.step = self.config.initial;
        }
        // `DelayWithReset` starts its clock when the Reflector is built, before any failure;
        // starting it at the first delay instead is the same: the step is at `initial` either way.
        if due || self.config.reset_from == BackoffReset::SincePreviousBackoff {
            self.last = Some(now);
        }
        let step = self.step;
        let jitter = self.config.jitter.max(0.0);
        let delay = if jitter > 0.0 {
            step.mul_f64(1.0 + jitter * self.rng.f64())
        } else {
            step
        };
        let grown = step.mul_f64(self.config.factor.max(1.0));
        self.step = grown.min(self.config.cap).max(self.config.initial);
        delay
    }

    /// Starts over at the first step.
    pub fn reset(&mut self) {
        self.step = self.config.initial;
        self.last = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_jitter() -> BackoffConfig {
        BackoffConfig {
            jitter: 0.0,
            ..BackoffConfig::default()
        }
    }

    #[test]
    fn doubles_up_to_the_cap() {
        let mut b = Backoff::new(no_jitter());
        let t = Instant::now();
        let delays: Vec<u64> = (0..8)
            .map(|i| b.next_delay(t + Duration::from_secs(i)).as_millis() as u64)
            .collect();
        assert_eq!(delays, [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
    }

    #[test]
    fn resets_after_a_healthy_period() {
        let mut b = Backoff::new(no_jitter());
        let t = Instant::now();
        b.next_delay(t);
        b.next_delay(t + Duration::from_secs(1));
        assert_eq!(
            b.next_delay(t + Duration::from_secs(2)),
            Duration::from_millis(3200)
        );
        assert_eq!(
            b.next_delay(t + Duration::from_secs(200)),
            Duration::from_millis(800)
        );
    }

    #[test]
    fn resets_only_after_more_than_reset_after_since_the_previous_backoff_began() {
        let mut b = Backoff::new(no_jitter());
        let t = Instant::now();
        let secs = Duration::from_secs;
        assert_eq!(b.next_delay(t), Duration::from_millis(800));
        // Exactly 2 minutes later: not more than `reset_after`, so the step keeps growing.
        assert_eq!(b.next_delay(t + secs(120)), Duration::from_millis(1600));
        // Just over 2 minutes after that backoff began (however long it lasted): reset.
        assert_eq!(
            b.next_delay(t + secs(240) + Duration::from_millis(1)),
            Duration::from_millis(800)
        );
    }

    #[test]
    fn jitter_stays_in_range_and_is_reproducible_when_seeded() {
        let config = BackoffConfig::default().seeded(7);
        let t = Instant::now();
        let run = || {
            let mut b = Backoff::new(config.clone());
            (0..10).map(|_| b.next_delay(t)).collect::<Vec<Duration>>()
        };
        let first = run();
        assert_eq!(first, run());
        assert!(first[0] >= Duration::from_millis(800) && first[0] < Duration::from_millis(1600));
        assert!(first[9] >= Duration::from_secs(30) && first[9] < Duration::from_secs(60));
    }

    /// `backoffManager.Step` (apimachinery @v0.36.3, `DelayWithReset`): the reset period runs from
    /// the previous reset, so failures 90 s apart start over every other time, where the older
    /// rule (measured from the previous backoff) never does.
    #[test]
    fn since_last_reset_counts_from_the_previous_reset_not_the_previous_backoff() {
        let t = Instant::now();
        let secs = Duration::from_secs;
        let every_90s = |reset_from| {
            let mut b = Backoff::new(BackoffConfig {
                reset_from,
                ..no_jitter()
            });
            (0..5)
                .map(|i| b.next_delay(t + secs(90 * i)).as_millis() as u64)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            every_90s(BackoffReset::SincePreviousBackoff),
            [800, 1600, 3200, 6400, 12800]
        );
        assert_eq!(
            every_90s(BackoffReset::SinceLastReset),
            [800, 1600, 800, 1600, 800]
        );
    }
}
