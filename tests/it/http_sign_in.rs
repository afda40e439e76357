//! The token seam of the HTTP transport, in process: the bridge's actors on
//! `UpstreamSpec::Http` with a `TokenProvider` of the test (what sign-in will plug in), in
//! front of the fixture HTTP upstream. A 401 is handed to the provider as a challenge, the
//! request goes again with the new token, and the listen stream that was refused with 401
//! opens again after that sign-in.

use crate::common::memory_editor::{DEADLINE, Editor};
use mcp_test_fixtures::http_fixture;

use futures_util::future::LocalBoxFuture;
use http_fixture::{Canned, HttpFixture};
use mcp_bridge::actors::config::{BridgeConfig, Timeouts};
use mcp_bridge::protocol::listen::ListenTimings;
use mcp_bridge::protocol::wire::framing::DEFAULT_MAX_LINE_BYTES;
use mcp_bridge::server::{Outcome, Server, ToolDef};
use mcp_bridge::transport::http::{HttpSpec, TokenSource};
use mcp_bridge::transport::open::UpstreamSpec;
use mcp_bridge::transport::token::{AccessToken, Challenge, ChallengeOutcome, TokenProvider};
use serde_json::json;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A provider that declines its first challenge (a sign-in the user put off) and signs in at
/// the second (then its token is `t1`); it records each challenge as `status rejected-token`.
struct Provider {
    signed_in: Arc<Mutex<bool>>,
    challenges: Arc<Mutex<Vec<String>>>,
}

impl TokenProvider for Provider {
    fn access_token(&self) -> LocalBoxFuture<'static, Option<AccessToken>> {
        let signed_in = self.signed_in.lock().map(|s| *s).unwrap_or(false);
        Box::pin(async move { signed_in.then(|| AccessToken::new("t1".into())) })
    }

    fn challenge(&self, c: Challenge) -> LocalBoxFuture<'static, ChallengeOutcome> {
        if let Ok(mut log) = self.challenges.lock() {
            log.push(format!(
                "{} {}",
                c.status,
                c.rejected.as_ref().map_or("none", |t| t.secret())
            ));
        }
        let first = self
            .challenges
            .lock()
            .map(|l| l.len() == 1)
            .unwrap_or(false);
        if first {
            return Box::pin(async { ChallengeOutcome::Fail("sign_in_declined: not now".into()) });
        }
        if let Ok(mut s) = self.signed_in.lock() {
            *s = true;
        }
        Box::pin(async { ChallengeOutcome::Retry })
    }
}

#[actix::test]
async fn a_401_goes_to_the_token_provider_and_the_refused_listen_opens_after_the_sign_in() {
    let server = Server::builder("fixture-auth", "1.0.0")
        .tool(
            ToolDef::new("echo", json!({"type": "object"})),
            |a, _| async move { Ok(Outcome::text(a["text"].as_str().unwrap_or_default())) },
        )
        .build();
    let f = HttpFixture::start(server, vec![]);
    f.script(
        "subscriptions/listen",
        Canned::new(401, None, "sign in first"),
    );
    f.script("tools/call", Canned::new(401, None, ""));
    let signed_in = Arc::new(Mutex::new(false));
    let challenges = Arc::new(Mutex::new(Vec::new()));
    let (s, c) = (signed_in.clone(), challenges.clone());
    let mut spec = HttpSpec::new(url::Url::parse(&f.url()).expect("url"));
    spec.tokens = TokenSource(Arc::new(move || {
        Rc::new(Provider {
            signed_in: s.clone(),
            challenges: c.clone(),
        }) as Rc<dyn TokenProvider>
    }));
    let config = BridgeConfig {
        upstream: UpstreamSpec::Http(spec),
        name: None,
        discover_timeout: DEADLINE,
        open_upstream: mcp_bridge::transport::open::open,
        max_line_bytes: DEFAULT_MAX_LINE_BYTES,
        max_depth: mcp_bridge::protocol::wire::jsonrpc::MAX_CLIENT_DEPTH,
        timeouts: Timeouts::default(),
        max_in_flight: 256,
        shutdown_grace: Duration::from_secs(2),
        listen: ListenTimings {
            backoff_initial: Duration::from_millis(50),
            ..ListenTimings::default()
        },
        sign_in: None,
        metrics_interval: None,
        item_filter: None,
        observer: None,
        in_process: false,
        member: None,
    };
    let mut editor = Editor::start(config);
    editor
        .send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        )
        .await;
    let init = editor.next().await;
    assert_eq!(init["result"]["capabilities"]["tools"]["listChanged"], true);
    editor
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    // The listen is refused with 401: the provider declines, the stream waits for a sign-in.
    let waited = tokio::time::timeout(DEADLINE, async {
        while challenges.lock().map(|l| l.len()).unwrap_or(0) < 1 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(waited.is_ok());
    editor
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "after sign-in"}}}))
        .await;
    // The call's 401 signs in: the call goes again with the token, and the listen stream
    // opens again; its acknowledgment brings one list change (a gap). In either order.
    let mut got = vec![editor.next().await, editor.next().await];
    got.sort_by_key(|v| v.get("id").is_some());
    assert_eq!(
        got,
        vec![
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
            json!({"jsonrpc": "2.0", "id": 2, "result": {
                "content": [{"type": "text", "text": "after sign-in"}]}}),
        ]
    );
    let auth = |m: &str| -> Vec<Option<String>> {
        f.seen_of(m)
            .iter()
            .map(|s| s.header("authorization").map(str::to_owned))
            .collect()
    };
    assert_eq!(auth("tools/call"), vec![None, Some("Bearer t1".into())]);
    assert_eq!(
        auth("subscriptions/listen"),
        vec![None, Some("Bearer t1".into())]
    );
    let log = challenges.lock().map(|l| l.clone()).unwrap_or_default();
    assert_eq!(log, vec!["401 none".to_string(), "401 none".to_string()]);
}
