//! `mcp-bridge --config FILE`: many servers behind one bridge. The real binary reads a Claude
//! Desktop file of a 2026-07-28 fixture server and a 2025-11-25 one and is one 2025-11-25
//! server for the editor: their items under `{server}__{name}` and `{server}+{uri}`, every
//! request at its owner with the owner's own names, a server's input request at the editor
//! and back; a server killed mid-call fails only its own call and comes back with one list
//! change per list; one that keeps ending is failed and leaves the lists; one that is late is
//! not waited for past the start limit and joins when it answers; the end of stdin leaves no
//! process.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::{
    Bridge, Revision, bridge_bin, children_of, legacy_server_bin, scratch_dir, server_bin,
    wait_until,
};

/// The tools of the 2025-11-25 fixture server, as the editor sees them behind the gateway.
const LEGACY_TOOLS: [&str; 8] = [
    "legacy__echo",
    "legacy__ask",
    "legacy__count",
    "legacy__flip",
    "legacy__slow",
    "legacy__stubborn",
    "legacy__cancelled",
    "legacy__exit",
];

/// The default tools of the 2026-07-28 fixture server, behind the gateway.
const FIXTURE_TOOLS: [&str; 6] = [
    "fixture__echo",
    "fixture__add",
    "fixture__slow",
    "fixture__log",
    "fixture__fail",
    "fixture__ask_name",
];

/// Writes a Claude Desktop file of the fixture server (with `fixture_args`) and the legacy
/// server into a fresh folder; its path.
/// The legacy server records what it receives in a file of its own: the bridge's trace holds
/// the 2026-07-28 fixture server's.
fn claude_desktop_file(tag: &str, fixture_args: &[&str]) -> PathBuf {
    let dir = scratch_dir(tag);
    let config = json!({
        "mcpServers": {
            "fixture": {"command": server_bin(), "args": fixture_args},
            "legacy": {"command": legacy_server_bin(), "args": [],
                       "env": {"MCP_FIXTURE_TRACE": dir.join("legacy-received.jsonl")}},
        }
    });
    let path = dir.join("claude_desktop_config.json");
    std::fs::write(&path, config.to_string()).expect("write the configuration file");
    path
}

/// Starts `mcp-bridge <args> --config <path>`.
fn gateway(path: &Path, args: &[&str]) -> Bridge {
    let mut cmd = Command::new(bridge_bin());
    cmd.args(args).arg("--config").arg(path);
    Bridge::start_command(&mut cmd, Revision::Legacy)
}

/// The names of a list result's items.
fn names(result: &Value, member: &str, key: &str) -> Vec<String> {
    result["result"][member]
        .as_array()
        .unwrap_or_else(|| panic!("no {member} in {result}"))
        .iter()
        .map(|t| t[key].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The child of the bridge whose command line holds `program`.
fn child_running(bridge: &Bridge, program: &str) -> i32 {
    let found = children_of(bridge.child.id() as i32)
        .into_iter()
        .find(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(program))
        });
    found.unwrap_or_else(|| panic!("no child of the bridge runs {program}"))
}

/// Whether the process `pid` is gone (or a zombie that nobody reaped yet).
fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            stat.rsplit(')')
                .next()
                .and_then(|rest| rest.split_whitespace().next())
                == Some("Z")
        }
    }
}

/// Exactly one list change of each list among `frames` (`when`: for the message).
fn assert_one_change_per_list(frames: &[Value], when: &str) {
    for list in ["tools", "prompts", "resources"] {
        let method = format!("notifications/{list}/list_changed");
        let n = frames
            .iter()
            .filter(|f| f["method"] == method.as_str())
            .count();
        assert_eq!(n, 1, "one {method} {when}: {frames:?}");
    }
}

/// The list changes of `method` among the frames the bridge wrote.
fn count(bridge: &Bridge, method: &str) -> usize {
    bridge.seen.iter().filter(|f| f["method"] == method).count()
}

