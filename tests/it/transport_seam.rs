//! The Upstream actor's correlation layer over a scripted transport shaped like HTTP (a
//! request that fails alone, a cancel the transport carries itself): what the HTTP transport
//! needs works without a change to `actors/upstream.rs`. No process, no server.

use actix::prelude::*;
use futures_util::StreamExt;
use futures_util::future::LocalBoxFuture;
use mcp_bridge::actors::link::ActorStats;
use mcp_bridge::actors::upstream::reply::{CancelReason, UpstreamReply};
use mcp_bridge::actors::upstream::{
    Call, CallAnswer, Cancel, Close, Connect, Relay, Upstream, UpstreamLinks,
};
use mcp_bridge::protocol::wire::framing::Frame;
use mcp_bridge::protocol::wire::id::Id;
use mcp_bridge::protocol::wire::raw::Object;
use mcp_bridge::transport::child_status::ChildStatus;
use mcp_bridge::transport::open::{Opener, UpstreamSpec};
use mcp_bridge::transport::program::SpawnError;
use mcp_bridge::transport::queue::{Delivery, EDITOR_QUEUE, QueueStats, Sent};
use mcp_bridge::transport::upstream::{
    Abandoned, EndCause, Opened, RequestFailure, Transport, TransportEvent,
};
use mcp_bridge::transport::writer::Writer;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

use crate::common::collector;

/// How long a test waits for one event before it fails.
const DEADLINE: Duration = Duration::from_secs(20);

/// What the scripted transport was asked to do, in order.
#[derive(Debug, PartialEq)]
enum Done {
    Sent(Value, Delivery),
    Abandoned(Id),
    Closed(Duration),
}

/// A transport whose events the test writes and whose sends it reads.
struct Scripted(mpsc::UnboundedSender<Done>);

impl Transport for Scripted {
    fn send(&self, msg: &Value, delivery: Delivery) -> Sent {
        let _ = self.0.send(Done::Sent(msg.clone(), delivery));
        Sent::Queued
    }
    fn queued(&self) -> (usize, usize) {
        (0, 0)
    }
    /// As HTTP would: the request's own stream is closed, no frame goes out.
    fn abandon(&self, id: &Id) -> Abandoned {
        let _ = self.0.send(Done::Abandoned(id.clone()));
        Abandoned::Carried
    }
    fn close(self: Box<Self>, grace: Duration) -> LocalBoxFuture<'static, Option<EndCause>> {
        let _ = self.0.send(Done::Closed(grace));
        Box::pin(async { Some(EndCause::ServerClosed) })
    }
    fn kill(self: Box<Self>) -> LocalBoxFuture<'static, ()> {
        Box::pin(async {})
    }
}

struct Rig {
    upstream: Addr<Upstream>,
    events: mpsc::UnboundedSender<TransportEvent>,
    done: mpsc::UnboundedReceiver<Done>,
    told: mpsc::UnboundedReceiver<String>,
}

async fn rig() -> Rig {
    let (events_tx, events_rx) = mpsc::unbounded_channel::<TransportEvent>();
    let (done_tx, done) = mpsc::unbounded_channel();
    let slot = Arc::new(Mutex::new(Some((events_rx, done_tx))));
    let opener =
        Opener(Arc::new(move |_options| {
            let Some((rx, done)) = slot.lock().ok().and_then(|mut s| s.take()) else {
                return Err(SpawnError::Refused {
                    program: "scripted".into(),
                    error: std::io::Error::other("opened twice"),
                });
            };
            let events = futures_util::stream::unfold(rx, |mut rx| async move {
                rx.recv().await.map(|e| (e, rx))
            });
            Ok(Opened {
                transport: Box::new(Scripted(done)),
                events: events.boxed_local(),
            })
        }));
    let editor = Writer::for_blocking(std::io::sink(), EDITOR_QUEUE, QueueStats::new("editor"));
    let (upstream, told) = collector::start_upstream(editor);
    let connected = upstream.send(Connect(UpstreamSpec::Opener(opener))).await;
    assert!(matches!(connected, Ok(Ok(()))));
    Rig {
        upstream,
        events: events_tx,
        done,
        told,
    }
}

