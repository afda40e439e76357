//! The sign-in fixture of the tests as a process, for `scripts/live-signin.py` (not CI): the
//! fixture authorization server and protected MCP endpoint (`tests/it/common/auth_fixture.rs`) in front of
//! the crate's server with the tool `echo` (`tests/it/common/http_fixture.rs`), on loopback.
//!
//! Usage: `cargo run --example signin-fixture -- [--expires-in SECS] [--revoke-refresh-after SECS]`
//! (token lifetime, default 60 s; revoke every refresh token once, that long after the start).
//! Prints one JSON line `{"mcp_url": ..., "stats_url": ...}` on stdout and serves until its
//! stdin closes; `GET <stats_url>` gives the fixture's counters.

// The fixtures of the tests (tests/it/common), of which this process uses a part.
#[allow(dead_code)]
#[path = "../tests/it/common/auth_fixture.rs"]
mod auth_fixture;
#[allow(dead_code)]
#[path = "../tests/it/common/http_fixture.rs"]
mod http_fixture;
#[allow(dead_code)]
#[path = "../tests/it/common/recording.rs"]
mod recording;

use mcp_bridge::server::{Outcome, Server, ToolDef};
use serde_json::json;
use std::io::Read;
use std::time::Duration;

fn arg(args: &[String], name: &str) -> Option<u64> {
    let at = args.iter().position(|a| a == name)?;
    args.get(at + 1).and_then(|v| v.parse().ok())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let server = Server::builder("protected", "1.0.0")
        .tool(
            ToolDef::new("echo", json!({"type": "object"})),
            |a, _| async move { Ok(Outcome::text(a["text"].as_str().unwrap_or_default())) },
        )
        .build();
    let upstream = http_fixture::HttpFixture::start(server, vec![]);
    let mut behaviour = auth_fixture::default_behaviour();
    behaviour.expires_in_secs = arg(&args, "--expires-in").unwrap_or(60);
    let fx = auth_fixture::start(behaviour);
    *fx.upstream.lock().unwrap() = Some(upstream.url());
    if let Some(secs) = arg(&args, "--revoke-refresh-after") {
        fx.revoke_refresh_tokens_after(Duration::from_secs(secs));
    }
    println!(
        "{}",
        json!({"mcp_url": fx.mcp_url(), "stats_url": format!("{}/fixture/stats", fx.base)})
    );
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
    println!("{}", fx.stats());
}
