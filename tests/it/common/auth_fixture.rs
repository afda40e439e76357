//! A fixture authorization server and protected resource on loopback (axum), for the sign-in
//! tests: RFC 9728 resource metadata, RFC 8414 metadata, `/authorize` (PKCE S256 and
//! `resource` required, redirects with `code`, `state` and `iss`), `/token` (code, refresh,
//! client credentials and device code grants; refresh tokens rotate and are counted), the
//! device authorization endpoint `/device_authorization` and its verification page `/device`
//! (RFC 8628: a visit approves or denies the code, each poll's time is recorded), `/register` (RFC 7591,
//! requires `application_type: native`), and `/mcp`, which wants a valid bearer token and the
//! scopes of `Behaviour::required_scopes`. The token endpoint authenticates every client as its
//! registration named (RFC 6749 §2.3.1: `none`, `client_secret_basic`, `client_secret_post`)
//! and answers `invalid_client` (401, RFC 6749 §5.2) to an unknown client, a wrong method or
//! an expired secret. Knobs in [`Behaviour`] make it misbehave (or play a 2025-03-26 server
//! without resource metadata, or without any metadata); [`Fixture::forget_clients`] is a
//! restart of a server that keeps its clients in memory.

use axum::extract::{Form, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

// The device authorization endpoint, the verification page and the polls of the device code
// grant (RFC 8628).
#[path = "auth_device_fixture.rs"]
mod device;
use device::{DeviceGrant, device_authorization, device_page, device_poll};

use mcp_bridge::transport::token::{
    Challenge, ChallengeOutcome, MAX_CHALLENGES_PER_REQUEST, TokenProvider,
};

/// How the fixture behaves (changed by tests at any time).
#[derive(Clone, Debug)]
pub struct Behaviour {
    pub iss_supported: bool,
    /// The `iss` the redirect carries (`None`: none).
    pub redirect_iss: Option<String>,
    /// Replace the state of the redirect with this one.
    pub redirect_state: Option<String>,
    pub pkce_methods: Option<Vec<String>>,
    pub cimd_supported: bool,
    pub registration: bool,
    pub expires_in_secs: u64,
    pub required_scopes: Vec<String>,
    /// The only client ID `/authorize` accepts besides registered ones.
    pub known_client: Option<(String, Option<String>)>,
    /// `/authorize` answers 400 without a redirect.
    pub refuse_authorize: bool,
    /// Appended to the `authorization_endpoint` of the metadata (e.g. a `redirect_uri` of
    /// its own).
    pub authorize_query: Option<String>,
    /// `/authorize` redirects to this path instead of the `redirect_uri`'s (same host and
    /// port).
    pub redirect_path: Option<String>,
    /// The `token_endpoint_auth_method` a dynamic registration gets, with a `client_secret`
    /// (`client_secret_basic`, `client_secret_post`); `None`: `none`, no secret.
    pub registered_auth: Option<String>,
    /// The registered secret's `client_secret_expires_at`, seconds from the registration
    /// (negative: in the past); `None`: 0, never.
    pub secret_expires_in_secs: Option<i64>,
    /// Token responses carry a refresh token.
    pub issue_refresh_tokens: bool,
    /// Every code grant first forgets every client (an authorization server restarted
    /// between the redirect and the code exchange, each time).
    pub forget_clients_at_each_code_grant: bool,
    /// The resource metadata names the origin as its `resource` (metadata at the root, as
    /// RFC 9728 §3.3 allows), and `/authorize` and `/token` want exactly that indicator.
    pub resource_is_origin: bool,
    /// The resource metadata route answers this status and no document (`None`: the
    /// document); a 2025-03-26 server has none (404).
    pub prm_status: Option<u16>,
    /// The 401 challenge names the resource metadata (`resource_metadata`).
    pub challenge_names_prm: bool,
    /// The authorization server metadata answers this status and no document (`None`: the
    /// document); a 2025-03-26 server without it uses the default endpoints.
    pub asm_status: Option<u16>,
    /// The metadata's `token_endpoint_auth_methods_supported` (`None`: absent).
    pub token_auth_methods: Option<Vec<String>>,
    /// The metadata names `device_authorization_endpoint` (RFC 8628 §4).
    pub device_authorization: bool,
    /// The `interval` of the device authorization response (`None`: absent, 5 s).
    pub device_interval_secs: Option<u64>,
    /// The `expires_in` of the device authorization response.
    pub device_expires_in_secs: u64,
    /// How long the server really keeps a device code pending (it may end it sooner than
    /// it said): then its polls get `expired_token`.
    pub device_lifetime_secs: u64,
    /// The response carries `verification_uri_complete`.
    pub device_complete_uri: bool,
    /// The polls (counted from 1 over the fixture's life) answered `slow_down`.
    pub device_slow_down_polls: Vec<usize>,
    /// The user acts on every pending code at this poll (counted from 1), before it is
    /// answered: approves it, or denies it with [`Behaviour::device_user_denies`].
    pub device_user_acts_at_poll: Option<usize>,
    /// A user's action (at `/device`, or at [`Behaviour::device_user_acts_at_poll`]) denies.
    pub device_user_denies: bool,
}

#[derive(Default)]
pub struct Counters {
    pub code_grants: AtomicUsize,
    pub refresh_grants: AtomicUsize,
    pub refused_refreshes: AtomicUsize,
    pub registrations: AtomicUsize,
    pub authorizes: AtomicUsize,
    /// Revocations of every refresh token ([`Fixture::revoke_refresh_tokens_after`]).
    pub revocations: AtomicUsize,
    /// `/mcp` requests answered 401, and those passed on with a valid token.
    pub mcp_unauthorized: AtomicUsize,
    pub mcp_authorized: AtomicUsize,
    /// Token requests answered `invalid_client`.
    pub invalid_clients: AtomicUsize,
    /// Token requests that presented a registered secret after its expiry.
    pub expired_secret_uses: AtomicUsize,
    /// The code grants still to come that forget every client first.
    pub forget_at_code_grants: AtomicUsize,
    /// Token requests with `grant_type=client_credentials` that got a token.
    pub client_credentials_grants: AtomicUsize,
    /// Device authorization requests that got a code.
    pub device_authorizations: AtomicUsize,
    /// Device code polls answered `authorization_pending`, `slow_down`, and with a token.
    pub device_pending: AtomicUsize,
    pub device_slow_downs: AtomicUsize,
    pub device_grants: AtomicUsize,
}

/// A registered client (RFC 7591 §3.2.1).
#[derive(Clone, Debug)]
pub struct Registered {
    pub method: String,
    pub secret: Option<String>,
    /// 0: never.
    pub expires_at: u64,
}

struct Code {
    challenge: String,
    client_id: String,
    scopes: String,
}

#[derive(Default)]
struct Grants {
    codes: HashMap<String, Code>,
    /// access token -> (scopes, expiry unix secs)
    access: HashMap<String, (String, u64)>,
    /// refresh token -> (scopes, client_id)
    refresh: HashMap<String, (String, String)>,
    clients: HashMap<String, Registered>,
    /// The clients registered with the device code grant type.
    device_clients: std::collections::HashSet<String>,
    /// device code -> its grant
    devices: HashMap<String, DeviceGrant>,
    next: u64,
}

pub struct Fixture {
    pub base: String,
    pub behaviour: Mutex<Behaviour>,
    pub counters: Counters,
    grants: Mutex<Grants>,
    /// Every secret the fixture handed out (codes, tokens), for the log scan.
    pub secrets: Mutex<Vec<String>>,
    /// The `application_type` of each registration.
    pub registered_types: Mutex<Vec<String>>,
    /// The `client_id` of each `/authorize`.
    pub authorize_clients: Mutex<Vec<String>>,
    /// The whole query of each `/authorize`.
    pub authorize_queries: Mutex<Vec<HashMap<String, String>>>,
    /// The `resource` of each `/authorize` and token request.
    pub resources: Mutex<Vec<String>>,
    /// The authenticated client of each client credentials grant.
    pub grant_clients: Mutex<Vec<String>>,
    /// The `grant_types` of each registration.
    pub registered_grant_types: Mutex<Vec<Value>>,
    /// The form of each device authorization request.
    pub device_requests: Mutex<Vec<HashMap<String, String>>>,
    /// When each device authorization request, and each poll of a device code, arrived.
    pub device_authorized_at: Mutex<Vec<std::time::Instant>>,
    pub device_polls: Mutex<Vec<std::time::Instant>>,
    /// The MCP server behind `/mcp`: an authorized request is passed on to it (its verb, the
    /// body and the headers except `Authorization`), its answer streamed back (the status,
    /// `Content-Type` and `Mcp-Session-Id`).
    pub upstream: Mutex<Option<String>>,
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

impl Fixture {
    pub fn issuer(&self) -> String {
        self.base.clone()
    }
    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.base)
    }
    /// The `resource` of the resource metadata, the only indicator the fixture accepts.
    pub fn resource(&self) -> String {
        if self.behaviour.lock().unwrap().resource_is_origin {
            self.base.clone()
        } else {
            self.mcp_url()
        }
    }
    fn mint(&self, prefix: &str) -> String {
        let mut g = self.grants.lock().unwrap();
        g.next += 1;
        let v = format!(
            "{prefix}-{}-{:x}",
            g.next,
            Sha256::digest(format!("{}{}", g.next, now()))
                .iter()
                .fold(0u64, |a, b| a.wrapping_mul(31).wrapping_add(*b as u64))
        );
        self.secrets.lock().unwrap().push(v.clone());
        v
    }
    /// Expires every access token now (the next request gets 401).
    pub fn expire_all(&self) {
        for v in self.grants.lock().unwrap().access.values_mut() {
            v.1 = 0;
        }
    }
    /// Revokes every refresh token.
    pub fn revoke_refresh_tokens(&self) {
        self.grants.lock().unwrap().refresh.clear();
    }

    /// A restart of an authorization server that keeps everything in memory: every client,
    /// code and token is forgotten.
    pub fn forget_clients(&self) {
        let mut g = self.grants.lock().unwrap();
        g.clients.clear();
        g.codes.clear();
        g.access.clear();
        g.refresh.clear();
    }

    /// The registered clients.
    pub fn clients(&self) -> HashMap<String, Registered> {
        self.grants.lock().unwrap().clients.clone()
    }

    /// Revokes every refresh token once, `after` from now (a thread of its own), as an
    /// authorization server that forgets a grant mid-session (the live sign-in script).
    #[allow(dead_code)] // for examples/signin-fixture.rs (scripts/live-signin.py) alone
    pub fn revoke_refresh_tokens_after(self: &Arc<Self>, after: std::time::Duration) {
        let fx = self.clone();
        std::thread::spawn(move || {
            std::thread::sleep(after);
            fx.revoke_refresh_tokens();
            fx.counters.revocations.fetch_add(1, Ordering::SeqCst);
        });
    }

    /// The counters as JSON (the `/fixture/stats` route).
    pub fn stats(&self) -> Value {
        let c = &self.counters;
        json!({
            "authorizes": c.authorizes.load(Ordering::SeqCst),
            "code_grants": c.code_grants.load(Ordering::SeqCst),
            "refresh_grants": c.refresh_grants.load(Ordering::SeqCst),
            "refused_refreshes": c.refused_refreshes.load(Ordering::SeqCst),
            "registrations": c.registrations.load(Ordering::SeqCst),
            "revocations": c.revocations.load(Ordering::SeqCst),
            "mcp_unauthorized": c.mcp_unauthorized.load(Ordering::SeqCst),
            "mcp_authorized": c.mcp_authorized.load(Ordering::SeqCst),
            "invalid_clients": c.invalid_clients.load(Ordering::SeqCst),
            "expired_secret_uses": c.expired_secret_uses.load(Ordering::SeqCst),
            "client_credentials_grants": c.client_credentials_grants.load(Ordering::SeqCst),
        })
    }
}

