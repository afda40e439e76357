//! Serving one request: method routing and capability gating, `_meta` validation (2026-07-28
//! basic/index), parameter checks, and calling the handler (a panic becomes `-32603`). Result
//! shapes live in `results.rs`; nothing is written here except through the request's context.

use crate::protocol::revisions::methods;
use crate::protocol::wire::id::Id;
use crate::protocol::wire::jsonrpc;
use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::context::{ContextParts, ReceivedMeta, RequestContext};
use super::listen::{self, Filter, Supported};
use super::method::Method;
use super::mrtr::parse_retry;
use super::output::Outbox;
use super::results::finish;
use super::{BoxedHandler, Outcome, PROTOCOL_VERSION, RpcError, Server};

// The bridge's own requests are written with the same type: one reading for both sides.
use crate::protocol::revisions::modern::{META_PROGRESS_TOKEN, MetaError, RequestMeta};

/// The connection a request came in on.
#[derive(Clone)]
pub(crate) struct ConnectionLink {
    pub(crate) out: Outbox,
    pub(crate) close: CancellationToken,
}

/// Serves one request. Returns the response message, or `None` when none is due (a listen the
/// server ended with `notifications/cancelled`).
pub(crate) async fn handle(
    server: &Server,
    link: &ConnectionLink,
    id: &Id,
    method: &str,
    params: Option<Value>,
    cancel: CancellationToken,
) -> Option<Value> {
    match serve_request(server, link, id, method, params, cancel).await {
        Ok(Some(result)) => Some(jsonrpc::response(id, result)),
        Ok(None) => None,
        Err(error) => Some(jsonrpc::error_response(Some(id), error)),
    }
}

async fn serve_request(
    server: &Server,
    link: &ConnectionLink,
    id: &Id,
    name: &str,
    params: Option<Value>,
    cancel: CancellationToken,
) -> Result<Option<Value>, RpcError> {
    let Some(method) = Method::parse(name) else {
        return Err(match name {
            // A legacy client: name the versions this modern-only server speaks (2026-07-28
            // basic/versioning).
            methods::INITIALIZE => {
                let requested = params
                    .as_ref()
                    .and_then(|p| p.get("protocolVersion"))
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                RpcError::unsupported_version(&[PROTOCOL_VERSION], requested)
            }
            _ => RpcError::method_not_found(name),
        });
    };
    if !server.offers(method) {
        return Err(RpcError::method_not_found(name));
    }
    let mut params = match params {
        Some(Value::Object(params)) => params,
        Some(_) => return Err(RpcError::invalid_params("params must be an object")),
        None => return Err(RpcError::invalid_params("params._meta is required")),
    };
    let meta = parse_meta(params.remove("_meta"))?;
    let (input_responses, request_state) = if method.allows_input_required() {
        parse_retry(&mut params)?
    } else {
        (None, None)
    };
    let ctx = RequestContext::new(ContextParts {
        request_id: id.to_value(),
        meta,
        input_responses,
        request_state,
        cancel,
        out: link.out.clone(),
        server: server.clone(),
        close_connection: link.close.clone(),
    });
    let result = run(server, method, params, &ctx).await;
    ctx.mark_finished();
    result
}

/// Reads the required per-request `_meta` keys (2026-07-28 basic/index, `RequestMetaObject`)
/// and the progress token.
pub(crate) fn parse_meta(meta: Option<Value>) -> Result<ReceivedMeta, RpcError> {
    let (meta, mut rest) = RequestMeta::read(meta, PROTOCOL_VERSION).map_err(|e| match e {
        MetaError::UnsupportedVersion(requested) => {
            RpcError::unsupported_version(&[PROTOCOL_VERSION], &requested)
        }
        other => RpcError::invalid_params(other.to_string()),
    })?;
    let progress_token = match rest.remove(META_PROGRESS_TOKEN) {
        None => None,
        Some(token) if Id::from_value(&token).is_some() => Some(token),
        Some(_) => return Err(invalid_progress_token()),
    };
    Ok(ReceivedMeta {
        meta,
        progress_token,
    })
}

/// The error of a request whose `_meta.progressToken` is no usable id (a string, or an
/// integer in 64 bits: docs/errors.md, "Ids"), on both paths of the HTTP server.
pub(crate) fn invalid_progress_token() -> RpcError {
    RpcError::invalid_params("params._meta.progressToken must be a string or an integer")
}

