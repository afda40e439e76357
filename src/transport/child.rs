//! The upstream child process: spawn in a new process group, relay its stderr line by line,
//! and stop it with the shutdown steps of the stdio transport (close stdin, wait, SIGTERM to
//! the group, wait, SIGKILL to the group).

use futures_util::StreamExt;
use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::unix::AsyncFd;
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::watch;

use crate::protocol::wire::framing::{Frame, FrameCodec};
use crate::transport::children::{ChildRegistry, Membership};
use crate::transport::isolation;
use crate::transport::stderr_tail::{self, StderrTail, TailWriter};

/// Longest stderr line of the child that is relayed whole, in bytes; a longer one is cut.
pub const MAX_STDERR_LINE_BYTES: usize = 64 * 1024;

/// How long [`ChildProcess::kill`] waits for the exit status after SIGKILL (the kernel ends
/// the group at once; the wait is for the reaping task).
pub const KILLED_EXIT_TIME_LIMIT: Duration = Duration::from_secs(2);

/// What a child gets besides the bridge's own environment and working directory (a server's
/// `env` and `cwd` in a configuration file); the default changes nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChildEnv {
    /// Variables set (`Some`) or removed (`None`), in order; a `PATH` set here is also where
    /// the program is looked for.
    pub vars: Vec<(OsString, Option<OsString>)>,
    /// Its working directory (`None`: the bridge's).
    pub cwd: Option<std::path::PathBuf>,
}

impl ChildEnv {
    /// The `PATH` the program is looked for in: the one set here, else the bridge's.
    pub fn path_var(&self) -> Option<OsString> {
        match self.vars.iter().rev().find(|(name, _)| name == "PATH") {
            Some((_, value)) => value.clone(),
            None => std::env::var_os("PATH"),
        }
    }
}

/// A started child process and the handles the bridge keeps.
#[derive(Debug)]
pub struct ChildProcess {
    pgid: i32,
    /// Its place in the registry it joined at the start: it leaves once this handle is gone
    /// (after the stop steps) and the child is reaped.
    _membership: Arc<Membership>,
    exit: watch::Receiver<Option<ExitStatus>>,
    /// The last lines of its stderr (taken once, for the error of a failed start).
    stderr_tail: Option<StderrTail>,
}

/// The stdio ends of the child: its stdin and its stdout. (The bridge writes to the stdin
/// through its own writer, after `stdin_pipe`.)
#[derive(Debug)]
pub struct ChildIo {
    /// The child's stdin.
    pub stdin: ChildStdin,
    /// The child's stdout.
    pub stdout: ChildStdout,
}

/// Starts `command args` with piped stdio in a new process group, with the process's
/// environment and working directory changed only as `env` says. The child gets exactly fds
/// 0, 1 and 2 and, on Linux, SIGKILL when the thread that forked it ends (see
/// `isolation::child_pre_exec`): call this only on a thread that lives as long as the child
/// should (the bridge's actix System thread). The child's stderr lines are copied to the
/// process's stderr as they are, each line whole. Its process group joins `children` until the
/// child is reaped and its [`ChildProcess`] is gone.
///
/// Errors: the `io::Error` of the spawn (not found, permission denied, no such folder, ...).
pub fn spawn(
    command: &OsString,
    args: &[OsString],
    env: &ChildEnv,
    children: &Arc<ChildRegistry>,
) -> io::Result<(ChildProcess, ChildIo)> {
    let mut cmd = Command::new(command);
    for (name, value) in &env.vars {
        match value {
            Some(value) => cmd.env(name, value),
            None => cmd.env_remove(name),
        };
    }
    if let Some(dir) = &env.cwd {
        cmd.current_dir(dir);
    }
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(false);
    // SAFETY: getpid has no arguments.
    let parent = unsafe { libc::getpid() };
    // SAFETY: child_pre_exec is async-signal-safe (no allocation, no lock), as pre_exec needs.
    unsafe {
        cmd.pre_exec(move || isolation::child_pre_exec(parent));
    }
    let mut child = cmd.spawn()?;
    let pid = child.id().map_or(0, |p| p as i32);
    let membership = children.join(pid);
    let stdin = child
        .stdin
        .take()
        .ok_or_else(|| io::Error::other("no stdin pipe"))?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| io::Error::other("no stdout pipe"))?;
    super::stdio::enlarge_pipe(stdin.as_raw_fd());
    super::stdio::enlarge_pipe(stdout.as_raw_fd());
    let stderr_tail = child.stderr.take().map(|stderr| {
        let (writer, tail) = stderr_tail::tail();
        tokio::spawn(relay_stderr(stderr, writer));
        tail
    });
    // The exit of the child is watched apart from its stdout: a grandchild that inherited the
    // stdout pipe keeps it open after the child is gone.
    let (exit_tx, exit_rx) = watch::channel(None);
    let reaper = membership.clone();
    tokio::spawn(async move {
        let status = child.wait().await.ok();
        let _ = exit_tx.send(status);
        drop(reaper);
    });
    Ok((
        ChildProcess {
            pgid: pid,
            _membership: membership,
            exit: exit_rx,
            stderr_tail,
        },
        ChildIo { stdin, stdout },
    ))
}

