//! kubectl's `TYPE/NAME` form (`watch cm/app-config`, `index cm/app-config`), its mix with
//! `TYPE NAME` refused as kubectl refuses it; `index`'s usage line; `index --replay --at`.

use serde_json::json;

use crate::support::binary::{json_lines, run, run_offline, stderr};
use crate::support::fake_apiserver::FakeApiServer;
use crate::support::paths::{bundled, path_str};

async fn two_config_maps() -> (FakeApiServer, tempfile::TempDir, std::path::PathBuf) {
    let server = FakeApiServer::start().await;
    for name in ["app-config", "other"] {
        server.create(
            "configmaps",
            json!({"metadata": {"name": name, "namespace": "default"}, "data": {"k": "v"}}),
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    (server, dir, kubeconfig)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn type_slash_name_is_one_object() {
    let (_server, _dir, kubeconfig) = two_config_maps().await;
    let index = run(
        &kubeconfig,
        &[
            "index",
            "cm/app-config",
            "--by",
            "namespace",
            "--value",
            "default",
            "--keys-only",
        ],
    )
    .await;
    assert_eq!(index.status.code(), Some(0), "{}", stderr(&index));
    assert_eq!(
        String::from_utf8_lossy(&index.stdout),
        "default/app-config\n"
    );

    let watch = run(
        &kubeconfig,
        &[
            "watch",
            "cm/app-config",
            "--until-synced",
            "-o",
            "jsonl",
            "--object",
            "none",
        ],
    )
    .await;
    assert_eq!(watch.status.code(), Some(0), "{}", stderr(&watch));
    let keys: Vec<String> = json_lines(&watch.stdout)
        .into_iter()
        .filter(|l| l["kind"] == "batch")
        .map(|l| l["key"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(keys, ["default/app-config"]);
}

/// kubectl's sentence (cli-runtime `hasCombinedTypeArgs`), a usage error; nothing is contacted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mixing_type_name_and_type_slash_name_is_refused_as_kubectl_does() {
    for args in [
        ["watch", "cm", "cm/app-config"],
        ["watch", "cm/app-config", "other"],
        ["record", "cm", "cm/app-config"],
    ] {
        let out = run_offline(&args, None).await;
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let command = args[0];
        assert!(
            stderr(&out).contains(&format!(
                "error: there is no need to specify a resource type as a separate argument when \
                 passing arguments in resource/name form (e.g. 'kubectl deltas {command} \
                 resource/<resource_name>' instead of 'kubectl deltas {command} resource \
                 resource/<resource_name>')"
            )),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    let out = run_offline(&["watch", "cm/a/b"], None).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("may not have more than one slash"),
        "{}",
        stderr(&out)
    );
}

/// clap's own usage line lists the arguments given beside the required ones: `--namespace
/// <NAME>` read as required.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_by_shows_what_is_required_only() {
    let out = run_offline(&["index", "pods", "-n", "demo"], None).await;
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("--by <SPEC>"), "{err}");
    let usage = err
        .lines()
        .find(|l| l.starts_with("Usage:"))
        .unwrap_or_default();
    assert_eq!(
        usage, "Usage: kubectl deltas index <RESOURCE[/NAME]> --by <SPEC> [OPTIONS]",
        "{err}"
    );
}

/// The keys of namespace `demo` in `expired-watch.jsonl`'s cache at `at` (its end for `None`).
async fn keys_at(at: Option<&str>) -> Vec<String> {
    let path = bundled("expired-watch");
    let mut args = vec![
        "index",
        "--replay",
        path_str(&path),
        "--by",
        "namespace",
        "--value",
        "demo",
        "--keys-only",
        "-q",
    ];
    args.extend(at.iter().flat_map(|at| ["--at", *at]));
    let out = run_offline(&args, None).await;
    assert_eq!(out.status.code(), Some(0), "{at:?}: {}", stderr(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// `expired-watch.jsonl`: worker-1..3 listed; after the 410, pop #7 adds worker-4 and pop #8 is
/// worker-2's tombstone (3.3 s in).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_at_is_the_cache_as_a_pop_or_a_time_left_it() {
    let before_relist = ["demo/worker-1", "demo/worker-2", "demo/worker-3"];
    assert_eq!(keys_at(Some("#6")).await, before_relist);
    assert_eq!(keys_at(Some("+3s")).await, before_relist);
    assert_eq!(keys_at(Some("2026-11-22T17:31:41Z")).await, before_relist);
    assert_eq!(
        keys_at(Some("#7")).await,
        [
            "demo/worker-1",
            "demo/worker-2",
            "demo/worker-3",
            "demo/worker-4"
        ]
    );
    let end = ["demo/worker-1", "demo/worker-3", "demo/worker-4"];
    assert_eq!(keys_at(Some("#8")).await, end);
    assert_eq!(keys_at(None).await, end);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_at_refuses_a_pop_the_replay_never_makes_and_a_cluster() {
    let path = bundled("expired-watch");
    let out = run_offline(
        &[
            "index",
            "--replay",
            path_str(&path),
            "--by",
            "namespace",
            "--at",
            "#99",
        ],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out)
            .contains("--at #99: the replay of this recording pops 9 batches; give #1 to #9"),
        "{}",
        stderr(&out)
    );
    let out = run_offline(&["index", "pods", "--by", "namespace", "--at", "#1"], None).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--replay <FILE>"), "{}", stderr(&out));
}
