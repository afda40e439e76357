//! The frames of the editor held while `initialize` runs (an editor that pipelines its first
//! messages): kept as they came, bounded in frames and bytes, then passed on unchanged to a
//! legacy upstream or handled as if they came then for a modern one.

use actix::prelude::*;
use serde_json::json;

use super::{Frontend, Lifecycle};
use crate::protocol::errors::Cause;
use crate::protocol::framing::Frame;
use crate::protocol::jsonrpc::{self, Id, Message};
use crate::protocol::legacy::{EditorNotification, EditorRequest, RequestClass};

/// Frames of the editor held while `initialize` runs (the era of the upstream is being
/// decided), at most this many; requests also count against `--max-in-flight`. Beyond either
/// bound, or [`MAX_HELD_BYTES`], a request gets `too_many_requests` at once and another frame
/// is handled at once.
pub const MAX_HELD_FRAMES: usize = 1024;

/// Bytes of the frames held while `initialize` runs, at most (see [`MAX_HELD_FRAMES`]).
pub const MAX_HELD_BYTES: usize = 16 * 1024 * 1024;

/// A frame of the editor that came while `initialize` runs (an editor that pipelines its
/// first messages), kept as it came: a legacy upstream gets it unchanged after the
/// `initialize`, a modern one has it handled as if it came then.
pub(super) struct Held {
    pub(super) frame: Frame,
    /// The id, when the frame is a request.
    pub(super) request: Option<Id>,
    pub(super) bytes: usize,
}

impl Frontend {
    /// While `initialize` runs (the era is being decided): holds a frame that depends on it,
    /// so that what the editor pipelined after its `initialize` reaches a legacy upstream after
    /// the `initialize`, in order, and a modern one is served once ready. Handled at once
    /// instead (false): a `ping`, another `initialize`, a request naming a 2026-07-28 version,
    /// a `notifications/cancelled`, a bad line, and a frame over the bounds (a request over
    /// them gets `too_many_requests`, as does one over `--max-in-flight`; a request id in use
    /// gets `duplicate_id`; true then).
    pub(super) fn hold(&mut self, frame: &Frame) -> bool {
        let Frame::Line(line) = frame else {
            return false;
        };
        let bytes = line.len();
        let request = match jsonrpc::parse(line, self.config.max_depth) {
            Ok(Message::Request { id, method, params }) => {
                let request = EditorRequest::from_request(method, params);
                if matches!(
                    request.class(),
                    RequestClass::Ping | RequestClass::Initialize
                ) || request.names_modern_version()
                {
                    return false;
                }
                Some(id)
            }
            Ok(Message::Notification { method, params }) => {
                if matches!(
                    EditorNotification::from_notification(method, params.as_ref()),
                    EditorNotification::Cancelled { .. }
                ) {
                    return false;
                }
                None
            }
            Ok(_) => None,
            Err(_) => return false,
        };
        let full = self.held.len() >= MAX_HELD_FRAMES || self.held_bytes + bytes > MAX_HELD_BYTES;
        if let Some(id) = &request {
            if self.slots.contains_key(id) || self.is_held(id) {
                self.reply_error(Some(id), Cause::DuplicateId, None);
                return true;
            }
            let requests = self.held.iter().filter(|h| h.request.is_some()).count();
            if full || requests >= self.config.max_in_flight {
                let limit = json!(self.config.max_in_flight);
                self.reply_error(Some(id), Cause::TooManyRequests, Some(limit));
                return true;
            }
            tracing::debug!(target: "frontend", "request {id} waits for initialize");
        } else if full {
            return false;
        }
        self.held_bytes += bytes;
        self.held.push_back(Held {
            frame: frame.clone(),
            request,
            bytes,
        });
        true
    }

    pub(super) fn is_held(&self, id: &Id) -> bool {
        self.held.iter().any(|h| h.request.as_ref() == Some(id))
    }

    /// Takes a held request out (the editor cancelled it): it gets no response, and a legacy
    /// upstream never sees it.
    pub(super) fn unhold(&mut self, id: &Id) -> bool {
        let Some(pos) = self
            .held
            .iter()
            .position(|h| h.request.as_ref() == Some(id))
        else {
            return false;
        };
        if let Some(h) = self.held.remove(pos) {
            self.held_bytes = self.held_bytes.saturating_sub(h.bytes);
        }
        true
    }

    /// Handles the frames held while `initialize` ran, in order, in the state it left
    /// (pass-through: relayed after the `initialize`; ready: served; awaiting `initialize`:
    /// `not_initialized`).
    pub(super) fn replay_held(&mut self, ctx: &mut Context<Self>) {
        while self.state != Lifecycle::Initializing
            && let Some(h) = self.held.pop_front()
        {
            self.held_bytes = self.held_bytes.saturating_sub(h.bytes);
            self.on_frame(h.frame, ctx);
        }
    }
}
