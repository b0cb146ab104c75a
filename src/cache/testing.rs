//! Fakes for testing code built on the cache, as client-go's `tools/cache/testing` offers its
//! `FakeControllerSource`: a [`ManualClock`] whose time moves only when told or slept on, and a
//! [`ScriptedListerWatcher`] that answers a Reflector's requests from a script and records them.
//! Behind the `testing` feature (on for this crate's own tests).
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use kubectl_deltas::cache::testing::{
//!     ManualClock, Reply, ScriptedListerWatcher, WhenDone, configmap,
//! };
//! use kubectl_deltas::cache::{DeltaFifo, DeltaType, Reflector, ReflectorConfig};
//! use kubectl_deltas::source::WatchEvent;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().unwrap().block_on(async {
//! let lw = ScriptedListerWatcher::configmaps([
//!     Reply::list([configmap("a", "1")], "1"),
//!     Reply::watch([WatchEvent::Modified(Arc::new(configmap("a", "2")))]),
//! ])
//! .when_done(WhenDone::StayOpen); // the re-watch after that watch closed stays open, silent
//! let fifo = Arc::new(DeltaFifo::new());
//! let reflector = Reflector::new(lw.clone(), fifo.clone(), ReflectorConfig::default())
//!     .clock(ManualClock::new());
//! // Paused tokio time: this stops the Reflector once nothing else can happen.
//! reflector.run(tokio::time::sleep(Duration::from_secs(3600))).await.unwrap();
//!
//! let types: Vec<DeltaType> = fifo.get_by_key("default/a").unwrap().iter().map(|d| d.type_).collect();
//! assert_eq!(types, [DeltaType::Replaced, DeltaType::Updated]);
//! assert_eq!((lw.lists().len(), lw.watches().len()), (1, 2));
//! # });
//! ```

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use futures_util::StreamExt as _;
use futures_util::future::BoxFuture;
use kube::core::ApiResource;

use crate::cache::clock::Clock;
use crate::cache::listwatch::{
    ListPage, ListRequest, ListerWatcher, ResourceTarget, SourceError, WatchEvent, WatchRequest,
    WatchStream,
};
use crate::object::Object;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Time that moves only when a test sets it or someone sleeps on it: a sleep completes at once,
/// having moved the clock by its duration (and is recorded). Wall time starts at the Unix epoch.
/// Shared as `Arc<ManualClock>`, which is a `Clock + Clone` as an informer wants.
#[derive(Debug)]
pub struct ManualClock {
    start: Instant,
    elapsed: Mutex<Duration>,
    sleeps: Mutex<Vec<Duration>>,
}

impl ManualClock {
    /// A clock at its start.
    pub fn new() -> Arc<Self> {
        Arc::new(ManualClock {
            start: Instant::now(),
            elapsed: Mutex::new(Duration::ZERO),
            sleeps: Mutex::new(Vec::new()),
        })
    }

    /// Moves to `t` after the start; never backwards.
    pub fn set(&self, t: Duration) {
        let mut elapsed = lock(&self.elapsed);
        *elapsed = (*elapsed).max(t);
    }

    /// Moves forward by `by`.
    pub fn advance(&self, by: Duration) {
        *lock(&self.elapsed) += by;
    }

    /// The instant `t` after the start.
    pub fn at(&self, t: Duration) -> Instant {
        self.start + t
    }

    /// How long since the start.
    pub fn elapsed(&self) -> Duration {
        *lock(&self.elapsed)
    }

    /// Every sleep asked of this clock, in order.
    pub fn sleeps(&self) -> Vec<Duration> {
        lock(&self.sleeps).clone()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.start + self.elapsed()
    }

    fn wall(&self) -> SystemTime {
        SystemTime::UNIX_EPOCH + self.elapsed()
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        self.advance(duration);
        lock(&self.sleeps).push(duration);
        Box::pin(std::future::ready(()))
    }
}

/// One answer of a [`ScriptedListerWatcher`], in the order the requests come.
pub enum Reply {
    /// The answer to a list.
    List(Result<ListPage, SourceError>),
    /// A watch that delivers these events (or fails to open) and ends.
    Watch(Result<Vec<Result<WatchEvent, SourceError>>, SourceError>),
    /// A watch that delivers these events after staying open this long in tokio's time (`None`:
    /// it stays open for good, silent).
    WatchAfter(Option<Duration>, Vec<WatchEvent>),
    /// A watch fed by the test through a channel, open until the sender is dropped.
    WatchFed(tokio::sync::mpsc::UnboundedReceiver<WatchEvent>),
}

impl Reply {
    /// A one-page list of `items` at `resource_version`.
    pub fn list(items: impl IntoIterator<Item = Object>, resource_version: &str) -> Self {
        Reply::List(Ok(ListPage {
            items: items.into_iter().collect(),
            resource_version: resource_version.into(),
            continue_token: None,
            remaining_item_count: None,
        }))
    }

    /// A watch that delivers `events` and ends.
    pub fn watch(events: impl IntoIterator<Item = WatchEvent>) -> Self {
        Reply::Watch(Ok(events.into_iter().map(Ok).collect()))
    }

    /// A watch that stays open for good and delivers nothing.
    pub fn silent_watch() -> Self {
        Reply::WatchAfter(None, Vec::new())
    }
}

impl fmt::Debug for Reply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Reply::List(_) => "List",
            Reply::Watch(_) => "Watch",
            Reply::WatchAfter(..) => "WatchAfter",
            Reply::WatchFed(_) => "WatchFed",
        })
    }
}

