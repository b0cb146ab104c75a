//! `--compare A,B[,C…]` through the binary: the stacks it takes and refuses, every record
//! naming its stack, and one list and one watch against the server however many stacks run.

use std::path::PathBuf;

use crate::support::binary::{json_lines, run, run_offline, stderr};
use crate::support::fake_apiserver::FakeApiServer;
use serde_json::{Value, json};

fn path(relative: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(relative)
        .to_str()
        .unwrap()
        .to_owned()
}

const EXPIRED: &str = "docs/recordings/expired-watch.jsonl";

/// Runs `replay FILE -q ARGS`; the exit code, stdout and stderr.
async fn replay(file: &str, args: &[&str]) -> (Option<i32>, String, String) {
    let file = if file.starts_with('/') {
        file.to_owned()
    } else {
        path(file)
    };
    let mut all = vec!["replay", file.as_str(), "-q"];
    all.extend_from_slice(args);
    let out = run_offline(&all, None).await;
    (
        out.status.code(),
        String::from_utf8(out.stdout.clone()).unwrap(),
        stderr(&out),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stacks_that_cannot_be_compared_are_refused_with_a_sentence() {
    for (args, says) in [
        (
            &["--compare", "1.32"][..],
            "--compare 1.32 names one stack, and comparing needs two or more",
        ),
        (
            &["--compare", "1.32,latest,1.32"],
            "--compare names the stack 1.32 twice",
        ),
        (
            &["--compare", "1.35,v0.35"],
            "--compare stacks 1.35 and v0.35 run the same informer and controllers",
        ),
        (
            &["--compare", "1.32,latest", "--store", "undelta"],
            "--store undelta: --compare shows where stacks' handlers and controllers",
        ),
        (
            &["--compare", "queue=workqueue,queue=priority"],
            "--compare stack queue=workqueue changes every --controller, and none is given",
        ),
        (
            &["--compare", "1.32,1.35+watch-list"],
            "--compare stack 1.35+watch-list: a replay's initial list comes as the recording",
        ),
        (
            &["--compare", "1.32,1.99"],
            "--compare stack 1.99: --client-go:",
        ),
        (
            &["--compare", "1.32,latest+fifo=plain+legacy-sync"],
            "--compare stack latest+fifo=plain+legacy-sync: --legacy-sync turns Replaced deltas",
        ),
        (&["--compare", "1.32,speed=2"], "is not a stack term"),
        (
            &["--compare", "1.32,latest", "-o", "yaml"],
            "-o yaml does not: use one of those",
        ),
    ] {
        let (code, stdout, stderr) = replay(EXPIRED, args).await;
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_refuses_compare_with_a_sentence() {
    let out = run_offline(
        &["record", "pods", "-f", "-", "--compare", "1.32,latest"],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "--compare 1.32,latest: record writes what the server sent, which is the same for \
             every stack"
        ),
        "{}",
        stderr(&out)
    );
}

/// The records of `stack`, without their `stack` field.
fn of_stack(records: &[Value], stack: &str) -> Vec<Value> {
    records
        .iter()
        .filter(|r| r["stack"] == stack)
        .map(|r| {
            let mut r = r.clone();
            r.as_object_mut().unwrap().remove("stack");
            r
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_record_names_its_stack_and_each_stack_sees_what_it_sees_alone() {
    let (code, stdout, stderr) = replay(
        EXPIRED,
        &["--handler", "h", "--compare", "1.32,latest", "-o", "jsonl"],
    )
    .await;
    // The stacks differ (the next test says where).
    assert_eq!(code, Some(5), "{stderr}");
    let records = json_lines(stdout.as_bytes());
    let (compared, rows): (Vec<&Value>, Vec<&Value>) = records
        .iter()
        .partition(|r| r["kind"] == "difference" || r["kind"] == "verdict");
    assert!(
        rows.iter()
            .all(|r| r["stack"] == "1.32" || r["stack"] == "latest"),
        "{stdout}"
    );
    assert!(!compared.is_empty() && compared.iter().all(|r| r.get("stack").is_none()));
    for (stack, version) in [("1.32", "1.32"), ("latest", "latest")] {
        let (code, alone, stderr) = replay(
            EXPIRED,
            &["--handler", "h", "--client-go", version, "-o", "jsonl"],
        )
        .await;
        assert_eq!(code, Some(0), "{stderr}");
        let alone = json_lines(alone.as_bytes());
        let compared = of_stack(&records, stack);
        // Pops are numbered across the stacks, so `seq` differs; the rest is the same.
        let without_seq = |records: &[Value]| -> Vec<Value> {
            records
                .iter()
                .map(|r| {
                    let mut r = r.clone();
                    let map = r.as_object_mut().unwrap();
                    map.remove("seq");
                    // The first line names how the version was chosen.
                    if let Some(profile) = map.get_mut("profile") {
                        profile.as_object_mut().unwrap().remove("chosen");
                    }
                    r
                })
                .collect()
        };
        assert_eq!(without_seq(&compared), without_seq(&alone), "{stack}");
    }

    // Without --compare, no record has a stack.
    let (_, stdout, _) = replay(EXPIRED, &["--handler", "h", "-o", "jsonl"]).await;
    assert!(
        json_lines(stdout.as_bytes())
            .iter()
            .all(|r| r.get("stack").is_none())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_stacks_share_one_list_and_one_watch() {
    let server = FakeApiServer::start().await;
    for name in ["a", "b"] {
        server.create(
            "configmaps",
            json!({"metadata": {"name": name, "namespace": "default"}, "data": {"k": "v"}}),
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let stacks = ["1.32", "1.33", "latest+watch-list=false"];
    let mut running = crate::support::binary::Running::spawn(
        &kubeconfig,
        &[
            "watch",
            "cm",
            "-q",
            "-o",
            "jsonl",
            "--compare",
            &stacks.join(","),
        ],
    );
    // Each stack has synced, then each sees, through the one watch, an object made after.
    for stack in stacks {
        running.seen_or_read_until("a stack's sync", |line| {
            line.contains(&format!("\"stack\":\"{stack}\"")) && line.contains("\"synced\"")
        });
    }
    server.create(
        "configmaps",
        json!({"metadata": {"name": "c", "namespace": "default"}, "data": {"k": "v"}}),
    );
    for stack in stacks {
        running.seen_or_read_until("the new object's batch", |line| {
            line.contains(&format!("\"stack\":\"{stack}\""))
                && line.contains("\"kind\":\"batch\"")
                && line.contains("default/c")
        });
    }
    let ended = running.interrupt();
    // Without handlers the pops are compared, and a DeltaFIFO's are not a RealFIFO's.
    assert_eq!(ended.status.code(), Some(5), "{}", ended.stderr);
    let requests = server.requests();
    let on_configmaps =
        |r: &&crate::support::fake_apiserver::Request| r.path.contains("configmaps");
    let lists = requests
        .iter()
        .filter(on_configmaps)
        .filter(|r| r.is_list())
        .count();
    let watches = requests
        .iter()
        .filter(on_configmaps)
        .filter(|r| r.is_watch())
        .count();
    assert_eq!((lists, watches), (1, 1), "{requests:#?}");

    // Stacks that list differently cannot share one list.
    let out = run(
        server.write_kubeconfig(dir.path()),
        &[
            "watch",
            "cm",
            "--until-synced",
            "-q",
            "--compare",
            "1.32,latest",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--compare stacks 1.32 and latest make different initial lists"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tombstone_delivered_earlier_after_a_relist_is_named_and_exits_5() {
    let (code, stdout, stderr) =
        replay(EXPIRED, &["--handler", "h", "--compare", "1.32,latest"]).await;
    assert_eq!(code, Some(5), "{stderr}");
    assert!(
        stdout.contains(
            "handler h  1.32 │ OnDelete demo/worker-2 (tombstone) │ latest ─ (delivered 3 calls \
             earlier)\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("── handler h: same calls, different order (1 moved)\n"),
        "{stdout}"
    );
    assert!(
        stderr.contains("kubectl-deltas: the stacks differ: where, and each handler's"),
        "{stderr}"
    );
    assert!(!stderr.contains("error"), "{stderr}");

    let (code, stdout, _) = replay(
        EXPIRED,
        &["--handler", "h", "--compare", "1.32,latest", "-o", "jsonl"],
    )
    .await;
    assert_eq!(code, Some(5));
    let records = json_lines(stdout.as_bytes());
    let differences: Vec<&Value> = records
        .iter()
        .filter(|r| r["kind"] == "difference")
        .collect();
    assert_eq!(
        differences,
        [&json!({
            "kind": "difference", "resource": "pods", "subject": "handler", "name": "h",
            "key": "demo/worker-2", "difference": "order",
            "baseline": {"stack": "1.32", "did": "OnDelete demo/worker-2 (tombstone)"},
            "other": {"stack": "latest", "did": "OnDelete demo/worker-2 (tombstone)"},
            "what": "delivered 3 calls earlier",
        })]
    );
    let verdict = records.iter().find(|r| r["kind"] == "verdict").unwrap();
    assert_eq!(verdict["verdict"], "same calls, different order");
    assert_eq!(
        verdict["calls"],
        json!([{"stack": "1.32", "calls": 9}, {"stack": "latest", "calls": 9}])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stacks_told_the_same_agree_and_exit_0() {
    let (code, stdout, stderr) =
        replay(EXPIRED, &["--handler", "h", "--compare", "1.32,1.28"]).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.ends_with("── handler h: same calls\n"), "{stdout}");
    assert!(!stdout.contains("where the stacks differ"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_handlers_the_pops_are_compared_and_a_coalesced_pop_is_a_batch_difference() {
    let (code, stdout, stderr) = replay(
        "tests/recordings/coalescing.jsonl",
        &["--compare", "1.32,1.33"],
    )
    .await;
    assert_eq!(code, Some(5), "{stderr}");
    assert!(
        stdout.contains(
            "pops  1.32 │ Updated default/c │ 1.33 ─ (popped apart from the call before)\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("── pops: same calls, different batches (1 in other pops)\n"),
        "{stdout}"
    );
}

/// What handler `h` was told, call by call: what the comparison compares of a notification.
fn told(stdout: &[u8], stack: Option<&str>) -> Vec<Value> {
    json_lines(stdout)
        .into_iter()
        .filter(|r| r["kind"] == "notification" && r["handler"] == "h")
        .filter(|r| stack.is_none_or(|stack| r["stack"] == stack))
        .map(|r| {
            json!([
                r["type"],
                r["key"],
                r["tombstone"],
                r["isSync"],
                r["isInInitialList"],
                r["oldResourceVersion"],
                r["newResourceVersion"]
            ])
        })
        .collect()
}

/// Runs the binary offline with `args` to its end: its exit code and stdout.
fn run_blocking(args: &[&str]) -> (Option<i32>, Vec<u8>) {
    let out =
        crate::support::binary::output_blocking(crate::support::binary::offline_command(args));
    (out.status.code(), out.stdout)
}

/// A random recording (`other_stores_cli`'s generator) in a file of its own: the directory that
/// holds it, and its path.
fn random_recording(
    initial: u8,
    ops: &[crate::other_stores_cli::Server],
) -> (tempfile::TempDir, String) {
    let (recording, _) = crate::other_stores_cli::recording_of(initial, ops);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("random.jsonl");
    std::fs::write(&file, recording).unwrap();
    let file = file.to_str().unwrap().to_owned();
    (dir, file)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 24, ..proptest::prelude::ProptestConfig::default()
    })]

    /// On random recordings (writes, deletions, watch gaps ending in 410 and a relist), every
    /// pair of stacks is reported alike exactly when their separate runs tell the handler the
    /// same calls; and each stack of a comparison is told what it is told alone.
    #[test]
    fn the_comparison_finds_no_difference_exactly_when_separate_runs_agree(
        initial in 0u8..4,
        ops in proptest::collection::vec(crate::other_stores_cli::server_op(), 0..20),
    ) {
        let (_dir, file) = random_recording(initial, &ops);
        let file = file.as_str();
        let stacks = ["1.28", "1.32", "1.35", "latest"];
        let alone: Vec<Vec<Value>> = stacks
            .iter()
            .map(|version| {
                let (code, stdout) = run_blocking(&[
                    "replay", file, "-q", "--handler", "h", "-o", "jsonl", "--client-go", version,
                ]);
                assert_eq!(code, Some(0));
                told(&stdout, None)
            })
            .collect();
        for i in 0..stacks.len() {
            for j in i + 1..stacks.len() {
                let pair = format!("{},{}", stacks[i], stacks[j]);
                let (code, stdout) = run_blocking(&[
                    "replay", file, "-q", "--handler", "h", "-o", "jsonl", "--compare", &pair,
                ]);
                proptest::prop_assert_eq!(
                    code == Some(0),
                    alone[i] == alone[j],
                    "{}: exit {:?}",
                    pair,
                    code
                );
                proptest::prop_assert!(code == Some(0) || code == Some(5), "{pair}: {code:?}");
                proptest::prop_assert_eq!(&told(&stdout, Some(stacks[i])), &alone[i]);
                proptest::prop_assert_eq!(&told(&stdout, Some(stacks[j])), &alone[j]);
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_summary_shows_each_stack_side_by_side_without_a_total() {
    let file = path(EXPIRED);
    let out = run_offline(
        &[
            "replay",
            &file,
            "--handler",
            "h",
            "--compare",
            "1.32,latest",
        ],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(5));
    let summary = stderr(&out);
    let header = summary.lines().nth(1).unwrap();
    assert!(
        header.contains("pods [1.32]") && header.contains("pods [latest]"),
        "{summary}"
    );
    assert!(!header.contains(" all "), "{summary}");
    assert!(
        summary.contains("compare 1.32 vs latest: pods: handler h: same calls, different order"),
        "{summary}"
    );
}

/// What controller `web` did, reconcile by reconcile: what the comparison compares of one.
fn reconciled(stdout: &[u8], stack: Option<&str>) -> Vec<Value> {
    json_lines(stdout)
        .into_iter()
        .filter(|r| r["kind"] == "reconcile" && r["controller"] == "web")
        .filter(|r| stack.is_none_or(|stack| r["stack"] == stack))
        .map(|r| json!([r["key"], r["startedAt"], r["resourceVersion"], r["result"]]))
        .collect()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 12, ..proptest::prelude::ProptestConfig::default()
    })]

    /// With a controller, a stack may change the controllers (`queue=priority`) rather than the
    /// informer: every pair is reported alike exactly when the separate runs tell the handler
    /// and the controller's handler the same calls and the controller reconciles the same keys,
    /// reading the same resourceVersions, at the same times.
    #[test]
    fn with_a_controller_no_difference_exactly_when_separate_runs_agree(
        initial in 0u8..4,
        ops in proptest::collection::vec(crate::other_stores_cli::server_op(), 0..15),
    ) {
        let (_dir, file) = random_recording(initial, &ops);
        let file = file.as_str();
        let controller = "web,reconcile=5ms";
        let stacks: [(&str, &[&str]); 3] = [
            ("1.32", &["--controller", controller]),
            ("latest", &["--controller", controller, "--client-go", "latest"]),
            ("queue=priority", &["--controller", "web,reconcile=5ms,queue=priority"]),
        ];
        let alone: Vec<(Vec<Value>, Vec<Value>)> = stacks
            .iter()
            .map(|(_, args)| {
                let mut all = vec!["replay", file, "-q", "--handler", "h", "-o", "jsonl"];
                all.extend_from_slice(args);
                let (code, stdout) = run_blocking(&all);
                assert_eq!(code, Some(0));
                (told(&stdout, None), reconciled(&stdout, None))
            })
            .collect();
        for i in 0..stacks.len() {
            for j in i + 1..stacks.len() {
                let pair = format!("{},{}", stacks[i].0, stacks[j].0);
                let (code, stdout) = run_blocking(&[
                    "replay", file, "-q", "--handler", "h", "-o", "jsonl", "--controller",
                    controller, "--compare", &pair,
                ]);
                proptest::prop_assert!(code == Some(0) || code == Some(5), "{pair}: {code:?}");
                proptest::prop_assert_eq!(code == Some(0), alone[i] == alone[j], "{}", pair);
                let compared = |stack| (told(&stdout, Some(stack)), reconciled(&stdout, Some(stack)));
                proptest::prop_assert_eq!(&compared(stacks[i].0), &alone[i]);
                proptest::prop_assert_eq!(&compared(stacks[j].0), &alone[j]);
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_each_stack_left_unfinished_names_its_stack() {
    let text = std::fs::read_to_string(path(EXPIRED)).unwrap();
    let mut kept = Vec::new();
    for line in text.lines() {
        kept.push(line);
        if line.contains("\"code\":410") {
            break;
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.jsonl");
    std::fs::write(&cut, kept.join("\n") + "\n").unwrap();
    let cut = cut.to_str().unwrap();
    let args = ["--handler", "h", "--compare", "1.32,latest"];
    let (_, stdout, _) = replay(cut, &[&args[..], &["-o", "jsonl"]].concat()).await;
    let ended: Vec<Value> = json_lines(stdout.as_bytes())
        .into_iter()
        .filter(|r| r["kind"] == "ended")
        .map(|r| json!([r["stack"], r["resource"]]))
        .collect();
    assert_eq!(ended, [json!(["1.32", "pods"]), json!(["latest", "pods"])]);
    let (_, timeline, _) = replay(cut, &args).await;
    for stack in ["1.32", "latest"] {
        assert!(
            timeline
                .lines()
                .any(|l| l.starts_with(&format!("{stack} │ "))
                    && l.contains("── ended during the relist after 410")),
            "{timeline}"
        );
    }
}

const RUNTIMES: &str = "docs/recordings/controller-runtimes.jsonl";

/// `runtime=kube` as a stack: every `--controller` once on client-go and once on kube-runtime.
/// The one difference is the deletion kube-runtime never reconciles; the client-go controller's
/// handler, which a kube-runtime controller does not have, is not compared.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runtime_stack_compares_the_reconciles_of_both_runtimes() {
    let args = [
        "--view",
        "reconciles",
        "--controller",
        "web",
        "--compare",
        "runtime=client-go,runtime=kube",
    ];
    let (code, stdout, stderr) = replay(RUNTIMES, &args).await;
    assert_eq!(code, Some(5), "{stderr}");
    assert!(
        stdout.contains("runtime=kube │ ") && stdout.contains("⇒ web(kube)"),
        "{stdout}"
    );
    // kube-runtime's notes are the kube stack's rows.
    let notes: Vec<&str> = (stdout.lines())
        .filter(|l| l.contains("── kube-runtime:") || l.contains("(kube): kube-runtime:"))
        .collect();
    assert_eq!(notes.len(), 2, "{stdout}");
    assert!(
        notes.iter().all(|l| l.starts_with("runtime=kube │ ")),
        "{notes:#?}"
    );
    let differences: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("── where the stacks differ"))
        .skip(1)
        .collect();
    assert_eq!(
        differences,
        [
            "controller web  runtime=client-go │ reconcile demo/batch (read nothing: gone) ok │ \
             runtime=kube ─ (the deletion never reconciled)",
            "── controller web: different calls (1 missing)",
        ],
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runtime_stack_that_would_drop_a_setting_is_refused_with_a_sentence() {
    for (args, says) in [
        (
            &[
                "--controller",
                "web,resync=1m",
                "--compare",
                "1.32,runtime=kube",
            ][..],
            "stack \"runtime=kube\" of --compare runs --controller web on the other runtime, \
             which has no resync=",
        ),
        (
            &[
                "--controller",
                "web",
                "--compare",
                "1.32,queue=priority+runtime=kube",
            ][..],
            "gives queue= and runtime=kube",
        ),
        (
            &["--controller", "web", "--compare", "1.32,runtime=rust"][..],
            "runtime=\"rust\" in stack \"runtime=rust\": expected client-go or kube",
        ),
    ] {
        let (code, _, stderr) = replay(RUNTIMES, args).await;
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

/// `owns=` under `--compare`, with the Deployments and their ReplicaSets replayed together: each
/// stack's controller runs on the Deployments only and reconciles `demo/web` when its ReplicaSet
/// changes, at the same instants as without `--compare` (README's "Go or Rust"); the owned
/// ReplicaSets' handler of the client-go controller, which kube-runtime has not, is not compared.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owned_resources_are_compared_on_each_stacks_own_lanes() {
    let replicasets = path("docs/recordings/controller-runtimes-replicasets.jsonl");
    let args = [
        replicasets.as_str(),
        "--view",
        "reconciles",
        "--match",
        "demo/web",
        "--controller",
        "web,owns=rs",
        "--compare",
        "runtime=client-go,runtime=kube",
    ];
    let (code, stdout, stderr) = replay(RUNTIMES, &args).await;
    assert_eq!(code, Some(5), "{stderr}");
    let owner_reconciles = |stack: &str| -> Vec<String> {
        (stdout.lines())
            .filter(|l| l.starts_with(&format!("{stack} │ ")) && l.contains("owner of"))
            .map(|l| l.split_whitespace().nth(2).unwrap_or_default().to_owned())
            .collect()
    };
    for stack in ["runtime=client-go", "runtime=kube"] {
        let times = owner_reconciles(stack);
        assert!(
            times.contains(&"09:00:02.001".to_owned())
                && times.contains(&"09:00:04.000".to_owned()),
            "{stack}: {times:?}\n{stdout}"
        );
        assert!(
            !stdout.contains(&format!("{stack} │ 09:00:00.000      replicasets.apps  ⇒")),
            "{stack}: a reconcile on the owned lane\n{stdout}"
        );
    }
    let differences: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("── where the stacks differ"))
        .skip(1)
        .collect();
    assert_eq!(
        differences,
        [
            "controller web  runtime=client-go │ reconcile demo/batch (read nothing: gone) ok │ \
             runtime=kube ─ (the deletion never reconciled)",
            "── deployments.apps  controller web: different calls (1 missing)",
        ],
        "{stdout}"
    );
}
