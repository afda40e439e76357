//! The work of one forwarded request, as the future of its slot: the upstream call with its
//! time limit, and the rounds of input requests (2026-07-28 mrtr) until the result is
//! complete. The future runs inside the Frontend's context, so it only runs while its slot is
//! live; dropping it (a cancel, the time limit, the end of input) drops guards that cancel
//! the upstream request, the open `b-` requests and the open URL elicitations.

use futures_util::future::join_all;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::Duration;

use crate::actors::config::Timeouts;
use crate::actors::link::Link;
use crate::actors::pending::{Abandon, AbandonReason, PendingLinks, Register};
use crate::actors::upstream::reply::{CancelReason, UpstreamReply};
use crate::actors::upstream::{Call, UpstreamLinks};
use crate::log::limits::BridgeLimits;
use crate::protocol::revisions::errors::{Cause, ErrorCode, ErrorObject, relay_upstream_error};
use crate::protocol::revisions::legacy::Forwarded;
use crate::protocol::revisions::modern::ResultType;
use crate::protocol::revisions::note::{LineLevel, Note};
use crate::protocol::rules::input::{self, AnswerFailure, InputAnswer, Plan, Question};
use crate::protocol::rules::item_filter::ItemFilter;
use crate::protocol::rules::profile::ELICITATION_ID_PREFIX;
use crate::protocol::rules::shape::{self, ResultMembers};
use crate::protocol::rules::translate;
use crate::protocol::wire::id::Id;
use crate::protocol::wire::parts::FrameParts;
use crate::protocol::wire::raw::Object;
use crate::transport::queue::{Delivery, UPSTREAM_QUEUE_MAX_BYTES};
use crate::transport::writer::Writer;
/// What the slot answers: a result or an error object.
pub enum SlotOutcome {
    /// The result's JSON text: untouched members as the upstream's bytes.
    Result(FrameParts),
    Error(ErrorObject),
}

/// The upstream did not answer a request within its time limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("no answer within {} s", limit.as_secs_f64())]
pub struct TimedOut {
    /// The time limit that passed.
    pub limit: Duration,
}

/// The actors and settings a slot future works with.
#[derive(Clone)]
pub struct SlotEnv {
    pub upstream: Arc<UpstreamLinks>,
    pub pending: Arc<PendingLinks>,
    /// The writer toward the editor.
    pub output: Writer,
    /// The editor's 2025-11-25 capabilities (which input kinds it declared).
    pub editor_capabilities: Arc<Value>,
    pub timeouts: Timeouts,
    /// The editor's reason when it cancels the slot.
    pub cancel_reason: CancelReason,
    /// The item filter (`--allow-tool`, ...): the items it hides are left out of a list.
    pub filter: Option<Arc<ItemFilter>>,
    /// Who hears the adaptations of the results besides the log (`mcp-bridge doctor`).
    pub observer: Option<crate::transport::observe::Observer>,
    /// The rate limits of this bridge's warnings.
    pub limits: Arc<BridgeLimits>,
}

impl SlotEnv {
    /// Requests to the editor and `notifications/elicitation/complete` are never dropped.
    fn write(&self, v: &Value) {
        self.output.send_message(v, Delivery::Always);
    }
}

/// Sends one request upstream and waits at most `limit` for the answer. On a time-out or when
/// the waiting future is dropped (a cancelled slot), the [`crate::actors::upstream::CallAnswer`] it drops
/// cancels the request: taken out of the queue unsent, or `notifications/cancelled` with its
/// own id (and the editor's `reason` when the editor cancelled). Errors: [`TimedOut`].
pub async fn call(
    upstream: &Arc<UpstreamLinks>,
    method: &'static str,
    params: Object,
    client: Id,
    limit: Duration,
    reason: CancelReason,
) -> Result<UpstreamReply, TimedOut> {
    let (call, answer) = Call::new(method, params, client, upstream.clone(), reason);
    send_and_wait(upstream, call, answer, limit, AtLimit::Cancel).await
}

