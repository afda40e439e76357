//! The items of a list result (`tools/list`, `prompts/list`, `resources/list`,
//! `resources/templates/list`) for a 2025-11-25 editor, without I/O.
//!
//! A 2025-11-25 client validates a list result as a whole: one item that its schema refuses
//! makes it reject the whole list (the TypeScript SDK does), so the editor would see nothing.
//! Servers in the wild send such items (a tool without `name`, an `inputSchema` that is `true`,
//! `"annotations": null`), which 2026-07-28 refuses too. The rule: first repair what is
//! unambiguous ([`repair_item`]), then drop each item that the official 2025-11-25 definition
//! still refuses ([`ItemKind::check`], exact: the `jsonschema` crate over the embedded schema),
//! keeping every valid item in its order.

use crate::protocol::revisions::legacy::Forwarded;
use crate::protocol::revisions::note::{LineLevel, Note};
#[cfg(feature = "schema-check")]
use jsonschema::Validator;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap};
#[cfg(feature = "schema-check")]
use std::sync::OnceLock;

/// The official 2025-11-25 schema (`src/protocol/schemas/`, a byte copy of the MCP
/// specification's `schema/2025-11-25/schema.json`; licence note beside it).
pub const SCHEMA_2025_11_25: &str = include_str!("../schemas/schema-2025-11-25.json");

/// The most characters of a validation error that a warning line quotes.
pub const MAX_REASON_CHARS: usize = 200;

/// The most characters of an item's name that a log line quotes (longer ones end with `…`).
pub const MAX_LABEL_CHARS: usize = 80;

/// Why the 2025-11-25 schema refuses an item ([`ItemKind::check`]); its text follows `dropped`
/// in the warning line and doctor's report.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SchemaRefusal {
    /// The first validation error: its place in the item and what is wrong in the
    /// validator's words (`/name: ...`), without the item's values, at most
    /// [`MAX_REASON_CHARS`] characters.
    #[error("{0}")]
    Refused(String),
    /// The validator refused the item without naming an error.
    #[error("refused by the 2025-11-25 schema")]
    Unexplained,
    /// The embedded schema did not compile (never with the vendored file).
    #[error("the 2025-11-25 schema did not compile")]
    NotCompiled,
}

/// The kind of item a list result holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItemKind {
    Tool,
    Prompt,
    Resource,
    ResourceTemplate,
}

impl ItemKind {
    /// All kinds, in the order of `ItemKind::index`.
    pub const ALL: [ItemKind; 4] = [
        ItemKind::Tool,
        ItemKind::Prompt,
        ItemKind::Resource,
        ItemKind::ResourceTemplate,
    ];

    /// The kind of the items of a list method's result, `None` for the other methods.
    pub fn of(method: Forwarded) -> Option<ItemKind> {
        match method {
            Forwarded::ToolsList => Some(ItemKind::Tool),
            Forwarded::PromptsList => Some(ItemKind::Prompt),
            Forwarded::ResourcesList => Some(ItemKind::Resource),
            Forwarded::ResourcesTemplatesList => Some(ItemKind::ResourceTemplate),
            _ => None,
        }
    }