/// Starts the fixture on 127.0.0.1 (its own thread and runtime).
pub fn start(b: Behaviour) -> Arc<Fixture> {
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    std_listener.set_nonblocking(true).unwrap();
    let base = format!("http://{}", std_listener.local_addr().unwrap());
    let fx = Arc::new(Fixture {
        base,
        behaviour: Mutex::new(b),
        counters: Counters::default(),
        grants: Mutex::new(Grants::default()),
        secrets: Mutex::new(Vec::new()),
        registered_types: Mutex::new(Vec::new()),
        authorize_clients: Mutex::new(Vec::new()),
        authorize_queries: Mutex::new(Vec::new()),
        resources: Mutex::new(Vec::new()),
        grant_clients: Mutex::new(Vec::new()),
        registered_grant_types: Mutex::new(Vec::new()),
        device_requests: Mutex::new(Vec::new()),
        device_authorized_at: Mutex::new(Vec::new()),
        device_polls: Mutex::new(Vec::new()),
        upstream: Mutex::new(None),
    });
    let app = Router::new()
        .route("/.well-known/oauth-protected-resource/mcp", get(prm))
        .route("/.well-known/oauth-authorization-server", get(asm))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .route("/register", post(register))
        .route("/device_authorization", post(device_authorization))
        .route("/device", get(device_page))
        .route("/mcp", axum::routing::any(mcp))
        .route("/fixture/stats", get(stats))
        .with_state(fx.clone());
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let l = tokio::net::TcpListener::from_std(std_listener).unwrap();
            axum::serve(l, app).await.unwrap();
        });
    });
    fx
}

