//! Non-blocking stdin and stdout when they are pipes or sockets (what editors give a stdio
//! server): frames are read and written on the actor thread with no hand-off to another
//! thread, and a full or empty pipe only parks a task, never the actors. Any other stdin or
//! stdout (a terminal, a file) is left blocking, and the caller uses a thread of its own, so a
//! terminal is never left non-blocking for the shell.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd};
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, ReadBuf};

/// A stdout that accepts non-blocking writes, if stdout is a pipe or a socket: a duplicate of
/// fd 1 with `O_NONBLOCK` set (the flag is shared with fd 1, which only the bridge writes).
pub fn nonblocking_stdout() -> Option<AsyncFd<File>> {
    nonblocking_pipe(1, tokio::io::Interest::WRITABLE)
}

/// A stdin that gives non-blocking reads, if stdin is a pipe or a socket (a duplicate of fd 0
/// with `O_NONBLOCK` set).
pub fn nonblocking_stdin() -> Option<AsyncFd<File>> {
    nonblocking_pipe(0, tokio::io::Interest::READABLE)
}

fn nonblocking_pipe(target: i32, interest: tokio::io::Interest) -> Option<AsyncFd<File>> {
    if !is_pipe_or_socket(target) {
        return None;
    }
    enlarge_pipe(target);
    // SAFETY: fcntl on a standard fd; the duplicate is owned by the File below.
    unsafe {
        // Close-on-exec from its creation: the child must never inherit the editor's pipes.
        let fd = libc::fcntl(target, libc::F_DUPFD_CLOEXEC, 3);
        if fd < 0 {
            return None;
        }
        let file = File::from_raw_fd(fd);
        let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
        if flags < 0 || libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return None;
        }
        // SAFETY (I/O safety of `register`): the duplicate is owned by the AsyncFd alone and is
        // closed only when it drops.
        AsyncFd::register_with_interest(file, interest).ok()
    }
}

/// Starts a thread that waits until nobody can read the bridge's stdout any more (the editor
/// closed its reading end, or exited, while the bridge's stdin may stay open): `poll(2)` of
/// fd 1 reports `POLLERR` (a pipe without readers) or `POLLHUP` (a socket shut down both
/// ways). Then it calls `gone` once. Only for a stdout that is a pipe or a socket, and false
/// (nothing started) for any other: a terminal's hang-up is SIGHUP, a file never ends.
///
/// A plain thread with a blocking `poll` and no events asked for (errors and hang-ups are
/// always reported), so it shares nothing with the writer of stdout: the writer learns of
/// the end only at its next write (`EPIPE`), which may never come.
pub fn on_stdout_gone(gone: impl FnOnce() + Send + 'static) -> bool {
    if !is_pipe_or_socket(1) {
        return false;
    }
    std::thread::Builder::new()
        .name("mcp-bridge-stdout-watch".into())
        .spawn(move || {
            let mut watched = libc::pollfd {
                fd: 1,
                events: 0,
                revents: 0,
            };
            loop {
                // SAFETY: poll on one pollfd owned by this frame; fd 1 stays open for the
                // life of the process (the writer closes only its own duplicate).
                let rc = unsafe { libc::poll(&mut watched, 1, -1) };
                if rc < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                if rc > 0 && watched.revents & (libc::POLLERR | libc::POLLHUP) != 0 {
                    gone();
                }
                // POLLNVAL or a failed poll: nothing more can be learned here.
                return;
            }
        })
        .is_ok()
}

fn file_kind(fd: i32) -> Option<libc::mode_t> {
    // SAFETY: fstat with a zeroed stat buffer owned here; a closed fd gives an error.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) != 0 {
            return None;
        }
        Some(st.st_mode & libc::S_IFMT)
    }
}

fn is_pipe_or_socket(fd: i32) -> bool {
    matches!(file_kind(fd), Some(libc::S_IFIFO | libc::S_IFSOCK))
}

/// The buffer the bridge asks for on each of its pipes (the editor's stdin and stdout, the
/// child's stdin and stdout), in bytes: 256 KiB, four times Linux's default of 64 KiB, so a
/// large message crosses each pipe with a quarter of the wake-ups (16 MiB through one pipe
/// took about 40 ms with 64 KiB and 10 ms with 256 KiB or 1 MiB here). Not more: every pipe's
/// buffer counts against its user's `fs.pipe-user-pages-soft` (64 MiB by default), beyond
/// which every new pipe of that user gets 8 KiB; a bridge's four pipes take 1 MiB of it.
pub const PIPE_BUFFER_BYTES: usize = 256 * 1024;

