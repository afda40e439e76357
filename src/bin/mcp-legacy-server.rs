//! mcp-legacy-server: the smallest honest 2025-11-25-only MCP server on stdio, a test fixture
//! for the bridge's era fallback (`protocol::rules::era`). It knows nothing of 2026-07-28: a request
//! it does not know (`server/discover` among them) gets the answer a real legacy server gives,
//! chosen by `--discover-answer`:
//!
//! - `method-not-found` (default): `-32601 "Method not found"`, as the TypeScript SDK 1.x
//!   `Server` answers (server-everything 2026.8.31);
//! - `invalid-params`: `-32602 "Invalid request parameters"` with `data: ""`, as the Python
//!   `mcp` 1.x server answers (its `ClientRequest` validation fails; seen with `mcp` 1.30.0);
//! - `empty-result`: the result `{}`, as lenient servers answer any method they do not know
//!   (the official conformance suite's 2025-11-25 test server answers `server/discover` so);
//! - `none`: no answer at all (a server that drops what it cannot read);
//! - `exit`: at a first message that is not `initialize`, exit 1 without an answer, as
//!   servers of the rmcp SDK (0.x, 1.x) end their session (`ExpectedInitializeRequest`); a
//!   later `server/discover` gets `method-not-found`.
//!
//! Tools (2025-11-25 `tools/call`):
//! - `echo {text}`: the text;
//! - `ask {prompt}`: sends `sampling/createMessage` (id `s-N`) to the client, and answers the
//!   call with the text of the client's result, or `sampling failed: <message>`;
//! - `count {n}`: `n` progress notifications with the request's progress token, then `counted n`;
//! - `flip`: `notifications/tools/list_changed`, then `flipped`;
//! - `slow`: never answers; a `notifications/cancelled` for it is recorded;
//! - `stubborn`: answers `too late` only when its `notifications/cancelled` arrives (a server
//!   that ignores the rule that a cancelled request gets no response);
//! - `cancelled`: the ids of the requests whose `notifications/cancelled` arrived, as JSON text;
//! - `large {bytes}`: a text of `bytes` times `x` (an answer longer than its request);
//! - `exit {code}`: the process exits with `code` at once, without an answer.
//!
//! `--bad-tool`: `tools/list` also lists `bad_schema`, whose `inputSchema` is `true`: a tool
//! the 2025-11-25 schema refuses (a 2025-11-25 client then refuses the whole list), as
//! servers in the wild list it.
//!
//! `--start-gate FILE`: the server reads nothing until FILE exists (checked every
//! `GATE_POLL`), a server that starts late for as long as the test wants (the era probe's
//! time limit passes, and the server then reads the probe and the editor's `initialize`).
//!
//! `MCP_FIXTURE_TRACE=FILE` appends every received line verbatim to FILE. Stderr gets one line
//! per received method (the bridge relays it).

use serde_json::{Value, json};

/// Longest text of the `large` tool, in bytes (16 MiB).
const LARGE_MAX_BYTES: u64 = 16 * 1024 * 1024;
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::time::Duration;

/// How often `--start-gate` checks its file (10 ms).
const GATE_POLL: Duration = Duration::from_millis(10);

const PROTOCOL_VERSION: &str = "2025-11-25";

#[derive(Clone, Copy, PartialEq)]
enum DiscoverAnswer {
    MethodNotFound,
    InvalidParams,
    EmptyResult,
    None,
    Exit,
}

struct Server {
    answer: DiscoverAnswer,
    /// No message was read yet (for [`DiscoverAnswer::Exit`]).
    first: bool,
    out: std::io::Stdout,
    trace: Option<std::fs::File>,
    next_request: u64,
    /// Our sampling request id -> the tools/call id it answers.
    asking: HashMap<String, Value>,
    cancelled: Vec<Value>,
    /// The ids of `stubborn` calls, answered at their cancel.
    stubborn: Vec<Value>,
    /// `--bad-tool`.
    bad_tool: bool,
}

