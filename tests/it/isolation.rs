//! The upstream is isolated: it and its descendants get exactly fds 0, 1 and 2
//! (also when the editor left extra descriptors open in the bridge), cannot write to the
//! editor, and do not outlive the bridge (end of stdin, SIGTERM, SIGKILL of the bridge).
//! Linux only: the probes read `/proc`.

use crate::common;

use common::{
    RECV_TIMEOUT, bridge_bin, children_of, collect_stderr, process_alive, scratch_dir, server_bin,
};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The descriptors the test leaves open in the bridge without close-on-exec: copies of the
/// editor's stdin (9) and stdout (10), as in the report of the issue.
const EXTRA_STDIN_FD: i32 = 9;
const EXTRA_STDOUT_FD: i32 = 10;

/// A bridge over real pipes, started by the test as an editor would.
struct Editor {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Option<String>>,
    stderr: Arc<Mutex<String>>,
    dir: PathBuf,
}

impl Editor {
    /// `mcp-bridge mcp-fixture-server <server_args>`; with `extra_fds`, the bridge also holds
    /// copies of its stdin and stdout at fds 9 and 10 without close-on-exec.
    fn start(server_args: &[String], extra_fds: bool) -> Editor {
        let dir = scratch_dir("isolation");
        let mut cmd = Command::new(bridge_bin());
        cmd.arg("--shutdown-grace")
            .arg("1")
            .arg("--")
            .arg(server_bin())
            .args(server_args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if extra_fds {
            // SAFETY: dup2 is async-signal-safe; it leaves the copies without close-on-exec.
            unsafe {
                cmd.pre_exec(|| {
                    if libc::dup2(0, EXTRA_STDIN_FD) < 0 || libc::dup2(1, EXTRA_STDOUT_FD) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        let mut child = cmd.spawn().expect("spawn mcp-bridge");
        let stdout = child.stdout.take().expect("stdout");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut line = String::new();
                match r.read_line(&mut line) {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(None);
                        return;
                    }
                    Ok(_) => {
                        if tx.send(Some(line)).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let err = collect_stderr(stderr);
        Editor {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr: err,
            dir,
        }
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    fn send(&mut self, v: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        let mut line = serde_json::to_vec(v).expect("serialize");
        line.push(b'\n');
        stdin.write_all(&line).expect("write to the bridge");
        stdin.flush().expect("flush");
    }

    fn send_initialize(&mut self) {
        self.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "isolation-test", "version": "1.0.0"}}}));
    }

    /// The next line of stdout (`None`: end of output), waiting at most [`RECV_TIMEOUT`].
    fn next_line(&mut self) -> Option<String> {
        match self.lines.recv_timeout(RECV_TIMEOUT) {
            Ok(line) => line,
            Err(_) => panic!(
                "neither a line nor the end of output within {RECV_TIMEOUT:?}; stderr:\n{}",
                self.stderr_text()
            ),
        }
    }

    /// Every line until the end of output, which must come within [`RECV_TIMEOUT`].
    fn lines_until_eof(&mut self) -> Vec<String> {
        let end = Instant::now() + RECV_TIMEOUT;
        let mut out = Vec::new();
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(Some(line)) => out.push(line),
                Ok(None) => return out,
                Err(_) => panic!(
                    "no end of output within {RECV_TIMEOUT:?} (got {out:?}); stderr:\n{}",
                    self.stderr_text()
                ),
            }
        }
    }

    fn close_stdin(&mut self) {
        self.stdin = None;
    }

    fn signal(&self, sig: i32) {
        // SAFETY: kill(2) of the bridge this test started.
        assert_eq!(unsafe { libc::kill(self.pid(), sig) }, 0);
    }

