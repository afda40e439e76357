//! The sessions of one HTTP server: the table of their ids, its bound (an idle session ends
//! to make room), the end of the sessions idle past their time limit, and the ids of new
//! sessions.

use super::{Session, Sessions, lock};
use crate::server::http::HttpOptions;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The longest pause between two checks of idle sessions; a shorter idle time limit is
/// checked four times per limit.
const IDLE_CHECK_MAX_INTERVAL: Duration = Duration::from_secs(1);
const IDLE_CHECK_MIN_INTERVAL: Duration = Duration::from_millis(10);
/// Random bits of a session id (2025-11-25: a session id should be globally unique and
/// cryptographically secure).
const SESSION_ID_BYTES: usize = 16;

/// The sessions of one HTTP server.
pub(in crate::server::http) struct SessionTable {
    pub(super) factory: Sessions,
    pub(super) max: usize,
    idle_limit: Duration,
    claim_limit: Duration,
    inner: Mutex<TableInner>,
}

struct TableInner {
    sessions: HashMap<String, Arc<Session>>,
    /// Sessions whose `initialize` is starting them: they count toward the bound.
    starting: usize,
}

impl SessionTable {
    pub(in crate::server::http) fn new(
        factory: Sessions,
        options: &HttpOptions,
    ) -> Arc<SessionTable> {
        Arc::new(SessionTable {
            factory,
            max: options.max_sessions,
            idle_limit: options.session_idle_time_limit,
            claim_limit: options.session_claim_time_limit,
            inner: Mutex::new(TableInner {
                sessions: HashMap::new(),
                starting: 0,
            }),
        })
    }

    pub(super) fn get(&self, id: &str) -> Option<Arc<Session>> {
        lock(&self.inner).sessions.get(id).cloned()
    }

    /// Counts a session that starts; at the bound, an idle session ends to make room (a burst
    /// of `initialize` POSTs, which any local client can send in seconds, must not lock every
    /// other client out until the sessions expire): one that no message claimed after its
    /// `initialize` first (such a burst then ends its own sessions, not those of clients that
    /// use theirs), then the one idle longest. A busy session never ends so; false when every
    /// one is busy.
    pub(super) fn reserve(&self) -> bool {
        let evicted = {
            let mut inner = lock(&self.inner);
            let mut evicted = None;
            if inner.sessions.len() + inner.starting >= self.max {
                let idlest = inner
                    .sessions
                    .values()
                    .filter_map(|session| {
                        let (claimed, since) = session.idle_since()?;
                        Some((claimed, since, session.id.clone()))
                    })
                    .min();
                let Some((_, _, id)) = idlest else {
                    return false;
                };
                evicted = inner.sessions.remove(&id);
            }
            inner.starting += 1;
            evicted
        };
        if let Some(session) = evicted {
            tracing::debug!(session = %session.label(), "an HTTP session ended: the table was full and it was idle longest");
            session.end();
        }
        true
    }

    pub(super) fn release(&self) {
        let mut inner = lock(&self.inner);
        inner.starting = inner.starting.saturating_sub(1);
    }

    pub(super) fn insert(&self, session: Arc<Session>) {
        let mut inner = lock(&self.inner);
        inner.starting = inner.starting.saturating_sub(1);
        inner.sessions.insert(session.id.clone(), session);
    }

    /// Ends the session `id` (the pipe's input closes); false when there is none.
    pub(super) fn end(&self, id: &str) -> bool {
        let removed = lock(&self.inner).sessions.remove(id);
        removed.map(|session| session.end()).is_some()
    }

    /// Ends every session (the server stops).
    pub(in crate::server::http) fn end_all(&self) {
        let all: Vec<_> = lock(&self.inner).sessions.drain().collect();
        for (_, session) in all {
            session.end();
        }
    }

    /// Ends the sessions that had no request and no open stream for the idle time limit,
    /// until `stop`.
    pub(in crate::server::http) async fn end_idle(self: Arc<Self>, stop: CancellationToken) {
        let every = (self.idle_limit.min(self.claim_limit) / 4)
            .clamp(IDLE_CHECK_MIN_INTERVAL, IDLE_CHECK_MAX_INTERVAL);
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = ticks.tick() => {}
            }
            let idle: Vec<Arc<Session>> = {
                let mut inner = lock(&self.inner);
                let ids: Vec<String> = inner
                    .sessions
                    .values()
                    .filter(|session| session.idle_for(self.idle_limit, self.claim_limit))
                    .map(|session| session.id.clone())
                    .collect();
                ids.iter()
                    .filter_map(|id| inner.sessions.remove(id))
                    .collect()
            };
            for session in idle {
                tracing::debug!(session = %session.label(), "an HTTP session ended: idle past its time limit");
                session.end();
            }
        }
    }
}

impl Session {
    /// No stream open and nothing since `limit` ago, or since `claim_limit` ago for a
    /// session that no message after its `initialize` claimed.
    fn idle_for(&self, limit: Duration, claim_limit: Duration) -> bool {
        let routes = self.routes();
        let limit = if routes.claimed {
            limit
        } else {
            limit.min(claim_limit)
        };
        routes.open == 0 && routes.last_active.elapsed() >= limit
    }

    /// Whether a message claimed the session after its `initialize`, and when it became
    /// idle; `None` while it is busy: a stream is open (a POST waiting for its response, or
    /// the GET stream) or a request whose POST stream closed still runs.
    fn idle_since(&self) -> Option<(bool, Instant)> {
        let routes = self.routes();
        (routes.open == 0 && routes.orphans.is_empty())
            .then_some((routes.claimed, routes.last_active))
    }
}

pub(super) fn session_id() -> Option<String> {
    let mut bytes = [0u8; SESSION_ID_BYTES];
    getrandom::fill(&mut bytes).ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::session_id;

    #[test]
    fn a_session_id_is_32_hex_digits_and_new_each_time() {
        let (Some(a), Some(b)) = (session_id(), session_id()) else {
            panic!("random bytes");
        };
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
