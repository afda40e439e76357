//! The real binary in front of the fixture authorization server's `/mcp` (the URL form, the
//! memory token store, its state in a scratch directory, a `$BROWSER` that consents), and the
//! protected MCP server behind it.

use super::{Bridge, scratch_dir};
use mcp_bridge::server::{Outcome, Server, ToolDef};
use mcp_test_fixtures::auth_fixture::{Behaviour, Fixture, default_behaviour, free_port, start};
use mcp_test_fixtures::http_fixture::HttpFixture;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The protected MCP server behind the fixture's `/mcp`: one tool, `echo`.
pub fn protected_server() -> HttpFixture {
    let server = Server::builder("protected", "1.0.0")
        .tool(
            ToolDef::new("echo", json!({"type": "object"})),
            |a, _| async move { Ok(Outcome::text(a["text"].as_str().unwrap_or_default())) },
        )
        .build();
    HttpFixture::start(server, vec![])
}

/// A `$BROWSER` in `dir` that follows the start URL as a consenting user would, and leaves
/// the file `browser-ran` in `dir`.
pub fn browser(dir: &Path) -> String {
    let script = dir.join("follow-browser");
    let ran = dir.join("browser-ran");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ntouch '{}'\nexec curl -s -L -o /dev/null \"$1\"\n",
            ran.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script.to_string_lossy().into_owned()
}

/// The fixture with the default behaviour changed by `tweak`.
pub fn fixture_with(tweak: impl FnOnce(&mut Behaviour)) -> Arc<Fixture> {
    let mut b = default_behaviour();
    tweak(&mut b);
    start(b)
}

/// The bridge for the fixture's `/mcp` with `args` and `env`; its scratch directory (the
/// state directory, the browser's).
pub fn bridge(fx: &Fixture, tag: &str, args: &[&str], env: &[(&str, &str)]) -> (Bridge, PathBuf) {
    let dir = scratch_dir(tag);
    let port = free_port().to_string();
    let mut all = vec!["--token-store", "memory", "--redirect-port", &port];
    all.extend_from_slice(args);
    let state = dir.to_string_lossy().into_owned();
    let browser = browser(&dir);
    let mut vars = vec![("BROWSER", browser.as_str()), ("XDG_STATE_HOME", &state)];
    vars.extend_from_slice(env);
    (Bridge::start_url(&all, &fx.mcp_url(), &vars), dir)
}

/// Calls `echo` with `text`; the text of its answer.
pub fn echo(b: &mut Bridge, id: i64, text: &str) -> String {
    let r = b.tools_call(json!(id), "echo", json!({"text": text}));
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {r}; stderr:\n{}", b.stderr_text()))
        .to_string()
}
