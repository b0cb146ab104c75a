//! The object store: current state, a global resourceVersion and the event history.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::json;
use super::resources::ResourceDef;

/// The `type` of a watch event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One mutation. The log keeps the previous object so that the state at any retained
/// resourceVersion can be rebuilt (for `Exact` lists and continue pages), and so that
/// selector-filtered watches can turn a MODIFIED into ADDED/DELETED like the cacher does.
#[derive(Clone, Debug)]
pub(crate) struct LogEntry {
    pub rv: u64,
    pub resource: String,
    pub key: String,
    pub ty: EventType,
    /// The object after the mutation; for DELETED the last state stamped with the deletion rv.
    pub object: Value,
    pub prev: Option<Value>,
    /// The watch cache missed it ([`FakeApiServer::create_unwatched`](super::FakeApiServer::create_unwatched)):
    /// lists see it, watches never deliver it.
    pub unwatched: bool,
}

pub(crate) struct Store {
    pub resources: Vec<Arc<ResourceDef>>,
    /// Resource id → key (`ns/name` or `name`) → object (with `kind`/`apiVersion`).
    /// Copy-on-write per resource: a list takes a snapshot by cloning the `Arc`, and a mutation
    /// clones the map only while such a snapshot is still held. Deep-cloning 50k objects for every
    /// list page made paged lists of large collections take seconds.
    objects: BTreeMap<String, Arc<BTreeMap<String, Value>>>,
    /// Every mutation, in rv order. Never truncated: compaction only moves `compacted`, so
    /// watches that are already running keep receiving what they have not read yet.
    log: Vec<LogEntry>,
    pub rv: u64,
    /// etcd's compaction: exact reads (lists at a resourceVersion with a `limit` or
    /// `resourceVersionMatch=Exact`, continue tokens) below this are "too old".
    pub compacted: u64,
    /// The oldest resourceVersion the watch cache can start a watch from: the revision it was
    /// (re)built at when the apiserver started. etcd may still hold older revisions for exact
    /// reads; a watch from before this gets 410 "too old resource version".
    pub cache_start: u64,
}

/// The first resourceVersion; every mutation takes the next one.
pub(crate) const INITIAL_RV: u64 = 1000;

impl Store {
    pub(crate) fn new(resources: Vec<ResourceDef>) -> Self {
        Self {
            resources: resources.into_iter().map(Arc::new).collect(),
            objects: BTreeMap::new(),
            log: Vec::new(),
            rv: INITIAL_RV,
            compacted: INITIAL_RV,
            cache_start: INITIAL_RV,
        }
    }

    /// Looks a resource up by id (`configmaps`, `deployments.apps`), plural if unambiguous,
    /// or short name.
    pub(crate) fn resolve(&self, name: &str) -> Option<Arc<ResourceDef>> {
        if let Some(r) = self.resources.iter().find(|r| r.id() == name) {
            return Some(r.clone());
        }
        let mut hits = self
            .resources
            .iter()
            .filter(|r| r.plural == name || r.short_names.iter().any(|s| s == name));
        match (hits.next(), hits.next()) {
            (Some(r), None) => Some(r.clone()),
            _ => None,
        }
    }

    pub(crate) fn resolve_or_panic(&self, name: &str) -> Arc<ResourceDef> {
        self.resolve(name)
            .unwrap_or_else(|| panic!("fake apiserver: unknown resource {name:?}"))
    }

    pub(crate) fn by_path(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Option<Arc<ResourceDef>> {
        self.resources
            .iter()
            .find(|r| r.group == group && r.version == version && r.plural == plural)
            .cloned()
    }

    pub(crate) fn register(&mut self, def: ResourceDef) {
        self.resources
            .retain(|r| r.id() != def.id() || r.version != def.version);
        self.resources.push(Arc::new(def));
    }

    pub(crate) fn unregister(&mut self, id: &str, version: &str) {
        self.resources
            .retain(|r| r.id() != id || r.version != version);
    }

    pub(crate) fn key(def: &ResourceDef, namespace: &str, name: &str) -> String {
        if def.namespaced {
            format!("{namespace}/{name}")
        } else {
            name.to_owned()
        }
    }

    /// Fills in what the apiserver owns (type meta, namespace, uid, creationTimestamp,
    /// resourceVersion) and returns the key.
    fn normalise(def: &ResourceDef, obj: &mut Value, rv: u64, existing: Option<&Value>) -> String {
        let map = obj
            .as_object_mut()
            .unwrap_or_else(|| panic!("fake apiserver: object must be a JSON object"));
        map.insert("kind".into(), Value::String(def.kind.clone()));
        map.insert("apiVersion".into(), Value::String(def.api_version()));
        let meta = map
            .entry("metadata")
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .expect("metadata must be an object");
        let name = meta
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("fake apiserver: metadata.name is required"))
            .to_owned();
        let namespace = if def.namespaced {
            let ns = meta
                .get("namespace")
                .and_then(Value::as_str)
                .unwrap_or("default")
                .to_owned();
            meta.insert("namespace".into(), Value::String(ns.clone()));
            ns
        } else {
            meta.remove("namespace");
            String::new()
        };
        // Identity survives updates; a test may also pin it explicitly.
        for field in ["uid", "creationTimestamp"] {
            let kept = existing.and_then(|e| e.pointer(&format!("/metadata/{field}")).cloned());
            if let Some(v) = kept {
                meta.insert(field.into(), v);
            } else if !meta.contains_key(field) {
                let fresh = if field == "uid" {
                    json::new_uid()
                } else {
                    json::now_rfc3339()
                };
                meta.insert(field.into(), Value::String(fresh));
            }
        }
        meta.insert("resourceVersion".into(), Value::String(rv.to_string()));
        Self::key(def, &namespace, &name)
    }