pub fn default_behaviour() -> Behaviour {
    Behaviour {
        iss_supported: true,
        redirect_iss: Some(String::new()), // filled with the issuer at start by `with_issuer`
        redirect_state: None,
        pkce_methods: Some(vec!["S256".into()]),
        cimd_supported: false,
        registration: true,
        expires_in_secs: 3600,
        required_scopes: vec!["read".into()],
        known_client: None,
        refuse_authorize: false,
        authorize_query: None,
        redirect_path: None,
        registered_auth: None,
        secret_expires_in_secs: None,
        issue_refresh_tokens: true,
        forget_clients_at_each_code_grant: false,
        resource_is_origin: false,
        prm_status: None,
        challenge_names_prm: true,
        asm_status: None,
        token_auth_methods: None,
        device_authorization: false,
        device_interval_secs: Some(1),
        device_expires_in_secs: 600,
        device_lifetime_secs: 600,
        device_complete_uri: true,
        device_slow_down_polls: Vec::new(),
        device_user_acts_at_poll: None,
        device_user_denies: false,
    }
}

async fn stats(State(fx): State<Arc<Fixture>>) -> Json<Value> {
    Json(fx.stats())
}

/// The status of a document route told to answer `status` instead.
fn no_document(status: u16) -> Response {
    StatusCode::from_u16(status)
        .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
        .into_response()
}

