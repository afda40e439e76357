//! The HTTP of the sign-in: one reqwest 0.13 client (rustls, no redirects followed, time
//! limits), bounded reads of JSON documents, and the `oauth2` crate's async HTTP client over it
//! (oauth2 5 without its default features, which would bring reqwest 0.12: a second HTTP and
//! TLS stack). No body, header value or URL query of a request or a response is ever logged.

use serde::de::DeserializeOwned;
use std::time::Duration;

/// Time limit of one request of the sign-in (metadata, registration, token).
pub const AUTH_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Time limit of a connection of the sign-in.
pub const AUTH_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest response body of the sign-in (metadata, registration, token), in bytes.
pub const MAX_AUTH_RESPONSE_BYTES: usize = 1024 * 1024;

/// A failed request of the sign-in, without any secret.
#[derive(Debug, thiserror::Error)]
pub enum AuthHttpError {
    #[error("the request failed: {0}")]
    Request(String),
    #[error("HTTP {0}")]
    Status(u16),
    #[error("the response is larger than 1 MiB")]
    TooLarge,
    #[error("the response is not the expected JSON")]
    Json,
}

/// The certificates of `extra_ca_pem` (`--ca-file`), checked at start: no certificate in it
/// is an error. Cheap (no system roots are read).
pub fn extra_roots(
    extra_ca_pem: Option<&[u8]>,
) -> Result<Vec<reqwest::Certificate>, AuthHttpError> {
    match extra_ca_pem {
        Some(pem) => reqwest::Certificate::from_pem_bundle(pem)
            .map_err(|_| AuthHttpError::Request("--ca-file holds no certificate".into())),
        None => Ok(Vec::new()),
    }
}

/// The client of the sign-in: no redirects (a metadata or token endpoint that redirects is
/// refused), the time limits above, the certificates `extra_roots` ([`extra_roots`]) trusted
/// besides the system's; proxies from the environment (reqwest's `system-proxy`). Building
/// it reads the system certificate store, so the sign-in makes it only when a request needs
/// it.
pub fn client(extra_roots: &[reqwest::Certificate]) -> Result<reqwest::Client, AuthHttpError> {
    crate::transport::http::tls::install_provider();
    let mut b = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(AUTH_CONNECT_TIMEOUT)
        .timeout(AUTH_REQUEST_TIMEOUT);
    for cert in extra_roots {
        b = b.add_root_certificate(cert.clone());
    }
    b.build().map_err(|e| AuthHttpError::Request(kind(&e)))
}

/// A reason for a reqwest error that holds no URL (its query could hold a secret).
fn kind(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        "timed out".into()
    } else if e.is_connect() {
        "no connection".into()
    } else if e.is_builder() {
        "bad request".into()
    } else {
        "transport error".into()
    }
}

/// Reads at most [`MAX_AUTH_RESPONSE_BYTES`] of a body.
pub async fn read_limited(mut resp: reqwest::Response) -> Result<Vec<u8>, AuthHttpError> {
    let mut out = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| AuthHttpError::Request(kind(&e)))?
    {
        if out.len() + chunk.len() > MAX_AUTH_RESPONSE_BYTES {
            return Err(AuthHttpError::TooLarge);
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// GETs a JSON document (`Accept: application/json`); a status other than 200 is an error.
pub async fn get_json<T: DeserializeOwned>(
    http: &reqwest::Client,
    url: &str,
) -> Result<T, AuthHttpError> {
    let resp = http
        .get(url)
        .header("accept", "application/json")
        .send()
        .await
        .map_err(|e| AuthHttpError::Request(kind(&e)))?;
    if resp.status() != reqwest::StatusCode::OK {
        return Err(AuthHttpError::Status(resp.status().as_u16()));
    }
    let body = read_limited(resp).await?;
    serde_json::from_slice(&body).map_err(|_| AuthHttpError::Json)
}

/// POSTs a JSON body and reads a JSON answer of status 200 or 201.
pub async fn post_json<T: DeserializeOwned>(
    http: &reqwest::Client,
    url: &str,
    body: &serde_json::Value,
) -> Result<T, AuthHttpError> {
    let resp = http
        .post(url)
        .header("accept", "application/json")
        .json(body)
        .send()
        .await
        .map_err(|e| AuthHttpError::Request(kind(&e)))?;
    let status = resp.status().as_u16();
    if status != 200 && status != 201 {
        return Err(AuthHttpError::Status(status));
    }
    let body = read_limited(resp).await?;
    serde_json::from_slice(&body).map_err(|_| AuthHttpError::Json)
}

/// One request of the `oauth2` crate over reqwest 0.13 (its `AsyncHttpClient`).
pub async fn oauth_request(
    http: reqwest::Client,
    req: oauth2::HttpRequest,
) -> Result<oauth2::HttpResponse, AuthHttpError> {
    let req = reqwest::Request::try_from(req).map_err(|e| AuthHttpError::Request(kind(&e)))?;
    let resp = http
        .execute(req)
        .await
        .map_err(|e| AuthHttpError::Request(kind(&e)))?;
    let mut builder = oauth2::http::Response::builder().status(resp.status().as_u16());
    for (k, v) in resp.headers() {
        builder = builder.header(k.as_str(), v.as_bytes());
    }
    let body = read_limited(resp).await?;
    builder
        .body(body)
        .map_err(|_| AuthHttpError::Request("bad response head".into()))
}
