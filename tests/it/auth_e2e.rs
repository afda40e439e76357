//! Sign-in through the real binary (the URL form): the fixture authorization server and a
//! protected MCP server (the crate's server behind the fixture HTTP upstream, reached through
//! the authorization fixture's `/mcp`, which wants a bearer token), a `$BROWSER` script that
//! follows the start URL. First sign-in during `initialize`, the stored sign-in reused after a
//! restart (file store), and `logout` removing it.

use crate::common;
use crate::common::legacy_http_fixture;
use mcp_test_fixtures::auth_fixture;
use mcp_test_fixtures::http_fixture;

use auth_fixture::{Fixture, default_behaviour, free_port, start};
use http_fixture::HttpFixture;
use legacy_http_fixture::{LegacyFixture, Script};
use mcp_bridge::auth::receiver::redirect_uri;
use mcp_bridge::auth::store::sign_in_key;
use mcp_bridge::server::{Outcome, Server, ToolDef};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);

fn browser_script(dir: &Path) -> PathBuf {
    let script = dir.join("follow-browser");
    std::fs::write(&script, "#!/bin/sh\nexec curl -s -L -o /dev/null \"$1\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

struct Bridge {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
    /// Every line read so far.
    seen: Vec<Value>,
}

impl Bridge {
    fn start(fx: &Fixture, dir: &Path, port: u16) -> Bridge {
        Self::start_with_browser(fx, dir, port, &browser_script(dir), &[])
    }

    fn start_with_browser(
        fx: &Fixture,
        dir: &Path,
        port: u16,
        browser: &Path,
        extra_args: &[&str],
    ) -> Bridge {
        Self::start_with_env(fx, dir, port, browser, extra_args, &[])
    }

    fn start_with_env(
        fx: &Fixture,
        dir: &Path,
        port: u16,
        browser: &Path,
        extra_args: &[&str],
        extra_env: &[(&str, &str)],
    ) -> Bridge {
        let mut args: Vec<&str> = extra_args.to_vec();
        let port = port.to_string();
        let url = fx.mcp_url();
        args.extend(["--redirect-port", &port, "--token-store", "file", &url]);
        let mut env = vec![("BROWSER", browser.to_str().unwrap())];
        env.extend_from_slice(extra_env);
        Self::spawn(dir, &args, &env)
    }

    /// The bridge with `args`, `MCP_BRIDGE_TOKEN_KEY` and its state in `dir`, plus `env`.
    fn spawn(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Bridge {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-bridge"))
            .args(args)
            .env("MCP_BRIDGE_TOKEN_KEY", common::KEY_HEX)
            .env("XDG_STATE_HOME", dir)
            // No D-Bus session (as in CI): the keychain does not answer, `auto` takes the
            // file store; a developer's own keychain is never touched.
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .env("XDG_RUNTIME_DIR", dir)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, lines) = mpsc::channel();
        let out = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines() {
                let Ok(l) = l else { break };
                if tx
                    .send(serde_json::from_str(&l).unwrap_or(Value::Null))
                    .is_err()
                {
                    break;
                }
            }
        });
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let (err, sink) = (child.stderr.take().unwrap(), stderr.clone());
        std::thread::spawn(move || {
            for l in BufReader::new(err).lines() {
                let Ok(l) = l else { break };
                sink.lock().unwrap().push_str(&(l + "\n"));
            }
        });
        Bridge {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr,
            seen: Vec::new(),
        }
    }

    fn send(&mut self, v: Value) {
        let s = self.stdin.as_mut().unwrap();
        writeln!(s, "{v}").unwrap();
        s.flush().unwrap();
    }

    /// The next line that is a request of the bridge (a `b-` id).
    fn request(&mut self) -> Value {
        loop {
            let v = self
                .lines
                .recv_timeout(DEADLINE)
                .unwrap_or_else(|_| panic!("no request; stderr:\n{}", self.stderr.lock().unwrap()));
            self.seen.push(v.clone());
            if v["method"].is_string() && v["id"].is_string() {
                return v;
            }
        }
    }

    fn response(&mut self, id: i64) -> Value {
        loop {
            let v = self.lines.recv_timeout(DEADLINE).unwrap_or_else(|_| {
                panic!("no response {id}; stderr:\n{}", self.stderr.lock().unwrap())
            });
            self.seen.push(v.clone());
            if v["id"] == json!(id) {
                return v;
            }
        }
    }

    fn initialize(&mut self) -> Value {
        self.initialize_with(json!({}))
    }

    fn initialize_with(&mut self, capabilities: Value) -> Value {
        self.send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": capabilities,
            "clientInfo": {"name": "test", "version": "1"}}}),
        );
        let r = self.response(1);
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        r
    }

    fn stop(mut self) -> String {
        drop(self.stdin.take());
        let deadline = std::time::Instant::now() + DEADLINE;
        while self.child.try_wait().unwrap().is_none() {
            assert!(
                std::time::Instant::now() < deadline,
                "the bridge did not exit"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // The stderr reader ends with the pipe.
        std::thread::sleep(Duration::from_millis(100));
        self.stderr.lock().unwrap().clone()
    }
}

fn upstream() -> HttpFixture {
    let server = Server::builder("protected", "1.0.0")
        .tool(
            ToolDef::new("echo", json!({"type": "object"})),
            |a, _| async move { Ok(Outcome::text(a["text"].as_str().unwrap_or_default())) },
        )
        .build();
    HttpFixture::start(server, vec![])
}

/// Every file under `dir`, as paths relative to it (none when it does not exist).
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            if path.is_dir() {
                todo.push(path);
            } else {
                found.push(path.strip_prefix(dir).unwrap_or(&path).to_path_buf());
            }
        }
    }
    found
}

