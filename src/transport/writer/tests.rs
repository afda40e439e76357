use super::*;
use crate::protocol::wire::parts::FrameParts;
use crate::transport::queue::{EDITOR_QUEUE, WRITE_BATCH_MAX_FRAMES};
use bytes::Bytes;
use std::io::IoSlice;

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
    let big = Bytes::from(vec![b'x'; crate::protocol::wire::parts::SHARE_MIN_BYTES]);
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

#[tokio::test]
async fn a_channel_writer_sends_each_frame_as_a_line_then_closes_the_channel() {
    // A channel of one line: the second and third frames wait in the queue meanwhile.
    let (lines, mut received) = mpsc::channel(1);
    let writer = Writer::for_line_channel(lines, EDITOR_QUEUE, QueueStats::new("test_queue"));
    for text in ["a", "b", "c"] {
        assert_eq!(
            writer.send_frame(frame(text), Delivery::Always),
            Sent::Queued
        );
    }
    writer.close();
    let mut got = Vec::new();
    while let Some(line) = received.recv().await {
        got.push(line);
    }
    assert_eq!(got, ["a", "b", "c"]);
    assert_eq!(
        writer
            .drain(Duration::from_secs(1), Duration::from_secs(1))
            .await,
        Drain::Done
    );
    assert_eq!(
        writer.send_frame(frame("d"), Delivery::Always),
        Sent::Closed
    );
}

#[tokio::test]
async fn a_channel_writer_whose_receiver_is_gone_fails_as_a_broken_pipe() {
    let (lines, received) = mpsc::channel(1);
    let writer = Writer::for_line_channel(lines, EDITOR_QUEUE, QueueStats::new("test_queue"));
    drop(received);
    assert_eq!(
        writer.send_frame(frame("a"), Delivery::Always),
        Sent::Queued
    );
    assert_eq!(
        writer
            .drain(Duration::from_secs(5), Duration::from_secs(5))
            .await,
        Drain::Done
    );
    assert_eq!(writer.queued(), (0, 0));
}
