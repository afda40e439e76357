//! The device authorization grant through the real binary (`--sign-in device`, RFC 8628),
//! against the fixture authorization server: the sign-in line with `verification_uri` and
//! `user_code`, polls at `interval` until the user approves (`authorization_pending`), 5 s
//! more after `slow_down`, `expired_token` and `access_denied` with causes of their own, the
//! editor's URL elicitation with `verification_uri_complete` after `initialized`, the device
//! sign-in that takes over from a browser that does not start, and a server without a device
//! authorization endpoint.

use crate::common::signed_bridge::{bridge, echo, fixture_with, protected_server};
use crate::common::{Bridge, wait_until};
use mcp_test_fixtures::http_fixture::HttpFixture;
use serde_json::{Value, json};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use mcp_test_fixtures::auth_fixture::{Behaviour, Fixture};

/// Long enough for a sign-in of a few polls (and the 6 s of a `slow_down`) on a busy machine.
const SIGN_IN_WAIT: Duration = Duration::from_secs(60);

const DEVICE_CODE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";

/// The protected server behind a fixture that offers the device grant, changed by `tweak`.
fn device_fixture(tweak: impl FnOnce(&mut Behaviour)) -> (HttpFixture, Arc<Fixture>) {
    let up = protected_server();
    let fx = fixture_with(|b| {
        b.device_authorization = true;
        tweak(b);
    });
    *fx.upstream.lock().unwrap() = Some(up.url());
    (up, fx)
}

/// Sends `initialize` (2025-11-25, `capabilities`) without waiting for its answer.
fn send_initialize(b: &mut Bridge, capabilities: Value) {
    b.send_request(
        json!(0),
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": capabilities,
               "clientInfo": {"name": "blackbox-test", "version": "1.0.0"}}),
    );
}

/// The lines of `stderr` that begin with `mcp-bridge: sign in at`.
fn sign_in_lines(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.starts_with("mcp-bridge: sign in at"))
        .map(str::to_string)
        .collect()
}

/// The user opens `url` (curl as the browser on another device); the page's answer.
fn visit(url: &str) -> String {
    let out = Command::new("curl").args(["-s", url]).output().unwrap();
    assert!(out.status.success(), "curl {url}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The answer of `initialize` when the device sign-in fails with `detail`.
fn discover_failed(detail: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "error": {"code": -32603,
        "message": "The upstream server did not complete server/discover",
        "data": {"cause": "discover_failed", "detail": detail}}})
}

#[test]
fn a_device_sign_in_shows_its_code_polls_until_approval_and_the_call_carries_the_token() {
    let (_up, fx) = device_fixture(|_| {});
    let (mut b, dir) = bridge(&fx, "device", &["--sign-in", "device"], &[]);
    send_initialize(&mut b, json!({}));
    // The sign-in line: the verification URI and the user code, exactly as the server sent
    // them.
    let line = format!(
        "mcp-bridge: sign in at {}/device with the code WDJB-0001",
        fx.base
    );
    b.wait_stderr(&line);
    assert_eq!(sign_in_lines(&b.stderr_text()), vec![line.clone()]);
    // The user takes a while: the bridge polls, `authorization_pending` each time.
    assert!(wait_until(|| fx.device_polls.lock().unwrap().len() >= 2));
    assert_eq!(
        visit(&format!("{}/device?user_code=WDJB-0001", fx.base)),
        "approved"
    );
    let init = b.recv_response_within(&json!(0), SIGN_IN_WAIT);
    assert_eq!(init["result"]["serverInfo"]["name"], "protected", "{init}");
    b.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    assert_eq!(echo(&mut b, 1, "hi"), "hi");

    let c = &fx.counters;
    let polls = fx.device_polls.lock().unwrap().clone();
    // Every poll but the last was pending; the last got the token.
    assert_eq!(c.device_pending.load(Ordering::SeqCst), polls.len() - 1);
    assert_eq!(c.device_grants.load(Ordering::SeqCst), 1);
    // At `interval` (1 s) from the code on, the first poll too (RFC 8628 §3.5).
    let mut before = fx.device_authorized_at.lock().unwrap()[0];
    for p in &polls {
        assert!(
            p.duration_since(before) >= Duration::from_secs(1),
            "{polls:?}"
        );
        before = *p;
    }
    // The device authorization request carried the client, the scopes and the resource; the
    // dynamic registration asked for the device code grant.
    let req = fx.device_requests.lock().unwrap()[0].clone();
    assert_eq!(
        req.get("scope").map(String::as_str),
        Some("read offline_access")
    );
    assert_eq!(req.get("resource"), Some(&fx.mcp_url()));
    assert!(
        req.get("client_id")
            .is_some_and(|id| id.starts_with("client-"))
    );
    assert_eq!(
        *fx.registered_grant_types.lock().unwrap(),
        vec![json!([
            "authorization_code",
            "refresh_token",
            DEVICE_CODE_GRANT
        ])]
    );
    // No browser, no authorization request.
    assert_eq!(c.authorizes.load(Ordering::SeqCst), 0);
    b.close_stdin();
    let err = b.stderr_to_the_end();
    assert!(!dir.join("browser-ran").exists(), "{err}");
    assert_eq!(sign_in_lines(&err), vec![line]);
    for s in fx.secrets.lock().unwrap().iter() {
        assert!(
            !err.contains(s.as_str()),
            "a code or token on stderr: {err}"
        );
    }
}

