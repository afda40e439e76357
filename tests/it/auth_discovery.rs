//! Discovery through the real binary (the URL form, the memory token store), against the
//! fixture authorization server: the resource indicator is the resource metadata's
//! `resource`, verbatim, at the authorization request, the code exchange and the refresh
//! (RFC 9728 §3.3, RFC 8707 §2); a server without resource metadata (a 2025-03-26 one,
//! behind the pass-through) signs in at the authorization server metadata of its origin, or
//! at the default endpoints (2025-03-26 authorization §2.3.2, §2.3.3).

use crate::common::legacy_http_fixture::{LegacyFixture, Script};
use crate::common::signed_bridge::{bridge, echo, fixture_with, protected_server};
use mcp_test_fixtures::auth_fixture::Fixture;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Resource metadata at the root names the origin: the authorization URL, the code exchange
/// and the refresh carry exactly the origin, not the server URL `<origin>/mcp`.
#[test]
fn the_resource_indicator_is_the_resource_of_the_metadata_verbatim() {
    let up = protected_server();
    let fx = fixture_with(|b| b.resource_is_origin = true);
    *fx.upstream.lock().unwrap() = Some(up.url());
    let (mut b, _) = bridge(&fx, "resource-origin", &["--sign-in-timeout", "10"], &[]);
    b.initialize();
    assert_eq!(echo(&mut b, 1, "hi"), "hi");
    // The authorization request and the code exchange.
    assert_eq!(*fx.resources.lock().unwrap(), vec![fx.base.clone(); 2]);
    fx.expire_all();
    assert_eq!(echo(&mut b, 2, "again"), "again");
    assert_eq!(fx.counters.refresh_grants.load(Ordering::SeqCst), 1);
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 1);
    assert_eq!(*fx.resources.lock().unwrap(), vec![fx.base.clone(); 3]);
}

/// A 2025-03-26 server: no resource metadata (404 at every URL, none named by the
/// challenge), behind the pass-through (a 2025-11-25 upstream); `asm_status` is the answer
/// of the authorization server metadata at its origin (`None`: the document).
fn legacy_signs_in(tag: &str, asm_status: Option<u16>) -> (Arc<Fixture>, String) {
    let legacy = LegacyFixture::start(Script::default());
    let fx = fixture_with(|b| {
        b.prm_status = Some(404);
        b.challenge_names_prm = false;
        b.asm_status = asm_status;
    });
    *fx.upstream.lock().unwrap() = Some(legacy.url());
    let (mut b, _) = bridge(&fx, tag, &["--sign-in-timeout", "10"], &[]);
    let init = b.initialize_only(json!({}));
    assert_eq!(init["result"]["serverInfo"]["name"], "legacy-http-fixture");
    assert_eq!(echo(&mut b, 1, "hi"), "hi");
    // Dynamic registration, one authorization with PKCE S256 (the fixture refuses any other),
    // one code exchange, both with the canonical server URL as the resource.
    assert_eq!(fx.counters.registrations.load(Ordering::SeqCst), 1);
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 1);
    assert_eq!(fx.counters.code_grants.load(Ordering::SeqCst), 1);
    assert_eq!(*fx.resources.lock().unwrap(), vec![fx.mcp_url(); 2]);
    b.close_stdin();
    let lines = b.stderr_lines_to_the_end(|l| {
        l.starts_with("mcp-bridge: sign-in: info: the server has no protected resource metadata")
    });
    (fx, lines.join("\n"))
}

#[test]
fn without_resource_metadata_the_authorization_server_metadata_of_the_origin_serves() {
    let (fx, line) = legacy_signs_in("legacy-metadata", None);
    assert_eq!(
        line,
        format!(
            "mcp-bridge: sign-in: info: the server has no protected resource metadata (HTTP 404): signing in as 2025-03-26 authorization says, with the authorization server metadata of its origin, {}/.well-known/oauth-authorization-server",
            fx.base
        )
    );
}

#[test]
fn without_any_metadata_the_default_endpoints_of_the_origin_serve() {
    let (fx, line) = legacy_signs_in("legacy-endpoints", Some(404));
    let o = &fx.base;
    assert_eq!(
        line,
        format!(
            "mcp-bridge: sign-in: info: the server has no protected resource metadata and no authorization server metadata (HTTP 404): signing in at the default endpoints of 2025-03-26 authorization, {o}/authorize, {o}/token and {o}/register"
        )
    );
}

/// Only a 404 at every resource metadata URL means a 2025-03-26 server: another failure
/// (here HTTP 500 at the URL the challenge names) fails the sign-in as before.
#[test]
fn a_resource_metadata_url_that_fails_otherwise_is_not_taken_for_a_2025_03_26_server() {
    let up = protected_server();
    let fx = fixture_with(|b| b.prm_status = Some(500));
    *fx.upstream.lock().unwrap() = Some(up.url());
    let (mut b, _) = bridge(&fx, "prm-500", &["--sign-in-timeout", "10"], &[]);
    let init = b.initialize_request(json!(0), json!({}));
    assert_eq!(
        init,
        json!({"jsonrpc": "2.0", "id": 0, "error": {"code": -32603,
            "message": "The upstream server did not complete server/discover",
            "data": {"cause": "discover_failed",
                "detail": "sign_in_failed: the sign-in failed (no protected resource metadata (HTTP 500))"}}})
    );
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 0);
    b.close_stdin();
    let err = b.stderr_to_the_end();
    assert!(!err.contains("2025-03-26"), "{err}");
}

/// `--authorize-param NAME=VALUE` adds its parameters to the authorization request (an
/// authorization server that needs `audience`, for example), beside the bridge's own, which
/// it cannot replace (a usage error, exit 2).
#[test]
fn authorize_params_are_added_to_the_authorization_request() {
    let up = protected_server();
    let fx = fixture_with(|_| {});
    *fx.upstream.lock().unwrap() = Some(up.url());
    let (mut b, _) = bridge(
        &fx,
        "authorize-param",
        &[
            "--sign-in-timeout",
            "10",
            "--authorize-param",
            "audience=https://api.example.com",
            "--authorize-param",
            "prompt=consent",
        ],
        &[],
    );
    b.initialize();
    assert_eq!(echo(&mut b, 1, "hi"), "hi");
    let queries = fx.authorize_queries.lock().unwrap().clone();
    assert_eq!(queries.len(), 1);
    let q = &queries[0];
    assert_eq!(
        (
            q.get("audience").map(String::as_str),
            q.get("prompt").map(String::as_str)
        ),
        (Some("https://api.example.com"), Some("consent"))
    );
    assert_eq!(q.get("response_type").map(String::as_str), Some("code"));
    assert_eq!(q.get("resource"), Some(&fx.resource()));
}
