//! Actor-level tests without processes: the bridge's actors over the in-process upstream
//! (`UpstreamSpec::Memory`, a `server::Server` on a task), driven with editor frames in memory,
//! with everything written toward the editor captured from its `Writer`.

use actix::prelude::*;
use mcp_bridge::actors::link::ActorStats;
use mcp_bridge::actors::upstream::reply::{CancelReason, UpstreamReply};
use mcp_bridge::actors::upstream::{
    Call, CallAnswer, Cancel, Close, Connect, Upstream, UpstreamLinks,
};
use mcp_bridge::protocol::wire::id::Id;
use mcp_bridge::protocol::wire::raw::Object;
use mcp_bridge::server::{Outcome, RpcError, Server, ToolDef};
use mcp_bridge::transport::open::UpstreamSpec;
use mcp_bridge::transport::queue::{EDITOR_QUEUE, QueueStats};
use mcp_bridge::transport::upstream::EndCause;
use mcp_bridge::transport::writer::Writer;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

use crate::common::collector;
use crate::common::memory_editor::{Capture, DEADLINE, Editor, memory_config};

/// Sends a message when dropped: the server's handler future was dropped (cancelled).
struct DropSignal(mpsc::UnboundedSender<&'static str>);

impl Drop for DropSignal {
    fn drop(&mut self) {
        let _ = self.0.send("dropped");
    }
}

/// The test upstream: `echo {text}`, `hold {}` (never answers; says when it is dropped),
/// `ask_name {}` (one round of form elicitation), `close {}` (answers, then ends the
/// connection).
fn test_server(dropped: mpsc::UnboundedSender<&'static str>) -> Server {
    let object = json!({"type": "object"});
    Server::builder("memory-test", "1.0.0")
        .tool(ToolDef::new("echo", object.clone()), |a, _| async move {
            Ok(Outcome::text(a["text"].as_str().unwrap_or_default()))
        })
        .tool(ToolDef::new("hold", object.clone()), move |_, _| {
            let signal = DropSignal(dropped.clone());
            async move {
                let _signal = signal;
                std::future::pending::<Result<Outcome, RpcError>>().await
            }
        })
        .tool(
            ToolDef::new("ask_name", object.clone()),
            |_, ctx| async move {
                match ctx.input_response("name") {
                    None => {
                        let mut requests = Map::new();
                        requests.insert(
                            "name".into(),
                            json!({"method": "elicitation/create", "params": {
                            "message": "Your name?",
                            "requestedSchema": {"type": "object",
                                "properties": {"name": {"type": "string"}},
                                "required": ["name"]}}}),
                        );
                        Ok(Outcome::InputRequired {
                            input_requests: requests,
                            request_state: Some("round-1".into()),
                        })
                    }
                    Some(answer) => Ok(Outcome::text(format!(
                        "Hello, {}! (state {})",
                        answer["content"]["name"].as_str().unwrap_or("?"),
                        ctx.request_state().unwrap_or("none")
                    ))),
                }
            },
        )
        .tool(ToolDef::new("close", object), |_, ctx| async move {
            ctx.close_connection();
            Ok(Outcome::text("closing"))
        })
        .build()
}

async fn next_drop(dropped: &mut mpsc::UnboundedReceiver<&'static str>) -> Option<&'static str> {
    tokio::time::timeout(DEADLINE, dropped.recv())
        .await
        .ok()
        .flatten()
}

#[actix::test]
async fn initialize_and_a_tool_call_cross_the_in_memory_upstream() {
    let (tx, _dropped) = mpsc::unbounded_channel();
    let mut editor = Editor::start(memory_config(test_server(tx)));
    let init = editor.initialize().await;
    assert_eq!(
        init,
        json!({"jsonrpc": "2.0", "id": 1, "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {"listChanged": true}, "logging": {}},
            "serverInfo": {"name": "memory-test", "version": "1.0.0"}}})
    );
    editor.call(2, "echo", json!({"text": "hi"})).await;
    assert_eq!(
        editor.recv().await,
        Some(json!({"jsonrpc": "2.0", "id": 2, "result": {
            "content": [{"type": "text", "text": "hi"}]}}))
    );
}

#[actix::test]
async fn a_cancelled_call_is_dropped_upstream_and_gets_no_response() {
    let (tx, mut dropped) = mpsc::unbounded_channel();
    let mut editor = Editor::start(memory_config(test_server(tx)));
    editor.initialize().await;
    editor.call(2, "hold", json!({})).await;
    // A round trip first, so the call has surely reached the server before the cancel.
    editor.call(3, "echo", json!({"text": "after"})).await;
    assert_eq!(
        editor.recv().await,
        Some(json!({"jsonrpc": "2.0", "id": 3, "result": {
            "content": [{"type": "text", "text": "after"}]}}))
    );
    editor
        .send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 2, "reason": "user"}}),
        )
        .await;
    assert_eq!(next_drop(&mut dropped).await, Some("dropped"));
    editor
        .send(json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}))
        .await;
    assert_eq!(
        editor.recv().await,
        Some(json!({"jsonrpc": "2.0", "id": 4, "result": {}}))
    );
}

