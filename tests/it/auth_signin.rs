//! The sign-in provider against a fixture authorization server and protected resource on
//! loopback, driven as the HTTP transport drives it (`access_token` before each request,
//! `challenge` with each 401/403), with a browser script that follows the start URL. Every
//! log line these tests produce is scanned for the secrets the fixture handed out.

use crate::common;
use mcp_test_fixtures::auth_fixture;

use auth_fixture::{Behaviour, Fixture, call, default_behaviour, free_port, start};
use mcp_bridge::auth::errors::SignInCause;
use mcp_bridge::auth::gate::{Consent, ConsentAnswer};
use mcp_bridge::auth::opener::BrowserOpener;
use mcp_bridge::auth::registration::RegistrationOptions;
use mcp_bridge::auth::signin::{SignIn, SignInConfig};
use mcp_bridge::auth::store::file::{FileKey, FileStore};
use mcp_bridge::auth::store::memory::MemoryStore;
use mcp_bridge::auth::store::{Backend, TokenStore};
use mcp_bridge::transport::token::{Challenge, ChallengeOutcome, TokenProvider};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once, OnceLock};
use std::time::Duration;

/// Every log line of this test binary.
fn logs() -> &'static Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| Arc::new(Mutex::new(Vec::new())))
}

#[derive(Clone)]
struct Sink;
impl std::io::Write for Sink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        logs().lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mcp-bridge-auth-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The browser script (a `BrowserOpener::Program`): follows the start URL with curl (the 303, the fixture's redirect,
/// the callback); when `twice-<port>` exists beside it, it GETs the start URL twice without
/// following (the reuse case).
fn setup() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        let _ = tracing_subscriber::fmt()
            .with_writer(|| Sink)
            .with_ansi(false)
            .with_max_level(tracing::Level::DEBUG)
            .try_init();
        let dir = scratch("browser");
        let script = dir.join("follow-browser");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\nport=$(echo \"$1\" | sed -E 's#^http://127.0.0.1:([0-9]+)/.*#\\1#')\nif [ -e '{d}/twice-'\"$port\" ]; then curl -s -o /dev/null \"$1\"; curl -s -o /dev/null \"$1\"; else curl -s -L -o /dev/null \"$1\"; fi\n",
                d = dir.display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    });
}

fn browser_dir() -> PathBuf {
    std::env::temp_dir().join(format!("mcp-bridge-auth-{}-browser", std::process::id()))
}

fn config(fx: &Fixture) -> SignInConfig {
    let mut c = SignInConfig::new(url::Url::parse(&fx.mcp_url()).unwrap());
    c.redirect_port = free_port();
    c.sign_in_timeout = Duration::from_secs(20);
    c.browser = BrowserOpener::Program(browser_dir().join("follow-browser"));
    c
}

fn memory_store(name: &str) -> TokenStore {
    TokenStore::new(
        vec![Arc::new(MemoryStore::default())],
        scratch(name).join("locks"),
    )
}

fn file_store(dir: &std::path::Path) -> TokenStore {
    let f = FileStore::open(
        dir.join("tokens"),
        FileKey::from_hex(common::KEY_HEX).unwrap(),
    )
    .unwrap();
    TokenStore::new(vec![Arc::new(f) as Arc<dyn Backend>], dir.join("locks"))
}

fn cause_of(err: &str) -> &str {
    err.split(':').next().unwrap_or("")
}

/// No secret of the fixture (code, token, client secret) in any log line so far, nor in `also`.
fn assert_no_secret(fx: &Fixture, also: &[&str]) {
    let text = String::from_utf8_lossy(&logs().lock().unwrap()).to_string();
    for s in fx.secrets.lock().unwrap().iter() {
        if s.starts_with("client-") {
            continue; // a client ID is not a secret
        }
        assert!(!text.contains(s.as_str()), "a secret in the log:\n{text}");
        for a in also {
            assert!(!a.contains(s.as_str()), "a secret in {a}");
        }
    }
    assert!(
        !text.contains("s3cret-client"),
        "the client secret in the log"
    );
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn first_sign_in_registers_a_native_client_and_the_file_store_keeps_it_across_a_restart() {
    setup();
    let fx = start(default_behaviour());
    let dir = scratch("restart");
    let cfg = config(&fx);
    rt().block_on(async {
        let p = SignIn::new(cfg.clone(), file_store(&dir)).unwrap();
        call(&p, &fx).await.unwrap();
        call(&p, &fx).await.unwrap();
    });
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 1);
    assert_eq!(fx.counters.code_grants.load(Ordering::SeqCst), 1);
    assert_eq!(*fx.registered_types.lock().unwrap(), vec!["native"]);
    // `resource` on the authorization request and the token request.
    assert!(
        fx.resources
            .lock()
            .unwrap()
            .iter()
            .all(|r| r == &fx.mcp_url())
    );
    // A restart: the stored sign-in is used, nothing is asked again.
    rt().block_on(async {
        let p = SignIn::new(cfg.clone(), file_store(&dir)).unwrap();
        call(&p, &fx).await.unwrap();
    });
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 1);
    assert_eq!(fx.counters.registrations.load(Ordering::SeqCst), 1);
    // The stored files hold no token in clear.
    for e in std::fs::read_dir(dir.join("tokens")).unwrap() {
        let bytes = std::fs::read(e.unwrap().path()).unwrap();
        assert!(!bytes.windows(7).any(|w| w == b"access-"));
    }
    assert_no_secret(&fx, &[]);
}

