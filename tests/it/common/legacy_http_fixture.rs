//! A scripted 2025-11-25 Streamable HTTP server (2025-11-25 basic/transports) on
//! a loopback port, written with axum, for the era fallback over HTTP. It behaves like the
//! TypeScript SDK 1.x server: with a session (the default), a POST without `Mcp-Session-Id`
//! other than `initialize` gets `400` + `-32000 "Bad Request: No valid session ID provided"`
//! (so `server/discover` does), a wrong or ended session gets `404`; without a session (a
//! stateless server) `server/discover` gets `200` + `-32601`. Every request after
//! `initialize` must carry `MCP-Protocol-Version: 2025-11-25` (`400` otherwise), every POST
//! `Accept` with JSON and SSE (`406` otherwise). Notifications and responses get `202`.
//!
//! Tools: `echo` (a JSON response with `arguments.text`), `slow` (an SSE response that
//! never answers; keep-alive comments show when the client closes it) and `resumable` (a
//! resumable stream, SEP-1699, as the Python and Go SDK servers do it: a priming event with an
//! id and `retry: arguments.retry_ms`, a progress event, then the stream ends before the
//! response; a GET with `Last-Event-ID` replays the stream from its start, without the
//! response the first `arguments.closes - 1` times, with it then). The GET stream is
//! refused with `405`, or is an SSE stream the test writes to ([`LegacyFixture::push`]) and
//! ends ([`LegacyFixture::close_stream`]); a GET with another `Last-Event-ID` opens it again.
//! Every request is recorded with its headers, body and the status it got ([`Seen`]).

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, header};
use axum::response::Response;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

use mcp_test_fixtures::recording;
use recording::Seen;

/// The protocol version the fixture negotiates.
pub const VERSION: &str = "2025-11-25";
/// The interval of the keep-alive comments of the fixture's SSE streams.
pub const KEEP_ALIVE: Duration = Duration::from_millis(20);

/// How the fixture answers.
#[derive(Clone, Debug)]
pub struct Script {
    /// The `Mcp-Session-Id` of the `initialize` response (`None`: a stateless server).
    pub session: Option<&'static str>,
    /// The GET stream: refused with `405` (false) or an SSE stream (true).
    pub get_stream: bool,
    /// The answer to `server/discover` instead of the usual one: status, body (JSON).
    pub discover: Option<(u16, String)>,
    /// How long the `initialize` waits for its answer (a server that is slow to start a
    /// session).
    pub initialize_delay: Duration,
    /// How long `notifications/initialized` waits for its `202` (a server that is slow to
    /// take it).
    pub initialized_delay: Duration,
}

impl Default for Script {
    fn default() -> Self {
        Script {
            session: Some("sess-1"),
            get_stream: false,
            discover: None,
            initialize_delay: Duration::ZERO,
            initialized_delay: Duration::ZERO,
        }
    }
}

pub struct LegacyState {
    script: Script,
    /// Every request, in order of arrival (recorded when its answer is decided).
    pub seen: Mutex<Vec<Seen>>,
    /// The session is over: a request carrying it gets `404`, and so does every later one
    /// (a new `initialize` gets a session that is refused too).
    pub session_gone: AtomicBool,
    /// The session the server knows (`None`: none yet, or it forgot it).
    live: Mutex<Option<String>>,
    /// Sessions started so far (`initialize` answered with a session).
    pub sessions_started: AtomicUsize,
    /// The resumable streams, by the start of their event ids (`s<request id>`).
    resumable: Mutex<std::collections::HashMap<String, Resumable>>,
    /// The writer of the open GET stream.
    stream: Mutex<Option<mpsc::UnboundedSender<String>>>,
    /// SSE responses (of `slow` or the GET) that the client closed.
    pub streams_closed: AtomicUsize,
}

/// One resumable stream: its request, and how often it ends before the response.
struct Resumable {
    id: Value,
    progress_token: Value,
    /// Streams (the POST's and the resumptions) that end before the response.
    closes: u64,
    /// Streams sent so far.
    sent: u64,
}

impl Resumable {
    /// The events after the priming one: the progress, then the response once the stream has
    /// ended `closes` times.
    fn events(&mut self, key: &str) -> String {
        self.sent += 1;
        let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": self.progress_token, "progress": 1}});
        let mut body = format!("id: {key}-1\ndata: {progress}\n\n");
        if self.sent > self.closes {
            let response = json!({"jsonrpc": "2.0", "id": self.id,
                "result": {"content": [{"type": "text", "text": "resumed"}]}});
            body.push_str(&format!("id: {key}-2\ndata: {response}\n\n"));
        }
        body
    }
}

fn event_stream(body: String) -> Response {
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(Body::from(body))
        .expect("response")
}

pub struct LegacyFixture {
    pub addr: SocketAddr,
    pub state: Arc<LegacyState>,
}

