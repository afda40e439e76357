//! The sign-in a URL server asks for, found without signing in: doctor's bridge runs with a
//! token provider that hears the server's 401/403 challenge and fails it as a bridge without
//! sign-in does ([`NoToken`]); then the sign-in's own discovery
//! ([`SignIn::discover_metadata`]: RFC 9728, RFC 8414, or 2025-03-26 authorization) finds the
//! metadata, and the registration rule ([`registration::kind_for`]) says which registration
//! the bridge would use. No registration, no token request, no browser.

use serde_json::{Value, json};
use std::rc::Rc;
use std::sync::Arc;
use tokio::sync::mpsc;
use url::Url;

use crate::auth::errors::SignInCause;
use crate::auth::metadata::{ResourceMetadata, ServerMetadata};
use crate::auth::opener::EnvSecrets;
use crate::auth::registration::{self, ClientKind};
use crate::auth::signin::SignIn;
use crate::auth::store::{self, StoreChoice};
use crate::cli::sign_in::SignInArgs;
use crate::transport::http::TokenSource;
use crate::transport::token::{AccessToken, Challenge, ChallengeOutcome, NoToken, TokenProvider};
use futures_util::future::LocalBoxFuture;

/// Why the bridge does not sign in where a static `Authorization` header is given.
pub const STATIC_AUTHORIZATION: &str = "the server refuses the Authorization header given with --header or --header-env, and such a header turns the bridge's sign-in off";

/// Why the bridge would use no registration with the server (doctor's
/// `registration_refused`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NoRegistration {
    /// The discovery did not reach the registrations (`SignInFound::error` says why).
    #[error("the sign-in metadata was not found")]
    NotDiscovered,
    /// The registration rule refuses every registration offered: its cause (`name: message`).
    #[error("{}: {}", .0.name(), .0.message())]
    Refused(SignInCause),
    /// A static `Authorization` header turns the bridge's sign-in off.
    #[error("{}", STATIC_AUTHORIZATION)]
    StaticAuthorization,
}

/// A 401 or 403 challenge of the server, as the transport handed it over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Heard {
    /// 401 or 403.
    pub status: u16,
    /// Its `WWW-Authenticate` values.
    pub www_authenticate: Vec<String>,
}

/// The provider of doctor's first bridge: no token; each challenge is sent to doctor and
/// then fails as [`NoToken`] fails it.
struct Listening(mpsc::UnboundedSender<Heard>);

impl TokenProvider for Listening {
    fn access_token(&self) -> LocalBoxFuture<'static, Option<AccessToken>> {
        NoToken.access_token()
    }

    fn challenge(&self, challenge: Challenge) -> LocalBoxFuture<'static, ChallengeOutcome> {
        let _ = self.0.send(Heard {
            status: challenge.status,
            www_authenticate: challenge.www_authenticate.clone(),
        });
        NoToken.challenge(challenge)
    }
}

/// The token source of a bridge that signs in nowhere and tells doctor each challenge.
pub fn listening() -> (TokenSource, mpsc::UnboundedReceiver<Heard>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let source = TokenSource(Arc::new(move || Rc::new(Listening(tx.clone()))));
    (source, rx)
}

/// What doctor found of the server's sign-in.
#[derive(Clone, Debug)]
pub struct SignInFound {
    /// The status of the server's challenge (401 or 403).
    pub status: u16,
    /// The protected resource metadata (or the one 2025-03-26 authorization implies).
    pub resource: Option<ResourceMetadata>,
    /// The authorization server's metadata.
    pub server: Option<ServerMetadata>,
    /// The registrations the authorization server offers, in the order the bridge tries them:
    /// `pre-registration` (always, with `--client-id`), `client ID metadata document`,
    /// `dynamic registration`.
    pub offered: Vec<&'static str>,
    /// The registration the bridge would use with the options given, or why none.
    pub bridge_uses: Result<&'static str, NoRegistration>,
    /// Why the discovery failed (no metadata, metadata that fails its checks).
    pub error: Option<String>,
    /// With `--sign-in`: whether the second bridge, which signed in, got past `initialize`.
    pub signed_in: Option<bool>,
    /// The server publishes no sign-in metadata at all (no protected resource metadata, no
    /// authorization server metadata): `server` is the default endpoints of 2025-03-26
    /// authorization (§2.3.3), which the bridge would try, unchecked.
    pub nothing_published: bool,
}

