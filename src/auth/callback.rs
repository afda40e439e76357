//! The redirect back to the loopback receiver, pure: the state check, the RFC 9207 `iss`
//! check before the code is redeemed, and the authorization server's `error`.

use super::errors::{SignInCause, SignInError};

/// The parameters of a callback query the sign-in reads.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct CallbackParams {
    pub code: Option<String>,
    pub state: Option<String>,
    pub iss: Option<String>,
    pub error: Option<String>,
}

impl std::fmt::Debug for CallbackParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the code or the state.
        f.debug_struct("CallbackParams")
            .field("code", &self.code.as_ref().map(|_| ".."))
            .field("iss", &self.iss)
            .field("error", &self.error)
            .finish()
    }
}

impl CallbackParams {
    /// The parameters of a form-encoded query (the first of each name counts).
    pub fn from_query(query: &str) -> Self {
        let mut p = CallbackParams::default();
        for (k, v) in url::form_urlencoded::parse(query.as_bytes()) {
            let slot = match k.as_ref() {
                "code" => &mut p.code,
                "state" => &mut p.state,
                "iss" => &mut p.iss,
                "error" => &mut p.error,
                _ => continue,
            };
            if slot.is_none() {
                *slot = Some(v.into_owned());
            }
        }
        p
    }
}

/// True when the callback carries the expected state (compared in constant time; the wait
/// ends only for it: another state gets the failure page and the wait goes on).
pub fn state_matches(params: &CallbackParams, expected: &str) -> bool {
    let Some(got) = params.state.as_deref() else {
        return false;
    };
    got.len() == expected.len()
        && got
            .bytes()
            .zip(expected.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// The code to redeem from a callback with the expected state (2026-07-28 step 9, RFC 9207):
/// with `iss_supported` and `iss` present the two must be identical, with `iss_supported` and
/// no `iss` the callback is refused, without the flag a present `iss` is still compared, and
/// both absent proceeds. On an `iss` mismatch the `error` members are not acted on. Then
/// `error=access_denied` is `sign_in_denied`, another `error` `sign_in_error`, and no code
/// `sign_in_failed`. The comparison is exact (no normalization).
pub fn code_from(
    params: &CallbackParams,
    issuer: &str,
    iss_supported: bool,
) -> Result<String, SignInError> {
    match (&params.iss, iss_supported) {
        (Some(iss), _) if iss != issuer => {
            return Err(SignInError::new(
                SignInCause::SignInFailed,
                "the iss of the redirect is not the issuer of the authorization server (RFC 9207)",
            ));
        }
        (None, true) => {
            return Err(SignInError::new(
                SignInCause::SignInFailed,
                "the redirect has no iss though the authorization server promises one (RFC 9207)",
            ));
        }
        _ => {}
    }
    if let Some(e) = &params.error {
        let cause = if e == "access_denied" {
            SignInCause::SignInDenied
        } else {
            SignInCause::SignInError
        };
        // The error code is a registered token, not a secret; anything else is cut.
        let shown: String = e
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
            .take(64)
            .collect();
        return Err(SignInError::new(cause, format!("error {shown}")));
    }
    params
        .code
        .clone()
        .filter(|c| !c.is_empty())
        .ok_or_else(|| SignInError::new(SignInCause::SignInFailed, "the redirect has no code"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ISS: &str = "https://as.example";

    fn q(s: &str) -> CallbackParams {
        CallbackParams::from_query(s)
    }

    #[test]
    fn the_iss_table_of_rfc_9207() {
        assert_eq!(
            code_from(&q("code=c&iss=https%3A%2F%2Fas.example"), ISS, true),
            Ok("c".into())
        );
        assert!(code_from(&q("code=c&iss=https%3A%2F%2Fas.example%2F"), ISS, true).is_err());
        assert!(code_from(&q("code=c&iss=https%3A%2F%2FAS.example"), ISS, false).is_err());
        assert!(code_from(&q("code=c"), ISS, true).is_err());
        assert_eq!(code_from(&q("code=c"), ISS, false), Ok("c".into()));
    }

    #[test]
    fn errors_are_acted_on_only_after_the_iss_check() {
        let e = code_from(&q("error=access_denied&iss=x"), ISS, false).unwrap_err();
        assert_eq!(e.cause, SignInCause::SignInFailed);
        let e = code_from(&q("error=access_denied"), ISS, false).unwrap_err();
        assert_eq!(e.cause, SignInCause::SignInDenied);
        let e = code_from(&q("error=server_error&error_description=boom"), ISS, false).unwrap_err();
        assert_eq!(
            (e.cause, e.detail.as_str()),
            (SignInCause::SignInError, "error server_error")
        );
        let e = code_from(&q("state=s"), ISS, false).unwrap_err();
        assert_eq!(e.cause, SignInCause::SignInFailed);
    }

    #[test]
    fn the_state_must_be_identical_and_debug_shows_no_code() {
        assert!(state_matches(&q("state=abc"), "abc"));
        assert!(!state_matches(&q("state=abd"), "abc"));
        assert!(!state_matches(&q("state=ab"), "abc"));
        assert!(!state_matches(&q("code=x"), "abc"));
        assert!(!format!("{:?}", q("code=SECRET&state=S2")).contains("SECRET"));
        assert!(!format!("{:?}", q("code=SECRET&state=S2")).contains("S2"));
    }
}
