//! The SignIn actor: the token provider of the HTTP transport of a URL upstream. The
//! Supervisor starts it before the Upstream (the transport's [`TokenProvider`] is a
//! [`SignInClient`], which sends it [`TokenFor`] and
//! [`AnswerChallenge`]) and ends it in the shutdown cascade ([`SignInLinks::abort`] first,
//! [`SignInLinks::stop`] after the upstream's close).
//!
//! Its mailbox serializes the flows: each message is handled as an atomic response (the actor
//! takes the next message only when the flow of the last one ended), so at most one refresh,
//! sign-in or step-up runs in the process, and a request that asks for a token while a sign-in
//! runs gets the token of that sign-in. The flows themselves ([`SignIn`]) run on the actor
//! thread; their keychain and file calls run on the blocking pool (`TokenStore::run`).
//!
//! The shutdown takes two steps. A flow holds the mailbox, so an abort cannot wait in it behind
//! a sign-in that waits for a redirect (up to `--sign-in-timeout`): [`SignInLinks::abort`]
//! (the cascade's first step) fires the actor's abort
//! token, which ends the running flow with the cause `sign_in_cancelled` and releases the
//! receiver's port; from then on no refresh or sign-in starts (a challenge fails at once with
//! `sign_in_cancelled`), and a token request gets the current token as it is, so the upstream's
//! close still carries it. [`SignInLinks::stop`] (after the upstream's close) stops the actor;
//! a message after that gets no token and `sign_in_cancelled`.

use actix::prelude::*;
use futures_util::future::LocalBoxFuture;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

use super::link::{ActorStats, Link};
use super::supervisor::messages::ActorEnded;
use crate::auth::errors::{SignInCause, SignInError};
use crate::auth::signin::SignIn;
use crate::transport::token::{AccessToken, Challenge, ChallengeOutcome, TokenProvider};

/// The token for the next request of the transport (`None`: send it without `Authorization`).
#[derive(Message, Debug)]
#[rtype(result = "Option<AccessToken>")]
pub struct TokenFor;

/// A 401/403 of the upstream: resolves when the request may be sent again, or with the cause
/// that fails it.
#[derive(Message, Debug)]
#[rtype(result = "ChallengeOutcome")]
pub struct AnswerChallenge(pub Challenge);

/// Stops the actor (the Supervisor's shutdown step `sign-in: stop`, after the upstream's
/// close).
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct StopSignIn;

/// The SignIn actor: one [`SignIn`] provider and the abort token of its flows.
pub struct SignInActor {
    provider: SignIn,
    abort: CancellationToken,
    ended: Link<ActorEnded>,
}

impl Actor for SignInActor {
    type Context = Context<Self>;

    fn stopped(&mut self, _: &mut Context<Self>) {
        self.ended.do_send(ActorEnded("sign-in"));
    }
}

crate::counted_handlers!(SignInActor: TokenFor, AnswerChallenge, StopSignIn);

/// The cause of a flow that the shutdown ended, and of every message after it.
fn cancelled() -> SignInError {
    SignInError::new(SignInCause::SignInCancelled, "")
}

impl SignInActor {
    /// An actor of `provider`; it reports its end on `ended`.
    pub fn new(provider: SignIn, ended: Link<ActorEnded>) -> Self {
        SignInActor {
            provider,
            abort: CancellationToken::new(),
            ended,
        }
    }

    /// The abort token that [`SignInLinks::stop`] fires.
    pub fn abort_token(&self) -> CancellationToken {
        self.abort.clone()
    }
}

impl Handler<TokenFor> for SignInActor {
    type Result = AtomicResponse<Self, Option<AccessToken>>;
    fn handle(&mut self, _: TokenFor, _: &mut Context<Self>) -> Self::Result {
        let flow = (!self.abort.is_cancelled()).then(|| self.provider.access_token());
        let current = self.provider.current_token();
        let abort = self.abort.clone();
        AtomicResponse::new(Box::pin(
            async move {
                if let Some(flow) = flow {
                    tokio::select! {
                        biased;
                        () = abort.cancelled() => {}
                        t = flow => return t,
                    }
                }
                current.await
            }
            .into_actor(self),
        ))
    }
}

