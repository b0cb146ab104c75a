//! The format both ways: what the writer writes reads back as the same lines, hand-written lines
//! parse as documented, and every malformed line is reported with its file, line and what was
//! expected.

use std::io::Write;
use std::time::{Duration, SystemTime};

use super::*;
use crate::object::Object;
use crate::source::recording::{Line, RecordedResource, RecordingWriter, RequestKind};
use crate::source::{ApiStatus, ListPage, SourceError, WatchEvent};

fn ms(millis: u64) -> Duration {
    Duration::from_millis(millis)
}

/// The `t` of each record, in microseconds.
fn micros(records: &[Record]) -> Vec<u128> {
    records.iter().map(|r| r.t.as_micros()).collect()
}

fn configmaps() -> RecordedResource {
    RecordedResource {
        group: String::new(),
        version: "v1".into(),
        kind: "ConfigMap".into(),
        plural: "configmaps".into(),
        namespaced: true,
        singular: String::new(),
        short_names: Vec::new(),
    }
}

fn cm(name: &str, rv: &str) -> Object {
    let mut value = serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "resourceVersion": rv},
        "data": {"k": "v"},
    });
    if rv.is_empty() {
        value["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("resourceVersion");
    }
    Object::from_value(value).unwrap()
}

fn read(text: &str) -> Result<(Option<Header>, Vec<Record>), RecordingError> {
    read_all("test.jsonl", std::io::Cursor::new(text.to_owned()))
}

fn error_of(text: &str) -> String {
    read(text).expect_err("malformed").to_string()
}

fn header() -> Header {
    Header {
        resource: configmaps(),
        namespace: Some("default".into()),
        started_at: SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
        metadata_only: false,
        replay_with: vec!["--resync".into(), "30s".into()],
    }
}

#[test]
fn written_lines_read_back_the_same() {
    let mut item = cm("a", "5");
    item.set_types(None); // as on the wire
    let lines = vec![
        Line::List(ListPage {
            items: vec![item.clone()],
            resource_version: "10".into(),
            continue_token: Some("next".into()),
            remaining_item_count: Some(3),
        }),
        Line::List(ListPage {
            items: vec![],
            resource_version: "10".into(),
            continue_token: None,
            remaining_item_count: None,
        }),
        Line::Event(WatchEvent::Added(Arc::new(cm("b", "11")))),
        Line::Event(WatchEvent::Modified(Arc::new(cm("b", "12")))),
        Line::Event(WatchEvent::Deleted(Arc::new(cm("b", "13")))),
        Line::Event(WatchEvent::Bookmark {
            resource_version: "14".into(),
            initial_events_end: true,
        }),
        Line::Resync,
        Line::WatchClosed(None),
        Line::WatchClosed(Some(SourceError::Stream("connection reset".into()))),
        Line::Event(WatchEvent::Error(ApiStatus {
            code: 410,
            reason: "Expired".into(),
            message: "too old resource version: 5 (14)".into(),
            causes: Vec::new(),
        })),
        Line::RequestFailed {
            request: RequestKind::List,
            error: SourceError::Api(ApiStatus {
                code: 429,
                reason: "TooManyRequests".into(),
                message: "slow down".into(),
                causes: Vec::new(),
            }),
        },
        Line::RequestFailed {
            request: RequestKind::Watch,
            error: SourceError::Connect("connection refused".into()),
        },
    ];
    let mut writer = RecordingWriter::new(Vec::new(), &header()).unwrap();
    for (i, line) in lines.iter().enumerate() {
        writer.write(ms(i as u64 * 10), line).unwrap();
    }
    let text = String::from_utf8(writer.into_inner()).unwrap();

    let (read_header, records) = read(&text).unwrap();
    assert_eq!(read_header, Some(header()));
    assert_eq!(records.len(), lines.len());
    for (i, (record, line)) in records.iter().zip(&lines).enumerate() {
        assert_eq!(record.t, ms(i as u64 * 10));
        assert_eq!(record.line_no, i as u64 + 2, "the header is line 1");
        // Lines have no PartialEq (objects compare by value through their Debug form).
        assert_eq!(
            format!("{:?}", record.line),
            format!("{line:?}"),
            "line {i}"
        );
    }
    assert!(
        text.lines()
            .nth(1)
            .unwrap()
            .starts_with(r#"{"t":0,"type":"LIST""#),
        "{text}"
    );
}

#[test]
fn header_line_is_as_documented() {
    let mut writer = RecordingWriter::new(Vec::new(), &header()).unwrap();
    writer.write(ms(0), &Line::Resync).unwrap();
    let text = String::from_utf8(writer.into_inner()).unwrap();
    assert_eq!(
        text.lines().next().unwrap(),
        r#"{"kind":"header","v":1,"resource":{"group":"","version":"v1","kind":"ConfigMap","plural":"configmaps","namespaced":true},"namespace":"default","startedAt":"2023-11-14T22:13:20Z","replayWith":["--resync","30s"]}"#
    );
}

#[test]
fn hand_written_lines_parse_with_defaults() {
    let text = r#"
{"type":"LIST","resourceVersion":"1","items":[{"metadata":{"name":"a","namespace":"default"}}]}

{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"b"}}}
{"t":7,"type":"MODIFIED","object":{"metadata":{"name":"b"}}}
{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired","message":"gone"}}
"#;
    let (header, records) = read(text).unwrap();
    assert!(header.is_none());
    let summary: Vec<(u64, u64, &str)> = records
        .iter()
        .map(|r| (r.line_no, r.t.as_millis() as u64, r.line.describe()))
        .collect();
    assert_eq!(
        summary,
        [
            (2, 0, "a LIST page"),
            (4, 0, "an ADDED watch event"),
            (5, 7, "a MODIFIED watch event"),
            (6, 7, "an ERROR watch event"),
        ]
    );
    let Line::List(page) = &records[0].line else {
        panic!()
    };
    assert!(page.items[0].types().is_none(), "kind stays absent");
    assert_eq!(page.continue_token, None);
    let Line::Event(WatchEvent::Error(status)) = &records[3].line else {
        panic!()
    };
    assert_eq!((status.code, status.reason.as_str()), (410, "Expired"));
}

