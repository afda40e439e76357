//! The fixture HTTP upstream: the crate's own 2026-07-28 server (`mcp_bridge::server`) behind
//! axum on a loopback port (plain or TLS), as a real Streamable HTTP server does it
//! (2026-07-28 basic/transports/http): one POST per message, the standard headers checked
//! (missing or mismatched: 400 + -32020), a JSON or SSE response, `subscriptions/listen` as a
//! long-lived SSE stream with keep-alive comments. Each POST gets its own in-memory connection
//! to the server ([`Server::serve_memory`]): a client that closes the response stream ends
//! that connection, which cancels the request, as a real server does.
//!
//! Every POST is recorded ([`Seen`]); a test can script the answer to the next POSTs of a
//! method ([`Canned`]), to show error statuses and bodies.

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use futures_util::StreamExt;
use mcp_bridge::server::Server;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

use super::recording;
pub use recording::Seen;

/// The interval of the SSE keep-alive comments of a response stream.
pub const KEEP_ALIVE: Duration = Duration::from_millis(20);

/// A scripted answer.
#[derive(Clone, Debug)]
pub struct Canned {
    pub status: u16,
    pub content_type: Option<&'static str>,
    pub body: String,
    /// The body is an SSE stream of keep-alive comments (every [`KEEP_ALIVE`]) that never
    /// carries an event and never ends (a hung server behind a live connection).
    pub silent_sse: bool,
    /// The `Location` header of a redirect.
    pub location: Option<String>,
}

impl Canned {
    /// A status with a body of this content type.
    pub fn new(status: u16, content_type: Option<&'static str>, body: &str) -> Self {
        Canned {
            status,
            content_type,
            body: body.to_string(),
            silent_sse: false,
            location: None,
        }
    }

    /// A redirect: `status` with `Location: location` and no body.
    pub fn redirect(status: u16, location: &str) -> Self {
        Canned {
            location: Some(location.to_string()),
            ..Self::new(status, None, "")
        }
    }

    /// 200 `text/event-stream` with keep-alive comments only, for ever.
    pub fn silent_sse() -> Self {
        Canned {
            silent_sse: true,
            ..Self::new(200, Some("text/event-stream"), "")
        }
    }
}

/// How the fixture breaks the response of a request ([`HttpFixture::break_next`]): what
/// comes before the response is sent, then in place of the response:
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Break {
    /// The stream ends cleanly (an SSE stream that ends early).
    End,
    /// The body fails: the connection is dropped in the middle of the body (a JSON body is cut
    /// in the middle of its response).
    Reset,
    /// An SSE stream ends right after its headers, before any event.
    AtOnce,
}

/// A tool argument the fixture expects in an `Mcp-Param-*` header: tool, argument, header.
pub type Annotation = (&'static str, &'static str, &'static str);

pub struct FixtureState {
    server: Server,
    annotations: Vec<Annotation>,
    /// Every POST, in order of arrival.
    pub seen: Mutex<Vec<Seen>>,
    /// Scripted answers: (method, answer), taken in order by the next POST of that method.
    pub script: Mutex<VecDeque<(String, Canned)>>,
    /// Broken responses: (method, how), taken in order by the next request of that method.
    pub breaks: Mutex<VecDeque<(String, Break)>>,
    /// Answer requests (other than listen) with an SSE stream instead of JSON.
    pub sse: AtomicBool,
    /// Start every JSON body and every SSE stream the server answers with a UTF-8 byte
    /// order mark (EF BB BF), as some Windows servers do.
    pub bom: AtomicBool,
    /// Listen streams whose SSE response started.
    pub listens_opened: AtomicUsize,
    /// Response streams the client closed before their end.
    pub streams_closed_early: AtomicUsize,
}

pub struct HttpFixture {
    pub addr: SocketAddr,
    pub state: Arc<FixtureState>,
}

impl HttpFixture {
    /// Serves `server` over plain HTTP on 127.0.0.1 at `/mcp`.
    pub fn start(server: Server, annotations: Vec<Annotation>) -> HttpFixture {
        Self::start_on(server, annotations, None)
    }

    /// Serves `server` on 127.0.0.1, over TLS with this config when one is given.
    pub fn start_on(
        server: Server,
        annotations: Vec<Annotation>,
        tls: Option<Arc<tokio_rustls::rustls::ServerConfig>>,
    ) -> HttpFixture {
        let state = Arc::new(FixtureState {
            server,
            annotations,
            seen: Mutex::new(Vec::new()),
            script: Mutex::new(VecDeque::new()),
            breaks: Mutex::new(VecDeque::new()),
            sse: AtomicBool::new(false),
            bom: AtomicBool::new(false),
            listens_opened: AtomicUsize::new(0),
            streams_closed_early: AtomicUsize::new(0),
        });
        // `/v2/mcp` is the same endpoint: where a test's redirects point.
        let app = Router::new()
            .route("/mcp", axum::routing::post(mcp))
            .route("/v2/mcp", axum::routing::post(mcp))
            .with_state(state.clone());
        let addr = recording::serve_loopback(app, tls);
        HttpFixture { addr, state }
    }

    /// `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Every POST so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.state.seen.lock().expect("lock").clone()
    }

    /// The POSTs of one method so far.
    pub fn seen_of(&self, method: &str) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| s.method() == method)
            .collect()
    }

    /// The response of the next request of `method` (not scripted with [`Self::script`]) is
    /// broken `how` (in the order given).
    pub fn break_next(&self, method: &str, how: Break) {
        self.state
            .breaks
            .lock()
            .expect("lock")
            .push_back((method.to_string(), how));
    }

    /// The next POST of `method` gets `answer` (in the order scripted).
    pub fn script(&self, method: &str, answer: Canned) {
        self.state
            .script
            .lock()
            .expect("lock")
            .push_back((method.to_string(), answer));
    }
}