async fn prm(State(fx): State<Arc<Fixture>>) -> Response {
    if let Some(status) = fx.behaviour.lock().unwrap().prm_status {
        return no_document(status);
    }
    Json(json!({
        "resource": fx.resource(),
        "authorization_servers": [fx.issuer()],
        "scopes_supported": ["read"],
    }))
    .into_response()
}

async fn asm(State(fx): State<Arc<Fixture>>) -> Response {
    let b = fx.behaviour.lock().unwrap().clone();
    if let Some(status) = b.asm_status {
        return no_document(status);
    }
    let mut m = json!({
        "issuer": fx.issuer(),
        "authorization_endpoint": format!("{}/authorize{}", fx.base, b.authorize_query.as_deref().unwrap_or("")),
        "token_endpoint": format!("{}/token", fx.base),
        "authorization_response_iss_parameter_supported": b.iss_supported,
        "client_id_metadata_document_supported": b.cimd_supported,
        "scopes_supported": ["read", "write", "offline_access"],
    });
    if let Some(p) = b.pkce_methods {
        m["code_challenge_methods_supported"] = json!(p);
    }
    if let Some(t) = b.token_auth_methods {
        m["token_endpoint_auth_methods_supported"] = json!(t);
    }
    if b.registration {
        m["registration_endpoint"] = json!(format!("{}/register", fx.base));
    }
    if b.device_authorization {
        m["device_authorization_endpoint"] = json!(format!("{}/device_authorization", fx.base));
    }
    Json(m).into_response()
}

