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

use serde_json::Value;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, IoSlice, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::io::unix::AsyncFd;
use tokio::sync::Notify;

use crate::protocol::framing::encode_message;
use crate::protocol::jsonrpc::Id;
use crate::protocol::raw::FrameParts;
use bytes::Bytes;

/// Bytes queued toward the editor before request-scoped notifications are dropped and the
/// readers of the upstream and of stdin pause. 8 MiB is 40,000 log messages of 200 bytes, or
/// 128 full pipe buffers: far more than an editor that reads at all needs to absorb a burst;
/// with one response in transit of at most `--max-line-bytes` beyond it, the bridge stays well
/// under the 160 MiB target of `scripts/bench-memory.py` case A.
pub const EDITOR_QUEUE_MAX_BYTES: usize = 8 * 1024 * 1024;
/// Frames queued toward the editor before the readers pause (bounds the per-frame overhead of
/// many small frames: 4096 x about 100 bytes of bookkeeping).
pub const EDITOR_QUEUE_MAX_FRAMES: usize = 4096;
/// Bytes queued toward the editor beyond which progress and log notifications are dropped
/// (and counted). Lower than [`EDITOR_QUEUE_MAX_BYTES`]: notifications give way to responses
/// long before the readers pause, since a notification that waits behind a megabyte for a
/// slow editor is stale, and a response must never be lost.
pub const EDITOR_NOTIFICATIONS_MAX_BYTES: usize = 1024 * 1024;
/// Frames queued toward the editor beyond which progress and log notifications are dropped.
pub const EDITOR_NOTIFICATIONS_MAX_FRAMES: usize = 1024;
/// Bytes queued toward the upstream before a new request gets `upstream_busy`. 16 MiB holds
/// 16 requests of 1 MiB while the upstream is slow, and keeps case B of
/// `scripts/bench-memory.py` (an upstream that never reads) under its 200 MiB target even
/// without cancels (16 MiB queued plus what the reader and the parser hold).
pub const UPSTREAM_QUEUE_MAX_BYTES: usize = 16 * 1024 * 1024;
/// Frames queued toward the upstream before a new request gets `upstream_busy` (four times
/// the default limit of requests in flight, so cancels and listens of a slow upstream fit).
pub const UPSTREAM_QUEUE_MAX_FRAMES: usize = 1024;
/// Frames given to one `writev`.
pub const WRITE_BATCH_MAX_FRAMES: usize = 64;
/// Pieces given to one `writev` (Linux's `IOV_MAX` is 1024; a frame has a few pieces:
/// [`OutFrame`]).
pub const WRITE_BATCH_MAX_SLICES: usize = 1024;

/// Pieces one `writev` takes without allocating its list of slices.
const WRITE_FEW_SLICES: usize = 8;

/// The bounds of one queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Bytes of frames queued or being written, at most: beyond it a request is refused and
    /// the producers pause (softly: see [`Delivery::Always`]).
    pub max_bytes: usize,
    /// Frames queued or being written, at most (as `max_bytes`).
    pub max_frames: usize,
    /// Bytes queued beyond which a [`Delivery::DropWhenFull`] frame is dropped.
    pub notify_max_bytes: usize,
    /// Frames queued beyond which a [`Delivery::DropWhenFull`] frame is dropped.
    pub notify_max_frames: usize,
}

/// The bounds of the queue toward the editor (stdout).
pub const EDITOR_QUEUE: Bounds = Bounds {
    max_bytes: EDITOR_QUEUE_MAX_BYTES,
    max_frames: EDITOR_QUEUE_MAX_FRAMES,
    notify_max_bytes: EDITOR_NOTIFICATIONS_MAX_BYTES,
    notify_max_frames: EDITOR_NOTIFICATIONS_MAX_FRAMES,
};
/// The bounds of the queue toward the upstream (the child's stdin; the bridge sends it no
/// droppable frame).
pub const UPSTREAM_QUEUE: Bounds = Bounds {
    max_bytes: UPSTREAM_QUEUE_MAX_BYTES,
    max_frames: UPSTREAM_QUEUE_MAX_FRAMES,
    notify_max_bytes: UPSTREAM_QUEUE_MAX_BYTES,
    notify_max_frames: UPSTREAM_QUEUE_MAX_FRAMES,
};

