//! What the server lists: tool, prompt, resource and resource-template definitions, and the
//! URI-template matching that routes `resources/read` to a template. Each definition is the
//! 2026-07-28 schema object itself (`Tool`, `Prompt`, `Resource`, `ResourceTemplate`).

use serde_json::{Map, Value, json};

/// A `Tool` as listed by `tools/list` (2026-07-28 server/tools).
///
/// `inputSchema` and `outputSchema` are written as given, so a schema may use anything
/// JSON Schema 2020-12 allows (boolean sub-schemas, arrays without `items`, an array root
/// for `outputSchema`).
#[derive(Debug, Clone)]
pub struct ToolDef {
    name: String,
    fields: Map<String, Value>,
    listed_without_name: bool,
}

impl ToolDef {
    /// A tool with this name and `inputSchema` (which must have `"type": "object"`).
    pub fn new(name: &str, input_schema: Value) -> Self {
        let mut fields = Map::new();
        fields.insert("inputSchema".into(), input_schema);
        Self {
            name: name.into(),
            fields,
            listed_without_name: false,
        }
    }

    /// A tool whose `inputSchema` is generated from the Rust type `A` (JSON Schema 2020-12 by
    /// `schemars`; the type's name, which is no business of the client, is left out). `A`
    /// should be a struct, so the schema's root is `"type": "object"`.
    ///
    /// ```
    /// # use mcp_bridge::server::ToolDef;
    /// #[derive(schemars::JsonSchema)]
    /// struct Forecast {
    ///     /// The city.
    ///     city: String,
    ///     days: Option<u8>,
    /// }
    /// let tool = ToolDef::typed::<Forecast>("forecast");
    /// assert_eq!(tool.input_schema()["properties"]["city"]["type"], "string");
    /// assert_eq!(tool.input_schema()["required"], serde_json::json!(["city"]));
    /// ```
    pub fn typed<A: schemars::JsonSchema>(name: &str) -> Self {
        let mut schema = schemars::schema_for!(A).to_value();
        if let Some(root) = schema.as_object_mut() {
            root.remove("title");
        }
        Self::new(name, schema)
    }

    /// The `inputSchema` as it is listed.
    pub fn input_schema(&self) -> &Value {
        self.fields.get("inputSchema").unwrap_or(&Value::Null)
    }

    /// A tool that takes no arguments: `inputSchema` is `{"type": "object"}`.
    ///
    /// ```
    /// # use mcp_bridge::server::ToolDef;
    /// let tool = ToolDef::no_input("now");
    /// assert_eq!(tool.name(), "now");
    /// ```
    pub fn no_input(name: &str) -> Self {
        Self::new(name, json!({ "type": "object" }))
    }

    /// Lists the tool without its `name` member, which no schema admits: a misbehaving server
    /// for clients' tests. Calls still reach the tool by its name.
    #[must_use]
    pub fn listed_without_name(mut self) -> Self {
        self.listed_without_name = true;
        self
    }

    /// Sets `title`.
    #[must_use]
    pub fn title(self, title: &str) -> Self {
        self.field("title", title.into())
    }

    /// Sets `description`.
    #[must_use]
    pub fn description(self, description: &str) -> Self {
        self.field("description", description.into())
    }

    /// Sets `outputSchema`; `structuredContent` of results should then conform to it.
    #[must_use]
    pub fn output_schema(self, schema: Value) -> Self {
        self.field("outputSchema", schema)
    }

    /// Sets `annotations` (`ToolAnnotations`).
    #[must_use]
    pub fn annotations(self, annotations: Value) -> Self {
        self.field("annotations", annotations)
    }

    /// Sets any other member of the `Tool` object (`icons`, `_meta`, …).
    #[must_use]
    pub fn field(mut self, key: &str, value: Value) -> Self {
        self.fields.insert(key.into(), value);
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn to_json(&self) -> Value {
        if self.listed_without_name {
            return Value::Object(self.fields.clone());
        }
        with_name(&self.name, &self.fields)
    }
}

/// A `Prompt` as listed by `prompts/list`.
#[derive(Debug, Clone)]
pub struct PromptDef {
    name: String,
    fields: Map<String, Value>,
}

impl PromptDef {
    /// A prompt with this name and no arguments.
    pub fn new(name: &str) -> Self {
        Self {
            name: name.into(),
            fields: Map::new(),
        }
    }

