//! The tools of `mcp-dap`: typed arguments (their input schemas are generated from these
//! types) and the handlers, which talk to the DAP side only by messages to the Sessions,
//! Session and Adapter actors; `variables` shows the variables of the tool of that name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use actix::Addr;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::dap::types::{Scope, StackFrame};
use mcp_bridge::server::{Outcome, ServerBuilder};

use crate::adapter::{Adapter, DapError, GoneCause, Request};
use crate::adapters::{self, LaunchWish, Registry};
use crate::session::{
    self, Ending, LaunchSpec, Pause, Resume, Session, Snapshot, Start, State, Wait,
};
use crate::sessions::{Close, Find, Open, Sessions};

use variables::{MAX_INLINE_REQUESTS, list_variables};

mod variables;

/// How long a step (`next`, `step_in`, `step_out`) and a launch that stops on entry wait for
/// the stop that ends them.
pub const STEP_TIME_LIMIT: Duration = Duration::from_secs(30);

/// The time limit of a `wait` without one.
pub const DEFAULT_WAIT_SECS: u64 = 30;

/// The longest `wait` a client may ask for, in seconds: a tool call that holds longer would
/// outlast most clients' own request time limits.
pub const MAX_WAIT_SECS: u64 = 300;

/// Frames of a `stack_trace` without `levels`, and the most it returns.
pub const DEFAULT_FRAMES: u32 = 20;
/// See [`DEFAULT_FRAMES`].
pub const MAX_FRAMES: u32 = 200;

/// Variables of a `variables` call without `max`, and the most it returns.
pub const DEFAULT_VARIABLES: usize = 100;
/// See [`DEFAULT_VARIABLES`].
pub const MAX_VARIABLES: usize = 1000;

/// The most a `variables` result carries, in bytes of its JSON: a page stops before the
/// variable that would pass it, and `next` says where the following page starts.
pub const MAX_VARIABLES_RESULT_BYTES: usize = 64 * 1024;

/// The largest source file whose lines a stack trace quotes, in bytes.
pub const MAX_SOURCE_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// `launch`: starts a program under a debug adapter.
#[derive(Deserialize, JsonSchema)]
pub struct LaunchArgs {
    /// The program (a Python file for debugpy).
    program: String,
    /// Its arguments.
    #[serde(default)]
    args: Vec<String>,
    /// Its working directory (default: the server's).
    cwd: Option<String>,
    /// Environment variables added to the program's.
    #[serde(default)]
    env: BTreeMap<String, String>,
    /// The adapter: `debugpy` (`python3 -m debugpy.adapter` on stdio; also `python`), `lldb`
    /// (lldb-dap, for programs built with debug info; also `c`, `cpp`, `rust`), or a name
    /// given with `--adapter`. Default: from the program, debugpy for a `.py` file, lldb for
    /// an executable.
    adapter: Option<String>,
    /// Adapter-specific `launch` arguments, merged over the ones built from the fields above.
    launch_arguments: Option<Map<String, Value>>,
    /// Stop at the program's first line (default true), so that breakpoints can be set before
    /// it runs.
    stop_on_entry: Option<bool>,
    /// Debug the child processes the program starts (debugpy: `multiprocessing`, `os.fork`,
    /// `subprocess` running python) as sessions of their own (default true); with false they
    /// run without a debugger.
    follow_children: Option<bool>,
}

/// `attach`: debugs a program that runs already, through the DAP server it listens with.
#[derive(Deserialize, JsonSchema)]
pub struct AttachArgs {
    /// The port on 127.0.0.1 where the program's debug adapter listens (`debugpy.listen()`,
    /// `python -m debugpy --listen PORT`).
    port: u16,
    /// The adapter's kind, for its `attach` arguments: `debugpy` (the default), `lldb`, or
    /// another name.
    adapter: Option<String>,
    /// Adapter-specific `attach` arguments.
    attach_arguments: Option<Map<String, Value>>,
}

/// A tool that resumes a thread: `continue`, `next`, `step_in`, `step_out`.
#[derive(Deserialize, JsonSchema)]
pub struct ThreadArgs {
    /// The session id that `launch` returned.
    session: String,
    /// The thread (default: the thread that stopped last; the result's `resumed_thread_id`
    /// says which).
    thread_id: Option<i64>,
}

