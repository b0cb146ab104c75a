//! The lines of a recording (format v1) and their JSON shape. See `docs/recording.md`.
//!
//! Decoding goes through one flat [`WireLine`] with every field optional, so that a line is parsed
//! in one pass (objects straight into [`Object`]) and checked afterwards with messages that say
//! what was expected. Encoding borrows what it writes ([`LineRef`]), so that recording a list page
//! or an event never clones its objects.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use kube::core::{ApiResource, GroupVersionKind};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::object::{FromJson, Object};
use crate::source::discovery::ResourceCatalog;
use crate::source::kube_api::INITIAL_EVENTS_END_ANNOTATION;
use crate::source::{ApiStatus, ListPage, ResourceTarget, SourceError, WatchEvent};

/// The recording format version this library reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// The optional first line: what was recorded, and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The resource that was listed and watched.
    pub resource: RecordedResource,
    /// The namespace, or `None` for all namespaces (and cluster-scoped resources).
    pub namespace: Option<String>,
    /// When the recording began: the instant of `t = 0` (the epoch when the header does not
    /// say, as for a recording without a header).
    pub started_at: SystemTime,
    /// Whether only metadata was listed and watched (`--metadata-only`): the objects are
    /// `PartialObjectMetadata`, and a replay refuses what reads outside metadata as `record` did.
    pub metadata_only: bool,
    /// The `replay` flags the recording is meant to be replayed with (`replayWith`, e.g.
    /// `["--resync", "30s", "--handler", "slow,delay=2s"]`), one argument per element: what it
    /// shows needs them. `replay` uses them when given none of its own; empty when the header does
    /// not say.
    pub replay_with: Vec<String>,
}

impl Header {
    /// The target a replay describes itself as (for messages and for filling in `kind` and
    /// `apiVersion` of list items).
    pub fn target(&self) -> ResourceTarget {
        ResourceTarget::new(self.resource.api_resource(), self.namespace.clone())
    }
}

/// The recorded resource's group, version, kind and plural name, whether it is namespaced, and
/// the other names discovery gave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedResource {
    /// API group, `""` for the core group.
    pub group: String,
    /// API version within the group, e.g. `v1`.
    pub version: String,
    /// Kind, e.g. `Pod`.
    pub kind: String,
    /// Plural resource name, e.g. `pods`.
    pub plural: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Singular resource name, e.g. `pod`; empty when unknown (kubectl then takes the lowercased
    /// kind).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub singular: String,
    /// Short names, e.g. `po`.
    #[serde(default, rename = "shortNames", skip_serializing_if = "Vec::is_empty")]
    pub short_names: Vec<String>,
}

impl RecordedResource {
    /// From kube's `ApiResource` and the scope (which `ApiResource` does not carry).
    pub fn new(api_resource: &ApiResource, namespaced: bool) -> Self {
        RecordedResource {
            group: api_resource.group.clone(),
            version: api_resource.version.clone(),
            kind: api_resource.kind.clone(),
            plural: api_resource.plural.clone(),
            namespaced,
            singular: String::new(),
            short_names: Vec::new(),
        }
    }

    /// With the singular and short names discovery gives the resource, so that a replay can be
    /// named by them too.
    pub fn with_names(mut self, singular: impl Into<String>, short_names: Vec<String>) -> Self {
        self.singular = singular.into();
        self.short_names = short_names;
        self
    }