#[test]
fn two_servers_of_a_claude_desktop_file_are_one_server_for_the_editor() {
    let path = claude_desktop_file("gateway-two", &[]);
    let mut b = gateway(&path, &[]);
    let init = b.initialize_request(json!(0), json!({"sampling": {}}));
    assert_eq!(
        init["result"],
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {
                "tools": {"listChanged": true},
                "prompts": {"listChanged": true},
                "resources": {"subscribe": true, "listChanged": true},
                "logging": {},
                "completions": {},
            },
            "serverInfo": {"name": "mcp-bridge", "version": env!("CARGO_PKG_VERSION")},
        })
    );
    b.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    let tools = b.request(json!(1), "tools/list", json!({}));
    let mut expected: Vec<&str> = FIXTURE_TOOLS.to_vec();
    expected.extend(LEGACY_TOOLS);
    assert_eq!(names(&tools, "tools", "name"), expected);

    assert_eq!(
        b.tools_call(json!(2), "fixture__echo", json!({"text": "hi"}))["result"],
        json!({"content": [{"type": "text", "text": "hi"}]})
    );
    assert_eq!(
        b.tools_call(json!(3), "legacy__echo", json!({"text": "yo"}))["result"],
        json!({"content": [{"type": "text", "text": "yo"}]})
    );
    // The upstream got its own name.
    let echo = b.wait_upstream(|l| l["method"] == "tools/call" && l["params"]["name"] == "echo");
    assert_eq!(echo["params"]["arguments"], json!({"text": "hi"}));

    assert_eq!(
        b.tools_call(json!(4), "nobody__echo", json!({}))["error"],
        json!({"code": -32602, "message": "Invalid params", "data": {"cause": "invalid_params",
               "detail": "no server behind the bridge has the tool \"nobody__echo\""}})
    );

    let resources = b.request(json!(5), "resources/list", json!({}));
    assert_eq!(
        names(&resources, "resources", "uri"),
        ["fixture+example://readme"]
    );
    let templates = b.request(json!(6), "resources/templates/list", json!({}));
    assert_eq!(
        names(&templates, "resourceTemplates", "uriTemplate"),
        ["fixture+example://notes/{id}"]
    );
    let read = b.request(
        json!(7),
        "resources/read",
        json!({"uri": "fixture+example://readme"}),
    );
    assert_eq!(
        read["result"],
        json!({"contents": [{"uri": "fixture+example://readme", "mimeType": "text/plain",
            "text": "mcp-example-server is a small MCP 2026-07-28 server.\nTools: echo, add, slow, log, fail, ask_name. Prompt: greet.\nResources: example://readme, example://notes/{id}.\n"}]})
    );

    let prompts = b.request(json!(8), "prompts/list", json!({}));
    assert_eq!(names(&prompts, "prompts", "name"), ["fixture__greet"]);
    let greet = b.request(
        json!(9),
        "prompts/get",
        json!({"name": "fixture__greet", "arguments": {"name": "Ada"}}),
    );
    assert_eq!(
        greet["result"]["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Say hello to Ada."}}])
    );
    let completion = b.request(
        json!(10),
        "completion/complete",
        json!({"ref": {"type": "ref/resource", "uri": "fixture+example://notes/{id}"},
               "argument": {"name": "id", "value": ""}}),
    );
    assert_eq!(
        completion["result"],
        json!({"completion": {"values": ["1", "2", "3"], "total": 3, "hasMore": false}})
    );

    // The legacy server's sampling request reaches the editor under the gateway's id, and the
    // editor's answer reaches the server under its own.
    b.send_tools_call(json!(11), "legacy__ask", json!({"prompt": "2+2?"}));
    let ask = b.recv_matching("sampling/createMessage", |f| {
        f["method"] == "sampling/createMessage"
    });
    let ask_id = ask["id"].clone();
    assert!(
        ask_id.as_str().is_some_and(|id| id.starts_with("b-")),
        "{ask}"
    );
    b.send(&json!({"jsonrpc": "2.0", "id": ask_id, "result": {
        "role": "assistant", "content": {"type": "text", "text": "4"}, "model": "test"}}));
    assert_eq!(
        b.recv_response(&json!(11))["result"],
        json!({"content": [{"type": "text", "text": "4"}]})
    );

    // The lists come in pages of the bridge's own cursors: another cursor is refused.
    assert_eq!(
        b.request(json!(12), "tools/list", json!({"cursor": "2"}))["error"]["data"],
        json!({"cause": "invalid_params",
               "detail": "the cursor is not one that the bridge gave for this list"})
    );
    // The legacy server has no resources: its prefix names none.
    assert_eq!(
        b.request(json!(13), "resources/read", json!({"uri": "legacy+x://y"}))["error"]["data"],
        json!({"cause": "invalid_params",
               "detail": "no server behind the bridge has the resource \"legacy+x://y\""})
    );

    // At the end of the input, a call in flight gets no response, as with one bridge.
    b.send_tools_call(json!(14), "legacy__slow", json!({}));
    let servers: Vec<i32> = children_of(b.child.id() as i32);
    assert_eq!(servers.len(), 2, "one process per server: {servers:?}");
    b.close_stdin();
    let rest = b.recv_to_the_end();
    assert!(
        !rest.iter().any(|f| f["id"] == json!(14)),
        "the call in flight got a response: {rest:?}"
    );
    assert_eq!(b.exit_code(Duration::from_secs(30)), Some(0));
    assert!(
        wait_until(|| servers.iter().all(|pid| gone(*pid))),
        "a server outlived the bridge: {servers:?}"
    );
}