#[test]
fn a_sign_in_with_the_memory_store_writes_nothing_in_the_state_folder() {
    let up = upstream();
    let fx = start(default_behaviour());
    *fx.upstream.lock().unwrap() = Some(up.url());
    let dir = common::scratch_dir("memory-store");
    let (port, url) = (free_port().to_string(), fx.mcp_url());
    let browser = browser_script(&dir);
    let args = ["--redirect-port", &port, "--token-store", "memory", &url];
    let mut b = Bridge::spawn(&dir, &args, &[("BROWSER", browser.to_str().unwrap())]);
    let init = b.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "protected", "{init}");
    b.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}}));
    let r = b.response(2);
    assert_eq!(r["result"]["content"][0]["text"], "hi", "{r}");
    let stderr = b.stop();
    assert!(stderr.contains("mcp-bridge: sign in at "), "{stderr}");
    assert!(stderr.contains("token store: memory"), "{stderr}");
    assert_eq!(fx.counters.code_grants.load(Ordering::SeqCst), 1);
    // No token, no entry lock, no sign-in marker: nothing of it outlives the process.
    assert_eq!(files_under(&dir.join("mcp-bridge")), Vec::<PathBuf>::new());
}

#[test]
fn the_first_sign_in_runs_during_initialize_and_a_restart_reuses_the_stored_tokens() {
    let up = upstream();
    let fx = start(default_behaviour());
    *fx.upstream.lock().unwrap() = Some(up.url());
    let dir = common::scratch_dir("first");
    let port = free_port();

    let mut b = Bridge::start(&fx, &dir, port);
    let init = b.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "protected", "{init}");
    b.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}}));
    let r = b.response(2);
    assert_eq!(r["result"]["content"][0]["text"], "hi", "{r}");
    let err1 = b.stop();
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 1);
    assert_eq!(fx.counters.code_grants.load(Ordering::SeqCst), 1);
    assert!(err1.contains("mcp-bridge: sign in at "), "{err1}");
    assert!(err1.contains("token store: encrypted files in"), "{err1}");

    // A restart: the stored sign-in serves at once.
    let mut b = Bridge::start(&fx, &dir, port);
    let init = b.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "protected", "{init}");
    let err2 = b.stop();
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 1);
    assert!(!err2.contains("sign in at"), "{err2}");

    // No token, code or refresh token in any stderr line.
    for s in fx
        .secrets
        .lock()
        .unwrap()
        .iter()
        .filter(|s| !s.starts_with("client-"))
    {
        assert!(
            !err1.contains(s.as_str()) && !err2.contains(s.as_str()),
            "a secret on stderr"
        );
    }

    // logout removes it: the next start signs in again.
    let o = Command::new(env!("CARGO_BIN_EXE_mcp-bridge"))
        .args([
            "logout",
            "--redirect-port",
            &port.to_string(),
            "--token-store",
            "file",
            &fx.mcp_url(),
        ])
        .env("MCP_BRIDGE_TOKEN_KEY", common::KEY_HEX)
        .env("XDG_STATE_HOME", &dir)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut b = Bridge::start(&fx, &dir, port);
    b.initialize();
    b.stop();
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 2);
}

#[test]
fn a_sign_in_after_initialized_asks_the_editor_with_a_url_elicitation() {
    let up = upstream();
    let fx = start(default_behaviour());
    *fx.upstream.lock().unwrap() = Some(up.url());
    let dir = common::scratch_dir("elicit");
    let port = free_port();
    let mut b = Bridge::start(&fx, &dir, port);
    b.initialize_with(json!({"elicitation": {"form": {}, "url": {}}}));
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 1);
    // The authorization server forgets the sign-in: the next call needs a new one.
    fx.expire_all();
    fx.revoke_refresh_tokens();
    b.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "again"}}}));
    let q = b.request();
    assert_eq!(q["method"], "elicitation/create", "{q}");
    assert_eq!(q["params"]["mode"], "url");
    let url = q["params"]["url"].as_str().unwrap().to_string();
    assert!(url.starts_with(&format!("{}/authorize?", fx.base)), "{url}");
    assert!(q["params"]["elicitationId"].is_string());
    // The editor accepts and opens the URL (a browser follows it).
    b.send(json!({"jsonrpc": "2.0", "id": q["id"], "result": {"action": "accept"}}));
    let status = Command::new("curl")
        .args(["-s", "-L", "-o", "/dev/null", &url])
        .status()
        .unwrap();
    assert!(status.success());
    let r = b.response(2);
    assert_eq!(r["result"]["content"][0]["text"], "again", "{r}");
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 2);
    // The sign-in completed: the editor is told, with the elicitation's id, before the retried
    // request's response (2025-11-25 notifications/elicitation/complete).
    let complete = json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete",
        "params": {"elicitationId": q["params"]["elicitationId"]}});
    let at = b.seen.iter().position(|v| v == &complete);
    let answered = b.seen.iter().position(|v| v["id"] == json!(2));
    assert!(at.is_some() && at < answered, "{:?}", b.seen);
    let err = b.stop();
    // One sign-in line for each sign-in; the bridge opened no browser after initialized
    // (the second authorize came from this test's curl).
    assert_eq!(err.matches("sign in at").count(), 2, "{err}");
}

/// Whether the process `pid` has `path` open.
fn has_open(pid: u32, path: &Path) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|fds| {
            fds.filter_map(Result::ok)
                .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|p| p == path))
        })
        .unwrap_or(false)
}

