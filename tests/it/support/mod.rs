//! What the integration tests share: running the binary ([`binary`]), the fake API server
//! ([`fake_apiserver`]) and ConfigMaps on it ([`configmaps`]), golden files ([`golden`]) and where recordings are ([`paths`]). `benches/sync.rs` and the recordings
//! generator (`tests/tools/generate_recordings.rs`) compile it too, through `#[path]`.

pub mod binary;
pub mod configmaps;
pub mod fake_apiserver;
pub mod golden;
pub mod paths;
