//! Counted links between actors. A [`Link<M>`] is a `Recipient` of one message type plus the
//! counters of the actor behind it ([`ActorStats`]): a send counts one message into the
//! mailbox depth, and the message carries a [`Ticket`] that counts it out again when the actor
//! handles it (then also `handled` and the time of the handling) or when it is dropped
//! unhandled (a stopped actor). So the depth is exact, with no count by hand before a send.
//!
//! The receiving actor handles [`Counted<M>`] by handling `M`: [`counted_handlers!`](crate::counted_handlers) writes
//! those impls. Stream items (the frames of stdin and of the child's stdout) never pass a
//! mailbox; their handlers count them with [`ActorStats::stream_item`].

use actix::dev::ToEnvelope;
use actix::prelude::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Instant;

/// Counters of one actor, shared with the Metrics actor (atomics: no message needed to read).
#[derive(Debug)]
pub struct ActorStats {
    /// The actor's name in the log.
    pub name: &'static str,
    handled: AtomicU64,
    depth: AtomicI64,
    max_depth: AtomicI64,
    slowest_us: AtomicU64,
}

impl ActorStats {
    /// New counters for the actor `name`.
    pub fn new(name: &'static str) -> Arc<ActorStats> {
        Arc::new(ActorStats {
            name,
            handled: AtomicU64::new(0),
            depth: AtomicI64::new(0),
            max_depth: AtomicI64::new(0),
            slowest_us: AtomicU64::new(0),
        })
    }

    /// A message entered the mailbox: the ticket that counts it out again.
    fn enter(self: &Arc<Self>) -> Ticket {
        let d = self.depth.fetch_add(1, Ordering::Relaxed) + 1;
        self.max_depth.fetch_max(d, Ordering::Relaxed);
        Ticket {
            stats: Some(self.clone()),
        }
    }

    /// The actor handles an item of a stream (no mailbox): the returned guard counts it as
    /// handled and records the time on drop.
    pub fn stream_item(self: &Arc<Self>) -> Handling {
        Handling {
            stats: self.clone(),
            started: Instant::now(),
        }
    }

    /// Messages in the mailbox now.
    #[cfg(test)]
    pub fn depth(&self) -> i64 {
        self.depth.load(Ordering::Relaxed)
    }

    /// Messages handled so far (mailbox and stream items).
    #[cfg(test)]
    pub fn handled(&self) -> u64 {
        self.handled.load(Ordering::Relaxed)
    }

    /// The part of the metrics line:
    /// `name: handled=N mailbox=N max_mailbox=N slowest_us=N`.
    pub fn line(&self) -> String {
        format!(
            "{}: handled={} mailbox={} max_mailbox={} slowest_us={}",
            self.name,
            self.handled.load(Ordering::Relaxed),
            self.depth.load(Ordering::Relaxed),
            self.max_depth.load(Ordering::Relaxed),
            self.slowest_us.load(Ordering::Relaxed)
        )
    }
}

/// Records one handled message of an actor when dropped.
#[derive(Debug)]
pub struct Handling {
    stats: Arc<ActorStats>,
    started: Instant,
}

impl Drop for Handling {
    fn drop(&mut self) {
        let us = self.started.elapsed().as_micros() as u64;
        self.stats.handled.fetch_add(1, Ordering::Relaxed);
        self.stats.slowest_us.fetch_max(us, Ordering::Relaxed);
    }
}

/// One message in a mailbox: leaves the depth when handled ([`Ticket::handling`]) or dropped.
#[derive(Debug)]
pub struct Ticket {
    stats: Option<Arc<ActorStats>>,
}

