//! The sign-in options of the URL form (`--client-id`, `--client-issuer`,
//! `--client-metadata-url`, `--grant`, `--sign-in`, `--redirect-port`, `--account`, `--token-store`,
//! `--token-key-file`, `--no-browser`, `--sign-in-timeout`, `--authorize-param`), flattened
//! into the command line, and the settings they make.

use std::path::PathBuf;
use std::time::Duration;
use url::Url;

use crate::auth::client_credentials::Grant;
use crate::auth::device::SignInMode;
use crate::auth::errors::SignInCause;
use crate::auth::opener::EnvSecrets;
use crate::auth::receiver::DEFAULT_REDIRECT_PORT;
use crate::auth::registration::{RegistrationOptions, check_metadata_url};
use crate::auth::signin::SignInConfig;
use crate::auth::store::StoreChoice;

/// `SANDBOX_RUNTIME`: `1` means the editor's sandbox blocks the browser, the port and the
/// keychain.
pub const SANDBOX_ENV: &str = "SANDBOX_RUNTIME";

/// The heading of the sign-in options in `--help`.
const SIGN_IN_HEADING: &str = "Sign-in (URL form)";

/// The sign-in options (their own section of `--help`: a `next_help_heading` here would also
/// head the parent's arguments that follow the flattened ones).
#[derive(clap::Args, Clone, Debug)]
pub struct SignInArgs {
    /// URL form: use this client ID, issued by the authorization server (its secret comes from MCP_BRIDGE_CLIENT_SECRET)
    #[arg(help_heading = SIGN_IN_HEADING, long, value_name = "ID")]
    pub client_id: Option<String>,
    /// URL form: the issuer of --client-id; a client with a secret needs it
    #[arg(help_heading = SIGN_IN_HEADING, long, value_name = "URL")]
    pub client_issuer: Option<String>,
    /// URL form: use the client ID metadata document at this https URL
    #[arg(help_heading = SIGN_IN_HEADING, long, value_name = "URL")]
    pub client_metadata_url: Option<String>,
    /// URL form: how the bridge gets its tokens
    #[arg(help_heading = SIGN_IN_HEADING, long, value_enum, value_name = "GRANT", default_value = "authorization-code")]
    pub grant: Grant,
    /// URL form: how a user signs in (with --grant authorization-code)
    #[arg(help_heading = SIGN_IN_HEADING, long = "sign-in", value_enum, value_name = "HOW", default_value = "browser")]
    pub sign_in: SignInMode,
    /// URL form: the port of the redirect URI http://127.0.0.1:PORT/callback
    #[arg(help_heading = SIGN_IN_HEADING, long, value_name = "PORT", default_value_t = DEFAULT_REDIRECT_PORT,
          value_parser = clap::value_parser!(u16).range(1..), allow_negative_numbers = true)]
    pub redirect_port: u16,
    /// URL form: the account of the stored sign-in
    #[arg(help_heading = SIGN_IN_HEADING, long, value_name = "LABEL", default_value = "default")]
    pub account: String,
    /// URL form: where the tokens are kept
    #[arg(help_heading = SIGN_IN_HEADING, long, value_enum, value_name = "STORE", default_value = "auto")]
    pub token_store: StoreChoice,
    /// URL form: the file with the 64-hex-digit key of the file store (private to your account)
    #[arg(help_heading = SIGN_IN_HEADING, long, value_name = "PATH")]
    pub token_key_file: Option<PathBuf>,
    /// URL form: never open a browser; only write the sign-in line to stderr
    #[arg(help_heading = SIGN_IN_HEADING, long)]
    pub no_browser: bool,
    /// URL form: time limit of one sign-in (in the browser, or with a device code), in seconds
    #[arg(help_heading = SIGN_IN_HEADING, long, value_name = "SECONDS", default_value = "300", value_parser = super::seconds, allow_negative_numbers = true)]
    pub sign_in_timeout: f64,
    /// URL form: add NAME=VALUE to the authorization request, for an authorization server that needs it (an audience, for example); repeatable
    #[arg(help_heading = SIGN_IN_HEADING, long = "authorize-param", value_name = "NAME=VALUE", value_parser = authorize_param)]
    pub authorize_params: Vec<(String, String)>,
}

/// The parameters of the authorization request that the bridge sets itself (RFC 6749 §4.1.1,
/// RFC 7636 §4.3, RFC 8707 §2): `--authorize-param` cannot replace them, since the sign-in's
/// security (the redirect, the state, PKCE) and the token's audience rest on them.
const OWN_AUTHORIZE_PARAMS: [&str; 8] = [
    "response_type",
    "client_id",
    "redirect_uri",
    "scope",
    "state",
    "code_challenge",
    "code_challenge_method",
    "resource",
];