/// A call of `method` and its answer (not yet sent).
fn new_call(upstream: &Addr<Upstream>, method: &'static str) -> (Call, CallAnswer) {
    let links = Arc::new(UpstreamLinks::new(upstream, &ActorStats::new("upstream")));
    Call::new(
        method,
        Object::from_value(&json!({"x": 1})).unwrap_or_default(),
        Id::Int(7),
        links,
        CancelReason::default(),
    )
}

/// Sends a call and waits until the Upstream handled it: its upstream id and its answer.
async fn call(upstream: &Addr<Upstream>, method: &'static str) -> (Id, CallAnswer) {
    let (call, answer) = new_call(upstream, method);
    assert!(upstream.send(call).await.is_ok(), "the Upstream stopped");
    match answer.sent_id() {
        Some(id) => (id, answer),
        None => panic!("the call was not sent: {answer:?}"),
    }
}

async fn reply(rx: CallAnswer) -> String {
    match tokio::time::timeout(DEADLINE, rx).await {
        Ok(Ok(r)) => format!("{r:?}"),
        other => panic!("no reply within {DEADLINE:?}: {other:?}"),
    }
}

async fn next<T>(rx: &mut mpsc::UnboundedReceiver<T>) -> Option<T> {
    tokio::time::timeout(DEADLINE, rx.recv())
        .await
        .ok()
        .flatten()
}

fn line(v: Value) -> TransportEvent {
    TransportEvent::Frame(Frame::Line(
        serde_json::to_vec(&v).unwrap_or_default().into(),
    ))
}

#[actix::test]
async fn a_request_that_fails_alone_leaves_the_upstream_serving_the_others() {
    let mut r = rig().await;
    let (a, a_rx) = call(&r.upstream, "tools/call").await;
    let (b, b_rx) = call(&r.upstream, "tools/list").await;
    assert_eq!((a.clone(), b.clone()), (Id::Int(1), Id::Int(2)));
    assert_eq!(
        next(&mut r.done).await,
        Some(Done::Sent(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"x": 1}}),
            Delivery::Request(Id::Int(1))
        ))
    );
    assert!(matches!(
        next(&mut r.done).await,
        Some(Done::Sent(_, Delivery::Request(Id::Int(2))))
    ));
    assert!(
        r.events
            .send(TransportEvent::Failed {
                id: a,
                failure: RequestFailure::status(502, "HTTP 502".into())
            })
            .is_ok()
    );
    assert_eq!(
        reply(a_rx).await,
        "Failed(RequestFailure { status: Some(502), error: None, detail: \"HTTP 502\" })"
    );
    assert!(
        r.events
            .send(line(
                json!({"jsonrpc": "2.0", "id": 2, "result": {"ok": true}})
            ))
            .is_ok()
    );
    assert_eq!(
        reply(b_rx).await,
        "Result(Object([(\"ok\", RawJson(true))]))"
    );
    let (c, c_rx) = call(&r.upstream, "tools/call").await;
    assert_eq!(c, Id::Int(3));
    assert!(
        r.events
            .send(line(json!({"jsonrpc": "2.0", "id": 3, "result": {}})))
            .is_ok()
    );
    assert_eq!(reply(c_rx).await, "Result(Object([]))");
    assert!(r.told.try_recv().is_err(), "a failed request is no loss");
}

#[actix::test]
async fn a_cancel_the_transport_carries_sends_no_cancelled_notification() {
    let mut r = rig().await;
    let (a, _a_rx) = call(&r.upstream, "tools/call").await;
    assert!(matches!(next(&mut r.done).await, Some(Done::Sent(..))));
    r.upstream.do_send(Cancel {
        id: a,
        reason: Some("user".into()),
    });
    assert_eq!(next(&mut r.done).await, Some(Done::Abandoned(Id::Int(1))));
    // Nothing else was sent: the next thing the transport sees is the next call.
    let (b, _b_rx) = call(&r.upstream, "ping").await;
    assert!(
        matches!(next(&mut r.done).await, Some(Done::Sent(_, Delivery::Request(id))) if id == b)
    );
}

