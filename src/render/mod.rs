//! Renderers: they receive popped batches (and reflector events) and write them out. They know
//! nothing of HTTP or of the cache's locks.

pub mod index;
mod index_table;
pub mod jsonl;
mod object;

pub use index_table::{NONE_LABEL, age};
pub use object::{ObjectMode, render_object};
