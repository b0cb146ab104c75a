//! How fast a list page's JSON becomes cached objects: issue #30's decode rate, in MB/s of list
//! JSON on one core. `cargo bench --bench decode` (docs/benchmarks.md, "Decode rate").
//!
//! Two lists, generated here: 10k pods as a real cluster serves them (managedFields, three
//! containers with env, ports, probes and mounts, a status with conditions and container
//! statuses: ~6 KiB each), and issue #18's 5000 ConfigMaps of ~1.5 KiB. Each is measured
//! through what `KubeListerWatcher::list` runs on a page ([`ListDecoder`]: the item splitter and
//! `Object::from_json_text`, fed in 16 KiB pieces as hyper hands them over), then the
//! Reflector's default transform (stripping managedFields), and against two references: serde_json
//! validating the list into borrowed `RawValue`s (the ceiling of any decoder that checks the
//! JSON) and into a `serde_json::Value` tree.
//!
//! `DECODE_BENCH_CLOCK=cpu` times each iteration by the thread's CPU time instead of the wall
//! clock: on a machine whose cores other processes share, that is the figure "on one core".

// `json!` expands a literal recursively, token by token: room for the pod's large one.
#![recursion_limit = "256"]

// The binary's allocator, so that the figures are the binary's.
#[cfg(feature = "jemalloc")]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kubectl_deltas::source::list_body::ListDecoder;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// The size of the pieces hyper hands over from a socket.
const PIECE: usize = 16 * 1024;

fn managed_fields(manager: &str, time: &str, fields: Value) -> Value {
    json!({"manager": manager, "operation": "Update", "apiVersion": "v1", "time": time,
           "fieldsType": "FieldsV1", "fieldsV1": fields})
}

fn container(name: &str, i: usize) -> Value {
    json!({
        "name": name,
        "image": format!("registry.example.com/team/{name}:1.{}.{}", i % 7, i % 13),
        "command": ["/bin/server", "--config=/etc/config/app.yaml"],
        "args": ["--port=8080", "--metrics-port=9090", "--log-level=info"],
        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"},
                  {"name": "metrics", "containerPort": 9090, "protocol": "TCP"}],
        "env": [
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
            {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}},
            {"name": "GOMAXPROCS", "value": "2"},
            {"name": "CACHE_SIZE", "value": "512Mi"},
            {"name": "FEATURE_FLAGS", "value": "alpha=false,beta=true"}
        ],
        "resources": {"limits": {"cpu": "1", "memory": "512Mi"},
                      "requests": {"cpu": "100m", "memory": "128Mi"}},
        "volumeMounts": [{"name": "config", "mountPath": "/etc/config", "readOnly": true},
                         {"name": "kube-api-access-x7k2p", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}],
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
                          "initialDelaySeconds": 10, "timeoutSeconds": 1, "periodSeconds": 10,
                          "successThreshold": 1, "failureThreshold": 3},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080, "scheme": "HTTP"},
                           "timeoutSeconds": 1, "periodSeconds": 5, "successThreshold": 1,
                           "failureThreshold": 3},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "imagePullPolicy": "IfNotPresent"
    })
}

fn container_status(name: &str, i: usize) -> Value {
    json!({
        "name": name,
        "state": {"running": {"startedAt": "2026-11-20T08:12:45Z"}},
        "lastState": {},
        "ready": true,
        "restartCount": i % 3,
        "image": format!("registry.example.com/team/{name}:1.{}.{}", i % 7, i % 13),
        "imageID": format!("registry.example.com/team/{name}@sha256:{:064x}", i * 7919),
        "containerID": format!("containerd://{:064x}", i * 104729),
        "started": true
    })
}

