//! `mcp-bridge doctor --config FILE`: the real binary reads a Claude Desktop file and a VS
//! Code `mcp.json` (with comments and trailing commas) as they are, checks each enabled fixture
//! server through the bridge, and names the tools that a gateway renames (a 70-character name,
//! `:` and `.`) and the names two tools share; a file that cannot be used is exit 2 with its
//! line, column and member.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::{legacy_server_bin, scratch_dir, server_bin};

/// A tool name of 70 characters: longer than any client takes behind a prefix.
const LONG_NAME: &str = "summarize_every_open_pull_request_of_the_repository_and_post_a_comment";

/// Runs `mcp-bridge doctor <args>` (stdin closed) with the environment variables `env`.
fn doctor(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(crate::common::bridge_bin())
        .arg("doctor")
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("mcp-bridge doctor runs")
}

/// Writes `text` to the file `name` of a fresh folder; its path.
fn file(tag: &str, name: &str, text: &str) -> PathBuf {
    let path = scratch_dir(tag).join(name);
    std::fs::write(&path, text).expect("write the configuration file");
    path
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 temp path")
}

/// The text report without the lines of the timings, which depend on the machine.
fn without_times(text: &str) -> String {
    text.lines()
        .filter(|l| !l.starts_with("time: "))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The text report of one fixture server with the default tools, as doctor writes it.
fn fixture_report(tools: usize) -> String {
    format!(
        "server: mcp-fixture-server {v}\n\
         revision: 2026-07-28 (translated for the 2025-11-25 editor)\n\
         why: it answered server/discover with a DiscoverResult that supports 2026-07-28\n\
         transport: stdio\n\
         capabilities: logging, completions, tools, prompts, resources\n\
         tools: {tools}\n\
         prompts: 1\n\
         resources: 1\n\
         resource templates: 1\n\
         \n\
         usable: the server works through the bridge\n",
        v = env!("CARGO_PKG_VERSION")
    )
}

#[test]
fn a_claude_desktop_file_is_read_as_it_is_and_renamed_tools_are_named() {
    let config = format!(
        r#"{{
  "mcpServers": {{
    "fixture": {{
      "command": "{fixture}",
      "args": ["--tool-named", "{LONG_NAME}", "--tool-named", "files:read", "--tool-named", "notes.list"]
    }},
    "legacy": {{
      "command": "{legacy}",
      "args": [],
      "env": {{"LEGACY_HOME": "${{env:HOME}}"}}
    }}
  }},
  "globalShortcut": ""
}}"#,
        fixture = server_bin(),
        legacy = legacy_server_bin(),
    );
    let path = file("claude", "claude_desktop_config.json", &config);
    let out = doctor(&["--config", path_str(&path)], &[]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let legacy = format!(
        "server: mcp-legacy-server {v}\n\
         revision: 2025-11-25 (passed through unchanged)\n\
         why: it answered server/discover with -32601 \"Method not found\"\n\
         transport: stdio\n\
         capabilities: tools, logging\n\
         tools: 8\n\
         \n\
         usable: the server works through the bridge\n",
        v = env!("CARGO_PKG_VERSION")
    );
    let want = format!(
        "== fixture (mcpServers.fixture, line 3)\n{fixture}\n\
         == legacy (mcpServers.legacy, line 7)\n{legacy}\n\
         == names behind one bridge\n\
         fixture: tool \"{LONG_NAME}\" is fixture__summarize_every_open_pull_re_8d161518 (shortened)\n\
         fixture: tool \"files:read\" is fixture__files_read (sanitized)\n\
         fixture: tool \"notes.list\" is fixture__notes_list (sanitized)\n\
         \n\
         usable: every server works through the bridge (2 checked)\n",
        fixture = fixture_report(9)
    );
    assert_eq!(without_times(&text), want);
}

