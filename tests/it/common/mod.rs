//! Black-box harness: starts the real `mcp-bridge` binary over real pipes in front of the
//! crate's fixture server (`mcp-fixture-server --test-tools`), and validates every frame the
//! bridge writes against the official 2025-11-25 schema and every frame the upstream
//! receives against the 2026-07-28 schema.

#[cfg(all(feature = "http", feature = "auth"))]
pub mod collector;
#[cfg(all(feature = "http-server", feature = "http"))]
pub mod http_serve;
#[cfg(all(feature = "http", feature = "auth"))]
pub mod legacy_http_fixture;
#[cfg(all(feature = "http", feature = "auth"))]
pub mod memory_editor;
#[cfg(all(feature = "http", feature = "auth"))]
pub mod relay;
pub mod schema;
pub mod sdk_client;
#[cfg(all(feature = "http", feature = "auth"))]
pub mod signed_bridge;
pub mod stdio_server;
pub mod test_home;

use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The start of the metrics totals line that a bridge that ran writes at its end (at debug).
pub const TOTALS_PREFIX: &str = "mcp-bridge: metrics: debug: totals: ";

/// How long a test waits for one frame (or another event: a stderr line, an exit, a process
/// gone) before it fails. Generous: tests must hold while both cores are busy.
pub const RECV_TIMEOUT: Duration = Duration::from_secs(15);

/// Waits until `done()` holds, checking every 10 ms, at most [`RECV_TIMEOUT`]. Returns
/// whether it held.
pub fn wait_until(mut done: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + RECV_TIMEOUT;
    loop {
        if done() {
            return true;
        }
        if Instant::now() > end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The `mcp-bridge` executable (built with the features `http` and `auth`, its
/// `required-features`).
#[cfg(all(feature = "http", feature = "auth"))]
pub fn bridge_bin() -> &'static str {
    env!("CARGO_BIN_EXE_mcp-bridge")
}

/// Without the features `http` and `auth` there is no `mcp-bridge` executable; the tests of an
/// embedded server run so and never call this.
#[cfg(not(all(feature = "http", feature = "auth")))]
pub fn bridge_bin() -> &'static str {
    panic!("no mcp-bridge binary: build with the features http and auth")
}

/// The README's example server (`mcp-example-server`), for the tests that run it as a user
/// does.
pub fn example_server_bin() -> &'static str {
    env!("CARGO_BIN_EXE_mcp-example-server")
}

/// The fixture upstream (`mcp-fixture-server` of the package `mcp-test-fixtures`): the example
/// server's tools and the modes that misbehave on purpose. Built as [`package_target`] tells.
pub fn server_bin() -> &'static str {
    static BUILT: OnceLock<String> = OnceLock::new();
    BUILT.get_or_init(|| fixture_bin("mcp-fixture-server"))
}

/// The 2025-11-25-only fixture upstream (`mcp-legacy-server` of the package
/// `mcp-test-fixtures`), built as [`package_target`] tells.
pub fn legacy_server_bin() -> &'static str {
    static BUILT: OnceLock<String> = OnceLock::new();
    BUILT.get_or_init(|| fixture_bin("mcp-legacy-server"))
}

/// The MCP server of the Debug Adapter Protocol (`mcp-dap` of the package `mcp-dap`), built as
/// [`package_target`] tells.
pub fn dap_bin() -> &'static str {
    static BUILT: OnceLock<String> = OnceLock::new();
    BUILT.get_or_init(|| utf8_path(package_target("mcp-dap", "--bin", "mcp-dap", &[])))
}

/// The example of the embedded bridge (`examples/embedded/main.rs`), built as
/// [`package_target`] tells (`cargo test --test it` does not build examples).
pub fn embedded_example_bin() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| package_target("mcp-bridge", "--example", "embedded", &[]))
        .clone()
}

/// The conformance fixture (`examples/conformance` of the package `mcp-test-fixtures`: the
/// official conformance suite's reference tools, resources and prompts on the server API),
/// built as [`package_target`] tells. It needs the feature `http-server`.
pub fn conformance_fixture_bin() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            package_target(
                "mcp-test-fixtures",
                "--example",
                "conformance",
                &["http-server"],
            )
        })
        .clone()
}

/// The README's minimal server (`examples/minimal.rs`: one typed tool, `serve_stdio`), built as
/// [`package_target`] tells.
pub fn minimal_example_bin() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| package_target("mcp-bridge", "--example", "minimal", &[]))
        .clone()
}

