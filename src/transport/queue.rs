//! The bounded queue of a [`Writer`](super::writer::Writer), without the I/O of the sink:
//! its bounds (in bytes and frames), what happens to a frame that finds it full (its
//! [`Delivery`]), the frames themselves ([`OutFrame`]: a line, or a line in parts written
//! without a copy), the vectored write of what is queued to any `Write`, and the counters of
//! the metrics line ([`QueueStats`]).

use std::collections::VecDeque;
use std::io::{self, IoSlice, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::protocol::wire::id::Id;
use crate::protocol::wire::parts::FrameParts;
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
    /// cancels. The producers keep the queue bounded by awaiting [`Writer::room`](super::writer::Writer::room) before
    /// they read more.
    Always,
    /// Dropped and counted when the queue is over its notification bounds
    /// ([`Bounds::notify_max_bytes`]; progress and log notifications).
    DropWhenFull,
    /// Refused (a request toward the upstream, which then answers `upstream_busy`); until
    /// its first byte is written, [`Writer::remove`](super::writer::Writer::remove) with this id takes it out again.
    Request(Id),
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
/// passed through raw is never copied; [`crate::protocol::wire::parts::FrameParts`]), then the frame's own
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
    #[cfg(feature = "internals")]
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

struct QueuedFrame {
    frame: OutFrame,
    key: Option<Id>,
}

/// The queue of one writer, without I/O: bounds, order, removal, partial writes.
pub struct FrameQueue {
    frames: VecDeque<QueuedFrame>,
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

    /// No frame waits to be taken or written (frames taken by [`Self::take_all`] not counted).
    pub(crate) fn nothing_queued(&self) -> bool {
        self.frames.is_empty()
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
        self.frames.push_back(QueuedFrame { frame, key });
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

    /// A frame of `bytes` bytes went to the sink without the queue (the writer handed it
    /// off at once).
    pub(crate) fn handed_off(&mut self, bytes: usize) {
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
    pub(crate) dropped: AtomicU64,
    pub(crate) rate_limited: AtomicU64,
    pub(crate) refused: AtomicU64,
    pub(crate) removed: AtomicU64,
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

    pub(crate) fn size(&self, q: &FrameQueue) {
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