    /// Whether `arg` names this resource as `kubectl get ARG` would name it: by its plural,
    /// singular or short name, its kind, `resource.group` or `resource.version.group`, in any
    /// case (the rules of [`ResourceCatalog::resolve`], with this as the only resource served).
    pub fn is_named(&self, arg: &str) -> bool {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
            APIGroup, APIGroupList, APIResource, APIResourceList, GroupVersionForDiscovery,
        };
        let group_version = self.gvk().api_version();
        let list = APIResourceList {
            group_version: group_version.clone(),
            resources: vec![APIResource {
                name: self.plural.clone(),
                singular_name: self.singular.clone(),
                kind: self.kind.clone(),
                namespaced: self.namespaced,
                short_names: Some(self.short_names.clone()),
                verbs: vec!["list".into(), "watch".into()],
                ..APIResource::default()
            }],
        };
        let catalog = if self.group.is_empty() {
            ResourceCatalog::from_documents(vec![list], &APIGroupList::default(), Vec::new())
        } else {
            let version = GroupVersionForDiscovery {
                group_version,
                version: self.version.clone(),
            };
            let groups = APIGroupList {
                groups: vec![APIGroup {
                    name: self.group.clone(),
                    preferred_version: Some(version.clone()),
                    versions: vec![version],
                    ..APIGroup::default()
                }],
            };
            ResourceCatalog::from_documents(Vec::new(), &groups, vec![list])
        };
        catalog.resolve(arg).is_ok()
    }

    /// As kube's `ApiResource`.
    pub fn api_resource(&self) -> ApiResource {
        ApiResource::from_gvk_with_plural(&self.gvk(), &self.plural)
    }

    fn gvk(&self) -> GroupVersionKind {
        GroupVersionKind::gvk(&self.group, &self.version, &self.kind)
    }

    /// Whether this is the core group's Secret, whose values recordings redact by default.
    pub fn is_secret(&self) -> bool {
        self.group.is_empty() && self.kind == "Secret"
    }
}

/// Which request a failed-request `ERROR` line answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RequestKind {
    /// A list (one page of it).
    List,
    /// Opening a watch.
    Watch,
}

/// One line after the header: what the API server answered (or a resync tick).
// Events are the bulk of every recording; boxing them would cost an allocation per line to save
// space only on the rare other lines.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Line {
    /// `LIST`: one page of a list; the list is complete at the page without `continue`.
    List(ListPage),
    /// `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` or `ERROR` (without `request`): an event of an
    /// open watch. An `ERROR` event ends the watch.
    Event(WatchEvent),
    /// `WATCH_CLOSED`: the server ended the watch stream; with an error when it broke.
    WatchClosed(Option<SourceError>),
    /// `ERROR` with `"request": "list" | "watch"`: the request itself failed (an HTTP error
    /// Status, or no answer at all) and no page or stream came back.
    RequestFailed {
        /// The request that failed.
        request: RequestKind,
        /// How.
        error: SourceError,
    },
    /// `RESYNC`: a resync of the FIFO happened here.
    Resync,
}

impl Line {
    /// The line as messages name it: "a LIST page", "an ADDED watch event", …
    pub fn describe(&self) -> &'static str {
        match self {
            Line::List(_) => "a LIST page",
            Line::Event(WatchEvent::Added(_)) => "an ADDED watch event",
            Line::Event(WatchEvent::Modified(_)) => "a MODIFIED watch event",
            Line::Event(WatchEvent::Deleted(_)) => "a DELETED watch event",
            Line::Event(WatchEvent::Bookmark { .. }) => "a BOOKMARK watch event",
            Line::Event(WatchEvent::Error(_)) => "an ERROR watch event",
            Line::WatchClosed(_) => "WATCH_CLOSED",
            Line::RequestFailed {
                request: RequestKind::List,
                ..
            } => "a failed list (ERROR with \"request\": \"list\")",
            Line::RequestFailed {
                request: RequestKind::Watch,
                ..
            } => "a failed watch (ERROR with \"request\": \"watch\")",
            Line::Resync => "RESYNC",
        }
    }
}

/// One line of a recording as read: where it is, its time and what it says.
#[derive(Debug, Clone)]
pub struct Record {
    /// Line number in the file, from 1.
    pub line_no: u64,
    /// Time since the recording began, to the microsecond (a line without `t` has the previous
    /// line's).
    pub t: Duration,
    /// What the line says.
    pub line: Line,
    /// What the recorded session chose or did at this line, beside the server's answer.
    pub live: LiveNotes,
}

