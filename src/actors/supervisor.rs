//! The Supervisor actor: starts every other actor (Frontend, Upstream, Listener, PendingTable,
//! Metrics, and the SignIn actor of a URL upstream with sign-in) and the writer toward the editor, hears of each one's end, and owns the shutdown
//! cascade: the end of the input (from the Frontend), a signal (its own task) and the loss of
//! the upstream (from the Upstream) each enter here, and every shutdown step is a message it
//! sends. The sequences: `docs/architecture.md`, "Shutdown cascade".
//!
//! The actors that need each other's links are wired before any of them runs: the Supervisor
//! creates their contexts (`Context::new`), takes their addresses, builds the [`Link`]s, then
//! runs each context with its actor. The Listener's context waits until the Frontend asks for
//! it ([`StartListener`]); what the Frontend sends it meanwhile waits in its mailbox.

pub mod messages;
#[cfg(test)]
mod tests;

use actix::prelude::*;
use futures_util::future::LocalBoxFuture;
use futures_util::stream::LocalBoxStream;
use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use self::messages::{
    ActorEnded, ActorKind, Shutdown, ShutdownCause, StartListener, StopSignal, UpstreamGone,
};
use super::frontend::messages::{Finish, Quiesce, UpstreamLost};
use super::frontend::{Frontend, FrontendLinks, FrontendOut, SupervisorLinks};
use super::link::{ActorStats, Link};
use super::listener::{self, Listener, ListenerLinks, ListenerOut, StopCause};
use super::log_span::run_in;
use super::metrics::{Metrics, WriteTotals};
use super::pending::{self, PendingLinks, PendingTable};
use super::sign_in_side::SignInSide;
use super::upstream::{Close, Upstream, UpstreamLinks, UpstreamOut};
use crate::actors::config::BridgeConfig;
use crate::log::limits::BridgeLimits;
use crate::protocol::wire::framing::Frame;
use crate::transport::children::ChildRegistry;
use crate::transport::queue::QueueStats;
use crate::transport::writer::{Drain, Writer};
/// How long the watchdog gives the shutdown beyond its two long waits: the longest drain of
/// the output ([`CLOSE_DRAIN_MAX`]) and the upstream's close (twice `--shutdown-grace`).
pub const WATCHDOG_MARGIN: Duration = Duration::from_secs(8);

/// Time after the end of stdin after which the watchdog thread ends the process (exit 0),
/// whatever happens: the longest drain of what the editor still reads, the upstream's close
/// with `grace` at each of its two waits, and [`WATCHDOG_MARGIN`] (42 s with the default grace
/// of 2 s).
pub fn watchdog_after(grace: Duration) -> Duration {
    CLOSE_DRAIN_MAX
        .saturating_add(grace.saturating_mul(2))
        .saturating_add(WATCHDOG_MARGIN)
}
/// How long the shutdown waits for the queued frames to reach a stdout whose reader took
/// no byte meanwhile: an editor that stopped reading costs this much, not more.
pub const CLOSE_DRAIN_IDLE: Duration = Duration::from_secs(2);
/// The longest the shutdown writes the queued frames to an editor that still reads them
/// (slowly): every response and error that was answered reaches it, up to this cap.
pub const CLOSE_DRAIN_MAX: Duration = Duration::from_secs(30);
/// After the last shutdown step, how long the Supervisor waits for the actors to report
/// their end before it exits anyway.
pub const END_REPORT_WAIT: Duration = Duration::from_secs(1);

