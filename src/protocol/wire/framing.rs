//! The one codec of newline-delimited JSON-RPC (2026-07-28 basic/transports/stdio: one message
//! per line, no newline inside a message): a `tokio_util::codec` [`Decoder`] of bounded lines
//! and an [`Encoder`] of messages. Every line the bridge and the server API read goes through
//! it: the editor's stdin (a pipe, a terminal or a file), the child's stdout, the child's
//! stderr (in [`LineMode::Text`]) and the server API's input.
//!
//! The rules of [`FrameCodec::decode`] and [`FrameCodec::decode_eof`], whatever the split of
//! the bytes into reads:
//! - a line is the bytes before a `\n`; one trailing `\r` is dropped (CRLF input);
//! - a line longer than the limit (counted without its `\n` and without the `\r` before it,
//!   so CRLF input has the limit of LF input) is not kept: it
//!   streams through, only its first [`TOO_LONG_HEAD_BYTES`] bytes are kept (for a log line),
//!   and in [`LineMode::Messages`] its request id is recovered from every byte of it
//!   ([`IdScanner`]); the codec discards up to the next `\n` and then reads on;
//! - in [`LineMode::Messages`] an empty or blank line (ASCII whitespace only) is skipped, it is
//!   no message; in [`LineMode::Text`] it is a line like any other;
//! - at the end of input, a last line without its `\n` is still a frame;
//! - in [`LineMode::Messages`] one UTF-8 byte order mark at the very start of the stream is
//!   dropped (RFC 8259 §8.1 lets a parser ignore one; Windows tools such as PowerShell and .NET
//!   write one before their first line), on the editor's stdin and the child's stdout alike; a
//!   mark anywhere else stays in its line (a parse error, its id still recovered by
//!   [`IdScanner`]). [`LineMode::Text`] keeps every byte.
//!
//! Pure: bytes in a `BytesMut` in, frames out; no I/O. A line is split off the read buffer
//! without a copy.
//!
//! Memory (what the rules above leave to the codec): a line of [`KEEP_BUFFER_BYTES`] or more
//! takes the buffer it was read into with it, and what follows it moves to a small buffer of
//! its own, so a large message does not leave its memory behind. With a [`SpareBuffer`]
//! ([`FrameCodec::with_spare`]; the reader that owns one decides how long it keeps a block),
//! that buffer comes back when the line's last piece is dropped, and the next pending line of
//! [`SPARE_MOVE_BYTES`] or more whose buffer must grow moves into it (a copy of at most
//! [`KEEP_BUFFER_BYTES`], usually one read chunk) instead of growing into a fresh block: a
//! second 16 MiB line is read into pages already mapped. A line that completes in a buffer of
//! more than [`KEEP_BUFFER_BYTES`] takes that buffer with it when it is [`KEEP_BUFFER_BYTES`]
//! or longer; a shorter one is copied out and the buffer goes back to the spare at once.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use serde_json::Value;
use tokio_util::codec::{Decoder, Encoder};

use super::id::Id;
use super::idscan::{IdScanner, UTF8_BOM};
use super::spare::{KEEP_BUFFER_BYTES, SpareBuffer};

/// How many bytes of the start of an over-long line are kept (for a log or stderr line).
pub const TOO_LONG_HEAD_BYTES: usize = 256;

/// Default limit of one line, in bytes (64 MiB), on the editor side and on the upstream side.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024 * 1024;
/// Greatest accepted `--max-line-bytes` (1 GiB).
pub const MAX_MAX_LINE_BYTES: usize = 1024 * 1024 * 1024;

/// Room the decoder makes in its buffer for the next reads, in bytes (64 KiB): a read takes up
/// to what is left of it at once (at least a quarter), so a short read means the pipe is
/// drained.
pub const READ_CHUNK_BYTES: usize = 64 * 1024;

/// A pending line this long (in bytes, 32 KiB) whose buffer must grow moves into the spare's
/// block, when a [`SpareBuffer`] keeps one. Early, at the first growth of a read buffer, so that
/// the line's pages are the spare's pages: moving at [`KEEP_BUFFER_BYTES`] let the line touch
/// 1 MiB of fresh memory next to the kept block first (+1 MiB peak RSS for a 16 MiB result,
/// measured); a line of less than 32 KiB is never worth the copy.
pub const SPARE_MOVE_BYTES: usize = READ_CHUNK_BYTES / 2;