/// A pod as the API server lists it (a list item: no kind or apiVersion).
fn pod(i: usize) -> Value {
    let names = ["app", "sidecar", "proxy"];
    let pod_name = format!("web-7d9f8c6b5-{i:05x}");
    json!({
        "metadata": {
            "name": pod_name,
            "generateName": "web-7d9f8c6b5-",
            "namespace": format!("team-{}", i % 20),
            "uid": format!("{:08x}-4b1e-4c2a-9d3f-{:012x}", i, i * 31),
            "resourceVersion": (1_000_000 + i).to_string(),
            "creationTimestamp": "2026-11-20T08:12:40Z",
            "labels": {"app": "web", "pod-template-hash": "7d9f8c6b5",
                       "app.kubernetes.io/name": "web", "app.kubernetes.io/part-of": "shop"},
            "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-11-19T10:00:00Z",
                            "prometheus.io/scrape": "true"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                 "name": "web-7d9f8c6b5", "uid": "5f0c0a1e-0b5e-4c7e-8a0f-3c1d2b4a5e6f",
                                 "controller": true, "blockOwnerDeletion": true}],
            "managedFields": [
                managed_fields("kube-controller-manager", "2026-11-20T08:12:40Z", json!({
                    "f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}},
                                   "f:ownerReferences": {".": {}, "k:{\"uid\":\"5f0c0a1e-0b5e-4c7e-8a0f-3c1d2b4a5e6f\"}": {}}},
                    "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:env": {}, "f:image": {}, "f:name": {}, "f:ports": {}, "f:resources": {}},
                                                 "k:{\"name\":\"proxy\"}": {".": {}, "f:image": {}, "f:name": {}},
                                                 "k:{\"name\":\"sidecar\"}": {".": {}, "f:image": {}, "f:name": {}}},
                               "f:dnsPolicy": {}, "f:enableServiceLinks": {}, "f:restartPolicy": {},
                               "f:schedulerName": {}, "f:securityContext": {}, "f:terminationGracePeriodSeconds": {}}
                })),
                {"manager": "kubelet", "operation": "Update", "apiVersion": "v1",
                 "time": "2026-11-20T08:12:46Z", "fieldsType": "FieldsV1", "subresource": "status",
                 "fieldsV1": {"f:status": {"f:conditions": {"k:{\"type\":\"ContainersReady\"}": {".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}},
                                                          "k:{\"type\":\"Initialized\"}": {".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}},
                                                          "k:{\"type\":\"Ready\"}": {".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}}},
                                           "f:containerStatuses": {}, "f:hostIP": {}, "f:phase": {}, "f:podIP": {}, "f:podIPs": {}, "f:startTime": {}}}}
            ]
        },
        "spec": {
            "volumes": [{"name": "config", "configMap": {"name": "web-config", "defaultMode": 420}},
                        {"name": "kube-api-access-x7k2p", "projected": {"sources": [
                            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}],
                            "defaultMode": 420}}],
            "containers": names.iter().map(|n| container(n, i)).collect::<Vec<_>>(),
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "web",
            "serviceAccount": "web",
            "nodeName": format!("node-{}", i % 50),
            "securityContext": {"runAsNonRoot": true, "runAsUser": 1000},
            "schedulerName": "default-scheduler",
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            ],
            "priority": 0,
            "enableServiceLinks": true,
            "preemptionPolicy": "PreemptLowerPriority"
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": "Initialized", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2026-11-20T08:12:40Z"},
                {"type": "Ready", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2026-11-20T08:12:46Z"},
                {"type": "ContainersReady", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2026-11-20T08:12:46Z"},
                {"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2026-11-20T08:12:40Z"}
            ],
            "hostIP": format!("10.0.{}.{}", i % 50, 10 + i % 200),
            "podIP": format!("10.244.{}.{}", i % 250, i % 251),
            "podIPs": [{"ip": format!("10.244.{}.{}", i % 250, i % 251)}],
            "startTime": "2026-11-20T08:12:40Z",
            "containerStatuses": names.iter().map(|n| container_status(n, i)).collect::<Vec<_>>(),
            "qosClass": "Burstable"
        }
    })
}

