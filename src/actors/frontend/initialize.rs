//! `initialize`: the era of the upstream decided by `server/discover` (`protocol::rules::era`), the
//! editor's `initialize` answered from the discover result or passed through to a legacy
//! server under a time limit of its own, and the time limit that leaves out sign-in time.

use actix::prelude::*;
use foldhash::HashMap;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Instant;

use super::held::HeldFrames;
use super::rounds::{TimedOut, probe};
use super::{Frontend, Initializing, PassThrough, Phase, REPLY_MASK, Ready, pass_through};
use crate::actors::upstream::reply::CancelReason;
use crate::actors::upstream::reply::UpstreamReply;
use crate::actors::upstream::{self, Relay, UpstreamLinks};
use crate::auth::clock::SignInTimes;
use crate::protocol::listen::Declared;
use crate::protocol::revisions::errors::{Cause, ErrorObject};
use crate::protocol::revisions::legacy::{self, RequestClass};
use crate::protocol::revisions::methods;
use crate::protocol::revisions::modern::{Discovered, RequestMeta};
use crate::protocol::rules::era::{self, Era, HttpAnswer, HttpBody, LegacySign, ProbeAnswer};
use crate::protocol::rules::translate;
use crate::protocol::wire::id::Id;
use crate::protocol::wire::jsonrpc;
use crate::protocol::wire::raw::Object;
use crate::transport::observe::{Decided, Observed};
#[cfg(feature = "http")]
use crate::transport::open::UpstreamSpec;
#[cfg(feature = "http")]
use crate::transport::program::SpawnError;
use crate::transport::queue::Delivery;

/// How long a failed `initialize` waits, after the upstream closed its output, for the exit
/// status of the upstream process, which its error then names (`data.detail`: `exit code 3`,
/// `signal 9`, or that the bridge killed a child still running); without it in time the error
/// goes out without a detail. A bound, not the usual wait: the transport reports within its
/// own [`crate::transport::child_upstream::EXIT_STATUS_WAIT`] (500 ms, then the kill), and at once for a child that
/// exited; this leaves room for the kill and the messages on a busy machine.
pub const INITIALIZE_EXIT_STATUS_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// The detail of the error of a server that failed to start: its exit status, then the last
/// lines of its stderr, quoted and escaped (`transport::stderr_tail`): `exit code 2; its
/// stderr ended with: "python3: can't open file 'server.py'"`. The status alone when it
/// wrote nothing.
pub(super) fn failed_start_detail(status: &str, stderr_tail: &[String]) -> String {
    if stderr_tail.is_empty() {
        status.to_owned()
    } else {
        format!("{status}; its stderr ended with: {}", stderr_tail.join(" "))
    }
}

/// How the probe of `initialize` ended well: a modern server (its discover result and the
/// `_meta` of later requests), or a legacy one (the sign, and the editor's `initialize` as it
/// came, to pass through).
pub(super) enum Probed {
    Modern(Box<(Discovered, RequestMeta)>),
    Legacy(LegacySign, Value),
}

/// Pass-through: the editor's `initialize`, sent to a legacy server and not answered yet. It
/// has a time limit of its own (`--discover-timeout` again), so that a server that never
/// answers gets the editor an error instead of a silent wait: the 2025-11-25 lifecycle gives
/// the editor nothing to do before that answer, and an editor's own limit is not always there.
pub(super) struct InitializeWait {
    /// The editor's id of the `initialize`.
    pub(super) id: Id,
    /// Which wait this is: a timer of an earlier wait finds another token and does nothing.
    pub(super) token: u64,
    /// The era was decided by silence: `server/discover` got no answer either.
    pub(super) silent_discover: bool,
    /// The era was decided by an HTTP 404 to `server/discover`: a 404 to this `initialize`
    /// too points at the URL's path rather than at the server's revision.
    pub(super) discover_404: bool,
    /// [`Frontend::ran`] before this `initialize`, restored when it fails.
    pub(super) ran_before: bool,
    /// The server exited at `server/discover` and this is its second start: its exit before
    /// the answer is a failed start, not a legacy server.
    pub(super) restarted: bool,
    /// The info line of the legacy server, held for a server started again until it answers
    /// (a server that exits again failed to start and is no legacy server).
    pub(super) announce: Option<String>,
}