    /// The member of the result that holds the items (`tools`, `resourceTemplates`, ...).
    pub fn member(self) -> &'static str {
        match self {
            ItemKind::Tool => "tools",
            ItemKind::Prompt => "prompts",
            ItemKind::Resource => "resources",
            ItemKind::ResourceTemplate => "resourceTemplates",
        }
    }

    /// The name of the definition in the 2025-11-25 schema (`$defs`).
    pub fn definition(self) -> &'static str {
        match self {
            ItemKind::Tool => "Tool",
            ItemKind::Prompt => "Prompt",
            ItemKind::Resource => "Resource",
            ItemKind::ResourceTemplate => "ResourceTemplate",
        }
    }

    /// The word for one item in a log line.
    pub fn noun(self) -> &'static str {
        match self {
            ItemKind::Tool => "tool",
            ItemKind::Prompt => "prompt",
            ItemKind::Resource => "resource",
            ItemKind::ResourceTemplate => "resource template",
        }
    }

    /// The members an item must have (2025-11-25); a `null` one is not dropped by the repair.
    fn required(self) -> &'static [&'static str] {
        match self {
            ItemKind::Tool => &["name", "inputSchema"],
            ItemKind::Prompt => &["name"],
            ItemKind::Resource => &["name", "uri"],
            ItemKind::ResourceTemplate => &["name", "uriTemplate"],
        }
    }

    #[cfg(feature = "schema-check")]
    fn index(self) -> usize {
        match self {
            ItemKind::Tool => 0,
            ItemKind::Prompt => 1,
            ItemKind::Resource => 2,
            ItemKind::ResourceTemplate => 3,
        }
    }

    /// Checks one (repaired) item against the 2025-11-25 definition of its kind: `Ok` when the
    /// schema admits it, else the first error (its place in the item and what is wrong, without
    /// the item's values, at most [`MAX_REASON_CHARS`] characters). `Err` also when the
    /// embedded schema did not compile (never with the vendored file; a unit test shows it).
    /// Without the feature `schema-check`, every item passes.
    pub fn check(self, item: &Value) -> Result<(), SchemaRefusal> {
        #[cfg(not(feature = "schema-check"))]
        {
            let _ = (self, item);
            Ok(())
        }
        #[cfg(feature = "schema-check")]
        {
            let Some(v) = validators()[self.index()].as_ref() else {
                return Err(SchemaRefusal::NotCompiled);
            };
            if v.is_valid(item) {
                return Ok(());
            }
            let Some(e) = v.iter_errors(item).next() else {
                return Err(SchemaRefusal::Unexplained);
            };
            let path = e.instance_path().to_string();
            let at = if path.is_empty() { "/".into() } else { path };
            let reason = format!("{at}: {}", e.masked());
            Err(SchemaRefusal::Refused(
                reason.chars().take(MAX_REASON_CHARS).collect(),
            ))
        }
    }
}

#[cfg(feature = "schema-check")]
/// The validators of the four definitions, compiled once from [`SCHEMA_2025_11_25`]: each from
/// [`definition_schema`] (the definition and the definitions it reaches, ~5 KB of the 174 KB
/// schema: a validator keeps its whole document, and the whole schema parsed is ~2 MB).
fn validators() -> &'static [Option<Validator>; 4] {
    static V: OnceLock<[Option<Validator>; 4]> = OnceLock::new();
    V.get_or_init(|| {
        ItemKind::ALL.map(|kind| {
            let schema = definition_schema(SCHEMA_2025_11_25, kind.definition())?;
            jsonschema::options().build(&schema).ok()
        })
    })
}

/// The schema that validates against definition `name` of the schema text `root` (an object
/// with `$defs`): `root`'s other members, a root `"$ref": "#/$defs/<name>"` and, as `$defs`,
/// only the definitions reached from `name` through `$ref`s of the form `#/$defs/<def>`; it
/// admits and refuses exactly what `root` with that `$ref` does. Only those definitions are
/// parsed (the others stay text). `None` when `root` is not such an object or `name` is not
/// one of its definitions; any other reference form, or a reference to a missing definition,
/// keeps every definition (nothing is left out by mistake).
pub fn definition_schema(root: &str, name: &str) -> Option<Value> {
    let members: BTreeMap<String, &RawValue> = serde_json::from_str(root).ok()?;
    let all_defs = members.get("$defs")?;
    let defs: HashMap<String, &RawValue> = serde_json::from_str(all_defs.get()).ok()?;
    defs.get(name)?;
    let parse = |raw: &RawValue| serde_json::from_str::<Value>(raw.get()).ok();
    let mut kept = Map::new();
    let mut todo = vec![name.to_string()];
    while let Some(def) = todo.pop() {
        if kept.contains_key(&def) {
            continue;
        }
        let body = match defs.get(&def) {
            Some(raw) => parse(raw)?,
            None => Value::Null,
        };
        if body.is_null() || !local_refs(&body, &mut todo) {
            kept = serde_json::from_str(all_defs.get()).ok()?;
            break;
        }
        kept.insert(def, body);
    }
    let mut schema = Map::new();
    for (key, raw) in &members {
        if key != "$defs" {
            schema.insert(key.clone(), parse(raw)?);
        }
    }
    schema.insert("$defs".into(), Value::Object(kept));
    schema.insert("$ref".into(), Value::String(format!("#/$defs/{name}")));
    Some(Value::Object(schema))
}

