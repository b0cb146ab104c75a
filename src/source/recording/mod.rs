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
//! the queue while the consumer waits, then the consumer drains it while the replay waits, then
//! the next `t` follows ([`Quiescence`]: an [`Informer`](crate::cache::Informer) whose consumer
//! is [`Inline`](crate::cache::Consumption::Inline) drains on the replay's thread).
//!
//! ```no_run
//! # async fn replay() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use std::time::SystemTime;
//! use kubectl_deltas::Object;
//! use kubectl_deltas::cache::{
//!     Batch, Consumption, Informer, InformerConfig, InformerSink, InformerQueue, ReflectorConfig,
//!     ReflectorEvent,
//! };
//! use kubectl_deltas::source::recording::{Pace, RecordingListerWatcher, RecordingReader};
//! use tokio_util::sync::CancellationToken;
//!
//! struct Print;
//! impl InformerSink for Print {
//!     fn batch(&self, batch: Batch<Object>, _: SystemTime, _: &dyn InformerQueue<Object>) {
//!         println!("{:?} {}", batch.key, batch.deltas.len());
//!     }
//!     fn event(&self, event: ReflectorEvent, _: &dyn InformerQueue<Object>) {
//!         println!("{:?}", event.kind);
//!     }
//! }
//!
//! let config = InformerConfig { consumption: Consumption::Inline, ..Default::default() };
//! let informer = Informer::new(config, Arc::new(Print), Arc::default(), CancellationToken::new());
//! let reader = RecordingReader::open("session.jsonl".as_ref())?;
//! let lw = RecordingListerWatcher::new(reader, Pace::Instant(informer.clone()))?
//!     .on_resync(informer.clone());
//! let (clock, end) = (lw.clock(), lw.end());
//! let config = lw.reflector_config(ReflectorConfig::default());
//! let stop = end.clone();
//! informer.run(lw, config, clock, async move { let _ = stop.wait().await; }).await?;
//! informer.finish().await; // the last group's batches
//! end.wait().await?; // a malformed or unanswerable line is reported here
//! # Ok(()) }
//! ```

mod arbiter;
mod clock;
mod error;
mod format;
mod reader;
mod record;
mod replay;
mod resync_period;
mod turns;
mod writer;

pub use arbiter::TurnArbiter;
pub use clock::ReplayClock;
pub use error::RecordingError;
pub use format::{FORMAT_VERSION, Header, Line, LiveNotes, Record, RecordedResource, RequestKind};
pub use reader::{MAX_LINE, RecordingReader};
pub use record::{RecordOptions, Recorder, RecordingTee, ResyncRecorder};
pub use replay::{Pace, PopsDiffer, RecordingListerWatcher, ReplayEnd, ReplaySummary};
pub use resync_period::recorded_resync_period;
pub use turns::{
    InformerSlot, InlineDrain, Quiescence, ReplayTarget, ReplayTargets, ResyncHook, TurnOver,
};
pub use writer::RecordingWriter;
