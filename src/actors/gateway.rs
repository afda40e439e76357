//! The gateway: many servers behind one bridge. One 2025-11-25 server for the editor on
//! stdin and stdout, and behind it one bridge per server of the configuration file, each the
//! same actors that `mcp-bridge` runs for one server (so each server is translated, started,
//! reached, signed in to, filtered and timed exactly as it would be alone), in this process,
//! on channels. The gateway is a 2025-11-25 client of each of them: it initializes each with
//! the editor's `initialize`, gives each server's items their exposed names
//! (`protocol::rules::names`), routes each request to its owner with an id of its own and
//! back, merges the lists, and gives the servers' input requests ids of its own toward the
//! editor (`b-1`, ...).
//!
//! The supervision: a server's bridge that ends (its upstream exited, it could not start) is
//! the loss of that server only. Its requests in flight get `upstream_exited` naming it, and it
//! starts again after a backoff that doubles ([`RestartPolicy`]); once it answers
//! `initialize` again, the editor gets one list change per list it declares. A server that
//! ends [`RestartPolicy::loop_ends`] times within [`RestartPolicy::loop_window`] is failed: it
//! is left out, with one warning and its list changes, until
//! [`RestartPolicy::failed_retry`] later.
//!
//! The start: every server's bridge starts with the gateway (their children in parallel).
//! The editor's `initialize` is answered once every server has answered its own, or at the
//! start limit, whichever comes first; a server that is late joins with list changes.
//!
//! The end: at the end of the input or a signal, each server's input closes, each bridge runs
//! its own shutdown steps (its in-flight requests answered, its upstream closed), and once
//! every one ended, the queued frames reach the editor and the process exits 0. The process's
//! watchdog and panic hook reach every server's child: each joins the process's registry.

pub mod lists;
pub mod member;

mod editor;
mod reload;
mod servers;

use actix::prelude::*;
use foldhash::HashMap;
use futures_util::StreamExt;
use futures_util::stream::LocalBoxStream;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::time::{Duration, Instant};

use self::lists::Fetch;
use self::member::{Back, Member, MemberEvent, MemberExited, MemberState, Outputs, ServerSetup};
use super::link::{ActorStats, Link};
use super::supervisor::messages::{Shutdown, ShutdownCause, StopSignal};
use super::supervisor::{CLOSE_DRAIN_IDLE, CLOSE_DRAIN_MAX, Host, watchdog_after};
use crate::protocol::rules::names::NameTable;
use crate::protocol::wire::framing::Frame;
use crate::protocol::wire::id::Id;
use crate::protocol::wire::jsonrpc;
use crate::transport::queue::Delivery;
use crate::transport::writer::Writer;

/// How long the editor's `initialize` waits for the servers' own before it is answered with
/// those that answered (the others join later, with list changes).
pub const DEFAULT_START_TIME_LIMIT: Duration = Duration::from_secs(20);

/// The first wait before a server that ended starts again; each end within the crash loop's
/// window doubles it.
pub const DEFAULT_RESTART_BACKOFF_INITIAL: Duration = Duration::from_secs(1);
/// The longest wait before a server that ended starts again.
pub const DEFAULT_RESTART_BACKOFF_MAX: Duration = Duration::from_secs(60);
/// Ends within [`DEFAULT_CRASH_LOOP_WINDOW`] that make a server failed.
pub const DEFAULT_CRASH_LOOP_ENDS: usize = 5;
/// The window of the crash loop.
pub const DEFAULT_CRASH_LOOP_WINDOW: Duration = Duration::from_secs(120);
/// How long a failed server is left out before it is tried again.
pub const DEFAULT_FAILED_RETRY: Duration = Duration::from_secs(600);

/// When a server that ended starts again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RestartPolicy {
    /// The first wait ([`DEFAULT_RESTART_BACKOFF_INITIAL`]).
    pub backoff_initial: Duration,
    /// The longest wait ([`DEFAULT_RESTART_BACKOFF_MAX`]).
    pub backoff_max: Duration,
    /// Ends within `loop_window` that make a server failed ([`DEFAULT_CRASH_LOOP_ENDS`]).
    pub loop_ends: usize,
    /// The window ([`DEFAULT_CRASH_LOOP_WINDOW`]).
    pub loop_window: Duration,
    /// How long a failed server is left out ([`DEFAULT_FAILED_RETRY`]).
    pub failed_retry: Duration,
}

