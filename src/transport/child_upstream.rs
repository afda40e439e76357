//! The upstream as a child process on stdio (2026-07-28 basic/transports/stdio): spawned in
//! its own process group ([`child::spawn`], with the isolation of `isolation.rs` and its stderr
//! relayed), frames from its stdout, the bounded [`Writer`] on its stdin. It ends when its
//! stdout closes: what the child wrote before it exited is read to the end, for as long as the
//! editor takes to read it (a pipe outlives its writer); only a pipe that stays empty and open
//! after the exit (a grandchild holds it) ends after [`EXIT_EOF_WAIT`] of waiting.

use futures_util::StreamExt;
use futures_util::future::LocalBoxFuture;
use serde_json::Value;
use std::ffi::OsString;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, ReadBuf};
use tokio::time::Sleep;

use super::child::{self, ChildEnv, ChildProcess};
use super::child_status::ChildStatus;
use super::program::{self, SpawnError};
use super::queue::{Delivery, OutFrame, Sent, UPSTREAM_QUEUE};
use super::upstream::{Abandoned, EndCause, OpenOptions, Opened, Transport, TransportEvent};
use super::writer::Writer;
use super::{isolation, lines};
use crate::protocol::wire::framing::FrameCodec;
use crate::protocol::wire::id::Id;

/// How long the bridge waits for the exit status of a child that closed its stdout, before it
/// kills the child's group and says so (`it closed its stdout and was still running 500 ms
/// later: ...`); a failed `initialize` waits that long for its detail. The wait does not end
/// as soon as the child is seen alive: a server often closes its stdout a while before it
/// exits (an interpreter's shutdown closes `sys.stdout`, then runs its exit handlers), and its
/// exit code is the cause the user can act on (`sh -c 'exec >&-; sleep 0.2; exit 3'` is
/// reported as `exit code 3`, 0.2 s after the end of its output). A child that exits at once
/// is reported at once; only one that keeps running costs the whole wait.
pub const EXIT_STATUS_WAIT: Duration = Duration::from_millis(500);
/// After the child exits, how long the reader of its stdout waits for the end of a pipe that
/// is empty but still open (a grandchild inherited it) before the upstream counts as lost.
/// Only that wait counts: while the reader is paused by a full queue toward the editor, or
/// reads what the child wrote before it exited, the time is not used up.
pub const EXIT_EOF_WAIT: Duration = Duration::from_millis(100);

/// The child, taken by whoever ends it first: the end of its events (wait for the status,
/// then SIGKILL to the group), [`Transport::close`] or [`Transport::kill`].
type Shared = Arc<Mutex<Option<ChildProcess>>>;

fn take(child: &Shared) -> Option<ChildProcess> {
    child.lock().ok().and_then(|mut c| c.take())
}

/// The handle of a child upstream.
pub struct Child {
    /// The writer of the child's stdin (its queue: [`UPSTREAM_QUEUE`]).
    stdin: Writer,
    child: Shared,
}

/// Spawns `command args` (see [`super::open::open`]).
pub fn open(
    command: &OsString,
    args: &[OsString],
    env: &ChildEnv,
    options: OpenOptions,
) -> Result<Opened, SpawnError> {
    let (proc_, io) = child::spawn(command, args, env, &options.children)
        .map_err(|e| program::spawn_error(command, env.path_var().as_deref(), e))?;
    tracing::debug!(target: "upstream", "started the upstream command (pid {})", proc_.pgid());
    let stdin = child::stdin_pipe(io.stdin).map_err(SpawnError::Stdin)?;
    let stdin = Writer::for_pipe(stdin, UPSTREAM_QUEUE, options.queue_stats);
    let mut exit = proc_.exit_watch();
    let exited = async move {
        while exit.borrow_and_update().is_none() {
            if exit.changed().await.is_err() {
                break;
            }
        }
    };
    let child: Shared = Arc::new(Mutex::new(Some(proc_)));
    let end = child.clone();
    let stdout = UntilEof::new(io.stdout, Box::pin(exited), EXIT_EOF_WAIT);
    let events = lines::frames(
        stdout,
        FrameCodec::new(options.max_line_bytes),
        Some(options.pace),
    )
    .map(TransportEvent::Frame)
    .chain(futures_util::stream::once(async { TransportEvent::Closed }))
    .chain(futures_util::stream::once(async move {
        let (status, stderr_tail) = status_after_loss(take(&end)).await;
        TransportEvent::Ended(EndCause::ChildExited {
            status,
            stderr_tail,
        })
    }));
    Ok(Opened {
        transport: Box::new(Child { stdin, child }),
        events: events.boxed_local(),
    })
}

