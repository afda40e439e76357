//! The device authorization grant (RFC 8628), its pure part: how a user signs in
//! (`--sign-in`), the checks of the device authorization response before the bridge shows
//! it, and the causes of the token endpoint's answers while it polls. The flow itself is
//! `signin::device_grant`, over the `oauth2` crate's device flow.

use oauth2::{DeviceCodeErrorResponseType, StandardDeviceAuthorizationResponse};
use std::time::Duration;

use super::errors::{SignInCause, SignInError, failed};
use super::url_check::validate_shown_url;

/// `--sign-in`: how a user signs in with the user's grants (`--grant authorization-code`; the
/// variants' lines are those of `--help`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum SignInMode {
    /// In the browser; with a device code when no browser starts and the server offers it
    #[default]
    Browser,
    /// With a code entered on any device (RFC 8628 device authorization), no browser on this host
    Device,
}

/// The shortest wait between two polls of the token endpoint. RFC 8628 §3.2 makes 5 s the
/// default `interval` (the `oauth2` crate applies it when the member is absent) and lets the
/// server choose another; an `interval` of 0 would poll without a pause.
pub const MIN_POLL_INTERVAL: Duration = Duration::from_secs(1);

/// The longest user code the bridge shows, in characters. RFC 8628 §6.1 wants codes short
/// enough to type (its example has 8 characters); a longer one is not a code to enter.
pub const MAX_USER_CODE_CHARS: usize = 64;

/// What a device sign-in shows, checked: the address and the code of the sign-in line, and
/// the address for the editor's URL elicitation (`verification_uri_complete`, which holds the
/// code, else `verification_uri`; RFC 8628 §3.3.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shown {
    pub verification_uri: String,
    pub user_code: String,
    pub editor_url: String,
}

/// Checks the device authorization response before anything of it is written or shown:
/// the URIs pass [`validate_shown_url`] (https, or http on a loopback host; printable; no
/// user information or fragment), and the user code has 1 to [`MAX_USER_CODE_CHARS`]
/// printable ASCII characters (spaces allowed, RFC 8628 §6.1). Errors: `sign_in_invalid_url`,
/// `sign_in_failed`.
pub fn shown(details: &StandardDeviceAuthorizationResponse) -> Result<Shown, SignInError> {
    // Shown as the server wrote them (the checks parse them, the user reads them).
    let verification_uri = details.verification_uri().as_str().to_string();
    validate_shown_url(&verification_uri)?;
    let editor_url = match details.verification_uri_complete() {
        Some(c) => {
            validate_shown_url(c.secret())?;
            c.secret().clone()
        }
        None => verification_uri.clone(),
    };
    let user_code = details.user_code().secret().clone();
    let chars = user_code.chars().count();
    if chars == 0
        || chars > MAX_USER_CODE_CHARS
        || !user_code.chars().all(|c| c == ' ' || c.is_ascii_graphic())
    {
        return Err(failed(
            "the device authorization response has a user_code the bridge does not show",
        ));
    }
    Ok(Shown {
        verification_uri,
        user_code,
        editor_url,
    })
}

/// The cause of a final answer of the token endpoint to a poll (RFC 8628 §3.5), when it has
/// one of its own: `expired_token` (the crate gives it too when `expires_in` passed) and
/// `access_denied`. `authorization_pending` and `slow_down` never end the polling.
pub fn poll_cause(error: &DeviceCodeErrorResponseType) -> Option<SignInCause> {
    match error {
        DeviceCodeErrorResponseType::ExpiredToken => Some(SignInCause::DeviceCodeExpired),
        DeviceCodeErrorResponseType::AccessDenied => Some(SignInCause::DeviceAccessDenied),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn response(v: serde_json::Value) -> StandardDeviceAuthorizationResponse {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn the_editor_gets_the_complete_uri_and_else_the_verification_uri() {
        let base = json!({"device_code": "d", "user_code": "WDJB-MJHT",
            "verification_uri": "https://as.example/device", "expires_in": 600});
        let mut with = base.clone();
        with["verification_uri_complete"] = json!("https://as.example/device?user_code=WDJB-MJHT");
        assert_eq!(
            shown(&response(with)),
            Ok(Shown {
                verification_uri: "https://as.example/device".into(),
                user_code: "WDJB-MJHT".into(),
                editor_url: "https://as.example/device?user_code=WDJB-MJHT".into(),
            })
        );
        let s = shown(&response(base)).unwrap();
        assert_eq!(s.editor_url, "https://as.example/device");
        // The default interval of RFC 8628 §3.2, as the crate reads an absent member.
        let r = response(json!({"device_code": "d", "user_code": "A",
            "verification_uri": "https://as.example/device", "expires_in": 600}));
        assert_eq!(r.interval(), Duration::from_secs(5));
    }

    #[test]
    fn a_uri_or_code_that_is_not_fit_to_show_is_refused() {
        for (uri, code, cause) in [
            (
                "http://as.example/device",
                "A",
                SignInCause::SignInInvalidUrl,
            ),
            (
                "https://as.example/device#x",
                "A",
                SignInCause::SignInInvalidUrl,
            ),
            ("https://as.example/device", "", SignInCause::SignInFailed),
            (
                "https://as.example/device",
                "A\u{1b}[2J",
                SignInCause::SignInFailed,
            ),
            (
                "https://as.example/device",
                &"A".repeat(65),
                SignInCause::SignInFailed,
            ),
        ] {
            let r = response(json!({"device_code": "d", "user_code": code,
                "verification_uri": uri, "expires_in": 600}));
            assert_eq!(shown(&r).unwrap_err().cause, cause, "{uri} {code:?}");
        }
    }

    #[test]
    fn only_expired_token_and_access_denied_have_causes_of_their_own() {
        use DeviceCodeErrorResponseType::*;
        assert_eq!(
            poll_cause(&ExpiredToken),
            Some(SignInCause::DeviceCodeExpired)
        );
        assert_eq!(
            poll_cause(&AccessDenied),
            Some(SignInCause::DeviceAccessDenied)
        );
        assert_eq!(poll_cause(&AuthorizationPending), None);
        assert_eq!(poll_cause(&SlowDown), None);
    }
}
