//! The client credentials grant (RFC 6749 §4.4; the MCP extension
//! `io.modelcontextprotocol/oauth-client-credentials`): a token for the client itself, with no
//! browser, no redirect and no refresh token, asked again before it expires.

use oauth2::TokenResponse;
use oauth2::basic::BasicTokenResponse;

use super::failure::TokenFailure;
use super::{Inner, auth_type, host_of};
use crate::auth::client_credentials;
use crate::auth::errors::{SignInCause, SignInError, failed};
use crate::auth::metadata::{ServerMetadata, union_scopes};
use crate::auth::store::records::{ClientAuth, TokenAuthMethod, TokenRecord, now_unix_secs};

impl Inner {
    /// The client credentials grant at `server` (RFC 6749 §4.4, the MCP extension
    /// `io.modelcontextprotocol/oauth-client-credentials`): `--client-id` and
    /// `MCP_BRIDGE_CLIENT_SECRET` with the client authentication the metadata offers, the
    /// `scopes` and the resource `indicator`; no browser, no redirect. The record keeps the
    /// method (never the secret) for the next grant before expiry. Errors:
    /// `issuer_not_registered`, `client_credentials_refused`, `sign_in_failed`.
    pub(super) async fn client_credentials(
        &self,
        server: &ServerMetadata,
        scopes: &[String],
        indicator: String,
    ) -> Result<(), SignInError> {
        let reg = &self.cfg.registration;
        // The secret only goes to the issuer it was named for.
        if reg
            .client_issuer
            .as_deref()
            .is_some_and(|i| i != server.issuer)
        {
            return Err(SignInError::new(SignInCause::IssuerNotRegistered, ""));
        }
        let method = client_credentials::auth_method(server)?;
        let resp = self
            .client_credentials_token(&server.token_endpoint, method, scopes, &indicator)
            .await?;
        let rec = TokenRecord {
            issuer: server.issuer.clone(),
            client_id: reg.client_id.clone().unwrap_or_default(),
            token_endpoint: server.token_endpoint.clone(),
            resource: self.resource.clone(),
            resource_indicator: Some(indicator),
            access_token: String::new(),
            refresh_token: None,
            expires_at_unix_secs: None,
            scopes: scopes.to_vec(),
            lifetime_secs: None,
            auth: ClientAuth {
                token_endpoint_auth_method: method,
                client_secret: None,
                client_secret_expires_at: 0,
            },
        };
        self.keep_granted(rec, &resp).await;
        tracing::info!(target: "sign-in", "got an access token at {} with the client credentials grant", host_of(&server.issuer));
        Ok(())
    }

    /// A new token of the client credentials grant before the current one expires: the
    /// token endpoint, scopes, resource indicator and client authentication of the stored
    /// record, under the entry lock (a record another process renewed meanwhile is adopted).
    /// Errors: the stored sign-in is not this client's grant, or the grant failed (the
    /// token then serves until its 401, which starts the grant after discovery).
    pub(super) async fn renew_client_credentials(
        &self,
        rejected: Option<&str>,
    ) -> Result<(), SignInError> {
        let Some((_lock, rec)) = self.locked_record(rejected).await? else {
            return Ok(());
        };
        let method = rec.auth.token_endpoint_auth_method;
        if self.cfg.registration.client_id.as_deref() != Some(rec.client_id.as_str())
            || method == TokenAuthMethod::None
        {
            return Err(failed(
                "the stored sign-in is not a client credentials grant of --client-id",
            ));
        }
        let resp = self
            .client_credentials_token(&rec.token_endpoint, method, &rec.scopes, rec.indicator())
            .await?;
        self.keep_granted(rec, &resp).await;
        tracing::info!(target: "sign-in", "got a new access token with the client credentials grant");
        Ok(())
    }

    /// One token request of the client credentials grant with `--client-id` and
    /// `MCP_BRIDGE_CLIENT_SECRET`. Errors: `invalid_client` is `client_credentials_refused`
    /// (RFC 6749 §5.2), any other failure `sign_in_failed`.
    pub(super) async fn client_credentials_token(
        &self,
        token_endpoint: &str,
        method: TokenAuthMethod,
        scopes: &[String],
        indicator: &str,
    ) -> Result<BasicTokenResponse, SignInError> {
        let reg = &self.cfg.registration;
        // The command line requires both with this grant (exit 2 otherwise).
        let (Some(id), Some(secret)) = (&reg.client_id, &reg.client_secret) else {
            return Err(failed(
                "--grant client-credentials needs --client-id and MCP_BRIDGE_CLIENT_SECRET",
            ));
        };
        client_credentials::request(
            self.http()?,
            token_endpoint,
            id,
            secret,
            auth_type(method),
            scopes,
            indicator,
        )
        .await
        .map_err(|e| match TokenFailure::from_request(e) {
            TokenFailure::InvalidClient(e) => {
                SignInError::new(SignInCause::ClientCredentialsRefused, e.detail)
            }
            TokenFailure::Other(e) | TokenFailure::NoBrowser(e) => e,
        })
    }

    /// Keeps the token of `resp` in `rec` (no refresh token: the grant is asked again), and
    /// stores it.
    pub(super) async fn keep_granted(&self, mut rec: TokenRecord, resp: &BasicTokenResponse) {
        rec.access_token = resp.access_token().secret().clone();
        rec.refresh_token = None;
        rec.expires_at_unix_secs = resp
            .expires_in()
            .map(|d| now_unix_secs().saturating_add(d.as_secs()));
        rec.lifetime_secs = resp.expires_in().map(|d| d.as_secs());
        if let Some(granted) = resp.scopes() {
            let granted: Vec<String> = granted.iter().map(|x| x.to_string()).collect();
            rec.scopes = union_scopes(&rec.scopes, &granted);
        }
        self.save(&rec).await;
        *self.record.borrow_mut() = Some(rec);
    }
}