#[test]
fn a_server_killed_mid_call_fails_its_own_call_and_comes_back_with_one_list_change() {
    // The gate is open for the first start; the test closes it, so that the restart waits
    // in server/discover until the test opens it again.
    let dir = scratch_dir("gateway-kill");
    let gate = dir.join("gate");
    std::fs::write(&gate, "").expect("open the gate");
    let gate_arg = gate.to_string_lossy().into_owned();
    let path = claude_desktop_file(
        "gateway-kill-file",
        &["--test-tools", "--discover-gate", &gate_arg],
    );
    let mut b = gateway(&path, &["--restart-backoff-initial", "0.1"]);
    b.initialize_request(json!(0), json!({}));
    b.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let before = b.request(json!(1), "tools/list", json!({}));
    assert!(names(&before, "tools", "name").contains(&"fixture__sleep".to_owned()));
    std::fs::remove_file(&gate).expect("close the gate");

    let readme = json!({"uri": "fixture+example://readme"});
    assert_eq!(
        b.request(json!(10), "resources/subscribe", readme.clone())["result"],
        json!({})
    );
    let fixture = child_running(&b, "mcp-fixture-server");
    b.send_tools_call(json!(2), "fixture__sleep", json!({"ms": 600_000}));
    b.wait_upstream(|l| l["params"]["name"] == "sleep");
    let seen_before = b.seen.len();
    crate::common::send_signal(fixture as u32, "-KILL");
    let failed = b.recv_response(&json!(2));
    assert_eq!(
        failed["error"],
        json!({"code": -32603, "message": "The upstream server exited",
               "data": {"cause": "upstream_exited", "server": "fixture"}})
    );

    // The other server answers while this one waits in its restart's discover.
    assert_eq!(
        b.tools_call(json!(3), "legacy__echo", json!({"text": "still here"}))["result"],
        json!({"content": [{"type": "text", "text": "still here"}]})
    );
    let down = b.tools_call(json!(4), "fixture__echo", json!({"text": "x"}));
    assert_eq!(
        down["error"],
        json!({"code": -32603, "message": "The upstream server exited",
               "data": {"cause": "upstream_exited", "server": "fixture",
                        "detail": "the server fixture is not running (it starts again)"}})
    );

    std::fs::write(&gate, "").expect("open the gate again");
    b.recv_notification("notifications/tools/list_changed");
    let after = b.request(json!(5), "tools/list", json!({}));
    assert_eq!(
        names(&after, "tools", "name"),
        names(&before, "tools", "name")
    );
    assert_eq!(
        b.tools_call(json!(6), "fixture__echo", json!({"text": "back"}))["result"],
        json!({"content": [{"type": "text", "text": "back"}]})
    );
    assert_one_change_per_list(&b.seen[seen_before..], "after the restart");

    // The new run has the editor's subscription: its updates reach the editor.
    let listens_of_readme = |b: &Bridge| {
        b.upstream_received()
            .iter()
            .filter(|l| {
                l["method"] == "subscriptions/listen"
                    && l["params"].to_string().contains("example://readme")
            })
            .count()
    };
    assert!(
        wait_until(|| listens_of_readme(&b) >= 2),
        "the new run got no listen of the subscription"
    );
    b.tools_call(
        json!(7),
        "fixture__notify",
        json!({"event": "resource_updated", "uri": "example://readme"}),
    );
    assert_eq!(
        b.recv_notification("notifications/resources/updated")["params"],
        readme
    );

    // The summary at the end has a line per server: its state, its requests (the killed
    // call is its error; the call while it was down never reached it) and its restarts.
    b.close_stdin();
    assert_eq!(b.exit_code(Duration::from_secs(30)), Some(0));
    let stderr = b.stderr_to_the_end();
    let line = |server: &str| {
        stderr
            .lines()
            .find(|l| {
                l.starts_with(&format!(
                    "mcp-bridge: metrics: info: summary: server {server}: "
                ))
            })
            .unwrap_or_else(|| panic!("no summary of {server}:\n{stderr}"))
            .to_owned()
    };
    let fixture = line("fixture");
    assert!(
        fixture.starts_with("mcp-bridge: metrics: info: summary: server fixture: ready; 4 requests, 1 error; slowest ")
            && fixture.ends_with(" ms; 1 restart"),
        "{fixture}"
    );
    // The bridges of the servers dropped nothing: their own summaries are at debug.
    assert!(
        !stderr.contains("mcp-bridge: metrics: info: fixture: summary:")
            && !stderr.contains("mcp-bridge: metrics: info: legacy: summary:"),
        "{stderr}"
    );
    let legacy = line("legacy");
    assert!(
        legacy.starts_with("mcp-bridge: metrics: info: summary: server legacy: ready; 1 request, 0 errors; slowest tools/call, ")
            && legacy.ends_with(" ms; 0 restarts"),
        "{legacy}"
    );
}

