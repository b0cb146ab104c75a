//! `--query SPEC=VALUE`: which batches and handler calls a session shows, by the same index
//! functions as `--index` ([`Query`]).

use std::str::FromStr;

use kubectl_deltas::Object;
use kubectl_deltas::cache::{Batch, IndexSpec, Notification};

/// `--query SPEC=VALUE`: batches whose old or new object the index `SPEC` files under `VALUE`,
/// computed by the same index functions as `--index`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    spec: IndexSpec,
    value: String,
}

/// A `--query` that does not parse.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// No `=`.
    #[error(
        "invalid --query {0:?}: expected SPEC=VALUE, such as namespace=prod, label:app=web or \
         field:spec.nodeName=node-1"
    )]
    Form(String),
    /// The spec part is not an index spec.
    #[error("invalid --query {query:?}")]
    Spec {
        /// The query as given.
        query: String,
        /// Why its spec is wrong.
        #[source]
        source: kubectl_deltas::cache::IndexSpecError,
    },
}

impl FromStr for Query {
    type Err = QueryError;

    /// Splits at the first `=`: specs never contain one, values may (`labels=app=web`).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (spec, value) = text
            .split_once('=')
            .ok_or_else(|| QueryError::Form(text.to_owned()))?;
        let spec = spec.parse().map_err(|source| QueryError::Spec {
            query: text.to_owned(),
            source,
        })?;
        Ok(Query {
            spec,
            value: value.to_owned(),
        })
    }
}

impl Query {
    /// The index spec it matches by.
    pub fn spec(&self) -> &IndexSpec {
        &self.spec
    }

    /// Whether an object of the notification (new, old, or deleted) is indexed under the value.
    pub fn matches_notification(&self, notification: &Notification<Object>) -> bool {
        let objects: [Option<&std::sync::Arc<Object>>; 2] = match notification {
            Notification::Add { obj, .. } => [Some(obj), None],
            Notification::Update { old, new } => [Some(new), Some(old)],
            Notification::Delete { obj } => [obj.object(), None],
        };
        objects
            .into_iter()
            .flatten()
            .any(|obj| self.spec.values(obj).iter().any(|v| *v == self.value))
    }

    /// Whether any object of the batch, as delivered (listed, for a `ReplacedAll`) or as the cache
    /// held it before an update or a deletion, is indexed under the value.
    pub fn matches(&self, batch: &Batch<Object>) -> bool {
        let delivered = batch.deltas.iter().flat_map(|d| {
            let listed = d.object.list().into_iter().flat_map(|l| l.objects.iter());
            d.object.object().into_iter().chain(listed)
        });
        let previous = batch.notifications.iter().filter_map(|n| match n {
            Notification::Update { old, .. } => Some(old),
            Notification::Delete { obj } => obj.object(),
            Notification::Add { .. } => None,
        });
        delivered
            .chain(previous)
            .any(|obj| self.spec.values(obj).iter().any(|v| *v == self.value))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use kube::api::ApiResource;

    use super::*;
    use kubectl_deltas::cache::{DeltaFifo, Indexer, ProcessLoop, RealFifo, ReflectorStore};

    fn pod(name: &str, node: &str) -> Arc<Object> {
        let ar = ApiResource::erase::<k8s_openapi::api::core::v1::Pod>(&());
        let mut obj = Object::new(name, &ar).within("default");
        obj.meta_mut().labels = Some([("app".to_owned(), "web=1".to_owned())].into());
        obj.set_field("spec", &serde_json::json!({"nodeName": node}))
            .unwrap();
        Arc::new(obj)
    }

    #[test]
    fn queries_split_at_the_first_equals_sign() {
        let q: Query = "labels=app=web=1".parse().unwrap();
        assert_eq!(q.spec, IndexSpec::Labels);
        assert_eq!(q.value, "app=web=1");
        let err = "namespace".parse::<Query>().unwrap_err().to_string();
        assert!(err.contains("expected SPEC=VALUE"), "{err}");
        let err = "lable:app=web".parse::<Query>().unwrap_err();
        let text = format!("{:#}", anyhow::Error::new(err));
        assert!(text.contains("unknown index kind \"lable\""), "{text}");
    }

    #[test]
    fn a_query_matches_the_old_or_the_new_object() {
        let indexer = Indexer::new();
        let fifo = Arc::new(DeltaFifo::new().known_objects(Arc::new(indexer.reader())));
        let mut controller = ProcessLoop::new(fifo.clone(), indexer);
        fifo.add(pod("web-1", "node-a"));
        let added = controller.try_process_next().unwrap();
        // Moved to another node: the update leaves node-a and enters node-b.
        fifo.update(pod("web-1", "node-b"));
        let moved = controller.try_process_next().unwrap();
        let on = |node: &str| -> Query { format!("field:spec.nodeName={node}").parse().unwrap() };
        assert!(on("node-a").matches(&added));
        assert!(!on("node-b").matches(&added));
        assert!(on("node-a").matches(&moved));
        assert!(on("node-b").matches(&moved));
        assert!(!on("node-c").matches(&moved));
    }

    #[test]
    fn a_query_matches_a_relist_by_its_listed_or_deleted_objects() {
        let indexer = Indexer::new();
        let queue = Arc::new(RealFifo::atomic());
        let mut controller = ProcessLoop::new(queue.clone(), indexer);
        let on = |node: &str| -> Query { format!("field:spec.nodeName={node}").parse().unwrap() };
        queue.replace(vec![pod("web-1", "node-a")], "1");
        let listed = controller.try_process_next().unwrap();
        assert!(on("node-a").matches(&listed));
        assert!(!on("node-b").matches(&listed));
        // web-1 is gone from the next list: its tombstone is what the relist did on node-a.
        queue.replace(vec![pod("web-2", "node-b")], "2");
        let relisted = controller.try_process_next().unwrap();
        assert!(on("node-a").matches(&relisted));
        assert!(on("node-b").matches(&relisted));
    }
}