/// Another origin: a listener on its own loopback port that answers `200` with an empty
/// body to any request and counts what it got (where a redirect to another origin points).
pub struct Elsewhere {
    pub addr: SocketAddr,
    /// Requests received (any method, any path).
    pub received: Arc<AtomicUsize>,
}

impl Elsewhere {
    pub fn start() -> Elsewhere {
        let received = Arc::new(AtomicUsize::new(0));
        let count = received.clone();
        let app = Router::new().fallback(move || {
            let count = count.clone();
            async move {
                count.fetch_add(1, Ordering::SeqCst);
                StatusCode::OK
            }
        });
        let addr = recording::serve_loopback(app, None);
        Elsewhere { addr, received }
    }
}

fn header_mismatch(id: &Value, what: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id,
        "error": {"code": -32020, "message": format!("Header mismatch: {what}")}});
    (
        StatusCode::BAD_REQUEST,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// A header value as the server reads it: `=?base64?...?=` decoded.
fn decoded(v: &str) -> Option<String> {
    match v
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(b) => base64::engine::general_purpose::STANDARD
            .decode(b)
            .ok()
            .and_then(|b| String::from_utf8(b).ok()),
        None => Some(v.to_string()),
    }
}

/// The standard header checks of a 2026-07-28 server; `Err(what)` names the broken one.
fn check(st: &FixtureState, headers: &HeaderMap, body: &Value) -> Result<(), String> {
    let h = |n: &str| headers.get(n).and_then(|v| v.to_str().ok());
    let accept = h("accept").unwrap_or("");
    if !(accept.contains("application/json") && accept.contains("text/event-stream")) {
        return Err("Accept".into());
    }
    if !h("content-type").is_some_and(|c| c.starts_with("application/json")) {
        return Err("Content-Type".into());
    }
    let method = body["method"].as_str().unwrap_or("");
    if h("mcp-method") != Some(method) {
        return Err("Mcp-Method".into());
    }
    let params = &body["params"];
    if body.get("id").is_some() {
        let version = params["_meta"]["io.modelcontextprotocol/protocolVersion"].as_str();
        if version.is_none() || h("mcp-protocol-version") != version {
            return Err("MCP-Protocol-Version".into());
        }
    }
    let name = match method {
        "tools/call" | "prompts/get" => params["name"].as_str(),
        "resources/read" => params["uri"].as_str(),
        _ => None,
    };
    if let Some(name) = name
        && h("mcp-name").and_then(decoded).as_deref() != Some(name)
    {
        return Err("Mcp-Name".into());
    }
    if method == "tools/call" {
        for (tool, arg, hdr) in &st.annotations {
            let value = &params["arguments"][*arg];
            if params["name"] != *tool || value.is_null() {
                continue;
            }
            let want = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let got = h(&format!("mcp-param-{}", hdr.to_ascii_lowercase())).and_then(decoded);
            if got.as_deref() != Some(want.as_str()) {
                return Err(format!("Mcp-Param-{hdr}"));
            }
        }
    }
    Ok(())
}

async fn mcp(
    State(st): State<Arc<FixtureState>>,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Ok(msg) = serde_json::from_slice::<Value>(&body) else {
        return (StatusCode::BAD_REQUEST, "not JSON").into_response();
    };
    let index = {
        let mut seen = st.seen.lock().expect("lock");
        let mut s = Seen::new("POST", &headers, msg.clone());
        s.path = uri.path().to_string();
        seen.push(s);
        seen.len() - 1
    };
    let response = answer(&st, &headers, &body, msg).await;
    if let Some(s) = st.seen.lock().expect("lock").get_mut(index) {
        s.status = response.status().as_u16();
    }
    response
}

