//! The fake API server over TLS ([`FakeApiServer::start_tls`](super::FakeApiServer::start_tls)),
//! for kubectl's TLS flags through the binary. The certificates are committed under
//! `tests/fixtures/tls/` (valid for 100 years; `generate.sh` there makes them again): a CA,
//! server certificates signed by it and a client certificate. A client certificate is optional,
//! as with kube-apiserver's `--client-ca-file`; whether a request came with one (verified against
//! the CA) is recorded in [`Request::client_certificate`](super::Request::client_certificate).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::RootCertStore;
use rustls::server::WebPkiClientVerifier;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

/// Which certificate the server presents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerCertificate {
    /// For `127.0.0.1` and `localhost`: the server's URL verifies.
    Loopback,
    /// Only for the name `apiserver.test` ([`NAMED_HOST`]): reached at `127.0.0.1`, it verifies
    /// only when the client asks for that name (`--tls-server-name`).
    Named,
}

/// The name in [`ServerCertificate::Named`].
pub const NAMED_HOST: &str = "apiserver.test";

/// A file of `tests/fixtures/tls/`: `ca.pem`, `client.pem`, `client.key`, ….
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/tls")
        .join(name)
}

fn certificates(name: &str) -> Vec<CertificateDer<'static>> {
    CertificateDer::pem_file_iter(fixture(name))
        .and_then(|certs| certs.collect())
        .unwrap_or_else(|e| panic!("fake apiserver: read {name}: {e}"))
}

/// A TLS acceptor presenting `certificate`, and verifying client certificates against the test
/// CA when one is offered.
pub(crate) fn acceptor(certificate: ServerCertificate) -> TlsAcceptor {
    let name = match certificate {
        ServerCertificate::Loopback => "server",
        ServerCertificate::Named => "server-named",
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = RootCertStore::empty();
    for ca in certificates("ca.pem") {
        roots.add(ca).expect("fake apiserver: the test CA");
    }
    let clients = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .allow_unauthenticated()
        .build()
        .expect("fake apiserver: client verifier");
    let key = PrivateKeyDer::from_pem_file(fixture(&format!("{name}.key")))
        .expect("fake apiserver: the server key");
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("fake apiserver: TLS versions")
        .with_client_cert_verifier(clients)
        .with_single_cert(certificates(&format!("{name}.pem")), key)
        .expect("fake apiserver: the server certificate");
    // HTTP/1.1 only, as the rest of the fake.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    TlsAcceptor::from(Arc::new(config))
}