/// The child's stdout, read to its end; once the child has exited, a read that finds the pipe
/// empty but open waits at most `wait` in all (a descendant that inherited the pipe may keep
/// it open for ever), then reads as the end. Only those waits count: a reader paused by the
/// queue toward the editor does not read, so its pause uses up nothing.
struct UntilEof<R> {
    inner: R,
    /// Resolves when the child has exited; `None` once it has.
    exited: Option<LocalBoxFuture<'static, ()>>,
    /// What is left of the wait for the end after the exit.
    left: Duration,
    /// The wait under way: since when, and its timer (at the end of `left`).
    waiting: Option<(Instant, Pin<Box<Sleep>>)>,
    /// The wait ran out: every read is the end.
    ended: bool,
}

impl<R> UntilEof<R> {
    fn new(inner: R, exited: LocalBoxFuture<'static, ()>, wait: Duration) -> Self {
        UntilEof {
            inner,
            exited: Some(exited),
            left: wait,
            waiting: None,
            ended: false,
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for UntilEof<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = &mut *self;
        if me.ended {
            return Poll::Ready(Ok(()));
        }
        if let Poll::Ready(read) = Pin::new(&mut me.inner).poll_read(cx, buf) {
            if let Some((since, _)) = me.waiting.take() {
                me.left = me.left.saturating_sub(since.elapsed());
            }
            return Poll::Ready(read);
        }
        if let Some(exited) = &mut me.exited {
            if exited.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            me.exited = None;
        }
        let left = me.left;
        let (_, timer) = me
            .waiting
            .get_or_insert_with(|| (Instant::now(), Box::pin(tokio::time::sleep(left))));
        if timer.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        tracing::debug!(target: "upstream", "the upstream exited and its stdout stayed open and empty for {} ms (a process it started holds it): end of its output",
            EXIT_EOF_WAIT.as_millis());
        me.ended = true;
        Poll::Ready(Ok(()))
    }
}

/// How a lost child ended: its status within [`EXIT_STATUS_WAIT`] (`exit code N`,
/// `signal N`), then SIGKILL to its group in any case. A child still running then closed its
/// stdout without exiting, and the kill is the bridge's own: that is what the log says, never
/// `signal 9` as if something else had killed it.
/// With it, the last lines of its stderr (after the kill: the end of its stderr comes then at
/// the latest, unless a process outside its group holds the pipe).
async fn status_after_loss(child: Option<ChildProcess>) -> (ChildStatus, Vec<String>) {
    let Some(mut c) = child else {
        return (ChildStatus::Unknown, Vec::new());
    };
    let status = c.wait_for(EXIT_STATUS_WAIT).await;
    let tail = c.take_stderr_tail();
    // The kill first: a child still running would hold its stderr open.
    c.kill().await;
    let stderr_tail = match tail {
        Some(tail) => tail.quoted().await,
        None => Vec::new(),
    };
    let status = match status {
        Some(s) => ChildStatus::from(&s),
        None => ChildStatus::KilledAfterOutputEnded {
            waited: EXIT_STATUS_WAIT,
        },
    };
    (status, stderr_tail)
}

impl Transport for Child {
    fn send(&self, msg: &Value, delivery: Delivery) -> Sent {
        self.stdin.send_message(msg, delivery)
    }

    fn send_frame(&self, frame: OutFrame, delivery: Delivery) -> Sent {
        self.stdin.send_frame(frame, delivery)
    }

    fn queued(&self) -> (usize, usize) {
        self.stdin.queued()
    }

    fn abandon(&self, id: &Id) -> Abandoned {
        if self.stdin.remove(id) {
            Abandoned::Unsent
        } else {
            Abandoned::NotifyCancelled
        }
    }

    /// Closes the child's stdin once the writer has flushed, waits `grace`, SIGTERM to the
    /// group, waits `grace`, SIGKILL to the group. The sweep of other descendants follows at
    /// the end of `main`.
    fn close(self: Box<Self>, grace: Duration) -> LocalBoxFuture<'static, Option<EndCause>> {
        let child = take(&self.child);
        drop(self); // closes the child's stdin once the writer has flushed
        Box::pin(async move {
            let status = child?.stop(grace).await?;
            Some(EndCause::ChildExited {
                status: ChildStatus::from(&status),
                stderr_tail: Vec::new(),
            })
        })
    }

    /// SIGKILL to the group, then the sweep of every other descendant that was handed to the
    /// bridge (one that left the group with `setsid`).
    fn kill(self: Box<Self>) -> LocalBoxFuture<'static, ()> {
        let child = take(&self.child);
        drop(self);
        Box::pin(async move {
            if let Some(child) = child {
                child.kill().await;
                let _ = tokio::task::spawn_blocking(isolation::stop_descendants).await;
            }
        })
    }
}

impl Drop for Child {
    /// The child's stdin is closed once what is queued is written.
    fn drop(&mut self) {
        self.stdin.close();
    }
}
