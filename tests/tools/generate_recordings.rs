//! Makes the recordings bundled in `docs/recordings/` again: each scenario changes the objects of
//! the fake API server (`tests/it/support`) while `kubectl-deltas record` records them. Real time
//! passes, so each generation has other times. See `docs/recordings/README.md`:
//!
//! ```sh
//! cargo run --example generate-recordings             # into docs/recordings/
//! cargo run --example generate-recordings -- DIR      # into DIR
//! ```
//!
//! Cargo builds this file as an example (declared in Cargo.toml), not as a test: it writes files
//! and takes its time, and no test run should.

#[allow(
    dead_code,
    reason = "the test binary's support code, of which the generator needs a part"
)]
#[path = "../it/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use support::binary::{Running, program};
use support::fake_apiserver::{FakeApiServer, Fault, Verb};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let out = match std::env::args_os().nth(1) {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/recordings"),
    };
    std::fs::create_dir_all(&out).unwrap();
    build_the_binary();
    rollout(&out).await;
    expired_watch(&out).await;
    resync(&out).await;
}

/// Builds `kubectl-deltas` in this example's target directory and profile, where
/// [`program`] finds it: cargo builds an example without the package's binaries. Naming this
/// example too keeps the dev-dependencies' features, so that the build is the one `cargo test`
/// and `cargo run --example` make, and nothing is compiled again.
fn build_the_binary() {
    let exe = program();
    let profile_dir = exe.parent().unwrap();
    let profile = profile_dir.file_name().unwrap().to_str().unwrap();
    let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cargo
        .args(["build", "--locked", "--bin", "kubectl-deltas"])
        .args(["--example", "generate-recordings", "--target-dir"])
        .arg(profile_dir.parent().unwrap())
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    match profile {
        "debug" => {}
        "release" => {
            cargo.arg("--release");
        }
        other => {
            cargo.args(["--profile", other]);
        }
    }
    // What `cargo run` tells this program of its package would reach the build scripts of the
    // dependencies (ring's watches CARGO_MANIFEST_DIR, CARGO_PKG_NAME, OUT_DIR…) and have them
    // rebuilt, here and again at the next `cargo test`.
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if key.starts_with("CARGO_PKG_")
            || key.starts_with("CARGO_MANIFEST_")
            || [
                "CARGO_CRATE_NAME",
                "CARGO_BIN_NAME",
                "CARGO_PRIMARY_PACKAGE",
                "OUT_DIR",
            ]
            .contains(&key.as_ref())
        {
            cargo.env_remove(key.as_ref());
        }
    }
    let status = cargo.status().expect("cargo runs");
    assert!(status.success(), "cannot build {}", exe.display());
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

    /// Ends the recording with Ctrl-C and writes it to `out`, as `<name>.jsonl`.
    fn finish(self, out: &Path) {
        let ended = tokio::task::block_in_place(|| self.bin.interrupt());
        assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
        let path = out.join(format!("{}.jsonl", self.name));
        std::fs::write(&path, ended.stdout).unwrap();
        println!("{}", path.display());
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

async fn rollout(out: &Path) {
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
    pods.finish(out);
    sets.finish(out);
    deploys.finish(out);
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

async fn expired_watch(out: &Path) {
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
    rec.finish(out);
}

// -- A resync period: config maps recorded with --resync 1s --

fn config(name: &str, data: Value) -> Value {
    json!({"metadata": {"name": name, "namespace": NS, "uid": uid(name),
                        "labels": {"app": "shop"}},
           "data": data})
}

async fn resync(out: &Path) {
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
    rec.finish(out);
}
