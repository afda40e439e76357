//! The editor's messages at the gateway: its `initialize` and `notifications/initialized`,
//! the requests the gateway answers itself (`ping`, `logging/setLevel`), the lists it merges,
//! the requests it routes to their owner, its cancellations, and its answers to the servers'
//! input requests.

use actix::prelude::*;
use bytes::Bytes;
use serde_json::{Value, json};
use std::time::Instant;

use super::lists::slot;
use super::member::MemberState;
use super::{Gateway, Phase, Sent};
use crate::protocol::revisions::errors::{Cause, initialize_running};
use crate::protocol::revisions::{legacy, methods};
use crate::protocol::rules::gateway::{
    LeftOut, declares, expose_items, list_kind, page_bounds, read_cursor, route, server_gone,
    unknown,
};
use crate::protocol::rules::list_items::ItemKind;
use crate::protocol::wire::framing::Frame;
use crate::protocol::wire::id::Id;
use crate::protocol::wire::jsonrpc::{self, Message, ParseError};
use crate::protocol::wire::parts::{self, FrameParts};
use crate::protocol::wire::raw::{self, Params, RawJson};

impl Gateway {
    /// One frame of the editor.
    pub(super) fn editor_frame(&mut self, frame: Frame, ctx: &mut Context<Self>) {
        let line = match frame {
            Frame::Line(line) => line,
            Frame::TooLong { len_bytes, id, .. } => {
                tracing::warn!(target: "gateway", "a line of {len_bytes} bytes is over the limit of {} bytes",
                    self.max_line_bytes);
                let error = Cause::LineTooLong.error_object(Some(json!(self.max_line_bytes)));
                // The editor's answer to a server's input request fails that request.
                if let Some(Id::Str(key)) = &id
                    && self.asked.contains_key(key)
                {
                    return self.editor_answer(id, Err(error));
                }
                self.fail(id.as_ref(), error);
                return;
            }
        };
        if matches!(self.phase, Phase::Ready) && self.forward_by_name(&line) {
            return;
        }
        match jsonrpc::parse(&line, jsonrpc::MAX_CLIENT_DEPTH) {
            Ok(Message::Request { id, method, params }) => {
                self.editor_request(id, &method, params.unwrap_or_else(|| json!({})), ctx)
            }
            Ok(Message::Notification { method, params }) => {
                self.editor_notification(&method, params.unwrap_or_else(|| json!({})))
            }
            Ok(Message::Response { id, result }) => self.editor_answer(id, Ok(result)),
            Ok(Message::ErrorResponse { id, error }) => self.editor_answer(id, Err(error)),
            Err(e) => {
                let cause = match &e {
                    ParseError::NotJson { .. } => Cause::ParseError,
                    ParseError::TooDeep { .. } => Cause::TooDeep,
                    ParseError::Shape { .. } => Cause::InvalidRequestShape,
                };
                self.fail(e.id(), cause.error_object(None));
            }
        }
    }

    /// A request of the editor.
    fn editor_request(&mut self, id: Id, method: &str, params: Value, ctx: &mut Context<Self>) {
        if method == methods::PING {
            self.respond(&id, json!({}));
            return;
        }
        match &self.phase {
            Phase::Closing => {
                self.fail(Some(&id), Cause::Closed.error_object(None));
                return;
            }
            Phase::AwaitingInitialize if method == methods::INITIALIZE => {
                self.editor_initialize(id, params, ctx);
                return;
            }
            Phase::AwaitingInitialize => {
                self.fail(Some(&id), Cause::NotInitialized.error_object(None));
                return;
            }
            Phase::Initializing { .. } if method == methods::INITIALIZE => {
                self.fail(Some(&id), initialize_running().to_value());
                return;
            }
            Phase::Initializing { .. } => {
                self.fail(Some(&id), Cause::NotInitialized.error_object(None));
                return;
            }
            Phase::Ready if method == methods::INITIALIZE => {
                self.fail(Some(&id), Cause::AlreadyInitialized.error_object(None));
                return;
            }
            Phase::Ready => {}
        }
        if self.waits.contains_key(&id) {
            self.fail(Some(&id), Cause::DuplicateId.error_object(None));
            return;
        }
        if method == methods::LOGGING_SET_LEVEL {
            self.set_level(&id, params);
        } else if let Some(kind) = list_kind(method) {
            let offset = match params.get("cursor") {
                None => Some(0),
                Some(c) => read_cursor(c),
            };
            self.answer_list(&id, kind, offset);
        } else {
            match route(&self.table, method, &params) {
                // A URI names its server by its prefix alone: a server without resources
                // has none to read, subscribe to or complete.
                Some(Ok(routed)) if !self.has_resources(routed.server, method, &params) => {
                    let uri = params
                        .get("uri")
                        .or_else(|| params.pointer("/ref/uri"))
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    self.fail(Some(&id), unknown("resource", uri).to_value());
                }
                Some(Ok(routed)) => {
                    let uri = match method {
                        methods::RESOURCES_SUBSCRIBE | methods::RESOURCES_UNSUBSCRIBE => routed
                            .params
                            .get("uri")
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                        _ => None,
                    };
                    let params = FrameParts::of_value(&routed.params);
                    self.forward(id, routed.server, method, params, uri)
                }
                Some(Err(e)) => self.fail(Some(&id), e.to_value()),
                None => self.fail(
                    Some(&id),
                    Cause::MethodNotFound.error_object(Some(Value::String(method.to_owned()))),
                ),
            }
        }
    }

