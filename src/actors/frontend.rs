//! The Frontend actor: the 2025-11-25 stdio server for one editor connection. It reads the
//! frames of stdin (the reader never waits for a slot), owns the lifecycle
//! (`awaiting_initialize -> initializing -> ready | pass_through -> closing`; `pass_through`
//! when the upstream is a legacy server, `protocol::era`), answers `ping`,
//! `logging/setLevel`, `server/discover` and every bad line itself, and admits each forwarded
//! request as a slot. Because this actor handles one message at a time, "is the slot still
//! live? then write its frame" is one step: that is the output lock of the design.

mod listen;
pub mod messages;

use actix::prelude::*;
use foldhash::{HashMap, HashSet};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use self::messages::{ChangeAnswer, Finish, FromUpstream, GateUpdate, Quiesce, UpstreamLost};
#[cfg(feature = "auth")]
use super::consent::EditorConsent;
use super::link::{ActorStats, Link};
use super::listener::ListenerLinks;
use super::metrics::MethodTimes;
use super::pending::{PendingLinks, Resolve};
use super::rounds::{self, CancelReason, SlotEnv, SlotOutcome, TimedOut, probe};
use super::slots::{
    LOG_BURST, MAX_LOG_MESSAGES_PER_SEC, MAX_PROGRESS_PER_SEC, PROGRESS_BURST, Slot, TokenBucket,
};
use super::supervisor::messages::{ActorEnded, Shutdown, ShutdownCause, StartListener};
use super::upstream::{self, Relay, Reply, UpstreamLinks};
#[cfg(feature = "auth")]
use crate::auth::gate::Consent;
use crate::config::BridgeConfig;
use crate::log::limits;
use crate::profile::REQUEST_ID_PREFIX;
use crate::protocol::era::{self, Era, HttpAnswer, HttpBody, LegacySign, ProbeAnswer};
use crate::protocol::errors::{self, Cause, ErrorObject};
use crate::protocol::framing::Frame;
use crate::protocol::input::Answer;
use crate::protocol::jsonrpc::{self, Id, Message, ParseError};
use crate::protocol::legacy::{
    self, EditorNotification, EditorRequest, Forwarded, LogLevel, RequestClass,
};
use crate::protocol::methods;
use crate::protocol::modern::{self, Discovered, RequestMeta, UpstreamNotification};
use crate::protocol::notify::Declared;
use crate::protocol::passthrough::{self, Kind};
use crate::protocol::raw::{self, Object};
use crate::protocol::relay;
use crate::protocol::translate::{self, MetaKeys, ReplyMask};
use crate::transport::program::SpawnError;
use crate::transport::writer::{Delivery, Writer};

/// The lifecycle of the connection (2025-11-25 basic/lifecycle).
/// `PassThrough` replaces `Ready` when the upstream is a legacy server (`protocol::era`):
/// the 2025-11-25 protocol passes through unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lifecycle {
    AwaitingInitialize,
    Initializing,
    Ready,
    PassThrough,
    Closing,
}

