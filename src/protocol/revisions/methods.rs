//! The JSON-RPC method names of MCP that the bridge and the server API read or send, defined
//! once. Outside `protocol/` code names a method through these constants or the typed
//! enums built on them ([`super::legacy::EditorRequest`],
//! [`super::modern::UpstreamNotification`]), never through a string literal.

/// `initialize` (2025-11-25 lifecycle; 2026-07-28 servers answer it with -32022).
pub const INITIALIZE: &str = "initialize";
/// `ping`.
pub const PING: &str = "ping";
/// `logging/setLevel` (2025-11-25).
pub const LOGGING_SET_LEVEL: &str = "logging/setLevel";
/// `server/discover` (2026-07-28 lifecycle).
pub const SERVER_DISCOVER: &str = "server/discover";
/// `resources/subscribe` (2025-11-25).
pub const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
/// `resources/unsubscribe` (2025-11-25).
pub const RESOURCES_UNSUBSCRIBE: &str = "resources/unsubscribe";
/// `subscriptions/listen` (2026-07-28 listen streams).
pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";
/// `tools/list`.
pub const TOOLS_LIST: &str = "tools/list";
/// `tools/call`.
pub const TOOLS_CALL: &str = "tools/call";
/// `prompts/list`.
pub const PROMPTS_LIST: &str = "prompts/list";
/// `prompts/get`.
pub const PROMPTS_GET: &str = "prompts/get";
/// `resources/list`.
pub const RESOURCES_LIST: &str = "resources/list";
/// `resources/templates/list`.
pub const RESOURCES_TEMPLATES_LIST: &str = "resources/templates/list";
/// `resources/read`.
pub const RESOURCES_READ: &str = "resources/read";
/// `completion/complete`.
pub const COMPLETION_COMPLETE: &str = "completion/complete";
/// `elicitation/create` (a request to the editor; an input request in 2026-07-28).
pub const ELICITATION_CREATE: &str = "elicitation/create";
/// `sampling/createMessage` (a request to the editor; an input request in 2026-07-28).
pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
/// `roots/list` (a request to the editor; an input request in 2026-07-28).
pub const ROOTS_LIST: &str = "roots/list";

/// `notifications/initialized` (2025-11-25 lifecycle).
pub const INITIALIZED: &str = "notifications/initialized";
/// `notifications/cancelled` (both revisions).
pub const CANCELLED: &str = "notifications/cancelled";
/// `notifications/progress` (both revisions).
pub const PROGRESS: &str = "notifications/progress";
/// `notifications/message`: a log message (both revisions).
pub const MESSAGE: &str = "notifications/message";
/// `notifications/elicitation/complete` (2025-11-25 URL elicitation).
pub const ELICITATION_COMPLETE: &str = "notifications/elicitation/complete";
/// `notifications/subscriptions/acknowledged` (2026-07-28 listen streams).
pub const SUBSCRIPTIONS_ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";
/// `notifications/tools/list_changed`.
pub const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
/// `notifications/prompts/list_changed`.
pub const PROMPTS_LIST_CHANGED: &str = "notifications/prompts/list_changed";
/// `notifications/resources/list_changed`.
pub const RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";
/// `notifications/resources/updated`.
pub const RESOURCES_UPDATED: &str = "notifications/resources/updated";
