//! The value parsers of the flags that are not an enum: durations, namespaces, selectors, speeds.

use std::time::Duration;

use super::duration;

/// A duration flag where `0` means "off".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Period(pub Option<Duration>);

/// Parses a duration as kubectl users write them (`30s`, `5m`, `1h30m`, `250ms`); `0` means off.
pub fn parse_period(text: &str) -> Result<Period, String> {
    duration::parse_duration(text).map(|d| Period(Some(d).filter(|d| !d.is_zero())))
}

/// Parses `--request-timeout` as kubectl does: a duration, or a bare number of seconds.
pub fn parse_request_timeout(text: &str) -> Result<Period, String> {
    let text = text.trim();
    match text.parse::<u64>() {
        Ok(_) => parse_period(&format!("{text}s")),
        Err(_) => parse_period(text),
    }
}

/// Parses `-n`: a namespace name is a DNS label (lowercase letters, digits and `-`, at most 63,
/// starting and ending with a letter or digit), as the API server requires; anything else would
/// end up in the request's path.
pub fn parse_namespace(text: &str) -> Result<String, String> {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    if text.is_empty() {
        return Err("the namespace is empty; leave -n out for the context's namespace".into());
    }
    let valid = text.len() <= 63
        && text.chars().all(|c| alnum(c) || c == '-')
        && text.starts_with(alnum)
        && text.ends_with(alnum);
    if valid {
        Ok(text.to_owned())
    } else {
        Err(format!(
            "{text:?} is not a namespace name: lowercase letters, digits and '-', at most 63, \
             starting and ending with a letter or digit"
        ))
    }
}

/// Checks `-l` as the API server will (apimachinery's `labels.Parse`), so that a malformed one is
/// a usage error before the cluster is contacted; the text goes to the server as written.
pub fn parse_label_selector(text: &str) -> Result<String, String> {
    kubectl_deltas::source::selector::parse_label_selector(text)
        .map(|_| text.to_owned())
        .map_err(|e| e.to_string())
}

/// Checks `--field-selector` as the API server will (apimachinery's `fields.ParseSelector`).
pub fn parse_field_selector(text: &str) -> Result<String, String> {
    kubectl_deltas::source::selector::parse_field_selector(text)
        .map(|_| text.to_owned())
        .map_err(|e| e.to_string())
}

/// Parses `--speed`: a finite number above zero.
pub fn parse_speed(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err("expected a number above 0, such as 1 (real time), 10 or 0.5".into()),
    }
}

/// One `--handler`: a name, its own resync period and how long each call takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandlerArg {
    /// How rows and JSON lines name it.
    pub name: String,
    /// `resync=`: `None` for the informer's period (AddEventHandler), `Some(ZERO)` for none.
    pub resync: Option<Duration>,
    /// `delay=`: how long each call takes.
    pub delay: Option<Duration>,
}

/// Parses `NAME[,resync=DURATION][,delay=DURATION]`.
pub fn parse_handler(text: &str) -> Result<HandlerArg, String> {
    let mut parts = text.split(',');
    let name = parts.next().unwrap_or_default().trim();
    let valid = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if name.is_empty() || !name.chars().all(valid) {
        return Err(format!(
            "{name:?} is not a handler name: use letters, digits, '-', '_' or '.', then \
             optionally ,resync=DURATION and ,delay=DURATION (e.g. web,resync=30s,delay=200ms)"
        ));
    }
    let mut handler = HandlerArg {
        name: name.to_owned(),
        resync: None,
        delay: None,
    };
    let mut seen: Vec<&str> = Vec::new();
    for part in parts {
        let (key, value) = part.split_once('=').unwrap_or((part, ""));
        let key = key.trim();
        if seen.contains(&key) {
            return Err(format!(
                "{key}= is given twice for handler {name:?}: give each setting once"
            ));
        }
        seen.push(key);
        let period = |value: &str| parse_period(value).map(|p| p.0);
        match key {
            "resync" => handler.resync = Some(period(value)?.unwrap_or_default()),
            "delay" => handler.delay = period(value)?,
            other => {
                return Err(format!(
                    "unknown handler setting {other:?}: expected resync=DURATION or \
                     delay=DURATION"
                ));
            }
        }
    }
    Ok(handler)
}
