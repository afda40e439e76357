//! The URL form of the command line (`mcp-bridge [OPTIONS] <URL>`): what is a URL and what is
//! refused as one, and the reading of the URL form's options (headers, CA file, proxy
//! variables) into the transport's [`HttpSpec`].

use std::ffi::OsStr;

use super::Cli;
use crate::log::files::CannotRead;
use crate::transport::http::client::{ProxyEnv, is_loopback};
use crate::transport::http::headers::{HeaderError, check_user_header, looks_secret};
use crate::transport::http::{DEFAULT_MAX_RESPONSE_BYTES, HttpSpec};

/// Whether the first positional argument is a URL (`scheme://...`, RFC 3986 scheme syntax)
/// rather than a command. Every scheme counts, so that `ftp://user:pw@host/` is refused by
/// [`check_url`] (exit 2, the URL never shown) instead of being started as a program whose
/// name, user info included, would appear in the `spawn_failed` line. A command whose name
/// really contains `://` can be given as `./name`.
fn looks_like_url(arg: &OsStr) -> bool {
    let a = arg.to_string_lossy();
    let Some((scheme, _)) = a.split_once("://") else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// The rule of the URL form, named by the errors about a URL that is not one.
const URL_FORM_RULE: &str = "write it as https://HOST/PATH, or http://HOST/PATH to a loopback host (localhost, *.localhost, 127.0.0.0/8, [::1])";

/// Whether the first positional argument is an attempt at an `http`/`https` URL that is not
/// in the `scheme://` form ([`looks_like_url`] is false): `https:/x`, `https:x`, `http:\\x`
/// (any case). Such an argument is refused (exit 2, naming the URL rules) instead of being
/// started as a program called `https:/x`. A program whose name really starts so can be
/// given as `./https:x`.
fn looks_like_a_mistyped_url(arg: &OsStr) -> bool {
    let a = arg.as_encoded_bytes();
    let scheme_len = a.iter().position(|&b| b == b':').unwrap_or(0);
    let scheme = &a[..scheme_len];
    (scheme.eq_ignore_ascii_case(b"http") || scheme.eq_ignore_ascii_case(b"https"))
        && !looks_like_url(arg)
}

/// Which rule the upstream URL breaks ([`check_url`]): the text names the rule, never the URL
/// (it may carry a secret in its query).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// The url crate does not parse it (its reason names no part of the URL).
    #[error("the URL is not valid ({0})")]
    NotAUrl(url::ParseError),
    #[error("the URL uses http with a host that is not loopback: use https")]
    HttpNotLoopback,
    #[error("the URL must use https (or http to a loopback host)")]
    Scheme,
    #[error("the URL has no host")]
    NoHost,
    #[error("the URL must not carry a user or a password")]
    UserInfo,
    #[error("the URL must not have a fragment")]
    Fragment,
}

/// Checks the upstream URL: `https`, or `http` to a loopback host; no user info, no
/// fragment. Errors: [`UrlError`].
pub fn check_url(text: &str) -> Result<url::Url, UrlError> {
    let url = url::Url::parse(text).map_err(UrlError::NotAUrl)?;
    match url.scheme() {
        "https" => {}
        "http" if is_loopback(&url) => {}
        "http" => return Err(UrlError::HttpNotLoopback),
        _ => return Err(UrlError::Scheme),
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(UrlError::NoHost);
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(UrlError::UserInfo);
    }
    if url.fragment().is_some() {
        return Err(UrlError::Fragment);
    }
    Ok(url)
}