/// What happens to a frame that finds its queue full.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// Queued even beyond the bounds: responses, requests to the editor, list changes,
    /// cancels. The producers keep the queue bounded by awaiting [`Writer::room`] before
    /// they read more.
    Always,
    /// Dropped and counted when the queue is over its notification bounds
    /// ([`Bounds::notify_max_bytes`]; progress and log notifications).
    DropWhenFull,
    /// Refused (a request toward the upstream, which then answers `upstream_busy`); until
    /// its first byte is written, [`Writer::remove`] with this id takes it out again.
    Request(Id),
}

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

/// What became of a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sent {
    /// Written or queued.
    Queued,
    /// Dropped because the queue was full ([`Delivery::DropWhenFull`]).
    Dropped,
    /// Refused because the queue was full ([`Delivery::Request`]).
    Refused,
    /// The writer is closed or its sink failed; nothing more is written.
    Closed,
}

/// One frame as pieces written in order: slices shared with a read buffer (a large member
/// passed through raw is never copied; [`crate::protocol::raw::FrameParts`]), then the frame's own
/// bytes that end it (a small frame is only those: one buffer, no other allocation).
#[derive(Clone, Debug, Default)]
pub struct OutFrame {
    pieces: Vec<Bytes>,
    tail: Vec<u8>,
    len: usize,
}

impl OutFrame {
    /// Bytes of the frame.
    pub fn len(&self) -> usize {
        self.len
    }

    /// No bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The pieces, in order (an empty tail is no piece).
    pub fn pieces(&self) -> impl Iterator<Item = &[u8]> {
        self.pieces
            .iter()
            .map(|b| &b[..])
            .chain(Some(&self.tail[..]).filter(|t| !t.is_empty()))
    }

    /// The frame in one buffer, taking it: no copy when it is one piece (a shared slice or
    /// its own bytes), one copy of the pieces otherwise.
    pub fn into_bytes(self) -> Bytes {
        match (self.pieces.len(), self.tail.is_empty()) {
            (0, _) => Bytes::from(self.tail),
            (1, true) => self.pieces.into_iter().next().unwrap_or_default(),
            _ => Bytes::from(self.to_vec()),
        }
    }

    /// The frame in one buffer (a copy).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len);
        for p in self.pieces() {
            out.extend_from_slice(p);
        }
        out
    }
}

impl From<Vec<u8>> for OutFrame {
    fn from(frame: Vec<u8>) -> Self {
        OutFrame {
            len: frame.len(),
            pieces: Vec::new(),
            tail: frame,
        }
    }
}

impl From<FrameParts> for OutFrame {
    fn from(parts: FrameParts) -> Self {
        let len = parts.len();
        let (pieces, tail) = parts.into_shared_and_tail();
        OutFrame { pieces, tail, len }
    }
}

struct Queued {
    frame: OutFrame,
    key: Option<Id>,
}

/// The queue of one writer, without I/O: bounds, order, removal, partial writes.
pub struct FrameQueue {
    frames: VecDeque<Queued>,
    /// Bytes of the first frame already written (it can no longer be removed).
    head_written: usize,
    /// Bytes of the frames in `frames` (whole frames: memory is held until the last byte).
    bytes: usize,
    /// Frames and bytes handed to a writer thread and not yet written.
    taken_frames: usize,
    taken_bytes: usize,
    /// Bytes written to the sink since the queue was made (a partly written frame counts
    /// its written part): what shows that the reader still reads.
    written_bytes: u64,
    bounds: Bounds,
}