#[test]
fn malformed_lines_name_file_line_and_expectation() {
    let cases: &[(&str, &str)] = &[
        (
            "{\"t\":0,\"type\":\"RESYNC\"}\n{\"t\":1,\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}\n",
            "test.jsonl:2: not valid JSON (column 56): EOF while parsing an object",
        ),
        (
            "{\"t\":0,\"type\":\"RESYNC\"}\n{\"t\":1}\n",
            "test.jsonl:2: expected a \"type\" field (LIST, ADDED, MODIFIED, DELETED, BOOKMARK, ERROR, WATCH_CLOSED or RESYNC)",
        ),
        (
            "{\"t\":5,\"type\":\"RESYNC\"}\n{\"type\":\"RESYNC\"}\n{\"t\":4,\"type\":\"RESYNC\"}\n",
            "test.jsonl:3: \"t\" is 4, less than the previous line's 5: t counts milliseconds since the recording began and must never decrease",
        ),
        (
            "{\"t\":0,\"type\":\"UPDATED\"}\n",
            "test.jsonl:1: not a recording line (column 23): unknown variant `UPDATED`, expected one of `LIST`, `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK`, `ERROR`, `WATCH_CLOSED`, `RESYNC`",
        ),
        (
            "{\"t\":5,\"type\":\"ERROR\",\"object\":{\"foo\":\"bar\"}}\n",
            "test.jsonl:1: the Status \"object\" needs its \"code\", the HTTP status (such as 410)",
        ),
        (
            "{\"t\":1000000000000000,\"type\":\"RESYNC\"}\n",
            "test.jsonl:1: \"t\" is 1000000000000000, more than 100 years after the recording began",
        ),
        (
            "{\"t\":12,\"type\":5}\n",
            "test.jsonl:1: not a recording line (column 16): invalid type: integer `5`, expected one of LIST, ADDED, MODIFIED, DELETED, BOOKMARK, ERROR, WATCH_CLOSED or RESYNC",
        ),
        (
            "{\"t\":12,\"type\":[\"RESYNC\"]}\n",
            "test.jsonl:1: not a recording line (column 15): invalid type: sequence, expected one of LIST",
        ),
        (
            "{\"t\":0,\"type\":\"ADDED\"}\n",
            "test.jsonl:1: an ADDED event needs an \"object\" (the object as the server sent it)",
        ),
        (
            "{\"t\":0,\"type\":\"DELETED\",\"object\":{\"metadata\":{}}}\n",
            "test.jsonl:1: the object of a DELETED event needs metadata.name",
        ),
        (
            "{\"t\":0,\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{}}}\n",
            "test.jsonl:1: a BOOKMARK's object needs metadata.resourceVersion",
        ),
        (
            "{\"t\":-1,\"type\":\"RESYNC\"}\n",
            "test.jsonl:1: \"t\" is -1, before the recording began: t counts milliseconds since then",
        ),
        (
            "{\"t\":\"5\",\"type\":\"RESYNC\"}\n",
            "test.jsonl:1: not a recording line (column 8): invalid type: string \"5\", expected a number of milliseconds since the recording began",
        ),
        (
            "{\"t\":5.5,\"type\":\"RESYNC\"}\n{\"t\":5.499,\"type\":\"RESYNC\"}\n",
            "test.jsonl:2: \"t\" is 5.499, less than the previous line's 5.5: t counts milliseconds since the recording began and must never decrease",
        ),
        (
            "{\"t\":0,\"type\":\"ERROR\"}\n",
            "test.jsonl:1: expected a Status \"object\" (with code, reason, message) or an \"error\" ({\"kind\": \"connect\" | \"stream\" | \"request\", \"message\": …})",
        ),
        (
            "{\"t\":0,\"type\":\"RESYNC\"}\n{\"kind\":\"header\",\"v\":1}\n",
            "test.jsonl:2: a header is only allowed on the first line",
        ),
        (
            "{\"kind\":\"header\",\"v\":2}\n",
            "test.jsonl:1: recording format version 2 is not supported (this version of kubectl-deltas reads version 1)",
        ),
        (
            "{\"kind\":\"header\",\"v\":1,\"resource\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\",\"plural\":\"pods\",\"namespaced\":true},\"startedAt\":\"yesterday\"}\n",
            "test.jsonl:1: \"startedAt\" is not an RFC 3339 time",
        ),
        (
            "{\"t\":0,\"type\":\"LIST\",\"items\":[{\"metadata\":{\"name\":\"a\"}},{\"data\":{}}]}\n",
            "test.jsonl:1: item 1 of the LIST (counting from 0) needs metadata.name",
        ),
        (
            "[1, 2]\n",
            "test.jsonl:1: expected a JSON object (`{…}`): every line of a recording is one",
        ),
    ];
    for (text, expected) in cases {
        let message = error_of(text);
        assert!(
            message.starts_with(expected),
            "for {text:?}\n got: {message}\nwant: {expected}"
        );
    }
    let error = read("\n\n{\"type\":\"NOPE\"}").unwrap_err();
    assert_eq!((error.file(), error.line()), ("test.jsonl", Some(3)));
}

