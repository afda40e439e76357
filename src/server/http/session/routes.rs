//! Where a session's output goes: a response to the POST that waits for it, a server
//! message to the stream of the request it belongs to, else to the GET stream or the buffer
//! of the next one; the guard that removes a stream's route at its end, and the end of every
//! stream when the session ends.

use super::table::SessionTable;
use super::{SESSION_BUFFER_MAX_MESSAGES, SESSION_ORPHAN_MAX_IDS, Session, lock};
use crate::protocol::revisions::methods;
use crate::protocol::wire::id::Id;
use crate::protocol::wire::jsonrpc;
use crate::protocol::wire::raw;
use bytes::Bytes;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::task::Poll;
use std::time::Instant;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Server requests of one session whose POST stream is remembered for their cancellation
/// (64: a session's open elicitations and samplings at once); past it the oldest is forgotten,
/// and its cancellation waits for the GET stream.
const ASKED_MAX_REQUESTS: usize = 64;
/// What the session writes is at most as deep as what the bridge takes from its upstream,
/// plus its own wrapping of a result.
pub(super) const OUTPUT_MAX_DEPTH: usize = jsonrpc::MAX_UPSTREAM_DEPTH + 8;

/// One message toward a stream.
pub(super) enum Out {
    /// A server request or notification.
    Message(Bytes),
    /// The response that ends a POST's stream.
    Response(Bytes),
}

pub(super) struct Routes {
    /// The POSTs waiting for their response, by request id.
    pub(super) waiting: HashMap<Id, Waiter>,
    /// Server requests that went on a POST's stream, with that POST's request id and stream
    /// serial, newest last (at most [`ASKED_MAX_REQUESTS`]): their cancellation goes there
    /// too, or nowhere once that stream is gone.
    asked: VecDeque<(Id, Id, u64)>,
    /// The ids of requests whose POST stream closed before their response came, oldest
    /// first (at most [`SESSION_ORPHAN_MAX_IDS`]): the request goes on (2025-11-25
    /// basic/transports: a disconnection is no cancellation), so its id is still in use.
    pub(super) orphans: VecDeque<Id>,
    /// The requests that the client cancelled while their POST waited (newest last, at most
    /// [`ASKED_MAX_REQUESTS`]): that POST ends without a response.
    cancelled: VecDeque<Id>,
    /// The GET stream that is live.
    pub(super) get: Option<GetStream>,
    /// Server messages that no GET stream has taken: they wait for the live one, or the next.
    buffered: VecDeque<Bytes>,
    /// Streams open: POSTs waiting and the GET stream.
    pub(super) open: usize,
    /// The end of the last request or stream.
    pub(super) last_active: Instant,
    /// A message came after the `initialize`: the client has the session's id.
    pub(super) claimed: bool,
    pub(super) ended: bool,
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
    pub(super) fn new() -> Routes {
        Routes {
            waiting: HashMap::new(),
            asked: VecDeque::new(),
            orphans: VecDeque::new(),
            cancelled: VecDeque::new(),
            get: None,
            buffered: VecDeque::new(),
            open: 0,
            last_active: Instant::now(),
            claimed: false,
            ended: false,
        }
    }

    /// Whether a request `id` is waiting for its response, on a POST or orphaned.
    pub(super) fn in_use(&self, id: &Id) -> bool {
        self.waiting.contains_key(id) || self.orphans.contains(id)
    }

    /// The client cancelled its request `id` (`notifications/cancelled`): no response will
    /// come (2025-11-25 basic/utilities/cancellation), so its POST ends now (its channel
    /// closes) and its id is free again, whether the POST still waits or went away.
    pub(super) fn cancelled_by_client(&mut self, id: &Id) {
        if let Some(at) = self.orphans.iter().position(|o| o == id) {
            self.orphans.remove(at);
        }
        if self.waiting.remove(id).is_some() {
            if self.cancelled.len() >= ASKED_MAX_REQUESTS {
                self.cancelled.pop_front();
            }
            self.cancelled.push_back(id.clone());
        }
    }

