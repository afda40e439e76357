//! The multi round-trip tools and prompt of the `input-required-result-*` scenarios (2026-07-28
//! basic/patterns/mrtr): each answers its first call with `input_required` and its retry, which
//! carries `inputResponses` and the echoed `requestState`, with a result.
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use mcp_bridge::server::{
    Outcome, PromptDef, RequestContext, RpcError, ServerBuilder, ToolDef, elicit_form,
};
use serde_json::{Map, Value, json};

/// The `requestState`s remembered at once; the oldest is forgotten first. A retry comes within
/// seconds of its round, so this bounds memory without refusing a live exchange.
const MAX_ISSUED_STATES: usize = 1024;

/// The `requestState`s this process issued. The state is attacker-controlled (2026-07-28
/// basic/patterns/mrtr: servers must not trust it unverified), so a retry's state counts only
/// if it is byte for byte one that was issued; anything else is answered -32602. What a round
/// needs later (the name of round 1) travels inside the state, so nothing else is kept.
#[derive(Default)]
pub struct IssuedStates {
    next: AtomicU64,
    issued: Mutex<VecDeque<String>>,
}

impl IssuedStates {
    /// A new state of this `kind` with the members of `carry`.
    fn issue(&self, kind: &str, carry: Value) -> String {
        let mut state = Map::new();
        state.insert("kind".into(), kind.into());
        state.insert("serial".into(), self.next.fetch_add(1, Ordering::Relaxed).into());
        if let Value::Object(carry) = carry {
            state.extend(carry);
        }
        let text = Value::Object(state).to_string();
        if let Ok(mut issued) = self.issued.lock() {
            if issued.len() == MAX_ISSUED_STATES {
                issued.pop_front();
            }
            issued.push_back(text.clone());
        }
        text
    }

    /// The retry's state as issued, if it carries one: `Ok(None)` without a state, -32602 when
    /// the state is not one this process issued for `kind`.
    fn verify(&self, ctx: &RequestContext, kind: &str) -> Result<Option<Value>, RpcError> {
        let Some(raw) = ctx.request_state() else {
            return Ok(None);
        };
        let known = self.issued.lock().map(|issued| issued.iter().any(|s| s == raw));
        let state: Option<Value> = match known {
            Ok(true) => serde_json::from_str(raw).ok(),
            _ => None,
        };
        match state {
            Some(state) if state["kind"] == kind => Ok(Some(state)),
            _ => Err(RpcError::invalid_params("requestState integrity check failed")),
        }
    }
}

fn no_input(name: &str, description: &str) -> ToolDef {
    ToolDef::no_input(name).description(description)
}

/// `content[field]` of an elicitation answer, as text.
fn answered<'a>(answer: &'a Value, field: &str) -> &'a str {
    answer["content"][field].as_str().unwrap_or("unknown")
}

/// The text of a sampling answer (`content` one block or an array of them).
fn sampled(answer: &Value) -> &str {
    let content = &answer["content"];
    let block = if content.is_array() { &content[0] } else { content };
    block["text"].as_str().unwrap_or("no response")
}

/// The number of roots of a `roots/list` answer.
fn root_count(answer: &Value) -> usize {
    answer["roots"].as_array().map_or(0, Vec::len)
}