    /// The path of most requests: a `tools/call` or `prompts/get` whose name has an owner,
    /// read without a value tree (its params pass as their text, with the owner's name put
    /// in), as one bridge forwards. False for any other line, which then takes the parser's
    /// path and its errors.
    fn forward_by_name(&mut self, line: &Bytes) -> bool {
        let Some((id, method, Some(Params::Object(mut params)))) =
            raw::request(line.clone(), jsonrpc::MAX_CLIENT_DEPTH)
        else {
            return false;
        };
        let kind = match method.as_str() {
            methods::TOOLS_CALL => ItemKind::Tool,
            methods::PROMPTS_GET => ItemKind::Prompt,
            _ => return false,
        };
        if self.waits.contains_key(&id) {
            return false;
        }
        let Some(name) = params.get("name").and_then(|n| n.to_str()) else {
            return false;
        };
        let Some(owner) = self.table.resolve(kind, &name) else {
            return false;
        };
        params.insert("name", RawJson::from_value(&Value::String(owner.original)));
        self.forward(id, owner.server, &method, params.to_parts(), None);
        true
    }

    /// Whether the request `method` (`params`) names a resource of the server `i`: false
    /// only for a request by URI to a ready server that declares no resources.
    fn has_resources(&self, i: usize, method: &str, params: &Value) -> bool {
        let by_uri = match method {
            methods::RESOURCES_READ
            | methods::RESOURCES_SUBSCRIBE
            | methods::RESOURCES_UNSUBSCRIBE => true,
            methods::COMPLETION_COMPLETE => {
                params.pointer("/ref/type").and_then(Value::as_str) == Some("ref/resource")
            }
            _ => false,
        };
        !by_uri
            || self
                .members
                .get(i)
                .and_then(|m| m.ready())
                .is_none_or(|r| declares(r, ItemKind::Resource))
    }

    /// The editor's `initialize`: each server's run gets it; the answer comes when they all
    /// answered, or at the start limit.
    fn editor_initialize(&mut self, id: Id, params: Value, ctx: &mut Context<Self>) {
        if !params.is_object() {
            let detail = Value::String("params must be InitializeRequestParams".into());
            self.fail(Some(&id), Cause::InvalidParams.error_object(Some(detail)));
            return;
        }
        self.editor_params = Some(params);
        self.phase = Phase::Initializing { id };
        for i in 0..self.members.len() {
            if matches!(self.members[i].state, MemberState::Started) {
                self.send_initialize(i);
            }
        }
        ctx.run_later(self.start_time_limit, |act, _| act.answer_initialize(true));
        self.answer_initialize(false);
    }

    /// `logging/setLevel`: answered at once; every ready server gets it, and so does each
    /// server that is ready later.
    fn set_level(&mut self, id: &Id, params: Value) {
        if legacy::set_level_params(Some(&params)).is_none() {
            let detail = json!("params.level must be a logging level");
            self.fail(Some(id), Cause::InvalidParams.error_object(Some(detail)));
            return;
        }
        self.log_level = Some(params);
        for i in 0..self.members.len() {
            if self.members[i].ready().is_some() {
                self.send_level(i);
            }
        }
        self.respond(id, json!({}));
    }

