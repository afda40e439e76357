//! The one writer of newline-delimited JSON-RPC frames, with a named, bounded queue: stdout
//! toward the editor and the child's stdin toward the upstream both go through a [`Writer`].
//!
//! - **One frame is one line**, written whole and in order; nothing else writes the sink.
//! - **Bounded:** the queue holds at most [`Bounds::max_bytes`] bytes and
//!   [`Bounds::max_frames`] frames (frames taken for writing count until their last byte is
//!   written). What happens to a frame that finds the queue full is its [`Delivery`]: kept
//!   (`Always`: responses; the producers pause with [`Writer::room`] instead), dropped and
//!   counted (`DropWhenFull`: progress and log notifications), or refused
//!   (`Request`: the caller answers `upstream_busy`). An empty queue takes any one frame, so
//!   a frame larger than the bound still goes out.
//! - **Removable until started:** a `Request` frame whose first byte is not written yet is
//!   taken out again by [`Writer::remove`] (a cancelled request is never sent).
//! - **Pipes and sockets** (an editor's stdout, the child's stdin) are written non-blocking on
//!   the actor thread: a frame that finds the queue empty is written at once by the caller
//!   (no hand-off), and only what the pipe does not take is queued for a task that waits
//!   until the pipe is writable; the queued frames go out with one `writev` per wake-up.
//!   Anything else (a terminal, a file) is written by a thread of its own with blocking
//!   writes: everything queued, then one flush.
//! - **Channels** (an HTTP session's output in `embed::serve_http`, the input of an
//!   in-process server) take each frame as one message ([`Writer::for_channel`]): a frame
//!   that finds the queue empty and the channel with room goes into it at once (as a pipe's
//!   is written at once); the others wait in this queue, with its bounds, for a task of the
//!   current runtime: no thread, and a full channel holds the frames in the queue.

use serde_json::Value;
use std::fs::File;
use std::io::{self, Write};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::io::unix::AsyncFd;
use tokio::sync::{Notify, mpsc};

use super::queue::{Bounds, Delivery, FrameQueue, OutFrame, QueueStats, Sent};
use crate::protocol::wire::framing::encode_message;
use crate::protocol::wire::id::Id;

/// How [`Writer::drain`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drain {
    /// Everything queued was written (or the sink failed: nothing more can be).
    Done,
    /// No byte was written for the idle time: the reader stopped reading.
    Stalled,
    /// The reader still read when the cap was reached.
    Capped,
}

struct State {
    queue: FrameQueue,
    /// No more frames are taken; the sink is closed once the queue is empty.
    closed: bool,
    /// The sink failed (the reader went away): what is queued is dropped, nothing more goes.
    broken: bool,
    /// The non-blocking pipe, while the writer task runs (`None` for a writer thread).
    fd: Option<Arc<AsyncFd<File>>>,
    /// A task writes (a pipe's or a channel's): frames wake `wake_task`, not the thread.
    by_task: bool,
    /// The channel's hand-off without its task, while the writer is open (`None` for a pipe
    /// or a thread): see [`HandOff`].
    hand_off: Option<HandOff>,
}

/// Gives one frame straight to the channel of [`Writer::for_channel`] when the channel has
/// room for it: true when the frame went (or was dropped as the task drops it). A frame that
/// finds the queue empty takes it, so that it never waits in the queue for the task's next
/// turn, where its bytes would count against the bounds and refuse the requests behind it
/// though the channel can take them all.
type HandOff = Box<dyn Fn(&OutFrame) -> bool + Send>;

struct Shared {
    state: Mutex<State>,
    /// Wakes the writer task: frames were queued, or the writer closed.
    wake_task: Notify,
    /// Wakes the writer thread.
    wake_thread: Condvar,
    /// Frames left the queue, or the writer ended.
    room: Notify,
    stats: Arc<QueueStats>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while the lock is held ends the process (the panic hook), so a poisoned
        // lock is never seen; take the state anyway.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn fail(&self, st: &mut State) {
        st.broken = true;
        st.hand_off = None;
        st.queue.clear();
        self.stats.size(&st.queue);
    }
}

/// A cheap, cloneable handle of one writer (see the module doc). Every clone writes to the
/// same sink through the same queue.
#[derive(Clone)]
pub struct Writer {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Writer({})", self.shared.stats.name)
    }
}

