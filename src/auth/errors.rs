//! The sign-in causes of the error table (docs/errors.md, sign-in rows): each failure of a
//! sign-in, a refresh or a store, with a fixed message that names the option to use. A
//! message never holds a token, a code, a verifier, a secret or a redirect query.

use std::fmt;

/// Why a sign-in (or the token of a request) failed; [`SignInError::outcome`] is the text the
/// HTTP transport puts in `data.detail` of the -32603 error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignInError {
    /// The cause of the error table.
    pub cause: SignInCause,
    /// What happened, with no secret (a host, an HTTP status, a metadata member name).
    pub detail: String,
    /// Its warning line is on stderr already (a browser that did not start, written when it
    /// happened; the sign-in then ends at its time limit with this error): not written again.
    pub logged: bool,
}

/// The sign-in causes (docs/errors.md, sign-in rows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignInCause {
    /// Discovery, metadata, a refused check or the code exchange failed.
    SignInFailed,
    /// No callback within `--sign-in-timeout`.
    SignInTimeout,
    /// The user declined (the editor's URL elicitation, or `error=access_denied`), or the
    /// cooldown after a decline is running.
    SignInDenied,
    /// The authorization server answered the callback with another `error`.
    SignInError,
    /// The authorization URL failed `validate_authorization_url`.
    SignInInvalidUrl,
    /// The browser could not be started.
    BrowserLaunchFailed,
    /// The loopback receiver could not listen on `--redirect-port`.
    RedirectPortUnavailable,
    /// A second GET of the one-time start URL.
    SignInStartReused,
    /// No registration path the authorization server accepts.
    RegistrationUnavailable,
    /// Dynamic client registration was refused.
    RegistrationFailed,
    /// `--client-id` is for another issuer (`--client-issuer`).
    IssuerNotRegistered,
    /// `--client-metadata-url` is not an HTTPS URL with a path.
    InvalidClientMetadataUrl,
    /// The upstream refused the access after a sign-in (or a step-up).
    AccessRefused,
    /// A sign-in is needed but cannot reach the user (after `initialized` without URL
    /// elicitation, or `--no-browser` after `initialized`).
    ReauthorizationRequired,
    /// `SANDBOX_RUNTIME=1`: the sandbox blocks the browser, the port and the keychain.
    Sandbox,
    /// The bridge stopped (the end of the input, a signal) while the sign-in ran; no new
    /// sign-in starts.
    SignInCancelled,
    /// The token endpoint answered the client credentials grant with `invalid_client` (RFC
    /// 6749 §5.2): the client ID or its secret is wrong, or the client is not allowed that
    /// grant.
    ClientCredentialsRefused,
    /// The device code of a device sign-in (RFC 8628) expired before the user approved it:
    /// the token endpoint answered `expired_token` (§3.5), or its `expires_in` passed.
    DeviceCodeExpired,
    /// The user denied the device sign-in at the authorization server: the token endpoint
    /// answered `access_denied` (RFC 8628 §3.5).
    DeviceAccessDenied,
    /// `--sign-in device`, and the authorization server's metadata has no
    /// `device_authorization_endpoint` (RFC 8628 §4).
    DeviceAuthorizationUnavailable,
}

