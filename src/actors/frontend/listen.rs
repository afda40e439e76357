//! The Frontend's side of the listen stream: it starts the Listener, passes the editor's
//! subscription changes and log level to it, and runs the [`Gate`] on every upstream
//! notification and listen response. The Frontend handles the upstream's messages in upstream
//! order and writes a result only after the notifications before it, so a list change the
//! upstream writes before a result reaches the editor before that result.

use actix::prelude::*;
use serde_json::{Value, json};

use super::{Frontend, Lifecycle};
use crate::actors::listener::ChangeAnswer;
use crate::actors::listener::{
    Change, GateUpdate, ListenFact, Listener, ListenerLinks, SetLogLevel, Stop, StopCause,
};
use crate::actors::upstream::Reply;
use crate::protocol::errors::Cause;
use crate::protocol::jsonrpc::Id;
use crate::protocol::legacy::RequestClass;
use crate::protocol::modern::UpstreamNotification;
use crate::protocol::notify::{self, Gate, Step, StreamEnd};

/// The running Listener and the gate of the write step.
pub(super) struct ListenSide {
    listener: Addr<Listener>,
    gate: Gate,
}

impl Frontend {
    /// At `notifications/initialized` in `ready`: starts the Listener once, when the
    /// `initialize` result declared a list change or `resources.subscribe`.
    pub(super) fn start_listener(&mut self, ctx: &mut Context<Self>) {
        if self.listen.is_some() || self.state != Lifecycle::Ready || !self.declared.any() {
            return;
        }
        let links = ListenerLinks {
            frontend: ctx.address(),
            upstream: self.upstream.clone(),
            upstream_stats: self.upstream_stats.clone(),
            output: self.output.clone(),
        };
        let listener = Listener::new(
            self.config.listen,
            self.declared,
            self.current_meta(),
            links,
        )
        .start();
        self.listen = Some(ListenSide {
            listener,
            gate: Gate::new(self.declared),
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
        let Some(side) = self.listen.as_ref().filter(|_| self.declared.subscribe) else {
            let method = json!(class.method());
            return self.reply_error(Some(&id), Cause::MethodNotFound, Some(method));
        };
        let Some(uri) = notify::resource_uri(params) else {
            return self.reply_error(
                Some(&id),
                Cause::InvalidParams,
                Some(json!("params.uri must be a non-empty string")),
            );
        };
        self.open_changes.insert(id.clone());
        side.listener.do_send(Change { id, subscribe, uri });
    }

    /// The level of `logging/setLevel` for the next listen requests.
    pub(super) fn listener_log_level(&self) {
        if let Some(side) = &self.listen {
            side.listener.do_send(SetLogLevel(self.log_level));
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
            side.listener.do_send(ListenFact(f));
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

    /// The response to a listen request ended that stream.
    pub(super) fn on_listen_ended(&mut self, id: Id, reply: Reply) {
        let end = match reply {
            Reply::Result(_) => StreamEnd::ServerResult,
            Reply::Error(error) => StreamEnd::Refused { error },
            Reply::Closed | Reply::Busy => StreamEnd::Closed,
            Reply::Invalid => StreamEnd::Invalid,
        };
        if let Some(side) = &mut self.listen
            && let Some(f) = side.gate.end(&id, end)
        {
            side.listener.do_send(ListenFact(f));
        }
    }

    /// The upstream exited: the Listener stops and answers the changes in flight.
    pub(super) fn listener_gone(&self) {
        if let Some(side) = &self.listen {
            side.listener.do_send(Stop(StopCause::UpstreamGone));
        }
    }

    /// Stops the Listener (its streams are cancelled); the returned request resolves once it
    /// has stopped.
    pub(super) fn stop_listener(&mut self, cause: StopCause) -> Option<Request<Listener, Stop>> {
        self.listen
            .as_ref()
            .map(|side| side.listener.send(Stop(cause)))
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
                    side.listener.do_send(ListenFact(f));
                }
            }
        }
    }
}