async fn run(
    server: &Server,
    method: Method,
    params: Map<String, Value>,
    ctx: &RequestContext,
) -> Result<Option<Value>, RpcError> {
    let inner = &server.inner;
    let body = match method {
        Method::Discover => {
            if let Some(hook) = &inner.discover_hook {
                hook(ctx.clone()).await?;
            }
            return Ok(Some(server.discover_result()));
        }
        Method::ToolsList => {
            let tools = inner.tools.iter().map(|(def, _)| def.to_json());
            return server.list(&params, "tools", tools.collect()).map(Some);
        }
        Method::PromptsList => {
            let prompts = inner.prompts.iter().map(|(def, _)| def.to_json());
            return server.list(&params, "prompts", prompts.collect()).map(Some);
        }
        Method::ResourcesList => {
            let mut resources: Vec<Value> = inner
                .resources
                .iter()
                .map(|(def, _)| def.to_json())
                .collect();
            if let Some(lister) = &inner.resource_lister {
                resources.extend(lister().iter().map(super::ResourceDef::to_json));
            }
            return server.list(&params, "resources", resources).map(Some);
        }
        Method::ResourceTemplatesList => {
            let templates = inner.templates.iter().map(|(def, _)| def.to_json());
            return server
                .list(&params, "resourceTemplates", templates.collect())
                .map(Some);
        }
        Method::Listen => {
            let filter = Filter::parse(params.get("notifications"))?;
            if let Some(hook) = &inner.listen_hook {
                let asked = params.get("notifications").cloned().unwrap_or_default();
                hook(ctx.clone(), asked).await?;
            }
            let honoured = filter.honoured(server.supported());
            let ends = inner.ends.subscribe();
            let end = listen::run(ctx, honoured, &inner.listens, ends).await;
            return Ok(end.map(|body| server.complete(body, false)));
        }
        Method::ToolsCall => {
            let name = required_string(&params, "name")?;
            let arguments = optional_object(&params, "arguments")?;
            let handler = find(&inner.tools, |def| def.name() == name).ok_or_else(|| {
                RpcError::invalid_params(format!("Unknown tool: {name}"))
                    .with_data(json!({ "name": name }))
            })?;
            call(handler, Value::Object(arguments), ctx).await?
        }
        Method::PromptsGet => {
            let name = required_string(&params, "name")?;
            let arguments = optional_object(&params, "arguments")?;
            if !arguments.values().all(Value::is_string) {
                return Err(RpcError::invalid_params(
                    "prompt arguments must all be strings",
                ));
            }
            let handler = find(&inner.prompts, |def| def.name() == name).ok_or_else(|| {
                RpcError::invalid_params(format!("Unknown prompt: {name}"))
                    .with_data(json!({ "name": name }))
            })?;
            call(handler, Value::Object(arguments), ctx).await?
        }
        Method::ResourcesRead => {
            let uri = required_string(&params, "uri")?;
            let (handler, input) = server.resource_for(uri).ok_or_else(|| {
                // 2026-07-28 uses -32602 for an unknown resource (-32002 is retired).
                RpcError::invalid_params("Resource not found").with_data(json!({ "uri": uri }))
            })?;
            call(handler, input, ctx).await?
        }
        Method::Complete => {
            check_completion_params(server, &params)?;
            let Some(handler) = &inner.completion else {
                return Err(RpcError::method_not_found(methods::COMPLETION_COMPLETE));
            };
            call(handler, Value::Object(params), ctx).await?
        }
    };
    finish(server, method, body, ctx).map(Some)
}

fn find<D>(entries: &[(D, BoxedHandler)], wanted: impl Fn(&D) -> bool) -> Option<&BoxedHandler> {
    entries
        .iter()
        .find(|(def, _)| wanted(def))
        .map(|(_, handler)| handler)
}

fn required_string<'a>(params: &'a Map<String, Value>, key: &str) -> Result<&'a str, RpcError> {
    params
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params(format!("params.{key} must be a string")))
}

fn optional_object(params: &Map<String, Value>, key: &str) -> Result<Map<String, Value>, RpcError> {
    match params.get(key) {
        None => Ok(Map::new()),
        Some(Value::Object(object)) => Ok(object.clone()),
        Some(_) => Err(RpcError::invalid_params(format!(
            "params.{key} must be an object"
        ))),
    }
}

/// Calls a handler; a panic in it becomes `-32603` instead of a lost response.
async fn call(
    handler: &BoxedHandler,
    input: Value,
    ctx: &RequestContext,
) -> Result<Outcome, RpcError> {
    let panicked = || RpcError::internal("Internal error: the handler panicked");
    let future = std::panic::catch_unwind(AssertUnwindSafe(|| handler(input, ctx.clone())))
        .map_err(|_| panicked())?;
    AssertUnwindSafe(future)
        .catch_unwind()
        .await
        .map_err(|_| panicked())?
}

