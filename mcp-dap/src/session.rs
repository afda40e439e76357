//! The Session actor: one debug session's state machine and its output tail. It runs the
//! start sequence of the DAP specification ("Overview: Launch Sequencing": `initialize`, then
//! `launch`, the `initialized` event, `configurationDone`; `start`), follows the events
//! (`stopped`, `continued`, `exited`, `terminated`, `output`, `breakpoint`) thread by thread
//! (`threads`), and tells the MCP server which of its two resources changed.

use std::collections::BTreeMap;
use std::time::Duration;

use actix::prelude::*;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::dap::types::{ContinuedBody, ExitedBody, OutputBody, StoppedBody};
use mcp_bridge::server::{ListenEvent, Server};

use crate::adapter::{Adapter, AdapterNews, DapError, GoneCause, NoChildSession, Request, Stop};
use crate::adapters::AdapterDef;

pub use start::{LaunchSpec, Start};
use threads::{StillStopped, ThreadStop};

mod start;
mod threads;

/// The program output a session keeps, in bytes: the newest part (a tail), so that a chatty
/// program costs bounded memory.
pub const MAX_OUTPUT_TAIL_BYTES: usize = 64 * 1024;

/// How long a `disconnect` may take at the end of a session before the adapter's process
/// group is stopped anyway.
pub const DISCONNECT_TIME_LIMIT: Duration = Duration::from_secs(3);

/// The most stopped threads whose place (top frame) a stop of every thread fetches: one
/// `stackTrace` each, before the stop is shown.
pub const MAX_STOPPED_THREADS_SHOWN: usize = 16;

/// The adapters (by their `adapterID`) that answer a `variables` request with the whole list
/// whatever its `start` and `count` say: debugpy lists the first 100 items of a collection
/// and groups of its own, and pages none (microsoft/debugpy#1179), so a page from `start`
/// is cut from its list.
pub const ADAPTERS_WITHOUT_VARIABLE_PAGING: [&str; 1] = ["debugpy"];

/// Where a session is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The start sequence runs.
    Starting,
    /// The debuggee runs.
    Running,
    /// The debuggee is stopped (a breakpoint, a step, the entry).
    Stopped,
    /// The debuggee exited (DAP `exited`).
    Exited,
    /// The session ended (DAP `terminated`, or the adapter is gone: `cause`).
    Terminated,
}

/// The state resource of a session.
#[derive(Debug, Clone, Serialize)]
pub struct State {
    /// The session's id.
    pub session: String,
    /// Where it is.
    pub status: Status,
    /// Why it stopped (`breakpoint`, `step`, `entry`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The adapter's own reason where `reason` says otherwise: lldb-dap stops a program
    /// launched with `stopOnEntry` with `exception` at its first instruction, which is the
    /// entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adapter_reason: Option<String>,
    /// The thread that stopped last (the one the tools use by default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<i64>,
    /// The top frame of that stop: `file:line` and its frame id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_frame: Option<Value>,
    /// The other threads that are stopped: `thread_id`, `reason` (for a thread that stopped
    /// by its own event) and `top_frame`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub other_stopped_threads: Vec<Value>,
    /// The debuggee's exit code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// Why the session ended, when the adapter went away.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<GoneCause>,
    /// The breakpoints as the adapter last told of them (its `setBreakpoints` answers and its
    /// `breakpoint` events): `id`, `verified`, `source`, `line`, `message`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub breakpoints: Vec<Value>,
    /// Whether the adapter honours DAP VariablesArguments `start` and `count` (not shown: a
    /// fact of the adapter, for the `variables` tool).
    #[serde(skip)]
    pub pages_variables: bool,
    /// The session whose debuggee started this one's (a child process the adapter announced
    /// with `startDebugging` or debugpy's `debugpyAttach`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
}

impl Status {
    /// Its name in the state resource, without quotes: its serde form, so that the two never
    /// differ.
    pub fn name(self) -> String {
        match serde_json::to_value(self) {
            Ok(Value::String(name)) => name,
            // A unit variant serializes to its name: nothing else comes.
            _ => String::new(),
        }
    }
}