/// Collects the definition names of the `$ref`s `#/$defs/<def>` in `v`; `false` when `v`
/// holds another kind of reference (`$ref` elsewhere, `$dynamicRef`, `$id`, `$anchor`).
fn local_refs(v: &Value, out: &mut Vec<String>) -> bool {
    match v {
        Value::Object(m) => m.iter().all(|(k, x)| match k.as_str() {
            "$ref" => match x.as_str().and_then(|r| r.strip_prefix("#/$defs/")) {
                Some(def) if !def.contains(['/', '~', '%']) => {
                    out.push(def.to_string());
                    true
                }
                _ => false,
            },
            "$dynamicRef" | "$recursiveRef" | "$id" | "$anchor" | "$dynamicAnchor" => false,
            _ => local_refs(x, out),
        }),
        Value::Array(a) => a.iter().all(|x| local_refs(x, out)),
        _ => true,
    }
}

/// Repairs what is unambiguous in one item, each repair a debug note: a `null` member that the
/// definition does not require is dropped (`annotations`, `title`, `description`, `icons`,
/// `_meta`, ...); a tool's `inputSchema` that is missing, `null`, `true` or `{}` (all admit
/// any arguments) becomes `{"type": "object"}`. Anything else is left for [`ItemKind::check`].
pub fn repair_item(kind: ItemKind, item: &mut Value, label: &str, notes: &mut Vec<Note>) {
    let Some(m) = item.as_object_mut() else {
        return;
    };
    let nulls: Vec<String> = m
        .iter()
        .filter(|(k, v)| v.is_null() && !kind.required().contains(&k.as_str()))
        .map(|(k, _)| k.clone())
        .collect();
    for key in nulls {
        m.remove(&key);
        note(
            notes,
            LineLevel::Debug,
            kind,
            label,
            &format!("dropped a null {key:?}"),
        );
    }
    if kind == ItemKind::Tool {
        repair_input_schema(m, kind, label, notes);
    }
}

fn repair_input_schema(
    m: &mut Map<String, Value>,
    kind: ItemKind,
    label: &str,
    notes: &mut Vec<Note>,
) {
    let what = match m.get("inputSchema") {
        None => "a missing inputSchema",
        Some(Value::Null) => "a null inputSchema",
        Some(Value::Bool(true)) => "an inputSchema true",
        Some(Value::Object(s)) if s.is_empty() => "an inputSchema {}",
        Some(_) => return,
    };
    m.insert("inputSchema".into(), json!({"type": "object"}));
    note(
        notes,
        LineLevel::Debug,
        kind,
        label,
        &format!("{what} became {{\"type\": \"object\"}}"),
    );
}

/// How an item is named in the log: its `name` quoted (at most [`MAX_LABEL_CHARS`] characters
/// of it, then `…`) when it is a string, else `#index` (its place in the upstream's list).
pub fn item_label(item: &Value, index: usize) -> String {
    match item.get("name").and_then(Value::as_str) {
        Some(name) if name.chars().count() > MAX_LABEL_CHARS => {
            let head: String = name.chars().take(MAX_LABEL_CHARS).collect();
            format!("{:?}", head + "…")
        }
        Some(name) => format!("{name:?}"),
        None => format!("#{index}"),
    }
}

