//! Sign-in behind a gateway (`mcp-bridge --config FILE`): two URL servers that want a
//! sign-in (the fixture authorization server in front of the crate's server) and a stdio
//! server. Each sign-in is its own: its line names its server, the two wait for their user at
//! once on the one `redirectPort` of the file (each redirect reaches its own sign-in), and
//! neither blocks the other servers' calls. Each server joins with a list change once its
//! user signed in. The log lines of each server's bridge name it.

use mcp_bridge::server::{Outcome, Server, ToolDef};
use mcp_test_fixtures::auth_fixture::{Fixture, default_behaviour, free_port, start};
use mcp_test_fixtures::http_fixture::HttpFixture;
use serde_json::{Value, json};
use std::process::Command;
use std::time::Duration;

use crate::common::{self, Bridge, Revision, bridge_bin, scratch_dir, server_bin};

/// The crate's server behind the fixture HTTP upstream, with one tool `echo`, as `name`.
fn protected(name: &str) -> HttpFixture {
    let server = Server::builder(name, "1.0.0")
        .tool(
            ToolDef::new("echo", json!({"type": "object"})),
            |a, _| async move { Ok(Outcome::text(a["text"].as_str().unwrap_or_default())) },
        )
        .build();
    HttpFixture::start(server, vec![])
}

/// An authorization fixture whose `/mcp` is `upstream`.
fn authorization(upstream: &HttpFixture) -> std::sync::Arc<Fixture> {
    let fx = start(default_behaviour());
    *fx.upstream.lock().expect("the fixture's lock") = Some(upstream.url());
    fx
}

/// The tool names of a `tools/list` result, sorted.
fn tool_names(result: &Value) -> Vec<String> {
    let mut names: Vec<String> = result["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {result}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
        .collect();
    names.sort();
    names
}

/// The URL of the line `mcp-bridge: sign in to <server> at <url>` in `stderr`.
fn sign_in_url(stderr: &str, server: &str) -> Option<String> {
    let prefix = format!("mcp-bridge: sign in to {server} at ");
    stderr
        .lines()
        .find_map(|l| l.strip_prefix(&prefix).map(str::to_owned))
}

#[test]
fn each_server_signs_in_on_its_own_and_one_that_waits_for_its_user_blocks_no_other() {
    let (up_a, up_b) = (protected("alpha-server"), protected("beta-server"));
    let (fx_a, fx_b) = (authorization(&up_a), authorization(&up_b));
    let dir = scratch_dir("gateway-sign-in");
    let port = free_port();
    // Both sign in on the same redirect port, with no browser: the user follows the lines.
    let file = json!({
        "mcpServers": {
            "alpha": {"url": fx_a.mcp_url(),
                     "mcp-bridge": {"redirectPort": port, "tokenStore": "file", "noBrowser": true}},
            "beta": {"url": fx_b.mcp_url(),
                     "mcp-bridge": {"redirectPort": port, "tokenStore": "file", "noBrowser": true}},
            "fixture": {"command": server_bin()},
        }
    });
    let path = dir.join("claude_desktop_config.json");
    std::fs::write(&path, file.to_string()).expect("write the configuration file");
    let mut cmd = Command::new(bridge_bin());
    cmd.args(["--start-time-limit", "2", "--config"])
        .arg(&path)
        .env("MCP_BRIDGE_TOKEN_KEY", common::KEY_HEX)
        .env("XDG_STATE_HOME", &dir)
        .env("XDG_RUNTIME_DIR", &dir)
        // No D-Bus session: the file store, never a developer's keychain.
        .env_remove("DBUS_SESSION_BUS_ADDRESS");
    let mut b = Bridge::start_command(&mut cmd, Revision::Legacy);
    b.initialize_only(json!({}));

    // Both wait for their user, on the one port; the stdio server answers meanwhile.
    b.wait_stderr("mcp-bridge: sign in to alpha at ");
    b.wait_stderr("mcp-bridge: sign in to beta at ");
    b.wait_stderr("mcp-bridge: gateway: info: fixture: ready");
    let r = b.tools_call(json!(1), "fixture__echo", json!({"text": "from fixture"}));
    assert_eq!(r["result"]["content"][0]["text"], "from fixture", "{r}");
    let tools = b.request(json!(2), "tools/list", json!({}));
    assert_eq!(
        tool_names(&tools)
            .iter()
            .filter(|t| !t.starts_with("fixture__"))
            .count(),
        0,
        "{tools}"
    );

    // The user opens beta's line, then alpha's: each redirect reaches its own sign-in on the
    // shared port, and each server joins with a list change.
    let mut id = 3;
    for server in ["beta", "alpha"] {
        let url = sign_in_url(&b.stderr_text(), server).expect("the sign-in line");
        let opened = Command::new("curl")
            .args(["-s", "-L", "-o", "/dev/null", "-w", "%{http_code}", &url])
            .output()
            .expect("run curl");
        assert_eq!(String::from_utf8_lossy(&opened.stdout), "200", "{server}");
        b.recv_notification("notifications/tools/list_changed");
        b.wait_stderr(&format!("mcp-bridge: gateway: info: {server}: ready"));
        let tools = b.request(json!(id), "tools/list", json!({}));
        let own: Vec<String> = tool_names(&tools)
            .into_iter()
            .filter(|t| t.starts_with(&format!("{server}__")))
            .collect();
        assert_eq!(own, [format!("{server}__echo")], "{tools}");
        let text = format!("from {server}");
        let r = b.tools_call(
            json!(id + 1),
            &format!("{server}__echo"),
            json!({"text": text}),
        );
        assert_eq!(r["result"]["content"][0]["text"], text.as_str(), "{r}");
        id += 2;
    }

    // Each bridge's log lines name its server.
    for server in ["alpha", "beta", "fixture"] {
        let ready = format!(
            "mcp-bridge: frontend: info: {server}: the upstream server is ready (protocol 2026-07-28)"
        );
        assert!(
            b.stderr_text().contains(&ready),
            "{ready}:\n{}",
            b.stderr_text()
        );
    }
    b.close_stdin();
    assert_eq!(b.exit_code(Duration::from_secs(30)), Some(0));
    // The upstreams first: the authorization fixtures' relays of their streams end with them.
    drop((up_a, up_b));
}
