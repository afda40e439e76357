//! The documents of discovery and their checks, pure: RFC 9728 protected resource metadata,
//! RFC 8414 authorization server metadata (the exact `issuer` check, PKCE S256), the
//! well-known URLs to try in order, the scope rules of 2026-07-28 authorization, and the
//! discovery of 2025-03-26 authorization for a server without resource metadata (the
//! authorization server at the server's origin, its default endpoints).

use serde::Deserialize;
use url::Url;

use super::errors::{SignInError, failed};

/// RFC 9728 protected resource metadata (the members the bridge uses).
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct ResourceMetadata {
    /// The resource identifier; it must cover the server URL.
    pub resource: String,
    /// The issuers of the authorization servers; 2026-07-28 requires at least one.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// Scopes the resource knows, used when the challenge names none.
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
}

/// RFC 8414 authorization server metadata (the members the bridge uses).
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct ServerMetadata {
    pub issuer: String,
    /// Absent at a server that offers no grant through it (RFC 8414 §2), such as one for the
    /// client credentials grant alone.
    #[serde(default)]
    pub authorization_endpoint: Option<String>,
    pub token_endpoint: String,
    #[serde(default)]
    pub registration_endpoint: Option<String>,
    #[serde(default)]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: Option<bool>,
    #[serde(default)]
    pub client_id_metadata_document_supported: Option<bool>,
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
    /// The client authentication methods of the token endpoint (absent:
    /// `client_secret_basic`, RFC 8414 §2).
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// The device authorization endpoint (RFC 8628 §4): the server offers the device
    /// authorization grant, a sign-in without a browser on the bridge's host.
    #[serde(default)]
    pub device_authorization_endpoint: Option<String>,
}

/// The protected resource metadata URLs to try, in order (2026-07-28 authorization server
/// discovery, step 2): the challenge's `resource_metadata` alone when present; otherwise
/// `<origin>/.well-known/oauth-protected-resource<path>` (only when the path is not `/`), then
/// `<origin>/.well-known/oauth-protected-resource`.
pub fn resource_metadata_urls(server: &Url, from_challenge: Option<&str>) -> Vec<String> {
    if let Some(u) = from_challenge {
        return vec![u.to_string()];
    }
    let origin = server.origin().ascii_serialization();
    let path = server.path().trim_end_matches('/');
    let mut out = Vec::new();
    if !path.is_empty() {
        out.push(format!(
            "{origin}/.well-known/oauth-protected-resource{path}"
        ));
    }
    out.push(format!("{origin}/.well-known/oauth-protected-resource"));
    out
}