/// Sends `server/discover` as the era probe ([`probe`]: its own id space, and not cancelled
/// at the time limit) and waits at most `limit` (`--discover-timeout`) for its answer;
/// with sign-in (`times`), the time a sign-in runs meanwhile is not counted, up to
/// `--sign-in-timeout` of it (`auth::clock`): a URL upstream that never answers fails at
/// `limit` when no sign-in ran. On that path the clock's time limit drops the probe, which
/// cancels it (its stream is closed): over HTTP no answer in time fails the `initialize`
/// (`discover_failed`) and is never taken for a legacy server, so no late answer is waited
/// for. Errors: [`TimedOut`] with `limit`.
pub(super) async fn discover(
    upstream: &Arc<UpstreamLinks>,
    params: Object,
    client: Id,
    limit: std::time::Duration,
    reason: CancelReason,
    times: Option<&SignInTimes>,
) -> Result<UpstreamReply, TimedOut> {
    let method = methods::SERVER_DISCOVER;
    if let Some(times) = times {
        // The most the wait can last is the call's own limit.
        let most = limit.saturating_add(times.allowance());
        let probe = probe(upstream, method, params, client, most, reason);
        // An answer that is there wins over the end of the wait.
        return tokio::select! {
            biased;
            reply = probe => reply,
            () = outside_sign_in(limit, Some(times)) => Err(TimedOut { limit }),
        };
    }
    probe(upstream, method, params, client, limit, reason).await
}

/// Whether the probe's answer is an `UnsupportedProtocolVersion` that offers the bridge's
/// revision ([`era::offers_version`]): as a JSON-RPC error, or as the error body of an HTTP 400
/// (2026-07-28 transports/http answers a refused version with 400).
fn refused_with_offer(reply: &Result<UpstreamReply, TimedOut>) -> bool {
    match reply {
        Ok(UpstreamReply::Error(e)) => era::offers_version(e),
        Ok(UpstreamReply::Failed(f)) => {
            f.status == Some(400) && f.error.as_ref().is_some_and(era::offers_version)
        }
        _ => false,
    }
}

/// Resolves after `limit` of time in which no sign-in runs, plus the time sign-ins run
/// meanwhile up to `--sign-in-timeout` (as [`discover`] counts its wait); plain `limit`
/// without sign-in.
pub(super) async fn outside_sign_in(limit: std::time::Duration, times: Option<&SignInTimes>) {
    match times {
        Some(times) => {
            let _ = times.within(limit, std::future::pending::<()>()).await;
        }
        None => tokio::time::sleep(limit).await,
    }
}

