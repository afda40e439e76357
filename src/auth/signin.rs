//! The sign-in provider of the HTTP transport: it gives each request the stored access token
//! (refreshed shortly before it expires) and answers every 401/403 challenge: a refresh, a
//! full OAuth 2.1 sign-in (discovery, registration, PKCE S256, state, `resource`, the loopback
//! receiver, the Gate, the `iss` check, the code exchange), or one step-up with the union of
//! scopes; with `--grant client-credentials` the client credentials grant takes the place of
//! the browser and of the refresh (RFC 6749 §4.4), and with `--sign-in device` (or when no
//! browser starts) the device authorization grant takes the place of the browser (RFC 8628).
//! The token endpoint gets the client
//! authentication the registration named, for the code exchange and every refresh; an
//! `invalid_client` answer replaces the registration once per challenge. One flow at a time
//! in the process (the flow lock) and across processes (the entry lock, and a re-read of the
//! stored record before a refresh or a sign-in), so a rotating refresh token is never spent
//! twice.

use futures_util::future::LocalBoxFuture;
use oauth2::basic::{BasicClient, BasicTokenResponse};
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, PkceCodeChallenge,
    RedirectUrl, RefreshToken, RequestTokenError, Scope, TokenResponse, TokenUrl,
};
use std::cell::{Cell, OnceCell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;
use url::Url;

use super::callback;
use super::challenge::{BearerChallenge, parse_bearer};
use super::client_credentials::Grant;
use super::clock::{SignInClock, SignInTimes};
use super::device::SignInMode;
use super::errors::{SignInCause, SignInError, failed};
use super::gate::{CONSENT_COOLDOWN, Consent, SignInGate, UrlDelivery};
use super::http;
use super::metadata::{
    ServerMetadata, canonical_resource, select_scopes, split_scopes, union_scopes,
};
use super::opener::BrowserOpener;
use super::receiver;
use super::registration::{self, Client, ClientKind, RegistrationOptions};
use super::store::records::{IndexEntry, TokenAuthMethod, TokenRecord, now_unix_secs};
use super::store::{TokenStore, index, lock, marker, sign_in_key};
use super::url_check::validate_authorization_url;
use crate::transport::token::{AccessToken, Challenge, ChallengeOutcome, TokenProvider};

mod client_grant;
mod device_grant;
mod discovery;
mod failure;
mod user_grant;

use failure::TokenFailure;

/// An access token that expires within this margin (or within half its lifetime, when that is
/// shorter) is refreshed before it is used, so that no token expires on its way to the server.
pub const REFRESH_MARGIN_SECS: u64 = 60;
/// The default `--sign-in-timeout`.
pub const DEFAULT_SIGN_IN_TIMEOUT: Duration = Duration::from_secs(300);
/// Longest wait for another process's refresh of the same sign-in.
pub const REFRESH_LOCK_TIMEOUT: Duration = Duration::from_secs(60);
/// What the wait for another process's sign-in adds to `--sign-in-timeout`.
pub const SIGN_IN_LOCK_SLACK: Duration = Duration::from_secs(30);
/// How many times one challenge replaces a client registration that the authorization
/// server answered with `invalid_client` (RFC 6749 §5.2: it forgot the client, a restart of a
/// server that keeps its clients in memory): once, then the error stands.
pub const MAX_CLIENT_RENEWALS: u8 = 1;

/// The sign-in settings of the command line.
#[derive(Clone, Debug)]
pub struct SignInConfig {
    /// The upstream server URL (the protected resource).
    pub server_url: Url,
    /// `--account` (default `default`).
    pub account: String,
    /// `--redirect-port` (default 41894; 0 picks a free port, for tests).
    pub redirect_port: u16,
    /// `--client-id`, `--client-issuer`, `--client-metadata-url`, the secret.
    pub registration: RegistrationOptions,
    /// `--grant`: the authorization code grant (a sign-in in the browser), or the client
    /// credentials grant (`--client-id` and its secret, no browser).
    pub grant: Grant,
    /// `--sign-in`: how a user signs in with the authorization code grant's flows (in the
    /// browser, or with a device code).
    pub sign_in: SignInMode,
    /// `--sign-in-timeout`.
    pub sign_in_timeout: Duration,
    /// `--no-browser`.
    pub no_browser: bool,
    /// `--authorize-param`: more parameters of the authorization request, in order.
    pub authorize_params: Vec<(String, String)>,
    /// `SANDBOX_RUNTIME=1`.
    pub sandbox: bool,
    /// The wait after a declined sign-in ([`CONSENT_COOLDOWN`]).
    pub consent_cooldown: Duration,
    /// The PEM of `--ca-file`, trusted for the sign-in's requests besides the system's roots.
    pub extra_ca_pem: Option<Vec<u8>>,
    /// What opens the start URL (the system's browser, `$BROWSER` read when the settings are
    /// made).
    pub browser: BrowserOpener,
    /// The server's name in a gateway's file: the sign-in lines and the editor's sign-in
    /// message name it (`None`: the only server of the process).
    pub member: Option<Arc<str>>,
    /// The loopback listeners this sign-in shares with the other servers' sign-ins of a
    /// gateway (a table of its own for the only server).
    pub receivers: receiver::Receivers,
}

impl SignInConfig {
    /// The settings for `server_url` with every default.
    pub fn new(server_url: Url) -> Self {
        SignInConfig {
            server_url,
            account: "default".into(),
            redirect_port: receiver::DEFAULT_REDIRECT_PORT,
            registration: RegistrationOptions::default(),
            grant: Grant::default(),
            sign_in: SignInMode::default(),
            sign_in_timeout: DEFAULT_SIGN_IN_TIMEOUT,
            no_browser: false,
            authorize_params: Vec::new(),
            sandbox: false,
            consent_cooldown: CONSENT_COOLDOWN,
            extra_ca_pem: None,
            browser: BrowserOpener::from_env(),
            member: None,
            receivers: receiver::Receivers::default(),
        }
    }
}

/// How far the stored sign-in was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Loaded {
    /// Not yet.
    No,
    /// Put off: the store is not open and no marker says it holds this sign-in, so the
    /// requests go without a token until the first 401/403 reads it ([`Inner::load_all`]).
    Deferred,
    /// Read (found or not).
    Yes,
}

