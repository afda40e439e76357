//! The Supervisor actor: starts the other actors, runs the shutdown cascade as messages and
//! decides the exit code. End of stdin: cancel the slots (no responses), close the output,
//! stop the child (stdin closed, SIGTERM, SIGKILL to its group), exit 0; a watchdog thread
//! exits after [`WATCHDOG`] whatever happens. Loss of the upstream: the Frontend has answered
//! the slots; close the output, stop what is left of the child's group, exit 1.

use actix::prelude::*;
use futures_util::StreamExt;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::frontend::{Frontend, FrontendLinks, Quiesce};
use super::metrics::{ActorStats, Metrics, WriteTotals};
use super::pending::PendingTable;
use super::upstream::{self, SetFrontend, Upstream};
use crate::protocol::framing::{Frame, LineFramer};
use crate::protocol::legacy::Forwarded;
use crate::protocol::notify::ListenTimings;
use crate::transport::child::{CHILD_PGID, signal_group};
use crate::transport::stdio;
use crate::transport::upstream::UpstreamSpec;
use crate::transport::writer::{EDITOR_QUEUE, QueueStats, Writer};

/// Time after the end of stdin after which the watchdog thread ends the process (exit 0).
pub const WATCHDOG: Duration = Duration::from_secs(8);
/// Default wait for requests in flight and for the child at each shutdown step.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);
/// Default limit of requests in flight.
pub const MAX_IN_FLIGHT_REQUESTS: usize = 256;
/// Default time limit of `server/discover`.
pub const DISCOVER_TIMEOUT: Duration = Duration::from_secs(60);
/// Frames queued between the stdin thread and the Frontend.
pub const STDIN_QUEUE_FRAMES: usize = 64;
/// Size of one read from stdin, in bytes.
pub const STDIN_CHUNK_BYTES: usize = 64 * 1024;
/// How long the shutdown waits for the queued frames to reach a stdout that the editor does
/// not read.
pub const CLOSE_DRAIN: Duration = Duration::from_secs(2);

/// Time limits of forwarded requests (the reference's limits table).
#[derive(Clone, Debug)]
pub struct Timeouts {
    /// The list methods and `completion/complete` (120 s).
    pub list: Duration,
    /// The first round of `prompts/get` and `resources/read` (120 s).
    pub read: Duration,
    /// Each round of `tools/call` (1 h).
    pub call: Duration,
    /// Each round after the first of `prompts/get` and `resources/read` (1 h).
    pub later_read: Duration,
    /// The editor's answers to one round of input requests (1 h).
    pub input: Duration,
}

impl Timeouts {
    /// The time limit of the first round of a forwarded method: `tools/call` gets `call`,
    /// `prompts/get` and `resources/read` get `read`, the lists and completion get `list`.
    pub fn first_round(&self, method: Forwarded) -> Duration {
        match method {
            Forwarded::ToolsCall => self.call,
            Forwarded::PromptsGet | Forwarded::ResourcesRead => self.read,
            Forwarded::ToolsList
            | Forwarded::PromptsList
            | Forwarded::ResourcesList
            | Forwarded::ResourcesTemplatesList
            | Forwarded::CompletionComplete => self.list,
        }
    }
}

impl Timeouts {
    /// The time limit of each round after the first: `tools/call` keeps `call`; the other
    /// methods that may ask for input get `later_read`.
    pub fn later_round(&self, method: Forwarded) -> Duration {
        match method {
            Forwarded::ToolsCall => self.call,
            _ => self.later_read,
        }
    }
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            list: Duration::from_secs(120),
            read: Duration::from_secs(120),
            call: Duration::from_secs(3600),
            later_read: Duration::from_secs(3600),
            input: Duration::from_secs(3600),
        }
    }
}

/// Everything the running bridge needs to know, from the command line.
#[derive(Clone, Debug)]
pub struct BridgeConfig {
    /// The upstream and its transport (the command line gives a child process).
    pub upstream: UpstreamSpec,
    /// `--name`: the fallback server name.
    pub name: Option<String>,
    /// `--discover-timeout`.
    pub discover_timeout: Duration,
    /// `--max-line-bytes`, on both sides.
    pub max_line_bytes: usize,
    /// Time limits per method.
    pub timeouts: Timeouts,
    /// Requests in flight at most.
    pub max_in_flight: usize,
    /// The wait at each shutdown step.
    pub shutdown_grace: Duration,
    /// The waits and time limits of the listen stream.
    pub listen: ListenTimings,
}