#[test]
fn a_server_that_keeps_ending_is_failed_and_its_items_leave_the_lists() {
    let path = claude_desktop_file("gateway-loop", &["--test-tools"]);
    let mut b = gateway(
        &path,
        &[
            "--restart-backoff-initial",
            "0.1",
            "--crash-loop-ends",
            "2",
            "--failed-retry",
            "3600",
        ],
    );
    b.initialize_request(json!(0), json!({}));
    b.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let exited = json!({"code": -32603, "message": "The upstream server exited",
                        "data": {"cause": "upstream_exited", "server": "fixture"}});
    let crash = b.tools_call(json!(1), "fixture__crash", json!({"code": 3}));
    assert_eq!(crash["error"], exited);
    b.recv_notification("notifications/tools/list_changed");
    let back = b.request(json!(2), "tools/list", json!({}));
    assert!(names(&back, "tools", "name").contains(&"fixture__crash".to_owned()));
    let seen_before = b.seen.len();
    let crash = b.tools_call(json!(3), "fixture__crash", json!({"code": 3}));
    assert_eq!(crash["error"], exited);
    b.wait_stderr(
        "gateway: warn: fixture: it ended 2 times within 120 s: it is left out, and tried again in 3600 s",
    );
    b.recv_notification("notifications/tools/list_changed");
    let tools = b.request(json!(4), "tools/list", json!({}));
    assert_eq!(names(&tools, "tools", "name"), LEGACY_TOOLS);
    let prompts = b.request(json!(5), "prompts/list", json!({}));
    assert_eq!(prompts["result"], json!({"prompts": []}));
    assert_one_change_per_list(&b.seen[seen_before..], "when it failed");
    assert_eq!(count(&b, "notifications/tools/list_changed"), 2);
}

#[test]
fn a_late_server_is_not_waited_for_past_the_start_limit_and_joins_when_it_answers() {
    let dir = scratch_dir("gateway-late");
    let gate = dir.join("gate");
    let gate_arg = gate.to_string_lossy().into_owned();
    let path = claude_desktop_file("gateway-late-file", &["--discover-gate", &gate_arg]);
    let mut b = gateway(&path, &["--start-time-limit", "1"]);
    let init = b.initialize_request(json!(0), json!({}));
    assert_eq!(
        init["result"]["capabilities"]["resources"],
        json!({"listChanged": true})
    );
    b.wait_stderr(
        "gateway: warn: 1 server(s) had not answered initialize within 1 s: fixture; they join when they do",
    );
    b.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let tools = b.request(json!(1), "tools/list", json!({}));
    assert_eq!(names(&tools, "tools", "name"), LEGACY_TOOLS);

    std::fs::write(&gate, "").expect("open the gate");
    b.recv_notification("notifications/tools/list_changed");
    let tools = b.request(json!(2), "tools/list", json!({}));
    let mut expected: Vec<&str> = FIXTURE_TOOLS.to_vec();
    expected.extend(LEGACY_TOOLS);
    assert_eq!(names(&tools, "tools", "name"), expected);
}

