//! A listen event of the upstream and the 2025-11-25 notification it becomes for the editor
//! (never with the subscription id), and the synthetic events after a gap.

use crate::protocol::revisions::methods;
use crate::protocol::revisions::modern::UpstreamNotification;
use crate::protocol::wire::jsonrpc;
use serde_json::{Value, json};

/// One event of a listen stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListenEvent {
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// `notifications/prompts/list_changed`.
    PromptsListChanged,
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// `notifications/resources/updated` of `uri`.
    ResourceUpdated {
        /// The resource that changed.
        uri: String,
    },
}

impl ListenEvent {
    /// Reads an event notification of a listen stream; `None` for any other notification,
    /// and for an update without a string `uri`.
    pub fn from_notification(n: &UpstreamNotification) -> Option<ListenEvent> {
        Some(match n {
            UpstreamNotification::ToolsListChanged(_) => ListenEvent::ToolsListChanged,
            UpstreamNotification::PromptsListChanged(_) => ListenEvent::PromptsListChanged,
            UpstreamNotification::ResourcesListChanged(_) => ListenEvent::ResourcesListChanged,
            UpstreamNotification::ResourcesUpdated(params) => ListenEvent::ResourceUpdated {
                uri: params.get("uri")?.as_str()?.to_string(),
            },
            _ => return None,
        })
    }

    /// The 2025-11-25 notification for the editor: a list change without params, an update
    /// with only `uri`. Nothing of the upstream `_meta` (and so no subscription id) goes along.
    pub fn to_editor(&self) -> Value {
        match self {
            ListenEvent::ToolsListChanged => bare(methods::TOOLS_LIST_CHANGED),
            ListenEvent::PromptsListChanged => bare(methods::PROMPTS_LIST_CHANGED),
            ListenEvent::ResourcesListChanged => bare(methods::RESOURCES_LIST_CHANGED),
            ListenEvent::ResourceUpdated { uri } => {
                jsonrpc::notification(methods::RESOURCES_UPDATED, json!({"uri": uri}))
            }
        }
    }
}

pub(crate) fn bare(method: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": method})
}
