//! Black-box tests of the server API over Streamable HTTP (`server::http`, 2026-07-28
//! stateless): the embedded example (`examples/embedded`, `--http`) and the fixture server
//! (`mcp-fixture-server --test-tools --http`) started as processes on a loopback port, and a
//! real HTTP client (reqwest). Then `mcp-bridge` in the URL form in front of the example. Last,
//! the tools of the conformance fixture (`fixtures/examples/conformance`) that no 2026-07-28 scenario of
//! the official suite calls.

use crate::common;

use common::http_serve::*;
use common::sdk_client::interop_dir;
use common::*;
use futures_util::StreamExt;
use serde_json::{Value, json};

const V: &str = "2026-07-28";
const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": V,
           "io.modelcontextprotocol/clientCapabilities": {}})
}

fn request(id: Value, method: &str, mut params: Value) -> Value {
    params["_meta"] = meta();
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A POST of `body` with the headers a 2026-07-28 client sends for it (and `extra`).
fn post(
    client: &reqwest::Client,
    url: &str,
    body: &Value,
    extra: &[(&str, &str)],
) -> reqwest::RequestBuilder {
    let method = body["method"].as_str().unwrap_or_default();
    let mut builder = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", V)
        .header("mcp-method", method);
    if let Some(name) = body["params"]["name"].as_str() {
        builder = builder.header("mcp-name", name);
    }
    for (name, value) in extra {
        builder = builder.header(*name, *value);
    }
    builder.body(body.to_string())
}

fn example_info() -> Value {
    json!({"name": "embedded-example", "version": "1.0.0"})
}

fn echo_result(id: i64, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete",
        "content": [{"type": "text", "text": text}], "_meta": {SERVER_INFO: example_info()}}})
}

#[tokio::test]
async fn a_tool_call_and_tools_list_are_answered_with_json() {
    let server = HttpServer::example();
    let client = client();
    let call = request(
        json!(1),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    );
    let (status, content_type, body) = json_answer(
        post(&client, &server.url, &call, &[])
            .send()
            .await
            .expect("POST"),
    )
    .await;
    assert_eq!((status, content_type.as_str()), (200, "application/json"));
    assert_eq!(body, echo_result(1, "hi"));
    let list = request(json!("l"), "tools/list", json!({}));
    let (status, _, body) = json_answer(
        post(&client, &server.url, &list, &[])
            .send()
            .await
            .expect("POST"),
    )
    .await;
    assert_eq!(status, 200);
    let names: Vec<&str> = body["result"]["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, ["echo", "ask_name", "add_tool"]);
}

#[tokio::test]
async fn a_bad_origin_and_a_foreign_host_get_403_and_loopback_origins_are_served() {
    let server = HttpServer::example();
    let client = client();
    let call = request(
        json!(1),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    );
    let forbidden = |why: &str| {
        json!({"jsonrpc": "2.0", "error": {"code": -32600,
            "message": format!("Forbidden: {why}")}})
    };
    let evil = [("origin", "https://evil.example")];
    let (status, _, body) = json_answer(
        post(&client, &server.url, &call, &evil)
            .send()
            .await
            .expect("POST"),
    )
    .await;
    assert_eq!(
        (status, body),
        (403, forbidden("the Origin is not allowed"))
    );
    let rebound = [("host", "evil.example:8000")];
    let (status, _, body) = json_answer(
        post(&client, &server.url, &call, &rebound)
            .send()
            .await
            .expect("POST"),
    )
    .await;
    assert_eq!((status, body), (403, forbidden("the Host is not allowed")));
    let local = [("origin", "http://localhost:5173")];
    let (status, _, body) = json_answer(
        post(&client, &server.url, &call, &local)
            .send()
            .await
            .expect("POST"),
    )
    .await;
    assert_eq!((status, body), (200, echo_result(1, "hi")));
}

/// A POST whose body is `sent` and then never ends (the client waits), with these headers:
/// the server has read all there is when it answers, so its answer is never lost to a reset.
fn hanging_post(
    client: &reqwest::Client,
    url: &str,
    sent: Vec<u8>,
    headers: &[(&str, &str)],
) -> reqwest::RequestBuilder {
    let chunks: Vec<reqwest::Result<Vec<u8>>> =
        sent.chunks(64 * 1024).map(|c| Ok(c.to_vec())).collect();
    let body = futures_util::stream::iter(chunks).chain(futures_util::stream::pending());
    let mut builder = client
        .post(url)
        .header("content-type", "application/json")
        .header("mcp-protocol-version", V)
        .header("mcp-method", "tools/call")
        .header("mcp-name", "echo");
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(reqwest::Body::wrap_stream(body))
}

/// One raw HTTP/1.1 request on a connection of its own: the status code of its answer.
fn raw_status(url: &str, request: &str) -> u16 {
    use std::io::{BufRead, Write};
    let addr = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap_or_default();
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(WAIT)).expect("a read timeout");
    stream.write_all(request.as_bytes()).expect("send");
    let mut line = String::new();
    std::io::BufReader::new(stream)
        .read_line(&mut line)
        .expect("the status line");
    line.split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {line:?}"))
}

