//! The bridge's own process around the actors: the editor's stdin and stdout (non-blocking
//! when they are pipes, else a thread), the termination signals (a second one stops at once),
//! the reaper of orphaned descendants, the end of stdout, and the watchdog that ends the
//! process when a shutdown hangs.

use actix::prelude::*;
use futures_util::stream::LocalBoxStream;
use std::io::IsTerminal;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use crate::actors::config::BridgeConfig;
use crate::actors::gateway::member::SignInStarter;
use crate::actors::gateway::{Gateway, GatewayParts, GatewaySetup};
use crate::actors::supervisor::messages::{Shutdown, ShutdownCause, StopSignal};
use crate::actors::supervisor::{Host, Supervisor, start_with};
use crate::log;
use crate::protocol::wire::framing::{Frame, FrameCodec};
use crate::transport::children::ChildRegistry;
use crate::transport::queue::{EDITOR_QUEUE, QueueStats};
use crate::transport::writer::Writer;
use crate::transport::{isolation, lines, stdio};

/// The SignIn actor's starter: the sign-in's with the feature `auth`, none without it.
#[cfg(feature = "auth")]
pub(super) fn sign_in_actor() -> Option<crate::actors::supervisor::StartSignIn> {
    Some(super::sign_in::sign_in_actor())
}
#[cfg(not(feature = "auth"))]
pub(super) fn sign_in_actor() -> Option<crate::actors::supervisor::StartSignIn> {
    None
}

/// What makes the SignIn actor's starter of each run of one server behind the gateway (each
/// run has an actor of its own): `None` without the feature `auth`.
pub fn sign_in_starter() -> Option<SignInStarter> {
    sign_in_actor().map(|_| Box::new(sign_in_actor) as SignInStarter)
}

/// The line the bridge writes when its stdin is a terminal (a bare start by hand).
pub const TERMINAL_STDIN_HINT: &str =
    "waiting for an MCP client on stdin (this is a stdio MCP server; see --help)";

/// Frames queued between the stdin thread and the Frontend.
pub const STDIN_QUEUE_FRAMES: usize = 64;

/// The host of the bridge's own process: a debug line per shutdown step, the watchdog thread
/// at the end of the input, the exit code to the actix `System`, and the process's registry of
/// children.
struct ProcessHost {
    children: Arc<ChildRegistry>,
}

impl Host for ProcessHost {
    fn step(&self, step: &'static str) {
        tracing::debug!(target: "supervisor", "shutdown step: {step}");
    }
    fn start_watchdog(&self, after: Duration) {
        start_watchdog(after, self.children.clone());
    }
    fn exit(&self, code: i32) {
        System::current().stop_with_code(code);
    }
    fn children(&self) -> Arc<ChildRegistry> {
        self.children.clone()
    }
}

/// Installs the panic hook of a process that starts children: an internal error (a panic
/// anywhere) ends every registered child's group and every other descendant
/// ([`stop_every_child`]), writes `internal error: ...` in `scope`, and exits with `code`,
/// instead of leaving a half-dead process or an orphaned server.
pub fn stop_children_at_panic(children: Arc<ChildRegistry>, scope: &'static str, code: i32) {
    std::panic::set_hook(Box::new(move |info| {
        stop_every_child(&children);
        log::raw_line(scope, "error", &format!("internal error: {info}"));
        std::process::exit(code);
    }));
}

/// Ends every child at once: SIGKILL to every group in `children`, then the sweep of every
/// other descendant (`isolation::stop_descendants`; blocking). The paths that end the
/// process without the shutdown steps take it: a panic, the watchdog, a second signal.
pub fn stop_every_child(children: &ChildRegistry) {
    children.kill_all();
    isolation::stop_descendants();
}

/// Starts the whole bridge inside the current actix `System` on the process's stdin and
/// stdout: the writer toward the editor, the reader of stdin, the actors, the signal handlers
/// and the reaper of orphaned descendants. Its child upstream joins `children`.
pub fn start(config: BridgeConfig, children: Arc<ChildRegistry>) -> Addr<Supervisor> {
    let output = editor_writer(QueueStats::new("editor_queue"));
    let input = editor_input(config.max_line_bytes, &output);
    actix::spawn(reap_orphans(children.clone()));
    let supervisor = start_with(
        config,
        input,
        output,
        Box::pin(termination_signal(children.clone())),
        Rc::new(ProcessHost { children }),
        sign_in_actor(),
    );
    let to_stop = supervisor.clone();
    stdio::on_stdout_gone(move || to_stop.do_send(Shutdown(ShutdownCause::OutputClosed)));
    supervisor
}

/// Starts the gateway of many servers (`--config`) inside the current actix `System` on the
/// process's stdin and stdout, as [`start`] starts one bridge: the same reader, writer, signal
/// handlers and reaper. Every server's child joins `children`.
pub fn start_gateway(setup: GatewaySetup, children: Arc<ChildRegistry>) -> Addr<Gateway> {
    let output = editor_writer(QueueStats::new("editor_queue"));
    let input = editor_input(setup.max_line_bytes, &output);
    actix::spawn(reap_orphans(children.clone()));
    let gateway = crate::actors::gateway::start(
        setup,
        GatewayParts {
            input,
            output,
            signal: Box::pin(termination_signal(children.clone())),
            host: Rc::new(ProcessHost { children }),
        },
    );
    let to_stop = gateway.clone();
    stdio::on_stdout_gone(move || to_stop.do_send(Shutdown(ShutdownCause::OutputClosed)));
    gateway
}