#[test]
fn options_of_one_server_do_not_go_with_a_config_file_nor_the_gateways_without_one() {
    let path = claude_desktop_file("gateway-usage", &[]);
    let run = |args: &[&str]| {
        let out = Command::new(bridge_bin())
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run mcp-bridge");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .next()
                .map(str::to_owned),
        )
    };
    let file = path.to_str().expect("a UTF-8 path");
    assert_eq!(
        run(&["--config", file, "--call-timeout", "5"]),
        (
            Some(2),
            Some("mcp-bridge: cli: error: --call-timeout cannot go with --config: beside it go only --log-level, --metrics-interval, --max-line-bytes and the Many servers options; a server's own options go in the \"mcp-bridge\" member of its entry in the file (docs/usage.md)".into())
        )
    );
    assert_eq!(
        run(&["--start-time-limit", "5", "--", server_bin()]),
        (
            Some(2),
            Some("mcp-bridge: cli: error: --start-time-limit goes with --config (the supervision of many servers)".into())
        )
    );
    assert_eq!(
        run(&["--config", file, server_bin()]),
        (
            Some(2),
            Some("mcp-bridge: cli: error: --config runs the servers of the file: no server command or URL goes beside it".into())
        )
    );
    assert_eq!(
        run(&["--config", file, "--config", file]),
        (
            Some(2),
            Some("mcp-bridge: cli: error: --config takes one file".into())
        )
    );
    let bad = scratch_dir("gateway-usage-bad");
    let empty = bad.join("empty.json");
    std::fs::write(&empty, r#"{"mcpServers": {"x": {"command": ""}}}"#).expect("write");
    let empty = empty.to_str().expect("a UTF-8 path");
    assert_eq!(
        run(&["--config", empty]),
        (
            Some(2),
            Some(format!(
                "mcp-bridge: config: error: {empty}:1:34: mcpServers.x.command: is empty: it names the program that starts the server"
            ))
        )
    );
    let nowhere = bad.join("nowhere.json");
    let config =
        json!({"mcpServers": {"x": {"command": server_bin(), "cwd": "/nonexistent-folder"}}});
    std::fs::write(&nowhere, config.to_string()).expect("write");
    let (code, line) = run(&["--config", nowhere.to_str().expect("a UTF-8 path")]);
    assert_eq!(code, Some(2));
    assert!(
        line.as_deref().is_some_and(|l| l.ends_with(
            ": mcpServers.x.cwd: \"/nonexistent-folder\" is not a folder: the server's program starts in its cwd"
        )),
        "{line:?}"
    );
    let missing = scratch_dir("gateway-usage-missing").join("none.json");
    let (code, line) = run(&["--config", missing.to_str().expect("a UTF-8 path")]);
    assert_eq!(code, Some(2));
    assert!(
        line.as_deref()
            .is_some_and(|l| l.starts_with("mcp-bridge: config: error: ")),
        "{line:?}"
    );
}

/// Writes a VS Code `mcp.json` (comments, trailing commas, `type`) of the fixture server with
/// its test tools and the legacy server into a fresh folder; its path.
fn vscode_file(tag: &str) -> PathBuf {
    let dir = scratch_dir(tag);
    let text = format!(
        r#"{{
  // Two servers, as VS Code writes them.
  "servers": {{
    "fixture": {{"type": "stdio", "command": {fixture}, "args": ["--test-tools"],}},
    "legacy": {{
      "type": "stdio",
      "command": {legacy},
      "env": {{"MCP_FIXTURE_TRACE": {trace}}},
    }},
  }},
}}"#,
        fixture = json!(server_bin()),
        legacy = json!(legacy_server_bin()),
        trace = json!(dir.join("legacy-received.jsonl")),
    );
    let path = dir.join("mcp.json");
    std::fs::write(&path, text).expect("write mcp.json");
    path
}

#[test]
fn a_vscode_file_is_read_as_it_is_and_input_requests_and_progress_reach_their_owner() {
    let path = vscode_file("gateway-vscode");
    let legacy_trace = path.with_file_name("legacy-received.jsonl");
    let mut b = gateway(&path, &[]);
    b.initialize_request(json!(0), json!({"elicitation": {"form": {}}}));
    b.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    // A 2026-07-28 server's input request (input_required) reaches the editor under the
    // gateway's id, and the answer goes back to its round.
    b.send_tools_call(json!(1), "fixture__ask_name", json!({}));
    let q = b.recv_matching("elicitation/create", |f| {
        f["method"] == "elicitation/create"
    });
    assert!(
        q["id"].as_str().is_some_and(|id| id.starts_with("b-")),
        "{q}"
    );
    assert_eq!(q["params"]["message"], json!("What is your name?"));
    b.send(&json!({"jsonrpc": "2.0", "id": q["id"],
                   "result": {"action": "accept", "content": {"name": "Ada"}}}));
    assert_eq!(
        b.recv_response(&json!(1))["result"],
        json!({"content": [{"type": "text", "text": "Hello, Ada!"}]})
    );

    // A URI in a server's error is the exposed one.
    assert_eq!(
        b.request(
            json!(20),
            "resources/read",
            json!({"uri": "fixture+example://moved/7"})
        )["error"]["data"]["uri"],
        json!("fixture+example://notes/7")
    );

    // Progress of a call reaches the editor with the editor's own token.
    b.send_request(
        json!(2),
        "tools/call",
        json!({"name": "fixture__slow", "arguments": {"steps": 2, "delay_ms": 1},
               "_meta": {"progressToken": "p-1"}}),
    );
    b.recv_response(&json!(2));
    let progress = b.take_notifications("notifications/progress");
    assert_eq!(progress.len(), 2, "{progress:?}");
    assert!(
        progress
            .iter()
            .all(|p| p["params"]["progressToken"] == json!("p-1")),
        "{progress:?}"
    );

    // The editor's cancellation reaches the owner of the request only.
    b.send_tools_call(json!(3), "legacy__slow", json!({}));
    let slow_seen =
        || std::fs::read_to_string(&legacy_trace).is_ok_and(|t| t.contains("\"name\":\"slow\""));
    assert!(wait_until(slow_seen), "the legacy server got no slow call");
    b.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 3, "reason": "enough"}}),
    );
    let cancelled = b.tools_call(json!(4), "legacy__cancelled", json!({}));
    let ids: Value = serde_json::from_str(
        cancelled["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default(),
    )
    .expect("the ids as JSON");
    assert_eq!(ids.as_array().map(Vec::len), Some(1), "{cancelled}");
    assert!(
        !b.upstream_received()
            .iter()
            .any(|l| l["method"] == "notifications/cancelled"),
        "the other server got a cancellation"
    );
    b.close_stdin();
    assert_eq!(b.exit_code(Duration::from_secs(30)), Some(0));
}

