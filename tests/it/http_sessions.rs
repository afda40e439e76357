//! Black-box tests of 2025-11-25 Streamable HTTP sessions of the server API
//! (`server::http` with `embed::serve_http`: each session an in-process bridge): the embedded
//! example (`examples/embedded --http`) and the fixture server (`mcp-fixture-server
//! --test-tools --http`, with its session flags) as processes on a loopback port, a real HTTP
//! client (reqwest), and the TS SDK 1.x client.

use crate::common;

use common::http_serve::*;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const V: &str = LEGACY_VERSION;

fn initialize(capabilities: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": V, "capabilities": capabilities,
        "clientInfo": {"name": "http-sessions-test", "version": "1.0.0"}}})
}

fn request(id: Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn example_info() -> Value {
    json!({"name": "embedded-example", "version": "1.0.0"})
}

/// The example's `initialize` result through the in-process bridge.
fn example_initialize_result() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": V,
        "capabilities": {"logging": {}, "tools": {"listChanged": true},
            "prompts": {"listChanged": true},
            "resources": {"listChanged": true, "subscribe": true}},
        "serverInfo": example_info()}})
}

fn example_tools() -> Value {
    json!([
        {"name": "echo", "inputSchema": {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
        {"name": "ask_name", "inputSchema": {"type": "object"}},
        {"name": "add_tool", "inputSchema": {"type": "object"}},
    ])
}

fn text_result(id: i64, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}})
}

fn list_changed(list: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": format!("notifications/{list}/list_changed")})
}

/// Starts a session (`initialize` with `capabilities`, then `notifications/initialized`): its
/// id and the `initialize` answer's status and messages.
async fn open_session(
    client: &reqwest::Client,
    url: &str,
    capabilities: Value,
) -> (String, u16, Vec<Value>) {
    open_legacy_session(client, url, &initialize(capabilities), ACCEPT_BOTH).await
}

/// Sends `probe` every 20 ms until its answer's status is `until`, every answer before it
/// `meanwhile`: the time from `started` to that answer (the test fails, saying `what`,
/// after [`WAIT`]).
async fn time_until_status<R>(
    started: Instant,
    meanwhile: u16,
    until: u16,
    what: &str,
    mut probe: impl FnMut() -> R,
) -> Duration
where
    R: std::future::Future<Output = reqwest::Result<reqwest::Response>>,
{
    let deadline = Instant::now() + WAIT;
    loop {
        let status = probe().await.expect("POST").status().as_u16();
        if status == until {
            return started.elapsed();
        }
        assert_eq!(status, meanwhile);
        assert!(Instant::now() < deadline, "{what} within {WAIT:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn unknown_session() -> Value {
    json!({"jsonrpc": "2.0", "error": {"code": -32600,
        "message": "Invalid request: no such session (it ended, or never started)",
        "data": {"cause": "unknown_session"}}})
}

/// Asserts that `session` has ended: `request` in it gets 404 with the unknown-session error.
async fn assert_ended(client: &reqwest::Client, url: &str, session: &str, request: &Value) {
    let response = legacy_post(client, url, Some(session), ACCEPT_BOTH, request)
        .send()
        .await
        .expect("POST");
    assert_eq!(
        json_answer(response).await,
        (404, "application/json".into(), unknown_session())
    );
}

/// Asserts that `session` still answers: `request` in it gets 200 and the answer to its id.
async fn assert_answers(client: &reqwest::Client, url: &str, session: &str, request: &Value) {
    let (status, answer) = call(client, url, session, request).await;
    assert_eq!(
        (status, answer[0]["id"].clone()),
        (200, request["id"].clone())
    );
}

#[tokio::test]
async fn initialize_starts_a_session_that_lists_and_calls_the_example_tools() {
    let server = HttpServer::example();
    let client = client();
    let (session, status, answer) = open_session(&client, &server.url, json!({})).await;
    assert_eq!(status, 200);
    assert_eq!(answer, [example_initialize_result()]);
    assert_eq!(session.len(), 32, "{session}");
    assert!(session.bytes().all(|c| c.is_ascii_hexdigit()), "{session}");
    // The 2026-07-28 header checks do not apply: no Mcp-Method, no _meta.
    let (status, answer) = call(
        &client,
        &server.url,
        &session,
        &request(json!(2), "tools/list", json!({})),
    )
    .await;
    assert_eq!(
        (status, answer),
        (
            200,
            vec![json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": example_tools()}})]
        )
    );
    let echo = request(
        json!(3),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "h\u{e9} in a session"}}),
    );
    let (status, answer) = call(&client, &server.url, &session, &echo).await;
    assert_eq!(
        (status, answer),
        (200, vec![text_result(3, "h\u{e9} in a session")])
    );
    // A second session is another bridge: its own id, the same answers.
    let (other, _, answer) = open_session(&client, &server.url, json!({})).await;
    assert_ne!(other, session);
    assert_eq!(answer, [example_initialize_result()]);
}

