//! The client credentials grant through the real binary (`--grant client-credentials`, RFC 6749
//! §4.4, the MCP extension `io.modelcontextprotocol/oauth-client-credentials`), against the
//! fixture authorization server: tokens from the token endpoint with the client's secret in
//! HTTP Basic, no browser, a new token with the same grant shortly before expiry and after a
//! 401 (there is no refresh token, RFC 6749 §4.4.3), `invalid_client` with a cause of its own,
//! and the usage errors of a missing client ID or secret.

use crate::common::signed_bridge::{bridge, echo, fixture_with, protected_server};
use crate::common::{bridge_bin, wait_until};
use serde_json::json;
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const CLIENT: &str = "machine";
const SECRET: &str = "machine-secret-value";

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[test]
fn client_credentials_get_tokens_without_a_browser_and_a_new_one_before_expiry_and_after_a_401() {
    let up = protected_server();
    let fx = fixture_with(|b| {
        b.known_client = Some((CLIENT.into(), Some(SECRET.into())));
        b.token_auth_methods = Some(vec!["client_secret_basic".into()]);
        // A server for this grant alone need not list PKCE methods: no code to protect.
        b.pkce_methods = None;
        // Renewed in its last half: from 2 s after it was issued.
        b.expires_in_secs = 4;
    });
    *fx.upstream.lock().unwrap() = Some(up.url());
    let issuer = fx.issuer();
    let args = [
        "--grant",
        "client-credentials",
        "--client-id",
        CLIENT,
        "--client-issuer",
        &issuer,
    ];
    let (mut b, dir) = bridge(&fx, "cc", &args, &[("MCP_BRIDGE_CLIENT_SECRET", SECRET)]);
    b.initialize();
    assert_eq!(echo(&mut b, 1, "hi"), "hi");
    let c = &fx.counters;
    // One grant at the first 401 (server/discover), authenticated with HTTP Basic (the
    // fixture takes no other method for this client), for the server's resource.
    assert_eq!(c.client_credentials_grants.load(Ordering::SeqCst), 1);
    assert_eq!(*fx.grant_clients.lock().unwrap(), vec![CLIENT]);
    assert_eq!(*fx.resources.lock().unwrap(), vec![fx.mcp_url()]);
    assert_eq!(c.mcp_unauthorized.load(Ordering::SeqCst), 1);

    // The token's lifetime passes: the next request gets a new token first, no 401.
    let expired_at = now_secs() + 4;
    assert!(wait_until(|| now_secs() >= expired_at));
    assert_eq!(echo(&mut b, 2, "later"), "later");
    assert_eq!(c.client_credentials_grants.load(Ordering::SeqCst), 2);
    assert_eq!(c.mcp_unauthorized.load(Ordering::SeqCst), 1);

    // The authorization server forgets the token: the 401 gets a new one, the same way.
    fx.expire_all();
    assert_eq!(echo(&mut b, 3, "again"), "again");
    assert_eq!(c.client_credentials_grants.load(Ordering::SeqCst), 3);
    assert_eq!(c.mcp_unauthorized.load(Ordering::SeqCst), 2);

    // No browser, no authorization request, no registration, no code or refresh grant.
    assert_eq!(c.authorizes.load(Ordering::SeqCst), 0);
    assert_eq!(c.registrations.load(Ordering::SeqCst), 0);
    assert_eq!(c.code_grants.load(Ordering::SeqCst), 0);
    assert_eq!(c.refresh_grants.load(Ordering::SeqCst), 0);
    b.close_stdin();
    let err = b.stderr_to_the_end();
    assert!(!dir.join("browser-ran").exists(), "{err}");
    assert!(!err.contains("sign in at"), "{err}");
    assert!(!err.contains(SECRET), "{err}");
    for s in fx.secrets.lock().unwrap().iter() {
        assert!(!err.contains(s.as_str()), "a token on stderr: {err}");
    }
}

