//! # kubectl-deltas
//!
//! client-go's informer machinery (`tools/cache`) in Rust, built to be watched: a Reflector feeds
//! a [`DeltaFifo`](cache::DeltaFifo), a consumer pops each `Deltas` batch and applies it to an
//! [`Indexer`](cache::Indexer) as client-go's `processDeltas` does, and every step can be observed.
//!
//! The [`cache`] module is usable on its own by any kube-rs program that wants client-go's exact
//! queue semantics (per-key coalescing, deletion dedup, `Replace` tombstones, `Resync`,
//! `HasSynced`) and indices, for [`Object`] (any kind), every k8s-openapi type, and a program's
//! own types through [`CacheObject`](cache::CacheObject) (kube's `DynamicObject` would need a
//! wrapper; [`Object`] is this crate's dynamic object):
//!
//! ```
//! use std::sync::Arc;
//! use kube::api::ApiResource;
//! use kubectl_deltas::Object;
//! use kubectl_deltas::cache::{
//!     ProcessLoop, DeltaFifo, DeltaType, IndexSpec, Indexer, ReflectorStore,
//! };
//!
//! let pods = ApiResource::erase::<k8s_openapi::api::core::v1::Pod>(&());
//! let pod = |name: &str| Arc::new(Object::new(name, &pods).within("default"));
//!
//! let mut indexer = Indexer::new();
//! let spec: IndexSpec = "namespace".parse().unwrap();
//! indexer.add_indexer(spec.name(), spec.index_func()).unwrap();
//! let cache = indexer.reader(); // read-only: the consumer below is the only writer
//! let fifo = Arc::new(DeltaFifo::new().known_objects(Arc::new(cache.clone())));
//!
//! // The reflector's initial list, then two watch events for the same key, through the
//! // producer contract every queue implements.
//! fifo.replace(vec![pod("web-1"), pod("web-2")], "100");
//! fifo.update(pod("web-1"));
//! fifo.delete(pod("web-2").into());
//!
//! let mut controller = ProcessLoop::new(fifo.clone(), indexer);
//! let first = controller.process_next().unwrap();
//! assert_eq!(first.key.as_deref(), Some("default/web-1"));
//! let types: Vec<DeltaType> = first.deltas.iter().map(|d| d.type_).collect();
//! assert_eq!(types, [DeltaType::Replaced, DeltaType::Updated]); // coalesced into one batch
//! assert!(first.is_in_initial_list);
//!
//! controller.process_next().unwrap(); // default/web-2: Replaced, Deleted
//! assert!(fifo.has_synced());
//! assert_eq!(cache.index_keys("namespace", "default").unwrap().len(), 1);
//! ```
//!
//! [`source`] holds what talks to the outside world: resource discovery and resolution.
//! [`query`] turns a synced Indexer into plain answers, which [`render`] writes out.
//!
//! The default `jemalloc` feature only sets the `kubectl-deltas` binary's global allocator; a
//! program using this library picks its own, and leaves jemalloc out with
//! `default-features = false`.

#![warn(missing_docs)]

pub mod cache;
pub mod object;
pub mod query;
pub mod render;
pub mod source;
mod timestamp;

pub use object::Object;

#[cfg(test)]
mod layers_tests;
