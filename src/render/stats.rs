//! What an informer did, counted for the status footer and the summary table. Pure: it is fed
//! batches, queue counters and reflector events, and never reads a clock or draws anything.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::delta_resource_version;
use super::push::Push;
use crate::cache::{Batch, DeltaType, Notification, QueueStats, ReflectorEventKind};
use crate::object::Object;

/// Counters of one informer (one resource).
#[derive(Debug, Clone, Default)]
pub struct InformerStats {
    /// Deltas popped, by [`DeltaType::index`] (a whole-list delta counts once).
    pub deltas: [u64; DeltaType::ALL.len()],
    /// `DeletedFinalStateUnknown` deltas among them.
    pub tombstones: u64,
    /// Batches popped.
    pub batches: u64,
    /// Batches shown, when `--match`, `--types`, `--tombstones` or replay's selectors and window
    /// narrow the output; `None` otherwise.
    pub shown: Option<u64>,
    /// The most deltas one batch carried.
    pub max_batch_len: usize,
    /// How long keys waited in the queue.
    pub waits: WaitHistogram,
    /// Entries queued now, as last reported by the queue: keys for a DeltaFIFO, deltas for a
    /// RealFIFO.
    pub queue_len: usize,
    /// The most entries ever queued at once.
    pub max_queue_len: usize,
    /// Deltas appended to keys that were already queued (a DeltaFIFO's; a RealFIFO merges none).
    pub coalesced: u64,
    /// Queued objects removed before a pop delivered them (a plain FIFO's; the informer queues
    /// queue deletions and drop nothing).
    pub dropped: u64,
    /// Times the Reflector decided to list again (each `relist` event), as client-go logs them.
    pub relists: u64,
    /// Lists retried at once within a list (each `list-retry` event): not relists of their own.
    pub list_retries: u64,
    /// Watches opened.
    pub watches: u64,
    /// Watches opened after each informer's first one: counted apart from `watches`, so that
    /// [`InformerStats::merged`] can sum them (a sum of `watches` minus one would count every
    /// informer's first watch but one as a restart).
    pub restarts: u64,
    /// Bookmarks received.
    pub bookmarks: u64,
    /// When the cache first held the whole initial list.
    pub synced: Option<Synced>,
    /// The newest resourceVersion seen (list, bookmark, popped object or whole-list delta).
    pub resource_version: Option<String>,
    /// When the open watch started; `None` while no watch is open.
    pub watch_since: Option<SystemTime>,
    /// The list in progress, if one is.
    pub listing: Option<ListProgress>,
    /// Lists completed.
    pub lists: u64,
    /// The informer's event handlers, in registration order (none unless handlers are shown).
    pub handlers: Vec<HandlerStats>,
    /// What the cache holds, when last measured (at the summary).
    pub cache: Option<CacheSize>,
    /// The informer runs an UndeltaStore (`--store undelta`): no queue, no batches, pushes.
    pub undelta: bool,
    /// What its pushes carried.
    pub pushes: PushStats,
    /// Where the Reflector stood after its latest event: what a session ending now leaves
    /// undone.
    pub reflector: super::ending::ReflectorState,
}

/// Counters of one event handler of a shared informer (one listener).
#[derive(Debug, Clone, Default)]
pub struct HandlerStats {
    /// Its name (shared: every row of the handler names it).
    pub name: Arc<str>,
    /// `OnAdd`, `OnUpdate` and `OnDelete` calls.
    pub adds: u64,
    /// See `adds`.
    pub updates: u64,
    /// See `adds`.
    pub deletes: u64,
    /// Sync notifications among the updates (a resync, an unchanged object after a relist).
    pub syncs: u64,
    /// Sync notifications it did not get: its resync was not due at the last check.
    pub syncs_skipped: u64,
    /// Notifications buffered now, not yet handed to the handler.
    pub depth: usize,
    /// The largest buffer depth a call began with: the notifications still waiting once the call
    /// took its own, as each row's `buffer N` (`bufferDepth`) counts them, so that the summary's
    /// maximum is one a row showed.
    pub max_depth: usize,
    /// Notifications dropped unhandled when the informer stopped.
    pub abandoned: u64,
    /// How long notifications waited in its buffer.
    pub lag: WaitHistogram,
    /// Since the informer started, when its registration first synced.
    pub synced: Option<Duration>,
    /// The client-go version imitated has no per-handler `HasSynced` (before 1.27): `synced`
    /// stays `None` and means nothing.
    pub synced_unknown: bool,
}