/// Why a `--authorize-param` is refused (clap adds the option and the value).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AuthorizeParamError {
    #[error("expected NAME=VALUE")]
    NoEquals,
    #[error("the parameter name is empty")]
    EmptyName,
    /// A parameter the bridge sets itself (`state`, `redirect_uri`, ...): the sign-in's
    /// security rests on it.
    #[error("{0} is a parameter the bridge sets itself; it cannot be replaced")]
    OwnParam(String),
}

/// Reads `--authorize-param NAME=VALUE` (split at the first `=`; the value may be empty).
/// Errors: [`AuthorizeParamError`].
pub fn authorize_param(arg: &str) -> Result<(String, String), AuthorizeParamError> {
    let Some((name, value)) = arg.split_once('=') else {
        return Err(AuthorizeParamError::NoEquals);
    };
    if name.is_empty() {
        return Err(AuthorizeParamError::EmptyName);
    }
    if OWN_AUTHORIZE_PARAMS.contains(&name) {
        return Err(AuthorizeParamError::OwnParam(name.to_owned()));
    }
    Ok((name.to_string(), value.to_string()))
}

/// Why the sign-in options do not go together ([`SignInArgs::check`]): the usage message
/// (exit 2).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SignInOptionsError {
    /// `--grant client-credentials` without `--client-id`.
    #[error(
        "--grant client-credentials needs --client-id (and its secret in MCP_BRIDGE_CLIENT_SECRET)"
    )]
    ClientCredentialsWithoutClientId,
    /// `--grant client-credentials` without `MCP_BRIDGE_CLIENT_SECRET`.
    #[error("--grant client-credentials needs the client's secret in MCP_BRIDGE_CLIENT_SECRET")]
    ClientCredentialsWithoutSecret,
    /// `--grant client-credentials` with `--client-metadata-url`, which only a user's sign-in
    /// uses.
    #[error("--client-metadata-url does not apply to --grant client-credentials")]
    ClientCredentialsWithMetadataUrl,
    /// `--grant client-credentials` with `--sign-in device`: no user signs in.
    #[error("--sign-in device does not apply to --grant client-credentials (no user signs in)")]
    ClientCredentialsWithDevice,
    /// `MCP_BRIDGE_CLIENT_SECRET` without `--client-id` and `--client-issuer`.
    #[error(
        "MCP_BRIDGE_CLIENT_SECRET needs --client-id and --client-issuer (the secret only goes to that issuer)"
    )]
    SecretWithoutClient,
    /// `--client-issuer` without `--client-id`.
    #[error("--client-issuer needs --client-id")]
    IssuerWithoutClientId,
    #[error("--client-issuer must be a URL")]
    IssuerNotAUrl,
    /// `--client-metadata-url` breaks its rule: the message of its sign-in cause.
    #[error("{}", .0.message())]
    MetadataUrl(SignInCause),
    #[error("--account must not be empty")]
    EmptyAccount,
}

impl SignInArgs {
    /// True when any sign-in option differs from its default.
    pub fn given(&self) -> bool {
        self.client_id.is_some()
            || self.client_issuer.is_some()
            || self.client_metadata_url.is_some()
            || self.grant != Grant::AuthorizationCode
            || self.sign_in != SignInMode::Browser
            || self.redirect_port != DEFAULT_REDIRECT_PORT
            || self.account != "default"
            || self.token_store != StoreChoice::Auto
            || self.token_key_file.is_some()
            || self.no_browser
            || self.sign_in_timeout != 300.0
            || !self.authorize_params.is_empty()
    }

    /// Checks the combinations: `--grant client-credentials` needs `--client-id` and its
    /// secret, and takes no `--client-metadata-url` and no `--sign-in device` (no user signs
    /// in); a client secret needs `--client-id` and
    /// `--client-issuer`; `--client-issuer` needs `--client-id`; `--client-metadata-url` is an
    /// https URL with a path. Errors: [`SignInOptionsError`].
    pub fn check(&self, secrets: &EnvSecrets) -> Result<(), SignInOptionsError> {
        if self.grant == Grant::ClientCredentials {
            if self.client_id.is_none() {
                return Err(SignInOptionsError::ClientCredentialsWithoutClientId);
            }
            if secrets.client_secret.is_none() {
                return Err(SignInOptionsError::ClientCredentialsWithoutSecret);
            }
            if self.client_metadata_url.is_some() {
                return Err(SignInOptionsError::ClientCredentialsWithMetadataUrl);
            }
            if self.sign_in == SignInMode::Device {
                return Err(SignInOptionsError::ClientCredentialsWithDevice);
            }
        }
        if secrets.client_secret.is_some()
            && (self.client_id.is_none() || self.client_issuer.is_none())
        {
            return Err(SignInOptionsError::SecretWithoutClient);
        }
        if self.client_issuer.is_some() && self.client_id.is_none() {
            return Err(SignInOptionsError::IssuerWithoutClientId);
        }
        if let Some(i) = &self.client_issuer
            && Url::parse(i).is_err()
        {
            return Err(SignInOptionsError::IssuerNotAUrl);
        }
        if let Some(u) = &self.client_metadata_url {
            check_metadata_url(u).map_err(|e| SignInOptionsError::MetadataUrl(e.cause))?;
        }
        if self.account.is_empty() {
            return Err(SignInOptionsError::EmptyAccount);
        }
        Ok(())
    }

