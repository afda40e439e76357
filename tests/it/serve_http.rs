//! Black-box tests of `mcp-bridge --serve-http ADDR -- COMMAND`: the real binary serving the
//! README's example server (`mcp-example-server`, 2026-07-28 on stdio) over Streamable HTTP to
//! 2025-11-25 clients in sessions, each session with a run of the server of its own; a real
//! HTTP client (reqwest) and the TS SDK 1.x client.

use crate::common::{self, children_of, process_alive, wait_until};

use common::http_serve::*;
use serde_json::{Value, json};
use std::time::Duration;

const V: &str = LEGACY_VERSION;

/// `mcp-bridge --serve-http ADDR [extra...] -- mcp-example-server`, with `envs`; a run of
/// the server for each session unless `extra` says otherwise.
fn serve(addr: &str, extra: &[&str], envs: &[(&str, &str)]) -> HttpServer {
    let mut args = vec!["--serve-http", addr];
    args.extend(extra);
    if !extra.contains(&"--upstream-lifetime") {
        args.extend(["--upstream-lifetime", "per-session"]);
    }
    args.extend(["--", common::example_server_bin()]);
    HttpServer::start_exact(common::bridge_bin(), &args, envs)
}

fn serve_local() -> HttpServer {
    serve("127.0.0.1:0", &[], &[])
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": V, "capabilities": {},
        "clientInfo": {"name": "serve-http-test", "version": "1.0.0"}}})
}

fn echo(id: i64, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "echo", "arguments": {"text": text}}})
}

fn echoed(id: i64, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}})
}

/// DELETE of `session`: the status.
async fn delete(client: &reqwest::Client, url: &str, session: &str) -> u16 {
    let deleted = client
        .delete(url)
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", V)
        .send()
        .await
        .expect("DELETE");
    deleted.status().as_u16()
}