impl Default for RestartPolicy {
    fn default() -> Self {
        RestartPolicy {
            backoff_initial: DEFAULT_RESTART_BACKOFF_INITIAL,
            backoff_max: DEFAULT_RESTART_BACKOFF_MAX,
            loop_ends: DEFAULT_CRASH_LOOP_ENDS,
            loop_window: DEFAULT_CRASH_LOOP_WINDOW,
            failed_retry: DEFAULT_FAILED_RETRY,
        }
    }
}

impl RestartPolicy {
    /// The wait before the next start of a server that ended `ends` times in the window
    /// (at least once): the initial wait, doubled for each earlier end, at most the longest.
    pub fn backoff(&self, ends: usize) -> Duration {
        let doublings = ends.saturating_sub(1).min(30) as u32;
        self.backoff_initial
            .saturating_mul(1u32 << doublings)
            .min(self.backoff_max)
    }
}

/// How long the file must stay unchanged after a change before it is read again: an editor's
/// save is several events (a new file, a rename), and a person's edits come in bursts.
pub const RELOAD_SETTLE: Duration = Duration::from_millis(300);

/// Reads the file again: its servers, or why it cannot be used (one line).
pub type Reload = Box<dyn Fn() -> Result<Vec<ServerSetup>, String>>;

/// What the gateway runs with.
pub struct GatewaySetup {
    /// The servers, in the file's order.
    pub servers: Vec<ServerSetup>,
    /// The longest wait of the editor's `initialize` for the servers'
    /// ([`DEFAULT_START_TIME_LIMIT`]).
    pub start_time_limit: Duration,
    /// When a server that ended starts again.
    pub restart: RestartPolicy,
    /// The longest line of the editor, in bytes (`--max-line-bytes`), for the error of a
    /// longer one.
    pub max_line_bytes: usize,
    /// Reads the file again (`None`: never).
    pub reload: Option<Reload>,
    /// An item at each change of the file (`None`: not watched).
    pub changes: Option<LocalBoxStream<'static, ()>>,
    /// `--metrics-interval`: a metrics line per server at info this often (`None`: only the
    /// summary at the end).
    pub metrics_interval: Option<Duration>,
}

/// The gateway's side of the editor and of the process.
pub struct GatewayParts {
    /// The editor's frames (stdin); their end is the end of the input.
    pub input: LocalBoxStream<'static, Frame>,
    /// The writer toward the editor (stdout).
    pub output: Writer,
    /// Resolves with the signal that stops the gateway.
    pub signal: Pin<Box<dyn Future<Output = StopSignal>>>,
    /// The process: the watchdog, the exit code, the registry of children.
    pub host: Rc<dyn Host>,
}

/// Where the editor's session stands.
enum Phase {
    /// Before the editor's `initialize`.
    AwaitingInitialize,
    /// The editor's `initialize` waits for the servers' own.
    Initializing {
        /// Its id.
        id: Id,
    },
    /// The editor's `initialize` is answered.
    Ready,
    /// The end of the input or a signal: the servers' bridges stop.
    Closing,
}

/// A request of the gateway to a server, in flight.
enum Sent {
    /// An editor's request, forwarded to its owner: the editor's id, the method, and when
    /// it came.
    Editor {
        member: usize,
        id: Id,
        method: &'static str,
        at: Instant,
    },
    /// The server's `initialize`, of its run `generation`.
    Initialize { member: usize, generation: u64 },
    /// A page of one of its lists: the fetch.
    List { member: usize, fetch: u64 },
    /// A request whose answer nobody waits for (`logging/setLevel`).
    Ignored { member: usize },
}

impl Sent {
    fn member(&self) -> usize {
        match self {
            Sent::Editor { member, .. }
            | Sent::Initialize { member, .. }
            | Sent::List { member, .. }
            | Sent::Ignored { member } => *member,
        }
    }
}

/// An input request of a server, sent on to the editor under an id of the gateway's.
struct Asked {
    member: usize,
    generation: u64,
    /// The server's own id.
    id: Id,
}

