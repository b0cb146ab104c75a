//! The layers of docs/design.md, checked: data flows from `source` into `cache` and out through
//! `render`, so no module names one that sits above it in that flow. A path that breaks the rule
//! fails here with the file and line, before it becomes a loop that a newcomer has to untangle.
//!
//! Every way a Rust file can name another module counts: `crate::a::…`, a group
//! `crate::{a, b::c}`, `super::…` (resolved from the file's own place in the tree, so
//! `super::super::source` from `src/cache/queue/` is `crate::source`), and, in the binary's
//! modules (`cli/`, `cmd/`, `main.rs`), the library as `kubectl_deltas::…`. Comments are left
//! out; doc links in them are not dependencies.

use std::path::{Path, PathBuf};

/// A crate's top-level module, as a layer: its name and the crate it lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Crate {
    Lib,
    Bin,
}

/// Which modules each layer must not name, and why. A layer is a top-level module, or a folder
/// below one (`cmd/pipeline`). A rule names modules of the same crate, or, from the binary,
/// modules of the library.
const RULES: &[(&str, &[&str], &str)] = &[
    (
        "cache",
        &["source", "render", "query"],
        "the informer library knows neither where objects come from nor who shows them",
    ),
    (
        "object",
        &["cache", "source", "render", "query"],
        "the cached object is the bottom layer",
    ),
    (
        "source",
        &["render", "query"],
        "sources feed the cache; they never render",
    ),
    (
        "render",
        &["source"],
        "renderers know nothing of HTTP, clusters or discovery",
    ),
    (
        "cli",
        &["cmd"],
        "flags are parsed and checked before any command runs",
    ),
    (
        "cmd/pipeline",
        &["cli"],
        "the pipeline runs a resolved plan (cmd/plan) and never sees a flag",
    ),
];

/// External crates a layer must not name, and why.
const FORBIDDEN_CRATES: &[(&str, &[&str], &str)] = &[
    (
        "cache",
        &[
            "hyper",
            "http",
            "reqwest",
            "owo_colors",
            "comfy_table",
            "indicatif",
            "clap",
        ],
        "the informer library does no HTTP and knows no terminal",
    ),
    (
        "render",
        &["hyper", "http", "reqwest", "kube_client"],
        "renderers know nothing of HTTP",
    ),
    (
        "cmd/pipeline",
        &["clap"],
        "the pipeline runs a resolved plan (cmd/plan) and never sees a flag",
    ),
];