fn sampling(text: &str, max_tokens: u32) -> Value {
    json!({"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        "maxTokens": max_tokens}})
}

fn roots() -> Value {
    json!({"method": "roots/list", "params": {}})
}

fn confirm() -> Value {
    json!({"method": "elicitation/create", "params": {"message": "Please confirm",
        "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}}})
}

fn asking(requests: Vec<(&str, Value)>, request_state: Option<String>) -> Outcome {
    let input_requests = requests.into_iter().map(|(key, request)| (key.to_owned(), request));
    Outcome::InputRequired { input_requests: input_requests.collect(), request_state }
}

/// Registers the tools and the prompt.
pub fn register(builder: ServerBuilder) -> ServerBuilder {
    let states = Arc::new(IssuedStates::default());
    let (s1, s2, s3, s4) = (states.clone(), states.clone(), states.clone(), states);
    builder
        .tool(
            no_input("test_input_required_result_elicitation", "Asks for a name, then greets."),
            |_, ctx| {
                // A retry without the answer (a wrong key) is asked again rather than refused: the
                // spec's advice for missing input responses.
                match ctx.input_response("user_name") {
                    Some(answer) => Outcome::text(format!("Hello, {}!", answered(answer, "name"))),
                    None => Outcome::ask("user_name", elicit_form("What is your name?", &["name"])),
                }
            },
        )
        .tool(
            no_input("test_input_required_result_sampling", "Asks the client's model a question."),
            |_, ctx| match ctx.input_response("capital_question") {
                Some(answer) => Outcome::text(format!("Sampling result: {}", sampled(answer))),
                None => Outcome::ask(
                    "capital_question",
                    sampling("What is the capital of France?", 100),
                ),
            },
        )
        .tool(
            no_input("test_input_required_result_list_roots", "Asks for the client's roots."),
            |_, ctx| match ctx.input_response("client_roots") {
                Some(answer) => Outcome::text(format!("Found {} root(s)", root_count(answer))),
                None => Outcome::ask("client_roots", roots()),
            },
        )
        .tool(
            no_input(
                "test_input_required_result_request_state",
                "Asks for a confirmation with a requestState.",
            ),
            move |_, ctx| {
                let state = s1.verify(&ctx, "request-state")?;
                let ok = ctx
                    .input_response("confirm")
                    .is_some_and(|answer| answer["content"]["ok"] == true);
                if state.is_some() && ok {
                    return Ok(Outcome::text("state-ok: requestState validated"));
                }
                Ok(asking(vec![("confirm", confirm())], Some(s1.issue("request-state", json!({})))))
            },
        )
        .tool(
            no_input(
                "test_input_required_result_multiple_inputs",
                "Asks for a name, a greeting and the roots at once.",
            ),
            move |_, ctx| {
                let state = s2.verify(&ctx, "multiple-inputs")?;
                let answers = (
                    ctx.input_response("user_name"),
                    ctx.input_response("greeting"),
                    ctx.input_response("client_roots"),
                );
                if let (Some(_), (Some(name), Some(greeting), Some(roots))) = (state, answers) {
                    let (name, greeting, roots) =
                        (answered(name, "name"), sampled(greeting), root_count(roots));
                    return Ok(Outcome::text(format!(
                        "Name: {name}; Greeting: {greeting}; Roots: {roots}"
                    )));
                }
                let requests = vec![
                    ("user_name", elicit_form("What is your name?", &["name"])),
                    ("greeting", sampling("Generate a greeting", 50)),
                    ("client_roots", roots()),
                ];
                Ok(asking(requests, Some(s2.issue("multiple-inputs", json!({})))))
            },
        )
        .tool(
            no_input(
                "test_input_required_result_multi_round",
                "Asks for a name, then a colour, in two rounds.",
            ),
            move |_, ctx| {
                let state = s3.verify(&ctx, "multi-round")?;
                let round = state.as_ref().and_then(|s| s["round"].as_u64());
                match (round, ctx.input_response("step1"), ctx.input_response("step2")) {
                    (Some(1), Some(name), _) => {
                        let carry = json!({"round": 2, "name": answered(name, "name")});
                        let color = elicit_form("Step 2: What is your favorite color?", &["color"]);
                        Ok(asking(vec![("step2", color)], Some(s3.issue("multi-round", carry))))
                    }
                    (Some(2), _, Some(color)) => {
                        let name =
                            state.as_ref().and_then(|s| s["name"].as_str()).unwrap_or("friend");
                        Ok(Outcome::text(format!(
                            "Multi-round complete for {name} who likes {}",
                            answered(color, "color")
                        )))
                    }
                    // The first round, or a retry that does not continue the last one: start over.
                    _ => {
                        let name = elicit_form("Step 1: What is your name?", &["name"]);
                        Ok(asking(
                            vec![("step1", name)],
                            Some(s3.issue("multi-round", json!({"round": 1}))),
                        ))
                    }
                }
            },
        )
        .tool(
            no_input(
                "test_input_required_result_tampered_state",
                "Refuses a requestState it did not issue.",
            ),
            move |_, ctx| {
                if s4.verify(&ctx, "tamper-test")?.is_some()
                    && ctx.input_response("confirm").is_some()
                {
                    return Ok(Outcome::text("integrity-ok: state verified"));
                }
                Ok(asking(vec![("confirm", confirm())], Some(s4.issue("tamper-test", json!({})))))
            },
        )
        .tool(
            no_input(
                "test_input_required_result_capabilities",
                "Asks only what the request's client capabilities allow.",
            ),
            capabilities,
        )
        .prompt(
            PromptDef::new("test_input_required_result_prompt")
                .description("Asks for the context of the prompt first."),
            |_, ctx| match ctx.input_response("user_context") {
                Some(answer) => Outcome::user_text(format!(
                    "Prompt with context: {}",
                    answered(answer, "context")
                )),
                None => Outcome::ask(
                    "user_context",
                    elicit_form("What context should the prompt use?", &["context"]),
                ),
            },
        )
}

/// Input requests only for what this very request's client capabilities declare (2026-07-28
/// basic/patterns/mrtr: a server must not ask what the client cannot answer).
fn capabilities(_: Value, ctx: RequestContext) -> Outcome {
    if let Some(responses) = ctx.input_responses().filter(|r| !r.is_empty()) {
        let keys: Vec<&str> = responses.keys().map(String::as_str).collect();
        return Outcome::text(format!("capabilities-ok: received {}", keys.join(",")));
    }
    let declared = ctx.client_capabilities();
    let mut requests = Vec::new();
    if declared.get("elicitation").is_some() {
        requests.push(("elicit_input", elicit_form("Elicitation input", &["value"])));
    }
    if declared.get("sampling").is_some() {
        requests.push(("sample_input", sampling("Sample request", 50)));
    }
    if requests.is_empty() {
        return Outcome::text("No supported capabilities declared");
    }
    asking(requests, None)
}
