//! Newline framing with a bound: bytes in at any boundary, whole lines out. A line longer than
//! the limit is not kept: only its first [`TOO_LONG_HEAD_BYTES`] bytes survive (for a log line),
//! and its request id is recovered while it streams through, from every byte of the line, so the
//! answer never depends on how the bytes were split into reads.

use super::idscan::IdScanner;
use super::jsonrpc::Id;

/// How many bytes of the start of an over-long line are kept (for a log or stderr line).
pub const TOO_LONG_HEAD_BYTES: usize = 256;

/// Default limit of one line, in bytes (64 MiB), on the editor side and on the upstream side.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024 * 1024;
/// Greatest accepted `--max-line-bytes` (1 GiB).
pub const MAX_MAX_LINE_BYTES: usize = 1024 * 1024 * 1024;

/// One framed unit of input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// A complete line without its `\n` (and without a trailing `\r`). Never empty.
    Line(Vec<u8>),
    /// A line longer than the limit: its length in bytes, its first [`TOO_LONG_HEAD_BYTES`]
    /// bytes, and the request id recovered from the whole line ([`IdScanner`]: the last
    /// top-level `"id"` member; `None` when no id is known for sure).
    TooLong {
        len_bytes: usize,
        head: Vec<u8>,
        id: Option<Id>,
    },
}

/// A bounded line reader: feed it bytes with [`LineFramer::push`], take frames out.
#[derive(Debug)]
pub struct LineFramer {
    max_line_bytes: usize,
    buf: Vec<u8>,
    overflow: Option<Overflow>,
}

#[derive(Debug)]
struct Overflow {
    len_bytes: usize,
    head: Vec<u8>,
    ids: IdScanner,
}

impl LineFramer {
    /// A framer that refuses lines longer than `max_line_bytes` (not counting the newline).
    pub fn new(max_line_bytes: usize) -> Self {
        LineFramer {
            max_line_bytes: max_line_bytes.max(1),
            buf: Vec::new(),
            overflow: None,
        }
    }

    /// Feeds a chunk of bytes; complete frames are appended to `out`.
    pub fn push(&mut self, mut chunk: &[u8], out: &mut Vec<Frame>) {
        while !chunk.is_empty() {
            match chunk.iter().position(|&b| b == b'\n') {
                Some(nl) => {
                    self.append(&chunk[..nl]);
                    self.end_line(out);
                    chunk = &chunk[nl + 1..];
                }
                None => {
                    self.append(chunk);
                    chunk = &[];
                }
            }
        }
    }

    /// Ends the input: a last line without a newline is still a frame.
    pub fn finish(&mut self, out: &mut Vec<Frame>) {
        self.end_line(out);
    }

    /// Bytes held for the current, unfinished line.
    pub fn buffered_bytes(&self) -> usize {
        self.buf.len()
    }

    fn append(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if let Some(ov) = &mut self.overflow {
            ov.len_bytes += bytes.len();
            let need = TOO_LONG_HEAD_BYTES.saturating_sub(ov.head.len());
            ov.head.extend_from_slice(&bytes[..need.min(bytes.len())]);
            ov.ids.push(bytes);
            return;
        }
        if self.buf.len() + bytes.len() <= self.max_line_bytes {
            self.buf.extend_from_slice(bytes);
            return;
        }
        // Over the limit: from here on the line streams through the id scanner and only its
        // head is kept. The scanner starts at the line's first byte (the held part).
        let held = std::mem::take(&mut self.buf);
        let mut ids = IdScanner::new();
        ids.push(&held);
        ids.push(bytes);
        let mut head = held[..held.len().min(TOO_LONG_HEAD_BYTES)].to_vec();
        let need = TOO_LONG_HEAD_BYTES - head.len();
        head.extend_from_slice(&bytes[..need.min(bytes.len())]);
        self.overflow = Some(Overflow {
            len_bytes: held.len() + bytes.len(),
            head,
            ids,
        });
    }

    fn end_line(&mut self, out: &mut Vec<Frame>) {
        if let Some(ov) = self.overflow.take() {
            out.push(Frame::TooLong {
                len_bytes: ov.len_bytes,
                head: ov.head,
                id: ov.ids.finish(),
            });
            return;
        }
        let mut line = std::mem::take(&mut self.buf);
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            return;
        }
        out.push(Frame::Line(line));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames_of(input: &[u8], max: usize, chunks: &[usize]) -> Vec<Frame> {
        let mut f = LineFramer::new(max);
        let mut out = Vec::new();
        let mut rest = input;
        let mut i = 0;
        while !rest.is_empty() {
            let n = chunks[i % chunks.len()].max(1).min(rest.len());
            f.push(&rest[..n], &mut out);
            rest = &rest[n..];
            i += 1;
        }
        f.finish(&mut out);
        out
    }

    /// A small deterministic generator (xorshift64*) for chunk sizes.
    fn chunk_sizes(seed: u64, n: usize, max: usize) -> Vec<usize> {
        let mut x = seed.max(1);
        (0..n)
            .map(|_| {
                x ^= x >> 12;
                x ^= x << 25;
                x ^= x >> 27;
                (x.wrapping_mul(0x2545_F491_4F6C_DD1D) % max as u64) as usize + 1
            })
            .collect()
    }

    #[test]
    fn any_byte_boundaries_give_the_same_frames() {
        let long = format!("{{\"id\":1,\"x\":\"{}\",\"id\":2}}", "y".repeat(2000));
        let input = format!("a\r\n\n{{\"b\":1}}\n{long}\nlast");
        let want = frames_of(input.as_bytes(), 1000, &[input.len()]);
        assert_eq!(want.len(), 4);
        assert_eq!(want[0], Frame::Line(b"a".to_vec()));
        assert_eq!(want[3], Frame::Line(b"last".to_vec()));
        let Frame::TooLong {
            len_bytes,
            head,
            id,
        } = &want[2]
        else {
            panic!("expected TooLong, got {:?}", want[2]);
        };
        assert_eq!(*len_bytes, long.len());
        assert_eq!(head.as_slice(), &long.as_bytes()[..256]);
        // The parser keeps the last of two "id" members, so the recovery does too.
        assert_eq!(*id, Some(Id::Int(2)));
        assert_eq!(
            frames_of(input.as_bytes(), 1000, &[1]),
            want,
            "one byte at a time"
        );
        for seed in 1..50 {
            let sizes = chunk_sizes(seed, 64, 700);
            assert_eq!(
                frames_of(input.as_bytes(), 1000, &sizes),
                want,
                "seed {seed}"
            );
        }
    }

    #[test]
    fn a_line_of_exactly_the_limit_passes() {
        let out = frames_of(b"12345\n123456\n", 5, &[3]);
        assert_eq!(out[0], Frame::Line(b"12345".to_vec()));
        assert!(matches!(out[1], Frame::TooLong { len_bytes: 6, .. }));
    }
}
