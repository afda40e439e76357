//! The 2026-07-28 side that the bridge speaks to the upstream server: the per-request `_meta`
//! (basic/index "_meta"), the `server/discover` result (server/discover), and the
//! `resultType` of a result (basic/index "resultType", basic/patterns/mrtr), and the
//! upstream's notifications as typed values ([`UpstreamNotification`]).

use super::log_level::LogLevel;
use super::methods;
use crate::protocol::wire::jsonrpc;
use serde_json::{Map, Value};

/// The protocol revision the bridge speaks to the upstream server.
pub const PROTOCOL_VERSION: &str = "2026-07-28";
/// `_meta` key of the request's protocol version (required on every request).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the request's client capabilities (required on every request).
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the client's identity (should be on every request).
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of the request's log level.
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key of the server's identity in results.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key of the subscription id on listen-stream notifications.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// `_meta` key of a progress token (no prefix).
pub const META_PROGRESS_TOKEN: &str = "progressToken";

/// What every 2026-07-28 request carries in `_meta` besides its own keys (basic/index,
/// `RequestMetaObject`): the bridge writes it on its upstream requests, the server API reads it
/// from the requests it serves.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestMeta {
    /// The protocol version of the request (the bridge's: the one chosen from
    /// `supportedVersions`).
    pub protocol_version: String,
    /// The client's 2026-07-28 `ClientCapabilities` (the bridge's: derived from the editor's).
    pub client_capabilities: Value,
    /// The client's `Implementation` (name, version); a request should carry it, and the
    /// bridge's always do.
    pub client_info: Option<Value>,
    /// The lowest level of log notifications the client wants for this request (the bridge's:
    /// the level of the editor's last `logging/setLevel`, if any).
    pub log_level: Option<LogLevel>,
}

/// Why a request's `_meta` is not a `RequestMetaObject`; each text names the key.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MetaError {
    /// `params._meta` is absent or not an object.
    #[error("params._meta is required and must be an object")]
    NotAnObject,
    /// The protocol version key is absent or not a string.
    #[error("params._meta[\"{META_PROTOCOL_VERSION}\"] is required and must be a string")]
    NoVersion,
    /// The capabilities key is absent or not an object.
    #[error("params._meta[\"{META_CLIENT_CAPABILITIES}\"] is required and must be an object")]
    NoCapabilities,
    /// The version is not the one the reader serves (carries the requested one).
    #[error("protocol version {0} is not supported")]
    UnsupportedVersion(String),
    /// The log level key is not a `LoggingLevel`.
    #[error("params._meta[\"{META_LOG_LEVEL}\"] is not a LoggingLevel")]
    BadLogLevel,
}

impl RequestMeta {
    /// Reads the required and identity keys of a request's `_meta`, checking them in this
    /// order: an object, the version (a string, then `supported`), the capabilities (an
    /// object), the log level (a `LoggingLevel` when present). Returns the keys it did not
    /// read (`progressToken` and the request's own).
    pub fn read(
        meta: Option<Value>,
        supported: &str,
    ) -> Result<(RequestMeta, Map<String, Value>), MetaError> {
        let Some(Value::Object(mut meta)) = meta else {
            return Err(MetaError::NotAnObject);
        };
        let Some(Value::String(protocol_version)) = meta.remove(META_PROTOCOL_VERSION) else {
            return Err(MetaError::NoVersion);
        };
        let client_capabilities = match meta.remove(META_CLIENT_CAPABILITIES) {
            Some(capabilities @ Value::Object(_)) => capabilities,
            _ => return Err(MetaError::NoCapabilities),
        };
        if protocol_version != supported {
            return Err(MetaError::UnsupportedVersion(protocol_version));
        }
        let log_level = match meta.remove(META_LOG_LEVEL) {
            None => None,
            Some(level) => Some(
                level
                    .as_str()
                    .and_then(LogLevel::parse)
                    .ok_or(MetaError::BadLogLevel)?,
            ),
        };
        let client_info = meta.remove(META_CLIENT_INFO);
        Ok((
            RequestMeta {
                protocol_version,
                client_capabilities,
                client_info,
                log_level,
            },
            meta,
        ))
    }

    /// Writes the required and identity keys into a `_meta` map (existing keys of these names
    /// are replaced).
    pub fn write_into(&self, meta: &mut Map<String, Value>) {
        meta.insert(
            META_PROTOCOL_VERSION.into(),
            Value::String(self.protocol_version.clone()),
        );
        meta.insert(
            META_CLIENT_CAPABILITIES.into(),
            self.client_capabilities.clone(),
        );
        if let Some(info) = &self.client_info {
            meta.insert(META_CLIENT_INFO.into(), info.clone());
        }
        if let Some(level) = self.log_level {
            meta.insert(META_LOG_LEVEL.into(), Value::String(level.as_str().into()));
        }
    }