/// One framed unit of input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// A complete line without its `\n` (and without a trailing `\r`). Never empty and never
    /// blank in [`LineMode::Messages`].
    Line(Bytes),
    /// A line longer than the limit: its length in bytes, its first [`TOO_LONG_HEAD_BYTES`]
    /// bytes, and the request id recovered from the whole line ([`IdScanner`]: the last
    /// top-level `"id"` member; `None` when no id is known for sure, and always `None` in
    /// [`LineMode::Text`]).
    TooLong {
        len_bytes: usize,
        head: Vec<u8>,
        id: Option<Id>,
    },
}

impl Frame {
    /// The frame as a warning quotes it ([`super::excerpt::excerpt`]): the first bytes of the line
    /// (of its head, for a line over the limit, which ends with the line's whole length in
    /// bytes), escaped.
    pub fn excerpt(&self) -> String {
        match self {
            Frame::Line(l) => super::excerpt::excerpt(l),
            Frame::TooLong {
                head, len_bytes, ..
            } => super::excerpt::excerpt_of(head, *len_bytes),
        }
    }
}

/// What the lines hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineMode {
    /// JSON-RPC messages: blank lines are skipped, an over-long line gets its id recovered.
    Messages,
    /// Text for a human (the child's stderr): every line counts, blank ones included; no id is
    /// looked for.
    Text,
}

/// The codec: a bounded line [`Decoder`] (rules in the module doc) and an [`Encoder`] of
/// `&Value` messages as one line each ([`encode_message`]).
#[derive(Debug)]
pub struct FrameCodec {
    max_line_bytes: usize,
    mode: LineMode,
    /// Bytes at the start of the buffer already known to hold no `\n`.
    searched: usize,
    /// Discarding mode: the over-long line being streamed through.
    overflow: Option<Overflow>,
    /// No byte of the stream has been framed yet: a byte order mark there is dropped.
    bom_pending: bool,
    /// Where large buffers go back to and come from ([`FrameCodec::with_spare`]).
    spare: Option<SpareBuffer>,
}

#[derive(Debug)]
struct Overflow {
    len_bytes: usize,
    head: Vec<u8>,
    ids: Option<IdScanner>,
    /// The last byte pushed is a `\r` (not counted in the length when the `\n` follows).
    ends_with_cr: bool,
}

impl Overflow {
    fn start(mode: LineMode) -> Self {
        Overflow {
            len_bytes: 0,
            head: Vec::new(),
            ids: (mode == LineMode::Messages).then(IdScanner::new),
            ends_with_cr: false,
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        if let Some(&last) = bytes.last() {
            self.ends_with_cr = last == b'\r';
        }
        self.len_bytes += bytes.len();
        let need = TOO_LONG_HEAD_BYTES.saturating_sub(self.head.len());
        self.head.extend_from_slice(&bytes[..need.min(bytes.len())]);
        if let Some(ids) = &mut self.ids {
            ids.push(bytes);
        }
    }

    /// The frame of the line, which ended at a `\n` or at the end of input (its length
    /// without a trailing `\r`, as a kept line is).
    fn finish(self) -> Frame {
        Frame::TooLong {
            len_bytes: self.len_bytes - usize::from(self.ends_with_cr),
            head: self.head,
            id: self.ids.and_then(IdScanner::finish),
        }
    }
}

impl FrameCodec {
    /// A codec of JSON-RPC messages ([`LineMode::Messages`]) that refuses lines longer than
    /// `max_line_bytes` (not counting the `\n`; at least 1).
    pub fn new(max_line_bytes: usize) -> Self {
        Self::with_mode(max_line_bytes, LineMode::Messages)
    }

    /// A codec of text lines ([`LineMode::Text`]) cut at `max_line_bytes`.
    pub fn text(max_line_bytes: usize) -> Self {
        Self::with_mode(max_line_bytes, LineMode::Text)
    }

    fn with_mode(max_line_bytes: usize, mode: LineMode) -> Self {
        FrameCodec {
            max_line_bytes: max_line_bytes.max(1),
            mode,
            searched: 0,
            overflow: None,
            bom_pending: mode == LineMode::Messages,
            spare: None,
        }
    }

    /// The same codec reading large lines with `spare` (module doc): a line of
    /// [`KEEP_BUFFER_BYTES`] or more that completes in a buffer of more than that is lent the
    /// buffer ([`SpareBuffer::lend`]), a shorter one is copied out and gives the buffer back,
    /// and a pending line of [`SPARE_MOVE_BYTES`] or more whose buffer must grow moves into the
    /// spare's kept block when there is one. Whoever holds `spare` expires its block.
    pub fn with_spare(mut self, spare: SpareBuffer) -> Self {
        self.spare = Some(spare);
        self
    }

