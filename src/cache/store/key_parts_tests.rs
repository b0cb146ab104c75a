//! Key parts against the rendered key (`object_key`) as the oracle.

use hashbrown::DefaultHashBuilder;
use proptest::prelude::*;

use super::*;
use crate::cache::key::object_key;

#[derive(Debug)]
struct Parts(Option<String>, Option<String>);

impl CacheObject for Parts {
    fn key_namespace(&self) -> Option<&str> {
        self.0.as_deref()
    }

    fn key_name(&self) -> Option<&str> {
        self.1.as_deref()
    }
}

/// Short strings over an alphabet that straddles `/` in byte order (`-` < `/` < `0`), with `/`
/// itself: the cases where comparing parts instead of keys would go wrong.
fn part() -> impl Strategy<Value = Option<String>> {
    proptest::option::of("[-/0a]{0,3}")
}

fn object() -> impl Strategy<Value = Parts> {
    (part(), part()).prop_map(|(ns, name)| Parts(ns, name))
}

proptest! {
    #[test]
    fn parts_compare_hash_and_render_as_their_keys(a in object(), b in object()) {
        let hasher = DefaultHashBuilder::default();
        let (ka, kb) = (object_key(&a), object_key(&b));
        let (pa, pb) = (KeyParts::of(&a), KeyParts::of(&b));
        prop_assert_eq!(pa.cmp(&pb), ka.cmp(&kb));
        prop_assert_eq!(pa == pb, ka == kb);
        prop_assert_eq!(pa.is(&kb), ka == kb);
        prop_assert_eq!(pa.hash(&hasher), hash_key(&hasher, &ka));
        prop_assert_eq!(&*pa.to_key(), ka.as_str());
    }
}

#[test]
fn a_cluster_scoped_name_with_a_slash_is_the_namespaced_key_it_renders_as() {
    let hasher = DefaultHashBuilder::default();
    let cluster = Parts(None, Some("team-a/web".into()));
    let namespaced = Parts(Some("team-a".into()), Some("web".into()));
    let (c, n) = (KeyParts::of(&cluster), KeyParts::of(&namespaced));
    assert_eq!(c, n);
    assert_eq!(c.hash(&hasher), n.hash(&hasher));
    assert!(c.is("team-a/web") && n.is("team-a/web"));
    // An empty namespace renders as none.
    assert!(KeyParts::of(&Parts(Some(String::new()), Some("n1".into()))).is("n1"));
}