impl Writer {
    fn shared(
        bounds: Bounds,
        stats: Arc<QueueStats>,
        fd: Option<Arc<AsyncFd<File>>>,
        by_task: bool,
    ) -> Self {
        Writer {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    queue: FrameQueue::new(bounds),
                    closed: false,
                    broken: false,
                    fd,
                    by_task,
                    hand_off: None,
                }),
                wake_task: Notify::new(),
                wake_thread: Condvar::new(),
                room: Notify::new(),
                stats,
            }),
        }
    }

    /// A writer of a non-blocking pipe or socket (`O_NONBLOCK` set). Starts its task on the
    /// current tokio runtime (the actor thread); call inside it. The pipe is closed when the
    /// writer is closed and its queue is empty, or when a write fails.
    pub fn for_pipe(fd: AsyncFd<File>, bounds: Bounds, stats: Arc<QueueStats>) -> Self {
        let fd = Arc::new(fd);
        let w = Writer::shared(bounds, stats, Some(fd.clone()), true);
        tokio::spawn(pipe_task(w.shared.clone(), fd));
        w
    }

    /// A writer of a channel: each frame goes to `lines` as one message, what `message`
    /// makes of the frame's bytes (its `\n` included; `None`: the frame is dropped), from a
    /// task it starts on the current tokio runtime (call inside it). The task ends, and
    /// `lines` closes, when the writer is closed and its queue is empty; when the receiver
    /// is gone the writer fails as a broken pipe does.
    pub fn for_channel<T: Send + 'static>(
        lines: mpsc::Sender<T>,
        message: fn(Vec<u8>) -> Option<T>,
        bounds: Bounds,
        stats: Arc<QueueStats>,
    ) -> Self {
        let w = Writer::shared(bounds, stats, None, true);
        let direct = lines.clone();
        w.shared.lock().hand_off = Some(Box::new(move |frame: &OutFrame| {
            match direct.try_reserve() {
                Ok(permit) => {
                    if let Some(line) = message(frame.to_vec()) {
                        permit.send(line);
                    }
                    true
                }
                Err(_) => false,
            }
        }));
        tokio::spawn(channel_task(w.shared.clone(), lines, message));
        w
    }

    /// [`Writer::for_channel`] of text lines: each frame without its `\n`.
    pub fn for_line_channel(
        lines: mpsc::Sender<String>,
        bounds: Bounds,
        stats: Arc<QueueStats>,
    ) -> Self {
        Writer::for_channel(lines, line_text, bounds, stats)
    }

    /// A writer of a blocking sink (a terminal, a file) on a thread of its own.
    pub fn for_blocking<W: Write + Send + 'static>(
        sink: W,
        bounds: Bounds,
        stats: Arc<QueueStats>,
    ) -> Self {
        let w = Writer::shared(bounds, stats, None, false);
        let shared = w.shared.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("mcp-bridge-{}", w.shared.stats.name))
            .spawn(move || thread_loop(shared, sink));
        if spawned.is_err() {
            let mut st = w.shared.lock();
            w.shared.fail(&mut st);
        }
        w
    }

    /// Serializes `msg` as one line (JSON and `\n`, the codec's [`encode_message`]) and sends
    /// it as `delivery` says.
    pub fn send_message(&self, msg: &Value, delivery: Delivery) -> Sent {
        let Ok(frame) = encode_message(msg) else {
            // A `Value` always serializes; keep the rule "nothing panics" anyway.
            return Sent::Dropped;
        };
        self.send_frame(frame, delivery)
    }

    /// Sends one whole line (newline included) as `delivery` says. When the queue was empty
    /// and the sink is a pipe, the caller writes it at once; what the pipe does not take
    /// waits for the writer task.
    pub fn send_frame(&self, frame: impl Into<OutFrame>, delivery: Delivery) -> Sent {
        let frame = frame.into();
        let sh = &*self.shared;
        let mut st = sh.lock();
        if st.closed || st.broken {
            return Sent::Closed;
        }
        let was_empty = st.queue.is_empty();
        // Nothing queued nor in the task's hands: the frame may pass them all, in order.
        if was_empty
            && let Some(hand_off) = &st.hand_off
            && hand_off(&frame)
        {
            st.queue.handed_off(frame.len());
            return Sent::Queued;
        }
        let sent = st.queue.push(frame, delivery);
        match sent {
            Sent::Queued => {}
            Sent::Dropped => {
                sh.stats.dropped.fetch_add(1, Ordering::Relaxed);
                return sent;
            }
            Sent::Refused => {
                sh.stats.refused.fetch_add(1, Ordering::Relaxed);
                return sent;
            }
            Sent::Closed => return sent,
        }
        if was_empty && let Some(fd) = st.fd.clone() {
            match st.queue.write_to(&mut fd.get_ref()) {
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                    ) => {}
                Err(_) => {
                    sh.fail(&mut st);
                    drop(st);
                    sh.room.notify_waiters();
                    return Sent::Queued;
                }
            }
        }
        sh.stats.size(&st.queue);
        if !st.queue.is_empty() {
            if st.by_task {
                sh.wake_task.notify_one();
            } else {
                sh.wake_thread.notify_one();
            }
        }
        Sent::Queued
    }

    /// Takes out the request frame with this id if none of its bytes is written yet (then it
    /// is never sent). False when it is written, being written, or unknown.
    pub fn remove(&self, id: &Id) -> bool {
        let sh = &*self.shared;
        let mut st = sh.lock();
        let removed = st.queue.remove(id);
        if removed {
            sh.stats.removed.fetch_add(1, Ordering::Relaxed);
            sh.stats.size(&st.queue);
            drop(st);
            sh.room.notify_waiters();
        }
        removed
    }

    /// Frames and bytes queued or being written.
    pub fn queued(&self) -> (usize, usize) {
        let st = self.shared.lock();
        (st.queue.frames(), st.queue.bytes())
    }

    /// The queue is at or over one of its bounds.
    pub fn is_full(&self) -> bool {
        self.shared.lock().queue.is_full()
    }

    /// No frame is queued or being written (every frame so far went out at once).
    pub fn is_empty(&self) -> bool {
        self.shared.lock().queue.is_empty()
    }

    /// Waits until the queue is under both bounds (or the writer ended): a producer calls it
    /// before it reads more input that may produce frames (back-pressure).
    pub async fn room(&self) {
        loop {
            let notified = self.shared.room.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let st = self.shared.lock();
                if !st.queue.is_full() || st.broken || (st.closed && st.fd.is_none()) {
                    return;
                }
            }
            notified.await;
        }
    }

    /// Takes no more frames; the sink is closed once what is queued is written.
    pub fn close(&self) {
        let mut st = self.shared.lock();
        st.closed = true;
        // The channel closes when the task ends: no sender may outlive it here.
        st.hand_off = None;
        drop(st);
        self.shared.wake_task.notify_one();
        self.shared.wake_thread.notify_all();
    }

    /// Waits until everything queued is written or the sink failed ([`Drain::Done`]), for as
    /// long as the reader keeps reading: it gives up when no byte was written for `idle`
    /// ([`Drain::Stalled`]: the reader stopped) or after `cap` in all ([`Drain::Capped`]).
    /// A slow reader gets every frame; one that stopped reading costs at most `idle`. Call
    /// after [`Writer::close`].
    pub async fn drain(&self, idle: Duration, cap: Duration) -> Drain {
        // A year is "no limit" for a duration too large to add to an instant.
        let after = |d: Duration| {
            let now = Instant::now();
            now.checked_add(d)
                .unwrap_or(now + Duration::from_secs(365 * 24 * 3600))
        };
        let end = after(cap);
        let mut written = None;
        let mut idle_end = after(idle);
        loop {
            let notified = self.shared.room.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let st = self.shared.lock();
                if st.queue.is_empty() || st.broken {
                    return Drain::Done;
                }
                let now = st.queue.written_bytes();
                if written != Some(now) {
                    written = Some(now);
                    idle_end = after(idle);
                }
            }
            let wake = idle_end.min(end);
            if tokio::time::timeout_at(wake.into(), notified)
                .await
                .is_err()
            {
                return if wake == end {
                    Drain::Capped
                } else {
                    Drain::Stalled
                };
            }
        }
    }

    /// The counters of this writer's queue.
    pub fn stats(&self) -> &Arc<QueueStats> {
        &self.shared.stats
    }
}

