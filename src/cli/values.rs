//! The value parsers of the flags that are not an enum: durations, namespaces, selectors, speeds.

use std::time::Duration;

use super::duration;
pub use kubectl_deltas::cache::KeyGlob;
use kubectl_deltas::cache::triggers::Predicates;

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

/// `runtime=` of controller `name`.
fn parse_runtime(value: &str, name: &str) -> Result<ControllerRuntimeKind, String> {
    match value.trim() {
        "client-go" => Ok(ControllerRuntimeKind::ClientGo),
        "kube" => Ok(ControllerRuntimeKind::Kube),
        other => Err(format!(
            "runtime={other:?} for controller {name:?}: expected client-go (a workqueue behind an \
             informer's handler, the default) or kube (kube-runtime's Controller)"
        )),
    }
}

/// One `--controller`: a handler that queues keys into a rate-limited workqueue, and the workers
/// that reconcile them; or with `runtime=kube` a kube-runtime `Controller`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerArg {
    /// How rows and JSON lines name it (and its handler).
    pub name: String,
    /// `workers=`: controller-runtime's `MaxConcurrentReconciles` (1 there by default), or
    /// kube-runtime's `Config::concurrency` (unbounded there by default); `None` when not given.
    pub workers: Option<usize>,
    /// `reconcile=`: how long each reconcile takes.
    pub reconcile: Duration,
    /// `fail=`: the first N reconciles of each key matching `fail_keys` return an error.
    pub fail: u32,
    /// `fail-keys=`: which keys `fail` applies to (all by default).
    pub fail_keys: Option<KeyGlob>,
    /// `requeue-after=`: every success asks to be reconciled again after this long
    /// (controller-runtime's `Result{RequeueAfter}`, kube-runtime's `Action::requeue`).
    pub requeue_after: Option<Duration>,
    /// `resync=`: the handler's own resync period, as for `--handler`.
    pub resync: Option<Duration>,
    /// `queue=`: the queue between the handler and the workers; `None` when not given.
    pub queue: Option<ControllerQueueKind>,
    /// `runtime=`: whose controller machinery runs.
    pub runtime: ControllerRuntimeKind,
    /// `debounce=`: kube-runtime's `Config::debounce`.
    pub debounce: Option<Duration>,
    /// `error-requeue=`: the requeue kube-runtime's error policy returns.
    pub error_requeue: Option<Duration>,
    /// `predicate=`: the predicates every event passes before it queues a key.
    pub predicates: Predicates,
    /// `owns=` (repeatable): resources whose objects map to their owner's key, as typed.
    pub owns: Vec<String>,
}

/// Whose controller machinery a `--controller` runs (`runtime=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ControllerRuntimeKind {
    /// `client-go`: a handler on the shared informer, client-go's workqueue and
    /// controller-runtime's worker loop.
    #[default]
    ClientGo,
    /// `kube`: kube-runtime 5.0.0's `Controller`, fed by its watcher's events.
    Kube,
}

/// Which queue a `--controller` runs (`queue=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ControllerQueueKind {
    /// `workqueue`: client-go's rate-limiting workqueue with `DefaultControllerRateLimiter`:
    /// what client-go's own controllers run, and controller-runtime up to v0.22 (or with
    /// `UsePriorityQueue: false`). The default: it is the one queue every Go controller has had.
    #[default]
    Workqueue,
    /// `priority`: controller-runtime's priority queue (`pkg/controller/priorityqueue`), its
    /// default since v0.23.0, with its per-item rate limiter; the handler adds initial-list keys
    /// and unchanged-resourceVersion updates at `LowPriority`.
    Priority,
}

/// The most workers one `--controller` may run.
pub const MAX_WORKERS: usize = 1024;

/// The most failures `fail=N` may ask of each key. Past about 18 failures the default rate
/// limiter waits its cap (1000 s) before every retry, so 100 already shows a key failing for a day
/// of recorded time; an instant replay computes every retry owed after the recording ends, so the
/// count is what bounds that work (a recording's `replayWith` may set it).
pub const MAX_FAILURES: u32 = 100;

/// The shortest `reconcile=` and `requeue-after=` of a `--controller` (0 aside): the timeline's
/// resolution, and a bound on how often an instant replay's workers reconcile a key.
pub const MIN_CONTROLLER_DURATION: Duration = Duration::from_millis(1);

