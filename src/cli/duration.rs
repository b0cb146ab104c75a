//! Durations as kubectl and client-go take them: Go's `time.ParseDuration` units (`h`, `m`, `s`,
//! `ms`, `us`/`µs`, `ns`), so `1h30m`, `1.5s` and `500ms` mean what they mean to kubectl.
//!
//! jiff's `SignedDuration` parser reads these (and the ISO 8601 `PT1H30M` form); like Go's, it
//! refuses calendar units, whose length depends on a date: `1d`, `1w`, `1month`, `1y`. The limit
//! is Go's too: a `time.Duration` is an int64 of nanoseconds, so nothing past about 292 years
//! parses — longer values would only overflow the clocks and timers they are added to.

use std::time::Duration;

use jiff::SignedDuration;

/// Go's `time.Duration` maximum, `1<<63 - 1` nanoseconds (2562047h47m16.854775807s).
pub const LONGEST: Duration = Duration::new(
    (i64::MAX as u64) / 1_000_000_000,
    ((i64::MAX as u64) % 1_000_000_000) as u32,
);

/// Parses a non-negative duration such as `30s`, `5m`, `1h30m`, `1.5s` or `250ms`; a bare `0`
/// is zero, as in Go.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text == "0" {
        return Ok(Duration::ZERO);
    }
    let units = "use Go's units h, m, s, ms, us, ns as in 30s, 5m, 1h30m or 250ms";
    let parsed: SignedDuration = text.parse().map_err(|_| {
        if text.parse::<jiff::Span>().is_ok() {
            format!(
                "{text:?} uses days, weeks, months or years, whose length depends on the date: \
                 {units} (e.g. 24h for a day)"
            )
        } else if with_small_numbers(text).parse::<SignedDuration>().is_ok() {
            too_long(text)
        } else {
            format!("{text:?} is not a duration: {units}")
        }
    })?;
    if parsed.is_negative() {
        return Err(format!(
            "{text:?} is negative: a duration here is 0 or more"
        ));
    }
    let duration = parsed.unsigned_abs();
    if duration > LONGEST {
        return Err(too_long(text));
    }
    Ok(duration)
}

fn too_long(text: &str) -> String {
    format!(
        "{text:?} is longer than the longest duration kubectl and client-go accept \
         (2562047h47m16s, about 292 years)"
    )
}

/// `text` with every number replaced by `1`: if that parses, `text` failed only by its size.
fn with_small_numbers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_number = false;
    for c in text.chars() {
        let digit = c.is_ascii_digit() || c == '.';
        if digit && !in_number {
            out.push('1');
        } else if !digit {
            out.push(c);
        }
        in_number = digit;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Go's `time.ParseDuration` (`time/format.go`) accepts these, with these values.
    #[test]
    fn go_durations_parse_to_what_go_reads() {
        let ms = Duration::from_millis;
        for (text, expected) in [
            ("0", Duration::ZERO),
            ("0s", Duration::ZERO),
            ("30s", ms(30_000)),
            ("5m", ms(300_000)),
            ("1h30m", ms(5_400_000)),
            ("1h30m15s", ms(5_415_000)),
            ("1.5s", ms(1_500)),
            ("1.5h", ms(5_400_000)),
            ("500ms", ms(500)),
            ("250us", Duration::from_micros(250)),
            ("250µs", Duration::from_micros(250)),
            ("10ns", Duration::from_nanos(10)),
            ("+5s", ms(5_000)),
            ("2562047h", Duration::from_secs(2_562_047 * 3600)),
        ] {
            assert_eq!(parse_duration(text), Ok(expected), "{text}");
        }
    }

    /// humantime took `1y` (365.25 days) and `1month` (30.44 days); Go and kubectl refuse them.
    #[test]
    fn calendar_units_negative_and_overlong_durations_are_refused() {
        for text in ["1y", "1month", "2 months", "1w", "1d", "3d4h", "1 year"] {
            let err = parse_duration(text).unwrap_err();
            assert!(
                err.contains("days, weeks, months or years"),
                "{text}: {err}"
            );
        }
        for text in ["", "5", "5 minutes please", "1x", "s"] {
            let err = parse_duration(text).unwrap_err();
            assert!(err.contains("is not a duration"), "{text}: {err}");
        }
        assert!(parse_duration("-5s").unwrap_err().contains("negative"));
        for text in ["2562048h", "9223372036854775807s", "9223372036854775807h"] {
            let err = parse_duration(text).unwrap_err();
            assert!(err.contains("longer than the longest"), "{text}: {err}");
        }
    }
}