/// Waits until `session` has ended: a request in it gets 404 (the test fails after [`WAIT`]).
async fn wait_until_ended(client: &reqwest::Client, url: &str, session: &str) {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let (status, _) = call(client, url, session, &echo(99, "still there?")).await;
        if status == 404 {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the session still answers ({status}) after its server's end"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The example server's processes that the bridge `bridge` runs, once there are `count` of
/// them (the test fails after [`WAIT`]).
fn servers_of(bridge: i32, count: usize) -> Vec<i32> {
    let mut servers = Vec::new();
    let found = wait_until(|| {
        servers = children_of(bridge);
        servers.len() == count
    });
    assert!(
        found,
        "{count} server processes of the bridge, found {servers:?}"
    );
    servers.sort_unstable();
    servers
}

#[tokio::test]
async fn each_session_has_a_run_of_the_server_of_its_own_that_ends_with_it() {
    let server = serve_local();
    let client = client();
    assert_eq!(
        readyz(&client, &server).await,
        (
            200,
            report(
                "mcp-example-server",
                "per-session",
                Value::Null,
                "ready",
                0,
                0
            )
        )
    );
    let (a, status, answer) =
        open_legacy_session(&client, &server.url, &initialize(), ACCEPT_BOTH).await;
    assert_eq!(status, 200);
    let result = &answer[0]["result"];
    assert_eq!(result["protocolVersion"], V);
    assert_eq!(
        result["serverInfo"],
        json!({"name": "mcp-example-server", "version": env!("CARGO_PKG_VERSION")})
    );
    assert_eq!(
        call(&client, &server.url, &a, &echo(2, "from a")).await,
        (200, vec![echoed(2, "from a")])
    );
    let first = servers_of(server.pid(), 1);
    // The session's lines name it.
    server
        .wait_for_log(&format!(
            "mcp-bridge: frontend: info: session {}: the upstream server is ready",
            &a[..8]
        ))
        .await;
    let (b, status, _) =
        open_legacy_session(&client, &server.url, &initialize(), ACCEPT_BOTH).await;
    assert_eq!(status, 200);
    assert_ne!(a, b);
    let both = servers_of(server.pid(), 2);
    assert!(both.contains(&first[0]), "{both:?}");
    assert_eq!(
        call(&client, &server.url, &b, &echo(2, "from b")).await,
        (200, vec![echoed(2, "from b")])
    );
    // DELETE ends session a, and with it a's server; b's goes on.
    assert_eq!(delete(&client, &server.url, &a).await, 204);
    assert!(
        wait_until(|| !process_alive(first[0])),
        "session a's server outlived its session"
    );
    assert_eq!(servers_of(server.pid(), 1).len(), 1);
    assert_eq!(
        call(&client, &server.url, &b, &echo(3, "still b")).await,
        (200, vec![echoed(3, "still b")])
    );
    let (status, answer) = call(&client, &server.url, &a, &echo(4, "a again")).await;
    assert_eq!(
        (status, answer),
        (
            404,
            vec![json!({"jsonrpc": "2.0", "error": {"code": -32600,
                "message": "Invalid request: no such session (it ended, or never started)",
                "data": {"cause": "unknown_session"}}})]
        )
    );
}

#[tokio::test]
async fn a_server_that_exits_ends_its_own_session_only() {
    let server = serve_local();
    let client = client();
    let (a, _, _) = open_legacy_session(&client, &server.url, &initialize(), ACCEPT_BOTH).await;
    let first = servers_of(server.pid(), 1)[0];
    let (b, _, _) = open_legacy_session(&client, &server.url, &initialize(), ACCEPT_BOTH).await;
    servers_of(server.pid(), 2);
    common::send_signal(u32::try_from(first).expect("a pid"), "-KILL");
    // The bridge of a ends (the loss of its only upstream), and so does session a.
    wait_until_ended(&client, &server.url, &a).await;
    assert_eq!(
        call(&client, &server.url, &b, &echo(2, "b")).await,
        (200, vec![echoed(2, "b")])
    );
    assert!(
        server.stderr().contains("the upstream server exited"),
        "{}",
        server.stderr()
    );
}

#[tokio::test]
async fn past_max_sessions_an_idle_session_ends_with_its_server_and_a_busy_one_stays() {
    let server = serve("127.0.0.1:0", &["--max-sessions", "1"], &[]);
    let client = client();
    let (a, _, _) = open_legacy_session(&client, &server.url, &initialize(), ACCEPT_BOTH).await;
    let first = servers_of(server.pid(), 1)[0];
    // A is idle: a second session takes its place, and a's server ends with it.
    let (b, status, _) =
        open_legacy_session(&client, &server.url, &initialize(), ACCEPT_BOTH).await;
    assert_eq!(status, 200);
    assert!(
        wait_until(|| !process_alive(first)),
        "the server of the session that made room outlived it"
    );
    assert_eq!(servers_of(server.pid(), 1).len(), 1);
    let (status, _) = call(&client, &server.url, &a, &echo(2, "a")).await;
    assert_eq!(status, 404);
    // B is busy (its GET stream is open): a third client gets 503, and no server starts.
    let stream = client
        .get(&server.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &b)
        .header("mcp-protocol-version", V)
        .send()
        .await
        .expect("GET");
    assert_eq!(stream.status().as_u16(), 200);
    let refused = legacy_post(&client, &server.url, None, ACCEPT_BOTH, &initialize())
        .send()
        .await
        .expect("POST");
    let (status, _, body) = json_answer(refused).await;
    assert_eq!(
        (status, body["error"]["data"].clone()),
        (503, json!({"cause": "too_many_sessions", "detail": 1}))
    );
    assert_eq!(servers_of(server.pid(), 1).len(), 1);
    assert_eq!(
        call(&client, &server.url, &b, &echo(3, "b")).await,
        (200, vec![echoed(3, "b")])
    );
    drop(stream);
}

#[tokio::test]
async fn a_request_without_a_session_gets_session_required_so_a_2026_client_falls_back() {
    let server = serve_local();
    let client = client();
    let discover = json!({"jsonrpc": "2.0", "id": 7, "method": "server/discover", "params": {
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    let response = client
        .post(&server.url)
        .header("content-type", "application/json")
        .header("accept", ACCEPT_BOTH)
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "server/discover")
        .body(discover.to_string())
        .send()
        .await
        .expect("POST");
    assert_eq!(
        json_answer(response).await,
        (
            400,
            "application/json".into(),
            json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32600,
                "message": "Invalid request: this endpoint serves MCP 2025-11-25 sessions: initialize first",
                "data": {"cause": "session_required"}}})
        )
    );
    // No server ran for it.
    assert_eq!(children_of(server.pid()), Vec::<i32>::new());
}

#[tokio::test]
async fn healthz_answers_and_a_foreign_origin_or_host_is_refused() {
    let server = serve_local();
    let client = client();
    let health_url = server.url.replace("/mcp", "/healthz");
    let health = client.get(&health_url).send().await.expect("GET /healthz");
    assert_eq!(
        json_answer(health).await,
        (200, "application/json".into(), json!({"status": "alive"}))
    );
    let foreign = legacy_post(&client, &server.url, None, ACCEPT_BOTH, &initialize())
        .header("origin", "https://evil.example")
        .send()
        .await
        .expect("POST");
    assert_eq!(foreign.status().as_u16(), 403);
    let rebound = legacy_post(&client, &server.url, None, ACCEPT_BOTH, &initialize())
        .header("host", "evil.example")
        .send()
        .await
        .expect("POST");
    assert_eq!(rebound.status().as_u16(), 403);
    assert_eq!(children_of(server.pid()), Vec::<i32>::new());
}

/// The endpoint of a server bound to 0.0.0.0, reached on 127.0.0.1.
fn local_url(server: &HttpServer) -> String {
    server.url.replace("0.0.0.0", "127.0.0.1")
}

#[tokio::test]
async fn beyond_loopback_a_token_made_at_start_is_required_and_written_once() {
    let server = serve("0.0.0.0:0", &[], &[]);
    let url = local_url(&server);
    server.wait_for_log("Authorization: Bearer ").await;
    let stderr = server.stderr();
    let token: String = stderr
        .split("Authorization: Bearer ")
        .nth(1)
        .expect("the token line")
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect();
    assert_eq!(token.len(), 64, "{stderr}");
    assert_eq!(stderr.matches(&token).count(), 1, "{stderr}");
    let client = client();
    let refused = legacy_post(&client, &url, None, ACCEPT_BOTH, &initialize())
        .send()
        .await
        .expect("POST");
    assert_eq!(refused.status().as_u16(), 401);
    let wrong = legacy_post(&client, &url, None, ACCEPT_BOTH, &initialize())
        .bearer_auth("0".repeat(64))
        .send()
        .await
        .expect("POST");
    assert_eq!(wrong.status().as_u16(), 401);
    assert_eq!(children_of(server.pid()), Vec::<i32>::new());
    let admitted = legacy_post(&client, &url, None, ACCEPT_BOTH, &initialize())
        .bearer_auth(&token)
        .send()
        .await
        .expect("POST");
    assert_eq!(admitted.status().as_u16(), 200);
    assert!(session_id(&admitted).is_some());
}

#[tokio::test]
async fn the_token_of_the_environment_guards_the_endpoint_and_no_server_inherits_it() {
    let token = "a-token-of-the-environment";
    let server = serve("0.0.0.0:0", &[], &[("MCP_BRIDGE_LISTEN_TOKEN", token)]);
    let url = local_url(&server);
    let client = client();
    let response = legacy_post(&client, &url, None, ACCEPT_BOTH, &initialize())
        .bearer_auth(token)
        .send()
        .await
        .expect("POST");
    assert_eq!(response.status().as_u16(), 200);
    let pid = servers_of(server.pid(), 1)[0];
    let environ = std::fs::read(format!("/proc/{pid}/environ")).expect("read the environment");
    let environ = String::from_utf8_lossy(&environ);
    assert!(
        !environ.contains("MCP_BRIDGE_LISTEN_TOKEN") && !environ.contains(token),
        "the server inherited the token"
    );
    assert!(!server.stderr().contains(token));
    assert!(!server.stderr().contains("Authorization: Bearer"));
    let refused = legacy_post(&client, &url, None, ACCEPT_BOTH, &initialize())
        .send()
        .await
        .expect("POST");
    assert_eq!(refused.status().as_u16(), 401);
}

#[tokio::test]
async fn no_auth_said_out_loud_serves_beyond_loopback_without_a_token() {
    let server = serve("0.0.0.0:0", &["--no-auth"], &[]);
    server
        .wait_for_log("--no-auth: anyone who reaches 0.0.0.0:")
        .await;
    let client = client();
    let response = legacy_post(
        &client,
        &local_url(&server),
        None,
        ACCEPT_BOTH,
        &initialize(),
    )
    .send()
    .await
    .expect("POST");
    assert_eq!(response.status().as_u16(), 200);
}

#[tokio::test]
async fn sigterm_with_sessions_and_a_stream_open_ends_every_server_and_exits_0() {
    let mut server = serve_local();
    let client = client();
    let (a, _, _) = open_legacy_session(&client, &server.url, &initialize(), ACCEPT_BOTH).await;
    let (_b, _, _) = open_legacy_session(&client, &server.url, &initialize(), ACCEPT_BOTH).await;
    let servers = servers_of(server.pid(), 2);
    // A's GET stream is open, and a call of a is under way (`slow` takes 30 s).
    let stream = client
        .get(&server.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &a)
        .header("mcp-protocol-version", V)
        .send()
        .await
        .expect("GET");
    assert_eq!(stream.status().as_u16(), 200);
    let slow = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                      "params": {"name": "slow", "arguments": {"steps": 30, "delay_ms": 1000}}});
    let under_way =
        tokio::spawn(legacy_post(&client, &server.url, Some(&a), ACCEPT_BOTH, &slow).send());
    server.signal("-TERM");
    let status = server.wait_exit(WAIT).await.expect("the bridge exits");
    assert_eq!(status.code(), Some(0), "{}", server.stderr());
    for pid in servers {
        assert!(!process_alive(pid), "server {pid} outlived the bridge");
    }
    // The call's POST got an answer or its end, never a hang.
    let answered = tokio::time::timeout(WAIT, under_way).await;
    assert!(answered.is_ok(), "the POST of the slow call hangs");
    drop(stream);
}

