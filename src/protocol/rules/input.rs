//! Input requests of the upstream (2026-07-28 basic/patterns/mrtr): the checks before the
//! editor sees a round, the 2025-11-25 request the editor gets for each input request, the
//! checks of the editor's answers, and the params of the retry. Pure: no ids are minted and
//! nothing is sent here.

use crate::protocol::revisions::errors::{Cause, ErrorObject};
use crate::protocol::revisions::methods;
use crate::protocol::wire::raw::{Object, RawJson};
use serde_json::{Map, Value, json};

/// Input requests in one round at most.
pub const MAX_INPUT_REQUESTS_PER_ROUND: usize = 16;
/// Rounds of questions to the editor per request at most; an upstream that asks once more
/// fails the request with `too_many_rounds`.
pub const MAX_ROUNDS: usize = 10;
/// The one choice of the form that stands in for a form without properties.
pub const CONTINUE_CHOICE: &str = "Continue";

/// A failed check: the cause and, for a check of one input request, its key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputFailure {
    /// The cause of the error the editor gets.
    pub cause: Cause,
    /// `data.detail`: the key of the input request, or another short fact.
    pub detail: Option<String>,
}

impl InputFailure {
    fn new(cause: Cause, detail: impl Into<String>) -> Self {
        InputFailure {
            cause,
            detail: Some(detail.into()),
        }
    }

    /// The JSON-RPC error object of the failure.
    pub fn error(&self) -> ErrorObject {
        self.cause.error(self.detail.clone().map(Value::String))
    }
}

/// An `InputRequiredResult`: the input requests by key (in the upstream's order) and the
/// opaque `requestState`.
#[derive(Clone, Debug, PartialEq)]
pub struct InputRequired {
    pub input_requests: Vec<(String, Value)>,
    pub request_state: Option<String>,
}

/// Reads an `InputRequiredResult` (at least one of `inputRequests`, `requestState`; at most
/// [`MAX_INPUT_REQUESTS_PER_ROUND`] input requests).
///
/// Errors: `invalid_input_request` for a malformed result, `too_many_input_requests` past
/// the limit (the limit in `data.detail`).
pub fn read_input_required(result: &Value) -> Result<InputRequired, InputFailure> {
    let input_requests = match result.get("inputRequests") {
        None => Vec::new(),
        Some(Value::Object(m)) => m.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        Some(_) => {
            return Err(InputFailure::new(
                Cause::InvalidInputRequest,
                "inputRequests is not an object",
            ));
        }
    };
    let request_state = match result.get("requestState") {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            return Err(InputFailure::new(
                Cause::InvalidInputRequest,
                "requestState is not a string",
            ));
        }
    };
    if input_requests.is_empty() && request_state.is_none() {
        return Err(InputFailure::new(
            Cause::InvalidInputRequest,
            "neither inputRequests nor requestState",
        ));
    }
    if input_requests.len() > MAX_INPUT_REQUESTS_PER_ROUND {
        return Err(InputFailure::new(
            Cause::TooManyInputRequests,
            format!(
                "{} input requests; the limit is {MAX_INPUT_REQUESTS_PER_ROUND}",
                input_requests.len()
            ),
        ));
    }
    Ok(InputRequired {
        input_requests,
        request_state,
    })
}

/// The kind of an input request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    /// `elicitation/create` in form mode.
    Form,
    /// `elicitation/create` in URL mode.
    Url,
    /// `sampling/createMessage`.
    Sampling,
    /// `roots/list`.
    Roots,
}

/// A question for the editor, prepared from one input request.
#[derive(Clone, Debug, PartialEq)]
pub struct Question {
    pub kind: InputKind,
    /// The 2025-11-25 method.
    pub method: &'static str,
    /// The params of the request to the editor (`None`: no params). A URL elicitation still
    /// needs its `elicitationId` (added by the caller).
    pub params: Option<Value>,
    /// The `requestedSchema` that accepted form content must validate against.
    pub schema: Option<Value>,
    /// True when the form stands in for a form without properties (accept gives `{}`).
    pub continue_form: bool,
    /// The URL of a URL elicitation.
    pub url: Option<String>,
}