impl HandlerStats {
    /// A handler named `name`, with nothing counted.
    pub fn new(name: &str) -> Self {
        HandlerStats {
            name: Arc::from(name),
            ..HandlerStats::default()
        }
    }

    /// Counts one handler call, which began with `depth` notifications still buffered behind it.
    pub fn record_call(
        &mut self,
        notification: &Notification<Object>,
        is_sync: bool,
        waited: Duration,
        depth: usize,
    ) {
        self.max_depth = self.max_depth.max(depth);
        match notification {
            Notification::Add { .. } => self.adds += 1,
            Notification::Update { .. } => self.updates += 1,
            Notification::Delete { .. } => self.deletes += 1,
        }
        self.syncs += u64::from(is_sync);
        self.lag.record(waited);
    }

    /// Takes the listener's own counters: its buffer now and what it abandoned.
    pub fn record_listener(&mut self, depth: usize, abandoned: u64) {
        self.depth = depth;
        self.abandoned = abandoned;
    }
}

/// The pushes of an UndeltaStore, counted: what "what does the kubelet see, and how often" asks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PushStats {
    /// Pushes.
    pub count: u64,
    /// Objects handed over, summed over every push: the work the push function does.
    pub objects: u64,
    /// The size of the last push: what the store holds now.
    pub last_size: usize,
    /// The largest push.
    pub max_size: usize,
    /// Pushes identical to the previous one (same keys and resourceVersions).
    pub unchanged: u64,
    /// Keys added, removed and changed, summed over every push.
    pub added: u64,
    /// See `added`.
    pub removed: u64,
    /// See `added`.
    pub changed: u64,
}

impl PushStats {
    /// Objects per push on average (0 without pushes).
    pub fn mean_size(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.objects as f64 / self.count as f64
        }
    }

    fn merge(&mut self, other: &PushStats) {
        self.count += other.count;
        self.objects += other.objects;
        self.last_size += other.last_size;
        self.max_size = self.max_size.max(other.max_size);
        self.unchanged += other.unchanged;
        self.added += other.added;
        self.removed += other.removed;
        self.changed += other.changed;
    }
}

/// The moment an informer synced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Synced {
    /// Batches popped by then.
    pub batches: u64,
    /// Since the informer started.
    pub after: Duration,
}

/// How far a paged list has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ListProgress {
    /// Pages received.
    pub pages: u32,
    /// Objects received.
    pub items: usize,
    /// The server's estimate of the objects still to come.
    pub remaining: Option<u64>,
}

/// How much an informer's cache holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheSize {
    /// Objects in the Indexer.
    pub objects: usize,
    /// Their [`Object::footprint`]s, summed.
    pub bytes: u64,
}

impl CacheSize {
    /// Of `objects`.
    pub fn of<'a>(objects: impl IntoIterator<Item = &'a Object>) -> Self {
        objects
            .into_iter()
            .fold(CacheSize::default(), |size, obj| CacheSize {
                objects: size.objects + 1,
                bytes: size.bytes + obj.footprint() as u64,
            })
    }
}

impl InformerStats {
    /// Counts one popped batch.
    pub fn record_batch(&mut self, batch: &Batch<Object>) {
        self.batches += 1;
        self.max_batch_len = self.max_batch_len.max(batch.deltas.len());
        for delta in &batch.deltas {
            self.deltas[delta.type_.index()] += 1;
            self.tombstones += u64::from(delta.object.is_tombstone());
        }
        self.waits.record(batch.waited());
        self.queue_len = batch.queue_len;
        if let Some(rv) = batch.deltas.newest().and_then(delta_resource_version) {
            self.set_resource_version(rv);
        }
    }

    /// Counts one push of an UndeltaStore.
    pub fn record_push(&mut self, push: &Push) {
        let p = &mut self.pushes;
        let size = push.objects.len();
        p.count += 1;
        p.objects += size as u64;
        p.last_size = size;
        p.max_size = p.max_size.max(size);
        p.unchanged += u64::from(push.is_unchanged());
        p.added += push.added.len() as u64;
        p.removed += push.removed.len() as u64;
        p.changed += push.changed.len() as u64;
        if let Some(rv) = &push.resource_version {
            self.set_resource_version(rv);
        }
    }

    /// Takes the queue's own counters, which see what batches cannot: its peak length, the
    /// deltas that coalesced and the objects dropped unseen.
    pub fn record_queue(&mut self, fifo: &QueueStats) {
        self.queue_len = fifo.len;
        self.max_queue_len = self.max_queue_len.max(fifo.peak_len);
        self.coalesced = fifo.coalesced;
        self.dropped = fifo.dropped;
    }