/// The editor's frames from stdin: non-blocking reads on the actor thread when stdin is a
/// pipe (paced by `output`), else a reader thread.
fn editor_input(max_line_bytes: usize, output: &Writer) -> LocalBoxStream<'static, Frame> {
    match stdio::nonblocking_stdin() {
        // The editor's input is paced by its output: a request read while the queue toward
        // the editor is full would only add a response to it.
        Some(fd) => Box::pin(lines::frames(
            stdio::PipeReader(fd),
            FrameCodec::new(max_line_bytes),
            Some(output.clone()),
        )),
        None => {
            // Started by hand in a terminal, the bridge would otherwise wait in silence: a new
            // user learns that a client is expected on stdin.
            if std::io::stdin().is_terminal() {
                tracing::info!(target: "bridge", "{TERMINAL_STDIN_HINT}");
            }
            Box::pin(stdin_frames(max_line_bytes))
        }
    }
}

/// The writer toward the editor: non-blocking writes on the actor thread when stdout is a pipe
/// or a socket, else a writer thread (a terminal, a file). Call inside the actor system.
fn editor_writer(stats: Arc<QueueStats>) -> Writer {
    match stdio::nonblocking_stdout() {
        Some(fd) => Writer::for_pipe(fd, EDITOR_QUEUE, stats),
        None => Writer::for_blocking(std::io::stdout(), EDITOR_QUEUE, stats),
    }
}

/// Reads a stdin that is not a pipe (a terminal, a file) on a plain OS thread (a blocking
/// read that cannot be cancelled must not live on the runtime) with the same codec as a pipe,
/// and hands whole frames to the Frontend.
fn stdin_frames(max_line_bytes: usize) -> impl futures_util::Stream<Item = Frame> {
    let (tx, rx) = tokio::sync::mpsc::channel::<Frame>(STDIN_QUEUE_FRAMES);
    let spawned = std::thread::Builder::new()
        .name("mcp-bridge-stdin".into())
        .spawn(move || {
            lines::read_blocking(
                std::io::stdin().lock(),
                FrameCodec::new(max_line_bytes),
                |frame| tx.blocking_send(frame).is_ok(),
            );
        });
    if spawned.is_err() {
        tracing::error!(target: "supervisor", "could not start the stdin thread");
    }
    futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|f| (f, rx)) })
}

/// Waits for SIGTERM, SIGINT or SIGHUP and names it. Each one stops the bridge with the
/// shutdown steps of the end of input, so the child's group never outlives the bridge. From
/// then on a second one of them stops the bridge at once ([`stop_at_once`]), the usual
/// convention of a server that is asked twice.
pub(super) async fn termination_signal(children: Arc<ChildRegistry>) -> StopSignal {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
        signal(SignalKind::hangup()),
    ) else {
        tracing::warn!(target: "supervisor", "could not install the signal handlers");
        return std::future::pending().await;
    };
    let first = tokio::select! {
        _ = term.recv() => StopSignal::Term,
        _ = int.recv() => StopSignal::Int,
        _ = hup.recv() => StopSignal::Hup,
    };
    actix::spawn(async move {
        let second = tokio::select! {
            _ = term.recv() => StopSignal::Term,
            _ = int.recv() => StopSignal::Int,
            _ = hup.recv() => StopSignal::Hup,
        };
        stop_at_once(second, &children);
    });
    first
}

/// A second signal during the shutdown: SIGKILL to every child's group, the sweep of the
/// other descendants, one warn line, and exit with `128 + number` (the status of a process that
/// the signal ended: the shutdown did not finish). What is queued toward the editor is not
/// written.
fn stop_at_once(signal: StopSignal, children: &ChildRegistry) {
    stop_every_child(children);
    log::raw_line(
        "supervisor",
        "warn",
        &format!(
            "received {signal} again: stopped at once, without the rest of the shutdown steps"
        ),
    );
    std::process::exit(128 + signal.number());
}

/// On every SIGCHLD, reaps the descendants of the upstream that were handed to the bridge (a
/// child subreaper) and have exited, so that they do not stay zombies while the bridge runs.
/// The registered children themselves are left to tokio, which collects their status.
pub(super) async fn reap_orphans(children: Arc<ChildRegistry>) {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut sigchld) = signal(SignalKind::child()) else {
        return;
    };
    while sigchld.recv().await.is_some() {
        isolation::reap_orphan_zombies(&children);
    }
}

/// Starts the watchdog: a plain thread that kills every child's group and exits 0 after
/// `after` ([`watchdog_after`]), even when every task is stuck.
fn start_watchdog(after: Duration, children: Arc<ChildRegistry>) {
    start_watchdog_after(after, "the end of the input", children);
}

/// [`start_watchdog`], its line naming what started the shutdown (`since`: "the end of the
/// input", "the stop signal").
pub(super) fn start_watchdog_after(
    after: Duration,
    since: &'static str,
    children: Arc<ChildRegistry>,
) {
    let _ = std::thread::Builder::new()
        .name("mcp-bridge-watchdog".into())
        .spawn(move || {
            std::thread::sleep(after);
            stop_every_child(&children);
            log::raw_line(
                "supervisor",
                "warn",
                &format!(
                    "the watchdog ended the bridge {} s after {since}",
                    after.as_secs()
                ),
            );
            std::process::exit(0);
        });
}