/// What stays outside the actors: the process. The real one writes a debug line per
/// shutdown step, starts the watchdog thread and stops the actix `System` with the exit
/// code; a test records them.
pub trait Host {
    /// A shutdown step starts (`"frontend: quiesce"`, ...), in the order of the cascade.
    fn step(&self, step: &'static str);
    /// Start the watchdog of the end of the input: it ends the process `after` this long
    /// ([`watchdog_after`]).
    fn start_watchdog(&self, after: Duration);
    /// An actor reported its end.
    fn ended(&self, actor: ActorKind) {
        tracing::debug!(target: "supervisor", "the {actor} actor stopped");
    }
    /// The bridge ends with this exit code (0 end of input or a signal, 1 loss of the upstream).
    fn exit(&self, code: i32);
    /// The registry of the process's children, which the bridge's child upstream joins. The
    /// default is a registry of the bridge's own, for a host that starts no child (an
    /// in-process upstream) or that has no panic hook and no watchdog to reach them.
    fn children(&self) -> Arc<ChildRegistry> {
        ChildRegistry::new()
    }
}

/// The host of actors that share their process (the embedded bridge, actor tests): a debug
/// line per shutdown step and the exit code to the actix `System`; no watchdog, which only a
/// process of its own may have (the application's host starts one).
pub struct InProcessHost;

impl Host for InProcessHost {
    fn step(&self, step: &'static str) {
        tracing::debug!(target: "supervisor", "shutdown step: {step}");
    }
    fn start_watchdog(&self, _after: Duration) {}
    fn exit(&self, code: i32) {
        System::current().stop_with_code(code);
    }
}

/// Starts the upstream actor: given the links it sends on and its counters, it runs the actor
/// and returns the links to it. The real one starts an [`Upstream`]; a test, a fake.
pub type StartUpstream = Box<dyn FnOnce(UpstreamOut, &Arc<ActorStats>) -> UpstreamLinks>;

/// The SignIn actor of a URL upstream with sign-in as the cascade drives it, and the
/// Frontend's side of it: the application starts it ([`StartSignIn`]; feature `auth`), so the
/// Supervisor needs no feature of the build.
pub trait SignInHandle {
    /// Ends a sign-in that waits for its redirect (the first shutdown step): its request fails
    /// with `sign_in_cancelled`, its receiver's port is released, and no new sign-in starts.
    fn abort_sign_in(&self);
    /// Stops the actor (after the upstream's close); resolves when it handled the stop.
    fn stop_actor(&self) -> LocalBoxFuture<'static, ()>;
    /// What the Frontend sends the actor (`notifications/initialized`) and reads of it (when
    /// sign-ins run).
    fn editor_side(&self) -> SignInSide;
}

/// Starts the SignIn actor before the Upstream, when the configuration has a sign-in (its
/// transport asks the actor for every token, so the configuration changes): given the link on
/// which the actor reports its end and its counters. `None`: no sign-in.
pub type StartSignIn = Box<
    dyn FnOnce(
        &mut BridgeConfig,
        &Link<ActorEnded>,
        &Arc<ActorStats>,
    ) -> Option<Rc<dyn SignInHandle>>,
>;

/// What a bridge runs with besides its configuration.
pub struct SupervisorParts {
    /// The editor's frames (stdin); its end is the end of the input.
    pub input: LocalBoxStream<'static, Frame>,
    /// The writer toward the editor (stdout).
    pub output: Writer,
    /// The counters of the writers, for the metrics line.
    pub queues: Vec<Arc<QueueStats>>,
    /// Starts the upstream actor.
    pub upstream: StartUpstream,
    /// Resolves with the signal that stops the bridge (never, in a test).
    pub signal: Pin<Box<dyn Future<Output = StopSignal>>>,
    /// The process.
    pub host: Rc<dyn Host>,
    /// Starts the SignIn actor (the application's, with the feature `auth`; `None`: no
    /// sign-in ever).
    pub sign_in: Option<StartSignIn>,
    /// The rate limits of this bridge's warnings (the Frontend's, the Upstream's and the
    /// Listener's); the Supervisor writes their summaries at its end.
    pub limits: Arc<BridgeLimits>,
}

/// The Listener before it runs: its context (its address is already in the Frontend's links)
/// and what it will send on.
struct ListenerSeat {
    ctx: Box<Context<Listener>>,
    out: ListenerOut,
}

/// The Supervisor actor.
pub struct Supervisor {
    config: Arc<BridgeConfig>,
    /// The rate limits of this bridge's warnings, flushed at its end.
    limits: Arc<BridgeLimits>,
    host: Rc<dyn Host>,
    output: Option<Writer>,
    frontend: FrontendLinks,
    upstream: UpstreamLinks,
    listener: ListenerLinks,
    listener_seat: Option<ListenerSeat>,
    /// The SignIn actor of a URL upstream with sign-in.
    sign_in: Option<Rc<dyn SignInHandle>>,
    pending_stop: Link<pending::StopPending>,
    totals: Link<WriteTotals>,
    /// The actors that run (each reports its end with [`ActorEnded`]).
    running: BTreeSet<ActorKind>,
    stopping: bool,
    /// The exit code, once the last shutdown step is done.
    exit_code: Option<i32>,
    exited: bool,
}

impl Actor for Supervisor {
    type Context = Context<Self>;
}

crate::counted_handlers!(Supervisor: Shutdown, UpstreamGone, StartListener, ActorEnded);

/// Starts the actors inside the current actix `System` on the editor frames of `input` (its
/// end is the end of input) and the writer `output` toward the editor (its queue counted as
/// `editor_queue`), with the real [`Upstream`] (its transport from `config.upstream`). The
/// cascade ends by stopping the System with the exit code. No signal handlers, no watchdog
/// ([`InProcessHost`]).
pub fn start_on<S>(config: BridgeConfig, input: S, output: Writer) -> Addr<Supervisor>
where
    S: futures_util::Stream<Item = Frame> + 'static,
{
    start_with(
        config,
        Box::pin(input),
        output,
        Box::pin(std::future::pending()),
        Rc::new(InProcessHost),
        None,
    )
}

/// Starts the actors with the real [`Upstream`] on `input` and `output`, stopped by `signal`
/// (the signal that ends the bridge), with `host` around them and the SignIn actor
/// that `sign_in` starts.
pub fn start_with(
    config: BridgeConfig,
    input: LocalBoxStream<'static, Frame>,
    output: Writer,
    signal: Pin<Box<dyn Future<Output = StopSignal>>>,
    host: Rc<dyn Host>,
    sign_in: Option<StartSignIn>,
) -> Addr<Supervisor> {
    let editor_queue = output.stats().clone();
    let upstream_queue = QueueStats::new("upstream_queue");
    let max_line_bytes = config.max_line_bytes;
    let open_upstream = config.open_upstream;
    let editor = output.clone();
    let queue = upstream_queue.clone();
    let children = host.children();
    let limits = BridgeLimits::new();
    let upstream_limits = limits.clone();
    let upstream: StartUpstream = Box::new(move |out, stats| {
        let upstream = Upstream::new(max_line_bytes, stats.clone(), editor, queue, out)
            .opening_with(open_upstream)
            .joining(children)
            .limited_by(upstream_limits);
        // Called inside the bridge's span (Supervisor::run).
        let addr = run_in(Context::new(), upstream, &tracing::Span::current());
        UpstreamLinks::new(&addr, stats)
    });
    Supervisor::run(
        config,
        SupervisorParts {
            input,
            output,
            queues: vec![editor_queue, upstream_queue],
            upstream,
            signal,
            host,
            sign_in,
            limits,
        },
    )
}

impl Supervisor {
    /// Wires and runs every actor of one bridge (see the module doc); the Listener waits for
    /// [`StartListener`].
    pub fn run(mut config: BridgeConfig, parts: SupervisorParts) -> Addr<Supervisor> {
        let fe_stats = ActorStats::new(ActorKind::Frontend.name());
        let up_stats = ActorStats::new(ActorKind::Upstream.name());
        let li_stats = ActorStats::new(ActorKind::Listener.name());
        let pe_stats = ActorStats::new(ActorKind::Pending.name());
        let su_stats = ActorStats::new(ActorKind::Supervisor.name());
        let me_stats = ActorStats::new(ActorKind::Metrics.name());

        // The starters of the Upstream and the SignIn actor run inside the span too.
        let span = crate::log::member_span(config.member.as_deref());
        let _entered = span.enter();
        let mut su_ctx: Context<Supervisor> = Context::new();
        let mut fe_ctx: Context<Frontend> = Context::new();
        let li_ctx: Context<Listener> = Context::new();
        let pe_ctx: Context<PendingTable> = Context::new();
        let me_ctx: Context<Metrics> = Context::new();

        let me = su_ctx.address();
        let ended: Link<ActorEnded> = Link::new(&me, &su_stats);
        // Before the Upstream: its transport asks the SignIn actor for every token.
        let si_stats = ActorStats::new(ActorKind::SignIn.name());
        let sign_in = parts
            .sign_in
            .and_then(|start| start(&mut config, &ended, &si_stats));
        let config = Arc::new(config);
        let frontend = FrontendLinks::new(&fe_ctx.address(), &fe_stats);
        let listener = ListenerLinks::new(&li_ctx.address(), &li_stats);
        let pending = PendingLinks::new(&pe_ctx.address(), &pe_stats);
        let pe_addr = pe_ctx.address();
        let me_addr = me_ctx.address();

        let upstream = (parts.upstream)(
            UpstreamOut {
                frontend: frontend.from_upstream.clone(),
                gone: Link::new(&me, &su_stats),
                ended: ended.clone(),
            },
            &up_stats,
        );
        run_in(
            pe_ctx,
            PendingTable::new(parts.output.clone(), ended.clone()),
            &span,
        );
        let mut counted = vec![
            fe_stats.clone(),
            up_stats,
            li_stats,
            pe_stats.clone(),
            su_stats.clone(),
            me_stats.clone(),
        ];
        if sign_in.is_some() {
            counted.push(si_stats);
        }
        let mut running: BTreeSet<ActorKind> = [
            ActorKind::Frontend,
            ActorKind::Upstream,
            ActorKind::Pending,
            ActorKind::Metrics,
        ]
        .into();
        if sign_in.is_some() {
            running.insert(ActorKind::SignIn);
        }
        run_in(
            me_ctx,
            Metrics::new(
                counted,
                parts.queues,
                ended.clone(),
                config.metrics_interval,
            )
            .in_gateway(config.member.is_some()),
            &span,
        );
        fe_ctx.add_stream(parts.input);
        let frontend_actor = Frontend::new(
            config.clone(),
            fe_stats,
            FrontendOut {
                output: parts.output.clone(),
                upstream: upstream.clone(),
                pending,
                listener: listener.clone(),
                supervisor: SupervisorLinks {
                    shutdown: Link::new(&me, &su_stats),
                    start_listener: Link::new(&me, &su_stats),
                    ended: ended.clone(),
                },
                metrics: Link::new(&me_addr, &me_stats),
                sign_in: sign_in.as_ref().map(|s| s.editor_side()),
                limits: parts.limits.clone(),
            },
        );
        run_in(fe_ctx, frontend_actor, &span);
        let seat = ListenerSeat {
            ctx: Box::new(li_ctx),
            out: ListenerOut {
                gate: frontend.gate.clone(),
                answer: frontend.change_answer.clone(),
                listen: upstream.listen.clone(),
                cancel: upstream.cancel.clone(),
                output: parts.output.clone(),
                ended,
            },
        };
        let supervisor = Supervisor {
            config,
            limits: parts.limits,
            host: parts.host,
            output: Some(parts.output),
            frontend,
            upstream,
            listener,
            listener_seat: Some(seat),
            sign_in,
            pending_stop: Link::new(&pe_addr, &pe_stats),
            totals: Link::new(&me_addr, &me_stats),
            running,
            stopping: false,
            exit_code: None,
            exited: false,
        };
        su_ctx.spawn(parts.signal.into_actor(&supervisor).map(|signal, act, ctx| {
            tracing::info!(target: "supervisor", "received {signal}: stopping as at the end of the input");
            act.shutdown(ShutdownCause::Signal(signal), ctx);
        }));
        run_in(su_ctx, supervisor, &span)
    }

