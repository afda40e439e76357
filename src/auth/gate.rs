//! The Gate of a sign-in: before `notifications/initialized` the bridge
//! writes the sign-in line and opens the browser (unless `--no-browser`); after it, the bridge
//! never opens a browser and asks the editor with a URL elicitation ([`Consent`]). A declined
//! question starts a cooldown (60 s) during which every sign-in fails at once.
//! `SANDBOX_RUNTIME=1` fails every sign-in at once. A device sign-in (RFC 8628) writes its
//! line at once and asks the editor as soon as `initialized` has come, also while it polls.

use futures_util::future::LocalBoxFuture;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::errors::{SignInCause, SignInError};
use super::opener::BrowserOpener;

/// The wait after a declined sign-in, so that the editor's user is not asked again at once.
pub const CONSENT_COOLDOWN: Duration = Duration::from_secs(60);

/// The editor's answer to the sign-in question.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConsentAnswer {
    /// The editor opens the URL.
    Accept,
    /// The user declined or cancelled.
    Decline,
    /// The question could not be asked or got an error.
    Failed,
}

/// How a sign-in after `notifications/initialized` asks the editor: a 2025-11-25
/// `elicitation/create` with `mode: "url"` (`actors/consent.rs` implements it).
pub trait Consent {
    /// Asks the editor to open `url` with `message`; resolves with its answer.
    fn ask_url(&self, message: String, url: String) -> LocalBoxFuture<'static, ConsentAnswer>;

    /// The sign-in of the accepted `url` ended (its redirect arrived, or its wait ended):
    /// the editor gets `notifications/elicitation/complete` with the elicitation's
    /// `elicitationId` (2025-11-25 URL elicitation). The default does nothing.
    fn completed(&self, url: &str) {
        let _ = url;
    }
}

/// Where the sign-in URL goes. It lives with its provider on the SignIn actor's thread: the
/// editor's side of it changes only by [`SignInGate::initialized`], which the SignIn actor
/// calls when the Frontend's message says so, and a flow reads it when it starts and when it
/// delivers its URL.
pub struct SignInGate {
    no_browser: bool,
    sandbox: bool,
    cooldown: Duration,
    browser: BrowserOpener,
    /// `notifications/initialized` arrived.
    initialized: Cell<bool>,
    /// The same, for a device sign-in that waits for it ([`SignInGate::show_device`]).
    ready: tokio::sync::watch::Sender<bool>,
    /// How to ask the editor after `initialized` (`None`: it declared no URL elicitation).
    consent: RefCell<Option<Rc<dyn Consent>>>,
    /// When the user last declined.
    declined_at: Cell<Option<Instant>>,
    /// The server's name in a gateway's file: the sign-in lines and the editor's message name
    /// it, so that a user of many servers knows which one asks (`None`: the only server).
    member: Option<Arc<str>>,
}

/// How the URL reached the user.
#[derive(Debug, PartialEq, Eq)]
pub enum UrlDelivery {
    /// The browser got the start URL.
    Browser,
    /// Only the sign-in line (`--no-browser`), or the browser failed to start (the reason).
    LineOnly(Option<SignInError>),
    /// The editor accepted the URL elicitation.
    Editor,
    /// The browser did not start (the reason), and the caller has another way to sign in
    /// (the device authorization grant): no sign-in line was written.
    NoBrowser(SignInError),
}

impl SignInGate {
    /// A gate: `no_browser` from `--no-browser`, `sandbox` from `SANDBOX_RUNTIME=1`,
    /// `cooldown` the wait after a decline ([`CONSENT_COOLDOWN`]), `browser` what opens the
    /// start URL. Before [`SignInGate::initialized`] it opens the browser.
    pub fn new(
        no_browser: bool,
        sandbox: bool,
        cooldown: Duration,
        browser: BrowserOpener,
    ) -> Self {
        SignInGate {
            no_browser,
            sandbox,
            cooldown,
            browser,
            initialized: Cell::new(false),
            ready: tokio::sync::watch::Sender::new(false),
            consent: RefCell::new(None),
            declined_at: Cell::new(None),
            member: None,
        }
    }

    /// The same gate, for the server `member` of a gateway's file: its lines and its
    /// messages name the server.
    pub fn for_member(mut self, member: Option<Arc<str>>) -> Self {
        self.member = member;
        self
    }