#[test]
fn a_sign_in_that_runs_when_initialized_arrives_asks_the_editor_if_it_has_not_shown_its_url() {
    let up = upstream();
    let fx = start(default_behaviour());
    *fx.upstream.lock().unwrap() = Some(up.url());
    let dir = common::scratch_dir("initialized-mid-flow");
    let port = free_port();
    let mut b = Bridge::start_with_browser(
        &fx,
        &dir,
        port,
        &browser_script(&dir),
        &["--log-level", "debug"],
    );
    // `initialize` without `initialized` yet: the first sign-in runs in the browser.
    b.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"url": {}}},
        "clientInfo": {"name": "test", "version": "1"}}}),
    );
    let init = b.response(1);
    assert_eq!(init["result"]["serverInfo"]["name"], "protected", "{init}");
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 1);
    // The next call needs a new sign-in, which starts before `initialized` and then waits at
    // the entry lock that "another bridge" (this test) holds: it has not shown its URL yet.
    fx.expire_all();
    fx.revoke_refresh_tokens();
    let locks = dir.join("mcp-bridge/locks");
    let key = sign_in_key(&fx.mcp_url(), "default", &redirect_uri(port));
    let held = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(mcp_bridge::auth::store::lock::lock(
            Some(&locks),
            &key,
            DEADLINE,
        ))
        .unwrap();
    b.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "again"}}}));
    let lock_file = locks.join(format!("{key}.lock"));
    let deadline = std::time::Instant::now() + DEADLINE;
    while !has_open(b.child.id(), &lock_file) {
        assert!(
            std::time::Instant::now() < deadline,
            "the sign-in never reached the entry lock"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // `initialized` arrives while it runs; the SignIn actor takes it at once.
    b.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let taken = "mcp-bridge: sign-in: debug: the editor is initialized: a sign-in not yet shown to the user asks the editor with a URL elicitation";
    while !b.stderr.lock().unwrap().contains(taken) {
        assert!(
            std::time::Instant::now() < deadline,
            "{}",
            b.stderr.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(held);
    // So the running sign-in asks the editor, and the bridge opens no browser.
    let q = b.request();
    assert_eq!(q["method"], "elicitation/create", "{q}");
    assert_eq!(q["params"]["mode"], "url");
    let url = q["params"]["url"].as_str().unwrap().to_string();
    assert!(url.starts_with(&format!("{}/authorize?", fx.base)), "{url}");
    b.send(json!({"jsonrpc": "2.0", "id": q["id"], "result": {"action": "accept"}}));
    let status = Command::new("curl")
        .args(["-s", "-L", "-o", "/dev/null", &url])
        .status()
        .unwrap();
    assert!(status.success());
    let r = b.response(2);
    assert_eq!(r["result"]["content"][0]["text"], "again", "{r}");
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 2);
    let err = b.stop();
    assert_eq!(err.matches("sign in at").count(), 2, "{err}");
}

#[test]
fn a_declined_url_elicitation_fails_the_request_with_sign_in_denied() {
    let up = upstream();
    let fx = start(default_behaviour());
    *fx.upstream.lock().unwrap() = Some(up.url());
    let dir = common::scratch_dir("decline");
    let port = free_port();
    let mut b = Bridge::start(&fx, &dir, port);
    b.initialize_with(json!({"elicitation": {"url": {}}}));
    fx.expire_all();
    fx.revoke_refresh_tokens();
    b.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {}}}));
    let q = b.request();
    b.send(json!({"jsonrpc": "2.0", "id": q["id"], "result": {"action": "decline"}}));
    let r = b.response(2);
    assert_eq!(r["error"]["code"], -32603, "{r}");
    let text = r.to_string();
    assert!(text.contains("sign_in_denied"), "{r}");
    // During the cooldown the next request fails at once, without a question.
    b.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo", "arguments": {}}}));
    let r = b.response(3);
    assert!(r.to_string().contains("sign_in_denied"), "{r}");
    b.stop();
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 1);
}

#[test]
fn two_bridges_started_at_once_against_an_expired_token_refresh_exactly_once() {
    let up = upstream();
    let fx = start(default_behaviour());
    *fx.upstream.lock().unwrap() = Some(up.url());
    let dir = common::scratch_dir("two");
    let port = free_port();
    let mut b = Bridge::start(&fx, &dir, port);
    b.initialize();
    b.stop();
    fx.expire_all();
    // Both start at once, on the same store entry; the refresh token rotates at each use.
    let mut one = Bridge::start(&fx, &dir, port);
    let mut two = Bridge::start(&fx, &dir, port);
    for b in [&mut one, &mut two] {
        b.send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        );
    }
    for b in [&mut one, &mut two] {
        let r = b.response(1);
        assert_eq!(r["result"]["serverInfo"]["name"], "protected", "{r}");
    }
    one.stop();
    two.stop();
    assert_eq!(fx.counters.refresh_grants.load(Ordering::SeqCst), 1);
    assert_eq!(fx.counters.refused_refreshes.load(Ordering::SeqCst), 0);
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 1);
}

/// A text browser in `$BROWSER` would run in the foreground on the bridge's own stdin and
/// stdout (the `webbrowser` crate's rule for lynx, w3m, curl...), that is on the editor's pipes:
/// it is refused, never started, and nothing it could write reaches the editor. The sign-in
/// line still names the URL, so the user can open it; the sign-in ends at its time limit.
#[test]
fn a_text_browser_in_browser_is_never_run_on_the_editors_pipes() {
    let up = upstream();
    let fx = start(default_behaviour());
    *fx.upstream.lock().unwrap() = Some(up.url());
    let dir = common::scratch_dir("text-browser");
    let marker = dir.join("lynx-ran");
    let lynx = dir.join("lynx");
    std::fs::write(
        &lynx,
        format!(
            "#!/bin/sh\ntouch '{}'\necho '{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"forged\":true}}}}'\nexec curl -s -L -o /dev/null \"$1\"\n",
            marker.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&lynx, std::fs::Permissions::from_mode(0o755)).unwrap();

    let mut b =
        Bridge::start_with_browser(&fx, &dir, free_port(), &lynx, &["--sign-in-timeout", "2"]);
    let init = b.initialize();
    assert!(init["result"]["forged"].is_null(), "{init}");
    assert!(init["error"].is_object(), "{init}");
    let err = b.stop();
    assert!(!marker.exists(), "the text browser ran; stderr:\n{err}");
    // One warning line, when the browser is refused (not a second one at the time limit).
    let why = "browser_launch_failed: the browser did not start; open the URL of the sign-in line on stderr, or use --no-browser ($BROWSER names the text browser lynx, which would run on the editor's stdin and stdout: set BROWSER to a graphical browser, or use --no-browser)";
    assert_browser_failure_lines(&err, why);
    assert!(err.contains("mcp-bridge: sign in at "), "{err}");
    assert_eq!(fx.counters.code_grants.load(Ordering::SeqCst), 0);
}

/// The stderr lines of a sign-in whose browser did not start (`why`): the sign-in's own
/// warning, then the failed initialize's line, which says why too; one each.
fn assert_browser_failure_lines(err: &str, why: &str) {
    let warnings: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("browser_launch_failed"))
        .collect();
    assert_eq!(
        warnings,
        vec![
            format!("mcp-bridge: sign-in: warn: {why}"),
            format!(
                "mcp-bridge: frontend: warn: initialize failed: The upstream server did not complete server/discover (discover_failed, -32603): {why}"
            ),
        ],
        "{err}"
    );
}

