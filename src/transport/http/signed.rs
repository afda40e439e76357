//! A request sent with the provider's token: the same-origin redirects it follows and the
//! 401/403 challenges the provider answers (2026-07-28 basic/authorization), for the POSTs of
//! the exchange, of the tools/list re-fetch and of a 2025-11-25 session.

use bytes::Bytes;
use reqwest::Method;
use reqwest::header::{HeaderMap, LOCATION, WWW_AUTHENTICATE};
use std::error::Error as _;
use url::Url;

use super::Shared;
use super::headers;
use crate::transport::http::redirect::{self, Redirect};
use crate::transport::token::{
    AccessToken, Challenge, ChallengeOutcome, MAX_CHALLENGES_PER_REQUEST,
};
use crate::transport::upstream::{RequestFailure, TransportEvent};

/// POSTs `body` with the headers `first` and the provider's token ([`send_signed`]); a POST
/// sent again after a challenge or a redirect gets the headers of `again`.
pub(super) async fn post(
    sh: &Shared,
    first: HeaderMap,
    body: &Bytes,
    again: impl Fn() -> HeaderMap,
) -> Result<reqwest::Response, RequestFailure> {
    let mut first = Some(first);
    send_signed(sh, |token, url| {
        let mut h = first.take().unwrap_or_else(&again);
        if let Some((n, v)) = token.and_then(|t| headers::bearer(t.secret())) {
            h.insert(n, v);
        }
        // The request is made whole here (no builder): its header map is moved in, not
        // merged into an empty one.
        let mut req = reqwest::Request::new(Method::POST, url.clone());
        *req.headers_mut() = h;
        *req.body_mut() = Some(body.clone().into());
        Ok(req)
    })
    .await
}

/// Sends the request that `request` builds for a URL with the provider's token (a POST, or the
/// GET that resumes a 2025-11-25 stream): first to the upstream's URL, then to where each
/// same-origin redirect points ([`redirect::of_request`]: 307/308, and 301/302/303 for a GET;
/// at most [`redirect::MAX_REDIRECTS`]; the client follows none
/// itself), and once more after each 401/403 challenge the provider answers with
/// [`ChallengeOutcome::Retry`] (at most [`MAX_CHALLENGES_PER_REQUEST`]; each retry reports
/// [`TransportEvent::SignedIn`]). A request lost on a reused connection before any byte of its
/// response is sent once more on a new client ([`lost_on_reused`]; once per call). Errors: no response (the connection's cause), a redirect that is not
/// followed (its status and why), or the status with the provider's cause
/// (`sign_in_unavailable: ...`, `sign_in_declined: ...`). Any other response is returned,
/// a 401/403 too once the challenges are spent.
pub(super) async fn send_signed(
    sh: &Shared,
    mut request: impl FnMut(Option<&AccessToken>, &Url) -> reqwest::Result<reqwest::Request>,
) -> Result<reqwest::Response, RequestFailure> {
    let mut challenges = 0;
    let mut redirects = 0;
    let mut url = sh.url.clone();
    let mut resent = false;
    loop {
        let token = sh.tokens.access_token().await;
        let (sent, verb) = match request(token.as_ref(), &url) {
            Ok(req) => {
                let verb = req.method().clone();
                let before = sh.opened.count();
                let mut sent = sh.client().execute(req).await;
                if !resent
                    && matches!(&sent, Err(e) if lost_on_reused(e, before, sh.opened.count()))
                    && sh.renew_client()
                {
                    resent = true;
                    if let Err(e) = &sent {
                        tracing::info!(target: "http", "a {verb} failed on a reused connection before any byte of its response ({}): sent once more on a new connection",
                            send_detail(e, &url));
                    }
                    sent = match request(token.as_ref(), &url) {
                        Ok(req) => sh.client().execute(req).await,
                        Err(e) => Err(e),
                    };
                }
                (sent, verb)
            }
            Err(e) => (Err(e), Method::POST),
        };
        let resp = sent.map_err(|e| RequestFailure::no_response(send_detail(&e, &url)))?;
        let status = resp.status().as_u16();
        let location = resp.headers().get(LOCATION).and_then(|v| v.to_str().ok());
        match redirect::of_request(verb.as_str(), &url, status, location, redirects) {
            Redirect::No => {}
            Redirect::Follow(to) => {
                tracing::debug!(target: "http", "the upstream redirected a {verb} (HTTP {status}) within its origin: sent again");
                redirects += 1;
                url = to;
                continue;
            }
            Redirect::Refuse(detail) => return Err(RequestFailure::status(status, detail)),
        }
        if !(matches!(status, 401 | 403) && challenges < MAX_CHALLENGES_PER_REQUEST) {
            return Ok(resp);
        }
        challenges += 1;
        let www_authenticate = resp
            .headers()
            .get_all(WWW_AUTHENTICATE)
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_owned))
            .collect();
        drop(resp);
        let outcome = sh
            .tokens
            .challenge(Challenge {
                status,
                www_authenticate,
                rejected: token,
            })
            .await;
        match outcome {
            ChallengeOutcome::Retry => {
                let _ = sh.events.send(TransportEvent::SignedIn);
            }
            ChallengeOutcome::Fail(cause) => return Err(RequestFailure::status(status, cause)),
        }
    }
}

/// Whether a request that got `e` was lost on a connection the pool had kept (reused), before
/// any byte of its response: no status, no failure to connect or time limit, and no
/// connection opened while it was sent (`before`, `after`: [`super::client::Opened`]).
/// Such a connection died while idle (a laptop that slept, a NAT or a load balancer that
/// forgot it, a server restarted without closing it), and the request is sent once more on
/// a new one; one that failed on a connection opened for it is not, since the server may
/// have taken it. A request that another one's new connection overlaps counts as fresh: it
/// is not sent again.
fn lost_on_reused(e: &reqwest::Error, before: u64, after: u64) -> bool {
    before == after && e.is_request() && !e.is_connect() && !e.is_timeout() && e.status().is_none()
}

/// Why a request got no response, for `data.detail`: the kind of failure and the innermost
/// cause (an OS error), never the URL's path or query. A TLS handshake that met plain HTTP
/// (an `https` URL to a port that serves `http`) says so, naming the host and the port.
pub(super) fn send_detail(e: &reqwest::Error, url: &Url) -> String {
    let kind = if e.is_timeout() {
        "the connection to the upstream timed out"
    } else if e.is_connect() {
        "the connection to the upstream failed"
    } else {
        "the request to the upstream failed"
    };
    let mut cause: Option<&dyn std::error::Error> = e.source();
    let mut last = None;
    while let Some(c) = cause {
        last = Some(c.to_string());
        cause = c.source();
    }
    match last {
        Some(c) if url.scheme() == "https" && is_plain_http_reply(&c) => {
            let host = url.host_str().unwrap_or_default();
            let port = url.port_or_known_default().unwrap_or(443);
            format!(
                "{kind}: the server at {host}:{port} does not speak TLS (https) on that port; is the URL http://?"
            )
        }
        Some(c) => format!("{kind}: {c}"),
        None => kind.to_string(),
    }
}

/// Whether a TLS error is the one a plain-HTTP answer to the ClientHello gives: its first
/// byte (`H` of `HTTP/1.1 400`) is no TLS record content type (RFC 8446 §5.1), which rustls
/// reports as `InvalidContentType`. rustls is reached through reqwest only, so its error is
/// known here by its text.
fn is_plain_http_reply(cause: &str) -> bool {
    cause.contains("InvalidContentType")
}
