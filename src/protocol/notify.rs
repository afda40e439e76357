//! The listen stream, without I/O: what the bridge asks for on `subscriptions/listen`
//! (2026-07-28 basic/patterns/subscriptions), how a listen event becomes a 2025-11-25
//! notification for the editor (never with the subscription id), the synthetic events after a
//! gap, the wait before a new stream, and the [`ListenGate`]: the state of the step that writes
//! listen traffic to the editor, which decides which stream is active by its generation.
//!
//! The Listener actor owns the streams and their lifecycle; the Frontend runs the [`ListenGate`] on
//! every upstream notification in upstream order, so a list change written before a result
//! reaches the editor before that result.

use super::errors::{Cause, ErrorObject};
use super::jsonrpc::{self, Id};
use super::methods;
use super::modern::{META_SUBSCRIPTION_ID, RequestMeta, UpstreamNotification};
pub use super::note::LineLevel;
use serde_json::{Map, Value, json};
use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

/// The method of a listen request.
pub const LISTEN_METHOD: &str = methods::SUBSCRIPTIONS_LISTEN;
/// The notification that acknowledges a listen request.
pub const ACKNOWLEDGED: &str = methods::SUBSCRIPTIONS_ACKNOWLEDGED;
/// The wait before the first new stream after a loss, in milliseconds (`--listen-backoff-initial`).
pub const LISTEN_BACKOFF_INITIAL_MS: u64 = 500;
/// The longest wait before a new stream, in seconds (`--listen-backoff-max`).
pub const LISTEN_BACKOFF_MAX_SECS: u64 = 30;
/// How long a stream lives after its acknowledgment before a loss starts the waits again from
/// the first one, in seconds (`--listen-stable`).
pub const LISTEN_STABLE_SECS: u64 = 10;
/// How long the bridge waits for the acknowledgment of a stream on stdio, in seconds
/// (`--listen-ack-timeout`).
pub const LISTEN_ACK_TIMEOUT_SECS: u64 = 10;

/// The time settings of the listen stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListenTimings {
    /// The first wait after a loss.
    pub backoff_initial: Duration,
    /// The longest wait; each wait doubles up to it.
    pub backoff_max: Duration,
    /// A stream that lives this long after its acknowledgment resets the wait.
    pub stable: Duration,
    /// The time limit of the acknowledgment.
    pub ack_timeout: Duration,
}

impl Default for ListenTimings {
    fn default() -> Self {
        ListenTimings {
            backoff_initial: Duration::from_millis(LISTEN_BACKOFF_INITIAL_MS),
            backoff_max: Duration::from_secs(LISTEN_BACKOFF_MAX_SECS),
            stable: Duration::from_secs(LISTEN_STABLE_SECS),
            ack_timeout: Duration::from_secs(LISTEN_ACK_TIMEOUT_SECS),
        }
    }
}

/// What the `initialize` result declared to the editor, and so what the bridge listens for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Declared {
    /// `tools.listChanged`.
    pub tools: bool,
    /// `prompts.listChanged`.
    pub prompts: bool,
    /// `resources.listChanged`.
    pub resources: bool,
    /// `resources.subscribe`.
    pub subscribe: bool,
}

impl Declared {
    /// Reads the 2025-11-25 `ServerCapabilities` the editor got (after the reply mask).
    pub fn from_capabilities(capabilities: &Value) -> Declared {
        let on = |cap: &str, key: &str| capabilities[cap][key] == Value::Bool(true);
        Declared {
            tools: on("tools", "listChanged"),
            prompts: on("prompts", "listChanged"),
            resources: on("resources", "listChanged"),
            subscribe: on("resources", "subscribe"),
        }
    }

    /// Whether the bridge opens a listen stream at all.
    pub fn any(self) -> bool {
        self.tools || self.prompts || self.resources || self.subscribe
    }

    /// The `SubscriptionFilter` of a stream: the declared list changes, and the subscribed
    /// URIs when `resources.subscribe` was declared (in a stable order).
    pub fn filter(self, uris: &BTreeSet<String>) -> Value {
        let mut f = Map::new();
        for (key, on) in [
            ("toolsListChanged", self.tools),
            ("promptsListChanged", self.prompts),
            ("resourcesListChanged", self.resources),
        ] {
            if on {
                f.insert(key.into(), Value::Bool(true));
            }
        }
        if self.subscribe {
            f.insert("resourceSubscriptions".into(), json!(uris));
        }
        Value::Object(f)
    }

    /// Whether an event may reach the editor: a list change of a declared list, or an update
    /// of a URI that is (a sub-resource of) one of `uris`, with `resources.subscribe` declared.
    pub fn allows(self, event: &ListenEvent, uris: &BTreeSet<String>) -> bool {
        match event {
            ListenEvent::ToolsListChanged => self.tools,
            ListenEvent::PromptsListChanged => self.prompts,
            ListenEvent::ResourcesListChanged => self.resources,
            ListenEvent::ResourceUpdated { uri } => self.subscribe && covers(uris, uri),
        }
    }

