//! Black-box tests of the edges of the server API over HTTP (`server::http`,
//! `embed::serve_http`): the command lines of the examples, the negotiation of `Accept`, an
//! `initialize` that fails, a GET stream that takes over from another, a request id whose stream closed, and the
//! end of the server on SIGTERM with open streams. The embedded example, the conformance
//! fixture and the fixture server run as processes on a loopback port; the client is reqwest
//! (or a raw TCP socket, to read a chunked body to its last byte).

use crate::common;

use common::http_serve::*;
use common::{conformance_fixture_bin, embedded_example_bin};
use serde_json::{Value, json};
use std::process::{Command, Stdio};

const LEGACY: &str = LEGACY_VERSION;
const MODERN: &str = "2026-07-28";

const EMBEDDED_USAGE: &str = "usage: embedded [--http ADDR]

Serves the example MCP server on stdin/stdout, or with --http over Streamable HTTP on ADDR
(PORT, or IP:PORT; a port alone is on 127.0.0.1).

  --http ADDR  serve HTTP on ADDR instead of stdio
  -h, --help   print this text
";

const CONFORMANCE_USAGE: &str = "usage: conformance [--http ADDR]

Serves the conformance suite's reference tools, resources and prompts on stdin/stdout, or
with --http over Streamable HTTP on ADDR (PORT, or IP:PORT; a port alone is on 127.0.0.1).

  --http ADDR  serve HTTP on ADDR instead of stdio
  -h, --help   print this text
";

/// Status, stdout and stderr of `program args`.
fn run(program: &std::path::Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run the example");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_examples_print_their_usage_for_help_and_exit_2_with_it_on_a_bad_argument() {
    for (program, name, usage) in [
        (embedded_example_bin(), "embedded", EMBEDDED_USAGE),
        (conformance_fixture_bin(), "conformance", CONFORMANCE_USAGE),
    ] {
        for help in ["--help", "-h"] {
            assert_eq!(
                run(&program, &[help]),
                (Some(0), usage.to_owned(), String::new()),
                "{name} {help}"
            );
        }
        let bad = |args: &[&str], why: &str| {
            assert_eq!(
                run(&program, args),
                (Some(2), String::new(), format!("{name}: {why}\n\n{usage}")),
                "{name} {args:?}"
            );
        };
        bad(&["--bogus"], "unexpected argument \"--bogus\"");
        bad(&["--http"], "--http needs an ADDR");
        bad(&["--http", "nowhere"], "\"nowhere\" is not PORT or IP:PORT");
        bad(
            &["--http", "8000", "extra"],
            "unexpected argument \"--http\"",
        );
    }
}

fn modern_meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": MODERN,
           "io.modelcontextprotocol/clientCapabilities": {}})
}

fn echo_call(id: i64, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": text}, "_meta": modern_meta()}})
}

/// A 2026-07-28 POST of `echo_call`, with `accept` as its `Accept` (none: no `Accept`).
fn post_echo(
    client: &reqwest::Client,
    url: &str,
    accept: Option<&str>,
    id: i64,
) -> reqwest::RequestBuilder {
    let mut builder = client
        .post(url)
        .header("content-type", "application/json")
        .header("mcp-protocol-version", MODERN)
        .header("mcp-method", "tools/call")
        .header("mcp-name", "echo");
    if let Some(accept) = accept {
        builder = builder.header("accept", accept);
    }
    builder.body(echo_call(id, "hi").to_string())
}

fn echo_result(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete",
        "content": [{"type": "text", "text": "hi"}],
        "_meta": {"io.modelcontextprotocol/serverInfo":
            {"name": "embedded-example", "version": "1.0.0"}}}})
}