#[tokio::test]
async fn the_typescript_sdk_1x_client_lists_and_calls_the_example_through_the_bridge() {
    common::sdk_client::require_npm("@modelcontextprotocol/sdk", "the TypeScript SDK 1.x");
    let server = serve_local();
    let url = server.url.clone();
    let report = tokio::task::spawn_blocking(move || {
        run_client(
            "node",
            &["--input-type=module", "-e", TS1_HTTP_CLIENT],
            &url,
            None,
        )
    })
    .await
    .expect("the client");
    assert_eq!(
        report,
        json!({"protocol": V, "session": 32, "server": "mcp-example-server",
            "tools": ["echo", "add", "slow", "log", "fail", "ask_name"],
            "echo": [{"type": "text", "text": "h\u{e9} over HTTP"}], "ended": true})
    );
    // Its DELETE ended its session, and the session's server.
    assert!(
        wait_until(|| children_of(server.pid()).is_empty()),
        "the session's server outlived the client's DELETE"
    );
}

/// Runs `mcp-bridge args...` to its end: exit code and stderr.
fn run_bridge(args: &[&str]) -> (Option<i32>, String) {
    run_bridge_with(args, &[])
}

/// [`run_bridge`] with `envs` set.
fn run_bridge_with(args: &[&str], envs: &[(&str, &str)]) -> (Option<i32>, String) {
    let out = std::process::Command::new(common::bridge_bin())
        .args(args)
        .envs(envs.iter().copied())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run mcp-bridge");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn options_that_cannot_be_served_are_usage_errors_and_a_taken_port_exits_1() {
    let server = common::example_server_bin();
    for (args, cause) in [
        (
            vec!["--serve-http", "localhost:80", "--", server],
            "mcp-bridge: cli: error: invalid value 'localhost:80' for '--serve-http <ADDR>': \"localhost:80\" is not PORT or IP:PORT",
        ),
        (
            vec!["--no-auth", "--", server],
            "mcp-bridge: cli: error: --no-auth goes with --serve-http (a server on stdio has no address to guard)",
        ),
        (
            vec!["--max-sessions", "4", "--", server],
            "mcp-bridge: cli: error: --max-sessions goes with --serve-http (a server on stdio has one client)",
        ),
        (
            vec!["--upstream-lifetime", "shared", "--", server],
            "mcp-bridge: cli: error: --upstream-lifetime goes with --serve-http (a server on stdio has one client)",
        ),
        (
            vec![
                "--serve-http",
                "0",
                "--upstream-lifetime",
                "shared",
                "https://mcp.example.com/mcp",
            ],
            "mcp-bridge: cli: error: --upstream-lifetime shared serves a command: the server at a URL is shared by its clients already",
        ),
        (
            vec!["--serve-http", "0", "--config", "servers.json"],
            "mcp-bridge: cli: error: --serve-http serves one server's command or URL: the servers of a --config file are not served over HTTP yet",
        ),
    ] {
        let (code, stderr) = run_bridge(&args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.starts_with(cause), "{args:?}: {stderr}");
    }
    for repeated in [
        vec!["--serve-http", "1", "--serve-http", "2", "--", server],
        vec![
            "--serve-http",
            "1",
            "--max-sessions",
            "1",
            "--max-sessions",
            "2",
            "--",
            server,
        ],
    ] {
        let (code, stderr) = run_bridge(&repeated);
        let option = if repeated[2] == "--serve-http" {
            "--serve-http"
        } else {
            "--max-sessions"
        };
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.starts_with(&format!(
                "mcp-bridge: cli: error: {option} is given more than once (it takes one value)"
            )),
            "{stderr}"
        );
    }
    let (code, stderr) = run_bridge_with(
        &["--serve-http", "0", "--", server],
        &[("MCP_BRIDGE_LISTEN_TOKEN", "a b")],
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(
        stderr,
        "mcp-bridge: http: error: MCP_BRIDGE_LISTEN_TOKEN is no bearer token (RFC 6750: letters, digits and -._~+/, then = padding): no client could send it\n"
    );
    // A command that cannot start: exit 1 at once, with the line that says why.
    let (code, stderr) = run_bridge(&["--serve-http", "0", "--", "/nonexistent/server"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.starts_with("mcp-bridge: bridge: error: cannot start '/nonexistent/server': "),
        "{stderr}"
    );
    assert!(!stderr.contains("listening on"), "{stderr}");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let addr = taken.local_addr().expect("its address").to_string();
    let (code, stderr) = run_bridge(&["--serve-http", &addr, "--", server]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "mcp-bridge: http: error: cannot listen on {addr}: "
        )),
        "{stderr}"
    );
}