#[tokio::test]
async fn the_get_stream_carries_the_sessions_list_changes_and_a_new_one_takes_over() {
    let server = HttpServer::example();
    let client = client();
    let (session, _, _) = open_session(&client, &server.url, json!({})).await;
    let get = || {
        client
            .get(&server.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", V)
            .send()
    };
    let response = get().await.expect("GET");
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(
        response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("text/event-stream")
    );
    let mut events = Events::new(response);
    // The first acknowledgment of the bridge's listen stream: one change per list, which
    // waited for this stream if it came before it.
    for list in ["tools", "prompts", "resources"] {
        assert_eq!(events.next().await, Some(list_changed(list)));
    }
    // A second GET takes over (a client that lost its stream without the server noticing
    // opens a new one): the first ends, and the session's messages go to the second.
    let second = get().await.expect("GET");
    assert_eq!(second.status().as_u16(), 200);
    assert_eq!(session_id(&second).as_deref(), Some(session.as_str()));
    assert_eq!(events.all().await, Vec::<Value>::new());
    let mut events = Events::new(second);
    let add = request(json!(2), "tools/call", json!({"name": "add_tool"}));
    let (status, answer) = call(&client, &server.url, &session, &add).await;
    assert_eq!(
        (status, answer),
        (200, vec![text_result(2, "The tool list changed.")])
    );
    assert_eq!(events.next().await, Some(list_changed("tools")));
}

#[tokio::test]
async fn a_deleted_session_and_an_unknown_one_get_404() {
    let server = HttpServer::example();
    let client = client();
    let (session, _, _) = open_session(&client, &server.url, json!({})).await;
    let delete = |id: &str| {
        client
            .delete(&server.url)
            .header("mcp-session-id", id)
            .header("mcp-protocol-version", V)
            .send()
    };
    assert_eq!(
        delete(&session).await.expect("DELETE").status().as_u16(),
        204
    );
    let list = request(json!(2), "tools/list", json!({}));
    assert_ended(&client, &server.url, &session, &list).await;
    let get = client
        .get(&server.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .send()
        .await
        .expect("GET");
    assert_eq!(get.status().as_u16(), 404);
    assert_eq!(
        delete(&session).await.expect("DELETE").status().as_u16(),
        404
    );
    let response = legacy_post(
        &client,
        &server.url,
        Some("0123456789abcdef0123456789abcdef"),
        ACCEPT_BOTH,
        &list,
    )
    .send()
    .await
    .expect("POST");
    assert_eq!(json_answer(response).await.0, 404);
}

#[tokio::test]
async fn a_session_ends_after_its_idle_time_limit() {
    const IDLE_MS: u64 = 500;
    let server = HttpServer::start(
        common::server_bin(),
        &[
            "--test-tools",
            "--http-session-idle-ms",
            &IDLE_MS.to_string(),
        ],
    );
    let client = client();
    let started = Instant::now();
    let (session, status, _) = open_session(&client, &server.url, json!({})).await;
    assert_eq!(status, 200);
    // A POST whose body is no JSON-RPC message is no request: it finds the session (400)
    // without keeping it alive, until the session has ended (404).
    let probe = || {
        client
            .post(&server.url)
            .header("content-type", "application/json")
            .header("mcp-session-id", &session)
            .body("{not json")
            .send()
    };
    let ended = time_until_status(started, 400, 404, "the session did not end", probe).await;
    assert!(
        ended >= Duration::from_millis(IDLE_MS),
        "ended after {ended:?}"
    );
}

/// The GET stream of `session`, open.
async fn open_get(client: &reqwest::Client, url: &str, session: &str) -> reqwest::Response {
    let response = client
        .get(url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", V)
        .send()
        .await
        .expect("GET");
    assert_eq!(response.status().as_u16(), 200);
    response
}

/// The server with room for two sessions (`--http-max-sessions 2`), a client, and a
/// `tools/list` request (id 2).
fn two_sessions_at_most() -> (HttpServer, reqwest::Client, Value) {
    let server = HttpServer::start(
        common::server_bin(),
        &["--test-tools", "--http-max-sessions", "2"],
    );
    (server, client(), request(json!(2), "tools/list", json!({})))
}

/// An `initialize` POST without a session.
fn initialize_post(client: &reqwest::Client, url: &str) -> reqwest::RequestBuilder {
    legacy_post(client, url, None, ACCEPT_BOTH, &initialize(json!({})))
}

/// [`initialize_post`], sent.
async fn post_initialize(client: &reqwest::Client, url: &str) -> reqwest::Response {
    initialize_post(client, url)
        .send()
        .await
        .expect("POST initialize")
}

#[tokio::test]
async fn at_the_session_bound_an_initialize_ends_the_session_idle_longest_never_a_busy_one() {
    let (server, client, list) = two_sessions_at_most();
    let url = &server.url;
    // `idle` has no stream open; `busy` holds its GET stream.
    let (idle, _, _) = open_session(&client, url, json!({})).await;
    let (busy, _, _) = open_session(&client, url, json!({})).await;
    let _busy_stream = open_get(&client, url, &busy).await;
    // A third `initialize` (a burst of them, from any local client, used to lock every
    // other client out) ends the idle session, not the busy one.
    let (third, status, _) = open_session(&client, url, json!({})).await;
    assert_eq!(status, 200);
    assert_ended(&client, url, &idle, &list).await;
    assert_answers(&client, url, &busy, &list).await;
    // Every session busy: 503 until one is idle again.
    let third_stream = open_get(&client, url, &third).await;
    let response = post_initialize(&client, url).await;
    assert_eq!(session_id(&response), None);
    assert_eq!(
        json_answer(response).await,
        (
            503,
            "application/json".into(),
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603,
                "message": "Too many sessions",
                "data": {"cause": "too_many_sessions", "detail": 2}}})
        )
    );
    drop(third_stream);
    let probe = || initialize_post(&client, url).send();
    let what = "the session whose stream closed did not become idle";
    time_until_status(Instant::now(), 503, 200, what, probe).await;
    assert_answers(&client, url, &busy, &list).await;
}