/// The name of a registration path in the report.
pub fn kind_name(kind: ClientKind) -> &'static str {
    match kind {
        ClientKind::PreRegistered => "pre-registration",
        ClientKind::MetadataDocument => "client ID metadata document",
        ClientKind::Dynamic => "dynamic registration",
    }
}

/// Runs the sign-in's discovery for the challenge `heard` of the server at `url`, with the
/// sign-in options `args` (their registration options and `--ca-file`'s PEM).
pub async fn discover(
    url: &Url,
    args: &SignInArgs,
    secrets: &EnvSecrets,
    ca_pem: Option<Vec<u8>>,
    heard: &Heard,
) -> SignInFound {
    let mut found = SignInFound {
        status: heard.status,
        resource: None,
        server: None,
        offered: Vec::new(),
        bridge_uses: Err(NoRegistration::NotDiscovered),
        error: None,
        signed_in: None,
        nothing_published: false,
    };
    let mut cfg = args.config(url.clone(), secrets);
    cfg.extra_ca_pem = ca_pem;
    let registration_options = cfg.registration.clone();
    // Nothing is stored: the discovery reads no sign-in and writes none.
    let store = match store::open_at_first_use(StoreChoice::Memory, None, None) {
        Ok(s) => s,
        Err(e) => {
            found.error = Some(e.to_string());
            return found;
        }
    };
    let sign_in = match SignIn::new(cfg, store) {
        Ok(s) => s,
        Err(e) => {
            found.error = Some(e.to_string());
            return found;
        }
    };
    match sign_in.discover_metadata(&heard.www_authenticate).await {
        Ok((resource, server)) => {
            found.offered.push("pre-registration");
            if server.client_id_metadata_document_supported == Some(true) {
                found.offered.push("client ID metadata document");
            }
            if server.registration_endpoint.is_some() {
                found.offered.push("dynamic registration");
            }
            found.bridge_uses = registration::kind_for(&registration_options, &server)
                .map(kind_name)
                .map_err(NoRegistration::Refused);
            found.nothing_published =
                server == crate::auth::metadata::default_endpoints(&server.issuer);
            found.resource = Some(resource);
            found.server = Some(server);
        }
        Err(e) => found.error = Some(e.to_string()),
    }
    found
}

impl SignInFound {
    /// Whether the bridge can sign in there: the metadata was found and a registration is
    /// one the bridge uses.
    pub fn possible(&self) -> bool {
        self.error.is_none() && self.bridge_uses.is_ok()
    }

    /// The JSON of the report's `sign_in` member.
    pub fn to_json(&self) -> Value {
        let resource = self.resource.as_ref().map(|r| {
            json!({
                "resource": r.resource,
                "authorization_servers": r.authorization_servers,
                "scopes_supported": r.scopes_supported,
            })
        });
        let server = self.server.as_ref().map(|s| {
            json!({
                "issuer": s.issuer,
                "authorization_endpoint": s.authorization_endpoint,
                "token_endpoint": s.token_endpoint,
                "registration_endpoint": s.registration_endpoint,
                "client_id_metadata_document_supported": s.client_id_metadata_document_supported,
                "code_challenge_methods_supported": s.code_challenge_methods_supported,
                "scopes_supported": s.scopes_supported,
            })
        });
        let (uses, refused) = match &self.bridge_uses {
            Ok(kind) => (json!(kind), Value::Null),
            Err(why) if self.error.is_none() => (Value::Null, json!(why.to_string())),
            Err(_) => (Value::Null, Value::Null),
        };
        json!({
            "required": true,
            "status": self.status,
            "resource_metadata": resource,
            "authorization_server": server,
            "registration_offered": self.offered,
            "bridge_uses": uses,
            "registration_refused": refused,
            "error": self.error,
            "signed_in": self.signed_in,
            "nothing_published": self.nothing_published,
        })
    }
}