/// Asks for a buffer of [`PIPE_BUFFER_BYTES`] on the pipe `fd` (`F_SETPIPE_SZ`, Linux) when
/// its buffer is smaller, and gives the size it has then. `None` when `fd` is not a pipe or
/// the system has no such call. A refusal (`EPERM` past the user's limits) leaves the pipe as
/// it was: the bridge works the same with any buffer.
pub fn enlarge_pipe(fd: i32) -> Option<usize> {
    if file_kind(fd)? != libc::S_IFIFO {
        return None;
    }
    #[cfg(target_os = "linux")]
    {
        // SAFETY: fcntl on a pipe descriptor the caller holds open; no memory is shared.
        let size = unsafe { libc::fcntl(fd, libc::F_GETPIPE_SZ) };
        let size = usize::try_from(size).ok()?;
        if size >= PIPE_BUFFER_BYTES {
            return Some(size);
        }
        let wanted = libc::c_int::try_from(PIPE_BUFFER_BYTES).ok()?;
        // SAFETY: as above.
        let set = unsafe { libc::fcntl(fd, libc::F_SETPIPE_SZ, wanted) };
        Some(usize::try_from(set).unwrap_or(size))
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// A non-blocking pipe (stdin) as an `AsyncRead`, so the framed reader of
/// [`crate::transport::lines::frames`] serves it as it serves the child's stdout.
///
/// A read that fills less than the buffer drained the pipe (a pipe or a stream socket gives
/// what it holds, up to the length asked): the readiness is cleared then, so the next poll
/// waits for the next wake-up instead of making a read that fails with `EAGAIN`. The read goes
/// into the buffer's uninitialized room, which is never zeroed first.
#[derive(Debug)]
pub struct PipeReader(pub AsyncFd<File>);

impl AsyncRead for PipeReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            let mut guard = match self.0.poll_read_ready(cx) {
                Poll::Ready(Ok(g)) => g,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            };
            // SAFETY: only read(2) writes into this room, and only the `n` bytes it reports
            // are marked initialized below.
            let room = unsafe { buf.unfilled_mut() };
            let len = room.len();
            let read = guard.try_io(|inner| {
                // SAFETY: `room` is valid for writes of `len` bytes; the descriptor is owned
                // by the AsyncFd.
                let n = unsafe {
                    libc::read(
                        inner.get_ref().as_raw_fd(),
                        room.as_mut_ptr().cast::<libc::c_void>(),
                        len,
                    )
                };
                usize::try_from(n).map_err(|_| io::Error::last_os_error())
            });
            match read {
                Ok(Ok(n)) => {
                    if 0 < n && n < len {
                        guard.clear_ready();
                    }
                    // SAFETY: read(2) wrote `n` bytes at the start of the room.
                    unsafe { buf.assume_init(n) };
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                Err(_would_block) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn a_pipe_gets_the_larger_buffer_and_anything_else_is_left_alone() {
        let mut fds = [0i32; 2];
        // SAFETY: pipe(2) fills the two descriptors, closed below.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // Either end sets the buffer of the one pipe.
        assert_eq!(enlarge_pipe(fds[1]), Some(PIPE_BUFFER_BYTES));
        // SAFETY: fcntl on the read end, open here.
        let seen = unsafe { libc::fcntl(fds[0], libc::F_GETPIPE_SZ) };
        assert_eq!(usize::try_from(seen).ok(), Some(PIPE_BUFFER_BYTES));
        // A pipe already as large keeps its size.
        assert_eq!(enlarge_pipe(fds[0]), Some(PIPE_BUFFER_BYTES));
        // SAFETY: the descriptors were opened above and are closed once.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
        let file = tempfile_like();
        assert_eq!(enlarge_pipe(file.as_raw_fd()), None);
        assert_eq!(enlarge_pipe(-1), None);
    }

    fn tempfile_like() -> File {
        // /dev/null: a character device, never a pipe.
        File::open("/dev/null").unwrap_or_else(|e| panic!("/dev/null: {e}"))
    }
}