#[tokio::test]
async fn at_the_session_bound_an_initialize_ends_the_one_of_two_idle_sessions_idle_longer() {
    let (server, client, list) = two_sessions_at_most();
    let url = &server.url;
    let (first, _, _) = open_session(&client, url, json!({})).await;
    let (second, _, _) = open_session(&client, url, json!({})).await;
    // A request in `first` after `second` opened: both idle, `second` the longer.
    assert_answers(&client, url, &first, &list).await;
    let (_, status, _) = open_session(&client, url, json!({})).await;
    assert_eq!(status, 200);
    assert_ended(&client, url, &second, &list).await;
    assert_answers(&client, url, &first, &list).await;
}

#[tokio::test]
async fn at_the_session_bound_a_session_with_a_call_in_flight_is_busy_and_not_ended() {
    let (server, client, list) = two_sessions_at_most();
    let url = &server.url;
    let (calling, _, _) = open_session(&client, url, json!({})).await;
    let (idle, _, _) = open_session(&client, url, json!({})).await;
    // `chatter` reports progress at once and then every second, and never answers: once its
    // first progress came, the call is in flight. By the time of their last answers
    // `calling` has been idle longer than `idle`, but it is busy.
    let chatter = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "chatter", "arguments": {"interval_ms": 1000, "late": 0},
        "_meta": {"progressToken": "C"}}});
    let response = legacy_post(&client, url, Some(&calling), ACCEPT_BOTH, &chatter)
        .send()
        .await
        .expect("POST chatter");
    let mut events = Events::new(response);
    let progress = events.next().await.expect("a progress of chatter");
    assert_eq!(
        progress,
        json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": "C", "progress": 1, "message": "tick 1"}})
    );
    let (_, status, _) = open_session(&client, url, json!({})).await;
    assert_eq!(status, 200);
    assert_ended(&client, url, &idle, &list).await;
    assert_answers(&client, url, &calling, &list).await;
    drop(events);
}

