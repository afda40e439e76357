//! How the `variables` tool shows variables: one page of a reference's variables (DAP
//! `variables`, paged by the adapter where it can), each value cut at [`MAX_VALUE_BYTES`],
//! and a small aggregate whose value shows nothing of its contents shown inline
//! (`{x: 3, y: 4}`), within the `MAX_INLINE_*` bounds.

use actix::Addr;
use serde_json::{Value, json};

use crate::dap::types::Variable;

use super::{VariablesFilter, dap};
use crate::adapter::{Adapter, Request};
use mcp_bridge::server::Outcome;

/// The longest value text shown, in bytes; a longer one is cut, with `"cut": true` (the
/// whole value: `evaluate`).
pub const MAX_VALUE_BYTES: usize = 1024;

/// The most children an aggregate shown inline has (`{x: 3, y: 4}`): a larger one is read
/// by its `variablesReference`.
pub const MAX_INLINE_FIELDS: usize = 8;

/// How deep aggregates inside an inline aggregate are shown inline too.
pub const MAX_INLINE_DEPTH: usize = 2;

/// The longest inline text, in bytes; a longer one ends with `...`.
pub const MAX_INLINE_BYTES: usize = 256;

/// The most `variables` requests one `variables` result makes to show aggregates inline.
pub const MAX_INLINE_REQUESTS: usize = 32;

fn variable_value(variable: &Variable) -> Value {
    let mut value = json!({"name": variable.name, "value": variable.value,
        "type": variable.type_name, "variablesReference": variable.variables_reference});
    if variable.value.len() > MAX_VALUE_BYTES {
        let mut cut = MAX_VALUE_BYTES;
        while !variable.value.is_char_boundary(cut) {
            cut -= 1;
        }
        value["value"] = json!(variable.value[..cut]);
        value["cut"] = json!(true);
    }
    if let Some(named) = variable.named_variables {
        value["namedVariables"] = json!(named);
    }
    if let Some(indexed) = variable.indexed_variables {
        value["indexedVariables"] = json!(indexed);
    }
    value
}

/// Whether an adapter's value text shows nothing of the contents: empty, or lldb-dap's form
/// of a struct or an array, `TYPE @ 0xADDRESS`.
fn shows_no_contents(value: &str) -> bool {
    let Some((_, address)) = value.rsplit_once(" @ 0x") else {
        return value.is_empty();
    };
    !address.is_empty() && address.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The children of a small aggregate as one text, `{x: 3, y: 4}` (`[10, 20, 30]` for an
/// array's elements), aggregates in it shown the same way down to `depth`; `None` for one
/// with more than [`MAX_INLINE_FIELDS`] children, once `requests` is spent, or on an error.
fn inline_text<'a>(
    adapter: &'a Addr<Adapter>,
    reference: i64,
    depth: usize,
    requests: &'a mut usize,
) -> futures_util::future::BoxFuture<'a, Option<String>> {
    Box::pin(async move {
        if *requests == 0 || depth == 0 {
            return None;
        }
        *requests -= 1;
        let arguments = json!({"variablesReference": reference, "start": 0,
            "count": MAX_INLINE_FIELDS + 1});
        let request = Request {
            command: "variables".into(),
            arguments: Some(arguments),
        };
        let body = adapter.send(request).await.ok()?.ok()?;
        let children: Vec<Variable> = body
            .get("variables")?
            .as_array()?
            .iter()
            .filter_map(|v| serde_json::from_value(v.clone()).ok())
            .collect();
        if children.len() > MAX_INLINE_FIELDS {
            return None;
        }
        let indexed = children.iter().all(|c| c.name.starts_with('['));
        let mut parts = Vec::new();
        for child in children {
            let mut value = child.value.clone();
            if child.variables_reference > 0
                && shows_no_contents(&value)
                && let Some(text) =
                    inline_text(adapter, child.variables_reference, depth - 1, requests).await
            {
                value = text;
            }
            parts.push(match indexed {
                true => value,
                false => format!("{}: {value}", child.name),
            });
        }
        let (open, close) = if indexed { ("[", "]") } else { ("{", "}") };
        let mut text = format!("{open}{}{close}", parts.join(", "));
        if text.len() > MAX_INLINE_BYTES {
            let mut cut = MAX_INLINE_BYTES;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
            text.push_str("...");
        }
        Some(text)
    })
}

