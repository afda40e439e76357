//! `--max-response-bytes` on a response: a JSON body is read whole up to the limit; an SSE
//! body passes through a counter of the bytes of the event under way, which fails the stream
//! once one event grows past the limit (the stream itself has no limit: a listen stream lives
//! for hours). A leading UTF-8 byte order mark is dropped from both, as the stdio framing does
//! (the TypeScript and Python SDK clients accept it too; for SSE the WHATWG HTML standard,
//! §9.2.6: "One leading U+FEFF BYTE ORDER MARK character must be ignored if any are present").

use bytes::{Bytes, BytesMut};
use futures_util::{Stream, StreamExt};
use std::cell::Cell;
use std::rc::Rc;

use crate::protocol::wire::idscan::UTF8_BOM;

/// Why a body could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    /// Longer than the limit (in bytes).
    #[error("the response is over the limit of {0} bytes (--max-response-bytes raises it)")]
    Over(usize),
    /// The connection broke.
    #[error("the response stream broke")]
    Broken,
}

/// Reads a whole body of at most `max_bytes` (a `Content-Length` over it fails at once),
/// without a leading UTF-8 byte order mark.
pub async fn read_body(resp: reqwest::Response, max_bytes: usize) -> Result<Bytes, BodyError> {
    if resp.content_length().is_some_and(|n| n > max_bytes as u64) {
        return Err(BodyError::Over(max_bytes));
    }
    let mut body = BytesMut::new();
    let mut chunks = resp.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|_| BodyError::Broken)?;
        if body.len() + chunk.len() > max_bytes {
            return Err(BodyError::Over(max_bytes));
        }
        body.extend_from_slice(&chunk);
    }
    let body = body.freeze();
    Ok(match body.starts_with(UTF8_BOM) {
        true => body.slice(UTF8_BOM.len()..),
        false => body,
    })
}

/// The start of an SSE body, until it is known whether it begins with a byte order mark (a
/// chunk may end inside one).
enum Start {
    /// The bytes so far, all a prefix of the mark (fewer than its length).
    Open(Vec<u8>),
    /// Past the start: chunks pass as they come.
    Done,
}

impl Start {
    /// `chunk` without the part of a leading mark in it; an empty chunk while the start is
    /// still open.
    fn strip(&mut self, chunk: Bytes) -> Bytes {
        let Start::Open(held) = self else {
            return chunk;
        };
        if held.is_empty() && chunk.len() >= UTF8_BOM.len() {
            // The usual case, the whole start in the first chunk: no copy.
            *self = Start::Done;
            return match chunk.starts_with(UTF8_BOM) {
                true => chunk.slice(UTF8_BOM.len()..),
                false => chunk,
            };
        }
        held.extend_from_slice(&chunk);
        let n = held.len().min(UTF8_BOM.len());
        if held[..n] != UTF8_BOM[..n] {
            let all = Bytes::from(std::mem::take(held));
            *self = Start::Done;
            return all;
        }
        if n < UTF8_BOM.len() {
            return Bytes::new();
        }
        let rest = Bytes::copy_from_slice(&held[n..]);
        *self = Start::Done;
        rest
    }
}

/// Where the counter is between two chunks.
#[derive(Default)]
struct EventBytes {
    /// Bytes of field lines since the last blank line.
    count: usize,
    /// The last byte ended a line (or nothing came yet).
    line_start: bool,
    /// The last byte was `\r` (a `\n` after it ends the same line).
    after_cr: bool,
}

impl EventBytes {
    /// Counts `chunk`; false once the event under way is longer than `max_bytes`. An event
    /// ends at a blank line (`\n\n`, `\r\r`, `\r\n\r\n`, SSE's line ends).
    fn feed(&mut self, chunk: &[u8], max_bytes: usize) -> bool {
        for &b in chunk {
            match b {
                b'\n' if self.after_cr => self.after_cr = false,
                b'\r' | b'\n' => {
                    if self.line_start {
                        self.count = 0;
                    }
                    self.line_start = true;
                    self.after_cr = b == b'\r';
                }
                _ => {
                    self.line_start = false;
                    self.after_cr = false;
                    self.count += 1;
                    if self.count > max_bytes {
                        return false;
                    }
                }
            }
        }
        true
    }
}

/// The bytes of an SSE body without a leading byte order mark, failing with
/// [`BodyError::Over`] (and setting `over`) once one event is longer than `max_bytes`.
pub fn sse_bytes(
    resp: reqwest::Response,
    max_bytes: usize,
    over: Rc<Cell<bool>>,
) -> impl Stream<Item = Result<Bytes, BodyError>> {
    let mut counter = EventBytes {
        line_start: true,
        ..EventBytes::default()
    };
    let mut start = Start::Open(Vec::new());
    resp.bytes_stream().map(move |chunk| {
        let chunk = start.strip(chunk.map_err(|_| BodyError::Broken)?);
        if over.get() || !counter.feed(&chunk, max_bytes) {
            over.set(true);
            return Err(BodyError::Over(max_bytes));
        }
        Ok(chunk)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fits(chunks: &[&str], max: usize) -> bool {
        let mut c = EventBytes {
            line_start: true,
            ..EventBytes::default()
        };
        chunks.iter().all(|ch| c.feed(ch.as_bytes(), max))
    }

    #[test]
    fn each_event_is_counted_alone() {
        assert!(fits(&["data: 12345\n\n", "data: 12345\n\n"], 11));
        assert!(!fits(&["data: 123456\n\n"], 11));
        // One event split across chunks counts as one.
        assert!(!fits(&["data: 12", "3456\n\n"], 11));
        // Two lines of one event count together.
        assert!(!fits(&["data: 1\n", "data: 2\n\n"], 11));
        // Every SSE line end ends an event at a blank line.
        assert!(fits(
            &["data: 12345\r\n\r\n", "data: 12345\r\rdata: 12345\n\n"],
            11
        ));
        assert!(fits(
            &["data: 12345\r", "\n", "\r\n", "data: 12345\n\n"],
            11
        ));
        // A comment (keep-alive) is a line of the event under way.
        assert!(fits(&[":\n\n:\n\n:\n\n"], 1));
    }

    fn stripped(chunks: &[&[u8]]) -> Vec<u8> {
        let mut start = Start::Open(Vec::new());
        chunks
            .iter()
            .flat_map(|c| start.strip(Bytes::copy_from_slice(c)).to_vec())
            .collect()
    }

    #[test]
    fn one_leading_byte_order_mark_is_dropped_even_split_across_chunks() {
        let bom = b"\xEF\xBB\xBF";
        assert_eq!(stripped(&[b"\xEF\xBB\xBFdata: 1\n\n"]), b"data: 1\n\n");
        assert_eq!(
            stripped(&[b"\xEF", b"\xBB", b"\xBFdata: 1\n"]),
            b"data: 1\n"
        );
        assert_eq!(stripped(&[b"\xEF\xBB", b"\xBF", b"d"]), b"d");
        assert_eq!(stripped(&[b"da", b"ta"]), b"data");
        assert_eq!(stripped(&[b"\xEF", b"x"]), b"\xEFx");
        assert_eq!(stripped(&[b"data: 1\n\n"]), b"data: 1\n\n");
        // Only the first mark is the stream's; a second one is data.
        assert_eq!(stripped(&[bom, bom]), bom);
        assert_eq!(stripped(&[b"x", bom]), [b"x" as &[u8], bom].concat());
    }
}
