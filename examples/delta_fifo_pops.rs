//! A DeltaFIFO fed by a Reflector on kube's client, printing every pop: what client-go's
//! `controller.processLoop` sees, for any resource of the cluster your kubeconfig points at.
//!
//! ```text
//! cargo run --example delta_fifo_pops -- configmaps default
//! ```
//!
//! The Reflector lists and watches (`KubeListerWatcher`, a `ListerWatcher` on a `kube::Client`),
//! writes into the queue through the producer contract every queue implements
//! (`ReflectorStore`), and a consumer thread pops it into an `Indexer` with a `ProcessLoop`, as
//! `processDeltas` does. Ctrl-C ends it.

use std::sync::Arc;

use kube::api::ApiResource;
use kube::discovery::{self, Scope};
use kubectl_deltas::cache::{
    DeltaFifo, Indexer, InformerQueue, ProcessLoop, Reflector, ReflectorConfig,
};
use kubectl_deltas::source::KubeListerWatcher;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let plural = args.next().unwrap_or_else(|| "configmaps".to_owned());
    let namespace = args.next();

    let client = kube::Client::try_default().await?;
    // kube's discovery turns a plural into the resource's group, version and kind.
    let discovery = discovery::Discovery::new(client.clone()).run().await?;
    let (resource, capabilities): (ApiResource, _) = discovery
        .groups()
        .flat_map(|group| group.recommended_resources())
        .find(|(resource, _)| resource.plural == plural)
        .ok_or_else(|| anyhow::anyhow!("the server has no resource named {plural:?}"))?;
    let namespace = match capabilities.scope {
        Scope::Namespaced => namespace.as_deref(),
        Scope::Cluster => None,
    };

    let indexer = Indexer::new();
    let fifo = Arc::new(DeltaFifo::new().known_objects(Arc::new(indexer.reader())));
    let lister_watcher = KubeListerWatcher::new(client, &resource, namespace);
    let reflector = Reflector::new(lister_watcher, fifo.clone(), ReflectorConfig::default());

    // The consumer: client-go's processLoop, on a thread of its own (a pop blocks).
    let consumer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut controller = ProcessLoop::new(fifo, indexer);
            while let Some(batch) = controller.process_next() {
                let types: Vec<String> = batch
                    .deltas
                    .iter()
                    .map(|delta| format!("{:?}", delta.type_))
                    .collect();
                println!(
                    "#{:<4} {:<40} {:<30} initial={} cached={}",
                    batch.seq,
                    batch.key.as_deref().unwrap_or("(whole list)"),
                    types.join(","),
                    batch.is_in_initial_list,
                    controller.indexer().len(),
                );
            }
        })
    };

    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let result = reflector.run(ctrl_c).await;
    // The caller owns the queue: closing it lets the consumer drain what is queued and stop.
    fifo.close();
    consumer.join().expect("the consumer thread ended cleanly");
    Ok(result?)
}
