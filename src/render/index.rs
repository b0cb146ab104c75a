//! The answers of `kubectl deltas index` in every output format: tables for people, JSON, YAML
//! and JSON lines for scripts, names and keys for `xargs`.
//!
//! Two shapes, one per kind of answer:
//! - a [`ValueListing`] is `{"index", "total", "values": [{"value", "count", "keys"}]}`, where the
//!   row of the objects without a value has `"value": null` (`<none>` in tables); as JSON lines,
//!   one row per line;
//! - [`Matches`] are the objects themselves, as a kubectl `List` (`{"apiVersion": "v1", "kind":
//!   "List", "items": […]}`) that `kubectl apply -f` or `jq '.items[]'` take as they are; as JSON
//!   lines, one object per line.
//!
//! Secret `data` and `stringData` values are redacted unless asked for (and the whole
//! last-applied-configuration annotation, which holds them too).

use std::io::{self, Write};

use jiff::Timestamp;
use serde::Serialize;
use serde_json::Value;

use super::index_table::{objects_table, values_table};
use super::object::{ObjectMode, ObjectView};
use super::printable;
use crate::object::Object;
use crate::query::{Matches, ValueListing};

/// An output format of `kubectl deltas index` (`-o`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum IndexFormat {
    /// A table: value, count and the first keys that fit the terminal's width ($COLUMNS when
    /// set; 80 columns when piped), then how many more (`-o wide`, `json` or `jsonl` list every
    /// key); with `--value`, one row per object.
    Table,
    /// The table with every key (wrapped to the terminal's width, one line per value when
    /// piped); with `--value`, uid and owners too.
    Wide,
    /// One JSON document (the objects as a kubectl List with `--value`).
    Json,
    /// One YAML document (the objects as a kubectl List with `--value`).
    Yaml,
    /// One JSON object per line: a value with its count and keys, or an object.
    Jsonl,
    /// `resource/name` per object, like kubectl (`pod/web-1`, `deployment.apps/web`); without
    /// `--value`, each indexed value.
    Name,
}

/// The width a piped `-o table` fits its lists of keys into, as kubectl's default terminal.
const PIPED_WIDTH: usize = 80;

/// Writes index answers in one format.
#[derive(Debug, Clone)]
pub struct IndexRenderer {
    format: IndexFormat,
    width: Option<usize>,
    show_secret_data: bool,
    now: Timestamp,
    /// Whether tables start with their header row (kubectl's `--no-headers` turns it off).
    headers: bool,
}

#[derive(Serialize)]
struct ListingDoc<'a> {
    index: &'a str,
    total: usize,
    values: Vec<RowDoc<'a>>,
}

#[derive(Serialize)]
struct RowDoc<'a> {
    /// `null` for the objects without a value.
    value: Option<&'a str>,
    count: usize,
    keys: Vec<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ListDoc<'a> {
    api_version: &'static str,
    kind: &'static str,
    metadata: Value,
    items: Vec<ObjectView<'a>>,
}

impl IndexRenderer {
    /// A renderer for `format`; tables are not truncated, the age of objects is counted from the
    /// present, Secret values are redacted.
    pub fn new(format: IndexFormat) -> Self {
        IndexRenderer {
            format,
            width: None,
            show_secret_data: false,
            now: Timestamp::now(),
            headers: true,
        }
    }

    /// Fits tables into `width` columns (`None`: no limit, nothing truncated).
    #[must_use]
    pub fn width(mut self, width: Option<usize>) -> Self {
        self.width = width;
        self
    }

    /// Shows Secret `data`/`stringData` values instead of `<redacted>`.
    #[must_use]
    pub fn show_secret_data(mut self, show: bool) -> Self {
        self.show_secret_data = show;
        self
    }

    /// Leaves out the header row of tables, as kubectl's `--no-headers`.
    #[must_use]
    pub fn no_headers(mut self, no_headers: bool) -> Self {
        self.headers = !no_headers;
        self
    }

    /// The time the AGE column counts from.
    #[must_use]
    pub fn now(mut self, now: Timestamp) -> Self {
        self.now = now;
        self
    }

