//! client-go's rate limiters (`util/workqueue/default_rate_limiters.go`, v0.36.3) and the token
//! bucket under `BucketRateLimiter` (`golang.org/x/time/rate`, v0.14.0, the version client-go
//! v0.36.3's go.mod requires).

use std::hash::Hash;
use std::time::{Duration, Instant};

use hashbrown::HashMap;

/// Go's `rate.InfDuration` (the largest `time.Duration`): what a bucket that can never grant a
/// token answers.
pub const INF_DURATION: Duration = Duration::from_nanos(i64::MAX as u64);

/// client-go's `TypedRateLimiter`: how long an item waits before it is retried.
pub trait RateLimiter<T>: Send {
    /// `When`: the delay before `item` is added again, counted as one more failure of it.
    fn when(&mut self, item: &T, now: Instant) -> Duration;
    /// `Forget`: `item` is done being retried (it succeeded, or was given up on).
    fn forget(&mut self, item: &T);
    /// `NumRequeues`: how many times `item` failed since it was last forgotten.
    fn num_requeues(&self, item: &T) -> u32;
}

/// client-go's `TypedItemExponentialFailureRateLimiter`: `base · 2ⁿ` for the n-th failure of an
/// item (from 0), capped at `max`.
#[derive(Debug)]
pub struct ItemExponentialFailureRateLimiter<T> {
    failures: HashMap<T, u32>,
    base: Duration,
    max: Duration,
}

impl<T> ItemExponentialFailureRateLimiter<T> {
    /// `NewTypedItemExponentialFailureRateLimiter(base, max)`.
    pub fn new(base: Duration, max: Duration) -> Self {
        ItemExponentialFailureRateLimiter {
            failures: HashMap::new(),
            base,
            max,
        }
    }
}

impl<T: Eq + Hash + Clone + Send> RateLimiter<T> for ItemExponentialFailureRateLimiter<T> {
    /// `When`: computed in float64 as client-go does (`baseDelay · math.Pow(2, exp)`), so the cap
    /// applies past 2⁶³ ns instead of overflowing.
    fn when(&mut self, item: &T, _now: Instant) -> Duration {
        let failures = self.failures.entry_ref(item).or_insert(0);
        let exp = *failures;
        *failures = failures.saturating_add(1);
        let backoff = self.base.as_nanos() as f64 * 2f64.powf(f64::from(exp));
        if backoff > i64::MAX as f64 {
            return self.max;
        }
        // Go's float64 → Duration conversion truncates toward zero, as `as` does.
        let calculated = Duration::from_nanos(backoff as u64);
        calculated.min(self.max)
    }

    fn forget(&mut self, item: &T) {
        self.failures.remove(item);
    }

    fn num_requeues(&self, item: &T) -> u32 {
        self.failures.get(item).copied().unwrap_or(0)
    }
}

/// client-go's `TypedBucketRateLimiter` over `golang.org/x/time/rate.Limiter`: one token bucket
/// for all items, refilled at `limit` tokens a second up to `burst`, full at the start; `When` is
/// `Reserve().Delay()`: it always takes a token, going into debt when none is left, and the
/// delay is how long the debt takes to repay.
#[derive(Debug, Clone)]
pub struct BucketRateLimiter {
    /// Tokens a second; `f64::INFINITY` for `rate.Inf`.
    limit: f64,
    burst: u32,
    /// Tokens at `last` (negative when in debt).
    tokens: f64,
    /// When `tokens` was last updated; `None` before the first reservation.
    last: Option<Instant>,
}

impl BucketRateLimiter {
    /// `&BucketRateLimiter{Limiter: rate.NewLimiter(rate.Limit(limit), burst)}`.
    pub fn new(limit: f64, burst: u32) -> Self {
        BucketRateLimiter {
            limit,
            burst,
            tokens: f64::from(burst),
            last: None,
        }
    }

    /// `Limiter.advance`: the tokens at `now`, refilled since `last` and capped at the burst (a
    /// `now` before `last` refills nothing).
    fn advance(&self, now: Instant) -> f64 {
        let elapsed = self
            .last
            .map_or(Duration::ZERO, |last| now.saturating_duration_since(last));
        let tokens = self.tokens + tokens_from_duration(self.limit, elapsed);
        tokens.min(f64::from(self.burst))
    }