/// What to do with one input request.
#[derive(Clone, Debug, PartialEq)]
pub enum Plan {
    /// Ask the editor.
    Ask(Question),
    /// Answer the upstream `{"action": "decline"}` at once without asking: a URL the bridge
    /// refuses to show, for this reason (the caller logs a warning naming it).
    Decline(UrlRefusal),
}

/// The `ElicitResult` the upstream gets for a URL the bridge refuses to show.
pub fn decline_response() -> Value {
    json!({"action": "decline"})
}

fn declared<'a>(caps: &'a Value, path: &[&str]) -> Option<&'a Value> {
    let mut v = caps;
    for p in path {
        v = v.get(*p).filter(|x| x.is_object())?;
    }
    Some(v)
}

/// Checks one input request against the editor's 2025-11-25 capabilities and prepares it.
///
/// Errors (each with the key in `data.detail`): `invalid_input_request` for an unknown method
/// or malformed params, `undeclared_input_request` for a kind the editor did not declare
/// (or `sampling.tools` when tools are asked).
pub fn plan(key: &str, request: &Value, editor_caps: &Value) -> Result<Plan, InputFailure> {
    let bad = || InputFailure::new(Cause::InvalidInputRequest, key);
    let undeclared = || InputFailure::new(Cause::UndeclaredInputRequest, key);
    let method = request
        .get("method")
        .and_then(Value::as_str)
        .ok_or_else(bad)?;
    let params = request.get("params");
    if params.is_some_and(|p| !p.is_object()) {
        return Err(bad());
    }
    match method {
        methods::ELICITATION_CREATE => {
            let p = params.ok_or_else(bad)?;
            let message = p.get("message").and_then(Value::as_str).ok_or_else(bad)?;
            let elicitation = declared(editor_caps, &["elicitation"]).ok_or_else(undeclared)?;
            let mode = p.get("mode").and_then(Value::as_str).unwrap_or("form");
            match mode {
                "url" => {
                    if elicitation.get("url").is_none() {
                        return Err(undeclared());
                    }
                    let raw = p.get("url").and_then(Value::as_str).ok_or_else(bad)?;
                    let url = match shown_url(raw) {
                        Ok(url) => url,
                        Err(why) => return Ok(Plan::Decline(why)),
                    };
                    Ok(Plan::Ask(Question {
                        kind: InputKind::Url,
                        method: methods::ELICITATION_CREATE,
                        params: Some(json!({"mode": "url", "message": message, "url": url})),
                        schema: None,
                        continue_form: false,
                        url: Some(url),
                    }))
                }
                "form" => {
                    // `elicitation: {}` means form mode only (2025-11-25 elicitation).
                    let form_ok =
                        elicitation.get("form").is_some() || elicitation.get("url").is_none();
                    if !form_ok {
                        return Err(undeclared());
                    }
                    let schema = p
                        .get("requestedSchema")
                        .filter(|s| s.is_object())
                        .ok_or_else(bad)?;
                    let has_properties = schema
                        .get("properties")
                        .and_then(Value::as_object)
                        .is_some_and(|m| !m.is_empty());
                    if !has_properties {
                        return Ok(Plan::Ask(continue_question(message)));
                    }
                    Ok(Plan::Ask(Question {
                        kind: InputKind::Form,
                        method: methods::ELICITATION_CREATE,
                        // Built member by member: `json!` would serialize the schema again,
                        // and that writes its numbers in serde_json's form.
                        params: Some(Value::Object(Map::from_iter([
                            ("mode".to_string(), json!("form")),
                            ("message".to_string(), json!(message)),
                            ("requestedSchema".to_string(), schema.clone()),
                        ]))),
                        schema: Some(schema.clone()),
                        continue_form: false,
                        url: None,
                    }))
                }
                _ => Err(bad()),
            }
        }
        methods::SAMPLING_CREATE_MESSAGE => {
            let p = params.ok_or_else(bad)?;
            if !p.get("messages").is_some_and(Value::is_array)
                || !p.get("maxTokens").is_some_and(Value::is_number)
            {
                return Err(bad());
            }
            declared(editor_caps, &["sampling"]).ok_or_else(undeclared)?;
            if (p.get("tools").is_some() || p.get("toolChoice").is_some())
                && declared(editor_caps, &["sampling", "tools"]).is_none()
            {
                return Err(undeclared());
            }
            Ok(Plan::Ask(Question {
                kind: InputKind::Sampling,
                method: methods::SAMPLING_CREATE_MESSAGE,
                params: Some(p.clone()),
                schema: None,
                continue_form: false,
                url: None,
            }))
        }
        methods::ROOTS_LIST => {
            declared(editor_caps, &["roots"]).ok_or_else(undeclared)?;
            Ok(Plan::Ask(Question {
                kind: InputKind::Roots,
                method: methods::ROOTS_LIST,
                params: None,
                schema: None,
                continue_form: false,
                url: None,
            }))
        }
        _ => Err(bad()),
    }
}

