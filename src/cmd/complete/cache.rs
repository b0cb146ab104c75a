//! Namespaces the cluster told a completion, kept for a minute in the user's cache directory
//! (`$XDG_CACHE_HOME/kubectl-deltas/completion` or `~/.cache/…` on Linux, `~/Library/Caches/…` on
//! macOS, `%LOCALAPPDATA%\…` on Windows), so that pressing TAB again answers at once. Resource
//! names come from the discovery cache instead, which the commands share.
//!
//! A miss, a stale entry, an unreadable file (or one that is not a regular file, or too large)
//! or a missing cache directory all mean "ask the cluster"; a failed write means "ask again next time". Nothing here reports an error.

use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::time::Duration;

use kubectl_deltas::source::cache_file;
use serde::{Deserialize, Serialize};

/// How long an answer is reused: long enough for a burst of TABs, short enough that a new CRD or
/// namespace shows up soon.
pub const TTL: Duration = Duration::from_secs(60);

/// The largest entry read: a list of namespaces is far smaller; a larger file is not ours.
const MAX_SIZE: u64 = 16 << 20;

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
    let bytes = cache_file::read_regular(&path, MAX_SIZE).ok()?;
    let entry: Entry = serde_json::from_slice(&bytes).ok()?;
    (entry.key == key).then_some(entry.candidates)
}

/// Stores the candidates for `kind` and `key`. Written as the discovery cache is (kubectl's
/// `0750` directories and `0660` files: it names the server, user, context and namespaces), to
/// a temporary file renamed over the old one, so that a completion running at the same time
/// reads the old entry or the new one, never half of one.
pub fn store(kind: &str, key: &str, candidates: &[(String, String)]) {
    let Some(path) = path(kind, key) else {
        return;
    };
    let entry = Entry {
        key: key.to_owned(),
        candidates: candidates.to_vec(),
    };
    let Ok(json) = serde_json::to_vec(&entry) else {
        return;
    };
    if let Err(error) = cache_file::replace(&path, &json) {
        tracing::debug!(path = %path.display(), %error, "cannot write the completion cache");
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
