//! The transport seam of the upstream: what the JSON-RPC correlation layer
//! (`actors::upstream`) needs from whatever carries its frames, and the choice of a transport
//! ([`open`](super::open)). A transport moves frames and ends; it never reads an id to
//! correlate, never times a request, never builds a JSON-RPC message of its own. Two rules of
//! HTTP itself are the HTTP transport's: a request whose response stream broke is sent again
//! under an id of the transport's own, and its response comes back with the id it was given
//! (2026-07-28); a 2025-11-25 session that expired is opened again (`transport/http`).
//!
//! - **In:** a stream of [`TransportEvent`]s, in the upstream's order: frames, then [`TransportEvent::Closed`]
//!   (no more frames) and [`TransportEvent::Ended`] (why). A transport that carries each request
//!   apart (HTTP) reports a request that failed alone with [`TransportEvent::Failed`], and goes on.
//! - **Out:** [`Transport::send`] of one message with its [`Delivery`], through a bounded
//!   queue (the one [`crate::transport::writer::Writer`]).
//! - **Cancel:** [`Transport::abandon`] decides how an abandoned request is carried: taken
//!   out of the queue unsent, a `notifications/cancelled` frame, or a means of the transport
//!   itself (closing the request's stream).
//! - **Stop:** [`Transport::close`] runs the transport's own shutdown steps; [`Transport::kill`]
//!   stops it at once.

use futures_util::future::LocalBoxFuture;
use futures_util::stream::LocalBoxStream;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::child_status::ChildStatus;
use super::children::ChildRegistry;
use super::queue::{Delivery, OutFrame, QueueStats, Sent};

use super::writer::Writer;
use crate::protocol::wire::framing::Frame;
use crate::protocol::wire::id::Id;
use crate::protocol::wire::raw::RawResult;

/// What the correlation layer gives a transport when it opens it.
#[derive(Clone, Debug)]
pub struct OpenOptions {
    /// Longest frame accepted from the upstream, in bytes; a longer one arrives as
    /// [`Frame::TooLong`].
    pub max_line_bytes: usize,
    /// The writer toward the editor: the transport reads no more frames while its queue is
    /// full (back-pressure).
    pub pace: Writer,
    /// The counters of the queue toward the upstream (`upstream_queue` in the metrics line).
    pub queue_stats: Arc<QueueStats>,
    /// The registry of the process's children, which a child upstream joins (the panic hook,
    /// the watchdog and a second signal reach it there).
    pub children: Arc<ChildRegistry>,
}

/// Why a transport ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EndCause {
    /// The child process ended (its stdout closed, or it exited and what was left in its
    /// stdout was read): `status` says how;
    /// `stderr_tail` the last lines of its stderr, quoted (`stderr_tail.rs`), when it was lost
    /// (empty after a shutdown's stop).
    ChildExited {
        /// How it ended.
        status: ChildStatus,
        /// The last lines of its stderr, quoted.
        stderr_tail: Vec<String>,
    },
    /// The in-process server stopped serving: it closed the connection.
    ServerClosed,
    /// The in-process server stopped serving with an I/O error: its text, the words of the
    /// embedder's server or of the OS (kept as text: an `io::Error` is neither `Clone` nor
    /// `Eq`).
    ServerFailed(String),
    /// The in-process server's task went away without a word (it panicked or was aborted).
    PeerDropped,
    /// A 2025-11-25 HTTP server answered `404` to a message carrying its `Mcp-Session-Id`
    /// again right after a new session: the session ended (2025-11-25 basic/transports,
    /// session management).
    SessionEnded,
    /// A shared upstream (`transport::shared`) could not start: why (the spawn's error).
    NotStarted(String),
    /// A connection of a shared upstream fell behind: its bridge took none of the messages
    /// waiting for it (this many), so it ends and the others go on.
    FellBehind(usize),
}

