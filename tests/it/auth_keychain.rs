//! The keychain store against a real Secret Service (gnome-keyring in a D-Bus session):
//! `scripts/test-keychain.sh` runs this file with `--ignored` inside `dbus-run-session` with an
//! unlocked keyring (scripts/test calls it); `secret-tool` checks that the sign-in entry is
//! there after the sign-in and gone after `mcp-bridge logout`. The store is `auto` as the bridge
//! makes it (opened at its first use): it opens the keychain at the sign-in, marks the sign-in
//! (`<state dir>/signins/<key>`), and `logout` removes the entry and the marker.

use mcp_test_fixtures::auth_fixture;

use auth_fixture::{default_behaviour, start};
use mcp_bridge::auth::gate::{Consent, ConsentAnswer};
use mcp_bridge::auth::signin::{SignIn, SignInConfig};
use mcp_bridge::auth::store::{self, StoreChoice, sign_in_key};
use mcp_bridge::transport::token::{Challenge, ChallengeOutcome, TokenProvider};
use std::process::Command;
use std::time::Duration;

/// The editor accepts the URL elicitation and a browser (curl) follows it.
struct Follow;
impl Consent for Follow {
    fn ask_url(
        &self,
        _message: String,
        url: String,
    ) -> futures_util::future::LocalBoxFuture<'static, ConsentAnswer> {
        Box::pin(async move {
            let _ = tokio::process::Command::new("curl")
                .args(["-s", "-L", "-o", "/dev/null", &url])
                .spawn();
            ConsentAnswer::Accept
        })
    }
}

fn secret_tool_finds(key: &str) -> bool {
    Command::new("secret-tool")
        .args(["lookup", "service", "mcp-bridge", "username", key])
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap()
        .success()
}

#[test]
#[ignore = "needs a Secret Service: scripts/test-keychain.sh runs it inside dbus-run-session"]
fn the_keychain_holds_the_sign_in_and_logout_removes_it() {
    let fx = start(default_behaviour());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut cfg = SignInConfig::new(url::Url::parse(&fx.mcp_url()).unwrap());
    cfg.redirect_port = port;
    cfg.sign_in_timeout = Duration::from_secs(20);
    let key = sign_in_key(
        cfg.server_url.as_str(),
        "default",
        &format!("http://127.0.0.1:{port}/callback"),
    );
    let store = store::open_at_first_use(StoreChoice::Auto, None, None).unwrap();
    assert!(!store.is_open());
    assert_eq!(store.describe(), store::NOT_OPENED);
    let marker = store::state_dir().join("signins").join(&key);
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let p = SignIn::new(cfg, store.clone()).unwrap();
            p.editor_initialized(Some(std::rc::Rc::new(Follow)));
            let out = p
                .challenge(Challenge {
                    status: 401,
                    www_authenticate: vec![format!(
                        "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
                        fx.base
                    )],
                    rejected: None,
                })
                .await;
            assert_eq!(out, ChallengeOutcome::Retry);
            assert!(p.access_token().await.is_some());
        });
    assert!(store.is_open());
    assert_eq!(store.describe(), "keychain (service mcp-bridge)");
    assert!(marker.exists(), "{}", marker.display());
    assert!(
        secret_tool_finds(&key),
        "the sign-in entry is in the keychain"
    );
    let o = Command::new(env!("CARGO_BIN_EXE_mcp-bridge"))
        .args([
            "logout",
            "--token-store",
            "keychain",
            "--redirect-port",
            &port.to_string(),
            &fx.mcp_url(),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("token store: keychain (service mcp-bridge)"),
        "{err}"
    );
    assert!(err.contains("deleted 1 stored sign-in(s)"), "{err}");
    assert!(!secret_tool_finds(&key), "the sign-in entry is gone");
    assert!(!marker.exists(), "the marker is gone");
}
