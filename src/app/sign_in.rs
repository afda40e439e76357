//! Plugs the sign-in into the URL form at start (before the actor system runs): checks the
//! sign-in options, makes the token store (`auto` opens at its first use, off the actor
//! thread; an explicit choice opens now: blocking, the keychain probe), and puts the
//! [`SignInSetup`] into the configuration; the Supervisor starts the SignIn actor from it
//! (`actors::signin`) and makes that actor the HTTP transport's token provider; the Frontend
//! gets the actor's side for the editor (`notifications/initialized`, the sign-in's clock)
//! from the Supervisor. A static `Authorization` header (`--header`, `--header-env`) means no
//! sign-in.

use actix::prelude::*;
use std::rc::Rc;
use std::sync::Arc;

use crate::actors::config::BridgeConfig;
use crate::actors::link::{ActorStats, Link};
use crate::actors::signin::{SignInActor, SignInLinks};
use crate::actors::supervisor::messages::ActorEnded;
use crate::actors::supervisor::{SignInHandle, StartSignIn};
use crate::auth::opener::EnvSecrets;
use crate::auth::setup::SignInSetup;
use crate::auth::signin::SignIn;
use crate::auth::store;
use crate::cli::sign_in::{SignInArgs, SignInOptionsError};
use crate::transport::http::TokenSource;
use crate::transport::open::UpstreamSpec;
use crate::transport::token::TokenProvider;

/// Why the sign-in of the URL form cannot be set up at start: the usage message (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The sign-in options do not go together.
    #[error(transparent)]
    Options(#[from] SignInOptionsError),
    /// The token store chosen does not open.
    #[error(transparent)]
    Store(#[from] store::OpenError),
}

/// Sets up the sign-in of `config` (a URL upstream without a static `Authorization` header):
/// the [`SignInSetup`] of the SignIn actor. Errors: [`SetupError`].
pub fn sign_in(
    config: &mut BridgeConfig,
    args: &SignInArgs,
    secrets: &EnvSecrets,
) -> Result<(), SetupError> {
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
    let store = store::open_at_first_use(
        args.token_store,
        secrets.token_key.as_deref(),
        args.token_key_file.as_deref(),
    )?;
    let mut cfg = args.config(spec.url.clone(), secrets);
    cfg.extra_ca_pem = spec.ca_pem.clone();
    cfg.member = config.member.clone();
    config.sign_in = Some(SignInSetup { config: cfg, store });
    Ok(())
}

/// The starter of the SignIn actor that the Supervisor calls before it starts the Upstream.
pub fn sign_in_actor() -> StartSignIn {
    Box::new(start_sign_in)
}

/// Starts the SignIn actor of a URL upstream with sign-in (`config.sign_in`) and makes it the
/// token provider of the HTTP transport (`spec.tokens`); `None` without sign-in. A provider
/// that cannot be made (`--ca-file` holds no certificate) leaves the transport without
/// sign-in (one error line: every challenge then fails with `sign_in_unavailable`). The
/// provider makes its HTTP client at its first request, not here.
pub fn start_sign_in(
    config: &mut BridgeConfig,
    ended: &Link<ActorEnded>,
    stats: &Arc<ActorStats>,
) -> Option<Rc<dyn SignInHandle>> {
    let setup = config.sign_in.take()?;
    let UpstreamSpec::Http(spec) = &mut config.upstream else {
        return None;
    };
    let provider = match SignIn::new(setup.config, setup.store) {
        Ok(p) => p,
        Err(e) => {
            tracing::error!(target: "sign-in", "{e}");
            return None;
        }
    };
    let links = SignInLinks::run(
        SignInActor::new(provider, ended.clone()),
        Context::new(),
        stats,
    );
    let client = links.client.clone();
    spec.tokens = TokenSource(Arc::new(move || {
        Rc::new(client.clone()) as Rc<dyn TokenProvider>
    }));
    Some(Rc::new(links))
}
