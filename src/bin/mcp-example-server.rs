//! `mcp-example-server`: a small MCP 2026-07-28 stdio server built on `mcp_bridge::server`.
//! It is the README's quick-start upstream and, with `--test-tools` and the lifecycle flags,
//! the fixture upstream of the bridge's black-box tests. `--help` lists everything.

use std::future::Future;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use clap::{Parser, ValueEnum};
use futures_util::future::BoxFuture;
use mcp_bridge::server::{
    CacheScope, ListenEnd, ListenEvent, LogLevel, Outcome, PromptDef, RequestContext, ResourceDef,
    ResourceTemplateDef, RpcError, Server, ServerBuilder, ToolDef,
};
use serde_json::{Map, Value, json};

const LONG_ABOUT: &str = "\
A small MCP server of revision 2026-07-28 on stdin/stdout (newline-delimited JSON-RPC).

It has no initialize: every request must carry params._meta with
io.modelcontextprotocol/protocolVersion = \"2026-07-28\" and
io.modelcontextprotocol/clientCapabilities. Start with server/discover.

Default tools:
  echo {text}                 text content <text>
  add {a, b}                  the sum: structuredContent {\"sum\": n} (per outputSchema)
                              and the same JSON as text
  slow {steps, delay_ms}      one notifications/progress per step (if the request has
                              _meta.progressToken), then \"done after N steps\"
  log {level, message}        a notifications/message at that level (if the request's
                              _meta logLevel lets it through), then \"logged\"
  fail {code, message, data?} answers with that JSON-RPC error
  ask_name {}                 input_required: an elicitation/create form asking for
                              `name` (needs the elicitation capability); the retry
                              returns \"Hello, <name>!\"
Resources: example://readme (text/plain); template example://notes/{id}.
Prompt: greet {name} -> one user message \"Say hello to <name>.\"
Completion: greet's `name` (names starting with the typed prefix), notes' `id`.
Listens (subscriptions/listen) are acknowledged for every kind above (--listen-error
refuses them with a JSON-RPC error instead, --listen-delay-ms acknowledges them late,
--no-listen offers none).

--test-tools adds tools that misbehave on purpose, for the bridge's tests:
  sleep {ms}                  waits (cancellable), then \"slept\"
  chatter {interval_ms, late} progress and an info log \"tick <n>\" every interval_ms
                              until cancelled, no answer; after the cancel still
                              `late` progress and logs \"late <n>\", then a tools
                              list change
  crash {code}                exits the process with that code at once, no answer
  spawn_grandchild {}         starts `sleep 300` as a child (same process group,
                              inherits stdout/stderr) and returns its pid as text
  large_text {bytes}          text content of `bytes` times \"x\" (an answer longer
                              than its request)
  close_stdout {}             closes its stdout (fd 1 becomes /dev/null) and keeps
                              running, no answer reaches the client
  emit {lines: [string]}      writes each line to stdout verbatim, then \"emitted\"
  emit_and_exit {line, count, code}
                              writes `line` count times to stdout, then its own answer
                              \"emitted\", straight to fd 1 (blocking), then exits with
                              code: a server whose last frames are still in the pipe
  progress_flood {count}      count progress notifications at full speed, \"flooded\"
  garbage_flood {count, stderr_count, tag?}
                              writes count lines \"not json <n>\" to stdout and
                              stderr_count lines \"fixture stderr <tag> <n>\" to stderr,
                              then \"flooded\"
  log_flood {count}           count notifications/message (level info, data
                              \"flood <n>\") at full speed if the request's _meta
                              logLevel lets info through, then \"flooded\"
  structured_array {}         structuredContent [1,2,3] with \"content\": []
  schema_array_without_items  inputSchema has an array property without items
  schema_boolean_properties   inputSchema properties {\"flag\": true, \"never\": false}
  schema_array_output         outputSchema root {\"type\":\"array\"}; returns [1,2,3]
  schema_null_members         inputSchema {\"type\":\"object\",\"properties\":null,
                              \"required\":null}
  schema_nested_nulls         null members deep in inputSchema (properties, items,
                              anyOf, $defs) and in outputSchema; returns {\"ok\":true}
  notify {event, uri?}        publishes tools_list_changed | prompts_list_changed |
                              resources_list_changed | resource_updated (with uri) to
                              open listens, then \"notified\"
  end_listens {how}           ends open listens from the server side: how = \"result\"
                              (listen result) or \"cancelled\" (notifications/cancelled)
  sample {prompt}             input_required: sampling/createMessage; the retry
                              returns \"model said: <text>\"
  roots {}                    input_required: roots/list; the retry returns the root
                              URIs, one per line
  ask_url {url}               input_required: URL-mode elicitation; the retry returns
                              \"action: <action>\"
  script {rounds, refuse_retry?}  writes rounds[i] as input_required itself, unchecked,
                              then returns the received inputResponses as JSON text;
                              refuse_retry answers every retry -32602
  load_shed {}                input_required with only requestState; the retry
                              returns \"retried\"
  mirror {...}                returns its arguments verbatim as structuredContent
                              (any object), with the text \"mirrored\"
  respond_raw {before, after} writes before + <this request's id> + after as one
                              line verbatim (the response, unchecked), then never
                              answers otherwise
--bad-list-items appends list items that 2025-11-25 (and 2026-07-28) refuse, among items a
client can repair, after the default ones (each tool answers \"ok\"):
  tools: bad_input_true (inputSchema true), bad_array_root (inputSchema {\"type\":\"array\"}),
    bad_input_null (inputSchema null), bad_nullable_root (type [\"object\",\"null\"]),
    bad_any_of (inputSchema {\"anyOf\":[{\"type\":\"object\"}]}), bad_unnamed (listed
    without name), bad_null_members (annotations, title, _meta null), bad_title (title 5)
  prompts: bad_prompt_arguments (arguments [{}]), bad_prompt_null_title (title null)
  resources: bad_resource_uri (uri 5, at example://bad)
Resource templates (with --test-tools): example://moved/{id} answers -32602 with
  data.uri example://notes/{id}, another URI than the one read; example://gone/{id}
  asks for the roots (input_required), then answers -32602 with data.uri of the read.

Isolation probes (run at start, before serving, in this order), for the bridge's tests:
  --report-fds FILE           writes the open descriptors, one `N TARGET` line each
                              (from /proc/self/fd), to FILE (written whole, then renamed)
  --spawn-fd-reporter FILE    starts a grandchild (this program with --report-fds FILE
                              --exit-after-start) that reports its descriptors
  --write-to-fds              writes `INJECTED not json-rpc` to fds 3..=20 (closed ones
                              are skipped), then `--write-to-fds reached N descriptors`
                              to stderr
  --spawn-setsid-grandchild PIDFILE
                              starts `sleep 300` in a new session (setsid), with this
                              program's stdout and stderr, and writes its pid to PIDFILE
  --exit-after-start          exits 0 after the probes, without serving
  --keep-running-after-eof    after the end of stdin, keeps running until killed

--stall-stdin-after N stops reading stdin after N lines (an upstream that does not read
its input); --resume-stdin-file FILE reads on once FILE exists.

Environment:
  MCP_FIXTURE_TRACE=FILE      append every received line verbatim to FILE (same as
                              --trace)";

/// How often `--discover-gate` looks for its file.
const GATE_POLL: Duration = Duration::from_millis(10);

/// Command line of `mcp-example-server`.
#[derive(Debug, Parser)]
#[command(
    name = "mcp-example-server",
    version,
    about = "A small MCP 2026-07-28 example server on stdio",
    long_about = LONG_ABOUT
)]
struct Args {
    /// Add the misbehaving test tools (see above).
    #[arg(long)]
    test_tools: bool,
    /// Add list items that the schemas refuse (see above).
    #[arg(long)]
    bad_list_items: bool,
    /// Wait this many milliseconds before answering server/discover.
    #[arg(long, value_name = "MS", default_value_t = 0)]
    discover_delay_ms: u64,
    /// Before answering server/discover, wait until FILE exists (checked every 10 ms): a gate
    /// a test opens when it is ready, however long that takes on a busy machine.
    #[arg(long, value_name = "FILE")]
    discover_gate: Option<PathBuf>,
    /// Answer server/discover with this JSON-RPC error, e.g. `-32601:Method not found`.
    #[arg(
        long,
        value_name = "CODE:MESSAGE",
        value_parser = parse_error,
        allow_hyphen_values = true
    )]
    discover_error: Option<RpcError>,
    /// Offer no subscriptions/listen: discover declares no listChanged and no
    /// resources.subscribe, and a listen gets -32601.
    #[arg(long)]
    no_listen: bool,
    /// Answer subscriptions/listen with this JSON-RPC error instead of acknowledging it,
    /// e.g. `-32000:no listens here` (from the listen of --listen-error-from on).
    #[arg(
        long,
        value_name = "CODE:MESSAGE",
        value_parser = parse_error,
        allow_hyphen_values = true
    )]
    listen_error: Option<RpcError>,
    /// With --listen-error: the first listen (counting from 1) that gets the error; the
    /// ones before it are acknowledged.
    #[arg(long, value_name = "N", default_value_t = 1)]
    listen_error_from: u64,
    /// Wait this many milliseconds before acknowledging (or refusing) a listen, from the listen
    /// of --listen-delay-from on.
    #[arg(long, value_name = "MS", default_value_t = 0)]
    listen_delay_ms: u64,
    /// With --listen-delay-ms: the first listen (counting from 1) that waits.
    #[arg(long, value_name = "N", default_value_t = 1)]
    listen_delay_from: u64,
    /// Leave _meta["io.modelcontextprotocol/serverInfo"] out of every result.
    #[arg(long)]
    no_server_info: bool,
    /// Answer server/discover, flush, and exit with status 0.
    #[arg(long)]
    exit_after_discover: bool,
    /// Write this line to stderr at start.
    #[arg(long, value_name = "TEXT")]
    stderr_line: Option<String>,
    /// Write a UTF-8 byte order mark to stdout at start, before the first line (the UTF-8
    /// preamble of a Windows server).
    #[arg(long)]
    stdout_bom: bool,
    /// The `instructions` of the discover result.
    #[arg(long, value_name = "TEXT")]
    instructions: Option<String>,
    /// `ttlMs` of cacheable results (discover, lists, resources/read).
    #[arg(long, value_name = "MS", default_value_t = 60_000)]
    ttl_ms: u64,
    /// `cacheScope` of cacheable results.
    #[arg(long, value_enum, default_value_t = Scope::Public)]
    cache_scope: Scope,
    /// Split list results into pages of N items (with nextCursor).
    #[arg(long, value_name = "N")]
    page_size: Option<usize>,
    /// Append every received line verbatim to FILE.
    #[arg(long, value_name = "FILE", env = "MCP_FIXTURE_TRACE")]
    trace: Option<PathBuf>,
    /// At start: write the open descriptors (`N TARGET` lines) to FILE.
    #[arg(long, value_name = "FILE")]
    report_fds: Option<PathBuf>,
    /// At start: start a grandchild that writes its open descriptors to FILE.
    #[arg(long, value_name = "FILE")]
    spawn_fd_reporter: Option<PathBuf>,
    /// At start: write `INJECTED not json-rpc` to fds 3..=20.
    #[arg(long)]
    write_to_fds: bool,
    /// At start: start `sleep 300` in a new session and write its pid to PIDFILE.
    #[arg(long, value_name = "PIDFILE")]
    spawn_setsid_grandchild: Option<PathBuf>,
    /// After the end of stdin, keep running until killed (a server that does not notice that
    /// its client went away).
    #[arg(long)]
    keep_running_after_eof: bool,
    /// Exit 0 after the start-up probes, without serving.
    #[arg(long)]
    exit_after_start: bool,
    /// Stop reading stdin after this many lines (until --resume-stdin-file exists, or for
    /// ever): an upstream that does not read its input.
    #[arg(long, value_name = "N")]
    stall_stdin_after: Option<u64>,
    /// With --stall-stdin-after: read on once this file exists (checked every 10 ms).
    #[arg(long, value_name = "FILE")]
    resume_stdin_file: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Scope {
    Public,
    Private,
}

fn parse_error(text: &str) -> Result<RpcError, String> {
    let (code, message) = text
        .split_once(':')
        .ok_or_else(|| "expected CODE:MESSAGE".to_owned())?;
    let code = code
        .trim()
        .parse::<i64>()
        .map_err(|_| format!("not an integer code: {code}"))?;
    Ok(RpcError::new(code, message))
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Err(error) = probes::run(&args) {
        eprintln!("mcp-example-server: a start-up probe failed: {error}");
        return ExitCode::FAILURE;
    }
    if args.exit_after_start {
        return ExitCode::SUCCESS;
    }
    if let Some(line) = &args.stderr_line {
        eprintln!("{line}");
    }
    if args.stdout_bom {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        if out
            .write_all(b"\xEF\xBB\xBF")
            .and_then(|()| out.flush())
            .is_err()
        {
            return ExitCode::FAILURE;
        }
    }
    let server = build(&args);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("mcp-example-server: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let served = match args.stall_stdin_after {
        None => runtime.block_on(server.serve_stdio()),
        Some(lines) => {
            let input = stall::StallingReader::new(
                tokio::io::stdin(),
                lines,
                args.resume_stdin_file.clone(),
            );
            runtime.block_on(server.serve(input, tokio::io::stdout()))
        }
    };
    if args.keep_running_after_eof {
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    // Exit without waiting for the runtime: its stdin reader thread may be blocked in read(2).
    std::process::exit(match served {
        Ok(()) => 0,
        Err(error) => {
            eprintln!("mcp-example-server: {error}");
            1
        }
    })
}

fn build(args: &Args) -> Server {
    let scope = match args.cache_scope {
        Scope::Public => CacheScope::Public,
        Scope::Private => CacheScope::Private,
    };
    let mut builder = Server::builder("mcp-example-server", env!("CARGO_PKG_VERSION"))
        .server_info(!args.no_server_info)
        .listen(!args.no_listen)
        .cache(args.ttl_ms, scope);
    if let Some(instructions) = &args.instructions {
        builder = builder.instructions(instructions);
    }
    if let Some(items) = args.page_size {
        builder = builder.page_size(items);
    }
    if let Some(path) = &args.trace {
        builder = builder.trace_input(path.clone());
    }
    let delay = Duration::from_millis(args.discover_delay_ms);
    let gate = args.discover_gate.clone();
    let error = args.discover_error.clone();
    let exit_after = args.exit_after_discover;
    builder = builder.discover_hook(move |ctx| {
        let error = error.clone();
        let gate = gate.clone();
        async move {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            if let Some(gate) = gate {
                while !gate.exists() {
                    tokio::time::sleep(GATE_POLL).await;
                }
            }
            if exit_after {
                ctx.close_connection();
            }
            error.map_or(Ok(()), Err)
        }
    });
    if args.listen_error.is_some() || args.listen_delay_ms > 0 {
        let error = args.listen_error.clone();
        let error_from = args.listen_error_from;
        let delay = Duration::from_millis(args.listen_delay_ms);
        let delay_from = args.listen_delay_from;
        let seen = Arc::new(AtomicU64::new(0));
        builder = builder.listen_hook(move |_ctx, _filter| {
            let n = seen.fetch_add(1, Ordering::SeqCst) + 1;
            let error = error.clone().filter(|_| n >= error_from);
            let delay = if n >= delay_from {
                delay
            } else {
                Duration::ZERO
            };
            async move {
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                error.map_or(Ok(()), Err)
            }
        });
    }
    builder = demo(builder);
    if args.test_tools {
        builder = test_tools(builder);
    }
    if args.bad_list_items {
        builder = bad_list_items(builder);
    }
    builder.build()
}

// ---- tool plumbing -------------------------------------------------------------------------

/// Why a tool did not produce its result.
enum Failure {
    /// Bad arguments: reported as a tool execution error (`isError: true`) the model can see.
    Arguments(String),
    /// A JSON-RPC error response.
    Rpc(RpcError),
}

type ToolResult = Result<Outcome, Failure>;
type Handler = Box<
    dyn Fn(Value, RequestContext) -> BoxFuture<'static, Result<Outcome, RpcError>> + Send + Sync,
>;

/// Adapts a tool function to a server handler.
fn tool<F, Fut>(f: F) -> Handler
where
    F: Fn(Value, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ToolResult> + Send + 'static,
{
    Box::new(move |arguments, ctx| {
        let result = f(arguments, ctx);
        Box::pin(async move {
            match result.await {
                Ok(outcome) => Ok(outcome),
                Err(Failure::Arguments(message)) => Ok(Outcome::tool_error(message)),
                Err(Failure::Rpc(error)) => Err(error),
            }
        })
    })
}

fn add_tool(builder: ServerBuilder, def: ToolDef, handler: Handler) -> ServerBuilder {
    builder.tool(def, handler)
}

fn field<'a>(arguments: &'a Value, key: &str) -> Result<&'a Value, Failure> {
    arguments
        .get(key)
        .ok_or_else(|| Failure::Arguments(format!("missing argument: {key}")))
}

fn string(arguments: &Value, key: &str) -> Result<String, Failure> {
    field(arguments, key)?
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| Failure::Arguments(format!("argument {key} must be a string")))
}

fn integer(
    arguments: &Value,
    key: &str,
    range: std::ops::RangeInclusive<i64>,
) -> Result<i64, Failure> {
    field(arguments, key)?
        .as_i64()
        .filter(|n| range.contains(n))
        .ok_or_else(|| {
            Failure::Arguments(format!(
                "argument {key} must be an integer from {} to {}",
                range.start(),
                range.end()
            ))
        })
}

fn number(arguments: &Value, key: &str) -> Result<Value, Failure> {
    let value = field(arguments, key)?;
    if value.is_number() {
        Ok(value.clone())
    } else {
        Err(Failure::Arguments(format!(
            "argument {key} must be a number"
        )))
    }
}

fn object_schema(properties: Value, required: &[&str]) -> Value {
    json!({ "type": "object", "properties": properties, "required": required })
}

/// One MRTR round: either ask (again) or hand over the client's answer for `key`.
enum Round {
    Ask(Outcome),
    Answer(Value),
}

/// Asks for `request` under `key` unless this is a retry that carries its answer. The retry
/// must echo `state`, which this server issued; anything else is refused.
fn round(
    ctx: &RequestContext,
    key: &str,
    state: &str,
    request: Option<Value>,
) -> Result<Round, Failure> {
    let ask = || {
        let mut input_requests = Map::new();
        if let Some(request) = &request {
            input_requests.insert(key.to_owned(), request.clone());
        }
        Round::Ask(Outcome::InputRequired {
            input_requests,
            request_state: Some(state.to_owned()),
        })
    };
    if ctx.input_responses().is_none() && ctx.request_state().is_none() {
        return Ok(ask());
    }
    if ctx.request_state() != Some(state) {
        return Err(Failure::Rpc(RpcError::invalid_params(
            "requestState was not issued for this request",
        )));
    }
    if request.is_none() {
        return Ok(Round::Answer(Value::Null));
    }
    Ok(match ctx.input_response(key) {
        Some(answer) => Round::Answer(answer.clone()),
        // A retry without the answer gets the question again (MRTR: SHOULD, not an error).
        None => ask(),
    })
}

// ---- the demo server -----------------------------------------------------------------------

const README_URI: &str = "example://readme";
const README_TEXT: &str = "mcp-example-server is a small MCP 2026-07-28 server.\n\
Tools: echo, add, slow, log, fail, ask_name. Prompt: greet.\n\
Resources: example://readme, example://notes/{id}.\n";
const NOTES_TEMPLATE: &str = "example://notes/{id}";
const NAMES: [&str; 8] = [
    "Ada", "Alan", "Alice", "Barbara", "Bob", "Carol", "Dennis", "Grace",
];
const NOTE_IDS: [&str; 3] = ["1", "2", "3"];

fn demo(builder: ServerBuilder) -> ServerBuilder {
    let builder = add_tool(
        builder,
        ToolDef::new(
            "echo",
            object_schema(json!({"text": {"type": "string"}}), &["text"]),
        )
        .description("Returns the text it is given."),
        tool(|a, _| async move { Ok(Outcome::text(string(&a, "text")?)) }),
    );
    let builder = add_tool(
        builder,
        ToolDef::new(
            "add",
            object_schema(
                json!({"a": {"type": "number"}, "b": {"type": "number"}}),
                &["a", "b"],
            ),
        )
        .description("Adds two numbers.")
        .output_schema(object_schema(json!({"sum": {"type": "number"}}), &["sum"])),
        tool(|a, _| async move { add(&a) }),
    );
    let builder = add_tool(
        builder,
        ToolDef::new(
            "slow",
            object_schema(
                json!({"steps": {"type": "integer", "minimum": 0},
                       "delay_ms": {"type": "integer", "minimum": 0}}),
                &["steps", "delay_ms"],
            ),
        )
        .description("Takes `steps` steps of `delay_ms` each, reporting progress after each."),
        tool(slow),
    );
    let levels: Vec<&str> = LogLevel::ALL.iter().map(|l| l.as_str()).collect();
    let builder = add_tool(
        builder,
        ToolDef::new(
            "log",
            object_schema(
                json!({"level": {"type": "string", "enum": levels}, "message": {"type": "string"}}),
                &["level", "message"],
            ),
        )
        .description("Sends a log message at the given level."),
        tool(log),
    );
    let builder = add_tool(
        builder,
        ToolDef::new(
            "fail",
            object_schema(
                json!({"code": {"type": "integer"}, "message": {"type": "string"}, "data": {}}),
                &["code", "message"],
            ),
        )
        .description("Answers with the given JSON-RPC error."),
        tool(|a, _| async move {
            let code = integer(&a, "code", i64::MIN..=i64::MAX)?;
            let mut error = RpcError::new(code, string(&a, "message")?);
            error.data = a.get("data").cloned();
            Err(Failure::Rpc(error))
        }),
    );
    let builder = add_tool(
        builder,
        ToolDef::new("ask_name", object_schema(json!({}), &[]))
            .description("Asks the user for their name (form elicitation) and greets them."),
        tool(ask_name),
    );
    builder
        .resource(
            ResourceDef::new(README_URI, "readme")
                .mime_type("text/plain")
                .description("About this server."),
            |_, _| async move {
                Ok(Outcome::Complete(json!({"contents": [
                    {"uri": README_URI, "mimeType": "text/plain", "text": README_TEXT}
                ]})))
            },
        )
        .resource_template(
            ResourceTemplateDef::new(NOTES_TEMPLATE, "note")
                .mime_type("text/plain")
                .description("A note by id."),
            |input, _| async move {
                let uri = input["uri"].as_str().unwrap_or_default().to_owned();
                let id = input["variables"]["id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                Ok(Outcome::Complete(json!({"contents": [
                    {"uri": uri, "mimeType": "text/plain", "text": format!("Note {id}.")}
                ]})))
            },
        )
        .prompt(
            PromptDef::new("greet")
                .description("Asks the model to greet someone.")
                .argument("name", "Who to greet", true),
            |arguments, _| async move {
                let Some(name) = arguments.get("name").and_then(Value::as_str) else {
                    return Err(RpcError::invalid_params("missing required argument: name"));
                };
                let content = json!({"type": "text", "text": format!("Say hello to {name}.")});
                Ok(Outcome::Complete(json!({
                    "description": "A greeting",
                    "messages": [{"role": "user", "content": content}]
                })))
            },
        )
        .completion(|params, _| async move { Ok(complete(&params)) })
}

fn add(a: &Value) -> ToolResult {
    let (x, y) = (number(a, "a")?, number(a, "b")?);
    let sum = match (x.as_i64(), y.as_i64()) {
        (Some(x), Some(y)) if x.checked_add(y).is_some() => Value::from(x + y),
        _ => {
            let sum = x.as_f64().unwrap_or_default() + y.as_f64().unwrap_or_default();
            if !sum.is_finite() {
                return Err(Failure::Arguments("the sum is out of range".into()));
            }
            Value::from(sum)
        }
    };
    let structured = json!({ "sum": sum });
    // A tool with structured content SHOULD also return it serialized as text (server/tools).
    Ok(Outcome::Complete(json!({
        "content": [{"type": "text", "text": structured.to_string()}],
        "structuredContent": structured,
    })))
}

async fn slow(a: Value, ctx: RequestContext) -> ToolResult {
    let steps = integer(&a, "steps", 0..=10_000)?;
    let delay = Duration::from_millis(integer(&a, "delay_ms", 0..=600_000)?.unsigned_abs());
    for step in 1..=steps {
        tokio::time::sleep(delay).await;
        let message = format!("step {step} of {steps}");
        ctx.progress(step as f64, Some(steps as f64), Some(&message))
            .await;
    }
    Ok(Outcome::text(format!("done after {steps} steps")))
}

async fn log(a: Value, ctx: RequestContext) -> ToolResult {
    let level = string(&a, "level")?;
    let level = level
        .parse::<LogLevel>()
        .map_err(|()| Failure::Arguments(format!("unknown log level: {level}")))?;
    let message = string(&a, "message")?;
    ctx.log(level, Some("mcp-example-server"), Value::String(message))
        .await;
    Ok(Outcome::text("logged"))
}

async fn ask_name(_: Value, ctx: RequestContext) -> ToolResult {
    let request = json!({
        "method": "elicitation/create",
        "params": {
            "message": "What is your name?",
            "requestedSchema": {
                "type": "object",
                "properties": {"name": {"type": "string", "title": "Name", "minLength": 1}},
                "required": ["name"]
            }
        }
    });
    let answer = match round(&ctx, "name", "ask_name/1", Some(request))? {
        Round::Ask(outcome) => return Ok(outcome),
        Round::Answer(answer) => answer,
    };
    let action = answer.get("action").and_then(Value::as_str);
    let name = answer
        .get("content")
        .and_then(|c| c.get("name"))
        .and_then(Value::as_str);
    Ok(match (action, name) {
        (Some("accept"), Some(name)) => Outcome::text(format!("Hello, {name}!")),
        (Some("accept"), None) => Outcome::tool_error("The form came back without a name."),
        (Some(action), _) => Outcome::text(format!("No name was given ({action}).")),
        (None, _) => {
            return Err(Failure::Rpc(RpcError::invalid_params(
                "inputResponses.name must be an ElicitResult",
            )));
        }
    })
}

fn complete(params: &Value) -> Outcome {
    let reference = &params["ref"];
    let argument = params["argument"]["name"].as_str().unwrap_or_default();
    let prefix = params["argument"]["value"].as_str().unwrap_or_default();
    let candidates: &[&str] = match (reference["type"].as_str(), argument) {
        (Some("ref/prompt"), "name") if reference["name"] == "greet" => &NAMES,
        (Some("ref/resource"), "id") if reference["uri"] == NOTES_TEMPLATE => &NOTE_IDS,
        _ => &[],
    };
    let values: Vec<&str> = candidates
        .iter()
        .copied()
        .filter(|value| value.starts_with(prefix))
        .collect();
    Outcome::Complete(json!({
        "completion": {"values": values, "total": values.len(), "hasMore": false}
    }))
}

// ---- list items that the schemas refuse (--bad-list-items) ---------------------------------

/// Tools, prompts and a resource as servers in the wild list them: some a client can repair
/// (an `inputSchema` that is `true` or `null`, `null` optional members), some it must drop.
fn bad_list_items(builder: ServerBuilder) -> ServerBuilder {
    let object = json!({"type": "object"});
    let tools = [
        ToolDef::new("bad_input_true", json!(true)),
        ToolDef::new("bad_array_root", json!({"type": "array"})),
        ToolDef::new("bad_input_null", Value::Null),
        ToolDef::new("bad_nullable_root", json!({"type": ["object", "null"]})),
        ToolDef::new("bad_any_of", json!({"anyOf": [{"type": "object"}]})),
        ToolDef::new("bad_unnamed", object.clone()).listed_without_name(),
        ToolDef::new("bad_null_members", object.clone())
            .annotations(Value::Null)
            .field("title", Value::Null)
            .field("_meta", Value::Null),
        ToolDef::new("bad_title", object).field("title", json!(5)),
    ];
    let mut builder = tools.into_iter().fold(builder, |b, def| {
        add_tool(b, def, tool(|_, _| async move { Ok(Outcome::text("ok")) }))
    });
    for def in [
        PromptDef::new("bad_prompt_arguments").field("arguments", json!([{}])),
        PromptDef::new("bad_prompt_null_title").field("title", Value::Null),
    ] {
        builder = builder.prompt(def, |_, _| async move {
            Ok(Outcome::Complete(json!({"messages": []})))
        });
    }
    builder.resource(
        ResourceDef::new("example://bad", "bad_resource_uri").field("uri", json!(5)),
        |_, _| async move { Ok(Outcome::Complete(json!({"contents": []}))) },
    )
}

// ---- misbehaving tools for the bridge's tests -----------------------------------------------

fn test_tools(builder: ServerBuilder) -> ServerBuilder {
    let empty = || object_schema(json!({}), &[]);
    let integer_schema =
        |name: &str| object_schema(json!({ name: {"type": "integer", "minimum": 0} }), &[name]);
    let string_schema = |name: &str| object_schema(json!({ name: {"type": "string"} }), &[name]);
    let lines = json!({"lines": {"type": "array", "items": {"type": "string"}}});
    let events = json!({"event": {"type": "string", "enum": [
        "tools_list_changed", "prompts_list_changed", "resources_list_changed", "resource_updated"
    ]}, "uri": {"type": "string"}});
    let ends = json!({"how": {"type": "string", "enum": ["result", "cancelled"]}});
    let tools: Vec<(ToolDef, Handler)> = vec![
        (
            ToolDef::new("sleep", integer_schema("ms"))
                .description("Sleeps (cancellable), then answers \"slept\"."),
            tool(sleep),
        ),
        (
            ToolDef::new(
                "crash",
                object_schema(json!({"code": {"type": "integer"}}), &["code"]),
            )
            .description("Exits the process at once with this status, without answering."),
            tool(crash),
        ),
        (
            ToolDef::new("spawn_grandchild", empty())
                .description("Starts `sleep 300` as a child process and returns its pid."),
            tool(spawn_grandchild),
        ),
        (
            ToolDef::new(
                "large_text",
                object_schema(
                    json!({"bytes": {"type": "integer", "minimum": 0, "maximum": LARGE_TEXT_MAX_BYTES}}),
                    &["bytes"],
                ),
            )
            .description("Answers with a text of that many x."),
            tool(large_text),
        ),
        (
            ToolDef::new("close_stdout", empty())
                .description("Closes the server's stdout and keeps running: its answers are lost."),
            tool(close_stdout),
        ),
        (
            ToolDef::new("emit", object_schema(lines, &["lines"]))
                .description("Writes each line to stdout verbatim, then answers \"emitted\"."),
            tool(emit),
        ),
        (
            ToolDef::new(
                "emit_and_exit",
                object_schema(
                    json!({"line": {"type": "string"}, "count": {"type": "integer", "minimum": 0},
                        "code": {"type": "integer"}}),
                    &["line", "count", "code"],
                ),
            )
            .description(
                "Writes the line count times, then its answer, to stdout, then exits with code.",
            ),
            tool(emit_and_exit),
        ),
        (
            ToolDef::new(
                "garbage_flood",
                object_schema(
                    json!({"count": {"type": "integer", "minimum": 0},
                           "stderr_count": {"type": "integer", "minimum": 0},
                           "tag": {"type": "string"}}),
                    &["count", "stderr_count"],
                ),
            )
            .description(
                "Writes `count` lines \"not json <n>\" to stdout and `stderr_count` lines \
                 \"fixture stderr <tag> <n>\" to stderr, then answers \"flooded\".",
            ),
            tool(garbage_flood),
        ),
        (
            ToolDef::new("progress_flood", integer_schema("count"))
                .description("Sends `count` progress notifications as fast as possible."),
            tool(progress_flood),
        ),
        (
            ToolDef::new(
                "chatter",
                object_schema(
                    json!({"interval_ms": {"type": "integer", "minimum": 1},
                           "late": {"type": "integer", "minimum": 0}}),
                    &["interval_ms", "late"],
                ),
            )
            .description(
                "Sends progress and an info log message \"tick <n>\" every interval_ms until \
                 cancelled; never answers. Once cancelled it still writes `late` progress and \
                 log messages \"late <n>\", then publishes a tools list change.",
            ),
            tool(chatter),
        ),
        (
            ToolDef::new("log_flood", integer_schema("count"))
                .description("Sends `count` log messages (info) as fast as possible."),
            tool(log_flood),
        ),
        (
            ToolDef::new("structured_array", empty())
                .description("structuredContent [1,2,3] and an empty content array."),
            tool(|_, _| async {
                let result = json!({"content": [], "structuredContent": [1, 2, 3]});
                Ok(Outcome::Complete(result))
            }),
        ),
        (
            ToolDef::new(
                "schema_array_without_items",
                object_schema(json!({"list": {"type": "array"}}), &[]),
            )
            .description("Its inputSchema has an array property without items."),
            tool(|_, _| async { Ok(Outcome::text("ok")) }),
        ),
        (
            ToolDef::new(
                "schema_boolean_properties",
                object_schema(json!({"flag": true, "never": false}), &[]),
            )
            .description("Its inputSchema has boolean property schemas."),
            tool(|_, _| async { Ok(Outcome::text("ok")) }),
        ),
        (
            ToolDef::new("schema_array_output", empty())
                .description("Its outputSchema root is an array.")
                .output_schema(json!({"type": "array"})),
            tool(|_, _| async {
                Ok(Outcome::Complete(json!({
                    "content": [{"type": "text", "text": "[1,2,3]"}],
                    "structuredContent": [1, 2, 3],
                })))
            }),
        ),
        (
            ToolDef::new(
                "schema_null_members",
                json!({"type": "object", "properties": null, "required": null}),
            )
            .description("Its inputSchema has null properties and required."),
            tool(|_, _| async { Ok(Outcome::text("ok")) }),
        ),
        (
            ToolDef::new("schema_nested_nulls", nested_nulls_input())
                .description("Null members deep in its input and output schemas.")
                .output_schema(json!({
                    "type": "object",
                    "properties": {"ok": {"type": "boolean", "description": null}},
                    "required": null,
                    "additionalProperties": null
                })),
            tool(|_, _| async {
                Ok(Outcome::Complete(json!({
                    "content": [{"type": "text", "text": "{\"ok\":true}"}],
                    "structuredContent": {"ok": true},
                })))
            }),
        ),
        (
            ToolDef::new("notify", object_schema(events, &["event"]))
                .description("Publishes an event to open listens."),
            tool(notify),
        ),
        (
            ToolDef::new("end_listens", object_schema(ends, &["how"]))
                .description("Ends every open listen from the server side."),
            tool(end_listens),
        ),
        (
            ToolDef::new("sample", string_schema("prompt"))
                .description("Asks the client's model (sampling) and returns its answer."),
            tool(sample),
        ),
        (
            ToolDef::new("roots", empty()).description("Asks the client for its roots."),
            tool(roots),
        ),
        (
            ToolDef::new("ask_url", string_schema("url"))
                .description("Asks the user to open a URL (URL-mode elicitation)."),
            tool(ask_url),
        ),
        (
            ToolDef::new(
                "script",
                object_schema(
                    json!({"rounds": {"type": "array", "items": {"type": "object"}},
                           "refuse_retry": {"type": "boolean"}}),
                    &["rounds"],
                ),
            )
            .description(
                "Answers with rounds[i] as inputRequests verbatim, unchecked (i from its \
                 requestState \"script/<i>\"), then the received inputResponses as text.",
            ),
            tool(script),
        ),
        (
            ToolDef::new("mirror", json!({"type": "object"}))
                .description("Returns its arguments verbatim as structuredContent."),
            tool(|a, _| async move {
                Ok(Outcome::Complete(json!({
                    "content": [{"type": "text", "text": "mirrored"}],
                    "structuredContent": a,
                })))
            }),
        ),
        (
            ToolDef::new(
                "respond_raw",
                object_schema(
                    json!({"before": {"type": "string"}, "after": {"type": "string"}}),
                    &["before", "after"],
                ),
            )
            .description(
                "Writes before + <the request id> + after as one line verbatim, then never \
                 answers otherwise.",
            ),
            tool(respond_raw),
        ),
        (
            ToolDef::new("load_shed", empty())
                .description("Answers input_required with only requestState, then \"retried\"."),
            tool(|_, ctx| async move {
                match round(&ctx, "", "load_shed/1", None)? {
                    Round::Ask(outcome) => Ok(outcome),
                    Round::Answer(_) => Ok(Outcome::text("retried")),
                }
            }),
        ),
    ];
    tools
        .into_iter()
        .fold(builder, |builder, (def, handler)| {
            add_tool(builder, def, handler)
        })
        .resource_template(
            ResourceTemplateDef::new(MOVED_TEMPLATE, "moved")
                .description("Every read answers -32602 naming another URI in data.uri."),
            |input, _| async move {
                let id = input["variables"]["id"].as_str().unwrap_or_default();
                Err(RpcError::invalid_params("Resource moved")
                    .with_data(json!({"uri": format!("example://notes/{id}")})))
            },
        )
        .resource_template(
            ResourceTemplateDef::new(GONE_TEMPLATE, "gone").description(
                "Every read asks for the roots, then answers -32602 with data.uri of the read.",
            ),
            |input, ctx| async move {
                let request = Some(json!({ "method": "roots/list" }));
                match round(&ctx, "roots", "gone/1", request) {
                    Ok(Round::Ask(outcome)) => Ok(outcome),
                    Ok(Round::Answer(_)) => Err(RpcError::invalid_params("Resource not found")
                        .with_data(json!({"uri": input["uri"]}))),
                    Err(Failure::Rpc(e)) => Err(e),
                    Err(Failure::Arguments(m)) => Err(RpcError::invalid_params(m)),
                }
            },
        )
}

/// The test-tools template whose reads fail with -32602 and a `data.uri` that is not the URI
/// that was read (not a resource-not-found).
const MOVED_TEMPLATE: &str = "example://moved/{id}";

/// The test-tools template whose reads ask for the roots first (one round of input
/// requests), then answer 2026-07-28's resource not found (-32602 with data.uri).
const GONE_TEMPLATE: &str = "example://gone/{id}";

/// The inputSchema of `schema_nested_nulls`: `null` members at several depths, as servers
/// that serialize absent fields as `null` send them (2026-07-28 admits them).
fn nested_nulls_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": null, "default": null},
            "options": {"type": "object", "properties": null, "required": null},
            "tags": {"type": "array", "items": null},
            "mode": {"anyOf": [null, {"type": "string", "enum": ["a", "b"]}]},
            "point": {"$ref": "#/$defs/point"}
        },
        "required": ["path"],
        "$defs": {"point": {"type": "object", "properties": {"x": null}, "required": null}}
    })
}