/// Why a session's `wait`, `resume` or `pause` has no state to answer with (the tool's
/// error); a status is shown as the state resource shows it, in quotes.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SessionError {
    /// The session's actor ended before it answered.
    #[error("the session ended")]
    Ended,
    /// The program did not stop within the wait's time limit, in seconds.
    #[error("the program did not stop within {0} s; it is still running (wait again, or pause it)")]
    StillRunning(u64),
    /// A resume of a thread that is not stopped.
    #[error("thread {thread} is not stopped (status \"{}\")", .status.name())]
    ThreadNotStopped { thread: i64, status: Status },
    /// A resume while no thread is stopped.
    #[error("the program is not stopped (status \"{}\")", .0.name())]
    NotStopped(Status),
    /// A pause of a thread that is stopped.
    #[error("thread {0} is stopped already")]
    ThreadStoppedAlready(i64),
    /// A pause while the program is not running.
    #[error("the program is not running (status \"{}\")", .0.name())]
    NotRunning(Status),
    /// The adapter refused the request, or did not answer it.
    #[error(transparent)]
    Dap(#[from] DapError),
}

impl State {
    /// Whether the debuggee is neither starting nor running: a `wait` ends.
    pub fn settled(&self) -> bool {
        !matches!(self.status, Status::Starting | Status::Running)
    }
}

/// The session's URIs: its state and its output.
pub fn state_uri(id: &str) -> String {
    format!("dap://sessions/{id}/state")
}

/// See [`state_uri`].
pub fn output_uri(id: &str) -> String {
    format!("dap://sessions/{id}/output")
}

/// The state now, and the adapter for requests.
#[derive(Message)]
#[rtype(result = "(State, Addr<Adapter>)")]
pub struct Snapshot;

/// The output tail.
#[derive(Message)]
#[rtype(result = "String")]
pub struct Output;

/// Waits until the debuggee is settled ([`State::settled`]), at most `limit`.
#[derive(Message)]
#[rtype(result = "Result<State, SessionError>")]
pub struct Wait {
    /// The time limit.
    pub limit: Duration,
}

/// Resumes a stopped thread (`continue`, `next`, `stepIn`, `stepOut`); with `wait`, answers
/// at the next settled state (at most `limit`). The answer names the thread resumed.
#[derive(Message)]
#[rtype(result = "Result<(State, i64), SessionError>")]
pub struct Resume {
    /// The DAP command.
    pub command: &'static str,
    /// The thread; by default the one that stopped last.
    pub thread: Option<i64>,
    /// Whether to wait for the next stop.
    pub wait: Option<Duration>,
}

/// How a session ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The debuggee ends: DAP `terminate` (it may clean up), then `disconnect` with
    /// `terminateDebuggee`.
    Terminate,
    /// The debuggee runs on: `disconnect` without `terminateDebuggee`.
    Detach,
}

/// A line of mcp-dap's own in the session's output (a child process it could not debug).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Note(pub String);

/// Ends the session, then the adapter's stop steps.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Finish(pub Ending);

/// Pauses `thread` and answers at the stop (at most `limit`).
#[derive(Message)]
#[rtype(result = "Result<State, SessionError>")]
pub struct Pause {
    /// The thread.
    pub thread: i64,
    /// The time limit.
    pub limit: Duration,
}

/// To the supervisor (`sessions`): starts a child session that a session's adapter asked for
/// (DAP's `startDebugging`, debugpy's `debugpyAttach`). The answer comes at once: `Ok` when a
/// session is being opened for it (its place taken), `Err` with the reason when none is
/// ([`NoChildSession::Full`]), so that the adapter's request can be refused and the child run without a
/// debugger. A session whose start fails later is closed, with a line in the parent's
/// output.
#[derive(Message)]
#[rtype(result = "Result<(), NoChildSession>")]
pub struct Child {
    /// The session that heard of the child.
    pub parent: String,
    /// The parent's adapter.
    pub adapter: AdapterDef,
    /// `attach` or `launch`.
    pub request: String,
    /// The child's configuration, the request's arguments.
    pub configuration: Value,
    /// The parent's `setBreakpoints` arguments, sent again in the child's configuration.
    pub breakpoints: Vec<Value>,
}