/// Sends the era probe (`server/discover` before the era is known, [`Call::probe`]: its id is
/// `mcp-bridge-probe-N`) and waits at most `limit` (`--discover-timeout`). Unlike [`call`], the
/// time limit does not cancel it: the request stays in flight ([`crate::actors::upstream::CallAnswer::let_run`]),
/// so that a slow 2026-07-28 server still answers and the Upstream can say so on stderr; a
/// legacy server's late answer is dropped there. Dropped before (the editor cancelled its
/// `initialize`), the probe is cancelled as any call is. Errors: [`TimedOut`].
pub async fn probe(
    upstream: &Arc<UpstreamLinks>,
    method: &'static str,
    params: Object,
    client: Id,
    limit: Duration,
    reason: CancelReason,
) -> Result<UpstreamReply, TimedOut> {
    let (call, answer) = Call::new(method, params, client, upstream.clone(), reason);
    send_and_wait(upstream, call.probe(), answer, limit, AtLimit::LetRun).await
}

/// What the time limit of [`send_and_wait`] does to the request.
enum AtLimit {
    /// The dropped [`crate::actors::upstream::CallAnswer`] cancels it ([`call`]).
    Cancel,
    /// It stays in flight ([`crate::actors::upstream::CallAnswer::let_run`], the era [`probe`]).
    LetRun,
}

/// Sends `call` and waits at most `limit` for its `answer`. One message: the reply (or Busy,
/// Closed) comes on the answer's own channel; an Upstream that stopped drops the call, and the
/// answer then resolves as Closed. Errors: [`TimedOut`].
async fn send_and_wait(
    upstream: &Arc<UpstreamLinks>,
    call: Call,
    mut answer: crate::actors::upstream::CallAnswer,
    limit: Duration,
    at_limit: AtLimit,
) -> Result<UpstreamReply, TimedOut> {
    upstream.call.do_send(call);
    match tokio::time::timeout(limit, &mut answer).await {
        Ok(Ok(reply)) => Ok(reply),
        Ok(Err(_)) => Ok(UpstreamReply::Closed),
        Err(_) => {
            if let AtLimit::LetRun = at_limit {
                answer.let_run();
            }
            Err(TimedOut { limit })
        }
    }
}

/// Cancels the `b-` requests of a round that have no answer when dropped while armed.
struct RoundGuard {
    pending: Link<Abandon>,
    ids: Vec<String>,
    reason: AbandonReason,
}

impl Drop for RoundGuard {
    fn drop(&mut self) {
        if !self.ids.is_empty() {
            self.pending.do_send(Abandon {
                ids: std::mem::take(&mut self.ids),
                reason: self.reason,
            });
        }
    }
}

/// The URL elicitations the editor accepted and the upstream may still ask for; each gets
/// `notifications/elicitation/complete` once the upstream stops asking, and when the request
/// ends in any way (the guard's drop).
struct OpenUrls {
    /// The writer toward the editor (the completions are never dropped).
    output: Writer,
    open: Vec<(String, String)>,
}

impl OpenUrls {
    fn complete(&self, elicitation_id: &str) {
        self.output.send_message(
            &input::elicitation_complete(elicitation_id),
            Delivery::Always,
        );
    }

    /// Keeps the URLs asked again; completes the others.
    fn retain_asked(&mut self, asked: &[String]) {
        let (keep, done): (Vec<_>, Vec<_>) = std::mem::take(&mut self.open)
            .into_iter()
            .partition(|(url, _)| asked.contains(url));
        for (_, id) in &done {
            self.complete(id);
        }
        self.open = keep;
    }
}

impl Drop for OpenUrls {
    fn drop(&mut self) {
        for (_, id) in &self.open {
            self.complete(id);
        }
    }
}

fn log_notes(notes: Vec<Note>) {
    for n in notes {
        match n.level {
            LineLevel::Warn => tracing::warn!(target: "translate", "{}", n.text),
            LineLevel::Info => tracing::info!(target: "translate", "{}", n.text),
            LineLevel::Debug => tracing::debug!(target: "translate", "{}", n.text),
        }
    }
}

