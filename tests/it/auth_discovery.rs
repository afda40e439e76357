//! Discovery through the real binary (the URL form, the memory token store), against the
//! fixture authorization server: the resource indicator is the resource metadata's
//! `resource`, verbatim, at the authorization request, the code exchange and the refresh
//! (RFC 9728 §3.3, RFC 8707 §2).

use crate::common::auth_fixture::{Behaviour, Fixture, default_behaviour, free_port, start};
use crate::common::http_fixture::HttpFixture;
use crate::common::{Bridge, scratch_dir};
use mcp_bridge::server::{Outcome, Server, ToolDef};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// The protected MCP server behind the fixture's `/mcp`: one tool, `echo`.
fn protected_server() -> HttpFixture {
    let server = Server::builder("protected", "1.0.0")
        .tool(
            ToolDef::new("echo", json!({"type": "object"})),
            |a, _| async move { Ok(Outcome::text(a["text"].as_str().unwrap_or_default())) },
        )
        .build();
    HttpFixture::start(server, vec![])
}

/// A `$BROWSER` in `dir` that follows the start URL as a consenting user would.
fn browser(dir: &Path) -> String {
    let script = dir.join("follow-browser");
    std::fs::write(&script, "#!/bin/sh\nexec curl -s -L -o /dev/null \"$1\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script.to_string_lossy().into_owned()
}

/// The bridge for the fixture's `/mcp`, its state in a scratch directory, with `args`.
fn bridge(fx: &Fixture, tag: &str, args: &[&str]) -> Bridge {
    let dir = scratch_dir(tag);
    let port = free_port().to_string();
    let mut all = vec!["--token-store", "memory", "--redirect-port", &port];
    all.extend_from_slice(args);
    let state = dir.to_string_lossy().into_owned();
    Bridge::start_url(
        &all,
        &fx.mcp_url(),
        &[("BROWSER", &browser(&dir)), ("XDG_STATE_HOME", &state)],
    )
}

fn fixture_with(tweak: impl FnOnce(&mut Behaviour)) -> Arc<Fixture> {
    let mut b = default_behaviour();
    tweak(&mut b);
    start(b)
}

/// Resource metadata at the root names the origin: the authorization URL, the code exchange
/// and the refresh carry exactly the origin, not the server URL `<origin>/mcp`.
#[test]
fn the_resource_indicator_is_the_resource_of_the_metadata_verbatim() {
    let up = protected_server();
    let fx = fixture_with(|b| b.resource_is_origin = true);
    *fx.upstream.lock().unwrap() = Some(up.url());
    let mut b = bridge(&fx, "resource-origin", &["--sign-in-timeout", "10"]);
    b.initialize();
    assert_eq!(echo(&mut b, 1, "hi"), "hi");
    // The authorization request and the code exchange.
    assert_eq!(*fx.resources.lock().unwrap(), vec![fx.base.clone(); 2]);
    fx.expire_all();
    assert_eq!(echo(&mut b, 2, "again"), "again");
    assert_eq!(fx.counters.refresh_grants.load(Ordering::SeqCst), 1);
    assert_eq!(fx.counters.authorizes.load(Ordering::SeqCst), 1);
    assert_eq!(*fx.resources.lock().unwrap(), vec![fx.base.clone(); 3]);
}

/// Calls `echo` with `text`; the text of its answer.
fn echo(b: &mut Bridge, id: i64, text: &str) -> String {
    let r = b.tools_call(json!(id), "echo", json!({"text": text}));
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {r}; stderr:\n{}", b.stderr_text()))
        .to_string()
}