/// Shapes the items of a list result: each item is repaired ([`repair_item`]), adapted by
/// `adapt` (the tool schema rules, run after the repair), and kept only when
/// [`ItemKind::check`] admits it; each dropped item is one warning naming the list, the item
/// and the reason. The kept items keep their order. A result without an array under
/// [`ItemKind::member`] is left as it is.
#[cfg(feature = "internals")]
pub fn shape_items(
    kind: ItemKind,
    result: &mut Map<String, Value>,
    adapt: impl Fn(&mut Value, &mut Vec<Note>),
    notes: &mut Vec<Note>,
) {
    let Some(Value::Array(items)) = result.get_mut(kind.member()) else {
        return;
    };
    let upstream = std::mem::take(items);
    for (index, item) in upstream.into_iter().enumerate() {
        if let Some(item) = shape_item(kind, item, index, &adapt, notes) {
            items.push(item);
        }
    }
}

/// Shapes one item of a list result (see [`shape_items`]): the repaired and adapted item, or
/// `None` when the 2025-11-25 schema refuses it (one warning).
pub fn shape_item(
    kind: ItemKind,
    mut item: Value,
    index: usize,
    adapt: impl Fn(&mut Value, &mut Vec<Note>),
    notes: &mut Vec<Note>,
) -> Option<Value> {
    let label = item_label(&item, index);
    repair_item(kind, &mut item, &label, notes);
    adapt(&mut item, notes);
    match kind.check(&item) {
        Ok(()) => Some(item),
        Err(reason) => {
            note(
                notes,
                LineLevel::Warn,
                kind,
                &label,
                &format!("{DROPPED}: {reason}"),
            );
            None
        }
    }
}

/// What the note of a dropped item says after the item's name ([`shape_item`]).
pub const DROPPED: &str = "dropped, the 2025-11-25 schema refuses it";

/// The item a note names when it is the note of a dropped item ([`shape_item`]'s warning):
/// `tools/list: tool "x"`, the prefix every note of that item starts with (its repairs too);
/// `None` for any other note.
pub fn dropped_item(note: &Note) -> Option<&str> {
    if note.level != LineLevel::Warn {
        return None;
    }
    note.text
        .split_once(&format!(": {DROPPED}: "))
        .map(|(item, _)| item)
}