/// Runs one forwarded request to its end: the first call, then as many rounds of input
/// requests as the upstream needs (at most [`input::MAX_ROUNDS`]).
pub async fn run(env: SlotEnv, f: Forwarded, original: Object, client: Id) -> SlotOutcome {
    // Kept for a retry (a clone shares the editor's bytes) only by a method that may answer
    // input_required; another method's request goes to the upstream without being kept (the
    // error rule reads the original params of resources/read alone, which may ask for input).
    let (mut params, original) = if f.may_require_input() {
        (original.clone(), original)
    } else {
        (original, Object::default())
    };
    let mut rounds = 0usize;
    let mut urls = OpenUrls {
        output: env.output.clone(),
        open: Vec::new(),
    };
    loop {
        let limit = if rounds == 0 {
            env.timeouts.first_round(f)
        } else {
            env.timeouts.later_round(f)
        };
        let reply = call(
            &env.upstream,
            f.method(),
            params,
            client.clone(),
            limit,
            env.cancel_reason.clone(),
        )
        .await
        .map(UpstreamReply::passed_through);
        let result = match reply {
            Ok(UpstreamReply::Result(v)) => v,
            Ok(UpstreamReply::Error(e)) => {
                let error = relay_upstream_error(&e);
                if rounds > 0
                    && error.code == ErrorCode::INVALID_PARAMS
                    && !translate::is_resource_not_found(f, &original, &error)
                {
                    return state_refused(f, error);
                }
                return SlotOutcome::Error(translate::adapt_error(f, &original, error));
            }
            Ok(UpstreamReply::Closed) => {
                return SlotOutcome::Error(Cause::UpstreamExited.error(None));
            }
            Ok(UpstreamReply::Invalid(detail)) => {
                return SlotOutcome::Error(Cause::InvalidResponse.error(detail.map(|d| json!(d))));
            }
            Ok(UpstreamReply::Busy) => {
                return SlotOutcome::Error(
                    Cause::UpstreamBusy.error(Some(json!(UPSTREAM_QUEUE_MAX_BYTES))),
                );
            }
            Ok(UpstreamReply::Failed(f)) => {
                return SlotOutcome::Error(Cause::TransportFailed.error(Some(json!(f.detail))));
            }
            Err(TimedOut { limit }) => {
                return SlotOutcome::Error(Cause::Timeout.error(Some(json!({
                    "method": f.method(), "timeoutSeconds": limit.as_secs_f64()
                }))));
            }
        };
        let members = match ResultMembers::read(result) {
            Ok(m) => m,
            Err(c) => return SlotOutcome::Error(c.error(None)),
        };
        match members.result_type() {
            ResultType::Complete => {
                let mut notes = Vec::new();
                let shaped = shape::shape_result(f, members, env.filter.as_deref(), &mut notes);
                if let Some(observer) = &env.observer {
                    observer.notes(f.method(), &notes);
                }
                log_notes(notes);
                return match shaped {
                    Ok(shaped) => SlotOutcome::Result(shaped),
                    Err(shape::Unusable(why)) => {
                        if env.limits.unusable_result.allow_shared() {
                            tracing::warn!(target: "translate", "{why}: the request gets invalid_response");
                        }
                        SlotOutcome::Error(Cause::InvalidResponse.error(Some(json!(why))))
                    }
                };
            }
            ResultType::Unknown => {
                return SlotOutcome::Error(
                    Cause::InvalidResponse.error(Some(json!("unknown resultType"))),
                );
            }
            ResultType::InputRequired if !f.may_require_input() => {
                return SlotOutcome::Error(
                    Cause::InvalidInputRequest
                        .error(Some(json!(format!("{} may not ask for input", f.method())))),
                );
            }
            ResultType::InputRequired => {}
        }
        let Some(result) = members.to_value() else {
            return SlotOutcome::Error(Cause::InvalidResponse.error(None));
        };
        let ir = match input::read_input_required(&result) {
            Ok(ir) => ir,
            Err(fail) => return SlotOutcome::Error(fail.error()),
        };
        let had_requests = !ir.input_requests.is_empty();
        if had_requests {
            if rounds >= input::MAX_ROUNDS {
                return SlotOutcome::Error(
                    Cause::TooManyRounds.error(Some(json!(input::MAX_ROUNDS))),
                );
            }
            rounds += 1;
        }
        let responses = match ask_round(&env, &ir.input_requests, &mut urls).await {
            Ok(r) => r,
            Err(outcome) => return outcome,
        };
        params = input::retry_params(
            &original,
            responses,
            ir.request_state.as_deref(),
            had_requests,
        );
    }
}

