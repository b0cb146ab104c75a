use std::sync::Arc;

use serde_json::json;

use std::time::SystemTime;

use super::*;

use crate::cache::test_objects::bare_cm as cm;
use crate::cache::{Batch, DeltaFifo, Indexer, ProcessLoop, RealFifo, ReflectorStore};

fn write(out: &mut JsonLines<Vec<u8>>, batch: &Batch<Object>) {
    let view = BatchView {
        resource: "configmaps",
        time: SystemTime::UNIX_EPOCH + Duration::from_micros(1_700_000_000_123_456),
        batch,
    };
    out.batch(&view).unwrap();
}

#[test]
fn a_batch_is_one_flushed_line_with_every_schema_field() {
    let mut indexer = Indexer::new();
    // `gone` is already in the cache, so the relist that does not list it tombstones it.
    indexer.add(cm("gone", "5"));
    let fifo = Arc::new(DeltaFifo::new().known_objects(Arc::new(indexer.reader())));
    fifo.replace(vec![cm("a", "10")], "10");
    fifo.update(cm("a", "11"));
    let mut controller = ProcessLoop::new(fifo.clone(), indexer);
    let mut out = JsonLines::new(Vec::new(), ObjectMode::Meta, false);
    write(&mut out, &controller.try_process_next().unwrap());
    write(&mut out, &controller.try_process_next().unwrap());
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
    assert_eq!(first["resource"], "configmaps");
    assert_eq!(first["time"], "2023-11-14T22:13:20.123456Z");
    // The first replace on this FIFO is its initial list, tombstones included.
    assert_eq!(first["initial"], true);
    assert_eq!(lines[1]["initial"], true);
    assert_eq!(first["queueDepth"], 1);
    assert!(first["waitMs"].as_f64().unwrap() >= 0.0);
    let deltas = first["deltas"].as_array().unwrap();
    assert_eq!(deltas[0]["type"], "Replaced");
    assert_eq!(deltas[1]["type"], "Updated");
    assert_eq!(deltas[1]["resourceVersion"], "11");
    assert_eq!(deltas[1]["tombstone"], false);
    assert_eq!(deltas[1]["object"]["metadata"]["name"], "a");
    assert_eq!(deltas[1]["object"]["kind"], "ConfigMap");

    let tombstone = &lines[1]["deltas"][0];
    assert_eq!(tombstone["type"], "Deleted");
    assert_eq!(tombstone["tombstone"], true);
    assert_eq!(tombstone["resourceVersion"], "5");
}

