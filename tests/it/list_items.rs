//! One bad item does not cost the editor the whole list (every frame the editor gets is
//! valid 2025-11-25): over real pipes against `mcp-fixture-server --bad-list-items`,
//! the editor gets exactly the valid and the repaired items, in the upstream's order, and the
//! bridge's stderr has one warning per dropped item. The harness validates every frame
//! against the official 2025-11-25 schema.

use crate::common;

use common::{Bridge, text_of};
use serde_json::{Value, json};

/// The text of the warning about one dropped item.
fn refused(list: &str, noun: &str, label: &str, reason: &str) -> String {
    format!("{list}: {noun} {label}: dropped, the 2025-11-25 schema refuses it: {reason}")
}

const REFUSED: &str = "dropped, the 2025-11-25 schema refuses it";

fn list(b: &mut Bridge, id: i64, method: &str, member: &str) -> Vec<Value> {
    let r = b.request(json!(id), method, json!({}));
    r["result"][member]
        .as_array()
        .cloned()
        .unwrap_or_else(|| panic!("{method}: {r}"))
}

#[test]
fn bad_tools_are_repaired_or_dropped_with_a_warning_and_the_rest_is_listed_in_order() {
    let mut b = Bridge::start(&[], &["--bad-list-items"]);
    b.initialize();
    let tools = list(&mut b, 1, "tools/list", "tools");
    // The harness's upstream also has the test tools: the default and test tools come first,
    // then the bad ones, of which the editor gets the three repaired, in order.
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    let good = names.len() - 3;
    assert_eq!(names.len(), tools.len());
    assert_eq!(
        &names[..6],
        ["echo", "add", "slow", "log", "fail", "ask_name"]
    );
    assert!(
        names[..good].iter().all(|n| !n.starts_with("bad_")),
        "{names:?}"
    );
    assert_eq!(
        &names[good..],
        ["bad_input_true", "bad_input_null", "bad_null_members"]
    );
    let object = json!({"type": "object"});
    assert_eq!(
        tools[good],
        json!({"name": "bad_input_true", "inputSchema": object})
    );
    assert_eq!(
        tools[good + 1],
        json!({"name": "bad_input_null", "inputSchema": object})
    );
    assert_eq!(
        tools[good + 2],
        json!({"name": "bad_null_members", "inputSchema": object})
    );
    let t = |label: &str, reason: &str| refused("tools/list", "tool", label, reason);
    let warnings = [
        t(
            "\"bad_array_root\"",
            "/inputSchema/type: \"object\" was expected",
        ),
        t(
            "\"bad_nullable_root\"",
            "/inputSchema/type: value is not of type \"string\"",
        ),
        t(
            "\"bad_any_of\"",
            "/inputSchema: \"type\" is a required property",
        ),
        // The unnamed tool is named by its index in the upstream's list.
        t(
            &format!("#{}", good + 5),
            "/: \"name\" is a required property",
        ),
        t("\"bad_title\"", "/title: value is not of type \"string\""),
    ];
    for w in &warnings {
        b.wait_stderr(w);
    }
    let stderr = b.stderr_text();
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains(REFUSED)).collect();
    assert_eq!(lines.len(), warnings.len(), "{stderr}");
    let expected: Vec<String> = warnings
        .iter()
        .map(|w| format!("mcp-bridge: translate: warn: {w}"))
        .collect();
    assert_eq!(lines, expected);
    // A repaired tool is called as usual.
    let r = b.tools_call(json!(2), "bad_input_true", json!({}));
    assert_eq!(text_of(&r), "ok");
}

#[test]
fn bad_prompts_and_resources_are_dropped_with_a_warning() {
    let mut b = Bridge::start(&[], &["--bad-list-items"]);
    b.initialize();
    let prompts = list(&mut b, 1, "prompts/list", "prompts");
    let names: Vec<&Value> = prompts.iter().map(|p| &p["name"]).collect();
    assert_eq!(names, [&json!("greet"), &json!("bad_prompt_null_title")]);
    assert_eq!(prompts[1], json!({"name": "bad_prompt_null_title"}));
    b.wait_stderr(&refused(
        "prompts/list",
        "prompt",
        "\"bad_prompt_arguments\"",
        "/arguments/0: \"name\" is a required property",
    ));
    let resources = list(&mut b, 2, "resources/list", "resources");
    assert_eq!(
        resources,
        [
            json!({"name": "readme", "uri": "example://readme", "mimeType": "text/plain",
            "description": "About this server."})
        ]
    );
    b.wait_stderr(&refused(
        "resources/list",
        "resource",
        "\"bad_resource_uri\"",
        "/uri: value is not of type \"string\"",
    ));
    let templates = list(&mut b, 3, "resources/templates/list", "resourceTemplates");
    let names: Vec<&Value> = templates.iter().map(|t| &t["name"]).collect();
    assert_eq!(names, [&json!("note"), &json!("moved"), &json!("gone")]);
    let stderr = b.stderr_text();
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains(REFUSED)).collect();
    assert_eq!(
        lines,
        [
            "mcp-bridge: translate: warn: prompts/list: prompt \"bad_prompt_arguments\": dropped, the 2025-11-25 schema refuses it: /arguments/0: \"name\" is a required property",
            "mcp-bridge: translate: warn: resources/list: resource \"bad_resource_uri\": dropped, the 2025-11-25 schema refuses it: /uri: value is not of type \"string\"",
        ]
    );
}
