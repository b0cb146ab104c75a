//! Durations as the renderers write them for people.

use std::time::Duration;

/// A duration as a person reads it: `350µs`, `1.2ms`, `2.01s`, `1m02s`, `1h05m`.
pub fn human_duration(d: Duration) -> String {
    let secs = d.as_secs();
    if d < Duration::from_millis(1) {
        format!("{}µs", d.as_micros())
    } else if d < Duration::from_secs(1) {
        format!("{:.1}ms", d.as_secs_f64() * 1e3)
    } else if secs < 60 {
        format!("{:.2}s", d.as_secs_f64())
    } else if secs < 3600 {
        format!("{}m{:02}s", secs / 60, secs % 60)
    } else {
        format!("{}h{:02}m", secs / 3600, secs % 3600 / 60)
    }
}