/// A ConfigMap of ~1.5 KiB, as issue #18's start-up measure lists them.
fn config_map(i: usize) -> Value {
    let value = format!("value of cm-{i}");
    let value = format!("{value:x>1000}");
    json!({
        "metadata": {
            "name": format!("cm-{i}"),
            "namespace": "bench",
            "uid": format!("{:08x}-0c1d-4e2f-8a9b-{:012x}", i, i * 17),
            "resourceVersion": (2_000_000 + i).to_string(),
            "creationTimestamp": "2026-11-20T08:00:00Z",
            "labels": {"app": "bench", "shard": (i % 16).to_string()},
            "managedFields": [managed_fields("kubectl-create", "2026-11-20T08:00:00Z",
                json!({"f:data": {".": {}, "f:config.yaml": {}, "f:mode": {}},
                       "f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:shard": {}}}}))]
        },
        "data": {"config.yaml": value, "mode": "fast"}
    })
}

/// A list body of `n` items made by `item`, compact, as the API server encodes it.
fn list(kind: &str, n: usize, item: fn(usize) -> Value) -> String {
    let items: Vec<String> = (0..n).map(|i| item(i).to_string()).collect();
    format!(
        r#"{{"kind":"{kind}","apiVersion":"v1","metadata":{{"resourceVersion":"3000000"}},"items":[{}]}}"#,
        items.join(",")
    )
}

#[derive(Deserialize)]
struct RawList<'a> {
    #[serde(borrow)]
    items: Vec<&'a RawValue>,
}

/// What an iteration is timed by (`DECODE_BENCH_CLOCK`).
#[derive(Clone, Copy)]
enum Clock {
    Wall,
    /// The bench thread's CPU time: what a decode costs whatever else runs on the machine.
    ThreadCpu,
}

impl Clock {
    fn from_env() -> Clock {
        match std::env::var("DECODE_BENCH_CLOCK").as_deref() {
            Ok("cpu") => Clock::ThreadCpu,
            Ok("wall") | Err(_) => Clock::Wall,
            Ok(other) => panic!("DECODE_BENCH_CLOCK is `cpu` or `wall`, not {other:?}"),
        }
    }

    /// The time `iters` runs of `routine` take.
    fn time<T>(self, iters: u64, mut routine: impl FnMut() -> T) -> Duration {
        match self {
            Clock::Wall => {
                let start = Instant::now();
                for _ in 0..iters {
                    black_box(routine());
                }
                start.elapsed()
            }
            Clock::ThreadCpu => {
                let start = thread_cpu_time();
                for _ in 0..iters {
                    black_box(routine());
                }
                thread_cpu_time() - start
            }
        }
    }
}

fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec for the call to fill in.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

fn decode(c: &mut Criterion) {
    let clock = Clock::from_env();
    let lists = [
        ("pods_10k", list("PodList", 10_000, pod)),
        ("configmaps_5k", list("ConfigMapList", 5_000, config_map)),
    ];
    let mut group = c.benchmark_group("decode");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    for (name, body) in &lists {
        let bytes = body.as_bytes();
        // MB/s (10^6 bytes), the unit of the target.
        group.throughput(Throughput::BytesDecimal(bytes.len() as u64));
        let decode_page = || {
            let mut decoder = ListDecoder::new();
            for piece in bytes.chunks(PIECE) {
                decoder.feed(piece).unwrap();
            }
            decoder.finish().unwrap()
        };
        group.bench_function(format!("{name}/list_page"), |b| {
            b.iter_custom(|iters| clock.time(iters, decode_page))
        });
        group.bench_function(format!("{name}/list_page_then_strip_managed_fields"), |b| {
            b.iter_custom(|iters| {
                clock.time(iters, || {
                    let mut page = decode_page();
                    for object in &mut page.items {
                        object.strip_managed_fields();
                    }
                    page
                })
            })
        });
        group.bench_function(format!("{name}/serde_json_raw_values"), |b| {
            b.iter_custom(|iters| {
                clock.time(iters, || {
                    serde_json::from_str::<RawList<'_>>(body)
                        .unwrap()
                        .items
                        .len()
                })
            })
        });
        group.bench_function(format!("{name}/serde_json_value"), |b| {
            b.iter_custom(|iters| {
                clock.time(iters, || serde_json::from_str::<Value>(body).unwrap())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, decode);
criterion_main!(benches);