fn lines(out: JsonLines<Vec<u8>>) -> Vec<Value> {
    String::from_utf8(out.into_inner())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn whole_list_deltas_have_no_key_and_count_their_objects() {
    let indexer = Indexer::new();
    let queue = Arc::new(RealFifo::atomic());
    queue.replace(vec![cm("a", "1"), cm("b", "2")], "2");
    queue.bookmark("7");
    queue.resync();
    let mut controller = ProcessLoop::new(queue.clone(), indexer);
    // Even with whole objects asked for: a relist is counted, not repeated.
    let mut out = JsonLines::new(Vec::new(), ObjectMode::Full, false);
    while let Some(batch) = controller.try_process_next() {
        write(&mut out, &batch);
    }
    let all = lines(out);
    let lines: Vec<&Value> = all.iter().filter(|l| l["kind"] == "batch").collect();
    let summary: Vec<(&str, &Value, &Value)> = lines
        .iter()
        .map(|l| {
            assert_eq!(l["key"], Value::Null, "{l}");
            let delta = &l["deltas"][0];
            assert_eq!(delta["key"], Value::Null, "{l}");
            assert!(delta.get("object").is_none(), "{l}");
            assert_eq!(delta["tombstone"], false, "{l}");
            (
                delta["type"].as_str().unwrap(),
                &delta["objects"],
                &delta["resourceVersion"],
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("ReplacedAll", &json!(2), &json!("2")),
            ("Bookmark", &json!(0), &json!("7")),
            // What the resync re-delivered: the whole cache.
            ("SyncAll", &json!(2), &Value::Null),
        ]
    );
    assert_eq!(lines[0]["initial"], true);
    assert_eq!(lines[1]["initial"], false);

    // Each key a whole-list delta touched follows its batch's line; a bookmark touches none.
    let items: Vec<(u64, &str, &str, &str, &str)> = all
        .iter()
        .filter(|l| l["kind"] == "item")
        .map(|l| {
            (
                l["seq"].as_u64().unwrap(),
                l["wholeList"].as_str().unwrap(),
                l["key"].as_str().unwrap(),
                l["type"].as_str().unwrap(),
                l["change"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        items,
        [
            (1, "ReplacedAll", "default/a", "Replaced", "added"),
            (1, "ReplacedAll", "default/b", "Replaced", "added"),
            (3, "SyncAll", "default/a", "Sync", "unchanged"),
            (3, "SyncAll", "default/b", "Sync", "unchanged"),
        ]
    );
    let kinds: Vec<&str> = all.iter().map(|l| l["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["batch", "item", "item", "batch", "batch", "item", "item"]
    );
    // Under the --object rules, as a per-object delta.
    assert_eq!(all[1]["object"]["metadata"]["name"], "a");
    assert_eq!(all[1]["resourceVersion"], "1");
}

#[test]
fn a_relist_of_an_atomic_queue_names_each_deletion_with_its_tombstone() {
    let mut indexer = Indexer::new();
    indexer.add(cm("kept", "1"));
    indexer.add(cm("gone", "2"));
    indexer.add(cm("changed", "3"));
    let queue = Arc::new(RealFifo::atomic());
    queue.replace(
        vec![cm("kept", "1"), cm("changed", "4"), cm("new", "5")],
        "5",
    );
    let mut controller = ProcessLoop::new(queue.clone(), indexer);
    let mut out = JsonLines::new(Vec::new(), ObjectMode::None, false);
    while let Some(batch) = controller.try_process_next() {
        write(&mut out, &batch);
    }
    let items: Vec<(String, String, String, bool)> = lines(out)
        .iter()
        .filter(|l| l["kind"] == "item")
        .map(|l| {
            assert!(l.get("object").is_none(), "{l}");
            (
                l["key"].as_str().unwrap().to_owned(),
                l["type"].as_str().unwrap().to_owned(),
                l["change"].as_str().unwrap().to_owned(),
                l["tombstone"].as_bool().unwrap(),
            )
        })
        .collect();
    let item = |key: &str, type_: &str, change: &str, tombstone| {
        (
            key.to_owned(),
            type_.to_owned(),
            change.to_owned(),
            tombstone,
        )
    };
    assert_eq!(
        items,
        [
            item("default/gone", "Deleted", "deleted", true),
            item("default/kept", "Replaced", "unchanged", false),
            item("default/changed", "Replaced", "updated", false),
            item("default/new", "Replaced", "added", false),
        ]
    );
}

#[test]
fn each_delta_of_a_batch_of_several_keys_has_its_own_key() {
    let indexer = Indexer::new();
    let queue = Arc::new(RealFifo::new(Arc::new(indexer.reader())));
    queue.add(cm("a", "1"));
    queue.add(cm("b", "2"));
    queue.update(cm("a", "3"));
    let mut controller = ProcessLoop::new(queue.clone(), indexer).batch_pop(5);
    let mut out = JsonLines::new(Vec::new(), ObjectMode::None, false);
    while let Some(batch) = controller.try_process_next() {
        write(&mut out, &batch);
    }
    let lines = lines(out);
    let keys: Vec<(Value, Vec<&Value>)> = lines
        .iter()
        .map(|l| {
            let deltas = l["deltas"].as_array().unwrap();
            (l["key"].clone(), deltas.iter().map(|d| &d["key"]).collect())
        })
        .collect();
    // A batch stops before a key it already has.
    assert_eq!(
        keys,
        [
            (Value::Null, vec![&json!("default/a"), &json!("default/b")]),
            (json!("default/a"), vec![&json!("default/a")]),
        ]
    );
    assert!(lines[0]["deltas"][0].get("objects").is_none());
}

#[test]
fn the_informer_line_names_the_queue_and_its_pops() {
    let mut out = JsonLines::new(Vec::new(), ObjectMode::Full, false);
    out.event(&EventView {
        resource: "pods",
        time: SystemTime::UNIX_EPOCH,
        event: Event::InformerStarted {
            queue: QueueKind::Real,
            batch_pop: 4,
            profile: None,
        },
    })
    .unwrap();
    assert_eq!(
        String::from_utf8(out.into_inner()).unwrap(),
        "{\"kind\":\"reflector\",\"time\":\"1970-01-01T00:00:00.000000Z\",\"resource\":\"pods\",\
         \"event\":\"informer-start\",\"batchPop\":4,\"queue\":\"real\"}\n"
    );
}

#[test]
fn object_none_omits_the_field() {
    let fifo = Arc::new(DeltaFifo::new());
    fifo.add(cm("a", "1"));
    let mut controller = ProcessLoop::new(fifo, Indexer::new());
    let mut out = JsonLines::new(Vec::new(), ObjectMode::None, false);
    write(&mut out, &controller.try_process_next().unwrap());
    let line: Value = serde_json::from_slice(&out.into_inner()).unwrap();
    assert!(line["deltas"][0].get("object").is_none());
}

#[test]
fn events_carry_the_resource_and_their_fields() {
    let mut out = JsonLines::new(Vec::new(), ObjectMode::Full, false);
    let time = SystemTime::UNIX_EPOCH;
    let kind = ReflectorEventKind::Resync { keys: 3 };
    out.event(&EventView {
        resource: "pods",
        time,
        event: Event::Reflector(&kind),
    })
    .unwrap();
    out.event(&EventView {
        resource: "pods",
        time,
        event: Event::Synced {
            batches: 2,
            after: Duration::from_micros(1500),
        },
    })
    .unwrap();
    let text = String::from_utf8(out.into_inner()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            r#"{"kind":"reflector","time":"1970-01-01T00:00:00.000000Z","resource":"pods","event":"resync","keys":3}"#,
            r#"{"kind":"reflector","time":"1970-01-01T00:00:00.000000Z","resource":"pods","event":"synced","afterMs":1.5,"batches":2}"#,
        ]
    );
}