/// The task of a pipe writer: waits for frames, then for the pipe to be writable, and writes
/// with one `writev` per readiness until the queue is empty.
async fn pipe_task(shared: Arc<Shared>, fd: Arc<AsyncFd<File>>) {
    loop {
        loop {
            let notified = shared.wake_task.notified();
            {
                let mut st = shared.lock();
                if st.broken {
                    st.fd = None;
                    return;
                }
                if !st.queue.is_empty() {
                    break;
                }
                if st.closed {
                    st.fd = None;
                    drop(st);
                    shared.room.notify_waiters();
                    return;
                }
            }
            notified.await;
        }
        let mut guard = match fd.writable().await {
            Ok(g) => g,
            Err(_) => {
                let mut st = shared.lock();
                shared.fail(&mut st);
                st.fd = None;
                drop(st);
                shared.room.notify_waiters();
                return;
            }
        };
        let written = guard.try_io(|inner| {
            let mut st = shared.lock();
            let r = st.queue.write_to(&mut inner.get_ref());
            shared.stats.size(&st.queue);
            r
        });
        match written {
            Ok(Ok(_)) => shared.room.notify_waiters(),
            Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
            Ok(Err(_)) => {
                let mut st = shared.lock();
                shared.fail(&mut st);
                st.fd = None;
                drop(st);
                shared.room.notify_waiters();
                return;
            }
            Err(_would_block) => {}
        }
    }
}

