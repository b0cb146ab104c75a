//! From an owned object to the keys of its owners, as each runtime maps it.
//!
//! controller-runtime (`pkg/handler/enqueue_owner.go`, v0.22.5 and v0.23.3, what `Owns` builds:
//! `EnqueueRequestForOwner(…, OnlyControllerOwner())`): `getOwnersReferences` takes only the
//! reference `metav1.GetControllerOf` returns (`controller: true`); `getOwnerReconcileRequest`
//! keeps it when its kind and its apiVersion's group are the owner type's (any version), and
//! names it in the child's namespace unless the owner's kind is cluster-scoped. `Create`,
//! `Delete` and `Generic` map the object; `Update` maps the old and the new object, each request
//! once.
//!
//! kube-runtime (`src/controller/trigger.rs`, 5.0.0: `trigger_owners` over `touched_objects`, so
//! deletes too): every owner reference for which `ObjectRef::from_owner_ref` answers, that is
//! whose `apiVersion` (group and version) and kind equal the owner type's, named in the child's
//! namespace, `controller` or not.

use crate::cache::key::key_from_parts;
use crate::object::Object;

/// The owner type: the controller's main resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerKind {
    /// `apps/v1`, or `v1` for the core group.
    pub api_version: String,
    /// `Deployment`.
    pub kind: String,
    /// Whether its objects live in a namespace.
    pub namespaced: bool,
}

impl OwnerKind {
    /// The group of the owner's apiVersion (`""` for the core group).
    fn group(&self) -> &str {
        group_of(&self.api_version)
    }
}

fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// controller-runtime's `getOwnerReconcileRequest` with `OnlyControllerOwner`: the key of the
/// child's controller, if it is of the owner type.
pub fn controller_owner_keys(owner: &OwnerKind, child: &Object) -> Vec<String> {
    let meta = child.meta();
    let Some(r) = meta
        .owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true))
    else {
        return Vec::new();
    };
    if r.kind != owner.kind || group_of(&r.api_version) != owner.group() {
        return Vec::new();
    }
    let namespace = if owner.namespaced {
        meta.namespace.as_deref()
    } else {
        None
    };
    vec![key_from_parts(namespace, &r.name)]
}

/// kube-runtime's `trigger_owners` mapper: the keys of every owner reference of the owner type,
/// in the child's namespace, each once.
pub fn kube_owner_keys(owner: &OwnerKind, child: &Object) -> Vec<String> {
    let meta = child.meta();
    let mut keys: Vec<String> = Vec::new();
    for r in meta.owner_references.iter().flatten() {
        if r.api_version == owner.api_version && r.kind == owner.kind {
            let key = key_from_parts(meta.namespace.as_deref(), &r.name);
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    keys
}

#[cfg(test)]
#[path = "owner_tests.rs"]
mod tests;
