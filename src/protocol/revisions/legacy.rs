//! The 2025-11-25 side that the bridge serves to the editor: the editor's requests and
//! notifications as typed values ([`EditorRequest`], [`EditorNotification`], read once from the
//! method name), log levels, and the params of `initialize`, `logging/setLevel` and
//! `notifications/cancelled`.

use super::log_level::LogLevel;
use super::methods;
use super::modern::META_PROTOCOL_VERSION;
use crate::protocol::wire::id::Id;
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
            Forwarded::ToolsList => methods::TOOLS_LIST,
            Forwarded::ToolsCall => methods::TOOLS_CALL,
            Forwarded::PromptsList => methods::PROMPTS_LIST,
            Forwarded::PromptsGet => methods::PROMPTS_GET,
            Forwarded::ResourcesList => methods::RESOURCES_LIST,
            Forwarded::ResourcesTemplatesList => methods::RESOURCES_TEMPLATES_LIST,
            Forwarded::ResourcesRead => methods::RESOURCES_READ,
            Forwarded::CompletionComplete => methods::COMPLETION_COMPLETE,
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

/// The class of a request from the editor: its method, without params (what a slot keeps).
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

impl RequestClass {
    /// The method name on the wire; `None` for [`RequestClass::Unknown`].
    pub fn method(self) -> Option<&'static str> {
        Some(match self {
            RequestClass::Initialize => methods::INITIALIZE,
            RequestClass::Ping => methods::PING,
            RequestClass::SetLevel => methods::LOGGING_SET_LEVEL,
            RequestClass::Discover => methods::SERVER_DISCOVER,
            RequestClass::Subscribe => methods::RESOURCES_SUBSCRIBE,
            RequestClass::Unsubscribe => methods::RESOURCES_UNSUBSCRIBE,
            RequestClass::Forward(f) => f.method(),
            RequestClass::Unknown => return None,
        })
    }
}

/// The class of a method name of a request.
pub fn classify_request(method: &str) -> RequestClass {
    match method {
        methods::INITIALIZE => RequestClass::Initialize,
        methods::PING => RequestClass::Ping,
        methods::LOGGING_SET_LEVEL => RequestClass::SetLevel,
        methods::SERVER_DISCOVER => RequestClass::Discover,
        methods::RESOURCES_SUBSCRIBE => RequestClass::Subscribe,
        methods::RESOURCES_UNSUBSCRIBE => RequestClass::Unsubscribe,
        m => Forwarded::ALL
            .iter()
            .find(|f| f.method() == m)
            .map_or(RequestClass::Unknown, |f| RequestClass::Forward(*f)),
    }
}

/// A request of the editor, read once from its method and params (the shape of mini-redis's
/// `Command::from_frame`). Params the bridge reads whatever the lifecycle state are read here
/// (`logging/setLevel`); the others stay as they came, because the lifecycle decides first
/// which error a request gets (a second `initialize` is `already_initialized` whatever its
/// params).
#[derive(Clone, Debug, PartialEq)]
pub enum EditorRequest {
    /// `initialize` with its params (read by [`initialize_params`]).
    Initialize(Option<Value>),
    /// `ping`.
    Ping,
    /// `logging/setLevel`; `None` when its params are not `{level}` with a logging level.
    SetLevel(Option<LogLevel>),
    /// `server/discover`: a 2026-07-28 method the bridge does not serve (-32601).
    Discover,
    /// `resources/subscribe` with its params (read by [`crate::protocol::listen::resource_uri`]).
    Subscribe(Option<Value>),
    /// `resources/unsubscribe` with its params.
    Unsubscribe(Option<Value>),
    /// One of the forwarded methods with its params.
    Forward(Forwarded, Option<Value>),
    /// Any other method (-32601 once initialized).
    Unknown {
        /// The method name as it came.
        method: String,
        /// The params as they came.
        params: Option<Value>,
    },
}

impl EditorRequest {
    /// Reads a request from its method name and params.
    pub fn from_request(method: String, params: Option<Value>) -> EditorRequest {
        match classify_request(&method) {
            RequestClass::Initialize => EditorRequest::Initialize(params),
            RequestClass::Ping => EditorRequest::Ping,
            RequestClass::SetLevel => EditorRequest::SetLevel(set_level_params(params.as_ref())),
            RequestClass::Discover => EditorRequest::Discover,
            RequestClass::Subscribe => EditorRequest::Subscribe(params),
            RequestClass::Unsubscribe => EditorRequest::Unsubscribe(params),
            RequestClass::Forward(f) => EditorRequest::Forward(f, params),
            RequestClass::Unknown => EditorRequest::Unknown { method, params },
        }
    }

