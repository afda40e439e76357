//! The Frontend actor: the 2025-11-25 stdio server for one editor connection. It reads the
//! frames of stdin (the reader never waits for a slot), owns the lifecycle
//! (`awaiting_initialize -> initializing -> ready | pass_through -> closing`, `Phase`:
//! `pass_through` when the upstream is a legacy server, `protocol::rules::era`), answers `ping`,
//! `logging/setLevel`, `server/discover` and every bad line itself, and admits each forwarded
//! request as a slot. Because this actor handles one message at a time, "is the slot still
//! live? then write its frame" is one step: that is the output lock of the design.

mod forward;
mod held;
mod initialize;
mod listen;
pub mod messages;
mod pass_through;
mod rounds;
mod slots;

use actix::prelude::*;
use foldhash::HashMap;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::oneshot;

use self::held::HeldFrames;
// The limits that the black-box tests check.
#[cfg(feature = "internals")]
pub use self::held::{MAX_HELD_BYTES, MAX_HELD_FRAMES};
#[cfg(feature = "internals")]
pub use self::initialize::INITIALIZE_EXIT_STATUS_WAIT;
use self::initialize::InitializeWait;
use self::listen::ListenSide;
use self::messages::{ChangeAnswer, Finish, FromUpstream, GateUpdate, Quiesce, UpstreamLost};
use self::pass_through::Relayed;
use self::slots::Slot;
use super::link::{ActorStats, Link};
use super::listener::ListenerLinks;
use super::metrics::{METRICS_INTERVAL, MethodBatch, MethodTimes};
use super::pending::{PendingLinks, Resolve};
use super::sign_in_side::{EditorInitialized, EditorLinks, SignInSide};
use super::supervisor::messages::{ActorEnded, ActorKind, Shutdown, ShutdownCause, StartListener};
use super::upstream::reply::UpstreamReply;
use super::upstream::{self, UpstreamLinks};
use crate::actors::config::BridgeConfig;
use crate::log::limits::BridgeLimits;
use crate::protocol::listen::Declared;
use crate::protocol::revisions::errors::{self, Cause};
use crate::protocol::revisions::legacy::{self, EditorNotification, EditorRequest, RequestClass};
use crate::protocol::revisions::log_level::LogLevel;
use crate::protocol::revisions::modern::{self, RequestMeta, UpstreamNotification};
use crate::protocol::rules::input::InputAnswer;
use crate::protocol::rules::list_items::ItemKind;
use crate::protocol::rules::profile::REQUEST_ID_PREFIX;
use crate::protocol::rules::relay;
use crate::protocol::rules::translate::{self, MetaKeys, ReplyMask};
use crate::protocol::wire::framing::Frame;
use crate::protocol::wire::id::Id;
use crate::protocol::wire::jsonrpc::{self, Message, ParseError};
use crate::protocol::wire::raw;
use crate::transport::queue::Delivery;
use crate::transport::upstream::EndCause;
use crate::transport::writer::Writer;

/// The phase of the connection: `awaiting_initialize -> initializing -> ready | pass_through
/// -> closing`. A failed `initialize` (in `initializing`, or passed through in
/// `pass_through`) returns to `awaiting_initialize`; `closing` is the last.
enum Phase {
    /// The start of the connection, and the end of a failed `initialize`: only an
    /// `initialize` starts the upstream.
    AwaitingInitialize,
    /// `initialize` runs: the era of the upstream is being decided (`protocol::rules::era`).
    Initializing(Initializing),
    /// A 2026-07-28 upstream answered `server/discover`: each forwarded request is a slot.
    Ready(Ready),
    /// A legacy upstream (`protocol::rules::era`): the 2025-11-25 protocol passes through unchanged.
    PassThrough(PassThrough),
    /// The input ended or the upstream was lost: nothing new starts.
    Closing(Closing),
}

