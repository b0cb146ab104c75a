//! What decides whether an object's change becomes a reconcile request, in both controller
//! runtimes: predicates ([`predicate`]) and the mapping of an owned object to its owner's key
//! ([`owner`]).
//!
//! | concept | controller-runtime (v0.22.5 / v0.23.3) | kube-runtime 5.0.0 |
//! |---|---|---|
//! | predicate | `pkg/predicate/predicate.go`: `GenerationChangedPredicate`, `ResourceVersionChangedPredicate`, `LabelChangedPredicate`, `AnnotationChangedPredicate`, joined by `Or` | `src/utils/predicate.rs`: `predicate_filter` with `predicates::{generation, resource_version, labels, annotations}`, joined by `Predicate::combine` |
//! | what a predicate sees | an event: only `Update` compares old and new; `Create`, `Delete`, `Generic` pass | an object: the hash of its field against the last hash seen for (namespace, name, uid), deletes included |
//! | owned object → owner | `pkg/handler/enqueue_owner.go`: `EnqueueRequestForOwner(…, OnlyControllerOwner())`, the one owner reference with `controller: true` whose group and kind are the owner's | `src/controller/trigger.rs`: `trigger_owners`, every owner reference whose `apiVersion` and kind are the owner's |
//!
//! Invariants: these are pure functions of the objects (and, for kube-runtime's filter, of its
//! cache and the caller's `now`); they import nothing but the cache's key functions and
//! [`Object`](crate::object::Object), so both runtimes' models use the same code.

pub mod owner;
pub mod predicate;

pub use owner::{OwnerKind, controller_owner_keys, kube_owner_keys};
pub use predicate::{PREDICATE_TTL, PredicateCache, PredicateError, PredicateKind, Predicates};