/// A tool that names a session only.
#[derive(Deserialize, JsonSchema)]
pub struct SessionArgs {
    /// The session id that `launch` returned.
    session: String,
}

/// `set_breakpoints`: replaces the breakpoints of one source file.
#[derive(Deserialize, JsonSchema)]
pub struct BreakpointArgs {
    /// The session id.
    session: String,
    /// The source file's path.
    source: String,
    /// The lines (1-based, DAP `linesStartAt1`); an empty list clears the file's
    /// breakpoints. A line below 1 is invalid arguments, never sent to the adapter.
    lines: Vec<i64>,
    /// An expression: the breakpoints stop only where it is true.
    condition: Option<String>,
    /// How many hits to let pass: the adapter's hit condition (a count such as `3` for the
    /// third hit, or debugpy's `>= 3`, `% 2`).
    hit_condition: Option<String>,
}

/// `pause`: stops a thread that runs (another may be stopped already).
#[derive(Deserialize, JsonSchema)]
pub struct PauseArgs {
    /// The session id.
    session: String,
    /// The thread (default: the first thread that runs).
    thread_id: Option<i64>,
}

/// `scopes`: the scopes of a frame.
#[derive(Deserialize, JsonSchema)]
pub struct ScopesArgs {
    /// The session id.
    session: String,
    /// The frame (default: the top frame of the stop).
    frame_id: Option<i64>,
}

/// `stack_trace`: the stopped thread's frames.
#[derive(Deserialize, JsonSchema)]
pub struct StackArgs {
    /// The session id.
    session: String,
    /// How many frames (default 20, at most 200).
    levels: Option<u32>,
    /// The thread (default: the thread that stopped last; the result's `threadId` says
    /// which).
    thread_id: Option<i64>,
}

/// `variables`: the scopes of a frame and their variables, or the children of one variable.
#[derive(Deserialize, JsonSchema)]
pub struct VariablesArgs {
    /// The session id.
    session: String,
    /// The frame (default: the top frame of the stop).
    frame_id: Option<i64>,
    /// Expand this variable (its `variablesReference`) instead of listing the scopes.
    variables_reference: Option<i64>,
    /// The first variable returned, 0-based (default 0): with `count`, one page of a large
    /// variable.
    start: Option<usize>,
    /// The most variables returned from `start` (default 100, 1 to 1000); `more` in the
    /// result says whether others follow, and `next` where they start.
    count: Option<usize>,
    /// Only the `indexed` children (an array's elements) or only the `named` ones (DAP
    /// VariablesArguments `filter`; default both).
    filter: Option<VariablesFilter>,
}

/// DAP VariablesArguments `filter`.
#[derive(Deserialize, JsonSchema, Clone, Copy)]
#[serde(rename_all = "lowercase")]
pub enum VariablesFilter {
    /// An array's elements.
    Indexed,
    /// The named children.
    Named,
}

impl VariablesFilter {
    fn as_str(self) -> &'static str {
        match self {
            Self::Indexed => "indexed",
            Self::Named => "named",
        }
    }
}

/// `evaluate`: an expression in a frame.
#[derive(Deserialize, JsonSchema)]
pub struct EvaluateArgs {
    /// The session id.
    session: String,
    /// The expression.
    expression: String,
    /// The frame (default: the top frame of the stop).
    frame_id: Option<i64>,
    /// The DAP evaluate context: `watch` (the default: the expression's value), `repl` (the
    /// adapter's console: statements, lldb commands), `hover`.
    context: Option<String>,
}

/// `wait`: until the program stops, exits or ends.
#[derive(Deserialize, JsonSchema)]
pub struct WaitArgs {
    /// The session id.
    session: String,
    /// The time limit in seconds (default 30, at most 300).
    timeout_secs: Option<u64>,
}

/// A result of one JSON value: its text, and the value as `structuredContent`.
fn json_result(value: Value) -> Outcome {
    Outcome::Complete(json!({
        "content": [{"type": "text", "text": value.to_string()}],
        "structuredContent": value,
    }))
}

