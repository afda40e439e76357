//! The HTTP client of a URL upstream: rustls with the system roots plus `--ca-file`, the
//! proxy of `HTTPS_PROXY`/`ALL_PROXY` unless `NO_PROXY` names the host (a loopback host is
//! never proxied), no redirects followed by the client itself: the POST loop follows a
//! same-origin 307/308 where it builds the headers (`signed::send_signed`), so that no header
//! ever reaches another origin.

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use url::{Host, Url};

use super::HttpSpec;

/// Time limit of a TCP connection (and TLS handshake) to the upstream or its proxy. A request
/// itself has the time limit of its method (the Frontend's), not one of the transport.
pub const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// The proxy variables of the environment, read once at start (upper case first, then lower
/// case, as curl does).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProxyEnv {
    /// `HTTPS_PROXY` / `https_proxy`.
    pub https_proxy: Option<String>,
    /// `ALL_PROXY` / `all_proxy`.
    pub all_proxy: Option<String>,
    /// `NO_PROXY` / `no_proxy`.
    pub no_proxy: Option<String>,
}

fn var(upper: &str, lower: &str) -> Option<String> {
    [upper, lower]
        .iter()
        .filter_map(|k| std::env::var(k).ok())
        .find(|v| !v.trim().is_empty())
}

impl ProxyEnv {
    /// The variables of this process's environment.
    pub fn from_env() -> Self {
        ProxyEnv {
            https_proxy: var("HTTPS_PROXY", "https_proxy"),
            all_proxy: var("ALL_PROXY", "all_proxy"),
            no_proxy: var("NO_PROXY", "no_proxy"),
        }
    }

    /// The proxy for an `https` upstream: `HTTPS_PROXY`, else `ALL_PROXY`. An `http` upstream
    /// is always a loopback host, never proxied.
    pub fn proxy_for(&self, url: &Url) -> Option<&str> {
        if is_loopback(url) || url.scheme() != "https" {
            return None;
        }
        self.https_proxy.as_deref().or(self.all_proxy.as_deref())
    }
}

/// A loopback host: `localhost`, a name ending in `.localhost`, an address in `127.0.0.0/8`,
/// or `[::1]` (RFC 6761 §6.3): only such a host may take plain `http`, and none goes through
/// the proxy.
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Domain(d)) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
        Some(Host::Ipv4(a)) => IpAddr::V4(a).is_loopback(),
        Some(Host::Ipv6(a)) => a.is_loopback(),
        None => false,
    }
}

/// Idle time of a connection before TCP keep-alive probes start. A connection that died
/// without a sign while the machine slept (its peer or a NAT forgot it) is found by the
/// probes, or by [`TCP_USER_TIMEOUT`] once data waits on it, so that a listen stream on it
/// ends and comes back after its backoff instead of waiting forever.
pub const TCP_KEEPALIVE_IDLE: std::time::Duration = std::time::Duration::from_secs(15);
/// Time between two TCP keep-alive probes.
pub const TCP_KEEPALIVE_INTERVAL: std::time::Duration = std::time::Duration::from_secs(15);
/// Unanswered TCP keep-alive probes that end a connection.
pub const TCP_KEEPALIVE_PROBES: u32 = 3;
/// Longest time sent data may stay unacknowledged before the connection is ended (Linux
/// `TCP_USER_TIMEOUT`, RFC 5482).
pub const TCP_USER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// The count of the connections a client opened (each call of its connector, a connection to
/// the upstream or its proxy), shared by the clients of one transport.
#[derive(Clone, Default)]
pub struct Opened(Arc<AtomicU64>);

impl Opened {
    /// The connections opened so far.
    pub fn count(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

impl<S> tower_layer::Layer<S> for Opened {
    type Service = Counted<S>;

    fn layer(&self, inner: S) -> Counted<S> {
        Counted {
            inner,
            opened: self.clone(),
        }
    }
}

/// A connector that counts its connections in [`Opened`].
#[derive(Clone)]
pub struct Counted<S> {
    inner: S,
    opened: Opened,
}

impl<S: tower_service::Service<R>, R> tower_service::Service<R> for Counted<S> {
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: R) -> S::Future {
        // The pool calls the connector only for a connection it does not have idle
        // (hyper-util's legacy client starts its lazy connect only when no idle one is ready).
        self.opened.0.fetch_add(1, Ordering::Relaxed);
        self.inner.call(req)
    }
}

/// Why the HTTP client of an upstream cannot be made, for `connect_failed`: reqwest's words
/// without the URL, never a secret.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// `--ca-file` holds something reqwest does not take as certificates.
    #[error("the CA file cannot be used: {0}")]
    CaFile(reqwest::Error),
    /// The proxy variable of the environment (`HTTPS_PROXY`, ...) is not a proxy URL.
    #[error("the proxy URL of the environment is not valid")]
    ProxyUrl,
    /// reqwest cannot make the client (its TLS backend).
    #[error("the HTTP client cannot be made: {0}")]
    Build(reqwest::Error),
}

