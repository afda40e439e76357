//! The Frontend's side of the listen stream: it asks the Supervisor to run the Listener, passes the editor's
//! subscription changes and log level to it, and runs the [`ListenGate`] on every upstream
//! notification and listen response. The Frontend handles the upstream's messages in upstream
//! order and writes a result only after the notifications before it, so a list change the
//! upstream writes before a result reaches the editor before that result.

use actix::prelude::*;
use serde_json::{Value, json};

use super::messages::{ChangeAnswer, GateUpdate};
use super::{Frontend, Lifecycle};
use crate::actors::listener::{Change, ListenFact, SetLogLevel};
use crate::actors::supervisor::messages::StartListener;
use crate::actors::upstream::UpstreamReply;
use crate::protocol::errors::Cause;
use crate::protocol::jsonrpc::Id;
use crate::protocol::legacy::RequestClass;
use crate::protocol::listen::{self, Fact, ListenGate, Step, StreamEnd};
use crate::protocol::modern::UpstreamNotification;

/// The gate of the write step, once the Listener was asked for.
pub(super) struct ListenSide {
    gate: ListenGate,
}

impl Frontend {
    /// At `notifications/initialized` in `ready`: asks the Supervisor once to run the
    /// Listener, when the `initialize` result declared a list change or `resources.subscribe`.
    /// What the Frontend sends it meanwhile waits in its mailbox.
    pub(super) fn start_listener(&mut self) {
        if self.listen.is_some() || self.state != Lifecycle::Ready || !self.declared.any() {
            return;
        }
        self.supervisor.start_listener.do_send(StartListener {
            declared: self.declared,
            meta: self.current_meta(),
        });
        self.listen = Some(ListenSide {
            gate: ListenGate::new(self.declared),
        });
    }

    /// `resources/subscribe` and `resources/unsubscribe` in `ready`: -32601 without a listen
    /// stream that honours `resources.subscribe`; else the Listener answers.
    pub(super) fn on_resource_subscription(
        &mut self,
        id: Id,
        class: RequestClass,
        subscribe: bool,
        params: Option<&Value>,
    ) {
        if self.listen.is_none() || !self.declared.subscribe {
            let method = json!(class.method());
            return self.reply_error(Some(&id), Cause::MethodNotFound, Some(method));
        }
        let Some(uri) = listen::resource_uri(params) else {
            return self.reply_error(
                Some(&id),
                Cause::InvalidParams,
                Some(json!("params.uri must be a non-empty string")),
            );
        };
        self.open_changes.insert(id.clone());
        self.listener.change.do_send(Change { id, subscribe, uri });
    }

    /// The level of `logging/setLevel` for the next listen requests.
    pub(super) fn listener_log_level(&self) {
        if self.listen.is_some() {
            self.listener.log_level.do_send(SetLogLevel(self.log_level));
        }
    }

    /// Runs the gate on an upstream notification. True when it was listen traffic of the
    /// bridge (written to the editor as the gate says, or kept inside).
    pub(super) fn listen_step(&mut self, notification: &UpstreamNotification) -> bool {
        let Some(side) = &mut self.listen else {
            return false;
        };
        let (frames, fact) = match side.gate.on_notification(notification) {
            Step::Pass => return false,
            Step::Handled { frames, fact } => (frames, fact),
        };
        if let Some(f) = fact {
            self.listener.fact.do_send(ListenFact(f));
        }
        for f in frames {
            if f.get("method").is_none() {
                self.answer_change(f);
            } else {
                self.write(&f);
            }
        }
        true
    }

    /// Writes the answer to a subscription change unless the editor cancelled it, and frees
    /// its id for a new request.
    pub(super) fn answer_change(&mut self, frame: Value) {
        let id = frame.get("id").and_then(Id::from_value);
        if id.as_ref().is_some_and(|id| self.open_changes.remove(id)) {
            self.write(&frame);
        } else {
            tracing::debug!(target: "frontend", "dropped the answer to a cancelled subscription change");
        }
    }

    /// A sign-in completed: the Listener opens a stream that waits for one.
    pub(super) fn on_signed_in(&mut self) {
        if self.listen.is_some() {
            self.listener.fact.do_send(ListenFact(Fact::SignedIn));
        }
    }

    /// The response to a listen request ended that stream.
    pub(super) fn on_listen_ended(&mut self, id: Id, reply: UpstreamReply) {
        let end = match reply {
            UpstreamReply::Result(_) => StreamEnd::ServerResult,
            UpstreamReply::Error(error) => StreamEnd::Refused { error },
            UpstreamReply::Closed | UpstreamReply::Busy => StreamEnd::Closed,
            UpstreamReply::Invalid(_) => StreamEnd::Invalid,
            UpstreamReply::Failed(f) => StreamEnd::Failed {
                status: f.status,
                detail: f.detail,
            },
        };
        if let Some(side) = &mut self.listen
            && let Some(f) = side.gate.end(&id, end)
        {
            self.listener.fact.do_send(ListenFact(f));
        }
    }
}

impl Handler<ChangeAnswer> for Frontend {
    type Result = ();
    fn handle(&mut self, ChangeAnswer(frame): ChangeAnswer, _: &mut Context<Self>) {
        self.answer_change(frame);
    }
}

impl Handler<GateUpdate> for Frontend {
    type Result = ();
    fn handle(&mut self, m: GateUpdate, _: &mut Context<Self>) {
        let ack_timeout = self.config.listen.ack_timeout;
        let Some(side) = &mut self.listen else {
            return;
        };
        match m {
            GateUpdate::Register {
                id,
                generation,
                uris,
                respond,
            } => side.gate.register(id, generation, uris, respond),
            GateUpdate::Retire { id } => {
                side.gate.retire(&id);
            }
            GateUpdate::Expire { id } => {
                let end = StreamEnd::AckTimeout { limit: ack_timeout };
                if let Some(f) = side.gate.end(&id, end) {
                    self.listener.fact.do_send(ListenFact(f));
                }
            }
        }
    }
}
