//! 2025-11-25 Streamable HTTP sessions (2025-11-25 basic/transports, "Session Management"),
//! served by a pipe of JSON-RPC lines that the application starts ([`SessionFactory`]; the
//! embedded bridge's in-process bridge, `embed::serve_http`). The rules: the module doc of
//! `server::http`.

use super::{
    Body, HttpOptions, Shared, accept, bad_body, check_bearer, empty, error_answer, not_allowed,
    read_body, stopped_answer, with_body,
};
use crate::protocol::revisions::errors::Cause;
use crate::protocol::revisions::methods;
use crate::protocol::wire::id::Id;
use crate::protocol::wire::jsonrpc::{self, Message, ParseError};
use crate::protocol::wire::raw;
use crate::server::RpcError;
use crate::server::dispatch;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method as HttpMethod, Request, Response, StatusCode};
use serde_json::Value;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::task::Poll;
use std::time::Instant;

/// The header of the session id (2025-11-25 basic/transports).
pub const SESSION_ID_HEADER: &str = "mcp-session-id";
/// How long a session lives without a request and without an open stream (30 minutes).
pub const DEFAULT_SESSION_IDLE_TIME_LIMIT: Duration = Duration::from_secs(30 * 60);
/// How long a new session waits for its client's next message (30 s): a client that got the
/// `initialize` result sends `notifications/initialized` at once (2025-11-25
/// basic/lifecycle), so a session that hears nothing in this time is one whose client never
/// got its id (it went away before the answer) and could never use or delete it.
pub const DEFAULT_SESSION_CLAIM_TIME_LIMIT: Duration = Duration::from_secs(30);
/// Sessions at once (256): each is a bridge with its actors.
pub const DEFAULT_MAX_SESSIONS: usize = 256;
/// Server messages a session keeps for its next GET stream while none is open (256); past
/// it the oldest is dropped.
pub const SESSION_BUFFER_MAX_MESSAGES: usize = 256;
/// Messages queued toward one response stream (64): past it the session's output waits for
/// the client to read (its own queue is bounded: [`crate::transport::writer`]).
const STREAM_QUEUE_MESSAGES: usize = 64;
/// Client messages queued into one session's input (64): past it a POST waits.
pub const SESSION_INPUT_QUEUE_MESSAGES: usize = 64;
/// Server requests of one session whose POST stream is remembered for their cancellation
/// (64: a session's open elicitations and samplings at once); past it the oldest is forgotten,
/// and its cancellation waits for the GET stream.
const ASKED_MAX_REQUESTS: usize = 64;
/// Lines queued out of one session (64).
pub const SESSION_OUTPUT_QUEUE_MESSAGES: usize = 64;
/// Ids of one session's requests whose POST stream closed before their response, kept until
/// it comes (256, the bridge's requests in flight): a POST that reuses one gets
/// `duplicate_id`. Past it the oldest is forgotten (a request the bridge cancelled sends no
/// response, and a client must not make the list grow for good).
pub const SESSION_ORPHAN_MAX_IDS: usize =
    crate::protocol::revisions::defaults::MAX_IN_FLIGHT_REQUESTS;
/// The longest pause between two checks of idle sessions; a shorter idle time limit is
/// checked four times per limit.
const IDLE_CHECK_MAX_INTERVAL: Duration = Duration::from_secs(1);
const IDLE_CHECK_MIN_INTERVAL: Duration = Duration::from_millis(10);
/// What the session writes is at most as deep as what the bridge takes from its upstream,
/// plus its own wrapping of a result.
const OUTPUT_MAX_DEPTH: usize = jsonrpc::MAX_UPSTREAM_DEPTH + 8;
/// Random bits of a session id (2025-11-25: a session id should be globally unique and
/// cryptographically secure).
const SESSION_ID_BYTES: usize = 16;

/// The two ends of a session that the application serves: JSON-RPC messages, one per line
/// without its `\n`.
pub struct SessionEnds {
    /// The client's messages. Its end (every sender gone) ends the session.
    pub input: mpsc::Receiver<Bytes>,
    /// The session's messages (responses, server requests and notifications). When it closes
    /// the session has ended.
    pub output: mpsc::Sender<String>,
}

/// The future of [`SessionFactory::start`].
pub type SessionStart = Pin<Box<dyn Future<Output = io::Result<()>> + Send>>;

