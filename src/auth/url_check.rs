//! The checks of the URLs of a sign-in, pure: the authorization URL before it is written or
//! opened, and the loopback host rule.

use url::{Host, Url};

use super::errors::{SignInCause, SignInError};

/// Longest authorization URL, in bytes (8 KiB: common HTTP servers refuse a longer request
/// line, such as Apache's `LimitRequestLine` of 8190 and nginx's 8 KiB header buffers).
pub const MAX_AUTHORIZATION_URL_BYTES: usize = 8 * 1024;

/// True for `localhost`, a name ending in `.localhost`, `127.0.0.0/8` and `[::1]`.
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Domain(d)) => {
            let d = d.trim_end_matches('.');
            d.eq_ignore_ascii_case("localhost") || d.to_ascii_lowercase().ends_with(".localhost")
        }
        Some(Host::Ipv4(a)) => a.is_loopback(),
        Some(Host::Ipv6(a)) => a.is_loopback(),
        None => false,
    }
}

/// Checks the authorization URL before it is written to stderr, put in an elicitation or
/// behind the start URL: the rules of [`validate_shown_url`], `redirect_uri` equal to ours, a
/// non-empty `state`. Errors: `sign_in_invalid_url` naming the rule (never the URL).
pub fn validate_authorization_url(raw: &str, redirect_uri: &str) -> Result<Url, SignInError> {
    let bad = |why: &str| SignInError::new(SignInCause::SignInInvalidUrl, why);
    let url = validate_shown_url(raw)?;
    let mut redirects = Vec::new();
    let mut state = None;
    for (k, v) in url.query_pairs() {
        match k.as_ref() {
            "redirect_uri" => redirects.push(v.into_owned()),
            "state" => state = Some(v.into_owned()),
            _ => {}
        }
    }
    // An authorization endpoint that already carries a `redirect_uri` gives the URL two: the
    // server may take the other one, so any second one is refused.
    if redirects.len() > 1 {
        return Err(bad("more than one redirect URI"));
    }
    if redirects.first().map(String::as_str) != Some(redirect_uri) {
        return Err(bad("not the redirect URI of the bridge"));
    }
    if state.is_none_or(|s| s.is_empty()) {
        return Err(bad("no state"));
    }
    Ok(url)
}

/// Checks a URL of the authorization server before the bridge writes it to stderr or puts it
/// in an elicitation (an authorization URL, a device sign-in's verification URI): at most
/// [`MAX_AUTHORIZATION_URL_BYTES`]; only the bytes 0x21 to 0x7E without `"<>\^`{|}`; `https`
/// (or `http` with a loopback host, for a loopback authorization server); a host; no user
/// information; no fragment. Errors: `sign_in_invalid_url` naming the rule (never the URL).
pub fn validate_shown_url(raw: &str) -> Result<Url, SignInError> {
    let bad = |why: &str| SignInError::new(SignInCause::SignInInvalidUrl, why);
    if raw.len() > MAX_AUTHORIZATION_URL_BYTES {
        return Err(bad("longer than 8 KiB"));
    }
    if raw
        .bytes()
        .any(|b| !(0x21..=0x7e).contains(&b) || b"\"<>\\^`{|}".contains(&b))
    {
        return Err(bad("a byte outside the printable ASCII set"));
    }
    let url = Url::parse(raw).map_err(|_| bad("not a URL"))?;
    match url.scheme() {
        "https" => {}
        "http" if is_loopback(&url) => {}
        _ => return Err(bad("not https")),
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(bad("no host"));
    }
    if !url.username().is_empty() || url.password().is_some() || raw.contains('@') {
        return Err(bad("user information"));
    }
    if url.fragment().is_some() || raw.contains('#') {
        return Err(bad("a fragment"));
    }
    Ok(url)
}