impl SignInCause {
    /// The `data.cause` name.
    pub fn name(self) -> &'static str {
        match self {
            SignInCause::SignInFailed => "sign_in_failed",
            SignInCause::SignInTimeout => "sign_in_timeout",
            SignInCause::SignInDenied => "sign_in_denied",
            SignInCause::SignInError => "sign_in_error",
            SignInCause::SignInInvalidUrl => "sign_in_invalid_url",
            SignInCause::BrowserLaunchFailed => "browser_launch_failed",
            SignInCause::RedirectPortUnavailable => "redirect_port_unavailable",
            SignInCause::SignInStartReused => "sign_in_start_reused",
            SignInCause::RegistrationUnavailable => "registration_unavailable",
            SignInCause::RegistrationFailed => "registration_failed",
            SignInCause::IssuerNotRegistered => "issuer_not_registered",
            SignInCause::InvalidClientMetadataUrl => "invalid_client_metadata_url",
            SignInCause::AccessRefused => "access_refused",
            SignInCause::ReauthorizationRequired => "reauthorization_required",
            SignInCause::Sandbox => "sandbox",
            SignInCause::SignInCancelled => "sign_in_cancelled",
            SignInCause::ClientCredentialsRefused => "client_credentials_refused",
            SignInCause::DeviceCodeExpired => "device_code_expired",
            SignInCause::DeviceAccessDenied => "device_access_denied",
            SignInCause::DeviceAuthorizationUnavailable => "device_authorization_unavailable",
        }
    }

    /// The fixed message; it names the option to use where one helps.
    pub fn message(self) -> &'static str {
        match self {
            SignInCause::SignInFailed => "the sign-in failed",
            SignInCause::SignInTimeout => {
                "the sign-in did not complete in time; sign in sooner or raise --sign-in-timeout (if the authorization page refused the client, the authorization server forgot it: run mcp-bridge logout --forget-client <url> with this server's --redirect-port and --token-store)"
            }
            SignInCause::SignInDenied => {
                "the sign-in was declined; the bridge asks again after a cooldown of 60 s"
            }
            SignInCause::SignInError => "the authorization server refused the sign-in",
            SignInCause::SignInInvalidUrl => {
                "the authorization server gave an authorization URL the bridge does not open"
            }
            SignInCause::BrowserLaunchFailed => {
                "the browser did not start; open the URL of the sign-in line on stderr, or use --no-browser"
            }
            SignInCause::RedirectPortUnavailable => {
                "the redirect port is in use by another program; give another one with --redirect-port (the servers of one gateway share it, other bridges each need their own)"
            }
            SignInCause::SignInStartReused => {
                "the one-time start URL was opened twice; open the sign-in URL on the host of the bridge, or use --no-browser and open the URL of the sign-in line yourself"
            }
            SignInCause::RegistrationUnavailable => {
                "the authorization server offers no client registration the bridge can use; register the redirect URI and give --client-id, or --client-metadata-url"
            }
            SignInCause::RegistrationFailed => {
                "the authorization server refused the dynamic client registration; register the redirect URI and give --client-id"
            }
            SignInCause::IssuerNotRegistered => {
                "--client-id belongs to another issuer (--client-issuer); give the client of this authorization server"
            }
            SignInCause::InvalidClientMetadataUrl => {
                "--client-metadata-url must be an https URL with a path"
            }
            SignInCause::AccessRefused => {
                "the upstream server refused the access after the sign-in"
            }
            SignInCause::ReauthorizationRequired => {
                "a sign-in is needed and cannot reach the user now; restart the server (it signs in during initialize)"
            }
            SignInCause::Sandbox => {
                "the sign-in cannot run in the sandbox (SANDBOX_RUNTIME=1); disable the sandbox for this server"
            }
            SignInCause::SignInCancelled => {
                "the bridge is stopping; the sign-in ended unfinished and runs again at the next start"
            }
            SignInCause::ClientCredentialsRefused => {
                "the authorization server refused the client credentials; check --client-id, --client-issuer and MCP_BRIDGE_CLIENT_SECRET"
            }
            SignInCause::DeviceCodeExpired => {
                "the code of the device sign-in expired before the sign-in was approved; the next sign-in (the next request, or a restart of the server) shows a new code: enter it at the address of the sign-in line before it expires"
            }
            SignInCause::DeviceAccessDenied => {
                "the device sign-in was denied at the authorization server; the next sign-in (the next request, or a restart of the server) shows a new code: approve that one, with the account that may use this server"
            }
            SignInCause::DeviceAuthorizationUnavailable => {
                "the authorization server offers no device sign-in (its metadata has no device_authorization_endpoint); sign in in the browser: leave out --sign-in device"
            }
        }
    }
}

impl SignInError {
    /// An error of `cause` with `detail` (no secret in it).
    pub fn new(cause: SignInCause, detail: impl Into<String>) -> Self {
        SignInError {
            cause,
            detail: detail.into(),
            logged: false,
        }
    }

    /// The text of `ChallengeOutcome::Fail`: `<cause>: <message> (<detail>)`.
    pub fn outcome(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for SignInError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.cause.name(), self.cause.message())?;
        if !self.detail.is_empty() {
            write!(f, " ({})", self.detail)?;
        }
        Ok(())
    }
}

impl std::error::Error for SignInError {}

/// A shorthand for `SignInError::new(SignInCause::SignInFailed, detail)`.
pub fn failed(detail: impl Into<String>) -> SignInError {
    SignInError::new(SignInCause::SignInFailed, detail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outcome_starts_with_the_cause_and_names_the_option() {
        let e = SignInError::new(SignInCause::SignInTimeout, "300 s");
        assert!(e.outcome().starts_with("sign_in_timeout: "));
        assert!(e.outcome().contains("--sign-in-timeout"));
        assert!(
            e.outcome()
                .contains("mcp-bridge logout --forget-client <url>")
        );
        assert!(e.outcome().ends_with("(300 s)"));
        assert!(
            SignInCause::RedirectPortUnavailable
                .message()
                .contains("--redirect-port")
        );
        assert!(
            SignInCause::SignInStartReused
                .message()
                .contains("--no-browser")
        );
    }
}
