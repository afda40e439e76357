//! An actor that stands where the Frontend would for an Upstream actor under test: it sends
//! what the Upstream tells it (`FromUpstream`, `UpstreamGone`, as `Debug` text) to a channel.
//! Shared by the `actors_memory` and `transport_seam` tests.

use actix::prelude::*;
use mcp_bridge::actors::frontend::messages::FromUpstream;
use mcp_bridge::actors::link::{ActorStats, Link};
use mcp_bridge::actors::supervisor::messages::{ActorEnded, UpstreamGone};
use mcp_bridge::actors::upstream::UpstreamOut;
use tokio::sync::mpsc;

/// Collects what the Upstream actor tells the Frontend.
pub struct Collector(mpsc::UnboundedSender<String>);

impl Actor for Collector {
    type Context = Context<Self>;
}

impl Handler<FromUpstream> for Collector {
    type Result = ();
    fn handle(&mut self, m: FromUpstream, _: &mut Context<Self>) {
        let _ = self.0.send(format!("{m:?}"));
    }
}

impl Handler<UpstreamGone> for Collector {
    type Result = ();
    fn handle(&mut self, m: UpstreamGone, _: &mut Context<Self>) {
        let _ = self.0.send(format!("{m:?}"));
    }
}

impl Handler<ActorEnded> for Collector {
    type Result = ();
    fn handle(&mut self, _: ActorEnded, _: &mut Context<Self>) {}
}

mcp_bridge::counted_handlers!(Collector: FromUpstream, UpstreamGone, ActorEnded);

/// The links of an Upstream to a Collector that sends what it gets to `tx`.
pub fn collector(tx: mpsc::UnboundedSender<String>) -> UpstreamOut {
    let collector = Collector(tx).start();
    let stats = ActorStats::new("collector");
    UpstreamOut {
        frontend: Link::new(&collector, &stats),
        gone: Link::new(&collector, &stats),
        ended: Link::new(&collector, &stats),
    }
}

/// Starts an Upstream actor (default line limit) that writes toward the editor on `editor` and
/// tells a Collector what it would tell the Frontend; the receiver of what the Collector got.
pub fn start_upstream(
    editor: mcp_bridge::transport::writer::Writer,
) -> (
    Addr<mcp_bridge::actors::upstream::Upstream>,
    mpsc::UnboundedReceiver<String>,
) {
    use mcp_bridge::transport::queue::QueueStats;
    let (tx, rx) = mpsc::unbounded_channel();
    let upstream = mcp_bridge::actors::upstream::Upstream::new(
        mcp_bridge::protocol::wire::framing::DEFAULT_MAX_LINE_BYTES,
        ActorStats::new("upstream"),
        editor,
        QueueStats::new("upstream_queue"),
        collector(tx),
    )
    .start();
    (upstream, rx)
}
