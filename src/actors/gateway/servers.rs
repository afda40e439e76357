//! The servers' messages at the gateway (the answers to the gateway's requests, their input
//! requests toward the editor, their notifications), and the supervision of their bridges:
//! the end of a run, the backoff, the failed state, the start again.

use actix::prelude::*;
use bytes::Bytes;
use serde_json::{Value, json};
use std::rc::Rc;
use std::time::Instant;

use super::lists::{Fetch, Next, kinds_of_change, slot};
use super::member::MemberState;
use super::{Asked, Gateway, Phase, Sent};
use crate::protocol::revisions::methods;
use crate::protocol::rules::gateway::{
    changed_kind, declares, expose_error, expose_items, expose_notification, expose_result,
    list_changed_method, list_method, server_gone,
};
use crate::protocol::rules::list_items::ItemKind;
use crate::protocol::rules::names::{NameChange, expose_name};
use crate::protocol::wire::id::Id;
use crate::protocol::wire::jsonrpc::{self, MAX_UPSTREAM_DEPTH, Message};
use crate::protocol::wire::parts;
use crate::protocol::wire::raw;
use crate::transport::queue::Delivery;

/// The start of a member `resource...` (`resource`, `resourceLink`, `resources`), whose URIs
/// the gateway names: a result that holds none passes as it came. Built once: a finder's
/// tables cost more than a search of a small result.
static RESOURCE_MEMBER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"resource"));

impl Gateway {
    /// One frame of a server's bridge.
    pub(super) fn server_frame(
        &mut self,
        i: usize,
        generation: u64,
        bytes: Vec<u8>,
        ctx: &mut Context<Self>,
    ) {
        if self
            .members
            .get_mut(i)
            .and_then(|m| m.run_of(generation))
            .is_none()
        {
            return;
        }
        let mut line = Bytes::from(bytes);
        if line.ends_with(b"\n") {
            line.truncate(line.len() - 1);
        }
        if self.relay_answer(i, &line) {
            return;
        }
        match jsonrpc::parse(&line, MAX_UPSTREAM_DEPTH) {
            Ok(Message::Response { id, result }) => self.server_answer(i, id, Ok(result), ctx),
            Ok(Message::ErrorResponse { id, error }) => self.server_answer(i, id, Err(error), ctx),
            Ok(Message::Request { id, method, params }) => {
                self.server_request(i, generation, id, &method, params)
            }
            Ok(Message::Notification { method, params }) => {
                self.server_notification(i, &method, params.unwrap_or_else(|| json!({})))
            }
            Err(_) => {
                let server = &self.members[i].setup.name;
                tracing::warn!(target: "gateway", "{server}: a frame of its bridge is not JSON-RPC: dropped");
            }
        }
    }

    /// The path of most answers: a server's result to an editor's request whose result
    /// names no resource, read without a value tree and written to the editor with the
    /// editor's id, its text as it came. False for any other line, which then takes the
    /// parser's path.
    fn relay_answer(&mut self, i: usize, line: &Bytes) -> bool {
        let Some((Id::Int(key), result)) = raw::response(line.clone(), MAX_UPSTREAM_DEPTH) else {
            return false;
        };
        let plain = match self.sent.get(&key) {
            Some(Sent::Editor { member, method, .. }) => {
                *member == i
                    && *method != methods::RESOURCES_READ
                    && RESOURCE_MEMBER.find(line).is_none()
            }
            _ => false,
        };
        if !plain {
            return false;
        }
        let Some(Sent::Editor { id, method, at, .. }) = self.sent.remove(&key) else {
            return false;
        };
        self.members[i].methods.record(method, true, at.elapsed());
        self.waits.remove(&id);
        let _ = self.output.send_frame(
            parts::response_frame(&id, result.to_parts()),
            Delivery::Always,
        );
        true
    }