fn note(notes: &mut Vec<Note>, level: LineLevel, kind: ItemKind, label: &str, what: &str) {
    let list = match kind {
        ItemKind::Tool => "tools/list",
        ItemKind::Prompt => "prompts/list",
        ItemKind::Resource => "resources/list",
        ItemKind::ResourceTemplate => "resources/templates/list",
    };
    notes.push(Note {
        level,
        text: format!("{list}: {} {label}: {what}", kind.noun()),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_of_a_dropped_item_names_the_item_of_its_repairs() {
        let mut notes = Vec::new();
        let kept = shape_item(
            ItemKind::Tool,
            json!({"name": "t", "title": null, "inputSchema": {"type": "array"}}),
            0,
            |_, _| {},
            &mut notes,
        );
        #[cfg(feature = "schema-check")]
        {
            assert_eq!(kept, None);
            assert_eq!(notes.len(), 2, "{notes:?}");
            assert_eq!(dropped_item(&notes[1]), Some("tools/list: tool \"t\""));
            assert!(notes[0].text.starts_with("tools/list: tool \"t\": "));
        }
        #[cfg(not(feature = "schema-check"))]
        assert!(kept.is_some());
        assert_eq!(dropped_item(&notes[0]), None);
        let other = Note {
            level: LineLevel::Warn,
            text: "dropped the tool \"x\" from tools/list: why".into(),
        };
        assert_eq!(dropped_item(&other), None);
    }

    /// Shapes a list of this kind and returns the kept items and the notes as (level, text).
    fn shaped(kind: ItemKind, items: Value) -> (Value, Vec<(LineLevel, String)>) {
        let mut r = Map::new();
        r.insert(kind.member().into(), items);
        let mut notes = Vec::new();
        shape_items(kind, &mut r, |_, _| {}, &mut notes);
        let notes = notes.into_iter().map(|n| (n.level, n.text)).collect();
        (r.remove(kind.member()).unwrap_or(Value::Null), notes)
    }

    /// The warning of an item dropped by the schema check (so only with the check).
    #[cfg(feature = "schema-check")]
    fn refused(list: &str, noun: &str, label: &str, reason: &str) -> (LineLevel, String) {
        (
            LineLevel::Warn,
            format!("{list}: {noun} {label}: dropped, the 2025-11-25 schema refuses it: {reason}"),
        )
    }

    #[test]
    fn unambiguous_tool_repairs() {
        let object = json!({"type": "object"});
        let table = [
            (json!({"name": "a"}), "a missing inputSchema"),
            (
                json!({"name": "a", "inputSchema": null}),
                "a null inputSchema",
            ),
            (
                json!({"name": "a", "inputSchema": true}),
                "an inputSchema true",
            ),
            (json!({"name": "a", "inputSchema": {}}), "an inputSchema {}"),
        ];
        for (item, what) in table {
            let (kept, notes) = shaped(ItemKind::Tool, json!([item]));
            assert_eq!(
                kept,
                json!([{"name": "a", "inputSchema": object}]),
                "{what}"
            );
            assert_eq!(
                notes,
                vec![(
                    LineLevel::Debug,
                    format!("tools/list: tool \"a\": {what} became {{\"type\": \"object\"}}")
                )]
            );
        }
    }

    #[test]
    fn null_optional_members_are_dropped_for_every_kind() {
        let table = [
            (
                ItemKind::Tool,
                json!({"name": "a", "inputSchema": {"type": "object"}, "annotations": null,
                    "title": null, "description": null, "icons": null, "_meta": null,
                    "outputSchema": null}),
                json!({"name": "a", "inputSchema": {"type": "object"}}),
                "tools/list: tool \"a\"",
                6,
            ),
            (
                ItemKind::Prompt,
                json!({"name": "p", "arguments": null, "title": null}),
                json!({"name": "p"}),
                "prompts/list: prompt \"p\"",
                2,
            ),
            (
                ItemKind::Resource,
                json!({"name": "r", "uri": "file:///r", "annotations": null, "size": null,
                    "mimeType": null}),
                json!({"name": "r", "uri": "file:///r"}),
                "resources/list: resource \"r\"",
                3,
            ),
            (
                ItemKind::ResourceTemplate,
                json!({"name": "t", "uriTemplate": "file:///{x}", "icons": null}),
                json!({"name": "t", "uriTemplate": "file:///{x}"}),
                "resources/templates/list: resource template \"t\"",
                1,
            ),
        ];
        for (kind, item, repaired, prefix, count) in table {
            let (kept, notes) = shaped(kind, json!([item]));
            assert_eq!(kept, json!([repaired]), "{kind:?}");
            assert_eq!(notes.len(), count, "{kind:?}: {notes:?}");
            for (level, text) in &notes {
                assert_eq!(*level, LineLevel::Debug);
                assert!(
                    text.starts_with(&format!("{prefix}: dropped a null \"")),
                    "{text}"
                );
            }
        }
    }

    #[test]
    #[cfg(feature = "schema-check")]
    fn items_that_2025_refuses_are_dropped_with_a_warning() {
        let t = ("tools/list", "tool");
        let table = [
            (
                ItemKind::Tool,
                json!({"name": "t2", "inputSchema": {"type": "array"}}),
                t,
                "\"t2\"",
                "/inputSchema/type: \"object\" was expected",
            ),
            (
                ItemKind::Tool,
                json!({"name": "t4", "inputSchema": {"type": ["object", "null"]}}),
                t,
                "\"t4\"",
                "/inputSchema/type: value is not of type \"string\"",
            ),
            (
                ItemKind::Tool,
                json!({"name": "t10", "inputSchema": {"anyOf": [{"type": "object"}]}}),
                t,
                "\"t10\"",
                "/inputSchema: \"type\" is a required property",
            ),
            (
                ItemKind::Tool,
                json!({"name": "f", "inputSchema": false}),
                t,
                "\"f\"",
                "/inputSchema: value is not of type \"object\"",
            ),
            (
                ItemKind::Tool,
                json!({"inputSchema": {"type": "object"}}),
                t,
                "#0",
                "/: \"name\" is a required property",
            ),
            (
                ItemKind::Tool,
                json!({"name": null, "inputSchema": {"type": "object"}}),
                t,
                "#0",
                "/name: value is not of type \"string\"",
            ),
            (
                ItemKind::Tool,
                json!({"name": 7, "inputSchema": {"type": "object"}}),
                t,
                "#0",
                "/name: value is not of type \"string\"",
            ),
            (
                ItemKind::Tool,
                json!({"name": "n", "inputSchema": {"type": "object"}, "title": 5}),
                t,
                "\"n\"",
                "/title: value is not of type \"string\"",
            ),
            (
                ItemKind::Tool,
                json!(5),
                t,
                "#0",
                "/: value is not of type \"object\"",
            ),
            (
                ItemKind::Prompt,
                json!({"name": "p", "arguments": [{}]}),
                ("prompts/list", "prompt"),
                "\"p\"",
                "/arguments/0: \"name\" is a required property",
            ),
            (
                ItemKind::Resource,
                json!({"name": "r"}),
                ("resources/list", "resource"),
                "\"r\"",
                "/: \"uri\" is a required property",
            ),
            (
                ItemKind::ResourceTemplate,
                json!({"name": "r", "uriTemplate": 3}),
                ("resources/templates/list", "resource template"),
                "\"r\"",
                "/uriTemplate: value is not of type \"string\"",
            ),
        ];
        for (kind, item, (list, noun), label, reason) in table {
            let (kept, notes) = shaped(kind, json!([item]));
            assert_eq!(kept, json!([]), "{item}");
            assert_eq!(notes, vec![refused(list, noun, label, reason)], "{item}");
        }
    }

    #[test]
    #[cfg(feature = "schema-check")]
    fn valid_items_keep_their_order_around_dropped_ones() {
        let good = |n: &str| json!({"name": n, "inputSchema": {"type": "object"}});
        let items = json!([good("a"), {"name": "x", "inputSchema": {"type": "array"}}, good("b"),
            {"inputSchema": {"type": "object"}}, {"name": "c", "inputSchema": true}, good("d")]);
        let (kept, notes) = shaped(ItemKind::Tool, items);
        assert_eq!(kept, json!([good("a"), good("b"), good("c"), good("d")]));
        let warned: Vec<&str> = notes
            .iter()
            .filter(|(l, _)| *l == LineLevel::Warn)
            .map(|(_, t)| t.as_str())
            .collect();
        assert_eq!(
            warned,
            vec![
                "tools/list: tool \"x\": dropped, the 2025-11-25 schema refuses it: /inputSchema/type: \"object\" was expected",
                "tools/list: tool #3: dropped, the 2025-11-25 schema refuses it: /: \"name\" is a required property",
            ]
        );
        let (kept, notes) = shaped(ItemKind::Tool, json!([good("a"), good("b")]));
        assert_eq!((kept, notes), (json!([good("a"), good("b")]), vec![]));
    }

    #[test]
    fn a_result_without_an_item_array_is_left_alone() {
        for value in [json!(null), json!({"a": 1}), json!("x")] {
            let (kept, notes) = shaped(ItemKind::Prompt, value.clone());
            assert_eq!((kept, notes), (value, vec![]));
        }
    }

    #[test]
    #[cfg(feature = "schema-check")]
    fn the_embedded_schema_compiles_for_every_kind() {
        assert!(validators().iter().all(Option::is_some));
        assert_eq!(
            ItemKind::ALL.map(|k| k.check(&json!({})).is_err()),
            [true; 4]
        );
    }

    #[test]
    fn each_validator_holds_only_the_definitions_its_item_reaches() {
        let root: Value = serde_json::from_str(SCHEMA_2025_11_25).unwrap_or(Value::Null);
        let text = SCHEMA_2025_11_25;
        let table = [
            (
                ItemKind::Tool,
                vec!["Icon", "Tool", "ToolAnnotations", "ToolExecution"],
            ),
            (ItemKind::Prompt, vec!["Icon", "Prompt", "PromptArgument"]),
            (
                ItemKind::Resource,
                vec!["Annotations", "Icon", "Resource", "Role"],
            ),
            (
                ItemKind::ResourceTemplate,
                vec!["Annotations", "Icon", "ResourceTemplate", "Role"],
            ),
        ];
        for (kind, defs) in table {
            let schema = definition_schema(text, kind.definition()).unwrap_or(Value::Null);
            let mut names: Vec<&str> = schema["$defs"]
                .as_object()
                .map(|m| m.keys().map(String::as_str).collect())
                .unwrap_or_default();
            names.sort_unstable();
            assert_eq!(names, defs, "{kind:?}");
            assert_eq!(
                schema["$ref"],
                json!(format!("#/$defs/{}", kind.definition()))
            );
            assert_eq!(schema["$schema"], root["$schema"]);
        }
        assert_eq!(definition_schema(text, "NoSuchDefinition"), None);
        assert_eq!(definition_schema(r#"{"type": "object"}"#, "Tool"), None);
        assert_eq!(definition_schema("[1]", "Tool"), None);
    }

    #[test]
    fn another_reference_form_keeps_every_definition() {
        for reference in [
            json!({"$ref": "other.json#/x"}),
            json!({"$dynamicRef": "#meta"}),
            json!({"properties": {"a": {"$ref": "#/$defs/B/properties/c"}}}),
            json!({"$ref": "#/$defs/Missing"}),
        ] {
            let root = json!({"$defs": {"A": reference, "B": {"type": "string"},
                "C": {"type": "number"}}});
            let schema = definition_schema(&root.to_string(), "A").unwrap_or(Value::Null);
            assert_eq!(schema["$defs"], root["$defs"], "{}", root["$defs"]["A"]);
        }
        let root = json!({"$defs": {"A": {"items": {"$ref": "#/$defs/B"}},
            "B": {"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/C"}]},
            "C": {"type": "number"}, "D": {"type": "null"}}});
        let schema = definition_schema(&root.to_string(), "A").unwrap_or(Value::Null);
        assert_eq!(
            schema,
            json!({"$ref": "#/$defs/A", "$defs": {"A": root["$defs"]["A"],
                "B": root["$defs"]["B"], "C": root["$defs"]["C"]}})
        );
    }

    #[test]
    #[cfg(feature = "schema-check")]
    fn the_reduced_schemas_judge_as_the_whole_schema_does() {
        let root: Value = serde_json::from_str(SCHEMA_2025_11_25).unwrap_or(Value::Null);
        let icon = json!([{"src": "data:image/png;base64,AA==", "mimeType": "image/png",
            "sizes": ["16x16"], "theme": "dark"}]);
        let bad_icon = json!([{"src": 5}]);
        let annotations = json!({"audience": ["user"], "priority": 0.5});
        let table = [
            (
                ItemKind::Tool,
                json!({"name": "t", "inputSchema": {"type": "object"}}),
            ),
            (
                ItemKind::Tool,
                json!({"name": "t", "inputSchema": {"type": "object"}, "icons": icon,
                    "annotations": {"readOnlyHint": true, "title": "T"},
                    "execution": {"taskSupport": "optional"},
                    "outputSchema": {"type": "object"}}),
            ),
            (
                ItemKind::Tool,
                json!({"name": "t", "inputSchema": {"type": "object"}, "icons": bad_icon}),
            ),
            (
                ItemKind::Tool,
                json!({"name": "t", "inputSchema": {"type": "object"},
                    "annotations": {"readOnlyHint": "yes"}}),
            ),
            (
                ItemKind::Tool,
                json!({"name": "t", "inputSchema": {"type": "object"},
                    "execution": {"taskSupport": "always"}}),
            ),
            (
                ItemKind::Tool,
                json!({"name": "t", "inputSchema": {"type": "array"}}),
            ),
            (ItemKind::Tool, json!(5)),
            (
                ItemKind::Prompt,
                json!({"name": "p", "arguments": [{"name": "a", "required": true}], "icons": icon}),
            ),
            (
                ItemKind::Prompt,
                json!({"name": "p", "arguments": [{"required": 1}]}),
            ),
            (
                ItemKind::Resource,
                json!({"name": "r", "uri": "file:///r", "annotations": annotations, "size": 3}),
            ),
            (
                ItemKind::Resource,
                json!({"name": "r", "uri": "file:///r", "annotations": {"audience": ["robot"]}}),
            ),
            (
                ItemKind::ResourceTemplate,
                json!({"name": "t", "uriTemplate": "file:///{x}", "annotations": annotations,
                    "icons": icon}),
            ),
            (
                ItemKind::ResourceTemplate,
                json!({"name": "t", "uriTemplate": "file:///{x}", "annotations": {"priority": "high"}}),
            ),
        ];
        let mut verdicts = Vec::new();
        for (kind, item) in table {
            let mut whole = root.clone();
            if let Some(m) = whole.as_object_mut() {
                m.insert(
                    "$ref".into(),
                    json!(format!("#/$defs/{}", kind.definition())),
                );
            }
            let whole = jsonschema::options().build(&whole);
            let first = |v: &Validator| {
                v.iter_errors(&item)
                    .next()
                    .map(|e| format!("{}: {}", e.instance_path(), e.masked()))
            };
            let expected = whole.as_ref().map(|v| (v.is_valid(&item), first(v)));
            let reduced = validators()[kind.index()].as_ref();
            let got = reduced.map(|v| (v.is_valid(&item), first(v)));
            assert_eq!(got, expected.ok(), "{kind:?} {item}");
            verdicts.push(got.map(|(valid, _)| valid));
        }
        let (t, f) = (Some(true), Some(false));
        assert_eq!(verdicts, [t, t, f, f, f, f, f, t, f, t, f, t, f]);
    }

    #[test]
    #[cfg(feature = "schema-check")]
    fn a_long_reason_and_a_long_name_are_cut() {
        let long = "k".repeat(3 * MAX_REASON_CHARS);
        let item = json!({"name": long, "inputSchema": {"type": "object", "properties": {long.clone(): 5}}});
        let (kept, notes) = shaped(ItemKind::Tool, json!([item]));
        assert_eq!(kept, json!([]));
        let prefix = format!(
            "tools/list: tool \"{}…\": dropped, the 2025-11-25 schema refuses it: /inputSchema/properties/",
            "k".repeat(MAX_LABEL_CHARS)
        );
        assert_eq!(notes.len(), 1);
        let text = &notes[0].1;
        assert!(text.starts_with(&prefix), "{text}");
        assert_eq!(
            text.chars().count(),
            prefix.chars().count() - "/inputSchema/properties/".len() + MAX_REASON_CHARS
        );
    }
}