// ---- one run of the server for every session (`--upstream-lifetime shared`) ----------------

fn serve_shared() -> HttpServer {
    serve("127.0.0.1:0", &["--upstream-lifetime", "shared"], &[])
}

/// `slow` with `steps` steps of `delay_ms`, asking for progress under `token`.
fn slow(id: i64, steps: u32, delay_ms: u32, token: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "slow",
        "arguments": {"steps": steps, "delay_ms": delay_ms}, "_meta": {"progressToken": token}}})
}

/// The messages of `slow`'s answer: its progress under `token`, then its result.
fn slow_answer(id: i64, steps: u32, token: &str) -> Vec<Value> {
    let mut messages: Vec<Value> = (1..=steps)
        .map(|step| {
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                "progressToken": token, "progress": step, "total": steps,
                "message": format!("step {step} of {steps}")}})
        })
        .collect();
    messages.push(json!({"jsonrpc": "2.0", "id": id, "result": {"content": [
        {"type": "text", "text": format!("done after {steps} steps")}]}}));
    messages
}

#[tokio::test]
async fn a_shared_server_serves_every_session_with_their_own_ids_and_tokens() {
    let server = serve_shared();
    let client = client();
    let (a, _, answer) =
        open_legacy_session(&client, &server.url, &initialize(), ACCEPT_BOTH).await;
    assert_eq!(
        answer[0]["result"]["serverInfo"]["name"],
        "mcp-example-server"
    );
    let (b, _, _) = open_legacy_session(&client, &server.url, &initialize(), ACCEPT_BOTH).await;
    let run = servers_of(server.pid(), 1);
    // The same id and the same progress token in both sessions at once: each gets its own.
    let (slow_a, slow_b) = (slow(5, 2, 50, "t"), slow(5, 3, 50, "t"));
    let (in_a, in_b) = tokio::join!(
        call(&client, &server.url, &a, &slow_a),
        call(&client, &server.url, &b, &slow_b),
    );
    assert_eq!(in_a, (200, slow_answer(5, 2, "t")));
    assert_eq!(in_b, (200, slow_answer(5, 3, "t")));
    assert_eq!(
        call(&client, &server.url, &b, &echo(6, "b")).await,
        (200, vec![echoed(6, "b")])
    );
    // A session's end leaves the run to the others; a new session uses it too.
    assert_eq!(delete(&client, &server.url, &a).await, 204);
    let (c, _, _) = open_legacy_session(&client, &server.url, &initialize(), ACCEPT_BOTH).await;
    assert_eq!(
        call(&client, &server.url, &c, &echo(2, "c")).await,
        (200, vec![echoed(2, "c")])
    );
    assert_eq!(
        call(&client, &server.url, &b, &echo(7, "b")).await,
        (200, vec![echoed(7, "b")])
    );
    assert_eq!(servers_of(server.pid(), 1), run);
}