async fn answer(st: &Arc<FixtureState>, headers: &HeaderMap, body: &Bytes, msg: Value) -> Response {
    let id = msg.get("id").cloned();
    if let Err(what) = check(st, headers, &msg) {
        return header_mismatch(id.as_ref().unwrap_or(&Value::Null), &what);
    }
    let method = msg["method"].as_str().unwrap_or("").to_string();
    let canned = {
        let mut script = st.script.lock().expect("lock");
        let pos = script.iter().position(|(m, _)| *m == method);
        pos.and_then(|p| script.remove(p)).map(|(_, c)| c)
    };
    if let Some(c) = canned {
        let mut r = Response::builder().status(c.status);
        if let Some(ct) = c.content_type {
            r = r.header(header::CONTENT_TYPE, ct);
        }
        if let Some(l) = &c.location {
            r = r.header(header::LOCATION, l);
        }
        if c.silent_sse {
            let tick = tokio::time::interval(KEEP_ALIVE);
            let body = futures_util::stream::unfold(tick, |mut tick| async move {
                tick.tick().await;
                Some((Ok::<_, std::convert::Infallible>(": keep-alive\n\n"), tick))
            });
            return r.body(Body::from_stream(body)).expect("response");
        }
        return r.body(Body::from(c.body)).expect("response");
    }
    let Some(id) = id else {
        return StatusCode::ACCEPTED.into_response();
    };
    let brk = {
        let mut breaks = st.breaks.lock().expect("lock");
        let pos = breaks.iter().position(|(m, _)| *m == method);
        pos.and_then(|p| breaks.remove(p)).map(|(_, b)| b)
    };
    let (in_tx, in_rx) = mpsc::channel::<Vec<u8>>(16);
    let (out_tx, mut out_rx) = mpsc::channel::<String>(64);
    let server = st.server.clone();
    tokio::spawn(async move {
        let _ = server.serve_memory(in_rx, out_tx).await;
    });
    let _ = in_tx.send(body.to_vec()).await;
    let listen = method == "subscriptions/listen";
    if !listen && !st.sse.load(Ordering::SeqCst) {
        while let Some(line) = out_rx.recv().await {
            if is_response(&line, &id) {
                let body = match st.bom.load(Ordering::SeqCst) {
                    true => format!("\u{feff}{line}"),
                    false => line,
                };
                if let Some(how) = brk {
                    // Half of the body, then the end or a failed body; the pause between
                    // lets the head and the half leave first (else the connection closes
                    // before any response, which is no broken stream).
                    let half = body[..body.len() / 2].to_string();
                    let tail = futures_util::stream::once(async {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        Err(std::io::Error::other("reset by the fixture"))
                    })
                    .take(usize::from(how == Break::Reset));
                    let chunks = futures_util::stream::iter([Ok(half)]).chain(tail);
                    return Response::builder()
                        .header(header::CONTENT_TYPE, "application/json")
                        .body(Body::from_stream(chunks))
                        .expect("response");
                }
                return ([(header::CONTENT_TYPE, "application/json")], body).into_response();
            }
        }
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    }
    if listen {
        st.listens_opened.fetch_add(1, Ordering::SeqCst);
    }
    let stream = SseStream {
        rx: out_rx,
        input: Some(in_tx),
        id,
        // Keep-alive comments on every stream: a write is how the server learns that the
        // client closed the stream (hyper sees the closed connection when it writes).
        keep_alive: Some(tokio::time::interval(KEEP_ALIVE)),
        done: false,
        bom: st.bom.load(Ordering::SeqCst),
        brk,
        state: st.clone(),
    };
    let body = futures_util::stream::unfold(stream, |mut s| async move {
        let chunk = s.next().await?;
        Some((chunk, s))
    });
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header("x-accel-buffering", "no")
        .body(Body::from_stream(body))
        .expect("response")
}

fn is_response(line: &str, id: &Value) -> bool {
    serde_json::from_str::<Value>(line).is_ok_and(|v| {
        v.get("id") == Some(id) && (v.get("result").is_some() || v.get("error").is_some())
    })
}

/// The SSE body of one request: its notifications, then its response (then the end).
struct SseStream {
    rx: mpsc::Receiver<String>,
    /// The server connection's input: dropped when the stream is (a closed stream cancels).
    input: Option<mpsc::Sender<Vec<u8>>>,
    id: Value,
    keep_alive: Option<tokio::time::Interval>,
    done: bool,
    /// The next chunk is the first and starts with a byte order mark.
    bom: bool,
    /// How the response is broken, if it is.
    brk: Option<Break>,
    state: Arc<FixtureState>,
}

impl SseStream {
    async fn next(&mut self) -> Option<Result<String, std::io::Error>> {
        if std::mem::take(&mut self.bom) {
            return Some(Ok("\u{feff}".into()));
        }
        if self.brk == Some(Break::AtOnce) {
            self.done = true;
            self.input = None;
        }
        if self.done {
            return None;
        }
        let line = match &mut self.keep_alive {
            Some(tick) => tokio::select! {
                l = self.rx.recv() => l,
                _ = tick.tick() => return Some(Ok(": keep-alive\n\n".into())),
            },
            None => self.rx.recv().await,
        };
        let line = line?;
        if is_response(&line, &self.id) {
            self.done = true;
            self.input = None;
            match self.brk {
                Some(Break::End | Break::AtOnce) => return None,
                Some(Break::Reset) => {
                    return Some(Err(std::io::Error::other("reset by the fixture")));
                }
                None => {}
            }
        }
        Some(Ok(format!("data: {line}\n\n")))
    }
}

impl Drop for SseStream {
    fn drop(&mut self) {
        if !self.done {
            self.state
                .streams_closed_early
                .fetch_add(1, Ordering::SeqCst);
        }
    }
}
