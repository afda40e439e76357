//! The shutdown cascade at the actor level, without processes: the real Supervisor, Frontend,
//! Listener, PendingTable and Metrics, a fake upstream actor, the editor's frames from a
//! channel and its output into memory. Each test asserts the order of the shutdown steps,
//! the actors' end reports before the exit, the exit code and what the editor got.

use super::*;
use crate::actors::config::Timeouts;
use crate::actors::upstream::reply::UpstreamReply;
use crate::actors::upstream::{Call, Cancel, Connect, Disconnect, Listen, Relay};
use crate::protocol::listen::ListenTimings;
use crate::protocol::revisions::defaults::MAX_IN_FLIGHT_REQUESTS;
use crate::protocol::wire::id::Id;
use crate::protocol::wire::raw::RawResult;
use crate::transport::child_status::ChildStatus;
use crate::transport::open::UpstreamSpec;
use crate::transport::program::SpawnError;
use crate::transport::queue::EDITOR_QUEUE;
use crate::transport::upstream::EndCause;
use serde_json::{Value, json};
use std::cell::{Cell, RefCell};
use std::sync::Mutex;
use tokio::sync::{mpsc, oneshot};

/// Wait for an event of the test, at most this long.
const EVENT_DEADLINE: Duration = Duration::from_secs(10);

type Journal = Rc<RefCell<Vec<String>>>;

struct TestHost {
    journal: Journal,
    code: Cell<Option<i32>>,
}

impl Host for TestHost {
    fn step(&self, step: &'static str) {
        self.journal.borrow_mut().push(step.to_string());
    }
    fn start_watchdog(&self, _after: Duration) {
        self.journal.borrow_mut().push("watchdog started".into());
    }
    fn ended(&self, actor: ActorKind) {
        self.journal.borrow_mut().push(format!("ended {actor}"));
    }
    fn exit(&self, code: i32) {
        self.journal.borrow_mut().push(format!("exit {code}"));
        self.code.set(Some(code));
    }
}

/// The editor's output, in memory.
#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .map_err(|_| std::io::ErrorKind::Other)?
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Sink {
    fn messages(&self) -> Vec<Value> {
        let bytes = self.0.lock().map(|b| b.clone()).unwrap_or_default();
        bytes
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap_or(Value::Null))
            .collect()
    }
}

/// A fake upstream: answers `server/discover` at once with `capabilities`, keeps every other
/// call open, accepts listen requests, and journals what it gets.
struct FakeUpstream {
    out: UpstreamOut,
    journal: Journal,
    capabilities: Value,
    next: i64,
    open: Vec<oneshot::Sender<UpstreamReply>>,
}

impl Actor for FakeUpstream {
    type Context = Context<Self>;
    fn stopped(&mut self, _: &mut Context<Self>) {
        self.out.ended.do_send(ActorEnded(ActorKind::Upstream));
    }
}

impl Handler<Connect> for FakeUpstream {
    type Result = Result<(), SpawnError>;
    fn handle(&mut self, _: Connect, _: &mut Context<Self>) -> Self::Result {
        Ok(())
    }
}

impl Handler<Call> for FakeUpstream {
    type Result = ();
    fn handle(&mut self, m: Call, _: &mut Context<Self>) {
        self.next += 1;
        let discover = m.method == "server/discover";
        if !discover {
            self.journal
                .borrow_mut()
                .push(format!("upstream got {}", m.method));
        }
        let tx = m.sent_as(Id::Int(self.next));
        if discover {
            let _ = tx.send(UpstreamReply::Result(RawResult::from_value(&json!({
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": self.capabilities
            }))));
        } else {
            self.open.push(tx);
        }
    }
}

impl Handler<Cancel> for FakeUpstream {
    type Result = ();
    fn handle(&mut self, m: Cancel, _: &mut Context<Self>) {
        self.journal
            .borrow_mut()
            .push(format!("upstream cancel {}", m.id));
    }
}

impl Handler<Listen> for FakeUpstream {
    type Result = bool;
    fn handle(&mut self, m: Listen, _: &mut Context<Self>) -> bool {
        self.journal
            .borrow_mut()
            .push(format!("upstream listen {}", m.id));
        true
    }
}

impl Handler<Relay> for FakeUpstream {
    type Result = ();
    fn handle(&mut self, _: Relay, _: &mut Context<Self>) {}
}

impl Handler<Disconnect> for FakeUpstream {
    type Result = ();
    fn handle(&mut self, _: Disconnect, _: &mut Context<Self>) {}
}

impl Handler<Close> for FakeUpstream {
    type Result = Option<EndCause>;
    fn handle(&mut self, _: Close, ctx: &mut Context<Self>) -> Option<EndCause> {
        ctx.stop();
        Some(EndCause::ChildExited {
            status: ChildStatus::Exited(0),
            stderr_tail: Vec::new(),
        })
    }
}