    /// Sends the editor's log level to the server `i`, if the editor set one.
    pub(super) fn send_level(&mut self, i: usize) {
        let Some(params) = self.log_level.clone() else {
            return;
        };
        let id = self.next_id();
        if let Some(run) = self.members.get(i).and_then(|m| m.run.as_ref())
            && run.send(&jsonrpc::request(
                &Id::Int(id),
                methods::LOGGING_SET_LEVEL,
                params,
            ))
        {
            self.sent.insert(id, Sent::Ignored { member: i });
        }
    }

    /// A list of the editor, answered from the lists kept: the items of every joined server,
    /// under their exposed names, in the file's order, in pages of the bridge's own cursors
    /// (`offset`: the page's; `None`: a cursor that is not the bridge's).
    fn answer_list(&mut self, id: &Id, kind: ItemKind, offset: Option<usize>) {
        let k = slot(kind);
        let parts = || {
            self.members.iter().enumerate().filter_map(move |(i, m)| {
                m.joined()
                    .and_then(|run| run.kept.items[k].as_ref())
                    .map(|part| (i, part))
            })
        };
        let total = parts().map(|(_, part)| part.len()).sum();
        let Some((offset, (end, next))) =
            offset.and_then(|o| page_bounds(total, o).map(|b| (o, b)))
        else {
            let detail = json!("the cursor is not one that the bridge gave for this list");
            self.fail(Some(id), Cause::InvalidParams.error_object(Some(detail)));
            return;
        };
        // Only the page's items are copied and named.
        let mut picked: Vec<(usize, Vec<Value>)> = Vec::new();
        let mut at = 0;
        for (i, part) in parts() {
            let (lo, hi) = (offset.max(at), end.min(at + part.len()));
            if lo < hi {
                picked.push((i, part[lo - at..hi - at].to_vec()));
            }
            at += part.len();
        }
        let mut items = Vec::new();
        for (i, part) in picked {
            items.extend(expose_items(&mut self.table, i, kind, part).0);
        }
        let mut result = serde_json::Map::new();
        result.insert(kind.member().into(), Value::Array(items));
        if let Some(next) = next {
            result.insert("nextCursor".into(), Value::String(next));
        }
        self.respond(id, Value::Object(result));
    }

    /// One warning for each item of `server` that the editor does not get (once per item).
    pub(super) fn warn_left_out(&mut self, server: &str, kind: ItemKind, left_out: Vec<LeftOut>) {
        for l in left_out {
            if self
                .warned
                .insert(format!("{server} {} {}", kind.noun(), l.original))
            {
                let why = left_out_reason(&l.why, &self.members, kind);
                tracing::warn!(target: "gateway", "{server}: the {} {:?} is left out: {why}",
                    kind.noun(), l.original);
            }
        }
    }

    /// Forwards the editor's request to its owner, under an id of the gateway's.
    fn forward(
        &mut self,
        id: Id,
        i: usize,
        method: &str,
        params: FrameParts,
        subscription: Option<String>,
    ) {
        let Some(m) = self.members.get(i) else {
            return;
        };
        let name = &m.setup.name;
        let run = match (&m.state, &m.run) {
            (MemberState::Ready(_), Some(run)) => run,
            (MemberState::Failed { .. }, _) => {
                let detail = format!(
                    "the server {name} is failed: it ended too often, and is tried again later"
                );
                self.fail(Some(&id), server_gone(name, detail));
                return;
            }
            (MemberState::Waiting { .. } | MemberState::Stopping, _) => {
                let detail = format!("the server {name} is not running (it starts again)");
                self.fail(Some(&id), server_gone(name, detail));
                return;
            }
            _ => {
                let detail = format!("the server {name} is starting");
                self.fail(Some(&id), server_gone(name, detail));
                return;
            }
        };
        let sent = self.next_id;
        let line = parts::request_frame(&Id::Int(sent), method, params).to_vec();
        if !run.send_line(Bytes::from(line)) {
            let detail = format!("the server {name} is stopping");
            self.fail(Some(&id), server_gone(name, detail));
            return;
        }
        self.next_id += 1;
        // A server that starts again gets the editor's subscriptions again.
        if let (Some(uri), Some(m)) = (subscription, self.members.get_mut(i)) {
            match method {
                methods::RESOURCES_SUBSCRIBE => {
                    m.subscriptions.insert(uri);
                }
                methods::RESOURCES_UNSUBSCRIBE => {
                    m.subscriptions.remove(&uri);
                }
                _ => {}
            }
        }
        self.sent.insert(
            sent,
            Sent::Editor {
                member: i,
                id: id.clone(),
                method: routed_method(method),
                at: Instant::now(),
            },
        );
        self.waits.insert(id, (i, sent));
    }

