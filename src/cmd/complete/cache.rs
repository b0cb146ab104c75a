//! Namespaces the cluster told a completion, kept for a minute in the user's cache directory
//! (`$XDG_CACHE_HOME/kubectl-deltas/completion` or `~/.cache/…` on Linux, `~/Library/Caches/…` on
//! macOS, `%LOCALAPPDATA%\…` on Windows), so that pressing TAB again answers at once. Resource
//! names come from the discovery cache instead, which the commands share.
//!
//! A miss, a stale entry, an unreadable file or a missing cache directory all mean "ask the
//! cluster"; a failed write means "ask again next time". Nothing here reports an error.

use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How long an answer is reused: long enough for a burst of TABs, short enough that a new CRD or
/// namespace shows up soon.
pub const TTL: Duration = Duration::from_secs(60);

/// One cached answer. `key` is kept to tell apart the clusters whose keys hash alike.
#[derive(Serialize, Deserialize)]
struct Entry {
    key: String,
    candidates: Vec<(String, String)>,
}

/// The candidates stored for `kind` (`namespaces`) and `key` (which cluster, as
/// whom) less than [`TTL`] ago.
pub fn load(kind: &str, key: &str) -> Option<Vec<(String, String)>> {
    let path = path(kind, key)?;
    let age = path.metadata().ok()?.modified().ok()?.elapsed().ok()?;
    if age >= TTL {
        return None;
    }
    let entry: Entry = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
    (entry.key == key).then_some(entry.candidates)
}

/// Stores the candidates for `kind` and `key`. Written to a temporary file and renamed, so that a
/// completion running at the same time reads the old entry or the new one, never half of one.
pub fn store(kind: &str, key: &str, candidates: &[(String, String)]) {
    let Some(path) = path(kind, key) else {
        return;
    };
    let entry = Entry {
        key: key.to_owned(),
        candidates: candidates.to_vec(),
    };
    let (Some(dir), Ok(json)) = (path.parent(), serde_json::to_vec(&entry)) else {
        return;
    };
    let temporary = path.with_extension(format!("{}.tmp", std::process::id()));
    let written = std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&temporary, json))
        .and_then(|()| std::fs::rename(&temporary, &path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
}

fn path(kind: &str, key: &str) -> Option<PathBuf> {
    let mut hasher = std::hash::DefaultHasher::new();
    key.hash(&mut hasher);
    let file = format!("{kind}-{:016x}.json", hasher.finish());
    Some(
        dirs::cache_dir()?
            .join("kubectl-deltas")
            .join("completion")
            .join(file),
    )
}