    /// Params `{"_meta": {...}}` of a request that has no other params (`server/discover`).
    pub fn bare_params(&self) -> Value {
        let mut meta = Map::new();
        self.write_into(&mut meta);
        let mut p = Map::new();
        p.insert("_meta".into(), Value::Object(meta));
        Value::Object(p)
    }
}

/// The parts of a `DiscoverResult` the bridge uses.
#[derive(Clone, Debug, PartialEq)]
pub struct Discovered {
    /// The version the bridge will use (always [`PROTOCOL_VERSION`] today).
    pub protocol_version: String,
    /// The server's 2026-07-28 `ServerCapabilities` object.
    pub capabilities: Value,
    /// `instructions`, when a string.
    pub instructions: Option<String>,
    /// `_meta["io.modelcontextprotocol/serverInfo"]`, when it is a valid `Implementation`.
    pub server_info: Option<Value>,
}

/// Why a discover result cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DiscoverError {
    /// The result is not an object or lacks `supportedVersions`/`capabilities`.
    #[error("the discover result is not a DiscoverResult")]
    Malformed,
    /// `supportedVersions` does not list the bridge's revision.
    #[error("the server supports none of the bridge's protocol versions")]
    NoCommonVersion,
}

/// Reads a `server/discover` result (server/discover, 2026-07-28).
pub fn read_discover(result: &Value) -> Result<Discovered, DiscoverError> {
    let obj = result.as_object().ok_or(DiscoverError::Malformed)?;
    if result_type(result) != ResultType::Complete {
        return Err(DiscoverError::Malformed);
    }
    let versions = obj
        .get("supportedVersions")
        .and_then(Value::as_array)
        .ok_or(DiscoverError::Malformed)?;
    let capabilities = obj
        .get("capabilities")
        .filter(|c| c.is_object())
        .ok_or(DiscoverError::Malformed)?;
    if !versions
        .iter()
        .any(|v| v.as_str() == Some(PROTOCOL_VERSION))
    {
        return Err(DiscoverError::NoCommonVersion);
    }
    Ok(Discovered {
        protocol_version: PROTOCOL_VERSION.into(),
        capabilities: capabilities.clone(),
        instructions: obj
            .get("instructions")
            .and_then(Value::as_str)
            .map(String::from),
        server_info: server_info(result),
    })
}

/// `_meta["io.modelcontextprotocol/serverInfo"]` of a result when it has string `name` and
/// `version`.
pub fn server_info(result: &Value) -> Option<Value> {
    let info = result.get("_meta")?.get(META_SERVER_INFO)?;
    let ok = info.get("name").is_some_and(Value::is_string)
        && info.get("version").is_some_and(Value::is_string);
    ok.then(|| info.clone())
}

/// The `resultType` of a 2026-07-28 result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResultType {
    /// `"complete"`, or absent (a legacy server).
    Complete,
    /// `"input_required"`: an `InputRequiredResult`.
    InputRequired,
    /// Any other value, which a client must treat as invalid.
    Unknown,
}

/// The params of the bridge's `notifications/cancelled` to the upstream
/// (2026-07-28 basic/patterns/cancellation): `{requestId, reason?}`, the reason being the
/// editor's, unchanged, when it gave one.
pub fn cancelled_params(request_id: Value, reason: Option<&str>) -> Value {
    let mut p = Map::new();
    p.insert("requestId".into(), request_id);
    if let Some(r) = reason {
        p.insert("reason".into(), Value::String(r.to_string()));
    }
    Value::Object(p)
}

/// A `notifications/cancelled` frame `{requestId, reason?}`: the bridge sends it upstream for
/// an abandoned request (with the editor's reason) and to the editor for an abandoned input
/// request (2025-11-25 has the same shape).
pub fn cancelled_notification(request_id: Value, reason: Option<&str>) -> Value {
    jsonrpc::notification(methods::CANCELLED, cancelled_params(request_id, reason))
}