/// A `$BROWSER` naming a program that is not installed: the `webbrowser` crate would quietly
/// try other openers, and the sign-in would end only at its time limit (600 s here, longer than
/// the test waits for the answer). It fails at once with `browser_launch_failed`.
#[test]
fn a_browser_that_is_not_installed_fails_the_sign_in_at_once() {
    let up = upstream();
    let fx = start(default_behaviour());
    *fx.upstream.lock().unwrap() = Some(up.url());
    let dir = common::scratch_dir("missing-browser");
    let mut b = Bridge::start_with_browser(
        &fx,
        &dir,
        free_port(),
        Path::new("/usr/bin/nonexistent-browser"),
        &["--sign-in-timeout", "600"],
    );
    let init = b.initialize();
    let why = "browser_launch_failed: the browser did not start; open the URL of the sign-in line on stderr, or use --no-browser ($BROWSER names /usr/bin/nonexistent-browser, which is not found: set BROWSER to an installed browser, or use --no-browser)";
    assert_eq!(
        init,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603,
            "message": "The upstream server did not complete server/discover",
            "data": {"cause": "discover_failed", "detail": why}}})
    );
    let err = b.stop();
    assert_browser_failure_lines(&err, why);
    assert_eq!(fx.counters.code_grants.load(Ordering::SeqCst), 0);
}

#[test]
fn a_401_on_a_legacy_post_refreshes_the_token_and_sends_the_request_again() {
    // A 2025-11-25 server behind sign-in: the era fallback after the first sign-in, then the
    // access token expires; the next 2025-11-25 POST gets 401 and goes through the same
    // challenge loop as a 2026-07-28 one.
    let legacy = LegacyFixture::start(Script::default());
    let fx = start(default_behaviour());
    *fx.upstream.lock().unwrap() = Some(legacy.url());
    let dir = common::scratch_dir("legacy");
    let port = free_port();
    let mut b = Bridge::start(&fx, &dir, port);
    let init = b.initialize();
    assert_eq!(
        init["result"]["serverInfo"]["name"], "legacy-http-fixture",
        "{init}"
    );
    legacy.wait_for(DEADLINE, |s| s.verb == "GET");
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 1);
    fx.expire_all();
    b.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "again"}}}));
    let r = b.response(2);
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "again"}]}})
    );
    // One refresh, no second sign-in; the server got the call once, in its session.
    assert_eq!(fx.counters.refresh_grants.load(Ordering::SeqCst), 1);
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 1);
    let calls: Vec<_> = legacy
        .seen()
        .into_iter()
        .filter(|s| s.method() == "tools/call")
        .collect();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].status, 200);
    assert_eq!(calls[0].header("mcp-session-id"), Some("sess-1"));
    assert_eq!(calls[0].header("mcp-protocol-version"), Some("2025-11-25"));
    let err = b.stop();
    assert!(err.contains("speaks 2025-11-25"), "{err}");
    // The DELETE at close went through the sign-in too (the fixture wants a token).
    let deletes: Vec<u16> = legacy
        .seen()
        .iter()
        .filter(|s| s.verb == "DELETE")
        .map(|s| s.status)
        .collect();
    assert_eq!(deletes, vec![200]);
}

#[test]
fn logout_all_deletes_the_sign_in_the_client_registration_and_the_index() {
    let up = upstream();
    let fx = start(default_behaviour());
    *fx.upstream.lock().unwrap() = Some(up.url());
    let dir = common::scratch_dir("logout-all");
    let port = free_port();
    let tokens = dir.join("mcp-bridge").join("tokens");
    let entries = || -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&tokens)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let mut b = Bridge::start(&fx, &dir, port);
    b.initialize();
    b.stop();
    assert_eq!(fx.counters.registrations.load(Ordering::SeqCst), 1);
    // A sign-in, the dynamic client registration it used, and the index.
    let stored = entries();
    assert_eq!(stored.len(), 3, "{stored:?}");
    assert_eq!(
        stored.iter().filter(|e| e.starts_with("client-")).count(),
        1
    );
    assert_eq!(
        stored.iter().filter(|e| e.starts_with("signin-")).count(),
        1
    );
    assert!(stored.contains(&"index".to_string()), "{stored:?}");

    let o = Command::new(env!("CARGO_BIN_EXE_mcp-bridge"))
        .args(["logout", "--all", "--token-store", "file"])
        .env("MCP_BRIDGE_TOKEN_KEY", common::KEY_HEX)
        .env("XDG_STATE_HOME", &dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains(
            "deleted 1 stored sign-in(s) and 1 client registration(s) from encrypted files in "
        ),
        "{err}"
    );
    assert_eq!(entries(), Vec::<String>::new());

    // The next start registers and signs in again.
    let mut b = Bridge::start(&fx, &dir, port);
    b.initialize();
    b.stop();
    assert_eq!(fx.counters.registrations.load(Ordering::SeqCst), 2);
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 2);
}