/// A binary of the package `mcp-test-fixtures`, with its feature `http-server` when this test
/// binary has the bridge's.
fn fixture_bin(name: &str) -> String {
    let own: &[&str] = if cfg!(feature = "http-server") {
        &["http-server"]
    } else {
        &[]
    };
    utf8_path(package_target("mcp-test-fixtures", "--bin", name, own))
}

/// `path` as text, for the helpers that hand a binary's path out as `&str`.
fn utf8_path(path: PathBuf) -> String {
    path.to_str()
        .unwrap_or_else(|| panic!("a binary path that is not UTF-8: {}", path.display()))
        .to_string()
}

/// A binary or example of another package of the workspace (or an example of this one), as
/// fresh as the sources: `cargo build -p PACKAGE KIND NAME` into this test binary's target
/// directory and profile, with this test binary's features of the bridge (and `own`, the
/// package's own features). An integration test gets `CARGO_BIN_EXE_*` only for the binaries
/// of its own package, and `cargo test` builds no example and no other package's binary; cargo
/// decides what is stale, so a binary is never one left by an earlier build (already fresh:
/// well under a second). Called once per test binary and target, through a `OnceLock`. Fails
/// the test with the command when the build fails or leaves no file.
fn package_target(package: &str, kind: &str, name: &str, own: &[&str]) -> PathBuf {
    // This build's binaries: <target>/debug for the profile `dev`, <target>/NAME for others.
    let bin_dir = std::path::Path::new(example_server_bin())
        .parent()
        .expect("the binaries' directory");
    let target_dir = bin_dir.parent().expect("the target directory");
    let profile = match bin_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => "dev",
        Some(other) => other,
        None => panic!("no profile directory in {}", bin_dir.display()),
    };
    let prefix = if package == "mcp-bridge" {
        ""
    } else {
        "mcp-bridge/"
    };
    let mut features: Vec<String> = [
        ("schema-check", cfg!(feature = "schema-check")),
        ("http", cfg!(feature = "http")),
        ("auth", cfg!(feature = "auth")),
        ("http-server", cfg!(feature = "http-server")),
    ]
    .into_iter()
    .filter(|(_, on)| *on)
    .map(|(feature, _)| format!("{prefix}{feature}"))
    .collect();
    features.extend(own.iter().map(|f| f.to_string()));
    let features = features.join(",");
    let command = format!(
        "cargo build -p {package} {kind} {name} --no-default-features --features '{features}' \
         --profile {profile} --target-dir {}",
        target_dir.display()
    );
    let built = Command::new(env!("CARGO"))
        .args(["build", "-p", package, kind, name, "--no-default-features"])
        .args(["--features", features.as_str(), "--profile", profile])
        .arg("--target-dir")
        .arg(target_dir)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .unwrap_or_else(|e| panic!("run {command}: {e}"));
    assert!(built.success(), "{command} failed: {built}");
    let path = match kind {
        "--example" => bin_dir.join("examples").join(name),
        _ => bin_dir.join(name),
    };
    assert!(
        path.is_file(),
        "{command} succeeded but left no {}",
        path.display()
    );
    path
}