/// Which rule a server URL of `logout` breaks ([`check_server_url`]); the text names the rule,
/// never the URL (its query may carry a secret).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ServerUrlError {
    #[error("the URL is not valid")]
    NotAUrl,
    #[error("the URL must use https (or http with a loopback host)")]
    Scheme,
    #[error("the URL has no host")]
    NoHost,
    #[error("the URL must not hold a user or a password")]
    UserInfo,
    #[error("the URL must not have a fragment")]
    Fragment,
}

/// Checks a server URL of the URL form or of `logout`: `https`, or `http` with a loopback
/// host; a host; no user information; no fragment. Errors: [`ServerUrlError`], the usage
/// message.
pub fn check_server_url(text: &str) -> Result<Url, ServerUrlError> {
    let url = Url::parse(text).map_err(|_| ServerUrlError::NotAUrl)?;
    match url.scheme() {
        "https" => {}
        "http" if is_loopback(&url) => {}
        _ => return Err(ServerUrlError::Scheme),
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(ServerUrlError::NoHost);
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(ServerUrlError::UserInfo);
    }
    if url.fragment().is_some() {
        return Err(ServerUrlError::Fragment);
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: &str = "http://127.0.0.1:41894/callback";
    const RQ: &str = "http%3A%2F%2F127.0.0.1%3A41894%2Fcallback";

    fn ok(s: &str) -> bool {
        validate_authorization_url(s, R).is_ok()
    }

    #[test]
    fn a_good_authorization_url_passes() {
        assert!(ok(&format!(
            "https://as.example/authorize?response_type=code&redirect_uri={RQ}&state=abc"
        )));
        assert!(ok(&format!(
            "http://127.0.0.1:9/authorize?redirect_uri={RQ}&state=abc"
        )));
    }

    #[test]
    fn each_rule_refuses_its_url() {
        for (url, why) in [
            (
                format!("http://as.example/a?redirect_uri={RQ}&state=s"),
                "not https",
            ),
            (
                format!("https://u:p@as.example/a?redirect_uri={RQ}&state=s"),
                "user information",
            ),
            (
                format!("https://as.example/a?redirect_uri={RQ}&state=s#f"),
                "a fragment",
            ),
            (
                format!("https://as.example/a?redirect_uri={RQ}&state=s&x=a b"),
                "a byte outside the printable ASCII set",
            ),
            (
                format!("https://as.example/a?redirect_uri={RQ}&state=s&x=<"),
                "a byte outside the printable ASCII set",
            ),
            (
                "https://as.example/a?redirect_uri=http%3A%2F%2Fevil%2Fcb&state=s".to_string(),
                "not the redirect URI of the bridge",
            ),
            (
                format!(
                    "https://as.example/a?redirect_uri=http%3A%2F%2Fevil%2Fcb&redirect_uri={RQ}&state=s"
                ),
                "more than one redirect URI",
            ),
            (
                format!("https://as.example/a?redirect_uri={RQ}&redirect_uri={RQ}&state=s"),
                "more than one redirect URI",
            ),
            (
                format!("https://as.example/a?redirect_uri={RQ}"),
                "no state",
            ),
            (
                format!("https://as.example/a?redirect_uri={RQ}&state="),
                "no state",
            ),
            (
                format!(
                    "https://as.example/a?redirect_uri={RQ}&state=s&p={}",
                    "x".repeat(9000)
                ),
                "longer than 8 KiB",
            ),
            ("javascript:alert(1)".to_string(), "not https"),
        ] {
            let e = validate_authorization_url(&url, R).unwrap_err();
            assert_eq!(e.cause, SignInCause::SignInInvalidUrl, "{url}");
            assert_eq!(e.detail, why, "{url}");
        }
    }

    #[test]
    fn loopback_hosts_are_the_listed_ones() {
        for (u, l) in [
            ("http://localhost/", true),
            ("http://a.localhost/", true),
            ("http://127.9.9.9/", true),
            ("http://[::1]/", true),
            ("http://localhost.example/", false),
            ("http://10.0.0.1/", false),
        ] {
            assert_eq!(is_loopback(&Url::parse(u).unwrap()), l, "{u}");
        }
    }
}