#[test]
fn two_host_headers_get_400_and_an_absolute_target_is_judged_by_its_authority() {
    let server = HttpServer::example();
    let addr = server
        .url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap_or_default()
        .to_owned();
    let body = request(
        json!(1),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    )
    .to_string();
    let raw = |target: &str, hosts: &[&str]| {
        let hosts: String = hosts
            .iter()
            .map(|host| format!("Host: {host}\r\n"))
            .collect();
        format!(
            "POST {target} HTTP/1.1\r\n{hosts}Content-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {V}\r\n\
             Mcp-Method: tools/call\r\nMcp-Name: echo\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        )
    };
    // RFC 9112 §3.2: more than one Host is refused, whichever comes first.
    assert_eq!(
        raw_status(&server.url, &raw("/mcp", &["localhost", "evil.example"])),
        400
    );
    assert_eq!(
        raw_status(&server.url, &raw("/mcp", &["evil.example", "localhost"])),
        400
    );
    // RFC 9112 §3.2.2: an absolute-form target's authority is the host, not the Host header.
    assert_eq!(
        raw_status(&server.url, &raw("http://evil.example/mcp", &["localhost"])),
        403
    );
    assert_eq!(
        raw_status(
            &server.url,
            &raw(&format!("http://{addr}/mcp"), &["evil.example"])
        ),
        200
    );
    assert_eq!(raw_status(&server.url, &raw("/mcp", &["localhost"])), 200);
}

#[tokio::test]
async fn a_body_that_is_not_whole_within_its_time_limit_gets_408_and_the_connection_closes() {
    let server = HttpServer::start(
        common::server_bin(),
        &["--test-tools", "--http-body-read-ms", "300"],
    );
    let client = client();
    // The headers and a first byte of the body, then nothing more (Slowloris).
    let answer = tokio::time::timeout(
        WAIT,
        hanging_post(&client, &server.url, b"{".to_vec(), &[]).send(),
    )
    .await
    .expect("an answer within the wait")
    .expect("POST");
    assert_eq!(answer.status().as_u16(), 408);
    assert_eq!(
        answer.headers().get("connection").map(|v| v.as_bytes()),
        Some(&b"close"[..])
    );
    // The server serves the next client.
    let echo = request(
        json!(1),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    );
    let answer = post(&client, &server.url, &echo, &[])
        .send()
        .await
        .expect("POST");
    assert_eq!(
        json_answer(answer).await,
        (200, "application/json".into(), fixture_echo_result(1, "hi"))
    );
}

#[tokio::test]
async fn an_oversized_body_gets_413_declared_or_streamed_and_oversized_headers_431() {
    let server = HttpServer::example();
    let client = client();
    // A declared length one byte past the default limit of 4 MiB: refused before any byte.
    let declared = (4 * 1024 * 1024 + 1).to_string();
    let response = hanging_post(
        &client,
        &server.url,
        Vec::new(),
        &[("content-length", &declared)],
    )
    .send()
    .await
    .expect("POST");
    assert_eq!(response.status().as_u16(), 413);
    // Chunked, without a length: refused once the limit is passed while reading.
    let text = "x".repeat(4 * 1024 * 1024);
    let call = request(
        json!(1),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": text}}),
    );
    let response = hanging_post(&client, &server.url, call.to_string().into_bytes(), &[])
        .send()
        .await
        .expect("POST");
    assert_eq!(response.status().as_u16(), 413);
    // A header section over the default limit of 16 KiB: 431 from hyper.
    let long = "x".repeat(20 * 1024);
    let call = request(
        json!(3),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    );
    let response = post(&client, &server.url, &call, &[("x-long", &long)])
        .send()
        .await
        .expect("POST");
    assert_eq!(response.status().as_u16(), 431);
    // The server goes on.
    let small = request(
        json!(2),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "ok"}}),
    );
    let (status, _, body) = json_answer(
        post(&client, &server.url, &small, &[])
            .send()
            .await
            .expect("POST"),
    )
    .await;
    assert_eq!((status, body), (200, echo_result(2, "ok")));
}