    /// The events after a gap: one list change per declared list, one update per subscribed
    /// URI. The server does not send again what happened while no stream was open.
    pub fn gap_events(self, uris: &BTreeSet<String>) -> Vec<ListenEvent> {
        let mut out = Vec::new();
        if self.tools {
            out.push(ListenEvent::ToolsListChanged);
        }
        if self.prompts {
            out.push(ListenEvent::PromptsListChanged);
        }
        if self.resources {
            out.push(ListenEvent::ResourcesListChanged);
        }
        if self.subscribe {
            out.extend(
                uris.iter()
                    .map(|uri| ListenEvent::ResourceUpdated { uri: uri.clone() }),
            );
        }
        out
    }
}

/// Whether `uri` is one of `uris` or a sub-resource of one (`uri` continues it after a `/`).
pub fn covers(uris: &BTreeSet<String>, uri: &str) -> bool {
    uris.iter().any(|s| match uri.strip_prefix(s.as_str()) {
        Some("") => true,
        Some(rest) => s.ends_with('/') || rest.starts_with('/'),
        None => false,
    })
}

/// The id of the listen request of a generation. The Listener chooses it, so that the
/// [`ListenGate`] knows the stream before the request goes out; upstream ids of other requests are
/// integers and never equal it.
pub fn listen_id(generation: u64) -> Id {
    Id::Str(format!("listen-{generation}"))
}

/// The params of a listen request: the full 2026-07-28 `_meta` (with the log level of the last
/// `logging/setLevel`) and the filter.
pub fn listen_params(meta: &RequestMeta, filter: Value) -> Value {
    let mut m = Map::new();
    meta.write_into(&mut m);
    json!({"_meta": Value::Object(m), "notifications": filter})
}

/// The URI of `resources/subscribe` or `resources/unsubscribe` params `{uri}`; `None` when the
/// params are not valid.
pub fn resource_uri(params: Option<&Value>) -> Option<String> {
    let uri = params?.get("uri")?.as_str()?;
    (!uri.is_empty()).then(|| uri.to_string())
}

/// The members of the filter `asked` that the acknowledgment's subset `acked` leaves out: a
/// list change asked for and not acknowledged, or `resourceSubscriptions` when a URI asked
/// for is missing. The server sends nothing of those kinds on the stream.
pub fn unacknowledged(asked: &Value, acked: &Value) -> Vec<String> {
    let Some(asked) = asked.as_object() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (key, v) in asked {
        let missing = match v {
            Value::Bool(true) => acked.get(key) != Some(&Value::Bool(true)),
            Value::Array(uris) => {
                let got = acked.get(key).and_then(Value::as_array);
                uris.iter().any(|u| !got.is_some_and(|g| g.contains(u)))
            }
            _ => false,
        };
        if missing {
            out.push(key.clone());
        }
    }
    out
}

/// The set of URIs after a change, or `None` when the change changes nothing (the URI is
/// already subscribed, or not subscribed).
pub fn changed(uris: &BTreeSet<String>, subscribe: bool, uri: &str) -> Option<BTreeSet<String>> {
    if uris.contains(uri) == subscribe {
        return None;
    }
    let mut next = uris.clone();
    if subscribe {
        next.insert(uri.to_string());
    } else {
        next.remove(uri);
    }
    Some(next)
}

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

fn bare(method: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": method})
}

/// The `subscriptions/listen` request frame with the listen id (see [`listen_id`]) and the
/// params of [`listen_params`].
pub fn listen_request(id: &Id, params: Value) -> Value {
    jsonrpc::request(id, LISTEN_METHOD, params)
}

/// The subscription id in `params._meta` of a listen-stream notification.
pub fn subscription_id(params: &Value) -> Option<Id> {
    Id::from_value(params.get("_meta")?.get(META_SUBSCRIPTION_ID)?)
}

/// How a stream ended.
#[derive(Clone, Debug, PartialEq)]
pub enum StreamEnd {
    /// The server answered the listen request with a result.
    ServerResult,
    /// The server sent `notifications/cancelled` naming the listen request (stdio).
    ServerCancelled,
    /// The server answered the listen request with a JSON-RPC error object.
    Refused {
        /// The error object.
        error: Value,
    },
    /// The server answered with a frame the bridge cannot read.
    Invalid,
    /// No acknowledgment within the time limit.
    AckTimeout {
        /// The time limit.
        limit: Duration,
    },
    /// The upstream went away.
    Closed,
    /// The transport failed the stream alone (HTTP): an error status, no response, or the
    /// stream broke.
    Failed {
        /// The HTTP status of an error response (`None`: no response, or the stream broke).
        status: Option<u16>,
        /// Why, for the log and `data.detail`.
        detail: String,
    },
}

/// Whether a listen stream that failed with this HTTP status opens again after the wait:
/// no response at all (a broken connection or stream), 408,
/// 429 and 5xx except 501 do; 401 and 403 wait for the next sign-in; every other status stops
/// the new attempts.
pub fn http_status_retries(status: Option<u16>) -> bool {
    match status {
        None => true,
        Some(408 | 429) => true,
        Some(501) => false,
        Some(s) => (500..=599).contains(&s),
    }
}

