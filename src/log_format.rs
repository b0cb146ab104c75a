//! How log events read on stderr without `-v`: as the tool's other notes do
//! (`kubectl-deltas: warning: …`), not as a log line with a timestamp and a level. With `-v`, the
//! usual log format, whose times and levels are what a log reader wants.

use std::fmt;

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// `kubectl-deltas: warning: MESSAGE field=value`.
pub struct Notes;

impl<S, N> FormatEvent<S, N> for Notes
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let kind = match *event.metadata().level() {
            Level::ERROR => "error",
            Level::WARN => "warning",
            _ => "note",
        };
        write!(writer, "kubectl-deltas: {kind}: ")?;
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}