#[tokio::test]
async fn a_header_that_differs_from_the_body_gets_400_with_32020() {
    let server = HttpServer::example();
    let client = client();
    let call = request(
        json!(7),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    );
    let mismatch = |header: &str, detail: &str| {
        json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32020, "message": "Header mismatch",
            "data": {"header": header, "detail": detail}}})
    };
    let wrong_name = client
        .post(&server.url)
        .header("content-type", "application/json")
        .header("mcp-protocol-version", V)
        .header("mcp-method", "tools/call")
        .header("mcp-name", "ask_name")
        .body(call.to_string());
    let (status, _, body) = json_answer(wrong_name.send().await.expect("POST")).await;
    assert_eq!(
        (status, body),
        (400, mismatch("Mcp-Name", "differs from the body"))
    );
    let no_method = client
        .post(&server.url)
        .header("content-type", "application/json")
        .header("mcp-protocol-version", V)
        .body(call.to_string());
    let (status, _, body) = json_answer(no_method.send().await.expect("POST")).await;
    assert_eq!((status, body), (400, mismatch("Mcp-Method", "missing")));
    let old_version = client
        .post(&server.url)
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "echo")
        .body(call.to_string());
    let (status, _, body) = json_answer(old_version.send().await.expect("POST")).await;
    assert_eq!(
        (status, body),
        (
            400,
            mismatch("MCP-Protocol-Version", "differs from params._meta")
        )
    );
}

#[tokio::test]
async fn get_and_delete_get_405_a_notification_202_and_an_unknown_method_404() {
    let server = HttpServer::example();
    let client = client();
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let response = client
            .request(method, &server.url)
            .send()
            .await
            .expect("request");
        assert_eq!(response.status().as_u16(), 405);
        assert_eq!(
            response
                .headers()
                .get("allow")
                .and_then(|v| v.to_str().ok()),
            Some("POST")
        );
    }
    let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                      "params": {"requestId": 1}});
    let response = post(&client, &server.url, &note, &[])
        .send()
        .await
        .expect("POST");
    assert_eq!(response.status().as_u16(), 202);
    assert_eq!(response.text().await.expect("body"), "");
    let ping = request(json!(3), "ping", json!({}));
    let (status, _, body) = json_answer(
        post(&client, &server.url, &ping, &[])
            .send()
            .await
            .expect("POST"),
    )
    .await;
    assert_eq!(
        (status, body),
        (
            404,
            json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32601,
            "message": "Method not found", "data": {"method": "ping"}}})
        )
    );
    // An initialize with the 2026-07-28 _meta is a 2026-07-28 request: no session, 404.
    let initialize = request(json!(5), "initialize", json!({}));
    let response = post(&client, &server.url, &initialize, &[])
        .send()
        .await
        .expect("POST");
    assert_eq!(response.headers().get("mcp-session-id"), None);
    let (status, _, body) = json_answer(response).await;
    assert_eq!(
        (status, body),
        (
            404,
            json!({"jsonrpc": "2.0", "id": 5, "error": {"code": -32601,
            "message": "Method not found", "data": {"method": "initialize"}}})
        )
    );
    // A request without the required _meta: 400 with -32602 (2026-07-28 basic/index).
    let bare = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {}});
    let (status, _, body) = json_answer(
        post(&client, &server.url, &bare, &[])
            .send()
            .await
            .expect("POST"),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["code"], -32602);
    let not_json = client
        .post(&server.url)
        .header("content-type", "application/json")
        .body("{not json");
    let (status, _, body) = json_answer(not_json.send().await.expect("POST")).await;
    assert_eq!(
        (status, body),
        (
            400,
            json!({"jsonrpc": "2.0", "error": {"code": -32700,
            "message": "Parse error", "data": {"cause": "parse_error"}}})
        )
    );
}

