//! Puts the git commit into `--version`: `KUBECTL_DELTAS_VERSION` is `0.1.0 (commit 1a2b3c4)` in
//! a git checkout and plain `0.1.0` outside one (a crates.io tarball, a source archive), so the
//! build never fails for want of git.

use std::path::PathBuf;
use std::process::Command;

/// The package's directory, as cargo says when it runs this script: `env!` would bake in the
/// directory the script was compiled in, which a target directory shared by two checkouts (or
/// copied from one to another) reuses for the wrong one.
fn manifest_dir() -> PathBuf {
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let version = env!("CARGO_PKG_VERSION");
    let version = match own_checkout().then(|| git(&["rev-parse", "--short", "HEAD"])) {
        Some(Some(commit)) => {
            watch_head();
            format!("{version} (commit {commit})")
        }
        _ => version.to_owned(),
    };
    println!("cargo:rustc-env=KUBECTL_DELTAS_VERSION={version}");
}

/// Whether the package is the root of a git work tree, and not, say, vendored inside another
/// project's repository whose commit would say nothing about this code.
fn own_checkout() -> bool {
    let Some(top) = git(&["rev-parse", "--show-toplevel"]) else {
        return false;
    };
    let canonical = |p: PathBuf| p.canonicalize().ok();
    canonical(PathBuf::from(top))
        .is_some_and(|top| canonical(manifest_dir()).is_some_and(|dir| dir == top))
}

/// Reruns this script when HEAD moves: a checkout changes `HEAD`, a commit changes the branch's
/// ref, which lives in `refs/heads/…` or, once packed, in `packed-refs`. `--git-path` answers for
/// worktrees too, where `.git` is a file and the refs live in the main repository.
fn watch_head() {
    let mut paths = vec!["HEAD".to_owned(), "packed-refs".to_owned()];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        paths.push(branch);
    }
    for path in paths {
        if let Some(file) = git(&["rev-parse", "--git-path", &path]) {
            let file = manifest_dir().join(file);
            if file.exists() {
                println!("cargo:rerun-if-changed={}", file.display());
            }
        }
    }
}

/// The trimmed output of a successful git command run in the package's directory.
fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .args(args)
        .current_dir(manifest_dir())
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?.trim().to_owned();
    (output.status.success() && !text.is_empty()).then_some(text)
}
