//! Store keys (client-go's `MetaNamespaceKeyFunc` and `SplitMetaNamespaceKey`, `store.go`) and what an object must
//! offer to be keyed.

use std::fmt::Write;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::object::Object;

/// What the cache needs of an object: the namespace and name its store key is made of.
///
/// client-go's stores take a key function; here the object type provides the parts, read
/// however is cheapest for it. [`Object`] reads them from its metadata text without decoding it,
/// and every k8s-openapi type implements this through its `ObjectMeta`. A program's own
/// resource types (such as those `kube::CustomResource` derives) implement it in two lines.
pub trait CacheObject {
    /// `metadata.namespace`.
    fn key_namespace(&self) -> Option<&str>;
    /// `metadata.name`.
    fn key_name(&self) -> Option<&str>;
}

impl<K: k8s_openapi::Metadata<Ty = ObjectMeta>> CacheObject for K {
    fn key_namespace(&self) -> Option<&str> {
        self.metadata().namespace.as_deref()
    }

    fn key_name(&self) -> Option<&str> {
        self.metadata().name.as_deref()
    }
}

impl CacheObject for Object {
    fn key_namespace(&self) -> Option<&str> {
        self.namespace()
    }

    fn key_name(&self) -> Option<&str> {
        self.name()
    }
}

/// The store key of an object: `namespace/name`, or `name` for a cluster-scoped object, as
/// client-go's `MetaNamespaceKeyFunc`.
pub fn object_key<K: CacheObject + ?Sized>(obj: &K) -> String {
    let mut key = String::new();
    write_object_key(obj, &mut key);
    key
}

/// Writes the store key of `obj` into `buf` (cleared first). Lets hot paths look a key up without
/// allocating a new string for every object.
pub fn write_object_key<K: CacheObject + ?Sized>(obj: &K, buf: &mut String) {
    buf.clear();
    if let Some(ns) = obj.key_namespace().filter(|ns| !ns.is_empty()) {
        buf.push_str(ns);
        buf.push('/');
    }
    if let Some(name) = obj.key_name() {
        buf.push_str(name);
    }
}

/// Splits a store key into namespace (if any) and name, as client-go's `SplitMetaNamespaceKey`.
pub fn split_key(key: &str) -> (Option<&str>, &str) {
    match key.split_once('/') {
        Some((ns, name)) => (Some(ns), name),
        None => (None, key),
    }
}

/// Builds `namespace/name` from parts; a helper for callers holding only names.
pub fn key_from_parts(namespace: Option<&str>, name: &str) -> String {
    let mut key = String::with_capacity(namespace.map_or(0, |n| n.len() + 1) + name.len());
    if let Some(ns) = namespace.filter(|ns| !ns.is_empty()) {
        let _ = write!(key, "{ns}/");
    }
    key.push_str(name);
    key
}
