//! The messages the Supervisor handles. Every actor sends some of them, and the Supervisor
//! imports every actor to start it, so they live in this file, which imports no actor.

use actix::prelude::*;

use crate::protocol::listen::Declared;
use crate::protocol::revisions::modern::RequestMeta;

/// Why the bridge stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShutdownCause {
    /// stdin ended: exit 0, with the watchdog.
    EndOfInput,
    /// SIGTERM, SIGINT or SIGHUP (named): the steps of the end of input, exit 0.
    Signal(&'static str),
    /// Nobody reads the bridge's stdout any more (the editor closed its reading end): no
    /// answer can be delivered, so the steps of the end of input run at once (one warn
    /// line), exit 0.
    OutputClosed,
    /// The upstream was lost while the bridge was ready: exit 1.
    UpstreamLost,
}

/// Start the shutdown cascade (the Frontend at the end of stdin; the Supervisor's own signal
/// task). The first one counts.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct Shutdown(pub ShutdownCause);

/// The upstream ended (its child closed its stdout or exited); `status` is how it ended,
/// `stderr_tail` the last lines of a child's stderr, quoted (empty for other upstreams). The
/// Supervisor asks the Frontend whether the bridge was ready: then the cascade runs with
/// [`ShutdownCause::UpstreamLost`]; before that the bridge keeps serving (a later
/// `initialize` starts a new child).
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct UpstreamGone {
    pub status: String,
    pub stderr_tail: Vec<String>,
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

/// An actor stopped (its `stopped` hook), by name: `frontend`, `upstream`, `listener`,
/// `pending`, `metrics`.
#[derive(Message, Debug)]
#[rtype(result = "()")]
pub struct ActorEnded(pub &'static str);