#[tokio::test]
async fn progress_turns_the_answer_into_sse_ending_with_the_response() {
    let server = HttpServer::fixture();
    let client = client();
    let mut call = request(
        json!(5),
        "tools/call",
        json!({"name": "progress_flood", "arguments": {"count": 3}}),
    );
    call["params"]["_meta"]["progressToken"] = json!("p");
    let response = post(&client, &server.url, &call, &[])
        .send()
        .await
        .expect("POST");
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(
        response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("text/event-stream")
    );
    assert_eq!(
        response
            .headers()
            .get("x-accel-buffering")
            .and_then(|v| v.to_str().ok()),
        Some("no")
    );
    let events = Events::new(response).all().await;
    let progress: Vec<Value> = (1..=3)
        .map(|n| {
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": "p", "progress": n, "total": 3}})
        })
        .collect();
    assert_eq!(events.len(), 4, "{events:?}");
    assert_eq!(events[..3], progress[..]);
    assert_eq!(events[3]["id"], 5);
    assert_eq!(events[3]["result"]["content"][0]["text"], "flooded");
}

#[tokio::test]
async fn a_client_that_closes_the_stream_cancels_its_request() {
    let server = HttpServer::fixture();
    let client = client();
    // The listen stream shows the effect: `chatter` publishes a tools list change once its
    // request is cancelled, and not before.
    let listen = request(
        json!("L"),
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let response = post(&client, &server.url, &listen, &[])
        .send()
        .await
        .expect("POST");
    assert_eq!(response.status().as_u16(), 200);
    let mut listen = Events::new(response);
    let ack = listen.next().await.expect("the acknowledgement");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    let mut call = request(
        json!(9),
        "tools/call",
        json!({"name": "chatter", "arguments": {"interval_ms": 20, "late": 0}}),
    );
    call["params"]["_meta"]["progressToken"] = json!("c");
    let response = post(&client, &server.url, &call, &[])
        .send()
        .await
        .expect("POST");
    let mut chatter = Events::new(response);
    let first = chatter.next().await.expect("a tick");
    assert_eq!(
        first,
        json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": "c", "progress": 1, "message": "tick 1"}})
    );
    drop(chatter);
    let changed = listen
        .next()
        .await
        .expect("the list change after the cancel");
    assert_eq!(
        changed,
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
            "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "L"}}})
    );
}

#[tokio::test]
async fn two_hundred_concurrent_clients_each_get_their_own_answer() {
    let server = HttpServer::example();
    // A client of its own for each: a connection of its own. All are built before the first
    // connects: a build loads the TLS roots, and 200 of them on this test's one thread would
    // hold the clients already connected past the server's header read time limit (10 s).
    let clients: Vec<reqwest::Client> = (0..200).map(|_| client()).collect();
    let calls = (0..200i64).zip(clients).map(|(n, client)| {
        let url = server.url.clone();
        tokio::spawn(async move {
            let text = format!("client {n}");
            let call = request(
                json!(n),
                "tools/call",
                json!({"name": "echo", "arguments": {"text": text}}),
            );
            match post(&client, &url, &call, &[]).send().await {
                Ok(response) => {
                    let (status, _, body) = json_answer(response).await;
                    if status == 200 && body == echo_result(n, &text) {
                        Ok(())
                    } else {
                        Err(format!("client {n}: {status} {body}"))
                    }
                }
                Err(e) => Err(format!("client {n}: {e}")),
            }
        })
    });
    let answers = futures_util::future::join_all(calls).await;
    let wrong: Vec<String> = answers
        .into_iter()
        .filter_map(|a| match a {
            Ok(Ok(())) => None,
            Ok(Err(why)) => Some(why),
            Err(e) => Some(format!("a client's task failed: {e}")),
        })
        .collect();
    assert_eq!(wrong, Vec::<String>::new());
}

#[test]
fn mcp_bridge_in_the_url_form_serves_the_example_over_http_to_a_2025_11_25_editor() {
    let server = HttpServer::example();
    let mut b = Bridge::start_url(&[], &server.url, &[]);
    let init = b.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "embedded-example");
    let list = b.request(json!(1), "tools/list", json!({}));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, ["echo", "ask_name", "add_tool"]);
    let call = b.tools_call(json!(2), "echo", json!({"text": "through the bridge"}));
    assert_eq!(
        call,
        json!({"jsonrpc": "2.0", "id": 2, "result": {
            "content": [{"type": "text", "text": "through the bridge"}]}})
    );
}

