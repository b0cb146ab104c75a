//! A shared informer with two handlers and an index, on kube's client: what
//! `NewSharedIndexInformer` + `AddEventHandler` + `GetIndexer().ByIndex` give a Go controller.
//!
//! ```text
//! cargo run --example shared_informer_handlers -- app=web default
//! ```
//!
//! Both handlers receive every notification from their own buffer, on their own thread: `audit`
//! prints them, `slow` takes 200 ms a call, so its buffer grows while `audit` keeps up (neither
//! blocks the queue). Once the informer has synced, the `label:app` index answers which pods carry
//! the label value given, and the informer keeps running until Ctrl-C.

use std::sync::Arc;
use std::time::Duration;

use kube::api::ApiResource;
use kubectl_deltas::Object;
use kubectl_deltas::cache::{
    ConsumerGroup, Delivery, IndexSpec, Informer, InformerConfig, InformerKind, NoSink,
    Notification, ReflectorConfig, TokioClock,
};
use kubectl_deltas::source::KubeListerWatcher;
use tokio_util::sync::CancellationToken;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let (label, value) = args
        .next()
        .unwrap_or_else(|| "app=web".to_owned())
        .split_once('=')
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .ok_or_else(|| anyhow::anyhow!("give the label as KEY=VALUE"))?;
    let namespace = args.next();

    let index: IndexSpec = format!("label:{label}").parse()?;
    let index_name = index.name();
    let config = InformerConfig {
        kind: InformerKind::Shared,
        indices: vec![index],
        ..InformerConfig::default()
    };
    let cancel = CancellationToken::new();
    let informer = Informer::new(
        config,
        Arc::new(NoSink),
        Arc::new(ConsumerGroup::default()),
        cancel.clone(),
    );

    // Two handlers, each with its own buffer and thread (client-go's processorListener).
    informer.add_event_handler(
        "audit",
        |d: &Delivery<'_, Object>| {
            let (verb, obj) = match d.notification {
                Notification::Add { obj, .. } => ("add", Some(obj)),
                Notification::Update { new, .. } => ("update", Some(new)),
                Notification::Delete { obj } => ("delete", obj.object()),
            };
            let name = obj.and_then(|o| o.name()).unwrap_or("?");
            println!(
                "audit: {verb} {name} (sync: {}, waited {:?})",
                d.is_sync,
                d.waited()
            );
        },
        None,
    );
    informer.add_event_handler(
        "slow",
        |d: &Delivery<'_, Object>| {
            std::thread::sleep(Duration::from_millis(200));
            println!(
                "slow: batch #{} ({} still buffered behind it)",
                d.batch, d.depth
            );
        },
        None,
    );

    let client = kube::Client::try_default().await?;
    let pods = ApiResource::erase::<k8s_openapi::api::core::v1::Pod>(&());
    let lister_watcher = KubeListerWatcher::new(client, &pods, namespace.as_deref());

    let run = {
        let informer = informer.clone();
        let cancel = cancel.clone();
        tokio::spawn(async move {
            let until = cancel.cancelled_owned();
            informer
                .run(
                    lister_watcher,
                    ReflectorConfig::default(),
                    TokioClock,
                    until,
                )
                .await
        })
    };

    informer.synced().await;
    let matching = informer.indexer().index_keys(&index_name, &value)?;
    println!(
        "synced: {} pods cached, {} with {label}={value}: {matching:?}",
        informer.indexer().len(),
        matching.len()
    );

    let _ = tokio::signal::ctrl_c().await;
    cancel.cancel();
    let result = run.await?;
    // Closes the queue, stops the consumer and the handler threads (abandoning their buffers).
    informer.shut_down().await;
    Ok(result?)
}