/// To the supervisor (`sessions`): a child session whose debuggee ended (DAP `exited` or
/// `terminated`, or its adapter connection closed): its place is free.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Ended(pub String);

/// A DAP `Breakpoint` in the state's form; `source` is used when the breakpoint names none.
pub fn breakpoint_entry(breakpoint: &Value, source: Option<&str>) -> Value {
    let path = breakpoint
        .get("source")
        .and_then(|s| s.get("path"))
        .and_then(Value::as_str)
        .or(source);
    let mut entry = json!({"id": breakpoint.get("id"), "verified": breakpoint.get("verified"),
        "source": path, "line": breakpoint.get("line")});
    if let Some(message) = breakpoint.get("message") {
        entry["message"] = message.clone();
    }
    entry
}

/// The actor.
pub struct Session {
    state: State,
    output: String,
    adapter: Addr<Adapter>,
    /// Where the resource updates go.
    server: Server,
    waiters: Vec<oneshot::Sender<State>>,
    /// Waits for the stop of one thread (a `pause` while another thread is stopped): each
    /// answers once its thread is stopped, or a stop names no thread, or the session ended.
    thread_waiters: Vec<(i64, oneshot::Sender<State>)>,
    initialized: Option<oneshot::Sender<()>>,
    /// Counts stops and resumes: the moment of each, so that a place fetched for a stop that
    /// a later resume or stop made old is not applied.
    stops: u64,
    /// The moment every thread last resumed.
    all_resumed_at: u64,
    /// The moment each thread last resumed, or last stopped by its own event.
    thread_moments: BTreeMap<i64, u64>,
    /// The threads that are stopped, by id (DAP's event model is per thread: `stopped` and
    /// `continued` name their thread, or all).
    stopped: BTreeMap<i64, ThreadStop>,
    /// The thread that stopped last, while it is stopped: the tools' default.
    focus: Option<i64>,
    /// Whether the next stop is the entry stop: the launch asked `stopOnEntry`, and the
    /// program has neither stopped nor been resumed since.
    entry_pending: bool,
    /// Where the child sessions the adapter asks for are started, and this session's adapter.
    children: Option<(Recipient<Child>, AdapterDef)>,
    /// Where a child session tells that its debuggee ended (its place is free then), until
    /// it has told.
    ended_to: Option<Recipient<Ended>>,
    /// The arguments of the last `setBreakpoints` the adapter accepted, by source path (none
    /// for a source cleared): what a child session's configuration sends again.
    breakpoint_requests: BTreeMap<String, Value>,
}

impl Session {
    /// A session of `id` over `adapter`.
    pub fn new(id: String, adapter: Addr<Adapter>, server: Server) -> Self {
        Self {
            state: State {
                session: id,
                status: Status::Starting,
                reason: None,
                adapter_reason: None,
                thread_id: None,
                top_frame: None,
                other_stopped_threads: Vec::new(),
                exit_code: None,
                cause: None,
                breakpoints: Vec::new(),
                pages_variables: true,
                parent: None,
            },
            output: String::new(),
            adapter,
            server,
            waiters: Vec::new(),
            thread_waiters: Vec::new(),
            initialized: None,
            stops: 0,
            all_resumed_at: 0,
            thread_moments: BTreeMap::new(),
            stopped: BTreeMap::new(),
            focus: None,
            entry_pending: false,
            children: None,
            ended_to: None,
            breakpoint_requests: BTreeMap::new(),
        }
    }

    /// The session as the child of `parent`.
    pub fn child_of(mut self, parent: Option<String>) -> Self {
        self.state.parent = parent;
        self
    }

    /// The session that hands the child sessions its adapter asks for (`startDebugging`,
    /// `debugpyAttach`) to `to`; `adapter` is its own adapter, which a child configuration
    /// without `connect` is started with. A child session tells `ended` once its debuggee
    /// ended.
    pub fn following(
        mut self,
        to: Recipient<Child>,
        ended: Recipient<Ended>,
        adapter: AdapterDef,
    ) -> Self {
        self.children = Some((to, adapter));
        self.ended_to = Some(ended);
        self
    }