/// The one token the bearer fixture accepts, and its authorization server.
const GOOD_TOKEN: &str = "good-token.0123~xyz";
const AUTH_SERVER: &str = "https://auth.example";

/// The fixture server with the bearer-token check on.
fn bearer_fixture() -> HttpServer {
    HttpServer::start(
        server_bin(),
        &[
            "--http-bearer-token",
            GOOD_TOKEN,
            "--http-authorization-server",
            AUTH_SERVER,
        ],
    )
}

/// `http://127.0.0.1:PORT/.well-known/oauth-protected-resource/mcp` for `http://.../mcp`.
fn metadata_url(endpoint: &str) -> String {
    let origin = endpoint.strip_suffix("/mcp").expect("an endpoint on /mcp");
    format!("{origin}/.well-known/oauth-protected-resource/mcp")
}

fn fixture_echo_result(id: i64, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete",
        "content": [{"type": "text", "text": text}],
        "_meta": {SERVER_INFO: {"name": "mcp-fixture-server", "version": env!("CARGO_PKG_VERSION")}}}})
}

#[tokio::test]
async fn with_the_bearer_check_a_post_needs_a_token_the_verifier_accepts() {
    let server = bearer_fixture();
    let client = client();
    let call = request(
        json!(1),
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    );
    let challenge = format!("Bearer resource_metadata=\"{}\"", metadata_url(&server.url));
    let unauthorized = |why: &str| {
        json!({"jsonrpc": "2.0", "error": {"code": -32600,
            "message": format!("Unauthorized: {why}")}})
    };
    let www_authenticate = |response: &reqwest::Response| {
        response
            .headers()
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    // No token (and a scheme that is not Bearer): the challenge without an error code.
    for extra in [&[][..], &[("authorization", "Basic dXNlcjpwYXNz")][..]] {
        let response = post(&client, &server.url, &call, extra)
            .send()
            .await
            .expect("POST");
        let header = www_authenticate(&response);
        let (status, _, body) = json_answer(response).await;
        assert_eq!(
            (status, header, body),
            (
                401,
                Some(challenge.clone()),
                unauthorized("a bearer token is required")
            )
        );
    }
    // A token the verifier refuses, and one that is no RFC 6750 token: invalid_token.
    for value in ["Bearer bad-token", "Bearer not a token"] {
        let response = post(&client, &server.url, &call, &[("authorization", value)])
            .send()
            .await
            .expect("POST");
        let header = www_authenticate(&response);
        let (status, _, body) = json_answer(response).await;
        assert_eq!(
            (status, header, body),
            (
                401,
                Some(format!("{challenge}, error=\"invalid_token\"")),
                unauthorized("the bearer token is not valid")
            )
        );
    }
    let good = format!("Bearer {GOOD_TOKEN}");
    let (status, _, body) = json_answer(
        post(&client, &server.url, &call, &[("authorization", &good)])
            .send()
            .await
            .expect("POST"),
    )
    .await;
    assert_eq!((status, body), (200, fixture_echo_result(1, "hi")));
}

#[tokio::test]
async fn with_the_bearer_check_the_protected_resource_metadata_is_served() {
    let server = bearer_fixture();
    let client = client();
    let response = client
        .get(metadata_url(&server.url))
        .send()
        .await
        .expect("GET");
    let (status, content_type, body) = json_answer(response).await;
    assert_eq!(
        (status, content_type.as_str(), body),
        (
            200,
            "application/json",
            json!({"resource": server.url, "authorization_servers": [AUTH_SERVER],
                "bearer_methods_supported": ["header"]})
        )
    );
    // The example has no bearer check: no metadata either.
    let example = HttpServer::example();
    let response = client
        .get(metadata_url(&example.url))
        .send()
        .await
        .expect("GET");
    assert_eq!(response.status().as_u16(), 404);
}

#[test]
fn mcp_bridge_in_the_url_form_with_a_header_env_token_serves_a_bearer_protected_server() {
    let server = bearer_fixture();
    let good = format!("Bearer {GOOD_TOKEN}");
    let mut b = Bridge::start_url(
        &["--header-env", "Authorization=FIXTURE_TOKEN"],
        &server.url,
        &[("FIXTURE_TOKEN", &good)],
    );
    let init = b.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "mcp-fixture-server");
    let call = b.tools_call(json!(2), "echo", json!({"text": "with a token"}));
    assert_eq!(
        call,
        json!({"jsonrpc": "2.0", "id": 2, "result": {
            "content": [{"type": "text", "text": "with a token"}]}})
    );
}

