//! Black-box tests of browser clients of the server API over HTTP: CORS for the origins that
//! the `Origin` check admits (preflights, the echoed origin, `Mcp-Session-Id` exposed) and a
//! 403 for a foreign one, with reqwest, and with a real headless Chromium whose page calls
//! the embedded example with `fetch` as the TypeScript SDK's transport does (ignored here:
//! `scripts/test-browser.sh` runs it, installing chromium, and fails without it in CI).

use crate::common::http_serve::*;
use serde_json::{Value, json};
use std::process::{Command, Stdio};
use std::time::Duration;

const LOOPBACK_ORIGIN: &str = "http://localhost:6274";
const FOREIGN_ORIGIN: &str = "http://evil.example";

fn header(response: &reqwest::Response, name: &str) -> Option<String> {
    response
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

fn preflight(
    client: &reqwest::Client,
    url: &str,
    origin: &str,
    method: &str,
) -> reqwest::RequestBuilder {
    client
        .request(reqwest::Method::OPTIONS, url)
        .header("origin", origin)
        .header("access-control-request-method", method)
        .header(
            "access-control-request-headers",
            "content-type,mcp-protocol-version,mcp-session-id",
        )
}

#[tokio::test]
async fn a_loopback_origin_gets_its_preflight_answered_and_reads_the_session_id() {
    let server = HttpServer::example();
    let client = client();
    let url = &server.url;
    for method in ["POST", "GET", "DELETE"] {
        let response = preflight(&client, url, LOOPBACK_ORIGIN, method)
            .send()
            .await
            .expect("OPTIONS");
        assert_eq!(response.status().as_u16(), 204, "{method}");
        assert_eq!(
            [
                "access-control-allow-origin",
                "access-control-allow-methods",
                "access-control-allow-headers",
                "access-control-expose-headers",
                "access-control-max-age",
            ]
            .map(|name| header(&response, name)),
            [
                Some(LOOPBACK_ORIGIN.into()),
                Some("GET, POST, DELETE".into()),
                Some(
                    "content-type, accept, authorization, last-event-id, mcp-session-id, \
                     mcp-protocol-version, mcp-method, mcp-name"
                        .into()
                ),
                Some("mcp-session-id, mcp-protocol-version, www-authenticate".into()),
                Some("600".into()),
            ],
            "{method}"
        );
    }
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "http-cors-test", "version": "1.0.0"}}});
    let response = legacy_post(&client, url, None, ACCEPT_BOTH, &initialize)
        .header("origin", LOOPBACK_ORIGIN)
        .send()
        .await
        .expect("POST");
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(
        header(&response, "access-control-allow-origin").as_deref(),
        Some(LOOPBACK_ORIGIN)
    );
    assert_eq!(
        header(&response, "access-control-expose-headers").as_deref(),
        Some("mcp-session-id, mcp-protocol-version, www-authenticate")
    );
    assert_eq!(header(&response, "vary").as_deref(), Some("origin"));
    assert!(header(&response, "mcp-session-id").is_some());
    // Without an Origin (no browser), no CORS header.
    let response = client
        .request(reqwest::Method::OPTIONS, url)
        .send()
        .await
        .expect("OPTIONS");
    assert_eq!(
        (
            response.status().as_u16(),
            header(&response, "allow"),
            header(&response, "access-control-allow-origin")
        ),
        (204, Some("GET, POST, DELETE".into()), None)
    );
}

#[tokio::test]
async fn an_error_answer_to_an_admitted_origin_carries_the_cors_headers() {
    let server = HttpServer::example();
    let client = client();
    let url = &server.url;
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "http-cors-test", "version": "1.0.0"}}});
    // A page reads an error only with the CORS headers (Fetch, "CORS check").
    let requests = [
        (
            legacy_post(&client, url, Some("deadbeef"), ACCEPT_BOTH, &initialize),
            404,
        ),
        (
            client
                .post(url)
                .header("content-type", "text/plain")
                .body("{}"),
            415,
        ),
        (
            legacy_post(&client, url, None, "text/html", &initialize),
            406,
        ),
        (client.get(url), 405),
        (
            legacy_post(&client, url, None, ACCEPT_BOTH, &json!([])),
            400,
        ),
    ];
    for (request, status) in requests {
        let response = request
            .header("origin", LOOPBACK_ORIGIN)
            .send()
            .await
            .expect("the request");
        assert_eq!(
            [
                "access-control-allow-origin",
                "access-control-expose-headers",
                "vary",
            ]
            .map(|name| header(&response, name)),
            [
                Some(LOOPBACK_ORIGIN.into()),
                Some("mcp-session-id, mcp-protocol-version, www-authenticate".into()),
                Some("origin".into()),
            ],
            "{status}"
        );
        assert_eq!(response.status().as_u16(), status);
    }
}

