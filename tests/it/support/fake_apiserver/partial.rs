//! Content negotiation of lists and watches: whole objects, or `PartialObjectMetadata` as
//! kube-apiserver serves it to client-go's metadata informer and kube's `list_metadata` /
//! `watch_metadata` (`list-metadata-configmaps-page1.json`, `watch-metadata-events.jsonl`).

use hyper::Response;
use serde_json::Value;

use super::handler::{Body, respond};
use super::json::{self, J, Obj};
use super::resources::ResourceDef;

const META_API_VERSION: &str = "meta.k8s.io/v1";

/// How a list or watch writes its objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// The resource's own kind.
    Full,
    /// `PartialObjectMetadata(List)` of `meta.k8s.io/v1`: type meta and `metadata`, nothing else.
    Metadata,
}

impl Encoding {
    /// The encoding an `Accept` header asks for. Its media ranges are tried in order; the first
    /// JSON (or wildcard) one decides. `as=PartialObjectMetadataList` is for lists and
    /// `as=PartialObjectMetadata` for watches (whose events each carry one object); the other way
    /// round is a 406, as the API server refuses to turn a list into one object or an object into
    /// a list.
    pub(crate) fn negotiate(accept: &str, watch: bool) -> Result<Self, Box<Response<Body>>> {
        for range in accept.split(',') {
            let mut parts = range.split(';').map(str::trim);
            let media = parts.next().unwrap_or_default();
            if !matches!(media, "application/json" | "application/*" | "*/*" | "") {
                continue;
            }
            let params: Vec<(&str, &str)> = parts.filter_map(|p| p.split_once('=')).collect();
            let get = |name: &str| params.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
            let Some(kind) = get("as") else {
                return Ok(Encoding::Full);
            };
            let meta_group =
                get("g") == Some("meta.k8s.io") && matches!(get("v"), Some("v1" | "v1beta1"));
            return match (kind, watch) {
                ("PartialObjectMetadataList", false) | ("PartialObjectMetadata", true)
                    if meta_group =>
                {
                    Ok(Encoding::Metadata)
                }
                ("PartialObjectMetadata", false) => Err(not_acceptable(
                    "you requested PartialObjectMetadata, but the requested object is a list",
                )),
                ("PartialObjectMetadataList", true) => Err(not_acceptable(
                    "you requested PartialObjectMetadataList, but the requested object is not a \
                     list",
                )),
                _ => Err(not_acceptable(&format!(
                    "only the following media types are accepted: application/json, \
                     application/yaml, application/vnd.kubernetes.protobuf, \
                     application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1 (asked \
                     for {kind})"
                ))),
            };
        }
        Ok(Encoding::Full)
    }

    /// The list's `kind` and `apiVersion`.
    pub(crate) fn list_type(self, def: &ResourceDef) -> (String, String) {
        match self {
            Encoding::Full => (format!("{}List", def.kind), def.api_version()),
            Encoding::Metadata => (
                "PartialObjectMetadataList".to_owned(),
                META_API_VERSION.to_owned(),
            ),
        }
    }

    /// A list item: without type meta in a full list, with it as `PartialObjectMetadata`.
    pub(crate) fn list_item(self, obj: &Value) -> J {
        match self {
            Encoding::Full => json::object(obj, false),
            Encoding::Metadata => partial(obj),
        }
    }

    /// A watch event's object: always with type meta.
    pub(crate) fn event_object(self, obj: &Value) -> J {
        match self {
            Encoding::Full => json::object(obj, true),
            Encoding::Metadata => partial(obj),
        }
    }

    /// A bookmark's `kind` and `apiVersion`.
    pub(crate) fn bookmark_type(self, def: &ResourceDef) -> (String, String) {
        match self {
            Encoding::Full => (def.kind.clone(), def.api_version()),
            Encoding::Metadata => (
                "PartialObjectMetadata".to_owned(),
                META_API_VERSION.to_owned(),
            ),
        }
    }
}

/// `obj` as a `PartialObjectMetadata`: its metadata under the meta group's type.
fn partial(obj: &Value) -> J {
    let metadata = Value::Object(
        [(
            "metadata".to_owned(),
            obj.get("metadata").cloned().unwrap_or_default(),
        )]
        .into_iter()
        .collect(),
    );
    let J::O(shaped) = json::object(&metadata, false) else {
        unreachable!("objects are JSON objects")
    };
    let mut partial = Obj::new()
        .with("kind", "PartialObjectMetadata")
        .with("apiVersion", META_API_VERSION);
    partial.extend(shaped);
    J::O(partial)
}

/// 406 `NotAcceptable`.
fn not_acceptable(message: &str) -> Box<Response<Body>> {
    Box::new(respond(
        406,
        "application/json",
        json::status(406, "NotAcceptable", message, None),
    ))
}