    /// The next frame in `buf`, or `None` when `buf` holds no complete line (what is left
    /// stays in `buf`, or streams through the over-long line). Never fails.
    fn next_frame(&mut self, buf: &mut BytesMut) -> Option<Frame> {
        if self.bom_pending {
            let n = buf.len().min(UTF8_BOM.len());
            if buf[..n] != UTF8_BOM[..n] {
                self.bom_pending = false;
            } else if n == UTF8_BOM.len() {
                buf.advance(n);
                self.bom_pending = false;
            } else {
                // The start of a mark, or nothing yet: wait for more bytes (at the end of
                // input the newline added by `decode_eof` settles it).
                return None;
            }
        }
        loop {
            if let Some(ov) = &mut self.overflow {
                match memchr::memchr(b'\n', buf) {
                    Some(nl) => {
                        ov.push(&buf[..nl]);
                        buf.advance(nl + 1);
                        return self.overflow.take().map(Overflow::finish);
                    }
                    None => {
                        ov.push(buf);
                        buf.clear();
                        release_large(buf, self.spare.as_ref());
                        return None;
                    }
                }
            }
            let Some(found) = memchr::memchr(b'\n', &buf[self.searched..]) else {
                // One byte over the limit may still be the `\r` of a CRLF whose `\n` comes
                // with the next read.
                let cr_may_end = buf.len() == self.max_line_bytes + 1 && buf.last() == Some(&b'\r');
                if buf.len() > self.max_line_bytes && !cr_may_end {
                    // Over the limit: from here on the line streams through (and through the
                    // id scanner, from its first byte on).
                    let mut ov = Overflow::start(self.mode);
                    ov.push(buf);
                    buf.clear();
                    release_large(buf, self.spare.as_ref());
                    self.overflow = Some(ov);
                    self.searched = 0;
                    return None;
                }
                self.searched = buf.len();
                return None;
            };
            let nl = self.searched + found;
            self.searched = 0;
            let len = if nl > 0 && buf[nl - 1] == b'\r' {
                nl - 1
            } else {
                nl
            };
            if len > self.max_line_bytes {
                let mut ov = Overflow::start(self.mode);
                ov.push(&buf[..nl]);
                buf.advance(nl + 1);
                return Some(ov.finish());
            }
            if let Some(spare) = self
                .spare
                .as_ref()
                .filter(|_| buf.capacity() > KEEP_BUFFER_BYTES)
            {
                // The buffer leaves the reads; what follows the line moves to a small one.
                let rest = own_buffer(&buf[nl + 1..]);
                let mut block = std::mem::replace(buf, rest);
                block.truncate(len);
                if self.mode == LineMode::Messages && block.iter().all(u8::is_ascii_whitespace) {
                    spare.put_back(block);
                    continue;
                }
                if len >= KEEP_BUFFER_BYTES {
                    // A large line takes the whole buffer.
                    return Some(Frame::Line(spare.lend(block)));
                }
                // A smaller one is copied out (at most 1 MiB), so that it never holds the
                // spare's block while it lives (a request may live for minutes).
                let line = Bytes::copy_from_slice(&block);
                spare.put_back(block);
                return Some(Frame::Line(line));
            }
            let mut line = buf.split_to(nl + 1);
            line.truncate(nl);
            if line.last() == Some(&b'\r') {
                line.truncate(nl - 1);
            }
            if line.len() >= KEEP_BUFFER_BYTES {
                give_away(buf);
            }
            if self.mode == LineMode::Messages && line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            return Some(Frame::Line(line.freeze()));
        }
    }
}

/// Replaces an empty buffer that grew large with a small one (giving the large one back to
/// `spare`, if any).
fn release_large(buf: &mut BytesMut, spare: Option<&SpareBuffer>) {
    if buf.is_empty() && buf.capacity() > KEEP_BUFFER_BYTES {
        let large = std::mem::take(buf);
        if let Some(spare) = spare {
            spare.put_back(large);
        }
    }
}

/// A buffer of its own holding `bytes`, with room for a read.
fn own_buffer(bytes: &[u8]) -> BytesMut {
    let mut fresh = BytesMut::with_capacity(bytes.len() + READ_CHUNK_BYTES);
    fresh.extend_from_slice(bytes);
    fresh
}

/// Moves what follows a large line into a buffer of its own, so the line alone holds the large
/// allocation and frees it when it is dropped.
fn give_away(buf: &mut BytesMut) {
    *buf = own_buffer(buf);
}

impl FrameCodec {
    /// Keeps room for a read before the caller reads again: when less than a quarter of
    /// [`READ_CHUNK_BYTES`] is left, room for a whole one is made. Not every time: while a line
    /// split off the buffer is still alive, making room means a new allocation. When the buffer
    /// (of at most [`KEEP_BUFFER_BYTES`]) must grow for a pending line of at least
    /// [`SPARE_MOVE_BYTES`] and the spare keeps a block, the pending bytes move into that block
    /// instead (a copy of at most [`KEEP_BUFFER_BYTES`], usually of one read chunk).
    fn keep_read_room(&self, buf: &mut BytesMut) {
        if buf.capacity() - buf.len() >= READ_CHUNK_BYTES / 4 {
            return;
        }
        let may_move = buf.capacity() <= KEEP_BUFFER_BYTES && buf.len() >= SPARE_MOVE_BYTES;
        if may_move
            && self.overflow.is_none()
            && let Some(mut block) = self.spare.as_ref().and_then(SpareBuffer::take)
        {
            block.extend_from_slice(buf);
            *buf = block;
            if buf.capacity() - buf.len() >= READ_CHUNK_BYTES / 4 {
                return;
            }
        }
        buf.reserve(READ_CHUNK_BYTES);
    }
}

impl Decoder for FrameCodec {
    type Item = Frame;
    type Error = std::io::Error;