/// The provider; clones share one state. Lives on the actor thread (the actix System).
#[derive(Clone)]
pub struct SignIn {
    inner: Rc<Inner>,
}

struct Inner {
    cfg: SignInConfig,
    redirect_uri: String,
    /// The canonical URI of the server URL: the key a stored record must match (the resource
    /// indicator itself is the resource metadata's `resource`, kept in the record).
    resource: String,
    key: String,
    /// The certificates of `--ca-file`, for [`Inner::http`].
    extra_roots: Vec<reqwest::Certificate>,
    /// The sign-in's HTTP client, made at its first request ([`Inner::http`]): building it
    /// reads the system certificate store, which a bridge whose upstream never asks for a
    /// sign-in does not need.
    http: OnceCell<reqwest::Client>,
    store: TokenStore,
    gate: SignInGate,
    /// When this provider's sign-ins run (`--sign-in-timeout` is its allowance).
    clock: SignInClock,
    record: RefCell<Option<TokenRecord>>,
    loaded: Cell<Loaded>,
    flow: tokio::sync::Mutex<()>,
}

impl SignIn {
    /// A provider for `cfg`, keeping its sign-in in `store`. Errors: `--ca-file` holds no
    /// certificate (`sign_in_failed`). The HTTP client is made at the first request of a
    /// discovery, sign-in or refresh.
    pub fn new(cfg: SignInConfig, store: TokenStore) -> Result<Self, SignInError> {
        let redirect_uri = receiver::redirect_uri(cfg.redirect_port);
        let resource = canonical_resource(&cfg.server_url);
        let key = sign_in_key(cfg.server_url.as_str(), &cfg.account, &redirect_uri);
        let extra_roots =
            http::extra_roots(cfg.extra_ca_pem.as_deref()).map_err(|e| failed(e.to_string()))?;
        let gate = SignInGate::new(
            cfg.no_browser,
            cfg.sandbox,
            cfg.consent_cooldown,
            cfg.browser.clone(),
        )
        .for_member(cfg.member.clone());
        let clock = SignInClock::new(cfg.sign_in_timeout);
        Ok(SignIn {
            inner: Rc::new(Inner {
                cfg,
                redirect_uri,
                resource,
                key,
                extra_roots,
                http: OnceCell::new(),
                store,
                gate,
                clock,
                record: RefCell::new(None),
                loaded: Cell::new(Loaded::No),
                flow: tokio::sync::Mutex::new(()),
            }),
        })
    }