impl Frontend {
    pub(super) fn start_initialize(
        &mut self,
        id: Id,
        params: Option<Value>,
        ctx: &mut Context<Self>,
    ) {
        let p = match legacy::initialize_params(params.as_ref()) {
            Ok(p) => p,
            Err(detail) => {
                return self.reply_error(Some(&id), Cause::InvalidParams, Some(json!(detail)));
            }
        };
        if !self.admit(&id, RequestClass::Initialize, None, None) {
            return;
        }
        let (exit_tx, exit_rx) = tokio::sync::oneshot::channel();
        self.phase = Phase::Initializing(Initializing {
            held: HeldFrames::default(),
            exit_status: Some(exit_tx),
            lost: None,
        });
        // For a legacy upstream: the request as the editor wrote it (a JSON-RPC request has no
        // other members; `params` is the editor's object, members and numbers as written).
        let request = jsonrpc::request(&id, methods::INITIALIZE, params.unwrap_or_default());
        self.editor_capabilities = Arc::new(p.capabilities);
        let meta = self.current_meta();
        let upstream = self.upstream.clone();
        let spec = self.config.upstream.clone();
        let spec_again = spec.clone();
        let limit = self.config.discover_timeout;
        let http = spec.is_http();
        let client = id.clone();
        let reason = self.cancel_reason_of(&id);
        let times = self.sign_in.as_ref().map(|s| s.times.clone());
        // When the probe began (after the transport opened): its time for an observer.
        let probe_start = std::rc::Rc::new(std::cell::Cell::new(None::<Instant>));
        let probe_started = probe_start.clone();
        let fut = async move {
            match upstream.connect.send(upstream::Connect(spec)).await {
                Ok(Ok(())) => {}
                #[cfg(feature = "http")]
                Ok(Err(e @ SpawnError::Connect(_))) => {
                    return Err(Cause::ConnectFailed.error(Some(json!(e.to_string()))));
                }
                Ok(Err(e)) => return Err(Cause::SpawnFailed.error(Some(json!(e.to_string())))),
                Err(_) => return Err(Cause::SpawnFailed.error(None)),
            }
            let params = Object::from_value(&meta.bare_params()).unwrap_or_default();
            probe_started.set(Some(Instant::now()));
            let mut reply = discover(
                &upstream,
                params.clone(),
                client.clone(),
                limit,
                reason.clone(),
                times.as_ref(),
            )
            .await;
            // A refusal of the version that offers the bridge's own (2026-07-28
            // basic/versioning: the client SHOULD retry with a version from
            // `data.supported`): the probe goes once more, and its answer decides.
            for _ in 0..era::DISCOVER_VERSION_RETRIES {
                if !refused_with_offer(&reply) {
                    break;
                }
                tracing::debug!(target: "frontend", "server/discover: the server refused the version and offers 2026-07-28: sending it once more");
                reply = discover(
                    &upstream,
                    params.clone(),
                    client.clone(),
                    limit,
                    reason.clone(),
                    times.as_ref(),
                )
                .await;
            }
            let result = match &reply {
                Ok(UpstreamReply::Result(v)) => v.to_value(),
                _ => None,
            };
            // HTTP: a request that failed in the transport keeps its status and error body
            // (`Failure`); 400, 404 and 405 are what the era decision reads (and 406, 415
            // and 501, whose detail it words), any other
            // failure (no response, a broken stream, 401/403 without a token, 5xx) fails the
            // initialize with its detail.
            let answer = match &reply {
                Ok(UpstreamReply::Result(_)) => match &result {
                    Some(v) => ProbeAnswer::Result(v),
                    None => ProbeAnswer::Invalid,
                },
                Ok(UpstreamReply::Error(e)) => ProbeAnswer::Error(e),
                Ok(UpstreamReply::Closed) => ProbeAnswer::Closed,
                Ok(UpstreamReply::Busy) => ProbeAnswer::Busy,
                Ok(UpstreamReply::Invalid(_)) => ProbeAnswer::Invalid,
                Ok(UpstreamReply::Failed(f)) => match f.status {
                    Some(status @ (400 | 404 | 405)) => ProbeAnswer::Http(HttpAnswer {
                        status,
                        body: f.error.as_ref().map_or(HttpBody::Empty, HttpBody::RpcError),
                    }),
                    // The statuses of a server that is no MCP endpoint: the era decision
                    // words their detail.
                    Some(status @ (406 | 415 | 501)) if f.error.is_none() => {
                        ProbeAnswer::Http(HttpAnswer {
                            status,
                            body: HttpBody::Empty,
                        })
                    }
                    _ => return Err(Cause::DiscoverFailed.error(Some(json!(f.detail)))),
                },
                Err(TimedOut { .. }) if http => ProbeAnswer::HttpNoReply { limit },
                Err(TimedOut { .. }) => ProbeAnswer::NoReply,
            };
            let closed = matches!(answer, ProbeAnswer::Closed);
            // A stdio server that exits at a first message other than `initialize` (rmcp's
            // servers end their session with `ExpectedInitializeRequest`) may be a legacy
            // server: once its loss is reported (its exit status), a new one gets the
            // editor's `initialize`. One that exits again before it answers failed to start
            // (the `UpstreamLost` handler), and is no legacy server.
            if closed && !http {
                let Ok(Ok(cause)) =
                    tokio::time::timeout(INITIALIZE_EXIT_STATUS_WAIT, exit_rx).await
                else {
                    return Err(Cause::UpstreamExited.error(None));
                };
                if let Some(detail) = cause.cannot_run() {
                    let detail = failed_start_detail(&detail, cause.stderr_tail());
                    tracing::warn!(target: "upstream", "the upstream server failed to start: it exited ({cause}) at server/discover");
                    return Err(Cause::UpstreamExited.error(Some(json!(detail))));
                }
                tracing::debug!(target: "frontend", "the upstream exited at server/discover ({cause}): starting it again");
                return match upstream.connect.send(upstream::Connect(spec_again)).await {
                    Ok(Ok(())) => Ok(Probed::Legacy(LegacySign::ExitedAtDiscover, request)),
                    Ok(Err(e)) => Err(Cause::SpawnFailed.error(Some(json!(e.to_string())))),
                    Err(_) => Err(Cause::SpawnFailed.error(None)),
                };
            }
            match era::decide(answer) {
                Era::Modern(d) => Ok(Probed::Modern(Box::new((d, meta)))),
                Era::Legacy(sign) => Ok(Probed::Legacy(sign, request)),
                // The upstream went away: its exit status says why.
                Era::Error(e) if closed => {
                    match tokio::time::timeout(INITIALIZE_EXIT_STATUS_WAIT, exit_rx).await {
                        Ok(Ok(cause)) => Err(e.with_detail(cause.to_string())),
                        _ => Err(e),
                    }
                }
                Era::Error(e) => Err(e),
            }
        };
        let slot_id = id.clone();
        let h = ctx.spawn(fut.into_actor(self).map(move |res, act, ctx| {
            let elapsed = probe_start.get().map(|t| t.elapsed()).unwrap_or_default();
            act.observe_era(&res, elapsed);
            act.initialize_done(slot_id, res, ctx);
        }));
        if let Some(s) = self.slots.get_mut(&id) {
            s.handle = Some(h);
        }
    }