/// Starts the 2025-11-25 sessions of an HTTP server ([`HttpOptions::sessions`]).
pub trait SessionFactory: Send + Sync + 'static {
    /// Starts serving one session on `ends`; resolves once it runs. An error fails the
    /// `initialize` (500).
    fn start(&self, ends: SessionEnds) -> SessionStart;
}

/// The session factory of [`HttpOptions::sessions`]. Two are equal when they are the same
/// factory.
#[derive(Clone)]
pub struct Sessions(pub(super) Arc<dyn SessionFactory>);

impl fmt::Debug for Sessions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Sessions(..)")
    }
}

impl PartialEq for Sessions {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Sessions {}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing panics while one of these locks is held; take the state anyway.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The sessions of one HTTP server.
pub(super) struct SessionTable {
    factory: Sessions,
    max: usize,
    idle_limit: Duration,
    claim_limit: Duration,
    inner: Mutex<TableInner>,
}

struct TableInner {
    sessions: HashMap<String, Arc<Session>>,
    /// Sessions whose `initialize` is starting them: they count toward the bound.
    starting: usize,
}

impl SessionTable {
    pub(super) fn new(factory: Sessions, options: &HttpOptions) -> Arc<SessionTable> {
        Arc::new(SessionTable {
            factory,
            max: options.max_sessions,
            idle_limit: options.session_idle_time_limit,
            claim_limit: options.session_claim_time_limit,
            inner: Mutex::new(TableInner {
                sessions: HashMap::new(),
                starting: 0,
            }),
        })
    }

    fn get(&self, id: &str) -> Option<Arc<Session>> {
        lock(&self.inner).sessions.get(id).cloned()
    }

    /// Counts a session that starts; at the bound, an idle session ends to make room (a burst
    /// of `initialize` POSTs, which any local client can send in seconds, must not lock every
    /// other client out until the sessions expire): one that no message claimed after its
    /// `initialize` first (such a burst then ends its own sessions, not those of clients that
    /// use theirs), then the one idle longest. A busy session never ends so; false when every
    /// one is busy.
    fn reserve(&self) -> bool {
        let evicted = {
            let mut inner = lock(&self.inner);
            let mut evicted = None;
            if inner.sessions.len() + inner.starting >= self.max {
                let idlest = inner
                    .sessions
                    .values()
                    .filter_map(|session| {
                        let (claimed, since) = session.idle_since()?;
                        Some((claimed, since, session.id.clone()))
                    })
                    .min();
                let Some((_, _, id)) = idlest else {
                    return false;
                };
                evicted = inner.sessions.remove(&id);
            }
            inner.starting += 1;
            evicted
        };
        if let Some(session) = evicted {
            tracing::debug!(session = %session.id, "an HTTP session ended: the table was full and it was idle longest");
            session.end();
        }
        true
    }

    fn release(&self) {
        let mut inner = lock(&self.inner);
        inner.starting = inner.starting.saturating_sub(1);
    }

    fn insert(&self, session: Arc<Session>) {
        let mut inner = lock(&self.inner);
        inner.starting = inner.starting.saturating_sub(1);
        inner.sessions.insert(session.id.clone(), session);
    }

    /// Ends the session `id` (the pipe's input closes); false when there is none.
    fn end(&self, id: &str) -> bool {
        let removed = lock(&self.inner).sessions.remove(id);
        removed.map(|session| session.end()).is_some()
    }

    /// Ends every session (the server stops).
    pub(super) fn end_all(&self) {
        let all: Vec<_> = lock(&self.inner).sessions.drain().collect();
        for (_, session) in all {
            session.end();
        }
    }

    /// Ends the sessions that had no request and no open stream for the idle time limit,
    /// until `stop`.
    pub(super) async fn end_idle(self: Arc<Self>, stop: CancellationToken) {
        let every = (self.idle_limit.min(self.claim_limit) / 4)
            .clamp(IDLE_CHECK_MIN_INTERVAL, IDLE_CHECK_MAX_INTERVAL);
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = ticks.tick() => {}
            }
            let idle: Vec<Arc<Session>> = {
                let mut inner = lock(&self.inner);
                let ids: Vec<String> = inner
                    .sessions
                    .values()
                    .filter(|session| session.idle_for(self.idle_limit, self.claim_limit))
                    .map(|session| session.id.clone())
                    .collect();
                ids.iter()
                    .filter_map(|id| inner.sessions.remove(id))
                    .collect()
            };
            for session in idle {
                tracing::debug!(session = %session.id, "an HTTP session ended: idle past its time limit");
                session.end();
            }
        }
    }
}