/// One page of the variables of one reference: from `start`, at most `count`, and at most
/// `budget` bytes (one variable at least). The adapter is asked for that page only (DAP
/// VariablesArguments `start`, `count`), one more than `count` to learn whether others
/// follow: the whole list of a large array can pass the DAP body limit. An adapter that pages
/// answers at most what it was asked; one that does not (`pages` false: paging is optional,
/// `session::ADAPTERS_WITHOUT_VARIABLE_PAGING`) is asked for the whole list, which is cut here, and
/// so is the whole list of an adapter that answers more than it was asked.
#[allow(clippy::too_many_arguments)]
pub(super) async fn list_variables(
    adapter: &Addr<Adapter>,
    reference: i64,
    start: usize,
    count: usize,
    pages: bool,
    filter: Option<VariablesFilter>,
    budget: usize,
    inline_requests: &mut usize,
) -> Result<Value, Outcome> {
    let mut arguments = json!({"variablesReference": reference});
    if pages {
        arguments["start"] = json!(start);
        arguments["count"] = json!(count.saturating_add(1));
    }
    if let Some(filter) = filter {
        arguments["filter"] = json!(filter.as_str());
    }
    let body = dap(adapter, "variables", arguments).await?;
    let mut answered = body
        .get("variables")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if !pages || answered.len() > count.saturating_add(1) {
        // The whole list: this page is a part of it.
        answered.drain(..start.min(answered.len()));
    }
    let mut listed = Vec::new();
    let mut bytes = 0;
    for variable in answered.iter().take(count) {
        let Ok(mut variable) = serde_json::from_value::<Variable>(variable.clone()) else {
            continue;
        };
        // A small struct or array shows its fields at once (lldb-dap shows only its type and
        // address): one request, bounded, instead of a second call of the client.
        let small = variable
            .indexed_variables
            .unwrap_or(0)
            .saturating_add(variable.named_variables.unwrap_or(0))
            <= MAX_INLINE_FIELDS as i64;
        let reference = variable.variables_reference;
        if reference > 0
            && small
            && shows_no_contents(&variable.value)
            && let Some(text) =
                inline_text(adapter, reference, MAX_INLINE_DEPTH, inline_requests).await
        {
            variable.value = text;
        }
        let value = variable_value(&variable);
        bytes += value.to_string().len();
        if bytes > budget && !listed.is_empty() {
            break;
        }
        listed.push(value);
    }
    let more = answered.len() > listed.len();
    let mut page = json!({"variables": listed, "start": start, "more": more});
    if more {
        let next = start.saturating_add(listed.len());
        page["next"] = json!({"variables_reference": reference, "start": next});
    }
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn variable(value: Value) -> Variable {
        serde_json::from_value(value).unwrap_or_else(|e| panic!("a variable: {e}"))
    }

    #[test]
    fn a_value_over_the_bound_is_cut_at_a_character_boundary_and_marked() {
        let short = variable(json!({"name": "n", "value": "3", "type": "int",
            "variablesReference": 0}));
        assert_eq!(
            variable_value(&short),
            json!({"name": "n", "value": "3", "type": "int", "variablesReference": 0})
        );
        // A two-byte character across the bound: the cut falls before it.
        let long = format!("{}é{}", "a".repeat(MAX_VALUE_BYTES - 1), "b".repeat(9));
        let list = variable(json!({"name": "s", "value": long, "variablesReference": 4,
            "indexedVariables": 2000}));
        assert_eq!(
            variable_value(&list),
            json!({"name": "s", "value": "a".repeat(MAX_VALUE_BYTES - 1), "type": null,
                "variablesReference": 4, "cut": true, "indexedVariables": 2000})
        );
    }

    #[test]
    fn a_value_that_shows_no_contents_is_empty_or_a_type_at_an_address() {
        for (value, want) in [
            ("", true),
            ("Point @ 0x00007ffd5e1c", true),
            ("int[3] @ 0xABCdef01", true),
            ("{x:3, y:4}", false),
            ("tag @ 0x", false),
            ("Point @ 0x12zz", false),
            ("[1, 2, 3]", false),
        ] {
            assert_eq!(shows_no_contents(value), want, "{value:?}");
        }
    }
}