/// The data of `initializing`.
struct Initializing {
    /// The editor's frames that arrived meanwhile, in order: handled once `initialize` ends,
    /// in the phase it leads to.
    held: HeldFrames,
    /// Where the end of a lost upstream goes (the probe waits for it,
    /// [`initialize::INITIALIZE_EXIT_STATUS_WAIT`]); taken by the first loss.
    exit_status: Option<oneshot::Sender<EndCause>>,
    /// The end of an upstream lost meanwhile: its warning waits for the decision,
    /// since a server that exits at `server/discover` is the expected sign of a legacy
    /// server (rmcp's servers end at any first message but `initialize`).
    lost: Option<EndCause>,
}

/// The data of `ready`.
struct Ready {
    /// The `_meta` that `server/discover` was sent with (the protocol version, the client's
    /// capabilities and info), which every forwarded request carries; `current_meta` puts
    /// the level of the last `logging/setLevel` in.
    meta: RequestMeta,
    /// The `_meta` keys of forwarded requests, serialized once for the current log level
    /// (`None` after `logging/setLevel` until the next forwarded request).
    meta_keys: Option<MetaKeys>,
    /// What the `initialize` result declared of list changes and `resources.subscribe`: what
    /// the Listener keeps a listen stream for.
    declared: Declared,
    /// The listen side, once `notifications/initialized` asked for the Listener.
    listen: Option<ListenSide>,
}

/// The data of `pass_through`.
struct PassThrough {
    /// The editor's requests sent upstream and not answered yet.
    relayed: HashMap<Id, Relayed>,
    /// With the item filter: the list requests among `relayed` whose results lose the hidden
    /// items, with their kind.
    listing: HashMap<Id, ItemKind>,
    /// The editor's `initialize` not answered yet by the legacy server.
    initialize_wait: Option<InitializeWait>,
}

/// The data of `closing`.
struct Closing {
    /// The listen side of `ready`, kept: the answers to subscription changes and the list
    /// changes that still come reach the editor until the end.
    listen: Option<ListenSide>,
}

impl Phase {
    /// The frames held while `initialize` runs (`initializing` only).
    fn held(&self) -> Option<&HeldFrames> {
        match self {
            Phase::Initializing(i) => Some(&i.held),
            _ => None,
        }
    }

    /// The data of `pass_through`, in that phase.
    fn pass_through(&self) -> Option<&PassThrough> {
        match self {
            Phase::PassThrough(p) => Some(p),
            _ => None,
        }
    }

    /// The data of `pass_through`, in that phase, to change.
    fn pass_through_mut(&mut self) -> Option<&mut PassThrough> {
        match self {
            Phase::PassThrough(p) => Some(p),
            _ => None,
        }
    }

    /// The listen side: asked for in `ready`, kept in `closing`.
    fn listen(&self) -> Option<&ListenSide> {
        match self {
            Phase::Ready(r) => r.listen.as_ref(),
            Phase::Closing(c) => c.listen.as_ref(),
            _ => None,
        }
    }

    /// The listen side, to change (see `Phase::listen`).
    fn listen_mut(&mut self) -> Option<&mut ListenSide> {
        match self {
            Phase::Ready(r) => r.listen.as_mut(),
            Phase::Closing(c) => c.listen.as_mut(),
            _ => None,
        }
    }

    /// Moves to `closing`, which keeps the listen side; returns the phase it left, without
    /// its listen side.
    fn close(&mut self) -> Phase {
        let mut left = std::mem::replace(self, Phase::Closing(Closing { listen: None }));
        let listen = match &mut left {
            Phase::Ready(r) => r.listen.take(),
            Phase::Closing(c) => c.listen.take(),
            _ => None,
        };
        *self = Phase::Closing(Closing { listen });
        left
    }

    /// Leaves `initializing` for `awaiting_initialize` (the caller sets the phase it leads
    /// to) and returns its data; `None`, and no change, in any other phase.
    fn leave_initializing(&mut self) -> Option<Initializing> {
        if !matches!(self, Phase::Initializing(_)) {
            return None;
        }
        match std::mem::replace(self, Phase::AwaitingInitialize) {
            Phase::Initializing(i) => Some(i),
            _ => None,
        }
    }
}

