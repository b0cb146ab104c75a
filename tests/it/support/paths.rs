//! Where the recordings the tests replay are.

use std::path::{Path, PathBuf};

/// A recording shipped in `docs/recordings/` (`name` without `.jsonl`).
pub fn bundled(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs/recordings")
        .join(format!("{name}.jsonl"))
}

/// A hand-written recording of one rule, in `tests/recordings/` (`name` without `.jsonl`).
pub fn hand_written(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/recordings")
        .join(format!("{name}.jsonl"))
}

/// A test path as an argument of the binary.
pub fn path_str(path: &Path) -> &str {
    path.to_str().expect("test paths are UTF-8")
}

/// A row of a summary table (comfy-table's), by its label: its cells after the label.
pub fn summary_row<'a>(summary: &'a str, label: &str) -> Vec<&'a str> {
    let line = summary
        .lines()
        .find(|l| {
            let cells: Vec<&str> = l.split(['│', '┆']).map(str::trim).collect();
            cells.get(1) == Some(&label)
        })
        .unwrap_or_else(|| panic!("no {label:?} row in\n{summary}"));
    line.split(['│', '┆'])
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .skip(1)
        .collect()
}
