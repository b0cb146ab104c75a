//! `apiVersion` and `kind`, one copy shared by the objects that say the same.
//!
//! Every object of a list or a watch has the same two strings; held by each object they would be
//! two allocations per object, a large share of a metadata-only cache's memory. Objects hold an
//! `Arc<TypeMeta>` instead: the one this thread made last, when it says the same, so that the
//! objects of a list, decoded one after the other, share one.

use std::cell::RefCell;
use std::sync::Arc;

use kube::core::TypeMeta;

thread_local! {
    /// The type meta this thread shared last.
    static LAST: RefCell<Option<Arc<TypeMeta>>> = const { RefCell::new(None) };
}

/// The type meta `apiVersion: api_version, kind: kind`, shared with the last one this thread
/// made if it is the same.
pub(super) fn shared(api_version: &str, kind: &str) -> Arc<TypeMeta> {
    LAST.with_borrow_mut(|last| match last {
        Some(types) if types.api_version == api_version && types.kind == kind => types.clone(),
        _ => {
            let types = Arc::new(TypeMeta {
                api_version: api_version.to_owned(),
                kind: kind.to_owned(),
            });
            *last = Some(types.clone());
            types
        }
    })
}
