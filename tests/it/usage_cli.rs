//! Bad input through the binary: selectors checked before the cluster is contacted, the rules of
//! `record`'s file (created on the first successful answer, never overwritten without
//! `--force`), resource arguments that do not name one resource, and the small print of `index`.

use crate::support;
use crate::support::paths::path_str;

use std::process::{Command, Output};

use serde_json::json;
use support::binary::{Running, offline_command, output_blocking, run};
use support::fake_apiserver::{FakeApiServer, Fault, Verb};

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

/// The binary with no kubeconfig anywhere: reaching for the cluster would be exit 3.
fn without_cluster(args: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd: Command = offline_command(args);
    cmd.env("KUBECONFIG", dir.path().join("missing"))
        .env("HOME", dir.path())
        .env_remove("KUBERNETES_SERVICE_HOST");
    output_blocking(cmd)
}

async fn server_with_a_configmap() -> (FakeApiServer, tempfile::TempDir, std::path::PathBuf) {
    let server = FakeApiServer::start().await;
    server.create(
        "configmaps",
        json!({"metadata": {"name": "a", "namespace": "default"}}),
    );
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    (server, dir, kubeconfig)
}

#[test]
fn malformed_selectors_are_usage_errors_before_any_request() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rec.jsonl");
    for (args, says) in [
        (
            &["watch", "cm", "-l", "!!!"][..],
            r#"invalid value '!!!' for '--selector <SELECTOR>': found "!" where a label key was expected"#,
        ),
        (
            &["index", "cm", "--by", "namespace", "-l", "app in web"],
            r#"found "web" after the operator of "app" where "(" was expected"#,
        ),
        (
            &["watch", "cm", "-l", "app=web,Tier!=-db"],
            r#"the value "-db" of "Tier" is not a label value"#,
        ),
        (
            &["watch", "cm", "--field-selector", "status.phase"],
            r#""status.phase" has no operator: a term is FIELD=VALUE, FIELD==VALUE or FIELD!=VALUE"#,
        ),
        (
            &["record", "cm", "-f", path_str(&file), "-l", "a/b/c"],
            r#"the label key "a/b/c" has more than one "/""#,
        ),
    ] {
        let out = without_cluster(args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    assert!(!file.exists());
}

#[test]
fn record_takes_one_resource() {
    let out = without_cluster(&["record", "cm,secrets", "-f", "-"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(r#"record takes one resource per recording, not "cm,secrets""#),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_creates_its_file_only_once_the_server_has_answered() {
    let (server, dir, kubeconfig) = server_with_a_configmap().await;
    // A field the server does not support: 400 at the first list.
    let file = dir.path().join("refused.jsonl");
    let args = [
        "record",
        "cm",
        "--field-selector",
        "spec.colour=red",
        "-f",
        path_str(&file),
    ];
    let out = run(kubeconfig.clone(), &args).await;
    // The flags are wrong: a usage error.
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("not a known field selector"));
    assert!(!file.exists(), "{:?}", std::fs::read_to_string(&file));

    // Forbidden: an existing recording is kept as it was, even with --force.
    let kept = dir.path().join("kept.jsonl");
    std::fs::write(&kept, "the old recording\n").unwrap();
    server.inject(Fault::status(403).on(Verb::List));
    let args = ["record", "cm", "--force", "-f", path_str(&kept)];
    let out = run(kubeconfig.clone(), &args).await;
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(&kept).unwrap(),
        "the old recording\n"
    );

    // A file that cannot be created ends the recording at the first success, saying so.
    server.clear_faults();
    let nowhere = dir.path().join("no-such-dir").join("rec.jsonl");
    let out = run(
        kubeconfig.clone(),
        &["record", "cm", "-f", path_str(&nowhere)],
    )
    .await;
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "kubectl-deltas: error: cannot create the recording {}: ",
            nowhere.display()
        )),
        "{err}"
    );

    // Once the list succeeds, the file holds the header and the list.
    let args = [
        "record",
        "cm",
        "-q",
        "--force",
        "--duration",
        "300ms",
        "-f",
        path_str(&kept),
    ];
    let out = run(kubeconfig, &args).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let recording = std::fs::read_to_string(&kept).unwrap();
    let lines: Vec<&str> = recording.lines().collect();
    assert!(lines[0].starts_with(r#"{"kind":"header""#), "{recording}");
    assert!(lines[1].contains(r#""type":"LIST""#), "{recording}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_never_overwrites_a_file_without_force() {
    let (server, dir, kubeconfig) = server_with_a_configmap().await;
    let file = dir.path().join("precious.jsonl");
    std::fs::write(&file, "precious\n").unwrap();
    let out = run(kubeconfig, &["record", "cm", "-f", path_str(&file)]).await;
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "{} already exists; pass --force to overwrite it",
            file.display()
        )),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "precious\n");
    // Refused before anything was asked of the cluster.
    assert!(server.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_quiet_leaves_stderr_to_errors() {
    let (_server, _dir, kubeconfig) = server_with_a_configmap().await;
    let args = ["index", "cm", "--by", "label:app"];
    let out = run(kubeconfig.clone(), &args).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        "kubectl-deltas: note: none of the configmaps in namespace \"default\" has a value under \
         label:app (1 object listed)\n"
    );
    let out = run(kubeconfig, &[&args[..], &["-q"]].concat()).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_says_when_it_cannot_write_its_output() {
    let (_server, _dir, kubeconfig) = server_with_a_configmap().await;
    let mut cmd = support::binary::command(&kubeconfig, &["index", "cm", "--by", "namespace"]);
    cmd.stdout(std::fs::File::create("/dev/full").unwrap())
        .stderr(std::process::Stdio::piped());
    let out = tokio::task::spawn_blocking(move || Running::with_stdio(cmd).finish())
        .await
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with("kubectl-deltas: error: cannot write the output: "),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_count_of_one_is_singular() {
    let (_server, _dir, kubeconfig) = server_with_a_configmap().await;
    let out = run(kubeconfig.clone(), &["watch", "cm", "--until-synced"]).await;
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("(1 batch)"), "{err}");
    assert!(text(&out.stdout).contains("HasSynced after 1 batch,"));

    let args = ["index", "cm", "--by", "namespace", "--value", "other"];
    let out = run(kubeconfig, &args).await;
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("(the index has 1 value; list them"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_arguments_that_name_nothing_say_why() {
    let (_server, _dir, kubeconfig) = server_with_a_configmap().await;
    for (arg, says) in [
        (
            "configmap.v1",
            r#"the server doesn't have a resource type "configmap" in API group "v1" ("configmap.v1" reads as RESOURCE.GROUP; a version goes in RESOURCE.VERSION.GROUP); did you mean "configmap" or "configmap.v1."?"#,
        ),
        (
            "deployments.v1beta1.apps",
            r#"the server doesn't serve deployments.apps at version "v1beta1"; it serves v1 (e.g. "deployments.v1.apps")"#,
        ),
    ] {
        let out = run(kubeconfig.clone(), &["watch", arg, "--until-synced"]).await;
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{arg}: {err}");
        assert_eq!(err, format!("kubectl-deltas: error: {says}\n"));
    }
    // What it suggests works.
    let out = run(
        kubeconfig,
        &["watch", "configmap.v1.", "--until-synced", "-q"],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn a_mistyped_subcommand_is_suggested_not_watched() {
    for (args, typed, meant) in [
        (&["replya", "rec.jsonl"][..], "replya", "replay"),
        (&["indx", "pods", "--by", "owner"], "indx", "index"),
        (&["-v", "wacth", "pods"], "wacth", "watch"),
    ] {
        let out = without_cluster(args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(
            err,
            format!(
                "kubectl-deltas: error: unknown subcommand {typed:?}; did you mean {meant:?}? \
                 (to watch a resource of that name, write `kubectl deltas watch {typed}`)\n"
            ),
            "{args:?}"
        );
    }
    // Short resource names are not taken for typos: `ep` is two edits from `help`, `rc` from
    // nothing near; they still mean `watch`, which here needs the (missing) kubeconfig.
    for resource in ["ep", "rc", "pods", "records-not-close"] {
        let out = without_cluster(&[resource]);
        assert_eq!(
            out.status.code(),
            Some(3),
            "{resource}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn usage_errors_start_as_the_tools_own_errors() {
    let out = without_cluster(&["watch", "pods", "--no-such-flag"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.starts_with("kubectl-deltas: error: unexpected argument '--no-such-flag'"),
        "{err}"
    );
}