    /// `notifications/initialized` arrived: from now on a sign-in asks the editor through
    /// `consent` (`None`: the editor declared no URL elicitation, and a sign-in fails with
    /// `reauthorization_required`) and never opens a browser; a flow that runs and has not
    /// delivered its URL yet asks the editor too.
    pub fn editor_initialized(&self, consent: Option<Rc<dyn Consent>>) {
        self.inner.gate.initialized(consent);
    }

    /// When this provider's sign-ins run, for the waits that leave that time out.
    pub fn times(&self) -> SignInTimes {
        self.inner.clock.times()
    }
}

impl SignIn {
    /// The stored access token as it is (read once from the store), with no refresh and no
    /// sign-in: what the SignIn actor gives after the shutdown aborted its flows, so that
    /// the upstream's close (a 2025-11-25 `DELETE` of the session) still carries it.
    pub fn current_token(&self) -> LocalBoxFuture<'static, Option<AccessToken>> {
        let me = self.inner.clone();
        Box::pin(async move {
            me.load().await;
            me.current_token().map(AccessToken::new)
        })
    }
}

impl TokenProvider for SignIn {
    fn access_token(&self) -> LocalBoxFuture<'static, Option<AccessToken>> {
        let me = self.inner.clone();
        Box::pin(async move {
            let _flow = me.flow.lock().await;
            me.load().await;
            let rec = me.record.borrow().clone()?;
            if rec.needs_refresh(now_unix_secs(), REFRESH_MARGIN_SECS) {
                match me.cfg.grant {
                    Grant::AuthorizationCode if rec.refresh_token.is_some() => {
                        if let Err(r) = me.refresh(Some(&rec.access_token)).await {
                            tracing::info!(target: "sign-in", "the refresh before expiry failed: {}", r.error);
                        }
                    }
                    Grant::AuthorizationCode => {}
                    // No refresh token (RFC 6749 §4.4.3): the same grant once more.
                    Grant::ClientCredentials => {
                        if let Err(e) = me.renew_client_credentials(Some(&rec.access_token)).await {
                            tracing::info!(target: "sign-in", "the new token before expiry failed: {e}");
                        }
                    }
                }
            }
            me.record
                .borrow()
                .as_ref()
                .map(|r| AccessToken::new(r.access_token.clone()))
        })
    }

    fn challenge(&self, challenge: Challenge) -> LocalBoxFuture<'static, ChallengeOutcome> {
        let me = self.inner.clone();
        Box::pin(async move {
            let _flow = me.flow.lock().await;
            // Before any refresh or sign-in: a sign-in stored without a marker (an older
            // bridge) is found here and tried first.
            me.load_all().await;
            match me.answer(challenge).await {
                Ok(()) => ChallengeOutcome::Retry,
                Err(e) => {
                    if !e.logged {
                        tracing::warn!(target: "sign-in", "{e}");
                    }
                    ChallengeOutcome::Fail(e.outcome())
                }
            }
        })
    }
}

impl Inner {
    /// The sign-in's HTTP client, made at the first call. Errors: it cannot be made
    /// (`sign_in_failed`; the next call tries again).
    fn http(&self) -> Result<&reqwest::Client, SignInError> {
        if let Some(c) = self.http.get() {
            return Ok(c);
        }
        let c = http::client(&self.extra_roots).map_err(|e| failed(e.to_string()))?;
        Ok(self.http.get_or_init(|| c))
    }