    /// The next complete frame of `buf` (rules in the module doc); `None` asks for more bytes
    /// and leaves room for a read ([`READ_CHUNK_BYTES`]). Never an error.
    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, std::io::Error> {
        let frame = self.next_frame(buf);
        if frame.is_none() {
            self.keep_read_room(buf);
        }
        Ok(frame)
    }

    /// At the end of input: the complete frames, then the last line without its `\n` (or the
    /// over-long line it ends), then `None`. Never an error.
    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, std::io::Error> {
        if let Some(frame) = self.next_frame(buf) {
            return Ok(Some(frame));
        }
        if let Some(ov) = self.overflow.take() {
            return Ok(Some(ov.finish()));
        }
        if buf.is_empty() {
            return Ok(None);
        }
        // The last line: as if its newline had come.
        buf.put_u8(b'\n');
        Ok(self.next_frame(buf))
    }
}

impl Encoder<&Value> for FrameCodec {
    type Error = std::io::Error;

    /// Appends `msg` as one line ([`write_message`] and `\n`).
    fn encode(&mut self, msg: &Value, dst: &mut BytesMut) -> Result<(), std::io::Error> {
        write_message(msg, &mut dst.writer())?;
        dst.put_u8(b'\n');
        Ok(())
    }
}

/// Writes one message's JSON text, the one encoding of every frame the crate writes (the
/// bridge's writer, the codec, and the server API's output): compact, and never holding a
/// newline (serde_json escapes control characters in strings and writes no whitespace), so
/// that it is one line of the stdio transport (2025-11-25 basic/transports, "Messages MUST
/// NOT contain embedded newlines"). It writes through `io::Write` (straight into the buffer)
/// rather than `Display`, which goes through a `fmt::Formatter` for every piece.
///
/// Errors: those of `out`; a `Value` itself always serializes (its keys are strings).
pub fn write_message(msg: &Value, out: &mut impl std::io::Write) -> std::io::Result<()> {
    serde_json::to_writer(out, msg).map_err(std::io::Error::from)
}

/// One message's JSON text ([`write_message`]).
pub fn message_text(msg: &Value) -> String {
    let mut text = Vec::new();
    // Writing into a Vec cannot fail, and serde_json writes UTF-8 only.
    let _ = write_message(msg, &mut text);
    String::from_utf8(text).unwrap_or_default()
}

/// One message as one line: its [`write_message`] text and `\n`.
///
/// Errors: none today (a `Value` always serializes into a Vec); the `Result` keeps the
/// writer's contract if the encoding ever can fail.
pub fn encode_message(msg: &Value) -> serde_json::Result<Vec<u8>> {
    let mut line = Vec::new();
    write_message(msg, &mut line).map_err(serde_json::Error::io)?;
    line.push(b'\n');
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn frames_with(mut codec: FrameCodec, input: &[u8], chunks: &[usize]) -> Vec<Frame> {
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        let mut rest = input;
        let mut i = 0;
        while !rest.is_empty() {
            let n = chunks[i % chunks.len()].max(1).min(rest.len());
            buf.extend_from_slice(&rest[..n]);
            while let Ok(Some(f)) = codec.decode(&mut buf) {
                out.push(f);
            }
            rest = &rest[n..];
            i += 1;
        }
        while let Ok(Some(f)) = codec.decode_eof(&mut buf) {
            out.push(f);
        }
        out
    }

    fn frames_of(input: &[u8], max: usize, chunks: &[usize]) -> Vec<Frame> {
        frames_with(FrameCodec::new(max), input, chunks)
    }

    fn line(bytes: &[u8]) -> Frame {
        Frame::Line(Bytes::copy_from_slice(bytes))
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
        assert_eq!(want[0], line(b"a"));
        assert_eq!(want[1], line(b"{\"b\":1}"));
        assert_eq!(want[3], line(b"last"));
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
        assert_eq!(out[0], line(b"12345"));
        assert!(matches!(out[1], Frame::TooLong { len_bytes: 6, .. }));
        assert_eq!(out.len(), 2);
    }

    /// The table of the line rules: input, limit, frames (in both modes where they differ).
    #[test]
    fn line_rules_table() {
        let too_long = |len_bytes: usize, head: &[u8], id: Option<Id>| Frame::TooLong {
            len_bytes,
            head: head.to_vec(),
            id,
        };
        let cases: Vec<(&str, &[u8], usize, Vec<Frame>)> = vec![
            ("empty input", b"", 10, vec![]),
            ("LF", b"a\nb\n", 10, vec![line(b"a"), line(b"b")]),
            ("CRLF", b"a\r\nb\r\n", 10, vec![line(b"a"), line(b"b")]),
            ("only one CR goes", b"a\r\r\n", 10, vec![line(b"a\r")]),
            ("a CR inside stays", b"a\rb\n", 10, vec![line(b"a\rb")]),
            (
                "blank lines skipped",
                b"\n\r\n \t\n\x0c\na\n",
                10,
                vec![line(b"a")],
            ),
            (
                "last line without LF",
                b"a\nb",
                10,
                vec![line(b"a"), line(b"b")],
            ),
            ("last line CR without LF", b"b\r", 10, vec![line(b"b")]),
            ("last blank line", b"a\n  ", 10, vec![line(b"a")]),
            (
                "the CR of a CRLF does not count toward the limit",
                b"12345\r\n1234\r\n",
                5,
                vec![line(b"12345"), line(b"1234")],
            ),
            (
                "nor does a CR at the end of input",
                b"12345\r",
                5,
                vec![line(b"12345")],
            ),
            (
                "a CRLF line one byte over the limit",
                b"123456\r\nok\r\n",
                5,
                vec![too_long(6, b"123456\r", None), line(b"ok")],
            ),
            (
                "a CR over the limit that no LF follows",
                b"12345\rx\nok\n",
                5,
                vec![too_long(7, b"12345\rx", None), line(b"ok")],
            ),
            (
                "a CR inside counts",
                b"12\r45\r\n",
                5,
                vec![line(b"12\r45")],
            ),
            (
                "discarding ends at the newline",
                b"{\"id\":7,\"x\":1}\nok\n",
                5,
                vec![
                    too_long(14, b"{\"id\":7,\"x\":1}", Some(Id::Int(7))),
                    line(b"ok"),
                ],
            ),
            (
                "an over-long last line without LF",
                b"ok\n{\"id\":\"s\"}",
                5,
                vec![
                    line(b"ok"),
                    too_long(10, b"{\"id\":\"s\"}", Some(Id::Str("s".into()))),
                ],
            ),
            (
                "two over-long lines in a row",
                b"123456\n1234567\n",
                5,
                vec![too_long(6, b"123456", None), too_long(7, b"1234567", None)],
            ),
            (
                "a byte order mark at the start of the stream is dropped",
                b"\xEF\xBB\xBF{}\n{}\n",
                10,
                vec![line(b"{}"), line(b"{}")],
            ),
            (
                "and does not count toward the limit",
                b"\xEF\xBB\xBF12345\n",
                5,
                vec![line(b"12345")],
            ),
            (
                "a second one stays",
                b"\xEF\xBB\xBF\xEF\xBB\xBF{}\n",
                10,
                vec![line(b"\xEF\xBB\xBF{}")],
            ),
            (
                "one at the start of a later line stays",
                b"a\n\xEF\xBB\xBF{}\n",
                10,
                vec![line(b"a"), line(b"\xEF\xBB\xBF{}")],
            ),
            (
                "one after a blank first line stays",
                b"\n\xEF\xBB\xBF{}\n",
                10,
                vec![line(b"\xEF\xBB\xBF{}")],
            ),
            (
                "a cut mark at the end of input stays",
                b"\xEF\xBB",
                10,
                vec![line(b"\xEF\xBB")],
            ),
            (
                "a mark alone is a blank stream",
                b"\xEF\xBB\xBF\n",
                10,
                vec![],
            ),
        ];
        for (name, input, max, want) in cases {
            for chunks in [&[input.len().max(1)][..], &[1], &[2, 3], &[6, 1], &[5, 2]] {
                assert_eq!(
                    frames_of(input, max, chunks),
                    want,
                    "{name}, reads {chunks:?}"
                );
            }
        }
    }

    #[test]
    fn the_head_of_an_over_long_line_is_its_first_bytes() {
        let long: Vec<u8> = (0..5000u32).map(|i| b'a' + (i % 26) as u8).collect();
        let mut input = long.clone();
        input.push(b'\n');
        for chunks in [&[5001][..], &[1], &[100, 7]] {
            let out = frames_of(&input, 1000, chunks);
            assert_eq!(
                out,
                vec![Frame::TooLong {
                    len_bytes: 5000,
                    head: long[..TOO_LONG_HEAD_BYTES].to_vec(),
                    id: None,
                }]
            );
        }
    }

    #[test]
    fn text_mode_keeps_a_byte_order_mark() {
        let out = frames_with(FrameCodec::text(10), b"\xEF\xBB\xBFa\n", &[1]);
        assert_eq!(out, vec![line(b"\xEF\xBB\xBFa")]);
    }

    #[test]
    fn text_mode_keeps_blank_lines_and_looks_for_no_id() {
        let input = b"one\n\n  \r\n{\"id\":1,\"pad\":\"xxxxxxxx\"}\nlast";
        let out = frames_with(FrameCodec::text(10), input, &[3]);
        assert_eq!(
            out,
            vec![
                line(b"one"),
                line(b""),
                line(b"  "),
                Frame::TooLong {
                    len_bytes: 25,
                    head: b"{\"id\":1,\"pad\":\"xxxxxxxx\"}".to_vec(),
                    id: None,
                },
                line(b"last"),
            ]
        );
    }

    #[test]
    fn a_line_is_split_off_the_read_buffer_and_room_is_left_for_a_read() {
        let mut codec = FrameCodec::new(1 << 20);
        let mut buf = BytesMut::with_capacity(READ_CHUNK_BYTES);
        buf.extend_from_slice(b"{\"a\":1}\n{\"b\"");
        let start = buf.as_ptr();
        let Ok(Some(Frame::Line(first))) = codec.decode(&mut buf) else {
            panic!("expected a line");
        };
        assert_eq!(first.as_ptr(), start, "no copy");
        assert_eq!(&first[..], b"{\"a\":1}");
        assert!(matches!(codec.decode(&mut buf), Ok(None)));
        assert_eq!(&buf[..], b"{\"b\"");
        assert!(buf.capacity() - buf.len() >= READ_CHUNK_BYTES / 4);
    }

    #[test]
    fn a_large_line_takes_its_buffer_with_it() {
        let mut codec = FrameCodec::new(64 << 20);
        let mut buf = BytesMut::new();
        buf.extend_from_slice(&vec![b'x'; 2 * KEEP_BUFFER_BYTES]);
        buf.extend_from_slice(b"\nnext");
        let Ok(Some(Frame::Line(big))) = codec.decode(&mut buf) else {
            panic!("expected a line");
        };
        assert_eq!(big.len(), 2 * KEEP_BUFFER_BYTES);
        assert_eq!(&buf[..], b"next");
        assert!(buf.capacity() <= READ_CHUNK_BYTES + 4);
        // Discarding does not keep a large buffer either.
        let mut codec = FrameCodec::new(1000);
        let mut buf = BytesMut::new();
        buf.extend_from_slice(&vec![b'x'; 2 * KEEP_BUFFER_BYTES]);
        assert!(matches!(codec.decode(&mut buf), Ok(None)));
        assert!(buf.is_empty());
        assert!(buf.capacity() <= 2 * READ_CHUNK_BYTES);
    }

    /// Reads `input` as `FramedRead` does: decode until it asks for more, then one read of at
    /// most `sizes[i]` bytes into the room the codec left (never more: a read does not grow the
    /// buffer), and `decode_eof` at the end. Every frame goes to `each`.
    fn read_as_framed(
        codec: &mut FrameCodec,
        input: &[u8],
        sizes: &[usize],
        mut each: impl FnMut(Frame),
    ) {
        let mut buf = BytesMut::with_capacity(READ_CHUNK_BYTES);
        let mut rest = input;
        let mut i = 0;
        loop {
            while let Ok(Some(f)) = codec.decode(&mut buf) {
                each(f);
            }
            if rest.is_empty() {
                break;
            }
            let room = buf.capacity() - buf.len();
            assert!(room >= READ_CHUNK_BYTES / 4, "room for a read");
            let n = sizes[i % sizes.len()].clamp(1, room).min(rest.len());
            buf.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
            i += 1;
        }
        while let Ok(Some(f)) = codec.decode_eof(&mut buf) {
            each(f);
        }
    }

    /// A line of `len` bytes of letters starting at `first` (no newline, not blank).
    fn letters(first: u8, len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| b'a' + (first + (i % 26) as u8) % 26)
            .collect()
    }

