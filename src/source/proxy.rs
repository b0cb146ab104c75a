//! Which proxy requests to the API server go through, chosen as kubectl chooses it, and URLs
//! written without their credentials.
//!
//! kubectl (client-go) takes the cluster's `proxy-url` from the kubeconfig when it has one
//! (`clientcmd.DirectClientConfig.ClientConfig`: `http.ProxyURL`, no other rule applies).
//! Otherwise its transport asks Go's `http.ProxyFromEnvironment` (`golang.org/x/net/http/httpproxy`
//! `config.proxyForURL` and `useProxy`): `HTTPS_PROXY` for an `https://` server, `HTTP_PROXY` for an
//! `http://` one (each upper case first, then lower case), unless `NO_PROXY` covers the server, and
//! never for `localhost` or a loopback address. [`ProxyEnv::proxy_for`] reproduces both.
//!
//! kube reads `HTTPS_PROXY` and `NO_PROXY` itself, with rules of its own (it matches `NO_PROXY`
//! against the proxy rather than the server, and ignores `HTTP_PROXY`); [`ClusterAccess`] replaces
//! kube's choice with this one.
//!
//! [`ClusterAccess`]: super::cluster::ClusterAccess

use std::net::IpAddr;

use http::Uri;

/// The proxy variables of the environment, read once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProxyEnv {
    /// `HTTP_PROXY`, else `http_proxy`.
    pub http_proxy: Option<String>,
    /// `HTTPS_PROXY`, else `https_proxy`.
    pub https_proxy: Option<String>,
    /// `NO_PROXY`, else `no_proxy`.
    pub no_proxy: Option<String>,
}

/// Where the proxy in use came from, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxySource {
    /// The kubeconfig cluster's `proxy-url`.
    Kubeconfig,
    /// `HTTPS_PROXY` (or `https_proxy`).
    HttpsProxy,
    /// `HTTP_PROXY` (or `http_proxy`).
    HttpProxy,
}

impl std::fmt::Display for ProxySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ProxySource::Kubeconfig => "the kubeconfig's proxy-url",
            ProxySource::HttpsProxy => "HTTPS_PROXY",
            ProxySource::HttpProxy => "HTTP_PROXY",
        })
    }
}

/// The proxy requests go through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proxy {
    /// Its URL, credentials included (kube sends them as `Proxy-Authorization`).
    pub url: Uri,
    /// Where it was configured.
    pub source: ProxySource,
}

impl Proxy {
    /// The URL without its credentials, for messages and logs.
    pub fn redacted(&self) -> String {
        let url = redact(&self.url.to_string());
        match url.strip_suffix('/') {
            Some(bare) if self.url.path() == "/" => bare.to_owned(),
            _ => url,
        }
    }
}

/// The kubeconfig's `proxy-url` cannot be used. Its text never includes the URL's credentials.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProxyError {
    /// Not a URL.
    #[error("the kubeconfig's proxy-url {url:?} is not a URL")]
    NotAUrl {
        /// The value, redacted.
        url: String,
    },
    /// A scheme client-go does not take either.
    #[error(
        "the kubeconfig's proxy-url {url} has scheme {scheme:?}; like kubectl, kubectl-deltas \
         takes http, https and socks5 proxies"
    )]
    UnsupportedScheme {
        /// The value, redacted.
        url: String,
        /// Its scheme.
        scheme: String,
    },
}

impl ProxyEnv {
    /// Reads `HTTP_PROXY`, `HTTPS_PROXY` and `NO_PROXY`, each in upper case first, an empty value
    /// counting as unset (Go's `httpproxy.FromEnvironment`).
    pub fn from_env() -> Self {
        let any = |names: [&str; 2]| {
            names
                .into_iter()
                .filter_map(|name| std::env::var(name).ok())
                .find(|value| !value.is_empty())
        };
        ProxyEnv {
            http_proxy: any(["HTTP_PROXY", "http_proxy"]),
            https_proxy: any(["HTTPS_PROXY", "https_proxy"]),
            no_proxy: any(["NO_PROXY", "no_proxy"]),
        }
    }