    /// The settings of a sign-in at `server_url`.
    pub fn config(&self, server_url: Url, secrets: &EnvSecrets) -> SignInConfig {
        let mut c = SignInConfig::new(server_url);
        c.account = self.account.clone();
        c.redirect_port = self.redirect_port;
        c.registration = RegistrationOptions {
            client_id: self.client_id.clone(),
            client_issuer: self.client_issuer.clone(),
            client_secret: secrets.client_secret.clone(),
            client_metadata_url: self.client_metadata_url.clone(),
        };
        c.grant = self.grant;
        c.sign_in = self.sign_in;
        c.sign_in_timeout = Duration::from_secs_f64(self.sign_in_timeout);
        c.no_browser = self.no_browser;
        c.authorize_params = self.authorize_params.clone();
        c.sandbox = std::env::var(SANDBOX_ENV).is_ok_and(|v| v == "1");
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_authorize_param_is_name_equals_value_and_not_one_the_bridge_sets() {
        assert_eq!(
            authorize_param("audience=https://api.example.com/a=b"),
            Ok(("audience".into(), "https://api.example.com/a=b".into()))
        );
        assert_eq!(
            authorize_param("prompt="),
            Ok(("prompt".into(), String::new()))
        );
        let refused = |arg| authorize_param(arg).map_err(|e| e.to_string());
        assert_eq!(
            authorize_param("audience"),
            Err(AuthorizeParamError::NoEquals)
        );
        assert_eq!(refused("audience"), Err("expected NAME=VALUE".into()));
        assert_eq!(refused("=x"), Err("the parameter name is empty".into()));
        assert_eq!(
            refused("state=1"),
            Err("state is a parameter the bridge sets itself; it cannot be replaced".into())
        );
    }

    /// The sign-in options of `args` (after the program's name), as clap parses them.
    fn parsed(args: &[&str]) -> SignInArgs {
        #[derive(clap::Parser)]
        struct Line {
            #[command(flatten)]
            sign_in: SignInArgs,
        }
        let line = <Line as clap::Parser>::try_parse_from(
            std::iter::once("t").chain(args.iter().copied()),
        );
        match line {
            Ok(line) => line.sign_in,
            Err(e) => panic!("{args:?} does not parse: {e}"),
        }
    }

    #[test]
    fn options_that_do_not_go_together_are_named_with_the_rule() {
        let secret = || EnvSecrets {
            client_secret: Some("s".into()),
            token_key: None,
            ..EnvSecrets::default()
        };
        let none = EnvSecrets::default;
        for (args, secrets, refusal, text) in [
            (
                &["--grant", "client-credentials"][..],
                secret(),
                SignInOptionsError::ClientCredentialsWithoutClientId,
                "--grant client-credentials needs --client-id (and its secret in MCP_BRIDGE_CLIENT_SECRET)",
            ),
            (
                &["--grant", "client-credentials", "--client-id", "c"][..],
                none(),
                SignInOptionsError::ClientCredentialsWithoutSecret,
                "--grant client-credentials needs the client's secret in MCP_BRIDGE_CLIENT_SECRET",
            ),
            (
                &[
                    "--grant",
                    "client-credentials",
                    "--client-id",
                    "c",
                    "--client-metadata-url",
                    "https://client.example/meta",
                ][..],
                secret(),
                SignInOptionsError::ClientCredentialsWithMetadataUrl,
                "--client-metadata-url does not apply to --grant client-credentials",
            ),
            (
                &[
                    "--grant",
                    "client-credentials",
                    "--client-id",
                    "c",
                    "--sign-in",
                    "device",
                ][..],
                secret(),
                SignInOptionsError::ClientCredentialsWithDevice,
                "--sign-in device does not apply to --grant client-credentials (no user signs in)",
            ),
            (
                &["--client-id", "c"][..],
                secret(),
                SignInOptionsError::SecretWithoutClient,
                "MCP_BRIDGE_CLIENT_SECRET needs --client-id and --client-issuer (the secret only goes to that issuer)",
            ),
            (
                &["--client-issuer", "https://issuer.example"][..],
                none(),
                SignInOptionsError::IssuerWithoutClientId,
                "--client-issuer needs --client-id",
            ),
        ] {
            let checked = parsed(args).check(&secrets);
            assert_eq!(checked, Err(refusal.clone()), "{args:?}");
            assert_eq!(refusal.to_string(), text);
        }
    }
}
