//! The fixture's tool plumbing: a tool function's two ways to fail, the readers of its
//! `Value` arguments (each tool checks its own, so a bad argument is a tool error the model
//! sees), and one MRTR round with a `requestState` this server issued.

use std::future::Future;

use futures_util::future::BoxFuture;
use mcp_bridge::server::{Outcome, RequestContext, RpcError, ServerBuilder, ToolDef};
use serde_json::{Map, Value, json};

/// Why a tool did not produce its result.
pub(crate) enum Failure {
    /// Bad arguments: reported as a tool execution error (`isError: true`) the model can see.
    Arguments(String),
    /// A JSON-RPC error response.
    Rpc(RpcError),
}

pub(crate) type ToolResult = Result<Outcome, Failure>;
pub(crate) type Handler = Box<
    dyn Fn(Value, RequestContext) -> BoxFuture<'static, Result<Outcome, RpcError>> + Send + Sync,
>;

/// Adapts a tool function to a server handler.
pub(crate) fn tool<F, Fut>(f: F) -> Handler
where
    F: Fn(Value, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ToolResult> + Send + 'static,
{
    Box::new(move |arguments, ctx| {
        let result = f(arguments, ctx);
        Box::pin(async move {
            match result.await {
                Ok(outcome) => Ok(outcome),
                Err(Failure::Arguments(message)) => Ok(Outcome::tool_error(message)),
                Err(Failure::Rpc(error)) => Err(error),
            }
        })
    })
}

pub(crate) fn add_tool(builder: ServerBuilder, def: ToolDef, handler: Handler) -> ServerBuilder {
    builder.tool(def, handler)
}

pub(crate) fn field<'a>(arguments: &'a Value, key: &str) -> Result<&'a Value, Failure> {
    arguments
        .get(key)
        .ok_or_else(|| Failure::Arguments(format!("missing argument: {key}")))
}

pub(crate) fn string(arguments: &Value, key: &str) -> Result<String, Failure> {
    field(arguments, key)?
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| Failure::Arguments(format!("argument {key} must be a string")))
}

pub(crate) fn integer(
    arguments: &Value,
    key: &str,
    range: std::ops::RangeInclusive<i64>,
) -> Result<i64, Failure> {
    field(arguments, key)?
        .as_i64()
        .filter(|n| range.contains(n))
        .ok_or_else(|| {
            Failure::Arguments(format!(
                "argument {key} must be an integer from {} to {}",
                range.start(),
                range.end()
            ))
        })
}

pub(crate) fn number(arguments: &Value, key: &str) -> Result<Value, Failure> {
    let value = field(arguments, key)?;
    if value.is_number() {
        Ok(value.clone())
    } else {
        Err(Failure::Arguments(format!(
            "argument {key} must be a number"
        )))
    }
}

pub(crate) fn object_schema(properties: Value, required: &[&str]) -> Value {
    json!({ "type": "object", "properties": properties, "required": required })
}

/// One MRTR round: either ask (again) or hand over the client's answer for `key`.
pub(crate) enum Round {
    Ask(Outcome),
    Answer(Value),
}

/// Asks for `request` under `key` unless this is a retry that carries its answer. The retry
/// must echo `state`, which this server issued; anything else is refused.
pub(crate) fn round(
    ctx: &RequestContext,
    key: &str,
    state: &str,
    request: Option<Value>,
) -> Result<Round, Failure> {
    let ask = || {
        let mut input_requests = Map::new();
        if let Some(request) = &request {
            input_requests.insert(key.to_owned(), request.clone());
        }
        Round::Ask(Outcome::InputRequired {
            input_requests,
            request_state: Some(state.to_owned()),
        })
    };
    if ctx.input_responses().is_none() && ctx.request_state().is_none() {
        return Ok(ask());
    }
    if ctx.request_state() != Some(state) {
        return Err(Failure::Rpc(RpcError::invalid_params(
            "requestState was not issued for this request",
        )));
    }
    if request.is_none() {
        return Ok(Round::Answer(Value::Null));
    }
    Ok(match ctx.input_response(key) {
        Some(answer) => Round::Answer(answer.clone()),
        // A retry without the answer gets the question again (MRTR: SHOULD, not an error).
        None => ask(),
    })
}
