//! JSON-RPC 2.0 messages: ids, classification of a parsed line, the nesting-depth check that
//! runs before the JSON parser, and the recovery of an id from the first or last bytes of a
//! line that cannot be parsed. Pure: bytes and values in, values out.

use serde_json::{Map, Value};
use std::fmt;

/// Nesting limit of a message from the editor (levels of `{`/`[`; the reference's
/// `json_max_depth`).
pub const MAX_CLIENT_DEPTH: usize = 64;
/// Nesting limit of a message from the upstream server.
pub const MAX_UPSTREAM_DEPTH: usize = 200;
/// How many bytes of each end of an over-long line are kept for id recovery.
pub const ID_WINDOW_BYTES: usize = 256;

/// A JSON-RPC request id: a string or an integer (never null, never a fraction).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Id {
    /// An integer id that fits in `i64`.
    Int(i64),
    /// A non-negative integer id above `i64::MAX`.
    UInt(u64),
    /// A string id.
    Str(String),
}

impl Id {
    /// Reads an id from a JSON value: a string or an integer; anything else is `None`.
    pub fn from_value(v: &Value) -> Option<Id> {
        match v {
            Value::String(s) => Some(Id::Str(s.clone())),
            Value::Number(n) => n.as_i64().map(Id::Int).or_else(|| n.as_u64().map(Id::UInt)),
            _ => None,
        }
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            Id::Int(i) => Value::from(*i),
            Id::UInt(u) => Value::from(*u),
            Id::Str(s) => Value::String(s.clone()),
        }
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Int(i) => write!(f, "{i}"),
            Id::UInt(u) => write!(f, "{u}"),
            Id::Str(s) => write!(f, "{s:?}"),
        }
    }
}

/// One parsed JSON-RPC 2.0 message.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    /// A request: it has a method and an id.
    Request {
        id: Id,
        method: String,
        params: Option<Value>,
    },
    /// A notification: a method and no id.
    Notification {
        method: String,
        params: Option<Value>,
    },
    /// A successful response. `id` is `None` when it was null or not a string or integer.
    Response { id: Option<Id>, result: Value },
    /// An error response. `id` is `None` when it was null or not a string or integer.
    ErrorResponse { id: Option<Id>, error: Value },
}

/// Why a line is not a usable message, with the id that could be recovered.
#[derive(Clone, Debug, PartialEq)]
pub enum ParseError {
    /// Not valid UTF-8, or not valid JSON (`parse_error`).
    NotJson { id: Option<Id> },
    /// Nested deeper than the limit (`too_deep`).
    TooDeep { id: Option<Id> },
    /// Valid JSON, not a JSON-RPC 2.0 message (`invalid_request_shape`).
    Shape { id: Option<Id> },
}

impl ParseError {
    /// The id recovered from the line, if any.
    pub fn id(&self) -> Option<&Id> {
        match self {
            ParseError::NotJson { id } | ParseError::TooDeep { id } | ParseError::Shape { id } => {
                id.as_ref()
            }
        }
    }
}

