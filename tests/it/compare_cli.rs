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
        (
            &["--compare", "1.32,latest", "--to", "#8"],
            "--to '#8' with --compare: the session numbers the pops of every stack in one",
        ),
        (
            &["--compare", "1.32,latest", "--max-batches", "3"],
            "--max-batches 3 with --compare would end every stack once the stacks together popped",
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
    // One watch: every stack says it was sent with the timeout it was sent with.
    let timeouts: Vec<(Value, Value)> = json_lines(ended.stdout.as_bytes())
        .into_iter()
        .filter(|r| r["event"] == "watch-start")
        .map(|r| (r["stack"].clone(), r["timeoutSeconds"].clone()))
        .collect();
    assert_eq!(timeouts.len(), stacks.len(), "{timeouts:?}");
    assert!(
        timeouts
            .iter()
            .all(|(_, t)| *t == timeouts[0].1 && t.is_u64()),
        "{timeouts:?}"
    );
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
    let sent = (requests.iter().filter(on_configmaps))
        .find(|r| r.is_watch())
        .and_then(|r| r.query.get("timeoutSeconds").cloned());
    assert_eq!(sent, Some(timeouts[0].1.to_string()), "{requests:#?}");

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
    assert_eq!(
        stderr(&out).trim_end(),
        "kubectl-deltas: error: --compare stacks 1.32 and latest make different initial lists \
         (one streams it with watch-list, the other pages it), and the stacks share one list and \
         one watch: give --watch-list or --watch-list=false to make them alike"
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
    // Both stacks ended alike: the timeline says it once, as a row common to every stack.
    let (_, timeline, _) = replay(cut, &args).await;
    let ended: Vec<&str> = (timeline.lines())
        .filter(|l| l.contains("── ended during the relist after 410"))
        .collect();
    assert_eq!(ended.len(), 1, "{timeline}");
    assert!(ended[0].starts_with("         1"), "{timeline}");
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
    // The reconciles both runtimes made alike are one row each; the one only client-go made
    // is marked as its, with the other runtime's absence.
    let reconciles = |key: &str| -> Vec<&str> {
        (stdout.lines())
            .filter(|l| l.contains("⇒ web") && l.contains(&format!(" {key} ")))
            .collect()
    };
    assert_eq!(reconciles("demo/api").len(), 3, "{stdout}");
    assert!(
        (reconciles("demo/api").iter()).all(|l| l.starts_with(&" ".repeat(20))),
        "{stdout}"
    );
    let gone = reconciles("demo/batch");
    assert_eq!(gone.len(), 2, "{stdout}");
    assert!(
        gone[1].starts_with("runtime=client-go │ ")
            && gone[1].contains(" gone")
            && gone[1].ends_with("│ runtime=kube ─"),
        "{stdout}"
    );
    // kube-runtime's notes are the kube stack's rows.
    let notes: Vec<&str> = (stdout.lines())
        .filter(|l| l.contains("── kube-runtime:") || l.contains("(kube): kube-runtime:"))
        .collect();
    assert_eq!(notes.len(), 2, "{stdout}");
    assert!(
        notes.iter().all(|l| l.starts_with("runtime=kube      │ ")),
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
    // `--match demo/web` leaves out the deletion of demo/batch, where the runtimes part: on the
    // key asked about they agree.
    let (code, stdout, stderr) = replay(RUNTIMES, &args).await;
    assert_eq!(code, Some(0), "{stderr}");
    // Both runtimes reconcile the owner alike: one row each, common to both stacks.
    let owner_reconciles: Vec<&str> = (stdout.lines())
        .filter(|l| l.contains("⇒ web") && l.contains("owner of"))
        .map(|l| l.split_whitespace().next().unwrap_or_default())
        .collect();
    assert_eq!(
        owner_reconciles,
        ["09:00:00.000", "09:00:02.001", "09:00:04.000"],
        "{stdout}"
    );
    assert!(
        !stdout.contains("replicasets.apps  ⇒"),
        "a reconcile on the owned lane\n{stdout}"
    );
    assert!(
        stdout.ends_with("── deployments.apps  controller web: same calls\n"),
        "{stdout}"
    );
}

/// A wait as a pop's row writes it (`0µs`, `1.2ms`): the baseline's on a row common to every
/// stack, and only on the first row of a pop of several keys.
fn is_wait(token: &str) -> bool {
    let digits = token.trim_end_matches(|c: char| c.is_alphabetic() || c == 'µ');
    !digits.is_empty() && digits.len() < token.len() && digits.parse::<f64>().is_ok()
}

/// The timeline rows of `stack` in a session's output: every row of a session of that stack alone,
/// or, with `--compare`, the rows common to every stack and those marked as the stack's, without
/// what the side-by-side timeline takes from the baseline or adds (pop numbers, waits and buffer
/// depths; where the other stacks wrote a row), and with each run of spaces one space.
fn timeline_rows(stdout: &str, stack: Option<&str>) -> Vec<String> {
    let is_row = |row: &str| row.starts_with(|c: char| c.is_ascii_digit());
    stdout
        .lines()
        .filter_map(|line| match stack {
            None => is_row(line).then_some(line),
            Some(stack) => {
                let (mark, row) = line.split_once(" │ ").unwrap_or(("", line));
                let row = row.trim_start();
                let own = mark.trim() == stack || (mark.trim().is_empty() && line.starts_with(' '));
                (own && is_row(row)).then(|| row.split("  │ ").next().unwrap_or(row))
            }
        })
        .map(|row| {
            let mut kept = Vec::new();
            let mut tokens = row.split_whitespace();
            while let Some(token) = tokens.next() {
                if token == "buffer" || token == "waited" {
                    tokens.next();
                } else if !(is_wait(token)
                    || token.starts_with('#') && token[1..].parse::<u64>().is_ok())
                {
                    kept.push(token);
                }
            }
            kept.join(" ")
        })
        .collect()
}

/// Live, the stacks' rows are written once the stacks have caught up with each other (a moment
/// without rows), while the session runs: a handler call both stacks made, once and unmarked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_stacks_rows_are_written_side_by_side_while_the_session_runs() {
    let server = FakeApiServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let mut running = crate::support::binary::Running::spawn(
        &kubeconfig,
        &[
            "watch",
            "cm",
            "-q",
            "--handler",
            "h",
            "--compare",
            "1.32,1.33",
        ],
    );
    let common = |line: &str| line.starts_with("       ") && line.contains("handler h synced");
    running.seen_or_read_until("the handler's sync, once", common);
    server.create(
        "configmaps",
        json!({"metadata": {"name": "c", "namespace": "default"}, "data": {"k": "v"}}),
    );
    let added = |line: &str| line.contains("→ h  OnAdd  default/c");
    running.seen_or_read_until("the new object's call", added);
    let ended = running.interrupt();
    let calls: Vec<&str> = ended.stdout.lines().filter(|l| added(l)).collect();
    assert_eq!(calls.len(), 1, "{}", ended.stdout);
    assert!(calls[0].starts_with("       "), "{}", ended.stdout);
    assert_eq!(ended.status.code(), Some(0), "{}", ended.stderr);
}

/// `--match` narrows what is compared as it narrows what is shown: the tombstone 1.32 delivers
/// after the other keys' calls is no difference among one key's calls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn match_narrows_what_the_stacks_are_compared_on() {
    for key in ["demo/worker-1", "demo/worker-2"] {
        let args = ["--handler", "h", "--compare", "1.32,latest", "--match", key];
        let (code, stdout, stderr) = replay(EXPIRED, &args).await;
        assert_eq!(code, Some(0), "{key}: {stderr}\n{stdout}");
        assert!(stdout.ends_with("── handler h: same calls\n"), "{stdout}");
    }
    // The pops are compared on the deltas of the key asked about (a whole list's when it
    // lists the key).
    let args = ["--compare", "1.32,latest", "--match", "demo/worker-2"];
    let (code, stdout, _) = replay(EXPIRED, &args).await;
    assert_eq!(code, Some(5), "{stdout}");
    assert!(
        stdout.ends_with("── pops: different calls (2 missing, 1 extra)\n"),
        "{stdout}"
    );
}