    fn with_newline(mut line: Vec<u8>) -> Vec<u8> {
        line.push(b'\n');
        line
    }

    fn large_codec() -> (FrameCodec, SpareBuffer) {
        let spare = SpareBuffer::new();
        (FrameCodec::new(64 << 20).with_spare(spare.clone()), spare)
    }

    #[test]
    fn a_second_large_line_is_read_into_the_block_of_the_first() {
        let (mut codec, spare) = large_codec();
        let first = letters(0, 3 * KEEP_BUFFER_BYTES + 5);
        let mut got = Vec::new();
        read_as_framed(
            &mut codec,
            &with_newline(first.clone()),
            &[256 * 1024],
            |f| got.push(f),
        );
        let [Frame::Line(line)] = &got[..] else {
            panic!("expected one line, got {} frames", got.len());
        };
        assert_eq!(&line[..], &first[..]);
        let start = line.as_ptr();
        assert_eq!(spare.kept(), None, "the line holds its block");
        drop(got);
        let Some((block, capacity)) = spare.kept() else {
            panic!("the block came back");
        };
        assert_eq!(block, start, "the line was the start of its block");
        // The second line, then a small one after it in the same reads.
        let second = letters(7, 3 * KEEP_BUFFER_BYTES);
        let mut input = with_newline(second.clone());
        input.extend_from_slice(b"{\"small\":1}\n");
        let mut got = Vec::new();
        read_as_framed(&mut codec, &input, &[256 * 1024, 1000, 70_000], |f| {
            got.push(f)
        });
        let [Frame::Line(line), small] = &got[..] else {
            panic!("expected two lines, got {} frames", got.len());
        };
        assert_eq!(&line[..], &second[..]);
        assert_eq!(*small, Frame::Line(Bytes::from_static(b"{\"small\":1}")));
        assert_eq!(line.as_ptr(), block, "read into the first line's block");
        assert_eq!(spare.kept(), None);
        drop(got);
        assert_eq!(
            spare.kept(),
            Some((block, capacity)),
            "the same block came back, not grown"
        );
    }

