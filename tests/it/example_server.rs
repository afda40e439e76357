//! Black-box tests of `mcp-example-server`, the README's demo, started as a user starts it
//! (over `common::stdio_server`, every message checked against the official 2026-07-28
//! schema): its tools, prompt, resources and completion, and the envelope rules of the server
//! API it is written on.

use crate::common::schema;
use crate::common::stdio_server::{StdioServer, meta, text, with_meta};
use serde_json::{Value, json};

// ---- envelope rules -------------------------------------------------------------------------

#[tokio::test]
async fn a_request_without_version_or_capabilities_in_meta_gets_invalid_params() {
    let mut up = StdioServer::demo();
    let only_version = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}});
    let only_caps = json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}});
    for params in [json!({}), only_version, only_caps] {
        let error = up.error("server/discover", params).await;
        assert_eq!(error["code"], -32602);
    }
    let id = up.call("tools/list", Value::Null).await;
    up.send(&json!({"jsonrpc": "2.0", "id": 99, "method": "tools/list"}))
        .await;
    // `"params": null` is no structured value: JSON-RPC 2.0's Invalid Request (the protocol
    // layer's one classifier, as the bridge answers it).
    let (_, response) = up.response_to(&id).await;
    assert_eq!(response["error"]["code"], -32600);
    assert_eq!(response["error"]["data"]["cause"], "invalid_request_shape");
    let (_, response) = up.response_to(&json!(99)).await;
    assert_eq!(response["error"]["code"], -32602);
    up.finish().await;
}

#[tokio::test]
async fn an_unsupported_version_gets_32022_naming_the_supported_ones() {
    let mut up = StdioServer::demo();
    let mut old = meta(json!({}));
    old["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
    let error = up.error("tools/list", json!({"_meta": old})).await;
    assert_eq!(error["code"], -32022);
    assert_eq!(
        error["data"],
        json!({"supported": ["2026-07-28"], "requested": "2025-11-25"})
    );
    // A legacy initialize is told the same.
    let error = up
        .error(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "x", "version": "1"}}),
        )
        .await;
    assert_eq!(error["code"], -32022);
    up.finish().await;
}

