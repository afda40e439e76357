//! The messages the Frontend handles. The Upstream and the Listener send them, and the
//! Frontend sends to both, so they live in this file, which imports no actor (only the
//! Upstream's [`UpstreamReply`] vocabulary, a leaf).

use actix::prelude::*;
use serde_json::Value;
use std::collections::BTreeSet;

use crate::actors::supervisor::messages::StopSignal;
use crate::actors::upstream::reply::UpstreamReply;
use crate::protocol::rules::passthrough::MessageKind;
use crate::protocol::wire::id::Id;
use crate::transport::upstream::EndCause;

/// What the Upstream actor tells the Frontend, in upstream order.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub enum FromUpstream {
    /// A notification of the upstream (progress, message, list changes, ...).
    Notification { method: String, params: Value },
    /// The response to a listen request (see `upstream::Listen`), in upstream order with the
    /// notifications.
    ListenEnded { id: Id, reply: UpstreamReply },
    /// Pass-through (a legacy upstream): one message of the upstream as it came (a response,
    /// a request to the editor, a notification), and what it is.
    Relayed { message: Value, kind: MessageKind },
    /// Pass-through: the editor's request `id` did not reach the upstream, or the upstream
    /// answered it with a frame the bridge cannot read: the bridge answers it itself
    /// ([`UpstreamReply::Busy`]: `upstream_busy`, [`UpstreamReply::Closed`]: `upstream_exited`,
    /// [`UpstreamReply::Invalid`]: `invalid_response`).
    RelayFailed { id: Id, reply: UpstreamReply },
    /// Pass-through: the editor's request `id` has the id of a request of the bridge's own
    /// still unanswered upstream (the era probe's reserved `mcp-bridge-probe-N`): it was not
    /// sent, since its answer could not be told from the probe's; it gets `duplicate_id`.
    IdInUse { id: Id },
    /// The upstream's transport signed in (or refreshed its token): a listen stream that
    /// waits for a sign-in opens again.
    SignedIn,
}

/// The answer (a response frame) to a `resources/subscribe` or `resources/unsubscribe`, from
/// the Listener.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct ChangeAnswer(pub Value);

/// What the Listener tells the Frontend's gate. A `Register` is sent before the stream's
/// request goes upstream, so the gate knows the stream before anything of it can arrive.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub enum GateUpdate {
    /// A new stream: its generation, its URIs, and the editor request that gets `{}` at its
    /// acknowledgment (a subscription change).
    Register {
        id: Id,
        generation: u64,
        uris: BTreeSet<String>,
        respond: Option<Id>,
    },
    /// The bridge stops the stream (replaced, or shutdown): nothing more of it goes anywhere.
    Retire { id: Id },
    /// The time limit of the acknowledgment passed: the gate ends the stream if it is still
    /// not acknowledged, and then reports it as a `ListenFact`.
    Expire { id: Id },
}

/// Shutdown step (Supervisor): the state becomes `closing` and every slot is cancelled
/// without a response (its guards cancel the upstream request and the open `b-` requests).
/// After a signal (`signal` names it) the editor still reads: an `initialize` in flight, and
/// the requests held behind it, get `closed` (the signal in `data.detail`) instead of
/// nothing, so the editor's start does not wait for ever.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct Quiesce {
    pub signal: Option<StopSignal>,
}

/// Shutdown step (Supervisor), after the Listener stopped: what is in the mailbox before it
/// is handled (answers of subscription changes), then the Frontend stops with its input. The
/// answer: whether the bridge ran, that is an `initialize` succeeded at least once (the state
/// reached `ready` or `pass_through`); only then is the metrics totals line written.
#[derive(Message, Debug)]
#[rtype(result = "bool")]
pub struct Finish;

/// The upstream was lost (from the Supervisor, which learned it from the Upstream). In
/// `ready`: an error line, the state becomes `closing`, every slot gets `upstream_exited`,
/// and the answer is true (the cascade follows). Before `ready`: a warning, false (the bridge
/// keeps serving).
#[derive(Message, Debug)]
#[rtype(result = "bool")]
pub struct UpstreamLost {
    /// How it ended (`exit code 3`), with the last lines of a child's stderr, quoted (for the
    /// error of a failed start).
    pub cause: EndCause,
}