/// Misbehaves on purpose: it writes its `input_required` answers itself, so even input
/// requests the client did not declare go out (the server's own check would refuse them).
async fn script(a: Value, ctx: RequestContext) -> ToolResult {
    let rounds = field(&a, "rounds")?
        .as_array()
        .cloned()
        .ok_or_else(|| Failure::Arguments("rounds must be an array".into()))?;
    let index = match ctx.request_state() {
        None => 0,
        Some(state) => state
            .strip_prefix("script/")
            .and_then(|i| i.parse::<usize>().ok())
            .ok_or_else(|| {
                Failure::Rpc(RpcError::invalid_params(
                    "requestState was not issued by script",
                ))
            })?,
    };
    if index > 0 && a.get("refuse_retry").and_then(Value::as_bool) == Some(true) {
        return Err(Failure::Rpc(RpcError::invalid_params(
            "requestState expired",
        )));
    }
    let Some(requests) = rounds.get(index) else {
        let responses = ctx.input_responses().cloned().unwrap_or_default();
        return Ok(Outcome::text(Value::Object(responses).to_string()));
    };
    let mut result =
        json!({"resultType": "input_required", "requestState": format!("script/{}", index + 1)});
    if requests.as_object().is_some_and(|m| !m.is_empty()) {
        result["inputRequests"] = requests.clone();
    }
    ctx.progress((index + 1) as f64, None, None).await;
    let line = json!({"jsonrpc": "2.0", "id": ctx.request_id(), "result": result}).to_string();
    ctx.write_raw_line(line).await;
    // The answer is out; this request never answers again (the retry is a new request).
    ctx.cancelled().await;
    Ok(Outcome::text("cancelled"))
}