#[test]
fn the_typescript_sdk_v2_client_lists_and_calls_tools_of_the_example_over_http() {
    sdk_client::require_npm("@modelcontextprotocol/client", "the TypeScript SDK v2");
    let server = HttpServer::example();
    let report = run_client(
        "node",
        &["--input-type=module", "-e", TS2_HTTP_CLIENT],
        &server.url,
        None,
    );
    assert_eq!(
        report,
        json!({"server": "embedded-example", "tools": ["echo", "ask_name", "add_tool"],
            "echo": [{"type": "text", "text": "h\u{e9} over HTTP"}]})
    );
}

#[test]
fn the_typescript_sdk_v2_client_with_a_token_calls_a_bearer_protected_server() {
    let server = bearer_fixture();
    let report = run_client(
        "node",
        &["--input-type=module", "-e", TS2_HTTP_CLIENT],
        &server.url,
        Some(GOOD_TOKEN),
    );
    assert_eq!(
        report,
        json!({"server": "mcp-fixture-server",
            "tools": ["echo", "add", "slow", "log", "fail", "ask_name"],
            "echo": [{"type": "text", "text": "h\u{e9} over HTTP"}]})
    );
}

#[test]
fn the_python_mcp_2x_client_lists_and_calls_tools_of_the_example_over_http() {
    let python = interop_dir().join(".venv/bin/python3");
    assert!(
        python.exists(),
        "the Python mcp 2.x client is not installed: run `python3 -m venv tests/interop/.venv && \
         tests/interop/.venv/bin/pip install -r tests/interop/requirements.txt` (scripts/test does)"
    );
    let server = HttpServer::example();
    let report = run_client(
        &python.to_string_lossy(),
        &["-c", PY2_HTTP_CLIENT],
        &server.url,
        None,
    );
    assert_eq!(
        report,
        json!({"protocol": "2026-07-28", "server": "embedded-example",
            "tools": ["echo", "ask_name", "add_tool"], "echo": ["h\u{e9} over HTTP"]})
    );
}