impl Ticket {
    /// The actor starts handling the message: it leaves the mailbox; the guard records the
    /// handling.
    pub fn handling(mut self) -> Option<Handling> {
        let stats = self.stats.take()?;
        stats.depth.fetch_sub(1, Ordering::Relaxed);
        Some(Handling {
            stats,
            started: Instant::now(),
        })
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if let Some(s) = self.stats.take() {
            s.depth.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// A message sent through a [`Link`]: the message and its ticket.
pub struct Counted<M> {
    message: M,
    ticket: Ticket,
}

impl<M> Counted<M> {
    /// The message, and the guard of its handling (call at the start of the handler).
    pub fn open(self) -> (M, Option<Handling>) {
        (self.message, self.ticket.handling())
    }
}

impl<M: Message> Message for Counted<M> {
    type Result = M::Result;
}

/// A recipient of `M` with the counters of the actor behind it.
pub struct Link<M>
where
    M: Message + Send,
    M::Result: Send,
{
    to: Recipient<Counted<M>>,
    stats: Arc<ActorStats>,
}

impl<M> Clone for Link<M>
where
    M: Message + Send,
    M::Result: Send,
{
    fn clone(&self) -> Self {
        Link {
            to: self.to.clone(),
            stats: self.stats.clone(),
        }
    }
}

impl<M> Link<M>
where
    M: Message + Send + 'static,
    M::Result: Send,
{
    /// A link to the actor at `addr` (which handles `Counted<M>`, see [`counted_handlers!`](crate::counted_handlers)),
    /// counted in `stats`. The address may belong to a context that does not run yet
    /// (`Context::new`): the messages wait in its mailbox.
    pub fn new<A>(addr: &Addr<A>, stats: &Arc<ActorStats>) -> Self
    where
        A: Actor + Handler<Counted<M>>,
        A::Context: ToEnvelope<A, Counted<M>>,
    {
        Link {
            to: addr.clone().recipient(),
            stats: stats.clone(),
        }
    }

    /// Sends without waiting for the result; a message to a stopped actor is dropped.
    pub fn do_send(&self, message: M) {
        let ticket = self.stats.enter();
        self.to.do_send(Counted { message, ticket });
    }

    /// Sends and returns the future of the result (`MailboxError` when the actor stopped).
    pub fn send(&self, message: M) -> RecipientRequest<Counted<M>> {
        let ticket = self.stats.enter();
        self.to.send(Counted { message, ticket })
    }
}

/// `counted_handlers!(Actor: M1, M2, ...)`: the actor handles `Counted<Mi>` by handling `Mi`,
/// counted in the message's ticket. Exported for the actors of the tests (it names internal
/// paths), so hidden from the documentation.
#[doc(hidden)]
#[macro_export]
macro_rules! counted_handlers {
    ($actor:ty: $($m:ty),+ $(,)?) => {
        $(
            impl ::actix::Handler<$crate::actors::link::Counted<$m>> for $actor {
                type Result = <$actor as ::actix::Handler<$m>>::Result;
                fn handle(
                    &mut self,
                    counted: $crate::actors::link::Counted<$m>,
                    ctx: &mut <$actor as ::actix::Actor>::Context,
                ) -> Self::Result {
                    let (message, _handling) = counted.open();
                    <$actor as ::actix::Handler<$m>>::handle(self, message, ctx)
                }
            }
        )+
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Echo;
    impl Actor for Echo {
        type Context = Context<Self>;
    }
    #[derive(Message)]
    #[rtype(result = "u32")]
    struct Twice(u32);
    impl Handler<Twice> for Echo {
        type Result = u32;
        fn handle(&mut self, Twice(n): Twice, _: &mut Context<Self>) -> u32 {
            2 * n
        }
    }
    crate::counted_handlers!(Echo: Twice);

    #[actix::test]
    async fn a_link_counts_each_message_in_and_out_of_the_mailbox() {
        let stats = ActorStats::new("echo");
        let ctx: Context<Echo> = Context::new();
        let link = Link::<Twice>::new(&ctx.address(), &stats);
        // The actor does not run yet: the messages wait in its mailbox.
        link.do_send(Twice(1));
        let answer = link.send(Twice(21));
        assert_eq!((stats.depth(), stats.handled()), (2, 0));
        ctx.run(Echo);
        assert_eq!(answer.await.ok(), Some(42));
        assert_eq!((stats.depth(), stats.handled()), (0, 2));
        assert!(
            stats
                .line()
                .starts_with("echo: handled=2 mailbox=0 max_mailbox=2 ")
        );
    }

    #[actix::test]
    async fn a_message_dropped_unhandled_leaves_the_depth() {
        let stats = ActorStats::new("echo");
        let ctx: Context<Echo> = Context::new();
        let link = Link::<Twice>::new(&ctx.address(), &stats);
        link.do_send(Twice(1));
        assert_eq!(stats.depth(), 1);
        drop(ctx); // never ran: its mailbox goes with it
        link.do_send(Twice(2));
        assert_eq!((stats.depth(), stats.handled()), (0, 0));
    }
}