/// Misbehaves on purpose: writes its own response line, unchecked (big numbers, unpaired
/// surrogate escapes, repeated keys, lines too deep or too long), around the request's id.
async fn respond_raw(a: Value, ctx: RequestContext) -> ToolResult {
    let before = string(&a, "before")?;
    let after = string(&a, "after")?;
    let line = format!("{before}{}{after}", ctx.request_id());
    ctx.write_raw_line(line).await;
    // The answer is out; this request never answers again.
    ctx.cancelled().await;
    Ok(Outcome::text("cancelled"))
}

async fn sleep(a: Value, _: RequestContext) -> ToolResult {
    let ms = integer(&a, "ms", 0..=i64::from(u32::MAX))?;
    // Cancellation drops this future, which ends the sleep.
    tokio::time::sleep(Duration::from_millis(ms.unsigned_abs())).await;
    Ok(Outcome::text("slept"))
}

async fn crash(a: Value, _: RequestContext) -> ToolResult {
    let code = integer(&a, "code", i64::from(i32::MIN)..=i64::from(i32::MAX))?;
    std::process::exit(i32::try_from(code).unwrap_or(1));
}

/// `sleep 300` inherits stdout and stderr on purpose: a real server's children often do, and
/// the bridge must not wait for the pipe to close when it stops the server.
async fn spawn_grandchild(_: Value, _: RequestContext) -> ToolResult {
    let child = std::process::Command::new("sleep")
        .arg("300")
        .stdin(std::process::Stdio::null())
        .spawn()
        .map_err(|e| Failure::Rpc(RpcError::internal(format!("spawn failed: {e}"))))?;
    Ok(Outcome::text(child.id().to_string()))
}

