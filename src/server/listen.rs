//! `subscriptions/listen` (2026-07-28 basic/patterns/subscriptions): the filter and the subset the
//! server honours, the acknowledgement, forwarding of published events, and the two ways the
//! server ends a listen. The stream's state lives in its own request task, not in the connection.

use crate::protocol::listen::Declared;
use crate::protocol::revisions::methods;
use crate::protocol::wire::framing::message_text;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{Notify, broadcast};

use super::RpcError;
use super::context::RequestContext;
use super::output::{Outbox, Queued};
use crate::protocol::wire::jsonrpc;

/// The `_meta` key that ties a listen-stream message to its listen request.
pub use crate::protocol::revisions::modern::META_SUBSCRIPTION_ID as SUBSCRIPTION_ID_KEY;

/// Events published to open listen streams with [`Server::notify`](super::Server::notify): a
/// list change goes to listens that asked for that list; `ResourceUpdated` to listens whose
/// `resourceSubscriptions` holds its `uri`, or a URI that `uri` is a sub-resource of (`uri`
/// starts with it followed by `/`). The same type the bridge reads from listen streams.
pub use crate::protocol::listen::ListenEvent;

/// How [`Server::end_listens`](super::Server::end_listens) ends open listens. The 2026-07-28
/// pages basic/patterns/subscriptions and basic/patterns/cancellation disagree, so clients
/// must accept both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListenEnd {
    /// Answer the listen request with `{"resultType":"complete","_meta":{subscriptionId}}`.
    Result,
    /// Send `notifications/cancelled {requestId: <listen id>}` and no response.
    Cancelled,
}

/// The open listen streams of a server (of every connection), as [`Server::notify`] reaches
/// them: an event is queued on each stream's connection while `notify` runs, so it comes
/// before anything the publishing handler writes afterwards (its result): a list change that
/// a call makes reaches the client before that call's result.
///
/// [`Server::notify`]: super::Server::notify
#[derive(Default)]
pub(crate) struct Listens {
    next_key: AtomicU64,
    open: Mutex<Vec<OpenListen>>,
}

/// One acknowledged listen stream.
struct OpenListen {
    key: u64,
    filter: Filter,
    ctx: RequestContext,
    out: Outbox,
    /// Woken when an event found the connection's queue full: the stream then sends one event
    /// of every kind it wants (a catch-up) once there is room.
    lagged: Arc<Notify>,
}

impl Listens {
    /// Queues `event` on every open stream that wants it, without waiting.
    pub(crate) fn publish(&self, event: &ListenEvent) {
        let Ok(open) = self.open.lock() else {
            return;
        };
        for listen in open.iter() {
            if !listen.filter.wants(event) || listen.ctx.is_cancelled() {
                continue;
            }
            let line = message_text(&event_notification(event, listen.ctx.request_id()));
            if listen.out.try_send_raw(line) == Queued::Full {
                listen.lagged.notify_one();
            }
        }
    }

    fn register(&self, filter: &Filter, ctx: &RequestContext, lagged: &Arc<Notify>) -> u64 {
        let key = self.next_key.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut open) = self.open.lock() {
            open.push(OpenListen {
                key,
                filter: filter.clone(),
                ctx: ctx.clone(),
                out: ctx.outbox().clone(),
                lagged: lagged.clone(),
            });
        }
        key
    }

    fn remove(&self, key: u64) {
        if let Ok(mut open) = self.open.lock() {
            open.retain(|listen| listen.key != key);
        }
    }
}

/// Removes a stream from [`Listens`] when its task ends or is dropped (a cancelled listen).
struct Registration<'a> {
    listens: &'a Listens,
    key: u64,
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        self.listens.remove(self.key);
    }
}

/// A `SubscriptionFilter`, held as the protocol layer's [`Declared`] (which kinds) and the
/// subscribed URIs: the bridge's listen filter and this server's are one type, with one rule
/// for which events a stream wants (`Declared::allows`, `notify::covers`) and one for the
/// catch-up after lost events (`Declared::gap_events`).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Filter {
    /// `subscribe` stands for `resourceSubscriptions` being present.
    kinds: Declared,
    uris: BTreeSet<String>,
}

