//! The command line of the real binary: help, version, invalid arguments (exit 2, the cause
//! with the argument, never what follows a `=` of an unknown option), the command with or
//! without `--`, and a command that cannot start.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// How long a test waits for a line of the bridge.
const WAIT: Duration = Duration::from_secs(15);
const USAGE: &str = "Usage: mcp-bridge [OPTIONS] [--] <COMMAND> [ARGS]...";

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-bridge"))
        .args(args)
        .output()
        .expect("run");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn help_explains_the_form_and_every_option() {
    let (code, out, _) = run(&["--help"]);
    assert_eq!(code, 0);
    assert!(out.contains(USAGE), "{out}");
    for both_forms in [
        "The command starts at the first argument that is not an option of mcp-bridge, like env or\nnohup: everything from there on goes to it verbatim, options included. A `--` before it is\noptional; use it when the command's name itself starts with `-`.",
        "  mcp-bridge python3 server.py --port 1\n",
        "  mcp-bridge --name files -- npx -y some-mcp-server --root /tmp\n",
    ] {
        assert!(
            out.contains(both_forms),
            "{both_forms:?} missing from --help:\n{out}"
        );
    }
    for opt in [
        "--name",
        "--log-level",
        "--discover-timeout",
        "--max-line-bytes",
        "--list-timeout",
        "--read-timeout",
        "--call-timeout",
        "--max-in-flight",
        "--shutdown-grace",
        "--version",
    ] {
        assert!(out.contains(opt), "{opt} missing from --help");
    }
    assert!(out.contains("[default: 67108864]") && out.contains("[default: info]"));
}

/// The first screen of `--help` (25 lines) says what the bridge does with both kinds of
/// server and what the command is; the options come in sections after it.
#[test]
fn the_first_screen_of_help_says_what_the_bridge_does_with_both_kinds_of_server() {
    let (code, out, _) = run(&["--help"]);
    assert_eq!(code, 0);
    let first: String = out.lines().take(25).map(|l| format!("{l}\n")).collect();
    let about = "\
Lets an MCP 2025-11-25 editor (VS Code, Claude Desktop, Cursor) use an MCP server of either
revision. The editor starts mcp-bridge as its stdio server; mcp-bridge starts the server's
command (or reaches its URL) and asks it server/discover:
  - a server that speaks MCP 2026-07-28 is translated for the 2025-11-25 editor;
  - a server that speaks 2025-11-25 or earlier is passed through unchanged (the fallback).
In an editor's config, write the full path of mcp-bridge and of the server's program: an
editor starts servers with a short PATH. Every option and message: docs/usage.md of the
source tree that `cargo install --path` built.

Usage: mcp-bridge [OPTIONS] [--] <COMMAND> [ARGS]...
";
    assert!(first.starts_with(about), "{first}");
    assert!(
        first.contains("\nArguments:\n  [COMMAND]...\n          The upstream MCP server command and its arguments, verbatim: "),
        "{first}"
    );
    assert!(!out.contains("2026-07-28 server command"), "{out}");
    for heading in [
        "\nOptions:\n",
        "\nTime limits:\n",
        "\nLimits:\n",
        "\nListen stream:\n",
        "\nURL form:\n",
        "\nSign-in (URL form):\n",
        "\nMany servers:\n",
    ] {
        assert!(
            out.contains(heading),
            "{heading:?} missing from --help:\n{out}"
        );
    }
    let (code, short, _) = run(&["-h"]);
    assert_eq!(code, 0);
    assert!(
        short.starts_with("Lets an MCP 2025-11-25 editor (VS Code, Claude Desktop, Cursor) use an MCP server of either revision.\n\nUsage: "),
        "{short}"
    );
}

/// Every exit code the bridge has (src/main.rs, the Supervisor's shutdown and its second
/// signal), in the paragraph of --help.
#[test]
fn help_names_every_exit_code() {
    let (code, out, _) = run(&["--help"]);
    assert_eq!(code, 0);
    let text = "Exit codes: 0 at the end of stdin (also on SIGTERM, SIGINT or SIGHUP, and when the editor\ncloses the bridge's stdout); 1 when the upstream server exits after initialize (or a URL\nserver ends its 2025-11-25 session), and on an internal error; 2 for invalid arguments (also\na missing --header-env variable, a --ca-file or --token-key-file that cannot be used, a\ntoken store that does not open, and a --config file that cannot be used); 128 + the signal's number (143, 130, 129) when a second\nSIGTERM, SIGINT or SIGHUP cuts the shutdown short.\n";
    assert!(out.contains(text), "{text:?} missing from --help:\n{out}");
}

