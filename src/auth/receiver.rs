//! The loopback receiver of a sign-in: a hyper 1 HTTP/1 server on
//! `127.0.0.1:<--redirect-port>`, listening before any browser opens. `GET /start/<token>`
//! answers 303 to the authorization URL once; a second GET ends the sign-in with
//! `sign_in_start_reused`. `GET /callback` with the expected state ends the wait; another state
//! gets the failure page and the wait goes on. Each request head has 16 KiB and 10 s; at most
//! 16 connections at once. Pages are plain text-like HTML and never hold a token or a code.

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, oneshot};

use super::callback::{CallbackParams, state_matches};
use super::errors::{SignInCause, SignInError};

/// Largest request head, in bytes: a browser's redirect (its code, its state and its headers)
/// takes a few KiB.
pub const MAX_HEAD_BYTES: usize = 16 * 1024;
/// Time limit of a request head.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections served at once; more wait in the listen queue.
pub const MAX_CONNECTIONS: usize = 16;
/// The default `--redirect-port`.
pub const DEFAULT_REDIRECT_PORT: u16 = 41894;
/// The path of the redirect URI.
pub const CALLBACK_PATH: &str = "/callback";
/// The path prefix of the one-time start URL.
pub const START_PATH: &str = "/start/";

/// The redirect URI of `port`: `http://127.0.0.1:<port>/callback`.
pub fn redirect_uri(port: u16) -> String {
    format!("http://127.0.0.1:{port}{CALLBACK_PATH}")
}

/// Turns an accepted callback into the code to redeem (the caller's iss and error checks);
/// its error picks the failure page.
pub type CodeCheck = Box<dyn Fn(&CallbackParams) -> Result<String, SignInError> + Send + Sync>;

struct Shared {
    state: String,
    start_token: String,
    authorization_url: String,
    start_used: Mutex<bool>,
    check: CodeCheck,
    done: Mutex<Option<oneshot::Sender<Result<String, SignInError>>>>,
}

impl Shared {
    fn finish(&self, outcome: Result<String, SignInError>) {
        if let Some(tx) = self.done.lock().ok().and_then(|mut d| d.take()) {
            let _ = tx.send(outcome);
        }
    }
}

/// The loopback listeners of the sign-ins that share one table, by port. A gateway's servers
/// sign in with the same `--redirect-port` (the default's, or the one registered for the
/// client): a sign-in that starts while another one waits joins the listener of the first,
/// and each redirect reaches its own sign-in by its start token and its state, instead of the
/// second sign-in failing to bind the port. Clones share the table; `Receivers::default()` is
/// a table of its own (the only bridge of a process). Port 0 (any free port) is never shared.
#[derive(Clone, Default)]
pub struct Receivers(Arc<Mutex<HashMap<u16, Weak<PortListener>>>>);

impl std::fmt::Debug for Receivers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Receivers")
    }
}

/// One listening port and the sign-ins that wait on it; dropping it (with its last sign-in)
/// stops the listener.
struct PortListener {
    addr: SocketAddr,
    sign_ins: Arc<Mutex<Vec<Arc<Shared>>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for PortListener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The receiver of one sign-in; dropping it takes the sign-in off its port (and stops the
/// listener when it was the last one there).
pub struct Receiver {
    listener: Arc<PortListener>,
    shared: Arc<Shared>,
    start_token: String,
    rx: oneshot::Receiver<Result<String, SignInError>>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        lock(&self.listener.sign_ins).retain(|s| !Arc::ptr_eq(s, &self.shared));
    }
}

/// The guard of `m`, also after a panic of another holder (the list stays usable).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Receivers {
    /// Listens on `127.0.0.1:port` for one sign-in (or joins the listener of this table that
    /// listens there already): `state` is the expected state, `start_token` the one-time start
    /// path, `authorization_url` the 303 target, `check` the code check of a callback with the
    /// expected state. Errors: `redirect_port_unavailable` (another process holds the port).
    pub fn start(
        &self,
        port: u16,
        state: String,
        start_token: String,
        authorization_url: String,
        check: CodeCheck,
    ) -> Result<Receiver, SignInError> {
        let (tx, rx) = oneshot::channel();
        let shared = Arc::new(Shared {
            state,
            start_token: start_token.clone(),
            authorization_url,
            start_used: Mutex::new(false),
            check,
            done: Mutex::new(Some(tx)),
        });
        let mut table = lock(&self.0);
        table.retain(|_, l| l.strong_count() > 0);
        let listening = (port != 0)
            .then(|| table.get(&port).and_then(Weak::upgrade))
            .flatten();
        let listener = match listening {
            Some(l) => l,
            None => {
                let l = Arc::new(listen(port)?);
                if port != 0 {
                    table.insert(port, Arc::downgrade(&l));
                }
                l
            }
        };
        lock(&listener.sign_ins).push(shared.clone());
        Ok(Receiver {
            listener,
            shared,
            start_token,
            rx,
        })
    }
}