#[actix::test]
async fn a_call_whose_answer_never_reached_its_waiter_is_abandoned() {
    let mut r = rig().await;
    // A call whose answer is gone before the Upstream handles it (the slot was cancelled
    // while the call waited in the mailbox) is never sent: the next thing the transport sees
    // is the next call.
    let (gone, gone_answer) = new_call(&r.upstream, "tools/call");
    drop(gone_answer);
    r.upstream.do_send(gone);
    // `do_send` queues the Call at once; the round trip of a second call shows that the first
    // was handled (it has its upstream id, its answer waits in the reply channel) while its
    // waiter has not read it: the window of a slot the editor cancels at that moment.
    let (unread_call, unread) = new_call(&r.upstream, "tools/call");
    r.upstream.do_send(unread_call);
    let (b, _b_answer) = call(&r.upstream, "ping").await;
    assert_eq!(b, Id::Int(2));
    assert!(matches!(
        next(&mut r.done).await,
        Some(Done::Sent(_, Delivery::Request(Id::Int(1))))
    ));
    assert!(matches!(
        next(&mut r.done).await,
        Some(Done::Sent(_, Delivery::Request(Id::Int(2))))
    ));
    // The waiter goes away without reading: the answer it never saw cancels the request.
    drop(unread);
    assert_eq!(next(&mut r.done).await, Some(Done::Abandoned(Id::Int(1))));
    // An answer dropped unread cancels it too, an answer that resolved does not.
    let (c, c_answer) = call(&r.upstream, "tools/call").await;
    assert!(matches!(next(&mut r.done).await, Some(Done::Sent(..))));
    drop(c_answer);
    assert_eq!(next(&mut r.done).await, Some(Done::Abandoned(c)));
    let (d, d_answer) = call(&r.upstream, "tools/call").await;
    assert!(matches!(next(&mut r.done).await, Some(Done::Sent(..))));
    assert!(
        r.events
            .send(line(
                json!({"jsonrpc": "2.0", "id": d.to_value(), "result": {}})
            ))
            .is_ok()
    );
    assert_eq!(reply(d_answer).await, "Result(Object([]))");
    let (e, _e_answer) = call(&r.upstream, "ping").await;
    assert!(
        matches!(next(&mut r.done).await, Some(Done::Sent(_, Delivery::Request(id))) if id == e),
        "nothing was abandoned for the answered call"
    );
}

#[actix::test]
async fn the_end_event_fails_what_is_pending_and_reaches_the_frontend_with_its_cause() {
    let mut r = rig().await;
    let (_, a_rx) = call(&r.upstream, "tools/call").await;
    assert!(
        r.events
            .send(line(
                json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            ))
            .is_ok()
    );
    assert!(r.events.send(TransportEvent::Closed).is_ok());
    assert_eq!(reply(a_rx).await, "Closed");
    assert!(
        r.events
            .send(TransportEvent::Ended(EndCause::ChildExited {
                status: ChildStatus::Exited(3),
                stderr_tail: Vec::new(),
            }))
            .is_ok()
    );
    assert_eq!(
        next(&mut r.told).await.as_deref(),
        Some("Notification { method: \"notifications/tools/list_changed\", params: Object {} }")
    );
    assert_eq!(
        next(&mut r.told).await.as_deref(),
        Some("UpstreamGone { cause: ChildExited { status: Exited(3), stderr_tail: [] } }")
    );
    // Closed: a new call is answered at once, and Close finds nothing to stop.
    let (after, after_answer) = new_call(&r.upstream, "ping");
    assert!(r.upstream.send(after).await.is_ok());
    assert_eq!(after_answer.sent_id(), None);
    assert!(matches!(
        futures_util::FutureExt::now_or_never(after_answer),
        Some(Ok(UpstreamReply::Closed))
    ));
    let closed = r
        .upstream
        .send(Close { grace: DEADLINE })
        .await
        .ok()
        .flatten();
    assert_eq!(closed, None);
}