    fn stderr_text(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    fn wait_stderr(&self, text: &str) {
        wait_for(&format!("stderr line {text:?}"), || {
            self.stderr_text().contains(text)
        });
    }

    fn wait_exit_code(&mut self) -> Option<i32> {
        let mut status = None;
        wait_for("the bridge to exit", || {
            status = self.child.try_wait().expect("try_wait");
            status.is_some()
        });
        status.and_then(|s| s.code())
    }
}

impl Drop for Editor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Polls `done` until it holds, failing after [`RECV_TIMEOUT`].
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let end = Instant::now() + RECV_TIMEOUT;
    while !done() {
        assert!(Instant::now() < end, "waited {RECV_TIMEOUT:?} for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The text of a file a probe writes (whole, by a rename), once it exists.
fn wait_file(path: &Path) -> String {
    let mut text = None;
    wait_for(&format!("{}", path.display()), || {
        text = std::fs::read_to_string(path).ok();
        text.is_some()
    });
    text.unwrap_or_default()
}

/// The descriptor numbers of a `--report-fds` report (`N TARGET` lines).
fn fd_numbers(report: &str) -> Vec<i32> {
    report
        .lines()
        .map(|l| {
            l.split(' ')
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("bad report line {l:?}"))
        })
        .collect()
}

/// Kills a process the test could not get rid of otherwise (cleanup after a failure).
fn kill_leftover(pid: i32) {
    if process_alive(pid) {
        // SAFETY: kill(2) of a pid this test learned from its fixture.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

/// Kills the process when the test ends, also when it fails on the way.
struct Leftover(i32);

impl Drop for Leftover {
    fn drop(&mut self) {
        kill_leftover(self.0);
    }
}

fn fds_seen_by_the_upstream_and_its_child(extra_fds: bool) {
    let dir = scratch_dir("fd-reports");
    let (upstream, grandchild) = (dir.join("upstream-fds"), dir.join("grandchild-fds"));
    let mut e = Editor::start(
        &[
            "--report-fds".into(),
            upstream.display().to_string(),
            "--spawn-fd-reporter".into(),
            grandchild.display().to_string(),
        ],
        extra_fds,
    );
    e.send_initialize();
    let first = e.next_line().expect("the initialize result");
    let first: Value = serde_json::from_str(&first).expect("JSON");
    assert_eq!(first["id"], json!(0), "{first}");
    assert!(first.get("result").is_some(), "{first}");
    let report = wait_file(&upstream);
    assert_eq!(fd_numbers(&report), vec![0, 1, 2], "upstream:\n{report}");
    let report = wait_file(&grandchild);
    assert_eq!(fd_numbers(&report), vec![0, 1, 2], "grandchild:\n{report}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_upstream_and_its_child_get_exactly_fds_0_1_2() {
    fds_seen_by_the_upstream_and_its_child(false);
}

#[test]
fn the_upstream_and_its_child_get_exactly_fds_0_1_2_when_the_bridge_inherited_more() {
    fds_seen_by_the_upstream_and_its_child(true);
}

#[test]
fn an_upstream_that_writes_to_fds_3_to_20_never_reaches_the_editor() {
    let mut e = Editor::start(&["--write-to-fds".into()], true);
    e.send_initialize();
    let first = e.next_line().expect("the initialize result");
    let first: Value = serde_json::from_str(&first)
        .unwrap_or_else(|err| panic!("the first frame is not JSON ({err}): {first:?}"));
    assert_eq!(first["jsonrpc"], "2.0");
    assert_eq!(first["id"], json!(0));
    assert_eq!(first["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(
        first["result"]["serverInfo"]["name"], "mcp-fixture-server",
        "{first}"
    );
    e.wait_stderr("mcp-fixture-server: --write-to-fds reached 0 descriptors\n");
    e.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    e.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}));
    e.close_stdin();
    let rest = e.lines_until_eof();
    for line in &rest {
        let v: Value = serde_json::from_str(line)
            .unwrap_or_else(|err| panic!("a line that is not JSON ({err}): {line:?}"));
        assert!(!line.contains("INJECTED"), "{line}");
        assert!(v["id"] == json!(1) || v.get("method").is_some(), "{v}");
    }
    assert!(
        rest.iter().any(|l| serde_json::from_str::<Value>(l)
            .is_ok_and(|v| v["id"] == json!(1) && v["result"] == json!({}))),
        "no answer to ping: {rest:?}"
    );
    assert_eq!(e.wait_exit_code(), Some(0));
}

/// Starts a bridge whose upstream starts `sleep 300` in a new session; returns the sleep's pid
/// once the bridge answered `initialize`.
fn bridge_with_a_setsid_grandchild() -> (Editor, i32) {
    let dir = scratch_dir("setsid");
    let pidfile = dir.join("grandchild.pid");
    let mut e = Editor::start(
        &[
            "--spawn-setsid-grandchild".into(),
            pidfile.display().to_string(),
        ],
        true,
    );
    e.send_initialize();
    let first: Value = serde_json::from_str(&e.next_line().expect("a line")).expect("JSON");
    assert!(first.get("result").is_some(), "{first}");
    let pid: i32 = wait_file(&pidfile).trim().parse().expect("a pid");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(process_alive(pid), "the grandchild {pid} is running");
    (e, pid)
}

fn the_setsid_grandchild_is_gone_after_the_shutdown(stop: impl FnOnce(&mut Editor)) {
    let (mut e, pid) = bridge_with_a_setsid_grandchild();
    let _cleanup = Leftover(pid);
    stop(&mut e);
    let started = Instant::now();
    e.lines_until_eof();
    let eof_after = started.elapsed();
    assert_eq!(e.wait_exit_code(), Some(0), "{}", e.stderr_text());
    let gone = {
        let end = Instant::now() + RECV_TIMEOUT;
        while process_alive(pid) && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(10));
        }
        !process_alive(pid)
    };
    assert!(gone, "the setsid grandchild {pid} outlived the bridge");
    // The shutdown steps are bounded by the grace (1 s here) twice: the end of output comes
    // with the bridge's exit, not when a descendant lets go of a pipe.
    assert!(
        eof_after < RECV_TIMEOUT,
        "end of output after {eof_after:?}"
    );
}

#[test]
fn a_setsid_grandchild_is_gone_after_the_end_of_stdin_and_stdout_ends() {
    the_setsid_grandchild_is_gone_after_the_shutdown(Editor::close_stdin);
}

#[test]
fn a_setsid_grandchild_is_gone_after_sigterm_and_stdout_ends() {
    the_setsid_grandchild_is_gone_after_the_shutdown(|e| e.signal(libc::SIGTERM));
}

#[test]
fn sigkill_of_the_bridge_kills_the_upstream_by_its_death_signal_and_stdout_ends() {
    // An upstream that would live on after the end of its stdin: only its death signal stops it.
    let mut e = Editor::start(&["--keep-running-after-eof".into()], true);
    e.send_initialize();
    let first: Value = serde_json::from_str(&e.next_line().expect("a line")).expect("JSON");
    assert!(first.get("result").is_some(), "{first}");
    let upstream = children_of(e.pid());
    assert_eq!(upstream.len(), 1, "the bridge has one child: {upstream:?}");
    let upstream = upstream[0];
    let _cleanup = Leftover(upstream);
    assert!(process_alive(upstream));
    e.signal(libc::SIGKILL);
    e.lines_until_eof();
    let end = Instant::now() + RECV_TIMEOUT;
    while process_alive(upstream) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(10));
    }
    let gone = !process_alive(upstream);
    assert!(
        gone,
        "the upstream {upstream} outlived the bridge's SIGKILL"
    );
}