    #[test]
    fn a_line_under_keep_buffer_bytes_is_copied_out_and_leaves_the_block_to_the_spare() {
        let (mut codec, spare) = large_codec();
        let mut got = Vec::new();
        let large = letters(0, 2 * KEEP_BUFFER_BYTES);
        read_as_framed(&mut codec, &with_newline(large), &[256 * 1024], |f| {
            got.push(f)
        });
        drop(got);
        let Some((block, capacity)) = spare.kept() else {
            panic!("the block came back");
        };
        let generation = spare.watch(None);
        // 100 KiB: moved into the block at its first growth, then copied out.
        let medium = letters(3, 100 * 1024);
        let mut got = Vec::new();
        read_as_framed(&mut codec, &with_newline(medium.clone()), &[20_000], |f| {
            got.push(f)
        });
        let [Frame::Line(line)] = &got[..] else {
            panic!("expected one line, got {} frames", got.len());
        };
        assert_eq!(&line[..], &medium[..]);
        let in_block = block as usize..block as usize + capacity;
        assert!(!in_block.contains(&(line.as_ptr() as usize)), "a copy");
        assert_eq!(
            spare.kept(),
            Some((block, capacity)),
            "kept while the line lives"
        );
        assert_ne!(
            spare.watch(None),
            generation,
            "the block was taken and given back"
        );
    }