/// What a recording keeps of the live session besides the server's answers: the random choices
/// its Reflector made and how far its queue had coalesced, so that a replay shows those rather
/// than drawing its own, and can tell where its pops differ. Recordings made before these fields
/// existed have none of them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LiveNotes {
    /// `timeoutSeconds`: the watch whose first answer this line is was opened with this
    /// timeout (the Reflector draws 5 to 10 minutes).
    pub timeout_seconds: Option<u32>,
    /// `backoff`: the Reflector waited this long, after a failure, before the request this
    /// line answers.
    pub backoff: Option<Duration>,
    /// `coalesced`: deltas the live queue had appended to keys still queued, in all, before
    /// this line reached it. Written where it changed; a line without it has the previous
    /// line's.
    pub coalesced: Option<u64>,
}

// ---------------------------------------------------------------------------------------------
// Decoding

/// The `type` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LineType {
    List,
    Added,
    Modified,
    Deleted,
    Bookmark,
    Error,
    WatchClosed,
    Resync,
}

impl LineType {
    const NAMES: [&'static str; 8] = [
        "LIST",
        "ADDED",
        "MODIFIED",
        "DELETED",
        "BOOKMARK",
        "ERROR",
        "WATCH_CLOSED",
        "RESYNC",
    ];
    const ALL: [LineType; 8] = [
        LineType::List,
        LineType::Added,
        LineType::Modified,
        LineType::Deleted,
        LineType::Bookmark,
        LineType::Error,
        LineType::WatchClosed,
        LineType::Resync,
    ];
}

// By hand rather than derived: serde_json reports a derived enum given a number or an array as
// invalid JSON ("expected value"); this says what the value is and what it should be.
impl<'de> Deserialize<'de> for LineType {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Names;
        impl serde::de::Visitor<'_> for Names {
            type Value = LineType;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "one of {LINE_TYPES}")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<LineType, E> {
                LineType::NAMES
                    .iter()
                    .position(|name| *name == v)
                    .map(|i| LineType::ALL[i])
                    .ok_or_else(|| E::unknown_variant(v, &LineType::NAMES))
            }
        }
        deserializer.deserialize_str(Names)
    }
}

pub(super) const LINE_TYPES: &str =
    "LIST, ADDED, MODIFIED, DELETED, BOOKMARK, ERROR, WATCH_CLOSED or RESYNC";

/// A failure without a server Status: `{"kind": "connect", "message": "…"}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct WireError {
    kind: WireErrorKind,
    #[serde(default)]
    message: String,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum WireErrorKind {
    Connect,
    Stream,
    Request,
}

/// `t`: milliseconds since the recording began, an integer or a number with a fraction (written
/// to the microsecond, `12.345`), read to the nearest microsecond.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum WireT {
    /// A time at or after the start, to the microsecond.
    Micros(u64),
    /// Negative, or too large to count in microseconds: refused with a message by the reader.
    OutOfRange(f64),
}

impl<'de> Deserialize<'de> for WireT {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Millis;
        impl serde::de::Visitor<'_> for Millis {
            type Value = WireT;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a number of milliseconds since the recording began")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<WireT, E> {
                Ok(v.checked_mul(1000)
                    .map_or(WireT::OutOfRange(v as f64), WireT::Micros))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<WireT, E> {
                match u64::try_from(v) {
                    Ok(v) => self.visit_u64(v),
                    Err(_) => Ok(WireT::OutOfRange(v as f64)),
                }
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<WireT, E> {
                let micros = (v * 1000.0).round();
                // Beyond 2^53 µs (285 years) an f64 no longer holds every microsecond.
                if (0.0..=9.007_199_254_740_992e15).contains(&micros) {
                    Ok(WireT::Micros(micros as u64))
                } else {
                    Ok(WireT::OutOfRange(v))
                }
            }
        }
        deserializer.deserialize_any(Millis)
    }
}

