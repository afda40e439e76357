//! A 2026-07-28 client of a stdio server process (`mcp-example-server`, `mcp-fixture-server`):
//! it writes raw JSON-RPC lines to the server's stdin, reads its stdout line by line, and checks
//! every message against the official 2026-07-28 schema.

use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use super::schema;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// How long a test waits for one line or for the exit.
pub const WAIT: Duration = Duration::from_secs(10);
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// Checks a result against the type its method and `resultType` call for.
pub fn assert_valid_result(method: &str, result: &Value) {
    let def = match (method, result["resultType"].as_str()) {
        (_, Some("input_required")) => "InputRequiredResult",
        ("server/discover", _) => "DiscoverResult",
        ("tools/list", _) => "ListToolsResult",
        ("tools/call", _) => "CallToolResult",
        ("prompts/list", _) => "ListPromptsResult",
        ("prompts/get", _) => "GetPromptResult",
        ("resources/list", _) => "ListResourcesResult",
        ("resources/templates/list", _) => "ListResourceTemplatesResult",
        ("resources/read", _) => "ReadResourceResult",
        ("completion/complete", _) => "CompleteResult",
        ("subscriptions/listen", _) => "SubscriptionsListenResult",
        _ => panic!("no result type for {method}"),
    };
    schema::assert_valid_2026(def, result);
    if result["resultType"] == "input_required" {
        let has_requests = result.get("inputRequests").is_some();
        assert!(has_requests || result.get("requestState").is_some());
    } else {
        assert_eq!(result["resultType"], "complete");
    }
}

/// Checks every message the server writes: a notification it may send, or a response.
pub fn assert_valid_message(message: &Value) {
    if message.get("method").is_some() {
        assert!(
            message.get("id").is_none(),
            "the server sent a request: {message}"
        );
        schema::assert_valid_2026("ServerNotification", message);
    } else if let Some(error) = message.get("error") {
        let def = match error["code"].as_i64() {
            Some(-32022) => "UnsupportedProtocolVersionError",
            Some(-32021) => "MissingRequiredClientCapabilityError",
            _ => "JSONRPCErrorResponse",
        };
        schema::assert_valid_2026(def, message);
    } else {
        schema::assert_valid_2026("JSONRPCResultResponse", message);
    }
}

/// One server process over pipes, its stdout read line by line.
pub struct StdioServer {
    pub child: Child,
    stdin: Option<ChildStdin>,
    pub stdout: Lines<BufReader<ChildStdout>>,
    next_id: i64,
}

pub fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "0"},
    })
}

/// `params` with the required `_meta` (no capabilities) merged in, unless it has one.
pub fn with_meta(mut params: Value) -> Value {
    if params.get("_meta").is_none() {
        params["_meta"] = meta(json!({}));
    }
    params
}

impl StdioServer {
    /// `mcp-example-server`, as a user starts it (it takes no arguments).
    pub fn demo() -> Self {
        Self::spawn(super::example_server_bin(), &[], &[])
    }

    /// `mcp-fixture-server <args>`.
    pub fn fixture(args: &[&str]) -> Self {
        Self::fixture_with(args, &[])
    }

    /// `mcp-fixture-server <args>` with `env` added.
    pub fn fixture_with(args: &[&str], env: &[(&str, &str)]) -> Self {
        Self::spawn(super::server_bin(), args, env)
    }

    fn spawn(program: &str, args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut command = Command::new(program);
        command
            .args(args)
            .env_remove("MCP_FIXTURE_TRACE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("spawn the server");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();
        Self {
            child,
            stdin,
            stdout,
            next_id: 0,
        }
    }

    pub async fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .expect("write");
        stdin.flush().await.expect("flush");
    }

    pub async fn send(&mut self, message: &Value) {
        self.send_line(&message.to_string()).await;
    }

    /// Sends a request with a fresh integer id; returns the id.
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    /// The next line, parsed and checked against the schema.
    pub async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(WAIT, self.stdout.next_line())
            .await
            .expect("a line within the deadline")
            .expect("read stdout")
            .expect("stdout still open");
        let message: Value = serde_json::from_str(&line).expect("a JSON line");
        assert_valid_message(&message);
        message
    }

    /// Reads until the response to `id`; returns the notifications seen before it and it.
    pub async fn response_to(&mut self, id: &Value) -> (Vec<Value>, Value) {
        let mut seen = Vec::new();
        loop {
            let message = self.recv().await;
            if message.get("id") == Some(id) && message.get("method").is_none() {
                return (seen, message);
            }
            seen.push(message);
        }
    }

    /// A request and its schema-checked result (panics on an error response).
    pub async fn result(&mut self, method: &str, params: Value) -> Value {
        let id = self.call(method, with_meta(params)).await;
        let (_, response) = self.response_to(&id).await;
        let result = response
            .get("result")
            .unwrap_or_else(|| panic!("{method} failed: {response}"))
            .clone();
        assert_valid_result(method, &result);
        result
    }

    /// A request and the `error` of its response (panics on a result).
    pub async fn error(&mut self, method: &str, params: Value) -> Value {
        let id = self.call(method, params).await;
        let (_, response) = self.response_to(&id).await;
        response
            .get("error")
            .unwrap_or_else(|| panic!("{method} did not fail: {response}"))
            .clone()
    }

    pub async fn tool(&mut self, name: &str, arguments: Value) -> Value {
        self.result("tools/call", json!({"name": name, "arguments": arguments}))
            .await
    }

    /// Closes stdin and reads what is left; returns the rest of the output and the exit status.
    pub async fn finish(mut self) -> (Vec<Value>, ExitStatus) {
        drop(self.stdin.take());
        let mut rest = Vec::new();
        while let Ok(Ok(Some(line))) = tokio::time::timeout(WAIT, self.stdout.next_line()).await {
            rest.push(serde_json::from_str(&line).expect("a JSON line"));
        }
        let status = tokio::time::timeout(WAIT, self.child.wait())
            .await
            .expect("exit within the deadline")
            .expect("wait");
        (rest, status)
    }
}

/// The text of a tool result's first content block.
pub fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}