/// Parses `NAME[,workers=N][,reconcile=DUR][,fail=N][,fail-keys=GLOB][,requeue-after=DUR]
/// [,resync=DUR][,queue=workqueue|priority][,runtime=client-go|kube][,debounce=DUR]
/// [,error-requeue=DUR][,predicate=P+P]`.
pub fn parse_controller(text: &str) -> Result<ControllerArg, String> {
    const SETTINGS: &str = "workers=N, reconcile=DURATION, fail=N, fail-keys=GLOB, \
                            requeue-after=DURATION, resync=DURATION, \
                            queue=workqueue|priority, runtime=client-go|kube, \
                            debounce=DURATION, error-requeue=DURATION, predicate=P[+P] or \
                            owns=RESOURCE";
    let mut parts = text.split(',');
    let name = parts.next().unwrap_or_default().trim();
    let valid = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if name.is_empty() || !name.chars().all(valid) {
        return Err(format!(
            "{name:?} is not a controller name: use letters, digits, '-', '_' or '.', then \
             optionally ,{SETTINGS} (e.g. web,workers=2,reconcile=500ms)"
        ));
    }
    let mut controller = ControllerArg {
        name: name.to_owned(),
        workers: None,
        reconcile: Duration::ZERO,
        fail: 0,
        fail_keys: None,
        requeue_after: None,
        resync: None,
        queue: None,
        runtime: ControllerRuntimeKind::ClientGo,
        debounce: None,
        error_requeue: None,
        predicates: Predicates::default(),
        owns: Vec::new(),
    };
    let mut seen: Vec<&str> = Vec::new();
    for part in parts {
        let (key, value) = part.split_once('=').unwrap_or((part, ""));
        let key = key.trim();
        if seen.contains(&key) && key != "owns" {
            return Err(format!(
                "{key}= is given twice for controller {name:?}: give each setting once"
            ));
        }
        seen.push(key);
        let period = |value: &str| parse_period(value).map(|p| p.0);
        // Below the millisecond the timeline shows, a `requeue-after` would make each key come
        // back millions of times per recorded second, and an instant replay compute them all.
        let at_least_a_millisecond = |duration: Option<Duration>| match duration {
            Some(d) if d < MIN_CONTROLLER_DURATION => Err(format!(
                "{key}={} for controller {name:?} is below 1ms: give 1ms or more, or 0 for {}",
                value.trim(),
                if key == "reconcile" {
                    "a reconcile that takes no time"
                } else {
                    "no requeue"
                }
            )),
            other => Ok(other),
        };
        let count = |value: &str, what: &str| {
            value
                .trim()
                .parse::<u32>()
                .map_err(|_| format!("{key}={value:?} for controller {name:?} is not {what}"))
        };
        match key {
            "workers" => {
                let n = count(value, "a number of workers from 1")?;
                if n == 0 || n as usize > MAX_WORKERS {
                    return Err(format!(
                        "workers={n} for controller {name:?}: a controller runs 1 to \
                         {MAX_WORKERS} workers"
                    ));
                }
                controller.workers = Some(n as usize);
            }
            "reconcile" => {
                controller.reconcile = at_least_a_millisecond(period(value)?)?.unwrap_or_default()
            }
            "fail" => {
                let n = count(value, "a number of failures")?;
                if n > MAX_FAILURES {
                    return Err(format!(
                        "fail={n} for controller {name:?} is above {MAX_FAILURES}: past 18 \
                         failures every retry waits the rate limiter's cap of 1000s, so \
                         {MAX_FAILURES} already fails a key for a day; give {MAX_FAILURES} or fewer"
                    ));
                }
                controller.fail = n;
            }
            "fail-keys" => {
                if value.is_empty() {
                    return Err(format!(
                        "fail-keys= for controller {name:?} is empty: give a key or a glob such \
                         as demo/* (',' cannot be part of it)"
                    ));
                }
                let glob = KeyGlob::parse(value)
                    .map_err(|e| format!("fail-keys= for controller {name:?}: {e}"))?;
                controller.fail_keys = Some(glob);
            }
            "requeue-after" => controller.requeue_after = at_least_a_millisecond(period(value)?)?,
            "resync" => controller.resync = Some(period(value)?.unwrap_or_default()),
            "queue" => {
                controller.queue = Some(match value.trim() {
                    "workqueue" => ControllerQueueKind::Workqueue,
                    "priority" => ControllerQueueKind::Priority,
                    other => {
                        return Err(format!(
                            "queue={other:?} for controller {name:?}: expected workqueue \
                             (client-go's, the default) or priority (controller-runtime's \
                             priority queue, its default from v0.23)"
                        ));
                    }
                })
            }
            "runtime" => controller.runtime = parse_runtime(value, name)?,
            "debounce" => controller.debounce = Some(period(value)?.unwrap_or_default()),
            "error-requeue" => controller.error_requeue = Some(period(value)?.unwrap_or_default()),
            "owns" => {
                let resource = value.trim();
                if resource.is_empty() {
                    return Err(format!(
                        "owns= for controller {name:?} is empty: name a resource the session \
                         watches after the first, such as owns=rs"
                    ));
                }
                controller.owns.push(resource.to_owned());
            }
            "predicate" => {
                controller.predicates = Predicates::parse(value)
                    .map_err(|e| format!("predicate= for controller {name:?}: {e}"))?;
            }
            other => {
                return Err(format!(
                    "unknown controller setting {other:?}: expected {SETTINGS}"
                ));
            }
        }
    }
    if controller.fail_keys.is_some() && controller.fail == 0 {
        return Err(format!(
            "fail-keys= for controller {name:?} chooses the keys that fail=N makes fail: give \
             fail=N too"
        ));
    }
    Ok(controller)
}