    /// `Limiter.reserveN(now, 1, InfDuration)` then `Reservation.Delay`: how long until the
    /// reserved token is due.
    fn reserve(&mut self, now: Instant) -> Duration {
        if self.limit == f64::INFINITY {
            return Duration::ZERO;
        }
        let tokens = self.advance(now) - 1.0;
        let wait = if tokens < 0.0 {
            duration_from_tokens(self.limit, -tokens)
        } else {
            Duration::ZERO
        };
        // `ok := n <= lim.burst && waitDuration <= maxFutureReserve`: a bucket of burst 0 never
        // grants, and keeps its state.
        if self.burst == 0 || wait >= INF_DURATION {
            return INF_DURATION;
        }
        self.last = Some(now);
        self.tokens = tokens;
        wait
    }
}

/// `Limit.tokensFromDuration`: `d.Seconds() · limit`.
fn tokens_from_duration(limit: f64, d: Duration) -> f64 {
    if limit <= 0.0 {
        return 0.0;
    }
    // Go's `Duration.Seconds`: whole seconds plus the nanoseconds over 1e9, in float64.
    (d.as_secs() as f64 + f64::from(d.subsec_nanos()) / 1e9) * limit
}

/// `Limit.durationFromTokens`: `tokens / limit` seconds, truncated to nanoseconds.
fn duration_from_tokens(limit: f64, tokens: f64) -> Duration {
    if limit <= 0.0 {
        return INF_DURATION;
    }
    let nanos = tokens / limit * 1e9;
    if nanos > i64::MAX as f64 {
        return INF_DURATION;
    }
    Duration::from_nanos(nanos as u64)
}

impl<T> RateLimiter<T> for BucketRateLimiter {
    fn when(&mut self, _item: &T, now: Instant) -> Duration {
        self.reserve(now)
    }

    fn forget(&mut self, _item: &T) {}

    fn num_requeues(&self, _item: &T) -> u32 {
        0
    }
}

/// client-go's `TypedMaxOfRateLimiter`: the longest delay of its limiters. Every limiter is
/// consulted on every `When` (so each one's state moves: the bucket loses a token even when the
/// item's backoff is longer), `Forget` forgets in all, `NumRequeues` is the largest count.
pub struct MaxOfRateLimiter<T> {
    limiters: Vec<Box<dyn RateLimiter<T>>>,
}

impl<T> std::fmt::Debug for MaxOfRateLimiter<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MaxOfRateLimiter")
            .field("limiters", &self.limiters.len())
            .finish()
    }
}

impl<T> MaxOfRateLimiter<T> {
    /// `NewTypedMaxOfRateLimiter(limiters...)`.
    pub fn new(limiters: Vec<Box<dyn RateLimiter<T>>>) -> Self {
        MaxOfRateLimiter { limiters }
    }
}

impl<T> RateLimiter<T> for MaxOfRateLimiter<T> {
    fn when(&mut self, item: &T, now: Instant) -> Duration {
        self.limiters
            .iter_mut()
            .map(|limiter| limiter.when(item, now))
            .fold(Duration::ZERO, Duration::max)
    }

    fn forget(&mut self, item: &T) {
        for limiter in &mut self.limiters {
            limiter.forget(item);
        }
    }

    fn num_requeues(&self, item: &T) -> u32 {
        self.limiters
            .iter()
            .map(|limiter| limiter.num_requeues(item))
            .max()
            .unwrap_or(0)
    }
}

/// client-go's `DefaultTypedControllerRateLimiter`: the max of a per-item exponential backoff
/// (5 ms · 2ⁿ, up to 1000 s) and a 10 qps, burst 100 token bucket shared by all items. What
/// controller-runtime uses when its priority queue is off (v0.24.1 `pkg/controller/controller.go`
/// `NewTypedUnmanaged`).
pub fn default_controller_rate_limiter<T: Eq + Hash + Clone + Send + 'static>()
-> MaxOfRateLimiter<T> {
    MaxOfRateLimiter::new(vec![
        Box::new(ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(5),
            Duration::from_secs(1000),
        )),
        Box::new(BucketRateLimiter::new(10.0, 100)),
    ])
}

#[cfg(test)]
#[path = "rate_limiter_tests.rs"]
mod tests;
