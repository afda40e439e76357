//! One 2026-07-28 upstream shared by many connections (the sessions of `mcp-bridge
//! --serve-http --upstream-lifetime shared`, each a bridge of its own): each connection's
//! requests go up under ids of the upstream connection's own, their progress tokens too, and
//! every message of the upstream goes back to the connection it belongs to, with that
//! connection's own ids. Pure: the caller owns the transport and the connections' channels.
//!
//! 2026-07-28 has no request of the server's (input requests travel inside results), so what
//! comes down belongs to a request of one connection:
//! - a response: the request of its id;
//! - `notifications/progress`: the request whose token it names (2026-07-28
//!   basic/utilities/progress: a token is unique among the requests in flight, which the
//!   upstream tokens are across connections);
//! - a notification with `_meta["io.modelcontextprotocol/subscriptionId"]` (the acknowledgement
//!   and the events of a listen stream): the `subscriptions/listen` request of that id
//!   (2026-07-28 basic/subscriptions);
//! - `notifications/cancelled` (the end of a listen stream on stdio): the request it names;
//! - `notifications/message`: on stdio no field ties a log message to its request (2026-07-28
//!   server/utilities/logging), so it goes to the one connection with requests in flight that
//!   opted in with `_meta["io.modelcontextprotocol/logLevel"]`, and nowhere when several
//!   have: a log line may hold one client's data, which another client must not see;
//! - any other notification (a list change without its subscription id): every connection
//!   with a listen stream open.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::protocol::revisions::methods;
use crate::protocol::revisions::modern::{META_LOG_LEVEL, META_SUBSCRIPTION_ID};
use crate::protocol::wire::id::Id;

/// A connection of the shared upstream (one session's bridge).
pub type ConnectionId = u64;

/// What the upstream gets of a connection's message.
#[derive(Clone, Debug, PartialEq)]
pub enum Up {
    /// This message, with the upstream's ids: a request under the upstream id `id`.
    Request {
        /// The upstream id.
        id: u64,
        /// The message.
        message: Value,
    },
    /// This notification (a cancellation with the upstream's id).
    Notification(Value),
    /// Nothing: why, for a debug line.
    Nothing(&'static str),
}

/// A request of a connection in flight upstream.
#[derive(Clone, Debug)]
struct InFlight {
    connection: ConnectionId,
    /// The connection's own id, as it wrote it.
    id: Value,
    /// The connection's own progress token, when it asked for progress.
    token: Option<Value>,
    /// A `subscriptions/listen`: its notifications carry its id as their subscription id.
    listen: bool,
    /// It opted in to log messages (`_meta["io.modelcontextprotocol/logLevel"]`).
    logs: bool,
}

/// The routes of one shared upstream connection (see the module doc).
#[derive(Debug, Default)]
pub struct Routes {
    /// The next upstream id (and progress token): upstream ids are integers from 1.
    next: u64,
    /// The requests in flight, by upstream id.
    requests: HashMap<u64, InFlight>,
    /// The upstream id of each connection's request in flight, for its cancellation.
    origins: HashMap<(ConnectionId, Id), u64>,
}

impl Routes {
    /// The upstream's form of `message` from `from`: a request under a new upstream id (and
    /// its progress token under the same number), a cancellation naming the upstream id.
    pub fn up(&mut self, from: ConnectionId, mut message: Value) -> Up {
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            return Up::Nothing("a response of a client: a 2026-07-28 server sends no request");
        };
        let is_listen = method == methods::SUBSCRIPTIONS_LISTEN;
        let is_cancel = method == methods::CANCELLED;
        let Some(own) = message.get("id").cloned() else {
            if !is_cancel {
                return Up::Nothing("a notification of a client other than a cancellation");
            }
            return match self.cancellation(from, &mut message) {
                true => Up::Notification(message),
                false => Up::Nothing("a cancellation of no request in flight"),
            };
        };
        let Some(key) = Id::from_value(&own) else {
            return Up::Nothing("a request whose id is no id");
        };
        self.next += 1;
        let id = self.next;
        let meta = message
            .get_mut("params")
            .and_then(Value::as_object_mut)
            .and_then(|p| p.get_mut("_meta"))
            .and_then(Value::as_object_mut);
        let (token, logs) = match meta {
            Some(meta) => {
                let token = meta
                    .get_mut("progressToken")
                    .map(|t| std::mem::replace(t, Value::from(id)));
                (token, meta.contains_key(META_LOG_LEVEL))
            }
            None => (None, false),
        };
        message["id"] = Value::from(id);
        self.origins.insert((from, key), id);
        self.requests.insert(
            id,
            InFlight {
                connection: from,
                id: own,
                token,
                listen: is_listen,
                logs,
            },
        );
        Up::Request { id, message }
    }

