//! The `jq` examples of docs/jsonl.md, run as written on every bundled recording under the three
//! informers a user meets (`--client-go 1.32`: DeltaFIFO; `1.33`: RealFIFO; `latest`: the atomic
//! RealFIFO with its whole-list `ReplacedAll`/`SyncAll`): each must succeed, and name the same keys
//! of the recording under all three, so that a script following the docs misses nothing on
//! today's informers (a relist's tombstone, in particular).
//!
//! Each example's text is run by `bash` exactly as the doc has it. Its `kubectl deltas watch
//! RESOURCE [FLAGS]` finds, first on PATH, a `kubectl` that replays the recording instead:
//! `kubectl-deltas replay FILE --client-go V [FLAGS]`, leaving out the flags about what a cluster
//! lists (`-A`, `-n`, `-l`, `--field-selector`), which a recording has already decided. `jq` must
//! be installed (`.ci/run` installs it when it is missing).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use crate::support;

use support::binary::{offline_command, output_blocking, program};
use support::paths::{bundled, path_str};

const DOC: &str = include_str!("../../docs/jsonl.md");

/// The informers every example must agree under.
const PROFILES: [&str; 3] = ["1.32", "1.33", "latest"];

/// Examples about how a queue pops, whose keys differ by queue on purpose: one line per batch, and
/// an atomic queue's initial list is one batch of no key.
const ABOUT_THE_QUEUE: [&str; 1] = ["How many deltas each batch coalesced"];

/// `kubectl deltas watch RESOURCE [FLAGS]` → `kubectl-deltas replay $RECORDING --client-go
/// $CLIENT_GO [FLAGS]`, without the flags that choose what a cluster lists; a recipe that names its
/// own `--client-go` keeps it.
const KUBECTL: &str = r#"#!/usr/bin/env bash
set -eu
if [ "${1:-} ${2:-}" != "deltas watch" ]; then
  echo "a recipe ran kubectl $*: only 'kubectl deltas watch' is replayed" >&2
  exit 2
fi
shift 3
args=()
profile=(--client-go "$CLIENT_GO")
while [ $# -gt 0 ]; do
  case "$1" in
    -A|--all-namespaces) ;;
    -n|--namespace|-l|--selector|--field-selector) shift ;;
    --client-go) profile=(); args+=("$1") ;;
    *) args+=("$1") ;;
  esac
  shift
done
exec "$KUBECTL_DELTAS" replay "$RECORDING" "${profile[@]}" "${args[@]}"
"#;

/// One example: its comment (the first line, without `# `) and its command.
struct Recipe {
    title: String,
    command: String,
}

/// The examples of the doc's "Examples with `jq`": each is a `# comment` line followed by the
/// lines of its command.
fn recipes() -> Vec<Recipe> {
    let section = DOC
        .split("## Examples with `jq`")
        .nth(1)
        .expect("docs/jsonl.md has its examples section");
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("the examples are in a sh block");
    let mut recipes: Vec<Recipe> = Vec::new();
    let mut in_command = false;
    for line in block.lines() {
        if let Some(comment) = line.strip_prefix("# ") {
            if in_command || recipes.is_empty() {
                recipes.push(Recipe {
                    title: comment.to_owned(),
                    command: String::new(),
                });
            }
            in_command = false;
        } else if !line.trim().is_empty() {
            let recipe = recipes.last_mut().expect("a command follows its comment");
            recipe.command.push_str(line);
            recipe.command.push('\n');
            in_command = true;
        }
    }
    recipes
}

/// Every key a recording's replay pops, by the per-key deltas and items of its JSON lines.
fn keys_of(recording: &Path) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    for profile in PROFILES {
        let out = output_blocking(offline_command(&[
            "replay",
            path_str(recording),
            "-q",
            "--client-go",
            profile,
            "-o",
            "jsonl",
            "--object",
            "none",
        ]));
        assert_eq!(out.status.code(), Some(0), "{recording:?}");
        for line in support::binary::json_lines(&out.stdout) {
            let deltas = line["deltas"].as_array().cloned().unwrap_or_default();
            for value in deltas.iter().map(|d| &d["key"]).chain([&line["key"]]) {
                if let Some(key) = value.as_str() {
                    keys.insert(key.to_owned());
                }
            }
        }
    }
    keys
}