    /// Reads the stored sign-in once (off the actor thread) when the store may hold it: the
    /// store is open already, or this sign-in's marker exists (one `stat` on this thread, as
    /// the entry lock's `open`). Otherwise the read is put off to the first challenge
    /// ([`Inner::load_all`]), and a lazily opened store (`auto`) stays closed.
    async fn load(&self) {
        if self.loaded.get() != Loaded::No {
            return;
        }
        let marked = self
            .store
            .marker_dir
            .as_deref()
            .is_some_and(|d| marker::exists(d, &self.key));
        if !marked && !self.store.is_open() {
            tracing::debug!(target: "sign-in", "no stored sign-in is marked for this server; the token store is read at the first 401/403");
            self.loaded.set(Loaded::Deferred);
            return;
        }
        self.load_all().await;
    }

    /// Reads the stored sign-in once, also when [`Inner::load`] put it off (opening a lazy
    /// store). A sign-in found without its marker (stored by an older bridge) gets one, so
    /// the next start reads it at once; a marker whose store holds no sign-in (its tokens
    /// were deleted outside the bridge, or cannot be read) is removed, so the next start
    /// does not open the store for it (a store that cannot be reached leaves it be).
    async fn load_all(&self) {
        if self.loaded.replace(Loaded::Yes) == Loaded::Yes {
            return;
        }
        let key = self.key.clone();
        let marker_dir = self.store.marker_dir.clone();
        let bytes = self
            .store
            .run(move |s| {
                let found = s.get(&key);
                if let Some(d) = marker_dir
                    && !s.is_memory()
                {
                    match &found {
                        Ok(Some(_)) if !marker::exists(&d, &key) => mark(&d, &key),
                        Ok(None) => unmark(&d, &key),
                        _ => {}
                    }
                }
                found.ok().flatten()
            })
            .await;
        if let Some(rec) = bytes.and_then(|b| self.parse(&b)) {
            *self.record.borrow_mut() = Some(rec);
        }
    }

    /// A stored record, when it is one for this server's resource.
    fn parse(&self, bytes: &[u8]) -> Option<TokenRecord> {
        serde_json::from_slice::<TokenRecord>(bytes)
            .ok()
            .filter(|r| r.resource == self.resource)
    }

    /// The record to renew, under the entry lock (held by the guard returned with it): the
    /// stored one (another process may have renewed it) or the one in memory. `None` when
    /// another process already replaced the token (it is not `rejected` and not expiring): that
    /// record is adopted, and there is nothing to renew. Errors: the lock, or no sign-in at all.
    async fn locked_record(
        &self,
        rejected: Option<&str>,
    ) -> Result<Option<(lock::EntryLock, TokenRecord)>, SignInError> {
        let guard = lock::lock(
            self.store.lock_dir.as_deref(),
            &self.key,
            REFRESH_LOCK_TIMEOUT,
        )
        .await
        .map_err(|e| {
            failed(format!(
                "entry lock: {}",
                crate::log::files::io_error_text(&e)
            ))
        })?;
        let stored = self
            .read_stored()
            .await
            .or_else(|| self.record.borrow().clone());
        let Some(rec) = stored else {
            return Err(failed("no stored sign-in"));
        };
        if rejected != Some(rec.access_token.as_str())
            && !rec.needs_refresh(now_unix_secs(), REFRESH_MARGIN_SECS)
        {
            tracing::debug!(target: "sign-in", "another process renewed the sign-in; using its token");
            *self.record.borrow_mut() = Some(rec);
            return Ok(None);
        }
        Ok(Some((guard, rec)))
    }

    async fn read_stored(&self) -> Option<TokenRecord> {
        let key = self.key.clone();
        let bytes = self.store.run(move |s| s.get(&key)).await.ok().flatten()?;
        self.parse(&bytes)
    }

    fn current_token(&self) -> Option<String> {
        self.record
            .borrow()
            .as_ref()
            .map(|r| r.access_token.clone())
    }

