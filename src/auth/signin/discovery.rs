//! Where the sign-in of a server is done: the protected resource metadata (RFC 9728) and its
//! authorization server's metadata (RFC 8414), or, for a server without resource metadata,
//! the discovery of 2025-03-26 authorization.

use url::Url;

use super::{Inner, SignIn};
use crate::auth::challenge::{BearerChallenge, parse_bearer};
use crate::auth::client_credentials::Grant;
use crate::auth::device::SignInMode;
use crate::auth::errors::{SignInError, failed};
use crate::auth::http::{self, AuthHttpError};
use crate::auth::metadata::{self, ResourceMetadata, ServerMetadata};

impl Inner {
    /// Whether the grant goes through the authorization endpoint, whose code PKCE protects
    /// (the client credentials grant and the device sign-in have none).
    pub(super) fn uses_pkce(&self) -> bool {
        self.cfg.grant == Grant::AuthorizationCode && self.cfg.sign_in == SignInMode::Browser
    }

    /// RFC 9728 then RFC 8414: the resource metadata (from the challenge, else the two
    /// well-known URLs), its first authorization server, and that server's checked metadata.
    pub(super) async fn discover(
        &self,
        bearer: &BearerChallenge,
    ) -> Result<(ResourceMetadata, ServerMetadata), SignInError> {
        let mut prm = None;
        let mut last = String::new();
        let mut every_404 = true;
        for u in metadata::resource_metadata_urls(
            &self.cfg.server_url,
            bearer.resource_metadata.as_deref(),
        ) {
            match http::get_json::<ResourceMetadata>(self.http()?, &u).await {
                Ok(doc) => {
                    prm = Some(doc);
                    break;
                }
                Err(e) => {
                    every_404 &= matches!(e, AuthHttpError::Status(404));
                    last = e.to_string();
                }
            }
        }
        let Some(prm) = prm else {
            // Only "not found" everywhere means a server older than resource metadata; a
            // server error or no connection is a failure, not a 2025-03-26 server.
            if every_404 {
                return self.discover_2025_03_26().await;
            }
            return Err(failed(format!("no protected resource metadata ({last})")));
        };
        metadata::check_resource(&prm, &self.cfg.server_url)?;
        let issuer = prm.authorization_servers[0].clone();
        let issuer_url = Url::parse(&issuer).map_err(|_| {
            failed("the authorization server of the resource metadata is not a URL")
        })?;
        let mut last = String::new();
        for u in metadata::server_metadata_urls(&issuer_url) {
            match http::get_json::<ServerMetadata>(self.http()?, &u).await {
                Ok(doc) => {
                    metadata::check_server(&doc, &issuer, self.uses_pkce())?;
                    return Ok((prm, doc));
                }
                Err(e) => last = e.to_string(),
            }
        }
        Err(failed(format!("no authorization server metadata ({last})")))
    }

    /// The discovery of 2025-03-26 authorization (§2.3), for a server that has no protected
    /// resource metadata (the TS SDK client signs in so, too): the authorization server is
    /// the server URL's origin; its metadata is at
    /// `<origin>/.well-known/oauth-authorization-server` (checked as any other), and when
    /// that is not found either, its default endpoints serve (§2.3.3). One info line says
    /// which. Errors: the metadata fails its checks, or its URL fails otherwise than with 404
    /// (`sign_in_failed`).
    pub(super) async fn discover_2025_03_26(
        &self,
    ) -> Result<(ResourceMetadata, ServerMetadata), SignInError> {
        let prm = metadata::legacy_resource_metadata(&self.cfg.server_url);
        let issuer = metadata::legacy_issuer(&self.cfg.server_url);
        let url = metadata::legacy_server_metadata_url(&self.cfg.server_url);
        match http::get_json::<ServerMetadata>(self.http()?, &url).await {
            Ok(doc) => {
                metadata::check_server(&doc, &issuer, self.uses_pkce())?;
                tracing::info!(target: "sign-in", "the server has no protected resource metadata (HTTP 404): signing in as 2025-03-26 authorization says, with the authorization server metadata of its origin, {url}");
                Ok((prm, doc))
            }
            Err(AuthHttpError::Status(404)) => {
                tracing::info!(target: "sign-in", "the server has no protected resource metadata and no authorization server metadata (HTTP 404): signing in at the default endpoints of 2025-03-26 authorization, {issuer}/authorize, {issuer}/token and {issuer}/register");
                Ok((prm, metadata::default_endpoints(&issuer)))
            }
            Err(e) => Err(failed(format!("no authorization server metadata ({e})"))),
        }
    }
}

impl SignIn {
    /// The discovery of a sign-in alone, as a sign-in does it for the `WWW-Authenticate`
    /// values of a 401/403 (its `Bearer` challenge's `resource_metadata`, else the well-known
    /// URLs of RFC 9728; then RFC 8414; or 2025-03-26 authorization): the metadata a sign-in
    /// would use, with no registration, no token request and no browser. `mcp-bridge doctor`
    /// reports it.
    ///
    /// Errors: what the sign-in's discovery fails with (`sign_in_failed`: no resource or
    /// authorization server metadata, or metadata that fails its checks).
    pub async fn discover_metadata(
        &self,
        www_authenticate: &[String],
    ) -> Result<(ResourceMetadata, ServerMetadata), SignInError> {
        let bearer = parse_bearer(www_authenticate).unwrap_or_default();
        self.inner.discover(&bearer).await
    }
}
