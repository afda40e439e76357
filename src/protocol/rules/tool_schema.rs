//! A 2026-07-28 tool in the form of the 2025-11-25 `Tool` schema: its input and output JSON
//! schemas adapted where 2026-07-28 admits what the 2025-11-25 schema refuses, each change
//! reported as a [`Note`].

use crate::protocol::revisions::note::{LineLevel, Note, debug};
use serde_json::{Map, Value, json};

/// Adapts one tool of a `tools/list` result to the 2025-11-25 `Tool` schema: both schemas
/// go through `adapt_schema`, an `outputSchema` whose root is not `type: "object"` is
/// dropped (2025-11-25 requires it; 2026-07-28 admits any schema), and so is `execution`
/// (2025-11-25's task support of the tool, which 2026-07-28 no longer defines and so admits
/// with any value; the bridge offers the editor no tasks).
pub fn adapt_tool(tool: &mut Value, notes: &mut Vec<Note>) {
    let name = tool
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_string();
    let Some(t) = tool.as_object_mut() else {
        return;
    };
    if t.remove("execution").is_some() {
        debug(
            notes,
            format!("tools/list: tool {name:?}: dropped execution (the bridge offers no tasks)"),
        );
    }
    if let Some(schema) = t.get_mut("inputSchema") {
        adapt_schema(schema, &At::root(&name, "inputSchema"), notes);
    }
    let drop_output = t
        .get("outputSchema")
        .is_some_and(|s| s.get("type").and_then(Value::as_str) != Some("object"));
    if drop_output {
        t.remove("outputSchema");
        debug(
            notes,
            format!(
                "tools/list: tool {name:?}: dropped an outputSchema whose root is not an object"
            ),
        );
    } else if let Some(schema) = t.get_mut("outputSchema") {
        adapt_schema(schema, &At::root(&name, "outputSchema"), notes);
    }
}

/// JSON Schema keywords whose value maps names to schemas. A `null` one becomes `{}`, and
/// so does a `null` entry (the schema that admits everything).
const SCHEMA_MAP_KEYWORDS: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// JSON Schema keywords whose value is one schema (`items` may also be an array, draft 4-7).
const SCHEMA_KEYWORDS: [&str; 11] = [
    "items",
    "additionalItems",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
];

/// JSON Schema keywords whose value is a list of alternatives or conditions; a `null` entry is
/// dropped, and the keyword too when no entry is left.
const SCHEMA_LIST_KEYWORDS: [&str; 3] = ["anyOf", "oneOf", "allOf"];

/// Keywords whose value is instance data, where `null` is a meaningful value: kept.
const DATA_KEYWORDS: [&str; 2] = ["const", "default"];

/// Where in a tool a schema is, for the notes: the tool name and a path such as
/// `inputSchema/properties/a/items`.
struct At<'a> {
    tool: &'a str,
    path: String,
}

impl<'a> At<'a> {
    fn root(tool: &'a str, member: &str) -> Self {
        At {
            tool,
            path: member.to_string(),
        }
    }

    fn child(&self, part: &str) -> Self {
        At {
            tool: self.tool,
            path: format!("{}/{part}", self.path),
        }
    }

    fn note(&self, notes: &mut Vec<Note>, info: bool, what: &str) {
        notes.push(Note {
            level: if info {
                LineLevel::Info
            } else {
                LineLevel::Debug
            },
            text: format!("tools/list: tool {:?}: {}: {what}", self.tool, self.path),
        });
    }
}