/// The child's stdin as a non-blocking pipe for a [`crate::transport::writer::Writer`] (the
/// writer closes it when it is closed and drained).
///
/// Errors: the `io::Error` of taking the descriptor out of tokio or of `fcntl`.
pub fn stdin_pipe(stdin: ChildStdin) -> io::Result<AsyncFd<File>> {
    let file = File::from(stdin.into_owned_fd()?);
    // SAFETY: fcntl on a descriptor owned by `file`.
    unsafe {
        let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
        if flags < 0 || libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    // SAFETY (I/O safety of `register`): the descriptor is owned by `file`, which the AsyncFd
    // alone owns; it is closed only when the AsyncFd drops.
    unsafe { AsyncFd::register_with_interest(file, tokio::io::Interest::WRITABLE) }
        .map_err(|e| io::Error::other(e.to_string()))
}

/// Copies the child's stderr to the bridge's stderr line by line (the codec in text mode: every
/// line, blank ones too; a line longer than [`MAX_STDERR_LINE_BYTES`] is cut: [`cut_line`]), so
/// that its lines never mix with the bridge's own, through the bridge's stderr queue
/// ([`crate::log::relay_upstream_line`]); the last lines stay in `tail` too.
async fn relay_stderr(stderr: tokio::process::ChildStderr, tail: TailWriter) {
    let mut lines = super::lines::frames(stderr, FrameCodec::text(MAX_STDERR_LINE_BYTES), None);
    while let Some(frame) = lines.next().await {
        let mut out = match frame {
            Frame::Line(l) => {
                tail.push(&l, l.len());
                Vec::from(&l[..])
            }
            Frame::TooLong {
                head, len_bytes, ..
            } => {
                tail.push(&head, len_bytes);
                cut_line(head, len_bytes)
            }
        };
        out.push(b'\n');
        // Never waits: a full stderr queue drops and counts the line.
        crate::log::relay_upstream_line(out);
    }
}

/// A child's stderr line over [`MAX_STDERR_LINE_BYTES`] as the bridge writes it: its first
/// [`crate::protocol::wire::framing::TOO_LONG_HEAD_BYTES`] bytes (`head`; without a UTF-8 character
/// that the cut split at its end), then the marker `… (<len_bytes> bytes, cut)`, without the
/// newline. Example: `fixture stderr yyy… (70017 bytes, cut)`.
pub fn cut_line(mut head: Vec<u8>, len_bytes: usize) -> Vec<u8> {
    head.truncate(crate::protocol::wire::excerpt::without_split_char(&head));
    head.extend_from_slice(format!("… ({len_bytes} bytes, cut)").as_bytes());
    head
}

/// Sends `signal` to the child's whole process group; errors (no such group) are ignored.
pub fn signal_group(pgid: i32, signal: i32) {
    if pgid > 0 {
        // SAFETY: kill(2) with a negative pid signals a process group; no memory is shared.
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

impl ChildProcess {
    /// The process group id (the child's pid).
    pub fn pgid(&self) -> i32 {
        self.pgid
    }

    /// A receiver that holds the exit status once the child has exited.
    pub fn exit_watch(&self) -> watch::Receiver<Option<ExitStatus>> {
        self.exit.clone()
    }

    /// The last lines of its stderr ([`StderrTail::quoted`] reads them); `None` the second
    /// time.
    pub(crate) fn take_stderr_tail(&mut self) -> Option<StderrTail> {
        self.stderr_tail.take()
    }

    /// Waits at most `limit` for the child to exit.
    pub async fn wait_for(&mut self, limit: Duration) -> Option<ExitStatus> {
        let mut rx = self.exit.clone();
        let waited = tokio::time::timeout(limit, async move {
            loop {
                if let Some(status) = *rx.borrow_and_update() {
                    return Some(status);
                }
                if rx.changed().await.is_err() {
                    return None;
                }
            }
        });
        waited.await.ok().flatten()
    }

    /// Stops the child after its stdin was closed: waits `grace`, then SIGTERM to the group,
    /// waits `grace`, then SIGKILL to the group. The group gets SIGKILL at the end in every
    /// case, so no process the child started survives. Returns how the child ended.
    pub async fn stop(mut self, grace: Duration) -> Option<ExitStatus> {
        let mut status = self.wait_for(grace).await;
        if status.is_none() {
            signal_group(self.pgid, libc::SIGTERM);
            status = self.wait_for(grace).await;
        }
        signal_group(self.pgid, libc::SIGKILL);
        if status.is_none() {
            status = self.wait_for(grace).await;
        }
        status
    }

    /// Kills the whole group at once (a failed discover, the loss of the upstream), and waits
    /// at most [`KILLED_EXIT_TIME_LIMIT`] for its exit status.
    pub async fn kill(mut self) -> Option<ExitStatus> {
        signal_group(self.pgid, libc::SIGKILL);
        self.wait_for(KILLED_EXIT_TIME_LIMIT).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_line_ends_with_its_length_and_no_split_character() {
        assert_eq!(
            cut_line(b"abc".to_vec(), 70_000),
            "abc… (70000 bytes, cut)".as_bytes()
        );
        // The first byte of "é" (C3 A9) at the end of the head: left out.
        assert_eq!(
            cut_line(b"ab\xc3".to_vec(), 65_537),
            "ab… (65537 bytes, cut)".as_bytes()
        );
        // Bytes that are no UTF-8 at all pass as the child wrote them.
        assert_eq!(
            cut_line(b"a\xffb".to_vec(), 65_537),
            [&b"a\xffb"[..], "… (65537 bytes, cut)".as_bytes()].concat()
        );
        // An invalid byte earlier does not keep a split character at the end: "€" (E2 82 AC)
        // cut after two bytes.
        assert_eq!(
            cut_line(b"\xffa\xe2\x82".to_vec(), 65_537),
            [&b"\xffa"[..], "… (65537 bytes, cut)".as_bytes()].concat()
        );
    }
}
