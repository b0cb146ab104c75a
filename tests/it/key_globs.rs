//! One glob over keys for `--match` and a controller's `fail-keys=`: `*`, `?` and `[...]` sets,
//! an unclosed `[` refused with a sentence.

use crate::support::binary::{run_offline, stderr};
use crate::support::paths::{hand_written, path_str};

/// `controller/cases.jsonl`: `a` and `b` listed at 0, then updates of both.
fn cases() -> std::path::PathBuf {
    hand_written("controller/cases")
}

/// The keys whose first reconcile failed, as the timeline's `returned` rows say.
fn failed_keys(timeline: &str) -> Vec<String> {
    let mut keys: Vec<String> = timeline
        .lines()
        .filter(|l| l.contains("returned") && l.contains("error → retry"))
        .filter_map(|l| l.split_whitespace().find(|w| w.starts_with("default/")))
        .map(str::to_owned)
        .collect();
    keys.dedup();
    keys
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fail_keys_reads_a_set_as_match_does() {
    let path = cases();
    for (glob, failed) in [
        ("default/[ab]", vec!["default/a", "default/b"]),
        ("default/[!a]", vec!["default/b"]),
        ("default/[a-a]", vec!["default/a"]),
    ] {
        let controller = format!("w,fail=1,fail-keys={glob}");
        let out = run_offline(
            &["replay", path_str(&path), "-q", "--controller", &controller],
            None,
        )
        .await;
        assert_eq!(out.status.code(), Some(0), "{glob}: {}", stderr(&out));
        let timeline = String::from_utf8_lossy(&out.stdout);
        assert_eq!(failed_keys(&timeline), failed, "{glob}:\n{timeline}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn match_reads_sets() {
    let path = cases();
    let out = run_offline(
        &["replay", path_str(&path), "-q", "--match", "default/[b-z]"],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let timeline = String::from_utf8_lossy(&out.stdout);
    let keys: Vec<&str> = timeline
        .lines()
        .filter(|l| l.contains(" #"))
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    assert!(!keys.is_empty(), "{timeline}");
    assert!(keys.iter().all(|k| *k == "default/b"), "{timeline}");
}

/// A `[` that nothing closes would match no key, silently: refused, for both flags.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unclosed_set_is_refused_with_a_sentence() {
    let path = cases();
    for flags in [
        vec!["--match", "default/[ab"],
        vec!["--controller", "w,fail=1,fail-keys=default/[ab"],
    ] {
        let mut args = vec!["replay", path_str(&path)];
        args.extend(flags.iter().copied());
        let out = run_offline(&args, None).await;
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        assert!(
            stderr(&out).contains(
                r#""default/[ab" opens a set with `[` that no `]` closes: write a set as [abc], [a-z] or [!a-z]"#
            ),
            "{}",
            stderr(&out)
        );
    }
}
