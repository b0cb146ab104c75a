use super::*;
use crate::cache::listwatch::{ApiStatus, SourceError};
use crate::cache::test_objects::cm;

fn names(t: &Translation) -> Vec<String> {
    t.events.iter().map(ToString::to_string).collect()
}

fn expired() -> ApiStatus {
    ApiStatus {
        code: 410,
        reason: "Expired".into(),
        message: "too old resource version".into(),
        causes: Vec::new(),
    }
}

#[test]
fn step_list_watch_is_init_init_apply_init_done() {
    let mut w = WatcherTranslator::new();
    let t = w.step(ReflectorStep::Replaced(&[
        cm("demo", "a", 1),
        cm("demo", "b", 2),
    ]));
    assert_eq!(
        names(&t),
        ["Init", "InitApply(demo/a)", "InitApply(demo/b)", "InitDone"]
    );
    assert!(t.note.is_none());
}

#[test]
fn step_watching_maps_added_modified_deleted_and_bookmarks_move_only_the_resource_version() {
    let mut w = WatcherTranslator::new();
    w.step(ReflectorStep::Replaced(&[]));
    let a = cm("demo", "a", 3);
    assert_eq!(names(&w.step(ReflectorStep::Added(&a))), ["Apply(demo/a)"]);
    assert_eq!(
        names(&w.step(ReflectorStep::Updated(&a))),
        ["Apply(demo/a)"]
    );
    assert!(w.step(ReflectorStep::Bookmark).events.is_empty());
    assert_eq!(
        names(&w.step(ReflectorStep::Deleted(&a))),
        ["Delete(demo/a)"]
    );
}

#[test]
fn step_watching_410_is_an_error_then_a_relist_whose_vanished_objects_get_no_delete() {
    let mut w = WatcherTranslator::new();
    w.step(ReflectorStep::Replaced(&[
        cm("demo", "a", 1),
        cm("demo", "b", 2),
    ]));
    let ended = WatchEndReason::ErrorEvent(expired());
    assert_eq!(
        names(&w.step(ReflectorStep::WatchEnded(&ended))),
        ["Error(410 Expired: too old resource version)"]
    );
    assert!(
        w.step(ReflectorStep::Relist(&RelistCause::WatchExpired))
            .events
            .is_empty()
    );
    let t = w.step(ReflectorStep::Replaced(&[cm("demo", "a", 1)]));
    assert_eq!(names(&t), ["Init", "InitApply(demo/a)", "InitDone"]);
    assert_eq!(
        t.note.as_deref(),
        Some(
            "kube-runtime: demo/b gone in the relist, without a Delete: its store drops it at InitDone and its Controller never reconciles it"
        )
    );
}

#[test]
fn step_watching_stream_end_resumes_the_watch_without_a_relist() {
    let mut w = WatcherTranslator::new();
    w.step(ReflectorStep::Replaced(&[
        cm("demo", "a", 1),
        cm("demo", "b", 2),
    ]));
    assert!(
        w.step(ReflectorStep::WatchEnded(&WatchEndReason::Closed))
            .events
            .is_empty()
    );
    // The client-go Reflector relists after a very short watch; kube-runtime re-watches from
    // its resourceVersion, so the list's changes come as watch events.
    let t = w.step(ReflectorStep::Relist(&RelistCause::VeryShortWatch));
    assert!(
        t.note
            .as_deref()
            .is_some_and(|n| n.starts_with("kube-runtime resumes its watch"))
    );
    let t = w.step(ReflectorStep::Replaced(&[
        cm("demo", "a", 1),
        cm("demo", "c", 3),
    ]));
    assert_eq!(names(&t), ["Apply(demo/c)", "Delete(demo/b)"]);
    // The next relist after a 410 is a relist again.
    w.step(ReflectorStep::Relist(&RelistCause::WatchExpired));
    assert_eq!(
        names(&w.step(ReflectorStep::Replaced(&[]))),
        ["Init", "InitDone"]
    );
}

#[test]
fn step_watch_start_failed_is_an_error_and_a_resumed_watch() {
    let mut w = WatcherTranslator::new();
    w.step(ReflectorStep::Replaced(&[cm("demo", "a", 1)]));
    let cause = RelistCause::WatchStartFailed(SourceError::Api(ApiStatus {
        code: 500,
        reason: "InternalError".into(),
        message: "boom".into(),
        causes: Vec::new(),
    }));
    let t = w.step(ReflectorStep::Relist(&cause));
    assert_eq!(t.events.len(), 1);
    assert!(matches!(t.events[0], WatcherEvent::Error(_)));
    assert_eq!(
        names(&w.step(ReflectorStep::Replaced(&[cm("demo", "a", 2)]))),
        ["Apply(demo/a)"]
    );
}