/// Longest text of `large_text`, in bytes (16 MiB).
const LARGE_TEXT_MAX_BYTES: i64 = 16 * 1024 * 1024;

async fn large_text(a: Value, _: RequestContext) -> ToolResult {
    let bytes = integer(&a, "bytes", 0..=LARGE_TEXT_MAX_BYTES)?;
    Ok(Outcome::text(
        "x".repeat(usize::try_from(bytes).unwrap_or(0)),
    ))
}

/// A server that closes its stdout but does not exit: fd 1 becomes `/dev/null` (the server
/// writes fd 1 itself, so the pipe to the client has no writer left), the process lives on.
async fn close_stdout(_: Value, _: RequestContext) -> ToolResult {
    let null = std::fs::File::open("/dev/null")
        .map_err(|e| Failure::Rpc(RpcError::internal(format!("open /dev/null: {e}"))))?;
    // SAFETY: dup2 onto fd 1, which this process owns; /dev/null stays open as fd 1.
    let rc = unsafe { libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&null), 1) };
    if rc != 1 {
        return Err(Failure::Rpc(RpcError::internal("dup2 failed")));
    }
    Ok(Outcome::text("closed"))
}

async fn emit(a: Value, ctx: RequestContext) -> ToolResult {
    let bad = || Failure::Arguments("argument lines must be an array of strings".into());
    let lines = field(&a, "lines")?.as_array().ok_or_else(bad)?;
    let lines: Vec<String> = lines
        .iter()
        .map(|line| line.as_str().map(str::to_owned))
        .collect::<Option<_>>()
        .ok_or_else(bad)?;
    for line in lines {
        ctx.write_raw_line(line).await;
    }
    Ok(Outcome::text("emitted"))
}