/// `t` as written: whole milliseconds as an integer (`12`), others with their microseconds
/// (`12.345`).
#[derive(Debug, Clone, Copy)]
pub(super) struct MillisOut(pub Duration);

impl MillisOut {
    /// Whole milliseconds, or milliseconds with the microseconds as a fraction.
    fn value(self) -> Result<u64, f64> {
        let micros = u64::try_from(self.0.as_micros()).unwrap_or(u64::MAX);
        if micros.is_multiple_of(1000) {
            Ok(micros / 1000)
        } else {
            // The shortest decimal that reads back as this f64, which is within a microsecond.
            Err(micros as f64 / 1000.0)
        }
    }
}

impl Serialize for MillisOut {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.value() {
            Ok(whole) => serializer.serialize_u64(whole),
            Err(fraction) => serializer.serialize_f64(fraction),
        }
    }
}

impl std::fmt::Display for MillisOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.value() {
            Ok(whole) => write!(f, "{whole}"),
            Err(fraction) => write!(f, "{fraction}"),
        }
    }
}

/// Every field any line may have; which ones must be present depends on `type`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WireLine {
    // The header.
    pub kind: Option<String>,
    pub v: Option<u32>,
    pub resource: Option<RecordedResource>,
    pub namespace: Option<String>,
    pub started_at: Option<String>,
    pub metadata_only: Option<bool>,
    pub replay_with: Option<Vec<String>>,
    // Every other line.
    pub t: Option<WireT>,
    #[serde(rename = "type")]
    pub type_: Option<LineType>,
    pub resource_version: Option<String>,
    #[serde(rename = "continue")]
    pub continue_token: Option<String>,
    pub remaining_item_count: Option<i64>,
    pub items: Option<Vec<FromJson>>,
    pub object: Option<FromJson>,
    pub request: Option<RequestKind>,
    pub error: Option<WireError>,
    // What the live session chose or did (`LiveNotes`).
    pub timeout_seconds: Option<u32>,
    pub backoff: Option<WireT>,
    pub coalesced: Option<u64>,
}

impl WireLine {
    pub(super) fn is_header(&self) -> bool {
        self.kind.as_deref() == Some("header")
    }

    /// The header, or what is wrong with it.
    pub(super) fn into_header(self) -> Result<Header, String> {
        match self.v {
            Some(FORMAT_VERSION) => {}
            Some(v) => {
                return Err(format!(
                    "recording format version {v} is not supported (this version of \
                     kubectl-deltas reads version {FORMAT_VERSION})"
                ));
            }
            None => return Err(format!("the header lacks \"v\": {FORMAT_VERSION}")),
        }
        let resource = self.resource.ok_or(
            "the header lacks \"resource\": {\"group\", \"version\", \"kind\", \"plural\", \
             \"namespaced\"}",
        )?;
        // Without it, times start at the epoch, as in a recording without a header.
        let started_at = match self.started_at {
            Some(text) => SystemTime::from(
                text.parse::<jiff::Timestamp>()
                    .map_err(|e| format!("\"startedAt\" is not an RFC 3339 time: {e}"))?,
            ),
            None => SystemTime::UNIX_EPOCH,
        };
        Ok(Header {
            resource,
            namespace: self.namespace.filter(|ns| !ns.is_empty()),
            started_at,
            metadata_only: self.metadata_only.unwrap_or(false),
            replay_with: self.replay_with.unwrap_or_default(),
        })
    }