/// The modules of the binary crate (`src/main.rs` declares them); every other folder or file of
/// `src/` belongs to the library.
const BIN_MODULES: &[&str] = &["cli", "cmd", "log_format", "main"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file under `src/` (`cache/queue/mod.rs` → `[cache, queue]`,
/// `cache/queue/fifo_tests.rs` → `[cache, queue, fifo_tests]`), and its crate.
fn module_of(relative: &Path) -> (Crate, Vec<String>) {
    let mut parts: Vec<String> = relative
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    let top = parts.first().map_or("main", String::as_str);
    let krate = if BIN_MODULES.contains(&top) || relative == Path::new("main.rs") {
        Crate::Bin
    } else {
        Crate::Lib
    };
    (krate, parts)
}

/// The first segment of every path a line of code names from the crate root, in `crate`,
/// `super` and `kubectl_deltas` form, resolved against `module` (the file's module path); each
/// with the crate it names. Comments are left out.
fn named_modules(line: &str, module: &[String], krate: Crate) -> Vec<(Crate, String)> {
    let code = line.split("//").next().unwrap_or("");
    let mut named = Vec::new();
    let bytes = code.as_bytes();
    let mut at = 0;
    while at < code.len() {
        let rest = &code[at..];
        let word_start =
            at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
        let (root, base): (Option<Crate>, Vec<String>) = if !word_start {
            (None, Vec::new())
        } else if rest.starts_with("crate::") {
            at += "crate::".len();
            (Some(krate), Vec::new())
        } else if rest.starts_with("kubectl_deltas::") && krate == Crate::Bin {
            at += "kubectl_deltas::".len();
            (Some(Crate::Lib), Vec::new())
        } else if rest.starts_with("super::") {
            // A `super` in a file `a/b.rs` (module a::b) names `a`; each further one goes up one.
            let mut base = module.to_vec();
            while code[at..].starts_with("super::") {
                at += "super::".len();
                base.pop();
            }
            (Some(krate), base)
        } else {
            (None, Vec::new())
        };
        let Some(root) = root else {
            at += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        for first in path_heads(&code[at..]) {
            named.push((root, base.first().cloned().unwrap_or(first)));
        }
    }
    named
}

/// The first segments of what follows a root: `a::b` → `a`; a group `{a, b::c, self}` → `a`, `b`.
fn path_heads(after: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    if let Some(group) = after.strip_prefix('{') {
        let end = group.find('}').unwrap_or(group.len());
        group[..end]
            .split(',')
            .map(ident)
            .filter(|name| !name.is_empty() && name != "self")
            .collect()
    } else {
        let name = ident(after);
        if name.is_empty() {
            Vec::new()
        } else {
            vec![name]
        }
    }
}

/// Every external crate a line of code names at the start of a path (`http::…`, `use hyper::…`).
fn named_crates<'a>(line: &'a str, crates: &[&'a str]) -> Vec<&'a str> {
    let code = line.split("//").next().unwrap_or("");
    crates
        .iter()
        .copied()
        .filter(|name| {
            code.match_indices(&format!("{name}::")).any(|(at, _)| {
                at == 0 || {
                    let before = code.as_bytes()[at - 1];
                    !(before.is_ascii_alphanumeric() || before == b'_' || before == b':')
                }
            })
        })
        .collect()
}

fn broken_rules(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut broken = Vec::new();
    for file in files {
        let relative = file.strip_prefix(src).unwrap_or(&file).to_path_buf();
        let (krate, module) = module_of(&relative);
        let Some(top) = module.first().map(String::as_str) else {
            continue;
        };
        let top = top.trim_end_matches("_tests");
        let in_layer = |rule_layer: &str| {
            let mut parts = rule_layer.split('/');
            parts.next() == Some(top)
                && parts.enumerate().all(|(i, part)| {
                    module.get(i + 1).map(|m| m.trim_end_matches("_tests")) == Some(part)
                })
        };
        let text = std::fs::read_to_string(&file).expect("readable source");
        for (n, line) in text.lines().enumerate() {
            let place = format!("{}:{}", relative.display(), n + 1);
            for (layer, forbidden, why) in RULES {
                if !in_layer(layer) {
                    continue;
                }
                // A rule of a library layer speaks of library modules; a rule of the binary's
                // (`cli`, `cmd/…`) of the binary's modules and of the library's alike.
                let binary_rule = layer
                    .split('/')
                    .next()
                    .is_some_and(|t| BIN_MODULES.contains(&t));
                for (named_crate, name) in named_modules(line, &module, krate) {
                    let same_side = named_crate == Crate::Lib || binary_rule;
                    if same_side && forbidden.contains(&name.as_str()) {
                        broken.push(format!("{place}: {layer} names {name} ({why})"));
                    }
                }
            }
            for (layer, crates, why) in FORBIDDEN_CRATES {
                if in_layer(layer) {
                    for name in named_crates(line, crates) {
                        broken.push(format!("{place}: {layer} names the crate {name} ({why})"));
                    }
                }
            }
        }
    }
    broken
}

#[test]
fn no_module_imports_a_layer_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for (layer, _, _) in RULES.iter().chain(FORBIDDEN_CRATES) {
        assert!(
            src.join(layer).is_dir() || src.join(format!("{layer}.rs")).is_file(),
            "no files for the layer {layer}"
        );
    }
    let broken = broken_rules(&src);
    assert!(broken.is_empty(), "upward imports:\n{}", broken.join("\n"));
}

fn names(line: &str, file: &str) -> Vec<String> {
    let (krate, module) = module_of(Path::new(file));
    named_modules(line, &module, krate)
        .into_iter()
        .map(|(_, name)| name)
        .collect()
}

#[test]
fn the_check_sees_a_path_in_code_and_not_in_a_comment() {
    assert_eq!(
        names(
            "use crate::source::ListerWatcher; // crate::render",
            "cache/informer/mod.rs"
        ),
        ["source"]
    );
}

#[test]
fn the_check_sees_every_member_of_a_group() {
    assert_eq!(
        names(
            "use crate::{object::Object, render::jsonl, self};",
            "cache/delta.rs"
        ),
        ["object", "render"]
    );
}

#[test]
fn the_check_resolves_super_from_the_file_s_place() {
    // `cache/queue/fifo.rs` is `cache::queue::fifo`: one `super` names `cache::queue`'s children,
    // two name `cache`'s, three the crate root's.
    assert_eq!(
        names("use super::real_fifo::X;", "cache/queue/fifo.rs"),
        ["cache"]
    );
    assert_eq!(
        names("use super::super::super::source::X;", "cache/queue/fifo.rs"),
        ["source"]
    );
    // In a `mod.rs`, `super` is the folder's parent.
    assert_eq!(names("use super::render::X;", "cache/mod.rs"), ["render"]);
}

#[test]
fn the_check_sees_the_binary_naming_the_library() {
    let (krate, module) = module_of(Path::new("cli/mod.rs"));
    assert_eq!(krate, Crate::Bin);
    assert_eq!(
        named_modules("use kubectl_deltas::source::X;", &module, krate),
        [(Crate::Lib, "source".to_owned())]
    );
    // The library has no `kubectl_deltas::` of its own to name.
    assert!(names("let x = kubectl_deltas::source::X;", "cache/mod.rs").is_empty());
}

#[test]
fn every_rule_fails_on_a_file_that_breaks_it() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let src = dir.path();
    let write = |file: &str, text: &str| {
        let path = src.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "cache/queue/fifo.rs",
        "use super::super::super::render::Timeline;\n",
    );
    write(
        "cache/store/mod.rs",
        "use crate::{object::Object, source::Kube};\n",
    );
    write("render/jsonl.rs", "fn f(_: http::Request<()>) {}\n");
    write(
        "cli/mod.rs",
        "use crate::cmd::run;\nuse kubectl_deltas::render::X;\n",
    );
    write(
        "cmd/watch.rs",
        "use kubectl_deltas::{source::Kube, render::X};\nuse crate::cli::WatchArgs;\n",
    );
    write(
        "cmd/pipeline/lane.rs",
        "use crate::cmd::plan::Plan;\nuse crate::cli::ControllerArg;\n",
    );
    write(
        "cmd/pipeline/output.rs",
        "use super::super::super::cli::exit::Exit;\nfn f(_: clap::Command) {}\n",
    );
    let broken = broken_rules(src);
    let expected = [
        "cache/queue/fifo.rs:1: cache names render",
        "cache/store/mod.rs:1: cache names source",
        "cli/mod.rs:1: cli names cmd",
        "render/jsonl.rs:1: render names the crate http",
        "cmd/pipeline/lane.rs:2: cmd/pipeline names cli",
        "cmd/pipeline/output.rs:1: cmd/pipeline names cli",
        "cmd/pipeline/output.rs:2: cmd/pipeline names the crate clap",
    ];
    for want in expected {
        assert!(
            broken.iter().any(|b| b.starts_with(want)),
            "{want} not reported in {broken:#?}"
        );
    }
    assert_eq!(broken.len(), expected.len(), "{broken:#?}");
}
