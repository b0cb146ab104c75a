//! kubectl-deltas: the informer machinery of client-go's `tools/cache`, in Rust, made visible.
pub mod source;