#[test]
fn the_end_of_stdin_with_eight_servers_each_with_a_grandchild_leaves_no_process() {
    let dir = scratch_dir("gateway-eight");
    let servers: serde_json::Map<String, Value> = (1..=8)
        .map(|n| {
            let entry = json!({"command": server_bin(), "args": ["--test-tools"]});
            (format!("s{n}"), entry)
        })
        .collect();
    let path = dir.join("claude_desktop_config.json");
    std::fs::write(&path, json!({"mcpServers": servers}).to_string()).expect("write the file");
    let mut b = gateway(&path, &[]);
    b.initialize_request(json!(0), json!({}));
    b.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut pids: Vec<i32> = children_of(b.child.id() as i32);
    assert_eq!(pids.len(), 8, "one process per server: {pids:?}");
    for n in 1..=8 {
        let r = b.tools_call(json!(n), &format!("s{n}__spawn_grandchild"), json!({}));
        let pid = r["result"]["content"][0]["text"]
            .as_str()
            .and_then(|t| t.trim().parse::<i32>().ok())
            .unwrap_or_else(|| panic!("no pid in {r}"));
        pids.push(pid);
    }
    b.close_stdin();
    assert_eq!(b.exit_code(Duration::from_secs(60)), Some(0));
    assert!(
        wait_until(|| pids.iter().all(|pid| gone(*pid))),
        "a process outlived the bridge: {:?}",
        pids.iter().filter(|p| !gone(**p)).collect::<Vec<_>>()
    );
}

/// Lists the tools until they are `expected`, waiting for a list change between two lists.
fn wait_tools(b: &mut Bridge, first_id: i64, expected: &[String]) {
    for id in first_id..first_id + 10 {
        let tools = b.request(json!(id), "tools/list", json!({}));
        if names(&tools, "tools", "name") == expected {
            return;
        }
        b.recv_notification("notifications/tools/list_changed");
    }
    panic!("the tools never became {expected:?}");
}

