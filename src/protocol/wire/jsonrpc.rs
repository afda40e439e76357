//! JSON-RPC 2.0 messages: ids, classification of a parsed line, the nesting-depth check that
//! runs before the JSON parser, and the parse itself (numbers keep their text, unpaired
//! surrogates are replaced on the error path). Pure: bytes and values in, values out.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::id::Id;

/// Nesting limit of a message from the editor (levels of `{`/`[`).
pub const MAX_CLIENT_DEPTH: usize = 64;
/// Nesting limit of a message from the upstream server.
pub const MAX_UPSTREAM_DEPTH: usize = 200;

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

/// Lines up to this many bytes are first checked by counting their `{` and `[` bytes
/// ([`depth_within`]); a longer line goes to [`nesting_depth`] at once (a count of a long
/// line that is mostly one string would cost more than `nesting_depth`'s `memchr` skip).
pub const DEPTH_COUNT_MAX_BYTES: usize = 64 * 1024;

/// Whether the nesting depth of `{`/`[` in a JSON text is at most `limit`, by
/// [`nesting_depth`]'s rule. A text of at most [`DEPTH_COUNT_MAX_BYTES`] bytes with at most
/// `limit` bytes `{` or `[` (inside strings or not) is within it without the scan: its depth
/// cannot exceed its number of openers (the scan stops at every string of a small line: 4 %
/// of a small call's instructions). Any other text is scanned.
pub fn depth_within(bytes: &[u8], limit: usize) -> bool {
    if bytes.len() <= DEPTH_COUNT_MAX_BYTES && openers(bytes) <= limit {
        return true;
    }
    nesting_depth(bytes, limit) <= limit
}

/// The number of bytes `{` and `[` in `bytes`, inside strings or not. `b | 0x20` is `{` for
/// exactly these two bytes (0x5B, 0x7B); the count is summed in bytes over runs of at most
/// 255 (which cannot overflow a byte), so that it is done 32 bytes at a time.
fn openers(bytes: &[u8]) -> usize {
    bytes
        .chunks(u8::MAX as usize)
        .map(|run| {
            run.iter()
                .fold(0u8, |n, &b| n.wrapping_add(u8::from(b | 0x20 == b'{'))) as usize
        })
        .sum()
}