/// Binds `127.0.0.1:port` and starts its accept loop, with no sign-in yet.
fn listen(port: u16) -> Result<PortListener, SignInError> {
    let unavailable = |e: std::io::Error| {
        SignInError::new(
            SignInCause::RedirectPortUnavailable,
            format!("127.0.0.1:{port}: {}", crate::log::files::io_error_text(&e)),
        )
    };
    // A loopback bind does not block: no await while the table is held.
    let std_listener =
        std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port)).map_err(unavailable)?;
    std_listener.set_nonblocking(true).map_err(unavailable)?;
    let listener = TcpListener::from_std(std_listener).map_err(unavailable)?;
    let addr = listener.local_addr().map_err(unavailable)?;
    let sign_ins = Arc::new(Mutex::new(Vec::new()));
    let task = tokio::spawn(accept_loop(listener, sign_ins.clone()));
    Ok(PortListener {
        addr,
        sign_ins,
        task,
    })
}

impl Receiver {
    /// The one-time start URL for a browser: `http://127.0.0.1:<port>/start/<token>`.
    pub fn start_url(&self) -> String {
        format!(
            "http://{}{START_PATH}{}",
            self.listener.addr, self.start_token
        )
    }

    /// The bound address.
    #[cfg(test)]
    pub fn addr(&self) -> SocketAddr {
        self.listener.addr
    }

    /// Waits for the callback with the expected state (the code), or a reused start URL.
    pub async fn wait(&mut self) -> Result<String, SignInError> {
        (&mut self.rx).await.unwrap_or_else(|_| {
            Err(SignInError::new(
                SignInCause::SignInFailed,
                "the receiver stopped",
            ))
        })
    }
}