    fn record(
        &mut self,
        def: &ResourceDef,
        key: String,
        ty: EventType,
        object: Value,
        prev: Option<Value>,
    ) {
        self.log.push(LogEntry {
            rv: self.rv,
            resource: def.id(),
            key,
            ty,
            object,
            prev,
            unwatched: false,
        });
    }

    /// Hides the latest mutation from watches (see [`LogEntry::unwatched`]).
    pub(crate) fn unwatch_last(&mut self) {
        if let Some(entry) = self.log.last_mut() {
            entry.unwatched = true;
        }
    }

    pub(crate) fn create(&mut self, def: &ResourceDef, mut obj: Value) -> u64 {
        let rv = self.rv + 1;
        let key = Self::normalise(def, &mut obj, rv, None);
        let objects = Arc::make_mut(self.objects.entry(def.id()).or_default());
        assert!(
            !objects.contains_key(&key),
            "fake apiserver: {} {key:?} already exists",
            def.id()
        );
        objects.insert(key.clone(), obj.clone());
        self.rv = rv;
        self.record(def, key, EventType::Added, obj, None);
        rv
    }

    pub(crate) fn update(&mut self, def: &ResourceDef, mut obj: Value) -> u64 {
        let rv = self.rv + 1;
        let probe_key = {
            let mut probe = obj.clone();
            Self::normalise(def, &mut probe, rv, None)
        };
        let prev = self
            .objects
            .get(&def.id())
            .and_then(|m| m.get(&probe_key))
            .cloned()
            .unwrap_or_else(|| panic!("fake apiserver: {} {probe_key:?} does not exist", def.id()));
        let key = Self::normalise(def, &mut obj, rv, Some(&prev));
        Arc::make_mut(self.objects.entry(def.id()).or_default()).insert(key.clone(), obj.clone());
        self.rv = rv;
        self.record(def, key, EventType::Modified, obj, Some(prev));
        rv
    }

    pub(crate) fn delete(&mut self, def: &ResourceDef, namespace: &str, name: &str) -> u64 {
        let key = Self::key(def, namespace, name);
        let prev = self
            .objects
            .get_mut(&def.id())
            .and_then(|m| Arc::make_mut(m).remove(&key))
            .unwrap_or_else(|| panic!("fake apiserver: {} {key:?} does not exist", def.id()));
        self.rv += 1;
        // The DELETED event carries the last state at the deletion's resourceVersion.
        let mut obj = prev.clone();
        obj["metadata"]["resourceVersion"] = Value::String(self.rv.to_string());
        self.record(def, key, EventType::Deleted, obj, Some(prev));
        self.rv
    }

    pub(crate) fn current(&self, def: &ResourceDef) -> Arc<BTreeMap<String, Value>> {
        self.objects.get(&def.id()).cloned().unwrap_or_default()
    }

    pub(crate) fn get(&self, def: &ResourceDef, key: &str) -> Option<Value> {
        self.objects
            .get(&def.id())
            .and_then(|m| m.get(key))
            .cloned()
    }

    /// The resource's objects as they were at `rv` (which must be `>= compacted`): the current
    /// state with every later mutation undone, newest first.
    pub(crate) fn state_at(&self, def: &ResourceDef, rv: u64) -> Arc<BTreeMap<String, Value>> {
        let id = def.id();
        let later: Vec<&LogEntry> = self
            .events_after(rv)
            .iter()
            .rev()
            .filter(|e| e.resource == id)
            .collect();
        let mut state = self.current(def);
        if later.is_empty() {
            return state;
        }
        let undo = Arc::make_mut(&mut state);
        for e in later {
            match &e.prev {
                Some(p) => undo.insert(e.key.clone(), p.clone()),
                None => undo.remove(&e.key),
            };
        }
        state
    }

    /// The oldest resourceVersion a watch can start from: the watch cache holds no events from
    /// before it was built, nor any that etcd compacted away.
    pub(crate) fn watch_floor(&self) -> u64 {
        self.compacted.max(self.cache_start)
    }

    /// All logged mutations with a resourceVersion above `rv`, oldest first.
    pub(crate) fn events_after(&self, rv: u64) -> &[LogEntry] {
        let start = self.log.partition_point(|e| e.rv <= rv);
        &self.log[start..]
    }
}