impl Server {
    fn send(&mut self, v: &Value) {
        let mut out = self.out.lock();
        let _ = writeln!(out, "{v}");
        let _ = out.flush();
    }

    fn result(&mut self, id: &Value, result: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    fn error(&mut self, id: &Value, code: i64, message: &str, data: Option<Value>) {
        let mut error = json!({"code": code, "message": message});
        if let Some(d) = data {
            error["data"] = d;
        }
        self.send(&json!({"jsonrpc": "2.0", "id": id, "error": error}));
    }

    fn text(&mut self, id: &Value, text: &str) {
        self.result(id, json!({"content": [{"type": "text", "text": text}]}));
    }

    fn unknown(&mut self, id: &Value) {
        match self.answer {
            DiscoverAnswer::MethodNotFound => self.error(id, -32601, "Method not found", None),
            DiscoverAnswer::InvalidParams => {
                self.error(id, -32602, "Invalid request parameters", Some(json!("")))
            }
            DiscoverAnswer::EmptyResult => self.result(id, json!({})),
            DiscoverAnswer::None => {}
            DiscoverAnswer::Exit => self.error(id, -32601, "Method not found", None),
        }
    }

    fn on_line(&mut self, line: &str) {
        if let Some(t) = &mut self.trace {
            let _ = writeln!(t, "{line}");
        }
        let Ok(msg) = serde_json::from_str::<Value>(line) else {
            return self.send(&json!({"jsonrpc": "2.0", "id": null,
                "error": {"code": -32700, "message": "Parse error"}}));
        };
        let method = msg.get("method").and_then(Value::as_str).map(str::to_owned);
        if std::mem::take(&mut self.first)
            && self.answer == DiscoverAnswer::Exit
            && method.as_deref() != Some("initialize")
        {
            eprintln!("mcp-legacy-server: the first message is not initialize: exiting");
            std::process::exit(1);
        }
        let id = msg.get("id").cloned();
        let params = msg.get("params").cloned().unwrap_or(json!({}));
        match (method, id) {
            (Some(method), Some(id)) => {
                eprintln!("mcp-legacy-server: request {method}");
                self.on_request(&method, &id, &params)
            }
            (Some(method), None) => {
                eprintln!("mcp-legacy-server: notification {method}");
                if method == "notifications/cancelled" {
                    let id = params["requestId"].clone();
                    if let Some(pos) = self.stubborn.iter().position(|s| *s == id) {
                        self.stubborn.remove(pos);
                        self.text(&id, "too late");
                    }
                    self.cancelled.push(id);
                }
            }
            (None, Some(id)) => self.on_response(&id, &msg),
            (None, None) => {}
        }
    }

    fn on_response(&mut self, id: &Value, msg: &Value) {
        let Some(call) = id.as_str().and_then(|k| self.asking.remove(k)) else {
            return;
        };
        let text = match (msg.get("result"), msg.get("error")) {
            (Some(r), _) => r["content"]["text"].as_str().unwrap_or("").to_owned(),
            (_, Some(e)) => format!("sampling failed: {}", e["message"].as_str().unwrap_or("")),
            _ => String::new(),
        };
        self.text(&call, &text);
    }

    fn on_request(&mut self, method: &str, id: &Value, params: &Value) {
        match method {
            "initialize" => self.result(
                id,
                json!({
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": {"tools": {"listChanged": true}, "logging": {}},
                    "serverInfo": {"name": "mcp-legacy-server", "version": env!("CARGO_PKG_VERSION")},
                }),
            ),
            "ping" | "logging/setLevel" => self.result(id, json!({})),
            "tools/list" => {
                let tool = |name: &str| json!({"name": name, "inputSchema": {"type": "object"}});
                let mut tools: Vec<Value> = ["echo", "ask", "count", "flip", "slow", "stubborn", "cancelled", "exit"]
                    .into_iter()
                    .map(tool)
                    .collect();
                if self.bad_tool {
                    tools.push(json!({"name": "bad_schema", "inputSchema": true}));
                }
                self.result(id, json!({"tools": tools}))
            }
            "tools/call" => self.on_call(id, params),
            _ => self.unknown(id),
        }
    }

    fn on_call(&mut self, id: &Value, params: &Value) {
        let args = &params["arguments"];
        match params["name"].as_str().unwrap_or("") {
            "echo" => {
                let text = args["text"].as_str().unwrap_or("").to_owned();
                self.text(id, &text)
            }
            "ask" => {
                self.next_request += 1;
                let key = format!("s-{}", self.next_request);
                self.asking.insert(key.clone(), id.clone());
                self.send(
                    &json!({"jsonrpc": "2.0", "id": key, "method": "sampling/createMessage",
                    "params": {"messages": [{"role": "user",
                        "content": {"type": "text", "text": args["prompt"]}}],
                        "maxTokens": 10}}),
                );
            }
            "count" => {
                let n = args["n"].as_u64().unwrap_or(0);
                let token = params["_meta"]["progressToken"].clone();
                for i in 1..=n {
                    self.send(
                        &json!({"jsonrpc": "2.0", "method": "notifications/progress",
                        "params": {"progressToken": token, "progress": i, "total": n}}),
                    );
                }
                self.text(id, &format!("counted {n}"))
            }
            "flip" => {
                self.send(&json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
                self.text(id, "flipped")
            }
            "slow" => {}
            "stubborn" => self.stubborn.push(id.clone()),
            "cancelled" => {
                let text = Value::Array(self.cancelled.clone()).to_string();
                self.text(id, &text)
            }
            "large" => {
                let bytes = args["bytes"].as_u64().unwrap_or(0).min(LARGE_MAX_BYTES);
                let text = "x".repeat(usize::try_from(bytes).unwrap_or(0));
                self.text(id, &text)
            }
            "exit" => std::process::exit(args["code"].as_i64().unwrap_or(0) as i32),
            other => {
                let message = format!("Unknown tool: {other}");
                self.error(id, -32602, &message, None)
            }
        }
    }
}

fn main() {
    let mut answer = DiscoverAnswer::MethodNotFound;
    let mut gate: Option<PathBuf> = None;
    let bad_tool = std::env::args().any(|a| a == "--bad-tool");
    let mut args = std::env::args().skip(1).filter(|a| a != "--bad-tool");
    while let Some(a) = args.next() {
        match (a.as_str(), args.next().as_deref()) {
            ("--discover-answer", Some("method-not-found")) => {
                answer = DiscoverAnswer::MethodNotFound
            }
            ("--discover-answer", Some("invalid-params")) => answer = DiscoverAnswer::InvalidParams,
            ("--discover-answer", Some("empty-result")) => answer = DiscoverAnswer::EmptyResult,
            ("--discover-answer", Some("none")) => answer = DiscoverAnswer::None,
            ("--discover-answer", Some("exit")) => answer = DiscoverAnswer::Exit,
            ("--start-gate", Some(file)) => gate = Some(PathBuf::from(file)),
            _ => {
                eprintln!(
                    "usage: mcp-legacy-server [--discover-answer method-not-found|invalid-params|empty-result|none|exit] [--start-gate FILE] [--bad-tool]"
                );
                std::process::exit(2);
            }
        }
    }
    let trace = std::env::var_os("MCP_FIXTURE_TRACE").and_then(|p| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .ok()
    });
    let mut server = Server {
        answer,
        first: true,
        out: std::io::stdout(),
        trace,
        next_request: 0,
        asking: HashMap::new(),
        cancelled: Vec::new(),
        stubborn: Vec::new(),
        bad_tool,
    };
    if let Some(gate) = gate {
        while !gate.exists() {
            std::thread::sleep(GATE_POLL);
        }
    }
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if !line.trim().is_empty() {
            server.on_line(&line);
        }
    }
}