/// Checks `ref` and `argument` of `completion/complete` (`CompleteRequestParams`).
fn check_completion_params(server: &Server, params: &Map<String, Value>) -> Result<(), RpcError> {
    let reference = params.get("ref").and_then(Value::as_object);
    let kind = reference
        .and_then(|r| r.get("type"))
        .and_then(Value::as_str);
    let field = |key: &str| reference.and_then(|r| r.get(key)).and_then(Value::as_str);
    match (kind, field("name"), field("uri")) {
        (Some("ref/prompt"), Some(name), _) => {
            if find(&server.inner.prompts, |def| def.name() == name).is_none() {
                return Err(RpcError::invalid_params(format!("Unknown prompt: {name}"))
                    .with_data(json!({ "name": name })));
            }
        }
        (Some("ref/resource"), _, Some(_)) => {}
        _ => {
            return Err(RpcError::invalid_params(
                "params.ref must be a PromptReference or a ResourceTemplateReference",
            ));
        }
    }
    let argument = params.get("argument").and_then(Value::as_object);
    let is_string = |key: &str| {
        argument
            .and_then(|a| a.get(key))
            .is_some_and(Value::is_string)
    };
    if !(is_string("name") && is_string("value")) {
        return Err(RpcError::invalid_params(
            "params.argument must have string name and value",
        ));
    }
    if let Some(context) = params.get("context") {
        let arguments_ok = context.as_object().is_some_and(|c| {
            c.get("arguments").is_none_or(|a| {
                a.as_object()
                    .is_some_and(|a| a.values().all(Value::is_string))
            })
        });
        if !arguments_ok {
            return Err(RpcError::invalid_params(
                "params.context.arguments must be an object of strings",
            ));
        }
    }
    Ok(())
}

impl Server {
    pub(crate) fn offers(&self, method: Method) -> bool {
        let inner = &self.inner;
        match method {
            Method::Discover => true,
            Method::Listen => inner.listen,
            Method::ToolsList | Method::ToolsCall => !inner.tools.is_empty(),
            Method::PromptsList | Method::PromptsGet => !inner.prompts.is_empty(),
            Method::ResourcesList | Method::ResourceTemplatesList | Method::ResourcesRead => {
                self.supported().resources
            }
            Method::Complete => inner.completion.is_some(),
        }
    }

    pub(crate) fn supported(&self) -> Supported {
        Supported {
            tools: !self.inner.tools.is_empty(),
            prompts: !self.inner.prompts.is_empty(),
            resources: !self.inner.resources.is_empty()
                || !self.inner.templates.is_empty()
                || self.inner.resource_lister.is_some(),
        }
    }

    /// The handler and its input for `resources/read` of `uri`: an exact resource first, then
    /// the first matching template.
    fn resource_for(&self, uri: &str) -> Option<(&BoxedHandler, Value)> {
        if let Some(handler) = find(&self.inner.resources, |def| def.uri() == uri) {
            return Some((handler, json!({ "uri": uri })));
        }
        self.inner.templates.iter().find_map(|(def, handler)| {
            let variables = def.matches(uri)?;
            Some((handler, json!({ "uri": uri, "variables": variables })))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::revisions::modern::{
        META_CLIENT_CAPABILITIES as CAPABILITIES_KEY, META_LOG_LEVEL as LOG_LEVEL_KEY,
        META_PROTOCOL_VERSION as VERSION_KEY,
    };

    #[test]
    fn meta_without_protocol_version_or_capabilities_is_invalid_params() {
        let missing_version = json!({ CAPABILITIES_KEY: {} });
        let missing_caps = json!({ VERSION_KEY: PROTOCOL_VERSION });
        for meta in [
            None,
            Some(missing_version),
            Some(missing_caps),
            Some(json!(3)),
        ] {
            assert_eq!(
                parse_meta(meta).map(|_| ()).map_err(|e| e.code.0),
                Err(-32602)
            );
        }
    }

    #[test]
    fn an_unsupported_protocol_version_names_the_supported_ones() {
        let meta = json!({ VERSION_KEY: "2025-11-25", CAPABILITIES_KEY: {} });
        let error = parse_meta(Some(meta)).map(|_| ()).err();
        assert_eq!(
            error.map(|e| (e.code.0, e.data)),
            Some((
                -32022,
                Some(json!({"supported": ["2026-07-28"], "requested": "2025-11-25"}))
            ))
        );
    }

    #[test]
    fn a_bad_log_level_or_progress_token_is_invalid_params() {
        for (key, value) in [
            (LOG_LEVEL_KEY, json!("loud")),
            ("progressToken", json!(1.5)),
        ] {
            let meta = json!({ VERSION_KEY: PROTOCOL_VERSION, CAPABILITIES_KEY: {}, key: value });
            assert_eq!(
                parse_meta(Some(meta)).map(|_| ()).map_err(|e| e.code.0),
                Err(-32602)
            );
        }
    }
}
