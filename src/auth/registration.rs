//! The client of a sign-in, in the order of 2026-07-28 client registration: pre-registered
//! (`--client-id`, its `--client-issuer`, the secret only from `MCP_BRIDGE_CLIENT_SECRET`),
//! then a client ID metadata document (`--client-metadata-url`, when the authorization server
//! supports them), then dynamic client registration (RFC 7591, `application_type: native`,
//! deprecated but still used), kept per issuer and redirect URI in the token store.

use serde::Deserialize;
use serde_json::json;
use url::Url;

use super::errors::{SignInCause, SignInError};
use super::http::{self, AuthHttpError};
use super::metadata::ServerMetadata;
use super::store::records::ClientRecord;
use super::store::records::IndexEntry;
use super::store::{TokenStore, client_key, index};
use super::url_check::is_loopback;

/// The client name the authorization server shows on its consent page.
pub const CLIENT_NAME: &str = "mcp-bridge";

/// The registration options of the command line.
#[derive(Clone, Default)]
pub struct RegistrationOptions {
    /// `--client-id`.
    pub client_id: Option<String>,
    /// `--client-issuer`.
    pub client_issuer: Option<String>,
    /// `MCP_BRIDGE_CLIENT_SECRET` (only with `--client-id` and `--client-issuer`).
    pub client_secret: Option<String>,
    /// `--client-metadata-url`.
    pub client_metadata_url: Option<String>,
}

impl std::fmt::Debug for RegistrationOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistrationOptions")
            .field("client_id", &self.client_id)
            .field("client_issuer", &self.client_issuer)
            .field("client_secret", &self.client_secret.as_ref().map(|_| ".."))
            .field("client_metadata_url", &self.client_metadata_url)
            .finish()
    }
}

/// The client a sign-in uses.
#[derive(Clone)]
pub struct Client {
    pub client_id: String,
    /// Only for a pre-registered client at its own issuer.
    pub client_secret: Option<String>,
    /// Which path gave it (for the debug line).
    pub path: &'static str,
}

/// Checks `--client-metadata-url`: an https URL (or http on a loopback host) with a path.
/// Errors: `invalid_client_metadata_url`.
pub fn check_metadata_url(raw: &str) -> Result<(), SignInError> {
    let bad = || SignInError::new(SignInCause::InvalidClientMetadataUrl, "");
    let u = Url::parse(raw).map_err(|_| bad())?;
    let scheme_ok = u.scheme() == "https" || (u.scheme() == "http" && is_loopback(&u));
    if !scheme_ok || u.path().trim_matches('/').is_empty() || u.fragment().is_some() {
        return Err(bad());
    }
    Ok(())
}

#[derive(Deserialize)]
struct Registered {
    client_id: String,
}

/// The client for `server` (whose `issuer` was checked) and `redirect_uri`, in the order of
/// the module doc. A dynamic registration is stored per issuer and redirect URI and reused.
/// Errors: `issuer_not_registered`, `invalid_client_metadata_url`, `registration_failed`
/// (the HTTP status), `registration_unavailable`.
pub async fn client_for(
    opts: &RegistrationOptions,
    server: &ServerMetadata,
    redirect_uri: &str,
    store: &TokenStore,
    http: &reqwest::Client,
) -> Result<Client, SignInError> {
    if let Some(id) = &opts.client_id {
        match &opts.client_issuer {
            Some(iss) if iss != &server.issuer => {
                return Err(SignInError::new(SignInCause::IssuerNotRegistered, ""));
            }
            _ => {}
        }
        // The secret only goes to the issuer it was named for.
        let secret = opts
            .client_secret
            .clone()
            .filter(|_| opts.client_issuer.as_deref() == Some(server.issuer.as_str()));
        return Ok(Client {
            client_id: id.clone(),
            client_secret: secret,
            path: "pre-registered",
        });
    }
    if let Some(url) = &opts.client_metadata_url {
        check_metadata_url(url)?;
        if server.client_id_metadata_document_supported == Some(true) {
            return Ok(Client {
                client_id: url.clone(),
                client_secret: None,
                path: "client ID metadata document",
            });
        }
    }
    let Some(endpoint) = &server.registration_endpoint else {
        return Err(SignInError::new(
            SignInCause::RegistrationUnavailable,
            format!("redirect URI {redirect_uri}"),
        ));
    };
    let key = client_key(&server.issuer, redirect_uri);
    let k = key.clone();
    let stored = store.run(move |s| s.get(&k)).await.ok().flatten();
    if let Some(rec) = stored.and_then(|b| serde_json::from_slice::<ClientRecord>(&b).ok())
        && rec.issuer == server.issuer
        && rec.redirect_uri == redirect_uri
    {
        return Ok(Client {
            client_id: rec.client_id,
            client_secret: None,
            path: "dynamic registration (stored)",
        });
    }
    let body = json!({
        "client_name": CLIENT_NAME,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "application_type": "native",
    });
    let reg: Registered = http::post_json(http, endpoint, &body).await.map_err(|e| {
        let what = match e {
            AuthHttpError::Status(s) => format!("HTTP {s}"),
            other => other.to_string(),
        };
        SignInError::new(
            SignInCause::RegistrationFailed,
            format!("{what}; redirect URI {redirect_uri}"),
        )
    })?;
    let rec = ClientRecord {
        issuer: server.issuer.clone(),
        client_id: reg.client_id.clone(),
        redirect_uri: redirect_uri.to_string(),
    };
    let k = key.clone();
    match serde_json::to_vec(&rec) {
        Ok(bytes) => match store.run(move |s| s.set(&k, &bytes)).await {
            // Listed in the index, so that `logout --all` deletes it too.
            Ok(()) => {
                let entry = IndexEntry {
                    key,
                    url: server.issuer.clone(),
                    account: String::new(),
                    redirect_uri: redirect_uri.to_string(),
                };
                if let Err(e) = index::add(store, entry).await {
                    tracing::warn!(target: "sign-in", "the index of sign-ins is not updated: {e}");
                }
            }
            Err(e) => {
                tracing::warn!(target: "sign-in", "the client registration is not stored: {e}")
            }
        },
        Err(_) => tracing::warn!(target: "sign-in", "the client registration is not stored"),
    }
    Ok(Client {
        client_id: reg.client_id,
        client_secret: None,
        path: "dynamic registration",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_metadata_url_is_https_with_a_path() {
        assert!(check_metadata_url("https://app.example/client.json").is_ok());
        assert!(check_metadata_url("http://127.0.0.1:9/client.json").is_ok());
        for bad in [
            "https://app.example",
            "https://app.example/",
            "http://app.example/c.json",
            "nope",
        ] {
            assert_eq!(
                check_metadata_url(bad).unwrap_err().cause,
                SignInCause::InvalidClientMetadataUrl,
                "{bad}"
            );
        }
    }
}