/// Runs `recipe` on `recording` under `profile`; returns its stdout.
fn run(recipe: &Recipe, bin_dir: &Path, recording: &Path, profile: &str) -> String {
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = output_blocking({
        let mut cmd = Command::new("bash");
        cmd.args(["-o", "pipefail", "-c", &recipe.command])
            .env("PATH", path)
            .env("KUBECTL_DELTAS", program())
            .env("RECORDING", recording)
            .env("CLIENT_GO", profile)
            .env_remove("KUBECONFIG")
            .env("NO_COLOR", "1")
            .env("TZ", "UTC");
        cmd
    });
    assert_eq!(
        out.status.code(),
        Some(0),
        "{:?} on {recording:?} with --client-go {profile}:\n{}\n{}",
        recipe.title,
        recipe.command,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The keys of `known` that `output` names.
fn named_keys(output: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    output
        .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '/')))
        .filter(|word| known.contains(*word))
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_jq_example_of_the_jsonl_doc_finds_the_same_keys_under_every_queue() {
    let jq = Command::new("jq").arg("--version").output();
    assert!(
        jq.is_ok_and(|out| out.status.success()),
        "this test runs the jq examples of docs/jsonl.md: install jq (apt-get install jq)"
    );
    let bin_dir = tempfile::tempdir().unwrap();
    let kubectl = bin_dir.path().join("kubectl");
    std::fs::write(&kubectl, KUBECTL).unwrap();
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&kubectl, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let recipes = recipes();
    assert!(recipes.len() >= 10, "{} examples found", recipes.len());
    let recordings: Vec<_> = std::fs::read_dir(bundled("x").parent().unwrap())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert!(recordings.len() >= 6, "{recordings:?}");

    let mut tombstones_found = 0;
    std::thread::scope(|scope| {
        let runs: Vec<_> = recordings
            .iter()
            .map(|recording| {
                let (recipes, bin_dir) = (&recipes, bin_dir.path());
                scope.spawn(move || {
                    let known = keys_of(recording);
                    let mut found = 0;
                    for recipe in recipes {
                        let outputs: Vec<(&str, BTreeSet<String>)> = PROFILES
                            .iter()
                            .map(|profile| {
                                let output = run(recipe, bin_dir, recording, profile);
                                (*profile, named_keys(&output, &known))
                            })
                            .collect();
                        if recipe.title.starts_with("Keys deleted as a tombstone") {
                            found += outputs[0].1.len();
                        }
                        if ABOUT_THE_QUEUE.iter().any(|t| recipe.title.starts_with(t)) {
                            continue;
                        }
                        for (profile, keys) in &outputs[1..] {
                            assert_eq!(
                                keys, &outputs[0].1,
                                "{:?} on {recording:?}: --client-go {profile} names other keys \
                                 than --client-go {}",
                                recipe.title, outputs[0].0
                            );
                        }
                    }
                    found
                })
            })
            .collect();
        for run in runs {
            tombstones_found += run.join().unwrap();
        }
    });
    // expired-watch.jsonl's relist finds demo/worker-2 gone: the recipe must see it.
    assert!(tombstones_found >= 1, "no example found a tombstone");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_atomic_relist_says_per_key_what_it_did_with_the_tombstone() {
    // expired-watch.jsonl: demo/worker-2 was deleted during the watch gap; the relist of an atomic
    // queue is one ReplacedAll batch, followed by one item per key.
    let path = bundled("expired-watch");
    let out = support::binary::run_offline(
        &[
            "replay",
            path_str(&path),
            "-q",
            "--client-go",
            "latest",
            "-o",
            "jsonl",
            "--object",
            "meta",
        ],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(0));
    let lines = support::binary::json_lines(&out.stdout);
    let relist = lines
        .iter()
        .rposition(|l| l["kind"] == "batch" && l["deltas"][0]["type"] == "ReplacedAll")
        .expect("a ReplacedAll batch");
    let seq = &lines[relist]["seq"];
    let items: Vec<&serde_json::Value> = lines[relist + 1..]
        .iter()
        .take_while(|l| l["kind"] == "item")
        .collect();
    assert_eq!(items.len(), 4, "the tombstone and the three listed pods");
    let tombstone = items[0];
    assert_eq!(tombstone["seq"], *seq);
    assert_eq!(tombstone["key"], "demo/worker-2");
    assert_eq!(tombstone["type"], "Deleted");
    assert_eq!(tombstone["change"], "deleted");
    assert_eq!(tombstone["tombstone"], true);
    assert_eq!(tombstone["wholeList"], "ReplacedAll");
    // Its last known state, under --object meta.
    assert_eq!(tombstone["object"]["metadata"]["name"], "worker-2");
    let changes: Vec<(&str, &str)> = items[1..]
        .iter()
        .map(|i| (i["key"].as_str().unwrap(), i["change"].as_str().unwrap()))
        .collect();
    assert!(changes.contains(&("demo/worker-4", "added")), "{changes:?}");
}