#[test]
fn the_browser_gets_none_of_the_secret_variables() {
    let up = upstream();
    let mut behaviour = default_behaviour();
    behaviour.registration = false;
    behaviour.known_client = Some(("pre-id".into(), Some("s3cret-client".into())));
    let fx = start(behaviour);
    *fx.upstream.lock().unwrap() = Some(up.url());
    let dir = common::scratch_dir("browser-env");
    // A browser that writes its environment down, then follows the start URL.
    let dump = dir.join("browser-env.txt");
    let browser = dir.join("env-browser");
    std::fs::write(
        &browser,
        format!(
            "#!/bin/sh\nenv > '{}'\nexec curl -s -L -o /dev/null \"$1\"\n",
            dump.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    let issuer = fx.issuer();
    let mut b = Bridge::start_with_env(
        &fx,
        &dir,
        free_port(),
        &browser,
        &[
            "--client-id",
            "pre-id",
            "--client-issuer",
            &issuer,
            "--header-env",
            "X-Api-Key=LIVE_API_KEY",
        ],
        &[
            ("MCP_BRIDGE_CLIENT_SECRET", "s3cret-client"),
            ("LIVE_API_KEY", "hdr-s3cret-value"),
            ("HARMLESS_MARKER", "still-here"),
        ],
    );
    let init = b.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "protected", "{init}");
    b.stop();
    assert_eq!(fx.counters.code_grants.load(Ordering::SeqCst), 1);
    // The header still went upstream: it was read before the variable left the environment.
    let seen = up.seen();
    assert!(!seen.is_empty());
    assert!(
        seen.iter()
            .all(|s| s.header("x-api-key") == Some("hdr-s3cret-value")),
        "the --header-env header is missing upstream"
    );
    let env = std::fs::read_to_string(&dump).unwrap();
    assert!(env.contains("HARMLESS_MARKER=still-here"), "{env}");
    for secret in [
        "MCP_BRIDGE_TOKEN_KEY",
        "MCP_BRIDGE_CLIENT_SECRET",
        "LIVE_API_KEY",
        common::KEY_HEX,
        "s3cret-client",
        "hdr-s3cret-value",
    ] {
        assert!(
            !env.contains(secret),
            "{secret} reached the browser:\n{env}"
        );
    }
}

/// The names of the threads of process `pid` (`/proc/PID/task/*/comm`), sorted.
fn thread_names(pid: u32) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|n| n.trim_end().to_string())
        .collect();
    v.sort();
    v
}

/// The stderr lines about the token store.
fn store_lines(err: &str) -> Vec<&str> {
    err.lines().filter(|l| l.contains("token store:")).collect()
}

/// The line of `auto` at start: at debug (only the store that opens has an info line).
const AUTO_LINE: &str = "mcp-bridge: sign-in: debug: token store: auto (opened at first use)";

/// `--token-store auto` (the default) in front of an upstream that never asks for a sign-in:
/// the token store is never opened: no keychain probe (zbus's `async-io` and `blocking-N`
/// threads), no store line but the debug line at start, nothing under the state directory.
#[test]
fn a_url_bridge_whose_upstream_never_asks_for_a_sign_in_never_opens_the_token_store() {
    let up = upstream();
    let dir = common::scratch_dir("never-asks");
    let url = up.url();
    let mut b = Bridge::spawn(&dir, &["--log-level", "debug", &url], &[]);
    b.initialize();
    b.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}}));
    let r = b.response(2);
    assert_eq!(r["result"]["content"][0]["text"], "hi", "{r}");
    // A thread names itself once it runs: wait for the names (a busy machine), not for more.
    let deadline = std::time::Instant::now() + DEADLINE;
    let mut threads = thread_names(b.child.id());
    while threads != THREADS_WITHOUT_STORE && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        threads = thread_names(b.child.id());
    }
    let err = b.stop();
    assert_eq!(threads, THREADS_WITHOUT_STORE, "{err}");
    assert_eq!(store_lines(&err), [AUTO_LINE], "{err}");
    assert_eq!(
        err.matches("no stored sign-in is marked for this server")
            .count(),
        1,
        "{err}"
    );
    assert!(!err.contains("no keychain"), "{err}");
    assert!(!dir.join("mcp-bridge").exists(), "{err}");
}

/// The threads of an idle URL bridge that never opened its token store: the actor thread and
/// the stderr writer and stdout watcher (names cut to 15 bytes by the kernel); no thread of
/// zbus (`async-io`, `blocking-N`) and none of the blocking pool (no store call was made).
const THREADS_WITHOUT_STORE: [&str; 3] = ["mcp-bridge", "mcp-bridge-stde", "mcp-bridge-stdo"];

/// `auto` (here without D-Bus: the file store) opens at the first 401 and marks the sign-in it
/// stores; a restart with the marker sends the stored token at once (no 401); a sign-in stored
/// without a marker (an older bridge) is found after one 401 without a browser and gets its
/// marker; `logout` removes the marker; a marker whose tokens are gone signs in as before.
/// At info, the one store line is the store that opens.
#[test]
fn auto_opens_the_store_at_the_first_sign_in_and_its_marker_brings_the_sign_in_back_with_no_401() {
    let up = upstream();
    let fx = start(default_behaviour());
    *fx.upstream.lock().unwrap() = Some(up.url());
    let dir = common::scratch_dir("auto-marker");
    let port = free_port();
    let browser = browser_script(&dir);
    let (port_s, url) = (port.to_string(), fx.mcp_url());
    let args = ["--redirect-port", port_s.as_str(), url.as_str()];
    let env = [("BROWSER", browser.to_str().unwrap())];
    let marker =
        dir.join("mcp-bridge/signins")
            .join(sign_in_key(&url, "default", &redirect_uri(port)));
    let opened_line = format!(
        "mcp-bridge: sign-in: info: token store: encrypted files in {}, opened at its first use",
        dir.join("mcp-bridge/tokens").display()
    );
    let count = |c: &std::sync::atomic::AtomicUsize| c.load(Ordering::SeqCst);
    let run = || {
        let mut b = Bridge::spawn(&dir, &args, &env);
        let init = b.initialize();
        assert_eq!(init["result"]["serverInfo"]["name"], "protected", "{init}");
        let threads = thread_names(b.child.id());
        (threads, b.stop())
    };

    // First start: nothing stored; the 401 opens the store, the sign-in is stored and marked.
    let (threads, err) = run();
    assert_eq!(count(&fx.counters.authorizes), 1);
    assert_eq!(count(&fx.counters.mcp_unauthorized), 1);
    assert_eq!(store_lines(&err), [opened_line.as_str()], "{err}");
    assert!(err.contains("mcp-bridge: sign in at "), "{err}");
    assert!(marker.exists(), "{err}");
    // The control of the first test's observable: the opened store probed the keychain.
    assert!(threads.iter().any(|t| t == "async-io"), "{threads:?}");

    // Restart: the marker opens the store at the first request, whose token is the stored one.
    let (_, err) = run();
    assert_eq!(count(&fx.counters.authorizes), 1);
    assert_eq!(count(&fx.counters.mcp_unauthorized), 1, "{err}");
    assert_eq!(store_lines(&err), [opened_line.as_str()], "{err}");
    assert!(!err.contains("sign in at"), "{err}");

    // Stored by an older bridge (no marker): one 401, the stored sign-in, no browser; marked.
    std::fs::remove_file(&marker).unwrap();
    let (_, err) = run();
    assert_eq!(count(&fx.counters.authorizes), 1);
    assert_eq!(count(&fx.counters.code_grants), 1);
    assert_eq!(count(&fx.counters.mcp_unauthorized), 2, "{err}");
    assert!(!err.contains("sign in at"), "{err}");
    assert!(marker.exists(), "{err}");
    let (_, err) = run();
    assert_eq!(count(&fx.counters.mcp_unauthorized), 2, "{err}");

    // logout (auto: the file store here) deletes the sign-in and its marker.
    let o = Command::new(env!("CARGO_BIN_EXE_mcp-bridge"))
        .args(["logout", "--redirect-port", &port_s, &url])
        .env("MCP_BRIDGE_TOKEN_KEY", common::KEY_HEX)
        .env("XDG_STATE_HOME", &dir)
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env("XDG_RUNTIME_DIR", &dir)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("deleted 1 stored sign-in(s)"), "{out}");
    assert!(!marker.exists(), "{out}");

    // A marker whose tokens are gone: the store opens at the first request, finds nothing,
    // and the 401 signs in as before.
    std::fs::write(&marker, b"").unwrap();
    let (_, err) = run();
    assert_eq!(count(&fx.counters.authorizes), 2);
    assert_eq!(count(&fx.counters.code_grants), 2);
    assert_eq!(count(&fx.counters.mcp_unauthorized), 3, "{err}");
    assert_eq!(store_lines(&err), [opened_line.as_str()], "{err}");
    assert!(err.contains("mcp-bridge: sign in at "), "{err}");
    assert!(marker.exists());
}