impl EndCause {
    /// What the end means when the server never ran: a child that exited with a shell's code
    /// for a program not found or not executable ([`ChildStatus::cannot_run`]); `None` for
    /// every other end.
    pub fn cannot_run(&self) -> Option<String> {
        match self {
            EndCause::ChildExited { status, .. } => status.cannot_run(),
            _ => None,
        }
    }

    /// The last lines of a lost child's stderr, quoted; empty for every other end.
    pub fn stderr_tail(&self) -> &[String] {
        match self {
            EndCause::ChildExited { stderr_tail, .. } => stderr_tail,
            _ => &[],
        }
    }
}

impl fmt::Display for EndCause {
    /// The text of the log lines and of the error of a failed start; for a child it is the
    /// status alone, as the log has always shown it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EndCause::ChildExited { status, .. } => status.fmt(f),
            EndCause::ServerClosed => f.write_str("the in-process server closed"),
            EndCause::ServerFailed(e) => write!(f, "the in-process server failed: {e}"),
            EndCause::PeerDropped => f.write_str("the in-process server went away"),
            EndCause::SessionEnded => f.write_str("the server ended the HTTP session: HTTP 404"),
            EndCause::NotStarted(why) => write!(f, "the server did not start: {why}"),
            EndCause::FellBehind(waiting) => write!(
                f,
                "this session took none of the {waiting} messages of the shared server waiting for it"
            ),
        }
    }
}

/// Why one request failed in the transport alone ([`TransportEvent::Failed`]; HTTP). What the first
/// `server/discover` got stays visible here (status and error body), for a fallback to an
/// older protocol era to read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestFailure {
    /// The HTTP status of the response, when a response came and was not a success (`None`:
    /// no response at all, or the stream of a 2xx response broke or ended early).
    pub status: Option<u16>,
    /// The JSON-RPC error object of an error response's body, passed through to the editor
    /// (2026-07-28 transports/http: 404 + -32601, 400 + -32020/-32021/-32022); `None` when
    /// the body was empty or not a JSON-RPC error.
    pub error: Option<Value>,
    /// Why, for `data.detail` and the log: `HTTP 503`, `the response is over 67108864 bytes`,
    /// ... Never the URL, a header value or a token.
    pub detail: String,
}

impl RequestFailure {
    /// A failure with a status and no error body.
    pub fn status(status: u16, detail: String) -> Self {
        RequestFailure {
            status: Some(status),
            error: None,
            detail,
        }
    }

    /// A failure without a response (a connection error, a broken stream, a limit).
    pub fn no_response(detail: String) -> Self {
        RequestFailure {
            status: None,
            error: None,
            detail,
        }
    }
}

/// What a transport reports, in the upstream's order.
#[derive(Debug, PartialEq, Eq)]
pub enum TransportEvent {
    /// One frame of the upstream.
    Frame(Frame),
    /// A success response the transport read already (HTTP reads each response to know
    /// that its request is answered): the same as a [`TransportEvent::Frame`] of it, which the
    /// correlation layer would read with [`crate::protocol::wire::raw::response`] into these, without a second read.
    Response {
        /// The response's id.
        id: Id,
        /// Its result.
        result: RawResult,
    },
    /// One request failed in the transport alone (HTTP: its POST failed, or its response
    /// stream broke before the response again after its re-issues); the upstream goes on. Child and Memory never send
    /// it: a broken pipe ends everything.
    Failed {
        /// The upstream id of the request.
        id: Id,
        /// Why: the HTTP status, the error body, a text for the editor and the log.
        failure: RequestFailure,
    },
    /// A sign-in (or a token refresh) completed: the token provider answered a challenge
    /// with a new token (HTTP). A listen stream refused with 401/403 opens again now.
    SignedIn,
    /// No more frames will come: every request in flight fails now. [`TransportEvent::Ended`] follows.
    Closed,
    /// The transport ended, and why. The last event.
    Ended(EndCause),
}