#[test]
fn an_expired_token_is_refreshed_on_401_and_a_nearly_expired_one_before_the_request() {
    setup();
    let fx = start(default_behaviour());
    rt().block_on(async {
        let p = SignIn::new(config(&fx), memory_store("refresh")).unwrap();
        call(&p, &fx).await.unwrap();
        fx.expire_all();
        call(&p, &fx).await.unwrap();
        assert_eq!(fx.counters.refresh_grants.load(Ordering::SeqCst), 1);
        // A token is refreshed before use once it has less than half its lifetime (at most
        // 60 s) left: 6 s tokens (the clock has whole seconds), used at once (no refresh),
        // then after the half.
        fx.behaviour.lock().unwrap().expires_in_secs = 6;
        fx.expire_all();
        call(&p, &fx).await.unwrap();
        assert_eq!(fx.counters.refresh_grants.load(Ordering::SeqCst), 2);
        call(&p, &fx).await.unwrap();
        assert_eq!(fx.counters.refresh_grants.load(Ordering::SeqCst), 2);
        tokio::time::sleep(Duration::from_secs(4)).await;
        // The next request refreshes before it is sent, with no 401 at all.
        call(&p, &fx).await.unwrap();
        assert_eq!(fx.counters.refresh_grants.load(Ordering::SeqCst), 3);
    });
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 1);
    assert_eq!(fx.counters.refused_refreshes.load(Ordering::SeqCst), 0);
    assert_no_secret(&fx, &[]);
}

#[test]
fn a_revoked_refresh_token_leads_to_a_new_sign_in() {
    setup();
    let fx = start(default_behaviour());
    rt().block_on(async {
        let p = SignIn::new(config(&fx), memory_store("revoked")).unwrap();
        call(&p, &fx).await.unwrap();
        fx.expire_all();
        fx.revoke_refresh_tokens();
        call(&p, &fx).await.unwrap();
    });
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 2);
    assert_eq!(fx.counters.refused_refreshes.load(Ordering::SeqCst), 1);
}

#[test]
fn a_403_insufficient_scope_steps_up_once_with_the_union_of_scopes() {
    setup();
    let fx = start(default_behaviour());
    rt().block_on(async {
        let p = SignIn::new(config(&fx), memory_store("stepup")).unwrap();
        call(&p, &fx).await.unwrap();
        fx.behaviour.lock().unwrap().required_scopes = vec!["write".into()];
        call(&p, &fx).await.unwrap();
    });
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 2);
    assert_no_secret(&fx, &[]);
}

#[test]
fn a_403_without_insufficient_scope_is_access_refused() {
    setup();
    let fx = start(default_behaviour());
    rt().block_on(async {
        let p = SignIn::new(config(&fx), memory_store("refused")).unwrap();
        let out = p
            .challenge(Challenge {
                status: 403,
                www_authenticate: vec!["Bearer error=\"invalid_token\"".into()],
                rejected: None,
            })
            .await;
        match out {
            ChallengeOutcome::Fail(c) => assert_eq!(cause_of(&c), "access_refused"),
            other => panic!("{other:?}"),
        }
    });
}

struct TestConsent {
    answer: ConsentAnswer,
    asked: Arc<AtomicUsize>,
    urls: Arc<Mutex<Vec<String>>>,
}

impl Consent for TestConsent {
    fn ask_url(
        &self,
        _message: String,
        url: String,
    ) -> futures_util::future::LocalBoxFuture<'static, ConsentAnswer> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        self.urls.lock().unwrap().push(url.clone());
        let answer = self.answer;
        Box::pin(async move {
            if answer == ConsentAnswer::Accept {
                // The editor opens the URL: a browser follows it.
                let _ = tokio::process::Command::new("curl")
                    .args(["-s", "-L", "-o", "/dev/null", &url])
                    .spawn();
            }
            answer
        })
    }
}

