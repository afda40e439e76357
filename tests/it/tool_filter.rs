//! The filter options (`--allow-tool`, `--deny-tool`, and the same for prompts and
//! resources), with the real binary in front of the fixture servers: a hidden item is absent
//! from its list (the others in the server's order, each page with the server's cursor), a
//! request that names it gets the error of a missing one and never reaches the server, list
//! changes still pass, an invalid glob is exit 2; on the translating path
//! (`mcp-fixture-server`) and in pass-through (`mcp-legacy-server` over stdio, the scripted
//! 2025-11-25 HTTP server).

use crate::common;
use crate::common::legacy_http_fixture::{LegacyFixture, Script};

use common::{Bridge, server_bin, text_of};
use serde_json::{Value, json};
use std::process::Command;
use std::time::Duration;

/// `mcp-bridge <bridge_args> -- mcp-fixture-server <server_args>`: the demo tools alone, whose
/// tools are `echo`, `add`, `slow`, `log`, `fail`, `ask_name`, in that order.
fn demo(bridge_args: &[&str], server_args: &[&str]) -> Bridge {
    let mut upstream = vec![server_bin().to_string()];
    upstream.extend(server_args.iter().map(|s| s.to_string()));
    let mut b = Bridge::start_cmd(bridge_args, &upstream);
    b.initialize();
    b
}

/// `mcp-bridge <bridge_args> -- mcp-legacy-server`, initialized: a 2025-11-25 server in
/// pass-through, whose tools are `echo`, `ask`, `count`, `flip`, `slow`, `stubborn`,
/// `cancelled`, `exit`.
fn legacy(bridge_args: &[&str]) -> Bridge {
    let upstream = vec![common::legacy_server_bin().to_string()];
    let mut b = Bridge::start_cmd(bridge_args, &upstream);
    b.initialize_only(json!({}));
    b.wait_stderr("passing the 2025-11-25 protocol through unchanged");
    b
}

/// The `key` of every item under `member` of a response's result, in order.
fn keys(response: &Value, member: &str, key: &str) -> Vec<String> {
    response["result"][member]
        .as_array()
        .unwrap_or_else(|| panic!("no {member} list: {response}"))
        .iter()
        .map(|item| item[key].as_str().unwrap_or("?").to_string())
        .collect()
}

fn tool_names(b: &mut Bridge, id: i64) -> Vec<String> {
    keys(
        &b.request(json!(id), "tools/list", json!({})),
        "tools",
        "name",
    )
}

/// The error response a server that lacks the tool gives through the bridge.
fn unknown_tool(id: i64, name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {
        "code": -32602, "message": format!("Unknown tool: {name}"), "data": {"name": name}}})
}

/// The `params.name` of every `tools/call` the upstream received (its trace), in order.
fn calls_received(b: &Bridge) -> Vec<String> {
    b.upstream_lines()
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["method"] == "tools/call")
        .map(|v| v["params"]["name"].as_str().unwrap_or("?").to_string())
        .collect()
}

