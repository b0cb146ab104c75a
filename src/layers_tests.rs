//! The layers of docs/design.md, checked: data flows from `source` into `cache` and out through
//! `render`, so no module names one that sits above it in that flow. A `use` that breaks the rule
//! fails here with the file and line, before it becomes a loop that a newcomer has to untangle.

use std::path::{Path, PathBuf};

/// Which crate modules each folder (or file) of `src/` must not name, and why.
const RULES: &[(&str, &[&str], &str)] = &[
    (
        "cache",
        &["source", "cmd", "render", "cli", "query"],
        "the informer library knows neither where objects come from nor who shows them",
    ),
    (
        "object",
        &["cache", "source", "cmd", "render", "cli", "query"],
        "the cached object is the bottom layer",
    ),
    (
        "source",
        &["render", "cmd", "cli", "query"],
        "sources feed the cache; they never render",
    ),
    (
        "render",
        &["source", "cmd", "cli"],
        "renderers know nothing of HTTP or the command line",
    ),
];

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

/// The files of a layer: `src/NAME/**.rs` and `src/NAME.rs`, `src/NAME_tests.rs`.
fn layer_files(src: &Path, layer: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    rust_files(&src.join(layer), &mut files);
    for file in [format!("{layer}.rs"), format!("{layer}_tests.rs")] {
        if src.join(&file).is_file() {
            files.push(src.join(file));
        }
    }
    files
}

/// `crate::MODULE` paths named on a line of code, comments left out.
fn named_modules(line: &str) -> impl Iterator<Item = &str> {
    let code = line.split("//").next().unwrap_or("");
    code.match_indices("crate::").map(move |(at, _)| {
        let rest = &code[at + "crate::".len()..];
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        &rest[..end]
    })
}

#[test]
fn no_module_imports_a_layer_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut broken = Vec::new();
    for (layer, forbidden, why) in RULES {
        let files = layer_files(&src, layer);
        assert!(!files.is_empty(), "no files for the layer {layer}");
        for file in files {
            let text = std::fs::read_to_string(&file).expect("readable source");
            for (n, line) in text.lines().enumerate() {
                for module in named_modules(line) {
                    if forbidden.contains(&module) {
                        broken.push(format!(
                            "{}:{}: {layer} names crate::{module} ({why})",
                            file.strip_prefix(&src).unwrap_or(&file).display(),
                            n + 1
                        ));
                    }
                }
            }
        }
    }
    assert!(broken.is_empty(), "upward imports:\n{}", broken.join("\n"));
}

#[test]
fn the_check_sees_a_path_in_code_and_not_in_a_comment() {
    let names: Vec<&str> =
        named_modules("use crate::source::ListerWatcher; // crate::cmd").collect();
    assert_eq!(names, ["source"]);
}