#[test]
fn after_initialized_the_editor_is_asked_and_a_decline_has_a_cooldown() {
    setup();
    let fx = start(default_behaviour());
    rt().block_on(async {
        let asked = Arc::new(AtomicUsize::new(0));
        let urls = Arc::new(Mutex::new(Vec::new()));
        let mut cfg = config(&fx);
        cfg.consent_cooldown = Duration::from_secs(2);
        let p = SignIn::new(cfg, memory_store("consent")).unwrap();
        p.editor_initialized(Some(Rc::new(TestConsent {
            answer: ConsentAnswer::Decline,
            asked: asked.clone(),
            urls: urls.clone(),
        })));
        let e = call(&p, &fx).await.unwrap_err();
        assert_eq!(cause_of(&e), "sign_in_denied");
        let e = call(&p, &fx).await.unwrap_err();
        assert_eq!(cause_of(&e), "sign_in_denied");
        assert_eq!(
            asked.load(Ordering::SeqCst),
            1,
            "no question during the cooldown"
        );
        tokio::time::sleep(Duration::from_millis(2100)).await;
        p.editor_initialized(Some(Rc::new(TestConsent {
            answer: ConsentAnswer::Accept,
            asked: asked.clone(),
            urls: urls.clone(),
        })));
        call(&p, &fx).await.unwrap();
        assert_eq!(asked.load(Ordering::SeqCst), 2);
        // The editor gets the authorization URL itself (never the start URL).
        assert!(urls.lock().unwrap()[1].starts_with(&format!("{}/authorize?", fx.base)));
    });
    // After initialized the bridge never opened a browser: the only authorize came from the editor.
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 1);
}

#[test]
fn after_initialized_without_url_elicitation_reauthorization_is_required() {
    setup();
    let fx = start(default_behaviour());
    rt().block_on(async {
        let cfg = config(&fx);
        let p = SignIn::new(cfg, memory_store("noelicit")).unwrap();
        p.editor_initialized(None);
        let e = call(&p, &fx).await.unwrap_err();
        assert_eq!(cause_of(&e), "reauthorization_required");
    });
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 0);
}

fn fails_with(
    b: Behaviour,
    tweak: impl FnOnce(&mut SignInConfig),
    cause: SignInCause,
) -> Arc<Fixture> {
    setup();
    let fx = start(b);
    let mut cfg = config(&fx);
    tweak(&mut cfg);
    let e = rt().block_on(async {
        let p = SignIn::new(cfg, memory_store(cause.name())).unwrap();
        call(&p, &fx).await.unwrap_err()
    });
    assert_eq!(cause_of(&e), cause.name(), "{e}");
    assert_no_secret(&fx, &[&e]);
    fx
}

#[test]
fn a_sign_in_that_never_completes_times_out_naming_the_option() {
    let fx = fails_with(
        default_behaviour(),
        |c| {
            c.no_browser = true;
            c.sign_in_timeout = Duration::from_secs(1);
        },
        SignInCause::SignInTimeout,
    );
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 0);
}

#[test]
fn an_iss_mismatch_is_refused_before_the_code_is_redeemed() {
    let mut b = default_behaviour();
    b.redirect_iss = Some("http://127.0.0.1:1".into());
    let fx = fails_with(b, |_| {}, SignInCause::SignInFailed);
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 1);
    assert_eq!(fx.counters.code_grants.load(Ordering::SeqCst), 0);
}

#[test]
fn a_missing_iss_is_refused_when_the_server_promises_it() {
    let mut b = default_behaviour();
    b.redirect_iss = None;
    let fx = fails_with(b, |_| {}, SignInCause::SignInFailed);
    assert_eq!(fx.counters.code_grants.load(Ordering::SeqCst), 0);
}

#[test]
fn metadata_without_pkce_support_is_refused() {
    let mut b = default_behaviour();
    b.pkce_methods = None;
    let fx = fails_with(b, |_| {}, SignInCause::SignInFailed);
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 0);
    assert_eq!(fx.counters.registrations.load(Ordering::SeqCst), 0);
}

#[test]
fn a_redirect_with_another_state_is_ignored_and_the_sign_in_times_out() {
    let mut b = default_behaviour();
    b.redirect_state = Some("forged".into());
    let fx = fails_with(
        b,
        |c| c.sign_in_timeout = Duration::from_secs(3),
        SignInCause::SignInTimeout,
    );
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 1);
    assert_eq!(fx.counters.code_grants.load(Ordering::SeqCst), 0);
}