async fn accept_loop(listener: TcpListener, sign_ins: Arc<Mutex<Vec<Arc<Shared>>>>) {
    let permits = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let Ok(permit) = permits.clone().acquire_owned().await else {
            return;
        };
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let sign_ins = sign_ins.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let service = hyper::service::service_fn(move |req| {
                let sign_ins = sign_ins.clone();
                async move { Ok::<_, std::convert::Infallible>(answer(&sign_ins, req)) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEAD_TIMEOUT)
                .max_buf_size(MAX_HEAD_BYTES)
                .keep_alive(false)
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// The answer to one request: a start path or a callback of one of the sign-ins waiting on
/// this port, told apart by the start token and the state.
fn answer(sign_ins: &Mutex<Vec<Arc<Shared>>>, req: Request<Incoming>) -> Response<Full<Bytes>> {
    if req.method() != hyper::Method::GET {
        return page(
            StatusCode::METHOD_NOT_ALLOWED,
            "Not here",
            "This address only takes the browser's sign-in redirect.",
        );
    }
    let path = req.uri().path();
    if let Some(token) = path.strip_prefix(START_PATH) {
        let found = lock(sign_ins)
            .iter()
            .find(|s| s.start_token == token)
            .cloned();
        let Some(shared) = found else {
            return page(
                StatusCode::NOT_FOUND,
                "Unknown sign-in link",
                "This link does not belong to a sign-in in progress. Use the link of the newest sign-in line of mcp-bridge.",
            );
        };
        let mut used = shared.start_used.lock().unwrap_or_else(|p| p.into_inner());
        if *used {
            drop(used);
            shared.finish(Err(SignInError::new(SignInCause::SignInStartReused, "")));
            return page(
                StatusCode::GONE,
                "Sign-in link already used",
                "This one-time sign-in link was opened before, so the sign-in stopped. Retry the request in your editor to start a new sign-in.",
            );
        }
        *used = true;
        return Response::builder()
            .status(StatusCode::SEE_OTHER)
            .header("location", &shared.authorization_url)
            .header("cache-control", "no-store")
            .body(Full::new(Bytes::new()))
            .unwrap_or_default();
    }
    if path == CALLBACK_PATH {
        let params = CallbackParams::from_query(req.uri().query().unwrap_or(""));
        let found = lock(sign_ins)
            .iter()
            .find(|s| state_matches(&params, &s.state))
            .cloned();
        let Some(shared) = found else {
            tracing::warn!(target: "sign-in", "a redirect with an unknown state reached the receiver; it is ignored");
            return page(
                StatusCode::BAD_REQUEST,
                "Sign-in not recognized",
                "This redirect does not belong to a sign-in in progress, so mcp-bridge ignored it. Close this tab and use the newest sign-in link.",
            );
        };
        let outcome = (shared.check)(&params);
        let ok = outcome.is_ok();
        let reason = outcome
            .as_ref()
            .err()
            .map(|e| e.cause.message().to_string());
        shared.finish(outcome);
        return if ok {
            page(
                StatusCode::OK,
                "Signed in",
                "mcp-bridge is signed in. You can close this tab and go back to your editor.",
            )
        } else {
            page(
                StatusCode::BAD_REQUEST,
                "Sign-in failed",
                &format!(
                    "The sign-in did not complete: {}. Close this tab and retry the request in your editor.",
                    reason.unwrap_or_default()
                ),
            )
        };
    }
    page(
        StatusCode::NOT_FOUND,
        "Not here",
        "This address only takes the browser's sign-in redirect.",
    )
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A plain page: a title and one paragraph.
fn page(status: StatusCode, title: &str, text: &str) -> Response<Full<Bytes>> {
    let body = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title></head><body><h1>{t}</h1><p>{x}</p></body></html>",
        t = escape(title),
        x = escape(text)
    );
    Response::builder()
        .status(status)
        .header("content-type", "text/html; charset=utf-8")
        .header("cache-control", "no-store")
        .header("referrer-policy", "no-referrer")
        .body(Full::new(Bytes::from(body)))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn get(addr: SocketAddr, path: &str) -> String {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).await.unwrap();
        out
    }

    async fn receiver() -> Receiver {
        Receivers::default()
            .start(
                0,
                "st".into(),
                "tok".into(),
                "https://as.example/authorize?x=1".into(),
                Box::new(|p| {
                    p.code
                        .clone()
                        .ok_or_else(|| SignInError::new(SignInCause::SignInFailed, ""))
                }),
            )
            .unwrap()
    }

    fn code_check() -> CodeCheck {
        Box::new(|p| {
            p.code
                .clone()
                .ok_or_else(|| SignInError::new(SignInCause::SignInFailed, ""))
        })
    }

    #[tokio::test]
    async fn the_sign_ins_of_one_table_share_a_port_and_each_redirect_reaches_its_own() {
        let port = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .and_then(|l| l.local_addr())
            .unwrap()
            .port();
        let table = Receivers::default();
        let start = |state: &str, token: &str, url: &str| {
            table.start(port, state.into(), token.into(), url.into(), code_check())
        };
        let mut a = start("sa", "ta", "https://as.example/a").unwrap();
        let mut b = start("sb", "tb", "https://as.example/b").unwrap();
        assert_eq!(a.addr(), b.addr());
        let to_b = get(b.addr(), "/start/tb").await.to_ascii_lowercase();
        assert!(to_b.contains("location: https://as.example/b"), "{to_b}");
        let ok = get(b.addr(), "/callback?code=CODE-B&state=sb").await;
        assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
        assert_eq!(b.wait().await.unwrap(), "CODE-B");
        drop(b);
        // b is off the port; a still listens there.
        assert!(get(a.addr(), "/start/tb").await.starts_with("HTTP/1.1 404"));
        let ok = get(a.addr(), "/callback?code=CODE-A&state=sa").await;
        assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
        assert_eq!(a.wait().await.unwrap(), "CODE-A");
        drop(a);
        // The last sign-in took the listener with it (its task ends at its next turn):
        // another table binds the port.
        let mut rebound = None;
        for _ in 0..1000 {
            let other = Receivers::default();
            if let Ok(r) = other.start(port, "s".into(), "t".into(), "u".into(), code_check()) {
                rebound = Some(r);
                break;
            }
            tokio::task::yield_now().await;
        }
        assert!(rebound.is_some(), "the port stayed bound");
    }

    #[tokio::test]
    async fn the_start_url_redirects_once_and_a_second_get_ends_the_sign_in() {
        let mut r = receiver().await;
        assert!(r.start_url().ends_with("/start/tok"));
        let first = get(r.addr(), "/start/tok").await;
        assert!(first.starts_with("HTTP/1.1 303"), "{first}");
        assert!(
            first
                .to_ascii_lowercase()
                .contains("location: https://as.example/authorize?x=1")
        );
        assert!(
            get(r.addr(), "/start/other")
                .await
                .starts_with("HTTP/1.1 404")
        );
        let second = get(r.addr(), "/start/tok").await;
        assert!(second.starts_with("HTTP/1.1 410"), "{second}");
        assert_eq!(
            r.wait().await.unwrap_err().cause,
            SignInCause::SignInStartReused
        );
    }

    #[tokio::test]
    async fn only_the_expected_state_ends_the_wait_and_pages_hold_no_code() {
        let mut r = receiver().await;
        let wrong = get(r.addr(), "/callback?code=SECRETCODE&state=nope").await;
        assert!(wrong.starts_with("HTTP/1.1 400") && wrong.contains("Sign-in not recognized"));
        let ok = get(r.addr(), "/callback?code=SECRETCODE&state=st").await;
        assert!(
            ok.starts_with("HTTP/1.1 200") && ok.contains("Signed in"),
            "{ok}"
        );
        assert!(!ok.contains("SECRETCODE") && !wrong.contains("SECRETCODE"));
        assert_eq!(r.wait().await.unwrap(), "SECRETCODE");
    }

    #[tokio::test]
    async fn a_head_over_16_kib_is_refused_and_a_taken_port_is_named() {
        let r = receiver().await;
        let mut s = tokio::net::TcpStream::connect(r.addr()).await.unwrap();
        let big = format!(
            "GET /callback HTTP/1.1\r\nHost: x\r\nX: {}\r\n\r\n",
            "a".repeat(MAX_HEAD_BYTES)
        );
        let _ = s.write_all(big.as_bytes()).await;
        let mut out = String::new();
        let _ = s.read_to_string(&mut out).await;
        assert!(out.starts_with("HTTP/1.1 431") || out.is_empty(), "{out}");
        let taken = Receivers::default().start(
            r.addr().port(),
            "s".into(),
            "t".into(),
            "u".into(),
            Box::new(|_| Ok(String::new())),
        );
        assert_eq!(
            taken.err().map(|e| e.cause),
            Some(SignInCause::RedirectPortUnavailable)
        );
    }

    #[tokio::test]
    async fn a_silent_connection_is_closed_after_the_head_time_limit() {
        let r = receiver().await;
        let mut s = tokio::net::TcpStream::connect(r.addr()).await.unwrap();
        let started = std::time::Instant::now();
        let mut buf = Vec::new();
        // The server closes the connection (EOF) once HEAD_TIMEOUT passed without a head.
        let read = tokio::time::timeout(HEAD_TIMEOUT * 3, s.read_to_end(&mut buf)).await;
        assert!(read.is_ok(), "still open after three times the limit");
        assert!(started.elapsed() >= HEAD_TIMEOUT - Duration::from_millis(100));
    }

    #[tokio::test]
    async fn at_most_16_connections_are_served_at_once() {
        let r = receiver().await;
        let mut idle = Vec::new();
        for _ in 0..MAX_CONNECTIONS {
            let s = tokio::net::TcpStream::connect(r.addr()).await.unwrap();
            idle.push(s);
        }
        // Give the accept loop time to take all 16 (each one is held by its silent client).
        tokio::time::sleep(Duration::from_millis(200)).await;
        let addr = r.addr();
        let mut waiting = tokio::spawn(async move { get(addr, "/nothing").await });
        assert!(
            tokio::time::timeout(Duration::from_millis(500), &mut waiting)
                .await
                .is_err(),
            "a 17th connection was served while 16 were open"
        );
        drop(idle.pop());
        let answer = tokio::time::timeout(Duration::from_secs(20), waiting)
            .await
            .expect("served once a connection closed")
            .unwrap();
        assert!(answer.starts_with("HTTP/1.1 404"), "{answer}");
    }
}