/// The gateway actor.
pub struct Gateway {
    /// The servers, in the file's order.
    members: Vec<Member>,
    /// The exposed names and the way back.
    table: NameTable,
    start_time_limit: Duration,
    restart: RestartPolicy,
    /// The longest `--shutdown-grace` of the servers (the watchdog's wait).
    shutdown_grace: Duration,
    /// The longest line of the editor, in bytes.
    max_line_bytes: usize,
    host: Rc<dyn Host>,
    output: Writer,
    /// Where a run sends its frames and its end.
    back: Option<Back>,
    phase: Phase,
    /// The params of the editor's `initialize` (each server's run gets them).
    editor_params: Option<Value>,
    /// The editor sent `notifications/initialized`.
    editor_initialized: bool,
    /// The last `logging/setLevel` params of the editor (a server that starts later gets them).
    log_level: Option<Value>,
    /// The next id of the gateway's requests to a server and of its input requests to the
    /// editor.
    next_id: i64,
    /// The gateway's requests to the servers in flight, by their id.
    sent: HashMap<i64, Sent>,
    /// The editor's requests in flight to a server, by the editor's id: the server and the
    /// gateway's id toward it.
    waits: HashMap<Id, (usize, i64)>,
    /// The servers' input requests at the editor, by the gateway's id (`b-N`).
    asked: HashMap<String, Asked>,
    /// The fetches of the servers' lists in flight.
    fetches: HashMap<u64, Fetch>,
    next_fetch: u64,
    /// The items already warned of as left out (`kind name`), each warned once.
    warned: HashSet<String>,
    /// Reads the file again.
    reload: Option<Reload>,
    /// The number of the last change of the file: a reading waits until no change follows
    /// for [`RELOAD_SETTLE`].
    last_change: u64,
}

/// The file changed.
struct FileChanged;

impl Actor for Gateway {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let stats = ActorStats::new("gateway");
        let (outputs, stream) = Outputs::new();
        ctx.add_stream(stream);
        self.back = Some(Back {
            exited: Link::new(&ctx.address(), &stats),
            children: self.host.children(),
            outputs,
        });
        for i in 0..self.members.len() {
            self.start_run(i);
        }
    }
}

crate::counted_handlers!(Gateway: MemberExited, Signalled);

/// The signal that stops the gateway arrived.
#[derive(Message)]
#[rtype(result = "()")]
struct Signalled(StopSignal);

impl Handler<Signalled> for Gateway {
    type Result = ();
    fn handle(&mut self, Signalled(signal): Signalled, ctx: &mut Context<Self>) {
        tracing::info!(target: "gateway", "received {signal}: stopping as at the end of the input");
        self.shutdown(ctx);
    }
}

/// Starts the gateway in the current actix `System`.
pub fn start(setup: GatewaySetup, parts: GatewayParts) -> Addr<Gateway> {
    let spaces = setup.servers.iter().map(|s| s.namespace.clone()).collect();
    // The file's names were checked when it was read: two servers with one URI token are a
    // load error there.
    let table = NameTable::new(spaces).unwrap_or_default();
    let shutdown_grace = setup
        .servers
        .iter()
        .map(|s| s.config.shutdown_grace)
        .max()
        .unwrap_or_default();
    let members = setup.servers.into_iter().map(Member::new).collect();
    let gateway = Gateway {
        members,
        table,
        start_time_limit: setup.start_time_limit,
        restart: setup.restart,
        shutdown_grace,
        max_line_bytes: setup.max_line_bytes,
        host: parts.host,
        output: parts.output,
        back: None,
        phase: Phase::AwaitingInitialize,
        editor_params: None,
        editor_initialized: false,
        log_level: None,
        next_id: 1,
        sent: HashMap::default(),
        waits: HashMap::default(),
        asked: HashMap::default(),
        fetches: HashMap::default(),
        next_fetch: 1,
        warned: HashSet::new(),
        reload: setup.reload,
        last_change: 0,
    };
    let signal = parts.signal;
    let changes = setup.changes;
    let metrics_interval = setup.metrics_interval;
    Gateway::create(move |ctx| {
        if let Some(every) = metrics_interval {
            ctx.run_interval(every, |act, _| act.write_metrics("metrics"));
        }
        ctx.add_stream(parts.input);
        if let Some(changes) = changes {
            ctx.add_stream(changes.map(|()| FileChanged));
        }
        // A task of its own waits for the signal: a future in the context would be polled at
        // every wake of the gateway, once per message of every server.
        let signalled: Link<Signalled> = Link::new(&ctx.address(), &ActorStats::new("gateway"));
        actix::spawn(async move { signalled.do_send(Signalled(signal.await)) });
        gateway
    })
}