#[test]
fn a_vs_code_mcp_json_with_comments_is_read_as_it_is_with_its_bridge_options() {
    let dir = scratch_dir("vscode");
    let config = format!(
        r#"// The servers of this workspace.
{{
  "inputs": [],
  "servers": {{
    /* a server with its own prefix and a filter */
    "memory": {{
      "type": "stdio",
      "command": "{fixture}",
      "args": ["--tool-named", "${{env:EXTRA_TOOL}}"],
      "mcp-bridge": {{"prefix": "mem_", "denyTool": ["fail", "slow"], "listTimeout": 30,}},
    }},
    "notes": {{
      "command": "{fixture}",
      "cwd": "{dir}",
      "env": {{"MCP_FIXTURE_TRACE": "trace.jsonl"}},
    }},
    "off": {{"command": "/nonexistent/server", "mcp-bridge": {{"enabled": false}}}},
  }},
}}
"#,
        fixture = server_bin(),
        dir = path_str(&dir),
    );
    let path = dir.join("mcp.json");
    std::fs::write(&path, config).expect("write mcp.json");
    let out = doctor(
        &["--json", "--config", path_str(&path)],
        &[("EXTRA_TOOL", "db.query")],
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not one JSON object ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(out.status.code(), Some(0), "{r}");
    assert_eq!(r["config"], json!(path_str(&path)));
    let servers: Vec<&String> = r["servers"]
        .as_object()
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    assert_eq!(servers, ["memory", "notes", "off"]);
    let memory = &r["servers"]["memory"];
    assert_eq!(
        (
            &memory["member"],
            &memory["line"],
            &memory["column"],
            &memory["enabled"],
            &memory["prefix"]
        ),
        (
            &json!("servers.memory"),
            &json!(6),
            &json!(5),
            &json!(true),
            &json!("mem_")
        )
    );
    // The filter holds: two of the six default tools are hidden, the extra one is listed.
    assert_eq!(memory["report"]["lists"]["tools"]["count"], json!(5));
    assert_eq!(
        memory["renamed"],
        json!([{"kind": "tool", "name": "db.query", "exposed": "mem_db_query", "change": "sanitized"}])
    );
    assert_eq!(memory["unnamed"], json!([]));
    let notes = &r["servers"]["notes"];
    assert_eq!(notes["prefix"], json!("notes__"));
    assert_eq!(notes["renamed"], json!([]));
    assert_eq!(notes["report"]["usable"], json!(true));
    assert_eq!(
        r["servers"]["off"],
        json!({"member": "servers.off", "line": 17, "column": 5, "enabled": false})
    );
    assert_eq!(r["collisions"], json!([]));
    assert_eq!(r["usable"], json!(true));
    assert_eq!(
        r["reason"],
        json!("every server works through the bridge (2 checked, 1 not enabled)")
    );
    // The child got the entry's env, and ran in its cwd.
    let trace = std::fs::read_to_string(dir.join("trace.jsonl")).unwrap_or_default();
    assert!(trace.contains("\"server/discover\""), "{trace:?}");
}

#[test]
fn two_tools_that_one_name_would_reach_fail_with_both_named() {
    let config = format!(
        r#"{{"mcpServers": {{
  "files": {{"command": "{fixture}", "args": ["--tool-named", "read.file", "--tool-named", "read_file"]}},
  "other": {{"command": "{fixture}", "args": ["--tool-named", "files__echo"], "mcp-bridge": {{"prefix": ""}}}}
}}}}"#,
        fixture = server_bin(),
    );
    let path = file("collision", "claude_desktop_config.json", &config);
    let out = doctor(&["--json", "--config", path_str(&path)], &[]);
    let r: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(out.status.code(), Some(1), "{r}");
    assert_eq!(
        r["collisions"],
        json!([
            {"kind": "tool", "exposed": "files__read_file",
             "first": {"server": "files", "name": "read.file"},
             "second": {"server": "files", "name": "read_file"}},
            // The other server's tools without a prefix: `echo` is its own.
            {"kind": "tool", "exposed": "files__echo",
             "first": {"server": "files", "name": "echo"},
             "second": {"server": "other", "name": "files__echo"}},
        ])
    );
    assert_eq!(r["usable"], json!(false));
    assert_eq!(
        r["reason"],
        json!(
            "2 name(s) shared by two items: the tool name files__read_file comes from \"read.file\" of files and from \"read_file\" of files"
        )
    );
    assert_eq!(r["servers"]["files"]["report"]["usable"], json!(true));
}

/// Each way a file cannot be used: exit 2, one line with the file, line, column and member,
/// and no server started.
#[test]
fn a_bad_file_is_exit_2_with_its_line_column_and_member() {
    let cases: &[(&str, &str)] = &[
        (
            "{\"servers\": {\n  \"a\": {\"command\": \"x\"},\n  \"b\": {\"command\": \"y\"}\n  \"c\": {}}}",
            "3:24: invalid JSON: Expected comma",
        ),
        (
            "{\"servers\": {\n  \"a\": {\"type\": \"websocket\", \"url\": \"https://h/mcp\"}}}",
            "2:17: servers.a.type: unknown type \"websocket\": expected \"stdio\", \"http\" or \"streamable-http\"",
        ),
        (
            "{\"mcpServers\": {\n  \"a\": {\n    \"command\": \"x\",\n    \"url\": \"https://h/mcp\"}}}",
            "4:5: mcpServers.a.url: both command and url: a server is either started (command) or reached at a URL (url)",
        ),
        (
            "{\"mcpServers\": {\"a\": {\"args\": []}}}",
            "1:17: mcpServers.a: neither command nor url: a server is either started (command) or reached at a URL (url)",
        ),
        (
            "{\"mcpServers\": {\n  \"files.local\": {\"command\": \"x\"}}}",
            "2:3: mcpServers[\"files.local\"]: the name cannot make tool names and resource URIs: it must start with a letter and hold only letters, digits, _ and -",
        ),
        (
            "{\"mcpServers\": {\"gh\": {\"url\": \"https://h/mcp\",\n  \"headers\": {\"Authorization\": \"Bearer ${env:MCP_BRIDGE_TEST_NO_SUCH_TOKEN}\"}}}}",
            "2:32: mcpServers.gh.headers.Authorization: the variable MCP_BRIDGE_TEST_NO_SUCH_TOKEN is not set",
        ),
        (
            "{\"servers\": {\"a\": {\"command\": \"x\", \"mcp-bridge\": {\"callTimeOut\": 5}}}}",
            "1:51: servers.a.mcp-bridge.callTimeOut: unknown option \"callTimeOut\" (the options: enabled, prefix, discoverTimeout, listTimeout, readTimeout, callTimeout, inputTimeout, shutdownGrace, listenAckTimeout, allowTool, denyTool, allowPrompt, denyPrompt, allowResource, denyResource, clientId, clientIssuer, clientMetadataUrl, grant, signIn, redirectPort, account, tokenStore, tokenKeyFile, noBrowser, signInTimeout, authorizeParam)",
        ),
    ];
    for (text, want) in cases {
        let path = file("bad", "mcp.json", text);
        let out = doctor(&["--config", path_str(&path)], &[]);
        assert_eq!(out.status.code(), Some(2), "{text}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!("mcp-bridge: config: error: {}:{want}\n", path_str(&path)),
            "{text}"
        );
        assert!(out.stdout.is_empty(), "{text}");
    }
    let out = doctor(&["--config", "/nonexistent/mcp.json"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "mcp-bridge: config: error: --config /nonexistent/mcp.json cannot be read: No such file or directory (os error 2)\n"
    );
}