/// Why the bridge stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShutdownCause {
    /// stdin ended: exit 0.
    EndOfInput,
    /// The upstream child closed its stdout: exit 1.
    UpstreamLost,
}

/// Start the shutdown cascade.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Shutdown(pub ShutdownCause);

/// The Supervisor actor.
pub struct Supervisor {
    config: Arc<BridgeConfig>,
    frontend: Option<Addr<Frontend>>,
    output: Option<Writer>,
    upstream: Option<Addr<Upstream>>,
    upstream_stats: Option<Arc<ActorStats>>,
    metrics: Option<Addr<Metrics>>,
    hooks: Hooks,
    stopping: bool,
}

impl Actor for Supervisor {
    type Context = Context<Self>;
}

/// Starts the whole system inside the current actix `System` on the process's stdin and
/// stdout: the stdin reader, the actors, the signal handlers, the reaper of orphaned
/// descendants, and the cascade that stops the System with the exit code.
pub fn start(config: BridgeConfig) -> Addr<Supervisor> {
    let output = editor_writer(QueueStats::new("editor_queue"));
    let max_line_bytes = config.max_line_bytes;
    let input = match stdio::nonblocking_stdin() {
        // The editor's input is paced by its output: a request read while the queue toward
        // the editor is full would only add a response to it.
        Some(fd) => crate::transport::lines::frames(
            stdio::PipeReader(fd),
            max_line_bytes,
            Some(output.clone()),
        )
        .boxed_local(),
        None => stdin_frames(max_line_bytes).boxed_local(),
    };
    let me = start_on(config, input, output, Hooks::Process);
    actix::spawn(reap_orphans());
    let signalled = me.clone();
    actix::spawn(async move {
        let name = termination_signal().await;
        tracing::info!(target: "supervisor", "received {name}: stopping as at the end of the input");
        signalled.do_send(Shutdown(ShutdownCause::EndOfInput));
    });
    me
}

/// What the cascade may do to the process around the actors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hooks {
    /// The bridge owns the process: the end of input starts the watchdog thread, which ends
    /// the process after [`WATCHDOG`].
    Process,
    /// The actors share the process (actor tests, an embedded bridge): no watchdog.
    Embedded,
}

/// Starts the actors inside the current actix `System` on the editor frames of `input` (its
/// end is the end of input) and the writer `output` toward the editor (its queue counted as
/// `editor_queue`). The cascade ends by stopping the System with the exit code.
pub fn start_on<S>(config: BridgeConfig, input: S, output: Writer, hooks: Hooks) -> Addr<Supervisor>
where
    S: futures_util::Stream<Item = Frame> + 'static,
{
    let config = Arc::new(config);
    Supervisor::create(move |ctx| {
        let me = ctx.address();
        let up_stats = ActorStats::new("upstream");
        let fe_stats = ActorStats::new("frontend");
        let editor_queue = output.stats().clone();
        let upstream_queue = QueueStats::new("upstream_queue");
        let upstream = Upstream::new(
            config.max_line_bytes,
            up_stats.clone(),
            output.clone(),
            upstream_queue.clone(),
        )
        .start();
        let pend_stats = ActorStats::new("pending");
        let pending = PendingTable::new(output.clone(), pend_stats.clone()).start();
        let metrics = Metrics::new(
            vec![fe_stats.clone(), up_stats.clone(), pend_stats.clone()],
            vec![editor_queue, upstream_queue],
        )
        .start();
        let links = FrontendLinks {
            output: output.clone(),
            upstream: upstream.clone(),
            upstream_stats: up_stats.clone(),
            supervisor: me,
            metrics: metrics.clone(),
            pending,
            pending_stats: pend_stats,
        };
        let cfg = config.clone();
        let frontend = Frontend::create(move |fctx| {
            fctx.add_stream(input);
            Frontend::new(cfg, fe_stats, links)
        });
        upstream.do_send(SetFrontend(frontend.clone().recipient()));
        Supervisor {
            config,
            frontend: Some(frontend),
            output: Some(output),
            upstream: Some(upstream),
            upstream_stats: Some(up_stats),
            metrics: Some(metrics),
            hooks,
            stopping: false,
        }
    })
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
/// read that cannot be cancelled must not live on the runtime) and hands whole frames to the
/// Frontend.
fn stdin_frames(max_line_bytes: usize) -> impl futures_util::Stream<Item = Frame> {
    let (tx, rx) = tokio::sync::mpsc::channel::<Frame>(STDIN_QUEUE_FRAMES);
    let spawned = std::thread::Builder::new()
        .name("mcp-bridge-stdin".into())
        .spawn(move || {
            use std::io::Read;
            let mut framer = LineFramer::new(max_line_bytes);
            let mut buf = vec![0u8; STDIN_CHUNK_BYTES];
            let mut stdin = std::io::stdin().lock();
            let mut frames = Vec::new();
            loop {
                match stdin.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => framer.push(&buf[..n], &mut frames),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                }
                for f in frames.drain(..) {
                    if tx.blocking_send(f).is_err() {
                        return;
                    }
                }
            }
            framer.finish(&mut frames);
            for f in frames.drain(..) {
                if tx.blocking_send(f).is_err() {
                    return;
                }
            }
        });
    if spawned.is_err() {
        tracing::error!(target: "supervisor", "could not start the stdin thread");
    }
    futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|f| (f, rx)) })
}

