//! Makes the generated recordings bundled in `docs/recordings/` again (the expired watch and the
//! resync period, which a real cluster cannot stage on demand; the rollout recordings are real,
//! made by `tests/tools/record-real-cluster.sh`): each scenario changes the objects of the fake
//! API server (`tests/it/support`) while `kubectl-deltas record` records them. Real time passes,
//! so each generation has other times. See `docs/recordings/README.md`:
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

// -- The expired watch: worker pods; the watch ends, and while it is re-opened one pod is
// deleted and history compacted, so the re-watch gets 410 and the relist a tombstone --

const NODES: [&str; 3] = ["node-a", "node-b", "node-c"];

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
