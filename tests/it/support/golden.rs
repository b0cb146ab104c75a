//! Golden files: compare an output with `tests/golden/<name>`, or rewrite the file with
//! `UPDATE_GOLDEN=1`.

use std::path::Path;

/// Compares `actual` with `tests/golden/<name>`; with `UPDATE_GOLDEN=1` in the environment,
/// writes it there instead. Review the diff before committing a rewritten file.
pub fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with UPDATE_GOLDEN=1 to create it",
            path.display()
        )
    });
    if expected != actual {
        let first = expected
            .lines()
            .zip(actual.lines())
            .position(|(e, a)| e != a)
            .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
        panic!(
            "output differs from {} from line {} on (UPDATE_GOLDEN=1 rewrites it)\n\
             --- expected\n{expected}\n--- actual\n{actual}",
            path.display(),
            first + 1
        );
    }
}