/// What a [`ScriptedListerWatcher`] does once its script is used up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhenDone {
    /// Panic, naming the request nobody expected: a test that asserts every request.
    Panic,
    /// Answer every further watch with a silent one that stays open, and fail every further list
    /// with a 503: a test that only cares about the first answers.
    StayOpen,
}

/// What a fed watch awaits before handing out each event.
type Pace = Arc<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync>;

/// A `ListerWatcher` that answers requests from a script, in order, and records them (client-go's
/// `FakeControllerSource` plays the same part). Cloning shares the script and the records.
#[derive(Clone)]
pub struct ScriptedListerWatcher {
    target: ResourceTarget,
    pace: Option<Pace>,
    replies: Arc<Mutex<VecDeque<Reply>>>,
    when_done: WhenDone,
    lists: Arc<Mutex<Vec<ListRequest>>>,
    watches: Arc<Mutex<Vec<WatchRequest>>>,
}

impl fmt::Debug for ScriptedListerWatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScriptedListerWatcher")
            .field("replies", &lock(&self.replies))
            .field("when_done", &self.when_done)
            .finish_non_exhaustive()
    }
}

impl ScriptedListerWatcher {
    /// Answers for `resource` in `namespace` (`None`: every namespace), panicking on a request
    /// past the end of `replies`.
    pub fn new(
        resource: ApiResource,
        namespace: Option<&str>,
        replies: impl IntoIterator<Item = Reply>,
    ) -> Self {
        ScriptedListerWatcher {
            target: ResourceTarget::new(resource, namespace.map(str::to_owned)),
            pace: None,
            replies: Arc::new(Mutex::new(replies.into_iter().collect())),
            when_done: WhenDone::Panic,
            lists: Arc::default(),
            watches: Arc::default(),
        }
    }

    /// ConfigMaps in `default`.
    pub fn configmaps(replies: impl IntoIterator<Item = Reply>) -> Self {
        Self::new(configmaps(), Some("default"), replies)
    }

    /// What to do once the script is used up.
    pub fn when_done(mut self, when_done: WhenDone) -> Self {
        self.when_done = when_done;
        self
    }

    /// Awaits `pace()` before each event of a [`Reply::WatchFed`] watch is handed out (the
    /// Reflector asks for an event only after queueing the previous one), as an instant replay
    /// waits until everything before is processed.
    pub fn pace(
        mut self,
        pace: impl Fn() -> BoxFuture<'static, ()> + Send + Sync + 'static,
    ) -> Self {
        self.pace = Some(Arc::new(pace));
        self
    }

    /// Adds answers at the end of the script.
    pub fn push(&self, reply: Reply) {
        lock(&self.replies).push_back(reply);
    }

    /// Whether every answer of the script has been given.
    pub fn is_used_up(&self) -> bool {
        lock(&self.replies).is_empty()
    }

    /// Every list asked so far.
    pub fn lists(&self) -> Vec<ListRequest> {
        lock(&self.lists).clone()
    }

    /// Every watch asked so far.
    pub fn watches(&self) -> Vec<WatchRequest> {
        lock(&self.watches).clone()
    }

    fn next(&self, request: &dyn fmt::Debug) -> Option<Reply> {
        let reply = lock(&self.replies).pop_front();
        if reply.is_none() && self.when_done == WhenDone::Panic {
            panic!("the script has no answer left for {request:?}");
        }
        reply
    }
}

impl ListerWatcher for ScriptedListerWatcher {
    async fn list(&self, req: &ListRequest) -> Result<ListPage, SourceError> {
        lock(&self.lists).push(req.clone());
        match self.next(req) {
            Some(Reply::List(result)) => result,
            None => Err(SourceError::Api(crate::cache::listwatch::ApiStatus {
                code: 503,
                reason: "ServiceUnavailable".into(),
                message: "the script is used up".into(),
                causes: Vec::new(),
            })),
            Some(other) => panic!("the script answers {other:?} to the list {req:?}"),
        }
    }

    async fn watch(&self, req: &WatchRequest) -> Result<WatchStream, SourceError> {
        lock(&self.watches).push(req.clone());
        match self.next(req) {
            Some(Reply::Watch(result)) => {
                result.map(|events| futures_util::stream::iter(events).boxed())
            }
            Some(Reply::WatchAfter(open, events)) => Ok(futures_util::stream::once(async move {
                match open {
                    Some(open) => tokio::time::sleep(open).await,
                    None => std::future::pending().await,
                }
                futures_util::stream::iter(events.into_iter().map(Ok))
            })
            .flatten()
            .boxed()),
            Some(Reply::WatchFed(rx)) => {
                let pace = self.pace.clone();
                Ok(stream_of(rx)
                    .then(move |event| {
                        let paced = pace.as_ref().map(|pace| pace());
                        async move {
                            if let Some(paced) = paced {
                                paced.await;
                            }
                            Ok(event)
                        }
                    })
                    .boxed())
            }
            None => Ok(futures_util::stream::pending().boxed()),
            Some(other) => panic!("the script answers {other:?} to the watch {req:?}"),
        }
    }

    fn describe(&self) -> ResourceTarget {
        self.target.clone()
    }
}

/// The receiver as a stream, without depending on tokio-stream.
fn stream_of(
    rx: tokio::sync::mpsc::UnboundedReceiver<WatchEvent>,
) -> impl futures_util::Stream<Item = WatchEvent> {
    futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|e| (e, rx)) })
}

/// The ConfigMap resource.
pub fn configmaps() -> ApiResource {
    ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&())
}

/// A ConfigMap `name` in `default` at `resource_version`.
pub fn configmap(name: &str, resource_version: &str) -> Object {
    let mut obj = Object::new(name, &configmaps()).within("default");
    obj.meta_mut().resource_version = Some(resource_version.into());
    obj
}