    /// Sets `description`.
    #[must_use]
    pub fn description(self, description: &str) -> Self {
        self.field("description", description.into())
    }

    /// Adds a `PromptArgument`.
    #[must_use]
    pub fn argument(mut self, name: &str, description: &str, required: bool) -> Self {
        let argument = json!({ "name": name, "description": description, "required": required });
        match self.fields.get_mut("arguments") {
            Some(Value::Array(arguments)) => arguments.push(argument),
            _ => {
                self.fields.insert("arguments".into(), json!([argument]));
            }
        }
        self
    }

    /// Sets any other member of the `Prompt` object.
    #[must_use]
    pub fn field(mut self, key: &str, value: Value) -> Self {
        self.fields.insert(key.into(), value);
        self
    }

    /// The prompt's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn to_json(&self) -> Value {
        with_name(&self.name, &self.fields)
    }
}

/// A `Resource` as listed by `resources/list`; `resources/read` of exactly its URI reaches its
/// handler.
#[derive(Debug, Clone)]
pub struct ResourceDef {
    uri: String,
    fields: Map<String, Value>,
}

impl ResourceDef {
    /// A resource with this URI and name.
    pub fn new(uri: &str, name: &str) -> Self {
        let mut fields = Map::new();
        fields.insert("name".into(), name.into());
        fields.insert("uri".into(), uri.into());
        Self {
            uri: uri.into(),
            fields,
        }
    }

    /// Sets `mimeType`.
    #[must_use]
    pub fn mime_type(self, mime_type: &str) -> Self {
        self.field("mimeType", mime_type.into())
    }

    /// Sets `description`.
    #[must_use]
    pub fn description(self, description: &str) -> Self {
        self.field("description", description.into())
    }

    /// Sets any other member of the `Resource` object.
    #[must_use]
    pub fn field(mut self, key: &str, value: Value) -> Self {
        self.fields.insert(key.into(), value);
        self
    }

    /// The resource's URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    pub(crate) fn to_json(&self) -> Value {
        Value::Object(self.fields.clone())
    }
}

/// A `ResourceTemplate` as listed by `resources/templates/list`.
///
/// `resources/read` of a URI that no resource has but the template matches reaches its handler.
/// Matching supports RFC 6570 simple expressions: `{var}` matches one or more characters other
/// than `/`, `?` and `#`; `{+var}` matches one or more of any character.
#[derive(Debug, Clone)]
pub struct ResourceTemplateDef {
    uri_template: String,
    fields: Map<String, Value>,
}

impl ResourceTemplateDef {
    /// A template with this RFC 6570 `uriTemplate` and name.
    pub fn new(uri_template: &str, name: &str) -> Self {
        let mut fields = Map::new();
        fields.insert("name".into(), name.into());
        fields.insert("uriTemplate".into(), uri_template.into());
        Self {
            uri_template: uri_template.into(),
            fields,
        }
    }

    /// Sets `mimeType`.
    #[must_use]
    pub fn mime_type(self, mime_type: &str) -> Self {
        self.field("mimeType", mime_type.into())
    }

    /// Sets `description`.
    #[must_use]
    pub fn description(self, description: &str) -> Self {
        self.field("description", description.into())
    }

    /// Sets any other member of the `ResourceTemplate` object.
    #[must_use]
    pub fn field(mut self, key: &str, value: Value) -> Self {
        self.fields.insert(key.into(), value);
        self
    }

    /// The template's `uriTemplate`.
    pub fn uri_template(&self) -> &str {
        &self.uri_template
    }

    /// The variables of `uri` if the template matches it.
    pub fn matches(&self, uri: &str) -> Option<Map<String, Value>> {
        let parts = parse_template(&self.uri_template)?;
        let mut variables = Map::new();
        match_parts(&parts, uri, &mut variables).then_some(variables)
    }

