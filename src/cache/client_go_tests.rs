use super::*;

fn v(text: &str) -> ClientGoVersion {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn versions_are_written_as_kubernetes_go_mod_or_a_minor_alone() {
    for text in ["1.35", "v1.35", "0.35", " 1.35 "] {
        assert_eq!(
            v(text),
            ClientGoVersion::minor_release(35).unwrap(),
            "{text}"
        );
    }
    for text in ["1.35.2", "v0.35.2", "0.35.2"] {
        assert_eq!(v(text), ClientGoVersion::release(35, 2).unwrap(), "{text}");
    }
    assert_eq!(v("LATEST"), ClientGoVersion::LATEST);
    assert_eq!(v("v0.36.0-alpha.1").to_string(), "1.36.0-alpha.1");
    assert_eq!(v("0.28.7").to_string(), "1.28.7");
    assert_eq!(v("1.28").to_string(), "1.28");
    for bad in [
        "",
        "1",
        "2.30",
        "1.x",
        "1.35.x",
        "1.35.1.1",
        "35",
        "v",
        "1.-3",
        "1.+3",
        "0.36.1-alpha.1",
        "0.36.0-gamma.1",
        "0.36.0-alpha",
        "v0.0.0-20230101000000-abcdef",
    ] {
        assert!(
            matches!(
                bad.parse::<ClientGoVersion>(),
                Err(ClientGoVersionError::Malformed(_))
            ),
            "{bad:?}"
        );
    }
    for unknown in ["1.16", "1.37", "v0.15.7"] {
        assert!(
            matches!(
                unknown.parse::<ClientGoVersion>(),
                Err(ClientGoVersionError::Unknown(_))
            ),
            "{unknown:?}"
        );
    }
}

/// `DeltaFIFO.Replace`: a01b5a2a9 ("rewrite Replace to check queue first") is first tagged
/// v0.27.0-alpha.3 and was backported to v0.24.13, v0.25.9 and v0.26.4; v0.23 never got it.
#[test]
fn replace_tombstones_follow_a01b5a2a9_and_its_backports_by_patch() {
    use ReplaceTombstones::*;
    for (text, rule) in [
        ("0.17.17", KnownObjects),
        ("1.23", KnownObjects),
        ("0.24.12", KnownObjects),
        ("0.24.13", QueueFirst),
        ("1.24", QueueFirst),
        ("0.25.8", KnownObjects),
        ("0.25.9", QueueFirst),
        ("0.26.3", KnownObjects),
        ("0.26.4", QueueFirst),
        ("v0.27.0-alpha.2", KnownObjects),
        ("v0.27.0-alpha.3", QueueFirst),
        ("v0.27.0-rc.1", QueueFirst),
        ("0.27.0", QueueFirst),
        ("latest", QueueFirst),
    ] {
        assert_eq!(v(text).replace_tombstones(), rule, "{text}");
    }
}

/// `sharedIndexInformer.HandleDeltas` @v0.17.17 and @v0.18.0/@v0.23.17, `OnUpdate` @v0.24.0.
#[test]
fn sync_rules_change_at_v0_18_and_v0_24() {
    use SyncRule::*;
    assert_eq!(v("1.17").sync_rule(), DeltaType);
    assert_eq!(v("1.18").sync_rule(), SyncOrUnchangedReplaced);
    assert_eq!(v("0.23.17").sync_rule(), SyncOrUnchangedReplaced);
    assert_eq!(v("0.24.0").sync_rule(), ResourceVersion);
    assert_eq!(v("latest").sync_rule(), ResourceVersion);
}

#[test]
fn each_minor_builds_the_informer_its_gates_say() {
    use QueueKind::*;
    let row = |text: &str| {
        let v = v(text);
        (
            v.queue(),
            v.batch_pop(),
            v.emit_replaced(),
            v.watch_list(),
            v.unlock_while_processing(),
            v.has_registration_synced(),
        )
    };
    assert_eq!(row("1.17"), (Delta, 1, false, false, false, false));
    assert_eq!(row("1.18"), (Delta, 1, true, false, false, false));
    assert_eq!(row("1.26"), (Delta, 1, true, false, false, false));
    assert_eq!(row("1.27"), (Delta, 1, true, false, false, true));
    assert_eq!(row("1.32"), (Delta, 1, true, false, false, true));
    assert_eq!(row("1.33"), (Real, 1, true, false, false, true));
    assert_eq!(row("1.34"), (Real, 1, true, false, false, true));
    assert_eq!(row("1.35"), (Real, 1000, true, true, false, true));
    assert_eq!(row("1.36"), (Atomic, 1000, true, true, true, true));
    assert_eq!(v("1.20").reflector(), 28);
    assert_eq!(v("1.33").reflector(), 33);
}
