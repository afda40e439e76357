//! The listen stream, without I/O: what the bridge asks for on `subscriptions/listen`
//! (2026-07-28 basic/patterns/subscriptions), how a listen event becomes a 2025-11-25
//! notification for the editor (never with the subscription id), the synthetic events after a
//! gap, the wait before a new stream, and the [`ListenGate`]: the state of the step that writes
//! listen traffic to the editor, which decides which stream is active by its generation.
//!
//! The Listener actor owns the streams and their lifecycle; the Frontend runs the [`ListenGate`] on
//! every upstream notification in upstream order, so a list change written before a result
//! reaches the editor before that result.

use crate::protocol::revisions::methods;
use crate::protocol::revisions::modern::{META_SUBSCRIPTION_ID, RequestMeta};
use crate::protocol::wire::id::Id;
use crate::protocol::wire::jsonrpc;

mod end;
mod event;
mod gate;
mod subscriptions;
#[cfg(test)]
mod tests;
mod timings;

pub use end::*;
pub use event::*;
pub use gate::*;
use serde_json::{Map, Value, json};
pub use subscriptions::*;
pub use timings::*;

/// The method of a listen request.
pub const LISTEN_METHOD: &str = methods::SUBSCRIPTIONS_LISTEN;
/// The notification that acknowledges a listen request.
#[cfg(test)]
pub const ACKNOWLEDGED: &str = methods::SUBSCRIPTIONS_ACKNOWLEDGED;
/// The id of the listen request of a generation. The Listener chooses it, so that the
/// [`ListenGate`] knows the stream before the request goes out; upstream ids of other requests are
/// integers and never equal it.
pub fn listen_id(generation: u64) -> Id {
    Id::Str(format!("listen-{generation}"))
}

/// The params of a listen request: the full 2026-07-28 `_meta` (with the log level of the last
/// `logging/setLevel`) and the filter.
pub fn listen_params(meta: &RequestMeta, filter: Value) -> Value {
    let mut m = Map::new();
    meta.write_into(&mut m);
    json!({"_meta": Value::Object(m), "notifications": filter})
}

/// The `subscriptions/listen` request frame with the listen id (see [`listen_id`]) and the
/// params of [`listen_params`].
pub fn listen_request(id: &Id, params: Value) -> Value {
    jsonrpc::request(id, LISTEN_METHOD, params)
}

/// The subscription id in `params._meta` of a listen-stream notification.
pub fn subscription_id(params: &Value) -> Option<Id> {
    Id::from_value(params.get("_meta")?.get(META_SUBSCRIPTION_ID)?)
}