/// One message toward a stream.
enum Out {
    /// A server request or notification.
    Message(Bytes),
    /// The response that ends a POST's stream.
    Response(Bytes),
}

/// One session: its input, and where its output goes.
struct Session {
    id: String,
    id_header: HeaderValue,
    /// The pipe's input; taken when the session ends, which closes it.
    input: Mutex<Option<mpsc::Sender<Bytes>>>,
    routes: Mutex<Routes>,
    /// Numbers the streams, so that a stream's end removes its own route only.
    serial: AtomicU64,
}

struct Routes {
    /// The POSTs waiting for their response, by request id.
    waiting: HashMap<Id, Waiter>,
    /// Server requests that went on a POST's stream, with that POST's request id and stream
    /// serial, newest last (at most [`ASKED_MAX_REQUESTS`]): their cancellation goes there
    /// too, or nowhere once that stream is gone.
    asked: VecDeque<(Id, Id, u64)>,
    /// The ids of requests whose POST stream closed before their response came, oldest
    /// first (at most [`SESSION_ORPHAN_MAX_IDS`]): the request goes on (2025-11-25
    /// basic/transports: a disconnection is no cancellation), so its id is still in use.
    orphans: VecDeque<Id>,
    /// The GET stream that is live.
    get: Option<GetStream>,
    /// Server messages that no GET stream has taken: they wait for the live one, or the next.
    buffered: VecDeque<Bytes>,
    /// Streams open: POSTs waiting and the GET stream.
    open: usize,
    /// The end of the last request or stream.
    last_active: Instant,
    /// A message came after the `initialize`: the client has the session's id.
    claimed: bool,
    ended: bool,
}

impl Routes {
    /// Notes that the server request `asked` went on the stream of the POST `post`.
    fn note_asked(&mut self, asked: Id, post: &Id) {
        let Some(serial) = self.waiting.get(post).map(|w| w.serial) else {
            return;
        };
        if self.asked.len() >= ASKED_MAX_REQUESTS {
            self.asked.pop_front();
        }
        self.asked.push_back((asked, post.clone(), serial));
    }

    /// The POST of the request a message belongs to by its content: a progress notification's
    /// token, or a cancellation of a server request that went on a POST's stream. `Some(None)`:
    /// it belongs to a request whose POST stream is gone.
    fn owner(&self, message: &Value) -> Option<Option<Id>> {
        match message.get("method").and_then(Value::as_str) {
            Some(methods::PROGRESS) => {
                let token = message.pointer("/params/progressToken")?.to_string();
                let waiter = self
                    .waiting
                    .iter()
                    .find(|(_, w)| w.progress.as_deref() == Some(token.as_str()));
                Some(waiter.map(|(id, _)| id.clone()))
            }
            Some(methods::CANCELLED) => {
                let asked = Id::from_value(message.pointer("/params/requestId")?)?;
                let (_, post, serial) = self.asked.iter().find(|(a, _, _)| *a == asked)?;
                let open = self.waiting.get(post).is_some_and(|w| w.serial == *serial);
                Some(open.then(|| post.clone()))
            }
            _ => None,
        }
    }

    /// The routes of a new session: nothing waits, nothing is open.
    fn new() -> Routes {
        Routes {
            waiting: HashMap::new(),
            asked: VecDeque::new(),
            orphans: VecDeque::new(),
            get: None,
            buffered: VecDeque::new(),
            open: 0,
            last_active: Instant::now(),
            claimed: false,
            ended: false,
        }
    }

    /// Whether a request `id` is waiting for its response, on a POST or orphaned.
    fn in_use(&self, id: &Id) -> bool {
        self.waiting.contains_key(id) || self.orphans.contains(id)
    }

    /// The POST of request `id` went away before its response: keeps its id in use.
    fn orphan(&mut self, id: Id) {
        if self.orphans.len() >= SESSION_ORPHAN_MAX_IDS {
            self.orphans.pop_front();
        }
        self.orphans.push_back(id);
    }