async fn authorize(
    State(fx): State<Arc<Fixture>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    fx.counters.authorizes.fetch_add(1, Ordering::SeqCst);
    let b = fx.behaviour.lock().unwrap().clone();
    let client_id = q.get("client_id").cloned().unwrap_or_default();
    fx.authorize_clients.lock().unwrap().push(client_id.clone());
    fx.authorize_queries.lock().unwrap().push(q.clone());
    fx.resources
        .lock()
        .unwrap()
        .push(q.get("resource").cloned().unwrap_or_default());
    let known = fx.grants.lock().unwrap().clients.contains_key(&client_id)
        || b.known_client
            .as_ref()
            .is_some_and(|(c, _)| c == &client_id)
        || (b.cimd_supported && client_id.starts_with("http"));
    if b.refuse_authorize
        || !known
        || q.get("response_type").map(String::as_str) != Some("code")
        || q.get("code_challenge_method").map(String::as_str) != Some("S256")
        || q.get("resource").map(String::as_str) != Some(fx.resource().as_str())
    {
        return (StatusCode::BAD_REQUEST, "refused").into_response();
    }
    let code = fx.mint("code");
    fx.grants.lock().unwrap().codes.insert(
        code.clone(),
        Code {
            challenge: q.get("code_challenge").cloned().unwrap_or_default(),
            client_id,
            scopes: q.get("scope").cloned().unwrap_or_default(),
        },
    );
    let mut u = url::Url::parse(q.get("redirect_uri").map(String::as_str).unwrap_or("")).unwrap();
    if let Some(path) = &b.redirect_path {
        u.set_path(path);
    }
    {
        let mut qp = u.query_pairs_mut();
        qp.append_pair("code", &code);
        let state = b
            .redirect_state
            .clone()
            .unwrap_or_else(|| q.get("state").cloned().unwrap_or_default());
        qp.append_pair("state", &state);
        match &b.redirect_iss {
            Some(i) if i.is_empty() => {
                qp.append_pair("iss", &fx.issuer());
            }
            Some(i) => {
                qp.append_pair("iss", i);
            }
            None => {}
        }
    }
    (StatusCode::FOUND, [(header::LOCATION, u.to_string())]).into_response()
}

/// A token response with an access token for `scopes` and no refresh token.
fn issue_access(fx: &Fixture, scopes: &str) -> Value {
    let expires_in = fx.behaviour.lock().unwrap().expires_in_secs;
    let at = fx.mint("access");
    fx.grants
        .lock()
        .unwrap()
        .access
        .insert(at.clone(), (scopes.to_string(), now() + expires_in));
    json!({"access_token": at, "token_type": "Bearer", "expires_in": expires_in, "scope": scopes})
}

fn issue(fx: &Fixture, scopes: &str, client_id: &str) -> Value {
    let mut v = issue_access(fx, scopes);
    if fx.behaviour.lock().unwrap().issue_refresh_tokens {
        let rt = fx.mint("refresh");
        fx.grants
            .lock()
            .unwrap()
            .refresh
            .insert(rt.clone(), (scopes.to_string(), client_id.to_string()));
        v["refresh_token"] = json!(rt);
    }
    v
}

fn token_error(e: &str) -> Response {
    (StatusCode::BAD_REQUEST, Json(json!({"error": e}))).into_response()
}