    /// Tells the observer (`mcp-bridge doctor`), when there is one, how the probe ended and
    /// how long it took; the words of the legacy sign are those of the info line below.
    fn observe_era(&self, res: &Result<Probed, ErrorObject>, elapsed: std::time::Duration) {
        let Some(observer) = &self.config.observer else {
            return;
        };
        let decided = match res {
            Ok(Probed::Modern(m)) => Decided::Modern {
                protocol_version: m.0.protocol_version.clone(),
                capabilities: m.0.capabilities.clone(),
            },
            Ok(Probed::Legacy(sign, _)) => Decided::Legacy {
                why: self.legacy_sign_text(sign),
            },
            // A child that exited before it answered anything failed to start (127, 126).
            Err(e)
                if !self.config.upstream.is_http()
                    && e.data.as_ref().and_then(|d| d.get("cause"))
                        == Some(&json!(Cause::UpstreamExited.name())) =>
            {
                Decided::FailedToStart {
                    error: e.log_text(),
                }
            }
            Err(e) => Decided::Failed {
                error: e.log_text(),
            },
        };
        observer.send(Observed::Era { decided, elapsed });
    }

    /// Tells the observer, when there is one, that the server failed to start (`e`: the
    /// error of the editor's `initialize`), whatever the probe seemed to say.
    pub(super) fn observe_failed_start(&self, e: &ErrorObject) {
        if let Some(observer) = &self.config.observer {
            observer.send(Observed::FailedToStart {
                error: e.log_text(),
            });
        }
    }

    /// Pass-through: the server answered the `initialize` `id` passed to it; the info line
    /// held for a server that was started again goes out now.
    pub(super) fn announce_legacy(&mut self, id: &Id) {
        if let Some(line) = self
            .phase
            .pass_through_mut()
            .and_then(|p| p.initialize_wait.as_mut())
            .filter(|w| &w.id == id)
            .and_then(|w| w.announce.take())
        {
            tracing::info!(target: "frontend", "{line}");
        }
    }