fn state_value(state: &State) -> Value {
    serde_json::to_value(state).unwrap_or(Value::Null)
}

fn absolute(path: &str, base: Option<&Path>) -> PathBuf {
    let path = PathBuf::from(path);
    if path.is_absolute() {
        return path;
    }
    match base {
        Some(base) => base.join(path),
        None => std::env::current_dir()
            .map(|d| d.join(&path))
            .unwrap_or(path),
    }
}

/// The Session of `id`, or the tool error that says it is not open.
async fn find(sessions: &Addr<Sessions>, id: &str) -> Result<Addr<Session>, Outcome> {
    match sessions.send(Find(id.to_owned())).await {
        Ok(Some(session)) => Ok(session),
        _ => Err(Outcome::tool_error(format!(
            "no session {} is open (it was terminated, or never launched)",
            crate::echo::echoed(id)
        ))),
    }
}

async fn snapshot(session: &Addr<Session>) -> Result<(State, Addr<Adapter>), Outcome> {
    session
        .send(Snapshot)
        .await
        .map_err(|_| Outcome::tool_error("the session ended"))
}

/// One DAP request; a refusal is a tool error with the adapter's words.
async fn dap(adapter: &Addr<Adapter>, command: &str, arguments: Value) -> Result<Value, Outcome> {
    let request = Request {
        command: command.into(),
        arguments: Some(arguments),
    };
    match adapter.send(request).await {
        Ok(Ok(body)) => Ok(body),
        Ok(Err(e)) => Err(Outcome::tool_error(format!("{command}: {e}"))),
        Err(_) => Err(Outcome::tool_error("the session ended")),
    }
}

/// The frame a tool means: the one given, or the top frame of the stop.
fn frame_of(state: &State, given: Option<i64>) -> Result<i64, Outcome> {
    given
        .or_else(|| state.top_frame.as_ref()?.get("frameId")?.as_i64())
        .ok_or_else(|| Outcome::tool_error("the program is not stopped: no frame to read"))
}

fn either(result: Result<Outcome, Outcome>) -> Outcome {
    result.unwrap_or_else(|e| e)
}

async fn launch(
    sessions: Addr<Sessions>,
    registry: &Registry,
    args: LaunchArgs,
) -> Result<Outcome, Outcome> {
    let cwd = args.cwd.as_deref().map(|c| absolute(c, None));
    let program = absolute(&args.program, cwd.as_deref());
    let name = match args.adapter.as_deref() {
        Some(name) => name,
        None => adapters::adapter_for_program(&program, registry)
            .map_err(|e| Outcome::tool_error(e.to_string()))?,
    };
    let def = registry
        .resolve(name)
        .map_err(|e| Outcome::tool_error(e.to_string()))?;
    let stop_on_entry = args.stop_on_entry.unwrap_or(true);
    let arguments = adapters::launch_arguments(
        def.flavor,
        &LaunchWish {
            program: &program,
            args: &args.args,
            cwd: cwd.as_deref(),
            env: &args.env,
            stop_on_entry,
            follow_children: args.follow_children.unwrap_or(true),
            extra: args.launch_arguments.as_ref(),
        },
    );
    let adapter_id = def.adapter_id.clone();
    let hint_def = def.clone();
    let broken = |cause: &GoneCause| adapters::broken_hint(name, &hint_def, &cause.to_string());
    let open = Open {
        adapter: def,
        parent: None,
    };
    let (id, session) = match sessions.send(open).await {
        Ok(Ok(opened)) => opened,
        Ok(Err(e)) => {
            return Err(Outcome::tool_error(format!(
                "cannot start the adapter: {e}"
            )));
        }
        Err(_) => return Err(Outcome::tool_error("the server is shutting down")),
    };
    let spec = LaunchSpec {
        request: "launch",
        arguments,
        adapter_id,
        breakpoints: Vec::new(),
    };
    let started = session.send(Start(spec)).await;
    let failure = match started {
        Ok(Ok(())) => None,
        Ok(Err(DapError::Broken(cause))) => Some(broken(&cause)),
        Ok(Err(e)) => Some(e.to_string()),
        Err(_) => Some("the session ended".into()),
    };
    if let Some(failure) = failure {
        let _ = sessions.send(Close(id, Ending::Terminate)).await;
        return Err(Outcome::tool_error(format!("launch failed: {failure}")));
    }
    let state = if stop_on_entry {
        session.send(Wait {
            limit: STEP_TIME_LIMIT,
        })
    } else {
        session.send(Wait {
            limit: Duration::ZERO,
        })
    };
    let state = match state.await {
        Ok(Ok(state)) => state_value(&state),
        Ok(Err(_)) => snapshot(&session).await.map(|(s, _)| state_value(&s))?,
        Err(_) => return Err(Outcome::tool_error("the session ended")),
    };
    Ok(json_result(json!({
        "session": id, "state": state,
        "resources": [session::state_uri(&id), session::output_uri(&id)],
    })))
}

