//! The recordings bundled in `docs/recordings/`: golden tests of their replay, and how they are
//! made.
//!
//! Each recording is replayed with `-o jsonl --object meta` and as a timeline (no colours, UTC),
//! and compared with `tests/golden/replay_<name>.{jsonl,timeline}.txt`; an instant replay is
//! deterministic, so nothing is normalised. Each test also checks that the recording still shows
//! what `docs/recordings/README.md` says it shows.
//!
//! To make the recordings again (real time passes, so they come out with other times):
//!
//! ```sh
//! cargo test --test bundled_recordings -- --ignored     # runs `record` against the fake API server
//! UPDATE_GOLDEN=1 cargo test --test bundled_recordings  # then the goldens
//! ```

use crate::support;

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use support::binary::{Running, run_offline};
use support::fake_apiserver::{FakeApiServer, Fault, Verb};
use support::golden::golden;

fn recording(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("docs/recordings")
        .join(format!("{name}.jsonl"))
}

/// Replays a bundled recording with `args`; returns stdout.
async fn replay(name: &str, args: &[&str]) -> String {
    let path = recording(name);
    let mut all = vec!["replay", path.to_str().unwrap(), "-q"];
    all.extend_from_slice(args);
    let out = run_offline(&all, None).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "replay {name}: {stderr}");
    assert!(
        stderr.is_empty(),
        "replay {name} -q wrote on stderr: {stderr}"
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Replays `name` in both formats and compares them with the goldens; returns the timeline and
/// the JSON lines.
async fn replay_matches_goldens(name: &str) -> (String, String) {
    let jsonl = replay(name, &["-o", "jsonl", "--object", "meta"]).await;
    golden(&format!("replay_{name}.jsonl.txt"), &jsonl);
    let timeline = replay(name, &[]).await;
    golden(&format!("replay_{name}.timeline.txt"), &timeline);
    (timeline, jsonl)
}

fn rows_with<'a>(timeline: &'a str, needle: &str) -> Vec<&'a str> {
    timeline.lines().filter(|l| l.contains(needle)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rollout_pods_replay_to_their_goldens() {
    let (timeline, jsonl) = replay_matches_goldens("rollout-pods").await;
    // Three old pods listed, three new ones added, three old ones terminating, then gone.
    assert_eq!(rows_with(&timeline, " initial").len(), 3, "{timeline}");
    assert_eq!(rows_with(&timeline, "Added").len(), 3, "{timeline}");
    assert_eq!(rows_with(&timeline, "Deleted").len(), 3, "{timeline}");
    assert_eq!(rows_with(&jsonl, "deletionTimestamp").len(), 6, "{jsonl}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rollout_replicasets_replay_to_their_goldens() {
    let (timeline, _) = replay_matches_goldens("rollout-replicasets").await;
    assert!(timeline.contains("Added"), "the new ReplicaSet: {timeline}");
    assert!(timeline.contains("spec.replicas"), "scaling: {timeline}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rollout_deployment_replays_to_its_goldens() {
    let (timeline, _) = replay_matches_goldens("rollout-deployments").await;
    assert!(timeline.contains("containers[web].image"), "{timeline}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_expired_watch_replays_to_its_goldens() {
    let (timeline, _) = replay_matches_goldens("expired-watch").await;
    assert!(timeline.contains("410 → relist"), "{timeline}");
    let tombstones = rows_with(&timeline, "Deleted(tombstone)");
    assert_eq!(tombstones.len(), 1, "{timeline}");
    assert!(tombstones[0].contains("demo/worker-2"), "{timeline}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_resync_period_replays_to_its_goldens() {
    let (timeline, _) = replay_matches_goldens("resync").await;
    let ticks = rows_with(&timeline, "── resync tick");
    assert!(ticks.len() >= 2, "{timeline}");
    // Each tick's row comes before the Sync batches it queued.
    let first_tick = timeline.find("── resync tick").unwrap();
    let first_sync = timeline.find("  Sync  ").unwrap();
    assert!(first_tick < first_sync, "{timeline}");
}

// ---- Making the recordings ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "re-records docs/recordings/ (about 15 s); then run UPDATE_GOLDEN=1"]
async fn record_the_bundled_recordings() {
    rollout().await;
    expired_watch().await;
    resync().await;
}

const NS: &str = "demo";

/// A `kubectl deltas record … -f - -q` process, its stdout being the recording.
struct Recording {
    name: &'static str,
    bin: Running,
}

impl Recording {
    /// Starts recording and waits for the first list.
    fn start(
        server: &FakeApiServer,
        dir: &std::path::Path,
        name: &'static str,
        args: &[&str],
    ) -> Self {
        let kubeconfig = server.write_kubeconfig(dir);
        let mut all = vec!["record"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["-n", NS, "-f", "-", "-q"]);
        let mut recording = Recording {
            name,
            bin: Running::spawn(&kubeconfig, &all),
        };
        recording.saw("the first list", r#""type":"LIST""#);
        recording
    }

    /// Waits until the recording has a line containing `needle`.
    fn saw(&mut self, what: &str, needle: &str) {
        let bin = &mut self.bin;
        tokio::task::block_in_place(|| bin.read_until(what, |l| l.contains(needle)));
    }

    /// Waits until the recording has the event of resourceVersion `rv`.
    fn saw_rv(&mut self, rv: u64) {
        self.saw(
            &format!("resourceVersion {rv}"),
            &format!(r#""resourceVersion":"{rv}""#),
        );
    }

    /// Ends the recording with Ctrl-C and writes it to `docs/recordings/`.
    fn finish(self) {
        let ended = tokio::task::block_in_place(|| self.bin.interrupt());
        assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
        std::fs::write(recording(self.name), ended.stdout).unwrap();
    }
}

async fn pause(ms: u64) {
    tokio::time::sleep(Duration::from_millis(ms)).await;
}

/// Now, as the API server writes timestamps.
fn now() -> String {
    let seconds = jiff::Timestamp::now().as_second();
    jiff::Timestamp::from_second(seconds).unwrap().to_string()
}

/// A stable uid for a name, so that owner references hold across regenerations.
fn uid(name: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let g = h.rotate_left(29) ^ 0x9e37_79b9_7f4a_7c15;
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        h >> 32,
        h >> 16 & 0xffff,
        h & 0xfff,
        g >> 52,
        g & 0xffff_ffff_ffff
    )
}

// -- The rollout: Deployment web from web:1.4.2 to web:1.5.0, 3 replicas, maxSurge 1 --

const OLD_HASH: &str = "6d5f8b7c9d";
const NEW_HASH: &str = "7b9c4d6f58";
const OLD_PODS: [&str; 3] = ["2xkqp", "8mz4t", "ls7vw"];
const NEW_PODS: [&str; 3] = ["c4hzn", "p9wfx", "tq2rd"];
const NODES: [&str; 3] = ["node-a", "node-b", "node-c"];

fn image(hash: &str) -> &'static str {
    if hash == OLD_HASH {
        "registry.example.com/shop/web:1.4.2"
    } else {
        "registry.example.com/shop/web:1.5.0"
    }
}

fn template(hash: Option<&str>, image: &str) -> Value {
    let mut labels = json!({"app": "web"});
    if let Some(hash) = hash {
        labels["pod-template-hash"] = json!(hash);
    }
    json!({
        "metadata": {"labels": labels},
        "spec": {
            "containers": [{
                "name": "web",
                "image": image,
                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 5}
            }],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30
        }
    })
}

struct DeploymentState {
    generation: u64,
    observed: u64,
    replicas: u64,
    updated: u64,
    ready: u64,
    complete: bool,
}

fn deployment(s: &DeploymentState) -> Value {
    let hash = if s.generation == 1 {
        OLD_HASH
    } else {
        NEW_HASH
    };
    let (reason, message) = if s.complete {
        (
            "NewReplicaSetAvailable",
            format!("ReplicaSet \"web-{hash}\" has successfully progressed."),
        )
    } else {
        (
            "ReplicaSetUpdated",
            format!("ReplicaSet \"web-{hash}\" is progressing."),
        )
    };
    json!({
        "metadata": {
            "name": "web", "namespace": NS, "uid": uid("web"), "generation": s.generation,
            "labels": {"app": "web"},
            "annotations": {"deployment.kubernetes.io/revision": s.generation.to_string()}
        },
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": template(None, image(hash))
        },
        "status": {
            "observedGeneration": s.observed,
            "replicas": s.replicas,
            "updatedReplicas": s.updated,
            "readyReplicas": s.ready,
            "availableReplicas": s.ready,
            "conditions": [
                {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
                 "message": "Deployment has minimum availability."},
                {"type": "Progressing", "status": "True", "reason": reason, "message": message}
            ]
        }
    })
}

fn replicaset(hash: &str, replicas: u64, ready: u64, generation: u64) -> Value {
    let name = format!("web-{hash}");
    let revision = if hash == OLD_HASH { "1" } else { "2" };
    json!({
        "metadata": {
            "name": name, "namespace": NS, "uid": uid(&name), "generation": generation,
            "labels": {"app": "web", "pod-template-hash": hash},
            "annotations": {
                "deployment.kubernetes.io/desired-replicas": "3",
                "deployment.kubernetes.io/max-replicas": "4",
                "deployment.kubernetes.io/revision": revision
            },
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                                 "uid": uid("web"), "controller": true, "blockOwnerDeletion": true}]
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web", "pod-template-hash": hash}},
            "template": template(Some(hash), image(hash))
        },
        "status": {
            "replicas": replicas.max(ready),
            "fullyLabeledReplicas": replicas.max(ready),
            "readyReplicas": ready,
            "availableReplicas": ready,
            "observedGeneration": generation
        }
    })
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    Pending,
    Scheduled,
    Starting,
    Ready,
    Terminating,
}

fn pod(hash: &str, suffix: &str, node: &str, stage: Stage, started: &str) -> Value {
    let name = format!("web-{hash}-{suffix}");
    let rs = format!("web-{hash}");
    let mut metadata = json!({
        "name": name, "namespace": NS, "uid": uid(&name),
        "labels": {"app": "web", "pod-template-hash": hash},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs,
                             "uid": uid(&rs), "controller": true, "blockOwnerDeletion": true}]
    });
    if stage == Stage::Terminating {
        metadata["deletionTimestamp"] = json!(now());
        metadata["deletionGracePeriodSeconds"] = json!(30);
    }
    let mut spec = template(Some(hash), image(hash))["spec"].clone();
    let mut status = json!({"phase": "Pending", "qosClass": "Burstable"});
    if stage >= Stage::Scheduled {
        spec["nodeName"] = json!(node);
        status["conditions"] = json!([
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": started}
        ]);
    }
    if stage >= Stage::Starting {
        let ready = stage == Stage::Ready;
        let ip_tail = 10 + u32::from(suffix.as_bytes()[0] % 200);
        status["phase"] = json!("Running");
        status["hostIP"] = json!(format!(
            "10.0.0.{}",
            11 + NODES.iter().position(|n| *n == node).unwrap()
        ));
        status["podIP"] = json!(format!("10.244.1.{ip_tail}"));
        status["startTime"] = json!(started);
        let flag = if ready { "True" } else { "False" };
        status["conditions"] = json!([
            {"type": "Initialized", "status": "True", "lastTransitionTime": started},
            {"type": "Ready", "status": flag, "lastTransitionTime": started},
            {"type": "ContainersReady", "status": flag, "lastTransitionTime": started},
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": started}
        ]);
        status["containerStatuses"] = json!([{
            "name": "web", "image": image(hash), "ready": ready, "restartCount": 0, "started": true,
            "state": {"running": {"startedAt": started}}
        }]);
    }
    json!({"metadata": metadata, "spec": spec, "status": status})
}

