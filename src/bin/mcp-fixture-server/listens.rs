//! Test tools that drive the open listen streams from the server side: publish an event, end
//! every listen.

use mcp_bridge::server::{ListenEnd, ListenEvent, Outcome, RequestContext};
use serde_json::Value;

use crate::tool::{Failure, ToolResult, string};

pub(crate) async fn notify(a: Value, ctx: RequestContext) -> ToolResult {
    let event = match string(&a, "event")?.as_str() {
        "tools_list_changed" => ListenEvent::ToolsListChanged,
        "prompts_list_changed" => ListenEvent::PromptsListChanged,
        "resources_list_changed" => ListenEvent::ResourcesListChanged,
        "resource_updated" => ListenEvent::ResourceUpdated {
            uri: string(&a, "uri")?,
        },
        other => return Err(Failure::Arguments(format!("unknown event: {other}"))),
    };
    ctx.server().notify(event);
    Ok(Outcome::text("notified"))
}

pub(crate) async fn end_listens(a: Value, ctx: RequestContext) -> ToolResult {
    let how = match string(&a, "how")?.as_str() {
        "result" => ListenEnd::Result,
        "cancelled" => ListenEnd::Cancelled,
        other => return Err(Failure::Arguments(format!("unknown way to end: {other}"))),
    };
    ctx.server().end_listens(how);
    Ok(Outcome::text("ended"))
}