async fn attach(sessions: Addr<Sessions>, args: AttachArgs) -> Result<Outcome, Outcome> {
    let def = adapters::listening(args.adapter.as_deref(), args.port);
    let adapter_id = def.adapter_id.clone();
    let mut arguments = json!({"request": "attach"});
    if def.flavor == adapters::Flavor::Debugpy {
        arguments["justMyCode"] = json!(true);
    }
    if let (Some(extra), Some(out)) = (&args.attach_arguments, arguments.as_object_mut()) {
        for (key, value) in extra {
            out.insert(key.clone(), value.clone());
        }
    }
    let open = Open {
        adapter: def,
        parent: None,
    };
    let (id, session) = match sessions.send(open).await {
        Ok(Ok(opened)) => opened,
        Ok(Err(e)) => return Err(Outcome::tool_error(format!("cannot attach: {e}"))),
        Err(_) => return Err(Outcome::tool_error("the server is shutting down")),
    };
    let spec = LaunchSpec {
        request: "attach",
        arguments,
        adapter_id,
        breakpoints: Vec::new(),
    };
    let failure = match session.send(Start(spec)).await {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e.to_string()),
        Err(_) => Some("the session ended".into()),
    };
    if let Some(failure) = failure {
        let _ = sessions.send(Close(id, Ending::Detach)).await;
        return Err(Outcome::tool_error(format!("attach failed: {failure}")));
    }
    let (state, _) = snapshot(&session).await?;
    Ok(json_result(json!({
        "session": id, "state": state_value(&state),
        "resources": [session::state_uri(&id), session::output_uri(&id)],
    })))
}

async fn set_breakpoints(
    sessions: Addr<Sessions>,
    args: BreakpointArgs,
) -> Result<Outcome, Outcome> {
    // DAP lines start at 1 (`linesStartAt1` of `initialize`): a line below is the tools'
    // invalid-arguments error, not a request the adapter answers as it will.
    if let Some(line) = args.lines.iter().find(|line| **line < 1) {
        return Err(Outcome::tool_error(format!(
            "Invalid arguments: lines: {line} is not a line (lines start at 1)"
        )));
    }
    let session = find(&sessions, &args.session).await?;
    let (_, adapter) = snapshot(&session).await?;
    let path = absolute(&args.source, None);
    let breakpoints: Vec<Value> = args
        .lines
        .iter()
        .map(|line| {
            let mut breakpoint = json!({"line": line});
            if let Some(condition) = &args.condition {
                breakpoint["condition"] = json!(condition);
            }
            if let Some(hits) = &args.hit_condition {
                breakpoint["hitCondition"] = json!(hits);
            }
            breakpoint
        })
        .collect();
    let body = dap(
        &adapter,
        "setBreakpoints",
        json!({"source": {"path": path}, "breakpoints": breakpoints}),
    )
    .await?;
    let source = path.to_string_lossy().into_owned();
    let set: Vec<Value> = body
        .get("breakpoints")
        .and_then(Value::as_array)
        .map(|all| {
            all.iter()
                .map(|b| session::breakpoint_entry(b, Some(&source)))
                .collect()
        })
        .unwrap_or_default();
    // The Adapter told the Session of this answer itself, in its order among the events.
    Ok(json_result(json!({"source": source, "breakpoints": set})))
}