/// How an abandoned request is carried to the upstream ([`Transport::abandon`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Abandoned {
    /// None of its bytes had left: it was taken out of the queue and is never sent.
    Unsent,
    /// It went out: the caller sends `notifications/cancelled` (stdio, in-process).
    NotifyCancelled,
    /// The transport carried the cancel itself (HTTP: closed the request's stream); nothing
    /// more to send.
    Carried,
}

/// One open transport to the upstream (see the module doc).
pub trait Transport {
    /// Sends one message as one frame through the bounded queue toward the upstream;
    /// [`Delivery::Request`] names the request, so the transport can refuse it when the queue
    /// is full ([`Sent::Refused`]), take it out again ([`Transport::abandon`]) or report it
    /// alone ([`TransportEvent::Failed`]).
    fn send(&self, msg: &Value, delivery: Delivery) -> Sent;

    /// Sends one whole frame (newline included) built from pieces ([`OutFrame`]: raw members
    /// of the editor's request are slices of its line), as [`Transport::send`] does. The
    /// default reads the frame back into a value for [`Transport::send`] (a transport that
    /// needs one); a transport that writes bytes sends the pieces as they are, so numbers
    /// keep their exact text and a large member is not copied.
    fn send_frame(&self, frame: OutFrame, delivery: Delivery) -> Sent {
        match serde_json::from_slice::<Value>(&frame.to_vec()) {
            Ok(msg) => self.send(&msg, delivery),
            Err(_) => Sent::Dropped,
        }
    }

    /// The upstream is a legacy server (`protocol::rules::era`): from now on until it ends, the
    /// transport carries the 2025-11-25 protocol as it came (HTTP: 2025-11-25 Streamable
    /// HTTP with its session). Called once, before the first message of the pass-through.
    /// The default does nothing (stdio and in-process carry both eras alike).
    fn pass_through(&self) {}

    /// The transport carries the bridge's answers to requests of the upstream's own
    /// (JSON-RPC 2.0 §4: a stdio server may wait for ever for the answer to its `ping`). A
    /// stream (stdio, in-process) does. 2026-07-28 Streamable HTTP has no requests from the
    /// server and no way to answer one (every POST is a request of the client's), so the HTTP
    /// transport does not, and such a request is only logged.
    fn answers_requests(&self) -> bool {
        true
    }

    /// Frames and bytes queued toward the upstream, for the debug line of a waiting request.
    fn queued(&self) -> (usize, usize);

    /// The correlation layer gave up request `id` (a cancel, its time limit, the end of
    /// input): the transport says how that reaches the upstream.
    fn abandon(&self, id: &Id) -> Abandoned;

    /// The transport's own shutdown steps, each waiting at most `grace` (a child: close its
    /// stdin, wait, SIGTERM to its group, wait, SIGKILL). Resolves with how it ended, if known.
    fn close(self: Box<Self>, grace: Duration) -> LocalBoxFuture<'static, Option<EndCause>>;

    /// Stops at once (a failed discover): a child's group gets SIGKILL, then the isolation
    /// sweep stops every other descendant.
    fn kill(self: Box<Self>) -> LocalBoxFuture<'static, ()>;
}

/// An opened transport: the handle the correlation layer keeps, and its events.
pub struct Opened {
    /// The handle: sends, cancels, shutdown.
    pub transport: Box<dyn Transport>,
    /// The events, ending with [`TransportEvent::Ended`].
    pub events: LocalBoxStream<'static, TransportEvent>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_end_of_an_in_process_server_says_how_it_ended() {
        for (cause, text) in [
            (EndCause::ServerClosed, "the in-process server closed"),
            (
                EndCause::ServerFailed("broken pipe".into()),
                "the in-process server failed: broken pipe",
            ),
            (EndCause::PeerDropped, "the in-process server went away"),
        ] {
            assert_eq!(cause.to_string(), text);
        }
    }
}
