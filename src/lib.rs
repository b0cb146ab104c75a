//! kubectl-deltas: client-go's informer machinery (`tools/cache`) in Rust, made visible.
pub mod cache;
pub mod source;