    /// Why the upstream is taken for a legacy server, as the info line says it.
    fn legacy_sign_text(&self, sign: &LegacySign) -> String {
        match sign {
            LegacySign::NoReply => format!(
                "it did not answer server/discover within --discover-timeout, {} s",
                self.config.discover_timeout.as_secs_f64()
            ),
            other => other.to_string(),
        }
    }

    /// The probe of the `initialize` `id` ended with `res`: `initializing` ends, in the
    /// phase that `res` leads to, and the frames held meanwhile are handled in it.
    pub(super) fn initialize_done(
        &mut self,
        id: Id,
        res: Result<Probed, ErrorObject>,
        ctx: &mut Context<Self>,
    ) {
        if self.finish_slot(&id, res.is_ok()).is_none() {
            return;
        }
        // The slot of `initialize` lives in `initializing` alone (a cancel of it, and the
        // end of the input, end both).
        let Some(initializing) = self.phase.leave_initializing() else {
            return;
        };
        // An exit at server/discover that made the bridge start the server again is the
        // expected one (its info line below says so); any other is warned of.
        if let Some(status) = initializing.lost
            && !matches!(res, Ok(Probed::Legacy(LegacySign::ExitedAtDiscover, _)))
        {
            tracing::warn!(target: "upstream", "the upstream server exited ({status})");
        }
        match res {
            Ok(Probed::Legacy(sign, request)) => {
                self.last_wait_token += 1;
                let token = self.last_wait_token;
                let restarted = sign == LegacySign::ExitedAtDiscover;
                let line = format!(
                    "the upstream server speaks 2025-11-25 or earlier ({}): passing the 2025-11-25 protocol through unchanged",
                    self.legacy_sign_text(&sign)
                );
                let announce = if restarted {
                    tracing::debug!(target: "frontend", "the upstream exited at server/discover: the editor's initialize goes to it, started again");
                    Some(line)
                } else {
                    tracing::info!(target: "frontend", "{line}");
                    None
                };
                let wait = InitializeWait {
                    id: id.clone(),
                    token,
                    silent_discover: sign == LegacySign::NoReply,
                    discover_404: sign == LegacySign::HttpStatus { status: 404 },
                    ran_before: self.ran,
                    restarted,
                    announce,
                };
                let mut relayed = HashMap::default();
                relayed.insert(id.clone(), pass_through::Relayed::now("initialize"));
                self.phase = Phase::PassThrough(PassThrough {
                    relayed,
                    listing: HashMap::default(),
                    initialize_wait: Some(wait),
                });
                // Counted as the wait for server/discover is: the time a sign-in runs (the
                // passed-through initialize of a URL upstream can get a 401) is the user's in
                // the browser, not the server's silence.
                let limit = self.config.discover_timeout;
                let times = self.sign_in.as_ref().map(|s| s.times.clone());
                let wait = async move {
                    outside_sign_in(limit, times.as_ref()).await;
                };
                ctx.spawn(
                    wait.into_actor(self)
                        .map(move |(), act, _| act.initialize_timed_out(token)),
                );
                self.ran = true;
                self.upstream.relay.do_send(Relay {
                    message: request,
                    delivery: Delivery::Request(id),
                    cancels: None,
                });
            }
            Ok(Probed::Modern(modern)) => {
                let (d, meta) = *modern;
                self.ran = true;
                tracing::info!(target: "frontend", "the upstream server is ready (protocol {})", d.protocol_version);
                let result =
                    translate::initialize_result(&d, &self.fallback_server_info(), REPLY_MASK);
                self.phase = Phase::Ready(Ready {
                    meta,
                    meta_keys: None,
                    declared: Declared::from_capabilities(&result["capabilities"]),
                    listen: None,
                });
                self.write(&jsonrpc::response(&id, result));
            }
            Err(e) => {
                // `leave_initializing` left the phase at `awaiting_initialize`.
                self.upstream.disconnect.do_send(upstream::Disconnect);
                tracing::warn!(target: "frontend", "initialize failed: {}", e.log_text());
                self.write(&jsonrpc::error_response(Some(&id), e));
            }
        }
        self.replay_held(initializing.held, ctx);
    }