/// The upstream ends (the child's stdout closed): what the real one sends the Supervisor.
#[derive(Message)]
#[rtype(result = "()")]
struct Lose;

impl Handler<Lose> for FakeUpstream {
    type Result = ();
    fn handle(&mut self, _: Lose, _: &mut Context<Self>) {
        for tx in self.open.drain(..) {
            let _ = tx.send(UpstreamReply::Closed);
        }
        self.out.gone.do_send(UpstreamGone {
            cause: EndCause::ChildExited {
                status: ChildStatus::Exited(3),
                stderr_tail: Vec::new(),
            },
        });
    }
}

crate::counted_handlers!(FakeUpstream: Connect, Call, Cancel, Listen, Relay, Disconnect, Close);

fn config() -> BridgeConfig {
    BridgeConfig {
        upstream: UpstreamSpec::Child {
            command: "fake".into(),
            args: Vec::new(),
            env: Default::default(),
        },
        name: None,
        discover_timeout: Duration::from_secs(60),
        open_upstream: crate::transport::open::open,
        max_line_bytes: 1 << 20,
        max_depth: crate::protocol::wire::jsonrpc::MAX_CLIENT_DEPTH,
        timeouts: Timeouts::default(),
        max_in_flight: MAX_IN_FLIGHT_REQUESTS,
        shutdown_grace: Duration::from_secs(1),
        listen: ListenTimings {
            backoff_initial: Duration::from_millis(500),
            backoff_max: Duration::from_secs(30),
            stable: Duration::from_secs(10),
            ack_timeout: Duration::from_secs(10),
        },
        sign_in: None,
        metrics_interval: None,
        item_filter: None,
        observer: None,
        in_process: false,
        member: None,
    }
}

/// One bridge of real actors around a fake upstream.
struct Rig {
    input: Option<mpsc::UnboundedSender<Frame>>,
    signal: Option<oneshot::Sender<StopSignal>>,
    upstream: Rc<RefCell<Option<Addr<FakeUpstream>>>>,
    host: Rc<TestHost>,
    output: Sink,
    supervisor: Addr<Supervisor>,
    /// The rate limits of this bridge's warnings, as its Supervisor got them.
    limits: Arc<crate::log::limits::BridgeLimits>,
}

impl Rig {
    fn start(capabilities: Value) -> Rig {
        Rig::start_with(capabilities, config())
    }

    fn start_with(capabilities: Value, config: BridgeConfig) -> Rig {
        let journal: Journal = Rc::default();
        let host = Rc::new(TestHost {
            journal: journal.clone(),
            code: Cell::new(None),
        });
        let output = Sink::default();
        let writer = Writer::for_blocking(
            output.clone(),
            EDITOR_QUEUE,
            QueueStats::new("editor_queue"),
        );
        let (tx, rx) = mpsc::unbounded_channel::<Frame>();
        let input =
            futures_util::stream::unfold(
                rx,
                |mut rx| async move { rx.recv().await.map(|f| (f, rx)) },
            );
        let (signal_tx, signal_rx) = oneshot::channel::<StopSignal>();
        let signal = async move {
            match signal_rx.await {
                Ok(signal) => signal,
                Err(_) => std::future::pending().await,
            }
        };
        let upstream: Rc<RefCell<Option<Addr<FakeUpstream>>>> = Rc::default();
        let seat = upstream.clone();
        let fake_journal = journal.clone();
        let start_upstream: StartUpstream = Box::new(move |out, stats| {
            let addr = FakeUpstream {
                out,
                journal: fake_journal,
                capabilities,
                next: 0,
                open: Vec::new(),
            }
            .start();
            *seat.borrow_mut() = Some(addr.clone());
            UpstreamLinks::new(&addr, stats)
        });
        let limits = crate::log::limits::BridgeLimits::new();
        let supervisor = Supervisor::run(
            config,
            SupervisorParts {
                input: Box::pin(input),
                output: writer,
                queues: Vec::new(),
                upstream: start_upstream,
                signal: Box::pin(signal),
                host: host.clone(),
                sign_in: sign_in_starter(),
                limits: limits.clone(),
            },
        );
        Rig {
            input: Some(tx),
            signal: Some(signal_tx),
            upstream,
            host,
            output,
            supervisor,
            limits,
        }
    }

    fn send(&self, v: Value) {
        if let Some(tx) = &self.input {
            let _ = tx.send(Frame::Line(
                serde_json::to_vec(&v).unwrap_or_default().into(),
            ));
        }
    }

    fn journal(&self) -> Vec<String> {
        self.host.journal.borrow().clone()
    }

