//! What the two HTTP fixtures (`http_fixture.rs`, 2026-07-28; `legacy_http_fixture.rs`,
//! 2025-11-25) share: the record of one request ([`Seen`]) and the loopback server thread
//! ([`serve_loopback`]). Each fixture keeps its own answers; this file never decides one.

use axum::Router;
use axum::http::HeaderMap;
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// How long a fixture may take to bind its port.
pub const START_TIMEOUT: Duration = Duration::from_secs(10);

/// One request a fixture received, and the status it answered.
#[derive(Clone, Debug)]
pub struct Seen {
    /// `POST`, `GET` or `DELETE`.
    pub verb: String,
    /// Every header, name in lower case, in order.
    pub headers: Vec<(String, String)>,
    /// The body (`Null` when empty).
    pub body: Value,
    /// The status of the answer (0 until it answered).
    pub status: u16,
    /// The path of the request (empty when the fixture does not record it).
    pub path: String,
    /// When it arrived.
    pub at: std::time::Instant,
}

impl Seen {
    /// The record of a request, before its answer (status 0).
    pub fn new(verb: &str, headers: &HeaderMap, body: Value) -> Seen {
        Seen {
            verb: verb.to_string(),
            headers: headers
                .iter()
                .map(|(n, v)| {
                    (
                        n.as_str().to_string(),
                        v.to_str().unwrap_or("<binary>").to_string(),
                    )
                })
                .collect(),
            body,
            status: 0,
            path: String::new(),
            at: std::time::Instant::now(),
        }
    }

    /// The value of a header (the first one).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The method of the body (empty for a response or a GET/DELETE).
    pub fn method(&self) -> &str {
        self.body["method"].as_str().unwrap_or("")
    }
}

/// Serves `app` on 127.0.0.1 (over TLS with this config when one is given) on a thread of
/// its own with its own runtime, for the life of the test; returns the bound address.
pub fn serve_loopback(
    app: Router,
    tls: Option<Arc<tokio_rustls::rustls::ServerConfig>>,
) -> SocketAddr {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            tx.send(listener.local_addr().expect("addr")).expect("send");
            match tls {
                None => axum::serve(listener, app).await.expect("serve"),
                Some(cfg) => serve_tls(listener, app, cfg).await,
            }
        });
    });
    rx.recv_timeout(START_TIMEOUT).expect("fixture up")
}

async fn serve_tls(
    listener: tokio::net::TcpListener,
    app: Router,
    cfg: Arc<tokio_rustls::rustls::ServerConfig>,
) {
    let acceptor = tokio_rustls::TlsAcceptor::from(cfg);
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            continue;
        };
        let acceptor = acceptor.clone();
        let app = app.clone();
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(tcp).await else {
                return;
            };
            let service = hyper_util::service::TowerToHyperService::new(app);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                .await;
        });
    }
}

/// Waits (at most `limit`) until a request of `seen()` matches `is_it`, and returns it;
/// fails the test with everything received when none does.
pub fn wait_for_seen(
    limit: Duration,
    seen: impl Fn() -> Vec<Seen>,
    is_it: impl Fn(&Seen) -> bool,
) -> Seen {
    let end = std::time::Instant::now() + limit;
    loop {
        if let Some(s) = seen().into_iter().find(&is_it) {
            return s;
        }
        assert!(
            std::time::Instant::now() < end,
            "the fixture did not receive the request; it received:\n{:#?}",
            seen()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}
