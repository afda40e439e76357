//! The Frontend's side of the listen stream: it asks the Supervisor to run the Listener, passes the editor's
//! subscription changes and log level to it, and runs the [`ListenGate`] on every upstream
//! notification and listen response. The Frontend handles the upstream's messages in upstream
//! order and writes a result only after the notifications before it, so a list change the
//! upstream writes before a result reaches the editor before that result.

use actix::prelude::*;
use foldhash::HashSet;
use serde_json::{Value, json};

use super::messages::{ChangeAnswer, GateUpdate};
use super::{Frontend, Phase};
use crate::actors::listener::{Change, ListenFact, SetLogLevel};
use crate::actors::supervisor::messages::StartListener;
use crate::actors::upstream::reply::UpstreamReply;
use crate::protocol::listen::{self, Fact, ListenGate, Step, StreamEnd};
use crate::protocol::revisions::errors::Cause;
use crate::protocol::revisions::legacy::RequestClass;
use crate::protocol::revisions::modern::UpstreamNotification;
use crate::protocol::wire::id::Id;

/// The Frontend's side of the listen stream, once the Listener was asked for.
pub(super) struct ListenSide {
    /// The write step of the listen traffic (`protocol::listen`).
    gate: ListenGate,
    /// Ids of `resources/subscribe`/`unsubscribe` requests not answered yet.
    open_changes: HashSet<Id>,
}

impl Frontend {
    /// At `notifications/initialized` in `ready`: asks the Supervisor once to run the
    /// Listener, when the `initialize` result declared a list change or `resources.subscribe`.
    /// What the Frontend sends it meanwhile waits in its mailbox.
    pub(super) fn start_listener(&mut self) {
        let Phase::Ready(ready) = &self.phase else {
            return;
        };
        if ready.listen.is_some() || !ready.declared.any() {
            return;
        }
        let declared = ready.declared;
        self.supervisor.start_listener.do_send(StartListener {
            declared,
            meta: self.current_meta(),
        });
        if let Phase::Ready(ready) = &mut self.phase {
            ready.listen = Some(ListenSide {
                gate: ListenGate::new(declared),
                open_changes: HashSet::default(),
            });
        }
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
        let subscribable =
            matches!(&self.phase, Phase::Ready(r) if r.listen.is_some() && r.declared.subscribe);
        if !subscribable {
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
        if let Some(side) = self.phase.listen_mut() {
            side.open_changes.insert(id.clone());
        }
        self.listener.change.do_send(Change { id, subscribe, uri });
    }

    /// Whether a subscription change with the id `id` waits for its answer.
    pub(super) fn is_open_change(&self, id: &Id) -> bool {
        self.phase
            .listen()
            .is_some_and(|side| side.open_changes.contains(id))
    }

    /// Forgets the subscription change `id` (its answer is never written); whether it was
    /// open.
    pub(super) fn close_change(&mut self, id: &Id) -> bool {
        self.phase
            .listen_mut()
            .is_some_and(|side| side.open_changes.remove(id))
    }

    /// The level of `logging/setLevel` for the next listen requests.
    pub(super) fn listener_log_level(&self) {
        if self.phase.listen().is_some() {
            self.listener.log_level.do_send(SetLogLevel(self.log_level));
        }
    }

    /// Runs the gate on an upstream notification. True when it was listen traffic of the
    /// bridge (written to the editor as the gate says, or kept inside).
    pub(super) fn listen_step(&mut self, notification: &UpstreamNotification) -> bool {
        let Some(side) = self.phase.listen_mut() else {
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
        if id.as_ref().is_some_and(|id| self.close_change(id)) {
            self.write(&frame);
        } else {
            tracing::debug!(target: "frontend", "dropped the answer to a cancelled subscription change");
        }
    }

    /// A sign-in completed: the Listener opens a stream that waits for one.
    pub(super) fn on_signed_in(&mut self) {
        if self.phase.listen().is_some() {
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
        if let Some(side) = self.phase.listen_mut()
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
        let Some(side) = self.phase.listen_mut() else {
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
