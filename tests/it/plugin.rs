//! kubectl-deltas as a kubectl plugin: the completion scripts it prints and ships, the answers of
//! its hidden `__complete` command (cobra's protocol, which kubectl speaks with plugins), the
//! `kubectl_complete-deltas` script that kubectl runs, `--version` and the krew manifest.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use clap::ValueEnum;
use clap_complete::{Generator, Shell};
use serde_json::{Value, json};
use support::binary::output_blocking as output;
use support::fake_apiserver::FakeApiServer;

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-deltas");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A clean environment for the binary: no kubeconfig but the one given, no log filter, a cache
/// directory of the test's own.
fn command(program: impl AsRef<std::ffi::OsStr>, cache: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_remove("RUST_BACKTRACE")
        .env_remove("KUBECONFIG")
        .env_remove("RUST_LOG")
        .env("XDG_CACHE_HOME", cache)
        .env("HOME", cache)
        // The discovery cache in the default place, `$HOME/.kube/cache`.
        .env_remove("KUBECACHEDIR")
        // The default half second is for people at a shell; a loaded test machine needs longer.
        .env("KUBECTL_DELTAS_COMPLETION_TIMEOUT", "20s");
    cmd
}

/// An answer of `__complete`, checked for what every answer must be: exit 0, nothing on stderr,
/// and a last line `:<directive>`.
#[derive(Debug)]
struct Answer {
    /// The candidates without their descriptions.
    values: Vec<String>,
    /// The lines as printed, `value<TAB>description`.
    lines: Vec<String>,
    directive: u32,
}

fn answer(out: Output) -> Answer {
    let stdout = String::from_utf8(out.stdout).expect("UTF-8");
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        out.stderr.is_empty(),
        "completion wrote to stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lines: Vec<String> = stdout.lines().map(str::to_owned).collect();
    let last = lines.pop().expect("an answer");
    let directive = last
        .strip_prefix(':')
        .and_then(|d| d.parse().ok())
        .unwrap_or_else(|| panic!("no directive line at the end: {stdout}"));
    let values = lines
        .iter()
        .map(|l| l.split('\t').next().unwrap().to_owned())
        .collect();
    Answer {
        values,
        lines,
        directive,
    }
}

/// `kubectl-deltas __complete -- WORDS…`, as the shipped script runs it.
fn complete_in(cache: &Path, words: &[&str]) -> Answer {
    let mut cmd = command(BIN, cache);
    cmd.arg("__complete").arg("--").args(words);
    answer(output(cmd))
}

fn complete(words: &[&str]) -> Answer {
    let cache = tempfile::tempdir().unwrap();
    complete_in(cache.path(), words)
}

const NO_SPACE: u32 = 2;
const NO_FILE_COMP: u32 = 4;
const KEEP_ORDER: u32 = 32;

#[test]
fn the_completion_command_prints_the_committed_scripts() {
    let cache = tempfile::tempdir().unwrap();
    for shell in Shell::value_variants() {
        let mut cmd = command(BIN, cache.path());
        cmd.args(["completion", &shell.to_string()]);
        let out = output(cmd);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let file = Path::new(ROOT)
            .join("completions")
            .join(shell.file_name("kubectl-deltas"));
        let committed = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(
            out.stdout == committed,
            "`kubectl-deltas completion {shell}` differs from {}; regenerate with \
             UPDATE_GENERATED=1 cargo test --bin kubectl-deltas generated_files",
            file.display()
        );
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(
            !script.contains("__complete"),
            "{shell} offers the hidden command"
        );
    }
}

