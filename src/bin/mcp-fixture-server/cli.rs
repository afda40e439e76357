//! The command line of `mcp-fixture-server`: its `--help` text and its flags.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};
use mcp_bridge::server::RpcError;

/// The `--help` text after the usage line.
pub(crate) const LONG_ABOUT: &str = "\
The upstream of mcp-bridge's black-box tests and benchmarks: an MCP server of revision
2026-07-28 on stdin/stdout (newline-delimited JSON-RPC) that misbehaves on request. Its
serverInfo name is mcp-example-server's, whose default tools it serves.

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

/// Command line of `mcp-fixture-server`.
#[derive(Debug, Parser)]
#[command(
    name = "mcp-fixture-server",
    version,
    about = "The MCP 2026-07-28 fixture server of mcp-bridge's tests, on stdio",
    long_about = LONG_ABOUT
)]
pub(crate) struct Args {
    /// Add the misbehaving test tools (see above).
    #[arg(long)]
    pub(crate) test_tools: bool,
    /// Add list items that the schemas refuse (see above).
    #[arg(long)]
    pub(crate) bad_list_items: bool,
    /// Wait this many milliseconds before answering server/discover.
    #[arg(long, value_name = "MS", default_value_t = 0)]
    pub(crate) discover_delay_ms: u64,
    /// Before answering server/discover, wait until FILE exists (checked every 10 ms): a gate
    /// a test opens when it is ready, however long that takes on a busy machine.
    #[arg(long, value_name = "FILE")]
    pub(crate) discover_gate: Option<PathBuf>,
    /// Answer server/discover with this JSON-RPC error, e.g. `-32601:Method not found`.
    #[arg(
        long,
        value_name = "CODE:MESSAGE",
        value_parser = parse_error,
        allow_hyphen_values = true
    )]
    pub(crate) discover_error: Option<RpcError>,
    /// Offer no subscriptions/listen: discover declares no listChanged and no
    /// resources.subscribe, and a listen gets -32601.
    #[arg(long)]
    pub(crate) no_listen: bool,
    /// Answer subscriptions/listen with this JSON-RPC error instead of acknowledging it,
    /// e.g. `-32000:no listens here` (from the listen of --listen-error-from on).
    #[arg(
        long,
        value_name = "CODE:MESSAGE",
        value_parser = parse_error,
        allow_hyphen_values = true
    )]
    pub(crate) listen_error: Option<RpcError>,
    /// With --listen-error: the first listen (counting from 1) that gets the error; the
    /// ones before it are acknowledged.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub(crate) listen_error_from: u64,
    /// Wait this many milliseconds before acknowledging (or refusing) a listen, from the listen
    /// of --listen-delay-from on.
    #[arg(long, value_name = "MS", default_value_t = 0)]
    pub(crate) listen_delay_ms: u64,
    /// With --listen-delay-ms: the first listen (counting from 1) that waits.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub(crate) listen_delay_from: u64,
    /// Leave _meta["io.modelcontextprotocol/serverInfo"] out of every result.
    #[arg(long)]
    pub(crate) no_server_info: bool,
    /// Answer server/discover, flush, and exit with status 0.
    #[arg(long)]
    pub(crate) exit_after_discover: bool,
    /// Write this line to stderr at start.
    #[arg(long, value_name = "TEXT")]
    pub(crate) stderr_line: Option<String>,
    /// Write a UTF-8 byte order mark to stdout at start, before the first line (the UTF-8
    /// preamble of a Windows server).
    #[arg(long)]
    pub(crate) stdout_bom: bool,
    /// The `instructions` of the discover result.
    #[arg(long, value_name = "TEXT")]
    pub(crate) instructions: Option<String>,
    /// `ttlMs` of cacheable results (discover, lists, resources/read).
    #[arg(long, value_name = "MS", default_value_t = 60_000)]
    pub(crate) ttl_ms: u64,
    /// `cacheScope` of cacheable results.
    #[arg(long, value_enum, default_value_t = Scope::Public)]
    pub(crate) cache_scope: Scope,
    /// Split list results into pages of N items (with nextCursor).
    #[arg(long, value_name = "N")]
    pub(crate) page_size: Option<usize>,
    /// Append every received line verbatim to FILE.
    #[arg(long, value_name = "FILE", env = "MCP_FIXTURE_TRACE")]
    pub(crate) trace: Option<PathBuf>,
    /// At start: write the open descriptors (`N TARGET` lines) to FILE.
    #[arg(long, value_name = "FILE")]
    pub(crate) report_fds: Option<PathBuf>,
    /// At start: start a grandchild that writes its open descriptors to FILE.
    #[arg(long, value_name = "FILE")]
    pub(crate) spawn_fd_reporter: Option<PathBuf>,
    /// At start: write `INJECTED not json-rpc` to fds 3..=20.
    #[arg(long)]
    pub(crate) write_to_fds: bool,
    /// At start: start `sleep 300` in a new session and write its pid to PIDFILE.
    #[arg(long, value_name = "PIDFILE")]
    pub(crate) spawn_setsid_grandchild: Option<PathBuf>,
    /// After the end of stdin, keep running until killed (a server that does not notice that
    /// its client went away).
    #[arg(long)]
    pub(crate) keep_running_after_eof: bool,
    /// Exit 0 after the start-up probes, without serving.
    #[arg(long)]
    pub(crate) exit_after_start: bool,
    /// Stop reading stdin after this many lines (until --resume-stdin-file exists, or for
    /// ever): an upstream that does not read its input.
    #[arg(long, value_name = "N")]
    pub(crate) stall_stdin_after: Option<u64>,
    /// With --stall-stdin-after: read on once this file exists (checked every 10 ms).
    #[arg(long, value_name = "FILE")]
    pub(crate) resume_stdin_file: Option<PathBuf>,
    /// Serve Streamable HTTP on ADDR (PORT, or IP:PORT; port 0: any free one) instead of
    /// stdio: 2026-07-28 statelessly, 2025-11-25 in sessions (through the embedded bridge);
    /// writes "listening on URL" to stderr once bound.
    #[cfg(feature = "http-server")]
    #[arg(long, value_name = "ADDR", value_parser = mcp_bridge::server::http::parse_addr)]
    pub(crate) http: Option<std::net::SocketAddr>,
    /// With --http: serve a POST only with `Authorization: Bearer TOKEN` (this one token), and
    /// the protected-resource metadata at /.well-known/oauth-protected-resource/mcp.
    #[cfg(feature = "http-server")]
    #[arg(long, value_name = "TOKEN")]
    pub(crate) http_bearer_token: Option<String>,
    /// With --http-bearer-token: an `authorization_servers` entry of the metadata (repeatable).
    #[cfg(feature = "http-server")]
    #[arg(long, value_name = "URL")]
    pub(crate) http_authorization_server: Vec<String>,
    /// With --http: a 2025-11-25 session without a request and without an open stream for
    /// this long ends (milliseconds; default 30 minutes).
    #[cfg(feature = "http-server")]
    #[arg(long, value_name = "MS")]
    pub(crate) http_session_idle_ms: Option<u64>,
    /// With --http: a new 2025-11-25 session that no message follows its `initialize` for
    /// this long ends (milliseconds; default 30 s).
    #[cfg(feature = "http-server")]
    #[arg(long, value_name = "MS")]
    pub(crate) http_session_claim_ms: Option<u64>,
    /// With --http: write the server's debug log lines to stderr (a test waits for one of
    /// them as the sign that the server saw an event no client can see).
    #[cfg(feature = "http-server")]
    #[arg(long)]
    pub(crate) http_debug_log: bool,
    /// With --http: the time to receive a request's body once its headers are in; a body
    /// not whole by then gets 408 (milliseconds; default 30 s).
    #[cfg(feature = "http-server")]
    #[arg(long, value_name = "MS")]
    pub(crate) http_body_read_ms: Option<u64>,
    /// With --http: the most 2025-11-25 sessions at once; one more `initialize` gets 503
    /// (default 256).
    #[cfg(feature = "http-server")]
    #[arg(long, value_name = "N")]
    pub(crate) http_max_sessions: Option<usize>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum Scope {
    Public,
    Private,
}

/// Why a `CODE:MESSAGE` option is refused (clap adds the option and the value).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ErrorOptionError {
    #[error("expected CODE:MESSAGE")]
    NoColon,
    /// The part before the first `:`, as given.
    #[error("not an integer code: {0}")]
    NotACode(String),
}

/// Reads a JSON-RPC error given as `CODE:MESSAGE`.
pub(crate) fn parse_error(text: &str) -> Result<RpcError, ErrorOptionError> {
    let (code, message) = text.split_once(':').ok_or(ErrorOptionError::NoColon)?;
    let code = code
        .trim()
        .parse::<i64>()
        .map_err(|_| ErrorOptionError::NotACode(code.to_owned()))?;
    Ok(RpcError::new(code, message))
}
