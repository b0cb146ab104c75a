//! The fake API server with ConfigMaps in `default`, where most live tests start.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::fake_apiserver::FakeApiServer;

/// A ConfigMap `default/NAME` whose one data key `k` holds `value`.
pub fn cm(name: &str, value: &str) -> Value {
    json!({"metadata": {"name": name, "namespace": "default"}, "data": {"k": value}})
}

/// A fake API server holding `n` ConfigMaps (`cm-0`…), and a kubeconfig for it in a temporary
/// directory (kept as long as the `TempDir` lives).
pub async fn server_with_configmaps(n: usize) -> (FakeApiServer, tempfile::TempDir, PathBuf) {
    let server = FakeApiServer::start().await;
    for i in 0..n {
        server.create("configmaps", cm(&format!("cm-{i}"), "v"));
    }
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = server.write_kubeconfig(dir.path());
    (server, dir, kubeconfig)
}