    /// The class of the request (its method without params).
    pub fn class(&self) -> RequestClass {
        match self {
            EditorRequest::Initialize(_) => RequestClass::Initialize,
            EditorRequest::Ping => RequestClass::Ping,
            EditorRequest::SetLevel(_) => RequestClass::SetLevel,
            EditorRequest::Discover => RequestClass::Discover,
            EditorRequest::Subscribe(_) => RequestClass::Subscribe,
            EditorRequest::Unsubscribe(_) => RequestClass::Unsubscribe,
            EditorRequest::Forward(f, _) => RequestClass::Forward(*f),
            EditorRequest::Unknown { .. } => RequestClass::Unknown,
        }
    }

    /// The method name as it came (for `data.detail` of -32601 and for the log).
    pub fn method(&self) -> &str {
        match self {
            EditorRequest::Unknown { method, .. } => method,
            known => known.class().method().unwrap_or_default(),
        }
    }

    /// The params as they came; `None` for the requests whose params are read at once or
    /// not at all (`ping`, `logging/setLevel`, `server/discover`).
    pub fn params(&self) -> Option<&Value> {
        match self {
            EditorRequest::Initialize(p)
            | EditorRequest::Subscribe(p)
            | EditorRequest::Unsubscribe(p)
            | EditorRequest::Forward(_, p)
            | EditorRequest::Unknown { params: p, .. } => p.as_ref(),
            EditorRequest::Ping | EditorRequest::SetLevel(_) | EditorRequest::Discover => None,
        }
    }

    /// True when `params._meta` names a 2026-07-28 protocol version: a 2026-07-28 client that
    /// skipped `initialize` gets -32601 instead of `not_initialized`.
    pub fn names_modern_version(&self) -> bool {
        self.params()
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get(META_PROTOCOL_VERSION))
            .is_some()
    }
}

/// A notification of the editor, read once from its method and params.
#[derive(Clone, Debug, PartialEq)]
pub enum EditorNotification {
    /// `notifications/initialized`.
    Initialized,
    /// `notifications/cancelled`: the request id (`None` when it is not a string or an
    /// integer) and the reason when it is a string.
    Cancelled {
        request_id: Option<Id>,
        reason: Option<String>,
    },
    /// Any other notification, known to MCP or not (for example
    /// `notifications/roots/list_changed`): the bridge ignores it.
    Unknown(String),
}