    /// The server in the editor's sign-in message: `The MCP server` or `The MCP server
    /// "github"`.
    fn server_words(&self) -> String {
        match &self.member {
            Some(name) => format!(
                "The MCP server {:?}",
                crate::protocol::wire::excerpt::sanitize(name)
            ),
            None => "The MCP server".to_string(),
        }
    }

    /// Writes the sign-in line of `url` (see [`sign_in_line`]).
    pub fn sign_in_line(&self, url: &str) {
        sign_in_line(self.member.as_deref(), url);
    }

    /// Writes the sign-in line of a device sign-in (see [`device_sign_in_line`]).
    pub fn device_sign_in_line(&self, verification_uri: &str, user_code: &str) {
        device_sign_in_line(self.member.as_deref(), verification_uri, user_code);
    }

    /// `notifications/initialized` arrived: from now on the editor is asked through `consent`
    /// (`None`: the editor declared no URL elicitation, and a sign-in fails with
    /// `reauthorization_required`); the bridge never opens a browser again. A flow that runs
    /// already and has not delivered its URL yet asks the editor too.
    pub fn initialized(&self, consent: Option<Rc<dyn Consent>>) {
        *self.consent.borrow_mut() = consent;
        self.initialized.set(true);
        self.ready.send_replace(true);
    }

    fn consent(&self) -> Option<Rc<dyn Consent>> {
        self.consent.borrow().clone()
    }

    /// The check before a sign-in starts anything: the sandbox, and a running cooldown.
    pub fn admit(&self) -> Result<(), SignInError> {
        if self.sandbox {
            return Err(SignInError::new(SignInCause::Sandbox, ""));
        }
        if let Some(t) = self.declined_at.get()
            && t.elapsed() < self.cooldown
        {
            return Err(SignInError::new(
                SignInCause::SignInDenied,
                "declined less than the cooldown ago",
            ));
        }
        if self.initialized.get() && self.consent().is_none() {
            return Err(SignInError::new(
                SignInCause::ReauthorizationRequired,
                "the editor declared no URL elicitation",
            ));
        }
        Ok(())
    }

    /// The sign-in of `authorization_url`, delivered to the editor ([`UrlDelivery::Editor`]),
    /// ended: the editor is told (`notifications/elicitation/complete`).
    pub fn completed(&self, authorization_url: &str) {
        if let Some(consent) = self.consent() {
            consent.completed(authorization_url);
        }
    }

    /// Brings the sign-in to the user: writes the sign-in line
    /// `mcp-bridge: sign in at <authorization_url>`, then opens `start_url` in the browser
    /// (before `initialized`, without `--no-browser`) or asks the editor (after it). A decline
    /// starts the cooldown. With `fallback` (a device sign-in can take over) the browser is
    /// tried first, and when it does not start no line is written
    /// ([`UrlDelivery::NoBrowser`]): the device sign-in's line is the one to follow. Errors:
    /// `sign_in_denied`, `reauthorization_required`.
    pub async fn deliver(
        &self,
        authorization_url: &str,
        start_url: &str,
        fallback: bool,
    ) -> Result<UrlDelivery, SignInError> {
        self.admit()?;
        if fallback && !self.initialized.get() && !self.no_browser {
            let failed = match self.browser.check() {
                Some(e) => Some(e),
                None => self.browser.open(start_url.to_string()).await.err(),
            };
            if let Some(e) = failed {
                return Ok(UrlDelivery::NoBrowser(e));
            }
            self.sign_in_line(authorization_url);
            return Ok(UrlDelivery::Browser);
        }
        self.sign_in_line(authorization_url);
        if !self.initialized.get() {
            if self.no_browser {
                return Ok(UrlDelivery::LineOnly(None));
            }
            // A $BROWSER that is not installed: the crate would try other openers, and the
            // sign-in would only end at its time limit.
            if let Some(e) = self.browser.check() {
                return Err(e);
            }
            return Ok(match self.browser.open(start_url.to_string()).await {
                Ok(()) => UrlDelivery::Browser,
                Err(mut e) => {
                    tracing::warn!(target: "sign-in", "{e}");
                    e.logged = true;
                    UrlDelivery::LineOnly(Some(e))
                }
            });
        }
        let Some(consent) = self.consent() else {
            return Err(SignInError::new(SignInCause::ReauthorizationRequired, ""));
        };
        let message = format!(
            "{} needs a sign-in. Open the link to sign in with your browser.",
            self.server_words()
        );
        match consent
            .ask_url(message, authorization_url.to_string())
            .await
        {
            ConsentAnswer::Accept => Ok(UrlDelivery::Editor),
            ConsentAnswer::Decline | ConsentAnswer::Failed => {
                self.declined_at.set(Some(Instant::now()));
                Err(SignInError::new(
                    SignInCause::SignInDenied,
                    "declined in the editor",
                ))
            }
        }
    }
}