    /// The waiter of the response `id`; none when there is none, and then an orphan of
    /// that id is forgotten (its response has come, and goes nowhere).
    fn take_waiter(&mut self, id: &Id) -> Option<Waiter> {
        let waiter = self.waiting.remove(id);
        if waiter.is_none()
            && let Some(at) = self.orphans.iter().position(|o| o == id)
        {
            self.orphans.remove(at);
        }
        waiter
    }
}

/// The session's live GET stream. Its channel belongs to the session, not to the HTTP
/// answer: a new GET takes it over (the old answer ends), and what the old one had not taken
/// goes to the new one, so nothing is lost in the handover and nothing is written to a
/// replaced stream.
struct GetStream {
    serial: u64,
    sender: mpsc::Sender<Out>,
    lines: mpsc::Receiver<Out>,
    /// Cancelled when this stream is replaced or the session ends: its answer ends.
    ended: CancellationToken,
}

impl Routes {
    /// Removes the GET stream `serial` (any when `None`): its answer ends, and the messages it
    /// had not taken wait for the next one (none when the session has ended).
    fn drop_get(&mut self, serial: Option<u64>) {
        if serial.is_some_and(|s| self.get.as_ref().is_none_or(|g| g.serial != s)) {
            return;
        }
        let Some(mut get) = self.get.take() else {
            return;
        };
        get.ended.cancel();
        get.lines.close();
        while let Ok(Out::Message(line) | Out::Response(line)) = get.lines.try_recv() {
            if !self.ended {
                self.buffer(line);
            }
        }
    }

    /// Keeps `line` for the next GET stream, the oldest dropped past
    /// [`SESSION_BUFFER_MAX_MESSAGES`]; false when one was dropped.
    fn buffer(&mut self, line: Bytes) -> bool {
        let room = self.buffered.len() < SESSION_BUFFER_MAX_MESSAGES;
        if !room {
            self.buffered.pop_front();
        }
        self.buffered.push_back(line);
        room
    }
}

struct Waiter {
    serial: u64,
    stream: mpsc::Sender<Out>,
    /// The request's `_meta.progressToken`, as JSON text.
    progress: Option<String>,
}

/// Where a server message goes: a stream, the buffer of the next GET stream, or nowhere
/// (it belongs to a request whose POST stream is gone: messages on a stream relate to its
/// request, 2025-11-25 basic/transports, so no other stream takes it).
enum Route {
    Stream(Target, mpsc::Sender<Out>),
    Wait,
    Drop,
}

/// A stream of the session.
enum Target {
    Get(u64),
    Post(Id),
}