/// Makes the client of `spec`, whose connections are counted in `opened`. Errors:
/// [`ClientError`].
pub fn build(spec: &HttpSpec, opened: &Opened) -> Result<reqwest::Client, ClientError> {
    super::tls::install_provider();
    let mut b = reqwest::Client::builder()
        .connector_layer(opened.clone())
        .tcp_keepalive(TCP_KEEPALIVE_IDLE)
        .tcp_keepalive_interval(TCP_KEEPALIVE_INTERVAL)
        .tcp_keepalive_retries(TCP_KEEPALIVE_PROBES)
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(CONNECT_TIMEOUT)
        .user_agent(concat!("mcp-bridge/", env!("CARGO_PKG_VERSION")));
    let certs = match &spec.ca_pem {
        Some(pem) => reqwest::Certificate::from_pem_bundle(pem)
            .map_err(|e| ClientError::CaFile(e.without_url()))?,
        None => Vec::new(),
    };
    #[cfg(any(target_os = "android", target_os = "fuchsia", target_os = "linux"))]
    {
        b = b.tcp_user_timeout(TCP_USER_TIMEOUT);
    }
    b = if spec.url.scheme() == "https" {
        b.tls_certs_merge(certs)
    } else {
        // An `http` URL is a loopback host, never proxied, and redirects are not followed:
        // this client makes no TLS connection, so it does not load the platform's roots
        // (their parsed store stays in memory for the life of the process). Do not use it
        // for another origin.
        b.tls_certs_only(certs)
    };
    if let Some(proxy) = spec.proxy.proxy_for(&spec.url) {
        let no_proxy = spec
            .proxy
            .no_proxy
            .as_deref()
            .and_then(reqwest::NoProxy::from_string);
        let p = reqwest::Proxy::all(proxy)
            .map_err(|_| ClientError::ProxyUrl)?
            .no_proxy(no_proxy);
        b = b.proxy(p);
    }
    b.build().map_err(|e| ClientError::Build(e.without_url()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).expect("a valid URL")
    }

    #[test]
    fn loopback_hosts_are_the_reference_s() {
        for (u, loopback) in [
            ("http://localhost:1/mcp", true),
            ("http://LOCALHOST./mcp", true),
            ("http://app.localhost/mcp", true),
            ("http://127.0.0.1/mcp", true),
            ("http://127.200.3.4/mcp", true),
            ("http://[::1]:8/mcp", true),
            ("http://128.0.0.1/mcp", false),
            ("http://localhost.example/mcp", false),
            ("https://example.com/mcp", false),
            ("http://[::2]/mcp", false),
        ] {
            assert_eq!(is_loopback(&url(u)), loopback, "{u}");
        }
    }

    #[test]
    fn the_proxy_is_https_proxy_then_all_proxy_and_never_for_loopback() {
        let env = ProxyEnv {
            https_proxy: Some("http://p1:1".into()),
            all_proxy: Some("http://p2:2".into()),
            no_proxy: None,
        };
        assert_eq!(
            env.proxy_for(&url("https://x.example/mcp")),
            Some("http://p1:1")
        );
        assert_eq!(env.proxy_for(&url("https://127.0.0.1/mcp")), None);
        assert_eq!(env.proxy_for(&url("http://localhost/mcp")), None);
        let all = ProxyEnv {
            https_proxy: None,
            ..env
        };
        assert_eq!(
            all.proxy_for(&url("https://x.example/mcp")),
            Some("http://p2:2")
        );
        assert_eq!(
            ProxyEnv::default().proxy_for(&url("https://x.example/mcp")),
            None
        );
    }
}