/// The form the editor gets in place of a form without properties, or of a URL it already
/// accepted and the upstream asks for again: the message and one choice, Continue.
pub fn continue_question(message: &str) -> Question {
    Question {
        kind: InputKind::Form,
        method: methods::ELICITATION_CREATE,
        params: Some(
            json!({"mode": "form", "message": message, "requestedSchema": {
                "type": "object",
                "properties": {"choice": {"type": "string", "title": CONTINUE_CHOICE, "enum": [CONTINUE_CHOICE]}},
                "required": ["choice"]
            }}),
        ),
        schema: None,
        continue_form: true,
        url: None,
    }
}

/// The 2025-11-25 request the editor gets for a question, with the bridge's request id
/// `request_id`: `{jsonrpc, id, method, params?}`, and a URL elicitation (not the Continue form
/// that stands in for one already accepted) gets `elicitation_id` in `params.elicitationId`
/// (2025-11-25 needs one; 2026-07-28 has none; the caller mints it, unique per connection).
pub fn editor_request(request_id: &str, elicitation_id: &str, q: &Question) -> Value {
    let mut params = q.params.clone();
    if q.kind == InputKind::Url
        && !q.continue_form
        && let Some(Value::Object(p)) = params.as_mut()
    {
        p.insert("elicitationId".into(), Value::String(elicitation_id.into()));
    }
    let mut req = Map::new();
    req.insert("jsonrpc".into(), json!("2.0"));
    req.insert("id".into(), json!(request_id));
    req.insert("method".into(), json!(q.method));
    if let Some(p) = params {
        req.insert("params".into(), p);
    }
    Value::Object(req)
}

/// The URL the editor accepted with `response` (the `InputResponse` of [`check_answer`]) to
/// the URL elicitation `q`; `None` for any other question or answer, and for the Continue
/// form that stands in for a URL already accepted. The bridge sends
/// `notifications/elicitation/complete` for each accepted URL once the upstream stops asking.
pub fn accepted_url<'q>(q: &'q Question, response: &Value) -> Option<&'q str> {
    let accepted = response.get("action").and_then(Value::as_str) == Some("accept");
    (q.kind == InputKind::Url && !q.continue_form && accepted)
        .then_some(q.url.as_deref())
        .flatten()
}

/// `notifications/elicitation/complete` for the editor (2025-11-25 URL elicitation): the
/// upstream stopped asking for the URL of `elicitation_id`, or its request ended.
pub fn elicitation_complete(elicitation_id: &str) -> Value {
    crate::protocol::wire::jsonrpc::notification(
        methods::ELICITATION_COMPLETE,
        json!({"elicitationId": elicitation_id}),
    )
}

/// Why the bridge refuses to show a URL to the editor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UrlRefusal {
    /// Not a URL, or one with a control character, whitespace or a backslash (parsers
    /// disagree on what a backslash means).
    Malformed,
    /// The raw authority holds a character that is not printable ASCII (invisible, bidi,
    /// format or any non-ASCII character) or a percent escape: what people read is not the
    /// host the URL goes to, and the IDNA mapping may drop such characters silently.
    HiddenCharacters,
    /// User information (`https://trusted@evil.example` misleads people in any scheme).
    UserInfo,
    /// Neither `https` nor `http` to a loopback host.
    NotHttpsOrLoopbackHttp,
}

impl UrlRefusal {
    /// A short text for the warning line.
    pub fn describe(self) -> &'static str {
        match self {
            UrlRefusal::Malformed => {
                "not a URL, or with a control character, whitespace or a backslash"
            }
            UrlRefusal::HiddenCharacters => {
                "its host has invisible, non-ASCII or percent-encoded characters"
            }
            UrlRefusal::UserInfo => "it has user information",
            UrlRefusal::NotHttpsOrLoopbackHttp => "not https, and not http to a loopback host",
        }
    }
}

