//! Where objects come from: the `ListerWatcher` implementations (kube API, recordings) and discovery.
pub mod cache_file;
pub mod cluster;
pub mod connector;
pub mod decode_thread;
pub mod discovery;
pub mod kube_api;
pub mod list_body;
pub mod output_file;
pub mod proxy;
pub mod recording;
pub mod selector;

// The trait every source implements lives with the Reflector that calls it, as client-go keeps
// `listwatch.go` in `tools/cache`; re-exported here because every source names it.
pub use crate::cache::listwatch::{
    ApiStatus, ListPage, ListRequest, ListerWatcher, RandomChoice, ResourceTarget,
    ResourceVersionMatch, SourceError, WatchEvent, WatchRequest, WatchStream,
};
pub use kube_api::{INITIAL_EVENTS_END_ANNOTATION, KubeListerWatcher, client_without_retry};