    /// Whether the POST of request `id` ended because its client cancelled it (forgets it).
    pub(super) fn take_cancelled(&mut self, id: &Id) -> bool {
        match self.cancelled.iter().position(|c| c == id) {
            Some(at) => {
                self.cancelled.remove(at);
                true
            }
            None => false,
        }
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
pub(super) struct GetStream {
    pub(super) serial: u64,
    pub(super) sender: mpsc::Sender<Out>,
    pub(super) lines: mpsc::Receiver<Out>,
    /// Cancelled when this stream is replaced or the session ends: its answer ends.
    pub(super) ended: CancellationToken,
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

pub(super) struct Waiter {
    pub(super) serial: u64,
    pub(super) stream: mpsc::Sender<Out>,
    /// The request's `_meta.progressToken`, as JSON text.
    pub(super) progress: Option<String>,
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
    /// Closes the input (the pipe's end of input: the bridge's shutdown cascade) and every
    /// stream of the session.
    pub(super) fn end(&self) {
        lock(&self.input).take();
        let mut routes = self.routes();
        routes.ended = true;
        routes.waiting.clear();
        routes.orphans.clear();
        routes.drop_get(None);
        routes.buffered.clear();
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
            tracing::warn!(session = %self.label(), "an HTTP session's message for its GET stream was dropped: {SESSION_BUFFER_MAX_MESSAGES} wait already");
        }
    }

    /// The next message of the GET stream `serial`: those that waited first, then the
    /// channel's; `None` once that stream is no longer the live one.
    pub(super) fn poll_get(
        &self,
        serial: u64,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<Option<Bytes>> {
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
            tracing::warn!(session = %self.label(), "an HTTP session wrote a line that is no JSON message; dropped");
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
                    tracing::debug!(session = %self.label(), "an HTTP session's message of a request whose stream is gone was dropped");
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
pub(super) struct StreamGuard {
    pub(super) session: Arc<Session>,
    pub(super) serial: u64,
    /// The POST's request id; none for the GET stream.
    pub(super) request: Option<Id>,
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
                        tracing::debug!(session = %self.session.label(), request = %id, "an HTTP session's POST stream closed before its response: the request goes on");
                        routes.orphan(id.clone());
                    }
                }
            }
            None => routes.drop_get(Some(self.serial)),
        }
    }
}

/// Reads the session's output until it closes; then the session has ended.
pub(super) async fn route_output(
    table: Arc<SessionTable>,
    session: Arc<Session>,
    mut output: mpsc::Receiver<String>,
) {
    while let Some(line) = output.recv().await {
        session.deliver(line).await;
    }
    if table.end(&session.id) {
        tracing::debug!(session = %session.label(), "an HTTP session ended: its bridge stopped");
    }
    session.end();
}

#[cfg(test)]
mod tests {
    use super::{Routes, SESSION_ORPHAN_MAX_IDS, Waiter};
    use crate::protocol::wire::id::Id;
    use tokio::sync::mpsc;

    #[test]
    fn an_orphaned_id_stays_in_use_until_its_response_and_orphans_are_bounded() {
        let mut routes = Routes::new();
        routes.claimed = true;
        let (stream, _lines) = mpsc::channel(1);
        let waiter = Waiter {
            serial: 0,
            stream,
            progress: None,
        };
        routes.waiting.insert(Id::Int(1), waiter);
        assert!(routes.in_use(&Id::Int(1)));
        assert!(routes.take_waiter(&Id::Int(1)).is_some());
        assert!(!routes.in_use(&Id::Int(1)));
        routes.orphan(Id::Int(2));
        assert!(routes.in_use(&Id::Int(2)));
        // Its response comes: nobody waits for it, and the id is free again.
        assert!(routes.take_waiter(&Id::Int(2)).is_none());
        assert!(!routes.in_use(&Id::Int(2)));
        for n in 0..=SESSION_ORPHAN_MAX_IDS as i64 {
            routes.orphan(Id::Int(100 + n));
        }
        assert_eq!(routes.orphans.len(), SESSION_ORPHAN_MAX_IDS);
        assert!(!routes.in_use(&Id::Int(100)));
        assert!(routes.in_use(&Id::Int(101)));
        assert!(routes.in_use(&Id::Int(100 + SESSION_ORPHAN_MAX_IDS as i64)));
    }
}