/// Which event kinds this server can deliver, from what was registered.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Supported {
    pub(crate) tools: bool,
    pub(crate) prompts: bool,
    pub(crate) resources: bool,
}

impl Filter {
    /// Parses `params.notifications`. Unknown members (such as the Tasks extension's `taskIds`,
    /// which this server does not offer) are ignored and so left out of the acknowledgement.
    pub(crate) fn parse(value: Option<&Value>) -> Result<Self, RpcError> {
        let Some(Value::Object(filter)) = value else {
            return Err(RpcError::invalid_params(
                "params.notifications must be a SubscriptionFilter object",
            ));
        };
        let flag = |key: &str| match filter.get(key) {
            None => Ok(false),
            Some(Value::Bool(flag)) => Ok(*flag),
            Some(_) => Err(RpcError::invalid_params(format!(
                "notifications.{key} must be a boolean"
            ))),
        };
        let not_strings = || {
            RpcError::invalid_params(
                "notifications.resourceSubscriptions must be an array of strings",
            )
        };
        let uris = match filter.get("resourceSubscriptions") {
            None => None,
            Some(Value::Array(uris)) => Some(
                uris.iter()
                    .map(|uri| uri.as_str().map(str::to_owned))
                    .collect::<Option<BTreeSet<_>>>()
                    .ok_or_else(not_strings)?,
            ),
            Some(_) => return Err(not_strings()),
        };
        Ok(Self {
            kinds: Declared {
                tools: flag("toolsListChanged")?,
                prompts: flag("promptsListChanged")?,
                resources: flag("resourcesListChanged")?,
                subscribe: uris.is_some(),
            },
            uris: uris.unwrap_or_default(),
        })
    }

    /// The subset the server will honour: kinds it advertises, and nothing the client did not ask.
    pub(crate) fn honoured(&self, supported: Supported) -> Self {
        let kinds = Declared {
            tools: self.kinds.tools && supported.tools,
            prompts: self.kinds.prompts && supported.prompts,
            resources: self.kinds.resources && supported.resources,
            subscribe: self.kinds.subscribe && supported.resources,
        };
        let uris = if kinds.subscribe {
            self.uris.clone()
        } else {
            BTreeSet::new()
        };
        Self { kinds, uris }
    }

    /// The filter as JSON, with only the members that are on (the URIs in sorted order).
    pub(crate) fn to_json(&self) -> Value {
        self.kinds.filter(&self.uris)
    }

    /// Whether a listen with this (honoured) filter delivers `event`.
    pub(crate) fn wants(&self, event: &ListenEvent) -> bool {
        self.kinds.allows(event, &self.uris)
    }

    /// What to deliver after events were lost to a slow stream: one of every kind it wants.
    fn catch_up_events(&self) -> Vec<ListenEvent> {
        self.kinds.gap_events(&self.uris)
    }
}

fn subscription_meta(subscription_id: &Value) -> Value {
    json!({ SUBSCRIPTION_ID_KEY: subscription_id })
}

/// The notification that delivers `event` on the listen `subscription_id`.
pub(crate) fn event_notification(event: &ListenEvent, subscription_id: &Value) -> Value {
    let meta = subscription_meta(subscription_id);
    match event {
        ListenEvent::ToolsListChanged => {
            jsonrpc::notification(methods::TOOLS_LIST_CHANGED, json!({ "_meta": meta }))
        }
        ListenEvent::PromptsListChanged => {
            jsonrpc::notification(methods::PROMPTS_LIST_CHANGED, json!({ "_meta": meta }))
        }
        ListenEvent::ResourcesListChanged => {
            jsonrpc::notification(methods::RESOURCES_LIST_CHANGED, json!({ "_meta": meta }))
        }
        ListenEvent::ResourceUpdated { uri } => jsonrpc::notification(
            methods::RESOURCES_UPDATED,
            json!({ "uri": uri, "_meta": meta }),
        ),
    }
}

