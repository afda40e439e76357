//! The SignIn actor at the actor level (`#[actix::test]`, no bridge process): the transport's
//! side ([`SignInClient`]) against the fixture authorization server and protected resource.
//! Its queue of turns serializes the flows (three requests that all meet a 401 at once lead to
//! one sign-in); the abort of the shutdown cascade ends a sign-in that waits for its redirect with
//! `sign_in_cancelled` and releases the receiver's port, after it no flow starts but the
//! current token still serves; the stop ends the actor, which reports its end.

use crate::common;
use mcp_test_fixtures::auth_fixture;

use actix::prelude::*;
use auth_fixture::{call, default_behaviour, free_port, start};
use mcp_bridge::actors::link::{ActorStats, Link};
use mcp_bridge::actors::signin::{SignInActor, SignInLinks};
use mcp_bridge::actors::supervisor::messages::ActorEnded;
use mcp_bridge::auth::opener::BrowserOpener;
use mcp_bridge::auth::signin::{SignIn, SignInConfig};
use mcp_bridge::auth::store::TokenStore;
use mcp_bridge::auth::store::memory::MemoryStore;
use mcp_bridge::transport::token::{Challenge, ChallengeOutcome, TokenProvider};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Wait for an event of the test, at most this long.
const EVENT_DEADLINE: Duration = Duration::from_secs(30);