    /// A server answered a request of the gateway's.
    fn server_answer(
        &mut self,
        i: usize,
        id: Option<Id>,
        answer: Result<Value, Value>,
        ctx: &mut Context<Self>,
    ) {
        let Some(Id::Int(key)) = id else {
            return;
        };
        if self.sent.get(&key).is_none_or(|s| s.member() != i) {
            return;
        }
        let Some(sent) = self.sent.remove(&key) else {
            return;
        };
        let server = self.members[i].setup.name.clone();
        match sent {
            Sent::Editor { id, method, at, .. } => {
                self.members[i]
                    .methods
                    .record(method, answer.is_ok(), at.elapsed());
                self.waits.remove(&id);
                match answer {
                    Ok(result) => {
                        let space = &self.members[i].setup.namespace;
                        self.respond(&id, expose_result(space, method, result))
                    }
                    Err(error) => {
                        let space = &self.members[i].setup.namespace;
                        self.fail(Some(&id), expose_error(space, error))
                    }
                }
            }
            Sent::Initialize { generation, .. } => {
                self.server_initialized(i, generation, answer, ctx)
            }
            Sent::List { fetch, .. } => {
                if let Err(error) = &answer {
                    let message = error_text(error);
                    tracing::warn!(target: "gateway", "{server}: a list of it failed: {message}; the editor gets the one kept");
                }
                self.fetch_page(fetch, answer.ok());
            }
            Sent::Ignored { .. } => {}
        }
    }

    /// A server's run answered its `initialize`.
    fn server_initialized(
        &mut self,
        i: usize,
        generation: u64,
        answer: Result<Value, Value>,
        _ctx: &mut Context<Self>,
    ) {
        let Some(m) = self.members.get_mut(i) else {
            return;
        };
        let server = m.setup.name.clone();
        let Some(run) = m.run_of(generation) else {
            return;
        };
        match answer {
            Ok(result) => {
                m.state = MemberState::Ready(Rc::new(result));
                tracing::debug!(target: "gateway", "{server}: initialized; its lists are fetched");
                if self.editor_initialized {
                    self.send_initialized(i);
                }
                self.send_level(i);
                self.fetch_declared(i, generation);
            }
            Err(error) => {
                // Its bridge stops; its end starts it again after the backoff.
                run.input = None;
                m.state = MemberState::Stopping;
                let message = error_text(&error);
                tracing::warn!(target: "gateway", "{server}: its initialize failed: {message}");
            }
        }
        self.answer_initialize(false);
    }

    /// Fetches every list that the ready server `i`'s run `generation` declares; with none
    /// to fetch, it joins at once.
    fn fetch_declared(&mut self, i: usize, generation: u64) {
        let Some(result) = self.members[i].ready().cloned() else {
            return;
        };
        for kind in ItemKind::ALL {
            if declares(&result, kind) {
                self.start_fetch(i, generation, kind);
            }
        }
        self.join_if_listed(i);
    }

    /// Starts a fetch of the list of `kind` of the server `i`'s run `generation`; during a
    /// fetch of the same list, that fetch is followed by another.
    fn start_fetch(&mut self, i: usize, generation: u64, kind: ItemKind) {
        let Some(run) = self.members[i].run_of(generation) else {
            return;
        };
        if run.kept.fetching[slot(kind)] {
            run.kept.again[slot(kind)] = true;
            return;
        }
        run.kept.fetching[slot(kind)] = true;
        let fetch = self.next_fetch;
        self.next_fetch += 1;
        self.fetches.insert(fetch, Fetch::new(i, generation, kind));
        self.request_page(fetch, None);
    }

    /// Asks for a page of `fetch` (`cursor`: a page after the first).
    fn request_page(&mut self, fetch: u64, cursor: Option<String>) {
        let Some(f) = self.fetches.get(&fetch) else {
            return;
        };
        let (i, generation, kind) = (f.member, f.generation, f.kind);
        let id = self.next_id();
        let params = match cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let sent = self.members[i].run_of(generation).is_some_and(|run| {
            run.send(&jsonrpc::request(&Id::Int(id), list_method(kind), params))
        });
        if sent {
            self.sent.insert(id, Sent::List { member: i, fetch });
        } else {
            self.fetches.remove(&fetch);
        }
    }

    /// A page of `fetch` came (`None`: the server failed it; the list kept stays).
    fn fetch_page(&mut self, fetch: u64, result: Option<Value>) {
        let Some(f) = self.fetches.get_mut(&fetch) else {
            return;
        };
        let next = result.map(|result| f.page(result));
        match next {
            Some(Next::Page(cursor)) => self.request_page(fetch, Some(cursor)),
            Some(Next::Done) | None => {
                let Some(f) = self.fetches.remove(&fetch) else {
                    return;
                };
                let (i, kind) = (f.member, f.kind);
                let items = next.map(|_| f.items);
                self.fetched(i, f.generation, kind, items);
            }
        }
    }