#[test]
fn gzip_input_is_recognised_by_its_magic_bytes() {
    let text = "{\"t\":0,\"type\":\"RESYNC\"}\n{\"t\":3,\"type\":\"WATCH_CLOSED\"}\n";
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(text.as_bytes()).unwrap();
    let bytes = gz.finish().unwrap();
    let (_, records) = read_all("session.jsonl.gz", std::io::Cursor::new(bytes.clone())).unwrap();
    assert_eq!(records.len(), 2);
    assert_eq!(records[1].t, ms(3));

    // Cut short: the reader says so, with the line it was reading.
    let cut = bytes[..bytes.len() - 12].to_vec();
    let error = read_all("session.jsonl.gz", std::io::Cursor::new(cut)).unwrap_err();
    assert!(
        matches!(error, RecordingError::Read { .. }),
        "{error:?}: {error}"
    );
}

#[test]
fn a_killed_gzip_recording_reads_up_to_its_last_line() {
    // What `record` leaves when it is killed: every line flushed, the stream never finished.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    for t in 0..3 {
        writeln!(gz, "{{\"t\":{t},\"type\":\"RESYNC\"}}").unwrap();
        gz.flush().unwrap();
    }
    let killed = gz.get_ref().clone();
    let (_, records) = read_all("killed.jsonl.gz", std::io::Cursor::new(killed.clone())).unwrap();
    assert_eq!(micros(&records), [0, 1000, 2000]);

    // Cut inside a line instead: that line is lost, which is an error.
    let cut = killed[..killed.len() - 8].to_vec();
    let error = read_all("cut.jsonl.gz", std::io::Cursor::new(cut)).unwrap_err();
    assert_eq!(
        (error.file(), error.line()),
        ("cut.jsonl.gz", Some(3)),
        "{error}"
    );
}

#[test]
fn a_byte_order_mark_is_skipped() {
    let (_, records) = read("\u{feff}{\"t\":4,\"type\":\"RESYNC\"}\n").unwrap();
    assert_eq!(records[0].t, ms(4));
    let error = read("\u{feff}{\"t\":1,\"type\":\"NOPE\"}\n").unwrap_err();
    assert!(error.to_string().starts_with("test.jsonl:1: "), "{error}");
}

#[test]
fn opening_a_missing_file_names_it() {
    let error = RecordingReader::open(std::path::Path::new("/nonexistent/rec.jsonl")).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("cannot open the recording /nonexistent/rec.jsonl: "),
        "{error}"
    );
}