impl EditorNotification {
    /// Reads a notification from its method name and params.
    pub fn from_notification(method: String, params: Option<&Value>) -> EditorNotification {
        match method.as_str() {
            methods::INITIALIZED => EditorNotification::Initialized,
            methods::CANCELLED => EditorNotification::Cancelled {
                request_id: cancelled_request_id(params),
                reason: cancelled_reason(params),
            },
            _ => EditorNotification::Unknown(method),
        }
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

/// The `data.detail` of `initialize` params that are no `InitializeRequestParams`.
pub const INITIALIZE_PARAMS_DETAIL: &str = "params must be InitializeRequestParams";
/// The `data.detail` of an `initialize` whose `protocolVersion` is no string.
pub const PROTOCOL_VERSION_DETAIL: &str = "params.protocolVersion must be a string";

/// Reads `initialize` params. Errors (with the `data.detail` of the -32602) when params are
/// not an object, `capabilities` is present and not an object, or `protocolVersion` is
/// present and not a string (2025-11-25 schema: `protocolVersion: string`; an answer to a
/// version that is no version would name a version the client never asked for). A missing
/// `clientInfo` is tolerated; a bridge gains nothing by refusing an editor that forgot it.
///
/// # Errors
/// The detail text ([`INITIALIZE_PARAMS_DETAIL`], [`PROTOCOL_VERSION_DETAIL`]).
pub fn initialize_params(params: Option<&Value>) -> Result<InitializeParams, &'static str> {
    let p = params
        .and_then(Value::as_object)
        .ok_or(INITIALIZE_PARAMS_DETAIL)?;
    let capabilities = match p.get("capabilities") {
        None => Value::Object(Default::default()),
        Some(c) if c.is_object() => c.clone(),
        Some(_) => return Err(INITIALIZE_PARAMS_DETAIL),
    };
    let protocol_version = match p.get("protocolVersion") {
        None => None,
        Some(Value::String(version)) => Some(version.clone()),
        Some(_) => return Err(PROTOCOL_VERSION_DETAIL),
    };
    let client_info = p.get("clientInfo").filter(|ci| {
        ci.get("name").is_some_and(Value::is_string)
            && ci.get("version").is_some_and(Value::is_string)
    });
    Ok(InitializeParams {
        capabilities,
        client_info: client_info.cloned(),
        protocol_version,
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
            assert_eq!(RequestClass::Forward(f).method(), Some(f.method()));
        }
    }

    #[test]
    fn an_editor_request_is_read_once_from_its_method() {
        let p = Some(json!({"x": 1}));
        let table = [
            (
                "initialize",
                p.clone(),
                EditorRequest::Initialize(p.clone()),
            ),
            ("ping", None, EditorRequest::Ping),
            (
                "logging/setLevel",
                Some(json!({"level": "error"})),
                EditorRequest::SetLevel(Some(LogLevel::Error)),
            ),
            (
                "logging/setLevel",
                Some(json!({"level": "loud"})),
                EditorRequest::SetLevel(None),
            ),
            ("server/discover", p.clone(), EditorRequest::Discover),
            (
                "resources/subscribe",
                p.clone(),
                EditorRequest::Subscribe(p.clone()),
            ),
            (
                "resources/unsubscribe",
                None,
                EditorRequest::Unsubscribe(None),
            ),
            (
                "tools/call",
                p.clone(),
                EditorRequest::Forward(Forwarded::ToolsCall, p.clone()),
            ),
            (
                "tasks/list",
                p.clone(),
                EditorRequest::Unknown {
                    method: "tasks/list".into(),
                    params: p.clone(),
                },
            ),
            (
                "Tools/Call",
                None,
                EditorRequest::Unknown {
                    method: "Tools/Call".into(),
                    params: None,
                },
            ),
        ];
        for (method, params, want) in table {
            let got = EditorRequest::from_request(method.into(), params);
            assert_eq!(got, want, "{method}");
            assert_eq!(got.method(), method);
        }
    }

    #[test]
    fn only_a_2026_protocol_version_in_meta_marks_a_modern_request() {
        let table = [
            (
                json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
                true,
            ),
            (
                json!({"_meta": {"io.modelcontextprotocol/protocolVersion": null}}),
                true,
            ),
            (json!({"_meta": {"progressToken": 1}}), false),
            (json!({"protocolVersion": "2026-07-28"}), false),
            (json!([1]), false),
        ];
        for (params, modern) in table {
            let r = EditorRequest::from_request("tools/list".into(), Some(params.clone()));
            assert_eq!(r.names_modern_version(), modern, "{params}");
        }
        assert!(!EditorRequest::from_request("tools/list".into(), None).names_modern_version());
    }

    #[test]
    fn an_editor_notification_is_read_once_from_its_method() {
        let table = [
            (
                "notifications/initialized",
                json!({}),
                EditorNotification::Initialized,
            ),
            (
                "notifications/cancelled",
                json!({"requestId": "a", "reason": "stop"}),
                EditorNotification::Cancelled {
                    request_id: Some(Id::Str("a".into())),
                    reason: Some("stop".into()),
                },
            ),
            (
                "notifications/cancelled",
                json!({"requestId": [1]}),
                EditorNotification::Cancelled {
                    request_id: None,
                    reason: None,
                },
            ),
            (
                "notifications/roots/list_changed",
                json!({}),
                EditorNotification::Unknown("notifications/roots/list_changed".into()),
            ),
        ];
        for (method, params, want) in table {
            assert_eq!(
                EditorNotification::from_notification(method.into(), Some(&params)),
                want,
                "{method}"
            );
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
        let refused = Err(INITIALIZE_PARAMS_DETAIL);
        assert_eq!(initialize_params(Some(&json!([1]))), refused);
        assert_eq!(initialize_params(None), refused);
        assert_eq!(
            initialize_params(Some(&json!({"capabilities": 3}))),
            refused
        );
        let p = initialize_params(Some(&json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "ed", "version": "1"}
        })))
        .unwrap_or_default();
        assert_eq!(p.capabilities, json!({"elicitation": {}}));
        assert_eq!(p.client_info, Some(json!({"name": "ed", "version": "1"})));
        assert_eq!(p.protocol_version.as_deref(), Some("2025-11-25"));
    }

    #[test]
    fn a_protocol_version_that_is_no_string_is_refused_and_a_missing_one_tolerated() {
        for version in [json!(5), json!(null), json!(["2025-11-25"]), json!({})] {
            assert_eq!(
                initialize_params(Some(
                    &json!({"protocolVersion": version, "capabilities": {}})
                )),
                Err(PROTOCOL_VERSION_DETAIL),
                "{version}"
            );
        }
        let p = initialize_params(Some(&json!({"capabilities": {}}))).unwrap_or_default();
        assert_eq!(p.protocol_version, None);
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