// ---- the conformance fixture (fixtures/examples/conformance): the tools of the suite's 2025-11-25
// scenarios, which reach 2025-11-25 clients through the in-process bridge, asked here over
// 2026-07-28 HTTP as the bridge asks them

fn conformance_info() -> Value {
    json!({"name": "mcp-bridge-conformance-fixture", "version": "1.0.0"})
}

/// A `tools/call` of `name` from a client that can sample and elicit, with `extra` params.
fn call_of_a_capable_client(id: i64, name: &str, arguments: Value, extra: Value) -> Value {
    let mut call = request(
        json!(id),
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    );
    call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        json!({"sampling": {}, "elicitation": {}});
    if let (Some(params), Value::Object(extra)) = (call["params"].as_object_mut(), extra) {
        params.extend(extra);
    }
    call
}

/// The JSON answer of a POST of `call`.
async fn answer_of(
    client: &reqwest::Client,
    url: &str,
    call: &Value,
    extra: &[(&str, &str)],
) -> (u16, Value) {
    let response = post(client, url, call, extra).send().await.expect("POST");
    let (status, _, body) = json_answer(response).await;
    (status, body)
}

fn asked(id: i64, key: &str, request: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "input_required",
        "inputRequests": {key: request}, "_meta": {SERVER_INFO: conformance_info()}}})
}

fn conformance_text(id: i64, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete",
        "content": [{"type": "text", "text": text}], "_meta": {SERVER_INFO: conformance_info()}}})
}

#[tokio::test]
async fn the_conformance_fixtures_sampling_and_elicitation_tools_ask_then_answer_the_retry() {
    let server = HttpServer::conformance();
    let client = client();
    let url = server.url.as_str();

    let sample =
        call_of_a_capable_client(1, "test_sampling", json!({"prompt": "Say hi"}), json!({}));
    let sampling = json!({"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Say hi"}}], "maxTokens": 100}});
    assert_eq!(
        answer_of(&client, url, &sample, &[]).await,
        (200, asked(1, "sampling", sampling))
    );
    let sampled = json!({"inputResponses": {"sampling": {"role": "assistant",
        "content": {"type": "text", "text": "Hi!"}, "model": "m", "stopReason": "endTurn"}}});
    let retry = call_of_a_capable_client(2, "test_sampling", json!({"prompt": "Say hi"}), sampled);
    assert_eq!(
        answer_of(&client, url, &retry, &[]).await,
        (200, conformance_text(2, "LLM response: Hi!"))
    );

    let elicit = call_of_a_capable_client(
        3,
        "test_elicitation",
        json!({"message": "Your answer?"}),
        json!({}),
    );
    let form = json!({"method": "elicitation/create", "params": {"message": "Your answer?",
        "requestedSchema": {"type": "object", "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"}},
            "required": ["username", "email"]}}});
    assert_eq!(
        answer_of(&client, url, &elicit, &[]).await,
        (200, asked(3, "response", form))
    );
    let answered = json!({"inputResponses": {"response": {"action": "accept",
        "content": {"username": "ada", "email": "ada@example.com"}}}});
    let retry = call_of_a_capable_client(
        4,
        "test_elicitation",
        json!({"message": "Your answer?"}),
        answered,
    );
    assert_eq!(
        answer_of(&client, url, &retry, &[]).await,
        (
            200,
            conformance_text(
                4,
                r#"User response: action=accept, content={"username":"ada","email":"ada@example.com"}"#
            )
        )
    );
}

