//! The optional bearer-token check of the HTTP server (RFC 6750 §2.1, §3) and the RFC 9728
//! protected-resource metadata it points clients to.

use super::{
    Body, HttpOptions, PROTECTED_RESOURCE_METADATA_PATH, error_answer, not_allowed, with_body,
};
use crate::server::{ErrorCode, RpcError};
use bytes::Bytes;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method as HttpMethod, Response, StatusCode};
use serde_json::json;
use std::fmt;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

/// The future of [`TokenVerifier::verify`]: true lets the request through.
pub type Verdict<'a> = Pin<Box<dyn Future<Output = bool> + Send + 'a>>;

/// Decides whether a bearer token is good (RFC 6750): its signature, issuer, audience (this
/// server, RFC 8707), expiry and scope are the application's to check, or an introspection
/// endpoint's (RFC 7662). A closure `Fn(&str) -> bool` is one; an asynchronous check
/// implements the trait.
pub trait TokenVerifier: Send + Sync + 'static {
    /// Whether `token` (the text after `Bearer `) is accepted.
    fn verify<'a>(&'a self, token: &'a str) -> Verdict<'a>;
}

impl<F> TokenVerifier for F
where
    F: Fn(&str) -> bool + Send + Sync + 'static,
{
    fn verify<'a>(&'a self, token: &'a str) -> Verdict<'a> {
        Box::pin(std::future::ready(self(token)))
    }
}

/// The verifier of [`HttpOptions::bearer`]. Two are equal when they are the same verifier.
#[derive(Clone)]
pub struct Bearer(pub(super) Arc<dyn TokenVerifier>);

impl fmt::Debug for Bearer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Bearer(..)")
    }
}

impl PartialEq for Bearer {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Bearer {}

/// What the bearer-token check answers with.
pub(super) struct Auth {
    verifier: Bearer,
    /// Where the metadata is served on this server: the well-known path plus the endpoint's.
    pub(super) metadata_path: String,
    /// The metadata document (RFC 9728 §3.2).
    metadata: Bytes,
    /// `Bearer resource_metadata="URL"`: the challenge without a token (RFC 9728 §5.1).
    challenge: HeaderValue,
    /// The challenge with `error="invalid_token"`: a token the verifier refused (RFC 6750 §3.1).
    invalid_token: HeaderValue,
}

impl Auth {
    pub(super) fn new(
        verifier: Bearer,
        options: &HttpOptions,
        bound: SocketAddr,
    ) -> io::Result<Auth> {
        let invalid = |why: String| io::Error::new(io::ErrorKind::InvalidInput, why);
        let resource = match &options.resource {
            Some(resource) => resource.clone(),
            None => format!("http://{bound}{}", options.path),
        };
        let metadata_url = metadata_url(&resource)
            .ok_or_else(|| invalid(format!("the resource {resource:?} is not an absolute URL")))?;
        let challenge = format!("Bearer resource_metadata=\"{metadata_url}\"");
        let invalid_token = format!("{challenge}, error=\"invalid_token\"");
        let header = |text: String| {
            HeaderValue::from_str(&text).map_err(|_| {
                invalid(format!(
                    "the metadata URL {metadata_url:?} is not header text"
                ))
            })
        };
        let metadata = json!({
            "resource": resource,
            "authorization_servers": options.authorization_servers,
            // Only the header is read (RFC 6750 §2.1), never a form body or a query.
            "bearer_methods_supported": ["header"],
        });
        Ok(Auth {
            verifier,
            metadata_path: well_known_path(&options.path),
            metadata: Bytes::from(metadata.to_string()),
            challenge: header(challenge)?,
            invalid_token: header(invalid_token)?,
        })
    }
}

/// `/.well-known/oauth-protected-resource` plus `path` (none for `/`: RFC 9728 §3.1 drops the
/// slash that follows the host alone).
pub(super) fn well_known_path(path: &str) -> String {
    let path = if path == "/" { "" } else { path };
    format!("{PROTECTED_RESOURCE_METADATA_PATH}{path}")
}

/// The metadata URL of a resource: the well-known path inserted between its host and its path
/// (RFC 9728 §3.1); none when `resource` is no absolute URL with a host.
pub(super) fn metadata_url(resource: &str) -> Option<String> {
    let mut url = url::Url::parse(resource).ok()?;
    url.host_str()?;
    let path = well_known_path(url.path());
    url.set_path(&path);
    url.set_fragment(None);
    Some(url.to_string())
}

/// The protected-resource metadata (RFC 9728 §3.2), to a GET; public, as the spec means it to
/// be found without a token.
pub(super) fn metadata(auth: &Auth, method: &HttpMethod) -> Response<Body> {
    if method != HttpMethod::GET {
        return not_allowed("GET");
    }
    with_body(
        StatusCode::OK,
        auth.metadata.clone(),
        Some("application/json"),
    )
}

/// 401 for a request without a bearer token, or with one the verifier refuses (RFC 6750 §3.1:
/// without any credentials the challenge carries no error code; a token that is malformed,
/// repeated or refused is `invalid_token`).
pub(super) async fn check_bearer(auth: &Auth, headers: &HeaderMap) -> Option<Response<Body>> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let (first, second) = (values.next(), values.next());
    let token = match first.map(|value| bearer_token(value.as_bytes())) {
        None | Some(Credentials::OtherScheme) if second.is_none() => {
            return Some(unauthorized(&auth.challenge, "a bearer token is required"));
        }
        Some(Credentials::Token(token)) if second.is_none() => token,
        _ => None,
    };
    let accepted = match token {
        Some(token) => auth.verifier.0.verify(token).await,
        None => false,
    };
    (!accepted).then(|| unauthorized(&auth.invalid_token, "the bearer token is not valid"))
}