/// A key of the file token store (`MCP_BRIDGE_TOKEN_KEY`, 64 hex digits) for tests.
pub const KEY_HEX: &str = "8f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0";

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh scratch directory for one test.
pub fn scratch_dir(tag: &str) -> PathBuf {
    let n = COUNTER.fetch_add(1, Ordering::SeqCst);
    let dir =
        std::env::temp_dir().join(format!("mcp-bridge-test-{}-{tag}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Reads `stderr` to its end on a thread of its own (so the pipe never fills); the text so
/// far, lossily decoded.
pub fn collect_stderr(mut stderr: impl Read + Send + 'static) -> Arc<Mutex<String>> {
    let err = Arc::new(Mutex::new(String::new()));
    let e = err.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 {
                return;
            }
            e.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    err
}

/// One running bridge and what it wrote.
pub struct Bridge {
    pub child: Child,
    stdin: Option<ChildStdin>,
    rx: mpsc::Receiver<Option<String>>,
    stdout_closed: bool,
    pub stderr: Arc<Mutex<String>>,
    /// Set when the reader of the bridge's stderr met its end (every writer closed it).
    stderr_closed: Arc<AtomicBool>,
    /// Frames read but not yet taken by a `recv_*` call.
    backlog: Vec<Value>,
    /// Methods of the requests sent, by id, so responses validate against the right result.
    methods: HashMap<String, String>,
    /// Every frame the bridge wrote, in order (except [`Bridge::opening_events`]).
    pub seen: Vec<Value>,
    /// The text of every frame the bridge wrote, in order, newline included.
    pub seen_lines: Vec<String>,
    /// The list changes after the first acknowledgment of the listen stream, taken by
    /// [`Bridge::initialize_with`] (and left out of `seen`).
    pub opening_events: Vec<Value>,
    pub trace: PathBuf,
    pub dir: PathBuf,
    /// While true, the reader of the bridge's stdout reads nothing more (a slow editor).
    paused: Arc<(Mutex<bool>, Condvar)>,
    /// A line holding this text makes the reader pause before its next read (see
    /// [`Bridge::pause_reading`]).
    pause_marker: Arc<Mutex<Option<String>>>,
    /// While set, the reader of the bridge's stdout rests this long after every so many lines
    /// (a busy editor that reads slowly; see [`Bridge::read_slowly`]).
    pace: Arc<Mutex<Option<(usize, Duration)>>>,
    /// The read end of the bridge's stdout, for [`Bridge::wait_stdout_pipe_full`].
    stdout_fd: i32,
    /// While true, the reader of the bridge's stderr reads nothing (see
    /// [`Bridge::start_stderr_unread`]).
    stderr_paused: Arc<(Mutex<bool>, Condvar)>,
    /// The revision every frame written is validated against.
    pub revision: Revision,
}

/// The revision a process speaks toward its client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Revision {
    /// 2025-11-25 (the bridge, the embedded bridge's legacy path).
    Legacy,
    /// 2026-07-28 (the embedded bridge's modern path).
    Modern,
}

impl Bridge {
    /// Starts `mcp-bridge <bridge_args> -- mcp-fixture-server --test-tools <server_args>`.
    pub fn start(bridge_args: &[&str], server_args: &[&str]) -> Bridge {
        let mut upstream = vec![server_bin().to_string(), "--test-tools".to_string()];
        upstream.extend(server_args.iter().map(|s| s.to_string()));
        Self::start_cmd(bridge_args, &upstream)
    }

    /// Like [`Bridge::start`], but nothing reads the bridge's stderr (an editor that does not
    /// drain it: the pipe fills) until [`Bridge::resume_stderr`].
    pub fn start_stderr_unread(bridge_args: &[&str], server_args: &[&str]) -> Bridge {
        let mut upstream = vec![server_bin().to_string(), "--test-tools".to_string()];
        upstream.extend(server_args.iter().map(|s| s.to_string()));
        Self::start_with(bridge_args, &upstream, false)
    }

    /// Starts `mcp-bridge <bridge_args> -- <upstream...>`.
    pub fn start_cmd(bridge_args: &[&str], upstream: &[String]) -> Bridge {
        Self::start_with(bridge_args, upstream, true)
    }

    /// Starts `program` itself (no upstream process), its frames validated as `revision`.
    pub fn start_program(program: &str, revision: Revision) -> Bridge {
        Self::start_command(&mut Command::new(program), revision)
    }

    /// Starts `cmd` as it is set up (its environment, its arguments), its frames validated
    /// as `revision`.
    pub fn start_command(cmd: &mut Command, revision: Revision) -> Bridge {
        let mut b = Self::spawn(cmd, true);
        b.revision = revision;
        b
    }

    /// Starts `mcp-bridge <bridge_args> <url>` (the URL form) with the proxy variables of the
    /// test's environment removed and `env` added.
    pub fn start_url(bridge_args: &[&str], url: &str, env: &[(&str, &str)]) -> Bridge {
        let mut cmd = Command::new(bridge_bin());
        cmd.args(bridge_args).arg(url);
        for v in [
            "HTTPS_PROXY",
            "https_proxy",
            "ALL_PROXY",
            "all_proxy",
            "NO_PROXY",
            "no_proxy",
            "HTTP_PROXY",
            "http_proxy",
        ] {
            cmd.env_remove(v);
        }
        cmd.envs(env.iter().copied());
        Self::spawn(&mut cmd, true)
    }

    fn start_with(bridge_args: &[&str], upstream: &[String], read_stderr: bool) -> Bridge {
        let mut cmd = Command::new(bridge_bin());
        cmd.args(bridge_args).arg("--").args(upstream);
        Self::spawn(&mut cmd, read_stderr)
    }

    fn spawn(cmd: &mut Command, read_stderr: bool) -> Bridge {
        let dir = scratch_dir("bridge");
        let trace = dir.join("upstream-received.jsonl");
        cmd.env("MCP_FIXTURE_TRACE", &trace)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn mcp-bridge");
        let stdout = child.stdout.take().expect("stdout");
        let stdout_fd = std::os::fd::AsRawFd::as_raw_fd(&stdout);
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = mpsc::channel();
        let paused = Arc::new((Mutex::new(false), Condvar::new()));
        let gate = paused.clone();
        let pause_marker = Arc::new(Mutex::new(None::<String>));
        let marker = pause_marker.clone();
        let pace = Arc::new(Mutex::new(None::<(usize, Duration)>));
        let reader_pace = pace.clone();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            let mut lines = 0usize;
            loop {
                lines += 1;
                let rest = *reader_pace.lock().unwrap();
                if let Some((every, rest)) = rest
                    && lines.is_multiple_of(every.max(1))
                {
                    std::thread::sleep(rest);
                }
                {
                    let (lock, cv) = &*gate;
                    let mut p = lock.lock().unwrap();
                    while *p {
                        p = cv.wait(p).unwrap();
                    }
                }
                let mut line = String::new();
                match r.read_line(&mut line) {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(None);
                        return;
                    }
                    Ok(_) => {
                        let mut m = marker.lock().unwrap();
                        if m.as_deref().is_some_and(|m| line.contains(m)) {
                            *m = None;
                            *gate.0.lock().unwrap() = true;
                        }
                        drop(m);
                        if tx.send(Some(line)).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let err_buf = Arc::new(Mutex::new(String::new()));
        let eb = err_buf.clone();
        let stderr_closed = Arc::new(AtomicBool::new(false));
        let closed = stderr_closed.clone();
        let stderr_paused = Arc::new((Mutex::new(!read_stderr), Condvar::new()));
        let err_gate = stderr_paused.clone();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stderr);
            let mut buf = [0u8; 4096];
            loop {
                {
                    let (lock, cv) = &*err_gate;
                    let mut p = lock.lock().unwrap();
                    while *p {
                        p = cv.wait(p).unwrap();
                    }
                }
                match r.read(&mut buf) {
                    Ok(0) | Err(_) => {
                        closed.store(true, Ordering::SeqCst);
                        return;
                    }
                    Ok(n) => eb
                        .lock()
                        .unwrap()
                        .push_str(&String::from_utf8_lossy(&buf[..n])),
                }
            }
        });
        Bridge {
            stdin: child.stdin.take(),
            child,
            rx,
            stdout_closed: false,
            stderr: err_buf,
            stderr_closed,
            backlog: Vec::new(),
            methods: HashMap::new(),
            seen: Vec::new(),
            seen_lines: Vec::new(),
            opening_events: Vec::new(),
            trace,
            dir,
            paused,
            pause_marker,
            pace,
            stdout_fd,
            stderr_paused,
            revision: Revision::Legacy,
        }
    }

    /// Reads the bridge's stderr from now on (after [`Bridge::start_stderr_unread`]).
    pub fn resume_stderr(&self) {
        *self.stderr_paused.0.lock().unwrap() = false;
        self.stderr_paused.1.notify_all();
    }

    /// Stops reading the bridge's stdout, so that the bridge's pipe fills (a slow editor).
    /// Deterministic: the reader is told to pause right after the answer to a `ping` of its
    /// own, and this returns once that answer was read, so no read of the reader is under way
    /// and nothing after the ping is read until [`Bridge::resume_reading`].
    pub fn pause_reading(&mut self) {
        let id = format!("pause-{}", COUNTER.fetch_add(1, Ordering::SeqCst));
        *self.pause_marker.lock().unwrap() = Some(format!("\"id\":\"{id}\""));
        let r = self.request(json!(id), "ping", json!({}));
        assert_eq!(r["result"], json!({}), "the ping before the pause: {r}");
        assert!(
            *self.paused.0.lock().unwrap(),
            "the reader paused after the ping"
        );
    }

    /// Waits until the bridge's stdout pipe is full (what it holds reaches its capacity,
    /// `F_GETPIPE_SZ`): from then on the bridge's writer queues what it writes. Call after
    /// [`Bridge::pause_reading`].
    pub fn wait_stdout_pipe_full(&self) {
        // SAFETY: fcntl/ioctl on the read end of the pipe this harness owns; the reader
        // thread keeps it open until the end of output.
        let capacity = unsafe { libc::fcntl(self.stdout_fd, libc::F_GETPIPE_SZ) };
        assert!(capacity > 0, "F_GETPIPE_SZ of the bridge's stdout");
        let deadline = Instant::now() + RECV_TIMEOUT;
        loop {
            let mut queued: libc::c_int = 0;
            // SAFETY: as above; FIONREAD writes one int.
            let rc = unsafe { libc::ioctl(self.stdout_fd, libc::FIONREAD, &mut queued) };
            assert_eq!(rc, 0, "FIONREAD on the bridge's stdout");
            if queued >= capacity {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the bridge's stdout pipe holds {queued} of {capacity} bytes after {RECV_TIMEOUT:?}"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Closes the editor's reading end of the bridge's stdout while its stdin stays open (an
    /// editor that stopped reading and went away): the read end's descriptor is replaced by
    /// `/dev/null`, so the pipe has no reader (the bridge's writes get `EPIPE`) and the reader
    /// thread sees the end of its input (after the answer to a ping of its own, which ends
    /// the read that was under way).
    pub fn close_stdout_reading_end(&mut self) {
        let null = std::fs::File::open("/dev/null").expect("open /dev/null");
        // SAFETY: dup2 onto the read end this harness owns: its number stays valid (now
        // /dev/null) for the reader thread, and the pipe's last read end is closed.
        let rc = unsafe { libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&null), self.stdout_fd) };
        assert_eq!(rc, self.stdout_fd, "dup2 onto the bridge's stdout");
        // A read under way holds the pipe until it returns: a ping gives it a line to return.
        let id = format!("last-{}", COUNTER.fetch_add(1, Ordering::SeqCst));
        self.send_request(json!(id), "ping", json!({}));
    }

    /// From now on the reader of the bridge's stdout rests `rest` after every `lines` lines: an
    /// editor that is busy and reads at about `lines / rest` frames a second.
    pub fn read_slowly(&self, lines: usize, rest: Duration) {
        *self.pace.lock().unwrap() = Some((lines, rest));
    }

    /// Reads the bridge's stdout again.
    pub fn resume_reading(&self) {
        *self.paused.0.lock().unwrap() = false;
        self.paused.1.notify_all();
    }

    /// The numbers of the `name: key=value ...` part of the metrics totals line, once the
    /// bridge has written it (at its end, at debug: start the bridge with `--log-level debug`).
    pub fn metrics_totals(&self, part: &str) -> HashMap<String, u64> {
        self.wait_stderr(TOTALS_PREFIX);
        let text = self.stderr_text();
        let line = text
            .lines()
            .find(|l| l.starts_with(TOTALS_PREFIX))
            .unwrap_or_default()
            .to_string();
        let prefix = format!("{part}: ");
        let body = line
            .split("; ")
            .map(|p| p.trim_start_matches(TOTALS_PREFIX))
            .find_map(|p| p.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("no part {part} in the metrics line: {line}"));
        body.split(' ')
            .filter_map(|kv| kv.split_once('='))
            .filter_map(|(k, v)| v.parse().ok().map(|v| (k.to_string(), v)))
            .collect()
    }

    /// Writes raw bytes to the bridge's stdin.
    /// The test's ends of the bridge's stdin (while open) and stdout pipes.
    pub fn pipe_fds(&self) -> (Option<i32>, i32) {
        let stdin = self.stdin.as_ref().map(std::os::fd::AsRawFd::as_raw_fd);
        (stdin, self.stdout_fd)
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write to bridge");
        stdin.flush().expect("flush");
    }

    /// Writes one message as one line.
    pub fn send(&mut self, v: &Value) {
        if let (Some(id), Some(m)) = (v.get("id"), v.get("method").and_then(Value::as_str)) {
            self.methods.insert(id.to_string(), m.to_string());
        }
        let mut line = serde_json::to_vec(v).expect("serialize");
        line.push(b'\n');
        self.send_raw(&line);
    }

    /// Writes `messages`, one line each, with one write (they reach the bridge together).
    pub fn send_at_once(&mut self, messages: &[Value]) {
        let mut lines = Vec::new();
        for v in messages {
            if let (Some(id), Some(m)) = (v.get("id"), v.get("method").and_then(Value::as_str)) {
                self.methods.insert(id.to_string(), m.to_string());
            }
            lines.extend(serde_json::to_vec(v).expect("serialize"));
            lines.push(b'\n');
        }
        self.send_raw(&lines);
    }

    /// Writes a request given as raw JSON text (repeated keys, unpaired surrogates, numbers
    /// written as they are); `id` and `method` say what it is, so its result is validated
    /// against the right schema.
    pub fn send_raw_request(&mut self, id: &Value, method: &str, line: &[u8]) {
        self.methods.insert(id.to_string(), method.to_string());
        let mut line = line.to_vec();
        line.push(b'\n');
        self.send_raw(&line);
    }

    /// Sends `tools/call` of tool `name` with `arguments` (no wait).
    pub fn send_tools_call(&mut self, id: Value, name: &str, arguments: Value) {
        self.send_request(
            id,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        );
    }

    /// Sends a request.
    pub fn send_request(&mut self, id: Value, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    }

    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    fn read_frame(&mut self, limit: Duration) -> Option<Value> {
        if self.stdout_closed {
            return None;
        }
        match self.rx.recv_timeout(limit) {
            Ok(Some(line)) => {
                let v: Value = parse_json(line.trim_end_matches('\n')).unwrap_or_else(|e| {
                    panic!("bridge wrote a line that is not JSON ({e}): {line:?}")
                });
                assert!(line.ends_with('\n'), "a frame must end with a newline");
                match self.revision {
                    Revision::Legacy => schema::validate_to_editor(&v, &self.methods),
                    Revision::Modern => schema::validate_to_client_2026(&v, &self.methods),
                }
                self.seen.push(v.clone());
                self.seen_lines.push(line);
                Some(v)
            }
            Ok(None) => {
                self.stdout_closed = true;
                None
            }
            Err(_) => None,
        }
    }

    /// The next frame, waiting at most [`RECV_TIMEOUT`].
    pub fn recv(&mut self) -> Value {
        if !self.backlog.is_empty() {
            return self.backlog.remove(0);
        }
        match self.read_frame(RECV_TIMEOUT) {
            Some(v) => v,
            None => panic!("no frame from the bridge; stderr:\n{}", self.stderr_text()),
        }
    }

    /// Frames that arrive within `d` (for asserting that nothing comes).
    pub fn recv_for(&mut self, d: Duration) -> Vec<Value> {
        let mut out: Vec<Value> = self.backlog.drain(..).collect();
        let end = Instant::now() + d;
        while let Some(left) = end.checked_duration_since(Instant::now()) {
            match self.read_frame(left) {
                Some(v) => out.push(v),
                None => break,
            }
        }
        out
    }

    /// Every frame until the bridge closes its stdout (after it exited), waiting at most
    /// [`RECV_TIMEOUT`] for the end.
    pub fn recv_to_the_end(&mut self) -> Vec<Value> {
        let mut out: Vec<Value> = self.backlog.drain(..).collect();
        let end = Instant::now() + RECV_TIMEOUT;
        loop {
            let left = end
                .checked_duration_since(Instant::now())
                .unwrap_or_default();
            match self.read_frame(left) {
                Some(v) => out.push(v),
                None if self.stdout_closed => return out,
                None => panic!("stdout is still open; stderr:\n{}", self.stderr_text()),
            }
        }
    }

    /// The first frame that matches `is_it`; frames before it stay in the backlog (in order).
    pub fn recv_matching(&mut self, what: &str, is_it: impl Fn(&Value) -> bool) -> Value {
        self.recv_matching_within(what, is_it, RECV_TIMEOUT)
    }

    /// [`Bridge::recv_matching`], waiting at most `limit`.
    fn recv_matching_within(
        &mut self,
        what: &str,
        is_it: impl Fn(&Value) -> bool,
        limit: Duration,
    ) -> Value {
        if let Some(pos) = self.backlog.iter().position(&is_it) {
            return self.backlog.remove(pos);
        }
        let end = Instant::now() + limit;
        loop {
            let left = end
                .checked_duration_since(Instant::now())
                .unwrap_or_default();
            let Some(v) = self.read_frame(left) else {
                panic!("no {what}; stderr:\n{}", self.stderr_text());
            };
            if is_it(&v) {
                return v;
            }
            self.backlog.push(v);
        }
    }

    /// The text of the frame the bridge wrote as the response with this id (received
    /// already), newline included.
    pub fn response_line(&self, id: &Value) -> String {
        self.seen_lines
            .iter()
            .rev()
            .find(|l| {
                parse_json(l.trim_end())
                    .is_ok_and(|v| v.get("id") == Some(id) && v.get("method").is_none())
            })
            .cloned()
            .unwrap_or_else(|| panic!("no response to {id} was received"))
    }

    /// The lines the upstream received (the fixture's trace), as written.
    /// Only whole lines count: the fixture may be writing its last line right now.
    pub fn upstream_lines(&self) -> Vec<String> {
        let text = std::fs::read_to_string(&self.trace).unwrap_or_default();
        let whole = &text[..text.rfind('\n').map_or(0, |end| end + 1)];
        whole.lines().map(str::to_string).collect()
    }

    /// The response with this id; frames before it stay in the backlog (in order).
    pub fn recv_response(&mut self, id: &Value) -> Value {
        self.recv_matching(&format!("response to {id}"), |f| {
            f.get("id") == Some(id) && f.get("method").is_none()
        })
    }

    /// The response with this id, waiting at most `limit` (for an answer behind a backlog
    /// whose size the test chose, which a busy machine works through slowly).
    pub fn recv_response_within(&mut self, id: &Value, limit: Duration) -> Value {
        self.recv_matching_within(
            &format!("response to {id}"),
            |f| f.get("id") == Some(id) && f.get("method").is_none(),
            limit,
        )
    }

    /// The next notification with this method; frames before it stay in the backlog (in
    /// order).
    pub fn recv_notification(&mut self, method: &str) -> Value {
        self.recv_matching(method, |f| f["method"] == method && f.get("id").is_none())
    }

    /// Waits until the bridge's stderr has a line containing `text`.
    pub fn wait_stderr(&self, text: &str) {
        self.wait_stderr_within(text, RECV_TIMEOUT);
    }

    /// Waits at most `limit` until the bridge's stderr has a line containing `text` (for an
    /// event behind a backlog whose size the test chose, which a busy machine drains slowly).
    pub fn wait_stderr_within(&self, text: &str, limit: Duration) {
        let end = Instant::now() + limit;
        while !self.stderr_text().contains(text) {
            assert!(
                Instant::now() < end,
                "no stderr line with {text:?}; stderr:\n{}",
                self.stderr_text()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Notifications kept in the backlog with this method (taken out).
    pub fn take_notifications(&mut self, method: &str) -> Vec<Value> {
        let (take, keep): (Vec<Value>, Vec<Value>) = self.backlog.drain(..).partition(|f| {
            f.get("method").and_then(Value::as_str) == Some(method) && f.get("id").is_none()
        });
        self.backlog = keep;
        take
    }

    /// `tools/call` of tool `name` with `arguments`: its response.
    pub fn tools_call(&mut self, id: Value, name: &str, arguments: Value) -> Value {
        self.request(
            id,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        )
    }

    /// Sends a request and waits for its response.
    pub fn request(&mut self, id: Value, method: &str, params: Value) -> Value {
        self.send_request(id.clone(), method, params);
        self.recv_response(&id)
    }

    /// `initialize` with the given client capabilities, then `notifications/initialized`,
    /// then waits until the listen stream is up: the first frames after `initialized` are the
    /// gap events of its first acknowledgment, one list change per list that the result
    /// declares with `listChanged`; they are kept in [`Bridge::opening_events`].
    pub fn initialize_with(&mut self, capabilities: Value) -> Value {
        let r = self.initialize_only(capabilities);
        let lists = ["tools", "prompts", "resources"]
            .iter()
            .filter(|l| r["result"]["capabilities"][**l]["listChanged"] == json!(true))
            .count();
        while self.opening_events.len() < lists {
            let v = self.recv();
            assert!(
                v["method"]
                    .as_str()
                    .is_some_and(|m| m.ends_with("/list_changed")),
                "expected the list changes after the first acknowledgment, got {v}"
            );
            self.opening_events.push(v);
        }
        // They are the listen stream's, not a reaction to what a test does next: keep them
        // out of `seen`, whose users ask what the bridge wrote because of their requests.
        for ev in &self.opening_events {
            if let Some(pos) = self.seen.iter().rposition(|f| f == ev) {
                self.seen.remove(pos);
            }
        }
        r
    }

    /// One `initialize` request (revision 2025-11-25, the test client's info) with `id` and
    /// `capabilities`: its answer as it came, a result or an error.
    pub fn initialize_request(&mut self, id: Value, capabilities: Value) -> Value {
        self.request(
            id,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": capabilities,
                   "clientInfo": {"name": "blackbox-test", "version": "1.0.0"}}),
        )
    }

    /// `initialize` and `notifications/initialized` without waiting for the listen stream.
    pub fn initialize_only(&mut self, capabilities: Value) -> Value {
        let r = self.initialize_request(json!(0), capabilities);
        assert!(r.get("result").is_some(), "initialize failed: {r}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        r
    }

    pub fn initialize(&mut self) -> Value {
        self.initialize_with(json!({}))
    }

    /// Sends the bridge `signal` with kill(1) (`"-TERM"`, `"-INT"`, ...).
    pub fn signal(&self, signal: &str) {
        send_signal(self.child.id(), signal);
    }

    /// Waits for the process to exit, at most `limit`.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        let end = Instant::now() + limit;
        loop {
            if let Ok(Some(s)) = self.child.try_wait() {
                return Some(s);
            }
            if Instant::now() > end {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The exit code of the process, waiting at most `limit` (`None`: still running, or ended
    /// by a signal).
    pub fn exit_code(&mut self, limit: Duration) -> Option<i32> {
        self.wait_exit(limit).and_then(|s| s.code())
    }

    /// What the bridge wrote to stderr so far (its reader may lag behind the bridge: to see a
    /// line, use [`Bridge::wait_stderr`]; to see all, [`Bridge::stderr_to_the_end`]).
    pub fn stderr_text(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// All the bridge's stderr, once every writer closed it (after the bridge and the
    /// upstream exited), waiting at most [`RECV_TIMEOUT`].
    pub fn stderr_to_the_end(&self) -> String {
        assert!(
            wait_until(|| self.stderr_closed.load(Ordering::SeqCst)),
            "stderr is still open; so far:\n{}",
            self.stderr_text()
        );
        self.stderr_text()
    }

    /// The lines of all the bridge's stderr ([`Bridge::stderr_to_the_end`]) that `keep` keeps.
    pub fn stderr_lines_to_the_end(&self, keep: impl Fn(&str) -> bool) -> Vec<String> {
        self.stderr_to_the_end()
            .lines()
            .filter(|l| keep(l))
            .map(str::to_string)
            .collect()
    }

    /// Every line the upstream received (from the fixture's trace), each validated against the
    /// 2026-07-28 schema.
    pub fn upstream_received(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.trace).unwrap_or_default();
        // The fixture may be writing its last line right now: only whole lines count.
        let whole = &text[..text.rfind('\n').map_or(0, |end| end + 1)];
        whole
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let v: Value = serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("upstream got non-JSON ({e}): {l}"));
                schema::validate_to_upstream(&v);
                v
            })
            .collect()
    }

    /// Waits until the upstream has received a frame matching `pred`.
    pub fn wait_upstream(&self, pred: impl Fn(&Value) -> bool) -> Value {
        let end = Instant::now() + RECV_TIMEOUT;
        loop {
            if let Some(v) = self.upstream_received().into_iter().find(|v| pred(v)) {
                return v;
            }
            assert!(
                Instant::now() < end,
                "the upstream never received the expected frame"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Parses one JSON text without serde_json's default limit of 128 levels (the bridge passes up
/// to 200 levels from the upstream).
pub fn parse_json(text: &str) -> serde_json::Result<Value> {
    use serde::Deserialize;
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let v = Value::deserialize(&mut de)?;
    de.end()?;
    Ok(v)
}

/// Whether a process with this pid still exists (and is not a zombie).
pub fn process_alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

/// The pids whose parent is `parent` (from `/proc/<pid>/stat`).
#[cfg(target_os = "linux")]
pub fn children_of(parent: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let ppid = stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<i32>().ok());
        if ppid == Some(parent) {
            out.push(pid);
        }
    }
    out
}

/// `{"code": ..., "cause": ...}` of an error response, for compact assertions.
pub fn error_of(resp: &Value) -> (i64, String) {
    let e = resp
        .get("error")
        .unwrap_or_else(|| panic!("expected an error, got {resp}"));
    (
        e["code"].as_i64().unwrap_or(0),
        e["data"]["cause"].as_str().unwrap_or("").to_string(),
    )
}

/// The text of the first content block of a tools/call response.
pub fn text_of(resp: &Value) -> String {
    resp["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content in {resp}"))
        .to_string()
}

/// Sends process `pid` the `signal` with kill(1) (`"-TERM"`, `"-INT"`, ...).
pub fn send_signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success(), "kill {signal}: {status}");
}