    /// A notification of the editor.
    fn editor_notification(&mut self, method: &str, params: Value) {
        match method {
            methods::INITIALIZED => {
                self.editor_initialized = true;
                for i in 0..self.members.len() {
                    if self.members[i].ready().is_some() {
                        self.send_initialized(i);
                    }
                }
            }
            methods::CANCELLED => {
                let Some(id) = params.get("requestId").and_then(Id::from_value) else {
                    return;
                };
                // The request gets no answer any more (2025-11-25 basic/utilities/cancellation):
                // its server's late answer, if any, is dropped.
                let Some((member, sent)) = self.waits.remove(&id) else {
                    return;
                };
                self.sent.insert(sent, Sent::Ignored { member });
                if let Some(run) = self.members.get(member).and_then(|m| m.run.as_ref()) {
                    let mut params = params;
                    if let Some(o) = params.as_object_mut() {
                        o.insert("requestId".into(), json!(sent));
                    }
                    run.send(&jsonrpc::notification(methods::CANCELLED, params));
                }
            }
            "notifications/roots/list_changed" => {
                for m in &self.members {
                    if let (Some(_), Some(run)) = (m.ready(), &m.run) {
                        run.send(&jsonrpc::notification(method, params.clone()));
                    }
                }
            }
            _ => tracing::debug!(target: "gateway", "the editor's {method} has no server to go to"),
        }
    }

    /// Sends `notifications/initialized` to the server `i`'s run, once.
    pub(super) fn send_initialized(&mut self, i: usize) {
        if let Some(run) = self.members.get_mut(i).and_then(|m| m.run.as_mut())
            && !run.initialized
        {
            run.initialized = true;
            run.send(&jsonrpc::notification(methods::INITIALIZED, json!({})));
        }
    }

    /// The editor's answer to an input request of a server (`b-N`): to its server, under the
    /// server's own id.
    fn editor_answer(&mut self, id: Option<Id>, answer: Result<Value, Value>) {
        let Some(Id::Str(key)) = id else {
            tracing::debug!(target: "gateway", "an answer of the editor without a request of the gateway's id");
            return;
        };
        let Some(asked) = self.asked.remove(&key) else {
            tracing::debug!(target: "gateway", "the editor answered {key}, which is not in flight");
            return;
        };
        let Some(run) = self
            .members
            .get_mut(asked.member)
            .and_then(|m| m.run_of(asked.generation))
        else {
            return;
        };
        let message = match answer {
            Ok(result) => jsonrpc::response(&asked.id, result),
            Err(error) => jsonrpc::error_response(Some(&asked.id), error),
        };
        run.send(&message);
    }
}

/// The words of a left-out item's warning.
fn left_out_reason(
    why: &crate::protocol::rules::names::NameRefused,
    members: &[super::member::Member],
    kind: ItemKind,
) -> String {
    use crate::protocol::rules::names::NameRefused;
    match why {
        NameRefused::Clash { exposed, first } => format!(
            "its name {exposed} is the name of the {} {:?} of {}",
            kind.noun(),
            first.original,
            members
                .get(first.server)
                .map_or("?", |m| m.setup.name.as_str())
        ),
        NameRefused::NoScheme => {
            "its URI has no scheme, so the bridge cannot tell its server from it".into()
        }
    }
}

/// The name of a routed method for the counters (`route` routes only these).
fn routed_method(method: &str) -> &'static str {
    [
        methods::TOOLS_CALL,
        methods::PROMPTS_GET,
        methods::RESOURCES_READ,
        methods::RESOURCES_SUBSCRIBE,
        methods::RESOURCES_UNSUBSCRIBE,
        methods::COMPLETION_COMPLETE,
    ]
    .into_iter()
    .find(|m| *m == method)
    .unwrap_or("other")
}