impl FrameQueue {
    /// An empty queue with these bounds.
    pub fn new(bounds: Bounds) -> Self {
        FrameQueue {
            frames: VecDeque::new(),
            head_written: 0,
            bytes: 0,
            taken_frames: 0,
            taken_bytes: 0,
            written_bytes: 0,
            bounds,
        }
    }

    /// Frames queued or being written.
    pub fn frames(&self) -> usize {
        self.frames.len() + self.taken_frames
    }

    /// Bytes queued or being written.
    pub fn bytes(&self) -> usize {
        self.bytes + self.taken_bytes
    }

    /// No frame is queued or being written.
    pub fn is_empty(&self) -> bool {
        self.frames() == 0
    }

    /// The queue is at or over one of its bounds (the producers pause).
    pub fn is_full(&self) -> bool {
        self.bytes() >= self.bounds.max_bytes || self.frames() >= self.bounds.max_frames
    }

    /// Whether a frame of `len` bytes that may be refused is taken: always by an empty
    /// queue, else when it stays within both bounds.
    pub fn admits(&self, len: usize) -> bool {
        self.is_empty()
            || (self.bytes() + len <= self.bounds.max_bytes
                && self.frames() < self.bounds.max_frames)
    }

    /// Whether a notification of `len` bytes is taken: always by an empty queue, else when it
    /// stays within the notification bounds.
    pub fn admits_notification(&self, len: usize) -> bool {
        self.is_empty()
            || (self.bytes() + len <= self.bounds.notify_max_bytes
                && self.frames() < self.bounds.notify_max_frames)
    }

    /// Queues `frame` (a whole line, newline included) as `delivery` says.
    pub fn push(&mut self, frame: impl Into<OutFrame>, delivery: Delivery) -> Sent {
        let frame = frame.into();
        let key = match delivery {
            Delivery::Always => None,
            Delivery::DropWhenFull if !self.admits_notification(frame.len()) => {
                return Sent::Dropped;
            }
            Delivery::DropWhenFull => None,
            Delivery::Request(_) if !self.admits(frame.len()) => return Sent::Refused,
            Delivery::Request(id) => Some(id),
        };
        self.bytes += frame.len();
        self.frames.push_back(Queued { frame, key });
        Sent::Queued
    }

    /// Takes out the request frame with this id if none of its bytes is written yet.
    pub fn remove(&mut self, id: &Id) -> bool {
        let found = self.frames.iter().position(|q| q.key.as_ref() == Some(id));
        match found {
            Some(0) if self.head_written > 0 => false,
            Some(i) => {
                if let Some(q) = self.frames.remove(i) {
                    self.bytes -= q.frame.len();
                }
                true
            }
            None => false,
        }
    }

