//! The [`ListenGate`]: the state of the step that writes listen traffic to the editor, which
//! decides which stream is active by its generation.

use super::end::StreamEnd;
use super::event::ListenEvent;
use super::subscription_id;
use super::subscriptions::{Declared, unacknowledged};
use crate::protocol::revisions::modern::UpstreamNotification;
use crate::protocol::wire::id::Id;
use crate::protocol::wire::jsonrpc;
use serde_json::{Value, json};
use std::collections::{BTreeSet, HashMap};

/// What the [`ListenGate`] tells the Listener, in the order of the upstream.
#[derive(Clone, Debug, PartialEq)]
pub enum Fact {
    /// The first acknowledgment of a stream.
    Acked {
        /// The listen id.
        id: Id,
        /// What the stream asked for and the acknowledgment leaves out (see
        /// [`unacknowledged`]).
        missing: Vec<String>,
    },
    /// A stream ended; `acked` tells whether it had been acknowledged.
    Ended {
        /// The listen id.
        id: Id,
        /// How it ended.
        end: StreamEnd,
        /// Whether its acknowledgment came first.
        acked: bool,
    },
    /// The upstream's transport signed in (HTTP): a stream refused with 401/403 opens again.
    SignedIn,
}

/// What the gate made of one upstream notification.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Not listen traffic of the bridge: the caller handles it as before.
    Pass,
    /// Listen traffic: write these frames to the editor in this order, then tell the Listener
    /// the fact, if any. Everything else of the notification stays inside the bridge.
    Handled {
        /// Frames for the editor.
        frames: Vec<Value>,
        /// A fact for the Listener.
        fact: Option<Fact>,
    },
}

#[derive(Clone, Debug)]
pub(crate) struct GateStream {
    generation: u64,
    uris: BTreeSet<String>,
    acked: bool,
    respond: Option<Id>,
}

/// The write step of listen traffic. The Listener registers each stream (its generation, its
/// URIs, and the editor request to answer `{}` at its acknowledgment) before its request goes
/// out, and retires it when it replaces or stops it. A stream becomes active at its first
/// acknowledgment when its generation is above the active one, so an older stream never
/// becomes active again; only the events of the active stream reach the editor.
#[derive(Clone, Debug, Default)]
pub struct ListenGate {
    declared: Declared,
    streams: HashMap<Id, GateStream>,
    active: u64,
}

impl ListenGate {
    /// A gate for what the editor was told.
    pub fn new(declared: Declared) -> ListenGate {
        ListenGate {
            declared,
            streams: HashMap::new(),
            active: 0,
        }
    }

    /// Knows the stream `id` from now on.
    pub fn register(
        &mut self,
        id: Id,
        generation: u64,
        uris: BTreeSet<String>,
        respond: Option<Id>,
    ) {
        self.streams.insert(
            id,
            GateStream {
                generation,
                uris,
                acked: false,
                respond,
            },
        );
    }

    /// Forgets a stream the bridge stops: nothing of it reaches the editor or the Listener
    /// any more. Returns whether it was known.
    pub fn retire(&mut self, id: &Id) -> bool {
        self.streams.remove(id).is_some()
    }

    /// The generation of the active stream (0 before the first acknowledgment).
    #[cfg(test)]
    pub fn active_generation(&self) -> u64 {
        self.active
    }

    /// The end of a known stream (its response, or the time limit of its acknowledgment,
    /// which counts only while it is not acknowledged). `None` for a stream that is not known
    /// or, for [`StreamEnd::AckTimeout`], already acknowledged.
    pub fn end(&mut self, id: &Id, end: StreamEnd) -> Option<Fact> {
        let s = self.streams.get(id)?;
        if s.acked && matches!(end, StreamEnd::AckTimeout { .. }) {
            return None;
        }
        let acked = s.acked;
        self.streams.remove(id);
        Some(Fact::Ended {
            id: id.clone(),
            end,
            acked,
        })
    }

    /// One upstream notification, in upstream order.
    pub fn on_notification(&mut self, n: &UpstreamNotification) -> Step {
        let params = n.params();
        if let UpstreamNotification::Cancelled(_) = n {
            return match params.get("requestId").and_then(Id::from_value) {
                Some(id) if self.streams.contains_key(&id) => Step::Handled {
                    frames: Vec::new(),
                    fact: self.end(&id, StreamEnd::ServerCancelled),
                },
                _ => Step::Pass,
            };
        }
        let Some(id) = subscription_id(params) else {
            return Step::Pass;
        };
        let nothing = Step::Handled {
            frames: Vec::new(),
            fact: None,
        };
        let Some(s) = self.streams.get_mut(&id) else {
            return nothing;
        };
        if let UpstreamNotification::SubscriptionsAcknowledged(_) = n {
            if s.acked {
                return nothing;
            }
            s.acked = true;
            if s.generation > self.active {
                self.active = s.generation;
            }
            let frames = s
                .respond
                .take()
                .map(|editor| vec![jsonrpc::response(&editor, json!({}))])
                .unwrap_or_default();
            let asked = self.declared.filter(&s.uris);
            let missing = unacknowledged(&asked, &params["notifications"]);
            return Step::Handled {
                frames,
                fact: Some(Fact::Acked { id, missing }),
            };
        }
        match ListenEvent::from_notification(n) {
            Some(event)
                if s.acked
                    && s.generation == self.active
                    && self.declared.allows(&event, &s.uris) =>
            {
                Step::Handled {
                    frames: vec![event.to_editor()],
                    fact: None,
                }
            }
            _ => nothing,
        }
    }
}