    /// The line, or what is wrong with it.
    pub(super) fn into_line(self) -> Result<Line, String> {
        let Some(type_) = self.type_ else {
            return Err(if self.kind.is_some() {
                "a header is only allowed on the first line".to_owned()
            } else {
                format!("expected a \"type\" field ({LINE_TYPES})")
            });
        };
        if self.request.is_some() && type_ != LineType::Error {
            return Err("\"request\" belongs on ERROR lines only".to_owned());
        }
        let object = self.object.map(|o| o.0);
        let line = match type_ {
            LineType::List => Line::List(ListPage {
                items: named_items(
                    self.items
                        .unwrap_or_default()
                        .into_iter()
                        .map(|o| o.0)
                        .collect(),
                )?,
                resource_version: self.resource_version.unwrap_or_default(),
                continue_token: self.continue_token.filter(|c| !c.is_empty()),
                remaining_item_count: self.remaining_item_count,
            }),
            LineType::Added => Line::Event(WatchEvent::Added(named_object(object, "an ADDED")?)),
            LineType::Modified => {
                Line::Event(WatchEvent::Modified(named_object(object, "a MODIFIED")?))
            }
            LineType::Deleted => {
                Line::Event(WatchEvent::Deleted(named_object(object, "a DELETED")?))
            }
            LineType::Bookmark => {
                let object = object.ok_or(
                    "a BOOKMARK needs an \"object\" with metadata.resourceVersion".to_owned(),
                )?;
                let initial_events_end = object
                    .annotation(INITIAL_EVENTS_END_ANNOTATION)
                    .is_some_and(|v| v == "true");
                let resource_version = object
                    .resource_version()
                    .filter(|rv| !rv.is_empty())
                    .map(str::to_owned)
                    .ok_or("a BOOKMARK's object needs metadata.resourceVersion".to_owned())?;
                Line::Event(WatchEvent::Bookmark {
                    resource_version,
                    initial_events_end,
                })
            }
            LineType::Error => {
                let error = source_error(object, self.error)?;
                match (self.request, error) {
                    (Some(request), error) => Line::RequestFailed { request, error },
                    (None, SourceError::Api(status)) => Line::Event(WatchEvent::Error(status)),
                    (None, _) => {
                        return Err("an ERROR watch event needs a Status \"object\"; a failure \
                                    without one (\"error\") needs \"request\": \"list\" or \
                                    \"watch\""
                            .to_owned());
                    }
                }
            }
            LineType::WatchClosed => match (object, self.error) {
                (None, None) => Line::WatchClosed(None),
                (object, error) => Line::WatchClosed(Some(source_error(object, error)?)),
            },
            LineType::Resync => Line::Resync,
        };
        Ok(line)
    }
}

/// List items need a name, as watch events' objects do: the store keys objects by it.
fn named_items(items: Vec<Object>) -> Result<Vec<Object>, String> {
    match items.iter().position(|obj| !has_name(obj)) {
        Some(i) => Err(format!(
            "item {i} of the LIST (counting from 0) needs metadata.name"
        )),
        None => Ok(items),
    }
}

fn has_name(obj: &Object) -> bool {
    obj.name().is_some_and(|n| !n.is_empty())
}

fn named_object(object: Option<Object>, type_: &str) -> Result<Arc<Object>, String> {
    match object {
        Some(obj) if has_name(&obj) => Ok(Arc::new(obj)),
        Some(_) => Err(format!("the object of {type_} event needs metadata.name")),
        None => Err(format!(
            "{type_} event needs an \"object\" (the object as the server sent it)"
        )),
    }
}

/// A Status object or a `{"kind", "message"}` error as a [`SourceError`].
fn source_error(object: Option<Object>, error: Option<WireError>) -> Result<SourceError, String> {
    match (object, error) {
        (Some(status), None) => api_status(&status).map(SourceError::Api),
        (None, Some(WireError { kind, message })) => Ok(match kind {
            WireErrorKind::Connect => SourceError::Connect(message),
            WireErrorKind::Stream => SourceError::Stream(message),
            WireErrorKind::Request => SourceError::Request(message),
        }),
        (Some(_), Some(_)) => {
            Err("give either a Status \"object\" or an \"error\", not both".into())
        }
        (None, None) => Err(
            "expected a Status \"object\" (with code, reason, message) or an \"error\" \
             ({\"kind\": \"connect\" | \"stream\" | \"request\", \"message\": …})"
                .into(),
        ),
    }
}