/// Adapts one JSON Schema (an `inputSchema`, an `outputSchema` or a schema inside them, at any
/// depth) to what the 2025-11-25 `Tool` schema and its validating editors accept. Each rule
/// is a debug note unless said otherwise:
/// - a `null` member is dropped, except `const` and `default` (instance data, kept) and the
///   name-to-schema maps (`properties`, `patternProperties`, `$defs`, `definitions`,
///   `dependentSchemas`), which become `{}`;
/// - a `null` entry of such a map becomes `{}`; a `null` entry of `anyOf`/`oneOf`/`allOf` is
///   dropped (the keyword too when none is left); a `null` entry of `prefixItems` or of an
///   `items` array becomes `{}` (positions are kept);
/// - `properties` that is not an object is dropped; a boolean property schema becomes `{}`
///   (true) or `{"not": {}}` (false), any other non-object property schema becomes `{}`;
/// - `required` that is not an array is dropped, and its entries that are not strings;
/// - an array schema without `items` gets `items: {}` (info note).
fn adapt_schema(schema: &mut Value, at: &At<'_>, notes: &mut Vec<Note>) {
    let Some(s) = schema.as_object_mut() else {
        return;
    };
    drop_null_members(s, at, notes);
    if s.get("properties").is_some_and(|p| !p.is_object()) {
        s.remove("properties");
        at.note(notes, false, "dropped a properties that is not an object");
    }
    if let Some(required) = s.get_mut("required") {
        match required {
            Value::Array(names) => {
                let before = names.len();
                names.retain(Value::is_string);
                if names.len() != before {
                    at.note(
                        notes,
                        false,
                        "dropped required entries that are not strings",
                    );
                }
            }
            _ => {
                s.remove("required");
                at.note(notes, false, "dropped a required that is not an array");
            }
        }
    }
    let is_array = match s.get("type") {
        Some(Value::String(t)) => t == "array",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "array"),
        _ => false,
    };
    if is_array && !s.contains_key("items") {
        s.insert("items".into(), json!({}));
        at.note(notes, true, "an array schema without items got items: {}");
    }
    if let Some(Value::Object(props)) = s.get_mut("properties") {
        for (key, prop) in props.iter_mut() {
            let here = at.child(&format!("properties/{key}"));
            let replaced = match prop {
                Value::Bool(true) => Some(("a boolean schema became an object", json!({}))),
                Value::Bool(false) => {
                    Some(("a boolean schema became an object", json!({"not": {}})))
                }
                Value::Object(_) => None,
                _ => Some(("a schema that is not an object became {}", json!({}))),
            };
            if let Some((what, new)) = replaced {
                *prop = new;
                here.note(notes, false, what);
            }
            adapt_schema(prop, &here, notes);
        }
    }
    for key in SCHEMA_MAP_KEYWORDS
        .into_iter()
        .filter(|k| *k != "properties")
    {
        if let Some(Value::Object(map)) = s.get_mut(key) {
            for (name, sub) in map.iter_mut() {
                let here = at.child(&format!("{key}/{name}"));
                if sub.is_null() {
                    *sub = json!({});
                    here.note(notes, false, "a null schema became {}");
                }
                adapt_schema(sub, &here, notes);
            }
        }
    }
    for key in SCHEMA_KEYWORDS {
        match s.get_mut(key) {
            Some(Value::Array(subs)) if key == "items" => {
                adapt_positional(subs, &at.child(key), notes)
            }
            Some(sub) => adapt_schema(sub, &at.child(key), notes),
            None => {}
        }
    }
    if let Some(Value::Array(subs)) = s.get_mut("prefixItems") {
        adapt_positional(subs, &at.child("prefixItems"), notes);
    }
    for key in SCHEMA_LIST_KEYWORDS {
        let Some(Value::Array(subs)) = s.get_mut(key) else {
            continue;
        };
        let before = subs.len();
        subs.retain(|sub| !sub.is_null());
        if subs.len() != before {
            at.child(key).note(notes, false, "dropped null entries");
        }
        if subs.is_empty() {
            s.remove(key);
            continue;
        }
        for (i, sub) in subs.iter_mut().enumerate() {
            adapt_schema(sub, &at.child(&format!("{key}/{i}")), notes);
        }
    }
}

/// A `null` member of a schema object is dropped, or becomes `{}` for the name-to-schema maps
/// ([`SCHEMA_MAP_KEYWORDS`]); `const` and `default` keep their `null`.
fn drop_null_members(s: &mut Map<String, Value>, at: &At<'_>, notes: &mut Vec<Note>) {
    let nulls: Vec<String> = s
        .iter()
        .filter(|(k, v)| v.is_null() && !DATA_KEYWORDS.contains(&k.as_str()))
        .map(|(k, _)| k.clone())
        .collect();
    for key in nulls {
        if SCHEMA_MAP_KEYWORDS.contains(&key.as_str()) {
            s.insert(key.clone(), json!({}));
            at.note(notes, false, &format!("a null {key:?} became {{}}"));
        } else {
            s.remove(&key);
            at.note(notes, false, &format!("dropped a null {key:?}"));
        }
    }
}

/// The schemas of `prefixItems` (or an `items` array): a `null` one becomes `{}`, so that the
/// positions stay.
fn adapt_positional(subs: &mut [Value], at: &At<'_>, notes: &mut Vec<Note>) {
    for (i, sub) in subs.iter_mut().enumerate() {
        let here = at.child(&i.to_string());
        if sub.is_null() {
            *sub = json!({});
            here.note(notes, false, "a null schema became {}");
        }
        adapt_schema(sub, &here, notes);
    }
}