impl Session {
    fn routes(&self) -> MutexGuard<'_, Routes> {
        lock(&self.routes)
    }

    /// No stream open and nothing since `limit` ago, or since `claim_limit` ago for a
    /// session that no message after its `initialize` claimed.
    fn idle_for(&self, limit: Duration, claim_limit: Duration) -> bool {
        let routes = self.routes();
        let limit = if routes.claimed {
            limit
        } else {
            limit.min(claim_limit)
        };
        routes.open == 0 && routes.last_active.elapsed() >= limit
    }

    /// Whether a message claimed the session after its `initialize`, and when it became
    /// idle; `None` while it is busy: a stream is open (a POST waiting for its response, or
    /// the GET stream) or a request whose POST stream closed still runs.
    fn idle_since(&self) -> Option<(bool, Instant)> {
        let routes = self.routes();
        (routes.open == 0 && routes.orphans.is_empty())
            .then_some((routes.claimed, routes.last_active))
    }

    /// Closes the input (the pipe's end of input: the bridge's shutdown cascade) and every
    /// stream of the session.
    fn end(&self) {
        lock(&self.input).take();
        let mut routes = self.routes();
        routes.ended = true;
        routes.waiting.clear();
        routes.orphans.clear();
        routes.drop_get(None);
        routes.buffered.clear();
    }

    /// Sends a client message into the session; false when it has ended.
    async fn send(&self, line: Bytes) -> bool {
        let input = lock(&self.input).clone();
        match input {
            Some(input) => input.send(line).await.is_ok(),
            None => false,
        }
    }

    /// Where a server message goes.
    fn target(&self, message: &Value) -> Route {
        let routes = self.routes();
        match routes.owner(message) {
            Some(Some(id)) => {
                return match routes.waiting.get(&id) {
                    Some(waiter) => Route::Stream(Target::Post(id), waiter.stream.clone()),
                    None => Route::Drop,
                };
            }
            Some(None) => return Route::Drop,
            None => {}
        }
        if let Some(get) = &routes.get {
            return Route::Stream(Target::Get(get.serial), get.sender.clone());
        }
        // A list change, a resource update or a cancellation of a request that went to no
        // POST concerns the session, not a request: it waits for the GET stream (messages
        // on a POST's stream should relate to its request, 2025-11-25 basic/transports).
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let of_the_session = method.ends_with("/list_changed")
            || method == "notifications/resources/updated"
            || method == methods::CANCELLED;
        if !of_the_session
            && routes.waiting.len() == 1
            && let Some((id, waiter)) = routes.waiting.iter().next()
        {
            return Route::Stream(Target::Post(id.clone()), waiter.stream.clone());
        }
        Route::Wait
    }

    /// Sends the response to the request `id` to the POST waiting for it.
    async fn respond(&self, id: &Id, line: Bytes) {
        let waiter = self.routes().take_waiter(id);
        // No waiter: the client closed that POST's stream (2025-11-25 lets the response go).
        if let Some(waiter) = waiter {
            let _ = waiter.stream.send(Out::Response(line)).await;
        }
    }

    /// Forgets a stream whose client went away.
    fn forget(&self, target: &Target) {
        let mut routes = self.routes();
        match target {
            Target::Get(serial) => routes.drop_get(Some(*serial)),
            Target::Post(id) => {
                if routes.waiting.remove(id).is_some() {
                    routes.orphan(id.clone());
                }
            }
        }
    }

    fn buffer(&self, line: Bytes) {
        let mut routes = self.routes();
        if routes.ended {
            return;
        }
        if !routes.buffer(line) {
            tracing::warn!(session = %self.id, "an HTTP session's message for its GET stream was dropped: {SESSION_BUFFER_MAX_MESSAGES} wait already");
        }
    }

    /// The next message of the GET stream `serial`: those that waited first, then the
    /// channel's; `None` once that stream is no longer the live one.
    fn poll_get(&self, serial: u64, cx: &mut std::task::Context<'_>) -> Poll<Option<Bytes>> {
        let mut routes = self.routes();
        let routes = &mut *routes;
        let Some(get) = routes.get.as_mut().filter(|g| g.serial == serial) else {
            return Poll::Ready(None);
        };
        if let Some(line) = routes.buffered.pop_front() {
            return Poll::Ready(Some(line));
        }
        get.lines
            .poll_recv(cx)
            .map(|out| out.map(|(Out::Message(line) | Out::Response(line))| line))
    }

    /// Delivers one line of the session's output.
    async fn deliver(&self, line: String) {
        // Nearly every line is a success response: its id is read without a value tree.
        let line = Bytes::from(line);
        if let Some((id, _)) = raw::response(line.clone(), OUTPUT_MAX_DEPTH) {
            self.respond(&id, line).await;
            return;
        }
        let Ok(message) = jsonrpc::parse_value_bounded(&line, OUTPUT_MAX_DEPTH) else {
            tracing::warn!(session = %self.id, "an HTTP session wrote a line that is no JSON message; dropped");
            return;
        };
        if message.get("method").is_none() {
            if let Some(id) = message.get("id").and_then(Id::from_value) {
                self.respond(&id, line).await;
            }
            return;
        }
        let mut line = line;
        loop {
            let (target, stream) = match self.target(&message) {
                Route::Stream(target, stream) => (target, stream),
                Route::Wait => break,
                Route::Drop => {
                    tracing::debug!(session = %self.id, "an HTTP session's message of a request whose stream is gone was dropped");
                    return;
                }
            };
            match stream.send(Out::Message(line)).await {
                Ok(()) => {
                    if let (Target::Post(post), Some(asked)) =
                        (&target, message.get("id").and_then(Id::from_value))
                    {
                        self.routes().note_asked(asked, post);
                    }
                    return;
                }
                Err(mpsc::error::SendError(back)) => {
                    self.forget(&target);
                    line = match back {
                        Out::Message(line) | Out::Response(line) => line,
                    };
                }
            }
        }
        self.buffer(line);
    }
}