#[tokio::test]
async fn the_end_of_a_shared_server_ends_every_session_and_the_next_one_starts_it_again() {
    let server = serve_shared();
    let client = client();
    let (a, _, _) = open_legacy_session(&client, &server.url, &initialize(), ACCEPT_BOTH).await;
    let (b, _, _) = open_legacy_session(&client, &server.url, &initialize(), ACCEPT_BOTH).await;
    let first = servers_of(server.pid(), 1)[0];
    assert_eq!(
        readyz(&client, &server).await,
        (
            200,
            report(
                "mcp-example-server",
                "shared",
                json!("2026-07-28"),
                "ready",
                0,
                2
            )
        )
    );
    common::send_signal(u32::try_from(first).expect("a pid"), "-KILL");
    for session in [&a, &b] {
        wait_until_ended(&client, &server.url, session).await;
    }
    let (c, status, _) =
        open_legacy_session(&client, &server.url, &initialize(), ACCEPT_BOTH).await;
    assert_eq!(status, 200);
    assert_eq!(
        call(&client, &server.url, &c, &echo(2, "again")).await,
        (200, vec![echoed(2, "again")])
    );
    let second = servers_of(server.pid(), 1)[0];
    assert_ne!(first, second);
    // Ready again, started once more; the end of the first run is said.
    let (status, ready) = readyz(&client, &server).await;
    assert_eq!(status, 200);
    assert_eq!(ready["upstreams"][0]["state"], "ready", "{ready}");
    assert_eq!(ready["upstreams"][0]["restarts"], 1, "{ready}");
    assert_eq!(ready["upstreams"][0]["detail"], "signal 9", "{ready}");
    assert!(
        server.stderr().contains("the shared upstream ended"),
        "{}",
        server.stderr()
    );
}

#[test]
fn a_2025_server_cannot_be_shared_and_the_bridge_says_so_at_start() {
    let (code, stderr) = run_bridge(&[
        "--serve-http",
        "127.0.0.1:0",
        "--upstream-lifetime",
        "shared",
        "--",
        common::legacy_server_bin(),
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "mcp-bridge: http: error: --upstream-lifetime shared: the server is no 2026-07-28 server ("
        ) && stderr.contains("so it cannot be shared: serve it with --upstream-lifetime per-session"),
        "{stderr}"
    );
    assert!(!stderr.contains("listening on"), "{stderr}");
}

#[tokio::test]
async fn a_shared_run_that_crashes_soon_after_its_start_makes_readyz_fail_until_one_is_up() {
    let args = [
        "--serve-http",
        "127.0.0.1:0",
        "--upstream-lifetime",
        "shared",
        "--",
        common::server_bin(),
        "--test-tools",
    ];
    let server = HttpServer::start_exact(common::bridge_bin(), &args, &[]);
    let client = client();
    let (status, ready) = readyz(&client, &server).await;
    assert_eq!(
        (status, ready["upstreams"][0]["state"].clone()),
        (200, json!("ready"))
    );
    let crash = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "crash", "arguments": {"code": 3}, "_meta": modern_meta(json!({}))}});
    let response = modern_post(&client, &server.url, &crash, Some("crash"))
        .send()
        .await
        .expect("POST");
    let (_, _, body) = json_answer(response).await;
    assert_eq!(body["error"]["data"]["cause"], "upstream_exited", "{body}");
    let deadline = std::time::Instant::now() + WAIT;
    let failed = loop {
        let (status, ready) = readyz(&client, &server).await;
        if status == 503 {
            break ready;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "readyz still {status}: {ready}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(
        failed,
        json!({"ready": false, "upstreams": [{"name": "mcp-fixture-server", "lifetime": "shared",
            "era": "2026-07-28", "state": "failed", "restarts": 0, "sessions": 0,
            "detail": "exit code 3"}]})
    );
    // The next request starts a run again, and the report is ready again.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": "back"}, "_meta": modern_meta(json!({}))}});
    let response = modern_post(&client, &server.url, &call, Some("echo"))
        .send()
        .await
        .expect("POST");
    let (status, _, body) = json_answer(response).await;
    assert_eq!(
        (status, body["result"]["content"][0]["text"].clone()),
        (200, json!("back"))
    );
    let (status, ready) = readyz(&client, &server).await;
    assert_eq!(
        (
            status,
            ready["upstreams"][0]["state"].clone(),
            ready["upstreams"][0]["restarts"].clone()
        ),
        (200, json!("ready"), json!(1))
    );
}