/// RFC 6749 §5.2: `invalid_client`, 401 (with a `Basic` challenge when the client tried
/// HTTP Basic).
fn invalid_client(fx: &Fixture, tried_basic: bool) -> Response {
    fx.counters.invalid_clients.fetch_add(1, Ordering::SeqCst);
    let mut r = (
        StatusCode::UNAUTHORIZED,
        Json(json!({"error": "invalid_client"})),
    )
        .into_response();
    if tried_basic {
        r.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            axum::http::HeaderValue::from_static("Basic realm=\"fixture\""),
        );
    }
    r
}

/// The `client_id` and `client_secret` of an `Authorization: Basic` header, each
/// form-urldecoded (RFC 6749 §2.3.1).
fn basic_credentials(headers: &HeaderMap) -> Option<(String, String)> {
    use base64::Engine;
    let v = headers.get("authorization")?.to_str().ok()?;
    let b64 = v.strip_prefix("Basic ")?;
    let raw = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
    let raw = String::from_utf8(raw).ok()?;
    let (id, secret) = raw.split_once(':')?;
    let decode = |s: &str| -> String {
        url::form_urlencoded::parse(format!("x={s}").as_bytes())
            .next()
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default()
    };
    Some((decode(id), decode(secret)))
}

/// Authenticates the client of a token request as its registration names; gives its
/// `client_id`, or the `invalid_client` response.
fn authenticate(
    fx: &Fixture,
    headers: &HeaderMap,
    f: &HashMap<String, String>,
) -> Result<String, Box<Response>> {
    let basic = basic_credentials(headers);
    let tried_basic = headers.contains_key("authorization");
    let body_id = f.get("client_id").cloned();
    let body_secret = f.get("client_secret").cloned();
    let Some(id) = basic.as_ref().map(|b| b.0.clone()).or(body_id.clone()) else {
        return Err(Box::new(invalid_client(fx, tried_basic)));
    };
    let b = fx.behaviour.lock().unwrap().clone();
    let registered = fx.grants.lock().unwrap().clients.get(&id).cloned();
    let client = match registered {
        Some(r) => r,
        None => match &b.known_client {
            Some((c, secret)) if c == &id => Registered {
                method: if secret.is_some() {
                    "client_secret_basic".into()
                } else {
                    "none".into()
                },
                secret: secret.clone(),
                expires_at: 0,
            },
            _ if b.cimd_supported && id.starts_with("http") => Registered {
                method: "none".into(),
                secret: None,
                expires_at: 0,
            },
            _ => return Err(Box::new(invalid_client(fx, tried_basic))),
        },
    };
    let ok = match client.method.as_str() {
        "none" => !tried_basic && body_secret.is_none() && body_id.as_deref() == Some(&id),
        "client_secret_basic" => {
            basic.as_ref().map(|b| &b.1) == client.secret.as_ref() && body_secret.is_none()
        }
        "client_secret_post" => {
            !tried_basic
                && body_id.as_deref() == Some(&id)
                && body_secret.is_some()
                && body_secret == client.secret
        }
        _ => false,
    };
    if !ok {
        return Err(Box::new(invalid_client(fx, tried_basic)));
    }
    if client.expires_at != 0 && client.expires_at <= now() {
        fx.counters
            .expired_secret_uses
            .fetch_add(1, Ordering::SeqCst);
        return Err(Box::new(invalid_client(fx, tried_basic)));
    }
    Ok(id)
}

