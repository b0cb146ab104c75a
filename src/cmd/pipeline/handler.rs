//! The event handlers a session registers (`--handler`, or the default one): each writes what it
//! receives to the session's output and takes its `delay` per call, the stand-in for a
//! controller's work.
//!
//! On a handler thread (a live watch, a replay at `--speed`) the delay is slept, as long as the
//! session's clock says it lasts in real time (`1/X` of it at `--speed X`), cut short by the
//! stop. Driven inline by an instant replay, nothing sleeps: the delay is the
//! call's [`cost`](ListenerHandler::cost) in recorded time, so a slow handler's buffer grows on
//! the recording's clock exactly as it would live, and every run writes the same bytes.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use kubectl_deltas::Object;
use kubectl_deltas::cache::reflector::Clock;
use kubectl_deltas::cache::{Delivery, ListenerHandler};

use super::output::HandlerOutput;

pub(super) struct ShownHandler {
    /// Where its calls are written.
    pub(super) out: HandlerOutput,
    pub(super) delay: Option<Duration>,
    /// Called from a thread of its own, where the delay is slept; inline otherwise.
    pub(super) threaded: bool,
    pub(super) clock: Arc<dyn Clock>,
    /// The client-go version imitated has per-handler `HasSynced` (1.27 onwards); before, a
    /// handler's sync is not shown: nobody could have asked for it.
    pub(super) registration_synced: bool,
}

impl ShownHandler {
    /// The wall time of `at`, an instant of the session's clock (an inline call may begin later
    /// than the clock's now: a slow handler still busy after the recording's last line).
    fn wall(&self, at: Instant) -> SystemTime {
        let (now, wall) = (self.clock.now(), self.clock.wall());
        match at.checked_duration_since(now) {
            Some(ahead) => wall + ahead,
            None => wall - now.duration_since(at),
        }
    }
}

impl ListenerHandler<Object> for ShownHandler {
    fn handle(&mut self, delivery: &Delivery<'_, Object>) {
        let time = self.wall(delivery.started_at);
        self.out.notification(delivery, time);
        if let Some(delay) = self.delay.filter(|_| self.threaded) {
            self.out.delaying(true);
            self.out.stop().sleep(self.clock.in_real_time(delay));
            self.out.delaying(false);
        }
    }

    fn cost(&self) -> Duration {
        self.delay.unwrap_or_default()
    }

    fn synced(&mut self, at: Instant) {
        if !self.registration_synced {
            return;
        }
        let time = self.wall(at);
        self.out.handler_synced(at, time);
    }
}
