//! Shaping results exactly as the 2026-07-28 schema wants them: `resultType`, the cache fields of
//! `CacheableResult`, `_meta.serverInfo`, the discover result, list pages with cursors, and the
//! checks on what handlers return. Never runs a handler.

use serde_json::{Map, Value, json};

use super::context::RequestContext;
use super::method::Method;
use super::mrtr::check_input_requests;
use super::{Outcome, PROTOCOL_VERSION, RpcError, SERVER_INFO_KEY, Server};

/// At most this many completion values per result (`CompleteResult.completion.values.maxItems`).
const MAX_COMPLETION_VALUES: usize = 100;
const CURSOR_PREFIX: &str = "offset/";

/// Turns a handler's outcome into the result object for `method`.
pub(crate) fn finish(
    server: &Server,
    method: Method,
    outcome: Outcome,
    ctx: &RequestContext,
) -> Result<Value, RpcError> {
    match outcome {
        Outcome::Complete(Value::Object(mut body)) => {
            match method {
                // `content` is required even when a tool only returns structuredContent.
                Method::ToolsCall => {
                    let content = body.entry("content").or_insert_with(|| json!([]));
                    ensure(
                        content.is_array(),
                        "CallToolResult.content must be an array",
                    )?;
                }
                Method::PromptsGet => ensure(
                    body.get("messages").is_some_and(Value::is_array),
                    "GetPromptResult.messages must be an array",
                )?,
                Method::ResourcesRead => ensure(
                    body.get("contents").is_some_and(Value::is_array),
                    "ReadResourceResult.contents must be an array",
                )?,
                Method::Complete => limit_completion(&mut body)?,
                _ => {}
            }
            Ok(server.complete(body, method == Method::ResourcesRead))
        }
        Outcome::Complete(_) => Err(RpcError::internal("A result must be a JSON object")),
        Outcome::InputRequired {
            input_requests,
            request_state,
        } => {
            ensure(
                method.allows_input_required(),
                "input_required is only allowed for tools/call, prompts/get and resources/read",
            )?;
            ensure(
                !input_requests.is_empty() || request_state.is_some(),
                "input_required needs inputRequests or requestState",
            )?;
            check_input_requests(&input_requests, ctx.client_capabilities())?;
            let mut result = Map::new();
            result.insert("resultType".into(), "input_required".into());
            if !input_requests.is_empty() {
                result.insert("inputRequests".into(), Value::Object(input_requests));
            }
            if let Some(state) = request_state {
                result.insert("requestState".into(), state.into());
            }
            if let Some(meta) = server.result_meta(None) {
                result.insert("_meta".into(), meta);
            }
            Ok(Value::Object(result))
        }
    }
}

fn ensure(condition: bool, message: &str) -> Result<(), RpcError> {
    if condition {
        Ok(())
    } else {
        Err(RpcError::internal(message))
    }
}

/// Keeps `completion.values` within the schema's 100 items, saying `hasMore` when cut.
fn limit_completion(body: &mut Map<String, Value>) -> Result<(), RpcError> {
    let invalid = || RpcError::internal("CompleteResult.completion.values must be strings");
    let completion = body
        .get_mut("completion")
        .and_then(Value::as_object_mut)
        .ok_or_else(invalid)?;
    let count = match completion.get_mut("values") {
        Some(Value::Array(values)) if values.iter().all(Value::is_string) => {
            let count = values.len();
            values.truncate(MAX_COMPLETION_VALUES);
            count
        }
        _ => return Err(invalid()),
    };
    if count > MAX_COMPLETION_VALUES {
        completion.insert("hasMore".into(), true.into());
        completion.entry("total").or_insert_with(|| count.into());
    }
    Ok(())
}

