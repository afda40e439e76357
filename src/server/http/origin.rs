//! The `Origin` and `Host` checks of the HTTP server: the protection against DNS rebinding
//! that 2026-07-28 basic/transports asks of a server.

use super::{Body, HttpOptions, Shared, error_answer};
use crate::server::{ErrorCode, RpcError};
use hyper::header::{self, HeaderMap};
use hyper::{Response, StatusCode};
use std::net::IpAddr;

/// 403 for an `Origin` that is not allowed, or a non-loopback host on a loopback listener:
/// the authority of an absolute-form request target, else the `Host` header (RFC 9112
/// §3.2.2: the target's authority overrides `Host`); 400 for more than one `Host` header
/// (RFC 9112 §3.2: a server MUST refuse it) and for more than one `Origin` header (RFC 6454
/// §7.3: a user agent sends at most one; which of two to judge cannot be told).
pub(super) fn check_origin_and_host(
    shared: &Shared,
    headers: &HeaderMap,
    authority: Option<&str>,
) -> Option<Response<Body>> {
    if headers.get_all(header::HOST).iter().nth(1).is_some() {
        let error = RpcError::new(
            ErrorCode::INVALID_REQUEST,
            "Bad request: more than one Host",
        );
        return Some(error_answer(StatusCode::BAD_REQUEST, None, error));
    }
    if headers.get_all(header::ORIGIN).iter().nth(1).is_some() {
        let error = RpcError::new(
            ErrorCode::INVALID_REQUEST,
            "Bad request: more than one Origin",
        );
        return Some(error_answer(StatusCode::BAD_REQUEST, None, error));
    }
    let options = &shared.options;
    let forbidden = |why: &str| {
        let error = RpcError::new(ErrorCode::INVALID_REQUEST, format!("Forbidden: {why}"));
        Some(error_answer(StatusCode::FORBIDDEN, None, error))
    };
    if let Some(origin) = headers.get(header::ORIGIN) {
        let allowed = origin
            .to_str()
            .is_ok_and(|origin| origin_allowed(options, origin));
        if !allowed {
            return forbidden("the Origin is not allowed");
        }
    }
    if shared.loopback {
        let host = authority.or_else(|| headers.get(header::HOST).and_then(|h| h.to_str().ok()));
        let allowed = host.is_some_and(|host| {
            is_loopback_host(host)
                || options.allowed_hosts.iter().any(|allowed| {
                    allowed.eq_ignore_ascii_case(host)
                        || allowed.eq_ignore_ascii_case(strip_port(host))
                })
        });
        if !allowed {
            return forbidden("the Host is not allowed");
        }
    }
    None
}

/// Whether `options` admit the `Origin` `origin`: one of `allowed_origins`, or a loopback one
/// when `allow_loopback_origins` is on.
pub(super) fn origin_allowed(options: &HttpOptions, origin: &str) -> bool {
    options
        .allowed_origins
        .iter()
        .any(|allowed| allowed.eq_ignore_ascii_case(origin))
        || (options.allow_loopback_origins && origin_is_loopback(origin))
}

/// `scheme://HOST[:port]` with a loopback host.
fn origin_is_loopback(origin: &str) -> bool {
    let Some((scheme, rest)) = origin.split_once("://") else {
        return false;
    };
    matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https")
        && !rest.contains('/')
        && is_loopback_host(rest)
}

/// `localhost`, an address of 127.0.0.0/8, or `[::1]`, each with an optional port.
fn is_loopback_host(host: &str) -> bool {
    let name = strip_port(host);
    if name.eq_ignore_ascii_case("localhost") {
        return true;
    }
    let name = name
        .strip_prefix('[')
        .and_then(|n| n.strip_suffix(']'))
        .unwrap_or(name);
    name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// `host:port` without `:port` (an IPv6 literal keeps its brackets).
fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map_or(host, |end| &host[..=end]);
    }
    match host.split_once(':') {
        Some((name, port)) if !port.contains(':') => name,
        _ => host,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_and_origins_are_told_apart_from_others() {
        for host in [
            "localhost",
            "LOCALHOST:8000",
            "127.0.0.1",
            "127.1.2.3:9",
            "[::1]",
            "[::1]:80",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in [
            "evil.example",
            "evil.example:8000",
            "10.0.0.1",
            "localhost.evil",
            "[::2]:80",
            "",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
        assert!(origin_is_loopback("http://localhost:3000"));
        assert!(origin_is_loopback("https://127.0.0.1"));
        assert!(!origin_is_loopback("http://evil.example"));
        assert!(!origin_is_loopback("null"));
        assert!(!origin_is_loopback("file://localhost"));
    }
}