    /// Counts one reflector event that happened at `at`.
    pub fn record_event(&mut self, event: &ReflectorEventKind, at: SystemTime) {
        self.reflector.record(event, at);
        match event {
            ReflectorEventKind::ListStarted { .. } => {
                self.listing = Some(ListProgress::default());
            }
            ReflectorEventKind::Relist { cause } if super::is_list_retry(cause) => {
                self.list_retries += 1;
            }
            ReflectorEventKind::Relist { .. } => self.relists += 1,
            ReflectorEventKind::ListPage {
                page,
                items_so_far,
                remaining,
            } => {
                self.listing = Some(ListProgress {
                    pages: *page,
                    items: *items_so_far,
                    remaining: remaining.and_then(|r| u64::try_from(r).ok()),
                });
            }
            ReflectorEventKind::ListDone {
                resource_version, ..
            } => {
                self.listing = None;
                self.lists += 1;
                self.set_resource_version(resource_version);
            }
            ReflectorEventKind::WatchStarted { .. } => {
                if self.watches > 0 {
                    self.restarts += 1;
                }
                self.watches += 1;
                self.watch_since = Some(at);
            }
            ReflectorEventKind::WatchEnded { .. } => self.watch_since = None,
            ReflectorEventKind::Bookmark {
                resource_version, ..
            } => {
                self.bookmarks += 1;
                self.set_resource_version(resource_version);
            }
            _ => {}
        }
    }

    /// Notes that the cache synced.
    pub fn record_synced(&mut self, synced: Synced) {
        self.synced.get_or_insert(synced);
    }

    fn set_resource_version(&mut self, rv: &str) {
        if !rv.is_empty() {
            match &mut self.resource_version {
                Some(current) => rv.clone_into(current),
                None => self.resource_version = Some(rv.to_owned()),
            }
        }
    }

    /// Watches opened after the first one.
    pub fn watch_restarts(&self) -> u64 {
        self.restarts
    }

    /// Deltas popped, all types.
    pub fn total_deltas(&self) -> u64 {
        self.deltas.iter().sum()
    }

    /// Deltas per batch on average (0 without batches).
    pub fn mean_batch_len(&self) -> f64 {
        if self.batches == 0 {
            0.0
        } else {
            self.total_deltas() as f64 / self.batches as f64
        }
    }

    /// Deltas of one type.
    pub fn count(&self, type_: DeltaType) -> u64 {
        self.deltas[type_.index()]
    }

    /// The counters of several informers together: sums, maxima, and the latest sync (the moment
    /// all of them had synced, if they all have).
    pub fn merged<'a>(all: impl IntoIterator<Item = &'a InformerStats>) -> InformerStats {
        let mut out = InformerStats::default();
        let mut all_synced = true;
        let mut latest = Duration::ZERO;
        let mut synced_batches = 0;
        for s in all {
            for (total, n) in out.deltas.iter_mut().zip(s.deltas) {
                *total += n;
            }
            out.tombstones += s.tombstones;
            out.batches += s.batches;
            if let Some(shown) = s.shown {
                *out.shown.get_or_insert(0) += shown;
            }
            out.max_batch_len = out.max_batch_len.max(s.max_batch_len);
            out.waits.merge(&s.waits);
            out.queue_len += s.queue_len;
            out.max_queue_len = out.max_queue_len.max(s.max_queue_len);
            out.coalesced += s.coalesced;
            out.dropped += s.dropped;
            out.relists += s.relists;
            out.list_retries += s.list_retries;
            out.watches += s.watches;
            out.restarts += s.restarts;
            out.bookmarks += s.bookmarks;
            out.lists += s.lists;
            out.undelta |= s.undelta;
            out.pushes.merge(&s.pushes);
            if let Some(cache) = s.cache {
                let total = out.cache.get_or_insert_default();
                total.objects += cache.objects;
                total.bytes += cache.bytes;
            }
            match s.synced {
                Some(synced) => {
                    latest = latest.max(synced.after);
                    synced_batches += synced.batches;
                }
                None => all_synced = false,
            }
            if s.resource_version.is_some() {
                out.resource_version.clone_from(&s.resource_version);
            }
            out.watch_since = match (out.watch_since, s.watch_since) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
        }
        if all_synced {
            out.synced = Some(Synced {
                batches: synced_batches,
                after: latest,
            });
        }
        out
    }
}

/// Queue waits in a log-linear histogram: bounded memory however long the watch runs, each
/// quantile within 1/16 (6%) of the true value, the maximum exact.
#[derive(Debug, Clone, Default)]
pub struct WaitHistogram {
    /// Counts per bucket of microseconds (see `bucket`).
    buckets: Vec<u64>,
    count: u64,
    max: Duration,
}

