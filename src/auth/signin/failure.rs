//! A failed request of a sign-in at the token endpoint (or the device authorization
//! endpoint), told apart as the flows need it, and its error without the response body
//! (which may hold tokens).

use oauth2::RequestTokenError;
use oauth2::basic::{BasicErrorResponse, BasicErrorResponseType};

use crate::auth::errors::{SignInError, failed};
use crate::auth::http::AuthHttpError;

/// A failed token request, `invalid_client` (RFC 6749 §5.2: the client is unknown or its
/// authentication failed) told apart from the rest; or a browser that did not start, where a
/// device sign-in can take over.
pub(super) enum TokenFailure {
    InvalidClient(SignInError),
    Other(SignInError),
    NoBrowser(SignInError),
}

impl From<SignInError> for TokenFailure {
    fn from(e: SignInError) -> Self {
        TokenFailure::Other(e)
    }
}

impl TokenFailure {
    pub(super) fn from_request(e: RequestTokenError<AuthHttpError, BasicErrorResponse>) -> Self {
        let invalid_client = matches!(&e, RequestTokenError::ServerResponse(r)
            if *r.error() == BasicErrorResponseType::InvalidClient);
        let error = token_error(e);
        if invalid_client {
            TokenFailure::InvalidClient(error)
        } else {
            TokenFailure::Other(error)
        }
    }
}

/// A failed token request, without the response body (it may hold tokens).
pub(super) fn token_error<T: oauth2::ErrorResponse + 'static>(
    e: RequestTokenError<AuthHttpError, T>,
) -> SignInError {
    match e {
        RequestTokenError::ServerResponse(r) => failed(format!(
            "the token endpoint refused the request ({})",
            error_code(&r)
        )),
        RequestTokenError::Request(e) => failed(format!("token request: {e}")),
        RequestTokenError::Parse(..) => failed("the token response is not valid"),
        RequestTokenError::Other(_) => failed("the token request failed"),
    }
}

/// The `error` code of an error response, as far as it is safe to show (at most 64 ASCII
/// letters, digits and `_`).
pub(super) fn error_code<T: oauth2::ErrorResponse>(r: &T) -> String {
    let code = serde_json::to_value(r)
        .ok()
        .and_then(|v| v["error"].as_str().map(str::to_string))
        .unwrap_or_default();
    code.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .take(64)
        .collect()
}