    /// A fetch of the list of `kind` of the server `i` ended with `items` (`None`: it
    /// failed). A list that differs from the one kept is kept, and the editor hears of it
    /// once no fetch of the same list change is in flight.
    fn fetched(&mut self, i: usize, generation: u64, kind: ItemKind, items: Option<Vec<Value>>) {
        let Some(run) = self.members[i].run_of(generation) else {
            return;
        };
        let k = slot(kind);
        run.kept.fetching[k] = false;
        let changed = match items {
            Some(items) if run.kept.items[k].as_ref() != Some(&items) => {
                // Named now, so that a call finds its owner before the editor lists.
                let (_, left_out) = expose_items(&mut self.table, i, kind, items.clone());
                let server = self.members[i].setup.name.clone();
                self.warn_renamed(i, kind, &items);
                self.warn_left_out(&server, kind, left_out);
                if let Some(run) = self.members[i].run_of(generation) {
                    run.kept.items[k] = Some(items);
                }
                true
            }
            Some(_) => false,
            // A first fetch that failed leaves an empty list, so the server still joins.
            None if run.kept.items[k].is_none() => {
                run.kept.items[k] = Some(Vec::new());
                false
            }
            None => false,
        };
        let Some(run) = self.members[i].run_of(generation) else {
            return;
        };
        run.kept.changed[k] |= changed;
        let again = std::mem::take(&mut run.kept.again[k]);
        let joined = run.joined;
        if again {
            self.start_fetch(i, generation, kind);
            return;
        }
        if !joined {
            self.join_if_listed(i);
            return;
        }
        self.announce_changes(i, kind);
    }

    /// One warning for each tool or prompt of the server `i` whose exposed name is not its
    /// prefix and its own name (sanitized or shortened; once per item), as doctor lists them.
    fn warn_renamed(&mut self, i: usize, kind: ItemKind, items: &[Value]) {
        if !matches!(kind, ItemKind::Tool | ItemKind::Prompt) {
            return;
        }
        let space = &self.members[i].setup.namespace;
        for name in items
            .iter()
            .filter_map(|t| t.get("name").and_then(Value::as_str))
        {
            let exposed = expose_name(&space.prefix, name);
            if exposed.change != NameChange::None
                && self
                    .warned
                    .insert(format!("{} {} {name} renamed", space.server, kind.noun()))
            {
                tracing::warn!(target: "gateway", "{}: the {} {name:?} is {} for the editor ({})",
                    space.server, kind.noun(), exposed.name, exposed.change.word());
            }
        }
    }

    /// The list change of `kind`'s group to the editor, when a list of the group changed and
    /// no fetch of the group is in flight.
    fn announce_changes(&mut self, i: usize, kind: ItemKind) {
        let group = kinds_of_change(kind);
        let Some(run) = self.members[i].run.as_mut() else {
            return;
        };
        if group.iter().any(|k| run.kept.fetching[slot(*k)]) {
            return;
        }
        let mut changed = false;
        for k in group {
            changed |= std::mem::take(&mut run.kept.changed[slot(*k)]);
        }
        if changed {
            self.list_changed(kind);
        }
    }

    /// The server `i` joins once each of its first lists is in: its items are in the
    /// editor's lists from now on, and an initialized editor hears of each list it declares
    /// (a server that is late, or that started again).
    fn join_if_listed(&mut self, i: usize) {
        let Some(result) = self.members[i].ready().cloned() else {
            return;
        };
        let Some(run) = self.members[i].run.as_mut() else {
            return;
        };
        if run.joined || run.kept.fetching.iter().any(|f| *f) {
            return;
        }
        run.joined = true;
        run.kept.changed = [false; 4];
        self.resubscribe(i);
        tracing::info!(target: "gateway", "{}: ready", self.members[i].setup.name);
        if matches!(self.phase, Phase::Ready) {
            self.announce_lists_of(&result);
        }
        self.answer_initialize(false);
    }

