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
mod tests {
    use super::*;

    #[test]
    fn each_question_becomes_one_editor_request() {
        let caps = json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}});
        let ask = |request: Value| match plan("k", &request, &caps) {
            Ok(Plan::Ask(q)) => q,
            other => panic!("not asked: {other:?}"),
        };
        let url = ask(json!({"method": "elicitation/create",
            "params": {"mode": "url", "message": "Sign in", "url": "https://example.com/a"}}));
        let schema = json!({"type": "object", "properties": {"n": {"type": "string"}}});
        let form = ask(json!({"method": "elicitation/create",
            "params": {"mode": "form", "message": "Name?", "requestedSchema": schema}}));
        let mut again = continue_question("Sign in");
        again.url = url.url.clone();
        let table = [
            (
                "b-1",
                url.clone(),
                json!({"jsonrpc": "2.0", "id": "b-1", "method": "elicitation/create",
                    "params": {"mode": "url", "message": "Sign in", "url": "https://example.com/a",
                               "elicitationId": "mcp-bridge-elicitation-b-1"}}),
            ),
            (
                "b-2",
                form,
                json!({"jsonrpc": "2.0", "id": "b-2", "method": "elicitation/create",
                    "params": {"mode": "form", "message": "Name?", "requestedSchema": schema}}),
            ),
            (
                "b-3",
                again,
                json!({"jsonrpc": "2.0", "id": "b-3", "method": "elicitation/create",
                    "params": continue_question("Sign in").params}),
            ),
            (
                "b-4",
                ask(json!({"method": "roots/list"})),
                json!({"jsonrpc": "2.0", "id": "b-4", "method": "roots/list"}),
            ),
            (
                "b-5",
                ask(json!({"method": "sampling/createMessage",
                    "params": {"messages": [], "maxTokens": 5}})),
                json!({"jsonrpc": "2.0", "id": "b-5", "method": "sampling/createMessage",
                    "params": {"messages": [], "maxTokens": 5}}),
            ),
        ];
        for (id, q, want) in table {
            let minted = format!("mcp-bridge-elicitation-{id}");
            assert_eq!(editor_request(id, &minted, &q), want, "{id}");
        }
        let accept = json!({"action": "accept"});
        assert_eq!(accepted_url(&url, &accept), Some("https://example.com/a"));
        assert_eq!(accepted_url(&url, &json!({"action": "decline"})), None);
        assert_eq!(accepted_url(&url, &json!({})), None);
        let mut again_url = continue_question("Sign in");
        again_url.url = url.url.clone();
        assert_eq!(accepted_url(&again_url, &accept), None);
        assert_eq!(
            elicitation_complete("mcp-bridge-elicitation-b-1"),
            json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete",
                "params": {"elicitationId": "mcp-bridge-elicitation-b-1"}})
        );
    }

    fn caps() -> Value {
        json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {"listChanged": true}})
    }

    #[test]
    fn input_required_results() {
        let r = json!({"resultType": "input_required", "inputRequests": {"a": {"method": "roots/list"}}, "requestState": "s"});
        let ir = read_input_required(&r).unwrap_or_else(|f| panic!("{f:?}"));
        assert_eq!(ir.input_requests.len(), 1);
        assert_eq!(ir.request_state.as_deref(), Some("s"));
        assert_eq!(
            read_input_required(&json!({"resultType": "input_required"}))
                .map(|_| ())
                .unwrap_err()
                .cause,
            Cause::InvalidInputRequest
        );
        let many: Map<String, Value> = (0..17)
            .map(|i| (format!("k{i}"), json!({"method": "roots/list"})))
            .collect();
        let f = read_input_required(&json!({"inputRequests": many})).unwrap_err();
        assert_eq!(f.cause, Cause::TooManyInputRequests);
        let sixteen: Map<String, Value> = (0..16)
            .map(|i| (format!("k{i}"), json!({"method": "roots/list"})))
            .collect();
        assert!(read_input_required(&json!({"inputRequests": sixteen})).is_ok());
    }

    #[test]
    fn undeclared_kinds_fail_with_the_key() {
        let form = json!({"method": "elicitation/create", "params": {"message": "m", "requestedSchema": {"type": "object", "properties": {"a": {"type": "string"}}}}});
        assert_eq!(
            plan("k1", &form, &json!({})),
            Err(InputFailure::new(Cause::UndeclaredInputRequest, "k1"))
        );
        assert!(matches!(
            plan("k1", &form, &json!({"elicitation": {}})),
            Ok(Plan::Ask(_))
        ));
        assert_eq!(
            plan("k1", &form, &json!({"elicitation": {"url": {}}})),
            Err(InputFailure::new(Cause::UndeclaredInputRequest, "k1"))
        );
        let url = json!({"method": "elicitation/create", "params": {"mode": "url", "message": "m", "url": "https://a.example/x"}});
        assert_eq!(
            plan("u", &url, &json!({"elicitation": {}})),
            Err(InputFailure::new(Cause::UndeclaredInputRequest, "u"))
        );
        let sampling_tools = json!({"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5, "tools": []}});
        assert_eq!(
            plan("s", &sampling_tools, &caps()),
            Err(InputFailure::new(Cause::UndeclaredInputRequest, "s"))
        );
        assert!(matches!(
            plan("s", &sampling_tools, &json!({"sampling": {"tools": {}}})),
            Ok(Plan::Ask(_))
        ));
        assert_eq!(
            plan("r", &json!({"method": "roots/list"}), &json!({})),
            Err(InputFailure::new(Cause::UndeclaredInputRequest, "r"))
        );
        assert_eq!(
            plan("x", &json!({"method": "ping"}), &caps()),
            Err(InputFailure::new(Cause::InvalidInputRequest, "x"))
        );
    }

    #[test]
    fn urls_are_shown_parsed_and_re_serialized() {
        use UrlRefusal::*;
        for (raw, shown) in [
            ("https://example.com/auth", Ok("https://example.com/auth")),
            ("https://EXAMPLE.com", Ok("https://example.com/")),
            (
                "https://xn--bcher-kva.example/",
                Ok("https://xn--bcher-kva.example/"),
            ),
            ("http://localhost:8080/cb", Ok("http://localhost:8080/cb")),
            ("http://LOCALHOST/cb", Ok("http://localhost/cb")),
            ("http://app.localhost/x", Ok("http://app.localhost/x")),
            ("http://127.0.0.5/x", Ok("http://127.0.0.5/x")),
            ("http://[::1]:9/x", Ok("http://[::1]:9/x")),
            // Parsers disagree on these; the editor gets what the bridge parsed.
            ("https:evil.example", Ok("https://evil.example/")),
            ("https:/evil.example/a", Ok("https://evil.example/a")),
            ("https:///evil.example/a", Ok("https://evil.example/a")),
            ("http://0x7f000001/", Ok("http://127.0.0.1/")),
            ("http://127.1/", Ok("http://127.0.0.1/")),
            ("http://2130706433:80/", Ok("http://127.0.0.1/")),
            ("http://0177.0.0.1/x", Ok("http://127.0.0.1/x")),
            (
                "https://example.com/a/../b?q=1#f",
                Ok("https://example.com/b?q=1#f"),
            ),
            // Non-ASCII outside the authority is percent-encoded, so it is shown visibly.
            (
                "https://example.com/\u{202e}gpj.exe",
                Ok("https://example.com/%E2%80%AEgpj.exe"),
            ),
            // The loopback rule applies to the parsed host.
            ("http://0x7f000001.example/", Err(NotHttpsOrLoopbackHttp)),
            ("http://0x08080808/", Err(NotHttpsOrLoopbackHttp)),
            (
                "http://localhost.evil.example/",
                Err(NotHttpsOrLoopbackHttp),
            ),
            ("http://example.com/x", Err(NotHttpsOrLoopbackHttp)),
            ("file:///etc/passwd", Err(NotHttpsOrLoopbackHttp)),
            ("javascript:alert(1)", Err(NotHttpsOrLoopbackHttp)),
            ("vscode://x", Err(NotHttpsOrLoopbackHttp)),
            ("https://trusted@evil.example/", Err(UserInfo)),
            ("https://user:pw@example.com/", Err(UserInfo)),
            ("https:trusted@evil.example", Err(UserInfo)),
            ("https://example.com\\@evil.example/", Err(Malformed)),
            ("https://exa mple.com/", Err(Malformed)),
            ("https://example.com/\n", Err(Malformed)),
            ("not a url", Err(Malformed)),
            ("https://", Err(Malformed)),
            // Invisible, bidi, format and other non-ASCII characters in the authority.
            ("https://x.example\u{200b}/", Err(HiddenCharacters)),
            ("https://x\u{200b}.example/", Err(HiddenCharacters)),
            ("https:x.example\u{200b}", Err(HiddenCharacters)),
            ("https://x.example\u{200c}/", Err(HiddenCharacters)),
            ("https://x.example\u{200d}/", Err(HiddenCharacters)),
            ("https://x.example\u{2060}/", Err(HiddenCharacters)),
            ("https://x.example\u{feff}/", Err(HiddenCharacters)),
            ("https://x.ex\u{ad}ample/", Err(HiddenCharacters)),
            ("https://\u{202e}elpmaxe.x/", Err(HiddenCharacters)),
            ("https://x.example\u{e0001}/", Err(HiddenCharacters)),
            ("https://b\u{fc}cher.example/", Err(HiddenCharacters)),
            ("https://evil\u{3002}example/", Err(HiddenCharacters)),
            ("https://\u{430}pple.com/", Err(HiddenCharacters)),
            ("https://x.example:443\u{200b}/", Err(HiddenCharacters)),
            ("https://x.example%E2%80%8B/", Err(HiddenCharacters)),
            ("https://ex%61mple.com/", Err(HiddenCharacters)),
        ] {
            let shown = shown.map(str::to_string);
            assert_eq!(shown_url(raw), shown, "{raw:?}");
            let req = json!({"method": "elicitation/create", "params": {"mode": "url", "message": "m", "url": raw}});
            let expected = match shown {
                Ok(url) => Plan::Ask(Question {
                    kind: InputKind::Url,
                    method: methods::ELICITATION_CREATE,
                    params: Some(json!({"mode": "url", "message": "m", "url": url})),
                    schema: None,
                    continue_form: false,
                    url: Some(url),
                }),
                Err(why) => Plan::Decline(why),
            };
            assert_eq!(plan("k", &req, &caps()), Ok(expected), "{raw:?}");
        }
    }

    #[test]
    fn the_raw_authority_is_what_a_whatwg_parser_reads_as_one() {
        for (raw, authority) in [
            ("https://a.example:1/p?q#f", "a.example:1"),
            ("https:a.example", "a.example"),
            ("https:///a.example/x", "a.example"),
            ("https://a.example?x", "a.example"),
            ("https://a.example#x", "a.example"),
            ("no colon", ""),
        ] {
            assert_eq!(raw_authority(raw), authority, "{raw:?}");
        }
    }

    #[test]
    fn a_form_without_properties_becomes_a_continue_form() {
        let req = json!({"method": "elicitation/create", "params": {"message": "Proceed?", "requestedSchema": {"type": "object", "properties": {}}}});
        let Ok(Plan::Ask(q)) = plan("c", &req, &caps()) else {
            panic!("expected a question")
        };
        assert!(q.continue_form);
        assert_eq!(
            q.params.as_ref().map(|p| p["message"].clone()),
            Some(json!("Proceed?"))
        );
        let accepted = check_answer(
            &q,
            &InputAnswer::Result(json!({"action": "accept", "content": {"choice": "Continue"}})),
        );
        assert_eq!(accepted, Ok(json!({"action": "accept", "content": {}})));
    }

    #[cfg(not(feature = "schema-check"))]
    #[test]
    fn without_schema_check_accepted_content_passes_unchecked() {
        let form = json!({"method": "elicitation/create", "params": {"message": "m", "requestedSchema": {
            "type": "object", "properties": {"age": {"type": "integer", "minimum": 0}}, "required": ["age"]}}});
        let Ok(Plan::Ask(q)) = plan("f", &form, &caps()) else {
            panic!()
        };
        let wrong = json!({"action": "accept", "content": {"age": "x"}});
        assert_eq!(
            check_answer(&q, &InputAnswer::Result(wrong.clone())),
            Ok(wrong)
        );
    }

    /// The accepted content against the requestedSchema (feature `schema-check`).
    #[cfg(feature = "schema-check")]
    #[test]
    fn answers_are_checked() {
        let form = json!({"method": "elicitation/create", "params": {"message": "m", "requestedSchema": {
            "type": "object", "properties": {"age": {"type": "integer", "minimum": 0}}, "required": ["age"]}}});
        let Ok(Plan::Ask(q)) = plan("f", &form, &caps()) else {
            panic!()
        };
        assert_eq!(
            check_answer(
                &q,
                &InputAnswer::Result(json!({"action": "accept", "content": {"age": 3}}))
            ),
            Ok(json!({"action": "accept", "content": {"age": 3}}))
        );
        assert_eq!(
            check_answer(
                &q,
                &InputAnswer::Result(json!({"action": "accept", "content": {"age": "x"}}))
            ),
            Err(AnswerFailure::Invalid)
        );
        assert_eq!(
            check_answer(
                &q,
                &InputAnswer::Result(json!({"action": "accept", "content": {}}))
            ),
            Err(AnswerFailure::Invalid)
        );
        assert_eq!(
            check_answer(
                &q,
                &InputAnswer::Result(json!({"action": "decline", "content": {"age": 1}}))
            ),
            Ok(json!({"action": "decline"}))
        );
        assert_eq!(
            check_answer(&q, &InputAnswer::Result(json!({"action": "maybe"}))),
            Err(AnswerFailure::Invalid)
        );
        assert_eq!(
            check_answer(
                &q,
                &InputAnswer::Error(json!({"code": -1, "message": "no"}))
            ),
            Ok(json!({"action": "cancel"}))
        );
        assert_eq!(
            check_answer(&q, &InputAnswer::Invalid),
            Err(AnswerFailure::Invalid)
        );

        let Ok(Plan::Ask(roots)) = plan("r", &json!({"method": "roots/list"}), &caps()) else {
            panic!()
        };
        assert_eq!(
            check_answer(
                &roots,
                &InputAnswer::Result(
                    json!({"roots": [{"uri": "file:///a", "name": "a"}, {"uri": "https://b"}]})
                )
            ),
            Ok(json!({"roots": [{"uri": "file:///a", "name": "a"}]}))
        );
        let err = json!({"code": -32000, "message": "refused"});
        assert_eq!(
            check_answer(&roots, &InputAnswer::Error(err.clone())),
            Err(AnswerFailure::EditorError(err))
        );

        let s =
            json!({"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}});
        let Ok(Plan::Ask(sq)) = plan("s", &s, &caps()) else {
            panic!()
        };
        assert_eq!(
            check_answer(
                &sq,
                &InputAnswer::Result(
                    json!({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m", "_meta": {}})
                )
            ),
            Ok(
                json!({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"})
            )
        );
        assert_eq!(
            check_answer(&sq, &InputAnswer::Result(json!({"role": "assistant"}))),
            Err(AnswerFailure::Invalid)
        );
        let no_text = json!({"role": "assistant", "content": {"type": "text"}, "model": "m"});
        assert_eq!(
            check_answer(&sq, &InputAnswer::Result(no_text)),
            Err(AnswerFailure::Invalid)
        );
        let image = json!({"role": "assistant", "content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}], "model": "m"});
        assert!(check_answer(&sq, &InputAnswer::Result(image)).is_ok());
    }

    #[test]
    fn the_retry_carries_the_answers_and_the_state_unchanged() {
        let original = Object::from_value(
            &json!({"name": "t", "arguments": {"n": 1E5}, "_meta": {"progressToken": "bp-1"}}),
        )
        .unwrap_or_default();
        let mut r = Map::new();
        r.insert("k".into(), json!({"action": "accept", "content": {"a": 1}}));
        let state = "opaque \"state\" \u{1F600}";
        assert_eq!(
            retry_params(&original, r, Some(state), true)
                .to_value()
                .unwrap_or_default(),
            json!({"name": "t", "arguments": {"n": 1E5}, "_meta": {"progressToken": "bp-1"},
                   "inputResponses": {"k": {"action": "accept", "content": {"a": 1}}}, "requestState": state})
        );
        assert_eq!(
            retry_params(&original, Map::new(), Some("s"), false)
                .to_value()
                .unwrap_or_default()["inputResponses"],
            Value::Null
        );
    }
}
