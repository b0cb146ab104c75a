//! JSON lines, schema v1 (docs/jsonl.md): one object per line, flushed per line, for scripts.

use std::borrow::Cow;
use std::io::{self, Write};
use std::time::{Duration, SystemTime};

use crate::object::Object;
use serde::Serialize;
use serde_json::Value;

use super::object::{ObjectMode, render_object};
use crate::cache::reflector::{RelistCause, WatchEndReason};
use crate::cache::{Batch, Delta, ReflectorEvent, ReflectorEventKind};

/// Writes batches as JSON lines.
#[derive(Debug)]
pub struct JsonLines<W> {
    out: W,
    object_mode: ObjectMode,
    show_secret_data: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BatchLine<'a> {
    kind: &'static str,
    seq: u64,
    time: String,
    key: Option<&'a str>,
    initial: bool,
    queue_depth: usize,
    wait_ms: f64,
    deltas: Vec<DeltaLine<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DeltaLine<'a> {
    #[serde(rename = "type")]
    type_: &'static str,
    tombstone: bool,
    resource_version: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    object: Option<Cow<'static, Value>>,
}

impl<W: Write> JsonLines<W> {
    /// A writer over `out`.
    pub fn new(out: W, object_mode: ObjectMode, show_secret_data: bool) -> Self {
        JsonLines {
            out,
            object_mode,
            show_secret_data,
        }
    }

    /// Writes one batch line and flushes it, so a reader sees it at once.
    pub fn batch(&mut self, batch: &Batch<Object>) -> io::Result<()> {
        let popped = SystemTime::now() - batch.popped_at.elapsed();
        let line = BatchLine {
            kind: "batch",
            seq: batch.seq,
            time: rfc3339_micros(popped),
            key: batch.key.as_deref(),
            initial: batch.is_in_initial_list,
            queue_depth: batch.queue_len,
            wait_ms: millis(batch.waited()),
            deltas: batch.deltas.iter().map(|d| self.delta(d)).collect(),
        };
        self.write_line(&line)
    }

    fn delta<'a>(&self, delta: &'a Delta<Object>) -> DeltaLine<'a> {
        let obj = delta.object.object();
        let object = match (self.object_mode, obj) {
            (ObjectMode::None, _) => None,
            // A tombstone without a last known state has a null object, not an absent one.
            (_, None) => Some(Cow::Owned(Value::Null)),
            (mode, Some(obj)) => render_object(obj, mode, self.show_secret_data),
        };
        DeltaLine {
            type_: delta.type_.as_str(),
            tombstone: delta.object.is_tombstone(),
            resource_version: obj.and_then(|o| o.metadata.resource_version.as_deref()),
            object,
        }
    }

    /// Writes one reflector line: `{"kind":"reflector","time":…,"event":…, …fields}`.
    pub fn reflector(&mut self, event: &ReflectorEvent) -> io::Result<()> {
        let (name, mut fields) = reflector_fields(&event.kind);
        let mut line = serde_json::Map::new();
        line.insert("kind".into(), "reflector".into());
        line.insert("time".into(), rfc3339_micros(event.at).into());
        line.insert("event".into(), name.into());
        line.append(&mut fields);
        self.write_line(&line)
    }

    /// Writes the `synced` reflector line: the cache holds the whole initial list.
    pub fn synced(&mut self, batches: u64, after: Duration) -> io::Result<()> {
        let line = serde_json::json!({
            "kind": "reflector",
            "time": rfc3339_micros(SystemTime::now()),
            "event": "synced",
            "batches": batches,
            "afterMs": millis(after),
        });
        self.write_line(&line)
    }

    /// Writes any serializable value as one line and flushes.
    pub fn write_line(&mut self, line: &impl Serialize) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, line).map_err(io::Error::from)?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }

    /// The underlying writer.
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// The `event` name and fields of a reflector line; documented in docs/jsonl.md.
fn reflector_fields(kind: &ReflectorEventKind) -> (&'static str, serde_json::Map<String, Value>) {
    use serde_json::json;
    let (name, fields) = match kind {
        ReflectorEventKind::ListStarted { resource_version } => {
            ("list-start", json!({ "resourceVersion": resource_version }))
        }
        ReflectorEventKind::ListPage {
            page,
            items_so_far,
            remaining,
        } => (
            "list-page",
            json!({ "page": page, "items": items_so_far, "remaining": remaining }),
        ),
        ReflectorEventKind::ListDone {
            items,
            pages,
            resource_version,
            duration,
        } => (
            "list-done",
            json!({ "items": items, "pages": pages, "resourceVersion": resource_version,
                    "durationMs": millis(*duration) }),
        ),
        ReflectorEventKind::WatchStarted {
            resource_version,
            timeout_seconds,
            send_initial_events,
        } => (
            "watch-start",
            json!({ "resourceVersion": resource_version, "timeoutSeconds": timeout_seconds,
                    "sendInitialEvents": send_initial_events }),
        ),
        ReflectorEventKind::WatchEnded {
            reason,
            duration,
            events,
        } => {
            let code = match reason {
                WatchEndReason::Closed => "closed",
                WatchEndReason::Broken(_) => "broken",
                WatchEndReason::ErrorEvent(_) => "error-event",
                WatchEndReason::VeryShort => "very-short",
            };
            (
                "watch-end",
                json!({ "reason": code, "message": reason.to_string(),
                        "durationMs": millis(*duration), "events": events }),
            )
        }
        ReflectorEventKind::Bookmark {
            resource_version,
            initial_events_end,
        } => (
            "bookmark",
            json!({ "resourceVersion": resource_version, "initialEventsEnd": initial_events_end }),
        ),
        ReflectorEventKind::Relist { cause } => {
            let code = match cause {
                RelistCause::WatchExpired => "watch-expired",
                RelistCause::ListExpired => "list-expired",
                RelistCause::ContinueExpired => "continue-expired",
                RelistCause::VeryShortWatch => "very-short-watch",
                RelistCause::WatchStartFailed(_) => "watch-start-failed",
                RelistCause::WatchFailed(_) => "watch-failed",
                RelistCause::WatchListInterrupted => "watch-list-interrupted",
            };
            (
                "relist",
                json!({ "cause": code, "message": cause.to_string() }),
            )
        }
        ReflectorEventKind::Backoff {
            delay,
            phase,
            error,
        } => (
            "backoff",
            json!({ "delayMs": millis(*delay), "phase": phase.to_string(), "error": error.to_string() }),
        ),
        ReflectorEventKind::Resync { keys } => ("resync", json!({ "keys": keys })),
        ReflectorEventKind::WatchListFallback { reason } => {
            ("watch-list-fallback", json!({ "reason": reason }))
        }
        ReflectorEventKind::Drift(report) => (
            "drift",
            json!({ "resourceVersion": report.resource_version, "listed": report.listed,
                    "consistent": report.is_consistent(), "missing": report.missing,
                    "extra": report.extra, "stale": report.stale }),
        ),
        ReflectorEventKind::DriftCheckSkipped { reason } => {
            ("drift-skipped", json!({ "reason": reason }))
        }
        ReflectorEventKind::Error(error) => ("error", json!({ "message": error.to_string() })),
    };
    match fields {
        Value::Object(map) => (name, map),
        _ => unreachable!("every arm builds an object"),
    }
}

