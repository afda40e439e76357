//! The browser opener (the reference's Opener): the `webbrowser` crate, which honours
//! `$BROWSER` and starts the program directly (never through a shell), with stdin, stdout and
//! stderr on the null device (`suppress_output`). The bridge removes its secret variables from
//! its own environment at start ([`scrub_secret_env`]), so the browser inherits none. The
//! browser only ever gets the one-time start URL of the receiver, never the authorization URL.

use super::errors::{SignInCause, SignInError};

/// The variables of the environment that hold secrets of the sign-in.
pub const SECRET_ENV: [&str; 2] = ["MCP_BRIDGE_CLIENT_SECRET", "MCP_BRIDGE_TOKEN_KEY"];

/// The secrets of the environment, read once.
#[derive(Clone, Default)]
pub struct EnvSecrets {
    /// `MCP_BRIDGE_CLIENT_SECRET`.
    pub client_secret: Option<String>,
    /// `MCP_BRIDGE_TOKEN_KEY`.
    pub token_key: Option<String>,
}

impl std::fmt::Debug for EnvSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EnvSecrets(..)")
    }
}

/// Reads the secret variables and removes them from the process environment, so no program
/// the bridge starts (the browser, an upstream command) inherits them.
///
/// # Safety
/// Changes the process environment: call it at the start of `main`, before any other thread
/// runs (Rust 2024 `remove_var` rule).
pub unsafe fn scrub_secret_env() -> EnvSecrets {
    let read = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let secrets = EnvSecrets {
        client_secret: read(SECRET_ENV[0]),
        token_key: read(SECRET_ENV[1]),
    };
    for name in SECRET_ENV {
        // SAFETY: the caller runs this before any other thread exists.
        unsafe { std::env::remove_var(name) };
    }
    secrets
}

/// Opens `start_url` in the browser, on a blocking thread (a text browser runs in the
/// foreground). Errors: `browser_launch_failed` with the opener's reason.
pub async fn open(start_url: String) -> Result<(), SignInError> {
    let opened = tokio::task::spawn_blocking(move || {
        let options = webbrowser::BrowserOptions::new()
            .with_suppress_output(true)
            .clone();
        webbrowser::open_browser_with_options(webbrowser::Browser::Default, &start_url, &options)
    })
    .await;
    match opened {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(SignInError::new(
            SignInCause::BrowserLaunchFailed,
            e.kind().to_string(),
        )),
        Err(_) => Err(SignInError::new(
            SignInCause::BrowserLaunchFailed,
            "the opener thread failed",
        )),
    }
}
