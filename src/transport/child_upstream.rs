//! The upstream as a child process on stdio (2026-07-28 basic/transports/stdio): spawned in
//! its own process group ([`child::spawn`], with the isolation of `isolation.rs` and its stderr
//! relayed), frames from its stdout, the bounded [`Writer`] on its stdin. It ends when its
//! stdout closes, or [`EXIT_DRAIN`] after the child exits (a grandchild may hold the pipe).

use futures_util::StreamExt;
use futures_util::future::LocalBoxFuture;
use serde_json::Value;
use std::ffi::OsString;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::child::{self, ChildProcess};
use super::program::{self, SpawnError};
use super::upstream::{Abandoned, EndCause, Event, OpenOptions, Opened, Transport};
use super::writer::{Delivery, OutFrame, Sent, UPSTREAM_QUEUE, Writer};
use super::{isolation, lines};
use crate::protocol::framing::FrameCodec;
use crate::protocol::jsonrpc::Id;

/// How long the bridge waits for the exit status of a child that closed its stdout, before it
/// kills the child's group and says so (`it closed its stdout and was still running 500 ms
/// later: ...`); a failed `initialize` waits that long for its detail. The wait does not end
/// as soon as the child is seen alive: a server often closes its stdout a while before it
/// exits (an interpreter's shutdown closes `sys.stdout`, then runs its exit handlers), and its
/// exit code is the cause the user can act on (`sh -c 'exec >&-; sleep 0.2; exit 3'` is
/// reported as `exit code 3`, 0.2 s after the end of its output). A child that exits at once
/// is reported at once; only one that keeps running costs the whole wait.
pub const EXIT_STATUS_WAIT: Duration = Duration::from_millis(500);
/// After the child exits, how long frames already in its stdout pipe are still read before
/// the upstream counts as lost (a grandchild may hold the pipe open).
pub const EXIT_DRAIN: Duration = Duration::from_millis(100);

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

/// Spawns `command args` (see [`super::upstream::open`]).
pub fn open(
    command: &OsString,
    args: &[OsString],
    options: OpenOptions,
) -> Result<Opened, SpawnError> {
    let (proc_, io) = child::spawn(command, args)
        .map_err(|e| SpawnError::Start(program::spawn_error_detail(command, &e)))?;
    tracing::debug!(target: "upstream", "started the upstream command (pid {})", proc_.pgid());
    let stdin = child::stdin_pipe(io.stdin).map_err(SpawnError::Stdin)?;
    let stdin = Writer::for_pipe(stdin, UPSTREAM_QUEUE, options.queue_stats);
    let mut exit = proc_.exit_watch();
    let exited_and_drained = async move {
        while exit.borrow_and_update().is_none() {
            if exit.changed().await.is_err() {
                break;
            }
        }
        tokio::time::sleep(EXIT_DRAIN).await;
    };
    let child: Shared = Arc::new(Mutex::new(Some(proc_)));
    let end = child.clone();
    let events = lines::frames(
        io.stdout,
        FrameCodec::new(options.max_line_bytes),
        Some(options.pace),
    )
    .map(Event::Frame)
    .take_until(Box::pin(exited_and_drained))
    .chain(futures_util::stream::once(async { Event::Closed }))
    .chain(futures_util::stream::once(async move {
        Event::Ended(EndCause::ChildExited(status_after_loss(take(&end)).await))
    }));
    Ok(Opened {
        transport: Box::new(Child { stdin, child }),
        events: events.boxed_local(),
    })
}

/// How a lost child ended: its status within [`EXIT_STATUS_WAIT`] (`exit code N`,
/// `signal N`), then SIGKILL to its group in any case. A child still running then closed its
/// stdout without exiting, and the kill is the bridge's own: that is what the log says, never
/// `signal 9` as if something else had killed it.
async fn status_after_loss(child: Option<ChildProcess>) -> String {
    let Some(mut c) = child else {
        return "unknown status".to_string();
    };
    let status = c.wait_for(EXIT_STATUS_WAIT).await;
    c.kill().await;
    match status {
        Some(s) => child::describe_status(&s),
        None => format!(
            "it closed its stdout and was still running {} ms later: the bridge killed it (SIGKILL)",
            EXIT_STATUS_WAIT.as_millis()
        ),
    }
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
            Some(EndCause::ChildExited(child::describe_status(&status)))
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
