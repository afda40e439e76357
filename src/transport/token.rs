//! The seam between the HTTP transport and sign-in: the transport asks a
//! [`TokenProvider`] for the access token of every request, and hands every 401 or 403
//! response back to it as a [`Challenge`]. The transport never learns OAuth; sign-in never
//! learns HTTP requests of MCP. Without sign-in the transport uses [`NoToken`].
//!
//! The rules are those of 2026-07-28 basic/authorization (RFC 6750 bearer tokens, RFC 9728
//! `WWW-Authenticate: Bearer resource_metadata=...`).

use futures_util::future::LocalBoxFuture;
use std::fmt;

/// An access token: the value of `Authorization: Bearer <token>`. Its `Debug` and `Display`
/// never show the value (no token in any log line).
#[derive(Clone, PartialEq, Eq)]
pub struct AccessToken(String);

impl AccessToken {
    /// Wraps a token value.
    pub fn new(value: String) -> Self {
        AccessToken(value)
    }

    /// The secret value, for the `Authorization` header only.
    pub fn secret(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AccessToken(..)")
    }
}

/// A 401 or 403 response of the upstream, as the HTTP transport hands it to the provider.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Challenge {
    /// The HTTP status: 401 (no or expired token) or 403 (e.g. `insufficient_scope`).
    pub status: u16,
    /// Every `WWW-Authenticate` header value of the response, verbatim, in order.
    pub www_authenticate: Vec<String>,
    /// The token the failed request carried, if any (so a provider can tell a stale token
    /// from one it already replaced).
    pub rejected: Option<AccessToken>,
}

/// What the transport does after a [`Challenge`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChallengeOutcome {
    /// A new token is ready (a refresh, a sign-in, a step-up): send the request once more,
    /// asking [`TokenProvider::access_token`] again.
    Retry,
    /// No token will come for this request: fail it with -32603, this cause in `data.detail`
    /// (a sign-in cause of the error table, e.g. `sign_in_declined`; never a secret).
    Fail(String),
}

/// Gives the HTTP transport the token of each request and answers its challenges. Both
/// futures run on the transport's thread (the actix System); a provider that does blocking
/// work (a keychain) does it on a thread of its own.
pub trait TokenProvider {
    /// The token for the next request, or `None` to send the request without
    /// `Authorization` (not signed in yet: the upstream's 401 starts the sign-in).
    fn access_token(&self) -> LocalBoxFuture<'static, Option<AccessToken>>;

    /// A 401 or 403 response of a request; resolves when the request may be sent again
    /// ([`ChallengeOutcome::Retry`]: refreshed, signed in, stepped up) or with the cause that
    /// fails it. The transport retries a request at most once per challenge it hands over, and
    /// hands at most [`MAX_CHALLENGES_PER_REQUEST`] challenges per request.
    fn challenge(&self, challenge: Challenge) -> LocalBoxFuture<'static, ChallengeOutcome>;
}

/// Most challenges (and so retries) for one request: one for a 401 (refresh or sign-in), one
/// more for a 403 step-up, so that a server that challenges every token cannot make a loop.
pub const MAX_CHALLENGES_PER_REQUEST: usize = 2;

/// The provider without sign-in: no token, and every challenge fails the request with the
/// cause `sign_in_unavailable`.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoToken;

impl TokenProvider for NoToken {
    fn access_token(&self) -> LocalBoxFuture<'static, Option<AccessToken>> {
        Box::pin(async { None })
    }

    fn challenge(&self, challenge: Challenge) -> LocalBoxFuture<'static, ChallengeOutcome> {
        Box::pin(async move {
            ChallengeOutcome::Fail(format!(
                "sign_in_unavailable: the upstream answered HTTP {} and this bridge has no sign-in",
                challenge.status
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_access_token_never_shows_its_value() {
        let token = AccessToken::new("s3cret".into());
        assert_eq!(format!("{token:?}"), "AccessToken(..)");
        let challenge = Challenge {
            status: 401,
            www_authenticate: vec![],
            rejected: Some(token.clone()),
        };
        assert!(!format!("{challenge:?}").contains("s3cret"));
        assert_eq!(token.secret(), "s3cret");
    }

    #[test]
    fn no_token_fails_every_challenge_with_its_cause() {
        let outcome = futures_util::FutureExt::now_or_never(NoToken.challenge(Challenge {
            status: 401,
            www_authenticate: vec!["Bearer".into()],
            rejected: None,
        }));
        assert_eq!(
            outcome,
            Some(ChallengeOutcome::Fail(
                "sign_in_unavailable: the upstream answered HTTP 401 and this bridge has no sign-in"
                    .into()
            ))
        );
        assert_eq!(
            futures_util::FutureExt::now_or_never(NoToken.access_token()),
            Some(None)
        );
    }
}
