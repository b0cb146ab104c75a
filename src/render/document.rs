//! `-o json` and `-o yaml`: each popped batch (or UndeltaStore push) as one pretty document, with
//! the fields of its JSON line (docs/jsonl.md). Reflector events are left out: these formats are for reading
//! batches, and a stream of documents has no room for separator rows.

use std::io::{self, Write};

use serde::Serialize;

use super::jsonl::{BatchRecord, ItemRecord, NotificationRecord, PushRecord};
use super::object::ObjectMode;
use super::{BatchView, EventView, NotificationView, PushView, Renderer};

/// The document syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Pretty-printed JSON, one document after the other.
    Json,
    /// YAML documents, each introduced by `---`.
    Yaml,
}

/// Writes each batch as a document.
#[derive(Debug)]
pub struct Documents<W> {
    out: W,
    format: Format,
    object_mode: ObjectMode,
    show_secret_data: bool,
    text: Vec<u8>,
}

impl<W: Write> Documents<W> {
    /// A writer over `out`.
    pub fn new(out: W, format: Format, object_mode: ObjectMode, show_secret_data: bool) -> Self {
        Documents {
            out,
            format,
            object_mode,
            show_secret_data,
            text: Vec::new(),
        }
    }

    /// The underlying writer.
    pub fn into_inner(self) -> W {
        self.out
    }
}

impl<W: Write> Documents<W> {
    fn document(&mut self, record: &impl Serialize) -> io::Result<()> {
        self.text.clear();
        match self.format {
            Format::Json => {
                serde_json::to_writer_pretty(&mut self.text, record).map_err(io::Error::from)?;
                self.text.push(b'\n');
            }
            Format::Yaml => {
                self.text.extend_from_slice(b"---\n");
                let yaml = serde_saphyr::to_string(record).map_err(io::Error::other)?;
                self.text.extend_from_slice(yaml.as_bytes());
                if !yaml.ends_with('\n') {
                    self.text.push(b'\n');
                }
            }
        }
        self.out.write_all(&self.text)?;
        self.out.flush()
    }
}

impl<W: Write + Send> Renderer for Documents<W> {
    fn batch(&mut self, view: &BatchView<'_>) -> io::Result<()> {
        let record = BatchRecord::new(view, self.object_mode, self.show_secret_data, false);
        self.document(&record)?;
        for item in ItemRecord::of_batch(view, self.object_mode, self.show_secret_data, false) {
            self.document(&item)?;
        }
        Ok(())
    }

    fn event(&mut self, _event: &EventView<'_>) -> io::Result<()> {
        Ok(())
    }

    fn push(&mut self, view: &PushView<'_>) -> io::Result<()> {
        let record = PushRecord::new(view, self.object_mode, self.show_secret_data, false);
        self.document(&record)
    }

    /// A handler's notification, as the `notification` JSON line (docs/jsonl.md).
    fn notification(&mut self, view: &NotificationView<'_>) -> io::Result<()> {
        self.document(&NotificationRecord::new(view))
    }

    /// A controller's reconcile, as the `reconcile` JSON line (docs/jsonl.md).
    fn reconcile(&mut self, view: &super::reconcile::ReconcileView<'_>) -> io::Result<()> {
        self.document(&super::reconcile::ReconcileRecord::new(view))
    }

    /// What the session left unfinished, as the `ended` JSON lines (docs/jsonl.md).
    fn ended(&mut self, end: &super::ending::SessionEnd<'_>) -> io::Result<()> {
        for resource in end.resources.iter().filter(|r| r.is_unfinished()) {
            self.document(&super::ending::EndedRecord::new(end.time, resource))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::SystemTime;

    use kube::api::ApiResource;
    use serde_json::{Value, json};

    use super::*;

    use crate::cache::ReflectorStore;
    use crate::cache::{DeltaFifo, Indexer, ProcessLoop};
    use crate::object::Object;

    fn secret_batch() -> crate::cache::Batch<Object> {
        let ar = ApiResource::erase::<k8s_openapi::api::core::v1::Secret>(&());
        let mut obj = Object::new("db", &ar).within("prod");
        obj.meta_mut().resource_version = Some("7".into());
        obj.set_field("data", &json!({"password": "aHVudGVyMg=="}))
            .unwrap();
        let fifo = Arc::new(DeltaFifo::new());
        fifo.add(Arc::new(obj));
        ProcessLoop::new(fifo, Indexer::new())
            .try_process_next()
            .unwrap()
    }

    fn render(format: Format, show: bool) -> String {
        let batch = secret_batch();
        let mut docs = Documents::new(Vec::new(), format, ObjectMode::Full, show);
        let view = BatchView {
            resource: "secrets",
            time: SystemTime::UNIX_EPOCH,
            batch: &batch,
        };
        docs.batch(&view).unwrap();
        docs.batch(&view).unwrap();
        String::from_utf8(docs.into_inner()).unwrap()
    }

    #[test]
    fn json_documents_are_pretty_batches() {
        let text = render(Format::Json, false);
        let docs: Vec<Value> = serde_json::Deserializer::from_str(&text)
            .into_iter()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0]["kind"], "batch");
        assert_eq!(docs[0]["deltas"][0]["type"], "Added");
        assert_eq!(
            docs[0]["deltas"][0]["object"]["data"]["password"],
            "<redacted>"
        );
        assert!(text.contains("\n  \"seq\": 1"), "{text}");
    }

    #[test]
    fn yaml_documents_are_separated_and_redacted() {
        let text = render(Format::Yaml, false);
        assert!(text.starts_with("---\n"), "{text}");
        assert_eq!(text.matches("---\n").count(), 2);
        assert!(!text.contains("aHVudGVyMg=="), "{text}");
        let first = text.split("---\n").nth(1).unwrap();
        let doc: Value = serde_saphyr::from_str(first).unwrap();
        assert_eq!(doc["key"], "prod/db");
        assert_eq!(doc["deltas"][0]["object"]["data"]["password"], "<redacted>");
        assert!(render(Format::Yaml, true).contains("aHVudGVyMg=="));
    }
}
