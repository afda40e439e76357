//! The 2025-11-25 side that the bridge serves to the editor: the class of each method and
//! notification, log levels, and the params of `initialize`, `logging/setLevel` and
//! `notifications/cancelled`.

use super::jsonrpc::Id;
use serde_json::Value;

/// The protocol revision the bridge speaks to the editor.
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// The eight methods the bridge forwards upstream; both revisions have them with these names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Forwarded {
    ToolsList,
    ToolsCall,
    PromptsList,
    PromptsGet,
    ResourcesList,
    ResourcesTemplatesList,
    ResourcesRead,
    CompletionComplete,
}

impl Forwarded {
    /// All forwarded methods, in a fixed order.
    pub const ALL: [Forwarded; 8] = [
        Forwarded::ToolsList,
        Forwarded::ToolsCall,
        Forwarded::PromptsList,
        Forwarded::PromptsGet,
        Forwarded::ResourcesList,
        Forwarded::ResourcesTemplatesList,
        Forwarded::ResourcesRead,
        Forwarded::CompletionComplete,
    ];

    /// The method name on the wire.
    pub fn method(self) -> &'static str {
        match self {
            Forwarded::ToolsList => "tools/list",
            Forwarded::ToolsCall => "tools/call",
            Forwarded::PromptsList => "prompts/list",
            Forwarded::PromptsGet => "prompts/get",
            Forwarded::ResourcesList => "resources/list",
            Forwarded::ResourcesTemplatesList => "resources/templates/list",
            Forwarded::ResourcesRead => "resources/read",
            Forwarded::CompletionComplete => "completion/complete",
        }
    }

    /// True for the paginated list methods, whose results carry `nextCursor`.
    pub fn is_list(self) -> bool {
        matches!(
            self,
            Forwarded::ToolsList
                | Forwarded::PromptsList
                | Forwarded::ResourcesList
                | Forwarded::ResourcesTemplatesList
        )
    }

    /// True for the methods that may answer `input_required` (2026-07-28 MRTR).
    pub fn may_require_input(self) -> bool {
        matches!(
            self,
            Forwarded::ToolsCall | Forwarded::PromptsGet | Forwarded::ResourcesRead
        )
    }
}

/// The class of a request from the editor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestClass {
    Initialize,
    Ping,
    SetLevel,
    Discover,
    Subscribe,
    Unsubscribe,
    Forward(Forwarded),
    Unknown,
}

/// The class of a method name of a request.
pub fn classify_request(method: &str) -> RequestClass {
    match method {
        "initialize" => RequestClass::Initialize,
        "ping" => RequestClass::Ping,
        "logging/setLevel" => RequestClass::SetLevel,
        "server/discover" => RequestClass::Discover,
        "resources/subscribe" => RequestClass::Subscribe,
        "resources/unsubscribe" => RequestClass::Unsubscribe,
        m => Forwarded::ALL
            .iter()
            .find(|f| f.method() == m)
            .map_or(RequestClass::Unknown, |f| RequestClass::Forward(*f)),
    }
}

/// The class of a notification from the editor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotificationClass {
    Initialized,
    Cancelled,
    /// Known or unknown, the bridge ignores it (for example `notifications/roots/list_changed`).
    Other,
}

/// The class of a method name of a notification.
pub fn classify_notification(method: &str) -> NotificationClass {
    match method {
        "notifications/initialized" => NotificationClass::Initialized,
        "notifications/cancelled" => NotificationClass::Cancelled,
        _ => NotificationClass::Other,
    }
}

/// RFC 5424 severities of MCP logging (`LoggingLevel`, the same in both revisions), from the
/// least severe, so `Ord` is severity order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// Reads a level name (`"debug"` .. `"emergency"`).
    pub fn parse(s: &str) -> Option<LogLevel> {
        Some(match s {
            "debug" => LogLevel::Debug,
            "info" => LogLevel::Info,
            "notice" => LogLevel::Notice,
            "warning" => LogLevel::Warning,
            "error" => LogLevel::Error,
            "critical" => LogLevel::Critical,
            "alert" => LogLevel::Alert,
            "emergency" => LogLevel::Emergency,
            _ => return None,
        })
    }

    /// The level name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }
}

impl std::str::FromStr for LogLevel {
    type Err = ();

    fn from_str(name: &str) -> Result<Self, ()> {
        LogLevel::parse(name).ok_or(())
    }
}

/// The level of `logging/setLevel` params `{level}`; `None` when the params are not valid.
pub fn set_level_params(params: Option<&Value>) -> Option<LogLevel> {
    LogLevel::parse(params?.get("level")?.as_str()?)
}