/// A notification of the upstream, read once from its method; every variant keeps the params
/// as they came (a listen-stream notification is told apart by its `_meta`, see
/// [`crate::protocol::listen::ListenGate`]). An absent `params` is `{}`.
#[derive(Clone, Debug, PartialEq)]
pub enum UpstreamNotification {
    /// `notifications/progress` (reshaped by [`crate::protocol::rules::relay::progress_for_editor`]).
    Progress(Value),
    /// `notifications/message`, a log message (reshaped by [`crate::protocol::rules::relay::log_for_editor`]).
    Message(Value),
    /// `notifications/cancelled`: the server ended a request (a listen stream on stdio).
    Cancelled(Value),
    /// `notifications/subscriptions/acknowledged` of a listen stream.
    SubscriptionsAcknowledged(Value),
    /// `notifications/tools/list_changed`.
    ToolsListChanged(Value),
    /// `notifications/prompts/list_changed`.
    PromptsListChanged(Value),
    /// `notifications/resources/list_changed`.
    ResourcesListChanged(Value),
    /// `notifications/resources/updated`.
    ResourcesUpdated(Value),
    /// Any other notification: kept inside the bridge.
    Unknown {
        /// The method name as it came.
        method: String,
        /// The params as they came.
        params: Value,
    },
}

impl UpstreamNotification {
    /// Reads a notification from its method name and params.
    pub fn from_notification(method: String, params: Value) -> UpstreamNotification {
        use UpstreamNotification as N;
        match method.as_str() {
            methods::PROGRESS => N::Progress(params),
            methods::MESSAGE => N::Message(params),
            methods::CANCELLED => N::Cancelled(params),
            methods::SUBSCRIPTIONS_ACKNOWLEDGED => N::SubscriptionsAcknowledged(params),
            methods::TOOLS_LIST_CHANGED => N::ToolsListChanged(params),
            methods::PROMPTS_LIST_CHANGED => N::PromptsListChanged(params),
            methods::RESOURCES_LIST_CHANGED => N::ResourcesListChanged(params),
            methods::RESOURCES_UPDATED => N::ResourcesUpdated(params),
            _ => N::Unknown { method, params },
        }
    }

    /// The method name.
    pub fn method(&self) -> &str {
        use UpstreamNotification as N;
        match self {
            N::Progress(_) => methods::PROGRESS,
            N::Message(_) => methods::MESSAGE,
            N::Cancelled(_) => methods::CANCELLED,
            N::SubscriptionsAcknowledged(_) => methods::SUBSCRIPTIONS_ACKNOWLEDGED,
            N::ToolsListChanged(_) => methods::TOOLS_LIST_CHANGED,
            N::PromptsListChanged(_) => methods::PROMPTS_LIST_CHANGED,
            N::ResourcesListChanged(_) => methods::RESOURCES_LIST_CHANGED,
            N::ResourcesUpdated(_) => methods::RESOURCES_UPDATED,
            N::Unknown { method, .. } => method,
        }
    }

    /// The params as they came.
    pub fn params(&self) -> &Value {
        use UpstreamNotification as N;
        match self {
            N::Progress(p)
            | N::Message(p)
            | N::Cancelled(p)
            | N::SubscriptionsAcknowledged(p)
            | N::ToolsListChanged(p)
            | N::PromptsListChanged(p)
            | N::ResourcesListChanged(p)
            | N::ResourcesUpdated(p)
            | N::Unknown { params: p, .. } => p,
        }
    }
}

