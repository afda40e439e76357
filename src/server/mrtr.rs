//! Multi round-trip requests (2026-07-28 basic/patterns/mrtr) on the server side: reading a
//! retry's `inputResponses`/`requestState`, and refusing with `-32021` an input request that the
//! client capabilities of this very request do not cover. Never decides what to ask.

use crate::protocol::revisions::methods;
use serde_json::{Map, Value};

use super::RpcError;

pub(crate) type RetryData = (Option<Map<String, Value>>, Option<String>);

/// Takes `inputResponses` and `requestState` out of the params of an MRTR retry.
pub(crate) fn parse_retry(params: &mut Map<String, Value>) -> Result<RetryData, RpcError> {
    let input_responses = match params.remove("inputResponses") {
        None => None,
        Some(Value::Object(responses)) if responses.values().all(Value::is_object) => {
            Some(responses)
        }
        Some(_) => {
            return Err(RpcError::invalid_params(
                "inputResponses must be an object of InputResponse objects",
            ));
        }
    };
    let request_state = match params.remove("requestState") {
        None => None,
        Some(Value::String(state)) => Some(state),
        Some(_) => return Err(RpcError::invalid_params("requestState must be a string")),
    };
    Ok((input_responses, request_state))
}

/// An input request must be covered by the client capabilities of this very request
/// (2026-07-28 basic/patterns/mrtr, client/elicitation); otherwise the answer is `-32021`.
pub(crate) fn check_input_requests(
    requests: &Map<String, Value>,
    capabilities: &Value,
) -> Result<(), RpcError> {
    let mut missing = Map::new();
    let declared = |path: &[&str]| {
        path.iter()
            .try_fold(capabilities, |at, key| at.get(key))
            .is_some_and(Value::is_object)
    };
    for request in requests.values() {
        let method = request.get("method").and_then(Value::as_str);
        let params = request.get("params");
        let param = |key: &str| params.and_then(|p| p.get(key));
        match method {
            Some(methods::ELICITATION_CREATE) => {
                if param("mode").and_then(Value::as_str) == Some("url") {
                    if !declared(&["elicitation", "url"]) {
                        require(&mut missing, "elicitation", Some("url"));
                    }
                } else {
                    // `elicitation: {}` means form only; `{url: {}}` alone excludes form.
                    let form = declared(&["elicitation", "form"])
                        || (declared(&["elicitation"]) && !declared(&["elicitation", "url"]));
                    if !form {
                        require(&mut missing, "elicitation", Some("form"));
                    }
                }
            }
            Some(methods::SAMPLING_CREATE_MESSAGE) => {
                if !declared(&["sampling"]) {
                    require(&mut missing, "sampling", None);
                }
                if (param("tools").is_some() || param("toolChoice").is_some())
                    && !declared(&["sampling", "tools"])
                {
                    require(&mut missing, "sampling", Some("tools"));
                }
                let context = param("includeContext").and_then(Value::as_str);
                if matches!(context, Some("thisServer" | "allServers"))
                    && !declared(&["sampling", "context"])
                {
                    require(&mut missing, "sampling", Some("context"));
                }
            }
            Some(methods::ROOTS_LIST) => {
                if !declared(&["roots"]) {
                    require(&mut missing, "roots", None);
                }
            }
            _ => {
                return Err(RpcError::internal(
                    "An input request must be elicitation/create, sampling/createMessage \
                     or roots/list",
                ));
            }
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(RpcError::missing_capability(Value::Object(missing)))
    }
}

fn require(missing: &mut Map<String, Value>, capability: &str, sub: Option<&str>) {
    let entry = missing
        .entry(capability)
        .or_insert_with(|| Value::Object(Map::new()));
    if let (Some(sub), Value::Object(entry)) = (sub, entry) {
        entry.insert(sub.into(), Value::Object(Map::new()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn requests(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_form_elicitation_needs_elicitation_and_a_url_one_needs_url() {
        let form = requests(json!({"k": {"method": "elicitation/create",
            "params": {"message": "m", "requestedSchema": {"type": "object", "properties": {}}}}}));
        let url = requests(json!({"k": {"method": "elicitation/create",
            "params": {"mode": "url", "message": "m", "url": "https://x"}}}));
        assert!(check_input_requests(&form, &json!({"elicitation": {}})).is_ok());
        assert!(check_input_requests(&form, &json!({"elicitation": {"form": {}}})).is_ok());
        let error = check_input_requests(&form, &json!({"elicitation": {"url": {}}}));
        assert_eq!(
            error.err().map(|e| (e.code.0, e.data)),
            Some((
                -32021,
                Some(json!({"requiredCapabilities": {"elicitation": {"form": {}}}}))
            ))
        );
        assert!(check_input_requests(&url, &json!({"elicitation": {}})).is_err());
        assert!(check_input_requests(&url, &json!({"elicitation": {"url": {}}})).is_ok());
    }

    #[test]
    fn sampling_with_tools_needs_sampling_tools_and_roots_need_roots() {
        let sampling = requests(json!({"s": {"method": "sampling/createMessage",
            "params": {"messages": [], "maxTokens": 5, "tools": []}},
            "r": {"method": "roots/list"}}));
        let error = check_input_requests(&sampling, &json!({}));
        assert_eq!(
            error.err().and_then(|e| e.data),
            Some(json!({"requiredCapabilities": {"sampling": {"tools": {}}, "roots": {}}}))
        );
        let all = json!({"sampling": {"tools": {}}, "roots": {}});
        assert!(check_input_requests(&sampling, &all).is_ok());
    }
}
