//! The client of a sign-in, in the order of 2026-07-28 client registration: pre-registered
//! (`--client-id`, its `--client-issuer`, the secret only from `MCP_BRIDGE_CLIENT_SECRET`),
//! then a client ID metadata document (`--client-metadata-url`, when the authorization server
//! supports them), then dynamic client registration (RFC 7591, `application_type: native`,
//! deprecated but still used), kept per issuer and redirect URI in the token store. At an
//! authorization server that offers the device authorization grant (RFC 8628), a dynamic
//! registration asks for that grant type too.
//!
//! A dynamic registration is kept whole (RFC 7591 §3.2.1): `client_id`, `client_secret`,
//! `token_endpoint_auth_method` and `client_secret_expires_at`, in the token store with the
//! tokens. The bridge asks for `none` (a native app is a public client, RFC 8252 §8.4), but an
//! authorization server may give a secret and `client_secret_basic` or `client_secret_post`;
//! the token endpoint then gets that method. A response with a secret and no method means
//! `client_secret_basic`, RFC 7591 §2's default. A stored registration whose secret expires
//! before the sign-in can use it is replaced by a new one, and a registration the
//! authorization server no longer knows (`invalid_client`, RFC 6749 §5.2) is dropped
//! ([`forget`]).

use serde::Deserialize;
use serde_json::json;
use url::Url;

use super::errors::{SignInCause, SignInError};
use super::http::{self, AuthHttpError};
use super::metadata::ServerMetadata;
use super::store::records::now_unix_secs;
use super::store::records::{ClientAuth, ClientRecord, IndexEntry, TokenAuthMethod};
use super::store::{TokenStore, client_key, index};
use super::url_check::is_loopback;

/// The client name the authorization server shows on its consent page.
pub const CLIENT_NAME: &str = "mcp-bridge";
/// The grant type of the device authorization grant (RFC 8628 §3.4).
pub const DEVICE_CODE_GRANT_TYPE: &str = "urn:ietf:params:oauth:grant-type:device_code";

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

/// Which registration path gave a client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientKind {
    /// `--client-id`: nothing to register again.
    PreRegistered,
    /// `--client-metadata-url`: the authorization server fetches it again.
    MetadataDocument,
    /// Dynamic client registration, stored per issuer and redirect URI.
    Dynamic,
}

/// The client a sign-in uses.
#[derive(Clone)]
pub struct Client {
    pub client_id: String,
    /// Its authentication at the token endpoint (a secret only for a pre-registered client at
    /// its own issuer, or one a dynamic registration gave).
    pub auth: ClientAuth,
    pub kind: ClientKind,
    /// Which path gave it (for the debug line).
    pub path: &'static str,
}

/// The client of a pre-registered `--client-id` at `issuer`: its secret only when
/// `--client-issuer` names that issuer (HTTP Basic, RFC 6749 §2.3.1's method that every
/// authorization server supports).
pub fn pre_registered_auth(opts: &RegistrationOptions, issuer: &str) -> ClientAuth {
    let secret = opts
        .client_secret
        .clone()
        .filter(|_| opts.client_issuer.as_deref() == Some(issuer));
    ClientAuth {
        token_endpoint_auth_method: if secret.is_some() {
            TokenAuthMethod::ClientSecretBasic
        } else {
            TokenAuthMethod::None
        },
        client_secret: secret,
        client_secret_expires_at: 0,
    }
}

/// Which path `client_id` at `issuer` came from, by the options of this start.
pub fn kind_of(opts: &RegistrationOptions, client_id: &str) -> ClientKind {
    if opts.client_id.as_deref() == Some(client_id) {
        ClientKind::PreRegistered
    } else if opts.client_metadata_url.as_deref() == Some(client_id) {
        ClientKind::MetadataDocument
    } else {
        ClientKind::Dynamic
    }
}