async fn rollout() {
    let server = FakeApiServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let old_started = now();
    let mut state = DeploymentState {
        generation: 1,
        observed: 1,
        replicas: 3,
        updated: 3,
        ready: 3,
        complete: true,
    };
    server.create("deployments", deployment(&state));
    server.create("replicasets", replicaset(OLD_HASH, 3, 3, 1));
    for (i, suffix) in OLD_PODS.iter().enumerate() {
        server.create(
            "pods",
            pod(OLD_HASH, suffix, NODES[i], Stage::Ready, &old_started),
        );
    }
    let mut pods = Recording::start(&server, dir.path(), "rollout-pods", &["pods"]);
    let mut sets = Recording::start(&server, dir.path(), "rollout-replicasets", &["rs"]);
    let mut deploys = Recording::start(&server, dir.path(), "rollout-deployments", &["deploy"]);
    pause(400).await;

    // kubectl set image deployment/web web=…:1.5.0
    state.generation = 2;
    state.complete = false;
    state.updated = 0;
    let rv = server.update("deployments", deployment(&state));
    deploys.saw_rv(rv);
    pause(30).await;
    let rv = server.create("replicasets", replicaset(NEW_HASH, 1, 0, 1));
    sets.saw_rv(rv);
    state.observed = 2;
    let rv = server.update("deployments", deployment(&state));
    deploys.saw_rv(rv);

    let mut new_generation = 1;
    let mut old_generation = 1;
    for i in 0..3u64 {
        let (old, new) = (OLD_PODS[i as usize], NEW_PODS[i as usize]);
        let node = NODES[(i as usize + 1) % 3];
        if i > 0 {
            new_generation += 1;
            let rv = server.update(
                "replicasets",
                replicaset(NEW_HASH, i + 1, i, new_generation),
            );
            sets.saw_rv(rv);
        }
        // The ReplicaSet controller creates the pod; the scheduler binds it at once.
        server.create("pods", pod(NEW_HASH, new, node, Stage::Pending, ""));
        let started = now();
        let rv = server.update("pods", pod(NEW_HASH, new, node, Stage::Scheduled, &started));
        pods.saw_rv(rv);
        state.replicas = 4;
        let rv = server.update("deployments", deployment(&state));
        deploys.saw_rv(rv);
        pause(150).await;
        let rv = server.update("pods", pod(NEW_HASH, new, node, Stage::Starting, &started));
        pods.saw_rv(rv);
        pause(250).await;
        // Ready: the ReplicaSet and the Deployment count it.
        server.update("pods", pod(NEW_HASH, new, node, Stage::Ready, &started));
        let rv = server.update(
            "replicasets",
            replicaset(NEW_HASH, i + 1, i + 1, new_generation),
        );
        sets.saw_rv(rv);
        state.updated = i + 1;
        state.ready = 4;
        let rv = server.update("deployments", deployment(&state));
        deploys.saw_rv(rv);
        pause(100).await;
        // Scale the old ReplicaSet down by one: one old pod terminates.
        old_generation += 1;
        server.update(
            "replicasets",
            replicaset(OLD_HASH, 2 - i, 3 - i, old_generation),
        );
        let rv = server.update(
            "pods",
            pod(
                OLD_HASH,
                old,
                NODES[i as usize],
                Stage::Terminating,
                &old_started,
            ),
        );
        pods.saw_rv(rv);
        let rv = server.update(
            "replicasets",
            replicaset(OLD_HASH, 2 - i, 2 - i, old_generation),
        );
        sets.saw_rv(rv);
        pause(200).await;
        let rv = server.delete("pods", NS, &format!("web-{OLD_HASH}-{old}"));
        pods.saw_rv(rv);
        state.replicas = 3;
        state.ready = 3;
        let rv = server.update("deployments", deployment(&state));
        deploys.saw_rv(rv);
        pause(100).await;
    }
    state.complete = true;
    let rv = server.update("deployments", deployment(&state));
    deploys.saw_rv(rv);
    pause(300).await;
    pods.finish();
    sets.finish();
    deploys.finish();
}

