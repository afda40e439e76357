//! The HTTP upstream: a 2026-07-28 server at a URL over Streamable HTTP (2026-07-28
//! basic/transports/http), behind the transport seam. Every message is its own POST
//! (`exchange.rs`); its response (JSON, or an SSE stream of the request's notifications and
//! its response) comes back as frames, in order per request. A request fails alone
//! ([`TransportEvent::Failed`]), a cancel closes the request's stream ([`Abandoned::Carried`]), and the
//! transport never ends by itself: a URL upstream never stops the bridge.
//!
//! The HTTP client (TLS roots, proxy) is made in [`client`]; the headers of a POST in
//! [`headers`]; the message rules of a remote server (`x-mcp-header`, icons) are pure, in
//! [`crate::protocol::rules::remote`].

pub mod client;
mod exchange;
pub mod headers;
mod legacy;
mod limit;
pub mod probe;
pub mod redirect;
mod refetch;
mod rewrite;
mod signed;
pub mod tls;
pub mod tools_refetch;

use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::future::LocalBoxFuture;
use reqwest::header::{HeaderName, HeaderValue};
use serde_json::Value;
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tracing::Instrument;
use url::Url;

use super::queue::{Delivery, OutFrame, Sent};
use super::token::{NoToken, TokenProvider};
use super::upstream::{Abandoned, EndCause, OpenOptions, Opened, Transport, TransportEvent};
use super::writer::Writer;
use crate::protocol::rules::remote::HeaderParam;
use crate::protocol::wire::id::Id;

use client::ProxyEnv;

/// Default of `--max-response-bytes`: the longest JSON response body, and the longest event
/// of an SSE response, in bytes (64 MiB).
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 64 * 1024 * 1024;
/// Largest `--max-response-bytes` (1 GiB).
pub const MAX_MAX_RESPONSE_BYTES: usize = 1024 * 1024 * 1024;

/// Makes the [`TokenProvider`] of a transport on the thread that opens it (providers are not
/// `Send`; the configuration is).
#[derive(Clone)]
pub struct TokenSource(pub Arc<dyn Fn() -> Rc<dyn TokenProvider> + Send + Sync>);

impl Default for TokenSource {
    /// [`NoToken`]: no `Authorization`, every 401/403 fails with `sign_in_unavailable`.
    fn default() -> Self {
        TokenSource(Arc::new(|| Rc::new(NoToken)))
    }
}

impl fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TokenSource")
    }
}

/// Everything the HTTP transport needs, from the command line (`mcp-bridge [options] <url>`).
#[derive(Clone)]
pub struct HttpSpec {
    /// The MCP endpoint (`https`, or `http` to a loopback host; no user info, no fragment:
    /// checked by the command line).
    pub url: Url,
    /// `--header` and `--header-env`, in order; values are marked sensitive (never logged).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// The PEM text of `--ca-file` (checked to hold at least one certificate), trusted
    /// besides the system roots.
    pub ca_pem: Option<Vec<u8>>,
    /// `--max-response-bytes`.
    pub max_response_bytes: usize,
    /// The proxy settings of the environment, read at start.
    pub proxy: ProxyEnv,
    /// The token of each request and the answer to a 401/403 (default: no sign-in).
    pub tokens: TokenSource,
    /// Who hears what the remote rules changed in a result besides the log (`mcp-bridge
    /// doctor`; default: nobody).
    pub observer: Option<crate::transport::observe::Observer>,
}

impl fmt::Debug for HttpSpec {
    /// The host and the header names only: never a header value or the URL's path and query.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpSpec")
            .field("host", &self.url.host_str())
            .field(
                "headers",
                &self
                    .headers
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect::<Vec<_>>(),
            )
            .field("ca_file", &self.ca_pem.is_some())
            .field("max_response_bytes", &self.max_response_bytes)
            .finish()
    }
}

impl HttpSpec {
    /// A spec for `url` with the defaults: no headers, the system roots, no proxy, 64 MiB,
    /// no sign-in.
    pub fn new(url: Url) -> Self {
        HttpSpec {
            url,
            headers: Vec::new(),
            ca_pem: None,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            proxy: ProxyEnv::default(),
            tokens: TokenSource::default(),
            observer: None,
        }
    }
}