fn content_type(response: &reqwest::Response) -> String {
    response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

/// Status, content type and messages of an answer: the JSON body, or each SSE event.
async fn answer_of(response: reqwest::Response) -> (u16, String, Vec<Value>) {
    let status = response.status().as_u16();
    let kind = content_type(&response);
    if kind == "text/event-stream" {
        return (status, kind, Events::new(response).all().await);
    }
    let text = response.text().await.expect("the body");
    let messages = match text.as_str() {
        "" => vec![],
        text => vec![serde_json::from_str(text).unwrap_or(Value::Null)],
    };
    (status, kind, messages)
}

/// [`answer_of`] the POST of [`post_echo`].
async fn echo_answer(
    client: &reqwest::Client,
    url: &str,
    accept: Option<&str>,
    id: i64,
) -> (u16, String, Vec<Value>) {
    answer_of(
        post_echo(client, url, accept, id)
            .send()
            .await
            .expect("POST"),
    )
    .await
}

/// Asserts that a new session's GET with `accept` as its `Accept` gets its stream.
async fn assert_a_get_stream_opens(client: &reqwest::Client, url: &str, accept: &str) {
    let session = open_session(client, url).await;
    let get = get_stream(client, url, &session, accept)
        .send()
        .await
        .expect("GET");
    assert_eq!(
        (get.status().as_u16(), content_type(&get)),
        (200, "text/event-stream".to_owned()),
        "{accept:?}"
    );
}

#[tokio::test]
async fn a_stateless_post_that_takes_only_sse_gets_sse_and_one_that_takes_neither_406() {
    let server = HttpServer::example();
    let client = client();
    let url = &server.url;
    let send = |accept: Option<&'static str>, id: i64| post_echo(&client, url, accept, id).send();
    let sse = "text/event-stream".to_owned();
    let json_type = "application/json".to_owned();
    for (id, accept) in [
        (1, "text/event-stream"),
        (2, "application/json;q=0, text/*"),
    ] {
        let answer = answer_of(send(Some(accept), id).await.expect("POST")).await;
        assert_eq!(
            answer,
            (200, sse.clone(), vec![echo_result(id)]),
            "{accept}"
        );
    }
    for (id, accept) in [
        (3, "application/json"),
        (4, "application/json, text/event-stream"),
        (5, "*/*;q=0.1"),
        (6, "text/event-stream;q=0.5, application/*;q=0.2"),
    ] {
        let answer = answer_of(send(Some(accept), id).await.expect("POST")).await;
        assert_eq!(
            answer,
            (200, json_type.clone(), vec![echo_result(id)]),
            "{accept}"
        );
    }
    let answer = answer_of(send(None, 7).await.expect("POST")).await;
    assert_eq!(answer, (200, json_type.clone(), vec![echo_result(7)]));
    for accept in [
        "application/json;q=0",
        "application/json;q=0, text/event-stream;q=0",
        "*/*, application/json;q=0, text/event-stream;q=0",
        "text/html",
    ] {
        let answer = answer_of(send(Some(accept), 8).await.expect("POST")).await;
        assert_eq!(answer, (406, String::new(), vec![]), "{accept}");
    }
}

#[tokio::test]
async fn an_empty_accept_is_served_as_none_and_a_comma_inside_a_quoted_parameter_separates_nothing()
{
    let server = HttpServer::example();
    let client = client();
    let url = &server.url;
    let json_type = "application/json".to_owned();
    // RFC 9110 §12.5.1: a field that names no media range is disregarded, as no field is.
    for (id, accept) in [(1, ""), (2, " , ")] {
        let answer = echo_answer(&client, url, Some(accept), id).await;
        assert_eq!(
            answer,
            (200, json_type.clone(), vec![echo_result(id)]),
            "{accept:?}"
        );
    }
    // The quoted value holds `application/json`: the range is text/html alone.
    let accept = r#"text/html;a=", application/json, ""#;
    let answer = echo_answer(&client, url, Some(accept), 3).await;
    assert_eq!(answer, (406, String::new(), vec![]), "{accept}");
    let accept = r#"application/json;a="x,y", text/html"#;
    let answer = echo_answer(&client, url, Some(accept), 4).await;
    assert_eq!(
        answer,
        (200, json_type.clone(), vec![echo_result(4)]),
        "{accept}"
    );
    // A session's GET with an empty `Accept` gets its stream.
    assert_a_get_stream_opens(&client, url, "").await;
}

#[tokio::test]
async fn an_accept_without_a_valid_media_range_is_served_as_none_and_a_valid_range_decides() {
    let server = HttpServer::example();
    let client = client();
    let url = &server.url;
    let json_type = "application/json".to_owned();
    // RFC 9110 §12.5.1: a field whose members are no media range (no `type/subtype`, or a
    // `q` that is no qvalue, §12.4.2) is invalid; it is disregarded, as an empty one is.
    for (id, accept) in [
        (1, ";;;"),
        (2, "json"),
        (3, " ;q=1 , ;"),
        (4, "application/json;q=1.5"),
    ] {
        let answer = echo_answer(&client, url, Some(accept), id).await;
        assert_eq!(
            answer,
            (200, json_type.clone(), vec![echo_result(id)]),
            "{accept:?}"
        );
    }
    // One valid range among invalid members decides alone.
    let answer = echo_answer(&client, url, Some(";;;, text/html"), 5).await;
    assert_eq!(answer, (406, String::new(), vec![]));
    assert_a_get_stream_opens(&client, url, ";;;").await;
}

#[tokio::test]
async fn a_progress_token_that_is_no_usable_id_gets_400_in_a_session_as_without_one() {
    let server = HttpServer::example();
    let client = client();
    let url = &server.url;
    let session = open_session(&client, url).await;
    let refused = |id: i64| {
        (
            400,
            "application/json".to_owned(),
            vec![json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602,
                "message": "params._meta.progressToken must be a string or an integer"}})],
        )
    };
    for (id, token) in [
        (2, json!(1.5)),
        (3, json!({})),
        (4, json!(null)),
        (5, json!(1e30)),
    ] {
        // In a session, the body on one line and pretty-printed (the two ways a POST is read).
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "echo", "arguments": {"text": "hi"}, "_meta": {"progressToken": token}}});
        for body in [
            call.to_string(),
            serde_json::to_string_pretty(&call).expect("JSON"),
        ] {
            let response = client
                .post(url)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-session-id", &session)
                .header("mcp-protocol-version", LEGACY)
                .body(body)
                .send()
                .await
                .expect("POST");
            assert_eq!(answer_of(response).await, refused(id), "{token}");
        }
        // Without a session (2026-07-28), the same answer.
        let mut call = echo_call(id, "hi");
        call["params"]["_meta"]["progressToken"] = token.clone();
        let response = post_echo(&client, url, None, id)
            .body(call.to_string())
            .send()
            .await
            .expect("POST");
        assert_eq!(answer_of(response).await, refused(id), "{token}");
    }
    // A usable token is served in the session.
    let call = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": "hi"}, "_meta": {"progressToken": 7}}});
    let response = legacy_post(&client, url, Some(&session), "application/json", &call)
        .send()
        .await
        .expect("POST");
    assert_eq!(
        answer_of(response).await,
        (200, "application/json".into(), vec![legacy_echo_result(6)])
    );
}