#[test]
fn after_initialized_the_editor_gets_the_complete_verification_uri() {
    // The first sign-in (during `initialize`) is approved at the first poll.
    let (_up, fx) = device_fixture(|b| b.device_user_acts_at_poll = Some(1));
    let (mut b, _) = bridge(&fx, "device-editor", &["--sign-in", "device"], &[]);
    b.initialize_with(json!({"elicitation": {"url": {}}}));
    // The authorization server forgets the sign-in: the next call needs a new one, after
    // `initialized`.
    fx.expire_all();
    fx.revoke_refresh_tokens();
    b.send_tools_call(json!(2), "echo", json!({"text": "again"}));
    let q = loop {
        let v = b.recv();
        if v["method"] == "elicitation/create" {
            break v;
        }
    };
    let complete = format!("{}/device?user_code=WDJB-0002", fx.base);
    assert_eq!(q["params"]["mode"], "url", "{q}");
    assert_eq!(q["params"]["url"], complete.as_str(), "{q}");
    assert_eq!(
        q["params"]["message"],
        "The MCP server needs a sign-in. Open the link and confirm the code WDJB-0002 to sign in."
    );
    // The stderr line is written too.
    b.wait_stderr(&format!(
        "mcp-bridge: sign in at {}/device with the code WDJB-0002",
        fx.base
    ));
    b.send(&json!({"jsonrpc": "2.0", "id": q["id"], "result": {"action": "accept"}}));
    // The editor opens the link; the user approves there.
    assert_eq!(visit(&complete), "approved");
    let r = b.recv_response_within(&json!(2), SIGN_IN_WAIT);
    assert_eq!(r["result"]["content"][0]["text"], "again", "{r}");
    // The editor is told the out-of-band part is over, before the call's answer.
    let done = json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete",
        "params": {"elicitationId": q["params"]["elicitationId"]}});
    let at = b.seen.iter().position(|v| v == &done);
    let answered = b.seen.iter().position(|v| v["id"] == json!(2));
    assert!(at.is_some() && at < answered, "{:?}", b.seen);
    assert_eq!(fx.counters.device_grants.load(Ordering::SeqCst), 2);
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 0);
}

#[test]
fn slow_down_adds_five_seconds_to_the_interval() {
    // Poll 1 gets `slow_down`; the user approves before poll 2.
    let (_up, fx) = device_fixture(|b| {
        b.device_slow_down_polls = vec![1];
        b.device_user_acts_at_poll = Some(2);
    });
    let (mut b, _) = bridge(&fx, "device-slow", &["--sign-in", "device"], &[]);
    send_initialize(&mut b, json!({}));
    let init = b.recv_response_within(&json!(0), SIGN_IN_WAIT);
    assert_eq!(init["result"]["serverInfo"]["name"], "protected", "{init}");
    let polls = fx.device_polls.lock().unwrap().clone();
    // Two polls: none at the old interval of 1 s after the first, the second at least 1 + 5 s
    // after it (RFC 8628 §3.5), and well before a second increase would put it.
    assert_eq!(polls.len(), 2, "{polls:?}");
    let gap = polls[1].duration_since(polls[0]);
    assert!(
        gap >= Duration::from_secs(6) && gap < Duration::from_secs(11),
        "{gap:?}"
    );
    assert_eq!(fx.counters.device_slow_downs.load(Ordering::SeqCst), 1);
    assert_eq!(fx.counters.device_grants.load(Ordering::SeqCst), 1);
}

