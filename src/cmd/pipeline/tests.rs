//! The pipeline driven by in-memory sources, as `replay` will drive it: merged order across
//! resources, the resync row before its batches, and sources pacing themselves with [`Idle`].

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kube::api::ApiResource;
use kubectl_deltas::cache::reflector::TokioClock;
use kubectl_deltas::cache::testing::{Reply, ScriptedListerWatcher, WhenDone};
use kubectl_deltas::render::ObjectMode;
use kubectl_deltas::source::WatchEvent;
use serde_json::Value;
use tokio::sync::mpsc;

use super::*;
use crate::cmd::plan::{Format, InformerPlan, OutputPlan, Shown, StackPlan, Store};
use kubectl_deltas::Object;
use kubectl_deltas::cache::{
    ClientGoVersion, Consumption, InformerConfig, InformerKind, QueueKind, ReflectorConfig,
};
use kubectl_deltas::render::profile::{InformerProfile, ProfileChoice};

/// Lists `objects` at resourceVersion 10, then serves one watch fed by a channel (later watches
/// never deliver anything).
fn scripted(
    resource: ApiResource,
    objects: Vec<Object>,
) -> (ScriptedListerWatcher, mpsc::UnboundedSender<WatchEvent>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let replies = [Reply::list(objects, "10"), Reply::WatchFed(rx)];
    let scripted = ScriptedListerWatcher::new(resource, Some("default"), replies)
        .when_done(WhenDone::StayOpen);
    (scripted, tx)
}

fn configmaps() -> ApiResource {
    ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&())
}

fn secrets() -> ApiResource {
    ApiResource::erase::<k8s_openapi::api::core::v1::Secret>(&())
}

fn object(resource: &ApiResource, name: &str, rv: u64) -> Object {
    let mut obj = Object::new(name, resource).within("default");
    obj.meta_mut().resource_version = Some(rv.to_string());
    obj
}

fn view() -> OutputPlan {
    OutputPlan {
        output: Format::Jsonl,
        object: ObjectMode::None,
        show_secret_data: false,
        since_now: false,
        until_synced: false,
        max_batches: None,
        handler_delay: None,
        handlers: Vec::new(),
        controllers: Vec::new(),
        // The handler delays of these tests stand for a slow consumer: a plain informer's
        // handler, which the pop waits for.
        informer: InformerKind::Plain,
        view: Shown::Pops,
        queries: Vec::new(),
        narrow: Default::default(),
        color: false,
        verbose: false,
        status: false,
        stdout_is_terminal: false,
        header_row: false,
        summary: false,
        page_file: None,
        command_line: String::new(),
    }
}

/// The plan of `view` on the default profile's informer (client-go 1.32's).
fn settings(view: OutputPlan) -> Plan {
    plan_with(view, QueueKind::Delta)
}

/// The plan of `view` on the default profile's informer with the queue `queue` (one delta per
/// pop).
fn plan_with(view: OutputPlan, queue: QueueKind) -> Plan {
    let version = ClientGoVersion::minor_release(32).unwrap();
    let informer = InformerPlan {
        store: Store::Informer,
        config: InformerConfig {
            queue,
            batch_pop: 1,
            consumption: Consumption::Thread,
            ..InformerConfig::client_go(version)
        },
        kind: view.informer,
        reflector: ReflectorConfig::default(),
        profile: InformerProfile {
            client_go: version.to_string(),
            chosen: ProfileChoice::Default,
            settings: Vec::new(),
        },
        registration_synced: version.has_registration_synced(),
        wait_scale: None,
    };
    Plan {
        stack: StackPlan::new(&view, informer),
        output: view,
        compared: Vec::new(),
    }
}