#[tokio::test]
async fn a_request_with_two_origins_gets_400_and_no_cors_header() {
    let server = HttpServer::example();
    let client = client();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "http-cors-test", "version": "1.0.0"}}});
    // RFC 6454 §7.3: a request carries one Origin; of two, which one to judge cannot be told.
    for (first, second) in [
        (LOOPBACK_ORIGIN, FOREIGN_ORIGIN),
        (FOREIGN_ORIGIN, LOOPBACK_ORIGIN),
        (LOOPBACK_ORIGIN, LOOPBACK_ORIGIN),
    ] {
        let post = legacy_post(&client, &server.url, None, ACCEPT_BOTH, &initialize)
            .header("origin", first)
            .header("origin", second);
        let options = preflight(&client, &server.url, first, "POST").header("origin", second);
        for request in [post, options] {
            let response = request.send().await.expect("the request");
            assert_eq!(
                (
                    header(&response, "access-control-allow-origin"),
                    header(&response, "vary"),
                    header(&response, "mcp-session-id")
                ),
                (None, None, None),
                "{first} {second}"
            );
            assert_eq!(
                json_answer(response).await,
                (
                    400,
                    "application/json".into(),
                    json!({"jsonrpc": "2.0", "error": {"code": -32600,
                        "message": "Bad request: more than one Origin"}})
                ),
                "{first} {second}"
            );
        }
    }
}

#[tokio::test]
async fn a_foreign_origin_gets_403_preflight_included_and_no_cors_header() {
    let server = HttpServer::example();
    let client = client();
    let response = preflight(&client, &server.url, FOREIGN_ORIGIN, "POST")
        .send()
        .await
        .expect("OPTIONS");
    assert_eq!(header(&response, "access-control-allow-origin"), None);
    assert_eq!(
        json_answer(response).await,
        (
            403,
            "application/json".into(),
            json!({"jsonrpc": "2.0", "error": {"code": -32600,
                "message": "Forbidden: the Origin is not allowed"}})
        )
    );
}

