//! The harness of the tests of the server API over HTTP (`http_server`, `http_sessions`,
//! `http_edges`, `http_cors`, `http_close`): a server process on a loopback port, a real HTTP
//! client (reqwest), the POSTs of a 2025-11-25 session, the events of an SSE answer, and the
//! client scripts of the interop set.

use super::{conformance_fixture_bin, embedded_example_bin, server_bin};
use futures_util::StreamExt;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a test waits for an event before it fails.
pub const WAIT: Duration = Duration::from_secs(20);

/// A server process serving HTTP on a port of its choosing; killed when dropped.
pub struct HttpServer {
    child: Child,
    /// The endpoint, `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    /// Its stderr but the `listening on` line.
    stderr: Arc<Mutex<String>>,
}

/// How long [`HttpServer::wait_for_log`] waits for a line.
const LOG_WAIT: Duration = Duration::from_secs(30);

impl HttpServer {
    /// Starts `program args... --http 127.0.0.1:0` and reads its URL from its stderr line
    /// `NAME: listening on URL`.
    pub fn start(program: &str, args: &[&str]) -> HttpServer {
        let mut args = args.to_vec();
        args.extend(["--http", "127.0.0.1:0"]);
        Self::start_exact(program, &args, &[])
    }

    /// Starts `program args...` as given, with `envs` set, and reads its URL from its stderr
    /// line `... listening on URL`.
    pub fn start_exact(program: &str, args: &[&str], envs: &[(&str, &str)]) -> HttpServer {
        let mut child = Command::new(program)
            .args(args)
            .envs(envs.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the HTTP server");
        let stderr = child.stderr.take().expect("stderr");
        let mut lines = BufReader::new(stderr).lines();
        let mut before = String::new();
        let url = loop {
            let line = lines.next().expect("a stderr line").expect("read stderr");
            if let Some((_, url)) = line.split_once("listening on ") {
                break url.trim().to_owned();
            }
            before.push_str(&line);
            before.push('\n');
        };
        // The rest of stderr is read so that the server never blocks on it, and kept with
        // the lines before the URL.
        let stderr = Arc::new(Mutex::new(before));
        let kept = stderr.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                if let Ok(mut kept) = kept.lock() {
                    kept.push_str(&line);
                    kept.push('\n');
                }
            }
        });
        HttpServer { child, url, stderr }
    }

    /// Waits until the server's stderr has a line containing `text` (at most [`LOG_WAIT`]).
    pub async fn wait_for_log(&self, text: &str) {
        let deadline = std::time::Instant::now() + LOG_WAIT;
        loop {
            if self.stderr.lock().is_ok_and(|s| s.contains(text)) {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no stderr line with {text:?} in {LOG_WAIT:?}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    pub fn example() -> HttpServer {
        Self::start(&embedded_example_bin().to_string_lossy(), &[])
    }

    pub fn fixture() -> HttpServer {
        Self::start(server_bin(), &["--test-tools"])
    }

    pub fn conformance() -> HttpServer {
        Self::start(&conformance_fixture_bin().to_string_lossy(), &[])
    }
}

impl HttpServer {
    /// The server's process id.
    pub fn pid(&self) -> i32 {
        i32::try_from(self.child.id()).expect("a pid")
    }

    /// Its stderr but the `listening on` line, so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Sends the server `signal` with kill(1) (`"-TERM"`, `"-INT"`).
    pub fn signal(&self, signal: &str) {
        super::send_signal(self.child.id(), signal);
    }

    /// The exit status, once the server has exited (at most `limit` from now; `None`: it
    /// still runs).
    pub async fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let end = std::time::Instant::now() + limit;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if std::time::Instant::now() > end {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A client of its own (a connection of its own), without the proxies of the environment.
pub fn client() -> reqwest::Client {
    mcp_bridge::transport::http::tls::install_provider();
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("an HTTP client")
}

/// Status, content type and JSON body of a JSON answer.
pub async fn json_answer(response: reqwest::Response) -> (u16, String, Value) {
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let text = response.text().await.expect("the body");
    (
        status,
        content_type,
        serde_json::from_str(&text).unwrap_or(Value::Null),
    )
}

/// The protocol revision of 2025-11-25 clients (sessions).
pub const LEGACY_VERSION: &str = "2025-11-25";
/// The `Accept` of a 2025-11-25 client's POST: JSON or SSE.
pub const ACCEPT_BOTH: &str = "application/json, text/event-stream";

/// A POST of `body` as a 2025-11-25 client sends it, with `accept`, in `session` when given.
pub fn legacy_post(
    client: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    accept: &str,
    body: &Value,
) -> reqwest::RequestBuilder {
    let mut builder = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", accept);
    if let Some(session) = session {
        builder = builder
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", LEGACY_VERSION);
    }
    builder.body(body.to_string())
}

/// A request in `session`: its status and messages.
pub async fn call(
    client: &reqwest::Client,
    url: &str,
    session: &str,
    body: &Value,
) -> (u16, Vec<Value>) {
    let response = legacy_post(client, url, Some(session), ACCEPT_BOTH, body)
        .send()
        .await
        .expect("POST");
    (response.status().as_u16(), messages(response).await)
}

/// The answer's `Mcp-Session-Id`.
pub fn session_id(response: &reqwest::Response) -> Option<String> {
    response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// Every message of an answer: the JSON body, or each event of an SSE stream.
pub async fn messages(response: reqwest::Response) -> Vec<Value> {
    let is_sse = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if is_sse {
        Events::new(response).all().await
    } else {
        let (_, _, body) = json_answer(response).await;
        vec![body]
    }
}

/// Starts a session with `initialize` (a POST with `accept`), then
/// `notifications/initialized` (202): its id and the `initialize` answer's status and
/// messages.
pub async fn open_legacy_session(
    client: &reqwest::Client,
    url: &str,
    initialize: &Value,
    accept: &str,
) -> (String, u16, Vec<Value>) {
    let response = legacy_post(client, url, None, accept, initialize)
        .send()
        .await
        .expect("POST initialize");
    let status = response.status().as_u16();
    let session = session_id(&response).expect("an Mcp-Session-Id on the initialize answer");
    let answer = messages(response).await;
    let initialized = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let response = legacy_post(client, url, Some(&session), accept, &initialized)
        .send()
        .await
        .expect("POST initialized");
    assert_eq!(response.status().as_u16(), 202);
    (session, status, answer)
}

/// The events of an SSE stream, each `data` as JSON; keep-alive comments skipped.
pub struct Events {
    stream: futures_util::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    buffer: String,
}

impl Events {
    pub fn new(response: reqwest::Response) -> Events {
        Events {
            stream: response.bytes_stream().boxed(),
            buffer: String::new(),
        }
    }

    /// The next event's data, or `None` at the end of the stream.
    pub async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let data: Vec<&str> = block
                    .lines()
                    .filter_map(|l| l.strip_prefix("data: "))
                    .collect();
                if data.is_empty() {
                    continue;
                }
                return Some(serde_json::from_str(&data.join("\n")).unwrap_or(Value::Null));
            }
            match tokio::time::timeout(WAIT, self.stream.next()).await {
                Ok(Some(Ok(chunk))) => self.buffer.push_str(&String::from_utf8_lossy(&chunk)),
                Ok(_) => return None,
                Err(_) => panic!("no SSE event within {WAIT:?}; got {:?}", self.buffer),
            }
        }
    }

    /// Every event to the end of the stream.
    pub async fn all(mut self) -> Vec<Value> {
        let mut all = Vec::new();
        while let Some(event) = self.next().await {
            all.push(event);
        }
        all
    }
}

/// Runs a client script (`program args`) of the interop set ([`super::sdk_client::run`])
/// with `MCP_URL` set to `url` (and `MCP_TOKEN` to `token`).
pub fn run_client(program: &str, args: &[&str], url: &str, token: Option<&str>) -> Value {
    let mut env = vec![("MCP_URL", url)];
    if let Some(token) = token {
        env.push(("MCP_TOKEN", token));
    }
    super::sdk_client::run(program, args, &env)
}

/// The TS SDK 1.x client (`@modelcontextprotocol/sdk` 1.32.2: 2025-11-25, sessions) over its
/// Streamable HTTP transport; it ends by deleting its session.
pub const TS1_HTTP_CLIENT: &str = r#"
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
const transport = new StreamableHTTPClientTransport(new URL(process.env.MCP_URL));
const client = new Client({ name: 'ts-sdk-1-http', version: '1.0.0' });
await client.connect(transport);
const out = { protocol: transport.protocolVersion, session: transport.sessionId?.length,
    server: client.getServerVersion()?.name };
out.tools = (await client.listTools()).tools.map(t => t.name);
out.echo = (await client.callTool({ name: 'echo', arguments: { text: 'h\u00e9 over HTTP' } })).content;
await transport.terminateSession();
out.ended = transport.sessionId === undefined;
await client.close();
console.log(JSON.stringify(out));
"#;

/// The TS SDK v2 client (`@modelcontextprotocol/client` 2.4.0, pinned to 2026-07-28) over its
/// Streamable HTTP transport, with `Authorization: Bearer $MCP_TOKEN` when it is set.
pub const TS2_HTTP_CLIENT: &str = r#"
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
const headers = process.env.MCP_TOKEN ? { Authorization: `Bearer ${process.env.MCP_TOKEN}` } : {};
const transport = new StreamableHTTPClientTransport(new URL(process.env.MCP_URL), { requestInit: { headers } });
const client = new Client({ name: 'ts-sdk-2-http', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } });
await client.connect(transport);
const out = { server: client.getServerVersion()?.name };
out.tools = (await client.listTools()).tools.map(t => t.name);
out.echo = (await client.callTool({ name: 'echo', arguments: { text: 'h\u00e9 over HTTP' } })).content;
await client.close();
console.log(JSON.stringify(out));
"#;

/// The Python `mcp` 2.3.0 client (`Client(url)`: Streamable HTTP, mode auto).
pub const PY2_HTTP_CLIENT: &str = r#"
import anyio, json, os
from mcp import Client

async def main():
    out = {}
    async with Client(os.environ["MCP_URL"]) as client:
        out["protocol"] = client.protocol_version
        out["server"] = client.server_info.name
        out["tools"] = [t.name for t in (await client.list_tools()).tools]
        echo = await client.call_tool("echo", {"text": "h\u00e9 over HTTP"})
        out["echo"] = [c.text for c in echo.content]
    print(json.dumps(out))

anyio.run(main)
"#;