impl Handler<AnswerChallenge> for SignInActor {
    type Result = AtomicResponse<Self, ChallengeOutcome>;
    fn handle(
        &mut self,
        AnswerChallenge(challenge): AnswerChallenge,
        _: &mut Context<Self>,
    ) -> Self::Result {
        let flow = (!self.abort.is_cancelled()).then(|| self.provider.challenge(challenge));
        let abort = self.abort.clone();
        AtomicResponse::new(Box::pin(
            async move {
                if let Some(flow) = flow {
                    tokio::select! {
                        biased;
                        () = abort.cancelled() => {}
                        o = flow => return o,
                    }
                }
                let e = cancelled();
                tracing::info!(target: "sign-in", "{e}");
                ChallengeOutcome::Fail(e.outcome())
            }
            .into_actor(self),
        ))
    }
}

impl Handler<StopSignIn> for SignInActor {
    type Result = ();
    fn handle(&mut self, _: StopSignIn, ctx: &mut Context<Self>) {
        self.abort.cancel();
        ctx.stop();
    }
}

/// The links to a running SignIn actor: what the Supervisor holds.
#[derive(Clone)]
pub struct SignInLinks {
    /// The transport's side.
    pub client: SignInClient,
    stop: Link<StopSignIn>,
    abort: CancellationToken,
}

impl SignInLinks {
    /// Runs `actor` in `ctx` (a context made with `Context::new()` before, so that its
    /// address could be handed out first) and returns its links, counted in `stats`.
    pub fn run(actor: SignInActor, ctx: Context<SignInActor>, stats: &Arc<ActorStats>) -> Self {
        let addr = ctx.address();
        let abort = actor.abort_token();
        ctx.run(actor);
        SignInLinks {
            client: SignInClient {
                token: Link::new(&addr, stats),
                answer: Link::new(&addr, stats),
            },
            stop: Link::new(&addr, stats),
            abort,
        }
    }

    /// The first shutdown step: ends a running flow with `sign_in_cancelled` (its receiver's
    /// port is released); no refresh or sign-in starts after it, and a token request gets the
    /// current token as it is. Returns at once (the flow ends on the actor thread).
    pub fn abort(&self) {
        self.abort.cancel();
    }

    /// Stops the actor (after the upstream's close); fires the abort token first, in case.
    /// Resolves when the actor handled the stop (or is gone).
    pub async fn stop(&self) {
        self.abort.cancel();
        let _ = self.stop.send(StopSignIn).await;
    }
}

/// The transport's [`TokenProvider`]: every call is a message to the SignIn actor. When the
/// actor is gone (the shutdown), no token comes and every challenge fails with
/// `sign_in_cancelled`.
#[derive(Clone)]
pub struct SignInClient {
    token: Link<TokenFor>,
    answer: Link<AnswerChallenge>,
}

impl TokenProvider for SignInClient {
    fn access_token(&self) -> LocalBoxFuture<'static, Option<AccessToken>> {
        let ask = self.token.send(TokenFor);
        Box::pin(async move { ask.await.ok().flatten() })
    }

    fn challenge(&self, challenge: Challenge) -> LocalBoxFuture<'static, ChallengeOutcome> {
        let ask = self.answer.send(AnswerChallenge(challenge));
        Box::pin(async move {
            ask.await
                .unwrap_or_else(|_| ChallengeOutcome::Fail(cancelled().outcome()))
        })
    }
}

/// The cascade's handle on the actor (`actors::supervisor`): abort, then stop.
impl crate::actors::supervisor::SignInHandle for SignInLinks {
    fn abort_sign_in(&self) {
        self.abort();
    }

    fn stop_actor(&self) -> futures_util::future::LocalBoxFuture<'static, ()> {
        let links = self.clone();
        Box::pin(async move { links.stop().await })
    }
}