/// Counts a stream as open while it lives; its end is the session's last activity, and
/// removes its route.
struct StreamGuard {
    session: Arc<Session>,
    serial: u64,
    /// The POST's request id; none for the GET stream.
    request: Option<Id>,
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        let mut routes = self.session.routes();
        routes.open = routes.open.saturating_sub(1);
        routes.last_active = Instant::now();
        match &self.request {
            Some(id) => {
                if routes
                    .waiting
                    .get(id)
                    .is_some_and(|w| w.serial == self.serial)
                {
                    routes.waiting.remove(id);
                    if !routes.ended {
                        tracing::debug!(session = %self.session.id, request = %id, "an HTTP session's POST stream closed before its response: the request goes on");
                        routes.orphan(id.clone());
                    }
                }
            }
            None => routes.drop_get(Some(self.serial)),
        }
    }
}

/// Reads the session's output until it closes; then the session has ended.
async fn route_output(
    table: Arc<SessionTable>,
    session: Arc<Session>,
    mut output: mpsc::Receiver<String>,
) {
    while let Some(line) = output.recv().await {
        session.deliver(line).await;
    }
    if table.end(&session.id) {
        tracing::debug!(session = %session.id, "an HTTP session ended: its bridge stopped");
    }
    session.end();
}

fn session_id() -> Option<String> {
    let mut bytes = [0u8; SESSION_ID_BYTES];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn with_session(mut response: Response<Body>, session: &Session) -> Response<Body> {
    response
        .headers_mut()
        .insert(SESSION_ID_HEADER, session.id_header.clone());
    response
}

fn unknown_session(id: Option<&Id>) -> Response<Body> {
    error_answer(StatusCode::NOT_FOUND, id, Cause::UnknownSession.error(None))
}

/// The answer to the request `id` whose session ended before its response: the stop's 503
/// when the server is stopping (as a 2026-07-28 request gets it), else 404.
fn ended_before_response(shared: &Shared, id: &Id) -> Response<Body> {
    if shared.stopping.is_cancelled() {
        stopped_answer(id)
    } else {
        unknown_session(Some(id))
    }
}

/// Starts a session with the `initialize` request `id` (its message `body`) and answers it.
pub(super) async fn start(
    shared: &Shared,
    table: &Arc<SessionTable>,
    id: &Id,
    body: Value,
) -> Response<Body> {
    if !table.reserve() {
        let error = Cause::TooManySessions.error(Some(table.max.into()));
        return error_answer(StatusCode::SERVICE_UNAVAILABLE, Some(id), error);
    }
    let (input, input_end) = mpsc::channel(SESSION_INPUT_QUEUE_MESSAGES);
    let (output_end, output) = mpsc::channel(SESSION_OUTPUT_QUEUE_MESSAGES);
    let started = match session_id() {
        Some(session_id) => {
            let ends = SessionEnds {
                input: input_end,
                output: output_end,
            };
            table.factory.0.start(ends).await.map(|()| session_id)
        }
        None => Err(io::Error::other("no random bytes for a session id")),
    };
    let session_id = match started {
        Ok(session_id) => session_id,
        Err(error) => {
            table.release();
            tracing::warn!(%error, "an HTTP session did not start");
            let error = RpcError::internal("Internal error: the session did not start");
            return error_answer(StatusCode::INTERNAL_SERVER_ERROR, Some(id), error);
        }
    };
    let Ok(id_header) = HeaderValue::from_str(&session_id) else {
        table.release();
        return error_answer(
            StatusCode::INTERNAL_SERVER_ERROR,
            Some(id),
            RpcError::internal("Internal error"),
        );
    };
    let session = Arc::new(Session {
        id: session_id,
        id_header,
        input: Mutex::new(Some(input)),
        routes: Mutex::new(Routes::new()),
        serial: AtomicU64::new(0),
    });
    table.insert(session.clone());
    tokio::spawn(route_output(table.clone(), session.clone(), output));
    tracing::debug!(session = %session.id, "an HTTP session started");
    // An `initialize` has no progress to report: a token of it is not read.
    let progress = progress_token(&body).ok().flatten();
    let line = Bytes::from(body.to_string());
    let response = serve_in_session(shared, &session, id, progress, line).await;
    settle_initialize(table, &session, response).await
}

/// The answer to a session's `initialize`. When it is a JSON-RPC error the session ends (its
/// bridge's input closes) and the answer carries no `Mcp-Session-Id`: the id goes "on the
/// HTTP response containing the InitializeResult" (2025-11-25 basic/transports), and a
/// session whose initialization failed serves nothing.
async fn settle_initialize(
    table: &SessionTable,
    session: &Session,
    response: Response<Body>,
) -> Response<Body> {
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes() == accept::JSON.as_bytes());
    if !is_json {
        // An SSE answer (server messages came before the response) has sent its headers
        // before its response is known.
        return response;
    }
    let (mut parts, body) = response.into_parts();
    // A JSON answer's body is whole (`Full`): this collects at once.
    let Ok(collected) = body.collect().await;
    let bytes = collected.to_bytes();
    let failed = jsonrpc::parse_value_bounded(&bytes, OUTPUT_MAX_DEPTH)
        .is_ok_and(|answer| answer.get("error").is_some());
    if failed {
        parts.headers.remove(SESSION_ID_HEADER);
        if table.end(&session.id) {
            tracing::debug!(session = %session.id, "an HTTP session ended: its initialize failed");
        }
    }
    Response::from_parts(parts, Full::new(bytes).boxed_unsync())
}

