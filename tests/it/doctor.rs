//! `mcp-bridge doctor`: the real binary against the fixture servers (a 2026-07-28 one with
//! items a 2025-11-25 editor refuses, a 2025-11-25-only one, broken commands, the HTTP fixture
//! and a URL that asks for a sign-in). The JSON report's fields are compared exactly; the text
//! report by its key lines; timings only for being there and not negative.

use serde_json::{Value, json};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;

use crate::common::legacy_http_fixture::{LegacyFixture, Script};
use crate::common::signed_bridge;
use crate::common::{bridge_bin, server_bin};
use mcp_bridge::server::{Outcome, PromptDef, ResourceDef, Server, ToolDef};
use mcp_test_fixtures::auth_fixture::{self, Behaviour};
use mcp_test_fixtures::http_fixture::{Canned, HttpFixture};

fn legacy_bin() -> &'static str {
    crate::common::legacy_server_bin()
}

/// Runs `mcp-bridge doctor <args>`, stdin closed; its output.
fn doctor(args: &[&str]) -> Output {
    Command::new(bridge_bin())
        .arg("doctor")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("mcp-bridge doctor runs")
}

/// `doctor --json <args>`: the exit code and the report.
fn doctor_json(args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = doctor(&all);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let report: Value = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "not one JSON object ({e}): {text}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), report)
}

/// The timings are there and not negative (their values depend on the machine).
fn assert_timings(report: &Value, list: Option<&str>) {
    let t = &report["timings_ms"];
    for key in ["discover", "initialize"] {
        assert!(t[key].as_f64().is_some_and(|v| v >= 0.0), "{key}: {t}");
    }
    match list {
        Some(method) => {
            assert!(t["list"].as_f64().is_some_and(|v| v >= 0.0), "{t}");
            assert_eq!(t["list_method"], json!(method));
        }
        None => assert_eq!(
            (&t["list"], &t["list_method"]),
            (&Value::Null, &Value::Null)
        ),
    }
}

fn counts(report: &Value) -> Vec<(String, u64)> {
    report["lists"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v["count"].as_u64().unwrap_or(u64::MAX)))
                .collect()
        })
        .unwrap_or_default()
}