/// The task of a channel writer: takes everything queued and sends it line by line, waiting
/// while the channel is full.
async fn channel_task<T>(
    shared: Arc<Shared>,
    lines: mpsc::Sender<T>,
    message: fn(Vec<u8>) -> Option<T>,
) {
    loop {
        let batch = loop {
            let notified = shared.wake_task.notified();
            {
                let mut st = shared.lock();
                if st.broken {
                    return;
                }
                if !st.queue.nothing_queued() {
                    break st.queue.take_all();
                }
                if st.closed {
                    drop(st);
                    shared.room.notify_waiters();
                    return;
                }
            }
            notified.await;
        };
        let frames = batch.len();
        let bytes: usize = batch.iter().map(OutFrame::len).sum();
        let mut ok = true;
        for frame in &batch {
            let mut bytes = Vec::with_capacity(frame.len());
            for piece in frame.pieces() {
                bytes.extend_from_slice(piece);
            }
            let Some(line) = message(bytes) else {
                continue;
            };
            if lines.send(line).await.is_err() {
                ok = false;
                break;
            }
        }
        drop(batch);
        {
            let mut st = shared.lock();
            st.queue.taken_done(frames, bytes);
            if !ok {
                shared.fail(&mut st);
            }
            shared.stats.size(&st.queue);
        }
        shared.room.notify_waiters();
        if !ok {
            return;
        }
    }
}

/// A frame as text without its `\n`. Frames are serialized JSON, UTF-8 by construction; a
/// frame that is not is dropped rather than mangled.
fn line_text(mut bytes: Vec<u8>) -> Option<String> {
    if bytes.last() == Some(&b'\n') {
        bytes.pop();
    }
    String::from_utf8(bytes).ok()
}

/// The loop of a writer thread: takes everything queued, writes it, flushes once.
fn thread_loop<W: Write>(shared: Arc<Shared>, mut sink: W) {
    loop {
        let batch = {
            let mut st = shared.lock();
            loop {
                if st.broken {
                    return;
                }
                if st.queue.nothing_queued() {
                    if st.closed {
                        drop(st);
                        shared.room.notify_waiters();
                        return;
                    }
                    st = shared
                        .wake_thread
                        .wait(st)
                        .unwrap_or_else(|p| p.into_inner());
                    continue;
                }
                break st.queue.take_all();
            }
        };
        let frames = batch.len();
        let bytes: usize = batch.iter().map(OutFrame::len).sum();
        let ok = batch
            .iter()
            .flat_map(|f| f.pieces())
            .all(|p| sink.write_all(p).is_ok())
            && sink.flush().is_ok();
        drop(batch);
        {
            let mut st = shared.lock();
            st.queue.taken_done(frames, bytes);
            if !ok {
                shared.fail(&mut st);
            }
            shared.stats.size(&st.queue);
        }
        shared.room.notify_waiters();
        if !ok {
            return;
        }
    }
}

#[cfg(test)]
mod tests;
