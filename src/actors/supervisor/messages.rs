//! The messages the Supervisor handles. Every actor sends some of them, and the Supervisor
//! imports every actor to start it, so they live in this file, which imports no actor.

use actix::prelude::*;

use crate::protocol::listen::Declared;
use crate::protocol::revisions::modern::RequestMeta;
use crate::transport::upstream::EndCause;

/// Why the bridge stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShutdownCause {
    /// stdin ended: exit 0, with the watchdog.
    EndOfInput,
    /// SIGTERM, SIGINT or SIGHUP: the steps of the end of input, exit 0.
    Signal(StopSignal),
    /// Nobody reads the bridge's stdout any more (the editor closed its reading end): no
    /// answer can be delivered, so the steps of the end of input run at once (one warn
    /// line), exit 0.
    OutputClosed,
    /// The upstream was lost while the bridge was ready: exit 1.
    UpstreamLost,
}

/// A signal that stops the bridge with the steps of the end of input: the three that ask a
/// process to end (POSIX `<signal.h>`: termination, the terminal's interrupt, its hangup).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopSignal {
    /// SIGTERM.
    Term,
    /// SIGINT.
    Int,
    /// SIGHUP.
    Hup,
}

impl StopSignal {
    /// Its name in the log and in the `data.detail` of `closed` (`SIGTERM`).
    pub fn name(self) -> &'static str {
        match self {
            StopSignal::Term => "SIGTERM",
            StopSignal::Int => "SIGINT",
            StopSignal::Hup => "SIGHUP",
        }
    }

    /// Its number, for the exit status `128 + number` of a process that it ended.
    pub fn number(self) -> i32 {
        match self {
            StopSignal::Term => libc::SIGTERM,
            StopSignal::Int => libc::SIGINT,
            StopSignal::Hup => libc::SIGHUP,
        }
    }
}

impl std::fmt::Display for StopSignal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Start the shutdown cascade (the Frontend at the end of stdin; the Supervisor's own signal
/// task). The first one counts.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct Shutdown(pub ShutdownCause);

/// The upstream ended (its child closed its stdout or exited, the in-process server stopped,
/// the HTTP session ended); `cause` says how, with the last lines of a child's stderr. The
/// Supervisor asks the Frontend whether the bridge was ready: then the cascade runs with
/// [`ShutdownCause::UpstreamLost`]; before that the bridge keeps serving (a later
/// `initialize` starts a new child).
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct UpstreamGone {
    /// How the upstream ended (its text is the log's: `exit code 3`).
    pub cause: EndCause,
}

/// The Frontend asks for the Listener (after `notifications/initialized`, when the
/// `initialize` result declared a list change or `resources.subscribe`). Its address was
/// taken before it ran, so what the Frontend sent it meanwhile waits in its mailbox.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct StartListener {
    /// What the editor was told.
    pub declared: Declared,
    /// The `_meta` of every listen request.
    pub meta: RequestMeta,
}

/// The actors of one bridge, one variant per kind: each reports its end to the Supervisor,
/// and each has counters under its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ActorKind {
    /// The Supervisor itself, which reports its end to nobody: only its counters.
    Supervisor,
    Frontend,
    Upstream,
    Listener,
    Pending,
    Metrics,
    /// The SignIn actor of a URL upstream with sign-in.
    SignIn,
}

impl ActorKind {
    /// The name of the actor in the log (`the sign-in actor stopped`) and in its counters.
    pub fn name(self) -> &'static str {
        match self {
            ActorKind::Supervisor => "supervisor",
            ActorKind::Frontend => "frontend",
            ActorKind::Upstream => "upstream",
            ActorKind::Listener => "listener",
            ActorKind::Pending => "pending",
            ActorKind::Metrics => "metrics",
            ActorKind::SignIn => "sign-in",
        }
    }
}

impl std::fmt::Display for ActorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An actor stopped (its `stopped` hook): which one.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct ActorEnded(pub ActorKind);