/// The generated bash script, run by bash as on a TAB.
#[cfg(unix)]
#[test]
fn the_bash_script_completes_subcommands_flags_and_values() {
    let script = Path::new(ROOT).join("completions/kubectl-deltas.bash");
    let reply = |words: &[&str]| {
        let cword = words.len() - 1;
        let (cur, prev) = (words[cword], words[cword - 1]);
        let program = format!(
            "source \"$0\"; COMP_WORDS=({}); COMP_CWORD={cword}; \
             _kubectl__deltas kubectl-deltas '{cur}' '{prev}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            words
                .iter()
                .map(|w| format!("'{w}'"))
                .collect::<Vec<_>>()
                .join(" ")
        );
        let mut bash = Command::new("bash");
        bash.args(["-c", &program]).arg(&script);
        let out = output(bash);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(reply(&["kubectl-deltas", "wa"]), ["watch"]);
    assert_eq!(
        reply(&["kubectl-deltas", "watch", "--fi"]),
        ["--file", "--field-selector", "--fifo"]
    );
    assert_eq!(
        reply(&["kubectl-deltas", "index", "pods", "-o", ""]),
        ["table", "wide", "json", "yaml", "jsonl", "name"]
    );
}

#[test]
fn subcommands_complete_without_the_hidden_ones() {
    let answer = complete(&[""]);
    for sub in ["watch", "index", "record", "replay", "completion"] {
        assert!(answer.values.contains(&sub.to_owned()), "{answer:?}");
    }
    assert!(
        !answer.values.iter().any(|v| v.starts_with("__")),
        "{answer:?}"
    );
    assert_eq!(answer.directive, NO_FILE_COMP);
    assert!(
        answer
            .lines
            .contains(&"index\tBuild the informer cache once and answer an Indexer query".into()),
        "{answer:?}"
    );

    assert_eq!(complete(&["re"]).values, ["record", "replay"]);
    // Global flags before the subcommand, as kubectl passes them, are not taken for ours.
    assert_eq!(complete(&["-v", "--color", "never", "w"]).values, ["watch"]);
}

#[test]
fn flags_complete_per_subcommand_and_only_once_unless_repeatable() {
    let answer = complete(&["watch", "--fi"]);
    assert_eq!(answer.values, ["--file", "--field-selector", "--fifo"]);

    let all = complete(&["record", "pods", "-"]).values;
    for flag in [
        "--file",
        "-f",
        "--duration",
        "--namespace",
        "-n",
        "--color",
        "--help",
    ] {
        assert!(all.contains(&flag.to_owned()), "{flag} missing: {all:?}");
    }
    assert!(
        !all.contains(&"--output".to_owned()),
        "record has no -o: {all:?}"
    );

    let after = complete(&["watch", "pods", "--fifo", "real", "--index", "owner", "--"]).values;
    assert!(!after.contains(&"--fifo".to_owned()), "{after:?}");
    assert!(after.contains(&"--index".to_owned()), "{after:?}");
}

#[test]
fn value_enums_complete_in_their_declared_order() {
    for (words, values) in [
        (
            &["watch", "pods", "-o", ""][..],
            &["timeline", "wide", "jsonl", "json", "yaml", "html"][..],
        ),
        (&["watch", "pods", "--output=j"], &["jsonl", "json"]),
        (&["watch", "pods", "-oj"], &["-ojsonl", "-ojson"]),
        (
            &["index", "pods", "-o", ""],
            &["table", "wide", "json", "yaml", "jsonl", "name"],
        ),
        (
            &["watch", "pods", "--fifo", ""],
            &["delta", "real", "atomic", "plain"],
        ),
        (
            &["replay", "rec.jsonl", "--object", ""],
            &["full", "meta", "none"],
        ),
        (&["--color", ""], &["auto", "always", "never"]),
        (&["index", "--color", "a"], &["auto", "always"]),
        (
            &["completion", ""],
            &["bash", "elvish", "fish", "powershell", "zsh"],
        ),
    ] {
        let answer = complete(words);
        assert_eq!(answer.values, values, "{words:?}");
        assert_eq!(answer.directive, NO_FILE_COMP | KEEP_ORDER, "{words:?}");
    }
}

#[test]
fn index_specs_complete_from_the_documented_forms() {
    let answer = complete(&["index", "pods", "--by", ""]);
    assert_eq!(
        answer.values,
        [
            "namespace",
            "label:",
            "labels",
            "annotation:",
            "field:",
            "owner"
        ]
    );
    // After `label:` the user types a key: no space.
    assert_ne!(answer.directive & NO_SPACE, 0);
    let owner = complete(&["watch", "pods", "--index", "o"]);
    assert_eq!(owner.values, ["owner"]);
    assert_eq!(owner.directive & NO_SPACE, 0);
    let query = complete(&["watch", "pods", "--query", "n"]);
    assert_eq!(query.values, ["namespace="]);
}

#[test]
fn paths_are_left_to_the_shell() {
    for words in [
        &["replay", ""][..],
        &["record", "pods", "-f", ""],
        &["watch", "pods", "--kubeconfig", ""],
    ] {
        let answer = complete(words);
        assert!(answer.values.is_empty(), "{words:?}: {answer:?}");
        assert_eq!(answer.directive, 0, "{words:?}: file names");
    }
}

const KUBECONFIG: &str = r#"
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster: { server: "https://127.0.0.1:1" }
- name: prod-cluster
  cluster: { server: "https://127.0.0.1:1" }
contexts:
- name: dev
  context: { cluster: dev-cluster, user: alice, namespace: team-a }
- name: prod
  context: { cluster: prod-cluster, user: bob }
- name: prod-eu
  context: { cluster: prod-cluster, user: bob }
users:
- name: alice
  user: { token: a }
- name: bob
  user: { token: b }
"#;

#[test]
fn contexts_clusters_and_users_come_from_the_kubeconfig_even_when_the_cluster_is_unreachable() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("config");
    std::fs::write(&kubeconfig, KUBECONFIG).unwrap();
    let path = kubeconfig.to_str().unwrap();

    let contexts = complete(&["watch", "pods", "--kubeconfig", path, "--context", ""]);
    assert_eq!(contexts.values, ["dev", "prod", "prod-eu"]);
    assert_eq!(
        contexts.lines[0],
        "dev\tcluster dev-cluster, namespace team-a, current"
    );
    assert_eq!(
        complete(&["index", "--kubeconfig", path, "--context=prod"]).values,
        ["prod", "prod-eu"]
    );
    assert_eq!(
        complete(&["watch", "--kubeconfig", path, "--cluster", ""]).values,
        ["dev-cluster", "prod-cluster"]
    );
    assert_eq!(
        complete(&["record", "--kubeconfig", path, "--user", ""]).values,
        ["alice", "bob"]
    );

    // $KUBECONFIG, as kubectl reads it.
    let cache = tempfile::tempdir().unwrap();
    let mut cmd = command(BIN, cache.path());
    cmd.env("KUBECONFIG", &kubeconfig)
        .args(["__complete", "--", "watch", "--context", "d"]);
    assert_eq!(answer(output(cmd)).values, ["dev"]);

    // The cluster cannot be reached: no resources, no namespaces, and no word about it.
    let resources = complete(&["watch", "--kubeconfig", path, ""]);
    assert!(resources.values.is_empty(), "{resources:?}");
    assert_eq!(resources.directive, NO_FILE_COMP);
    let namespaces = complete(&["watch", "pods", "--kubeconfig", path, "-n", ""]);
    assert!(namespaces.values.is_empty(), "{namespaces:?}");

    // Nor when the kubeconfig is missing or broken.
    let missing = complete(&[
        "watch",
        "--kubeconfig",
        "/nonexistent/config",
        "--context",
        "",
    ]);
    assert!(missing.values.is_empty());
    std::fs::write(&kubeconfig, "contexts: [ {").unwrap();
    let broken = complete(&["watch", "--kubeconfig", path, "--context", ""]);
    assert!(broken.values.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_and_namespaces_come_from_the_cluster_and_are_cached() {
    let server = FakeApiServer::start().await;
    for name in ["team-a", "team-b"] {
        server.create("namespaces", json!({"metadata": {"name": name}}));
    }
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    let cache = tempfile::tempdir().unwrap();
    let ask = |words: Vec<String>| {
        let (kubeconfig, cache) = (kubeconfig.clone(), cache.path().to_owned());
        tokio::task::spawn_blocking(move || {
            // `kubectl deltas SUBCOMMAND --kubeconfig PATH WORDS…`
            let mut all = words;
            all.splice(1..1, ["--kubeconfig".to_owned(), path_str(&kubeconfig)]);
            let all: Vec<&str> = all.iter().map(String::as_str).collect();
            complete_in(&cache, &all)
        })
    };
    let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();

    let resources = ask(words(&["watch", ""])).await.unwrap();
    for name in ["pods", "configmaps", "namespaces", "deployments.apps"] {
        assert!(
            resources.values.contains(&name.to_owned()),
            "{name}: {resources:?}"
        );
    }
    assert!(
        resources.lines.contains(&"pods\tPod".to_owned()),
        "{resources:?}"
    );
    let listed = ask(words(&["watch", "pods,configmaps,dep"])).await.unwrap();
    assert_eq!(listed.values, ["pods,configmaps,deployments.apps"]);
    let one = ask(words(&["index", "dep"])).await.unwrap();
    assert_eq!(one.values, ["deployments.apps"], "index takes one resource");

    let namespaces = ask(words(&["watch", "pods", "-n", "team"])).await.unwrap();
    assert_eq!(namespaces.values, ["team-a", "team-b"]);

    // Within the minute, the answers come from the cache, not from the server.
    server.create("namespaces", json!({"metadata": {"name": "team-c"}}));
    let requests = server.requests().len();
    let cached = ask(words(&["record", "-n", "team"])).await.unwrap();
    assert_eq!(cached.values, ["team-a", "team-b"]);
    let again = ask(words(&["watch", "p"])).await.unwrap();
    assert!(again.values.contains(&"pods".to_owned()), "{again:?}");
    assert_eq!(server.requests().len(), requests, "the cache was not used");
    let files = std::fs::read_dir(cache.path().join("kubectl-deltas/completion"))
        .unwrap()
        .count();
    assert_eq!(files, 1, "namespaces");
    // It names the server, user, context and namespaces: kubectl's modes, as the discovery
    // cache's (client-go's writeCachedFile), not 0644 in 0755 directories.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| p.metadata().unwrap().permissions().mode() & 0o777;
        let dir = cache.path().join("kubectl-deltas/completion");
        for entry in std::fs::read_dir(&dir).unwrap() {
            assert_eq!(mode(&entry.unwrap().path()), 0o660);
        }
        assert_eq!(mode(&dir), 0o750);
        assert_eq!(mode(dir.parent().unwrap()), 0o750);
    }
    // Resource names come from the discovery cache the commands use, kubectl's place for it.
    let discovery = cache
        .path()
        .join(".kube/cache/discovery")
        .join(server.url().trim_start_matches("http://").replace(':', "_"))
        .join("kubectl-deltas_catalog.json");
    assert!(discovery.is_file(), "{}", discovery.display());
}

fn path_str(path: &Path) -> String {
    path.to_str().unwrap().to_owned()
}

#[cfg(unix)]
#[test]
fn kubectl_complete_deltas_is_executable_and_delegates_to_complete() {
    use std::os::unix::fs::PermissionsExt;

    let script = Path::new(ROOT).join("completions/kubectl_complete-deltas");
    let mode = std::fs::metadata(&script).unwrap().permissions().mode();
    assert_eq!(mode & 0o111, 0o111, "not executable: {mode:o}");
    // What a clone gets is the mode git recorded.
    let staged = Command::new("git")
        .args([
            "ls-files",
            "--stage",
            "--",
            "completions/kubectl_complete-deltas",
        ])
        .current_dir(ROOT)
        .output();
    if let Ok(staged) = staged
        && staged.status.success()
        && !staged.stdout.is_empty()
    {
        let line = String::from_utf8_lossy(&staged.stdout).into_owned();
        assert!(line.starts_with("100755 "), "git mode: {line}");
    }

    // kubectl runs it with the words after `kubectl deltas` and the word being completed; the
    // binary is found on PATH.
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = std::env::join_paths(std::iter::once(bin_dir.to_owned()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let cache = tempfile::tempdir().unwrap();
    for words in [
        &["watch", "pods", "-o", ""][..],
        &[""],
        // Words that `__complete` would otherwise read as its own flags.
        &["--color", ""],
        &["--help", "w"],
        &["-v", "index", "--b"],
    ] {
        let mut via_script = command(&script, cache.path());
        via_script.env("PATH", &path).args(words);
        let via_script = answer(output(via_script));
        let direct = complete_in(cache.path(), words);
        assert_eq!(via_script.lines, direct.lines, "{words:?}");
        assert_eq!(via_script.directive, direct.directive, "{words:?}");
        assert!(!via_script.lines.is_empty(), "{words:?}");
    }
    let colors = {
        let mut cmd = command(&script, cache.path());
        cmd.env("PATH", &path).args(["--color", ""]);
        answer(output(cmd)).values
    };
    assert_eq!(colors, ["auto", "always", "never"]);
}

#[test]
fn version_prints_the_crate_version_and_the_git_commit() {
    let cache = tempfile::tempdir().unwrap();
    let mut cmd = command(BIN, cache.path());
    cmd.arg("--version");
    let out = output(cmd);
    assert_eq!(out.status.code(), Some(0));
    let version = String::from_utf8(out.stdout).unwrap();
    let expected = format!("kubectl-deltas {}", env!("CARGO_PKG_VERSION"));
    assert!(version.starts_with(&expected), "{version}");
    let head = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(ROOT)
        .output();
    match head {
        Ok(head) if head.status.success() => {
            let commit = String::from_utf8(head.stdout).unwrap();
            assert_eq!(
                version.trim(),
                format!("{expected} (commit {})", commit.trim())
            );
        }
        // Not a git checkout: the version alone.
        _ => assert_eq!(version.trim(), expected),
    }
}

#[test]
fn every_subcommand_help_shows_examples() {
    let cache = tempfile::tempdir().unwrap();
    for sub in ["watch", "index", "record", "replay", "completion"] {
        for flag in ["-h", "--help"] {
            let mut cmd = command(BIN, cache.path());
            cmd.args([sub, flag]);
            let out = output(cmd);
            assert_eq!(out.status.code(), Some(0));
            let help = String::from_utf8(out.stdout).unwrap();
            let examples = help.split("Examples:").nth(1).unwrap_or_else(|| {
                panic!("`{sub} {flag}` has no examples:\n{help}");
            });
            let lines = examples
                .lines()
                .filter(|l| l.trim_start().starts_with("kubectl"))
                .count();
            assert!((2..=4).contains(&lines), "`{sub} {flag}`: {lines} examples");
        }
    }
}

#[test]
fn the_krew_manifest_covers_the_platforms_that_build() {
    let path = PathBuf::from(ROOT).join("docs/krew/deltas.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let manifest: Value = serde_saphyr::from_str(&text).expect("valid YAML");
    assert_eq!(
        manifest["apiVersion"],
        "krew.googlecontainertools.github.com/v1alpha2"
    );
    assert_eq!(manifest["kind"], "Plugin");
    assert_eq!(manifest["metadata"]["name"], "deltas");
    let spec = &manifest["spec"];
    assert_eq!(
        spec["version"],
        format!("v{}", env!("CARGO_PKG_VERSION")),
        "the manifest's version follows Cargo.toml"
    );
    for field in ["homepage", "shortDescription", "description", "caveats"] {
        assert!(
            spec[field].as_str().is_some_and(|s| !s.trim().is_empty()),
            "{field}"
        );
    }
    let mut platforms: Vec<(String, String)> = Vec::new();
    for platform in spec["platforms"].as_array().unwrap() {
        let labels = &platform["selector"]["matchLabels"];
        let (os, arch) = (
            labels["os"].as_str().unwrap().to_owned(),
            labels["arch"].as_str().unwrap().to_owned(),
        );
        assert_eq!(platform["bin"], "kubectl-deltas", "{os}/{arch}");
        let uri = platform["uri"].as_str().unwrap();
        assert!(uri.contains(&format!("_{os}_{arch}.")), "{uri}");
        assert!(platform["sha256"].is_string(), "{os}/{arch}");
        platforms.push((os, arch));
    }
    platforms.sort();
    let mut expected = Vec::new();
    // Only the platforms that build: the code is unix-only (signals, poll(2), file modes).
    for os in ["darwin", "linux"] {
        for arch in ["amd64", "arm64"] {
            expected.push((os.to_owned(), arch.to_owned()));
        }
    }
    assert_eq!(platforms, expected);
}

/// `.ci/release` packages a binary as the manifest names it, with the sha256 that the filled
/// manifest carries, reproducibly. A stand-in executable keeps the test quick: the script copies
/// whatever binary it is given.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn the_release_script_builds_the_archive_the_manifest_names_for_this_host() {
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join("stand-in");
    std::fs::write(&binary, "#!/bin/sh\necho kubectl-deltas\n").unwrap();
    std::fs::set_permissions(&binary, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let release = |out: &Path, extra: &[&str]| {
        let out = Command::new(PathBuf::from(ROOT).join(".ci/release"))
            .arg("--binary")
            .arg(&binary)
            .arg("--out")
            .arg(out)
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let (first, second) = (dir.path().join("a"), dir.path().join("b"));
    release(&first, &["--owner", "someone"]);
    release(&second, &[]);

    let name = format!(
        "kubectl-deltas_v{}_linux_amd64.tar.gz",
        env!("CARGO_PKG_VERSION")
    );
    let archive = std::fs::read(first.join(&name)).unwrap();
    assert_eq!(
        archive,
        std::fs::read(second.join(&name)).unwrap(),
        "reproducible"
    );

    // The three files, executable where they run.
    let listing = Command::new("tar")
        .args(["tzvf"])
        .arg(first.join(&name))
        .output()
        .unwrap();
    let listing = String::from_utf8(listing.stdout).unwrap();
    let entries: Vec<(&str, &str)> = listing
        .lines()
        .map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            (cols[0], *cols.last().unwrap())
        })
        .collect();
    assert_eq!(
        entries,
        [
            ("-rw-r--r--", "LICENSE"),
            ("-rwxr-xr-x", "kubectl-deltas"),
            ("-rwxr-xr-x", "kubectl_complete-deltas"),
        ]
    );

    // The checksum file and the filled manifest agree with the archive.
    let sum = Command::new("sha256sum")
        .arg(first.join(&name))
        .output()
        .unwrap();
    let sum = String::from_utf8(sum.stdout).unwrap();
    let sum = sum.split_whitespace().next().unwrap().to_owned();
    assert_eq!(
        std::fs::read_to_string(first.join(format!("{name}.sha256"))).unwrap(),
        format!("{sum}  {name}\n")
    );
    let manifest: Value =
        serde_saphyr::from_str(&std::fs::read_to_string(first.join("deltas.yaml")).unwrap())
            .unwrap();
    for platform in manifest["spec"]["platforms"].as_array().unwrap() {
        let uri = platform["uri"].as_str().unwrap();
        assert!(uri.starts_with("https://github.com/someone/"), "{uri}");
        let labels = &platform["selector"]["matchLabels"];
        if labels["os"] == "linux" && labels["arch"] == "amd64" {
            assert!(uri.ends_with(&name), "{uri}");
            assert_eq!(platform["sha256"], sum.as_str());
        } else {
            // Not built here: still the placeholder, never another platform's sum.
            assert!(
                platform["sha256"]
                    .as_str()
                    .unwrap()
                    .starts_with("SHA256_OF_"),
                "{platform}"
            );
        }
    }
}