    async fn answer(&self, c: Challenge) -> Result<(), SignInError> {
        let bearer = parse_bearer(&c.www_authenticate).unwrap_or_default();
        let rejected = c.rejected.as_ref().map(|t| t.secret().to_string());
        if c.status == 403 {
            if !bearer.insufficient_scope() {
                return Err(SignInError::new(SignInCause::AccessRefused, "HTTP 403"));
            }
            // One step-up: the union of the scopes asked so far and the challenged ones.
            let before = self
                .record
                .borrow()
                .as_ref()
                .map(|r| r.scopes.clone())
                .unwrap_or_default();
            let wanted = union_scopes(
                &before,
                &split_scopes(bearer.scope.as_deref().unwrap_or("")),
            );
            tracing::info!(target: "sign-in", "the upstream asks for more scopes ({}): signing in again", wanted.join(" "));
            return self
                .sign_in(
                    &bearer,
                    Some(wanted),
                    rejected.as_deref(),
                    MAX_CLIENT_RENEWALS,
                )
                .await;
        }
        // 401: a token replaced meanwhile is retried as it is.
        if let Some(cur) = self.current_token()
            && rejected.as_deref() != Some(cur.as_str())
        {
            return Ok(());
        }
        if self.cfg.grant == Grant::ClientCredentials {
            // Nothing to refresh (RFC 6749 §4.4.3): the grant once more, after discovery.
            return self.sign_in(&bearer, None, rejected.as_deref(), 0).await;
        }
        let has_refresh = self
            .record
            .borrow()
            .as_ref()
            .is_some_and(|r| r.refresh_token.is_some());
        let mut renewals = MAX_CLIENT_RENEWALS;
        if has_refresh {
            match self.refresh(rejected.as_deref()).await {
                Ok(()) => return Ok(()),
                Err(r) => {
                    if r.client_dropped {
                        // The renewal of this challenge is the registration of this sign-in.
                        renewals = renewals.saturating_sub(1);
                    }
                    tracing::info!(target: "sign-in", "the refresh failed ({}); signing in again", r.error)
                }
            }
        }
        self.sign_in(&bearer, None, rejected.as_deref(), renewals)
            .await
    }

    /// Refreshes under the entry lock; a record that another process already replaced (its
    /// access token is not `rejected` and not expiring) is adopted without a refresh. The
    /// token endpoint gets the client's authentication (the stored registration's, or the
    /// pre-registered secret); a client secret that expires within [`REFRESH_MARGIN_SECS`] is
    /// not used (the sign-in that follows registers again), and `invalid_client` drops the
    /// stored registration ([`registration::forget`]).
    async fn refresh(&self, rejected: Option<&str>) -> Result<(), Refused> {
        let Some((_lock, rec)) = self.locked_record(rejected).await? else {
            return Ok(());
        };
        let Some(refresh) = rec.refresh_token.clone() else {
            return Err(failed("no refresh token").into());
        };
        // A refresh that cannot work again is not tried before every request; the access
        // token serves until its 401, which then starts a sign-in.
        let spend = |rec: &TokenRecord| {
            let mut spent = rec.clone();
            spent.refresh_token = None;
            *self.record.borrow_mut() = Some(spent);
        };
        let kind = registration::kind_of(&self.cfg.registration, &rec.client_id);
        let auth = match kind {
            ClientKind::PreRegistered => {
                registration::pre_registered_auth(&self.cfg.registration, &rec.issuer)
            }
            _ => rec.auth.clone(),
        };
        if auth.secret_expires_within(now_unix_secs(), REFRESH_MARGIN_SECS) {
            spend(&rec);
            return Err(failed(format!(
                "the client secret expires within {REFRESH_MARGIN_SECS} s"
            ))
            .into());
        }
        let client = BasicClient::new(ClientId::new(rec.client_id.clone())).set_token_uri(
            TokenUrl::new(rec.token_endpoint.clone()).map_err(|_| failed("bad token endpoint"))?,
        );
        let client = match auth.secret() {
            Some(s) => client
                .set_client_secret(ClientSecret::new(s.to_string()))
                .set_auth_type(auth_type(auth.token_endpoint_auth_method)),
            None => client,
        };
        let http = self.http()?.clone();
        let refresh_token = RefreshToken::new(refresh);
        let resp = match client
            .exchange_refresh_token(&refresh_token)
            .add_extra_param("resource", rec.indicator().to_string())
            .request_async(&move |r| http::oauth_request(http.clone(), r))
            .await
        {
            Ok(resp) => resp,
            Err(e) => {
                // Refused (revoked, expired, spent, or the client unknown): this refresh
                // token never works again.
                if matches!(e, RequestTokenError::ServerResponse(_)) {
                    spend(&rec);
                }
                return Err(match TokenFailure::from_request(e) {
                    TokenFailure::InvalidClient(error) => {
                        let client_dropped = kind == ClientKind::Dynamic
                            && registration::forget(
                                &self.store,
                                &rec.issuer,
                                &self.redirect_uri,
                                &rec.client_id,
                            )
                            .await;
                        if client_dropped {
                            tracing::info!(target: "sign-in", "the authorization server does not know the client (invalid_client): its registration is dropped");
                        }
                        Refused {
                            error,
                            client_dropped,
                        }
                    }
                    TokenFailure::Other(error) | TokenFailure::NoBrowser(error) => error.into(),
                });
            }
        };
        let mut next = rec.clone();
        next.access_token = resp.access_token().secret().clone();
        if let Some(rt) = resp.refresh_token() {
            next.refresh_token = Some(rt.secret().clone());
        }
        next.expires_at_unix_secs = resp
            .expires_in()
            .map(|d| now_unix_secs().saturating_add(d.as_secs()));
        next.lifetime_secs = resp.expires_in().map(|d| d.as_secs());
        self.save(&next).await;
        *self.record.borrow_mut() = Some(next);
        tracing::info!(target: "sign-in", "refreshed the access token");
        Ok(())
    }