#[test]
fn an_authorization_url_with_a_redirect_uri_not_ours_is_never_opened() {
    let mut b = default_behaviour();
    // The endpoint carries a redirect URI of its own: the URL would have two.
    b.authorize_query = Some("?redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcallback".into());
    let fx = fails_with(b, |_| {}, SignInCause::SignInInvalidUrl);
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 0);
    assert_eq!(fx.counters.code_grants.load(Ordering::SeqCst), 0);
}

#[test]
fn a_redirect_to_another_path_of_the_receiver_is_ignored_and_the_sign_in_times_out() {
    let mut b = default_behaviour();
    b.redirect_path = Some("/elsewhere".into());
    let fx = fails_with(
        b,
        |c| c.sign_in_timeout = Duration::from_secs(3),
        SignInCause::SignInTimeout,
    );
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 1);
    assert_eq!(fx.counters.code_grants.load(Ordering::SeqCst), 0);
}

#[test]
fn a_second_get_of_the_start_url_ends_the_sign_in() {
    setup();
    let fx = start(default_behaviour());
    let mut cfg = config(&fx);
    std::fs::write(
        browser_dir().join(format!("twice-{}", cfg.redirect_port)),
        "",
    )
    .unwrap();
    cfg.sign_in_timeout = Duration::from_secs(20);
    let e = rt().block_on(async {
        let p = SignIn::new(cfg, memory_store("reuse")).unwrap();
        call(&p, &fx).await.unwrap_err()
    });
    assert_eq!(cause_of(&e), "sign_in_start_reused", "{e}");
    assert!(e.contains("--no-browser"));
}

#[test]
fn a_pre_registered_client_with_its_issuer_sends_its_secret_only_there() {
    setup();
    let mut b = default_behaviour();
    b.registration = false;
    b.known_client = Some(("pre-id".into(), Some("s3cret-client".into())));
    let fx = start(b);
    let mut cfg = config(&fx);
    cfg.registration = RegistrationOptions {
        client_id: Some("pre-id".into()),
        client_issuer: Some(fx.issuer()),
        client_secret: Some("s3cret-client".into()),
        client_metadata_url: None,
    };
    rt().block_on(async {
        let p = SignIn::new(cfg.clone(), memory_store("prereg")).unwrap();
        call(&p, &fx).await.unwrap();
    });
    assert_eq!(*fx.authorize_clients.lock().unwrap(), vec!["pre-id"]);
    assert_eq!(fx.counters.code_grants.load(Ordering::SeqCst), 1);
    assert_no_secret(&fx, &[]);
    // Named for another issuer: refused before anything is sent.
    cfg.registration.client_issuer = Some("https://other.example".into());
    let e = rt().block_on(async {
        let p = SignIn::new(cfg, memory_store("prereg2")).unwrap();
        call(&p, &fx).await.unwrap_err()
    });
    assert_eq!(cause_of(&e), "issuer_not_registered");
}

#[test]
fn a_client_id_metadata_document_is_used_when_the_server_supports_it() {
    setup();
    let mut b = default_behaviour();
    b.cimd_supported = true;
    let fx = start(b);
    let mut cfg = config(&fx);
    cfg.registration.client_metadata_url = Some("http://127.0.0.1:9/client.json".into());
    rt().block_on(async {
        let p = SignIn::new(cfg, memory_store("cimd")).unwrap();
        call(&p, &fx).await.unwrap();
    });
    assert_eq!(
        *fx.authorize_clients.lock().unwrap(),
        vec!["http://127.0.0.1:9/client.json"]
    );
    assert_eq!(fx.counters.registrations.load(Ordering::SeqCst), 0);
}

#[test]
fn without_any_registration_path_the_error_names_the_options() {
    let mut b = default_behaviour();
    b.registration = false;
    let fx = fails_with(b, |_| {}, SignInCause::RegistrationUnavailable);
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 0);
}

#[test]
fn two_providers_on_one_store_refresh_exactly_once() {
    setup();
    let fx = start(default_behaviour());
    let dir = scratch("two");
    let cfg = config(&fx);
    rt().block_on(async {
        let p = SignIn::new(cfg.clone(), file_store(&dir)).unwrap();
        call(&p, &fx).await.unwrap();
    });
    fx.expire_all();
    let barrier = Arc::new(std::sync::Barrier::new(2));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (fx, dir, cfg, barrier) = (fx.clone(), dir.clone(), cfg.clone(), barrier.clone());
            std::thread::spawn(move || {
                rt().block_on(async {
                    let p = SignIn::new(cfg, file_store(&dir)).unwrap();
                    barrier.wait();
                    call(&p, &fx).await
                })
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap().unwrap();
    }
    assert_eq!(fx.counters.refresh_grants.load(Ordering::SeqCst), 1);
    assert_eq!(fx.counters.refused_refreshes.load(Ordering::SeqCst), 0);
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 1);
}