// -- The expired watch: worker pods; the watch ends, and while it is re-opened one pod is
// deleted and history compacted, so the re-watch gets 410 and the relist a tombstone --

fn worker(n: u32, phase: &str, restarts: u32) -> Value {
    let name = format!("worker-{n}");
    let running = phase == "Running";
    let mut status = json!({"phase": phase, "qosClass": "BestEffort"});
    if running {
        status["podIP"] = json!(format!("10.244.2.{}", 20 + n));
        status["containerStatuses"] = json!([{
            "name": "worker", "image": "registry.example.com/batch/worker:3.1", "ready": true,
            "restartCount": restarts, "started": true, "state": {"running": {"startedAt": now()}}
        }]);
    }
    json!({
        "metadata": {"name": name, "namespace": NS, "uid": uid(&name),
                     "labels": {"app": "worker", "queue": "reports"}},
        "spec": {
            "containers": [{"name": "worker", "image": "registry.example.com/batch/worker:3.1",
                            "args": ["--queue=reports", "--concurrency=4"]}],
            "nodeName": NODES[(n as usize) % 3]
        },
        "status": status
    })
}

async fn expired_watch() {
    let server = FakeApiServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    for n in 1..=3 {
        server.create("pods", worker(n, "Running", 0));
    }
    let mut rec = Recording::start(&server, dir.path(), "expired-watch", &["pods"]);
    pause(300).await;
    let rv = server.update("pods", worker(1, "Running", 1));
    rec.saw_rv(rv);
    pause(1200).await;
    // The API server ends the watch; the re-watch is held up, and meanwhile worker-2 goes away,
    // worker-4 comes, worker-3 restarts, and etcd is compacted past them all.
    server.inject(
        Fault::delay(Duration::from_millis(600))
            .on(Verb::Watch)
            .for_resource("pods"),
    );
    server.close_watches();
    rec.saw("the end of the watch", r#""type":"WATCH_CLOSED""#);
    server.delete("pods", NS, "worker-2");
    server.create("pods", worker(4, "Pending", 0));
    server.update("pods", worker(3, "Running", 1));
    server.compact();
    rec.saw("the 410", r#""code":410"#);
    rec.saw("the relist", r#""type":"LIST""#);
    pause(400).await;
    let rv = server.update("pods", worker(4, "Running", 0));
    rec.saw_rv(rv);
    pause(300).await;
    rec.finish();
}

// -- A resync period: config maps recorded with --resync 1s --

fn config(name: &str, data: Value) -> Value {
    json!({"metadata": {"name": name, "namespace": NS, "uid": uid(name),
                        "labels": {"app": "shop"}},
           "data": data})
}

async fn resync() {
    let server = FakeApiServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    server.create(
        "configmaps",
        config(
            "app-config",
            json!({"LOG_LEVEL": "info", "CACHE_TTL": "300"}),
        ),
    );
    server.create(
        "configmaps",
        config("feature-flags", json!({"checkout.v2": "false"})),
    );
    let mut rec = Recording::start(
        &server,
        dir.path(),
        "resync",
        &["configmaps", "--resync", "1s"],
    );
    pause(450).await;
    let rv = server.update(
        "configmaps",
        config("feature-flags", json!({"checkout.v2": "true"})),
    );
    rec.saw_rv(rv);
    rec.saw("the first resync", r#""type":"RESYNC""#);
    pause(300).await;
    let rv = server.create(
        "configmaps",
        config(
            "maintenance-window",
            json!({"from": "02:00", "to": "03:00"}),
        ),
    );
    rec.saw_rv(rv);
    rec.saw("the second resync", r#""type":"RESYNC""#);
    pause(400).await;
    let rv = server.delete("configmaps", NS, "maintenance-window");
    rec.saw_rv(rv);
    rec.saw("the third resync", r#""type":"RESYNC""#);
    pause(200).await;
    rec.finish();
}