    /// The editor's subscriptions to the resources of the server `i`, sent to its run (a
    /// run after the first has none of its own).
    fn resubscribe(&mut self, i: usize) {
        let uris: Vec<String> = self.members[i].subscriptions.iter().cloned().collect();
        for uri in uris {
            let id = self.next_id();
            let sent = self.members[i].run.as_ref().is_some_and(|run| {
                run.send(&jsonrpc::request(
                    &Id::Int(id),
                    methods::RESOURCES_SUBSCRIBE,
                    json!({"uri": uri}),
                ))
            });
            if sent {
                self.sent.insert(id, Sent::Ignored { member: i });
            }
        }
    }

    /// The list changes of the lists `result` (an `initialize` result) declares, to an
    /// initialized editor.
    pub(super) fn announce_lists_of(&self, result: &Value) {
        for kind in [ItemKind::Tool, ItemKind::Prompt, ItemKind::Resource] {
            if declares(result, kind) {
                self.list_changed(kind);
            }
        }
    }

    /// One list change of `kind` to an initialized editor.
    fn list_changed(&self, kind: ItemKind) {
        if self.editor_initialized {
            self.write(
                &jsonrpc::notification(list_changed_method(kind), json!({})),
                Delivery::Always,
            );
        }
    }

    /// An input request of a server (or its `ping`): to the editor under an id of the
    /// gateway's (`b-N`); a `ping` is answered here.
    fn server_request(
        &mut self,
        i: usize,
        generation: u64,
        id: Id,
        method: &str,
        params: Option<Value>,
    ) {
        if method == methods::PING {
            if let Some(run) = self.members[i].run_of(generation) {
                run.send(&jsonrpc::response(&id, json!({})));
            }
            return;
        }
        let key = format!("b-{}", self.next_id());
        let params = params.unwrap_or_else(|| json!({}));
        self.asked.insert(
            key.clone(),
            Asked {
                member: i,
                generation,
                id,
            },
        );
        self.write(
            &jsonrpc::request(&Id::Str(key), method, params),
            Delivery::Always,
        );
    }

    /// A notification of a server, to the editor: its names exposed, a cancellation of one of
    /// its input requests under the gateway's id.
    fn server_notification(&mut self, i: usize, method: &str, params: Value) {
        if method == methods::CANCELLED {
            let Some(id) = params.get("requestId").and_then(Id::from_value) else {
                return;
            };
            let Some(key) = self
                .asked
                .iter()
                .find(|(_, a)| a.member == i && a.id == id)
                .map(|(k, _)| k.clone())
            else {
                return;
            };
            self.asked.remove(&key);
            let mut params = params;
            if let Some(o) = params.as_object_mut() {
                o.insert("requestId".into(), Value::String(key));
            }
            self.write(&jsonrpc::notification(method, params), Delivery::Always);
            return;
        }
        if let Some(kind) = changed_kind(method) {
            // The editor hears of it once the list is fetched, and only if it changed.
            let declared = self.members[i].ready().cloned();
            let generation = self.members[i].run.as_ref().map(|r| r.generation);
            if let (Some(result), Some(generation)) = (declared, generation) {
                for k in kinds_of_change(kind) {
                    if declares(&result, *k) {
                        self.start_fetch(i, generation, *k);
                    }
                }
            }
            return;
        }
        if !self.editor_initialized {
            return;
        }
        let params = expose_notification(&self.members[i].setup.namespace, method, params);
        self.write(&jsonrpc::notification(method, params), delivery_of(method));
    }