#[tokio::test]
async fn a_request_with_two_mcp_session_ids_gets_400() {
    let server = HttpServer::example();
    let client = client();
    let url = &server.url;
    let session = open_session(&client, url).await;
    let other = open_session(&client, url).await;
    let response = legacy_post(
        &client,
        url,
        Some(&session),
        "application/json",
        &legacy_echo(2),
    )
    .header("mcp-session-id", &other)
    .send()
    .await
    .expect("POST");
    assert_eq!(
        answer_of(response).await,
        (
            400,
            "application/json".into(),
            vec![json!({"jsonrpc": "2.0", "error": {"code": -32600,
                "message": "Bad request: more than one Mcp-Session-Id"}})]
        )
    );
    // Each alone is still served.
    for session in [&session, &other] {
        let response = legacy_post(
            &client,
            url,
            Some(session),
            "application/json",
            &legacy_echo(3),
        )
        .send()
        .await
        .expect("POST");
        assert_eq!(
            answer_of(response).await,
            (200, "application/json".into(), vec![legacy_echo_result(3)])
        );
    }
}

fn initialize(params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
}

fn initialize_params() -> Value {
    json!({"protocolVersion": LEGACY, "capabilities": {},
        "clientInfo": {"name": "http-edges-test", "version": "1.0.0"}})
}