/// The greatest nesting depth of `{`/`[` in a JSON text, not counting brackets inside strings.
/// Stops counting once `limit` is exceeded and returns `limit + 1`. The text need not be valid
/// JSON; the parser decides that afterwards.
pub fn nesting_depth(bytes: &[u8], limit: usize) -> usize {
    let mut depth = 0usize;
    let mut max = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                if depth > max {
                    max = depth;
                    if max > limit {
                        return limit + 1;
                    }
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// Parses one line (without its newline) into a message. The depth check runs first, so a
/// deeply nested line never reaches the recursive parser.
///
/// Errors: [`ParseError::NotJson`] for bad UTF-8 or JSON, [`ParseError::TooDeep`] past
/// `max_depth`, [`ParseError::Shape`] for JSON that is not JSON-RPC 2.0. Each carries the id
/// recovered from the line when one can be found.
pub fn parse(line: &[u8], max_depth: usize) -> Result<Message, ParseError> {
    if nesting_depth(line, max_depth) > max_depth {
        return Err(ParseError::TooDeep {
            id: recover_id(line),
        });
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(_) => {
            return Err(ParseError::NotJson {
                id: recover_id(line),
            });
        }
    };
    classify(value)
}

/// Classifies a parsed JSON value as a JSON-RPC 2.0 message.
pub fn classify(value: Value) -> Result<Message, ParseError> {
    let Value::Object(mut obj) = value else {
        return Err(ParseError::Shape { id: None });
    };
    let raw_id = obj.remove("id");
    let id = raw_id.as_ref().and_then(Id::from_value);
    let shape_err = |id: Option<Id>| Err(ParseError::Shape { id });
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return shape_err(id);
    }
    let params = obj.remove("params");
    if let Some(p) = &params
        && !(p.is_object() || p.is_array())
    {
        return shape_err(id);
    }
    match obj.remove("method") {
        Some(Value::String(method)) => {
            if obj.contains_key("result") || obj.contains_key("error") {
                return shape_err(id);
            }
            match (raw_id, id) {
                (None, _) => Ok(Message::Notification { method, params }),
                (Some(_), Some(id)) => Ok(Message::Request { id, method, params }),
                (Some(_), None) => shape_err(None),
            }
        }
        Some(_) => shape_err(id),
        None => {
            if params.is_some() || raw_id.is_none() {
                return shape_err(id);
            }
            match (obj.remove("result"), obj.remove("error")) {
                (Some(result), None) => Ok(Message::Response { id, result }),
                (None, Some(error)) if error.is_object() => {
                    Ok(Message::ErrorResponse { id, error })
                }
                _ => shape_err(id),
            }
        }
    }
}

/// Recovers the id of a line without parsing it: the top-level `"id": <string or integer>`
/// member in the first [`ID_WINDOW_BYTES`] bytes, else in the last [`ID_WINDOW_BYTES`] bytes.
/// Editors write the id near the start (VS Code) or as the last member (TypeScript SDK 1.x).
/// An `"id"` nested inside params is never taken: an error must not answer another request.
pub fn recover_id(line: &[u8]) -> Option<Id> {
    let head = &line[..line.len().min(ID_WINDOW_BYTES)];
    let tail = &line[line.len().saturating_sub(ID_WINDOW_BYTES)..];
    recover_id_from(head, false).or_else(|| recover_id_from(tail, true))
}

/// Finds the top-level `"id"` member in a window of a line: the window is the start of the
/// line (`tail == false`) or its end (`tail == true`).
pub fn recover_id_from(window: &[u8], tail: bool) -> Option<Id> {
    if tail {
        tail_id(window)
    } else {
        head_id(window)
    }
}

/// The index of the quote that closes the string opened at `open`, if it is in the window.
fn string_end(b: &[u8], open: usize) -> Option<usize> {
    let mut escaped = false;
    for (j, &c) in b.iter().enumerate().skip(open + 1) {
        if escaped {
            escaped = false;
        } else if c == b'\\' {
            escaped = true;
        } else if c == b'"' {
            return Some(j);
        }
    }
    None
}

/// Scans from the start of the line, so the nesting and the strings are known exactly.
fn head_id(w: &[u8]) -> Option<Id> {
    let mut depth = 0usize;
    let mut i = 0;
    while i < w.len() {
        match w[i] {
            b'"' => {
                let end = string_end(w, i)?;
                if depth == 1
                    && &w[i..=end] == b"\"id\""
                    && let Some(id) = scalar_after_colon(&w[end + 1..])
                {
                    return Some(id);
                }
                i = end + 1;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

/// Scans candidates from the end of the line: a candidate is a key (an unescaped `"id"`
/// followed by a colon, which cannot sit inside a string), and it is top-level when the rest
/// of the line closes exactly one level.
fn tail_id(w: &[u8]) -> Option<Id> {
    let pat = b"\"id\"";
    let mut pos = w.len();
    while pos > 0 {
        let found = w[..pos].windows(pat.len()).rposition(|x| x == pat)?;
        pos = found;
        if found > 0 && w[found - 1] == b'\\' {
            continue;
        }
        let Some(id) = scalar_after_colon(&w[found + pat.len()..]) else {
            continue;
        };
        if net_closers(&w[found..]) == Some(1) {
            return Some(id);
        }
    }
    None
}

/// Levels closed by a text that starts outside any string (closers minus openers), or `None`
/// when a string in it does not end.
fn net_closers(b: &[u8]) -> Option<i64> {
    let mut net = 0i64;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i = string_end(b, i)? + 1;
                continue;
            }
            b'{' | b'[' => net -= 1,
            b'}' | b']' => net += 1,
            _ => {}
        }
        i += 1;
    }
    Some(net)
}

fn scalar_after_colon(rest: &[u8]) -> Option<Id> {
    let mut i = skip_ws(rest, 0);
    if rest.get(i) != Some(&b':') {
        return None;
    }
    i = skip_ws(rest, i + 1);
    match rest.get(i)? {
        b'"' => {
            let mut j = i + 1;
            let mut escaped = false;
            while j < rest.len() {
                let b = rest[j];
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == b'"' {
                    let s: String = serde_json::from_slice(&rest[i..=j]).ok()?;
                    return Some(Id::Str(s));
                }
                j += 1;
            }
            None
        }
        b'-' | b'0'..=b'9' => {
            let mut j = i + 1;
            while j < rest.len() && rest[j].is_ascii_digit() {
                j += 1;
            }
            // A number cut by the window, or a fraction/exponent, is not a usable id.
            match rest.get(j) {
                Some(b',' | b'}' | b' ' | b'\t' | b'\r' | b'\n') => {}
                _ => return None,
            }
            let text = std::str::from_utf8(&rest[i..j]).ok()?;
            text.parse::<i64>()
                .map(Id::Int)
                .or_else(|_| text.parse::<u64>().map(Id::UInt))
                .ok()
        }
        _ => None,
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\r' | b'\n') {
        i += 1;
    }
    i
}

/// A JSON-RPC 2.0 success response `{"jsonrpc":"2.0","id":..,"result":..}`.
pub fn response(id: &Id, result: Value) -> Value {
    let mut m = Map::with_capacity(3);
    m.insert("jsonrpc".into(), "2.0".into());
    m.insert("id".into(), id.to_value());
    m.insert("result".into(), result);
    Value::Object(m)
}

/// A JSON-RPC 2.0 error response. Without an id the `id` member is left out, because the
/// 2025-11-25 schema refuses `"id": null`.
pub fn error_response(id: Option<&Id>, error: Value) -> Value {
    let mut m = Map::with_capacity(3);
    m.insert("jsonrpc".into(), "2.0".into());
    if let Some(id) = id {
        m.insert("id".into(), id.to_value());
    }
    m.insert("error".into(), error);
    Value::Object(m)
}

/// A JSON-RPC 2.0 request.
pub fn request(id: &Id, method: &str, params: Value) -> Value {
    let mut m = Map::with_capacity(4);
    m.insert("jsonrpc".into(), "2.0".into());
    m.insert("id".into(), id.to_value());
    m.insert("method".into(), method.into());
    m.insert("params".into(), params);
    Value::Object(m)
}

/// A JSON-RPC 2.0 notification.
pub fn notification(method: &str, params: Value) -> Value {
    let mut m = Map::with_capacity(3);
    m.insert("jsonrpc".into(), "2.0".into());
    m.insert("method".into(), method.into());
    m.insert("params".into(), params);
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn classification_table() {
        let rows: Vec<(&str, Result<Message, ParseError>)> = vec![
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
                Ok(Message::Request {
                    id: Id::Int(1),
                    method: "ping".into(),
                    params: None,
                }),
            ),
            (
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                Ok(Message::Notification {
                    method: "notifications/initialized".into(),
                    params: None,
                }),
            ),
            (
                r#"{"jsonrpc":"2.0","id":"b-1","result":{}}"#,
                Ok(Message::Response {
                    id: Some(Id::Str("b-1".into())),
                    result: json!({}),
                }),
            ),
            (
                r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
                Ok(Message::Response {
                    id: None,
                    result: json!({}),
                }),
            ),
            (
                r#"{"jsonrpc":"2.0","id":[1],"error":{"code":1,"message":"x"}}"#,
                Ok(Message::ErrorResponse {
                    id: None,
                    error: json!({"code":1,"message":"x"}),
                }),
            ),
            (
                r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#,
                Err(ParseError::Shape {
                    id: Some(Id::Int(3)),
                }),
            ),
            (
                r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
                Err(ParseError::Shape { id: None }),
            ),
            (
                r#"{"jsonrpc":"2.0","id":4,"method":7}"#,
                Err(ParseError::Shape {
                    id: Some(Id::Int(4)),
                }),
            ),
            (
                r#"{"jsonrpc":"2.0","id":5,"method":"x","params":3}"#,
                Err(ParseError::Shape {
                    id: Some(Id::Int(5)),
                }),
            ),
            (
                r#"{"jsonrpc":"2.0","id":6}"#,
                Err(ParseError::Shape {
                    id: Some(Id::Int(6)),
                }),
            ),
            (r#"[1,2]"#, Err(ParseError::Shape { id: None })),
            (
                r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
                Err(ParseError::Shape { id: None }),
            ),
            (
                r#"{"jsonrpc":"2.0","id":"7","method":"x""#,
                Err(ParseError::NotJson {
                    id: Some(Id::Str("7".into())),
                }),
            ),
        ];
        for (line, want) in rows {
            assert_eq!(parse(line.as_bytes(), MAX_CLIENT_DEPTH), want, "{line}");
        }
    }

    #[test]
    fn bad_utf8_is_a_parse_error_with_the_id() {
        let mut line = br#"{"jsonrpc":"2.0","id":9,"method":"x","params":{"a":""#.to_vec();
        line.push(0xff);
        line.extend_from_slice(br#""}}"#);
        assert_eq!(
            parse(&line, 64),
            Err(ParseError::NotJson {
                id: Some(Id::Int(9))
            })
        );
    }

    #[test]
    fn depth_limit_counts_levels_outside_strings() {
        let ok = format!("{}{}", "[".repeat(64), "]".repeat(64));
        assert_eq!(nesting_depth(ok.as_bytes(), 64), 64);
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"x","params":{}{}}}"#,
            "[".repeat(64),
            "]".repeat(64)
        );
        assert_eq!(
            parse(deep.as_bytes(), 64),
            Err(ParseError::TooDeep {
                id: Some(Id::Int(2))
            })
        );
        let in_string = r#"{"a":"[[[[[[[[[[[[[[[[[[[[[\"[[[["}"#;
        assert_eq!(nesting_depth(in_string.as_bytes(), 3), 1);
    }

    #[test]
    fn id_recovery_reads_the_head_or_the_tail() {
        let filler = "x".repeat(1000);
        let head = format!(
            r#"{{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{{"t":"{filler}"}}}}"#
        );
        assert_eq!(recover_id(head.as_bytes()), Some(Id::Str("abc".into())));
        let tail = format!(
            r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"t":"{filler}","id":"inner"}},"id":42}}"#
        );
        assert_eq!(recover_id(tail.as_bytes()), Some(Id::Int(42)));
        let escaped = r#"{"t":"\"id\": 5"}"#;
        assert_eq!(recover_id(escaped.as_bytes()), None);
        // A nested "id" is never taken, at the head or at the tail.
        let nested = r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"lookup","arguments":{"id":50}},"id":51,}"#;
        assert_eq!(recover_id(nested.as_bytes()), Some(Id::Int(51)));
        let nested_only = format!(
            r#"{{"jsonrpc":"2.0","method":"x","params":{{"arguments":{{"id":5,"t":"{filler}"}}}}"#
        );
        assert_eq!(recover_id(nested_only.as_bytes()), None);
        let tail_nested = format!(
            r#"{{"jsonrpc":"2.0","method":"x","params":{{"t":"{filler}","arguments":{{"id":7}}}}}}"#
        );
        assert_eq!(recover_id(tail_nested.as_bytes()), None);
        assert_eq!(recover_id(br#"{"id" : -3 }"#), Some(Id::Int(-3)));
        assert_eq!(recover_id(br#"{"id":null}"#), None);
    }

    #[test]
    fn error_response_without_id_has_no_id_member() {
        let v = error_response(None, json!({"code": 1, "message": "m"}));
        assert!(v.get("id").is_none());
    }
}