    /// The cascade (see `docs/architecture.md`): every step is a message, awaited before the
    /// next. The first cause counts.
    fn shutdown(&mut self, cause: ShutdownCause, ctx: &mut Context<Self>) {
        if self.stopping {
            return;
        }
        self.stopping = true;
        let host = self.host.clone();
        let code = match cause {
            ShutdownCause::EndOfInput | ShutdownCause::Signal(_) | ShutdownCause::OutputClosed => {
                host.step("watchdog");
                host.start_watchdog(watchdog_after(self.config.shutdown_grace));
                0
            }
            ShutdownCause::UpstreamLost => 1,
        };
        let signal = match cause {
            ShutdownCause::Signal(signal) => Some(signal),
            _ => None,
        };
        let stop_cause = match cause {
            ShutdownCause::UpstreamLost => StopCause::UpstreamGone,
            _ => StopCause::EndOfInput,
        };
        // A Listener that never ran goes with its context (and what waited in its mailbox).
        let listener = match self.listener_seat.take() {
            Some(_) => None,
            None => Some(self.listener.stop.clone()),
        };
        let sign_in = self.sign_in.clone();
        let frontend = self.frontend.clone();
        let pending = self.pending_stop.clone();
        let output = self.output.take();
        let upstream = self.upstream.close.clone();
        let totals = self.totals.clone();
        let limits = self.limits.clone();
        let grace = self.config.shutdown_grace;
        ctx.spawn(
            async move {
                // A sign-in that waits for its redirect ends first (it may wait up to
                // `--sign-in-timeout`): its request fails with `sign_in_cancelled`, its
                // receiver's port is released, and no new sign-in starts; the current token
                // still serves the upstream's close.
                if let Some(s) = &sign_in {
                    host.step("sign-in: abort");
                    s.abort_sign_in();
                }
                host.step("frontend: quiesce");
                let _ = frontend.quiesce.send(Quiesce { signal }).await;
                if let Some(l) = listener {
                    host.step("listener: stop");
                    let _ = l.send(listener::StopListener(stop_cause)).await;
                }
                host.step("pending: stop");
                let _ = pending.send(pending::StopPending).await;
                host.step("frontend: finish");
                // Unknown (the Frontend is gone): the totals are written, as they always were.
                let ran = frontend.finish.send(Finish).await.unwrap_or(true);
                if let Some(o) = &output {
                    host.step("output: close");
                    o.close();
                    let drain = o.drain(CLOSE_DRAIN_IDLE, CLOSE_DRAIN_MAX).await;
                    let (frames, bytes) = o.queued();
                    match drain {
                        Drain::Done => {}
                        Drain::Stalled => tracing::warn!(target: "supervisor",
                            "the editor read nothing for {} s: {frames} frames ({bytes} bytes) queued toward it were not written",
                            CLOSE_DRAIN_IDLE.as_secs()),
                        Drain::Capped => tracing::warn!(target: "supervisor",
                            "the editor still read after {} s, the longest the bridge writes at its end: {frames} frames ({bytes} bytes) queued toward it were not written",
                            CLOSE_DRAIN_MAX.as_secs()),
                    }
                }
                host.step("upstream: close");
                if let Ok(Some(status)) = upstream.send(Close { grace }).await {
                    tracing::info!(target: "supervisor", "the upstream server stopped ({status})");
                }
                if let Some(s) = &sign_in {
                    host.step("sign-in: stop");
                    s.stop_actor().await;
                }
                // The summaries of this bridge's rate-limited warnings come before the totals.
                limits.flush();
                host.step("metrics: totals");
                let _ = totals.send(WriteTotals { ran }).await;
            }
            .into_actor(self)
            .map(move |(), act, ctx| {
                act.exit_code = Some(code);
                act.exit_when_all_ended(ctx);
                ctx.run_later(END_REPORT_WAIT, |act, ctx| {
                    if !act.exited {
                        let names: BTreeSet<&str> = act.running.iter().map(|a| a.name()).collect();
                        tracing::debug!(target: "supervisor", "still running at the exit: {names:?}");
                        act.exit(ctx);
                    }
                });
            }),
        );
    }

