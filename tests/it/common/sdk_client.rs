//! The real MCP clients of the interop set (tests/interop: the TypeScript SDKs in its
//! node_modules, the Python `mcp` in its .venv), run as small scripts that print a JSON
//! report: the one runner of `dap_clients`, `http_server` and `http_sessions`.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The longest a client script may run: far above the few seconds it takes.
pub const CLIENT_TIME_LIMIT_SECS: u32 = 60;

/// tests/interop, where the clients are installed (scripts/test installs them).
pub fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop")
}

/// Fails the test, saying how to install it, unless the npm package `package` (e.g.
/// `@modelcontextprotocol/sdk`) is in tests/interop/node_modules.
pub fn require_npm(package: &str, what: &str) {
    let dir = interop_dir().join("node_modules").join(package);
    assert!(
        dir.is_dir(),
        "{what} is not installed in {}: run `cd tests/interop && npm ci` (scripts/test does)",
        dir.display()
    );
}

/// Runs a client script (`program args`) in tests/interop under `timeout`, with `env` set and
/// no proxy variable (the clients reach loopback servers or a child); its last line of
/// stdout is its JSON report.
pub fn run(program: &str, args: &[&str], env: &[(&str, &str)]) -> Value {
    let mut command = Command::new("timeout");
    command
        .arg(CLIENT_TIME_LIMIT_SECS.to_string())
        .arg(program)
        .args(args)
        .current_dir(interop_dir())
        .envs(env.iter().copied());
    for proxy in [
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        command.env_remove(proxy);
    }
    let out = command.output().expect("start the client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the client failed ({:?}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default()).expect("a JSON report")
}