#[actix::test]
async fn an_input_required_round_asks_the_editor_and_retries_with_its_answer() {
    let (tx, _dropped) = mpsc::unbounded_channel();
    let mut editor = Editor::start(memory_config(test_server(tx)));
    editor.initialize().await;
    editor.call(2, "ask_name", json!({})).await;
    let ask = editor.recv().await.unwrap_or(Value::Null);
    assert_eq!(
        ask,
        json!({"jsonrpc": "2.0", "id": "b-1", "method": "elicitation/create", "params": {
            "mode": "form",
            "message": "Your name?",
            "requestedSchema": {"type": "object",
                "properties": {"name": {"type": "string"}}, "required": ["name"]}}})
    );
    editor
        .send(json!({"jsonrpc": "2.0", "id": "b-1",
            "result": {"action": "accept", "content": {"name": "Ada"}}}))
        .await;
    assert_eq!(
        editor.recv().await,
        Some(json!({"jsonrpc": "2.0", "id": 2, "result": {
            "content": [{"type": "text", "text": "Hello, Ada! (state round-1)"}]}}))
    );
}

#[actix::test]
async fn the_end_of_the_upstream_runs_the_cascade_and_closes_the_editor_output() {
    let (tx, _dropped) = mpsc::unbounded_channel();
    let mut editor = Editor::start(memory_config(test_server(tx)));
    editor.initialize().await;
    editor.call(2, "close", json!({})).await;
    assert_eq!(
        editor.recv().await,
        Some(json!({"jsonrpc": "2.0", "id": 2, "result": {
            "content": [{"type": "text", "text": "closing"}]}}))
    );
    // The server returned: the transport ends, the Frontend reports the loss, the Supervisor
    // closes the writer toward the editor.
    assert_eq!(editor.recv().await, None);
}

#[actix::test]
async fn the_end_of_input_cancels_upstream_work_and_closes_the_editor_output() {
    let (tx, mut dropped) = mpsc::unbounded_channel();
    let mut editor = Editor::start(memory_config(test_server(tx)));
    editor.initialize().await;
    editor.call(2, "hold", json!({})).await;
    editor.call(3, "echo", json!({"text": "x"})).await;
    assert_eq!(editor.recv().await.map(|v| v["id"].clone()), Some(json!(3)));
    editor.close_input();
    // No response for the held call; the server sees the end of its input and drops it.
    assert_eq!(editor.recv().await, None);
    assert_eq!(next_drop(&mut dropped).await, Some("dropped"));
}

fn modern_params(tool: &str, arguments: Value) -> Object {
    Object::from_value(&json!({"name": tool, "arguments": arguments, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}))
    .unwrap_or_default()
}

fn start_upstream() -> (Addr<Upstream>, mpsc::UnboundedReceiver<String>) {
    let (out_tx, _out) = mpsc::unbounded_channel();
    let editor = Writer::for_blocking(
        Capture(out_tx),
        EDITOR_QUEUE,
        QueueStats::new("editor_queue"),
    );
    collector::start_upstream(editor)
}

