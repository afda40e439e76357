//! The browser opener: the `webbrowser` crate, which honours
//! `$BROWSER` and starts the program directly (never through a shell), with stdin, stdout and
//! stderr on the null device (`suppress_output`). The bridge removes its secret variables
//! (`MCP_BRIDGE_TOKEN_KEY`, `MCP_BRIDGE_CLIENT_SECRET`, `MCP_BRIDGE_LISTEN_TOKEN`:
//! [`scrub_secret_env`]; those named by
//! `--header-env`: [`scrub_vars`]) from its own environment at start, after reading them, so
//! the browser inherits none. The
//! browser only ever gets the one-time start URL of the receiver, never the authorization URL.

use super::errors::{SignInCause, SignInError};

/// The variables of the environment that hold secrets of the sign-in.
/// (`MCP_BRIDGE_LISTEN_TOKEN` is the bearer token of `--serve-http`, a secret of the same
/// kind: no program the bridge starts may read it.)
pub const SECRET_ENV: [&str; 3] = [
    "MCP_BRIDGE_CLIENT_SECRET",
    "MCP_BRIDGE_TOKEN_KEY",
    "MCP_BRIDGE_LISTEN_TOKEN",
];

/// The secrets of the environment, read once.
#[derive(Clone, Default)]
pub struct EnvSecrets {
    /// `MCP_BRIDGE_CLIENT_SECRET`.
    pub client_secret: Option<String>,
    /// `MCP_BRIDGE_TOKEN_KEY`.
    pub token_key: Option<String>,
    /// `MCP_BRIDGE_LISTEN_TOKEN`: the bearer token that clients of `--serve-http` send.
    pub listen_token: Option<String>,
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
        listen_token: read(SECRET_ENV[2]),
    };
    for name in SECRET_ENV {
        // SAFETY: the caller runs this before any other thread exists.
        unsafe { std::env::remove_var(name) };
    }
    secrets
}

/// Removes the variables of `--header-env` (`vars`, already read into the headers) from the
/// process environment, so the browser and any other program the bridge starts inherit
/// none of them: the browser gets no secret from the environment.
///
/// # Safety
/// Changes the process environment: call it in `main` before any other thread runs.
pub unsafe fn scrub_vars(vars: &[String]) {
    for name in vars {
        if !name.is_empty() && !name.contains(['=', '\0']) {
            // SAFETY: the caller runs this before any other thread exists.
            unsafe { std::env::remove_var(name) };
        }
    }
}

/// What opens the start URL of a sign-in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BrowserOpener {
    /// The system's browser through the `webbrowser` crate, which honours `$BROWSER`: the
    /// values of `BROWSER` and `PATH` read once at start ([`BrowserOpener::from_env`]), for
    /// the checks before the crate runs anything.
    System {
        /// `$BROWSER`.
        browser_env: Option<String>,
        /// `$PATH`.
        path_env: Option<String>,
    },
    /// A program run as `<program> <start URL>` (no shell), with stdin, stdout and stderr on
    /// the null device; for an embedder that brings its own browser, and for tests, which
    /// run many sign-ins in one process and cannot share one `$BROWSER`.
    #[cfg(feature = "internals")]
    Program(std::path::PathBuf),
}

impl BrowserOpener {
    /// The system's browser, with `BROWSER` and `PATH` as the environment has them now.
    pub fn from_env() -> Self {
        BrowserOpener::System {
            browser_env: std::env::var("BROWSER").ok(),
            path_env: std::env::var("PATH").ok(),
        }
    }

    /// The `browser_launch_failed` error of a `$BROWSER` whose program is not found (see
    /// [`missing_browser_in`]), `None` when it is found, `$BROWSER` is not set, or the opener
    /// is a [`BrowserOpener::Program`] (whose spawn reports its own failure).
    pub fn check(&self) -> Option<SignInError> {
        let (browser_env, path_env) = match self {
            BrowserOpener::System {
                browser_env,
                path_env,
            } => (browser_env, path_env),
            #[cfg(feature = "internals")]
            BrowserOpener::Program(_) => return None,
        };
        let program = missing_browser_in(browser_env.as_deref(), path_env.as_deref())?;
        Some(SignInError::new(
            SignInCause::BrowserLaunchFailed,
            format!(
                "$BROWSER names {}, which is not found: set BROWSER to an installed browser, or use --no-browser",
                crate::protocol::wire::excerpt::sanitize(&program)
            ),
        ))
    }

    /// Opens `start_url` (a text browser on the bridge's stdio is refused; the system's
    /// opener runs on a blocking thread, since a text browser would run in the foreground).
    /// Errors: `browser_launch_failed` with the opener's reason.
    pub async fn open(&self, start_url: String) -> Result<(), SignInError> {
        match self {
            BrowserOpener::System { browser_env, .. } => {
                open_system(browser_env.as_deref(), start_url).await
            }
            #[cfg(feature = "internals")]
            BrowserOpener::Program(program) => open_program(program, &start_url),
        }
    }
}

