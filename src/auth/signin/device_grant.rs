//! The device authorization grant (RFC 8628) over the `oauth2` crate's device flow: the
//! device authorization request with the scopes, the resource indicator and
//! `--authorize-param`; the sign-in line with `verification_uri` and `user_code`; the
//! editor's URL elicitation with `verification_uri_complete` once it is initialized; and the
//! polling of the token endpoint at `interval` (`authorization_pending` polls on,
//! `slow_down` adds 5 s, §3.5), within `expires_in` and `--sign-in-timeout`.

use oauth2::basic::{BasicClient, BasicErrorResponse, BasicErrorResponseType, BasicTokenResponse};
use oauth2::{
    ClientId, ClientSecret, DeviceAuthorizationUrl, DeviceCodeErrorResponse, RequestTokenError,
    Scope, StandardDeviceAuthorizationResponse, TokenUrl,
};
use std::time::{Duration, Instant};

use super::failure::{TokenFailure, error_code, token_error};
use super::{Inner, auth_type, user_grant};
use crate::auth::device::{self, MIN_POLL_INTERVAL, SignInMode};
use crate::auth::errors::{SignInCause, SignInError, failed};
use crate::auth::http::{self, AuthHttpError};
use crate::auth::metadata::ServerMetadata;
use crate::auth::registration::{Client, ClientKind};

/// How far the `oauth2` crate's end of the polls may lie before the bridge's own reckoning of
/// `expires_in`: the crate measures it with the wall clock, the bridge with a monotonic one.
const EXPIRY_CLOCK_SLACK: Duration = Duration::from_secs(1);
/// The longest wait between two polls after transport errors: the `oauth2` crate doubles the
/// wait at each one (RFC 8628 §3.5 asks for an exponential backoff on connection timeouts),
/// up to this.
const MAX_POLL_BACKOFF: Duration = Duration::from_secs(60);

impl Inner {
    /// The device authorization endpoint of `server`, when the sign-in may use it: always
    /// with `--sign-in device`, and as the way out of a browser that does not start. Errors:
    /// `--sign-in device` and the metadata has none (`device_authorization_unavailable`).
    pub(super) fn device_endpoint(
        &self,
        server: &ServerMetadata,
    ) -> Result<Option<String>, SignInError> {
        match &server.device_authorization_endpoint {
            None if self.cfg.sign_in == SignInMode::Device => Err(user_grant::no_device_endpoint()),
            other => Ok(other.clone()),
        }
    }