#[test]
fn client_credentials_refused_with_invalid_client_fail_with_their_own_cause() {
    let up = protected_server();
    let fx = fixture_with(|b| b.known_client = Some((CLIENT.into(), Some("another".into()))));
    *fx.upstream.lock().unwrap() = Some(up.url());
    let issuer = fx.issuer();
    let args = [
        "--grant",
        "client-credentials",
        "--client-id",
        CLIENT,
        "--client-issuer",
        &issuer,
    ];
    let (mut b, _) = bridge(
        &fx,
        "cc-refused",
        &args,
        &[("MCP_BRIDGE_CLIENT_SECRET", SECRET)],
    );
    let init = b.initialize_request(json!(0), json!({}));
    assert_eq!(
        init,
        json!({"jsonrpc": "2.0", "id": 0, "error": {"code": -32603,
            "message": "The upstream server did not complete server/discover",
            "data": {"cause": "discover_failed",
                "detail": "client_credentials_refused: the authorization server refused the client credentials; check --client-id, --client-issuer and MCP_BRIDGE_CLIENT_SECRET (the token endpoint refused the request (invalid_client))"}}})
    );
    // Asked once: a pre-registered client has no registration to renew.
    assert_eq!(fx.counters.invalid_clients.load(Ordering::SeqCst), 1);
    assert_eq!(
        fx.counters.client_credentials_grants.load(Ordering::SeqCst),
        0
    );
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 0);
}

/// Runs the bridge with `args` and `secret` as `MCP_BRIDGE_CLIENT_SECRET` (none: unset); its
/// exit code and stderr.
fn run(args: &[&str], secret: Option<&str>) -> (Option<i32>, String) {
    let mut cmd = Command::new(bridge_bin());
    cmd.args(args)
        .env_remove("MCP_BRIDGE_CLIENT_SECRET")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(s) = secret {
        cmd.env("MCP_BRIDGE_CLIENT_SECRET", s);
    }
    let mut child = cmd.spawn().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while child.try_wait().unwrap().is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "the bridge did not exit"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn client_credentials_without_a_client_id_or_its_secret_are_a_usage_error() {
    let url = "https://mcp.example.com/mcp";
    let issuer = "https://as.example.com";
    let cases: [(&[&str], Option<&str>, &str); 3] = [
        (
            &[
                "--grant",
                "client-credentials",
                "--client-id",
                CLIENT,
                "--client-issuer",
                issuer,
                url,
            ],
            None,
            "--grant client-credentials needs the client's secret in MCP_BRIDGE_CLIENT_SECRET",
        ),
        (
            &["--grant", "client-credentials", url],
            Some(SECRET),
            "--grant client-credentials needs --client-id (and its secret in MCP_BRIDGE_CLIENT_SECRET)",
        ),
        (
            &[
                "--grant",
                "client-credentials",
                "--client-id",
                CLIENT,
                "--client-issuer",
                issuer,
                "--client-metadata-url",
                "https://app.example/client.json",
                url,
            ],
            Some(SECRET),
            "--client-metadata-url does not apply to --grant client-credentials",
        ),
    ];
    for (args, secret, cause) in cases {
        assert_eq!(
            run(args, secret),
            (Some(2), format!("mcp-bridge: cli: error: {cause}\n")),
            "{args:?}"
        );
    }
    // With a command instead of a URL, as every sign-in option.
    let (code, err) = run(&["--grant", "client-credentials", "cat"], None);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("the sign-in options apply only to a URL upstream"),
        "{err}"
    );
}

#[test]
fn help_names_the_grants() {
    let out = Command::new(bridge_bin()).arg("--help").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let grant = "      --grant <GRANT>
          URL form: how the bridge gets its tokens

          Possible values:
          - authorization-code: A user signs in (in the browser: authorization code with PKCE; or with a device code: --sign-in), then refreshes
          - client-credentials: Machine to machine: --client-id with MCP_BRIDGE_CLIENT_SECRET, no browser; a new token before expiry
          \n          [default: authorization-code]
";
    assert!(text.contains(grant), "{text}");
}
