//! What the editor sees of many servers behind one bridge, and the way back: the `initialize`
//! result made of every server's (the union of their capabilities, their instructions under one
//! heading each, the bridge's own `serverInfo`), the items of a list under their exposed names
//! ([`names`](super::names)), the owner of a request and its params as the owner knows them,
//! and a server's notifications as the editor sees them. Pure: values in, values out.

use serde_json::{Map, Value, json};

use super::list_items::ItemKind;
use super::names::{NameRefused, NameTable, Namespace, expose_uri};
use crate::protocol::revisions::errors::{Cause, ErrorObject};
use crate::protocol::revisions::methods;

/// The `serverInfo.name` of the bridge in front of many servers.
pub const GATEWAY_SERVER_NAME: &str = "mcp-bridge";

/// The capabilities the editor gets: `tools`, `prompts` and `resources` always, each with
/// `listChanged` (the set of servers changes while the bridge runs: one that starts late, one
/// that restarts, one that fails), `resources.subscribe` when a server offers it, and
/// `logging` and `completions`, which the bridge routes to their owner. `results` are the
/// `initialize` results of the servers that answered.
pub fn merge_capabilities<'a>(results: impl IntoIterator<Item = &'a Value>) -> Value {
    let subscribe = results.into_iter().any(|r| {
        r.pointer("/capabilities/resources/subscribe")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    });
    let mut resources = Map::new();
    if subscribe {
        resources.insert("subscribe".into(), Value::Bool(true));
    }
    resources.insert("listChanged".into(), Value::Bool(true));
    json!({
        "tools": {"listChanged": true},
        "prompts": {"listChanged": true},
        "resources": resources,
        "logging": {},
        "completions": {},
    })
}

/// The instructions the editor gets: each server's under a heading of its name, in the
/// file's order; `None` when no server has any.
pub fn merge_instructions<'a>(
    servers: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
) -> Option<String> {
    let parts: Vec<String> = servers
        .into_iter()
        .filter_map(|(name, text)| {
            let text = text?.trim();
            (!text.is_empty()).then(|| format!("## {name}\n\n{text}"))
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// Whether the `initialize` result of a server declares the lists of `kind`.
pub fn declares(result: &Value, kind: ItemKind) -> bool {
    let capability = match kind {
        ItemKind::Tool => "tools",
        ItemKind::Prompt => "prompts",
        ItemKind::Resource | ItemKind::ResourceTemplate => "resources",
    };
    result
        .get("capabilities")
        .and_then(|c| c.get(capability))
        .is_some()
}

/// The list method of `kind`.
pub fn list_method(kind: ItemKind) -> &'static str {
    match kind {
        ItemKind::Tool => methods::TOOLS_LIST,
        ItemKind::Prompt => methods::PROMPTS_LIST,
        ItemKind::Resource => methods::RESOURCES_LIST,
        ItemKind::ResourceTemplate => methods::RESOURCES_TEMPLATES_LIST,
    }
}

/// The kind of the list method `method`.
pub fn list_kind(method: &str) -> Option<ItemKind> {
    ItemKind::ALL
        .into_iter()
        .find(|k| list_method(*k) == method)
}

/// The list change notification of `kind` (templates change with the resources).
pub fn list_changed_method(kind: ItemKind) -> &'static str {
    match kind {
        ItemKind::Tool => methods::TOOLS_LIST_CHANGED,
        ItemKind::Prompt => methods::PROMPTS_LIST_CHANGED,
        ItemKind::Resource | ItemKind::ResourceTemplate => methods::RESOURCES_LIST_CHANGED,
    }
}

/// The kind of the list change `method` (`notifications/resources/list_changed`: the
/// resources, and with them their templates).
pub fn changed_kind(method: &str) -> Option<ItemKind> {
    match method {
        methods::TOOLS_LIST_CHANGED => Some(ItemKind::Tool),
        methods::PROMPTS_LIST_CHANGED => Some(ItemKind::Prompt),
        methods::RESOURCES_LIST_CHANGED => Some(ItemKind::Resource),
        _ => None,
    }
}

/// The most items of one page of the editor's lists: the bridge pages the merged list with
/// cursors of its own (a few hundred kilobytes of tools a page).
pub const LIST_PAGE_MAX_ITEMS: usize = 1000;

/// The prefix of the bridge's own list cursors.
const CURSOR_PREFIX: &str = "mcp-bridge-page-";

/// The cursor of the page that starts at the item `offset` of a merged list.
pub fn page_cursor(offset: usize) -> String {
    format!("{CURSOR_PREFIX}{offset}")
}

/// The offset of the page a cursor of the bridge's names (`None`: a value that is not one of
/// the bridge's cursors).
pub fn read_cursor(cursor: &Value) -> Option<usize> {
    cursor.as_str()?.strip_prefix(CURSOR_PREFIX)?.parse().ok()
}

/// The page at `offset` of a merged list of `total` items: where it ends, and the cursor of
/// the next page when there is one. `None` for an offset past the end (a cursor of a list that
/// shrank). Offsets count the servers' items as they keep them, so a page whose items include
/// one that is left out (a name another item has) is that much shorter.
pub fn page_bounds(total: usize, offset: usize) -> Option<(usize, Option<String>)> {
    if offset > total || (offset > 0 && offset == total) {
        return None;
    }
    let end = offset.saturating_add(LIST_PAGE_MAX_ITEMS).min(total);
    Some((end, (end < total).then(|| page_cursor(end))))
}

/// The member of an item that holds its name (or URI).
fn key_member(kind: ItemKind) -> &'static str {
    match kind {
        ItemKind::Tool | ItemKind::Prompt => "name",
        ItemKind::Resource => "uri",
        ItemKind::ResourceTemplate => "uriTemplate",
    }
}

