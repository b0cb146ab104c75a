//! What the integration tests share: running the binary ([`binary`]), the fake API server
//! ([`fake_apiserver`]), golden files ([`golden`]) and where recordings are ([`paths`]). `benches/sync.rs` and the recordings
//! generator (`tests/tools/generate_recordings.rs`) compile it too, through `#[path]`.

pub mod binary;
pub mod fake_apiserver;
pub mod golden;
pub mod paths;
