mod support;

use support::fake_apiserver::FakeApiServer;

#[tokio::test]
async fn smoke() {
    let s = FakeApiServer::start().await;
    let _ = s.url();
}
