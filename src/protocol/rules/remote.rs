//! The rules of a 2026-07-28 upstream at a URL that touch messages, without I/O: the values of
//! the `Mcp-Name` and `Mcp-Param-*` headers (2026-07-28 basic/transports/http, "Standard
//! headers"), the check of the `x-mcp-header` annotations of `tools/list` (a tool whose
//! annotation breaks a rule is dropped), and the icons a remote server may show (`data:` only).
//! The HTTP transport (`transport::http`) applies them; nothing here knows HTTP.

use base64::Engine;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};

/// The schema keyword that maps a tool argument to an `Mcp-Param-{Name}` header.
pub const X_MCP_HEADER: &str = "x-mcp-header";
/// The prefix of the header names of annotated tool arguments.
pub const PARAM_HEADER_PREFIX: &str = "Mcp-Param-";
/// Largest integer an `x-mcp-header` integer argument may carry (2^53 - 1).
pub const MAX_HEADER_INTEGER: i64 = (1 << 53) - 1;

const BASE64_START: &str = "=?base64?";
const BASE64_END: &str = "?=";

/// A header value as the spec sends it: as it is when it is safe header text (visible ASCII,
/// space and tab, no leading or trailing whitespace, not itself looking like an encoded
/// value), else `=?base64?<standard Base64 of the UTF-8 bytes>?=`.
pub fn header_value(value: &str) -> String {
    let looks_encoded = value.starts_with(BASE64_START) && value.ends_with(BASE64_END);
    let safe = value
        .bytes()
        .all(|b| (0x21..=0x7e).contains(&b) || b == b' ' || b == b'\t')
        && !value.starts_with([' ', '\t'])
        && !value.ends_with([' ', '\t'])
        && !looks_encoded;
    if safe {
        value.to_owned()
    } else {
        format!(
            "{BASE64_START}{}{BASE64_END}",
            base64::engine::general_purpose::STANDARD.encode(value.as_bytes())
        )
    }
}

/// The `Mcp-Name` value of a request: `params.name` of `tools/call` and `prompts/get`,
/// `params.uri` of `resources/read`, encoded by [`header_value`]; `None` for other methods
/// or when the member is not a string.
#[cfg(test)]
pub fn mcp_name(method: &str, params: &Value) -> Option<String> {
    let key = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        _ => return None,
    };
    params.get(key)?.as_str().map(header_value)
}

/// The type of an annotated argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamType {
    String,
    Integer,
    Boolean,
}

/// One `x-mcp-header` annotation of a tool: the header name after `Mcp-Param-`, the path of
/// property names from `arguments` to the value, its type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderParam {
    /// `{Name}` of `Mcp-Param-{Name}`.
    pub name: String,
    /// The property names from the arguments object down to the value.
    pub path: Vec<String>,
    /// The declared type.
    pub kind: ParamType,
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Schema keywords whose values are data, not schemas (an `x-mcp-header` key inside is no
/// annotation).
const DATA_KEYWORDS: &[&str] = &["const", "default", "enum", "examples"];

/// Why a tool's `x-mcp-header` annotations break a rule (each names the header, never a value).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AnnotationError {
    /// An `x-mcp-header` value that is not a string.
    #[error("an x-mcp-header value is not a string")]
    NotAString,
    /// A name that is empty or not an RFC 9110 token.
    #[error("the header name {0:?} is not a token")]
    NotAToken(String),
    /// A name used twice (case-insensitively).
    #[error("the header name {0:?} is used twice")]
    UsedTwice(String),
    /// An annotation not reachable through `properties` alone (inside `items`, `anyOf`,
    /// `$ref`, ..., or on the schema's root).
    #[error("the header {0:?} is on a property not reachable through properties alone")]
    Unreachable(String),
    /// An annotation on a property whose type is not `string`, `integer` or `boolean`.
    #[error("the header {0:?} is on a property that is not a string, integer or boolean")]
    WrongType(String),
}

/// The `x-mcp-header` annotations of an `inputSchema`, or why the tool breaks a rule: a name
/// that is empty or not an RFC 9110 token, a name used twice (case-insensitively), a type
/// other than `string`/`integer`/`boolean`, or an annotation not reachable through
/// `properties` alone (inside `items`, `anyOf`, `$ref`, ...).
pub fn header_params(input_schema: &Value) -> Result<Vec<HeaderParam>, AnnotationError> {
    let mut out = Vec::new();
    walk(input_schema, &mut Vec::new(), true, &mut out)?;
    let mut seen = HashSet::new();
    for p in &out {
        if !seen.insert(p.name.to_ascii_lowercase()) {
            return Err(AnnotationError::UsedTwice(p.name.clone()));
        }
    }
    Ok(out)
}