/// The request id of `notifications/cancelled` params `{requestId, reason?}`.
pub fn cancelled_request_id(params: Option<&Value>) -> Option<Id> {
    Id::from_value(params?.get("requestId")?)
}

/// The `reason` of `notifications/cancelled` params `{requestId, reason?}` when it is a
/// string (2025-11-25 `CancelledNotificationParams`); it goes upstream unchanged.
pub fn cancelled_reason(params: Option<&Value>) -> Option<String> {
    params?.get("reason")?.as_str().map(str::to_string)
}

/// What the bridge keeps of the editor's `initialize` params.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InitializeParams {
    /// The editor's 2025-11-25 `ClientCapabilities` (an object; `{}` when absent).
    pub capabilities: Value,
    /// The editor's `clientInfo` (`Implementation`), when given and valid.
    pub client_info: Option<Value>,
    /// The version the editor asked for.
    pub protocol_version: Option<String>,
}

/// Reads `initialize` params. Errors (`None`) when params are not an object or `capabilities`
/// is present and not an object. A missing `clientInfo` is tolerated; a bridge gains nothing by
/// refusing an editor that forgot it.
pub fn initialize_params(params: Option<&Value>) -> Option<InitializeParams> {
    let p = params?.as_object()?;
    let capabilities = match p.get("capabilities") {
        None => Value::Object(Default::default()),
        Some(c) if c.is_object() => c.clone(),
        Some(_) => return None,
    };
    let client_info = p.get("clientInfo").filter(|ci| {
        ci.get("name").is_some_and(Value::is_string)
            && ci.get("version").is_some_and(Value::is_string)
    });
    Some(InitializeParams {
        capabilities,
        client_info: client_info.cloned(),
        protocol_version: p
            .get("protocolVersion")
            .and_then(Value::as_str)
            .map(String::from),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn request_classes() {
        assert_eq!(classify_request("initialize"), RequestClass::Initialize);
        assert_eq!(classify_request("server/discover"), RequestClass::Discover);
        assert_eq!(
            classify_request("tools/call"),
            RequestClass::Forward(Forwarded::ToolsCall)
        );
        assert_eq!(
            classify_request("resources/templates/list"),
            RequestClass::Forward(Forwarded::ResourcesTemplatesList)
        );
        assert_eq!(classify_request("tasks/list"), RequestClass::Unknown);
        for f in Forwarded::ALL {
            assert_eq!(classify_request(f.method()), RequestClass::Forward(f));
        }
    }

    #[test]
    fn log_levels_are_ordered_by_severity() {
        assert!(LogLevel::Debug < LogLevel::Info && LogLevel::Alert < LogLevel::Emergency);
        assert_eq!(
            set_level_params(Some(&json!({"level": "warning"}))),
            Some(LogLevel::Warning)
        );
        assert_eq!(set_level_params(Some(&json!({"level": "loud"}))), None);
        assert_eq!(set_level_params(None), None);
    }

    #[test]
    fn initialize_params_need_an_object() {
        assert_eq!(initialize_params(Some(&json!([1]))), None);
        assert_eq!(initialize_params(Some(&json!({"capabilities": 3}))), None);
        let p = initialize_params(Some(&json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "ed", "version": "1"}
        })))
        .unwrap_or_default();
        assert_eq!(p.capabilities, json!({"elicitation": {}}));
        assert_eq!(p.client_info, Some(json!({"name": "ed", "version": "1"})));
    }

    #[test]
    fn cancelled_needs_a_scalar_request_id() {
        assert_eq!(
            cancelled_request_id(Some(&json!({"requestId": 3}))),
            Some(Id::Int(3))
        );
        assert_eq!(
            cancelled_request_id(Some(&json!({"requestId": null}))),
            None
        );
    }

    #[test]
    fn a_cancelled_reason_is_kept_when_it_is_a_string() {
        for (params, reason) in [
            (
                json!({"requestId": 1, "reason": "user pressed stop"}),
                Some("user pressed stop"),
            ),
            (json!({"requestId": 1, "reason": ""}), Some("")),
            (
                json!({"requestId": 1, "reason": "a \"b\" \u{1F600}\n"}),
                Some("a \"b\" \u{1F600}\n"),
            ),
            (json!({"requestId": 1}), None),
            (json!({"requestId": 1, "reason": null}), None),
            (json!({"requestId": 1, "reason": 3}), None),
            (json!({"requestId": 1, "reason": {"text": "x"}}), None),
        ] {
            assert_eq!(
                cancelled_reason(Some(&params)).as_deref(),
                reason,
                "{params}"
            );
        }
        assert_eq!(cancelled_reason(None), None);
    }
}