/// A marker whose sign-in is gone from the store (deleted outside the bridge) opens the store
/// at the first request once more, which finds nothing and removes the marker: the next start
/// leaves the store closed, as for a server that never asked for a sign-in (before, every
/// start opened the store until the next sign-in).
#[test]
fn a_marker_whose_sign_in_is_gone_is_removed_when_the_store_is_opened_for_it() {
    let up = upstream();
    let dir = common::scratch_dir("stale-marker");
    let port = free_port();
    let (port_s, url) = (port.to_string(), up.url());
    let args = [
        "--log-level",
        "debug",
        "--redirect-port",
        port_s.as_str(),
        url.as_str(),
    ];
    let markers = dir.join("mcp-bridge/signins");
    let marker = markers.join(sign_in_key(&url, "default", &redirect_uri(port)));
    std::fs::create_dir_all(&markers).unwrap();
    std::fs::write(&marker, b"").unwrap();
    let opened_line = format!(
        "mcp-bridge: sign-in: info: token store: encrypted files in {}, opened at its first use",
        dir.join("mcp-bridge/tokens").display()
    );
    const REMOVED: &str = "mcp-bridge: sign-in: debug: the token store holds no sign-in for this server: its marker is removed";
    const DEFERRED: &str = "mcp-bridge: sign-in: debug: no stored sign-in is marked for this server; the token store is read at the first 401/403";
    let run = || {
        let mut b = Bridge::spawn(&dir, &args, &[]);
        let init = b.initialize();
        assert_eq!(init["result"]["serverInfo"]["name"], "protected", "{init}");
        b.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "echo", "arguments": {"text": "hi"}}}));
        let r = b.response(2);
        assert_eq!(r["result"]["content"][0]["text"], "hi", "{r}");
        b.stop()
    };
    let count = |err: &str, line: &str| err.lines().filter(|l| *l == line).count();

    // The marker opens the store, which holds nothing for this server: the marker goes.
    let err = run();
    assert_eq!(
        store_lines(&err),
        [AUTO_LINE, opened_line.as_str()],
        "{err}"
    );
    assert_eq!(
        (count(&err, REMOVED), count(&err, DEFERRED)),
        (1, 0),
        "{err}"
    );
    assert!(!marker.exists(), "{err}");

    // The next start has no marker: the store stays closed (the upstream never asks).
    let err = run();
    assert_eq!(store_lines(&err), [AUTO_LINE], "{err}");
    assert_eq!(
        (count(&err, REMOVED), count(&err, DEFERRED)),
        (0, 1),
        "{err}"
    );
    assert!(!marker.exists(), "{err}");
    assert!(!err.contains("sign in at"), "{err}");
}

/// The time a sign-in runs is not counted in `server/discover`'s time limit (only up to
/// `--sign-in-timeout` of it, the sign-in's own limit): a user slower in the browser than
/// `--discover-timeout` still gets the `initialize`, signed in.
#[test]
fn a_sign_in_longer_than_the_discover_time_limit_still_initializes() {
    const DISCOVER: Duration = Duration::from_secs(1);
    let up = upstream();
    let fx = start(default_behaviour());
    *fx.upstream.lock().unwrap() = Some(up.url());
    let dir = common::scratch_dir("slow-user");
    // The user takes twice the discover time limit before the redirect.
    let browser = dir.join("slow-browser");
    std::fs::write(
        &browser,
        "#!/bin/sh\nsleep 2\nexec curl -s -L -o /dev/null \"$1\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut b = Bridge::start_with_browser(
        &fx,
        &dir,
        free_port(),
        &browser,
        &["--discover-timeout", "1"],
    );
    let started = std::time::Instant::now();
    let init = b.initialize();
    let elapsed = started.elapsed();
    assert_eq!(init["result"]["serverInfo"]["name"], "protected", "{init}");
    assert!(elapsed >= 2 * DISCOVER, "{elapsed:?}");
    let err = b.stop();
    assert_eq!(fx.counters.code_grants.load(Ordering::SeqCst), 1, "{err}");
    assert!(!err.contains("discover_failed"), "{err}");
}

