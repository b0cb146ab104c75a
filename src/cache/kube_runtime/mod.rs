//! What a controller written on kube-rs does with the same stream: kube-runtime 5.0.0's
//! `watcher`, reflector `Store`, `Scheduler` and `Controller`, as plain state machines that take
//! `now` from their caller (as [`workqueue`](super::workqueue) does for client-go), so an instant
//! replay and a live run use the same code and a replay gives the same result every time.
//!
//! | here | kube-runtime (`kube-runtime/src/`) |
//! |---|---|
//! | [`WatcherTranslator`]: the tool's Reflector's lists and events as [`WatcherEvent`]s, and where kube-runtime would have behaved differently | `watcher.rs`: `Event`, `step`, `State` |
//! | [`Store`] | `reflector/store.rs`: `Writer::apply_watcher_event`, `Store::wait_until_ready` |
//! | [`Scheduler`] | `scheduler.rs`: `Scheduler::schedule_message`, `poll_pop_queue_message`, `Hold` |
//! | [`KubeController`] | `controller/mod.rs`: `Controller::new`, `owns`, `applier`, `RescheduleReconciliation`; `controller/runner.rs`: `Runner`; `controller/trigger.rs`: `trigger_self`, `trigger_owners`; `utils/predicate.rs`: `predicate_filter` |
//!
//! Invariants:
//! - Data flows one way: Reflector steps → [`WatcherTranslator`] → watcher events →
//!   [`KubeController`] (its [`Store`] first, then its triggers, predicates and [`Scheduler`]) →
//!   reconciles ([`Record`]s). Nothing here reads a clock, sleeps or spawns.
//! - The store is what a reconcile reads; objects that vanish in a relist leave it without an
//!   event, and a deleted main object is never reconciled.
//! - At most one reconcile per object at a time; a request for it while it runs is held and
//!   runs once after it.
//! - Where kube-runtime's own behaviour is not a function of the stream (the jitter of its
//!   trigger backoff, the `HashSet` order in which it releases several held requests at once),
//!   the model picks one answer and says so: the backoff is noted, not waited for; held
//!   requests go in the order they became due.
//!
//! Predicates and owner mapping are shared with the client-go runtime: [`triggers`](super::triggers).

mod controller;
mod reason;
mod scheduler;
mod store;
mod watcher;

pub use controller::{
    ControllerConfig, DEFAULT_ERROR_REQUEUE, KubeController, KubeReconcile, Record, TriggerBackoff,
};
pub use reason::Reason;
pub use scheduler::{Scheduled, Scheduler};
pub use store::Store;
pub use watcher::{ReflectorStep, Translation, WatcherEvent, WatcherTranslator};

#[cfg(test)]
mod differential_tests;