/// A Status object as an [`ApiStatus`]. The server always sets `code` (the HTTP status) on the
/// Status of a failure; an object without one is not a Status.
fn api_status(status: &Object) -> Result<ApiStatus, String> {
    let text = |name: &str| match status.field_value(name) {
        Some(Value::String(s)) => s,
        _ => String::new(),
    };
    let code = status
        .field_value("code")
        .and_then(|c| c.as_u64())
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| *c > 0)
        .ok_or("the Status \"object\" needs its \"code\", the HTTP status (such as 410)")?;
    let causes = match status.field_value("details") {
        Some(Value::Object(details)) => match details.get("causes") {
            Some(Value::Array(causes)) => causes
                .iter()
                .filter_map(|c| c.get("reason").and_then(Value::as_str))
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    Ok(ApiStatus {
        code,
        reason: text("reason"),
        message: text("message"),
        causes,
    })
}

// ---------------------------------------------------------------------------------------------
// Encoding

/// A line to write, borrowing its contents.
#[derive(Debug, Clone, Copy)]
pub(super) enum LineRef<'a> {
    List(&'a ListPage),
    Event(&'a WatchEvent),
    WatchClosed(Option<&'a SourceError>),
    RequestFailed(RequestKind, &'a SourceError),
    Resync,
}

impl<'a> From<&'a Line> for LineRef<'a> {
    fn from(line: &'a Line) -> Self {
        match line {
            Line::List(page) => LineRef::List(page),
            Line::Event(event) => LineRef::Event(event),
            Line::WatchClosed(error) => LineRef::WatchClosed(error.as_ref()),
            Line::RequestFailed { request, error } => LineRef::RequestFailed(*request, error),
            Line::Resync => LineRef::Resync,
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct HeaderOut<'a> {
    pub kind: &'static str,
    pub v: u32,
    pub resource: &'a RecordedResource,
    pub namespace: Option<&'a str>,
    pub started_at: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub metadata_only: bool,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub replay_with: &'a [String],
}

impl<'a> HeaderOut<'a> {
    pub(super) fn new(header: &'a Header) -> Self {
        let started_at = jiff::Timestamp::try_from(header.started_at)
            .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
            .to_string();
        HeaderOut {
            kind: "header",
            v: FORMAT_VERSION,
            resource: &header.resource,
            namespace: header.namespace.as_deref(),
            started_at,
            metadata_only: header.metadata_only,
            replay_with: &header.replay_with,
        }
    }
}

/// The serialized shape of every line but the header, with the fields in reading order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct LineOut<'a> {
    pub t: MillisOut,
    #[serde(rename = "type")]
    pub type_: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request: Option<RequestKind>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backoff: Option<MillisOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coalesced: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<&'a str>,
    #[serde(rename = "continue", skip_serializing_if = "Option::is_none")]
    pub continue_token: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remaining_item_count: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<ItemsOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object: Option<ObjectOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<WireError>,
}

impl LineOut<'_> {
    pub(super) fn new(t: Duration, type_: &'static str) -> Self {
        LineOut {
            t: MillisOut(t),
            type_,
            request: None,
            backoff: None,
            timeout_seconds: None,
            coalesced: None,
            resource_version: None,
            continue_token: None,
            remaining_item_count: None,
            items: None,
            object: None,
            error: None,
        }
    }
}

/// Secret redaction while writing: which objects are Secrets, and whether to redact them.
#[derive(Debug, Clone, Copy)]
pub(super) struct Redaction {
    /// Redact Secret values (false with `--show-secret-data`).
    pub enabled: bool,
    /// The recorded resource is Secrets, so list items without `kind` are Secrets too.
    pub resource_is_secret: bool,
}

impl Redaction {
    fn applies_to(self, obj: &Object) -> bool {
        self.enabled
            && match obj.types() {
                Some(types) if !types.kind.is_empty() => obj.is_secret(),
                _ => self.resource_is_secret,
            }
    }

    /// The object to write: itself, or a copy with its Secret values replaced.
    pub(super) fn object<'a>(self, obj: &'a Object) -> ObjectOut<'a> {
        if !self.applies_to(obj) {
            return ObjectOut::Borrowed(obj);
        }
        ObjectOut::Owned(Box::new(obj.redacted()))
    }
}

/// An object to write.
pub(super) enum ObjectOut<'a> {
    Borrowed(&'a Object),
    Owned(Box<Object>),
    Value(Value),
    Status(StatusOut<'a>),
}

impl Serialize for ObjectOut<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ObjectOut::Borrowed(obj) => obj.serialize(serializer),
            ObjectOut::Owned(obj) => obj.serialize(serializer),
            ObjectOut::Value(value) => value.serialize(serializer),
            ObjectOut::Status(status) => status.serialize(serializer),
        }
    }
}