/// The stderr of the bridges of a test holds no token, code or client secret of the fixture,
/// and no file under the state directory `dir` holds a client secret in the clear (the file
/// store encrypts the registration with the tokens).
fn assert_no_secret_leaked(fx: &Fixture, dir: &Path, stderrs: &[&str]) {
    let secrets: Vec<String> = fx
        .secrets
        .lock()
        .unwrap()
        .iter()
        .filter(|s| !s.starts_with("client-"))
        .cloned()
        .collect();
    assert!(secrets.iter().any(|s| s.starts_with("csecret-")));
    for s in &secrets {
        for err in stderrs {
            assert!(!err.contains(s.as_str()), "a secret on stderr:\n{err}");
        }
    }
    let mut files = vec![dir.to_path_buf()];
    while let Some(p) = files.pop() {
        if p.is_dir() {
            files.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        } else if let Ok(bytes) = std::fs::read(&p) {
            let text = String::from_utf8_lossy(&bytes);
            for s in secrets.iter().filter(|s| s.starts_with("csecret-")) {
                assert!(
                    !text.contains(s.as_str()),
                    "{} holds a client secret",
                    p.display()
                );
            }
        }
    }
}

/// A dynamic registration that gives a `client_secret` and `method`: the code exchange and
/// every refresh (in the running bridge, and after a restart, from the stored registration)
/// authenticate as the registration named; the fixture refuses any other way with
/// `invalid_client`.
fn a_registration_with_a_secret_signs_in_and_refreshes_with(method: &str) {
    let up = upstream();
    let mut behaviour = default_behaviour();
    behaviour.registered_auth = Some(method.into());
    let fx = start(behaviour);
    *fx.upstream.lock().unwrap() = Some(up.url());
    let dir = common::scratch_dir(method);
    let port = free_port();
    let count = |c: &std::sync::atomic::AtomicUsize| c.load(Ordering::SeqCst);

    let mut b = Bridge::start(&fx, &dir, port);
    let init = b.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "protected", "{init}");
    let clients = fx.clients();
    assert_eq!(clients.len(), 1, "{clients:?}");
    assert!(clients.values().all(|c| c.method == method), "{clients:?}");
    // A refresh in the running bridge.
    fx.expire_all();
    b.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "refreshed"}}}));
    let r = b.response(2);
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "refreshed"}]}})
    );
    let err1 = b.stop();
    assert_eq!(
        (
            count(&fx.counters.code_grants),
            count(&fx.counters.refresh_grants)
        ),
        (1, 1),
        "{err1}"
    );

    // A restart: the secret comes from the store.
    fx.expire_all();
    let mut b = Bridge::start(&fx, &dir, port);
    let init = b.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "protected", "{init}");
    let err2 = b.stop();
    assert_eq!(count(&fx.counters.refresh_grants), 2, "{err2}");
    assert_eq!(count(&fx.counters.invalid_clients), 0, "{err2}");
    assert_eq!(count(&fx.counters.registrations), 1, "{err2}");
    assert_eq!(count(&fx.counters.authorizes), 1, "{err2}");
    assert_no_secret_leaked(&fx, &dir, &[&err1, &err2]);
}

#[test]
fn a_registration_with_client_secret_basic_signs_in_and_refreshes_with_http_basic() {
    a_registration_with_a_secret_signs_in_and_refreshes_with("client_secret_basic");
}

#[test]
fn a_registration_with_client_secret_post_signs_in_and_refreshes_with_the_secret_in_the_body() {
    a_registration_with_a_secret_signs_in_and_refreshes_with("client_secret_post");
}

/// A stored registration whose secret expires within the margin is not used: the next
/// sign-in registers again (no refresh with the old secret, no `invalid_client`).
#[test]
fn a_client_secret_that_expires_soon_means_a_new_registration_before_it_is_used() {
    let up = upstream();
    let mut behaviour = default_behaviour();
    behaviour.registered_auth = Some("client_secret_basic".into());
    behaviour.secret_expires_in_secs = Some(30);
    let fx = start(behaviour);
    *fx.upstream.lock().unwrap() = Some(up.url());
    let dir = common::scratch_dir("secret-expiry");
    let port = free_port();
    let count = |c: &std::sync::atomic::AtomicUsize| c.load(Ordering::SeqCst);

    let mut b = Bridge::start(&fx, &dir, port);
    let init = b.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "protected", "{init}");
    b.stop();
    assert_eq!(count(&fx.counters.registrations), 1);

    fx.expire_all();
    let mut b = Bridge::start(&fx, &dir, port);
    let init = b.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "protected", "{init}");
    let err = b.stop();
    assert_eq!(count(&fx.counters.registrations), 2, "{err}");
    assert_eq!(count(&fx.counters.authorizes), 2, "{err}");
    assert_eq!(count(&fx.counters.code_grants), 2, "{err}");
    assert_eq!(count(&fx.counters.refresh_grants), 0, "{err}");
    assert_eq!(count(&fx.counters.invalid_clients), 0, "{err}");
    assert_eq!(count(&fx.counters.expired_secret_uses), 0, "{err}");
    // The second sign-in's client is the new registration.
    let authorized = fx.authorize_clients.lock().unwrap().clone();
    assert_eq!(authorized.len(), 2);
    assert_ne!(authorized[0], authorized[1]);
}

/// The authorization server restarts and forgets its clients (and its tokens) while the bridge
/// runs with a stored sign-in: the refresh gets `invalid_client`, the stored registration is
/// dropped, the bridge registers again, the editor's URL elicitation signs in, and the call
/// succeeds. The new registration is stored: a restart of the bridge uses its sign-in at once.
#[test]
fn an_authorization_server_that_forgot_its_clients_gets_a_new_registration_and_the_call_succeeds() {
    let up = upstream();
    let fx = start(default_behaviour());
    *fx.upstream.lock().unwrap() = Some(up.url());
    let dir = common::scratch_dir("forgot");
    let port = free_port();
    let count = |c: &std::sync::atomic::AtomicUsize| c.load(Ordering::SeqCst);
    let mut b = Bridge::start_with_browser(
        &fx,
        &dir,
        port,
        &browser_script(&dir),
        &["--sign-in-timeout", "20"],
    );
    b.initialize_with(json!({"elicitation": {"url": {}}}));
    assert_eq!(count(&fx.counters.registrations), 1);

    fx.forget_clients();
    b.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "again"}}}));
    let q = b.request();
    assert_eq!(q["method"], "elicitation/create", "{q}");
    b.send(json!({"jsonrpc": "2.0", "id": q["id"], "result": {"action": "accept"}}));
    let url = q["params"]["url"].as_str().unwrap().to_string();
    let status = Command::new("curl")
        .args(["-s", "-L", "-o", "/dev/null", &url])
        .status()
        .unwrap();
    assert!(status.success());
    let r = b.response(2);
    assert_eq!(
        r,
        json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "again"}]}})
    );
    let err = b.stop();
    assert_eq!(count(&fx.counters.invalid_clients), 1, "{err}");
    assert_eq!(count(&fx.counters.registrations), 2, "{err}");
    assert_eq!(count(&fx.counters.authorizes), 2, "{err}");
    assert_eq!(count(&fx.counters.code_grants), 2, "{err}");
    let clients = fx.clients();
    let authorized = fx.authorize_clients.lock().unwrap().clone();
    assert_eq!(clients.len(), 1);
    assert!(clients.contains_key(&authorized[1]), "{authorized:?}");

    // The next start sends the new sign-in's token with its first request.
    let unauthorized = count(&fx.counters.mcp_unauthorized);
    let mut b = Bridge::start(&fx, &dir, port);
    let init = b.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "protected", "{init}");
    let err = b.stop();
    assert_eq!(count(&fx.counters.mcp_unauthorized), unauthorized, "{err}");
    assert_eq!(count(&fx.counters.registrations), 2, "{err}");
}