/// Waits for SIGTERM, SIGINT or SIGHUP and names it. Each one stops the bridge with the
/// shutdown steps of the end of input, so the child's group never outlives the bridge.
async fn termination_signal() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
        signal(SignalKind::hangup()),
    ) else {
        tracing::warn!(target: "supervisor", "could not install the signal handlers");
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
        _ = hup.recv() => "SIGHUP",
    }
}

/// On every SIGCHLD, reaps the descendants of the upstream that were handed to the bridge (a
/// child subreaper) and have exited, so that they do not stay zombies while the bridge runs.
/// The upstream child itself is left to tokio, which collects its status.
async fn reap_orphans() {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut sigchld) = signal(SignalKind::child()) else {
        return;
    };
    while sigchld.recv().await.is_some() {
        crate::transport::isolation::reap_orphan_zombies(CHILD_PGID.load(Ordering::SeqCst));
    }
}

/// Starts the watchdog: a plain thread that kills the child's group and exits 0 after
/// [`WATCHDOG`], even when every task is stuck.
fn start_watchdog() {
    let _ = std::thread::Builder::new()
        .name("mcp-bridge-watchdog".into())
        .spawn(|| {
            std::thread::sleep(WATCHDOG);
            signal_group(CHILD_PGID.load(Ordering::SeqCst), libc::SIGKILL);
            crate::transport::isolation::stop_descendants();
            crate::log::raw_line(
                "supervisor",
                "warn",
                &format!(
                    "the watchdog ended the bridge {} s after the end of the input",
                    WATCHDOG.as_secs()
                ),
            );
            std::process::exit(0);
        });
}

impl Handler<Shutdown> for Supervisor {
    type Result = ();
    fn handle(&mut self, Shutdown(cause): Shutdown, ctx: &mut Context<Self>) {
        if self.stopping {
            return;
        }
        self.stopping = true;
        let code = match cause {
            ShutdownCause::EndOfInput => {
                if self.hooks == Hooks::Process {
                    start_watchdog();
                }
                0
            }
            ShutdownCause::UpstreamLost => 1,
        };
        let frontend = self.frontend.take();
        let output = self.output.take();
        let upstream = self.upstream.take();
        let ustats = self.upstream_stats.take();
        let metrics = self.metrics.take();
        let grace = self.config.shutdown_grace;
        ctx.spawn(
            async move {
                if let Some(f) = &frontend {
                    let _ = f.send(Quiesce).await;
                }
                if let Some(o) = &output {
                    o.close();
                    let _ = tokio::time::timeout(CLOSE_DRAIN, o.drained()).await;
                }
                if let Some(u) = &upstream {
                    if let Some(s) = &ustats {
                        s.queued();
                    }
                    if let Ok(Some(status)) = u.send(upstream::Close { grace }).await {
                        tracing::info!(target: "supervisor", "the upstream server stopped ({status})");
                    }
                }
                if let Some(m) = &metrics {
                    let _ = m.send(WriteTotals).await;
                }
                System::current().stop_with_code(code);
            }
            .into_actor(self),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_method_has_the_time_limit_of_the_table() {
        let t = Timeouts::default();
        assert_eq!(
            t.first_round(Forwarded::ToolsCall),
            Duration::from_secs(3600)
        );
        assert_eq!(
            t.first_round(Forwarded::PromptsGet),
            Duration::from_secs(120)
        );
        assert_eq!(
            t.first_round(Forwarded::ResourcesRead),
            Duration::from_secs(120)
        );
        for f in [
            Forwarded::ToolsList,
            Forwarded::PromptsList,
            Forwarded::ResourcesList,
            Forwarded::ResourcesTemplatesList,
            Forwarded::CompletionComplete,
        ] {
            assert_eq!(t.first_round(f), Duration::from_secs(120), "{f:?}");
        }
    }
}
