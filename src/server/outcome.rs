//! What a handler answers: an [`Outcome`] (a result, `input_required`, or an error to the
//! tool's caller), the [`Reply`] of a request, and what converts into one ([`IntoReply`]).

use serde_json::{Map, Value, json};

use super::error::RpcError;

/// What a handler produced.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The result object without `resultType` (for example `{"content": [...]}`).
    Complete(Value),
    /// An `InputRequiredResult` (2026-07-28 basic/patterns/mrtr). At least one of the two must
    /// be given. Each input request is a bare `{method, params}` object; the server answers
    /// `-32021` instead if the request's client capabilities do not cover one of them.
    InputRequired {
        /// `inputRequests`, keyed by names the handler chooses (left out when empty).
        input_requests: Map<String, Value>,
        /// `requestState`, echoed byte-exact by the client on the retry.
        request_state: Option<String>,
    },
}

impl Outcome {
    /// A `CallToolResult` with one text content block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Complete(json!({ "content": [{ "type": "text", "text": text.into() }] }))
    }

    /// A `GetPromptResult` with one user message of text.
    ///
    /// ```
    /// # use mcp_bridge::server::Outcome;
    /// # use serde_json::json;
    /// assert_eq!(Outcome::user_text("Hi"), Outcome::Complete(json!({"messages": [
    ///     {"role": "user", "content": {"type": "text", "text": "Hi"}}]})));
    /// ```
    pub fn user_text(text: impl Into<String>) -> Self {
        Self::Complete(json!({
            "messages": [{ "role": "user", "content": { "type": "text", "text": text.into() } }],
        }))
    }

    /// A `ReadResourceResult` with the text contents of one resource.
    ///
    /// ```
    /// # use mcp_bridge::server::Outcome;
    /// # use serde_json::json;
    /// assert_eq!(Outcome::resource_text("a://b", "Hi"),
    ///     Outcome::Complete(json!({"contents": [{"uri": "a://b", "text": "Hi"}]})));
    /// ```
    pub fn resource_text(uri: &str, text: impl Into<String>) -> Self {
        Self::Complete(json!({ "contents": [{ "uri": uri, "text": text.into() }] }))
    }

    /// An `InputRequiredResult` with one input request under `key` and no `requestState`: the
    /// client answers it and retries, and the handler reads the answer with
    /// [`RequestContext::input_response`](super::RequestContext::input_response)`(key)`. `request` is a bare `{method, params}`
    /// object, such as [`elicit_form`] makes.
    ///
    /// ```
    /// # use mcp_bridge::server::{Outcome, elicit_form};
    /// let ask = Outcome::ask("name", elicit_form("Your name?", &["name"]));
    /// let Outcome::InputRequired { input_requests, request_state } = ask else { panic!() };
    /// assert_eq!(input_requests["name"]["method"], "elicitation/create");
    /// assert_eq!(request_state, None);
    /// ```
    pub fn ask(key: &str, request: Value) -> Self {
        let mut input_requests = Map::new();
        input_requests.insert(key.into(), request);
        Self::InputRequired {
            input_requests,
            request_state: None,
        }
    }

    /// A `CallToolResult` with one text block and `isError: true`: a tool execution error the
    /// model can see (as opposed to a JSON-RPC error).
    pub fn tool_error(text: impl Into<String>) -> Self {
        Self::Complete(json!({
            "content": [{ "type": "text", "text": text.into() }],
            "isError": true,
        }))
    }
}

/// An `elicitation/create` input request (form mode) for the required string `fields`;
/// the answer's `content` holds them (`answer["content"]["name"]`).
///
/// ```
/// # use mcp_bridge::server::elicit_form;
/// # use serde_json::json;
/// assert_eq!(elicit_form("Your name?", &["name"]), json!({
///     "method": "elicitation/create",
///     "params": {"message": "Your name?", "requestedSchema": {"type": "object",
///         "properties": {"name": {"type": "string"}}, "required": ["name"]}}}));
/// ```
pub fn elicit_form(message: &str, fields: &[&str]) -> Value {
    let properties: Map<String, Value> = fields
        .iter()
        .map(|field| ((*field).to_owned(), json!({ "type": "string" })))
        .collect();
    json!({
        "method": crate::protocol::revisions::methods::ELICITATION_CREATE,
        "params": {
            "message": message,
            "requestedSchema": { "type": "object", "properties": properties, "required": fields },
        },
    })
}

/// A handler's answer before the server knows which request it answers: an [`Outcome`], bare
/// text, which becomes the text result of the handler's kind (a tool: [`Outcome::text`]; a
/// prompt: [`Outcome::user_text`]; a resource or template: [`Outcome::resource_text`] of the
/// requested URI; completion: the one value `{"completion": {"values": [text]}}`), or an error.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Answered as it is.
    Outcome(Outcome),
    /// The text result of the handler's kind.
    Text(String),
    /// Answered as a JSON-RPC error.
    Error(RpcError),
}

/// What a handler may produce: [`Outcome`], [`Reply`], `String`, `&'static str`, or
/// `Result<Outcome, RpcError>` (an `Err` is answered as a JSON-RPC error). The one `Result`
/// type means a handler that only returns `Err(...)` needs no type annotation.
///
/// ```
/// use mcp_bridge::server::{IntoReply, Outcome, Reply, RpcError};
/// assert_eq!("Hi".into_reply(), Reply::Text("Hi".into()));
/// assert_eq!(Outcome::text("Hi").into_reply(), Reply::Outcome(Outcome::text("Hi")));
/// let no = RpcError::invalid_params("no");
/// assert_eq!(Err(no.clone()).into_reply(), Reply::Error(no));
/// ```
pub trait IntoReply {
    /// The answer.
    fn into_reply(self) -> Reply;
}

impl IntoReply for Reply {
    fn into_reply(self) -> Reply {
        self
    }
}

impl IntoReply for Outcome {
    fn into_reply(self) -> Reply {
        Reply::Outcome(self)
    }
}

impl IntoReply for String {
    fn into_reply(self) -> Reply {
        Reply::Text(self)
    }
}

impl IntoReply for &'static str {
    fn into_reply(self) -> Reply {
        Reply::Text(self.to_owned())
    }
}

impl IntoReply for Result<Outcome, RpcError> {
    fn into_reply(self) -> Reply {
        match self {
            Ok(outcome) => Reply::Outcome(outcome),
            Err(error) => Reply::Error(error),
        }
    }
}