    /// Rewrites the `requestId` of a connection's `notifications/cancelled` to the upstream
    /// id; false when it names no request of the connection in flight.
    fn cancellation(&self, from: ConnectionId, message: &mut Value) -> bool {
        let Some(target) = message.pointer_mut("/params/requestId") else {
            return false;
        };
        let Some(key) = Id::from_value(target) else {
            return false;
        };
        match self.origins.get(&(from, key)) {
            Some(id) => {
                *target = Value::from(*id);
                true
            }
            None => false,
        }
    }

    /// Where the upstream's `message` goes, in the connection's own ids: none, one, or (a
    /// log message, a list change without its subscription id) several connections.
    pub fn down(&mut self, mut message: Value) -> Vec<(ConnectionId, Value)> {
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let Some(method) = method else {
            return self.response(message).into_iter().collect();
        };
        if message.get("id").is_some() {
            // 2026-07-28 servers send no requests: nobody could answer it.
            return Vec::new();
        }
        if method == methods::PROGRESS {
            let Some(token) = message.pointer_mut("/params/progressToken") else {
                return Vec::new();
            };
            let Some(request) = token.as_u64().and_then(|n| self.requests.get(&n)) else {
                return Vec::new();
            };
            let Some(own) = &request.token else {
                return Vec::new();
            };
            *token = own.clone();
            return vec![(request.connection, message)];
        }
        if method == methods::CANCELLED {
            // The end of a listen stream on stdio: its route ends with it.
            let Some(target) = message.pointer_mut("/params/requestId") else {
                return Vec::new();
            };
            let Some(request) = target.as_u64().and_then(|n| self.finish(n)) else {
                return Vec::new();
            };
            *target = request.id;
            return vec![(request.connection, message)];
        }
        let subscription = message
            .pointer_mut("/params/_meta")
            .and_then(Value::as_object_mut)
            .and_then(|meta| meta.get_mut(META_SUBSCRIPTION_ID));
        if let Some(subscription) = subscription {
            let Some(listen) = subscription.as_u64().and_then(|n| self.requests.get(&n)) else {
                return Vec::new();
            };
            *subscription = listen.id.clone();
            return vec![(listen.connection, message)];
        }
        let log = method == methods::MESSAGE;
        let mut to: Vec<ConnectionId> = self
            .requests
            .values()
            .filter(|r| if log { r.logs } else { r.listen })
            .map(|r| r.connection)
            .collect();
        to.sort_unstable();
        to.dedup();
        if log && to.len() > 1 {
            // Whose it is cannot be told: none of them gets it.
            return Vec::new();
        }
        to.into_iter().map(|c| (c, message.clone())).collect()
    }

    /// A response of the upstream back to its request's connection, with the connection's
    /// id (and, a listen's final result, its subscription id); `None` for a response to no
    /// request in flight.
    fn response(&mut self, mut message: Value) -> Option<(ConnectionId, Value)> {
        let id = message.get("id").and_then(Value::as_u64)?;
        let request = self.finish(id)?;
        if request.listen
            && let Some(subscription) = message
                .pointer_mut("/result/_meta")
                .and_then(Value::as_object_mut)
                .and_then(|meta| meta.get_mut(META_SUBSCRIPTION_ID))
        {
            *subscription = request.id.clone();
        }
        message["id"] = request.id.clone();
        Some((request.connection, message))
    }

    /// Ends the route of the upstream request `id`.
    fn finish(&mut self, id: u64) -> Option<InFlight> {
        let request = self.requests.remove(&id)?;
        if let Some(key) = Id::from_value(&request.id) {
            self.origins.remove(&(request.connection, key));
        }
        Some(request)
    }