/// An in-memory stdout.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn lines(&self) -> Vec<Value> {
        String::from_utf8(self.0.lock().unwrap().clone())
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn batches(&self) -> Vec<Value> {
        self.lines()
            .into_iter()
            .filter(|l| l["kind"] == "batch")
            .collect()
    }

    /// Waits (generously) until `until` holds for the lines written so far.
    async fn until(&self, what: &str, until: impl Fn(&[Value]) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !until(&self.lines()) {
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}: {:#?}",
                self.lines()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

async fn run(
    pipeline: Pipeline,
    sources: Vec<Source<ScriptedListerWatcher>>,
    out: &Captured,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> tokio::task::JoinHandle<Result<Ended, PipelineError>> {
    let out = Box::new(out.clone());
    tokio::spawn(pipeline.run_into(sources, TokioClock, shutdown, out, std::future::pending()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paced_source_sees_every_event_rendered_before_it_sends_the_next() {
    let resource = configmaps();
    let (source, events) = scripted(resource.clone(), vec![object(&resource, "a", 5)]);
    let mut view = view();
    // A slow handler would make these updates coalesce, were the source not waiting for it.
    view.handler_delay = Some(Duration::from_millis(30));
    let pipeline = Pipeline::new(settings(view));
    let idle = pipeline.idle();
    let source = source.pace(move || {
        let idle = idle.clone();
        Box::pin(async move { idle.wait().await })
    });
    let out = Captured::default();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let task = run(
        pipeline,
        vec![Source::new("configmaps", source)],
        &out,
        async {
            let _ = stop_rx.await;
        },
    )
    .await;
    for rv in 11..=15 {
        events
            .send(WatchEvent::Modified(Arc::new(object(&resource, "a", rv))))
            .unwrap();
    }
    out.until("six batches", |_| out.batches().len() == 6).await;
    let _ = stop_tx.send(());
    assert_eq!(task.await.unwrap().unwrap(), Ended::Shutdown);
    let batches = out.batches();
    let deltas: Vec<usize> = batches
        .iter()
        .map(|b| b["deltas"].as_array().unwrap().len())
        .collect();
    assert_eq!(deltas, [1; 6], "{batches:#?}");
    let rvs: Vec<&str> = batches
        .iter()
        .map(|b| b["deltas"][0]["resourceVersion"].as_str().unwrap())
        .collect();
    assert_eq!(rvs, ["5", "11", "12", "13", "14", "15"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_resources_merge_into_one_sequence_in_pop_order() {
    let (cm, secret) = (configmaps(), secrets());
    let (cms, cm_events) = scripted(cm.clone(), vec![object(&cm, "a", 1), object(&cm, "b", 2)]);
    let (secrets, secret_events) = scripted(secret.clone(), vec![object(&secret, "s", 3)]);
    let out = Captured::default();
    let mut view = view();
    view.max_batches = Some(5);
    let task = run(
        Pipeline::new(settings(view)),
        vec![
            Source::new("configmaps", cms),
            Source::new("secrets", secrets),
        ],
        &out,
        std::future::pending(),
    )
    .await;
    out.until("both synced", |lines| {
        lines.iter().filter(|l| l["event"] == "synced").count() == 2
    })
    .await;
    secret_events
        .send(WatchEvent::Added(Arc::new(object(&secret, "t", 20))))
        .unwrap();
    out.until("the secret", |_| out.batches().len() == 4).await;
    cm_events
        .send(WatchEvent::Deleted(Arc::new(object(&cm, "a", 21))))
        .unwrap();
    assert_eq!(task.await.unwrap().unwrap(), Ended::MaxBatches);

    let batches = out.batches();
    let seqs: Vec<u64> = batches.iter().map(|b| b["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5], "one sequence, written in order");
    let tail: Vec<(&str, &str)> = batches[3..]
        .iter()
        .map(|b| (b["resource"].as_str().unwrap(), b["key"].as_str().unwrap()))
        .collect();
    assert_eq!(
        tail,
        [("secrets", "default/t"), ("configmaps", "default/a")]
    );
    let mut initial: Vec<(&str, &str)> = batches[..3]
        .iter()
        .map(|b| (b["resource"].as_str().unwrap(), b["key"].as_str().unwrap()))
        .collect();
    initial.sort();
    assert_eq!(
        initial,
        [
            ("configmaps", "default/a"),
            ("configmaps", "default/b"),
            ("secrets", "default/s")
        ]
    );
    // Nothing follows the last batch a limit asked for.
    assert_eq!(out.lines().last().unwrap()["kind"], "batch");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_resync_row_precedes_the_sync_batches_it_queued() {
    let cm = configmaps();
    let (source, _events) = scripted(cm.clone(), vec![object(&cm, "a", 1), object(&cm, "b", 2)]);
    let out = Captured::default();
    let mut settings = settings(view());
    let reflector = &mut settings.stack.informer.reflector;
    *reflector = reflector.clone().resync(Duration::from_millis(20));
    settings.output.max_batches = Some(6);
    let task = run(
        Pipeline::new(settings),
        vec![Source::new("configmaps", source)],
        &out,
        std::future::pending(),
    )
    .await;
    assert_eq!(task.await.unwrap().unwrap(), Ended::MaxBatches);
    let lines = out.lines();
    let mut resyncs_seen = 0;
    let mut syncs_allowed = 0;
    for line in &lines {
        if line["event"] == "resync" {
            resyncs_seen += 1;
            syncs_allowed += line["keys"].as_u64().unwrap();
        }
        if line["kind"] == "batch" && line["deltas"][0]["type"] == "Sync" {
            assert!(
                syncs_allowed > 0,
                "a Sync batch before its resync row: {lines:#?}"
            );
            syncs_allowed -= 1;
        }
    }
    assert!(resyncs_seen >= 2, "{lines:#?}");
    // The ticker starts after the first list: no resync of an empty cache.
    let first_resync = lines.iter().position(|l| l["event"] == "resync").unwrap();
    let list_done = lines
        .iter()
        .position(|l| l["event"] == "list-done")
        .unwrap();
    assert!(list_done < first_resync);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_in_the_handler_is_not_idle_and_a_stop_releases_waiters() {
    let cm = configmaps();
    let (source, events) = scripted(cm.clone(), Vec::new());
    let mut view = view();
    // A handler that never finishes on its own: the batch stays in hand until the stop.
    view.handler_delay = Some(Duration::from_secs(3600));
    let pipeline = Pipeline::new(settings(view));
    let idle = pipeline.idle();
    assert!(idle.is_idle(), "nothing is queued before the run");
    let out = Captured::default();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let task = run(
        pipeline,
        vec![Source::new("configmaps", source)],
        &out,
        async {
            let _ = stop_rx.await;
        },
    )
    .await;
    out.until("the watch", |lines| {
        lines.iter().any(|l| l["event"] == "watch-start")
    })
    .await;
    events
        .send(WatchEvent::Added(Arc::new(object(&cm, "a", 11))))
        .unwrap();
    // Popped, and the plain informer's handler, inside the pop, is busy with it: in hand, and
    // not written until the handler returns. (Not `is_idle`, which would wait for the queue's
    // lock, held by the handler: that is a plain informer's backpressure.)
    tokio::time::timeout(Duration::from_secs(20), async {
        while idle.in_hand() == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await
    .expect("the batch is popped");
    assert!(out.batches().is_empty());
    let waiting = tokio::spawn({
        let idle = idle.clone();
        async move { idle.wait().await }
    });
    let _ = stop_tx.send(());
    // The stop interrupts the handler, and a waiter is let go.
    assert_eq!(task.await.unwrap().unwrap(), Ended::Shutdown);
    waiting.await.unwrap();
    assert!(idle.is_stopped());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_fifo_hands_a_slow_handler_every_update_on_its_own() {
    let resource = configmaps();
    let (source, events) = scripted(resource.clone(), vec![object(&resource, "a", 5)]);
    let mut view = view();
    // Without pacing, these updates pile up behind the slow handler; a DeltaFIFO would merge them.
    view.handler_delay = Some(Duration::from_millis(30));
    view.max_batches = Some(6);
    let settings = plan_with(view, QueueKind::Real);
    let out = Captured::default();
    let task = run(
        Pipeline::new(settings),
        vec![Source::new("configmaps", source)],
        &out,
        std::future::pending(),
    )
    .await;
    for rv in 11..=15 {
        events
            .send(WatchEvent::Modified(Arc::new(object(&resource, "a", rv))))
            .unwrap();
    }
    assert_eq!(task.await.unwrap().unwrap(), Ended::MaxBatches);
    let lines = out.lines();
    assert_eq!(lines[0]["event"], "informer-start");
    assert_eq!(lines[0]["queue"], "real");
    let batches = out.batches();
    let rvs: Vec<Vec<&str>> = batches
        .iter()
        .map(|b| {
            b["deltas"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["resourceVersion"].as_str().unwrap())
                .collect()
        })
        .collect();
    assert_eq!(
        rvs,
        [["5"], ["11"], ["12"], ["13"], ["14"], ["15"]],
        "{lines:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_list_through_the_atomic_queue_syncs_at_its_replaced_all() {
    let resource = configmaps();
    let (source, _events) = scripted(resource, Vec::new());
    let mut view = view();
    view.until_synced = true;
    let settings = plan_with(view, QueueKind::Atomic);
    let out = Captured::default();
    let task = run(
        Pipeline::new(settings),
        vec![Source::new("configmaps", source)],
        &out,
        std::future::pending(),
    )
    .await;
    assert_eq!(task.await.unwrap().unwrap(), Ended::UntilSynced);
    let lines = out.lines();
    let order: Vec<&str> = lines
        .iter()
        .filter(|l| l["event"] != "watch-start")
        .map(|l| l["event"].as_str().unwrap_or("batch"))
        .collect();
    // The empty ReplacedAll is popped like any delta, and the sync comes with it.
    assert_eq!(
        order,
        [
            "informer-start",
            "list-start",
            "list-page",
            "list-done",
            "batch",
            "synced"
        ],
        "{lines:#?}"
    );
    let batch = &out.batches()[0];
    assert_eq!(batch["deltas"][0]["type"], "ReplacedAll");
    assert_eq!(batch["deltas"][0]["objects"], 0);
    assert_eq!(batch["initial"], true);
    let synced = lines.iter().find(|l| l["event"] == "synced").unwrap();
    assert_eq!(synced["batches"], 1);
}