/// What the exchanges of one transport share (all on the actor thread).
pub(crate) struct Shared {
    /// The client: its pool of connections. Replaced by a new one (a new pool) when a request
    /// failed on a reused connection ([`Shared::renew_client`]).
    client: RefCell<reqwest::Client>,
    /// The connections the transport's clients opened.
    opened: client::Opened,
    /// What a new client is made of.
    spec: HttpSpec,
    url: Url,
    headers: Vec<(HeaderName, HeaderValue)>,
    max_response_bytes: usize,
    tokens: Rc<dyn TokenProvider>,
    events: mpsc::UnboundedSender<TransportEvent>,
    /// The requests whose POST or response is under way, by upstream id: aborting one
    /// closes its stream.
    in_flight: RefCell<HashMap<Id, tokio::task::AbortHandle>>,
    /// The `x-mcp-header` annotations of the tools of the last `tools/list`, by tool name.
    tool_params: RefCell<HashMap<String, Vec<HeaderParam>>>,
    /// The tools dropped from a `tools/list` for their annotations (until a later list shows
    /// them valid): a call of one is answered as an unknown tool and never posted.
    dropped_tools: RefCell<HashSet<String>>,
    /// The writer toward the editor: frames wait for its room (back-pressure).
    pace: Writer,
    /// Who hears the remote rules' changes ([`HttpSpec::observer`]).
    observer: Option<crate::transport::observe::Observer>,
    closed: Cell<bool>,
    /// Pass-through (2025-11-25 Streamable HTTP, [`legacy`]), once the era fallback chose it.
    legacy: Legacy,
    /// Requests re-issued so far after a broken response stream (the number of the next
    /// re-issue id, [`exchange::REISSUE_ID_PREFIX`]).
    reissued: Cell<u64>,
}

impl Shared {
    /// The client of the next request (a handle: its pool is shared).
    fn client(&self) -> reqwest::Client {
        self.client.borrow().clone()
    }

    /// Replaces the client with a new one, whose pool holds no connection yet: after a
    /// request failed on a reused connection, the other idle ones are suspect too (a laptop
    /// that slept, a NAT that forgot them), and the pool would hand out the next of them.
    /// Requests under way keep their connections. `false` when no client can be made (the
    /// old one stays).
    fn renew_client(&self) -> bool {
        match client::build(&self.spec, &self.opened) {
            Ok(c) => {
                *self.client.borrow_mut() = c;
                true
            }
            Err(e) => {
                tracing::debug!(target: "http", "no new HTTP client: {e}");
                false
            }
        }
    }
}

/// The 2025-11-25 session of the pass-through.
#[derive(Default)]
struct Legacy {
    /// Set by [`Transport::pass_through`]: every later message goes through [`legacy`].
    on: Cell<bool>,
    /// `Mcp-Session-Id` of the `initialize` response (sensitive: never logged).
    session: RefCell<Option<HeaderValue>>,
    /// `protocolVersion` of the `initialize` result: `MCP-Protocol-Version` from then on.
    version: RefCell<Option<HeaderValue>>,
    /// The server's GET stream, once opened.
    stream: RefCell<Option<tokio::task::AbortHandle>>,
    /// The GET stream was refused with 401/403: the next POST that gets through opens it.
    stream_awaits_sign_in: Cell<bool>,
    /// What a new session sends again ([`legacy`]): the editor's `initialize` params, its
    /// subscriptions and log level.
    replay: RefCell<legacy::Replay>,
    /// The number of the session: one more for every new session after a 404.
    generation: Cell<u64>,
    /// The new session under way or done, with the number of the session it replaces: every
    /// message waits for it.
    renewal: RefCell<Option<(u64, legacy::Renewal)>>,
    /// A new session was started and no message has got through on it yet: a 404 now ends
    /// the session.
    renewed_in_vain: Cell<bool>,
    /// The editor's `initialize` is under way: the messages after it wait until its response
    /// headers came (with the session id) or it failed ([`legacy::Opening`]).
    opening: RefCell<Option<legacy::Opening>>,
}

/// The handle of an HTTP upstream.
pub struct Http {
    shared: Rc<Shared>,
}

/// Opens the HTTP transport: makes the client (errors: [`client::ClientError`], the
/// `connect_failed` detail); no request is sent until the first message.
pub fn open(spec: &HttpSpec, options: OpenOptions) -> Result<Opened, client::ClientError> {
    let opened = client::Opened::default();
    let client = client::build(spec, &opened)?;
    let (tx, rx) = mpsc::unbounded_channel();
    let shared = Rc::new(Shared {
        client: RefCell::new(client),
        opened,
        spec: spec.clone(),
        url: spec.url.clone(),
        headers: spec.headers.clone(),
        max_response_bytes: spec.max_response_bytes,
        tokens: (spec.tokens.0)(),
        events: tx,
        in_flight: RefCell::new(HashMap::new()),
        tool_params: RefCell::new(HashMap::new()),
        dropped_tools: RefCell::new(HashSet::new()),
        pace: options.pace,
        observer: spec.observer.clone(),
        closed: Cell::new(false),
        legacy: Legacy::default(),
        reissued: Cell::new(0),
    });
    let events = futures_util::stream::unfold(rx, |mut rx| async move {
        let e = rx.recv().await?;
        Some((e, rx))
    });
    Ok(Opened {
        transport: Box::new(Http { shared }),
        events: events.boxed_local(),
    })
}

