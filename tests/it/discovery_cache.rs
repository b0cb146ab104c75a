//! Starting in one round trip: aggregated discovery (two requests, the legacy walk only for
//! servers without it) and the discovery cache kept per server under kubectl's `--cache-dir`
//! (`<dir>/discovery/<host_port>/`), which a warm start, `index`, `record` and shell completion
//! read without asking the server anything. Every test has a cache directory of its own.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};
use support::binary::output;
use support::binary::{command, stderr};
use support::fake_apiserver::{FakeApiServer, ResourceDef, Verb};

/// kubectl's discovery cache of one server: `<dir>/discovery/<host>_<port>/` and our file in it.
fn cache_file(dir: &Path, server: &FakeApiServer) -> PathBuf {
    let host_port = server.addr().to_string().replace(':', "_");
    dir.join("discovery")
        .join(host_port)
        .join("kubectl-deltas_catalog.json")
}

/// The paths of the discovery requests the server received since the last call, sorted (they
/// are sent concurrently).
fn discovery_requests(server: &FakeApiServer) -> Vec<String> {
    let mut paths: Vec<String> = server
        .requests()
        .into_iter()
        .filter(|r| r.verb == Verb::Discovery)
        .map(|r| r.path)
        .collect();
    paths.sort();
    server.clear_requests();
    paths
}

/// What a `--until-synced` run found, in an order that does not depend on timing: each
/// resource's batches (by key) and synced events.
fn found(out: &Output) -> Vec<String> {
    let mut found: Vec<String> = support::binary::json_lines(&out.stdout)
        .into_iter()
        .filter_map(
            |line| match (line["kind"].as_str(), line["event"].as_str()) {
                (Some("batch"), _) => Some(format!("{} batch {}", line["resource"], line["key"])),
                (_, Some("synced")) => Some(format!("{} synced", line["resource"])),
                _ => None,
            },
        )
        .collect();
    found.sort();
    found
}

/// `watch ARGS --until-synced -o jsonl -q --cache-dir CACHE` to its end.
async fn watch(kubeconfig: &Path, cache: &Path, resources: &str) -> Output {
    let mut cmd = command(
        kubeconfig,
        &[
            "watch",
            resources,
            "--until-synced",
            "-o",
            "jsonl",
            "--object",
            "none",
            "-q",
        ],
    );
    cmd.arg("--cache-dir").arg(cache);
    output(cmd).await
}

#[track_caller]
fn succeeded(out: &Output) {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    assert!(out.stderr.is_empty(), "{}", stderr(out));
}

struct Cluster {
    server: FakeApiServer,
    _dir: tempfile::TempDir,
    kubeconfig: PathBuf,
    cache: tempfile::TempDir,
}

async fn cluster() -> Cluster {
    let server = FakeApiServer::start().await;
    server.create(
        "configmaps",
        json!({"metadata": {"name": "a", "namespace": "default"}}),
    );
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    Cluster {
        server,
        _dir: dir,
        kubeconfig,
        cache: tempfile::tempdir().unwrap(),
    }
}

impl Cluster {
    async fn watch(&self, resources: &str) -> Output {
        watch(&self.kubeconfig, self.cache.path(), resources).await
    }