impl LegacyFixture {
    /// Serves the script on 127.0.0.1 at `/mcp` (its own thread and runtime).
    pub fn start(script: Script) -> LegacyFixture {
        let state = Arc::new(LegacyState {
            script,
            seen: Mutex::new(Vec::new()),
            session_gone: AtomicBool::new(false),
            live: Mutex::new(None),
            sessions_started: AtomicUsize::new(0),
            resumable: Mutex::new(std::collections::HashMap::new()),
            stream: Mutex::new(None),
            streams_closed: AtomicUsize::new(0),
        });
        let app = Router::new()
            .route("/mcp", axum::routing::any(mcp))
            .with_state(state.clone());
        let addr = recording::serve_loopback(app, None);
        LegacyFixture { addr, state }
    }

    /// `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Every request so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.state.seen.lock().expect("lock").clone()
    }

    /// Waits (at most `limit`) until a request matches `is_it`, and returns it.
    pub fn wait_for(&self, limit: Duration, is_it: impl Fn(&Seen) -> bool) -> Seen {
        recording::wait_for_seen(limit, || self.seen(), is_it)
    }

    /// Writes one message on the open GET stream (false: none is open).
    pub fn push(&self, message: &Value) -> bool {
        let tx = self.state.stream.lock().expect("lock");
        tx.as_ref()
            .is_some_and(|tx| tx.send(format!("data: {message}\n\n")).is_ok())
    }

    /// Writes `text` as it is on the open GET stream (event fields of the test's own).
    pub fn push_raw(&self, text: &str) -> bool {
        let tx = self.state.stream.lock().expect("lock");
        tx.as_ref()
            .is_some_and(|tx| tx.send(text.to_string()).is_ok())
    }

    /// Ends the open GET stream (the server closes it).
    pub fn close_stream(&self) {
        self.state.stream.lock().expect("lock").take();
    }

    /// Ends the session: every later request carrying it gets `404`, and so does every
    /// request of a new session.
    pub fn end_session(&self) {
        self.state.session_gone.store(true, Ordering::SeqCst);
    }

    /// Forgets the session (a server restarted with its sessions in memory): every later
    /// request carrying it gets `404`; a new `initialize` starts a new session (`sess-2`,
    /// `sess-3`, ...) that works.
    pub fn forget_session(&self) {
        *self.state.live.lock().expect("lock") = None;
    }
}

fn json_response(
    status: u16,
    body: Value,
    extra: Option<(&'static str, &'static str)>,
) -> Response {
    let mut r = Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json");
    if let Some((n, v)) = extra {
        r = r.header(n, v);
    }
    r.body(Body::from(body.to_string())).expect("response")
}

fn status_only(status: u16) -> Response {
    Response::builder()
        .status(status)
        .body(Body::empty())
        .expect("response")
}

/// An SSE stream of what `rx` brings (until its senders are gone), with keep-alive comments;
/// `hold` keeps a sender for a stream that never ends. Counts its close by the client.
fn sse(
    st: Arc<LegacyState>,
    rx: mpsc::UnboundedReceiver<String>,
    hold: Option<mpsc::UnboundedSender<String>>,
) -> Response {
    struct Stream {
        rx: mpsc::UnboundedReceiver<String>,
        tick: tokio::time::Interval,
        st: Arc<LegacyState>,
        _hold: Option<mpsc::UnboundedSender<String>>,
    }
    impl Drop for Stream {
        fn drop(&mut self) {
            self.st.streams_closed.fetch_add(1, Ordering::SeqCst);
        }
    }
    let s = Stream {
        rx,
        tick: tokio::time::interval(KEEP_ALIVE),
        st,
        _hold: hold,
    };
    let body = futures_util::stream::unfold(s, |mut s| async move {
        let chunk = tokio::select! {
            m = s.rx.recv() => m?,
            _ = s.tick.tick() => ": keep-alive\n\n".into(),
        };
        Some((Ok::<_, std::convert::Infallible>(chunk), s))
    });
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(Body::from_stream(body))
        .expect("response")
}

/// The session and version checks of a request after `initialize` (2025-11-25): the
/// refusal, if any.
fn refusal(st: &LegacyState, headers: &HeaderMap) -> Option<Response> {
    let h = |n: &str| headers.get(n).and_then(|v| v.to_str().ok());
    if st.script.session.is_some() {
        match h("mcp-session-id") {
            None => {
                return Some(json_response(
                    400,
                    json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000,
                        "message": "Bad Request: No valid session ID provided"}}),
                    None,
                ));
            }
            Some(s)
                if Some(s) != st.live.lock().expect("lock").as_deref()
                    || st.session_gone.load(Ordering::SeqCst) =>
            {
                return Some(json_response(
                    404,
                    json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32001,
                        "message": "Session not found"}}),
                    None,
                ));
            }
            Some(_) => {}
        }
    }
    if h("mcp-protocol-version") != Some(VERSION) {
        return Some(json_response(
            400,
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000,
                "message": "Bad Request: Unsupported protocol version"}}),
            None,
        ));
    }
    None
}