/// Answers a request to the endpoint with `Mcp-Session-Id`.
pub(super) async fn answer(
    shared: &Shared,
    table: &Arc<SessionTable>,
    request: Request<Incoming>,
    session_id: &HeaderValue,
) -> Response<Body> {
    if let Some(auth) = &shared.auth
        && let Some(refused) = check_bearer(auth, request.headers()).await
    {
        return refused;
    }
    let Some(session) = session_id.to_str().ok().and_then(|id| table.get(id)) else {
        return unknown_session(None);
    };
    session.routes().claimed = true;
    match *request.method() {
        HttpMethod::GET => open_stream(shared, &session, request.headers()),
        HttpMethod::DELETE => {
            table.end(&session.id);
            tracing::debug!(session = %session.id, "an HTTP session ended: deleted");
            empty(StatusCode::NO_CONTENT)
        }
        HttpMethod::POST => post(shared, &session, request).await,
        _ => not_allowed("GET, POST, DELETE"),
    }
}

/// A POST into a session: a request is answered on it, anything else gets 202.
async fn post(
    shared: &Shared,
    session: &Arc<Session>,
    request: Request<Incoming>,
) -> Response<Body> {
    let (_, body) = match read_body(&shared.options, request).await {
        Ok(read) => read,
        Err(refused) => return refused,
    };
    let max_depth = shared.options.max_depth;
    // Nearly every POST is a request: its envelope is read without a value tree (the
    // session's bridge parses the message itself), and a body on one line goes in as it came.
    if let Some((id, _, params)) = raw::request(body.clone(), max_depth)
        && memchr::memchr2(b'\n', b'\r', &body).is_none()
    {
        let Ok(progress) = params.as_ref().map_or(Ok(None), raw_progress_token) else {
            return invalid_progress_token(session, &id);
        };
        return serve_in_session(shared, session, &id, progress, body).await;
    }
    let message = match jsonrpc::parse(&body, max_depth) {
        Ok(message) => message,
        Err(error) => return bad_body(&error, max_depth),
    };
    let Ok(value) = jsonrpc::parse_value_bounded(&body, max_depth) else {
        return bad_body(&ParseError::NotJson { id: None }, max_depth);
    };
    match message {
        Message::Request { id, .. } => {
            let Ok(progress) = progress_token(&value) else {
                return invalid_progress_token(session, &id);
            };
            let line = Bytes::from(value.to_string());
            serve_in_session(shared, session, &id, progress, line).await
        }
        _ => {
            if session.send(Bytes::from(value.to_string())).await {
                session.routes().last_active = Instant::now();
                with_session(empty(StatusCode::ACCEPTED), session)
            } else {
                unknown_session(None)
            }
        }
    }
}

/// The `_meta.progressToken` of a request's params, as JSON text (serde_json's, as
/// [`Session::target`] writes the token of a progress notification); `Err` when it is no
/// usable id.
fn progress_token(message: &Value) -> Result<Option<String>, ()> {
    message
        .pointer("/params/_meta/progressToken")
        .map(token_text)
        .transpose()
}