async fn resume(
    sessions: Addr<Sessions>,
    args: ThreadArgs,
    command: &'static str,
    wait: Option<Duration>,
) -> Result<Outcome, Outcome> {
    let session = find(&sessions, &args.session).await?;
    let resume = Resume {
        command,
        thread: args.thread_id,
        wait,
    };
    match session.send(resume).await {
        Ok(Ok((state, thread))) => {
            let mut value = state_value(&state);
            // The breakpoints are the state resource's and `set_breakpoints`' to tell: a
            // resume answer with each of 3000 breakpoints is 190 KB for one step.
            if let Some(fields) = value.as_object_mut() {
                fields.remove("breakpoints");
            }
            value["resumed_thread_id"] = json!(thread);
            Ok(json_result(value))
        }
        Ok(Err(e)) => Err(Outcome::tool_error(e.to_string())),
        Err(_) => Err(Outcome::tool_error("the session ended")),
    }
}

/// Line `line` (1-based) of `path`, for a stack trace; `None` for a file too large or not
/// readable.
async fn source_line(path: &str, line: i64) -> Option<String> {
    let path = path.to_owned();
    // A file read blocks: off the server's thread (tokio's blocking pool).
    let text = tokio::task::spawn_blocking(move || {
        let meta = std::fs::metadata(&path).ok()?;
        if meta.len() > MAX_SOURCE_FILE_BYTES {
            return None;
        }
        std::fs::read(&path).ok()
    })
    .await
    .ok()??;
    let index = usize::try_from(line.checked_sub(1)?).ok()?;
    let text = String::from_utf8_lossy(&text);
    text.lines().nth(index).map(str::to_owned)
}

async fn stack_trace(sessions: Addr<Sessions>, args: StackArgs) -> Result<Outcome, Outcome> {
    let session = find(&sessions, &args.session).await?;
    let (state, adapter) = snapshot(&session).await?;
    let Some(thread) = args
        .thread_id
        .or(state.thread_id)
        .filter(|_| state.status == session::Status::Stopped)
    else {
        return Err(Outcome::tool_error(
            "the program is not stopped: no stack to read",
        ));
    };
    let levels = args.levels.unwrap_or(DEFAULT_FRAMES).min(MAX_FRAMES);
    let body = dap(
        &adapter,
        "stackTrace",
        json!({"threadId": thread, "startFrame": 0, "levels": levels}),
    )
    .await?;
    let raw = body
        .get("stackFrames")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut frames = Vec::new();
    for frame in raw {
        let Ok(frame) = serde_json::from_value::<StackFrame>(frame) else {
            continue;
        };
        let file = frame.source.and_then(|s| s.path).unwrap_or_default();
        let text = source_line(&file, frame.line).await;
        frames.push(json!({"frameId": frame.id, "name": frame.name,
            "at": format!("{file}:{}", frame.line), "file": file, "line": frame.line,
            "text": text}));
    }
    Ok(json_result(json!({"threadId": thread, "frames": frames})))
}

/// The scopes of `frame` as the adapter gives them.
async fn frame_scopes(adapter: &Addr<Adapter>, frame: i64) -> Result<Vec<Scope>, Outcome> {
    let body = dap(adapter, "scopes", json!({"frameId": frame})).await?;
    Ok(body
        .get("scopes")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|scope| serde_json::from_value::<Scope>(scope).ok())
        .collect())
}

