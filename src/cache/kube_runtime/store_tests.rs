use super::*;
use crate::cache::test_objects::cm;

#[test]
fn apply_watcher_event_init_buffers_until_init_done() {
    let mut s = Store::new();
    s.apply_watcher_event(&WatcherEvent::Init);
    s.apply_watcher_event(&WatcherEvent::InitApply(cm("demo", "a", 1)));
    s.apply_watcher_event(&WatcherEvent::InitApply(cm("demo", "b", 2)));
    assert!(s.is_empty() && !s.is_ready());
    s.apply_watcher_event(&WatcherEvent::InitDone);
    assert_eq!(s.len(), 2);
    assert!(s.is_ready());
    // A relist: the old content stays until InitDone, which drops `b` without any event.
    s.apply_watcher_event(&WatcherEvent::Init);
    s.apply_watcher_event(&WatcherEvent::InitApply(cm("demo", "a", 3)));
    assert!(s.get("demo/b").is_some());
    s.apply_watcher_event(&WatcherEvent::InitDone);
    assert!(s.get("demo/b").is_none());
    assert_eq!(
        s.get("demo/a").and_then(|o| o.resource_version()),
        Some("3")
    );
}

#[test]
fn apply_watcher_event_apply_upserts_and_delete_removes() {
    let mut s = Store::new();
    s.apply_watcher_event(&WatcherEvent::Apply(cm("demo", "a", 1)));
    s.apply_watcher_event(&WatcherEvent::Apply(cm("demo", "a", 2)));
    assert_eq!(
        s.get("demo/a").and_then(|o| o.resource_version()),
        Some("2")
    );
    s.apply_watcher_event(&WatcherEvent::Delete(cm("demo", "a", 3)));
    assert!(s.is_empty());
}

#[test]
fn wait_until_ready_resolves_at_the_first_init_done_and_stays() {
    let mut s = Store::new();
    s.apply_watcher_event(&WatcherEvent::Apply(cm("demo", "a", 1)));
    assert!(!s.is_ready());
    s.apply_watcher_event(&WatcherEvent::Init);
    s.apply_watcher_event(&WatcherEvent::InitDone);
    assert!(s.is_ready());
    s.apply_watcher_event(&WatcherEvent::Init);
    s.apply_watcher_event(&WatcherEvent::Error("410".into()));
    assert!(s.is_ready());
}