#[tokio::test]
async fn at_the_session_bound_a_burst_of_initialize_posts_ends_its_own_sessions_first() {
    let (server, client, list) = two_sessions_at_most();
    let url = &server.url;
    // A client that uses its session (its `notifications/initialized` claimed it), idle now.
    let (used, _, _) = open_session(&client, url, json!({})).await;
    // A burst of `initialize` POSTs that nothing follows: each ends the burst's own
    // unclaimed session before the one a client uses, however long that one has been idle.
    let mut burst = Vec::new();
    for _ in 0..5 {
        let response = post_initialize(&client, url).await;
        assert_eq!(response.status().as_u16(), 200);
        burst.push(session_id(&response).expect("an Mcp-Session-Id"));
        let _ = messages(response).await;
    }
    assert_answers(&client, url, &used, &list).await;
    assert_ended(&client, url, &burst[0], &list).await;
}

#[tokio::test]
async fn a_session_that_no_message_follows_after_its_initialize_ends_at_its_claim_time_limit() {
    const CLAIM_MS: u64 = 300;
    let server = HttpServer::start(
        common::server_bin(),
        &[
            "--test-tools",
            "--http-max-sessions",
            "2",
            "--http-session-claim-ms",
            &CLAIM_MS.to_string(),
            "--http-debug-log",
        ],
    );
    let client = client();
    // Claimed: its `notifications/initialized` came.
    let (claimed, _, _) = open_session(&client, &server.url, json!({})).await;
    // Unclaimed: nothing follows its initialize, as when its client went away before the
    // answer and never learnt the id.
    let started = Instant::now();
    let response = post_initialize(&client, &server.url).await;
    assert_eq!(response.status().as_u16(), 200);
    let unclaimed = session_id(&response).expect("an Mcp-Session-Id");
    messages(response).await;
    // It ends at its claim time limit (the server's debug line says when).
    server
        .wait_for_log("an HTTP session ended: idle past its time limit")
        .await;
    let ended = started.elapsed();
    assert!(
        ended >= Duration::from_millis(CLAIM_MS),
        "ended after {ended:?}"
    );
    let list = request(json!(2), "tools/list", json!({}));
    assert_ended(&client, &server.url, &unclaimed, &list).await;
    // The claimed session lives on (its idle time limit is the default, 30 minutes).
    let ping = request(json!(3), "ping", json!({}));
    assert_eq!(
        call(&client, &server.url, &claimed, &ping).await,
        (200, vec![json!({"jsonrpc": "2.0", "id": 3, "result": {}})])
    );
}

#[tokio::test]
async fn an_elicitation_of_the_session_is_answered_by_the_clients_post() {
    let server = HttpServer::example();
    let client = client();
    let (session, _, _) =
        open_session(&client, &server.url, json!({"elicitation": {"form": {}}})).await;
    let ask = request(json!(7), "tools/call", json!({"name": "ask_name"}));
    let response = legacy_post(&client, &server.url, Some(&session), ACCEPT_BOTH, &ask)
        .send()
        .await
        .expect("POST");
    assert_eq!(response.status().as_u16(), 200);
    // No GET stream: the elicitation comes on the stream of the call it belongs to.
    let mut events = Events::new(response);
    let elicitation = events.next().await.expect("the elicitation");
    let elicitation_id = elicitation["id"].clone();
    assert_eq!(
        elicitation,
        json!({"jsonrpc": "2.0", "id": elicitation_id, "method": "elicitation/create",
            "params": {"message": "Your name?", "requestedSchema": {"type": "object",
                "properties": {"name": {"type": "string"}}, "required": ["name"]},
                "mode": "form"}})
    );
    let answer = json!({"jsonrpc": "2.0", "id": elicitation_id,
        "result": {"action": "accept", "content": {"name": "Ada"}}});
    let response = legacy_post(&client, &server.url, Some(&session), ACCEPT_BOTH, &answer)
        .send()
        .await
        .expect("POST the answer");
    assert_eq!(response.status().as_u16(), 202);
    assert_eq!(events.all().await, [text_result(7, "Hi, Ada!")]);
}