#[test]
fn an_edit_of_the_file_starts_stops_and_restarts_only_the_servers_it_changes() {
    let dir = scratch_dir("gateway-edit");
    let path = dir.join("claude_desktop_config.json");
    let legacy_trace = dir.join("legacy-received.jsonl");
    let legacy = json!({"command": legacy_server_bin(), "args": [],
                        "env": {"MCP_FIXTURE_TRACE": legacy_trace}});
    let write = |servers: Value| {
        // As editors save: a new file renamed over the old one.
        let new = dir.join("claude_desktop_config.json.new");
        std::fs::write(&new, json!({"mcpServers": servers}).to_string()).expect("write");
        std::fs::rename(&new, &path).expect("rename over the file");
    };
    write(json!({
        "a": {"command": server_bin(), "args": ["--test-tools"]},
        "b": legacy,
        "c": {"command": server_bin(), "args": []},
    }));
    let mut b = gateway(&path, &[]);
    b.initialize_request(json!(0), json!({}));
    b.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let a_tools: Vec<String> = names(
        &b.request(json!(1), "tools/list", json!({})),
        "tools",
        "name",
    )
    .into_iter()
    .filter(|n| n.starts_with("a__"))
    .collect();
    let a_pid = child_running(&b, "--test-tools");

    // A call of a server that stays runs through the edit.
    b.send_tools_call(json!(2), "a__sleep", json!({"ms": 1500}));
    write(json!({
        "a": {"command": server_bin(), "args": ["--test-tools"]},
        "c": {"command": server_bin(), "args": ["--tool-named", "extra"]},
        "d": legacy,
    }));
    b.wait_stderr(
        "gateway: info: the configuration file changed: 1 server(s) started, 1 stopped, 1 started again",
    );
    assert_eq!(
        b.recv_response(&json!(2))["result"],
        json!({"content": [{"type": "text", "text": "slept"}]})
    );
    let mut expected = a_tools.clone();
    expected.extend(FIXTURE_TOOLS.iter().map(|t| t.replacen("fixture", "c", 1)));
    expected.push("c__extra".into());
    expected.extend(LEGACY_TOOLS.iter().map(|t| t.replacen("legacy", "d", 1)));
    wait_tools(&mut b, 10, &expected);
    assert_eq!(
        child_running(&b, "--test-tools"),
        a_pid,
        "the unchanged server was started again"
    );
    assert_eq!(
        b.tools_call(json!(30), "b__echo", json!({"text": "x"}))["error"]["data"]["detail"],
        json!("no server behind the bridge has the tool \"b__echo\"")
    );
    assert_eq!(
        b.tools_call(json!(31), "c__extra", json!({}))["result"],
        json!({"content": [{"type": "text", "text": "ok"}]})
    );

    // A broken edit is one warning, and the set stays.
    std::fs::write(&path, "{\"mcpServers\": {").expect("write a broken file");
    b.wait_stderr("gateway: warn: the configuration file changed, and is not used: ");
    let tools = b.request(json!(32), "tools/list", json!({}));
    assert_eq!(names(&tools, "tools", "name"), expected);
    assert_eq!(
        b.tools_call(json!(33), "d__echo", json!({"text": "still"}))["result"],
        json!({"content": [{"type": "text", "text": "still"}]})
    );
}

/// Whether the environment of the process `pid` has the variable `name`.
fn has_var(pid: i32, name: &str) -> bool {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).expect("read the environment");
    environ
        .split(|b| *b == 0)
        .any(|v| v.starts_with(format!("{name}=").as_bytes()))
}

#[test]
fn a_variable_that_an_edit_puts_in_a_header_reaches_no_server_started_after_it() {
    let dir = scratch_dir("gateway-secret-edit");
    let path = dir.join("claude_desktop_config.json");
    let write = |servers: Value| {
        let new = dir.join("claude_desktop_config.json.new");
        std::fs::write(&new, json!({"mcpServers": servers}).to_string()).expect("write");
        std::fs::rename(&new, &path).expect("rename over the file");
    };
    write(json!({"a": {"command": server_bin(), "args": []}}));
    let mut cmd = Command::new(bridge_bin());
    cmd.arg("--config")
        .arg(&path)
        .env("GATEWAY_TEST_SECRET", "s3cret");
    let mut b = Bridge::start_command(&mut cmd, Revision::Legacy);
    b.initialize_request(json!(0), json!({}));
    b.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    b.wait_stderr("gateway: info: a: ready");
    // No header uses it yet: the server's program inherits it, as any variable.
    let first = child_running(&b, "mcp-fixture-server");
    assert!(has_var(first, "GATEWAY_TEST_SECRET"));

    // The edit puts it in a header of another server, and starts `a` again.
    write(json!({
        "a": {"command": server_bin(), "args": ["--tool-named", "extra"]},
        "remote": {"url": "http://127.0.0.1:9/mcp",
                   "headers": {"Authorization": "Bearer ${env:GATEWAY_TEST_SECRET}"}},
    }));
    b.wait_stderr(
        "gateway: info: the configuration file changed: 1 server(s) started, 0 stopped, 1 started again",
    );
    assert!(
        wait_until(|| b.stderr_text().matches("gateway: info: a: ready").count() == 2),
        "a was not ready again:\n{}",
        b.stderr_text()
    );
    let second = child_running(&b, "--tool-named");
    assert_ne!(second, first);
    assert!(!has_var(second, "GATEWAY_TEST_SECRET"));
}