fn changes(report: &Value, action: &str) -> Vec<String> {
    report["changes"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|c| c["action"] == json!(action))
                .map(|c| c["text"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn pairs(items: &[(&str, u64)]) -> Vec<(String, u64)> {
    items.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

#[test]
fn a_2026_server_is_translated_and_each_item_the_bridge_repairs_or_drops_is_named() {
    let (code, r) = doctor_json(&["--", server_bin(), "--bad-list-items", "--page-size", "3"]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["target"], json!("command"));
    assert_eq!(r["revision"], json!("2026-07-28"));
    assert_eq!(r["mode"], json!("translate"));
    assert_eq!(r["transport"], json!("stdio"));
    assert_eq!(
        r["why"],
        json!("it answered server/discover with a DiscoverResult that supports 2026-07-28")
    );
    assert_eq!(r["protocol_version"], json!("2025-11-25"));
    assert_eq!(
        r["server"],
        json!({"name": "mcp-fixture-server", "version": env!("CARGO_PKG_VERSION")})
    );
    assert_eq!(
        counts(&r),
        pairs(&[
            ("tools", 9),
            ("prompts", 2),
            ("resources", 1),
            ("resourceTemplates", 1)
        ])
    );
    // Every page is read: 14 tools upstream in pages of 3. An item is named as the bridge's log
    // names it (an unnamed one by its place in its page); the repairs of an item that is then
    // dropped are not listed.
    assert_eq!(r["lists"]["tools"]["pages"], json!(5));
    let refused = "dropped, the 2025-11-25 schema refuses it";
    assert_eq!(
        changes(&r, "dropped"),
        [
            format!(
                "tools/list: tool \"bad_array_root\": {refused}: /inputSchema/type: \"object\" was expected"
            ),
            format!(
                "tools/list: tool \"bad_nullable_root\": {refused}: /inputSchema/type: value is not of type \"string\""
            ),
            format!(
                "tools/list: tool \"bad_any_of\": {refused}: /inputSchema: \"type\" is a required property"
            ),
            format!("tools/list: tool #2: {refused}: /: \"name\" is a required property"),
            format!(
                "tools/list: tool \"bad_title\": {refused}: /title: value is not of type \"string\""
            ),
            format!(
                "prompts/list: prompt \"bad_prompt_arguments\": {refused}: /arguments/0: \"name\" is a required property"
            ),
            format!(
                "resources/list: resource \"bad_resource_uri\": {refused}: /uri: value is not of type \"string\""
            ),
        ]
    );
    assert_eq!(
        changes(&r, "repaired"),
        [
            "tools/list: tool \"bad_input_true\": an inputSchema true became {\"type\": \"object\"}",
            "tools/list: tool \"bad_input_null\": a null inputSchema became {\"type\": \"object\"}",
            "tools/list: tool \"bad_null_members\": dropped a null \"annotations\"",
            "tools/list: tool \"bad_null_members\": dropped a null \"title\"",
            "tools/list: tool \"bad_null_members\": dropped a null \"_meta\"",
            "prompts/list: prompt \"bad_prompt_null_title\": dropped a null \"title\"",
        ]
    );
    assert_eq!(r["sign_in"], Value::Null);
    assert_eq!(r["usable"], json!(true));
    assert_eq!(
        r["reason"],
        json!("the server works through the bridge (7 items dropped)")
    );
    assert_timings(&r, Some("tools/list"));
    // The editors' configuration runs this bridge with the options given (none here).
    let entry = json!({"command": bridge_bin(), "args": [
        "--", server_bin(), "--bad-list-items", "--page-size", "3"]});
    let mut vscode = entry.clone();
    vscode["type"] = json!("stdio");
    assert_eq!(
        r["config"],
        json!({
            "vscode": {"file": ".vscode/mcp.json",
                "json": {"servers": {"mcp-fixture-server": vscode}}},
            "claude_desktop": {"file": "claude_desktop_config.json",
                "json": {"mcpServers": {"mcp-fixture-server": entry}}},
            "cursor": {"file": ".cursor/mcp.json",
                "json": {"mcpServers": {"mcp-fixture-server": entry}}},
        })
    );
}

#[test]
fn the_text_report_has_one_line_per_finding_and_the_verdict_last() {
    let out = doctor(&["--name", "fx", "--", server_bin()]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    for want in [
        format!("server: mcp-fixture-server {}", env!("CARGO_PKG_VERSION")),
        "revision: 2026-07-28 (translated for the 2025-11-25 editor)".to_string(),
        "why: it answered server/discover with a DiscoverResult that supports 2026-07-28".into(),
        "transport: stdio".into(),
        "tools: 6".into(),
        "prompts: 1".into(),
        "resources: 1".into(),
        "resource templates: 1".into(),
        "VS Code (.vscode/mcp.json):".into(),
        "Claude Desktop (claude_desktop_config.json):".into(),
        "Cursor (.cursor/mcp.json):".into(),
    ] {
        assert!(lines.contains(&want.as_str()), "{want:?} in:\n{text}");
    }
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("time: server/discover ") && l.contains(", tools/list ")),
        "{text}"
    );
    // --name names the server entry, and goes into its arguments.
    assert!(text.contains("\"fx\": {"), "{text}");
    assert!(text.contains("\"--name\",\n        \"fx\","), "{text}");
    assert_eq!(
        lines.last(),
        Some(&"usable: the server works through the bridge")
    );
}

#[test]
fn a_2025_11_25_server_is_passed_through_and_the_reason_is_its_answer_to_discover() {
    let (code, r) = doctor_json(&["--", legacy_bin()]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["revision"], json!("2025-11-25"));
    assert_eq!(r["mode"], json!("pass-through"));
    assert_eq!(r["transport"], json!("stdio"));
    assert_eq!(
        r["why"],
        json!("it answered server/discover with -32601 \"Method not found\"")
    );
    assert_eq!(
        r["server"],
        json!({"name": "mcp-legacy-server", "version": env!("CARGO_PKG_VERSION")})
    );
    assert_eq!(r["upstream_capabilities"], Value::Null);
    assert_eq!(counts(&r)[0].0, "tools");
    assert_eq!(r["lists"]["tools"]["refused"], json!([]));
    assert_eq!(r["changes"], json!([]));
    assert_eq!(r["usable"], json!(true));
    assert_eq!(r["reason"], json!("the server works through the bridge"));
    assert_timings(&r, Some("tools/list"));
}

/// A command that exits at once (at `server/discover`, and again at the `initialize` it is
/// started again for) failed to start: doctor says so, with no revision, and quotes the end
/// of its stderr; a launcher's 127 too.
#[test]
fn a_command_that_exits_at_once_failed_to_start_and_the_reason_says_why() {
    let script = "echo 'boom: no such file' >&2; exit 3";
    let (code, r) = doctor_json(&["--", "sh", "-c", script]);
    assert_eq!(code, 1, "{r}");
    assert_eq!(r["usable"], json!(false));
    assert_eq!(r["revision"], Value::Null);
    assert_eq!(r["mode"], Value::Null);
    assert_eq!(r["lists"], json!({}));
    let detail = "exit code 3; its stderr ended with: \"boom: no such file\"";
    assert_eq!(
        r["initialize_error"],
        json!(format!(
            "-32603 The upstream server exited (upstream_exited): {detail}"
        ))
    );
    assert_eq!(
        r["why"],
        json!(format!(
            "it failed to start: The upstream server exited (upstream_exited, -32603): {detail}"
        ))
    );
    let reason = format!(
        "the server failed to start: -32603 The upstream server exited (upstream_exited): {detail}"
    );
    assert_eq!(r["reason"], json!(reason));
    // The text form says the same, and no revision.
    let out = doctor(&["--", "sh", "-c", script]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.contains(&"revision: none (the server failed to start)"),
        "{text}"
    );
    assert_eq!(
        lines.last(),
        Some(&format!("not usable: {reason}").as_str())
    );
    // No editor entry is offered for a server that does not work through the bridge.
    assert_eq!(r["config"], json!({}));
    assert!(!text.contains("\"mcpServers\""), "{text}");
    assert!(!text.contains("\"servers\""), "{text}");
    // A launcher that exits 127 is not started again, and fails to start as well.
    let (code, r) = doctor_json(&["--", "sh", "-c", "exit 127"]);
    assert_eq!(code, 1, "{r}");
    assert_eq!(r["revision"], Value::Null);
    assert!(
        r["reason"]
            .as_str()
            .is_some_and(|s| s.starts_with("the server failed to start: ")),
        "{r}"
    );
}

/// An option of the bridge after the server's program goes to the server (the server here
/// ignores it): doctor reports the same warning as the bridge, in both forms, and the
/// filter hides nothing.
#[test]
fn an_option_of_the_bridge_after_the_program_is_reported_with_where_it_belongs() {
    let args = [
        "--",
        "sh",
        "-c",
        "exec \"$0\"",
        legacy_bin(),
        "--deny-tool",
        "echo",
    ];
    let (code, r) = doctor_json(&args);
    assert_eq!(code, 0, "{r}");
    let warning = "--deny-tool comes after the server's program, so it goes to the server, not to mcp-bridge: an option of mcp-bridge goes before the program (mcp-bridge --deny-tool ... -- PROGRAM ...)";
    assert_eq!(r["warnings"], json!([warning]));
    let (_, plain) = doctor_json(&["--", legacy_bin()]);
    assert_eq!(counts(&r), counts(&plain));
    let out = doctor(&args);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        text.lines().next(),
        Some(format!("warning: {warning}").as_str()),
        "{text}"
    );
}

/// The editors' entries name every argument that is a file or folder of the current folder
/// by its full path (an editor starts its servers elsewhere); other arguments stay as given.
#[test]
fn the_editor_entries_name_the_files_of_the_current_folder_by_their_full_path() {
    let dir = crate::common::scratch_dir("doctor-cwd");
    let dir = dir.canonicalize().expect("canonical scratch dir");
    std::fs::write(dir.join("server.sh"), format!("exec '{}'\n", legacy_bin())).expect("script");
    std::fs::create_dir(dir.join("data")).expect("data dir");
    let out = Command::new(bridge_bin())
        .args([
            "doctor",
            "--json",
            "--name",
            "fx",
            "--",
            "/bin/sh",
            "server.sh",
            "./data",
            "missing.txt",
            "-x",
        ])
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("mcp-bridge doctor runs");
    let r: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(out.status.code(), Some(0), "{r}");
    let d = dir.display();
    assert_eq!(
        r["config"]["cursor"]["json"]["mcpServers"]["fx"]["args"],
        json!([
            "--name",
            "fx",
            "--",
            "/bin/sh",
            format!("{d}/server.sh"),
            format!("{d}/data"),
            "missing.txt",
            "-x"
        ])
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_command_that_writes_junk_is_not_usable() {
    let (code, r) = doctor_json(&[
        "--discover-timeout",
        "0.5",
        "--",
        "sh",
        "-c",
        "echo 'this is no JSON-RPC'; exec sleep 30",
    ]);
    assert_eq!(code, 1, "{r}");
    assert_eq!(r["usable"], json!(false));
    assert_eq!(
        r["why"],
        json!("it did not answer server/discover within --discover-timeout, 0.5 s")
    );
    let reason = r["reason"].as_str().unwrap_or_default();
    assert!(reason.starts_with("initialize failed: "), "{reason}");
    assert!(reason.contains("(timeout)"), "{reason}");
}

/// A 2026-07-28 server for the HTTP fixture: a tool with an `http:` icon (the bridge keeps only
/// `data:` icons of a URL upstream), a tool whose `x-mcp-header` annotations break a rule (the
/// bridge drops it), a prompt and a resource.
fn http_server() -> Server {
    Server::builder("http-fixture", "1.2.3")
        .tool(
            ToolDef::new("weather", json!({"type": "object"}))
                .field("icons", json!([{"src": "https://example.com/w.png"}])),
            |_, _| async move { Ok(Outcome::text("sunny")) },
        )
        .tool(
            ToolDef::new(
                "twice",
                json!({"type": "object", "properties": {
                    "a": {"type": "string", "x-mcp-header": "Zone"},
                    "b": {"type": "string", "x-mcp-header": "zone"}}}),
            ),
            |_, _| async move { Ok(Outcome::text("x")) },
        )
        .prompt(PromptDef::new("greet"), |_, _| async move {
            Ok(Outcome::Complete(json!({"messages": []})))
        })
        .resource(ResourceDef::new("file:///a.txt", "a"), |_, _| async move {
            Ok(Outcome::Complete(json!({"contents": []})))
        })
        .build()
}

#[test]
fn a_url_is_reached_over_streamable_http_and_the_remote_rules_are_named() {
    let f = HttpFixture::start(http_server(), Vec::new());
    let (code, r) = doctor_json(&[&f.url()]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["target"], json!("url"));
    assert_eq!(r["revision"], json!("2026-07-28"));
    assert_eq!(r["mode"], json!("translate"));
    assert_eq!(r["transport"], json!("streamable-http"));
    assert_eq!(
        r["server"],
        json!({"name": "http-fixture", "version": "1.2.3"})
    );
    assert_eq!(
        counts(&r),
        pairs(&[
            ("tools", 1),
            ("prompts", 1),
            ("resources", 1),
            ("resourceTemplates", 0)
        ])
    );
    assert_eq!(
        changes(&r, "dropped"),
        [
            "dropped the tool \"twice\" from tools/list: the header name \"zone\" is used twice (2026-07-28 x-mcp-header rules)"
        ]
    );
    assert_eq!(
        changes(&r, "repaired"),
        ["tools/list: \"weather\": removed its icons that are not data: URLs (a URL upstream)"]
    );
    assert_eq!(r["sign_in"], Value::Null);
    assert_eq!(
        r["reason"],
        json!("the server works through the bridge (1 items dropped)")
    );
    assert_timings(&r, Some("tools/list"));
    let entry = json!({"command": bridge_bin(), "args": [f.url()]});
    assert_eq!(
        r["config"]["cursor"]["json"],
        json!({"mcpServers": {"http-fixture": entry}})
    );
    // The text form says that no sign-in was asked for.
    let out = doctor(&[&f.url()]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.lines().any(|l| l == "sign-in: none asked for"),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l == "transport: streamable-http"),
        "{text}"
    );
}

/// The sign-in fixture with `change` made to its default behaviour.
fn auth(change: impl FnOnce(&mut Behaviour)) -> Arc<auth_fixture::Fixture> {
    let mut b = auth_fixture::default_behaviour();
    change(&mut b);
    auth_fixture::start(b)
}

#[test]
fn a_url_that_asks_for_a_sign_in_gets_its_metadata_and_no_sign_in() {
    let fx = auth(|_| {});
    let (code, r) = doctor_json(&[&fx.mcp_url()]);
    // Usable: the bridge signs in there when the server asks (dynamic registration).
    assert_eq!(code, 0, "{r}");
    assert_eq!(
        r["sign_in"],
        json!({
            "required": true,
            "status": 401,
            "resource_metadata": {
                "resource": fx.resource(),
                "authorization_servers": [fx.issuer()],
                "scopes_supported": ["read"],
            },
            "authorization_server": {
                "issuer": fx.issuer(),
                "authorization_endpoint": format!("{}/authorize", fx.issuer()),
                "token_endpoint": format!("{}/token", fx.issuer()),
                "registration_endpoint": format!("{}/register", fx.issuer()),
                "client_id_metadata_document_supported": false,
                "code_challenge_methods_supported": ["S256"],
                "scopes_supported": ["read", "write", "offline_access"],
            },
            "registration_offered": ["pre-registration", "dynamic registration"],
            "bridge_uses": "dynamic registration",
            "registration_refused": null,
            "error": null,
            "signed_in": null,
            "nothing_published": false,
        })
    );
    assert_eq!(r["usable"], json!(true));
    assert_eq!(
        r["reason"],
        json!(
            "the server asks for a sign-in (HTTP 401), which the bridge does when the server asks (dynamic registration); doctor --sign-in checks the server behind it"
        )
    );
    // The text form names the metadata and the registration.
    let out = doctor(&[&fx.mcp_url()]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    for want in [
        "sign-in: required (HTTP 401)".to_string(),
        format!(
            "  protected resource: {} (authorization servers: {})",
            fx.resource(),
            fx.issuer()
        ),
        format!("  authorization server: {}", fx.issuer()),
        "  registration offered: pre-registration, dynamic registration".into(),
        "  the bridge uses: dynamic registration".into(),
    ] {
        assert!(text.lines().any(|l| l == want), "{want:?} in:\n{text}");
    }
    assert_eq!(
        text.lines().last(),
        Some(format!("usable: {}", r["reason"].as_str().unwrap_or_default()).as_str())
    );
    // Nothing was signed in: no registration, no grant, no authorization request.
    assert!(fx.clients().is_empty());
    let stats = fx.stats();
    assert_eq!(stats["code_grants"], json!(0), "{stats}");
    assert_eq!(stats["refresh_grants"], json!(0), "{stats}");
}

#[test]
fn a_url_whose_sign_in_offers_no_registration_the_bridge_uses_is_not_usable() {
    let fx = auth(|b| b.registration = false);
    let (code, r) = doctor_json(&[&fx.mcp_url()]);
    assert_eq!(code, 1, "{r}");
    assert_eq!(
        r["sign_in"]["registration_offered"],
        json!(["pre-registration"])
    );
    assert_eq!(r["sign_in"]["bridge_uses"], Value::Null);
    let refused = r["sign_in"]["registration_refused"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        refused.starts_with("registration_unavailable: "),
        "{refused}"
    );
    assert_eq!(
        r["reason"],
        json!(format!(
            "the server asks for a sign-in (HTTP 401) that the bridge cannot do: {refused}"
        ))
    );
    // With --client-id the pre-registered client is the bridge's: usable again.
    let (code, r) = doctor_json(&["--client-id", "my-app", &fx.mcp_url()]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["sign_in"]["bridge_uses"], json!("pre-registration"));
    assert_eq!(
        // Without an initialize result the entry is named by the URL's host.
        r["config"]["vscode"]["json"]["servers"]["127.0.0.1"]["args"],
        json!(["--client-id", "my-app", fx.mcp_url()])
    );
}

#[test]
fn doctor_has_its_own_help_and_usage_errors_exit_2() {
    let out = doctor(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        help.contains(
            "Usage: mcp-bridge doctor [--json] [--sign-in] [OPTIONS] [--] <COMMAND> [ARGS]..."
        ),
        "{help}"
    );
    let out = doctor(&["--json"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(err.contains("missing the upstream command"), "{err}");
    let out = doctor(&["--discover-timeout", "0", "srv"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    // The bridge's own help names the subcommand.
    let out = Command::new(bridge_bin())
        .arg("--help")
        .output()
        .expect("runs");
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        help.contains("mcp-bridge doctor [--json] [--sign-in]"),
        "{help}"
    );
}

#[test]
fn a_2025_11_25_url_is_passed_through_over_the_legacy_http_transport() {
    let f = LegacyFixture::start(Script::default());
    let (code, r) = doctor_json(&[&f.url()]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["revision"], json!("2025-11-25"));
    assert_eq!(r["mode"], json!("pass-through"));
    assert_eq!(r["transport"], json!("legacy-http"));
    assert_eq!(r["why"], json!("it answered server/discover with HTTP 400"));
    assert_eq!(counts(&r), pairs(&[("tools", 2)]));
    assert_eq!(r["lists"]["tools"]["refused"], json!([]));
    assert_eq!(r["sign_in"], Value::Null);
    assert_eq!(r["reason"], json!("the server works through the bridge"));
    assert_timings(&r, Some("tools/list"));
}

#[test]
fn with_sign_in_doctor_signs_in_as_the_bridge_does_and_checks_the_server_behind_it() {
    let up = signed_bridge::protected_server();
    let fx = auth(|_| {});
    *fx.upstream.lock().unwrap() = Some(up.url());
    let dir = crate::common::scratch_dir("doctor-sign-in");
    let browser = signed_bridge::browser(&dir);
    let port = auth_fixture::free_port().to_string();
    let out = Command::new(bridge_bin())
        .args(["doctor", "--json", "--sign-in", "--token-store", "memory"])
        .args(["--redirect-port", &port, &fx.mcp_url()])
        .env("BROWSER", &browser)
        .env("XDG_STATE_HOME", &dir)
        .stdin(Stdio::null())
        .output()
        .expect("doctor runs");
    let r: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(out.status.code(), Some(0), "{r}");
    assert_eq!(r["sign_in"]["signed_in"], json!(true));
    assert_eq!(r["sign_in"]["bridge_uses"], json!("dynamic registration"));
    assert_eq!(r["revision"], json!("2026-07-28"));
    assert_eq!(
        r["server"],
        json!({"name": "protected", "version": "1.0.0"})
    );
    assert_eq!(counts(&r), pairs(&[("tools", 1)]));
    assert_eq!(r["reason"], json!("the server works through the bridge"));
    // The sign-in was the bridge's: one registration, one code grant, the browser followed.
    assert_eq!(fx.clients().len(), 1);
    assert_eq!(fx.stats()["code_grants"], json!(1));
    assert!(dir.join("browser-ran").exists());
    // The configuration keeps the sign-in options, not doctor's own.
    assert_eq!(
        r["config"]["claude_desktop"]["json"]["mcpServers"]["protected"]["args"],
        json!([
            "--token-store",
            "memory",
            "--redirect-port",
            port,
            fx.mcp_url()
        ])
    );
}

#[test]
fn a_2025_11_25_list_that_the_editor_refuses_is_not_usable_and_each_refused_item_is_named() {
    let (code, r) = doctor_json(&["--", legacy_bin(), "--bad-tool"]);
    assert_eq!(code, 1, "{r}");
    assert_eq!(r["mode"], json!("pass-through"));
    assert_eq!(counts(&r), pairs(&[("tools", 9)]));
    assert_eq!(
        r["lists"]["tools"]["refused"],
        json!([format!("tool \"bad_schema\": {REFUSED_TRUE_SCHEMA}")])
    );
    // The bridge changes nothing of a 2025-11-25 server's list.
    assert_eq!(r["changes"], json!([]));
    assert_eq!(
        r["reason"],
        json!(
            "a 2025-11-25 editor refuses the whole tools/list of this server: 1 of its items break the 2025-11-25 schema, and the bridge passes a 2025-11-25 server's lists unchanged"
        )
    );
    let out = doctor(&["--", legacy_bin(), "--bad-tool"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.lines().any(|l| l
            == format!("  refused: tools/list: tool \"bad_schema\": {REFUSED_TRUE_SCHEMA} (passed through unchanged)")),
        "{text}"
    );
}

/// What the 2025-11-25 schema says of an `inputSchema` that is `true`.
const REFUSED_TRUE_SCHEMA: &str = "/inputSchema: value is not of type \"object\"";

#[test]
fn a_url_that_refuses_the_static_authorization_header_is_not_usable() {
    let fx = auth(|_| {});
    let out = Command::new(bridge_bin())
        .args([
            "doctor",
            "--json",
            "--header-env",
            "Authorization=DOCTOR_TEST_AUTH",
        ])
        .arg(fx.mcp_url())
        .env("DOCTOR_TEST_AUTH", "Bearer not-a-token")
        .stdin(Stdio::null())
        .output()
        .expect("doctor runs");
    let r: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(out.status.code(), Some(1), "{r}");
    assert_eq!(r["sign_in"]["status"], json!(401));
    assert_eq!(r["sign_in"]["bridge_uses"], Value::Null);
    let why = "the server refuses the Authorization header given with --header or --header-env, and such a header turns the bridge's sign-in off";
    assert_eq!(r["sign_in"]["registration_refused"], json!(why));
    assert_eq!(
        r["reason"],
        json!(format!(
            "the server asks for a sign-in (HTTP 401) that the bridge cannot do: {why}"
        ))
    );
    // A server that is not usable gets no editor entry.
    assert_eq!(r["config"], json!({}));
}

#[test]
fn an_entry_names_the_variable_of_a_header_never_its_value() {
    let f = HttpFixture::start(http_server(), Vec::new());
    let out = Command::new(bridge_bin())
        .args([
            "doctor",
            "--json",
            "--header-env",
            "X-Api-Key=DOCTOR_TEST_KEY",
        ])
        .arg(f.url())
        .env("DOCTOR_TEST_KEY", "not-a-key")
        .stdin(Stdio::null())
        .output()
        .expect("doctor runs");
    let r: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(out.status.code(), Some(0), "{r}");
    let entry = json!({
        "command": bridge_bin(),
        "args": ["--header-env", "X-Api-Key=DOCTOR_TEST_KEY", f.url()]
    });
    assert_eq!(
        r["config"]["cursor"]["json"],
        json!({"mcpServers": {"http-fixture": entry}})
    );
    assert!(!r.to_string().contains("not-a-key"), "{r}");
}

#[test]
fn a_challenge_to_a_list_call_is_a_sign_in_too() {
    // The server answers server/discover, and tools/list only with a token: a 401 without a
    // challenge and without resource metadata, so the sign-in is 2025-03-26 authorization's
    // (the origin's metadata, here its default endpoints), as the bridge would do it.
    let f = HttpFixture::start(http_server(), Vec::new());
    f.script("tools/list", Canned::new(401, None, ""));
    let (code, r) = doctor_json(&[&f.url()]);
    // Nothing published: the default endpoints may not exist (or the server wants a
    // header the user forgot), so doctor does not call it usable without --sign-in.
    assert_eq!(code, 1, "{r}");
    assert_eq!(r["revision"], json!("2026-07-28"));
    assert_eq!(r["sign_in"]["nothing_published"], json!(true));
    let origin = format!("http://{}", f.addr);
    assert_eq!(r["sign_in"]["status"], json!(401));
    assert_eq!(
        r["sign_in"]["resource_metadata"]["resource"],
        json!(f.url())
    );
    assert_eq!(
        r["sign_in"]["authorization_server"]["issuer"],
        json!(origin)
    );
    assert_eq!(
        r["sign_in"]["authorization_server"]["registration_endpoint"],
        json!(format!("{origin}/register"))
    );
    assert_eq!(r["sign_in"]["bridge_uses"], json!("dynamic registration"));
    let tools_error = r["lists"]["tools"]["error"].as_str().unwrap_or_default();
    assert!(tools_error.contains("sign_in_unavailable"), "{tools_error}");
    assert_eq!(
        r["reason"],
        json!(
            "the server asks for a sign-in (HTTP 401) but publishes no sign-in metadata: the bridge would try the default endpoints of 2025-03-26 authorization, which the server may not have; if it wants an API key or another header, give it with --header-env; doctor --sign-in tries the sign-in"
        )
    );
}