/// The methods of every request the upstream received (its trace), in order.
fn methods_received(b: &Bridge) -> Vec<String> {
    b.upstream_lines()
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v.get("id").is_some())
        .filter_map(|v| v["method"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn allow_globs_show_only_the_tools_they_match_in_the_servers_order() {
    let mut b = demo(&["--allow-tool", "a*", "--allow-tool", "echo"], &[]);
    assert_eq!(tool_names(&mut b, 1), ["echo", "add", "ask_name"]);
    // A tool that no allow glob matches is hidden from a call too.
    assert_eq!(
        b.tools_call(json!(2), "slow", json!({})),
        unknown_tool(2, "slow")
    );
    assert_eq!(
        text_of(&b.tools_call(json!(3), "echo", json!({"text": "hi"}))),
        "hi"
    );
    assert_eq!(calls_received(&b), ["echo"]);
}

#[test]
fn deny_globs_hide_the_tools_they_match() {
    let mut b = demo(&["--deny-tool", "s*", "--deny-tool", "fail"], &[]);
    assert_eq!(tool_names(&mut b, 1), ["echo", "add", "log", "ask_name"]);
}

#[test]
fn a_deny_glob_wins_over_an_allow_glob() {
    let mut b = demo(
        &[
            "--allow-tool",
            "a*",
            "--allow-tool",
            "echo",
            "--deny-tool",
            "ask_*",
        ],
        &[],
    );
    assert_eq!(tool_names(&mut b, 1), ["echo", "add"]);
    assert_eq!(
        b.tools_call(json!(2), "ask_name", json!({})),
        unknown_tool(2, "ask_name")
    );
}

#[test]
fn a_page_keeps_the_servers_cursor_and_may_come_out_empty() {
    // Pages of 2: [echo, add], [slow, log], [fail, ask_name].
    let mut b = demo(
        &["--deny-tool", "slow", "--deny-tool", "log"],
        &["--page-size", "2"],
    );
    let first = b.request(json!(1), "tools/list", json!({}));
    assert_eq!(keys(&first, "tools", "name"), ["echo", "add"]);
    assert_eq!(first["result"]["nextCursor"], "offset/2");
    let second = b.request(json!(2), "tools/list", json!({"cursor": "offset/2"}));
    assert_eq!(second["result"]["tools"], json!([]));
    assert_eq!(second["result"]["nextCursor"], "offset/4");
    let last = b.request(json!(3), "tools/list", json!({"cursor": "offset/4"}));
    assert_eq!(keys(&last, "tools", "name"), ["fail", "ask_name"]);
    assert_eq!(last["result"].get("nextCursor"), None, "{last}");
}

#[test]
fn a_call_of_a_hidden_tool_gets_the_error_of_an_unknown_tool_and_never_reaches_the_server() {
    let mut b = demo(&["--deny-tool", "add"], &[]);
    let hidden = b.tools_call(json!(1), "add", json!({"a": 1, "b": 2}));
    assert_eq!(hidden, unknown_tool(1, "add"));
    // What the server itself answers for a tool it does not have: the same error.
    assert_eq!(
        b.tools_call(json!(2), "nope", json!({})),
        unknown_tool(2, "nope")
    );
    assert_eq!(
        text_of(&b.tools_call(json!(3), "echo", json!({"text": "after"}))),
        "after"
    );
    // The server read every line before the answer to `echo`: `add` is not among them.
    assert_eq!(calls_received(&b), ["nope", "echo"]);
}

#[test]
fn a_list_change_still_passes_and_the_next_list_is_filtered_again() {
    let mut b = Bridge::start(
        &[
            "--allow-tool",
            "notify",
            "--allow-tool",
            "emit*",
            "--deny-tool",
            "emit_*",
        ],
        &[],
    );
    b.initialize();
    assert_eq!(tool_names(&mut b, 1), ["emit", "notify"]);
    let r = b.tools_call(json!(2), "notify", json!({"event": "tools_list_changed"}));
    assert_eq!(text_of(&r), "notified");
    assert_eq!(
        b.recv_notification("notifications/tools/list_changed"),
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );
    assert_eq!(tool_names(&mut b, 3), ["emit", "notify"]);
}

#[test]
fn hidden_prompts_and_resources_are_absent_and_answered_as_missing() {
    let mut b = demo(
        &[
            "--deny-prompt",
            "greet",
            "--deny-resource",
            "example://notes/*",
        ],
        &[],
    );
    let prompts = b.request(json!(1), "prompts/list", json!({}));
    assert_eq!(prompts["result"]["prompts"], json!([]));
    let unknown_prompt = json!({"code": -32602, "message": "Unknown prompt: greet",
        "data": {"name": "greet"}});
    let get = b.request(
        json!(2),
        "prompts/get",
        json!({"name": "greet", "arguments": {"name": "Ada"}}),
    );
    assert_eq!(
        get,
        json!({"jsonrpc": "2.0", "id": 2, "error": unknown_prompt})
    );
    let complete = b.request(
        json!(3),
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "greet"},
               "argument": {"name": "name", "value": "A"}}),
    );
    assert_eq!(
        complete,
        json!({"jsonrpc": "2.0", "id": 3, "error": unknown_prompt})
    );
    // The template is hidden by its uriTemplate, and so is every URI read through it.
    let templates = b.request(json!(4), "resources/templates/list", json!({}));
    assert_eq!(templates["result"]["resourceTemplates"], json!([]));
    let resources = b.request(json!(5), "resources/list", json!({}));
    assert_eq!(keys(&resources, "resources", "uri"), ["example://readme"]);
    let note = b.request(
        json!(6),
        "resources/read",
        json!({"uri": "example://notes/1"}),
    );
    assert_eq!(
        note,
        json!({"jsonrpc": "2.0", "id": 6, "error": {"code": -32002,
            "message": "Resource not found", "data": {"uri": "example://notes/1"}}})
    );
    // What the server answers for a resource it does not have, through the bridge: the same.
    let missing = b.request(json!(7), "resources/read", json!({"uri": "example://nope"}));
    assert_eq!(
        missing,
        json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32002,
            "message": "Resource not found", "data": {"uri": "example://nope"}}})
    );
    let readme = b.request(
        json!(8),
        "resources/read",
        json!({"uri": "example://readme"}),
    );
    assert_eq!(readme["result"]["contents"][0]["uri"], "example://readme");
    // Tools are not filtered.
    assert_eq!(
        tool_names(&mut b, 9),
        ["echo", "add", "slow", "log", "fail", "ask_name"]
    );
    assert_eq!(
        methods_received(&b)
            .into_iter()
            .filter(|m| m != "server/discover" && m != "subscriptions/listen")
            .collect::<Vec<_>>(),
        [
            "prompts/list",
            "resources/templates/list",
            "resources/list",
            "resources/read",
            "resources/read",
            "tools/list"
        ]
    );
}