impl Gateway {
    /// The next id of the gateway's own.
    fn next_id(&mut self) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Writes a message to the editor.
    fn write(&self, message: &Value, delivery: Delivery) {
        let _ = self.output.send_message(message, delivery);
    }

    /// Answers the editor's request `id`.
    fn respond(&self, id: &Id, result: Value) {
        self.write(&jsonrpc::response(id, result), Delivery::Always);
    }

    /// Fails the editor's request `id` (or a message whose id is unknown) with `error`.
    fn fail(&self, id: Option<&Id>, error: Value) {
        self.write(&jsonrpc::error_response(id, error), Delivery::Always);
    }

    /// Starts a run of the server `i`'s bridge; when the editor's `initialize` came, the run
    /// gets it at once.
    fn start_run(&mut self, i: usize) {
        let Some(back) = &self.back else {
            return;
        };
        let Some(m) = self.members.get_mut(i) else {
            return;
        };
        m.run = Some(member::start_run(i, m, back));
        m.state = MemberState::Started;
        if self.editor_params.is_some() {
            self.send_initialize(i);
        }
    }

    /// Sends the editor's `initialize` to the server `i`'s current run.
    fn send_initialize(&mut self, i: usize) {
        let Some(params) = self.editor_params.clone() else {
            return;
        };
        let id = self.next_id();
        let Some(m) = self.members.get_mut(i) else {
            return;
        };
        let Some(run) = &m.run else {
            return;
        };
        let generation = run.generation;
        if run.send(&jsonrpc::request(&Id::Int(id), "initialize", params)) {
            m.state = MemberState::Initializing;
            self.sent.insert(
                id,
                Sent::Initialize {
                    member: i,
                    generation,
                },
            );
        }
    }

    /// Answers the editor's `initialize` when it waits and every server answered its own (or
    /// `now`, at the start limit).
    fn answer_initialize(&mut self, now: bool) {
        let Phase::Initializing { id } = &self.phase else {
            return;
        };
        let waiting = self.members.iter().any(Member::starting);
        if waiting && !now {
            return;
        }
        let id = id.clone();
        let ready: Vec<(&str, &Value)> = self
            .members
            .iter()
            .filter_map(|m| m.ready().map(|r| (m.setup.name.as_str(), r.as_ref())))
            .collect();
        let late: Vec<&str> = self
            .members
            .iter()
            .filter(|m| m.starting())
            .map(|m| m.setup.name.as_str())
            .collect();
        if !late.is_empty() {
            tracing::warn!(target: "gateway",
                "{} server(s) had not answered initialize within {} s: {}; they join when they do",
                late.len(), self.start_time_limit.as_secs_f64(), late.join(", "));
        }
        let version = ready
            .iter()
            .find_map(|(_, r)| r.get("protocolVersion").cloned())
            .unwrap_or_else(|| {
                Value::String(crate::protocol::revisions::legacy::PROTOCOL_VERSION.into())
            });
        let mut result = json!({
            "protocolVersion": version,
            "capabilities": crate::protocol::rules::gateway::merge_capabilities(
                ready.iter().map(|(_, r)| *r)),
            "serverInfo": {
                "name": crate::protocol::rules::gateway::GATEWAY_SERVER_NAME,
                "version": env!("CARGO_PKG_VERSION"),
            },
        });
        let instructions = crate::protocol::rules::gateway::merge_instructions(
            ready
                .iter()
                .map(|(name, r)| (*name, r.get("instructions").and_then(Value::as_str))),
        );
        if let (Some(text), Some(o)) = (instructions, result.as_object_mut()) {
            o.insert("instructions".into(), Value::String(text));
        }
        self.phase = Phase::Ready;
        self.respond(&id, result);
    }