    /// The proxy for requests to `server`: the kubeconfig's `proxy-url` if it has one, else the
    /// environment's (see the module documentation). `None`: connect directly.
    pub fn proxy_for(
        &self,
        server: &Uri,
        kubeconfig_proxy: Option<&str>,
    ) -> Result<Option<Proxy>, ProxyError> {
        if let Some(text) = kubeconfig_proxy.filter(|t| !t.is_empty()) {
            return kubeconfig_proxy_url(text).map(|url| {
                Some(Proxy {
                    url,
                    source: ProxySource::Kubeconfig,
                })
            });
        }
        let (value, source) = match server.scheme_str() {
            Some("https") => (&self.https_proxy, ProxySource::HttpsProxy),
            Some("http") => (&self.http_proxy, ProxySource::HttpProxy),
            _ => return Ok(None),
        };
        let Some(value) = value else { return Ok(None) };
        let Some(url) = env_proxy_url(value) else {
            // Go ignores a value it cannot read, and connects directly.
            tracing::warn!("{source} is not a proxy URL; connecting directly, as kubectl does");
            return Ok(None);
        };
        let Some(host) = server.host() else {
            return Ok(None);
        };
        let port = server
            .port_u16()
            .unwrap_or(if source == ProxySource::HttpsProxy {
                443
            } else {
                80
            });
        if bypasses_proxy(host, port, self.no_proxy.as_deref().unwrap_or("")) {
            return Ok(None);
        }
        Ok(Some(Proxy { url, source }))
    }
}

/// clientcmd's `parseProxyURL`: a URL with scheme http, https or socks5.
fn kubeconfig_proxy_url(text: &str) -> Result<Uri, ProxyError> {
    let url: Uri = text
        .parse()
        .map_err(|_| ProxyError::NotAUrl { url: redact(text) })?;
    match url.scheme_str() {
        Some("http" | "https" | "socks5") if url.host().is_some() => Ok(url),
        Some(scheme) => Err(ProxyError::UnsupportedScheme {
            url: redact(text),
            scheme: scheme.to_owned(),
        }),
        None => Err(ProxyError::NotAUrl { url: redact(text) }),
    }
}

/// httpproxy's `parseProxy`: a URL with scheme http, https or socks5, or else `http://` + the
/// value (`proxy.corp:3128`); `None` if neither reads.
fn env_proxy_url(value: &str) -> Option<Uri> {
    let usable = |url: &Uri| url.host().is_some_and(|h| !h.is_empty());
    match value.parse::<Uri>() {
        Ok(url) if matches!(url.scheme_str(), Some("http" | "https" | "socks5")) => {
            usable(&url).then_some(url)
        }
        _ => format!("http://{value}").parse::<Uri>().ok().filter(usable),
    }
}

/// httpproxy's `useProxy`, negated: whether a request to `host:port` goes direct. `localhost` and
/// loopback addresses always do; otherwise `no_proxy` decides, a comma-separated list of `*`
/// (everything), IP addresses and CIDR ranges, and domain names, each optionally with `:port`. A
/// domain matches itself and its subdomains; with a leading `.` (or `*.`), only its subdomains.
fn bypasses_proxy(host: &str, port: u16, no_proxy: &str) -> bool {
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    let ip = host.parse::<IpAddr>().ok();
    if host == "localhost" || ip.is_some_and(|ip| ip.is_loopback()) {
        return true;
    }
    let port = port.to_string();
    for entry in no_proxy.split(',') {
        let entry = entry.trim().to_ascii_lowercase();
        if entry.is_empty() {
            continue;
        }
        if entry == "*" {
            return true;
        }
        if let Ok(net) = entry.parse::<ipnet::IpNet>() {
            if ip.is_some_and(|ip| net.contains(&ip)) {
                return true;
            }
            continue;
        }
        let (entry_host, entry_port) = match split_host_port(&entry) {
            Some((h, p)) => (h.trim_start_matches('[').trim_end_matches(']'), Some(p)),
            None => (entry.as_str(), None),
        };
        let port_matches = entry_port.is_none_or(|p| p == port);
        if let Ok(entry_ip) = entry_host.parse::<IpAddr>() {
            if ip == Some(entry_ip) && port_matches {
                return true;
            }
            continue;
        }
        if entry_host.is_empty() {
            continue;
        }
        let entry_host = entry_host.strip_prefix('*').unwrap_or(entry_host);
        let matches = match entry_host.strip_prefix('.') {
            Some(_) => host.ends_with(entry_host),
            None => host == entry_host || host.ends_with(&format!(".{entry_host}")),
        };
        if matches && port_matches {
            return true;
        }
    }
    false
}

