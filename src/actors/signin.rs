//! The SignIn actor: the token provider of the HTTP transport of a URL upstream. The
//! Supervisor starts it before the Upstream (the transport's [`TokenProvider`] is a
//! [`SignInClient`], which sends it [`TokenFor`] and [`AnswerChallenge`]), hands the Frontend
//! its [`SignInSide`] (the Frontend sends it [`EditorInitialized`] and reads its clock), and
//! ends it in the shutdown cascade ([`SignInLinks::abort`] first, [`SignInLinks::stop`] after
//! the upstream's close).
//!
//! The flows run one at a time, in the order their messages came: each [`TokenFor`] and
//! [`AnswerChallenge`] takes its turn in the actor's queue, and the next turn starts when the
//! flow of the last one ended. So at most one refresh, sign-in or step-up runs in the process,
//! and a request that asks for a token while a sign-in runs gets the token of that sign-in.
//! The mailbox itself never waits for a flow (a browser sign-in can take minutes): the
//! messages that must take effect while one runs do so at once. [`EditorInitialized`] switches
//! the sign-in to the editor's URL elicitation, also for the running flow if it has not
//! delivered its URL yet; [`AbortSignIn`] ends the running flow. The flows themselves
//! ([`SignIn`]) run on the actor thread; their keychain and file calls run on the blocking
//! pool (`TokenStore::run`).
//!
//! The shutdown takes two steps. [`SignInLinks::abort`] (the cascade's first step) ends the
//! running flow with the cause `sign_in_cancelled` and releases the receiver's port; from then
//! on no refresh or sign-in starts (a challenge fails at once with `sign_in_cancelled`), and a
//! token request gets the current token as it is, so the upstream's close still carries it.
//! [`SignInLinks::stop`] (after the upstream's close) stops the actor once the turns before it
//! are done; a message after that gets no token and `sign_in_cancelled`.

use actix::prelude::*;
use futures_util::future::LocalBoxFuture;
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::Arc;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::consent::EditorConsent;
use super::link::{ActorStats, Link};
use super::sign_in_side::{EditorInitialized, SignInSide};
use super::supervisor::messages::{ActorEnded, ActorKind};
use crate::auth::errors::{SignInCause, SignInError};
use crate::auth::gate::Consent;
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

/// Ends the running flow with `sign_in_cancelled`, and every later one at its start (the
/// Supervisor's first shutdown step `sign-in: abort`): handled at once, ahead of the turns
/// that wait.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct AbortSignIn;

/// Stops the actor (the Supervisor's shutdown step `sign-in: stop`, after the upstream's
/// close): aborts at once, and stops the actor when the turns before it are done.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct StopSignIn;

/// A message that waits for its flow to run: the flows run one at a time, in this order.
enum SignInTurn {
    Token(oneshot::Sender<Option<AccessToken>>),
    Challenge(Challenge, oneshot::Sender<ChallengeOutcome>),
    Stop(oneshot::Sender<()>),
}

/// The SignIn actor: one [`SignIn`] provider, the queue of its flows and their abort token.
pub struct SignInActor {
    provider: SignIn,
    /// Fired by [`AbortSignIn`] and [`StopSignIn`]: the running flow ends, no other starts.
    abort: CancellationToken,
    /// The turns that wait for the running one.
    turns: VecDeque<SignInTurn>,
    /// A flow runs.
    busy: bool,
    /// The stop's turn came: no turn runs any more.
    stopped: bool,
    ended: Link<ActorEnded>,
}

impl Actor for SignInActor {
    type Context = Context<Self>;

    fn stopped(&mut self, _: &mut Context<Self>) {
        self.ended.do_send(ActorEnded(ActorKind::SignIn));
    }
}

crate::counted_handlers!(SignInActor: TokenFor, AnswerChallenge, EditorInitialized, AbortSignIn, StopSignIn);

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
            turns: VecDeque::new(),
            busy: false,
            stopped: false,
            ended,
        }
    }

    /// Queues `turn` behind the others; after the stop, it is dropped (its caller gets no token
    /// and `sign_in_cancelled`).
    fn queue(&mut self, turn: SignInTurn, ctx: &mut Context<Self>) {
        if self.stopped {
            return;
        }
        self.turns.push_back(turn);
        self.next_turn(ctx);
    }

    /// Starts the next turn's flow, unless one runs.
    fn next_turn(&mut self, ctx: &mut Context<Self>) {
        if self.busy || self.stopped {
            return;
        }
        let Some(turn) = self.turns.pop_front() else {
            return;
        };
        let flow: LocalBoxFuture<'static, ()> = match turn {
            SignInTurn::Token(tx) => {
                let token = self.token_flow();
                Box::pin(async move {
                    let _ = tx.send(token.await);
                })
            }
            SignInTurn::Challenge(challenge, tx) => {
                let outcome = self.challenge_flow(challenge);
                Box::pin(async move {
                    let _ = tx.send(outcome.await);
                })
            }
            SignInTurn::Stop(tx) => {
                self.stopped = true;
                self.turns.clear();
                ctx.stop();
                let _ = tx.send(());
                return;
            }
        };
        self.busy = true;
        ctx.spawn(flow.into_actor(self).map(|(), act, ctx| {
            act.busy = false;
            act.next_turn(ctx);
        }));
    }

    /// The flow of a [`TokenFor`], made when its turn comes: the provider's token (a refresh
    /// if it expires soon), or after the abort the current token as it is.
    fn token_flow(&self) -> LocalBoxFuture<'static, Option<AccessToken>> {
        let flow = (!self.abort.is_cancelled()).then(|| self.provider.access_token());
        let current = self.provider.current_token();
        let abort = self.abort.clone();
        Box::pin(async move {
            if let Some(flow) = flow {
                tokio::select! {
                    biased;
                    () = abort.cancelled() => {}
                    t = flow => return t,
                }
            }
            current.await
        })
    }

    /// The flow of an [`AnswerChallenge`], made when its turn comes: a refresh, a sign-in or
    /// a step-up, or after the abort `sign_in_cancelled`.
    fn challenge_flow(&self, challenge: Challenge) -> LocalBoxFuture<'static, ChallengeOutcome> {
        let flow = (!self.abort.is_cancelled()).then(|| self.provider.challenge(challenge));
        let abort = self.abort.clone();
        Box::pin(async move {
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
        })
    }
}