async fn token(
    State(fx): State<Arc<Fixture>>,
    headers: HeaderMap,
    Form(f): Form<HashMap<String, String>>,
) -> Response {
    fx.resources
        .lock()
        .unwrap()
        .push(f.get("resource").cloned().unwrap_or_default());
    if f.get("resource").map(String::as_str) != Some(fx.resource().as_str()) {
        return token_error("invalid_target");
    }
    match f.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            let forget = fx
                .behaviour
                .lock()
                .unwrap()
                .forget_clients_at_each_code_grant
                || fx
                    .counters
                    .forget_at_code_grants
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                    .is_ok();
            if forget {
                fx.grants.lock().unwrap().clients.clear();
            }
            let client_id = match authenticate(&fx, &headers, &f) {
                Ok(id) => id,
                Err(r) => return *r,
            };
            let code = f.get("code").cloned().unwrap_or_default();
            let Some(c) = fx.grants.lock().unwrap().codes.remove(&code) else {
                return token_error("invalid_grant");
            };
            let verifier = f.get("code_verifier").cloned().unwrap_or_default();
            let computed = base64_url(&Sha256::digest(verifier.as_bytes()));
            if computed != c.challenge || c.client_id != client_id {
                return token_error("invalid_grant");
            }
            fx.counters.code_grants.fetch_add(1, Ordering::SeqCst);
            Json(issue(&fx, &c.scopes, &client_id)).into_response()
        }
        Some("refresh_token") => {
            let client_id = match authenticate(&fx, &headers, &f) {
                Ok(id) => id,
                Err(r) => return *r,
            };
            let rt = f.get("refresh_token").cloned().unwrap_or_default();
            // Rotation: a refresh token works once, for the client it was issued to.
            let grant = fx.grants.lock().unwrap().refresh.remove(&rt);
            let Some((scopes, _)) = grant.filter(|(_, c)| c == &client_id) else {
                fx.counters.refused_refreshes.fetch_add(1, Ordering::SeqCst);
                return token_error("invalid_grant");
            };
            fx.counters.refresh_grants.fetch_add(1, Ordering::SeqCst);
            Json(issue(&fx, &scopes, &client_id)).into_response()
        }
        Some("client_credentials") => {
            let client_id = match authenticate(&fx, &headers, &f) {
                Ok(id) => id,
                Err(r) => return *r,
            };
            fx.counters
                .client_credentials_grants
                .fetch_add(1, Ordering::SeqCst);
            fx.grant_clients.lock().unwrap().push(client_id);
            // No refresh token (RFC 6749 §4.4.3): the client asks again with its credentials.
            let scopes = f.get("scope").cloned().unwrap_or_default();
            Json(issue_access(&fx, &scopes)).into_response()
        }
        Some("urn:ietf:params:oauth:grant-type:device_code") => {
            let client_id = match authenticate(&fx, &headers, &f) {
                Ok(id) => id,
                Err(r) => return *r,
            };
            device_poll(&fx, &client_id, f.get("device_code").map(String::as_str))
        }
        _ => token_error("unsupported_grant_type"),
    }
}

async fn register(State(fx): State<Arc<Fixture>>, Json(body): Json<Value>) -> Response {
    fx.counters.registrations.fetch_add(1, Ordering::SeqCst);
    let t = body["application_type"].as_str().unwrap_or("").to_string();
    fx.registered_types.lock().unwrap().push(t.clone());
    if t != "native" {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "invalid_client_metadata"})),
        )
            .into_response();
    }
    let id = fx.mint("client");
    let b = fx.behaviour.lock().unwrap().clone();
    fx.registered_grant_types
        .lock()
        .unwrap()
        .push(body["grant_types"].clone());
    if body["grant_types"].as_array().is_some_and(|t| {
        t.iter()
            .any(|g| g == "urn:ietf:params:oauth:grant-type:device_code")
    }) {
        fx.grants.lock().unwrap().device_clients.insert(id.clone());
    }
    let mut answer = json!({"client_id": id, "redirect_uris": body["redirect_uris"]});
    let registered = match &b.registered_auth {
        Some(method) => {
            let secret = fx.mint("csecret");
            let expires_at = b
                .secret_expires_in_secs
                .map_or(0, |d| now().saturating_add_signed(d));
            answer["client_secret"] = json!(secret);
            answer["token_endpoint_auth_method"] = json!(method);
            answer["client_secret_expires_at"] = json!(expires_at);
            Registered {
                method: method.clone(),
                secret: Some(secret),
                expires_at,
            }
        }
        None => {
            answer["token_endpoint_auth_method"] = json!("none");
            Registered {
                method: "none".into(),
                secret: None,
                expires_at: 0,
            }
        }
    };
    fx.grants
        .lock()
        .unwrap()
        .clients
        .insert(id.clone(), registered);
    (StatusCode::CREATED, Json(answer)).into_response()
}

