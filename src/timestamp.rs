//! RFC 3339 timestamps in UTC, written into a fixed buffer without a general formatter.
//!
//! Every batch line carries a time, and every object's metadata a `creationTimestamp`: with
//! k8s-openapi's `strftime`-style formatting (and a growing `String`) they were a tenth of the
//! time to write a `-o jsonl --object meta` line.

use std::time::SystemTime;

use jiff::Timestamp;
use jiff::tz::Offset;

/// `2026-11-22T14:03:07Z` or, with microseconds, `2026-11-22T14:03:07.123456Z`.
#[derive(Clone, Copy)]
pub(crate) struct Rfc3339 {
    text: [u8; 27],
    len: u8,
}

impl Rfc3339 {
    /// With microseconds; times outside years 0–9999 are written as the epoch.
    pub(crate) fn micros(time: SystemTime) -> Self {
        Timestamp::try_from(time)
            .ok()
            .and_then(|ts| Self::format(ts, true))
            .unwrap_or(Rfc3339 {
                text: *b"1970-01-01T00:00:00.000000Z",
                len: 27,
            })
    }

    /// Whole seconds, as Kubernetes writes a `Time`; `None` outside years 0–9999.
    pub(crate) fn seconds(ts: Timestamp) -> Option<Self> {
        Self::format(ts, false)
    }

    fn format(ts: Timestamp, micros: bool) -> Option<Self> {
        let dt = Offset::UTC.to_datetime(ts);
        if dt.year() < 0 {
            return None;
        }
        let mut text = *b"0000-00-00T00:00:00.000000Z";
        let fields = [
            (0, 4, dt.year() as u32),
            (5, 2, dt.month() as u32),
            (8, 2, dt.day() as u32),
            (11, 2, dt.hour() as u32),
            (14, 2, dt.minute() as u32),
            (17, 2, dt.second() as u32),
            (20, 6, dt.subsec_nanosecond() as u32 / 1000),
        ];
        for (at, width, mut value) in fields.into_iter().take(if micros { 7 } else { 6 }) {
            for digit in text[at..at + width].iter_mut().rev() {
                *digit = b'0' + (value % 10) as u8;
                value /= 10;
            }
        }
        let len = if micros {
            27
        } else {
            text[19] = b'Z';
            20
        };
        Some(Rfc3339 { text, len })
    }

    pub(crate) fn as_str(&self) -> &str {
        // Only ASCII digits are ever written over the ASCII template.
        std::str::from_utf8(&self.text[..self.len as usize]).unwrap_or_default()
    }
}

impl serde::Serialize for Rfc3339 {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    const TIMES: [(u64, u32); 5] = [
        (0, 0),
        (1_764_000_187, 123_456_789),
        (1_767_607_200, 1_000),
        (951_782_400, 999_999_999),     // 2000-02-29
        (253_402_207_199, 999_999_000), // jiff's last second, in 9999
    ];

    #[test]
    fn micros_are_written_as_jiff_writes_them() {
        for (secs, nanos) in TIMES {
            let time = UNIX_EPOCH + Duration::new(secs, nanos);
            let expected = format!("{:.6}", Timestamp::try_from(time).unwrap());
            assert_eq!(
                Rfc3339::micros(time).as_str(),
                expected,
                "{secs}.{nanos:09}"
            );
        }
        let before_year_zero = UNIX_EPOCH - Duration::from_secs(70_000_000_000);
        assert_eq!(
            Rfc3339::micros(before_year_zero).as_str(),
            "1970-01-01T00:00:00.000000Z"
        );
    }

    #[test]
    fn seconds_are_written_as_kubernetes_times_are() {
        for (secs, nanos) in TIMES {
            let ts = Timestamp::new(secs as i64, nanos as i32).unwrap();
            let expected = jiff::fmt::strtime::format("%Y-%m-%dT%H:%M:%SZ", ts).unwrap();
            assert_eq!(Rfc3339::seconds(ts).unwrap().as_str(), expected);
        }
        assert!(Rfc3339::seconds(Timestamp::MIN).is_none());
    }
}