    async fn save(&self, rec: &TokenRecord) {
        let key = self.key.clone();
        let Ok(bytes) = serde_json::to_vec(rec) else {
            return;
        };
        let marker_dir = self.store.marker_dir.clone();
        let stored = self
            .store
            .run(move |s| {
                s.set(&key, &bytes)?;
                // A store that outlives the process: the next start reads it at once.
                if let Some(d) = marker_dir
                    && !s.is_memory()
                {
                    mark(&d, &key);
                }
                Ok::<(), super::store::StoreError>(())
            })
            .await;
        if let Err(e) = stored {
            tracing::warn!(target: "sign-in", "the sign-in is not stored: {e}");
        }
        let entry = IndexEntry {
            key: self.key.clone(),
            url: self.cfg.server_url.to_string(),
            account: self.cfg.account.clone(),
            redirect_uri: self.redirect_uri.clone(),
        };
        if let Err(e) = index::add(&self.store, entry).await {
            tracing::warn!(target: "sign-in", "the index of sign-ins is not updated: {e}");
        }
    }

    /// A full sign-in under the entry lock (another process's fresh sign-in is adopted). A
    /// code exchange refused with `invalid_client` (RFC 6749 §5.2) drops the client's stored
    /// registration and signs in once more with a new one, at most `renewals` times.
    async fn sign_in(
        &self,
        bearer: &BearerChallenge,
        step_up: Option<Vec<String>>,
        rejected: Option<&str>,
        renewals: u8,
    ) -> Result<(), SignInError> {
        // The client credentials grant involves no user: no browser, no consent of the
        // editor, no loopback port.
        if self.cfg.grant == Grant::AuthorizationCode {
            self.gate.admit()?;
        }
        // From here the sign-in runs: a wait for `server/discover` does not count this time.
        let _running = self.clock.running();
        let _lock = lock::lock(
            self.store.lock_dir.as_deref(),
            &self.key,
            self.cfg.sign_in_timeout + SIGN_IN_LOCK_SLACK,
        )
        .await
        .map_err(|e| {
            failed(format!(
                "entry lock: {}",
                crate::log::files::io_error_text(&e)
            ))
        })?;
        if let Some(rec) = self.read_stored().await
            && rejected != Some(rec.access_token.as_str())
            && !rec.needs_refresh(now_unix_secs(), REFRESH_MARGIN_SECS)
            && step_up
                .as_ref()
                .is_none_or(|w| w.iter().all(|s| rec.scopes.contains(s)))
        {
            tracing::debug!(target: "sign-in", "another process signed in; using its token");
            *self.record.borrow_mut() = Some(rec);
            return Ok(());
        }
        let (prm, server) = self.discover(bearer).await?;
        let scopes = match step_up {
            Some(w) => w,
            None => select_scopes(bearer.scope.as_deref(), &prm, &server),
        };
        // The resource identifier exactly as the resource metadata publishes it (RFC 9728
        // §3.3, RFC 8707 §2; it covers the server URL: `check_resource`), which may be the
        // origin when the metadata sits at the root.
        let indicator = prm.resource.clone();
        if self.cfg.grant == Grant::ClientCredentials {
            return self.client_credentials(&server, &scopes, indicator).await;
        }
        let device = self.device_endpoint(&server)?;
        let mut renewals = renewals;
        loop {
            // The code exchange comes at most `--sign-in-timeout` after the registration.
            let client = registration::client_for(
                &self.cfg.registration,
                &server,
                &self.redirect_uri,
                &self.store,
                self.http()?,
                self.cfg.sign_in_timeout.as_secs(),
            )
            .await?;
            tracing::debug!(target: "sign-in", "client registration: {}", client.path);
            let got = self
                .user_grant(&server, &client, &scopes, &indicator, device.as_deref())
                .await;
            let resp = match got {
                Ok(resp) => resp,
                Err(TokenFailure::InvalidClient(e)) => {
                    if client.kind == ClientKind::PreRegistered {
                        return Err(failed(format!(
                            "{}; check --client-id, --client-issuer and MCP_BRIDGE_CLIENT_SECRET",
                            e.detail
                        )));
                    }
                    if renewals == 0 {
                        let again = match client.kind {
                            ClientKind::Dynamic => "also after a new client registration",
                            _ => "also at a second sign-in",
                        };
                        return Err(failed(format!("{}, {again}", e.detail)));
                    }
                    renewals -= 1;
                    self.forget_client(&server.issuer, &client).await;
                    tracing::info!(target: "sign-in", "the authorization server does not accept the client (invalid_client, or unauthorized_client to a device sign-in): signing in once more");
                    continue;
                }
                Err(TokenFailure::Other(e) | TokenFailure::NoBrowser(e)) => return Err(e),
            };
            self.keep_signed_in(&server, client, &scopes, &indicator, &resp)
                .await;
            return Ok(());
        }
    }