impl SignInGate {
    /// Shows a running device sign-in to the editor (RFC 8628 §3.3.1: `url` is
    /// `verification_uri_complete`, else `verification_uri`): waits for
    /// `notifications/initialized` (it may come while the code is polled), then asks the
    /// editor with a URL elicitation whose message names `user_code`. Resolves when the
    /// editor accepted, or at once when it declared no URL elicitation (the sign-in line on
    /// stderr is then the only way, as with a browser that did not start). Errors: the editor
    /// declined (`sign_in_denied`, and the cooldown starts).
    pub async fn show_device(&self, url: &str, user_code: &str) -> Result<(), SignInError> {
        let mut ready = self.ready.subscribe();
        // The sender lives as long as the gate, which outlives this future.
        let _ = ready.wait_for(|r| *r).await;
        let Some(consent) = self.consent() else {
            return Ok(());
        };
        let message = format!(
            "{} needs a sign-in. Open the link and confirm the code {} to sign in.",
            self.server_words(),
            crate::protocol::wire::excerpt::sanitize(user_code)
        );
        match consent.ask_url(message, url.to_string()).await {
            ConsentAnswer::Accept => Ok(()),
            ConsentAnswer::Decline | ConsentAnswer::Failed => {
                self.declined_at.set(Some(Instant::now()));
                Err(SignInError::new(
                    SignInCause::SignInDenied,
                    "declined in the editor",
                ))
            }
        }
    }
}

/// Writes the sign-in line of a device sign-in (RFC 8628 §3.3),
/// `mcp-bridge: sign in at <verification_uri> with the code <user_code>`, to stderr; for the
/// server `member` of a gateway, `mcp-bridge: sign in to <member> at ...`.
pub fn device_sign_in_line(member: Option<&str>, verification_uri: &str, user_code: &str) {
    let line = format!(
        "{}: sign in{} at {} with the code {}\n",
        crate::log::TAG,
        to_member(member),
        crate::protocol::wire::excerpt::sanitize(verification_uri),
        crate::protocol::wire::excerpt::sanitize(user_code)
    );
    crate::log::stderr_queue().push(line.into_bytes(), crate::log::queue::Source::Bridge);
}

/// Writes `mcp-bridge: sign in at <url>` to stderr; for the server `member` of a gateway,
/// `mcp-bridge: sign in to <member> at <url>`.
pub fn sign_in_line(member: Option<&str>, url: &str) {
    let line = format!(
        "{}: sign in{} at {}\n",
        crate::log::TAG,
        to_member(member),
        crate::protocol::wire::excerpt::sanitize(url)
    );
    crate::log::stderr_queue().push(line.into_bytes(), crate::log::queue::Source::Bridge);
}