/// A listen stream refused with 401 or 403: it waits for the next sign-in.
pub fn http_status_needs_sign_in(status: Option<u16>) -> bool {
    matches!(status, Some(401 | 403))
}

impl StreamEnd {
    /// Whether a new stream follows after the wait. A refusal, the end of the upstream and
    /// an HTTP status of [`http_status_retries`] that is not retried stop the new attempts.
    pub fn retries(&self) -> bool {
        match self {
            StreamEnd::Refused { .. } | StreamEnd::Closed => false,
            StreamEnd::Failed { status, .. } => http_status_retries(*status),
            _ => true,
        }
    }

    /// Whether only a subscription change opens a new stream after this end (a refusal, an
    /// HTTP status that is not retried).
    pub fn halts(&self) -> bool {
        match self {
            StreamEnd::Refused { .. } => true,
            StreamEnd::Failed { status, .. } => !http_status_retries(*status),
            _ => false,
        }
    }

    /// Whether only the next sign-in opens a new stream (HTTP 401/403).
    pub fn needs_sign_in(&self) -> bool {
        matches!(self, StreamEnd::Failed { status, .. } if http_status_needs_sign_in(*status))
    }

    /// Whether the server itself ended the stream (an info line, not a warning).
    pub fn by_server(&self) -> bool {
        matches!(self, StreamEnd::ServerResult | StreamEnd::ServerCancelled)
    }

    /// A short text for the log, without any content of a message.
    pub fn describe(&self) -> String {
        match self {
            StreamEnd::ServerResult => "the upstream server answered the listen request".into(),
            StreamEnd::ServerCancelled => "the upstream server cancelled the listen request".into(),
            StreamEnd::Refused { error } => {
                let (code, message) = error_parts(error);
                format!("the upstream server refused it with the error {code}: {message}")
            }
            StreamEnd::Invalid => "the upstream server sent an invalid response".into(),
            StreamEnd::AckTimeout { limit } => {
                format!("no acknowledgment within {}", seconds(*limit))
            }
            StreamEnd::Closed => "the upstream server exited".into(),
            StreamEnd::Failed { detail, .. } => detail.clone(),
        }
    }

    /// The error for the editor when the stream of a subscription change ends before its
    /// acknowledgment: the upstream error as it came, else an error of the table.
    pub fn change_error(&self) -> ErrorObject {
        match self {
            StreamEnd::Refused { error } => super::errors::relay_upstream_error(error),
            StreamEnd::AckTimeout { limit } => Cause::Timeout.error(Some(json!({
                "method": LISTEN_METHOD, "timeoutSeconds": limit.as_secs_f64()
            }))),
            StreamEnd::Closed => Cause::UpstreamExited.error(None),
            StreamEnd::Failed { detail, .. } => Cause::TransportFailed.error(Some(json!(detail))),
            StreamEnd::ServerResult | StreamEnd::ServerCancelled | StreamEnd::Invalid => {
                Cause::InvalidResponse.error(Some(json!(
                    "the listen stream ended before its acknowledgment"
                )))
            }
        }
    }
}

fn error_parts(error: &Value) -> (String, String) {
    let code = error
        .get("code")
        .and_then(Value::as_i64)
        .map_or_else(|| "?".to_string(), |c| c.to_string());
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("(no message)")
        .to_string();
    (code, message)
}

/// A duration as the log writes it: `0.5 s`, `2 s`, `30 s`.
pub fn seconds(d: Duration) -> String {
    format!("{} s", d.as_millis() as f64 / 1000.0)
}

/// The log line after the loss of a stream that was not a subscription change; `wait` is the
/// wait before the new stream when one follows.
pub fn loss_line(end: &StreamEnd, wait: Option<Duration>) -> (LineLevel, String) {
    let next = wait.map_or_else(String::new, |w| {
        format!(" A new stream follows in {}.", seconds(w))
    });
    match end {
        StreamEnd::Refused { error } => {
            let (code, message) = error_parts(error);
            (
                LineLevel::Warn,
                format!(
                    "the upstream server refused the listen stream with the error {code}: {message}. The bridge sends no more list changes."
                ),
            )
        }
        StreamEnd::Closed => (
            LineLevel::Debug,
            "the listen stream ended with the upstream server".into(),
        ),
        StreamEnd::Failed { status, detail } if http_status_needs_sign_in(*status) => (
            LineLevel::Warn,
            format!(
                "the upstream server refused the listen stream ({detail}): it needs a sign-in. A new stream follows after the next sign-in."
            ),
        ),
        StreamEnd::Failed { detail, .. } if wait.is_none() => (
            LineLevel::Warn,
            format!(
                "the upstream server refused the listen stream ({detail}). The bridge sends no more list changes."
            ),
        ),
        e if e.by_server() => (
            LineLevel::Info,
            format!("the upstream server ended the listen stream.{next}"),
        ),
        e => (
            LineLevel::Warn,
            format!("the listen stream ended: {}.{next}", e.describe()),
        ),
    }
}

/// The log line after the stream of a subscription change failed before its acknowledgment.
pub fn change_failed_line(end: &StreamEnd) -> String {
    format!(
        "the listen stream for a change of the subscriptions failed: {}",
        end.describe()
    )
}

