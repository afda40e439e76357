//! The server's name on the log lines of a bridge that is one server of a gateway
//! (`mcp-bridge --config FILE`): every bridge of a gateway logs on the same thread, so each of
//! its actors runs inside a `tracing` span that names its server (`crate::log::member_span`), and
//! `crate::log::LineFormat` writes the name after the level
//! (`mcp-bridge: upstream: warn: github: ...`). The only bridge of a process runs its actors
//! without a span: nothing is added to their polls.

use actix::prelude::*;
use tracing::Instrument;

/// Runs `actor` in `ctx` (as `Context::run` does), inside `span` when it is one: every poll
/// of the actor, and of the futures it spawns in its context, logs under the span.
pub fn run_in<A>(ctx: Context<A>, actor: A, span: &tracing::Span) -> Addr<A>
where
    A: Actor<Context = Context<A>>,
{
    if span.is_none() {
        return ctx.run(actor);
    }
    let running = ctx.into_future(actor);
    let addr = running.address();
    actix::spawn(running.instrument(span.clone()));
    addr
}