/// An item of a server that the editor does not get.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeftOut {
    /// Its name (or URI) upstream; empty when it has none.
    pub original: String,
    /// Why.
    pub why: NameRefused,
}

/// The items of the server `server` (its index in `table`) under their exposed names, in
/// their order, and those the editor does not get: an item whose name another item already
/// has, a resource without a scheme. An item without a name string is the list rules' to
/// drop; it passes unchanged.
pub fn expose_items(
    table: &mut NameTable,
    server: usize,
    kind: ItemKind,
    items: Vec<Value>,
) -> (Vec<Value>, Vec<LeftOut>) {
    let member = key_member(kind);
    let mut kept = Vec::with_capacity(items.len());
    let mut left_out = Vec::new();
    for mut item in items {
        let Some(original) = item.get(member).and_then(Value::as_str).map(str::to_owned) else {
            kept.push(item);
            continue;
        };
        match table.insert(server, kind, &original) {
            Ok(exposed) => {
                if let Some(o) = item.as_object_mut() {
                    o.insert(member.into(), Value::String(exposed.name));
                }
                kept.push(item);
            }
            Err(why) => left_out.push(LeftOut { original, why }),
        }
    }
    (kept, left_out)
}

/// The owner of a request, and its params as the owner knows them.
#[derive(Clone, Debug, PartialEq)]
pub struct Routed {
    /// The server's index in the table.
    pub server: usize,
    /// The params with the exposed name (or URI) replaced by the upstream's own.
    pub params: Value,
}

/// The `invalid_params` error of a name that no server has.
pub fn unknown(what: &str, name: &str) -> ErrorObject {
    Cause::InvalidParams.error(Some(Value::String(format!(
        "no server behind the bridge has the {what} {name:?}"
    ))))
}