#[tokio::test]
async fn unknown_methods_garbage_and_bad_envelopes_get_the_json_rpc_errors() {
    let mut up = StdioServer::demo();
    let error = up.error("ping", with_meta(json!({}))).await;
    assert_eq!(error["code"], -32601);
    up.send_line("this is not json").await;
    let message = up.recv().await;
    assert_eq!(
        message,
        json!({"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error",
               "data": {"cause": "parse_error"}}})
    );
    up.send_line(r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#)
        .await;
    let message = up.recv().await;
    assert_eq!(message["error"]["code"], -32600);
    assert!(message.get("id").is_none());
    up.send_line(r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#)
        .await;
    assert_eq!(up.recv().await["error"]["code"], -32600);
    // Responses and unknown notifications from the client are ignored.
    up.send_line(r#"{"jsonrpc":"2.0","id":5,"result":{}}"#)
        .await;
    up.send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .await;
    let result = up.tool("echo", json!({"text": "still here"})).await;
    assert_eq!(text(&result), "still here");
    up.finish().await;
}

#[tokio::test]
async fn an_unknown_tool_prompt_or_resource_is_invalid_params() {
    let mut up = StdioServer::demo();
    let error = up
        .error("tools/call", with_meta(json!({"name": "nope"})))
        .await;
    assert_eq!(error["code"], -32602);
    let error = up
        .error("prompts/get", with_meta(json!({"name": "nope"})))
        .await;
    assert_eq!(error["code"], -32602);
    let error = up
        .error(
            "resources/read",
            with_meta(json!({"uri": "example://nope"})),
        )
        .await;
    assert_eq!(
        (error["code"].clone(), error["data"]["uri"].clone()),
        (json!(-32602), json!("example://nope"))
    );
    up.finish().await;
}

// ---- tools, prompts, resources, completion ---------------------------------------------------

#[tokio::test]
async fn the_demo_tools_answer_as_documented() {
    let mut up = StdioServer::demo();
    assert_eq!(text(&up.tool("echo", json!({"text": "hi"})).await), "hi");
    let sum = up.tool("add", json!({"a": 2, "b": 3})).await;
    assert_eq!(sum["structuredContent"], json!({"sum": 5}));
    assert_eq!(text(&sum), r#"{"sum":5}"#);
    let bad = up.tool("add", json!({"a": "two", "b": 3})).await;
    assert_eq!(bad["isError"], true);
    let error = up
        .error(
            "tools/call",
            with_meta(json!({"name": "fail", "arguments":
            {"code": -32000, "message": "boom", "data": {"why": 1}}})),
        )
        .await;
    assert_eq!(
        error,
        json!({"code": -32000, "message": "boom", "data": {"why": 1}})
    );
    up.finish().await;
}

#[tokio::test]
async fn prompts_resources_and_completion_answer_as_documented() {
    let mut up = StdioServer::demo();
    let prompt = up
        .result(
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        )
        .await;
    assert_eq!(prompt["messages"][0]["role"], "user");
    assert_eq!(
        prompt["messages"][0]["content"]["text"],
        "Say hello to Ada."
    );
    let error = up
        .error("prompts/get", with_meta(json!({"name": "greet"})))
        .await;
    assert_eq!(error["code"], -32602);

    let readme = up
        .result("resources/read", json!({"uri": "example://readme"}))
        .await;
    assert_eq!(readme["contents"][0]["mimeType"], "text/plain");
    assert!(
        readme["contents"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("mcp-example-server"))
    );
    let note = up
        .result("resources/read", json!({"uri": "example://notes/42"}))
        .await;
    assert_eq!(note["contents"][0]["text"], "Note 42.");

    let completion = up
        .result(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"},
                                              "argument": {"name": "name", "value": "A"}}),
        )
        .await;
    assert_eq!(
        completion["completion"]["values"],
        json!(["Ada", "Alan", "Alice"])
    );
    up.finish().await;
}

// ---- progress, logging, MRTR ----------------------------------------------------------------

#[tokio::test]
async fn progress_and_log_notifications_come_before_the_response_and_only_when_asked() {
    let mut up = StdioServer::demo();
    let mut asked = meta(json!({}));
    asked["progressToken"] = json!("tok");
    asked["io.modelcontextprotocol/logLevel"] = json!("warning");
    let id = up
        .call(
            "tools/call",
            json!({"name": "slow", "arguments": {"steps": 3, "delay_ms": 1}, "_meta": asked}),
        )
        .await;
    let (seen, response) = up.response_to(&id).await;
    assert_eq!(text(&response["result"]), "done after 3 steps");
    let progress: Vec<Value> = seen
        .iter()
        .map(|n| n["params"]["progress"].clone())
        .collect();
    assert_eq!(progress, vec![json!(1), json!(2), json!(3)]);
    assert!(seen.iter().all(|n| n["params"]["progressToken"] == "tok"));

    for (level, expected) in [("info", 0), ("error", 1)] {
        let id = up
            .call(
                "tools/call",
                json!({"name": "log", "arguments": {"level": level, "message": "m"},
                                       "_meta": asked}),
            )
            .await;
        let (seen, _) = up.response_to(&id).await;
        assert_eq!(
            seen.len(),
            expected,
            "log at {level} with threshold warning"
        );
        if let Some(message) = seen.first() {
            assert_eq!(message["method"], "notifications/message");
            assert_eq!(message["params"]["level"], "error");
        }
    }
    // Without a token or a level, nothing but the response.
    let id = up
        .call(
            "tools/call",
            with_meta(json!({"name": "slow", "arguments": {"steps": 2, "delay_ms": 1}})),
        )
        .await;
    let (seen, _) = up.response_to(&id).await;
    assert!(seen.is_empty());
    up.finish().await;
}

#[tokio::test]
async fn ask_name_elicits_a_form_and_the_retry_with_the_state_gets_the_greeting() {
    let mut up = StdioServer::demo();
    let caps = json!({"elicitation": {}});
    let first = up
        .result(
            "tools/call",
            json!({"name": "ask_name", "arguments": {}, "_meta": meta(caps.clone())}),
        )
        .await;
    assert_eq!(first["resultType"], "input_required");
    let request = &first["inputRequests"]["name"];
    assert_eq!(request["method"], "elicitation/create");
    schema::assert_valid_2026("ElicitRequest", request);
    let state = first["requestState"].clone();

    let retry = json!({"name": "ask_name", "arguments": {}, "requestState": state,
                       "inputResponses": {"name": {"action": "accept", "content": {"name": "Zoe"}}},
                       "_meta": meta(caps.clone())});
    let done = up.result("tools/call", retry).await;
    assert_eq!(text(&done), "Hello, Zoe!");

    let forged = json!({"name": "ask_name", "requestState": "forged",
                        "inputResponses": {"name": {"action": "accept", "content": {"name": "Eve"}}},
                        "_meta": meta(caps)});
    assert_eq!(up.error("tools/call", forged).await["code"], -32602);
    up.finish().await;
}