#[tokio::test]
async fn sigterm_ends_the_shared_server_too() {
    let mut server = serve_shared();
    let client = client();
    open_legacy_session(&client, &server.url, &initialize(), ACCEPT_BOTH).await;
    open_legacy_session(&client, &server.url, &initialize(), ACCEPT_BOTH).await;
    let run = servers_of(server.pid(), 1)[0];
    server.signal("-TERM");
    let status = server.wait_exit(WAIT).await.expect("the bridge exits");
    assert_eq!(status.code(), Some(0), "{}", server.stderr());
    assert!(!process_alive(run), "the shared server outlived the bridge");
}

// ---- 2026-07-28 clients, relayed to the shared run ------------------------------------------

fn modern_meta(extra: Value) -> Value {
    let mut meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                          "io.modelcontextprotocol/clientCapabilities": {}});
    if let (Some(meta), Some(extra)) = (meta.as_object_mut(), extra.as_object()) {
        meta.extend(extra.clone());
    }
    meta
}

/// A 2026-07-28 POST of `body` with its standard headers (`Mcp-Name` when given).
fn modern_post(
    client: &reqwest::Client,
    url: &str,
    body: &Value,
    name: Option<&str>,
) -> reqwest::RequestBuilder {
    let mut builder = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", ACCEPT_BOTH)
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", body["method"].as_str().unwrap_or_default());
    if let Some(name) = name {
        builder = builder.header("mcp-name", name);
    }
    builder.body(body.to_string())
}

fn example_info_meta() -> Value {
    json!({"io.modelcontextprotocol/serverInfo":
        {"name": "mcp-example-server", "version": env!("CARGO_PKG_VERSION")}})
}

#[tokio::test]
async fn a_2026_client_is_relayed_to_the_shared_server_under_its_own_ids() {
    let server = serve_shared();
    let client = client();
    let discover = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                          "params": {"_meta": modern_meta(json!({}))}});
    let response = modern_post(&client, &server.url, &discover, None)
        .send()
        .await
        .expect("POST");
    let (status, _, body) = json_answer(response).await;
    assert_eq!(status, 200);
    assert_eq!(
        body["result"]["supportedVersions"],
        json!(["2026-07-28"]),
        "{body}"
    );
    assert_eq!(body["result"]["_meta"], example_info_meta());
    // Twenty clients at once, every one with the id 1: each gets its own answer.
    let calls = (0..20).map(|n| {
        let client = client.clone();
        let url = server.url.clone();
        async move {
            let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "echo", "arguments": {"text": format!("client {n}")},
                "_meta": modern_meta(json!({}))}});
            let response = modern_post(&client, &url, &call, Some("echo"))
                .send()
                .await
                .expect("POST");
            json_answer(response).await
        }
    });
    let answers = futures_util::future::join_all(calls).await;
    for (n, answer) in answers.into_iter().enumerate() {
        assert_eq!(
            answer,
            (
                200,
                "application/json".into(),
                json!({"jsonrpc": "2.0", "id": 1, "result": {
                "resultType": "complete",
                "content": [{"type": "text", "text": format!("client {n}")}],
                "_meta": example_info_meta()}})
            )
        );
    }
    // Progress under the client's own token, on the answer's stream, then the result.
    let slow = json!({"jsonrpc": "2.0", "id": "s", "method": "tools/call", "params": {
        "name": "slow", "arguments": {"steps": 2, "delay_ms": 20},
        "_meta": modern_meta(json!({"progressToken": "pt"}))}});
    let response = modern_post(&client, &server.url, &slow, Some("slow"))
        .send()
        .await
        .expect("POST");
    let mut expected = slow_answer(0, 2, "pt");
    expected.pop();
    expected.push(json!({"jsonrpc": "2.0", "id": "s", "result": {"resultType": "complete",
        "content": [{"type": "text", "text": "done after 2 steps"}], "_meta": example_info_meta()}}));
    assert_eq!(messages(response).await, expected);
    // One run served all of it, and no session was made.
    assert_eq!(servers_of(server.pid(), 1).len(), 1);
}

