//! Renderers: they receive popped batches (and reflector events) and write them out. They know
//! nothing of HTTP or of the cache's locks.

pub mod jsonl;
mod object;

pub use object::{ObjectMode, render_object};