/// How long a failed `initialize` waits, after the upstream closed its output, for the exit
/// status of the upstream process, which its error then names (`data.detail`: `exit code 3`,
/// `signal 9`, or that the bridge killed a child still running); without it in time the error
/// goes out without a detail. A bound, not the usual wait: the transport reports within its
/// own [`upstream::EXIT_STATUS_WAIT`] (500 ms, then the kill), and at once for a child that
/// exited; this leaves room for the kill and the messages on a busy machine.
pub const INITIALIZE_EXIT_STATUS_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Frames of the editor held while `initialize` runs (the era of the upstream is being
/// decided), at most this many; requests also count against `--max-in-flight`. Beyond either
/// bound, or [`MAX_HELD_BYTES`], a request gets `too_many_requests` at once and another frame
/// is handled at once.
pub const MAX_HELD_FRAMES: usize = 1024;
/// Bytes of the frames held while `initialize` runs, at most (see [`MAX_HELD_FRAMES`]).
pub const MAX_HELD_BYTES: usize = 16 * 1024 * 1024;

/// A frame of the editor that came while `initialize` runs (an editor that pipelines its
/// first messages), kept as it came: a legacy upstream gets it unchanged after the
/// `initialize`, a modern one has it handled as if it came then.
struct Held {
    frame: Frame,
    /// The id, when the frame is a request.
    request: Option<Id>,
    bytes: usize,
}

/// How the probe of `initialize` ended well: a modern server (its discover result and the
/// `_meta` of later requests), or a legacy one (the sign, and the editor's `initialize` as it
/// came, to pass through).
enum Probed {
    Modern(Box<(Discovered, RequestMeta)>),
    Legacy(LegacySign, Value),
}

/// Pass-through: the editor's `initialize`, sent to a legacy server and not answered yet. It
/// has a time limit of its own (`--discover-timeout` again), so that a server that never
/// answers gets the editor an error instead of a silent wait: the 2025-11-25 lifecycle gives
/// the editor nothing to do before that answer, and an editor's own limit is not always there.
struct InitializeWait {
    /// The editor's id of the `initialize`.
    id: Id,
    /// Which wait this is: a timer of an earlier wait finds another token and does nothing.
    token: u64,
    /// The era was decided by silence: `server/discover` got no answer either.
    silent_discover: bool,
    /// [`Frontend::ran`] before this `initialize`, restored when it fails.
    ran_before: bool,
}

/// What the bridge honours of the discovered capabilities: the Listener keeps a listen
/// stream for the list changes and the resource subscriptions.
pub const REPLY_MASK: ReplyMask = ReplyMask {
    list_changed: true,
    subscribe: true,
};

/// The Frontend actor.
pub struct Frontend {
    config: Arc<BridgeConfig>,
    stats: Arc<ActorStats>,
    output: Writer,
    upstream: Arc<UpstreamLinks>,
    pending: Arc<PendingLinks>,
    listener: ListenerLinks,
    supervisor: SupervisorLinks,
    metrics: Arc<MethodTimes>,
    state: Lifecycle,
    slots: HashMap<Id, Slot>,
    progress_routes: HashMap<String, Id>,
    next_progress_token: u64,
    log_level: Option<LogLevel>,
    editor_capabilities: Arc<Value>,
    meta: Option<RequestMeta>,
    /// The `_meta` keys of forwarded requests, serialized once for the current log level.
    meta_keys: Option<MetaKeys>,
    initialized: bool,
    /// An `initialize` succeeded at least once (the answer to [`Finish`]).
    ran: bool,
    declared: Declared,
    listen: Option<listen::ListenSide>,
    /// Ids of `resources/subscribe`/`unsubscribe` requests not answered yet.
    open_changes: HashSet<Id>,
    /// Pass-through: the editor's requests sent upstream and not answered yet.
    relayed: HashMap<Id, Instant>,
    /// Pass-through: the editor's `initialize` not answered yet by the legacy server.
    initialize_wait: Option<InitializeWait>,
    /// The token of the last [`InitializeWait`].
    last_wait_token: u64,
    /// The editor's frames that arrived while `initialize` runs, in order.
    held: VecDeque<Held>,
    held_bytes: usize,
    /// While `initialize` runs: where the exit status of a lost upstream goes (the probe
    /// waits for it, [`INITIALIZE_EXIT_STATUS_WAIT`]).
    exit_status: Option<tokio::sync::oneshot::Sender<String>>,
}

/// The links of the Frontend to the Supervisor.
#[derive(Clone)]
pub struct SupervisorLinks {
    /// The end of the input.
    pub shutdown: Link<Shutdown>,
    /// Run the Listener.
    pub start_listener: Link<StartListener>,
    /// The end of the actor.
    pub ended: Link<ActorEnded>,
}

/// The links a Frontend sends on, and its writer.
pub struct FrontendOut {
    /// The writer toward the editor (stdout).
    pub output: Writer,
    pub upstream: UpstreamLinks,
    pub pending: PendingLinks,
    /// The Listener, which runs only once the Supervisor starts it (see [`StartListener`]).
    pub listener: ListenerLinks,
    pub supervisor: SupervisorLinks,
    /// The methods' counters, written by the Metrics actor.
    pub metrics: Arc<MethodTimes>,
}

/// The links to the Frontend: one per message it handles, counted in its stats.
#[derive(Clone)]
pub struct FrontendLinks {
    pub from_upstream: Link<FromUpstream>,
    pub change_answer: Link<ChangeAnswer>,
    pub gate: Link<GateUpdate>,
    pub quiesce: Link<Quiesce>,
    pub finish: Link<Finish>,
    pub upstream_lost: Link<UpstreamLost>,
}

impl FrontendLinks {
    /// The links to the Frontend at `addr`, counted in `stats`.
    pub fn new(addr: &Addr<Frontend>, stats: &Arc<ActorStats>) -> Self {
        FrontendLinks {
            from_upstream: Link::new(addr, stats),
            change_answer: Link::new(addr, stats),
            gate: Link::new(addr, stats),
            quiesce: Link::new(addr, stats),
            finish: Link::new(addr, stats),
            upstream_lost: Link::new(addr, stats),
        }
    }
}

crate::counted_handlers!(Frontend: FromUpstream, ChangeAnswer, GateUpdate, Quiesce, Finish, UpstreamLost);

impl Frontend {
    /// A Frontend for the given configuration, counted in `stats` (its input frames), sending
    /// on `out`.
    pub fn new(config: Arc<BridgeConfig>, stats: Arc<ActorStats>, out: FrontendOut) -> Self {
        Frontend {
            config,
            stats,
            output: out.output,
            upstream: Arc::new(out.upstream),
            pending: Arc::new(out.pending),
            listener: out.listener,
            supervisor: out.supervisor,
            metrics: out.metrics,
            state: Lifecycle::AwaitingInitialize,
            slots: HashMap::default(),
            progress_routes: HashMap::default(),
            exit_status: None,
            next_progress_token: 0,
            log_level: None,
            editor_capabilities: Arc::new(json!({})),
            meta: None,
            meta_keys: None,
            initialized: false,
            ran: false,
            declared: Declared::default(),
            listen: None,
            open_changes: HashSet::default(),
            relayed: HashMap::default(),
            initialize_wait: None,
            last_wait_token: 0,
            held: VecDeque::new(),
            held_bytes: 0,
        }
    }

    /// Writes a response (or a frame that is never dropped: list changes, answers).
    fn write(&self, v: &Value) {
        self.output.send_message(v, Delivery::Always);
    }

    /// Writes a request-scoped notification (progress, log): dropped and counted when the
    /// queue toward the editor is full.
    fn write_notification(&self, frame: &Value) {
        self.output.send_message(frame, Delivery::DropWhenFull);
    }

    /// Charges one log message to a request in flight with a token left (see
    /// [`MAX_LOG_MESSAGES_PER_SEC`]); false when none has one.
    fn take_log_token(&mut self) -> bool {
        let now = Instant::now();
        self.slots.values_mut().any(|s| s.log_bucket.take(now))
    }

    fn reply_error(&self, id: Option<&Id>, cause: Cause, detail: Option<Value>) {
        self.write(&jsonrpc::error_response(id, cause.error_object(detail)));
    }

    fn bridge_client_info() -> Value {
        json!({"name": "mcp-bridge", "version": env!("CARGO_PKG_VERSION")})
    }

    fn fallback_server_info(&self) -> Value {
        let name = self.config.name.clone().unwrap_or_else(|| {
            self.config
                .upstream
                .fallback_name()
                .unwrap_or_else(|| "mcp-bridge".into())
        });
        json!({"name": name, "version": env!("CARGO_PKG_VERSION")})
    }

    fn current_meta(&self) -> RequestMeta {
        let mut m = self.meta.clone().unwrap_or_else(|| RequestMeta {
            protocol_version: modern::PROTOCOL_VERSION.into(),
            client_capabilities: translate::upstream_client_capabilities(&self.editor_capabilities),
            client_info: Self::bridge_client_info(),
            log_level: None,
        });
        m.log_level = self.log_level.map(LogLevel::as_str);
        m
    }

    fn on_frame(&mut self, frame: Frame, ctx: &mut Context<Self>) {
        if self.state == Lifecycle::Initializing && self.hold(&frame) {
            return;
        }
        let line = match frame {
            Frame::Line(line) => line,
            Frame::TooLong { len_bytes, id, .. } => {
                if limits::EDITOR_LINE_TOO_LONG.allow() {
                    tracing::warn!(target: "frontend", "a line of {len_bytes} bytes is over the limit of {} bytes", self.config.max_line_bytes);
                }
                if id.as_ref().is_some_and(is_bridge_request_id) {
                    // The editor's answer to a request of the bridge: it fails the round that
                    // waits for it, like any bad line with that id (no error to the editor).
                    return self.resolve(id, Answer::Invalid);
                }
                self.reply_error(
                    id.as_ref(),
                    Cause::LineTooLong,
                    Some(json!(self.config.max_line_bytes)),
                );
                return;
            }
        };
        if self.state == Lifecycle::PassThrough {
            return self.relay_from_editor(&line);
        }
        // Once ready, a forwarded request is read without a value tree: its params pass raw
        // (numbers keep their exact text, a large member is not copied). Every other line
        // takes the parser's path.
        if self.state == Lifecycle::Ready
            && let Some((id, method, params)) = raw::request(line.clone(), self.config.max_depth)
            && let RequestClass::Forward(f) = legacy::classify_request(&method)
        {
            if self.slots.contains_key(&id) || self.open_changes.contains(&id) || self.is_held(&id)
            {
                return self.reply_error(Some(&id), Cause::DuplicateId, None);
            }
            return self.start_forward(id, f, params, ctx);
        }
        let parsed = jsonrpc::parse(&line, self.config.max_depth);
        match parsed {
            Ok(Message::Request { id, method, params }) => {
                self.on_request(id, EditorRequest::from_request(method, params), ctx)
            }
            Ok(Message::Notification { method, params }) => self.on_notification(
                EditorNotification::from_notification(method, params.as_ref()),
                ctx,
            ),
            Ok(Message::Response { id, result }) => self.resolve(id, Answer::Result(result)),
            Ok(Message::ErrorResponse { id, error }) => self.resolve(id, Answer::Error(error)),
            Err(e) if e.id().is_some_and(is_bridge_request_id) => {
                // A bad line with the id of a request of the bridge answers that request.
                self.resolve(e.id().cloned(), Answer::Invalid);
            }
            Err(e) => self.reply_bad_line(&e),
        }
    }

    fn reply_bad_line(&self, e: &ParseError) {
        let (cause, detail) = match e {
            ParseError::NotJson { .. } => (Cause::ParseError, None),
            ParseError::TooDeep { .. } => (Cause::TooDeep, Some(json!(self.config.max_depth))),
            ParseError::Shape { .. } => (Cause::InvalidRequestShape, None),
        };
        tracing::debug!(target: "frontend", "bad line from the client: {}", cause.name());
        self.reply_error(e.id(), cause, detail);
    }

    /// While `initialize` runs (the era is being decided): holds a frame that depends on it,
    /// so that what the editor pipelined after its `initialize` reaches a legacy upstream after
    /// the `initialize`, in order, and a modern one is served once ready. Handled at once
    /// instead (false): a `ping`, another `initialize`, a request naming a 2026-07-28 version,
    /// a `notifications/cancelled`, a bad line, and a frame over the bounds (a request over
    /// them gets `too_many_requests`, as does one over `--max-in-flight`; a request id in use
    /// gets `duplicate_id`; true then).
    fn hold(&mut self, frame: &Frame) -> bool {
        let Frame::Line(line) = frame else {
            return false;
        };
        let bytes = line.len();
        let request = match jsonrpc::parse(line, self.config.max_depth) {
            Ok(Message::Request { id, method, params }) => {
                let request = EditorRequest::from_request(method, params);
                if matches!(
                    request.class(),
                    RequestClass::Ping | RequestClass::Initialize
                ) || request.names_modern_version()
                {
                    return false;
                }
                Some(id)
            }
            Ok(Message::Notification { method, params }) => {
                if matches!(
                    EditorNotification::from_notification(method, params.as_ref()),
                    EditorNotification::Cancelled { .. }
                ) {
                    return false;
                }
                None
            }
            Ok(_) => None,
            Err(_) => return false,
        };
        let full = self.held.len() >= MAX_HELD_FRAMES || self.held_bytes + bytes > MAX_HELD_BYTES;
        if let Some(id) = &request {
            if self.slots.contains_key(id) || self.is_held(id) {
                self.reply_error(Some(id), Cause::DuplicateId, None);
                return true;
            }
            let requests = self.held.iter().filter(|h| h.request.is_some()).count();
            if full || requests >= self.config.max_in_flight {
                let limit = json!(self.config.max_in_flight);
                self.reply_error(Some(id), Cause::TooManyRequests, Some(limit));
                return true;
            }
            tracing::debug!(target: "frontend", "request {id} waits for initialize");
        } else if full {
            return false;
        }
        self.held_bytes += bytes;
        self.held.push_back(Held {
            frame: frame.clone(),
            request,
            bytes,
        });
        true
    }

    fn is_held(&self, id: &Id) -> bool {
        self.held.iter().any(|h| h.request.as_ref() == Some(id))
    }

    /// Takes a held request out (the editor cancelled it): it gets no response, and a legacy
    /// upstream never sees it.
    fn unhold(&mut self, id: &Id) -> bool {
        let Some(pos) = self
            .held
            .iter()
            .position(|h| h.request.as_ref() == Some(id))
        else {
            return false;
        };
        if let Some(h) = self.held.remove(pos) {
            self.held_bytes = self.held_bytes.saturating_sub(h.bytes);
        }
        true
    }

    /// Handles the frames held while `initialize` ran, in order, in the state it left
    /// (pass-through: relayed after the `initialize`; ready: served; awaiting `initialize`:
    /// `not_initialized`).
    fn replay_held(&mut self, ctx: &mut Context<Self>) {
        while self.state != Lifecycle::Initializing
            && let Some(h) = self.held.pop_front()
        {
            self.held_bytes = self.held_bytes.saturating_sub(h.bytes);
            self.on_frame(h.frame, ctx);
        }
    }

    /// Pass-through: one line of the editor to the upstream as it came. The bridge still
    /// answers a bad line, a duplicate id and a request over the in-flight limit itself.
    fn relay_from_editor(&mut self, line: &[u8]) {
        let (message, kind) = match passthrough::read(line, self.config.max_depth) {
            Ok(read) => read,
            Err(e) => return self.reply_bad_line(&e),
        };
        let (delivery, cancels) = match kind {
            Kind::Request(id) => {
                if self.relayed.contains_key(&id) {
                    return self.reply_error(Some(&id), Cause::DuplicateId, None);
                }
                if self.relayed.len() >= self.config.max_in_flight {
                    return self.reply_error(
                        Some(&id),
                        Cause::TooManyRequests,
                        Some(json!(self.config.max_in_flight)),
                    );
                }
                self.relayed.insert(id.clone(), Instant::now());
                (Delivery::Request(id), None)
            }
            Kind::Notification(method) => {
                let cancels =
                    match EditorNotification::from_notification(method, message.get("params")) {
                        EditorNotification::Cancelled {
                            request_id: Some(id),
                            ..
                        } => self.relayed.remove(&id).map(|_| id),
                        _ => None,
                    };
                if let Some(id) = &cancels {
                    self.end_initialize_wait(id);
                }
                (Delivery::Always, cancels)
            }
            Kind::Response(_) => (Delivery::Always, None),
        };
        self.upstream.relay.do_send(Relay {
            message,
            delivery,
            cancels,
        });
    }

    /// Pass-through: one message of the upstream to the editor as it came. A response goes
    /// out only while its request is in flight (never after the editor cancelled it, never
    /// twice); progress and log messages are dropped and counted when the queue toward the
    /// editor is over its notification bound; everything else is never dropped.
    fn relay_to_editor(&mut self, message: Value, kind: Kind) {
        match kind {
            Kind::Response(Some(id)) => match self.relayed.remove(&id) {
                Some(started) => {
                    self.end_initialize_wait(&id);
                    tracing::debug!(target: "frontend", "id={id} answered in pass-through time_ms={:.3}",
                        started.elapsed().as_secs_f64() * 1e3);
                    self.write(&message);
                }
                None => {
                    tracing::debug!(target: "frontend", "dropped a response of the upstream for id {id}, not in flight");
                }
            },
            Kind::Response(None) => {
                tracing::debug!(target: "frontend", "dropped a response of the upstream without a usable id");
            }
            Kind::Request(_) => self.write(&message),
            Kind::Notification(method) if passthrough::droppable(&method) => {
                self.write_notification(&message)
            }
            Kind::Notification(_) => self.write(&message),
        }
    }

    /// Hands an answer of the editor to the PendingTable (which drops unknown ids).
    fn resolve(&self, id: Option<Id>, answer: Answer) {
        self.pending.resolve.do_send(Resolve { id, answer });
    }

    fn on_request(&mut self, id: Id, request: EditorRequest, ctx: &mut Context<Self>) {
        if self.slots.contains_key(&id) || self.open_changes.contains(&id) || self.is_held(&id) {
            // Two answers with one id would reach the editor: refuse the second request.
            return self.reply_error(Some(&id), Cause::DuplicateId, None);
        }
        let class = request.class();
        match request {
            EditorRequest::Ping => return self.write(&jsonrpc::response(&id, json!({}))),
            EditorRequest::SetLevel(level) => {
                match level {
                    Some(level) => {
                        self.log_level = Some(level);
                        self.meta_keys = None;
                        self.listener_log_level();
                        self.write(&jsonrpc::response(&id, json!({})));
                    }
                    None => self.reply_error(
                        Some(&id),
                        Cause::InvalidParams,
                        Some(json!("params.level must be a logging level")),
                    ),
                }
                return;
            }
            EditorRequest::Discover => {
                let method = json!(request.method());
                return self.reply_error(Some(&id), Cause::MethodNotFound, Some(method));
            }
            _ => {}
        }
        let is_initialize = class == RequestClass::Initialize;
        match (self.state, request) {
            (Lifecycle::AwaitingInitialize, EditorRequest::Initialize(params)) => {
                self.start_initialize(id, params, ctx)
            }
            (Lifecycle::AwaitingInitialize | Lifecycle::Initializing, request)
                if !is_initialize =>
            {
                if request.names_modern_version() {
                    let method = json!(request.method());
                    self.reply_error(Some(&id), Cause::MethodNotFound, Some(method));
                } else {
                    self.reply_error(Some(&id), Cause::NotInitialized, None);
                }
            }
            (Lifecycle::Initializing, _) if is_initialize => {
                let error: Value = errors::initialize_running().into();
                self.write(&jsonrpc::error_response(Some(&id), error));
            }
            (Lifecycle::Ready, _) if is_initialize => {
                self.reply_error(Some(&id), Cause::AlreadyInitialized, None);
            }
            (Lifecycle::Ready, request) => match request {
                EditorRequest::Forward(f, params) => {
                    let params = params.as_ref().map(raw::Params::from_value);
                    self.start_forward(id, f, params, ctx)
                }
                EditorRequest::Subscribe(params) => {
                    self.on_resource_subscription(id, class, true, params.as_ref())
                }
                EditorRequest::Unsubscribe(params) => {
                    self.on_resource_subscription(id, class, false, params.as_ref())
                }
                other => {
                    let method = json!(other.method());
                    self.reply_error(Some(&id), Cause::MethodNotFound, Some(method))
                }
            },
            _ => self.reply_error(Some(&id), Cause::UpstreamExited, None),
        }
    }

    fn on_notification(&mut self, notification: EditorNotification, ctx: &mut Context<Self>) {
        match notification {
            EditorNotification::Cancelled { request_id, reason } => {
                let Some(id) = request_id else {
                    tracing::debug!(target: "frontend", "notifications/cancelled without a usable requestId");
                    return;
                };
                // Before the slot's future is dropped: its guard sends the reason upstream.
                if let (Some(slot), Some(reason)) = (self.slots.get(&id), reason) {
                    slot.cancel_reason.set(reason);
                }
                if self.cancel_slot(&id, ctx) || self.open_changes.remove(&id) || self.unhold(&id) {
                    tracing::debug!(target: "frontend", "the client cancelled request {id}");
                }
                self.replay_held(ctx);
            }
            EditorNotification::Initialized => {
                if self.state == Lifecycle::Ready {
                    self.initialized = true;
                    #[cfg(feature = "auth")]
                    if let Some(phase) = &self.config.sign_in_phase {
                        // From now on a sign-in asks the editor and never opens a browser.
                        let consent = EditorConsent::for_editor(
                            self.editor_capabilities.clone(),
                            self.pending.clone(),
                            self.output.clone(),
                        )
                        .map(|c| Arc::new(c) as Arc<dyn Consent + Send + Sync>);
                        phase.initialized(consent);
                    }
                    self.start_listener();
                }
            }
            EditorNotification::Unknown(method) => {
                tracing::debug!(target: "frontend", "ignored the notification {method}");
            }
        }
    }

    /// Removes a slot and stops its future; its response is never written. Returns whether
    /// the slot existed.
    fn cancel_slot(&mut self, id: &Id, ctx: &mut Context<Self>) -> bool {
        let Some(slot) = self.slots.remove(id) else {
            return false;
        };
        if let Some(h) = slot.handle {
            ctx.cancel_future(h);
        }
        if let Some(t) = &slot.upstream_progress_token {
            self.progress_routes.remove(t);
        }
        if slot.method == RequestClass::Initialize && self.state == Lifecycle::Initializing {
            self.state = Lifecycle::AwaitingInitialize;
            self.upstream.disconnect.do_send(upstream::Disconnect);
        }
        true
    }

    fn admit(
        &mut self,
        id: &Id,
        method: RequestClass,
        editor_token: Option<Value>,
        upstream_token: Option<String>,
    ) -> bool {
        if self.slots.len() >= self.config.max_in_flight {
            self.reply_error(
                Some(id),
                Cause::TooManyRequests,
                Some(json!(self.config.max_in_flight)),
            );
            return false;
        }
        if let Some(t) = &upstream_token {
            self.progress_routes.insert(t.clone(), id.clone());
        }
        let now = Instant::now();
        self.slots.insert(
            id.clone(),
            Slot {
                handle: None,
                method,
                started: now,
                editor_progress_token: editor_token,
                upstream_progress_token: upstream_token,
                progress_bucket: TokenBucket::new(PROGRESS_BURST, MAX_PROGRESS_PER_SEC, now),
                cancel_reason: CancelReason::default(),
                log_bucket: TokenBucket::new(LOG_BURST, MAX_LOG_MESSAGES_PER_SEC, now),
            },
        );
        true
    }

    /// The cell of the editor's cancel reason of a slot just admitted.
    fn cancel_reason_of(&self, id: &Id) -> CancelReason {
        self.slots
            .get(id)
            .map(|s| s.cancel_reason.clone())
            .unwrap_or_default()
    }

    /// Takes a finished slot out of the table; `None` when it was cancelled meanwhile.
    fn finish_slot(&mut self, id: &Id, ok: bool) -> Option<Slot> {
        let slot = self.slots.remove(id)?;
        if let Some(t) = &slot.upstream_progress_token {
            self.progress_routes.remove(t);
        }
        if let RequestClass::Forward(f) = slot.method {
            self.metrics.record(f.method(), ok, slot.started.elapsed());
        }
        Some(slot)
    }

    fn start_initialize(&mut self, id: Id, params: Option<Value>, ctx: &mut Context<Self>) {
        let Some(p) = legacy::initialize_params(params.as_ref()) else {
            return self.reply_error(
                Some(&id),
                Cause::InvalidParams,
                Some(json!("params must be InitializeRequestParams")),
            );
        };
        if !self.admit(&id, RequestClass::Initialize, None, None) {
            return;
        }
        self.state = Lifecycle::Initializing;
        // For a legacy upstream: the request as the editor wrote it (a JSON-RPC request has no
        // other members; `params` is the editor's object, members and numbers as written).
        let request = jsonrpc::request(&id, methods::INITIALIZE, params.unwrap_or_default());
        self.editor_capabilities = Arc::new(p.capabilities);
        let meta = self.current_meta();
        let upstream = self.upstream.clone();
        let spec = self.config.upstream.clone();
        let spec_again = spec.clone();
        let limit = self.config.discover_timeout;
        let http = spec.is_http();
        let client = id.clone();
        let reason = self.cancel_reason_of(&id);
        let config = self.config.clone();
        let (exit_tx, exit_rx) = tokio::sync::oneshot::channel();
        self.exit_status = Some(exit_tx);
        let fut = async move {
            match upstream.connect.send(upstream::Connect(spec)).await {
                Ok(Ok(())) => {}
                Ok(Err(e @ SpawnError::Connect(_))) => {
                    return Err(Cause::ConnectFailed.error(Some(json!(e.to_string()))));
                }
                Ok(Err(e)) => return Err(Cause::SpawnFailed.error(Some(json!(e.to_string())))),
                Err(_) => return Err(Cause::SpawnFailed.error(None)),
            }
            let reply = discover(
                &upstream,
                Object::from_value(&meta.bare_params()).unwrap_or_default(),
                client,
                limit,
                reason,
                config.sign_in_phase.as_ref(),
            )
            .await;
            let result = match &reply {
                Ok(Reply::Result(v)) => v.to_value(),
                _ => None,
            };
            // HTTP: a request that failed in the transport keeps its status and error body
            // (`Failure`); 400, 404 and 405 are what the era decision reads, any other
            // failure (no response, a broken stream, 401/403 without a token, 5xx) fails the
            // initialize with its detail.
            let answer = match &reply {
                Ok(Reply::Result(_)) => match &result {
                    Some(v) => ProbeAnswer::Result(v),
                    None => ProbeAnswer::Invalid,
                },
                Ok(Reply::Error(e)) => ProbeAnswer::Error(e),
                Ok(Reply::Closed) => ProbeAnswer::Closed,
                Ok(Reply::Busy) => ProbeAnswer::Busy,
                Ok(Reply::Invalid) => ProbeAnswer::Invalid,
                Ok(Reply::Failed(f)) => match f.status {
                    Some(status @ (400 | 404 | 405)) => ProbeAnswer::Http(HttpAnswer {
                        status,
                        body: f.error.as_ref().map_or(HttpBody::Empty, HttpBody::RpcError),
                    }),
                    _ => return Err(Cause::DiscoverFailed.error(Some(json!(f.detail)))),
                },
                Err(TimedOut { .. }) if http => ProbeAnswer::HttpNoReply { limit },
                Err(TimedOut { .. }) => ProbeAnswer::NoReply,
            };
            let closed = matches!(answer, ProbeAnswer::Closed);
            // A stdio server that exits at a first message other than `initialize` (rmcp's
            // servers end their session with `ExpectedInitializeRequest`) is a legacy server:
            // once its loss is reported (its exit status), a new one gets the editor's
            // `initialize`. A server that exits again fails that `initialize` as any lost
            // upstream does.
            if closed && !http {
                let Ok(Ok(status)) =
                    tokio::time::timeout(INITIALIZE_EXIT_STATUS_WAIT, exit_rx).await
                else {
                    return Err(Cause::UpstreamExited.error(None));
                };
                tracing::debug!(target: "frontend", "the upstream exited at server/discover ({status}): starting it again");
                return match upstream.connect.send(upstream::Connect(spec_again)).await {
                    Ok(Ok(())) => Ok(Probed::Legacy(LegacySign::ExitedAtDiscover, request)),
                    Ok(Err(e)) => Err(Cause::SpawnFailed.error(Some(json!(e.to_string())))),
                    Err(_) => Err(Cause::SpawnFailed.error(None)),
                };
            }
            match era::decide(answer) {
                Era::Modern(d) => Ok(Probed::Modern(Box::new((d, meta)))),
                Era::Legacy(sign) => Ok(Probed::Legacy(sign, request)),
                // The upstream went away: its exit status says why.
                Era::Error(e) if closed => {
                    match tokio::time::timeout(INITIALIZE_EXIT_STATUS_WAIT, exit_rx).await {
                        Ok(Ok(status)) => Err(e.with_detail(status)),
                        _ => Err(e),
                    }
                }
                Era::Error(e) => Err(e),
            }
        };
        let slot_id = id.clone();
        let h = ctx.spawn(fut.into_actor(self).map(move |res, act, ctx| {
            act.initialize_done(slot_id, res, ctx);
            act.replay_held(ctx);
        }));
        if let Some(s) = self.slots.get_mut(&id) {
            s.handle = Some(h);
        }
    }

    fn initialize_done(
        &mut self,
        id: Id,
        res: Result<Probed, ErrorObject>,
        ctx: &mut Context<Self>,
    ) {
        self.exit_status = None;
        if self.finish_slot(&id, res.is_ok()).is_none() {
            return;
        }
        match res {
            Ok(Probed::Legacy(sign, request)) => {
                self.state = Lifecycle::PassThrough;
                self.last_wait_token += 1;
                let token = self.last_wait_token;
                self.initialize_wait = Some(InitializeWait {
                    id: id.clone(),
                    token,
                    silent_discover: sign == LegacySign::NoReply,
                    ran_before: self.ran,
                });
                // Counted as the wait for server/discover is: the time a sign-in runs (the
                // passed-through initialize of a URL upstream can get a 401) is the user's in
                // the browser, not the server's silence.
                let config = self.config.clone();
                let wait = async move {
                    outside_sign_in(config.discover_timeout, config.sign_in_phase.as_ref()).await;
                };
                ctx.spawn(
                    wait.into_actor(self)
                        .map(move |(), act, _| act.initialize_timed_out(token)),
                );
                self.ran = true;
                let sign = match sign {
                    LegacySign::NoReply => format!(
                        "it did not answer server/discover within --discover-timeout, {} s",
                        self.config.discover_timeout.as_secs_f64()
                    ),
                    other => other.to_string(),
                };
                tracing::info!(target: "frontend", "the upstream server speaks 2025-11-25 or earlier ({sign}): passing the 2025-11-25 protocol through unchanged");
                self.relayed.insert(id.clone(), Instant::now());
                self.upstream.relay.do_send(Relay {
                    message: request,
                    delivery: Delivery::Request(id),
                    cancels: None,
                });
            }
            Ok(Probed::Modern(modern)) => {
                let (d, meta) = *modern;
                self.state = Lifecycle::Ready;
                self.ran = true;
                self.meta = Some(meta);
                self.meta_keys = None;
                tracing::info!(target: "frontend", "the upstream server is ready (protocol {})", d.protocol_version);
                let result =
                    translate::initialize_result(&d, &self.fallback_server_info(), REPLY_MASK);
                self.declared = Declared::from_capabilities(&result["capabilities"]);
                self.write(&jsonrpc::response(&id, result));
            }
            Err(e) => {
                self.state = Lifecycle::AwaitingInitialize;
                self.upstream.disconnect.do_send(upstream::Disconnect);
                tracing::warn!(target: "frontend", "initialize failed: {}", e.log_text());
                self.write(&jsonrpc::error_response(Some(&id), e));
            }
        }
    }

    /// Pass-through: the legacy server did not answer the editor's `initialize` within
    /// `--discover-timeout`. The editor gets `timeout`, naming each silence and the option
    /// that sets the limit; the requests it sent after the `initialize` get
    /// `not_initialized` (as requests held behind a failed `initialize` do); the upstream is
    /// stopped, and the next `initialize` starts it again.
    fn initialize_timed_out(&mut self, token: u64) {
        let Some(wait) = self.initialize_wait.take_if(|w| w.token == token) else {
            return;
        };
        if self.state != Lifecycle::PassThrough || self.relayed.remove(&wait.id).is_none() {
            return;
        }
        let secs = self.config.discover_timeout.as_secs_f64();
        let detail = if wait.silent_discover {
            format!(
                "no answer to server/discover within --discover-timeout ({secs} s), nor to the initialize passed through to the server within {secs} s more: the server reads nothing or answers nothing; --discover-timeout sets both limits"
            )
        } else {
            format!(
                "no answer to the initialize passed through to the server within --discover-timeout ({secs} s)"
            )
        };
        self.fail_passed_initialize(&wait, Cause::Timeout.error(Some(json!(detail))));
        self.upstream.disconnect.do_send(upstream::Disconnect);
    }

    /// Pass-through: the `initialize` passed to the legacy server (already taken out of
    /// `relayed`) fails with `e`, as an `initialize` that fails during the probe does: the
    /// state returns to `awaiting_initialize`, and the requests sent after it get
    /// `not_initialized`, in the order they were sent.
    fn fail_passed_initialize(&mut self, wait: &InitializeWait, e: ErrorObject) {
        self.state = Lifecycle::AwaitingInitialize;
        self.ran = wait.ran_before;
        tracing::warn!(target: "frontend", "initialize failed: {}", e.log_text());
        self.write(&jsonrpc::error_response(Some(&wait.id), e));
        let mut rest: Vec<(Id, Instant)> = std::mem::take(&mut self.relayed).into_iter().collect();
        rest.sort_by_key(|(_, sent)| *sent);
        for (id, _) in rest {
            self.reply_error(Some(&id), Cause::NotInitialized, None);
        }
    }

    /// Pass-through: the request `id` of the editor is resolved (answered, or failed by the
    /// bridge); when it is the `initialize`, its time limit no longer applies.
    fn end_initialize_wait(&mut self, id: &Id) {
        if self.initialize_wait.as_ref().is_some_and(|w| &w.id == id) {
            self.initialize_wait = None;
        }
    }

    fn start_forward(
        &mut self,
        id: Id,
        f: Forwarded,
        params: Option<raw::Params>,
        ctx: &mut Context<Self>,
    ) {
        self.next_progress_token += 1;
        let n = self.next_progress_token;
        if self.meta_keys.is_none() {
            self.meta_keys = Some(MetaKeys::of(&self.current_meta()));
        }
        let Some(keys) = &self.meta_keys else {
            return;
        };
        // The bridge's token is made only for a request that carries the editor's.
        let token = || relay::upstream_progress_token(n);
        let fwd = match translate::forward_params(params, keys, || Some(json!(token()))) {
            Ok(fwd) => fwd,
            Err(c) => {
                return self.reply_error(Some(&id), c, Some(json!("params must be an object")));
            }
        };
        let upstream_token = fwd.editor_progress_token.as_ref().map(|_| token());
        if !self.admit(
            &id,
            RequestClass::Forward(f),
            fwd.editor_progress_token.clone(),
            upstream_token,
        ) {
            return;
        }
        let env = SlotEnv {
            upstream: self.upstream.clone(),
            pending: self.pending.clone(),
            output: self.output.clone(),
            editor_capabilities: self.editor_capabilities.clone(),
            timeouts: self.config.timeouts.clone(),
            cancel_reason: self.cancel_reason_of(&id),
        };
        let fut = rounds::run(env, f, fwd.params, id.clone());
        let slot_id = id.clone();
        let h = ctx.spawn(
            fut.into_actor(self)
                .map(move |out, act, _ctx| act.forward_done(slot_id, out)),
        );
        if let Some(s) = self.slots.get_mut(&id) {
            s.handle = Some(h);
        }
    }

    fn forward_done(&mut self, id: Id, out: SlotOutcome) {
        let ok = matches!(out, SlotOutcome::Result(_));
        if self.finish_slot(&id, ok).is_none() {
            return;
        }
        match out {
            SlotOutcome::Result(r) => {
                self.output
                    .send_frame(raw::response_frame(&id, r), Delivery::Always);
            }
            SlotOutcome::Error(e) => self.write(&jsonrpc::error_response(Some(&id), e)),
        }
    }

    fn on_upstream_notification(&mut self, notification: UpstreamNotification) {
        if self.listen_step(&notification) {
            return;
        }
        match notification {
            UpstreamNotification::Progress(params) => {
                let Some(token) = relay::progress_token(&params) else {
                    return;
                };
                let Some(id) = self.progress_routes.get(token) else {
                    return;
                };
                let Some(slot) = self.slots.get_mut(id) else {
                    return;
                };
                let Some(editor_token) = slot.editor_progress_token.clone() else {
                    return;
                };
                if !slot.progress_bucket.take(Instant::now()) {
                    self.output.stats().rate_limited();
                    return;
                }
                if let Some(frame) = relay::progress_for_editor(&params, editor_token) {
                    self.write_notification(&frame);
                }
            }
            UpstreamNotification::Message(params) => {
                // A log message belongs to a request in flight (2026-07-28 logging), but on
                // stdio nothing says which one. With no request of the editor live (all
                // answered or cancelled), it can only be of one that ended: dropped.
                if self.slots.is_empty() {
                    tracing::debug!(target: "frontend", "dropped a log message with no request in flight");
                    return;
                }
                let Ok(frame) = relay::log_for_editor(&params, self.log_level) else {
                    return;
                };
                if !self.take_log_token() {
                    self.output.stats().rate_limited();
                    return;
                }
                self.write_notification(&frame);
            }
            other => {
                tracing::debug!(target: "frontend", "kept the upstream notification {} inside", other.method());
            }
        }
    }
}

/// Sends `server/discover` as the era probe ([`probe`]: its own id space, and not cancelled
/// at the time limit) and waits at most `limit` (`--discover-timeout`) for its answer;
/// with sign-in (`phase`), the time a sign-in runs meanwhile is not counted, up to
/// `--sign-in-timeout` of it (`auth::clock`): a URL upstream that never answers fails at
/// `limit` when no sign-in ran. On that path the clock's time limit drops the probe, which
/// cancels it (its stream is closed): over HTTP no answer in time fails the `initialize`
/// (`discover_failed`) and is never taken for a legacy server, so no late answer is waited
/// for. Errors: [`TimedOut`] with `limit`.
async fn discover(
    upstream: &Arc<UpstreamLinks>,
    params: Object,
    client: Id,
    limit: std::time::Duration,
    reason: CancelReason,
    phase: Option<&crate::config::SignInPhaseRef>,
) -> Result<Reply, TimedOut> {
    let method = methods::SERVER_DISCOVER;
    #[cfg(feature = "auth")]
    if let Some(phase) = phase {
        let clock = phase.clock();
        // The most the wait can last is the call's own limit.
        let most = limit.saturating_add(clock.allowance());
        let probe = probe(upstream, method, params, client, most, reason);
        return clock
            .within(limit, probe)
            .await
            .unwrap_or(Err(TimedOut { limit }));
    }
    #[cfg(not(feature = "auth"))]
    let _: Option<&std::convert::Infallible> = phase;
    probe(upstream, method, params, client, limit, reason).await
}

/// Resolves after `limit` of time in which no sign-in runs, plus the time sign-ins run
/// meanwhile up to `--sign-in-timeout` (as [`discover`] counts its wait); plain `limit`
/// without sign-in.
async fn outside_sign_in(
    limit: std::time::Duration,
    phase: Option<&crate::config::SignInPhaseRef>,
) {
    #[cfg(feature = "auth")]
    if let Some(phase) = phase {
        let _ = phase
            .clock()
            .within(limit, std::future::pending::<()>())
            .await;
        return;
    }
    #[cfg(not(feature = "auth"))]
    let _: Option<&std::convert::Infallible> = phase;
    tokio::time::sleep(limit).await;
}

/// Whether `id` is one of the bridge's own requests to the editor (`b-N`): a bad line with it
/// is the answer to that request, never a request of the editor.
fn is_bridge_request_id(id: &Id) -> bool {
    matches!(id, Id::Str(s) if s.starts_with(REQUEST_ID_PREFIX))
}

impl Actor for Frontend {
    type Context = Context<Self>;

    fn stopped(&mut self, _: &mut Context<Self>) {
        self.supervisor.ended.do_send(ActorEnded("frontend"));
    }
}

impl StreamHandler<Frame> for Frontend {
    fn handle(&mut self, frame: Frame, ctx: &mut Context<Self>) {
        let _h = self.stats.stream_item();
        self.on_frame(frame, ctx);
    }

    fn finished(&mut self, _: &mut Context<Self>) {
        tracing::debug!(target: "frontend", "end of the input");
        self.supervisor
            .shutdown
            .do_send(Shutdown(ShutdownCause::EndOfInput));
    }
}

impl Handler<FromUpstream> for Frontend {
    type Result = ();
    fn handle(&mut self, m: FromUpstream, _: &mut Context<Self>) {
        match m {
            FromUpstream::Notification { method, params } => self
                .on_upstream_notification(UpstreamNotification::from_notification(method, params)),
            FromUpstream::ListenEnded { id, reply } => self.on_listen_ended(id, reply),
            FromUpstream::Relayed { message, kind } => self.relay_to_editor(message, kind),
            FromUpstream::RelayFailed { id, reply } => {
                if self.relayed.remove(&id).is_some() {
                    self.end_initialize_wait(&id);
                    let (cause, detail) = match reply {
                        Reply::Busy => (Cause::UpstreamBusy, None),
                        Reply::Invalid => (Cause::InvalidResponse, None),
                        // HTTP: the request's POST failed alone.
                        Reply::Failed(f) => (Cause::TransportFailed, Some(json!(f.detail))),
                        _ => (Cause::UpstreamExited, None),
                    };
                    self.reply_error(Some(&id), cause, detail);
                }
            }
            FromUpstream::IdInUse { id } => {
                if self.relayed.remove(&id).is_some() {
                    self.end_initialize_wait(&id);
                    self.reply_error(Some(&id), Cause::DuplicateId, None);
                }
            }
            FromUpstream::SignedIn => self.on_signed_in(),
        }
    }
}

impl Handler<UpstreamLost> for Frontend {
    type Result = bool;
    fn handle(&mut self, UpstreamLost { status }: UpstreamLost, ctx: &mut Context<Self>) -> bool {
        // A legacy server that went away before it answered the `initialize` passed to it
        // (one that crashes at start, after it was started again for its exit at
        // server/discover) fails that `initialize` with its exit status, as during the probe;
        // the bridge keeps serving, and the next `initialize` starts a new one.
        if self.state == Lifecycle::PassThrough
            && let Some(wait) = self.initialize_wait.take()
        {
            if self.relayed.remove(&wait.id).is_some() {
                tracing::warn!(target: "upstream", "the upstream server exited ({status})");
                self.fail_passed_initialize(
                    &wait,
                    Cause::UpstreamExited.error(Some(json!(status))),
                );
                return false;
            }
            self.initialize_wait = Some(wait);
        }
        if !matches!(self.state, Lifecycle::Ready | Lifecycle::PassThrough) {
            if let Some(tx) = self.exit_status.take() {
                let _ = tx.send(status.clone());
            }
            tracing::warn!(target: "upstream", "the upstream server exited ({status})");
            return false;
        }
        tracing::error!(target: "upstream", "the upstream server exited ({status})");
        self.state = Lifecycle::Closing;
        let ids: Vec<Id> = self.slots.keys().cloned().collect();
        for id in ids {
            if self.cancel_slot(&id, ctx) {
                self.reply_error(Some(&id), Cause::UpstreamExited, None);
            }
        }
        for (id, _) in std::mem::take(&mut self.relayed) {
            self.reply_error(Some(&id), Cause::UpstreamExited, None);
        }
        true
    }
}

impl Handler<Quiesce> for Frontend {
    type Result = ();
    fn handle(&mut self, Quiesce { signal }: Quiesce, ctx: &mut Context<Self>) {
        let initializing = self.state == Lifecycle::Initializing;
        self.state = Lifecycle::Closing;
        let mut answer = Vec::new();
        let mut cancelled = 0usize;
        let ids: Vec<Id> = self.slots.keys().cloned().collect();
        for id in ids {
            let initialize = self
                .slots
                .get(&id)
                .is_some_and(|s| s.method == RequestClass::Initialize);
            if self.cancel_slot(&id, ctx) {
                cancelled += 1;
                if initialize && initializing {
                    answer.push(id);
                }
            }
        }
        let held: Vec<Id> = std::mem::take(&mut self.held)
            .into_iter()
            .filter_map(|h| h.request)
            .collect();
        // Held behind initialize, they are in flight too (they count against the limit).
        cancelled += held.len();
        answer.extend(held);
        self.held_bytes = 0;
        // Pass-through: the editor's requests in flight end with the input, unanswered.
        cancelled += self.relayed.len();
        self.relayed.clear();
        // A client that closed its input gets no answer to what was still in flight (the
        // requests are cancelled upstream): one line says how many, so that an output that
        // stops short (`head -1 requests.jsonl | mcp-bridge ...` prints nothing) is explained.
        match (signal, cancelled) {
            (Some(_), _) | (None, 0) => {}
            (None, 1) => {
                tracing::info!(target: "frontend", "the end of the input cancelled 1 request in flight: it gets no response");
            }
            (None, n) => {
                tracing::info!(target: "frontend", "the end of the input cancelled {n} requests in flight: they get no response");
            }
        }
        // The editor that sent the signal still reads: the start of its connection gets an
        // answer (see [`Quiesce`]); at the end of input nothing is answered.
        if let Some(signal) = signal {
            for id in answer {
                self.reply_error(Some(&id), Cause::Closed, Some(json!(signal)));
            }
        }
    }
}

impl Handler<Finish> for Frontend {
    type Result = bool;
    fn handle(&mut self, _: Finish, ctx: &mut Context<Self>) -> bool {
        ctx.stop();
        self.ran
    }
}
