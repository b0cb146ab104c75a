//! The HTTP client every request to the API server goes through: kube's own stack, layer for
//! layer (kube-client 5.0.0 `client/builder.rs`, `ClientBuilder::try_from` and
//! `make_generic_builder`: proxy, TLS, timeouts, base URI, auth, extra headers, tracing), on a TCP
//! connector that sets `TCP_NODELAY` on every socket it opens.
//!
//! kube's builder opens its sockets with Nagle's algorithm on (hyper-util's `HttpConnector`
//! default; kube-rs/kube#2056). A request then goes out as a small TLS write right after the
//! handshake's last flight, and Nagle holds it until the server's delayed ACK: about 40 ms on
//! every new connection, most of the start-up time on a loopback apiserver. client-go never waits
//! so: Go sets `TCP_NODELAY` on every TCP connection it makes (`net/tcpsock.go`, `newTCPConn`).
//! The tool writes each request whole and never benefits from coalescing small writes.
//!
//! kube's builder takes no connector of its own, hence the copy. What it leaves out: the retry
//! layer (the Reflector owns retries, see [`client_without_retry`]) and the expiry of an exec
//! plugin's client certificate (`Client::valid_until`, which only a caller that reads it uses; the
//! certificate itself is still presented: `ConfigExt::rustls_client_config` takes it).
//!
//! [`client_without_retry`]: super::kube_api::client_without_retry

use std::time::Duration;

use http::{HeaderMap, HeaderValue, Request, Response, Uri};
use hyper::body::Incoming;
use hyper::rt::{Read, Write};
use hyper_timeout::TimeoutConnector;
use hyper_util::client::legacy::connect::proxy::{SocksV5, Tunnel};
use hyper_util::client::legacy::connect::{Connection, HttpConnector};
use hyper_util::rt::TokioExecutor;
use kube::client::{Body, ConfigExt};
use kube::{Client, Config};
use tower::{BoxError, Service, ServiceBuilder};
use tower_http::classify::ServerErrorsFailureClass;
use tower_http::trace::TraceLayer;
use tracing::Span;

/// The target of the request log, as kube's own stack logs it: the binary shows it from `-vv` on
/// (`kube=debug`) and never by default, where every failed request would be logged at ERROR
/// beside the sentence the Reflector already says about it.
const KUBE_TARGET: &str = "kube_client::client::builder";

/// The TCP connector under everything: any scheme (TLS is layered on top), `TCP_NODELAY` set.
pub fn tcp_connector() -> HttpConnector {
    let mut connector = HttpConnector::new();
    connector.enforce_http(false);
    connector.set_nodelay(true);
    connector
}

/// A `kube::Client` for `config` as kube's `Client::try_from` builds it, on [`tcp_connector`], with
/// the proxy of `config.proxy_url` (`socks5`, `http` or `https`, as kube takes them). Retries are
/// not part of it, whatever `config.default_retry` says.
pub fn client(config: Config) -> Result<Client, kube::Error> {
    let tcp = tcp_connector();
    match config.proxy_url.clone() {
        None => with_layers(config, tcp),
        Some(proxy) => match proxy.scheme_str() {
            Some("socks5") => with_layers(config, SocksV5::new(proxy, tcp)),
            Some("http") => {
                let tunnel = with_basic_auth(&proxy, Tunnel::new(proxy.clone(), tcp));
                with_layers(config, tunnel)
            }
            Some("https") => {
                let tls = config.rustls_https_connector_with_connector(tcp)?;
                let tunnel = with_basic_auth(&proxy, Tunnel::new(proxy.clone(), tls));
                with_layers(config, tunnel)
            }
            _ => Err(kube::Error::ProxyProtocolUnsupported {
                proxy_url: Box::new(proxy),
            }),
        },
    }
}

/// kube's `with_proxy_basic_auth`: the proxy URL's user part, percent-decoded, as
/// `Proxy-Authorization: Basic …`.
fn with_basic_auth<C>(proxy: &Uri, tunnel: Tunnel<C>) -> Tunnel<C> {
    use base64::Engine as _;
    let Some((userinfo, _)) = proxy.authority().and_then(|a| a.as_str().split_once('@')) else {
        return tunnel;
    };
    let plain: Vec<u8> = percent_encoding::percent_decode_str(userinfo).collect();
    let value = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(plain)
    );
    match HeaderValue::from_str(&value) {
        Ok(header) => tunnel.with_auth(header),
        Err(_) => tunnel,
    }
}

/// kube's `make_generic_builder` on `connector`: TLS, the timeouts of `config`, then the base
/// URI, auth, extra headers (impersonation) and tracing layers.
fn with_layers<C>(config: Config, connector: C) -> Result<Client, kube::Error>
where
    C: Service<Uri> + Clone + Send + Sync + 'static,
    C::Response: Connection + Read + Write + Send + Unpin + 'static,
    C::Future: Send + 'static,
    C::Error: std::error::Error + Send + Sync + 'static,
{
    let connector = config.rustls_https_connector_with_connector(connector)?;
    let mut connector = TimeoutConnector::new(connector);
    connector.set_connect_timeout(config.connect_timeout);
    connector.set_read_timeout(config.read_timeout);
    connector.set_write_timeout(config.write_timeout);
    connector.set_reset_reader_on_write(config.reset_reader_on_write);
    let http: hyper_util::client::legacy::Client<_, Body> =
        hyper_util::client::legacy::Builder::new(TokioExecutor::new()).build(connector);

    let trace = TraceLayer::new_for_http()
        .make_span_with(|req: &Request<Body>| {
            tracing::debug_span!(
                target: KUBE_TARGET,
                "HTTP",
                http.method = %req.method(),
                http.url = %req.uri(),
                http.status_code = tracing::field::Empty,
                otel.name = req.extensions().get::<&'static str>().unwrap_or(&"HTTP"),
                otel.kind = "client",
                otel.status_code = tracing::field::Empty,
            )
        })
        .on_request(|_: &Request<Body>, _: &Span| tracing::debug!(target: KUBE_TARGET, "requesting"))
        .on_response(|res: &Response<Incoming>, _: Duration, span: &Span| {
            let status = res.status();
            span.record("http.status_code", status.as_u16());
            if status.is_client_error() || status.is_server_error() {
                span.record("otel.status_code", "ERROR");
            }
        })
        .on_body_chunk(())
        .on_eos(|_: Option<&HeaderMap>, _: Duration, _: &Span| tracing::debug!(target: KUBE_TARGET, "stream closed"))
        .on_failure(
            |class: ServerErrorsFailureClass, _: Duration, span: &Span| {
                span.record("otel.status_code", "ERROR");
                match class {
                    ServerErrorsFailureClass::StatusCode(status) => {
                        span.record("http.status_code", status.as_u16());
                        tracing::error!(target: KUBE_TARGET, "failed with status {}", status)
                    }
                    ServerErrorsFailureClass::Error(err) => {
                        tracing::error!(target: KUBE_TARGET, "failed with error {}", err)
                    }
                }
            },
        );

    let default_namespace = config.default_namespace.clone();
    let service = ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(config.auth_layer()?)
        .layer(config.extra_headers_layer()?)
        .layer(trace)
        .map_err(BoxError::from)
        .service(http);
    Ok(Client::new(service, default_namespace))
}
