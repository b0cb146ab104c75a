//! Indexer queries as plain data: what `kubectl deltas index` answers, built from an
//! [`Indexer`](crate::cache::Indexer)'s content once it has synced and handed to renderers, which
//! never see the cache itself.
//!
//! ```
//! use std::sync::Arc;
//! use kube::api::ApiResource;
//! use kubectl_deltas::Object;
//! use kubectl_deltas::cache::{IndexSpec, Indexer};
//! use kubectl_deltas::query::{Matches, ValueListing};
//!
//! let pods = ApiResource::erase::<k8s_openapi::api::core::v1::Pod>(&());
//! let mut indexer = Indexer::new();
//! let spec: IndexSpec = "namespace".parse().unwrap();
//! indexer.add_indexer(spec.name(), spec.index_func()).unwrap();
//! indexer.add(Arc::new(Object::new("web-1", &pods).within("prod")));
//! indexer.add(Arc::new(Object::new("web-2", &pods).within("prod")));
//! indexer.add(Arc::new(Object::new("db-1", &pods).within("data")));
//!
//! let listing = ValueListing::from_indexer(&indexer, "namespace").unwrap();
//! let counts: Vec<(Option<&str>, usize)> =
//!     listing.rows.iter().map(|r| (r.value.as_deref(), r.count())).collect();
//! assert_eq!(counts, [(Some("prod"), 2), (Some("data"), 1)]);
//!
//! let matches = Matches::from_indexer(&indexer, "namespace", &["data".into()]).unwrap();
//! assert_eq!(&*matches.objects[0].key, "data/db-1");
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;

use hashbrown::HashSet;

use crate::cache::{IndexerError, IndexerReader, object_key};
use crate::object::Object;

/// Every value of one index with the objects under it (client-go's `ListIndexFuncValues`, then
/// `IndexKeys` for each value), plus the objects the index function gives no value for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueListing {
    /// The index queried: its name in the Indexer, such as `label:app`.
    pub index: String,
    /// How many objects the cache holds.
    pub total: usize,
    /// One row per indexed value, most objects first, then by value. When some objects have no
    /// value, a last row with `value: None` holds them (shown as `<none>`), so that nothing in the
    /// cache is silently left out.
    pub rows: Vec<ValueRow>,
}

/// One row of a [`ValueListing`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueRow {
    /// The indexed value; `None` for the objects without any.
    pub value: Option<String>,
    /// Store keys of the objects under the value, sorted. An object of a multi-valued index
    /// (`labels`, `owner`, a `field:` through an array) appears under each of its values.
    pub keys: Vec<Arc<str>>,
}

impl ValueRow {
    /// How many objects are under the value.
    pub fn count(&self) -> usize {
        self.keys.len()
    }
}

impl ValueListing {
    /// Lists index `index` of `indexer`.
    pub fn from_indexer(
        indexer: &IndexerReader<Object>,
        index: &str,
    ) -> Result<Self, IndexerError> {
        let mut rows = Vec::new();
        let mut indexed: HashSet<Arc<str>> = HashSet::new();
        for (value, _) in indexer.index_value_counts(index)? {
            let keys = indexer.index_keys(index, &value)?;
            indexed.extend(keys.iter().cloned());
            rows.push(ValueRow {
                value: Some(value),
                keys,
            });
        }
        rows.sort_by(|a, b| {
            b.count()
                .cmp(&a.count())
                .then_with(|| a.value.cmp(&b.value))
        });
        let all = indexer.list_keys();
        let total = all.len();
        let none: Vec<Arc<str>> = all.into_iter().filter(|k| !indexed.contains(k)).collect();
        if !none.is_empty() {
            rows.push(ValueRow {
                value: None,
                keys: none,
            });
        }
        Ok(ValueListing {
            index: index.to_owned(),
            total,
            rows,
        })
    }

    /// Whether no object has a value under the index (there may still be a `<none>` row).
    pub fn is_empty(&self) -> bool {
        self.rows.iter().all(|row| row.value.is_none())
    }

    /// How many distinct values the index holds.
    pub fn value_count(&self) -> usize {
        self.rows.iter().filter(|row| row.value.is_some()).count()
    }
}

/// The objects indexed under any of some values (client-go's `ByIndex` for each value, merged).
#[derive(Debug, Clone)]
pub struct Matches {
    /// The index queried.
    pub index: String,
    /// The values asked for, in the order given.
    pub values: Vec<String>,
    /// The objects under any of them, each once, sorted by key.
    pub objects: Vec<Match>,
}

/// One object of [`Matches`].
#[derive(Debug, Clone)]
pub struct Match {
    /// The store key (`namespace/name`, or `name`).
    pub key: Arc<str>,
    /// The object as the cache holds it.
    pub object: Arc<Object>,
    /// Every value the object has under the index, not only the ones asked for, each once, in the
    /// index function's order.
    pub values: Vec<String>,
}