#[test]
fn an_expired_device_code_fails_with_its_own_cause() {
    let message = "device_code_expired: the code of the device sign-in expired before the sign-in was approved; the next sign-in (the next request, or a restart of the server) shows a new code: enter it at the address of the sign-in line before it expires";
    // The server ends the code sooner than its `expires_in` said: `expired_token`.
    let (_up, fx) = device_fixture(|b| b.device_lifetime_secs = 2);
    let (mut b, _) = bridge(&fx, "device-expired", &["--sign-in", "device"], &[]);
    send_initialize(&mut b, json!({}));
    assert_eq!(
        b.recv_response_within(&json!(0), SIGN_IN_WAIT),
        discover_failed(&format!(
            "{message} (the token endpoint answered expired_token)"
        ))
    );
    // The code's `expires_in` passes while the server would still answer pending: the
    // bridge stops polling at that bound.
    let (_up2, fx2) = device_fixture(|b| b.device_expires_in_secs = 2);
    let (mut b2, _) = bridge(&fx2, "device-expires-in", &["--sign-in", "device"], &[]);
    send_initialize(&mut b2, json!({}));
    assert_eq!(
        b2.recv_response_within(&json!(0), SIGN_IN_WAIT),
        discover_failed(&format!("{message} (its expires_in of 2 s passed)"))
    );
    assert_eq!(fx2.counters.device_grants.load(Ordering::SeqCst), 0);
}

#[test]
fn a_denied_device_sign_in_fails_with_its_own_cause() {
    let (_up, fx) = device_fixture(|b| {
        b.device_user_denies = true;
        b.device_user_acts_at_poll = Some(2);
    });
    let (mut b, _) = bridge(&fx, "device-denied", &["--sign-in", "device"], &[]);
    send_initialize(&mut b, json!({}));
    assert_eq!(
        b.recv_response_within(&json!(0), SIGN_IN_WAIT),
        discover_failed(
            "device_access_denied: the device sign-in was denied at the authorization server; the next sign-in (the next request, or a restart of the server) shows a new code: approve that one, with the account that may use this server (the token endpoint answered access_denied)"
        )
    );
    assert_eq!(fx.device_polls.lock().unwrap().len(), 2);
    assert_eq!(fx.counters.device_grants.load(Ordering::SeqCst), 0);
}

#[test]
fn sign_in_device_without_a_device_endpoint_fails_with_its_cause_before_any_registration() {
    let (_up, fx) = device_fixture(|b| b.device_authorization = false);
    let (mut b, _) = bridge(&fx, "device-none", &["--sign-in", "device"], &[]);
    send_initialize(&mut b, json!({}));
    assert_eq!(
        b.recv_response_within(&json!(0), SIGN_IN_WAIT),
        discover_failed(
            "device_authorization_unavailable: the authorization server offers no device sign-in (its metadata has no device_authorization_endpoint); sign in in the browser: leave out --sign-in device"
        )
    );
    assert_eq!(fx.counters.registrations.load(Ordering::SeqCst), 0);
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 0);
}

#[test]
fn a_browser_that_does_not_start_hands_over_to_the_device_sign_in() {
    let (_up, fx) = device_fixture(|b| b.device_user_acts_at_poll = Some(1));
    // `$BROWSER` names a program that is not installed; no `--sign-in device`.
    let (mut b, _) = bridge(
        &fx,
        "device-fallback",
        &[],
        &[("BROWSER", "/nonexistent/browser")],
    );
    b.initialize();
    assert_eq!(echo(&mut b, 1, "hi"), "hi");
    b.close_stdin();
    let err = b.stderr_to_the_end();
    // Only the device sign-in's line: the authorization URL's would lead nowhere.
    assert_eq!(
        sign_in_lines(&err),
        vec![format!(
            "mcp-bridge: sign in at {}/device with the code WDJB-0001",
            fx.base
        )],
        "{err}"
    );
    assert!(
        err.contains("mcp-bridge: sign-in: warn: the browser did not start ($BROWSER names /nonexistent/browser, which is not found: set BROWSER to an installed browser, or use --no-browser); signing in with a device code instead (the authorization server offers it)\n"),
        "{err}"
    );
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 0);
    assert_eq!(fx.counters.device_grants.load(Ordering::SeqCst), 1);
}

