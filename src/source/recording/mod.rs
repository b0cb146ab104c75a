//! Recordings: a watch session written as JSON lines (format v1, `docs/recording.md`), replayed
//! offline through the real Reflector, or captured from a live one.
//!
//! - [`RecordingReader`] parses a recording line by line (a file, `-` for stdin, gzip detected
//!   by its magic bytes), with errors that name the file, the line and what was expected.
//! - [`RecordingWriter`] writes one: a [`Header`], then one [`Line`] per server answer.
//! - [`RecordingListerWatcher`] is the [`ListerWatcher`](super::ListerWatcher) of a replay: it
//!   answers the Reflector's list and watch calls from the recorded lines, paces them
//!   ([`Pace`]), runs the Reflector on a [`ReplayClock`] where nothing really sleeps, hands
//!   `RESYNC` lines to a [`ResyncHook`] and reports the end of the file through [`ReplayEnd`].
//! - [`Recorder`] is the other direction: [`Recorder::tee`] wraps any `ListerWatcher` and writes
//!   every answer it gives the Reflector.
//!
//! A replay in [`Pace::Instant`] mode is deterministic: every line sharing one `t` is applied to
//! the FIFO while the consumer waits, then the consumer drains it while the replay waits, then the
//! next `t` follows ([`Quiescence`]; [`ReplayGate`] implements it for a consumer thread,
//! [`InlineDrain`] for a consumer that runs on the replay's thread, with no hand-over).
//!
//! ```no_run
//! # async fn replay() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use kubectl_deltas::Object;
//! use kubectl_deltas::cache::{Controller, DeltaFifo, Indexer, Reflector, ReflectorConfig};
//! use kubectl_deltas::source::recording::{
//!     FifoResync, Pace, RecordingListerWatcher, RecordingReader, ReplayGate,
//! };
//!
//! let indexer = Arc::new(Indexer::<Object>::new());
//! let fifo = Arc::new(DeltaFifo::new().known_objects(indexer.clone()));
//! let gate = Arc::new(ReplayGate::new());
//!
//! let reader = RecordingReader::open("session.jsonl".as_ref())?;
//! let lw = RecordingListerWatcher::new(reader, Pace::Instant(gate.clone()))?
//!     .on_resync(FifoResync::new(fifo.clone(), kubectl_deltas::cache::reflector::NoObserver));
//! let (clock, end) = (lw.clock(), lw.end());
//! let config = lw.reflector_config(ReflectorConfig::default());
//!
//! let consumer = std::thread::spawn({
//!     let mut controller = Controller::new(fifo.clone(), indexer.clone());
//!     move || {
//!         // Instead of `controller.process_next()`: pops only on the consumer's turns.
//!         while let Some(batch) = gate.next_batch(&mut controller) {
//!             println!("{:?} {}", batch.key, batch.deltas.len()); // render
//!         }
//!     }
//! });
//! let reflector = Reflector::new(lw, fifo.clone(), config).clock(clock);
//! let stop = end.clone();
//! reflector.run(async move { let _ = stop.wait().await; }).await?;
//! fifo.close(); // the consumer drains what is queued, then stops
//! consumer.join().unwrap();
//! end.wait().await?; // a malformed or unanswerable line is reported here
//! # Ok(()) }
//! ```

mod clock;
mod error;
mod format;
mod idle;
mod reader;
mod record;
mod replay;
mod writer;

pub use clock::ReplayClock;
pub use error::RecordingError;
pub use format::{FORMAT_VERSION, Header, Line, Record, RecordedResource, RequestKind};
pub use idle::{FifoResync, InlineDrain, Quiescence, ReplayGate, ResyncHook};
pub use reader::{MAX_LINE, RecordingReader};
pub use record::{RecordOptions, Recorder, RecordingTee, ResyncRecorder};
pub use replay::{Pace, RecordingListerWatcher, ReplayEnd, ReplaySummary};
pub use writer::RecordingWriter;