/// The owner of the request `method` with `params` (`tools/call` and `prompts/get` by name,
/// `resources/read`, `resources/subscribe` and `resources/unsubscribe` by URI,
/// `completion/complete` by its `ref`), with the params it gets. `None` for a method that no
/// single server owns. Errors: `invalid_params`, naming what no server has.
pub fn route(
    table: &NameTable,
    method: &str,
    params: &Value,
) -> Option<Result<Routed, ErrorObject>> {
    let (pointer, kind, what) = match method {
        methods::TOOLS_CALL => ("/name", ItemKind::Tool, "tool"),
        methods::PROMPTS_GET => ("/name", ItemKind::Prompt, "prompt"),
        methods::RESOURCES_READ | methods::RESOURCES_SUBSCRIBE | methods::RESOURCES_UNSUBSCRIBE => {
            ("/uri", ItemKind::Resource, "resource")
        }
        methods::COMPLETION_COMPLETE => match params.pointer("/ref/type").and_then(Value::as_str) {
            Some("ref/prompt") => ("/ref/name", ItemKind::Prompt, "prompt"),
            Some("ref/resource") => ("/ref/uri", ItemKind::ResourceTemplate, "resource template"),
            _ => {
                return Some(Err(Cause::InvalidParams.error(Some(Value::String(
                    "params.ref.type must be \"ref/prompt\" or \"ref/resource\"".into(),
                )))));
            }
        },
        _ => return None,
    };
    let Some(exposed) = params.pointer(pointer).and_then(Value::as_str) else {
        return Some(Err(Cause::InvalidParams.error(Some(Value::String(
            format!("params{} must be a string", pointer.replace('/', ".")),
        )))));
    };
    let Some(owner) = table.resolve(kind, exposed) else {
        return Some(Err(unknown(what, exposed)));
    };
    let mut params = params.clone();
    if let Some(slot) = params.pointer_mut(pointer) {
        *slot = Value::String(owner.original);
    }
    Some(Ok(Routed {
        server: owner.server,
        params,
    }))
}

/// A notification of the server `space` as the editor gets it: a resource's update under its
/// exposed URI, a log message with the server in its `logger` (`{server}` or
/// `{server}/{logger}`); the others as they are.
pub fn expose_notification(space: &Namespace, method: &str, mut params: Value) -> Value {
    match method {
        methods::RESOURCES_UPDATED => {
            if let Some(uri) = params.get("uri").and_then(Value::as_str)
                && let Some(exposed) = expose_uri(&space.uri_token, uri)
                && let Some(o) = params.as_object_mut()
            {
                o.insert("uri".into(), Value::String(exposed));
            }
        }
        methods::MESSAGE => {
            let logger = match params.get("logger").and_then(Value::as_str) {
                Some(l) if !l.is_empty() => format!("{}/{l}", space.server),
                _ => space.server.clone(),
            };
            if let Some(o) = params.as_object_mut() {
                o.insert("logger".into(), Value::String(logger));
            }
        }
        _ => {}
    }
    params
}

/// The result of the server `space` to the request `method` as the editor gets it: each
/// resource URI in it under its exposed form (the `contents` of `resources/read`, the resource
/// links and embedded resources of a tool's `content` and of a prompt's messages), so that the
/// editor can read what it names through the bridge.
pub fn expose_result(space: &Namespace, method: &str, mut result: Value) -> Value {
    let token = space.uri_token.as_str();
    let expose = |slot: Option<&mut Value>| {
        if let Some(v) = slot
            && let Some(exposed) = v.as_str().and_then(|uri| expose_uri(token, uri))
        {
            *v = Value::String(exposed);
        }
    };
    let content = |item: &mut Value| match item.get("type").and_then(Value::as_str) {
        Some("resource_link") => expose(item.get_mut("uri")),
        Some("resource") => expose(item.pointer_mut("/resource/uri")),
        _ => {}
    };
    match method {
        methods::RESOURCES_READ => {
            if let Some(Value::Array(contents)) = result.get_mut("contents") {
                for c in contents {
                    expose(c.get_mut("uri"));
                }
            }
        }
        methods::TOOLS_CALL => {
            if let Some(Value::Array(items)) = result.get_mut("content") {
                items.iter_mut().for_each(content);
            }
        }
        methods::PROMPTS_GET => {
            if let Some(Value::Array(messages)) = result.get_mut("messages") {
                for m in messages {
                    if let Some(c) = m.get_mut("content") {
                        content(c);
                    }
                }
            }
        }
        _ => {}
    }
    result
}

/// An error of the server `space` as the editor gets it: an error the bridge made for that
/// server (`data.cause`) also names the server in `data.server`, so the editor can tell which
/// of its servers failed, and a resource URI in `data.uri` (the "resource not found" error of
/// 2025-11-25) is the exposed one; the rest passes unchanged.
pub fn expose_error(space: &Namespace, mut error: Value) -> Value {
    if let Some(data) = error.get_mut("data").and_then(Value::as_object_mut) {
        if data.contains_key("cause") {
            data.insert("server".into(), Value::String(space.server.clone()));
        }
        let exposed = data
            .get("uri")
            .and_then(Value::as_str)
            .and_then(|uri| expose_uri(&space.uri_token, uri));
        if let Some(uri) = exposed {
            data.insert("uri".into(), Value::String(uri));
        }
    }
    error
}