/// Which registration a sign-in with `opts` uses at the authorization server of `server`,
/// the choice of [`client_for`] without its I/O (the order of 2026-07-28 client registration):
/// pre-registered with `--client-id` (its `--client-issuer`, when given, must be the issuer),
/// a client ID metadata document with `--client-metadata-url` when the server supports them,
/// else dynamic registration when the server has a registration endpoint. A stored dynamic
/// registration is still a dynamic one. Errors: `issuer_not_registered`,
/// `registration_unavailable`.
pub fn kind_for(
    opts: &RegistrationOptions,
    server: &ServerMetadata,
) -> Result<ClientKind, SignInCause> {
    if opts.client_id.is_some() {
        return match &opts.client_issuer {
            Some(iss) if iss != &server.issuer => Err(SignInCause::IssuerNotRegistered),
            _ => Ok(ClientKind::PreRegistered),
        };
    }
    if opts.client_metadata_url.is_some()
        && server.client_id_metadata_document_supported == Some(true)
    {
        return Ok(ClientKind::MetadataDocument);
    }
    if server.registration_endpoint.is_some() {
        return Ok(ClientKind::Dynamic);
    }
    Err(SignInCause::RegistrationUnavailable)
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

/// The registration response (RFC 7591 §3.2.1): the members the token requests need.
#[derive(Deserialize)]
struct Registered {
    client_id: String,
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
    /// Seconds since the epoch, 0 for never; a negative time is in the past.
    #[serde(default)]
    client_secret_expires_at: Option<i64>,
}

impl Registered {
    /// The authentication it names. Errors: a method the bridge does not speak, or a
    /// secret method without a secret (`registration_failed`).
    fn auth(&self, redirect_uri: &str) -> Result<ClientAuth, SignInError> {
        let bad = |why: String| {
            SignInError::new(
                SignInCause::RegistrationFailed,
                format!("{why}; redirect URI {redirect_uri}"),
            )
        };
        let method = match self.token_endpoint_auth_method.as_deref() {
            Some(name) => TokenAuthMethod::from_name(name).ok_or_else(|| {
                let shown: String = name
                    .chars()
                    .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .take(64)
                    .collect();
                bad(format!(
                    "the registration names token_endpoint_auth_method {shown}, which the bridge does not support"
                ))
            })?,
            None if self.client_secret.is_some() => TokenAuthMethod::ClientSecretBasic,
            None => TokenAuthMethod::None,
        };
        if method != TokenAuthMethod::None && self.client_secret.is_none() {
            return Err(bad(format!(
                "the registration names {} without a client_secret",
                method.name()
            )));
        }
        let expires_at = match self.client_secret_expires_at {
            None | Some(0) => 0,
            // In the past: any time before now serves.
            Some(t) if t < 0 => 1,
            Some(t) => t.unsigned_abs(),
        };
        Ok(ClientAuth {
            token_endpoint_auth_method: method,
            client_secret: self.client_secret.clone(),
            client_secret_expires_at: expires_at,
        })
    }
}

/// The client for `server` (whose `issuer` was checked) and `redirect_uri`, in the order of
/// the module doc. A dynamic registration is stored per issuer and redirect URI and reused
/// while its secret (if any) stays valid for `valid_for_secs` more (the time the sign-in may
/// take before its code exchange); otherwise the bridge registers again.
/// Errors: `issuer_not_registered`, `invalid_client_metadata_url`, `registration_failed`
/// (the HTTP status, or a method the bridge does not speak), `registration_unavailable`.
pub async fn client_for(
    opts: &RegistrationOptions,
    server: &ServerMetadata,
    redirect_uri: &str,
    store: &TokenStore,
    http: &reqwest::Client,
    valid_for_secs: u64,
) -> Result<Client, SignInError> {
    if opts.client_id.is_none()
        && let Some(url) = &opts.client_metadata_url
    {
        check_metadata_url(url)?;
    }
    match (
        kind_for(opts, server),
        &opts.client_id,
        &opts.client_metadata_url,
    ) {
        (Err(SignInCause::IssuerNotRegistered), _, _) => {
            return Err(SignInError::new(SignInCause::IssuerNotRegistered, ""));
        }
        (Err(cause), _, _) => {
            return Err(SignInError::new(
                cause,
                format!("redirect URI {redirect_uri}"),
            ));
        }
        (Ok(ClientKind::PreRegistered), Some(id), _) => {
            // The secret only goes to the issuer it was named for.
            return Ok(Client {
                client_id: id.clone(),
                auth: pre_registered_auth(opts, &server.issuer),
                kind: ClientKind::PreRegistered,
                path: "pre-registered",
            });
        }
        (Ok(ClientKind::MetadataDocument), _, Some(url)) => {
            return Ok(Client {
                client_id: url.clone(),
                auth: ClientAuth::default(),
                kind: ClientKind::MetadataDocument,
                path: "client ID metadata document",
            });
        }
        _ => {}
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
        if !rec
            .auth
            .secret_expires_within(now_unix_secs(), valid_for_secs)
        {
            return Ok(Client {
                client_id: rec.client_id,
                auth: rec.auth,
                kind: ClientKind::Dynamic,
                path: "dynamic registration (stored)",
            });
        }
        tracing::info!(target: "sign-in", "the client secret of the stored registration expires before the sign-in can use it: registering again");
    }
    // A server that offers the device authorization grant (RFC 8628) gets a client that may
    // use it too: the sign-in without a browser, and the one after a browser that did not start.
    let mut grant_types = vec!["authorization_code", "refresh_token"];
    if server.device_authorization_endpoint.is_some() {
        grant_types.push(DEVICE_CODE_GRANT_TYPE);
    }
    let body = json!({
        "client_name": CLIENT_NAME,
        "redirect_uris": [redirect_uri],
        "grant_types": grant_types,
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
    let auth = reg.auth(redirect_uri)?;
    let rec = ClientRecord {
        issuer: server.issuer.clone(),
        client_id: reg.client_id.clone(),
        redirect_uri: redirect_uri.to_string(),
        auth: auth.clone(),
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
        auth,
        kind: ClientKind::Dynamic,
        path: "dynamic registration",
    })
}

/// Drops the stored dynamic registration of `issuer` and `redirect_uri` when it is still the
/// one of `client_id` (a newer one, made meanwhile by another bridge, stays), and its line
/// in the index: the authorization server answered `invalid_client` (RFC 6749 §5.2), so the
/// next sign-in registers again. Gives whether it dropped one.
pub async fn forget(store: &TokenStore, issuer: &str, redirect_uri: &str, client_id: &str) -> bool {
    let key = client_key(issuer, redirect_uri);
    let (k, id) = (key.clone(), client_id.to_string());
    let dropped = store
        .run(move |s| {
            let stored = s.get(&k).ok().flatten();
            match stored.and_then(|b| serde_json::from_slice::<ClientRecord>(&b).ok()) {
                Some(rec) if rec.client_id == id => s.delete(&k).map_err(|e| e.to_string()),
                _ => Ok(false),
            }
        })
        .await;
    match dropped {
        Ok(true) => {
            if let Err(e) = index::update(store, move |v| v.retain(|e| e.key != key)).await {
                tracing::warn!(target: "sign-in", "the index of sign-ins is not updated: {e}");
            }
            true
        }
        Ok(false) => false,
        Err(e) => {
            tracing::warn!(target: "sign-in", "the stored client registration is not deleted: {e}");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registration_a_sign_in_uses_follows_the_order_of_client_registration() {
        let server = |endpoint: bool, cimd: Option<bool>| {
            let mut m = super::super::metadata::default_endpoints("https://as.example");
            m.registration_endpoint = endpoint.then(|| "https://as.example/register".into());
            m.client_id_metadata_document_supported = cimd;
            m
        };
        let opts =
            |id: Option<&str>, issuer: Option<&str>, doc: Option<&str>| RegistrationOptions {
                client_id: id.map(Into::into),
                client_issuer: issuer.map(Into::into),
                client_secret: None,
                client_metadata_url: doc.map(Into::into),
            };
        let doc = Some("https://app.example/client.json");
        use ClientKind::*;
        let table = [
            (
                opts(Some("c"), None, doc),
                server(true, Some(true)),
                Ok(PreRegistered),
            ),
            (
                opts(Some("c"), Some("https://as.example"), None),
                server(false, None),
                Ok(PreRegistered),
            ),
            (
                opts(Some("c"), Some("https://other"), None),
                server(true, None),
                Err(SignInCause::IssuerNotRegistered),
            ),
            (
                opts(None, None, doc),
                server(true, Some(true)),
                Ok(MetadataDocument),
            ),
            (
                opts(None, None, doc),
                server(true, Some(false)),
                Ok(Dynamic),
            ),
            (
                opts(None, None, None),
                server(true, Some(true)),
                Ok(Dynamic),
            ),
            (
                opts(None, None, doc),
                server(false, None),
                Err(SignInCause::RegistrationUnavailable),
            ),
            (
                opts(None, None, None),
                server(false, Some(true)),
                Err(SignInCause::RegistrationUnavailable),
            ),
        ];
        for (i, (o, m, want)) in table.into_iter().enumerate() {
            assert_eq!(kind_for(&o, &m), want, "row {i}");
        }
    }

    fn registered(v: serde_json::Value) -> Result<ClientAuth, SignInCause> {
        serde_json::from_value::<Registered>(v)
            .unwrap()
            .auth("http://127.0.0.1:1/callback")
            .map_err(|e| e.cause)
    }

    #[test]
    fn a_registration_response_names_the_token_endpoint_authentication() {
        let auth = |m: TokenAuthMethod, s: Option<&str>, t: u64| ClientAuth {
            token_endpoint_auth_method: m,
            client_secret: s.map(str::to_string),
            client_secret_expires_at: t,
        };
        use TokenAuthMethod::*;
        assert_eq!(
            registered(json!({"client_id": "c"})),
            Ok(auth(None, Option::None, 0))
        );
        assert_eq!(
            registered(json!({"client_id": "c", "client_secret": "s"})),
            Ok(auth(ClientSecretBasic, Some("s"), 0))
        );
        assert_eq!(
            registered(json!({"client_id": "c", "client_secret": "s",
                "token_endpoint_auth_method": "client_secret_post", "client_secret_expires_at": 5})),
            Ok(auth(ClientSecretPost, Some("s"), 5))
        );
        assert_eq!(
            registered(json!({"client_id": "c", "client_secret": "s",
                "token_endpoint_auth_method": "none", "client_secret_expires_at": -5})),
            Ok(auth(None, Some("s"), 1))
        );
        assert_eq!(
            registered(
                json!({"client_id": "c", "token_endpoint_auth_method": "client_secret_basic"})
            ),
            Err(SignInCause::RegistrationFailed)
        );
        assert_eq!(
            registered(json!({"client_id": "c", "client_secret": "s",
                "token_endpoint_auth_method": "private_key_jwt"})),
            Err(SignInCause::RegistrationFailed)
        );
    }

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