/// A POST in `session` of the text `body`, as it is written.
async fn call_text(client: &reqwest::Client, url: &str, session: &str, body: &str) -> Vec<Value> {
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", V)
        .body(body.to_owned())
        .send()
        .await
        .expect("POST");
    assert_eq!(response.status().as_u16(), 200);
    messages(response).await
}

#[tokio::test]
async fn progress_reaches_the_post_of_its_token_however_the_body_is_written() {
    let server = HttpServer::fixture();
    let client = client();
    let (session, _, _) = open_session(&client, &server.url, json!({})).await;
    // With a GET stream open, a progress notification whose token matched no POST would go
    // there and leave its POST with the response alone.
    let _get = open_get(&client, &server.url, &session).await;
    let progress = |token: &str, n: i64| {
        json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": token, "progress": n, "total": 2}})
    };
    let flood = |id: i64, token: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "progress_flood", "arguments": {"count": 2}, "_meta": {"progressToken": token}}})
    };
    let done = |id: i64| json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "flooded"}]}});
    // One line, its token written with an escape: the token the bridge writes is "p".
    let body = r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"progress_flood","arguments":{"count":2},"_meta":{"progressToken":"\u0070"}}}"#;
    assert_eq!(
        call_text(&client, &server.url, &session, body).await,
        [progress("p", 1), progress("p", 2), done(8)]
    );
    // The same request on several lines (JSON whitespace), with an integer token.
    let body = serde_json::to_string_pretty(&flood(9, json!(42))).expect("JSON text");
    assert!(body.contains('\n'));
    let by_number = |n: i64| {
        json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": 42, "progress": n, "total": 2}})
    };
    assert_eq!(
        call_text(&client, &server.url, &session, &body).await,
        [by_number(1), by_number(2), done(9)]
    );
}

#[test]
fn the_typescript_sdk_1x_client_lists_and_calls_tools_of_the_example_in_a_session() {
    common::sdk_client::require_npm("@modelcontextprotocol/sdk", "the TypeScript SDK 1.x");
    let server = HttpServer::example();
    let report = run_client(
        "node",
        &["--input-type=module", "-e", TS1_HTTP_CLIENT],
        &server.url,
        None,
    );
    assert_eq!(
        report,
        json!({"protocol": V, "session": 32, "server": "embedded-example",
            "tools": ["echo", "ask_name", "add_tool"],
            "echo": [{"type": "text", "text": "h\u{e9} over HTTP"}], "ended": true})
    );
}

#[tokio::test]
async fn progress_of_a_request_whose_stream_closed_reaches_no_other_post() {
    let server = HttpServer::fixture();
    let client = client();
    let (session, _, _) = open_session(&client, &server.url, json!({})).await;
    // `chatter` reports progress every 20 ms and never ends; its client reads two events and
    // closes the stream (2025-11-25: that cancels nothing, so the progress goes on).
    let chatter = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "chatter", "arguments": {"interval_ms": 20, "late": 0},
        "_meta": {"progressToken": "A"}}});
    let response = legacy_post(&client, &server.url, Some(&session), ACCEPT_BOTH, &chatter)
        .send()
        .await
        .expect("POST chatter");
    let mut events = Events::new(response);
    for _ in 0..2 {
        let event = events.next().await.expect("a progress of chatter");
        assert_eq!(event["params"]["progressToken"], "A", "{event}");
    }
    drop(events);
    // The only POST waiting now is this one: chatter's progress is not its to carry.
    let sleep = request(
        json!(2),
        "tools/call",
        json!({"name": "sleep", "arguments": {"ms": 300}}),
    );
    let (status, answer) = call(&client, &server.url, &session, &sleep).await;
    assert_eq!((status, answer), (200, vec![text_result(2, "slept")]));
}