/// What an `Authorization` value holds.
enum Credentials<'a> {
    /// Another scheme than Bearer (`Basic ...`): no bearer credentials.
    OtherScheme,
    /// `Bearer <token>`; none when the token is empty or not the RFC 6750 §2.1 `b64token`.
    Token(Option<&'a str>),
}

/// `Bearer 1*SP b64token` (RFC 6750 §2.1; the scheme without regard to case, RFC 9110
/// §11.1).
fn bearer_token(value: &[u8]) -> Credentials<'_> {
    let Ok(value) = std::str::from_utf8(value) else {
        return Credentials::OtherScheme;
    };
    let (scheme, rest) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Credentials::OtherScheme;
    }
    let token = rest.trim_start_matches(' ');
    let body = token.trim_end_matches('=');
    let valid = !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b));
    Credentials::Token(valid.then_some(token))
}

fn unauthorized(challenge: &HeaderValue, why: &str) -> Response<Body> {
    let error = RpcError::new(ErrorCode::INVALID_REQUEST, format!("Unauthorized: {why}"));
    let mut response = error_answer(StatusCode::UNAUTHORIZED, None, error);
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, challenge.clone());
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_url_puts_the_well_known_path_before_the_resource_path() {
        assert_eq!(
            metadata_url("http://127.0.0.1:8000/mcp").as_deref(),
            Some("http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(
            metadata_url("https://api.example/").as_deref(),
            Some("https://api.example/.well-known/oauth-protected-resource")
        );
        assert_eq!(
            metadata_url("https://api.example/a/b?x=1").as_deref(),
            Some("https://api.example/.well-known/oauth-protected-resource/a/b?x=1")
        );
        assert_eq!(metadata_url("/mcp"), None);
        assert_eq!(well_known_path("/"), PROTECTED_RESOURCE_METADATA_PATH);
    }

    #[test]
    fn bearer_credentials_follow_rfc_6750() {
        let token = |v: &str| match bearer_token(v.as_bytes()) {
            Credentials::OtherScheme => Err(()),
            Credentials::Token(t) => Ok(t.map(str::to_owned)),
        };
        assert_eq!(token("Bearer abc"), Ok(Some("abc".into())));
        assert_eq!(
            token("bearer  a-b.c_d~e+f/g=="),
            Ok(Some("a-b.c_d~e+f/g==".into()))
        );
        assert_eq!(token("Bearer "), Ok(None));
        assert_eq!(token("Bearer"), Ok(None));
        assert_eq!(token("Bearer a b"), Ok(None));
        assert_eq!(token("Bearer =="), Ok(None));
        assert_eq!(token("Basic dXNlcjpw"), Err(()));
    }
}
