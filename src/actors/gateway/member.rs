//! One server behind the gateway: its own bridge (a Supervisor and its actors, the same that
//! `mcp-bridge` runs for one server) in this process, its editor side two channels of the
//! gateway's, its end reported to the gateway by its `MemberHost`. Each start is a run of
//! its own ([`Run`], numbered by its generation), so that the frames and the end of a run that
//! was replaced are told from the new one's.

use actix::prelude::*;
use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream::LocalBoxStream;
use std::collections::{BTreeSet, VecDeque};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

use super::lists::Kept;
use crate::actors::config::BridgeConfig;
use crate::actors::link::Link;
use crate::actors::metrics::{MethodTimes, plural, requests_text};
use crate::actors::supervisor::messages::StopSignal;
use crate::actors::supervisor::{self, Host, StartSignIn};
use crate::protocol::rules::names::Namespace;
use crate::protocol::wire::framing::Frame;
use crate::transport::children::ChildRegistry;
use crate::transport::queue::{EDITOR_QUEUE, QueueStats};
use crate::transport::writer::Writer;

/// Frames of one server's bridge queued toward the gateway before its writer holds them.
pub const MEMBER_OUTPUT_QUEUE_FRAMES: usize = 64;

/// Makes the SignIn actor's starter of one run of a server with sign-in (a URL upstream; each
/// run has its own actor, over the same token store).
pub type SignInStarter = Box<dyn Fn() -> Option<StartSignIn>>;

/// One server of the gateway as the application gives it.
pub struct ServerSetup {
    /// Its name (the key of its entry in the file).
    pub name: String,
    /// The names its items get.
    pub namespace: Namespace,
    /// The configuration of its bridge.
    pub config: BridgeConfig,
    /// The starter of its SignIn actor, for a URL upstream with sign-in.
    pub sign_in: Option<SignInStarter>,
    /// Its entry's text with its variables resolved: a new reading of the file restarts the
    /// server only when it differs.
    pub fingerprint: String,
}

/// What the output of a server's bridge brings the gateway: each frame toward the editor, then
/// its end (every frame it wrote has reached the gateway).
pub enum MemberEvent {
    /// One JSON-RPC message and its `\n`, of the run `generation` of the server `member`.
    Frame {
        member: usize,
        generation: u64,
        bytes: Vec<u8>,
    },
    /// The output of the run ended.
    OutputEnded { member: usize, generation: u64 },
}

/// The bridge of a server ended (its Supervisor's exit, after its shutdown steps: its
/// upstream is closed).
pub struct MemberExited {
    /// The server's index.
    pub member: usize,
    /// The run that ended.
    pub generation: u64,
    /// Its exit code: 0 the end of its input, 1 the loss of its upstream.
    pub code: i32,
}

impl Message for MemberExited {
    type Result = ();
}

/// The host of a server's bridge: its end is the gateway's news, not the process's; its child
/// joins the process's registry, so the panic hook, the watchdog and a second signal reach it.
struct MemberHost {
    member: usize,
    generation: u64,
    exited: Link<MemberExited>,
    children: Arc<ChildRegistry>,
}

impl Host for MemberHost {
    fn step(&self, step: &'static str) {
        tracing::debug!(target: "gateway", "server {}: shutdown step: {step}", self.member);
    }
    // The gateway starts the process's watchdog; a server's bridge is not a process.
    fn start_watchdog(&self, _after: Duration) {}
    fn exit(&self, code: i32) {
        self.exited.do_send(MemberExited {
            member: self.member,
            generation: self.generation,
            code,
        });
    }
    fn children(&self) -> Arc<ChildRegistry> {
        self.children.clone()
    }
}

/// Where a server stands.
#[derive(Clone, Debug, PartialEq)]
pub enum MemberState {
    /// Its bridge runs; the editor's `initialize` has not reached it yet.
    Started,
    /// Its `initialize` is in flight.
    Initializing,
    /// It answered `initialize`: its result.
    Ready(Rc<serde_json::Value>),
    /// Its bridge was asked to stop (its `initialize` failed) and has not ended yet.
    Stopping,
    /// Its bridge ended; it starts again at `at`.
    Waiting {
        /// When it starts again.
        at: Instant,
    },
    /// It ended too often in a short time: it is left out until `at`.
    Failed {
        /// When it is tried again.
        at: Instant,
    },
}

