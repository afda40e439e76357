//! What the editor may be told over the listen stream: the declared notifications, the
//! filter asked for, the resources subscribed, and what the acknowledgment left out.

use super::event::ListenEvent;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

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