/// [`progress_token`] of params read without a value tree.
fn raw_progress_token(params: &raw::Params) -> Result<Option<String>, ()> {
    let raw::Params::Object(params) = params else {
        return Ok(None);
    };
    let Some(meta) = params.get("_meta") else {
        return Ok(None);
    };
    let Some(meta) = raw::Object::read(meta) else {
        return Ok(None);
    };
    let Some(token) = meta.get("progressToken") else {
        return Ok(None);
    };
    token
        .to_value()
        .as_ref()
        .map_or(Err(()), token_text)
        .map(Some)
}

/// A progress token as JSON text, if it is a usable id (a string, or an integer in 64 bits:
/// docs/errors.md, "Ids").
fn token_text(token: &Value) -> Result<String, ()> {
    Id::from_value(token).map(|_| token.to_string()).ok_or(())
}

/// The answer to the request `id` whose progress token is no usable id: 400 -32602, as the
/// stateless path answers it (the session's bridge would run it with no progress).
fn invalid_progress_token(session: &Session, id: &Id) -> Response<Body> {
    let error = dispatch::invalid_progress_token();
    with_session(
        error_answer(StatusCode::BAD_REQUEST, Some(id), error),
        session,
    )
}

/// Sends the request `id` (its message `line`, whose `_meta.progressToken` is `progress`) into
/// the session and answers with what the session writes for it.
async fn serve_in_session(
    shared: &Shared,
    session: &Arc<Session>,
    id: &Id,
    progress: Option<String>,
    line: Bytes,
) -> Response<Body> {
    let (stream, mut lines) = mpsc::channel(STREAM_QUEUE_MESSAGES);
    let serial = session.serial.fetch_add(1, Ordering::Relaxed);
    {
        let mut routes = session.routes();
        if routes.ended {
            return unknown_session(Some(id));
        }
        if routes.in_use(id) {
            // Its response could not be told from the other's.
            let error = Cause::DuplicateId.error(None);
            return with_session(
                error_answer(StatusCode::BAD_REQUEST, Some(id), error),
                session,
            );
        }
        routes.waiting.insert(
            id.clone(),
            Waiter {
                serial,
                stream,
                progress,
            },
        );
        routes.open += 1;
    }
    let guard = StreamGuard {
        session: session.clone(),
        serial,
        request: Some(id.clone()),
    };
    if !session.send(line).await {
        return ended_before_response(shared, id);
    }
    match lines.recv().await {
        Some(Out::Response(line)) => {
            drop(guard);
            with_session(
                with_body(StatusCode::OK, line, Some("application/json")),
                session,
            )
        }
        Some(Out::Message(line)) => with_session(
            stream_of(
                Source::Post(Some(line), lines),
                guard,
                shared.options.keep_alive_interval,
            ),
            session,
        ),
        // The session ended meanwhile.
        None => ended_before_response(shared, id),
    }
}

/// Opens the session's GET stream: the messages that waited for it, then the session's. A
/// GET while one is open takes over from it: the old answer ends, and the messages it had
/// not taken go to the new one (a client that lost its stream without the server noticing,
/// behind a proxy or after a sleep, opens a new one; 2025-11-25 basic/transports lets a
/// client hold several, and a message goes on one of them only).
fn open_stream(shared: &Shared, session: &Arc<Session>, headers: &HeaderMap) -> Response<Body> {
    if !accept::takes_sse(headers) {
        return empty(StatusCode::NOT_ACCEPTABLE);
    }
    let serial = session.serial.fetch_add(1, Ordering::Relaxed);
    let ended = CancellationToken::new();
    {
        let mut routes = session.routes();
        if routes.ended {
            return unknown_session(None);
        }
        match routes.get.as_mut() {
            Some(old) => {
                old.ended.cancel();
                old.serial = serial;
                old.ended = ended.clone();
                tracing::debug!(session = %session.id, "an HTTP session's GET stream was taken over by a new one");
            }
            None => {
                let (sender, lines) = mpsc::channel(STREAM_QUEUE_MESSAGES);
                routes.get = Some(GetStream {
                    serial,
                    sender,
                    lines,
                    ended: ended.clone(),
                });
            }
        }
        routes.open += 1;
    }
    let guard = StreamGuard {
        session: session.clone(),
        serial,
        request: None,
    };
    with_session(
        stream_of(
            Source::Get(ended),
            guard,
            shared.options.keep_alive_interval,
        ),
        session,
    )
}

mod stream;
use stream::{Source, stream_of};

#[cfg(test)]
mod tests;