/// A run of a server's bridge.
pub struct Run {
    /// Its number among the server's runs.
    pub generation: u64,
    /// Its editor side's input; `None` once closed (the end of its input).
    pub input: Option<mpsc::UnboundedSender<Frame>>,
    /// Its output reached its end.
    pub output_ended: bool,
    /// Its exit code, once it exited.
    pub exited: Option<i32>,
    /// `notifications/initialized` was sent to it.
    pub initialized: bool,
    /// The lists kept of it.
    pub kept: Kept,
    /// Its first lists are in: its items are in the editor's lists.
    pub joined: bool,
}

impl Run {
    /// Both ends seen: every frame delivered and the bridge exited.
    pub fn ended(&self) -> bool {
        self.output_ended && self.exited.is_some()
    }

    /// Sends one message to the run's bridge; false when its input is closed.
    pub fn send(&self, message: &serde_json::Value) -> bool {
        let Some(input) = &self.input else {
            return false;
        };
        match serde_json::to_vec(message) {
            Ok(bytes) => input.send(Frame::Line(Bytes::from(bytes))).is_ok(),
            Err(_) => false,
        }
    }

    /// Sends one message, already written, to the run's bridge; false when its input is
    /// closed.
    pub fn send_line(&self, line: Bytes) -> bool {
        self.input
            .as_ref()
            .is_some_and(|input| input.send(Frame::Line(line)).is_ok())
    }
}

/// One server: its setup, its state, its current run and its recent ends.
pub struct Member {
    /// Its setup.
    pub setup: ServerSetup,
    /// Where it stands.
    pub state: MemberState,
    /// Its current run (`None` between runs).
    pub run: Option<Run>,
    /// The generation of the next run.
    pub next_generation: u64,
    /// When its recent runs ended unasked, oldest first (the crash loop's window).
    pub ends: VecDeque<Instant>,
    /// The resources the editor subscribed to, as the server names them: each run gets them.
    pub subscriptions: BTreeSet<String>,
    /// The editor's requests it answered (or failed), by method.
    pub methods: MethodTimes,
    /// Its runs after the first.
    pub restarts: u64,
    /// Its state when the gateway began to stop, for the summary.
    pub last_state: Option<&'static str>,
    /// It left the file: its run stops, and it never starts again.
    pub removed: bool,
    /// Its entry changed: its run stops, and the new one starts at once.
    pub restart_now: bool,
}

impl Member {
    /// A server that has not started.
    pub fn new(setup: ServerSetup) -> Member {
        Member {
            setup,
            state: MemberState::Started,
            run: None,
            next_generation: 1,
            ends: VecDeque::new(),
            subscriptions: BTreeSet::new(),
            methods: MethodTimes::default(),
            restarts: 0,
            last_state: None,
            removed: false,
            restart_now: false,
        }
    }

    /// The `initialize` result of a ready server.
    pub fn ready(&self) -> Option<&Rc<serde_json::Value>> {
        match &self.state {
            MemberState::Ready(result) => Some(result),
            _ => None,
        }
    }

    /// It is on its way to ready: started, initializing, or ready with its first lists not
    /// all in.
    pub fn starting(&self) -> bool {
        match &self.state {
            MemberState::Started | MemberState::Initializing => true,
            MemberState::Ready(_) => !self.run.as_ref().is_some_and(|r| r.joined),
            _ => false,
        }
    }

    /// Its state in a word, for the metrics lines.
    pub fn state_word(&self) -> &'static str {
        match &self.state {
            _ if self.removed => "removed",
            MemberState::Ready(_) if self.run.as_ref().is_some_and(|r| r.joined) => "ready",
            MemberState::Started | MemberState::Initializing | MemberState::Ready(_) => "starting",
            MemberState::Stopping => "stopping",
            MemberState::Waiting { .. } => "restarting",
            MemberState::Failed { .. } => "failed",
        }
    }

    /// Its metrics line: `NAME: STATE; N requests, N errors; slowest METHOD, N.N ms; N
    /// restarts`.
    pub fn metrics_line(&self) -> String {
        format!(
            "{}: {}; {}; {}",
            self.setup.name,
            self.last_state.unwrap_or_else(|| self.state_word()),
            requests_text(&self.methods),
            plural(self.restarts, "restart", "restarts")
        )
    }

    /// The current run of a ready server whose first lists are in.
    pub fn joined(&self) -> Option<&Run> {
        match (&self.state, &self.run) {
            (MemberState::Ready(_), Some(run)) if run.joined => Some(run),
            _ => None,
        }
    }

    /// The current run, when it is the run `generation`.
    pub fn run_of(&mut self, generation: u64) -> Option<&mut Run> {
        self.run.as_mut().filter(|r| r.generation == generation)
    }
}