impl Matches {
    /// The objects of `indexer` indexed under any of `values` in index `index`.
    pub fn from_indexer(
        indexer: &IndexerReader<Object>,
        index: &str,
        values: &[String],
    ) -> Result<Self, IndexerError> {
        let mut by_key: BTreeMap<Arc<str>, Arc<Object>> = BTreeMap::new();
        for value in values {
            for object in indexer.by_index(index, value)? {
                by_key
                    .entry(Arc::from(object_key(object.as_ref())))
                    .or_insert(object);
            }
        }
        let objects = by_key
            .into_iter()
            .map(|(key, object)| {
                let mut values = indexer.index_values(index, &object)?;
                // Two containers with one image give that value twice; the index holds it once.
                let mut seen = HashSet::new();
                values.retain(|v| seen.insert(v.clone()));
                Ok(Match {
                    key,
                    object,
                    values,
                })
            })
            .collect::<Result<_, IndexerError>>()?;
        Ok(Matches {
            index: index.to_owned(),
            values: values.to_vec(),
            objects,
        })
    }

    /// Whether nothing matched.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// The matched store keys, sorted (client-go's `IndexKeys`, merged over the values).
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.objects.iter().map(|m| &*m.key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::IndexSpec;
    use kube::api::ApiResource;
    use serde_json::json;

    fn pod(ns: &str, name: &str, labels: serde_json::Value) -> Arc<Object> {
        let ar = ApiResource::erase::<k8s_openapi::api::core::v1::Pod>(&());
        let mut obj = Object::new(name, &ar).within(ns);
        obj.meta_mut().labels = serde_json::from_value(labels).unwrap();
        Arc::new(obj)
    }

    fn indexer(spec: &str, objects: Vec<Arc<Object>>) -> crate::cache::Indexer<Object> {
        let mut indexer = crate::cache::Indexer::new();
        let spec: IndexSpec = spec.parse().unwrap();
        indexer.add_indexer(spec.name(), spec.index_func()).unwrap();
        objects.into_iter().for_each(|o| indexer.add(o));
        indexer
    }

    fn rows(listing: &ValueListing) -> Vec<(Option<&str>, Vec<&str>)> {
        listing
            .rows
            .iter()
            .map(|r| {
                (
                    r.value.as_deref(),
                    r.keys.iter().map(|k| &**k).collect::<Vec<_>>(),
                )
            })
            .collect()
    }

    #[test]
    fn values_sort_by_count_then_value_and_objects_without_one_come_last() {
        let indexer = indexer(
            "labels",
            vec![
                pod("a", "p1", json!({"app": "web", "tier": "front"})),
                pod("a", "p2", json!({"app": "web"})),
                pod("b", "p3", json!({"app": "db", "tier": "back"})),
                pod("b", "p4", json!(null)),
            ],
        );
        let listing = ValueListing::from_indexer(&indexer, "labels").unwrap();
        assert_eq!(listing.total, 4);
        assert_eq!(
            rows(&listing),
            [
                (Some("app=web"), vec!["a/p1", "a/p2"]),
                (Some("app=db"), vec!["b/p3"]),
                (Some("tier=back"), vec!["b/p3"]),
                (Some("tier=front"), vec!["a/p1"]),
                (None, vec!["b/p4"]),
            ]
        );
        assert!(!listing.is_empty());
        assert_eq!(listing.value_count(), 4);
    }

    #[test]
    fn an_index_without_values_is_empty_but_still_counts_every_object() {
        let indexer = indexer(
            "label:app",
            vec![
                pod("a", "p1", json!(null)),
                pod("a", "p2", json!({"x": "y"})),
            ],
        );
        let listing = ValueListing::from_indexer(&indexer, "label:app").unwrap();
        assert!(listing.is_empty());
        assert_eq!(rows(&listing), [(None, vec!["a/p1", "a/p2"])]);
    }

    #[test]
    fn matches_merge_values_and_carry_every_value_of_each_object() {
        let indexer = indexer(
            "labels",
            vec![
                pod("a", "p1", json!({"app": "web", "tier": "front"})),
                pod("a", "p2", json!({"app": "db"})),
                pod("a", "p3", json!({"tier": "front"})),
            ],
        );
        let values = ["app=web".to_owned(), "tier=front".to_owned()];
        let matches = Matches::from_indexer(&indexer, "labels", &values).unwrap();
        assert_eq!(matches.keys().collect::<Vec<_>>(), ["a/p1", "a/p3"]);
        let mut p1 = matches.objects[0].values.clone();
        p1.sort();
        assert_eq!(p1, ["app=web", "tier=front"]);

        let none = Matches::from_indexer(&indexer, "labels", &["app=x".into()]).unwrap();
        assert!(none.is_empty());
        let unknown = Matches::from_indexer(&indexer, "owner", &values).unwrap_err();
        assert!(matches!(unknown, IndexerError::UnknownIndex { .. }));
    }
}