    /// Drops the stored registration of `client` at `issuer` (a dynamic one; a client ID
    /// metadata document is fetched again by the authorization server, and a pre-registered
    /// client has nothing to drop).
    async fn forget_client(&self, issuer: &str, client: &Client) {
        if client.kind == ClientKind::Dynamic
            && registration::forget(&self.store, issuer, &self.redirect_uri, &client.client_id)
                .await
        {
            tracing::debug!(target: "sign-in", "the stored client registration is dropped");
        }
    }

    /// One authorization round with `client`: the authorization URL, the receiver, the Gate,
    /// the redirect, and the code exchange with the client's authentication. Both requests
    /// carry `resource` as the resource indicator (RFC 8707). With `fallback` (the server
    /// offers a device sign-in) a browser that does not start ends it at once
    /// ([`TokenFailure::NoBrowser`]).
    async fn authorize(
        &self,
        server: &ServerMetadata,
        client: &Client,
        scopes: &[String],
        resource: &str,
        fallback: bool,
    ) -> Result<BasicTokenResponse, TokenFailure> {
        let bad_endpoint = || failed("the authorization server metadata has a bad endpoint URL");
        let Some(authorization_endpoint) = server.authorization_endpoint.clone() else {
            return Err(
                failed("the authorization server metadata has no authorization_endpoint").into(),
            );
        };
        let oauth = BasicClient::new(ClientId::new(client.client_id.clone()))
            .set_auth_uri(AuthUrl::new(authorization_endpoint).map_err(|_| bad_endpoint())?)
            .set_token_uri(
                TokenUrl::new(server.token_endpoint.clone()).map_err(|_| bad_endpoint())?,
            )
            .set_redirect_uri(
                RedirectUrl::new(self.redirect_uri.clone()).map_err(|_| bad_endpoint())?,
            );
        let oauth = match client.auth.secret() {
            Some(s) => oauth
                .set_client_secret(ClientSecret::new(s.to_string()))
                .set_auth_type(auth_type(client.auth.token_endpoint_auth_method)),
            None => oauth,
        };
        let (pkce, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request = oauth
            .authorize_url(CsrfToken::new_random)
            .add_scopes(scopes.iter().cloned().map(Scope::new))
            .set_pkce_challenge(pkce)
            .add_extra_param("resource", resource.to_string());
        for (name, value) in &self.cfg.authorize_params {
            request = request.add_extra_param(name.as_str(), value.as_str());
        }
        let (auth_url, state) = request.url();
        let auth_url = validate_authorization_url(auth_url.as_str(), &self.redirect_uri)?;
        let issuer = server.issuer.clone();
        let iss_supported = server.authorization_response_iss_parameter_supported == Some(true);
        let mut rx = self.cfg.receivers.start(
            self.cfg.redirect_port,
            state.secret().clone(),
            CsrfToken::new_random().secret().clone(),
            auth_url.to_string(),
            Box::new(move |p| callback::code_from(p, &issuer, iss_supported)),
        )?;
        let start_url = rx.start_url();
        let limit = self.cfg.sign_in_timeout;
        let browser_failed: RefCell<Option<SignInError>> = RefCell::new(None);
        let asked_editor = Cell::new(false);
        let waited = tokio::time::timeout(limit, async {
            match self
                .gate
                .deliver(auth_url.as_str(), &start_url, fallback)
                .await?
            {
                UrlDelivery::LineOnly(Some(e)) => *browser_failed.borrow_mut() = Some(e),
                UrlDelivery::Editor => asked_editor.set(true),
                UrlDelivery::NoBrowser(e) => return Err(TokenFailure::NoBrowser(e)),
                _ => {}
            }
            Ok(rx.wait().await?)
        })
        .await;
        if asked_editor.get() {
            // The out-of-band part is over: the editor may close what it showed.
            self.gate.completed(auth_url.as_str());
        }
        drop(state);
        let code = match waited {
            Ok(Ok(code)) => code,
            Ok(Err(e)) => return Err(e),
            // The browser never started: that is the cause the user can act on.
            Err(_) => {
                return Err(browser_failed
                    .take()
                    .unwrap_or_else(|| {
                        SignInError::new(
                            SignInCause::SignInTimeout,
                            format!("{} s", limit.as_secs_f64()),
                        )
                    })
                    .into());
            }
        };
        drop(rx);
        let http = self.http()?.clone();
        oauth
            .exchange_code(AuthorizationCode::new(code))
            .set_pkce_verifier(verifier)
            .add_extra_param("resource", resource.to_string())
            .request_async(&move |r| http::oauth_request(http.clone(), r))
            .await
            .map_err(TokenFailure::from_request)
    }
}

/// Makes the marker of `key` in `dir` (blocking); a failure costs the next start one 401, so
/// it is a warning.
fn mark(dir: &std::path::Path, key: &str) {
    if let Err(e) = marker::create(dir, key) {
        tracing::warn!(target: "sign-in", "the sign-in marker in {} is not written ({e}); the next start reads the stored sign-in after one 401", dir.display());
    }
}

/// Removes the marker of a sign-in the store does not hold (nothing when there is none).
fn unmark(dir: &std::path::Path, key: &str) {
    match marker::remove(dir, key) {
        Ok(true) => {
            tracing::debug!(target: "sign-in", "the token store holds no sign-in for this server: its marker is removed");
        }
        Ok(false) => {}
        Err(e) => {
            tracing::warn!(target: "sign-in", "the sign-in marker in {} is not removed ({e}); the next start opens the token store for it again", dir.display());
        }
    }
}

fn host_of(url: &str) -> String {
    Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_default()
}

/// The `oauth2` crate's authentication for `method` (it sends HTTP Basic with the
/// form-urlencoded id and secret, RFC 6749 §2.3.1, or both in the body).
fn auth_type(method: TokenAuthMethod) -> AuthType {
    match method {
        TokenAuthMethod::ClientSecretPost => AuthType::RequestBody,
        _ => AuthType::BasicAuth,
    }
}

/// A failed refresh: its error, and whether it dropped the stored client registration (the
/// authorization server answered `invalid_client`).
struct Refused {
    error: SignInError,
    client_dropped: bool,
}

impl From<SignInError> for Refused {
    fn from(error: SignInError) -> Self {
        Refused {
            error,
            client_dropped: false,
        }
    }
}
