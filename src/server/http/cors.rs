//! CORS (the Fetch standard's CORS protocol) for the origins that the `Origin` check admits,
//! and only for them: a page on such an origin (the MCP Inspector's direct mode, a page
//! served from a loopback port) calls the server with `fetch` as the TypeScript SDK's
//! transport does, through its preflights. A foreign origin gets the check's 403, preflight
//! included, so its page can neither send nor read.

use super::{Body, HttpOptions, Shared, empty, origin_allowed};
use crate::protocol::rules::remote::HeaderParam;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Response, StatusCode};
use std::collections::HashMap;

/// How long a browser may keep a preflight's answer (10 minutes, in seconds).
const PREFLIGHT_MAX_AGE_SECS: &str = "600";

/// The request headers a page may send: those of both revisions' transports (2025-11-25
/// basic/transports, 2026-07-28 basic/transports/http) and of a bearer token; each tool's
/// `Mcp-Param-*` headers are added at bind.
const ALLOWED_HEADERS: &str = "content-type, accept, authorization, last-event-id, \
     mcp-session-id, mcp-protocol-version, mcp-method, mcp-name";

/// The answer headers a page may read: the session id and the protocol version (a client
/// needs both for its next request), and a 401's challenge.
const EXPOSED_HEADERS: &str = "mcp-session-id, mcp-protocol-version, www-authenticate";

/// The `Access-Control-Allow-Headers` of a server: [`ALLOWED_HEADERS`] and the
/// `Mcp-Param-*` headers of its tools.
pub(super) fn allowed_headers(tool_params: &HashMap<String, Vec<HeaderParam>>) -> HeaderValue {
    let mut names: Vec<String> = tool_params
        .values()
        .flatten()
        .map(|param| format!("mcp-param-{}", param.name.to_ascii_lowercase()))
        .collect();
    names.sort();
    names.dedup();
    let list = std::iter::once(ALLOWED_HEADERS.to_owned())
        .chain(names)
        .collect::<Vec<_>>()
        .join(", ");
    HeaderValue::from_str(&list).unwrap_or_else(|_| HeaderValue::from_static(ALLOWED_HEADERS))
}

/// The request's `Origin` when the `Origin` check admits it (a request with two gets 400,
/// without CORS headers).
pub(super) fn admitted_origin(options: &HttpOptions, headers: &HeaderMap) -> Option<HeaderValue> {
    let mut origins = headers.get_all(header::ORIGIN).iter();
    let origin = origins.next()?;
    if origins.next().is_some() {
        return None;
    }
    origin_allowed(options, origin.to_str().ok()?).then(|| origin.clone())
}

/// The answer to an OPTIONS of the endpoint (a preflight when it comes from a page): 204
/// with the methods and headers allowed.
pub(super) fn preflight(shared: &Shared) -> Response<Body> {
    let methods = if shared.sessions.is_some() {
        "GET, POST, DELETE"
    } else {
        "POST"
    };
    let mut response = empty(StatusCode::NO_CONTENT);
    let headers = response.headers_mut();
    headers.insert(header::ALLOW, HeaderValue::from_static(methods));
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static(methods),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        shared.cors_allowed_headers.clone(),
    );
    headers.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static(PREFLIGHT_MAX_AGE_SECS),
    );
    response
}

/// Lets the page of `origin` read `response` (its session id and protocol version too).
pub(super) fn allow(response: &mut Response<Body>, origin: HeaderValue) {
    let headers = response.headers_mut();
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(EXPOSED_HEADERS),
    );
    // The answer depends on the Origin: a cache keeps one per origin (Fetch, "CORS protocol
    // and HTTP caches").
    headers.append(header::VARY, HeaderValue::from_static("origin"));
}