#[test]
fn a_stored_registration_without_the_device_grant_is_replaced_once() {
    // A sign-in in the browser at a server that does not offer the device grant yet: its
    // dynamic registration (kept in the file store) has no device code grant type.
    let (_up, fx) = device_fixture(|b| b.device_authorization = false);
    let dir = crate::common::scratch_dir("device-old-client");
    let port = mcp_test_fixtures::auth_fixture::free_port().to_string();
    let browser = crate::common::signed_bridge::browser(&dir);
    let state = dir.to_string_lossy().into_owned();
    let env = [
        ("BROWSER", browser.as_str()),
        ("XDG_STATE_HOME", state.as_str()),
        ("MCP_BRIDGE_TOKEN_KEY", crate::common::KEY_HEX),
    ];
    let args = ["--token-store", "file", "--redirect-port", port.as_str()];
    let mut b = Bridge::start_url(&args, &fx.mcp_url(), &env);
    b.initialize();
    assert_eq!(echo(&mut b, 1, "hi"), "hi");
    b.close_stdin();
    b.stderr_to_the_end();
    // The server now offers it, and forgets the sign-in; the next start signs in with a
    // device code: the stored client is refused (unauthorized_client), registered anew once.
    {
        let mut behaviour = fx.behaviour.lock().unwrap();
        behaviour.device_authorization = true;
        behaviour.device_user_acts_at_poll = Some(1);
    }
    fx.expire_all();
    fx.revoke_refresh_tokens();
    let mut args = args.to_vec();
    args.extend(["--sign-in", "device"]);
    let mut b = Bridge::start_url(&args, &fx.mcp_url(), &env);
    b.initialize();
    assert_eq!(echo(&mut b, 2, "again"), "again");
    assert_eq!(
        *fx.registered_grant_types.lock().unwrap(),
        vec![
            json!(["authorization_code", "refresh_token"]),
            json!(["authorization_code", "refresh_token", DEVICE_CODE_GRANT])
        ]
    );
    let clients: Vec<String> = fx
        .device_requests
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.get("client_id").cloned().unwrap_or_default())
        .collect();
    assert_eq!(clients.len(), 2, "{clients:?}");
    assert_ne!(clients[0], clients[1]);
    assert_eq!(fx.counters.device_authorizations.load(Ordering::SeqCst), 1);
    assert_eq!(fx.counters.device_grants.load(Ordering::SeqCst), 1);
    b.close_stdin();
    let err = b.stderr_to_the_end();
    assert!(
        err.contains("mcp-bridge: sign-in: info: the authorization server does not accept the client (invalid_client, or unauthorized_client to a device sign-in): signing in once more\n"),
        "{err}"
    );
}

#[test]
fn a_device_sign_in_ends_at_the_sign_in_timeout() {
    let (_up, fx) = device_fixture(|_| {});
    let (mut b, _) = bridge(
        &fx,
        "device-timeout",
        &["--sign-in", "device", "--sign-in-timeout", "2"],
        &[],
    );
    send_initialize(&mut b, json!({}));
    assert_eq!(
        b.recv_response_within(&json!(0), SIGN_IN_WAIT),
        discover_failed(
            "sign_in_timeout: the sign-in did not complete in time; sign in sooner or raise --sign-in-timeout (if the authorization page refused the client, the authorization server forgot it: run mcp-bridge logout --forget-client <url> with this server's --redirect-port and --token-store) (2 s)"
        )
    );
    // It polled while it waited (pending each time), and got no token.
    assert!(fx.counters.device_pending.load(Ordering::SeqCst) >= 1);
    assert_eq!(fx.counters.device_grants.load(Ordering::SeqCst), 0);
}