/// Starts a session (`initialize`, `notifications/initialized`) and gives its id.
async fn open_session(client: &reqwest::Client, url: &str) -> String {
    let initialize = initialize(initialize_params());
    let (session, status, _) = open_legacy_session(client, url, &initialize, ACCEPT_BOTH).await;
    assert_eq!(status, 200);
    session
}

fn legacy_echo(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hi"}}})
}

fn legacy_echo_result(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "hi"}]}})
}

fn get_stream(
    client: &reqwest::Client,
    url: &str,
    session: &str,
    accept: &str,
) -> reqwest::RequestBuilder {
    client
        .get(url)
        .header("accept", accept)
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", LEGACY)
}

#[tokio::test]
async fn in_a_session_a_post_that_takes_only_sse_gets_sse_and_q_0_is_not_acceptable() {
    let server = HttpServer::example();
    let client = client();
    let url = &server.url;
    let sse = "text/event-stream";
    let response = legacy_post(&client, url, None, sse, &initialize(initialize_params()))
        .send()
        .await
        .expect("POST initialize");
    let session = session_id(&response).expect("an Mcp-Session-Id on the SSE answer");
    let (status, kind, messages) = answer_of(response).await;
    assert_eq!((status, kind.as_str(), messages.len()), (200, sse, 1));
    assert_eq!(
        messages[0]["result"]["serverInfo"]["name"],
        "embedded-example"
    );
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let response = legacy_post(&client, url, Some(&session), sse, &initialized)
        .send()
        .await
        .expect("POST initialized");
    assert_eq!(response.status().as_u16(), 202);
    let answer = |accept: &'static str, id: i64| {
        let request = legacy_post(&client, url, Some(&session), accept, &legacy_echo(id));
        async move { answer_of(request.send().await.expect("POST")).await }
    };
    assert_eq!(
        answer(sse, 2).await,
        (200, sse.to_owned(), vec![legacy_echo_result(2)])
    );
    let json_type = "application/json".to_owned();
    assert_eq!(
        answer("application/json", 3).await,
        (200, json_type, vec![legacy_echo_result(3)])
    );
    assert_eq!(
        answer("application/json;q=0, text/event-stream;q=0", 4).await,
        (406, String::new(), vec![])
    );
    for accept in [
        "text/event-stream;q=0",
        "application/json, text/event-stream;q=0",
    ] {
        let response = get_stream(&client, url, &session, accept)
            .send()
            .await
            .expect("GET");
        assert_eq!(response.status().as_u16(), 406, "{accept}");
    }
}

fn invalid_params(detail: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Invalid params",
        "data": {"cause": "invalid_params", "detail": detail}}})
}

#[tokio::test]
async fn an_initialize_answered_with_an_error_leaves_no_session() {
    // One session at most: a failed initialize that left one would take the only place.
    let server = HttpServer::start(
        common::server_bin(),
        &["--test-tools", "--http-max-sessions", "1"],
    );
    let client = client();
    let both = "application/json, text/event-stream";
    let mut no_version_string = initialize_params();
    no_version_string["protocolVersion"] = json!(5);
    let mut bad_capabilities = initialize_params();
    bad_capabilities["capabilities"] = json!(3);
    for (params, detail) in [
        (no_version_string, "params.protocolVersion must be a string"),
        (bad_capabilities, "params must be InitializeRequestParams"),
    ] {
        let response = legacy_post(&client, &server.url, None, both, &initialize(params))
            .send()
            .await
            .expect("POST initialize");
        assert_eq!(session_id(&response), None, "{detail}");
        assert_eq!(
            answer_of(response).await,
            (200, "application/json".into(), vec![invalid_params(detail)])
        );
    }
    let session = open_session(&client, &server.url).await;
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    let response = legacy_post(&client, &server.url, Some(&session), both, &ping)
        .send()
        .await
        .expect("POST ping");
    assert_eq!(
        answer_of(response).await,
        (
            200,
            "application/json".into(),
            vec![json!({"jsonrpc": "2.0", "id": 2, "result": {}})]
        )
    );
}

