//! The tools of `mcp-dap`: typed arguments (their input schemas are generated from these
//! types) and the handlers, which talk to the DAP side only by messages to the Sessions,
//! Session and Adapter actors.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use actix::Addr;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use mcp_bridge::dap::types::{Scope, StackFrame, Variable};
use mcp_bridge::server::{Outcome, ServerBuilder};

use crate::adapter::{Adapter, Request};
use crate::session::{self, LaunchSpec, Resume, Session, Snapshot, Start, State, Wait};
use crate::sessions::{Close, Find, Open, Sessions};

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
    /// The adapter: `debugpy` (the default: `python3 -m debugpy.adapter` on stdio).
    adapter: Option<String>,
    /// Stop at the program's first line (default true), so that breakpoints can be set before
    /// it runs.
    stop_on_entry: Option<bool>,
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
    /// The lines (1-based); an empty list clears the file's breakpoints.
    lines: Vec<i64>,
    /// An expression: the breakpoints stop only where it is true.
    condition: Option<String>,
}

/// `stack_trace`: the stopped thread's frames.
#[derive(Deserialize, JsonSchema)]
pub struct StackArgs {
    /// The session id.
    session: String,
    /// How many frames (default 20, at most 200).
    levels: Option<u32>,
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
    /// The most variables returned (default 100, at most 1000).
    max: Option<usize>,
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

/// The adapter command of an adapter name.
fn adapter_command(name: &str) -> Option<(OsString, Vec<OsString>, &'static str)> {
    match name {
        // debugpy's adapter speaks DAP on its stdio when started without --port.
        "debugpy" => Some((
            "python3".into(),
            vec!["-m".into(), "debugpy.adapter".into()],
            "debugpy",
        )),
        _ => None,
    }
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
            "no session {id:?} is open (it was terminated, or never launched)"
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

async fn launch(sessions: Addr<Sessions>, args: LaunchArgs) -> Result<Outcome, Outcome> {
    let name = args.adapter.as_deref().unwrap_or("debugpy");
    let Some((command, command_args, adapter_id)) = adapter_command(name) else {
        return Err(Outcome::tool_error(format!(
            "unknown adapter {name:?}; the adapters built in: debugpy"
        )));
    };
    let cwd = args.cwd.as_deref().map(|c| absolute(c, None));
    let program = absolute(&args.program, cwd.as_deref());
    let stop_on_entry = args.stop_on_entry.unwrap_or(true);
    let open = Open {
        command,
        args: command_args,
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
    let mut arguments = json!({
        "request": "launch", "program": program, "args": args.args,
        "stopOnEntry": stop_on_entry, "console": "internalConsole", "justMyCode": true,
    });
    if let Some(cwd) = &cwd {
        arguments["cwd"] = json!(cwd);
    }
    let spec = LaunchSpec {
        arguments,
        adapter_id: adapter_id.into(),
    };
    let started = session.send(Start(spec)).await;
    let failure = match started {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e.to_string()),
        Err(_) => Some("the session ended".into()),
    };
    if let Some(failure) = failure {
        let _ = sessions.send(Close(id)).await;
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

async fn set_breakpoints(
    sessions: Addr<Sessions>,
    args: BreakpointArgs,
) -> Result<Outcome, Outcome> {
    let session = find(&sessions, &args.session).await?;
    let (_, adapter) = snapshot(&session).await?;
    let path = absolute(&args.source, None);
    let breakpoints: Vec<Value> = args
        .lines
        .iter()
        .map(|line| match &args.condition {
            Some(condition) => json!({"line": line, "condition": condition}),
            None => json!({"line": line}),
        })
        .collect();
    let body = dap(
        &adapter,
        "setBreakpoints",
        json!({"source": {"path": path}, "breakpoints": breakpoints}),
    )
    .await?;
    let set: Vec<Value> = body
        .get("breakpoints")
        .and_then(Value::as_array)
        .map(|all| {
            all.iter()
                .map(|b| {
                    json!({"verified": b.get("verified"), "line": b.get("line"),
                    "message": b.get("message")})
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(json_result(json!({"source": path, "breakpoints": set})))
}

async fn resume(
    sessions: Addr<Sessions>,
    args: SessionArgs,
    command: &'static str,
    wait: Option<Duration>,
) -> Result<Outcome, Outcome> {
    let session = find(&sessions, &args.session).await?;
    match session.send(Resume { command, wait }).await {
        Ok(Ok(state)) => Ok(json_result(state_value(&state))),
        Ok(Err(e)) => Err(Outcome::tool_error(e)),
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
    let Some(thread) = state
        .thread_id
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

fn variable_value(variable: &Variable) -> Value {
    json!({"name": variable.name, "value": variable.value, "type": variable.type_name,
        "variablesReference": variable.variables_reference})
}

/// The variables of one reference, at most `max` of them, and whether some were left out.
async fn list_variables(
    adapter: &Addr<Adapter>,
    reference: i64,
    max: usize,
) -> Result<(Vec<Value>, bool), Outcome> {
    let body = dap(
        adapter,
        "variables",
        json!({"variablesReference": reference}),
    )
    .await?;
    let all = body
        .get("variables")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let cut = all.len() > max;
    let listed = all
        .into_iter()
        .take(max)
        .filter_map(|v| serde_json::from_value::<Variable>(v).ok())
        .map(|v| variable_value(&v))
        .collect();
    Ok((listed, cut))
}

async fn variables(sessions: Addr<Sessions>, args: VariablesArgs) -> Result<Outcome, Outcome> {
    let session = find(&sessions, &args.session).await?;
    let (state, adapter) = snapshot(&session).await?;
    let max = args.max.unwrap_or(DEFAULT_VARIABLES).min(MAX_VARIABLES);
    if let Some(reference) = args.variables_reference {
        let (listed, cut) = list_variables(&adapter, reference, max).await?;
        return Ok(json_result(json!({"variables": listed, "truncated": cut})));
    }
    let frame = frame_of(&state, args.frame_id)?;
    let body = dap(&adapter, "scopes", json!({"frameId": frame})).await?;
    let scopes = body
        .get("scopes")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut out = Vec::new();
    let mut left = max;
    for scope in scopes {
        let Ok(scope) = serde_json::from_value::<Scope>(scope) else {
            continue;
        };
        let (listed, cut) = list_variables(&adapter, scope.variables_reference, left).await?;
        left -= listed.len();
        out.push(
            json!({"name": scope.name, "variablesReference": scope.variables_reference,
            "variables": listed, "truncated": cut}),
        );
    }
    Ok(json_result(json!({"frameId": frame, "scopes": out})))
}

async fn evaluate(sessions: Addr<Sessions>, args: EvaluateArgs) -> Result<Outcome, Outcome> {
    let session = find(&sessions, &args.session).await?;
    let (state, adapter) = snapshot(&session).await?;
    let frame = frame_of(&state, args.frame_id)?;
    let body = dap(
        &adapter,
        "evaluate",
        json!({"expression": args.expression, "frameId": frame, "context": "repl"}),
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
        Ok(Err(e)) => Err(Outcome::tool_error(e)),
        Err(_) => Err(Outcome::tool_error("the session ended")),
    }
}

async fn terminate(sessions: Addr<Sessions>, args: SessionArgs) -> Result<Outcome, Outcome> {
    let session = find(&sessions, &args.session).await?;
    let (state, _) = snapshot(&session).await?;
    let _ = sessions.send(Close(args.session.clone())).await;
    Ok(json_result(
        json!({"terminated": args.session, "last_state": state_value(&state)}),
    ))
}

/// Registers every tool on `builder`.
pub fn register(builder: ServerBuilder, sessions: &Addr<Sessions>) -> ServerBuilder {
    let s = sessions.clone();
    let builder = builder.typed_tool("launch", move |args: LaunchArgs, _| {
        let s = s.clone();
        async move { either(launch(s, args).await) }
    });
    let s = sessions.clone();
    let builder = builder.typed_tool("set_breakpoints", move |args: BreakpointArgs, _| {
        let s = s.clone();
        async move { either(set_breakpoints(s, args).await) }
    });
    let steps: [(&str, &'static str, Option<Duration>); 4] = [
        ("continue", "continue", None),
        ("next", "next", Some(STEP_TIME_LIMIT)),
        ("step_in", "stepIn", Some(STEP_TIME_LIMIT)),
        ("step_out", "stepOut", Some(STEP_TIME_LIMIT)),
    ];
    let mut builder = builder;
    for (name, command, wait) in steps {
        let s = sessions.clone();
        builder = builder.typed_tool(name, move |args: SessionArgs, _| {
            let s = s.clone();
            async move { either(resume(s, args, command, wait).await) }
        });
    }
    let s = sessions.clone();
    let builder = builder.typed_tool("stack_trace", move |args: StackArgs, _| {
        let s = s.clone();
        async move { either(stack_trace(s, args).await) }
    });
    let s = sessions.clone();
    let builder = builder.typed_tool("variables", move |args: VariablesArgs, _| {
        let s = s.clone();
        async move { either(variables(s, args).await) }
    });
    let s = sessions.clone();
    let builder = builder.typed_tool("evaluate", move |args: EvaluateArgs, _| {
        let s = s.clone();
        async move { either(evaluate(s, args).await) }
    });
    let s = sessions.clone();
    let builder = builder.typed_tool("wait", move |args: WaitArgs, _| {
        let s = s.clone();
        async move { either(wait(s, args).await) }
    });
    let s = sessions.clone();
    builder.typed_tool("terminate", move |args: SessionArgs, _| {
        let s = s.clone();
        async move { either(terminate(s, args).await) }
    })
}