#[test]
fn an_edit_of_the_file_that_the_given_path_links_to_is_seen() {
    let dir = scratch_dir("gateway-link");
    let (real_dir, link_dir) = (dir.join("dotfiles"), dir.join("editor"));
    for d in [&real_dir, &link_dir] {
        std::fs::create_dir_all(d).expect("make a folder");
    }
    let real = real_dir.join("claude_desktop_config.json");
    let write = |servers: Value| {
        // As editors save: a new file renamed over the old one, beside the real file.
        let new = real_dir.join("claude_desktop_config.json.new");
        std::fs::write(&new, json!({"mcpServers": servers}).to_string()).expect("write");
        std::fs::rename(&new, &real).expect("rename over the file");
    };
    write(json!({"a": {"command": server_bin(), "args": []}}));
    let link = link_dir.join("claude_desktop_config.json");
    std::os::unix::fs::symlink(&real, &link).expect("link the editor's file");
    let mut b = gateway(&link, &[]);
    b.initialize_request(json!(0), json!({}));
    b.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    b.wait_stderr("gateway: info: a: ready");
    write(json!({
        "a": {"command": server_bin(), "args": []},
        "b": {"command": server_bin(), "args": ["--tool-named", "extra"]},
    }));
    b.wait_stderr(
        "gateway: info: the configuration file changed: 1 server(s) started, 0 stopped, 0 started again",
    );
    b.wait_stderr("gateway: info: b: ready");
}

#[test]
fn names_that_clients_refuse_are_sanitized_or_shortened_and_reach_their_tool() {
    let long = "summarize_every_open_pull_request_of_the_repository_and_post_a_comment";
    let path = claude_desktop_file(
        "gateway-names",
        &[
            "--tool-named",
            long,
            "--tool-named",
            "files:read",
            "--tool-named",
            "files.read",
        ],
    );
    let mut b = gateway(&path, &[]);
    b.initialize_request(json!(0), json!({}));
    b.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let tools = b.request(json!(1), "tools/list", json!({}));
    let mut expected: Vec<&str> = FIXTURE_TOOLS.to_vec();
    // Cut to 46 characters with the hash of the whole name; `:` and `.` become `_`, and the
    // second name that makes `fixture__files_read` is left out.
    expected.extend([
        "fixture__summarize_every_open_pull_re_8d161518",
        "fixture__files_read",
    ]);
    expected.extend(LEGACY_TOOLS);
    assert_eq!(names(&tools, "tools", "name"), expected);
    b.wait_stderr(&format!(
        "gateway: warn: fixture: the tool {long:?} is fixture__summarize_every_open_pull_re_8d161518 for the editor (shortened)"
    ));
    b.wait_stderr(
        "gateway: warn: fixture: the tool \"files.read\" is left out: its name fixture__files_read is the name of the tool \"files:read\" of fixture",
    );
    for (id, exposed, original) in [
        (2, "fixture__summarize_every_open_pull_re_8d161518", long),
        (3, "fixture__files_read", "files:read"),
    ] {
        assert_eq!(
            b.tools_call(json!(id), exposed, json!({}))["result"],
            json!({"content": [{"type": "text", "text": "ok"}]})
        );
        b.wait_upstream(|l| l["method"] == "tools/call" && l["params"]["name"] == original);
    }
}

#[test]
fn a_merged_list_longer_than_a_page_comes_in_pages_of_the_bridges_cursors() {
    // 6 default tools and 594 named ones: 600 tools of each of two servers.
    let named: Vec<String> = (0..594).map(|n| format!("t{n}")).collect();
    let mut args: Vec<&str> = Vec::new();
    for n in &named {
        args.extend(["--tool-named", n.as_str()]);
    }
    let dir = scratch_dir("gateway-pages");
    let servers = json!({"mcpServers": {
        "a": {"command": server_bin(), "args": args},
        "b": {"command": server_bin(), "args": args},
    }});
    let path = dir.join("claude_desktop_config.json");
    std::fs::write(&path, servers.to_string()).expect("write the file");
    let mut b = gateway(&path, &[]);
    b.initialize_request(json!(0), json!({}));
    b.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let first = b.request(json!(1), "tools/list", json!({}));
    let cursor = first["result"]["nextCursor"].clone();
    assert_eq!(cursor, json!("mcp-bridge-page-1000"));
    let second = b.request(json!(2), "tools/list", json!({"cursor": cursor}));
    assert_eq!(second["result"].get("nextCursor"), None);
    let mut all = names(&first, "tools", "name");
    all.extend(names(&second, "tools", "name"));
    let mut expected: Vec<String> = Vec::new();
    for server in ["a", "b"] {
        expected.extend(
            FIXTURE_TOOLS
                .iter()
                .map(|t| t.replacen("fixture", server, 1)),
        );
        expected.extend(named.iter().map(|n| format!("{server}__{n}")));
    }
    assert_eq!(all.len(), 1200);
    assert_eq!(all, expected);
    assert_eq!(
        b.request(
            json!(3),
            "tools/list",
            json!({"cursor": "mcp-bridge-page-1200"})
        )["error"]["data"]["cause"],
        json!("invalid_params")
    );
}
