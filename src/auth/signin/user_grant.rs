//! The grants in which a user signs in (`--grant authorization-code`): in the browser (the
//! authorization code with PKCE), or with a device code (`--sign-in device`, or a browser
//! that did not start at a server that offers it; RFC 8628), and the sign-in they store.

use oauth2::TokenResponse;
use oauth2::basic::BasicTokenResponse;

use super::failure::TokenFailure;
use super::{Inner, host_of};
use crate::auth::device::SignInMode;
use crate::auth::errors::{SignInCause, SignInError};
use crate::auth::metadata::{ServerMetadata, union_scopes};
use crate::auth::registration::{Client, ClientKind};
use crate::auth::store::records::{ClientAuth, TokenRecord, now_unix_secs};

impl Inner {
    /// The token of a user's sign-in with `client`: the device sign-in at `device` (the
    /// device authorization endpoint) with `--sign-in device`; else the browser, and the
    /// device sign-in when the browser does not start and `device` is offered.
    pub(super) async fn user_grant(
        &self,
        server: &ServerMetadata,
        client: &Client,
        scopes: &[String],
        indicator: &str,
        device: Option<&str>,
    ) -> Result<BasicTokenResponse, TokenFailure> {
        if self.cfg.sign_in == SignInMode::Device {
            let Some(endpoint) = device else {
                return Err(no_device_endpoint().into());
            };
            return self
                .device_token(server, client, scopes, indicator, endpoint)
                .await;
        }
        match self
            .authorize(server, client, scopes, indicator, device.is_some())
            .await
        {
            Err(TokenFailure::NoBrowser(e)) => {
                let Some(endpoint) = device else {
                    return Err(TokenFailure::Other(e));
                };
                tracing::warn!(target: "sign-in", "the browser did not start ({}); signing in with a device code instead (the authorization server offers it)", e.detail);
                self.device_token(server, client, scopes, indicator, endpoint)
                    .await
            }
            other => other,
        }
    }

    /// Keeps the sign-in of `resp` with `client` at `server`, for `scopes` and the resource
    /// `indicator`, in the store and in memory.
    pub(super) async fn keep_signed_in(
        &self,
        server: &ServerMetadata,
        client: Client,
        scopes: &[String],
        indicator: &str,
        resp: &BasicTokenResponse,
    ) {
        let granted = resp
            .scopes()
            .map(|s| s.iter().map(|x| x.to_string()).collect::<Vec<_>>());
        let rec = TokenRecord {
            issuer: server.issuer.clone(),
            client_id: client.client_id,
            token_endpoint: server.token_endpoint.clone(),
            resource: self.resource.clone(),
            resource_indicator: Some(indicator.to_string()),
            access_token: resp.access_token().secret().clone(),
            refresh_token: resp.refresh_token().map(|t| t.secret().clone()),
            expires_at_unix_secs: resp
                .expires_in()
                .map(|d| now_unix_secs().saturating_add(d.as_secs())),
            scopes: union_scopes(scopes, &granted.unwrap_or_default()),
            lifetime_secs: resp.expires_in().map(|d| d.as_secs()),
            // A pre-registered secret is never stored: it comes from the environment.
            auth: match client.kind {
                ClientKind::PreRegistered => ClientAuth::default(),
                _ => client.auth,
            },
        };
        self.save(&rec).await;
        *self.record.borrow_mut() = Some(rec);
        tracing::info!(target: "sign-in", "signed in at {}", host_of(&server.issuer));
    }
}

/// `--sign-in device` at a server whose metadata has no device authorization endpoint.
pub(super) fn no_device_endpoint() -> SignInError {
    SignInError::new(SignInCause::DeviceAuthorizationUnavailable, "")
}