    /// Pass-through: the legacy server did not answer the editor's `initialize` within
    /// `--discover-timeout`. The editor gets `timeout`, naming each silence and the option
    /// that sets the limit; the requests it sent after the `initialize` get
    /// `not_initialized` (as requests held behind a failed `initialize` do); the upstream is
    /// stopped, and the next `initialize` starts it again.
    pub(super) fn initialize_timed_out(&mut self, token: u64) {
        let Some(pass) = self.phase.pass_through_mut() else {
            return;
        };
        let Some(wait) = pass.initialize_wait.take_if(|w| w.token == token) else {
            return;
        };
        if pass.relayed.remove(&wait.id).is_none() {
            return;
        }
        let secs = self.config.discover_timeout.as_secs_f64();
        let detail = if wait.silent_discover {
            format!(
                "no answer to server/discover within --discover-timeout ({secs} s), nor to the initialize passed through to the server within {secs} s more: the server reads nothing or answers nothing; --discover-timeout sets both limits"
            )
        } else {
            format!(
                "no answer to the initialize passed through to the server within --discover-timeout ({secs} s)"
            )
        };
        self.fail_passed_initialize(&wait, Cause::Timeout.error(Some(json!(detail))));
        self.upstream.disconnect.do_send(upstream::Disconnect);
    }

    /// Pass-through: the `initialize` passed to the legacy server (already taken out of
    /// `relayed`) fails with `e`, as an `initialize` that fails during the probe does: the
    /// state returns to `awaiting_initialize`, and the requests sent after it get
    /// `not_initialized`, in the order they were sent.
    pub(super) fn fail_passed_initialize(&mut self, wait: &InitializeWait, e: ErrorObject) {
        let left = std::mem::replace(&mut self.phase, Phase::AwaitingInitialize);
        self.ran = wait.ran_before;
        tracing::warn!(target: "frontend", "initialize failed: {}", e.log_text());
        self.write(&jsonrpc::error_response(Some(&wait.id), e));
        let Phase::PassThrough(pass) = left else {
            return;
        };
        let mut rest: Vec<(Id, pass_through::Relayed)> = pass.relayed.into_iter().collect();
        rest.sort_by_key(|(_, sent)| sent.started);
        for (id, _) in rest {
            self.reply_error(Some(&id), Cause::NotInitialized, None);
        }
    }

    /// Pass-through: the request `id` of the editor failed in the transport with HTTP
    /// `status`. When it is the `initialize` and `server/discover` got 404 too, the URL's
    /// path is the likely cause (a server answers 404 at a path where it has no endpoint,
    /// RFC 9110 §15.5.5): one warning names the path. Never the query, which may hold a secret.
    pub(super) fn warn_of_the_url_path(&self, id: &Id, status: Option<u16>) {
        let again = status == Some(404)
            && self
                .phase
                .pass_through()
                .and_then(|p| p.initialize_wait.as_ref())
                .is_some_and(|w| &w.id == id && w.discover_404);
        // Only a URL upstream answers with an HTTP status.
        #[cfg(feature = "http")]
        if again && let UpstreamSpec::Http(spec) = &self.config.upstream {
            let path = spec.url.path();
            tracing::warn!(target: "frontend", "the server answers 404 at {path} for both server/discover and initialize: check the URL path");
        }
        #[cfg(not(feature = "http"))]
        let _ = again;
    }

    /// Pass-through: the request `id` of the editor is resolved (answered, or failed by the
    /// bridge); when it is the `initialize`, its time limit no longer applies.
    pub(super) fn end_initialize_wait(&mut self, id: &Id) {
        if let Some(pass) = self.phase.pass_through_mut()
            && pass.initialize_wait.as_ref().is_some_and(|w| &w.id == id)
        {
            pass.initialize_wait = None;
        }
    }

    /// Pass-through: takes out the wait of the `initialize` `id` passed to the legacy server,
    /// when it is that one.
    pub(super) fn take_initialize_wait(&mut self, id: &Id) -> Option<InitializeWait> {
        self.phase
            .pass_through_mut()?
            .initialize_wait
            .take_if(|w| &w.id == id)
    }
}