/// The answer when the upstream refused the answers of a round with -32602 (an expired or
/// refused `requestState`): a tool result with `isError`, or an error with the same text.
fn state_refused(f: Forwarded, e: ErrorObject) -> SlotOutcome {
    if f == Forwarded::ToolsCall {
        return SlotOutcome::Result(FrameParts::of_value(&json!({
            "content": [{"type": "text", "text": input::STATE_REFUSED_TEXT}],
            "isError": true
        })));
    }
    SlotOutcome::Error(ErrorObject {
        message: input::STATE_REFUSED_TEXT.into(),
        ..e
    })
}

/// The `elicitationId` of the URL elicitation asked with the `b-` request `request_id`.
fn elicitation_id(request_id: &str) -> String {
    format!("{ELICITATION_ID_PREFIX}{request_id}")
}

/// One round: every check first (a failure sends nothing), then all `b-` requests at once,
/// then every answer checked. Gives the `inputResponses`.
async fn ask_round(
    env: &SlotEnv,
    requests: &[(String, Value)],
    urls: &mut OpenUrls,
) -> Result<Map<String, Value>, SlotOutcome> {
    let mut responses = Map::new();
    let mut questions: Vec<(String, Question)> = Vec::new();
    let mut asked_urls = Vec::new();
    for (key, req) in requests {
        match input::plan(key, req, &env.editor_capabilities) {
            Ok(Plan::Decline(why)) => {
                if env.limits.declined_url.allow_shared() {
                    tracing::warn!(target: "input", "declined the URL of input request {key:?}: {}", why.describe());
                }
                responses.insert(key.clone(), input::decline_response());
            }
            Ok(Plan::Ask(q)) => {
                if let Some(url) = &q.url {
                    asked_urls.push(url.clone());
                    if urls.open.iter().any(|(u, _)| u == url) {
                        // Already accepted: the editor does not show it again, only Continue.
                        let message = q
                            .params
                            .as_ref()
                            .and_then(|p| p["message"].as_str())
                            .unwrap_or("")
                            .to_string();
                        let mut c = input::continue_question(&message);
                        c.url = Some(url.clone());
                        questions.push((key.clone(), c));
                        continue;
                    }
                }
                questions.push((key.clone(), q));
            }
            Err(fail) => return Err(SlotOutcome::Error(fail.error())),
        }
    }
    urls.retain_asked(&asked_urls);
    if questions.is_empty() {
        return Ok(responses);
    }
    let slots = env
        .pending
        .register
        .send(Register(questions.len()))
        .await
        .unwrap_or_default();
    if slots.len() != questions.len() {
        return Err(SlotOutcome::Error(Cause::Closed.error(None)));
    }
    let mut guard = RoundGuard {
        pending: env.pending.abandon.clone(),
        ids: slots.iter().map(|(id, _)| id.clone()).collect(),
        reason: AbandonReason::RequestCancelled,
    };
    let mut receivers = Vec::with_capacity(slots.len());
    for ((id, rx), (_, q)) in slots.into_iter().zip(&questions) {
        env.write(&input::editor_request(&id, &elicitation_id(&id), q));
        receivers.push(async move { (id, rx.await.unwrap_or(InputAnswer::Invalid)) });
    }
    let answers = match tokio::time::timeout(env.timeouts.input, join_all(receivers)).await {
        Ok(a) => a,
        Err(_) => {
            guard.reason = AbandonReason::NoAnswerInTime;
            return Err(SlotOutcome::Error(
                Cause::InputTimeout.error(Some(json!(env.timeouts.input.as_secs_f64()))),
            ));
        }
    };
    guard.ids.clear();
    for ((bid, answer), (key, q)) in answers.iter().zip(&questions) {
        match input::check_answer(q, answer) {
            Ok(resp) => {
                if let Some(url) = input::accepted_url(q, &resp) {
                    urls.open.push((url.to_string(), elicitation_id(bid)));
                }
                responses.insert(key.clone(), resp);
            }
            Err(AnswerFailure::Invalid) => {
                return Err(SlotOutcome::Error(
                    Cause::InvalidClientAnswer.error(Some(json!(key))),
                ));
            }
            Err(AnswerFailure::EditorError(e)) => {
                return Err(SlotOutcome::Error(relay_upstream_error(&e)));
            }
        }
    }
    Ok(responses)
}