/// The waits before new streams after losses: the first wait, then twice the last one up to
/// the longest; a stream that lived `stable` after its acknowledgment starts again from the
/// first wait.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Backoff {
    initial: Duration,
    max: Duration,
    next: Duration,
}

impl Backoff {
    /// Waits from `initial` doubling up to `max` (an `initial` above `max` is `max`).
    pub fn new(initial: Duration, max: Duration) -> Backoff {
        let first = initial.min(max);
        Backoff {
            initial: first,
            max,
            next: first,
        }
    }

    /// The wait before the next stream after a loss. `lived` is how long the lost stream lived
    /// after its acknowledgment (`None`: never acknowledged).
    pub fn after_loss(&mut self, lived: Option<Duration>, stable: Duration) -> Duration {
        if lived.is_some_and(|l| l >= stable) {
            self.next = self.initial;
        }
        let wait = self.next;
        self.next = wait.saturating_mul(2).min(self.max);
        wait
    }
}

/// What the [`ListenGate`] tells the Listener, in the order of the upstream.
#[derive(Clone, Debug, PartialEq)]
pub enum Fact {
    /// The first acknowledgment of a stream.
    Acked {
        /// The listen id.
        id: Id,
        /// What the stream asked for and the acknowledgment leaves out (see
        /// [`unacknowledged`]).
        missing: Vec<String>,
    },
    /// A stream ended; `acked` tells whether it had been acknowledged.
    Ended {
        /// The listen id.
        id: Id,
        /// How it ended.
        end: StreamEnd,
        /// Whether its acknowledgment came first.
        acked: bool,
    },
    /// The upstream's transport signed in (HTTP): a stream refused with 401/403 opens again.
    SignedIn,
}

/// What the gate made of one upstream notification.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Not listen traffic of the bridge: the caller handles it as before.
    Pass,
    /// Listen traffic: write these frames to the editor in this order, then tell the Listener
    /// the fact, if any. Everything else of the notification stays inside the bridge.
    Handled {
        /// Frames for the editor.
        frames: Vec<Value>,
        /// A fact for the Listener.
        fact: Option<Fact>,
    },
}

#[derive(Clone, Debug)]
struct GateStream {
    generation: u64,
    uris: BTreeSet<String>,
    acked: bool,
    respond: Option<Id>,
}

/// The write step of listen traffic. The Listener registers each stream (its generation, its
/// URIs, and the editor request to answer `{}` at its acknowledgment) before its request goes
/// out, and retires it when it replaces or stops it. A stream becomes active at its first
/// acknowledgment when its generation is above the active one, so an older stream never
/// becomes active again; only the events of the active stream reach the editor.
#[derive(Clone, Debug, Default)]
pub struct ListenGate {
    declared: Declared,
    streams: HashMap<Id, GateStream>,
    active: u64,
}

impl ListenGate {
    /// A gate for what the editor was told.
    pub fn new(declared: Declared) -> ListenGate {
        ListenGate {
            declared,
            streams: HashMap::new(),
            active: 0,
        }
    }

    /// Knows the stream `id` from now on.
    pub fn register(
        &mut self,
        id: Id,
        generation: u64,
        uris: BTreeSet<String>,
        respond: Option<Id>,
    ) {
        self.streams.insert(
            id,
            GateStream {
                generation,
                uris,
                acked: false,
                respond,
            },
        );
    }

    /// Forgets a stream the bridge stops: nothing of it reaches the editor or the Listener
    /// any more. Returns whether it was known.
    pub fn retire(&mut self, id: &Id) -> bool {
        self.streams.remove(id).is_some()
    }

    /// The generation of the active stream (0 before the first acknowledgment).
    pub fn active_generation(&self) -> u64 {
        self.active
    }

    /// The end of a known stream (its response, or the time limit of its acknowledgment,
    /// which counts only while it is not acknowledged). `None` for a stream that is not known
    /// or, for [`StreamEnd::AckTimeout`], already acknowledged.
    pub fn end(&mut self, id: &Id, end: StreamEnd) -> Option<Fact> {
        let s = self.streams.get(id)?;
        if s.acked && matches!(end, StreamEnd::AckTimeout { .. }) {
            return None;
        }
        let acked = s.acked;
        self.streams.remove(id);
        Some(Fact::Ended {
            id: id.clone(),
            end,
            acked,
        })
    }

