//! A clock the tests move by hand, and handlers that record what they receive or block until a
//! test lets them go: the shared informer's unit tests coordinate threads with these instead of
//! sleeping.

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::cache::test_objects::rv;
use crate::cache::{Delivery, ListenerHandler, Notification};
use crate::object::Object;

/// Generous bound for waits on another thread: only reached when a test is already failing.
pub const DEADLINE: Duration = Duration::from_secs(60);

pub use crate::cache::testing::ManualClock;

/// A notification as a short line: `add ns/a@1 initial`, `update ns/a 1->2`,
/// `delete ns/b@1 tombstone`.
pub fn describe(notification: &Notification<Object>) -> String {
    let key = |obj: &Object| crate::cache::object_key(obj);
    match notification {
        Notification::Add {
            obj,
            is_in_initial_list,
        } => {
            let initial = if *is_in_initial_list { " initial" } else { "" };
            format!("add {}@{}{initial}", key(obj), rv(obj))
        }
        Notification::Update { old, new } => {
            format!("update {} {}->{}", key(new), rv(old), rv(new))
        }
        Notification::Delete { obj } => {
            let tombstone = if obj.is_tombstone() { " tombstone" } else { "" };
            let at = obj.object().map_or(0, |o| rv(o));
            format!("delete {}@{at}{tombstone}", obj.key())
        }
    }
}

/// Lines of what a handler received, in order; sync notifications end in ` (sync)`.
#[derive(Clone, Default)]
pub struct Recorder(Arc<Mutex<Vec<String>>>);

impl Recorder {
    fn record(&self, delivery: &Delivery<'_, Object>) {
        let sync = if delivery.is_sync { " (sync)" } else { "" };
        let line = format!("{}{sync}", describe(delivery.notification));
        self.0.lock().unwrap().push(line);
    }

    /// A handler that records and returns at once.
    pub fn handler(&self) -> impl ListenerHandler<Object> + use<> {
        let recorder = self.clone();
        move |delivery: &Delivery<'_, Object>| recorder.record(delivery)
    }

    /// A handler that, for each notification, says it entered, waits for the [`Gate`] to let it
    /// through, then records it.
    pub fn gated(&self) -> (impl ListenerHandler<Object> + use<>, Gate) {
        let (entered_tx, entered) = mpsc::channel();
        let (release, release_rx) = mpsc::channel::<()>();
        let release_rx = Mutex::new(release_rx);
        let recorder = self.clone();
        let handler = move |delivery: &Delivery<'_, Object>| {
            let _ = entered_tx.send(describe(delivery.notification));
            // Once the gate is dropped, `recv` fails at once: every call goes through.
            let _ = release_rx.lock().unwrap().recv();
            recorder.record(delivery);
        };
        (
            handler,
            Gate {
                entered,
                release: Some(release),
            },
        )
    }

    /// Everything recorded so far.
    pub fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    /// Empties the record.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

/// Holds a [`Recorder::gated`] handler inside its calls.
pub struct Gate {
    entered: Receiver<String>,
    release: Option<Sender<()>>,
}

impl Gate {
    /// Waits until the handler is inside a call (it has not returned from it); returns that
    /// call's notification.
    pub fn wait_entered(&self) -> String {
        self.entered
            .recv_timeout(DEADLINE)
            .expect("the handler was never called")
    }

    /// Lets the current (or next) call return.
    pub fn release_one(&self) {
        if let Some(release) = &self.release {
            release.send(()).expect("the handler is gone");
        }
    }

    /// Lets every call through from now on.
    pub fn open(&mut self) {
        self.release = None;
    }
}

/// A boxed upstream `HasSynced` that the test flips.
pub fn upstream(synced: &Arc<std::sync::atomic::AtomicBool>) -> crate::cache::UpstreamSynced {
    let synced = synced.clone();
    Arc::new(move || synced.load(std::sync::atomic::Ordering::SeqCst))
}
