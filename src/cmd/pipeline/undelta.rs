//! `--store undelta`: the Reflector writes into an [`UndeltaStore`] instead of an informer's
//! queue, as the kubelet's pod source does (`Reflector` → `UndeltaStore` → the pod config's
//! merge). There is no queue, no consumer and no Indexer: each of the Reflector's store calls
//! pushes the store's whole content, and the push is numbered, compared with the previous one and
//! written in that call, under the output's lock.
//!
//! Writing in the store call means a slow reader of stdout slows the Reflector down, where a
//! queue would grow instead: as in the kubelet, whose push function hands each list to the pod
//! config's channel inside client-go's store call. Nothing is buffered, so nothing is lost.
//!
//! The flags about a queue, its consumer or an Indexer are refused while the plan is resolved
//! (`cmd/plan/refuse.rs`) rather than ignored: a user who asks for them must not believe they
//! see them.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Instant, SystemTime};

use futures_util::future::BoxFuture;

use kubectl_deltas::Object;
use kubectl_deltas::cache::{Clock, ReflectorStore};
use kubectl_deltas::cache::{
    DeltaObject, KnownObjects, Reflector, ReflectorConfig, ReflectorEvent, ReflectorObserver,
    UndeltaStore, object_key,
};
use kubectl_deltas::render::push::{Push, PushDiffer, StoreCall};
use kubectl_deltas::source::ListerWatcher;
use kubectl_deltas::source::recording::{Quiescence, ResyncHook};

use super::output::LaneOutput;

/// The Reflector of a lane writing into a [`PushingStore`]: its events and resyncs go
/// to the lane's output as an informer's do (a resync writes its row and pushes nothing), and the store is
/// what `--verify-every` compares with the server. Writes the resource's first line.
pub(super) fn reflector<L: ListerWatcher, C: Clock + Clone>(
    lister_watcher: L,
    config: ReflectorConfig,
    lane: LaneOutput,
    clock: C,
    resyncs: UndeltaResyncs,
) -> Reflector<L> {
    lane.undelta_started();
    let store = Arc::new(PushingStore::new(lane, Arc::new(clock.clone())));
    Reflector::new(lister_watcher, store.clone(), config)
        .observer(resyncs.clone())
        .clock(clock)
        .known_objects(store)
        .resync_with(move |at| resyncs.resync(at))
}

/// Where an UndeltaStore's Reflector events and resyncs go: the output (a resync is a row and
/// nothing else: client-go's `UndeltaStore.Resync` pushes nothing), then the source's observer.
/// A replay takes it as its target: nothing to drain at its turns (each push is written in the
/// store call that made it), its `RESYNC` lines resync here.
#[derive(Clone)]
pub(super) struct UndeltaResyncs {
    pub(super) lane: LaneOutput,
    pub(super) also: Option<Arc<dyn ReflectorObserver>>,
}

impl ReflectorObserver for UndeltaResyncs {
    fn observe(&self, event: ReflectorEvent) {
        self.lane.event(&event);
        if let Some(also) = &self.also {
            also.observe(event);
        }
    }
}

impl ResyncHook for UndeltaResyncs {
    fn resync(&self, at: SystemTime) {
        let event = self.lane.resync(None, at);
        if let Some(also) = &self.also {
            also.observe(event);
        }
    }
}

impl Quiescence for UndeltaResyncs {
    fn idle(&self, _next: Instant) -> BoxFuture<'_, ()> {
        Box::pin(std::future::ready(()))
    }
}

/// The call in progress, which the push it makes reports.
#[derive(Debug, Clone)]
struct Call {
    call: StoreCall,
    key: Option<String>,
    resource_version: Option<String>,
}

type PushFn = Box<dyn FnMut(&[Arc<Object>]) + Send>;

/// An [`UndeltaStore`] whose pushes go to the session's output, each with the store call that
/// made it. A Reflector is the only writer of its store, so the call noted before delegating is
/// the one whose push follows.
pub(super) struct PushingStore {
    store: UndeltaStore<Object, PushFn>,
    call: Arc<Mutex<Option<Call>>>,
}

impl fmt::Debug for PushingStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PushingStore")
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl PushingStore {
    /// The store of a lane, pushing to its output at the times `clock` tells.
    pub(super) fn new(lane: LaneOutput, clock: Arc<dyn Clock>) -> Self {
        let call: Arc<Mutex<Option<Call>>> = Arc::default();
        let current = call.clone();
        let mut differ = PushDiffer::default();
        let mut pushed = false;
        let push: PushFn = Box::new(move |objects: &[Arc<Object>]| {
            let Call {
                call,
                key,
                resource_version,
            } = lock(&current).take().unwrap_or(Call {
                call: StoreCall::Replace,
                key: None,
                resource_version: None,
            });
            let (added, removed, changed) = differ.diff(objects);
            let push = Push {
                seq: 0,
                objects: objects.to_vec(),
                added,
                removed,
                changed,
                call,
                key,
                resource_version,
                initial: !pushed,
            };
            pushed = true;
            lane.push(push, clock.wall());
        });
        PushingStore {
            store: UndeltaStore::new(push),
            call,
        }
    }

    fn noting(&self, call: StoreCall, obj: Option<&Object>) {
        *lock(&self.call) = Some(Call {
            call,
            key: obj.map(object_key),
            resource_version: obj.and_then(|o| o.resource_version()).map(str::to_owned),
        });
    }
}

/// client-go's `UndeltaStore.Add`, `Update`, `Delete` and `Replace` each push; its `Resync` is
/// its embedded store's, which does nothing.
impl ReflectorStore<Object> for PushingStore {
    fn add(&self, obj: Arc<Object>) {
        self.noting(StoreCall::Add, Some(&obj));
        self.store.add(obj);
    }

    fn update(&self, obj: Arc<Object>) {
        self.noting(StoreCall::Update, Some(&obj));
        self.store.update(obj);
    }

    fn delete(&self, obj: DeltaObject<Object>) -> bool {
        *lock(&self.call) = Some(Call {
            call: StoreCall::Delete,
            key: Some(obj.key()),
            resource_version: obj
                .object()
                .and_then(|o| o.resource_version())
                .map(str::to_owned),
        });
        ReflectorStore::delete(&self.store, obj)
    }

    fn replace(&self, list: Vec<Arc<Object>>, resource_version: &str) {
        *lock(&self.call) = Some(Call {
            call: StoreCall::Replace,
            key: None,
            resource_version: Some(resource_version.to_owned()).filter(|rv| !rv.is_empty()),
        });
        self.store.replace(list, resource_version);
    }

    fn resync(&self) -> usize {
        ReflectorStore::resync(&self.store)
    }

    fn has_synced(&self) -> bool {
        ReflectorStore::has_synced(&self.store)
    }

    fn is_drained(&self) -> bool {
        ReflectorStore::is_drained(&self.store)
    }
}

/// The store's content is what a consistency check (`--verify-every`) compares with the server.
impl KnownObjects<Object> for PushingStore {
    fn list_keys(&self) -> Vec<Arc<str>> {
        self.store.list_keys()
    }

    fn get_by_key(&self, key: &str) -> Option<Arc<Object>> {
        self.store.get_by_key(key)
    }
}
