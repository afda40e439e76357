//! 2025-11-25 Streamable HTTP sessions (2025-11-25 basic/transports, "Session Management"),
//! served by a pipe of JSON-RPC lines that the application starts ([`SessionFactory`]; the
//! embedded bridge's in-process bridge, `embed::serve_http`). The rules: the module doc of
//! `server::http`.
//!
//! Files: `table.rs` (the sessions of one server, their bound and their ids), `routes.rs`
//! (where a session's output goes), `handlers.rs` (the HTTP requests of a session: its
//! `initialize`, then GET, POST and DELETE), `stream.rs` (a session's SSE stream).

use bytes::Bytes;
use hyper::header::HeaderValue;
use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;
use tokio::sync::mpsc;

mod handlers;
mod routes;
mod stream;
mod table;

pub(super) use handlers::{answer, start};
use routes::Routes;
pub(super) use table::SessionTable;

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
/// Client messages queued into one session's input (64): past it a POST waits.
pub const SESSION_INPUT_QUEUE_MESSAGES: usize = 64;
/// Lines queued out of one session (64).
pub const SESSION_OUTPUT_QUEUE_MESSAGES: usize = 64;
/// Ids of one session's requests whose POST stream closed before their response, kept until
/// it comes (256, the bridge's requests in flight): a POST that reuses one gets
/// `duplicate_id`. Past it the oldest is forgotten (a request the bridge cancelled sends no
/// response, and a client must not make the list grow for good).
pub const SESSION_ORPHAN_MAX_IDS: usize =
    crate::protocol::revisions::defaults::MAX_IN_FLIGHT_REQUESTS;

/// The two ends of a session that the application serves: JSON-RPC messages, one per line
/// without its `\n`.
pub struct SessionEnds {
    /// The client's messages. Its end (every sender gone) ends the session.
    pub input: mpsc::Receiver<Bytes>,
    /// The session's messages (responses, server requests and notifications). When it closes
    /// the session has ended.
    pub output: mpsc::Sender<String>,
    /// The session's id (`Mcp-Session-Id`), for the log lines of what serves it.
    pub id: String,
}

/// The future of [`SessionFactory::start`].
pub type SessionStart = Pin<Box<dyn Future<Output = io::Result<()>> + Send>>;

/// Starts the 2025-11-25 sessions of an HTTP server
/// ([`HttpOptions::sessions`](super::HttpOptions::sessions)).
pub trait SessionFactory: Send + Sync + 'static {
    /// Starts serving one session on `ends`; resolves once it runs. An error fails the
    /// `initialize` (500).
    fn start(&self, ends: SessionEnds) -> SessionStart;
}

/// The session factory of [`HttpOptions::sessions`](super::HttpOptions::sessions). Two are
/// equal when they are the same factory.
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

/// The characters of a session's id that its log lines show (8 of 32): the whole id is what
/// lets a client into the session, and a log is read by more people than the client.
const SESSION_LOG_ID_CHARS: usize = 8;

impl Session {
    /// The session's id as its log lines show it ([`SESSION_LOG_ID_CHARS`]).
    fn label(&self) -> &str {
        self.id.get(..SESSION_LOG_ID_CHARS).unwrap_or(&self.id)
    }

    fn routes(&self) -> MutexGuard<'_, Routes> {
        lock(&self.routes)
    }

    /// Sends a client message into the session; false when it has ended.
    async fn send(&self, line: Bytes) -> bool {
        let input = lock(&self.input).clone();
        match input {
            Some(input) => input.send(line).await.is_ok(),
            None => false,
        }
    }
}