#[test]
fn an_invalid_glob_is_a_usage_error_with_exit_2() {
    for (args, cause) in [
        (
            &["--allow-tool", "read_*", "--deny-tool", "read_["][..],
            "invalid value 'read_[' for '--deny-tool <GLOB>': unclosed character class; missing ']'",
        ),
        (
            &["--allow-prompt", "{a,b"],
            "invalid value '{a,b' for '--allow-prompt <GLOB>': unclosed alternate group; missing '}' (maybe escape '{' with '[{]'?)",
        ),
        (
            &["--deny-resource", "file:///[z-a]"],
            "invalid value 'file:///[z-a]' for '--deny-resource <GLOB>': invalid range; 'z' > 'a'",
        ),
    ] {
        let out = Command::new(common::bridge_bin())
            .args(args)
            .args(["--", server_bin()])
            .output()
            .expect("run mcp-bridge");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            stderr.lines().next(),
            Some(format!("mcp-bridge: cli: error: {cause}").as_str()),
            "{args:?}: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn in_pass_through_a_hidden_tool_is_absent_and_its_call_never_reaches_the_server() {
    let mut b = legacy(&["--deny-tool", "s*", "--deny-tool", "exit"]);
    assert_eq!(
        b.request(json!(1), "tools/list", json!({})),
        json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
            {"name": "echo", "inputSchema": {"type": "object"}},
            {"name": "ask", "inputSchema": {"type": "object"}},
            {"name": "count", "inputSchema": {"type": "object"}},
            {"name": "flip", "inputSchema": {"type": "object"}},
            {"name": "cancelled", "inputSchema": {"type": "object"}}]}})
    );
    assert_eq!(
        b.tools_call(json!(2), "slow", json!({})),
        unknown_tool(2, "slow")
    );
    assert_eq!(
        b.tools_call(json!(3), "exit", json!({"code": 3})),
        unknown_tool(3, "exit")
    );
    // A list change of the server passes.
    b.send_tools_call(json!(4), "flip", json!({}));
    assert_eq!(
        b.recv_notification("notifications/tools/list_changed"),
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );
    assert_eq!(text_of(&b.recv_response(&json!(4))), "flipped");
    assert_eq!(calls_received(&b), ["flip"]);
    // The server still runs (its `exit` was never called).
    assert_eq!(
        b.request(json!(5), "ping", json!({})),
        json!({"jsonrpc": "2.0", "id": 5, "result": {}})
    );
    b.close_stdin();
    assert_eq!(b.exit_code(Duration::from_secs(10)), Some(0));
}

#[test]
fn over_http_in_pass_through_a_hidden_tool_is_absent_and_never_posted() {
    let f = LegacyFixture::start(Script::default());
    let mut b = Bridge::start_url(&["--allow-tool", "echo"], &f.url(), &[]);
    b.initialize_only(json!({}));
    assert_eq!(
        b.request(json!(1), "tools/list", json!({})),
        json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
            {"name": "echo", "inputSchema": {"type": "object"}}]}})
    );
    assert_eq!(
        b.tools_call(json!(2), "slow", json!({})),
        unknown_tool(2, "slow")
    );
    let echo = b.tools_call(json!(3), "echo", json!({"text": "hé"}));
    assert_eq!(echo["result"]["content"][0]["text"], "hé", "{echo}");
    let posted: Vec<String> = f
        .seen()
        .iter()
        .filter(|s| s.method() == "tools/call")
        .map(|s| s.body["params"]["name"].as_str().unwrap_or("?").to_string())
        .collect();
    assert_eq!(posted, ["echo"]);
}

#[test]
fn help_shows_the_filters_with_a_read_only_example() {
    let out = Command::new(common::bridge_bin())
        .arg("--help")
        .output()
        .expect("run mcp-bridge --help");
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8_lossy(&out.stdout);
    for text in [
        "  mcp-bridge --allow-tool 'read_*' --allow-tool 'list_*' -- python3 server.py\n",
        "  mcp-bridge --deny-tool 'delete_*' https://mcp.example.com/mcp\n",
        "\nFilters:\n      --allow-tool <GLOB>\n",
        "      --deny-tool <GLOB>\n",
        "      --allow-prompt <GLOB>\n",
        "      --deny-prompt <GLOB>\n",
        "      --allow-resource <GLOB>\n",
        "      --deny-resource <GLOB>\n",
        "A --deny-* glob wins over an --allow-* glob; without --allow-*, everything not\ndenied is shown.",
    ] {
        assert!(help.contains(text), "{text:?} missing from --help:\n{help}");
    }
}