    /// Writes a listing of an index's values.
    pub fn values(&self, out: &mut impl Write, listing: &ValueListing) -> io::Result<()> {
        let rows = || {
            listing.rows.iter().map(|row| RowDoc {
                value: row.value.as_deref(),
                count: row.count(),
                keys: row.keys.iter().map(|k| &**k).collect(),
            })
        };
        let doc = || ListingDoc {
            index: &listing.index,
            total: listing.total,
            values: rows().collect(),
        };
        match self.format {
            IndexFormat::Table | IndexFormat::Wide => {
                let wide = self.format == IndexFormat::Wide;
                // A table piped too is cut to a width: a value with 5,000 keys would otherwise be
                // one line of 75 KB. The wide table keeps every key.
                let width = if wide {
                    self.width
                } else {
                    self.width.or(Some(PIPED_WIDTH))
                };
                let lines = values_table(listing, width, wide);
                write_lines(out, self.without_header(lines))
            }
            IndexFormat::Json => write_json(out, &doc()),
            IndexFormat::Yaml => write_yaml(out, &doc()),
            IndexFormat::Jsonl => rows().try_for_each(|row| write_json_line(out, &row)),
            IndexFormat::Name => listing
                .rows
                .iter()
                .filter_map(|row| row.value.as_deref())
                .try_for_each(|value| writeln!(out, "{}", printable(value))),
        }
    }

    /// Writes the objects that matched.
    pub fn objects(&self, out: &mut impl Write, matches: &Matches) -> io::Result<()> {
        let items = || matches.objects.iter().map(|m| self.object(&m.object));
        match self.format {
            IndexFormat::Table | IndexFormat::Wide => {
                let wide = self.format == IndexFormat::Wide;
                let lines = objects_table(matches, self.width, wide, self.now);
                write_lines(out, self.without_header(lines))
            }
            IndexFormat::Json | IndexFormat::Yaml => {
                let list = ListDoc {
                    api_version: "v1",
                    kind: "List",
                    metadata: serde_json::json!({"resourceVersion": ""}),
                    items: items().collect(),
                };
                if self.format == IndexFormat::Json {
                    write_json(out, &list)
                } else {
                    write_yaml(out, &list)
                }
            }
            IndexFormat::Jsonl => {
                items().try_for_each(|item| write_json_line(out, &item.compact_json()))
            }
            IndexFormat::Name => matches
                .objects
                .iter()
                .try_for_each(|m| writeln!(out, "{}", printable(&kubectl_name(&m.object)))),
        }
    }

    /// The object as written: serialized straight from its text, without a tree of it (which
    /// would be as deep as the object).
    fn object<'a>(&self, obj: &'a Object) -> ObjectView<'a> {
        ObjectView::new(obj, ObjectMode::Full, self.show_secret_data)
            .unwrap_or_else(|| unreachable!("the full mode shows the object"))
    }
}

/// Writes store keys one per line, control characters escaped ([`printable`]): a name holding a
/// newline must not pass for two keys.
pub fn write_keys<'a>(
    out: &mut impl Write,
    keys: impl IntoIterator<Item = &'a str>,
) -> io::Result<()> {
    keys.into_iter()
        .try_for_each(|key| writeln!(out, "{}", printable(key)))
}

/// `kubectl get -o name`'s spelling: `pod/web-1`, `deployment.apps/web`; the bare name when the
/// object does not say its kind.
pub fn kubectl_name(obj: &Object) -> String {
    let name = obj.name().unwrap_or_default();
    let kind = obj.kind().to_lowercase();
    if kind.is_empty() {
        return name.to_owned();
    }
    match obj.api_version().split_once('/') {
        Some((group, _)) => format!("{kind}.{group}/{name}"),
        None => format!("{kind}/{name}"),
    }
}

impl IndexRenderer {
    /// A table's lines, without its first (the header) under `--no-headers`.
    fn without_header(&self, mut lines: Vec<String>) -> Vec<String> {
        if !self.headers && !lines.is_empty() {
            lines.remove(0);
        }
        lines
    }
}

fn write_lines(out: &mut impl Write, lines: Vec<String>) -> io::Result<()> {
    lines
        .into_iter()
        .try_for_each(|line| writeln!(out, "{line}"))
}

// JSON goes into memory first too, as YAML below: objects are serialized from their text, and
// an error met on the way (a closed pipe) would reach the caller as text.
fn write_json(out: &mut impl Write, value: &impl Serialize) -> io::Result<()> {
    let mut text = serde_json::to_vec_pretty(value)?;
    text.push(b'\n');
    out.write_all(&text)
}