/// A replay's stacks catch up with each other at the end of every turn: a paced replay writes the
/// initial list's rows side by side as it replays them, seconds before the relist.
#[test]
fn a_paced_replay_writes_each_turns_rows_side_by_side_as_it_goes() {
    let file = path(EXPIRED);
    let args = [
        "replay",
        &file,
        "-q",
        "--handler",
        "h",
        "--compare",
        "1.32,latest",
        "--speed",
        "1",
    ];
    let mut running =
        crate::support::binary::Running::start(crate::support::binary::offline_command(&args));
    running.read_until("the initial list's handler sync", |line| {
        line.starts_with("       ") && line.contains("handler h synced")
    });
    let ended = running.interrupt();
    assert!(!ended.stdout.contains("rv 1007"), "{}", ended.stdout);
    assert!(
        ended.stdout.contains("handler h synced"),
        "{}",
        ended.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_timeline_writes_common_rows_once_and_the_relists_rows_side_by_side() {
    let args = ["--handler", "h", "--compare", "1.32,latest"];
    let (code, stdout, stderr) = replay(EXPIRED, &args).await;
    assert_eq!(code, Some(5), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    let find = |what: &str| -> Vec<usize> {
        (lines.iter().enumerate())
            .filter(|(_, l)| l.contains(what))
            .map(|(i, _)| i)
            .collect()
    };
    // The relist's list and the resync of the unchanged object: once, unmarked.
    for common in [
        "── list done: 3 items, 1 page, rv 1007",
        "→ h  OnUpdate (resync)",
    ] {
        let at = find(common);
        assert_eq!(at.len(), 1, "{common}\n{stdout}");
        assert!(lines[at[0]].starts_with("         17:"), "{stdout}");
    }
    // The tombstone: first in latest's pop, last in 1.32's, each marked with where the other
    // stack delivered it.
    let deletes = find("→ h  OnDelete");
    assert_eq!(deletes.len(), 2, "{stdout}");
    assert!(
        lines[deletes[0]].starts_with("latest │ ")
            && lines[deletes[0]].ends_with("│ 1.32: 3 calls later"),
        "{stdout}"
    );
    assert!(
        lines[deletes[1]].starts_with("1.32   │ ")
            && lines[deletes[1]].ends_with("│ latest: 3 calls earlier"),
        "{stdout}"
    );
    // Nothing of either stack is lost: each stack's rows are its rows alone.
    for (stack, version) in [("1.32", "1.32"), ("latest", "latest")] {
        let (_, alone, _) = replay(EXPIRED, &["--handler", "h", "--client-go", version]).await;
        assert_eq!(
            timeline_rows(&stdout, Some(stack)),
            timeline_rows(&alone, None),
            "{stack}\n{stdout}"
        );
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 12, ..proptest::prelude::ProptestConfig::default()
    })]

    /// On random recordings, the side-by-side timeline of two stacks holds every row each stack
    /// writes alone, in its order: a row common to both once, the others marked with their stack.
    #[test]
    fn the_side_by_side_timeline_holds_each_stacks_rows_alone(
        initial in 0u8..4,
        ops in proptest::collection::vec(crate::other_stores_cli::server_op(), 0..20),
    ) {
        let (_dir, file) = random_recording(initial, &ops);
        let file = file.as_str();
        for pair in [["1.32", "latest"], ["1.28", "1.35"]] {
            let (code, stdout) = run_blocking(&[
                "replay", file, "-q", "--handler", "h", "--compare", &pair.join(","),
            ]);
            proptest::prop_assert!(code == Some(0) || code == Some(5), "{:?}: {:?}", pair, code);
            let stdout = String::from_utf8(stdout).unwrap();
            for version in pair {
                let (_, alone) = run_blocking(&[
                    "replay", file, "-q", "--handler", "h", "--client-go", version,
                ]);
                let alone = String::from_utf8(alone).unwrap();
                proptest::prop_assert_eq!(
                    timeline_rows(&stdout, Some(version)),
                    timeline_rows(&alone, None),
                    "{}\n{}",
                    version,
                    stdout
                );
            }
        }
    }
}