#[test]
fn secret_values_are_redacted_unless_asked_for() {
    let secret = |kind: bool| {
        let mut value = serde_json::json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s", "namespace": "default"},
            "data": {"password": "aHVudGVyMg=="},
            "stringData": {"user": "admin"},
            "type": "Opaque",
        });
        if !kind {
            let map = value.as_object_mut().unwrap();
            map.remove("kind");
            map.remove("apiVersion");
        }
        Object::from_value(value).unwrap()
    };
    let secrets = RecordedResource {
        kind: "Secret".into(),
        plural: "secrets".into(),
        ..configmaps()
    };
    let list = Line::List(ListPage {
        items: vec![secret(false)],
        resource_version: "1".into(),
        ..ListPage::default()
    });
    let event = Line::Event(WatchEvent::Modified(Arc::new(secret(true))));
    let write = |show: bool| {
        let mut writer = RecordingWriter::without_header(Vec::new(), Some(secrets.clone()))
            .show_secret_data(show);
        writer.write(ms(0), &list).unwrap();
        writer.write(ms(1), &event).unwrap();
        String::from_utf8(writer.into_inner()).unwrap()
    };
    let redacted = write(false);
    assert!(!redacted.contains("aHVudGVyMg=="), "{redacted}");
    assert!(!redacted.contains("admin"), "{redacted}");
    assert_eq!(redacted.matches(r#""password":"<redacted>""#).count(), 2);
    assert_eq!(redacted.matches(r#""user":"<redacted>""#).count(), 2);
    assert_eq!(redacted.matches(r#""type":"Opaque""#).count(), 2);
    let shown = write(true);
    assert_eq!(shown.matches("aHVudGVyMg==").count(), 2, "{shown}");

    // Other kinds are never touched.
    let mut writer = RecordingWriter::without_header(Vec::new(), Some(configmaps()));
    writer
        .write(
            ms(0),
            &Line::Event(WatchEvent::Added(Arc::new(cm("a", "1")))),
        )
        .unwrap();
    let text = String::from_utf8(writer.into_inner()).unwrap();
    assert!(text.contains(r#""data":{"k":"v"}"#), "{text}");
}

#[test]
fn t_is_written_and_read_to_the_microsecond() {
    let mut writer = RecordingWriter::without_header(Vec::new(), None);
    for t in [
        Duration::ZERO,
        Duration::from_nanos(1_234_567),
        Duration::from_micros(1_234_500),
        ms(7000),
        Duration::from_micros(3_000_000_000_000_001),
    ] {
        writer.write(t, &Line::Resync).unwrap();
    }
    let text = String::from_utf8(writer.into_inner()).unwrap();
    let ts: Vec<&str> = text.lines().map(|l| &l[5..l.find(',').unwrap()]).collect();
    // Whole milliseconds stay integers, as in every recording made before microseconds.
    assert_eq!(ts, ["0", "1.234", "1234.5", "7000", "3000000000000.001"]);
    let (_, records) = read(&text).unwrap();
    assert_eq!(
        micros(&records),
        [0, 1_234, 1_234_500, 7_000_000, 3_000_000_000_000_001]
    );
}

#[test]
fn writer_keeps_t_non_decreasing() {
    let mut writer = RecordingWriter::without_header(Vec::new(), None);
    writer.write(ms(20), &Line::Resync).unwrap();
    writer.write(ms(10), &Line::Resync).unwrap();
    let text = String::from_utf8(writer.into_inner()).unwrap();
    let (_, records) = read(&text).unwrap();
    assert_eq!(micros(&records), [20_000, 20_000]);
}

#[test]
fn a_recorded_resource_is_named_as_kubectl_names_it() {
    let pods = RecordedResource {
        kind: "Pod".into(),
        plural: "pods".into(),
        ..configmaps()
    }
    .with_names("pod", vec!["po".into()]);
    for arg in ["pods", "pod", "po", "Pod", "PODS"] {
        assert!(pods.is_named(arg), "{arg}");
    }
    for arg in ["configmaps", "pods.apps", "deploy", ""] {
        assert!(!pods.is_named(arg), "{arg}");
    }
    // Without the names discovery gave: kubectl's guess for the singular, no short name.
    let deployments = RecordedResource {
        group: "apps".into(),
        kind: "Deployment".into(),
        plural: "deployments".into(),
        ..configmaps()
    };
    for arg in [
        "deployments",
        "deployment",
        "Deployment",
        "deployments.apps",
        "deployment.v1.apps",
        "Deployment.v1.apps",
    ] {
        assert!(deployments.is_named(arg), "{arg}");
    }
    for arg in ["deploy", "deployments.extensions", "replicasets", "pods"] {
        assert!(!deployments.is_named(arg), "{arg}");
    }
    assert!(
        deployments
            .with_names("deployment", vec!["deploy".into()])
            .is_named("deploy.apps")
    );
}