impl Server {
    /// `ServerCapabilities` from what was registered.
    pub(crate) fn capabilities(&self) -> Value {
        let supported = self.supported();
        let listen = self.inner.listen;
        let mut capabilities = Map::new();
        if supported.tools {
            let tools = if listen {
                json!({ "listChanged": true })
            } else {
                json!({})
            };
            capabilities.insert("tools".into(), tools);
        }
        if supported.prompts {
            let prompts = if listen {
                json!({ "listChanged": true })
            } else {
                json!({})
            };
            capabilities.insert("prompts".into(), prompts);
        }
        if supported.resources {
            let resources = if listen {
                json!({ "subscribe": true, "listChanged": true })
            } else {
                json!({})
            };
            capabilities.insert("resources".into(), resources);
        }
        if self.inner.completion.is_some() {
            capabilities.insert("completions".into(), json!({}));
        }
        capabilities.insert("logging".into(), json!({}));
        Value::Object(capabilities)
    }

    pub(crate) fn discover_result(&self) -> Value {
        let mut body = Map::new();
        body.insert("supportedVersions".into(), json!([PROTOCOL_VERSION]));
        body.insert("capabilities".into(), self.capabilities());
        if let Some(instructions) = &self.inner.instructions {
            body.insert("instructions".into(), instructions.clone().into());
        }
        self.complete(body, true)
    }

    /// A complete result: `resultType` first, the body, cache fields if `cacheable` and not
    /// already set, then `_meta` with `serverInfo`.
    pub(crate) fn complete(&self, body: Map<String, Value>, cacheable: bool) -> Value {
        let mut result = Map::new();
        result.insert("resultType".into(), "complete".into());
        let mut meta = None;
        for (key, value) in body {
            match key.as_str() {
                "resultType" => {}
                "_meta" => meta = Some(value),
                _ => {
                    result.insert(key, value);
                }
            }
        }
        if cacheable {
            result
                .entry("ttlMs")
                .or_insert_with(|| self.inner.ttl_ms.into());
            result
                .entry("cacheScope")
                .or_insert_with(|| self.inner.cache_scope.as_str().into());
        }
        if let Some(meta) = self.result_meta(meta) {
            result.insert("_meta".into(), meta);
        }
        Value::Object(result)
    }

    /// The handler's `_meta` (if any) with `serverInfo` added unless that is turned off.
    pub(crate) fn result_meta(&self, meta: Option<Value>) -> Option<Value> {
        if !self.inner.send_server_info {
            return meta;
        }
        let mut meta = match meta {
            Some(Value::Object(meta)) => meta,
            _ => Map::new(),
        };
        meta.insert(SERVER_INFO_KEY.into(), self.inner.info.clone());
        Some(Value::Object(meta))
    }

    /// One page of a list result.
    pub(crate) fn list(
        &self,
        params: &Map<String, Value>,
        key: &str,
        items: Vec<Value>,
    ) -> Result<Value, RpcError> {
        let offset = match params.get("cursor") {
            None => 0,
            Some(cursor) => cursor
                .as_str()
                .and_then(|c| c.strip_prefix(CURSOR_PREFIX))
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|&n| n > 0 && n < items.len() && self.inner.page_size.is_some())
                .ok_or_else(|| {
                    RpcError::invalid_params("Invalid cursor")
                        .with_data(json!({ "cursor": cursor }))
                })?,
        };
        let size = self.inner.page_size.unwrap_or(items.len());
        let end = offset.saturating_add(size).min(items.len());
        let mut body = Map::new();
        let total = items.len();
        body.insert(
            key.into(),
            Value::Array(items.into_iter().skip(offset).take(end - offset).collect()),
        );
        if end < total {
            body.insert("nextCursor".into(), format!("{CURSOR_PREFIX}{end}").into());
        }
        Ok(self.complete(body, true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn completion_values_are_cut_to_one_hundred_with_has_more() {
        let values: Vec<String> = (0..150).map(|n| n.to_string()).collect();
        let mut body = object(json!({"completion": {"values": values}}));
        assert!(limit_completion(&mut body).is_ok());
        let completion = &body["completion"];
        assert_eq!(completion["values"].as_array().map(Vec::len), Some(100));
        assert_eq!(completion["hasMore"], true);
        assert_eq!(completion["total"], 150);
    }
}