    fn file(&self) -> PathBuf {
        cache_file(self.cache.path(), &self.server)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cold_start_asks_two_discovery_requests_and_a_warm_start_none() {
    let cluster = cluster().await;
    // Short names of three groups: the core group's, apps' and a CRD's.
    let cold = cluster.watch("cm,deploy,wd").await;
    succeeded(&cold);
    assert_eq!(discovery_requests(&cluster.server), ["/api", "/apis"]);
    assert!(cluster.file().is_file(), "{}", cluster.file().display());

    let warm = cluster.watch("cm,deploy,wd").await;
    succeeded(&warm);
    assert_eq!(found(&warm), found(&cold));
    assert_eq!(
        found(&cold),
        [
            r#""configmaps" batch "default/a""#,
            r#""configmaps" synced"#,
            r#""deployments.apps" synced"#,
            r#""widgets.example.com" synced"#,
        ]
    );
    let requests = cluster.server.requests();
    assert!(
        requests.iter().all(|r| r.verb != Verb::Discovery),
        "{requests:?}"
    );
    // Nothing precedes the lists.
    assert_eq!(requests.first().map(|r| r.verb), Some(Verb::List));
    cluster.server.clear_requests();

    let mut index = command(
        &cluster.kubeconfig,
        &["index", "configmap", "--by", "namespace"],
    );
    index.arg("--cache-dir").arg(cluster.cache.path());
    let index = output(index).await;
    assert_eq!(index.status.code(), Some(0), "{}", stderr(&index));
    assert!(discovery_requests(&cluster.server).is_empty(), "index");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resource_missing_from_the_cache_is_discovered_once_more_before_it_is_unknown() {
    let cluster = cluster().await;
    succeeded(&cluster.watch("cm").await);
    discovery_requests(&cluster.server);

    // A CRD installed after the cache was written.
    cluster.server.register(
        ResourceDef::new("toys.example.org", "v1", "Gadget", "gadgets", true)
            .with_short_names(&["gd"]),
    );
    let found = cluster.watch("gd").await;
    succeeded(&found);
    assert_eq!(discovery_requests(&cluster.server), ["/api", "/apis"]);
    // ...and the refreshed cache knows it.
    succeeded(&cluster.watch("gadgets.toys.example.org").await);
    assert!(discovery_requests(&cluster.server).is_empty());

    // A name nobody serves: one refresh, then kubectl's message and a usage error.
    let unknown = cluster.watch("cm,frobnicators").await;
    assert_eq!(unknown.status.code(), Some(2), "{}", stderr(&unknown));
    assert!(
        stderr(&unknown).contains(r#"the server doesn't have a resource type "frobnicators""#),
        "{}",
        stderr(&unknown)
    );
    assert_eq!(discovery_requests(&cluster.server), ["/api", "/apis"]);

    // Resolved from a cache just fetched, a name is unknown at once.
    let cold = tempfile::tempdir().unwrap();
    let unknown = watch(&cluster.kubeconfig, cold.path(), "frobnicators").await;
    assert_eq!(unknown.status.code(), Some(2), "{}", stderr(&unknown));
    assert_eq!(discovery_requests(&cluster.server), ["/api", "/apis"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cached_resource_that_does_not_resolve_is_discovered_again() {
    let cluster = cluster().await;
    succeeded(&cluster.watch("cm").await);
    discovery_requests(&cluster.server);
    // The cache remembers configmaps without `watch`, as if it had been written before an
    // upgrade: kubectl rediscovers on any error of a cached mapping, not only on a missing name.
    let mut file: Value = serde_json::from_slice(&std::fs::read(cluster.file()).unwrap()).unwrap();
    for resource in file["resources"].as_array_mut().unwrap() {
        if resource["plural"] == "configmaps" {
            resource["verbs"] = json!(["get", "list"]);
        }
    }
    std::fs::write(cluster.file(), file.to_string()).unwrap();
    succeeded(&cluster.watch("cm").await);
    assert_eq!(discovery_requests(&cluster.server), ["/api", "/apis"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_cache_is_discovered_again() {
    let cluster = cluster().await;
    succeeded(&cluster.watch("cm").await);
    discovery_requests(&cluster.server);
    let read =
        |path: &Path| -> Value { serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap() };
    let mut file = read(&cluster.file());
    let fetched_at = file["fetchedAt"].as_u64().unwrap();

    // Five minutes short of kubectl's 6 hours: still fresh.
    file["fetchedAt"] = json!(fetched_at - 6 * 3600 + 300);
    std::fs::write(cluster.file(), file.to_string()).unwrap();
    succeeded(&cluster.watch("cm").await);
    assert!(discovery_requests(&cluster.server).is_empty());

    file["fetchedAt"] = json!(fetched_at - 6 * 3600 - 1);
    std::fs::write(cluster.file(), file.to_string()).unwrap();
    succeeded(&cluster.watch("cm").await);
    assert_eq!(discovery_requests(&cluster.server), ["/api", "/apis"]);
    let rewritten = read(&cluster.file())["fetchedAt"].as_u64().unwrap();
    assert!(rewritten >= fetched_at, "{rewritten} < {fetched_at}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_aggregated_discovery_gets_the_legacy_walk() {
    let cluster = cluster().await;
    cluster.server.set_aggregated_discovery(false);
    let cold = cluster.watch("cm,deploy,wd").await;
    succeeded(&cold);
    assert_eq!(
        discovery_requests(&cluster.server),
        [
            "/api",
            "/api/v1",
            "/apis",
            "/apis/apps/v1",
            "/apis/example.com/v1"
        ]
    );
    succeeded(&cluster.watch("cm,deploy,wd").await);
    assert!(discovery_requests(&cluster.server).is_empty());

    // The same catalog, whichever way it was read.
    let legacy = std::fs::read(cluster.file()).unwrap();
    cluster.server.set_aggregated_discovery(true);
    let aggregated = tempfile::tempdir().unwrap();
    succeeded(&watch(&cluster.kubeconfig, aggregated.path(), "cm").await);
    let aggregated = std::fs::read(cache_file(aggregated.path(), &cluster.server)).unwrap();
    let catalog = |bytes: &[u8]| {
        let mut file: Value = serde_json::from_slice(bytes).unwrap();
        file.as_object_mut().unwrap().remove("fetchedAt");
        file
    };
    assert_eq!(catalog(&legacy), catalog(&aggregated));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_cache_files_are_ignored_and_rewritten() {
    let cluster = cluster().await;
    std::fs::create_dir_all(cluster.file().parent().unwrap()).unwrap();
    let garbage: [&[u8]; 4] = [
        b"",
        b"{\"format\":1,\"server\":\"http",
        b"\xff\xfe not JSON",
        br#"{"format":1,"server":"elsewhere","fetchedAt":0,"preferredVersions":[],"resources":[]}"#,
    ];
    for bytes in garbage {
        std::fs::write(cluster.file(), bytes).unwrap();
        succeeded(&cluster.watch("cm").await);
        assert_eq!(discovery_requests(&cluster.server), ["/api", "/apis"]);
        succeeded(&cluster.watch("cm").await);
        assert!(discovery_requests(&cluster.server).is_empty(), "rewritten");
    }
}

/// A catalog that is a FIFO hung every command in `open(2)`; a symlink to `/dev/zero` was read
/// until memory ran out. Only a regular file of a bounded size is read: anything else is a miss,
/// discovered afresh and replaced by a regular file.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cache_file_that_is_not_a_regular_file_is_a_miss() {
    let cluster = cluster().await;
    let file = cluster.file();
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let fifo = std::ffi::CString::new(file.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    succeeded(&cluster.watch("cm").await);
    assert_eq!(discovery_requests(&cluster.server), ["/api", "/apis"]);
    assert!(file.symlink_metadata().unwrap().is_file());

    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &file).unwrap();
    succeeded(&cluster.watch("cm").await);
    assert_eq!(discovery_requests(&cluster.server), ["/api", "/apis"]);
    assert!(file.symlink_metadata().unwrap().is_file());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cache_dir_that_cannot_be_written_is_no_error() {
    let cluster = cluster().await;
    let file = cluster.cache.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    for _ in 0..2 {
        // Not even a warning: the command works as without a cache.
        succeeded(&watch(&cluster.kubeconfig, &file, "cm").await);
        assert_eq!(discovery_requests(&cluster.server), ["/api", "/apis"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cache_is_kubectls_by_default_and_kubecachedir_moves_it() {
    let cluster = cluster().await;
    let home = tempfile::tempdir().unwrap();
    let run = |kubecachedir: Option<&Path>| {
        let mut cmd = command(
            &cluster.kubeconfig,
            &["watch", "cm", "--until-synced", "-q", "-o", "jsonl"],
        );
        cmd.env("HOME", home.path());
        match kubecachedir {
            Some(dir) => cmd.env("KUBECACHEDIR", dir),
            None => cmd.env_remove("KUBECACHEDIR"),
        };
        output(cmd)
    };
    succeeded(&run(None).await);
    assert!(cache_file(&home.path().join(".kube/cache"), &cluster.server).is_file());
    let elsewhere = tempfile::tempdir().unwrap();
    succeeded(&run(Some(elsewhere.path())).await);
    assert!(cache_file(elsewhere.path(), &cluster.server).is_file());
    discovery_requests(&cluster.server);
    // `--cache-dir` wins over KUBECACHEDIR, as with kubectl.
    let mut cmd = command(
        &cluster.kubeconfig,
        &["watch", "cm", "--until-synced", "-q"],
    );
    cmd.env("KUBECACHEDIR", elsewhere.path())
        .arg("--cache-dir")
        .arg(cluster.cache.path());
    succeeded(&output(cmd).await);
    assert_eq!(discovery_requests(&cluster.server), ["/api", "/apis"]);
    assert!(cluster.file().is_file());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn processes_sharing_a_cache_never_read_half_a_file() {
    let cluster = cluster().await;
    // A catalog large enough that writing it takes a while.
    for i in 0..1000 {
        cluster.server.register(ResourceDef::new(
            &format!("group-{}.example.net", i % 20),
            "v1",
            &format!("Thing{i}"),
            &format!("things{i}"),
            true,
        ));
    }
    let file = cluster.file();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Readers besides the processes themselves, which would take a torn file for a corrupt one
    // and quietly discover again.
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (file, stop) = (file.clone(), stop.clone());
            std::thread::spawn(move || {
                let (mut whole, mut torn) = (0, Vec::new());
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    if let Ok(bytes) = std::fs::read(&file) {
                        match serde_json::from_slice::<Value>(&bytes) {
                            Ok(_) => whole += 1,
                            Err(e) => torn.push(format!("{} bytes: {e}", bytes.len())),
                        }
                    }
                }
                (whole, torn)
            })
        })
        .collect();
    // Each run rewrites the cache: the name it asks for is in no catalog.
    let runs: Vec<_> = (0..12)
        .map(|_| {
            let mut cmd = command(&cluster.kubeconfig, &["watch", "nothings", "-q"]);
            cmd.arg("--cache-dir").arg(cluster.cache.path());
            output(cmd)
        })
        .collect();
    for run in runs {
        let out = run.await;
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains(r#"doesn't have a resource type "nothings""#),
            "{}",
            stderr(&out)
        );
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    for reader in readers {
        let (whole, torn) = reader.join().unwrap();
        assert!(torn.is_empty(), "read {} torn files: {torn:?}", torn.len());
        assert!(whole > 0);
    }
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(file.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, [file.file_name().unwrap()]);
}

/// `kubectl-deltas __complete -- WORDS…` with a cache directory.
async fn complete(kubeconfig: &Path, cache: &Path, word: &str) -> Vec<String> {
    let mut cmd = support::binary::offline_command(&["__complete", "--", "watch", "--kubeconfig"]);
    cmd.arg(kubeconfig)
        .arg("--cache-dir")
        .arg(cache)
        .arg(word)
        .env_remove("RUST_LOG")
        .env("XDG_CACHE_HOME", cache)
        // The default half second is for people at a shell; a loaded test machine needs longer.
        .env("KUBECTL_DELTAS_COMPLETION_TIMEOUT", "20s");
    let out = output(cmd).await;
    assert_eq!(out.status.code(), Some(0));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with(':'))
        .map(|l| l.split('\t').next().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completion_reads_and_fills_the_same_cache() {
    let cluster = cluster().await;
    succeeded(&cluster.watch("cm").await);
    cluster.server.clear_requests();
    let names = complete(&cluster.kubeconfig, cluster.cache.path(), "").await;
    for name in [
        "pods",
        "configmaps",
        "deployments.apps",
        "widgets.example.com",
    ] {
        assert!(names.contains(&name.to_owned()), "{name}: {names:?}");
    }
    assert!(
        cluster.server.requests().is_empty(),
        "completion asked the server"
    );

    // A cache that a completion filled serves the next command.
    let filled = tempfile::tempdir().unwrap();
    let names = complete(&cluster.kubeconfig, filled.path(), "dep").await;
    assert_eq!(names, ["deployments.apps"]);
    assert_eq!(discovery_requests(&cluster.server), ["/api", "/apis"]);
    succeeded(&watch(&cluster.kubeconfig, filled.path(), "deploy").await);
    assert!(discovery_requests(&cluster.server).is_empty());
}

/// A warm cache kept a mapping for 6 hours after its CRD was deleted: every run got a 404 and
/// printed the HTTP client's words. A 404 for a cached mapping discovers again within the run;
/// when discovery still lists the resource where it was, the 404 stands, named, and the cache is
/// dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_404_for_a_cached_resource_discovery_still_lists_names_it_and_drops_the_cache() {
    let cluster = cluster().await;
    succeeded(&cluster.watch("widgets").await);
    assert!(cluster.file().is_file());
    discovery_requests(&cluster.server);

    cluster.server.inject(
        support::fake_apiserver::Fault::custom_status(404, "NotFound", "404 page not found")
            .on(Verb::List)
            .for_resource("widgets"),
    );
    let out = cluster.watch("widgets").await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains(
            "the API server does not serve widgets.example.com at example.com/v1 (404 Not \
             Found), though discovery, asked again, still lists it there"
        ),
        "{err}"
    );
    assert_eq!(
        discovery_requests(&cluster.server),
        ["/api", "/apis"],
        "discovered once more"
    );
    assert!(!cluster.file().exists());

    cluster.server.clear_faults();
    succeeded(&cluster.watch("widgets").await);
    assert_eq!(discovery_requests(&cluster.server), ["/api", "/apis"]);
}

/// Issue #26: a CRD whose served version changed after the cache was written. The cached
/// mapping's list answers 404; discovering again within the run finds the new version, and the
/// run carries on with it, saying so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cached_resource_served_at_another_version_now_is_watched_there() {
    let cluster = cluster().await;
    cluster.server.create(
        "widgets",
        json!({"metadata": {"name": "w", "namespace": "default"}}),
    );
    succeeded(&cluster.watch("wd").await);
    discovery_requests(&cluster.server);

    cluster.server.unregister("widgets.example.com", "v1");
    cluster.server.register(
        ResourceDef::new("example.com", "v2", "Widget", "widgets", true).with_short_names(&["wd"]),
    );
    let mut cmd = command(
        &cluster.kubeconfig,
        &["watch", "wd", "--until-synced", "-o", "jsonl", "-q"],
    );
    cmd.arg("--cache-dir").arg(cluster.cache.path());
    let out = output(cmd).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    // The objects listed at the new version are of it (list items carry no apiVersion).
    let lines = support::binary::json_lines(&out.stdout);
    let batch = lines.iter().find(|l| l["kind"] == "batch").unwrap();
    assert_eq!(
        batch["deltas"][0]["object"]["apiVersion"], "example.com/v2",
        "{batch}"
    );
    assert!(
        err.contains(
            "kubectl-deltas: warning: the API server answered 404 Not Found for \
             widgets.example.com at example.com/v1, where the discovery cache had it; discovered \
             again, it is served at example.com/v2: carrying on with that"
        ),
        "{err}"
    );
    assert_eq!(
        found(&out),
        [
            r#""widgets.example.com" batch "default/w""#,
            r#""widgets.example.com" synced"#,
        ]
    );
    let lists: Vec<String> = cluster
        .server
        .requests()
        .into_iter()
        .filter(|r| r.verb == Verb::List)
        .map(|r| r.path)
        .collect();
    // (The v1 list's 404 is the warning above: the server counts it as no resource's list.)
    assert_eq!(lists, ["/apis/example.com/v2/namespaces/default/widgets"]);
}

/// Issue #26: a CRD deleted after the cache was written. Discovering again within the run finds
/// no such resource: the sentence names it, as a resolution miss does, with its exit code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cached_resource_deleted_since_is_named_as_unknown() {
    let cluster = cluster().await;
    succeeded(&cluster.watch("widgets").await);
    discovery_requests(&cluster.server);

    cluster.server.unregister("widgets.example.com", "v1");
    let out = cluster.watch("widgets").await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "watching widgets.example.com in namespace \"default\" failed: the API server does \
             not serve widgets.example.com at example.com/v1 (404 Not Found), where the \
             discovery cache had it, and discovering again found it nowhere: the server \
             doesn't have a resource type \"widgets\""
        ),
        "{err}"
    );
    assert!(!err.contains("page not found"), "{err}");
    // What a client-go informer would do is no concern of a resource nobody serves.
    assert!(!err.contains("note:"), "{err}");
}
