//! What a source can ask of the pipeline beyond list and watch calls ([`Hooks`]): to end the
//! session when it runs dry, to see its informer's events, and to hold its informer (to drain it
//! on its own thread and to resync it). `watch` uses none of them; `replay` and `record` do.

use std::error::Error;
use std::fmt;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use kubectl_deltas::cache::ReflectorObserver;
use kubectl_deltas::source::recording::InformerSlot;

/// Completes when a source has nothing more to give, with why.
pub type SourceEnd = BoxFuture<'static, Result<(), Box<dyn Error + Send + Sync>>>;

/// How a source takes part in a session besides answering list and watch calls. All optional.
#[derive(Default)]
pub struct Hooks {
    /// Completes when the source has nothing more (the end of a recording): its Reflector is
    /// stopped, its queue closed and drained, and once every source has ended so the session
    /// ends with [`Ended::EndOfInput`](super::Ended::EndOfInput). An `Err` ends it with
    /// [`PipelineError::Source`](super::PipelineError::Source), after what came before is
    /// written.
    pub end: Option<SourceEnd>,
    /// Also told every event of this source's informer, the resyncs included (which is how
    /// `record` writes its `RESYNC` lines).
    pub observer: Option<Arc<dyn ReflectorObserver>>,
    /// Filled with the source's informer when the session starts: the source resyncs it there
    /// (a replay's `RESYNC` lines), and, with `inline`, drains it.
    pub informer: Option<Arc<InformerSlot>>,
    /// The informer's consumer pops only when the source drains it through `informer` (an
    /// instant replay's turns), never on a thread of its own.
    pub inline: bool,
    /// Filled with the source's informer when the session starts, only to read its queue's
    /// counters (`record`'s lines carry how far it coalesced); unlike `informer`, it changes
    /// nothing of how the informer runs.
    pub counted: Option<Arc<InformerSlot>>,
}

impl fmt::Debug for Hooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hooks")
            .field("end", &self.end.is_some())
            .field("observer", &self.observer.is_some())
            .field("informer", &self.informer.is_some())
            .field("inline", &self.inline)
            .field("counted", &self.counted.is_some())
            .finish()
    }
}