/// Go's `net.SplitHostPort`: `host:port` or `[v6]:port`; `None` without a port (or for a bare
/// IPv6 address, whose colons are not a port).
fn split_host_port(text: &str) -> Option<(&str, &str)> {
    if text.starts_with('[') {
        let end = text.find(']')?;
        let port = text[end + 1..].strip_prefix(':')?;
        return Some((&text[..=end], port));
    }
    let (host, port) = text.rsplit_once(':')?;
    (!host.contains(':')).then_some((host, port))
}

/// `url` without the credentials of its authority: `http://user:pass@proxy:3128` becomes
/// `http://***@proxy:3128`. Go's `URL.Redacted` keeps the user name; a token is often passed as
/// one, so here the whole user part goes.
pub fn redact(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (Some(scheme), rest),
        None => (None, url),
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let Some((_, host)) = authority.rsplit_once('@') else {
        return url.to_owned();
    };
    match scheme {
        Some(scheme) => format!("{scheme}://***@{host}{tail}"),
        None => format!("***@{host}{tail}"),
    }
}

/// `url` without its user part, for handing to the HTTP client: the client never uses it (the
/// kubeconfig's user does the authentication), and kube's `-vv` logs print request URLs whole.
pub fn without_credentials(url: &Uri) -> Uri {
    let Some(authority) = url.authority() else {
        return url.clone();
    };
    let Some((_, host)) = authority.as_str().rsplit_once('@') else {
        return url.clone();
    };
    let mut parts = url.clone().into_parts();
    parts.authority = host.parse().ok();
    Uri::from_parts(parts).unwrap_or_else(|_| url.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(https: Option<&str>, http: Option<&str>, no_proxy: Option<&str>) -> ProxyEnv {
        ProxyEnv {
            https_proxy: https.map(str::to_owned),
            http_proxy: http.map(str::to_owned),
            no_proxy: no_proxy.map(str::to_owned),
        }
    }

    fn proxy(env: &ProxyEnv, server: &str) -> Option<String> {
        env.proxy_for(&server.parse().unwrap(), None)
            .unwrap()
            .map(|p| p.url.to_string())
    }

    #[test]
    fn the_servers_scheme_picks_the_variable() {
        let e = env(Some("http://s:1"), Some("http://p:2"), None);
        assert_eq!(
            proxy(&e, "https://api.example.com:6443").as_deref(),
            Some("http://s:1/")
        );
        assert_eq!(
            proxy(&e, "http://api.example.com").as_deref(),
            Some("http://p:2/")
        );
        let only_https = env(Some("http://s:1"), None, None);
        assert_eq!(proxy(&only_https, "http://api.example.com"), None);
    }

    #[test]
    fn a_bare_host_and_port_is_an_http_proxy() {
        let e = env(Some("proxy.corp:3128"), None, None);
        assert_eq!(
            proxy(&e, "https://api.example.com").as_deref(),
            Some("http://proxy.corp:3128/")
        );
        let socks = env(Some("socks5://127.0.0.1:1080"), None, None);
        assert_eq!(
            proxy(&socks, "https://api.example.com").as_deref(),
            Some("socks5://127.0.0.1:1080/")
        );
        let nonsense = env(Some("http://a b"), None, None);
        assert_eq!(proxy(&nonsense, "https://api.example.com"), None);
    }

    #[test]
    fn loopback_and_localhost_are_never_proxied() {
        let e = env(Some("http://s:1"), Some("http://p:2"), None);
        for server in [
            "https://127.0.0.1:6443",
            "http://127.3.2.1",
            "https://[::1]:6443",
            "https://localhost:6443",
            "https://LOCALHOST",
        ] {
            assert_eq!(proxy(&e, server), None, "{server}");
        }
    }

    #[test]
    fn no_proxy_matches_as_go_does() {
        let direct = |no_proxy: &str, server: &str| {
            bypasses_proxy(
                server.rsplit_once(':').map_or(server, |(h, _)| h),
                server
                    .rsplit_once(':')
                    .map_or(443, |(_, p)| p.parse().unwrap()),
                no_proxy,
            )
        };
        // Domains: the name and its subdomains; a leading `.` or `*.`: subdomains only.
        assert!(direct("example.com", "example.com:443"));
        assert!(direct("example.com", "api.example.com:443"));
        assert!(!direct("example.com", "notexample.com:443"));
        assert!(direct(".example.com", "api.example.com:443"));
        assert!(!direct(".example.com", "example.com:443"));
        assert!(direct("*.example.com", "api.example.com:443"));
        assert!(direct("EXAMPLE.com", "Api.Example.COM:443"));
        // Ports.
        assert!(direct("example.com:6443", "api.example.com:6443"));
        assert!(!direct("example.com:6443", "api.example.com:443"));
        // Addresses and ranges.
        assert!(direct("10.0.0.1", "10.0.0.1:6443"));
        assert!(!direct("10.0.0.1", "10.0.0.2:6443"));
        assert!(direct("10.0.0.1:6443", "10.0.0.1:6443"));
        assert!(!direct("10.0.0.1:443", "10.0.0.1:6443"));
        assert!(direct("10.0.0.0/8", "10.20.30.40:6443"));
        assert!(!direct("10.0.0.0/8", "11.0.0.1:6443"));
        assert!(direct("fd00::/8", "[fd00::1]:6443"));
        assert!(direct("[fd00::1]:6443", "[fd00::1]:6443"));
        // Lists, spaces, empty entries (Go skips them) and the wildcard.
        assert!(direct(" a.com , , example.com,", "example.com:443"));
        assert!(direct("*", "anything.at.all:443"));
        assert!(!direct("", "example.com:443"));
    }

    #[test]
    fn no_proxy_is_checked_against_the_server_not_the_proxy() {
        let e = env(Some("http://proxy.corp:3128"), None, Some("proxy.corp"));
        assert!(proxy(&e, "https://api.example.com").is_some());
        let e = env(Some("http://proxy.corp:3128"), None, Some(".example.com"));
        assert_eq!(proxy(&e, "https://api.example.com"), None);
    }

    #[test]
    fn the_kubeconfig_proxy_wins_over_the_environment_and_no_proxy() {
        let e = env(Some("http://s:1"), None, Some("*"));
        let chosen = e
            .proxy_for(
                &"https://127.0.0.1:6443".parse().unwrap(),
                Some("socks5://u:p@127.0.0.1:1080"),
            )
            .unwrap()
            .unwrap();
        assert_eq!(chosen.source, ProxySource::Kubeconfig);
        assert_eq!(chosen.url.to_string(), "socks5://u:p@127.0.0.1:1080/");
        assert_eq!(chosen.redacted(), "socks5://***@127.0.0.1:1080");

        let err = e
            .proxy_for(
                &"https://a".parse().unwrap(),
                Some("ftp://me:secret@host:21"),
            )
            .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("\"ftp\"") && !text.contains("secret"),
            "{text}"
        );
        let err = e
            .proxy_for(&"https://a".parse().unwrap(), Some("host:3128"))
            .unwrap_err();
        assert!(matches!(err, ProxyError::NotAUrl { .. }), "{err}");
    }

    #[test]
    fn credentials_never_reach_a_message() {
        assert_eq!(
            redact("http://user:pass@127.0.0.1:9/"),
            "http://***@127.0.0.1:9/"
        );
        assert_eq!(redact("https://token@h/p?q=a@b"), "https://***@h/p?q=a@b");
        assert_eq!(redact("https://h:1/p@x"), "https://h:1/p@x");
        assert_eq!(redact("user:pass@h:1"), "***@h:1");
        let url: Uri = "https://admin:hunter2@api.example.com:6443/"
            .parse()
            .unwrap();
        assert_eq!(
            without_credentials(&url).to_string(),
            "https://api.example.com:6443/"
        );
    }
}