    /// One upstream notification, in upstream order.
    pub fn on_notification(&mut self, n: &UpstreamNotification) -> Step {
        let params = n.params();
        if let UpstreamNotification::Cancelled(_) = n {
            return match params.get("requestId").and_then(Id::from_value) {
                Some(id) if self.streams.contains_key(&id) => Step::Handled {
                    frames: Vec::new(),
                    fact: self.end(&id, StreamEnd::ServerCancelled),
                },
                _ => Step::Pass,
            };
        }
        let Some(id) = subscription_id(params) else {
            return Step::Pass;
        };
        let nothing = Step::Handled {
            frames: Vec::new(),
            fact: None,
        };
        let Some(s) = self.streams.get_mut(&id) else {
            return nothing;
        };
        if let UpstreamNotification::SubscriptionsAcknowledged(_) = n {
            if s.acked {
                return nothing;
            }
            s.acked = true;
            if s.generation > self.active {
                self.active = s.generation;
            }
            let frames = s
                .respond
                .take()
                .map(|editor| vec![jsonrpc::response(&editor, json!({}))])
                .unwrap_or_default();
            let asked = self.declared.filter(&s.uris);
            let missing = unacknowledged(&asked, &params["notifications"]);
            return Step::Handled {
                frames,
                fact: Some(Fact::Acked { id, missing }),
            };
        }
        match ListenEvent::from_notification(n) {
            Some(event)
                if s.acked
                    && s.generation == self.active
                    && self.declared.allows(&event, &s.uris) =>
            {
                Step::Handled {
                    frames: vec![event.to_editor()],
                    fact: None,
                }
            }
            _ => nothing,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: Declared = Declared {
        tools: true,
        prompts: true,
        resources: true,
        subscribe: true,
    };

    fn set(uris: &[&str]) -> BTreeSet<String> {
        uris.iter().map(|s| s.to_string()).collect()
    }

    fn note(method: &str, params: &Value) -> UpstreamNotification {
        UpstreamNotification::from_notification(method.into(), params.clone())
    }

    fn sub(id: &str) -> Value {
        json!({"_meta": {META_SUBSCRIPTION_ID: id}})
    }

    fn updated(id: &str, uri: &str) -> Value {
        json!({"uri": uri, "_meta": {META_SUBSCRIPTION_ID: id}})
    }

    #[test]
    fn declared_comes_from_the_masked_capabilities() {
        let table = [
            (json!({}), Declared::default()),
            (
                json!({"tools": {"listChanged": true}, "resources": {"subscribe": true}}),
                Declared {
                    tools: true,
                    subscribe: true,
                    ..Declared::default()
                },
            ),
            (
                json!({"prompts": {"listChanged": true}, "resources": {"listChanged": true, "subscribe": false}}),
                Declared {
                    prompts: true,
                    resources: true,
                    ..Declared::default()
                },
            ),
            (
                json!({"tools": {"listChanged": "yes"}}),
                Declared::default(),
            ),
        ];
        for (caps, want) in table {
            assert_eq!(Declared::from_capabilities(&caps), want, "{caps}");
        }
        assert!(!Declared::default().any());
        assert!(
            Declared {
                subscribe: true,
                ..Declared::default()
            }
            .any()
        );
    }

    #[test]
    fn the_filter_asks_for_what_was_declared_and_the_subscribed_uris() {
        let table = [
            (
                ALL,
                set(&["b://2", "a://1"]),
                json!({"toolsListChanged": true,
                "promptsListChanged": true, "resourcesListChanged": true,
                "resourceSubscriptions": ["a://1", "b://2"]}),
            ),
            (
                ALL,
                set(&[]),
                json!({"toolsListChanged": true, "promptsListChanged": true,
                "resourcesListChanged": true, "resourceSubscriptions": []}),
            ),
            (
                Declared {
                    tools: true,
                    ..Declared::default()
                },
                set(&["a://1"]),
                json!({"toolsListChanged": true}),
            ),
        ];
        for (declared, uris, want) in table {
            assert_eq!(declared.filter(&uris), want);
        }
    }

    #[test]
    fn listen_params_carry_the_meta_and_the_filter() {
        let meta = RequestMeta {
            protocol_version: "2026-07-28".into(),
            client_capabilities: json!({}),
            client_info: json!({"name": "mcp-bridge", "version": "0"}),
            log_level: Some("warning"),
        };
        let p = listen_params(&meta, json!({"toolsListChanged": true}));
        assert_eq!(p["notifications"], json!({"toolsListChanged": true}));
        assert_eq!(p["_meta"]["io.modelcontextprotocol/logLevel"], "warning");
        assert_eq!(
            p["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(listen_id(3), Id::Str("listen-3".into()));
    }

    #[test]
    fn events_become_2025_notifications_without_the_subscription_id() {
        let table = [
            (
                "notifications/tools/list_changed",
                sub("listen-1"),
                json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
            ),
            (
                "notifications/prompts/list_changed",
                sub("listen-1"),
                json!({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"}),
            ),
            (
                "notifications/resources/list_changed",
                sub("listen-1"),
                json!({"jsonrpc": "2.0", "method": "notifications/resources/list_changed"}),
            ),
            (
                "notifications/resources/updated",
                json!({"uri": "file:///a", "title": "x", "_meta": {META_SUBSCRIPTION_ID: "listen-1", "k": 1}}),
                json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                       "params": {"uri": "file:///a"}}),
            ),
        ];
        for (method, params, want) in table {
            let e = ListenEvent::from_notification(&note(method, &params));
            assert_eq!(e.map(|e| e.to_editor()), Some(want), "{method}");
        }
        assert_eq!(
            ListenEvent::from_notification(&note("notifications/resources/updated", &sub("x"))),
            None
        );
        assert_eq!(
            ListenEvent::from_notification(&note("notifications/progress", &sub("x"))),
            None
        );
    }

    #[test]
    fn updates_are_allowed_for_subscribed_uris_and_their_sub_resources() {
        let uris = set(&["file:///a", "dir://x/"]);
        let table = [
            ("file:///a", true),
            ("file:///a/b.txt", true),
            ("file:///ab", false),
            ("dir://x/y", true),
            ("dir://x", false),
            ("other://z", false),
        ];
        for (uri, want) in table {
            let e = ListenEvent::ResourceUpdated { uri: uri.into() };
            assert_eq!(ALL.allows(&e, &uris), want, "{uri}");
        }
        let no_subscribe = Declared {
            subscribe: false,
            ..ALL
        };
        let e = ListenEvent::ResourceUpdated {
            uri: "file:///a".into(),
        };
        assert!(!no_subscribe.allows(&e, &uris));
        assert!(!Declared::default().allows(&ListenEvent::ToolsListChanged, &uris));
    }

    #[test]
    fn gap_events_are_one_per_declared_list_and_one_per_uri() {
        let events = ALL.gap_events(&set(&["b://2", "a://1"]));
        assert_eq!(
            events,
            vec![
                ListenEvent::ToolsListChanged,
                ListenEvent::PromptsListChanged,
                ListenEvent::ResourcesListChanged,
                ListenEvent::ResourceUpdated {
                    uri: "a://1".into()
                },
                ListenEvent::ResourceUpdated {
                    uri: "b://2".into()
                },
            ]
        );
        let only_prompts = Declared {
            prompts: true,
            ..Declared::default()
        };
        assert_eq!(
            only_prompts.gap_events(&set(&["a://1"])),
            vec![ListenEvent::PromptsListChanged]
        );
    }

    #[test]
    fn the_acknowledged_subset_is_compared_with_the_filter() {
        let asked = json!({"toolsListChanged": true, "promptsListChanged": true,
                           "resourceSubscriptions": ["a://1", "b://2"]});
        let table = [
            (asked.clone(), vec![]),
            (
                json!({"toolsListChanged": true, "resourceSubscriptions": ["a://1"]}),
                vec!["promptsListChanged", "resourceSubscriptions"],
            ),
            (
                json!({}),
                vec![
                    "toolsListChanged",
                    "promptsListChanged",
                    "resourceSubscriptions",
                ],
            ),
            (
                json!("not a filter"),
                vec![
                    "toolsListChanged",
                    "promptsListChanged",
                    "resourceSubscriptions",
                ],
            ),
        ];
        for (acked, want) in table {
            assert_eq!(unacknowledged(&asked, &acked), want, "{acked}");
        }
        // An empty set of URIs needs nothing back.
        assert_eq!(
            unacknowledged(&json!({"resourceSubscriptions": []}), &json!({})),
            Vec::<String>::new()
        );
    }

    #[test]
    fn subscription_params_and_changes() {
        assert_eq!(
            resource_uri(Some(&json!({"uri": "a://1"}))),
            Some("a://1".into())
        );
        for bad in [json!({}), json!({"uri": 3}), json!({"uri": ""}), json!([1])] {
            assert_eq!(resource_uri(Some(&bad)), None, "{bad}");
        }
        assert_eq!(resource_uri(None), None);
        let uris = set(&["a://1"]);
        assert_eq!(changed(&uris, true, "a://1"), None);
        assert_eq!(changed(&uris, false, "b://2"), None);
        assert_eq!(
            changed(&uris, true, "b://2"),
            Some(set(&["a://1", "b://2"]))
        );
        assert_eq!(changed(&uris, false, "a://1"), Some(set(&[])));
    }

    #[test]
    fn the_backoff_doubles_up_to_the_longest_wait_and_a_stable_stream_resets_it() {
        let timings = ListenTimings::default();
        let mut b = Backoff::new(timings.backoff_initial, timings.backoff_max);
        let waits: Vec<f64> = (0..9)
            .map(|_| b.after_loss(None, timings.stable).as_secs_f64())
            .collect();
        assert_eq!(waits, vec![0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]);
        // A stream that lived less than 10 s after its acknowledgment keeps the waits growing.
        assert_eq!(
            b.after_loss(Some(Duration::from_millis(9_999)), timings.stable),
            Duration::from_secs(30)
        );
        // One that lived 10 s starts them again.
        assert_eq!(
            b.after_loss(Some(Duration::from_secs(10)), timings.stable),
            Duration::from_millis(500)
        );
        assert_eq!(b.after_loss(None, timings.stable), Duration::from_secs(1));
        let mut odd = Backoff::new(Duration::from_secs(5), Duration::from_secs(2));
        assert_eq!(odd.after_loss(None, timings.stable), Duration::from_secs(2));
        assert_eq!(odd.after_loss(None, timings.stable), Duration::from_secs(2));
    }

    #[test]
    fn stream_ends_decide_the_new_attempts_and_the_editor_error() {
        let refused = StreamEnd::Refused {
            error: json!({"code": -32000, "message": "no listens", "data": {"x": 1}}),
        };
        let timeout = StreamEnd::AckTimeout {
            limit: Duration::from_secs(10),
        };
        let table = [
            (
                StreamEnd::ServerResult,
                true,
                true,
                -32603,
                Some("invalid_response"),
            ),
            (
                StreamEnd::ServerCancelled,
                true,
                true,
                -32603,
                Some("invalid_response"),
            ),
            (
                StreamEnd::Invalid,
                true,
                false,
                -32603,
                Some("invalid_response"),
            ),
            (timeout.clone(), true, false, -32603, Some("timeout")),
            (refused.clone(), false, false, -32000, None),
            (
                StreamEnd::Closed,
                false,
                false,
                -32603,
                Some("upstream_exited"),
            ),
        ];
        for (end, retries, by_server, code, cause) in table {
            assert_eq!(end.retries(), retries, "{end:?}");
            assert_eq!(end.by_server(), by_server, "{end:?}");
            let e = end.change_error().to_value();
            assert_eq!(e["code"], json!(code), "{end:?}");
            assert_eq!(e["data"]["cause"].as_str(), cause, "{end:?}");
        }
        assert_eq!(refused.change_error().to_value()["data"], json!({"x": 1}));
        assert_eq!(
            timeout.change_error().to_value()["data"]["detail"],
            json!({"method": "subscriptions/listen", "timeoutSeconds": 10.0})
        );
    }

    #[test]
    fn log_lines_name_the_wait_or_the_refusal() {
        let wait = Some(Duration::from_millis(500));
        let table = [
            (
                StreamEnd::ServerResult,
                wait,
                LineLevel::Info,
                "the upstream server ended the listen stream. A new stream follows in 0.5 s.",
            ),
            (
                StreamEnd::ServerCancelled,
                Some(Duration::from_secs(30)),
                LineLevel::Info,
                "the upstream server ended the listen stream. A new stream follows in 30 s.",
            ),
            (
                StreamEnd::Invalid,
                Some(Duration::from_secs(2)),
                LineLevel::Warn,
                "the listen stream ended: the upstream server sent an invalid response. A new stream follows in 2 s.",
            ),
            (
                StreamEnd::AckTimeout {
                    limit: Duration::from_secs(10),
                },
                wait,
                LineLevel::Warn,
                "the listen stream ended: no acknowledgment within 10 s. A new stream follows in 0.5 s.",
            ),
            (
                StreamEnd::Refused {
                    error: json!({"code": -32601, "message": "Method not found"}),
                },
                None,
                LineLevel::Warn,
                "the upstream server refused the listen stream with the error -32601: Method not found. The bridge sends no more list changes.",
            ),
        ];
        for (end, wait, level, text) in table {
            assert_eq!(loss_line(&end, wait), (level, text.to_string()));
        }
        assert_eq!(
            change_failed_line(&StreamEnd::Refused {
                error: json!({"code": 7, "message": "m"})
            }),
            "the listen stream for a change of the subscriptions failed: the upstream server refused it with the error 7: m"
        );
        assert_eq!(seconds(Duration::from_millis(200)), "0.2 s");
        assert_eq!(seconds(Duration::from_millis(1600)), "1.6 s");
    }

    fn handled(step: Step) -> (Vec<Value>, Option<Fact>) {
        match step {
            Step::Handled { frames, fact } => (frames, fact),
            Step::Pass => panic!("expected the gate to handle it"),
        }
    }

    #[test]
    fn only_the_active_stream_reaches_the_editor_and_an_older_one_never_again() {
        let mut g = ListenGate::new(ALL);
        let (l1, l2) = (listen_id(1), listen_id(2));
        g.register(l1.clone(), 1, set(&[]), None);
        // Nothing before the acknowledgment.
        let (frames, fact) =
            handled(g.on_notification(&note("notifications/tools/list_changed", &sub("listen-1"))));
        assert!(frames.is_empty() && fact.is_none());
        let (frames, fact) = handled(g.on_notification(&note(ACKNOWLEDGED, &sub("listen-1"))));
        assert!(frames.is_empty());
        let all_lists: Vec<String> = [
            "toolsListChanged",
            "promptsListChanged",
            "resourcesListChanged",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            fact,
            Some(Fact::Acked {
                id: l1.clone(),
                missing: all_lists
            })
        );
        assert_eq!(g.active_generation(), 1);
        let (frames, _) =
            handled(g.on_notification(&note("notifications/tools/list_changed", &sub("listen-1"))));
        assert_eq!(frames, vec![ListenEvent::ToolsListChanged.to_editor()]);
        // A second acknowledgment is no new fact.
        assert_eq!(
            handled(g.on_notification(&note(ACKNOWLEDGED, &sub("listen-1")))),
            (vec![], None)
        );

        // A subscription change: the new stream answers the editor at its acknowledgment.
        g.register(l2.clone(), 2, set(&["a://1"]), Some(Id::Int(7)));
        let (frames, _) = handled(g.on_notification(&note(
            "notifications/resources/updated",
            &updated("listen-2", "a://1"),
        )));
        assert!(frames.is_empty(), "not acknowledged yet");
        let (frames, _) = handled(g.on_notification(&note(
            "notifications/prompts/list_changed",
            &sub("listen-1"),
        )));
        assert_eq!(frames.len(), 1, "the old stream is still the active one");
        let honoured = json!({"_meta": {META_SUBSCRIPTION_ID: "listen-2"}, "notifications": {
            "toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true,
            "resourceSubscriptions": ["a://1"]}});
        let (frames, fact) = handled(g.on_notification(&note(ACKNOWLEDGED, &honoured)));
        assert_eq!(
            frames,
            vec![json!({"jsonrpc": "2.0", "id": 7, "result": {}})]
        );
        assert_eq!(
            fact,
            Some(Fact::Acked {
                id: l2.clone(),
                missing: vec![]
            })
        );
        assert_eq!(g.active_generation(), 2);
        // The old stream is not retired yet, but its events no longer reach the editor.
        let (frames, _) =
            handled(g.on_notification(&note("notifications/tools/list_changed", &sub("listen-1"))));
        assert!(frames.is_empty());
        let (frames, _) = handled(g.on_notification(&note(
            "notifications/resources/updated",
            &updated("listen-2", "a://1/x"),
        )));
        assert_eq!(frames.len(), 1);
        let (frames, _) = handled(g.on_notification(&note(
            "notifications/resources/updated",
            &updated("listen-2", "b://2"),
        )));
        assert!(frames.is_empty(), "not a subscribed URI");
        assert!(g.retire(&l1));
        assert!(!g.retire(&l1));
        // A stream the gate does not know: kept inside.
        assert_eq!(
            handled(g.on_notification(&note("notifications/tools/list_changed", &sub("x")))),
            (vec![], None)
        );
        assert_eq!(
            handled(g.on_notification(&note(
                ACKNOWLEDGED,
                &json!({"_meta": {META_SUBSCRIPTION_ID: 5}})
            ))),
            (vec![], None)
        );
    }

    #[test]
    fn ends_are_reported_once_and_a_late_time_limit_does_not_end_an_acknowledged_stream() {
        let mut g = ListenGate::new(ALL);
        let l1 = listen_id(1);
        g.register(l1.clone(), 1, set(&[]), Some(Id::Int(1)));
        let limit = Duration::from_secs(10);
        assert_eq!(
            g.end(&l1, StreamEnd::AckTimeout { limit }),
            Some(Fact::Ended {
                id: l1.clone(),
                end: StreamEnd::AckTimeout { limit },
                acked: false
            })
        );
        // Retired by its end: a late acknowledgment answers nobody.
        assert_eq!(
            handled(g.on_notification(&note(ACKNOWLEDGED, &sub("listen-1")))),
            (vec![], None)
        );
        assert_eq!(g.end(&l1, StreamEnd::ServerResult), None);

        let l2 = listen_id(2);
        g.register(l2.clone(), 2, set(&[]), None);
        handled(g.on_notification(&note(ACKNOWLEDGED, &sub("listen-2"))));
        assert_eq!(g.end(&l2, StreamEnd::AckTimeout { limit }), None);
        // The server ends it with notifications/cancelled.
        let (frames, fact) = handled(g.on_notification(&note(
            "notifications/cancelled",
            &json!({"requestId": "listen-2"}),
        )));
        assert!(frames.is_empty());
        assert_eq!(
            fact,
            Some(Fact::Ended {
                id: l2,
                end: StreamEnd::ServerCancelled,
                acked: true
            })
        );
        // Other cancellations and other notifications pass to the caller.
        assert_eq!(
            g.on_notification(&note("notifications/cancelled", &json!({"requestId": 1}))),
            Step::Pass
        );
        assert_eq!(
            g.on_notification(&note(
                "notifications/progress",
                &json!({"progressToken": "bp-1"})
            )),
            Step::Pass
        );
        assert_eq!(
            g.on_notification(&note("notifications/tools/list_changed", &json!({}))),
            Step::Pass
        );
    }

    #[test]
    fn an_http_listen_failure_reopens_by_the_status_rules() {
        let table: &[(Option<u16>, bool, bool, bool)] = &[
            // status, retries, halts, needs a sign-in
            (None, true, false, false),
            (Some(408), true, false, false),
            (Some(429), true, false, false),
            (Some(500), true, false, false),
            (Some(501), false, true, false),
            (Some(502), true, false, false),
            (Some(503), true, false, false),
            (Some(599), true, false, false),
            (Some(400), false, true, false),
            (Some(401), false, true, true),
            (Some(403), false, true, true),
            (Some(404), false, true, false),
            (Some(405), false, true, false),
        ];
        for &(status, retries, halts, sign_in) in table {
            let end = StreamEnd::Failed {
                status,
                detail: "x".into(),
            };
            assert_eq!(
                (
                    end.retries(),
                    end.halts(),
                    http_status_needs_sign_in(status)
                ),
                (retries, halts, sign_in),
                "{status:?}"
            );
        }
        let e = StreamEnd::Failed {
            status: Some(503),
            detail: "HTTP 503".into(),
        }
        .change_error()
        .to_value();
        assert_eq!(
            e["data"],
            json!({"cause": "transport_failed", "detail": "HTTP 503"})
        );
    }
}
