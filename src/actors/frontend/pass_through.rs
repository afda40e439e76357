//! Pass-through toward a legacy (2025-11-25) upstream: the editor's frames go on as they
//! came, and the upstream's come back with only the bridge's own ids mapped.

use serde_json::{Value, json};
use std::time::Instant;

use super::Frontend;
use crate::actors::upstream::Relay;
use crate::protocol::revisions::errors::{Cause, ErrorObject};
use crate::protocol::revisions::legacy::{self, EditorNotification, Forwarded, RequestClass};
use crate::protocol::rules::item_filter::ItemFilter;
use crate::protocol::rules::passthrough::{self, MessageKind};
use crate::protocol::wire::id::Id;
use crate::protocol::wire::jsonrpc;
use crate::transport::queue::Delivery;

/// One request of the editor sent on in pass-through, not answered yet.
#[derive(Debug)]
pub(super) struct Relayed {
    /// When it was sent on: its time in the metrics and the order of the `not_initialized`
    /// answers after a failed `initialize`.
    pub(super) started: Instant,
    /// The name the exit summary counts it under ([`counted_method`]).
    pub(super) method: &'static str,
}

impl Relayed {
    /// A request of `method` (its [`counted_method`]) sent on now.
    pub(super) fn now(method: &'static str) -> Relayed {
        Relayed {
            started: Instant::now(),
            method,
        }
    }
}

/// The name a passed-through request is counted under in the metrics: its method when it is
/// one of 2025-11-25's that the bridge forwards, `initialize` or `ping`; `other` for the rest
/// (the names a legacy server takes are the editor's to choose: they are not kept as keys).
fn counted_method(method: Option<&str>) -> &'static str {
    match method {
        Some("initialize") => "initialize",
        Some("ping") => "ping",
        Some(m) => Forwarded::ALL
            .into_iter()
            .map(Forwarded::method)
            .find(|f| *f == m)
            .unwrap_or("other"),
        None => "other",
    }
}

impl Frontend {
    /// Pass-through: takes the editor's request `id` out of those in flight; `None` when it
    /// is not (answered, cancelled, or another phase).
    pub(super) fn take_relayed(&mut self, id: &Id) -> Option<Relayed> {
        self.phase.pass_through_mut()?.relayed.remove(id)
    }

    /// Pass-through: one line of the editor to the upstream as it came. The bridge still
    /// answers a bad line, a duplicate id and a request over the in-flight limit itself.
    pub(super) fn relay_from_editor(&mut self, line: &[u8]) {
        let (message, kind) = match passthrough::read(line, self.config.max_depth) {
            Ok(read) => read,
            Err(e) => return self.reply_bad_line(&e),
        };
        let (delivery, cancels) = match kind {
            MessageKind::Request(id) => {
                let Some(pass) = self.phase.pass_through() else {
                    return;
                };
                if pass.relayed.contains_key(&id) {
                    return self.reply_error(Some(&id), Cause::DuplicateId, None);
                }
                if pass.relayed.len() >= self.config.max_in_flight {
                    return self.reply_error(
                        Some(&id),
                        Cause::TooManyRequests,
                        Some(json!(self.config.max_in_flight)),
                    );
                }
                if let Some(filter) = self.config.item_filter.clone()
                    && let Some(error) = self.filter_request(&filter, &id, &message)
                {
                    return self.write(&jsonrpc::error_response(Some(&id), error));
                }
                let method = counted_method(message.get("method").and_then(Value::as_str));
                if let Some(pass) = self.phase.pass_through_mut() {
                    pass.relayed.insert(id.clone(), Relayed::now(method));
                }
                (Delivery::Request(id), None)
            }
            MessageKind::Notification(method) => {
                let cancels =
                    match EditorNotification::from_notification(method, message.get("params")) {
                        EditorNotification::Cancelled {
                            request_id: Some(id),
                            ..
                        } => self.take_relayed(&id).map(|_| id),
                        _ => None,
                    };
                if let Some(id) = &cancels {
                    self.end_initialize_wait(id);
                }
                (Delivery::Always, cancels)
            }
            MessageKind::Response(_) => (Delivery::Always, None),
        };
        self.upstream.relay.do_send(Relay {
            message,
            delivery,
            cancels,
        });
    }

    /// Pass-through: one message of the upstream to the editor as it came. A response goes
    /// out only while its request is in flight (never after the editor cancelled it, never
    /// twice); progress and log messages are dropped and counted when the queue toward the
    /// editor is over its notification bound; everything else is never dropped.
    pub(super) fn relay_to_editor(&mut self, mut message: Value, kind: MessageKind) {
        match kind {
            MessageKind::Response(Some(id)) => match self.take_relayed(&id) {
                Some(Relayed { started, method }) => {
                    let ok = message.get("error").is_none();
                    self.methods.record(method, ok, started.elapsed());
                    self.announce_legacy(&id);
                    self.end_initialize_wait(&id);
                    if let Some(filter) = &self.config.item_filter
                        && let Some(pass) = self.phase.pass_through_mut()
                        && let Some(kind) = pass.listing.remove(&id)
                        && let Some(result) = message.get_mut("result")
                    {
                        filter.filter_result(kind, result);
                    }
                    tracing::debug!(target: "frontend", "id={id} answered in pass-through time_ms={:.3}",
                        started.elapsed().as_secs_f64() * 1e3);
                    self.write(&message);
                }
                None => {
                    tracing::debug!(target: "frontend", "dropped a response of the upstream for id {id}, not in flight");
                }
            },
            MessageKind::Response(None) => {
                tracing::debug!(target: "frontend", "dropped a response of the upstream without a usable id");
            }
            MessageKind::Request(_) => self.write(&message),
            MessageKind::Notification(method) if passthrough::droppable(&method) => {
                self.write_notification(&message)
            }
            MessageKind::Notification(_) => self.write(&message),
        }
    }

    /// Pass-through with the item filter: the answer to a request of the editor that names a
    /// hidden item (it is not sent); a list request of a filtered kind is kept in `listing`,
    /// so that its result loses the hidden items. The legacy server's frames pass unchanged
    /// otherwise: only the results of the list requests the bridge saw are read.
    fn filter_request(
        &mut self,
        filter: &ItemFilter,
        id: &Id,
        message: &Value,
    ) -> Option<ErrorObject> {
        let method = message.get("method").and_then(Value::as_str)?;
        let list = match legacy::classify_request(method) {
            RequestClass::Forward(f) => filter.list_kind(f),
            _ => None,
        };
        let pass = self.phase.pass_through_mut()?;
        // An id the editor uses again after a cancel, for another method, is no list.
        pass.listing.remove(id);
        match list {
            Some(kind) => {
                // The entries of list requests that ended without a response (cancelled,
                // failed) go once they outnumber the requests in flight: at most
                // `--max-in-flight` + 1 entries.
                if pass.listing.len() > pass.relayed.len() {
                    let relayed = &pass.relayed;
                    pass.listing.retain(|id, _| relayed.contains_key(id));
                }
                pass.listing.insert(id.clone(), kind);
                None
            }
            None => filter.refusal_value(method, message.get("params")),
        }
    }
}