#[tokio::test]
async fn a_2026_request_is_checked_as_http_asks_before_it_is_relayed() {
    let server = serve_shared();
    let client = client();
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": "x"}, "_meta": modern_meta(json!({}))}});
    let response = modern_post(&client, &server.url, &call, None)
        .send()
        .await
        .expect("POST");
    assert_eq!(
        json_answer(response).await,
        (
            400,
            "application/json".into(),
            json!({"jsonrpc": "2.0", "id": 3, "error": {
            "code": -32020, "message": "Header mismatch",
            "data": {"header": "Mcp-Name", "detail": "missing"}}})
        )
    );
    let no_meta = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {}});
    let response = modern_post(&client, &server.url, &no_meta, None)
        .send()
        .await
        .expect("POST");
    let (status, _, body) = json_answer(response).await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (400, json!(-32602)),
        "{body}"
    );
    // The run of the start (its tools read for the Mcp-Param-* checks) is the only one.
    assert_eq!(servers_of(server.pid(), 1).len(), 1);
}

#[tokio::test]
async fn a_2026_client_that_goes_away_mid_call_cancels_its_request_at_the_server() {
    // The fixture's `chatter` runs until it is cancelled, then changes its tools list: a
    // session's listen stream on the same run sees that change.
    let args = [
        "--serve-http",
        "127.0.0.1:0",
        "--upstream-lifetime",
        "shared",
        "--",
        common::server_bin(),
        "--test-tools",
    ];
    let server = HttpServer::start_exact(common::bridge_bin(), &args, &[]);
    let client = client();
    let (session, _, _) =
        open_legacy_session(&client, &server.url, &initialize(), ACCEPT_BOTH).await;
    let stream = client
        .get(&server.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", V)
        .send()
        .await
        .expect("GET");
    let mut session_events = Events::new(stream);
    let chatter = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "chatter", "arguments": {"interval_ms": 20, "late": 0},
        "_meta": modern_meta(json!({"progressToken": "c"}))}});
    let response = modern_post(&client, &server.url, &chatter, Some("chatter"))
        .send()
        .await
        .expect("POST");
    let mut events = Events::new(response);
    for _ in 0..2 {
        let event = events.next().await.expect("a progress of chatter");
        assert_eq!(event["params"]["progressToken"], "c", "{event}");
    }
    drop(events);
    let change = tokio::time::timeout(WAIT, session_events.next())
        .await
        .expect("the tools list change after the cancel, in time");
    assert_eq!(
        change,
        Some(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}))
    );
}

#[test]
fn the_python_client_falls_back_to_a_session_and_with_a_shared_run_speaks_2026() {
    let python = common::sdk_client::interop_dir().join(".venv/bin/python3");
    assert!(
        python.exists(),
        "the Python mcp 2.x client is not installed (scripts/test does)"
    );
    let python = python.to_string_lossy().into_owned();
    for (extra, protocol) in [
        (&[][..], "2025-11-25"),
        (&["--upstream-lifetime", "shared"][..], "2026-07-28"),
    ] {
        let server = serve("127.0.0.1:0", extra, &[]);
        let report = run_client(&python, &["-c", PY2_HTTP_CLIENT], &server.url, None);
        assert_eq!(
            report,
            json!({"protocol": protocol, "server": "mcp-example-server",
                "tools": ["echo", "add", "slow", "log", "fail", "ask_name"],
                "echo": ["h\u{e9} over HTTP"]}),
            "{extra:?}"
        );
    }
}

#[test]
fn the_typescript_sdk_v2_client_pinned_to_2026_uses_the_shared_run() {
    common::sdk_client::require_npm("@modelcontextprotocol/client", "the TypeScript SDK v2");
    let server = serve_shared();
    let report = run_client(
        "node",
        &["--input-type=module", "-e", TS2_HTTP_CLIENT],
        &server.url,
        None,
    );
    assert_eq!(
        report,
        json!({"server": "mcp-example-server",
            "tools": ["echo", "add", "slow", "log", "fail", "ask_name"],
            "echo": [{"type": "text", "text": "h\u{e9} over HTTP"}]})
    );
}

/// `GET /readyz`: its status and report.
async fn readyz(client: &reqwest::Client, server: &HttpServer) -> (u16, Value) {
    let url = server.url.replace("/mcp", "/readyz");
    let (status, _, body) = json_answer(client.get(&url).send().await.expect("GET /readyz")).await;
    (status, body)
}

/// The readiness report of one upstream.
fn report(
    name: &str,
    lifetime: &str,
    era: Value,
    state: &str,
    restarts: u64,
    sessions: u64,
) -> Value {
    json!({"ready": true, "upstreams": [{"name": name, "lifetime": lifetime, "era": era,
        "state": state, "restarts": restarts, "sessions": sessions}]})
}

// ---- the lifetime by the server's era (`--upstream-lifetime auto`, the default) -------------