    /// Hands a child session to the supervisor: `request` (`attach` or `launch`) with
    /// `configuration`. `room` hears whether a session opens for it (`Err` with the reason
    /// when none does); a child without one gets a line in this session's output, `fate`
    /// after its name (what becomes of it).
    fn child(
        &mut self,
        ctx: &mut Context<Self>,
        request: &str,
        configuration: Value,
        fate: &'static str,
        room: Option<oneshot::Sender<Result<(), NoChildSession>>>,
    ) {
        let Some((to, adapter)) = &self.children else {
            if let Some(room) = room {
                let _ = room.send(Err(NoChildSession::NotFollowed));
            }
            return;
        };
        let name = configuration["name"]
            .as_str()
            .unwrap_or("a child process")
            .to_owned();
        let asked = to.send(Child {
            parent: self.state.session.clone(),
            adapter: adapter.clone(),
            request: request.to_owned(),
            configuration,
            breakpoints: self.breakpoint_requests.values().cloned().collect(),
        });
        ctx.spawn(asked.into_actor(self).map(move |opened, act, _| {
            let opened = opened.unwrap_or(Err(NoChildSession::Ending));
            if let Err(reason) = &opened {
                act.append_output(&format!("mcp-dap: {name} {fate}: {reason}\n"));
            }
            if let Some(room) = room {
                let _ = room.send(opened);
            }
        }));
    }

    /// Tells the MCP server that the resource `uri` changed.
    fn notify(&self, uri: String) {
        self.server.notify(ListenEvent::ResourceUpdated { uri });
    }

    fn changed_state(&mut self) {
        self.notify(state_uri(&self.state.session));
        let ended = matches!(self.state.status, Status::Exited | Status::Terminated);
        let child = self.state.parent.is_some();
        if let Some(to) = self.ended_to.take_if(|_| ended && child) {
            to.do_send(Ended(self.state.session.clone()));
        }
        if self.state.settled() {
            for waiter in self.waiters.drain(..) {
                let _ = waiter.send(self.state.clone());
            }
        }
        let threadless_stop = self.state.status == Status::Stopped && self.stopped.is_empty();
        let every_waiter = ended || threadless_stop;
        let (answered, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.thread_waiters)
            .into_iter()
            .partition(|(thread, _)| every_waiter || self.stopped.contains_key(thread));
        self.thread_waiters = waiting;
        for (_, waiter) in answered {
            let _ = waiter.send(self.state.clone());
        }
    }

    fn append_output(&mut self, text: &str) {
        self.output.push_str(text);
        if self.output.len() > MAX_OUTPUT_TAIL_BYTES {
            let mut cut = self.output.len() - MAX_OUTPUT_TAIL_BYTES;
            while !self.output.is_char_boundary(cut) {
                cut += 1;
            }
            self.output.drain(..cut);
        }
        self.notify(output_uri(&self.state.session));
    }

    fn end(&mut self, ctx: &mut Context<Self>) {
        let adapter = self.adapter.clone();
        ctx.spawn(
            async move {
                let disconnect = adapter.send(Request {
                    command: "disconnect".into(),
                    arguments: Some(json!({"terminateDebuggee": true})),
                });
                let _ = tokio::time::timeout(DISCONNECT_TIME_LIMIT, disconnect).await;
                let _ = adapter.send(Stop).await;
            }
            .into_actor(self),
        );
    }
}

impl Actor for Session {
    type Context = Context<Self>;
}

impl Handler<AdapterNews> for Session {
    type Result = ();