impl Handler<TokenFor> for SignInActor {
    type Result = ResponseFuture<Option<AccessToken>>;
    fn handle(&mut self, _: TokenFor, ctx: &mut Context<Self>) -> Self::Result {
        let (tx, rx) = oneshot::channel();
        self.queue(SignInTurn::Token(tx), ctx);
        Box::pin(async move { rx.await.ok().flatten() })
    }
}

impl Handler<AnswerChallenge> for SignInActor {
    type Result = ResponseFuture<ChallengeOutcome>;
    fn handle(
        &mut self,
        AnswerChallenge(challenge): AnswerChallenge,
        ctx: &mut Context<Self>,
    ) -> Self::Result {
        let (tx, rx) = oneshot::channel();
        self.queue(SignInTurn::Challenge(challenge, tx), ctx);
        Box::pin(async move {
            rx.await
                .unwrap_or_else(|_| ChallengeOutcome::Fail(cancelled().outcome()))
        })
    }
}

impl Handler<EditorInitialized> for SignInActor {
    type Result = ();
    fn handle(&mut self, EditorInitialized(editor): EditorInitialized, _: &mut Context<Self>) {
        // None when the editor declared no URL elicitation: a sign-in then fails with
        // `reauthorization_required`.
        let consent = EditorConsent::for_editor(editor).map(|c| Rc::new(c) as Rc<dyn Consent>);
        let how = match consent {
            Some(_) => "asks the editor with a URL elicitation",
            None => "fails with reauthorization_required (the editor declared no URL elicitation)",
        };
        tracing::debug!(target: "sign-in", "the editor is initialized: a sign-in not yet shown to the user {how}");
        self.provider.editor_initialized(consent);
    }
}

impl Handler<AbortSignIn> for SignInActor {
    type Result = ();
    fn handle(&mut self, _: AbortSignIn, _: &mut Context<Self>) {
        self.abort.cancel();
    }
}

impl Handler<StopSignIn> for SignInActor {
    type Result = ResponseFuture<()>;
    fn handle(&mut self, _: StopSignIn, ctx: &mut Context<Self>) -> Self::Result {
        self.abort.cancel();
        let (tx, rx) = oneshot::channel();
        self.queue(SignInTurn::Stop(tx), ctx);
        Box::pin(async move {
            let _ = rx.await;
        })
    }
}

/// The links to a running SignIn actor: what the Supervisor holds.
#[derive(Clone)]
pub struct SignInLinks {
    /// The transport's side.
    pub client: SignInClient,
    /// The Frontend's side.
    pub editor: SignInSide,
    abort: Link<AbortSignIn>,
    stop: Link<StopSignIn>,
}

impl SignInLinks {
    /// Runs `actor` in `ctx` (a context made with `Context::new()` before, so that its
    /// address could be handed out first), inside the current span (the bridge's, see
    /// [`super::log_span`]), and returns its links, counted in `stats`.
    pub fn run(actor: SignInActor, ctx: Context<SignInActor>, stats: &Arc<ActorStats>) -> Self {
        let addr = ctx.address();
        let times = actor.provider.times();
        // Started by the Supervisor inside its bridge's span (if it has one).
        super::log_span::run_in(ctx, actor, &tracing::Span::current());
        SignInLinks {
            client: SignInClient {
                token: Link::new(&addr, stats),
                answer: Link::new(&addr, stats),
            },
            editor: SignInSide {
                initialized: Link::new(&addr, stats),
                times,
            },
            abort: Link::new(&addr, stats),
            stop: Link::new(&addr, stats),
        }
    }

    /// The first shutdown step: ends a running flow with `sign_in_cancelled` (its receiver's
    /// port is released); no refresh or sign-in starts after it, and a token request gets the
    /// current token as it is. Returns at once (the actor handles it ahead of every turn
    /// that waits).
    pub fn abort(&self) {
        self.abort.do_send(AbortSignIn);
    }

    /// Stops the actor (after the upstream's close); aborts first, in case. Resolves when
    /// the stop's turn came, after the turns before it (the actor stops then), or when the
    /// actor is gone.
    pub async fn stop(&self) {
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

/// The cascade's handle on the actor (`actors::supervisor`): abort, then stop; and the
/// Frontend's side of it.
impl crate::actors::supervisor::SignInHandle for SignInLinks {
    fn abort_sign_in(&self) {
        self.abort();
    }

    fn stop_actor(&self) -> futures_util::future::LocalBoxFuture<'static, ()> {
        let links = self.clone();
        Box::pin(async move { links.stop().await })
    }

    fn editor_side(&self) -> SignInSide {
        self.editor.clone()
    }
}
