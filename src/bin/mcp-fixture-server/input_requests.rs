//! Test tools of multi round-trip requests (2026-07-28 basic/patterns/mrtr): sampling, roots
//! and URL elicitation through the server's checks, and `script`, which writes its input
//! requests itself, unchecked.

use mcp_bridge::server::{Outcome, RequestContext, RpcError};
use serde_json::{Value, json};

use crate::tool::{Failure, Round, ToolResult, field, round, string};

pub(crate) async fn sample(a: Value, ctx: RequestContext) -> ToolResult {
    let prompt = string(&a, "prompt")?;
    let request = json!({
        "method": "sampling/createMessage",
        "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
            "maxTokens": 100
        }
    });
    let answer = match round(&ctx, "sample", "sample/1", Some(request))? {
        Round::Ask(outcome) => return Ok(outcome),
        Round::Answer(answer) => answer,
    };
    let content = &answer["content"];
    let text = content["text"]
        .as_str()
        .or_else(|| content[0]["text"].as_str())
        .unwrap_or_default();
    Ok(Outcome::text(format!("model said: {text}")))
}

pub(crate) async fn roots(_: Value, ctx: RequestContext) -> ToolResult {
    let request = json!({ "method": "roots/list" });
    let answer = match round(&ctx, "roots", "roots/1", Some(request))? {
        Round::Ask(outcome) => return Ok(outcome),
        Round::Answer(answer) => answer,
    };
    let uris: Vec<&str> = answer["roots"]
        .as_array()
        .map(|roots| roots.iter().filter_map(|r| r["uri"].as_str()).collect())
        .unwrap_or_default();
    Ok(Outcome::text(uris.join("\n")))
}

pub(crate) async fn ask_url(a: Value, ctx: RequestContext) -> ToolResult {
    let url = string(&a, "url")?;
    let request = json!({
        "method": "elicitation/create",
        "params": {"mode": "url", "message": "Please open this page.", "url": url}
    });
    let answer = match round(&ctx, "open", "ask_url/1", Some(request))? {
        Round::Ask(outcome) => return Ok(outcome),
        Round::Answer(answer) => answer,
    };
    let action = answer["action"].as_str().unwrap_or("none");
    Ok(Outcome::text(format!("action: {action}")))
}

/// Misbehaves on purpose: it writes its `input_required` answers itself, so even input
/// requests the client did not declare go out (the server's own check would refuse them).
pub(crate) async fn script(a: Value, ctx: RequestContext) -> ToolResult {
    let rounds = field(&a, "rounds")?
        .as_array()
        .cloned()
        .ok_or_else(|| Failure::Arguments("rounds must be an array".into()))?;
    let index = match ctx.request_state() {
        None => 0,
        Some(state) => state
            .strip_prefix("script/")
            .and_then(|i| i.parse::<usize>().ok())
            .ok_or_else(|| {
                Failure::Rpc(RpcError::invalid_params(
                    "requestState was not issued by script",
                ))
            })?,
    };
    if index > 0 && a.get("refuse_retry").and_then(Value::as_bool) == Some(true) {
        return Err(Failure::Rpc(RpcError::invalid_params(
            "requestState expired",
        )));
    }
    let Some(requests) = rounds.get(index) else {
        let responses = ctx.input_responses().cloned().unwrap_or_default();
        return Ok(Outcome::text(Value::Object(responses).to_string()));
    };
    let mut result =
        json!({"resultType": "input_required", "requestState": format!("script/{}", index + 1)});
    if requests.as_object().is_some_and(|m| !m.is_empty()) {
        result["inputRequests"] = requests.clone();
    }
    ctx.progress((index + 1) as f64, None, None).await;
    let line = json!({"jsonrpc": "2.0", "id": ctx.request_id(), "result": result}).to_string();
    ctx.write_raw_line(line).await;
    // The answer is out; this request never answers again (the retry is a new request).
    ctx.cancelled().await;
    Ok(Outcome::text("cancelled"))
}
