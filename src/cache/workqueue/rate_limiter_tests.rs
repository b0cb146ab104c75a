//! The rate limiters of client-go's `util/workqueue/default_rate_limiters.go` (v0.36.3) and the
//! token bucket of `golang.org/x/time/rate` (v0.14.0).

use std::time::{Duration, Instant};

use super::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// `ItemExponentialFailureRateLimiter.When`: base · 2ⁿ per item, `NumRequeues` counts, `Forget`
/// starts over (client-go's `TestItemExponentialFailureRateLimiter`).
#[test]
fn per_item_delays_double_until_forget_as_item_exponential_failure_when() {
    let t0 = Instant::now();
    let mut r = ItemExponentialFailureRateLimiter::new(ms(1), Duration::from_secs(1));
    let delays: Vec<_> = (0..5).map(|_| r.when(&"one", t0)).collect();
    assert_eq!(delays, [ms(1), ms(2), ms(4), ms(8), ms(16)]);
    assert_eq!(r.num_requeues(&"one"), 5);
    assert_eq!(r.when(&"two", t0), ms(1), "each item has its own count");
    r.forget(&"one");
    assert_eq!(r.num_requeues(&"one"), 0);
    assert_eq!(r.when(&"one", t0), ms(1));
}

/// `ItemExponentialFailureRateLimiter.When` caps at the max, also past 2⁶³ ns where the float64
/// product would overflow a Duration (client-go's `TestItemExponentialFailureRateLimiterOverFlow`).
#[test]
fn per_item_delay_is_capped_and_never_overflows_as_item_exponential_failure_when() {
    let t0 = Instant::now();
    let mut r = ItemExponentialFailureRateLimiter::new(ms(5), Duration::from_secs(1000));
    let delays: Vec<_> = (0..20).map(|_| r.when(&"k", t0)).collect();
    assert_eq!(delays[17], Duration::from_nanos(5_000_000 << 17));
    assert_eq!(
        delays[18],
        Duration::from_secs(1000),
        "5 ms · 2¹⁸ = 1310.72 s > 1000 s"
    );
    for _ in 0..100 {
        r.when(&"k", t0);
    }
    assert_eq!(r.when(&"k", t0), Duration::from_secs(1000));
    let mut tiny = ItemExponentialFailureRateLimiter::new(Duration::from_nanos(1), ms(1));
    for _ in 0..70 {
        tiny.when(&"k", t0);
    }
    assert_eq!(tiny.when(&"k", t0), ms(1));
}

/// `rate.Limiter.Reserve().Delay()`: a full bucket grants `burst` tokens at once, then goes into
/// debt, one token per 1/limit seconds, and refills with time.
#[test]
fn the_bucket_grants_its_burst_then_spaces_tokens_as_rate_reserve() {
    let t0 = Instant::now();
    let mut b = BucketRateLimiter::new(10.0, 100);
    for _ in 0..100 {
        assert_eq!(RateLimiter::<&str>::when(&mut b, &"x", t0), Duration::ZERO);
    }
    assert_eq!(RateLimiter::<&str>::when(&mut b, &"x", t0), ms(100));
    assert_eq!(RateLimiter::<&str>::when(&mut b, &"x", t0), ms(200));
    // Two tokens of debt; one second refills ten: 8 tokens, then the 9th goes to 0.
    let t1 = t0 + Duration::from_secs(1);
    for _ in 0..8 {
        assert_eq!(RateLimiter::<&str>::when(&mut b, &"x", t1), Duration::ZERO);
    }
    assert_eq!(RateLimiter::<&str>::when(&mut b, &"x", t1), ms(100));
    assert_eq!(RateLimiter::<&str>::num_requeues(&b, &"x"), 0);
}

/// `rate.Limiter.advance`: the bucket never holds more than its burst, however long it idled.
#[test]
fn an_idle_bucket_refills_only_up_to_its_burst_as_rate_advance() {
    let t0 = Instant::now();
    let mut b = BucketRateLimiter::new(1.0, 2);
    for _ in 0..2 {
        RateLimiter::<&str>::when(&mut b, &"x", t0);
    }
    let later = t0 + Duration::from_secs(3600);
    assert_eq!(
        RateLimiter::<&str>::when(&mut b, &"x", later),
        Duration::ZERO
    );
    assert_eq!(
        RateLimiter::<&str>::when(&mut b, &"x", later),
        Duration::ZERO
    );
    assert_eq!(
        RateLimiter::<&str>::when(&mut b, &"x", later),
        Duration::from_secs(1)
    );
}

/// `reserveN`'s `ok := n <= lim.burst`: a bucket of burst 0 never grants (`InfDuration`).
#[test]
fn a_bucket_of_burst_zero_never_grants_as_rate_reserve_n() {
    let mut b = BucketRateLimiter::new(10.0, 0);
    assert_eq!(
        RateLimiter::<&str>::when(&mut b, &"x", Instant::now()),
        INF_DURATION
    );
}

/// `MaxOfRateLimiter.When` consults every limiter: 100 keys failing once take the bucket's
/// burst, so the 101st key's first retry waits 100 ms, not the per-item 5 ms
/// (`DefaultTypedControllerRateLimiter`).
#[test]
fn every_limiter_is_charged_on_every_call_as_max_of_when() {
    let t0 = Instant::now();
    let mut r = default_controller_rate_limiter::<u32>();
    for key in 0..100 {
        assert_eq!(r.when(&key, t0), ms(5));
    }
    assert_eq!(r.when(&100, t0), ms(100));
    assert_eq!(r.num_requeues(&100), 1);
    r.forget(&100);
    assert_eq!(r.num_requeues(&100), 0);
}

/// `DefaultTypedControllerRateLimiter`: a failing key retries after 5, 10, 20, 40 ms…
#[test]
fn a_failing_key_waits_5_10_20_ms_as_default_typed_controller_rate_limiter() {
    let t0 = Instant::now();
    let mut r = default_controller_rate_limiter::<&str>();
    let delays: Vec<_> = (0..4).map(|_| r.when(&"a", t0)).collect();
    assert_eq!(delays, [ms(5), ms(10), ms(20), ms(40)]);
}
