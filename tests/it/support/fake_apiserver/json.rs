//! JSON output in the apiserver's byte-level shape.
//!
//! `serde_json` is built without `preserve_order` in this crate graph, so a `Value` object
//! always serialises with sorted keys. The real apiserver writes Go structs, whose fields come
//! out in declaration order (`kind`, `apiVersion`, `metadata`, ...), and Go maps sorted. To
//! reproduce that, responses are assembled from [`Obj`] (insertion-ordered) and stored objects
//! are re-ordered by [`object`] using the Go field order of the well-known structs.

use std::fmt::Write as _;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

/// A JSON node whose objects keep insertion order.
pub(crate) enum J {
    V(Value),
    O(Obj),
    A(Vec<J>),
}

/// An insertion-ordered JSON object.
#[derive(Default)]
pub(crate) struct Obj(Vec<(String, J)>);

impl Obj {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub(crate) fn with(mut self, key: &str, value: impl Into<J>) -> Self {
        self.push(key, value);
        self
    }

    pub(crate) fn push(&mut self, key: &str, value: impl Into<J>) {
        self.0.push((key.to_owned(), value.into()));
    }

    pub(crate) fn extend(&mut self, other: Obj) {
        self.0.extend(other.0);
    }

    /// Serialise as a complete response body: Go-style HTML escaping plus the trailing newline
    /// that `json.Encoder.Encode` appends.
    pub(crate) fn to_body(&self) -> String {
        let mut out = String::new();
        write_obj(self, &mut out);
        go_escape(&mut out);
        out.push('\n');
        out
    }
}

/// One value's text as it appears inside a response body (Go-style HTML escaping, no newline):
/// a list item that is written on its own.
pub(crate) fn fragment(j: &J) -> String {
    let mut out = String::new();
    write_j(j, &mut out);
    go_escape(&mut out);
    out
}

/// A list's text up to its first item: `{`, `head`'s fields (`kind`, `apiVersion`, `metadata`)
/// and `"items":[`, as apimachinery's `streamingEncodeList` writes it before the items.
pub(crate) fn list_prefix(head: &Obj) -> String {
    let mut out = String::new();
    write_obj(head, &mut out);
    go_escape(&mut out);
    // Reopens the object that `write_obj` closed.
    out.pop();
    out.push_str(if head.0.is_empty() {
        r#""items":["#
    } else {
        r#","items":["#
    });
    out
}

impl From<Value> for J {
    fn from(v: Value) -> Self {
        J::V(v)
    }
}
impl From<Obj> for J {
    fn from(o: Obj) -> Self {
        J::O(o)
    }
}
impl From<Vec<J>> for J {
    fn from(a: Vec<J>) -> Self {
        J::A(a)
    }
}
impl From<&str> for J {
    fn from(s: &str) -> Self {
        J::V(Value::String(s.to_owned()))
    }
}
impl From<String> for J {
    fn from(s: String) -> Self {
        J::V(Value::String(s))
    }
}
impl From<bool> for J {
    fn from(b: bool) -> Self {
        J::V(Value::Bool(b))
    }
}
impl From<u64> for J {
    fn from(n: u64) -> Self {
        J::V(Value::from(n))
    }
}
impl From<Vec<String>> for J {
    fn from(v: Vec<String>) -> Self {
        J::V(Value::from(v))
    }
}

fn write_obj(o: &Obj, out: &mut String) {
    out.push('{');
    for (i, (k, v)) in o.0.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&serde_json::to_string(k).expect("string key"));
        out.push(':');
        write_j(v, out);
    }
    out.push('}');
}

fn write_j(j: &J, out: &mut String) {
    match j {
        J::V(v) => out.push_str(&serde_json::to_string(v).expect("json value")),
        J::O(o) => write_obj(o, out),
        J::A(a) => {
            out.push('[');
            for (i, v) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_j(v, out);
            }
            out.push(']');
        }
    }
}

/// Go's encoder escapes `<`, `>`, `&`, U+2028 and U+2029 everywhere. Those characters can only
/// occur inside JSON strings, so a global replacement is exact.
fn go_escape(s: &mut String) {
    if !s.contains(['<', '>', '&', '\u{2028}', '\u{2029}']) {
        return;
    }
    *s = s
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029");
}

/// The Go struct a JSON object stands for, as far as field order is concerned.
#[derive(Clone, Copy)]
enum Shape {
    /// A top-level API object (`ConfigMap`, `Pod`, a CRD instance, ...).
    Object,
    ObjectMeta,
    ManagedFields,
    OwnerReference,
    /// A Go map or an unknown struct: sorted keys.
    Sorted,
}