    /// Waits until the journal has `entry`.
    async fn wait_for(&self, entry: &str) {
        let end = tokio::time::Instant::now() + EVENT_DEADLINE;
        while !self.journal().iter().any(|e| e == entry) {
            assert!(
                tokio::time::Instant::now() < end,
                "no {entry:?} in {:?}",
                self.journal()
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Waits until the editor got a response with `id`.
    async fn wait_response(&self, id: i64) -> Value {
        let end = tokio::time::Instant::now() + EVENT_DEADLINE;
        loop {
            if let Some(r) = self.output.messages().into_iter().find(|m| m["id"] == id) {
                return r;
            }
            assert!(tokio::time::Instant::now() < end, "no response {id}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Initialize, `notifications/initialized`, then a `tools/call` (id 2) that the upstream
    /// holds.
    async fn ready_with_a_call_in_flight(&self) {
        self.send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        );
        let init = self.wait_response(1).await;
        assert!(init.get("result").is_some(), "{init}");
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        self.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "slow", "arguments": {}}}));
        self.wait_for("upstream got tools/call").await;
    }

    /// Waits for the exit; the journal from the first shutdown step on, the end reports
    /// sorted (their order among themselves is free) and checked to come before the exit.
    async fn exit(&self) -> (i32, Vec<String>) {
        let end = tokio::time::Instant::now() + EVENT_DEADLINE;
        while self.host.code.get().is_none() {
            assert!(
                tokio::time::Instant::now() < end,
                "no exit: {:?}",
                self.journal()
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let j = self.journal();
        let exit_at = j
            .iter()
            .position(|e| e.starts_with("exit"))
            .unwrap_or(j.len());
        let ended: BTreeSet<String> = j[..exit_at]
            .iter()
            .filter(|e| e.starts_with("ended "))
            .cloned()
            .collect();
        let mut steps: Vec<String> = j
            .iter()
            .filter(|e| !e.starts_with("ended ") && !e.starts_with("upstream "))
            .cloned()
            .collect();
        steps.extend(ended);
        (self.host.code.get().unwrap_or(-1), steps)
    }
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[actix::test]
async fn after_the_exit_the_supervisor_stops_though_its_signal_never_comes() {
    // A host whose process goes on (a session of the HTTP server) keeps no actor of an ended
    // bridge: the signal future, pending for ever, would otherwise keep the Supervisor.
    let mut rig = Rig::start(json!({"tools": {}}));
    rig.ready_with_a_call_in_flight().await;
    rig.input = None;
    assert_eq!(rig.exit().await.0, 0);
    let end = tokio::time::Instant::now() + EVENT_DEADLINE;
    while rig.supervisor.connected() {
        assert!(
            tokio::time::Instant::now() < end,
            "the Supervisor still runs"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(rig.signal.is_some(), "the signal never came");
}

#[actix::test]
async fn the_editors_lines_over_the_limit_count_against_their_own_bridge_alone() {
    // Two bridges in one process (two sessions of the embedded HTTP server): the warnings of
    // one editor's flood of lines over the limit are its own bridge's to count.
    let flooded = Rig::start(json!({"tools": {}}));
    let quiet = Rig::start(json!({"tools": {}}));
    for id in 1..=i64::from(crate::log::limit::WARN_BURST) {
        if let Some(tx) = &flooded.input {
            let _ = tx.send(Frame::TooLong {
                len_bytes: 2_000_000,
                head: b"{".to_vec(),
                id: Some(Id::Int(id)),
            });
        }
        let r = flooded.wait_response(id).await;
        assert_eq!(r["error"]["data"]["cause"], "line_too_long", "{r}");
    }
    // The burst of the flooded bridge is spent: its next warning is counted, not logged.
    assert!(!flooded.limits.editor_line_too_long.allow_shared());
    // The other bridge logs its first.
    assert!(quiet.limits.editor_line_too_long.allow_shared());
}

#[actix::test]
async fn end_of_input_cancels_the_call_stops_every_actor_in_order_and_exits_0() {
    let mut rig = Rig::start(json!({"tools": {}}));
    rig.ready_with_a_call_in_flight().await;
    rig.input = None; // end of the input
    let (code, steps) = rig.exit().await;
    assert_eq!(code, 0);
    assert_eq!(
        steps,
        strings(&[
            "watchdog",
            "watchdog started",
            "frontend: quiesce",
            "pending: stop",
            "frontend: finish",
            "output: close",
            "upstream: close",
            "metrics: totals",
            "exit 0",
            "ended frontend",
            "ended metrics",
            "ended pending",
            "ended upstream",
        ])
    );
    // The call was cancelled upstream before the upstream was closed, and never answered.
    let j = rig.journal();
    let cancel = j.iter().position(|e| e == "upstream cancel 2");
    let close = j.iter().position(|e| e == "upstream: close");
    assert!(cancel.is_some() && cancel < close, "{j:?}");
    let ids: Vec<Value> = rig
        .output
        .messages()
        .iter()
        .map(|m| m["id"].clone())
        .collect();
    assert_eq!(ids, vec![json!(1)]);
}

#[cfg(feature = "auth")]
#[actix::test]
async fn a_url_upstream_with_sign_in_gets_a_sign_in_actor_aborted_first_and_stopped_after_the_upstream()
 {
    let url = url::Url::parse("http://127.0.0.1:9/mcp").unwrap_or_else(|e| panic!("{e}"));
    let mut config = config();
    config.upstream = UpstreamSpec::Http(crate::transport::http::HttpSpec::new(url.clone()));
    config.sign_in = Some(crate::auth::setup::SignInSetup {
        config: crate::auth::signin::SignInConfig::new(url),
        store: crate::auth::store::TokenStore::new(
            vec![Arc::new(crate::auth::store::memory::MemoryStore::default())],
            std::env::temp_dir().join(format!("mcp-bridge-sup-{}", std::process::id())),
        ),
    });
    let mut rig = Rig::start_with(json!({"tools": {}}), config);
    rig.ready_with_a_call_in_flight().await;
    rig.input = None;
    let (code, steps) = rig.exit().await;
    assert_eq!(code, 0);
    assert_eq!(
        steps,
        strings(&[
            "watchdog",
            "watchdog started",
            "sign-in: abort",
            "frontend: quiesce",
            "pending: stop",
            "frontend: finish",
            "output: close",
            "upstream: close",
            "sign-in: stop",
            "metrics: totals",
            "exit 0",
            "ended frontend",
            "ended metrics",
            "ended pending",
            "ended sign-in",
            "ended upstream",
        ])
    );
}

#[actix::test]
async fn a_signal_runs_the_steps_of_the_end_of_input_and_exits_0() {
    let mut rig = Rig::start(json!({"tools": {}}));
    rig.ready_with_a_call_in_flight().await;
    if let Some(s) = rig.signal.take() {
        let _ = s.send(StopSignal::Term);
    }
    let (code, steps) = rig.exit().await;
    assert_eq!(code, 0);
    assert_eq!(
        steps,
        strings(&[
            "watchdog",
            "watchdog started",
            "frontend: quiesce",
            "pending: stop",
            "frontend: finish",
            "output: close",
            "upstream: close",
            "metrics: totals",
            "exit 0",
            "ended frontend",
            "ended metrics",
            "ended pending",
            "ended upstream",
        ])
    );
    let ids: Vec<Value> = rig
        .output
        .messages()
        .iter()
        .map(|m| m["id"].clone())
        .collect();
    assert_eq!(ids, vec![json!(1)]);
}

#[actix::test]
async fn loss_of_the_upstream_answers_the_call_stops_the_listener_and_exits_1() {
    let rig = Rig::start(json!({"tools": {"listChanged": true}}));
    rig.ready_with_a_call_in_flight().await;
    // The Listener ran (asked for by the Frontend after `notifications/initialized`).
    rig.wait_for("upstream listen \"listen-1\"").await;
    let fake = rig.upstream.borrow().clone();
    if let Some(f) = fake {
        f.do_send(Lose);
    }
    let (code, steps) = rig.exit().await;
    assert_eq!(code, 1);
    assert_eq!(
        steps,
        strings(&[
            "frontend: quiesce",
            "listener: stop",
            "pending: stop",
            "frontend: finish",
            "output: close",
            "upstream: close",
            "metrics: totals",
            "exit 1",
            "ended frontend",
            "ended listener",
            "ended metrics",
            "ended pending",
            "ended upstream",
        ])
    );
    let r = rig.wait_response(2).await;
    assert_eq!(r["error"]["code"], json!(-32603));
    assert_eq!(r["error"]["data"]["cause"], json!("upstream_exited"));
}

#[actix::test]
async fn loss_of_the_upstream_before_initialize_keeps_the_bridge_serving() {
    let rig = Rig::start(json!({"tools": {}}));
    let fake = rig.upstream.borrow().clone();
    if let Some(f) = fake {
        f.do_send(Lose);
    }
    rig.send(json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}));
    assert_eq!(rig.wait_response(7).await["result"], json!({}));
    assert!(
        !rig.journal()
            .iter()
            .any(|e| e.contains(':') || e.starts_with("exit")),
        "{:?}",
        rig.journal()
    );
}

/// The application's starter of the SignIn actor (with the feature `auth`).
#[cfg(feature = "auth")]
fn sign_in_starter() -> Option<StartSignIn> {
    Some(crate::app::sign_in::sign_in_actor())
}
#[cfg(not(feature = "auth"))]
fn sign_in_starter() -> Option<StartSignIn> {
    None
}