/// What the bridge honours of the discovered capabilities: the Listener keeps a listen
/// stream for the list changes and the resource subscriptions.
pub const REPLY_MASK: ReplyMask = ReplyMask {
    list_changed: true,
    subscribe: true,
};

/// The Frontend actor. What every phase uses is here; what one phase uses is in its
/// `Phase`.
pub struct Frontend {
    /// What the bridge runs with: limits, time limits, the upstream, the item filter.
    config: Arc<BridgeConfig>,
    /// The counters of this actor (its input frames among them).
    stats: Arc<ActorStats>,
    /// The writer toward the editor (stdout), the only one.
    output: Writer,
    /// The Upstream actor: shared with the slot futures, which call it themselves.
    upstream: Arc<UpstreamLinks>,
    /// The PendingTable: the answers of the editor to the bridge's `b-` requests go there.
    pending: Arc<PendingLinks>,
    /// The Listener, which gets the subscription changes and the listen facts.
    listener: ListenerLinks,
    /// The Supervisor: the end of the input, the start of the Listener, the end of the actor.
    supervisor: SupervisorLinks,
    /// The methods' counters since the last [`MethodBatch`].
    methods: MethodTimes,
    /// The Metrics actor, which gets the methods' counters in batches.
    metrics: Link<MethodBatch>,
    /// The SignIn actor of a URL upstream with sign-in.
    sign_in: Option<SignInSide>,
    /// The rate limits of this bridge's warnings (shared with the slot futures).
    limits: Arc<BridgeLimits>,
    /// The phase of the connection, with the data live in it alone.
    phase: Phase,
    /// The editor's requests in flight as slots (the `initialize` that runs, the forwarded
    /// requests), by the editor's id: a response goes out only while its slot is live.
    slots: HashMap<Id, Slot>,
    /// The progress tokens the bridge gave the upstream, to the slot each belongs to.
    progress_routes: HashMap<String, Id>,
    /// The number in the last progress token the bridge made: each is new.
    next_progress_token: u64,
    /// The level of `logging/setLevel`, when the editor set one: it holds in every phase.
    log_level: Option<LogLevel>,
    /// The capabilities of the editor's last `initialize`: those the upstream hears of, and
    /// what a sign-in and the slots may ask the editor.
    editor_capabilities: Arc<Value>,
    /// An `initialize` succeeded at least once (the answer to [`Finish`]).
    ran: bool,
    /// The token of the last [`InitializeWait`]: a timer of an earlier wait, which may
    /// outlive its phase, finds another token and does nothing.
    last_wait_token: u64,
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
    /// The Metrics actor, which gets the methods' counters in batches.
    pub metrics: Link<MethodBatch>,
    /// The SignIn actor of a URL upstream with sign-in (`None`: no sign-in).
    pub sign_in: Option<SignInSide>,
    /// The rate limits of this bridge's warnings.
    pub limits: Arc<BridgeLimits>,
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
            methods: MethodTimes::default(),
            metrics: out.metrics,
            sign_in: out.sign_in,
            limits: out.limits,
            phase: Phase::AwaitingInitialize,
            slots: HashMap::default(),
            progress_routes: HashMap::default(),
            next_progress_token: 0,
            log_level: None,
            editor_capabilities: Arc::new(json!({})),
            ran: false,
            last_wait_token: 0,
        }
    }

    /// Writes a response (or a frame that is never dropped: list changes, answers). An error
    /// of the table toward the client of a server in this process names no upstream server.
    fn write(&self, v: &Value) {
        if self.config.in_process
            && let Some(worded) = errors::in_process_error(v)
        {
            self.output.send_message(&worded, Delivery::Always);
            return;
        }
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
        let mut m = match &self.phase {
            Phase::Ready(ready) => ready.meta.clone(),
            _ => RequestMeta {
                protocol_version: modern::PROTOCOL_VERSION.into(),
                client_capabilities: translate::upstream_client_capabilities(
                    &self.editor_capabilities,
                ),
                client_info: Some(Self::bridge_client_info()),
                log_level: None,
            },
        };
        m.log_level = self.log_level;
        m
    }

    fn on_frame(&mut self, frame: Frame, ctx: &mut Context<Self>) {
        if matches!(self.phase, Phase::Initializing(_)) && self.hold(&frame) {
            return;
        }
        let line = match frame {
            Frame::Line(line) => line,
            Frame::TooLong { len_bytes, id, .. } => {
                if self.limits.editor_line_too_long.allow_shared() {
                    tracing::warn!(target: "frontend", "a line of {len_bytes} bytes is over the limit of {} bytes", self.config.max_line_bytes);
                }
                if id.as_ref().is_some_and(is_bridge_request_id) {
                    // The editor's answer to a request of the bridge: it fails the round that
                    // waits for it, like any bad line with that id (no error to the editor).
                    return self.resolve(id, InputAnswer::Invalid);
                }
                self.reply_error(
                    id.as_ref(),
                    Cause::LineTooLong,
                    Some(json!(self.config.max_line_bytes)),
                );
                return;
            }
        };
        if matches!(self.phase, Phase::PassThrough(_)) {
            return self.relay_from_editor(&line);
        }
        // Once ready, a forwarded request is read without a value tree: its params pass raw
        // (numbers keep their exact text, a large member is not copied). Every other line
        // takes the parser's path.
        if matches!(self.phase, Phase::Ready(_))
            && let Some((id, method, params)) = raw::request(line.clone(), self.config.max_depth)
            && let RequestClass::Forward(f) = legacy::classify_request(&method)
        {
            if self.id_in_use(&id) {
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
            Ok(Message::Response { id, result }) => self.resolve(id, InputAnswer::Result(result)),
            Ok(Message::ErrorResponse { id, error }) => self.resolve(id, InputAnswer::Error(error)),
            Err(e) if e.id().is_some_and(is_bridge_request_id) => {
                // A bad line with the id of a request of the bridge answers that request.
                self.resolve(e.id().cloned(), InputAnswer::Invalid);
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

    /// Hands an answer of the editor to the PendingTable (which drops unknown ids).
    fn resolve(&self, id: Option<Id>, answer: InputAnswer) {
        self.pending.resolve.do_send(Resolve { id, answer });
    }

    /// Whether a request of the editor with the id `id` is in flight: a slot, a subscription
    /// change, or a request held while `initialize` runs.
    fn id_in_use(&self, id: &Id) -> bool {
        self.slots.contains_key(id) || self.is_open_change(id) || self.is_held(id)
    }

    fn on_request(&mut self, id: Id, request: EditorRequest, ctx: &mut Context<Self>) {
        if self.id_in_use(&id) {
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
                        if let Phase::Ready(ready) = &mut self.phase {
                            ready.meta_keys = None;
                        }
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
        match request {
            EditorRequest::Initialize(params)
                if matches!(self.phase, Phase::AwaitingInitialize) =>
            {
                self.start_initialize(id, params, ctx)
            }
            request
                if !is_initialize
                    && matches!(
                        self.phase,
                        Phase::AwaitingInitialize | Phase::Initializing(_)
                    ) =>
            {
                if request.names_modern_version() {
                    let method = json!(request.method());
                    self.reply_error(Some(&id), Cause::MethodNotFound, Some(method));
                } else {
                    self.reply_error(Some(&id), Cause::NotInitialized, None);
                }
            }
            _ if is_initialize && matches!(self.phase, Phase::Initializing(_)) => {
                let error: Value = errors::initialize_running().into();
                self.write(&jsonrpc::error_response(Some(&id), error));
            }
            _ if is_initialize && matches!(self.phase, Phase::Ready(_)) => {
                self.reply_error(Some(&id), Cause::AlreadyInitialized, None);
            }
            request if matches!(self.phase, Phase::Ready(_)) => match request {
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
                // The cancel of the `initialize` that runs also handles the frames held
                // behind it (`cancel_slot`).
                if self.cancel_slot(&id, ctx) || self.close_change(&id) || self.unhold(&id) {
                    tracing::debug!(target: "frontend", "the client cancelled request {id}");
                }
            }
            EditorNotification::Initialized => {
                if matches!(self.phase, Phase::Ready(_)) {
                    if let Some(sign_in) = &self.sign_in {
                        // From now on a sign-in asks the editor and never opens a browser.
                        sign_in.initialized.do_send(EditorInitialized(EditorLinks {
                            capabilities: self.editor_capabilities.clone(),
                            pending: self.pending.clone(),
                            output: self.output.clone(),
                        }));
                    }
                    self.start_listener();
                }
            }
            EditorNotification::Unknown(method) => {
                tracing::debug!(target: "frontend", "ignored the notification {method}");
            }
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

/// Whether `id` is one of the bridge's own requests to the editor (`b-N`): a bad line with it
/// is the answer to that request, never a request of the editor.
fn is_bridge_request_id(id: &Id) -> bool {
    matches!(id, Id::Str(s) if s.starts_with(REQUEST_ID_PREFIX))
}

impl Frontend {
    /// Hands the methods' counters since the last batch to the Metrics actor (none when no
    /// request ended since).
    fn send_method_batch(&mut self) {
        if !self.methods.is_empty() {
            self.metrics
                .do_send(MethodBatch(std::mem::take(&mut self.methods)));
        }
    }
}

impl Actor for Frontend {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        // With `--metrics-interval`, the methods' counters are at most that old in its lines.
        let every = self
            .config
            .metrics_interval
            .map_or(METRICS_INTERVAL, |d| d.min(METRICS_INTERVAL));
        ctx.run_interval(every, |act, _| act.send_method_batch());
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        self.supervisor
            .ended
            .do_send(ActorEnded(ActorKind::Frontend));
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
                if let Some(relayed) = self.take_relayed(&id) {
                    self.methods
                        .record(relayed.method, false, relayed.started.elapsed());
                    if let UpstreamReply::Failed(f) = &reply {
                        self.warn_of_the_url_path(&id, f.status);
                    }
                    let (cause, detail) = match reply {
                        UpstreamReply::Busy => (Cause::UpstreamBusy, None),
                        UpstreamReply::Invalid(detail) => {
                            (Cause::InvalidResponse, detail.map(|d| json!(d)))
                        }
                        // HTTP: the request's POST failed alone.
                        UpstreamReply::Failed(f) => (Cause::TransportFailed, Some(json!(f.detail))),
                        _ => (Cause::UpstreamExited, None),
                    };
                    // The `initialize` passed to a legacy server failed (an HTTP error, a
                    // broken answer): as an `initialize` that fails during the probe, the
                    // bridge returns to awaiting `initialize`, so that the requests after it
                    // get `not_initialized` instead of reaching a server that never started
                    // a session; the next `initialize` connects again.
                    if let Some(wait) = self.take_initialize_wait(&id) {
                        self.fail_passed_initialize(&wait, cause.error(detail));
                        self.upstream.disconnect.do_send(upstream::Disconnect);
                        return;
                    }
                    self.end_initialize_wait(&id);
                    self.reply_error(Some(&id), cause, detail);
                }
            }
            FromUpstream::IdInUse { id } => {
                if self.take_relayed(&id).is_some() {
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
    fn handle(&mut self, UpstreamLost { cause }: UpstreamLost, ctx: &mut Context<Self>) -> bool {
        // A server that went away before it answered the `initialize` passed to it (one that
        // crashes at start, also after it was started again for its exit at server/discover:
        // an rmcp 1.x legacy server answers once started again) failed to start: that
        // `initialize` fails with its exit status and the end of its stderr; the bridge keeps
        // serving, and the next `initialize` starts a new one.
        if let Some(pass) = self.phase.pass_through_mut()
            && let Some(wait) = pass.initialize_wait.take()
        {
            if pass.relayed.remove(&wait.id).is_some() {
                let again = if wait.restarted {
                    " (it had exited at server/discover and was started again)"
                } else {
                    ""
                };
                tracing::warn!(target: "upstream", "the upstream server failed to start: it exited ({cause}) before it answered initialize{again}");
                let e = Cause::UpstreamExited.error(Some(json!(initialize::failed_start_detail(
                    &cause.to_string(),
                    cause.stderr_tail()
                ))));
                self.observe_failed_start(&e);
                self.fail_passed_initialize(&wait, e);
                return false;
            }
            pass.initialize_wait = Some(wait);
        }
        if !matches!(self.phase, Phase::Ready(_) | Phase::PassThrough(_)) {
            if let Phase::Initializing(initializing) = &mut self.phase {
                if let Some(tx) = initializing.exit_status.take() {
                    let _ = tx.send(cause.clone());
                }
                initializing.lost = Some(cause);
            } else {
                tracing::warn!(target: "upstream", "the upstream server exited ({cause})");
            }
            return false;
        }
        tracing::error!(target: "upstream", "the upstream server exited ({cause})");
        let left = self.phase.close();
        let ids: Vec<Id> = self.slots.keys().cloned().collect();
        for id in ids {
            if self.cancel_slot(&id, ctx) {
                self.reply_error(Some(&id), Cause::UpstreamExited, None);
            }
        }
        if let Phase::PassThrough(pass) = left {
            for (id, _) in pass.relayed {
                self.reply_error(Some(&id), Cause::UpstreamExited, None);
            }
        }
        true
    }
}

impl Handler<Quiesce> for Frontend {
    type Result = ();
    fn handle(&mut self, Quiesce { signal }: Quiesce, ctx: &mut Context<Self>) {
        let left = self.phase.close();
        let initializing = matches!(left, Phase::Initializing(_));
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
        match left {
            Phase::Initializing(left) => {
                let held: Vec<Id> = left.held.into_requests().collect();
                // Held behind initialize, they are in flight too (they count against the
                // limit).
                cancelled += held.len();
                answer.extend(held);
            }
            // Pass-through: the editor's requests in flight end with the input, unanswered.
            Phase::PassThrough(left) => cancelled += left.relayed.len(),
            _ => {}
        }
        // A client that closed its input gets no answer to what was still in flight (the
        // requests are cancelled upstream): one line says how many, so that an output that
        // stops short (`head -1 requests.jsonl | mcp-bridge ...` prints nothing) is explained.
        // After a signal the requests of `answer` get `closed` below; the others none.
        let (what, unanswered) = match signal {
            Some(signal) => (format!("the stop at {signal}"), cancelled - answer.len()),
            None => ("the end of the input".to_string(), cancelled),
        };
        match unanswered {
            0 => {}
            1 => {
                tracing::info!(target: "frontend", "{what} cancelled 1 request in flight: it gets no response");
            }
            n => {
                tracing::info!(target: "frontend", "{what} cancelled {n} requests in flight: they get no response");
            }
        }
        // The editor that sent the signal still reads: the start of its connection gets an
        // answer (see [`Quiesce`]); at the end of input nothing is answered.
        if let Some(signal) = signal {
            for id in answer {
                self.reply_error(Some(&id), Cause::Closed, Some(json!(signal.name())));
            }
        }
    }
}

impl Handler<Finish> for Frontend {
    type Result = bool;
    fn handle(&mut self, _: Finish, ctx: &mut Context<Self>) -> bool {
        // Before the answer: the Supervisor asks for the totals only after it, so this last
        // batch is in the Metrics actor's mailbox before them.
        self.send_method_batch();
        ctx.stop();
        self.ran
    }
}