#[tokio::test]
async fn the_conformance_fixtures_form_tools_ask_for_defaults_and_the_five_enum_forms() {
    let server = HttpServer::conformance();
    let client = client();
    let url = server.url.as_str();

    let defaults =
        call_of_a_capable_client(1, "test_elicitation_sep1034_defaults", json!({}), json!({}));
    let (status, body) = answer_of(&client, url, &defaults, &[]).await;
    let request = &body["result"]["inputRequests"]["form"];
    assert_eq!(
        (status, &body["result"]["resultType"], &request["method"]),
        (200, &json!("input_required"), &json!("elicitation/create"))
    );
    assert_eq!(
        request["params"]["message"],
        "Please review and update the form fields with defaults"
    );
    assert_eq!(
        request["params"]["requestedSchema"]["properties"],
        json!({
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {"type": "string", "description": "User status",
                "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "description": "Verification status", "default": true}
        })
    );
    let declined = json!({"inputResponses": {"form": {"action": "decline"}}});
    let retry =
        call_of_a_capable_client(2, "test_elicitation_sep1034_defaults", json!({}), declined);
    assert_eq!(
        answer_of(&client, url, &retry, &[]).await,
        (
            200,
            conformance_text(2, "Elicitation completed: action=decline, content={}")
        )
    );

    let enums = call_of_a_capable_client(3, "test_elicitation_sep1330_enums", json!({}), json!({}));
    let (status, body) = answer_of(&client, url, &enums, &[]).await;
    let properties =
        &body["result"]["inputRequests"]["form"]["params"]["requestedSchema"]["properties"];
    assert_eq!(status, 200);
    assert_eq!(
        (
            &properties["titledSingle"]["oneOf"][1],
            &properties["legacyEnum"]["enumNames"][2]
        ),
        (
            &json!({"const": "value2", "title": "Second Option"}),
            &json!("Option Three")
        )
    );
    assert_eq!(
        properties["titledMulti"],
        json!({"type": "array", "description": "Select multiple options with titles", "minItems": 1,
            "maxItems": 3, "items": {"anyOf": [{"const": "value1", "title": "First Choice"},
            {"const": "value2", "title": "Second Choice"}, {"const": "value3", "title": "Third Choice"}]}})
    );
    let keys: Vec<&String> = properties
        .as_object()
        .map(|p| p.keys().collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        [
            "untitledSingle",
            "titledSingle",
            "legacyEnum",
            "untitledMulti",
            "titledMulti"
        ]
    );
}

#[tokio::test]
async fn the_conformance_fixtures_logging_tool_sends_three_messages_then_its_result() {
    let server = HttpServer::conformance();
    let client = client();
    let mut call = call_of_a_capable_client(9, "test_tool_with_logging", json!({}), json!({}));
    call["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    let response = post(&client, &server.url, &call, &[])
        .send()
        .await
        .expect("POST");
    assert_eq!(response.status().as_u16(), 200);
    let events = Events::new(response).all().await;
    let message = |text: &str| json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": text}});
    assert_eq!(
        events,
        vec![
            message("Tool execution started"),
            message("Tool processing data"),
            message("Tool execution completed"),
            conformance_text(9, "Tool with logging executed successfully"),
        ]
    );
}

#[tokio::test]
async fn an_unpadded_base64_param_header_gets_400_with_32020_and_a_padded_one_is_decoded() {
    let server = HttpServer::conformance();
    let client = client();
    let call = request(
        json!(4),
        "tools/call",
        json!({"name": "test_x_mcp_header", "arguments": {"region": "Hello"}}),
    );
    let unpadded = answer_of(
        &client,
        &server.url,
        &call,
        &[("mcp-param-region", "=?base64?SGVsbG8?=")],
    )
    .await;
    let mismatch = json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32020, "message": "Header mismatch",
        "data": {"header": "Mcp-Param-Region", "detail": "not valid Base64 UTF-8"}}});
    assert_eq!(unpadded, (400, mismatch));
    let padded = answer_of(
        &client,
        &server.url,
        &call,
        &[("mcp-param-region", "=?base64?SGVsbG8=?=")],
    )
    .await;
    assert_eq!(padded, (200, conformance_text(4, "Region: Hello")));
}