/// The authorization server forgets its clients between the redirect and the code exchange:
/// `invalid_client` there registers again and signs in once more (the browser opens twice);
/// an authorization server that refuses every client at its token endpoint gets that second
/// try only.
#[test]
fn a_code_exchange_refused_with_invalid_client_signs_in_once_more_with_a_new_registration() {
    let up = upstream();
    let fx = start(default_behaviour());
    *fx.upstream.lock().unwrap() = Some(up.url());
    let dir = common::scratch_dir("exchange-forgot");
    let count = |c: &std::sync::atomic::AtomicUsize| c.load(Ordering::SeqCst);
    fx.counters.forget_at_code_grants.store(1, Ordering::SeqCst);
    let mut b = Bridge::start(&fx, &dir, free_port());
    let init = b.initialize();
    assert_eq!(init["result"]["serverInfo"]["name"], "protected", "{init}");
    let err = b.stop();
    assert_eq!(count(&fx.counters.invalid_clients), 1, "{err}");
    assert_eq!(count(&fx.counters.registrations), 2, "{err}");
    assert_eq!(count(&fx.counters.authorizes), 2, "{err}");
    assert_eq!(count(&fx.counters.code_grants), 1, "{err}");
    assert_eq!(err.matches("mcp-bridge: sign in at ").count(), 2, "{err}");

    // Bounded: once.
    let fx = start(default_behaviour());
    *fx.upstream.lock().unwrap() = Some(up.url());
    fx.behaviour
        .lock()
        .unwrap()
        .forget_clients_at_each_code_grant = true;
    let dir = common::scratch_dir("exchange-always");
    let mut b = Bridge::start(&fx, &dir, free_port());
    let init = b.initialize();
    let err = b.stop();
    assert_eq!(
        init,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603,
            "message": "The upstream server did not complete server/discover",
            "data": {"cause": "discover_failed", "detail": "sign_in_failed: the sign-in failed (the token endpoint refused the request (invalid_client), also after a new client registration)"}}}),
        "{err}"
    );
    assert_eq!(count(&fx.counters.invalid_clients), 2, "{err}");
    assert_eq!(count(&fx.counters.registrations), 2, "{err}");
    assert_eq!(count(&fx.counters.authorizes), 2, "{err}");
    assert_eq!(count(&fx.counters.code_grants), 0, "{err}");
}

/// An authorization server that forgot its clients and gave no refresh token: the stored
/// client reaches only its authorization page, which refuses it without a redirect, so the
/// sign-in times out. The timeout's advice, followed, works: `logout --forget-client` deletes
/// the sign-in and its registration, and the next start registers and signs in.
#[test]
fn the_sign_in_timeout_advice_to_forget_the_client_works() {
    let up = upstream();
    let mut behaviour = default_behaviour();
    behaviour.issue_refresh_tokens = false;
    let fx = start(behaviour);
    *fx.upstream.lock().unwrap() = Some(up.url());
    let dir = common::scratch_dir("advice");
    let port = free_port();
    let count = |c: &std::sync::atomic::AtomicUsize| c.load(Ordering::SeqCst);
    let browser = browser_script(&dir);
    let mut b = Bridge::start(&fx, &dir, port);
    b.initialize();
    b.stop();
    assert_eq!(count(&fx.counters.registrations), 1);

    fx.forget_clients();
    let mut b = Bridge::start_with_browser(&fx, &dir, port, &browser, &["--sign-in-timeout", "2"]);
    let init = b.initialize();
    let err = b.stop();
    let detail = init["error"]["data"]["detail"].as_str().unwrap_or_default();
    let advice = "if the authorization page refused the client, the authorization server forgot it: run mcp-bridge logout --forget-client <url> with this server's --redirect-port and --token-store";
    assert_eq!(
        detail,
        format!(
            "sign_in_timeout: the sign-in did not complete in time; sign in sooner or raise --sign-in-timeout ({advice}) (2 s)"
        ),
        "{err}"
    );
    assert_eq!(count(&fx.counters.authorizes), 2, "{err}");
    assert_eq!(count(&fx.counters.registrations), 1, "{err}");

    // The advice, as it says.
    let o = Command::new(env!("CARGO_BIN_EXE_mcp-bridge"))
        .args([
            "logout",
            "--forget-client",
            "--redirect-port",
            &port.to_string(),
            "--token-store",
            "file",
            &fx.mcp_url(),
        ])
        .env("MCP_BRIDGE_TOKEN_KEY", common::KEY_HEX)
        .env("XDG_STATE_HOME", &dir)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains(
            "deleted 1 stored sign-in(s) and 1 client registration(s) from encrypted files in "
        ),
        "{out}"
    );
    let mut b = Bridge::start(&fx, &dir, port);
    let init = b.initialize();
    let err = b.stop();
    assert_eq!(
        init["result"]["serverInfo"]["name"], "protected",
        "{init}\n{err}"
    );
    assert_eq!(count(&fx.counters.registrations), 2, "{err}");
    assert_eq!(count(&fx.counters.code_grants), 2, "{err}");
}
