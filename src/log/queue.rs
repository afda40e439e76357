//! The bounded queue in front of the bridge's stderr: every line the bridge writes there (its
//! own log lines and the upstream's relayed stderr lines) is handed to one writer thread, and
//! a line that finds the queue full is dropped and counted, so that a stderr nobody reads
//! never blocks the JSON-RPC path. (Not `tracing-appender`'s `non_blocking`: its guard prints
//! to stdout, the editor's JSON-RPC channel, when its queue is full at exit, and it has no
//! bound in bytes.)

use crossbeam_channel::{Receiver, Sender, TrySendError, bounded};
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Lines the stderr queue holds at most.
pub const STDERR_QUEUE_LINES: usize = 1024;
/// Bytes the stderr queue holds at most (an empty queue takes any one line).
pub const STDERR_QUEUE_MAX_BYTES: usize = 1024 * 1024;
/// Bytes the writer thread writes at most in one write (whole lines; one longer line alone).
pub const STDERR_WRITE_BATCH_BYTES: usize = 64 * 1024;

/// Who wrote a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// A log line of the bridge.
    Bridge,
    /// A stderr line of the upstream, relayed.
    Upstream,
}

enum Msg {
    Line(Vec<u8>),
    Flush(Sender<()>),
}

/// Counters of the stderr queue (lines offered = `lines` + `dropped_lines`).
#[derive(Debug, Default)]
pub struct StderrStats {
    lines: AtomicU64,
    dropped_lines: AtomicU64,
    upstream_lines: AtomicU64,
    upstream_dropped_lines: AtomicU64,
}

impl StderrStats {
    /// The part of the metrics line: `stderr: lines=N dropped_lines=N upstream_lines=N
    /// upstream_dropped_lines=N`; `lines` and `dropped_lines` count every line (the bridge's
    /// and the upstream's) taken into the queue and dropped, `upstream_*` the upstream's alone.
    pub fn line(&self) -> String {
        format!(
            "stderr: lines={} dropped_lines={} upstream_lines={} upstream_dropped_lines={}",
            self.lines.load(Ordering::Relaxed),
            self.dropped_lines.load(Ordering::Relaxed),
            self.upstream_lines.load(Ordering::Relaxed),
            self.upstream_dropped_lines.load(Ordering::Relaxed)
        )
    }

    /// Lines dropped (the bridge's and the upstream's) because the queue was full.
    pub fn dropped_lines(&self) -> u64 {
        self.dropped_lines.load(Ordering::Relaxed)
    }