/// The authority of a raw URL as a WHATWG parser reads it for a special scheme: after the
/// scheme's `:` and any slashes, up to the first `/`, `?` or `#` (backslashes are refused
/// before this is used). `https:evil.example` gives `evil.example`.
fn raw_authority(raw: &str) -> &str {
    let rest = raw.split_once(':').map_or("", |(_, rest)| rest);
    let rest = rest.trim_start_matches('/');
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    &rest[..end]
}

/// The URL of a URL elicitation as the editor is shown it: parsed by the `url` crate (WHATWG
/// URL) and re-serialized, never the raw string, so an editor whose parser reads
/// `https:evil.example`, `http://0x7f000001/` or `http://127.1/` differently still sees where
/// the URL goes (`https://evil.example/`, `http://127.0.0.1/`).
///
/// Shown: `https`, or `http` to a loopback host of the parsed URL (`localhost`,
/// `*.localhost`, `127.0.0.0/8`, `[::1]`). Errors: the [`UrlRefusal`]; the upstream then
/// gets `decline` (2026-07-28 elicitation: a client may decline any URL it will not open).
pub fn shown_url(raw: &str) -> Result<String, UrlRefusal> {
    if raw.contains('\\') || raw.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(UrlRefusal::Malformed);
    }
    // Checked on the raw string: the IDNA mapping drops U+200B and other characters silently.
    if !raw_authority(raw)
        .chars()
        .all(|c| c.is_ascii_graphic() && c != '%')
    {
        return Err(UrlRefusal::HiddenCharacters);
    }
    let u = url::Url::parse(raw).map_err(|_| UrlRefusal::Malformed)?;
    if !u.username().is_empty() || u.password().is_some() {
        return Err(UrlRefusal::UserInfo);
    }
    let allowed = match u.scheme() {
        "https" => u.host().is_some(),
        "http" => match u.host() {
            Some(url::Host::Domain(d)) => d == "localhost" || d.ends_with(".localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        },
        _ => false,
    };
    if !allowed {
        return Err(UrlRefusal::NotHttpsOrLoopbackHttp);
    }
    Ok(u.into())
}

/// The editor's answer to one question.
#[derive(Clone, Debug, PartialEq)]
pub enum InputAnswer {
    /// A JSON-RPC result.
    Result(Value),
    /// A JSON-RPC error object.
    Error(Value),
    /// A line with the question's id that is not a usable answer.
    Invalid,
}

/// Why an answer cannot go upstream.
#[derive(Clone, Debug, PartialEq)]
pub enum AnswerFailure {
    /// The answer failed a check: `invalid_client_answer` with the key.
    Invalid,
    /// The editor answered a sampling or roots request with this error; the original request
    /// fails with it.
    EditorError(Value),
}

/// Checks the editor's answer to a question and gives the 2026-07-28 `InputResponse`.
///
/// Elicitation: an editor error becomes `cancel`; accepted form content must validate
/// against the requested schema; decline, cancel and URL answers carry no content. Sampling:
/// `role`, `content` and `model` are required. Roots: only `file://` roots pass.
pub fn check_answer(q: &Question, answer: &InputAnswer) -> Result<Value, AnswerFailure> {
    let result = match answer {
        InputAnswer::Invalid => return Err(AnswerFailure::Invalid),
        InputAnswer::Error(e) => {
            return match q.kind {
                InputKind::Form | InputKind::Url => Ok(json!({"action": "cancel"})),
                InputKind::Sampling | InputKind::Roots => {
                    Err(AnswerFailure::EditorError(e.clone()))
                }
            };
        }
        InputAnswer::Result(r) => r,
    };
    match q.kind {
        InputKind::Form | InputKind::Url => {
            let action = result
                .get("action")
                .and_then(Value::as_str)
                .ok_or(AnswerFailure::Invalid)?;
            match action {
                "decline" | "cancel" => Ok(json!({"action": action})),
                // A URL answer has no content; the Continue form of a form without properties
                // gives empty content (and stands in for a URL asked again: no content).
                "accept" if q.kind == InputKind::Url || q.url.is_some() => {
                    Ok(json!({"action": "accept"}))
                }
                "accept" if q.continue_form => Ok(json!({"action": "accept", "content": {}})),
                "accept" => {
                    let content = result.get("content").cloned().unwrap_or_else(|| json!({}));
                    if !content.is_object() {
                        return Err(AnswerFailure::Invalid);
                    }
                    if let Some(schema) = &q.schema
                        && !content_valid(schema, &content)
                    {
                        return Err(AnswerFailure::Invalid);
                    }
                    Ok(Value::Object(Map::from_iter([
                        ("action".to_string(), json!("accept")),
                        // Not through `json!`, which would write its numbers again.
                        ("content".to_string(), content),
                    ])))
                }
                _ => Err(AnswerFailure::Invalid),
            }
        }
        InputKind::Sampling => {
            let role = result.get("role").filter(|v| v.is_string());
            let content = result.get("content").filter(|v| sampling_content_ok(v));
            let model = result.get("model").filter(|v| v.is_string());
            let (Some(role), Some(content), Some(model)) = (role, content, model) else {
                return Err(AnswerFailure::Invalid);
            };
            let mut out = Map::new();
            out.insert("role".into(), role.clone());
            out.insert("content".into(), content.clone());
            out.insert("model".into(), model.clone());
            if let Some(s) = result.get("stopReason").filter(|v| v.is_string()) {
                out.insert("stopReason".into(), s.clone());
            }
            Ok(Value::Object(out))
        }
        InputKind::Roots => {
            let roots = result
                .get("roots")
                .and_then(Value::as_array)
                .ok_or(AnswerFailure::Invalid)?;
            let kept: Vec<Value> = roots
                .iter()
                .filter(|r| {
                    r.get("uri")
                        .and_then(Value::as_str)
                        .is_some_and(|u| u.starts_with("file://"))
                })
                .map(|r| {
                    let mut m = Map::new();
                    m.insert("uri".into(), r["uri"].clone());
                    if let Some(n) = r.get("name").filter(|n| n.is_string()) {
                        m.insert("name".into(), n.clone());
                    }
                    Value::Object(m)
                })
                .collect();
            Ok(json!({"roots": kept}))
        }
    }
}

/// Whether the content of a sampling answer is a content block, or an array of them, with
/// the members its type requires (`text` for text; `data` and `mimeType` for image and audio).
fn sampling_content_ok(content: &Value) -> bool {
    let block_ok = |b: &Value| {
        let s = |k: &str| b.get(k).is_some_and(Value::is_string);
        match b.get("type").and_then(Value::as_str) {
            Some("text") => s("text"),
            Some("image" | "audio") => s("data") && s("mimeType"),
            Some(_) => true,
            None => false,
        }
    };
    match content {
        Value::Array(blocks) => blocks.iter().all(block_ok),
        Value::Object(_) => block_ok(content),
        _ => false,
    }
}

/// Whether accepted form content validates against the requested schema (JSON Schema; a
/// schema that does not compile refuses all content). Without the feature `schema-check`,
/// all content is valid.
pub fn content_valid(schema: &Value, content: &Value) -> bool {
    #[cfg(feature = "schema-check")]
    return match jsonschema::validator_for(schema) {
        Ok(v) => v.is_valid(content),
        Err(_) => false,
    };
    #[cfg(not(feature = "schema-check"))]
    {
        let _ = (schema, content);
        true
    }
}

/// The params of the retry (2026-07-28 mrtr): the original params, `inputResponses` under the
/// same keys (when the round had input requests), and `requestState` echoed unchanged.
pub fn retry_params(
    original: &Object,
    responses: Map<String, Value>,
    request_state: Option<&str>,
    had_requests: bool,
) -> Object {
    let mut p = original.clone();
    p.remove("inputResponses");
    p.remove("requestState");
    if had_requests {
        p.insert(
            "inputResponses",
            RawJson::from_value(&Value::Object(responses)),
        );
    }
    if let Some(s) = request_state {
        p.insert(
            "requestState",
            RawJson::from_value(&Value::String(s.to_string())),
        );
    }
    p
}

/// The text of a request whose answers the upstream refused (it answered a retry with
/// -32602, for example because the `requestState` expired).
pub const STATE_REFUSED_TEXT: &str = "The server no longer accepts the answers to its questions (they may have expired). Run the tool again.";

#[cfg(test)]
mod tests;
