//! The frames of the editor held while `initialize` runs (an editor that pipelines its first
//! messages): kept as they came, bounded in frames and bytes, then passed on unchanged to a
//! legacy upstream or handled as if they came then for a modern one.

use actix::prelude::*;
use serde_json::json;
use std::collections::VecDeque;

use super::{Frontend, Phase};
use crate::protocol::revisions::errors::Cause;
use crate::protocol::revisions::legacy::{EditorNotification, EditorRequest, RequestClass};
use crate::protocol::wire::framing::Frame;
use crate::protocol::wire::id::Id;
use crate::protocol::wire::jsonrpc::{self, Message};

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
struct Held {
    /// The frame as it came.
    frame: Frame,
    /// The id, when the frame is a request.
    request: Option<Id>,
    /// The length of the frame's line, counted against [`MAX_HELD_BYTES`].
    bytes: usize,
}

/// The frames of the editor held while `initialize` runs, in order.
#[derive(Default)]
pub(super) struct HeldFrames {
    /// The frames, oldest first.
    frames: VecDeque<Held>,
    /// The bytes of `frames`, at most [`MAX_HELD_BYTES`].
    bytes: usize,
}

impl HeldFrames {
    /// Whether a held request has the id `id`.
    pub(super) fn contains(&self, id: &Id) -> bool {
        self.frames.iter().any(|h| h.request.as_ref() == Some(id))
    }

    /// The ids of the held requests, in order; the other frames are dropped.
    pub(super) fn into_requests(self) -> impl Iterator<Item = Id> {
        self.frames.into_iter().filter_map(|h| h.request)
    }
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
        let Some(held) = self.phase.held() else {
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
        let full = held.frames.len() >= MAX_HELD_FRAMES || held.bytes + bytes > MAX_HELD_BYTES;
        if let Some(id) = &request {
            if self.slots.contains_key(id) || held.contains(id) {
                self.reply_error(Some(id), Cause::DuplicateId, None);
                return true;
            }
            let requests = held.frames.iter().filter(|h| h.request.is_some()).count();
            if full || requests >= self.config.max_in_flight {
                let limit = json!(self.config.max_in_flight);
                self.reply_error(Some(id), Cause::TooManyRequests, Some(limit));
                return true;
            }
            tracing::debug!(target: "frontend", "request {id} waits for initialize");
        } else if full {
            return false;
        }
        let Phase::Initializing(initializing) = &mut self.phase else {
            return false;
        };
        let held = &mut initializing.held;
        held.bytes += bytes;
        held.frames.push_back(Held {
            frame: frame.clone(),
            request,
            bytes,
        });
        true
    }

    /// Whether a request held while `initialize` runs has the id `id`.
    pub(super) fn is_held(&self, id: &Id) -> bool {
        self.phase.held().is_some_and(|h| h.contains(id))
    }

    /// Takes a held request out (the editor cancelled it): it gets no response, and a legacy
    /// upstream never sees it.
    pub(super) fn unhold(&mut self, id: &Id) -> bool {
        let Phase::Initializing(initializing) = &mut self.phase else {
            return false;
        };
        let held = &mut initializing.held;
        let Some(pos) = held
            .frames
            .iter()
            .position(|h| h.request.as_ref() == Some(id))
        else {
            return false;
        };
        if let Some(h) = held.frames.remove(pos) {
            held.bytes = held.bytes.saturating_sub(h.bytes);
        }
        true
    }

    /// Handles the frames `held` while `initialize` ran, in order, in the phase it led to
    /// (pass-through: relayed after the `initialize`; ready: served; awaiting `initialize`:
    /// `not_initialized`). None of them is an `initialize` ([`Frontend::hold`]), so none
    /// starts `initializing` again.
    pub(super) fn replay_held(&mut self, held: HeldFrames, ctx: &mut Context<Self>) {
        for h in held.frames {
            self.on_frame(h.frame, ctx);
        }
    }
}