    /// One vectored write of the queued bytes (at most [`WRITE_BATCH_MAX_FRAMES`] frames) to
    /// `sink`; the written bytes leave the queue. Returns the bytes written; a `WouldBlock`
    /// or other error of the sink is returned unchanged and leaves the queue as it was.
    pub fn write_to<W: Write>(&mut self, sink: &mut W) -> io::Result<usize> {
        // The usual write (one frame of a piece or two) needs no allocation.
        let mut few = [IoSlice::new(&[]); WRITE_FEW_SLICES];
        let mut n_few = 0;
        let mut many: Vec<IoSlice<'_>> = Vec::new();
        let mut skip = self.head_written;
        'frames: for q in self.frames.iter().take(WRITE_BATCH_MAX_FRAMES) {
            for piece in q.frame.pieces() {
                if n_few + many.len() == WRITE_BATCH_MAX_SLICES {
                    break 'frames;
                }
                if skip >= piece.len() {
                    skip -= piece.len();
                    continue;
                }
                let slice = IoSlice::new(&piece[skip..]);
                skip = 0;
                if many.is_empty() && n_few < WRITE_FEW_SLICES {
                    few[n_few] = slice;
                    n_few += 1;
                } else {
                    if many.is_empty() {
                        many.extend_from_slice(&few[..n_few]);
                        n_few = 0;
                    }
                    many.push(slice);
                }
            }
        }
        let slices = if many.is_empty() {
            &few[..n_few]
        } else {
            &many[..]
        };
        if slices.is_empty() {
            return Ok(0);
        }
        let n = sink.write_vectored(slices)?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        self.advance(n);
        Ok(n)
    }

    /// `n` bytes from the front were written: whole frames leave, a partly written first
    /// frame stays (and can no longer be removed).
    fn advance(&mut self, mut n: usize) {
        self.written_bytes += n as u64;
        while n > 0 {
            let Some(head) = self.frames.front() else {
                return;
            };
            let left = head.frame.len() - self.head_written;
            if n >= left {
                n -= left;
                self.bytes -= head.frame.len();
                self.head_written = 0;
                self.frames.pop_front();
            } else {
                self.head_written += n;
                n = 0;
            }
        }
    }

    /// Hands every queued frame to a writer thread; they count until [`Self::taken_done`].
    pub fn take_all(&mut self) -> Vec<OutFrame> {
        self.head_written = 0;
        self.taken_frames += self.frames.len();
        self.taken_bytes += self.bytes;
        self.bytes = 0;
        self.frames.drain(..).map(|q| q.frame).collect()
    }

    /// The writer thread wrote `frames` frames of `bytes` bytes that it had taken.
    pub fn taken_done(&mut self, frames: usize, bytes: usize) {
        self.taken_frames = self.taken_frames.saturating_sub(frames);
        self.taken_bytes = self.taken_bytes.saturating_sub(bytes);
        self.written_bytes += bytes as u64;
    }

    /// Bytes written to the sink so far.
    pub fn written_bytes(&self) -> u64 {
        self.written_bytes
    }

    /// Forgets everything (the sink failed).
    pub fn clear(&mut self) {
        self.frames.clear();
        self.head_written = 0;
        self.bytes = 0;
        self.taken_frames = 0;
        self.taken_bytes = 0;
    }
}

/// Counters of one queue for the metrics line: the current and the peak size, and what was
/// dropped, refused or removed. Shared with the Metrics actor (atomics, no message needed).
#[derive(Debug)]
pub struct QueueStats {
    /// The queue's name in the metrics line (`editor_queue`, `upstream_queue`).
    pub name: &'static str,
    frames: AtomicU64,
    bytes: AtomicU64,
    peak_frames: AtomicU64,
    peak_bytes: AtomicU64,
    dropped: AtomicU64,
    rate_limited: AtomicU64,
    refused: AtomicU64,
    removed: AtomicU64,
}

impl QueueStats {
    /// New counters for the queue `name`.
    pub fn new(name: &'static str) -> Arc<QueueStats> {
        Arc::new(QueueStats {
            name,
            frames: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            peak_frames: AtomicU64::new(0),
            peak_bytes: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            rate_limited: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            removed: AtomicU64::new(0),
        })
    }

    fn size(&self, q: &FrameQueue) {
        let (f, b) = (q.frames() as u64, q.bytes() as u64);
        self.frames.store(f, Ordering::Relaxed);
        self.bytes.store(b, Ordering::Relaxed);
        self.peak_frames.fetch_max(f, Ordering::Relaxed);
        self.peak_bytes.fetch_max(b, Ordering::Relaxed);
    }

    /// A notification was dropped by its rate limit (a token bucket of the Frontend) before
    /// it reached the queue.
    pub fn rate_limited(&self) {
        self.rate_limited.fetch_add(1, Ordering::Relaxed);
    }

