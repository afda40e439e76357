//! The listen streams: [`Listen`] opens one (`subscriptions/listen` with the Listener's id, no
//! time limit), and its response goes to the Frontend in its place among the notifications.

use actix::prelude::*;
use serde_json::Value;

use super::Upstream;
use super::reply::UpstreamReply;
use crate::actors::frontend::messages::FromUpstream;
use crate::protocol::listen;
use crate::protocol::wire::id::Id;
use crate::transport::queue::{Delivery, Sent};

impl Upstream {
    /// A listen request got its response: it goes to the Frontend like a notification, so
    /// that it keeps its place among the stream's notifications.
    pub(super) fn listen_ended(&mut self, id: &Id, reply: UpstreamReply) {
        tracing::debug!(target: "upstream", "id={id} method={} outcome={}",
            listen::LISTEN_METHOD, reply.outcome());
        self.out.frontend.do_send(FromUpstream::ListenEnded {
            id: id.clone(),
            reply,
        });
    }
}

/// Open a listen stream: send `subscriptions/listen` with the id the Listener chose (its
/// generation), with no time limit. Its response comes as [`FromUpstream::ListenEnded`];
/// [`Cancel`](super::Cancel) ends it. False when there is no upstream.
#[derive(Message)]
#[rtype(result = "bool")]
pub struct Listen {
    /// The listen id.
    pub id: Id,
    /// The params, with the full 2026-07-28 `_meta` and the filter.
    pub params: Value,
}

impl Handler<Listen> for Upstream {
    type Result = bool;
    fn handle(&mut self, m: Listen, _: &mut Context<Self>) -> bool {
        let frame = listen::listen_request(&m.id, m.params);
        // A listen is never refused for a full queue: there is at most one change at a time,
        // and losing the stream would lose list changes.
        if self.conn.is_none() || self.write(&frame, Delivery::Always) != Sent::Queued {
            return false;
        }
        tracing::debug!(target: "upstream", "id={} method={} outcome=sent", m.id, listen::LISTEN_METHOD);
        self.listens.insert(m.id);
        true
    }
}
