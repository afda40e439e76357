//! What a request to a URL upstream (a POST; the GET that resumes a 2025-11-25 stream) does
//! with a redirect (RFC 9110 §15.4): the rule is pure, the loop that follows it is the HTTP
//! transport's (`transport/http/exchange.rs`).
//!
//! - 307 and 308 keep the method and the body (RFC 9110 §15.4.8, RFC 9238 §3): one to the same
//!   origin (scheme, host and port: RFC 6454) is followed, with the same body and every header
//!   of the POST, at most [`MAX_REDIRECTS`] times. Gateways answer so for a path rewrite or a
//!   trailing slash; the Python SDK and LibreChat follow them.
//! - One to another origin is not followed: the token and the `--header` values belong to the
//!   upstream's origin alone, and an origin the user did not name gets none of them (the
//!   failure names the origin, for the user to give it if it is right).
//! - 301, 302 and 303 turn a POST into a GET in practice (RFC 9110 §15.4.2, §15.4.3, §15.4.4):
//!   a JSON-RPC message cannot be sent that way, so the POST fails and says the server
//!   redirected. A GET stays a GET: it follows them as 307 and 308.

use url::Url;

/// The most redirects one request follows (the first request not counted); one more fails it.
pub const MAX_REDIRECTS: usize = 5;

/// What to do with a redirect status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Redirect {
    /// Not a redirect status: the response is the answer.
    No,
    /// A same-origin 307 or 308: POST again to this URL, with the same body and headers.
    Follow(Url),
    /// The POST fails with this detail (for `data.detail`; an origin, never a path or query).
    Refuse(String),
}

/// The redirect of a request of method `method` (`POST`, `GET`) to `from` answered with
/// `status` and the `Location` header `location`, after `followed` redirects of the same
/// request.
pub fn of_request(
    method: &str,
    from: &Url,
    status: u16,
    location: Option<&str>,
    followed: usize,
) -> Redirect {
    if !matches!(status, 301 | 302 | 303 | 307 | 308) {
        return Redirect::No;
    }
    let target = location.and_then(|l| from.join(l.trim()).ok());
    if matches!(status, 301..=303) && method != "GET" {
        return Redirect::Refuse(format!(
            "the server redirected the {method} (HTTP {status}{}): the bridge follows only 307 \
             and 308 for a {method}, which keep its method and body",
            target
                .as_ref()
                .map(|t| format!(" to {}", origin(t)))
                .unwrap_or_default()
        ));
    }
    let Some(target) = target.filter(|t| matches!(t.scheme(), "http" | "https")) else {
        return Redirect::Refuse(format!(
            "the server redirected the {method} (HTTP {status}) without a usable Location"
        ));
    };
    if target.origin() != from.origin() {
        return Redirect::Refuse(format!(
            "the server redirected the {method} (HTTP {status}) to another origin, {}: the \
             bridge does not follow it (the token and the --header values go only to the \
             origin of the upstream's URL)",
            origin(&target)
        ));
    }
    if followed >= MAX_REDIRECTS {
        return Redirect::Refuse(format!(
            "the server redirected the {method} more than {MAX_REDIRECTS} times"
        ));
    }
    Redirect::Follow(target)
}

/// `scheme://host[:port]` of `url` (RFC 6454 §6.2).
fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).expect("a valid URL")
    }

    #[test]
    fn a_same_origin_307_or_308_is_followed_up_to_the_limit() {
        let from = url("https://mcp.example/mcp");
        for status in [307, 308] {
            assert_eq!(
                of_request("POST", &from, status, Some("/mcp/"), 0),
                Redirect::Follow(url("https://mcp.example/mcp/"))
            );
            assert_eq!(
                of_request(
                    "POST",
                    &from,
                    status,
                    Some("https://mcp.example:443/v2?x=1"),
                    4
                ),
                Redirect::Follow(url("https://mcp.example/v2?x=1"))
            );
            assert_eq!(
                of_request("POST", &from, status, Some("/mcp/"), MAX_REDIRECTS),
                Redirect::Refuse("the server redirected the POST more than 5 times".into())
            );
        }
    }

    #[test]
    fn another_origin_is_refused_and_named() {
        let from = url("http://127.0.0.1:8080/mcp");
        for (location, named) in [
            ("http://127.0.0.1:8081/mcp", "http://127.0.0.1:8081"),
            ("https://127.0.0.1:8080/mcp", "https://127.0.0.1:8080"),
            ("http://localhost:8080/mcp", "http://localhost:8080"),
            ("//evil.example/steal?t=1", "http://evil.example"),
        ] {
            assert_eq!(
                of_request("POST", &from, 307, Some(location), 0),
                Redirect::Refuse(format!(
                    "the server redirected the POST (HTTP 307) to another origin, {named}: the bridge does not follow it (the token and the --header values go only to the origin of the upstream's URL)"
                )),
                "{location}"
            );
        }
    }

    #[test]
    fn a_301_302_or_303_fails_the_post_and_says_the_server_redirected() {
        let from = url("https://mcp.example/mcp");
        for status in [301, 302, 303] {
            assert_eq!(
                of_request("POST", &from, status, Some("/login?next=1"), 0),
                Redirect::Refuse(format!(
                    "the server redirected the POST (HTTP {status} to https://mcp.example): the bridge follows only 307 and 308 for a POST, which keep its method and body"
                ))
            );
        }
        assert_eq!(
            of_request("POST", &from, 302, None, 0),
            Redirect::Refuse("the server redirected the POST (HTTP 302): the bridge follows only 307 and 308 for a POST, which keep its method and body".into())
        );
    }

    #[test]
    fn a_get_follows_a_same_origin_301_302_or_303_too() {
        let from = url("https://mcp.example/mcp");
        for status in [301, 302, 303, 307, 308] {
            assert_eq!(
                of_request("GET", &from, status, Some("/v2"), 0),
                Redirect::Follow(url("https://mcp.example/v2"))
            );
        }
        assert_eq!(
            of_request("GET", &from, 302, Some("https://other.example/v2"), 0),
            Redirect::Refuse("the server redirected the GET (HTTP 302) to another origin, https://other.example: the bridge does not follow it (the token and the --header values go only to the origin of the upstream's URL)".into())
        );
    }

    #[test]
    fn no_location_or_another_scheme_is_refused_and_other_statuses_are_no_redirect() {
        let from = url("https://mcp.example/mcp");
        for location in [None, Some("ftp://mcp.example/mcp"), Some("http://[::1")] {
            assert_eq!(
                of_request("POST", &from, 308, location, 0),
                Redirect::Refuse(
                    "the server redirected the POST (HTTP 308) without a usable Location".into()
                ),
                "{location:?}"
            );
        }
        for status in [200, 202, 300, 304, 305, 400, 404] {
            assert_eq!(
                of_request("POST", &from, status, Some("/x"), 0),
                Redirect::No
            );
        }
    }
}
