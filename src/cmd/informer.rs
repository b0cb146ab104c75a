//! What every informer-running command shares: flags → indices, Reflector configuration and the
//! kube ListerWatcher, and how a Reflector failure maps to an exit code.

use kubectl_deltas::Object;
use kubectl_deltas::cache::{IndexSpec, Indexer, ReflectorConfig, ReflectorError};
use kubectl_deltas::source::KubeListerWatcher;

use super::target::Target;
use crate::cli::exit::{Exit, Failure, WithExit};
use crate::cli::{AccessArgs, InformerArgs, ReflectorArgs};

/// The `--index` specs, parsed (a bad spec is a usage error) and without repeats.
pub fn index_specs(informer: &InformerArgs) -> anyhow::Result<Vec<IndexSpec>> {
    let mut specs: Vec<IndexSpec> = Vec::new();
    for text in &informer.indices {
        let spec: IndexSpec = text.parse().exit_with(Exit::Usage)?;
        if !specs.contains(&spec) {
            specs.push(spec);
        }
    }
    Ok(specs)
}

/// An Indexer with the given indices.
pub fn indexer_with(specs: &[IndexSpec]) -> Indexer<Object> {
    let indexer = Indexer::new();
    for spec in specs {
        // Index names are the specs' canonical text, unique after `index_specs`.
        let _ = indexer.add_indexer(spec.name(), spec.index_func());
    }
    indexer
}

pub fn lister_watcher(
    target: &Target,
    access: &AccessArgs,
    name: Option<&str>,
) -> KubeListerWatcher {
    let mut lw = KubeListerWatcher::new(
        target.connection.client.clone(),
        &target.resource.api_resource(),
        target.namespace.as_deref(),
    );
    if let Some(labels) = &access.selector {
        lw = lw.labels(labels.clone());
    }
    // `watch pods web-1` narrows the watch to one object, as `kubectl get pods web-1 -w` does.
    let fields: Vec<String> = access
        .field_selector
        .iter()
        .cloned()
        .chain(name.into_iter().map(|name| format!("metadata.name={name}")))
        .collect();
    if !fields.is_empty() {
        lw = lw.fields(fields.join(","));
    }
    lw
}

pub fn reflector_config(reflector: &ReflectorArgs, informer: &InformerArgs) -> ReflectorConfig {
    let mut config = ReflectorConfig::default()
        .page_size(reflector.page_size)
        .consistent_list(reflector.consistent_list)
        .watch_list(reflector.watch_list);
    if let Some(timeout) = reflector.watch_timeout.0 {
        config = config.watch_timeout(timeout);
    }
    if let Some(period) = informer.resync.0 {
        config = config.resync(period);
    }
    if let Some(period) = reflector.verify_every.0 {
        config = config.verify_every(period);
    }
    if !reflector.no_strip_managed_fields {
        config = config.transform(|obj: &mut Object| obj.metadata.managed_fields = None);
    }
    config
}

/// 401 and 403 are the user's access problem; anything else the Reflector gives up on is a runtime
/// error.
pub fn reflector_failure(error: ReflectorError, target: &Target) -> anyhow::Error {
    reflector_failure_while("watching", error, target)
}

/// [`reflector_failure`] for a command that does something else than watching (`listing`).
pub fn reflector_failure_while(
    doing: &str,
    error: ReflectorError,
    target: &Target,
) -> anyhow::Error {
    let exit = if error.source_error().is_auth() {
        Exit::ClusterAccess
    } else {
        Exit::Runtime
    };
    let error = anyhow::Error::new(error).context(format!("{doing} {} failed", target.describe()));
    Failure { exit, error }.into()
}