/// The numbers of the `chatter` log messages (`tick N`) among `events`.
fn ticks(events: &[Value]) -> Vec<u64> {
    events
        .iter()
        .filter(|e| e["method"] == "notifications/message" && e["params"]["logger"] == "chatter")
        .filter_map(|e| {
            e["params"]["data"]
                .as_str()?
                .strip_prefix("tick ")?
                .parse()
                .ok()
        })
        .collect()
}

#[tokio::test]
async fn a_new_get_stream_takes_over_from_the_old_one_which_ends_and_loses_no_message() {
    let server = HttpServer::start(crate::common::server_bin(), &["--test-tools"]);
    let client = client();
    let url = &server.url;
    let sse = "text/event-stream";
    let session = open_session(&client, url).await;
    let first = get_stream(&client, url, &session, sse)
        .send()
        .await
        .expect("GET");
    assert_eq!(first.status().as_u16(), 200);
    let mut first = chunks(first);
    let level = json!({"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel",
        "params": {"level": "info"}});
    let response = legacy_post(&client, url, Some(&session), "application/json", &level)
        .send()
        .await
        .expect("POST");
    assert_eq!(response.status().as_u16(), 200);
    // `chatter` logs `tick N` every 2 ms and never answers; with a GET stream open its log
    // messages go there.
    let chatter = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "chatter", "arguments": {"interval_ms": 2, "late": 0}}});
    let call = legacy_post(
        &client,
        url,
        Some(&session),
        "application/json, text/event-stream",
        &chatter,
    )
    .send();
    let call = tokio::spawn(call);
    let mut seen = read_until(&mut first, "tick 5\"").await;
    // The first stream stops being read (a proxy dropped it, a laptop slept) and the client
    // opens another: it gets 200, and the first ends.
    let second = get_stream(&client, url, &session, sse)
        .send()
        .await
        .expect("GET");
    assert_eq!(second.status().as_u16(), 200);
    assert_eq!(session_id(&second).as_deref(), Some(session.as_str()));
    seen.push_str(&rest_of(first).await.expect("the first stream ends whole"));
    let before = ticks(&events_of(&seen));
    let last = *before.last().expect("ticks on the first stream");
    // Every tick the first did not take comes on the second, in order: none lost, none twice.
    let mut second = chunks(second);
    let after = read_until(&mut second, &format!("tick {}\"", last + 20)).await;
    let all: Vec<u64> = before
        .into_iter()
        .chain(ticks(&events_of(&after)))
        .collect();
    let expected: Vec<u64> = (1..=all.len() as u64).collect();
    assert_eq!(all, expected);
    call.abort();
}