async fn mcp(
    State(fx): State<Arc<Fixture>>,
    method: axum::http::Method,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let prm_url = format!("{}/.well-known/oauth-protected-resource/mcp", fx.base);
    let b = fx.behaviour.lock().unwrap().clone();
    let token = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_string);
    let grant = token.and_then(|t| fx.grants.lock().unwrap().access.get(&t).cloned());
    let Some((scopes, _)) = grant.filter(|(_, exp)| *exp > now()) else {
        fx.counters.mcp_unauthorized.fetch_add(1, Ordering::SeqCst);
        let names_prm = if b.challenge_names_prm {
            format!("resource_metadata=\"{prm_url}\", ")
        } else {
            String::new()
        };
        return (
            StatusCode::UNAUTHORIZED,
            [(
                header::WWW_AUTHENTICATE,
                format!(
                    "Bearer {names_prm}scope=\"{}\"",
                    b.required_scopes.join(" ")
                ),
            )],
        )
            .into_response();
    };
    let have: Vec<&str> = scopes.split(' ').collect();
    if !b.required_scopes.iter().all(|s| have.contains(&s.as_str())) {
        return (
            StatusCode::FORBIDDEN,
            [(header::WWW_AUTHENTICATE, format!("Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{prm_url}\"", b.required_scopes.join(" ")))],
        )
            .into_response();
    }
    fx.counters.mcp_authorized.fetch_add(1, Ordering::SeqCst);
    let upstream = fx.upstream.lock().unwrap().clone();
    let Some(upstream) = upstream else {
        return Json(json!({"ok": true})).into_response();
    };
    mcp_bridge::transport::http::tls::install_provider();
    let mut req = reqwest::Client::new().request(method, upstream).body(body);
    for (k, v) in headers.iter() {
        if !matches!(k.as_str(), "host" | "authorization" | "content-length") {
            req = req.header(k.as_str(), v.as_bytes());
        }
    }
    let Ok(resp) = req.send().await else {
        return (StatusCode::BAD_GATEWAY, "upstream").into_response();
    };
    let mut out = Response::builder().status(resp.status().as_u16());
    // The session of a 2025-11-25 server (2025-11-25 basic/transports) passes as well.
    for name in ["content-type", "mcp-session-id"] {
        if let Some(v) = resp.headers().get(name) {
            out = out.header(name, v.as_bytes());
        }
    }
    out.body(axum::body::Body::from_stream(resp.bytes_stream()))
        .unwrap()
}

fn base64_url(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// One request as the HTTP transport sends it: the token, then each challenge handed back,
/// at most [`MAX_CHALLENGES_PER_REQUEST`] times.
pub async fn call(p: &impl TokenProvider, fx: &Fixture) -> Result<(), String> {
    mcp_bridge::transport::http::tls::install_provider();
    let http = reqwest::Client::new();
    let mut challenges = 0;
    loop {
        let token = p.access_token().await;
        let mut req = http.post(fx.mcp_url());
        if let Some(t) = &token {
            req = req.header("authorization", format!("Bearer {}", t.secret()));
        }
        let resp = req.send().await.map_err(|e| e.to_string())?;
        let status = resp.status().as_u16();
        if status == 200 {
            return Ok(());
        }
        if challenges == MAX_CHALLENGES_PER_REQUEST {
            return Err(format!("HTTP {status}"));
        }
        challenges += 1;
        let www = resp
            .headers()
            .get_all("www-authenticate")
            .iter()
            .map(|v| v.to_str().unwrap().to_string())
            .collect();
        match p
            .challenge(Challenge {
                status,
                www_authenticate: www,
                rejected: token,
            })
            .await
        {
            ChallengeOutcome::Retry => continue,
            ChallengeOutcome::Fail(cause) => return Err(cause),
        }
    }
}

/// A free loopback port (bound once and released), for a redirect port or a listener.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