    /// One metrics line per server, at info (`what`: `metrics` for the periodic line,
    /// `summary` at the end).
    fn write_metrics(&self, what: &str) {
        for m in self.members.iter().filter(|m| !m.removed) {
            tracing::info!(target: "metrics", "{what}: server {}", m.metrics_line());
        }
    }

    /// The end of the input, a signal, or the end of stdout: every server's input closes; the
    /// gateway ends once every bridge ended ([`Gateway::finish_if_ended`]).
    fn shutdown(&mut self, ctx: &mut Context<Self>) {
        if matches!(self.phase, Phase::Closing) {
            return;
        }
        // The summary says where each server stood when the end came.
        for m in &mut self.members {
            m.last_state = Some(m.state_word());
        }
        self.phase = Phase::Closing;
        self.host.step("watchdog");
        self.host
            .start_watchdog(watchdog_after(self.shutdown_grace));
        self.host.step("servers: close");
        for m in &mut self.members {
            if let Some(run) = &mut m.run {
                run.input = None;
            }
        }
        self.finish_if_ended(ctx);
    }

    /// Once closing and every server's bridge ended: the editor's requests still in flight
    /// get `closed`, the queued frames reach the editor, and the process exits 0.
    fn finish_if_ended(&mut self, ctx: &mut Context<Self>) {
        if !matches!(self.phase, Phase::Closing) || self.members.iter().any(|m| m.run.is_some()) {
            return;
        }
        // A request still in flight gets no response, as with one bridge.
        self.waits.clear();
        if self.editor_params.is_some() {
            self.write_metrics("summary");
        }
        self.host.step("output: close");
        let output = self.output.clone();
        let host = self.host.clone();
        output.close();
        ctx.spawn(
            async move {
                let _ = output.drain(CLOSE_DRAIN_IDLE, CLOSE_DRAIN_MAX).await;
                host.exit(0);
            }
            .into_actor(self)
            .map(|(), _, ctx| ctx.stop()),
        );
    }
}

impl StreamHandler<Frame> for Gateway {
    fn handle(&mut self, frame: Frame, ctx: &mut Context<Self>) {
        self.editor_frame(frame, ctx);
    }

    fn finished(&mut self, ctx: &mut Context<Self>) {
        tracing::debug!(target: "gateway", "the end of the input");
        self.shutdown(ctx);
    }
}

impl Handler<Shutdown> for Gateway {
    type Result = ();
    fn handle(&mut self, Shutdown(cause): Shutdown, ctx: &mut Context<Self>) {
        if cause == ShutdownCause::OutputClosed && !matches!(self.phase, Phase::Closing) {
            tracing::warn!(target: "gateway", "the editor closed its end of stdout: stopping as at the end of the input");
        }
        self.shutdown(ctx);
    }
}

impl StreamHandler<MemberEvent> for Gateway {
    fn handle(&mut self, event: MemberEvent, ctx: &mut Context<Self>) {
        match event {
            MemberEvent::Frame {
                member,
                generation,
                bytes,
            } => self.server_frame(member, generation, bytes, ctx),
            MemberEvent::OutputEnded { member, generation } => {
                if let Some(run) = self
                    .members
                    .get_mut(member)
                    .and_then(|s| s.run_of(generation))
                {
                    run.output_ended = true;
                }
                self.end_if_ended(member, ctx);
            }
        }
    }

    // The end of one server's output is its own event above, not the gateway's end.
    fn finished(&mut self, _: &mut Context<Self>) {}
}

impl StreamHandler<FileChanged> for Gateway {
    fn handle(&mut self, _: FileChanged, ctx: &mut Context<Self>) {
        self.last_change += 1;
        let change = self.last_change;
        ctx.run_later(RELOAD_SETTLE, move |act, _| {
            if act.last_change == change {
                act.reload();
            }
        });
    }

    // A watch that ended is not the gateway's end.
    fn finished(&mut self, _: &mut Context<Self>) {}
}

impl Handler<MemberExited> for Gateway {
    type Result = ();
    fn handle(&mut self, m: MemberExited, ctx: &mut Context<Self>) {
        if let Some(run) = self
            .members
            .get_mut(m.member)
            .and_then(|s| s.run_of(m.generation))
        {
            run.exited = Some(m.code);
        }
        self.end_if_ended(m.member, ctx);
    }
}
