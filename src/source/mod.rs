//! Where objects come from: the `ListerWatcher` implementations (kube API, recordings) and discovery.
pub mod cluster;
pub mod discovery;
