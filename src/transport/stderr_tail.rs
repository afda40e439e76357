//! The last lines of a child's stderr, kept while the lines are relayed, so that the error of a
//! server that fails at start quotes why (a missing script, a traceback) instead of an exit
//! code alone. Bounded in lines and bytes; it never writes anything itself.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;

use crate::protocol::wire::excerpt::{EXCERPT_BYTES, excerpt_of};

/// Most lines of a child's stderr that are kept (the last ones; blank lines do not count).
pub const STDERR_TAIL_LINES: usize = 5;
/// Bytes kept of each of those lines: as much as its quote shows ([`excerpt_of`]); a longer
/// line is quoted with its length.
pub const STDERR_TAIL_LINE_BYTES: usize = EXCERPT_BYTES;
/// How long the quote waits for the end of the child's stderr after its exit (what it wrote
/// before it exited may still be in the pipe); a descendant that holds the pipe open does not
/// hold the error longer than this.
pub const STDERR_END_WAIT: Duration = Duration::from_millis(200);

/// One kept line: its first bytes and its whole length.
type Kept = (Vec<u8>, usize);

/// The writing end, held by the relay of the child's stderr; its drop marks the end of the
/// stderr.
#[derive(Debug)]
pub struct TailWriter {
    lines: Arc<Mutex<VecDeque<Kept>>>,
    _open: watch::Sender<()>,
}

/// The reading end, held with the child.
#[derive(Debug)]
pub struct StderrTail {
    lines: Arc<Mutex<VecDeque<Kept>>>,
    open: watch::Receiver<()>,
}

/// A new, empty tail: its writer and its reader.
pub fn tail() -> (TailWriter, StderrTail) {
    let lines = Arc::new(Mutex::new(VecDeque::new()));
    let (tx, rx) = watch::channel(());
    (
        TailWriter {
            lines: lines.clone(),
            _open: tx,
        },
        StderrTail { lines, open: rx },
    )
}

impl TailWriter {
    /// Keeps `line` (without its line ending; its first bytes, of a line of `len_bytes`) as
    /// the newest; the oldest goes beyond [`STDERR_TAIL_LINES`]. A blank line is not kept.
    pub fn push(&self, line: &[u8], len_bytes: usize) {
        // A whole line loses its `\r` (a CRLF ending); a cut one keeps its length.
        let whole = len_bytes <= line.len();
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let len_bytes = if whole { line.len() } else { len_bytes };
        let head = line[..line.len().min(STDERR_TAIL_LINE_BYTES)].to_vec();
        if let Ok(mut lines) = self.lines.lock() {
            lines.push_back((head, len_bytes));
            while lines.len() > STDERR_TAIL_LINES {
                lines.pop_front();
            }
        }
    }
}

impl StderrTail {
    /// The kept lines, oldest first, each quoted and escaped ([`excerpt_of`]: control
    /// characters replaced by escapes, at most [`STDERR_TAIL_LINE_BYTES`] bytes), once the
    /// stderr has ended or after [`STDERR_END_WAIT`].
    pub async fn quoted(mut self) -> Vec<String> {
        // Resolves when the writer is dropped (no value is ever sent).
        let _ = tokio::time::timeout(STDERR_END_WAIT, self.open.changed()).await;
        self.lines
            .lock()
            .map(|lines| lines.iter().map(|(l, n)| excerpt_of(l, *n)).collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_last_lines_are_kept_quoted_without_blank_ones() {
        let (w, r) = tail();
        for i in 0..7 {
            w.push(format!("line {i}").as_bytes(), 6);
            w.push(b"  \r", 3);
        }
        w.push(b"bell\x07\r", 6);
        // A cut line (its first bytes of a longer one) keeps its whole length.
        let long = vec![b'x'; 300];
        w.push(&long[..200], 300);
        drop(w);
        assert_eq!(
            r.quoted().await,
            vec![
                "\"line 4\"".to_string(),
                "\"line 5\"".to_string(),
                "\"line 6\"".to_string(),
                "\"bell\\u{7}\"".to_string(),
                format!("\"{}\"… (300 bytes)", "x".repeat(EXCERPT_BYTES)),
            ]
        );
    }
}