    /// The connection `connection` went away: its routes end, and each of its requests
    /// still in flight gets a `notifications/cancelled` toward the upstream (these).
    pub fn forget(&mut self, connection: ConnectionId) -> Vec<Value> {
        let mut ids: Vec<u64> = self
            .requests
            .iter()
            .filter(|(_, r)| r.connection == connection)
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable();
        ids.into_iter()
            .filter_map(|id| self.finish(id).map(|_| cancelled(id)))
            .collect()
    }

    /// The connection and own id of the upstream request `id`, ending its route (a request
    /// that the transport failed alone).
    pub fn take(&mut self, id: u64) -> Option<(ConnectionId, Value)> {
        self.finish(id).map(|r| (r.connection, r.id))
    }

    /// Requests in flight, of every connection.
    #[cfg(test)]
    fn in_flight(&self) -> usize {
        self.requests.len()
    }
}

/// `notifications/cancelled` of the upstream request `id`.
fn cancelled(id: u64) -> Value {
    let mut params = Map::new();
    params.insert("requestId".into(), Value::from(id));
    params.insert(
        "reason".into(),
        Value::from("the client of this request went away"),
    );
    serde_json::json!({"jsonrpc": "2.0", "method": methods::CANCELLED, "params": params})
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(id: Value, method: &str, meta: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"name": "t", "_meta": meta}})
    }

    fn sent(up: Up) -> (u64, Value) {
        match up {
            Up::Request { id, message } => (id, message),
            other => panic!("not a request: {other:?}"),
        }
    }

    #[test]
    fn the_same_id_and_token_of_two_connections_go_up_apart_and_come_back_to_each() {
        let mut routes = Routes::default();
        let meta =
            json!({"progressToken": "p", "io.modelcontextprotocol/protocolVersion": "2026-07-28"});
        let (a, up_a) = sent(routes.up(1, request(json!(7), "tools/call", meta.clone())));
        let (b, up_b) = sent(routes.up(2, request(json!(7), "tools/call", meta)));
        assert_eq!((a, b), (1, 2));
        assert_eq!(up_a["id"], 1);
        assert_eq!(up_a["params"]["_meta"]["progressToken"], 1);
        assert_eq!(up_b["params"]["_meta"]["progressToken"], 2);
        // The rest of the message is as the connection wrote it.
        assert_eq!(
            up_b["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                              "params": {"progressToken": 2, "progress": 1}});
        assert_eq!(
            routes.down(progress),
            vec![(
                2,
                json!({"jsonrpc": "2.0", "method": "notifications/progress",
                            "params": {"progressToken": "p", "progress": 1}})
            )]
        );
        let result = json!({"jsonrpc": "2.0", "id": 2, "result": {"content": []}});
        assert_eq!(
            routes.down(result.clone()),
            vec![(
                2,
                json!({"jsonrpc": "2.0", "id": 7, "result": {"content": []}})
            )]
        );
        // Answered: a second response of the same id goes nowhere.
        assert_eq!(routes.down(result), Vec::new());
        assert_eq!(routes.in_flight(), 1);
    }

    #[test]
    fn a_cancellation_names_the_upstream_id_of_its_own_connection_only() {
        let mut routes = Routes::default();
        sent(routes.up(1, request(json!("x"), "tools/call", json!({}))));
        let cancel = |id: Value| {
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": id, "reason": "r"}})
        };
        assert_eq!(
            routes.up(1, cancel(json!("x"))),
            Up::Notification(
                json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                    "params": {"requestId": 1, "reason": "r"}})
            )
        );
        assert!(matches!(routes.up(2, cancel(json!("x"))), Up::Nothing(_)));
        assert!(matches!(routes.up(1, cancel(json!("y"))), Up::Nothing(_)));
    }

    #[test]
    fn the_notifications_of_a_listen_go_to_its_connection_with_its_own_subscription_id() {
        let mut routes = Routes::default();
        sent(routes.up(1, request(json!(5), "tools/call", json!({}))));
        let (listen, _) =
            sent(routes.up(3, request(json!("L"), "subscriptions/listen", json!({}))));
        let ack = json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
            "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": listen}, "notifications": {}}});
        assert_eq!(
            routes.down(ack),
            vec![(
                3,
                json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "L"}, "notifications": {}}})
            )]
        );
        // A list change without a subscription id: every connection with a listen open.
        let bare = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
        assert_eq!(routes.down(bare.clone()), vec![(3, bare)]);
        let end = json!({"jsonrpc": "2.0", "id": listen, "result": {"resultType": "complete",
            "_meta": {"io.modelcontextprotocol/subscriptionId": listen}}});
        assert_eq!(
            routes.down(end),
            vec![(
                3,
                json!({"jsonrpc": "2.0", "id": "L", "result": {"resultType": "complete",
                "_meta": {"io.modelcontextprotocol/subscriptionId": "L"}}})
            )]
        );
    }

    #[test]
    fn a_listen_ended_by_the_upstreams_cancellation_goes_back_with_the_own_id() {
        let mut routes = Routes::default();
        let (listen, _) = sent(routes.up(4, request(json!(9), "subscriptions/listen", json!({}))));
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                            "params": {"requestId": listen}});
        assert_eq!(
            routes.down(cancel),
            vec![(
                4,
                json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                            "params": {"requestId": 9}})
            )]
        );
        assert_eq!(routes.in_flight(), 0);
    }

    #[test]
    fn a_log_message_goes_only_to_the_one_connection_that_asked_for_logs() {
        let mut routes = Routes::default();
        let log = json!({"jsonrpc": "2.0", "method": "notifications/message",
                         "params": {"level": "info", "data": "d"}});
        let asks = |level: &str| json!({"io.modelcontextprotocol/logLevel": level});
        sent(routes.up(2, request(json!(1), "tools/call", json!({}))));
        let (first, _) = sent(routes.up(3, request(json!(1), "tools/call", asks("debug"))));
        sent(routes.up(3, request(json!(2), "tools/call", asks("debug"))));
        assert_eq!(routes.down(log.clone()), vec![(3, log.clone())]);
        // A second connection that asks: whose a line is cannot be told, and nobody gets it.
        let (other, _) = sent(routes.up(1, request(json!(1), "tools/call", asks("info"))));
        assert_eq!(routes.down(log.clone()), Vec::new());
        routes.down(json!({"jsonrpc": "2.0", "id": other, "result": {}}));
        assert_eq!(routes.down(log.clone()), vec![(3, log.clone())]);
        routes.down(json!({"jsonrpc": "2.0", "id": first, "result": {}}));
        assert_eq!(routes.down(log.clone()), vec![(3, log)]);
    }

    #[test]
    fn a_connection_that_goes_away_has_its_requests_cancelled_upstream() {
        let mut routes = Routes::default();
        sent(routes.up(1, request(json!(1), "tools/call", json!({}))));
        sent(routes.up(2, request(json!(1), "tools/call", json!({}))));
        sent(routes.up(1, request(json!(2), "subscriptions/listen", json!({}))));
        assert_eq!(
            routes.forget(1),
            vec![
                json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                       "params": {"requestId": 1, "reason": "the client of this request went away"}}),
                json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                       "params": {"requestId": 3, "reason": "the client of this request went away"}}),
            ]
        );
        // Their answers go nowhere; the other connection's still come back.
        assert_eq!(
            routes.down(json!({"jsonrpc": "2.0", "id": 1, "result": {}})),
            Vec::new()
        );
        assert_eq!(
            routes.down(json!({"jsonrpc": "2.0", "id": 2, "result": {}})),
            vec![(2, json!({"jsonrpc": "2.0", "id": 1, "result": {}}))]
        );
    }

    #[test]
    fn what_a_2026_peer_never_sends_goes_nowhere() {
        let mut routes = Routes::default();
        assert!(matches!(
            routes.up(1, json!({"jsonrpc": "2.0", "id": 1, "result": {}})),
            Up::Nothing(_)
        ));
        assert!(matches!(
            routes.up(
                1,
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
            ),
            Up::Nothing(_)
        ));
        assert!(matches!(
            routes.up(
                1,
                json!({"jsonrpc": "2.0", "id": null, "method": "tools/list"})
            ),
            Up::Nothing(_)
        ));
        let server_request = json!({"jsonrpc": "2.0", "id": 1, "method": "roots/list"});
        assert_eq!(routes.down(server_request), Vec::new());
        assert_eq!(
            routes.down(json!({"jsonrpc": "2.0", "method": "notifications/progress",
                               "params": {"progressToken": 99, "progress": 1}})),
            Vec::new()
        );
    }
}
