//! The upstream's frames in the correlation mode: a response resolves its pending request (or
//! ends its listen stream), a notification goes to the Frontend, a request of the upstream
//! gets its answer, and a frame that is no usable JSON-RPC message fails the requests it names.

use serde_json::json;

use super::Upstream;
use super::reply::UpstreamReply;
use crate::actors::frontend::messages::FromUpstream;
use crate::log::limits::BridgeLimits;
use crate::protocol::listen;
use crate::protocol::revisions::errors::ErrorObject;
use crate::protocol::revisions::methods;
use crate::protocol::wire::framing::Frame;
use crate::protocol::wire::id::Id;
use crate::protocol::wire::jsonrpc::{self, MAX_UPSTREAM_DEPTH, Message};
use crate::protocol::wire::raw::{self, RawResult};
use crate::transport::queue::Delivery;
use crate::transport::upstream::RequestFailure;

/// The warning for an upstream frame that is not a JSON-RPC message (either mode), quoting
/// its start ([`Frame::excerpt`]); limited per kind ([`BridgeLimits::upstream_not_jsonrpc`]).
fn warn_not_jsonrpc(frame: &Frame, limits: &BridgeLimits) {
    if limits.upstream_not_jsonrpc.allow_shared() {
        tracing::warn!(target: "upstream", "the upstream sent a frame that is not a JSON-RPC message: {}", frame.excerpt());
    }
}

/// The `data.detail` of a request whose answer was a line over `--max-line-bytes`: the limit
/// and the option that raises it, so that the user of the editor can act on it.
pub(super) fn line_over_limit(limit_bytes: usize) -> String {
    format!(
        "the upstream's answer is a line over the limit of {limit_bytes} bytes (--max-line-bytes raises it)"
    )
}

/// An upstream frame that is no usable JSON-RPC message (either mode): one warning, and the
/// requests it names, which then fail with `invalid_response` at once: the id recovered from
/// the line (`recovered`), or else, for a JSON-RPC batch (an array, which MCP does not
/// allow), the ids its responses answer ([`jsonrpc::batch_ids`]). A frame that names none is
/// only logged. Both warnings are limited ([`BridgeLimits::upstream_not_jsonrpc`] of `limits`).
pub(super) fn unusable_frame(
    frame: &Frame,
    recovered: Option<&Id>,
    limits: &BridgeLimits,
) -> Vec<Id> {
    if let Some(id) = recovered {
        warn_not_jsonrpc(frame, limits);
        return vec![id.clone()];
    }
    let batch = match frame {
        Frame::Line(l) => jsonrpc::batch_ids(l, MAX_UPSTREAM_DEPTH),
        Frame::TooLong { .. } => Vec::new(),
    };
    if batch.is_empty() {
        warn_not_jsonrpc(frame, limits);
    } else if limits.upstream_not_jsonrpc.allow_shared() {
        tracing::warn!(target: "upstream", "the upstream sent a JSON-RPC batch (an array), which MCP does not allow: each request it answers fails with invalid_response: {}", frame.excerpt());
    }
    batch
}

impl Upstream {
    pub(super) fn resolve(&mut self, id: &Id, reply: UpstreamReply) {
        if self.listens.remove(id) {
            return self.listen_ended(id, reply);
        }
        let Some(p) = self.pending.remove(id) else {
            tracing::debug!(target: "upstream", "dropped a response for unknown id {id}");
            return;
        };
        let outcome = reply.outcome();
        tracing::debug!(target: "upstream", "id={id} client={} method={} outcome={outcome} time_ms={:.3}",
            p.client, p.method, p.started.elapsed().as_secs_f64() * 1e3);
        let _ = p.tx.send(reply);
    }

