//! The window `--from`/`--to` of a replay: refused when it is known to be empty, its offsets in
//! the units of every duration flag.

use crate::support::binary::{run_offline, stderr};
use crate::support::paths::{bundled, path_str};

/// A window whose `--from` comes after its `--to` shows nothing: refused when the two ends
/// compare (two offsets, two pop numbers, two times, an offset and a time), as a usage error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_window_is_refused() {
    let path = bundled("controller");
    for (from, to, says) in [
        ("+3s", "+1s", "--from +3s comes after --to +1s"),
        ("#8", "#3", "--from #8 comes after --to #3"),
        (
            "2026-11-24T09:00:03Z",
            "2026-11-24T09:00:01Z",
            "--from 2026-11-24T09:00:03Z comes after --to 2026-11-24T09:00:01Z",
        ),
        (
            "2026-11-24T09:00:03Z",
            "+1s",
            "--from 2026-11-24T09:00:03Z comes after --to 2026-11-24T09:00:01Z (an offset \
             counts from the recording's start, 2026-11-24T09:00:00Z)",
        ),
    ] {
        let out = run_offline(
            &["replay", path_str(&path), "--from", from, "--to", to],
            None,
        )
        .await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{from} {to}: {err}");
        assert!(
            err.contains(&format!(
                "{says}, so the window shows nothing: give a --from at or before --to"
            )),
            "{err}"
        );
        assert!(out.stdout.is_empty(), "{from} {to}");
    }
    // Both ends are included: one point shows what is at it.
    let out = run_offline(
        &[
            "replay",
            path_str(&path),
            "--from",
            "#3",
            "--to",
            "#3",
            "--view",
            "pops",
        ],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains(" #3 "));
}

/// `--from +1y` is refused as every duration flag refuses `1y`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_offset_takes_the_units_of_every_duration_flag() {
    let path = bundled("controller");
    let out = run_offline(&["replay", path_str(&path), "--from", "+1y"], None).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "\"+1y\" is not an offset from the recording's start: \"1y\" uses days, weeks, \
             months or years"
        ),
        "{err}"
    );
}
