//! Newline-delimited input framing for stdio (2026-07-28 basic/transports/stdio): one message
//! per line, a bounded line length, and cancel-safe reads (a partial line survives a dropped
//! read because all progress lives in the reader). Never parses JSON.

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// The longest input line accepted, newline excluded.
pub(crate) const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// One unit of input.
#[derive(Debug, PartialEq)]
pub(crate) enum Frame {
    /// A complete line without its newline (and without a trailing `\r`).
    Line(Vec<u8>),
    /// A line longer than the limit; its bytes were discarded.
    TooLong,
}

/// Splits a byte stream into lines.
pub(crate) struct LineReader<R> {
    reader: BufReader<R>,
    line: Vec<u8>,
    max_bytes: usize,
    discarding: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub(crate) fn new(input: R, max_bytes: usize) -> Self {
        Self {
            reader: BufReader::new(input),
            line: Vec::new(),
            max_bytes,
            discarding: false,
        }
    }

    /// The next frame, or `None` at end of input. A last line without a newline is dropped:
    /// end of input ends the connection, so nothing could be answered for it anyway.
    ///
    /// Cancel-safe: the only await is `fill_buf`, before anything is consumed.
    pub(crate) async fn next_frame(&mut self) -> std::io::Result<Option<Frame>> {
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                return Ok(None);
            }
            let (chunk, complete) = match available.iter().position(|&b| b == b'\n') {
                Some(newline) => (&available[..newline], Some(newline + 1)),
                None => (available, None),
            };
            if !self.discarding {
                if self.line.len() + chunk.len() > self.max_bytes {
                    self.discarding = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(chunk);
                }
            }
            let used = complete.unwrap_or(available.len());
            self.reader.consume(used);
            if complete.is_some() {
                if std::mem::take(&mut self.discarding) {
                    return Ok(Some(Frame::TooLong));
                }
                let mut line = std::mem::take(&mut self.line);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(Some(Frame::Line(line)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    async fn frames(chunks: &[&[u8]], max_bytes: usize) -> Vec<Frame> {
        let (mut writer, reader) = tokio::io::duplex(4);
        let chunks: Vec<Vec<u8>> = chunks.iter().map(|c| c.to_vec()).collect();
        let feeder = tokio::spawn(async move {
            for chunk in chunks {
                if writer.write_all(&chunk).await.is_err() {
                    return;
                }
            }
        });
        let mut lines = LineReader::new(reader, max_bytes);
        let mut out = Vec::new();
        while let Ok(Some(frame)) = lines.next_frame().await {
            out.push(frame);
        }
        let _ = feeder.await;
        out
    }

    #[tokio::test]
    async fn lines_cut_at_arbitrary_boundaries_come_out_whole() {
        let got = frames(&[b"ab", b"c\nd", b"e\r\n\n", b"tail"], 100).await;
        assert_eq!(
            got,
            vec![
                Frame::Line(b"abc".to_vec()),
                Frame::Line(b"de".to_vec()),
                Frame::Line(Vec::new()),
            ]
        );
    }

    #[tokio::test]
    async fn an_overlong_line_is_reported_and_the_next_line_survives() {
        let got = frames(&[b"0123456789", b"abc\nok\n"], 8).await;
        assert_eq!(got, vec![Frame::TooLong, Frame::Line(b"ok".to_vec())]);
    }
}