/// Runs one listen until it ends. Returns the final result object (without `_meta.serverInfo`,
/// which the dispatcher adds) if the listen ends with a response, `None` if it ends without one.
pub(crate) async fn run(
    ctx: &RequestContext,
    honoured: Filter,
    listens: &Listens,
    mut ends: broadcast::Receiver<ListenEnd>,
) -> Option<Map<String, Value>> {
    let id = ctx.request_id().clone();
    // The acknowledgement is the first message carrying this subscription id; the stream
    // receives events from the moment it is queued.
    let ack = jsonrpc::notification(
        methods::SUBSCRIPTIONS_ACKNOWLEDGED,
        json!({ "_meta": subscription_meta(&id), "notifications": honoured.to_json() }),
    );
    if !ctx.send(&ack).await {
        return None;
    }
    let lagged = Arc::new(Notify::new());
    let _registration = Registration {
        listens,
        key: listens.register(&honoured, ctx, &lagged),
    };
    let end_with_result = || {
        let mut body = Map::new();
        body.insert("_meta".into(), subscription_meta(&id));
        Some(body)
    };
    loop {
        let received = tokio::select! {
            received = ends.recv() => received,
            () = lagged.notified() => {
                for event in honoured.catch_up_events() {
                    if !ctx.send(&event_notification(&event, &id)).await {
                        return None;
                    }
                }
                continue;
            }
            () = ctx.connection_closing() => return end_with_result(),
        };
        match received {
            Ok(ListenEnd::Result) | Err(broadcast::error::RecvError::Closed) => {
                return end_with_result();
            }
            Ok(ListenEnd::Cancelled) => {
                let cancelled =
                    jsonrpc::notification(methods::CANCELLED, json!({ "requestId": id }));
                ctx.send(&cancelled).await;
                return None;
            }
            Err(broadcast::error::RecvError::Lagged(_)) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: Supported = Supported {
        tools: true,
        prompts: true,
        resources: true,
    };

    #[test]
    fn the_acknowledged_subset_leaves_out_unsupported_and_unrequested_kinds() {
        let asked = json!({"toolsListChanged": true, "promptsListChanged": false,
                           "resourceSubscriptions": ["a://x"], "taskIds": ["t"]});
        let filter = Filter::parse(Some(&asked)).unwrap_or_default();
        let honoured = filter.honoured(Supported {
            tools: true,
            prompts: true,
            resources: false,
        });
        assert_eq!(honoured.to_json(), json!({"toolsListChanged": true}));
    }

    #[test]
    fn a_filter_with_a_non_boolean_flag_is_invalid_params() {
        let error = Filter::parse(Some(&json!({"toolsListChanged": "yes"})));
        assert_eq!(error.map_err(|e| e.code.0), Err(-32602));
        assert_eq!(Filter::parse(None).map_err(|e| e.code.0), Err(-32602));
    }

    #[test]
    fn resource_updates_reach_subscribers_of_the_uri_and_of_its_parents_only() {
        let filter = Filter::parse(Some(&json!({"resourceSubscriptions": ["file:///a"]})))
            .unwrap_or_default()
            .honoured(ALL);
        let updated = |uri: &str| ListenEvent::ResourceUpdated { uri: uri.into() };
        assert!(filter.wants(&updated("file:///a")));
        assert!(filter.wants(&updated("file:///a/b.txt")));
        assert!(!filter.wants(&updated("file:///ab")));
        assert!(!filter.wants(&ListenEvent::ToolsListChanged));
    }

    #[test]
    fn every_event_notification_carries_the_subscription_id() {
        for event in [
            ListenEvent::ToolsListChanged,
            ListenEvent::PromptsListChanged,
            ListenEvent::ResourcesListChanged,
            ListenEvent::ResourceUpdated {
                uri: "a://b".into(),
            },
        ] {
            let notification = event_notification(&event, &json!("L1"));
            assert_eq!(notification["params"]["_meta"][SUBSCRIPTION_ID_KEY], "L1");
        }
    }
}