    fn handle(&mut self, news: AdapterNews, ctx: &mut Context<Self>) {
        let event = match news {
            AdapterNews::Gone(cause) => {
                // After `exited` or `terminated` the adapter's end is the session's own; before
                // them it is a loss, and the state says why. The actor stays, so that the
                // last state and output can be read until the session is terminated.
                if !matches!(self.state.status, Status::Exited | Status::Terminated) {
                    self.state.status = Status::Terminated;
                    self.state.cause = Some(cause);
                    self.changed_state();
                }
                // A start that waits for `initialized` hears of the end.
                self.initialized = None;
                return;
            }
            AdapterNews::BreakpointsSet {
                source,
                arguments,
                body,
            } => {
                let cleared = arguments
                    .get("breakpoints")
                    .and_then(Value::as_array)
                    .is_none_or(Vec::is_empty);
                if cleared {
                    self.breakpoint_requests.remove(&source);
                } else {
                    self.breakpoint_requests.insert(source.clone(), arguments);
                }
                // The `setBreakpoints` answer replaces the source's breakpoints, in the order
                // the adapter wrote it and its events: a `breakpoint` event read after it is
                // the later word, and is applied after it.
                let set = body
                    .get("breakpoints")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|b| breakpoint_entry(b, Some(&source)));
                self.state
                    .breakpoints
                    .retain(|b| b["source"].as_str() != Some(source.as_str()));
                self.state.breakpoints.extend(set);
                self.changed_state();
                return;
            }
            AdapterNews::Event(event) => event,
            AdapterNews::StartDebugging(arguments, room) => {
                // DAP StartDebuggingRequestArguments: `request` and `configuration`.
                let request = arguments["request"].as_str().unwrap_or("attach").to_owned();
                let configuration = arguments
                    .get("configuration")
                    .cloned()
                    .unwrap_or(Value::Null);
                self.child(
                    ctx,
                    &request,
                    configuration,
                    "runs without a debugger",
                    Some(room),
                );
                return;
            }
        };
        let body = event.body.unwrap_or(Value::Null);
        match event.event.as_str() {
            "initialized" => {
                if let Some(initialized) = self.initialized.take() {
                    let _ = initialized.send(());
                }
            }
            "stopped" => {
                let body: StoppedBody = serde_json::from_value(body).unwrap_or_default();
                self.stopped(body, ctx);
            }
            "continued" => {
                let body: ContinuedBody = serde_json::from_value(body).unwrap_or_default();
                self.continued(body);
            }
            "output" => {
                if let Ok(output) = serde_json::from_value::<OutputBody>(body) {
                    // DAP OutputEvent: `telemetry` is not for the user.
                    if output.category.as_deref() != Some("telemetry") {
                        self.append_output(&output.output);
                    }
                }
            }
            "exited" => {
                if let Ok(exited) = serde_json::from_value::<ExitedBody>(body) {
                    self.state.exit_code = Some(exited.exit_code);
                }
                self.resumed(None);
                self.initialized = None;
                self.state.status = Status::Exited;
                self.changed_state();
            }
            "terminated" => {
                self.initialized = None;
                if self.state.status != Status::Exited {
                    self.state.status = Status::Terminated;
                }
                self.changed_state();
                self.end(ctx);
            }
            "breakpoint" => {
                // DAP BreakpointEvent: `reason` is `changed`, `new` or `removed`, and the
                // breakpoint is named by its `id`.
                let reason = body.get("reason").and_then(Value::as_str).unwrap_or("");
                let Some(breakpoint) = body.get("breakpoint") else {
                    return;
                };
                let id = breakpoint.get("id").cloned().unwrap_or(Value::Null);
                let known = self.state.breakpoints.iter().position(|b| b["id"] == id);
                let source = known
                    .and_then(|i| self.state.breakpoints[i]["source"].as_str())
                    .map(str::to_owned);
                let entry = breakpoint_entry(breakpoint, source.as_deref());
                match (reason, known) {
                    ("removed", Some(i)) => {
                        self.state.breakpoints.remove(i);
                    }
                    ("removed", None) => return,
                    (_, Some(i)) => self.state.breakpoints[i] = entry,
                    (_, None) => self.state.breakpoints.push(entry),
                }
                self.changed_state();
            }
            // debugpy's form of `startDebugging` (to a client without
            // `supportsStartDebuggingRequest`): its body is the child's attach
            // configuration, `connect` the adapter's listener for clients.
            // An event cannot be refused: a child that gets no session is not attached, and
            // debugpy holds it as it holds any child no client attaches to, until the
            // parent's `launch` session ends (`adapter/sessions.py` ends it then).
            "debugpyAttach" => self.child(
                ctx,
                "attach",
                body,
                "waits for a debugger until this session ends",
                None,
            ),
            // `thread`, `process`, `module` and the adapter's own events change neither
            // resource.
            _ => {}
        }
    }
}