async fn variables(sessions: Addr<Sessions>, args: VariablesArgs) -> Result<Outcome, Outcome> {
    let session = find(&sessions, &args.session).await?;
    let (state, adapter) = snapshot(&session).await?;
    let start = args.start.unwrap_or(0);
    // A page of none would name itself as the next page for ever.
    let count = args
        .count
        .unwrap_or(DEFAULT_VARIABLES)
        .clamp(1, MAX_VARIABLES);
    let pages = state.pages_variables;
    if let Some(reference) = args.variables_reference {
        let mut inline_requests = MAX_INLINE_REQUESTS;
        let page = list_variables(
            &adapter,
            reference,
            start,
            count,
            pages,
            args.filter,
            MAX_VARIABLES_RESULT_BYTES,
            &mut inline_requests,
        )
        .await?;
        return Ok(json_result(page));
    }
    let frame = frame_of(&state, args.frame_id)?;
    let mut out = Vec::new();
    let mut used = 0;
    let mut inline_requests = MAX_INLINE_REQUESTS;
    for scope in frame_scopes(&adapter, frame).await? {
        // A scope the adapter calls expensive (registers, globals of a large module) is
        // named, not read: `variables_reference` reads it.
        if scope.expensive {
            out.push(
                json!({"name": scope.name, "variablesReference": scope.variables_reference,
                "expensive": true}),
            );
            continue;
        }
        // The scopes share the result's bound: a later scope gets what the earlier left.
        let budget = MAX_VARIABLES_RESULT_BYTES.saturating_sub(used);
        let mut page = list_variables(
            &adapter,
            scope.variables_reference,
            start,
            count,
            pages,
            args.filter,
            budget,
            &mut inline_requests,
        )
        .await?;
        used += page.to_string().len();
        page["name"] = json!(scope.name);
        page["variablesReference"] = json!(scope.variables_reference);
        out.push(page);
    }
    Ok(json_result(json!({"frameId": frame, "scopes": out})))
}

async fn scopes(sessions: Addr<Sessions>, args: ScopesArgs) -> Result<Outcome, Outcome> {
    let session = find(&sessions, &args.session).await?;
    let (state, adapter) = snapshot(&session).await?;
    let frame = frame_of(&state, args.frame_id)?;
    let listed: Vec<Value> = frame_scopes(&adapter, frame)
        .await?
        .into_iter()
        .map(|scope| {
            json!({"name": scope.name, "variablesReference": scope.variables_reference,
                "namedVariables": scope.named_variables,
                "indexedVariables": scope.indexed_variables, "expensive": scope.expensive})
        })
        .collect();
    Ok(json_result(json!({"frameId": frame, "scopes": listed})))
}

async fn threads(sessions: Addr<Sessions>, args: SessionArgs) -> Result<Outcome, Outcome> {
    let session = find(&sessions, &args.session).await?;
    let (_, adapter) = snapshot(&session).await?;
    let body = dap(&adapter, "threads", json!({})).await?;
    let listed: Vec<Value> = body
        .get("threads")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|t| json!({"id": t.get("id"), "name": t.get("name")}))
        .collect();
    Ok(json_result(json!({"threads": listed})))
}

async fn pause(sessions: Addr<Sessions>, args: PauseArgs) -> Result<Outcome, Outcome> {
    let session = find(&sessions, &args.session).await?;
    let (state, adapter) = snapshot(&session).await?;
    // While a thread is stopped, the default is the first thread that runs.
    let stopped: Vec<i64> = state
        .thread_id
        .into_iter()
        .chain(
            state
                .other_stopped_threads
                .iter()
                .filter_map(|t| t["thread_id"].as_i64()),
        )
        .collect();
    let thread = match args.thread_id {
        Some(thread) => thread,
        None => {
            let body = dap(&adapter, "threads", json!({})).await?;
            let ids: Vec<i64> = body
                .get("threads")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|t| t.get("id").and_then(Value::as_i64))
                .collect();
            match ids.iter().find(|id| !stopped.contains(id)) {
                Some(id) => *id,
                None if ids.is_empty() => {
                    return Err(Outcome::tool_error("the program has no thread to pause"));
                }
                None => {
                    return Err(Outcome::tool_error(format!(
                        "the program is not running (status \"{}\")",
                        state.status.name()
                    )));
                }
            }
        }
    };
    let paused = session.send(Pause {
        thread,
        limit: STEP_TIME_LIMIT,
    });
    match paused.await {
        Ok(Ok(state)) => Ok(json_result(state_value(&state))),
        Ok(Err(e)) => Err(Outcome::tool_error(e.to_string())),
        Err(_) => Err(Outcome::tool_error("the session ended")),
    }
}