fn write_json_line(out: &mut impl Write, value: &impl Serialize) -> io::Result<()> {
    let mut text = serde_json::to_vec(value)?;
    text.push(b'\n');
    out.write_all(&text)
}

fn write_yaml(out: &mut impl Write, value: &impl Serialize) -> io::Result<()> {
    // Into a string first: the YAML serializer's errors would hide a write error's kind, and a
    // closed pipe (`| head`) must stay recognisable as one.
    let text = serde_saphyr::to_string(value).map_err(io::Error::other)?;
    out.write_all(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::{IndexSpec, Indexer};
    use kube::api::ApiResource;
    use serde_json::json;
    use std::sync::Arc;

    fn cached(objects: Vec<Value>, spec: &str) -> Indexer<Object> {
        let mut indexer = Indexer::new();
        let spec: IndexSpec = spec.parse().unwrap();
        indexer.add_indexer(spec.name(), spec.index_func()).unwrap();
        for value in objects {
            indexer.add(Arc::new(Object::from_value(value).unwrap()));
        }
        indexer
    }

    fn render(renderer: &IndexRenderer, matches: &Matches) -> String {
        let mut out = Vec::new();
        renderer.objects(&mut out, matches).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn names_are_spelled_like_kubectl() {
        let deploy = ApiResource::erase::<k8s_openapi::api::apps::v1::Deployment>(&());
        let node = ApiResource::erase::<k8s_openapi::api::core::v1::Node>(&());
        assert_eq!(
            kubectl_name(&Object::new("web", &deploy).within("a")),
            "deployment.apps/web"
        );
        assert_eq!(kubectl_name(&Object::new("n1", &node)), "node/n1");
        let mut bare = Object::new("x", &node);
        bare.set_types(None);
        assert_eq!(kubectl_name(&bare), "x");
    }

    #[test]
    fn secrets_are_redacted_in_every_object_format_unless_asked() {
        let indexer = cached(
            vec![json!({"apiVersion": "v1", "kind": "Secret",
                        "metadata": {"name": "db", "namespace": "a", "labels": {"app": "db"}},
                        "data": {"password": "aHVudGVyMg=="}})],
            "label:app",
        );
        let matches = Matches::from_indexer(&indexer, "label:app", &["db".into()]).unwrap();
        for format in [IndexFormat::Json, IndexFormat::Yaml, IndexFormat::Jsonl] {
            let text = render(&IndexRenderer::new(format), &matches);
            assert!(text.contains("<redacted>"), "{format:?}: {text}");
            assert!(!text.contains("aHVudGVyMg=="), "{format:?}: {text}");
            let shown = render(&IndexRenderer::new(format).show_secret_data(true), &matches);
            assert!(shown.contains("aHVudGVyMg=="), "{format:?}: {shown}");
        }
    }

    #[test]
    fn a_listing_parses_back_with_null_for_objects_without_a_value() {
        let indexer = cached(
            vec![
                json!({"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": "p1", "namespace": "a", "labels": {"app": "web"}}}),
                json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p2", "namespace": "a"}}),
            ],
            "label:app",
        );
        let listing = ValueListing::from_indexer(&indexer, "label:app").unwrap();
        let expected = json!({"index": "label:app", "total": 2, "values": [
            {"value": "web", "count": 1, "keys": ["a/p1"]},
            {"value": null, "count": 1, "keys": ["a/p2"]},
        ]});
        let mut json_out = Vec::new();
        IndexRenderer::new(IndexFormat::Json)
            .values(&mut json_out, &listing)
            .unwrap();
        assert_eq!(
            serde_json::from_slice::<Value>(&json_out).unwrap(),
            expected
        );
        let mut yaml_out = Vec::new();
        IndexRenderer::new(IndexFormat::Yaml)
            .values(&mut yaml_out, &listing)
            .unwrap();
        let yaml: Value = serde_saphyr::from_slice(&yaml_out).unwrap();
        assert_eq!(yaml, expected);
        let mut names = Vec::new();
        IndexRenderer::new(IndexFormat::Name)
            .values(&mut names, &listing)
            .unwrap();
        assert_eq!(String::from_utf8(names).unwrap(), "web\n");
    }
}