async fn open_system(browser_env: Option<&str>, start_url: String) -> Result<(), SignInError> {
    if let Some(text) = text_browser_in(browser_env) {
        return Err(SignInError::new(
            SignInCause::BrowserLaunchFailed,
            format!(
                "$BROWSER names the text browser {text}, which would run on the editor's stdin \
                 and stdout: set BROWSER to a graphical browser, or use --no-browser"
            ),
        ));
    }
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

/// Starts `program start_url` and leaves it running (tokio reaps it when it exits).
#[cfg(feature = "internals")]
fn open_program(program: &std::path::Path, start_url: &str) -> Result<(), SignInError> {
    use std::process::Stdio;
    tokio::process::Command::new(program)
        .arg(start_url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map(drop)
        .map_err(|e| SignInError::new(SignInCause::BrowserLaunchFailed, e.kind().to_string()))
}

/// The programs that the `webbrowser` crate (1.2) runs in the foreground with the bridge's own
/// stdin and stdout (its list of text browsers): on the bridge's stdio they would read the
/// editor's messages and write into the editor's channel.
pub const TEXT_BROWSERS: [&str; 9] = [
    "lynx", "links", "links2", "elinks", "w3m", "eww", "netrik", "retawq", "curl",
];

/// The first text browser that a `$BROWSER` value names, if any: each `:`-separated entry's
/// program (its first word), by file name. Such a browser is refused before the crate could run
/// it on the editor's pipes (the opener's rule: the browser's stdin and stdout are the null device).
pub fn text_browser_in(browser_env: Option<&str>) -> Option<&'static str> {
    let value = browser_env?;
    value.split(':').find_map(|entry| {
        let program = entry.split_whitespace().next()?;
        let name = std::path::Path::new(program).file_name()?.to_str()?;
        TEXT_BROWSERS.iter().copied().find(|t| *t == name)
    })
}

/// When `$BROWSER` (`browser_env`) is set but none of its `:`-separated entries names a
/// program that exists (a path to an executable file, or a name found in `path_env`, the
/// `PATH`), the first entry's program: the `webbrowser` crate would quietly fall back to other
/// openers, so the sign-in fails at once with `browser_launch_failed` instead.
pub fn missing_browser_in(browser_env: Option<&str>, path_env: Option<&str>) -> Option<String> {
    let programs: Vec<&str> = browser_env?
        .split(':')
        .filter_map(|entry| entry.split_whitespace().next())
        .collect();
    let first = programs.first()?;
    let executable = |p: &std::path::Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    let found = |program: &&str| {
        if program.contains('/') {
            executable(std::path::Path::new(program))
        } else {
            path_env.is_some_and(|path| {
                std::env::split_paths(path).any(|dir| executable(&dir.join(program)))
            })
        }
    };
    if programs.iter().any(found) {
        None
    } else {
        Some((*first).to_string())
    }
}

#[cfg(test)]
mod missing_browser_tests {
    use super::missing_browser_in;

    #[test]
    fn a_browser_program_that_is_not_found_is_named() {
        let path = Some("/nonexistent-dir:/bin:/usr/bin");
        let plain = std::env::temp_dir().join(format!("mcp-bridge-plain-{}", std::process::id()));
        std::fs::write(&plain, "not a program").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).unwrap();
        let plain = plain.to_str().unwrap().to_string();
        let table: [(Option<&str>, Option<&str>); 8] = [
            (None, None),
            (Some(""), None),
            (
                Some("/usr/bin/nonexistent-browser"),
                Some("/usr/bin/nonexistent-browser"),
            ),
            (Some("nonexistent-browser %s"), Some("nonexistent-browser")),
            (Some("sh"), None),
            (Some("/bin/sh -c true"), None),
            (Some("nonexistent-browser:sh"), None),
            // A file that is not executable is not a browser.
            (Some(plain.as_str()), Some(plain.as_str())),
        ];
        for (value, expected) in table {
            assert_eq!(
                missing_browser_in(value, path).as_deref(),
                expected,
                "BROWSER={value:?}"
            );
        }
        assert_eq!(missing_browser_in(Some("sh"), None).as_deref(), Some("sh"));
        let _ = std::fs::remove_file(&plain);
    }
}

#[cfg(test)]
mod text_browser_tests {
    use super::text_browser_in;

    #[test]
    fn a_text_browser_anywhere_in_browser_is_found_by_its_file_name() {
        let table: [(Option<&str>, Option<&str>); 9] = [
            (None, None),
            (Some(""), None),
            (Some("firefox"), None),
            (Some("/usr/bin/chromium --headless %s"), None),
            (Some("lynx"), Some("lynx")),
            (Some("/usr/bin/w3m %s"), Some("w3m")),
            (Some("firefox:links2"), Some("links2")),
            (Some("/opt/tests/open-with-curl.sh"), None),
            (Some("curl -s"), Some("curl")),
        ];
        for (value, expected) in table {
            assert_eq!(text_browser_in(value), expected, "BROWSER={value:?}");
        }
    }
}
