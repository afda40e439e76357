//! `--stall-stdin-after`: an input that stops after N lines until a file exists.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, ReadBuf};

/// How often the resume file is looked for.
const RESUME_POLL: Duration = Duration::from_millis(10);

/// Passes `inner` through until `lines` newlines have been read, then reads nothing more
/// until `resume` exists (never without it). The read that holds the last newline may
/// carry bytes after it; nothing beyond that read is taken.
pub(crate) struct StallingReader<R> {
    inner: R,
    lines_left: u64,
    resume: Option<PathBuf>,
    resumed: bool,
    tick: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<R> StallingReader<R> {
    pub(crate) fn new(inner: R, lines: u64, resume: Option<PathBuf>) -> Self {
        StallingReader {
            inner,
            lines_left: lines,
            resume,
            resumed: false,
            tick: None,
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for StallingReader<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let me = &mut *self;
        while me.lines_left == 0 && !me.resumed {
            if me.resume.as_ref().is_some_and(|f| f.exists()) {
                me.resumed = true;
                break;
            }
            if me.resume.is_none() {
                return Poll::Pending;
            }
            let tick = me
                .tick
                .get_or_insert_with(|| Box::pin(tokio::time::sleep(RESUME_POLL)));
            match tick.as_mut().poll(cx) {
                Poll::Ready(()) => me.tick = None,
                Poll::Pending => return Poll::Pending,
            }
        }
        let before = buf.filled().len();
        let polled = Pin::new(&mut me.inner).poll_read(cx, buf);
        if !me.resumed {
            let newlines = buf.filled()[before..]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            me.lines_left = me.lines_left.saturating_sub(newlines as u64);
        }
        polled
    }
}