/// Sub-buckets per power of two.
const SUB_BITS: u32 = 4;
const SUB: u64 = 1 << SUB_BITS;

impl WaitHistogram {
    /// Counts one wait.
    pub fn record(&mut self, wait: Duration) {
        let micros = u64::try_from(wait.as_micros()).unwrap_or(u64::MAX);
        let i = bucket(micros);
        if self.buckets.len() <= i {
            self.buckets.resize(i + 1, 0);
        }
        self.buckets[i] += 1;
        self.count += 1;
        self.max = self.max.max(wait);
    }

    /// Adds another histogram's counts.
    pub fn merge(&mut self, other: &WaitHistogram) {
        if self.buckets.len() < other.buckets.len() {
            self.buckets.resize(other.buckets.len(), 0);
        }
        for (mine, theirs) in self.buckets.iter_mut().zip(&other.buckets) {
            *mine += theirs;
        }
        self.count += other.count;
        self.max = self.max.max(other.max);
    }

    /// Waits recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The longest wait.
    pub fn max(&self) -> Duration {
        self.max
    }

    /// The wait below which a fraction `q` (0..=1) of the waits fall: the upper bound of its
    /// bucket, never above the maximum. `None` without waits.
    pub fn quantile(&self, q: f64) -> Option<Duration> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                let upper = Duration::from_micros(bucket_upper(i));
                return Some(upper.min(self.max));
            }
        }
        Some(self.max)
    }
}

/// Values below `SUB` have a bucket each; above, each power of two is split into `SUB` buckets.
fn bucket(micros: u64) -> usize {
    if micros < SUB {
        return micros as usize;
    }
    let exp = 63 - micros.leading_zeros(); // ≥ SUB_BITS
    let shift = exp - SUB_BITS;
    let sub = (micros >> shift) - SUB; // 0..SUB
    ((u64::from(shift) + 1) * SUB + sub) as usize
}