impl Handler<Snapshot> for Session {
    type Result = MessageResult<Snapshot>;

    fn handle(&mut self, _: Snapshot, _: &mut Context<Self>) -> Self::Result {
        MessageResult((self.state.clone(), self.adapter.clone()))
    }
}

impl Handler<Output> for Session {
    type Result = MessageResult<Output>;

    fn handle(&mut self, _: Output, _: &mut Context<Self>) -> Self::Result {
        MessageResult(self.output.clone())
    }
}

/// Waits on `waiter` at most `limit`; the state of a session that ended meanwhile otherwise.
async fn settle(waiter: oneshot::Receiver<State>, limit: Duration) -> Result<State, SessionError> {
    match tokio::time::timeout(limit, waiter).await {
        Ok(Ok(state)) => Ok(state),
        Ok(Err(_)) => Err(SessionError::Ended),
        Err(_) => Err(SessionError::StillRunning(limit.as_secs())),
    }
}

impl Handler<Wait> for Session {
    type Result = ResponseFuture<Result<State, SessionError>>;

    fn handle(&mut self, wait: Wait, _: &mut Context<Self>) -> Self::Result {
        if self.state.settled() {
            let state = self.state.clone();
            return Box::pin(async move { Ok(state) });
        }
        let (waiter, settled) = oneshot::channel();
        self.waiters.push(waiter);
        Box::pin(settle(settled, wait.limit))
    }
}

impl Handler<Resume> for Session {
    type Result = ResponseFuture<Result<(State, i64), SessionError>>;

    fn handle(&mut self, resume: Resume, ctx: &mut Context<Self>) -> Self::Result {
        let thread = resume.thread.or(self.focus);
        let Some(thread) = thread.filter(|t| self.stopped.contains_key(t)) else {
            let status = self.state.status;
            let error = match resume.thread {
                Some(thread) => SessionError::ThreadNotStopped { thread, status },
                None => SessionError::NotStopped(status),
            };
            return Box::pin(async move { Err(error) });
        };
        // Every stopped thread resumes (DAP `continue`, `next`, `stepIn`, `stepOut` without
        // `singleThread`), unless the `continue` response says `allThreadsContinued: false`:
        // the others are then stopped still.
        let others: BTreeMap<i64, ThreadStop> = self
            .stopped
            .iter()
            .filter(|(t, _)| **t != thread)
            .map(|(t, s)| (*t, s.clone()))
            .collect();
        self.resumed(None);
        let resumed_at = self.stops;
        self.changed_state();
        let running = self.state.clone();
        let settled = resume.wait.map(|limit| {
            let (waiter, settled) = oneshot::channel();
            self.waiters.push(waiter);
            (settled, limit)
        });
        let request = self.adapter.send(Request {
            command: resume.command.into(),
            arguments: Some(json!({"threadId": thread})),
        });
        let me = ctx.address();
        Box::pin(async move {
            let answer = match request.await {
                Ok(Ok(answer)) => answer,
                Ok(Err(e)) => return Err(e.into()),
                Err(_) => return Err(SessionError::Ended),
            };
            let only_one = answer.get("allThreadsContinued") == Some(&Value::Bool(false));
            let still = only_one && !others.is_empty();
            if still {
                let _ = me.send(StillStopped { others, resumed_at }).await;
            }
            let state = match settled {
                Some((settled, limit)) => settle(settled, limit).await?,
                // The state the resume made: with the threads the adapter left stopped.
                None if still => me
                    .send(Snapshot)
                    .await
                    .map(|(state, _)| state)
                    .map_err(|_| SessionError::Ended)?,
                None => running,
            };
            Ok((state, thread))
        })
    }
}

impl Handler<Note> for Session {
    type Result = ();

    fn handle(&mut self, Note(line): Note, _: &mut Context<Self>) {
        self.append_output(&format!("mcp-dap: {line}\n"));
    }
}

impl Handler<Finish> for Session {
    type Result = ResponseFuture<()>;