    pub(super) fn on_frame(&mut self, frame: Frame) {
        if self.passthrough {
            return self.relay_frame(frame);
        }
        // A success response (nearly every frame) is read without a value tree: its result
        // goes on as the raw slice of the line, so a large result is neither parsed nor copied.
        if let Frame::Line(l) = &frame
            && let Some((id, result)) = raw::response(l.clone(), MAX_UPSTREAM_DEPTH)
        {
            return self.resolve(&id, UpstreamReply::Result(result));
        }
        let parsed = match &frame {
            Frame::Line(l) => jsonrpc::parse(l, MAX_UPSTREAM_DEPTH),
            Frame::TooLong { id, len_bytes, .. } => {
                if self.limits.upstream_line_too_long.allow_shared() {
                    tracing::warn!(target: "upstream", "the upstream sent a line of {len_bytes} bytes, over the limit of {} bytes", self.max_line_bytes);
                }
                // Its request (the id recovered from the whole line) fails with
                // invalid_response; it is not also "not a JSON-RPC message".
                if let Some(id) = id {
                    let detail = line_over_limit(self.max_line_bytes);
                    self.resolve(id, UpstreamReply::Invalid(Some(detail)));
                }
                return;
            }
        };
        match parsed {
            Ok(Message::Response {
                id: Some(id),
                result,
            }) => self.resolve(&id, UpstreamReply::Result(RawResult::from_value(&result))),
            Ok(Message::ErrorResponse {
                id: Some(id),
                error,
            }) => self.resolve(&id, UpstreamReply::Error(error)),
            Ok(Message::Response { id: None, .. } | Message::ErrorResponse { id: None, .. }) => {
                tracing::debug!(target: "upstream", "dropped a response without a usable id");
            }
            Ok(Message::Notification { method, params }) => {
                self.out.frontend.do_send(FromUpstream::Notification {
                    method,
                    params: params.unwrap_or_else(|| json!({})),
                });
            }
            Ok(Message::Request { id, method, .. }) => self.answer_request(&id, &method),
            Err(e) => {
                for id in unusable_frame(&frame, e.id(), &self.limits) {
                    self.resolve(&id, UpstreamReply::Invalid(None));
                }
            }
        }
    }

    /// A request from the upstream gets a response (JSON-RPC 2.0 §4: a server may wait for
    /// one for ever, or end the session): `ping` (a keep-alive, as the Go SDK sends during a
    /// long call) gets an empty result, anything else -32601, since 2026-07-28 servers send
    /// the bridge no other request (input requests come as `input_required` results). The
    /// empty result carries `resultType` (2026-07-28 requires it on every result); a 2025-11-25
    /// reader's `EmptyResult` takes the extra member.
    ///
    /// The answers go as [`Delivery::DropWhenFull`]: a server that floods requests and does
    /// not read its input fills no queue without a bound (what it does not read it cannot
    /// wait for). Over a transport that carries no answers (HTTP) the request is only logged.
    fn answer_request(&self, id: &Id, method: &str) {
        let answers = self
            .conn
            .as_ref()
            .is_some_and(|c| c.transport.answers_requests());
        if !answers {
            if self.limits.upstream_request.allow_shared() {
                tracing::warn!(target: "upstream", "ignored a request from the upstream ({method}): 2026-07-28 servers send none, and this transport carries no answer to one");
            }
            return;
        }
        let answer = if method == methods::PING {
            jsonrpc::response(id, json!({"resultType": "complete"}))
        } else {
            if self.limits.upstream_request.allow_shared() {
                tracing::warn!(target: "upstream", "the upstream sent a request ({method}); 2026-07-28 servers send none: answered -32601");
            }
            jsonrpc::error_response(Some(id), ErrorObject::method_not_found(method).to_value())
        };
        let sent = self.write(&answer, Delivery::DropWhenFull);
        tracing::debug!(target: "upstream", "answered the upstream's request id={id} method={method}: {sent:?}");
    }

    /// One request failed in the transport alone (HTTP): it gets [`UpstreamReply::Failed`], the
    /// upstream goes on.
    pub(super) fn on_failed(&mut self, id: &Id, failure: RequestFailure) {
        if self.passthrough {
            // A request of the editor (the bridge sends none of its own in pass-through).
            let reply = UpstreamReply::Failed(failure);
            let id = id.clone();
            return self
                .out
                .frontend
                .do_send(FromUpstream::RelayFailed { id, reply });
        }
        if self.listens.remove(id) {
            tracing::debug!(target: "upstream", "id={id} method={} outcome=failed ({})",
                listen::LISTEN_METHOD, failure.detail);
            return self.listen_ended(id, UpstreamReply::Failed(failure));
        }
        let Some(p) = self.pending.remove(id) else {
            return;
        };
        tracing::debug!(target: "upstream", "id={id} client={} method={} outcome=failed time_ms={:.3} ({})",
            p.client, p.method, p.started.elapsed().as_secs_f64() * 1e3, failure.detail);
        let _ = p.tx.send(UpstreamReply::Failed(failure));
    }
}
