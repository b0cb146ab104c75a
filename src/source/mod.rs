//! Where objects come from: the `ListerWatcher` implementations (kube API, recordings) and discovery.
pub mod cluster;
pub mod discovery;
pub mod kube_api;
pub mod lister_watcher;
pub mod proxy;
pub mod recording;
pub mod selector;

pub use kube_api::{INITIAL_EVENTS_END_ANNOTATION, KubeListerWatcher, client_without_retry};
pub use lister_watcher::{
    ApiStatus, ListPage, ListRequest, ListerWatcher, ResourceTarget, ResourceVersionMatch,
    SourceError, WatchEvent, WatchRequest, WatchStream,
};