    #[test]
    fn a_block_is_not_reused_while_its_line_is_alive() {
        let (mut codec, spare) = large_codec();
        let first = letters(1, 2 * KEEP_BUFFER_BYTES);
        let second = letters(2, 2 * KEEP_BUFFER_BYTES);
        let mut input = with_newline(first.clone());
        input.extend_from_slice(&with_newline(second.clone()));
        let mut got = Vec::new();
        read_as_framed(&mut codec, &input, &[100_000], |f| got.push(f));
        let [Frame::Line(a), Frame::Line(b)] = &got[..] else {
            panic!("expected two lines, got {} frames", got.len());
        };
        assert_eq!((&a[..], &b[..]), (&first[..], &second[..]));
        let a_range = a.as_ptr() as usize..a.as_ptr() as usize + a.len();
        assert!(!a_range.contains(&(b.as_ptr() as usize)));
        let (a, b) = (a.clone(), b.clone());
        drop(got);
        let b_start = b.as_ptr();
        drop(a);
        let Some((kept, kept_capacity)) = spare.kept() else {
            panic!("the first block came back");
        };
        drop(b);
        // Of the two blocks, the larger is kept (the first when they are the same size).
        let Some((now, now_capacity)) = spare.kept() else {
            panic!("a block is kept");
        };
        assert!(now == kept || now == b_start);
        assert!(now_capacity >= kept_capacity);
        if now != kept {
            assert!(
                now_capacity > kept_capacity,
                "replaced only by a larger block"
            );
        }
    }