impl Http {
    fn stop_all(&self) {
        self.shared.closed.set(true);
        for (_, h) in self.shared.in_flight.borrow_mut().drain() {
            h.abort();
        }
        if let Some(h) = self.shared.legacy.stream.borrow_mut().take() {
            h.abort();
        }
    }
}

impl Http {
    /// Starts the task of one message; a request's task can be aborted by its id.
    fn start(&self, id: Option<Id>, task: impl std::future::Future<Output = ()> + 'static) {
        // In a gateway, the task logs under its server's name (`crate::actors::log_span`).
        let task = tokio::task::spawn_local(task.in_current_span());
        if let Some(id) = id {
            self.shared
                .in_flight
                .borrow_mut()
                .insert(id, task.abort_handle());
        }
    }

    /// Starts the POST of the message `body` (its text, no line end).
    fn send_body(&self, body: Bytes) -> Sent {
        match exchange::Post::read(&self.shared, body) {
            Some(post) => {
                self.start(post.id.clone(), exchange::run(self.shared.clone(), post));
                Sent::Queued
            }
            None => Sent::Dropped,
        }
    }
}

/// The text of a frame without its line end, in one buffer (no copy when it is one piece).
fn body_of(frame: OutFrame) -> Bytes {
    let body = frame.into_bytes();
    let end = body.trim_ascii_end().len();
    body.slice(..end)
}

impl Transport for Http {
    /// Starts the POST of `msg` at once (one task per message; HTTP has no queue to fill).
    fn send(&self, msg: &Value, _delivery: Delivery) -> Sent {
        if self.shared.closed.get() {
            return Sent::Closed;
        }
        if self.shared.legacy.on.get() {
            let id = msg.get("id").and_then(Id::from_value);
            // Set before the task starts: the messages sent after it wait for it.
            let opened = legacy::Opening::opens(msg.get("method").and_then(Value::as_str))
                .then(|| legacy::Opening::begin(&self.shared));
            self.start(id, legacy::run(self.shared.clone(), msg.clone(), opened));
            return Sent::Queued;
        }
        self.send_body(Bytes::from(serde_json::to_vec(msg).unwrap_or_default()))
    }

    /// Starts the POST of the frame as it is (its text is the body: no value tree, numbers
    /// keep their text); only what the headers need is read from it ([`probe::Outgoing`]).
    /// Pass-through reads it into a value first ([`Transport::send`]).
    fn send_frame(&self, frame: OutFrame, delivery: Delivery) -> Sent {
        if self.shared.closed.get() {
            return Sent::Closed;
        }
        if self.shared.legacy.on.get() {
            return match serde_json::from_slice::<Value>(&frame.to_vec()) {
                Ok(msg) => self.send(&msg, delivery),
                Err(_) => Sent::Dropped,
            };
        }
        self.send_body(body_of(frame))
    }

    fn queued(&self) -> (usize, usize) {
        (0, 0)
    }

    /// See [`Transport::answers_requests`]: a POST of an answer would be taken for a request
    /// of the bridge's with the server's id.
    fn answers_requests(&self) -> bool {
        false
    }

    fn pass_through(&self) {
        self.shared.legacy.on.set(true);
    }

    /// Closes the request's stream (2026-07-28: cancellation on HTTP is closing the stream;
    /// no notification is sent). Pass-through: closes it too, and the caller sends
    /// `notifications/cancelled` (2025-11-25: a disconnect is not a cancellation).
    fn abandon(&self, id: &Id) -> Abandoned {
        if let Some(h) = self.shared.in_flight.borrow_mut().remove(id) {
            h.abort();
        }
        if self.shared.legacy.on.get() {
            Abandoned::NotifyCancelled
        } else {
            Abandoned::Carried
        }
    }

    /// Closes every stream; there is no process to wait for. Pass-through: the session gets a
    /// DELETE first (at most `grace`).
    fn close(self: Box<Self>, grace: Duration) -> LocalBoxFuture<'static, Option<EndCause>> {
        self.stop_all();
        let shared = self.shared.clone();
        Box::pin(async move {
            if shared.legacy.on.get() {
                legacy::end_session(shared, grace).await;
            }
            None
        })
    }

    fn kill(self: Box<Self>) -> LocalBoxFuture<'static, ()> {
        self.stop_all();
        Box::pin(async {})
    }
}

impl Drop for Http {
    fn drop(&mut self) {
        self.stop_all();
    }
}