#[tokio::test]
async fn an_id_whose_stream_closed_before_its_response_still_gets_400_duplicate_id() {
    let server = HttpServer::start(
        crate::common::server_bin(),
        &["--test-tools", "--http-debug-log"],
    );
    let client = client();
    let url = &server.url;
    let both = "application/json, text/event-stream";
    let session = open_session(&client, url).await;
    // `chatter` sends progress (and a log message) every 20 ms and never answers.
    let chatter = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
        "name": "chatter", "arguments": {"interval_ms": 20, "late": 0},
        "_meta": {"progressToken": "c"}}});
    let response = legacy_post(&client, url, Some(&session), both, &chatter)
        .send()
        .await
        .expect("POST");
    assert_eq!(response.status().as_u16(), 200);
    let mut call = Events::new(response);
    let first = call.next().await.expect("a tick");
    assert_eq!(first["method"], "notifications/progress");
    assert_eq!(first["params"]["progressToken"], "c");
    drop(call);
    // The server sees the stream close; the request goes on (2025-11-25: a disconnection is
    // no cancellation).
    server
        .wait_for_log("POST stream closed before its response: the request goes on")
        .await;
    for body in [legacy_echo(9), chatter.clone()] {
        let response = legacy_post(&client, url, Some(&session), both, &body)
            .send()
            .await
            .expect("POST");
        assert_eq!(session_id(&response).as_deref(), Some(session.as_str()));
        assert_eq!(
            answer_of(response).await,
            (
                400,
                "application/json".into(),
                vec![json!({"jsonrpc": "2.0", "id": 9, "error": {"code": -32600,
                    "message": "Invalid request: the id is in use by a request in flight",
                    "data": {"cause": "duplicate_id"}}})]
            )
        );
    }
    // Another id is served.
    let response = legacy_post(
        &client,
        url,
        Some(&session),
        both,
        &json!({"jsonrpc": "2.0", "id": 10,
            "method": "ping"}),
    )
    .send()
    .await
    .expect("POST");
    assert_eq!(
        answer_of(response).await,
        (
            200,
            "application/json".into(),
            vec![json!({"jsonrpc": "2.0", "id": 10, "result": {}})]
        )
    );
}

type Chunks = std::pin::Pin<Box<dyn futures_util::Stream<Item = reqwest::Result<bytes::Bytes>>>>;

fn chunks(response: reqwest::Response) -> Chunks {
    Box::pin(response.bytes_stream())
}

/// The body's text up to and with the first chunk that holds `wanted`.
async fn read_until(chunks: &mut Chunks, wanted: &str) -> String {
    use futures_util::StreamExt;
    let mut text = String::new();
    while !text.contains(wanted) {
        match tokio::time::timeout(WAIT, chunks.next()).await {
            Ok(Some(Ok(chunk))) => text.push_str(&String::from_utf8_lossy(&chunk)),
            other => panic!("no {wanted:?} in the body: {other:?} after {text:?}"),
        }
    }
    text
}

/// The rest of a body to its end, or the error that ended it early (a body cut before its
/// terminating chunk: hyper's incomplete message).
async fn rest_of(mut chunks: Chunks) -> Result<String, String> {
    use futures_util::StreamExt;
    let mut text = String::new();
    loop {
        match tokio::time::timeout(WAIT, chunks.next()).await {
            Ok(Some(Ok(chunk))) => text.push_str(&String::from_utf8_lossy(&chunk)),
            Ok(Some(Err(error))) => return Err(format!("{error:?} after {} bytes", text.len())),
            Ok(None) => return Ok(text),
            Err(_) => panic!("the body did not end within {WAIT:?}; got {text:?}"),
        }
    }
}

/// The `data` of each SSE event of `text`, as JSON (keep-alive comments skipped).
fn events_of(text: &str) -> Vec<Value> {
    text.split("\n\n")
        .filter_map(|block| {
            let data: Vec<&str> = block
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .collect();
            (!data.is_empty())
                .then(|| serde_json::from_str(&data.join("\n")).unwrap_or(Value::Null))
        })
        .collect()
}

