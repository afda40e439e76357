//! The grants a sign-in uses (`--grant`), and the token request of the client credentials
//! grant (RFC 6749 §4.4; the MCP extension `io.modelcontextprotocol/oauth-client-credentials`):
//! a pre-registered client's ID and secret, sent with the client authentication the
//! authorization server's metadata offers, no browser and no redirect. It never logs the
//! secret or the token.

use oauth2::basic::{BasicClient, BasicErrorResponse, BasicTokenResponse};
use oauth2::{AuthType, ClientId, ClientSecret, RequestTokenError, Scope, TokenUrl};

use super::errors::{SignInError, failed};
use super::http::{self, AuthHttpError};
use super::metadata::ServerMetadata;
use super::store::records::TokenAuthMethod;

/// `--grant`: how the bridge gets its tokens (the variants' lines are those of `--help`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Grant {
    /// A user signs in (in the browser: authorization code with PKCE; or with a device code: --sign-in), then refreshes
    #[default]
    AuthorizationCode,
    /// Machine to machine: --client-id with MCP_BRIDGE_CLIENT_SECRET, no browser; a new token before expiry
    ClientCredentials,
}

/// The client authentication of a client credentials request at `server`, from its
/// `token_endpoint_auth_methods_supported`: `client_secret_basic` when listed, or when the
/// member is absent (its default, RFC 8414 §2), else `client_secret_post`. Errors: the
/// server lists neither (for example only `private_key_jwt`: `sign_in_failed`).
pub fn auth_method(server: &ServerMetadata) -> Result<TokenAuthMethod, SignInError> {
    let Some(methods) = &server.token_endpoint_auth_methods_supported else {
        return Ok(TokenAuthMethod::ClientSecretBasic);
    };
    for m in [
        TokenAuthMethod::ClientSecretBasic,
        TokenAuthMethod::ClientSecretPost,
    ] {
        if methods.iter().any(|x| x == m.name()) {
            return Ok(m);
        }
    }
    Err(failed(
        "the authorization server offers no client authentication the bridge speaks for the client credentials grant (client_secret_basic, client_secret_post)",
    ))
}

/// One client credentials request at `token_endpoint`: `grant_type=client_credentials`,
/// `scopes` (none: no `scope` parameter), `resource` (RFC 8707), `client_id` and `secret`
/// as `auth` says (HTTP Basic with the form-urlencoded id and secret, RFC 6749 §2.3.1, or
/// both in the body). Errors: the `oauth2` crate's, for the caller to tell `invalid_client`
/// apart.
pub async fn request(
    http: &reqwest::Client,
    token_endpoint: &str,
    client_id: &str,
    secret: &str,
    auth: AuthType,
    scopes: &[String],
    resource: &str,
) -> Result<BasicTokenResponse, RequestTokenError<AuthHttpError, BasicErrorResponse>> {
    let token_url = TokenUrl::new(token_endpoint.to_string())
        .map_err(|_| RequestTokenError::Other("bad token endpoint".into()))?;
    let client = BasicClient::new(ClientId::new(client_id.to_string()))
        .set_client_secret(ClientSecret::new(secret.to_string()))
        .set_auth_type(auth)
        .set_token_uri(token_url);
    let http = http.clone();
    client
        .exchange_client_credentials()
        .add_scopes(scopes.iter().cloned().map(Scope::new))
        .add_extra_param("resource", resource.to_string())
        .request_async(&move |r| http::oauth_request(http.clone(), r))
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::metadata::default_endpoints;

    #[test]
    fn basic_is_preferred_post_is_taken_and_neither_is_refused() {
        let with = |m: Option<Vec<&str>>| ServerMetadata {
            token_endpoint_auth_methods_supported: m
                .map(|v| v.into_iter().map(str::to_string).collect()),
            ..default_endpoints("https://as.example")
        };
        use TokenAuthMethod::{ClientSecretBasic, ClientSecretPost};
        assert_eq!(auth_method(&with(None)), Ok(ClientSecretBasic));
        assert_eq!(
            auth_method(&with(Some(vec![
                "client_secret_post",
                "client_secret_basic"
            ]))),
            Ok(ClientSecretBasic)
        );
        assert_eq!(
            auth_method(&with(Some(vec!["none", "client_secret_post"]))),
            Ok(ClientSecretPost)
        );
        let e = auth_method(&with(Some(vec!["private_key_jwt"]))).unwrap_err();
        assert!(e.detail.contains("client_secret_basic"), "{e}");
    }
}
