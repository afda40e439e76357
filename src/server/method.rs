//! The methods the server API serves (2026-07-28), parsed once from the request's name.

use crate::protocol::revisions::methods;

/// The methods a 2026-07-28 client may call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    Discover,
    ToolsList,
    ToolsCall,
    PromptsList,
    PromptsGet,
    ResourcesList,
    ResourceTemplatesList,
    ResourcesRead,
    Complete,
    Listen,
}

impl Method {
    /// The method of this name, `None` for a method the server API does not serve.
    pub(crate) fn parse(name: &str) -> Option<Self> {
        Some(match name {
            methods::SERVER_DISCOVER => Self::Discover,
            methods::TOOLS_LIST => Self::ToolsList,
            methods::TOOLS_CALL => Self::ToolsCall,
            methods::PROMPTS_LIST => Self::PromptsList,
            methods::PROMPTS_GET => Self::PromptsGet,
            methods::RESOURCES_LIST => Self::ResourcesList,
            methods::RESOURCES_TEMPLATES_LIST => Self::ResourceTemplatesList,
            methods::RESOURCES_READ => Self::ResourcesRead,
            methods::COMPLETION_COMPLETE => Self::Complete,
            methods::SUBSCRIPTIONS_LISTEN => Self::Listen,
            _ => return None,
        })
    }

    /// Only these may answer `input_required` (2026-07-28 basic/patterns/mrtr).
    pub(crate) fn allows_input_required(self) -> bool {
        matches!(
            self,
            Self::ToolsCall | Self::PromptsGet | Self::ResourcesRead
        )
    }
}