/// ` to <member>` for a server of a gateway, nothing for the only server.
fn to_member(member: Option<&str>) -> String {
    member
        .map(|m| format!(" to {}", crate::protocol::wire::excerpt::sanitize(m)))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Answer(ConsentAnswer, Arc<AtomicUsize>);
    impl Consent for Answer {
        fn ask_url(&self, _: String, _: String) -> LocalBoxFuture<'static, ConsentAnswer> {
            self.1.fetch_add(1, Ordering::SeqCst);
            let a = self.0;
            Box::pin(async move { a })
        }
    }

    fn run<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

    struct Recorded(Rc<RefCell<Vec<String>>>);
    impl Consent for Recorded {
        fn ask_url(&self, message: String, _: String) -> LocalBoxFuture<'static, ConsentAnswer> {
            self.0.borrow_mut().push(message);
            Box::pin(async { ConsentAnswer::Accept })
        }
    }

    #[test]
    fn the_message_and_the_line_of_a_gateways_server_name_it() {
        let seen = Rc::new(RefCell::new(Vec::new()));
        for member in [None, Some("github")] {
            let g = SignInGate::new(true, false, CONSENT_COOLDOWN, BrowserOpener::from_env())
                .for_member(member.map(Arc::from));
            g.initialized(Some(Rc::new(Recorded(seen.clone()))));
            assert_eq!(
                run(g.deliver("https://a/x", "s", false)),
                Ok(UrlDelivery::Editor)
            );
        }
        assert_eq!(
            *seen.borrow(),
            [
                "The MCP server needs a sign-in. Open the link to sign in with your browser.",
                "The MCP server \"github\" needs a sign-in. Open the link to sign in with your browser.",
            ]
        );
        assert_eq!(
            (to_member(None), to_member(Some("github"))),
            (String::new(), " to github".to_string())
        );
    }

    #[test]
    fn the_sandbox_fails_at_once() {
        let g = SignInGate::new(false, true, CONSENT_COOLDOWN, BrowserOpener::from_env());
        assert_eq!(g.admit().unwrap_err().cause, SignInCause::Sandbox);
    }

    #[test]
    fn no_browser_only_writes_the_line_before_initialized() {
        let g = SignInGate::new(true, false, CONSENT_COOLDOWN, BrowserOpener::from_env());
        assert_eq!(
            run(g.deliver("https://a/x", "http://127.0.0.1:1/start/t", false)),
            Ok(UrlDelivery::LineOnly(None))
        );
    }

    #[test]
    fn after_initialized_the_editor_is_asked_and_a_decline_starts_the_cooldown() {
        let asked = Arc::new(AtomicUsize::new(0));
        let g = SignInGate::new(
            false,
            false,
            Duration::from_millis(200),
            BrowserOpener::from_env(),
        );
        g.initialized(Some(Rc::new(Answer(ConsentAnswer::Decline, asked.clone()))));
        let e = run(g.deliver("https://a/x", "s", false)).unwrap_err();
        assert_eq!(e.cause, SignInCause::SignInDenied);
        let e = run(g.deliver("https://a/x", "s", false)).unwrap_err();
        assert_eq!(
            (e.cause, asked.load(Ordering::SeqCst)),
            (SignInCause::SignInDenied, 1)
        );
        std::thread::sleep(Duration::from_millis(250));
        g.initialized(Some(Rc::new(Answer(ConsentAnswer::Accept, asked.clone()))));
        assert_eq!(
            run(g.deliver("https://a/x", "s", false)),
            Ok(UrlDelivery::Editor)
        );
        assert_eq!(asked.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_device_sign_in_asks_the_editor_once_it_is_initialized() {
        let asked = Arc::new(AtomicUsize::new(0));
        let g = SignInGate::new(true, false, CONSENT_COOLDOWN, BrowserOpener::from_env());
        run(async {
            let shown = g.show_device("https://a/device?user_code=C", "C");
            tokio::pin!(shown);
            // Before `initialized` it waits (the sign-in line is all the user has).
            assert!(
                tokio::time::timeout(Duration::from_millis(50), &mut shown)
                    .await
                    .is_err()
            );
            g.initialized(Some(Rc::new(Answer(ConsentAnswer::Accept, asked.clone()))));
            assert_eq!(shown.await, Ok(()));
        });
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        g.initialized(Some(Rc::new(Answer(ConsentAnswer::Decline, asked.clone()))));
        let e = run(g.show_device("https://a/device", "C")).unwrap_err();
        assert_eq!(e.cause, SignInCause::SignInDenied);
        // An editor without URL elicitation: nothing to ask, the polls go on.
        let g = SignInGate::new(true, false, CONSENT_COOLDOWN, BrowserOpener::from_env());
        g.initialized(None);
        assert_eq!(run(g.show_device("https://a/device", "C")), Ok(()));
    }

    #[test]
    fn after_initialized_without_url_elicitation_reauthorization_is_required() {
        let g = SignInGate::new(false, false, CONSENT_COOLDOWN, BrowserOpener::from_env());
        g.initialized(None);
        assert_eq!(
            run(g.deliver("https://a/x", "s", false)).unwrap_err().cause,
            SignInCause::ReauthorizationRequired
        );
    }
}