/// Why the URL form cannot be read ([`Cli`]'s URL, headers and CA file): the cause for the
/// usage line (exit [`super::EXIT_USAGE`]). Never the URL or a header's value (they may carry a
/// secret); a header's name and a variable's name are the user's own words.
#[derive(Debug, thiserror::Error)]
pub enum UrlFormError {
    /// The first argument starts like an http(s) URL but does not parse as one.
    #[error(
        "the upstream starts like an http(s) URL but is not one: {}",
        URL_FORM_RULE
    )]
    MistypedUrl,
    /// An option of the URL form given with a command: the option's words.
    #[error("{0} apply only to a URL upstream")]
    OnlyForUrl(&'static str),
    #[error("the URL form takes no arguments after the URL")]
    ArgumentsAfterUrl,
    #[error("the URL is not valid UTF-8")]
    NotUtf8,
    #[error(transparent)]
    Url(#[from] UrlError),
    /// `--header` without `:`, `--header-env` without `=`: the option and its form.
    #[error("{option} takes {form}")]
    OptionForm {
        option: &'static str,
        form: &'static str,
    },
    #[error(transparent)]
    HeaderName(#[from] HeaderError),
    /// The value given with `--header` is not valid header text.
    #[error("the value of the header {0} is not valid header text")]
    HeaderValue(reqwest::header::HeaderName),
    /// The variable that `--header-env` names is not set.
    #[error("the variable {var} of --header-env {header} is not set")]
    VariableUnset { var: String, header: String },
    /// The variable that `--header-env` names holds no valid header text.
    #[error("the variable {var} of --header-env {header} is not valid header text")]
    VariableValue { var: String, header: String },
    #[error(transparent)]
    CaFile(#[from] CannotRead),
    /// `--ca-file` holds no PEM certificate: its path.
    #[error("--ca-file {0} holds no PEM certificate")]
    NoCertificate(String),
}

impl Cli {
    /// Reads the URL form (when the first positional argument is a URL): the URL rules,
    /// the headers (`--header-env` variables read now), the CA file, the proxy variables.
    /// URL-form options with a command are refused. Errors: [`UrlFormError`].
    pub(super) fn read_url_form(&mut self) -> Result<(), UrlFormError> {
        let url_options = !self.header.is_empty()
            || !self.header_env.is_empty()
            || self.ca_file.is_some()
            || self.max_response_bytes != DEFAULT_MAX_RESPONSE_BYTES as u64;
        if self
            .command
            .first()
            .is_some_and(|a| looks_like_a_mistyped_url(a))
        {
            // Never the argument itself: a URL may carry a secret in its query.
            return Err(UrlFormError::MistypedUrl);
        }
        let Some(first) = self.command.first().filter(|a| looks_like_url(a)) else {
            if self.sign_in.given() {
                return Err(UrlFormError::OnlyForUrl("the sign-in options"));
            }
            if url_options {
                return Err(UrlFormError::OnlyForUrl(
                    "--header, --header-env, --ca-file and --max-response-bytes",
                ));
            }
            return Ok(());
        };
        if self.command.len() > 1 {
            return Err(UrlFormError::ArgumentsAfterUrl);
        }
        let text = first.to_str().ok_or(UrlFormError::NotUtf8)?;
        let mut spec = HttpSpec::new(check_url(text)?);
        for h in &self.header {
            let (name, value) = h.split_once(':').ok_or(UrlFormError::OptionForm {
                option: "--header",
                form: "NAME:VALUE",
            })?;
            let name = check_user_header(name.trim())?;
            if looks_secret(&name) {
                self.warnings.push(format!(
                    "the header {name} given with --header usually carries a secret: the command line shows in process lists and editor logs; use --header-env"
                ));
            }
            let mut value = reqwest::header::HeaderValue::from_str(value.trim())
                .map_err(|_| UrlFormError::HeaderValue(name.clone()))?;
            value.set_sensitive(true);
            spec.headers.push((name, value));
        }
        for h in &self.header_env {
            let (name, var) = h.split_once('=').ok_or(UrlFormError::OptionForm {
                option: "--header-env",
                form: "NAME=VAR",
            })?;
            // The errors name the header as the user typed it (a HeaderName is lowercase).
            let typed = name.trim();
            let name = check_user_header(typed)?;
            let text = std::env::var(var).map_err(|_| UrlFormError::VariableUnset {
                var: var.to_owned(),
                header: typed.to_owned(),
            })?;
            let mut value = reqwest::header::HeaderValue::from_str(text.trim()).map_err(|_| {
                UrlFormError::VariableValue {
                    var: var.to_owned(),
                    header: typed.to_owned(),
                }
            })?;
            value.set_sensitive(true);
            spec.headers.push((name, value));
        }
        if let Some(path) = &self.ca_file {
            let pem = crate::log::files::read_option_file("--ca-file", path)?;
            match reqwest::Certificate::from_pem_bundle(&pem) {
                Ok(certs) if !certs.is_empty() => {}
                _ => {
                    return Err(UrlFormError::NoCertificate(path.display().to_string()));
                }
            }
            spec.ca_pem = Some(pem);
        }
        spec.max_response_bytes = self.max_response_bytes as usize;
        spec.proxy = ProxyEnv::from_env();
        self.http = Some(spec);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mistyped_http_url_is_told_from_a_command() {
        for (arg, mistyped) in [
            ("https:/x", true),
            ("https:x", true),
            ("HTTP:/localhost/mcp", true),
            ("http:\\\\localhost\\mcp", true),
            ("https:", true),
            ("https://h/mcp", false),
            ("http://localhost/mcp", false),
            ("ftp:/x", false),
            ("httpsx:/x", false),
            ("./https:x", false),
            ("python3", false),
            ("", false),
        ] {
            assert_eq!(
                looks_like_a_mistyped_url(std::ffi::OsStr::new(arg)),
                mistyped,
                "{arg}"
            );
        }
    }

    #[test]
    fn the_url_rules_of_the_url_form() {
        let table: &[(&str, Result<(), &str>)] = &[
            ("https://mcp.example.com/mcp", Ok(())),
            ("https://mcp.example.com:8443/mcp?x=1", Ok(())),
            ("http://127.0.0.1:8080/mcp", Ok(())),
            ("http://localhost/mcp", Ok(())),
            ("http://app.localhost/mcp", Ok(())),
            ("http://[::1]:9/mcp", Ok(())),
            ("HTTP://127.0.0.2/mcp", Ok(())),
            (
                "http://mcp.example.com/mcp",
                Err("the URL uses http with a host that is not loopback: use https"),
            ),
            (
                "http://10.0.0.1/mcp",
                Err("the URL uses http with a host that is not loopback: use https"),
            ),
            (
                "https://user:pw@mcp.example.com/mcp",
                Err("the URL must not carry a user or a password"),
            ),
            (
                "https://user@mcp.example.com/mcp",
                Err("the URL must not carry a user or a password"),
            ),
            (
                "https://mcp.example.com/mcp#frag",
                Err("the URL must not have a fragment"),
            ),
            (
                "https://mcp.example.com/mcp#",
                Err("the URL must not have a fragment"),
            ),
            ("https:///mcp", Ok(())),
        ];
        for (url, want) in table {
            let got = check_url(url).map(|_| ());
            match (want, &got) {
                // "https:///mcp" parses with the host "mcp" (the url crate's special-scheme rule).
                (Ok(()), Ok(())) => {}
                (Err(w), Err(g)) => assert_eq!(g.to_string(), *w, "{url}"),
                _ => panic!("{url}: want {want:?}, got {got:?}"),
            }
        }
        assert!(check_url("https://").is_err());
        assert!(check_url("ftp://x/y").is_err());
    }
}
