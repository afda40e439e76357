//! The transport's life: [`Connect`] opens it, its close and its end are reported (every
//! request in flight gets [`UpstreamReply::Closed`], the Supervisor hears the cause), and
//! [`Disconnect`] and [`Close`] stop it.

use actix::prelude::*;
use futures_util::StreamExt;
use std::time::Duration;

use super::reply::UpstreamReply;
use super::{Conn, TransportItem, Upstream};
use crate::actors::supervisor::messages::UpstreamGone;
use crate::transport::open::UpstreamSpec;
use crate::transport::program::SpawnError;
use crate::transport::upstream::{EndCause, OpenOptions};

impl Upstream {
    fn fail_all_pending(&mut self) {
        self.listens.clear();
        for (id, p) in self.pending.drain() {
            tracing::debug!(target: "upstream", "id={id} client={} method={} outcome=closed time_ms={:.3}",
                p.client, p.method, p.started.elapsed().as_secs_f64() * 1e3);
            let _ = p.tx.send(UpstreamReply::Closed);
        }
    }

    /// The transport carries no more frames: every request still in flight gets
    /// [`UpstreamReply::Closed`]; the Frontend hears of it with the cause
    /// ([`TransportEvent::Ended`](crate::transport::upstream::TransportEvent::Ended)).
    ///
    /// The replies go after every task that is ready now has run: an answer read just before
    /// the end woke its slot, and that slot writes it before the slots of the requests the
    /// upstream never answered write their `upstream_exited` (the editor gets them in the
    /// upstream's order; a slot woken in the same turn would otherwise be polled in spawn
    /// order, and an older request's error would overtake a newer answer).
    pub(super) fn on_closed(&mut self, generation: u64, ctx: &mut Context<Self>) {
        if self.conn.take().is_none() {
            return;
        }
        self.ending = Some(generation);
        ctx.spawn(
            tokio::task::yield_now()
                .into_actor(self)
                .map(|(), act, _| act.fail_all_pending()),
        );
    }

    pub(super) fn on_ended(&mut self, generation: u64, cause: EndCause) {
        if self.ending != Some(generation) {
            return;
        }
        self.ending = None;
        self.out.gone.do_send(UpstreamGone { cause });
    }
}

/// Open the transport to the upstream (for a child: start the command). Errors with the
/// `spawn_failed` detail: the program and why it cannot start (never an argument or an
/// environment value).
#[derive(Message)]
#[rtype(result = "Result<(), SpawnError>")]
pub struct Connect(pub UpstreamSpec);

impl Handler<Connect> for Upstream {
    type Result = Result<(), SpawnError>;
    fn handle(
        &mut self,
        Connect(spec): Connect,
        ctx: &mut Context<Self>,
    ) -> Result<(), SpawnError> {
        if self.conn.is_some() {
            return Ok(());
        }
        let opened = (self.open)(
            &spec,
            OpenOptions {
                max_line_bytes: self.max_line_bytes,
                pace: self.editor.clone(),
                queue_stats: self.queue_stats.clone(),
                children: self.children.clone(),
            },
        )?;
        self.generation += 1;
        self.passthrough = false;
        self.unanswered.clear();
        let generation = self.generation;
        ctx.add_stream(opened.events.map(move |e| TransportItem(generation, e)));
        self.conn = Some(Conn {
            generation,
            transport: opened.transport,
        });
        Ok(())
    }
}

/// Stop the transport at once (a failed discover): for a child, kill its group, fail what is
/// pending, then stop every other descendant that was handed to the bridge (one that left the
/// group with `setsid`). The actor handles no other message until this is done, so the sweep
/// can never meet the child of a later `Connect`.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Disconnect;

impl Handler<Disconnect> for Upstream {
    type Result = AtomicResponse<Self, ()>;
    fn handle(&mut self, _: Disconnect, _: &mut Context<Self>) -> Self::Result {
        let conn = self.conn.take();
        self.fail_all_pending();
        AtomicResponse::new(Box::pin(
            async move {
                if let Some(c) = conn {
                    c.transport.kill().await;
                }
            }
            .into_actor(self),
        ))
    }
}

/// Stop the transport with its shutdown steps, each waiting at most `grace` (a child: close
/// stdin, wait, SIGTERM, wait, SIGKILL to the group). Resolves with how it ended; then the
/// actor stops (the last shutdown step of the Upstream). `None` when no transport was open.
#[derive(Message)]
#[rtype(result = "Option<EndCause>")]
pub struct Close {
    pub grace: Duration,
}

impl Handler<Close> for Upstream {
    type Result = ResponseActFuture<Self, Option<EndCause>>;
    fn handle(&mut self, m: Close, _: &mut Context<Self>) -> Self::Result {
        let conn = self.conn.take();
        self.fail_all_pending();
        Box::pin(
            async move {
                let c = conn?;
                c.transport.close(m.grace).await
            }
            .into_actor(self)
            .map(|status, _, ctx| {
                ctx.stop();
                status
            }),
        )
    }
}