    /// Notifications dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// The part of the metrics line:
    /// `NAME: frames=N bytes=N peak_frames=N peak_bytes=N dropped_full=N rate_limited=N
    /// refused=N removed=N` (sizes now and at most, notifications dropped because the queue
    /// was full or by their rate limit, requests refused, requests removed before sending).
    pub fn line(&self) -> String {
        let l = |a: &AtomicU64| a.load(Ordering::Relaxed);
        format!(
            "{}: frames={} bytes={} peak_frames={} peak_bytes={} dropped_full={} rate_limited={} refused={} removed={}",
            self.name,
            l(&self.frames),
            l(&self.bytes),
            l(&self.peak_frames),
            l(&self.peak_bytes),
            l(&self.dropped),
            l(&self.rate_limited),
            l(&self.refused),
            l(&self.removed)
        )
    }
}

struct State {
    queue: FrameQueue,
    /// No more frames are taken; the sink is closed once the queue is empty.
    closed: bool,
    /// The sink failed (the reader went away): what is queued is dropped, nothing more goes.
    broken: bool,
    /// The non-blocking pipe, while the writer task runs (`None` for a writer thread).
    fd: Option<Arc<AsyncFd<File>>>,
}

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
    fn shared(bounds: Bounds, stats: Arc<QueueStats>, fd: Option<Arc<AsyncFd<File>>>) -> Self {
        Writer {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    queue: FrameQueue::new(bounds),
                    closed: false,
                    broken: false,
                    fd,
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
        let w = Writer::shared(bounds, stats, Some(fd.clone()));
        tokio::spawn(pipe_task(w.shared.clone(), fd));
        w
    }

    /// A writer of a blocking sink (a terminal, a file) on a thread of its own.
    pub fn for_blocking<W: Write + Send + 'static>(
        sink: W,
        bounds: Bounds,
        stats: Arc<QueueStats>,
    ) -> Self {
        let w = Writer::shared(bounds, stats, None);
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
            if st.fd.is_some() {
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

/// The loop of a writer thread: takes everything queued, writes it, flushes once.
fn thread_loop<W: Write>(shared: Arc<Shared>, mut sink: W) {
    loop {
        let batch = {
            let mut st = shared.lock();
            loop {
                if st.broken {
                    return;
                }
                if st.queue.frames.is_empty() {
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
mod tests {
    use super::*;

    const SMALL: Bounds = Bounds {
        max_bytes: 10,
        max_frames: 3,
        notify_max_bytes: 10,
        notify_max_frames: 3,
    };

    fn frame(text: &str) -> Vec<u8> {
        format!("{text}\n").into_bytes()
    }

    /// A sink that takes at most `room` bytes, then says WouldBlock.
    struct Pipe {
        got: Vec<u8>,
        room: usize,
    }

    impl Write for Pipe {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.write_vectored(&[IoSlice::new(buf)])
        }
        fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let mut n = 0;
            for b in bufs {
                let take = b.len().min(self.room - n);
                self.got.extend_from_slice(&b[..take]);
                n += take;
                if n == self.room {
                    break;
                }
            }
            self.room -= n;
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn an_empty_queue_takes_any_one_frame_then_the_bounds_hold() {
        let mut q = FrameQueue::new(SMALL);
        assert_eq!(
            q.push(frame("0123456789abc"), Delivery::DropWhenFull),
            Sent::Queued
        );
        assert_eq!((q.frames(), q.bytes()), (1, 14));
        assert!(q.is_full());
        assert_eq!(q.push(frame("a"), Delivery::DropWhenFull), Sent::Dropped);
        assert_eq!(
            q.push(frame("a"), Delivery::Request(Id::Int(1))),
            Sent::Refused
        );
        assert_eq!(q.push(frame("response"), Delivery::Always), Sent::Queued);
        assert_eq!((q.frames(), q.bytes()), (2, 23));
    }

    #[test]
    fn notifications_give_way_below_the_queue_bound() {
        let mut q = FrameQueue::new(Bounds {
            max_bytes: 100,
            max_frames: 10,
            notify_max_bytes: 7,
            notify_max_frames: 2,
        });
        assert_eq!(q.push(frame("abcd"), Delivery::Always), Sent::Queued);
        assert_eq!(q.push(frame("a"), Delivery::DropWhenFull), Sent::Queued);
        assert_eq!(q.push(frame("a"), Delivery::DropWhenFull), Sent::Dropped);
        assert!(!q.is_full());
        assert_eq!(
            q.push(frame("request"), Delivery::Request(Id::Int(1))),
            Sent::Queued
        );
    }

    #[test]
    fn the_frame_bound_holds_for_small_frames() {
        let mut q = FrameQueue::new(SMALL);
        for _ in 0..3 {
            assert_eq!(q.push(frame("a"), Delivery::DropWhenFull), Sent::Queued);
        }
        assert!(q.is_full());
        assert_eq!(q.push(frame("a"), Delivery::DropWhenFull), Sent::Dropped);
        // Bytes: 3 x 2 = 6; a frame of 5 bytes would make 11 > 10 even with a frame free.
        let mut q = FrameQueue::new(SMALL);
        q.push(frame("abc"), Delivery::Always);
        assert_eq!(
            q.push(frame("abcdef"), Delivery::DropWhenFull),
            Sent::Dropped
        );
        assert_eq!(q.push(frame("abcde"), Delivery::DropWhenFull), Sent::Queued);
        assert_eq!(q.bytes(), 10);
    }

    #[test]
    fn frames_go_out_whole_and_in_order_across_partial_writes() {
        let mut q = FrameQueue::new(SMALL);
        q.push(frame("ab"), Delivery::Always);
        q.push(frame("cd"), Delivery::Always);
        q.push(frame("ef"), Delivery::Always);
        let mut pipe = Pipe {
            got: Vec::new(),
            room: 4,
        };
        assert_eq!(q.write_to(&mut pipe).ok(), Some(4));
        // "ab\n" left, "c" of the second frame written: 2 frames of 6 bytes still held.
        assert_eq!((q.frames(), q.bytes()), (2, 6));
        assert_eq!(
            q.write_to(&mut pipe).err().map(|e| e.kind()),
            Some(io::ErrorKind::WouldBlock)
        );
        pipe.room = 100;
        assert_eq!(q.write_to(&mut pipe).ok(), Some(5));
        assert!(q.is_empty());
        assert_eq!(pipe.got, b"ab\ncd\nef\n");
    }

    #[test]
    fn a_request_is_removable_until_its_first_byte_is_written() {
        let mut q = FrameQueue::new(Bounds {
            max_bytes: 100,
            max_frames: 10,
            notify_max_bytes: 100,
            notify_max_frames: 10,
        });
        q.push(frame("one"), Delivery::Request(Id::Int(1)));
        q.push(frame("two"), Delivery::Request(Id::Int(2)));
        q.push(frame("three"), Delivery::Request(Id::Int(3)));
        let mut pipe = Pipe {
            got: Vec::new(),
            room: 1,
        };
        assert_eq!(q.write_to(&mut pipe).ok(), Some(1));
        assert!(!q.remove(&Id::Int(1)), "started: must go out whole");
        assert!(q.remove(&Id::Int(3)));
        assert!(!q.remove(&Id::Int(3)));
        assert!(!q.remove(&Id::Int(9)));
        assert_eq!((q.frames(), q.bytes()), (2, 8));
        pipe.room = 100;
        assert_eq!(q.write_to(&mut pipe).ok(), Some(7));
        assert_eq!(pipe.got, b"one\ntwo\n");
        assert_eq!(q.bytes(), 0);
    }

    #[test]
    fn a_frame_of_shared_pieces_is_written_whole_across_partial_writes() {
        let big = Bytes::from(vec![b'x'; crate::protocol::raw::SHARE_MIN_BYTES]);
        let mut parts = FrameParts::new();
        parts.push(b"{\"a\":\"");
        parts.push_shared(big.clone());
        parts.push(b"\"}\n");
        let frame = OutFrame::from(parts);
        let pieces: Vec<&[u8]> = frame.pieces().collect();
        assert_eq!(pieces.len(), 3);
        assert_eq!(pieces[1].as_ptr(), big.as_ptr());
        let want = frame.to_vec();
        let mut q = FrameQueue::new(EDITOR_QUEUE);
        assert_eq!(q.push(frame, Delivery::Always), Sent::Queued);
        assert_eq!(q.push(self::frame("next"), Delivery::Always), Sent::Queued);
        assert_eq!(q.bytes(), want.len() + 5);
        let mut pipe = Pipe {
            got: Vec::new(),
            room: 3,
        };
        while !q.is_empty() {
            let _ = q.write_to(&mut pipe);
            pipe.room = 4099;
        }
        assert_eq!(pipe.got, [want, b"next\n".to_vec()].concat());
        assert_eq!((q.frames(), q.bytes()), (0, 0));
    }

    #[test]
    fn taken_frames_count_until_written() {
        let mut q = FrameQueue::new(SMALL);
        q.push(frame("abcd"), Delivery::Always);
        q.push(frame("efgh"), Delivery::Always);
        let batch = q.take_all();
        assert_eq!(batch.len(), 2);
        assert_eq!((q.frames(), q.bytes()), (2, 10));
        assert!(q.is_full());
        q.taken_done(2, 10);
        assert!(q.is_empty());
    }

    #[test]
    fn one_writev_takes_at_most_the_batch_limit() {
        let mut q = FrameQueue::new(Bounds {
            max_bytes: 1 << 20,
            max_frames: 1 << 10,
            notify_max_bytes: 1 << 20,
            notify_max_frames: 1 << 10,
        });
        for _ in 0..(WRITE_BATCH_MAX_FRAMES + 5) {
            q.push(frame("x"), Delivery::Always);
        }
        let mut pipe = Pipe {
            got: Vec::new(),
            room: 1 << 20,
        };
        assert_eq!(q.write_to(&mut pipe).ok(), Some(2 * WRITE_BATCH_MAX_FRAMES));
        assert_eq!(q.frames(), 5);
    }

    fn pipe_pair() -> (AsyncFd<File>, File) {
        use std::os::fd::FromRawFd;
        let mut fds = [0; 2];
        // SAFETY: pipe2 fills two new descriptors that are owned by the Files below.
        let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
        assert_eq!(rc, 0);
        // SAFETY: fcntl on the write end created above.
        assert_eq!(
            unsafe { libc::fcntl(fds[1], libc::F_SETFL, libc::O_NONBLOCK) },
            0
        );
        // SAFETY: both descriptors are new and owned by nobody else.
        let (r, w) = unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) };
        // SAFETY (I/O safety of `register`): `w` is owned by the AsyncFd alone.
        let w = unsafe { AsyncFd::register_with_interest(w, tokio::io::Interest::WRITABLE) };
        (w.expect("register"), r)
    }

    #[tokio::test]
    async fn over_a_full_pipe_requests_are_refused_then_room_comes_back() {
        use std::io::Read;
        let (w, mut r) = pipe_pair();
        let bounds = Bounds {
            max_bytes: 4 << 20,
            max_frames: 4,
            notify_max_bytes: 4 << 20,
            notify_max_frames: 4,
        };
        let writer = Writer::for_pipe(w, bounds, QueueStats::new("test_queue"));
        // Fill the pipe (64 KiB by default) with one large frame written at once.
        let big = vec![b'x'; 1 << 20];
        let mut line = big.clone();
        line.push(b'\n');
        assert_eq!(writer.send_frame(line, Delivery::Always), Sent::Queued);
        for i in 0..3 {
            assert_eq!(
                writer.send_frame(frame("q"), Delivery::Request(Id::Int(i))),
                Sent::Queued
            );
        }
        assert!(writer.is_full());
        assert_eq!(
            writer.send_frame(frame("r"), Delivery::Request(Id::Int(9))),
            Sent::Refused
        );
        assert!(writer.remove(&Id::Int(1)));
        assert_eq!(
            writer.send_message(&serde_json::json!({"n": 1}), Delivery::DropWhenFull),
            Sent::Queued
        );
        let reader = std::thread::spawn(move || {
            let mut all = Vec::new();
            let _ = r.read_to_end(&mut all);
            all
        });
        writer.room().await;
        writer.close();
        assert_eq!(
            writer.drain(Duration::MAX, Duration::MAX).await,
            Drain::Done
        );
        let all = tokio::task::spawn_blocking(move || reader.join().ok())
            .await
            .ok()
            .flatten()
            .unwrap_or_default();
        let mut expected = big;
        expected.extend_from_slice(b"\nq\nq\n{\"n\":1}\n");
        assert_eq!(all.len(), expected.len());
        assert!(all == expected);
        assert_eq!(
            writer.stats().line(),
            "test_queue: frames=0 bytes=0 peak_frames=4 peak_bytes=1048589 dropped_full=0 rate_limited=0 refused=1 removed=1"
        );
    }

    /// Fills the pipe of `pipe_pair` with one 1 MiB frame: it takes 64 KiB at once, the rest
    /// waits for the reader.
    fn writer_with_a_megabyte_queued() -> (Writer, File) {
        let (w, r) = pipe_pair();
        let writer = Writer::for_pipe(w, EDITOR_QUEUE, QueueStats::new("test_queue"));
        let mut line = vec![b'x'; 1 << 20];
        line.push(b'\n');
        assert_eq!(writer.send_frame(line, Delivery::Always), Sent::Queued);
        writer.close();
        (writer, r)
    }

    #[tokio::test]
    async fn drain_waits_for_a_reader_that_reads_slowly_longer_than_its_idle_time() {
        use std::io::Read;
        let (writer, mut r) = writer_with_a_megabyte_queued();
        // 64 KiB every 50 ms: the whole megabyte takes about 800 ms, twice the idle time, and
        // every gap is an eighth of it.
        let reader = std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            let mut total = 0;
            loop {
                std::thread::sleep(Duration::from_millis(50));
                match r.read(&mut buf) {
                    Ok(0) | Err(_) => return total,
                    Ok(n) => total += n,
                }
            }
        });
        let drain = writer
            .drain(Duration::from_millis(400), Duration::from_secs(60))
            .await;
        assert_eq!(drain, Drain::Done);
        let total = tokio::task::spawn_blocking(move || reader.join().ok())
            .await
            .ok()
            .flatten();
        assert_eq!(total, Some((1 << 20) + 1));
    }

    #[tokio::test]
    async fn drain_gives_up_on_a_reader_that_stopped_reading_after_its_idle_time() {
        let (writer, _r) = writer_with_a_megabyte_queued();
        let started = Instant::now();
        let drain = writer
            .drain(Duration::from_millis(100), Duration::from_secs(60))
            .await;
        assert_eq!(drain, Drain::Stalled);
        assert!(started.elapsed() >= Duration::from_millis(100));
        assert_eq!(writer.queued(), (1, (1 << 20) + 1));
    }

    #[tokio::test]
    async fn drain_ends_at_its_cap_while_the_reader_still_reads() {
        use std::io::Read;
        let (writer, mut r) = writer_with_a_megabyte_queued();
        let reader = std::thread::spawn(move || {
            let mut buf = vec![0u8; 4096];
            while let Ok(n) = r.read(&mut buf) {
                if n == 0 {
                    return;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        let drain = writer
            .drain(Duration::from_secs(60), Duration::from_millis(100))
            .await;
        assert_eq!(drain, Drain::Capped);
        drop(writer);
        drop(reader);
    }
}