#[tokio::test]
async fn by_default_a_2026_server_is_shared_and_serves_both_revisions() {
    let args = [
        "--serve-http",
        "127.0.0.1:0",
        "--",
        common::example_server_bin(),
    ];
    let server = HttpServer::start_exact(common::bridge_bin(), &args, &[]);
    server
        .wait_for_log("the server speaks MCP 2026-07-28: one run of it serves every session")
        .await;
    // The run of the probe is the shared one.
    let run = servers_of(server.pid(), 1);
    let client = client();
    let shared = |sessions| {
        report(
            "mcp-example-server",
            "shared",
            json!("2026-07-28"),
            "ready",
            0,
            sessions,
        )
    };
    assert_eq!(readyz(&client, &server).await, (200, shared(0)));
    let (a, _, _) = open_legacy_session(&client, &server.url, &initialize(), ACCEPT_BOTH).await;
    let (b, _, _) = open_legacy_session(&client, &server.url, &initialize(), ACCEPT_BOTH).await;
    assert_eq!(
        call(&client, &server.url, &a, &echo(2, "a")).await,
        (200, vec![echoed(2, "a")])
    );
    assert_eq!(
        call(&client, &server.url, &b, &echo(2, "b")).await,
        (200, vec![echoed(2, "b")])
    );
    let modern = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": "2026"}, "_meta": modern_meta(json!({}))}});
    let response = modern_post(&client, &server.url, &modern, Some("echo"))
        .send()
        .await
        .expect("POST");
    let (status, _, body) = json_answer(response).await;
    assert_eq!(
        (status, body["result"]["content"].clone()),
        (200, json!([{"type": "text", "text": "2026"}]))
    );
    assert_eq!(servers_of(server.pid(), 1), run);
    assert_eq!(readyz(&client, &server).await, (200, shared(2)));
}

#[tokio::test]
async fn by_default_a_2025_server_gets_a_run_for_each_session() {
    let args = [
        "--serve-http",
        "127.0.0.1:0",
        "--",
        common::legacy_server_bin(),
    ];
    let server = HttpServer::start_exact(common::bridge_bin(), &args, &[]);
    server
        .wait_for_log("each session gets a run of its own (--upstream-lifetime per-session)")
        .await;
    // The run of the probe has ended.
    assert!(
        wait_until(|| children_of(server.pid()).is_empty()),
        "the probe's run outlived the probe"
    );
    let client = client();
    assert_eq!(
        readyz(&client, &server).await,
        (
            200,
            report(
                "mcp-legacy-server",
                "per-session",
                json!("2025-11-25"),
                "ready",
                0,
                0
            )
        )
    );
    let (a, status, answer) =
        open_legacy_session(&client, &server.url, &initialize(), ACCEPT_BOTH).await;
    assert_eq!(
        (status, answer[0]["result"]["protocolVersion"].clone()),
        (200, json!(V))
    );
    let (b, status, _) =
        open_legacy_session(&client, &server.url, &initialize(), ACCEPT_BOTH).await;
    assert_eq!(status, 200);
    assert_eq!(servers_of(server.pid(), 2).len(), 2);
    for session in [&a, &b] {
        let (status, answer) = call(&client, &server.url, session, &echo(2, "legacy")).await;
        assert_eq!(
            (status, answer[0]["id"].clone()),
            (200, json!(2)),
            "{answer:?}"
        );
        assert!(answer[0].get("result").is_some(), "{answer:?}");
    }
    // And a 2026-07-28 client is told to start a session.
    let modern = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {
        "_meta": modern_meta(json!({}))}});
    let response = modern_post(&client, &server.url, &modern, None)
        .send()
        .await
        .expect("POST");
    let (status, _, body) = json_answer(response).await;
    assert_eq!(
        (status, body["error"]["data"]["cause"].clone()),
        (400, json!("session_required"))
    );
}

/// The address `http://ADDR/mcp` of a server.
fn addr_of(server: &HttpServer) -> std::net::SocketAddr {
    let authority = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp");
    authority.parse().expect("IP:PORT")
}

#[tokio::test]
async fn two_bridges_behind_a_round_robin_relay_serve_a_2026_client_whose_calls_alternate() {
    // 2026-07-28 requests keep nothing between them: any bridge of a pool answers any one.
    let bridges = [serve_shared(), serve_shared()];
    let backends = [addr_of(&bridges[0]), addr_of(&bridges[1])];
    let relay = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let relay_url = format!("http://{}/mcp", relay.local_addr().expect("its address"));
    let chosen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = chosen.clone();
    // The relay: each connection to the next bridge in turn, bytes copied both ways.
    tokio::spawn(async move {
        let mut next = 0;
        while let Ok((mut inbound, _)) = relay.accept().await {
            let backend = next % backends.len();
            next += 1;
            record.lock().expect("the record").push(backend);
            let to = backends[backend];
            tokio::spawn(async move {
                if let Ok(mut outbound) = tokio::net::TcpStream::connect(to).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    // A connection per request, so that each goes through the relay's turn.
    common::http_serve::client();
    let client = reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(0)
        .build()
        .expect("an HTTP client");
    for n in 0..10 {
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "echo", "arguments": {"text": format!("call {n}")},
            "_meta": modern_meta(json!({}))}});
        let response = modern_post(&client, &relay_url, &call, Some("echo"))
            .send()
            .await
            .expect("POST");
        let (status, _, body) = json_answer(response).await;
        assert_eq!(
            (status, body["result"]["content"].clone()),
            (200, json!([{"type": "text", "text": format!("call {n}")}])),
            "call {n}"
        );
    }
    let chosen = chosen.lock().expect("the record").clone();
    assert_eq!(chosen, [0, 1, 0, 1, 0, 1, 0, 1, 0, 1]);
}
