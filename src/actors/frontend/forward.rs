//! Forwarded requests: admission against `--max-in-flight`, the slot of each request, its
//! cancel, its end and the methods' counters.

use actix::prelude::*;
use serde_json::{Value, json};
use std::time::Instant;

use super::rounds::{self, SlotEnv, SlotOutcome};
use super::slots::{
    LOG_BURST, MAX_LOG_MESSAGES_PER_SEC, MAX_PROGRESS_PER_SEC, PROGRESS_BURST, Slot, TokenBucket,
};
use super::{Frontend, Phase, Ready};
use crate::actors::upstream;
use crate::actors::upstream::reply::CancelReason;
use crate::protocol::revisions::errors::Cause;
use crate::protocol::revisions::legacy::{Forwarded, RequestClass};
use crate::protocol::rules::relay;
use crate::protocol::rules::translate::{self, MetaKeys};
use crate::protocol::wire::id::Id;
use crate::protocol::wire::jsonrpc;
use crate::protocol::wire::parts;
use crate::protocol::wire::raw;
use crate::transport::queue::Delivery;

impl Frontend {
    /// Removes a slot and stops its future; its response is never written. Returns whether
    /// the slot existed. The slot of an `initialize` that runs ends `initializing`: the
    /// upstream stops, and the frames held meanwhile get what `awaiting_initialize` answers.
    pub(super) fn cancel_slot(&mut self, id: &Id, ctx: &mut Context<Self>) -> bool {
        let Some(slot) = self.slots.remove(id) else {
            return false;
        };
        if let Some(h) = slot.handle {
            ctx.cancel_future(h);
        }
        if let Some(t) = &slot.upstream_progress_token {
            self.progress_routes.remove(t);
        }
        if slot.method == RequestClass::Initialize
            && let Some(initializing) = self.phase.leave_initializing()
        {
            self.upstream.disconnect.do_send(upstream::Disconnect);
            self.replay_held(initializing.held, ctx);
        }
        true
    }

    pub(super) fn admit(
        &mut self,
        id: &Id,
        method: RequestClass,
        editor_token: Option<Value>,
        upstream_token: Option<String>,
    ) -> bool {
        if self.slots.len() >= self.config.max_in_flight {
            self.reply_error(
                Some(id),
                Cause::TooManyRequests,
                Some(json!(self.config.max_in_flight)),
            );
            return false;
        }
        if let Some(t) = &upstream_token {
            self.progress_routes.insert(t.clone(), id.clone());
        }
        let now = Instant::now();
        self.slots.insert(
            id.clone(),
            Slot {
                handle: None,
                method,
                started: now,
                editor_progress_token: editor_token,
                upstream_progress_token: upstream_token,
                progress_bucket: TokenBucket::new(PROGRESS_BURST, MAX_PROGRESS_PER_SEC, now),
                cancel_reason: CancelReason::default(),
                log_bucket: TokenBucket::new(LOG_BURST, MAX_LOG_MESSAGES_PER_SEC, now),
            },
        );
        true
    }

    /// The cell of the editor's cancel reason of a slot just admitted.
    pub(super) fn cancel_reason_of(&self, id: &Id) -> CancelReason {
        self.slots
            .get(id)
            .map(|s| s.cancel_reason.clone())
            .unwrap_or_default()
    }

    /// Takes a finished slot out of the table; `None` when it was cancelled meanwhile.
    pub(super) fn finish_slot(&mut self, id: &Id, ok: bool) -> Option<Slot> {
        let slot = self.slots.remove(id)?;
        if let Some(t) = &slot.upstream_progress_token {
            self.progress_routes.remove(t);
        }
        if let RequestClass::Forward(f) = slot.method {
            self.methods.record(f.method(), ok, slot.started.elapsed());
        }
        Some(slot)
    }

    pub(super) fn start_forward(
        &mut self,
        id: Id,
        f: Forwarded,
        params: Option<raw::Params>,
        ctx: &mut Context<Self>,
    ) {
        // A request that names an item the filter hides gets what a server without it
        // answers, and is never sent upstream.
        if let Some(filter) = &self.config.item_filter
            && let Some(error) = filter.refusal_raw(f, params.as_ref())
        {
            return self.write(&jsonrpc::error_response(Some(&id), error));
        }
        self.next_progress_token += 1;
        let n = self.next_progress_token;
        if matches!(&self.phase, Phase::Ready(r) if r.meta_keys.is_none()) {
            let keys = MetaKeys::of(&self.current_meta());
            if let Phase::Ready(r) = &mut self.phase {
                r.meta_keys = Some(keys);
            }
        }
        // Only `ready` forwards.
        let Phase::Ready(Ready {
            meta_keys: Some(keys),
            ..
        }) = &self.phase
        else {
            return;
        };
        // The bridge's token is made only for a request that carries the editor's.
        let token = || relay::upstream_progress_token(n);
        let fwd = match translate::forward_params(params, keys, || Some(json!(token()))) {
            Ok(fwd) => fwd,
            Err(c) => {
                return self.reply_error(Some(&id), c, Some(json!("params must be an object")));
            }
        };
        let upstream_token = fwd.editor_progress_token.as_ref().map(|_| token());
        if !self.admit(
            &id,
            RequestClass::Forward(f),
            fwd.editor_progress_token.clone(),
            upstream_token,
        ) {
            return;
        }
        let env = SlotEnv {
            upstream: self.upstream.clone(),
            pending: self.pending.clone(),
            output: self.output.clone(),
            editor_capabilities: self.editor_capabilities.clone(),
            timeouts: self.config.timeouts.clone(),
            cancel_reason: self.cancel_reason_of(&id),
            filter: self.config.item_filter.clone(),
            observer: self.config.observer.clone(),
            limits: self.limits.clone(),
        };
        let fut = rounds::run(env, f, fwd.params, id.clone());
        let slot_id = id.clone();
        let h = ctx.spawn(
            fut.into_actor(self)
                .map(move |out, act, _ctx| act.forward_done(slot_id, out)),
        );
        if let Some(s) = self.slots.get_mut(&id) {
            s.handle = Some(h);
        }
    }

    pub(super) fn forward_done(&mut self, id: Id, out: SlotOutcome) {
        let ok = matches!(out, SlotOutcome::Result(_));
        if self.finish_slot(&id, ok).is_none() {
            return;
        }
        match out {
            SlotOutcome::Result(r) => {
                self.output
                    .send_frame(parts::response_frame(&id, r), Delivery::Always);
            }
            SlotOutcome::Error(e) => self.write(&jsonrpc::error_response(Some(&id), e)),
        }
    }
}