/// Walks a schema; `reachable` is true while the path from the root went through
/// `properties` keys alone.
fn walk(
    schema: &Value,
    path: &mut Vec<String>,
    reachable: bool,
    out: &mut Vec<HeaderParam>,
) -> Result<(), AnnotationError> {
    match schema {
        Value::Array(items) => {
            for item in items {
                walk(item, path, false, out)?;
            }
        }
        Value::Object(map) => {
            if let Some(name) = map.get(X_MCP_HEADER) {
                out.push(annotation(map, name, path, reachable)?);
            }
            for (key, value) in map {
                if key == X_MCP_HEADER || DATA_KEYWORDS.contains(&key.as_str()) {
                    continue;
                }
                if key == "properties"
                    && let Value::Object(props) = value
                {
                    for (prop, sub) in props {
                        path.push(prop.clone());
                        let r = walk(sub, path, reachable, out);
                        path.pop();
                        r?;
                    }
                } else {
                    walk(value, path, false, out)?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

fn annotation(
    map: &Map<String, Value>,
    name: &Value,
    path: &[String],
    reachable: bool,
) -> Result<HeaderParam, AnnotationError> {
    let Some(name) = name.as_str() else {
        return Err(AnnotationError::NotAString);
    };
    if name.is_empty() || !name.bytes().all(is_tchar) {
        return Err(AnnotationError::NotAToken(name.to_owned()));
    }
    if !reachable || path.is_empty() {
        return Err(AnnotationError::Unreachable(name.to_owned()));
    }
    let kind = match map.get("type").and_then(Value::as_str) {
        Some("string") => ParamType::String,
        Some("integer") => ParamType::Integer,
        Some("boolean") => ParamType::Boolean,
        _ => return Err(AnnotationError::WrongType(name.to_owned())),
    };
    Ok(HeaderParam {
        name: name.to_owned(),
        path: path.to_vec(),
        kind,
    })
}

/// The `Mcp-Param-*` headers of a `tools/call`: for each annotation whose argument is present
/// and not null, `(header name, value)`; a value whose type is not the declared one is left
/// out (the server refuses the call as its schema says).
pub fn param_headers(params: &[HeaderParam], arguments: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for p in params {
        let mut v = arguments;
        for key in &p.path {
            match v.get(key) {
                Some(next) => v = next,
                None => {
                    v = &Value::Null;
                    break;
                }
            }
        }
        let text = match (p.kind, v) {
            (ParamType::String, Value::String(s)) => s.clone(),
            (ParamType::Integer, Value::Number(n))
                if n.as_i64().is_some_and(|i| i.abs() <= MAX_HEADER_INTEGER) =>
            {
                n.to_string()
            }
            (ParamType::Boolean, Value::Bool(b)) => b.to_string(),
            _ => continue,
        };
        out.push((
            format!("{PARAM_HEADER_PREFIX}{}", p.name),
            header_value(&text),
        ));
    }
    out
}

/// What [`check_tools_list`] found in one `tools/list` result.
#[derive(Debug, Default)]
pub struct ToolsChecked {
    /// The annotations of the tools kept, by tool name (tools without any are absent).
    pub params: HashMap<String, Vec<HeaderParam>>,
    /// The names of the tools kept.
    pub kept: Vec<String>,
    /// The names of the tools dropped, each with its warning line.
    pub dropped: Vec<(String, String)>,
}

/// Drops from a `tools/list` result every tool whose annotations break a rule, and returns
/// the annotations of the others by tool name, and one warning line per dropped tool
/// (2026-07-28: an HTTP client MUST drop such a tool, and SHOULD log a warning).
pub fn check_tools_list(result: &mut Value) -> ToolsChecked {
    let mut params = HashMap::new();
    let mut kept = Vec::new();
    let mut dropped = Vec::new();
    let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut) else {
        return ToolsChecked::default();
    };
    tools.retain(|tool| {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
        match header_params(tool.get("inputSchema").unwrap_or(&Value::Null)) {
            Ok(found) => {
                if !found.is_empty() {
                    params.insert(name.to_owned(), found);
                }
                kept.push(name.to_owned());
                true
            }
            Err(why) => {
                let warning = format!(
                    "dropped the tool {name:?} from tools/list: {why} (2026-07-28 x-mcp-header rules)"
                );
                dropped.push((name.to_owned(), warning));
                false
            }
        }
    });
    ToolsChecked {
        params,
        kept,
        dropped,
    }
}

/// Keeps only the `data:` icons of one item (a tool, a prompt, a resource, a template, the
/// server's info); an item left without icons loses the member. True when one was removed.
fn keep_data_icons(item: &mut Value) -> bool {
    let Some(icons) = item.get_mut("icons").and_then(Value::as_array_mut) else {
        return false;
    };
    let before = icons.len();
    icons.retain(|icon| {
        icon.get("src").and_then(Value::as_str).is_some_and(|src| {
            src.get(..5)
                .is_some_and(|s| s.eq_ignore_ascii_case("data:"))
        })
    });
    let removed = icons.len() != before;
    if icons.is_empty()
        && let Some(map) = item.as_object_mut()
    {
        map.remove("icons");
    }
    removed
}

/// How many items lost an icon to [`filter_icons_report`].
#[cfg(test)]
pub fn filter_icons(method: &str, result: &mut Value) -> usize {
    filter_icons_report(method, result).len()
}

/// For an upstream at a URL only `data:` icons reach the editor: an editor loads an `http:`
/// or `https:` icon of what it takes for a local server, and a `file:` icon would give a
/// remote server the trust of a local process. Applies to the result of `server/discover`
/// (`serverInfo` and the server info `_meta`) and of the four list methods. Names each item
/// that lost an icon: its `name` quoted (a resource without one: its `uri`, a template: its
/// `uriTemplate`), else `#index`; `serverInfo` for the server's info.
pub fn filter_icons_report(method: &str, result: &mut Value) -> Vec<String> {
    let list = match method {
        "tools/list" => "tools",
        "prompts/list" => "prompts",
        "resources/list" => "resources",
        "resources/templates/list" => "resourceTemplates",
        "server/discover" => {
            let mut named = Vec::new();
            if let Some(info) = result.get_mut("serverInfo")
                && keep_data_icons(info)
            {
                named.push("serverInfo".to_owned());
            }
            if let Some(info) = result
                .get_mut("_meta")
                .and_then(|m| m.get_mut(crate::protocol::revisions::modern::META_SERVER_INFO))
                && keep_data_icons(info)
            {
                named.push("serverInfo".to_owned());
            }
            return named;
        }
        _ => return Vec::new(),
    };
    let mut named = Vec::new();
    if let Some(items) = result.get_mut(list).and_then(Value::as_array_mut) {
        for (index, item) in items.iter_mut().enumerate() {
            if keep_data_icons(item) {
                named.push(icon_item_label(item, index));
            }
        }
    }
    named
}

/// How [`filter_icons_report`] names a list item.
fn icon_item_label(item: &Value, index: usize) -> String {
    ["name", "uri", "uriTemplate"]
        .iter()
        .find_map(|k| item.get(*k).and_then(Value::as_str))
        .map_or_else(|| format!("#{index}"), |n| format!("{n:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_value_that_is_not_safe_header_text_is_sent_in_base64() {
        let table = [
            ("get_weather", "get_weather"),
            ("file:///a b.txt", "file:///a b.txt"),
            ("", ""),
            ("Grüße", "=?base64?R3LDvMOfZQ==?="),
            (" lead", "=?base64?IGxlYWQ=?="),
            ("trail\t", "=?base64?dHJhaWwJ?="),
            ("a\nb", "=?base64?YQpi?="),
            ("=?base64?abc?=", "=?base64?PT9iYXNlNjQ/YWJjPz0=?="),
            ("日本", "=?base64?5pel5pys?="),
        ];
        for (value, sent) in table {
            assert_eq!(header_value(value), sent, "{value:?}");
        }
    }

    #[test]
    fn mcp_name_is_the_name_or_the_uri_of_three_methods() {
        assert_eq!(
            mcp_name("tools/call", &json!({"name": "échec"})),
            Some("=?base64?w6ljaGVj?=".into())
        );
        assert_eq!(
            mcp_name("prompts/get", &json!({"name": "p"})),
            Some("p".into())
        );
        assert_eq!(
            mcp_name("resources/read", &json!({"uri": "file:///x"})),
            Some("file:///x".into())
        );
        assert_eq!(mcp_name("tools/list", &json!({"name": "x"})), None);
        assert_eq!(mcp_name("tools/call", &json!({"name": 3})), None);
    }

    fn schema(props: Value) -> Value {
        json!({"type": "object", "properties": props})
    }

    #[test]
    fn valid_annotations_become_header_params() {
        let s = schema(json!({
            "region": {"type": "string", "x-mcp-header": "Region"},
            "opts": {"type": "object", "properties": {
                "n": {"type": "integer", "x-mcp-header": "N"},
                "dry": {"type": "boolean", "x-mcp-header": "Dry-Run"}
            }},
            "x-mcp-header": {"type": "string"},
            "plain": {"type": "string", "default": {"x-mcp-header": "Not-One"}}
        }));
        assert_eq!(
            header_params(&s),
            Ok(vec![
                HeaderParam {
                    name: "Region".into(),
                    path: vec!["region".into()],
                    kind: ParamType::String
                },
                HeaderParam {
                    name: "N".into(),
                    path: vec!["opts".into(), "n".into()],
                    kind: ParamType::Integer
                },
                HeaderParam {
                    name: "Dry-Run".into(),
                    path: vec!["opts".into(), "dry".into()],
                    kind: ParamType::Boolean
                },
            ])
        );
    }

    #[test]
    fn each_broken_rule_is_named() {
        let table = [
            (
                schema(json!({"a": {"type": "string", "x-mcp-header": ""}})),
                "the header name \"\" is not a token",
            ),
            (
                schema(json!({"a": {"type": "string", "x-mcp-header": "a b"}})),
                "the header name \"a b\" is not a token",
            ),
            (
                schema(json!({"a": {"type": "string", "x-mcp-header": "X\r\n"}})),
                "the header name \"X\\r\\n\" is not a token",
            ),
            (
                schema(json!({"a": {"type": "number", "x-mcp-header": "A"}})),
                "the header \"A\" is on a property that is not a string, integer or boolean",
            ),
            (
                schema(json!({"a": {"x-mcp-header": "A"}})),
                "the header \"A\" is on a property that is not a string, integer or boolean",
            ),
            (
                schema(json!({
                    "a": {"type": "string", "x-mcp-header": "Dup"},
                    "b": {"type": "string", "x-mcp-header": "dup"}
                })),
                "the header name \"dup\" is used twice",
            ),
            (
                schema(
                    json!({"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "I"}}}),
                ),
                "the header \"I\" is on a property not reachable through properties alone",
            ),
            (
                schema(json!({"a": {"anyOf": [{"type": "string", "x-mcp-header": "U"}]}})),
                "the header \"U\" is on a property not reachable through properties alone",
            ),
            (
                json!({"type": "object", "$defs": {"d": {"type": "string", "x-mcp-header": "D"}}}),
                "the header \"D\" is on a property not reachable through properties alone",
            ),
            (
                json!({"type": "string", "x-mcp-header": "Root"}),
                "the header \"Root\" is on a property not reachable through properties alone",
            ),
            (
                schema(json!({"a": {"type": "string", "x-mcp-header": 7}})),
                "an x-mcp-header value is not a string",
            ),
        ];
        for (s, why) in table {
            assert_eq!(
                header_params(&s).map_err(|e| e.to_string()),
                Err(why.to_string()),
                "{s}"
            );
        }
    }

    #[test]
    fn param_headers_take_present_values_of_the_declared_type() {
        let params = header_params(&schema(json!({
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "dry": {"type": "boolean", "x-mcp-header": "Dry"},
            "big": {"type": "integer", "x-mcp-header": "Big"},
            "gone": {"type": "string", "x-mcp-header": "Gone"},
            "nul": {"type": "string", "x-mcp-header": "Nul"}
        })))
        .unwrap_or_default();
        let args = json!({"region": "eu west ", "n": -42, "dry": false,
                          "big": 9007199254740992_i64, "nul": null});
        assert_eq!(
            param_headers(&params, &args),
            vec![
                ("Mcp-Param-Region".into(), "=?base64?ZXUgd2VzdCA=?=".into()),
                ("Mcp-Param-N".into(), "-42".into()),
                ("Mcp-Param-Dry".into(), "false".into()),
            ]
        );
    }

    #[test]
    fn tools_with_broken_annotations_are_dropped_with_a_warning() {
        let mut result = json!({"tools": [
            {"name": "ok", "inputSchema": schema(json!({"r": {"type": "string", "x-mcp-header": "R"}}))},
            {"name": "bad", "inputSchema": schema(json!({"r": {"type": "number", "x-mcp-header": "R"}}))},
            {"name": "plain", "inputSchema": {"type": "object"}}
        ], "resultType": "complete"});
        let ToolsChecked {
            params,
            kept,
            dropped,
        } = check_tools_list(&mut result);
        assert_eq!(kept, vec!["ok".to_string(), "plain".to_string()]);
        let names: Vec<_> = result["tools"]
            .as_array()
            .map(|t| t.iter().map(|t| t["name"].clone()).collect())
            .unwrap_or_default();
        assert_eq!(names, vec![json!("ok"), json!("plain")]);
        assert_eq!(params.len(), 1);
        assert_eq!(params["ok"][0].name, "R");
        assert_eq!(
            dropped,
            vec![(
                "bad".to_string(),
                "dropped the tool \"bad\" from tools/list: the header \"R\" is on a property that is not a string, integer or boolean (2026-07-28 x-mcp-header rules)"
                    .to_string()
            )]
        );
    }

    #[test]
    fn the_report_of_the_icon_rule_names_each_item_that_lost_an_icon() {
        let mut result = json!({"tools": [
            {"name": "a", "icons": [{"src": "https://x/a.png"}]},
            {"name": "b", "icons": [{"src": "data:image/png;base64,AA=="}]},
            {"icons": [{"src": "file:///c.png"}, {"src": "data:,x"}]}
        ]});
        assert_eq!(
            filter_icons_report("tools/list", &mut result),
            vec!["\"a\"".to_string(), "#2".to_string()]
        );
        assert_eq!(
            result,
            json!({"tools": [
                {"name": "a"},
                {"name": "b", "icons": [{"src": "data:image/png;base64,AA=="}]},
                {"icons": [{"src": "data:,x"}]}
            ]})
        );
        let mut res = json!({"resources": [{"uri": "file:///r", "icons": [{"src": "http://x"}]}]});
        assert_eq!(
            filter_icons_report("resources/list", &mut res),
            vec!["\"file:///r\"".to_string()]
        );
        let mut discover = json!({"serverInfo": {"name": "s", "icons": [{"src": "https://x"}]}});
        assert_eq!(
            filter_icons_report("server/discover", &mut discover),
            vec!["serverInfo".to_string()]
        );
        assert!(filter_icons_report("tools/call", &mut json!({})).is_empty());
    }

    #[test]
    fn only_data_icons_stay() {
        let mut r = json!({"tools": [
            {"name": "a", "icons": [
                {"src": "https://x/a.png"}, {"src": "DATA:image/png;base64,AA=="},
                {"src": "file:///a.png"}, {"src": "http://x/a.png"}
            ]},
            {"name": "b", "icons": [{"src": "https://x/b.png"}]},
            {"name": "c"}
        ]});
        assert_eq!(filter_icons("tools/list", &mut r), 2);
        assert_eq!(
            r,
            json!({"tools": [
                {"name": "a", "icons": [{"src": "DATA:image/png;base64,AA=="}]},
                {"name": "b"},
                {"name": "c"}
            ]})
        );
        let mut d = json!({"_meta": {"io.modelcontextprotocol/serverInfo":
            {"name": "s", "icons": [{"src": "https://i"}, {"src": "data:image/svg+xml,<svg/>"}]}}});
        assert_eq!(filter_icons("server/discover", &mut d), 1);
        assert_eq!(
            d,
            json!({"_meta": {"io.modelcontextprotocol/serverInfo":
                {"name": "s", "icons": [{"src": "data:image/svg+xml,<svg/>"}]}}})
        );
        let mut t =
            json!({"resourceTemplates": [{"uriTemplate": "x", "icons": [{"src": "data:,"}]}]});
        assert_eq!(filter_icons("resources/templates/list", &mut t), 0);
        let mut other = json!({"content": [], "icons": [{"src": "https://x"}]});
        assert_eq!(filter_icons("tools/call", &mut other), 0);
    }
}