/// Most lines of `emit_and_exit`.
const EMIT_AND_EXIT_MAX_LINES: i64 = 1_000_000;

/// Misbehaves on purpose: its last lines and its answer are written straight to fd 1
/// (blocking, past the server's output queue, which is empty while it waits for this call),
/// and the process exits the moment the last byte is in the pipe, long before the client has
/// read it all.
async fn emit_and_exit(a: Value, ctx: RequestContext) -> ToolResult {
    use std::io::Write;
    let line = string(&a, "line")?;
    let count = integer(&a, "count", 0..=EMIT_AND_EXIT_MAX_LINES)?;
    let code = integer(&a, "code", i64::from(i32::MIN)..=i64::from(i32::MAX))?;
    let answer = json!({"jsonrpc": "2.0", "id": ctx.request_id(),
        "result": {"content": [{"type": "text", "text": "emitted"}]}});
    let mut text = format!("{line}\n").repeat(usize::try_from(count).unwrap_or(0));
    text.push_str(&format!("{answer}\n"));
    let _ = tokio::task::spawn_blocking(move || {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
        std::process::exit(i32::try_from(code).unwrap_or(1));
    })
    .await;
    Ok(Outcome::text("not reached"))
}

async fn garbage_flood(a: Value, ctx: RequestContext) -> ToolResult {
    use std::io::Write;
    let count = integer(&a, "count", 0..=1_000_000)?;
    let stderr_count = integer(&a, "stderr_count", 0..=1_000_000)?;
    let tag = a
        .get("tag")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    for n in 1..=count {
        ctx.write_raw_line(format!("not json {n}")).await;
    }
    let lines: String = (1..=stderr_count)
        .map(|n| format!("fixture stderr {tag} {n}\n"))
        .collect();
    let _ =
        tokio::task::spawn_blocking(move || std::io::stderr().write_all(lines.as_bytes())).await;
    Ok(Outcome::text("flooded"))
}