#[tokio::test]
async fn on_sigterm_the_open_streams_end_whole_and_the_server_exits_0() {
    let mut server = HttpServer::example();
    let client = client();
    let url = server.url.clone();
    let session = open_session(&client, &url).await;
    let get = get_stream(&client, &url, &session, "text/event-stream")
        .send()
        .await
        .expect("GET");
    assert_eq!(get.status().as_u16(), 200);
    let listen = json!({"jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen",
        "params": {"notifications": {"toolsListChanged": true}, "_meta": modern_meta()}});
    let listen = client
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", MODERN)
        .header("mcp-method", "subscriptions/listen")
        .body(listen.to_string())
        .send()
        .await
        .expect("POST listen");
    assert_eq!(listen.status().as_u16(), 200);
    // Both streams are open once their first events are in: the session's three list
    // changes, and the listen's acknowledgement.
    let mut get = chunks(get);
    let mut listen = chunks(listen);
    let mut get_text = read_until(&mut get, "resources/list_changed").await;
    let mut listen_text = read_until(&mut listen, "acknowledged").await;
    server.signal("-TERM");
    get_text += &rest_of(get).await.expect("the GET stream ends whole");
    listen_text += &rest_of(listen).await.expect("the listen stream ends whole");
    let status = server.wait_exit(WAIT).await;
    assert_eq!(status.and_then(|s| s.code()), Some(0));
    let list_changed = |list: &str| json!({"jsonrpc": "2.0", "method": format!("notifications/{list}/list_changed")});
    assert_eq!(
        events_of(&get_text),
        ["tools", "prompts", "resources"].map(list_changed)
    );
    let listen_events = events_of(&listen_text);
    assert_eq!(listen_events.len(), 2, "{listen_events:?}");
    assert_eq!(
        listen_events[1],
        json!({"jsonrpc": "2.0", "id": "L", "result": {"resultType": "complete", "_meta": {
            "io.modelcontextprotocol/subscriptionId": "L",
            "io.modelcontextprotocol/serverInfo": {"name": "embedded-example", "version": "1.0.0"}}}})
    );
}

#[tokio::test]
async fn on_sigterm_a_request_still_running_after_the_grace_time_has_its_stream_ended_whole() {
    let mut server = HttpServer::fixture();
    let client = client();
    // `chatter` sends progress every 20 ms and never answers: it runs past any grace time.
    let chatter = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
        "name": "chatter", "arguments": {"interval_ms": 20, "late": 0},
        "_meta": {"progressToken": "c", "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {}}}});
    let response = client
        .post(&server.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", MODERN)
        .header("mcp-method", "tools/call")
        .header("mcp-name", "chatter")
        .body(chatter.to_string())
        .send()
        .await
        .expect("POST chatter");
    assert_eq!(response.status().as_u16(), 200);
    let mut stream = chunks(response);
    let mut text = read_until(&mut stream, "tick 1").await;
    server.signal("-TERM");
    text += &rest_of(stream).await.expect("the stream ends whole");
    let status = server.wait_exit(WAIT).await;
    assert_eq!(status.and_then(|s| s.code()), Some(0));
    let events = events_of(&text);
    assert!(!events.is_empty());
    // Progress and log messages only: the request never answered, and was cancelled.
    for event in &events {
        let method = event["method"].as_str().unwrap_or_default();
        assert!(
            ["notifications/progress", "notifications/message"].contains(&method),
            "{event}"
        );
    }
}

#[tokio::test]
async fn on_sigterm_a_session_request_not_yet_answered_gets_the_stops_503() {
    let mut server = HttpServer::example();
    let client = client();
    let url = server.url.clone();
    let both = "application/json, text/event-stream";
    let params = json!({"protocolVersion": LEGACY, "capabilities": {"elicitation": {"form": {}}},
        "clientInfo": {"name": "http-edges-test", "version": "1.0.0"}});
    let (session, _, _) = open_legacy_session(&client, &url, &initialize(params), both).await;
    // With the GET stream open, the call's elicitation goes there, and its POST waits with
    // nothing written when the server stops.
    let get = get_stream(&client, &url, &session, "text/event-stream")
        .send()
        .await
        .expect("GET");
    let mut get = chunks(get);
    read_until(&mut get, "resources/list_changed").await;
    let ask = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "ask_name"}});
    let waiting = tokio::spawn(legacy_post(&client, &url, Some(&session), both, &ask).send());
    read_until(&mut get, "elicitation/create").await;
    server.signal("-TERM");
    let response = waiting
        .await
        .expect("the POST's task")
        .expect("the POST's answer");
    let (status, _, messages) = answer_of(response).await;
    assert_eq!(
        (status, messages),
        (
            503,
            vec![json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32603,
                "message": "Internal error: the server stopped before the request finished"}})]
        )
    );
    let status = server.wait_exit(WAIT).await;
    assert_eq!(status.and_then(|s| s.code()), Some(0));
}