fn millis(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

/// `2026-11-22T14:03:07.123456Z`.
pub fn rfc3339_micros(time: SystemTime) -> String {
    match jiff::Timestamp::try_from(time) {
        Ok(ts) => format!("{ts:.6}"),
        Err(_) => "1970-01-01T00:00:00.000000Z".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use kube::api::ApiResource;

    use super::*;
    use crate::cache::{Controller, DeltaFifo, Indexer};

    fn cm(name: &str, rv: &str) -> Arc<Object> {
        let ar = ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&());
        let mut obj = Object::new(name, &ar).within("default");
        obj.metadata.resource_version = Some(rv.into());
        Arc::new(obj)
    }

    #[test]
    fn a_batch_is_one_flushed_line_with_every_schema_field() {
        let indexer = Arc::new(Indexer::new());
        // `gone` is already in the cache, so the relist that does not list it tombstones it.
        indexer.add(cm("gone", "5"));
        let fifo = Arc::new(DeltaFifo::new().known_objects(indexer.clone()));
        fifo.replace(vec![cm("a", "10")], "10");
        fifo.update(cm("a", "11"));
        let mut controller = Controller::new(fifo.clone(), indexer);
        let mut out = JsonLines::new(Vec::new(), ObjectMode::Meta, false);
        out.batch(&controller.try_process_next().unwrap()).unwrap();
        out.batch(&controller.try_process_next().unwrap()).unwrap();
        let text = String::from_utf8(out.into_inner()).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);

        let first = &lines[0];
        assert_eq!(first["kind"], "batch");
        assert_eq!(first["seq"], 1);
        assert_eq!(first["key"], "default/a");
        // The first replace on this FIFO is its initial list, tombstones included.
        assert_eq!(first["initial"], true);
        assert_eq!(lines[1]["initial"], true);
        assert_eq!(first["queueDepth"], 1);
        assert!(first["waitMs"].as_f64().unwrap() >= 0.0);
        let time = first["time"].as_str().unwrap();
        assert!(
            time.ends_with('Z') && time.len() == "2026-11-22T14:03:07.123456Z".len(),
            "{time}"
        );
        let deltas = first["deltas"].as_array().unwrap();
        assert_eq!(deltas[0]["type"], "Replaced");
        assert_eq!(deltas[1]["type"], "Updated");
        assert_eq!(deltas[1]["resourceVersion"], "11");
        assert_eq!(deltas[1]["tombstone"], false);
        assert_eq!(deltas[1]["object"]["metadata"]["name"], "a");

        let tombstone = &lines[1]["deltas"][0];
        assert_eq!(tombstone["type"], "Deleted");
        assert_eq!(tombstone["tombstone"], true);
        assert_eq!(tombstone["resourceVersion"], "5");
    }

    #[test]
    fn object_none_omits_the_field() {
        let fifo = Arc::new(DeltaFifo::new());
        fifo.add(cm("a", "1"));
        let mut controller = Controller::new(fifo, Arc::new(Indexer::new()));
        let mut out = JsonLines::new(Vec::new(), ObjectMode::None, false);
        out.batch(&controller.try_process_next().unwrap()).unwrap();
        let line: Value = serde_json::from_slice(&out.into_inner()).unwrap();
        assert!(line["deltas"][0].get("object").is_none());
    }
}