/// Records the end reports (the Supervisor's part in these tests).
#[derive(Default)]
struct Ends(Arc<Mutex<Vec<&'static str>>>);

impl Actor for Ends {
    type Context = Context<Self>;
}

impl Handler<ActorEnded> for Ends {
    type Result = ();
    fn handle(&mut self, ActorEnded(name): ActorEnded, _: &mut Context<Self>) {
        self.0.lock().unwrap().push(name.name());
    }
}

mcp_bridge::counted_handlers!(Ends: ActorEnded);

/// A browser script that follows the start URL with curl (the 303, the fixture's redirect,
/// the callback).
fn browser(dir: &std::path::Path) -> std::path::PathBuf {
    let script = dir.join("follow-browser");
    std::fs::write(&script, "#!/bin/sh\nexec curl -s -L -o /dev/null \"$1\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// Starts a SignIn actor for `cfg` (memory store), reporting its end to a recorder.
fn start_actor(cfg: SignInConfig, name: &str) -> (SignInLinks, Arc<Mutex<Vec<&'static str>>>) {
    let store = TokenStore::new(
        vec![Arc::new(MemoryStore::default())],
        common::scratch_dir(name).join("locks"),
    );
    let ends = Ends::default();
    let seen = ends.0.clone();
    let ends_stats = ActorStats::new("supervisor");
    let ended = Link::new(&ends.start(), &ends_stats);
    let provider = SignIn::new(cfg, store).unwrap();
    let links = SignInLinks::run(
        SignInActor::new(provider, ended),
        Context::new(),
        &ActorStats::new("sign-in"),
    );
    (links, seen)
}

#[actix::test]
async fn the_mailbox_serializes_the_flows_and_one_sign_in_serves_every_waiting_request() {
    let dir = common::scratch_dir("serial-browser");
    let fx = start(default_behaviour());
    let mut cfg = SignInConfig::new(url::Url::parse(&fx.mcp_url()).unwrap());
    cfg.redirect_port = free_port();
    cfg.sign_in_timeout = Duration::from_secs(20);
    cfg.browser = BrowserOpener::Program(browser(&dir));
    let (links, _) = start_actor(cfg, "serial");
    let client = links.client.clone();
    let (a, b, c) = futures_util::join!(call(&client, &fx), call(&client, &fx), call(&client, &fx));
    assert_eq!((a, b, c), (Ok(()), Ok(()), Ok(())));
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 1);
    assert_eq!(fx.counters.code_grants.load(Ordering::SeqCst), 1);
    assert_eq!(fx.counters.registrations.load(Ordering::SeqCst), 1);
    // Expired: three requests meet a 401 at once, and one refresh serves them all.
    fx.expire_all();
    let (a, b, c) = futures_util::join!(call(&client, &fx), call(&client, &fx), call(&client, &fx));
    assert_eq!((a, b, c), (Ok(()), Ok(()), Ok(())));
    assert_eq!(fx.counters.refresh_grants.load(Ordering::SeqCst), 1);
    assert_eq!(fx.counters.refused_refreshes.load(Ordering::SeqCst), 0);
    // The shutdown's abort: the current token still serves (the upstream's close), but no
    // refresh or sign-in starts any more.
    let current = client.access_token().await;
    links.abort();
    assert_eq!(client.access_token().await, current);
    assert!(current.is_some());
    fx.expire_all();
    let e = call(&client, &fx).await.unwrap_err();
    assert!(e.starts_with("sign_in_cancelled: "), "{e}");
    assert_eq!(fx.counters.refresh_grants.load(Ordering::SeqCst), 1);
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 1);
    links.stop().await;
    assert_eq!(client.access_token().await, None);
}

#[actix::test]
async fn the_abort_ends_a_waiting_sign_in_with_sign_in_cancelled_and_releases_the_port() {
    let fx = start(default_behaviour());
    let port = free_port();
    let mut cfg = SignInConfig::new(url::Url::parse(&fx.mcp_url()).unwrap());
    cfg.redirect_port = port;
    // Only the sign-in line: nobody follows the URL, so the sign-in waits for its redirect.
    cfg.no_browser = true;
    cfg.sign_in_timeout = Duration::from_secs(300);
    let (links, ended) = start_actor(cfg, "stop");
    let client = links.client.clone();
    let waiting = actix::spawn({
        let client = client.clone();
        let mcp = fx.mcp_url();
        async move {
            client
                .challenge(Challenge {
                    status: 401,
                    www_authenticate: vec![format!(
                        "Bearer resource_metadata=\"{}\"",
                        mcp.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
                    )],
                    rejected: None,
                })
                .await
        }
    });
    // The receiver listens once the sign-in waits for the redirect.
    let since = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            since.elapsed() < EVENT_DEADLINE,
            "the receiver never listened"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // A token asked meanwhile waits for its turn behind the sign-in.
    let queued = actix::spawn({
        let client = client.clone();
        async move { client.access_token().await }
    });
    links.abort();
    let outcome = tokio::time::timeout(EVENT_DEADLINE, waiting)
        .await
        .unwrap()
        .unwrap();
    let ChallengeOutcome::Fail(cause) = outcome else {
        panic!("the sign-in was not ended: {outcome:?}");
    };
    assert!(cause.starts_with("sign_in_cancelled: "), "{cause}");
    assert_eq!(
        tokio::time::timeout(EVENT_DEADLINE, queued)
            .await
            .unwrap()
            .unwrap(),
        None
    );
    // The port is free again.
    let since = Instant::now();
    while std::net::TcpListener::bind(("127.0.0.1", port)).is_err() {
        assert!(since.elapsed() < EVENT_DEADLINE, "the port stayed taken");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // No sign-in starts after the abort.
    let after_abort = client
        .challenge(Challenge {
            status: 401,
            www_authenticate: vec![],
            rejected: None,
        })
        .await;
    assert!(
        matches!(&after_abort, ChallengeOutcome::Fail(c) if c.starts_with("sign_in_cancelled: ")),
        "{after_abort:?}"
    );
    assert!(ended.lock().unwrap().is_empty());
    // The stop: the actor reports its end, and every later message fails with the same cause.
    links.stop().await;
    let since = Instant::now();
    while ended.lock().unwrap().is_empty() {
        assert!(since.elapsed() < EVENT_DEADLINE, "no end report");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(*ended.lock().unwrap(), vec!["sign-in"]);
    let later = client
        .challenge(Challenge {
            status: 401,
            www_authenticate: vec![],
            rejected: None,
        })
        .await;
    assert!(
        matches!(&later, ChallengeOutcome::Fail(c) if c.starts_with("sign_in_cancelled: ")),
        "{later:?}"
    );
    assert_eq!(client.access_token().await, None);
    assert_eq!(fx.counters.code_grants.load(Ordering::SeqCst), 0);
}