#[actix::test]
async fn close_runs_the_transports_own_steps_with_the_grace() {
    let mut r = rig().await;
    let closed = r
        .upstream
        .send(Close {
            grace: Duration::from_millis(1500),
        })
        .await
        .ok()
        .flatten();
    assert_eq!(closed, Some(EndCause::ServerClosed));
    assert_eq!(
        next(&mut r.done).await,
        Some(Done::Closed(Duration::from_millis(1500)))
    );
    // Close is the Upstream's last shutdown step: the actor stops, and with it the reader of
    // the transport's events, so the transport's own end after a Close is never reported as
    // a loss.
    let (ping, _ping_answer) = new_call(&r.upstream, "ping");
    let ping = r.upstream.send(ping).await;
    assert!(matches!(ping, Err(MailboxError::Closed)), "{ping:?}");
    assert!(
        r.events
            .send(TransportEvent::Ended(EndCause::PeerDropped))
            .is_err()
    );
    assert!(r.told.try_recv().is_err());
}

/// Pass-through (a legacy upstream) over the same seam: the editor's messages go to the
/// transport as they came, the upstream's come back to the Frontend as they came (requests of
/// the server too), and a cancel the transport carries sends nothing.
#[actix::test]
async fn pass_through_relays_both_ways_over_an_http_shaped_transport() {
    let mut r = rig().await;
    let init = json!({"jsonrpc": "2.0", "id": "i", "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "e", "version": "1"}}});
    r.upstream.do_send(Relay {
        message: init.clone(),
        delivery: Delivery::Request(Id::Str("i".into())),
        cancels: None,
    });
    assert_eq!(
        next(&mut r.done).await,
        Some(Done::Sent(init, Delivery::Request(Id::Str("i".into()))))
    );
    let result = json!({"jsonrpc": "2.0", "id": "i", "result": {"protocolVersion": "2025-11-25"}});
    assert!(r.events.send(line(result)).is_ok());
    assert_eq!(
        next(&mut r.told).await.as_deref(),
        Some(
            "Relayed { message: Object {\"jsonrpc\": String(\"2.0\"), \"id\": String(\"i\"), \"result\": Object {\"protocolVersion\": String(\"2025-11-25\")}}, kind: Response(Some(Str(\"i\"))) }"
        )
    );
    // A request of the server (2025-11-25 allows them) reaches the Frontend, not a warning.
    let sampling =
        json!({"jsonrpc": "2.0", "id": 0, "method": "sampling/createMessage", "params": {}});
    assert!(r.events.send(line(sampling)).is_ok());
    assert_eq!(
        next(&mut r.told).await.as_deref(),
        Some(
            "Relayed { message: Object {\"jsonrpc\": String(\"2.0\"), \"id\": Number(0), \"method\": String(\"sampling/createMessage\"), \"params\": Object {}}, kind: Request(Int(0)) }"
        )
    );
    // A cancel the transport carries: abandoned, and the notification is not sent.
    let cancel =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}});
    r.upstream.do_send(Relay {
        message: cancel,
        delivery: Delivery::Always,
        cancels: Some(Id::Int(5)),
    });
    assert_eq!(next(&mut r.done).await, Some(Done::Abandoned(Id::Int(5))));
    let answer = json!({"jsonrpc": "2.0", "id": 0, "result": {}});
    r.upstream.do_send(Relay {
        message: answer.clone(),
        delivery: Delivery::Always,
        cancels: None,
    });
    assert_eq!(
        next(&mut r.done).await,
        Some(Done::Sent(answer, Delivery::Always))
    );
    // A bad line naming a request in flight is reported for that request.
    assert!(
        r.events
            .send(TransportEvent::Frame(Frame::Line(
                b"{\"jsonrpc\":\"2.0\",\"id\":\"i2\",\"result\":"
                    .to_vec()
                    .into()
            )))
            .is_ok()
    );
    assert_eq!(
        next(&mut r.told).await.as_deref(),
        Some("RelayFailed { id: Str(\"i2\"), reply: Invalid(None) }")
    );
}

#[actix::test]
async fn a_sign_in_of_the_transport_reaches_the_frontend() {
    let mut r = rig().await;
    assert!(r.events.send(TransportEvent::SignedIn).is_ok());
    assert_eq!(next(&mut r.told).await.as_deref(), Some("SignedIn"));
}