/// The largest value that falls into bucket `i`.
fn bucket_upper(i: usize) -> u64 {
    let i = i as u64;
    if i < SUB {
        return i;
    }
    let shift = i / SUB - 1;
    let sub = i % SUB;
    ((SUB + sub + 1) << shift) - 1
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    use crate::cache::ReflectorStore;
    use crate::cache::reflector::RelistCause;
    use crate::cache::test_objects::bare_cm as cm;
    use crate::cache::{DeltaFifo, Indexer, InformerQueue, ProcessLoop};

    #[test]
    fn buckets_cover_every_value_without_gaps() {
        let mut previous_upper = None;
        for i in 0..400 {
            let upper = bucket_upper(i);
            if let Some(p) = previous_upper {
                assert_eq!(bucket(p + 1), i, "the value after bucket {} ends", i - 1);
            }
            assert_eq!(bucket(upper), i);
            previous_upper = Some(upper);
        }
    }

    #[test]
    fn quantiles_are_within_a_sixteenth_and_never_above_the_max() {
        let mut h = WaitHistogram::default();
        assert_eq!(h.quantile(0.5), None);
        for ms in 1..=100 {
            h.record(Duration::from_millis(ms));
        }
        let p50 = h.quantile(0.5).unwrap().as_secs_f64() * 1e3;
        assert!((50.0..=50.0 * 17.0 / 16.0).contains(&p50), "{p50}");
        let p99 = h.quantile(0.99).unwrap().as_secs_f64() * 1e3;
        assert!((99.0..=100.0).contains(&p99), "{p99}");
        assert_eq!(h.quantile(1.0), Some(Duration::from_millis(100)));
        assert_eq!(h.max(), Duration::from_millis(100));
        assert_eq!(h.count(), 100);
    }

    #[test]
    fn batches_count_deltas_by_type_and_queue_counters_come_from_the_fifo() {
        let mut indexer = Indexer::new();
        indexer.add(cm("gone", "1"));
        let fifo = Arc::new(DeltaFifo::new().known_objects(Arc::new(indexer.reader())));
        fifo.replace(vec![cm("a", "10")], "10");
        fifo.update(cm("a", "11"));
        fifo.update(cm("a", "12"));
        let mut stats = InformerStats::default();
        let mut controller = ProcessLoop::new(fifo.clone(), indexer);
        while let Some(batch) = controller.try_process_next() {
            stats.record_batch(&batch);
        }
        stats.record_queue(&fifo.stats());
        assert_eq!(stats.batches, 2);
        assert_eq!(stats.count(DeltaType::Replaced), 1);
        assert_eq!(stats.count(DeltaType::Updated), 2);
        assert_eq!(stats.count(DeltaType::Deleted), 1);
        assert_eq!(stats.tombstones, 1);
        assert_eq!(stats.max_batch_len, 3);
        assert_eq!(stats.mean_batch_len(), 2.0);
        assert_eq!(stats.max_queue_len, 2);
        assert_eq!(stats.coalesced, 2);
        assert_eq!(stats.queue_len, 0);
        assert_eq!(stats.waits.count(), 2);
        // The newest object of the last batch popped: the tombstone's.
        assert_eq!(stats.resource_version.as_deref(), Some("1"));
    }

    #[test]
    fn whole_list_deltas_count_once_and_carry_the_resource_version() {
        let indexer = Indexer::new();
        let queue = Arc::new(crate::cache::RealFifo::atomic());
        queue.replace(vec![cm("a", "10"), cm("b", "11")], "12");
        let mut stats = InformerStats::default();
        let mut controller = ProcessLoop::new(queue.clone(), indexer);
        let batch = controller.try_process_next().unwrap();
        stats.record_batch(&batch);
        assert_eq!(stats.count(DeltaType::ReplacedAll), 1);
        assert_eq!(stats.total_deltas(), 1);
        assert_eq!(stats.resource_version.as_deref(), Some("12"));
        // A resync carries no resourceVersion: the last one stays.
        queue.resync();
        stats.record_batch(&controller.try_process_next().unwrap());
        assert_eq!(stats.count(DeltaType::SyncAll), 1);
        assert_eq!(stats.resource_version.as_deref(), Some("12"));
    }

    #[test]
    fn events_count_relists_watch_restarts_and_bookmarks() {
        let mut stats = InformerStats::default();
        let t0 = SystemTime::UNIX_EPOCH;
        let t1 = t0 + Duration::from_secs(5);
        let list = |rv: &str| ReflectorEventKind::ListStarted {
            resource_version: rv.into(),
        };
        let done = |rv: &str| ReflectorEventKind::ListDone {
            items: 3,
            pages: 1,
            resource_version: rv.into(),
            duration: Duration::ZERO,
        };
        let watch = ReflectorEventKind::WatchStarted {
            resource_version: "5".into(),
            timeout_seconds: 300,
            send_initial_events: false,
        };
        stats.record_event(&list("0"), t0);
        stats.record_event(
            &ReflectorEventKind::ListPage {
                page: 1,
                items_so_far: 3,
                remaining: Some(7),
            },
            t0,
        );
        assert_eq!(
            stats.listing,
            Some(ListProgress {
                pages: 1,
                items: 3,
                remaining: Some(7)
            })
        );
        stats.record_event(&done("5"), t0);
        assert_eq!(stats.listing, None);
        stats.record_event(&watch, t0);
        stats.record_event(
            &ReflectorEventKind::Bookmark {
                resource_version: "9".into(),
                initial_events_end: false,
            },
            t0,
        );
        assert_eq!(stats.resource_version.as_deref(), Some("9"));
        stats.record_event(
            &ReflectorEventKind::Relist {
                cause: RelistCause::WatchExpired,
            },
            t1,
        );
        stats.record_event(&list("9"), t1);
        stats.record_event(&done("12"), t1);
        stats.record_event(&watch, t1);
        assert_eq!(stats.relists, 1);
        assert_eq!(stats.watches, 2);
        assert_eq!(stats.watch_restarts(), 1);
        assert_eq!(stats.bookmarks, 1);
        assert_eq!(stats.watch_since, Some(t1));
        assert_eq!(stats.resource_version.as_deref(), Some("12"));
    }

    #[test]
    fn merged_stats_sync_when_every_informer_has() {
        let mut a = InformerStats::default();
        let mut b = InformerStats::default();
        a.batches = 2;
        b.batches = 3;
        a.deltas[DeltaType::Added.index()] = 2;
        b.deltas[DeltaType::Added.index()] = 4;
        a.record_synced(Synced {
            batches: 2,
            after: Duration::from_millis(10),
        });
        assert_eq!(InformerStats::merged([&a, &b]).synced, None);
        b.record_synced(Synced {
            batches: 3,
            after: Duration::from_millis(30),
        });
        let all = InformerStats::merged([&a, &b]);
        assert_eq!(
            all.synced,
            Some(Synced {
                batches: 5,
                after: Duration::from_millis(30)
            })
        );
        assert_eq!(InformerStats::merged([]).synced.map(|s| s.batches), Some(0));
        assert_eq!(all.count(DeltaType::Added), 6);
        assert_eq!(all.batches, 5);
    }
}