/// The page of the browser test: it calls the server at `?mcp=URL` as the TypeScript SDK's
/// transport does (a 2026-07-28 call; a 2025-11-25 session: `initialize`, its GET stream, a
/// call) and posts what it saw, as JSON, to `/result` of its own origin ([`PageHost`]).
const PAGE: &str = r#"<!doctype html><html><body><script>
const mcp = new URLSearchParams(location.search).get('mcp');
const out = {};
const json = {'content-type': 'application/json', 'accept': 'application/json, text/event-stream'};
async function modern() {
  const meta = {'io.modelcontextprotocol/protocolVersion': '2026-07-28',
                'io.modelcontextprotocol/clientCapabilities': {}};
  const r = await fetch(mcp, {method: 'POST', body: JSON.stringify({jsonrpc: '2.0', id: 1,
      method: 'tools/call', params: {name: 'echo', arguments: {text: 'hi'}, _meta: meta}}),
    headers: {...json, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call',
              'mcp-name': 'echo'}});
  return {status: r.status, body: await r.json()};
}
async function session() {
  let r = await fetch(mcp, {method: 'POST', headers: json, body: JSON.stringify({jsonrpc: '2.0',
    id: 1, method: 'initialize', params: {protocolVersion: '2025-11-25', capabilities: {},
    clientInfo: {name: 'browser', version: '1'}}})});
  const id = r.headers.get('mcp-session-id');
  const seen = {initialize: r.status, server: (await r.json()).result.serverInfo.name,
                sessionId: id !== null && id.length};
  const inSession = {'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25'};
  r = await fetch(mcp, {method: 'POST', headers: {...json, ...inSession},
    body: JSON.stringify({jsonrpc: '2.0', method: 'notifications/initialized'})});
  seen.initialized = r.status;
  const get = await fetch(mcp, {headers: {'accept': 'text/event-stream', ...inSession}});
  seen.get = [get.status, get.headers.get('content-type')];
  const reader = get.body.getReader();
  let text = '';
  while (!text.includes('\n\n')) {
    const {value, done} = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  seen.firstEvent = JSON.parse(text.split('\n').find(l => l.startsWith('data: ')).slice(6));
  r = await fetch(mcp, {method: 'POST', headers: {...json, ...inSession}, body: JSON.stringify(
    {jsonrpc: '2.0', id: 2, method: 'tools/call', params: {name: 'echo', arguments: {text: 'hi'}}})});
  seen.call = {status: r.status, body: await r.json()};
  await reader.cancel();
  return seen;
}
(async () => {
  try { out.modern = await modern(); } catch (e) { out.modern = {error: String(e)}; }
  try { out.session = await session(); } catch (e) { out.session = {error: String(e)}; }
  await fetch('/result', {method: 'POST', body: JSON.stringify(out)});
})();
</script></body></html>
"#;

/// The longest a page may take to post what it saw: the page makes five requests to a server
/// on the same machine, and Chromium starts in a few seconds even on a busy machine.
const PAGE_RESULT_TIME_LIMIT: Duration = Duration::from_secs(120);

/// The host of the page on a loopback port: `GET /page.html` serves [`PAGE`] and
/// `POST /result` hands the page's report to the test. The page posts to its own origin, so
/// the report needs no CORS whatever origin the page has. Its runtime ends when it is dropped.
struct PageHost {
    port: u16,
    results: std::sync::mpsc::Receiver<String>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl PageHost {
    fn start() -> PageHost {
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (results_tx, results) = std::sync::mpsc::channel::<String>();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime for the page host");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind the page host");
                let port = listener.local_addr().expect("its address").port();
                let app = axum::Router::new()
                    .route(
                        "/page.html",
                        axum::routing::get(|| async { axum::response::Html(PAGE) }),
                    )
                    .route(
                        "/result",
                        axum::routing::post(move |body: String| async move {
                            let _ = results_tx.send(body);
                            axum::http::StatusCode::NO_CONTENT
                        }),
                    );
                let _ = ready_tx.send(port);
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(async move {
                        let _ = stopped.await;
                    })
                    .await;
            });
        });
        let port = ready_rx.recv().expect("the page host's port");
        PageHost {
            port,
            results,
            _stop: stop,
        }
    }

    /// What the page at `page_url` posted: Chromium runs it (a fresh profile each run) until
    /// the report arrives, then is killed. Chromium resolves `foreign.test` to the loopback
    /// address, so a page can come from a foreign origin.
    fn run_page(&self, dir: &std::path::Path, name: &str, page_url: &str) -> Value {
        let profile = dir.join(format!("profile-{name}"));
        let _ = std::fs::remove_dir_all(&profile);
        let mut chromium = Command::new("chromium")
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--host-resolver-rules=MAP foreign.test 127.0.0.1",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(page_url)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("run chromium (scripts/test-browser.sh installs it)");
        let report = self.results.recv_timeout(PAGE_RESULT_TIME_LIMIT);
        let _ = chromium.kill();
        let _ = chromium.wait();
        let report = report.unwrap_or_else(|_| {
            panic!("the page {name} posted nothing in {PAGE_RESULT_TIME_LIMIT:?}")
        });
        serde_json::from_str(&report)
            .unwrap_or_else(|_| panic!("the report of {name} is no JSON: {report}"))
    }
}

#[test]
#[ignore = "needs chromium: scripts/test-browser.sh runs it"]
fn a_page_from_a_loopback_origin_calls_the_server_with_fetch_and_a_foreign_one_fails() {
    let server = HttpServer::example();
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts/http-cors");
    std::fs::create_dir_all(&dir).expect("the artifacts directory");
    let pages = PageHost::start();
    let mcp = &server.url;
    let loopback = pages.run_page(
        &dir,
        "loopback",
        &format!("http://127.0.0.1:{}/page.html?mcp={mcp}", pages.port),
    );
    assert_eq!(
        loopback,
        json!({
            "modern": {"status": 200, "body": {"jsonrpc": "2.0", "id": 1, "result": {
                "resultType": "complete", "content": [{"type": "text", "text": "hi"}],
                "_meta": {"io.modelcontextprotocol/serverInfo":
                    {"name": "embedded-example", "version": "1.0.0"}}}}},
            "session": {"initialize": 200, "server": "embedded-example", "sessionId": 32,
                "initialized": 202, "get": [200, "text/event-stream"],
                "firstEvent": {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"},
                "call": {"status": 200, "body": {"jsonrpc": "2.0", "id": 2,
                    "result": {"content": [{"type": "text", "text": "hi"}]}}}}
        })
    );
    let foreign = pages.run_page(
        &dir,
        "foreign",
        &format!("http://foreign.test:{}/page.html?mcp={mcp}", pages.port),
    );
    let failed = json!({"error": "TypeError: Failed to fetch"});
    assert_eq!(foreign, json!({"modern": failed, "session": failed}));
}