    pub(crate) fn to_json(&self) -> Value {
        Value::Object(self.fields.clone())
    }
}

fn with_name(name: &str, fields: &Map<String, Value>) -> Value {
    let mut object = Map::new();
    object.insert("name".into(), name.into());
    object.extend(fields.iter().map(|(k, v)| (k.clone(), v.clone())));
    Value::Object(object)
}

#[derive(Debug, PartialEq)]
enum Part<'a> {
    Literal(&'a str),
    Var { name: &'a str, reserved: bool },
}

/// Splits a template into literals and variables; `None` for an unclosed `{`.
fn parse_template(template: &str) -> Option<Vec<Part<'_>>> {
    let mut parts = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            parts.push(Part::Literal(&rest[..open]));
        }
        let close = rest[open..].find('}')? + open;
        let expression = &rest[open + 1..close];
        let (name, reserved) = match expression.strip_prefix('+') {
            Some(name) => (name, true),
            None => (expression, false),
        };
        parts.push(Part::Var { name, reserved });
        rest = &rest[close + 1..];
    }
    if !rest.is_empty() {
        parts.push(Part::Literal(rest));
    }
    Some(parts)
}

fn match_parts(parts: &[Part<'_>], uri: &str, variables: &mut Map<String, Value>) -> bool {
    match parts.split_first() {
        None => uri.is_empty(),
        Some((Part::Literal(literal), rest)) => uri
            .strip_prefix(literal)
            .is_some_and(|tail| match_parts(rest, tail, variables)),
        Some((Part::Var { name, reserved }, rest)) => {
            let stop = |c: char| !reserved && matches!(c, '/' | '?' | '#');
            let longest = uri.find(stop).unwrap_or(uri.len());
            // Try the longest value first, then shorter ones (backtracking).
            let mut ends: Vec<usize> = uri[..longest]
                .char_indices()
                .map(|(i, c)| i + c.len_utf8())
                .collect();
            ends.reverse();
            for end in ends {
                if match_parts(rest, &uri[end..], variables) {
                    variables.insert((*name).into(), uri[..end].into());
                    return true;
                }
            }
            false
        }
    }
}

/// A tool without input ([`ToolDef::no_input`]), so `builder.tool("ping", handler)` works.
///
/// ```
/// # use mcp_bridge::server::ToolDef;
/// assert_eq!(ToolDef::from("ping").input_schema(), ToolDef::no_input("ping").input_schema());
/// ```
impl From<&str> for ToolDef {
    fn from(name: &str) -> Self {
        Self::no_input(name)
    }
}

/// A prompt without arguments ([`PromptDef::new`]), so `builder.prompt("greet", handler)` works.
///
/// ```
/// # use mcp_bridge::server::PromptDef;
/// assert_eq!(PromptDef::from("greet").name(), "greet");
/// ```
impl From<&str> for PromptDef {
    fn from(name: &str) -> Self {
        Self::new(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_simple_variable_matches_one_path_segment() {
        let template = ResourceTemplateDef::new("example://notes/{id}", "note");
        assert_eq!(
            template.matches("example://notes/42"),
            Some(json!({"id": "42"}).as_object().cloned().unwrap_or_default())
        );
        assert_eq!(template.matches("example://notes/"), None);
        assert_eq!(template.matches("example://notes/4/2"), None);
        assert_eq!(template.matches("example://other/4"), None);
    }

    #[test]
    fn a_reserved_variable_spans_slashes_and_literals_after_it_still_match() {
        let template = ResourceTemplateDef::new("file:///{+path}.txt", "file");
        let variables = template.matches("file:///a/b.c.txt");
        assert_eq!(
            variables.and_then(|v| v.get("path").cloned()),
            Some(json!("a/b.c"))
        );
    }

    #[test]
    fn tool_json_starts_with_the_name() {
        let tool = ToolDef::new("echo", json!({"type": "object"})).description("Echo");
        assert_eq!(
            tool.to_json().to_string(),
            r#"{"name":"echo","inputSchema":{"type":"object"},"description":"Echo"}"#
        );
    }
}