#[tokio::test]
async fn the_cancellation_of_an_elicitation_whose_stream_closed_reaches_no_other_post() {
    let server = HttpServer::example();
    let client = client();
    let (session, _, _) =
        open_session(&client, &server.url, json!({"elicitation": {"form": {}}})).await;
    let ask = |id: i64| request(json!(id), "tools/call", json!({"name": "ask_name"}));
    let response = legacy_post(&client, &server.url, Some(&session), ACCEPT_BOTH, &ask(1))
        .send()
        .await
        .expect("POST ask 1");
    let mut first = Events::new(response);
    let elicitation = first.next().await.expect("the elicitation of call 1");
    assert_eq!(elicitation["method"], "elicitation/create");
    drop(first);
    let response = legacy_post(&client, &server.url, Some(&session), ACCEPT_BOTH, &ask(2))
        .send()
        .await
        .expect("POST ask 2");
    let mut second = Events::new(response);
    let elicitation = second.next().await.expect("the elicitation of call 2");
    assert_eq!(elicitation["method"], "elicitation/create");
    // Call 1 is cancelled: the bridge cancels its elicitation, which went on call 1's
    // stream, now closed; call 2's stream must not carry that.
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 1}});
    let response = legacy_post(&client, &server.url, Some(&session), ACCEPT_BOTH, &cancel)
        .send()
        .await
        .expect("POST cancelled");
    assert_eq!(response.status().as_u16(), 202);
    let answer = json!({"jsonrpc": "2.0", "id": elicitation["id"],
        "result": {"action": "accept", "content": {"name": "Ada"}}});
    let response = legacy_post(&client, &server.url, Some(&session), ACCEPT_BOTH, &answer)
        .send()
        .await
        .expect("POST the answer");
    assert_eq!(response.status().as_u16(), 202);
    assert_eq!(second.all().await, [text_result(2, "Hi, Ada!")]);
}

/// `notifications/cancelled` of request `id`, as a client sends it in a session.
fn cancel_of(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
           "params": {"requestId": id, "reason": "the user stopped it"}})
}

#[tokio::test]
async fn a_request_the_client_cancels_ends_its_post_without_a_response_and_frees_its_id() {
    let server = HttpServer::fixture();
    let client = client();
    let (session, _, _) = open_session(&client, &server.url, json!({})).await;
    // JSON: the POST of a long `sleep` waits; the cancel (sent until the POST ends: the
    // request may not have reached the session the first time) ends it with 204.
    let sleep = request(
        json!(1),
        "tools/call",
        json!({"name": "sleep", "arguments": {"ms": 60000}}),
    );
    let post =
        tokio::spawn(legacy_post(&client, &server.url, Some(&session), ACCEPT_BOTH, &sleep).send());
    let deadline = Instant::now() + WAIT;
    while !post.is_finished() {
        assert!(Instant::now() < deadline, "the cancelled POST did not end");
        let (status, _) = call(&client, &server.url, &session, &cancel_of(1)).await;
        assert_eq!(status, 202);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let ended = post.await.expect("the POST task").expect("the POST");
    assert_eq!(ended.status().as_u16(), 204);
    // SSE: a `chatter` with progress; after two events the cancel ends its stream.
    let chatter = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "chatter", "arguments": {"interval_ms": 20, "late": 0},
        "_meta": {"progressToken": "c"}}});
    let response = legacy_post(&client, &server.url, Some(&session), ACCEPT_BOTH, &chatter)
        .send()
        .await
        .expect("POST chatter");
    let mut events = Events::new(response);
    for _ in 0..2 {
        assert!(events.next().await.is_some(), "a progress of chatter");
    }
    let (status, _) = call(&client, &server.url, &session, &cancel_of(2)).await;
    assert_eq!(status, 202);
    let rest = tokio::time::timeout(WAIT, async {
        let mut rest = Vec::new();
        while let Some(event) = events.next().await {
            rest.push(event);
        }
        rest
    })
    .await
    .expect("the cancelled stream ends");
    assert!(
        rest.iter().all(|e| e["method"] == "notifications/progress"),
        "{rest:?}"
    );
    // Both ids are free again.
    for id in [1, 2] {
        let quick = request(
            json!(id),
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 10}}),
        );
        let (status, answer) = call(&client, &server.url, &session, &quick).await;
        assert_eq!((status, answer), (200, vec![text_result(id, "slept")]));
    }
}