#[test]
fn help_names_the_logout_subcommand() {
    let (code, out, _) = run(&["--help"]);
    assert_eq!(code, 0);
    for text in [
        "       mcp-bridge logout [--account <LABEL>] [--forget-client] <URL> | --all\n",
        "The logout subcommand deletes stored sign-ins of URL servers: `mcp-bridge logout <URL>` one\n(give the server entry's --account, --redirect-port, --token-store and key), `mcp-bridge\nlogout --all` every one; see `mcp-bridge logout --help`.\n",
    ] {
        assert!(out.contains(text), "{text:?} missing from --help:\n{out}");
    }
}

#[test]
fn help_explains_the_url_form_and_its_options() {
    let (code, out, _) = run(&["--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("       mcp-bridge [OPTIONS] <URL>"), "{out}");
    for text in [
        "With a URL in place of the command (https, or http to a loopback host: localhost,\n*.localhost, 127.0.0.0/8, [::1]; no user info, no fragment), mcp-bridge speaks MCP\n2026-07-28 over Streamable HTTP to the server at that URL.",
        "HTTPS_PROXY or ALL_PROXY is the proxy, NO_PROXY names hosts without one; a loopback host\nnever uses a proxy.",
        "  mcp-bridge --header-env Authorization=API_AUTH https://mcp.example.com/mcp\n",
        "--header <NAME:VALUE>",
        "--header-env <NAME=VAR>",
        "--ca-file <PEM>",
        "--max-response-bytes <BYTES>",
    ] {
        assert!(out.contains(text), "{text:?} missing from --help:\n{out}");
    }
}

#[test]
fn the_url_form_refuses_bad_urls_headers_variables_and_ca_files_with_exit_2() {
    let dir = std::env::temp_dir().join(format!("mcp-bridge-cli-url-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let not_pem = dir.join("not.pem");
    std::fs::write(&not_pem, "sekret-value\n").expect("write");
    let not_pem = not_pem.to_string_lossy().into_owned();
    let missing = dir.join("missing.pem").to_string_lossy().into_owned();
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["http://mcp.example.com/mcp?token=sekret-value"],
            "the URL uses http with a host that is not loopback: use https".into(),
        ),
        (
            vec!["https://me:sekret-value@mcp.example.com/mcp"],
            "the URL must not carry a user or a password".into(),
        ),
        (
            vec!["ftp://me:sekret-value@mcp.example.com/mcp"],
            "the URL must use https (or http to a loopback host)".into(),
        ),
        (
            vec!["WS://127.0.0.1:1/mcp?sekret-value"],
            "the URL must use https (or http to a loopback host)".into(),
        ),
        (
            vec!["https://mcp.example.com/mcp#sekret-value"],
            "the URL must not have a fragment".into(),
        ),
        (
            vec!["--header", "Accept: sekret-value", "https://h/mcp"],
            "the header Accept is set by the bridge or by HTTP and cannot be given".into(),
        ),
        (
            vec![
                "--header",
                "Proxy-Authorization: sekret-value",
                "https://h/mcp",
            ],
            "the header Proxy-Authorization is set by the bridge or by HTTP and cannot be given"
                .into(),
        ),
        (
            vec!["--header-env", "Mcp-Name=HOME", "https://h/mcp"],
            "the header Mcp-Name is set by the bridge or by HTTP and cannot be given".into(),
        ),
        (
            vec![
                "--header-env",
                "Authorization=MCP_BRIDGE_NO_SUCH_VAR",
                "https://h/mcp",
            ],
            "the variable MCP_BRIDGE_NO_SUCH_VAR of --header-env Authorization is not set".into(),
        ),
        (
            vec!["--ca-file", &not_pem, "https://h/mcp"],
            format!("--ca-file {not_pem} holds no PEM certificate"),
        ),
        (
            vec!["--ca-file", &missing, "https://h/mcp"],
            format!("--ca-file {missing} cannot be read: No such file or directory (os error 2)"),
        ),
        (
            vec!["--max-response-bytes", "0", "https://h/mcp"],
            "invalid value '0' for '--max-response-bytes <BYTES>': 0 is not in 1..=1073741824"
                .into(),
        ),
    ];
    for (args, cause) in cases {
        let (code, out, err) = run(&args);
        assert_eq!(code, 2, "{args:?}");
        assert!(out.is_empty());
        assert!(
            err.starts_with(&format!("mcp-bridge: cli: error: {cause}\n")),
            "{args:?}: {err}"
        );
        assert!(!err.contains("sekret-value"), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn version_prints_the_package_version() {
    let (code, out, _) = run(&["--version"]);
    assert_eq!(code, 0);
    assert_eq!(
        out.trim(),
        format!("mcp-bridge {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn invalid_arguments_exit_2_naming_the_argument_the_value_and_what_is_accepted() {
    for (args, cause) in [
        (
            vec!["--max-line-bytes", "0", "--", "x"],
            "invalid value '0' for '--max-line-bytes <BYTES>': 0 is not in 1..=1073741824",
        ),
        (
            vec!["--max-line-bytes", "2000000000", "--", "x"],
            "invalid value '2000000000' for '--max-line-bytes <BYTES>': 2000000000 is not in 1..=1073741824",
        ),
        (
            vec!["--log-level", "loud", "--", "x"],
            "invalid value 'loud' for '--log-level <LEVEL>' [possible values: error, warn, info, debug, trace]",
        ),
        (
            vec!["--discover-timeout", "1x", "--", "x"],
            "invalid value '1x' for '--discover-timeout <SECONDS>': expected seconds, at least 0.1 and at most 2592000",
        ),
        (
            vec!["--call-timeout", "-1", "cat"],
            "invalid value '-1' for '--call-timeout <SECONDS>': expected seconds, at least 0.1 and at most 2592000",
        ),
        (
            vec!["--call-timeout", "1e-12", "cat"],
            "invalid value '1e-12' for '--call-timeout <SECONDS>': expected seconds, at least 0.1 and at most 2592000",
        ),
        (
            vec!["--sign-in-timeout", "0.09", "cat"],
            "invalid value '0.09' for '--sign-in-timeout <SECONDS>': expected seconds, at least 0.1 and at most 2592000",
        ),
        (
            vec!["--listen-backoff-initial", "1e-9", "cat"],
            "invalid value '1e-9' for '--listen-backoff-initial <SECONDS>': expected seconds, at least 0.05 and at most 2592000",
        ),
        (
            vec!["--listen-backoff-max", "0.01", "cat"],
            "invalid value '0.01' for '--listen-backoff-max <SECONDS>': expected seconds, at least 0.05 and at most 2592000",
        ),
        (
            vec!["--listen-stable", "0", "cat"],
            "invalid value '0' for '--listen-stable <SECONDS>': expected seconds, at least 0.05 and at most 2592000",
        ),
        (
            vec![],
            "missing the upstream command: give it after the options (or after --)",
        ),
        (
            vec!["--bogus", "x"],
            "unexpected argument '--bogus' (not an option of mcp-bridge; the upstream command comes after the options)",
        ),
        // What follows a `=` may be a secret given to a mistyped option: never shown.
        (
            vec!["--token=sekret-value", "--", "x"],
            "unexpected argument '--token' (not an option of mcp-bridge; the upstream command comes after the options)",
        ),
    ] {
        let (code, out, err) = run(&args);
        assert_eq!(code, 2, "{args:?}");
        assert!(out.is_empty());
        assert_eq!(
            err.lines().next(),
            Some(format!("mcp-bridge: cli: error: {cause}").as_str()),
            "{args:?}: {err}"
        );
        assert!(err.contains(USAGE), "{err}");
        assert!(!err.contains("sekret-value"), "{err}");
    }
}

/// A bridge started with exactly `args` (no `--` added), its stdout lines and its stderr.
struct Started {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    stderr: Arc<Mutex<String>>,
    /// Told when the bridge's stderr is at its end (every writer closed it).
    stderr_ended: mpsc::Receiver<()>,
}

impl Started {
    fn new(args: &[&str], path_var: Option<&str>, cwd: Option<&Path>) -> Started {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcp-bridge"));
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(p) = path_var {
            cmd.env("PATH", p);
        }
        if let Some(d) = cwd {
            cmd.current_dir(d);
        }
        let mut child = cmd.spawn().expect("spawn mcp-bridge");
        let stdout = child.stdout.take().expect("stdout");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(l) = line else { return };
                if tx.send(l).is_err() {
                    return;
                }
            }
        });
        let err = Arc::new(Mutex::new(String::new()));
        let (ended, stderr_ended) = mpsc::channel();
        let sink = err.clone();
        std::thread::spawn(move || {
            let mut r = stderr;
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = r.read(&mut buf) {
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
            let _ = ended.send(());
        });
        Started {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr: err,
            stderr_ended,
        }
    }

    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        let mut line = serde_json::to_vec(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        )
        .expect("serialize");
        line.push(b'\n');
        let stdin = self.stdin.as_mut().expect("stdin");
        stdin.write_all(&line).expect("write");
        stdin.flush().expect("flush");
        let end = Instant::now() + WAIT;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).unwrap_or_else(|_| {
                panic!("no response to {method}; stderr:\n{}", self.stderr_text())
            });
            let v: Value = serde_json::from_str(&line).expect("JSON");
            if v["id"] == json!(id) {
                return v;
            }
        }
    }

    fn initialize(&mut self) -> Value {
        self.request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "cli-test", "version": "1"}}),
        )
    }

    fn stderr_text(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// The first stderr line, waiting for it (nothing has been sent to the bridge).
    fn first_stderr_line(&self) -> String {
        let end = Instant::now() + WAIT;
        loop {
            if let Some((line, _)) = self.stderr_text().split_once('\n') {
                return line.to_string();
            }
            assert!(Instant::now() < end, "no stderr line");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// All of the bridge's stderr, once it is at its end (after the exit).
    fn stderr_to_the_end(&self) -> String {
        assert!(
            self.stderr_ended.recv_timeout(WAIT).is_ok(),
            "stderr is still open; so far:\n{}",
            self.stderr_text()
        );
        self.stderr_text()
    }

    /// Closes stdin and waits for the exit code.
    fn finish(&mut self) -> Option<i32> {
        self.stdin = None;
        let end = Instant::now() + WAIT;
        loop {
            if let Some(s) = self.child.try_wait().expect("try_wait") {
                return s.code();
            }
            assert!(Instant::now() < end, "the bridge did not exit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-bridge-cli-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir.canonicalize().expect("canonical scratch dir")
}

/// `serverInfo.name` and `instructions` of the initialize result of a bridge started with
/// `args`: they show that `--name` reached the bridge and `--instructions` the server.
fn name_and_instructions(args: &[&str]) -> (Value, Value) {
    let mut b = Started::new(args, None, None);
    let r = b.initialize();
    let out = (
        r["result"]["serverInfo"]["name"].clone(),
        r["result"]["instructions"].clone(),
    );
    assert_eq!(b.finish(), Some(0));
    out
}

#[test]
fn options_after_the_command_go_to_the_command_and_options_before_it_to_the_bridge() {
    let server = crate::common::server_bin();
    let expected = (
        json!("custom"),
        json!("set by --instructions after the command"),
    );
    for args in [
        vec![
            "--name",
            "custom",
            server,
            "--no-server-info",
            "--instructions",
            "set by --instructions after the command",
        ],
        vec![
            "--name",
            "custom",
            "--",
            server,
            "--no-server-info",
            "--instructions",
            "set by --instructions after the command",
        ],
        vec![
            "--name=custom",
            server,
            "--no-server-info",
            "--instructions=set by --instructions after the command",
        ],
    ] {
        assert_eq!(name_and_instructions(&args), expected, "{args:?}");
    }
}

/// An option of the bridge after the server's program goes to the server, as the rule of the
/// command line says; a filter there filters nothing, so a warning per option names it and
/// where it belongs (its value is never shown: it may be a secret). `--help`, `-h` and the
/// server's own options get none.
#[test]
fn an_option_of_the_bridge_after_the_program_gets_a_warning_that_says_where_it_belongs() {
    let mut b = Started::new(
        &[
            "--name",
            "x",
            "sh",
            "-c",
            "cat",
            "--deny-tool",
            "write_*",
            "--port",
            "1",
            "--log-level=s3cr3t",
            "--deny-tool",
            "edit_*",
            "--help",
            "-h",
        ],
        None,
        None,
    );
    assert_eq!(b.finish(), Some(0));
    let text = b.stderr_to_the_end();
    let warnings: Vec<&str> = text.lines().filter(|l| l.contains(": warn: ")).collect();
    assert_eq!(
        warnings,
        [
            "mcp-bridge: cli: warn: --deny-tool comes after the server's program, so it goes to the server, not to mcp-bridge: an option of mcp-bridge goes before the program (mcp-bridge --deny-tool ... -- PROGRAM ...)",
            "mcp-bridge: cli: warn: --log-level comes after the server's program, so it goes to the server, not to mcp-bridge: an option of mcp-bridge goes before the program (mcp-bridge --log-level ... -- PROGRAM ...)",
        ]
    );
    assert!(!text.contains("s3cr3t"), "{text}");
}

#[test]
fn without_a_command_the_bridge_says_it_is_missing() {
    for args in [vec!["--name", "x"], vec!["--name", "x", "--"]] {
        let (code, _, err) = run(&args);
        assert_eq!(code, 2);
        assert!(
            err.starts_with("mcp-bridge: cli: error: missing the upstream command: give it after the options (or after --)\n"),
            "{err}"
        );
    }
}

/// The exact `spawn_failed` error of `initialize` for `detail`.
fn spawn_failed(detail: &str) -> Value {
    json!({"code": -32603, "message": "The bridge could not start the upstream server",
           "data": {"cause": "spawn_failed", "detail": detail}})
}

/// Starts a bridge whose command cannot start, checks the stderr line it writes before any
/// request and the error `initialize` gets, and that it keeps serving; its stderr is then
/// those two errors and nothing else (no metrics totals: the bridge never ran).
fn unstartable(
    args: &[&str],
    path_var: Option<&str>,
    cwd: Option<&Path>,
    line: &str,
    detail: &str,
) {
    let mut b = Started::new(args, path_var, cwd);
    assert_eq!(b.first_stderr_line(), line);
    let r = b.initialize();
    assert_eq!(r["error"], spawn_failed(detail), "{r}");
    assert_eq!(b.request(1, "ping", json!({}))["result"], json!({}));
    assert!(!r.to_string().contains("sekret"), "{r}");
    assert_eq!(b.finish(), Some(0));
    let err = b.stderr_to_the_end();
    let failed = format!(
        "mcp-bridge: frontend: warn: initialize failed: The bridge could not start the upstream server (spawn_failed, -32603): {detail}"
    );
    assert_eq!(err.lines().collect::<Vec<_>>(), [line, failed.as_str()]);
}

#[test]
fn a_command_not_in_path_is_reported_at_start_and_initialize_gets_spawn_failed() {
    let d = scratch("not-in-path");
    let path = format!("{0}/bin:{0}/usr/bin", d.display());
    unstartable(
        &["no-such-mcp-server", "--token", "sekret"],
        Some(&path),
        None,
        &format!(
            "mcp-bridge: bridge: error: cannot start 'no-such-mcp-server': not found in PATH ({path})"
        ),
        "cannot start 'no-such-mcp-server': not found in PATH",
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_path_with_no_file_is_reported_at_start_and_initialize_gets_spawn_failed() {
    let d = scratch("no-file");
    unstartable(
        &["--", "./missing/srv", "sekret"],
        None,
        Some(&d),
        &format!(
            "mcp-bridge: bridge: error: cannot start './missing/srv': no such file: ./missing/srv (relative to {})",
            d.display()
        ),
        "cannot start './missing/srv': no such file",
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_file_that_is_not_executable_is_reported_at_start_and_initialize_gets_spawn_failed() {
    use std::os::unix::fs::PermissionsExt;
    let d = scratch("not-executable");
    let file = d.join("srv");
    std::fs::write(&file, "#!/bin/sh\n").expect("write");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let path = d.display().to_string();
    unstartable(
        &["srv", "sekret"],
        Some(&path),
        None,
        &format!("mcp-bridge: bridge: error: cannot start 'srv': not executable: {path}/srv"),
        "cannot start 'srv': not executable",
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_script_whose_interpreter_is_not_installed_is_reported_at_start_and_initialize_gets_spawn_failed()
 {
    use std::os::unix::fs::PermissionsExt;
    let d = scratch("no-interpreter");
    let file = d.join("srv");
    std::fs::write(&file, "#!/opt/no-such-python/bin/python3 -u\nprint()\n").expect("write");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let path = d.display().to_string();
    unstartable(
        &["srv", "sekret"],
        Some(&path),
        None,
        &format!(
            "mcp-bridge: bridge: error: cannot start 'srv': the interpreter of its #! line is not installed: /opt/no-such-python/bin/python3 (in {path}/srv)"
        ),
        "cannot start 'srv': the interpreter of its #! line is not installed",
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_file_option_that_cannot_be_read_is_told_in_the_os_words() {
    let url = "https://127.0.0.1:1/mcp";
    for (args, line) in [
        (
            vec!["--ca-file", "/nonexistent/ca.pem", url],
            "mcp-bridge: cli: error: --ca-file /nonexistent/ca.pem cannot be read: No such file or directory (os error 2)",
        ),
        (
            vec!["--ca-file", "/", url],
            "mcp-bridge: cli: error: --ca-file / cannot be read: Is a directory (os error 21)",
        ),
        (
            vec!["--token-key-file", "/nonexistent/key", url],
            "mcp-bridge: cli: error: --token-key-file /nonexistent/key cannot be read: No such file or directory (os error 2)",
        ),
        (
            vec![
                "--token-store",
                "file",
                "--token-key-file",
                "/nonexistent/key",
                url,
            ],
            "mcp-bridge: cli: error: --token-store file: --token-key-file /nonexistent/key cannot be read: No such file or directory (os error 2)",
        ),
        (
            vec![
                "logout",
                "--token-store",
                "file",
                "--token-key-file",
                "/nonexistent/key",
                url,
            ],
            "mcp-bridge: logout: error: --token-store file: --token-key-file /nonexistent/key cannot be read: No such file or directory (os error 2)",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_mcp-bridge"))
            .args(&args)
            .env_remove("MCP_BRIDGE_TOKEN_KEY")
            .stdin(Stdio::null())
            .output()
            .expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().next(), Some(line), "{args:?}: {err}");
        assert!(!err.contains("entity not found"), "{err}");
    }
}

#[test]
fn a_mistyped_url_exits_2_naming_the_url_rules_and_starts_nothing() {
    for arg in [
        "https:/x",
        "https:mcp.example.com/mcp?key=sekret-value",
        "HTTP:\\\\localhost\\mcp",
    ] {
        let (code, out, err) = run(&[arg]);
        assert_eq!(code, 2, "{arg}: {err}");
        assert!(out.is_empty());
        assert_eq!(
            err.lines().next(),
            Some(
                "mcp-bridge: cli: error: the upstream starts like an http(s) URL but is not one: write it as https://HOST/PATH, or http://HOST/PATH to a loopback host (localhost, *.localhost, 127.0.0.0/8, [::1])"
            ),
            "{arg}: {err}"
        );
        assert!(err.contains(USAGE), "{err}");
        assert!(
            !err.contains("cannot start") && !err.contains("sekret-value"),
            "{err}"
        );
    }
}

/// `--authorize-param` cannot replace a parameter the bridge sets itself (the redirect, the
/// state, PKCE, the resource): a usage error, exit 2.
#[test]
fn an_authorize_param_the_bridge_sets_itself_is_a_usage_error() {
    let (code, _, stderr) = run(&[
        "--authorize-param",
        "redirect_uri=https://evil.example",
        "https://mcp.example.com/mcp",
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("invalid value 'redirect_uri=https://evil.example' for '--authorize-param <NAME=VALUE>': redirect_uri is a parameter the bridge sets itself; it cannot be replaced"),
        "{stderr}"
    );
}

#[test]
fn help_names_the_ways_a_user_signs_in() {
    let (code, out, _) = run(&["--help"]);
    assert_eq!(code, 0);
    let sign_in = "      --sign-in <HOW>
          URL form: how a user signs in (with --grant authorization-code)

          Possible values:
          - browser: In the browser; with a device code when no browser starts and the server offers it
          - device:  With a code entered on any device (RFC 8628 device authorization), no browser on this host
          \n          [default: browser]
";
    assert!(out.contains(sign_in), "{out}");
}

/// `--sign-in device` needs a user's grant and a URL upstream; an unknown way is refused by
/// name: usage errors, exit 2.
#[test]
fn sign_in_device_with_the_client_credentials_grant_or_a_command_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-bridge"))
        .args([
            "--sign-in",
            "device",
            "--grant",
            "client-credentials",
            "--client-id",
            "machine",
            "--client-issuer",
            "https://as.example.com",
            "https://mcp.example.com/mcp",
        ])
        .env("MCP_BRIDGE_CLIENT_SECRET", "s")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "mcp-bridge: cli: error: --sign-in device does not apply to --grant client-credentials (no user signs in)\n"
    );
    let (code, _, stderr) = run(&["--sign-in", "device", "cat"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("the sign-in options apply only to a URL upstream"),
        "{stderr}"
    );
    let (code, _, stderr) = run(&["--sign-in", "phone", "https://mcp.example.com/mcp"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("invalid value 'phone' for '--sign-in <HOW>'")
            && stderr.contains("[possible values: browser, device]"),
        "{stderr}"
    );
}