/// A list page's items, redacted where needed.
pub(super) struct ItemsOut<'a> {
    pub items: &'a [Object],
    pub redaction: Redaction,
}

impl Serialize for ItemsOut<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.items.iter().map(|obj| self.redaction.object(obj)))
    }
}

/// A Status object as the API server sends it, fields in its order.
pub(super) fn status_value(status: &ApiStatus) -> StatusOut<'_> {
    StatusOut {
        kind: "Status",
        api_version: "v1",
        metadata: Empty {},
        status: "Failure",
        message: &status.message,
        reason: &status.reason,
        details: (!status.causes.is_empty()).then(|| DetailsOut {
            causes: status
                .causes
                .iter()
                .map(|reason| CauseOut { reason })
                .collect(),
        }),
        code: status.code,
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct StatusOut<'a> {
    kind: &'static str,
    api_version: &'static str,
    metadata: Empty,
    status: &'static str,
    message: &'a str,
    reason: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    details: Option<DetailsOut<'a>>,
    code: u16,
}

/// A Status's `details`, of which only the causes' reasons are kept.
#[derive(Serialize)]
pub(super) struct DetailsOut<'a> {
    causes: Vec<CauseOut<'a>>,
}

#[derive(Serialize)]
pub(super) struct CauseOut<'a> {
    reason: &'a str,
}

#[derive(Serialize)]
pub(super) struct Empty {}

/// The `type` of an event line.
pub(super) fn event_type(event: &WatchEvent) -> &'static str {
    match event {
        WatchEvent::Added(_) => "ADDED",
        WatchEvent::Modified(_) => "MODIFIED",
        WatchEvent::Deleted(_) => "DELETED",
        WatchEvent::Bookmark { .. } => "BOOKMARK",
        WatchEvent::Error(_) => "ERROR",
    }
}

/// How an error is written: a Status `object` for server answers, an `error` otherwise.
pub(super) fn error_parts(error: &SourceError) -> (Option<ObjectOut<'_>>, Option<WireError>) {
    let wire = |kind, message: &str| {
        Some(WireError {
            kind,
            message: message.to_owned(),
        })
    };
    match error {
        SourceError::Api(status) => (Some(ObjectOut::Status(status_value(status))), None),
        SourceError::Connect(m) => (None, wire(WireErrorKind::Connect, m)),
        SourceError::Stream(m) => (None, wire(WireErrorKind::Stream, m)),
        SourceError::Request(m) => (None, wire(WireErrorKind::Request, m)),
    }
}

/// A BOOKMARK's object as the server sends it: only kind, apiVersion and metadata.
pub(super) fn bookmark_value(
    resource: Option<&RecordedResource>,
    resource_version: &str,
    initial_events_end: bool,
) -> Value {
    let mut metadata = serde_json::json!({ "resourceVersion": resource_version });
    if initial_events_end {
        metadata["annotations"] = serde_json::json!({ INITIAL_EVENTS_END_ANNOTATION: "true" });
    }
    let mut value = serde_json::json!({ "metadata": metadata });
    if let Some(r) = resource {
        value["kind"] = Value::String(r.kind.clone());
        value["apiVersion"] = Value::String(r.gvk().api_version());
    }
    value
}