/// A `tools/call` of `tool` and its answer (not yet sent).
fn new_call(upstream: &Addr<Upstream>, tool: &str, arguments: Value) -> (Call, CallAnswer) {
    let links = Arc::new(UpstreamLinks::new(upstream, &ActorStats::new("upstream")));
    Call::new(
        "tools/call",
        modern_params(tool, arguments),
        Id::Str("t".into()),
        links,
        CancelReason::default(),
    )
}

/// Sends a call and waits until the Upstream handled it: its upstream id and its answer.
async fn sent_call(upstream: &Addr<Upstream>, tool: &str, arguments: Value) -> (Id, CallAnswer) {
    let (call, answer) = new_call(upstream, tool, arguments);
    assert!(upstream.send(call).await.is_ok(), "the Upstream stopped");
    match answer.sent_id() {
        Some(id) => (id, answer),
        None => panic!("the call was not sent: {answer:?}"),
    }
}

async fn call(upstream: &Addr<Upstream>, tool: &str, arguments: Value) -> (Id, UpstreamReply) {
    let (id, rx) = sent_call(upstream, tool, arguments).await;
    let reply = tokio::time::timeout(DEADLINE, rx).await;
    match reply {
        Ok(Ok(r)) => (id, r),
        _ => panic!("no reply within {DEADLINE:?}"),
    }
}

fn result_text(reply: &UpstreamReply) -> Option<String> {
    match reply {
        UpstreamReply::Result(v) => v.to_value()?["content"][0]["text"]
            .as_str()
            .map(str::to_string),
        _ => None,
    }
}

#[actix::test]
async fn the_upstream_correlates_cancels_and_closes_over_memory() {
    let (tx, mut dropped) = mpsc::unbounded_channel();
    let server = test_server(tx);
    let (upstream, mut told) = start_upstream();
    assert!(matches!(
        upstream.send(Connect(UpstreamSpec::Memory(server))).await,
        Ok(Ok(()))
    ));
    let (id, reply) = call(&upstream, "echo", json!({"text": "one"})).await;
    assert_eq!(
        (id, result_text(&reply).as_deref()),
        (Id::Int(1), Some("one"))
    );
    let (held, mut held_rx) = sent_call(&upstream, "hold", json!({})).await;
    assert_eq!(held, Id::Int(2));
    let (id, reply) = call(&upstream, "echo", json!({"text": "three"})).await;
    assert_eq!(
        (id, result_text(&reply).as_deref()),
        (Id::Int(3), Some("three"))
    );
    upstream.do_send(Cancel {
        id: held,
        reason: Some("user".into()),
    });
    assert_eq!(next_drop(&mut dropped).await, Some("dropped"));
    // Forgotten at once: its receiver sees its sender dropped, never a reply.
    assert!(matches!(
        futures_util::FutureExt::now_or_never(&mut held_rx),
        Some(Err(_))
    ));
    let closed = upstream
        .send(Close {
            grace: Duration::from_secs(5),
        })
        .await
        .ok()
        .flatten();
    assert_eq!(closed, Some(EndCause::ServerClosed));
    let (after, _after_answer) = new_call(&upstream, "echo", json!({}));
    let after = upstream.send(after).await;
    // Close is the Upstream's last shutdown step: the actor has stopped.
    assert!(matches!(after, Err(MailboxError::Closed)), "{after:?}");
    // A transport the bridge closed is not reported as lost.
    assert!(told.try_recv().is_err());
}

#[actix::test]
async fn the_end_of_the_in_memory_server_is_reported_with_its_cause() {
    let (tx, _dropped) = mpsc::unbounded_channel();
    let server = test_server(tx);
    let (upstream, mut told) = start_upstream();
    assert!(matches!(
        upstream.send(Connect(UpstreamSpec::Memory(server))).await,
        Ok(Ok(()))
    ));
    let (_, reply) = call(&upstream, "close", json!({})).await;
    assert_eq!(result_text(&reply).as_deref(), Some("closing"));
    let gone = tokio::time::timeout(DEADLINE, told.recv())
        .await
        .ok()
        .flatten();
    assert_eq!(
        gone.as_deref(),
        Some("UpstreamGone { cause: ServerClosed }")
    );
}
