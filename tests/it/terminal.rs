//! A bridge started by hand in a terminal: one line on stderr says that it waits for an MCP
//! client on stdin; an end of input typed at the terminal (Ctrl-D) ends it as any end of
//! input does. A stdin that is a pipe (an editor) gets no such line.

use crate::common;

use common::{Bridge, RECV_TIMEOUT, bridge_bin, server_bin, wait_until};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const HINT: &str = "mcp-bridge: bridge: info: waiting for an MCP client on stdin (this is a stdio MCP server; see --help)\n";

/// A new pseudo-terminal: its master end (the user's side) and its slave end (the program's).
fn pty() -> (File, OwnedFd) {
    let (mut master, mut slave) = (-1, -1);
    // SAFETY: openpty writes two new fds into the two ints; the names and settings are null
    // (the defaults). Each fd is owned once below.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // Close-on-exec: no process started later holds the terminal open (the bridge gets the
    // slave end as its stdin only, by dup2).
    for fd in [master, slave] {
        // SAFETY: fcntl on the two fds openpty just gave.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    // SAFETY: both fds are fresh from openpty and owned by nothing else.
    unsafe { (File::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}

/// A child that is killed when the test ends, also when it fails.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The stderr of a child, read on a thread of its own: chunks until its end.
fn stderr_chunks(mut stderr: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = stderr.read(&mut buf) {
            if tx
                .send(String::from_utf8_lossy(&buf[..n]).into_owned())
                .is_err()
            {
                return;
            }
        }
    });
    rx
}

/// Adds what `rx` gives to `text` until `done(text)` holds (true) or the stream ends or
/// [`RECV_TIMEOUT`] passes (false).
fn read_until(rx: &mpsc::Receiver<String>, text: &mut String, done: impl Fn(&str) -> bool) -> bool {
    let end = Instant::now() + RECV_TIMEOUT;
    while !done(text) {
        match rx.recv_timeout(end.saturating_duration_since(Instant::now())) {
            Ok(chunk) => text.push_str(&chunk),
            Err(_) => return false,
        }
    }
    true
}

#[test]
fn a_terminal_on_stdin_gets_one_line_that_says_the_bridge_waits_for_a_client() {
    let (mut master, slave) = pty();
    let mut child = Killed(
        Command::new(bridge_bin())
            .arg("--")
            .arg(server_bin())
            .stdin(Stdio::from(slave))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn mcp-bridge"),
    );
    let rx = stderr_chunks(child.0.stderr.take().expect("stderr"));
    let mut text = String::new();
    assert!(read_until(&rx, &mut text, |t| t.contains(HINT)), "{text}");
    // Ctrl-D at the start of a line: the terminal's end of input.
    master.write_all(b"\x04").expect("write to the pty");
    // To the end of the bridge's stderr: it exits.
    read_until(&rx, &mut text, |_| false);
    let mut status = None;
    wait_until(|| {
        status = child.0.try_wait().expect("try_wait");
        status.is_some()
    });
    let Some(status) = status else {
        panic!("the bridge did not exit at the end of input: {text}");
    };
    assert_eq!(status.code(), Some(0), "{text}");
    assert_eq!(
        text.matches("waiting for an MCP client").count(),
        1,
        "{text}"
    );
}

#[test]
fn a_pipe_on_stdin_gets_no_such_line() {
    let mut b = Bridge::start(&[], &[]);
    b.initialize();
    b.close_stdin();
    assert_eq!(b.exit_code(Duration::from_secs(8)), Some(0));
    let text = b.stderr_to_the_end();
    assert!(!text.contains("waiting for an MCP client"), "{text}");
}