    /// Exits once the cascade is done and every actor reported its end.
    fn exit_when_all_ended(&mut self, ctx: &mut Context<Self>) {
        if self.exit_code.is_some() && self.running.is_empty() && !self.exited {
            self.exit(ctx);
        }
    }

    /// Tells the host, then stops: a host whose process goes on (a session of the HTTP
    /// server) keeps no Supervisor (its signal future would keep it alive).
    fn exit(&mut self, ctx: &mut Context<Self>) {
        self.exited = true;
        self.host.exit(self.exit_code.unwrap_or(1));
        ctx.stop();
    }
}

impl Handler<Shutdown> for Supervisor {
    type Result = ();
    fn handle(&mut self, Shutdown(cause): Shutdown, ctx: &mut Context<Self>) {
        if cause == ShutdownCause::OutputClosed && !self.stopping {
            tracing::warn!(target: "supervisor", "the editor closed its end of stdout: stopping as at the end of the input");
        }
        self.shutdown(cause, ctx);
    }
}

impl Handler<UpstreamGone> for Supervisor {
    type Result = ();
    fn handle(&mut self, UpstreamGone { cause }: UpstreamGone, ctx: &mut Context<Self>) {
        if self.stopping {
            tracing::debug!(target: "supervisor", "the upstream server ended during the shutdown ({cause})");
            return;
        }
        // The Frontend answers its slots and says whether the bridge was ready.
        let ask = self.frontend.upstream_lost.send(UpstreamLost { cause });
        ctx.spawn(
            async move { ask.await.unwrap_or(false) }
                .into_actor(self)
                .map(|ready, act, ctx| {
                    if ready {
                        act.shutdown(ShutdownCause::UpstreamLost, ctx);
                    }
                }),
        );
    }
}

impl Handler<StartListener> for Supervisor {
    type Result = ();
    fn handle(&mut self, m: StartListener, _: &mut Context<Self>) {
        if self.stopping {
            return;
        }
        if let Some(seat) = self.listener_seat.take() {
            let listener = Listener::new(
                self.config.listen,
                m.declared,
                m.meta,
                seat.out,
                self.limits.clone(),
            );
            // The Supervisor runs inside its bridge's span (if it has one).
            run_in(*seat.ctx, listener, &tracing::Span::current());
            self.running.insert(ActorKind::Listener);
        }
    }
}

impl Handler<ActorEnded> for Supervisor {
    type Result = ();
    fn handle(&mut self, ActorEnded(actor): ActorEnded, ctx: &mut Context<Self>) {
        self.host.ended(actor);
        self.running.remove(&actor);
        self.exit_when_all_ended(ctx);
    }
}
