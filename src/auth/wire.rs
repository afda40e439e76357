//! Plugs the sign-in into the URL form at start (before the actor system runs): checks the
//! sign-in options, opens the token store (blocking: the keychain probe), and gives the HTTP
//! transport a [`TokenSource`] that makes a [`SignIn`] provider on the actor thread; the
//! shared [`SignInPhase`] goes to the Frontend through the configuration. A static
//! `Authorization` header (`--header`, `--header-env`) means no sign-in.

use std::rc::Rc;
use std::sync::Arc;

use super::gate::SignInPhase;
use super::opener::EnvSecrets;
use super::options::SignInArgs;
use super::signin::SignIn;
use super::store;
use crate::config::BridgeConfig;
use crate::transport::http::TokenSource;
use crate::transport::token::{NoToken, TokenProvider};
use crate::transport::upstream::UpstreamSpec;

/// Sets up the sign-in of `config` (a URL upstream without a static `Authorization` header):
/// the provider of its transport, the shared phase, and `server/discover`'s time limit
/// extended by `--sign-in-timeout` (a sign-in can run during `initialize`). Errors: the usage
/// message (exit 2): invalid sign-in options, a token store that does not open.
pub fn sign_in(
    config: &mut BridgeConfig,
    args: &SignInArgs,
    secrets: &EnvSecrets,
) -> Result<(), String> {
    let UpstreamSpec::Http(spec) = &mut config.upstream else {
        return Ok(());
    };
    if spec
        .headers
        .iter()
        .any(|(n, _)| n == reqwest::header::AUTHORIZATION)
    {
        return Ok(());
    }
    args.check(secrets)?;
    let store = store::open_with_key(
        args.token_store,
        secrets.token_key.as_deref(),
        args.token_key_file.as_deref(),
    )
    .map_err(|e| e.to_string())?;
    let phase = Arc::new(SignInPhase::default());
    let mut cfg = args.config(spec.url.clone(), secrets);
    cfg.phase = phase.clone();
    cfg.extra_ca_pem = spec.ca_pem.clone();
    let timeout = cfg.sign_in_timeout;
    spec.tokens = TokenSource(Arc::new(move || {
        match SignIn::new(cfg.clone(), store.clone()) {
            Ok(p) => Rc::new(p) as Rc<dyn TokenProvider>,
            Err(e) => {
                tracing::error!(target: "sign-in", "{e}");
                Rc::new(NoToken)
            }
        }
    }));
    config.sign_in_phase = Some(phase);
    config.discover_timeout += timeout;
    Ok(())
}