    /// When both ends of the server `i`'s run are seen: its requests in flight fail, and it
    /// starts again after its backoff (or is failed), unless the gateway is closing.
    pub(super) fn end_if_ended(&mut self, i: usize, ctx: &mut Context<Self>) {
        let Some(m) = self.members.get_mut(i) else {
            return;
        };
        if !m.run.as_ref().is_some_and(|r| r.ended()) {
            return;
        }
        let code = m.run.take().and_then(|r| r.exited).unwrap_or(1);
        let server = m.setup.name.clone();
        let was = std::mem::replace(&mut m.state, MemberState::Started);
        self.fail_in_flight(i, &server);
        if matches!(self.phase, Phase::Closing) {
            tracing::debug!(target: "gateway", "{server}: its bridge ended (exit code {code})");
            self.finish_if_ended(ctx);
            return;
        }
        if self.members[i].removed {
            tracing::info!(target: "gateway", "{server}: stopped: it left the file");
            return;
        }
        if std::mem::take(&mut self.members[i].restart_now) {
            tracing::info!(target: "gateway", "{server}: starts again: its entry changed");
            self.start_run(i);
            return;
        }
        let now = Instant::now();
        let policy = self.restart;
        let m = &mut self.members[i];
        m.ends.push_back(now);
        while m
            .ends
            .front()
            .is_some_and(|t| now.duration_since(*t) > policy.loop_window)
        {
            m.ends.pop_front();
        }
        let ends = m.ends.len();
        let wait = if ends >= policy.loop_ends {
            m.ends.clear();
            m.state = MemberState::Failed {
                at: now + policy.failed_retry,
            };
            tracing::warn!(target: "gateway",
                "{server}: it ended {ends} times within {} s: it is left out, and tried again in {} s",
                policy.loop_window.as_secs(), policy.failed_retry.as_secs());
            if let MemberState::Ready(result) = &was {
                self.announce_lists_of(result);
            }
            policy.failed_retry
        } else {
            let wait = policy.backoff(ends);
            m.state = MemberState::Waiting { at: now + wait };
            tracing::warn!(target: "gateway", "{server}: its bridge ended (exit code {code}): it starts again in {} s",
                wait.as_secs_f64());
            wait
        };
        ctx.run_later(wait, move |act, _| {
            let due = act.members.get(i).is_some_and(|m| {
                m.run.is_none()
                    && !m.removed
                    && matches!(
                        m.state,
                        MemberState::Waiting { .. } | MemberState::Failed { .. }
                    )
            });
            if due && !matches!(act.phase, Phase::Closing) {
                act.start_run(i);
            }
        });
        self.answer_initialize(false);
    }

    /// The server `i` ended: the editor's requests to it fail with `upstream_exited`, its list
    /// parts are in as they are, and its input requests at the editor are cancelled.
    fn fail_in_flight(&mut self, i: usize, server: &str) {
        let keys: Vec<i64> = self
            .sent
            .iter()
            .filter(|(_, s)| s.member() == i)
            .map(|(k, _)| *k)
            .collect();
        // At the end of the input, a request in flight gets no response, as with one bridge
        // (the editor is gone or going).
        let closing = matches!(self.phase, Phase::Closing);
        for key in keys {
            if let Some(Sent::Editor { id, method, at, .. }) = self.sent.remove(&key) {
                self.members[i].methods.record(method, false, at.elapsed());
                self.waits.remove(&id);
                if !closing {
                    self.fail(
                        Some(&id),
                        server_gone(server, format!("the server {server} exited")),
                    );
                }
            }
        }
        self.fetches.retain(|_, f| f.member != i);
        let asked: Vec<String> = self
            .asked
            .iter()
            .filter(|(_, a)| a.member == i)
            .map(|(k, _)| k.clone())
            .collect();
        for key in asked {
            self.asked.remove(&key);
            if closing {
                continue;
            }
            self.write(
                &jsonrpc::notification(
                    methods::CANCELLED,
                    json!({"requestId": key, "reason": format!("the server {server} exited")}),
                ),
                Delivery::Always,
            );
        }
        // The editor's requests that waited for this server's answer are all failed above.
        self.waits.retain(|_, (member, _)| *member != i);
    }
}

/// The words of an error of a server's bridge for a log line: its message, and its
/// `data.detail` when it has one.
fn error_text(error: &Value) -> String {
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("no message");
    match error.pointer("/data/detail") {
        Some(Value::String(d)) => format!("{message}: {d}"),
        Some(d) => format!("{message}: {d}"),
        None => message.to_owned(),
    }
}

/// How a server's notification `method` is queued toward the editor: progress and log
/// messages give way when the queue is full, as with one bridge.
fn delivery_of(method: &str) -> Delivery {
    match method {
        methods::PROGRESS | methods::MESSAGE => Delivery::DropWhenFull,
        _ => Delivery::Always,
    }
}