/// The error of a request to a server that is not there: `upstream_exited`, naming the
/// server in `data.server`, with `detail` (it exited, it restarts, it is failed).
pub fn server_gone(server: &str, detail: String) -> Value {
    let mut error = Cause::UpstreamExited.error_object(Some(Value::String(detail)));
    if let Some(data) = error.get_mut("data").and_then(Value::as_object_mut) {
        data.insert("server".into(), Value::String(server.to_owned()));
    }
    error
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::rules::names::namespace;

    fn table(servers: &[&str]) -> NameTable {
        let spaces = servers
            .iter()
            .map(|s| namespace(s, None).unwrap_or_else(|e| panic!("{s}: {e}")))
            .collect();
        NameTable::new(spaces).unwrap_or_else(|c| panic!("{c:?}"))
    }

    #[test]
    fn the_capabilities_always_declare_the_lists_and_subscribe_when_one_server_does() {
        let a = json!({"capabilities": {"tools": {}}});
        let b = json!({"capabilities": {"resources": {"subscribe": true}}});
        assert_eq!(
            merge_capabilities([&a]),
            json!({"tools": {"listChanged": true}, "prompts": {"listChanged": true},
                   "resources": {"listChanged": true}, "logging": {}, "completions": {}})
        );
        assert_eq!(
            merge_capabilities([&a, &b])["resources"],
            json!({"subscribe": true, "listChanged": true})
        );
    }

    #[test]
    fn instructions_come_under_a_heading_per_server_and_empty_ones_are_left_out() {
        assert_eq!(
            merge_instructions([("a", Some("Use a.")), ("b", None), ("c", Some("  "))]),
            Some("## a\n\nUse a.".into())
        );
        assert_eq!(
            merge_instructions([("a", Some("one")), ("b", Some("two"))]),
            Some("## a\n\none\n\n## b\n\ntwo".into())
        );
        assert_eq!(merge_instructions([("a", None)]), None);
    }

    #[test]
    fn items_get_their_exposed_names_and_a_clash_is_left_out() {
        let mut t = table(&["files", "git"]);
        let (kept, out) = expose_items(
            &mut t,
            0,
            ItemKind::Tool,
            vec![
                json!({"name": "read", "inputSchema": {}}),
                json!({"title": "x"}),
            ],
        );
        assert_eq!(
            kept,
            vec![
                json!({"name": "files__read", "inputSchema": {}}),
                json!({"title": "x"})
            ]
        );
        assert!(out.is_empty());
        let (kept, _) = expose_items(
            &mut t,
            1,
            ItemKind::Resource,
            vec![
                json!({"uri": "git://HEAD", "name": "head"}),
                json!({"uri": "relative"}),
            ],
        );
        assert_eq!(kept, vec![json!({"uri": "git+git://HEAD", "name": "head"})]);
    }

    #[test]
    fn a_request_goes_to_its_owner_with_the_upstreams_own_name() {
        let mut t = table(&["files", "git"]);
        let _ = expose_items(&mut t, 1, ItemKind::Tool, vec![json!({"name": "log"})]);
        assert_eq!(
            route(
                &t,
                "tools/call",
                &json!({"name": "git__log", "arguments": {}})
            ),
            Some(Ok(Routed {
                server: 1,
                params: json!({"name": "log", "arguments": {}})
            }))
        );
        assert_eq!(
            route(&t, "resources/read", &json!({"uri": "files+file:///a"})),
            Some(Ok(Routed {
                server: 0,
                params: json!({"uri": "file:///a"})
            }))
        );
        assert_eq!(
            route(
                &t,
                "completion/complete",
                &json!({"ref": {"type": "ref/resource", "uri": "git+git://{rev}"},
                        "argument": {"name": "rev", "value": "m"}})
            ),
            Some(Ok(Routed {
                server: 1,
                params: json!({"ref": {"type": "ref/resource", "uri": "git://{rev}"},
                               "argument": {"name": "rev", "value": "m"}})
            }))
        );
        let Some(Err(e)) = route(&t, "tools/call", &json!({"name": "nope"})) else {
            panic!("an unknown tool is an error");
        };
        assert_eq!(
            e.to_value()["data"],
            json!({"cause": "invalid_params",
                   "detail": "no server behind the bridge has the tool \"nope\""})
        );
        assert_eq!(route(&t, "ping", &json!({})), None);
    }

    #[test]
    fn a_servers_notifications_carry_its_names() {
        let space = namespace("git", None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            expose_notification(
                &space,
                methods::RESOURCES_UPDATED,
                json!({"uri": "git://HEAD"})
            ),
            json!({"uri": "git+git://HEAD"})
        );
        assert_eq!(
            expose_notification(
                &space,
                methods::MESSAGE,
                json!({"level": "info", "data": 1})
            ),
            json!({"level": "info", "data": 1, "logger": "git"})
        );
        assert_eq!(
            expose_notification(&space, methods::MESSAGE, json!({"logger": "db", "data": 1})),
            json!({"logger": "git/db", "data": 1})
        );
    }

    #[test]
    fn the_merged_lists_come_in_pages_of_the_bridges_own_cursors() {
        let total = LIST_PAGE_MAX_ITEMS + 2;
        let next = format!("mcp-bridge-page-{LIST_PAGE_MAX_ITEMS}");
        assert_eq!(
            page_bounds(total, 0),
            Some((LIST_PAGE_MAX_ITEMS, Some(next.clone())))
        );
        assert_eq!(read_cursor(&json!(next)), Some(LIST_PAGE_MAX_ITEMS));
        assert_eq!(page_bounds(total, LIST_PAGE_MAX_ITEMS), Some((total, None)));
        assert_eq!(page_bounds(total, total), None);
        assert_eq!(page_bounds(0, 0), Some((0, None)));
        assert_eq!(read_cursor(&json!("2")), None);
        assert_eq!(read_cursor(&json!(5)), None);
    }

    #[test]
    fn the_uris_of_a_result_are_exposed() {
        let space = namespace("git", None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            expose_result(
                &space,
                methods::RESOURCES_READ,
                json!({"contents": [{"uri": "git://HEAD", "text": "x"}]})
            ),
            json!({"contents": [{"uri": "git+git://HEAD", "text": "x"}]})
        );
        assert_eq!(
            expose_result(
                &space,
                methods::TOOLS_CALL,
                json!({"content": [
                    {"type": "text", "text": "git://not-a-link"},
                    {"type": "resource_link", "uri": "git://a", "name": "a"},
                    {"type": "resource", "resource": {"uri": "git://b", "text": "b"}}
                ]})
            ),
            json!({"content": [
                {"type": "text", "text": "git://not-a-link"},
                {"type": "resource_link", "uri": "git+git://a", "name": "a"},
                {"type": "resource", "resource": {"uri": "git+git://b", "text": "b"}}
            ]})
        );
        assert_eq!(
            expose_result(
                &space,
                methods::PROMPTS_GET,
                json!({"messages": [{"role": "user",
                    "content": {"type": "resource_link", "uri": "git://c", "name": "c"}}]})
            ),
            json!({"messages": [{"role": "user",
                "content": {"type": "resource_link", "uri": "git+git://c", "name": "c"}}]})
        );
    }

    #[test]
    fn errors_the_bridge_made_name_the_server_and_uris_are_exposed() {
        let git = namespace("git", None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            expose_error(&git, json!({"code": -32603, "data": {"cause": "timeout"}})),
            json!({"code": -32603, "data": {"cause": "timeout", "server": "git"}})
        );
        assert_eq!(
            expose_error(&git, json!({"code": -32000, "data": {"x": 1}})),
            json!({"code": -32000, "data": {"x": 1}})
        );
        assert_eq!(
            expose_error(&git, json!({"code": -32002, "data": {"uri": "git://x"}})),
            json!({"code": -32002, "data": {"uri": "git+git://x"}})
        );
        assert_eq!(
            server_gone("git", "the server git exited".into())["data"],
            json!({"cause": "upstream_exited", "detail": "the server git exited", "server": "git"})
        );
    }
}