    fn handle(&mut self, Finish(ending): Finish, _: &mut Context<Self>) -> Self::Result {
        let adapter = self.adapter.clone();
        let ended = matches!(self.state.status, Status::Exited | Status::Terminated);
        Box::pin(async move {
            if ending == Ending::Terminate && !ended {
                // An adapter without `supportsTerminateRequest` refuses it: the disconnect
                // below ends the debuggee then.
                let terminate = adapter.send(Request {
                    command: "terminate".into(),
                    arguments: None,
                });
                let _ = tokio::time::timeout(DISCONNECT_TIME_LIMIT, terminate).await;
            }
            let disconnect = adapter.send(Request {
                command: "disconnect".into(),
                arguments: Some(json!({"terminateDebuggee": ending == Ending::Terminate})),
            });
            let _ = tokio::time::timeout(DISCONNECT_TIME_LIMIT, disconnect).await;
            let _ = adapter.send(Stop).await;
        })
    }
}

impl Handler<Pause> for Session {
    type Result = ResponseFuture<Result<State, SessionError>>;

    fn handle(&mut self, pause: Pause, _: &mut Context<Self>) -> Self::Result {
        // A multithreaded program stops in one thread while the others run (DAP's event model
        // is per thread): a thread that runs can be paused then.
        let refusal = match self.state.status {
            Status::Running => None,
            Status::Stopped if self.stopped.contains_key(&pause.thread) => {
                Some(SessionError::ThreadStoppedAlready(pause.thread))
            }
            Status::Stopped if !self.stopped.is_empty() => None,
            status => Some(SessionError::NotRunning(status)),
        };
        if let Some(refusal) = refusal {
            return Box::pin(async move { Err(refusal) });
        }
        // While every thread runs, the first stop answers (an adapter may stop another
        // thread than the one asked); while one is stopped, only the stop of the paused one.
        let (waiter, settled) = oneshot::channel();
        if self.state.status == Status::Running {
            self.waiters.push(waiter);
        } else {
            self.thread_waiters.push((pause.thread, waiter));
        }
        let request = self.adapter.send(Request {
            command: "pause".into(),
            arguments: Some(json!({"threadId": pause.thread})),
        });
        Box::pin(async move {
            match request.await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => return Err(e.into()),
                Err(_) => return Err(SessionError::Ended),
            }
            settle(settled, pause.limit).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_is_named_as_the_state_resource_shows_it() {
        for (status, name) in [
            (Status::Starting, "starting"),
            (Status::Running, "running"),
            (Status::Stopped, "stopped"),
            (Status::Exited, "exited"),
            (Status::Terminated, "terminated"),
        ] {
            assert_eq!(status.name(), name);
            assert_eq!(serde_json::to_value(status).ok(), Some(json!(name)));
        }
    }

    #[test]
    fn a_refused_resume_or_pause_names_the_status_in_quotes() {
        for (error, text) in [
            (
                SessionError::ThreadNotStopped {
                    thread: 3,
                    status: Status::Running,
                },
                "thread 3 is not stopped (status \"running\")",
            ),
            (
                SessionError::NotStopped(Status::Exited),
                "the program is not stopped (status \"exited\")",
            ),
            (
                SessionError::ThreadStoppedAlready(7),
                "thread 7 is stopped already",
            ),
            (
                SessionError::NotRunning(Status::Starting),
                "the program is not running (status \"starting\")",
            ),
            (
                SessionError::StillRunning(5),
                "the program did not stop within 5 s; it is still running (wait again, or pause it)",
            ),
            (
                SessionError::Dap(DapError::Refused("no thread 9".into())),
                "no thread 9",
            ),
        ] {
            assert_eq!(error.to_string(), text);
        }
    }

    #[test]
    fn a_breakpoint_takes_the_requested_source_when_it_names_none() {
        let answered = json!({"id": 3, "verified": true, "line": 12,
            "source": {"path": "/w/p.py"}});
        assert_eq!(
            breakpoint_entry(&answered, Some("/other.py")),
            json!({"id": 3, "verified": true, "source": "/w/p.py", "line": 12})
        );
        let refused = json!({"verified": false, "message": "no code at line 99"});
        assert_eq!(
            breakpoint_entry(&refused, Some("/w/p.py")),
            json!({"id": null, "verified": false, "source": "/w/p.py", "line": null,
                "message": "no code at line 99"})
        );
    }
}