async fn mcp(
    State(st): State<Arc<LegacyState>>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let msg = serde_json::from_slice::<Value>(&body).unwrap_or(Value::Null);
    if method == Method::POST && msg["method"] == "initialize" {
        tokio::time::sleep(st.script.initialize_delay).await;
    }
    if method == Method::POST && msg["method"] == "notifications/initialized" {
        tokio::time::sleep(st.script.initialized_delay).await;
    }
    let (status, response) = answer(&st, &method, &headers, &msg);
    let mut seen = Seen::new(method.as_str(), &headers, msg);
    seen.status = status;
    st.seen.lock().expect("lock").push(seen);
    response
}

fn answer(
    st: &Arc<LegacyState>,
    verb: &Method,
    headers: &HeaderMap,
    msg: &Value,
) -> (u16, Response) {
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let r = if *verb == Method::GET {
        get(st, headers, accept)
    } else if *verb == Method::DELETE {
        refusal(st, headers).unwrap_or_else(|| status_only(200))
    } else if *verb == Method::POST {
        post(st, headers, accept, msg)
    } else {
        status_only(405)
    };
    (r.status().as_u16(), r)
}

fn get(st: &Arc<LegacyState>, headers: &HeaderMap, accept: &str) -> Response {
    if let Some(last) = headers.get("last-event-id").and_then(|v| v.to_str().ok()) {
        if let Some(r) = refusal(st, headers) {
            return r;
        }
        let key = last.rsplit_once('-').map_or(last, |(k, _)| k).to_string();
        if let Some(r) = st.resumable.lock().expect("lock").get_mut(&key) {
            return event_stream(r.events(&key));
        }
        // Not a request's stream: the GET stream opens again (the test writes its replay).
    }
    if !st.script.get_stream {
        return status_only(405);
    }
    if !accept.contains("text/event-stream") {
        return status_only(406);
    }
    if let Some(r) = refusal(st, headers) {
        return r;
    }
    let (tx, rx) = mpsc::unbounded_channel();
    *st.stream.lock().expect("lock") = Some(tx);
    sse(st.clone(), rx, None)
}

fn post(st: &Arc<LegacyState>, headers: &HeaderMap, accept: &str, msg: &Value) -> Response {
    if !(accept.contains("application/json") && accept.contains("text/event-stream")) {
        return status_only(406);
    }
    let method = msg["method"].as_str().unwrap_or("");
    if method == "server/discover"
        && let Some((status, body)) = &st.script.discover
    {
        let body = serde_json::from_str(body).unwrap_or(Value::Null);
        return json_response(*status, body, None);
    }
    let id = msg.get("id").cloned();
    if method == "initialize" {
        let result = json!({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": VERSION,
            "capabilities": {"tools": {"listChanged": true}},
            "serverInfo": {"name": "legacy-http-fixture", "version": "1.0.0"}}});
        let Some(first) = st.script.session else {
            return json_response(200, result, None);
        };
        let n = st.sessions_started.fetch_add(1, Ordering::SeqCst) + 1;
        let session = match n {
            1 => first.to_string(),
            n => format!("sess-{n}"),
        };
        *st.live.lock().expect("lock") = Some(session.clone());
        let mut r = json_response(200, result, None);
        if let Ok(v) = axum::http::HeaderValue::from_str(&session) {
            r.headers_mut().insert("mcp-session-id", v);
        }
        return r;
    }
    if let Some(r) = refusal(st, headers) {
        return r;
    }
    let Some(id) = id.filter(|_| !method.is_empty()) else {
        // A notification or a response.
        return status_only(202);
    };
    let result = match method {
        "tools/list" => json!({"tools": [
            {"name": "echo", "inputSchema": {"type": "object"}},
            {"name": "slow", "inputSchema": {"type": "object"}}]}),
        "tools/call" if msg["params"]["name"] == "resumable" => {
            let args = &msg["params"]["arguments"];
            let key = format!("s{id}");
            let mut r = Resumable {
                id: id.clone(),
                progress_token: msg["params"]["_meta"]["progressToken"].clone(),
                closes: args["closes"].as_u64().unwrap_or(1),
                sent: 0,
            };
            let retry = args["retry_ms"].as_u64().unwrap_or(10);
            let body = format!("id: {key}-0\nretry: {retry}\ndata:\n\n{}", r.events(&key));
            st.resumable.lock().expect("lock").insert(key, r);
            return event_stream(body);
        }
        "tools/call" if msg["params"]["name"] == "slow" => {
            // Never answered: the stream holds its own sender, so it stays open.
            let (tx, rx) = mpsc::unbounded_channel();
            return sse(st.clone(), rx, Some(tx));
        }
        "tools/call" => json!({"content": [{"type": "text",
            "text": msg["params"]["arguments"]["text"].as_str().unwrap_or("")}]}),
        "ping" | "resources/subscribe" | "resources/unsubscribe" | "logging/setLevel" => {
            json!({})
        }
        _ => {
            return json_response(
                200,
                json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32601, "message": "Method not found"}}),
                None,
            );
        }
    };
    json_response(
        200,
        json!({"jsonrpc": "2.0", "id": id, "result": result}),
        None,
    )
}