/// Reads `resultType`; an absent one counts as complete (basic/index).
pub fn result_type(result: &Value) -> ResultType {
    match result.get("resultType") {
        None => ResultType::Complete,
        Some(Value::String(s)) if s == "complete" => ResultType::Complete,
        Some(Value::String(s)) if s == "input_required" => ResultType::InputRequired,
        Some(_) => ResultType::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_upstream_notification_is_read_once_from_its_method() {
        let p = json!({"a": 1});
        let table = [
            (
                "notifications/progress",
                UpstreamNotification::Progress(p.clone()),
            ),
            (
                "notifications/message",
                UpstreamNotification::Message(p.clone()),
            ),
            (
                "notifications/cancelled",
                UpstreamNotification::Cancelled(p.clone()),
            ),
            (
                "notifications/subscriptions/acknowledged",
                UpstreamNotification::SubscriptionsAcknowledged(p.clone()),
            ),
            (
                "notifications/tools/list_changed",
                UpstreamNotification::ToolsListChanged(p.clone()),
            ),
            (
                "notifications/prompts/list_changed",
                UpstreamNotification::PromptsListChanged(p.clone()),
            ),
            (
                "notifications/resources/list_changed",
                UpstreamNotification::ResourcesListChanged(p.clone()),
            ),
            (
                "notifications/resources/updated",
                UpstreamNotification::ResourcesUpdated(p.clone()),
            ),
            (
                "notifications/tasks/status",
                UpstreamNotification::Unknown {
                    method: "notifications/tasks/status".into(),
                    params: p.clone(),
                },
            ),
        ];
        for (method, want) in table {
            let got = UpstreamNotification::from_notification(method.into(), p.clone());
            assert_eq!(got, want, "{method}");
            assert_eq!(got.method(), method);
            assert_eq!(got.params(), &p);
        }
    }

    #[test]
    fn a_cancelled_notification_carries_the_reason_only_when_given() {
        assert_eq!(
            cancelled_notification(json!(7), Some("stop")),
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 7, "reason": "stop"}})
        );
        assert_eq!(
            cancelled_notification(json!("b-1"), None),
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": "b-1"}})
        );
    }

    fn meta() -> RequestMeta {
        RequestMeta {
            protocol_version: PROTOCOL_VERSION.into(),
            client_capabilities: json!({}),
            client_info: Some(json!({"name": "mcp-bridge", "version": "0.1.0"})),
            log_level: Some(LogLevel::Info),
        }
    }

    #[test]
    fn bare_params_carry_the_required_keys() {
        assert_eq!(
            meta().bare_params(),
            json!({"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "mcp-bridge", "version": "0.1.0"},
                "io.modelcontextprotocol/logLevel": "info"
            }})
        );
    }

    #[test]
    fn the_meta_the_bridge_writes_reads_back_with_the_other_keys_left() {
        let mut written = Map::new();
        meta().write_into(&mut written);
        written.insert(META_PROGRESS_TOKEN.into(), json!(7));
        let (read, rest) = RequestMeta::read(Some(Value::Object(written)), PROTOCOL_VERSION)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read, meta());
        assert_eq!(Value::Object(rest), json!({"progressToken": 7}));
    }

    #[test]
    fn a_meta_is_checked_in_order_object_version_capabilities_level() {
        let v = META_PROTOCOL_VERSION;
        let c = META_CLIENT_CAPABILITIES;
        let l = META_LOG_LEVEL;
        let table = [
            (None, MetaError::NotAnObject),
            (Some(json!([1])), MetaError::NotAnObject),
            (Some(json!({ c: {} })), MetaError::NoVersion),
            (Some(json!({ v: 1, c: {} })), MetaError::NoVersion),
            (Some(json!({ v: "2025-11-25" })), MetaError::NoCapabilities),
            (
                Some(json!({ v: "2025-11-25", c: {}, l: "loud" })),
                MetaError::UnsupportedVersion("2025-11-25".into()),
            ),
            (
                Some(json!({ v: PROTOCOL_VERSION, c: {}, l: "loud" })),
                MetaError::BadLogLevel,
            ),
            (
                Some(json!({ v: PROTOCOL_VERSION, c: {}, l: 3 })),
                MetaError::BadLogLevel,
            ),
        ];
        for (meta, error) in table {
            assert_eq!(
                RequestMeta::read(meta.clone(), PROTOCOL_VERSION).map(|_| ()),
                Err(error),
                "{meta:?}"
            );
        }
        assert_eq!(
            MetaError::NoCapabilities.to_string(),
            "params._meta[\"io.modelcontextprotocol/clientCapabilities\"] is required and must be an object"
        );
    }

    #[test]
    fn discover_results() {
        let ok = json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "public", "instructions": "hi",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "up", "version": "1"}}});
        let d = read_discover(&ok).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d.server_info, Some(json!({"name": "up", "version": "1"})));
        assert_eq!(d.instructions.as_deref(), Some("hi"));
        let old = json!({"supportedVersions": ["2027-01-01"], "capabilities": {}});
        assert_eq!(read_discover(&old), Err(DiscoverError::NoCommonVersion));
        assert_eq!(
            read_discover(&json!({"capabilities": {}})),
            Err(DiscoverError::Malformed)
        );
        let bad_info = json!({"supportedVersions": ["2026-07-28"], "capabilities": {},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": 3}}});
        assert_eq!(read_discover(&bad_info).map(|d| d.server_info), Ok(None));
    }

    #[test]
    fn cancelled_params_carry_the_reason_when_there_is_one() {
        assert_eq!(
            cancelled_params(json!(7), Some("user pressed stop")),
            json!({"requestId": 7, "reason": "user pressed stop"})
        );
        assert_eq!(cancelled_params(json!(7), None), json!({"requestId": 7}));
        assert_eq!(
            cancelled_params(json!("l-1"), Some("")),
            json!({"requestId": "l-1", "reason": ""})
        );
    }

    #[test]
    fn result_types() {
        assert_eq!(result_type(&json!({})), ResultType::Complete);
        assert_eq!(
            result_type(&json!({"resultType": "input_required"})),
            ResultType::InputRequired
        );
        assert_eq!(
            result_type(&json!({"resultType": "task"})),
            ResultType::Unknown
        );
    }
}
