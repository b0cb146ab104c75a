//! kube-runtime's `Scheduler` (`src/scheduler.rs`, 5.0.0), on the caller's clock.
//!
//! One slot per message (here an object's key, with the reason of the request that set it; kube
//! compares `ReconcileRequest`s by their `ObjectRef` only). `schedule_message`:
//! - a message already *pending* (due, but held because its object is being reconciled, the
//!   Controller is at its concurrency, or its store is not ready) is dropped;
//! - otherwise the slot is due at `run_at + debounce`; a new message takes a new slot; an
//!   existing slot due at or after the request's `run_at` is reset to `run_at + debounce` and
//!   takes the new request's reason (so, without debounce, the earlier of two requests wins;
//!   with it, a request before the slot's time pushes the slot back: the trailing-edge
//!   debounce, which can postpone a busy object indefinitely); a slot due before `run_at` is
//!   kept as it is.
//!
//! `poll_pop_queue_message`: a pending message that may be taken goes first; then expired slots,
//! each taken if it may be, else made pending. `hold` makes every expired slot pending. Here
//! [`Scheduler::hold_expired`] and [`Scheduler::pop`] do the same when the caller says what may
//! be taken and what time it is. Which of several takeable pending messages goes first is a
//! `HashSet`'s order in kube-runtime (unspecified); here it is the order they became pending.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::reason::Reason;

/// What became of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scheduled {
    /// A new slot, due at this time.
    New(Instant),
    /// The existing slot was reset to this time (from the time it had).
    Reset {
        /// The new due time.
        due: Instant,
        /// The time it had.
        was: Instant,
    },
    /// The existing slot, due earlier, was kept.
    Kept(Instant),
    /// The object was already due and held: the request is dropped.
    Dropped,
}

impl Scheduled {
    /// The slot was pushed later by the debounce.
    pub fn is_debounced(&self) -> bool {
        matches!(self, Scheduled::Reset { due, was } if due > was)
    }
}

#[derive(Debug, Clone)]
struct Slot {
    run_at: Instant,
    reason: Reason,
    seq: u64,
}

/// The scheduler's slots and pending set (see the module doc).
#[derive(Debug, Clone, Default)]
pub struct Scheduler {
    debounce: Duration,
    scheduled: HashMap<String, Slot>,
    /// Due but held, with the order they became pending.
    pending: HashMap<String, (Reason, u64)>,
    seq: u64,
}

impl Scheduler {
    /// `debounced_scheduler(…, debounce)`; zero is `scheduler`.
    pub fn new(debounce: Duration) -> Self {
        Scheduler {
            debounce,
            ..Scheduler::default()
        }
    }

    /// `schedule_message`.
    pub fn schedule(&mut self, key: &str, run_at: Instant, reason: Reason) -> Scheduled {
        if self.pending.contains_key(key) {
            return Scheduled::Dropped;
        }
        let next_time = run_at + self.debounce;
        self.seq += 1;
        match self.scheduled.get_mut(key) {
            Some(slot) if slot.run_at >= run_at => {
                let was = slot.run_at;
                slot.run_at = next_time;
                slot.reason = reason;
                slot.seq = self.seq;
                Scheduled::Reset {
                    due: next_time,
                    was,
                }
            }
            Some(slot) => Scheduled::Kept(slot.run_at),
            None => {
                self.scheduled.insert(
                    key.to_owned(),
                    Slot {
                        run_at: next_time,
                        reason,
                        seq: self.seq,
                    },
                );
                Scheduled::New(next_time)
            }
        }
    }

    /// `hold_unless(can_take)` without taking: every slot due by `now` that may not be taken
    /// becomes pending.
    pub fn hold_expired(&mut self, now: Instant, can_take: impl Fn(&str) -> bool) {
        let mut expired: Vec<(Instant, u64, String)> = self
            .scheduled
            .iter()
            .filter(|(k, s)| s.run_at <= now && !can_take(k))
            .map(|(k, s)| (s.run_at, s.seq, k.clone()))
            .collect();
        expired.sort();
        for (_, _, key) in expired {
            if let Some(slot) = self.scheduled.remove(&key) {
                self.seq += 1;
                self.pending.insert(key, (slot.reason, self.seq));
            }
        }
    }

    /// `hold`: every slot due by `now` becomes pending.
    pub fn hold_all(&mut self, now: Instant) {
        self.hold_expired(now, |_| false);
    }

    /// `poll_pop_queue_message(can_take)` at `now`: the first pending message that may be
    /// taken, else the earliest slot due by `now` that may be taken (the ones before it that may
    /// not become pending).
    pub fn pop(
        &mut self,
        now: Instant,
        can_take: impl Fn(&str) -> bool,
    ) -> Option<(String, Reason)> {
        let first_pending = self
            .pending
            .iter()
            .filter(|(k, _)| can_take(k))
            .min_by_key(|(_, (_, seq))| *seq)
            .map(|(k, _)| k.clone());
        if let Some(key) = first_pending {
            let (reason, _) = self.pending.remove(&key)?;
            return Some((key, reason));
        }
        self.hold_expired(now, &can_take);
        let key = self
            .scheduled
            .iter()
            .filter(|(_, s)| s.run_at <= now)
            .min_by_key(|(_, s)| (s.run_at, s.seq))
            .map(|(k, _)| k.clone())?;
        let slot = self.scheduled.remove(&key)?;
        Some((key, slot.reason))
    }

    /// The earliest slot still scheduled, due at or after `now` or not.
    pub fn next_due(&self) -> Option<Instant> {
        self.scheduled.values().map(|s| s.run_at).min()
    }

    /// When [`pop`](Scheduler::pop) could next hand out a message that may be taken: `now` for
    /// a pending one, else the earliest such slot's time (which may be past).
    pub fn next_takeable(&self, now: Instant, can_take: impl Fn(&str) -> bool) -> Option<Instant> {
        if self.pending.keys().any(|k| can_take(k)) {
            return Some(now);
        }
        self.scheduled
            .iter()
            .filter(|(k, _)| can_take(k))
            .map(|(_, s)| s.run_at.max(now))
            .min()
    }

    /// Whether a slot or a pending message has a reason `f` accepts.
    pub fn any_reason(&self, f: impl Fn(&Reason) -> bool) -> bool {
        self.scheduled.values().any(|s| f(&s.reason)) || self.pending.values().any(|(r, _)| f(r))
    }

    /// When the slot of `key` is due, if it has one.
    pub fn due(&self, key: &str) -> Option<Instant> {
        self.scheduled.get(key).map(|s| s.run_at)
    }

    /// Whether `key` is due and held.
    pub fn is_pending(&self, key: &str) -> bool {
        self.pending.contains_key(key)
    }

    /// Slots and pending messages.
    pub fn len(&self) -> usize {
        self.scheduled.len() + self.pending.len()
    }

    /// No slot, nothing pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
#[path = "scheduler_tests.rs"]
mod tests;