    fn count(&self, source: Source, taken: bool) {
        let (all, upstream) = if taken {
            (&self.lines, &self.upstream_lines)
        } else {
            (&self.dropped_lines, &self.upstream_dropped_lines)
        };
        all.fetch_add(1, Ordering::Relaxed);
        if source == Source::Upstream {
            upstream.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The queue and its writer thread. Cloning gives another handle on the same queue.
#[derive(Clone, Debug)]
pub struct StderrQueue {
    tx: Sender<Msg>,
    queued_bytes: Arc<AtomicUsize>,
    max_bytes: usize,
    stats: Arc<StderrStats>,
}

impl StderrQueue {
    /// Starts a writer thread that writes to `out` what is queued (at most `max_lines` lines
    /// and `max_bytes` bytes). When the thread cannot start, every line is dropped and counted.
    pub fn start<W: Write + Send + 'static>(out: W, max_lines: usize, max_bytes: usize) -> Self {
        let (tx, rx) = bounded(max_lines);
        let queued_bytes = Arc::new(AtomicUsize::new(0));
        let bytes = queued_bytes.clone();
        let _ = std::thread::Builder::new()
            .name("mcp-bridge-stderr".into())
            .spawn(move || write_loop(out, rx, bytes));
        StderrQueue {
            tx,
            queued_bytes,
            max_bytes,
            stats: Arc::new(StderrStats::default()),
        }
    }

    /// Queues one line (ending with its newline) without waiting: a line that finds the
    /// queue full (in lines, or in bytes unless it is empty) is dropped and counted. Returns
    /// whether it was queued.
    pub fn push(&self, line: Vec<u8>, source: Source) -> bool {
        let len = line.len();
        let before = self.queued_bytes.fetch_add(len, Ordering::AcqRel);
        let taken = (before == 0 || before + len <= self.max_bytes)
            && match self.tx.try_send(Msg::Line(line)) {
                Ok(()) => true,
                Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => false,
            };
        if !taken {
            self.queued_bytes.fetch_sub(len, Ordering::AcqRel);
        }
        self.stats.count(source, taken);
        taken
    }

    /// Waits at most `limit` until everything queued before the call is written. Returns
    /// whether it was (false: the stderr blocks, or the writer thread is gone).
    pub fn flush(&self, limit: Duration) -> bool {
        let end = Instant::now() + limit;
        let (ack_tx, ack_rx) = bounded(1);
        if self.tx.send_deadline(Msg::Flush(ack_tx), end).is_err() {
            return false;
        }
        ack_rx.recv_deadline(end).is_ok()
    }

    /// The counters.
    pub fn stats(&self) -> &Arc<StderrStats> {
        &self.stats
    }
}

fn write_loop<W: Write>(mut out: W, rx: Receiver<Msg>, queued_bytes: Arc<AtomicUsize>) {
    let mut batch = Vec::new();
    let mut acks = Vec::new();
    while let Ok(first) = rx.recv() {
        let mut next = Some(first);
        while let Some(msg) = next.take() {
            match msg {
                Msg::Line(line) => {
                    queued_bytes.fetch_sub(line.len(), Ordering::AcqRel);
                    batch.extend_from_slice(&line);
                }
                Msg::Flush(ack) => acks.push(ack),
            }
            if batch.len() < STDERR_WRITE_BATCH_BYTES && acks.is_empty() {
                next = rx.try_recv().ok();
            }
        }
        // A stderr that fails (closed) is not retried: the line is lost, the bridge goes on.
        let _ = out.write_all(&batch);
        let _ = out.flush();
        batch.clear();
        for ack in acks.drain(..) {
            let _ = ack.send(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::sync::mpsc;

    /// A writer that reports each write and then waits for a go before it returns.
    struct Gated {
        entered: mpsc::Sender<()>,
        go: Arc<Mutex<mpsc::Receiver<()>>>,
        out: Arc<Mutex<Vec<u8>>>,
    }

    impl Write for Gated {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let _ = self.entered.send(());
            let _ = self.go.lock().unwrap().recv();
            self.out.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// A queue on a [`Gated`] writer, with the writer's "entered" signal, its go and its output.
    type GatedQueue = (
        StderrQueue,
        mpsc::Receiver<()>,
        mpsc::Sender<()>,
        Arc<Mutex<Vec<u8>>>,
    );

    fn gated(lines: usize, bytes: usize) -> GatedQueue {
        let (entered_tx, entered) = mpsc::channel();
        let (go, go_rx) = mpsc::channel();
        let out = Arc::new(Mutex::new(Vec::new()));
        let q = StderrQueue::start(
            Gated {
                entered: entered_tx,
                go: Arc::new(Mutex::new(go_rx)),
                out: out.clone(),
            },
            lines,
            bytes,
        );
        (q, entered, go, out)
    }

    #[test]
    fn a_blocked_stderr_drops_and_counts_what_does_not_fit() {
        let (q, entered, go, out) = gated(2, 1 << 20);
        assert!(q.push(b"one\n".to_vec(), Source::Bridge));
        // The writer holds "one" and is blocked in its write: the queue is empty again.
        entered.recv().unwrap();
        assert!(q.push(b"two\n".to_vec(), Source::Upstream));
        assert!(q.push(b"three\n".to_vec(), Source::Bridge));
        assert!(!q.push(b"four\n".to_vec(), Source::Upstream));
        assert!(!q.push(b"five\n".to_vec(), Source::Bridge));
        assert_eq!(
            q.stats().line(),
            "stderr: lines=3 dropped_lines=2 upstream_lines=1 upstream_dropped_lines=1"
        );
        for _ in 0..8 {
            let _ = go.send(());
        }
        assert!(q.flush(Duration::from_secs(10)));
        assert_eq!(out.lock().unwrap().as_slice(), b"one\ntwo\nthree\n");
    }

    #[test]
    fn the_byte_bound_drops_a_line_unless_the_queue_is_empty() {
        let (q, entered, go, out) = gated(100, 10);
        assert!(q.push(b"first line over ten\n".to_vec(), Source::Bridge));
        entered.recv().unwrap();
        // The queue is empty again: any one line fits, then only what stays within 10 bytes.
        assert!(q.push(b"a long line of 22 b\n".to_vec(), Source::Bridge));
        assert!(!q.push(b"b\n".to_vec(), Source::Bridge));
        for _ in 0..8 {
            let _ = go.send(());
        }
        assert!(q.flush(Duration::from_secs(10)));
        assert!(q.push(b"0123456\n".to_vec(), Source::Bridge));
        assert!(q.push(b"c\n".to_vec(), Source::Bridge));
        for _ in 0..8 {
            let _ = go.send(());
        }
        assert!(q.flush(Duration::from_secs(10)));
        assert_eq!(
            String::from_utf8_lossy(&out.lock().unwrap()),
            "first line over ten\na long line of 22 b\n0123456\nc\n"
        );
    }

    #[test]
    fn flush_gives_up_at_its_limit_when_stderr_blocks() {
        let (q, entered, _go, _out) = gated(4, 1 << 20);
        assert!(q.push(b"stuck\n".to_vec(), Source::Bridge));
        entered.recv().unwrap();
        let t = Instant::now();
        assert!(!q.flush(Duration::from_millis(50)));
        assert!(t.elapsed() >= Duration::from_millis(50));
    }
}