/// The greatest nesting depth of `{`/`[` in a JSON text, not counting brackets inside strings.
/// Stops counting once `limit` is exceeded and returns `limit + 1`. The text need not be valid
/// JSON; the parser decides that afterwards: a `"` opens a string wherever it stands, a `\`
/// in a string escapes the next byte, a closer with nothing open is ignored, and a string the
/// text does not close runs to its end.
///
/// The inside of a string is skipped with `memchr` (to its next `"` or `\`), so a line that
/// is mostly one long string costs little more than a search for two bytes.
pub fn nesting_depth(bytes: &[u8], limit: usize) -> usize {
    let mut depth = 0usize;
    let mut max = 0usize;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        i += 1;
        match b {
            b'"' => loop {
                // Inside a string: on to its next quote or backslash.
                let Some(found) = bytes
                    .get(i..)
                    .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
                else {
                    return max;
                };
                let at = i + found;
                if bytes[at] == b'"' {
                    i = at + 1;
                    break;
                }
                // A backslash: the next byte is escaped, whatever it is.
                i = at + 2;
            },
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
/// deeply nested line never reaches the recursive parser, and every depth up to `max_depth`
/// parses (serde_json's own limit of 128 levels is lifted for that reason).
///
/// Valid JSON passes unchanged: numbers keep their exact text (serde_json
/// `arbitrary_precision`, and [`super::numbers::keep_number_text`] for the exponent), a
/// repeated key keeps its last value, and a string
/// with an unpaired surrogate escape gets U+FFFD in its place (the line is parsed a second time
/// after [`super::surrogates::replace_lone_surrogates`], on the error path only).
///
/// Errors: [`ParseError::NotJson`] for bad UTF-8 or JSON, [`ParseError::TooDeep`] past
/// `max_depth`, [`ParseError::Shape`] for JSON that is not JSON-RPC 2.0. Each carries the id
/// recovered from the line when one is known for sure ([`recover_id`]).
pub fn parse(line: &[u8], max_depth: usize) -> Result<Message, ParseError> {
    classify(parse_value_bounded(line, max_depth)?)
}

/// One line into a JSON value, as [`parse`] reads it before it classifies it: the depth check
/// first, then the parser (an unpaired surrogate escape repaired on the error path).
///
/// Errors: [`ParseError::TooDeep`] past `max_depth`, [`ParseError::NotJson`] for bad UTF-8 or
/// JSON, each with the id recovered from the line.
pub fn parse_value_bounded(line: &[u8], max_depth: usize) -> Result<Value, ParseError> {
    if !depth_within(line, max_depth) {
        return Err(ParseError::TooDeep {
            id: recover_id(line),
        });
    }
    let value = match parse_value(line) {
        Ok(v) => v,
        Err(_) => {
            let fixed = super::surrogates::replace_lone_surrogates(line)
                .and_then(|fixed| parse_value(&fixed).ok());
            match fixed {
                Some(v) => v,
                None => {
                    return Err(ParseError::NotJson {
                        id: recover_id(line),
                    });
                }
            }
        }
    };
    Ok(value)
}

/// One JSON text into a value without serde_json's recursion limit: only for text whose
/// depth [`nesting_depth`] has already bounded.
fn parse_value(text: &[u8]) -> serde_json::Result<Value> {
    let mut de = serde_json::Deserializer::from_slice(text);
    de.disable_recursion_limit();
    let mut value = Value::deserialize(&mut de)?;
    de.end()?;
    super::numbers::keep_number_text(text, &mut value);
    Ok(value)
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

/// The ids that the responses in a JSON-RPC batch (a top-level array: JSON-RPC 2.0 §6, which
/// MCP has not allowed since 2025-06-18) answer, in order: members that are objects with a
/// `result` or an `error`, no `method`, and a usable `id`. A request in a batch names an id of
/// the sender's own, not one of the receiver's requests, so it is left out. Empty for a line
/// that is not an array, is not JSON or is too deep. For the error path of a line that
/// [`parse`] refused: each request a batch answers can then fail at once instead of waiting
/// for its time limit.
pub fn batch_ids(line: &[u8], max_depth: usize) -> Vec<Id> {
    let answers = |item: &&Value| {
        item.get("method").is_none()
            && (item.get("result").is_some() || item.get("error").is_some())
    };
    match parse_value_bounded(line, max_depth) {
        Ok(Value::Array(items)) => items
            .iter()
            .filter(answers)
            .filter_map(|item| item.get("id").and_then(Id::from_value))
            .collect(),
        _ => Vec::new(),
    }
}

/// Recovers the id of a line that cannot be parsed, in one pass over the whole line: the
/// value of the last top-level `"id"` member, as the parser would keep it; `None` when no id
/// is known for sure. The rules are on [`IdScanner`](super::idscan::IdScanner).
pub fn recover_id(line: &[u8]) -> Option<Id> {
    super::idscan::recover_id(line)
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
/// 2025-11-25 schema refuses `"id": null`. `error` is an error object
/// ([`crate::protocol::revisions::errors::ErrorObject`] or its JSON).
pub fn error_response(id: Option<&Id>, error: impl Into<Value>) -> Value {
    let mut m = Map::with_capacity(3);
    m.insert("jsonrpc".into(), "2.0".into());
    if let Some(id) = id {
        m.insert("id".into(), id.to_value());
    }
    m.insert("error".into(), error.into());
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

/// `levels` arrays, each inside the one before (`[[…]]`): a value `levels` deep, for tests
/// of the depth limits.
#[cfg(test)]
pub(crate) fn nested_arrays(levels: usize) -> String {
    format!("{}{}", "[".repeat(levels), "]".repeat(levels))
}

/// The plain depth check (byte by byte), kept to check [`nesting_depth`] against.
#[cfg(test)]
pub(crate) fn nesting_depth_bytewise(bytes: &[u8], limit: usize) -> usize {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn batch_ids_table() {
        let rows: Vec<(&str, Vec<Id>)> = vec![
            (
                r#"[{"jsonrpc":"2.0","id":7,"result":{}}]"#,
                vec![Id::Int(7)],
            ),
            (
                r#"[{"jsonrpc":"2.0","id":"a","result":{}},5,{"id":null,"result":{}},{"jsonrpc":"2.0","id":2,"error":{}}]"#,
                vec![Id::Str("a".into()), Id::Int(2)],
            ),
            // Requests and notifications in a batch name no request of the receiver.
            (
                r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"x"},{"id":3}]"#,
                vec![],
            ),
            (r#"[]"#, vec![]),
            (r#"{"jsonrpc":"2.0","id":7,"result":{}}"#, vec![]),
            (r#"[{"id":1.5,"result":{}}]"#, vec![]),
            (r#"[{"jsonrpc":"2.0","id":7,"result":"#, vec![]),
            (r#"[[[[{"id":1,"result":1}]]]]"#, vec![]),
        ];
        for (line, ids) in rows {
            assert_eq!(batch_ids(line.as_bytes(), 4), ids, "{line}");
        }
    }

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
        let ok = nested_arrays(64);
        assert_eq!(nesting_depth(ok.as_bytes(), 64), 64);
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"x","params":{}}}"#,
            nested_arrays(64)
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
    fn id_recovery_takes_the_top_level_id_anywhere_in_the_line() {
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
    fn numbers_keep_their_text_through_parse_and_serialize() {
        // (written, what goes out): digits stay as written; an exponent is written `e` with
        // a sign by serde_json (the same number).
        let rows = [
            (
                "123456789012345678901234567890",
                "123456789012345678901234567890",
            ),
            (
                "-98765432109876543210987654321",
                "-98765432109876543210987654321",
            ),
            ("1e400", "1e400"),
            ("-1E-400", "-1E-400"),
            ("2.5E+3", "2.5E+3"),
            ("1E5", "1E5"),
            ("0.10", "0.10"),
            ("-0", "-0"),
            ("-0.0", "-0.0"),
            ("1.0", "1.0"),
            (
                "0.1000000000000000055511151231257827",
                "0.1000000000000000055511151231257827",
            ),
            ("18446744073709551616", "18446744073709551616"),
        ];
        for (written, out) in rows {
            let line = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"n":[{written}]}}}}"#);
            let Ok(Message::Response { result, .. }) = parse(line.as_bytes(), MAX_UPSTREAM_DEPTH)
            else {
                panic!("{written} did not parse");
            };
            let text = serde_json::to_string(&result).unwrap_or_default();
            assert_eq!(text, format!(r#"{{"n":[{out}]}}"#), "{written}");
        }
    }

    #[test]
    fn unpaired_surrogates_are_replaced_and_everything_else_is_kept() {
        let line = r#"{"jsonrpc":"2.0","id":"s\ud83d","method":"tools/call","params":{"arguments":{"t":"snippet \ud83d","u":"\udc00\ud83d\ude00","n":1e400}}}"#;
        let Ok(Message::Request { id, params, .. }) = parse(line.as_bytes(), MAX_CLIENT_DEPTH)
        else {
            panic!("not parsed");
        };
        assert_eq!(id, Id::Str("s\u{fffd}".into()));
        let args = &params.unwrap_or_default()["arguments"];
        assert_eq!(args["t"], "snippet \u{fffd}");
        assert_eq!(args["u"], "\u{fffd}\u{1f600}");
        assert_eq!(args["n"].as_number().map(|n| n.as_str()), Some("1e400"));
        // A line that is bad for another reason stays a parse error.
        let bad = r#"{"jsonrpc":"2.0","id":2,"method":"x","params":{"t":"\ud83d",}}"#;
        assert_eq!(
            parse(bad.as_bytes(), MAX_CLIENT_DEPTH),
            Err(ParseError::NotJson {
                id: Some(Id::Int(2))
            })
        );
    }

    #[test]
    fn every_depth_up_to_the_limit_parses_even_past_serde_jsons_own_128() {
        for depth in [127, 128, 129, MAX_UPSTREAM_DEPTH] {
            // The message and `result` are two levels; the arrays make up the rest.
            let arrays = depth - 2;
            let line = format!(
                r#"{{"jsonrpc":"2.0","id":1,"result":{{"a":{}}}}}"#,
                nested_arrays(arrays)
            );
            assert_eq!(nesting_depth(line.as_bytes(), MAX_UPSTREAM_DEPTH), depth);
            assert!(
                matches!(
                    parse(line.as_bytes(), MAX_UPSTREAM_DEPTH),
                    Ok(Message::Response { .. })
                ),
                "depth {depth}"
            );
        }
    }

    #[test]
    fn duplicate_ids_take_the_last_on_every_path() {
        // Parsed: the parser keeps the last member.
        assert_eq!(
            parse(br#"{"jsonrpc":"1.0","id":1,"id":2}"#, MAX_CLIENT_DEPTH),
            Err(ParseError::Shape {
                id: Some(Id::Int(2))
            })
        );
        // Too deep and not JSON: the recovery keeps the last too.
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"a":{}}},"id":2}}"#,
            nested_arrays(70)
        );
        assert_eq!(
            parse(deep.as_bytes(), MAX_CLIENT_DEPTH),
            Err(ParseError::TooDeep {
                id: Some(Id::Int(2))
            })
        );
        assert_eq!(
            parse(br#"{"id":1,"x":nope,"id":"b"}"#, MAX_CLIENT_DEPTH),
            Err(ParseError::NotJson {
                id: Some(Id::Str("b".into()))
            })
        );
    }

    #[test]
    fn ids_are_integers_written_as_integers_within_64_bits_or_strings() {
        let rows = [
            ("1", Some(Id::Int(1))),
            ("-0", Some(Id::Int(0))),
            (
                "9223372036854775808",
                Some(Id::UInt(9_223_372_036_854_775_808)),
            ),
            ("18446744073709551616", None),
            ("1.0", None),
            ("1e2", None),
            ("1.5", None),
            (r#""x""#, Some(Id::Str("x".into()))),
            ("null", None),
            ("true", None),
            ("[1]", None),
        ];
        for (text, want) in rows {
            let v: Value = serde_json::from_str(text).unwrap_or_default();
            assert_eq!(Id::from_value(&v), want, "{text}");
            let line = format!(r#"{{"id":{text},"x":nope}}"#);
            assert_eq!(recover_id(line.as_bytes()), want, "recovered {text}");
        }
    }

    #[test]
    fn depth_check_table() {
        let rows: Vec<(&[u8], usize, usize)> = vec![
            (b"", 5, 0),
            (b"{}", 5, 1),
            (b"[[]][[[]]]", 5, 3),
            (b"]]]][[", 5, 2),
            (br#"{"a":"}}}{{{"}"#, 5, 1),
            (br#"{"a":"\"[[["}"#, 5, 1),
            (br#"{"a":"\\"[[["}"#, 5, 4),
            (b"[\"unclosed [[[[", 5, 1),
            (b"[\"ends in a backslash \\", 5, 1),
            (b"[\"\\", 5, 1),
            (b"[\xff\"\xfe[\"[", 5, 2),
            (b"[[[[[[", 3, 4),
            (b"[[[", 3, 3),
        ];
        for (text, limit, want) in rows {
            let shown = String::from_utf8_lossy(text);
            assert_eq!(nesting_depth(text, limit), want, "{shown}");
            assert_eq!(nesting_depth_bytewise(text, limit), want, "{shown}");
            assert_eq!(depth_within(text, limit), want <= limit, "{shown}");
        }
    }

    #[test]
    fn openers_are_counted_over_runs_of_any_length() {
        assert_eq!(openers(b""), 0);
        assert_eq!(openers(br#"{"a":["{",{}]}"#), 4);
        // No other byte is taken for an opener.
        let others: Vec<u8> = (0..=255u8).filter(|b| !matches!(b, b'{' | b'[')).collect();
        assert_eq!(openers(&others), 0);
        for len in [254, 255, 256, 510, 511, 1000] {
            assert_eq!(openers(&vec![b'['; len]), len, "{len}");
            assert_eq!(openers(&b"{x".repeat(len)), len, "{len}");
        }
    }

    /// The count of openers decides only what the scan would decide the same way: more
    /// openers than the limit inside strings pass, a line over `DEPTH_COUNT_MAX_BYTES` is
    /// scanned (within the limit or not).
    #[test]
    fn depth_within_counts_openers_then_scans() {
        let in_strings = br#"{"a":"[[[[[[[[","b":"{{{{{{{{"}"#;
        assert!(depth_within(in_strings, 1));
        assert!(!depth_within(b"[[", 1));
        assert!(depth_within(b"[[", 2));
        let filler = "[".repeat(DEPTH_COUNT_MAX_BYTES);
        let long_shallow = format!(r#"{{"t":"{filler}"}}"#);
        assert!(long_shallow.len() > DEPTH_COUNT_MAX_BYTES);
        assert!(depth_within(long_shallow.as_bytes(), 1));
        let long_deep = format!(r#"[[[{{"t":"{filler}"}}]]]"#);
        assert!(depth_within(long_deep.as_bytes(), 4));
        assert!(!depth_within(long_deep.as_bytes(), 3));
    }

    /// The memchr scan gives the byte-by-byte check's answer on random JSON-ish bytes: strings
    /// with escapes, nested and unbalanced brackets, bytes that are not UTF-8, any limit.
    #[test]
    fn depth_check_matches_the_bytewise_check() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, TestRunner};
        let piece = prop_oneof![
            4 => Just(b"\"".to_vec()),
            3 => Just(b"\\".to_vec()),
            2 => Just(b"\\\"".to_vec()),
            2 => Just(b"\\\\".to_vec()),
            3 => Just(b"{".to_vec()),
            3 => Just(b"}".to_vec()),
            3 => Just(b"[".to_vec()),
            3 => Just(b"]".to_vec()),
            2 => Just(b":".to_vec()),
            2 => Just(b",".to_vec()),
            1 => Just(b" \r\n\t".to_vec()),
            2 => Just(b"\\u00e9".to_vec()),
            3 => "[a-z0-9]{1,40}".prop_map(String::into_bytes),
            2 => proptest::collection::vec(any::<u8>(), 1..8),
            1 => proptest::collection::vec(0x80u8.., 1..4),
        ];
        let text = proptest::collection::vec(piece, 0..80).prop_map(|p| p.concat());
        let mut runner = TestRunner::new(Config {
            cases: 4096,
            failure_persistence: None,
            ..Config::default()
        });
        let result = runner.run(&(text, 0usize..12), |(text, limit)| {
            prop_assert_eq!(
                nesting_depth(&text, limit),
                nesting_depth_bytewise(&text, limit),
                "{:?}",
                String::from_utf8_lossy(&text)
            );
            prop_assert_eq!(
                depth_within(&text, limit),
                nesting_depth_bytewise(&text, limit) <= limit
            );
            Ok(())
        });
        assert!(result.is_ok(), "{result:?}");
    }

    #[test]
    fn error_response_without_id_has_no_id_member() {
        let v = error_response(None, json!({"code": 1, "message": "m"}));
        assert!(v.get("id").is_none());
    }
}