impl Shape {
    /// Keys written first, in this order; then the remaining keys sorted; then `last`.
    fn order(self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            Shape::Object => (
                &[
                    "kind",
                    "apiVersion",
                    "metadata",
                    "spec",
                    "immutable",
                    "data",
                    "binaryData",
                    "stringData",
                    "type",
                ],
                &["status"],
            ),
            Shape::ObjectMeta => (
                &[
                    "name",
                    "generateName",
                    "namespace",
                    "selfLink",
                    "uid",
                    "resourceVersion",
                    "generation",
                    "creationTimestamp",
                    "deletionTimestamp",
                    "deletionGracePeriodSeconds",
                    "labels",
                    "annotations",
                    "ownerReferences",
                    "finalizers",
                    "managedFields",
                ],
                &[],
            ),
            Shape::ManagedFields => (
                &[
                    "manager",
                    "operation",
                    "apiVersion",
                    "time",
                    "fieldsType",
                    "fieldsV1",
                    "subresource",
                ],
                &[],
            ),
            Shape::OwnerReference => (
                &[
                    "apiVersion",
                    "kind",
                    "name",
                    "uid",
                    "controller",
                    "blockOwnerDeletion",
                ],
                &[],
            ),
            Shape::Sorted => (&[], &[]),
        }
    }

    fn child(self, key: &str) -> Shape {
        match (self, key) {
            (Shape::Object, "metadata") => Shape::ObjectMeta,
            (Shape::ObjectMeta, "managedFields") => Shape::ManagedFields,
            (Shape::ObjectMeta, "ownerReferences") => Shape::OwnerReference,
            _ => Shape::Sorted,
        }
    }
}

/// Re-order a stored API object (and, optionally, drop `kind`/`apiVersion` as list items do).
pub(crate) fn object(v: &Value, with_type: bool) -> J {
    let mut j = shaped(v, Shape::Object);
    if !with_type && let J::O(o) = &mut j {
        o.0.retain(|(k, _)| k != "kind" && k != "apiVersion");
    }
    j
}

fn shaped(v: &Value, shape: Shape) -> J {
    match (v, shape) {
        (_, Shape::Sorted) => J::V(v.clone()),
        (Value::Array(items), _) => J::A(items.iter().map(|i| shaped(i, shape)).collect()),
        (Value::Object(map), _) => {
            let (first, last) = shape.order();
            let mut o = Obj::new();
            let mut put = |k: &str| {
                if let Some(val) = map.get(k) {
                    o.push(k, shaped(val, shape.child(k)));
                }
            };
            first.iter().for_each(|k| put(k));
            map.keys()
                .filter(|k| !first.contains(&k.as_str()) && !last.contains(&k.as_str()))
                .for_each(|k| put(k));
            last.iter().for_each(|k| put(k));
            J::O(o)
        }
        _ => J::V(v.clone()),
    }
}

/// A `metav1.Status` body. `details` is omitted when `None`, as Go's `omitempty` does.
pub(crate) fn status(code: u16, reason: &str, message: &str, details: Option<Obj>) -> String {
    status_with_meta(code, reason, message, details, Obj::new())
}

pub(crate) fn status_with_meta(
    code: u16,
    reason: &str,
    message: &str,
    details: Option<Obj>,
    metadata: Obj,
) -> String {
    status_obj(code, reason, message, details, metadata).to_body()
}

pub(crate) fn status_obj(
    code: u16,
    reason: &str,
    message: &str,
    details: Option<Obj>,
    metadata: Obj,
) -> Obj {
    let mut o = Obj::new()
        .with("kind", "Status")
        .with("apiVersion", "v1")
        .with("metadata", metadata)
        .with("status", "Failure")
        .with("message", message);
    if !reason.is_empty() {
        o.push("reason", reason);
    }
    if let Some(d) = details {
        o.push("details", d);
    }
    o.with("code", u64::from(code))
}

/// `metav1.StatusDetails` in Go field order; empty strings are omitted like `omitempty`.
pub(crate) fn details(name: &str, group: &str, kind: &str) -> Obj {
    let mut d = Obj::new();
    for (k, v) in [("name", name), ("group", group), ("kind", kind)] {
        if !v.is_empty() {
            d.push(k, v);
        }
    }
    d
}

/// RFC 3339 UTC timestamp with second precision, as `metav1.Time` serialises.
pub(crate) fn now_rfc3339() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil-from-days (H. Hinnant), valid for any date after 1970.
    let z = days as i64 + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// A random-looking version-4 UUID; uniqueness within a test run is all that matters.
pub(crate) fn new_uid() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut bytes = [0u8; 16];
    for half in bytes.chunks_mut(8) {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        half.copy_from_slice(&h.finish().to_le_bytes());
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let mut s = String::with_capacity(36);
    for (i, b) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        let _ = write!(s, "{b:02x}");
    }
    s
}