async fn evaluate(sessions: Addr<Sessions>, args: EvaluateArgs) -> Result<Outcome, Outcome> {
    let session = find(&sessions, &args.session).await?;
    let (state, adapter) = snapshot(&session).await?;
    let frame = frame_of(&state, args.frame_id)?;
    let body = dap(
        &adapter,
        "evaluate",
        json!({"expression": args.expression, "frameId": frame,
            "context": args.context.as_deref().unwrap_or("watch")}),
    )
    .await?;
    Ok(json_result(
        json!({"result": body.get("result"), "type": body.get("type"),
        "variablesReference": body.get("variablesReference")}),
    ))
}

async fn wait(sessions: Addr<Sessions>, args: WaitArgs) -> Result<Outcome, Outcome> {
    let session = find(&sessions, &args.session).await?;
    let secs = args
        .timeout_secs
        .unwrap_or(DEFAULT_WAIT_SECS)
        .min(MAX_WAIT_SECS);
    match session
        .send(Wait {
            limit: Duration::from_secs(secs),
        })
        .await
    {
        Ok(Ok(state)) => Ok(json_result(state_value(&state))),
        Ok(Err(e)) => Err(Outcome::tool_error(e.to_string())),
        Err(_) => Err(Outcome::tool_error("the session ended")),
    }
}

/// `terminate` (the debuggee ends) and `disconnect` (it runs on): the session is forgotten.
async fn end(
    sessions: Addr<Sessions>,
    args: SessionArgs,
    ending: Ending,
) -> Result<Outcome, Outcome> {
    let session = find(&sessions, &args.session).await?;
    let (state, _) = snapshot(&session).await?;
    let _ = sessions.send(Close(args.session.clone(), ending)).await;
    let verb = match ending {
        Ending::Terminate => "terminated",
        Ending::Detach => "disconnected",
    };
    Ok(json_result(
        json!({verb: args.session, "last_state": state_value(&state)}),
    ))
}

/// Registers every tool on `builder`, in the order `tools/list` shows them.
pub fn register(
    builder: ServerBuilder,
    sessions: &Addr<Sessions>,
    registry: Arc<Registry>,
) -> ServerBuilder {
    let builder = tool(builder, sessions, "launch", move |s, args: LaunchArgs| {
        let registry = registry.clone();
        async move { launch(s, &registry, args).await }
    });
    let builder = tool(builder, sessions, "attach", attach);
    let mut builder = tool(builder, sessions, "set_breakpoints", set_breakpoints);
    let steps: [(&str, &'static str, Option<Duration>); 4] = [
        ("continue", "continue", None),
        ("next", "next", Some(STEP_TIME_LIMIT)),
        ("step_in", "stepIn", Some(STEP_TIME_LIMIT)),
        ("step_out", "stepOut", Some(STEP_TIME_LIMIT)),
    ];
    for (name, command, wait) in steps {
        builder = tool(builder, sessions, name, move |s, args: ThreadArgs| {
            resume(s, args, command, wait)
        });
    }
    let builder = tool(builder, sessions, "stack_trace", stack_trace);
    let builder = tool(builder, sessions, "variables", variables);
    let builder = tool(builder, sessions, "evaluate", evaluate);
    let builder = tool(builder, sessions, "wait", wait);
    let builder = tool(builder, sessions, "scopes", scopes);
    let builder = tool(builder, sessions, "threads", threads);
    let builder = tool(builder, sessions, "pause", pause);
    let builder = tool(builder, sessions, "terminate", |s, args: SessionArgs| {
        end(s, args, Ending::Terminate)
    });
    tool(builder, sessions, "disconnect", |s, args: SessionArgs| {
        end(s, args, Ending::Detach)
    })
}

/// Registers the typed tool `name`, whose `handler` gets the Sessions supervisor and the
/// tool's arguments; its error is the tool's error result.
fn tool<A, H, F>(
    builder: ServerBuilder,
    sessions: &Addr<Sessions>,
    name: &str,
    handler: H,
) -> ServerBuilder
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    H: Fn(Addr<Sessions>, A) -> F + Send + Sync + 'static,
    F: Future<Output = Result<Outcome, Outcome>> + Send + 'static,
{
    let sessions = sessions.clone();
    builder.typed_tool(name, move |args: A, _| {
        let result = handler(sessions.clone(), args);
        async move { either(result.await) }
    })
}
