//! [`TurnArbiter`]: several instant replays as one session, on one clock, taking turns in time
//! order.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use futures_util::future::BoxFuture;
use tokio::sync::watch;

use super::turns::Quiescence;

/// The turns of several recordings replayed as one session on one
/// [`ReplayClock`](super::ReplayClock), each replay paced by its
/// [`member`](TurnArbiter::member) ([`Pace::Instant`](super::Pace::Instant)).
///
/// A replay asks for a turn before it hands out a group of lines at a new instant. It gets it
/// once every other replay of the session is asking too (or is over) and none asks for an earlier
/// instant; between two asking for the same one, the first given (the lower index) goes first.
/// Before the turn is granted, every consumer of the session drains its queue
/// ([`Quiescence::consume`]), then each settles ([`Quiescence::settle`]: its controllers' workers
/// run up to that instant). So the groups of all the recordings reach their Reflectors in time
/// order, each finding everything before it handled, by every consumer and every controller,
/// as in a replay of one recording; a controller fed from another resource's consumer (an owned
/// object's change) gets that work in the same turn. No thread decides the order: every run
/// writes the same bytes.
pub struct TurnArbiter {
    /// The session's consumers, one per replay, in the replays' order.
    consumers: Vec<Arc<dyn Quiescence>>,
    members: Mutex<Vec<Member>>,
    /// Bumped whenever a member starts waiting or is over.
    changed: watch::Sender<u64>,
}

/// Where one replay stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Member {
    /// Handing out lines (or not started yet): the others wait until it asks for its next turn.
    Busy,
    /// Asking for a turn at this instant.
    Waiting(Instant),
    /// Over: it asks for no more turns.
    Over,
}

impl fmt::Debug for TurnArbiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TurnArbiter")
            .field("members", &*self.lock())
            .finish_non_exhaustive()
    }
}

impl TurnArbiter {
    /// The arbiter of a session whose replays feed `consumers`, in order: the `i`th replay is
    /// paced by [`member(i)`](TurnArbiter::member).
    pub fn new(consumers: Vec<Arc<dyn Quiescence>>) -> Arc<Self> {
        let members = vec![Member::Busy; consumers.len()];
        Arc::new(TurnArbiter {
            consumers,
            members: Mutex::new(members),
            changed: watch::Sender::new(0),
        })
    }

    /// What the replay `index` takes turns with: a [`Quiescence`] that waits for its turn.
    pub fn member(self: &Arc<Self>, index: usize) -> Arc<dyn Quiescence> {
        Arc::new(ArbiterMember {
            arbiter: self.clone(),
            index,
        })
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Member>> {
        self.members.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set(&self, index: usize, member: Member) {
        if let Some(slot) = self.lock().get_mut(index) {
            *slot = member;
        }
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Whether replay `index`, waiting at `next`, goes now: no other is busy or waits for an
    /// earlier instant (or the same one, given before it). If so, it is busy from now on.
    fn grant(&self, index: usize, next: Instant) -> bool {
        let mut members = self.lock();
        let first = members.iter().enumerate().all(|(other, member)| {
            other == index
                || match *member {
                    Member::Busy => false,
                    Member::Waiting(at) => (next, index) < (at, other),
                    Member::Over => true,
                }
        });
        if first && let Some(slot) = members.get_mut(index) {
            *slot = Member::Busy;
        }
        first
    }

    /// Replay `index`'s turn at `next`: once granted, every consumer drains, then every one
    /// settles, up to `next`.
    async fn turn(&self, index: usize, next: Instant) {
        // Alone, a replay always goes: a replay of one recording, a group per event, pays
        // nothing for the others.
        if self.consumers.len() > 1 {
            let mut changed = self.changed.subscribe();
            self.set(index, Member::Waiting(next));
            while !self.grant(index, next) {
                // The sender lives as long as `self`.
                let _ = changed.changed().await;
            }
        }
        for consumer in &self.consumers {
            consumer.consume(next).await;
        }
        for consumer in &self.consumers {
            consumer.settle(next);
        }
    }
}

/// One replay's side of a [`TurnArbiter`].
struct ArbiterMember {
    arbiter: Arc<TurnArbiter>,
    index: usize,
}

impl Quiescence for ArbiterMember {
    fn idle(&self, next: Instant) -> BoxFuture<'_, ()> {
        Box::pin(self.arbiter.turn(self.index, next))
    }

    fn coalesced(&self) -> Option<u64> {
        self.arbiter.consumers.get(self.index)?.coalesced()
    }

    fn finished(&self) {
        self.arbiter.set(self.index, Member::Over);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Records which consumer drained at which instant.
    struct Log(usize, Arc<Mutex<Vec<(usize, Duration)>>>, Instant);

    impl Quiescence for Log {
        fn idle(&self, next: Instant) -> BoxFuture<'_, ()> {
            self.1.lock().unwrap().push((self.0, next - self.2));
            Box::pin(std::future::ready(()))
        }
    }

    /// Two replays asking out of order get their turns in time order, the first given first
    /// on a tie, each turn draining every consumer.
    #[tokio::test]
    async fn turns_go_in_time_order_ties_to_the_first() {
        let origin = Instant::now();
        let log = Arc::new(Mutex::new(Vec::new()));
        let consumers: Vec<Arc<dyn Quiescence>> = (0..2)
            .map(|i| Arc::new(Log(i, log.clone(), origin)) as Arc<dyn Quiescence>)
            .collect();
        let arbiter = TurnArbiter::new(consumers);
        let order = Arc::new(Mutex::new(Vec::new()));
        let run = |index: usize, times: Vec<u64>| {
            let member = arbiter.member(index);
            let order = order.clone();
            async move {
                for t in times {
                    member.idle(origin + Duration::from_secs(t)).await;
                    order.lock().unwrap().push((index, t));
                    tokio::task::yield_now().await;
                }
                member.finished();
            }
        };
        tokio::join!(run(0, vec![3, 7]), run(1, vec![0, 5, 7]));
        assert_eq!(
            *order.lock().unwrap(),
            [(1, 0), (0, 3), (1, 5), (0, 7), (1, 7)]
        );
        assert_eq!(log.lock().unwrap().len(), 10, "every turn drains both");
    }
}