async fn progress_flood(a: Value, ctx: RequestContext) -> ToolResult {
    let count = integer(&a, "count", 0..=1_000_000)?;
    for n in 1..=count {
        ctx.progress(n as f64, Some(count as f64), None).await;
    }
    Ok(Outcome::text("flooded"))
}

/// Misbehaves on purpose after a cancel, like a server whose work does not stop at once: the
/// late lines reach the client after its `notifications/cancelled`. The tools list change
/// after them tells a test that every late line came before it (one output queue).
async fn chatter(a: Value, ctx: RequestContext) -> ToolResult {
    let interval = Duration::from_millis(integer(&a, "interval_ms", 1..=600_000)?.unsigned_abs());
    let late = integer(&a, "late", 0..=10_000)?;
    let after = ctx.clone();
    tokio::spawn(async move {
        after.cancelled().await;
        for n in 1..=late {
            let text = format!("late {n}");
            if let Some(token) = after.progress_token() {
                let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": 1_000_000 + n, "message": text}});
                after
                    .write_raw_line_even_after_the_end(progress.to_string())
                    .await;
            }
            let log = json!({"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "logger": "chatter", "data": text}});
            after
                .write_raw_line_even_after_the_end(log.to_string())
                .await;
        }
        after.server().notify(ListenEvent::ToolsListChanged);
    });
    for n in 1u64.. {
        let text = format!("tick {n}");
        ctx.progress(n as f64, None, Some(&text)).await;
        ctx.log(LogLevel::Info, Some("chatter"), Value::String(text))
            .await;
        tokio::time::sleep(interval).await;
    }
    Ok(Outcome::text("never"))
}

async fn log_flood(a: Value, ctx: RequestContext) -> ToolResult {
    let count = integer(&a, "count", 0..=100_000_000)?;
    for n in 1..=count {
        let data = Value::String(format!("flood {n}"));
        if !ctx.log(LogLevel::Info, None, data).await {
            break;
        }
    }
    Ok(Outcome::text("flooded"))
}

async fn notify(a: Value, ctx: RequestContext) -> ToolResult {
    let event = match string(&a, "event")?.as_str() {
        "tools_list_changed" => ListenEvent::ToolsListChanged,
        "prompts_list_changed" => ListenEvent::PromptsListChanged,
        "resources_list_changed" => ListenEvent::ResourcesListChanged,
        "resource_updated" => ListenEvent::ResourceUpdated {
            uri: string(&a, "uri")?,
        },
        other => return Err(Failure::Arguments(format!("unknown event: {other}"))),
    };
    ctx.server().notify(event);
    Ok(Outcome::text("notified"))
}

async fn end_listens(a: Value, ctx: RequestContext) -> ToolResult {
    let how = match string(&a, "how")?.as_str() {
        "result" => ListenEnd::Result,
        "cancelled" => ListenEnd::Cancelled,
        other => return Err(Failure::Arguments(format!("unknown way to end: {other}"))),
    };
    ctx.server().end_listens(how);
    Ok(Outcome::text("ended"))
}

async fn sample(a: Value, ctx: RequestContext) -> ToolResult {
    let prompt = string(&a, "prompt")?;
    let request = json!({
        "method": "sampling/createMessage",
        "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
            "maxTokens": 100
        }
    });
    let answer = match round(&ctx, "sample", "sample/1", Some(request))? {
        Round::Ask(outcome) => return Ok(outcome),
        Round::Answer(answer) => answer,
    };
    let content = &answer["content"];
    let text = content["text"]
        .as_str()
        .or_else(|| content[0]["text"].as_str())
        .unwrap_or_default();
    Ok(Outcome::text(format!("model said: {text}")))
}

async fn roots(_: Value, ctx: RequestContext) -> ToolResult {
    let request = json!({ "method": "roots/list" });
    let answer = match round(&ctx, "roots", "roots/1", Some(request))? {
        Round::Ask(outcome) => return Ok(outcome),
        Round::Answer(answer) => answer,
    };
    let uris: Vec<&str> = answer["roots"]
        .as_array()
        .map(|roots| roots.iter().filter_map(|r| r["uri"].as_str()).collect())
        .unwrap_or_default();
    Ok(Outcome::text(uris.join("\n")))
}

async fn ask_url(a: Value, ctx: RequestContext) -> ToolResult {
    let url = string(&a, "url")?;
    let request = json!({
        "method": "elicitation/create",
        "params": {"mode": "url", "message": "Please open this page.", "url": url}
    });
    let answer = match round(&ctx, "open", "ask_url/1", Some(request))? {
        Round::Ask(outcome) => return Ok(outcome),
        Round::Answer(answer) => answer,
    };
    let action = answer["action"].as_str().unwrap_or("none");
    Ok(Outcome::text(format!("action: {action}")))
}

/// The isolation probes of the command line: what a hostile or careless upstream does with
/// the descriptors and the processes it gets.
mod probes {
    use super::Args;
    use std::io;
    use std::os::unix::process::CommandExt;
    use std::path::Path;
    use std::process::{Command, Stdio};

    /// The line written to every descriptor from 3 to 20 by `--write-to-fds`.
    pub const INJECTED_LINE: &[u8] = b"INJECTED not json-rpc\n";
    /// The descriptors `--write-to-fds` writes to.
    pub const INJECTED_FDS: std::ops::RangeInclusive<i32> = 3..=20;

    pub fn run(args: &Args) -> io::Result<()> {
        if let Some(file) = &args.report_fds {
            report_fds(file)?;
        }
        if let Some(file) = &args.spawn_fd_reporter {
            Command::new(std::env::current_exe()?)
                .arg("--report-fds")
                .arg(file)
                .arg("--exit-after-start")
                .stdin(Stdio::null())
                .spawn()?;
        }
        if args.write_to_fds {
            let mut reached = 0;
            for fd in INJECTED_FDS {
                // SAFETY: write(2) of a constant buffer; a closed fd fails with EBADF.
                let n =
                    unsafe { libc::write(fd, INJECTED_LINE.as_ptr().cast(), INJECTED_LINE.len()) };
                if n > 0 {
                    reached += 1;
                }
            }
            eprintln!("mcp-example-server: --write-to-fds reached {reached} descriptors");
        }
        if let Some(file) = &args.spawn_setsid_grandchild {
            let mut cmd = Command::new("sleep");
            cmd.arg("300").stdin(Stdio::null());
            // SAFETY: setsid is async-signal-safe.
            unsafe {
                cmd.pre_exec(|| {
                    if libc::setsid() < 0 {
                        return Err(io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
            let child = cmd.spawn()?;
            write_whole(file, format!("{}\n", child.id()).as_bytes())?;
        }
        Ok(())
    }

    /// `N TARGET` for every open descriptor except the one that reads the listing.
    fn report_fds(file: &Path) -> io::Result<()> {
        let me = format!("/proc/{}/fd", std::process::id());
        let mut fds: Vec<(i32, String)> = Vec::new();
        for entry in std::fs::read_dir("/proc/self/fd")? {
            let entry = entry?;
            let Some(fd) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
                continue;
            };
            let target = std::fs::read_link(entry.path())
                .map(|t| t.to_string_lossy().into_owned())
                .unwrap_or_default();
            if target != me {
                fds.push((fd, target));
            }
        }
        fds.sort();
        let text: String = fds.iter().map(|(fd, t)| format!("{fd} {t}\n")).collect();
        write_whole(file, text.as_bytes())
    }

    /// Writes `bytes` to a temporary file beside `file`, then renames it: a reader that sees
    /// `file` sees all of it.
    fn write_whole(file: &Path, bytes: &[u8]) -> io::Result<()> {
        let mut tmp = file.as_os_str().to_owned();
        tmp.push(".tmp");
        std::fs::write(&tmp, bytes)?;
        std::fs::rename(&tmp, file)
    }
}

/// `--stall-stdin-after`: an input that stops after N lines until a file exists.
mod stall {
    use std::future::Future;
    use std::path::PathBuf;
    use std::pin::Pin;
    use std::task::{Context, Poll};
    use std::time::Duration;
    use tokio::io::{AsyncRead, ReadBuf};

    /// How often the resume file is looked for.
    const RESUME_POLL: Duration = Duration::from_millis(10);

    /// Passes `inner` through until `lines` newlines have been read, then reads nothing more
    /// until `resume` exists (never without it). The read that holds the last newline may
    /// carry bytes after it; nothing beyond that read is taken.
    pub struct StallingReader<R> {
        inner: R,
        lines_left: u64,
        resume: Option<PathBuf>,
        resumed: bool,
        tick: Option<Pin<Box<tokio::time::Sleep>>>,
    }

    impl<R> StallingReader<R> {
        pub fn new(inner: R, lines: u64, resume: Option<PathBuf>) -> Self {
            StallingReader {
                inner,
                lines_left: lines,
                resume,
                resumed: false,
                tick: None,
            }
        }
    }

    impl<R: AsyncRead + Unpin> AsyncRead for StallingReader<R> {
        fn poll_read(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            let me = &mut *self;
            while me.lines_left == 0 && !me.resumed {
                if me.resume.as_ref().is_some_and(|f| f.exists()) {
                    me.resumed = true;
                    break;
                }
                if me.resume.is_none() {
                    return Poll::Pending;
                }
                let tick = me
                    .tick
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(RESUME_POLL)));
                match tick.as_mut().poll(cx) {
                    Poll::Ready(()) => me.tick = None,
                    Poll::Pending => return Poll::Pending,
                }
            }
            let before = buf.filled().len();
            let polled = Pin::new(&mut me.inner).poll_read(cx, buf);
            if !me.resumed {
                let newlines = buf.filled()[before..]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count();
                me.lines_left = me.lines_left.saturating_sub(newlines as u64);
            }
            polled
        }
    }
}