    #[test]
    fn large_lines_read_through_a_spare_are_exact() {
        let mut input = Vec::new();
        let lines = [
            letters(3, KEEP_BUFFER_BYTES - 1),
            letters(4, KEEP_BUFFER_BYTES),
            letters(5, KEEP_BUFFER_BYTES + 1),
            letters(6, 2 * KEEP_BUFFER_BYTES + 3),
            b"{}".to_vec(),
            letters(8, 5 * KEEP_BUFFER_BYTES / 2),
        ];
        for (i, line) in lines.iter().enumerate() {
            input.extend_from_slice(line);
            // CRLF on some, and a blank large line (skipped) after the second.
            input.extend_from_slice(if i % 2 == 0 { b"\r\n" } else { b"\n" });
            if i == 1 {
                input.extend_from_slice(&vec![b' '; KEEP_BUFFER_BYTES + 7]);
                input.push(b'\n');
            }
        }
        // Over the limit of 4 MiB, then a last line without its newline.
        input.extend_from_slice(&letters(9, 4 * KEEP_BUFFER_BYTES + 1));
        input.extend_from_slice(b"\nlast");
        let mut want: Vec<Frame> = lines.iter().map(|l| line(l)).collect();
        want.push(Frame::TooLong {
            len_bytes: 4 * KEEP_BUFFER_BYTES + 1,
            head: letters(9, TOO_LONG_HEAD_BYTES),
            id: None,
        });
        want.push(line(b"last"));
        for sizes in [&[256 * 1024][..], &[65_536], &[17, 300_000, 4096]] {
            for keep_lines in [false, true] {
                let spare = SpareBuffer::new();
                let mut codec = FrameCodec::new(4 * KEEP_BUFFER_BYTES).with_spare(spare.clone());
                let mut got = Vec::new();
                // Unless kept, each line is copied and dropped: its block comes back at once.
                read_as_framed(&mut codec, &input, sizes, |f| match f {
                    Frame::Line(l) if !keep_lines => got.push(line(&l)),
                    f => got.push(f),
                });
                assert_eq!(got, want, "reads {sizes:?}, lines kept {keep_lines}");
                drop(got);
                assert!(spare.kept().is_some(), "reads {sizes:?}");
            }
        }
    }

    #[test]
    fn the_encoder_writes_one_line_per_message() {
        let mut codec = FrameCodec::new(100);
        let mut dst = BytesMut::new();
        let msg = json!({"jsonrpc": "2.0", "id": 1, "result": {"text": "a\nb"}});
        assert!(codec.encode(&msg, &mut dst).is_ok());
        assert!(codec.encode(&json!({"x": []}), &mut dst).is_ok());
        let want = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"text\":\"a\\nb\"}}\n{\"x\":[]}\n";
        assert_eq!(&dst[..], want.as_bytes());
        assert_eq!(
            encode_message(&msg).ok().as_deref(),
            Some(&want.as_bytes()[..want.find('\n').map_or(0, |i| i + 1)])
        );
        // What the encoder writes, the decoder reads back.
        let out = frames_of(&dst, 100, &[5]);
        assert_eq!(
            out,
            vec![
                line(&want.as_bytes()[..want.len() - 10]),
                line(b"{\"x\":[]}"),
            ]
        );
    }
}