/// The authorization server metadata URLs of `issuer`, in order (2026-07-28 step 4): with a
/// path `/t1`: `/.well-known/oauth-authorization-server/t1`,
/// `/.well-known/openid-configuration/t1`, `/t1/.well-known/openid-configuration`; without a
/// path: `/.well-known/oauth-authorization-server`, `/.well-known/openid-configuration`.
pub fn server_metadata_urls(issuer: &Url) -> Vec<String> {
    let origin = issuer.origin().ascii_serialization();
    let path = issuer.path().trim_end_matches('/');
    if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// The issuer of a 2025-03-26 server, which has no resource metadata: the origin of the
/// server URL (2025-03-26 authorization §2.3.2: the authorization base URL is the server URL
/// without its path), as `https://host[:port]`.
pub fn legacy_issuer(server: &Url) -> String {
    server.origin().ascii_serialization()
}

/// The resource metadata a 2025-03-26 server implies: the canonical server URL as the
/// resource, its origin ([`legacy_issuer`]) as the one authorization server.
pub fn legacy_resource_metadata(server: &Url) -> ResourceMetadata {
    ResourceMetadata {
        resource: canonical_resource(server),
        authorization_servers: vec![legacy_issuer(server)],
        scopes_supported: None,
    }
}

/// The one authorization server metadata URL of 2025-03-26 authorization (§2.3.2):
/// `<origin>/.well-known/oauth-authorization-server`.
pub fn legacy_server_metadata_url(server: &Url) -> String {
    format!(
        "{}/.well-known/oauth-authorization-server",
        legacy_issuer(server)
    )
}

/// The metadata of a 2025-03-26 authorization server that publishes none: the default
/// endpoints `<issuer>/authorize`, `/token` and `/register` (2025-03-26 authorization
/// §2.3.3), and PKCE S256, which 2025-03-26 requires of every client (§2.1.1, OAuth 2.1).
pub fn default_endpoints(issuer: &str) -> ServerMetadata {
    ServerMetadata {
        issuer: issuer.to_string(),
        authorization_endpoint: Some(format!("{issuer}/authorize")),
        token_endpoint: format!("{issuer}/token"),
        registration_endpoint: Some(format!("{issuer}/register")),
        code_challenge_methods_supported: Some(vec!["S256".into()]),
        authorization_response_iss_parameter_supported: None,
        client_id_metadata_document_supported: None,
        scopes_supported: None,
        token_endpoint_auth_methods_supported: None,
        device_authorization_endpoint: None,
    }
}

/// The canonical resource URI of the server URL (RFC 8707, 2026-07-28): no fragment, lowercase
/// scheme and host (the `url` crate's form), no trailing slash on a path other than `/`.
pub fn canonical_resource(server: &Url) -> String {
    let mut u = server.clone();
    u.set_fragment(None);
    let s = u.to_string();
    if u.path() == "/" && u.query().is_none() {
        s.trim_end_matches('/').to_string()
    } else {
        s
    }
}

/// Checks the resource metadata: `resource` covers the server URL (same origin, and the
/// server's path starts with the resource's path), and it names at least one authorization
/// server. Errors: `sign_in_failed` naming the failed rule.
pub fn check_resource(doc: &ResourceMetadata, server: &Url) -> Result<(), SignInError> {
    let resource = Url::parse(&doc.resource)
        .map_err(|_| failed("the protected resource metadata has no valid resource"))?;
    let same_origin = resource.origin() == server.origin();
    let rpath = resource.path().trim_end_matches('/');
    let spath = server.path();
    let covers = spath == rpath || spath.starts_with(&format!("{rpath}/")) || rpath.is_empty();
    if !same_origin || !covers {
        return Err(failed(
            "the resource of the protected resource metadata does not cover the server URL",
        ));
    }
    if doc.authorization_servers.is_empty() {
        return Err(failed(
            "the protected resource metadata names no authorization server",
        ));
    }
    Ok(())
}

/// Checks authorization server metadata fetched for `issuer`: its `issuer` is identical to the
/// issuer the URL was built from (no normalization), and, when the grant goes through the
/// authorization endpoint (`pkce`: the authorization code grant, not the client credentials
/// grant, which has no code to protect), `code_challenge_methods_supported` is present and
/// holds `S256` (2026-07-28 security: a client MUST refuse without it).
/// Errors: `sign_in_failed` naming the failed rule.
pub fn check_server(doc: &ServerMetadata, issuer: &str, pkce: bool) -> Result<(), SignInError> {
    if doc.issuer != issuer {
        return Err(failed(
            "the issuer of the authorization server metadata differs from the issuer it was fetched for",
        ));
    }
    if !pkce {
        return Ok(());
    }
    match &doc.code_challenge_methods_supported {
        None => Err(failed(
            "the authorization server metadata has no code_challenge_methods_supported (PKCE); the bridge refuses to sign in",
        )),
        Some(m) if !m.iter().any(|x| x == "S256") => Err(failed(
            "the authorization server does not support PKCE S256",
        )),
        Some(_) => Ok(()),
    }
}

/// The scopes to request (2026-07-28 scope selection): the challenge's `scope`; else every
/// `scopes_supported` of the resource metadata; else none. `offline_access` is added when the
/// authorization server lists it (for a refresh token).
pub fn select_scopes(
    challenged: Option<&str>,
    resource: &ResourceMetadata,
    server: &ServerMetadata,
) -> Vec<String> {
    let mut scopes: Vec<String> = match challenged {
        Some(s) => split_scopes(s),
        None => resource.scopes_supported.clone().unwrap_or_default(),
    };
    let offline = "offline_access";
    if server
        .scopes_supported
        .as_ref()
        .is_some_and(|s| s.iter().any(|x| x == offline))
        && !scopes.iter().any(|x| x == offline)
    {
        scopes.push(offline.to_string());
    }
    scopes
}

/// The scopes of a space-separated `scope` value.
pub fn split_scopes(s: &str) -> Vec<String> {
    s.split_ascii_whitespace().map(str::to_string).collect()
}

/// The union of two scope lists, in first-seen order (the step-up rule: previously requested
/// scopes plus the challenged ones).
pub fn union_scopes(a: &[String], b: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(a.len() + b.len());
    for s in a.iter().chain(b) {
        if !out.contains(s) {
            out.push(s.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn server(methods: Option<Vec<&str>>) -> ServerMetadata {
        ServerMetadata {
            issuer: "https://as.example/t1".into(),
            authorization_endpoint: Some("https://as.example/authorize".into()),
            token_endpoint: "https://as.example/token".into(),
            registration_endpoint: None,
            code_challenge_methods_supported: methods
                .map(|m| m.into_iter().map(str::to_string).collect()),
            authorization_response_iss_parameter_supported: None,
            client_id_metadata_document_supported: None,
            scopes_supported: Some(vec!["a".into(), "offline_access".into()]),
            token_endpoint_auth_methods_supported: None,
            device_authorization_endpoint: None,
        }
    }

    #[test]
    fn resource_metadata_comes_from_the_challenge_else_the_two_well_known_urls() {
        let s = u("https://r.example/mcp/");
        assert_eq!(
            resource_metadata_urls(&s, Some("https://r.example/prm")),
            vec!["https://r.example/prm"]
        );
        assert_eq!(
            resource_metadata_urls(&s, None),
            vec![
                "https://r.example/.well-known/oauth-protected-resource/mcp",
                "https://r.example/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            resource_metadata_urls(&u("http://127.0.0.1:8/"), None),
            vec!["http://127.0.0.1:8/.well-known/oauth-protected-resource"]
        );
    }

    #[test]
    fn server_metadata_urls_follow_the_order_for_issuers_with_and_without_a_path() {
        assert_eq!(
            server_metadata_urls(&u("https://as.example/t1")),
            vec![
                "https://as.example/.well-known/oauth-authorization-server/t1",
                "https://as.example/.well-known/openid-configuration/t1",
                "https://as.example/t1/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            server_metadata_urls(&u("https://as.example")),
            vec![
                "https://as.example/.well-known/oauth-authorization-server",
                "https://as.example/.well-known/openid-configuration"
            ]
        );
    }

    #[test]
    fn the_issuer_must_be_identical_and_pkce_s256_listed() {
        let doc = server(Some(vec!["plain", "S256"]));
        assert_eq!(check_server(&doc, "https://as.example/t1", true), Ok(()));
        assert!(check_server(&doc, "https://as.example/t1/", true).is_err());
        assert!(check_server(&doc, "https://AS.example/t1", true).is_err());
        let e = check_server(&server(None), "https://as.example/t1", true).unwrap_err();
        assert!(e.detail.contains("code_challenge_methods_supported"));
        assert!(check_server(&server(Some(vec!["plain"])), "https://as.example/t1", true).is_err());
        // The client credentials grant has no authorization request: PKCE does not matter,
        // the issuer still does.
        assert_eq!(
            check_server(&server(None), "https://as.example/t1", false),
            Ok(())
        );
        assert!(check_server(&server(None), "https://as.example/t2", false).is_err());
    }

    #[test]
    fn the_resource_must_cover_the_server_url_and_name_an_authorization_server() {
        let doc = |r: &str, n: usize| ResourceMetadata {
            resource: r.into(),
            authorization_servers: vec!["https://as.example".into(); n],
            scopes_supported: None,
        };
        let s = u("https://r.example/mcp");
        assert_eq!(check_resource(&doc("https://r.example/mcp", 1), &s), Ok(()));
        assert_eq!(check_resource(&doc("https://r.example", 1), &s), Ok(()));
        assert!(check_resource(&doc("https://r.example/other", 1), &s).is_err());
        assert!(check_resource(&doc("https://r.example/m", 1), &s).is_err());
        assert!(check_resource(&doc("https://evil.example/mcp", 1), &s).is_err());
        assert!(check_resource(&doc("https://r.example/mcp", 0), &s).is_err());
    }

    #[test]
    fn scopes_come_from_the_challenge_else_the_resource_and_steps_up_as_a_union() {
        let prm = ResourceMetadata {
            resource: "https://r.example".into(),
            authorization_servers: vec![],
            scopes_supported: Some(vec!["r1".into(), "r2".into()]),
        };
        let s = server(Some(vec!["S256"]));
        assert_eq!(
            select_scopes(Some("x y"), &prm, &s),
            vec!["x", "y", "offline_access"]
        );
        assert_eq!(
            select_scopes(None, &prm, &s),
            vec!["r1", "r2", "offline_access"]
        );
        assert_eq!(
            union_scopes(&split_scopes("a b"), &split_scopes("b c")),
            vec!["a", "b", "c"]
        );
    }

    #[test]
    fn a_2025_03_26_server_has_its_authorization_server_at_its_origin() {
        let s = u("https://R.example:8443/v1/mcp?x=1");
        assert_eq!(legacy_issuer(&s), "https://r.example:8443");
        assert_eq!(
            legacy_server_metadata_url(&s),
            "https://r.example:8443/.well-known/oauth-authorization-server"
        );
        assert_eq!(
            legacy_resource_metadata(&u("https://r.example/mcp")),
            ResourceMetadata {
                resource: "https://r.example/mcp".into(),
                authorization_servers: vec!["https://r.example".into()],
                scopes_supported: None,
            }
        );
        let d = default_endpoints("https://r.example");
        assert_eq!(
            (
                d.authorization_endpoint.as_deref(),
                d.token_endpoint.as_str(),
                d.registration_endpoint.as_deref()
            ),
            (
                Some("https://r.example/authorize"),
                "https://r.example/token",
                Some("https://r.example/register")
            )
        );
        assert_eq!(check_server(&d, "https://r.example", true), Ok(()));
    }

    #[test]
    fn the_canonical_resource_has_no_fragment_and_no_lone_slash() {
        assert_eq!(
            canonical_resource(&u("HTTPS://R.example/")),
            "https://r.example"
        );
        assert_eq!(
            canonical_resource(&u("https://r.example/mcp#x")),
            "https://r.example/mcp"
        );
    }
}