    /// One device sign-in with `client` at `endpoint`: the device authorization request
    /// (RFC 8628 §3.1), the sign-in line, the editor's question once `initialized` came, and
    /// the polls of the token endpoint (§3.4), which carry `resource` too. Errors:
    /// `device_code_expired`, `device_access_denied`, `sign_in_timeout`, `sign_in_denied` (the
    /// editor declined), `sign_in_invalid_url`; `invalid_client` (and `unauthorized_client`
    /// from the device authorization endpoint, a stored registration made without the device
    /// grant) as [`TokenFailure::InvalidClient`], for a new registration.
    pub(super) async fn device_token(
        &self,
        server: &ServerMetadata,
        client: &Client,
        scopes: &[String],
        resource: &str,
        endpoint: &str,
    ) -> Result<BasicTokenResponse, TokenFailure> {
        let bad_endpoint = || failed("the authorization server metadata has a bad endpoint URL");
        let oauth = BasicClient::new(ClientId::new(client.client_id.clone()))
            .set_device_authorization_url(
                DeviceAuthorizationUrl::new(endpoint.to_string()).map_err(|_| bad_endpoint())?,
            )
            .set_token_uri(
                TokenUrl::new(server.token_endpoint.clone()).map_err(|_| bad_endpoint())?,
            );
        let oauth = match client.auth.secret() {
            Some(s) => oauth
                .set_client_secret(ClientSecret::new(s.to_string()))
                .set_auth_type(auth_type(client.auth.token_endpoint_auth_method)),
            None => oauth,
        };
        let http = self.http()?.clone();
        let send = move |r: oauth2::HttpRequest| http::oauth_request(http.clone(), r);
        let limit = self.cfg.sign_in_timeout;
        let started = Instant::now();
        let mut request = oauth
            .exchange_device_code()
            .add_scopes(scopes.iter().cloned().map(Scope::new))
            .add_extra_param("resource", resource.to_string());
        for (name, value) in &self.cfg.authorize_params {
            request = request.add_extra_param(name.as_str(), value.as_str());
        }
        let details: StandardDeviceAuthorizationResponse = request
            .request_async(&send)
            .await
            .map_err(|e| authorization_failure(e, client.kind))?;
        let received = Instant::now();
        let shown = device::shown(&details)?;
        self.gate
            .device_sign_in_line(&shown.verification_uri, &shown.user_code);
        let lifetime = details.expires_in();
        let interval = details.interval().max(MIN_POLL_INTERVAL);
        let poll = async {
            // RFC 8628 §3.5: the interval passes before each request, the first one too (the
            // user has not entered the code yet).
            tokio::time::sleep(interval).await;
            let poll_send = |r: oauth2::HttpRequest| {
                let sent = send(r);
                async move {
                    let answer = sent.await;
                    if let Err(e) = &answer {
                        tracing::debug!(target: "sign-in", "a poll of the device code failed ({e}); polling on, slower");
                    }
                    answer
                }
            };
            oauth
                .exchange_device_access_token(&details)
                .add_extra_param("resource", resource.to_string())
                .set_max_backoff_interval(MAX_POLL_BACKOFF.max(interval))
                .request_async(
                    &poll_send,
                    |d: Duration| tokio::time::sleep(d.max(MIN_POLL_INTERVAL)),
                    Some(lifetime.saturating_sub(received.elapsed())),
                )
                .await
                .map_err(|e| poll_failure(e, received, lifetime))
        };
        let editor = async {
            self.gate
                .show_device(&shown.editor_url, &shown.user_code)
                .await?;
            std::future::pending::<Result<BasicTokenResponse, TokenFailure>>().await
        };
        let outcome = tokio::time::timeout(limit.saturating_sub(started.elapsed()), async {
            tokio::select! {
                r = poll => r,
                e = editor => e,
            }
        })
        .await;
        // The out-of-band part is over: the editor may close what it showed (nothing when it
        // was not asked or did not accept).
        self.gate.completed(&shown.editor_url);
        outcome.unwrap_or_else(|_| {
            Err(SignInError::new(
                SignInCause::SignInTimeout,
                format!("{} s", limit.as_secs_f64()),
            )
            .into())
        })
    }
}

/// A refused device authorization request: `invalid_client`, and `unauthorized_client` of a
/// dynamic registration (one stored before the server offered the device grant, RFC 6749
/// §5.2), ask for a new registration; anything else is `sign_in_failed`.
fn authorization_failure(
    e: RequestTokenError<AuthHttpError, BasicErrorResponse>,
    kind: ClientKind,
) -> TokenFailure {
    let RequestTokenError::ServerResponse(r) = &e else {
        return TokenFailure::Other(failed(match e {
            RequestTokenError::Request(e) => format!("device authorization request: {e}"),
            _ => "the device authorization response is not valid".into(),
        }));
    };
    let error = failed(format!(
        "the device authorization endpoint refused the request ({})",
        error_code(r)
    ));
    match r.error() {
        BasicErrorResponseType::InvalidClient => TokenFailure::InvalidClient(error),
        BasicErrorResponseType::UnauthorizedClient if kind == ClientKind::Dynamic => {
            TokenFailure::InvalidClient(error)
        }
        _ => TokenFailure::Other(error),
    }
}

/// The failure that ended the polls: `expired_token` (from the server, or `expires_in`
/// passed since the code came at `received`) and `access_denied` with causes of their own;
/// `invalid_client` for a new registration; the rest `sign_in_failed`.
fn poll_failure(
    e: RequestTokenError<AuthHttpError, DeviceCodeErrorResponse>,
    received: Instant,
    lifetime: Duration,
) -> TokenFailure {
    if let RequestTokenError::ServerResponse(r) = &e {
        if let Some(cause) = device::poll_cause(r.error()) {
            let passed = received.elapsed() + EXPIRY_CLOCK_SLACK >= lifetime;
            let detail = if cause == SignInCause::DeviceCodeExpired && passed {
                format!("its expires_in of {} s passed", lifetime.as_secs())
            } else {
                format!("the token endpoint answered {}", error_code(r))
            };
            return TokenFailure::Other(SignInError::new(cause, detail));
        }
        if matches!(
            r.error(),
            oauth2::DeviceCodeErrorResponseType::Basic(BasicErrorResponseType::InvalidClient)
        ) {
            return TokenFailure::InvalidClient(token_error(e));
        }
    }
    TokenFailure::Other(token_error(e))
}