/// What a run needs of the gateway.
pub struct Back {
    /// Where the bridge's end goes.
    pub exited: Link<MemberExited>,
    /// The process's children.
    pub children: Arc<ChildRegistry>,
    /// Where the stream of the run's output goes: into the gateway's [`Outputs`].
    pub outputs: mpsc::UnboundedSender<LocalBoxStream<'static, MemberEvent>>,
}

/// Every run's output as one stream of the gateway's context. actix polls every item of a
/// context at each wake of its actor, so one stream per server made each call pay a poll of
/// every other server's stream; a `SelectAll` polls only the streams that woke.
pub struct Outputs {
    /// The streams of new runs.
    added: mpsc::UnboundedReceiver<LocalBoxStream<'static, MemberEvent>>,
    /// The streams of the runs whose output has not ended.
    all: futures_util::stream::SelectAll<LocalBoxStream<'static, MemberEvent>>,
}

impl Outputs {
    /// The stream, and the sender of [`Back::outputs`].
    pub fn new() -> (
        mpsc::UnboundedSender<LocalBoxStream<'static, MemberEvent>>,
        Outputs,
    ) {
        let (tx, added) = mpsc::unbounded_channel();
        let all = futures_util::stream::SelectAll::new();
        (tx, Outputs { added, all })
    }
}

impl futures_util::Stream for Outputs {
    type Item = MemberEvent;

    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<MemberEvent>> {
        use std::task::Poll;
        let this = self.get_mut();
        while let Poll::Ready(Some(stream)) = this.added.poll_recv(cx) {
            this.all.push(stream);
        }
        match this.all.poll_next_unpin(cx) {
            Poll::Ready(Some(event)) => Poll::Ready(Some(event)),
            // No run without an ended output: the next run's stream wakes it (`added`).
            Poll::Ready(None) | Poll::Pending => Poll::Pending,
        }
    }
}

/// Starts a run of the server `member`'s bridge in this actor system: its exit goes to the
/// gateway as [`MemberExited`]; the stream of its output goes to the gateway's [`Outputs`]
/// (no task or mailbox between them). Call inside the gateway's actor system.
pub fn start_run(member: usize, m: &mut Member, back: &Back) -> Run {
    let generation = m.next_generation;
    m.next_generation += 1;
    if generation > 1 {
        m.restarts += 1;
    }
    let (input_tx, input_rx) = mpsc::unbounded_channel::<Frame>();
    let (output_tx, output_rx) = mpsc::channel::<Vec<u8>>(MEMBER_OUTPUT_QUEUE_FRAMES);
    let output = Writer::for_channel(
        output_tx,
        Some,
        EDITOR_QUEUE,
        QueueStats::new("server_queue"),
    );
    let frames = futures_util::stream::unfold(input_rx, |mut rx| async move {
        rx.recv().await.map(|f| (f, rx))
    });
    let host = Rc::new(MemberHost {
        member,
        generation,
        exited: back.exited.clone(),
        children: back.children.clone(),
    });
    let events = futures_util::stream::unfold(output_rx, |mut rx| async move {
        rx.recv().await.map(|bytes| (bytes, rx))
    })
    .map(move |bytes| MemberEvent::Frame {
        member,
        generation,
        bytes,
    })
    .chain(futures_util::stream::once(async move {
        MemberEvent::OutputEnded { member, generation }
    }));
    let sign_in = m.setup.sign_in.as_ref().and_then(|start| start());
    supervisor::start_with(
        m.setup.config.clone(),
        Box::pin(frames),
        output,
        Box::pin(std::future::pending::<StopSignal>()),
        host,
        sign_in,
    );
    let run = Run {
        generation,
        input: Some(input_tx),
        output_ended: false,
        exited: None,
        initialized: false,
        kept: Kept::default(),
        joined: false,
    };
    // The gateway holds the receiver as long as it runs.
    let _ = back.outputs.send(Box::pin(events));
    run
}
